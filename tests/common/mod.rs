//! Helpers the hardening tests share: the release binary, its server on an
//! ephemeral loopback port, and HTTP calls to it.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_somnus");

pub fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("somnus-hard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

/// Writes `text` to `rel` under `dir`, making its folders.
pub fn put(dir: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("folders");
    std::fs::write(p, text).expect("write");
}

pub fn somnus(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run somnus")
}

/// The binary's answer: whether it succeeded, and all it said (its
/// output, then its errors).
pub fn run(db: &Path, args: &[&str]) -> (bool, String) {
    let out = somnus(db, args);
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

pub fn kip(db: &Path, command: &str) -> Value {
    let out = somnus(db, &["kip", command]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `somnus serve` on an ephemeral loopback port, killed on drop.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Server {
    pub fn start(db: &Path, args: &[&str]) -> Server {
        Server::start_with(db, args, &[])
    }

    /// `start`, with environment variables for the server process.
    pub fn start_with(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(BIN)
            .arg("--db")
            .arg(db)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        err.read_line(&mut line)
            .expect("serve says where it listens");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        // keep draining stderr so the server never blocks on it
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = err.read_to_string(&mut sink);
        });
        Server { child, addr }
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn post(&self, body: &str) -> (u16, Value) {
        post_to(self.addr, body)
    }

    pub fn call(&self, method: &str, command: &str) -> (u16, Value) {
        self.post(&json!({ "method": method, "params": { "command": command } }).to_string())
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(ok.success());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

pub fn post_to(addr: SocketAddr, body: &str) -> (u16, Value) {
    let mut resp = agent()
        .post(&format!("http://{addr}/kip"))
        .header("content-type", "application/json")
        .send(body)
        .expect("the server answers");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

pub fn filter(expr: &str) -> String {
    format!("FIND(?c) WHERE {{ ?c {{type:\"Domain\"}} FILTER({expr}) }}")
}

/// Asserts a CLI run succeeded, showing its stderr otherwise.
pub fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every item of the proposal a full heuristic sleep cycle at `now` makes
/// (none when it proposes nothing).
pub fn full_cycle(nx: &mut somnus::Nexus, now: &str) -> Vec<somnus::review::proposals::Item> {
    use somnus::sleep::{self, Heuristic, Options, Scope};
    let rep = sleep::run(
        nx,
        &Options::new(Scope::Full, now),
        &mut Heuristic,
        None,
        None,
    )
    .expect("cycle");
    rep.proposal
        .map(|id| somnus::review::proposals::items(nx, id).expect("items"))
        .unwrap_or_default()
}

/// Asserts that no title in `domains` proposes a new domain named one of
/// `names` (`whole`), or whose name begins with one of them.
pub fn assert_no_new_domain(domains: &[String], names: &[&str], whole: bool) {
    for bad in names {
        let quoted = format!("New domain \"{bad}{}", if whole { "\"" } else { "" });
        assert!(
            domains.iter().all(|t| !t.starts_with(&quoted)),
            "{bad}: {domains:?}"
        );
    }
}

/// Writes a note Event (`event_class: "Note"`, its text as the summary,
/// 2026-11-19) filed in `domain`, the way the domain rules' tests lay out
/// a memory's notes; the name and text go as parameters, quotes and all.
pub fn note_in(nx: &mut somnus::Nexus, name: &str, text: &str, domain: &str) {
    let out = nx.kip_with(
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: :name} SET ATTRIBUTES { event_class: "Note", content_summary: :text, start_time: "2026-11-19T10:00:00Z" } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: :domain}) } } }"#,
        json!({"name": name, "text": text, "domain": domain}),
    );
    assert!(
        matches!(out, somnus::protocol::Outcome::Ok { .. }),
        "{name}: {}",
        out.to_json()
    );
}
