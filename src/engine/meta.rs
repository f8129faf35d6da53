//! META: `DESCRIBE` and `SEARCH`.

use super::kql::{decode_cursor, encode_cursor};
use crate::kip::ast::*;
use crate::kip::{KipError, KipResult};
use crate::store;
use crate::store::db::{Db, Val};
use serde_json::{Value, json};

pub struct MetaOutput {
    pub result: Value,
    pub next_cursor: Option<String>,
}

fn definition(conn: Db<'_>, meta_type: &str, name: &str) -> KipResult<Value> {
    let c = store::concept_by_type_name(conn, meta_type, name)?.ok_or_else(|| {
        let what = if meta_type == "$ConceptType" {
            "concept type"
        } else {
            "proposition type"
        };
        KipError::not_found(format!("{what} \"{name}\" is not defined")).with_hint(format!(
            "Names are case-sensitive; list them with DESCRIBE {}.",
            if meta_type == "$ConceptType" {
                "CONCEPT TYPES"
            } else {
                "PROPOSITION TYPES"
            }
        ))
    })?;
    Ok(
        json!({ "id": c.kip_id(), "type": c.ty, "name": c.name, "attributes": Value::Object(c.attributes) }),
    )
}

fn names_page(
    conn: Db<'_>,
    meta_type: &str,
    limit: Option<u64>,
    cursor: &Option<String>,
) -> KipResult<MetaOutput> {
    let offset = match cursor {
        Some(c) => decode_cursor(c)?,
        None => 0,
    };
    let lim = limit
        .map(|l| (l as i64).saturating_add(1))
        .unwrap_or(i64::MAX);
    let mut names: Vec<String> = conn
        .query(
            "SELECT name FROM concepts WHERE type = ?1 ORDER BY name LIMIT ?2 OFFSET ?3",
            &[meta_type.into(), Val::Int(lim), Val::Int(offset as i64)],
        )?
        .iter()
        .map(|r| r.text(0))
        .collect::<KipResult<_>>()?;
    let mut next_cursor = None;
    if let Some(l) = limit
        && names.len() as u64 > l
    {
        names.truncate(l as usize);
        next_cursor = Some(encode_cursor(offset + l));
    }
    Ok(MetaOutput {
        result: json!(names),
        next_cursor,
    })
}

fn domain_summaries(conn: Db<'_>) -> KipResult<Vec<Value>> {
    Ok(super::overview::domains(conn)?
        .into_iter()
        .map(|d| {
            let description = if d.description.is_empty() {
                Value::Null
            } else {
                Value::String(d.description)
            };
            json!({ "name": d.name, "description": description, "member_count": d.count })
        })
        .collect())
}

/// `embedder` is what semantic and hybrid SEARCH would use: PRIMER says
/// which retrieval modes this engine has (spec §5.2.1: "SHOULD advertise
/// actual capability … in its `DESCRIBE PRIMER` identity layer").
pub fn describe(
    conn: Db<'_>,
    d: &Describe,
    embedder: Option<&super::embed::EmbeddingConfig>,
) -> KipResult<MetaOutput> {
    let single = |v| {
        Ok(MetaOutput {
            result: v,
            next_cursor: None,
        })
    };
    match d {
        Describe::ConceptType(n) => single(definition(conn, "$ConceptType", n)?),
        Describe::PropositionType(n) => single(definition(conn, "$PropositionType", n)?),
        Describe::ConceptTypes { limit, cursor } => {
            names_page(conn, "$ConceptType", *limit, cursor)
        }
        Describe::PropositionTypes { limit, cursor } => {
            names_page(conn, "$PropositionType", *limit, cursor)
        }
        Describe::Domains => single(json!(domain_summaries(conn)?)),
        Describe::Primer => {
            let identity = match store::concept_by_type_name(conn, "Person", "$self")? {
                Some(c) => {
                    json!({ "id": c.kip_id(), "name": c.name, "attributes": Value::Object(c.attributes) })
                }
                None => Value::Null,
            };
            let domains = domain_summaries(conn)?;
            let mut map = Vec::new();
            for d in &domains {
                let name = d["name"].as_str().unwrap_or("");
                let keys: Vec<String> = conn
                    .query(
                        "SELECT c.type, c.name FROM propositions p JOIN concepts c ON c.id = p.subject \
                     JOIN concepts d ON d.id = p.object WHERE p.predicate = 'belongs_to_domain' AND d.type = 'Domain' AND d.name = ?1 \
                     ORDER BY c.version DESC, c.id LIMIT 8",
                        &[name.into()],
                    )?
                    .iter()
                    .map(|r| Ok(format!("{}:{}", r.text(0)?, r.text(1)?)))
                    .collect::<KipResult<_>>()?;
                let mut entry = d.clone();
                entry["key_concepts"] = json!(keys);
                map.push(entry);
            }
            let total = map.len();
            let search = match embedder {
                Some(e) => {
                    json!({ "modes": ["keyword", "semantic", "hybrid"], "default": "hybrid", "model": e.model })
                }
                None => json!({ "modes": ["keyword"], "default": "keyword", "model": null }),
            };
            single(
                json!({ "identity": identity, "domain_map": map, "total_domains": total, "search": search }),
            )
        }
    }
}
