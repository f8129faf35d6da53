//! The read log: what agents asked over HTTP, MCP and rpc is logged with
//! its caller and what came back, off the request path; `why` says how
//! often an element was read; decay and archival weigh use; the log keeps
//! its retention. The console's and the cycle's reads are not use.

use serde_json::{Map, Value, json};
use somnus::audit::reads::{self, Filter, Logged, Served};
use somnus::protocol::{Outcome, Request};
use somnus::server::{ServerConfig, serve_until};
use somnus::sleep::{self, Heuristic, Options, Params, Scope};
use somnus::{Nexus, Response};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let req = Request::command(cmd).with_params(Map::new());
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("somnus-reads-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp");
    d
}

fn people(nx: &mut Nexus) {
    kip(
        nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Person", name: "Ada Lovelace"} SET ATTRIBUTES { description: "wrote the first program" } }
  CONCEPT ?b { {type: "Person", name: "Grace Hopper"} SET ATTRIBUTES { description: "wrote the first compiler" } }
  CONCEPT ?c { {type: "Person", name: "Alan Turing"} SET ATTRIBUTES { description: "asked whether machines think" } }
}"#,
    );
}

fn id_of(nx: &mut Nexus, name: &str) -> i64 {
    let v = kip(
        nx,
        &format!(r#"FIND(?p) WHERE {{ ?p {{type: "Person", name: "{name}"}} }}"#),
    );
    somnus::store::ids::parse_element_id(v[0]["id"].as_str().expect("id")).expect("an id")
}

fn version_of(nx: &mut Nexus, name: &str) -> Value {
    let v = kip(
        nx,
        &format!(r#"FIND(?p) WHERE {{ ?p {{type: "Person", name: "{name}"}} }}"#),
    );
    v[0]["metadata"]["_version"].clone()
}

/// The log's rows, once at least `n` are there (it is written in batches).
fn logged(db: &PathBuf, n: usize) -> Vec<reads::Request> {
    let started = Instant::now();
    loop {
        let nx = Nexus::open(db).expect("open");
        let rows = reads::recent(nx.reads_db().expect("the log"), &Filter::default(), 1000)
            .expect("recent");
        if rows.len() >= n || started.elapsed() > Duration::from_secs(10) {
            return rows;
        }
        drop(nx);
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn post(addr: std::net::SocketAddr, body: Value, key: &str) -> Value {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut r = agent
        .post(&format!("http://{addr}/kip"))
        .header("content-type", "application/json")
        .header("authorization", &format!("Bearer {key}"))
        .send(body.to_string())
        .expect("request");
    serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default()).unwrap_or(Value::Null)
}

#[test]
fn http_reads_are_logged_with_their_caller_and_what_came_back() {
    let d = dir("http");
    let db = d.join("m.db");
    let key = {
        let mut nx = Nexus::open(&db).expect("open");
        people(&mut nx);
        somnus::store::keys::add(
            nx.db(),
            "scout",
            somnus::store::keys::Role::Agent,
            "operator",
        )
        .expect("a key")
    };
    let (ada, grace, turing, ada_v) = {
        let mut nx = Nexus::open(&db).expect("open");
        (
            id_of(&mut nx, "Ada Lovelace"),
            id_of(&mut nx, "Grace Hopper"),
            id_of(&mut nx, "Alan Turing"),
            version_of(&mut nx, "Ada Lovelace"),
        )
    };
    let cfg = ServerConfig::new(db.clone(), "127.0.0.1:0".parse().expect("addr"));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = somnus::server::runtime(Some(2)).expect("rt");
        rt.block_on(serve_until(cfg, Some(tx), async {
            let _ = stop_rx.await;
        }))
    });
    let addr = rx.blocking_recv().expect("ready");
    // a projection of names: the elements bound still came back
    let v = post(
        addr,
        json!({"method": "execute_kip_readonly", "params": {"command": "FIND(?p.name) WHERE { ?p {type: \"Person\"} FILTER(?p.name != \"Alan Turing\" && !STARTS_WITH(?p.name, \"$\")) } ORDER BY ?p.name ASC"}}),
        &key,
    );
    assert_eq!(v["result"], json!(["Ada Lovelace", "Grace Hopper"]), "{v}");
    post(
        addr,
        json!({"method": "execute_kip_readonly", "params": {"command": "SEARCH CONCEPT :q WITH TYPE \"Person\" LIMIT 1", "parameters": {"q": "compiler"}}}),
        &key,
    );
    post(
        addr,
        json!({"method": "execute_kip_readonly", "params": {"command": "FIND(?p) WHERE { ?p {type: \"Nope\"} "}}),
        &key,
    );
    let rows = logged(&db, 3);
    // the log's thread writes at the lowest priority: agents' requests
    // come first (its turns at nice 10 showed in their slowest answers)
    #[cfg(target_os = "linux")]
    assert_eq!(
        thread_nice("somnus-read-log"),
        Some(somnus::server::read_log::NICE)
    );
    let _ = stop_tx.send(());
    server.join().expect("server").expect("served");
    assert_eq!(rows.len(), 3, "{rows:?}");
    // newest first
    let (err, search, find) = (&rows[0], &rows[1], &rows[2]);
    for r in &rows {
        assert_eq!(r.caller, "scout");
        assert_eq!(r.channel, "http");
    }
    assert_eq!(find.kind, "FIND");
    assert_eq!(find.rows, 2);
    let mut found = find.elements.clone();
    found.sort();
    let mut want = vec![ada, grace];
    want.sort();
    assert_eq!(found, want);
    assert_eq!(search.kind, "SEARCH");
    assert_eq!(search.elements, vec![grace]);
    assert_eq!(search.parameters, json!({"q": "compiler"}));
    assert!(
        err.error
            .as_deref()
            .is_some_and(|e| e.starts_with("KIP_1001")),
        "{err:?}"
    );
    // counted per element, by caller; nothing read, nothing counted
    let mut nx = Nexus::open(&db).expect("open");
    let u = reads::use_of(nx.reads_db().expect("the log"), grace).expect("use");
    assert_eq!(u.count, 2, "{u:?}");
    assert_eq!(u.by[0].caller, "scout");
    assert_eq!(
        reads::use_of(nx.reads_db().expect("the log"), turing)
            .expect("use")
            .count,
        0
    );
    // reading never changes an element's version
    assert_eq!(version_of(&mut nx, "Ada Lovelace"), ada_v);
    // `why --json` carries the counts
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(["--db", &db.to_string_lossy(), "why", "--json"])
        .arg(format!("C:{grace}"))
        .output()
        .expect("why");
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["reads"]["count"], json!(2), "{v}");
    assert_eq!(v["reads"]["last"], json!(search.at), "{v}");
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(["--db", &db.to_string_lossy(), "why"])
        .arg(format!("C:{grace}"))
        .output()
        .expect("why");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("read by agents: 2 times"), "{text}");
    assert!(text.contains("scout 2"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn mcp_and_rpc_reads_are_logged_and_console_reads_are_not() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let d = dir("mcp");
    let db = d.join("m.db");
    let ada = {
        let mut nx = Nexus::open(&db).expect("open");
        people(&mut nx);
        // the console and the sleep cycle read through the engine itself
        kip(
            &mut nx,
            r#"FIND(?p) WHERE { ?p {type: "Person", name: "Ada Lovelace"} }"#,
        );
        id_of(&mut nx, "Ada Lovelace")
    };
    let pool = somnus::server::pool::Pool::new(Nexus::open(&db).expect("open"), vec![]);
    let rt = somnus::server::runtime(Some(1)).expect("runtime");
    rt.block_on(async {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server);
        let task = tokio::spawn(somnus::server::mcp::serve_io(
            pool, "scribe", server_in, server_out,
        ));
        let (client_in, mut client_out) = tokio::io::split(client);
        let mut lines = BufReader::new(client_in).lines();
        for msg in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_kip_readonly","arguments":{"command":"FIND(?p) WHERE { ?p {type: \"Person\", name: \"Ada Lovelace\"} }"}}}"#,
        ] {
            client_out.write_all(msg.as_bytes()).await.expect("send");
            client_out.write_all(b"\n").await.expect("send");
        }
        loop {
            let line = lines.next_line().await.expect("read").expect("a line");
            if line.contains("\"id\":2") {
                break;
            }
        }
        // the client goes away: what is queued is written
        drop(client_out);
        drop(lines);
        task.await.expect("join").expect("served");
    });
    let nx = Nexus::open(&db).expect("open");
    let rows =
        reads::recent(nx.reads_db().expect("the log"), &Filter::default(), 10).expect("recent");
    assert_eq!(rows.len(), 1, "only the agent's read: {rows:?}");
    assert_eq!(
        (rows[0].caller.as_str(), rows[0].channel.as_str()),
        ("scribe", "mcp")
    );
    assert_eq!(rows[0].elements, vec![ada]);
    drop(nx);
    // rpc: each answered line, logged by the end of the session
    let out = rpc(
        &db,
        &[],
        json!({"method": "execute_kip_readonly", "params": {"command": "SEARCH CONCEPT \"program\" WITH TYPE \"Person\" LIMIT 1"}}),
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Ada Lovelace"));
    let nx = Nexus::open(&db).expect("open");
    let rows = reads::recent(
        nx.reads_db().expect("the log"),
        &Filter {
            caller: None,
            kind: Some("search".into()),
            ..Default::default()
        },
        10,
    )
    .expect("recent");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].channel, "rpc");
    assert_eq!(rows[0].elements, vec![ada]);
    assert_eq!(
        reads::use_of(nx.reads_db().expect("the log"), ada)
            .expect("use")
            .count,
        2
    );
    drop(nx);
    // --read-log off logs nothing
    rpc(
        &db,
        &["--read-log", "off"],
        json!({"method": "execute_kip_readonly", "params": {"command": "FIND(?p) WHERE { ?p {type: \"Person\"} } LIMIT 5"}}),
    );
    let nx = Nexus::open(&db).expect("open");
    assert_eq!(
        reads::size(nx.reads_db().expect("the log"))
            .expect("size")
            .0,
        2
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `somnus rpc` on `db` answering one request line.
fn rpc(db: &std::path::Path, args: &[&str], request: Value) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(["--db", &db.to_string_lossy(), "rpc"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("rpc");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{request}").expect("write");
    drop(stdin);
    child.wait_with_output().expect("rpc ran")
}

/// The nice value of this process's thread named `name` (Linux).
#[cfg(target_os = "linux")]
fn thread_nice(name: &str) -> Option<i32> {
    for t in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            // after the name's closing parenthesis: the state (field 3)
            // first, the nice value (field 19) 16 fields on
            let rest = stat.get(stat.rfind(')')? + 2..)?;
            return rest.split(' ').nth(16)?.parse().ok();
        }
    }
    None
}

fn served(kind: &str, elements: Vec<i64>) -> Served {
    Served {
        kind: kind.into(),
        command: format!("{kind} …"),
        parameters: json!({}),
        elements,
        rows: 1,
        micros: 100,
        error: None,
        dry_run: false,
    }
}

fn logged_at(at: &str, caller: &str, s: Served) -> Logged {
    Logged {
        at: at.into(),
        caller: caller.into(),
        channel: "http".into(),
        served: s,
    }
}

#[test]
fn retention_drops_old_requests_and_keeps_the_counts_of_live_elements() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    let ada = id_of(&mut nx, "Ada Lovelace");
    // logged in time order, as a server appends them
    let mut months: Vec<u32> = (0..10).map(|i| 1 + i % 9).collect();
    months.sort();
    let batch: Vec<Logged> = months
        .iter()
        .map(|m| {
            logged_at(
                &format!("2026-0{m}-01T00:00:00.000Z"),
                "scout",
                served("FIND", vec![ada, 999_999]),
            )
        })
        .collect();
    nx.record_reads(&batch).expect("record");
    // a failed read or a write is logged, never counted
    let mut failed = served("FIND", vec![ada]);
    failed.error = Some("KIP_2001 no such type".into());
    nx.record_reads(&[
        logged_at("2026-10-01T00:00:00.000Z", "scout", failed),
        logged_at(
            "2026-10-02T00:00:00.000Z",
            "scout",
            served("UPSERT", vec![ada]),
        ),
    ])
    .expect("record");
    assert_eq!(
        reads::use_of(nx.reads_db().expect("the log"), ada)
            .expect("use")
            .count,
        10
    );
    // older than June: 6 of the 10 reads go (January twice, to May)
    let dry = nx
        .prune_reads("2026-06-01T00:00:00.000Z", None, true)
        .expect("dry run");
    assert_eq!(dry.requests, 6);
    assert_eq!(dry.counts, 1, "the element that does not exist");
    assert_eq!(
        reads::size(nx.reads_db().expect("the log"))
            .expect("size")
            .0,
        12,
        "a dry run drops nothing"
    );
    let p = nx
        .prune_reads("2026-06-01T00:00:00.000Z", Some(3), false)
        .expect("prune");
    // 6 left after the retention, 3 kept by the limit: the newest
    assert_eq!(p.requests, 6 + 3);
    let left =
        reads::recent(nx.reads_db().expect("the log"), &Filter::default(), 100).expect("recent");
    assert_eq!(left.len(), 3);
    assert_eq!(left[0].at, "2026-10-02T00:00:00.000Z");
    // the live element's count stays; the gone one's is dropped
    assert_eq!(
        reads::use_of(nx.reads_db().expect("the log"), ada)
            .expect("use")
            .count,
        10
    );
    assert_eq!(
        reads::use_of(nx.reads_db().expect("the log"), 999_999)
            .expect("use")
            .count,
        0
    );
}

/// Ada's fact, observed at `observed`.
fn ada_fact(nx: &mut Nexus, object: &str, meta: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?o {{ {{type: "Topic", name: "{object}"}} }}
  CONCEPT ?ada {{ {{type: "Person", name: "Ada Lovelace"}} SET PROPOSITIONS {{ ("interested_in", ?o) WITH METADATA {meta} }} }} }}"#
        ),
    );
}

fn link(nx: &mut Nexus, object: &str) -> Value {
    kip(
        nx,
        &format!(
            r#"FIND(?l) WHERE {{ ?l ({{type: "Person", name: "Ada Lovelace"}}, "interested_in", ?o) FILTER(?o.name == "{object}") }}"#
        ),
    )[0]
    .clone()
}

fn cycle_at(nx: &mut Nexus, now: &str) -> sleep::Report {
    let o = Options::new(Scope::Full, now);
    assert_eq!(o.params, Params::default());
    sleep::run(nx, &o, &mut Heuristic, None, None).expect("cycle")
}

#[test]
fn a_fact_agents_read_decays_slower_and_is_not_archived() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?p { {type: "$PropositionType", name: "interested_in"} SET ATTRIBUTES { description: "an interest" } }
}"#,
    );
    let old = r#"{ confidence: 0.45, memory_strength: 0.1, observed_at: "2026-04-01T00:00:00Z" }"#;
    let mid = r#"{ confidence: 0.7, memory_strength: 0.8, observed_at: "2026-09-21T03:00:00Z" }"#;
    // faint and old: one never read, one an agent reads every week
    ada_fact(&mut nx, "Curling", old);
    ada_fact(&mut nx, "Chess", old);
    // stale since September: one unread, one read three times long ago,
    // one read yesterday
    ada_fact(&mut nx, "Jazz", mid);
    ada_fact(&mut nx, "Blues", mid);
    ada_fact(&mut nx, "Opera", mid);
    let id = |nx: &mut Nexus, o: &str| {
        somnus::store::ids::parse_element_id(link(nx, o)["id"].as_str().expect("id")).expect("id")
    };
    let (chess, blues, opera) = (
        id(&mut nx, "Chess"),
        id(&mut nx, "Blues"),
        id(&mut nx, "Opera"),
    );
    let mut batch = Vec::new();
    for week in 0..8 {
        batch.push(logged_at(
            &format!(
                "2026-{:02}-{:02}T12:00:00.000Z",
                9 + week / 4,
                1 + (week % 4) * 7
            ),
            "scout",
            served("FIND", vec![chess]),
        ));
    }
    for day in 1..=3 {
        batch.push(logged_at(
            &format!("2026-09-2{day}T12:00:00.000Z"),
            "scout",
            served("SEARCH", vec![blues]),
        ));
    }
    batch.push(logged_at(
        "2026-11-19T12:00:00.000Z",
        "scout",
        served("FIND", vec![opera]),
    ));
    nx.record_reads(&batch).expect("record");
    let rep = cycle_at(&mut nx, "2026-11-20T03:00:00Z");
    let titles: Vec<String> = rep
        .proposal
        .map(|p| somnus::review::proposals::items(&nx, p).expect("items"))
        .unwrap_or_default()
        .into_iter()
        .filter(|i| i.class == "archive")
        .map(|i| i.title)
        .collect();
    assert!(
        titles.iter().any(|t| t.contains("Curling")),
        "the unread faint fact is proposed: {titles:?}"
    );
    assert!(
        !titles.iter().any(|t| t.contains("Chess")),
        "the one read every week is not: {titles:?}"
    );
    let strength = |nx: &mut Nexus, o: &str| {
        link(nx, o)["metadata"]["memory_strength"]
            .as_f64()
            .expect("strength")
    };
    let (jazz, blues_s, opera_s) = (
        strength(&mut nx, "Jazz"),
        strength(&mut nx, "Blues"),
        strength(&mut nx, "Opera"),
    );
    // unread: stale since 2026-09-28, 53 days at 0.95 a week
    let unread = 0.8 * 0.95f64.powf(53.0 / 7.0);
    assert!((jazz - unread).abs() < 1e-6, "{jazz} vs {unread}");
    // read three times (last 2026-09-23 12:00): stale since 2026-09-30
    // 12:00, 50.625 days, in the "used" band at √0.95
    let used = 0.8 * 0.95f64.sqrt().powf(50.625 / 7.0);
    assert!((blues_s - used).abs() < 1e-6, "{blues_s} vs {used}");
    assert!(blues_s > jazz);
    // read yesterday: not stale at all
    assert_eq!(opera_s, 0.8);
    let rule = link(&mut nx, "Blues")["metadata"]["strength_decay_rule"].clone();
    assert!(
        rule.as_str().is_some_and(|r| r.starts_with("used")),
        "{rule}"
    );
}

#[test]
fn an_item_names_the_recent_reads_whose_answer_it_changes_and_writes_nothing() {
    let d = dir("impact");
    let db = d.join("m.db");
    let mut nx = Nexus::open(&db).expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?p { {type: "$PropositionType", name: "interested_in"} SET ATTRIBUTES { description: "an interest" } }
}"#,
    );
    ada_fact(
        &mut nx,
        "Curling",
        r#"{ confidence: 0.45, memory_strength: 0.1, observed_at: "2026-04-01T00:00:00Z" }"#,
    );
    let rep = cycle_at(&mut nx, "2026-11-20T03:00:00Z");
    let proposal = rep.proposal.expect("a proposal");
    let item = somnus::review::proposals::items(&nx, proposal)
        .expect("items")
        .into_iter()
        .find(|i| i.class == "archive")
        .expect("the archival");
    // the agent asked, an hour ago, for Ada's interests (twice) and for
    // Grace's name
    let at = (chrono::Utc::now() - chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let read = |command: &str| Logged {
        at: at.clone(),
        caller: "scout".into(),
        channel: "http".into(),
        served: Served {
            kind: "FIND".into(),
            command: command.into(),
            parameters: json!({"who": "Ada Lovelace"}),
            elements: vec![],
            rows: 1,
            micros: 10,
            error: None,
            dry_run: false,
        },
    };
    let interests = r#"FIND(?l) WHERE { ?l ({type: "Person", name: :who}, "interested_in", ?o) }"#;
    let grace = r#"FIND(?p.name) WHERE { ?p {type: "Person", name: "Grace Hopper"} }"#;
    nx.record_reads(&[read(interests), read(grace), read(interests)])
        .expect("record");
    let entries = |nx: &Nexus| {
        nx.db()
            .query_i64("SELECT COUNT(*) FROM audit_log", &[])
            .expect("count")
            .unwrap_or(0)
    };
    let audit_before = entries(&nx);
    assert!(audit_before > 0);
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let recent = somnus::review::impact::recent_reads(&nx, &now).expect("recent");
    assert_eq!(recent.len(), 2, "distinct reads: {recent:?}");
    let changed = somnus::review::impact::impact(&mut nx, &item, &recent).expect("impact");
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(changed[0].command, interests);
    assert_eq!(changed[0].caller, "scout");
    assert_ne!(changed[0].before, changed[0].after);
    assert_eq!(changed[0].after[0]["metadata"]["archived"], json!(true));
    assert_eq!(
        somnus::review::impact::summary(&changed, recent.len()).as_deref(),
        Some("changes the answer to 1 of scout's recent reads (2 weighed, last 14 days)")
    );
    // nothing was written: the link, the item and the trail are as they were
    assert!(link(&mut nx, "Curling")["metadata"]["archived"].is_null());
    assert_eq!(entries(&nx), audit_before);
    drop(nx);
    let show = |json: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_somnus"));
        c.args(["--db", &db.to_string_lossy(), "proposals", "show"])
            .arg(proposal.to_string());
        if json {
            c.arg("--json");
        }
        let out = c.output().expect("show");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let v: Value = serde_json::from_str(&show(true)).expect("json");
    let it = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["class"] == "archive")
        .expect("the archival")
        .clone();
    assert_eq!(it["impact"]["weighed"], json!(2), "{it}");
    assert_eq!(it["impact"]["changed"][0]["caller"], json!("scout"), "{it}");
    let text = show(false);
    assert!(
        text.contains("recall: changes the answer to 1 of scout's recent reads"),
        "{text}"
    );
    let nx = Nexus::open(&db).expect("open");
    let item = somnus::review::proposals::items(&nx, proposal)
        .expect("items")
        .into_iter()
        .find(|i| i.class == "archive")
        .expect("the archival");
    assert_eq!(item.status, "pending");
    let _ = std::fs::remove_dir_all(&d);
}

/// A secret an agent sends (in the command or its parameters) is masked
/// before the log keeps it.
#[test]
fn the_log_never_keeps_a_secret_an_agent_sent() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    // built from parts, so no scanner mistakes this file for a leak
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    let mut params = Map::new();
    params.insert("password".into(), json!("hunter22"));
    params.insert("q".into(), json!(format!("key {token}")));
    let req = Request::command(format!(
        r#"SEARCH CONCEPT "{token}" WITH TYPE "Person" LIMIT 1"#
    ))
    .with_params(params);
    let (_, sent) = nx.execute_served(&req);
    nx.record_reads(&[logged_at(
        "2026-11-20T00:00:00.000Z",
        "scout",
        sent[0].clone(),
    )])
    .expect("record");
    let rows =
        reads::recent(nx.reads_db().expect("the log"), &Filter::default(), 5).expect("recent");
    let kept = serde_json::to_string(&rows[0].to_json()).expect("json");
    assert!(!kept.contains(&token), "{kept}");
    assert!(!kept.contains("hunter22"), "{kept}");
    assert!(kept.contains("[redacted github-pat]"), "{kept}");
    assert_eq!(rows[0].parameters["password"], json!("[redacted password]"));
    // an error that quotes the command is masked too
    let mut failed = served("FIND", vec![]);
    failed.error = Some(format!("KIP_1001 unexpected \"{token}\" at 1:6"));
    nx.record_reads(&[logged_at("2026-11-20T00:00:01.000Z", "scout", failed)])
        .expect("record");
    let rows =
        reads::recent(nx.reads_db().expect("the log"), &Filter::default(), 5).expect("recent");
    let error = rows[0].error.clone().expect("the error");
    assert!(
        !error.contains(&token) && error.contains("[redacted github-pat]"),
        "{error}"
    );
}

/// A batch masks a command it holds many times in every row (it is
/// scanned once), sums its reads per element and caller into one count
/// each, and keeps the latest read as the last.
#[test]
fn a_batch_masks_every_row_and_counts_each_element_once() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    let ada = id_of(&mut nx, "Ada Lovelace");
    let grace = id_of(&mut nx, "Grace Hopper");
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    let batch: Vec<Logged> = (0..250)
        .map(|i| {
            let mut s = served(
                "FIND",
                if i % 2 == 0 {
                    vec![ada, grace]
                } else {
                    vec![ada]
                },
            );
            s.command = format!(r#"FIND(?p) WHERE {{ ?p {{name: "{token}"}} }}"#);
            logged_at(
                &format!("2026-11-20T00:{:02}:{:02}.000Z", i / 60, i % 60),
                if i % 5 == 0 { "ops" } else { "scout" },
                s,
            )
        })
        .collect();
    let mut pauses = 0;
    let tx = nx.reads_db().expect("the log");
    tx.begin(true).expect("begin");
    reads::record_paced(tx, &batch, 20, &mut || pauses += 1).expect("record");
    tx.commit().expect("commit");
    assert_eq!(pauses, 250 / 20, "a pause between statements");
    let rows =
        reads::recent(nx.reads_db().expect("the log"), &Filter::default(), 300).expect("recent");
    assert_eq!(rows.len(), 250);
    assert!(
        rows.iter()
            .all(|r| !r.command.contains(&token) && r.command.contains("[redacted github-pat]")),
        "every row masked"
    );
    let use_of = |e| reads::use_of(nx.reads_db().expect("the log"), e).expect("use");
    let a = use_of(ada);
    assert_eq!(a.count, 250);
    assert_eq!(a.last.as_deref(), Some("2026-11-20T00:04:09.000Z"));
    let by: Vec<(String, i64)> = a.by.iter().map(|b| (b.caller.clone(), b.count)).collect();
    assert_eq!(
        by,
        vec![("scout".to_string(), 200), ("ops".to_string(), 50)]
    );
    assert_eq!(use_of(grace).count, 125);
    let pairs = count_in(&nx, "SELECT COUNT(*) FROM read_use");
    assert_eq!(pairs, 4, "one count per element and caller");
}

/// A command past what a batch remembers (4 KiB) is scanned each time it
/// comes: its secret is masked in every row, and a command past what the
/// log keeps (16 KiB) is cut with the secret masked before the cut.
#[test]
fn a_long_command_repeated_in_a_batch_is_masked_in_every_row() {
    let nx = Nexus::open_in_memory().expect("open");
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    let long = |pad: usize| {
        format!(
            r#"FIND(?p) WHERE {{ ?p {{name: "{token}"}} FILTER(?p.name != "{}") }}"#,
            "x".repeat(pad)
        )
    };
    let batch: Vec<Logged> = (0..30)
        .map(|i| {
            let mut s = served("FIND", vec![]);
            s.command = long(if i % 2 == 0 { 5_000 } else { 40_000 });
            logged_at("2026-11-20T00:00:00.000Z", "scout", s)
        })
        .collect();
    let db = nx.reads_db().expect("the log");
    db.begin(true).expect("begin");
    reads::record_paced(db, &batch, 7, &mut || {}).expect("record");
    db.commit().expect("commit");
    let rows =
        reads::recent(nx.reads_db().expect("the log"), &Filter::default(), 50).expect("recent");
    assert_eq!(rows.len(), 30);
    for r in &rows {
        assert!(
            !r.command.contains(&token) && r.command.contains("[redacted github-pat]"),
            "{}",
            &r.command[..120]
        );
        assert!(
            r.command.len() <= 16 * 1024 + "…".len(),
            "{}",
            r.command.len()
        );
    }
}

fn count_in(nx: &Nexus, sql: &str) -> i64 {
    nx.reads_db().expect("the log").query(sql, &[]).expect(sql)[0]
        .i64(0)
        .expect("a count")
}

/// The log's batch holds no snapshot of the memory: while it is being
/// written, the memory's write-ahead log can be checkpointed to nothing.
/// (Begun IMMEDIATE, the log's transaction held one, and a checkpoint
/// found the memory busy for as long as the batch took.)
#[test]
fn a_log_batch_never_holds_back_the_memorys_checkpoint() {
    let d = dir("checkpoint");
    let db = d.join("m.db");
    let (mut nx, ada) = people_at(&db);
    let memory = raw(&db);
    memory
        .busy_timeout(Duration::from_millis(200))
        .expect("timeout");
    let busy = nx
        .in_reads_transaction(|log| {
            reads::record(
                log,
                &[logged_at(
                    "2026-11-20T00:00:00.000Z",
                    "scout",
                    served("FIND", vec![ada]),
                )],
            )?;
            // an agent writes meanwhile, then the memory is checkpointed
            memory
                .execute_batch("CREATE TABLE scratch(x); INSERT INTO scratch VALUES (1);")
                .expect("a write");
            let (busy, _, _): (i64, i64, i64) = memory
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .expect("checkpoint");
            Ok(busy)
        })
        .expect("the batch");
    assert_eq!(busy, 0, "the checkpoint was held back by the log");
    assert_eq!(
        reads::use_of(nx.reads_db().expect("log"), ada)
            .expect("use")
            .count,
        1
    );
    drop(nx);
    let _ = std::fs::remove_dir_all(&d);
}

/// Rows written straight into a file, as another process would.
/// A file memory with the people in it, and Ada's id.
fn people_at(db: &std::path::Path) -> (Nexus, i64) {
    let mut nx = Nexus::open(db).expect("open");
    people(&mut nx);
    let ada = id_of(&mut nx, "Ada Lovelace");
    (nx, ada)
}

/// scout's FIND that returned `element`, logged at `at`.
fn read_by_scout(nx: &mut Nexus, at: &str, element: i64) {
    nx.record_reads(&[logged_at(at, "scout", served("FIND", vec![element]))])
        .expect("record");
}

fn raw(path: &std::path::Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(path).expect("raw open");
    c.busy_timeout(Duration::from_secs(10)).expect("timeout");
    c
}

fn count(c: &rusqlite::Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).expect(sql)
}

/// A SQLite memory's log is a file of its own: writing it never takes the
/// memory's writer, and an agent's write never waits for the log.
#[test]
fn the_log_has_a_file_of_its_own_and_neither_waits_for_the_other() {
    let d = dir("own-file");
    let db = d.join("m.db");
    let (mut nx, ada) = people_at(&db);
    read_by_scout(&mut nx, "2026-11-20T00:00:00.000Z", ada);
    let file = somnus::store::read_file::path_of(&db);
    assert!(file.exists(), "{}", file.display());
    assert_eq!(count(&raw(&file), "SELECT COUNT(*) FROM read_log"), 1);
    assert_eq!(
        count(&raw(&db), "SELECT COUNT(*) FROM read_log"),
        0,
        "nothing in the memory file"
    );

    // the memory's writer is held (an agent's long write): the log is
    // written at once all the same
    let memory = raw(&db);
    memory
        .execute_batch("BEGIN IMMEDIATE")
        .expect("hold the memory");
    let t = Instant::now();
    nx.record_reads(&[logged_at(
        "2026-11-20T00:00:01.000Z",
        "scout",
        served("FIND", vec![ada]),
    )])
    .expect("record while the memory is held");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    memory.execute_batch("ROLLBACK").expect("release");

    // the log's writer is held: an agent's write goes through at once
    let log = raw(&file);
    log.execute_batch("BEGIN IMMEDIATE").expect("hold the log");
    let mut other = Nexus::open(&db).expect("a second connection");
    let t = Instant::now();
    kip(
        &mut other,
        r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Alan Turing"} SET ATTRIBUTES { born: 1912 } } }"#,
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // and the log reads as it was committed
    assert_eq!(
        reads::use_of(other.reads_db().expect("log"), ada)
            .expect("use")
            .count,
        2
    );
    log.execute_batch("ROLLBACK").expect("release");
    drop((nx, other));
    let _ = std::fs::remove_dir_all(&d);
}

/// A memory from before the split kept its log in the memory file: the
/// first open moves it (ids, counts), and a move repeated after a crash
/// between its two steps neither repeats rows nor adds counts twice.
#[test]
fn a_log_kept_in_the_memory_file_moves_to_its_own() {
    let d = dir("move");
    let db = d.join("m.db");
    let ada = {
        let mut nx = Nexus::open(&db).expect("open");
        people(&mut nx);
        id_of(&mut nx, "Ada Lovelace")
    };
    let file = somnus::store::read_file::path_of(&db);
    let old_rows = |c: &rusqlite::Connection| {
        c.execute_batch(&format!(
            "INSERT INTO read_log(id, at, caller, channel, kind, command, parameters, elements, rows, micros) VALUES \
               (7, '2026-10-01T00:00:00.000Z', 'scout', 'http', 'FIND', 'FIND …', '{{}}', '[{ada}]', 1, 50), \
               (8, '2026-10-02T00:00:00.000Z', 'scout', 'http', 'FIND', 'FIND …', '{{}}', '[{ada}]', 1, 50); \
             INSERT INTO read_use(element, caller, count, last_at) VALUES ({ada}, 'scout', 2, '2026-10-02T00:00:00.000Z');"
        ))
        .expect("old rows");
    };
    let _ = std::fs::remove_file(&file);
    old_rows(&raw(&db));
    for round in 0..2 {
        let nx = Nexus::open(&db).expect("reopen");
        let log = nx.reads_db().expect("log");
        let rows = reads::recent(log, &Filter::default(), 10).expect("recent");
        assert_eq!(
            rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![8, 7],
            "round {round}"
        );
        assert_eq!(
            reads::use_of(log, ada).expect("use").count,
            2,
            "round {round}"
        );
        drop(nx);
        let memory = raw(&db);
        assert_eq!(count(&memory, "SELECT COUNT(*) FROM read_log"), 0);
        assert_eq!(count(&memory, "SELECT COUNT(*) FROM read_use"), 0);
        // a crash after the copy, before the memory's rows were deleted
        old_rows(&memory);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A read-only open creates no log file; it reads an empty log.
#[test]
fn a_read_only_open_creates_no_log_file() {
    let d = dir("ro");
    let db = d.join("m.db");
    {
        let mut nx = Nexus::open(&db).expect("open");
        people(&mut nx);
    }
    let file = somnus::store::read_file::path_of(&db);
    let _ = std::fs::remove_file(&file);
    let nx = Nexus::open_with(
        &db,
        somnus::store::OpenOptions {
            readonly: true,
            ..Default::default()
        },
    )
    .expect("read-only");
    assert!(
        nx.recent_reads(&Filter::default(), 10)
            .expect("recent")
            .is_empty()
    );
    assert!(nx.read_usage(10).expect("usage").never.len() >= 2);
    assert!(!file.exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// `somnus copy` carries what agents read: the log moves between the two
/// memories' own log files.
#[test]
fn a_copy_carries_the_read_log() {
    let d = dir("copy");
    let (from, to) = (d.join("a.db"), d.join("b.db"));
    let mut nx = Nexus::open(&from).expect("open");
    people(&mut nx);
    let ada = id_of(&mut nx, "Ada Lovelace");
    nx.record_reads(&[
        logged_at(
            "2026-11-20T00:00:00.000Z",
            "scout",
            served("FIND", vec![ada]),
        ),
        logged_at(
            "2026-11-21T00:00:00.000Z",
            "scout",
            served("FIND", vec![ada]),
        ),
    ])
    .expect("record");
    let target = Nexus::open(&to).expect("target");
    let copied = nx.copy_into(&target).expect("copy");
    assert_eq!((copied.rows("read_log"), copied.rows("read_use")), (2, 1));
    let log = target.reads_db().expect("log");
    assert_eq!(reads::use_of(log, ada).expect("use").count, 2);
    assert_eq!(
        reads::recent(log, &Filter::default(), 10)
            .expect("recent")
            .len(),
        2
    );
    assert!(somnus::store::read_file::path_of(&to).exists());
    drop((nx, target));
    let _ = std::fs::remove_dir_all(&d);
}

/// A memory whose path holds the characters a SQLite URI reserves still
/// gets its log (the log attaches the memory by URI).
#[test]
fn a_memory_named_with_uri_characters_keeps_its_log() {
    let d = dir("uri");
    let db = d.join("odd ?name#1%20.db");
    let (mut nx, ada) = people_at(&db);
    read_by_scout(&mut nx, "2026-11-20T00:00:00.000Z", ada);
    // the log's question that joins the memory through the attachment
    let usage = nx.read_usage(10).expect("usage");
    assert!(
        usage.never.iter().all(|(id, _, _)| *id != ada),
        "{:?}",
        usage.never
    );
    assert_eq!(usage.logged, 1);
    drop(nx);
    let _ = std::fs::remove_dir_all(&d);
}
