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
use std::collections::HashMap;

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
    /// The file still says what this import wrote before (`now` is a
    /// value the import left, later replaced by `by`): the memory's newer
    /// value is kept without asking.
    pub stale_file: bool,
    /// The element itself was deleted by `by` (a merge, a reclamation, the
    /// operator): the write would bring it back.
    pub brought_back: bool,
}

impl Overwrite {
    /// `Person: Lucía Fernández timezone: the memory holds
    /// "America/Mexico_City" (written by agent, entry #15 at …), the file
    /// says "Europe/Madrid"`.
    /// `written by agent, entry #15 at …`.
    fn writer(&self) -> String {
        match &self.by {
            Some(e) => format!("written by {}, entry #{} at {}", e.actor, e.id, e.at),
            None => "its writer is no longer on record".into(),
        }
    }

    pub fn describe(&self) -> String {
        if self.brought_back {
            return format!(
                "{} was deleted ({}); {}",
                self.element,
                match &self.by {
                    Some(e) => by(e),
                    None => "its deleter is no longer on record".into(),
                },
                if self.stale_file {
                    "left out: the file still says what it said when imported"
                } else {
                    "the file would bring it back"
                }
            );
        }
        if self.stale_file {
            return format!(
                "{} {}: kept the memory's {} ({}); the file still says {}, as when it was imported",
                self.element,
                self.key,
                short(&self.was),
                self.writer(),
                short(&self.now)
            );
        }
        format!(
            "{} {}: the memory holds {} ({}), the file says {}",
            self.element,
            self.key,
            short(&self.was),
            self.writer(),
            short(&self.now)
        )
    }
}

/// `by operator, entry #99 at …: why` (the why cut at 80 characters).
fn by(e: &Entry) -> String {
    format!(
        "by {}, entry #{} at {}{}",
        e.actor,
        e.id,
        e.at,
        e.reason
            .as_deref()
            .map(|r| {
                let c = super::draft::short(r, 80);
                if c.len() < r.trim().len() {
                    format!(": {c}…")
                } else {
                    format!(": {c}")
                }
            })
            .unwrap_or_default()
    )
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
pub fn of_entry(
    db: Db<'_>,
    entry: i64,
    group: &str,
    deleted: &Deleted,
) -> KipResult<Vec<Overwrite>> {
    let mut out = Vec::new();
    // what a write created matters only when something was deleted
    let changes = if deleted.is_empty() {
        audit::recorded_changes(db, entry)?
    } else {
        audit::changes(db, entry)?
    };
    for c in changes {
        if c.op == "insert" {
            if let Some(img) = c.after.as_ref()
                && let Some((mut label, by, unchanged)) = deleted.of(img)
            {
                if let (Some(s), Some(p), Some(o)) = (
                    img.get("subject").and_then(Value::as_i64),
                    img.get("predicate").and_then(Value::as_str),
                    img.get("object").and_then(Value::as_i64),
                ) {
                    let (s, _) = crate::engine::overview::label(db, s)?;
                    let (o, _) = crate::engine::overview::label(db, o)?;
                    label = format!("{s} -{p}-> {o}");
                }
                out.push(Overwrite {
                    element: label,
                    id: c.kip_id(),
                    key: String::new(),
                    was: Value::Null,
                    now: Value::Null,
                    by: Some(by.clone()),
                    stale_file: unchanged,
                    brought_back: true,
                });
            }
            continue;
        }
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
                let stale_file = audit::values_left(db, c.element, entry, &[side, k])?
                    .iter()
                    .any(|(e, v)| e.batch.as_deref() == Some(group) && v == &now);
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
                    stale_file,
                    brought_back: false,
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
        "{}{}",
        if first.brought_back {
            format!("bring back {}", first.element)
        } else {
            format!(
                "{} {}: {} → {}",
                first.element,
                first.key,
                short(&first.was),
                short(&first.now)
            )
        },
        if over.len() > 1 {
            format!(" (and {} more)", over.len() - 1)
        } else {
            String::new()
        }
    );
    let mut rationale = format!(
        "{} (imported from {}) would replace what someone else wrote or deleted since:",
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

/// What someone other than an import deleted (its own rollbacks aside: an
/// undone import is imported again on purpose), with the newest entry
/// that deleted it: concepts by type and name, links by their endpoints'
/// ids and predicate.
#[derive(Debug, Default)]
pub struct Deleted {
    concepts: HashMap<(String, String), (Entry, Value)>,
    links: HashMap<(i64, String, i64), (Entry, Value)>,
}

impl Deleted {
    /// Read from the audit trail once per import: one pass over its
    /// deletions.
    pub fn read(db: Db<'_>, group: &str) -> KipResult<Deleted> {
        let mut out = Deleted::default();
        let mut entries: HashMap<i64, Option<Entry>> = HashMap::new();
        let rows = db.query(
            "SELECT c.entry, c.before FROM audit_changes c JOIN audit_log l ON l.id = c.entry \
             WHERE c.op = 'delete' AND c.before IS NOT NULL AND l.kind <> 'ROLLBACK' \
             AND (l.batch IS NULL OR l.batch <> ?1) ORDER BY c.id",
            crate::args![group],
        )?;
        for r in rows {
            let id = r.i64(0)?;
            let Ok(img) = serde_json::from_str::<Value>(&r.text(1)?) else {
                continue;
            };
            if let std::collections::hash_map::Entry::Vacant(v) = entries.entry(id) {
                v.insert(audit::entry(db, id)?);
            }
            let Some(Some(e)) = entries.get(&id) else {
                continue;
            };
            if let Some(p) = img.get("predicate").and_then(Value::as_str) {
                if let (Some(s), Some(o)) = (
                    img.get("subject").and_then(Value::as_i64),
                    img.get("object").and_then(Value::as_i64),
                ) {
                    out.links
                        .insert((s, p.to_string(), o), (e.clone(), img.clone()));
                }
            } else if let (Some(t), Some(n)) = (
                img.get("type").and_then(Value::as_str),
                img.get("name").and_then(Value::as_str),
            ) {
                out.concepts
                    .insert((t.to_string(), n.to_string()), (e.clone(), img.clone()));
            }
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.concepts.is_empty() && self.links.is_empty()
    }

    /// When a `KIP_3002` message names a concept someone else deleted:
    /// which, by whom and why.
    pub fn explain(&self, message: &str) -> Option<String> {
        self.concepts.iter().find_map(|((t, n), (e, _))| {
            (message.contains(&format!("type: {}", Value::String(t.clone())))
                && message.contains(&format!("name: {}", Value::String(n.clone()))))
            .then(|| format!("{t}: {n} was deleted ({})", by(e)))
        })
    }

    /// The element an image shows, when someone else deleted it: its
    /// label, the deleting entry, and whether the image says nothing the
    /// deleted element did not (the file is as it was when imported).
    fn of(&self, img: &Value) -> Option<(String, &Entry, bool)> {
        let (label, (e, gone)) = if let Some(p) = img.get("predicate").and_then(Value::as_str) {
            let s = img.get("subject").and_then(Value::as_i64)?;
            let o = img.get("object").and_then(Value::as_i64)?;
            (
                format!("link C:{s} {p} C:{o}"),
                self.links.get(&(s, p.to_string(), o))?,
            )
        } else {
            let t = img.get("type").and_then(Value::as_str)?;
            let n = img.get("name").and_then(Value::as_str)?;
            (
                format!("{t}: {n}"),
                self.concepts.get(&(t.to_string(), n.to_string()))?,
            )
        };
        let unchanged = ["attributes", "metadata"].iter().all(|side| {
            img.get(*side).and_then(Value::as_object).is_none_or(|m| {
                m.iter()
                    .filter(|(k, _)| !k.starts_with('_'))
                    .all(|(k, v)| gone.get(*side).and_then(|g| g.get(k)) == Some(v))
            })
        });
        Some((label, e, unchanged))
    }
}

/// The parameters a write sets `key` from (the readers write
/// `"key": :a0` in `SET ATTRIBUTES` and `"key": :m0` in `WITH METADATA`).
fn param_of(text: &str, side: &str, key: &str) -> Option<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"("(?:[^"\\]|\\.)*")\s*:\s*:([am]\d+)\b"#).expect("the slot pattern")
    });
    let want = if side == "attributes" { 'a' } else { 'm' };
    re.captures_iter(text).find_map(|c| {
        let k: String = serde_json::from_str(&c[1]).ok()?;
        let p = c[2].to_string();
        (k == key && p.starts_with(want)).then_some(p)
    })
}

/// What to run instead of a write whose file still says what was imported
/// where the memory has moved on since (each `Overwrite` marked
/// `stale_file`): the memory's values in place of the file's, and what
/// someone deleted left out. `Some(None)`: nothing is left to write (the
/// element the write is about was deleted). None when the write cannot be
/// narrowed so (it is then proposed whole).
pub fn keeping(w: &super::Write, stale: &[&Overwrite]) -> Option<Option<super::Write>> {
    let mut out = w.clone();
    for o in stale {
        if o.brought_back {
            let link = o.id.starts_with("P:");
            if !link || w.what.starts_with("link ") {
                // the element the write is about, or a link written alone
                return Some(None);
            }
            // the domain an import files a concept under when it has none:
            // filed elsewhere since, it stays there
            if o.id.ends_with(":belongs_to_domain")
                && o.element.ends_with("-belongs_to_domain-> Domain: Unsorted")
            {
                let before = out.text.clone();
                for clause in super::draft::UNSORTED {
                    out.text = out.text.replace(clause, "");
                }
                if out.text != before {
                    continue;
                }
            }
            return None;
        }
        let (side, key) = match o.key.strip_prefix("metadata.") {
            Some(k) => ("metadata", k),
            None => ("attributes", o.key.as_str()),
        };
        let p = param_of(&w.text, side, key)?;
        out.params.insert(p, o.was.clone());
    }
    Some(Some(out))
}
