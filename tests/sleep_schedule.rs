//! Maintenance that runs itself: what is due when, and `somnus maintain`
//! running it, one cycle at a time per memory.

use chrono::{Duration as D, Utc};
use somnus::Nexus;
use somnus::sleep::Scope;
use somnus::sleep::schedule::{Schedule, due};
use std::time::Duration;

fn events(nx: &mut Nexus, n: usize) {
    let mut cmd = String::from("UPSERT {");
    for i in 0..n {
        cmd.push_str(&format!(
            r#" CONCEPT ?e{i} {{ {{type: "Event", name: "Chat:{i}"}} SET ATTRIBUTES {{ start_time: "2026-11-24T10:00:00Z", content_summary: "talk {i}" }} }}"#
        ));
    }
    cmd.push('}');
    let r = nx.kip(&cmd).to_json();
    assert!(r.get("error").is_none(), "{r}");
}

fn full_run_at(nx: &Nexus, at: chrono::DateTime<Utc>) {
    nx.connection_for_checks().expect("a SQLite memory")
        .execute(
            "INSERT INTO sleep_runs(started_at, finished_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status) VALUES (?1, ?1, 'full', 'test', 'heuristic', '$system', 0, ?1, '{}', 'completed')",
            [at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)],
        )
        .expect("run row");
}

#[test]
fn what_is_due_follows_the_trigger_conditions() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let s = Schedule {
        idle: Duration::from_secs(60),
        ..Default::default()
    };
    let now = Utc::now();
    // nothing to maintain yet
    assert_eq!(due(&mut nx, now, &s).expect("due"), None);
    events(&mut nx, 6);
    // Events and never a full cycle: caught up
    let d = due(&mut nx, now, &s).expect("due").expect("something");
    assert_eq!((d.scope, d.trigger), (Scope::Full, "catch_up"));
    full_run_at(&nx, now);
    // the agents wrote just now: no daydream yet
    assert_eq!(due(&mut nx, now + D::seconds(10), &s).expect("due"), None);
    // after a minute of quiet, six unscored Events: a daydream
    let d = due(&mut nx, now + D::seconds(90), &s)
        .expect("due")
        .expect("daydream");
    assert_eq!((d.scope, d.trigger), (Scope::Daydream, "idle"), "{d:?}");
    assert!(d.reason.contains("6 Events"), "{}", d.reason);
    // twelve hours on: the full cycle; a day on: caught up
    let d = due(&mut nx, now + D::hours(13), &s)
        .expect("due")
        .expect("full");
    assert_eq!((d.scope, d.trigger), (Scope::Full, "scheduled"));
    let d = due(&mut nx, now + D::hours(25), &s)
        .expect("due")
        .expect("full");
    assert_eq!((d.scope, d.trigger), (Scope::Full, "catch_up"));
}

#[test]
fn a_backlog_over_its_target_calls_a_quick_cycle() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let s = Schedule {
        idle: Duration::from_secs(60),
        quick_every: Duration::from_secs(60),
        ..Default::default()
    };
    let now = Utc::now();
    // 25 concepts filed under Unsorted (target ≤ 20)
    let r = nx
        .kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"#)
        .to_json();
    assert!(r.get("error").is_none(), "{r}");
    for i in 0..25 {
        let r = nx
            .kip(&format!(
                r#"UPSERT {{ CONCEPT ?n {{ {{type: "Note", name: "n{i}"}} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
            ))
            .to_json();
        assert!(r.get("error").is_none(), "{r}");
    }
    events(&mut nx, 1);
    full_run_at(&nx, now - D::seconds(30));
    // the last cycle is younger than quick_every: not yet
    assert_eq!(due(&mut nx, now, &s).expect("due"), None);
    let d = due(&mut nx, now + D::minutes(2), &s)
        .expect("due")
        .expect("quick");
    assert_eq!((d.scope, d.trigger), (Scope::Quick, "threshold"), "{d:?}");
    assert!(d.reason.contains("Unsorted"), "{}", d.reason);
}

/// `somnus maintain --once` runs what is due, then finds nothing due; two
/// started at once on one memory run one cycle between them.
#[test]
fn maintain_runs_what_is_due_once_per_memory() {
    let dir = std::env::temp_dir().join(format!("somnus-maintain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    drop(somnus::demo::create(&db).expect("demo"));
    let bin = env!("CARGO_BIN_EXE_somnus");
    let start = || {
        std::process::Command::new(bin)
            .args(["--db", &db.to_string_lossy(), "maintain", "--once"])
            .output()
    };
    let (a, b) = std::thread::scope(|sc| {
        let a = sc.spawn(start);
        let b = sc.spawn(start);
        (
            a.join().expect("a").expect("run a"),
            b.join().expect("b").expect("run b"),
        )
    });
    let said = format!(
        "{}{}{}{}",
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&b.stdout),
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    let nx = Nexus::open(&db).expect("open");
    let runs: i64 = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("SELECT COUNT(*) FROM sleep_runs", [], |r| r.get(0))
        .expect("count");
    assert_eq!(runs, 1, "{said}");
    assert!(
        said.contains("full cycle #1 (catch_up): completed"),
        "{said}"
    );
    let trigger: String = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("SELECT trigger_name FROM sleep_runs", [], |r| r.get(0))
        .expect("trigger");
    assert!(trigger.starts_with("catch_up: no full cycle"), "{trigger}");
    drop(nx);
    let again = start().expect("again");
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("nothing is due"),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cycle that outlasts its budget is cancelled cleanly (the phase in
/// progress rolled back) and says so, in the output and in its run record.
#[test]
fn a_cycle_past_its_budget_is_cancelled_and_says_so() {
    let dir = std::env::temp_dir().join(format!("somnus-budget-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    drop(somnus::demo::create(&db).expect("demo"));
    let t = std::time::Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_somnus"))
        .args([
            "--db",
            &db.to_string_lossy(),
            "maintain",
            "--once",
            // (phases 1 and 2 fit in it on a loaded machine; phase 3 is
            // held open past it)
            "--budget-secs",
            "5",
        ])
        // phase 3 stays open for a minute unless cancelled
        .env("SOMNUS_SLEEP_HOLD_PHASE", "3")
        .output()
        .expect("maintain");
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{said}");
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    assert!(
        said.contains(
            "full cycle #1 (catch_up): cancelled: past its budget of 5 s (cancelled during phase 3"
        ),
        "{said}"
    );
    let nx = Nexus::open(&db).expect("open");
    let (status, error, phase): (String, String, i64) = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row(
            "SELECT status, error, phase FROM sleep_runs WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("run");
    assert_eq!(status, "cancelled");
    assert!(
        error.starts_with("past its budget of 5 s: cancelled during phase 3"),
        "{error}"
    );
    assert_eq!(phase, 2, "phases 1 and 2 committed, 3 rolled back");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A maintainer measures the memory's health again only when something
/// changed (another process committed, its own connection wrote) or the
/// measurement is older than `HEALTH_REUSE`; the plan is the same as a
/// fresh measurement's every time.
#[test]
fn the_health_measurement_is_reused_while_the_memory_is_unchanged() {
    use somnus::sleep::schedule::{HEALTH_REUSE, HealthCache, plan, plan_with};
    let dir = std::env::temp_dir().join(format!("somnus-health-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join("m.db");
    let mut nx = Nexus::open(&db).expect("open");
    events(&mut nx, 6);
    let now = Utc::now();
    full_run_at(&nx, now);
    let s = Schedule {
        idle: Duration::from_secs(60),
        ..Default::default()
    };
    let mut cache = HealthCache::default();
    let mut check = |nx: &mut Nexus, at: chrono::DateTime<Utc>, measured: u64| {
        let p = plan_with(nx, at, &s, &mut cache).expect("plan");
        assert_eq!(cache.measured, measured, "at {at}");
        assert_eq!(p, plan(nx, at, &s).expect("fresh plan"));
    };
    check(&mut nx, now, 1);
    check(&mut nx, now + D::seconds(30), 1);
    // another process commits
    let mut other = Nexus::open(&db).expect("open");
    events(&mut other, 1);
    check(&mut nx, now + D::seconds(31), 2);
    check(&mut nx, now + D::seconds(32), 2);
    // this connection writes
    let r = nx
        .kip(r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Chat:own"} SET ATTRIBUTES { start_time: "2026-11-24T10:00:00Z", content_summary: "own" } } }"#)
        .to_json();
    assert!(r.get("error").is_none(), "{r}");
    check(&mut nx, now + D::seconds(33), 3);
    // time alone
    let later = now + D::from_std(HEALTH_REUSE).expect("duration") + D::seconds(60);
    check(&mut nx, later, 4);
    check(&mut nx, later + D::seconds(1), 4);
    drop(other);
    drop(nx);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A threshold-triggered cycle runs the phase that addresses its trigger
/// (issue 39, harm 6): a quick cycle of phases 1–2 alone could not lower
/// an Unsorted backlog, orphans or stale Events.
#[test]
fn a_threshold_cycle_runs_the_phases_that_address_its_targets() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let s = Schedule {
        idle: Duration::from_secs(3600),
        quick_every: Duration::from_secs(0),
        ..Default::default()
    };
    let r = nx
        .kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"#)
        .to_json();
    assert!(r.get("error").is_none(), "{r}");
    for i in 0..25 {
        let r = nx
            .kip(&format!(
                r#"UPSERT {{ CONCEPT ?n {{ {{type: "Note", name: "Sourdough note {i}"}} SET ATTRIBUTES {{ description: "sourdough starter feeding and baking" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
            ))
            .to_json();
        assert!(r.get("error").is_none(), "{r}");
    }
    events(&mut nx, 1);
    full_run_at(&nx, Utc::now() - D::minutes(5));
    let d = due(&mut nx, Utc::now(), &s).expect("due").expect("quick");
    assert_eq!((d.scope, d.trigger), (Scope::Quick, "threshold"), "{d:?}");
    assert_eq!(d.targets, vec!["unsorted".to_string()], "{d:?}");
    let line = somnus::sleep::schedule::run_due(&mut nx, &s, Duration::from_secs(600), None)
        .expect("run")
        .expect("ran");
    assert!(line.starts_with("quick cycle #"), "{line}");
    let runs = somnus::sleep::cycle::runs(&nx, 1).expect("runs");
    let report = somnus::sleep::cycle::report(&nx, runs[0].run)
        .expect("report")
        .expect("kept");
    let phases: Vec<u8> = report.phases.iter().map(|p| p.phase).collect();
    assert_eq!(phases, vec![1, 2, 3, 13], "{:?}", report.phases);
    // and phase 3 acted on the backlog it was called for
    assert!(
        report.phases[2]
            .lines
            .iter()
            .any(|l| l.contains("Unsorted")),
        "{:?}",
        report.phases[2].lines
    );
}

/// Scheduled cycles run with the memory's saved parameters (issue 39,
/// build 3); a saved value that cannot be applied is said in the report.
#[test]
fn scheduled_cycles_use_the_memorys_saved_parameters() {
    let mut nx = Nexus::open_in_memory().expect("open");
    events(&mut nx, 2);
    let who = somnus::audit::Who {
        actor: "ops-lead".into(),
        trigger: "test".into(),
        reason: None,
    };
    let p = somnus::sleep::Params::default()
        .with_json(&serde_json::json!({"stale_event_threshold_days": 3, "archive_threshold": 0.2}))
        .expect("params");
    let saved = somnus::sleep::params::save(&mut nx, &p, &who).expect("save");
    assert_eq!(saved.len(), 2, "{saved:?}");
    let s = Schedule::default();
    let line = somnus::sleep::schedule::run_due(&mut nx, &s, Duration::from_secs(600), None)
        .expect("run")
        .expect("a catch-up cycle");
    assert!(line.starts_with("full cycle #"), "{line}");
    let run = somnus::sleep::cycle::runs(&nx, 1).expect("runs")[0].run;
    let rep = somnus::sleep::cycle::report(&nx, run)
        .expect("report")
        .expect("kept");
    assert_eq!(rep.params.stale_event_threshold_days, 3);
    assert_eq!(rep.params.archive_threshold, 0.2);
    // a value saved by an older somnus, or out of range, is left out and said
    nx.connection_for_checks()
        .expect("sqlite")
        .execute(
            "UPDATE concepts SET attributes = json_set(attributes, '$.sleep_parameters', json('{\"stale_event_threshold_days\": 5, \"dream_depth\": 3, \"archive_threshold\": 7}')) WHERE type = 'Person' AND name = '$system'",
            [],
        )
        .expect("edit");
    let saved = somnus::sleep::params::saved(&nx).expect("saved");
    assert_eq!(saved.params.stale_event_threshold_days, 5);
    assert_eq!(
        saved.params.archive_threshold,
        somnus::sleep::Params::default().archive_threshold
    );
    assert_eq!(saved.problems.len(), 2, "{:?}", saved.problems);
    let o = somnus::sleep::Options::saved(&nx, Scope::Daydream, "2026-11-20T03:00:00Z")
        .expect("options");
    let rep =
        somnus::sleep::run(&mut nx, &o, &mut somnus::sleep::Heuristic, None, None).expect("cycle");
    assert!(
        rep.issues.iter().any(|i| i.contains("dream_depth")),
        "{:?}",
        rep.issues
    );
}

/// The sleep-mode trigger "conversation session end": a session that
/// wrote calls a daydream once, a burst of writes a quick cycle; one that
/// wrote nothing calls nothing.
#[test]
fn a_session_end_calls_one_post_session_cycle() {
    use somnus::sleep::schedule::{last_session_end, session_ended};
    let tick = || {
        std::thread::sleep(Duration::from_millis(5));
        Utc::now()
    };
    let mut nx = Nexus::open_in_memory().expect("open");
    let s = Schedule {
        idle: Duration::from_secs(3600),
        burst: 20,
        ..Default::default()
    };
    events(&mut nx, 2);
    full_run_at(&nx, tick());
    // a session that wrote nothing since the last cycle calls nothing
    let t = tick();
    session_ended(&mut nx, "scribe", Some("s-1"), t).expect("end");
    assert_eq!(due(&mut nx, t + D::seconds(1), &s).expect("due"), None);
    // the agent writes, then its session ends: a daydream (no idle wait)
    tick();
    events(&mut nx, 3);
    let t = tick();
    session_ended(&mut nx, "scribe", Some("s-2\u{1b}[31m"), t).expect("end");
    let end = last_session_end(&nx).expect("recorded");
    assert_eq!(
        end.session.as_deref(),
        Some("s-2[31m"),
        "no control characters"
    );
    let d = due(&mut nx, t + D::seconds(1), &s)
        .expect("due")
        .expect("post-session");
    assert_eq!(
        (d.scope, d.trigger),
        (Scope::Daydream, "post_session"),
        "{d:?}"
    );
    assert!(d.reason.contains("scribe's session s-2"), "{}", d.reason);
    // not before the session ended
    assert_eq!(due(&mut nx, t - D::seconds(1), &s).expect("due"), None);
    // once a cycle ran after it, it calls nothing more
    full_run_at(&nx, tick());
    assert_eq!(due(&mut nx, tick() + D::seconds(1), &s).expect("due"), None);
    // a burst of writes: a quick cycle
    for i in 0..25 {
        let r = nx
            .kip(&format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Burst:{i}"}} SET ATTRIBUTES {{ start_time: "2026-11-24T10:00:00Z" }} }} }}"#
            ))
            .to_json();
        assert!(r.get("error").is_none(), "{r}");
    }
    let t = tick();
    session_ended(&mut nx, "scribe", None, t).expect("end");
    let d = due(&mut nx, t + D::seconds(1), &s)
        .expect("due")
        .expect("post-session");
    assert_eq!(
        (d.scope, d.trigger),
        (Scope::Quick, "post_session"),
        "{d:?}"
    );
    assert!(d.reason.contains("a burst"), "{}", d.reason);
    // an empty name is refused
    assert!(session_ended(&mut nx, "  ", None, t).is_err());
}

/// An MCP client that wrote and went away ended its session: the
/// maintainer's next check runs a post-session cycle; `somnus
/// session-end` does the same from a shell, and `maintain --once` runs it.
#[test]
fn an_mcp_session_that_wrote_is_followed_by_a_post_session_cycle() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let dir = std::env::temp_dir().join(format!("somnus-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    {
        let mut nx = Nexus::open(&db).expect("open");
        events(&mut nx, 1);
        full_run_at(&nx, Utc::now() - D::seconds(5));
    }
    let pool = somnus::server::pool::Pool::new(Nexus::open(&db).expect("open"), vec![]);
    let rt = somnus::server::runtime(Some(1)).expect("runtime");
    rt.block_on(async {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server);
        let task = tokio::spawn(somnus::server::mcp::serve_io(
            pool, "scribe", server_in, server_out,
        ));
        let (client_in, mut client_out) = tokio::io::split(client);
        let mut lines = BufReader::new(client_in).lines();
        for msg in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_kip","arguments":{"command":"UPSERT { CONCEPT ?e { {type: \"Event\", name: \"Chat:late\"} SET ATTRIBUTES { content_summary: \"said goodbye\" } } }"}}}"#,
        ] {
            client_out.write_all(msg.as_bytes()).await.expect("send");
            client_out.write_all(b"\n").await.expect("send");
        }
        // until the write is answered
        loop {
            let line = lines.next_line().await.expect("read").expect("a line");
            if line.contains("\"id\":2") {
                assert!(!line.contains("\"isError\":true"), "{line}");
                break;
            }
        }
        drop(client_out);
        drop(lines);
        task.await.expect("join").expect("served");
    });
    let mut nx = Nexus::open(&db).expect("open");
    let end = somnus::sleep::schedule::last_session_end(&nx).expect("recorded at disconnect");
    assert_eq!(end.actor, "scribe");
    let d = due(&mut nx, Utc::now() + D::seconds(1), &Schedule::default())
        .expect("due")
        .expect("post-session");
    assert_eq!(d.trigger, "post_session", "{d:?}");
    drop(nx);
    let bin = env!("CARGO_BIN_EXE_somnus");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin)
            .args(["--db", &db.to_string_lossy()])
            .args(args)
            .output()
            .expect("run");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = run(&["maintain", "--once"]);
    assert!(said.contains("post_session"), "{said}");
    let said = run(&["maintain", "--once"]);
    assert!(said.contains("nothing is due"), "{said}");
    let said = run(&["session-end", "--actor", "scribe", "--session", "s-9"]);
    assert!(said.contains("session of scribe ended"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A write in the very millisecond a session started is one of its writes
/// (times are stored to the millisecond).
#[test]
fn a_write_in_the_millisecond_a_session_started_counts() {
    let mut nx = Nexus::open_in_memory().expect("open");
    events(&mut nx, 1);
    let entries = somnus::audit::list(
        nx.db(),
        &somnus::audit::Filter {
            limit: 1,
            ..Default::default()
        },
    )
    .expect("audit");
    let at = chrono::DateTime::parse_from_rfc3339(&entries[0].at)
        .expect("a time")
        .with_timezone(&Utc);
    let actor = entries[0].actor.clone();
    assert_eq!(
        somnus::sleep::schedule::writes_by_since(&nx, &actor, at),
        1,
        "the write at {at} by {actor}"
    );
}
