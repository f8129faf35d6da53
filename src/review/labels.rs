//! The operator's decisions on pairs: each approval or rejection of a
//! merge or of a "same or different?" item is kept with the pair's
//! comparison levels as they were when it was proposed, and the model of
//! that memory is re-estimated with them. Undoing an approved merge takes
//! its decision back.

use crate::kip::KipResult;
use crate::store;
use crate::store::db::Db;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One operator decision on a pair: its comparison levels, and whether
/// the two were one thing.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub levels: BTreeMap<String, String>,
    pub same: bool,
}

/// The item parameter holding the pairs an item decides, each
/// `{"a": "Type:Name", "b": "Type:Name", "levels": {...}}`.
pub const PARAM: &str = "comparison";

/// Keeps the decision on every pair an item carries (`same`: approved).
pub fn record<'a>(
    db: impl Into<Db<'a>>,
    proposal: i64,
    item: i64,
    params: &Map<String, Value>,
    same: bool,
    by: &str,
) -> KipResult<usize> {
    let db = db.into();
    let Some(pairs) = params.get(PARAM).and_then(Value::as_array) else {
        return Ok(0);
    };
    // a decision taken again (rejected, then approved) replaces the first
    db.execute(
        "DELETE FROM match_labels WHERE proposal = ?1 AND item = ?2",
        crate::args![proposal, item],
    )?;
    let mut n = 0;
    for p in pairs {
        let (Some(a), Some(b), Some(levels)) = (
            p.get("a").and_then(Value::as_str),
            p.get("b").and_then(Value::as_str),
            p.get("levels").filter(|l| l.is_object()),
        ) else {
            continue;
        };
        db.execute(
            "INSERT INTO match_labels(a, b, levels, same, proposal, item, decided_by, decided_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            crate::args![
                a,
                b,
                levels.to_string(),
                i64::from(same),
                proposal,
                item,
                by,
                store::now()
            ],
        )?;
        n += 1;
    }
    Ok(n)
}

/// Takes back the decision recorded for an item (its approval undone).
pub fn forget<'a>(db: impl Into<Db<'a>>, proposal: i64, item: i64) -> KipResult<()> {
    db.into().execute(
        "DELETE FROM match_labels WHERE proposal = ?1 AND item = ?2",
        crate::args![proposal, item],
    )?;
    Ok(())
}

/// Every decision kept, oldest first.
pub fn all<'a>(db: impl Into<Db<'a>>) -> KipResult<Vec<Label>> {
    db.into()
        .query("SELECT levels, same FROM match_labels ORDER BY id", &[])?
        .iter()
        .map(|r| {
            let levels: BTreeMap<String, String> =
                serde_json::from_str(&r.text(0)?).unwrap_or_default();
            Ok(Label {
                levels,
                same: r.i64(1)? != 0,
            })
        })
        .collect()
}

/// What the decisions kept are, in short: a model fitted under another
/// digest is out of date.
pub fn digest<'a>(db: impl Into<Db<'a>>) -> KipResult<String> {
    let r = db.into().query_opt(
        "SELECT COUNT(*), COALESCE(MAX(id), 0), CAST(COALESCE(SUM(same), 0) AS BIGINT) FROM match_labels",
        &[],
    )?;
    Ok(match r {
        Some(r) => format!(
            "{}:{}:{}",
            r.opt_i64(0)?.unwrap_or(0),
            r.opt_i64(1)?.unwrap_or(0),
            r.opt_i64(2)?.unwrap_or(0)
        ),
        None => "0:0:0".into(),
    })
}
