//! The surfaces added for keys, staging, approvals, import and MCP, tried
//! as an attacker would, each at the level the defect was found.

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::Duration;

fn post_with(addr: std::net::SocketAddr, body: &Value, auth: Option<&str>) -> (u16, Value) {
    let mut req = agent()
        .post(&format!("http://{addr}/kip"))
        .header("content-type", "application/json");
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let mut resp = req.send(body.to_string()).expect("the server answers");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn add_key(db: &std::path::Path, name: &str, role: &str) -> String {
    let out = somnus(db, &["keys", "add", name, "--role", role]);
    ok(&out);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write_person(name: &str) -> Value {
    json!({"method": "execute_kip", "params": {
        "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} } }",
        "parameters": {"n": name}}})
}

fn persons(db: &std::path::Path, name: &str) -> Value {
    kip(
        db,
        &format!(
            "FIND(COUNT(?p)) WHERE {{ ?p {{type: \"Person\"}} FILTER(?p.name == \"{name}\") }}"
        ),
    )["result"]
        .clone()
}

/// Revoking a memory's last key leaves a server that admits nobody
/// without a key: it never falls open.
#[test]
fn revoking_the_last_key_never_opens_the_server() {
    let dir = tmp("last-key");
    let db = dir.join("m.db");
    ok(&somnus(&db, &["demo", "--no-console"]));
    let reader = add_key(&db, "ledger", "reader");
    let server = Server::start(&db, &["--maintenance", "off"]);
    let read = json!({"method": "execute_kip_readonly", "params": {"command": "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"}});
    assert_eq!(post_with(server.addr, &read, None).0, 401);
    assert_eq!(
        post_with(server.addr, &read, Some(&format!("Bearer {reader}"))).0,
        200
    );
    // the scheme is case-insensitive (RFC 9110)
    assert_eq!(
        post_with(server.addr, &read, Some(&format!("bearer {reader}"))).0,
        200
    );
    ok(&somnus(&db, &["keys", "revoke", "ledger"]));
    std::thread::sleep(Duration::from_millis(1500));
    let (s, v) = post_with(server.addr, &write_person("Intruder"), None);
    assert_eq!(s, 401, "{v}");
    let (s, _) = post_with(server.addr, &read, Some(&format!("Bearer {reader}")));
    assert_eq!(s, 401, "the revoked key is refused");
    drop(server);
    assert_eq!(persons(&db, "Intruder"), json!(0));
}

/// An MCP session over stdio, its lines sent and read one at a time.
struct Mcp {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl Mcp {
    fn start(db: &std::path::Path, key: Option<&str>) -> Mcp {
        use std::process::{Command, Stdio};
        let mut cmd = Command::new(BIN);
        cmd.arg("--db")
            .arg(db)
            .arg("mcp")
            .args(["--maintenance", "off"]);
        if let Some(k) = key {
            cmd.env("SOMNUS_KEY", k);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mcp");
        let input = child.stdin.take().expect("stdin");
        let output = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut m = Mcp {
            child,
            input,
            output,
        };
        m.send(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}));
        assert!(m.recv()["result"]["serverInfo"].is_object());
        m.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        m
    }

    fn send(&mut self, v: &Value) {
        use std::io::Write;
        self.input
            .write_all(format!("{v}\n").as_bytes())
            .expect("write");
        self.input.flush().expect("flush");
    }

    fn recv(&mut self) -> Value {
        use std::io::BufRead;
        let mut l = String::new();
        self.output.read_line(&mut l).expect("read");
        serde_json::from_str(&l).unwrap_or_else(|_| panic!("not JSON: {l:?}"))
    }

    /// A tool call's text answer.
    fn call(&mut self, id: i64, tool: &str, args: Value) -> String {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
        let v = self.recv();
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A key revoked while an MCP session is open stops working at the
/// session's next call, as it does over HTTP.
#[test]
fn an_mcp_session_loses_a_revoked_keys_rights_at_its_next_call() {
    let dir = tmp("mcp-revoke");
    let db = dir.join("m.db");
    ok(&somnus(&db, &["demo", "--no-console"]));
    let main = add_key(&db, "main", "agent");
    let mut m = Mcp::start(&db, Some(&main));
    let write = |n: &str| json!({"command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} } }", "parameters": {"n": n}});
    let t = m.call(1, "execute_kip", write("Before Revocation"));
    assert!(!t.contains("error"), "{t}");
    ok(&somnus(&db, &["keys", "revoke", "main"]));
    let t = m.call(2, "execute_kip", write("After Revocation"));
    assert!(t.contains("KIP_3004") && t.contains("revoked"), "{t}");
    let t = m.call(
        3,
        "execute_kip_readonly",
        json!({"command": "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"}),
    );
    assert!(t.contains("revoked"), "reads too: {t}");
    drop(m);
    assert_eq!(persons(&db, "Before Revocation"), json!(1));
    assert_eq!(persons(&db, "After Revocation"), json!(0));
}

/// A demo memory with an agent key `main` and a sub-agent key `scout`,
/// served on loopback.
struct Keyed {
    server: Server,
    db: std::path::PathBuf,
    main: String,
    scout: String,
}

impl Keyed {
    fn start(name: &str, policies: &[(&str, &str)]) -> Keyed {
        let dir = tmp(name);
        let db = dir.join("m.db");
        ok(&somnus(&db, &["demo", "--no-console"]));
        let main = add_key(&db, "main", "agent");
        let scout = add_key(&db, "scout", "subagent");
        for (class, mode) in policies {
            ok(&somnus(&db, &["proposals", "policy", class, mode]));
        }
        let server = Server::start(&db, &["--maintenance", "off"]);
        Keyed {
            server,
            db,
            main,
            scout,
        }
    }

    fn kip(&self, key: &str, body: Value) -> (u16, Value) {
        post_with(self.server.addr, &body, Some(&format!("Bearer {key}")))
    }

    fn decide(&self, body: Value) -> (u16, Value) {
        let mut resp = agent()
            .post(&format!("http://{}/proposals", self.server.addr))
            .header("content-type", "application/json")
            .header("authorization", &format!("Bearer {}", self.main))
            .send(body.to_string())
            .expect("request");
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn cli(&self, args: &[&str]) -> std::process::Output {
        somnus(&self.db, args)
    }

    /// `proposals show N --json`
    fn proposal(&self, id: i64) -> Value {
        let out = self.cli(&["proposals", "show", &id.to_string(), "--json"]);
        ok(&out);
        serde_json::from_slice(&out.stdout).expect("JSON")
    }
}

fn temp_person(name: &str) -> Value {
    json!({"method": "execute_kip", "params": {
        "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} SET ATTRIBUTES { temp: true } } }",
        "parameters": {"n": name}, "reason": "a temporary contact"}})
}

/// A sub-agent meets the batch limit every caller has, and a quota of
/// writes waiting for review; staging is one transaction, so a refused
/// request stages nothing.
#[test]
fn a_subagent_meets_the_batch_limit_and_its_quota_of_pending_writes() {
    let k = Keyed::start("quota", &[]);
    let batch = |n: usize, from: usize| {
        let commands: Vec<Value> = (from..from + n)
            .map(|i| json!({"command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} } }", "parameters": {"n": format!("Q{i}")}}))
            .collect();
        json!({"method": "execute_kip", "params": {"commands": commands}})
    };
    let (s, v) = k.kip(&k.scout, batch(1_001, 0));
    assert_eq!((s, code(&v)), (400, "KIP_4002"), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("1000"),
        "{v}"
    );
    // 1,000 writes stage (the quota), in seconds rather than minutes
    let t = std::time::Instant::now();
    let (s, v) = k.kip(&k.scout, batch(1_000, 0));
    assert_eq!(s, 200, "{v}");
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "staging 1,000 writes took {:?}",
        t.elapsed()
    );
    assert_eq!(v["result"].as_array().map(Vec::len), Some(1_000));
    // the next write passes the quota: refused, nothing staged
    let (s, v) = k.kip(&k.scout, write_person("One Too Many"));
    assert_eq!((s, code(&v)), (400, "KIP_4002"), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("waiting for review"),
        "{v}"
    );
    let out = k.cli(&["proposals", "list", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let items: usize = list
        .as_array()
        .expect("list")
        .iter()
        .filter(|p| p["actor"] == "scout")
        .map(|p| p["items"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(items, 1_000);
    // an agent still writes at once
    let (s, v) = k.kip(&k.main, write_person("Agent Still Writes"));
    assert_eq!(s, 200, "{v}");
}

/// A DELETE staged while it matched one Person, approved after agents
/// added three more that it would match: refused as stale, nothing
/// deleted; after a refresh it shows all four and applies what it shows.
#[test]
fn an_approval_never_does_more_than_its_preview_showed() {
    let k = Keyed::start("drift", &[]);
    assert_eq!(k.kip(&k.main, temp_person("T0")).0, 200);
    let (s, v) = k.kip(
        &k.scout,
        json!({"method": "execute_kip", "params": {
            "command": "DELETE CONCEPT ?p DETACH WHERE { ?p {type: \"Person\"} FILTER(?p.attributes.temp == true) }",
            "reason": "temporary contacts"}}),
    );
    assert_eq!(s, 200, "{v}");
    let pid = v["result"]["proposal"].as_i64().expect("staged");
    for n in ["T1", "T2", "T3"] {
        assert_eq!(k.kip(&k.main, temp_person(n)).0, 200);
    }
    let out = k.cli(&["proposals", "approve", &pid.to_string()]);
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("not applied"), "{said}");
    assert!(
        said.contains("Person: T1 was created by main") && said.contains("would now delete it too"),
        "{said}"
    );
    for n in ["T0", "T1", "T2", "T3"] {
        assert_eq!(persons(&k.db, n), json!(1), "{n} was deleted unseen");
    }
    // a fresh look shows the four, and approving it deletes what it shows
    ok(&k.cli(&["proposals", "refresh", &pid.to_string()]));
    let p = k.proposal(pid);
    let preview = p["items"][0]["preview"].to_string();
    for n in ["T0", "T1", "T2", "T3"] {
        assert!(
            preview.contains(&format!("\"{n}\"")),
            "{n} not in {preview}"
        );
    }
    ok(&k.cli(&["proposals", "approve", &pid.to_string()]));
    for n in ["T0", "T1", "T2", "T3"] {
        assert_eq!(persons(&k.db, n), json!(0));
    }
}

/// With `agents_decide auto`, an agent key decides pending items only: it
/// never re-approves what a person rejected.
#[test]
fn an_agent_key_never_overrules_a_persons_rejection() {
    let k = Keyed::start("overrule", &[("agents_decide", "auto")]);
    let (_, v) = k.kip(&k.scout, write_person("Rejected By A Person"));
    let pid = v["result"]["proposal"].as_i64().expect("staged");
    ok(&k.cli(&[
        "proposals",
        "reject",
        &pid.to_string(),
        "--reason",
        "the operator says no",
    ]));
    let (s, v) = k.decide(json!({"proposal": pid, "decision": "approve", "items": [1]}));
    assert_eq!((s, code(&v)), (403, "KIP_3004"), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("rejected"),
        "{v}"
    );
    let (s, v) = k.decide(json!({"proposal": pid, "decision": "approve"}));
    assert_ne!(s, 200, "{v}");
    assert_eq!(persons(&k.db, "Rejected By A Person"), json!(0));
    let p = k.proposal(pid);
    assert_eq!(p["items"][0]["status"], "rejected");
    assert_eq!(p["items"][0]["decided_by"], "operator");
}

/// A `batch` proposal still gathering writes is not approved whole: the
/// reviewer names the items seen, and a write that arrives after stays
/// pending.
#[test]
fn a_batch_approved_applies_only_the_items_the_reviewer_saw() {
    let k = Keyed::start("batch-grows", &[("subagent:scout", "batch")]);
    let (_, v) = k.kip(&k.scout, write_person("Seen One"));
    let pid = v["result"]["proposal"].as_i64().expect("staged");
    let (_, v) = k.kip(&k.scout, write_person("Seen Two"));
    assert_eq!(v["result"]["proposal"].as_i64(), Some(pid));
    // the reviewer looks: two items
    assert_eq!(k.proposal(pid)["items"].as_array().map(Vec::len), Some(2));
    // the sub-agent appends a DELETE meanwhile
    let (_, v) = k.kip(&k.scout, write_person("Arrived Later"));
    assert_eq!(v["result"]["proposal"].as_i64(), Some(pid), "{v}");
    // "approve all" is refused while it gathers, naming the items now
    let out = k.cli(&["proposals", "approve", &pid.to_string()]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("gathering") && said.contains("--items"),
        "{said}"
    );
    ok(&k.cli(&["proposals", "approve", &pid.to_string(), "--items", "1,2"]));
    assert_eq!(persons(&k.db, "Seen One"), json!(1));
    assert_eq!(persons(&k.db, "Seen Two"), json!(1));
    assert_eq!(persons(&k.db, "Arrived Later"), json!(0));
    let p = k.proposal(pid);
    assert_eq!(p["items"][2]["status"], "pending", "{p}");
    // and a proposal under review takes no new items
    let (_, v) = k.kip(&k.scout, write_person("After Review"));
    assert_ne!(v["result"]["proposal"].as_i64(), Some(pid), "{v}");
}

/// Under the `auto` policy a sub-agent's write is applied at once, and
/// audited as the sub-agent, not as `$system`.
#[test]
fn an_auto_applied_write_is_audited_as_its_subagent() {
    let k = Keyed::start("auto-actor", &[("subagent:scout", "auto")]);
    let (s, v) = k.kip(&k.scout, write_person("Auto Applied"));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["result"]["status"], "applied", "{v}");
    assert_eq!(persons(&k.db, "Auto Applied"), json!(1));
    let out = k.cli(&["audit", "--json", "--limit", "5"]);
    ok(&out);
    let entries: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let e = entries
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["command"].as_str().unwrap_or("").contains("UPSERT"))
        .expect("the write's entry")
        .clone();
    assert_eq!(e["actor"], "scout", "{e}");
    assert!(e["reason"].as_str().unwrap_or("").contains("policy"), "{e}");
}

/// A sub-agent's request that writes nothing runs read-only, and no agent
/// rewrites `$system`'s maintenance log.
#[test]
fn a_subagent_reads_read_only_and_nobody_rewrites_the_maintenance_log() {
    let k = Keyed::start("system-log", &[]);
    // a read with execute_kip: answered, as a read
    let (s, v) = k.kip(
        &k.scout,
        json!({"method": "execute_kip", "params": {"command": "SEARCH CONCEPT \"aspirin\" LIMIT 3"}}),
    );
    assert_eq!(s, 200, "{v}");
    for key in ["maintenance_log", "last_sleep_cycle", "core_directives"] {
        let (s, v) = k.kip(
            &k.main,
            json!({"method": "execute_kip", "params": {"command": format!("UPSERT {{ CONCEPT ?s {{ {{type: \"Person\", name: \"$system\"}} SET ATTRIBUTES {{ {key}: \"forged\" }} }} }}")}}),
        );
        assert_eq!((s, code(&v)), (403, "KIP_3004"), "{key}: {v}");
        let (s, v) = k.kip(
            &k.main,
            json!({"method": "execute_kip", "params": {"command": format!("UPDATE ?s SET ATTRIBUTES {{ {key}: \"forged\" }} WHERE {{ ?s {{type: \"Person\", name: \"$system\"}} }}")}}),
        );
        assert_eq!((s, code(&v)), (403, "KIP_3004"), "{key}: {v}");
    }
    drop(k.server);
    // the sleep cycle still writes its log
    ok(&somnus(&k.db, &["sleep", "--scope", "quick"]));
    let v = kip(
        &k.db,
        "FIND(?s.attributes.maintenance_log) WHERE { ?s {type: \"Person\", name: \"$system\"} }",
    );
    assert!(!v["result"].to_string().contains("forged"), "{v}");
}

/// What `somnus kip` and `audit show` print is JSON, whatever a value
/// holds, and inert on a terminal.
#[test]
fn the_cli_prints_json_whatever_the_values_hold() {
    let dir = tmp("json-out");
    let db = dir.join("m.db");
    ok(&somnus(&db, &["demo", "--no-console"]));
    let name = "evil\u{202e}txt.exe\u{85}\u{9b}[2J\u{7f}";
    let out = somnus(
        &db,
        &[
            "kip",
            &format!(
                "UPSERT {{ CONCEPT ?p {{ {{type: \"Person\", name: {}}} }} }}",
                json!(name)
            ),
        ],
    );
    ok(&out);
    let out = somnus(
        &db,
        &["kip", "FIND(?p.name) WHERE { ?p {type: \"Person\"} }"],
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        !text.contains('\u{202e}') && !text.contains('\u{9b}'),
        "{text}"
    );
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert!(
        v["result"]
            .as_array()
            .expect("names")
            .contains(&json!(name)),
        "{v}"
    );
    let entry = somnus(&db, &["audit", "--json", "--limit", "1"]);
    let entries: Value = serde_json::from_slice(&entry.stdout).expect("JSON");
    let id = entries[0]["id"].as_i64().expect("entry");
    let out = somnus(&db, &["audit", "show", &id.to_string()]);
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(!text.contains('\u{202e}'), "{text}");
    let v: Value = serde_json::from_str(&text).expect("audit show prints JSON");
    assert!(v.to_string().contains("txt.exe"), "{v}");
}

/// An import reads only the files inside the folder it is given: a
/// symbolic link to a file or a folder outside is reported and skipped.
#[test]
fn an_import_never_follows_a_link_out_of_its_folder() {
    let dir = tmp("import-links");
    let db = dir.join("m.db");
    let outside = dir.join("outside");
    std::fs::create_dir_all(outside.join("2026-01-02")).expect("dir");
    std::fs::write(outside.join("secret.md"), "SECRET_TOKEN=abc123\n").expect("write");
    std::fs::write(
        outside.join("2026-01-02/fact-x.md"),
        "---\nid: fact-x\ncategory: fact\n---\nOUTSIDE_FACT\n",
    )
    .expect("write");
    let store = dir.join("store");
    std::fs::create_dir_all(store.join("facts/2026-01-01")).expect("dir");
    std::fs::write(
        store.join("facts/2026-01-01/fact-ok.md"),
        "---\nid: fact-ok\ncategory: fact\n---\nThe user likes tea.\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(
        outside.join("secret.md"),
        store.join("facts/2026-01-01/fact-link.md"),
    )
    .expect("link");
    std::os::unix::fs::symlink(
        "/proc/self/environ",
        store.join("facts/2026-01-01/fact-env.md"),
    )
    .expect("link");
    std::os::unix::fs::symlink(outside.join("2026-01-02"), store.join("facts/2026-01-02"))
        .expect("link");
    let out = somnus(&db, &["import", "engram", store.to_str().expect("path")]);
    ok(&out);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(said.contains("fact-link.md: a symbolic link"), "{said}");
    assert!(said.contains("fact-env.md: a symbolic link"), "{said}");
    assert!(said.contains("2026-01-02/: a symbolic link"), "{said}");
    let dump = kip(&db, "FIND(?c) WHERE { ?c {type: \"Insight\"} }").to_string()
        + &kip(&db, "SEARCH CONCEPT \"SECRET_TOKEN\" LIMIT 5").to_string()
        + &kip(&db, "SEARCH CONCEPT \"OUTSIDE_FACT\" LIMIT 5").to_string();
    for leaked in ["SECRET_TOKEN=abc123", "OUTSIDE_FACT", "PATH="] {
        assert!(!dump.contains(leaked), "{leaked} leaked: {dump}");
    }
    assert!(
        kip(&db, "SEARCH CONCEPT \"tea\" LIMIT 5")
            .to_string()
            .contains("tea"),
        "the folder's own fact is imported"
    );
}

/// Reads by a list of ids look each id up, whatever the planner's
/// statistics say: inside a long write (an import) the statistics are
/// those of a smaller memory, and a scan of the whole table per read made
/// an import's time grow with the square of its files.
#[test]
fn reads_by_ids_look_each_one_up_even_with_stale_statistics() {
    let dir = tmp("ids-plan");
    let db = dir.join("m.db");
    let mut nx = somnus::Nexus::open(&db).expect("open");
    // statistics of a nearly empty memory
    nx.connection_for_checks()
        .expect("SQLite")
        .execute_batch("ANALYZE")
        .expect("analyze");
    let ok_all = nx
        .atomically("grow", |nx| {
            for i in 0..3_000 {
                let o = nx.kip(&format!(
                    "UPSERT {{ CONCEPT ?p {{ {{type: \"Person\", name: \"P{i}\"}} }} }}"
                ));
                assert!(!o.is_err(), "{i}");
            }
            let c = nx.connection_for_checks().expect("SQLite");
            let db = somnus::store::db::Db::Sqlite(c);
            for table in ["concepts", "propositions"] {
                let sql = format!(
                    "EXPLAIN QUERY PLAN SELECT id FROM {}",
                    somnus::store::from_ids(db, table, "id")
                );
                let plan: Vec<String> = c
                    .prepare(&sql)
                    .expect("plan")
                    .query_map(["[1,2,3]"], |r| r.get::<_, String>(3))
                    .expect("rows")
                    .filter_map(Result::ok)
                    .collect();
                assert!(
                    plan.iter().any(|p| p.contains("SEARCH"))
                        && !plan.iter().any(|p| p.starts_with(&format!("SCAN {table}"))),
                    "{table}: {plan:?}"
                );
            }
            Ok(())
        })
        .is_ok();
    assert!(ok_all);
}

/// A sub-agent's request that only reads runs read-only (a SEARCH of its
/// embeds nothing on the memory's account); an agent's, or one that
/// writes, is left as sent.
#[test]
fn a_subagents_reads_run_read_only() {
    use somnus::protocol::{Method, Request};
    use somnus::server::gate::read_only_for;
    use somnus::store::keys::{Identity, Role};
    let req = |cmd: &str| {
        Request::from_json(&json!({"method": "execute_kip", "params": {"command": cmd}}))
            .expect("request")
    };
    let scout = Identity {
        name: "scout".into(),
        role: Role::Subagent,
    };
    let main = Identity {
        name: "main".into(),
        role: Role::Agent,
    };
    let mut r = req("SEARCH CONCEPT \"tea\" LIMIT 5");
    assert!(read_only_for(&mut r, &scout));
    assert_eq!(r.method, Method::ExecuteKipReadonly);
    let mut r = req("SEARCH CONCEPT \"tea\" LIMIT 5");
    assert!(!read_only_for(&mut r, &main));
    assert_eq!(r.method, Method::ExecuteKip);
    let mut r = req("UPSERT { CONCEPT ?p { {type: \"Person\", name: \"X\"} } }");
    assert!(!read_only_for(&mut r, &scout));
    assert_eq!(r.method, Method::ExecuteKip);
}

/// Every connection to a SQLite memory bounds its write-ahead log: SQLite
/// trims it to `WAL_LIMIT_BYTES` whenever it restarts (the growth itself
/// is measured by `somnus bench --wal`).
#[test]
fn every_connection_bounds_the_write_ahead_log() {
    let dir = tmp("wal-limit");
    let db = dir.join("m.db");
    let nx = somnus::Nexus::open(&db).expect("open");
    let limit: i64 = nx
        .connection_for_checks()
        .expect("SQLite")
        .query_row("PRAGMA journal_size_limit", [], |r| r.get(0))
        .expect("pragma");
    assert_eq!(limit as u64, somnus::store::WAL_LIMIT_BYTES);
    assert!(somnus::store::wal_bound());
}

fn role(name: &str, role: &str) -> Value {
    json!({"method": "execute_kip", "params": {
        "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} SET ATTRIBUTES { role: :r } } }",
        "parameters": {"n": name, "r": role}, "reason": "a contact's role"}})
}

/// W4: two staged writes give one new Person two roles. Once the first is
/// approved, the second would overwrite what it made, which its preview
/// never showed: the approval refuses, names what changed, and shows the
/// item again with what it would do now; approving that applies it.
#[test]
fn a_second_write_to_what_the_first_created_is_shown_again() {
    let k = Keyed::start("w4", &[]);
    let (s, v) = k.kip(&k.scout, role("Ines Duarte", "vendor"));
    assert_eq!(s, 200, "{v}");
    let first = v["result"]["proposal"].as_i64().expect("staged");
    let (s, v) = k.kip(&k.scout, role("Ines Duarte", "client"));
    assert_eq!(s, 200, "{v}");
    let second = v["result"]["proposal"].as_i64().expect("staged");
    let before = k.proposal(second);
    assert!(
        before["items"][0]["conflicts"][0]
            .as_str()
            .unwrap_or("")
            .contains(&format!("#{first} item 1")),
        "{before}"
    );
    ok(&k.cli(&["proposals", "approve", &first.to_string()]));
    let out = k.cli(&["proposals", "approve", &second.to_string()]);
    assert_eq!(out.status.code(), Some(1), "refused");
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        said.contains(&format!(
            "Person: Ines Duarte was created by operator (proposal #{first} item 1, from scout)"
        )),
        "{said}"
    );
    assert!(said.contains("approve again"), "{said}");
    assert_eq!(
        role_of(&k.db, "Ines Duarte"),
        json!("vendor"),
        "nothing applied"
    );
    // shown again: what it would do now, and no mark against the decided
    // item, only against what the memory holds
    let p = k.proposal(second);
    let it = &p["items"][0];
    assert_eq!(it["status"], "stale", "{it}");
    assert_eq!(it["title"], "update Person: Ines Duarte", "{it}");
    assert_eq!(it["preview"][0]["op"], "update", "{it}");
    assert_eq!(
        it["preview"][0]["before"]["attributes"]["role"], "vendor",
        "{it}"
    );
    let marks = it["conflicts"].to_string();
    assert!(!marks.contains(&format!("#{first} item")), "{marks}");
    assert!(marks.contains("changes what the memory holds"), "{marks}");
    assert!(
        it["reason"]
            .as_str()
            .unwrap_or("")
            .contains("created by operator"),
        "{it}"
    );
    // approving what is shown now applies it
    ok(&k.cli(&["proposals", "approve", &second.to_string()]));
    assert_eq!(role_of(&k.db, "Ines Duarte"), json!("client"));
}

/// The same over HTTP: an agent key's approval of an item the memory moved
/// under is answered 409 with what the item would do now; approving
/// again applies that.
#[test]
fn an_agent_keys_stale_approval_is_409_with_the_new_preview() {
    let k = Keyed::start("w4http", &[("agents_decide", "auto")]);
    let (_, v) = k.kip(&k.scout, role("Ines Duarte", "vendor"));
    let first = v["result"]["proposal"].as_i64().expect("staged");
    let (_, v) = k.kip(&k.scout, role("Ines Duarte", "client"));
    let second = v["result"]["proposal"].as_i64().expect("staged");
    let (s, v) = k.decide(json!({"proposal": first, "decision": "approve"}));
    assert_eq!(s, 200, "{v}");
    let (s, v) = k.decide(json!({"proposal": second, "decision": "approve"}));
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], "KIP_3005", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("Person: Ines Duarte was created by"),
        "{v}"
    );
    assert_eq!(v["result"]["items"][0]["preview"][0]["op"], "update", "{v}");
    assert_eq!(
        v["result"]["items"][0]["preview"][0]["before"]["attributes"]["role"], "vendor",
        "{v}"
    );
    assert_eq!(role_of(&k.db, "Ines Duarte"), json!("vendor"));
    let (s, v) = k.decide(json!({"proposal": second, "decision": "approve"}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(role_of(&k.db, "Ines Duarte"), json!("client"));
}

fn role_of(db: &std::path::Path, name: &str) -> Value {
    kip(
        db,
        &format!(r#"FIND(?p.attributes.role) WHERE {{ ?p {{type: "Person", name: "{name}"}} }}"#),
    )["result"][0]
        .clone()
}

/// W3: an item edited before approval is recorded as applied: `proposals
/// show` gives the edited title, commands and preview, and what was
/// proposed beside them.
#[test]
fn an_edited_item_is_recorded_as_it_was_applied() {
    let dir = tmp("w3");
    let db = dir.join("m.db");
    ok(&somnus(&db, &["demo", "--no-console"]));
    ok(&somnus(
        &db,
        &["sleep", "--quiet", "--now", "2026-11-20T03:00:00Z"],
    ));
    let show = |db: &std::path::Path| {
        let out = somnus(db, &["proposals", "show", "1", "--json"]);
        ok(&out);
        serde_json::from_slice::<Value>(&out.stdout).expect("JSON")
    };
    let p = show(&db);
    let zig = p["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| {
            i["title"]
                .as_str()
                .unwrap_or("")
                .contains("File Topic \"Zig\" under Programming")
        })
        .expect("the Zig item")
        .clone();
    let seq = zig["item"].as_i64().expect("seq");
    let text = zig["commands"][0].as_str().expect("command").replace(
        r#"{type: "Domain", name: :domain}"#,
        r#"{type: "Domain", name: "Work"}"#,
    );
    assert!(text.contains("\"Work\""), "{text}");
    let file = dir.join("zig.kip");
    std::fs::write(&file, &text).expect("write");
    let edit = format!("{seq}={}", file.display());
    ok(&somnus(
        &db,
        &[
            "proposals",
            "approve",
            "1",
            "--items",
            &seq.to_string(),
            "--edit",
            &edit,
        ],
    ));
    let p = show(&db);
    let it = p["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["item"] == seq)
        .expect("the item")
        .clone();
    assert_eq!(it["status"], "applied");
    let title = it["title"].as_str().unwrap_or("");
    assert!(
        title.contains("Domain: Work") && !title.contains("Programming"),
        "{it}"
    );
    assert!(
        it["commands"][0]
            .as_str()
            .unwrap_or("")
            .contains("\"Work\""),
        "{it}"
    );
    let preview = it["preview"].to_string();
    assert!(
        preview.contains("Work") && !preview.contains("Programming"),
        "{preview}"
    );
    assert!(
        it["proposed"]["title"]
            .as_str()
            .unwrap_or("")
            .contains("under Programming"),
        "{it}"
    );
    let out = somnus(&db, &["proposals", "show", "1"]);
    ok(&out);
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(
        human.contains("proposed as: File Topic \"Zig\" under Programming"),
        "{human}"
    );
}

/// `--class` approves or rejects the items of one class and no other; a
/// class the proposal has no undecided item of is refused, naming those
/// it has, and it goes with `--items` in no command.
#[test]
fn a_class_of_items_is_approved_or_rejected_at_once() {
    let db = tmp("by-class").join("memory.db");
    let mut nx = somnus::Nexus::open(&db).expect("open");
    for (name, text) in [
        (
            "2026-02-13 Le Nez — TikTok видео",
            "Видео для TikTok, Ана смонтировала.",
        ),
        (
            "2026-02-14 Le Nez — iOS приложение",
            "Экран каталога; Ана проверила сборку.",
        ),
        (
            "2026-02-16 Le Nez — Алгоритм подбора",
            "Новый алгоритм подбора ароматов.",
        ),
    ] {
        note_in(&mut nx, name, text, "Unsorted");
    }
    assert!(matches!(
        nx.kip(r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Ана"} SET ATTRIBUTES { role: "editor" } } }"#),
        somnus::protocol::Outcome::Ok { .. }
    ));
    let items = full_cycle(&mut nx, "2026-11-26T09:00:00Z");
    drop(nx);
    let pid = items.first().expect("a proposal").proposal.to_string();
    let of = |class: &str| items.iter().filter(|i| i.class == class).count();
    assert_eq!(
        of("connection"),
        2,
        "{:?}",
        items.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
    assert!(of("domain") >= 1);
    // a class with nothing undecided: refused, nothing changes
    let (done, said) = run(&db, &["proposals", "approve", &pid, "--class", "merge"]);
    assert!(!done);
    assert!(
        said.contains("no pending item of class `merge`") && said.contains("connection"),
        "{said}"
    );
    let (done, said) = run(
        &db,
        &[
            "proposals",
            "approve",
            &pid,
            "--class",
            "connection",
            "--items",
            "1",
        ],
    );
    assert!(!done, "{said}");
    ok(&somnus(
        &db,
        &["proposals", "approve", &pid, "--class", "connection"],
    ));
    ok(&somnus(
        &db,
        &[
            "proposals",
            "reject",
            &pid,
            "--class",
            "domain",
            "--reason",
            "not a domain",
        ],
    ));
    let out = somnus(&db, &["proposals", "show", &pid, "--json"]);
    ok(&out);
    let p: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for it in p["items"].as_array().expect("items") {
        let want = match it["class"].as_str() {
            Some("connection") => "applied",
            Some("domain") => "rejected",
            _ => "pending",
        };
        assert_eq!(it["status"], want, "{it}");
    }
    let out = somnus(
        &db,
        &[
            "kip",
            r#"FIND(COUNT(?e)) WHERE { (?e, "mentions", {type: "Person", name: "Ана"}) }"#,
        ],
    );
    ok(&out);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["result"], json!(2), "{v}");
}
