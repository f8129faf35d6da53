//! `EXPORT`: a matched subgraph as an idempotent UPSERT capsule that
//! re-imports to the same graph. Concepts come first, then propositions in
//! dependency order; endpoints outside the set are written as `{type, name}`
//! or as a nested `(s, "p", o)`; engine `_` metadata is never exported.

use super::kml::match_targets;
use super::kql::{decode_cursor, encode_cursor};
use crate::kip::ast::ExportStmt;
use crate::kip::{KipError, KipResult};
use crate::store::db::Db;
use crate::store::{self, Concept, Element, Proposition};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// Elements above this in one page are refused (`KIP_4002`).
pub const MAX_EXPORT: usize = 100_000;

pub struct ExportOutput {
    pub result: Value,
    pub next_cursor: Option<String>,
}

fn key(k: &str) -> String {
    let ident = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

/// A KIP object literal with bare keys where they are identifiers. Keys
/// are written in code point order, at every depth: a capsule says the
/// same whichever database the memory lives in (PostgreSQL's `jsonb`
/// keeps keys in an order of its own) and however it was moved.
pub fn object_literal(m: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let parts: Vec<String> = keys
        .into_iter()
        .map(|k| format!("{}: {}", key(k), sorted(&m[k])))
        .collect();
    format!("{{ {} }}", parts.join(", "))
}

/// A value with its objects' keys in code point order.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn author_metadata(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn identity(c: &Concept) -> String {
    format!("{{type: {}, name: {}}}", json!(c.ty), json!(c.name))
}

struct Writer<'c> {
    conn: Db<'c>,
    handles: HashMap<i64, String>,
}

impl Writer<'_> {
    fn endpoint(&self, id: i64, depth: usize) -> KipResult<String> {
        if let Some(h) = self.handles.get(&id) {
            return Ok(format!("?{h}"));
        }
        if depth > 32 {
            return Err(KipError::exhausted(
                "higher-order propositions nest too deeply to export",
            ));
        }
        match store::element(self.conn, id)? {
            Some(Element::Concept(c)) => Ok(identity(&c)),
            Some(Element::Prop(p)) => Ok(format!(
                "({}, {}, {})",
                self.endpoint(p.subject, depth + 1)?,
                json!(p.predicate),
                self.endpoint(p.object, depth + 1)?
            )),
            None => Err(KipError::not_found(format!("dangling endpoint {id}"))),
        }
    }
}

pub fn export(conn: Db<'_>, st: &ExportStmt) -> KipResult<ExportOutput> {
    let offset = match &st.cursor {
        Some(c) => decode_cursor(c)? as usize,
        None => 0,
    };
    let mut ids = match_targets(conn, &st.where_, &st.target, None)?;
    ids.sort_unstable();
    let mut concepts: Vec<Concept> = Vec::new();
    let mut props: Vec<Proposition> = Vec::new();
    for id in &ids {
        match store::element(conn, *id)? {
            Some(Element::Concept(c)) => concepts.push(c),
            Some(Element::Prop(p)) => props.push(p),
            None => {}
        }
    }
    // one stable order for paging: concepts, then propositions, each by id
    let total = concepts.len() + props.len();
    let limit = st.limit.map(|l| l as usize).unwrap_or(MAX_EXPORT);
    if st.limit.is_none() && total > MAX_EXPORT {
        return Err(KipError::exhausted(format!(
            "EXPORT matched {total} elements; the cap is {MAX_EXPORT}"
        ))
        .with_hint("Use LIMIT with CURSOR pagination."));
    }
    let end = (offset + limit).min(total);
    let start = offset.min(total);
    let page_concepts: Vec<Concept> = concepts
        .iter()
        .enumerate()
        .filter(|(i, _)| *i >= start && *i < end)
        .map(|(_, c)| c.clone())
        .collect();
    let n_c = concepts.len();
    let mut page_props: Vec<Proposition> = props
        .iter()
        .enumerate()
        .filter(|(i, _)| n_c + i >= start && n_c + i < end)
        .map(|(_, p)| p.clone())
        .collect();
    let next_cursor = if end < total {
        Some(encode_cursor(end as u64))
    } else {
        None
    };

    // propositions that reference other propositions of the page come after them
    let in_page: HashSet<i64> = page_props.iter().map(|p| p.id).collect();
    let mut ordered = Vec::with_capacity(page_props.len());
    let mut placed: HashSet<i64> = HashSet::new();
    while !page_props.is_empty() {
        let before = page_props.len();
        let mut rest = Vec::new();
        for p in page_props.drain(..) {
            let ready = [p.subject, p.object]
                .iter()
                .all(|e| !in_page.contains(e) || placed.contains(e));
            if ready {
                placed.insert(p.id);
                ordered.push(p);
            } else {
                rest.push(p);
            }
        }
        if rest.len() == before {
            ordered.extend(rest);
            break;
        }
        page_props = rest;
    }

    let mut w = Writer {
        conn,
        handles: HashMap::new(),
    };
    let mut out = String::from("UPSERT {\n");
    for (i, c) in page_concepts.iter().enumerate() {
        let h = format!("c{}", i + 1);
        out.push_str(&format!("  CONCEPT ?{h} {{\n    {}\n", identity(c)));
        if !c.attributes.is_empty() {
            out.push_str(&format!(
                "    SET ATTRIBUTES {}\n",
                object_literal(&c.attributes)
            ));
        }
        out.push_str("  }");
        let md = author_metadata(&c.metadata);
        if !md.is_empty() {
            out.push_str(&format!(" WITH METADATA {}", object_literal(&md)));
        }
        out.push('\n');
        w.handles.insert(c.id, h);
    }
    for (i, p) in ordered.iter().enumerate() {
        let h = format!("p{}", i + 1);
        out.push_str(&format!(
            "  PROPOSITION ?{h} {{\n    ({}, {}, {})\n",
            w.endpoint(p.subject, 0)?,
            json!(p.predicate),
            w.endpoint(p.object, 0)?
        ));
        if !p.attributes.is_empty() {
            out.push_str(&format!(
                "    SET ATTRIBUTES {}\n",
                object_literal(&p.attributes)
            ));
        }
        out.push_str("  }");
        let md = author_metadata(&p.metadata);
        if !md.is_empty() {
            out.push_str(&format!(" WITH METADATA {}", object_literal(&md)));
        }
        out.push('\n');
        w.handles.insert(p.id, h);
    }
    out.push('}');
    Ok(ExportOutput {
        result: json!({ "capsule": out, "concepts": page_concepts.len(), "propositions": ordered.len() }),
        next_cursor,
    })
}
