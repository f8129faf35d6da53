//! The sleep pane: start a daydream, quick or full cycle, watch it (one
//! gauge per phase, the current step, counts, elapsed time, a log tail),
//! cancel it, read its report, and look back at past runs.

use super::component::{Action, CancelFlag, Component, Hint, Job, JobOutput, hint};
use super::theme;
use crate::sleep::cycle::{PHASES, RunSummary};
use crate::sleep::{Progress, Report, Scope};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, LineGauge, Paragraph, Wrap};
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
            loaded: false,
            sel: 0,
            running: None,
            report: None,
            scroll: 0,
            error: None,
            clock: None,
        }
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    fn gauges(&self, f: &mut Frame, area: Rect) {
        let phases = match (&self.running, &self.report) {
            (Some(r), _) => r.scope.phases(),
            (None, Some(rep)) => rep.phases.iter().map(|p| p.phase).collect(),
            _ => vec![],
        };
        let rows = Layout::vertical(vec![Constraint::Length(1); phases.len()]).split(area);
        for (row, p) in rows.iter().zip(phases) {
            let name = PHASES[p as usize - 1].0;
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
            let label = format!("{p:>2} {name:<22} {note}");
            let label: String = label
                .chars()
                .take((row.width as usize).saturating_sub(12))
                .collect();
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
        vec![
            hint("←→", "scope"),
            hint("s", "start"),
            hint("↑↓", "runs"),
            hint("Enter", "run's report"),
            hint("PgUp/PgDn", "scroll"),
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

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
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
            KeyCode::Down | KeyCode::Char('j') if self.sel + 1 < self.runs.len() => self.sel += 1,
            KeyCode::Up | KeyCode::Char('k') => self.sel = self.sel.saturating_sub(1),
            KeyCode::Enter => {
                if let Some(r) = self.runs.get(self.sel) {
                    return vec![Action::Spawn(Job::RunReport(r.run))];
                }
            }
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
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
                        let s = format!(
                            "sleep cycle #{} {} in {:.1} s{}",
                            rep.run,
                            rep.status,
                            rep.millis as f64 / 1000.0,
                            rep.proposal
                                .map(|p| format!("; proposal #{p} is in Reflections"))
                                .unwrap_or_default()
                        );
                        self.report = Some(rep.clone());
                        s
                    }
                    Err(e) => {
                        self.error = Some(e.clone());
                        format!("the sleep cycle did not start: {e}")
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
                    Ok(v) => {
                        self.runs = v.clone();
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                self.loaded = true;
                self.sel = self.sel.min(self.runs.len().saturating_sub(1));
                vec![]
            }
            Action::Done(JobOutput::RunReport(r)) => {
                match r {
                    Ok(Some(rep)) => {
                        self.report = Some(rep.clone());
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
            Layout::horizontal([Constraint::Percentage(30), Constraint::Percentage(70)])
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
        lines.push(Line::styled(
            if self.running.is_some() {
                "running… Esc cancels"
            } else {
                "s starts it"
            },
            theme::dim(),
        ));
        lines.push(Line::raw(""));
        lines.push(Line::styled("past runs", theme::title()));
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
            let day: String = r.started_at.chars().take(16).collect();
            let text: String = format!("#{:<3} {:<8} {:<11} {}", r.run, r.scope, r.status, day)
                .chars()
                .take(w)
                .collect();
            lines.push(Line::styled(text, st));
        }
        f.render_widget(Paragraph::new(lines), inner);

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
        f.render_widget(
            Paragraph::new(self.report_lines())
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0))
                .block(block),
            text_area,
        );
    }
}

impl SleepPane {
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
        })]
    }
}
