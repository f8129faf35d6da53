//! The sleep cycle on a PostgreSQL memory: the demo memory, cycled on
//! SQLite and on PostgreSQL, gives the same report, the same proposal and
//! the same memory; approving, rejecting and rolling back do the same on
//! both; contradictions, explanations, health and policies read alike.
//!
//! They need a server: `SOMNUS_TEST_PG=postgres://user@host:port/db`
//! (`.ci/run` starts a throwaway one). Without it each test says so and
//! passes.

use serde_json::{Map, Value, json};
use somnus::audit::Who;
use somnus::protocol::{Outcome, Request};
use somnus::review::{proposals, undo};
use somnus::sleep::{self, Heuristic, Options, Scope};
use somnus::{Nexus, Response};
use std::collections::BTreeMap;

mod pg_support;
use pg_support::{Memory, server};

#[path = "judgement/generator.rs"]
#[allow(dead_code)]
mod generator;

const NOW: &str = "2026-11-20T03:00:00Z";

fn kip(nx: &mut Nexus, cmd: &str, params: Value) -> Value {
    let req =
        Request::command(cmd).with_params(params.as_object().cloned().unwrap_or_else(Map::new));
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

/// Today's clock readings (audit stamps, `created_at` of new elements)
/// differ between the two runs; the cycle's own clock does not.
fn unclock(v: &mut Value, today: &str) {
    match v {
        Value::String(s) if s.starts_with(today) => *s = "<now>".into(),
        Value::Array(a) => a.iter_mut().for_each(|x| unclock(x, today)),
        Value::Object(m) => m.values_mut().for_each(|x| unclock(x, today)),
        _ => {}
    }
}

/// The memory by names, not ids: every concept, every link, sorted;
/// SleepTasks (the bookkeeping that records each decision on the work
/// they asked for) and versions are left out.
fn snapshot(nx: &mut Nexus) -> Vec<String> {
    // (a rollback restores an element's content; its version moves on)
    let version = regex::Regex::new(r#""_version":\d+"#).expect("regex");
    everything(nx)
        .into_iter()
        .filter(|r| !r.contains("\"SleepTask\"") && !r.contains("\"assigned_to\""))
        .map(|r| version.replace_all(&r, "\"_version\":_").into_owned())
        .collect()
}

/// [`snapshot`] with the SleepTasks.
fn everything(nx: &mut Nexus) -> Vec<String> {
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let mut out = Vec::new();
    let types = kip(
        nx,
        r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} } LIMIT 1000"#,
        json!({}),
    );
    for t in types.as_array().unwrap() {
        let rows = kip(
            nx,
            r#"FIND(?x) WHERE { ?x {type: :t} } LIMIT 100000"#,
            json!({"t": t}),
        );
        for mut r in rows.as_array().cloned().unwrap_or_default() {
            if let Some(m) = r.as_object_mut() {
                m.remove("id");
                // a task's expiry counts from the wall clock
                if t == "SleepTask"
                    && let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut)
                {
                    meta.remove("expires_at");
                }
            }
            unclock(&mut r, &today);
            out.push(somnus::conformance::canonical(&r));
        }
    }
    let links = kip(
        nx,
        r#"FIND(?s.type, ?s.name, ?l.predicate, ?o.type, ?o.name, ?l.attributes, ?l.metadata) WHERE { ?l (?s, ?p, ?o) } LIMIT 100000"#,
        json!({}),
    );
    // (one list per projected value; a row is the i-th of each)
    let cols = links.as_array().cloned().unwrap_or_default();
    let n = cols.first().and_then(Value::as_array).map_or(0, Vec::len);
    for i in 0..n {
        let mut r = Value::Array(cols.iter().map(|c| c[i].clone()).collect());
        unclock(&mut r, &today);
        out.push(somnus::conformance::canonical(&r));
    }
    out.sort();
    out
}

/// Two snapshots are the same; if not, what only one of them holds.
#[track_caller]
fn same(a: &[String], b: &[String], what: &str) {
    if a != b {
        let only = |x: &[String], y: &[String]| -> Vec<String> {
            x.iter().filter(|e| !y.contains(e)).cloned().collect()
        };
        panic!(
            "{what}\nonly in the first ({}):\n{}\nonly in the second ({}):\n{}",
            a.len(),
            only(a, b).join("\n"),
            b.len(),
            only(b, a).join("\n")
        );
    }
}

fn cycle(nx: &mut Nexus, now: &str) -> sleep::Report {
    let rep = sleep::run(
        nx,
        &Options::new(Scope::Full, now),
        &mut Heuristic,
        None,
        None,
    )
    .expect("cycle runs");
    assert_eq!(rep.status, "completed", "{:#}", rep.to_json());
    rep
}

fn operator() -> Who {
    Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    }
}

/// What a report says, without its timings.
fn counts(rep: &sleep::Report) -> Vec<(String, BTreeMap<String, i64>, Vec<String>)> {
    rep.phases
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                p.counts.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                p.lines.clone(),
            )
        })
        .collect()
}

fn items(nx: &Nexus, pid: i64) -> Vec<(String, String, Vec<String>, String)> {
    proposals::get(nx, pid)
        .expect("get")
        .expect("the proposal")
        .items
        .into_iter()
        .map(|i| (i.class, i.title, i.commands, i.status))
        .collect()
}

#[test]
fn a_cycle_on_postgresql_matches_sqlite_and_its_decisions_roll_back() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "s_cycle");
    let mut pg = mem.demo();
    let mut lite = somnus::demo::in_memory().expect("demo");
    same(
        &everything(&mut lite),
        &everything(&mut pg),
        "the demo loads alike",
    );

    let (a, b) = (cycle(&mut lite, NOW), cycle(&mut pg, NOW));
    assert_eq!(counts(&a), counts(&b), "the reports differ");
    let (pa, pb) = (
        a.proposal.expect("a proposal"),
        b.proposal.expect("a proposal"),
    );
    assert_eq!(items(&lite, pa), items(&pg, pb), "the proposals differ");
    same(
        &everything(&mut lite),
        &everything(&mut pg),
        "the cycles left different memories",
    );
    let after_run = snapshot(&mut pg);

    // runs, reports and health read back alike
    let runs = sleep::cycle::runs(&pg, 10).expect("runs");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "completed");
    let rb = sleep::cycle::report(&pg, runs[0].run)
        .expect("report")
        .expect("a report");
    assert_eq!(counts(&rb), counts(&b));
    let ha = sleep::health::history(&lite, 10).expect("health");
    let hb = sleep::health::history(&pg, 10).expect("health");
    assert_eq!(ha.len(), 1);
    assert_eq!(
        ha.iter().map(|p| &p.values).collect::<Vec<_>>(),
        hb.iter().map(|p| &p.values).collect::<Vec<_>>()
    );

    // contradictions found alike
    let ca = sleep::contradictions::list(&lite, None).expect("list");
    let cb = sleep::contradictions::list(&pg, Some("open")).expect("list");
    assert!(!cb.is_empty(), "the demo's contradiction is found");
    assert_eq!(
        ca.iter()
            .map(|c| (&c.status, &c.conflict.predicate))
            .collect::<Vec<_>>(),
        cb.iter()
            .map(|c| (&c.status, &c.conflict.predicate))
            .collect::<Vec<_>>()
    );
    let c = sleep::contradictions::get(&pg, cb[0].id)
        .expect("get")
        .expect("one");
    assert_eq!(c.id, cb[0].id);

    // approve two items on each, reject the rest
    let pick = |nx: &Nexus, pid: i64| -> Vec<i64> {
        let p = proposals::get(nx, pid).unwrap().unwrap();
        p.items.iter().take(2).map(|i| i.seq).collect()
    };
    let (sa, sb) = (pick(&lite, pa), pick(&pg, pb));
    let ra = proposals::approve(&mut lite, pa, Some(&sa), &BTreeMap::new(), &operator()).unwrap();
    let rb = proposals::approve(&mut pg, pb, Some(&sb), &BTreeMap::new(), &operator()).unwrap();
    assert_eq!(ra, rb);
    same(
        &everything(&mut lite),
        &everything(&mut pg),
        "approvals differ",
    );
    let after_approval = snapshot(&mut pg);
    assert_ne!(after_approval, after_run, "the approval changed nothing");
    let na = proposals::reject(&mut lite, pa, None, "not now", "operator").unwrap();
    let nb = proposals::reject(&mut pg, pb, None, "not now", "operator").unwrap();
    assert_eq!(na, nb);
    same(
        &snapshot(&mut pg),
        &after_approval,
        "a rejection changed the memory",
    );
    same(
        &everything(&mut lite),
        &everything(&mut pg),
        "rejections settle tasks differently",
    );
    assert_eq!(
        items(&lite, pa),
        items(&pg, pb),
        "decisions recorded differently"
    );
    assert_eq!(
        proposals::get(&pg, pb).unwrap().unwrap().status,
        "partially_applied"
    );

    // the approval rolls back to the memory the run left
    undo::proposal(&mut pg, pb, &operator()).expect("rollback");
    same(
        &snapshot(&mut pg),
        &after_run,
        "the rollback did not restore",
    );
    assert!(undo::proposal(&mut pg, pb, &operator()).is_err());
    let p = proposals::get(&pg, pb).unwrap().unwrap();
    assert!(p.items.iter().any(|i| i.status == "rolled_back"));

    // the whole run rolls back too, and that rollback is itself undone
    undo::group(&mut pg, &format!("sleep:{}", b.run), &operator()).expect("undo the run");
    undo::group(&mut pg, &format!("rollback:sleep:{}", b.run), &operator()).expect("redo the run");
    same(
        &snapshot(&mut pg),
        &after_run,
        "undoing and redoing the run",
    );

    // a second cycle finds nothing new that was rejected unchanged
    let b2 = cycle(&mut pg, "2026-11-20T04:00:00Z");
    let a2 = {
        undo::proposal(&mut lite, pa, &operator()).expect("rollback");
        undo::group(&mut lite, &format!("sleep:{}", a.run), &operator()).expect("undo");
        undo::group(&mut lite, &format!("rollback:sleep:{}", a.run), &operator()).expect("redo");
        cycle(&mut lite, "2026-11-20T04:00:00Z")
    };
    assert_eq!(counts(&a2), counts(&b2), "second cycles differ");
}

#[test]
fn policies_explanations_and_structure_read_alike_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "s_explain");
    let mut pg = mem.demo();
    let mut lite = somnus::demo::in_memory().expect("demo");

    for nx in [&mut lite, &mut pg] {
        proposals::set_policy(nx, "merge", "auto", "operator").expect("policy");
        proposals::set_policy(nx, "merge", "review", "operator").expect("policy again");
        proposals::set_policy(nx, "archive", "auto", "operator").expect("policy");
        assert!(proposals::set_policy(nx, "nonsense", "auto", "operator").is_err());
    }
    let strip = |v: Vec<(String, String, String, String)>| -> Vec<(String, String, String)> {
        v.into_iter().map(|(c, m, _, by)| (c, m, by)).collect()
    };
    assert_eq!(
        strip(proposals::policies(&lite).unwrap()),
        strip(proposals::policies(&pg).unwrap())
    );
    assert_eq!(proposals::policy(&pg, "archive").unwrap(), "auto");
    assert_eq!(proposals::policy(&pg, "merge").unwrap(), "review");
    assert_eq!(proposals::policy(&pg, "skill").unwrap(), "review");

    let (a, b) = (cycle(&mut lite, NOW), cycle(&mut pg, NOW));
    assert_eq!(counts(&a), counts(&b));
    // auto-applied archival alike
    same(
        &everything(&mut lite),
        &everything(&mut pg),
        "auto-applied archival",
    );

    // why: for an element the cycle noted, alike on both
    let noted = |nx: &mut Nexus| -> Value {
        let rows = kip(
            nx,
            r#"FIND(?e.name) WHERE { ?e {type: "Event"} } ORDER BY ?e.name ASC LIMIT 1"#,
            json!({}),
        );
        let name = rows[0].as_str().expect("an Event").to_string();
        let (id, _) = sleep::explain::resolve(nx, &format!("Event:{name}"))
            .expect("resolve")
            .expect("found");
        let mut v = sleep::explain::explain(nx, id, NOW).expect("explain");
        let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
        unclock(&mut v, &today);
        let ids = regex::Regex::new(r#"\b[CP]:\d+"#).expect("re");
        for h in v["history"].as_array_mut().into_iter().flatten() {
            let m = h.as_object_mut().unwrap();
            m.remove("entry");
            m.remove("element");
            // a batch command names its elements by id, which the two
            // backends number apart
            if let Some(c) = m.get("command").and_then(Value::as_str) {
                let c = ids.replace_all(c, "#id").to_string();
                m.insert("command".into(), Value::String(c));
            }
            for k in ["before", "after"] {
                if let Some(x) = m.get_mut(k).and_then(Value::as_object_mut) {
                    x.remove("id");
                }
            }
        }
        v.as_object_mut().unwrap().remove("element");
        v
    };
    assert_eq!(noted(&mut lite), noted(&mut pg));
    assert!(
        sleep::explain::resolve(&pg, "Event:no such thing")
            .unwrap()
            .is_none()
    );

    // the bootstrap structure is whole on both
    assert!(sleep::structure::missing(&pg).unwrap().is_empty());
    assert_eq!(
        sleep::structure::missing(&lite).unwrap().len(),
        sleep::structure::missing(&pg).unwrap().len()
    );
}

/// Processes sharing a PostgreSQL memory may run on different machines:
/// the run lock lives in the database, not in process ids.
#[test]
fn one_cycle_at_a_time_across_processes_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "s_runlock");
    let mut pg = mem.demo();

    // another session (another server) holds the memory's sleep lock
    let mut other = mem.loc.connect().expect("connect");
    other
        .batch_execute("SELECT pg_advisory_lock(hashtext('somnus sleep ' || current_schema()))")
        .expect("lock");
    let e = sleep::run(
        &mut pg,
        &Options::new(Scope::Full, NOW),
        &mut Heuristic,
        None,
        None,
    )
    .expect_err("a second cycle must wait");
    assert_eq!(e.code.to_string(), "KIP_3005", "{}", e.message);
    assert!(e.message.contains("another process"), "{}", e.message);
    assert!(
        sleep::cycle::runs(&pg, 10).unwrap().is_empty(),
        "no run recorded"
    );

    // its process dies: the server frees the lock with its connection
    drop(other);
    // (the server notices the closed connection a moment later)
    let held = |pg: &Nexus| {
        pg.db()
            .query_i64(
                "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
                 AND objid = hashtext('somnus sleep ' || current_schema())::oid",
                &[],
            )
            .expect("pg_locks")
            != Some(0)
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while held(&pg) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let first = cycle(&mut pg, NOW);

    // a run recorded as running by a process that is gone (here: a live
    // local process id, as a run on another machine would have) holds
    // nothing: it reads as interrupted, and the next cycle goes ahead
    pg.db()
        .execute(
            "INSERT INTO sleep_runs(started_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status) \
             VALUES ('2026-11-20T03:30:00Z', 'full', 'on_demand', 'heuristic', '$system', 1, ?1, '{}', 'running')",
            &[NOW.into()],
        )
        .expect("a stale run");
    let runs = sleep::cycle::runs(&pg, 10).unwrap();
    assert_eq!(runs[0].status, "interrupted");
    assert_eq!(runs[1].run, first.run);
    let second = cycle(&mut pg, "2026-11-20T04:00:00Z");
    let runs = sleep::cycle::runs(&pg, 10).unwrap();
    assert_eq!(runs[0].run, second.run);
    assert_eq!(
        runs[1].status, "interrupted",
        "the stale run is recorded so"
    );
    let r = sleep::cycle::report(&pg, runs[1].run).unwrap().unwrap();
    assert_eq!(r.status, "interrupted");

    // the lock was released at the end of each cycle: another session
    // takes it at once
    let mut other = mem.loc.connect().expect("connect");
    let row = other
        .query_one(
            "SELECT pg_try_advisory_lock(hashtext('somnus sleep ' || current_schema()))",
            &[],
        )
        .expect("try");
    assert!(row.get::<_, bool>(0), "the lock was left held");
}

/// A console learns that others committed (and not from its own writes),
/// as SQLite's `PRAGMA data_version` tells it.
#[test]
fn others_commits_change_the_data_version_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "s_version");
    let mut console = mem.demo();
    let mut agent = Nexus::open_postgres(&mem.loc).expect("open");
    let v0 = console.data_version();
    assert_eq!(console.data_version(), v0, "nothing changed");
    // the console's own write: no change seen
    kip(
        &mut console,
        r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "Mine"} } }"#,
        json!({}),
    );
    assert_eq!(console.data_version(), v0, "its own write");
    // an uncommitted write elsewhere is not seen; its commit is
    agent
        .atomically("test", |nx| {
            kip(
                nx,
                r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "Theirs"} } }"#,
                json!({}),
            );
            assert_eq!(console.data_version(), v0, "not committed yet");
            Ok(())
        })
        .expect("commit");
    let v1 = console.data_version();
    assert_ne!(v1, v0, "another's commit");
    // a decision on a proposal (no graph write) counts too
    proposals::set_policy(&agent, "merge", "auto", "operator").expect("policy");
    let v2 = console.data_version();
    assert_ne!(v2, v1, "a policy set elsewhere");
    // a rolled-back write does not
    let _ = agent.atomically("test", |nx| -> somnus::kip::KipResult<()> {
        kip(
            nx,
            r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "Never"} } }"#,
            json!({}),
        );
        Err(somnus::kip::KipError::internal("abandoned"))
    });
    assert_eq!(console.data_version(), v2, "a rolled-back write");
}

/// A maintainer on a PostgreSQL memory may run on another machine: other
/// processes see it by the lock its connection holds, not by a process
/// id, and stop seeing it when it stops.
#[test]
fn maintainers_are_seen_by_their_lock_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "s_maintainer");
    // a memory with nothing due (no Events): the maintainer only looks
    let nx = Nexus::open_postgres(&mem.loc).expect("open");
    let settings = somnus::sleep::maintainer::Settings {
        poll: std::time::Duration::from_millis(50),
        ..Default::default()
    };
    let m = somnus::sleep::maintainer::Maintainer::start(mem.loc.clone(), "serve", settings);
    let within = |secs: u64, f: &dyn Fn() -> bool| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while std::time::Instant::now() < until {
            if f() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        false
    };
    let listed = || somnus::sleep::maintainer::holders(&nx).expect("holders");
    assert!(
        within(10, &|| listed().len() == 1),
        "the maintainer is listed"
    );
    assert_eq!(listed()[0].kind, "serve");
    // a row left by a maintainer that is gone (its lock freed) is not
    nx.db()
        .execute(
            "INSERT INTO maintainers(pid, kind, started_at, beat_at, settings) VALUES (1, 'maintain', 'x', 'x', '{}')",
            &[],
        )
        .expect("a stale row");
    assert_eq!(listed().len(), 1, "pid 1 is alive here, but holds no lock");
    m.stop();
    assert!(
        within(10, &|| listed().is_empty()),
        "a stopped maintainer is not listed"
    );
}

/// Memories the cycle has never seen (the judgement suite's generated
/// ones: planted duplicates, contradictions, orphans and an Unsorted
/// inbox, with look-alike traps) get the same cycle on PostgreSQL as on
/// SQLite: the same reports, the same proposals, the same memory after,
/// and after every proposal item is approved. `SOMNUS_PG_SLEEP_SEEDS=N`
/// runs seeds 1..=N (default 3).
#[test]
fn generated_memories_get_the_same_cycle_on_postgresql() {
    let Some(url) = server() else { return };
    let n: u64 = std::env::var("SOMNUS_PG_SLEEP_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // ids are handed out differently (PostgreSQL's writers take them in
    // blocks from one sequence): an id written into a value compares as
    // an id
    let id = regex::Regex::new(r#"\b([CP]):\d+"#).expect("regex");
    let everything = |nx: &mut Nexus| -> Vec<String> {
        let mut v: Vec<String> = everything(nx)
            .into_iter()
            .map(|r| id.replace_all(&r, "$1:_").into_owned())
            .collect();
        v.sort();
        v
    };
    for seed in 1..=n {
        let g = generator::Gen::build(seed);
        let mem = Memory::new(&url, &format!("s_gen{seed}"));
        let mut pg = mem.open();
        let mut lite = Nexus::open_in_memory().expect("sqlite");
        g.load(&mut lite);
        g.load(&mut pg);
        let what = |s: &str| format!("seed {seed}: {s}");
        same(
            &everything(&mut lite),
            &everything(&mut pg),
            &what("loads alike"),
        );
        let (a, b) = (cycle(&mut lite, NOW), cycle(&mut pg, NOW));
        assert_eq!(counts(&a), counts(&b), "{}", what("the reports differ"));
        same(
            &everything(&mut lite),
            &everything(&mut pg),
            &what("the cycles left different memories"),
        );
        let (Some(pa), Some(pb)) = (a.proposal, b.proposal) else {
            assert_eq!(
                a.proposal.is_some(),
                b.proposal.is_some(),
                "{}",
                what("proposals")
            );
            continue;
        };
        assert_eq!(
            items(&lite, pa),
            items(&pg, pb),
            "{}",
            what("the proposals differ")
        );
        let ra = proposals::approve(&mut lite, pa, None, &BTreeMap::new(), &operator())
            .expect("approve on SQLite");
        let rb = proposals::approve(&mut pg, pb, None, &BTreeMap::new(), &operator())
            .expect("approve on PostgreSQL");
        // (what changed is named with the time it changed, which differs)
        assert_eq!(
            (
                &ra.applied,
                &ra.stale,
                ra.changed.keys().collect::<Vec<_>>()
            ),
            (
                &rb.applied,
                &rb.stale,
                rb.changed.keys().collect::<Vec<_>>()
            ),
            "{}",
            what("the approvals answered differently")
        );
        same(
            &everything(&mut lite),
            &everything(&mut pg),
            &what("the approvals left different memories"),
        );
        assert_eq!(
            items(&lite, pa),
            items(&pg, pb),
            "{}",
            what("decisions recorded differently")
        );
    }
}
