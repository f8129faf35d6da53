//! What one write did (or, under `dry_run`, would do): the elements it
//! created, updated and deleted, named, with the fields an update changed.
//! Read from the audit entry the write recorded, so it covers every
//! element the command touched (`SET PROPOSITIONS` links, cascades), not
//! only the blocks the KIP result itemizes.

use super::entry;
use crate::kip::KipResult;
use crate::store::{self, Element, ids};
use rusqlite::{Connection, params};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// How many elements of each kind are listed by name; the counts are
/// always exact.
pub const LISTED: usize = 50;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Net {
    Create,
    Update,
    Delete,
}

/// `{"created": n, "updated": n, "deleted": n, "elements": [...]}` for an
/// audit entry, each element `{"change", "id", "what"}` and, for an
/// update, `"fields"`; `"more"` counts elements beyond those listed.
pub fn effects(conn: &Connection, entry_id: i64) -> KipResult<Value> {
    let Some(e) = entry(conn, entry_id)? else {
        // a write that changed nothing leaves no entry
        return Ok(summary(vec![], [0, 0, 0], 0));
    };
    // each element's net change, in the order first touched
    let mut order: Vec<i64> = Vec::new();
    let mut net: HashMap<i64, (Net, Option<String>)> = HashMap::new();
    for id in e.first_id..e.end_id {
        order.push(id);
        net.insert(id, (Net::Create, None));
    }
    let mut st = conn.prepare_cached(
        "SELECT element, op, before FROM audit_changes WHERE id >= ?1 AND id < ?2 AND entry = ?3 ORDER BY id",
    )?;
    let rows = st.query_map(
        params![e.first_change, e.first_change + e.recorded, e.id],
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        },
    )?;
    // names of concepts the command deleted, for the links that hung on them
    let mut gone: HashMap<i64, String> = HashMap::new();
    for row in rows {
        let (el, op, before) = row?;
        if op == "delete"
            && let Some(b) = before.as_deref().and_then(|b| serde_json::from_str::<Value>(b).ok())
            && b.get("predicate").is_none()
        {
            gone.insert(el, describe_image(conn, &b, &HashMap::new())?);
        }
        match net.get_mut(&el) {
            None => {
                order.push(el);
                let n = match op.as_str() {
                    "insert" => Net::Create,
                    "delete" => Net::Delete,
                    _ => Net::Update,
                };
                net.insert(el, (n, before));
            }
            // deleted in the end (if it was also created here, it is
            // dropped below: no net change)
            Some((n, _)) if op == "delete" => *n = Net::Delete,
            Some(_) => {}
        }
    }
    let mut counts = [0usize; 3];
    let mut listed = Vec::new();
    let mut more = 0;
    for el in order {
        let Some((n, before)) = net.get(&el) else {
            continue;
        };
        let now = store::element(conn, el)?;
        let created_here = el >= e.first_id && el < e.end_id;
        // an id reserved but never used, or made and dropped again
        if created_here && (now.is_none() || *n == Net::Delete) {
            continue;
        }
        let slot = match n {
            Net::Create => 0,
            Net::Update => 1,
            Net::Delete => 2,
        };
        counts[slot] += 1;
        if listed.len() >= LISTED * 3 {
            more += 1;
            continue;
        }
        let before: Option<Value> = before.as_deref().and_then(|b| serde_json::from_str(b).ok());
        let mut item = Map::new();
        item.insert(
            "change".into(),
            json!(["create", "update", "delete"][slot]),
        );
        match (&now, &before) {
            (Some(x), _) if *n != Net::Delete => {
                item.insert("id".into(), json!(element_id(x)));
                item.insert("what".into(), json!(describe(conn, x, &gone)?));
                if *n == Net::Update
                    && let Some(b) = &before
                {
                    item.insert("fields".into(), json!(changed_fields(b, x)));
                }
            }
            (_, Some(b)) => {
                item.insert("id".into(), json!(image_id(el, b)));
                item.insert("what".into(), json!(describe_image(conn, b, &gone)?));
            }
            _ => {
                item.insert("id".into(), json!(ids::concept_id(el)));
            }
        }
        listed.push(Value::Object(item));
    }
    Ok(summary(listed, counts, more))
}

fn summary(elements: Vec<Value>, counts: [usize; 3], more: usize) -> Value {
    let mut v = json!({
        "created": counts[0],
        "updated": counts[1],
        "deleted": counts[2],
        "elements": elements,
    });
    if more > 0 {
        v["more"] = json!(more);
    }
    v
}

fn element_id(x: &Element) -> String {
    match x {
        Element::Concept(c) => c.kip_id(),
        Element::Prop(p) => ids::prop_id(p.id, &p.predicate),
    }
}

fn image_id(el: i64, b: &Value) -> String {
    match b.get("predicate").and_then(Value::as_str) {
        Some(p) => ids::prop_id(el, p),
        None => ids::concept_id(el),
    }
}

/// `Person: Mira Chen`, or a link as `Person: Mira Chen -works_on-> Project: Atlas`.
fn describe(conn: &Connection, x: &Element, gone: &HashMap<i64, String>) -> KipResult<String> {
    Ok(match x {
        Element::Concept(c) => format!("{}: {}", c.ty, c.name),
        Element::Prop(p) => format!(
            "{} -{}-> {}",
            endpoint(conn, p.subject, gone)?,
            p.predicate,
            endpoint(conn, p.object, gone)?
        ),
    })
}

fn describe_image(
    conn: &Connection,
    b: &Value,
    gone: &HashMap<i64, String>,
) -> KipResult<String> {
    if let Some(p) = b.get("predicate").and_then(Value::as_str) {
        let end = |k: &str| -> KipResult<String> {
            match b.get(k).and_then(Value::as_i64) {
                Some(id) => endpoint(conn, id, gone),
                None => Ok("?".into()),
            }
        };
        return Ok(format!("{} -{p}-> {}", end("subject")?, end("object")?));
    }
    Ok(format!(
        "{}: {}",
        b["type"].as_str().unwrap_or("?"),
        b["name"].as_str().unwrap_or("?")
    ))
}

fn endpoint(conn: &Connection, id: i64, gone: &HashMap<i64, String>) -> KipResult<String> {
    Ok(match store::element(conn, id)? {
        Some(Element::Concept(c)) => format!("{}: {}", c.ty, c.name),
        Some(Element::Prop(p)) => ids::prop_id(p.id, &p.predicate),
        // deleted by the same command
        None => gone.get(&id).cloned().unwrap_or_else(|| ids::concept_id(id)),
    })
}

/// `attributes.status`, `metadata.confidence`, `name`: what differs
/// between the image before the command and the element now.
fn changed_fields(before: &Value, now: &Element) -> Vec<String> {
    let (name, attrs, meta) = match now {
        Element::Concept(c) => (Some(&c.name), &c.attributes, &c.metadata),
        Element::Prop(p) => (None, &p.attributes, &p.metadata),
    };
    let mut out = Vec::new();
    if let Some(n) = name
        && before.get("name").and_then(Value::as_str) != Some(n.as_str())
    {
        out.push("name".to_string());
    }
    for (part, now) in [("attributes", attrs), ("metadata", meta)] {
        let empty = Map::new();
        let was = before.get(part).and_then(Value::as_object).unwrap_or(&empty);
        let mut keys: Vec<&String> = was.keys().chain(now.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            if was.get(k) != now.get(k) {
                out.push(format!("{part}.{k}"));
            }
        }
    }
    out
}
