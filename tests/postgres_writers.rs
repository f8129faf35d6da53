//! Many writers on one PostgreSQL memory, each on a connection of its
//! own, as several `somnus serve` processes would be: writes to different
//! elements proceed together, writes to the same element lose nothing,
//! `EXPECT VERSION` guards hold, and a process killed in the middle of a
//! write leaves nothing of it.
//!
//! They need a server: `SOMNUS_TEST_PG=postgres://user@host:port/db`
//! (`.ci/run` starts a throwaway one). Without it each test says so and
//! passes.

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::protocol::Request;

mod pg_support;
use pg_support::{Memory, server};

fn run(nx: &mut Nexus, cmd: &str, params: Value) -> Value {
    nx.execute(&Request::command(cmd).with_params(params.as_object().cloned().unwrap_or_default()))
        .to_json()
}

fn ok(nx: &mut Nexus, cmd: &str, params: Value) -> Value {
    let r = run(nx, cmd, params);
    assert!(r.get("error").is_none(), "{cmd}\n{r}");
    r["result"].clone()
}

const SCHEMA: &str = r#"UPSERT {
    CONCEPT ?t { {type: "$ConceptType", name: "Counter"} }
    CONCEPT ?h { {type: "$ConceptType", name: "Hub"} }
    CONCEPT ?n { {type: "$ConceptType", name: "Note"} }
    CONCEPT ?p { {type: "$PropositionType", name: "pinned_to"} }
}"#;

/// Eight writers at once: each its own notes linked to one shared hub
/// that none of them created first, and each an attribute of its own on
/// one shared concept. Every write lands; none is lost.
#[test]
fn eight_writers_lose_nothing_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "w_eight");
    ok(&mut mem.open(), SCHEMA, json!({}));
    const WRITERS: usize = 8;
    const EACH: usize = 25;
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let loc = mem.loc.clone();
            std::thread::spawn(move || {
                let mut nx = Nexus::open_postgres(&loc).expect("open");
                for i in 0..EACH {
                    ok(
                        &mut nx,
                        r#"UPSERT {
                            CONCEPT ?h { {type: "Hub", name: "shared"} SET ATTRIBUTES { last_writer: :w } }
                            CONCEPT ?n { {type: "Note", name: :note} SET ATTRIBUTES { writer: :w, i: :i } SET PROPOSITIONS { ("pinned_to", ?h) } }
                        }"#,
                        json!({"note": format!("w{w}-{i}"), "w": w, "i": i}),
                    );
                    // one attribute per writer on one concept: a lost
                    // update would drop another writer's key
                    ok(
                        &mut nx,
                        r#"UPSERT { CONCEPT ?c { {type: "Counter", name: "shared"} SET ATTRIBUTES :attrs } }"#,
                        json!({"attrs": {format!("w{w}"): i}}),
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a writer panicked");
    }
    let mut nx = mem.open();
    assert_eq!(
        ok(
            &mut nx,
            r#"FIND(COUNT(?n)) WHERE { ?n {type: "Note"} }"#,
            json!({})
        ),
        json!(WRITERS * EACH)
    );
    assert_eq!(
        ok(
            &mut nx,
            r#"FIND(COUNT(?n)) WHERE { ?n {type: "Hub"} }"#,
            json!({})
        ),
        json!(1),
        "the shared hub was created once"
    );
    assert_eq!(
        ok(
            &mut nx,
            r#"FIND(COUNT(?l)) WHERE { ?l (?n, "pinned_to", {type: "Hub", name: "shared"}) }"#,
            json!({})
        ),
        json!(WRITERS * EACH)
    );
    let attrs = ok(
        &mut nx,
        r#"FIND(?c.attributes) WHERE { ?c {type: "Counter", name: "shared"} }"#,
        json!({}),
    );
    for w in 0..WRITERS {
        assert_eq!(attrs[0][format!("w{w}")], json!(EACH - 1), "{attrs}");
    }
    // every write is one audit entry, and each can be undone
    let audited = nx
        .db()
        .query_i64(
            "SELECT COUNT(*) FROM audit_log WHERE kind = 'UPSERT' AND actor <> '$system'",
            &[],
        )
        .expect("count");
    assert_eq!(audited, Some((1 + 2 * WRITERS * EACH) as i64));
}

/// Four writers each writing the same twenty notes in bulk statements (the
/// names looked up ahead, the new ones written together): where two
/// create one name at once, the later one's statement collides, is run
/// again, and merges. Every note exists once, with every writer's key.
#[test]
fn bulk_writers_creating_the_same_names_lose_nothing_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "w_bulk");
    ok(&mut mem.open(), SCHEMA, json!({}));
    const WRITERS: usize = 4;
    const NOTES: usize = 20;
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let loc = mem.loc.clone();
            std::thread::spawn(move || {
                let mut nx = Nexus::open_postgres(&loc).expect("open");
                for round in 0..5 {
                    let mut cmd = String::from("UPSERT {");
                    for n in 0..NOTES {
                        cmd.push_str(&format!(
                            r#" CONCEPT ?n{n} {{ {{type: "Note", name: "note{n}"}} SET ATTRIBUTES {{ w{w}: {round} }} SET PROPOSITIONS {{ ("pinned_to", {{type: "Hub", name: "h{}"}}) }} }}"#,
                            n % 2
                        ));
                    }
                    cmd.push_str(r#" CONCEPT ?h0 { {type: "Hub", name: "h0"} } CONCEPT ?h1 { {type: "Hub", name: "h1"} } }"#);
                    // the hubs are named before they exist the first time
                    let r = run(&mut nx, &cmd, json!({}));
                    if r.get("error").is_some() {
                        assert_eq!(r["error"]["code"], "KIP_3002", "{r}");
                        ok(
                            &mut nx,
                            r#"UPSERT { CONCEPT ?h0 { {type: "Hub", name: "h0"} } CONCEPT ?h1 { {type: "Hub", name: "h1"} } }"#,
                            json!({}),
                        );
                        ok(&mut nx, &cmd, json!({}));
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a writer panicked");
    }
    let mut nx = mem.open();
    assert_eq!(
        ok(
            &mut nx,
            r#"FIND(COUNT(?n)) WHERE { ?n {type: "Note"} }"#,
            json!({})
        ),
        json!(NOTES)
    );
    assert_eq!(
        ok(
            &mut nx,
            r#"FIND(COUNT(?l)) WHERE { ?l (?n, "pinned_to", ?h) }"#,
            json!({})
        ),
        json!(NOTES),
        "one link per note"
    );
    let attrs = ok(
        &mut nx,
        r#"FIND(?n.attributes) WHERE { ?n {type: "Note"} }"#,
        json!({}),
    );
    for a in attrs.as_array().expect("rows") {
        for w in 0..WRITERS {
            assert_eq!(a[format!("w{w}")], json!(4), "{attrs}");
        }
    }
}

/// Four writers racing a compare-and-set counter with `EXPECT VERSION`:
/// every increment lands exactly once.
#[test]
fn expect_version_holds_between_writers_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "w_cas");
    ok(
        &mut mem.open(),
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Counter"} } CONCEPT ?c { {type: "Counter", name: "c"} SET ATTRIBUTES { n: 0 } } }"#,
        json!({}),
    );
    const N: i64 = 40;
    const WRITERS: i64 = 4;
    let threads: Vec<_> = (0..WRITERS)
        .map(|_| {
            let loc = mem.loc.clone();
            std::thread::spawn(move || {
                let mut nx = Nexus::open_postgres(&loc).expect("open");
                let mut conflicts = 0;
                for _ in 0..N {
                    loop {
                        let r = nx
                            .execute(&Request::readonly(r#"FIND(?c.attributes.n, ?c.metadata._version) WHERE { ?c {type: "Counter", name: "c"} }"#))
                            .to_json();
                        let n = r["result"][0][0].as_i64().expect("n");
                        let v = r["result"][0][1].as_i64().expect("version");
                        let w = run(
                            &mut nx,
                            r#"UPSERT { CONCEPT ?c { {type: "Counter", name: "c"} EXPECT VERSION :v SET ATTRIBUTES { n: :n } } }"#,
                            json!({"n": n + 1, "v": v}),
                        );
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
    let conflicts: i64 = threads.into_iter().map(|t| t.join().expect("writer")).sum();
    let n = ok(
        &mut mem.open(),
        r#"FIND(?c.attributes.n) WHERE { ?c {type: "Counter", name: "c"} }"#,
        json!({}),
    );
    assert_eq!(n, json!([WRITERS * N]), "conflicts retried: {conflicts}");
}

/// A cycle's process killed while a phase's writes are uncommitted: the
/// server rolls them back and frees the run lock with the connection; the
/// run reads as interrupted, and the next cycle (another process) runs.
#[test]
fn a_cycle_killed_mid_phase_leaves_nothing_of_it_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "w_kill");
    {
        let mut nx = mem.open();
        somnus::demo::load(&mut nx).expect("demo");
    }
    let audit_count = |nx: &Nexus| {
        nx.db()
            .query_i64("SELECT COUNT(*) FROM audit_log", &[])
            .expect("count")
            .unwrap_or(0)
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args(["sleep", "--now", "2026-11-20T03:00:00Z", "--quiet"])
        .args(["--db", &url, "--memory", &mem.loc.memory])
        .env("SOMNUS_SLEEP_HOLD_PHASE", "3")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sleep");
    let nx = mem.open();
    // phase 2 committed, phase 3 written and held open
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let phase = nx
            .db()
            .query_i64("SELECT MAX(phase) FROM sleep_runs", &[])
            .expect("phase");
        if phase == Some(2) {
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "the cycle never reached phase 3"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let before = audit_count(&nx);
    let running = somnus::sleep::cycle::runs(&nx, 5).expect("runs");
    assert_eq!(running[0].status, "running", "the lock is held");
    child.kill().expect("kill");
    let _ = child.wait();
    // the server notices the connection is gone
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while somnus::sleep::cycle::runs(&nx, 5).expect("runs")[0].status == "running" {
        assert!(
            std::time::Instant::now() < until,
            "the lock was never freed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        somnus::sleep::cycle::runs(&nx, 5).expect("runs")[0].status,
        "interrupted"
    );
    assert_eq!(audit_count(&nx), before, "the held phase left writes");
    let r = somnus::sleep::cycle::report(&nx, 1)
        .expect("report")
        .expect("a report");
    assert_eq!(r.status, "interrupted");
    // another process's cycle goes ahead
    let mut again = mem.open();
    let rep = somnus::sleep::run(
        &mut again,
        &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T04:00:00Z"),
        &mut somnus::sleep::Heuristic,
        None,
        None,
    )
    .expect("the next cycle");
    assert_eq!(rep.status, "completed");
    let runs = somnus::sleep::cycle::runs(&again, 5).expect("runs");
    assert_eq!(
        runs[1].status, "interrupted",
        "the killed run is recorded so"
    );
}

/// Two `somnus serve` on one PostgreSQL memory, writers split between
/// them (the load `somnus bench --server --postgres` measures, small):
/// no errors, no acknowledged write missing.
#[test]
fn two_servers_on_one_memory_lose_no_acknowledged_write() {
    let Some(url) = server() else { return };
    let rows = somnus::bench::writers::writers(&url, 4, 25).expect("the load runs");
    for r in &rows[..2] {
        assert_eq!(r.ok, Some(true), "{}", r.workload);
    }
    assert!(
        rows[1].workload.contains("0 of 100 acknowledged missing"),
        "{}",
        rows[1].workload
    );
}
