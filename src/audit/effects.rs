//! What one write did (or, under `dry_run`, would do): the elements it
//! created, updated and deleted, named, with the fields an update changed.
//! Read from the audit entry the write recorded, so it covers every
//! element the command touched (`SET PROPOSITIONS` links, cascades), not
//! only the blocks the KIP result itemizes.

use super::entry;
use crate::kip::KipResult;
use crate::store::db::Db;
use crate::store::{self, Element, ids};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// `{"created": n, "updated": n, "deleted": n, "elements": [...]}` for an
/// audit entry: exact counts, and the first `listed` elements (creations
/// first, then the rest in the order the command touched them), each
/// `{"change", "id", "what"}` and, for an update, `"fields"`; `"more"`
/// counts the elements not listed.
pub fn effects<'a>(db: impl Into<Db<'a>>, entry_id: i64, listed: usize) -> KipResult<Value> {
    let conn = db.into();
    let Some(e) = entry(conn, entry_id)? else {
        // a write that changed nothing leaves no entry
        return Ok(summary(vec![], [0, 0, 0], 0));
    };
    // each element the entry recorded, once, in the order first touched:
    // whether it was deleted, whether (re-)inserted. One pass over the
    // entry's rows by id, reading only the two leading columns (the
    // images are never loaded), so a sweep over thousands of elements
    // costs a fraction of its write.
    let mut touched: HashMap<i64, (bool, bool)> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    for r in conn.query(
        "SELECT element, op FROM audit_changes WHERE id >= ?1 AND entry = ?3 ORDER BY id LIMIT ?2",
        &[e.first_change.into(), e.recorded.into(), e.id.into()],
    )? {
        let el = r.i64(0)?;
        let op = r.text(1)?;
        let t = touched.entry(el).or_insert_with(|| {
            order.push(el);
            (false, false)
        });
        t.0 |= op == "delete";
        t.1 |= op == "insert";
    }
    let made_here = |el: i64| el >= e.first_id && el < e.end_id;
    // created here then deleted; restored (re-inserted) and kept; deleted;
    // updated only
    let (mut dropped, mut restored, mut deleted, mut updated) = (0i64, 0i64, 0usize, 0usize);
    for (el, (d, i)) in &touched {
        match (made_here(*el), d, i) {
            (true, true, _) => dropped += 1,
            (true, false, _) => {}
            (false, false, true) => restored += 1,
            (false, true, false) => deleted += 1,
            (false, false, false) => updated += 1,
            (false, true, true) => {}
        }
    }
    let created = (e.end_id - e.first_id - dropped + restored).max(0) as usize;
    let counts = [created, updated, deleted];
    let total: usize = counts.iter().sum();

    let mut items = Vec::new();
    let mut names = Names::new();
    // what it created, in id order
    let mut id = e.first_id;
    while id < e.end_id && items.len() < listed {
        if let Some(x) = store::element(conn, id)? {
            items.push(item(
                "create",
                element_id(&x),
                describe(conn, &e, &x, &mut names)?,
                None,
            ));
        }
        id += 1;
    }
    // then what it restored, updated or deleted, in the order touched
    for el in order {
        if items.len() >= listed {
            break;
        }
        let (d, i) = touched[&el];
        if made_here(el) || (d && i) {
            continue;
        }
        // a deleted element is not looked for
        let now = if d { None } else { store::element(conn, el)? };
        match (now, d) {
            (Some(x), false) => {
                let (change, fields) = if i {
                    ("create", None)
                } else {
                    let fields =
                        first_before(conn, &e, el)?.map(|b| Value::from(changed_fields(&b, &x)));
                    ("update", fields)
                };
                items.push(item(
                    change,
                    element_id(&x),
                    describe(conn, &e, &x, &mut names)?,
                    fields,
                ));
            }
            _ => {
                let b = first_before(conn, &e, el)?.unwrap_or(Value::Null);
                items.push(item(
                    "delete",
                    image_id(el, &b),
                    describe_image(conn, &e, &b, &mut names)?,
                    None,
                ));
            }
        }
    }
    let more = total.saturating_sub(items.len());
    Ok(summary(items, counts, more))
}

fn item(change: &str, id: String, what: String, fields: Option<Value>) -> Value {
    let mut v = json!({ "change": change, "id": id, "what": what });
    if let Some(f) = fields {
        v["fields"] = f;
    }
    v
}

/// The element as it was before the command first changed it.
fn first_before(conn: Db<'_>, e: &super::Entry, el: i64) -> KipResult<Option<Value>> {
    Ok(conn
        .query_opt(
            "SELECT before FROM audit_changes WHERE element = ?1 AND entry = ?2 AND before IS NOT NULL ORDER BY id LIMIT 1",
            &[el.into(), e.id.into()],
        )?
        .map(|r| r.opt_text(0))
        .transpose()?
        .flatten()
        .and_then(|b| serde_json::from_str(&b).ok()))
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
/// Endpoint names already looked up: the links of one hub name it once.
type Names = HashMap<i64, String>;

fn describe(conn: Db<'_>, e: &super::Entry, x: &Element, names: &mut Names) -> KipResult<String> {
    Ok(match x {
        Element::Concept(c) => format!("{}: {}", c.ty, c.name),
        Element::Prop(p) => format!(
            "{} -{}-> {}",
            endpoint(conn, e, p.subject, names)?,
            p.predicate,
            endpoint(conn, e, p.object, names)?
        ),
    })
}

fn describe_image(
    conn: Db<'_>,
    e: &super::Entry,
    b: &Value,
    names: &mut Names,
) -> KipResult<String> {
    if let Some(p) = b.get("predicate").and_then(Value::as_str) {
        let mut end = |k: &str| -> KipResult<String> {
            match b.get(k).and_then(Value::as_i64) {
                Some(id) => endpoint(conn, e, id, names),
                None => Ok("?".into()),
            }
        };
        let (s, o) = (end("subject")?, end("object")?);
        return Ok(format!("{s} -{p}-> {o}"));
    }
    Ok(format!(
        "{}: {}",
        b["type"].as_str().unwrap_or("?"),
        b["name"].as_str().unwrap_or("?")
    ))
}

fn endpoint(conn: Db<'_>, e: &super::Entry, id: i64, names: &mut Names) -> KipResult<String> {
    if let Some(n) = names.get(&id) {
        return Ok(n.clone());
    }
    let name = match store::element(conn, id)? {
        Some(Element::Concept(c)) => format!("{}: {}", c.ty, c.name),
        Some(Element::Prop(p)) => ids::prop_id(p.id, &p.predicate),
        // deleted by the same command: named as it was
        None => match first_before(conn, e, id)? {
            Some(b) if b.get("predicate").is_none() => format!(
                "{}: {}",
                b["type"].as_str().unwrap_or("?"),
                b["name"].as_str().unwrap_or("?")
            ),
            _ => ids::concept_id(id),
        },
    };
    names.insert(id, name.clone());
    Ok(name)
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
        let was = before
            .get(part)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
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
