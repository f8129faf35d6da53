//! The console driven by key events, its screen rendered headlessly and
//! compared with reviewed snapshots.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use somnus::tui::app::{App, Runner};
use somnus::tui::component::Tab;
use std::collections::VecDeque;

fn app() -> App {
    let nx = somnus::demo::in_memory().expect("demo memory");
    let mut app = App::new(nx, "demo", Runner::Inline(VecDeque::new()));
    // fixed clocks: what a cycle or the health check finds must not depend
    // on the day the tests run
    app.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    app.health.clock = Some("2026-11-20T09:00:00Z".into());
    app.drain();
    app
}

fn key(app: &mut App, code: KeyCode) {
    app.press(code, KeyModifiers::NONE);
}

fn ctrl(app: &mut App, c: char) {
    app.press(KeyCode::Char(c), KeyModifiers::CONTROL);
}

fn alt(app: &mut App, c: char) {
    app.press(KeyCode::Char(c), KeyModifiers::ALT);
}

fn typed(app: &mut App, text: &str) {
    app.type_text(text);
}

/// The screen as text, with timings and clock times masked.
fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| app.render(f)).expect("draw");
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    let ms = regex::Regex::new(r"\d+\.\d ms").expect("re");
    let ts = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").expect("re");
    let out = ms.replace_all(&out, "#.# ms").to_string();
    let out = ts.replace_all(&out, "<now>").to_string();
    // how long a cycle took, in the status line
    let took = regex::Regex::new(r"completed in \d+(\.\d+)?").expect("re");
    let out = took.replace_all(&out, "completed in #").to_string();
    // the audit list's short times
    let short = regex::Regex::new(r"\b\d\d-\d\d \d\d:\d\d\b").expect("re");
    let out = short.replace_all(&out, "MM-DD hh:mm").to_string();
    // one a popup covers in part
    let cut = regex::Regex::new(r"\b\d\d-\d\d \d\d:").expect("re");
    cut.replace_all(&out, "MM-DD hh:").to_string()
}

#[test]
fn workbench_runs_scrolls_and_opens_a_cell() {
    let mut a = app();
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?e.name, ?e.attributes.consolidation_status, ?e.attributes.salience_score)\nWHERE {\n  ?e {type: \"Event\"}\n}\nORDER BY ?e.attributes.start_time DESC\nLIMIT 40",
    );
    key(&mut a, KeyCode::F(5));
    insta::assert_snapshot!("workbench_result", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::F(2));
    for _ in 0..30 {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Right);
    insta::assert_snapshot!("workbench_scrolled", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Left);
    key(&mut a, KeyCode::Enter);
    insta::assert_snapshot!("workbench_cell_detail", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('Y'));
    let copied = a.copied.last().cloned().unwrap_or_default();
    assert!(
        copied.starts_with("{\"?e.name\":\"Conversation:"),
        "{copied}"
    );
}

/// A SEARCH's status line says how it ranked: here, with no embedding
/// model, by keyword only and why.
#[test]
fn workbench_says_how_a_search_ranked() {
    let mut nx = somnus::demo::in_memory().expect("demo memory");
    // (whatever model this machine has installed)
    nx.set_embedder(None);
    let mut a = App::new(nx, "demo", Runner::Inline(VecDeque::new()));
    a.drain();
    a.workbench.set_text("");
    typed(&mut a, "SEARCH CONCEPT \"pottery\" LIMIT 5");
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("keyword only: no embedding model"), "{s}");
    assert!(s.contains("SEARCH · "), "{s}");
}

#[test]
fn workbench_pages_with_next_cursor() {
    let mut a = app();
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?t.name) WHERE { ?t {type: \"Topic\"} } ORDER BY ?t.name LIMIT 20",
    );
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("20 rows") && s.contains("next page"), "{s}");
    key(&mut a, KeyCode::F(2));
    key(&mut a, KeyCode::Char('n'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("40 rows"), "{s}");
}

#[test]
fn syntax_errors_show_code_and_move_the_caret() {
    let mut a = app();
    a.workbench.set_text("");
    typed(&mut a, "FIND(?p.name)\nWHERE {\n  ?p {type: \"Person\"\n}");
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 100, 30);
    assert!(s.contains("KIP_1001"), "{s}");
    let ratatui_textarea::DataCursor(row, _) = a.workbench.editor.cursor();
    assert_eq!(row, 3, "the caret sits on the error's line");
    insta::assert_snapshot!("workbench_error", s);
}

#[test]
fn completion_offers_keywords_types_and_predicates() {
    let mut a = app();
    a.workbench.set_text("");
    typed(&mut a, "FIND(?n) WHERE { ?n {type: \"Commi");
    key(&mut a, KeyCode::Tab);
    assert!(
        a.workbench.text().ends_with("\"Commitment"),
        "{}",
        a.workbench.text()
    );
    typed(&mut a, "\"} (?n, \"ow");
    key(&mut a, KeyCode::Tab);
    assert!(
        a.workbench.text().ends_with("\"owed_to"),
        "{}",
        a.workbench.text()
    );
    typed(&mut a, "\", ?x) } ORD");
    key(&mut a, KeyCode::Tab);
    assert!(
        a.workbench.text().ends_with("ORDER"),
        "{}",
        a.workbench.text()
    );
}

#[test]
fn explorer_walks_two_hops_and_back() {
    let mut a = app();
    alt(&mut a, '2');
    assert_eq!(a.tab, Tab::Graph);
    typed(&mut a, "Mira Chen");
    key(&mut a, KeyCode::Enter);
    let start = a.explorer.current.as_ref().map(|n| n.name.clone());
    assert_eq!(start.as_deref(), Some("Mira Chen"));
    insta::assert_snapshot!("explorer_mira", screen(&mut a, 120, 36));
    // first link is a belongs_to_domain; walk to the first Person Mira knows
    let idx = {
        let n = a.explorer.current.as_ref().expect("open");
        let mut edges: Vec<_> = n.edges.iter().collect();
        edges.sort_by(|x, y| {
            y.outgoing
                .cmp(&x.outgoing)
                .then(x.predicate.cmp(&y.predicate))
                .then(x.other_label.cmp(&y.other_label))
        });
        edges
            .iter()
            .position(|e| e.predicate == "knows")
            .expect("knows links")
    };
    for _ in 0..idx {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Enter);
    let hop1 = a
        .explorer
        .current
        .as_ref()
        .map(|n| n.name.clone())
        .unwrap_or_default();
    assert_ne!(hop1, "Mira Chen");
    key(&mut a, KeyCode::Enter);
    let hop2 = a
        .explorer
        .current
        .as_ref()
        .map(|n| n.name.clone())
        .unwrap_or_default();
    insta::assert_snapshot!("explorer_two_hops", screen(&mut a, 120, 36));
    assert_ne!(hop2, hop1);
    let id_of = |a: &somnus::tui::app::App| a.explorer.current.as_ref().map(|n| n.id);
    let hop2_id = id_of(&a);
    key(&mut a, KeyCode::Backspace);
    assert_eq!(
        a.explorer.current.as_ref().map(|n| n.name.clone()),
        Some(hop1)
    );
    // back on the link to where it came from
    assert_eq!(a.explorer.selected_link().map(|e| e.other), hop2_id);
    let hop1_id = id_of(&a);
    key(&mut a, KeyCode::Backspace);
    assert_eq!(a.explorer.selected_link().map(|e| e.other), hop1_id);
    assert_eq!(
        a.explorer
            .current
            .as_ref()
            .map(|n| n.name.clone())
            .as_deref(),
        Some("Mira Chen")
    );
    // open as query lands in the editor and runs
    key(&mut a, KeyCode::Char('o'));
    assert_eq!(a.tab, Tab::Query);
    assert!(a.workbench.text().contains("\"Mira Chen\""));
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("interested_in") && s.contains("knows"), "{s}");
}

#[test]
fn schema_help_and_palette() {
    let mut a = app();
    alt(&mut a, '3');
    insta::assert_snapshot!("schema", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Char('?'));
    insta::assert_snapshot!("help", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Esc);
    ctrl(&mut a, 'p');
    typed(&mut a, "go qu");
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Go to Query"), "{s}");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.tab, Tab::Query);
}

#[test]
fn every_pane_draws_at_80_by_24_and_on_resize() {
    let mut a = app();
    key(&mut a, KeyCode::F(5));
    for tab in ['1', '2', '3', '4', '5', '6', '7', '8', '9'] {
        alt(&mut a, tab);
        let s = screen(&mut a, 80, 24);
        // every tab is on screen, and help and quit in the key bar
        assert!(
            s.contains("7 Heal") && s.contains("8 Audi") && s.contains("9 Traf"),
            "{s}"
        );
        assert!(
            (s.contains("F1 help") || s.contains("F1 more")) && s.contains("^Q quit"),
            "{s}"
        );
        let _ = screen(&mut a, 40, 10);
        let _ = screen(&mut a, 200, 60);
    }
}

#[test]
fn quitting_sets_the_flag() {
    let mut a = app();
    ctrl(&mut a, 'q');
    assert!(a.quit);
}

/// The Reflections tab after a full sleep cycle on the demo memory:
/// tick two items, approve them behind a confirmation, reject the rest
/// with a typed reason; the memory shows exactly those decisions.
#[test]
fn reflections_approve_ticked_items_and_reject_the_rest() {
    let mut a = app();
    a.with_nexus(|nx| {
        let mut r = somnus::sleep::Heuristic;
        let rep = somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut r,
            None,
            None,
        )
        .expect("cycle");
        assert_eq!(rep.status, "completed");
    });
    alt(&mut a, '4');
    assert_eq!(a.tab, Tab::Reflections);
    insta::assert_snapshot!("reflections", screen(&mut a, 120, 36));
    let items = a.reflections.proposals[0].items.clone();
    let js = items
        .iter()
        .position(|i| i.title.contains(r#"Merge Topic "JS""#))
        .expect("JS merge");
    let lives = items
        .iter()
        .position(|i| i.title.contains("lives_in"))
        .expect("lives_in");
    let (first, second) = (js.min(lives), js.max(lives));
    for _ in 0..first {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char(' '));
    for _ in first + 1..second {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char(' '));
    key(&mut a, KeyCode::Char('a'));
    insta::assert_snapshot!("reflections_confirm", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Char('y'));
    let p = &a.reflections.proposals[0];
    assert_eq!(
        p.count("applied"),
        2,
        "{:?}",
        p.items
            .iter()
            .filter(|i| i.status == "applied")
            .map(|i| &i.title)
            .collect::<Vec<_>>()
    );
    // reject the rest, with a reason typed into the popup
    key(&mut a, KeyCode::Char('X'));
    assert!(a.reflections.captures_text_now());
    typed(&mut a, "not tonight");
    insta::assert_snapshot!("reflections_reject", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Enter);
    let p = &a.reflections.proposals[0];
    assert_eq!(p.status, "partially_applied");
    assert_eq!(p.count("rejected"), p.items.len() - 2);
    assert!(
        p.items
            .iter()
            .filter(|i| i.status == "rejected")
            .all(|i| i.reason.as_deref() == Some("not tonight"))
    );
    // the memory: JS merged into JavaScript, Lisbon superseded, Postgres kept
    let (js_left, pg_left, current) = a.with_nexus(|nx| {
        let q = |nx: &mut somnus::Nexus, c: &str| nx.execute(&somnus::Request::readonly(c)).to_json()["result"].clone();
        (
            q(nx, r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#),
            q(nx, r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "Postgres") }"#),
            q(nx, r#"FIND(?o.name) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "lives_in", ?o) FILTER(IS_NULL(?l.metadata.superseded)) }"#),
        )
    });
    assert_eq!(js_left, serde_json::json!(0));
    assert_eq!(pg_left, serde_json::json!(1));
    assert_eq!(current, serde_json::json!(["Berlin"]));
    insta::assert_snapshot!("reflections_decided", screen(&mut a, 120, 36));
}

fn masked(s: String) -> String {
    // durations and wall-clock times, with the padding after them (their
    // width varies)
    let ms = regex::Regex::new(r"\d+ ms[ ─)]*").expect("re");
    let secs = regex::Regex::new(r"\d+\.\d s").expect("re");
    let day = regex::Regex::new(r"\d{4}-\d\d-[0-9T:.Z]*[ ]*").expect("re");
    let s = ms.replace_all(&s, "# ms ").to_string();
    let s = secs.replace_all(&s, "#.# s").to_string();
    day.replace_all(&s, "<time> ").to_string()
}

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

/// Conflicts after a cycle: both facts side by side; "both valid" on a key,
/// confirmed, sets validity windows through the proposal path.
#[test]
fn conflicts_pane_resolves_a_contradiction() {
    let mut a = app();
    alt(&mut a, '6');
    a.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    key(&mut a, KeyCode::Char('s'));
    alt(&mut a, '5');
    assert_eq!(a.tab, Tab::Conflicts);
    assert_eq!(a.conflicts.items.len(), 2);
    let diet = a
        .conflicts
        .items
        .iter()
        .position(|c| c.conflict.predicate == "prefers")
        .expect("diet");
    for _ in 0..diet {
        key(&mut a, KeyCode::Down);
    }
    insta::assert_snapshot!("conflicts", masked(screen(&mut a, 120, 36)));
    key(&mut a, KeyCode::Char('b'));
    let s = masked(screen(&mut a, 120, 36));
    // the confirmation names both facts
    assert!(s.contains("keep both Mira Chen prefers"), "{s}");
    assert!(s.contains("and Mira Chen prefers"), "{s}");
    insta::assert_snapshot!("conflicts_confirm", s);
    key(&mut a, KeyCode::Char('y'));
    // decided: no verdict keys, on the bar or in the pane
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("decided: undo its resolution in Audit"), "{s}");
    assert!(!s.contains("keep newer"), "{s}");
    // `/` narrows the list
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "lives");
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("/ lives (Esc clears)"), "{s}");
    assert!(s.contains("lives_in"), "{s}");
    assert!(!s.contains(" prefers"), "{s}");
    key(&mut a, KeyCode::Esc);
    assert!(screen(&mut a, 120, 36).contains(" prefers"));
    let c = a
        .conflicts
        .items
        .iter()
        .find(|c| c.conflict.predicate == "prefers")
        .expect("diet");
    assert_eq!(c.status, "resolved");
    assert_eq!(c.resolution.as_deref(), Some("both_valid"));
    let v = a.with_nexus(|nx| {
        nx.execute(&somnus::Request::readonly(
            r#"FIND(?l.metadata.valid_until) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "prefers", {type: "Preference", name: "Diet: vegetarian"}) }"#,
        ))
        .to_json()["result"]
            .clone()
    });
    assert_eq!(v, serde_json::json!(["2026-11-16T00:00:00Z"]));
}

/// The whole review, through the console only: run a full cycle, approve
/// part of its proposal, resolve a contradiction, reject the rest, roll
/// back one approval; the memory, read through KIP, is exactly what those
/// decisions imply.
#[test]
fn a_night_reviewed_through_the_console_only() {
    let mut a = app();
    // run a full cycle
    alt(&mut a, '6');
    a.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    key(&mut a, KeyCode::Char('s'));
    assert_eq!(
        a.sleep.report.as_ref().map(|r| r.status.as_str()),
        Some("completed")
    );
    // approve two items: the JS merge and where Mira lives
    alt(&mut a, '4');
    let items = a.reflections.proposals[0].items.clone();
    let at = |t: &str| items.iter().position(|i| i.title.contains(t)).expect(t);
    let (js, lives) = (at(r#"Merge Topic "JS""#), at("lives_in"));
    for i in 0..items.len() {
        if i == js || i == lives {
            key(&mut a, KeyCode::Char(' '));
        } else {
            key(&mut a, KeyCode::Down);
        }
    }
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(a.reflections.proposals[0].count("applied"), 2);
    // resolve the diet contradiction: both were true in their time
    alt(&mut a, '5');
    let diet = a
        .conflicts
        .items
        .iter()
        .position(|c| c.conflict.predicate == "prefers")
        .expect("diet");
    for _ in 0..diet {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char('b'));
    key(&mut a, KeyCode::Char('y'));
    // reject the rest
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('X'));
    typed(&mut a, "not tonight");
    key(&mut a, KeyCode::Enter);
    // roll back the JS merge from the audit trail
    alt(&mut a, '8');
    assert_eq!(a.tab, Tab::Audit);
    let merge = a
        .audit
        .entries
        .iter()
        .position(|e| e.kind == "MERGE" && e.trigger.starts_with("proposal #1"))
        .expect("the approved merge");
    for _ in 0..merge {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Enter);
    insta::assert_snapshot!("audit_entry", masked(screen(&mut a, 120, 36)));
    key(&mut a, KeyCode::Char('u'));
    key(&mut a, KeyCode::Char('y'));
    assert!(
        a.audit.entries[0].kind == "ROLLBACK",
        "{:?}",
        a.audit.entries.first()
    );

    let q = |a: &App, c: &str| {
        a.with_nexus(|nx| nx.execute(&somnus::Request::readonly(c)).to_json()["result"].clone())
    };
    use serde_json::json;
    // the rolled-back merge: JS is back, on its own
    assert_eq!(
        q(
            &a,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#
        ),
        json!(1)
    );
    // the kept approval: Berlin current, Lisbon superseded
    assert_eq!(
        q(
            &a,
            r#"FIND(?o.name) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "lives_in", ?o) FILTER(IS_NULL(?l.metadata.superseded)) }"#
        ),
        json!(["Berlin"])
    );
    // the resolution: both diets valid, each in its window, none superseded
    assert_eq!(
        q(
            &a,
            r#"FIND(?l.metadata.valid_until) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "prefers", {type: "Preference", name: "Diet: vegetarian"}) }"#
        ),
        json!(["2026-11-16T00:00:00Z"])
    );
    assert_eq!(
        q(
            &a,
            r#"FIND(COUNT(?l)) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "prefers", ?o) FILTER(?l.metadata.superseded == true) }"#
        ),
        json!(1),
        "only the editor preference planted as superseded"
    );
    // the rejected items changed nothing: Postgres unmerged, Vinyl records unsorted
    assert_eq!(
        q(
            &a,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "Postgres") }"#
        ),
        json!(1)
    );
    assert_eq!(
        q(
            &a,
            r#"FIND(?d.name) WHERE { ({type: "Topic", name: "Vinyl records"}, "belongs_to_domain", ?d) }"#
        ),
        json!(["Unsorted"])
    );
}

/// Rewriting an item's KIP in the Reflections editor before approving it:
/// a broken edit is refused with its KIP code and position and keeps the
/// popup open; the fixed edit is what approval applies, and what the
/// proposal records.
#[test]
fn reflections_item_edited_in_the_editor_before_approval() {
    let mut a = app();
    a.with_nexus(|nx| {
        let rep = somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut somnus::sleep::Heuristic,
            None,
            None,
        )
        .expect("cycle");
        assert_eq!(rep.status, "completed");
    });
    alt(&mut a, '4');
    let vinyl = a.reflections.proposals[0]
        .items
        .iter()
        .position(|i| i.title.contains("Vinyl records"))
        .expect("the Vinyl records reclassification");
    for _ in 0..vinyl {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char('e'));
    assert!(a.reflections.captures_text_now());
    // line 3 ends with `name: :domain})`: file it under Work instead
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::End);
    for _ in 0..":domain})".len() {
        key(&mut a, KeyCode::Backspace);
    }
    typed(&mut a, "\"Work\"");
    // no closing brackets yet: refused, with where and why
    ctrl(&mut a, 's');
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("KIP_1001"), "{s}");
    assert!(s.contains("line"), "{s}");
    typed(&mut a, "})");
    insta::assert_snapshot!("reflections_edit", screen(&mut a, 120, 36));
    ctrl(&mut a, 's');
    assert!(!a.reflections.captures_text_now());
    assert_eq!(a.reflections.edits.len(), 1);
    // the title and the preview are those of the edit now
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains("edited: insert Topic: Vinyl records belongs_to_domain Domain: Work"),
        "{s}"
    );
    assert!(s.contains("proposed as:"), "{s}");
    insta::assert_snapshot!("reflections_edited", s);
    // `]` pages the item down as far as its last line, no further
    for _ in 0..20 {
        key(&mut a, KeyCode::Char(']'));
        let _ = screen(&mut a, 120, 36);
    }
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("what the edit changes now"), "{s}");
    assert!(s.contains("+ id:"), "the last line is on screen: {s}");
    for _ in 0..20 {
        key(&mut a, KeyCode::Char('['));
    }
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("(1 as edited)"), "{s}");
    key(&mut a, KeyCode::Char('y'));
    let it = &a.reflections.proposals[0].items[vinyl];
    assert_eq!(it.status, "applied");
    let edited = it.edited.clone().expect("the edit is recorded");
    assert!(edited[0].contains("name: \"Work\"})"), "{edited:?}");
    // W3: the record is what was applied, and what was proposed is kept
    assert!(it.title.contains("Domain: Work"), "{}", it.title);
    assert_eq!(it.commands, edited);
    assert!(
        it.preview
            .to_vec()
            .iter()
            .any(|c| c.to_string().contains("Work")),
        "{:?}",
        it.preview
    );
    let proposed = it.proposed.clone().expect("what was proposed is kept");
    assert!(
        proposed["title"]
            .as_str()
            .unwrap_or("")
            .contains("Vinyl records"),
        "{proposed}"
    );
    assert!(
        !proposed["title"].as_str().unwrap_or("").contains("Work"),
        "{proposed}"
    );
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains("proposed as: File Topic \"Vinyl records\" under Personal"),
        "{s}"
    );
    assert!(a.reflections.edits.is_empty());
    let domains = a.with_nexus(|nx| {
        let r = nx.execute(&somnus::protocol::Request::readonly(
            r#"FIND(?d.name) WHERE { (?n, "belongs_to_domain", ?d) ?n {type: "Topic", name: "Vinyl records"} }"#,
        ));
        r.to_json()["result"].clone()
    });
    assert_eq!(domains, serde_json::json!(["Work"]));
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

/// The editor says whether its text parses as it is typed, before anything
/// runs: the command's kind, or the KIP code and where the text goes wrong,
/// with the parameters in the parameters editor taken into account.
#[test]
fn the_editor_checks_the_text_as_it_is_typed() {
    let mut a = app();
    a.workbench.set_text("");
    let s = screen(&mut a, 100, 30);
    assert!(!s.contains("parses") && !s.contains("✗ KIP"), "{s}");
    typed(&mut a, "FIND(?p.name) WHERE { ?p {type: \"Person\"} }");
    let s = screen(&mut a, 100, 30);
    assert!(s.contains("✓ FIND parses"), "{s}");
    // break it: a missing brace is reported where it is, nothing ran
    key(&mut a, KeyCode::Backspace);
    let s = screen(&mut a, 100, 30);
    assert!(s.contains("✗ KIP_1001 at 1:42"), "{s}");
    assert!(a.workbench.outcome.is_none(), "nothing ran");
    // a placeholder nobody supplied is an error until the parameters name it
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?p) WHERE { ?p {type: \"Person\", name: :who} }",
    );
    let s = screen(&mut a, 100, 30);
    assert!(s.contains("✗ :who needs a value: press F3"), "{s}");
    // F3 opens a template with the cursor inside the value
    key(&mut a, KeyCode::F(3));
    typed(&mut a, "Ada");
    let s = screen(&mut a, 100, 30);
    assert!(s.contains("✓ FIND parses"), "{s}");
}

/// From a Graph node: why it is as it is (W), why a link is (w), and why it
/// is or is not merged with another concept (m), in a panel that reads as
/// text, scrolls and closes.
#[test]
fn graph_explains_a_node_a_link_and_a_pair() {
    let mut a = app();
    alt(&mut a, '2');
    typed(&mut a, "Tom Ruiz");
    key(&mut a, KeyCode::Enter);
    assert_eq!(
        a.explorer.current.as_ref().map(|n| n.name.as_str()),
        Some("Tom Ruiz")
    );
    key(&mut a, KeyCode::Char('m'));
    typed(&mut a, "Person:Tomás Ruiz\n");
    let (why, _) = a.why.clone().expect("a why panel");
    let text = why.lines.join("\n");
    assert!(
        text.contains("Person:Tom Ruiz / Person:Tomás Ruiz") && text.contains("proposed as one"),
        "{text}"
    );
    insta::assert_snapshot!("graph_why_pair", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Esc);
    assert!(a.why.is_none());
    // a pair the cycle would never compare says why
    key(&mut a, KeyCode::Char('m'));
    typed(&mut a, "Person:Mira Chen\n");
    let text = a.why.as_ref().expect("panel").0.lines.join("\n");
    assert!(
        text.contains("not merged") || text.contains("not a candidate"),
        "{text}"
    );
    key(&mut a, KeyCode::Esc);
    // the node itself, and its first link
    key(&mut a, KeyCode::Char('W'));
    let text = a.why.as_ref().expect("panel").0.lines.join("\n");
    assert!(text.starts_with("Person:Tom Ruiz: concept"), "{text}");
    assert!(text.contains("relevance now"), "{text}");
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('w'));
    let text = a.why.as_ref().expect("panel").0.lines.join("\n");
    assert!(text.starts_with("P:"), "{text}");
    assert!(!text.contains("\\n") && !text.contains("\\\""), "{text}");
    key(&mut a, KeyCode::Esc);
    // a name that is nowhere is an error, not a panel
    key(&mut a, KeyCode::Char('m'));
    typed(&mut a, "Person:Nobody Here\n");
    assert!(a.why.is_none());
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("no concept Person:Nobody Here"), "{s}");
}

/// The palette explains any element typed in.
#[test]
fn palette_explains_an_element_typed_in() {
    let mut a = app();
    ctrl(&mut a, 'p');
    typed(&mut a, "Why… (explain");
    key(&mut a, KeyCode::Enter);
    typed(&mut a, "Person:Mira Chen\n");
    let text = a.why.as_ref().expect("panel").0.lines.join("\n");
    assert!(text.starts_with("Person:Mira Chen: concept"), "{text}");
    // scrolling stops at the end
    for _ in 0..500 {
        key(&mut a, KeyCode::PageDown);
    }
    let (t, scroll) = a.why.clone().expect("panel");
    assert!((scroll as usize) < t.lines.len());
    key(&mut a, KeyCode::Char('y'));
    assert!(
        a.copied
            .last()
            .is_some_and(|c| c.starts_with("Person:Mira Chen"))
    );
}

/// The palette imports a folder: a wrong source is said and nothing runs;
/// a dry run reports and writes nothing; the import reports its progress
/// (start and end in the log), its report on screen, and the memory has
/// what the folder holds.
#[test]
fn palette_imports_a_folder_with_progress_and_a_report() {
    let mut a = app();
    // (relative: the report on screen is the same wherever the tests run;
    // they run in the crate's folder)
    let dir = std::path::Path::new("tests/data/engram");
    let facts = |a: &App| {
        a.with_nexus(|nx| {
            nx.kip(r#"FIND(COUNT(?f)) WHERE { ?f {type: "Fact"} }"#)
                .to_json()["result"]
                .as_i64()
                .unwrap_or(-1)
        })
    };
    let before = facts(&a);
    let open = |a: &mut App| {
        ctrl(a, 'p');
        typed(a, "Import a memory");
        key(a, KeyCode::Enter);
    };
    open(&mut a);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("import: openclaw DIR or engram DIR"), "{s}");
    typed(&mut a, "letta /tmp\n");
    assert!(a.why.is_none());
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("`letta` is not a source somnus reads"), "{s}");
    // the prompt stays, with what was typed, to be mended
    assert!(s.contains("letta /tmp"), "{s}");
    ctrl(&mut a, 'u');
    typed(&mut a, &format!("engram {} --dry-run\n", dir.display()));
    let (t, _) = a
        .why
        .clone()
        .unwrap_or_else(|| panic!("no report: {:?}", a.messages));
    assert!(t.title.starts_with("would import engram"), "{t:?}");
    assert!(
        t.lines[0].contains("51 writes planned; would create"),
        "{t:?}"
    );
    assert_eq!(facts(&a), before);
    key(&mut a, KeyCode::Esc);

    open(&mut a);
    typed(&mut a, &format!("engram {}\n", dir.display()));
    let (t, _) = a.why.clone().expect("report");
    assert!(t.title.starts_with("imported engram"), "{t:?}");
    assert!(
        t.lines.iter().any(|l| l.contains("things to know")),
        "{t:?}"
    );
    assert_eq!(facts(&a), before + 11);
    let log: Vec<&str> = a.messages.iter().map(|m| m.2.as_str()).collect();
    assert!(
        log.iter()
            .any(|m| m.starts_with("importing engram: 0/51 writes")),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|m| m.starts_with("importing engram: 51/51 writes")),
        "{log:?}"
    );
    insta::assert_snapshot!("palette_import_report", screen(&mut a, 120, 36));
}

/// Audit: new entries arriving keep the selection on its entry, the right
/// pane shows that entry, and the undo confirmation names it.
#[test]
fn audit_undo_acts_on_the_entry_on_screen_after_new_entries_arrive() {
    let mut a = app();
    let write = |a: &mut App, n: &str| {
        a.with_nexus(|nx| {
            let req = somnus::protocol::Request::command(format!(
                r#"UPSERT {{ CONCEPT ?p {{ {{type: "Person", name: "{n}"}} }} }}"#
            ))
            .with_params(Default::default());
            let _ = nx.execute(&req);
        })
    };
    write(&mut a, "Ana");
    alt(&mut a, '8');
    let id = a.audit.selected().map(|e| e.id).expect("an entry");
    assert!(
        a.audit
            .selected()
            .is_some_and(|e| e.command.contains("Ana"))
    );
    // two writes by someone else
    write(&mut a, "Bea");
    write(&mut a, "Cid");
    a.refresh();
    a.drain();
    assert_eq!(a.audit.selected().map(|e| e.id), Some(id));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains(&format!("#{id} ")), "{s}");
    key(&mut a, KeyCode::Char('u'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains(&format!("Undo entry #{id}:")), "{s}");
    insta::assert_snapshot!("audit_undo_confirm", s);
    key(&mut a, KeyCode::Char('y'));
    let undone = a.with_nexus(|nx| nx.audit_entry(id).expect("entry"));
    assert!(
        undone.is_some_and(|(e, _)| e.rolled_back_by.is_some()),
        "entry #{id} is the one undone"
    );
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

/// An error stays on screen until the operator reads it in the message
/// log (Ctrl+G), however many passing messages follow; the console's own
/// cycle is not reported as a change "elsewhere"; the log keeps messages
/// in full.
#[test]
fn errors_stay_until_read_and_the_log_keeps_every_message() {
    use somnus::tui::component::JobOutput;
    let mut a = app();
    alt(&mut a, '6');
    let long = format!(
        "KIP_3005: sleep run #1 is still running (process 4242) {}",
        "and more detail ".repeat(12)
    );
    a.on_job(JobOutput::SleepDone(Err(long.clone())));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("the sleep cycle did not start: KIP_3005"), "{s}");
    // another process writes: a passing message, then the error again
    a.on_job(JobOutput::Polled(1, None, None));
    a.on_job(JobOutput::Polled(2, None, None));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("changed elsewhere"), "{s}");
    a.status = None; // the passing message times out
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("✗ the sleep cycle did not start"), "{s}");
    // the console's own cycle: refreshed, not "elsewhere"
    a.on_job(JobOutput::SleepDone(Ok(Box::new(somnus::sleep::Report {
        run: 2,
        status: "completed".into(),
        ..Default::default()
    }))));
    a.status = None;
    a.on_job(JobOutput::Polled(3, None, None));
    assert!(a.status.is_none(), "{:?}", a.status);
    // the log has it all, in full; closing it dismisses the error
    ctrl(&mut a, 'g');
    let s = screen(&mut a, 200, 60);
    assert!(s.contains("and more detail and more detail"), "{s}");
    insta::assert_snapshot!("message_log", masked_clock(s));
    key(&mut a, KeyCode::Esc);
    assert!(a.sticky.is_none());
    let s = screen(&mut a, 120, 36);
    assert!(!s.contains("✗"), "{s}");
}

fn masked_clock(s: String) -> String {
    regex::Regex::new(r"\b\d\d:\d\d:\d\d\b")
        .expect("re")
        .replace_all(&s, "hh:mm:ss")
        .to_string()
}

/// Every pane at 80×24, 120×36 and 200×60, after a night's cycle.
#[test]
fn every_pane_at_three_sizes() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('s'));
    key(&mut a, KeyCode::F(5));
    for (i, tab) in ['1', '2', '3', '4', '5', '6', '7', '8', '9']
        .iter()
        .enumerate()
    {
        alt(&mut a, *tab);
        if *tab == '1' {
            key(&mut a, KeyCode::F(5));
        }
        if *tab == '2' {
            typed(&mut a, "Mira Chen\n");
        }
        for (w, h) in [(80, 24), (120, 36), (200, 60)] {
            let s = masked(screen(&mut a, w, h));
            insta::assert_snapshot!(format!("pane_{}_{w}x{h}", i + 1), s);
        }
    }
}

/// The palette offers every pane's keys, named with their key, and runs
/// them where they belong; Ctrl+U clears its input.
#[test]
fn the_palette_runs_any_panes_action() {
    let mut a = app();
    ctrl(&mut a, 'p');
    typed(&mut a, "zzzz");
    ctrl(&mut a, 'u');
    typed(&mut a, "Sleep: start (s)");
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Sleep: start (s)"), "{s}");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.tab, Tab::Sleep);
    let runs = a.with_nexus(|nx| somnus::sleep::cycle::runs(nx, 5).expect("runs"));
    assert_eq!(runs.len(), 1, "the cycle ran");
    // and an action of another pane: Reflections' approve asks first
    ctrl(&mut a, 'p');
    typed(&mut a, "Reflections: approve (a)");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.tab, Tab::Reflections);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Apply item"), "{s}");
}

/// Results use the width there is (a long description is not cut at 40
/// characters on a wide screen), and the history keeps one copy of a query
/// run twice.
#[test]
fn results_use_the_width_and_history_has_no_duplicates() {
    let mut a = app();
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?p.attributes.description) WHERE { ?p {type: \"Person\", name: \"Mira Chen\"} }",
    );
    key(&mut a, KeyCode::F(5));
    key(&mut a, KeyCode::F(5));
    let desc = a.with_nexus(|nx| {
        let r = nx.execute(
            &somnus::protocol::Request::command(
                r#"FIND(?p.attributes.description) WHERE { ?p {type: "Person", name: "Mira Chen"} }"#,
            )
            .with_params(Default::default()),
        );
        r.to_json()["result"][0].as_str().unwrap_or("").to_string()
    });
    assert!(desc.chars().count() > 40, "{desc}");
    let s = screen(&mut a, 200, 40);
    let shown: String = desc.chars().take(60.min(desc.chars().count())).collect();
    assert!(s.contains(&shown), "{s}");
    let n = a.with_nexus(|nx| {
        nx.history(50)
            .unwrap_or_default()
            .iter()
            .filter(|h| h.command.contains("Mira Chen"))
            .count()
    });
    assert_eq!(n, 1);
}

/// The item editor asks before throwing changes away, and closes at once
/// when nothing changed; `c` ticks every undecided item of the selected
/// item's class; `/` narrows the items to a class.
#[test]
fn reflections_discard_asks_ticks_a_class_and_filters() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('s'));
    alt(&mut a, '4');
    // unchanged: Esc closes
    key(&mut a, KeyCode::Char('e'));
    assert!(a.reflections.captures_text_now());
    key(&mut a, KeyCode::Esc);
    assert!(!a.reflections.captures_text_now());
    // changed: Esc asks; n keeps editing, y discards
    key(&mut a, KeyCode::Char('e'));
    typed(&mut a, "x");
    key(&mut a, KeyCode::Esc);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Discard your changes to this item?"), "{s}");
    key(&mut a, KeyCode::Char('n'));
    assert!(a.reflections.captures_text_now(), "still editing");
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('y'));
    assert!(!a.reflections.captures_text_now());
    assert!(a.reflections.edits.is_empty(), "nothing kept");
    // `c` on the first item ticks every undecided item of its class
    let p = a.reflections.proposals[0].clone();
    let class = p.items[0].class.clone();
    let same = p
        .items
        .iter()
        .filter(|i| i.class == class && i.status == "pending")
        .count();
    assert!(same >= 2, "a class with several items: {class}");
    key(&mut a, KeyCode::Char('c'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains(&format!("— {same} ticked")), "{s}");
    key(&mut a, KeyCode::Char('c'));
    assert!(screen(&mut a, 120, 36).contains("— 0 ticked"));
    // `/merge` shows only the merges
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "merge");
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("/ merge (Esc clears)"), "{s}");
    assert!(s.contains("Tom Ruiz"), "{s}");
    assert!(!s.contains("Vinyl records"), "{s}");
    // the item's KIP reads with its values, not its placeholders
    assert!(
        s.contains("?dup {type: \"Person\", name: \"Tom Ruiz\"}"),
        "{s}"
    );
    assert!(!s.contains(":duplicate_name"), "{s}");
    insta::assert_snapshot!("reflections_filtered", s);
    // Space ticks within the filtered list; approving asks about that item
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Merge"), "{s}");
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Esc);
    assert!(screen(&mut a, 120, 36).contains("Vinyl records"));
}

/// Paging a report down stops at its end: the last page stays full, and
/// one page up shows earlier lines at once.
#[test]
fn paging_stops_at_the_end_of_the_report() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('s'));
    let first = screen(&mut a, 120, 36);
    for _ in 0..200 {
        key(&mut a, KeyCode::Char(']'));
        let _ = screen(&mut a, 120, 36);
    }
    let s = screen(&mut a, 120, 36);
    // the report's right column holds text down to its last row
    let rows: Vec<&str> = s.lines().collect();
    let last = rows
        .iter()
        .rposition(|r| r.starts_with('└'))
        .expect("bottom border")
        - 1;
    let filled = rows[last].chars().skip(37).any(|c| c.is_alphanumeric());
    assert!(filled, "the last page is full: {s}");
    assert_ne!(first, s, "it scrolled");
    key(&mut a, KeyCode::Char('['));
    assert_ne!(screen(&mut a, 120, 36), s, "one page up moves at once");
}

/// Export asks where to write, in the results' own terms: a path to edit,
/// a refusal naming a missing directory, a question before replacing a
/// file; `/` narrows the rows and export writes the rows shown.
#[test]
fn export_asks_where_and_filtered_results_export_what_is_shown() {
    let dir = std::env::temp_dir().join(format!("somnus-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let mut a = app();
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?t.name) WHERE { ?t {type: \"Topic\"} } ORDER BY ?t.name LIMIT 500",
    );
    key(&mut a, KeyCode::F(5));
    key(&mut a, KeyCode::F(2));
    // `/sql` keeps the rows that mention it
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "sql");
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("/ sql (Esc clears)"), "{s}");
    assert!(s.contains("PostgreSQL"), "{s}");
    assert!(!s.contains("JavaScript"), "{s}");
    // export: a popup with a path, nothing written yet
    key(&mut a, KeyCode::Char('E'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Write the results as CSV to:"), "{s}");
    assert!(a.workbench.last_export.is_none());
    // a directory that does not exist is refused, the popup stays
    ctrl(&mut a, 'u');
    let missing = dir.join("no/such/out.csv");
    typed(&mut a, &missing.to_string_lossy());
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("no directory"), "{s}");
    // a file that exists is replaced only on a second Enter
    let target = dir.join("topics.csv");
    std::fs::write(&target, "keep me").expect("write");
    ctrl(&mut a, 'u');
    typed(&mut a, &target.to_string_lossy());
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("exists: Enter again replaces it"), "{s}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    key(&mut a, KeyCode::Enter);
    let csv = std::fs::read_to_string(&target).expect("written");
    assert!(csv.contains("PostgreSQL"), "{csv}");
    assert!(!csv.contains("JavaScript"), "only the rows shown: {csv}");
    assert_eq!(
        a.workbench.last_export.as_deref(),
        Some(target.to_string_lossy().as_ref())
    );
    // Esc in the results clears the filter
    key(&mut a, KeyCode::Esc);
    assert!(!screen(&mut a, 120, 36).contains("/ sql"));
    // Esc in the popup writes nothing
    key(&mut a, KeyCode::Char('e'));
    key(&mut a, KeyCode::Esc);
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, 1, "nothing else written");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A placeholder without a value: the editor says which and to press F3;
/// F3 opens the parameters with a template of the missing ones, the
/// cursor in the first value; filled in, the command runs.
#[test]
fn a_missing_parameter_points_to_f3_and_f3_fills_a_template() {
    let mut a = app();
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?p.name) WHERE { ?p {type: \"Person\", name: :who} } LIMIT :n",
    );
    let s = screen(&mut a, 120, 36);
    assert!(s.contains(":who, :n needs a value: press F3"), "{s}");
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Press F3"), "{s}");
    key(&mut a, KeyCode::F(3));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("\"who\": \"\""), "{s}");
    assert!(s.contains("\"n\": \"\""), "{s}");
    insta::assert_snapshot!("params_template", s);
    // the cursor is inside the first value
    typed(&mut a, "Mira Chen");
    // :n must be a number: replace its empty string
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::End);
    for _ in 0..2 {
        key(&mut a, KeyCode::Backspace);
    }
    typed(&mut a, "5");
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("1 row"), "{s}");
    assert!(s.contains("Mira Chen"), "{s}");
}

#[test]
fn tab_in_an_empty_string_offers_names_and_never_adds_spaces() {
    let mut a = app();
    a.workbench.set_text("");
    typed(&mut a, "FIND(?a) WHERE { (?a, \"");
    key(&mut a, KeyCode::Tab);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("belongs_to_domain"), "{s}");
    key(&mut a, KeyCode::Enter);
    let t = a.workbench.text();
    assert!(t.ends_with("(?a, \"assigned_to"), "{t}");
    assert!(!t.contains("  "), "{t}");
    // a type goes after `type:`
    a.workbench.set_text("");
    typed(&mut a, "FIND(?a) WHERE { ?a {type: \"");
    key(&mut a, KeyCode::Tab);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("│Experience "), "{s}");
    assert!(s.contains("│Commitment "), "{s}");
    key(&mut a, KeyCode::Esc);
    // a name has nothing to offer: Tab leaves the string as it is
    a.workbench.set_text("");
    typed(&mut a, "FIND(?a) WHERE { ?a {name: \"");
    key(&mut a, KeyCode::Tab);
    assert_eq!(a.workbench.text(), "FIND(?a) WHERE { ?a {name: \"");
}

#[test]
fn a_dry_run_lists_what_it_would_write_and_a_write_what_it_wrote() {
    let mut a = app();
    a.workbench.set_text("");
    typed(
        &mut a,
        "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Zed Ng\"} SET PROPOSITIONS { (\"works_on\", {type: \"Project\", name: \"Atlas\"}) } } }",
    );
    key(&mut a, KeyCode::F(6));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("would create 2"), "{s}");
    assert!(
        s.contains("Person: Zed Ng -works_on-> Project: Atlas"),
        "{s}"
    );
    insta::assert_snapshot!("dry_run_effects", s);
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains("UPSERT · create 2") || s.contains("created 2"),
        "{s}"
    );
    assert!(
        s.contains("Person: Zed Ng -works_on-> Project: Atlas"),
        "{s}"
    );
}

#[test]
fn w_on_a_result_row_explains_its_element() {
    let mut a = app();
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?p.name, ?p) WHERE { ?p {type: \"Person\", name: \"Mira Chen\"} }",
    );
    key(&mut a, KeyCode::F(5));
    key(&mut a, KeyCode::F(2));
    // the cursor is on the name: the row's node is explained
    key(&mut a, KeyCode::Char('w'));
    let text = a.why.as_ref().expect("a why panel").0.lines.join("\n");
    assert!(text.starts_with("Person:Mira Chen (C:"), "{text}");
    assert!(text.contains("relevance now"), "{text}");
    key(&mut a, KeyCode::Esc);
    // a row of names only says how to get an element
    key(&mut a, KeyCode::F(2));
    a.workbench.set_text("");
    typed(
        &mut a,
        "FIND(?p.name) WHERE { ?p {type: \"Person\"} } LIMIT 3",
    );
    key(&mut a, KeyCode::F(5));
    key(&mut a, KeyCode::F(2));
    key(&mut a, KeyCode::Char('w'));
    assert!(a.why.is_none());
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("this row holds no element"), "{s}");
    // the elements a write lists are explained too
    key(&mut a, KeyCode::F(2));
    a.workbench.set_text("");
    typed(
        &mut a,
        "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Zed Ng\"} } }",
    );
    key(&mut a, KeyCode::F(5));
    key(&mut a, KeyCode::F(2));
    key(&mut a, KeyCode::Char('w'));
    let text = a.why.as_ref().expect("a why panel").0.lines.join("\n");
    assert!(text.contains("Zed Ng"), "{text}");
}

/// The smaller promises: a decided item asks nothing and says what it is;
/// the help names Ctrl+R and Ctrl+Enter apart from their meaning; a memory
/// path in the header keeps its file name; a query loaded from the Schema
/// pane runs at once and Ctrl+Z brings back the text it replaced; F4
/// clears the editor.
#[test]
fn decided_items_help_header_and_loaded_queries() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('s'));
    alt(&mut a, '4');
    // approve the first item, then press a on it again
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(a.reflections.proposals[0].items[0].status, "applied");
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(!s.contains("Apply item"), "{s}");
    assert!(s.contains("applied already"), "{s}");
    // reject the second, then a on it is a real question again
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Char('x'));
    typed(&mut a, "not now");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.reflections.proposals[0].items[1].status, "rejected");
    key(&mut a, KeyCode::Char('x'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("rejected already"), "{s}");

    // help: a key and its meaning are apart
    key(&mut a, KeyCode::F(1));
    let s = screen(&mut a, 120, 36);
    assert!(!s.contains("Ctrl+Enterrun"), "{s}");
    key(&mut a, KeyCode::Esc);

    // the header keeps a path's file name
    let nx = somnus::demo::in_memory().expect("demo memory");
    let mut b = App::new(nx, "/srv/agents/demo.db", Runner::Inline(VecDeque::new()));
    b.drain();
    let s = screen(&mut b, 200, 36);
    assert!(
        s.lines()
            .next()
            .unwrap_or("")
            .contains("/srv/agents/demo.db"),
        "{s}"
    );
    let s = screen(&mut b, 120, 36);
    assert!(s.lines().next().unwrap_or("").contains("/demo.db"), "{s}");
    let s = screen(&mut b, 80, 24);
    assert!(s.lines().next().unwrap_or("").contains("demo.db"), "{s}");

    // Schema Enter loads a query, runs it, and Ctrl+Z brings the old text back
    let mut a = app();
    a.workbench.set_text("");
    // a long line scrolls the editor sideways; a loaded query starts at
    // its first column all the same
    typed(
        &mut a,
        &format!(
            "FIND(?x) WHERE {{ ?x {{type: \"Person\"}} }} LIMIT 2 // {}",
            "x".repeat(200)
        ),
    );
    let s = screen(&mut a, 120, 36);
    assert!(!s.contains("  1 FIND(?x)"), "scrolled sideways: {s}");
    alt(&mut a, '3');
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.tab, Tab::Query);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("loaded and run"), "{s}");
    assert!(
        s.contains("  1 FIND("),
        "the loaded text from its first column: {s}"
    );
    assert!(!a.workbench.text().contains("LIMIT 2"));
    assert!(a.workbench.outcome.is_some(), "the loaded query ran");
    ctrl(&mut a, 'z');
    assert!(
        a.workbench.text().contains("LIMIT 2"),
        "{}",
        a.workbench.text()
    );
    // F4 clears, Ctrl+Z restores
    key(&mut a, KeyCode::F(4));
    assert_eq!(a.workbench.text(), "");
    ctrl(&mut a, 'z');
    assert!(a.workbench.text().contains("LIMIT 2"));
}

/// A sub-agent's staged write in Reflections: its source, its reason, its
/// KIP with values and what it would change; approving it applies exactly
/// that.
#[test]
fn a_subagents_proposal_is_reviewed_and_approved_in_reflections() {
    let mut a = app();
    let staged = a.with_nexus(|nx| {
        let mut req = somnus::protocol::Request::command(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} SET PROPOSITIONS { (\"works_on\", {type: \"Project\", name: \"Atlas\"}) } } }",
        );
        req.args.parameters.insert("n".into(), serde_json::json!("Ines Duarte"));
        req.args.reason = Some("introduced herself at the Atlas kickoff".into());
        let who = somnus::store::keys::Identity {
            name: "scout".into(),
            role: somnus::store::keys::Role::Subagent,
        };
        somnus::server::gate::stage(nx, &req, &who).to_json()
    });
    assert_eq!(
        staged["result"]["staged"],
        serde_json::json!(true),
        "{staged}"
    );
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Sub-agent scout"), "{s}");
    assert!(s.contains("introduced herself at the Atlas kickoff"), "{s}");
    assert!(s.contains("name: \"Ines Duarte\""), "{s}");
    insta::assert_snapshot!("reflections_subagent", s);
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Apply"), "{s}");
    key(&mut a, KeyCode::Char('y'));
    let n = a.with_nexus(|nx| {
        nx.execute(&somnus::Request::readonly(
            "FIND(COUNT(?o)) WHERE { ?p {type: \"Person\"} FILTER(?p.name == \"Ines Duarte\") (?p, \"works_on\", ?o) }",
        ))
        .to_json()["result"]
            .clone()
    });
    assert_eq!(n, serde_json::json!(1));
}

#[test]
fn conflicting_subagent_writes_are_marked_in_reflections() {
    let mut a = app();
    a.with_nexus(|nx| {
        for (who, r) in [("researcher", "vendor"), ("scheduler", "client")] {
            let mut req = somnus::protocol::Request::command(
                "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Ines Duarte\"} SET ATTRIBUTES { role: :r } } }",
            );
            req.args.parameters.insert("r".into(), serde_json::json!(r));
            let id = somnus::store::keys::Identity {
                name: who.into(),
                role: somnus::store::keys::Role::Subagent,
            };
            somnus::server::gate::stage(nx, &req, &id);
        }
    });
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("⚠ conflicts with #"), "{s}");
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

fn stage_role(a: &mut App, who: &str, role: &str) {
    a.with_nexus(|nx| {
        let mut req = somnus::protocol::Request::command(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Ines Duarte\"} SET ATTRIBUTES { role: :r } } }",
        );
        req.args.parameters.insert("r".into(), serde_json::json!(role));
        let id = somnus::store::keys::Identity {
            name: who.into(),
            role: somnus::store::keys::Role::Subagent,
        };
        somnus::server::gate::stage(nx, &req, &id);
    });
}

fn role_of_ines(a: &mut App) -> serde_json::Value {
    a.with_nexus(|nx| {
        nx.execute(&somnus::Request::readonly(
            r#"FIND(?p.attributes.role) WHERE { ?p {type: "Person", name: "Ines Duarte"} }"#,
        ))
        .to_json()["result"]
            .clone()
    })
}

/// W4 in the console: two sub-agents give Ines Duarte two roles. After the
/// first is approved, approving the second is refused with what changed,
/// the item is shown again with what it does now (an update of the role
/// the first set), and approving that applies it.
#[test]
fn a_stale_preview_is_shown_again_before_it_applies() {
    let mut a = app();
    stage_role(&mut a, "researcher", "vendor");
    stage_role(&mut a, "scheduler", "client");
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    // the newest first: the scheduler's "client"
    assert_eq!(a.reflections.proposals[0].actor, "scheduler");
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(role_of_ines(&mut a), serde_json::json!(["client"]));
    // the researcher's "vendor", previewed as an insert
    key(&mut a, KeyCode::Tab);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Tab);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("insert Person: Ines Duarte"), "{s}");
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(
        role_of_ines(&mut a),
        serde_json::json!(["client"]),
        "nothing applied unseen"
    );
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("refused, nothing changed"), "{s}");
    assert!(
        s.contains("Person: Ines Duarte was created by operator"),
        "{s}"
    );
    assert!(s.contains("from scheduler)"), "{s}");
    assert!(s.contains("update Person: Ines Duarte"), "{s}");
    assert!(s.contains("what it does now"), "{s}");
    assert!(
        s.contains("\"client\""),
        "the role it replaces is shown: {s}"
    );
    insta::assert_snapshot!("reflections_shown_again", s);
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(role_of_ines(&mut a), serde_json::json!(["vendor"]));
}

/// W2: the palette's import takes a quoted name as the shell would: the
/// user becomes a Person named Mira Chen, never `"Mira Chen"`.
#[test]
fn the_palette_import_reads_a_quoted_user_name() {
    let mut a = app();
    ctrl(&mut a, 'p');
    typed(&mut a, "Import a memory");
    key(&mut a, KeyCode::Enter);
    typed(&mut a, "engram tests/data/engram --user \"Nadia Okoye\"\n");
    let (t, _) = a
        .why
        .clone()
        .unwrap_or_else(|| panic!("no report: {:?}", a.messages));
    assert!(t.title.starts_with("imported engram"), "{t:?}");
    let names = a.with_nexus(|nx| {
        nx.kip(r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(CONTAINS(?p.name, "Nadia")) }"#)
            .to_json()["result"]
            .clone()
    });
    assert_eq!(names, serde_json::json!(["Nadia Okoye"]));
}

/// W1: a paste with CR line ends (what xterm, VTE and tmux send) keeps its
/// lines in the workbench and in the item editor; 5,000 lines arrive in one
/// piece.
#[test]
fn a_paste_with_cr_line_ends_keeps_its_lines() {
    let mut a = app();
    alt(&mut a, '1');
    let query = "// people\rFIND(?p.name)\r\nWHERE { ?p {type: \"Person\"} }\rLIMIT 3";
    a.on_paste(query);
    let lines = a.workbench.editor.lines().to_vec();
    assert!(lines.len() >= 4, "{lines:?}");
    assert!(lines.iter().any(|l| l == "FIND(?p.name)"), "{lines:?}");
    assert!(lines.iter().all(|l| !l.contains('\r')), "{lines:?}");
    // a long paste
    let long: String = (0..5_000).map(|i| format!("// line {i}\r")).collect();
    a.on_paste(&long);
    assert!(a.workbench.editor.lines().len() >= 5_000);
    // the item editor
    a.with_nexus(|nx| {
        somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut somnus::sleep::Heuristic,
            None,
            None,
        )
        .expect("cycle");
    });
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    key(&mut a, KeyCode::Char('e'));
    assert!(a.reflections.captures_text_now());
    let before = screen(&mut a, 120, 36);
    a.on_paste("// one\r// two\r// three");
    let s = screen(&mut a, 120, 36);
    assert_ne!(before, s);
    assert!(
        s.contains("// one") && s.contains("// two") && s.contains("// three"),
        "{s}"
    );
    assert!(!s.contains("// one // two"), "{s}");
}

/// Reflections keeps its cursor on the proposal and item it was on, by id:
/// a sub-agent's proposal arriving at the top of the list does not move the
/// highlight to another proposal.
#[test]
fn the_reflections_cursor_stays_on_its_item_when_proposals_arrive() {
    let mut a = app();
    stage_role(&mut a, "researcher", "vendor");
    a.with_nexus(|nx| {
        somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut somnus::sleep::Heuristic,
            None,
            None,
        )
        .expect("cycle");
    });
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    // on the cycle's proposal, third item
    let cycle = a.reflections.proposals[0].id;
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    let seq = a.reflections.proposals[0].items[2].seq;
    stage_role(&mut a, "scheduler", "client");
    key(&mut a, KeyCode::Char('r'));
    assert_ne!(
        a.reflections.proposals[0].id, cycle,
        "the new one is listed first"
    );
    let s = screen(&mut a, 120, 36);
    let title = a
        .reflections
        .proposals
        .iter()
        .find(|p| p.id == cycle)
        .and_then(|p| p.items.iter().find(|i| i.seq == seq))
        .map(|i| i.title.clone())
        .expect("the item");
    let head: String = title.chars().take(30).collect();
    assert!(s.contains(&format!("#{cycle} Reflection")), "{s}");
    assert!(s.lines().any(|l| l.contains("item ─")), "{s}");
    // the item panel shows the same item
    let detail = s.split("item ─").nth(1).unwrap_or("");
    assert!(detail.contains(&head), "{head} not in {detail}");
}

/// Filter and prompt boxes take Ctrl+U, Ctrl+W, Ctrl+A and Ctrl+E as
/// editing keys (never as letters), and a filter matching nothing says so.
#[test]
fn filter_boxes_take_ctrl_keys_as_editing_keys() {
    let mut a = app();
    alt(&mut a, '8');
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "group=proposal:1/4");
    ctrl(&mut a, 'a');
    ctrl(&mut a, 'e');
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("group=proposal:1/4"), "{s}");
    assert!(
        !s.contains("proposal:1/4a") && !s.contains("proposal:1/4e"),
        "{s}"
    );
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("no entry matches `group=proposal:1/4`"), "{s}");
    key(&mut a, KeyCode::Char('/'));
    ctrl(&mut a, 'u');
    typed(&mut a, "actor=operator kind");
    ctrl(&mut a, 'w');
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("actor=operator"), "{s}");
    assert!(!s.contains("operator kind"), "{s}");
    // the palette's filter and the explain prompt too
    key(&mut a, KeyCode::Esc);
    ctrl(&mut a, 'p');
    typed(&mut a, "Why");
    ctrl(&mut a, 'w');
    typed(&mut a, "Import");
    ctrl(&mut a, 'a');
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Import a memory"), "{s}");
    assert!(!s.contains("WhyImport") && !s.contains("Importa"), "{s}");
}

/// Ctrl+L asks for the whole screen to be drawn anew (a stray wide glyph
/// goes); it opens nothing.
#[test]
fn ctrl_l_redraws_the_screen() {
    let mut a = app();
    ctrl(&mut a, 'l');
    assert!(a.redraw);
    let s = screen(&mut a, 120, 36);
    assert!(!s.contains("┌ messages "), "{s}");
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

/// W6: after the console's own undo, the Graph finder no longer lists the
/// concept it removed; opening a concept that is gone leaves the trail as
/// it was.
#[test]
fn the_graph_finder_follows_the_consoles_own_undo() {
    let mut a = app();
    a.with_nexus(|nx| {
        let r = nx.kip(r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Zora Quill"} } }"#);
        assert!(r.to_json().get("error").is_none());
    });
    alt(&mut a, '2');
    typed(&mut a, "Zora");
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Zora Quill"), "{s}");
    // open a concept first, so that there is a trail
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Person: Zora Quill"), "{s}");
    // undo the write in Audit (the newest entry)
    alt(&mut a, '8');
    key(&mut a, KeyCode::Home);
    let e = a.audit.selected().cloned().expect("an entry");
    assert!(e.command.contains("Zora Quill"), "{}", e.command);
    key(&mut a, KeyCode::Char('u'));
    key(&mut a, KeyCode::Char('y'));
    alt(&mut a, '2');
    let s = screen(&mut a, 120, 36);
    assert!(
        !a.explorer.lists("Zora Quill"),
        "the finder still lists it: {s}"
    );
    assert!(!s.contains("Zora Quill"), "{s}");
}

/// A pending item says which of the agents' recent reads it would answer
/// differently: weighed in the background when the item is shown.
#[test]
fn reflections_show_which_recent_reads_an_item_changes() {
    let mut a = app();
    a.with_nexus(|nx| {
        let mut r = somnus::sleep::Heuristic;
        somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut r,
            None,
            None,
        )
        .expect("cycle");
        // an agent asked for the JS topic an hour ago
        let at = (chrono::Utc::now() - chrono::Duration::hours(1))
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        nx.record_reads(&[somnus::audit::reads::Logged {
            at,
            caller: "scout".into(),
            channel: "http".into(),
            served: somnus::audit::reads::Served {
                kind: "FIND".into(),
                command: r#"FIND(?t.name) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#
                    .into(),
                parameters: serde_json::json!({}),
                elements: vec![],
                rows: 1,
                micros: 40,
                error: None,
                dry_run: false,
            },
        }])
        .expect("logged");
    });
    alt(&mut a, '4');
    let items = a.reflections.proposals[0].items.clone();
    let js = items
        .iter()
        .position(|i| i.title.contains(r#"Merge Topic "JS""#))
        .expect("JS merge");
    for _ in 0..js {
        key(&mut a, KeyCode::Down);
    }
    let shown = masked(screen(&mut a, 120, 36));
    assert!(
        shown.contains("recall changes the answer to 1 of scout's recent reads"),
        "{shown}"
    );
    insta::assert_snapshot!("reflections_impact", shown);
    // another item, whose answer it does not change
    key(&mut a, KeyCode::Down);
    let other = masked(screen(&mut a, 120, 36));
    assert!(
        other.contains("changes none of the 1 recent reads weighed"),
        "{other}"
    );
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

/// At 80 columns the Conflicts pane puts the two facts one above the
/// other, never side by side with their words run together, and a line
/// too long for its column ends in `…`.
#[test]
fn conflicts_at_80_columns_keep_the_two_facts_apart() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('s'));
    alt(&mut a, '5');
    assert_eq!(a.tab, Tab::Conflicts);
    let s = screen(&mut a, 80, 30);
    let older = s.lines().position(|l| l.contains("││older"));
    let newer = s.lines().position(|l| l.contains("││newer"));
    if let (Some(o), Some(n)) = (older, newer) {
        assert!(n > o, "the newer fact below the older one:\n{s}");
    } else {
        panic!("no contradiction shown:\n{s}");
    }
    let wide = screen(&mut a, 200, 40);
    let row = wide
        .lines()
        .find(|l| l.contains("older") && l.contains("newer"))
        .expect("side by side when wide");
    assert!(row.contains(" │ "), "a gap between the two facts:\n{wide}");
}

/// F4 clears the whole editor at once, however long its text (a pasted
/// 200 KB capsule), and Ctrl+Z brings all of it back.
#[test]
fn f4_clears_a_long_text_in_one_press() {
    let mut a = app();
    alt(&mut a, '1');
    let line = format!("// {}\n", "x".repeat(97));
    let big = line.repeat(2_000);
    a.on_paste(&big);
    a.drain();
    assert!(a.workbench.text().len() >= 200_000);
    key(&mut a, KeyCode::F(4));
    assert_eq!(a.workbench.text(), "");
    ctrl(&mut a, 'z');
    assert!(a.workbench.text().len() >= 200_000);
    assert!(a.workbench.text().contains(&line));
}

/// The completion list narrows as the word is typed on, widens again on
/// Backspace, and closes when nothing is left to offer.
#[test]
fn the_completion_list_filters_as_you_type() {
    let mut a = app();
    alt(&mut a, '1');
    typed(&mut a, "FIND(?p) WHERE { ?p {type: \"P");
    key(&mut a, KeyCode::Tab);
    let popup = |a: &mut somnus::tui::app::App| -> Vec<String> {
        let s = screen(a, 120, 36);
        let lines: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
        let Some((top, col)) = lines.iter().enumerate().find_map(|(i, l)| {
            let t: String = l.iter().collect();
            t.find("┌ complete").map(|b| (i, t[..b].chars().count()))
        }) else {
            return vec![];
        };
        lines[top + 1..]
            .iter()
            .take_while(|l| l.get(col) == Some(&'│'))
            .map(|l| {
                l[col + 1..]
                    .iter()
                    .take_while(|c| **c != '│')
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .collect()
    };
    let all = popup(&mut a);
    let shown = screen(&mut a, 120, 36);
    assert!(all.iter().any(|r| r == "Person"), "{all:?}\n{shown}");
    assert!(all.iter().any(|r| r == "Project"), "{all:?}\n{shown}");
    typed(&mut a, "e");
    let narrowed = popup(&mut a);
    assert!(narrowed.iter().any(|r| r == "Person"), "{narrowed:?}");
    assert!(!narrowed.iter().any(|r| r == "Project"), "{narrowed:?}");
    key(&mut a, KeyCode::Backspace);
    let wide = popup(&mut a);
    assert!(wide.iter().any(|r| r == "Project"), "{wide:?}");
    typed(&mut a, "xq");
    assert!(popup(&mut a).is_empty(), "closed when nothing matches");
    assert!(
        a.workbench.text().contains("type: \"Pxq"),
        "{}",
        a.workbench.text()
    );
}

/// Items that disagree are marked in the proposal and item lists, and the
/// approve confirmation names the conflict before anything applies.
#[test]
fn conflicts_are_marked_in_the_lists_and_named_before_approving() {
    let mut a = app();
    stage_role(&mut a, "researcher", "vendor");
    stage_role(&mut a, "scheduler", "client");
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    let s = screen(&mut a, 120, 36);
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("│#2 ") || l.contains("│#1 "))
        .collect();
    assert!(
        rows.len() >= 2 && rows.iter().take(2).all(|r| r.contains("⚠ ")),
        "{s}"
    );
    assert!(
        s.contains("[ ] ○⚠") || s.lines().any(|l| l.contains("[ ]") && l.contains('⚠')),
        "{s}"
    );
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Conflicts:"), "{s}");
    assert!(s.contains("⚠ item 1:"), "{s}");
    assert!(s.contains("vendor") && s.contains("client"), "{s}");
    key(&mut a, KeyCode::Esc);
}

/// The undo confirmation says what would change (worked out, nothing
/// written), not a list of entry numbers.
#[test]
fn the_undo_confirmation_says_what_would_change() {
    let mut a = app();
    stage_role(&mut a, "researcher", "vendor");
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(role_of_ines(&mut a), serde_json::json!(["vendor"]));
    alt(&mut a, '8');
    assert_eq!(a.tab, Tab::Audit);
    assert!(
        a.audit.entries[0]
            .batch
            .as_deref()
            .is_some_and(|b| b.starts_with("proposal:"))
    );
    key(&mut a, KeyCode::Char('U'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("It would:"), "{s}");
    assert!(s.contains("removes Person: Ines Duarte"), "{s}");
    assert!(!s.contains("(#"), "no entry numbers: {s}");
    // only worked out: nothing changed yet
    assert_eq!(role_of_ines(&mut a), serde_json::json!(["vendor"]));
    key(&mut a, KeyCode::Char('y'));
    assert_ne!(role_of_ines(&mut a), serde_json::json!(["vendor"]));
}

/// Tab completes the import prompt's folder from the disk, and the "why
/// not merged" prompt's concept from the memory.
#[test]
fn prompts_complete_a_folder_and_a_concept_with_tab() {
    let mut a = app();
    ctrl(&mut a, 'p');
    typed(&mut a, "Import a memory");
    key(&mut a, KeyCode::Enter);
    // two folders start so: as far as they agree, and both listed
    typed(&mut a, "engram tests/data/eng");
    key(&mut a, KeyCode::Tab);
    assert_eq!(
        a.ask.as_ref().map(|x| x.1.as_str()),
        Some("engram tests/data/engram")
    );
    let said = format!("{:?}", a.messages);
    assert!(
        said.contains("2 match: tests/data/engram-entities/  tests/data/engram/"),
        "{said}"
    );
    // one: taken whole, a folder with its `/`
    typed(&mut a, "-");
    key(&mut a, KeyCode::Tab);
    assert_eq!(
        a.ask.as_ref().map(|x| x.1.as_str()),
        Some("engram tests/data/engram-entities/")
    );
    key(&mut a, KeyCode::Esc);
    alt(&mut a, '2');
    typed(&mut a, "Tom Ruiz");
    key(&mut a, KeyCode::Enter);
    key(&mut a, KeyCode::Char('m'));
    typed(&mut a, "Person:Tomás");
    key(&mut a, KeyCode::Tab);
    assert_eq!(
        a.ask.as_ref().map(|x| x.1.as_str()),
        Some("Person:Tomás Ruiz")
    );
    key(&mut a, KeyCode::Enter);
    let (why, _) = a.why.clone().expect("a why panel");
    assert!(why.lines.join("\n").contains("Person:Tomás Ruiz"));
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
