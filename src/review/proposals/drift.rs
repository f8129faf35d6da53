//! Whether the memory moved under an item since the operator was shown
//! it (an approval applies what was seen, or nothing), and how an item is
//! shown again with what it would do now.

use super::{Item, item, label_changes, preview_of, summarize_changes};
use crate::Nexus;
use crate::kip::KipResult;
use crate::store;
use serde_json::Value;
use std::collections::HashSet;

/// The elements a preview changes that the memory held before the
/// approval began (`existing`: the highest element id then): what it
/// would update or delete, by id. Elements made during the approval
/// (by an earlier item) are not counted.
pub(super) fn footprint(changes: &[Value], existing: i64) -> std::collections::BTreeSet<i64> {
    let id = |c: &Value| c["element"].as_str().and_then(store::ids::parse_element_id);
    // elements the preview itself creates (a later command of the item may
    // update one) are not the memory's
    let made: HashSet<i64> = changes
        .iter()
        .filter(|c| c["op"].as_str() == Some("insert"))
        .filter_map(id)
        .collect();
    changes
        .iter()
        .filter(|c| c["op"].as_str() != Some("insert"))
        .filter_map(id)
        .filter(|n| *n <= existing && !made.contains(n))
        .collect()
}

/// What moved under an item since its preview was computed, if anything
/// did: a target whose version changed or that is gone, an element it
/// would now touch that its preview did not show, one it no longer
/// touches, or commands that no longer run. An edited item was previewed
/// as edited (its targets are still checked); a policy's own approval,
/// made as the item is staged, checks the targets only.
pub(super) fn drift(
    nx: &mut Nexus,
    it: &Item,
    edited: bool,
    policy: bool,
    existing: i64,
) -> KipResult<Option<Vec<String>>> {
    let mut why = Vec::new();
    for (el, v) in &it.targets {
        let now = nx.element_version(*el)?;
        let moved = if *v == -1 {
            now.is_none()
        } else {
            now != Some(*v)
        };
        if moved {
            why.push(last_change(nx, *el, now.is_none())?);
        }
    }
    if why.is_empty() && !edited && !policy {
        match preview_of(nx, &it.class, &it.commands, &it.params) {
            Ok((changes, _)) => {
                let now = footprint(&changes, existing);
                let then = footprint(&it.preview, existing);
                for el in now.difference(&then) {
                    let op = changes
                        .iter()
                        .find(|c| {
                            c["element"].as_str().and_then(store::ids::parse_element_id)
                                == Some(*el)
                        })
                        .and_then(|c| c["op"].as_str())
                        .unwrap_or("change");
                    let mut w = last_change(nx, *el, false)?;
                    w.push_str(&format!(": the item would now {op} it too"));
                    why.push(w);
                }
                for el in then.difference(&now) {
                    why.push(format!(
                        "{} is no longer what the item changes",
                        element_label(nx, *el)
                    ));
                }
            }
            Err(e) => why.push(format!("its commands no longer run: {}", e.message)),
        }
    }
    Ok((!why.is_empty()).then_some(why))
}

/// A field a change moves, with its value before and after.
type Moved = (String, Value, Value);

/// What one change of a preview does, as the operator reads it: for an
/// update, each field (the name, an attribute, a metadata key, a link's
/// ends) whose value it changes, with the value before and after; the
/// element's version and update time, which every write moves, are no
/// part of it.
fn delta(c: &Value) -> Option<(String, Vec<Moved>)> {
    if c["op"].as_str() != Some("update") {
        return None;
    }
    let el = c["element"].as_str()?.to_string();
    let (b, a) = (&c["before"], &c["after"]);
    let mut out = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for side in [b, a] {
        if let Some(o) = side.as_object() {
            for (k, v) in o {
                if matches!(k.as_str(), "id" | "version" | "updated_at") {
                    continue;
                }
                // attributes and metadata, key by key
                if let Some(inner) = v.as_object()
                    && matches!(k.as_str(), "attributes" | "metadata")
                {
                    keys.extend(inner.keys().map(|ik| format!("{k}.{ik}")));
                } else {
                    keys.push(k.clone());
                }
            }
        }
    }
    keys.sort();
    keys.dedup();
    let at = |side: &Value, key: &str| -> Value {
        match key.split_once('.') {
            Some((outer, inner)) if matches!(outer, "attributes" | "metadata") => {
                side[outer][inner].clone()
            }
            _ => side[key].clone(),
        }
    };
    for k in keys {
        let (x, y) = (at(b, &k), at(a, &k));
        if x != y {
            out.push((k, x, y));
        }
    }
    Some((el, out))
}

/// Whether a preview made now changes exactly what the one the operator
/// saw changes: the same elements, each only updated, the same fields
/// from the same values to the same values. An item whose element an
/// earlier item of the same approval moved elsewhere (an archival beside
/// a redaction of one Event) still does exactly what was shown.
pub(super) fn same_change(then: &[Value], now: &[Value]) -> bool {
    if then.len() != now.len() || then.is_empty() {
        return false;
    }
    then.iter()
        .zip(now)
        .all(|(t, n)| match (delta(t), delta(n)) {
            (Some(x), Some(y)) => x == y && !x.1.is_empty(),
            _ => false,
        })
}

/// "Person: Ines Duarte was created by operator (proposal #1 item 1) at
/// 2026-11-27T15:59:12.332Z": the latest audited change of an element.
fn last_change(nx: &Nexus, el: i64, gone: bool) -> KipResult<String> {
    let label = element_label(nx, el);
    // an update or delete is a recorded change; an element's creation is
    // the entry whose id range holds it
    let row = nx.db().query_opt(
        "SELECT op, actor, trigger_name, at FROM ( \
           SELECT c.entry AS entry, c.op AS op, l.actor AS actor, l.trigger_name AS trigger_name, l.at AS at \
             FROM audit_changes c JOIN audit_log l ON l.id = c.entry WHERE c.element = ?1 \
           UNION ALL \
           SELECT id, 'insert', actor, trigger_name, at FROM audit_log WHERE first_id <= ?1 AND end_id > ?1 \
         ) t ORDER BY entry DESC LIMIT 1",
        crate::args![el],
    )?;
    Ok(match row {
        Some(r) => {
            let op = match r.text(0)?.as_str() {
                "insert" => "created",
                "delete" => "deleted",
                _ => "changed",
            };
            let mut trigger = r.opt_text(2)?.unwrap_or_default();
            // an approval names whose proposal it was
            if let Some(p) = trigger
                .strip_prefix("proposal #")
                .and_then(|t| t.split(' ').next())
                .and_then(|n| n.parse::<i64>().ok())
                && let Some(from) = nx
                    .db()
                    .query_opt("SELECT actor FROM proposals WHERE id = ?1", crate::args![p])?
            {
                trigger = format!("{trigger}, from {}", from.text(0)?);
            }
            let by = if trigger.is_empty() || trigger == "kip" {
                r.text(1)?
            } else {
                format!("{} ({trigger})", r.text(1)?)
            };
            format!("{label} was {op} by {by} at {}", r.text(3)?)
        }
        None if gone => format!("{label} is gone"),
        None => format!("{label} changed"),
    })
}

/// "Person: Ines Duarte", "Person: Ines Duarte works_at Organization:
/// Acme", else the element's id.
fn element_label(nx: &Nexus, el: i64) -> String {
    if let Ok(Some((ty, name))) = store::concept_label(nx.db(), el) {
        return format!("{ty}: {name}");
    }
    let link = nx
        .db()
        .query_opt(
            "SELECT s.type || ': ' || s.name, p.predicate, o.type || ': ' || o.name FROM propositions p JOIN concepts s ON s.id = p.subject JOIN concepts o ON o.id = p.object WHERE p.id = ?1",
            crate::args![el],
        )
        .ok()
        .flatten()
        .and_then(|r| Some(format!("{} {} {}", r.text(0).ok()?, r.text(1).ok()?, r.text(2).ok()?)));
    link.unwrap_or_else(|| format!("element {el}"))
}

/// Marks an item stale with what it would do now: a new preview and
/// targets, what changed under it kept as its note, a sub-agent write's
/// title saying what it does now, and its conflict marks made again.
pub(super) fn show_again(nx: &mut Nexus, it: &Item, why: &[String]) -> KipResult<()> {
    let note = format!("changed since it was shown: {}", why.join("; "));
    match preview_of(nx, &it.class, &it.commands, &it.params) {
        Ok((changes, targets)) => {
            nx.db().execute(
                "UPDATE proposal_items SET status = 'stale', preview = ?3, targets = ?4, reason = ?5 WHERE proposal = ?1 AND seq = ?2",
                crate::args![it.proposal, it.seq, Value::Array(changes).to_string(), serde_json::to_string(&targets).unwrap_or_default(), note],
            )?;
        }
        Err(_) => {
            nx.db().execute(
                "UPDATE proposal_items SET status = 'stale', reason = ?3 WHERE proposal = ?1 AND seq = ?2",
                crate::args![it.proposal, it.seq, note],
            )?;
        }
    }
    retitle_and_mark(nx, it)
}

/// After a sub-agent write's preview changed: it is titled by what it
/// does now, and its conflict marks are made again against what is
/// pending now. (The cycle's own items keep their titles and are not
/// marked: each says what it changes in the memory.)
pub(super) fn retitle_and_mark(nx: &mut Nexus, it: &Item) -> KipResult<()> {
    if !it.class.starts_with("subagent:") {
        return Ok(());
    }
    retitle(nx, it.proposal, it.seq)?;
    nx.db().execute(
        "DELETE FROM proposal_conflicts WHERE (proposal = ?1 AND seq = ?2) OR (other_proposal = ?1 AND other_seq = ?2)",
        crate::args![it.proposal, it.seq],
    )?;
    crate::review::conflicts::mark(nx.db(), it.proposal, &[it.seq])?;
    Ok(())
}

/// Titles a sub-agent's item by what its preview does ("insert Person:
/// Ines Duarte, insert Person: Ines Duarte works_at Organization: Acme
/// Labs").
pub fn retitle(nx: &mut Nexus, proposal: i64, seq: i64) -> KipResult<()> {
    let Some(now) = item(nx, proposal, seq)? else {
        return Ok(());
    };
    let mut changes = now.preview;
    label_changes(nx, &mut changes)?;
    let what = summarize_changes(&changes);
    if !what.is_empty() {
        nx.db().execute(
            "UPDATE proposal_items SET title = ?3 WHERE proposal = ?1 AND seq = ?2",
            crate::args![proposal, seq, what],
        )?;
    }
    Ok(())
}

/// A preview without what differs each time it is computed (its audit
/// entry number, the times it would stamp).
pub(super) fn same_shape(changes: &[Value]) -> Vec<Value> {
    changes
        .iter()
        .map(|c| {
            let mut c = c.clone();
            if let Some(o) = c.as_object_mut() {
                o.remove("entry");
                for side in ["before", "after"] {
                    if let Some(img) = o.get_mut(side).and_then(Value::as_object_mut) {
                        img.remove("updated_at");
                    }
                }
            }
            c
        })
        .collect()
}
