//! Plans kept by shape: a command's `WHERE` and selection with their
//! literals lifted out, planned once, and the statement reused for every
//! command of that shape with the literals bound as parameters.
//!
//! `FIND(?n) WHERE { ?n {type: "Entity", name: "e17"} }` and the same with
//! `"e42"` have one shape. The first is planned as usual; the statement is
//! kept with, for each of its parameters, either a constant or which
//! literal of the command fills it. The second is not planned: the kept
//! statement is bound with its own literals.
//!
//! Which literals may be lifted is not assumed; it is found out, once per
//! shape, by planning the command again with every literal replaced by a
//! stand-in value nothing else could produce, twice (two different sets).
//! A literal is lifted only when:
//! - the three statements are the same text, with the same columns kept;
//! - each of its stand-ins appears, unchanged, as a whole parameter (so
//!   its value reaches the statement only there, in a form the cache can
//!   give again: a text, an integer, a real, a JSON number);
//! - every other parameter is the same in all three.
//!
//! A literal that fails (a type written into the statement, an id parsed
//! into a number, a pattern built from a text) stays in the shape: each of
//! its values gets a plan of its own. A statement whose planning read the
//! memory (a walk from several starts, written into the statement) is
//! never kept: it holds what the memory was, not only what the command
//! says. Every other statement depends on the command alone, so no write
//! to the memory invalidates a plan; the tables' layout is fixed for the
//! life of the process (migrations run when a memory is opened, before
//! any command).
//!
//! The plans are kept per thread, at most [`MAX_SHAPES`] shapes of at
//! most [`MAX_VARIANTS`] plans each (a full table is emptied and starts
//! again). `SOMNUS_PLAN_CACHE=off` plans every command afresh;
//! `SOMNUS_PLAN_CACHE=verify` plans every command afresh too and checks
//! that a kept plan gives the same statement and parameters, failing the
//! command (`KIP_4003`) when it does not (for tests).

use super::{Compiled, Planner, Selection};
use crate::kip::ast::*;
use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store::db::{Backend, Val};
use rustc_hash::FxHashMap as HashMap;
use serde_json::{Number, Value};
use std::cell::RefCell;

/// Shapes kept per thread.
pub const MAX_SHAPES: usize = 512;
/// Plans kept per shape (one per value of the literals left in it).
pub const MAX_VARIANTS: usize = 64;
/// Literals lifted from one command at most; a command with more is
/// planned afresh each time.
pub const MAX_LITERALS: usize = 64;

/// A literal of the command, in the order the shape is read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lit<'a> {
    Str(&'a str),
    Int(i64),
    Real(f64),
}

/// How a lifted literal fills a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    Text,
    Int,
    Real,
    Json,
}

impl Form {
    fn make(self, l: Lit<'_>) -> Option<Val> {
        Some(match (self, l) {
            (Form::Text, Lit::Str(s)) => Val::Text(s.to_string()),
            (Form::Int, Lit::Int(n)) => Val::Int(n),
            (Form::Real, Lit::Real(f)) => Val::Real(f),
            (Form::Json, Lit::Int(n)) => Val::Json(Value::Number(n.into())),
            (Form::Json, Lit::Real(f)) => Val::Json(Value::Number(Number::from_f64(f)?)),
            (Form::Json, Lit::Str(s)) => Val::Json(Value::String(s.to_string())),
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
enum Param {
    Const(Val),
    Lit(usize, Form),
}

/// A kept plan: what [`Compiled`] holds, its parameters by origin.
#[derive(Debug)]
struct Template {
    /// `None`: no branch can contribute a row.
    plan: Option<Kept>,
}

#[derive(Debug)]
struct Kept {
    sql: std::rc::Rc<str>,
    params: Vec<Param>,
    unique: bool,
    carried: Vec<(usize, super::Carry)>,
    sort_after: usize,
}

impl Template {
    fn instantiate(&self, lits: &[Lit<'_>]) -> Option<Option<Compiled>> {
        let Some(Kept {
            sql,
            params,
            unique,
            carried,
            sort_after,
        }) = &self.plan
        else {
            return Some(None);
        };
        let mut out = Vec::with_capacity(params.len());
        for p in params {
            out.push(match p {
                Param::Const(v) => v.clone(),
                Param::Lit(i, f) => f.make(*lits.get(*i)?)?,
            });
        }
        Some(Some(Compiled {
            sql: sql.clone(),
            params: out,
            unique: *unique,
            ground_later: vec![],
            carried: carried.clone(),
            sort_after: *sort_after,
        }))
    }
}

enum Known {
    Never,
    Lifted(Vec<bool>),
    /// A kept plan, bound (`None`: it could not be bound to these literals).
    Plan(Option<Option<Compiled>>),
}

struct ShapeInfo {
    /// Which literals are lifted; `None`: the shape is never kept.
    lifted: Option<Vec<bool>>,
    /// By the values of the literals left in the shape.
    plans: HashMap<String, Template>,
}

#[derive(Default)]
struct Cache {
    shapes: HashMap<String, ShapeInfo>,
    hits: u64,
    misses: u64,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    On,
    Off,
    Verify,
}

fn mode() -> Mode {
    static MODE: std::sync::OnceLock<Mode> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("SOMNUS_PLAN_CACHE").as_deref() {
        Ok("off") | Ok("0") => Mode::Off,
        Ok("verify") => Mode::Verify,
        _ => Mode::On,
    })
}

/// This thread's plans reused and planned so far: (hits, misses).
pub fn stats() -> (u64, u64) {
    CACHE.with(|c| {
        let c = c.borrow();
        (c.hits, c.misses)
    })
}

/// Empties this thread's plans.
pub fn clear() {
    CACHE.with(|c| c.borrow_mut().shapes.clear());
}

/// A command's shape and its literals, in the order the shape is read
/// (`None`: more than [`MAX_LITERALS`]).
fn signature<'a>(
    backend: Backend,
    where_: &'a [WhereItem],
    sel: &Selection<'_>,
) -> Option<(String, Vec<Lit<'a>>)> {
    let mut shape = String::with_capacity(128);
    let mut lits = Vec::new();
    sig_selection(backend, sel, &mut shape);
    sig_items(where_, &mut shape, &mut lits);
    (lits.len() <= MAX_LITERALS).then_some((shape, lits))
}

/// The kept plan of a command, bound to its literals, when one is kept
/// and gives a statement: found without reading the memory. `None`: it
/// must be planned ([`compiled`]), which may read it.
pub(super) fn kept(
    backend: Backend,
    where_: &[WhereItem],
    sel: &Selection<'_>,
) -> Option<Compiled> {
    if mode() != Mode::On || sel.after.is_some() {
        return None;
    }
    let (shape, lits) = signature(backend, where_, sel)?;
    let c = CACHE.with(|c| {
        let c = c.borrow();
        let s = c.shapes.get(&shape)?;
        let lifted = s.lifted.as_ref()?;
        s.plans.get(&fixed_key(&lits, lifted))?.instantiate(&lits)?
    })?;
    CACHE.with(|x| x.borrow_mut().hits += 1);
    Some(c)
}

/// [`Planner::compile_grounded`], through the kept plans.
pub(super) fn compiled(
    mut planner: Planner<'_>,
    where_: &[WhereItem],
    sel: &Selection<'_>,
) -> KipResult<Option<Compiled>> {
    let mode = mode();
    // a page that starts after a row binds that row: planned each time
    if mode == Mode::Off || sel.after.is_some() {
        return planner.compile_grounded(where_, sel);
    }
    let Some((shape, lits)) = signature(planner.backend, where_, sel) else {
        return planner.compile_grounded(where_, sel);
    };
    // (what is known of the shape; on a hit, the statement bound already)
    let known = CACHE.with(|c| {
        let c = c.borrow();
        c.shapes.get(&shape).map(|s| match &s.lifted {
            None => Known::Never,
            Some(l) => match s.plans.get(&fixed_key(&lits, l)) {
                Some(t) => Known::Plan(t.instantiate(&lits)),
                None => Known::Lifted(l.clone()),
            },
        })
    });
    let conn = planner.conn;
    match known {
        Some(Known::Never) | Some(Known::Plan(None)) => planner.compile_grounded(where_, sel),
        Some(Known::Plan(Some(c))) => {
            CACHE.with(|x| x.borrow_mut().hits += 1);
            if mode == Mode::Verify {
                let fresh = planner.compile_grounded(where_, sel)?;
                if !same(&fresh, &c) {
                    return Err(KipError::new(
                        ErrorCode::InternalError,
                        format!(
                            "a kept plan differs from planning afresh: kept {:?}, fresh {:?}",
                            c.as_ref().map(|c| (&c.sql, &c.params)),
                            fresh.as_ref().map(|c| (&c.sql, &c.params))
                        ),
                    ));
                }
            }
            Ok(c)
        }
        // a new shape, or new values of the literals a shape keeps
        known => {
            CACHE.with(|x| x.borrow_mut().misses += 1);
            let real = planner.compile_grounded(where_, sel)?;
            if planner.read_db.get() {
                remember(shape, None, None, &lits);
                return Ok(real);
            }
            let (lifted, t) = match known {
                Some(Known::Lifted(lifted)) => {
                    let t = template(conn, where_, sel, &real, &lits, &lifted);
                    (Some(lifted), t)
                }
                _ => learn(conn, where_, sel, &real, &lits),
            };
            remember(shape, lifted, t, &lits);
            Ok(real)
        }
    }
}

/// Which literals of a new shape can be lifted, and its template: all of
/// them if they can, else those that can one at a time, if they can
/// together (`None`: the shape is never kept).
fn learn(
    conn: crate::store::db::Db<'_>,
    where_: &[WhereItem],
    sel: &Selection<'_>,
    real: &Option<Compiled>,
    lits: &[Lit<'_>],
) -> (Option<Vec<bool>>, Option<Template>) {
    let all = vec![true; lits.len()];
    if let Some(t) = template(conn, where_, sel, real, lits, &all) {
        return (Some(all), Some(t));
    }
    let lifted: Vec<bool> = (0..lits.len())
        .map(|i| {
            let one: Vec<bool> = (0..lits.len()).map(|j| j == i).collect();
            template(conn, where_, sel, real, lits, &one).is_some()
        })
        .collect();
    match template(conn, where_, sel, real, lits, &lifted) {
        Some(t) => (Some(lifted), Some(t)),
        None => (None, None),
    }
}

fn same(a: &Option<Compiled>, b: &Option<Compiled>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.sql == b.sql
                && a.params == b.params
                && a.unique == b.unique
                && a.carried == b.carried
                && a.sort_after == b.sort_after
        }
        _ => false,
    }
}

fn remember(shape: String, lifted: Option<Vec<bool>>, t: Option<Template>, lits: &[Lit<'_>]) {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.shapes.len() >= MAX_SHAPES && !c.shapes.contains_key(&shape) {
            c.shapes.clear();
        }
        let info = c.shapes.entry(shape).or_insert_with(|| ShapeInfo {
            lifted: lifted.clone(),
            plans: HashMap::default(),
        });
        if lifted.is_none() {
            info.lifted = None;
            info.plans.clear();
            return;
        }
        if let (Some(t), Some(l)) = (t, &info.lifted) {
            let key = fixed_key(lits, l);
            if info.plans.len() >= MAX_VARIANTS {
                info.plans.clear();
            }
            info.plans.insert(key, t);
        }
    });
}

/// The values of the literals the shape keeps.
fn fixed_key(lits: &[Lit<'_>], lifted: &[bool]) -> String {
    let mut k = String::new();
    for (l, up) in lits.iter().zip(lifted) {
        if *up {
            continue;
        }
        match l {
            Lit::Str(s) => {
                k.push('s');
                num(&mut k, s.len() as i64);
                k.push(':');
                k.push_str(s);
            }
            Lit::Int(n) => {
                k.push('i');
                num(&mut k, *n);
                k.push(';');
            }
            Lit::Real(f) => {
                k.push('r');
                num(&mut k, f.to_bits() as i64);
                k.push(';');
            }
        }
    }
    k
}

/// A stand-in for literal `i` of `set` (0 or 1) of the same kind.
fn stand_in(l: Lit<'_>, i: usize, set: usize) -> (Option<String>, Lit<'static>) {
    match l {
        Lit::Str(_) => {
            let s = if set == 0 {
                format!("\u{1}somnus-a{i}\u{1}")
            } else {
                format!("\u{2}somnus-b{i}\u{2}")
            };
            (Some(s), Lit::Str(""))
        }
        Lit::Int(_) => {
            let n = if set == 0 {
                90_000_000_017 + i as i64
            } else {
                -80_000_000_019 - i as i64
            };
            (None, Lit::Int(n))
        }
        Lit::Real(_) => {
            let f = if set == 0 {
                12_345.678_125 + i as f64
            } else {
                -54_321.234_375 - i as f64
            };
            (None, Lit::Real(f))
        }
    }
}

/// The template for the literals `lifted`, when planning with stand-ins
/// shows each of them reaches the statement only as a whole parameter.
fn template(
    conn: crate::store::db::Db<'_>,
    where_: &[WhereItem],
    sel: &Selection<'_>,
    real: &Option<Compiled>,
    lits: &[Lit<'_>],
    lifted: &[bool],
) -> Option<Template> {
    let mut sets = Vec::with_capacity(2);
    for set in 0..2 {
        let mut subs: Vec<Option<(Option<String>, Lit<'static>)>> = Vec::new();
        for (i, l) in lits.iter().enumerate() {
            subs.push(lifted[i].then(|| stand_in(*l, i, set)));
        }
        let mut items = where_.to_vec();
        let mut k = 0;
        subst_items(&mut items, &mut k, &subs);
        if k != lits.len() {
            return None;
        }
        let mut p = Planner::new(conn);
        let plan = p.compile_grounded(&items, sel).ok()?;
        if p.read_db.get() {
            return None;
        }
        sets.push((plan, subs));
    }
    let (a, subs_a) = &sets[0];
    let (b, subs_b) = &sets[1];
    let (real, a, b) = match (real, a, b) {
        (None, None, None) => return Some(Template { plan: None }),
        (Some(r), Some(a), Some(b)) => (r, a, b),
        _ => return None,
    };
    if real.sql != a.sql
        || real.sql != b.sql
        || real.params.len() != a.params.len()
        || real.params.len() != b.params.len()
        || real.unique != a.unique
        || real.unique != b.unique
        || real.carried != a.carried
        || real.carried != b.carried
        || real.sort_after != a.sort_after
        || real.sort_after != b.sort_after
    {
        return None;
    }
    let mut used = vec![false; lits.len()];
    let mut params = Vec::with_capacity(real.params.len());
    for j in 0..real.params.len() {
        let (r, pa, pb) = (&real.params[j], &a.params[j], &b.params[j]);
        let mut slot = None;
        for (i, sub) in subs_a.iter().enumerate() {
            let Some(sa) = sub else { continue };
            let Some(form) = form_of(pa, sa) else {
                continue;
            };
            let sb = subs_b[i].as_ref()?;
            if form_of(pb, sb) != Some(form) || form.make(lits[i]).as_ref() != Some(r) {
                return None;
            }
            slot = Some(Param::Lit(i, form));
            used[i] = true;
            break;
        }
        params.push(match slot {
            Some(p) => p,
            None if pa == r && pb == r && !holds_stand_in(r) => Param::Const(r.clone()),
            None => return None,
        });
    }
    if (0..lits.len()).any(|i| lifted[i] && !used[i]) {
        return None;
    }
    Some(Template {
        plan: Some(Kept {
            sql: real.sql.clone(),
            params,
            unique: real.unique,
            carried: real.carried.clone(),
            sort_after: real.sort_after,
        }),
    })
}

/// How `v` holds the stand-in `s`, if it holds it whole.
fn form_of(v: &Val, s: &(Option<String>, Lit<'static>)) -> Option<Form> {
    match (v, s) {
        (Val::Text(t), (Some(x), _)) if t == x => Some(Form::Text),
        (Val::Json(Value::String(t)), (Some(x), _)) if t == x => Some(Form::Json),
        (Val::Int(n), (None, Lit::Int(x))) if n == x => Some(Form::Int),
        (Val::Real(f), (None, Lit::Real(x))) if f.to_bits() == x.to_bits() => Some(Form::Real),
        (Val::Json(Value::Number(n)), (None, Lit::Int(x))) if n.as_i64() == Some(*x) => {
            Some(Form::Json)
        }
        (Val::Json(Value::Number(n)), (None, Lit::Real(x)))
            if !n.is_i64() && !n.is_u64() && n.as_f64().map(f64::to_bits) == Some(x.to_bits()) =>
        {
            Some(Form::Json)
        }
        _ => None,
    }
}

/// Whether a parameter holds a stand-in in part (a pattern built from a
/// text): never a constant.
fn holds_stand_in(v: &Val) -> bool {
    let t = match v {
        Val::Text(t) | Val::JsonText(t) => t.as_str(),
        Val::Json(j) => return holds_stand_in(&Val::JsonText(j.to_string())),
        _ => return false,
    };
    t.contains("\u{1}somnus-a") || t.contains("\u{2}somnus-b")
}

// ------------------------------------------------------------ the shape

fn num(s: &mut String, n: i64) {
    s.push_str(itoa::Buffer::new().format(n));
}

fn name(s: &mut String, n: &str) {
    num(s, n.len() as i64);
    s.push(':');
    s.push_str(n);
}

fn path(s: &mut String, p: &DotPath) {
    name(s, &p.var);
    s.push('[');
    num(s, p.path.len() as i64);
    for seg in &p.path {
        name(s, seg);
    }
    s.push(']');
}

fn sig_selection(backend: Backend, sel: &Selection<'_>, s: &mut String) {
    s.push(match backend {
        Backend::Sqlite => 'S',
        Backend::Postgres => 'G',
    });
    num(s, sel.vars.len() as i64);
    for v in &sel.vars {
        name(s, v);
    }
    s.push('o');
    num(s, sel.order.len() as i64);
    for (p, desc) in &sel.order {
        path(s, p);
        s.push(if *desc { 'd' } else { 'a' });
    }
    s.push('l');
    num(s, sel.limit.map_or(-1, |l| l.min(i64::MAX as u64) as i64));
    s.push('f');
    num(s, sel.offset.min(i64::MAX as u64) as i64);
    s.push(if sel.all_rows { 'A' } else { 'a' });
    for (i, c) in &sel.carry {
        s.push('c');
        num(s, *i as i64);
        s.push(match c {
            super::Carry::Labels => 'l',
            super::Carry::Concept => 'c',
        });
    }
    s.push('|');
}

fn sig_items<'a>(items: &'a [WhereItem], s: &mut String, lits: &mut Vec<Lit<'a>>) {
    s.push('{');
    num(s, items.len() as i64);
    for it in items {
        match it {
            WhereItem::Concept(c) => {
                s.push('C');
                opt_name(s, c.var.as_deref());
                sig_matcher(&c.matcher, s, lits);
            }
            WhereItem::Prop(p) => {
                s.push('P');
                opt_name(s, p.var.as_deref());
                sig_pattern(&p.pattern, s, lits);
            }
            WhereItem::Filter(e) => {
                s.push('F');
                sig_expr(e, s, lits);
            }
            WhereItem::Not(v) => {
                s.push('N');
                sig_items(v, s, lits);
            }
            WhereItem::Optional(v) => {
                s.push('O');
                sig_items(v, s, lits);
            }
            WhereItem::Union(v) => {
                s.push('U');
                sig_items(v, s, lits);
            }
        }
    }
    s.push('}');
}

fn opt_name(s: &mut String, n: Option<&str>) {
    match n {
        Some(n) => name(s, n),
        None => s.push('-'),
    }
}

fn sig_str<'a>(v: &'a Option<String>, tag: char, s: &mut String, lits: &mut Vec<Lit<'a>>) {
    match v {
        Some(x) => {
            s.push(tag);
            lits.push(Lit::Str(x));
        }
        None => s.push('-'),
    }
}

fn sig_matcher<'a>(m: &'a ConceptMatcher, s: &mut String, lits: &mut Vec<Lit<'a>>) {
    s.push('m');
    sig_str(&m.id, 'i', s, lits);
    sig_str(&m.ty, 't', s, lits);
    sig_str(&m.name, 'n', s, lits);
}

fn sig_pattern<'a>(p: &'a PropPattern, s: &mut String, lits: &mut Vec<Lit<'a>>) {
    match p {
        PropPattern::Id(x) => {
            s.push('I');
            lits.push(Lit::Str(x));
        }
        PropPattern::Triple {
            subject,
            predicate,
            object,
        } => {
            s.push('T');
            sig_endpoint(subject, s, lits);
            match predicate {
                PredSpec::Var(v) => {
                    s.push('v');
                    name(s, v);
                }
                PredSpec::Alts(a) => {
                    s.push('a');
                    num(s, a.len() as i64);
                    for x in a {
                        lits.push(Lit::Str(x));
                    }
                }
                PredSpec::Hop {
                    predicate,
                    min,
                    max,
                } => {
                    s.push('h');
                    num(s, i64::from(*min));
                    s.push(',');
                    num(s, max.map_or(-1, i64::from));
                    lits.push(Lit::Str(predicate));
                }
            }
            sig_endpoint(object, s, lits);
        }
    }
}

fn sig_endpoint<'a>(e: &'a Endpoint, s: &mut String, lits: &mut Vec<Lit<'a>>) {
    match e {
        Endpoint::Var(v) => {
            s.push('v');
            name(s, v);
        }
        Endpoint::Concept(m) => sig_matcher(m, s, lits),
        Endpoint::Prop(p) => {
            s.push('p');
            sig_pattern(p, s, lits);
        }
    }
}

fn sig_expr<'a>(e: &'a Expr, s: &mut String, lits: &mut Vec<Lit<'a>>) {
    match e {
        Expr::Or(a, b) | Expr::And(a, b) => {
            s.push(if matches!(e, Expr::Or(..)) { '|' } else { '&' });
            sig_expr(a, s, lits);
            sig_expr(b, s, lits);
        }
        Expr::Not(a) => {
            s.push('!');
            sig_expr(a, s, lits);
        }
        Expr::Cmp(a, op, b) => {
            s.push('c');
            s.push((b'0' + *op as u8) as char);
            sig_operand(a, s, lits);
            sig_operand(b, s, lits);
        }
        Expr::In(a, list) => {
            s.push('i');
            num(s, list.len() as i64);
            sig_operand(a, s, lits);
            for v in list {
                sig_value(v, s, lits);
            }
        }
        Expr::IsNull(a) => {
            s.push('0');
            sig_operand(a, s, lits);
        }
        Expr::IsNotNull(a) => {
            s.push('1');
            sig_operand(a, s, lits);
        }
        Expr::Str(f, a, b) => {
            s.push('s');
            s.push((b'0' + *f as u8) as char);
            sig_operand(a, s, lits);
            sig_operand(b, s, lits);
        }
    }
}

fn sig_operand<'a>(o: &'a Operand, s: &mut String, lits: &mut Vec<Lit<'a>>) {
    match o {
        Operand::Path(p) => {
            s.push('p');
            path(s, p);
        }
        Operand::Lit(v) => sig_value(v, s, lits),
    }
}

/// A literal value: a string or a number is lifted (its kind stays in the
/// shape); anything else is written into the shape.
fn sig_value<'a>(v: &'a Value, s: &mut String, lits: &mut Vec<Lit<'a>>) {
    match lifted_value(v) {
        Some(l) => {
            s.push(match l {
                Lit::Str(_) => 'S',
                Lit::Int(_) => 'I',
                Lit::Real(_) => 'R',
            });
            lits.push(l);
        }
        None => {
            let t = v.to_string();
            s.push('j');
            num(s, t.len() as i64);
            s.push(':');
            s.push_str(&t);
        }
    }
}

fn lifted_value(v: &Value) -> Option<Lit<'_>> {
    match v {
        Value::String(x) => Some(Lit::Str(x)),
        Value::Number(n) if n.is_i64() => n.as_i64().map(Lit::Int),
        Value::Number(n) if n.is_f64() => n.as_f64().map(Lit::Real),
        _ => None,
    }
}

// ------------------------------------------------- stand-ins, in order

/// Replaces, in the order [`sig_items`] reads them, the literals that have
/// a stand-in; `k` counts the literals passed.
type Subs = [Option<(Option<String>, Lit<'static>)>];

fn take(k: &mut usize, subs: &Subs) -> Option<(Option<String>, Lit<'static>)> {
    let i = *k;
    *k += 1;
    subs.get(i).cloned().flatten()
}

fn subst_items(items: &mut [WhereItem], k: &mut usize, subs: &Subs) {
    for it in items {
        match it {
            WhereItem::Concept(c) => subst_matcher(&mut c.matcher, k, subs),
            WhereItem::Prop(p) => subst_pattern(&mut p.pattern, k, subs),
            WhereItem::Filter(e) => subst_expr(e, k, subs),
            WhereItem::Not(v) | WhereItem::Optional(v) | WhereItem::Union(v) => {
                subst_items(v, k, subs)
            }
        }
    }
}

fn subst_str(v: &mut String, k: &mut usize, subs: &Subs) {
    if let Some((Some(s), _)) = take(k, subs) {
        *v = s;
    }
}

fn subst_opt(v: &mut Option<String>, k: &mut usize, subs: &Subs) {
    if let Some(x) = v {
        subst_str(x, k, subs);
    }
}

fn subst_matcher(m: &mut ConceptMatcher, k: &mut usize, subs: &Subs) {
    subst_opt(&mut m.id, k, subs);
    subst_opt(&mut m.ty, k, subs);
    subst_opt(&mut m.name, k, subs);
}

fn subst_pattern(p: &mut PropPattern, k: &mut usize, subs: &Subs) {
    match p {
        PropPattern::Id(x) => subst_str(x, k, subs),
        PropPattern::Triple {
            subject,
            predicate,
            object,
        } => {
            subst_endpoint(subject, k, subs);
            match predicate {
                PredSpec::Var(_) => {}
                PredSpec::Alts(a) => {
                    for x in a {
                        subst_str(x, k, subs);
                    }
                }
                PredSpec::Hop { predicate, .. } => subst_str(predicate, k, subs),
            }
            subst_endpoint(object, k, subs);
        }
    }
}

fn subst_endpoint(e: &mut Endpoint, k: &mut usize, subs: &Subs) {
    match e {
        Endpoint::Var(_) => {}
        Endpoint::Concept(m) => subst_matcher(m, k, subs),
        Endpoint::Prop(p) => subst_pattern(p, k, subs),
    }
}

fn subst_expr(e: &mut Expr, k: &mut usize, subs: &Subs) {
    match e {
        Expr::Or(a, b) | Expr::And(a, b) => {
            subst_expr(a, k, subs);
            subst_expr(b, k, subs);
        }
        Expr::Not(a) => subst_expr(a, k, subs),
        Expr::Cmp(a, _, b) | Expr::Str(_, a, b) => {
            subst_operand(a, k, subs);
            subst_operand(b, k, subs);
        }
        Expr::In(a, list) => {
            subst_operand(a, k, subs);
            for v in list {
                subst_value(v, k, subs);
            }
        }
        Expr::IsNull(a) | Expr::IsNotNull(a) => subst_operand(a, k, subs),
    }
}

fn subst_operand(o: &mut Operand, k: &mut usize, subs: &Subs) {
    if let Operand::Lit(v) = o {
        subst_value(v, k, subs);
    }
}

fn subst_value(v: &mut Value, k: &mut usize, subs: &Subs) {
    if lifted_value(v).is_none() {
        return;
    }
    match take(k, subs) {
        Some((Some(s), _)) => *v = Value::String(s),
        Some((None, Lit::Int(n))) => *v = Value::Number(n.into()),
        Some((None, Lit::Real(f))) => {
            if let Some(n) = Number::from_f64(f) {
                *v = Value::Number(n);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_of(text: &str) -> (String, usize) {
        let Ok(Command::Find(q)) = crate::kip::parse(text, &Default::default()) else {
            panic!("{text}")
        };
        let mut s = String::new();
        let mut lits = Vec::new();
        sig_items(&q.where_, &mut s, &mut lits);
        // the stand-ins visit the same literals in the same order
        let mut items = q.where_.clone();
        let mut k = 0;
        subst_items(&mut items, &mut k, &vec![None; lits.len()]);
        assert_eq!(k, lits.len(), "{text}");
        (s, lits.len())
    }

    #[test]
    fn literals_leave_the_shape_and_structure_stays() {
        let (a, n) = shape_of(r#"FIND(?n) WHERE { ?n {type: "Entity", name: "e1"} }"#);
        let (b, _) = shape_of(r#"FIND(?n) WHERE { ?n {type: "Person", name: "Mira"} }"#);
        assert_eq!(n, 2);
        assert_eq!(a, b);
        let (c, _) = shape_of(r#"FIND(?n) WHERE { ?n {type: "Entity"} }"#);
        assert_ne!(a, c);
        let (d, m) = shape_of(
            r#"FIND(?n) WHERE { ?n {type: "E"} FILTER(?n.attributes.x >= 3 && IN(?n.name, ["a", "b", true])) NOT { (?n, "p", ?m) } }"#,
        );
        let (e, _) = shape_of(
            r#"FIND(?n) WHERE { ?n {type: "E"} FILTER(?n.attributes.x >= 3.5 && IN(?n.name, ["a", "b", true])) NOT { (?n, "p", ?m) } }"#,
        );
        // an integer and a fraction are two kinds; `true` stays in the shape
        assert_ne!(d, e);
        assert_eq!(m, 5);
        let (f, _) = shape_of(
            r#"FIND(?n) WHERE { ?n {type: "E"} FILTER(?n.attributes.x >= 3 && IN(?n.name, ["a", "b", false])) NOT { (?n, "p", ?m) } }"#,
        );
        assert_ne!(d, f);
    }
}
