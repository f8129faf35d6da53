//! What one write did (or, under `dry_run`, would do): the elements it
//! created, updated and deleted, named, with the fields an update changed.
//! Read from the audit entry the write recorded, so it covers every
//! element the command touched (`SET PROPOSITIONS` links, cascades), not
//! only the blocks the KIP result itemizes.

use super::{Span, entry};
use crate::kip::KipResult;
use crate::store::db::{Db, Row, Val};
use crate::store::{self, Element, ids};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// What [`effects_of`] reads, read on PostgreSQL by the statement that
/// closes the entry ([`super::finish_reading`]): the entry's changes in
/// order, and for the elements it lists (the first `listed` it touched,
/// as [`effects_of`] picks them), their images now and before.
#[derive(Debug, Default)]
pub struct Preread {
    /// `(element, op)` of every change, in order.
    changes: Vec<(i64, String)>,
    /// The elements the images below were read for (absent from `images`:
    /// gone now).
    covered: HashSet<i64>,
    images: HashMap<i64, Element>,
    /// `(element, before)` of the changes with an image before, in order.
    befores: Vec<(i64, Value)>,
}

/// The common table expressions [`Preread`] needs (`?1` the entry, `?3`
/// how many elements are listed), after the closing statement's own.
pub(super) const PREREAD_WITH: &str = ", ch AS (SELECT x.id, x.element, x.op FROM audit_changes x, audit_log l \
       WHERE l.id = ?1 AND x.entry = l.id AND x.id >= l.first_change), \
     t AS (SELECT element, MIN(id) AS f, bool_or(op = 'delete') AS d, bool_or(op = 'insert') AS i \
       FROM ch GROUP BY element), \
     chosen AS (SELECT element, d FROM t WHERE NOT (d AND i) ORDER BY f LIMIT ?3)";

/// The columns [`Preread::read`] reads (the audit entry is `l`).
pub(super) const PREREAD_COLS: &str = ", (SELECT jsonb_agg(jsonb_build_array(element, op) ORDER BY id) FROM ch), \
     (SELECT jsonb_agg(element) FROM chosen), \
     (SELECT jsonb_agg(jsonb_build_array(k.id, k.type, k.name, k.attributes, k.metadata, k.version, k.updated_at)) \
       FROM concepts k WHERE k.id IN (SELECT element FROM chosen WHERE NOT d)), \
     (SELECT jsonb_agg(jsonb_build_array(k.id, k.subject, k.predicate, k.object, k.attributes, k.metadata, k.version, k.updated_at)) \
       FROM propositions k WHERE k.id IN (SELECT element FROM chosen WHERE NOT d)), \
     (SELECT jsonb_agg(jsonb_build_array(b.element, b.before) ORDER BY b.id) FROM audit_changes b \
       WHERE b.entry = l.id AND b.id >= l.first_change AND b.before IS NOT NULL \
       AND b.element IN (SELECT element FROM chosen))";

/// How many of an entry's changes the statement that closes it brings
/// back, each with its element's image now ([`CHANGES_JOIN`]); an entry
/// with more is read again by [`preread_sql`] (a sweep). Joining rows is
/// a fraction of the database's work of the aggregates [`PREREAD_COLS`]
/// builds, and most writes change a few elements.
pub(super) const CHANGE_ROWS: usize = 64;

/// The entry `l`'s first `?3` changes, each with the image now of its
/// element (a concept or a proposition: their ids are one sequence),
/// joined to the closing statement's one row (`c`, `l`, `s`; a row of
/// nulls when it has none).
pub(super) const CHANGES_JOIN: &str = " LEFT JOIN LATERAL (SELECT x.id, x.element, x.op, x.before FROM audit_changes x \
       WHERE x.entry = l.id AND x.id >= l.first_change ORDER BY x.id LIMIT ?3) x ON true \
     LEFT JOIN concepts k ON k.id = x.element LEFT JOIN propositions p ON p.id = x.element";

/// The columns [`Preread::of_changes`] reads.
pub(super) const CHANGES_COLS: &str = ", x.element, x.op, x.before, \
     CASE WHEN k.id IS NULL THEN NULL ELSE jsonb_build_array(k.id, k.type, k.name, k.attributes, k.metadata, k.version, k.updated_at) END, \
     CASE WHEN p.id IS NULL THEN NULL ELSE jsonb_build_array(p.id, p.subject, p.predicate, p.object, p.attributes, p.metadata, p.version, p.updated_at) END";

/// What [`Preread`] holds, read in one statement of its own for an entry
/// `?1` with more changes than [`CHANGE_ROWS`] (`?2`: how many elements
/// are listed).
pub(super) fn preread_sql() -> String {
    format!(
        "WITH {} SELECT {} FROM audit_log l WHERE l.id = ?1",
        PREREAD_WITH[2..].replace("?3", "?2"),
        PREREAD_COLS[2..].replace("?3", "?2")
    )
}

impl Preread {
    /// Reads [`PREREAD_COLS`] from `r`, starting at column `at`.
    pub(super) fn read(r: Row, at: usize) -> KipResult<Preread> {
        let bad = || crate::kip::KipError::internal("an audit entry's effects are malformed");
        let mut cols = r.0.into_iter().skip(at).map(|v| match v {
            Val::Null => Ok(Vec::new()),
            Val::Json(Value::Array(a)) => Ok(a),
            _ => Err(bad()),
        });
        let mut next = || cols.next().unwrap_or_else(|| Err(bad()));
        let pairs = |a: Vec<Value>| -> KipResult<Vec<(i64, Value)>> {
            a.into_iter()
                .map(|p| match p {
                    Value::Array(mut p) if p.len() == 2 => {
                        let v = p.pop().unwrap_or_default();
                        Ok((p[0].as_i64().ok_or_else(bad)?, v))
                    }
                    _ => Err(bad()),
                })
                .collect()
        };
        let changes = pairs(next()?)?
            .into_iter()
            .map(|(el, op)| Ok((el, op.as_str().ok_or_else(bad)?.to_string())))
            .collect::<KipResult<_>>()?;
        let covered = next()?
            .into_iter()
            .map(|v| v.as_i64().ok_or_else(bad))
            .collect::<KipResult<_>>()?;
        let mut images = HashMap::new();
        for a in next()? {
            let Value::Array(a) = a else {
                return Err(bad());
            };
            let c = store::concept_of_array(a)?;
            images.insert(c.id, Element::Concept(c));
        }
        for a in next()? {
            let Value::Array(a) = a else {
                return Err(bad());
            };
            let p = store::prop_of_array(a)?;
            images.insert(p.id, Element::Prop(p));
        }
        // an image is stored as text: one JSON string each
        let befores = pairs(next()?)?
            .into_iter()
            .filter_map(|(el, b)| match b {
                Value::String(t) => serde_json::from_str(&t).ok().map(|b| (el, b)),
                Value::Object(_) => Some((el, b)),
                _ => None,
            })
            .collect();
        Ok(Preread {
            changes,
            covered,
            images,
            befores,
        })
    }

    /// [`Preread`] from the rows of [`CHANGES_COLS`] (from column `at`):
    /// every change of the entry, in order, with its element's image now.
    /// The elements listed are picked as [`PREREAD_WITH`] picks them: the
    /// first `listed` touched, leaving out those created and deleted by
    /// the command.
    pub(super) fn of_changes(rows: Vec<Row>, at: usize, listed: usize) -> KipResult<Preread> {
        let mut changes = Vec::with_capacity(rows.len());
        // per element, in the order first touched: (deleted, inserted)
        let mut order: Vec<i64> = Vec::new();
        let mut flags: HashMap<i64, (bool, bool)> = HashMap::new();
        let mut now: HashMap<i64, Element> = HashMap::new();
        let mut befores: Vec<(i64, String)> = Vec::new();
        for mut r in rows {
            let Some(el) = r.opt_i64(at)? else {
                // (the row of an entry without changes)
                continue;
            };
            let op = r.take_text(at + 1)?;
            let f = flags.entry(el).or_insert_with(|| {
                order.push(el);
                (false, false)
            });
            f.0 |= op == "delete";
            f.1 |= op == "insert";
            if let Some(b) = r.opt_text(at + 2)? {
                befores.push((el, b));
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = now.entry(el) {
                let take = |r: &mut Row, i: usize| match r.0.get_mut(i) {
                    Some(Val::Json(Value::Array(a))) => Some(std::mem::take(a)),
                    _ => None,
                };
                if let Some(a) = take(&mut r, at + 3) {
                    slot.insert(Element::Concept(store::concept_of_array(a)?));
                } else if let Some(a) = take(&mut r, at + 4) {
                    slot.insert(Element::Prop(store::prop_of_array(a)?));
                }
            }
            changes.push((el, op));
        }
        let covered: HashSet<i64> = order
            .iter()
            .copied()
            .filter(|el| flags.get(el).is_some_and(|(d, i)| !(*d && *i)))
            .take(listed)
            .collect();
        let images = now
            .into_iter()
            .filter(|(el, _)| covered.contains(el) && flags.get(el).is_some_and(|(d, _)| !d))
            .collect();
        // an image is stored as text: one JSON document each
        let befores = befores
            .into_iter()
            .filter(|(el, _)| covered.contains(el))
            .filter_map(|(el, b)| serde_json::from_str(&b).ok().map(|b| (el, b)))
            .collect();
        Ok(Preread {
            changes,
            covered,
            images,
            befores,
        })
    }
}

/// `{"created": n, "updated": n, "deleted": n, "elements": [...]}` for an
/// audit entry: exact counts, and the first `listed` elements (creations
/// first, then the rest in the order the command touched them), each
/// `{"change", "id", "what"}` and, for an update, `"fields"`; `"more"`
/// counts the elements not listed.
pub fn effects<'a>(db: impl Into<Db<'a>>, entry_id: i64, listed: usize) -> KipResult<Value> {
    let conn = db.into();
    match entry(conn, entry_id)? {
        Some(e) => effects_of(
            conn,
            Span {
                entry: e.id,
                first_change: e.first_change,
                recorded: e.recorded,
                first_id: e.first_id,
                end_id: e.end_id,
            },
            listed,
        ),
        // a write that changed nothing leaves no entry
        None => Ok(summary(vec![], [0, 0, 0], 0)),
    }
}

/// [`effects`] of the entry a write has just finished (what
/// [`super::finish`] returned: the entry need not be read again).
pub fn effects_of<'a>(db: impl Into<Db<'a>>, e: Span, listed: usize) -> KipResult<Value> {
    effects_read(db, e, listed, None)
}

/// [`effects_of`] with what the closing statement read of it already
/// (`pre`, from [`super::finish_reading`] with the same `listed`).
pub fn effects_read<'a>(
    db: impl Into<Db<'a>>,
    e: Span,
    listed: usize,
    pre: Option<Preread>,
) -> KipResult<Value> {
    let conn = db.into();
    if e.changes() == 0 {
        return Ok(summary(vec![], [0, 0, 0], 0));
    }
    // each element the entry recorded, once, in the order first touched:
    // whether it was deleted, whether (re-)inserted. One pass over the
    // entry's rows by id, reading only the two leading columns (the
    // images are never loaded), so a sweep over thousands of elements
    // costs a fraction of its write.
    let mut touched: HashMap<i64, (bool, bool)> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    let mut pre = pre;
    let changes = match pre.as_mut() {
        Some(p) => std::mem::take(&mut p.changes),
        None => conn
            .query(
                "SELECT element, op FROM audit_changes WHERE id >= ?1 AND entry = ?3 ORDER BY id LIMIT ?2",
                &[e.first_change.into(), e.recorded.into(), e.entry.into()],
            )?
            .into_iter()
            .map(|r| Ok((r.i64(0)?, r.text(1)?)))
            .collect::<KipResult<Vec<_>>>()?,
    };
    for (el, op) in changes {
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

    // what to list: the elements created (in id order), then the ones
    // restored, updated or deleted (in the order touched); each is read
    // with the others, in a few queries, not one by one
    let mut items = Vec::new();
    let mut made: Vec<Element> = Vec::new();
    let mut id = e.first_id;
    while id < e.end_id && made.len() < listed {
        let upto = (id + (listed - made.len()) as i64).min(e.end_id);
        let ids: Vec<i64> = (id..upto).collect();
        let mut found = store::elements_by_ids(conn, &ids)?;
        made.extend(ids.iter().filter_map(|i| found.remove(i)));
        id = upto;
    }
    let rest: Vec<(i64, bool, bool)> = order
        .iter()
        .map(|el| (*el, touched[el].0, touched[el].1))
        .filter(|(el, d, i)| !(made_here(*el) || *d && *i))
        .take(listed.saturating_sub(made.len()))
        .collect();
    let live: Vec<i64> = rest.iter().filter(|r| !r.1).map(|r| r.0).collect();
    let mut now = HashMap::new();
    let unread: Vec<i64> = match pre.as_mut() {
        Some(p) => {
            for el in &live {
                if let Some(x) = p.images.remove(el) {
                    now.insert(*el, x);
                }
            }
            live.iter()
                .copied()
                .filter(|el| !p.covered.contains(el))
                .collect()
        }
        None => live,
    };
    now.extend(store::elements_by_ids(conn, &unread)?);
    // the images before the command, for what it updated or deleted
    let want_before: Vec<i64> = rest
        .iter()
        .filter(|(el, _, restored)| !(*restored && now.contains_key(el)))
        .map(|r| r.0)
        .collect();
    let befores = match pre.as_mut() {
        Some(p) => {
            // the first image before of each, as [`first_befores`] reads
            let mut out: HashMap<i64, Value> = HashMap::new();
            for (el, b) in std::mem::take(&mut p.befores) {
                out.entry(el).or_insert(b);
            }
            let unread: Vec<i64> = want_before
                .iter()
                .copied()
                .filter(|el| !p.covered.contains(el))
                .collect();
            out.extend(first_befores(conn, &e, &unread)?);
            out
        }
        None => first_befores(conn, &e, &want_before)?,
    };
    // the endpoints of the links listed, named at once
    let mut names = Names::new();
    let mut ends: Vec<i64> = Vec::new();
    let mut add_ends = |x: Option<i64>, y: Option<i64>| ends.extend(x.into_iter().chain(y));
    for x in made.iter().chain(now.values()) {
        if let Element::Prop(p) = x {
            add_ends(Some(p.subject), Some(p.object));
        }
    }
    for (el, _, _) in &rest {
        if !now.contains_key(el)
            && let Some(b) = befores.get(el)
            && b.get("predicate").is_some()
        {
            add_ends(b["subject"].as_i64(), b["object"].as_i64());
        }
    }
    name_all(conn, &e, &ends, &mut names)?;
    for x in &made {
        items.push(item("create", element_id(x), describe(x, &names), None));
    }
    for (el, d, i) in rest {
        match (if d { None } else { now.remove(&el) }, d) {
            (Some(x), false) => {
                let (change, fields) = if i {
                    ("create", None)
                } else {
                    let fields = befores.get(&el).map(|b| Value::from(changed_fields(b, &x)));
                    ("update", fields)
                };
                items.push(item(change, element_id(&x), describe(&x, &names), fields));
            }
            _ => {
                let b = befores.get(&el).cloned().unwrap_or(Value::Null);
                items.push(item(
                    "delete",
                    image_id(el, &b),
                    describe_image(&b, &names),
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

/// The elements as they were before the command first changed them, in
/// one query.
fn first_befores(conn: Db<'_>, e: &Span, els: &[i64]) -> KipResult<HashMap<i64, Value>> {
    let mut out: HashMap<i64, Value> = HashMap::new();
    if els.is_empty() {
        return Ok(out);
    }
    for r in conn.query(
        &format!(
            "SELECT element, before FROM {} AND entry = ?2 \
             AND before IS NOT NULL ORDER BY audit_changes.id",
            store::from_ids(conn, "audit_changes", "element")
        ),
        &[store::id_list_arg(els), e.entry.into()],
    )? {
        let el = r.i64(0)?;
        if out.contains_key(&el) {
            continue;
        }
        if let Some(b) = r.opt_text(1)?.and_then(|b| serde_json::from_str(&b).ok()) {
            out.insert(el, b);
        }
    }
    Ok(out)
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

fn describe(x: &Element, names: &Names) -> String {
    match x {
        Element::Concept(c) => format!("{}: {}", c.ty, c.name),
        Element::Prop(p) => format!(
            "{} -{}-> {}",
            endpoint(p.subject, names),
            p.predicate,
            endpoint(p.object, names)
        ),
    }
}

fn describe_image(b: &Value, names: &Names) -> String {
    if let Some(p) = b.get("predicate").and_then(Value::as_str) {
        let end = |k: &str| match b.get(k).and_then(Value::as_i64) {
            Some(id) => endpoint(id, names),
            None => "?".into(),
        };
        return format!("{} -{p}-> {}", end("subject"), end("object"));
    }
    format!(
        "{}: {}",
        b["type"].as_str().unwrap_or("?"),
        b["name"].as_str().unwrap_or("?")
    )
}

fn endpoint(id: i64, names: &Names) -> String {
    names
        .get(&id)
        .cloned()
        .unwrap_or_else(|| ids::concept_id(id))
}

/// Names the endpoints `ids`: a concept as `Type: name`, a link by its id,
/// one deleted by the same command as it was.
fn name_all(conn: Db<'_>, e: &Span, ends: &[i64], names: &mut Names) -> KipResult<()> {
    let mut ends: Vec<i64> = ends.to_vec();
    ends.sort_unstable();
    ends.dedup();
    let found = store::elements_by_ids(conn, &ends)?;
    let gone: Vec<i64> = ends
        .iter()
        .copied()
        .filter(|i| !found.contains_key(i))
        .collect();
    let before = first_befores(conn, e, &gone)?;
    for id in ends {
        let name = match found.get(&id) {
            Some(Element::Concept(c)) => format!("{}: {}", c.ty, c.name),
            Some(Element::Prop(p)) => ids::prop_id(p.id, &p.predicate),
            None => match before.get(&id) {
                Some(b) if b.get("predicate").is_none() => format!(
                    "{}: {}",
                    b["type"].as_str().unwrap_or("?"),
                    b["name"].as_str().unwrap_or("?")
                ),
                _ => ids::concept_id(id),
            },
        };
        names.insert(id, name);
    }
    Ok(())
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
