//! The query workbench: a KIP editor with highlighting, bracket matching
//! and completion, a parameters editor, history, and the result table.

use super::component::{Action, Component, Hint, Job, JobOutput, ListFilter, hint};
use super::highlight;
use super::results::{self, ResultTable, cell_text, table};
use super::theme;
use crate::engine::overview::HistoryEntry;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row, Table, Wrap};
use ratatui_textarea::{CursorMove, TextArea};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::time::{Duration, Instant};

mod render;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Editor,
    Params,
    Results,
}

#[derive(Debug, Clone)]
pub enum Outcome {
    Table {
        table: ResultTable,
        elapsed: Duration,
        next_cursor: Option<String>,
        dry_run: bool,
        kind: &'static str,
        /// What a write did or would do: "would create 2, update 1".
        summary: Option<String>,
    },
    Error {
        code: String,
        message: String,
        hint: String,
    },
}

enum Popup {
    None,
    Detail {
        text: String,
        scroll: u16,
    },
    History {
        filter: String,
        selected: usize,
    },
    Complete {
        items: Vec<String>,
        selected: usize,
        prefix_len: usize,
    },
    /// Where to write the results: a path to edit; Enter writes, asking
    /// first when the file exists.
    Export {
        csv: bool,
        path: String,
        /// The file exists and Enter was pressed once: the next Enter
        /// replaces it.
        overwrite: bool,
        error: Option<String>,
    },
}

pub struct Workbench {
    pub editor: TextArea<'static>,
    pub params: TextArea<'static>,
    pub focus: Focus,
    show_params: bool,
    running: Option<Instant>,
    spinner: usize,
    pub outcome: Option<Outcome>,
    last_text: String,
    last_params: Map<String, Value>,
    row: usize,
    row_offset: usize,
    col: usize,
    popup: Popup,
    history: Vec<HistoryEntry>,
    types: HashSet<String>,
    predicates: HashSet<String>,
    /// Where the completion list opens: cursor x, the row below, the
    /// editor's right edge.
    complete_at: (u16, u16, u16),
    /// The text before and after the last whole replacement, for Ctrl+Z.
    replaced: Option<(String, String)>,
    scroll: (usize, usize),
    pub last_copy: Option<String>,
    pub last_export: Option<String>,
    /// The last live check: (text, parameters text, verdict).
    checked: Option<(String, String, Check)>,
    results_height: usize,
    /// `/` in the results: rows whose cells hold the words.
    filter: ListFilter,
}

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The editor's text checked as it is typed: what running it would parse to.
#[derive(Debug, Clone, PartialEq)]
enum Check {
    Empty,
    /// Too long to check on every keystroke; running it still checks it.
    Unchecked,
    Ok(&'static str),
    Err {
        code: String,
        line: Option<usize>,
        column: Option<usize>,
    },
}

/// Texts longer than this are checked when run, not as they are typed.
const LIVE_CHECK_MAX: usize = 64 * 1024;

fn check(text: &str, params: &Map<String, Value>) -> Check {
    if text.trim().is_empty() {
        return Check::Empty;
    }
    if text.len() > LIVE_CHECK_MAX {
        return Check::Unchecked;
    }
    match crate::kip::parse(text, params) {
        Ok(c) => Check::Ok(c.kind()),
        Err(e) => Check::Err {
            code: e.code.to_string(),
            line: e.line,
            column: e.column,
        },
    }
}

fn new_area(lines: Vec<String>) -> TextArea<'static> {
    let mut t = TextArea::new(lines);
    t.set_tab_length(2);
    t
}

impl Workbench {
    pub fn new(initial: &str) -> Self {
        let lines: Vec<String> = initial.lines().map(str::to_string).collect();
        let mut editor = new_area(if lines.is_empty() {
            vec![String::new()]
        } else {
            lines
        });
        editor.move_cursor(CursorMove::Bottom);
        editor.move_cursor(CursorMove::End);
        Workbench {
            editor,
            params: new_area(vec!["{}".into()]),
            focus: Focus::Editor,
            show_params: false,
            running: None,
            spinner: 0,
            outcome: None,
            last_text: String::new(),
            last_params: Map::new(),
            row: 0,
            row_offset: 0,
            col: 0,
            popup: Popup::None,
            history: Vec::new(),
            types: HashSet::new(),
            predicates: HashSet::new(),
            complete_at: (0, 0, 0),
            replaced: None,
            scroll: (0, 0),
            last_copy: None,
            last_export: None,
            results_height: 10,
            checked: None,
            filter: ListFilter::default(),
        }
    }

    /// The live check of the editor's text, redone only when the text or
    /// the parameters changed since the last frame.
    fn live_check(&mut self) -> Check {
        let text = self.text();
        let params = self.params.lines().join("\n");
        if let Some((t, p, c)) = &self.checked
            && *t == text
            && *p == params
        {
            return c.clone();
        }
        let c = check(&text, &self.parse_params().unwrap_or_default());
        self.checked = Some((text, params, c.clone()));
        c
    }

    pub fn set_schema(&mut self, types: Vec<String>, predicates: Vec<String>) {
        self.types = types.into_iter().collect();
        self.predicates = predicates.into_iter().collect();
    }

    pub fn set_text(&mut self, text: &str) {
        self.editor = new_area(text.lines().map(str::to_string).collect());
        self.editor.move_cursor(CursorMove::Bottom);
        self.editor.move_cursor(CursorMove::End);
        self.focus = Focus::Editor;
    }

    /// Replaces the editor's text the way typing would, so `Ctrl+Z` brings
    /// the old text back; the view starts at the text's first column.
    pub fn replace_text(&mut self, text: &str) {
        let before = self.text();
        self.set_editor_text(text);
        self.replaced = (before != text).then(|| (before, text.to_string()));
    }

    fn set_editor_text(&mut self, text: &str) {
        self.editor.select_all();
        self.editor.cut();
        self.editor.insert_str(text);
        self.editor.move_cursor(CursorMove::Top);
        self.editor.move_cursor(CursorMove::Head);
        self.focus = Focus::Editor;
    }

    pub fn text(&self) -> String {
        self.editor.lines().join("\n")
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    pub fn tick(&mut self) {
        self.spinner = (self.spinner + 1) % SPINNER.len();
    }

    /// The text's `:placeholders`, in order of first use (strings and
    /// comments skipped).
    fn placeholders(&self) -> Vec<String> {
        let none = HashSet::new();
        let mut out: Vec<String> = Vec::new();
        for line in self.editor.lines() {
            for (a, b, tok) in highlight::tokenize(line, &none, &none) {
                if tok == highlight::Tok::Param {
                    let name = line[a + 1..b].to_string();
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
            }
        }
        out
    }

    /// Placeholders the parameters give no value (all of them when the
    /// parameters are not a JSON object).
    fn missing_params(&self) -> Vec<String> {
        let given = self.parse_params().unwrap_or_default();
        self.placeholders()
            .into_iter()
            .filter(|p| !given.contains_key(p))
            .collect()
    }

    /// Opens the parameters with a template: every placeholder the text
    /// uses and the parameters lack, with an empty value to fill in.
    fn params_template(&mut self) -> Option<Action> {
        let missing = self.missing_params();
        if missing.is_empty() {
            return None;
        }
        let Ok(mut given) = self.parse_params() else {
            return Some(Action::Status(
                "the parameters are not a JSON object: fix them to add the missing ones".into(),
            ));
        };
        for m in &missing {
            given.insert(m.clone(), Value::String(String::new()));
        }
        let text = serde_json::to_string_pretty(&Value::Object(given)).unwrap_or_default();
        self.params = new_area(text.lines().map(str::to_string).collect());
        // the cursor inside the first empty value
        if let Some((r, line)) = self
            .params
            .lines()
            .iter()
            .enumerate()
            .find(|(_, l)| l.contains(&format!("\"{}\": \"\"", missing[0])))
        {
            let c = line.rfind("\"\"").map_or(0, |c| c + 1);
            self.params
                .move_cursor(CursorMove::Jump(r as u16, c as u16));
        }
        Some(Action::Status(format!(
            "added {} to the parameters: give {} a value",
            missing
                .iter()
                .map(|m| format!(":{m}"))
                .collect::<Vec<_>>()
                .join(", "),
            if missing.len() == 1 { "it" } else { "each" }
        )))
    }

    fn parse_params(&self) -> Result<Map<String, Value>, String> {
        let text = self.params.lines().join("\n");
        if text.trim().is_empty() {
            return Ok(Map::new());
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err("parameters must be a JSON object".into()),
            Err(e) => Err(format!("parameters are not valid JSON: {e}")),
        }
    }

    /// Puts a command in the editor; a read runs at once.
    fn open(&mut self, text: &str) -> Vec<Action> {
        let before = self.text();
        self.replace_text(text);
        let back = if before.trim().is_empty() || before == text {
            ""
        } else {
            "; Ctrl+Z brings the previous text back"
        };
        // a read runs at once: what is below is then its answer
        // (after the comment lines that say what it reads)
        let body = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("//"))
            .unwrap_or("")
            .to_uppercase();
        let read = ["FIND", "SEARCH", "DESCRIBE"]
            .iter()
            .any(|k| body.starts_with(k));
        if read {
            let mut out = self.run(false, None);
            out.push(Action::Status(format!("loaded and run{back}")));
            out
        } else {
            self.outcome = None;
            vec![Action::Status(format!(
                "loaded (not run: F5 runs it){back}"
            ))]
        }
    }

    fn run(&mut self, dry_run: bool, page: Option<String>) -> Vec<Action> {
        if self.running.is_some() {
            return vec![Action::Status(
                "a query is already running (Esc cancels it)".into(),
            )];
        }
        let (text, params) = if page.is_some() {
            (self.last_text.clone(), self.last_params.clone())
        } else {
            let params = match self.parse_params() {
                Ok(p) => p,
                Err(e) => {
                    self.outcome = Some(Outcome::Error {
                        code: "params".into(),
                        message: e,
                        hint: "Edit the parameters (F3).".into(),
                    });
                    return vec![];
                }
            };
            (self.text(), params)
        };
        if text.trim().is_empty() {
            return vec![Action::Status("type a KIP command first".into())];
        }
        self.running = Some(Instant::now());
        self.popup = Popup::None;
        let mut out = vec![Action::Spawn(Job::Query {
            text: text.clone(),
            params: params.clone(),
            dry_run,
            page,
        })];
        if !dry_run {
            out.push(Action::Spawn(Job::SaveHistory {
                text,
                params: Value::Object(params).to_string(),
            }));
        }
        out
    }

    /// The result rows the `/` filter lets through, as indices.
    fn shown(&self) -> Vec<usize> {
        match &self.outcome {
            Some(Outcome::Table { table, .. }) => table
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    !self.filter.active()
                        || self
                            .filter
                            .matches(&r.iter().map(cell_text).collect::<Vec<_>>().join(" "))
                })
                .map(|(i, _)| i)
                .collect(),
            _ => Vec::new(),
        }
    }

    fn selected_row(&self) -> Option<&Vec<Value>> {
        let i = *self.shown().get(self.row)?;
        match &self.outcome {
            Some(Outcome::Table { table, .. }) => table.rows.get(i),
            _ => None,
        }
    }

    fn row_count(&self) -> usize {
        self.shown().len()
    }

    fn col_count(&self) -> usize {
        match &self.outcome {
            Some(Outcome::Table { table, .. }) => table.headers.len(),
            _ => 0,
        }
    }

    fn move_row(&mut self, delta: isize) {
        let n = self.row_count();
        if n == 0 {
            return;
        }
        let r = (self.row as isize + delta).clamp(0, n as isize - 1);
        self.row = r as usize;
    }

    /// Asks where to write the results (a file name in the directory of
    /// the last export, or the current one).
    fn export(&mut self, csv: bool) -> Vec<Action> {
        if !matches!(self.outcome, Some(Outcome::Table { .. })) {
            return vec![Action::Status(
                "nothing to export: run a query first".into(),
            )];
        }
        let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
        let name = format!("somnus-result-{stamp}.{}", if csv { "csv" } else { "json" });
        let dir = self
            .last_export
            .as_deref()
            .and_then(|p| std::path::Path::new(p).parent().map(|d| d.to_path_buf()))
            .filter(|d| !d.as_os_str().is_empty())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        self.popup = Popup::Export {
            csv,
            path: dir.join(name).to_string_lossy().into_owned(),
            overwrite: false,
            error: None,
        };
        vec![]
    }

    /// Writes the results where the export popup says; Err keeps the popup
    /// open with the reason.
    fn write_export(
        &mut self,
        csv: bool,
        path: &str,
        overwrite: bool,
    ) -> Result<Vec<Action>, (String, bool)> {
        let Some(Outcome::Table { table, .. }) = &self.outcome else {
            return Err(("the results are gone: run the query again".into(), false));
        };
        let path = path.trim();
        if path.is_empty() {
            return Err(("type a file name".into(), false));
        }
        let expanded = match path.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|h| std::path::Path::new(&h).join(rest))
                .unwrap_or_else(|| path.into()),
            None => std::path::PathBuf::from(path),
        };
        if expanded.is_dir() {
            return Err((
                format!("{} is a directory: add a file name", expanded.display()),
                false,
            ));
        }
        if let Some(dir) = expanded.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            return Err((format!("no directory {}", dir.display()), false));
        }
        if expanded.exists() && !overwrite {
            return Err((
                format!(
                    "{} exists: Enter again replaces it, or change the name",
                    expanded.display()
                ),
                true,
            ));
        }
        // what the screen shows: the rows the filter lets through
        let table = ResultTable {
            headers: table.headers.clone(),
            rows: self
                .shown()
                .into_iter()
                .filter_map(|i| table.rows.get(i).cloned())
                .collect(),
        };
        let body = if csv {
            table.to_csv()
        } else {
            serde_json::to_string_pretty(&table.to_json()).unwrap_or_default()
        };
        let rows = table.rows.len();
        // written beside the target and renamed, so a failure leaves no half file
        let tmp = expanded.with_extension(format!(
            "{}.part",
            expanded.extension().and_then(|e| e.to_str()).unwrap_or("")
        ));
        std::fs::write(&tmp, body)
            .and_then(|()| std::fs::rename(&tmp, &expanded))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                (format!("cannot write {}: {e}", expanded.display()), false)
            })?;
        let shown = expanded.display().to_string();
        self.last_export = Some(shown.clone());
        Ok(vec![Action::Status(format!(
            "exported {rows} rows to {shown}"
        ))])
    }

    fn history_matches(&self, filter: &str) -> Vec<usize> {
        let m = SkimMatcherV2::default();
        let mut scored: Vec<(i64, usize)> = self
            .history
            .iter()
            .enumerate()
            .filter_map(|(i, h)| {
                if filter.is_empty() {
                    Some((0, i))
                } else {
                    m.fuzzy_match(&h.command, filter).map(|s| (s, i))
                }
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, i)| i).collect()
    }

    /// The word being typed before the cursor, and completion candidates.
    fn completion(&self) -> (usize, Vec<String>) {
        let ratatui_textarea::DataCursor(row, col) = self.editor.cursor();
        let line = &self.editor.lines()[row];
        let before: String = line.chars().take(col).collect();
        let word: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        let in_string = before.matches('"').count() % 2 == 1;
        if word.is_empty() {
            // an empty string offers what belongs there: a type after
            // `type:`, a predicate where a link's predicate goes
            if !in_string || !before.ends_with('"') {
                return (0, vec![]);
            }
            let lead = before[..before.len() - 1].trim_end();
            let mut names: Vec<String> = if lead.ends_with("type:") {
                self.types.iter().cloned().collect()
            } else if lead.ends_with(',') || lead.ends_with('(') {
                self.predicates.iter().cloned().collect()
            } else {
                vec![]
            };
            names.sort();
            names.dedup();
            return (0, names);
        }
        let mut cands: Vec<String> = Vec::new();
        if !in_string {
            cands.extend(
                highlight::keywords()
                    .iter()
                    .filter(|k| k.starts_with(&word) && *k != &word)
                    .cloned(),
            );
        }
        let mut names: Vec<&String> = self
            .types
            .iter()
            .chain(self.predicates.iter())
            .filter(|n| n.starts_with(&word) && *n != &word)
            .collect();
        names.sort();
        cands.extend(names.into_iter().cloned());
        cands.dedup();
        (word.chars().count(), cands)
    }

    /// Whether the cursor is inside a string literal.
    fn in_string(&self) -> bool {
        let ratatui_textarea::DataCursor(row, col) = self.editor.cursor();
        let line = &self.editor.lines()[row];
        let before: String = line.chars().take(col).collect();
        before.matches('"').count() % 2 == 1
    }

    /// The completion list for the word as it is now, open while it lists
    /// something (none: closed).
    fn complete_again(&mut self, keep: Option<String>) {
        let (len, cands) = self.completion();
        if cands.is_empty() {
            return;
        }
        let selected = keep
            .and_then(|k| cands.iter().position(|c| *c == k))
            .unwrap_or(0);
        self.popup = Popup::Complete {
            items: cands,
            selected,
            prefix_len: len,
        };
    }

    fn accept_completion(&mut self, item: &str, prefix_len: usize) {
        let rest: String = item.chars().skip(prefix_len).collect();
        self.editor.insert_str(rest);
    }

    fn editor_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if key.code == KeyCode::Tab && key.modifiers.is_empty() {
            let (len, cands) = self.completion();
            match cands.len() {
                // inside a string Tab never adds spaces to a name
                0 if self.in_string() => {}
                0 => {
                    self.editor.insert_str("  ");
                }
                1 => self.accept_completion(&cands[0], len),
                _ => {
                    self.popup = Popup::Complete {
                        items: cands,
                        selected: 0,
                        prefix_len: len,
                    }
                }
            }
            return vec![];
        }
        self.editor.input(key);
        vec![]
    }

    fn results_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let page = self.results_height.max(1) as isize;
        if self.filter.key(&key) {
            self.row = 0;
            self.row_offset = 0;
            return vec![];
        }
        match key.code {
            KeyCode::Char('/') => self.filter.typing = true,
            KeyCode::Down | KeyCode::Char('j') => self.move_row(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_row(-1),
            KeyCode::PageDown => self.move_row(page),
            KeyCode::PageUp => self.move_row(-page),
            KeyCode::Char('d') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.move_row(page)
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.move_row(-page)
            }
            KeyCode::Home | KeyCode::Char('g') => self.row = 0,
            KeyCode::End | KeyCode::Char('G') => self.row = self.row_count().saturating_sub(1),
            KeyCode::Right | KeyCode::Char('l') => {
                self.col = (self.col + 1).min(self.col_count().saturating_sub(1))
            }
            KeyCode::Left | KeyCode::Char('h') => self.col = self.col.saturating_sub(1),
            KeyCode::Enter => {
                let text = match (&self.outcome, self.selected_row()) {
                    (Some(Outcome::Table { .. }), Some(r)) => {
                        serde_json::to_string_pretty(r.get(self.col).unwrap_or(&Value::Null))
                            .unwrap_or_default()
                    }
                    _ => return vec![],
                };
                self.popup = Popup::Detail { text, scroll: 0 };
            }
            KeyCode::Char('y') => {
                if let Some(v) = self.selected_row().and_then(|r| r.get(self.col)).cloned() {
                    let s = v.to_string();
                    self.last_copy = Some(s.clone());
                    return vec![Action::Copy(s)];
                }
            }
            KeyCode::Char('Y') => {
                if let Some(Outcome::Table { table, .. }) = &self.outcome
                    && let Some(r) = self.selected_row()
                {
                    let mut m = Map::new();
                    for (h, v) in table.headers.iter().zip(r.iter()) {
                        m.insert(h.clone(), v.clone());
                    }
                    let s = Value::Object(m).to_string();
                    self.last_copy = Some(s.clone());
                    return vec![Action::Copy(s)];
                }
            }
            KeyCode::Char('n') => return self.next_page(),
            KeyCode::Char('w') => return self.why_row(),
            KeyCode::Char('e') => return self.export(false),
            KeyCode::Char('E') => return self.export(true),
            _ => {}
        }
        vec![]
    }

    /// Explains the element the selected row holds: the cell under the
    /// cursor if it is one, else the first cell that is.
    fn why_row(&self) -> Vec<Action> {
        let Some(row) = self.selected_row() else {
            return vec![Action::Status("no row selected".into())];
        };
        let order = std::iter::once(self.col).chain((0..row.len()).filter(|c| *c != self.col));
        for c in order {
            if let Some(id) = row.get(c).and_then(element_of) {
                return vec![Action::Spawn(Job::WhyOf(id))];
            }
        }
        vec![Action::Status(
            "this row holds no element: FIND the variable itself (?n, not ?n.name) to explain it"
                .into(),
        )]
    }

    fn next_page(&mut self) -> Vec<Action> {
        match &self.outcome {
            Some(Outcome::Table {
                next_cursor: Some(c),
                ..
            }) => {
                let c = c.clone();
                self.run(false, Some(c))
            }
            _ => vec![Action::Status("no further page".into())],
        }
    }

    fn cycle_focus(&mut self) {
        self.focus = match self.focus {
            Focus::Editor if self.show_params => Focus::Params,
            Focus::Editor | Focus::Params => Focus::Results,
            Focus::Results => Focus::Editor,
        };
    }
}

pub fn centered(area: Rect, pw: u16, ph: u16) -> Rect {
    let w = (area.width * pw / 100).max(20).min(area.width);
    let h = (area.height * ph / 100).max(5).min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn is_run(key: &KeyEvent) -> bool {
    key.code == KeyCode::F(5)
        || (key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('r') | KeyCode::Enter))
}

impl Component for Workbench {
    fn hints(&self) -> Vec<Hint> {
        match &self.popup {
            Popup::Detail { .. } => {
                return vec![
                    hint("↑↓", "scroll"),
                    hint("y", "copy"),
                    hint("Esc", "close"),
                ];
            }
            Popup::History { .. } => {
                return vec![
                    hint("type", "filter"),
                    hint("↑↓", "select"),
                    hint("Enter", "load"),
                    hint("Esc", "close"),
                ];
            }
            Popup::Complete { .. } => {
                return vec![
                    hint("↑↓", "select"),
                    hint("Enter", "insert"),
                    hint("Esc", "close"),
                ];
            }
            Popup::Export { .. } => {
                return vec![hint("Enter", "write"), hint("Esc", "cancel")];
            }
            Popup::None => {}
        }
        if self.running.is_some() {
            return vec![hint("Esc", "cancel query")];
        }
        if self.focus == Focus::Results && self.filter.typing {
            return vec![hint("Enter", "keep filter"), hint("Esc", "clear filter")];
        }
        let mut v = vec![hint("F5", "run"), hint("F6", "dry run")];
        match self.focus {
            Focus::Editor => v.extend([
                hint("Tab", "complete"),
                hint("F3", "params"),
                hint("F7", "history"),
                hint("F2", "results"),
                hint("F4", "clear"),
                hint("^Z", "undo"),
            ]),
            Focus::Params => v.extend([hint("F3", "hide params"), hint("F2", "results")]),
            Focus::Results => v.extend([
                hint("↑↓←→", "move"),
                hint("Enter", "open cell"),
                hint("y/Y", "copy cell/row"),
                hint("/", "filter"),
                hint("n", "next page"),
                hint("w", "why"),
                hint("e/E", "export JSON/CSV"),
                hint("F2", "editor"),
            ]),
        }
        v
    }

    fn captures_text(&self) -> bool {
        matches!(self.focus, Focus::Editor | Focus::Params)
            || matches!(self.popup, Popup::History { .. } | Popup::Export { .. })
            || (self.focus == Focus::Results && self.filter.typing)
    }

    fn commands(&self) -> Vec<&'static str> {
        vec![
            "Run query",
            "Dry run",
            "Next page",
            "Query history",
            "Toggle parameters",
            "Export results as JSON",
            "Export results as CSV",
            "Copy selected row",
            "Explain the selected row's element",
        ]
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        // popups first
        match &mut self.popup {
            Popup::Detail { text, scroll } => {
                match key.code {
                    KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => self.popup = Popup::None,
                    KeyCode::Down | KeyCode::Char('j') => *scroll = scroll.saturating_add(1),
                    KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
                    KeyCode::PageDown => *scroll = scroll.saturating_add(10),
                    KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                    KeyCode::Char('y') => {
                        let t = text.clone();
                        self.last_copy = Some(t.clone());
                        return vec![Action::Copy(t)];
                    }
                    _ => {}
                }
                return vec![];
            }
            Popup::History { filter, selected } => {
                match key.code {
                    KeyCode::Esc => self.popup = Popup::None,
                    KeyCode::Down => *selected += 1,
                    KeyCode::Up => *selected = selected.saturating_sub(1),
                    KeyCode::Backspace => {
                        filter.pop();
                        *selected = 0;
                    }
                    KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                        filter.push(c);
                        *selected = 0;
                    }
                    KeyCode::Enter => {
                        let (f, s) = (filter.clone(), *selected);
                        let m = self.history_matches(&f);
                        if let Some(&hi) = m.get(s.min(m.len().saturating_sub(1))) {
                            let h = self.history[hi].clone();
                            self.set_text(&h.command);
                            self.params =
                                new_area(h.parameters.lines().map(str::to_string).collect());
                            self.show_params = h.parameters.trim() != "{}";
                        }
                        self.popup = Popup::None;
                    }
                    _ => {}
                }
                return vec![];
            }
            Popup::Complete {
                items,
                selected,
                prefix_len,
            } => {
                match key.code {
                    KeyCode::Esc => self.popup = Popup::None,
                    KeyCode::Down => *selected = (*selected + 1).min(items.len().saturating_sub(1)),
                    KeyCode::Up => *selected = selected.saturating_sub(1),
                    KeyCode::Enter | KeyCode::Tab => {
                        let (item, len) = (items[*selected].clone(), *prefix_len);
                        self.popup = Popup::None;
                        self.accept_completion(&item, len);
                    }
                    // typing on narrows the list (Backspace widens it),
                    // the selection staying on its item while it is listed
                    KeyCode::Char(c)
                        if (key.modifiers - KeyModifiers::SHIFT).is_empty()
                            && (c.is_alphanumeric() || c == '_' || c == '$') =>
                    {
                        let keep = items.get(*selected).cloned();
                        self.popup = Popup::None;
                        self.editor.input(key);
                        self.complete_again(keep);
                    }
                    KeyCode::Backspace => {
                        let keep = items.get(*selected).cloned();
                        self.popup = Popup::None;
                        self.editor.input(key);
                        self.complete_again(keep);
                    }
                    _ => {
                        self.popup = Popup::None;
                        return self.handle_key(key);
                    }
                }
                return vec![];
            }
            Popup::Export {
                csv,
                path,
                overwrite,
                error,
            } => {
                match key.code {
                    KeyCode::Esc => self.popup = Popup::None,
                    KeyCode::Enter => {
                        let (c, p, o) = (*csv, path.clone(), *overwrite);
                        match self.write_export(c, &p, o) {
                            Ok(out) => {
                                self.popup = Popup::None;
                                return out;
                            }
                            Err((why, ask)) => {
                                if let Popup::Export {
                                    overwrite, error, ..
                                } = &mut self.popup
                                {
                                    *overwrite = ask;
                                    *error = Some(why);
                                }
                            }
                        }
                    }
                    KeyCode::Backspace => {
                        path.pop();
                        *overwrite = false;
                        *error = None;
                    }
                    KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        path.clear();
                        *overwrite = false;
                        *error = None;
                    }
                    KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                        path.push(c);
                        *overwrite = false;
                        *error = None;
                    }
                    _ => {}
                }
                return vec![];
            }
            Popup::None => {}
        }
        if self.focus == Focus::Results && self.filter.typing {
            return self.results_key(key);
        }
        if key.code == KeyCode::Esc {
            if self.running.is_some() {
                return vec![Action::Cancel];
            }
            if self.focus == Focus::Results && self.filter.active() {
                self.filter = ListFilter::default();
                self.row = 0;
                self.row_offset = 0;
                return vec![Action::Status("filter cleared".into())];
            }
            if self.focus != Focus::Editor {
                self.focus = Focus::Editor;
            }
            return vec![];
        }
        if is_run(&key) {
            return self.run(false, None);
        }
        match key.code {
            KeyCode::F(6) => return self.run(true, None),
            KeyCode::F(4) => {
                if self.text().is_empty() {
                    return vec![];
                }
                self.replace_text("");
                return vec![Action::Status("editor cleared (Ctrl+Z undoes)".into())];
            }
            KeyCode::Char('z') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                if self.focus == Focus::Editor {
                    // a whole replacement (a loaded query, F4) comes back
                    // in one step, while the text is as it left it
                    match self.replaced.take() {
                        Some((before, after)) if self.text() == after => {
                            self.set_editor_text(&before);
                            return vec![Action::Status("previous text restored".into())];
                        }
                        _ => {
                            self.editor.undo();
                        }
                    }
                } else if self.focus == Focus::Params {
                    self.params.undo();
                }
                return vec![];
            }
            KeyCode::F(2) => {
                self.cycle_focus();
                return vec![];
            }
            KeyCode::F(3) => {
                self.show_params = !self.show_params;
                self.focus = if self.show_params {
                    Focus::Params
                } else {
                    Focus::Editor
                };
                if self.show_params {
                    return self.params_template().into_iter().collect();
                }
                return vec![];
            }
            KeyCode::F(7) => {
                self.popup = Popup::History {
                    filter: String::new(),
                    selected: 0,
                };
                return vec![Action::Spawn(Job::History)];
            }
            _ => {}
        }
        match self.focus {
            Focus::Editor => self.editor_key(key),
            Focus::Params => {
                self.params.input(key);
                vec![]
            }
            Focus::Results => self.results_key(key),
        }
    }

    fn handle_paste(&mut self, text: &str) -> Vec<Action> {
        let text = super::component::pasted_lines(text);
        match (&mut self.popup, self.focus) {
            (Popup::History { filter, selected }, _) => {
                filter.push_str(&super::component::one_line(&text));
                *selected = 0;
            }
            (
                Popup::Export {
                    path,
                    overwrite,
                    error,
                    ..
                },
                _,
            ) => {
                path.push_str(super::component::one_line(&text).trim());
                *overwrite = false;
                *error = None;
            }
            (Popup::None, Focus::Editor) => {
                self.editor.insert_str(text);
            }
            (Popup::None, Focus::Params) => {
                self.params.insert_str(text);
            }
            _ => {}
        }
        vec![]
    }

    fn handle_mouse(&mut self, ev: MouseEvent) -> Vec<Action> {
        match ev.kind {
            MouseEventKind::ScrollDown => self.move_row(3),
            MouseEventKind::ScrollUp => self.move_row(-3),
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::Query {
                text,
                params,
                dry_run,
                page,
                response,
                elapsed,
            }) => {
                self.running = None;
                if let Some(err) = response.get("error") {
                    let code = err["code"].as_str().unwrap_or("error").to_string();
                    let message = err["message"].as_str().unwrap_or("").to_string();
                    let mut hint = err["hint"].as_str().unwrap_or("").to_string();
                    if message.contains("is not supplied") {
                        hint = "Press F3: the parameters open with every placeholder the text uses and lacks a value for, ready to fill in.".into();
                    }
                    if let (Some(l), Some(c)) = (err["line"].as_u64(), err["column"].as_u64()) {
                        // caret: put the cursor where the error is
                        let rows = self.editor.lines().len();
                        let r = (l as usize).saturating_sub(1).min(rows.saturating_sub(1));
                        self.editor.move_cursor(CursorMove::Jump(
                            r as u16,
                            (c as usize).saturating_sub(1) as u16,
                        ));
                        self.focus = Focus::Editor;
                    }
                    self.outcome = Some(Outcome::Error {
                        code,
                        message,
                        hint,
                    });
                } else {
                    let result = response.get("result").cloned().unwrap_or(Value::Null);
                    let kind = crate::kip::parse(text, params)
                        .map(|c| c.kind())
                        .unwrap_or("result");
                    // a write lists the elements it changed (or would)
                    let effects = response.get("effects");
                    let summary = match (effects, response.get("search")) {
                        (Some(e), _) => Some(results::effects_summary(e, *dry_run)),
                        // how a SEARCH ranked: by meaning too, or why not
                        (None, Some(s)) => Some(results::search_summary(
                            result.as_array().map_or(0, Vec::len),
                            s,
                        )),
                        _ => None,
                    };
                    let t = match effects {
                        Some(e) => results::effects_table(e),
                        None => table(text, params, &result),
                    };
                    let next_cursor = response
                        .get("next_cursor")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    if *page && let Some(Outcome::Table { table: old, .. }) = &mut self.outcome {
                        let mut merged = old.clone();
                        merged.rows.extend(t.rows);
                        self.outcome = Some(Outcome::Table {
                            table: merged,
                            elapsed: *elapsed,
                            next_cursor,
                            dry_run: *dry_run,
                            kind,
                            summary,
                        });
                        return vec![];
                    }
                    self.outcome = Some(Outcome::Table {
                        table: t,
                        elapsed: *elapsed,
                        next_cursor,
                        dry_run: *dry_run,
                        kind,
                        summary,
                    });
                    self.row = 0;
                    self.row_offset = 0;
                    self.col = 0;
                    // a new answer starts unfiltered
                    self.filter = ListFilter::default();
                }
                if !*page {
                    self.last_text = text.clone();
                    self.last_params = params.clone();
                }
                vec![]
            }
            Action::Done(JobOutput::History(h)) => {
                self.history = h.clone();
                vec![]
            }
            Action::Cancel => {
                // the engine answers KIP_4001 when interrupted; keep the spinner until then
                vec![]
            }
            Action::Rerun { text, params } => {
                let shown = serde_json::to_string_pretty(&Value::Object(params.clone()))
                    .unwrap_or_else(|_| "{}".into());
                self.params = new_area(shown.lines().map(str::to_string).collect());
                self.show_params = !params.is_empty();
                self.open(text)
            }
            Action::OpenAsQuery(text) => self.open(text),
            Action::Command("Run query") => self.run(false, None),
            Action::Command("Dry run") => self.run(true, None),
            Action::Command("Next page") => self.next_page(),
            Action::Command("Query history") => {
                self.popup = Popup::History {
                    filter: String::new(),
                    selected: 0,
                };
                vec![Action::Spawn(Job::History)]
            }
            Action::Command("Toggle parameters") => {
                self.show_params = !self.show_params;
                vec![]
            }
            Action::Command("Export results as JSON") => self.export(false),
            Action::Command("Export results as CSV") => self.export(true),
            Action::Command("Copy selected row") => {
                self.results_key(KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::NONE))
            }
            Action::Command("Explain the selected row's element") => self.why_row(),
            _ => vec![],
        }
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let ed_h = (self.editor.lines().len() as u16 + 2).clamp(6, (area.height / 2).max(6));
        let [top, status, bottom] = Layout::vertical([
            Constraint::Length(ed_h),
            Constraint::Length(1),
            Constraint::Min(3),
        ])
        .areas(area);
        if self.show_params {
            let [l, r] =
                Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)])
                    .areas(top);
            self.render_editor(f, l);
            self.render_params(f, r);
        } else {
            self.render_editor(f, top);
        }
        f.render_widget(Paragraph::new(self.status_line()), status);
        self.render_results(f, bottom);
        self.render_completion(f);
        self.render_popup(f, area);
    }
}

/// The element a result cell is or names: a node or link object's `id`,
/// or a string that is an element id (`C:12`, `P:40:treats`).
fn element_of(v: &Value) -> Option<String> {
    let is_id = |s: &str| {
        let mut parts = s.splitn(3, ':');
        matches!(parts.next(), Some("C") | Some("P"))
            && parts
                .next()
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    match v {
        Value::Object(m) => m
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| is_id(s))
            .map(str::to_string),
        Value::String(s) if is_id(s) => Some(s.clone()),
        _ => None,
    }
}
