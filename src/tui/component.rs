//! The one component trait every pane implements, and the one action enum
//! they speak.

use crate::engine::overview::{ConceptEntry, HistoryEntry, Neighbourhood, SchemaOverview};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use serde_json::{Map, Value};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Query,
    Graph,
    Schema,
    Reflections,
    Conflicts,
    Sleep,
    Health,
    Audit,
    Traffic,
}

impl Tab {
    pub const ALL: [Tab; 9] = [
        Tab::Query,
        Tab::Graph,
        Tab::Schema,
        Tab::Reflections,
        Tab::Conflicts,
        Tab::Sleep,
        Tab::Health,
        Tab::Audit,
        Tab::Traffic,
    ];

    /// The tab a digit key names (`'1'` is the first), if any.
    pub fn numbered(c: char) -> Option<Tab> {
        let i = c.to_digit(10)? as usize;
        Tab::ALL.get(i.checked_sub(1)?).copied()
    }
    pub fn title(self) -> &'static str {
        match self {
            Tab::Query => "Query",
            Tab::Graph => "Graph",
            Tab::Schema => "Schema",
            Tab::Reflections => "Reflections",
            Tab::Conflicts => "Conflicts",
            Tab::Sleep => "Sleep",
            Tab::Health => "Health",
            Tab::Audit => "Audit",
            Tab::Traffic => "Traffic",
        }
    }
}

/// Stops a running sleep cycle or import (shared by the console and the
/// job).
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(pub std::sync::Arc<std::sync::atomic::AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl PartialEq for CancelFlag {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// An operator's decision on a reflection proposal (`items: None`: every
/// undecided item).
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Approve {
        id: i64,
        items: Option<Vec<i64>>,
        /// Items whose KIP the operator rewrote before approving.
        edits: std::collections::BTreeMap<i64, String>,
    },
    Reject {
        id: i64,
        items: Option<Vec<i64>>,
        reason: String,
    },
}

/// Work for the engine, run off the UI thread.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    Query {
        text: String,
        params: Map<String, Value>,
        dry_run: bool,
        page: Option<String>,
    },
    Schema,
    Index,
    Neighbourhood(i64),
    History,
    /// Has another connection committed since we last looked?
    Poll,
    SaveHistory {
        text: String,
        params: String,
    },
    /// Reflection proposals, newest first.
    Proposals,
    /// What an item's rewrite would change now (rolled back).
    PreviewEdit {
        proposal: i64,
        seq: i64,
        text: String,
        params: Map<String, Value>,
    },
    Decide(Decision),
    /// Which of the agents' recent reads a pending item would answer
    /// differently (run and rolled back).
    Impact {
        proposal: i64,
        seq: i64,
    },
    /// A sleep cycle, reporting progress as it goes.
    Sleep {
        scope: crate::sleep::Scope,
        cancel: CancelFlag,
        /// The cycle's clock (RFC 3339); None: now.
        now: Option<String>,
        params: crate::sleep::Params,
        /// The LLM reasoner (configured from the environment) instead of
        /// the heuristic one.
        llm: bool,
    },
    Runs,
    /// Save the sleep parameters as the memory's own, if the saved ones
    /// are still `base` (what the pane last read; None: never read).
    SaveParams {
        params: crate::sleep::Params,
        base: Option<crate::sleep::Params>,
    },
    RunReport(i64),
    Contradictions,
    Resolve {
        id: i64,
        verdict: crate::sleep::reasoner::Verdict,
    },
    Audit(crate::audit::Filter),
    AuditEntry(i64),
    /// Roll back one entry, or every change of a group still in effect.
    Undo {
        entry: Option<i64>,
        group: Option<String>,
    },
    /// What that undo would change, worked out and rolled back.
    UndoPreview {
        entry: Option<i64>,
        group: Option<String>,
    },
    /// Why an element is as it is, as an operator names it: `C:12`,
    /// `P:40`, `Type:Name`, or a label the sleep cycle noted.
    WhyOf(String),
    /// Why two concepts (`Type:Name`) are or are not one.
    WhyPair(String, String),
    /// The health table now, and what past cycles measured.
    Health {
        now: Option<String>,
    },
    /// Bring a Moltbot or Engram folder in (one audited group).
    Import(ImportJob),
    /// The agents' requests logged after `after` (the newest first; all
    /// the view keeps when None).
    Traffic {
        after: Option<i64>,
    },
    /// The most read and never read elements, and the log's size.
    Usage,
}

/// What the operator asked to import.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportJob {
    pub source: String,
    pub dir: std::path::PathBuf,
    pub user: Option<String>,
    /// An OpenClaw workspace's folders its memory search also covers.
    pub extra: Vec<std::path::PathBuf>,
    pub dry_run: bool,
    pub cancel: CancelFlag,
}

impl ImportJob {
    /// `engram ~/memory/local [--user NAME] [--dry-run]`,
    /// `openclaw ~/.openclaw/workspace [--extra-path knowledge]`, or why
    /// not.
    pub fn parse(line: &str) -> Result<ImportJob, String> {
        let usage = "give a source and a folder: openclaw DIR (or moltbot DIR) or engram DIR (then --user NAME, --extra-path PATH, --dry-run)";
        // words as a shell splits them: `--user "Mira Chen"` is one name,
        // a quoted folder may hold spaces
        let words =
            shlex::split(line.trim()).ok_or_else(|| format!("a quote is not closed: {usage}"))?;
        let mut words = words.into_iter();
        let source = words.next().ok_or(usage)?;
        if !crate::import::SOURCES.contains(&source.as_str()) {
            return Err(format!("`{source}` is not a source somnus reads: {usage}"));
        }
        let mut dry_run = false;
        let mut user = None;
        let mut extra = Vec::new();
        let mut folder = Vec::new();
        let mut words = words.peekable();
        while let Some(w) = words.next() {
            match w.as_str() {
                "--dry-run" => dry_run = true,
                "--extra-path" => match words.next_if(|n| !n.starts_with("--")) {
                    Some(p) => extra.push(crate::import::expand_home(&p)),
                    None => return Err("--extra-path needs a folder or file".into()),
                },
                "--user" => {
                    // the name: the words up to the next option, quoted or
                    // not (`--user Mira Chen`, `--user "Mira Chen"`)
                    let mut name = Vec::new();
                    while let Some(n) = words.next_if(|n| !n.starts_with("--")) {
                        name.push(n);
                    }
                    let name = name.join(" ").trim().to_string();
                    if name.is_empty() {
                        return Err("--user needs a name".into());
                    }
                    user = Some(name);
                }
                w if w.starts_with("--") => {
                    return Err(format!("`{w}` is not an option of import: {usage}"));
                }
                // an unquoted folder with spaces in its name is one folder
                _ => folder.push(w),
            }
        }
        let rest = folder.join(" ");
        if rest.is_empty() {
            return Err(usage.into());
        }
        Ok(ImportJob {
            source: source.to_string(),
            dir: crate::import::expand_home(&rest),
            user,
            extra,
            dry_run,
            cancel: CancelFlag::default(),
        })
    }
}

/// The health table now and what past cycles measured.
pub type Measured = Box<(
    crate::sleep::health::Health,
    Vec<crate::sleep::health::Point>,
)>;

/// An audit entry and its changes.
pub type EntryDetail = Box<(crate::audit::Entry, Vec<crate::audit::Change>)>;

/// An explanation to read: a title and its lines (not cut; the panel
/// wraps them).
#[derive(Debug, Clone, PartialEq)]
pub struct WhyText {
    pub title: String,
    pub lines: Vec<String>,
}

/// What the console asks the operator to type before it explains.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// An element: `C:12`, `P:40`, `Type:Name` or a noted label.
    Element,
    /// The concept to compare with this one (`Type:Name`), or both
    /// (`A / B`) when none is given.
    Pair(Option<String>),
    /// A source and a folder to import.
    Import,
}

/// What came back.
#[derive(Debug, Clone)]
pub enum JobOutput {
    Query {
        text: String,
        params: Map<String, Value>,
        dry_run: bool,
        page: bool,
        response: Value,
        elapsed: Duration,
    },
    Schema(Result<SchemaOverview, String>),
    Index(Result<Vec<ConceptEntry>, String>),
    Neighbourhood(Result<Option<Box<Neighbourhood>>, String>),
    History(Vec<HistoryEntry>),
    Saved,
    /// The memory's data version, and its newest change: `(audit entry,
    /// who and what)` and `(proposal, from whom)`.
    Polled(i64, Option<(i64, String)>, Option<(i64, String)>),
    Proposals(Result<Vec<crate::review::proposals::Proposal>, String>),
    /// An item rewrite's title and changes, or why it can't be previewed.
    EditPreview {
        proposal: i64,
        seq: i64,
        result: Result<(String, Vec<Value>), String>,
    },
    /// What a decision did, or why it was refused.
    Decided(Result<String, String>),
    /// What an undo would change, line by line.
    UndoPreview {
        entry: Option<i64>,
        group: Option<String>,
        lines: Result<Vec<String>, String>,
    },
    /// An item's recall impact: the reads weighed and those it changes.
    Impact {
        proposal: i64,
        seq: i64,
        result: Result<(usize, Vec<crate::review::impact::Changed>), String>,
    },
    SleepProgress(crate::sleep::Progress),
    SleepDone(Result<Box<crate::sleep::Report>, String>),
    /// Writes of an import done, of those planned.
    ImportProgress(usize, usize),
    /// What an import did, as lines to read, or why it wrote nothing.
    ImportDone(Result<WhyText, String>),
    /// Past runs, and the processes maintaining the memory.
    Runs(
        Result<
            (
                Vec<crate::sleep::cycle::RunSummary>,
                Vec<crate::sleep::maintainer::Holder>,
                crate::sleep::params::Saved,
            ),
            String,
        >,
    ),
    /// The sleep parameters saved as the memory's own.
    ParamsSaved(Result<crate::sleep::params::Saved, String>),
    /// Not saved: another process saved others since the pane read them;
    /// here they are, to be shown again.
    ParamsStale(crate::sleep::params::Saved),
    RunReport(Result<Option<Box<crate::sleep::Report>>, String>),
    Contradictions(Result<Vec<crate::sleep::contradictions::Contradiction>, String>),
    Audit(Result<Vec<crate::audit::Entry>, String>),
    AuditEntry(Result<Option<EntryDetail>, String>),
    Why(Result<WhyText, String>),
    Health(Result<Measured, String>),
    /// Requests logged after `after`, newest first.
    Traffic {
        after: Option<i64>,
        result: Result<Vec<crate::audit::reads::Request>, String>,
    },
    Usage(Result<Box<crate::audit::reads::Usage>, String>),
}

#[derive(Debug, Clone)]
pub enum Action {
    Quit,
    SelectTab(Tab),
    NextTab,
    ToggleHelp,
    OpenPalette,
    ToggleMouse,
    Spawn(Job),
    Cancel,
    Done(JobOutput),
    OpenConcept(i64),
    OpenAsQuery(String),
    /// Load a command and its parameters into the workbench; a read runs
    /// at once (a request from the live traffic).
    Rerun {
        text: String,
        params: Map<String, Value>,
    },
    /// A passing message in the status bar (kept in the message log).
    Status(String),
    /// An error: it stays in the status bar until dismissed (the message
    /// log, Ctrl+G), and is kept in the log in full.
    Error(String),
    Copy(String),
    /// Run a palette command by name.
    Command(&'static str),
    /// Ask the operator for what to explain.
    Ask(Ask),
}

/// A key and what it does, for the hint bar and the help popup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    pub key: &'static str,
    pub what: &'static str,
}

pub const fn hint(key: &'static str, what: &'static str) -> Hint {
    Hint { key, what }
}

/// Rows a page key moves in a list.
pub const PAGE: usize = 10;

/// The same keys move in every list: `j`/`k`/`↑`/`↓` a row, `PgUp`/`PgDn`
/// and `Ctrl+U`/`Ctrl+D` a page, `g`/`Home` and `G`/`End` to either end.
/// `letters` is false where typed letters are text (a finder). Returns the
/// new selection, or None when the key is not a move.
pub fn list_nav(key: &KeyEvent, sel: usize, len: usize, letters: bool) -> Option<usize> {
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let last = len.saturating_sub(1);
    let to = match key.code {
        KeyCode::Down => sel + 1,
        KeyCode::Up => sel.saturating_sub(1),
        KeyCode::PageDown => sel + PAGE,
        KeyCode::PageUp => sel.saturating_sub(PAGE),
        KeyCode::Home => 0,
        KeyCode::End => last,
        KeyCode::Char('d') if ctrl => sel + PAGE,
        KeyCode::Char('u') if ctrl => sel.saturating_sub(PAGE),
        KeyCode::Char('j') if letters && !ctrl => sel + 1,
        KeyCode::Char('k') if letters && !ctrl => sel.saturating_sub(1),
        KeyCode::Char('g') if letters && !ctrl => 0,
        KeyCode::Char('G') if letters && !ctrl => last,
        _ => return None,
    };
    Some(to.min(last))
}

/// The `/` filter a list keeps: typed words narrow the rows to those whose
/// text holds every word (case and accents ignored); Enter keeps the
/// filter and goes back to the list, Esc clears it.
#[derive(Debug, Default, Clone)]
pub struct ListFilter {
    /// Typing into it now.
    pub typing: bool,
    pub text: String,
}

impl ListFilter {
    /// Handles a key while typing; true when the key was the filter's.
    pub fn key(&mut self, key: &KeyEvent) -> bool {
        use ratatui::crossterm::event::KeyCode;
        if !self.typing {
            return false;
        }
        match key.code {
            KeyCode::Enter => self.typing = false,
            KeyCode::Esc => {
                self.typing = false;
                self.text.clear();
            }
            _ => {
                edit_line(&mut self.text, key);
            }
        }
        true
    }

    pub fn active(&self) -> bool {
        !self.text.trim().is_empty()
    }

    /// Whether a row's text passes.
    pub fn matches(&self, row: &str) -> bool {
        if !self.active() {
            return true;
        }
        let hay = deunicode::deunicode(row).to_lowercase();
        deunicode::deunicode(&self.text)
            .to_lowercase()
            .split_whitespace()
            .all(|w| hay.contains(w))
    }

    /// The filter as a block title part: ` / word▏` while typing,
    /// ` / word` when kept, nothing when empty.
    pub fn title(&self) -> String {
        match (self.typing, self.active()) {
            (true, _) => format!(" / {}▏ ", self.text),
            (false, true) => format!(" / {} (Esc clears) ", self.text),
            _ => String::new(),
        }
    }
}

/// A scroll position kept within a bordered paragraph's text as `area`
/// wraps it: at most so far that its last page fills the view (keys such
/// as PgDn and `]` add freely; the next render takes the excess back).
pub fn clamp_scroll(p: &ratatui::widgets::Paragraph<'_>, area: Rect, scroll: u16) -> u16 {
    let total = p.line_count(area.width.saturating_sub(2));
    let most = total.saturating_sub(area.height as usize);
    (scroll as usize).min(most) as u16
}

/// Text cut to `width` columns, with `…` where it was cut.
pub fn fit(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let full: usize = text.chars().map(|c| c.width().unwrap_or(0)).sum();
    if full <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// Lines cut to `width` columns, each with `…` where it was cut (a list
/// row, a field: never clipped silently at the edge).
pub fn cut_lines(lines: Vec<Line<'_>>, width: u16) -> Vec<Line<'_>> {
    lines
        .into_iter()
        .map(|l| cut_line(l, width as usize))
        .collect()
}

/// One line cut to `width` columns, with `…` where it was cut, in the
/// style of the span it cut.
pub fn cut_line(line: Line<'_>, width: usize) -> Line<'_> {
    if width == 0 || line.width() <= width {
        return line;
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for s in line.spans {
        let w = s.width();
        if used + w < width {
            used += w;
            spans.push(s);
            continue;
        }
        // what fits of this span with room for `…` after it
        use unicode_width::UnicodeWidthChar;
        let mut cut = String::new();
        for c in s.content.chars() {
            let cw = c.width().unwrap_or(0);
            if used + cw + 1 > width {
                break;
            }
            used += cw;
            cut.push(c);
        }
        cut.push('…');
        spans.push(ratatui::text::Span::styled(cut, s.style));
        break;
    }
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}

/// Text for a one-line field: line breaks and tabs as spaces, other
/// control characters dropped.
/// The editing keys every one-line box takes (filters, prompts, finders),
/// as a shell's line editor does: Backspace deletes a character, Ctrl+U the
/// whole line, Ctrl+W the last word; Ctrl+A and Ctrl+E (start, end) and
/// any other Ctrl or Alt key are taken and never typed as letters. The
/// cursor stays at the end. Returns whether the key was an editing key.
pub fn edit_line(text: &mut String, key: &KeyEvent) -> bool {
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Backspace if ctrl || alt => {
            delete_word(text);
            true
        }
        KeyCode::Backspace => {
            text.pop();
            true
        }
        KeyCode::Char('u') if ctrl => {
            text.clear();
            true
        }
        KeyCode::Char('w') if ctrl => {
            delete_word(text);
            true
        }
        KeyCode::Char(_) if ctrl || alt => true,
        KeyCode::Char(c) if !c.is_control() => {
            text.push(c);
            true
        }
        _ => false,
    }
}

/// Deletes the last word and the spaces after it.
fn delete_word(text: &mut String) {
    let kept = text.trim_end().len();
    text.truncate(kept);
    let start = text
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    text.truncate(start);
}

/// Pasted text as lines: CR LF (Windows) and a lone CR (what xterm, VTE
/// and tmux send for a line break) are line ends; tabs stay; other control
/// characters are dropped.
pub fn pasted_lines(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .chars()
        .filter(|c| *c == '\n' || *c == '\t' || !c.is_control())
        .collect()
}

pub fn one_line(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

pub trait Component {
    /// Keys that do something where the focus is now.
    fn hints(&self) -> Vec<Hint>;
    /// Whether typed characters belong to a text field right now.
    fn captures_text(&self) -> bool {
        false
    }
    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action>;
    /// Pasted text (bracketed paste): by default typed character by
    /// character into whatever field has the focus, line breaks and tabs as
    /// spaces, other control characters dropped. A field that can take it
    /// at once (an editor, a finder) overrides this.
    fn handle_paste(&mut self, text: &str) -> Vec<Action> {
        if !self.captures_text() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for c in one_line(text).chars() {
            out.extend(self.handle_key(KeyEvent::new(
                ratatui::crossterm::event::KeyCode::Char(c),
                ratatui::crossterm::event::KeyModifiers::NONE,
            )));
        }
        out
    }
    fn handle_mouse(&mut self, _ev: MouseEvent) -> Vec<Action> {
        Vec::new()
    }
    /// Actions addressed to components (job results, navigation).
    fn update(&mut self, action: &Action) -> Vec<Action>;
    fn render(&mut self, f: &mut Frame, area: Rect);
    /// Palette commands this component understands.
    fn commands(&self) -> Vec<&'static str> {
        Vec::new()
    }
}
