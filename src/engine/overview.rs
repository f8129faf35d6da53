//! Read-only views for browsing clients (the console): the schema with
//! member counts, an index of concepts for fuzzy finding, one concept's
//! neighbourhood, and the query history.

use crate::kip::KipResult;
use crate::store::{self, ids};
use rusqlite::{Connection, params};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct TypeInfo {
    pub name: String,
    pub description: String,
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchemaOverview {
    pub self_name: String,
    pub self_persona: String,
    pub concepts: i64,
    pub propositions: i64,
    pub domains: Vec<TypeInfo>,
    pub concept_types: Vec<TypeInfo>,
    pub predicates: Vec<TypeInfo>,
}

fn description(attrs: &str) -> String {
    serde_json::from_str::<Value>(attrs)
        .ok()
        .and_then(|v| {
            v.get("description")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// Rows of (name, attributes, count) as type summaries.
fn type_infos(conn: &Connection, sql: &str) -> KipResult<Vec<TypeInfo>> {
    let mut st = conn.prepare_cached(sql)?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for r in rows {
        let (name, attrs, count) = r?;
        out.push(TypeInfo {
            name,
            description: description(&attrs),
            count,
        });
    }
    Ok(out)
}

/// Every domain with its description and member count, by name.
pub fn domains(conn: &Connection) -> KipResult<Vec<TypeInfo>> {
    type_infos(
        conn,
        "SELECT d.name, d.attributes, (SELECT COUNT(*) FROM propositions p WHERE p.object = d.id AND p.predicate = 'belongs_to_domain') FROM concepts d WHERE d.type = 'Domain' ORDER BY d.name",
    )
}

pub fn schema_overview(conn: &Connection) -> KipResult<SchemaOverview> {
    let mut o = SchemaOverview {
        concepts: conn.query_row("SELECT COUNT(*) FROM concepts", [], |r| r.get(0))?,
        propositions: conn.query_row("SELECT COUNT(*) FROM propositions", [], |r| r.get(0))?,
        ..Default::default()
    };
    if let Some(me) = store::concept_by_type_name(conn, "Person", "$self")? {
        o.self_name = me
            .attributes
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("$self")
            .to_string();
        o.self_persona = me
            .attributes
            .get("persona")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
    }
    o.concept_types = type_infos(
        conn,
        "SELECT t.name, t.attributes, (SELECT COUNT(*) FROM concepts c WHERE c.type = t.name) FROM concepts t WHERE t.type = '$ConceptType' ORDER BY t.name",
    )?;
    o.predicates = type_infos(
        conn,
        "SELECT t.name, t.attributes, (SELECT COUNT(*) FROM propositions p WHERE p.predicate = t.name) FROM concepts t WHERE t.type = '$PropositionType' ORDER BY t.name",
    )?;
    o.domains = domains(conn)?;
    Ok(o)
}

/// One concept as the fuzzy finder sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptEntry {
    pub id: i64,
    pub ty: String,
    pub name: String,
    pub aliases: Vec<String>,
}

/// Up to `limit` concepts, most recently changed first.
pub fn concept_index(conn: &Connection, limit: usize) -> KipResult<Vec<ConceptEntry>> {
    let mut st = conn.prepare_cached(
        "SELECT id, type, name, json_extract(attributes, '$.aliases') FROM concepts ORDER BY updated_at DESC, id DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit as i64], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, ty, name, aliases) = row?;
        let aliases = aliases
            .and_then(|a| serde_json::from_str::<Vec<Value>>(&a).ok())
            .map(|v| {
                v.into_iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        out.push(ConceptEntry {
            id,
            ty,
            name,
            aliases,
        });
    }
    Ok(out)
}

/// A link next to the focused concept.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub link_id: String,
    pub predicate: String,
    pub outgoing: bool,
    /// The element on the other end (0 when it is gone).
    pub other: i64,
    pub other_label: String,
    pub other_is_concept: bool,
    pub confidence: Option<f64>,
    pub superseded: bool,
    pub metadata: Map<String, Value>,
    pub attributes: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Neighbourhood {
    pub id: i64,
    pub kip_id: String,
    pub ty: String,
    pub name: String,
    pub attributes: Map<String, Value>,
    pub metadata: Map<String, Value>,
    pub edges: Vec<Edge>,
    /// `(predicate, outgoing, total)` including links beyond the cap.
    pub counts: Vec<(String, bool, i64)>,
}

/// `Type: Name` of a concept (true), or a link's id and predicate.
pub(crate) fn label(conn: &Connection, id: i64) -> KipResult<(String, bool)> {
    Ok(match store::element(conn, id)? {
        Some(store::Element::Concept(c)) => (format!("{}: {}", c.ty, c.name), true),
        Some(store::Element::Prop(p)) => (
            format!("({} {})", ids::prop_id(p.id, &p.predicate), p.predicate),
            false,
        ),
        None => ("(missing)".into(), false),
    })
}

/// The concept and up to `cap` links in each direction.
pub fn neighbourhood(conn: &Connection, id: i64, cap: usize) -> KipResult<Option<Neighbourhood>> {
    let Some(c) = store::concept_by_id(conn, id)? else {
        return Ok(None);
    };
    let mut n = Neighbourhood {
        id,
        kip_id: c.kip_id(),
        ty: c.ty.clone(),
        name: c.name.clone(),
        attributes: c.attributes.clone(),
        metadata: c.metadata.clone(),
        edges: Vec::new(),
        counts: Vec::new(),
    };
    n.metadata.insert("_version".into(), Value::from(c.version));
    n.metadata
        .insert("_updated_at".into(), Value::from(c.updated_at.clone()));
    for (outgoing, sql, count_sql) in [
        (
            true,
            "SELECT id FROM propositions WHERE subject = ?1 ORDER BY predicate, id LIMIT ?2",
            "SELECT predicate, COUNT(*) FROM propositions WHERE subject = ?1 GROUP BY predicate ORDER BY predicate",
        ),
        (
            false,
            "SELECT id FROM propositions WHERE object = ?1 ORDER BY predicate, id LIMIT ?2",
            "SELECT predicate, COUNT(*) FROM propositions WHERE object = ?1 GROUP BY predicate ORDER BY predicate",
        ),
    ] {
        let mut st = conn.prepare_cached(sql)?;
        let link_ids: Vec<i64> = st
            .query_map(params![id, cap as i64], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for lid in link_ids {
            let Some(p) = store::prop_by_id(conn, lid)? else {
                continue;
            };
            let other = if outgoing { p.object } else { p.subject };
            let (other_label, other_is_concept) = label(conn, other)?;
            n.edges.push(Edge {
                link_id: p.kip_id(),
                predicate: p.predicate.clone(),
                outgoing,
                other,
                other_label,
                other_is_concept,
                confidence: p.metadata.get("confidence").and_then(Value::as_f64),
                superseded: p
                    .metadata
                    .get("superseded")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                metadata: p.metadata.clone(),
                attributes: p.attributes.clone(),
            });
        }
        let mut st = conn.prepare_cached(count_sql)?;
        for r in st.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
            let (p, k) = r?;
            n.counts.push((p, outgoing, k));
        }
    }
    Ok(Some(n))
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub at: String,
    pub command: String,
    pub parameters: String,
}

pub fn history_add(conn: &Connection, command: &str, parameters: &str) -> KipResult<()> {
    // no duplicates: a command run again moves to the top
    conn.execute(
        "DELETE FROM console_history WHERE command = ?1 AND parameters = ?2",
        params![command, parameters],
    )?;
    conn.execute(
        "INSERT INTO console_history(at, command, parameters) VALUES (?1, ?2, ?3)",
        params![store::now(), command, parameters],
    )?;
    Ok(())
}

pub fn history(conn: &Connection, limit: usize) -> KipResult<Vec<HistoryEntry>> {
    let mut st = conn.prepare_cached(
        "SELECT at, command, parameters FROM console_history ORDER BY id DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit as i64], |r| {
        Ok(HistoryEntry {
            at: r.get(0)?,
            command: r.get(1)?,
            parameters: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
