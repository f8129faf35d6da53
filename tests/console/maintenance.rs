//! Maintaining in the console: the Sleep pane (a cycle, its progress,
//! its parameters, the maintainer), the Health pane, and live traffic.

use super::*;

/// Starting a full cycle from the Sleep pane: every phase's gauge ends
/// full, the report is shown, the run is listed, and its proposal is in
/// Reflections.
#[test]
fn sleep_pane_runs_a_cycle_and_shows_its_report() {
    let mut a = app();
    alt(&mut a, '6');
    assert_eq!(a.tab, Tab::Sleep);
    a.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    insta::assert_snapshot!("sleep_idle", masked(screen(&mut a, 120, 36)));
    key(&mut a, KeyCode::Char('s'));
    let rep = a.sleep.report.clone().expect("a report");
    assert_eq!(rep.status, "completed");
    assert_eq!(rep.phases.len(), 13);
    assert_eq!(a.sleep.runs.len(), 1);
    insta::assert_snapshot!("sleep_done", masked(screen(&mut a, 120, 36)));
    assert_eq!(a.reflections.proposals.len(), 1);
    assert!(a.reflections.proposals[0].items.len() > 40);
}

/// The Sleep pane says who keeps the memory maintained, what comes next and
/// when, and lists past runs with what started them; with nobody, it says
/// so.
#[test]
fn sleep_pane_shows_who_maintains_the_memory_and_what_comes_next() {
    let mut a = app();
    alt(&mut a, '6');
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("none: cycles run when started"), "{s}");
    let pid = std::process::id() as i64;
    a.with_nexus(|nx| {
        let c = nx.connection_for_checks().expect("a SQLite memory");
        c.execute(
            "INSERT INTO sleep_runs(started_at, finished_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status) VALUES ('2026-11-25T03:00:00.000Z', '2026-11-25T03:00:09.000Z', 'full', 'catch_up: no full cycle has run on this memory yet', 'heuristic', '$system', 0, '2026-11-25T03:00:00Z', '{}', 'completed'),
             ('2026-11-25T09:00:00.000Z', '2026-11-25T09:00:01.000Z', 'daydream', 'idle: 6 Events wait for scoring', 'heuristic', '$system', 0, '2026-11-25T09:00:00Z', '{}', 'completed')",
            [],
        )
        .expect("runs");
        c.execute(
            "INSERT INTO maintainers(pid, kind, started_at, beat_at, settings, next_at, next, last) VALUES (?1, 'serve', '2026-11-25T02:59:00Z', '2026-11-25T09:00:01Z', ?2, '2099-11-25T15:00:00Z', 'full (scheduled): every 12.0 h', NULL)",
            rusqlite::params![pid, r#"{"full_every_hours": 12.0, "idle_secs": 1800, "budget_secs": 1800}"#],
        )
        .expect("holder");
    });
    key(&mut a, KeyCode::Char('r'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains(&format!("by somnus serve (pid {pid})")), "{s}");
    assert!(s.contains("next full (scheduled)"), "{s}");
    assert!(s.contains("at MM-DD hh:mm UTC"), "{s}");
    assert!(s.contains("every 12.0 h"), "{s}");
    assert!(s.contains("full every 12 h · budget 30 m"), "{s}");
    assert!(s.contains("daydream after 30 m quiet"), "{s}");
    assert!(s.contains("✓ #2   daydream idle     MM-DD hh:mm"), "{s}");
    assert!(s.contains("✓ #1   full     catch-up MM-DD hh:mm"), "{s}");
    // the 80-column screen keeps it readable
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("by somnus serve"), "{s}");
}

/// The pane while a cycle runs, fed progress events as the job sends them.
#[test]
fn sleep_pane_draws_progress_while_running() {
    use somnus::tui::component::{Action, Component, JobOutput};
    let mut pane = somnus::tui::sleep::SleepPane::new();
    let started = pane.update(&Action::Command("Start a full sleep cycle"));
    assert!(matches!(started.as_slice(), [Action::Spawn(_)]));
    assert!(pane.is_running());
    let ev = |phase: u8, step: &str, done: u64, total: u64, log: Option<&str>, phase_done: bool| {
        Action::Done(JobOutput::SleepProgress(somnus::sleep::Progress {
            run: 1,
            phase,
            name: somnus::sleep::cycle::phase_name(phase),
            step: step.into(),
            done,
            total,
            elapsed_ms: 1200,
            log: log.map(str::to_string),
            phase_done,
        }))
    };
    for p in 1..=4 {
        pane.update(&ev(p, "done", 0, 0, Some(&format!("phase {p} done")), true));
    }
    pane.update(&ev(
        5,
        "stale Events",
        80,
        200,
        Some("consolidating"),
        false,
    ));
    let mut t = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
    t.draw(|f| pane.render(f, f.area())).expect("draw");
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..30 {
        for x in 0..100 {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    insta::assert_snapshot!("sleep_running", out);
    // Esc cancels through the shared flag
    let acts = pane.handle_key(ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Esc,
        KeyModifiers::NONE,
    ));
    assert!(matches!(acts.as_slice(), [Action::Status(_)]));
    pane.update(&Action::Done(JobOutput::SleepDone(Ok(Box::new(
        somnus::sleep::Report {
            status: "cancelled".into(),
            ..Default::default()
        },
    )))));
    assert!(!pane.is_running());
}

/// Parameters and reasoner chosen in the Sleep pane: a value typed into the
/// parameter popup is the one the cycle runs with (its report says so); a
/// value out of range is refused.
#[test]
fn sleep_pane_runs_with_the_parameters_chosen() {
    let mut a = app();
    alt(&mut a, '6');
    a.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    key(&mut a, KeyCode::Char('p'));
    // stale_event_threshold_days is the first row: type 3
    key(&mut a, KeyCode::Enter);
    typed(&mut a, "3\n");
    // the decay factor (second row) cannot leave (0, 1]
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    typed(&mut a, "1.5\n");
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains("memory_strength_decay_factor must be between 0.01 and 1"),
        "{s}"
    );
    key(&mut a, KeyCode::Esc);
    // one step down with `-`: 0.95 → 0.9
    key(&mut a, KeyCode::Char('-'));
    insta::assert_snapshot!("sleep_params", masked(screen(&mut a, 120, 36)));
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.sleep.params.stale_event_threshold_days, 3);
    assert_eq!(a.sleep.params.memory_strength_decay_factor, 0.9);
    // the LLM reasoner is not configured here: it says what it needs
    key(&mut a, KeyCode::Char('m'));
    assert!(!a.sleep.llm);
    assert!(
        a.status
            .as_ref()
            .is_some_and(|(s, _)| s.contains("SOMNUS_LLM_URL"))
    );
    key(&mut a, KeyCode::Char('s'));
    let rep = a.sleep.report.clone().expect("a report");
    assert_eq!(rep.status, "completed");
    assert_eq!(rep.params.stale_event_threshold_days, 3);
    assert_eq!(rep.params.memory_strength_decay_factor, 0.9);
    assert!(
        rep.markdown().contains("stale_event_threshold_days = 3"),
        "{}",
        rep.markdown()
    );
}

/// The Health pane: the table against its targets after three cycles on
/// different nights, each metric's trend, and Enter opening the query
/// behind a number in the Query pane.
#[test]
fn health_pane_shows_targets_and_trends() {
    let mut a = app();
    for night in [
        "2026-11-10T03:00:00Z",
        "2026-11-15T03:00:00Z",
        "2026-11-20T03:00:00Z",
    ] {
        a.with_nexus(|nx| {
            let rep = somnus::sleep::run(
                nx,
                &somnus::sleep::Options::new(somnus::sleep::Scope::Daydream, night),
                &mut somnus::sleep::Heuristic,
                None,
                None,
            )
            .expect("cycle");
            assert_eq!(rep.status, "completed");
            assert!(rep.health.contains_key("stale_events"));
        });
    }
    a.health.clock = Some("2026-11-22T03:00:00Z".into());
    alt(&mut a, '7');
    assert_eq!(a.tab, Tab::Health);
    assert_eq!(
        a.health.history.len(),
        3,
        "{:?}",
        a.health.health.as_ref().map(|h| h.at.clone())
    );
    let h = a.health.health.clone().expect("measured");
    assert!(h.get("stale_events").is_some() && h.get("superseded").is_some());
    // stale Events grow as the clock moves on: the trend rises
    let stale: Vec<f64> = a
        .health
        .history
        .iter()
        .map(|p| p.values["stale_events"])
        .collect();
    assert!(stale[0] <= stale[2], "{stale:?}");
    insta::assert_snapshot!("health", screen(&mut a, 120, 36));
    let row = h
        .metrics
        .iter()
        .position(|m| m.key == "stale_events")
        .expect("row");
    for _ in 0..row {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.tab, Tab::Query);
    let text = a.workbench.editor.lines().join("\n");
    assert!(text.contains("consolidated_to"), "{text}");
}

#[test]
fn sparkline_text_spans_the_series() {
    use somnus::tui::health::spark_text;
    assert_eq!(spark_text(&[0.0, 7.0]), "▁█");
    assert_eq!(spark_text(&[2.0, 2.0, 2.0]), "▄▄▄");
    assert_eq!(spark_text(&[1.0, f64::NAN, 3.0]), "▁ █");
}

/// Quitting while a cycle runs asks first; staying keeps the cycle; quitting
/// cancels it and waits for it to stop.
#[test]
fn quitting_during_a_cycle_asks_and_cancels_it_first() {
    use somnus::tui::component::{Action, Component, JobOutput};
    let mut a = app();
    alt(&mut a, '6');
    // a cycle under way (its job not delivered yet)
    let _ = a.sleep.update(&Action::Command("Start a full sleep cycle"));
    assert!(a.sleep.is_running());
    ctrl(&mut a, 'q');
    assert!(!a.quit);
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains("Quit the console?") && s.contains("sleep cycle is running"),
        "{s}"
    );
    insta::assert_snapshot!("quit_during_cycle", s);
    key(&mut a, KeyCode::Char('n'));
    assert!(!a.quit && a.quit_confirm.is_none() && a.sleep.is_running());
    key(&mut a, KeyCode::Char('q'));
    key(&mut a, KeyCode::Char('y'));
    assert!(!a.quit, "not before the cycle has stopped");
    a.on_job(JobOutput::SleepDone(Ok(Box::new(somnus::sleep::Report {
        status: "cancelled".into(),
        ..Default::default()
    }))));
    assert!(a.quit);
    // with nothing running, Ctrl+Q quits at once
    let mut b = app();
    ctrl(&mut b, 'q');
    assert!(b.quit);
}

/// The Sleep pane's parameters saved for the memory (issue 39, build 3):
/// `S` saves them, audited as the operator; a new console opens with them,
/// and the scheduled cycles run with them.
#[test]
fn sleep_pane_saves_the_parameters_for_every_cycle() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('p'));
    key(&mut a, KeyCode::Enter);
    typed(&mut a, "3\n");
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Not saved"), "{s}");
    key(&mut a, KeyCode::Char('S'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("this memory's saved parameters"), "{s}");
    assert!(
        a.status
            .as_ref()
            .is_some_and(|(s, _)| s.contains("stale_event_threshold_days")),
        "{:?}",
        a.status
    );
    let (saved, who) = a.with_nexus(|nx| {
        let saved = somnus::sleep::params::saved(nx).expect("saved");
        let who = nx
            .audit_list(&Default::default())
            .expect("audit")
            .into_iter()
            .next()
            .map(|e| (e.actor, e.trigger))
            .expect("an entry");
        (saved, who)
    });
    assert_eq!(saved.params.stale_event_threshold_days, 3);
    assert_eq!(saved.keys, vec!["stale_event_threshold_days".to_string()]);
    assert_eq!(
        who,
        (
            "operator".to_string(),
            "console: save sleep parameters".to_string()
        )
    );
    // `u` goes back to what is saved
    key(&mut a, KeyCode::Char('D'));
    key(&mut a, KeyCode::Char('u'));
    assert_eq!(a.sleep.params.stale_event_threshold_days, 3);
    // an agent cannot change them
    let v = a.with_nexus(|nx| {
        nx.kip(r#"UPSERT { CONCEPT ?s { {type: "Person", name: "$system"} SET ATTRIBUTES { sleep_parameters: { archive_threshold: 0.99 } } } }"#)
            .to_json()
    });
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
}

/// Parameters another process saved after the pane read them are not
/// overwritten unseen: the save is refused, the saved ones are shown again
/// beside the operator's, and a second `S` saves the operator's over them.
#[test]
fn sleep_pane_refuses_to_overwrite_parameters_saved_elsewhere() {
    let mut a = app();
    alt(&mut a, '6');
    // (the pane has read the saved parameters: none)
    let _ = screen(&mut a, 120, 36);
    a.with_nexus(|nx| {
        let p = somnus::sleep::Params::default()
            .with_json(&serde_json::json!({"archive_ttl_days": 60}))
            .expect("params");
        let who = somnus::audit::Who {
            actor: "ops-script".into(),
            trigger: "test".into(),
            reason: None,
        };
        somnus::sleep::params::save(nx, &p, &who).expect("saved elsewhere");
    });
    key(&mut a, KeyCode::Char('p'));
    key(&mut a, KeyCode::Enter);
    typed(&mut a, "3\n");
    key(&mut a, KeyCode::Char('S'));
    let _ = screen(&mut a, 120, 36);
    let saved = a.with_nexus(|nx| somnus::sleep::params::saved(nx).expect("saved"));
    assert_eq!(
        saved.keys,
        vec!["archive_ttl_days".to_string()],
        "not overwritten"
    );
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("changed elsewhere"), "{s}");
    // seen now: saved over them
    key(&mut a, KeyCode::Char('S'));
    let _ = screen(&mut a, 120, 36);
    let saved = a.with_nexus(|nx| somnus::sleep::params::saved(nx).expect("saved"));
    assert_eq!(saved.params.stale_event_threshold_days, 3);
}

/// W5: Enter on a Health number runs the query of exactly the elements
/// behind it (every orphan type, not the first one's), at once.
#[test]
fn the_query_behind_a_health_number_finds_what_it_counted() {
    let mut a = app();
    alt(&mut a, '7');
    let h = a.health.health.clone().expect("measured");
    for key_name in ["orphans", "stale_events"] {
        let m = h.get(key_name).expect("metric").clone();
        assert!(!m.items.is_empty(), "{key_name}: nothing behind it");
        alt(&mut a, '7');
        let row = h
            .metrics
            .iter()
            .position(|x| x.key == key_name)
            .expect("row");
        key(&mut a, KeyCode::Home);
        for _ in 0..row {
            key(&mut a, KeyCode::Down);
        }
        key(&mut a, KeyCode::Enter);
        assert_eq!(a.tab, Tab::Query);
        let s = screen(&mut a, 200, 60);
        assert!(
            s.contains(&format!("{} rows", m.items.len())),
            "{key_name}: {s}"
        );
        for it in &m.items {
            let name = match key_name {
                "orphans" => it.split_once(": ").map_or(it.as_str(), |(_, n)| n),
                _ => it.as_str(),
            };
            let name: String = name.chars().take(20).collect();
            assert!(s.contains(&name), "{key_name}: {name} not in {s}");
        }
    }
}

/// A maintainer killed mid-cycle writes nothing that would tell: the Sleep
/// pane looks again by itself while it shows a live process, so within
/// two seconds the killed one is gone from it and its cycle reads as
/// interrupted, not running.
#[test]
fn sleep_pane_drops_a_killed_maintainer_within_seconds() {
    let mut a = app();
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("a process to kill");
    let pid = child.id() as i64;
    a.with_nexus(|nx| {
        let c = nx.connection_for_checks().expect("a SQLite memory");
        c.execute(
            "INSERT INTO sleep_runs(started_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status) VALUES ('2026-11-25T03:00:00.000Z', 'full', 'scheduled: every 12.0 h', 'heuristic', '$system', ?1, '2026-11-25T03:00:00Z', '{}', 'running')",
            [pid],
        )
        .expect("run");
        c.execute(
            "INSERT INTO maintainers(pid, kind, started_at, beat_at, settings, next_at, next, last) VALUES (?1, 'maintain', '2026-11-25T02:59:00Z', '2026-11-25T03:00:00Z', ?2, NULL, NULL, NULL)",
            rusqlite::params![pid, r#"{"full_every_hours": 12.0, "idle_secs": 1800, "budget_secs": 1800}"#],
        )
        .expect("holder");
    });
    alt(&mut a, '6');
    a.drain();
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains(&format!("by somnus maintain (pid {pid})")),
        "{s}"
    );
    assert!(s.contains("running #1 full now"), "{s}");
    child.kill().expect("kill");
    child.wait().expect("reaped");
    for _ in 0..20 {
        a.tick();
    }
    a.drain();
    let s = screen(&mut a, 120, 36);
    assert!(!s.contains("by somnus maintain"), "{s}");
    assert!(!s.contains("running #1"), "{s}");
    assert!(s.contains("? #1"), "{s}");
}

/// An agent's request as a server logs it: run through the engine, its
/// answer's elements kept, at a fixed time and latency.
fn agent_asks(a: &mut App, n: u32, caller: &str, command: &str, params: serde_json::Value) {
    use somnus::protocol::{Arguments, Method, Request};
    a.with_nexus(|nx| {
        let mut req = Request::new(
            Method::ExecuteKip,
            Arguments {
                command: Some(command.into()),
                parameters: params.as_object().cloned().unwrap_or_default(),
                ..Default::default()
            },
        );
        req.actor.id = caller.into();
        let (_, served) = nx.execute_served(&req);
        let at = format!("2026-11-28T10:00:{n:02}.000Z");
        let mut logged = somnus::audit::reads::Logged::all(served, caller, "http", &at);
        for l in &mut logged {
            l.served.micros = 300 * u64::from(n) + 120;
        }
        nx.record_reads(&logged).expect("logged");
    });
}

/// Live traffic: agents' requests appear as they arrive (the newest
/// followed), a pause holds new ones, the filter narrows, Enter loads a
/// request with its parameters into the workbench and runs it again, and
/// the most read and never read lists lead to why.
#[test]
fn traffic_shows_requests_as_they_arrive_and_leads_to_why() {
    let mut a = app();
    let find = "FIND(?p.name) WHERE { ?p {type: \"Person\"} FILTER(?p.name == :name) }";
    agent_asks(
        &mut a,
        1,
        "scout",
        find,
        serde_json::json!({"name": "Mira Chen"}),
    );
    agent_asks(
        &mut a,
        2,
        "scout",
        "SEARCH CONCEPT \"Mira\" WITH TYPE \"Person\" LIMIT 5",
        serde_json::json!({}),
    );
    agent_asks(
        &mut a,
        3,
        "planner",
        "FIND(?x.name WHERE",
        serde_json::json!({}),
    );
    alt(&mut a, '9');
    assert_eq!(a.tab, Tab::Traffic);
    let shown = screen(&mut a, 120, 30);
    assert!(shown.contains("● live  3 requests"), "{shown}");
    assert!(shown.contains("1 error"), "{shown}");
    assert!(shown.contains("planner"), "{shown}");
    insta::assert_snapshot!("traffic_live", shown);

    // a request that arrives while the view is shown appears within a
    // second, and the selection follows the newest
    agent_asks(
        &mut a,
        4,
        "scout",
        find,
        serde_json::json!({"name": "Lena Ortiz"}),
    );
    for _ in 0..10 {
        a.tick();
        a.drain();
    }
    assert_eq!(a.traffic.requests.len(), 4);
    assert!(
        a.traffic
            .selected()
            .is_some_and(|r| r.parameters["name"] == "Lena Ortiz")
    );

    // paused: held and counted, shown on resume
    key(&mut a, KeyCode::Char('p'));
    agent_asks(
        &mut a,
        5,
        "ops",
        "FIND(?d.name) WHERE { ?d {type: \"Domain\"} }",
        serde_json::json!({}),
    );
    for _ in 0..10 {
        a.tick();
        a.drain();
    }
    assert_eq!(a.traffic.requests.len(), 4, "held while paused");
    let shown = screen(&mut a, 120, 30);
    assert!(shown.contains("paused · 1 new"), "{shown}");
    key(&mut a, KeyCode::Char('p'));
    assert_eq!(a.traffic.requests.len(), 5);

    // the filter: only errors
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "errors\n");
    let shown = screen(&mut a, 120, 30);
    assert!(shown.contains("1 request of 5"), "{shown}");
    assert!(a.traffic.selected().is_some_and(|r| r.caller == "planner"));
    key(&mut a, KeyCode::Esc);

    // Enter on the first request: in the workbench with its parameters,
    // run again
    key(&mut a, KeyCode::End);
    assert!(
        a.traffic
            .selected()
            .is_some_and(|r| r.parameters["name"] == "Mira Chen")
    );
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.tab, Tab::Query);
    assert_eq!(a.workbench.text(), find);
    let shown = screen(&mut a, 120, 30);
    assert!(
        shown.contains("\"name\": \"Mira Chen\""),
        "parameters shown: {shown}"
    );
    assert!(shown.contains("1 row"), "run again: {shown}");

    // the most read: Mira Chen (found by both scout's reads), and why
    alt(&mut a, '9');
    key(&mut a, KeyCode::Char('v'));
    let shown = screen(&mut a, 120, 30);
    assert!(shown.contains("Person:Mira Chen"), "{shown}");
    insta::assert_snapshot!("traffic_most_read", masked(shown));
    key(&mut a, KeyCode::Enter);
    let why = a
        .why
        .as_ref()
        .map(|w| w.0.lines.join("\n"))
        .unwrap_or_default();
    assert!(why.contains("read by agents"), "{why}");
    a.why = None;
    // never read: concepts no answer returned, each explained on Enter
    key(&mut a, KeyCode::Char('v'));
    let shown = screen(&mut a, 120, 30);
    assert!(shown.contains("never read"), "{shown}");
    assert!(!shown.contains("Person:Mira Chen"), "{shown}");
    key(&mut a, KeyCode::Enter);
    assert!(a.why.is_some(), "why of a never read concept");
}
