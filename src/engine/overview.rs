//! Read-only views for browsing clients (the console): the schema with
//! member counts, an index of concepts for fuzzy finding, one concept's
//! neighbourhood, and the query history.

use crate::kip::KipResult;
use crate::store::db::{Db, Val};
use crate::store::{self, ids};
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
fn type_infos(conn: Db<'_>, sql: &str) -> KipResult<Vec<TypeInfo>> {
    let mut out = Vec::new();
    for r in conn.query(sql, &[])? {
        let (name, attrs, count) = (r.text(0)?, r.text(1)?, r.i64(2)?);
        out.push(TypeInfo {
            name,
            description: description(&attrs),
            count,
        });
    }
    Ok(out)
}

/// Every domain with its description and member count, by name.
pub fn domains<'a>(conn: impl Into<Db<'a>>) -> KipResult<Vec<TypeInfo>> {
    type_infos(
        conn.into(),
        "SELECT d.name, d.attributes, (SELECT COUNT(*) FROM propositions p WHERE p.object = d.id AND p.predicate = 'belongs_to_domain') FROM concepts d WHERE d.type = 'Domain' ORDER BY d.name",
    )
}

pub fn schema_overview<'a>(conn: impl Into<Db<'a>>) -> KipResult<SchemaOverview> {
    let conn = conn.into();
    let mut o = SchemaOverview {
        concepts: conn
            .query_i64("SELECT COUNT(*) FROM concepts", &[])?
            .unwrap_or(0),
        propositions: conn
            .query_i64("SELECT COUNT(*) FROM propositions", &[])?
            .unwrap_or(0),
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
pub fn concept_index<'a>(conn: impl Into<Db<'a>>, limit: usize) -> KipResult<Vec<ConceptEntry>> {
    let conn = conn.into();
    let aliases = conn.backend().json_get("attributes", "?2");
    let mut out = Vec::new();
    for r in conn.query(
        &format!(
            "SELECT id, type, name, {aliases} FROM concepts ORDER BY updated_at DESC, id DESC LIMIT ?1"
        ),
        &[Val::Int(limit as i64), conn.backend().json_path(&["aliases"])],
    )? {
        let (id, ty, name) = (r.i64(0)?, r.text(1)?, r.text(2)?);
        let aliases = match r.json(3)? {
            Value::Array(v) => v
                .into_iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
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
pub(crate) fn label(conn: Db<'_>, id: i64) -> KipResult<(String, bool)> {
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
pub fn neighbourhood<'a>(
    conn: impl Into<Db<'a>>,
    id: i64,
    cap: usize,
) -> KipResult<Option<Neighbourhood>> {
    let conn = conn.into();
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
        let link_ids: Vec<i64> = conn
            .query(sql, &[Val::Int(id), Val::Int(cap as i64)])?
            .iter()
            .map(|r| r.i64(0))
            .collect::<KipResult<_>>()?;
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
        for r in conn.query(count_sql, &[Val::Int(id)])? {
            n.counts.push((r.text(0)?, outgoing, r.i64(1)?));
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

pub fn history_add<'a>(conn: impl Into<Db<'a>>, command: &str, parameters: &str) -> KipResult<()> {
    let conn = conn.into();
    // no duplicates: a command run again moves to the top
    conn.execute(
        "DELETE FROM console_history WHERE command = ?1 AND parameters = ?2",
        &[command.into(), parameters.into()],
    )?;
    conn.execute(
        "INSERT INTO console_history(at, command, parameters) VALUES (?1, ?2, ?3)",
        &[store::now().into(), command.into(), parameters.into()],
    )?;
    Ok(())
}

pub fn history<'a>(conn: impl Into<Db<'a>>, limit: usize) -> KipResult<Vec<HistoryEntry>> {
    conn.into()
        .query(
            "SELECT at, command, parameters FROM console_history ORDER BY id DESC LIMIT ?1",
            &[Val::Int(limit as i64)],
        )?
        .iter()
        .map(|r| {
            Ok(HistoryEntry {
                at: r.text(0)?,
                command: r.text(1)?,
                parameters: r.text(2)?,
            })
        })
        .collect()
}
