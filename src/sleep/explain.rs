//! "Why is this gone?": what the sleep cycle did to an element and by which
//! rule: its notes (proposed archival, TTL deletion, with inputs), its
//! decay and archival metadata, its relevance score now, and every audited
//! change with actor, trigger and reason.

use super::cycle::decay::relevance;
use crate::Nexus;
use crate::kip::KipResult;
use crate::store;
use serde_json::{Value, json};

/// Resolves `C:12`, `P:40:pred` or `Type:Name` (also for deleted
/// elements, through the cycle's notes) to an element id.
pub fn resolve(nx: &Nexus, what: &str) -> KipResult<Option<(i64, String)>> {
    if let Some(n) = store::ids::parse_element_id(what) {
        return Ok(Some((n, what.to_string())));
    }
    if let Some((ty, name)) = what.split_once(':')
        && let Some(id) = store::concept_id_by_type_name(nx.db(), ty.trim(), name.trim())?
    {
        return Ok(Some((id, what.to_string())));
    }
    let hit = nx.db().query_i64(
        "SELECT element FROM sleep_notes WHERE label = ?1 ORDER BY id DESC LIMIT 1",
        crate::args![what],
    )?;
    Ok(hit.map(|id| (id, what.to_string())))
}

pub fn explain(nx: &Nexus, id: i64, now: &str) -> KipResult<Value> {
    let mut notes = Vec::new();
    for r in nx.db().query(
        "SELECT run, at, action, rule, inputs, label FROM sleep_notes WHERE element = ?1 ORDER BY id",
        crate::args![id],
    )? {
        notes.push(json!({
            "run": r.opt_i64(0)?, "at": r.text(1)?, "action": r.text(2)?,
            "rule": r.text(3)?, "inputs": serde_json::from_str::<Value>(&r.text(4)?).unwrap_or(Value::Null),
            "label": r.text(5)?,
        }));
    }
    let current: Option<(String, Value)> = match nx.db().query_opt(
        "SELECT metadata FROM concepts WHERE id = ?1",
        crate::args![id],
    )? {
        Some(r) => Some(("concept".into(), r.json(0)?)),
        None => match nx.db().query_opt(
            "SELECT metadata FROM propositions WHERE id = ?1",
            crate::args![id],
        )? {
            Some(r) => Some(("proposition".into(), r.json(0)?)),
            None => None,
        },
    };
    let history = crate::audit::history_of(nx.db(), id)?;
    let reads = crate::audit::reads::use_of(nx.reads_db()?, id)?;
    let state = match &current {
        Some((kind, meta)) => {
            let r = relevance(
                meta,
                "semantic",
                now,
                crate::sleep::params::Params::default().relevance_lambda,
                reads.last.clone().map(|l| (reads.count, l)).as_ref(),
            );
            let pick = |k: &str| meta.get(k).cloned().unwrap_or(Value::Null);
            json!({
                "exists": true, "kind": kind,
                "memory_strength": pick("memory_strength"), "strength_decay_rule": pick("strength_decay_rule"),
                "strength_decay_applied_at": pick("strength_decay_applied_at"),
                "archived": pick("archived"), "archive_rule": pick("archive_rule"), "archive_reason": pick("archive_reason"),
                "superseded": pick("superseded"), "superseded_by": pick("superseded_by"), "superseded_reason": pick("superseded_reason"),
                "expires_at": pick("expires_at"), "confidence": pick("confidence"),
                "relevance": if r.score.is_finite() { json!(r) } else { json!({"score": "never decays", "status": "active"}) },
            })
        }
        None => json!({"exists": false}),
    };
    Ok(json!({
        "element": id,
        "state": state,
        "reads": reads.to_json(),
        "notes": notes,
        "history": history.iter().map(|(e, c)| json!({
            "entry": e.id, "at": e.at, "actor": e.actor, "trigger": e.trigger, "reason": e.reason,
            "batch": e.batch, "op": c.op, "element": c.kip_id(), "command": e.command,
            "before": c.before, "after": c.after,
        })).collect::<Vec<_>>(),
    }))
}
