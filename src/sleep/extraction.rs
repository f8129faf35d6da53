//! What an Event teaches, read offline: a cue that opens a clause
//! ("prefers", "decided", "learned that") and what follows it up to the
//! clause's end is the knowledge extracted.

use super::views::{EventView, Extracted};

/// Cue phrases that state stable knowledge, with what they state. A cue
/// must open a clause ("decided no coffee after 2pm"), and what follows it
/// up to the clause's end is the knowledge.
pub const EXTRACTION_CUES: &[(&str, &str)] = &[
    ("prefers", "preference"),
    ("would rather", "preference"),
    ("likes", "preference"),
    ("loves", "preference"),
    ("enjoys", "preference"),
    ("hates", "preference"),
    ("dislikes", "preference"),
    ("avoids", "preference"),
    ("doesn't like", "preference"),
    ("does not like", "preference"),
    ("can't stand", "preference"),
    ("decided to", "decision"),
    ("decided", "decision"),
    ("agreed to", "decision"),
    ("chose", "decision"),
    ("settled on", "decision"),
    ("plans to", "plan"),
    ("is planning to", "plan"),
    ("intends to", "plan"),
];

/// Words that end the knowledge a cue states: a reason or a condition
/// is context, not the knowledge.
const CLAUSE_ENDS: &[&str] = &[" because ", " since ", " but ", " although ", " so that "];

/// An extracted statement is at most this many words.
pub const EXTRACTION_MAX_WORDS: usize = 8;

/// The knowledge an Event's summary states outright, by cue phrase.
pub fn extract(e: &EventView) -> Vec<Extracted> {
    let holder = e
        .linked
        .iter()
        .find(|(t, n)| t == "Person" && !n.starts_with('$'))
        .map(|(_, n)| n.clone());
    let mut out: Vec<Extracted> = Vec::new();
    for clause in e.summary.split(['.', ';', '!', '?', '\n']) {
        let lower = format!(" {} ", clause.trim().to_lowercase());
        let Some((cue, kind, at)) = EXTRACTION_CUES.iter().find_map(|(c, k)| {
            lower
                .find(&format!(" {c} "))
                .map(|i| (*c, *k, i + c.len() + 2))
        }) else {
            continue;
        };
        let mut rest = lower[at..].trim().to_string();
        for end in CLAUSE_ENDS {
            if let Some(i) = format!(" {rest} ").find(end) {
                rest.truncate(i.saturating_sub(1).min(rest.len()));
            }
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.is_empty() || words.len() > EXTRACTION_MAX_WORDS {
            continue;
        }
        // the knowledge as the Event wrote it (its case kept)
        let original = clause.trim();
        let start = original.to_lowercase().find(&words.join(" ")).unwrap_or(0);
        let stated = original
            .get(start..start + words.join(" ").len())
            .unwrap_or(&rest)
            .to_string();
        let (ty, name) = match kind {
            "preference" => {
                let verb = match cue {
                    "hates" | "dislikes" | "avoids" | "doesn't like" | "does not like"
                    | "can't stand" => "Avoids",
                    _ => "Prefers",
                };
                ("Preference", format!("{verb} {stated}"))
            }
            _ => {
                let mut n = stated.clone();
                if let Some(c) = n.get(..1) {
                    n = c.to_uppercase() + &n[1..];
                }
                (if kind == "plan" { "Plan" } else { "Decision" }, n)
            }
        };
        if out.iter().any(|x| x.name == name) {
            continue;
        }
        out.push(Extracted {
            ty: ty.into(),
            name,
            description: format!("{}: \"{}\" ({})", kind, original, e.name),
            kind: kind.into(),
            cue: cue.into(),
            holder: holder.clone(),
        });
    }
    out
}
