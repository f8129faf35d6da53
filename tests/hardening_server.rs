//! Hardening of the servers, tried as an attacker would: the release
//! binary serving HTTP and MCP on loopback. Every test here failed before
//! the fix it guards.

mod common;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ------------------------------------------------------------------ 1

#[test]
fn deep_and_long_commands_get_an_error_naming_the_limit() {
    let dir = tmp("deep");
    let db = dir.join("m.db");
    let mut s = Server::start(&db, &["--max-body", "4000000"]);
    let not = format!("{}(?c.name == \"x\")", "!".repeat(5000));
    let or = vec!["?c.name == \"x\""; 5000].join(" || ");
    let and = vec!["?c.name != \"x\""; 100_000].join(" && ");
    let parens = format!("{}?c.name == \"x\"{}", "(".repeat(500), ")".repeat(500));
    let optionals = format!(
        "FIND(?c) WHERE {{ ?c {{type:\"Domain\"}} {} }}",
        "OPTIONAL { ?c {type:\"Domain\"} } ".repeat(3000)
    );
    let nots = format!(
        "FIND(?c) WHERE {{ ?c {{type:\"Domain\"}} {} }}",
        "NOT { ".repeat(20) + "?c {name:\"x\"}" + &" }".repeat(20)
    );
    for (what, method, cmd, want, names) in [
        (
            "5,000 negations",
            "execute_kip_readonly",
            filter(&not),
            "KIP_1001",
            "256",
        ),
        (
            "5,000-term ||",
            "execute_kip",
            filter(&or),
            "KIP_1001",
            "256",
        ),
        (
            "100,000-term &&",
            "execute_kip",
            filter(&and),
            "KIP_1001",
            "256",
        ),
        (
            "500 nested brackets",
            "execute_kip",
            filter(&parens),
            "KIP_1001",
            "64",
        ),
        (
            "3,000 OPTIONALs",
            "execute_kip",
            optionals,
            "KIP_4002",
            "64",
        ),
        ("groups 20 deep", "execute_kip", nots, "KIP_4002", "8"),
    ] {
        let t = Instant::now();
        let (status, v) = s.call(method, &cmd);
        assert_eq!(code(&v), want, "{what}: {v}");
        assert_eq!(status, 400, "{what}");
        let msg = v["error"]["message"].as_str().unwrap_or("");
        assert!(
            msg.contains(names) && msg.contains("limit"),
            "{what}: {msg}"
        );
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{what} took {:?}",
            t.elapsed()
        );
        assert!(s.alive(), "the server died on {what}");
    }
    // parameters nested past JSON's depth limit, and an oversized batch
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    let body = format!(
        r#"{{"method":"execute_kip","params":{{"command":"FIND(?c) WHERE {{ ?c {{type: :t}} }}","parameters":{{"t":{deep}}}}}}}"#
    );
    let (status, v) = s.post(&body);
    assert_eq!((status, code(&v)), (400, "KIP_1001"), "{v}");
    let batch = json!({"method": "execute_kip_readonly", "params": {"commands": vec!["DESCRIBE DOMAINS"; 1001]}});
    let (status, v) = s.post(&batch.to_string());
    assert_eq!((status, code(&v)), (400, "KIP_4002"), "{v}");
    // still up, still right
    let (status, v) = s.call("execute_kip_readonly", "DESCRIBE PRIMER");
    assert_eq!(status, 200, "{v}");
    assert!(s.alive());
    // the CLI takes the same limits on its own thread
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .args(["kip", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("kip -");
    let text = filter(&vec!["?c.name == \"x\""; 100_000].join(" || "));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("kip -");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(code(&v), "KIP_1001", "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 4, 7

/// A memory with 300 people, so a four-way cross join runs until the
/// time limit.
fn crowded(db: &Path) {
    let people: String = (0..300)
        .map(|i| format!("CONCEPT ?p{i} {{ {{type: \"Person\", name: \"p{i}\"}} }} "))
        .collect();
    let v = kip(db, &format!("UPSERT {{ {people} }}"));
    assert!(v.get("error").is_none(), "{v}");
}

/// Ordered four-way walks that can never close (a < b < c < d < a):
/// hundreds of millions of steps.
const SLOW: &str = r#"WHERE { ?a {type: "Person"} ?b {type: "Person"} ?c {type: "Person"} ?d {type: "Person"} FILTER(?a.name < ?b.name && ?b.name < ?c.name && ?c.name < ?d.name && ?d.name < ?a.name) }"#;

#[test]
fn a_long_write_stalls_neither_info_nor_reads() {
    let dir = tmp("stall");
    let db = dir.join("m.db");
    crowded(&db);
    let s = Server::start(&db, &["--timeout-ms", "3000"]);
    let addr = s.addr;
    let writer = std::thread::spawn(move || {
        post_to(
            addr,
            &json!({"method": "execute_kip", "params": {"command": format!("UPDATE ?a SET ATTRIBUTES {{x: 1}} {SLOW}")}})
                .to_string(),
        )
    });
    std::thread::sleep(Duration::from_millis(400));
    for _ in 0..3 {
        let t = Instant::now();
        let resp = agent()
            .get(&format!("http://{addr}/"))
            .call()
            .expect("GET /");
        assert_eq!(resp.status().as_u16(), 200);
        assert!(
            t.elapsed() < Duration::from_millis(1000),
            "GET / waited {:?}",
            t.elapsed()
        );
        let t = Instant::now();
        let (status, _) = s.call(
            "execute_kip_readonly",
            r#"FIND(?p.name) WHERE { ?p {type: "Person", name: "p7"} }"#,
        );
        assert_eq!(status, 200);
        assert!(
            t.elapsed() < Duration::from_millis(1000),
            "a read waited {:?}",
            t.elapsed()
        );
    }
    let (status, v) = writer.join().expect("writer");
    assert_eq!((status, code(&v)), (408, "KIP_4001"), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_slow_read_leaves_the_other_readers_free() {
    let dir = tmp("readers");
    let db = dir.join("m.db");
    crowded(&db);
    let s = Server::start(&db, &["--timeout-ms", "3000", "--readers", "2"]);
    let addr = s.addr;
    let slow = std::thread::spawn(move || {
        post_to(
            addr,
            &json!({"method": "execute_kip_readonly", "params": {"command": format!("FIND(?a.name) {SLOW}")}})
                .to_string(),
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut worst = Duration::ZERO;
    for i in 0..10 {
        let t = Instant::now();
        let (status, _) = s.call(
            "execute_kip_readonly",
            &format!(r#"FIND(?p.name) WHERE {{ ?p {{type: "Person", name: "p{i}"}} }}"#),
        );
        assert_eq!(status, 200);
        worst = worst.max(t.elapsed());
    }
    assert!(
        worst < Duration::from_millis(800),
        "a point read waited {worst:?}"
    );
    let (_, v) = slow.join().expect("slow");
    assert_eq!(code(&v), "KIP_4001", "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 5

/// An embeddings provider that answers after `delay`.
fn slow_provider(delay: Duration) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().take(50) {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let _ = stream.read(&mut buf);
                std::thread::sleep(delay);
                let body = r#"{"data":[{"index":0,"embedding":[1.0,0.0]}]}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    format!("http://{addr}/v1")
}

#[test]
fn a_read_only_search_writes_nothing_and_keeps_its_time_limit() {
    let dir = tmp("embed");
    let db = dir.join("m.db");
    crowded(&db);
    let url = slow_provider(Duration::from_secs(3));
    let s = Server::start_with(
        &db,
        &["--timeout-ms", "2000"],
        &[("SOMNUS_EMBED_URL", &url)],
    );
    let addr = s.addr;
    let t = Instant::now();
    let (status, v) = post_to(
        addr,
        &json!({"method": "execute_kip_readonly", "params": {"command": r#"SEARCH CONCEPT "p1" MODE "semantic""#}})
            .to_string(),
    );
    let took = t.elapsed();
    drop(s);
    assert_eq!((status, code(&v)), (408, "KIP_4001"), "{v}");
    assert!(took < Duration::from_millis(3500), "took {took:?}");
    let nx = somnus::Nexus::open(&db).expect("open");
    let rows: i64 = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("SELECT COUNT(*) FROM embeddings", [], |r| r.get(0))
        .expect("count");
    assert_eq!(rows, 0, "a read-only request wrote embeddings");
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 6

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn slow_clients_are_cut_off_and_the_server_stops_on_a_signal() {
    let dir = tmp("slowloris");
    let db = dir.join("m.db");
    let mut s = Server::start(
        &db,
        &["--header-timeout-ms", "700", "--max-connections", "16"],
    );
    let base = open_fds(s.child.id());
    let mut half: Vec<TcpStream> = (0..60)
        .map(|_| {
            let mut c = TcpStream::connect(s.addr).expect("connect");
            let _ = c.write_all(b"POST /kip HTTP/1.1\r\nHost: x\r\n");
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let fds = open_fds(s.child.id());
    assert!(
        fds <= base + 16 + 2,
        "{fds} descriptors with a cap of 16 (base {base})"
    );
    // a real client still gets through while the slow ones hold every slot
    let t = Instant::now();
    let (status, _) = s.call("execute_kip_readonly", "DESCRIBE DOMAINS");
    assert_eq!(status, 200);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "waited {:?}",
        t.elapsed()
    );
    // the slow ones are closed by the server
    std::thread::sleep(Duration::from_millis(1500));
    let mut closed = 0;
    for c in &mut half {
        c.set_read_timeout(Some(Duration::from_millis(50))).ok();
        let mut b = [0u8; 64];
        match c.read(&mut b) {
            Ok(_) => closed += 1,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => closed += 1,
        }
    }
    assert!(closed >= 16, "only {closed} slow connections were closed");
    // a stop signal with slow clients connected ends the process promptly
    let _more: Vec<TcpStream> = (0..10)
        .map(|_| {
            let mut c = TcpStream::connect(s.addr).expect("connect");
            let _ = c.write_all(b"POST /kip HTTP/1.1\r\n");
            c
        })
        .collect();
    let t = Instant::now();
    s.signal("INT");
    loop {
        if let Ok(Some(st)) = s.child.try_wait() {
            assert!(st.success(), "{st:?}");
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "still running after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!s.alive());
    let mut s = Server::start(&db, &[]);
    s.signal("TERM");
    let t = Instant::now();
    while s.alive() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 14

#[test]
fn mcp_answers_every_line_and_a_slow_call_holds_up_nothing() {
    let dir = tmp("mcp");
    let db = dir.join("m.db");
    kip(&db, "DESCRIBE PRIMER");
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .arg("mcp")
        .args(["--maintenance", "off"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mcp");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |b: &[u8]| {
        input.write_all(b).expect("write");
        input.write_all(b"\n").expect("write");
        input.flush().expect("flush");
    };
    let mut recv = || {
        let mut l = String::new();
        output.read_line(&mut l).expect("read");
        serde_json::from_str::<Value>(&l).unwrap_or_else(|_| panic!("not JSON: {l:?}"))
    };
    send(b"{not json");
    let v = recv();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].as_i64()),
        (Value::Null, Some(-32700)),
        "{v}"
    );
    send(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
    assert!(recv()["result"]["serverInfo"].is_object());
    send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for bad in [&b"\xff\xfe\x00"[..], b"{} {}", b"[1,2]"] {
        send(bad);
        let v = recv();
        assert!(
            v["id"].is_null() && v["error"]["code"].as_i64().is_some(),
            "{v}"
        );
    }
    send(br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#);
    assert_eq!(recv()["error"]["code"], -32600);
    for (id, params) in [
        (3, "null"),
        (4, r#"{"arguments":{}}"#),
        (5, r#"{"name":7}"#),
        (6, r#"{"name":"execute_kip","arguments":[1]}"#),
    ] {
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#);
        let line = line.replace(r#","params":null"#, "");
        send(line.as_bytes());
        let v = recv();
        assert_eq!(
            (v["id"].as_i64(), v["error"]["code"].as_i64()),
            (Some(id), Some(-32602)),
            "{v}"
        );
    }
    let call = |id: i64, command: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "execute_kip_readonly", "arguments": {"command": command}}})
        .to_string()
    };
    // a megabyte of CJK and emoji is refused at once
    let t = Instant::now();
    send(call(7, &format!("SEARCH CONCEPT \"{}\"", "中😀".repeat(150_000))).as_bytes());
    let v = recv();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    let text = v["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("KIP_4002"), "{v}");
    // the deep expression that crashed the process
    send(
        call(
            8,
            &filter(&format!("{}(?c.name == \"x\")", "!".repeat(5000))),
        )
        .as_bytes(),
    );
    let v = recv();
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("KIP_1001"),
        "{v}"
    );
    send(call(9, "DESCRIBE PRIMER").as_bytes());
    assert_eq!(recv()["id"], 9);
    // a KIP 2.0 call is refused by name
    send(
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
               "params": {"name": "execute_kip", "arguments": {"kip": "2.0", "operations": [{"op": "find"}]}}})
        .to_string()
        .as_bytes(),
    );
    let v = recv();
    let text = v["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("KIP 2.0") && text.contains("1.0-RC11"), "{v}");
    drop(input);
    let st = child.wait().expect("wait");
    assert!(st.success(), "{st:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 15

#[test]
fn api_keys_of_any_length_are_compared_whole() {
    let dir = tmp("key");
    let db = dir.join("m.db");
    let s = Server::start(&db, &["--api-key", "correct horse"]);
    let body = json!({"method": "execute_kip_readonly", "params": {"command": "DESCRIBE DOMAINS"}})
        .to_string();
    for (key, want) in [
        ("correct horse", 200),
        ("c", 401),
        ("correct horse battery", 401),
        ("", 401),
    ] {
        let mut resp = agent()
            .post(&format!("http://{}/kip", s.addr))
            .header("authorization", &format!("Bearer {key}"))
            .send(&body)
            .expect("answer");
        let _ = resp.body_mut().read_to_string();
        assert_eq!(resp.status().as_u16(), want, "key {key:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ property

mod fuzz {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    const PIECES: [&str; 28] = [
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "!",
        " || ",
        " && ",
        "\"",
        "\\",
        "?x",
        "?x.name",
        " == ",
        "FILTER(",
        "UNION { ",
        "OPTIONAL { ",
        "NOT { ",
        ":p",
        "中",
        "😀",
        "\u{0}",
        "'",
        "//",
        "\n",
        "{type: \"Domain\"}",
        "LIMIT 18446744073709551615",
        "IN(?x.name, [",
    ];

    fn command() -> impl Strategy<Value = String> {
        prop_oneof![
            // runs of one piece: deep, long
            (0..PIECES.len(), 1usize..6000).prop_map(|(i, n)| PIECES[i].repeat(n)),
            // a query with a noisy FILTER
            prop::collection::vec(0..PIECES.len(), 0..400).prop_map(|ix| {
                let noise: String = ix.iter().map(|i| PIECES[*i]).collect();
                format!("FIND(?x) WHERE {{ ?x {{type: \"Domain\"}} FILTER({noise}) }}")
            }),
            // nested groups and brackets around a valid core
            (0usize..120, 0usize..120).prop_map(|(a, b)| format!(
                "FIND(?x) WHERE {{ {}?x {{type: \"Domain\"}}{} }}",
                "NOT { ".repeat(a),
                " }".repeat(b)
            )),
            any::<String>(),
        ]
    }

    fn body() -> impl Strategy<Value = Vec<u8>> {
        let method = prop_oneof![
            Just("execute_kip"),
            Just("execute_kip_readonly"),
            Just("bogus"),
        ];
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..3000),
            (method.clone(), command(), 0usize..400).prop_map(|(m, c, depth)| {
                let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
                format!(
                    r#"{{"method":"{m}","params":{{"command":{},"parameters":{{"p":{deep}}}}}}}"#,
                    json!(c)
                )
                .into_bytes()
            }),
            (method, prop::collection::vec(command(), 0..20)).prop_map(|(m, cs)| {
                json!({"method": m, "params": {"commands": cs}})
                    .to_string()
                    .into_bytes()
            }),
        ]
    }

    #[test]
    fn random_deep_long_and_malformed_requests_are_all_answered() {
        let dir = tmp("fuzz");
        let db = dir.join("m.db");
        let mut s = Server::start(&db, &["--timeout-ms", "2000"]);
        let addr = s.addr;
        let mut runner = TestRunner::new_with_rng(
            Config {
                cases: 1000,
                failure_persistence: None,
                ..Config::default()
            },
            TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        );
        let statuses = std::cell::RefCell::new(std::collections::BTreeMap::new());
        let result = runner.run(&body(), |b| {
            let mut resp = agent()
                .post(&format!("http://{addr}/kip"))
                .header("content-type", "application/json")
                .send(&b[..])
                .map_err(|e| TestCaseError::fail(format!("no answer: {e}")))?;
            let status = resp.status().as_u16();
            let text = resp.body_mut().read_to_string().unwrap_or_default();
            *statuses.borrow_mut().entry(status).or_insert(0) += 1;
            prop_assert!(status != 500, "an internal error: {}", text);
            let v: Value = serde_json::from_str(&text)
                .map_err(|_| TestCaseError::fail(format!("not JSON: {text}")))?;
            prop_assert!(
                v.get("result").is_some() || v.get("error").is_some(),
                "{}",
                v
            );
            Ok(())
        });
        eprintln!("statuses: {:?}", statuses.borrow());
        result.expect("every request answered");
        assert!(s.alive(), "the server died");
        let (status, _) = s.call("execute_kip_readonly", "DESCRIBE PRIMER");
        assert_eq!(status, 200);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
