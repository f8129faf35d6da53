//! `somnus copy`: a memory with a history (a cycle, decisions, undos,
//! keys) moved SQLite → PostgreSQL → SQLite keeps every element with its
//! id and version, the audit trail entry for entry, the runs, the
//! proposals with their decisions, and goes on working: an approval made
//! before the move is undone after it.
//!
//! They need a server: `SOMNUS_TEST_PG=postgres://user@host:port/db`
//! (`.ci/run` starts a throwaway one). Without it each test says so and
//! passes.

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::audit::Who;
use somnus::review::{proposals, undo};
use somnus::sleep::{self, Heuristic, Options, Scope};
use somnus::store::postgres::Location;
use std::collections::BTreeMap;
use std::process::Command;

mod pg_support;
use pg_support::server;

fn tmp(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("somnus-copy-{name}-{}.db", std::process::id()));
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", p.display()));
    }
    p
}

fn operator() -> Who {
    Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    }
}

/// Every row of the tables that make a memory, as JSON values (a jsonb
/// column's keys come back in jsonb's order: compared as values).
fn rows(nx: &Nexus) -> BTreeMap<String, Vec<Value>> {
    let mut out = BTreeMap::new();
    for (t, order, cols) in [
        (
            "concepts",
            "id",
            "id, type, name, attributes, metadata, version, updated_at",
        ),
        (
            "propositions",
            "id",
            "id, subject, predicate, object, attributes, metadata, version, updated_at",
        ),
        (
            "audit_log",
            "id",
            "id, at, actor, trigger_name, reason, command, kind, rolls_back, rolled_back_by, first_change, n_changes, first_id, end_id, batch, pruned_at",
        ),
        (
            "audit_changes",
            "id",
            "id, entry, element, tbl, op, before, after",
        ),
        (
            "sleep_runs",
            "id",
            "id, started_at, finished_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status, phase, report, error",
        ),
        (
            "sleep_phases",
            "run, phase",
            "run, phase, name, started_at, finished_at, millis, counts, notes",
        ),
        (
            "proposals",
            "id",
            "id, run, created_at, actor, title, status, decided_at, decided_by, reason",
        ),
        (
            "proposal_items",
            "proposal, seq",
            "proposal, seq, class, key, title, command, parameters, rationale, evidence, confidence, preview, targets, status, edited_command, decided_at, decided_by, reason",
        ),
        (
            "contradictions",
            "id",
            "id, run, found_at, subject, predicate, slot, fact_a, fact_b, detail, status, resolution, proposal, item, decided_at, decided_by",
        ),
        ("sleep_policy", "class", "class, mode, set_at, set_by"),
        (
            "sleep_notes",
            "id",
            "id, element, label, run, at, action, rule, inputs",
        ),
        (
            "api_keys",
            "name",
            "name, role, digest, created_at, created_by, revoked_at",
        ),
    ] {
        let got = nx
            .db()
            .query(&format!("SELECT {cols} FROM {t} ORDER BY {order}"), &[])
            .expect(t);
        let n = cols.split(", ").count();
        out.insert(
            t.to_string(),
            got.iter()
                .map(|r| Value::Array((0..n).map(|i| r.json(i).expect("a column")).collect()))
                .collect(),
        );
    }
    let conflicts = nx
        .db()
        .query(
            "SELECT proposal, seq, other_proposal, other_seq, slot, note FROM proposal_conflicts ORDER BY proposal, seq, note",
            &[],
        )
        .expect("conflicts");
    out.insert(
        "proposal_conflicts".into(),
        conflicts
            .iter()
            .map(|r| Value::Array((0..6).map(|i| r.json(i).unwrap()).collect()))
            .collect(),
    );
    out
}

#[track_caller]
fn same(a: &BTreeMap<String, Vec<Value>>, b: &BTreeMap<String, Vec<Value>>, what: &str) {
    for (t, rows) in a {
        let other = &b[t];
        assert_eq!(
            rows.len(),
            other.len(),
            "{what}: {t} has {} rows, then {}",
            rows.len(),
            other.len()
        );
        for (x, y) in rows.iter().zip(other) {
            assert_eq!(x, y, "{what}: a row of {t} differs");
        }
    }
}

/// A memory with a history: the demo, a cycle, two items approved and the
/// rest rejected, one approval undone, a policy and a key.
fn lived_in(path: &std::path::Path) -> (Nexus, i64) {
    let mut nx = somnus::demo::create(path).expect("demo");
    let rep = sleep::run(
        &mut nx,
        &Options::new(Scope::Full, "2026-11-20T03:00:00Z"),
        &mut Heuristic,
        None,
        None,
    )
    .expect("cycle");
    let pid = rep.proposal.expect("a proposal");
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    let seqs: Vec<i64> = p.items.iter().take(3).map(|i| i.seq).collect();
    proposals::approve(
        &mut nx,
        pid,
        Some(&seqs[..2]),
        &BTreeMap::new(),
        &operator(),
    )
    .expect("approve");
    proposals::reject(&mut nx, pid, Some(&seqs[2..3]), "not now", "operator").expect("reject");
    proposals::set_policy(&nx, "merge", "review", "operator").expect("policy");
    somnus::store::keys::add(
        nx.db(),
        "scout",
        somnus::store::keys::Role::Agent,
        "operator",
    )
    .expect("key");
    let undo = somnus::audit::list(nx.db(), &Default::default()).expect("list")[0].id;
    nx.rollback(undo, &operator()).expect("undo the last entry");
    (nx, pid)
}

#[test]
fn a_memory_goes_to_postgresql_and_back_whole() {
    let Some(url) = server() else { return };
    let (a, b) = (tmp("a"), tmp("b"));
    let memory = format!("copy_{}", std::process::id());
    let loc = Location::parse(&url, Some(&memory)).unwrap();
    let _ = somnus::store::postgres::drop_memory(&loc);
    let (src, pid) = lived_in(&a);
    let before = rows(&src);
    let export = |nx: &mut Nexus| -> Value {
        match nx.kip(r#"EXPORT ?x WHERE { ?x {type: "Person"} } LIMIT 1000"#) {
            somnus::protocol::Outcome::Ok { result, .. } => result,
            somnus::protocol::Outcome::Err(e) => panic!("{}", e.message),
        }
    };

    // SQLite → PostgreSQL
    let pg = Nexus::open_postgres(&loc).expect("open");
    let copied = src.copy_into(&pg).expect("copy");
    assert_eq!(copied.rows("concepts") as usize, before["concepts"].len());
    assert!(copied.rows("audit_changes") > 0 && copied.rows("proposal_items") > 40);
    same(&before, &rows(&pg), "SQLite → PostgreSQL");
    // a second copy into it is refused, and changes nothing
    let e = src.copy_into(&pg).expect_err("the target is no longer new");
    assert_eq!(e.code.to_string(), "KIP_3005");
    same(&before, &rows(&pg), "a refused copy");
    drop(pg);

    // PostgreSQL → SQLite, with the binary as an operator runs it
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "copy",
            "--from",
            &format!("{url}?memory={memory}"),
            "--to",
            &b.to_string_lossy(),
        ])
        .output()
        .expect("somnus copy");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("audit_log"));
    let mut back = Nexus::open(&b).expect("open the copy");
    same(&before, &rows(&back), "SQLite → PostgreSQL → SQLite");
    let mut src = src;
    assert_eq!(
        export(&mut src),
        export(&mut back),
        "EXPORT after the round trip"
    );

    // the copy goes on: SEARCH finds by the rebuilt index, the approval
    // made before the move is undone after it, new ids do not reuse old
    match back.kip(r#"SEARCH CONCEPT "Mira" LIMIT 3"#) {
        somnus::protocol::Outcome::Ok { result, .. } => {
            assert!(result.to_string().contains("Mira Chen"), "{result}")
        }
        somnus::protocol::Outcome::Err(e) => panic!("{}", e.message),
    }
    undo::proposal(&mut back, pid, &operator()).expect("undo the approval in the copy");
    undo::proposal(&mut src, pid, &operator()).expect("and in the original");
    // (what the undo writes is stamped with the clock: masked)
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    fn unclock(v: &mut Value, today: &str) {
        match v {
            Value::String(s) if s.starts_with(today) => *s = "<now>".into(),
            Value::String(s) if s.contains(today) => {
                *s = regex::Regex::new(r"\d{4}-\d\d-\d\dT[0-9:.]+Z")
                    .unwrap()
                    .replace_all(s, "<now>")
                    .into_owned()
            }
            Value::Array(a) => a.iter_mut().for_each(|x| unclock(x, today)),
            Value::Object(m) => m.values_mut().for_each(|x| unclock(x, today)),
            _ => {}
        }
    }
    let masked = |nx: &Nexus| {
        let mut r = rows(nx);
        for v in r.values_mut() {
            v.iter_mut().for_each(|x| unclock(x, &today));
        }
        r
    };
    same(&masked(&src), &masked(&back), "the same undo on both");
    let id_of = |nx: &mut Nexus| -> Value {
        match nx.kip(r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "After the move"} } }"#) {
            somnus::protocol::Outcome::Ok { result, .. } => {
                result["upsert_concept_nodes"][0].clone()
            }
            somnus::protocol::Outcome::Err(e) => panic!("{}", e.message),
        }
    };
    assert_eq!(id_of(&mut src), id_of(&mut back), "the next id continues");
    assert_eq!(json!(copied.next_id > 1), json!(true));

    let _ = somnus::store::postgres::drop_memory(&loc);
    for p in [&a, &b] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn copy_refuses_what_it_cannot_do() {
    let Some(url) = server() else { return };
    let missing = tmp("missing");
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "copy",
            "--from",
            &missing.to_string_lossy(),
            "--to",
            &format!("{url}?memory=never_made"),
        ])
        .output()
        .expect("somnus copy");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let out = Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "copy",
            "--from",
            &format!("{url}?memory=nowhere_{}", std::process::id()),
            "--to",
            "/tmp/x.db",
        ])
        .output()
        .expect("somnus copy");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
}
