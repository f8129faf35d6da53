//! The sleep pane: start a daydream, quick or full cycle, watch it (one
//! gauge per phase, the current step, counts, elapsed time, a log tail),
//! cancel it, read its report, and look back at past runs.

use super::component::{Action, CancelFlag, Component, Hint, Job, JobOutput, hint};
use super::theme;
use super::workbench::centered;
use crate::sleep::cycle::{PHASES, RunSummary};
use crate::sleep::maintainer::Holder;
use crate::sleep::{Params, Progress, Report, Scope};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, LineGauge, Paragraph, Wrap};
use serde_json::Value;
use std::collections::VecDeque;

/// Where a running cycle is.
#[derive(Debug, Clone)]
struct Running {
    scope: Scope,
    cancel: CancelFlag,
    /// Phases finished so far.
    done: Vec<u8>,
    last: Option<Progress>,
    log: VecDeque<String>,
}

pub struct SleepPane {
    scope: Scope,
    pub runs: Vec<RunSummary>,
    /// The processes keeping this memory maintained (`somnus serve`,
    /// `mcp`, `maintain`), as they recorded themselves.
    pub holders: Vec<Holder>,
    pub loaded: bool,
    sel: usize,
    running: Option<Running>,
    /// The report on screen: the cycle that just ended, or a past run's.
    pub report: Option<Report>,
    scroll: u16,
    error: Option<String>,
    /// A fixed clock for the cycles started here (scripted sessions);
    /// None: now.
    pub clock: Option<String>,
    /// The parameters the next cycle runs with.
    pub params: Params,
    /// The memory's saved parameters, as last read (None: not read yet).
    saved: Option<Params>,
    /// The LLM reasoner instead of the heuristic one.
    pub llm: bool,
    /// The parameter popup: the selected row, and the value being typed.
    editing: Option<(usize, Option<String>)>,
}

/// The cycle's parameters, with what each one does.
pub const PARAMS: [(&str, &str); 14] = [
    (
        "stale_event_threshold_days",
        "Events older than this are stale and consolidated",
    ),
    (
        "memory_strength_decay_factor",
        "memory strength kept per decay step (confidence never decays)",
    ),
    (
        "unsorted_max_backlog",
        "Unsorted items beyond this trigger reclassification",
    ),
    ("orphan_max_count", "orphans beyond this are flagged"),
    (
        "relevance_lambda",
        "relevance decay rate λ (0.03: half-life about 23 days)",
    ),
    (
        "archive_threshold",
        "below this relevance a fact is proposed for archival",
    ),
    (
        "speculative_ttl_days",
        "facts under 0.40 confidence unconfirmed this long are archived",
    ),
    (
        "commitment_decay_days",
        "resolved commitments get a TTL this long",
    ),
    (
        "fact_archival_age_days",
        "old, unimportant, unused facts are proposed for archival after this",
    ),
    (
        "archive_ttl_days",
        "archived Events are reclaimable after this",
    ),
    (
        "task_ttl_days",
        "completed SleepTasks are reclaimable after this",
    ),
    ("cleanup_cap", "hard deletions per cycle (nodes and links)"),
    ("proposal_cap", "items of one class per proposal"),
    ("inbox_batch", "Unsorted items one cycle files"),
];

fn param_value(p: &Params, key: &str) -> Value {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.get(key).cloned())
        .unwrap_or(Value::Null)
}

/// `p` with `key` set to `value`, if the value suits the parameter.
fn with_param(p: &Params, key: &str, value: Value) -> Result<Params, String> {
    p.with(key, &value)
}

impl Default for SleepPane {
    fn default() -> Self {
        Self::new()
    }
}

const LOG_TAIL: usize = 200;

impl SleepPane {
    pub fn new() -> Self {
        SleepPane {
            scope: Scope::Full,
            runs: Vec::new(),
            holders: Vec::new(),
            loaded: false,
            sel: 0,
            running: None,
            report: None,
            scroll: 0,
            error: None,
            clock: None,
            params: Params::default(),
            saved: None,
            llm: false,
            editing: None,
        }
    }

    /// Parameters that differ from the instructions' defaults.
    fn changed(&self) -> Vec<&'static str> {
        let d = Params::default();
        PARAMS
            .iter()
            .filter(|(k, _)| param_value(&self.params, k) != param_value(&d, k))
            .map(|(k, _)| *k)
            .collect()
    }

    fn step(&mut self, row: usize, up: bool) -> Vec<Action> {
        let key = PARAMS[row].0;
        let cur = param_value(&self.params, key);
        let n = cur.as_f64().unwrap_or(0.0);
        let delta = if cur.is_i64() || cur.is_u64() {
            (n / 10.0).floor().max(1.0)
        } else if n < 0.1 {
            0.01
        } else {
            0.05
        };
        let next = if up { n + delta } else { n - delta };
        // floats stay on their step's grid
        let next = (next * 1000.0).round() / 1000.0;
        match with_param(&self.params, key, Value::from(next)) {
            Ok(p) => {
                self.params = p;
                vec![]
            }
            Err(e) => vec![Action::Error(e)],
        }
    }

    fn params_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some((row, typing)) = self.editing.clone() else {
            return vec![];
        };
        if let Some(mut text) = typing {
            match key.code {
                KeyCode::Esc => self.editing = Some((row, None)),
                KeyCode::Enter => {
                    let parsed = text
                        .trim()
                        .parse::<f64>()
                        .map_err(|_| format!("`{text}` is not a number"))
                        .and_then(|n| with_param(&self.params, PARAMS[row].0, Value::from(n)));
                    match parsed {
                        Ok(p) => {
                            self.params = p;
                            self.editing = Some((row, None));
                        }
                        Err(e) => return vec![Action::Error(e)],
                    }
                }
                KeyCode::Backspace => {
                    text.pop();
                    self.editing = Some((row, Some(text)));
                }
                KeyCode::Char(c) if c.is_ascii_digit() || c == '.' || c == '-' => {
                    text.push(c);
                    self.editing = Some((row, Some(text)));
                }
                _ => {}
            }
            return vec![];
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('p') => self.editing = None,
            KeyCode::Down | KeyCode::Char('j') => {
                self.editing = Some(((row + 1).min(PARAMS.len() - 1), None))
            }
            KeyCode::Up | KeyCode::Char('k') => self.editing = Some((row.saturating_sub(1), None)),
            KeyCode::Char('+') | KeyCode::Char('=') | KeyCode::Right => {
                return self.step(row, true);
            }
            KeyCode::Char('-') | KeyCode::Left => return self.step(row, false),
            KeyCode::Char('d') => {
                let key = PARAMS[row].0;
                let v = param_value(&Params::default(), key);
                if let Ok(p) = with_param(&self.params, key, v) {
                    self.params = p;
                }
            }
            KeyCode::Char('D') => self.params = Params::default(),
            KeyCode::Char('S') => {
                return vec![Action::Spawn(Job::SaveParams {
                    params: self.params.clone(),
                    base: self.saved.clone(),
                })];
            }
            KeyCode::Char('u') => {
                self.params = self.saved.clone().unwrap_or_default();
            }
            KeyCode::Enter => self.editing = Some((row, Some(String::new()))),
            _ => {}
        }
        vec![]
    }

    fn render_params(&self, f: &mut Frame, area: Rect) {
        let Some((row, typing)) = &self.editing else {
            return;
        };
        let rect = centered(area, 94, 70);
        f.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(true))
            .title(Span::styled(" cycle parameters ", theme::title()))
            .title_bottom(Line::from(vec![
                Span::styled(" ←→/+-", theme::key()),
                Span::raw(" change  "),
                Span::styled("Enter", theme::key()),
                Span::raw(" type  "),
                Span::styled("d/D", theme::key()),
                Span::raw(" default one/all  "),
                Span::styled("S", theme::key()),
                Span::raw(" save  "),
                Span::styled("u", theme::key()),
                Span::raw(" saved  "),
                Span::styled("Esc", theme::key()),
                Span::raw(" done "),
            ]));
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        let d = Params::default();
        let w = inner.width as usize;
        let mut lines = vec![Line::styled(
            format!(
                "  {:<30} {:>10} {:>10}  {}",
                "parameter", "value", "default", "what it does"
            ),
            theme::dim(),
        )];
        for (i, (k, what)) in PARAMS.iter().enumerate() {
            let v = param_value(&self.params, k);
            let dv = param_value(&d, k);
            let shown = match (i == *row, typing) {
                (true, Some(t)) => format!("{t}▏"),
                _ => v.to_string(),
            };
            let st = if i == *row {
                theme::selected()
            } else if v != dv {
                theme::warn()
            } else {
                theme::base()
            };
            let text = super::component::fit(
                &format!("  {k:<30} {shown:>10} {:>10}  {what}", dv.to_string()),
                w,
            );
            lines.push(Line::styled(text, st));
        }
        lines.push(Line::raw(""));
        let saved = self.saved.clone().unwrap_or_default();
        let (say, st) = if self.params == saved {
            (
                "These are this memory's saved parameters: every cycle uses them, scheduled ones too.",
                theme::dim(),
            )
        } else {
            (
                "Not saved: they apply to the cycles started here (S saves them for every cycle, u goes back).",
                theme::warn(),
            )
        };
        lines.push(Line::styled(super::component::fit(say, w), st));
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );
    }

    /// Whether what the pane shows depends on another process being alive
    /// (a maintainer, a run recorded as running): it is then read again
    /// every few seconds, since a process that dies writes nothing that
    /// would tell.
    pub fn watches_a_process(&self) -> bool {
        self.loaded && (!self.holders.is_empty() || self.runs.iter().any(|r| r.status == "running"))
    }

    /// What quitting would lose here: parameters changed and not saved
    /// (they apply to this console's cycles only).
    pub fn unsaved(&self) -> Option<String> {
        (self.saved.is_some() && Some(&self.params) != self.saved.as_ref())
            .then(|| "sleep parameters changed and not saved (S in Sleep saves them)".to_string())
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Cancels the running cycle, if one runs (its phase in progress is
    /// rolled back).
    pub fn cancel(&self) {
        if let Some(r) = &self.running {
            r.cancel.cancel();
        }
    }

    fn gauges(&self, f: &mut Frame, area: Rect) {
        let phases = match (&self.running, &self.report) {
            (Some(r), _) => r.scope.phases(),
            (None, Some(rep)) => rep.phases.iter().map(|p| p.phase).collect(),
            _ => vec![],
        };
        let rows = Layout::vertical(vec![Constraint::Length(1); phases.len()]).split(area);
        for (row, p) in rows.iter().zip(phases) {
            let name = PHASES[p as usize - 1].name;
            let (ratio, label_style, note) = match (&self.running, &self.report) {
                (Some(r), _) if r.done.contains(&p) => (1.0, theme::ok(), "done".to_string()),
                (Some(r), _) => match &r.last {
                    Some(pr) if pr.phase == p => (
                        if pr.total > 0 {
                            (pr.done as f64 / pr.total as f64).min(1.0)
                        } else {
                            0.05
                        },
                        theme::accent(),
                        if pr.total > 0 {
                            format!("{} {}/{}", pr.step, pr.done, pr.total)
                        } else {
                            pr.step.clone()
                        },
                    ),
                    _ => (0.0, theme::dim(), String::new()),
                },
                (None, Some(rep)) => {
                    let ms = rep
                        .phases
                        .iter()
                        .find(|x| x.phase == p)
                        .map_or(0, |x| x.millis);
                    (1.0, theme::ok(), format!("{ms} ms"))
                }
                _ => (0.0, theme::dim(), String::new()),
            };
            // a note that does not fit whole is left out, not cut (a cut
            // number reads as another number)
            let room = (row.width as usize).saturating_sub(12);
            let label = format!("{p:>2} {name:<22} {note}");
            let label = if label.chars().count() <= room {
                label
            } else {
                super::component::fit(&format!("{p:>2} {name}"), room)
            };
            f.render_widget(
                LineGauge::default()
                    .ratio(ratio)
                    .label(Span::styled(label, label_style))
                    .filled_style(theme::accent())
                    .unfilled_style(theme::dim()),
                *row,
            );
        }
    }

    fn report_lines(&self) -> Vec<Line<'static>> {
        if let Some(r) = &self.running {
            let mut l = vec![Line::styled(
                format!(
                    "{} cycle running — {:.1} s (Esc cancels: the phase in progress is rolled back)",
                    r.scope.as_str(),
                    r.last
                        .as_ref()
                        .map_or(0.0, |p| p.elapsed_ms as f64 / 1000.0)
                ),
                theme::accent(),
            )];
            for line in r
                .log
                .iter()
                .rev()
                .take(60)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
            {
                l.push(Line::raw(line.clone()));
            }
            return l;
        }
        match &self.report {
            Some(rep) => rep
                .markdown()
                .lines()
                .map(|x| {
                    if x.starts_with("## ") {
                        Line::styled(x.to_string(), theme::title())
                    } else if x.starts_with("Status:") {
                        Line::styled(
                            x.to_string(),
                            if rep.status == "completed" {
                                theme::ok()
                            } else {
                                theme::warn()
                            },
                        )
                    } else {
                        Line::raw(x.to_string())
                    }
                })
                .collect(),
            None => vec![
                Line::styled("No cycle yet in this session.", theme::dim()),
                Line::raw(""),
                Line::raw("Choose a scope with ←→ (daydream: phase 1; quick: 1-2; full: all 13)"),
                Line::raw(
                    "and press s to start. Judgement calls land in Reflections for approval.",
                ),
            ],
        }
    }
}

impl Component for SleepPane {
    fn hints(&self) -> Vec<Hint> {
        if self.running.is_some() {
            return vec![hint("Esc", "cancel the cycle"), hint("PgUp/PgDn", "scroll")];
        }
        if self.editing.is_some() {
            return vec![
                hint("↑↓", "parameter"),
                hint("←→", "change"),
                hint("Enter", "type a value"),
                hint("d", "default"),
                hint("S", "save for every cycle"),
                hint("Esc", "done"),
            ];
        }
        vec![
            hint("←→", "scope"),
            hint("s", "start"),
            hint("p", "parameters"),
            hint("m", "reasoner"),
            hint("↑↓", "runs"),
            hint("Enter", "run's report"),
            hint("[ ]", "scroll report"),
            hint("r", "reload"),
        ]
    }

    fn commands(&self) -> Vec<&'static str> {
        vec![
            "Start a full sleep cycle",
            "Start a quick sleep cycle",
            "Start a daydream",
        ]
    }

    fn captures_text(&self) -> bool {
        self.editing.is_some()
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self.editing.is_some() && self.running.is_none() {
            return self.params_key(key);
        }
        if let Some(r) = &self.running {
            return match key.code {
                KeyCode::Esc => {
                    r.cancel.cancel();
                    vec![Action::Status("cancelling the sleep cycle…".into())]
                }
                KeyCode::PageDown => {
                    self.scroll = self.scroll.saturating_add(10);
                    vec![]
                }
                KeyCode::PageUp => {
                    self.scroll = self.scroll.saturating_sub(10);
                    vec![]
                }
                _ => vec![Action::Status(
                    "a sleep cycle is running (Esc cancels it)".into(),
                )],
            };
        }
        match key.code {
            KeyCode::Left | KeyCode::Char('h') => {
                self.scope = match self.scope {
                    Scope::Full => Scope::Quick,
                    _ => Scope::Daydream,
                }
            }
            KeyCode::Right | KeyCode::Char('l') => {
                self.scope = match self.scope {
                    Scope::Daydream => Scope::Quick,
                    _ => Scope::Full,
                }
            }
            KeyCode::Char('s') => return self.start(self.scope),
            KeyCode::Char('p') => self.editing = Some((0, None)),
            KeyCode::Char('m') => {
                if self.llm {
                    self.llm = false;
                } else if crate::sleep::llm::LlmConfig::from_env().is_some() {
                    self.llm = true;
                } else {
                    return vec![Action::Status(
                        "the LLM reasoner needs SOMNUS_LLM_URL and SOMNUS_LLM_MODEL (an OpenAI-compatible endpoint)".into(),
                    )];
                }
            }
            _ if super::component::list_nav(&key, self.sel, self.runs.len(), true).is_some() => {
                self.sel =
                    super::component::list_nav(&key, self.sel, self.runs.len(), true).unwrap_or(0)
            }
            KeyCode::Enter => {
                if let Some(r) = self.runs.get(self.sel) {
                    return vec![Action::Spawn(Job::RunReport(r.run))];
                }
            }
            KeyCode::Char(']') => self.scroll = self.scroll.saturating_add(10),
            KeyCode::Char('[') => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char('r') | KeyCode::F(5) => return vec![Action::Spawn(Job::Runs)],
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::SleepProgress(p)) => {
                if let Some(r) = &mut self.running {
                    if p.phase_done && p.phase > 0 && !r.done.contains(&p.phase) {
                        r.done.push(p.phase);
                    }
                    if let Some(l) = &p.log {
                        r.log
                            .push_back(format!("[{:>6} ms] {:>2} {}", p.elapsed_ms, p.phase, l));
                        while r.log.len() > LOG_TAIL {
                            r.log.pop_front();
                        }
                    }
                    r.last = Some(p.clone());
                }
                vec![]
            }
            Action::Done(JobOutput::SleepDone(res)) => {
                self.running = None;
                self.scroll = 0;
                let status = match res {
                    Ok(rep) => {
                        // an error from an earlier attempt no longer holds
                        self.error = None;
                        let s = format!(
                            "sleep cycle #{} {} in {:.1} s{}",
                            rep.run,
                            rep.status,
                            rep.millis as f64 / 1000.0,
                            rep.proposal
                                .map(|p| format!("; proposal #{p} is in Reflections"))
                                .unwrap_or_default()
                        );
                        self.report = Some((**rep).clone());
                        s
                    }
                    Err(e) => {
                        self.error = Some(e.clone());
                        return vec![
                            Action::Error(format!("the sleep cycle did not start: {e}")),
                            Action::Spawn(Job::Runs),
                        ];
                    }
                };
                vec![
                    Action::Status(status),
                    Action::Spawn(Job::Runs),
                    Action::Spawn(Job::Proposals),
                ]
            }
            Action::Done(JobOutput::Runs(r)) => {
                match r {
                    Ok((v, h, saved)) => {
                        self.runs = v.clone();
                        self.holders = h.clone();
                        self.error = None;
                        // the saved values, unless the operator is editing
                        // values of their own
                        if self.params == self.saved.clone().unwrap_or_default() {
                            self.params = saved.params.clone();
                        }
                        self.saved = Some(saved.params.clone());
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                self.loaded = true;
                self.sel = self.sel.min(self.runs.len().saturating_sub(1));
                vec![]
            }
            Action::Done(JobOutput::ParamsSaved(r)) => match r {
                Ok(saved) => {
                    self.saved = Some(saved.params.clone());
                    self.params = saved.params.clone();
                    let what = if saved.keys.is_empty() {
                        "the defaults (nothing saved)".to_string()
                    } else {
                        saved.keys.join(", ")
                    };
                    vec![Action::Status(format!(
                        "sleep parameters saved for this memory: {what}; every cycle uses them, scheduled ones too"
                    ))]
                }
                Err(e) => vec![Action::Error(e.clone())],
            },
            Action::Done(JobOutput::ParamsStale(now)) => {
                // the values on screen stay; the popup now compares them
                // with what is saved
                self.saved = Some(now.params.clone());
                vec![Action::Error(
                    "not saved: the memory's sleep parameters were changed elsewhere since this pane read them; the saved ones are shown again beside yours (S saves yours over them, u takes theirs)".into(),
                )]
            }
            Action::Done(JobOutput::RunReport(r)) => {
                match r {
                    Ok(Some(rep)) => {
                        self.report = Some((**rep).clone());
                        self.scroll = 0;
                    }
                    Ok(None) => {}
                    Err(e) => self.error = Some(e.clone()),
                }
                vec![]
            }
            Action::Command("Start a full sleep cycle") => self.start(Scope::Full),
            Action::Command("Start a quick sleep cycle") => self.start(Scope::Quick),
            Action::Command("Start a daydream") => self.start(Scope::Daydream),
            _ => vec![],
        }
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let [left, right] =
            // the controls keep room for "daydream quick full" and the runs
            Layout::horizontal([
                Constraint::Length((area.width * 3 / 10).max(38).min(area.width / 2)),
                Constraint::Min(10),
            ])
            .areas(area);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(true))
            .title(Span::styled(" sleep ", theme::title()));
        let inner = block.inner(left);
        f.render_widget(block, left);
        let mut lines = vec![Line::from(
            [Scope::Daydream, Scope::Quick, Scope::Full]
                .iter()
                .flat_map(|s| {
                    let st = if *s == self.scope {
                        theme::selected()
                    } else {
                        theme::base()
                    };
                    [
                        Span::styled(format!(" {} ", s.as_str()), st),
                        Span::raw(" "),
                    ]
                })
                .collect::<Vec<_>>(),
        )];
        lines.push(Line::from(vec![
            Span::styled(" reasoner ", theme::dim()),
            Span::styled(if self.llm { "llm" } else { "heuristic" }, theme::accent()),
            Span::styled(" (m)", theme::dim()),
        ]));
        let changed = self.changed();
        lines.push(Line::from(vec![
            Span::styled(" parameters ", theme::dim()),
            if changed.is_empty() {
                Span::styled("defaults", theme::base())
            } else {
                Span::styled(format!("{} changed", changed.len()), theme::warn())
            },
            Span::styled(" (p)", theme::dim()),
        ]));
        for k in &changed {
            let t = super::component::fit(
                &format!("   {k} = {}", param_value(&self.params, k)),
                inner.width as usize,
            );
            lines.push(Line::styled(t, theme::warn()));
        }
        lines.push(Line::styled(
            if self.running.is_some() {
                "running… Esc cancels"
            } else {
                "s starts it"
            },
            theme::dim(),
        ));
        lines.push(Line::raw(""));
        lines.extend(self.maintenance_lines(inner.width as usize));
        lines.push(Line::raw(""));
        lines.push(Line::from(vec![
            Span::styled("past runs", theme::title()),
            Span::styled("  ✓ done ! issues × stopped", theme::dim()),
        ]));
        if let Some(e) = &self.error {
            lines.push(Line::styled(e.clone(), theme::warn()));
        }
        if self.runs.is_empty() {
            lines.push(Line::styled("none yet", theme::dim()));
        }
        let w = inner.width as usize;
        for (i, r) in self.runs.iter().enumerate() {
            let st = if i == self.sel {
                theme::selected()
            } else {
                theme::base()
            };
            let text = super::component::fit(
                &format!(
                    "{} #{:<4}{:<8} {:<8} {}",
                    status_mark(&r.status),
                    r.run,
                    r.scope,
                    trigger_kind(&r.trigger),
                    short_time(&r.started_at)
                ),
                w,
            );
            lines.push(Line::styled(text, st));
        }
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );

        let n = match (&self.running, &self.report) {
            (Some(r), _) => r.scope.phases().len(),
            (None, Some(rep)) => rep.phases.len(),
            _ => 0,
        } as u16;
        let [gauges_area, text_area] =
            Layout::vertical([Constraint::Length(n + 2), Constraint::Min(3)]).areas(right);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(Span::styled(" phases ", theme::title()));
        let gi = block.inner(gauges_area);
        f.render_widget(block, gauges_area);
        self.gauges(f, gi);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(Span::styled(
                if self.running.is_some() {
                    " log "
                } else {
                    " report "
                },
                theme::title(),
            ));
        let p = Paragraph::new(self.report_lines())
            .wrap(Wrap { trim: false })
            .block(block);
        self.scroll = super::component::clamp_scroll(&p, text_area, self.scroll);
        f.render_widget(p.scroll((self.scroll, 0)), text_area);
        self.render_params(f, area);
    }
}

/// What started a run, in a word: `by hand` for a cycle someone started,
/// else the schedule's trigger (idle, threshold, scheduled, catch_up,
/// post_session).
fn trigger_kind(t: &str) -> String {
    match t.split(':').next().unwrap_or("").trim() {
        "" | "on_demand" | "manual" | "console" => "by hand".into(),
        "threshold" => "target".into(),
        "scheduled" => "schedule".into(),
        "catch_up" => "catch-up".into(),
        "post_session" => "session".into(),
        k => k.chars().take(8).collect(),
    }
}

/// A run's status in one mark (its report says it in words).
fn status_mark(s: &str) -> &'static str {
    match s {
        "completed" => "✓",
        "completed with issues" => "!",
        "running" => "▶",
        "interrupted" => "?",
        _ => "×",
    }
}

/// A number of seconds as 45 s, 30 m or 12 h.
fn span(secs: f64) -> String {
    if secs >= 3600.0 && (secs / 3600.0).fract() == 0.0 {
        format!("{} h", secs / 3600.0)
    } else if secs >= 60.0 && (secs / 60.0).fract() == 0.0 {
        format!("{} m", secs / 60.0)
    } else {
        format!("{secs} s")
    }
}

/// `2026-11-25T18:29:08.240Z` as `11-25 18:29`.
fn short_time(t: &str) -> String {
    match (t.get(5..10), t.get(11..16)) {
        (Some(d), Some(h)) => format!("{d} {h}"),
        _ => t.to_string(),
    }
}

impl SleepPane {
    /// Who keeps this memory maintained, what comes next, and when.
    fn maintenance_lines(&self, w: usize) -> Vec<Line<'static>> {
        let fit = |s: String| super::component::fit(&s, w);
        let mut out = vec![Line::styled("maintenance", theme::title())];
        if self.holders.is_empty() {
            out.push(Line::styled(
                fit(" none: cycles run when started".into()),
                theme::warn(),
            ));
            out.push(Line::styled(
                fit(" (somnus serve, mcp or".into()),
                theme::dim(),
            ));
            out.push(Line::styled(
                fit("  maintain would keep it)".into()),
                theme::dim(),
            ));
            return out;
        }
        for h in &self.holders {
            out.push(Line::from(vec![
                Span::styled(" by ", theme::dim()),
                Span::styled(
                    fit(format!("somnus {} (pid {})", h.kind, h.pid)),
                    theme::accent(),
                ),
            ]));
        }
        let h = &self.holders[0];
        let running = self.runs.first().filter(|r| r.status == "running");
        match (running, &h.next, &h.next_at) {
            (Some(r), _, _) => out.push(Line::styled(
                fit(format!(" running #{} {} now", r.run, r.scope)),
                theme::accent(),
            )),
            (None, Some(next), at) => {
                let (what, why) = next.split_once(": ").unwrap_or((next.as_str(), ""));
                let when = match at {
                    Some(t)
                        if chrono::DateTime::parse_from_rfc3339(t)
                            .is_ok_and(|t| t.to_utc() <= chrono::Utc::now()) =>
                    {
                        "now".to_string()
                    }
                    Some(t) => format!("at {} UTC", short_time(t)),
                    None => String::new(),
                };
                out.push(Line::styled(fit(format!(" next {what}")), theme::base()));
                if !when.is_empty() {
                    out.push(Line::styled(fit(format!("   {when}")), theme::base()));
                }
                if !why.is_empty() {
                    out.push(Line::styled(fit(format!("   {why}")), theme::dim()));
                }
            }
            (None, None, _) => out.push(Line::styled(
                fit(" next: not yet known".into()),
                theme::dim(),
            )),
        }
        let st = &h.settings;
        let num = |k: &str| st.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        out.push(Line::styled(
            fit(format!(
                " full every {} · budget {}",
                span(num("full_every_hours") * 3600.0),
                span(num("budget_secs"))
            )),
            theme::dim(),
        ));
        out.push(Line::styled(
            fit(format!(" daydream after {} quiet", span(num("idle_secs")))),
            theme::dim(),
        ));
        out
    }

    fn start(&mut self, scope: Scope) -> Vec<Action> {
        if self.running.is_some() {
            return vec![Action::Status("a sleep cycle is already running".into())];
        }
        let cancel = CancelFlag::default();
        self.running = Some(Running {
            scope,
            cancel: cancel.clone(),
            done: Vec::new(),
            last: None,
            log: VecDeque::new(),
        });
        self.report = None;
        self.error = None;
        self.scroll = 0;
        vec![Action::Spawn(Job::Sleep {
            scope,
            cancel,
            now: self.clock.clone(),
            params: self.params.clone(),
            llm: self.llm,
        })]
    }
}
