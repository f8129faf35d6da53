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
    assert!(
        app.status
            .as_ref()
            .is_some_and(|(s, _)| s.contains("changed elsewhere"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}
