//! Contradictions found by sleep cycles, and their resolution by a human:
//! keep newer, keep older, both valid (validity windows), merge, or needs
//! more context. A resolution goes through the proposal path: the cycle's
//! proposed item is approved when the verdict matches, otherwise replaced
//! by an item carrying the chosen verdict, which is approved at once. The
//! old fact is superseded, never deleted.

use super::cycle::contradictions::resolution_commands;
use super::reasoner::{Conflict, Verdict};
use crate::Nexus;
use crate::audit::Who;
use crate::kip::{ErrorCode, KipError, KipResult};
use crate::review::proposals::{self, Draft};
use crate::store;
use crate::store::db::Row;
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Contradiction {
    pub id: i64,
    pub run: Option<i64>,
    pub found_at: String,
    pub conflict: Conflict,
    /// open, resolved, dismissed
    pub status: String,
    /// The verdict: as proposed while open, as decided once resolved.
    pub resolution: Option<String>,
    pub proposal: Option<i64>,
    pub item: Option<i64>,
    pub decided_at: Option<String>,
    pub decided_by: Option<String>,
}

impl Contradiction {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "run": self.run, "found_at": self.found_at, "conflict": self.conflict,
            "status": self.status, "resolution": self.resolution, "proposal": self.proposal,
            "item": self.item, "decided_at": self.decided_at, "decided_by": self.decided_by,
        })
    }
}

const COLS: &str =
    "id, run, found_at, detail, status, resolution, proposal, item, decided_at, decided_by";

fn row(r: &Row) -> KipResult<Contradiction> {
    let id = r.i64(0)?;
    Ok(Contradiction {
        id,
        run: r.opt_i64(1)?,
        found_at: r.text(2)?,
        conflict: serde_json::from_str(&r.text(3)?).map_err(|e| {
            KipError::internal(format!("contradiction #{id} has an unreadable detail: {e}"))
        })?,
        status: r.text(4)?,
        resolution: r.opt_text(5)?,
        proposal: r.opt_i64(6)?,
        item: r.opt_i64(7)?,
        decided_at: r.opt_text(8)?,
        decided_by: r.opt_text(9)?,
    })
}

pub fn list(nx: &Nexus, status: Option<&str>) -> KipResult<Vec<Contradiction>> {
    nx.db()
        .query(
            &format!(
                "SELECT {COLS} FROM contradictions WHERE CAST(?1 AS TEXT) IS NULL OR status = ?1 ORDER BY id DESC LIMIT 500"
            ),
            crate::args![status],
        )?
        .iter()
        .map(row)
        .collect()
}

pub fn get(nx: &Nexus, id: i64) -> KipResult<Option<Contradiction>> {
    nx.db()
        .query_opt(
            &format!("SELECT {COLS} FROM contradictions WHERE id = ?1"),
            crate::args![id],
        )?
        .as_ref()
        .map(row)
        .transpose()
}

/// Resolves a contradiction with `verdict`, as `who`. Returns the
/// proposal item that carried it.
pub fn resolve(
    nx: &mut Nexus,
    id: i64,
    verdict: Verdict,
    note: Option<&str>,
    who: &Who,
) -> KipResult<(i64, i64)> {
    let c = get(nx, id)?
        .ok_or_else(|| KipError::not_found(format!("contradiction #{id} does not exist")))?;
    // open, or waiting for more context: both can be decided
    if !matches!(c.status.as_str(), "open" | "needs_context") {
        return Err(KipError::new(
            ErrorCode::VersionConflict,
            format!("contradiction #{id} is already {}", c.status),
        ));
    }
    let (Some(pid), Some(seq)) = (c.proposal, c.item) else {
        return Err(KipError::internal(format!(
            "contradiction #{id} has no proposal item"
        )));
    };
    let item = proposals::items(nx, pid)?
        .into_iter()
        .find(|i| i.seq == seq)
        .ok_or_else(|| KipError::not_found(format!("proposal #{pid} has no item {seq}")))?;
    let proposed = c.resolution.clone().unwrap_or_default();
    let note = note
        .map(str::to_string)
        .unwrap_or_else(|| format!("resolved by {}: {}", who.actor, verdict.as_str()));
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (pid, seq) = if proposed == verdict.as_str() && item.status == "pending" {
        proposals::approve(nx, pid, Some(&[seq]), &BTreeMap::new(), who)?;
        (pid, seq)
    } else {
        // replace the cycle's suggestion with the operator's verdict
        if matches!(item.status.as_str(), "pending" | "stale") {
            proposals::reject(
                nx,
                pid,
                Some(&[seq]),
                &format!("resolved as {} instead", verdict.as_str()),
                &who.actor,
            )?;
        }
        let (commands, params) = resolution_commands(&c.conflict, verdict, &now, &note);
        let cf = &c.conflict;
        let draft = Draft {
            class: "contradiction".into(),
            key: format!(
                "conflict:{}|{}:{}:{}",
                cf.a.link,
                cf.b.link,
                verdict.as_str(),
                store::now()
            ),
            title: format!(
                "{} {}: \"{}\" vs \"{}\" → {}",
                cf.subject,
                cf.predicate,
                cf.a.object,
                cf.b.object,
                verdict.as_str()
            ),
            commands,
            params,
            rationale: note.clone(),
            evidence: vec![cf.a.link.clone(), cf.b.link.clone()],
            confidence: 1.0,
        };
        let staged = nx.atomically(&format!("proposal:{pid}"), |nx| {
            proposals::stage(nx, c.run, &who.actor, "", vec![draft], Some(pid))
        })?;
        let Some((_, (p2, s2))) = staged.keys.into_iter().next() else {
            return Err(KipError::new(
                ErrorCode::VersionConflict,
                format!(
                    "the {} resolution would not change anything: {}",
                    verdict.as_str(),
                    staged
                        .skipped
                        .first()
                        .map(|x| x.1.clone())
                        .unwrap_or_default()
                ),
            ));
        };
        nx.db().execute(
            "UPDATE contradictions SET item = ?2, status = 'open' WHERE id = ?1",
            crate::args![id, s2],
        )?;
        proposals::approve(nx, p2, Some(&[s2]), &BTreeMap::new(), who)?;
        (p2, s2)
    };
    nx.db().execute(
        "UPDATE contradictions SET status = CASE WHEN CAST(?2 AS TEXT) = 'needs_context' THEN 'needs_context' ELSE 'resolved' END, resolution = ?2, decided_at = ?3, decided_by = ?4, item = ?5 WHERE id = ?1",
        crate::args![id, verdict.as_str(), store::now(), &who.actor, seq],
    )?;
    // what the cycle proposed is kept, for when the decision is undone
    if let Some(row) = nx.db().query_opt(
        "SELECT detail FROM contradictions WHERE id = ?1",
        crate::args![id],
    )? {
        let mut detail: Value = serde_json::from_str(&row.text(0)?).unwrap_or_default();
        if let Some(o) = detail.as_object_mut()
            && !o.contains_key("proposed")
            && !proposed.is_empty()
        {
            o.insert("proposed".into(), Value::String(proposed.clone()));
            nx.db().execute(
                "UPDATE contradictions SET detail = ?2 WHERE id = ?1",
                crate::args![id, detail.to_string()],
            )?;
        }
    }
    Ok((pid, seq))
}
