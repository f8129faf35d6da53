//! Several processes on one memory: the HTTP server, a CLI writer and the
//! console at once. Writes are serialised, none is lost or refused, and the
//! console sees what the others wrote.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn server_cli_and_console_share_one_memory() {
    let dir = std::env::temp_dir().join(format!("somnus-multi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let bin = env!("CARGO_BIN_EXE_somnus");
    let ok = Command::new(bin)
        .args([
            "--db",
            &db.to_string_lossy(),
            "kip",
            r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"#,
        ])
        .output()
        .expect("schema");
    assert!(ok.status.success());

    let mut server = Command::new(bin)
        .args([
            "--db",
            &db.to_string_lossy(),
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--maintenance",
            "off",
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("serve");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines.next().expect("server output").expect("line");
        if let Some(i) = line.find("http://") {
            let rest = &line[i + 7..];
            break rest.split_whitespace().next().unwrap_or("").to_string();
        }
    };

    // HTTP writer and CLI writer at the same time
    let url = format!("http://{addr}/kip");
    let http = std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        for i in 0..60 {
            let body = json!({ "method": "execute_kip", "params": {
                "command": "UPSERT { CONCEPT ?n { {type: \"Note\", name: :n} } }", "parameters": { "n": format!("http-{i}") } } });
            let mut r = agent
                .post(&url)
                .header("content-type", "application/json")
                .send(body.to_string())
                .expect("post");
            let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default())
                .unwrap_or(Value::Null);
            assert!(v.get("result").is_some(), "http write {i}: {v}");
        }
    });
    for i in 0..30 {
        let out = Command::new(bin)
            .args([
                "--db",
                &db.to_string_lossy(),
                "kip",
                "--params",
                &json!({ "n": format!("cli-{i}") }).to_string(),
                "UPSERT { CONCEPT ?n { {type: \"Note\", name: :n} } }",
            ])
            .output()
            .expect("cli");
        assert!(
            out.status.success(),
            "cli write {i}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    http.join().expect("http writer");

    // the console, opened on the same file, sees both writers' notes
    let nx = somnus::Nexus::open(&db).expect("open");
    let mut app = somnus::tui::app::App::new(
        nx,
        "multi",
        somnus::tui::app::Runner::Inline(Default::default()),
    );
    app.drain();
    app.workbench
        .set_text(r#"FIND(COUNT(?n)) WHERE { ?n {type: "Note"} }"#);
    app.on_key(ratatui::crossterm::event::KeyEvent::new(
        ratatui::crossterm::event::KeyCode::F(5),
        ratatui::crossterm::event::KeyModifiers::NONE,
    ));
    app.drain();
    let mut t =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).expect("terminal");
    t.draw(|f| app.render(f)).expect("draw");
    let screen: String = t
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(screen.contains("✓ FIND · 1 rows"), "{screen}");
    assert!(
        screen.contains("│90 "),
        "the console counts all 90 notes: {screen}"
    );

    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_console_refreshes_when_another_process_writes() {
    let dir = std::env::temp_dir().join(format!("somnus-live-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let nx = somnus::Nexus::open(&db).expect("open");
    let mut app = somnus::tui::app::App::new(
        nx,
        "live",
        somnus::tui::app::Runner::Inline(Default::default()),
    );
    app.drain();
    let notes = |app: &somnus::tui::app::App| {
        app.schema.overview.as_ref().and_then(|o| {
            o.concept_types
                .iter()
                .find(|t| t.name == "Note")
                .map(|t| t.count)
        })
    };
    assert_eq!(notes(&app), None);
    // the operator has looked at the health table and the audit trail
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    app.press(KeyCode::Char('7'), KeyModifiers::ALT);
    app.press(KeyCode::Char('8'), KeyModifiers::ALT);
    let trail = app.audit.entries.len();
    let orphan = |app: &somnus::tui::app::App| {
        app.health
            .health
            .as_ref()
            .and_then(|h| h.get("orphans"))
            .is_some_and(|m| m.items.iter().any(|i| i == "Note: from-agent"))
    };
    assert!(!orphan(&app));
    for _ in 0..10 {
        app.tick();
    }
    app.drain();
    // an agent writes through another connection (another process in real life)
    let mut other = somnus::Nexus::open(&db).expect("open");
    other.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } CONCEPT ?n { {type: "Note", name: "from-agent"} } }"#);
    for _ in 0..10 {
        app.tick();
    }
    app.drain();
    assert_eq!(notes(&app), Some(1), "the schema pane reloaded");
    assert_eq!(
        app.audit.entries.len(),
        trail + 1,
        "the audit pane reloaded"
    );
    assert!(orphan(&app), "the health pane measured again");
    assert!(
        app.status
            .as_ref()
            .is_some_and(|(s, _)| s.contains("changed elsewhere (UPSERT by ")),
        "says what changed: {:?}",
        app.status
    );
    // a sub-agent's write staged elsewhere is named by its proposal
    let req = {
        let mut r = somnus::protocol::Request::command(
            r#"UPSERT { CONCEPT ?n { {type: "Note", name: "from-scout"} } }"#,
        );
        r.args.reason = Some("seen in a meeting".into());
        r
    };
    let scout = somnus::store::keys::Identity {
        name: "scout".into(),
        role: somnus::store::keys::Role::Subagent,
    };
    somnus::server::gate::stage(&mut other, &req, &scout);
    for _ in 0..10 {
        app.tick();
    }
    app.drain();
    assert!(
        app.status
            .as_ref()
            .is_some_and(|(s, _)| s.contains("changed elsewhere (proposal #1 from scout)")),
        "{:?}",
        app.status
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Another process logging an agent's reads changes no memory: a console
/// watching the file shows the request in its live traffic and does not
/// take it for a change (it reloads nothing and says nothing); a write
/// after it is seen as before.
#[test]
fn the_console_takes_an_agents_reads_for_traffic_not_for_a_change() {
    let dir = std::env::temp_dir().join(format!("somnus-reads-live-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let nx = somnus::Nexus::open(&db).expect("open");
    let mut app = somnus::tui::app::App::new(
        nx,
        "live",
        somnus::tui::app::Runner::Inline(Default::default()),
    );
    app.drain();
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    app.press(KeyCode::Char('9'), KeyModifiers::ALT);
    let ticks = |app: &mut somnus::tui::app::App| {
        for _ in 0..10 {
            app.tick();
            app.drain();
        }
    };
    ticks(&mut app);
    let said = app.messages.len();
    // a server in another process answers an agent and logs the request
    let mut other = somnus::Nexus::open(&db).expect("open");
    let mut req =
        somnus::protocol::Request::command(r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} }"#);
    req.actor.id = "scout".into();
    let (_, served) = other.execute_served(&req);
    other
        .record_reads(&somnus::audit::reads::Logged::all(
            served,
            "scout",
            "http",
            &somnus::store::now(),
        ))
        .expect("logged");
    ticks(&mut app);
    assert_eq!(
        app.traffic.requests.len(),
        1,
        "the request is in the live traffic"
    );
    assert!(
        app.messages
            .iter()
            .skip(said)
            .all(|m| !m.2.contains("changed elsewhere")),
        "a read is no change: {:?}",
        app.messages
    );
    // a write elsewhere still is
    other.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"#);
    ticks(&mut app);
    assert!(
        app.messages
            .iter()
            .skip(said)
            .any(|m| m.2.contains("changed elsewhere")),
        "{:?}",
        app.messages
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Agents write and read over HTTP while full sleep cycles run, one after
/// another, in another process on the same file: every request gets its
/// answer, every acknowledged write is there afterwards, every cycle
/// completes.
#[test]
fn agents_over_http_while_sleep_cycles_run() {
    let dir = std::env::temp_dir().join(format!("somnus-multi-sleep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let bin = env!("CARGO_BIN_EXE_somnus");
    let ok = Command::new(bin)
        .args(["--db", &db.to_string_lossy(), "demo", "--no-console"])
        .output()
        .expect("demo");
    assert!(ok.status.success());
    let ok = Command::new(bin)
        .args([
            "--db",
            &db.to_string_lossy(),
            "kip",
            r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"#,
        ])
        .output()
        .expect("schema");
    assert!(ok.status.success());

    let mut server = Command::new(bin)
        .args([
            "--db",
            &db.to_string_lossy(),
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--maintenance",
            "off",
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("serve");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines.next().expect("server output").expect("line");
        if let Some(i) = line.find("http://") {
            break line[i + 7..]
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
        }
    };

    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cycles = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sleeper = {
        let (db, done, cycles) = (db.clone(), done.clone(), cycles.clone());
        std::thread::spawn(move || {
            let mut statuses = Vec::new();
            let mut hour = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) || statuses.is_empty() {
                let out = Command::new(bin)
                    .args([
                        "--db",
                        &db.to_string_lossy(),
                        "sleep",
                        "--quiet",
                        "--json",
                        "--now",
                        &format!("2026-11-20T{:02}:00:00Z", hour % 24),
                    ])
                    .output()
                    .expect("sleep");
                let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
                statuses.push(v["status"].as_str().unwrap_or("no report").to_string());
                cycles.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                hour += 1;
            }
            statuses
        })
    };

    let url = format!("http://{addr}/kip");
    let clients: Vec<_> = (0..4)
        .map(|c| {
            let (url, cycles) = (url.clone(), cycles.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(60)))
                    .build()
                    .into();
                let mut acked = Vec::new();
                // at least 150 requests, and for as long as it takes two
                // cycles to run
                let mut i = 0;
                while i < 150 || cycles.load(std::sync::atomic::Ordering::SeqCst) < 2 {
                    let body = if i % 5 == 0 {
                        json!({ "method": "execute_kip", "params": {
                            "command": "UPSERT { CONCEPT ?n { {type: \"Note\", name: :n} } }", "parameters": { "n": format!("note-{c}-{i}") } } })
                    } else {
                        json!({ "method": "execute_kip_readonly", "params": { "command": "FIND(?p, ?o.name) WHERE { ?l ({type: \"Person\", name: \"Mira Chen\"}, ?p, ?o) } LIMIT 50" } })
                    };
                    let mut r = agent
                        .post(&url)
                        .header("content-type", "application/json")
                        .send(body.to_string())
                        .expect("post");
                    let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default())
                        .unwrap_or(Value::Null);
                    assert!(v.get("result").is_some(), "client {c} request {i}: {v}");
                    if i % 5 == 0 {
                        acked.push(format!("note-{c}-{i}"));
                    }
                    i += 1;
                }
                acked
            })
        })
        .collect();
    let acked: Vec<String> = clients
        .into_iter()
        .flat_map(|h| h.join().expect("client"))
        .collect();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let statuses = sleeper.join().expect("sleeper");
    let _ = server.kill();
    let _ = server.wait();

    assert!(statuses.len() >= 2, "{statuses:?}");
    assert!(statuses.iter().all(|s| s == "completed"), "{statuses:?}");
    let out = Command::new(bin)
        .args([
            "--db",
            &db.to_string_lossy(),
            "kip",
            r#"FIND(?n.name) WHERE { ?n {type: "Note"} } LIMIT 10000"#,
        ])
        .output()
        .expect("read back");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let names: std::collections::HashSet<&str> = v["result"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for a in &acked {
        assert!(names.contains(a.as_str()), "acknowledged {a} is missing");
    }
    assert!(acked.len() >= 120);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Four processes approve the same item at once: it is applied exactly
/// once (one decision in the audit trail), and every other process is told
/// it was decided already; the memory changed as one approval changes it.
#[test]
fn processes_racing_to_approve_one_item_apply_it_once() {
    let dir = std::env::temp_dir().join(format!("somnus-race-approve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let db_s = db.to_string_lossy().to_string();
    let bin = env!("CARGO_BIN_EXE_somnus");
    let run = |args: &[&str]| {
        Command::new(bin)
            .arg("--db")
            .arg(&db_s)
            .args(args)
            .output()
            .expect("somnus")
    };
    assert!(run(&["demo", "--no-console"]).status.success());
    assert!(
        run(&["sleep", "--now", "2026-11-20T03:00:00Z"])
            .status
            .success()
    );
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(bin)
                .args(["--db", &db_s, "proposals", "approve", "1", "--items", "5"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("approve")
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("waited"))
        .collect();
    let said: Vec<String> = outs
        .iter()
        .map(|o| {
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })
        .collect();
    let applied = said.iter().filter(|s| s.contains("applied 1 item")).count();
    assert_eq!(applied, 1, "{said:#?}");
    for s in said.iter().filter(|s| !s.contains("applied 1 item")) {
        assert!(
            s.contains("already") || s.contains("nothing to approve") || s.contains("decided"),
            "a loser is told why: {s}"
        );
    }
    let c = rusqlite::Connection::open(&db).expect("open");
    let decisions: i64 = c
        .query_row(
            "SELECT COUNT(DISTINCT batch) FROM audit_log WHERE batch LIKE 'proposal:1/%'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(decisions, 1);
    let status: String = c
        .query_row(
            "SELECT status FROM proposal_items WHERE proposal = 1 AND seq = 5",
            [],
            |r| r.get(0),
        )
        .expect("item");
    assert_eq!(status, "applied");
}
