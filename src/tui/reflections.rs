//! Reflections: the proposals sleep cycles staged, their items with
//! rationale, evidence and a coloured before/after diff; approve all,
//! approve the chosen items, or reject with a reason, each behind a
//! confirmation.

use super::component::{Action, Component, Decision, Hint, Job, JobOutput, ListFilter, hint};
use super::theme;
use super::workbench::centered;
use crate::review::proposals::{Item, Proposal};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui_textarea::TextArea;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    Proposals,
    Items,
}

/// A decision waiting for the operator's confirmation.
#[derive(Debug, Clone, PartialEq)]
enum Confirm {
    Approve {
        id: i64,
        items: Option<Vec<i64>>,
    },
    /// Typing the reason.
    Reject {
        id: i64,
        items: Option<Vec<i64>>,
        reason: String,
    },
}

pub struct Reflections {
    pub proposals: Vec<Proposal>,
    pub loaded: bool,
    focus: Focus,
    p_sel: usize,
    i_sel: usize,
    /// Items ticked for a partial decision (of the selected proposal).
    chosen: BTreeSet<i64>,
    confirm: Option<Confirm>,
    scroll: u16,
    error: Option<String>,
    /// The operator's rewrites of items, by (proposal, item), applied in
    /// their place when the item is approved.
    pub edits: BTreeMap<(i64, i64), String>,
    /// The item being rewritten.
    editing: Option<Editing>,
    /// What each kept rewrite would change now: its title and preview, or
    /// why it could not be previewed.
    pub edit_previews: BTreeMap<(i64, i64), EditPreview>,
    /// `/`: items whose class, title or status hold the words.
    filter: ListFilter,
    /// Each pending item's recall impact, once weighed (cleared when the
    /// proposals are read again: the memory may have moved).
    impacts: BTreeMap<(i64, i64), ImpactResult>,
    /// Items whose impact is being weighed.
    weighing: BTreeSet<(i64, i64)>,
}

/// The reads weighed and those an item changes, or why it could not be
/// weighed.
type ImpactResult = Result<(usize, Vec<crate::review::impact::Changed>), String>;

/// A kept rewrite's title and changes, or why it could not be previewed.
pub type EditPreview = Result<(String, Vec<Value>), String>;

/// The popup editor for an item's KIP.
struct Editing {
    proposal: i64,
    seq: i64,
    area: TextArea<'static>,
    /// Why the last save was refused (line, column, code).
    error: Option<String>,
    /// The text the editor opened with: Esc leaves at once if nothing
    /// changed, and asks first otherwise.
    original: String,
    /// Esc was pressed on a changed text: y discards, n goes back.
    asking: bool,
}

impl Default for Reflections {
    fn default() -> Self {
        Self::new()
    }
}

fn mark(status: &str) -> (&'static str, Style) {
    match status {
        "applied" => ("✓", theme::ok()),
        "rejected" => ("✗", theme::dim()),
        "stale" => ("!", theme::warn()),
        "rolled_back" => ("↶", theme::dim()),
        _ => ("·", theme::base()),
    }
}

/// Key-level differences of two element images: removed keys and old
/// values in red, new ones in green, attributes and metadata one level in.
pub fn diff_lines(before: Option<&Value>, after: Option<&Value>, out: &mut Vec<Line<'static>>) {
    let red = Style::default().fg(Color::Red);
    let green = Style::default().fg(Color::Green);
    // whole values (the pane wraps them); strings as written
    let show = |v: &Value| -> String {
        match v {
            Value::String(s) => format!("\"{}\"", s.replace('\n', " ⏎ ")),
            other => other.to_string(),
        }
    };
    // a link's ends by name beside their ids
    let end = |img: &Value, k: &str| -> String {
        let id = img.get(k).map(|v| v.to_string()).unwrap_or_default();
        match img.get(format!("{k}_label")).and_then(Value::as_str) {
            Some(l) => format!("{l} ({id})"),
            None => id,
        }
    };
    let whole = |v: &Value| -> String {
        match v.as_object() {
            Some(o) => {
                let mut parts = Vec::new();
                for (k, x) in o {
                    if k.ends_with("_label") {
                        continue;
                    }
                    if k == "subject" || k == "object" {
                        parts.push(format!("{k}: {}", end(v, k)));
                    } else {
                        parts.push(format!("{k}: {}", show(x)));
                    }
                }
                parts.join(", ")
            }
            None => show(v),
        }
    };
    match (before, after) {
        (None, Some(a)) => out.push(Line::styled(format!("    + {}", whole(a)), green)),
        (Some(b), None) => out.push(Line::styled(format!("    - {}", whole(b)), red)),
        (Some(b), Some(a)) => {
            for part in ["attributes", "metadata"] {
                let (bo, ao) = (
                    b.get(part).and_then(Value::as_object),
                    a.get(part).and_then(Value::as_object),
                );
                let empty = serde_json::Map::new();
                let (bo, ao) = (bo.unwrap_or(&empty), ao.unwrap_or(&empty));
                let keys: BTreeSet<&String> = bo.keys().chain(ao.keys()).collect();
                for k in keys {
                    match (bo.get(k), ao.get(k)) {
                        (x, y) if x == y => {}
                        (Some(x), Some(y)) => {
                            out.push(Line::styled(format!("    - {part}.{k}: {}", show(x)), red));
                            out.push(Line::styled(
                                format!("    + {part}.{k}: {}", show(y)),
                                green,
                            ));
                        }
                        (Some(x), None) => {
                            out.push(Line::styled(format!("    - {part}.{k}: {}", show(x)), red))
                        }
                        (None, Some(y)) => out.push(Line::styled(
                            format!("    + {part}.{k}: {}", show(y)),
                            green,
                        )),
                        (None, None) => {}
                    }
                }
            }
            for k in ["subject", "object", "name", "type"] {
                if b.get(k) != a.get(k) {
                    let ends = k == "subject" || k == "object";
                    if let Some(x) = b.get(k) {
                        let v = if ends { end(b, k) } else { show(x) };
                        out.push(Line::styled(format!("    - {k}: {v}"), red));
                    }
                    if let Some(y) = a.get(k) {
                        let v = if ends { end(a, k) } else { show(y) };
                        out.push(Line::styled(format!("    + {k}: {v}"), green));
                    }
                }
            }
        }
        (None, None) => {}
    }
}

impl Reflections {
    pub fn new() -> Self {
        Reflections {
            proposals: Vec::new(),
            loaded: false,
            focus: Focus::Items,
            p_sel: 0,
            i_sel: 0,
            chosen: BTreeSet::new(),
            confirm: None,
            scroll: 0,
            error: None,
            edits: BTreeMap::new(),
            editing: None,
            edit_previews: BTreeMap::new(),
            filter: ListFilter::default(),
            impacts: BTreeMap::new(),
            weighing: BTreeSet::new(),
        }
    }

    /// Weighs the selected item's recall impact in the background, if it
    /// is pending and not weighed yet.
    fn want_impact(&mut self) -> Vec<Action> {
        let Some(key) = self
            .proposal()
            .map(|p| p.id)
            .zip(self.item().filter(|i| i.status == "pending").map(|i| i.seq))
        else {
            return vec![];
        };
        if self.impacts.contains_key(&key) || !self.weighing.insert(key) {
            return vec![];
        }
        vec![Action::Spawn(Job::Impact {
            proposal: key.0,
            seq: key.1,
        })]
    }

    /// The recall line of a pending item's detail.
    fn recall_lines(&self, key: (i64, i64), l: &mut Vec<Line<'static>>) {
        let label = Span::styled("recall ", theme::dim());
        match self.impacts.get(&key) {
            None => l.push(Line::from(vec![
                label,
                Span::styled("weighing the agents' recent reads…", theme::dim()),
            ])),
            Some(Err(e)) => l.push(Line::from(vec![
                label,
                Span::styled(format!("could not be weighed: {e}"), theme::warn()),
            ])),
            Some(Ok((0, _))) => l.push(Line::from(vec![
                label,
                Span::styled("no agent read logged in the last 14 days", theme::dim()),
            ])),
            Some(Ok((weighed, changed))) => {
                match crate::review::impact::summary(changed, *weighed) {
                    Some(s) => l.push(Line::from(vec![label, Span::styled(s, theme::warn())])),
                    None => l.push(Line::from(vec![
                        label,
                        Span::raw(format!(
                            "changes none of the {weighed} recent reads weighed"
                        )),
                    ])),
                }
                for c in changed.iter().take(3) {
                    l.push(Line::styled(
                        format!(
                            "  {} {}: {}",
                            c.at.get(..16).unwrap_or(&c.at),
                            c.caller,
                            crate::text::one_line(&c.command)
                        ),
                        theme::dim(),
                    ));
                }
            }
        }
    }

    /// The selected proposal's items the filter lets through, as indices.
    fn visible(&self) -> Vec<usize> {
        self.proposal()
            .map(|p| {
                p.items
                    .iter()
                    .enumerate()
                    .filter(|(_, it)| {
                        self.filter
                            .matches(&format!("{} {} {}", it.class, it.title, it.status))
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The title an item shows: its edit's, once one is kept and previewed.
    fn title_of(&self, pid: i64, it: &Item) -> String {
        match self.edit_previews.get(&(pid, it.seq)) {
            Some(Ok((t, _))) if self.edits.contains_key(&(pid, it.seq)) => t.clone(),
            _ => it.title.clone(),
        }
    }

    /// Ticks every undecided item of the selected item's class (among the
    /// items the filter shows), or unticks them when all are ticked.
    fn tick_class(&mut self) -> Vec<Action> {
        let Some(class) = self.item().map(|i| i.class.clone()) else {
            return vec![];
        };
        let Some(p) = self.proposal() else {
            return vec![];
        };
        let seqs: Vec<i64> = self
            .visible()
            .into_iter()
            .filter_map(|i| p.items.get(i))
            .filter(|it| it.class == class && matches!(it.status.as_str(), "pending" | "stale"))
            .map(|it| it.seq)
            .collect();
        if seqs.is_empty() {
            return vec![Action::Status(format!("no undecided {class} item to tick"))];
        }
        let all = seqs.iter().all(|s| self.chosen.contains(s));
        for s in &seqs {
            if all {
                self.chosen.remove(s);
            } else {
                self.chosen.insert(*s);
            }
        }
        vec![Action::Status(format!(
            "{} {} {class} item{}; {} ticked in all",
            if all { "unticked" } else { "ticked" },
            seqs.len(),
            if seqs.len() == 1 { "" } else { "s" },
            self.chosen.len()
        ))]
    }

    /// The rewrites of the chosen items of proposal `id`.
    fn edits_for(&self, id: i64, items: &Option<Vec<i64>>) -> BTreeMap<i64, String> {
        let pending: Vec<i64> = self
            .proposals
            .iter()
            .find(|p| p.id == id)
            .map(|p| {
                p.items
                    .iter()
                    .filter(|i| matches!(i.status.as_str(), "pending" | "stale"))
                    .map(|i| i.seq)
                    .collect()
            })
            .unwrap_or_default();
        self.edits
            .iter()
            .filter(|((p, seq), _)| {
                *p == id
                    && match items {
                        Some(v) => v.contains(seq),
                        None => pending.contains(seq),
                    }
            })
            .map(|((_, seq), t)| (*seq, t.clone()))
            .collect()
    }

    /// Opens the selected item's KIP in the editor popup.
    fn start_edit(&mut self) -> Vec<Action> {
        let Some((pid, it)) = self.proposal().map(|p| p.id).zip(self.item()) else {
            return vec![];
        };
        if !matches!(it.status.as_str(), "pending" | "stale") {
            return vec![Action::Status(format!(
                "item {} is {}: only undecided items can be edited",
                it.seq, it.status
            ))];
        }
        let seq = it.seq;
        let text = self
            .edits
            .get(&(pid, seq))
            .cloned()
            .unwrap_or_else(|| it.text());
        let mut area = TextArea::new(text.lines().map(str::to_string).collect());
        area.set_tab_length(2);
        self.editing = Some(Editing {
            proposal: pid,
            seq,
            area,
            error: None,
            original: text,
            asking: false,
        });
        vec![]
    }

    fn edit_key(&mut self, key: KeyEvent) -> Vec<Action> {
        use ratatui::crossterm::event::KeyModifiers;
        let Some(ed) = &mut self.editing else {
            return vec![];
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ed.asking {
            return match key.code {
                KeyCode::Char('y') | KeyCode::Enter => {
                    self.editing = None;
                    vec![Action::Status("changes discarded".into())]
                }
                KeyCode::Char('n') | KeyCode::Esc => {
                    ed.asking = false;
                    vec![]
                }
                _ => vec![],
            };
        }
        match key.code {
            KeyCode::Esc => {
                if ed.area.lines().join("\n") == ed.original {
                    self.editing = None;
                    return vec![Action::Status(
                        "nothing changed: the editor is closed".into(),
                    )];
                }
                ed.asking = true;
                vec![]
            }
            KeyCode::Char('s') if ctrl => {
                let text = ed.area.lines().join("\n");
                let params = self
                    .proposals
                    .iter()
                    .find(|p| p.id == ed.proposal)
                    .and_then(|p| p.items.iter().find(|i| i.seq == ed.seq))
                    .map(|i| i.params.clone())
                    .unwrap_or_default();
                match crate::review::proposals::check_edit(&text, &params) {
                    Ok(n) => {
                        let (p, seq) = (ed.proposal, ed.seq);
                        self.editing = None;
                        self.edits.insert((p, seq), text.clone());
                        self.edit_previews.remove(&(p, seq));
                        vec![
                            Action::Status(format!(
                                "item {seq} edited ({n} command(s)); its preview is recomputed; approving it applies the edit"
                            )),
                            Action::Spawn(Job::PreviewEdit {
                                proposal: p,
                                seq,
                                text,
                                params,
                            }),
                        ]
                    }
                    Err(e) => {
                        ed.error = Some(format!("{}: {}", e.code, e.message));
                        vec![]
                    }
                }
            }
            _ => {
                ed.area.input(key);
                ed.error = None;
                vec![]
            }
        }
    }

    fn render_edit(&self, f: &mut Frame, area: Rect) {
        let Some(ed) = &self.editing else { return };
        let rect = centered(area, 96, 80);
        f.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(true))
            .title(Span::styled(
                format!(" edit proposal #{} item {} ", ed.proposal, ed.seq),
                theme::title(),
            ))
            .title_bottom(Line::from(vec![
                Span::styled(" Ctrl+S", theme::key()),
                Span::raw(" check and keep  "),
                Span::styled("Esc", theme::key()),
                Span::raw(" discard  "),
                Span::styled("a line `;`", theme::key()),
                Span::raw(" separates commands "),
            ]));
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        let [text_area, err_area] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
        let lines = ed.area.lines();
        let ratatui_textarea::DataCursor(crow, ccol) = ed.area.cursor();
        let h = text_area.height as usize;
        let w = (text_area.width as usize).saturating_sub(5);
        let top = crow.saturating_sub(h.saturating_sub(1));
        // long lines scroll sideways with the cursor
        let left = ccol.saturating_sub(w);
        let none = std::collections::HashSet::new();
        let out: Vec<Line> = lines
            .iter()
            .enumerate()
            .skip(top)
            .take(h)
            .map(|(i, l)| {
                let mut spans = vec![Span::styled(format!("{:>3} ", i + 1), theme::dim())];
                let start = l.char_indices().nth(left).map_or(l.len(), |(b, _)| b);
                spans.extend(super::highlight::spans(&l[start..], &none, &none, &[]));
                Line::from(spans)
            })
            .collect();
        f.render_widget(Paragraph::new(out), text_area);
        let x = text_area.x + 4 + (ccol - left) as u16;
        let y = text_area.y + (crow - top) as u16;
        f.set_cursor_position((x.min(text_area.right().saturating_sub(1)), y));
        if ed.asking {
            f.render_widget(
                Paragraph::new(Line::from(vec![
                    Span::styled("Discard your changes to this item? ", theme::warn()),
                    Span::styled(" y ", theme::key()),
                    Span::raw("discard  "),
                    Span::styled(" n/Esc ", theme::key()),
                    Span::raw("keep editing"),
                ])),
                err_area,
            );
        } else if let Some(e) = &ed.error {
            f.render_widget(
                Paragraph::new(Line::styled(e.clone(), theme::error())).wrap(Wrap { trim: false }),
                err_area,
            );
        } else {
            f.render_widget(
                Paragraph::new(Line::styled(
                    "The edit is checked now and applied only when the item is approved.",
                    theme::dim(),
                )),
                err_area,
            );
        }
    }

    /// Whether the reject popup is taking typed text.
    /// What would be lost on quitting: the item editor open, edits kept
    /// but not yet approved.
    pub fn unsaved(&self) -> Option<String> {
        if self.editing.is_some() {
            return Some("an item is open in the editor".into());
        }
        match self.edits.len() {
            0 => None,
            n => Some(format!(
                "{n} edited item{} not yet approved",
                if n == 1 { "" } else { "s" }
            )),
        }
    }

    pub fn captures_text_now(&self) -> bool {
        self.captures_text()
    }

    fn proposal(&self) -> Option<&Proposal> {
        self.proposals.get(self.p_sel)
    }

    fn item(&self) -> Option<&Item> {
        let i = *self.visible().get(self.i_sel)?;
        self.proposal().and_then(|p| p.items.get(i))
    }

    /// The items a decision applies to: the ticked ones, else the one
    /// under the cursor.
    fn targets(&self) -> Option<Vec<i64>> {
        if !self.chosen.is_empty() {
            return Some(self.chosen.iter().copied().collect());
        }
        self.item().map(|i| vec![i.seq])
    }

    /// Why the items a decision would cover can't take it, if one can't:
    /// an applied item is undone first (Audit); a stale one (shown again
    /// with what it would do now) is approved or rejected like a pending
    /// one; a rejected or undone item can be approved again (reconsidered).
    fn undecidable(&self, approve: bool) -> Option<String> {
        let p = self.proposal()?;
        let seqs = self.targets()?;
        for it in p.items.iter().filter(|i| seqs.contains(&i.seq)) {
            let ok = match it.status.as_str() {
                "pending" | "stale" | "rolled_back" => true,
                "rejected" => approve,
                _ => false,
            };
            if !ok {
                return Some(match it.status.as_str() {
                    "applied" => format!(
                        "item {} is applied already: undo it in Audit (U on proposal:{}) to decide it again",
                        it.seq, p.id
                    ),
                    "rejected" => format!(
                        "item {} is rejected already (a approves it after all)",
                        it.seq
                    ),
                    other => format!("item {} is {other}", it.seq),
                });
            }
        }
        None
    }

    fn detail(&self) -> Vec<Line<'static>> {
        let Some(it) = self.item() else {
            return vec![Line::styled("no item", theme::dim())];
        };
        let pid = self.proposal().map_or(0, |p| p.id);
        let edited = self.edits.contains_key(&(pid, it.seq));
        let mut l = vec![
            Line::from(vec![
                Span::styled(format!("{} ", it.class), theme::accent()),
                Span::styled(self.title_of(pid, it), theme::title()),
            ]),
            Line::from(vec![
                Span::styled("status ", theme::dim()),
                Span::raw(it.status.clone()),
                Span::styled("   confidence ", theme::dim()),
                Span::raw(format!("{:.2}", it.confidence)),
            ]),
            Line::from(vec![
                Span::styled("why ", theme::dim()),
                Span::raw(it.rationale.clone()),
            ]),
        ];
        if !it.evidence.is_empty() {
            l.push(Line::from(vec![
                Span::styled("evidence ", theme::dim()),
                Span::raw(it.evidence.join(", ")),
                Span::styled("  (o: open in the graph)", theme::dim()),
            ]));
        }
        for c in &it.conflicts {
            l.push(Line::styled(c.clone(), theme::warn()));
        }
        if it.status == "pending" {
            self.recall_lines((pid, it.seq), &mut l);
        }
        if it.status == "stale" {
            // shown again: the preview below is what it would do now
            l.push(Line::styled(
                format!(
                    "⚠ {} — the preview below is what it does now (a applies that)",
                    it.reason
                        .clone()
                        .unwrap_or_else(|| "changed since it was shown".into())
                ),
                theme::warn(),
            ));
        } else if let Some(r) = &it.reason {
            l.push(Line::from(vec![
                Span::styled("decided ", theme::dim()),
                Span::raw(format!(
                    "by {}: {r}",
                    it.decided_by.clone().unwrap_or_default()
                )),
            ]));
        }
        if edited {
            l.push(Line::styled(
                format!("proposed as: {}", it.title),
                theme::dim(),
            ));
        } else if let Some(p) = &it.proposed {
            // applied as the operator edited it; what was proposed
            l.push(Line::styled(
                format!(
                    "proposed as: {} (edited before approval)",
                    p["title"].as_str().unwrap_or("?")
                ),
                theme::dim(),
            ));
        }
        l.push(Line::raw(""));
        if let Some(text) = self.edits.get(&(pid, it.seq)) {
            l.push(Line::styled(
                "  edited here, applied on approval (e edits again, u drops the edit):",
                theme::warn(),
            ));
            for line in text.lines() {
                l.push(with_values(line, &it.params));
            }
        } else {
            for c in it.edited.as_ref().unwrap_or(&it.commands) {
                for line in c.lines() {
                    l.push(with_values(line, &it.params));
                }
            }
        }
        l.push(Line::raw(""));
        let preview = match self.edit_previews.get(&(pid, it.seq)) {
            _ if !edited => &it.preview,
            Some(Ok((_, changes))) => {
                l.push(Line::styled("  what the edit changes now:", theme::warn()));
                changes
            }
            Some(Err(e)) => {
                l.push(Line::styled(
                    format!("  the edit can't be previewed: {e}"),
                    theme::error(),
                ));
                return l;
            }
            None => {
                l.push(Line::styled("  previewing the edit…", theme::dim()));
                return l;
            }
        };
        for ch in preview {
            l.push(Line::from(vec![
                Span::styled(
                    format!("  {} ", ch["op"].as_str().unwrap_or("?")),
                    theme::accent(),
                ),
                Span::raw(ch["element"].as_str().unwrap_or("?").to_string()),
            ]));
            diff_lines(
                ch.get("before").filter(|v| !v.is_null()),
                ch.get("after").filter(|v| !v.is_null()),
                &mut l,
            );
        }
        l
    }

    fn render_confirm(&self, f: &mut Frame, area: Rect) {
        let Some(c) = &self.confirm else { return };
        let rect = centered(area, 70, 50);
        f.render_widget(Clear, rect);
        let undecided = self
            .proposal()
            .map(|p| {
                p.items
                    .iter()
                    .filter(|i| i.status == "pending" || i.status == "stale")
                    .count()
            })
            .unwrap_or(0);
        let describe = |items: &Option<Vec<i64>>| match items {
            None => format!(
                "every undecided item ({undecided} item{})",
                if undecided == 1 { "" } else { "s" }
            ),
            Some(v) if v.len() == 1 => format!("item {}", v[0]),
            Some(v) => format!(
                "items {}",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        // what the decision covers, by title
        let titles = |items: &Option<Vec<i64>>| -> Vec<Line<'static>> {
            let Some(p) = self.proposal() else {
                return vec![];
            };
            let chosen: Vec<&Item> = match items {
                Some(v) => p.items.iter().filter(|i| v.contains(&i.seq)).collect(),
                None => p
                    .items
                    .iter()
                    .filter(|i| i.status == "pending" || i.status == "stale")
                    .collect(),
            };
            let mut out: Vec<Line<'static>> = chosen
                .iter()
                .take(8)
                .map(|i| {
                    Line::styled(
                        format!("  {:>3} {}", i.seq, self.title_of(p.id, i)),
                        theme::dim(),
                    )
                })
                .collect();
            if chosen.len() > 8 {
                out.push(Line::styled(
                    format!("  … and {} more", chosen.len() - 8),
                    theme::dim(),
                ));
            }
            out
        };
        // where what is approved disagrees with another item or with the
        // memory: said before it applies
        let conflicts = |items: &Option<Vec<i64>>| -> Vec<Line<'static>> {
            let Some(p) = self.proposal() else {
                return vec![];
            };
            let notes: Vec<(i64, &String)> = p
                .items
                .iter()
                .filter(|i| match items {
                    Some(v) => v.contains(&i.seq),
                    None => true,
                })
                .filter(|i| undecided_conflict(i))
                .flat_map(|i| i.conflicts.iter().map(move |c| (i.seq, c)))
                .collect();
            if notes.is_empty() {
                return vec![];
            }
            let mut out = vec![Line::raw(""), Line::styled("Conflicts:", theme::warn())];
            for (seq, c) in notes.iter().take(4) {
                let c = c.trim_start_matches('⚠').trim();
                out.push(Line::styled(format!("  ⚠ item {seq}: {c}"), theme::warn()));
            }
            if notes.len() > 4 {
                out.push(Line::styled(
                    format!("  … and {} more", notes.len() - 4),
                    theme::warn(),
                ));
            }
            out
        };
        let (title, lines) = match c {
            Confirm::Approve { id, items } => (
                " approve ",
                [
                    vec![Line::raw(format!(
                        "Apply {} of proposal #{id} to the memory?{}",
                        describe(items),
                        match self.edits_for(*id, items).len() {
                            0 => String::new(),
                            n => format!(" ({n} as edited)"),
                        }
                    ))],
                    titles(items),
                    conflicts(items),
                    vec![
                        Line::raw(""),
                        Line::styled(
                            "One transaction, audited as the operator; rollback undoes it.",
                            theme::dim(),
                        ),
                        Line::raw(""),
                        Line::from(vec![
                            Span::styled(" y/Enter ", theme::key()),
                            Span::raw("apply   "),
                            Span::styled(" n/Esc ", theme::key()),
                            Span::raw("back"),
                        ]),
                    ],
                ]
                .concat(),
            ),
            Confirm::Reject { id, items, reason } => (
                " reject ",
                [
                    vec![Line::raw(format!(
                        "Reject {} of proposal #{id}. Why?",
                        describe(items)
                    ))],
                    titles(items),
                    vec![
                        Line::raw(""),
                        Line::from(vec![
                            Span::styled("> ", theme::accent()),
                            Span::raw(reason.clone()),
                            Span::styled("▏", theme::accent()),
                        ]),
                        Line::raw(""),
                        Line::styled(
                            "The reason is kept; the same idea is not proposed again unchanged.",
                            theme::dim(),
                        ),
                        Line::from(vec![
                            Span::styled(" Enter ", theme::key()),
                            Span::raw("reject   "),
                            Span::styled(" Esc ", theme::key()),
                            Span::raw("back"),
                        ]),
                    ],
                ]
                .concat(),
            ),
        };
        f.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme::border(true))
                    .title(title),
            ),
            rect,
        );
    }

    fn confirm_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(c) = self.confirm.clone() else {
            return vec![];
        };
        match (c, key.code) {
            (_, KeyCode::Esc) | (Confirm::Approve { .. }, KeyCode::Char('n')) => {
                self.confirm = None;
                vec![]
            }
            (Confirm::Approve { id, items }, KeyCode::Char('y') | KeyCode::Enter) => {
                self.confirm = None;
                self.chosen.clear();
                // "every pending item" is the ones on screen: an item that
                // arrives after the operator looked is not approved unseen
                let items = items.or_else(|| {
                    self.proposal()
                        .filter(|p| p.id == id)
                        .map(|p| {
                            p.items
                                .iter()
                                .filter(|i| matches!(i.status.as_str(), "pending" | "stale"))
                                .map(|i| i.seq)
                                .collect::<Vec<_>>()
                        })
                        .filter(|v| !v.is_empty())
                });
                let edits = self.edits_for(id, &items);
                for seq in edits.keys() {
                    self.edits.remove(&(id, *seq));
                    self.edit_previews.remove(&(id, *seq));
                }
                vec![Action::Spawn(Job::Decide(Decision::Approve {
                    id,
                    items,
                    edits,
                }))]
            }
            (Confirm::Reject { id, items, reason }, KeyCode::Enter) => {
                if reason.trim().is_empty() {
                    return vec![Action::Status("a rejection needs a reason".into())];
                }
                self.confirm = None;
                self.chosen.clear();
                vec![Action::Spawn(Job::Decide(Decision::Reject {
                    id,
                    items,
                    reason,
                }))]
            }
            (
                Confirm::Reject {
                    id,
                    items,
                    mut reason,
                },
                KeyCode::Backspace,
            ) => {
                reason.pop();
                self.confirm = Some(Confirm::Reject { id, items, reason });
                vec![]
            }
            (
                Confirm::Reject {
                    id,
                    items,
                    mut reason,
                },
                KeyCode::Char(ch),
            ) => {
                reason.push(ch);
                self.confirm = Some(Confirm::Reject { id, items, reason });
                vec![]
            }
            _ => vec![],
        }
    }
}

impl Component for Reflections {
    fn hints(&self) -> Vec<Hint> {
        if let Some(ed) = &self.editing {
            if ed.asking {
                return vec![hint("y", "discard changes"), hint("n", "keep editing")];
            }
            return vec![hint("Ctrl+S", "check and keep"), hint("Esc", "close")];
        }
        if self.filter.typing {
            return vec![hint("Enter", "keep filter"), hint("Esc", "clear filter")];
        }
        match &self.confirm {
            Some(Confirm::Approve { .. }) => vec![hint("y", "apply"), hint("n", "back")],
            Some(Confirm::Reject { .. }) => vec![hint("Enter", "reject"), hint("Esc", "back")],
            None => vec![
                hint("↑↓", "item"),
                hint("a", "approve"),
                hint("x", "reject"),
                hint("Space", "tick, next"),
                hint("c", "tick class"),
                hint("Tab", "proposals/items"),
                hint("A", "approve all"),
                hint("X", "reject rest"),
                hint("e", "edit KIP"),
                hint("o", "open evidence"),
                hint("/", "filter"),
                hint("[ ]", "scroll item"),
                hint("r", "reload"),
            ],
        }
    }

    fn captures_text(&self) -> bool {
        self.confirm.is_some() || self.editing.is_some() || self.filter.typing
    }

    fn commands(&self) -> Vec<&'static str> {
        vec!["Reload proposals"]
    }

    /// A paste into the item editor keeps its lines (CR, CR LF and LF line
    /// ends alike) and lands at once; elsewhere it is typed into the
    /// field that has the focus, on one line.
    fn handle_paste(&mut self, text: &str) -> Vec<Action> {
        if let Some(ed) = &mut self.editing {
            if !ed.asking {
                ed.area.insert_str(super::component::pasted_lines(text));
                ed.error = None;
            }
            return vec![];
        }
        if !self.captures_text() {
            return vec![];
        }
        let mut out = Vec::new();
        for c in super::component::one_line(text).chars() {
            out.extend(self.handle_key(KeyEvent::new(
                KeyCode::Char(c),
                ratatui::crossterm::event::KeyModifiers::NONE,
            )));
        }
        out
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self.editing.is_some() {
            return self.edit_key(key);
        }
        if self.confirm.is_some() {
            return self.confirm_key(key);
        }
        if self.filter.key(&key) {
            self.i_sel = 0;
            self.scroll = 0;
            return self.want_impact();
        }
        let n_items = self.visible().len();
        match self.focus {
            Focus::Proposals => {
                if let Some(to) =
                    super::component::list_nav(&key, self.p_sel, self.proposals.len(), true)
                {
                    if to != self.p_sel {
                        self.p_sel = to;
                        self.i_sel = 0;
                        self.chosen.clear();
                        self.scroll = 0;
                    }
                    return self.want_impact();
                }
            }
            Focus::Items => {
                if let Some(to) = super::component::list_nav(&key, self.i_sel, n_items, true) {
                    if to != self.i_sel {
                        self.i_sel = to;
                        self.scroll = 0;
                    }
                    return self.want_impact();
                }
            }
        }
        match key.code {
            KeyCode::Tab
            | KeyCode::Left
            | KeyCode::Right
            | KeyCode::Char('h')
            | KeyCode::Char('l') => {
                self.focus = if self.focus == Focus::Items {
                    Focus::Proposals
                } else {
                    Focus::Items
                };
            }
            KeyCode::Char(']') => self.scroll = self.scroll.saturating_add(10),
            KeyCode::Char('[') => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char('/') => {
                self.filter.typing = true;
                self.focus = Focus::Items;
            }
            KeyCode::Esc if self.filter.active() => {
                self.filter.text.clear();
                self.i_sel = 0;
            }
            KeyCode::Char('c') => return self.tick_class(),
            KeyCode::Char(' ') => {
                if let Some(it) = self.item()
                    && matches!(it.status.as_str(), "pending" | "stale")
                {
                    let s = it.seq;
                    if !self.chosen.remove(&s) {
                        self.chosen.insert(s);
                    }
                    if self.i_sel + 1 < n_items {
                        self.i_sel += 1;
                    }
                }
            }
            KeyCode::Char('a') => {
                if let Some(refused) = self.undecidable(true) {
                    return vec![Action::Status(refused)];
                }
                if let (Some(p), Some(items)) = (self.proposal(), self.targets()) {
                    self.confirm = Some(Confirm::Approve {
                        id: p.id,
                        items: Some(items),
                    });
                }
            }
            KeyCode::Char('A') => {
                if let Some(p) = self.proposal() {
                    self.confirm = Some(Confirm::Approve {
                        id: p.id,
                        items: None,
                    });
                }
            }
            KeyCode::Char('x') => {
                if let Some(refused) = self.undecidable(false) {
                    return vec![Action::Status(refused)];
                }
                if let (Some(p), Some(items)) = (self.proposal(), self.targets()) {
                    self.confirm = Some(Confirm::Reject {
                        id: p.id,
                        items: Some(items),
                        reason: String::new(),
                    });
                }
            }
            KeyCode::Char('X') => {
                if let Some(p) = self.proposal() {
                    self.confirm = Some(Confirm::Reject {
                        id: p.id,
                        items: None,
                        reason: String::new(),
                    });
                }
            }
            KeyCode::Char('o') => {
                if let Some(id) = self.item().and_then(|i| {
                    i.evidence
                        .iter()
                        .find_map(|e| crate::store::ids::parse_concept_id(e))
                }) {
                    return vec![Action::OpenConcept(id)];
                }
                return vec![Action::Status(
                    "this item's evidence is not a concept".into(),
                )];
            }
            KeyCode::Char('e') => return self.start_edit(),
            KeyCode::Char('u') => {
                if let Some(key) = self
                    .proposal()
                    .map(|p| p.id)
                    .zip(self.item().map(|i| i.seq))
                    && self.edits.remove(&key).is_some()
                {
                    self.edit_previews.remove(&key);
                    return vec![Action::Status(format!(
                        "item {}: edit dropped, the proposed KIP stands",
                        key.1
                    ))];
                }
            }
            KeyCode::Char('r') | KeyCode::F(5) => return vec![Action::Spawn(Job::Proposals)],
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::Proposals(r)) => {
                // the cursor stays on the proposal and item it was on (by
                // id), wherever a new arrival puts them in the list
                let was_p = self.proposal().map(|p| p.id);
                let was_i = self.item().map(|i| i.seq);
                match r {
                    Ok(p) => {
                        self.proposals = p.clone();
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                self.loaded = true;
                match was_p.and_then(|id| self.proposals.iter().position(|p| p.id == id)) {
                    Some(at) => self.p_sel = at,
                    None => {
                        self.p_sel = self.p_sel.min(self.proposals.len().saturating_sub(1));
                    }
                }
                let shown = self.visible();
                let here = self.proposal().map(|p| p.id) == was_p;
                match was_i.filter(|_| here).and_then(|seq| {
                    let p = self.proposal()?;
                    shown.iter().position(|&i| p.items[i].seq == seq)
                }) {
                    Some(at) => self.i_sel = at,
                    None => self.i_sel = self.i_sel.min(shown.len().saturating_sub(1)),
                }
                if !here {
                    self.chosen.clear();
                }
                // the memory may have moved: weighed again when shown
                self.impacts.clear();
                self.weighing.clear();
                self.want_impact()
            }
            Action::Done(JobOutput::Impact {
                proposal,
                seq,
                result,
            }) => {
                self.weighing.remove(&(*proposal, *seq));
                self.impacts.insert((*proposal, *seq), result.clone());
                vec![]
            }
            Action::Done(JobOutput::Decided(r)) => {
                let msg = match r {
                    Ok(m) => Action::Status(m.clone()),
                    Err(e) => Action::Error(format!("refused, nothing changed: {e}")),
                };
                vec![msg, Action::Spawn(Job::Proposals)]
            }
            Action::Done(JobOutput::EditPreview {
                proposal,
                seq,
                result,
            }) => {
                self.edit_previews.insert((*proposal, *seq), result.clone());
                vec![]
            }
            Action::Command("Reload proposals") => vec![Action::Spawn(Job::Proposals)],
            _ => vec![],
        }
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(28), Constraint::Percentage(72)])
                .areas(area);
        // proposals
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(self.focus == Focus::Proposals))
            .title(Span::styled(" proposals ", theme::title()));
        let inner = block.inner(left);
        f.render_widget(block, left);
        let mut lines: Vec<Line> = Vec::new();
        if let Some(e) = &self.error {
            lines.push(Line::styled(e.clone(), theme::warn()));
        } else if self.proposals.is_empty() {
            lines.push(Line::styled(
                if self.loaded {
                    "nothing to review: run a sleep cycle (somnus sleep)"
                } else {
                    "loading…"
                },
                theme::dim(),
            ));
        }
        for (i, p) in self.proposals.iter().enumerate() {
            let st = if i == self.p_sel {
                theme::selected()
            } else {
                theme::base()
            };
            // where it comes from: a sleep run, or a sub-agent's key
            let source = match p.run {
                Some(r) => format!("run {r}"),
                None => p.actor.clone(),
            };
            let status = match p.status.as_str() {
                "partially_applied" => "partial",
                other => other,
            };
            // items still to decide that disagree with another or with
            // the memory
            let marked = p.items.iter().filter(|it| undecided_conflict(it)).count();
            lines.push(Line::from(vec![
                Span::styled(format!("#{:<2}", p.id), st),
                Span::styled(if marked > 0 { "⚠" } else { " " }, theme::warn()),
                Span::styled(
                    format!(
                        " {:<8} {:<8} {:>3}/{:<3}",
                        super::component::fit(&source, 8),
                        super::component::fit(status, 8),
                        p.count("pending") + p.count("stale"),
                        p.items.len()
                    ),
                    st,
                ),
            ]));
        }
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );

        let [items_area, detail_area] =
            Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(right);
        let title = match self.proposal() {
            Some(p) => format!(
                " #{} {} — {} ticked {}",
                p.id,
                p.title,
                self.chosen.len(),
                self.filter.title()
            ),
            None => " items ".into(),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(self.focus == Focus::Items))
            .title(Span::styled(title, theme::title()));
        let inner = block.inner(items_area);
        f.render_widget(block, items_area);
        let h = inner.height as usize;
        let start = self.i_sel.saturating_sub(h.saturating_sub(1));
        let w = inner.width as usize;
        let visible = self.visible();
        let lines: Vec<Line> = self
            .proposal()
            .map(|p| {
                visible
                    .iter()
                    .filter_map(|&i| p.items.get(i))
                    .enumerate()
                    .skip(start)
                    .take(h)
                    .map(|(i, it)| {
                        let (m, mst) = mark(&it.status);
                        let tick = if self.chosen.contains(&it.seq) {
                            "[x]"
                        } else {
                            "[ ]"
                        };
                        let m = if self.edits.contains_key(&(p.id, it.seq)) {
                            "✎"
                        } else {
                            m
                        };
                        let text = super::component::fit(
                            &format!(
                                " {:>3} {:<17} {}",
                                it.seq,
                                it.class,
                                self.title_of(p.id, it)
                            ),
                            w.saturating_sub(7),
                        );
                        let st = if i == self.i_sel && self.focus == Focus::Items {
                            theme::selected()
                        } else {
                            theme::base()
                        };
                        Line::from(vec![
                            Span::styled(tick, theme::accent()),
                            Span::styled(format!(" {m}"), mst),
                            Span::styled(
                                if undecided_conflict(it) { "⚠" } else { " " },
                                theme::warn(),
                            ),
                            Span::styled(text, st),
                        ])
                    })
                    .collect()
            })
            .unwrap_or_default();
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );

        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(Span::styled(" item ", theme::title()));
        let p = Paragraph::new(self.detail())
            .wrap(Wrap { trim: false })
            .block(block);
        self.scroll = super::component::clamp_scroll(&p, detail_area, self.scroll);
        f.render_widget(p.scroll((self.scroll, 0)), detail_area);
        self.render_confirm(f, area);
        self.render_edit(f, area);
    }
}

/// An item still to decide that is marked as disagreeing with another
/// pending item or with the memory.
fn undecided_conflict(it: &crate::review::proposals::Item) -> bool {
    matches!(it.status.as_str(), "pending" | "stale") && !it.conflicts.is_empty()
}

/// One line of an item's KIP with each `:placeholder` shown as the value
/// it stands for (highlighted), so the operator reads what will be
/// written; a placeholder without a value stays as it is.
fn with_values(line: &str, params: &serde_json::Map<String, Value>) -> Line<'static> {
    let none = std::collections::HashSet::new();
    let mut spans = vec![Span::styled("  ".to_string(), theme::key())];
    let mut at = 0;
    for (a, b, tok) in super::highlight::tokenize(line, &none, &none) {
        if tok != super::highlight::Tok::Param {
            continue;
        }
        let Some(v) = params.get(&line[a + 1..b]) else {
            continue;
        };
        spans.push(Span::styled(line[at..a].to_string(), theme::key()));
        spans.push(Span::styled(v.to_string(), theme::accent()));
        at = b;
    }
    spans.push(Span::styled(line[at..].to_string(), theme::key()));
    Line::from(spans)
}
