//! What a query carries of its answers beside their ids.
//!
//! A FIND that projects `?n.name` or `?n` needs, after the query, the
//! elements its variables name. On PostgreSQL each read is a round trip,
//! so the query itself returns them: for each carried variable one more
//! column, the concept as a `jsonb` array read by id once the rows are
//! final (after any grouping, `ORDER BY` and `LIMIT`, so only the rows
//! returned are read). SQLite carries them the same way, as the concept's
//! own columns: one statement instead of one more per element.

use super::Planner;
use crate::kip::{KipError, KipResult};
use crate::store::Concept;
use crate::store::db::{Backend, Val};
use serde_json::{Map, Value};

/// What is carried of a concept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// Its type and name (`?n.name`, `?n.type`).
    Labels,
    /// The whole concept (`?n`, `?n.attributes.x`…).
    Concept,
}

impl Carry {
    /// The columns carried of the concepts table aliased `a`. PostgreSQL:
    /// one `jsonb` array (a round trip saved is worth building it).
    /// SQLite: the table's own columns as they are, the stored JSON of
    /// `attributes` and `metadata` read once by the engine, not parsed and
    /// written again into an array by SQLite first (that cost a point
    /// lookup a tenth of its instructions).
    fn columns(self, backend: Backend, a: &str) -> Vec<String> {
        match (self, backend) {
            (Carry::Labels, Backend::Postgres) => {
                vec![format!("jsonb_build_array({a}.type, {a}.name)")]
            }
            (Carry::Concept, Backend::Postgres) => vec![format!(
                "jsonb_build_array({a}.type, {a}.name, {a}.attributes, {a}.metadata, {a}.version, {a}.updated_at)"
            )],
            (Carry::Labels, Backend::Sqlite) => vec![format!("{a}.type"), format!("{a}.name")],
            (Carry::Concept, Backend::Sqlite) => [
                "type",
                "name",
                "attributes",
                "metadata",
                "version",
                "updated_at",
            ]
            .iter()
            .map(|c| format!("{a}.{c}"))
            .collect(),
        }
    }

    /// How many columns [`Carry::columns`] gives.
    pub fn width(self, backend: Backend) -> usize {
        match (self, backend) {
            (_, Backend::Postgres) => 1,
            (Carry::Labels, Backend::Sqlite) => 2,
            (Carry::Concept, Backend::Sqlite) => 6,
        }
    }
}

/// A carried value, as the query returned it.
pub enum Carried {
    Labels(String, String),
    Concept(Concept),
}

impl Planner<'_> {
    /// `body` (a query whose first columns are `r0`, `r1`…, in its final
    /// order) with the columns of `carry` appended, on PostgreSQL; as is on
    /// SQLite. Returns the statement and what it carries: only variables
    /// that bind element ids in every branch (`carriable`) are carried.
    pub(super) fn carrying(
        &self,
        with: &str,
        body: String,
        carry: &[(usize, Carry)],
        carriable: &[bool],
    ) -> (String, Vec<(usize, Carry)>) {
        let carry: Vec<(usize, Carry)> = carry
            .iter()
            .filter(|(i, _)| carriable.get(*i).copied().unwrap_or(false))
            .copied()
            .collect();
        if carry.is_empty() {
            return (format!("{with}{body}"), carry);
        }
        let sql = match self.backend {
            Backend::Postgres => {
                let cols: Vec<String> = carry
                    .iter()
                    .map(|(i, c)| {
                        format!(
                            "(SELECT {} FROM concepts c_ WHERE c_.id = w_.r{i})",
                            c.columns(self.backend, "c_").join(", ")
                        )
                    })
                    .collect();
                // (a projection of the ordered rows: no join, so their
                // order stays)
                format!("{with}SELECT w_.*, {} FROM ({body}) AS w_", cols.join(", "))
            }
            Backend::Sqlite => {
                // Each carried variable's concept joined by id. The ordered
                // rows stay in their order: the left side of a LEFT JOIN is
                // always SQLite's outer loop, and each row finds at most
                // one concept by its primary key.
                let mut cols = Vec::new();
                let mut joins = String::new();
                for (i, c) in &carry {
                    let a = format!("cc{i}_");
                    cols.extend(c.columns(self.backend, &a));
                    joins.push_str(&format!(" LEFT JOIN concepts {a} ON {a}.id = w_.r{i}"));
                }
                format!(
                    "{with}SELECT w_.*, {} FROM ({body}) AS w_{joins}",
                    cols.join(", ")
                )
            }
        };
        (sql, carry)
    }
}

impl Planner<'_> {
    /// When each row of the one branch is a distinct solution and every
    /// variable carried is a concept of the branch's own tables, the
    /// columns to carry read those tables in place (no lookup by id):
    /// `jsonb_build_array(…) AS cN` each on PostgreSQL, the table's
    /// columns on SQLite.
    pub(super) fn carried_in_place(
        &self,
        carry: &[(usize, Carry)],
        vars: &[String],
    ) -> Vec<String> {
        carry
            .iter()
            .map(|(i, c)| match self.lookup(&vars[*i]).map(|b| &b.kind) {
                Some(super::VarKind::Concept(a)) => Some(
                    c.columns(self.backend, a)
                        .into_iter()
                        .enumerate()
                        .map(|(j, col)| format!("{col} AS c{i}_{j}"))
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|c| c.concat())
            .unwrap_or_default()
    }
}

/// Reads the columns carried of one variable: `None` when the id is not a
/// concept's. PostgreSQL's array (`jsonb`) is read straight into the
/// concept's fields, with no JSON tree in between; SQLite's columns are
/// the fields, `attributes` and `metadata` read from their stored text.
pub fn read(id: i64, what: Carry, mut v: Vec<Val>) -> KipResult<Option<Carried>> {
    let bad = |_| KipError::internal(format!("a carried column of element {id} is malformed"));
    if v.len() > 1 {
        if matches!(v[0], Val::Null) {
            return Ok(None);
        }
        let mut row = crate::store::db::Row(std::mem::take(&mut v));
        return Ok(Some(match what {
            Carry::Labels => Carried::Labels(row.take_text(0)?, row.take_text(1)?),
            // (read as every other read of a concept reads its row)
            Carry::Concept => Carried::Concept(Concept {
                id,
                ty: row.take_text(0)?,
                name: row.take_text(1)?,
                attributes: row.take_obj(2)?,
                metadata: row.take_obj(3)?,
                version: row.i64(4)?,
                updated_at: row.take_text(5)?,
            }),
        }));
    }
    let Some(v) = v.pop() else {
        return Ok(None);
    };
    type Fields = (
        String,
        String,
        Map<String, Value>,
        Map<String, Value>,
        i64,
        String,
    );
    Ok(Some(match what {
        Carry::Labels => {
            let Some(labels) = decoded::<(String, String)>(v) else {
                return Ok(None);
            };
            let (ty, name) = labels.map_err(bad)?;
            Carried::Labels(ty, name)
        }
        Carry::Concept => {
            let Some(fields) = decoded::<Fields>(v) else {
                return Ok(None);
            };
            let (ty, name, attributes, metadata, version, updated_at) = fields.map_err(bad)?;
            Carried::Concept(Concept {
                id,
                ty,
                name,
                attributes,
                metadata,
                version,
                updated_at,
            })
        }
    }))
}

/// A carried column read as `T` (`None`: SQL's null, the id names no
/// concept).
fn decoded<T: serde::de::DeserializeOwned>(v: Val) -> Option<serde_json::Result<T>> {
    Some(match v {
        Val::Null => return None,
        Val::Json(j) => serde_json::from_value(j),
        Val::Text(t) => serde_json::from_str(&t),
        _ => Err(serde::de::Error::custom("not a JSON array")),
    })
}
