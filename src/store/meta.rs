//! The memory's own `meta` rows that hold a JSON value (the last session
//! end, the matcher's fitted model): read and written whole.

use super::db::{Db, Val};
use crate::kip::KipResult;
use serde::{Serialize, de::DeserializeOwned};

/// The value under `key`, if there is one and it reads as a `T`.
pub fn get<'a, T: DeserializeOwned>(db: impl Into<Db<'a>>, key: &str) -> Option<T> {
    let text = db
        .into()
        .query_opt("SELECT value FROM meta WHERE key = ?1", &[Val::from(key)])
        .ok()
        .flatten()
        .and_then(|r| r.opt_text(0).ok().flatten())?;
    serde_json::from_str(&text).ok()
}

/// Writes `value` under `key`, replacing what was there.
pub fn set<'a, T: Serialize>(db: impl Into<Db<'a>>, key: &str, value: &T) -> KipResult<()> {
    db.into().execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[
            Val::from(key),
            Val::from(serde_json::to_string(value).unwrap_or_default()),
        ],
    )?;
    Ok(())
}
