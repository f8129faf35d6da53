//! KIP syntax highlighting. The keyword set is read from the grammar
//! itself (`kip.pest`), so the console and the parser never disagree on
//! what a keyword is.

use super::theme;
use ratatui::style::Style;
use ratatui::text::Span;
use std::collections::HashSet;
use std::sync::OnceLock;

const GRAMMAR: &str = include_str!("../kip/kip.pest");

/// Every keyword and built-in function name the grammar accepts.
pub fn keywords() -> &'static Vec<String> {
    static KW: OnceLock<Vec<String>> = OnceLock::new();
    KW.get_or_init(|| {
        let mut out: Vec<String> = Vec::new();
        for line in GRAMMAR.lines() {
            let l = line.trim_start();
            let is_kw = l.starts_with("kw_")
                || l.starts_with("agg_func")
                || l.starts_with("null_fn_name")
                || l.starts_with("str_fn_name")
                || l.starts_with("update_fn_name")
                || l.starts_with("in_func");
            if !is_kw {
                continue;
            }
            // every quoted upper-case word on the rule's line
            let mut rest = l;
            while let Some(a) = rest.find('"') {
                let after = &rest[a + 1..];
                let Some(b) = after.find('"') else { break };
                let word = &after[..b];
                if !word.is_empty()
                    && word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                    && !out.iter().any(|w| w == word)
                {
                    out.push(word.to_string());
                }
                rest = &after[b + 1..];
            }
        }
        out.sort();
        out
    })
}

fn keyword_set() -> &'static HashSet<String> {
    static S: OnceLock<HashSet<String>> = OnceLock::new();
    S.get_or_init(|| keywords().iter().cloned().collect())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    Keyword,
    Variable,
    Param,
    Str,
    TypeName,
    Predicate,
    Number,
    Comment,
    Plain,
}

/// Splits one line into `(byte range, token class)`. `types` and
/// `predicates` are the live schema's names.
pub fn tokenize(
    line: &str,
    types: &HashSet<String>,
    predicates: &HashSet<String>,
) -> Vec<(usize, usize, Tok)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut last_key: Option<String> = None;
    while i < b.len() {
        let c = b[i] as char;
        let start = i;
        if c == '/' && b.get(i + 1) == Some(&b'/') {
            out.push((i, b.len(), Tok::Comment));
            break;
        }
        if c == '"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            // an unterminated string runs to the line's end (which is a
            // character boundary; one byte before it may not be)
            let closed = i < b.len();
            let end = if closed { i } else { b.len() };
            i = if closed { i + 1 } else { b.len() };
            let text = line.get(start + 1..end).unwrap_or("");
            let tok = match last_key.as_deref() {
                Some("type") if types.contains(text) || text.starts_with('$') => Tok::TypeName,
                _ if predicates.contains(text) => Tok::Predicate,
                _ if types.contains(text) && last_key.as_deref() != Some("name") => Tok::TypeName,
                _ => Tok::Str,
            };
            out.push((start, i, tok));
            last_key = None;
            continue;
        }
        if (c == '?' || c == ':' || c == '$')
            && b.get(i + 1)
                .is_some_and(|x| x.is_ascii_alphabetic() || *x == b'_')
        {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((start, i, if c == ':' { Tok::Param } else { Tok::Variable }));
            continue;
        }
        if c.is_ascii_digit() || (c == '-' && b.get(i + 1).is_some_and(|x| x.is_ascii_digit())) {
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'+' || b[i] == b'-')
            {
                i += 1;
            }
            out.push((start, i, Tok::Number));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let w = &line[start..i];
            if keyword_set().contains(w) || matches!(w, "true" | "false" | "null") {
                out.push((start, i, Tok::Keyword));
            } else {
                out.push((start, i, Tok::Plain));
                last_key = Some(w.to_string());
            }
            continue;
        }
        // multi-byte characters pass through as plain text
        let ch_len = line[i..].chars().next().map(char::len_utf8).unwrap_or(1);
        i += ch_len;
        out.push((start, i, Tok::Plain));
    }
    out
}

pub fn style(t: Tok) -> Style {
    match t {
        Tok::Keyword => theme::keyword(),
        Tok::Variable => theme::variable(),
        Tok::Param => theme::param(),
        Tok::Str => theme::string(),
        Tok::TypeName => theme::type_name(),
        Tok::Predicate => theme::predicate(),
        Tok::Number => theme::number(),
        Tok::Comment => theme::comment(),
        Tok::Plain => theme::base(),
    }
}

/// Highlighted spans of one line, with `marks` (byte offsets) emphasised
/// (matching brackets).
pub fn spans<'a>(
    line: &'a str,
    types: &HashSet<String>,
    predicates: &HashSet<String>,
    marks: &[usize],
) -> Vec<Span<'a>> {
    let mut out = Vec::new();
    for (s, e, t) in tokenize(line, types, predicates) {
        let st = style(t);
        let mut pos = s;
        for &m in marks.iter().filter(|m| **m >= s && **m < e) {
            if m > pos {
                out.push(Span::styled(&line[pos..m], st));
            }
            let end = m + line[m..].chars().next().map(char::len_utf8).unwrap_or(1);
            out.push(Span::styled(
                &line[m..end],
                st.patch(theme::bracket_match()),
            ));
            pos = end;
        }
        if pos < e {
            out.push(Span::styled(&line[pos..e], st));
        }
    }
    out
}

/// The bracket matching the one at (row, byte col), if any.
pub fn matching_bracket(lines: &[String], row: usize, col: usize) -> Option<(usize, usize)> {
    let line = lines.get(row)?;
    let ch = line[col..].chars().next()?;
    let (open, close, forward) = match ch {
        '(' => ('(', ')', true),
        '{' => ('{', '}', true),
        '[' => ('[', ']', true),
        ')' => ('(', ')', false),
        '}' => ('{', '}', false),
        ']' => ('[', ']', false),
        _ => return None,
    };
    let mut depth = 0i32;
    if forward {
        for (r, l) in lines.iter().enumerate().skip(row) {
            let start = if r == row { col } else { 0 };
            for (i, c) in l[start..].char_indices() {
                if c == open {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth == 0 {
                        return Some((r, start + i));
                    }
                }
            }
        }
    } else {
        for r in (0..=row).rev() {
            let l = &lines[r];
            let end = if r == row { col + 1 } else { l.len() };
            for (i, c) in l[..end].char_indices().rev() {
                if c == close {
                    depth += 1;
                } else if c == open {
                    depth -= 1;
                    if depth == 0 {
                        return Some((r, i));
                    }
                }
            }
        }
    }
    None
}
