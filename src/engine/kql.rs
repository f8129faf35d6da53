//! `FIND`: run the planned statement, then project, group and page.

use super::plan::{self, Binding, Carried, Carry, Planner, Selection};
use crate::kip::ast::*;
use crate::kip::{KipError, KipResult};
use crate::store::db::{Db, Val};
use crate::store::{self, Element};
use base64::Engine as _;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// Solutions one response may materialise (`KIP_4002` past it).
pub const MAX_SOLUTIONS: usize = 1_000_000;

fn too_many() -> KipError {
    KipError::exhausted(format!(
        "the result has more than {MAX_SOLUTIONS} solutions"
    ))
    .with_hint("Use LIMIT with CURSOR pagination, or constrain the pattern further.")
}

/// Opaque page tokens: an offset, sealed so arbitrary text is refused.
pub fn encode_cursor(offset: u64) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("somnus:{offset}"))
}

pub fn decode_cursor(token: &str) -> KipResult<u64> {
    Ok(decode_page(token)?.0)
}

/// A FIND's page token: the offset of the next page and the bindings of
/// the last row returned. A query in the default order (by its
/// variables' ids) starts the next page after that row, found through
/// the index, where an offset would read and drop every row before it:
/// paging through a memory costs what its rows cost, not their square.
/// (Rows written or deleted between two pages shift no later row
/// either.)
fn encode_find_cursor(offset: u64, last: &[Binding]) -> String {
    let keys: Vec<Value> = last.iter().map(Binding::to_json).collect();
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("somnus:{offset}:{}", Value::Array(keys)))
}

/// The offset and, when the token carries them, the last row's bindings.
fn decode_page(token: &str) -> KipResult<(u64, Option<Vec<Binding>>)> {
    let bad = || {
        KipError::syntax(format!("invalid CURSOR \"{token}\""))
            .with_hint("Pass back exactly the next_cursor a previous response returned.")
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let s = String::from_utf8(raw).map_err(|_| bad())?;
    let rest = s.strip_prefix("somnus:").ok_or_else(bad)?;
    let (n, keys) = match rest.split_once(':') {
        Some((n, keys)) => (n, Some(keys)),
        None => (rest, None),
    };
    let offset = n
        .parse::<u64>()
        .ok()
        .filter(|n| *n <= crate::kip::limits::MAX_OFFSET)
        .ok_or_else(bad)?;
    let keys = match keys {
        None => None,
        Some(k) => {
            let v: Vec<Value> = serde_json::from_str(k).map_err(|_| bad())?;
            let b: Vec<Binding> = v
                .into_iter()
                .map(|x| Binding::from_json(x).ok_or_else(bad))
                .collect::<KipResult<_>>()?;
            Some(b)
        }
    };
    Ok((offset, keys))
}

/// Caches hydrated elements for one response.
pub struct Hydrator<'c> {
    conn: Db<'c>,
    cache: rustc_hash::FxHashMap<i64, Option<std::rc::Rc<Value>>>,
    /// A concept's (type, name), for projections that need nothing else.
    labels: rustc_hash::FxHashMap<i64, Option<(String, String)>>,
}

impl<'c> Hydrator<'c> {
    pub fn new(conn: Db<'c>) -> Self {
        Hydrator {
            conn,
            cache: Default::default(),
            labels: Default::default(),
        }
    }

    /// `?x.name` or `?x.type` of a concept, read without its attributes.
    fn label(&mut self, id: i64, seg: &str) -> KipResult<Option<Value>> {
        let hit = match self.labels.get(&id) {
            Some(l) => l.clone(),
            None => {
                let l = store::concept_label(self.conn, id)?;
                self.labels.insert(id, l.clone());
                l
            }
        };
        Ok(hit.map(|(ty, name)| json!(if seg == "name" { name } else { ty })))
    }

    /// Fetches, in a few queries, what projecting `paths` of the bindings
    /// in column `col` of `rows` will read, so the projection makes no
    /// query per element. Only on PostgreSQL, where each query is a round
    /// trip; SQLite reads one element in microseconds.
    pub fn prefetch(
        &mut self,
        rows: &[Vec<Binding>],
        col: usize,
        paths: &[&[String]],
    ) -> KipResult<()> {
        if self.conn.backend() != crate::store::db::Backend::Postgres || paths.is_empty() {
            return Ok(());
        }
        let labels_only = paths
            .iter()
            .all(|p| matches!(p, [seg] if seg == "name" || seg == "type"));
        let mut seen = HashSet::new();
        let ids: Vec<i64> = rows
            .iter()
            .filter_map(|r| match r.get(col) {
                Some(Binding::Elem(id)) => Some(*id),
                _ => None,
            })
            .filter(|id| {
                !self.cache.contains_key(id)
                    && (!labels_only || !self.labels.contains_key(id))
                    && seen.insert(*id)
            })
            .collect();
        if ids.len() < 2 {
            return Ok(());
        }
        if labels_only {
            let mut found = store::labels_by_ids(self.conn, &ids)?;
            for id in ids {
                self.labels.insert(id, found.remove(&id));
            }
            return Ok(());
        }
        let found = store::elements_by_ids(self.conn, &ids)?;
        // the endpoints of the propositions among them, named at once
        let ends: Vec<i64> = found
            .values()
            .filter_map(|e| match e {
                Element::Prop(p) => Some([p.subject, p.object]),
                Element::Concept(_) => None,
            })
            .flatten()
            .collect::<HashSet<i64>>()
            .into_iter()
            .collect();
        let kip_ids = if ends.is_empty() {
            HashMap::new()
        } else {
            store::kip_ids_by_ids(self.conn, &ends)?
        };
        for id in ids {
            let v = found
                .get(&id)
                .map(|el| std::rc::Rc::new(store::element_json_known(el, &kip_ids)));
            self.cache.insert(id, v);
        }
        Ok(())
    }

    /// Takes what the answer carried of element `id` (nothing when it is
    /// not a concept).
    pub fn carried(&mut self, id: i64, what: Carry, v: Vec<Val>) -> KipResult<()> {
        match plan::read_carried(id, what, v)? {
            None => {}
            Some(Carried::Labels(ty, name)) => {
                self.labels.insert(id, Some((ty, name)));
            }
            Some(Carried::Concept(c)) => {
                self.cache.insert(id, Some(std::rc::Rc::new(c.into_json())));
            }
        }
        Ok(())
    }

    pub fn element(&mut self, id: i64) -> KipResult<Option<std::rc::Rc<Value>>> {
        if let Some(v) = self.cache.get(&id) {
            return Ok(v.clone());
        }
        let v = match store::element(self.conn, id)? {
            Some(el) => Some(std::rc::Rc::new(store::element_into_json(self.conn, el)?)),
            None => None,
        };
        self.cache.insert(id, v.clone());
        Ok(v)
    }

    /// [`Hydrator::project`] for the last time `b` is projected: an
    /// element projected whole is handed over, not copied.
    pub fn project_last(&mut self, b: &Binding, path: &[String]) -> KipResult<Value> {
        if let (Binding::Elem(id), true) = (b, path.is_empty()) {
            let Some(el) = self.element(*id)? else {
                return Ok(Value::Null);
            };
            drop(el);
            if let Some(Some(rc)) = self.cache.remove(id) {
                return Ok(std::rc::Rc::try_unwrap(rc).unwrap_or_else(|rc| (*rc).clone()));
            }
        }
        self.project(b, path)
    }

    /// Whether [`Hydrator::project`] of `path` on `b` reads the memory
    /// (what it needs was not carried).
    pub fn would_read(&self, b: &Binding, path: &[String]) -> bool {
        let Binding::Elem(id) = b else {
            return false;
        };
        if self.cache.contains_key(id) {
            return false;
        }
        let label = matches!(path, [seg] if seg == "name" || seg == "type");
        !(label && self.labels.contains_key(id))
    }

    /// The JSON value of `path` on a binding.
    pub fn project(&mut self, b: &Binding, path: &[String]) -> KipResult<Value> {
        match b {
            Binding::Null => Ok(Value::Null),
            Binding::Pred(s) => Ok(if path.is_empty() {
                json!(s)
            } else {
                Value::Null
            }),
            Binding::Elem(id) => {
                if let [seg] = path
                    && (seg == "name" || seg == "type")
                    && !self.cache.contains_key(id)
                    && let Some(v) = self.label(*id, seg)?
                {
                    return Ok(v);
                }
                let Some(el) = self.element(*id)? else {
                    return Ok(Value::Null);
                };
                let mut cur: &Value = &el;
                for seg in path {
                    match cur.get(seg) {
                        Some(v) => cur = v,
                        None => return Ok(Value::Null),
                    }
                }
                Ok(cur.clone())
            }
        }
    }
}

pub fn element_of(conn: Db<'_>, id: i64) -> KipResult<Option<Element>> {
    store::element(conn, id)
}

/// Groups consecutive FIND expressions over the same variable.
fn column_groups(exprs: &[&DotPath]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, e) in exprs.iter().enumerate() {
        match out.last_mut() {
            Some(g) if exprs[g[0]].var == e.var => g.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}

pub struct FindOutput {
    pub result: Value,
    pub next_cursor: Option<String>,
    /// The elements the rows bound (each once, at most
    /// `audit::reads::MAX_COUNTED_ELEMENTS`): what the read used.
    pub elements: Vec<i64>,
    /// The rows returned.
    pub rows: u64,
}

thread_local! {
    static SNAPSHOTS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// This thread's FINDs that a caller began no transaction for: those
/// answered by their one statement, and those that began one before a
/// second statement (see [`execute`]).
pub fn snapshot_stats() -> (u64, u64) {
    SNAPSHOTS.with(|s| s.get())
}

fn count_snapshot(alone: bool) {
    SNAPSHOTS.with(|s| {
        let (a, b) = s.get();
        s.set(if alone { (a + 1, b) } else { (a, b + 1) });
    });
}

/// Answers a FIND. With `unsnapped`, the caller began no transaction for
/// it (SQLite): a FIND answered by one statement needs none, as a
/// statement sees one state of the memory. Before a second statement it
/// begins a read transaction (which the caller ends) and answers again
/// from the start inside it, so every answer is read from one snapshot.
pub fn execute(conn: Db<'_>, q: &FindQuery, unsnapped: bool) -> KipResult<FindOutput> {
    let unsnapped = unsnapped && conn.outside_transaction();
    let in_snapshot = || {
        count_snapshot(false);
        conn.begin(false)?;
        execute(conn, q, false)
    };
    let (offset, after) = match &q.cursor {
        Some(c) => decode_page(c)?,
        None => (0, None),
    };
    plan::check_bounded(&q.where_, q.limit.is_some())?;
    let has_agg = q.find.iter().any(|e| matches!(e, FindExpr::Agg(_)))
        || q.order_by.iter().any(|o| o.agg.is_some());
    let mut vars: Vec<String> = Vec::new();
    for e in &q.find {
        if !vars.iter().any(|v| v == e.var()) {
            vars.push(e.var().to_string());
        }
    }
    if has_agg {
        if unsnapped {
            return in_snapshot();
        }
        return aggregate(conn, q, &vars, offset);
    }
    let order: Vec<(&DotPath, bool)> = q.order_by.iter().map(|o| (&o.path, o.desc)).collect();
    let fetch = Some(q.limit.map(|l| l + 1).unwrap_or(MAX_SOLUTIONS as u64 + 1));
    let paths: Vec<&DotPath> = q
        .find
        .iter()
        .filter_map(|e| match e {
            FindExpr::Path(p) => Some(p),
            FindExpr::Agg(_) => None,
        })
        .collect();
    let groups = column_groups(&paths);
    let var_of = |p: &DotPath| vars.iter().position(|v| *v == p.var).unwrap_or(0);
    // each group's variable, by index
    let group_var: Vec<usize> = groups.iter().map(|g| var_of(paths[g[0]])).collect();
    let carry = carry_of(&paths, var_of);
    let nvars = vars.len();
    let sel = Selection {
        vars,
        order,
        limit: fetch,
        offset,
        carry,
        all_rows: q.limit.is_none(),
        after: after.filter(|k| k.len() == nvars),
    };
    // (a kept plan leaves to this function the check that the concepts
    // its WHERE names exist, should it answer nothing)
    let (compiled, check_where) = match plan::kept(conn.backend(), &q.where_, &sel) {
        Some(c) => (Some(c), true),
        // (planning may read the memory)
        None if unsnapped => return in_snapshot(),
        None => (Planner::new(conn).compile(&q.where_, &sel)?, false),
    };
    let mut rows = match &compiled {
        Some(c) => plan::run_carrying(conn, c, nvars)?,
        None => Vec::new(),
    };
    if rows.is_empty() && check_where {
        if unsnapped {
            // (whether they exist is read next)
            return in_snapshot();
        }
        plan::ground(conn, &q.where_)?;
    }
    if q.limit.is_none() && rows.len() > MAX_SOLUTIONS {
        return Err(too_many());
    }
    let mut next_cursor = None;
    if let Some(l) = q.limit
        && rows.len() as u64 > l
    {
        rows.truncate(l as usize);
        let last = rows.last().map(|(keys, _)| keys.as_slice()).unwrap_or(&[]);
        next_cursor = Some(encode_find_cursor(offset + l, last));
    }
    let elements = bound_elements(&rows);
    let row_count = rows.len() as u64;
    let mut h = Hydrator::new(conn);
    let backend = conn.backend();
    let carried = compiled.map(|c| c.carried).unwrap_or_default();
    let rows: Vec<Vec<Binding>> = rows
        .into_iter()
        .map(|(keys, values)| {
            let mut values = values.into_iter();
            for &(vi, what) in &carried {
                let v: Vec<Val> = values.by_ref().take(what.width(backend)).collect();
                if let Some(Binding::Elem(id)) = keys.get(vi) {
                    h.carried(*id, what, v)?;
                }
            }
            Ok(keys)
        })
        .collect::<KipResult<_>>()?;
    if unsnapped
        && groups.iter().zip(&group_var).any(|(g, &vi)| {
            rows.iter()
                .any(|r| g.iter().any(|&i| h.would_read(&r[vi], &paths[i].path)))
        })
    {
        // (an element the statement did not carry is read next)
        return in_snapshot();
    }
    if conn.backend() == crate::store::db::Backend::Postgres {
        for (g, &vi) in groups.iter().zip(&group_var) {
            let ps: Vec<&[String]> = g.iter().map(|&i| paths[i].path.as_slice()).collect();
            h.prefetch(&rows, vi, &ps)?;
        }
    }
    // how often each element is projected: the last time, one projected
    // whole is handed over rather than copied
    let mut uses: rustc_hash::FxHashMap<i64, u32> = Default::default();
    for row in &rows {
        for (g, &vi) in groups.iter().zip(&group_var) {
            if let Binding::Elem(id) = row[vi] {
                *uses.entry(id).or_default() += g.len() as u32;
            }
        }
    }
    let mut columns: Vec<Vec<Value>> = vec![Vec::with_capacity(rows.len()); groups.len()];
    for row in &rows {
        for (gi, (g, &vi)) in groups.iter().zip(&group_var).enumerate() {
            let b = &row[vi];
            let vals: Vec<Value> = g
                .iter()
                .map(|&i| {
                    let last = match b {
                        Binding::Elem(id) => uses.get_mut(id).is_some_and(|n| {
                            *n -= 1;
                            *n == 0
                        }),
                        _ => false,
                    };
                    if last {
                        h.project_last(b, &paths[i].path)
                    } else {
                        h.project(b, &paths[i].path)
                    }
                })
                .collect::<KipResult<_>>()?;
            columns[gi].push(if vals.len() == 1 {
                vals.into_iter().next().unwrap_or(Value::Null)
            } else {
                Value::Array(vals)
            });
        }
    }
    let result = if columns.len() == 1 {
        Value::Array(columns.pop().unwrap_or_default())
    } else {
        Value::Array(columns.into_iter().map(Value::Array).collect())
    };
    if unsnapped {
        count_snapshot(true);
    }
    Ok(FindOutput {
        result,
        next_cursor,
        elements,
        rows: row_count,
    })
}

/// The elements a page of rows binds, each once, in order.
fn bound_elements<V>(rows: &[(Vec<Binding>, V)]) -> Vec<i64> {
    // (a few are told apart by looking: no set to build)
    const FEW: usize = 16;
    let mut seen = rustc_hash::FxHashSet::default();
    let mut out = Vec::new();
    for (keys, _) in rows {
        for b in keys {
            let Binding::Elem(id) = b else {
                continue;
            };
            if out.len() >= crate::audit::reads::MAX_COUNTED_ELEMENTS {
                return out;
            }
            let new = if out.len() < FEW {
                !out.contains(id)
            } else {
                if seen.is_empty() {
                    seen.extend(out.iter().copied());
                }
                seen.insert(*id)
            };
            if new {
                out.push(*id);
            }
        }
    }
    out
}

/// What the answer should carry of each variable the FIND projects: the
/// labels when it projects only `.name` and `.type`, else the concept.
fn carry_of(paths: &[&DotPath], var_of: impl Fn(&DotPath) -> usize) -> Vec<(usize, Carry)> {
    let mut out: Vec<(usize, Carry)> = Vec::new();
    for p in paths {
        let vi = var_of(p);
        let what = match p.path.as_slice() {
            [seg] if seg == "name" || seg == "type" => Carry::Labels,
            _ => Carry::Concept,
        };
        match out.iter_mut().find(|(i, _)| *i == vi) {
            Some((_, c)) if what == Carry::Concept => *c = Carry::Concept,
            Some(_) => {}
            None => out.push((vi, what)),
        }
    }
    out
}

/// `COUNT(?x)` of a bare variable needs the binding, not the element.
fn cheap_or_project(h: &mut Hydrator<'_>, b: &Binding, a: &Aggregate) -> KipResult<Value> {
    if a.func == AggFunc::Count && a.path.path.is_empty() {
        return Ok(b.to_json());
    }
    h.project(b, &a.path.path)
}

/// A path to a field kept in an element's stored attributes or metadata
/// (`attributes.x…`, `metadata.x…`; not the `_version` and `_updated_at`
/// that metadata shows from the element's columns): the column and keys.
fn stored_field(path: &[String]) -> Option<(&'static str, Vec<&str>)> {
    let column = match path.first().map(String::as_str) {
        Some("attributes") => "attributes",
        Some("metadata") => "metadata",
        _ => return None,
    };
    if path.len() < 2
        || (column == "metadata" && matches!(path[1].as_str(), "_version" | "_updated_at"))
    {
        return None;
    }
    Some((column, path[1..].iter().map(String::as_str).collect()))
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn agg_value(func: AggFunc, distinct: bool, values: Vec<Value>) -> Value {
    let mut vals: Vec<Value> = values.into_iter().filter(|v| !v.is_null()).collect();
    if distinct {
        let mut seen = HashSet::new();
        vals.retain(|v| seen.insert(v.to_string()));
    }
    match func {
        AggFunc::Count => json!(vals.len()),
        AggFunc::Sum => {
            let nums: Vec<&Value> = vals.iter().filter(|v| v.is_number()).collect();
            if nums.is_empty() {
                return Value::Null;
            }
            if nums.iter().all(|v| v.is_i64() || v.is_u64()) {
                // exact in 128 bits; a JSON integer when it fits 64 bits
                let total: i128 = nums
                    .iter()
                    .map(|v| {
                        v.as_i64()
                            .map(i128::from)
                            .or(v.as_u64().map(i128::from))
                            .unwrap_or(0)
                    })
                    .sum();
                match (i64::try_from(total), u64::try_from(total)) {
                    (Ok(t), _) => json!(t),
                    (_, Ok(t)) => json!(t),
                    _ => json!(total as f64),
                }
            } else {
                json!(nums.iter().filter_map(|v| num(v)).sum::<f64>())
            }
        }
        AggFunc::Avg => {
            let nums: Vec<f64> = vals.iter().filter_map(num).collect();
            if nums.is_empty() {
                Value::Null
            } else {
                json!(nums.iter().sum::<f64>() / nums.len() as f64)
            }
        }
        AggFunc::Min | AggFunc::Max => {
            let mut best: Option<Value> = None;
            for v in vals {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let ord = compare(&v, &b);
                        let take = if func == AggFunc::Min {
                            ord.is_lt()
                        } else {
                            ord.is_gt()
                        };
                        if take { v } else { b }
                    }
                });
            }
            best.unwrap_or(Value::Null)
        }
    }
}

/// Total order on JSON values used for sorting: numbers, then strings, then
/// booleans, then everything else by its text.
pub fn compare(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Null => 4,
            _ => 3,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.as_f64().partial_cmp(&y.as_f64()).unwrap_or(Equal)
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => match rank(a).cmp(&rank(b)) {
            Equal => a.to_string().cmp(&b.to_string()),
            o => o,
        },
    }
}

/// Sorts with nulls last in both directions.
fn cmp_nulls_last(a: &Value, b: &Value, desc: bool) -> std::cmp::Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => {
            let o = compare(a, b);
            if desc { o.reverse() } else { o }
        }
    }
}

/// Aggregation with implicit grouping. The non-aggregated expressions are
/// the group key. An aggregate is computed per group when its variable is
/// joined to a key variable through propositions' subjects and objects, or
/// is a key variable read through an attribute or metadata path; otherwise
/// it summarises the whole solution set and contributes a scalar.
/// Groups (their key values, first-appearance order), each group's
/// aggregate values, and the aggregates that summarise everything.
type Groups = (Vec<Vec<Value>>, Vec<Vec<Value>>, Vec<Option<Value>>);

/// The general path: every solution is read, grouped by its key values,
/// and aggregated here.
fn group_in_memory(
    conn: Db<'_>,
    q: &FindQuery,
    all_vars: &[String],
    keys: &[&DotPath],
    aggs: &[Aggregate],
    grouped_agg: &dyn Fn(&Aggregate) -> bool,
    h: &mut Hydrator<'_>,
) -> KipResult<Groups> {
    let sel = Selection {
        vars: all_vars.to_vec(),
        order: vec![],
        limit: None,
        offset: 0,
        carry: vec![],
        all_rows: true,
        after: None,
    };
    let compiled = Planner::new(conn).compile(&q.where_, &sel)?;
    let rows = match &compiled {
        Some(c) => plan::run(conn, c, all_vars.len())?,
        None => Vec::new(),
    };
    if rows.len() > 5 * MAX_SOLUTIONS {
        return Err(too_many());
    }
    let vi: HashMap<&str, usize> = all_vars
        .iter()
        .enumerate()
        .map(|(i, v)| (v.as_str(), i))
        .collect();
    // an aggregate over one field of attributes or metadata reads that
    // field of each element, not the element
    let mut fields: HashMap<usize, HashMap<i64, Value>> = HashMap::new();
    for (ai, a) in aggs.iter().enumerate() {
        if let Some((column, path)) = stored_field(&a.path.path) {
            let v = vi[a.path.var.as_str()];
            let mut seen = HashSet::new();
            let ids: Vec<i64> = rows
                .iter()
                .filter_map(|r| match r[v] {
                    Binding::Elem(id) => Some(id),
                    _ => None,
                })
                .filter(|id| seen.insert(*id))
                .collect();
            fields.insert(ai, store::values_at(conn, &ids, column, &path)?);
        }
    }
    for (var, &col) in &vi {
        let mut ps: Vec<&[String]> = keys
            .iter()
            .filter(|k| k.var == *var)
            .map(|k| k.path.as_slice())
            .collect();
        for a in aggs.iter().filter(|a| a.path.var == *var) {
            if !(a.func == AggFunc::Count && a.path.path.is_empty())
                && stored_field(&a.path.path).is_none()
            {
                ps.push(a.path.path.as_slice());
            }
        }
        h.prefetch(&rows, col, &ps)?;
    }
    let value = |h: &mut Hydrator<'_>, ai: usize, b: &Binding| -> KipResult<Value> {
        match (fields.get(&ai), b) {
            (Some(f), Binding::Elem(id)) => Ok(f.get(id).cloned().unwrap_or(Value::Null)),
            (Some(_), _) => Ok(Value::Null),
            (None, _) => cheap_or_project(h, b, &aggs[ai]),
        }
    };
    // group keys in first-appearance order
    let mut group_order: Vec<Vec<Value>> = Vec::new();
    let mut group_index: HashMap<String, usize> = HashMap::new();
    let mut row_group: Vec<usize> = Vec::with_capacity(rows.len());
    for row in &rows {
        let key: Vec<Value> = keys
            .iter()
            .map(|k| h.project(&row[vi[k.var.as_str()]], &k.path))
            .collect::<KipResult<_>>()?;
        let token = Value::Array(key.clone()).to_string();
        let gi = *group_index.entry(token).or_insert_with(|| {
            group_order.push(key);
            group_order.len() - 1
        });
        row_group.push(gi);
    }
    if keys.is_empty() && group_order.is_empty() {
        group_order.push(Vec::new());
    }
    let mut per_group: Vec<Vec<Value>> = vec![Vec::new(); group_order.len()];
    let mut scalars: Vec<Option<Value>> = Vec::new();
    for (ai, a) in aggs.iter().enumerate() {
        let v = vi[a.path.var.as_str()];
        if grouped_agg(a) {
            let mut seen: Vec<HashSet<Binding>> = vec![HashSet::new(); group_order.len()];
            let mut values: Vec<Vec<Value>> = vec![Vec::new(); group_order.len()];
            for (row, &g) in rows.iter().zip(row_group.iter()) {
                if seen[g].insert(row[v].clone()) {
                    values[g].push(value(h, ai, &row[v])?);
                }
            }
            for (g, vals) in values.into_iter().enumerate() {
                per_group[g].push(agg_value(a.func, a.distinct, vals));
            }
            scalars.push(None);
        } else {
            let mut seen: HashSet<Binding> = HashSet::new();
            let mut vals = Vec::new();
            for row in &rows {
                if seen.insert(row[v].clone()) {
                    vals.push(value(h, ai, &row[v])?);
                }
            }
            let s = agg_value(a.func, a.distinct, vals);
            for g in per_group.iter_mut() {
                g.push(s.clone());
            }
            scalars.push(Some(s));
        }
    }
    Ok((group_order, per_group, scalars))
}

/// The general statement of [`counted_in_sql`]: the distinct solutions,
/// grouped by the key variables' ids.
fn grouped_in_sql(
    conn: Db<'_>,
    q: &FindQuery,
    all_vars: &[String],
    nk: usize,
    aggs: &[Aggregate],
) -> KipResult<Option<plan::Compiled>> {
    let Some(c) = Planner::new(conn).compile(&q.where_, &Selection::bare(all_vars.to_vec()))?
    else {
        return Ok(None);
    };
    let vi: HashMap<&str, usize> = all_vars
        .iter()
        .enumerate()
        .map(|(i, v)| (v.as_str(), i))
        .collect();
    let kcols: Vec<String> = (0..nk).map(|i| format!("r{i}")).collect();
    // one counted variable and nothing else projected: the rows are
    // distinct per (keys, variable) already when the planner says unique
    let counts: Vec<String> = aggs
        .iter()
        .map(|a| {
            let i = vi[a.path.var.as_str()];
            if c.unique && all_vars.len() == nk + 1 {
                format!("COUNT(r{i})")
            } else {
                format!("COUNT(DISTINCT r{i})")
            }
        })
        .collect();
    let sql = format!(
        "SELECT {k}, {} FROM ({}) AS g_ GROUP BY {k} ORDER BY {k}",
        counts.join(", "),
        c.sql,
        k = kcols.join(", ")
    );
    let grouped = plan::Compiled {
        sql: sql.into(),
        params: c.params,
        unique: true,
        ground_later: c.ground_later,
        carried: vec![],
        sort_after: 0,
    };
    Ok(Some(grouped))
}

/// `FIND(?d…, COUNT(?n)) WHERE { ?d {type…} (?n, "p", ?d) }` (or the link
/// the other way), on PostgreSQL: the links are counted per endpoint
/// first, then joined to the concepts that endpoint must be. PostgreSQL
/// estimates the plain join at a row or so per concept (it cannot know
/// that 20 domains hold every link), then sorts every link to group
/// them; counting first reads the links once and groups them in a hash.
/// (SQLite's plan of the plain join is already within a tenth of this.)
/// A link is unique by subject, predicate and object, so counting links
/// counts the distinct `?n` too. None for any other shape.
fn links_per_endpoint(
    conn: Db<'_>,
    q: &FindQuery,
    all_vars: &[String],
    aggs: &[Aggregate],
) -> Option<plan::Compiled> {
    if conn.backend() != crate::store::db::Backend::Postgres
        || all_vars.len() != 2
        || aggs.len() != 1
        || q.where_.len() != 2
    {
        return None;
    }
    let (d, n) = (all_vars[0].as_str(), all_vars[1].as_str());
    if aggs[0].path.var != n || d == n {
        return None;
    }
    let mut concept = None;
    let mut link = None;
    for it in &q.where_ {
        match it {
            WhereItem::Concept(c) if c.var.as_deref() == Some(d) && c.matcher.id.is_none() => {
                concept = Some(&c.matcher)
            }
            WhereItem::Prop(PropClause {
                var: None,
                pattern:
                    PropPattern::Triple {
                        subject,
                        predicate: PredSpec::Alts(ps),
                        object,
                    },
            }) if ps.len() == 1 => match (subject.as_ref(), object.as_ref()) {
                (Endpoint::Var(a), Endpoint::Var(b)) if a == n && b == d => {
                    link = Some(("object", &ps[0]))
                }
                (Endpoint::Var(a), Endpoint::Var(b)) if a == d && b == n => {
                    link = Some(("subject", &ps[0]))
                }
                _ => return None,
            },
            _ => return None,
        }
    }
    let (m, (key, predicate)) = (concept?, link?);
    let mut params = vec![crate::store::db::Val::from(predicate.as_str())];
    let mut conds = Vec::new();
    for (col, v) in [("type", &m.ty), ("name", &m.name)] {
        if let Some(v) = v {
            params.push(crate::store::db::Val::from(v.as_str()));
            conds.push(format!("c.{col} = ?{}::text", params.len()));
        }
    }
    let filter = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    Some(plan::Compiled {
        sql: format!(
            "SELECT c.id, g.n FROM (SELECT {key} AS k, COUNT(*) AS n FROM propositions \
             WHERE predicate = ?1::text GROUP BY {key}) AS g JOIN concepts c ON c.id = g.k{filter} ORDER BY c.id"
        ).into(),
        params,
        unique: true,
        // a `{type, name}` naming nothing is KIP_3002, not zero groups
        ground_later: if m.is_identity() {
            q.where_.clone()
        } else {
            vec![]
        },
        carried: vec![],
        sort_after: 0,
    })
}

/// The common shape `FIND(?k.path…, COUNT(?v)…)`, one branch, counted by
/// SQLite: the distinct solutions are grouped by the key variables' ids in
/// SQL, and only one row per group comes back. Falls back (None) when two
/// key ids share key values (the groups would merge) or the shape differs.
fn counted_in_sql(
    conn: Db<'_>,
    q: &FindQuery,
    all_vars: &[String],
    keys: &[&DotPath],
    aggs: &[Aggregate],
    grouped_agg: &dyn Fn(&Aggregate) -> bool,
    h: &mut Hydrator<'_>,
) -> KipResult<Option<Groups>> {
    let mut key_vars: Vec<&str> = Vec::new();
    for k in keys {
        if !key_vars.contains(&k.var.as_str()) {
            key_vars.push(k.var.as_str());
        }
    }
    let fits = !keys.is_empty()
        && !aggs.is_empty()
        && aggs.iter().all(|a| {
            a.func == AggFunc::Count
                && a.path.path.is_empty()
                && !key_vars.contains(&a.path.var.as_str())
                && grouped_agg(a)
        })
        && all_vars.len() >= key_vars.len()
        && all_vars[..key_vars.len()]
            .iter()
            .zip(&key_vars)
            .all(|(a, b)| a == b)
        && plan::branches(&q.where_).len() == 1;
    if !fits {
        return Ok(None);
    }
    let grouped = match links_per_endpoint(conn, q, all_vars, aggs) {
        Some(g) => g,
        None => match grouped_in_sql(conn, q, all_vars, key_vars.len(), aggs)? {
            Some(g) => g,
            None => return Ok(None),
        },
    };
    let nk = key_vars.len();
    let rows = plan::run_raw(conn, &grouped, nk, aggs.len())?;
    let bindings: Vec<Vec<Binding>> = rows.iter().map(|(b, _)| b.clone()).collect();
    for (idx, var) in key_vars.iter().enumerate() {
        let ps: Vec<&[String]> = keys
            .iter()
            .filter(|k| k.var.as_str() == *var)
            .map(|k| k.path.as_slice())
            .collect();
        h.prefetch(&bindings, idx, &ps)?;
    }
    let mut group_order: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    let mut per_group: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    let mut seen: HashSet<String> = HashSet::with_capacity(rows.len());
    for (bindings, counts) in rows {
        let key: Vec<Value> = keys
            .iter()
            .map(|k| {
                let idx = key_vars
                    .iter()
                    .position(|v| *v == k.var.as_str())
                    .unwrap_or(0);
                h.project(&bindings[idx], &k.path)
            })
            .collect::<KipResult<_>>()?;
        if !seen.insert(Value::Array(key.clone()).to_string()) {
            return Ok(None);
        }
        group_order.push(key);
        per_group.push(counts.into_iter().map(|n| json!(n)).collect());
    }
    let scalars = vec![None; aggs.len()];
    Ok(Some((group_order, per_group, scalars)))
}

fn aggregate(conn: Db<'_>, q: &FindQuery, vars: &[String], offset: u64) -> KipResult<FindOutput> {
    let mut all_vars = vars.to_vec();
    for o in &q.order_by {
        if !all_vars.contains(&o.path.var) {
            all_vars.push(o.path.var.clone());
        }
    }
    let keys: Vec<&DotPath> = q
        .find
        .iter()
        .filter_map(|e| {
            if let FindExpr::Path(p) = e {
                Some(p)
            } else {
                None
            }
        })
        .collect();
    let key_vars: HashSet<&str> = keys.iter().map(|k| k.var.as_str()).collect();
    // connectivity between variables through subject/object pairs
    let mut pairs = Vec::new();
    plan::endpoint_pairs(&q.where_, &mut pairs);
    let connected = |v: &str| -> bool {
        let mut seen: HashSet<String> = HashSet::from([v.to_string()]);
        let mut stack = vec![v.to_string()];
        while let Some(x) = stack.pop() {
            for (a, b) in &pairs {
                let n = if a == &x {
                    b
                } else if b == &x {
                    a
                } else {
                    continue;
                };
                if seen.insert(n.clone()) {
                    stack.push(n.clone());
                }
            }
        }
        seen.iter().any(|s| s != v && key_vars.contains(s.as_str()))
    };
    let grouped_agg = |a: &Aggregate| -> bool {
        if keys.is_empty() {
            return false;
        }
        if key_vars.contains(a.path.var.as_str()) {
            return keys.iter().any(|k| {
                k.var == a.path.var
                    && matches!(
                        k.path.first().map(String::as_str),
                        Some("attributes" | "metadata")
                    )
            });
        }
        connected(&a.path.var)
    };
    // every aggregate the FIND or ORDER BY needs
    let mut aggs: Vec<Aggregate> = q
        .find
        .iter()
        .filter_map(|e| {
            if let FindExpr::Agg(a) = e {
                Some(a.clone())
            } else {
                None
            }
        })
        .collect();
    for o in &q.order_by {
        if let Some((func, distinct)) = o.agg {
            let a = Aggregate {
                func,
                distinct,
                path: o.path.clone(),
            };
            if !aggs.contains(&a) {
                aggs.push(a);
            }
        }
    }
    let mut h = Hydrator::new(conn);
    let counted = counted_in_sql(conn, q, &all_vars, &keys, &aggs, &grouped_agg, &mut h)?;
    let (group_order, per_group, scalars) = match counted {
        Some(g) => g,
        None => group_in_memory(conn, q, &all_vars, &keys, &aggs, &grouped_agg, &mut h)?,
    };
    // order groups
    let mut order_idx: Vec<usize> = (0..group_order.len()).collect();
    if !q.order_by.is_empty() {
        let sort_keys: Vec<Vec<Value>> = (0..group_order.len())
            .map(|g| {
                q.order_by
                    .iter()
                    .map(|o| match o.agg {
                        Some((func, distinct)) => {
                            let a = Aggregate {
                                func,
                                distinct,
                                path: o.path.clone(),
                            };
                            aggs.iter()
                                .position(|x| x == &a)
                                .map(|i| per_group[g][i].clone())
                                .unwrap_or(Value::Null)
                        }
                        None => keys
                            .iter()
                            .position(|k| **k == o.path)
                            .map(|i| group_order[g][i].clone())
                            .unwrap_or(Value::Null),
                    })
                    .collect()
            })
            .collect();
        order_idx.sort_by(|&a, &b| {
            for (i, o) in q.order_by.iter().enumerate() {
                let c = cmp_nulls_last(&sort_keys[a][i], &sort_keys[b][i], o.desc);
                if c != std::cmp::Ordering::Equal {
                    return c;
                }
            }
            a.cmp(&b)
        });
    }
    let total = order_idx.len();
    let start = (offset as usize).min(total);
    let end = match q.limit {
        Some(l) => (start + l as usize).min(total),
        None => total,
    };
    let next_cursor = if q.limit.is_some() && end < total {
        Some(encode_cursor(end as u64))
    } else {
        None
    };
    let window = &order_idx[start..end];

    if keys.is_empty() {
        let n_find_aggs = q.find.len();
        let vals: Vec<Value> = (0..n_find_aggs)
            .map(|i| {
                per_group
                    .first()
                    .and_then(|g| g.get(i).cloned())
                    .unwrap_or(Value::Null)
            })
            .collect();
        let result = if vals.len() == 1 {
            vals.into_iter().next().unwrap_or(Value::Null)
        } else {
            Value::Array(vals)
        };
        return Ok(FindOutput {
            result,
            next_cursor: None,
            elements: Vec::new(),
            rows: 1,
        });
    }
    let key_groups = column_groups(&keys);
    let mut out: Vec<Value> = Vec::new();
    let mut agg_i = 0;
    let mut key_i = 0;
    let mut kg_iter = key_groups.iter();
    let mut current_kg: Option<&Vec<usize>> = None;
    for e in &q.find {
        match e {
            FindExpr::Path(_) => {
                if current_kg.is_none_or(|g| !g.contains(&key_i)) {
                    current_kg = kg_iter.next();
                    if let Some(g) = current_kg {
                        let col: Vec<Value> = window
                            .iter()
                            .map(|&gi| {
                                let vals: Vec<Value> =
                                    g.iter().map(|&k| group_order[gi][k].clone()).collect();
                                if vals.len() == 1 {
                                    vals.into_iter().next().unwrap_or(Value::Null)
                                } else {
                                    Value::Array(vals)
                                }
                            })
                            .collect();
                        out.push(Value::Array(col));
                    }
                }
                key_i += 1;
            }
            FindExpr::Agg(_) => {
                match &scalars[agg_i] {
                    Some(s) => out.push(s.clone()),
                    None => out.push(Value::Array(
                        window
                            .iter()
                            .map(|&gi| per_group[gi][agg_i].clone())
                            .collect(),
                    )),
                }
                agg_i += 1;
            }
        }
    }
    let result = if out.len() == 1 {
        out.pop().unwrap_or(Value::Null)
    } else {
        Value::Array(out)
    };
    Ok(FindOutput {
        rows: result.as_array().map_or(0, |a| a.len() as u64),
        result,
        next_cursor,
        elements: Vec::new(),
    })
}
