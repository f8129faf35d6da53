//! The HTTP server over real loopback sockets: success, every error class
//! with its status, auth, body limits, malformed JSON, caller identity.

use serde_json::{Value, json};
use somnus::server::{ServerConfig, check_bind, serve};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

fn start(name: &str, api_key: Option<&str>, timeout: Duration) -> (SocketAddr, PathBuf) {
    let dir = std::env::temp_dir().join(format!("somnus-http-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let mut cfg = ServerConfig::new(db.clone(), "127.0.0.1:0".parse().expect("addr"));
    cfg.api_key = api_key.map(str::to_string);
    cfg.max_body = 64 * 1024;
    cfg.readers = 2;
    cfg.timeout = timeout;
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("rt");
        rt.block_on(async move {
            if let Err(e) = serve(cfg, Some(tx)).await {
                panic!("server: {e}");
            }
        });
    });
    let addr = rx.blocking_recv().expect("server ready");
    (addr, db)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

fn post(addr: SocketAddr, body: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut req = agent()
        .post(&format!("http://{addr}/kip"))
        .header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut resp = req.send(body).expect("request");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn call(addr: SocketAddr, method: &str, command: &str) -> (u16, Value) {
    post(
        addr,
        &json!({ "method": method, "params": { "command": command } }).to_string(),
        &[],
    )
}

#[test]
fn statuses_follow_the_error_class() {
    let (addr, _) = start("status", None, Duration::from_millis(150));
    let mut info = agent()
        .get(&format!("http://{addr}/"))
        .call()
        .expect("info");
    assert_eq!(info.status().as_u16(), 200);
    let info: Value = serde_json::from_str(&info.body_mut().read_to_string().unwrap_or_default())
        .unwrap_or(Value::Null);
    assert_eq!(info["name"], "somnus");

    let (s, v) = call(
        addr,
        "execute_kip",
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Drug"} } CONCEPT ?d { {type: "Drug", name: "Aspirin"} } }"#,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["result"]["blocks"], 1);
    let (s, v) = call(
        addr,
        "execute_kip_readonly",
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!((s, v["result"].clone()), (200, json!(["Aspirin"])));

    let cases = [
        ("execute_kip", "FIND(?d WHERE {", 400, "KIP_1001"),
        (
            "execute_kip",
            r#"UPSERT { CONCEPT ?x { {type: "Undefined", name: "x"} } }"#,
            400,
            "KIP_2001",
        ),
        (
            "execute_kip",
            r#"FIND(?zz) WHERE { ?d {type: "Drug"} }"#,
            400,
            "KIP_3001",
        ),
        (
            "execute_kip",
            r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Missing"} }"#,
            404,
            "KIP_3002",
        ),
        (
            "execute_kip",
            r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "$ConceptType"} ?b {type: "Drug", name: "Aspirin"} }"#,
            409,
            "KIP_3003",
        ),
        (
            "execute_kip",
            r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} EXPECT VERSION 0 } }"#,
            409,
            "KIP_3005",
        ),
        (
            "execute_kip",
            r#"DELETE CONCEPT ?s DETACH WHERE { ?s {type: "Person", name: "$self"} }"#,
            403,
            "KIP_3004",
        ),
        (
            "execute_kip_readonly",
            r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Ibuprofen"} } }"#,
            403,
            "KIP_3004",
        ),
        (
            "execute_kip",
            r#"FIND(?s, ?o) WHERE { (?s, ?p, ?o) }"#,
            400,
            "KIP_4002",
        ),
        (
            "execute_kip",
            r#"FIND(COUNT(?a)) WHERE { ?a {type: "$ConceptType"} ?b {type: "$ConceptType"} ?c {type: "$ConceptType"} ?d {type: "$ConceptType"} ?e {type: "$ConceptType"} ?f {type: "$ConceptType"} ?g {type: "$ConceptType"} FILTER(REGEX(?a.name, "^[A-Z]") && ?a.name != ?b.name && ?b.name != ?c.name && ?c.name != ?d.name && ?d.name != ?e.name && ?e.name != ?f.name && ?f.name != ?g.name) }"#,
            408,
            "KIP_4001",
        ),
    ];
    for (method, cmd, status, code) in cases {
        let (s, v) = call(addr, method, cmd);
        assert_eq!(
            (s, v["error"]["code"].as_str().unwrap_or("")),
            (status, code),
            "{cmd}: {v}"
        );
    }
    // a batch answers 200 with errors inline
    let (s, v) = post(addr, &json!({ "method": "execute_kip", "params": { "commands": ["DESCRIBE PRIMER", "FIND(x"] } }).to_string(), &[]);
    assert_eq!(s, 200);
    assert_eq!(v["result"][1]["error"]["code"], "KIP_1001");
}

#[test]
fn bad_bodies_get_clear_errors_and_the_server_keeps_serving() {
    let (addr, _) = start("bodies", None, Duration::from_secs(30));
    let (s, v) = post(addr, "{not json", &[]);
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("KIP_1001")));
    let (s, v) = post(addr, r#"{"method": "drop_tables", "params": {}}"#, &[]);
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("KIP_1001")));
    let (s, v) = post(
        addr,
        r#"{"method": "execute_kip", "params": {"command": "DESCRIBE PRIMER", "extra": 1}}"#,
        &[],
    );
    assert_eq!(s, 400, "{v}");
    let big = json!({ "method": "execute_kip", "params": { "command": format!("FIND(?x) WHERE {{ ?x {{name: \"{}\"}} }}", "a".repeat(100_000)) } }).to_string();
    let (s, v) = post(addr, &big, &[]);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (413, Some("KIP_4002")),
        "{v}"
    );
    // a KIP 2.0 request is named, with the version somnus speaks
    for body in [
        r#"{"kip": "2.0", "operations": [{"op": "find", "match": {"type": "Person"}}]}"#,
        r#"{"operations": []}"#,
        r#"{"method": "execute_kip", "params": {"kip": "2.0", "operations": []}}"#,
    ] {
        let (s, v) = post(addr, body, &[]);
        let msg = v["error"]["message"].as_str().unwrap_or("");
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (400, Some("KIP_1001")),
            "{v}"
        );
        assert!(msg.contains("somnus speaks KIP v1.0-RC11"), "{v}");
        assert!(
            v["error"]["hint"]
                .as_str()
                .unwrap_or("")
                .contains("execute_kip"),
            "{v}"
        );
    }
    // a request that names RC11 is served
    let (s, v) = post(
        addr,
        r#"{"kip": "1.0-RC11", "method": "execute_kip", "params": {"command": "DESCRIBE PRIMER"}}"#,
        &[],
    );
    assert_eq!(s, 200, "{v}");
    let (s, _) = call(addr, "execute_kip", "DESCRIBE PRIMER");
    assert_eq!(s, 200);
}

#[test]
fn the_api_key_is_checked_before_the_body() {
    let (addr, _) = start("auth", Some("s3cret"), Duration::from_secs(30));
    let body =
        json!({ "method": "execute_kip", "params": { "command": "DESCRIBE DOMAINS" } }).to_string();
    assert_eq!(post(addr, &body, &[]).0, 401);
    assert_eq!(
        post(addr, &body, &[("authorization", "Bearer wrong")]).0,
        401
    );
    // even a body too large or not JSON is 401 first
    assert_eq!(post(addr, &"x".repeat(30_000), &[]).0, 401);
    let (s, v) = post(addr, &body, &[("authorization", "Bearer s3cret")]);
    assert_eq!(s, 200, "{v}");
    assert!(check_bind(&"0.0.0.0:8080".parse().expect("addr"), &None).is_err());
    assert!(check_bind(&"0.0.0.0:8080".parse().expect("addr"), &Some("k".into())).is_ok());
    assert!(check_bind(&"[::1]:8080".parse().expect("addr"), &None).is_ok());
}

#[test]
fn every_write_is_attributed_to_its_caller() {
    let (addr, db) = start("actor", None, Duration::from_secs(30));
    let body = json!({ "method": "execute_kip", "params": { "command": r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"# } }).to_string();
    let (s, _) = post(addr, &body, &[("x-somnus-actor", "agent:alpha")]);
    assert_eq!(s, 200);
    let nx = somnus::Nexus::open(&db).expect("open");
    let e = nx
        .audit_list(&somnus::audit::Filter {
            limit: 1,
            ..Default::default()
        })
        .expect("audit")
        .remove(0);
    assert_eq!(e.actor, "agent:alpha");
    assert!(e.trigger.starts_with("http 127.0.0.1:"), "{}", e.trigger);
}

/// A memory with the demo in it, a sleep proposal, and keys for a reader,
/// an agent and a sub-agent; the server starts on it.
fn keyed_server(name: &str) -> (SocketAddr, PathBuf, [String; 3]) {
    let dir = std::env::temp_dir().join(format!("somnus-http-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let mut nx = somnus::demo::create(&db).expect("demo");
    let mut r = somnus::sleep::Heuristic;
    somnus::sleep::run(
        &mut nx,
        &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
        &mut r,
        None,
        None,
    )
    .expect("cycle");
    use somnus::store::keys::{Role, add};
    let c = nx.connection_for_checks().expect("a SQLite memory");
    let keys = [
        add(c, "ledger", Role::Reader, "test").expect("key"),
        add(c, "main", Role::Agent, "test").expect("key"),
        add(c, "scout", Role::Subagent, "test").expect("key"),
    ];
    drop(nx);
    let mut cfg = ServerConfig::new(db.clone(), "127.0.0.1:0".parse().expect("addr"));
    cfg.readers = 2;
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("rt");
        rt.block_on(async move {
            if let Err(e) = serve(cfg, Some(tx)).await {
                panic!("server: {e}");
            }
        });
    });
    (rx.blocking_recv().expect("ready"), db, keys)
}

fn as_key(addr: SocketAddr, key: &str, body: Value, extra: &[(&str, &str)]) -> (u16, Value) {
    let auth = format!("Bearer {key}");
    let mut h = vec![("authorization", auth.as_str())];
    h.extend_from_slice(extra);
    post(addr, &body.to_string(), &h)
}

fn decide(addr: SocketAddr, key: &str, body: Value) -> (u16, Value) {
    let mut resp = agent()
        .post(&format!("http://{addr}/proposals"))
        .header("content-type", "application/json")
        .header("authorization", &format!("Bearer {key}"))
        .send(body.to_string())
        .expect("request");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[test]
fn keys_give_callers_names_and_roles_and_a_subagent_proposes() {
    let (addr, db, [reader, main, scout]) = keyed_server("keys");
    let upsert = |name: &str| {
        json!({"method": "execute_kip", "params": {
            "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} SET ATTRIBUTES { role: \"vendor\" } SET PROPOSITIONS { (\"works_on\", {type: \"Project\", name: \"Atlas\"}) } } }",
            "parameters": {"n": name},
            "reason": "met at the Atlas kickoff"}})
    };
    let count = |name: &str| {
        let (_, v) = as_key(
            addr,
            &reader,
            json!({"method": "execute_kip_readonly", "params": {"command": "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} FILTER(?p.name == :n) }", "parameters": {"n": name}}}),
            &[],
        );
        v["result"].clone()
    };
    // no key, a wrong key: 401
    assert_eq!(post(addr, &upsert("X").to_string(), &[]).0, 401);
    assert_eq!(as_key(addr, "smk_nope", upsert("X"), &[]).0, 401);
    // the reader reads and cannot write
    let (s, v) = as_key(addr, &reader, upsert("Reader Person"), &[]);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("KIP_3004")),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("reader"),
        "{v}"
    );
    assert_eq!(count("Reader Person"), json!(0));
    // the agent writes, as itself; a header only adds a sub-label
    let (s, v) = as_key(
        addr,
        &main,
        upsert("Agent Person"),
        &[("x-somnus-actor", "run-7")],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(count("Agent Person"), json!(1));
    // a reserved name is refused, even as a label
    let (s, v) = as_key(
        addr,
        &main,
        upsert("Other"),
        &[("x-somnus-actor", "$system")],
    );
    assert_eq!(s, 403, "{v}");
    let nx = somnus::Nexus::open(&db).expect("open");
    let last = nx
        .audit_list(&somnus::audit::Filter {
            limit: 1,
            ..Default::default()
        })
        .expect("audit")
        .remove(0);
    assert_eq!(last.actor, "main/run-7");
    drop(nx);
    // the sub-agent's write changes nothing: it is staged
    let (s, v) = as_key(addr, &scout, upsert("Scout Person"), &[]);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["result"]["staged"], json!(true), "{v}");
    let pid = v["result"]["proposal"].as_i64().expect("proposal");
    assert_eq!(count("Scout Person"), json!(0));
    // its reads see committed memory only
    let (_, v) = as_key(
        addr,
        &scout,
        json!({"method": "execute_kip", "params": {"command": "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} FILTER(?p.name == \"Scout Person\") }"}}),
        &[],
    );
    assert_eq!(v["result"], json!(0), "{v}");
    // a write that would fail fails now
    let (s, v) = as_key(
        addr,
        &scout,
        json!({"method": "execute_kip", "params": {"command": "UPSERT { CONCEPT ?p { {type: \"Nope\", name: \"X\"} } }"}}),
        &[],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("KIP_2001")),
        "{v}"
    );
    // the agent may not decide until the memory's policy allows it
    let (s, v) = decide(addr, &main, json!({"proposal": pid, "decision": "approve"}));
    assert_eq!(s, 403, "{v}");
    {
        let nx = somnus::Nexus::open(&db).expect("open");
        somnus::review::proposals::set_policy(&nx, "agents_decide", "auto", "test")
            .expect("policy");
    }
    // the sleep cycle's proposal (#1) is never a key's to decide
    let (s, v) = decide(addr, &main, json!({"proposal": 1, "decision": "approve"}));
    assert_eq!(s, 403, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("sleep run"),
        "{v}"
    );
    // nor its own, nor a reader's or sub-agent's decision
    let (s, _) = decide(
        addr,
        &scout,
        json!({"proposal": pid, "decision": "approve"}),
    );
    assert_eq!(s, 403);
    let (s, _) = decide(
        addr,
        &reader,
        json!({"proposal": pid, "decision": "approve"}),
    );
    assert_eq!(s, 403);
    // the agent approves: exactly what was proposed is applied
    let (s, v) = decide(
        addr,
        &main,
        json!({"proposal": pid, "decision": "approve", "reason": "checked"}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["result"]["applied"], json!([1]), "{v}");
    assert_eq!(count("Scout Person"), json!(1));
    let (_, v) = as_key(
        addr,
        &reader,
        json!({"method": "execute_kip_readonly", "params": {"command": "FIND(?p.attributes.role, ?o.name) WHERE { ?p {type: \"Person\", name: \"Scout Person\"} (?p, \"works_on\", ?o) }"}}),
        &[],
    );
    assert_eq!(v["result"], json!([["vendor"], ["Atlas"]]), "{v}");
    // the proposal names its source, the audit trail the approver
    let nx = somnus::Nexus::open(&db).expect("open");
    let p = somnus::review::proposals::get(&nx, pid)
        .expect("get")
        .expect("proposal");
    assert_eq!(p.actor, "scout");
    assert_eq!(p.items[0].rationale, "met at the Atlas kickoff");
    assert_eq!(p.items[0].decided_by.as_deref(), Some("main"));
    let last = nx
        .audit_list(&somnus::audit::Filter {
            limit: 1,
            ..Default::default()
        })
        .expect("audit")
        .remove(0);
    assert_eq!(last.actor, "main");
    let why = last.reason.clone().unwrap_or_default();
    assert!(
        why.contains("met at the Atlas kickoff") && why.contains("proposed by `scout`"),
        "{why}"
    );
}

fn end_session(addr: SocketAddr, key: &str, body: Value) -> (u16, Value) {
    let mut resp = agent()
        .post(&format!("http://{addr}/session/end"))
        .header("content-type", "application/json")
        .header("authorization", &format!("Bearer {key}"))
        .send(body.to_string())
        .expect("request");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// `POST /session/end`: an agent's session ended, recorded under its key's
/// name for the maintainer's post-session cycle; a reader may not, and a
/// session id that is not a string is refused.
#[test]
fn an_agent_ends_its_session_over_http() {
    let (addr, db, [reader, main, _scout]) = keyed_server("session");
    let (s, v) = end_session(addr, &main, json!({"session": "conv-42"}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["result"]["actor"], "main", "{v}");
    assert_eq!(v["result"]["session"], "conv-42", "{v}");
    let (s, v) = end_session(addr, &reader, json!({}));
    assert_eq!(s, 403, "{v}");
    let (s, v) = end_session(addr, &main, json!({"session": 7}));
    assert_eq!(s, 400, "{v}");
    let (s, _) = end_session(addr, "not-a-key", json!({}));
    assert_eq!(s, 401);
    let nx = somnus::Nexus::open(&db).expect("open");
    let end = somnus::sleep::schedule::last_session_end(&nx).expect("recorded");
    assert_eq!(
        (end.actor.as_str(), end.session.as_deref()),
        ("main", Some("conv-42"))
    );
}
