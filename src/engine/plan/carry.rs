//! What a query carries of its answers beside their ids.
//!
//! A FIND that projects `?n.name` or `?n` needs, after the query, the
//! elements its variables name. On PostgreSQL each read is a round trip,
//! so the query itself returns them: for each carried variable one more
//! column, the concept as a `jsonb` array read by id once the rows are
//! final (after any grouping, `ORDER BY` and `LIMIT`, so only the rows
//! returned are read). SQLite carries them the same way (a JSON array's
//! text): one statement instead of one more per element.

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
    /// The carried value of the concepts table aliased `a`: one JSON array.
    fn array(self, backend: Backend, a: &str) -> String {
        match (self, backend) {
            (Carry::Labels, Backend::Postgres) => format!("jsonb_build_array({a}.type, {a}.name)"),
            (Carry::Labels, Backend::Sqlite) => format!("json_array({a}.type, {a}.name)"),
            (Carry::Concept, Backend::Postgres) => format!(
                "jsonb_build_array({a}.type, {a}.name, {a}.attributes, {a}.metadata, {a}.version, {a}.updated_at)"
            ),
            (Carry::Concept, Backend::Sqlite) => format!(
                "json_array({a}.type, {a}.name, json({a}.attributes), json({a}.metadata), {a}.version, {a}.updated_at)"
            ),
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
        let cols: Vec<String> = carry
            .iter()
            .map(|(i, c)| {
                format!(
                    "(SELECT {} FROM concepts c_ WHERE c_.id = w_.r{i})",
                    c.array(self.backend, "c_")
                )
            })
            .collect();
        // (a projection of the ordered rows: no join, so their order stays)
        let sql = format!("{with}SELECT w_.*, {} FROM ({body}) AS w_", cols.join(", "));
        (sql, carry)
    }
}

impl Planner<'_> {
    /// When each row of the one branch is a distinct solution and every
    /// variable carried is a concept of the branch's own tables, the
    /// columns to carry read those tables in place (no lookup by id):
    /// `jsonb_build_array(…) AS cN` each, on PostgreSQL.
    pub(super) fn carried_in_place(
        &self,
        carry: &[(usize, Carry)],
        vars: &[String],
    ) -> Vec<String> {
        carry
            .iter()
            .map(|(i, c)| match self.lookup(&vars[*i]).map(|b| &b.kind) {
                Some(super::VarKind::Concept(a)) => {
                    Some(format!("{} AS c{i}", c.array(self.backend, a)))
                }
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default()
    }
}

/// Reads a carried column: `None` when the id is not a concept's. The
/// array (PostgreSQL's `jsonb`, SQLite's text) is read straight into the
/// concept's fields, with no JSON tree in between.
pub fn read(id: i64, what: Carry, v: Val) -> KipResult<Option<Carried>> {
    let bad = |_| KipError::internal(format!("a carried column of element {id} is malformed"));
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
