//! The graph explorer: a fuzzy finder over concepts, one concept's
//! neighbourhood grouped by predicate, an inspector, a node-link drawing,
//! and a breadcrumb trail to walk back along.

use super::component::{Action, Component, Hint, Job, JobOutput, hint};
use super::theme;
use crate::engine::overview::{ConceptEntry, Neighbourhood};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, MouseEvent, MouseEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Line as CLine};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Finder,
    Links,
    Inspector,
}

pub struct Explorer {
    pub index: Vec<ConceptEntry>,
    pub index_loaded: bool,
    filter: String,
    matches: Vec<usize>,
    sel_match: usize,
    pub current: Option<Box<Neighbourhood>>,
    trail: Vec<(i64, String)>,
    /// Going back: the concept left, whose link is selected once the one
    /// gone back to has loaded.
    came_from: Option<i64>,
    /// The concept on screen when another was asked for: it joins the
    /// trail once the other has loaded (not if it no longer exists).
    leaving: Option<(i64, String)>,
    pub focus: Focus,
    link_sel: usize,
    inspector_scroll: u16,
    loading: bool,
}

impl Default for Explorer {
    fn default() -> Self {
        Self::new()
    }
}

impl Explorer {
    pub fn new() -> Self {
        Explorer {
            index: Vec::new(),
            index_loaded: false,
            filter: String::new(),
            matches: Vec::new(),
            sel_match: 0,
            current: None,
            trail: Vec::new(),
            came_from: None,
            leaving: None,
            focus: Focus::Finder,
            link_sel: 0,
            inspector_scroll: 0,
            loading: false,
        }
    }

    /// Whether the finder's list holds a concept of this name.
    pub fn lists(&self, name: &str) -> bool {
        self.index.iter().any(|e| e.name == name)
    }

    fn refilter(&mut self) {
        let m = SkimMatcherV2::default();
        let mut scored: Vec<(i64, usize)> = self
            .index
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                if self.filter.is_empty() {
                    return Some((0, i));
                }
                let hay = format!("{} {} {}", e.name, e.ty, e.aliases.join(" "));
                let lname = e.name.to_lowercase();
                let lf = self.filter.to_lowercase();
                let boost = if lname == lf {
                    1000
                } else if lname.starts_with(&lf) {
                    400 - e.name.len().min(100) as i64
                } else {
                    0
                };
                m.fuzzy_match(&hay, &self.filter).map(|s| (s + boost, i))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        self.matches = scored.into_iter().take(500).map(|(_, i)| i).collect();
        self.sel_match = 0;
    }

    /// Edges in display order: outgoing then incoming, by predicate.
    fn edges(&self) -> Vec<&crate::engine::overview::Edge> {
        let Some(n) = &self.current else {
            return vec![];
        };
        let mut v: Vec<&crate::engine::overview::Edge> = n.edges.iter().collect();
        v.sort_by(|a, b| {
            b.outgoing
                .cmp(&a.outgoing)
                .then(a.predicate.cmp(&b.predicate))
                .then(a.other_label.cmp(&b.other_label))
        });
        v
    }

    fn open(&mut self, id: i64, push: bool) -> Vec<Action> {
        self.leaving = match &self.current {
            Some(n) if push && n.id != id => Some((n.id, format!("{}: {}", n.ty, n.name))),
            _ => None,
        };
        self.loading = true;
        vec![Action::Spawn(Job::Neighbourhood(id))]
    }

    /// Why the selected link (`link`) or the open concept is as it is.
    fn why(&self, link: bool) -> Vec<Action> {
        let Some(n) = &self.current else {
            return vec![Action::Status("open a concept first".into())];
        };
        let what = if link {
            match self.edges().get(self.link_sel) {
                Some(e) => e.link_id.clone(),
                None => return vec![Action::Status("no link selected".into())],
            }
        } else {
            format!("{}:{}", n.ty, n.name)
        };
        vec![Action::Spawn(Job::WhyOf(what))]
    }

    /// Asks for the concept to compare the open one with.
    fn why_not_merged(&self) -> Vec<Action> {
        match &self.current {
            Some(n) => vec![Action::Ask(super::component::Ask::Pair(Some(format!(
                "{}:{}",
                n.ty, n.name
            ))))],
            None => vec![Action::Status("open a concept first".into())],
        }
    }

    /// The link the selection is on.
    pub fn selected_link(&self) -> Option<&crate::engine::overview::Edge> {
        self.edges().get(self.link_sel).copied()
    }

    fn back(&mut self) -> Vec<Action> {
        match self.trail.pop() {
            Some((id, _)) => {
                // back where it was: on the link to the one just left
                self.came_from = self.current.as_ref().map(|n| n.id);
                self.open(id, false)
            }
            None => vec![Action::Status("at the start of the trail".into())],
        }
    }

    fn as_query(&self) -> Option<String> {
        let n = self.current.as_ref()?;
        Some(format!(
            "FIND(?p, ?o, ?l.metadata.confidence)\nWHERE {{\n  ?l ({{type: {}, name: {}}}, ?p, ?o)\n}}\nLIMIT 100",
            json!(n.ty),
            json!(n.name)
        ))
    }

    fn render_finder(&mut self, f: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Finder;
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(focused))
            .title(Span::styled(" find a concept ", theme::title()));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let [input, list] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("› ", theme::accent()),
                Span::raw(self.filter.clone()),
            ])),
            input,
        );
        if focused {
            f.set_cursor_position((input.x + 2 + self.filter.chars().count() as u16, input.y));
        }
        if !self.index_loaded {
            f.render_widget(
                Paragraph::new(Line::styled("loading concepts…", theme::dim())),
                list,
            );
            return;
        }
        let h = list.height as usize;
        let start = self.sel_match.saturating_sub(h.saturating_sub(1));
        let lines: Vec<Line> = self
            .matches
            .iter()
            .enumerate()
            .skip(start)
            .take(h)
            .map(|(i, &ix)| {
                let e = &self.index[ix];
                let st = if i == self.sel_match && focused {
                    theme::selected()
                } else {
                    theme::base()
                };
                Line::from(vec![
                    Span::styled(e.name.clone(), st),
                    Span::styled(format!("  {}", e.ty), theme::dim()),
                ])
            })
            .collect();
        if lines.is_empty() {
            f.render_widget(Paragraph::new(Line::styled("no match", theme::dim())), list);
        } else {
            f.render_widget(
                Paragraph::new(super::component::cut_lines(lines, list.width)),
                list,
            );
        }
    }

    fn render_links(&mut self, f: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Links;
        let title = match &self.current {
            Some(n) => format!(" {}: {} ", n.ty, n.name),
            None => " neighbourhood ".into(),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(focused))
            .title(Span::styled(title, theme::title()));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(n) = &self.current else {
            f.render_widget(
                Paragraph::new(Line::styled(
                    "Pick a concept on the left (Enter) to see its links.",
                    theme::dim(),
                ))
                .wrap(Wrap { trim: true }),
                inner,
            );
            return;
        };
        let edges = self.edges();
        let mut lines: Vec<Line> = Vec::new();
        let mut sel_line = 0;
        let mut last: Option<(bool, String)> = None;
        for (i, e) in edges.iter().enumerate() {
            let key = (e.outgoing, e.predicate.clone());
            if last.as_ref() != Some(&key) {
                let total = n
                    .counts
                    .iter()
                    .find(|(p, o, _)| p == &e.predicate && *o == e.outgoing)
                    .map(|c| c.2)
                    .unwrap_or(0);
                let arrow = if e.outgoing { "→" } else { "←" };
                lines.push(Line::from(vec![
                    Span::styled(format!("{arrow} {} ", e.predicate), theme::predicate()),
                    Span::styled(format!("({total})"), theme::dim()),
                ]));
                last = Some(key);
            }
            if i == self.link_sel {
                sel_line = lines.len();
            }
            let conf = e.confidence.map(|c| format!(" {c:.2}")).unwrap_or_default();
            let st = if i == self.link_sel && focused {
                theme::selected()
            } else {
                theme::base()
            };
            let mut spans = vec![
                Span::raw("   "),
                Span::styled(e.other_label.clone(), st),
                Span::styled(conf, theme::dim()),
            ];
            if e.superseded {
                spans.push(Span::styled(" superseded", theme::warn()));
            }
            lines.push(Line::from(spans));
        }
        if lines.is_empty() {
            lines.push(Line::styled("no links", theme::dim()));
        }
        let h = inner.height as usize;
        let scroll = sel_line.saturating_sub(h.saturating_sub(2)) as u16;
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)).scroll((scroll, 0)),
            inner,
        );
    }

    fn render_canvas(&self, f: &mut Frame, area: Rect) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(" 1-hop ");
        let Some(n) = &self.current else {
            f.render_widget(block, area);
            return;
        };
        let edges = self.edges();
        let shown: Vec<_> = edges.iter().take(12).collect();
        let k = shown.len().max(1) as f64;
        let ends: Vec<(f64, f64)> = (0..shown.len())
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / k + 0.3;
                (a.cos(), a.sin() * 0.9)
            })
            .collect();
        let labels: Vec<String> = shown
            .iter()
            .map(|e| super::component::fit(e.other_label.split(": ").last().unwrap_or(""), 14))
            .collect();
        let short = super::component::fit(&n.name, 16);
        let inner = block.inner(area);
        let places = label_places(&ends, &labels, &short, inner.width, inner.height);
        let canvas = Canvas::default()
            .block(block)
            .marker(Marker::Braille)
            .x_bounds(CANVAS_X)
            .y_bounds(CANVAS_Y)
            .paint(move |ctx| {
                for (i, e) in shown.iter().enumerate() {
                    let (x, y) = ends[i];
                    ctx.draw(&CLine {
                        x1: 0.0,
                        y1: 0.0,
                        x2: x * 0.85,
                        y2: y * 0.85,
                        color: if e.outgoing {
                            Color::Cyan
                        } else {
                            Color::Magenta
                        },
                    });
                }
                for (label, at) in labels.iter().zip(&places) {
                    if let Some((x, y)) = at {
                        ctx.print(*x, *y, Line::styled(label.clone(), theme::base()));
                    }
                }
                let (x, y) = center_at(&short, inner.width, inner.height);
                ctx.print(x, y, Line::styled(short.clone(), theme::accent()));
            });
        f.render_widget(canvas, area);
    }

    fn render_inspector(&self, f: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Inspector;
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(focused))
            .title(Span::styled(" inspector ", theme::title()));
        let text = match &self.current {
            None => String::new(),
            Some(n) => {
                let mut v =
                    json!({ "id": n.kip_id, "attributes": n.attributes, "metadata": n.metadata });
                if self.focus == Focus::Links
                    && let Some(e) = self.edges().get(self.link_sel)
                {
                    v = json!({ "link": e.link_id, "attributes": e.attributes, "metadata": e.metadata });
                }
                serde_json::to_string_pretty(&v).unwrap_or_default()
            }
        };
        f.render_widget(
            Paragraph::new(text)
                .scroll((self.inspector_scroll, 0))
                .block(block),
            area,
        );
    }
}

impl Component for Explorer {
    fn hints(&self) -> Vec<Hint> {
        match self.focus {
            Focus::Finder => vec![
                hint("type", "filter"),
                hint("↑↓", "select"),
                hint("Enter", "open"),
                hint("Tab", "links"),
            ],
            Focus::Links => vec![
                hint("↑↓", "select"),
                hint("Enter", "walk"),
                hint("Backspace", "back"),
                hint("o", "open as query"),
                hint("w/W", "why link/concept"),
                hint("m", "why not merged"),
                hint("/", "find"),
                hint("Tab", "inspector"),
            ],
            Focus::Inspector => vec![
                hint("↑↓", "scroll"),
                hint("w", "why"),
                hint("m", "why not merged"),
                hint("Tab", "finder"),
                hint("Backspace", "back"),
            ],
        }
    }

    fn captures_text(&self) -> bool {
        self.focus == Focus::Finder
    }

    fn commands(&self) -> Vec<&'static str> {
        vec!["Open as query", "Back"]
    }

    fn handle_paste(&mut self, text: &str) -> Vec<Action> {
        if self.focus == Focus::Finder {
            // one refilter for the whole paste, however long
            self.filter.push_str(&super::component::one_line(text));
            self.refilter();
        }
        vec![]
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if key.code == KeyCode::Tab || key.code == KeyCode::BackTab {
            self.focus = match (self.focus, key.code == KeyCode::BackTab) {
                (Focus::Finder, false) | (Focus::Inspector, true) => Focus::Links,
                (Focus::Links, false) | (Focus::Finder, true) => Focus::Inspector,
                _ => Focus::Finder,
            };
            return vec![];
        }
        match self.focus {
            Focus::Finder
                if super::component::list_nav(&key, self.sel_match, self.matches.len(), false)
                    .is_some() =>
            {
                self.sel_match =
                    super::component::list_nav(&key, self.sel_match, self.matches.len(), false)
                        .unwrap_or(0);
            }
            Focus::Links
                if super::component::list_nav(&key, self.link_sel, self.edges().len(), true)
                    .is_some() =>
            {
                self.link_sel =
                    super::component::list_nav(&key, self.link_sel, self.edges().len(), true)
                        .unwrap_or(0);
            }
            Focus::Finder => match key.code {
                KeyCode::Enter => {
                    if let Some(&ix) = self.matches.get(self.sel_match) {
                        let id = self.index[ix].id;
                        self.focus = Focus::Links;
                        self.link_sel = 0;
                        return self.open(id, true);
                    }
                }

                KeyCode::Esc if self.current.is_some() => {
                    self.focus = Focus::Links;
                }
                _ => {
                    if super::component::edit_line(&mut self.filter, &key) {
                        self.refilter();
                    }
                }
            },
            Focus::Links => match key.code {
                KeyCode::Enter => {
                    let target = self
                        .edges()
                        .get(self.link_sel)
                        .filter(|e| e.other_is_concept)
                        .map(|e| e.other);
                    match target {
                        Some(id) => {
                            self.link_sel = 0;
                            return self.open(id, true);
                        }
                        None => {
                            return vec![Action::Status(
                                "the other end is a proposition, not a concept".into(),
                            )];
                        }
                    }
                }
                KeyCode::Backspace => return self.back(),
                KeyCode::Char('/') => self.focus = Focus::Finder,
                KeyCode::Char('o') => {
                    if let Some(q) = self.as_query() {
                        return vec![Action::OpenAsQuery(q)];
                    }
                }
                KeyCode::Char('w') => return self.why(true),
                KeyCode::Char('W') => return self.why(false),
                KeyCode::Char('m') => return self.why_not_merged(),
                _ => {}
            },
            Focus::Inspector => match key.code {
                KeyCode::Down | KeyCode::Char('j') => {
                    self.inspector_scroll = self.inspector_scroll.saturating_add(1)
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.inspector_scroll = self.inspector_scroll.saturating_sub(1)
                }
                KeyCode::Backspace => return self.back(),
                KeyCode::Char('w') => return self.why(false),
                KeyCode::Char('m') => return self.why_not_merged(),
                _ => {}
            },
        }
        vec![]
    }

    fn handle_mouse(&mut self, ev: MouseEvent) -> Vec<Action> {
        match (ev.kind, self.focus) {
            (MouseEventKind::ScrollDown, Focus::Links) => {
                self.link_sel = (self.link_sel + 1).min(self.edges().len().saturating_sub(1))
            }
            (MouseEventKind::ScrollUp, Focus::Links) => {
                self.link_sel = self.link_sel.saturating_sub(1)
            }
            (MouseEventKind::ScrollDown, _) => {
                self.sel_match = (self.sel_match + 1).min(self.matches.len().saturating_sub(1))
            }
            (MouseEventKind::ScrollUp, _) => self.sel_match = self.sel_match.saturating_sub(1),
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::Index(Ok(idx))) => {
                self.index = idx.clone();
                self.index_loaded = true;
                self.refilter();
            }
            Action::Done(JobOutput::Index(Err(e))) => {
                return vec![Action::Error(format!("cannot list concepts: {e}"))];
            }
            Action::Done(JobOutput::Neighbourhood(r)) => {
                self.loading = false;
                let leaving = self.leaving.take();
                match r {
                    Ok(Some(n)) => {
                        if let Some(l) = leaving.filter(|l| l.0 != n.id) {
                            self.trail.push(l);
                            // another concept: its links from the top
                            self.link_sel = 0;
                        }
                        self.current = Some(n.clone());
                        self.link_sel = self.link_sel.min(self.edges().len().saturating_sub(1));
                        if let Some(from) = self.came_from.take()
                            && let Some(i) = self.edges().iter().position(|e| e.other == from)
                        {
                            self.link_sel = i;
                        }
                        self.inspector_scroll = 0;
                    }
                    Ok(None) => {
                        // the concept on screen is gone (a reload, not a
                        // step elsewhere): it is no longer shown
                        if leaving.is_none() {
                            self.current = None;
                        }
                        // the finder's list is out of date: read it again
                        return vec![
                            Action::Status("that concept no longer exists".into()),
                            Action::Spawn(Job::Index),
                        ];
                    }
                    Err(e) => {
                        return vec![Action::Status(format!(
                            "cannot load the neighbourhood: {e}"
                        ))];
                    }
                }
            }
            Action::OpenConcept(id) => {
                self.focus = Focus::Links;
                return self.open(*id, true);
            }
            Action::Command("Open as query") => {
                if let Some(q) = self.as_query() {
                    return vec![Action::OpenAsQuery(q)];
                }
            }
            Action::Command("Back") => return self.back(),
            _ => {}
        }
        vec![]
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let left_w = (area.width / 3).clamp(24, 44);
        let [left, right] =
            Layout::horizontal([Constraint::Length(left_w), Constraint::Min(20)]).areas(area);
        self.render_finder(f, left);
        let [crumbs, mid, bottom] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(6),
            Constraint::Length((area.height / 3).max(5)),
        ])
        .areas(right);
        let mut trail: Vec<Span> = vec![Span::styled(" trail: ", theme::dim())];
        for (_, label) in &self.trail {
            trail.push(Span::raw(label.clone()));
            trail.push(Span::styled(" › ", theme::dim()));
        }
        if let Some(n) = &self.current {
            trail.push(Span::styled(
                format!("{}: {}", n.ty, n.name),
                theme::accent(),
            ));
        }
        if self.loading {
            trail.push(Span::styled("  loading…", theme::dim()));
        }
        f.render_widget(Paragraph::new(Line::from(trail)), crumbs);
        if mid.width >= 70 {
            let [links, canvas] =
                Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                    .areas(mid);
            self.render_links(f, links);
            self.render_canvas(f, canvas);
        } else {
            self.render_links(f, mid);
        }
        self.render_inspector(f, bottom);
    }
}

pub fn value_line(v: &Value) -> String {
    super::results::cell_text(v)
}

/// The 1-hop drawing's bounds.
const CANVAS_X: [f64; 2] = [-1.3, 1.3];
const CANVAS_Y: [f64; 2] = [-1.2, 1.2];

/// The cell a canvas point's text is printed in, in a `w`×`h` area (as
/// the canvas places a label: scaled to the last cell, then cut to a
/// whole cell).
fn cell_of(x: f64, y: f64, w: u16, h: u16) -> (i64, i64) {
    let col = (x - CANVAS_X[0]) / (CANVAS_X[1] - CANVAS_X[0]) * f64::from(w.saturating_sub(1));
    let row = (CANVAS_Y[1] - y) / (CANVAS_Y[1] - CANVAS_Y[0]) * f64::from(h.saturating_sub(1));
    (col.max(0.0) as i64, row.max(0.0) as i64)
}

/// A canvas point whose text is printed in a cell: its middle, kept within
/// the bounds (the canvas leaves out a label outside them).
fn point_of(col: i64, row: i64, w: u16, h: u16) -> (f64, f64) {
    let x = CANVAS_X[0]
        + (col as f64 + 0.5) / f64::from(w.saturating_sub(1).max(1)) * (CANVAS_X[1] - CANVAS_X[0]);
    let y = CANVAS_Y[1]
        - (row as f64 + 0.5) / f64::from(h.saturating_sub(1).max(1)) * (CANVAS_Y[1] - CANVAS_Y[0]);
    (x.min(CANVAS_X[1]), y.max(CANVAS_Y[0]))
}

/// Where the open concept's name is printed: centred.
fn center_at(name: &str, w: u16, h: u16) -> (f64, f64) {
    let (c, r) = cell_of(0.0, 0.0, w, h);
    let half = (name.chars().count() / 2) as i64;
    point_of((c - half).max(0), r, w, h)
}

/// Where each neighbour's label goes: beside its end of the drawing, on
/// the nearest row where it overlaps no other label and not the open
/// concept's name; a label with no such row in reach is left out (its
/// link stays listed beside the drawing).
fn label_places(
    ends: &[(f64, f64)],
    labels: &[String],
    center: &str,
    w: u16,
    h: u16,
) -> Vec<Option<(f64, f64)>> {
    let (cc, cr) = cell_of(0.0, 0.0, w, h);
    let half = (center.chars().count() / 2) as i64;
    let mut taken: Vec<(i64, i64, i64)> = vec![(
        cr,
        (cc - half).max(0),
        (cc - half).max(0) + center.chars().count() as i64,
    )];
    let mut out = Vec::new();
    for ((x, y), label) in ends.iter().zip(labels) {
        let len = label.chars().count() as i64;
        let (c, r) = cell_of(*x, *y, w, h);
        // a label on the left side ends at its point, on the right starts
        // there; inside the area either way
        let start = if *x < 0.0 { c - len + 1 } else { c };
        let start = start.clamp(0, (i64::from(w) - len).max(0));
        let end = start + len;
        let mut placed = None;
        for dr in [0i64, -1, 1, -2, 2] {
            let row = r + dr;
            if row < 0 || row >= i64::from(h) {
                continue;
            }
            // a blank cell between two labels on one row, so that two
            // names never read as one
            if taken
                .iter()
                .all(|(tr, ts, te)| *tr != row || end < *ts || start > *te)
            {
                placed = Some((row, start));
                break;
            }
        }
        out.push(placed.map(|(row, col)| {
            taken.push((row, col, col + len));
            point_of(col, row, w, h)
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However many neighbours and however small the drawing, no two labels
    /// share a cell, and none covers the open concept's name.
    #[test]
    fn one_hop_labels_never_overlap() {
        for (w, h) in [(30u16, 8u16), (40, 12), (60, 20), (24, 6)] {
            for n in 1..=12usize {
                let ends: Vec<(f64, f64)> = (0..n)
                    .map(|i| {
                        let a = std::f64::consts::TAU * i as f64 / n as f64 + 0.3;
                        (a.cos(), a.sin() * 0.9)
                    })
                    .collect();
                let labels: Vec<String> = (0..n).map(|i| format!("Neighbour {i:02}…")).collect();
                let center = "Mira Chen";
                let places = label_places(&ends, &labels, center, w, h);
                let mut cells = std::collections::HashSet::new();
                let (cx, cy) = center_at(center, w, h);
                let (cc, cr) = cell_of(cx, cy, w, h);
                for c in cc..cc + center.chars().count() as i64 {
                    cells.insert((c, cr));
                }
                for (p, l) in places.iter().zip(&labels) {
                    let Some((x, y)) = p else { continue };
                    let (c, r) = cell_of(*x, *y, w, h);
                    assert!(
                        c >= 0 && c + l.chars().count() as i64 <= i64::from(w),
                        "inside"
                    );
                    let len = l.chars().count() as i64;
                    // a blank cell on each side
                    assert!(
                        !cells.contains(&(c - 1, r)) && !cells.contains(&(c + len, r)),
                        "{w}x{h}, {n} labels: touching at row {r}"
                    );
                    for i in 0..len {
                        assert!(
                            cells.insert((c + i, r)),
                            "{w}x{h}, {n} labels: overlap at {:?}",
                            (c + i, r)
                        );
                    }
                }
                if w >= 60 {
                    assert!(
                        places.iter().filter(|p| p.is_some()).count() >= n.min(8),
                        "{w}x{h} {n}"
                    );
                }
            }
        }
    }
}
