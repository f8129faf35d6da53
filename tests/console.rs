//! The console driven by key events, its screen rendered headlessly and
//! compared with reviewed snapshots.

#[path = "console/maintenance.rs"]
mod maintenance;
#[path = "console/review.rs"]
mod review;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use review::{role_of_ines, stage_role};
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
