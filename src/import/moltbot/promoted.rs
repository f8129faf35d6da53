//! What OpenClaw's memory promotion ("dreaming") copies into `MEMORY.md`:
//! a `## Promoted From Short-Term Memory (2026-05-04)` block of lines, each
//! after a marker naming the daily note and lines it came from
//! (`<!-- openclaw-memory-promotion:memory:memory/2026-04-29.md:42:42 -->`)
//! and ending with how it was scored (`[score=0.876 recalls=0 avg=0.620
//! source=memory/2026-04-29.md:42-42]`). Each such line is a memory of its
//! own: an `Insight` (`insight_class: "promoted"`) in its own words, with
//! where it came from, when it was promoted and its score as attributes,
//! never a note whose text is the markers and scores.

use super::super::draft::{Concept, short};
use super::{Reader, core_meta};
use serde_json::{Map, json};
use std::path::Path;
use std::sync::OnceLock;

/// One promoted line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Promoted {
    /// Its line in `MEMORY.md` (1-based).
    pub line: usize,
    /// What it says, without the bullet and the score.
    pub text: String,
    /// The daily note and lines it was promoted from
    /// (`memory/2026-04-29.md:42-42`).
    pub from: Option<String>,
    pub score: Option<f64>,
    pub recalls: Option<i64>,
}

fn marker() -> &'static regex::Regex {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            r"^\s*<!--\s*openclaw-memory-promotion:[^:\s]*:(.+?):(\d+):(\d+)\s*-->\s*$",
        )
        .expect("the promotion marker")
    })
}

fn scored() -> &'static regex::Regex {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            r"\s*\[score=([0-9.]+)(?:\s+recalls=(\d+))?(?:\s+avg=[0-9.]+)?(?:\s+source=([^\]]+))?\]\s*$",
        )
        .expect("the promotion score")
    })
}

/// The day a promotion block's title gives: `Promoted From Short-Term
/// Memory (2026-05-04)`.
pub(super) fn promoted_on(title: &str) -> Option<chrono::NaiveDate> {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    let re = R.get_or_init(|| regex::Regex::new(r"(\d{4}-\d{2}-\d{2})").expect("a day"));
    let c = re.captures(title)?;
    chrono::NaiveDate::parse_from_str(c.get(1)?.as_str(), "%Y-%m-%d").ok()
}

/// Takes the promoted lines out of a block's lines (`body`, the lines
/// under its title at line `at`, and `bullets`, those of them that are
/// bullets with their line): each marker and the lines up to the next
/// marker, blank line or heading. What else it holds stays. Body line `i`
/// is line `at + 1 + i` of the file.
pub(super) fn take(
    at: usize,
    body: &mut Vec<String>,
    bullets: &mut Vec<(usize, String)>,
) -> Vec<Promoted> {
    if !body.iter().any(|l| marker().is_match(l)) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut taken = std::collections::HashSet::new();
    let mut i = 0;
    while i < body.len() {
        let Some(c) = marker().captures(&body[i]) else {
            i += 1;
            continue;
        };
        let marked = format!(
            "{}:{}-{}",
            &c[1],
            c.get(2).map_or("", |m| m.as_str()),
            c.get(3).map_or("", |m| m.as_str())
        );
        taken.insert(i);
        let first = i + 1;
        let mut j = first;
        let mut lines: Vec<String> = Vec::new();
        while j < body.len() {
            let t = body[j].trim();
            if t.is_empty() || t.starts_with('#') || marker().is_match(t) {
                break;
            }
            lines.push(t.to_string());
            taken.insert(j);
            j += 1;
        }
        i = j;
        if lines.is_empty() {
            continue;
        }
        let mut text = lines.join("\n");
        let (mut score, mut recalls, mut from) = (None, None, Some(marked));
        if let Some(s) = scored().captures(&text) {
            score = s.get(1).and_then(|m| m.as_str().parse().ok());
            recalls = s.get(2).and_then(|m| m.as_str().parse().ok());
            if let Some(src) = s.get(3) {
                from = Some(src.as_str().trim().to_string());
            }
            let at = s.get(0).map_or(text.len(), |m| m.start());
            text.truncate(at);
        }
        // the bullet it was written as (`- `, and `- - ` for a bullet of
        // the note it came from)
        let mut t = text.trim();
        while let Some(rest) = super::bullet(t) {
            t = rest.trim_start();
        }
        if t.is_empty() {
            continue;
        }
        out.push(Promoted {
            line: at + 1 + first,
            text: t.to_string(),
            from,
            score,
            recalls,
        });
    }
    let kept: Vec<String> = body
        .iter()
        .enumerate()
        .filter(|(i, _)| !taken.contains(i))
        .map(|(_, l)| l.clone())
        .collect();
    *body = kept;
    bullets.retain(|(n, _)| n.checked_sub(at + 1).is_none_or(|i| !taken.contains(&i)));
    out
}

impl Reader {
    /// A promoted line: an `Insight` named by its first words, its words
    /// verbatim as the `description`, `promoted_from` the daily note and
    /// lines, `promoted_on` the block's day, its score and recalls;
    /// pinned, as `MEMORY.md`'s long-term memory is.
    pub(super) fn promoted_note(&mut self, p: &Path, section: &str, it: &Promoted) {
        // (a newer OpenClaw promotes a whole chunk of a note flattened to a
        // line: its headings' and list items' marks, `# 2026-02-02 Daily
        // Log ## 00:08 - …`, are no part of its name)
        let words: Vec<&str> = it
            .text
            .split_whitespace()
            .filter(|w| !w.chars().all(|c| c == '#'))
            .collect();
        let words = match words.first() {
            Some(&"-" | &"*") => &words[1..],
            _ => &words[..],
        };
        let label: String = words.join(" ").replace("**", "");
        let name = self.unique("Insight", &short(&label, 80));
        let source = self.d.at(p, it.line);
        let mut meta = core_meta(&self.d, source.clone());
        meta.insert("pinned".into(), json!(true));
        let mut attrs = Map::new();
        attrs.insert("description".into(), json!(it.text));
        attrs.insert("insight_class".into(), json!("promoted"));
        attrs.insert("note_file".into(), json!(self.d.rel(p)));
        attrs.insert("note_section".into(), json!(section));
        if let Some(f) = &it.from {
            attrs.insert("promoted_from".into(), json!(f));
        }
        if let Some(d) = promoted_on(section) {
            attrs.insert("promoted_on".into(), json!(d.to_string()));
        }
        if let Some(s) = it.score {
            attrs.insert("promotion_score".into(), json!(s));
        }
        if let Some(r) = it.recalls {
            attrs.insert("promotion_recalls".into(), json!(r));
        }
        if let Some((file, first)) = it.from.as_deref().and_then(file_and_line) {
            self.promoted
                .push((name.clone(), file, first, source.clone()));
        }
        self.d.concept(Concept {
            ty: "Insight".into(),
            name,
            attrs,
            meta,
            what: "Insight (MEMORY.md promoted line)".into(),
            source,
        });
    }

    /// Links each promoted line to the daily note's Event it came from
    /// (`derived_from`: the Event whose section holds its first line), once
    /// every note is read; a line whose note was not imported keeps only
    /// its `promoted_from`.
    pub(super) fn link_promoted(&mut self) {
        let promoted = std::mem::take(&mut self.promoted);
        if promoted.is_empty() {
            return;
        }
        let prefix = format!("{}:", self.d.author);
        let events: Vec<(String, String, usize)> = self
            .d
            .concepts()
            .iter()
            .filter(|c| c.ty == "Event")
            .filter_map(|c| {
                let rest = c.source.strip_prefix(&prefix)?;
                let (file, line) = rest.rsplit_once(':')?;
                Some((c.name.clone(), file.to_string(), line.parse().ok()?))
            })
            .collect();
        for (name, file, first, source) in promoted {
            let Some((event, _, _)) = events
                .iter()
                .filter(|(_, f, l)| *f == file && *l <= first)
                .max_by_key(|(_, _, l)| *l)
            else {
                continue;
            };
            let meta = self.d.provenance(&source);
            self.d.link(super::Link {
                from: ("Insight".into(), name),
                predicate: "derived_from".into(),
                to: ("Event".into(), event.clone()),
                meta,
                source,
            });
        }
    }
}

/// `memory/2026-04-29.md:42-42` → (`memory/2026-04-29.md`, 42).
fn file_and_line(from: &str) -> Option<(String, usize)> {
    let (file, lines) = from.rsplit_once(':')?;
    let first = lines.split('-').next()?.trim().parse().ok()?;
    Some((file.to_string(), first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promoted_lines_are_taken_with_their_source_and_score() {
        let text = "## Promoted From Short-Term Memory (2026-05-04)\n\n<!-- openclaw-memory-promotion:memory:memory/2026-04-29.md:42:42 -->\n- ** Engineering（工程实践）** [score=0.876 recalls=0 avg=0.620 source=memory/2026-04-29.md:42-42]\n<!-- openclaw-memory-promotion:memory:memory/2026-04-15.md:449:449 -->\n- - Candidate: Possible Lasting Truths: none [score=0.845 recalls=2 avg=0.620 source=memory/2026-04-15.md:449-449]\n<!-- openclaw-memory-promotion:memory:memory/project alpha/2026-04-01.md:2:3 -->\n- Woke up for the first time.\n  No memory files existed yet.\n<!-- openclaw-memory-promotion:memory:memory/x.md:1:1 -->\n\nA line of the block's own.\n";
        let mut lines: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
        let mut bullets: Vec<(usize, String)> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("- "))
            .map(|(i, l)| (i + 2, l[2..].to_string()))
            .collect();
        let got = take(1, &mut lines, &mut bullets);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].text, "** Engineering（工程实践）**");
        assert_eq!(got[0].line, 4);
        assert_eq!(got[0].score, Some(0.876));
        assert_eq!(got[0].recalls, Some(0));
        assert_eq!(got[0].from.as_deref(), Some("memory/2026-04-29.md:42-42"));
        assert_eq!(got[1].text, "Candidate: Possible Lasting Truths: none");
        assert_eq!(got[1].recalls, Some(2));
        // no score: the marker names where it came from
        assert_eq!(
            got[2].text,
            "Woke up for the first time.\nNo memory files existed yet."
        );
        assert_eq!(
            got[2].from.as_deref(),
            Some("memory/project alpha/2026-04-01.md:2-3")
        );
        assert_eq!(got[2].score, None);
        // what the block says besides stays in it; the markers do not
        assert_eq!(lines.join("\n").trim(), "A line of the block's own.");
        assert!(bullets.is_empty(), "{bullets:?}");
        assert_eq!(
            promoted_on("Promoted From Short-Term Memory (2026-05-04)"),
            chrono::NaiveDate::from_ymd_opt(2026, 5, 4)
        );
    }
}
