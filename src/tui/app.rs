//! The console application: tabs, global keys, popups, and the job runner
//! that keeps engine work off the UI thread.

use super::audit::AuditPane;
use super::component::{Action, Ask, Component, Job, JobOutput, Tab, WhyText, hint};
use super::conflicts::Conflicts;
use super::explorer::Explorer;
use super::health::HealthPane;
use super::jobs::Emit;
use super::reflections::Reflections;
use super::schema::SchemaView;
use super::sleep::SleepPane;
use super::theme;
use super::traffic::TrafficPane;

mod prompt;
use super::workbench::{Workbench, centered};
use crate::Nexus;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One palette entry and what choosing it does.
#[derive(Debug, Clone)]
struct PaletteItem {
    label: String,
    run: PaletteRun,
}

#[derive(Debug, Clone)]
enum PaletteRun {
    Command(&'static str),
    /// Go to the pane and press the key.
    Key(Tab, KeyEvent),
}

/// The key a hint names, when it is one key (`a`, `F5`, `Enter`, `^Z`,
/// `Space`); navigation and key ranges are not palette commands.
fn key_of(label: &str) -> Option<KeyEvent> {
    let code = match label {
        "Enter" => KeyCode::Enter,
        "Space" => KeyCode::Char(' '),
        "Esc" => KeyCode::Esc,
        "Tab" => KeyCode::Tab,
        "Backspace" => KeyCode::Backspace,
        l if l.starts_with('^') && l.chars().count() == 2 => {
            let c = l.chars().nth(1)?.to_ascii_lowercase();
            return Some(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
        }
        l if l.starts_with('F') && l.len() <= 3 => KeyCode::F(l[1..].parse().ok()?),
        l if l.chars().count() == 1 => KeyCode::Char(l.chars().next()?),
        _ => return None,
    };
    Some(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Where jobs run: inline (tests, screenshots) or on tokio's blocking pool.
pub enum Runner {
    Inline(VecDeque<JobOutput>),
    Pool {
        tx: tokio::sync::mpsc::UnboundedSender<JobOutput>,
        handle: tokio::runtime::Handle,
    },
}

pub struct App {
    nexus: Arc<Mutex<Nexus>>,
    interrupt: Arc<crate::engine::Interrupter>,
    runner: Runner,
    pub tab: Tab,
    pub workbench: Workbench,
    pub explorer: Explorer,
    pub schema: SchemaView,
    pub reflections: Reflections,
    pub sleep: SleepPane,
    pub health: HealthPane,
    pub conflicts: Conflicts,
    pub audit: AuditPane,
    pub traffic: TrafficPane,
    pub help: bool,
    palette: Option<(String, usize)>,
    pub mouse: bool,
    pub status: Option<(String, Instant)>,
    pub quit: bool,
    /// Ctrl+L: the terminal is cleared and the whole screen drawn anew.
    pub redraw: bool,
    label: String,
    pub copied: Vec<String>,
    pub mouse_changed: bool,
    tab_area: Rect,
    /// Where each tab was drawn: (first column, width).
    tab_spans: Vec<(u16, u16)>,
    ticks: u64,
    data_version: Option<i64>,
    /// An explanation on screen, and how far it is scrolled.
    pub why: Option<(WhyText, u16)>,
    /// What the operator is typing for the why panel.
    /// The prompt open, and what is typed in it.
    pub ask: Option<(Ask, String)>,
    /// Every message shown, oldest first: (clock time, error?, text).
    pub messages: VecDeque<(String, bool, String)>,
    /// An error shown until the operator dismisses it.
    pub sticky: Option<String>,
    /// The message log popup, and how far it is scrolled.
    log_open: Option<u16>,
    /// The console's own sleep cycle commits on a connection of its own:
    /// those commits are not "elsewhere".
    absorb_change: bool,
    /// The newest audit entry and proposal seen by the last poll.
    newest_seen: Option<(i64, i64)>,
    /// What the last change elsewhere was, when the poll could tell.
    changed_what: Option<String>,
    /// Quitting would lose or interrupt these: asked before quitting.
    pub quit_confirm: Option<Vec<String>>,
    /// Quit once the cancelled cycle has stopped.
    quit_when_idle: bool,
    /// An import running: what stops it, and its source.
    importing: Option<(super::component::CancelFlag, String)>,
}

const GLOBAL_COMMANDS: &[&str] = &[
    "Go to Query",
    "Go to Graph",
    "Go to Schema",
    "Go to Reflections",
    "Go to Conflicts",
    "Go to Audit",
    "Go to Traffic",
    "Go to Sleep",
    "Go to Health",
    "Why… (explain an element)",
    "Why not merged… (two concepts)",
    "Import a memory… (Moltbot or Engram folder)",
    "Toggle mouse",
    "Help",
    "Quit",
];

impl App {
    pub fn new(nexus: Nexus, label: &str, runner: Runner) -> App {
        let interrupt = Arc::new(nexus.interrupt_handle());
        let mut app = App {
            nexus: Arc::new(Mutex::new(nexus)),
            interrupt,
            runner,
            tab: Tab::Query,
            workbench: Workbench::new(
                "FIND(?p.name, ?p.attributes.description)\nWHERE {\n  ?p {type: \"Person\"}\n}\nORDER BY ?p.name\nLIMIT 50",
            ),
            explorer: Explorer::new(),
            schema: SchemaView::new(),
            reflections: Reflections::new(),
            sleep: SleepPane::new(),
            health: HealthPane::new(),
            conflicts: Conflicts::new(),
            audit: AuditPane::new(),
            traffic: TrafficPane::new(),
            help: false,
            palette: None,
            mouse: false,
            status: None,
            quit: false,
            redraw: false,
            label: label.to_string(),
            copied: Vec::new(),
            mouse_changed: false,
            tab_area: Rect::default(),
            tab_spans: Vec::new(),
            ticks: 0,
            data_version: None,
            why: None,
            ask: None,
            quit_confirm: None,
            quit_when_idle: false,
            messages: VecDeque::new(),
            sticky: None,
            log_open: None,
            absorb_change: false,
            newest_seen: None,
            changed_what: None,
            importing: None,
        };
        app.spawn(Job::Schema);
        app
    }

    pub fn spawn(&mut self, job: Job) {
        match &mut self.runner {
            Runner::Inline(q) => {
                let buf: Arc<Mutex<Vec<JobOutput>>> = Arc::default();
                let emit: Emit = {
                    let buf = buf.clone();
                    Arc::new(move |o| buf.lock().unwrap_or_else(|e| e.into_inner()).push(o))
                };
                let out = job.run_on(&self.nexus, &emit);
                q.extend(buf.lock().unwrap_or_else(|e| e.into_inner()).drain(..));
                q.push_back(out);
            }
            Runner::Pool { tx, handle } => {
                let nexus = self.nexus.clone();
                let emit: Emit = {
                    let tx = tx.clone();
                    Arc::new(move |o| {
                        let _ = tx.send(o);
                    })
                };
                let tx = tx.clone();
                handle.spawn_blocking(move || {
                    let out = job.run_on(&nexus, &emit);
                    let _ = tx.send(out);
                });
            }
        }
    }

    /// Runs `f` on the engine (scripted sessions check the memory this way).
    pub fn with_nexus<T>(&self, f: impl FnOnce(&mut Nexus) -> T) -> T {
        let mut nx = self.nexus.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut nx)
    }

    /// Presses one key and waits for the work it started (scripted
    /// sessions: tests, screenshots).
    pub fn press(&mut self, code: KeyCode, mods: KeyModifiers) {
        self.on_key(KeyEvent::new(code, mods));
        self.drain();
    }

    /// Types `text` (a newline is Enter) and waits for the work it started.
    pub fn type_text(&mut self, text: &str) {
        for ch in text.chars() {
            let code = if ch == '\n' {
                KeyCode::Enter
            } else {
                KeyCode::Char(ch)
            };
            self.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        }
        self.drain();
    }

    /// Delivers finished inline jobs (tests drive the app this way).
    pub fn drain(&mut self) {
        loop {
            let next = match &mut self.runner {
                Runner::Inline(q) => q.pop_front(),
                Runner::Pool { .. } => None,
            };
            match next {
                Some(out) => self.on_job(out),
                None => break,
            }
        }
    }

    pub fn on_job(&mut self, out: JobOutput) {
        if let JobOutput::Polled(v, entry, proposal) = out {
            let changed = self.data_version.is_some_and(|old| old != v);
            self.data_version = Some(v);
            // what changed: a new proposal, else the newest write
            let prev = self.newest_seen.take();
            let (seen_entry, seen_proposal) = prev.unwrap_or_default();
            let what = match (&proposal, &entry) {
                _ if prev.is_none() => None,
                (Some((p, t)), _) if *p > seen_proposal => Some(t.clone()),
                (_, Some((e, t))) if *e > seen_entry => Some(t.clone()),
                _ => None,
            };
            self.newest_seen = Some((
                entry.map_or(seen_entry, |e| e.0),
                proposal.map_or(seen_proposal, |p| p.0),
            ));
            if changed {
                // the console's own cycle committed, not someone else
                let own = self.sleep.is_running() || std::mem::take(&mut self.absorb_change);
                self.changed_what = what;
                self.refresh_quietly(own);
            }
            return;
        }
        if matches!(out, JobOutput::SleepDone(Ok(_))) {
            self.absorb_change = true;
        }
        if let JobOutput::Schema(Ok(o)) = &out {
            let types: Vec<String> = o.concept_types.iter().map(|t| t.name.clone()).collect();
            let preds: Vec<String> = o.predicates.iter().map(|t| t.name.clone()).collect();
            self.workbench.set_schema(types, preds);
        }
        if self.quit_when_idle && self.importing.is_none() && matches!(out, JobOutput::SleepDone(_))
        {
            self.quit = true;
        }
        if let JobOutput::ImportProgress(done, total) = out {
            let source = self.importing.as_ref().map_or("", |i| i.1.as_str());
            let filled = (done * 20).checked_div(total).unwrap_or(20);
            let bar = format!("{}{}", "█".repeat(filled), "░".repeat(20 - filled));
            let text = format!("importing {source}: {done}/{total} writes {bar} (^C cancels)");
            if done == 0 || done == total {
                // the start and the end go to the log too
                self.say(text);
            } else {
                self.status = Some((text, Instant::now()));
            }
            return;
        }
        if let JobOutput::ImportDone(r) = out {
            self.importing = None;
            match r {
                Ok(t) => {
                    self.say(t.lines.first().cloned().unwrap_or_default());
                    self.why = Some((t, 0));
                    // its commit came on a connection of its own
                    self.absorb_change = true;
                    self.refresh_quietly(true);
                }
                Err(e) => self.fail(e),
            }
            if self.quit_when_idle && !self.sleep.is_running() {
                self.quit = true;
            }
            return;
        }
        if let JobOutput::Why(r) = out {
            match r {
                Ok(t) => self.why = Some((t, 0)),
                Err(e) => self.fail(e),
            }
            return;
        }
        let a = Action::Done(out);
        let mut follow = Vec::new();
        follow.extend(self.workbench.update(&a));
        follow.extend(self.explorer.update(&a));
        follow.extend(self.schema.update(&a));
        follow.extend(self.reflections.update(&a));
        follow.extend(self.sleep.update(&a));
        follow.extend(self.health.update(&a));
        follow.extend(self.conflicts.update(&a));
        follow.extend(self.audit.update(&a));
        follow.extend(self.traffic.update(&a));
        // a decision changed the memory: the other panes reload
        if matches!(
            &a,
            Action::Done(JobOutput::Decided(Ok(_)) | JobOutput::SleepDone(Ok(_)))
        ) {
            self.spawn(Job::Schema);
            // an undo or approval may remove or bring back concepts: the
            // Graph finder's list is read again
            if self.explorer.index_loaded {
                self.spawn(Job::Index);
            }
            if let Some(id) = self.explorer.current.as_ref().map(|n| n.id) {
                self.spawn(Job::Neighbourhood(id));
            }
        }
        self.apply(follow);
    }

    pub fn tick(&mut self) {
        self.workbench.tick();
        // every second, look for commits by other processes
        self.ticks += 1;
        if self.ticks.is_multiple_of(10) && !self.workbench.is_running() {
            self.spawn(Job::Poll);
        }
        // a maintainer or a cycle of another process that is killed says
        // nothing: the Sleep pane looks again every two seconds while it
        // shows one
        if self.ticks.is_multiple_of(20)
            && self.tab == Tab::Sleep
            && !self.sleep.is_running()
            && self.sleep.watches_a_process()
        {
            self.spawn(Job::Runs);
        }
        // the live traffic looks for new requests every second while shown
        if self.ticks.is_multiple_of(10) && self.tab == Tab::Traffic {
            let a = self.traffic.poll();
            self.apply(a);
        }
        if let Some((_, at)) = &self.status
            && at.elapsed().as_secs() >= 5
        {
            self.status = None;
        }
    }

    /// Another process changed the memory: reload what the panes show.
    pub fn refresh(&mut self) {
        self.refresh_quietly(false)
    }

    /// Reloads what the panes show; says so unless the change was the
    /// console's own.
    fn refresh_quietly(&mut self, own: bool) {
        self.spawn(Job::Schema);
        if self.explorer.index_loaded {
            self.spawn(Job::Index);
        }
        if let Some(id) = self.explorer.current.as_ref().map(|n| n.id) {
            self.spawn(Job::Neighbourhood(id));
        }
        if self.reflections.loaded {
            self.spawn(Job::Proposals);
        }
        if self.conflicts.loaded {
            self.spawn(Job::Contradictions);
        }
        if self.sleep.loaded && !self.sleep.is_running() {
            self.spawn(Job::Runs);
        }
        if self.health.loaded {
            let a = self.health.load();
            self.apply(vec![a]);
        }
        if self.audit.loaded {
            let a = self.audit.load();
            self.apply(a);
        }
        let what = self.changed_what.take();
        if !own {
            self.say(match what {
                Some(w) => format!(
                    "the memory changed elsewhere ({w}): panes refreshed (F5 re-runs the query)"
                ),
                None => {
                    "the memory changed elsewhere: panes refreshed (F5 re-runs the query)".into()
                }
            });
        }
    }

    fn component(&mut self) -> &mut dyn Component {
        match self.tab {
            Tab::Query => &mut self.workbench,
            Tab::Graph => &mut self.explorer,
            Tab::Schema => &mut self.schema,
            Tab::Reflections => &mut self.reflections,
            Tab::Sleep => &mut self.sleep,
            Tab::Health => &mut self.health,
            Tab::Conflicts => &mut self.conflicts,
            Tab::Audit => &mut self.audit,
            Tab::Traffic => &mut self.traffic,
        }
    }

    fn component_ref(&self) -> &dyn Component {
        match self.tab {
            Tab::Query => &self.workbench,
            Tab::Graph => &self.explorer,
            Tab::Schema => &self.schema,
            Tab::Reflections => &self.reflections,
            Tab::Sleep => &self.sleep,
            Tab::Health => &self.health,
            Tab::Conflicts => &self.conflicts,
            Tab::Audit => &self.audit,
            Tab::Traffic => &self.traffic,
        }
    }

    fn select_tab(&mut self, t: Tab) {
        self.tab = t;
        if t == Tab::Graph && !self.explorer.index_loaded {
            self.spawn(Job::Index);
        }
        if t == Tab::Schema {
            self.spawn(Job::Schema);
        }
        if t == Tab::Reflections {
            self.spawn(Job::Proposals);
        }
        if t == Tab::Conflicts {
            self.spawn(Job::Contradictions);
        }
        if t == Tab::Audit {
            let a = self.audit.load();
            self.apply(a);
        }
        if t == Tab::Sleep && !self.sleep.loaded {
            self.spawn(Job::Runs);
        }
        if t == Tab::Traffic {
            let a = self.traffic.load();
            self.apply(a);
        }
        if t == Tab::Health {
            let a = self.health.load();
            self.apply(vec![a]);
        }
    }

    /// Every command the palette offers: the global ones, this pane's
    /// named commands, and every pane's keys (from their key hints, so
    /// they never drift from what the keys do), each with its key.
    fn palette_items(&self) -> Vec<PaletteItem> {
        let mut v: Vec<PaletteItem> = GLOBAL_COMMANDS
            .iter()
            .map(|c| PaletteItem {
                label: c.to_string(),
                run: PaletteRun::Command(c),
            })
            .collect();
        v.extend(
            self.component_ref()
                .commands()
                .into_iter()
                .map(|c| PaletteItem {
                    label: c.to_string(),
                    run: PaletteRun::Command(c),
                }),
        );
        for t in Tab::ALL {
            let hints = match t {
                Tab::Query => self.workbench.hints(),
                Tab::Graph => self.explorer.hints(),
                Tab::Schema => self.schema.hints(),
                Tab::Reflections => self.reflections.hints(),
                Tab::Conflicts => self.conflicts.hints(),
                Tab::Sleep => self.sleep.hints(),
                Tab::Health => self.health.hints(),
                Tab::Audit => self.audit.hints(),
                Tab::Traffic => self.traffic.hints(),
            };
            for h in hints {
                if let Some(k) = key_of(h.key) {
                    v.push(PaletteItem {
                        label: format!("{}: {} ({})", t.title(), h.what, h.key),
                        run: PaletteRun::Key(t, k),
                    });
                }
            }
        }
        v
    }

    fn palette_matches(&self, filter: &str) -> Vec<PaletteItem> {
        let m = SkimMatcherV2::default();
        let mut scored: Vec<(i64, PaletteItem)> = self
            .palette_items()
            .into_iter()
            .filter_map(|c| {
                if filter.is_empty() {
                    Some((0, c))
                } else {
                    m.fuzzy_match(&c.label, filter).map(|s| (s, c))
                }
            })
            .collect();
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        scored.into_iter().map(|(_, c)| c).collect()
    }

    /// Applies actions until none are left.
    pub fn apply(&mut self, actions: Vec<Action>) {
        let mut queue: VecDeque<Action> = actions.into();
        while let Some(a) = queue.pop_front() {
            match a {
                Action::Quit => self.request_quit(),
                Action::SelectTab(t) => self.select_tab(t),
                Action::NextTab => {
                    let i = Tab::ALL.iter().position(|t| *t == self.tab).unwrap_or(0);
                    self.select_tab(Tab::ALL[(i + 1) % Tab::ALL.len()]);
                }
                Action::ToggleHelp => self.help = !self.help,
                Action::OpenPalette => self.palette = Some((String::new(), 0)),
                Action::ToggleMouse => {
                    self.mouse = !self.mouse;
                    self.mouse_changed = true;
                    self.say(format!(
                        "mouse {}",
                        if self.mouse {
                            "on (Shift selects text)"
                        } else {
                            "off"
                        }
                    ));
                }
                Action::Spawn(job) => self.spawn(job),
                Action::Cancel => {
                    self.interrupt.interrupt();
                    self.say("cancelling…");
                }
                Action::Status(s) => self.say(s),
                Action::Error(e) => self.fail(e),
                Action::Copy(s) => {
                    self.say(format!("copied {} characters", s.chars().count()));
                    self.copied.push(s);
                }
                Action::OpenAsQuery(q) => {
                    self.tab = Tab::Query;
                    queue.extend(self.workbench.update(&Action::OpenAsQuery(q)));
                }
                a @ Action::Rerun { .. } => {
                    self.tab = Tab::Query;
                    queue.extend(self.workbench.update(&a));
                }
                Action::OpenConcept(id) => {
                    self.select_tab(Tab::Graph);
                    queue.extend(self.explorer.update(&Action::OpenConcept(id)));
                }
                Action::Command(c) => match c {
                    "Go to Query" => self.select_tab(Tab::Query),
                    "Go to Graph" => self.select_tab(Tab::Graph),
                    "Go to Schema" => self.select_tab(Tab::Schema),
                    "Go to Reflections" => self.select_tab(Tab::Reflections),
                    "Go to Sleep" => self.select_tab(Tab::Sleep),
                    "Go to Health" => self.select_tab(Tab::Health),
                    "Go to Conflicts" => self.select_tab(Tab::Conflicts),
                    "Go to Audit" => self.select_tab(Tab::Audit),
                    "Go to Traffic" => self.select_tab(Tab::Traffic),
                    "Toggle mouse" => queue.push_back(Action::ToggleMouse),
                    "Why… (explain an element)" => self.ask = Some((Ask::Element, String::new())),
                    "Why not merged… (two concepts)" => {
                        self.ask = Some((Ask::Pair(None), String::new()))
                    }
                    "Import a memory… (Moltbot or Engram folder)" => {
                        if self.importing.is_some() {
                            self.say("an import is running (^C cancels it)");
                        } else {
                            self.ask = Some((Ask::Import, String::new()))
                        }
                    }
                    "Help" => self.help = true,
                    "Quit" => self.request_quit(),
                    other => {
                        let more = self.component().update(&Action::Command(other));
                        queue.extend(more);
                    }
                },
                Action::Done(out) => self.on_job(out),
                Action::Ask(a) => self.ask = Some((a, String::new())),
            }
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        if self.help {
            self.help = false;
            return;
        }
        if self.quit_confirm.is_some() {
            self.quit_key(key);
            return;
        }
        if self.log_open.is_some() {
            self.log_key(key);
            return;
        }
        // Ctrl+L redraws the whole screen (a terminal's convention: a wide
        // glyph another program left behind goes); Ctrl+G opens the log
        if ctrl && key.code == KeyCode::Char('l') {
            self.redraw = true;
            return;
        }
        if ctrl && key.code == KeyCode::Char('g') {
            self.log_open = Some(self.messages.len().saturating_sub(1) as u16);
            return;
        }
        if self.why.is_some() {
            self.why_key(key);
            return;
        }
        if self.ask.is_some() {
            self.ask_key(key);
            return;
        }
        if let Some((filter, sel)) = &mut self.palette {
            match key.code {
                KeyCode::Esc => self.palette = None,
                KeyCode::Down => *sel += 1,
                KeyCode::Up => *sel = sel.saturating_sub(1),
                KeyCode::Enter => {
                    let (f, s) = (filter.clone(), *sel);
                    let m = self.palette_matches(&f);
                    self.palette = None;
                    match m
                        .get(s.min(m.len().saturating_sub(1)))
                        .map(|c| c.run.clone())
                    {
                        Some(PaletteRun::Command(c)) => self.apply(vec![Action::Command(c)]),
                        Some(PaletteRun::Key(t, k)) => {
                            self.select_tab(t);
                            self.on_key(k);
                        }
                        None => {}
                    }
                }
                _ => {
                    if super::component::edit_line(filter, &key) {
                        *sel = 0;
                    }
                }
            }
            return;
        }
        if ctrl && matches!(key.code, KeyCode::Char('q') | KeyCode::Char('c')) {
            if key.code == KeyCode::Char('c')
                && let Some((cancel, source)) = &self.importing
            {
                cancel.cancel();
                let s = format!("cancelling the {source} import: nothing of it is written");
                self.say(s);
                return;
            }
            if key.code == KeyCode::Char('c') && self.workbench.is_running() {
                self.apply(vec![Action::Cancel]);
                return;
            }
            self.request_quit();
            return;
        }
        if key.code == KeyCode::F(1) {
            self.help = true;
            return;
        }
        if ctrl && key.code == KeyCode::Char('p') {
            self.palette = Some((String::new(), 0));
            return;
        }
        if key.code == KeyCode::F(12) {
            self.apply(vec![Action::ToggleMouse]);
            return;
        }
        if alt
            && let KeyCode::Char(c) = key.code
            && let Some(t) = Tab::numbered(c)
        {
            self.select_tab(t);
            return;
        }
        if !self.component_ref().captures_text() {
            match key.code {
                KeyCode::Char('?') => {
                    self.help = true;
                    return;
                }
                KeyCode::Char(':') => {
                    self.palette = Some((String::new(), 0));
                    return;
                }
                KeyCode::Char('q') => {
                    self.request_quit();
                    return;
                }
                KeyCode::Char(c) if Tab::numbered(c).is_some() => {
                    if let Some(t) = Tab::numbered(c) {
                        self.select_tab(t);
                    }
                    return;
                }
                _ => {}
            }
        }
        let actions = self.component().handle_key(key);
        self.apply(actions);
    }

    /// A passing message: in the status bar for a few seconds, and in the
    /// log.
    pub fn say(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.log(false, &text);
        self.status = Some((text, Instant::now()));
    }

    /// An error: it stays in the status bar until dismissed, and goes to
    /// the log in full.
    pub fn fail(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.log(true, &text);
        self.status = None;
        self.sticky = Some(text);
    }

    fn log(&mut self, error: bool, text: &str) {
        let at = chrono::Local::now().format("%H:%M:%S").to_string();
        if self.messages.len() >= 500 {
            self.messages.pop_front();
        }
        self.messages.push_back((at, error, text.to_string()));
    }

    /// Keys while the message log is open.
    fn log_key(&mut self, key: KeyEvent) {
        let Some(scroll) = &mut self.log_open else {
            return;
        };
        let last = self.messages.len().saturating_sub(1) as u16;
        match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => {
                self.log_open = None;
                // reading it dismisses the error on screen
                self.sticky = None;
            }
            KeyCode::Char('g') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.log_open = None;
                self.sticky = None;
            }
            KeyCode::Down | KeyCode::Char('j') => *scroll = (*scroll + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
            KeyCode::PageDown => *scroll = scroll.saturating_add(10).min(last),
            KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
            KeyCode::Home | KeyCode::Char('g') => *scroll = 0,
            KeyCode::End | KeyCode::Char('G') => *scroll = last,
            KeyCode::Char('y') => {
                let all: Vec<String> = self
                    .messages
                    .iter()
                    .map(|(t, e, m)| format!("{t} {}{m}", if *e { "error: " } else { "" }))
                    .collect();
                self.apply(vec![Action::Copy(all.join("\n"))]);
            }
            _ => {}
        }
    }

    /// Quits, after asking when a sleep cycle runs or an edit is unsaved.
    pub fn request_quit(&mut self) {
        let mut why = Vec::new();
        if self.sleep.is_running() {
            why.push(
                "a sleep cycle is running: it is cancelled first (the phase in progress is rolled back)"
                    .to_string(),
            );
        }
        if let Some((_, source)) = &self.importing {
            why.push(format!(
                "a {source} import is running: it is cancelled first (nothing of it is written)"
            ));
        }
        if let Some(u) = self.reflections.unsaved() {
            why.push(u);
        }
        if let Some(u) = self.sleep.unsaved() {
            why.push(u);
        }
        if self.workbench.is_running() {
            why.push("a query is running: it is stopped first".to_string());
        }
        if why.is_empty() {
            self.quit = true;
        } else {
            self.quit_confirm = Some(why);
        }
    }

    fn quit_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Char('y') | KeyCode::Enter => {
                self.quit_confirm = None;
                let importing = self.importing.is_some();
                if let Some((cancel, _)) = &self.importing {
                    cancel.cancel();
                }
                if self.sleep.is_running() {
                    self.sleep.cancel();
                }
                if importing || self.sleep.is_running() {
                    self.quit_when_idle = true;
                    self.say("cancelling what runs, then quitting…");
                } else {
                    self.quit = true;
                }
            }
            KeyCode::Char('n') | KeyCode::Esc => self.quit_confirm = None,
            _ => {}
        }
    }

    /// Pasted text goes to the field that has the focus, and nowhere when
    /// none has.
    pub fn on_paste(&mut self, text: &str) {
        if self.help || self.why.is_some() {
            return;
        }
        if let Some((_, input)) = &mut self.ask {
            input.push_str(&super::component::one_line(text));
            return;
        }
        if let Some((filter, sel)) = &mut self.palette {
            filter.push_str(&super::component::one_line(text));
            *sel = 0;
            return;
        }
        let actions = self.component().handle_paste(text);
        self.apply(actions);
    }

    /// Keys while an explanation is on screen: scroll, copy, close.
    fn why_key(&mut self, key: KeyEvent) {
        let Some((text, scroll)) = &mut self.why else {
            return;
        };
        let last = text.lines.len().saturating_sub(1).min(u16::MAX as usize) as u16;
        match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') | KeyCode::Char('w') => {
                self.why = None
            }
            KeyCode::Down | KeyCode::Char('j') => *scroll = (*scroll + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => *scroll = scroll.saturating_add(10).min(last),
            KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
            KeyCode::Char('d') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                *scroll = scroll.saturating_add(10).min(last)
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                *scroll = scroll.saturating_sub(10)
            }
            KeyCode::Home | KeyCode::Char('g') => *scroll = 0,
            KeyCode::End | KeyCode::Char('G') => *scroll = last,
            KeyCode::Char('y') => {
                let all = text.lines.join("\n");
                self.apply(vec![Action::Copy(all)]);
            }
            _ => {}
        }
    }

    pub fn on_mouse(&mut self, ev: MouseEvent) {
        if !self.mouse {
            return;
        }
        if let MouseEventKind::Down(_) = ev.kind
            && ev.row == self.tab_area.y
        {
            // where the last frame drew each tab
            for (t, (x, w)) in Tab::ALL.iter().zip(self.tab_spans.clone()) {
                if ev.column >= x && ev.column < x + w {
                    self.select_tab(*t);
                    return;
                }
            }
        }
        let actions = self.component().handle_mouse(ev);
        self.apply(actions);
    }

    pub fn render(&mut self, f: &mut Frame) {
        let area = f.area();
        let [top, main, bottom] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(1),
        ])
        .areas(area);
        self.tab_area = top;
        // the tabs as wide as the screen allows: full titles after the
        // name, then without the name, then short titles; all nine always
        let width = area.width as usize;
        let label = self.label.clone();
        let layouts: [(bool, usize); 3] = [(true, 99), (false, 99), (false, 4)];
        // short titles go without the space after them
        let tab_text = |i: usize, t: &Tab, cut: usize| {
            let title: String = t.title().chars().take(cut).collect();
            if cut < 99 {
                format!(" {} {}", i + 1, title)
            } else {
                format!(" {} {} ", i + 1, title)
            }
        };
        let mut chosen = layouts[2];
        for l in layouts {
            let tabs: usize = Tab::ALL
                .iter()
                .enumerate()
                .map(|(i, t)| tab_text(i, t, l.1).chars().count() + usize::from(l.0))
                .sum();
            let head = if l.0 { 10 } else { 0 };
            if head + tabs + 12.min(label.chars().count() + 1) <= width {
                chosen = l;
                break;
            }
        }
        let mut spans = Vec::new();
        if chosen.0 {
            spans.push(Span::styled(" somnus ", theme::accent()));
            spans.push(Span::styled("│ ", theme::dim()));
        }
        self.tab_spans.clear();
        let mut x = spans
            .iter()
            .map(|s| s.content.chars().count())
            .sum::<usize>();
        for (i, t) in Tab::ALL.iter().enumerate() {
            let st = if *t == self.tab {
                theme::selected()
            } else {
                theme::base()
            };
            let text = tab_text(i, t, chosen.1);
            let w = text.chars().count();
            self.tab_spans.push((top.x + x as u16, w as u16));
            spans.push(Span::styled(text, st));
            x += w;
            if chosen.0 {
                spans.push(Span::raw(" "));
                x += 1;
            }
        }
        // the memory's label, cut from the left so its file name shows
        let room = width.saturating_sub(x + 1);
        let n = label.chars().count();
        let shown: String = if n < room {
            format!("{label} ")
        } else if room > 2 {
            let keep: String = label.chars().skip(n + 2 - room).collect();
            format!("…{keep} ")
        } else {
            String::new()
        };
        let pad = width.saturating_sub(x + shown.chars().count());
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(shown, theme::dim()));
        f.render_widget(Paragraph::new(Line::from(spans)), top);

        match self.tab {
            Tab::Query => self.workbench.render(f, main),
            Tab::Graph => self.explorer.render(f, main),
            Tab::Schema => self.schema.render(f, main),
            Tab::Reflections => self.reflections.render(f, main),
            Tab::Sleep => self.sleep.render(f, main),
            Tab::Health => self.health.render(f, main),
            Tab::Conflicts => self.conflicts.render(f, main),
            Tab::Audit => self.audit.render(f, main),
            Tab::Traffic => self.traffic.render(f, main),
        }

        let mut hints: Vec<Span> = Vec::new();
        let mut width = 0usize;
        // a message keeps its room, and so do help and quit at the end:
        // pane keys that would crowd them go (F1 lists them all)
        let third = area.width as usize / 3;
        let reserved = match (&self.status, &self.sticky) {
            (Some((s, _)), _) => s.chars().count().min(50).min(third) + 2,
            (None, Some(e)) => e.chars().count().min(50).min(third) + 20,
            _ => 0,
        };
        let tail = [hint("F1", "help"), hint("^Q", "quit")];
        let tail_w: usize = tail
            .iter()
            .map(|h| h.key.chars().count() + h.what.chars().count() + 2)
            .sum::<usize>()
            + 5;
        let pane = self.component_ref().hints();
        let mut dropped = false;
        for h in pane.iter().chain(
            [hint("^P", "palette"), hint("^G", "messages")]
                .iter()
                .filter(|_| self.sticky.is_none()),
        ) {
            let w = h.key.chars().count() + h.what.chars().count() + 2;
            if width + w + reserved + tail_w > area.width as usize {
                dropped = true;
                break;
            }
            width += w;
            hints.push(Span::styled(format!(" {}", h.key), theme::key()));
            hints.push(Span::raw(format!(" {}", h.what)));
        }
        for h in tail {
            let what = if h.key == "F1" && dropped {
                "more"
            } else {
                h.what
            };
            width += h.key.chars().count() + what.chars().count() + 2;
            if width > area.width as usize {
                break;
            }
            hints.push(Span::styled(format!(" {}", h.key), theme::key()));
            hints.push(Span::raw(format!(" {what}")));
        }
        let shown = match (&self.status, &self.sticky) {
            (Some((s, _)), _) => Some((s.clone(), theme::warn())),
            (None, Some(e)) => Some((format!("✗ {e} (^G: messages)"), theme::error())),
            _ => None,
        };
        if let Some((s, style)) = shown {
            let used: usize = hints.iter().map(|s| s.content.chars().count()).sum();
            let room = (area.width as usize).saturating_sub(used + 2);
            let s: String = if s.chars().count() > room {
                // cut, and say where the rest is
                let keep = room.saturating_sub(12);
                s.chars().take(keep).collect::<String>() + "… (^G: all)"
            } else {
                s
            };
            let pad = (area.width as usize).saturating_sub(used + s.chars().count() + 1);
            hints.push(Span::raw(" ".repeat(pad)));
            hints.push(Span::styled(s, style));
        }
        f.render_widget(Paragraph::new(Line::from(hints)), bottom);

        if self.help {
            self.render_help(f, area);
        }
        if self.palette.is_some() {
            self.render_palette(f, area);
        }
        if self.ask.is_some() {
            self.render_ask(f, area);
        }
        if self.why.is_some() {
            self.render_why(f, area);
        }
        if self.log_open.is_some() {
            self.render_log(f, area);
        }
        if self.quit_confirm.is_some() {
            self.render_quit(f, area);
        }
    }

    fn render_log(&self, f: &mut Frame, area: Rect) {
        let scroll = self.log_open.unwrap_or(0);
        let rect = centered(area, 90, 70);
        f.render_widget(Clear, rect);
        let mut lines: Vec<Line> = Vec::new();
        if self.messages.is_empty() {
            lines.push(Line::styled("no messages yet", theme::dim()));
        }
        for (at, error, text) in &self.messages {
            lines.push(Line::from(vec![
                Span::styled(format!("{at} "), theme::dim()),
                Span::styled(
                    text.clone(),
                    if *error {
                        theme::error()
                    } else {
                        theme::base()
                    },
                ),
            ]));
        }
        // the scroll position counts messages; wrapped lines push the rest
        // down, so the view starts a little earlier
        let top = scroll.saturating_sub((rect.height.saturating_sub(3)) / 2);
        f.render_widget(
            Paragraph::new(lines)
                .wrap(ratatui::widgets::Wrap { trim: false })
                .scroll((top, 0))
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(theme::border(true))
                        .title(Span::styled(" messages ", theme::title()))
                        .title_bottom(Span::styled(
                            " ↑↓ PgUp/PgDn g/G scroll · y copy · Esc close (dismisses the error) ",
                            theme::dim(),
                        )),
                ),
            rect,
        );
    }

    fn render_quit(&self, f: &mut Frame, area: Rect) {
        let Some(why) = &self.quit_confirm else {
            return;
        };
        let rect = centered(area, 60, 40);
        f.render_widget(Clear, rect);
        let mut lines = vec![Line::raw("Quit the console?"), Line::raw("")];
        for w in why {
            lines.push(Line::styled(format!("• {w}"), theme::warn()));
        }
        lines.push(Line::raw(""));
        lines.push(Line::from(vec![
            Span::styled(" y/Enter ", theme::key()),
            Span::raw("quit   "),
            Span::styled(" n/Esc ", theme::key()),
            Span::raw("stay"),
        ]));
        f.render_widget(
            Paragraph::new(lines)
                .wrap(ratatui::widgets::Wrap { trim: false })
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(theme::border(true))
                        .title(" quit "),
                ),
            rect,
        );
    }

    fn render_why(&mut self, f: &mut Frame, area: Rect) {
        let Some((text, scroll)) = &mut self.why else {
            return;
        };
        let rect = centered(area, 90, 80);
        f.render_widget(Clear, rect);
        let lines: Vec<Line> = text
            .lines
            .iter()
            .map(|l| {
                if !l.starts_with(' ') && l.ends_with(':') {
                    Line::styled(l.clone(), theme::title())
                } else {
                    Line::raw(l.clone())
                }
            })
            .collect();
        let p = Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme::border(true))
                    .title(Span::styled(format!(" {} ", text.title), theme::title()))
                    .title_bottom(Span::styled(
                        " ↑↓ PgUp/PgDn g/G scroll · y copy · Esc close ",
                        theme::dim(),
                    )),
            );
        *scroll = super::component::clamp_scroll(&p, rect, *scroll);
        f.render_widget(p.scroll((*scroll, 0)), rect);
    }

    fn render_help(&self, f: &mut Frame, area: Rect) {
        let rect = centered(area, 80, 90);
        f.render_widget(Clear, rect);
        let global = [
            ("F1 / ?", "this help"),
            ("Ctrl+P / :", "command palette: every action of every pane"),
            ("Alt+1..8 / 1..8", "1 Query 2 Graph 3 Schema 4 Reflections"),
            ("", "5 Conflicts 6 Sleep 7 Health 8 Audit"),
            ("Ctrl+G", "messages: every status and error in full"),
            ("Ctrl+L", "redraw the whole screen"),
            ("F12", "mouse on/off (off keeps terminal text selection)"),
            (
                "Ctrl+Q / q",
                "quit (asks while a cycle runs or an edit is unsaved)",
            ),
        ];
        let mut here: Vec<(String, String)> = self
            .component_ref()
            .hints()
            .into_iter()
            .map(|h| (h.key.to_string(), h.what.to_string()))
            .collect();
        if self.tab == Tab::Query {
            here.push(("Ctrl+R / Ctrl+Enter".into(), "run (as F5)".into()));
            here.push(("Esc".into(), "cancel a running query".into()));
        }
        let lists = [
            "j k ↑↓ g G Home End PgUp PgDn Ctrl+D Ctrl+U",
            "move in every list",
        ];
        let width = global
            .iter()
            .map(|(k, _)| k.chars().count())
            .chain(here.iter().map(|(k, _)| k.chars().count()))
            .max()
            .unwrap_or(10)
            + 2;
        let row = |k: &str, w: &str| {
            Line::from(vec![
                Span::styled(format!("  {k:<width$}"), theme::key()),
                Span::raw(w.to_string()),
            ])
        };
        let mut lines = vec![Line::styled("Everywhere", theme::title())];
        for (k, w) in global {
            lines.push(row(k, w));
        }
        lines.push(Line::styled(format!("  {}", lists[0]), theme::key()));
        lines.push(Line::raw(format!("  {:<width$}{}", "", lists[1])));
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!("Here ({})", self.tab.title()),
            theme::title(),
        ));
        for (k, w) in &here {
            lines.push(row(k, w));
        }
        lines.push(Line::raw(""));
        lines.push(Line::styled("any key closes", theme::dim()));
        f.render_widget(
            Paragraph::new(lines)
                .wrap(ratatui::widgets::Wrap { trim: false })
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(theme::border(true))
                        .title(" help "),
                ),
            rect,
        );
    }

    fn render_palette(&self, f: &mut Frame, area: Rect) {
        let Some((filter, sel)) = &self.palette else {
            return;
        };
        let items = self.palette_matches(filter);
        let rect = Rect {
            x: area.x + area.width / 6,
            y: area.y + 2,
            width: area.width * 2 / 3,
            height: (items.len() as u16 + 3)
                .min(area.height.saturating_sub(4))
                .max(4),
        };
        f.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(true))
            .title(" command ");
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        let mut lines = vec![Line::from(vec![
            Span::styled(": ", theme::accent()),
            Span::raw(filter.clone()),
        ])];
        let sel = (*sel).min(items.len().saturating_sub(1));
        let visible = (rect.height as usize).saturating_sub(3);
        let first = sel.saturating_sub(visible.saturating_sub(1));
        for (i, c) in items.iter().enumerate().skip(first).take(visible) {
            lines.push(Line::styled(
                format!("  {}", c.label),
                if i == sel {
                    theme::selected()
                } else {
                    theme::base()
                },
            ));
        }
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );
    }
}
