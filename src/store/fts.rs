//! The full-text index on SQLite: which of a concept's texts it holds and
//! how it is kept up to date. (PostgreSQL keeps the same texts in a
//! generated column, migrations 2 and 22.)
//!
//! A concept's row has six columns: its name's words, its name's codes and
//! numbers, its aliases, its description, its body (`content_summary`,
//! `summary`, `title`, `content`) and the rest: every text of its other
//! attributes ([`rest`]), so a Person is found by what its profile says
//! (`timezone`, `working_style`, a block of MEMORY.md about the user) and
//! an Event by its participants. A type's definition (`$ConceptType`,
//! `$PropositionType`) has no rest: its `instance_schema` documents the
//! attributes of others, and would match questions about them.

use super::db::Db;
use crate::kip::KipResult;
use rusqlite::Connection;
use serde_json::Value;

/// Attributes the index holds in columns of their own.
pub const OWN_COLUMNS: [&str; 6] = [
    "aliases",
    "description",
    "content_summary",
    "summary",
    "title",
    "content",
];

/// At most this many bytes of a concept's other attributes are indexed
/// (what comes after is still stored, and read by KQL, only not found by
/// SEARCH).
pub const MAX_REST_BYTES: usize = 64 * 1024;

/// Whether an attribute's texts go in the index's last column: not one
/// with a column of its own, not a file kept verbatim (`*_md`: what it
/// says is in the notes an import makes of it, and a whole file would make
/// its element match every question).
pub fn in_rest(key: &str) -> bool {
    !OWN_COLUMNS.contains(&key) && !key.ends_with("_md")
}

/// Whether a text is a day or a time stamp and nothing else
/// (`2026-03-01`, `2026-03-01T09:15:00Z`, `2026-03-01 09:15+01:00`):
/// SEARCH finds days by `start_time` itself, and a stamp's numbers would
/// match every question that names a year. The same test as PostgreSQL's
/// `somnus_rest`.
pub fn is_stamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if !(digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10))
    {
        return false;
    }
    match b.get(10) {
        None => true,
        Some(b'T' | b' ') => {
            b.len() > 11
                && b[11..]
                    .iter()
                    .all(|c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b'+' | b'-' | b'Z'))
        }
        _ => false,
    }
}

/// The texts of a concept's other attributes ([`in_rest`]), at any depth
/// (a list's items, an object's values), one space between them, at most
/// [`MAX_REST_BYTES`]; numbers, booleans, days and time stamps
/// ([`is_stamp`]) are left out.
pub fn rest(attributes: &Value) -> String {
    fn walk(v: &Value, out: &mut String) -> bool {
        match v {
            Value::String(s) if is_stamp(s) => true,
            Value::String(s) => {
                if !out.is_empty() {
                    out.push(' ');
                }
                let room = MAX_REST_BYTES.saturating_sub(out.len());
                if s.len() <= room {
                    out.push_str(s);
                    true
                } else {
                    let mut end = room;
                    while !s.is_char_boundary(end) {
                        end -= 1;
                    }
                    out.push_str(&s[..end]);
                    false
                }
            }
            Value::Array(items) => items.iter().all(|i| walk(i, out)),
            Value::Object(m) => m.values().all(|i| walk(i, out)),
            _ => true,
        }
    }
    let mut out = String::new();
    if let Value::Object(m) = attributes {
        for (k, v) in m {
            if in_rest(k) && !walk(v, &mut out) {
                break;
            }
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// [`rest`] of a concept's attributes as stored (JSON text); nothing for
/// text that is not an object.
pub fn rest_of_text(attributes: &str) -> String {
    serde_json::from_str::<Value>(attributes)
        .map(|v| rest(&v))
        .unwrap_or_default()
}

/// Brings the full-text index up to date with the concepts changed since
/// the last call (see the `fts_dirty` migration). Every write command ends
/// with it and every SEARCH starts with it.
/// On PostgreSQL the index is a generated column: nothing to do.
pub fn sync_fts<'a>(db: impl Into<Db<'a>>) -> KipResult<()> {
    match db.into() {
        Db::Sqlite(conn) => Ok(sync_fts_raw(conn)?),
        Db::Postgres(_) => Ok(()),
    }
}

/// `sync_fts` for a reader: one that cannot write here (the write lock is
/// taken, or the file is read-only) searches the index as the last commit
/// left it.
pub fn sync_fts_for_read<'a>(db: impl Into<Db<'a>>) -> KipResult<()> {
    let Db::Sqlite(conn) = db.into() else {
        return Ok(());
    };
    match sync_fts_raw(conn) {
        Err(rusqlite::Error::SqliteFailure(e, _))
            if matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy
                    | rusqlite::ErrorCode::DatabaseLocked
                    | rusqlite::ErrorCode::ReadOnly
            ) =>
        {
            Ok(())
        }
        other => Ok(other?),
    }
}

pub(super) fn sync_fts_raw(conn: &Connection) -> rusqlite::Result<()> {
    let pending: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM fts_dirty)")?
        .query_row([], |r| r.get(0))?;
    if !pending {
        return Ok(());
    }
    conn.prepare_cached("DELETE FROM concept_fts WHERE rowid IN (SELECT id FROM fts_dirty)")?
        .execute([])?;
    // CROSS JOIN keeps the (small) queue as the outer loop
    conn.prepare_cached(
        "INSERT INTO concept_fts(rowid, name, codes, aliases, description, body, rest) \
         SELECT c.id, somnus_terms(c.name, 'words'), somnus_terms(c.name, 'codes'), \
             somnus_terms((SELECT group_concat(value, ' ') FROM json_each(c.attributes, '$.aliases'))), \
             somnus_terms(json_extract(c.attributes, '$.description')), \
             somnus_terms(concat_ws(' ', json_extract(c.attributes, '$.content_summary'), json_extract(c.attributes, '$.summary'), \
                       json_extract(c.attributes, '$.title'), json_extract(c.attributes, '$.content'))), \
             somnus_terms(CASE WHEN c.type LIKE '$%' THEN NULL ELSE somnus_rest(c.attributes) END) \
         FROM fts_dirty d CROSS JOIN concepts c ON c.id = d.id",
    )?
    .execute([])?;
    conn.prepare_cached("DELETE FROM fts_dirty")?.execute([])?;
    Ok(())
}
