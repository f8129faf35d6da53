//! The schema view: who the agent is, its domains, concept types and
//! predicates with member counts and descriptions.

use super::component::{Action, Component, Hint, JobOutput, hint};
use super::theme;
use crate::engine::overview::{SchemaOverview, TypeInfo};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use serde_json::json;

pub struct SchemaView {
    pub overview: Option<SchemaOverview>,
    list: usize,
    sel: [usize; 3],
}

impl Default for SchemaView {
    fn default() -> Self {
        Self::new()
    }
}

impl SchemaView {
    pub fn new() -> Self {
        SchemaView {
            overview: None,
            list: 1,
            sel: [0; 3],
        }
    }

    fn items(&self, list: usize) -> &[TypeInfo] {
        match &self.overview {
            None => &[],
            Some(o) => match list {
                0 => &o.domains,
                1 => &o.concept_types,
                _ => &o.predicates,
            },
        }
    }

    fn query_for_selected(&self) -> Option<String> {
        let it = self.items(self.list).get(self.sel[self.list])?;
        Some(match self.list {
            0 => format!(
                "FIND(?n.type, ?n.name)\nWHERE {{\n  (?n, \"belongs_to_domain\", {{type: \"Domain\", name: {}}})\n}}\nORDER BY ?n.type, ?n.name\nLIMIT 100",
                json!(it.name)
            ),
            1 => format!(
                "FIND(?n.name, ?n.metadata._updated_at)\nWHERE {{\n  ?n {{type: {}}}\n}}\nORDER BY ?n.name\nLIMIT 100",
                json!(it.name)
            ),
            _ => format!(
                "FIND(?s.name, ?o.name, ?l.metadata.confidence)\nWHERE {{\n  ?l (?s, {}, ?o)\n}}\nLIMIT 100",
                json!(it.name)
            ),
        })
    }

    fn render_list(&self, f: &mut Frame, area: Rect, list: usize, title: &str) {
        let focused = self.list == list;
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(focused))
            .title(Span::styled(format!(" {title} "), theme::title()));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let items = self.items(list);
        let h = inner.height as usize;
        let sel = self.sel[list];
        let start = sel.saturating_sub(h.saturating_sub(1));
        let w = inner.width as usize;
        let lines: Vec<Line> = items
            .iter()
            .enumerate()
            .skip(start)
            .take(h)
            .map(|(i, t)| {
                let count = format!("{}", t.count);
                let name_w = w.saturating_sub(count.len() + 1);
                let name = super::component::fit(&t.name, name_w);
                let pad = w.saturating_sub(name.chars().count() + count.len());
                let st = if i == sel && focused {
                    theme::selected()
                } else {
                    theme::base()
                };
                Line::from(vec![
                    Span::styled(name, st),
                    Span::raw(" ".repeat(pad)),
                    Span::styled(count, theme::dim()),
                ])
            })
            .collect();
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );
    }
}

impl Component for SchemaView {
    fn hints(&self) -> Vec<Hint> {
        vec![
            hint("←→/Tab", "list"),
            hint("↑↓", "select"),
            hint("Enter", "query it"),
            hint("r", "reload"),
        ]
    }

    fn commands(&self) -> Vec<&'static str> {
        vec!["Reload schema"]
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let n = self.items(self.list).len();
        match key.code {
            KeyCode::Tab | KeyCode::Right | KeyCode::Char('l') => self.list = (self.list + 1) % 3,
            KeyCode::BackTab | KeyCode::Left | KeyCode::Char('h') => {
                self.list = (self.list + 2) % 3
            }
            _ if super::component::list_nav(&key, self.sel[self.list], n, true).is_some() => {
                self.sel[self.list] =
                    super::component::list_nav(&key, self.sel[self.list], n, true).unwrap_or(0)
            }
            KeyCode::Enter => {
                if let Some(q) = self.query_for_selected() {
                    return vec![Action::OpenAsQuery(q)];
                }
            }
            KeyCode::Char('r') => return vec![Action::Spawn(super::component::Job::Schema)],
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::Schema(Ok(o))) => self.overview = Some(o.clone()),
            Action::Done(JobOutput::Schema(Err(e))) => {
                return vec![Action::Error(format!("cannot read the schema: {e}"))];
            }
            Action::Command("Reload schema") => {
                return vec![Action::Spawn(super::component::Job::Schema)];
            }
            _ => {}
        }
        vec![]
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let [head, lists, desc] = Layout::vertical([
            Constraint::Length(4),
            Constraint::Min(5),
            Constraint::Length(4),
        ])
        .areas(area);
        let head_lines = match &self.overview {
            None => vec![Line::styled("loading the schema…", theme::dim())],
            Some(o) => vec![
                Line::from(vec![
                    Span::styled("PRIMER ", theme::accent()),
                    Span::styled(o.self_name.clone(), theme::title()),
                    Span::styled(
                        format!(
                            "   {} concepts · {} propositions · {} domains",
                            o.concepts,
                            o.propositions,
                            o.domains.len()
                        ),
                        theme::dim(),
                    ),
                ]),
                Line::raw(o.self_persona.clone()),
            ],
        };
        f.render_widget(
            Paragraph::new(head_lines).wrap(Wrap { trim: true }).block(
                Block::default()
                    .borders(Borders::BOTTOM)
                    .border_style(theme::border(false)),
            ),
            head,
        );
        let [a, b, c] = Layout::horizontal([
            Constraint::Percentage(30),
            Constraint::Percentage(35),
            Constraint::Percentage(35),
        ])
        .areas(lists);
        self.render_list(f, a, 0, "domains · members");
        self.render_list(f, b, 1, "concept types · instances");
        self.render_list(f, c, 2, "predicates · links");
        let d = self
            .items(self.list)
            .get(self.sel[self.list])
            .map(|t| format!("{}: {}", t.name, t.description))
            .unwrap_or_default();
        f.render_widget(
            Paragraph::new(d).wrap(Wrap { trim: true }).block(
                Block::default()
                    .borders(Borders::TOP)
                    .border_style(theme::border(false)),
            ),
            desc,
        );
    }
}
