//! Every parameter of the sleep cycle (the console's parameter table)
//! changes what the cycle does: each on its own small memory, run with the
//! default and with another value, and the difference asserted.
//! (`unsorted_max_backlog` and `orphan_max_count`:
//! tests/sleep_keeps.rs, `backlog_and_orphan_limits_decide_what_is_flagged`.)

use serde_json::{Map, Value, json};
use somnus::protocol::{Outcome, Request};
use somnus::review::proposals;
use somnus::sleep::{self, Heuristic, Options, Params, Scope};
use somnus::{Nexus, Response};

const NOW: &str = "2026-11-20T03:00:00Z";

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let req = Request::command(cmd).with_params(Map::new());
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

/// The memory `setup` builds, after one full cycle with `params` set over
/// the defaults.
fn run(setup: fn(&mut Nexus), params: Value) -> (Nexus, sleep::Report) {
    let mut nx = Nexus::open_in_memory().expect("open");
    setup(&mut nx);
    let mut o = Options::new(Scope::Full, NOW);
    o.params = Params::default().with_json(&params).expect("params");
    let rep = sleep::run(&mut nx, &o, &mut Heuristic, None, None).expect("cycle");
    (nx, rep)
}

fn items(nx: &Nexus, rep: &sleep::Report, class: &str) -> Vec<proposals::Item> {
    rep.proposal
        .map(|id| proposals::items(nx, id).expect("items"))
        .unwrap_or_default()
        .into_iter()
        .filter(|i| i.class == class)
        .collect()
}

fn topics(nx: &mut Nexus) {
    kip(
        nx,
        r#"UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?p { {type: "$PropositionType", name: "interested_in"} SET ATTRIBUTES { description: "an interest" } }
  CONCEPT ?ada { {type: "Person", name: "Ada"} }
}"#,
    );
}

fn interest(nx: &mut Nexus, topic: &str, meta: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?o {{ {{type: "Topic", name: "{topic}"}} }}
  CONCEPT ?ada {{ {{type: "Person", name: "Ada"}} SET PROPOSITIONS {{ ("interested_in", ?o) WITH METADATA {meta} }} }} }}"#
        ),
    );
}

fn strength(nx: &mut Nexus, topic: &str) -> f64 {
    kip(
        nx,
        &format!(
            r#"FIND(?l.metadata.memory_strength) WHERE {{ ?l ({{type: "Person", name: "Ada"}}, "interested_in", ?o) FILTER(?o.name == "{topic}") }}"#
        ),
    )[0]
    .as_f64()
    .expect("strength")
}

/// A weak, faint interest last seen 100 days ago: relevance
/// 0.45 × e^(−0.03 × 100) × 1.2 ≈ 0.027.
fn faint(nx: &mut Nexus) {
    topics(nx);
    interest(
        nx,
        "Curling",
        r#"{ confidence: 0.45, memory_strength: 0.1, observed_at: "2026-08-12T03:00:00Z" }"#,
    );
}

/// A pending Event that started ten days before the cycle.
fn ten_day_old_event(nx: &mut Nexus) {
    kip(
        nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Chat about the weather"}
  SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-11-10T03:00:00Z", content_summary: "weather small talk" } } }"#,
    );
}

#[test]
fn stale_event_threshold_days_decides_which_events_are_stale() {
    let (_, rep) = run(ten_day_old_event, json!({}));
    assert_eq!(rep.count("stale_events"), 1);
    let (_, rep) = run(ten_day_old_event, json!({"stale_event_threshold_days": 14}));
    assert_eq!(rep.count("stale_events"), 0);
}

#[test]
fn memory_strength_decay_factor_sets_how_fast_strength_fades() {
    fn setup(nx: &mut Nexus) {
        topics(nx);
        // three weeks past the stale threshold
        interest(
            nx,
            "Chess",
            r#"{ confidence: 0.8, memory_strength: 0.8, observed_at: "2026-10-23T03:00:00Z" }"#,
        );
    }
    let (mut a, _) = run(setup, json!({}));
    let (mut b, _) = run(setup, json!({"memory_strength_decay_factor": 0.5}));
    assert!((strength(&mut a, "Chess") - 0.8 * 0.95f64.powi(3)).abs() < 1e-9);
    assert!((strength(&mut b, "Chess") - 0.8 * 0.5f64.powi(3)).abs() < 1e-9);
}

#[test]
fn relevance_lambda_sets_how_fast_relevance_falls() {
    let (a, rep) = run(faint, json!({}));
    assert_eq!(items(&a, &rep, "archive").len(), 1);
    // a slow decay rate: still relevant after 100 days
    let (b, rep) = run(faint, json!({"relevance_lambda": 0.001}));
    assert!(items(&b, &rep, "archive").is_empty());
}

#[test]
fn archive_threshold_sets_the_relevance_below_which_facts_are_proposed() {
    let (b, rep) = run(faint, json!({"archive_threshold": 0.01}));
    assert!(items(&b, &rep, "archive").is_empty());
    let (a, rep) = run(faint, json!({"archive_threshold": 0.05}));
    assert_eq!(items(&a, &rep, "archive").len(), 1);
}

#[test]
fn fact_archival_age_days_sets_how_old_a_fact_must_be() {
    let (b, rep) = run(faint, json!({"fact_archival_age_days": 200}));
    assert!(items(&b, &rep, "archive").is_empty());
}

#[test]
fn speculative_ttl_days_sets_when_an_unconfirmed_guess_is_proposed() {
    fn setup(nx: &mut Nexus) {
        topics(nx);
        interest(
            nx,
            "Opera",
            r#"{ confidence: 0.3, observed_at: "2026-10-11T03:00:00Z" }"#,
        );
    }
    let (a, rep) = run(setup, json!({}));
    let it = items(&a, &rep, "archive");
    assert_eq!(it.len(), 1);
    assert!(it[0].title.contains("speculative TTL"), "{}", it[0].title);
    let (b, rep) = run(setup, json!({"speculative_ttl_days": 60}));
    assert!(items(&b, &rep, "archive").is_empty());
}

fn fulfilled(nx: &mut Nexus) {
    kip(
        nx,
        r#"UPSERT { CONCEPT ?c { {type: "Commitment", name: "Send the slides"}
  SET ATTRIBUTES { status: "fulfilled", fulfilled_at: "2026-11-01T00:00:00Z", due_at: "2026-11-02T00:00:00Z" } } }"#,
    );
}

#[test]
fn commitment_decay_days_sets_when_a_closed_commitment_is_reclaimable() {
    let exp = |nx: &mut Nexus| {
        kip(
            nx,
            r#"FIND(?c.metadata.expires_at) WHERE { ?c {type: "Commitment", name: "Send the slides"} }"#,
        )[0]
        .clone()
    };
    let (mut a, _) = run(fulfilled, json!({}));
    assert_eq!(exp(&mut a), json!("2027-01-30T00:00:00Z"));
    let (mut b, _) = run(fulfilled, json!({"commitment_decay_days": 25}));
    assert_eq!(exp(&mut b), json!("2026-11-26T00:00:00Z"));
}

/// A tool call's log: archived with a TTL (any other Event archived with
/// nothing extracted is kept whole).
fn ten_day_old_tool_call(nx: &mut Nexus) {
    kip(
        nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Weather lookup"}
  SET ATTRIBUTES { event_class: "ToolUse", start_time: "2026-11-10T03:00:00Z", content_summary: "weather api call" } } }"#,
    );
}

#[test]
fn archive_ttl_days_sets_how_long_an_archived_tool_call_is_kept() {
    let ttl = |params: Value| {
        let (nx, rep) = run(ten_day_old_tool_call, params);
        let it = items(&nx, &rep, "archive");
        assert_eq!(it.len(), 1, "{:?}", rep.phases);
        it[0].params["archive_expires_at"].clone()
    };
    assert_eq!(ttl(json!({})), json!("2026-12-20T03:00:00Z"));
    assert_eq!(
        ttl(json!({"archive_ttl_days": 90})),
        json!("2027-02-18T03:00:00Z")
    );
}

#[test]
fn task_ttl_days_sets_how_long_a_finished_sleep_task_stays() {
    fn setup(nx: &mut Nexus) {
        kip(
            nx,
            r#"UPSERT { CONCEPT ?t { {type: "SleepTask", name: "look at the inbox"}
  SET ATTRIBUTES { target_type: "Domain", target_name: "Unsorted", requested_action: "review", reason: "test", status: "pending", priority: 1 }
  SET PROPOSITIONS { ("assigned_to", {type: "Person", name: "$system"}) } } }"#,
        );
    }
    let exp = |nx: &mut Nexus| {
        kip(
            nx,
            r#"FIND(?t.metadata.expires_at) WHERE { ?t {type: "SleepTask", name: "look at the inbox"} }"#,
        )[0]
        .clone()
    };
    let (mut a, _) = run(setup, json!({}));
    assert_eq!(exp(&mut a), json!("2026-12-04T03:00:00Z"));
    let (mut b, _) = run(setup, json!({"task_ttl_days": 1}));
    assert_eq!(exp(&mut b), json!("2026-11-21T03:00:00Z"));
}

#[test]
fn cleanup_cap_bounds_the_hard_deletions_of_one_cycle() {
    fn setup(nx: &mut Nexus) {
        for i in 0..4 {
            kip(
                nx,
                &format!(
                    r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Lookup {i}"}}
  SET ATTRIBUTES {{ event_class: "ToolUse", start_time: "2026-09-01T00:00:00Z", content_summary: "lookup", consolidation_status: "completed", salience_score: 5 }} }}
  WITH METADATA {{ expires_at: "2026-10-01T00:00:00Z" }} }}"#
                ),
            );
        }
    }
    let (_, rep) = run(setup, json!({}));
    assert_eq!(rep.count("deleted_nodes"), 4);
    let (_, rep) = run(setup, json!({"cleanup_cap": 1}));
    assert_eq!(rep.count("deleted_nodes"), 1);
}

#[test]
fn proposal_cap_bounds_the_items_of_one_class() {
    fn setup(nx: &mut Nexus) {
        topics(nx);
        for t in ["Darts", "Bowls", "Quoits", "Skittles"] {
            interest(
                nx,
                t,
                r#"{ confidence: 0.3, observed_at: "2026-09-01T03:00:00Z" }"#,
            );
        }
    }
    let (a, rep) = run(setup, json!({}));
    assert_eq!(items(&a, &rep, "archive").len(), 4);
    let (b, rep) = run(setup, json!({"proposal_cap": 2}));
    assert_eq!(items(&b, &rep, "archive").len(), 2);
}

/// `inbox_batch` is how many Unsorted items one cycle files: the rest
/// wait, and a theme is found only among those read.
#[test]
fn inbox_batch_bounds_the_unsorted_items_one_cycle_files() {
    fn setup(nx: &mut Nexus) {
        for i in 0..6 {
            kip(
                nx,
                &format!(
                    r#"UPSERT {{ CONCEPT ?n {{ {{type: "Insight", name: "Tulip note {i}"}} SET ATTRIBUTES {{ content: "Planted tulips by the fence, bed {i}." }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
                ),
            );
        }
    }
    let filed = |nx: &Nexus, rep: &sleep::Report| {
        items(nx, rep, "domain")
            .iter()
            .find(|i| i.title.starts_with("New domain"))
            .map(|i| i.title.clone())
    };
    let (a, rep) = run(setup, json!({}));
    let all = filed(&a, &rep).expect("a domain for the tulips");
    assert!(all.contains("for 6 items"), "{all}");
    let (b, rep) = run(setup, json!({"inbox_batch": 4}));
    let some = filed(&b, &rep).expect("a domain for the tulips read");
    assert!(some.contains("for 4 items"), "{some}");
    // two are read: too few for a theme
    let (c, rep) = run(setup, json!({"inbox_batch": 2}));
    assert_eq!(filed(&c, &rep), None);
    assert!(
        Params::default()
            .with_json(&json!({"inbox_batch": 0}))
            .is_err()
    );
}

/// Processes saving different parameters at once: each one's value is
/// kept (the saved set is read and written in one transaction), none lost
/// to another's read-modify-write.
#[test]
fn parameters_saved_by_racing_processes_are_all_kept() {
    let dir = std::env::temp_dir().join(format!("somnus-params-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    drop(Nexus::open(&db).expect("open"));
    let sets = [
        r#"{"stale_event_threshold_days": 3}"#,
        r#"{"memory_strength_decay_factor": 0.9}"#,
        r#"{"speculative_ttl_days": 45}"#,
        r#"{"fact_archival_age_days": 200}"#,
        r#"{"archive_ttl_days": 60}"#,
        r#"{"proposal_cap": 30}"#,
    ];
    let bin = env!("CARGO_BIN_EXE_somnus");
    let outs: Vec<std::process::Output> = std::thread::scope(|sc| {
        let hs: Vec<_> = sets
            .iter()
            .map(|p| {
                let db = db.clone();
                sc.spawn(move || {
                    std::process::Command::new(bin)
                        .args(["--db", &db.to_string_lossy()])
                        .args(["sleep", "--save-params", "--params", p])
                        .output()
                        .expect("run")
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("join")).collect()
    });
    for o in &outs {
        assert!(o.status.success(), "{o:?}");
    }
    let nx = Nexus::open(&db).expect("open");
    let saved = sleep::params::saved(&nx).expect("saved");
    let mut keys = saved.keys.clone();
    keys.sort();
    assert_eq!(
        keys,
        [
            "archive_ttl_days",
            "fact_archival_age_days",
            "memory_strength_decay_factor",
            "proposal_cap",
            "speculative_ttl_days",
            "stale_event_threshold_days"
        ],
        "{:?}",
        saved.problems
    );
    let _ = std::fs::remove_dir_all(&dir);
}
