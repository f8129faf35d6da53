//! Pending proposal items that disagree (Moltbot §13.6): two that give one
//! attribute of one concept different values, or one subject two objects of
//! a single-valued predicate (`cardinality: single`), or one that changes
//! what the memory holds. Both items are marked, each naming the other, so a
//! reviewer decides them together.

use crate::kip::KipResult;
use crate::store::db::{Backend, Db};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// An attribute an item sets: `(Type: Name, key, value, value before)`.
type AttrSlot = (String, String, Value, Option<Value>);

/// A single-valued link an item makes: `(subject, predicate, object,
/// subject id)`.
type LinkSlot = (String, String, String, i64);

/// The conflict notes of a proposal's items: `(seq, note)`. A mark
/// against another item holds while that item is still to be decided
/// (pending or stale): once it is applied or rejected, the item's preview
/// is what tells (an approval checks it against the memory).
pub fn of_proposal(db: Db<'_>, proposal: i64) -> KipResult<Vec<(i64, String)>> {
    // (in the order they were marked)
    let sql = match db.backend() {
        Backend::Sqlite => {
            "SELECT c.seq, c.note FROM proposal_conflicts c LEFT JOIN proposal_items o ON o.proposal = c.other_proposal AND o.seq = c.other_seq \
             WHERE c.proposal = ?1 AND (c.other_proposal IS NULL OR o.status IN ('pending', 'stale')) ORDER BY c.rowid"
        }
        Backend::Postgres => {
            "SELECT c.seq, c.note FROM proposal_conflicts c LEFT JOIN proposal_items o ON o.proposal = c.other_proposal AND o.seq = c.other_seq \
             WHERE c.proposal = ?1 AND (c.other_proposal IS NULL OR o.status IN ('pending', 'stale')) ORDER BY c.id"
        }
    };
    db.query(sql, crate::args![proposal])?
        .iter()
        .map(|r| Ok((r.i64(0)?, r.text(1)?)))
        .collect()
}

/// A concept's attributes as an item's preview would leave them, by
/// `Type: Name`, with what they were before (for an update).
fn slots(preview: &[Value]) -> Vec<AttrSlot> {
    let mut out = Vec::new();
    for ch in preview {
        let Some(after) = ch.get("after").and_then(Value::as_object) else {
            continue;
        };
        let (Some(ty), Some(name)) = (
            after.get("type").and_then(Value::as_str),
            after.get("name").and_then(Value::as_str),
        ) else {
            continue;
        };
        let empty = Map::new();
        let attrs = after
            .get("attributes")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let before = ch
            .get("before")
            .and_then(|b| b.get("attributes"))
            .and_then(Value::as_object);
        for (k, v) in attrs {
            let was = before.and_then(|b| b.get(k)).cloned();
            // only what this item sets or changes
            if was.as_ref() == Some(v) {
                continue;
            }
            out.push((format!("{ty}: {name}"), k.clone(), v.clone(), was));
        }
    }
    out
}

/// An element's `Type: Name`: from the memory, else from a concept the
/// same preview creates.
fn name_of(db: Db<'_>, id: i64, preview: &[Value]) -> Option<String> {
    if let Ok(Some((ty, name))) = crate::store::concept_label(db, id) {
        return Some(format!("{ty}: {name}"));
    }
    preview.iter().find_map(|ch| {
        let a = ch.get("after")?.as_object()?;
        (a.get("id")?.as_i64()? == id).then(|| {
            format!(
                "{}: {}",
                a.get("type").and_then(Value::as_str).unwrap_or("?"),
                a.get("name").and_then(Value::as_str).unwrap_or("?")
            )
        })
    })
}

/// Whether a predicate holds one value per subject (`cardinality: single`
/// on its definition).
fn single_valued(db: Db<'_>, predicate: &str) -> bool {
    let b = db.backend();
    db.query_opt(
        &format!(
            "SELECT {} FROM concepts WHERE type = '$PropositionType' AND name = ?1",
            b.json_get("attributes", "?2")
        ),
        crate::args![predicate, b.json_path(&["cardinality"])],
    )
    .ok()
    .flatten()
    .and_then(|r| r.json(0).ok())
        == Some(Value::from("single"))
}

/// The links an item's preview creates: `(subject, predicate, object)`
/// by id.
fn inserted_links(preview: &[Value]) -> impl Iterator<Item = (i64, &str, i64)> {
    preview.iter().filter_map(|ch| {
        if ch.get("op").and_then(Value::as_str) != Some("insert") {
            return None;
        }
        let a = ch.get("after")?.as_object()?;
        Some((
            a.get("subject")?.as_i64()?,
            a.get("predicate")?.as_str()?,
            a.get("object")?.as_i64()?,
        ))
    })
}

/// The links of single-valued predicates an item's preview creates:
/// `(subject, predicate, object)` by name.
fn link_slots(
    conn: Db<'_>,
    preview: &[Value],
    is_single: &mut dyn FnMut(&str) -> bool,
) -> Vec<LinkSlot> {
    let mut out = Vec::new();
    for (s, p, o) in inserted_links(preview) {
        if !is_single(p) {
            continue;
        }
        if let (Some(sn), Some(on)) = (name_of(conn, s, preview), name_of(conn, o, preview)) {
            out.push((sn, p.to_string(), on, s));
        }
    }
    out
}

/// The topic domains an item's preview files concepts into: `(concept,
/// domain)` by `Type: Name` (the `Archived` and `Unsorted` domains are
/// no topic).
fn filings(conn: Db<'_>, preview: &[Value]) -> Vec<(String, String)> {
    inserted_links(preview)
        .filter(|(_, p, _)| *p == "belongs_to_domain")
        .filter_map(|(s, _, o)| Some((name_of(conn, s, preview)?, name_of(conn, o, preview)?)))
        .filter(|(_, on)| on != "Domain: Archived" && on != "Domain: Unsorted")
        .collect()
}

/// Marks the pending items of one proposal where one archives an Event
/// (`consolidation_status: "archived"`) that another files into a topic
/// domain, each naming the other: a sleep cycle's inbox files what its
/// consolidation then finds nothing durable in, and which of the two is
/// right the reviewer says. A pair marked already is not marked again.
/// Returns how many marks it made.
pub fn mark_archived_and_filed(conn: Db<'_>, proposal: i64) -> KipResult<usize> {
    let mut archives: Vec<(i64, String)> = Vec::new();
    let mut files: Vec<(i64, String, String)> = Vec::new();
    for r in conn.query(
        "SELECT seq, preview FROM proposal_items WHERE proposal = ?1 AND status IN ('pending', 'stale') ORDER BY seq",
        crate::args![proposal],
    )? {
        let seq = r.i64(0)?;
        let v: Value = serde_json::from_str(&r.text(1)?).unwrap_or(Value::Null);
        let preview = v.as_array().cloned().unwrap_or_default();
        for (what, key, value, _) in slots(&preview) {
            if key == "consolidation_status" && value == "archived" {
                archives.push((seq, what));
            }
        }
        for (what, domain) in filings(conn, &preview) {
            files.push((seq, what, domain));
        }
    }
    let mut n = 0;
    let mut add = |seq: i64, other: i64, slot: &str, note: String| {
        let marked = conn
            .query_opt(
                "SELECT 1 FROM proposal_conflicts WHERE proposal = ?1 AND seq = ?2 AND other_proposal = ?1 AND other_seq = ?3 AND slot = ?4",
                crate::args![proposal, seq, other, slot],
            )?
            .is_some();
        if !marked {
            conn.execute(
                "INSERT INTO proposal_conflicts(proposal, seq, other_proposal, other_seq, slot, note) VALUES (?1, ?2, ?1, ?3, ?4, ?5)",
                crate::args![proposal, seq, other, slot, note],
            )?;
            n += 1;
        }
        Ok::<(), crate::kip::KipError>(())
    };
    for (a, what) in &archives {
        for (f, _, domain) in files.iter().filter(|(f, w, _)| w == what && f != a) {
            let slot = format!("{what} belongs_to_domain");
            add(
                *a,
                *f,
                &slot,
                format!(
                    "⚠ conflicts with #{proposal} item {f}: it files {what} into {domain}, this archives it"
                ),
            )?;
            add(
                *f,
                *a,
                &slot,
                format!(
                    "⚠ conflicts with #{proposal} item {a}: it archives {what}, this files it into {domain}"
                ),
            )?;
        }
    }
    Ok(n)
}

/// What the memory holds now for a single-valued slot: the objects of the
/// subject's active links with that predicate.
fn held(db: Db<'_>, subject: i64, predicate: &str) -> Vec<String> {
    let sql = match db.backend() {
        Backend::Sqlite => {
            "SELECT c.type || ': ' || c.name FROM propositions p JOIN concepts c ON c.id = p.object \
             WHERE p.subject = ?1 AND p.predicate = ?2 \
               AND COALESCE(json_extract(p.metadata, '$.superseded'), 0) != 1 \
               AND COALESCE(json_extract(p.metadata, '$.archived'), 0) != 1"
        }
        // (true and 1 alike, as SQLite reads them)
        Backend::Postgres => {
            "SELECT c.type || ': ' || c.name FROM propositions p JOIN concepts c ON c.id = p.object \
             WHERE p.subject = ?1 AND p.predicate = ?2 \
               AND COALESCE(kip_num(p.metadata -> 'superseded'), 0) != 1 \
               AND COALESCE(kip_num(p.metadata -> 'archived'), 0) != 1"
        }
    };
    db.query(sql, crate::args![subject, predicate])
        .map(|rows| rows.iter().filter_map(|r| r.text(0).ok()).collect())
        .unwrap_or_default()
}

/// Marks the newly staged items (`seqs` of `proposal`) that disagree with
/// another pending item, or change a value the memory holds; the items
/// they disagree with are marked too. Only the new items are compared
/// (each against every other pending item once), so staging a write costs
/// what the pending items cost, not what every earlier stage did again.
/// Returns how many marks it made.
pub fn mark(conn: Db<'_>, proposal: i64, seqs: &[i64]) -> KipResult<usize> {
    let new: HashSet<i64> = seqs.iter().copied().collect();
    let mut mine = Vec::new();
    let mut others = Vec::new();
    for r in conn.query(
        "SELECT proposal, seq, preview FROM proposal_items WHERE status IN ('pending', 'stale') ORDER BY proposal, seq",
        &[],
    )? {
        let (p, s) = (r.i64(0)?, r.i64(1)?);
        let v: Value = serde_json::from_str(&r.text(2)?).unwrap_or(Value::Null);
        let preview = v.as_array().cloned().unwrap_or_default();
        if p == proposal && new.contains(&s) {
            mine.push((p, s, preview));
        } else {
            others.push((p, s, preview));
        }
    }
    if mine.is_empty() {
        return Ok(0);
    }
    let mut singles: HashMap<String, bool> = HashMap::new();
    let mut is_single = |pred: &str| -> bool {
        *singles
            .entry(pred.to_string())
            .or_insert_with(|| single_valued(conn, pred))
    };
    let slots_of = |list: &[(i64, i64, Vec<Value>)], is_single: &mut dyn FnMut(&str) -> bool| {
        list.iter()
            .map(|(p, s, pv)| (*p, *s, slots(pv), link_slots(conn, pv, is_single)))
            .collect::<Vec<_>>()
    };
    let mine = slots_of(&mine, &mut is_single);
    let others = slots_of(&others, &mut is_single);
    let mut n = 0;
    let mut add = |p: i64, s: i64, op: Option<(i64, i64)>, slot: &str, note: String| {
        conn.execute(
            "INSERT INTO proposal_conflicts(proposal, seq, other_proposal, other_seq, slot, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            crate::args![p, s, op.map(|o| o.0), op.map(|o| o.1), slot, note],
        )?;
        n += 1;
        Ok::<(), crate::kip::KipError>(())
    };
    for (i, (p, s, attr_slots, links)) in mine.iter().enumerate() {
        // against the memory
        for (subject, pred, object, sid) in links {
            let slot = format!("{subject} {pred}");
            for now in held(conn, *sid, pred) {
                if now != *object {
                    add(
                        *p,
                        *s,
                        None,
                        &slot,
                        format!(
                            "⚠ changes what the memory holds: {slot} is {now}, this says {object}"
                        ),
                    )?;
                }
            }
        }
        for (what, key, value, was) in attr_slots {
            if let Some(was) = was {
                let slot = format!("{what} attributes.{key}");
                add(
                    *p,
                    *s,
                    None,
                    &slot,
                    format!("⚠ changes what the memory holds: {slot} {was} → {value}"),
                )?;
            }
        }
        // against every other pending item, and the new ones after it
        for (op, os, their_attrs, their_links) in others.iter().chain(mine.iter().skip(i + 1)) {
            for (subject, pred, object, _) in links {
                for (s2, p2, o2, _) in their_links {
                    if s2 == subject && p2 == pred && o2 != object {
                        let slot = format!("{subject} {pred}");
                        add(
                            *p,
                            *s,
                            Some((*op, *os)),
                            &slot,
                            format!("⚠ conflicts with #{op} item {os}: {slot} {object} vs {o2}"),
                        )?;
                        add(
                            *op,
                            *os,
                            Some((*p, *s)),
                            &slot,
                            format!("⚠ conflicts with #{p} item {s}: {slot} {o2} vs {object}"),
                        )?;
                    }
                }
            }
            for (what, key, value, _) in attr_slots {
                for (w2, k2, v2, _) in their_attrs {
                    if w2 == what && k2 == key && v2 != value {
                        let slot = format!("{what} attributes.{key}");
                        add(
                            *p,
                            *s,
                            Some((*op, *os)),
                            &slot,
                            format!("⚠ conflicts with #{op} item {os}: {slot} {value} vs {v2}"),
                        )?;
                        add(
                            *op,
                            *os,
                            Some((*p, *s)),
                            &slot,
                            format!("⚠ conflicts with #{p} item {s}: {slot} {v2} vs {value}"),
                        )?;
                    }
                }
            }
        }
    }
    Ok(n)
}
