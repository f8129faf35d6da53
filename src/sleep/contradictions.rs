//! Contradictions found by sleep cycles, and their resolution by a human:
//! keep newer, keep older, both valid (validity windows), merge, or needs
//! more context. A resolution goes through the proposal path: the cycle's
//! proposed item is approved when the verdict matches, otherwise replaced
//! by an item carrying the chosen verdict, which is approved at once. The
//! old fact is superseded, never deleted.

use super::cycle::resolution_commands;
use super::proposals::{self, Draft};
use super::reasoner::{Conflict, Verdict};
use crate::Nexus;
use crate::audit::Who;
use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store;
use rusqlite::{OptionalExtension, params};
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

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Contradiction> {
    let detail: String = r.get(3)?;
    Ok(Contradiction {
        id: r.get(0)?,
        run: r.get(1)?,
        found_at: r.get(2)?,
        conflict: serde_json::from_str(&detail).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, Box::new(e))
        })?,
        status: r.get(4)?,
        resolution: r.get(5)?,
        proposal: r.get(6)?,
        item: r.get(7)?,
        decided_at: r.get(8)?,
        decided_by: r.get(9)?,
    })
}

pub fn list(nx: &Nexus, status: Option<&str>) -> KipResult<Vec<Contradiction>> {
    let mut st = nx.conn()?.prepare(&format!(
        "SELECT {COLS} FROM contradictions WHERE ?1 IS NULL OR status = ?1 ORDER BY id DESC LIMIT 500"
    ))?;
    let rows = st.query_map([status], row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn get(nx: &Nexus, id: i64) -> KipResult<Option<Contradiction>> {
    Ok(nx
        .conn()?
        .query_row(
            &format!("SELECT {COLS} FROM contradictions WHERE id = ?1"),
            [id],
            row,
        )
        .optional()?)
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
        nx.conn()?.execute(
            "UPDATE contradictions SET item = ?2, status = 'open' WHERE id = ?1",
            params![id, s2],
        )?;
        proposals::approve(nx, p2, Some(&[s2]), &BTreeMap::new(), who)?;
        (p2, s2)
    };
    nx.conn()?.execute(
        "UPDATE contradictions SET status = CASE WHEN ?2 = 'needs_context' THEN 'needs_context' ELSE 'resolved' END, resolution = ?2, decided_at = ?3, decided_by = ?4, item = ?5 WHERE id = ?1",
        params![id, verdict.as_str(), store::now(), who.actor, seq],
    )?;
    Ok((pid, seq))
}
