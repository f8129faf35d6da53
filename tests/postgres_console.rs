//! The console on a PostgreSQL memory: every pane draws what it draws on
//! SQLite, a cycle runs from the Sleep pane, its proposal is approved from
//! the Reflections pane, and a write by another process refreshes the
//! panes.
//!
//! They need a server: `SOMNUS_TEST_PG=postgres://user@host:port/db`
//! (`.ci/run` starts a throwaway one). Without it each test says so and
//! passes.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use somnus::Nexus;
use somnus::tui::app::{App, Runner};
use somnus::tui::component::Tab;
use std::collections::VecDeque;

mod pg_support;
use pg_support::{Memory, server};

fn app_on(mut nx: Nexus) -> App {
    somnus::demo::load(&mut nx).expect("demo capsules");
    let mut app = App::new(nx, "demo", Runner::Inline(VecDeque::new()));
    app.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    app.health.clock = Some("2026-11-20T09:00:00Z".into());
    app.drain();
    app
}

fn key(app: &mut App, code: KeyCode) {
    app.press(code, KeyModifiers::NONE);
}

fn alt(app: &mut App, c: char) {
    app.press(KeyCode::Char(c), KeyModifiers::ALT);
}

/// The screen as text, with timings, clock times, ids and the memory's
/// place masked.
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
    for (re, with) in [
        (r"\d+(\.\d+)? ?(ms|µs|s)\b", "#"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z", "<now>"),
        (r"\b\d\d-\d\d \d\d:\d\d\b", "MM-DD hh:mm"),
        (r"\b[CP]:\d+", "X:#"),
        (r"#\d+", "#N"),
    ] {
        out = regex::Regex::new(re)
            .expect("re")
            .replace_all(&out, with)
            .into_owned();
    }
    // (a masked timing shortens its line)
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_pane_draws_on_postgresql_as_on_sqlite() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "c_panes");
    let mut pg = app_on(Nexus::open_postgres(&mem.loc).expect("open"));
    let mut lite = app_on(Nexus::open_in_memory().expect("open"));
    for a in [&mut pg, &mut lite] {
        key(a, KeyCode::F(5));
    }
    for tab in ['1', '2', '3', '5', '6', '7'] {
        alt(&mut pg, tab);
        alt(&mut lite, tab);
        let (mut a, mut b) = (screen(&mut lite, 120, 36), screen(&mut pg, 120, 36));
        if tab == '2' {
            // the index lists the latest written first: the same concepts,
            // in the order of their (wall clock) write times
            let sorted = |s: &str| {
                let mut v: Vec<&str> = s.lines().collect();
                v.sort();
                v.join("\n")
            };
            (a, b) = (sorted(&a), sorted(&b));
        }
        assert_eq!(a, b, "tab {tab} differs:\nSQLite\n{a}\nPostgreSQL\n{b}");
    }
    // the audit pane lists the same entries (ids and times differ)
    alt(&mut pg, '8');
    let s = screen(&mut pg, 120, 36);
    assert!(s.contains("BOOTSTRAP") || s.contains("UPSERT"), "{s}");
}

#[test]
fn a_cycle_runs_from_the_console_and_its_proposal_is_decided_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "c_cycle");
    let mut a = app_on(Nexus::open_postgres(&mem.loc).expect("open"));
    alt(&mut a, '6');
    assert_eq!(a.tab, Tab::Sleep);
    key(&mut a, KeyCode::Char('s'));
    let rep = a.sleep.report.clone().expect("a report");
    assert_eq!(rep.status, "completed", "{:#}", rep.to_json());
    assert_eq!(rep.phases.len(), 13);
    assert_eq!(a.sleep.runs.len(), 1);
    assert_eq!(a.reflections.proposals.len(), 1);
    let n = a.reflections.proposals[0].items.len();
    assert!(n > 40, "{n} items");

    // tick the first item, approve it behind the confirmation
    alt(&mut a, '4');
    assert_eq!(a.tab, Tab::Reflections);
    key(&mut a, KeyCode::Char(' '));
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    let p = &a.reflections.proposals[0];
    assert_eq!(
        p.count("applied"),
        1,
        "{:?}",
        p.items.iter().map(|i| &i.status).collect::<Vec<_>>()
    );
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("applied"), "{s}");
}

/// A second passes: the console looks for others' commits.
fn poll(a: &mut App) {
    for _ in 0..10 {
        a.tick();
    }
    a.drain();
}

#[test]
fn another_process_writing_refreshes_the_console_on_postgresql() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "c_refresh");
    let mut a = app_on(Nexus::open_postgres(&mem.loc).expect("open"));
    alt(&mut a, '3');
    poll(&mut a);
    let before = screen(&mut a, 120, 36);
    assert!(!before.contains("Zanzibar"), "{before}");
    let mut other = Nexus::open_postgres(&mem.loc).expect("open");
    other.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Zanzibar"} SET ATTRIBUTES { description: "a new type" } } }"#);
    poll(&mut a);
    let after = screen(&mut a, 120, 36);
    assert!(after.contains("changed elsewhere"), "{after}");
    assert!(
        after.contains("Zanzibar"),
        "the schema pane refreshed:\n{after}"
    );
    // its own write is not news
    a.with_nexus(|nx| {
        nx.kip(r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "Mine"} } }"#);
    });
    a.status = None;
    poll(&mut a);
    let s = screen(&mut a, 120, 36);
    assert!(!s.contains("changed elsewhere"), "{s}");
}

/// The database drops the console's connection (a restart): the job that
/// met it shows an error, and the next one runs on a new connection.
#[test]
fn the_console_reconnects_when_postgresql_drops_it() {
    let Some(url) = server() else { return };
    let mem = Memory::new(&url, "c_reconnect");
    let mut a = app_on(Nexus::open_postgres(&mem.loc).expect("open"));
    alt(&mut a, '1');
    key(&mut a, KeyCode::F(5));
    assert!(screen(&mut a, 120, 36).contains("30 rows"));
    let mut admin = mem.loc.connect().expect("connect");
    admin
        .batch_execute(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'somnus {}' AND pid <> pg_backend_pid()",
            mem.loc.memory
        ))
        .expect("terminate");
    std::thread::sleep(std::time::Duration::from_millis(100));
    key(&mut a, KeyCode::F(5));
    key(&mut a, KeyCode::F(5));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("30 rows"), "{s}");
}
