//! Contradictions: the two facts side by side with their provenance and
//! times, and the resolutions on keys (keep newer, keep older, both valid,
//! merge, needs more context), each confirmed and carried out through the
//! proposal and audit path.

use super::component::{Action, Component, Hint, Job, JobOutput, ListFilter, cut_lines, hint};
use super::theme;
use super::workbench::centered;
use crate::sleep::contradictions::Contradiction;
use crate::sleep::reasoner::{FactView, Verdict};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

pub struct Conflicts {
    pub items: Vec<Contradiction>,
    pub loaded: bool,
    sel: usize,
    confirm: Option<(i64, Verdict)>,
    error: Option<String>,
    /// `/`: contradictions whose subject, predicate, objects or status
    /// hold the words.
    filter: ListFilter,
}

impl Default for Conflicts {
    fn default() -> Self {
        Self::new()
    }
}

fn verdict_text(v: Verdict) -> &'static str {
    match v {
        Verdict::KeepNewer => "keep the newer fact; the older is superseded (kept as history)",
        Verdict::KeepOlder => "keep the older fact; the newer is superseded (kept as history)",
        Verdict::BothValid => "both held, each in its time: validity windows, nothing superseded",
        Verdict::Merge => "the two objects are one thing: merge the older into the newer",
        Verdict::NeedsContext => "needs more context: both facts marked disputed",
    }
}

/// The narrowest a fact's column is drawn beside the other one.
const FACT_COLUMN_MIN: u16 = 30;

fn fact_lines(title: &str, f: &FactView) -> Vec<Line<'static>> {
    vec![
        Line::styled(title.to_string(), theme::title()),
        Line::from(vec![
            Span::styled(format!("{}: ", f.object_type), theme::dim()),
            Span::styled(f.object.clone(), theme::accent()),
        ]),
        Line::from(vec![
            Span::styled("observed ", theme::dim()),
            Span::raw(f.observed_at.clone().unwrap_or_else(|| "unknown".into())),
        ]),
        Line::from(vec![
            Span::styled("confidence ", theme::dim()),
            Span::raw(
                f.confidence
                    .map(|c| format!("{c}"))
                    .unwrap_or_else(|| "-".into()),
            ),
        ]),
        Line::from(vec![
            Span::styled("source ", theme::dim()),
            Span::raw(f.source.clone().unwrap_or_else(|| "-".into())),
        ]),
        Line::from(vec![
            Span::styled("link ", theme::dim()),
            Span::raw(f.link.clone()),
        ]),
    ]
}

impl Conflicts {
    pub fn new() -> Self {
        Conflicts {
            items: Vec::new(),
            loaded: false,
            sel: 0,
            confirm: None,
            error: None,
            filter: ListFilter::default(),
        }
    }

    /// The contradictions the filter lets through, as indices.
    fn visible(&self) -> Vec<usize> {
        self.items
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                self.filter.matches(&format!(
                    "{} {} {} {} {} {}",
                    c.status,
                    c.conflict.subject,
                    c.conflict.predicate,
                    c.conflict.a.object,
                    c.conflict.b.object,
                    c.resolution.clone().unwrap_or_default()
                ))
            })
            .map(|(i, _)| i)
            .collect()
    }

    fn current(&self) -> Option<&Contradiction> {
        self.items.get(*self.visible().get(self.sel)?)
    }

    /// What a verdict does to this contradiction's two facts, by name.
    fn consequence(c: &Contradiction, v: Verdict) -> Vec<String> {
        let cf = &c.conflict;
        let (older, newer) = if cf.a.observed_at <= cf.b.observed_at {
            (&cf.a, &cf.b)
        } else {
            (&cf.b, &cf.a)
        };
        let fact = |f: &FactView| {
            format!(
                "{} {} {} ({}, {})",
                cf.subject,
                cf.predicate,
                f.object,
                f.observed_at
                    .as_deref()
                    .map(|t| t.chars().take(10).collect::<String>())
                    .unwrap_or_else(|| "undated".into()),
                f.link
            )
        };
        match v {
            Verdict::KeepNewer => vec![
                format!("keep      {}", fact(newer)),
                format!("supersede {}", fact(older)),
            ],
            Verdict::KeepOlder => vec![
                format!("keep      {}", fact(older)),
                format!("supersede {}", fact(newer)),
            ],
            Verdict::BothValid => vec![
                format!("keep both {}", fact(older)),
                format!("      and {}", fact(newer)),
                "each with a validity window; nothing superseded".into(),
            ],
            Verdict::Merge => vec![
                format!(
                    "merge {} \"{}\" into \"{}\"",
                    older.object_type, older.object, newer.object
                ),
                "the two facts become one".into(),
            ],
            Verdict::NeedsContext => vec![
                format!("dispute {}", fact(older)),
                format!("    and {}", fact(newer)),
                "both stay, marked as needing context".into(),
            ],
        }
    }
}

impl Component for Conflicts {
    fn hints(&self) -> Vec<Hint> {
        if self.confirm.is_some() {
            return vec![hint("y", "resolve"), hint("n", "back")];
        }
        if self.filter.typing {
            return vec![hint("Enter", "keep filter"), hint("Esc", "clear filter")];
        }
        // a decided contradiction offers no verdicts (undo it in Audit first)
        if self
            .current()
            .is_some_and(|c| !matches!(c.status.as_str(), "open" | "needs_context"))
        {
            return vec![
                hint("↑↓", "select"),
                hint("/", "filter"),
                hint("r", "reload"),
            ];
        }
        vec![
            hint("↑↓", "select"),
            hint("n", "keep newer"),
            hint("o", "keep older"),
            hint("b", "both valid"),
            hint("m", "merge"),
            hint("c", "needs context"),
            hint("/", "filter"),
            hint("r", "reload"),
        ]
    }

    fn captures_text(&self) -> bool {
        self.confirm.is_some() || self.filter.typing
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if let Some((id, verdict)) = self.confirm {
            return match key.code {
                KeyCode::Char('y') | KeyCode::Enter => {
                    self.confirm = None;
                    vec![Action::Spawn(Job::Resolve { id, verdict })]
                }
                KeyCode::Char('n') | KeyCode::Esc => {
                    self.confirm = None;
                    vec![]
                }
                _ => vec![],
            };
        }
        if self.filter.key(&key) {
            self.sel = 0;
            return vec![];
        }
        if let Some(to) = super::component::list_nav(&key, self.sel, self.visible().len(), true) {
            self.sel = to;
            return vec![];
        }
        let verdict = match key.code {
            KeyCode::Char('/') => {
                self.filter.typing = true;
                return vec![];
            }
            KeyCode::Esc if self.filter.active() => {
                self.filter.text.clear();
                self.sel = 0;
                return vec![];
            }
            KeyCode::Char('r') | KeyCode::F(5) => return vec![Action::Spawn(Job::Contradictions)],
            KeyCode::Char('n') => Some(Verdict::KeepNewer),
            KeyCode::Char('o') => Some(Verdict::KeepOlder),
            KeyCode::Char('b') => Some(Verdict::BothValid),
            KeyCode::Char('m') => Some(Verdict::Merge),
            KeyCode::Char('c') => Some(Verdict::NeedsContext),
            _ => None,
        };
        if let (Some(v), Some(c)) = (verdict, self.current()) {
            if !matches!(c.status.as_str(), "open" | "needs_context") {
                return vec![Action::Status(format!(
                    "contradiction #{} is already {}: undo its resolution in Audit to decide it again",
                    c.id, c.status
                ))];
            }
            self.confirm = Some((c.id, v));
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::Contradictions(r)) => {
                match r {
                    Ok(v) => {
                        // open ones first, newest first within
                        let mut v = v.clone();
                        v.sort_by_key(|c| (c.status != "open", std::cmp::Reverse(c.id)));
                        self.items = v;
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                self.loaded = true;
                self.sel = self.sel.min(self.visible().len().saturating_sub(1));
                vec![]
            }
            Action::Done(JobOutput::Decided(_)) | Action::Done(JobOutput::SleepDone(Ok(_)))
                if self.loaded =>
            {
                vec![Action::Spawn(Job::Contradictions)]
            }
            _ => vec![],
        }
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(35), Constraint::Percentage(65)])
                .areas(area);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(true))
            .title(Span::styled(
                format!(" contradictions {}", self.filter.title()),
                theme::title(),
            ));
        let inner = block.inner(left);
        f.render_widget(block, left);
        let mut lines = Vec::new();
        if let Some(e) = &self.error {
            lines.push(Line::styled(e.clone(), theme::warn()));
        } else if self.items.is_empty() {
            lines.push(Line::styled(
                if self.loaded {
                    "none found: sleep cycles list them here"
                } else {
                    "loading…"
                },
                theme::dim(),
            ));
        }
        let w = inner.width as usize;
        let visible = self.visible();
        if visible.is_empty() && !self.items.is_empty() {
            lines.push(Line::styled(
                "none matches the filter (Esc clears it)",
                theme::dim(),
            ));
        }
        // the selection stays in view
        let h = (inner.height as usize).max(1);
        let top = self.sel.saturating_sub(h - 1);
        for (i, c) in visible
            .iter()
            .filter_map(|&i| self.items.get(i))
            .enumerate()
            .skip(top)
            .take(h)
        {
            let st = if i == self.sel {
                theme::selected()
            } else if c.status == "open" {
                theme::base()
            } else {
                theme::dim()
            };
            let text = super::component::fit(
                &format!(
                    "#{:<3} {:<13} {} {}",
                    c.id, c.status, c.conflict.subject, c.conflict.predicate
                ),
                w,
            );
            lines.push(Line::styled(text, st));
        }
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );

        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(Span::styled(" the two facts ", theme::title()));
        let inner = block.inner(right);
        f.render_widget(block, right);
        let Some(c) = self.current() else { return };
        let cf = &c.conflict;
        // side by side when each fact has room for its lines, else one
        // above the other: never two facts' words run together
        let side_by_side = inner.width >= 2 * FACT_COLUMN_MIN + 3;
        let [head, facts, foot] = Layout::vertical([
            Constraint::Length(3),
            Constraint::Length(if side_by_side { 7 } else { 13 }),
            Constraint::Min(3),
        ])
        .areas(inner);
        f.render_widget(
            Paragraph::new(vec![
                Line::from(vec![
                    Span::styled(cf.subject.clone(), theme::accent()),
                    Span::raw(format!(" {} ", cf.predicate)),
                    Span::styled(format!("({})", cf.slot), theme::dim()),
                ]),
                Line::from(vec![
                    Span::styled("status ", theme::dim()),
                    Span::raw(c.status.clone()),
                    Span::styled(
                        if c.status == "open" {
                            "  proposed: "
                        } else {
                            "  resolution: "
                        },
                        theme::dim(),
                    ),
                    Span::raw(c.resolution.clone().unwrap_or_default()),
                    Span::styled(
                        format!(
                            "  (run #{}, proposal #{} item {})",
                            c.run.unwrap_or(0),
                            c.proposal.unwrap_or(0),
                            c.item.unwrap_or(0)
                        ),
                        theme::dim(),
                    ),
                ]),
            ]),
            head,
        );
        let (older, newer) = if cf.a.observed_at <= cf.b.observed_at {
            (&cf.a, &cf.b)
        } else {
            (&cf.b, &cf.a)
        };
        let (l, r) = if side_by_side {
            let [l, gap, r] = Layout::horizontal([
                Constraint::Fill(1),
                Constraint::Length(3),
                Constraint::Fill(1),
            ])
            .areas(facts);
            f.render_widget(
                Paragraph::new(vec![
                    Line::styled(" │ ", theme::dim());
                    gap.height as usize
                ]),
                gap,
            );
            (l, r)
        } else {
            let [l, _, r] = Layout::vertical([
                Constraint::Length(6),
                Constraint::Length(1),
                Constraint::Length(6),
            ])
            .areas(facts);
            (l, r)
        };
        f.render_widget(
            Paragraph::new(cut_lines(fact_lines("older", older), l.width)),
            l,
        );
        f.render_widget(
            Paragraph::new(cut_lines(fact_lines("newer", newer), r.width)),
            r,
        );
        let day = |x: &FactView| {
            x.observed_at
                .clone()
                .unwrap_or_else(|| "?".into())
                .chars()
                .take(10)
                .collect::<String>()
        };
        let decided = !matches!(c.status.as_str(), "open" | "needs_context");
        let mut tail = vec![
            Line::styled("timeline", theme::title()),
            Line::raw(format!(
                "{}  {}  ──────▶  {}  {}",
                day(older),
                older.object,
                day(newer),
                newer.object
            )),
            Line::raw(""),
        ];
        if decided {
            tail.push(Line::styled(
                "decided: undo its resolution in Audit (8) to decide it again",
                theme::dim(),
            ));
        }
        for (k, v) in [
            ("n", Verdict::KeepNewer),
            ("o", Verdict::KeepOlder),
            ("b", Verdict::BothValid),
            ("m", Verdict::Merge),
            ("c", Verdict::NeedsContext),
        ]
        .into_iter()
        .filter(|_| !decided)
        {
            tail.push(Line::from(vec![
                Span::styled(format!(" {k} "), theme::key()),
                Span::raw(verdict_text(v)),
            ]));
        }
        f.render_widget(Paragraph::new(tail).wrap(Wrap { trim: false }), foot);

        if let Some((id, v)) = self.confirm {
            let rect = centered(area, 80, 40);
            f.render_widget(Clear, rect);
            let what: Vec<Line> = self
                .items
                .iter()
                .find(|c| c.id == id)
                .map(|c| Self::consequence(c, v))
                .unwrap_or_default()
                .into_iter()
                .map(Line::raw)
                .collect();
            f.render_widget(
                Paragraph::new(
                    [
                        vec![
                            Line::raw(format!("Resolve contradiction #{id}:")),
                            Line::styled(verdict_text(v).to_string(), theme::accent()),
                            Line::raw(""),
                        ],
                        what,
                        vec![
                            Line::raw(""),
                            Line::styled(
                                "Applied through its proposal item as one audit group, as the operator.",
                                theme::dim(),
                            ),
                            Line::raw(""),
                            Line::from(vec![
                                Span::styled(" y/Enter ", theme::key()),
                                Span::raw("resolve   "),
                                Span::styled(" n/Esc ", theme::key()),
                                Span::raw("back"),
                            ]),
                        ],
                    ]
                    .concat(),
                )
                .wrap(Wrap { trim: false })
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(theme::border(true))
                        .title(" resolve "),
                ),
                rect,
            );
        }
    }
}
