//! The `somnus` binary on a PostgreSQL memory, as an operator types it:
//! `--db postgres://…` and `--memory NAME` (or `$SOMNUS_DB` and
//! `$SOMNUS_MEMORY`) for every command; two memories in one database stay
//! apart; `somnus serve` answers over HTTP from one.
//!
//! They need a server: `SOMNUS_TEST_PG=postgres://user@host:port/db`
//! (`.ci/run` starts a throwaway one). Without it each test says so and
//! passes.

use serde_json::Value;
use somnus::store::postgres::Location;
use std::process::Command;

mod pg_support;
use pg_support::server;

fn somnus(url: &str, memory: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(args)
        .args(["--db", url, "--memory", memory])
        .env_remove("SOMNUS_DB")
        .env_remove("SOMNUS_MEMORY")
        .output()
        .expect("run somnus");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(url: &str, memory: &str, args: &[&str]) -> String {
    let (code, out, err) = somnus(url, memory, args);
    assert_eq!(code, 0, "somnus {args:?}\n{out}\n{err}");
    out
}

fn count(url: &str, memory: &str, ty: &str) -> Value {
    let out = ok(
        url,
        memory,
        &[
            "kip",
            &format!("FIND(COUNT(?x)) WHERE {{ ?x {{type: \"{ty}\"}} }}"),
        ],
    );
    serde_json::from_str::<Value>(&out).expect("json")["result"].clone()
}

struct Memories(Vec<Location>);

impl Drop for Memories {
    fn drop(&mut self) {
        for l in &self.0 {
            let _ = somnus::store::postgres::drop_memory(l);
        }
    }
}

#[test]
fn every_command_works_on_a_postgresql_memory() {
    let Some(url) = server() else { return };
    let (a, b) = (
        format!("cli_a_{}", std::process::id()),
        format!("cli_b_{}", std::process::id()),
    );
    let _cleanup = Memories(vec![
        Location::parse(&url, Some(&a)).unwrap(),
        Location::parse(&url, Some(&b)).unwrap(),
    ]);
    for m in [&a, &b] {
        let _ = somnus::store::postgres::drop_memory(&Location::parse(&url, Some(m)).unwrap());
    }

    // the demo into memory a; memory b stays a fresh memory
    let out = ok(&url, &a, &["demo", "--no-console"]);
    assert!(out.contains(&format!("memory {a}")), "{out}");
    assert_eq!(count(&url, &a, "Person"), 30);
    assert_eq!(count(&url, &b, "Person"), 2, "$self and $system only");

    // a cycle, its runs and proposal, an approval and its rollback
    let out = ok(
        &url,
        &a,
        &["sleep", "--now", "2026-11-20T03:00:00Z", "--quiet"],
    );
    assert!(out.contains("Proposal #1"), "{out}");
    let out = ok(&url, &a, &["runs"]);
    assert!(out.contains("completed"), "{out}");
    let out = ok(&url, &a, &["proposals", "approve", "1", "--items", "1"]);
    assert!(out.contains("applied 1 item"), "{out}");
    let out = ok(&url, &a, &["proposals", "rollback", "1"]);
    assert!(
        out.contains("rolled back") || out.contains("undone"),
        "{out}"
    );
    let out = ok(&url, &a, &["audit"]);
    assert!(out.contains("ROLLBACK"), "{out}");
    let out = ok(&url, &a, &["health"]);
    assert!(out.contains("Orphan count"), "{out}");
    let out = ok(&url, &a, &["why", "Topic:JS"]);
    assert!(out.contains("Topic:JS"), "{out}");
    let out = ok(&url, &a, &["contradictions", "list"]);
    assert!(!out.trim().is_empty());

    // keys live in the memory they were made for
    let out = ok(&url, &b, &["keys", "add", "scout", "--role", "agent"]);
    assert!(out.trim().starts_with("smk_"), "the key itself: {out}");
    assert!(ok(&url, &b, &["keys", "list"]).contains("scout"));
    assert!(!ok(&url, &a, &["keys", "list"]).contains("scout"));

    // a KIP error names its code; the process says so in its exit code
    let (code, out, _) = somnus(&url, &a, &["kip", "FIND(?x WHERE"]);
    assert_eq!(code, 1);
    assert!(out.contains("KIP_1001"), "{out}");

    // a bad memory name or a --memory with a file is refused clearly
    let (code, _, err) = somnus(
        &url,
        "no spaces",
        &["kip", "FIND(?x) WHERE { ?x {type: \"Person\"} }"],
    );
    assert_ne!(code, 0);
    assert!(err.contains("memory"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(["kip", "FIND(?x) WHERE { ?x {type: \"Person\"} }"])
        .args(["--db", "/tmp/somnus-cli-test.db", "--memory", "x"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("PostgreSQL"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // the environment names the memory as well as the flags do
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(["kip", "FIND(COUNT(?x)) WHERE { ?x {type: \"Person\"} }"])
        .env("SOMNUS_DB", &url)
        .env("SOMNUS_MEMORY", &a)
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("30"));
}

#[test]
fn serve_answers_from_a_postgresql_memory() {
    use std::io::{BufRead, BufReader, Read, Write};
    let Some(url) = server() else { return };
    let m = format!("cli_serve_{}", std::process::id());
    let loc = Location::parse(&url, Some(&m)).unwrap();
    let _cleanup = Memories(vec![loc.clone()]);
    let _ = somnus::store::postgres::drop_memory(&loc);
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "serve",
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--maintenance",
            "off",
        ])
        .args(["--db", &url, "--memory", &m])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).expect("a line");
    assert!(
        line.contains("somnus serving") && line.contains(&m),
        "{line}"
    );
    let post = |body: &str| -> Value {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        write!(
            s,
            "POST /kip HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        let body = resp.split("\r\n\r\n").nth(1).unwrap_or("");
        serde_json::from_str(body).unwrap_or(Value::Null)
    };
    let w = post(
        r#"{"method":"execute_kip","params":{"command":"UPSERT { CONCEPT ?t { {type: \"Person\", name: \"Ada\"} } }"}}"#,
    );
    assert!(w.get("result").is_some(), "{w}");
    let r = post(
        r#"{"method":"execute_kip_readonly","params":{"command":"FIND(?p.name) WHERE { ?p {type: \"Person\"} } ORDER BY ?p.name ASC"}}"#,
    );
    assert_eq!(
        r["result"],
        serde_json::json!(["$self", "$system", "Ada"]),
        "{r}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// The database drops the server's connections (a restart, an operator
/// terminating backends): requests in flight get a clear error, the pool
/// opens new connections, and the server goes on answering.
#[test]
fn serve_recovers_when_postgresql_drops_its_connections() {
    let Some(url) = server() else { return };
    let m = format!("cli_drop_{}", std::process::id());
    let loc = Location::parse(&url, Some(&m)).unwrap();
    let _cleanup = Memories(vec![loc.clone()]);
    let _ = somnus::store::postgres::drop_memory(&loc);
    let rt = somnus::server::runtime(Some(2)).expect("rt");
    let mut cfg = somnus::server::ServerConfig::new(loc.clone(), "127.0.0.1:0".parse().unwrap());
    cfg.maintenance = None;
    cfg.readers = 2;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let handle = rt.spawn(async move {
        somnus::server::serve_until(cfg, Some(tx), async {
            let _ = stop_rx.await;
        })
        .await
    });
    let addr = rx.blocking_recv().expect("listening");
    let post = |cmd: &str| -> Value {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let body = serde_json::json!({"method": "execute_kip", "params": {"command": cmd}});
        let mut r = agent
            .post(&format!("http://{addr}/kip"))
            .header("content-type", "application/json")
            .send(body.to_string())
            .expect("a response");
        serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default())
            .unwrap_or(Value::Null)
    };
    let upsert =
        |i: usize| format!(r#"UPSERT {{ CONCEPT ?p {{ {{type: "Person", name: "P{i}"}} }} }}"#);
    assert!(post(&upsert(0)).get("result").is_some());
    // every connection of this memory's server, dropped by the database
    let mut admin = loc.connect().expect("connect");
    admin
        .batch_execute(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'somnus {m}' AND pid <> pg_backend_pid()"
        ))
        .expect("terminate");
    // a few requests may meet a dropped connection (and say so); then
    // every one is answered
    let mut errors = 0;
    for i in 1..=10 {
        let r = post(&upsert(i));
        if let Some(e) = r.get("error") {
            errors += 1;
            assert!(
                e["code"].as_str().is_some_and(|c| c.starts_with("KIP_")),
                "{r}"
            );
        }
    }
    assert!(errors <= 3, "{errors} errors: the pool did not reconnect");
    for i in 11..=15 {
        let r = post(&upsert(i));
        assert!(r.get("result").is_some(), "after reconnecting: {r}");
    }
    let _ = stop_tx.send(());
    let _ = rt.block_on(handle);
}
