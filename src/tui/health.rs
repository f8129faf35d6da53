//! Health: the sleep-mode health table (orphans, Unsorted backlog, stale
//! events, confidence, domain utilisation, pending SleepTasks, unscored
//! events, overdue commitments, superseded propositions) measured now
//! against its targets, coloured by status, with each metric's trend over
//! the past sleep cycles.

use super::component::{Action, Component, Hint, Job, JobOutput, hint};
use super::theme;
use crate::sleep::health::{Health, Metric, Point, Status};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Borders, Paragraph, Wrap};

/// Past cycles the trend covers.
pub const TREND_RUNS: usize = 60;

pub struct HealthPane {
    pub health: Option<Health>,
    pub history: Vec<Point>,
    pub loaded: bool,
    sel: usize,
    error: Option<String>,
    /// A fixed clock for the assessment (scripted sessions); None: now.
    pub clock: Option<String>,
}

impl Default for HealthPane {
    fn default() -> Self {
        Self::new()
    }
}

fn status_style(s: Status) -> Style {
    match s {
        Status::Ok => theme::ok(),
        Status::Warn => theme::warn(),
        Status::Bad => theme::error(),
        Status::Info => theme::dim(),
    }
}

fn fmt_value(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v.fract() == 0.0 && v.abs() < 1e12 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

/// A series as block characters, lowest to highest between its own
/// minimum and maximum (a flat series sits in the middle).
pub fn spark_text(values: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (lo, hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    values
        .iter()
        .map(|v| {
            if !v.is_finite() {
                ' '
            } else if (hi - lo).abs() < f64::EPSILON {
                BARS[3]
            } else {
                BARS[(((v - lo) / (hi - lo)) * 7.0).round() as usize]
            }
        })
        .collect()
}

impl HealthPane {
    pub fn new() -> Self {
        HealthPane {
            health: None,
            history: Vec::new(),
            loaded: false,
            sel: 0,
            error: None,
            clock: None,
        }
    }

    pub fn load(&self) -> Action {
        Action::Spawn(Job::Health {
            now: self.clock.clone(),
        })
    }

    /// A metric's values over the past cycles, then now.
    fn series(&self, m: &Metric) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .history
            .iter()
            .map(|p| p.values.get(m.key).copied().unwrap_or(f64::NAN))
            .collect();
        v.push(m.value);
        v
    }

    fn metrics(&self) -> &[Metric] {
        self.health.as_ref().map_or(&[], |h| h.metrics.as_slice())
    }
}

impl Component for HealthPane {
    fn hints(&self) -> Vec<Hint> {
        vec![
            hint("↑↓", "metric"),
            hint("Enter", "query its elements"),
            hint("r", "measure again"),
        ]
    }

    fn commands(&self) -> Vec<&'static str> {
        vec!["Measure health"]
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if let Some(to) = super::component::list_nav(&key, self.sel, self.metrics().len(), true) {
            self.sel = to;
            return vec![];
        }
        match key.code {
            KeyCode::Char('r') | KeyCode::F(5) => return vec![self.load()],
            KeyCode::Enter => {
                let at = self
                    .health
                    .as_ref()
                    .map(|h| h.at.clone())
                    .unwrap_or_default();
                if let Some(q) = self.metrics().get(self.sel).and_then(|m| query_for(m, &at)) {
                    return vec![Action::OpenAsQuery(q)];
                }
                return vec![Action::Status(
                    "this metric is a measure, not a list of elements".into(),
                )];
            }
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::Health(r)) => {
                match r {
                    Ok(b) => {
                        let (h, hist) = b.as_ref();
                        self.health = Some(h.clone());
                        self.history = hist.clone();
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                self.loaded = true;
                self.sel = self.sel.min(self.metrics().len().saturating_sub(1));
                vec![]
            }
            Action::Done(JobOutput::SleepDone(Ok(_))) if self.loaded => vec![self.load()],
            Action::Command("Measure health") => vec![self.load()],
            _ => vec![],
        }
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let [table_area, detail_area] =
            Layout::vertical([Constraint::Min(6), Constraint::Length(12)]).areas(area);
        let title = match &self.health {
            Some(h) => format!(
                " health at {} · trend over {} past cycle(s) ",
                h.at,
                self.history.len()
            ),
            None => " health ".into(),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(true))
            .title(Span::styled(title, theme::title()));
        let inner = block.inner(table_area);
        f.render_widget(block, table_area);
        let w = inner.width as usize;
        // status, label, value, target, trend, action
        // as many columns as there are points (past cycles and now), so
        // the names and what to do get the rest
        let points = self.history.len() + 1;
        let trend_w = points.min(TREND_RUNS + 1).min(w / 5).max(11);
        // as wide as the longest name, up to two fifths of the row
        let longest = self
            .metrics()
            .iter()
            .map(|m| m.label.chars().count())
            .max()
            .unwrap_or(6);
        let label_w = longest.min(w / 3).max(6);
        let mut lines = vec![Line::styled(
            format!(
                "  {:<label_w$} {:>9}  {:<14} {:<trend_w$}  {}",
                "metric", "now", "target", "trend → now", "what to do"
            ),
            theme::dim(),
        )];
        if let Some(e) = &self.error {
            lines.push(Line::styled(e.clone(), theme::error()));
        }
        if self.health.is_none() && self.error.is_none() {
            lines.push(Line::styled("measuring…", theme::dim()));
        }
        let height = inner.height.saturating_sub(1) as usize;
        let start = self.sel.saturating_sub(height.saturating_sub(1));
        for (i, m) in self.metrics().iter().enumerate().skip(start).take(height) {
            let series = self.series(m);
            let tail = &series[series.len().saturating_sub(trend_w)..];
            let label = super::component::fit(m.label, label_w);
            let row_style = if i == self.sel {
                theme::selected()
            } else {
                theme::base()
            };
            let mut spans = vec![
                Span::styled("● ", status_style(m.status)),
                Span::styled(format!("{label:<label_w$} "), row_style),
                Span::styled(
                    format!("{:>9}  ", fmt_value(m.value)),
                    status_style(m.status),
                ),
                Span::styled(format!("{:<14} ", m.target), theme::dim()),
                Span::styled(format!("{:<trend_w$}  ", spark_text(tail)), theme::accent()),
            ];
            let used = 2 + label_w + 1 + 11 + 15 + trend_w + 2;
            let action = super::component::fit(m.action, w.saturating_sub(used));
            spans.push(Span::styled(action, theme::dim()));
            lines.push(Line::from(spans));
        }
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );

        let Some(m) = self.metrics().get(self.sel).cloned() else {
            f.render_widget(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme::border(false)),
                detail_area,
            );
            return;
        };
        let [chart_area, items_area] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(detail_area);
        let series = self.series(&m);
        let finite: Vec<f64> = series.iter().copied().filter(|v| v.is_finite()).collect();
        let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(Span::styled(format!(" {} ", m.label), theme::title()))
            .title_bottom(Span::styled(
                if finite.is_empty() {
                    " no values yet ".to_string()
                } else {
                    format!(
                        " min {} · max {} · now {} · {} ",
                        fmt_value(lo),
                        fmt_value(hi),
                        fmt_value(m.value),
                        m.status.as_str()
                    )
                },
                status_style(m.status),
            ));
        let ci = block.inner(chart_area);
        f.render_widget(block, chart_area);
        // one bar per past cycle, then now; fractions (confidence,
        // strength) are drawn in thousandths
        let scale = if hi <= 1.0 { 1000.0 } else { 1.0 };
        let n_max = (ci.width as usize / 2).max(1);
        let first = series.len().saturating_sub(n_max);
        let n = series.len() - first;
        let bar_w = ((ci.width as usize + 1) / n.max(1))
            .saturating_sub(1)
            .clamp(1, 7) as u16;
        let bars: Vec<Bar> = series[first..]
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let idx = first + i;
                let label = if idx + 1 == series.len() {
                    "now".to_string()
                } else {
                    format!("#{}", self.history[idx].run)
                };
                let b = Bar::default()
                    .value(if v.is_finite() {
                        (v.max(0.0) * scale).round() as u64
                    } else {
                        0
                    })
                    .text_value(fmt_value(*v));
                if bar_w >= 3 {
                    b.label(Line::raw(label))
                } else {
                    b
                }
            })
            .collect();
        f.render_widget(
            BarChart::default()
                .data(BarGroup::default().bars(&bars))
                .bar_width(bar_w)
                .bar_gap(1)
                .max(((hi.max(0.0) * scale).round() as u64).max(1))
                .bar_style(theme::accent())
                .value_style(theme::selected()),
            ci,
        );

        let mut lines = vec![Line::from(vec![
            Span::styled("target ", theme::dim()),
            Span::raw(m.target.to_string()),
            Span::styled("  ·  ", theme::dim()),
            Span::raw(m.action.to_string()),
        ])];
        if m.items.is_empty() {
            lines.push(Line::styled(
                "(no elements behind this number)",
                theme::dim(),
            ));
        } else {
            lines.push(Line::styled(
                if (m.items.len() as f64) < m.value {
                    format!(
                        "the first {} of {} element(s), Enter queries them:",
                        m.items.len(),
                        m.value
                    )
                } else {
                    format!("{} element(s), Enter queries them:", m.items.len())
                },
                theme::dim(),
            ));
            for it in &m.items {
                lines.push(Line::raw(format!("  {it}")));
            }
        }
        f.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme::border(false))
                    .title(Span::styled(" behind the number ", theme::title())),
            ),
            items_area,
        );
    }
}

/// The KIP query that lists the elements behind a metric, for the Query
/// pane: the same elements the health check counted (measured at `at`).
pub fn query_for(m: &Metric, at: &str) -> Option<String> {
    Some(match m.key {
        "orphans" => {
            // one branch per type listed ("Type: name"), as the health
            // check reads them: every type but Domain, the system actors
            // left out
            let mut types: Vec<&str> = Vec::new();
            for it in &m.items {
                let t = it.split(':').next()?.trim();
                if !types.contains(&t) {
                    types.push(t);
                }
            }
            let branch = |t: &str| {
                let mut b = format!(
                    "?n {{type: {}}}\n  NOT {{ (?n, \"belongs_to_domain\", ?d) }}",
                    serde_json::Value::String(t.to_string())
                );
                if t == "Person" {
                    b.push_str("\n  FILTER(?n.name != \"$self\" && ?n.name != \"$system\")");
                }
                b
            };
            let mut q = String::from(
                "// concepts in no domain (Domains and the system actors aside)\nFIND(?n.type, ?n.name)\nWHERE {\n  ",
            );
            q.push_str(&branch(types.first()?));
            for t in &types[1..] {
                q.push_str(&format!(
                    "\n  UNION {{\n    {}\n  }}",
                    branch(t).replace("\n  ", "\n    ")
                ));
            }
            q.push_str("\n}\nLIMIT 1000");
            q
        }
        "unsorted" => {
            "FIND(?n.type, ?n.name)\nWHERE {\n  (?n, \"belongs_to_domain\", {type: \"Domain\", name: \"Unsorted\"})\n}\nLIMIT 500".to_string()
        }
        "stale_events" => {
            // older than the threshold at the time of the measure
            let cutoff = chrono::DateTime::parse_from_rfc3339(at)
                .map(|t| {
                    (t - chrono::Duration::days(
                        crate::sleep::Params::default().stale_event_threshold_days,
                    ))
                    .to_utc()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                })
                .ok()?;
            format!(
                "// Events not consolidated, older than the threshold ({cutoff}), oldest first\nFIND(?e.name, ?e.attributes.start_time)\nWHERE {{\n  ?e {{type: \"Event\"}}\n  FILTER(?e.attributes.start_time < \"{cutoff}\")\n  NOT {{ (?e, \"consolidated_to\", ?k) }}\n}}\nORDER BY ?e.attributes.start_time ASC\nLIMIT 1000"
            )
        }
        "pending_experiences" => {
            "FIND(?x.name, ?x.attributes.consolidation_status)\nWHERE {\n  ?x {type: \"Experience\"}\n  FILTER(?x.attributes.consolidation_status == \"pending\" || ?x.attributes.consolidation_status == \"partially_consolidated\")\n}\nLIMIT 500".to_string()
        }
        "skills_review" => {
            "FIND(?s.name, ?s.attributes)\nWHERE {\n  ?s {type: \"Skill\"}\n  FILTER(?s.attributes.maturity == \"needs_review\")\n}\nLIMIT 500".to_string()
        }
        "domain_utilisation" => {
            "FIND(?d.name, COUNT(?n))\nWHERE {\n  ?d {type: \"Domain\"}\n  OPTIONAL { (?n, \"belongs_to_domain\", ?d) }\n}\nORDER BY ?d.name".to_string()
        }
        "pending_sleep_tasks" => {
            "FIND(?t.name, ?t.attributes)\nWHERE {\n  ?t {type: \"SleepTask\"}\n  FILTER(?t.attributes.status == \"pending\")\n}\nLIMIT 500".to_string()
        }
        "unscored_events" => {
            "FIND(?e.name, ?e.attributes.start_time)\nWHERE {\n  ?e {type: \"Event\"}\n  FILTER(IS_NULL(?e.attributes.salience_score))\n}\nLIMIT 1000".to_string()
        }
        "overdue_commitments" => {
            "FIND(?c.name, ?c.attributes.due_at)\nWHERE {\n  ?c {type: \"Commitment\"}\n  FILTER(?c.attributes.status == \"pending\")\n}\nORDER BY ?c.attributes.due_at ASC\nLIMIT 500".to_string()
        }
        "superseded" => {
            "FIND(?s.name, ?p, ?o.name, ?l.metadata)\nWHERE {\n  ?l (?s, ?p, ?o)\n  FILTER(?l.metadata.superseded == true)\n}\nLIMIT 200".to_string()
        }
        _ => return None,
    })
}
