//! Crash safety and concurrent writers on one database file.

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::protocol::Request;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("somnus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir.join("m.db")
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    nx.execute(&Request::command(cmd)).to_json()
}

fn export_all(nx: &mut Nexus) -> Value {
    let r = kip(
        nx,
        r#"EXPORT ?x WHERE { ?x {type: "Node"} UNION { ?x (?s, "links_to", ?o) } UNION { ?x {type: "Hub"} } } LIMIT 100000"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    r["result"].clone()
}

fn integrity(path: &Path) -> String {
    let c = rusqlite::Connection::open(path).expect("open");
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity")
}

fn seed(path: &Path, hubs: usize, links: usize) {
    let mut nx = Nexus::open(path).expect("open");
    let r = kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?a { {type: "$ConceptType", name: "Node"} } CONCEPT ?b { {type: "$ConceptType", name: "Hub"} } CONCEPT ?c { {type: "$PropositionType", name: "links_to"} } }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    for h in 0..hubs {
        let mut s = format!(r#"UPSERT {{ CONCEPT ?h {{ {{type: "Hub", name: "hub{h}"}} }} "#);
        for i in 0..links {
            s.push_str(&format!(r#"CONCEPT ?n{i} {{ {{type: "Node", name: "n{h}_{i}"}} SET PROPOSITIONS {{ ("links_to", ?h) }} }} "#));
        }
        s.push('}');
        let r = kip(&mut nx, &s);
        assert!(r.get("error").is_none(), "{r}");
    }
}

/// Runs `somnus kip` on `path` with `command` and SIGKILLs it once its
/// write-ahead log shows the statement is writing.
fn kill_mid_statement(path: &Path, command: &str) -> bool {
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let before = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    let mut child = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(["--db", &path.to_string_lossy(), "kip", "-"])
        .env("SOMNUS_CACHE_KB", "512")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn somnus");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(command.as_bytes()).expect("write command");
    }
    kill_when_the_log_grows(child, &wal, before)
}

/// SIGKILLs `child` once the write-ahead log at `wal` has grown by 1 MB
/// past `before` (it is writing); false if it ended first.
fn kill_when_the_log_grows(mut child: std::process::Child, wal: &Path, before: u64) -> bool {
    let start = Instant::now();
    let mut killed_mid = false;
    while start.elapsed() < Duration::from_secs(120) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        let now = std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0);
        if now > before + 1024 * 1024 {
            let _ = child.kill();
            killed_mid = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.wait();
    killed_mid
}

#[test]
fn sigkill_mid_upsert_merge_delete_leaves_the_graph_as_before() {
    let path = tmp("crash");
    seed(&path, 2, 30_000);

    // a large UPSERT
    let mut big = String::from("UPSERT {");
    for i in 0..60_000 {
        big.push_str(&format!(r#" CONCEPT ?x{i} {{ {{type: "Node", name: "big{i}"}} SET ATTRIBUTES {{ payload: "{}" }} SET PROPOSITIONS {{ ("links_to", {{type: "Hub", name: "hub0"}}) }} }}"#, "x".repeat(200)));
    }
    big.push('}');
    let statements = [
        big,
        r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "Hub", name: "hub0"} ?b {type: "Hub", name: "hub1"} }"#.to_string(),
        r#"DELETE CONCEPT ?h DETACH WHERE { ?h {type: "Hub", name: "hub1"} }"#.to_string(),
    ];
    for st in &statements {
        let before = {
            let mut nx = Nexus::open(&path).expect("open");
            export_all(&mut nx)
        };
        let mid = kill_mid_statement(&path, st);
        assert!(
            mid,
            "statement finished before it could be killed: {}",
            &st[..st.len().min(40)]
        );
        assert_eq!(integrity(&path), "ok");
        let mut nx = Nexus::open(&path).expect("reopen");
        let after = export_all(&mut nx);
        assert_eq!(after, before, "a killed statement left a trace");
    }
    // the memory is still writable and whole
    let mut nx = Nexus::open(&path).expect("reopen");
    let r = kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?n { {type: "Node", name: "after-crash"} } }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
}

#[test]
fn two_writers_with_expect_version_lose_no_update() {
    let path = tmp("cas");
    {
        let mut nx = Nexus::open(&path).expect("open");
        let r = kip(
            &mut nx,
            r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Counter"} } CONCEPT ?c { {type: "Counter", name: "c"} SET ATTRIBUTES { n: 0 } } }"#,
        );
        assert!(r.get("error").is_none(), "{r}");
    }
    const N: i64 = 150;
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut nx = Nexus::open(&path).expect("open");
                let mut conflicts = 0;
                for _ in 0..N {
                    loop {
                        let r = nx
                            .execute(&Request::readonly(r#"FIND(?c.attributes.n, ?c.metadata._version) WHERE { ?c {type: "Counter", name: "c"} }"#))
                            .to_json();
                        let n = r["result"][0][0].as_i64().expect("n");
                        let v = r["result"][0][1].as_i64().expect("version");
                        let params = json!({ "n": n + 1, "v": v }).as_object().cloned().unwrap_or_default();
                        let w = nx
                            .execute(&Request::command(r#"UPSERT { CONCEPT ?c { {type: "Counter", name: "c"} EXPECT VERSION :v SET ATTRIBUTES { n: :n } } }"#).with_params(params))
                            .to_json();
                        match w["error"]["code"].as_str() {
                            None => break,
                            Some("KIP_3005") => conflicts += 1,
                            Some(other) => panic!("unexpected {other}: {w}"),
                        }
                    }
                }
                conflicts
            })
        })
        .collect();
    let conflicts: i64 = writers.into_iter().map(|h| h.join().expect("writer")).sum();
    let mut nx = Nexus::open(&path).expect("open");
    let r = kip(
        &mut nx,
        r#"FIND(?c.attributes.n) WHERE { ?c {type: "Counter", name: "c"} }"#,
    );
    assert_eq!(
        r["result"],
        json!([2 * N]),
        "conflicts retried: {conflicts}"
    );
}

/// The counts of every table a write touches, and the integrity check.
fn tables(path: &Path) -> Vec<(String, i64)> {
    let c = rusqlite::Connection::open(path).expect("open");
    [
        "concepts",
        "propositions",
        "audit_log",
        "audit_changes",
        "proposals",
    ]
    .iter()
    .map(|t| {
        let n: i64 = c
            .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
            .expect("count");
        (t.to_string(), n)
    })
    .collect()
}

/// An import killed in the middle (SIGKILL once its write-ahead log grows)
/// leaves the memory as it was, whole; importing again then writes all of
/// it, as into a memory never interrupted.
#[test]
fn sigkill_mid_import_leaves_the_memory_as_before_and_the_import_can_run_again() {
    let path = tmp("import-crash");
    let ws = path.parent().expect("dir").join("workspace");
    let notes = ws.join("memory");
    std::fs::create_dir_all(&notes).expect("workspace");
    std::fs::write(
        ws.join("USER.md"),
        "# USER.md\n\n- **Name:** Ada\n- **Timezone:** Europe/Berlin\n",
    )
    .expect("user");
    for d in 0..300 {
        let day = format!("2026-{:02}-{:02}", 1 + d / 28, 1 + d % 28);
        let mut note = format!("# {day}\n\n");
        for h in 0..24 {
            note.push_str(&format!(
                "## {h:02}:00 Heartbeat {d}-{h}\n\n- gateway up, {} checks\n- café, 心跳, ✅ {}\n\n",
                d * h,
                "lorem ipsum ".repeat(20)
            ));
        }
        std::fs::write(notes.join(format!("{day}.md")), note).expect("note");
    }
    // a memory with something in it already
    {
        let mut nx = Nexus::open(&path).expect("open");
        let r = kip(
            &mut nx,
            r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Bo"} SET ATTRIBUTES { description: "kept" } } }"#,
        );
        assert!(r.get("error").is_none(), "{r}");
    }
    let before = tables(&path);
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let start_len = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    let child = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "--db",
            &path.to_string_lossy(),
            "import",
            "openclaw",
            &ws.to_string_lossy(),
        ])
        .env("SOMNUS_CACHE_KB", "512")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn somnus");
    let killed_mid = kill_when_the_log_grows(child, &wal, start_len);
    assert!(killed_mid, "the import finished before it could be killed");
    assert_eq!(integrity(&path), "ok");
    assert_eq!(tables(&path), before, "a killed import left a trace");

    // importing again writes it all, as into a memory never interrupted
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "--db",
            &path.to_string_lossy(),
            "import",
            "openclaw",
            &ws.to_string_lossy(),
        ])
        .output()
        .expect("import again");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clean = path.parent().expect("dir").join("clean.db");
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "--db",
            &clean.to_string_lossy(),
            "import",
            "openclaw",
            &ws.to_string_lossy(),
        ])
        .output()
        .expect("import clean");
    assert!(out.status.success());
    let count = |p: &Path, ty: &str| -> i64 {
        let c = rusqlite::Connection::open(p).expect("open");
        c.query_row("SELECT count(*) FROM concepts WHERE type = ?1", [ty], |r| {
            r.get(0)
        })
        .expect("count")
    };
    assert_eq!(count(&path, "Event"), count(&clean, "Event"));
    assert_eq!(count(&path, "Event"), 300 * 24);
    let mut nx = Nexus::open(&path).expect("reopen");
    let bo = kip(
        &mut nx,
        r#"FIND(?p.attributes.description) WHERE { ?p {type: "Person", name: "Bo"} }"#,
    );
    assert_eq!(bo["result"], json!(["kept"]));
}
