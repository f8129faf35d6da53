//! "Why is this gone?": what the sleep cycle did to an element and by which
//! rule: its notes (proposed archival, TTL deletion, with inputs), its
//! decay and archival metadata, its relevance score now, and every audited
//! change with actor, trigger and reason.

use super::cycle::relevance;
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
        && let Some(id) = store::concept_id_by_type_name(nx.conn()?, ty.trim(), name.trim())?
    {
        return Ok(Some((id, what.to_string())));
    }
    let mut st = nx.conn()?.prepare_cached(
        "SELECT element FROM sleep_notes WHERE label = ?1 ORDER BY id DESC LIMIT 1",
    )?;
    let hit: Option<i64> = st.query_row([what], |r| r.get(0)).ok();
    Ok(hit.map(|id| (id, what.to_string())))
}

pub fn explain(nx: &Nexus, id: i64, now: &str) -> KipResult<Value> {
    let mut notes = Vec::new();
    {
        let mut st = nx.conn()?.prepare_cached(
            "SELECT run, at, action, rule, inputs, label FROM sleep_notes WHERE element = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([id], |r| {
            Ok(json!({
                "run": r.get::<_, Option<i64>>(0)?, "at": r.get::<_, String>(1)?, "action": r.get::<_, String>(2)?,
                "rule": r.get::<_, String>(3)?, "inputs": serde_json::from_str::<Value>(&r.get::<_, String>(4)?).unwrap_or(Value::Null),
                "label": r.get::<_, String>(5)?,
            }))
        })?;
        for r in rows {
            notes.push(r?);
        }
    }
    let current: Option<(String, Value)> = {
        let c: Option<String> = nx
            .conn()?
            .query_row("SELECT metadata FROM concepts WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .ok();
        match c {
            Some(m) => Some((
                "concept".into(),
                serde_json::from_str(&m).unwrap_or(Value::Null),
            )),
            None => nx
                .conn()?
                .query_row(
                    "SELECT metadata FROM propositions WHERE id = ?1",
                    [id],
                    |r| r.get::<_, String>(0),
                )
                .ok()
                .map(|m| {
                    (
                        "proposition".into(),
                        serde_json::from_str(&m).unwrap_or(Value::Null),
                    )
                }),
        }
    };
    let history = crate::audit::history_of(nx.conn()?, id)?;
    let state = match &current {
        Some((kind, meta)) => {
            let r = relevance(
                meta,
                "semantic",
                now,
                crate::sleep::Params::default().relevance_lambda,
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
        "notes": notes,
        "history": history.iter().map(|(e, c)| json!({
            "entry": e.id, "at": e.at, "actor": e.actor, "trigger": e.trigger, "reason": e.reason,
            "batch": e.batch, "op": c.op, "element": c.kip_id(), "command": e.command,
            "before": c.before, "after": c.after,
        })).collect::<Vec<_>>(),
    }))
}
