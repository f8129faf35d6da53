//! `UPDATE`: new attribute and metadata values on every element a `WHERE`
//! matches, checked against protected definitions first.

use super::*;

fn num_op(a: &Value, b: &Value, add: bool) -> Value {
    match (
        a.as_i64(),
        b.as_i64(),
        a.is_i64() || a.is_u64(),
        b.is_i64() || b.is_u64(),
    ) {
        (Some(x), Some(y), true, true) => {
            let r = if add {
                x.checked_add(y)
            } else {
                x.checked_mul(y)
            };
            match r {
                Some(v) => json!(v),
                None => json!(if add {
                    x as f64 + y as f64
                } else {
                    x as f64 * y as f64
                }),
            }
        }
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => serde_json::Number::from_f64(if add { x + y } else { x * y })
                .map(Value::Number)
                .unwrap_or(Value::Null),
            _ => Value::Null,
        },
    }
}

/// Evaluates an update expression against one element's own state; `Null`
/// means "skip this key for this element".
fn eval(
    e: &UpdateExpr,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
    version: i64,
) -> Value {
    match e {
        UpdateExpr::Lit(v) => v.clone(),
        UpdateExpr::Path(p) => {
            let root = if p[0] == "attributes" { attrs } else { meta };
            if p[0] == "metadata" && p.len() == 2 && p[1] == "_version" {
                return json!(version);
            }
            let mut cur = match root.get(&p[1]) {
                Some(v) => v,
                None => return Value::Null,
            };
            for seg in &p[2..] {
                match cur.get(seg) {
                    Some(v) => cur = v,
                    None => return Value::Null,
                }
            }
            cur.clone()
        }
        UpdateExpr::Coalesce(x, d) => {
            let v = eval(x, attrs, meta, version);
            if v.is_null() {
                eval(d, attrs, meta, version)
            } else {
                v
            }
        }
        UpdateExpr::Add(a, b) | UpdateExpr::Mul(a, b) => {
            let (x, y) = (eval(a, attrs, meta, version), eval(b, attrs, meta, version));
            if !x.is_number() || !y.is_number() {
                return Value::Null;
            }
            num_op(&x, &y, matches!(e, UpdateExpr::Add(..)))
        }
        UpdateExpr::Clamp(x, lo, hi) => {
            let (v, l, h) = (
                eval(x, attrs, meta, version),
                eval(lo, attrs, meta, version),
                eval(hi, attrs, meta, version),
            );
            match (v.as_f64(), l.as_f64(), h.as_f64()) {
                (Some(fv), Some(fl), Some(fh)) => {
                    if fv < fl {
                        l
                    } else if fv > fh {
                        h
                    } else {
                        v
                    }
                }
                _ => Value::Null,
            }
        }
    }
}

pub fn update(conn: Db<'_>, st: &UpdateStmt) -> KipResult<Value> {
    if let Some((k, _)) = st.set_metadata.iter().find(|(k, _)| k.starts_with('_')) {
        return Err(KipError::constraint(format!(
            "metadata key \"{k}\" is reserved: `_` keys are engine-maintained"
        )));
    }
    planner::check_bounded(&st.where_, st.limit.is_some())?;
    let literal = st
        .set_attributes
        .iter()
        .chain(st.set_metadata.iter())
        .all(|(_, v)| matches!(v, UpdateValue::Json(_)));
    if literal && conn.backend() == Backend::Postgres && binds_elements(&st.where_, &st.target) {
        return update_in_one(conn, st);
    }
    let ids = match_targets(conn, &st.where_, &st.target, st.limit)?;
    let matched = ids.len();
    if ids.len() > 1 && literal {
        return update_literals(conn, st, &ids);
    }
    let mut updated = 0;
    for id in ids {
        let Some(el) = store::element(conn, id)? else {
            continue;
        };
        let (attrs, meta, version) = match &el {
            store::Element::Concept(c) => (&c.attributes, &c.metadata, c.version),
            store::Element::Prop(p) => (&p.attributes, &p.metadata, p.version),
        };
        if let Some(why) = protected_element(conn, &el)? {
            return Err(KipError::immutable(why));
        }
        if let store::Element::Concept(c) = &el
            && is_system_actor(&c.ty, &c.name)
            && let Some((k, _)) = st.set_attributes.iter().find(|(k, _)| is_system_key(k))
        {
            return Err(KipError::immutable(format!(
                "{k} of {} is written by the system only",
                c.name
            )));
        }
        let mut na = attrs.clone();
        let mut nm = meta.clone();
        let mut wrote = false;
        for (target, sets) in [(&mut na, &st.set_attributes), (&mut nm, &st.set_metadata)] {
            for (k, v) in sets.iter() {
                let val = match v {
                    UpdateValue::Json(j) => j.clone(),
                    UpdateValue::Expr(e) => {
                        let r = eval(e, attrs, meta, version);
                        if r.is_null() {
                            continue;
                        }
                        r
                    }
                };
                target.insert(k.clone(), val);
                wrote = true;
            }
        }
        if wrote {
            match &el {
                store::Element::Concept(c) => store::update_concept(conn, c.id, &na, &nm)?,
                store::Element::Prop(p) => store::update_prop(conn, p.id, &na, &nm)?,
            }
            updated += 1;
        }
    }
    Ok(json!({ "updated": updated, "matched": matched }))
}

/// Whether a top-level clause binds `var` to the element it matches (a
/// concept or a link clause), so the variable names elements, never a
/// predicate.
fn binds_elements(where_: &[WhereItem], var: &str) -> bool {
    where_.iter().any(|w| match w {
        WhereItem::Concept(c) => c.var.as_deref() == Some(var),
        WhereItem::Prop(p) => p.var.as_deref() == Some(var),
        _ => false,
    })
}

/// The SQL that finds a violation among the elements of `targets` (a
/// table of ids `t(id)`), the first in id order: a protected definition,
/// a link anchoring one, or a system actor whose directives the statement
/// would set (when `directives`, a parameter, is 1).
fn violations(targets: &str, directives: &str) -> String {
    format!(
        "SELECT c.type, c.name, p.id, p.predicate FROM {targets} \
         LEFT JOIN propositions p ON p.id = t.id \
         JOIN concepts c ON c.id = COALESCE(p.subject, t.id) \
         WHERE (c.type, c.name) IN {} \
            OR ({directives} = 1 AND p.id IS NULL AND (c.type, c.name) IN (VALUES ('Person', '$self'), ('Person', '$system')))",
        protected_values()
    )
}

/// The error for a violation [`violations`] found.
fn violation(ty: String, name: String, prop: Option<i64>, pred: Option<String>) -> KipError {
    KipError::immutable(match (prop, pred) {
        (Some(pid), Some(pred)) => format!(
            "proposition {} anchors a protected definition",
            ids::prop_id(pid, &pred)
        ),
        _ if is_protected_concept(&ty, &name) => {
            format!("{ty}:{name} is a protected definition")
        }
        _ => format!(
            "{} of {name} are written by the system only",
            super::SYSTEM_KEYS.join(", ")
        ),
    })
}

/// `UPDATE` of literal values on PostgreSQL, in one statement: the
/// targets, the check for protected elements and the update of both
/// tables, which writes nothing if the check finds one. One scan finds
/// the targets (a separate query for them, then an update by id, would
/// read the table twice and wait for two more round trips). The answer
/// and the checks are those of the statement made one element at a time.
fn update_in_one(conn: Db<'_>, st: &UpdateStmt) -> KipResult<Value> {
    // in no order unless a LIMIT picks the first targets (an order by id
    // would have PostgreSQL walk the whole id index rather than scan and
    // sort the few rows that match)
    let sel = match st.limit {
        Some(_) => Selection {
            vars: vec![st.target.clone()],
            order: vec![],
            limit: st.limit,
            offset: 0,
            carry: vec![],
            all_rows: false,
            after: None,
        },
        None => Selection::bare(vec![st.target.clone()]),
    };
    let Some(c) = Planner::new(conn).compile(&st.where_, &sel)? else {
        return Ok(json!({ "updated": 0, "matched": 0 }));
    };
    let mut params = c.params.clone();
    let mut p = |v: Val| {
        params.push(v);
        format!("?{}", params.len())
    };
    let now = p(store::now().into());
    let directives = st.set_attributes.iter().any(|(k, _)| is_system_key(k));
    let directives = p(Val::Int(directives.into()));
    // top-level keys: one object merged over the column
    let mut merged = |column: &str, sets: &[(String, UpdateValue)]| -> String {
        let mut obj = Map::new();
        for (k, v) in sets {
            if let UpdateValue::Json(j) = v {
                obj.insert(k.clone(), j.clone());
            }
        }
        if obj.is_empty() {
            return column.to_string();
        }
        format!("({column} || {}::jsonb)", p(Val::Json(Value::Object(obj))))
    };
    let attrs = merged("attributes", &st.set_attributes);
    let meta = merged("metadata", &st.set_metadata);
    let writes = st.set_attributes.len() + st.set_metadata.len() > 0;
    let set = |table: &str| {
        format!(
            "{table}_ AS (UPDATE {table} SET attributes = {attrs}, metadata = {meta}, \
             version = version + 1, updated_at = {now}::text \
             WHERE {writes} AND id = ANY((SELECT ids FROM t)::bigint[]) AND NOT EXISTS (SELECT 1 FROM bad) RETURNING 1)"
        )
    };
    // the targets as one array: the updates and the check then find
    // each by its key (a table of them would be joined by hashing whole
    // tables, its size unknown to the planner)
    let sql = format!(
        "WITH t AS MATERIALIZED (SELECT COALESCE(array_agg(r0), '{{}}') AS ids FROM ({}) AS q WHERE r0 IS NOT NULL), \
         bad AS ({} ORDER BY t.id LIMIT 1), {}, {} \
         SELECT cardinality((SELECT ids FROM t)), (SELECT COUNT(*) FROM concepts_) + (SELECT COUNT(*) FROM propositions_), \
         b.* FROM (SELECT 1) AS one LEFT JOIN bad b ON TRUE",
        c.sql,
        violations(
            "unnest((SELECT ids FROM t)) AS t(id)",
            &format!("{directives}::bigint")
        ),
        set("concepts"),
        set("propositions"),
    );
    let Some(r) = conn.query_opt(&sql, &params)? else {
        return Err(KipError::internal("the update answered no row"));
    };
    let (matched, updated) = (r.i64(0)?, r.i64(1)?);
    if let Some(ty) = r.opt_text(2)? {
        return Err(violation(ty, r.text(3)?, r.opt_i64(4)?, r.opt_text(5)?));
    }
    if matched == 0 {
        // a `{type, name}` that names nothing is KIP_3002, not 0 matched
        planner::ground(conn, &c.ground_later)?;
    }
    Ok(json!({ "updated": updated, "matched": matched }))
}

/// `UPDATE` whose values are all literals: one statement per table sets
/// them on every target, with the same checks and results as one by one.
fn update_literals(conn: Db<'_>, st: &UpdateStmt, ids: &[i64]) -> KipResult<Value> {
    let id_list = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
    // Every target is checked (no LIMIT): each row this finds is a
    // violation, a protected definition or a link anchoring one, or a
    // system actor whose directives the statement would set.
    let directives = st.set_attributes.iter().any(|(k, _)| is_system_key(k));
    let ids_table = match conn.backend() {
        Backend::Sqlite => "(SELECT value AS id, key FROM json_each(?1)) t",
        Backend::Postgres => {
            "(SELECT value::bigint AS id, key FROM jsonb_array_elements_text(?1::jsonb) WITH ORDINALITY e(value, key)) t"
        }
    };
    let sql = format!("{} ORDER BY t.key LIMIT 1", violations(ids_table, "?2"));
    if let Some(r) = conn.query_opt(
        &sql,
        &[Val::Text(id_list.clone()), Val::Int(directives.into())],
    )? {
        return Err(violation(
            r.text(0)?,
            r.text(1)?,
            r.opt_i64(2)?,
            r.opt_text(3)?,
        ));
    }
    let backend = conn.backend();
    let set = |column: &str, sets: &[(String, UpdateValue)], params: &mut Vec<Val>| -> String {
        if sets.is_empty() {
            return column.to_string();
        }
        match backend {
            Backend::Sqlite => {
                let mut e = format!("json_set({column}");
                for (k, v) in sets {
                    let UpdateValue::Json(j) = v else { continue };
                    params.push(Val::Text(format!("$.{}", Value::String(k.clone()))));
                    let path = params.len() + 2;
                    params.push(Val::Text(j.to_string()));
                    let val = params.len() + 2;
                    e.push_str(&format!(", ?{path}, json(?{val})"));
                }
                e.push(')');
                e
            }
            // top-level keys: one object merged over the column
            Backend::Postgres => {
                let mut obj = Map::new();
                for (k, v) in sets {
                    if let UpdateValue::Json(j) = v {
                        obj.insert(k.clone(), j.clone());
                    }
                }
                params.push(Val::Json(Value::Object(obj)));
                format!("({column} || ?{}::jsonb)", params.len() + 2)
            }
        }
    };
    let mut params: Vec<Val> = Vec::new();
    let attrs = set("attributes", &st.set_attributes, &mut params);
    let meta = set("metadata", &st.set_metadata, &mut params);
    if params.is_empty() {
        return Ok(json!({ "updated": 0, "matched": ids.len() }));
    }
    let in_ids = store::id_in(conn, "id");
    let mut updated = 0;
    for table in ["concepts", "propositions"] {
        let sql = format!(
            "UPDATE {table} SET attributes = {attrs}, metadata = {meta}, version = version + 1, updated_at = ?2 \
             WHERE {in_ids}"
        );
        let mut bound: Vec<Val> = vec![Val::Text(id_list.clone()), store::now().into()];
        bound.extend(params.iter().cloned());
        updated += conn.execute(&sql, &bound)?;
    }
    Ok(json!({ "updated": updated, "matched": ids.len() }))
}
