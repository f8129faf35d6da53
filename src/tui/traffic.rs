//! Live traffic: the requests agents send (HTTP, MCP, `somnus rpc`) as
//! they arrive, from the read log: who asked, what, how many rows came
//! back, how long it took, the errors. Filterable and pausable; Enter
//! loads a request into the workbench and runs it again. Two more views
//! list the elements agents read most and the concepts they never read,
//! each leading to `why`.

use super::component::{Action, Component, Hint, Job, JobOutput, ListFilter, hint, list_nav};
use super::theme;
use crate::audit::reads::{Request, Usage};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

/// Requests the view keeps (the newest; older ones are in the log, and in
/// `somnus reads`).
pub const KEEP: usize = 2_000;
/// Elements the most read and never read lists show.
pub const LISTED: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Requests,
    MostRead,
    NeverRead,
}

impl View {
    fn next(self) -> View {
        match self {
            View::Requests => View::MostRead,
            View::MostRead => View::NeverRead,
            View::NeverRead => View::Requests,
        }
    }
    fn title(self) -> &'static str {
        match self {
            View::Requests => "requests",
            View::MostRead => "most read",
            View::NeverRead => "never read",
        }
    }
}

/// What the filter asks of a request: `caller=`, `kind=`, `channel=`,
/// `errors`, `slow=MS` (at least that many milliseconds), and words the
/// command, caller or error must hold.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Wanted {
    caller: Option<String>,
    kind: Option<String>,
    channel: Option<String>,
    errors: bool,
    slow_micros: Option<i64>,
    words: Vec<String>,
}

fn folded(s: &str) -> String {
    deunicode::deunicode(s).to_lowercase()
}

impl Wanted {
    pub fn parse(text: &str) -> Result<Wanted, String> {
        let mut w = Wanted::default();
        for t in text.split_whitespace() {
            match t.split_once('=') {
                Some(("caller", v)) => w.caller = Some(v.to_string()),
                Some(("kind", v)) => w.kind = Some(v.to_uppercase()),
                Some(("channel", v)) => w.channel = Some(v.to_lowercase()),
                Some(("slow", v)) => {
                    let ms: f64 = v
                        .trim_end_matches("ms")
                        .parse()
                        .ok()
                        .filter(|m: &f64| m.is_finite() && *m >= 0.0)
                        .ok_or_else(|| format!("slow={v}: give milliseconds (slow=10)"))?;
                    w.slow_micros = Some((ms * 1000.0).min(i64::MAX as f64) as i64);
                }
                Some((k, _)) => {
                    return Err(format!(
                        "unknown filter `{k}=` (caller=, kind=, channel=, slow=, errors, or words)"
                    ));
                }
                None if t == "errors" || t == "error" => w.errors = true,
                None => w.words.push(folded(t)),
            }
        }
        Ok(w)
    }

    pub fn passes(&self, r: &Request) -> bool {
        if self.caller.as_ref().is_some_and(|c| *c != r.caller)
            || self.kind.as_ref().is_some_and(|k| *k != r.kind)
            || self.channel.as_ref().is_some_and(|c| *c != r.channel)
            || (self.errors && r.error.is_none())
            || self.slow_micros.is_some_and(|m| r.micros < m)
        {
            return false;
        }
        if self.words.is_empty() {
            return true;
        }
        let hay = folded(&format!(
            "{} {} {} {}",
            r.caller,
            r.kind,
            r.command,
            r.error.as_deref().unwrap_or("")
        ));
        self.words.iter().all(|w| hay.contains(w.as_str()))
    }
}

/// A latency as people read it: `0.42ms`, `12.3ms`, `1.24s`.
pub fn latency(micros: i64) -> String {
    let ms = micros as f64 / 1000.0;
    if ms < 10.0 {
        format!("{ms:.2}ms")
    } else if ms < 1000.0 {
        format!("{ms:.1}ms")
    } else {
        format!("{:.2}s", ms / 1000.0)
    }
}

pub struct TrafficPane {
    /// Newest first, at most `KEEP`.
    pub requests: Vec<Request>,
    /// Arrived while paused: shown on resume.
    held: Vec<Request>,
    pub loaded: bool,
    pub paused: bool,
    /// A fetch is on its way: the next tick does not ask again.
    fetching: bool,
    pub view: View,
    filter: ListFilter,
    wanted: Wanted,
    sel: usize,
    /// The selected request: new arrivals keep the selection on it (the
    /// newest row follows the newest request).
    sel_id: Option<i64>,
    usage: Option<Usage>,
    usage_sel: usize,
    scroll: u16,
    error: Option<String>,
}

impl Default for TrafficPane {
    fn default() -> Self {
        Self::new()
    }
}

impl TrafficPane {
    pub fn new() -> Self {
        TrafficPane {
            requests: Vec::new(),
            held: Vec::new(),
            loaded: false,
            paused: false,
            fetching: false,
            view: View::Requests,
            filter: ListFilter::default(),
            wanted: Wanted::default(),
            sel: 0,
            sel_id: None,
            usage: None,
            usage_sel: 0,
            scroll: 0,
            error: None,
        }
    }

    /// The newest request the view has (shown or held).
    fn newest(&self) -> Option<i64> {
        let held = self.held.first().map(|r| r.id);
        held.max(self.requests.first().map(|r| r.id))
    }

    /// Everything read again (entering the tab, `r`).
    pub fn load(&mut self) -> Vec<Action> {
        self.fetching = true;
        let mut out = vec![Action::Spawn(Job::Traffic { after: None })];
        if self.view != View::Requests {
            out.push(Action::Spawn(Job::Usage));
        }
        out
    }

    /// What arrived since the last look (every second while the tab is
    /// shown; held while paused).
    pub fn poll(&mut self) -> Vec<Action> {
        if self.fetching {
            return vec![];
        }
        if !self.loaded {
            return self.load();
        }
        self.fetching = true;
        vec![Action::Spawn(Job::Traffic {
            after: self.newest(),
        })]
    }

    /// Indices of the requests the filter lets through.
    fn visible(&self) -> Vec<usize> {
        (0..self.requests.len())
            .filter(|&i| self.wanted.passes(&self.requests[i]))
            .collect()
    }

    fn current(&self) -> Option<&Request> {
        let v = self.visible();
        v.get(self.sel).map(|&i| &self.requests[i])
    }

    /// The selected request (what Enter runs again).
    pub fn selected(&self) -> Option<&Request> {
        self.current()
    }

    fn select(&mut self, to: usize) {
        let n = self.visible().len();
        self.sel = to.min(n.saturating_sub(1));
        let id = self.current().map(|r| r.id);
        if id != self.sel_id {
            self.scroll = 0;
        }
        self.sel_id = id;
    }

    /// New requests in front; the selection stays on its request, or on
    /// the newest when it was there.
    fn take(&mut self, mut fresh: Vec<Request>) {
        let follow = self.sel == 0;
        fresh.append(&mut self.requests);
        fresh.truncate(KEEP);
        self.requests = fresh;
        let at = if follow {
            None
        } else {
            self.sel_id.and_then(|id| {
                self.visible()
                    .iter()
                    .position(|&i| self.requests[i].id == id)
            })
        };
        self.select(at.unwrap_or(0));
    }

    fn resume(&mut self) {
        self.paused = false;
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() {
            self.take(held);
        }
    }

    fn usage_rows(&self) -> usize {
        match (&self.usage, self.view) {
            (Some(u), View::MostRead) => u.most.len(),
            (Some(u), View::NeverRead) => u.never.len(),
            _ => 0,
        }
    }

    /// The element the usage list's selection is on, as `why` takes it.
    fn usage_element(&self) -> Result<String, String> {
        let Some(u) = &self.usage else {
            return Err("the lists are loading".into());
        };
        match self.view {
            View::MostRead => match u.most.get(self.usage_sel) {
                Some(e) => e
                    .kip_id
                    .clone()
                    .ok_or_else(|| format!("{} is no longer in the memory", e.label)),
                None => Err("no element is listed".into()),
            },
            View::NeverRead => u
                .never
                .get(self.usage_sel)
                .map(|(id, _, _)| crate::store::ids::concept_id(*id))
                .ok_or_else(|| "no concept is listed".into()),
            View::Requests => Err("no element is selected".into()),
        }
    }

    fn header(&self) -> Line<'static> {
        let shown = self.visible();
        let errors = shown
            .iter()
            .filter(|&&i| self.requests[i].error.is_some())
            .count();
        let mut lat: Vec<i64> = shown.iter().map(|&i| self.requests[i].micros).collect();
        lat.sort_unstable();
        let at = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
        let mut spans = vec![if self.paused {
            Span::styled(
                format!(" ⏸ paused · {} new ", self.held.len()),
                theme::warn(),
            )
        } else {
            Span::styled(" ● live ", theme::accent())
        }];
        spans.push(Span::raw(format!(
            " {} request{}",
            shown.len(),
            if shown.len() == 1 { "" } else { "s" }
        )));
        if self.wanted != Wanted::default() {
            spans.push(Span::styled(
                format!(" of {}", self.requests.len()),
                theme::dim(),
            ));
        }
        if !lat.is_empty() {
            spans.push(Span::raw(format!(
                " · p50 {} · p99 {}",
                latency(at(0.5)),
                latency(at(0.99))
            )));
        }
        spans.push(Span::styled(
            format!(" · {errors} error{}", if errors == 1 { "" } else { "s" }),
            if errors > 0 {
                theme::warn()
            } else {
                theme::dim()
            },
        ));
        if let Some(e) = &self.error {
            spans.push(Span::styled(format!("   {e}"), theme::warn()));
        }
        Line::from(spans)
    }

    fn request_line(r: &Request, width: usize, selected: bool) -> Line<'static> {
        let time = r.at.get(11..19).unwrap_or(&r.at).to_string();
        let cmd =
            crate::text::one_line(&r.command.split_whitespace().collect::<Vec<_>>().join(" "));
        let (mark, rows) = match &r.error {
            Some(_) => ("✗", "err".to_string()),
            None => (" ", r.rows.to_string()),
        };
        let text = super::component::fit(
            &format!(
                "{mark}{time} {:<10} {:<4} {:<8} {rows:>5} {:>8}  {cmd}",
                super::component::fit(&r.caller, 10),
                r.channel,
                if r.kind.is_empty() { "?" } else { &r.kind },
                latency(r.micros),
            ),
            width,
        );
        let st = if selected {
            theme::selected()
        } else if r.error.is_some() {
            theme::warn()
        } else {
            theme::base()
        };
        Line::styled(text, st)
    }

    fn detail_lines(&self) -> Vec<Line<'static>> {
        let Some(r) = self.current() else {
            return vec![Line::styled(
                if self.requests.is_empty() {
                    "Requests agents send over HTTP (somnus serve), MCP (somnus mcp) or somnus rpc appear here as they arrive. The console's and the sleep cycle's own reads are not logged."
                } else {
                    "no request matches the filter (/ edits it, Esc clears it)"
                },
                theme::dim(),
            )];
        };
        let mut l = vec![
            Line::from(vec![
                Span::styled(format!("#{} ", r.id), theme::accent()),
                Span::raw(r.at.clone()),
            ]),
            Line::from(vec![
                Span::styled(r.caller.clone(), theme::key()),
                Span::raw(format!(
                    " via {} · {} · {} row{} · {}",
                    r.channel,
                    if r.kind.is_empty() { "?" } else { &r.kind },
                    r.rows,
                    if r.rows == 1 { "" } else { "s" },
                    latency(r.micros)
                )),
            ]),
        ];
        if let Some(e) = &r.error {
            l.push(Line::styled(format!("error: {e}"), theme::warn()));
        }
        if !r.elements.is_empty() {
            let ids: Vec<String> = r
                .elements
                .iter()
                .take(24)
                .map(|e| format!("#{e}"))
                .collect();
            let more = r.elements.len().saturating_sub(24);
            l.push(Line::from(vec![
                Span::styled("returned ", theme::dim()),
                Span::raw(ids.join(" ")),
                Span::styled(
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    },
                    theme::dim(),
                ),
            ]));
        }
        if r.parameters.as_object().is_some_and(|o| !o.is_empty()) {
            l.push(Line::from(vec![
                Span::styled("parameters ", theme::dim()),
                Span::raw(r.parameters.to_string()),
            ]));
        }
        l.push(Line::raw(""));
        for line in r.command.lines().take(200) {
            l.push(Line::styled(
                crate::text::printable(line).to_string(),
                theme::key(),
            ));
        }
        l.push(Line::raw(""));
        l.push(Line::styled(
            "Enter loads it into the workbench (with its parameters) and runs it again; c copies it.",
            theme::dim(),
        ));
        l
    }

    fn usage_lines(&self, width: usize, height: usize) -> Vec<Line<'static>> {
        let Some(u) = &self.usage else {
            return vec![Line::styled("loading…", theme::dim())];
        };
        let start = self.usage_sel.saturating_sub(height.saturating_sub(1));
        let row = |i: usize, text: String| {
            Line::styled(
                super::component::fit(&text, width),
                if i == self.usage_sel {
                    theme::selected()
                } else {
                    theme::base()
                },
            )
        };
        match self.view {
            View::MostRead if u.most.is_empty() => vec![Line::styled(
                "No element has been read by an agent yet.",
                theme::dim(),
            )],
            View::MostRead => u
                .most
                .iter()
                .enumerate()
                .skip(start)
                .take(height)
                .map(|(i, e)| {
                    row(
                        i,
                        format!(
                            "{:>7}  {}  {}",
                            e.reads,
                            e.last.get(..16).unwrap_or(&e.last).replace('T', " "),
                            e.label
                        ),
                    )
                })
                .collect(),
            View::NeverRead if u.never.is_empty() => vec![Line::styled(
                "Every concept has been read by an agent at least once.",
                theme::dim(),
            )],
            View::NeverRead => u
                .never
                .iter()
                .enumerate()
                .skip(start)
                .take(height)
                .map(|(i, (id, t, n))| row(i, format!("C:{id:<7} {t}:{n}")))
                .collect(),
            View::Requests => vec![],
        }
    }

    fn usage_note(&self) -> Vec<Line<'static>> {
        let Some(u) = &self.usage else {
            return vec![];
        };
        let span = match (&u.first, &u.last) {
            (Some(a), Some(b)) => format!(
                " from {} to {}",
                a.get(..16).unwrap_or(a).replace('T', " "),
                b.get(..16).unwrap_or(b).replace('T', " ")
            ),
            _ => String::new(),
        };
        let mut l = vec![Line::raw(format!(
            "The log holds {} request{}{span}.",
            u.logged,
            if u.logged == 1 { "" } else { "s" }
        ))];
        l.push(Line::raw(""));
        l.push(Line::raw(match self.view {
            View::MostRead => "What agents recall most: successful FIND and SEARCH answers count each element they returned, per caller. The counts outlive the log's retention. Decay keeps knowledge read often and lately (the `used` band).",
            _ => "Concepts no agent's FIND or SEARCH ever returned (the schema, domains and the house's own left out), oldest first. Never read and old weighs toward archival.",
        }));
        l.push(Line::raw(""));
        l.push(Line::styled(
            "Enter or w explains the element (why), o opens it in the Graph.",
            theme::dim(),
        ));
        l
    }
}

impl Component for TrafficPane {
    fn hints(&self) -> Vec<Hint> {
        if self.filter.typing {
            return vec![hint("Enter", "keep filter"), hint("Esc", "clear")];
        }
        let view = match self.view.next() {
            View::Requests => "view: requests",
            View::MostRead => "view: most read",
            View::NeverRead => "view: never read",
        };
        match self.view {
            View::Requests => vec![
                hint("↑↓", "request"),
                hint("Enter", "load & re-run"),
                hint("p", if self.paused { "resume" } else { "pause" }),
                hint("/", "filter"),
                hint("c", "copy"),
                hint("[ ]", "scroll"),
                hint("v", view),
                hint("r", "reload"),
            ],
            _ => vec![
                hint("↑↓", "element"),
                hint("Enter/w", "why"),
                hint("o", "open in Graph"),
                hint("v", view),
                hint("r", "reload"),
            ],
        }
    }

    fn captures_text(&self) -> bool {
        self.filter.typing
    }

    fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self.filter.key(&key) {
            match Wanted::parse(&self.filter.text) {
                Ok(w) => {
                    self.wanted = w;
                    self.error = None;
                }
                Err(e) => self.error = Some(e),
            }
            self.select(0);
            return vec![];
        }
        match key.code {
            KeyCode::Char('v') => {
                self.view = self.view.next();
                self.usage_sel = 0;
                if self.view != View::Requests {
                    return vec![Action::Spawn(Job::Usage)];
                }
                return vec![];
            }
            KeyCode::Char('r') | KeyCode::F(5) => return self.load(),
            _ => {}
        }
        if self.view != View::Requests {
            if let Some(to) = list_nav(&key, self.usage_sel, self.usage_rows(), true) {
                self.usage_sel = to;
                return vec![];
            }
            return match key.code {
                KeyCode::Enter | KeyCode::Char('w') => match self.usage_element() {
                    Ok(id) => vec![Action::Spawn(Job::WhyOf(id))],
                    Err(e) => vec![Action::Status(e)],
                },
                KeyCode::Char('o') => match self
                    .usage_element()
                    .map(|id| crate::store::ids::parse_concept_id(&id))
                {
                    Ok(Some(id)) => vec![Action::OpenConcept(id)],
                    Ok(None) => vec![Action::Status(
                        "a proposition: Enter explains it (the Graph opens concepts)".into(),
                    )],
                    Err(e) => vec![Action::Status(e)],
                },
                _ => vec![],
            };
        }
        if let Some(to) = list_nav(&key, self.sel, self.visible().len(), true) {
            self.select(to);
            return vec![];
        }
        match key.code {
            KeyCode::Char('/') => self.filter.typing = true,
            KeyCode::Esc if self.filter.active() => {
                self.filter.text.clear();
                self.wanted = Wanted::default();
                self.error = None;
                self.select(0);
            }
            KeyCode::Char('p') | KeyCode::Char(' ') => {
                if self.paused {
                    self.resume();
                    return vec![Action::Status("live again".into())];
                }
                self.paused = true;
                return vec![Action::Status(
                    "paused: new requests are held until p resumes".into(),
                )];
            }
            KeyCode::Enter => {
                if let Some(r) = self.current() {
                    let params = r.parameters.as_object().cloned().unwrap_or_default();
                    let masked = r.parameters.to_string().contains("[redacted ")
                        || r.command.contains("[redacted ");
                    let mut out = vec![Action::Rerun {
                        text: r.command.clone(),
                        params,
                    }];
                    if masked {
                        out.push(Action::Status(
                            "secrets in this request were masked when it was logged: put them back before running it".into(),
                        ));
                    }
                    return out;
                }
            }
            KeyCode::Char('c') => {
                if let Some(r) = self.current() {
                    return vec![Action::Copy(r.command.clone())];
                }
            }
            KeyCode::Char(']') => self.scroll = self.scroll.saturating_add(10),
            KeyCode::Char('[') => self.scroll = self.scroll.saturating_sub(10),
            _ => {}
        }
        vec![]
    }

    fn update(&mut self, action: &Action) -> Vec<Action> {
        match action {
            Action::Done(JobOutput::Traffic { after, result }) => {
                self.fetching = false;
                match result {
                    Ok(rows) => {
                        self.error = None;
                        match after {
                            None => {
                                // a reload: everything anew (held ones too)
                                self.held.clear();
                                self.requests.clear();
                                self.loaded = true;
                                self.take(rows.clone());
                            }
                            // an answer to a look that a reload overtook
                            Some(a) if Some(*a) != self.newest() => {}
                            Some(_) if rows.is_empty() => {}
                            Some(_) if self.paused => {
                                let mut fresh = rows.clone();
                                fresh.append(&mut self.held);
                                fresh.truncate(KEEP);
                                self.held = fresh;
                            }
                            Some(_) => self.take(rows.clone()),
                        }
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                vec![]
            }
            Action::Done(JobOutput::Usage(r)) => {
                match r {
                    Ok(u) => {
                        self.usage = Some((**u).clone());
                        self.usage_sel = self.usage_sel.min(self.usage_rows().saturating_sub(1));
                    }
                    Err(e) => self.error = Some(e.clone()),
                }
                vec![]
            }
            _ => vec![],
        }
    }

    fn render(&mut self, f: &mut Frame, area: Rect) {
        let [head, rest] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(area);
        if self.view == View::Requests {
            f.render_widget(Paragraph::new(self.header()), head);
        } else {
            let line = match &self.usage {
                None => Line::styled(" loading…", theme::dim()),
                Some(u) => Line::from(vec![
                    Span::styled(format!(" {} ", self.view.title()), theme::accent()),
                    Span::raw(match self.view {
                        View::MostRead => format!(
                            " {} element{} listed{} · from {} logged request{}",
                            u.most.len(),
                            if u.most.len() == 1 { "" } else { "s" },
                            if u.most.len() >= LISTED {
                                " (the most read)"
                            } else {
                                ""
                            },
                            u.logged,
                            if u.logged == 1 { "" } else { "s" }
                        ),
                        _ => format!(
                            " {} concept{} no agent has read{}",
                            u.never.len(),
                            if u.never.len() == 1 { "" } else { "s" },
                            if u.never.len() >= LISTED {
                                " (the oldest listed)"
                            } else {
                                ""
                            }
                        ),
                    }),
                ]),
            };
            f.render_widget(Paragraph::new(line), head);
        }
        let [list, detail] =
            Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                .areas(rest);
        let title = format!(
            " {}{} ",
            self.view.title(),
            if self.view == View::Requests {
                self.filter.title()
            } else {
                String::new()
            }
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(!self.filter.typing))
            .title(Span::styled(title, theme::title()));
        let inner = block.inner(list);
        f.render_widget(block, list);
        let (w, h) = (inner.width as usize, inner.height as usize);
        let lines = if self.view == View::Requests {
            let v = self.visible();
            let start = self.sel.saturating_sub(h.saturating_sub(1));
            if v.is_empty() {
                vec![Line::styled(
                    if self.loaded {
                        if self.requests.is_empty() {
                            "no agent request logged yet"
                        } else {
                            "no request matches the filter"
                        }
                    } else {
                        "loading…"
                    },
                    theme::dim(),
                )]
            } else {
                v.iter()
                    .enumerate()
                    .skip(start)
                    .take(h)
                    .map(|(n, &i)| Self::request_line(&self.requests[i], w, n == self.sel))
                    .collect()
            }
        } else {
            self.usage_lines(w, h)
        };
        f.render_widget(
            Paragraph::new(super::component::cut_lines(lines, inner.width)),
            inner,
        );
        let (title, body) = if self.view == View::Requests {
            (" request ", self.detail_lines())
        } else {
            (" about ", self.usage_note())
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(false))
            .title(Span::styled(title, theme::title()));
        let p = Paragraph::new(body).wrap(Wrap { trim: false }).block(block);
        self.scroll = super::component::clamp_scroll(&p, detail, self.scroll);
        f.render_widget(p.scroll((self.scroll, 0)), detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(id: i64, caller: &str, kind: &str, micros: i64, error: Option<&str>) -> Request {
        Request {
            id,
            at: format!("2026-11-28T10:00:{:02}.000Z", id % 60),
            caller: caller.into(),
            channel: "http".into(),
            kind: kind.into(),
            command: format!("{kind}(?p.name) WHERE {{ ?p {{type: \"Person\"}} }}"),
            parameters: json!({}),
            elements: vec![],
            rows: 1,
            micros,
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn the_filter_reads_fields_flags_and_words() {
        let w = Wanted::parse("caller=scout kind=find slow=5 person").unwrap();
        assert!(w.passes(&req(1, "scout", "FIND", 6_000, None)));
        assert!(!w.passes(&req(2, "scout", "FIND", 4_000, None)), "too fast");
        assert!(
            !w.passes(&req(3, "ops", "FIND", 6_000, None)),
            "other caller"
        );
        assert!(
            !w.passes(&req(4, "scout", "SEARCH", 6_000, None)),
            "other kind"
        );
        let e = Wanted::parse("errors").unwrap();
        assert!(e.passes(&req(5, "a", "FIND", 1, Some("KIP_1001: bad"))));
        assert!(!e.passes(&req(6, "a", "FIND", 1, None)));
        for bad in ["slow=fast", "slow=-1", "who=x"] {
            assert!(Wanted::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn new_requests_keep_the_selection_on_its_request_and_pause_holds_them() {
        let mut t = TrafficPane::new();
        t.update(&Action::Done(JobOutput::Traffic {
            after: None,
            result: Ok(vec![
                req(3, "a", "FIND", 1, None),
                req(2, "a", "FIND", 1, None),
            ]),
        }));
        // on the older one
        t.handle_key(KeyEvent::from(KeyCode::Down));
        assert_eq!(t.selected().map(|r| r.id), Some(2));
        t.update(&Action::Done(JobOutput::Traffic {
            after: Some(3),
            result: Ok(vec![req(4, "a", "FIND", 1, None)]),
        }));
        assert_eq!(t.selected().map(|r| r.id), Some(2), "the selection stays");
        // paused: held, not shown
        t.handle_key(KeyEvent::from(KeyCode::Char('p')));
        t.update(&Action::Done(JobOutput::Traffic {
            after: Some(4),
            result: Ok(vec![req(5, "a", "FIND", 1, None)]),
        }));
        assert_eq!(t.requests.first().map(|r| r.id), Some(4));
        assert_eq!(t.held.len(), 1);
        // a stale answer (asked before the last one came) is dropped
        t.update(&Action::Done(JobOutput::Traffic {
            after: Some(3),
            result: Ok(vec![req(4, "a", "FIND", 1, None)]),
        }));
        assert_eq!(t.held.len(), 1);
        t.handle_key(KeyEvent::from(KeyCode::Char('p')));
        assert_eq!(
            t.requests.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![5, 4, 3, 2]
        );
        assert_eq!(t.selected().map(|r| r.id), Some(2));
    }
}
