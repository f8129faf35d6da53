//! The log an agent keeps of what it learned (`.learnings/` at the
//! workspace's top, the self-improving-agent skill's: `LEARNINGS.md`,
//! `ERRORS.md`, `FEATURE_REQUESTS.md`). Each entry (a `## ` section:
//! `## [LRN-20260428-001] repo-scripts-may-ignore-help-flags`, `## [2026-03-17]
//! Hermes Agent 框架拆解`, `## NO GUESSING — verify first (2026-04-25)`) is
//! an `Insight` of its own: a lesson learned (a learning, an error), or a
//! gap (a feature the user asked for that the agent lacks), its summary
//! as its `description`, its action as its `correction`, the entry
//! verbatim as its `entry`, logged when it says. The files' preambles and
//! entry templates are the skill's instructions, left out and said; any
//! other file of the folder is a note, as the memory's are.

use super::super::draft::{Concept, files, short};
use super::Reader;
use serde_json::{Map, json};
use std::path::Path;

/// The log files, and the kind of insight an entry of each is.
const LOGS: [(&str, &str); 3] = [
    ("LEARNINGS.md", "lesson_learned"),
    ("ERRORS.md", "lesson_learned"),
    ("FEATURE_REQUESTS.md", "knowledge_gap"),
];

/// `- Key: value` lines an entry opens with, read as its attributes.
const KEYS: [(&str, &str); 14] = [
    ("logged", "logged"),
    ("status", "status"),
    ("area", "area"),
    ("priority", "priority"),
    ("severity", "severity"),
    ("trigger", "trigger"),
    ("category", "category"),
    ("summary", "summary"),
    ("action", "action"),
    ("suggested action", "action"),
    ("suggested fix", "action"),
    ("fix", "action"),
    ("lesson", "summary"),
    ("context", "context"),
];

impl Reader {
    /// The workspace's `.learnings/`.
    pub(super) fn learnings(&mut self, dir: &Path) {
        if !dir.is_dir() {
            return;
        }
        let rel = self.d.rel(dir);
        let (mut entries, mut notes) = (0, 0);
        for f in files(dir, "md") {
            if self.d.was_read(&f) {
                continue;
            }
            let name = f
                .file_name()
                .map(|s| s.to_string_lossy().to_uppercase())
                .unwrap_or_default();
            match LOGS.iter().find(|(n, _)| n.to_uppercase() == name) {
                Some((_, class)) => entries += self.learning_log(&f, class),
                None => {
                    self.note_or_skip(&f);
                    notes += 1;
                }
            }
        }
        self.d.note(format!(
            "{rel}/: the agent's log of what it learned: {entries} entr{} read as Insights, {notes} other note{}",
            if entries == 1 { "y" } else { "ies" },
            if notes == 1 { "" } else { "s" }
        ));
    }

    /// One log file's entries; how many were read.
    fn learning_log(&mut self, f: &Path, class: &str) -> usize {
        let Some(text) = self.d.text(f) else {
            return 0;
        };
        let rel = self.d.rel(f);
        let lines: Vec<&str> = text.lines().collect();
        // where each entry opens (a `## ` heading outside code)
        let mut opens: Vec<usize> = Vec::new();
        let mut fenced = false;
        for (i, l) in lines.iter().enumerate() {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
            } else if !fenced && l.starts_with("## ") {
                opens.push(i);
            }
        }
        let (mut read, mut templates) = (0, 0);
        for (k, &at) in opens.iter().enumerate() {
            let end = opens.get(k + 1).copied().unwrap_or(lines.len());
            let heading = lines[at][3..].trim();
            let body = &lines[at + 1..end];
            let lower = heading.to_lowercase();
            if heading.contains("YYYYMMDD")
                || heading.contains("XXX")
                || lower.contains("template")
                || lower.contains("short-title")
            {
                templates += 1;
                continue;
            }
            if heading.is_empty() && body.iter().all(|l| l.trim().is_empty()) {
                continue;
            }
            self.learning(f, at + 1, heading, body, class);
            read += 1;
        }
        let before = opens.first().copied().unwrap_or(lines.len());
        let preamble = lines[..before]
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("# "))
            .count();
        if read == 0 && templates > 0 {
            self.d.note(format!(
                "{rel}: the skill's entry template and no entry: nothing imported"
            ));
            return 0;
        }
        if read == 0 {
            // (a log with no entry of its own: kept as a note, whole)
            self.d.forget(f);
            self.note_or_skip(f);
            return 0;
        }
        if preamble > 0 || templates > 0 {
            self.d.note(format!(
                "{rel}: {read} entr{} read; its preamble ({preamble} line{}) and {templates} entry template{} are the skill's instructions, left out",
                if read == 1 { "y" } else { "ies" },
                if preamble == 1 { "" } else { "s" },
                if templates == 1 { "" } else { "s" }
            ));
        }
        read
    }

    /// One entry as an Insight.
    fn learning(&mut self, f: &Path, line: usize, heading: &str, body: &[&str], class: &str) {
        let (id, day, title) = entry_heading(heading);
        let mut keys: Map<String, serde_json::Value> = Map::new();
        let mut sections: Vec<(String, Vec<String>)> = Vec::new();
        let mut prose: Option<String> = None;
        for l in body {
            let t = l.trim();
            if let Some(h) = t.strip_prefix("### ") {
                sections.push((h.trim().to_lowercase(), Vec::new()));
                continue;
            }
            if t.is_empty() || t == "---" {
                continue;
            }
            // (a key line is no prose, whether it is read or not:
            // `**source: NousResearch/hermes-agent**`)
            if let Some((k, v)) = key_line(t) {
                if let Some((_, key)) = KEYS.iter().find(|(n, _)| *n == k) {
                    keys.entry(key.to_string()).or_insert_with(|| json!(v));
                }
                continue;
            }
            match sections.last_mut() {
                Some((_, text)) => text.push(t.to_string()),
                None => {
                    prose.get_or_insert_with(|| t.to_string());
                }
            }
        }
        let first_of = |names: &[&str]| {
            sections
                .iter()
                .find(|(n, text)| names.contains(&n.as_str()) && !text.is_empty())
                .map(|(_, text)| text.join(" "))
        };
        let summary = keys
            .get("summary")
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .or_else(|| first_of(&["summary", "what happened"]))
            .or(prose)
            .unwrap_or_else(|| title.clone());
        let action = keys
            .get("action")
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .or_else(|| first_of(&["suggested action", "suggested fix", "action", "fix"]));
        let category = keys
            .get("category")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_lowercase();
        let class = if category.contains("knowledge_gap") || heading.contains("knowledge_gap") {
            "knowledge_gap"
        } else if category.contains("best_practice") {
            "operational_discovery"
        } else {
            class
        };
        let mut attrs = Map::new();
        attrs.insert("insight_class".into(), json!(class));
        attrs.insert("description".into(), json!(summary));
        if let Some(a) = action {
            attrs.insert("correction".into(), json!(a));
        }
        if let Some(t) = keys.get("trigger") {
            attrs.insert("trigger".into(), t.clone());
        }
        if let Some(c) = first_of(&["details", "context", "error"]).or_else(|| {
            keys.get("context")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        }) {
            attrs.insert("context".into(), json!(c));
        }
        for k in ["status", "area", "priority", "severity", "category"] {
            if let Some(v) = keys.get(k) {
                attrs.insert(k.into(), v.clone());
            }
        }
        if let Some(id) = &id {
            attrs.insert("learning_id".into(), json!(id));
        }
        let mut entry = vec![format!("## {heading}")];
        entry.extend(body.iter().map(|l| l.to_string()));
        attrs.insert("entry".into(), json!(entry.join("\n").trim_end()));
        let src = self.d.at(f, line);
        let mut meta = self.d.provenance(&src);
        let logged = keys
            .get("logged")
            .and_then(|v| v.as_str())
            .filter(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok())
            .map(str::to_string)
            .or_else(|| day.map(|d| format!("{d}T00:00:00Z")));
        if let Some(t) = logged {
            meta.insert("created_at".into(), json!(t));
        }
        let name = self.unique("Insight", &short(&title, 80));
        self.d.concept(Concept {
            ty: "Insight".into(),
            name,
            attrs,
            meta,
            what: "Insight (the agent's log of what it learned)".into(),
            source: src,
        });
    }
}

/// An entry's heading: its id (`LRN-20260428-001`), its day, and its
/// title (`repo-scripts-may-ignore-help-flags` → `repo scripts may ignore
/// help flags`).
fn entry_heading(h: &str) -> (Option<String>, Option<chrono::NaiveDate>, String) {
    let date = |s: &str| chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok();
    let mut rest = h.trim().to_string();
    let (mut id, mut day) = (None, None);
    // `[LRN-20260428-001] …`, `[2026-03-17] …`
    if let Some(inner) = rest.strip_prefix('[')
        && let Some((tag, after)) = inner.split_once(']')
    {
        match date(tag) {
            Some(d) => day = Some(d),
            None => {
                id = Some(tag.trim().to_string());
                day = tag
                    .split('-')
                    .find(|p| p.len() == 8 && p.chars().all(|c| c.is_ascii_digit()))
                    .and_then(|p| chrono::NaiveDate::parse_from_str(p, "%Y%m%d").ok());
            }
        }
        rest = after.trim().to_string();
    }
    // `… (2026-04-22)`
    if let Some(open) = rest.rfind('(')
        && rest.ends_with(')')
        && let Some(d) = date(&rest[open + 1..rest.len() - 1])
    {
        day.get_or_insert(d);
        rest = rest[..open].trim().to_string();
    }
    // `2026-04-25 — …`, `2026-04-26 (later) — …`
    if let Some(d) = rest.get(..10).and_then(date) {
        day.get_or_insert(d);
        let after = rest[10..].trim_start();
        let after = match after.strip_prefix('(') {
            Some(x) => x.split_once(')').map_or(x, |(_, r)| r),
            None => after,
        };
        rest = after
            .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '—' | '-' | '–' | ':'))
            .to_string();
    }
    let rest = rest.trim();
    let title = if !rest.contains(' ') && rest.contains(['-', '_']) {
        rest.replace(['-', '_'], " ")
    } else {
        rest.to_string()
    };
    let title = if title.is_empty() {
        id.clone().unwrap_or_else(|| "learning".into())
    } else {
        title
    };
    (id, day, title)
}

/// `- Summary: …`, `**Priority**: high`, `**category: architecture_study**`:
/// (key lower case, value).
fn key_line(t: &str) -> Option<(String, String)> {
    let t = t.trim_start_matches(['-', '*', ' ']).replace("**", "");
    let (k, v) = t.split_once(':')?;
    let k = k.trim().to_lowercase();
    let v = v.trim();
    (!k.is_empty()
        && k.len() <= 24
        && k.chars().all(|c| c.is_alphabetic() || c == ' ' || c == '_')
        && !v.is_empty())
    .then(|| (k, v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entrys_heading_gives_its_id_day_and_title() {
        let d = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok();
        assert_eq!(
            entry_heading("[LRN-20260428-001] repo-scripts-may-ignore-help-flags"),
            (
                Some("LRN-20260428-001".into()),
                d("2026-04-28"),
                "repo scripts may ignore help flags".into()
            )
        );
        assert_eq!(
            entry_heading("[2026-03-17] Hermes Agent 框架拆解 — 自进化设计精华"),
            (
                None,
                d("2026-03-17"),
                "Hermes Agent 框架拆解 — 自进化设计精华".into()
            )
        );
        assert_eq!(
            entry_heading("NO GUESSING — verify first (2026-04-25)"),
            (None, d("2026-04-25"), "NO GUESSING — verify first".into())
        );
        assert_eq!(
            entry_heading("2026-04-26 (later) — Bonjour plugin crash loop, config-only fix"),
            (
                None,
                d("2026-04-26"),
                "Bonjour plugin crash loop, config-only fix".into()
            )
        );
    }
}
