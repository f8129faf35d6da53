//! The KQL planner: a `WHERE` pattern compiled to one SQLite statement.
//!
//! Semantics live here, top to bottom:
//! - every variable names an element id (or, for a predicate variable, the
//!   predicate name); clauses that mention a bound variable narrow it;
//! - `OPTIONAL` is a left join of a parenthesised join group, `NOT` a
//!   correlated `NOT EXISTS`, and a `NOT` that shares no variable with its
//!   surroundings cannot falsify the query, so it is dropped;
//! - `UNION` branches are independent `SELECT`s, merged with `UNION ALL`
//!   and deduplicated on the projected variables; clauses written after a
//!   `UNION` apply to every branch, where variables the branch does not bind
//!   are `NULL`;
//! - top-level clauses whose variables are all disconnected from what the
//!   statement projects must still have a solution (§3.4: every clause
//!   constrains): each such group is an existence check;
//! - `{m,n}` hops are recursive CTEs anchored on a literal endpoint or on a
//!   superset of a bound endpoint's candidates;
//! - `FILTER` is two-valued: a comparison involving a missing value is
//!   false, `==`/`!=` compare missing as `null`.

use crate::kip::ast::*;
use crate::kip::{KipError, KipResult};
use crate::store::db::{Backend, Db, Val};
use crate::store::ids;
use std::collections::{HashMap, HashSet};

pub mod cache;
mod carry;
mod filter;
mod walk;

pub use walk::MAX_HOP_PAIRS;

pub use carry::{Carried, Carry, read as read_carried};

#[derive(Debug, Clone)]
pub enum VarKind {
    Concept(String),
    Prop(String),
    Unknown,
    Pred,
    Null,
}

#[derive(Debug, Clone)]
pub struct VarB {
    pub expr: String,
    pub kind: VarKind,
}

#[derive(Default)]
struct Block {
    from: Vec<String>,
    conds: Vec<String>,
    joins: Vec<String>,
}

/// One binding in a result row.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Binding {
    Null,
    Elem(i64),
    Pred(String),
}

impl Binding {
    /// As JSON: an element's internal id, a predicate's name, or null.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Binding::Null => serde_json::Value::Null,
            Binding::Elem(id) => serde_json::json!(id),
            Binding::Pred(p) => serde_json::json!(p),
        }
    }

    /// The binding [`Binding::to_json`] wrote; None for other JSON.
    pub fn from_json(v: serde_json::Value) -> Option<Binding> {
        match v {
            serde_json::Value::Null => Some(Binding::Null),
            serde_json::Value::Number(n) => n.as_i64().map(Binding::Elem),
            serde_json::Value::String(p) => Some(Binding::Pred(p)),
            _ => None,
        }
    }
}

/// What a compiled query selects and in which order.
pub struct Selection<'q> {
    pub vars: Vec<String>,
    /// Sort keys (paths), each with its direction; `null` sorts last.
    pub order: Vec<(&'q DotPath, bool)>,
    pub limit: Option<u64>,
    pub offset: u64,
    /// Variables (by index in `vars`) whose concepts the answer carries
    /// (see [`carry`]).
    pub carry: Vec<(usize, Carry)>,
    /// Whether every solution is returned (no `LIMIT` cuts them): then
    /// what is carried may be read with each row, before the order is
    /// known, rather than looked up once the rows are final.
    pub all_rows: bool,
    /// In the default order (no sort keys), the bindings of the row the
    /// answer starts after (a page token's last row): one branch whose
    /// rows are distinct solutions starts there through the index and
    /// ignores `offset`; any other shape counts `offset` rows.
    pub after: Option<Vec<Binding>>,
}

impl Selection<'_> {
    /// The distinct solutions over `vars`, in no order (for aggregates).
    pub fn bare(vars: Vec<String>) -> Selection<'static> {
        Selection {
            vars,
            order: vec![],
            limit: None,
            offset: usize::MAX as u64,
            carry: vec![],
            all_rows: true,
            after: None,
        }
    }

    fn is_bare(&self) -> bool {
        self.offset == usize::MAX as u64 && self.limit.is_none()
    }
}

pub struct Compiled {
    pub sql: std::rc::Rc<str>,
    pub params: Vec<Val>,
    /// Every row is a distinct solution by construction (one table row per
    /// projected identity), so no deduplication was needed.
    pub unique: bool,
    /// Items whose identity matchers are checked should the query answer
    /// nothing (see [`Planner::compile`]).
    pub ground_later: Vec<WhereItem>,
    /// What each row carries after its other columns, in this order.
    pub carried: Vec<(usize, Carry)>,
    /// The statement leaves the rows in no order, and this many leading
    /// columns (element ids) order them once read (see
    /// [`Planner::compile`]).
    pub sort_after: usize,
}

/// `s` as an SQL string literal (standard quoting: every session has
/// `standard_conforming_strings` on, see `store::postgres`).
fn sql_text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// [`Planner::ground`] on its own: `KIP_3002` when an identity matcher of
/// `items` names nothing.
pub fn ground(conn: Db<'_>, items: &[WhereItem]) -> KipResult<()> {
    if items.is_empty() {
        return Ok(());
    }
    Planner::new(conn).ground(items)
}

/// An identity matcher's (id, type, name).
type MatcherKey = (Option<String>, Option<String>, Option<String>);

pub struct Planner<'c> {
    conn: Db<'c>,
    backend: Backend,
    params: Vec<Val>,
    ctes: Vec<String>,
    n: usize,
    scopes: Vec<HashMap<String, VarB>>,
    /// Variables some branch binds: unbound in this branch means NULL.
    merged: HashSet<String>,
    alias_tables: HashMap<String, (&'static str, Vec<String>)>,
    /// Whether identity matchers that name nothing raise KIP_3002.
    strict: bool,
    /// Identity matchers already resolved (grounding checks them, then
    /// compiling uses their ids).
    resolved: std::cell::RefCell<HashMap<MatcherKey, Option<i64>>>,
    /// Walks (by alias) from a single start: each node once.
    single_starts: HashSet<String>,
    /// Whether compiling read the memory (a statement that holds what it
    /// read is good for this memory as it is now, so it is never cached).
    read_db: std::cell::Cell<bool>,
}

fn items_vars(items: &[WhereItem], out: &mut HashSet<String>) {
    for it in items {
        item_vars(it, out);
    }
}

fn ep_vars(e: &Endpoint, out: &mut HashSet<String>) {
    match e {
        Endpoint::Var(v) => {
            out.insert(v.clone());
        }
        Endpoint::Concept(_) => {}
        Endpoint::Prop(p) => pat_vars(p, out),
    }
}

fn pat_vars(p: &PropPattern, out: &mut HashSet<String>) {
    if let PropPattern::Triple {
        subject,
        predicate,
        object,
    } = p
    {
        ep_vars(subject, out);
        ep_vars(object, out);
        if let PredSpec::Var(v) = predicate {
            out.insert(v.clone());
        }
    }
}

fn expr_vars(e: &Expr, out: &mut HashSet<String>) {
    let mut op = |o: &Operand| {
        if let Operand::Path(p) = o {
            out.insert(p.var.clone());
        }
    };
    match e {
        Expr::Or(a, b) | Expr::And(a, b) => {
            expr_vars(a, out);
            expr_vars(b, out);
        }
        Expr::Not(a) => expr_vars(a, out),
        Expr::Cmp(a, _, b) | Expr::Str(_, a, b) => {
            op(a);
            op(b);
        }
        Expr::In(a, _) | Expr::IsNull(a) | Expr::IsNotNull(a) => op(a),
    }
}

pub fn item_vars(it: &WhereItem, out: &mut HashSet<String>) {
    match it {
        WhereItem::Concept(c) => {
            if let Some(v) = &c.var {
                out.insert(v.clone());
            }
        }
        WhereItem::Prop(p) => {
            if let Some(v) = &p.var {
                out.insert(v.clone());
            }
            pat_vars(&p.pattern, out);
        }
        WhereItem::Filter(e) => expr_vars(e, out),
        WhereItem::Not(b) | WhereItem::Optional(b) | WhereItem::Union(b) => items_vars(b, out),
    }
}

/// Variables bound (not merely read) by a block's clauses.
fn bound_vars(items: &[WhereItem], out: &mut HashSet<String>) {
    for it in items {
        match it {
            WhereItem::Concept(_) | WhereItem::Prop(_) => item_vars(it, out),
            WhereItem::Optional(b) => bound_vars(b, out),
            _ => {}
        }
    }
}

/// Refuses a fully unconstrained `(?s, ?p, ?o)` when nothing caps the
/// result: every endpoint and the predicate free, bound by no other clause.
pub fn check_bounded(where_: &[WhereItem], capped: bool) -> KipResult<()> {
    if capped {
        return Ok(());
    }
    for (i, it) in where_.iter().enumerate() {
        let WhereItem::Prop(PropClause {
            pattern:
                PropPattern::Triple {
                    subject,
                    predicate: PredSpec::Var(p),
                    object,
                },
            ..
        }) = it
        else {
            continue;
        };
        let (Endpoint::Var(s), Endpoint::Var(o)) = (subject.as_ref(), object.as_ref()) else {
            continue;
        };
        let mut others = HashSet::new();
        for (j, other) in where_.iter().enumerate() {
            if j != i && matches!(other, WhereItem::Concept(_) | WhereItem::Prop(_)) {
                item_vars(other, &mut others);
            }
        }
        if !others.contains(s) && !others.contains(o) && !others.contains(p) {
            return Err(KipError::exhausted(format!(
                "(?{s}, ?{p}, ?{o}) is unconstrained: it would scan the whole graph"
            ))
            .with_hint(
                "Ground an endpoint (by id, {type, name} or another clause) or add LIMIT.",
            ));
        }
    }
    Ok(())
}

/// Pairs of variables joined as a proposition's subject and object.
pub fn endpoint_pairs(items: &[WhereItem], out: &mut Vec<(String, String)>) {
    fn ep_var(e: &Endpoint) -> Option<&String> {
        match e {
            Endpoint::Var(v) => Some(v),
            _ => None,
        }
    }
    fn pat(p: &PropPattern, out: &mut Vec<(String, String)>) {
        if let PropPattern::Triple {
            subject, object, ..
        } = p
        {
            if let (Some(s), Some(o)) = (ep_var(subject), ep_var(object)) {
                out.push((s.clone(), o.clone()));
            }
            if let Endpoint::Prop(n) = subject.as_ref() {
                pat(n, out);
            }
            if let Endpoint::Prop(n) = object.as_ref() {
                pat(n, out);
            }
        }
    }
    for it in items {
        match it {
            WhereItem::Prop(p) => pat(&p.pattern, out),
            WhereItem::Not(b) | WhereItem::Optional(b) | WhereItem::Union(b) => {
                endpoint_pairs(b, out)
            }
            _ => {}
        }
    }
}

/// Splits a top-level `WHERE` into its branches: the main block, then each
/// `UNION` block, each followed by the clauses written after the first
/// `UNION` (which apply to the merged result, hence to every branch).
pub fn branches(where_: &[WhereItem]) -> Vec<Vec<WhereItem>> {
    let first_union = where_.iter().position(|w| matches!(w, WhereItem::Union(_)));
    let Some(fu) = first_union else {
        return vec![where_.to_vec()];
    };
    let post: Vec<WhereItem> = where_[fu..]
        .iter()
        .filter(|w| !matches!(w, WhereItem::Union(_)))
        .cloned()
        .collect();
    let mut out = Vec::new();
    let mut main = where_[..fu].to_vec();
    main.extend(post.iter().cloned());
    out.push(main);
    for w in &where_[fu..] {
        if let WhereItem::Union(b) = w {
            let mut br = b.clone();
            br.extend(post.iter().cloned());
            out.push(br);
        }
    }
    out
}

/// Splits top-level clauses into those connected (through shared
/// variables) to a relevant variable, and the components disconnected from
/// every one of them. All clauses are AND-ed (§3.4): a disconnected
/// component still has to have a solution, so it becomes an existence
/// check ([`Planner::exists`]) rather than a cross product.
fn split(items: &[WhereItem], relevant: &HashSet<String>) -> (Vec<WhereItem>, Vec<Vec<WhereItem>>) {
    let sets: Vec<HashSet<String>> = items
        .iter()
        .map(|it| {
            let mut s = HashSet::new();
            item_vars(it, &mut s);
            s
        })
        .collect();
    // union-find over variables through shared clauses
    let mut comp: HashMap<String, usize> = HashMap::new();
    let mut parent: Vec<usize> = Vec::new();
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        let mut c = x;
        while p[c] != r {
            let n = p[c];
            p[c] = r;
            c = n;
        }
        r
    }
    for s in &sets {
        let mut first: Option<usize> = None;
        for v in s {
            let id = *comp.entry(v.clone()).or_insert_with(|| {
                parent.push(parent.len());
                parent.len() - 1
            });
            match first {
                None => first = Some(id),
                Some(f) => {
                    let (a, b) = (find(&mut parent, f), find(&mut parent, id));
                    parent[a] = b;
                }
            }
        }
    }
    let mut live: HashSet<usize> = HashSet::new();
    for v in relevant {
        if let Some(&id) = comp.get(v) {
            let r = find(&mut parent, id);
            live.insert(r);
        }
    }
    let mut kept = Vec::new();
    let mut apart: Vec<(usize, Vec<WhereItem>)> = Vec::new();
    for (it, s) in items.iter().zip(sets.iter()) {
        let Some(v) = s.iter().next() else {
            kept.push(it.clone());
            continue;
        };
        let r = find(&mut parent, comp[v]);
        if live.contains(&r) {
            kept.push(it.clone());
        } else if let Some((_, c)) = apart.iter_mut().find(|(k, _)| *k == r) {
            c.push(it.clone());
        } else {
            apart.push((r, vec![it.clone()]));
        }
    }
    // A component of OPTIONALs alone cannot fail (a left join keeps every
    // solution), and one of FILTERs alone reads variables no pattern binds.
    let apart = apart
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| {
            c.iter().any(|w| {
                matches!(
                    w,
                    WhereItem::Concept(_) | WhereItem::Prop(_) | WhereItem::Not(_)
                )
            })
        })
        .collect();
    (kept, apart)
}

fn has_pattern(items: &[WhereItem]) -> bool {
    items
        .iter()
        .any(|w| matches!(w, WhereItem::Concept(_) | WhereItem::Prop(_)))
}

impl<'c> Planner<'c> {
    pub fn new(conn: impl Into<Db<'c>>) -> Self {
        let conn = conn.into();
        Planner {
            conn,
            backend: conn.backend(),
            params: Vec::new(),
            ctes: Vec::new(),
            n: 0,
            scopes: Vec::new(),
            merged: HashSet::new(),
            alias_tables: HashMap::new(),
            strict: true,
            resolved: Default::default(),
            single_starts: HashSet::new(),
            read_db: std::cell::Cell::new(false),
        }
    }

    /// A parameter. PostgreSQL is told its type where the statement's
    /// context would not (a select list, a `UNION` with a column).
    fn p(&mut self, v: Val) -> String {
        let cast = match (self.backend, &v) {
            (Backend::Sqlite, _) => "",
            (Backend::Postgres, Val::Int(_)) => "::bigint",
            (Backend::Postgres, Val::Real(_)) => "::float8",
            (Backend::Postgres, Val::Json(_) | Val::JsonText(_)) => "::jsonb",
            (Backend::Postgres, _) => "::text",
        };
        self.params.push(v);
        format!("?{}{cast}", self.params.len())
    }

    fn ps(&mut self, s: &str) -> String {
        self.p(Val::Text(s.to_string()))
    }

    fn alias(&mut self, prefix: &str) -> String {
        self.n += 1;
        format!("{prefix}{}", self.n)
    }

    fn lookup(&self, v: &str) -> Option<&VarB> {
        self.scopes.iter().rev().find_map(|s| s.get(v))
    }

    fn bind(&mut self, v: &str, b: VarB) {
        if let Some(top) = self.scopes.last_mut() {
            top.insert(v.to_string(), b);
        }
    }

    // ---------------------------------------------------------- grounding

    /// Checks every identity matcher of the mandatory main block: a literal
    /// `{id}`, `{type, name}` or `(id: ...)` that names nothing is `KIP_3002`.
    pub fn ground(&self, where_: &[WhereItem]) -> KipResult<()> {
        for it in where_ {
            match it {
                WhereItem::Concept(c) => self.ground_matcher(&c.matcher)?,
                WhereItem::Prop(p) => self.ground_pattern(&p.pattern)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn ground_matcher(&self, m: &ConceptMatcher) -> KipResult<()> {
        if !m.is_identity() {
            return Ok(());
        }
        if self.resolve_matcher(m)?.is_none() {
            let what = match (&m.id, &m.ty, &m.name) {
                (Some(id), _, _) => format!("concept {id}"),
                (_, Some(t), Some(n)) => format!("concept {{type: \"{t}\", name: \"{n}\"}}"),
                _ => "concept".to_string(),
            };
            return Err(KipError::not_found(format!("{what} does not exist")));
        }
        Ok(())
    }

    fn ground_pattern(&self, p: &PropPattern) -> KipResult<()> {
        match p {
            PropPattern::Id(s) => {
                if self.resolve_prop_id(s)?.is_none() {
                    return Err(KipError::not_found(format!(
                        "proposition {s} does not exist"
                    )));
                }
            }
            PropPattern::Triple {
                subject, object, ..
            } => {
                for e in [subject, object] {
                    match e.as_ref() {
                        Endpoint::Concept(m) => self.ground_matcher(m)?,
                        Endpoint::Prop(n) => self.ground_pattern(n)?,
                        Endpoint::Var(_) => {}
                    }
                }
            }
        }
        Ok(())
    }

    pub fn resolve_matcher(&self, m: &ConceptMatcher) -> KipResult<Option<i64>> {
        let key = (m.id.clone(), m.ty.clone(), m.name.clone());
        if let Some(hit) = self.resolved.borrow().get(&key) {
            return Ok(*hit);
        }
        let found = self.resolve_matcher_uncached(m)?;
        self.resolved.borrow_mut().insert(key, found);
        Ok(found)
    }

    fn resolve_matcher_uncached(&self, m: &ConceptMatcher) -> KipResult<Option<i64>> {
        self.read_db.set(true);
        if let Some(id) = &m.id {
            let Some(n) = ids::parse_concept_id(id) else {
                return Ok(None);
            };
            return Ok(crate::store::concept_by_id(self.conn, n)?.map(|c| c.id));
        }
        if let (Some(t), Some(n)) = (&m.ty, &m.name) {
            return crate::store::concept_id_by_type_name(self.conn, t, n);
        }
        Ok(None)
    }

    /// The SQL of the id an identity matcher names, or `None` when it is
    /// known to name nothing: a subquery of the statement itself (`NULL`
    /// when nothing matches), so the statement depends on nothing but the
    /// command and can be kept for the next command of the same shape
    /// ([`cache`]).
    fn matcher_id(&mut self, m: &ConceptMatcher) -> KipResult<Option<String>> {
        if let Some(id) = &m.id {
            let Some(n) = ids::parse_concept_id(id) else {
                return Ok(None);
            };
            let n = self.p(Val::Int(n));
            return Ok(Some(format!("(SELECT id FROM concepts WHERE id = {n})")));
        }
        match (&m.ty, &m.name) {
            (Some(t), Some(n)) => {
                let (t, n) = (self.ps(t), self.ps(n));
                Ok(Some(format!(
                    "(SELECT id FROM concepts WHERE type = {t} AND name = {n})"
                )))
            }
            _ => Ok(None),
        }
    }

    pub fn resolve_prop_id(&self, s: &str) -> KipResult<Option<i64>> {
        self.read_db.set(true);
        match ids::parse_prop_id(s) {
            // `P:<n>:<predicate>` names the link only while its predicate
            // is that one
            ids::PropIdParse::Ok(n, pred) if n >= 0 => Ok(crate::store::prop_by_id(self.conn, n)?
                .filter(|p| pred.as_deref().is_none_or(|x| x == p.predicate))
                .map(|p| p.id)),
            _ => Ok(None),
        }
    }

    // ---------------------------------------------------------- compile

    /// Compiles a `WHERE` into a statement selecting the distinct bindings
    /// of `sel.vars`. `None` when no branch can contribute a row.
    ///
    /// The main block's identity matchers must name something
    /// ([`Planner::ground`]). With one branch, a solution proves they do,
    /// so the check waits until the query answers nothing
    /// ([`Compiled::ground_later`], done by [`run_raw`]): a query that
    /// finds something costs one round trip fewer. With a `UNION`, rows
    /// may come from another branch, and the check comes first.
    pub fn compile(self, where_: &[WhereItem], sel: &Selection<'_>) -> KipResult<Option<Compiled>> {
        let main: Vec<WhereItem> = where_
            .iter()
            .take_while(|w| !matches!(w, WhereItem::Union(_)))
            .cloned()
            .collect();
        if where_.iter().any(|w| matches!(w, WhereItem::Union(_))) {
            self.ground(&main)?;
            self.read_db.set(false);
            return cache::compiled(self, where_, sel);
        }
        let conn = self.conn;
        match cache::compiled(self, where_, sel) {
            Ok(Some(mut c)) => {
                c.ground_later = main;
                Ok(Some(c))
            }
            // nothing to run, or an error: the check's error comes first
            other => {
                ground(conn, &main)?;
                other
            }
        }
    }

    fn compile_grounded(
        &mut self,
        where_: &[WhereItem],
        sel: &Selection<'_>,
    ) -> KipResult<Option<Compiled>> {
        let relevant: HashSet<String> = sel
            .vars
            .iter()
            .cloned()
            .chain(sel.order.iter().map(|(p, _)| p.var.clone()))
            .collect();
        let brs = branches(where_);
        let multi = brs.len() > 1;
        let mut merged = HashSet::new();
        for b in &brs {
            bound_vars(b, &mut merged);
        }
        for v in &relevant {
            if !merged.contains(v) {
                return Err(KipError::reference(format!(
                    "Unbound variable ?{v}: no clause in WHERE binds it"
                )));
            }
        }
        self.merged = merged;
        let mut selects = Vec::new();
        let mut unique = false;
        let mut in_place = false;
        // whether each variable binds element ids in every branch
        let mut carriable = vec![true; sel.vars.len()];
        // whether the answer starts after a page token's last row
        let mut keyset = false;
        for (bi, br) in brs.iter().enumerate() {
            let (items, apart) = split(br, &relevant);
            if !has_pattern(&items) {
                continue;
            }
            self.scopes = vec![HashMap::new()];
            self.strict = bi == 0 && !multi;
            let mut block = self.block(&items, false)?;
            for c in &apart {
                let cond = self.exists(c)?;
                block.conds.push(cond);
            }
            let mut cols = Vec::new();
            for (i, v) in sel.vars.iter().enumerate() {
                let b = self.lookup(v);
                carriable[i] &= matches!(
                    b.map(|b| &b.kind),
                    Some(VarKind::Concept(_) | VarKind::Unknown)
                );
                let e = b.map(|b| b.expr.clone()).unwrap_or_else(|| "NULL".into());
                cols.push(format!("{e} AS r{i}"));
            }
            if brs.len() == 1 {
                let exprs: Vec<String> = sel
                    .vars
                    .iter()
                    .filter_map(|v| self.lookup(v).map(|b| b.expr.clone()))
                    .collect();
                unique = self.rows_unique(&block, &exprs);
            }
            if unique
                && brs.len() == 1
                && sel.order.is_empty()
                && !sel.all_rows
                && let Some(cond) = self.after_row(sel)
            {
                block.conds.push(cond);
                keyset = true;
            }
            cols.push(format!("{bi} AS b_"));
            for (i, (path, _)) in sel.order.iter().enumerate() {
                let e = self.sort_key(&path.var, &path.path)?;
                cols.push(format!("{e} AS k{i}"));
            }
            if unique && sel.all_rows && !sel.is_bare() {
                let carried = self.carried_in_place(&sel.carry, &sel.vars);
                in_place = !carried.is_empty();
                cols.extend(carried);
            }
            selects.push(format!(
                "SELECT {} {}",
                cols.join(", "),
                render_block(&block, self.backend)
            ));
        }
        if selects.is_empty() {
            return Ok(None);
        }
        let rcols: Vec<String> = (0..sel.vars.len()).map(|i| format!("r{i}")).collect();
        let with = if self.ctes.is_empty() {
            String::new()
        } else {
            format!("WITH RECURSIVE {} ", self.ctes.join(", "))
        };
        if sel.is_bare() {
            // aggregates: the distinct solutions, in no particular order
            return Ok(Some(Compiled {
                sql: format!(
                    "{with}SELECT {}{} FROM ({}) AS u_",
                    if unique { "" } else { "DISTINCT " },
                    rcols.join(", "),
                    selects.join(" UNION ALL ")
                )
                .into(),
                params: std::mem::take(&mut self.params),
                unique,
                ground_later: vec![],
                carried: vec![],
                sort_after: 0,
            }));
        }
        if unique {
            // one branch whose rows are distinct solutions already: no
            // grouping pass over them, only the order (and the window)
            let mut order_terms = Vec::new();
            for (i, (_, desc)) in sel.order.iter().enumerate() {
                order_terms.extend(self.sort_terms(&format!("k{i}"), *desc));
            }
            order_terms.extend(rcols.iter().map(|c| self.id_order(c)));
            // Every solution returned, in the default order (by element
            // id): that order is given once the rows are read. Asked for
            // in the statement, PostgreSQL's planner walks the id index
            // for a filter whose selectivity it cannot estimate, where
            // reading the table and sorting what passes costs a third
            // less; SQLite opens a sorter even for the one row of a
            // lookup (about 0.8 µs of a 5-hop walk's 5 µs statement).
            let sort_after = if sel.all_rows
                && sel.order.is_empty()
                && sel.offset == 0
                && carriable.iter().all(|c| *c)
            {
                rcols.len()
            } else {
                0
            };
            let mut body = if sort_after > 0 {
                format!("SELECT * FROM ({}) AS u_", selects.join(" UNION ALL "))
            } else {
                format!(
                    "SELECT * FROM ({}) AS u_ ORDER BY {}",
                    selects.join(" UNION ALL "),
                    order_terms.join(", ")
                )
            };
            self.window(&mut body, sel, keyset);
            let (sql, carried) = if in_place {
                (format!("{with}{body}"), sel.carry.clone())
            } else {
                self.carrying(&with, body, &sel.carry, &carriable)
            };
            return Ok(Some(Compiled {
                sql: sql.into(),
                params: std::mem::take(&mut self.params),
                unique,
                ground_later: vec![],
                carried,
                sort_after,
            }));
        }
        let mut outer_cols = rcols.clone();
        outer_cols.push("MIN(b_) AS b_".into());
        let mut order_terms = Vec::new();
        for (i, (_, desc)) in sel.order.iter().enumerate() {
            outer_cols.push(format!("{}(k{i}) AS k{i}", self.min_fn()));
            order_terms.extend(self.sort_terms(&format!("k{i}"), *desc));
        }
        order_terms.push("b_".into());
        order_terms.extend(rcols.iter().map(|c| self.id_order(c)));
        let group = if rcols.is_empty() {
            String::new()
        } else {
            format!(" GROUP BY {}", rcols.join(", "))
        };
        let grouped = format!(
            "SELECT {} FROM ({}) AS u_{}",
            outer_cols.join(", "),
            selects.join(" UNION ALL "),
            group
        );
        // PostgreSQL reads a name inside an ORDER BY expression as an input
        // column, never as an output alias: the grouped rows are sorted
        // from outside
        let mut body = match self.backend {
            Backend::Sqlite => format!("{grouped} ORDER BY {}", order_terms.join(", ")),
            Backend::Postgres => format!(
                "SELECT * FROM ({grouped}) AS o_ ORDER BY {}",
                order_terms.join(", ")
            ),
        };
        self.window(&mut body, sel, false);
        let (sql, carried) = self.carrying(&with, body, &sel.carry, &carriable);
        Ok(Some(Compiled {
            sql: sql.into(),
            params: std::mem::take(&mut self.params),
            unique: false,
            ground_later: vec![],
            carried,
            sort_after: 0,
        }))
    }

    /// An element column in the default order: ids ascending, a missing
    /// one (an OPTIONAL that matched nothing) first, as SQLite sorts a
    /// null.
    fn id_order(&self, col: &str) -> String {
        match self.backend {
            Backend::Sqlite => col.to_string(),
            Backend::Postgres => format!("{col} NULLS FIRST"),
        }
    }

    /// `LIMIT` and `OFFSET` of the selection.
    /// (`after`: the rows start after the page token's last row, and no
    /// offset is counted.)
    fn window(&self, sql: &mut String, sel: &Selection<'_>, after: bool) {
        let offset = if after { 0 } else { sel.offset };
        if let Some(l) = sel.limit {
            sql.push_str(&format!(" LIMIT {l} OFFSET {offset}"));
        } else if offset > 0 {
            sql.push_str(&format!(" {} OFFSET {offset}", self.no_limit()));
        }
    }

    /// The condition that a row comes after `sel.after` in the default
    /// order (its variables' values ascending, compared as a row), or
    /// None when that row cannot be placed: a missing binding (it sorts
    /// first, and no comparison with it holds), or a binding of another
    /// kind than the variable's (a token of another query).
    fn after_row(&mut self, sel: &Selection<'_>) -> Option<String> {
        let after = sel.after.as_ref()?;
        if after.len() != sel.vars.len() || after.is_empty() {
            return None;
        }
        let mut exprs = Vec::with_capacity(after.len());
        for (v, b) in sel.vars.iter().zip(after) {
            let bound = self.lookup(v)?;
            let fits = matches!(
                (&bound.kind, b),
                (VarKind::Pred, Binding::Pred(_))
                    | (
                        VarKind::Concept(_) | VarKind::Prop(_) | VarKind::Unknown,
                        Binding::Elem(_)
                    )
            );
            if !fits {
                return None;
            }
            exprs.push(bound.expr.clone());
        }
        let vals: Vec<String> = after
            .iter()
            .map(|b| match b {
                Binding::Elem(id) => self.p(Val::Int(*id)),
                Binding::Pred(p) => self.ps(p),
                Binding::Null => "NULL".into(),
            })
            .collect();
        Some(if exprs.len() == 1 {
            format!("{} > {}", exprs[0], vals[0])
        } else {
            format!("({}) > ({})", exprs.join(", "), vals.join(", "))
        })
    }

    /// Whether each row of a block is a distinct solution over `exprs`:
    /// every table it reads is identified by what is projected (a row's id,
    /// or a link's subject, fixed predicate and object, unique together).
    /// A walk from one start (`single_starts`) reaches each node once, so
    /// its rows are identified by the node; a link whose subject (or
    /// object) is one given concept is identified by the other end.
    fn rows_unique(&self, b: &Block, exprs: &[String]) -> bool {
        if !b.joins.is_empty() {
            return false;
        }
        // `x` is one given element: a parameter, or the concept an
        // identity matcher names (one row at most)
        let fixed = |x: &str| -> bool {
            b.conds.iter().any(|c| {
                c.strip_prefix(x).is_some_and(|rest| {
                    rest.starts_with(" = ?")
                        || rest.starts_with(" = (SELECT id FROM concepts WHERE ")
                })
            })
        };
        let projected = |x: &str| -> bool {
            exprs.iter().any(|e| e == x)
                || b.conds.iter().any(|c| {
                    exprs
                        .iter()
                        .any(|e| c == &format!("{x} = {e}") || c == &format!("{e} = {x}"))
                })
        };
        b.from.iter().all(|f| {
            let Some((table, alias)) = f.split_once(' ') else {
                return false;
            };
            if projected(&format!("{alias}.id")) {
                return true;
            }
            if self.single_starts.contains(alias) {
                return projected(&format!("{alias}.node"));
            }
            let end = |e: &str| {
                let x = format!("{alias}.{e}");
                projected(&x) || fixed(&x)
            };
            table == "propositions"
                && self.alias_tables.get(alias).is_some_and(|(_, conds)| {
                    conds
                        .iter()
                        .any(|c| c.starts_with(&format!("{alias}.predicate = ?")))
                })
                && end("subject")
                && end("object")
        })
    }

    /// Compiles the clauses of one block into the current (top) scope.
    fn block(&mut self, items: &[WhereItem], nested: bool) -> KipResult<Block> {
        let mut b = Block::default();
        for it in items {
            match it {
                WhereItem::Concept(c) => {
                    self.concept_clause(c.var.as_deref(), &c.matcher, &mut b)?;
                }
                WhereItem::Prop(p) => {
                    self.prop_clause(p.var.as_deref(), &p.pattern, &mut b)?;
                }
                _ => {}
            }
        }
        for it in items {
            if let WhereItem::Optional(inner) = it {
                self.optional(inner, &mut b)?;
            }
        }
        for it in items {
            match it {
                WhereItem::Filter(e) => {
                    let c = self.expr(e)?;
                    b.conds.push(c);
                }
                WhereItem::Not(inner) => {
                    if let Some(c) = self.not(inner)? {
                        b.conds.push(c);
                    }
                }
                WhereItem::Union(_) if nested => {
                    return Err(KipError::syntax(
                        "UNION is only supported at the top level of WHERE or inside NOT",
                    ));
                }
                _ => {}
            }
        }
        Ok(b)
    }

    fn optional(&mut self, inner: &[WhereItem], outer: &mut Block) -> KipResult<()> {
        let strict = self.strict;
        self.strict = false;
        self.scopes.push(HashMap::new());
        let res = self.block(inner, true);
        let scope = self.scopes.pop().unwrap_or_default();
        self.strict = strict;
        let b = res?;
        if b.from.is_empty() {
            return Ok(());
        }
        let mut group = b.from.join(" CROSS JOIN ");
        for j in &b.joins {
            group.push(' ');
            group.push_str(j);
        }
        let on = if b.conds.is_empty() {
            "TRUE".to_string()
        } else {
            b.conds.join(" AND ")
        };
        if b.from.len() == 1 && b.joins.is_empty() {
            outer.joins.push(format!("LEFT JOIN {group} ON {on}"));
        } else {
            outer.joins.push(format!("LEFT JOIN ({group}) ON {on}"));
        }
        for (k, v) in scope {
            self.bind(&k, v);
        }
        Ok(())
    }

    /// `EXISTS` over a component of clauses that shares no variable with
    /// the rest: its variables stay inside it.
    fn exists(&mut self, items: &[WhereItem]) -> KipResult<String> {
        let strict = self.strict;
        self.strict = false;
        self.scopes.push(HashMap::new());
        let res = self.block(items, true);
        self.scopes.pop();
        self.strict = strict;
        let b = res?;
        Ok(format!(
            "EXISTS (SELECT 1 {})",
            render_block(&b, self.backend)
        ))
    }

    /// A NOT excludes the solutions for which its pattern holds; one that
    /// shares no variable with its surroundings holds for all of them or
    /// for none.
    fn not(&mut self, inner: &[WhereItem]) -> KipResult<Option<String>> {
        let mut vars = HashSet::new();
        items_vars(inner, &mut vars);
        let strict = self.strict;
        self.strict = false;
        let brs = branches(inner);
        let mut parts = Vec::new();
        for br in brs {
            // Variables another UNION branch binds but this one does not are
            // NULL here: they match nothing inside the NOT.
            let mut nulls = HashMap::new();
            for v in &vars {
                if self.lookup(v).is_none() && self.merged.contains(v) {
                    nulls.insert(
                        v.clone(),
                        VarB {
                            expr: "NULL".into(),
                            kind: VarKind::Null,
                        },
                    );
                }
            }
            self.scopes.push(nulls);
            let res = self.block(&br, true);
            self.scopes.pop();
            let b = res?;
            parts.push(format!(
                "EXISTS (SELECT 1 {})",
                render_block(&b, self.backend)
            ));
        }
        self.strict = strict;
        Ok(Some(format!("NOT ({})", parts.join(" OR "))))
    }

    fn new_table(&mut self, b: &mut Block, table: &'static str, prefix: &str) -> String {
        let a = self.alias(prefix);
        b.from.push(format!("{table} {a}"));
        self.alias_tables.insert(a.clone(), (table, Vec::new()));
        a
    }

    fn local(&mut self, b: &mut Block, alias: &str, cond: String) {
        if let Some((_, v)) = self.alias_tables.get_mut(alias) {
            v.push(cond.clone());
        }
        b.conds.push(cond);
    }

    /// Constrains concept alias `a` by a matcher.
    fn matcher_conds(&mut self, a: &str, m: &ConceptMatcher, b: &mut Block) -> KipResult<()> {
        if let Some(id) = &m.id {
            let c = match ids::parse_concept_id(id) {
                Some(n) => {
                    let p = self.p(Val::Int(n));
                    format!("{a}.id = {p}")
                }
                None => "FALSE".to_string(),
            };
            self.local(b, a, c);
        }
        if let Some(t) = &m.ty {
            // A type alone is written into the statement on PostgreSQL: its
            // plan is kept across runs, and with a parameter there it
            // would be planned for a type of average size (an index walk
            // over a type that is half the memory). Types are few, so are
            // the statements.
            let cond = if self.backend == Backend::Postgres && m.name.is_none() && m.id.is_none() {
                // (PostgreSQL text cannot hold a NUL: no such type exists)
                if t.contains('\0') {
                    "FALSE".to_string()
                } else {
                    format!("{a}.type = {}", sql_text(t))
                }
            } else {
                let p = self.ps(t);
                format!("{a}.type = {p}")
            };
            self.local(b, a, cond);
        }
        if let Some(n) = &m.name {
            let p = self.ps(n);
            self.local(b, a, format!("{a}.name = {p}"));
        }
        Ok(())
    }

    fn concept_clause(
        &mut self,
        var: Option<&str>,
        m: &ConceptMatcher,
        b: &mut Block,
    ) -> KipResult<String> {
        if let Some(v) = var
            && let Some(bound) = self.lookup(v).cloned()
        {
            return match bound.kind {
                VarKind::Concept(a) if self.scopes.last().is_some_and(|s| s.contains_key(v)) => {
                    self.matcher_conds(&a, m, b)?;
                    Ok(a)
                }
                VarKind::Pred => Err(KipError::reference(format!(
                    "?{v} is a predicate variable, not a concept"
                ))),
                _ => {
                    let a = self.new_table(b, "concepts", "c");
                    b.conds.push(format!("{a}.id = {}", bound.expr));
                    self.matcher_conds(&a, m, b)?;
                    Ok(a)
                }
            };
        }
        let a = self.new_table(b, "concepts", "c");
        self.matcher_conds(&a, m, b)?;
        if let Some(v) = var
            && (self.merged.contains(v) || !self.scopes.is_empty())
        {
            self.bind(
                v,
                VarB {
                    expr: format!("{a}.id"),
                    kind: VarKind::Concept(a.clone()),
                },
            );
        }
        Ok(a)
    }

    /// The SQL expression of an endpoint, binding a free variable to `slot`.
    fn endpoint(&mut self, e: &Endpoint, slot: &str, b: &mut Block) -> KipResult<()> {
        match e {
            Endpoint::Var(v) => match self.lookup(v).cloned() {
                Some(bound) => {
                    if matches!(bound.kind, VarKind::Pred) {
                        return Err(KipError::reference(format!(
                            "?{v} is a predicate variable, not an endpoint"
                        )));
                    }
                    b.conds.push(format!("{slot} = {}", bound.expr));
                }
                None => self.bind(
                    v,
                    VarB {
                        expr: slot.to_string(),
                        kind: VarKind::Unknown,
                    },
                ),
            },
            Endpoint::Concept(m) => {
                if m.is_identity() {
                    let c = match self.matcher_id(m)? {
                        Some(id) => format!("{slot} = {id}"),
                        None => "FALSE".to_string(),
                    };
                    b.conds.push(c);
                } else {
                    let a = self.concept_clause(None, m, b)?;
                    b.conds.push(format!("{slot} = {a}.id"));
                }
            }
            Endpoint::Prop(p) => {
                let a = self.prop_clause(None, p, b)?;
                b.conds.push(format!("{slot} = {a}"));
            }
        }
        Ok(())
    }

    /// Compiles a proposition clause; returns the SQL expression of the
    /// matched link's id.
    fn prop_clause(
        &mut self,
        var: Option<&str>,
        pat: &PropPattern,
        b: &mut Block,
    ) -> KipResult<String> {
        match pat {
            PropPattern::Id(s) => {
                let a = self.new_table(b, "propositions", "p");
                let c = match ids::parse_prop_id(s) {
                    ids::PropIdParse::Ok(n, pred) if n >= 0 => {
                        let p = self.p(Val::Int(n));
                        match pred {
                            Some(pred) => {
                                let q = self.p(Val::Text(pred));
                                format!("{a}.id = {p} AND {a}.predicate = {q}")
                            }
                            None => format!("{a}.id = {p}"),
                        }
                    }
                    ids::PropIdParse::NotAProposition => {
                        return Err(KipError::syntax(format!(
                            "{s} must be a Proposition ID (P:<n>:<predicate>)"
                        )));
                    }
                    _ => "FALSE".into(),
                };
                self.local(b, &a, c);
                self.bind_link(var, &a, b);
                Ok(format!("{a}.id"))
            }
            PropPattern::Triple {
                subject,
                predicate:
                    PredSpec::Hop {
                        predicate,
                        min,
                        max,
                    },
                object,
            } => {
                if var.is_some() {
                    return Err(KipError::syntax(
                        "a multi-hop pattern cannot bind a link variable",
                    ));
                }
                self.hop(subject, predicate, *min, *max, object, b)
            }
            PropPattern::Triple {
                subject,
                predicate,
                object,
            } => {
                let a = self.new_table(b, "propositions", "p");
                match predicate {
                    PredSpec::Alts(alts) if alts.len() == 1 => {
                        let p = self.ps(&alts[0]);
                        self.local(b, &a, format!("{a}.predicate = {p}"));
                    }
                    PredSpec::Alts(alts) => {
                        let ps: Vec<String> = alts.iter().map(|x| self.ps(x)).collect();
                        self.local(b, &a, format!("{a}.predicate IN ({})", ps.join(", ")));
                    }
                    PredSpec::Var(v) => match self.lookup(v).cloned() {
                        Some(bound) => b.conds.push(format!("{a}.predicate = {}", bound.expr)),
                        None => self.bind(
                            v,
                            VarB {
                                expr: format!("{a}.predicate"),
                                kind: VarKind::Pred,
                            },
                        ),
                    },
                    PredSpec::Hop { .. } => {}
                }
                self.endpoint(subject, &format!("{a}.subject"), b)?;
                self.endpoint(object, &format!("{a}.object"), b)?;
                self.bind_link(var, &a, b);
                Ok(format!("{a}.id"))
            }
        }
    }

    fn bind_link(&mut self, var: Option<&str>, a: &str, b: &mut Block) {
        if let Some(v) = var {
            match self.lookup(v).cloned() {
                Some(bound) => b.conds.push(format!("{a}.id = {}", bound.expr)),
                None => self.bind(
                    v,
                    VarB {
                        expr: format!("{a}.id"),
                        kind: VarKind::Prop(a.to_string()),
                    },
                ),
            }
        }
    }
}

fn render_block(b: &Block, backend: Backend) -> String {
    let mut s = String::new();
    if !b.from.is_empty() {
        s.push_str("FROM ");
        // PostgreSQL binds a join tighter than a comma: `a, b LEFT JOIN
        // c ON …a…` cannot see `a`. SQLite reads a CROSS JOIN as a fixed
        // join order, so it keeps the comma.
        let sep = match backend {
            Backend::Postgres if !b.joins.is_empty() => " CROSS JOIN ",
            _ => ", ",
        };
        s.push_str(&b.from.join(sep));
        for j in &b.joins {
            s.push(' ');
            s.push_str(j);
        }
    }
    if !b.conds.is_empty() {
        s.push_str(" WHERE ");
        s.push_str(&b.conds.join(" AND "));
    }
    s
}

/// Whether `SOMNUS_TRACE_SQL` asks for each statement on standard error
/// (read once).
fn trace_sql() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("SOMNUS_TRACE_SQL").is_some())
}

/// The plan [`Planner::compile`] gives, when it is kept already: found
/// without reading the memory (see `cache`). `None`: it must be planned,
/// which may read it. Unlike [`Planner::compile`]'s, its
/// [`Compiled::ground_later`] is empty: should it answer nothing, the
/// caller checks the identity matchers of `where_` ([`ground`]).
pub fn kept(backend: Backend, where_: &[WhereItem], sel: &Selection<'_>) -> Option<Compiled> {
    if where_.iter().any(|w| matches!(w, WhereItem::Union(_))) {
        return None;
    }
    cache::kept(backend, where_, sel)
}

/// Runs a compiled query, returning one binding row per distinct solution.
pub fn run(conn: Db<'_>, c: &Compiled, nvars: usize) -> KipResult<Vec<Vec<Binding>>> {
    Ok(run_raw(conn, c, nvars, 0)?
        .into_iter()
        .map(|(keys, _)| keys)
        .collect())
}

/// Rows of `nkeys` bindings followed by `ncounts` integers.
pub fn run_raw(
    conn: Db<'_>,
    c: &Compiled,
    nkeys: usize,
    ncounts: usize,
) -> KipResult<Vec<(Vec<Binding>, Vec<i64>)>> {
    let rows = answer(conn, c)?;
    let mut out = Vec::with_capacity(rows.len());
    for mut r in rows {
        let keys = bindings(&mut r, nkeys);
        let mut counts = Vec::with_capacity(ncounts);
        for i in 0..ncounts {
            counts.push(r.i64(nkeys + i)?);
        }
        out.push((keys, counts));
    }
    Ok(out)
}

/// Runs a compiled query: one binding row per distinct solution, each with
/// the values it carries ([`Compiled::carried`], in that order).
pub fn run_carrying(
    conn: Db<'_>,
    c: &Compiled,
    nvars: usize,
) -> KipResult<Vec<(Vec<Binding>, Vec<Val>)>> {
    let rows = answer(conn, c)?;
    let backend = conn.backend();
    let n: usize = c.carried.iter().map(|(_, w)| w.width(backend)).sum();
    let mut out = Vec::with_capacity(rows.len());
    for mut r in rows {
        let keys = bindings(&mut r, nvars);
        let carried = r.0.split_off(r.0.len().saturating_sub(n));
        out.push((keys, carried));
    }
    Ok(out)
}

/// The rows of a compiled query (`KIP_3002` when it answers nothing and
/// an identity matcher it deferred names nothing).
fn answer(conn: Db<'_>, c: &Compiled) -> KipResult<Vec<crate::store::db::Row>> {
    if trace_sql() {
        eprintln!("SQL: {}\nPARAMS: {:?}", c.sql, c.params);
    }
    let mut rows = conn.query(&c.sql, &c.params)?;
    if rows.is_empty() {
        ground(conn, &c.ground_later)?;
    }
    if c.sort_after > 0 {
        // as the statement would have: a missing one first, then ids
        // ascending, then texts (a predicate) by code point
        fn key(v: &Val) -> (u8, i64, &str) {
            match v {
                Val::Int(n) => (1, *n, ""),
                Val::Text(t) => (2, 0, t.as_str()),
                _ => (0, 0, ""),
            }
        }
        rows.sort_by(|a, b| {
            a.0.iter()
                .zip(&b.0)
                .take(c.sort_after)
                .map(|(x, y)| key(x).cmp(&key(y)))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    Ok(rows)
}

/// The first `n` columns of a row as bindings.
fn bindings(r: &mut crate::store::db::Row, n: usize) -> Vec<Binding> {
    (0..n)
        .map(|i| match r.0.get_mut(i) {
            Some(Val::Int(n)) => Binding::Elem(*n),
            Some(Val::Text(s)) => Binding::Pred(std::mem::take(s)),
            _ => Binding::Null,
        })
        .collect()
}
