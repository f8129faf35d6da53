//! A markdown file as a reader needs it: split into sections at its
//! headings (found by a CommonMark parser, so a `#` inside a code block is
//! not one), each section's text kept verbatim with its first line, and
//! the `Key: value` lines people write (`- **Name:** Mira`, `时区：Asia/Shanghai`).

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

/// One section: from its heading to the next heading of its level or
/// above.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// The heading's text, without its `#`s and emphasis.
    pub heading: String,
    /// 1 for `#`, 2 for `##`, …
    pub level: u8,
    /// The heading's line (1-based).
    pub line: usize,
    /// The section verbatim, heading line included.
    pub text: String,
    /// The section without its heading line, trimmed.
    pub body: String,
}

/// A file split at its headings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    /// A lone first `#` heading (the file's title), if there is one.
    pub title: Option<String>,
    /// What comes before the first section (the title line included),
    /// verbatim, and its first line.
    pub preamble: String,
    pub sections: Vec<Section>,
}

fn level(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// The headings of a text: (byte offset of the heading, level, text).
fn headings(text: &str) -> Vec<(usize, u8, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, u8, String)> = None;
    for (ev, range) in Parser::new(text).into_offset_iter() {
        match ev {
            Event::Start(Tag::Heading { level: l, .. }) => {
                open = Some((range.start, level(l), String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = open.as_mut() {
                    h.2.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((at, l, t)) = open.take() {
                    out.push((at, l, t.trim().to_string()));
                }
            }
            _ => {}
        }
    }
    out
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// Splits `text` at the headings of its section level: the highest level
/// used, not counting a lone `#` title at the top.
pub fn split(text: &str) -> Doc {
    let mut hs = headings(text);
    let mut doc = Doc::default();
    // a lone level-1 heading above the others is the file's title
    let ones = hs.iter().filter(|h| h.1 == 1).count();
    if hs.len() > 1 && hs[0].1 == 1 && ones == 1 {
        doc.title = Some(hs[0].2.clone());
        hs.remove(0);
    }
    let Some(section_level) = hs.iter().map(|h| h.1).min() else {
        doc.preamble = text.to_string();
        return doc;
    };
    let starts: Vec<&(usize, u8, String)> = hs.iter().filter(|h| h.1 == section_level).collect();
    let first = starts.first().map_or(text.len(), |h| h.0);
    doc.preamble = text[..first].to_string();
    for (i, h) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(text.len(), |n| n.0);
        let chunk = &text[h.0..end];
        let body = chunk
            .split_once('\n')
            .map_or("", |(_, b)| b)
            .trim()
            .to_string();
        doc.sections.push(Section {
            heading: h.2.clone(),
            level: h.1,
            line: line_of(text, h.0),
            text: chunk.trim_end().to_string(),
            body,
        });
    }
    doc
}

/// One body row of a markdown table: its 0-based line, the table's
/// header cells and its own cells (emphasis and code marks around a whole
/// cell taken off).
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    pub line: usize,
    pub header: Vec<String>,
    pub cells: Vec<String>,
}

/// The cells of a `| a | b |` line (`\|` is a pipe inside a cell).
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.iter().map(|c| unwrap_cell(c)).collect()
}

/// A cell without the marks around all of it: `**Name**`, `` `x` ``,
/// `_note_`.
fn unwrap_cell(c: &str) -> String {
    let mut t = c.trim();
    for m in ["**", "__", "`", "*", "_"] {
        if t.len() > 2 * m.len() && t.starts_with(m) && t.ends_with(m) {
            let inner = &t[m.len()..t.len() - m.len()];
            if !inner.contains(m) {
                t = inner.trim();
            }
        }
    }
    t.to_string()
}

/// Whether a line is a table's separator row: `|---|:--:|`.
fn separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|')
        && t.contains('-')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// The body rows of the text's markdown tables (a header row, then a
/// separator row, then rows; tables inside code blocks are code).
pub fn tables(text: &str) -> Vec<TableRow> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut fence = false;
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            i += 1;
            continue;
        }
        if fence || !t.starts_with('|') || !lines.get(i + 1).is_some_and(|l| separator(l)) {
            i += 1;
            continue;
        }
        let header = cells(lines[i]);
        i += 2;
        while i < lines.len() && lines[i].trim_start().starts_with('|') {
            let mut row = cells(lines[i]);
            row.resize(header.len().max(row.len()), String::new());
            out.push(TableRow {
                line: i,
                header: header.clone(),
                cells: row,
            });
            i += 1;
        }
    }
    out
}

/// A table row as one line of text: `OpenClaw Setup (Status: ✅ Complete;
/// Notes: Gateway configured)`; cells that are blanks are left out.
pub fn row_text(r: &TableRow) -> String {
    let first = r.cells.first().cloned().unwrap_or_default();
    let rest: Vec<String> = r
        .cells
        .iter()
        .zip(r.header.iter().chain(std::iter::repeat(&String::new())))
        .skip(1)
        .filter(|(c, _)| !placeholder(c))
        .map(|(c, h)| {
            if h.is_empty() {
                c.clone()
            } else {
                format!("{h}: {c}")
            }
        })
        .collect();
    match (first.is_empty(), rest.is_empty()) {
        (_, true) => first,
        (true, false) => rest.join("; "),
        (false, false) => format!("{first} ({})", rest.join("; ")),
    }
}

/// A two-column row read as `Key: value` (`| **Name** | Cássio |`): the
/// first cell names something (a letter first, at most 40 characters, no
/// sentence) and the second says it.
fn row_key_value(r: &TableRow) -> Option<(String, String)> {
    if r.cells.len() != 2 {
        return None;
    }
    let key = r.cells[0].trim_end_matches([':', '：']).trim();
    let value = r.cells[1].trim();
    let ok = !key.is_empty()
        && key.chars().count() <= 40
        && key.chars().next().is_some_and(char::is_alphabetic)
        && !key.contains(". ")
        && !value.is_empty();
    ok.then(|| (key.to_string(), value.to_string()))
}

/// A `Key: value` line, its value left out when the lines under it
/// hold it.
fn key_re() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*([^*]{1,40}?)\s*(?:[:：]\s*\*\*|\*\*\s*[:：])|([^:：*`\[\]()#>|]{1,40}?)\s*[:：])\s*(\S.*)?$",
        )
        .expect("the key-value pattern")
    })
}

/// The `Key: value` lines of a text, with their 0-based line index in it:
/// `- **Name:** Mira`, `**What:** …`, `- Timezone: UTC`, `名字：陈明`. A key
/// is at most 40 characters and holds no sentence (no `. `); a URL's
/// scheme is not a key. A two-column table's rows are read the same way
/// (`| **Timezone** | America/Belem |`).
pub fn key_values(text: &str) -> Vec<(usize, String, String)> {
    let re = key_re();
    let mut out = Vec::new();
    let mut fence = false;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().copied().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let Some(c) = re.captures(line) else { continue };
        let key = c
            .get(1)
            .or_else(|| c.get(2))
            .map(|m| {
                m.as_str()
                    .trim()
                    .trim_end_matches([':', '：'])
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        // (OpenClaw's templates put the value on the lines under its key:
        // `- **Name:**` then `  Mimi`)
        let value = match c.get(3) {
            Some(m) => m.as_str().trim().to_string(),
            None => continuation(&lines, i).0,
        };
        if key.is_empty() || value.is_empty() || key.contains(". ") {
            continue;
        }
        // a time or a ratio (`before 10:00`, `3:2`) is not a key and its
        // value: digits on both sides of a bare colon
        if let (Some(k), Some(v)) = (c.get(2), c.get(3))
            && &line[k.end()..v.start()] == ":"
            && k.as_str().ends_with(|ch: char| ch.is_ascii_digit())
            && v.as_str().starts_with(|ch: char| ch.is_ascii_digit())
        {
            continue;
        }
        if value.starts_with("//") {
            continue;
        }
        // a line in italics, `_Last updated: 2026-03-01_`
        let value = if key.starts_with('_') && value.ends_with('_') {
            value.trim_end_matches('_').trim_end().to_string()
        } else {
            value
        };
        let key = key.trim_start_matches('_').trim().to_string();
        out.push((i, key, value));
    }
    for r in tables(text) {
        if let Some((k, v)) = row_key_value(&r) {
            out.push((r.line, k, v));
        }
    }
    out.sort_by_key(|(i, _, _)| *i);
    out
}

/// The value written on the lines under a key that has none on its own
/// (`- **Name:**` then `  Mimi`, as OpenClaw's templates are filled in):
/// the lines indented deeper than the key's, up to a blank line, each
/// neither a list's item nor a key of their own, joined by a space; and
/// how many lines they are. Empty when the next line is none such (a
/// label over a list: `**Telegram:**` then `- Username: x`).
fn continuation(lines: &[&str], key_line: usize) -> (String, usize) {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let depth = lines.get(key_line).map_or(0, |l| indent(l));
    let mut parts = Vec::new();
    for l in lines.iter().skip(key_line + 1).take(8) {
        let t = l.trim();
        if t.is_empty()
            || indent(l) <= depth
            || t.starts_with(['-', '*', '+', '#', '|', '>'])
            || t.starts_with("```")
            || key_re().captures(l).is_some_and(|c| c.get(3).is_some())
        {
            break;
        }
        parts.push(t);
    }
    (parts.join(" "), parts.len())
}

/// A line of a profile (`USER.md`) as [`outline`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// `- **Timezone:** UTC+7`: the key as written, prefixed by the bold
    /// label it sits under (`**Telegram:**` then `- Username: x` gives
    /// `Telegram username`).
    Key {
        line: usize,
        key: String,
        value: String,
    },
    /// A bullet, numbered item or sentence that is no `Key: value`, under
    /// the heading or bold label it sits under (`## Context` then
    /// `- likes baseball`).
    Item {
        line: usize,
        group: String,
        text: String,
    },
}

/// A profile's lines: its `Key: value` lines and, grouped under their
/// heading or label, the other things it says. A heading or a lone bold
/// label (`**Working Style:**`) opens a group; `---` closes it; a table's
/// rows are pairs (two columns) or items; code blocks and lines in no
/// group are left to the verbatim copy.
pub fn outline(text: &str) -> Vec<Line> {
    static LABEL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let label_re = LABEL.get_or_init(|| {
        regex::Regex::new(r"^\s*(?:[-*+]\s+)?\*\*([^*]{1,40}?)\s*[:：]?\s*\*\*\s*[:：]?\s*$")
            .expect("the label pattern")
    });
    let keyed: std::collections::HashMap<usize, (String, String)> = key_values(text)
        .into_iter()
        .map(|(i, k, v)| (i, (k, v)))
        .collect();
    let rows: std::collections::HashMap<usize, TableRow> =
        tables(text).into_iter().map(|r| (r.line, r)).collect();
    let mut out = Vec::new();
    let mut heading: Option<String> = None;
    let mut label: Option<String> = None;
    // under the file's `# ` title
    let mut title = false;
    let mut fence = false;
    let comments = comment_only(text.lines());
    let lines: Vec<&str> = text.lines().collect();
    // the lines that hold the value of the key above them
    let mut value_lines = 0;
    for (i, line) in lines.iter().copied().enumerate() {
        let t = line.trim();
        if comments[i] {
            continue;
        }
        if value_lines > 0 {
            value_lines -= 1;
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence || t.is_empty() || t.starts_with('>') {
            continue;
        }
        if t.starts_with('|') {
            // a table's row: `Key: value` when it is a two-column pair,
            // else one item of its group (header and separator rows are
            // no rows)
            if let Some((k, v)) = keyed.get(&i) {
                out.push(Line::Key {
                    line: i,
                    key: k.clone(),
                    value: v.clone(),
                });
            } else if let (Some(r), Some(group)) =
                (rows.get(&i), label.clone().or_else(|| heading.clone()))
            {
                let text = row_text(r);
                if !text.is_empty() && !placeholder(&text) {
                    out.push(Line::Item {
                        line: i,
                        group,
                        text,
                    });
                }
            }
            continue;
        }
        if t.starts_with('#') {
            let h = t.trim_start_matches('#').trim();
            heading = (!h.is_empty()).then(|| h.trim_matches(['*', '_']).trim().to_string());
            title = !t.starts_with("##");
            label = None;
            continue;
        }
        // the template's hint under the file's title (`_This is who
        // you're helping. Know them well._`) is no fact
        if title && label.is_none() && t.len() > 2 && italic(t) {
            continue;
        }
        if t.chars().all(|c| matches!(c, '-' | '*' | '_' | '=')) {
            heading = None;
            label = None;
            continue;
        }
        if let Some(c) = label_re.captures(line) {
            match continuation(&lines, i) {
                (_, n) if n > 0 && keyed.contains_key(&i) => value_lines = n,
                _ => {
                    label = c.get(1).map(|m| m.as_str().trim().to_string());
                    continue;
                }
            }
        }
        if let Some((k, v)) = keyed.get(&i) {
            let indented = line.starts_with([' ', '\t']) || t.starts_with(['-', '*', '+']);
            let key = match &label {
                Some(l) if indented => format!("{l} {k}"),
                _ => k.clone(),
            };
            out.push(Line::Key {
                line: i,
                key,
                value: v.clone(),
            });
            continue;
        }
        let Some(group) = label.clone().or_else(|| heading.clone()) else {
            continue;
        };
        // (a line in italics, `*Learn about the person you're helping.*`,
        // keeps its words, not its marks)
        let t = if italic(t) { &t[1..t.len() - 1] } else { t };
        let item = t.trim_start_matches(['-', '*', '+']).trim_start();
        let item = match item.split_once(['.', ')']) {
            Some((n, rest))
                if !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit()) =>
            {
                rest.trim()
            }
            _ => item,
        };
        if item.is_empty() {
            continue;
        }
        out.push(Line::Item {
            line: i,
            group,
            text: item.to_string(),
        });
    }
    out
}

/// Whether a line is one run of italics: `_…_` or `*…*` (never a bullet,
/// `* item`, nor bold, `**…**`).
fn italic(t: &str) -> bool {
    let b = t.as_bytes();
    if b.len() < 3 {
        return false;
    }
    let (first, second, last) = (b[0], b[1], b[b.len() - 1]);
    (first == b'_' && last == b'_' && second != b'_')
        || (first == b'*'
            && last == b'*'
            && second != b'*'
            && second != b' '
            && b[b.len() - 2] != b'*')
}

/// For each line, whether it holds nothing but an HTML comment or a part
/// of one (`<!-- One line per service endpoint after registration -->`,
/// a template's hint that no reader of the rendered file sees).
pub fn comment_only<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<bool> {
    let mut open = false;
    lines
        .into_iter()
        .map(|line| {
            let mut rest = line;
            let mut said = false;
            loop {
                if open {
                    match rest.find("-->") {
                        Some(i) => {
                            open = false;
                            rest = &rest[i + 3..];
                        }
                        None => break,
                    }
                } else {
                    match rest.find("<!--") {
                        Some(i) => {
                            said |= !rest[..i].trim().is_empty();
                            open = true;
                            rest = &rest[i + 4..];
                        }
                        None => {
                            said |= !rest.trim().is_empty();
                            break;
                        }
                    }
                }
            }
            !said && !line.trim().is_empty()
        })
        .collect()
}

/// Whether a profile value is the template's blank, not a fact:
/// `_(optional)_`, `[your name]`, `TBD`, `-`, "not told yet" in a few
/// languages.
pub fn placeholder(v: &str) -> bool {
    let t = v.trim().trim_matches(['_', '*', '`']).trim();
    if t.is_empty() || t.chars().all(|c| !c.is_alphanumeric()) {
        return true;
    }
    if (t.starts_with('(') && t.ends_with(')')) || (t.starts_with('（') && t.ends_with('）')) {
        return true;
    }
    // `[your name]`, `[Fill in after first conversation]` (never a link,
    // `[text](url)`, nor a task box, `[x] done`)
    if t.starts_with('[') && t.ends_with(']') && !t.contains("](") && t.chars().count() > 3 {
        return true;
    }
    let l = t.to_lowercase();
    // the whole value ("TBD"), or how it starts ("not yet told", "まだ…")
    const BLANK: [&str; 5] = ["tbd", "todo", "n/a", "none yet", "not set"];
    const NOT_YET: [&str; 10] = [
        "not yet",
        "unknown",
        "未知",
        "未设置",
        "待定",
        "未定",
        "まだ",
        "不明",
        "아직",
        "미정",
    ];
    BLANK.contains(&l.as_str()) || NOT_YET.iter().any(|w| l.starts_with(w))
}

/// A dated file name's rest as a topic, unless it only says when the
/// note was written (`2026-02-06-2012.md`: 20:12, a note of no topic).
pub fn named_topic(rest: Option<String>) -> Option<String> {
    rest.filter(|t| !(3..=6).contains(&t.len()) || !t.bytes().all(|b| b.is_ascii_digit()))
}

/// The day a file's name gives (`2026-02-11.md`, `2026-02-11-topic.md`),
/// and the rest of the name as a topic (`topic`).
pub fn dated_name(stem: &str) -> Option<(chrono::NaiveDate, Option<String>)> {
    let day = stem.get(..10)?;
    let date = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
    let rest = stem[10..].trim_start_matches(['-', '_', ' ']).trim();
    Some((date, (!rest.is_empty()).then(|| rest.to_string())))
}

/// The time a heading starts with or holds: `09:15`, `9:15 AM`, `[21:40]`,
/// `09:15 | fact`, `05:23 心跳检查`, `Session at 3:30 PM`.
pub fn heading_time(h: &str) -> Option<chrono::NaiveTime> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)(?:^|[^\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?:\s*[-–~]\s*(\d{1,2})(?::\d{2})?\s*(am|pm|a\.m\.|p\.m\.))?(?:[^\d:]|$)",
        )
        .expect("the time pattern")
    });
    let c = re.captures(h)?;
    let mut hour: u32 = c.get(1)?.as_str().parse().ok()?;
    let min: u32 = c.get(2)?.as_str().parse().ok()?;
    let sec: u32 = c.get(3).and_then(|s| s.as_str().parse().ok()).unwrap_or(0);
    // a range says its part of the day once, at its end (`1:22-2:16 PM`
    // starts at 13:22; `11:40-12:10 PM` at 11:40 in the morning; the
    // end's minutes may go unsaid, `6:10-16 PM`)
    let ap = c.get(4).or_else(|| {
        let end: u32 = c.get(5)?.as_str().parse().ok()?;
        let end_pm = c.get(6)?.as_str().to_ascii_lowercase().starts_with('p');
        // (`6:10-16 PM`: the end's hour is its minutes)
        let end = if c.get(0)?.as_str().contains(&format!("{end}:")) || end <= 12 {
            end
        } else {
            hour
        };
        // (a range that crosses noon starts in the morning)
        let crosses_noon = end_pm && hour < 12 && (end == 12 || hour > end);
        if crosses_noon { None } else { c.get(6) }
    });
    if let Some(ap) = ap {
        let pm = ap.as_str().to_ascii_lowercase().starts_with('p');
        // (`13:10 PM`: a 24-hour time that says PM as well)
        if hour > 12 && hour < 24 && pm {
            return chrono::NaiveTime::from_hms_opt(hour, min, sec);
        }
        if hour == 0 || hour > 12 {
            return None;
        }
        hour = match (pm, hour) {
            (false, 12) => 0,
            (true, 12) => 12,
            (true, h) => h + 12,
            (false, h) => h,
        };
    }
    chrono::NaiveTime::from_hms_opt(hour, min, sec)
}

/// A title without the file name it opens with (`memory/2026-03-01.md -
/// Daily Log` → `Daily Log`, `USER.md — About` → `About`); a title that
/// is only a file name is left as it is.
pub fn without_file_name(t: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"(?i)^\s*[\w./~-]*\w\.(?:md|markdown|txt)\s*(?:[-–—:|·]\s*)?")
            .expect("the file-name prefix")
    });
    match re.replace(t, "").trim() {
        "" => t.trim().to_string(),
        rest => rest.to_string(),
    }
}

/// A heading without its leading time (`3:30 AM Session — X` → `Session —
/// X`), for an Event's name that gives the time once.
pub fn strip_time(h: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"(?i)^\W*\d{1,2}:\d{2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?(?:\s*[-–~]\s*\d{1,2}(?::\d{2}\s*(?:am|pm|a\.m\.|p\.m\.)?|\s*(?:am|pm|a\.m\.|p\.m\.)))?[^\w(（]*(?:[(（][^)）]*\d[^)）]*[)）][^\w(（]*)?")
            .expect("the time prefix")
    });
    let led = re.is_match(h);
    let mut s = re.replace(h, "").to_string();
    // a bracket the time opened closes after it (`【23:14 · GEO 项目】`)
    for (open, close) in [('【', '】'), ('[', ']'), ('(', ')'), ('（', '）')] {
        if h.trim_start().starts_with(open)
            && !s.contains(open)
            && let Some(i) = s.find(close)
        {
            s.replace_range(i..i + close.len_utf8(), "");
        }
    }
    let s = s.trim().to_string();
    // and a trailing remark that only repeats when: `(2026-02-12 20:42
    // UTC)`, `(08:55-13:02 UTC)`
    static TAIL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let tail = TAIL.get_or_init(|| {
        regex::Regex::new(r"(?i)\s*[(（\[][\d\s:/.\-–T~]*\d{1,2}:\d{2}[\d\s:/.\-–~]*(?:utc|gmt|uhr|h|[a-z]{2,4}t)?[)）\]]\s*$")
            .expect("the time remark")
    });
    let s = match tail.replace(&s, "").to_string() {
        t if t.trim().is_empty() => s,
        t => t,
    };
    // and the time inside it, after the part of the day it is in
    // (`中午 12:41 - 讨论`, `Session at 3:30 PM`), never one end of a range
    // (`10:00-11:00`), nor a second time after the one the heading opened
    // with (`7:35 早间新闻任务 ✅ (7:55完成)`: done at 7:55)
    static INSIDE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let inside = INSIDE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)(?:\s+(?:at|um|à|a las|alle|às|в))?\s*\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*(?:am|pm|a\.m\.|p\.m\.))?(?P<next>\s*[-–~]\s*\d)?",
        )
        .expect("the time inside")
    });
    let s = match inside.captures(&s) {
        Some(c) if c.name("next").is_none() && !led => {
            let whole = c.get(0).map_or(0..0, |m| m.range());
            let mut t = s.clone();
            t.replace_range(whole, " ");
            let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
            let t = t
                .trim_matches(|c: char| c.is_whitespace() || "-–—:|·,".contains(c))
                .to_string();
            if t.is_empty() { s } else { t }
        }
        _ => s,
    };
    if s.trim().is_empty() {
        h.to_string()
    } else {
        s
    }
}

/// The IANA zone a text names (`Asia/Jakarta`, `America/Argentina/Buenos_Aires`).
fn iana_zone(text: &str) -> Option<chrono_tz::Tz> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(crate::analysis::TIME_ZONE_NAME).expect("the zone name pattern")
    });
    re.find_iter(text).find_map(|m| m.as_str().parse().ok())
}

/// The offset a text gives for a time on a day: a fixed one
/// ([`zone_of`]), or an IANA zone's offset on that day at that time,
/// summer time included (`19:55 (Asia/Jakarta)` → `+07:00`,
/// `(Europe/Lisbon)` in July → `+01:00`).
pub fn zone_at(text: &str, day: chrono::NaiveDate, time: chrono::NaiveTime) -> Option<String> {
    use chrono::{Offset, TimeZone};
    if let Some(z) = zone_of(text) {
        return Some(z);
    }
    let tz = iana_zone(text)?;
    let local = tz.from_local_datetime(&day.and_time(time)).earliest()?;
    let secs = local.offset().fix().local_minus_utc();
    Some(if secs == 0 {
        "Z".into()
    } else {
        let sign = if secs < 0 { '-' } else { '+' };
        let m = secs.abs() / 60;
        format!("{sign}{:02}:{:02}", m / 60, m % 60)
    })
}

/// A heading without the zone it gives its time in, at either end
/// (`(Asia/Jakarta)`, `— UTC`, `GMT+8`): when, not what.
pub fn without_zone(h: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        let zone = format!(
            r"(?:\b(?:UTC|GMT|utc|gmt)(?:\s*[+-]\d{{1,2}}(?::?\d{{2}})?)?\b|{})",
            crate::analysis::TIME_ZONE_NAME
        );
        regex::Regex::new(&format!(
            r"^\s*(?:[(（]{zone}[)）]|{zone})\s*[-–—:]?\s*|\s*[-–—]?\s*(?:[(（]{zone}[)）]|{zone})\s*$|\s+{zone}\s*([)）])\s*$"
        ))
        .expect("the zone at a heading's end")
    });
    // (a zone that closes a parenthesis leaves it closed: `(06:01–23:32
    // Asia/Shanghai)` is `(06:01–23:32)`)
    re.replace_all(h, "${1}").trim().to_string()
}

/// The offset from UTC a stamp gives after its time, as RFC 3339 writes
/// it: `GMT+8` and `UTC+05:30` (`+08:00`, `+05:30`), `10:53 +0800`,
/// `10:53-05:00`; `UTC` or `GMT` alone is `Z`. An elapsed time (`+18m`)
/// is none, nor an offset past 14 hours.
pub fn zone_of(stamp: &str) -> Option<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)(?:\b(?:gmt|utc)\s*(?:([+-])(\d{1,2})(?::?(\d{2}))?)?\b|\d{1,2}:\d{2}(?::\d{2})?\s*([+-])(\d{2}):?(\d{2})\b)",
        )
        .expect("the zone pattern")
    });
    let c = re.captures(stamp)?;
    let (sign, h, m) = match (c.get(1), c.get(4)) {
        (Some(s), _) => (
            s.as_str(),
            c.get(2)?.as_str(),
            c.get(3).map_or("0", |m| m.as_str()),
        ),
        (None, Some(s)) => (s.as_str(), c.get(5)?.as_str(), c.get(6)?.as_str()),
        (None, None) => return Some("Z".into()),
    };
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    if h > 14 || m > 59 {
        return None;
    }
    Some(if h == 0 && m == 0 {
        "Z".into()
    } else {
        format!("{sign}{h:02}:{m:02}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_zone_gives_its_offset_on_the_day_and_leaves_the_name() {
        let d = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let t = chrono::NaiveTime::from_hms_opt(19, 55, 0).unwrap();
        assert_eq!(
            zone_at("2026-03-26 19:55 (Asia/Jakarta)", d("2026-03-26"), t).as_deref(),
            Some("+07:00")
        );
        // summer time, and not
        assert_eq!(
            zone_at("19:55 Europe/Lisbon", d("2026-07-01"), t).as_deref(),
            Some("+01:00")
        );
        assert_eq!(
            zone_at("19:55 Europe/Lisbon", d("2026-01-01"), t).as_deref(),
            Some("Z")
        );
        assert_eq!(
            zone_at("(America/Argentina/Buenos_Aires)", d("2026-01-01"), t).as_deref(),
            Some("-03:00")
        );
        assert_eq!(
            zone_at("10:53 GMT+8", d("2026-01-01"), t).as_deref(),
            Some("+08:00")
        );
        // a name that is no zone, a path
        assert_eq!(zone_at("Asia/Narnia", d("2026-01-01"), t), None);
        assert_eq!(zone_at("docs/Europe/notes", d("2026-01-01"), t), None);
        assert_eq!(without_zone("(Asia/Jakarta)"), "");
        assert_eq!(without_zone("Heartbeat — UTC"), "Heartbeat");
        assert_eq!(without_zone("UTC — Deploy"), "Deploy");
        assert_eq!(without_zone("Deploy (GMT+8)"), "Deploy");
        assert_eq!(without_zone("Asia trip planning"), "Asia trip planning");
        assert_eq!(without_zone("Computing"), "Computing");
        assert_eq!(
            without_zone("Memoria Sesión Extendida — 2026-05-03 (06:01–23:32 Asia/Shanghai)"),
            "Memoria Sesión Extendida — 2026-05-03 (06:01–23:32)"
        );
        assert_eq!(
            without_zone("Sesión (GMT+8) — cierre"),
            "Sesión (GMT+8) — cierre"
        );
    }

    #[test]
    fn sections_split_at_the_highest_level_and_keep_every_line() {
        let t = "# 2026-02-07 — Day 2\n\nintro line\n\n## 3:30 AM Session\n\ntext\n### Sub\n- a\n```\n## not a heading\n```\n## 3:44 AM — Next\nmore\n";
        let d = split(t);
        assert_eq!(d.title.as_deref(), Some("2026-02-07 — Day 2"));
        assert!(d.preamble.contains("intro line"));
        assert_eq!(d.sections.len(), 2, "{d:?}");
        assert_eq!(d.sections[0].heading, "3:30 AM Session");
        assert_eq!(d.sections[0].line, 5);
        assert!(d.sections[0].text.contains("## not a heading"));
        assert_eq!(d.sections[1].line, 13);
        let all = format!(
            "{}{}",
            d.preamble,
            d.sections
                .iter()
                .map(|s| s.text.clone() + "\n")
                .collect::<String>()
        );
        for line in t.lines().filter(|l| !l.trim().is_empty()) {
            assert!(all.contains(line), "{line}");
        }
        // no heading: all preamble
        assert_eq!(split("just text\n").preamble, "just text\n");
        // Chinese headings
        let d = split("## 关于用户\n- 名字：陈明\n## 关键偏好\n- 简洁\n");
        assert_eq!(d.sections.len(), 2);
        assert_eq!(d.sections[0].heading, "关于用户");
    }

    #[test]
    fn key_values_in_the_forms_people_write() {
        let kv = key_values(
            "- **Name:** Midhun\n- **Timezone:** GMT+5:30 (India)\n**What:** a thing\n- 名字：陈明，30岁\n- 时区: Asia/Shanghai\n- App: https://costudy.in/\nA sentence. With: a colon later\n- Never schedule anything before 10:00\n- Ratio 3:2 works\n```\nkey: in code\n```\n- plain bullet\n",
        );
        let keys: Vec<&str> = kv.iter().map(|k| k.1.as_str()).collect();
        assert_eq!(
            keys,
            ["Name", "Timezone", "What", "名字", "时区", "App"],
            "{kv:?}"
        );
        assert_eq!(kv[0].2, "Midhun");
        assert_eq!(kv[3].2, "陈明，30岁");
    }

    #[test]
    fn a_value_on_the_lines_under_its_key() {
        // (OpenClaw's IDENTITY.md template, filled in; a real workspace)
        let t = "# IDENTITY.md\n\n- **Name:**\n  Mimi\n- **Creature:**\n  AI Assistant\n  trong Termux\n- **Avatar:**\n\n**Telegram:**\n  Username: mimi_bot\n**Links:**\n- one\n";
        let kv: Vec<(String, String)> = key_values(t).into_iter().map(|(_, k, v)| (k, v)).collect();
        assert_eq!(
            kv,
            [
                ("Name".to_string(), "Mimi".to_string()),
                ("Creature".into(), "AI Assistant trong Termux".into()),
                ("Username".into(), "mimi_bot".into()),
            ]
        );
        let keys: Vec<(String, String)> = outline(t)
            .into_iter()
            .filter_map(|l| match l {
                Line::Key { key, value, .. } => Some((key, value)),
                Line::Item { .. } => None,
            })
            .collect();
        assert_eq!(keys[0], ("Name".to_string(), "Mimi".to_string()));
        assert_eq!(
            keys[1],
            (
                "Creature".to_string(),
                "AI Assistant trong Termux".to_string()
            )
        );
        assert_eq!(
            keys[2],
            ("Telegram Username".to_string(), "mimi_bot".to_string())
        );
        assert!(
            !outline(t)
                .iter()
                .any(|l| matches!(l, Line::Item { text, .. } if text == "Mimi"))
        );
    }

    #[test]
    fn a_profile_outlined_by_its_groups() {
        let t = "# USER.md\n\n- **Name:** Doanh\n- **Pronouns:** _(optional)_\n\n## Contact\n\n**Telegram:**\n- Username: `D31`\n\n## Context\n\n**Working Style:**\n- Prefers Vietnamese\n- Dislikes broad changes\n\n**Past Projects:**\n1. **web-ban-hang** (on-hold) - E-commerce website\n\n## 好み\n\n- 野球が好き\n\n---\n\nThe more you know, the better.\n";
        let o = outline(t);
        let keys: Vec<(String, String)> = o
            .iter()
            .filter_map(|l| match l {
                Line::Key { key, value, .. } => Some((key.clone(), value.clone())),
                Line::Item { .. } => None,
            })
            .collect();
        assert_eq!(
            keys,
            [
                ("Name".to_string(), "Doanh".to_string()),
                ("Pronouns".into(), "_(optional)_".into()),
                ("Telegram Username".into(), "`D31`".into())
            ]
        );
        let items: Vec<(String, String)> = o
            .iter()
            .filter_map(|l| match l {
                Line::Item { group, text, .. } => Some((group.clone(), text.clone())),
                Line::Key { .. } => None,
            })
            .collect();
        assert_eq!(
            items,
            [
                (
                    "Working Style".to_string(),
                    "Prefers Vietnamese".to_string()
                ),
                ("Working Style".into(), "Dislikes broad changes".into()),
                (
                    "Past Projects".into(),
                    "**web-ban-hang** (on-hold) - E-commerce website".into()
                ),
                ("好み".into(), "野球が好き".into()),
            ]
        );
        assert!(placeholder("_(optional)_"));
        assert!(placeholder("まだ教えてもらってない…"));
        assert!(placeholder("TBD"));
        assert!(!placeholder("UTC+7 (Vietnam)"));
        assert!(!placeholder("Asia/Shanghai"));
    }

    #[test]
    fn comments_and_italics_are_a_templates_hints() {
        assert_eq!(
            comment_only([
                "<!-- One line per service -->",
                "<!--",
                "hint",
                "-->",
                "kept <!-- a remark -->",
                "",
                "<!-- a --> said",
            ]),
            vec![true, true, true, true, false, false, false]
        );
        assert!(italic("*Learn about the person you're helping.*"));
        assert!(italic("_(optional)_"));
        assert!(!italic("* item *"));
        assert!(!italic("**bold**"));
        assert!(!italic("*a"));
    }

    #[test]
    fn a_title_without_its_file_name() {
        assert_eq!(
            without_file_name("memory/2026-03-01.md - Daily Log"),
            "Daily Log"
        );
        assert_eq!(
            without_file_name("USER.md — About Your Human"),
            "About Your Human"
        );
        assert_eq!(without_file_name("MEMORY.md"), "MEMORY.md");
        assert_eq!(
            without_file_name("Notes on README.md"),
            "Notes on README.md"
        );
        assert_eq!(
            without_file_name("2026-03-04 - Sessão FortiGate 40F"),
            "2026-03-04 - Sessão FortiGate 40F"
        );
    }

    #[test]
    fn a_profile_kept_in_tables() {
        let t = "# USER.md\n\n## Basic Info\n\n| Field | Value |\n|-------|-------|\n| **Name** | Cássio |\n| **Pronouns** | — |\n| **Timezone** | America/Belem (GMT-3) |\n| Pipe \\| key | a \\| b |\n\n## Active Work\n| Project | Status | Notes |\n|---|:---:|---|\n| **OpenClaw Setup** | ✅ Complete | Gateway configured |\n| Cron Jobs | ⚠️ Needs fix | |\n\n## Changes\n| Date | Change |\n|--|--|\n| 2026-03-01 | Initial setup |\n\n```\n| Name | in code |\n|---|---|\n| Name | no |\n```\n| not | a table |\n| without | separator |\n";
        let kv = key_values(t);
        let keys: Vec<(&str, &str)> = kv.iter().map(|k| (k.1.as_str(), k.2.as_str())).collect();
        assert_eq!(
            keys,
            [
                ("Name", "Cássio"),
                ("Pronouns", "—"),
                ("Timezone", "America/Belem (GMT-3)"),
                ("Pipe | key", "a | b"),
            ],
            "{kv:?}"
        );
        let items: Vec<(String, String)> = outline(t)
            .into_iter()
            .filter_map(|l| match l {
                Line::Item { group, text, .. } => Some((group, text)),
                Line::Key { .. } => None,
            })
            .collect();
        assert_eq!(
            items,
            [
                (
                    "Active Work".to_string(),
                    "OpenClaw Setup (Status: ✅ Complete; Notes: Gateway configured)".to_string()
                ),
                (
                    "Active Work".into(),
                    "Cron Jobs (Status: ⚠️ Needs fix)".into()
                ),
                (
                    "Changes".into(),
                    "2026-03-01 (Change: Initial setup)".into()
                ),
            ]
        );
        let t = "# USER.md - About Your Human\n\n_This is who you're helping._\n\n- _Last updated: 2026-03-01_\n";
        assert!(
            outline(t).iter().all(|l| matches!(l, Line::Key { .. })),
            "{:?}",
            outline(t)
        );
        assert_eq!(key_values(t)[0].1, "Last updated");
        assert_eq!(key_values(t)[0].2, "2026-03-01");
        // a ragged row, an empty table, a lone pipe: no panic
        let odd = "| a | b | c |\n|---|---|---|\n| only one |\n| x | y | z | extra |\n|\n|-|\n";
        assert_eq!(tables(odd).len(), 4, "{:?}", tables(odd));
        assert!(key_values("|\n|-|\n|\n").is_empty());
    }

    #[test]
    fn times_and_days_from_headings_and_names() {
        let t = |h: &str| heading_time(h).map(|t| t.format("%H:%M").to_string());
        assert_eq!(
            t("3:30 AM Session — The Core Vision").as_deref(),
            Some("03:30")
        );
        assert_eq!(
            t("09:15 | fact | confidence:high").as_deref(),
            Some("09:15")
        );
        assert_eq!(t("05:23 心跳检查").as_deref(), Some("05:23"));
        assert_eq!(t("[21:40] Deploy").as_deref(), Some("21:40"));
        assert_eq!(t("12:05 PM lunch").as_deref(), Some("12:05"));
        // a range's part of the day is said at its end
        assert_eq!(
            t("1:22-2:16 PM - Roles Filter Fix").as_deref(),
            Some("13:22")
        );
        assert_eq!(t("6:10-16 PM - Railway Success").as_deref(), Some("18:10"));
        assert_eq!(t("12:26-28 PM - Obsidian Note").as_deref(), Some("12:26"));
        assert_eq!(t("11:40-12:10 PM - Standup").as_deref(), Some("11:40"));
        assert_eq!(t("10:00-11:00 Meeting").as_deref(), Some("10:00"));
        // a 24-hour time that says PM as well
        assert_eq!(t("13:10 PM - Auto-save").as_deref(), Some("13:10"));
        assert_eq!(
            t("12:10 AM (April 4) - Night Watch").as_deref(),
            Some("00:10")
        );
        assert_eq!(t("TODO"), None);
        assert_eq!(t("Version 2026-02-11"), None);
        let (d, topic) = dated_name("2026-02-11-nanobankr-architecture").expect("dated");
        assert_eq!(d.to_string(), "2026-02-11");
        assert_eq!(topic.as_deref(), Some("nanobankr-architecture"));
        assert_eq!(dated_name("2026-02-11").expect("dated").1, None);
        assert!(dated_name("capabilities").is_none());
    }
}
