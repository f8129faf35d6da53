//! Undoing what the review layer applied, and keeping its records with
//! every undo. The audit trail undoes entries and knows nothing of
//! proposals; each undo here runs in one transaction with [`follow`], which
//! moves an approved item to `rolled_back` when none of its changes is in
//! effect any more (and back to `applied` when an undo is undone), reopens
//! or closes the contradiction it resolved, and takes back or restores the
//! operator's decision on the pairs it merged. The console, the CLI and the
//! server undo through here.

use super::proposals::{decision_batches_sql, refresh_status, refresh_status_on};
use crate::Nexus;
use crate::audit::Who;
use crate::kip::{KipError, KipResult};
use crate::store;
use crate::store::db::Db;
use serde_json::{Map, Value};

/// Undoes one audit entry as `who`, keeping proposal items with it.
pub fn entry(nx: &mut Nexus, entry: i64, who: &Who) -> KipResult<i64> {
    nx.rollback_following(entry, who, &follow)
}

/// Undoes every change of a group still in effect (`sleep:3`,
/// `proposal:2/1`, `import:openclaw`), newest first, in one transaction.
pub fn group(nx: &mut Nexus, batch: &str, who: &Who) -> KipResult<Vec<i64>> {
    nx.rollback_batch_following(batch, who, &follow)
}

/// What undoing one entry (`entry`) or a group (`group`) would change, as
/// an operator reads it ("removes Person: Ines Duarte", "puts back
/// Person: Mira Chen's attributes.role"), worked out by undoing it in a
/// transaction that is then rolled back: at most `listed` lines, then
/// how many more. Nothing is written.
pub fn preview(
    nx: &mut Nexus,
    entry: Option<i64>,
    group: Option<&str>,
    listed: usize,
) -> KipResult<Vec<String>> {
    let who = Who {
        actor: "preview".into(),
        trigger: "preview".into(),
        reason: None,
    };
    let mut lines = Vec::new();
    let mut more = 0usize;
    let res = nx.atomically("rollback:preview", |nx| {
        let undone: Vec<i64> = match (entry, group) {
            (Some(e), _) => vec![crate::audit::rollback(
                nx.db(),
                nx.audit_ctx(),
                e,
                &who,
                &follow,
            )?],
            (None, Some(g)) => {
                crate::audit::rollback_batch(nx.db(), nx.audit_ctx(), g, &who, &follow)?
            }
            (None, None) => vec![],
        };
        for id in undone {
            let fx = crate::audit::effects(nx.db(), id, listed)?;
            for it in fx["elements"].as_array().into_iter().flatten() {
                if lines.len() >= listed {
                    more += 1;
                    continue;
                }
                let what = it["what"].as_str().unwrap_or("?");
                lines.push(match it["change"].as_str() {
                    Some("create") => format!("brings back {what}"),
                    Some("delete") => format!("removes {what}"),
                    _ => match it["fields"].as_array().filter(|f| !f.is_empty()) {
                        Some(f) => format!(
                            "puts back {what}: {}",
                            f.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        None => format!("puts back {what}"),
                    },
                });
            }
            more += fx["more"].as_u64().unwrap_or(0) as usize;
        }
        // never kept
        Err::<(), _>(KipError::internal(PREVIEW_ONLY))
    });
    match res {
        Err(e) if e.message == PREVIEW_ONLY => {}
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    if more > 0 {
        lines.push(format!("… and {more} more"));
    }
    if lines.is_empty() {
        lines.push("nothing: what it did is no longer in effect".into());
    }
    Ok(lines)
}

/// How a preview's transaction ends (it is rolled back).
const PREVIEW_ONLY: &str = "undo preview: rolled back";

/// Restores the memory as of `to` (an RFC 3339 time, or `#N`): the entry
/// restored to and the new entries.
pub fn to(nx: &mut Nexus, to: &str, who: &Who) -> KipResult<(i64, Vec<i64>)> {
    nx.rollback_to_following(to, who, &follow)
}

/// Undoes an approval: every change applied for the proposal, newest
/// first, as new audit entries by `who`.
pub fn proposal(nx: &mut Nexus, id: i64, who: &Who) -> KipResult<Vec<i64>> {
    nx.atomically(&format!("rollback:proposal:{id}"), |nx| {
        // every decision's group, the newest first
        let batches = nx
            .db()
            .query(
                &format!(
                    "SELECT batch FROM audit_log WHERE {} AND rolled_back_by IS NULL GROUP BY batch ORDER BY MAX(id) DESC",
                    decision_batches_sql(nx.backend())
                ),
                crate::args![format!("proposal:{id}")],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect::<KipResult<Vec<String>>>()?;
        if batches.is_empty() {
            return Err(KipError::not_found(format!(
                "no change of proposal #{id} is in effect"
            )));
        }
        let mut entries = Vec::new();
        for b in &batches {
            entries.extend(crate::audit::rollback_batch(
                nx.db(),
                nx.audit_ctx(),
                b,
                who,
                &follow,
            )?);
        }
        nx.db().execute(
            "UPDATE proposal_items SET status = 'rolled_back' WHERE proposal = ?1 AND status = 'applied'",
            crate::args![id],
        )?;
        let reopened = nx.db().query(
            "UPDATE contradictions SET status = 'open', decided_at = NULL, decided_by = NULL WHERE proposal = ?1 AND status IN ('resolved', 'needs_context') RETURNING id, detail",
            crate::args![id],
        )?;
        proposed_again(nx.db(), &reopened)?;
        refresh_status(nx, id, None)?;
        Ok(entries)
    })
}

/// Keeps an item's status with its audit entries after one of them was
/// rolled back (or a rollback was itself undone), whichever way the undo
/// came (`somnus rollback N`, the console, a group rollback): an approved
/// item none of whose changes is still in effect is `rolled_back` and can
/// be decided again, one whose changes are back is `applied`; the
/// contradiction it resolved reopens or closes with it.
pub fn follow(db: Db<'_>, entry: i64) -> KipResult<()> {
    // the entry whose effect changed: through a chain of undos to the write
    let mut origin = entry;
    for _ in 0..64 {
        let back = db.query_i64(
            "SELECT rolls_back FROM audit_log WHERE id = ?1",
            &[origin.into()],
        )?;
        match back {
            Some(b) => origin = b,
            None => break,
        }
    }
    let trigger = match db.query_opt(
        "SELECT trigger_name FROM audit_log WHERE id = ?1",
        &[origin.into()],
    )? {
        Some(r) => r.opt_text(0)?,
        None => None,
    };
    let Some((p, seq)) = trigger.as_deref().and_then(item_of_trigger) else {
        return Ok(());
    };
    let entries: Vec<i64> = db
        .query(
            &format!(
                "SELECT id FROM audit_log WHERE {} AND trigger_name = ?2 AND rolls_back IS NULL",
                decision_batches_sql(db.backend())
            ),
            &[
                format!("proposal:{p}").into(),
                format!("proposal #{p} item {seq}").into(),
            ],
        )?
        .iter()
        .map(|r| r.i64(0))
        .collect::<KipResult<_>>()?;
    if entries.is_empty() {
        return Ok(());
    }
    let mut live = 0;
    for e in &entries {
        if in_effect(db, *e)? {
            live += 1;
        }
    }
    let (from, to) = if live == 0 {
        ("applied", "rolled_back")
    } else {
        ("rolled_back", "applied")
    };
    let changed = db.execute(
        "UPDATE proposal_items SET status = ?3 WHERE proposal = ?1 AND seq = ?2 AND status = ?4",
        &[p.into(), seq.into(), to.into(), from.into()],
    )?;
    if changed == 0 {
        return Ok(());
    }
    if to == "rolled_back" {
        let reopened = db.query(
            "UPDATE contradictions SET status = 'open', decided_at = NULL, decided_by = NULL WHERE proposal = ?1 AND item = ?2 AND status IN ('resolved', 'needs_context') RETURNING id, detail",
            &[p.into(), seq.into()],
        )?;
        proposed_again(db, &reopened)?;
        // an approval undone is a decision taken back
        super::labels::forget(db, p, seq)?;
    } else {
        if let Some(r) = db.query_opt(
            "SELECT parameters, decided_by FROM proposal_items WHERE proposal = ?1 AND seq = ?2",
            &[p.into(), seq.into()],
        )? {
            let params: Map<String, Value> = serde_json::from_str(&r.text(0)?).unwrap_or_default();
            let by = r.opt_text(1)?.unwrap_or_else(|| "operator".into());
            super::labels::record(db, p, seq, &params, true, &by)?;
        }
        db.execute(
            "UPDATE contradictions SET status = CASE WHEN resolution = 'needs_context' THEN 'needs_context' ELSE 'resolved' END, decided_at = ?3 WHERE proposal = ?1 AND item = ?2 AND status = 'open'",
            &[p.into(), seq.into(), store::now().into()],
        )?;
    }
    refresh_status_on(db, p, None)?;
    Ok(())
}

/// `proposal #P item S` → (P, S).
fn item_of_trigger(t: &str) -> Option<(i64, i64)> {
    let rest = t.strip_prefix("proposal #")?;
    let (p, s) = rest.split_once(" item ")?;
    Some((p.parse().ok()?, s.trim().parse().ok()?))
}

/// Whether an entry's changes are in effect: never undone, or undone by
/// an undo that was itself undone.
fn in_effect(db: Db<'_>, entry: i64) -> KipResult<bool> {
    let mut e = entry;
    let mut live = true;
    for _ in 0..64 {
        let by = db.query_i64(
            "SELECT rolled_back_by FROM audit_log WHERE id = ?1",
            &[e.into()],
        )?;
        match by {
            None => return Ok(live),
            Some(b) => {
                live = !live;
                e = b;
            }
        }
    }
    Ok(live)
}

/// Contradictions a taken-back decision opened again show the cycle's
/// proposal as what is proposed, not the verdict taken back (an operator's
/// verdict that replaced the cycle's keeps the cycle's in its detail, as
/// `proposed`).
fn proposed_again(
    db: crate::store::db::Db<'_>,
    reopened: &[crate::store::db::Row],
) -> KipResult<()> {
    for r in reopened {
        let detail: serde_json::Value = serde_json::from_str(&r.text(1)?).unwrap_or_default();
        if let Some(p) = detail.get("proposed").and_then(serde_json::Value::as_str) {
            db.execute(
                "UPDATE contradictions SET resolution = ?2 WHERE id = ?1",
                crate::args![r.i64(0)?, p],
            )?;
        }
    }
    Ok(())
}
