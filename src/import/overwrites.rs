//! What an import does not change on its own: a value the memory already
//! holds that someone other than this import wrote (the agent, the
//! operator, a sleep cycle, another source). Files kept elsewhere go on
//! saying what they said when the memory has moved on (the user told the
//! agent she moved; the file still has the old time zone), so importing
//! them again would silently take the memory back. Such a write is held
//! back and proposed for review instead, naming both values and who wrote
//! the one it would replace. A value this same import wrote (the file
//! changed since) or that the memory was born with is replaced at once.

use crate::audit::{self, Entry};
use crate::kip::KipResult;
use crate::review::proposals::Draft;
use crate::store::db::Db;
use serde_json::{Map, Value};

/// One value a write would replace.
#[derive(Debug, Clone)]
pub struct Overwrite {
    /// `Person: Lucía Fernández`, or a link's id.
    pub element: String,
    pub id: String,
    /// `timezone`, or `metadata.source`.
    pub key: String,
    pub was: Value,
    pub now: Value,
    /// Who wrote the value the memory holds; None when the trail cannot
    /// tell (its images were pruned).
    pub by: Option<Entry>,
}

impl Overwrite {
    /// `Person: Lucía Fernández timezone: the memory holds
    /// "America/Mexico_City" (written by agent, entry #15 at …), the file
    /// says "Europe/Madrid"`.
    pub fn describe(&self) -> String {
        format!(
            "{} {}: the memory holds {} ({}), the file says {}",
            self.element,
            self.key,
            short(&self.was),
            match &self.by {
                Some(e) => format!("written by {}, entry #{} at {}", e.actor, e.id, e.at),
                None => "its writer is no longer on record".into(),
            },
            short(&self.now)
        )
    }
}

/// A value as it reads in a note: JSON, cut at 80 characters with `…`.
fn short(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 80 {
        format!("{}…", t.chars().take(79).collect::<String>())
    } else {
        t
    }
}

/// The values audit entry `entry` (a write of this import, not yet
/// committed) replaced that were written by someone other than the
/// import's `group`. Engine stamps (`_version`, `_updated_at`) are not
/// values anyone wrote, and a value the memory was bootstrapped with is a
/// default the import may replace.
pub fn of_entry(db: Db<'_>, entry: i64, group: &str) -> KipResult<Vec<Overwrite>> {
    let mut out = Vec::new();
    for c in audit::changes(db, entry)? {
        if c.op != "update" {
            continue;
        }
        let Some(before) = c.before.as_ref() else {
            continue;
        };
        let Some(after) = audit::image_now(db, c.element)? else {
            continue;
        };
        let element = match (before.get("type"), before.get("name")) {
            (Some(t), Some(n)) => format!(
                "{}: {}",
                t.as_str().unwrap_or("?"),
                n.as_str().unwrap_or("?")
            ),
            _ => c.kip_id(),
        };
        let empty = Map::new();
        for side in ["attributes", "metadata"] {
            let was_all = before
                .get(side)
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let now_all = after.get(side).and_then(Value::as_object).unwrap_or(&empty);
            for (k, was) in was_all {
                if was.is_null() || k.starts_with('_') {
                    continue;
                }
                let now = now_all.get(k).cloned().unwrap_or(Value::Null);
                if &now == was {
                    continue;
                }
                let by = audit::writer_of(db, c.element, entry, &[side, k])?;
                let ours = by
                    .as_ref()
                    .is_some_and(|e| e.batch.as_deref() == Some(group) || e.kind == "BOOTSTRAP");
                if ours {
                    continue;
                }
                out.push(Overwrite {
                    element: element.clone(),
                    id: c.kip_id(),
                    key: if side == "attributes" {
                        k.clone()
                    } else {
                        format!("metadata.{k}")
                    },
                    was: was.clone(),
                    now,
                    by,
                });
            }
        }
    }
    Ok(out)
}

/// The proposal item a held-back write becomes: its own command and
/// parameters, titled by the first value it would replace.
pub fn draft(source: &str, w: &super::Write, over: &[Overwrite]) -> Draft {
    let first = &over[0];
    let title = format!(
        "{} {}: {} → {}{}",
        first.element,
        first.key,
        short(&first.was),
        short(&first.now),
        if over.len() > 1 {
            format!(" (and {} more)", over.len() - 1)
        } else {
            String::new()
        }
    );
    let mut rationale = format!(
        "{} (imported from {}) would replace what someone else wrote since:",
        w.what, w.source
    );
    for o in over {
        rationale.push_str("\n- ");
        rationale.push_str(&o.describe());
    }
    rationale.push_str("\nApprove to take the file's values; reject to keep the memory's (the same write is not proposed again while those elements stay as they are).");
    let mut evidence: Vec<String> = over.iter().map(|o| o.id.clone()).collect();
    evidence.dedup();
    Draft {
        class: CLASS.into(),
        key: format!(
            "{CLASS}:{source}:{}",
            crate::store::keys::digest(&format!(
                "{}\u{0}{}",
                w.text,
                Value::Object(w.params.clone())
            ))
        ),
        title,
        commands: vec![w.text.clone()],
        params: w.params.clone(),
        rationale,
        evidence,
        confidence: 0.5,
    }
}

/// The item class of what imports propose (an operator may set it to
/// `auto`: imports then replace such values without review, as before).
pub const CLASS: &str = crate::review::proposals::IMPORT;
