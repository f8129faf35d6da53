//! The audit trail: every change to the memory, filtered by actor, kind,
//! time range and element; an entry's before/after diff; undo an entry or
//! its whole group (a sleep run, an approval), each confirmed; and "why?"
//! for an element, gone or not.

use super::component::{Action, Component, Hint, Job, JobOutput, hint};
use super::reflections::diff_lines;
use super::theme;
use super::workbench::centered;
use crate::audit::{Change, Entry, Filter};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

#[derive(Debug, Clone, PartialEq)]
enum Confirm {
    /// The entry as it was on screen when `u` was pressed.
    Entry(Box<Entry>),
    /// A group and the entries of it the list shows.
    Group(String, Vec<i64>),
}

pub struct AuditPane {
    pub entries: Vec<Entry>,
    pub loaded: bool,
    sel: usize,
    /// The selected entry's id: a reload keeps the selection on it.
    sel_id: Option<i64>,
    /// `actor=… kind=… since=… until=… element=…`
    filter_text: String,
    editing: bool,
    detail: Option<(Entry, Vec<Change>)>,
    confirm: Option<Confirm>,
    /// What the undo asked about would change (None while it is worked
    /// out).
    preview: Option<Result<Vec<String>, String>>,
    scroll: u16,
    error: Option<String>,
}

impl Default for AuditPane {
    fn default() -> Self {
        Self::new()
    }
}

/// A time the filter understands, as RFC 3339 (UTC): a date, a date and
/// time, `today`, `yesterday`, or an age (`2h`, `3d`, `1w`).
fn when(v: &str) -> Result<String, String> {
    use chrono::{Duration, NaiveDate, Utc};
    let fmt = |t: chrono::DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let now = Utc::now();
    let midnight = |d: NaiveDate| fmt(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    match v {
        "today" => return Ok(midnight(now.date_naive())),
        "yesterday" => return Ok(midnight(now.date_naive() - Duration::days(1))),
        _ => {}
    }
    if let Some((n, unit)) = v
        .char_indices()
        .last()
        .map(|(i, c)| (&v[..i], c))
        .filter(|(n, c)| {
            !n.is_empty() && n.chars().all(|d| d.is_ascii_digit()) && "hdw".contains(*c)
        })
    {
        let n: i64 = n.parse().map_err(|_| format!("`{v}`: too large"))?;
        let n = n.min(365 * 100);
        let d = match unit {
            'h' => Duration::hours(n),
            'd' => Duration::days(n),
            _ => Duration::weeks(n),
        };
        return Ok(fmt(now - d));
    }
    if let Ok(d) = NaiveDate::parse_from_str(v, "%Y-%m-%d") {
        return Ok(midnight(d));
    }
    if chrono::DateTime::parse_from_rfc3339(v).is_ok() {
        return Ok(v.to_string());
    }
    Err(format!(
        "`{v}` is not a time the filter understands: a date (2026-11-20), an RFC 3339 time, today, yesterday, or an age (2h, 3d, 1w)"
    ))
}

/// Parses `actor=operator kind=MERGE since=2026-11-20 element=C:12`.
pub fn parse_filter(text: &str) -> Result<Filter, String> {
    let mut f = Filter {
        limit: 500,
        ..Default::default()
    };
    for part in text.split_whitespace() {
        let (k, v) = part.split_once('=').ok_or_else(|| {
            format!("`{part}`: filters are key=value (actor, kind, since, until, element, group)")
        })?;
        match k {
            "actor" => f.actor = Some(v.to_string()),
            "kind" => f.kind = Some(v.to_uppercase()),
            "since" => f.since = Some(when(v)?),
            "until" => f.until = Some(when(v)?),
            "group" => f.batch = Some(v.to_string()),
            "element" => {
                f.element = Some(crate::store::ids::parse_element_id(v).ok_or_else(|| {
                    format!("`{v}` is not an element id (C:<n> or P:<n>:<predicate>)")
                })?)
            }
            other => {
                return Err(format!(
                    "unknown filter `{other}` (actor, kind, since, until, element, group)"
                ));
            }
        }
    }
    Ok(f)
}

/// The element an entry is about: what it updated or deleted before what
/// it created (an archival updates the Event and creates its Archived
/// link), a concept before a link.
fn subject(changes: &[crate::audit::Change]) -> Option<String> {
    changes
        .iter()
        .min_by_key(|c| (c.op == "insert", c.table != "concepts"))
        .map(|c| c.kip_id())
}

impl AuditPane {
    pub fn new() -> Self {
        AuditPane {
            entries: Vec::new(),
            loaded: false,
            sel: 0,
            sel_id: None,
            filter_text: String::new(),
            editing: false,
            detail: None,
            confirm: None,
            preview: None,
            scroll: 0,
            error: None,
        }
    }

    /// The job that loads the trail with the current filter.
    pub fn load(&mut self) -> Vec<Action> {
        match parse_filter(&self.filter_text) {
            Ok(f) => {
                self.error = None;
                vec![Action::Spawn(Job::Audit(f))]
            }
            Err(e) => {
                self.error = Some(e);
                vec![]
            }
        }
    }

    fn current(&self) -> Option<&Entry> {
        self.entries.get(self.sel)
    }

    /// The entry the selection is on (what `u` would undo).
    pub fn selected(&self) -> Option<&Entry> {
        self.current()
    }

    /// Selects the entry at `to` (clamped) and shows its changes: the right
    /// pane always shows the selected entry, the one `u` acts on.
    fn select(&mut self, to: i64) -> Vec<Action> {
        let last = self.entries.len().saturating_sub(1) as i64;
        self.sel = to.clamp(0, last.max(0)) as usize;
        let id = self.current().map(|e| e.id);
        if id == self.sel_id && self.detail.is_some() {
            return vec![];
        }
        self.sel_id = id;
        self.scroll = 0;
        match id {
            Some(id) => vec![Action::Spawn(Job::AuditEntry(id))],
            None => vec![],
        }
    }

    fn detail_lines(&self) -> Vec<Line<'static>> {
        let Some((e, changes)) = self
            .detail
            .as_ref()
            .filter(|(e, _)| Some(e.id) == self.current().map(|c| c.id))
        else {
            return vec![Line::styled(
                match self.current() {
                    Some(c) => format!("loading entry #{}…", c.id),
                    None => "no entry selected".into(),
                },
                theme::dim(),
            )];
        };
        let mut l = vec![
            Line::from(vec![
                Span::styled(format!("#{} ", e.id), theme::accent()),
                Span::raw(format!(
                    "{} {} by {} via {}",
                    e.at, e.kind, e.actor, e.trigger
                )),
            ]),
            Line::from(vec![
                Span::styled("group ", theme::dim()),
                Span::raw(e.batch.clone().unwrap_or_else(|| "-".into())),
                Span::styled("   why ", theme::dim()),
                Span::raw(e.reason.clone().unwrap_or_else(|| "-".into())),
            ]),
        ];
        if let Some(by) = e.rolled_back_by {
            l.push(Line::styled(format!("rolled back by #{by}"), theme::warn()));
        }
        if let Some(of) = e.rolls_back {
            l.push(Line::styled(format!("undoes #{of}"), theme::warn()));
        }
        for line in e.command.lines().take(12) {
            l.push(Line::styled(
                format!("  {}", crate::text::printable(line)),
                theme::key(),
            ));
        }
        l.push(Line::raw(""));
        for c in changes {
            l.push(Line::from(vec![
                Span::styled(format!("  {} ", c.op), theme::accent()),
                Span::raw(c.kip_id()),
            ]));
            diff_lines(c.before.as_ref(), c.after.as_ref(), &mut l);
        }
        l
    }
}

impl Component for AuditPane {
    fn hints(&self) -> Vec<Hint> {
        if self.editing {
            return vec![hint("Enter", "apply filter"), hint("Esc", "back")];
        }
        if self.confirm.is_some() {
            return vec![hint("y", "undo"), hint("n", "back")];
        }
        vec![
            hint("↑↓", "entry"),
            hint("[ ]", "scroll changes"),
            hint("/", "filter"),
            hint("u", "undo entry"),
            hint("U", "undo its group"),
            hint("w", "why (element)"),
            hint("r", "reload"),
        ]
    }

    fn captures_text(&self) -> bool {
        self.editing || self.confirm.is_some()
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self.editing {
            match key.code {
                KeyCode::Enter => {
                    self.editing = false;
                    self.sel = 0;
                    return self.load();
                }
                KeyCode::Esc => self.editing = false,
                _ => {
                    super::component::edit_line(&mut self.filter_text, &key);
                }
            }
            return vec![];
        }
        if let Some(c) = self.confirm.clone() {
            return match key.code {
                KeyCode::Char('y') | KeyCode::Enter => {
                    self.confirm = None;
                    vec![Action::Spawn(match c {
                        Confirm::Entry(e) => Job::Undo {
                            entry: Some(e.id),
                            group: None,
                        },
                        Confirm::Group(g, _) => Job::Undo {
                            entry: None,
                            group: Some(g),
                        },
                    })]
                }
                KeyCode::Char('n') | KeyCode::Esc => {
                    self.confirm = None;
                    vec![]
                }
                _ => vec![],
            };
        }
        let moved = match key.code {
            KeyCode::Down | KeyCode::Char('j') => Some(self.sel as i64 + 1),
            KeyCode::Up | KeyCode::Char('k') => Some(self.sel as i64 - 1),
            KeyCode::PageDown => Some(self.sel as i64 + 10),
            KeyCode::PageUp => Some(self.sel as i64 - 10),
            KeyCode::Char('d') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(self.sel as i64 + 10)
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(self.sel as i64 - 10)
            }
            KeyCode::Home | KeyCode::Char('g') => Some(0),
            KeyCode::End | KeyCode::Char('G') => Some(self.entries.len() as i64 - 1),
            _ => None,
        };
        if let Some(to) = moved {
            return self.select(to);
        }
        match key.code {
            KeyCode::Enter => {
                if let Some(id) = self.current().map(|e| e.id) {
                    self.scroll = 0;
                    return vec![Action::Spawn(Job::AuditEntry(id))];
                }
            }
            KeyCode::Char('/') => self.editing = true,
            KeyCode::Char('u') => {
                if let Some(e) = self.current() {
                    if e.rolled_back_by.is_some() {
                        return vec![Action::Status(format!("entry #{} is already undone", e.id))];
                    }
                    let id = e.id;
                    self.confirm = Some(Confirm::Entry(Box::new(e.clone())));
                    self.preview = None;
                    return vec![Action::Spawn(Job::UndoPreview {
                        entry: Some(id),
                        group: None,
                    })];
                }
            }
            KeyCode::Char('U') => match self.current().and_then(|e| e.batch.clone()) {
                Some(g) => {
                    let listed = self
                        .entries
                        .iter()
                        .filter(|e| {
                            e.batch.as_deref() == Some(g.as_str()) && e.rolled_back_by.is_none()
                        })
                        .map(|e| e.id)
                        .collect();
                    self.confirm = Some(Confirm::Group(g.clone(), listed));
                    self.preview = None;
                    return vec![Action::Spawn(Job::UndoPreview {
                        entry: None,
                        group: Some(g),
                    })];
                }
                None => {
                    return vec![Action::Status(
                        "this entry belongs to no group (u undoes it alone)".into(),
                    )];
                }
            },
            KeyCode::Char('w') => {
                let el = self
                    .detail
                    .as_ref()
                    .filter(|(e, _)| Some(e.id) == self.current().map(|c| c.id))
                    .and_then(|(_, ch)| {
                        // the element the list is filtered on, when the entry changed it
                        let wanted = self
                            .filter_text
                            .split_whitespace()
                            .find_map(|t| t.strip_prefix("element="))
                            .and_then(crate::store::ids::parse_element_id);
                        ch.iter()
                            .find(|c| Some(c.element) == wanted)
                            .map(|c| c.kip_id())
                            .or_else(|| subject(ch))
                    });
                return match el {
                    Some(id) => vec![Action::Spawn(Job::WhyOf(id))],
                    None => vec![Action::Status(
                        "open the entry first (Enter), then w explains what it changed".into(),
                    )],
                };
            }
            KeyCode::Char(']') => self.scroll = self.scroll.saturating_add(10),
            KeyCode::Char('[') => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char('r') | KeyCode::F(5) => return self.load(),
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::UndoPreview {
                entry,
                group,
                lines,
            }) => {
                // for the question still on screen only
                let asked = match &self.confirm {
                    Some(Confirm::Entry(e)) => *entry == Some(e.id) && group.is_none(),
                    Some(Confirm::Group(g, _)) => entry.is_none() && group.as_ref() == Some(g),
                    None => false,
                };
                if asked {
                    self.preview = Some(lines.clone());
                }
                vec![]
            }
            Action::Done(JobOutput::Audit(r)) => {
                match r {
                    Ok(v) => {
                        self.entries = v.clone();
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                self.loaded = true;
                // the selection stays on the same entry when new ones arrive
                let at = self
                    .sel_id
                    .and_then(|id| self.entries.iter().position(|e| e.id == id));
                let mut out = match at {
                    Some(i) => {
                        self.sel = i;
                        vec![]
                    }
                    None => {
                        let to = self.sel.min(self.entries.len().saturating_sub(1));
                        self.sel_id = None;
                        self.select(to as i64)
                    }
                };
                // a filter that matches nothing says so
                if matches!(r, Ok(v) if v.is_empty()) && !self.filter_text.trim().is_empty() {
                    out.push(Action::Status(format!(
                        "no entry matches `{}` (/ edits the filter)",
                        self.filter_text.trim()
                    )));
                }
                out
            }
            Action::Done(JobOutput::AuditEntry(r)) => {
                match r {
                    // only the selected entry's changes are shown
                    Ok(d) => {
                        if d.as_ref().map(|x| x.0.id) == self.sel_id {
                            self.detail = d.as_deref().cloned();
                        }
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                vec![]
            }
            Action::Done(JobOutput::Decided(_)) | Action::Done(JobOutput::SleepDone(Ok(_)))
                if self.loaded =>
            {
                self.load()
            }
            _ => vec![],
        }
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let [filter, rest] =
            Layout::vertical([Constraint::Length(3), Constraint::Min(3)]).areas(area);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(self.editing))
            .title(Span::styled(
                " filter: actor= kind= since= until= element= group= ",
                theme::title(),
            ));
        let mut spans = vec![Span::raw(self.filter_text.clone())];
        if self.editing {
            spans.push(Span::styled("▏", theme::accent()));
        }
        if let Some(e) = &self.error {
            spans.push(Span::styled(format!("   {e}"), theme::warn()));
        }
        f.render_widget(Paragraph::new(Line::from(spans)).block(block), filter);

        let [list, detail] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(rest);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(!self.editing))
            .title(Span::styled(" trail ", theme::title()));
        let inner = block.inner(list);
        f.render_widget(block, list);
        let h = inner.height as usize;
        let start = self.sel.saturating_sub(h.saturating_sub(1));
        let w = inner.width as usize;
        let lines: Vec<Line> = self
            .entries
            .iter()
            .enumerate()
            .skip(start)
            .take(h)
            .map(|(i, e)| {
                let cmd = crate::text::one_line(
                    &e.command.split_whitespace().collect::<Vec<_>>().join(" "),
                );
                let mark = if e.rolled_back_by.is_some() {
                    "↶"
                } else {
                    " "
                };
                // when: month-day hour:minute (the entry shows it in full)
                let when = e.at.get(5..16).unwrap_or("").replace('T', " ");
                let text = super::component::fit(
                    &format!(
                        "{mark}#{:<5} {when:<11} {:<10} {:<9} {:>5} {} {}",
                        e.id,
                        e.actor.chars().take(10).collect::<String>(),
                        e.kind,
                        e.changes,
                        e.batch.clone().unwrap_or_default(),
                        cmd
                    ),
                    w,
                );
                let st = if i == self.sel {
                    theme::selected()
                } else if e.rolled_back_by.is_some() {
                    theme::dim()
                } else {
                    theme::base()
                };
                Line::styled(text, st)
            })
            .collect();
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(Span::styled(" entry ", theme::title()));
        let p = Paragraph::new(self.detail_lines())
            .wrap(Wrap { trim: false })
            .block(block);
        self.scroll = super::component::clamp_scroll(&p, detail, self.scroll);
        f.render_widget(p.scroll((self.scroll, 0)), detail);
        if let Some(c) = &self.confirm {
            let rect = centered(area, 70, 50);
            f.render_widget(Clear, rect);
            let what = match c {
                Confirm::Entry(e) => vec![
                    Line::raw(format!(
                        "Undo entry #{}: {} by {} at {} ({} change{})?",
                        e.id,
                        e.kind,
                        e.actor,
                        e.at,
                        e.changes,
                        if e.changes == 1 { "" } else { "s" }
                    )),
                    Line::styled(
                        e.command
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ")
                            .chars()
                            .take(200)
                            .collect::<String>(),
                        theme::dim(),
                    ),
                ],
                Confirm::Group(g, ids) => vec![Line::raw(format!(
                    "Undo every change of `{g}` still in effect ({} entr{}{})?",
                    ids.len(),
                    if ids.len() == 1 { "y" } else { "ies" },
                    if self.filter_text.trim().is_empty() {
                        ""
                    } else {
                        " listed"
                    },
                ))],
            };
            let mut lines = what;
            lines.push(Line::raw(""));
            match &self.preview {
                None => lines.push(Line::styled(
                    "working out what it would change…",
                    theme::dim(),
                )),
                Some(Ok(changes)) => {
                    lines.push(Line::raw("It would:"));
                    for c in changes {
                        lines.push(Line::styled(format!("  {c}"), theme::accent()));
                    }
                }
                Some(Err(e)) => lines.push(Line::styled(
                    format!("it cannot be undone as it is: {e}"),
                    theme::warn(),
                )),
            }
            lines.extend([
                Line::raw(""),
                Line::styled(
                    "The undo is itself an entry, which can be undone.",
                    theme::dim(),
                ),
                Line::raw(""),
                Line::from(vec![
                    Span::styled(" y/Enter ", theme::key()),
                    Span::raw("undo   "),
                    Span::styled(" n/Esc ", theme::key()),
                    Span::raw("back"),
                ]),
            ]);
            f.render_widget(
                Paragraph::new(lines).wrap(Wrap { trim: false }).block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(theme::border(true))
                        .title(" rollback "),
                ),
                rect,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_the_filter_understands_and_those_it_does_not() {
        for ok in [
            "2026-11-20",
            "2026-11-20T10:00:00Z",
            "today",
            "yesterday",
            "2h",
            "3d",
            "1w",
        ] {
            let f = parse_filter(&format!("since={ok}")).expect(ok);
            assert!(f.since.is_some_and(|s| s.contains('T')), "{ok}");
        }
        for bad in ["tomorrow-ish", "20/11/2026", "h", "-3d"] {
            let e = parse_filter(&format!("since={bad}")).expect_err(bad);
            assert!(e.contains("not a time the filter understands"), "{e}");
        }
    }
}
