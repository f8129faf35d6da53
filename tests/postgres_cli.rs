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
