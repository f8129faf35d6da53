//! `FILTER` expressions and `ORDER BY` keys: the SQL value of `?var.path`
//! and how values compare.
//!
//! KQL compares values the way SQLite does, on either database: a missing
//! value is `NULL` (false in any comparison but `==`/`!=`, which treat it
//! as `null`); numbers, with booleans as 0 and 1, sort before text; text
//! compares by code point. On SQLite that is SQLite's own comparison. On
//! PostgreSQL a comparison of two texts or two integers is native (and can
//! use an index); any other pair is compared as `jsonb` by `kip_cmp`, and
//! sort keys order by `kip_class`, `kip_num` and `kip_text` (functions the
//! PostgreSQL schema defines).

use super::{Planner, VarKind};
use crate::kip::ast::*;
use crate::kip::{KipError, KipResult};
use crate::store::db::{Backend, Val};
use serde_json::Value;

/// What PostgreSQL knows an operand's SQL type to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Text,
    Int,
    Json,
    /// A bare `NULL` (a variable no branch binds here).
    Null,
}

/// An operand: its SQL and its type.
struct Operand {
    sql: String,
    ty: Ty,
    /// The integer a literal operand is (PostgreSQL), so a `jsonb` number
    /// can be compared with it as `jsonb`, no cast per row.
    int: Option<i64>,
    /// The number a literal operand is (PostgreSQL).
    num: Option<serde_json::Number>,
    /// For a value read from a document column (PostgreSQL): the column
    /// and the keys of its path, for [`Planner::doc_compare`].
    doc: Option<(String, Vec<String>)>,
    /// The same value with a JSON `null` kept as it is (PostgreSQL).
    raw: Option<String>,
}

impl Operand {
    fn new(sql: impl Into<String>, ty: Ty) -> Operand {
        Operand {
            sql: sql.into(),
            ty,
            int: None,
            num: None,
            doc: None,
            raw: None,
        }
    }

    /// As `jsonb` (PostgreSQL).
    fn json(&self) -> String {
        match self.ty {
            Ty::Json => self.sql.clone(),
            Ty::Null => "NULL::jsonb".into(),
            Ty::Text | Ty::Int => format!("to_jsonb({})", self.sql),
        }
    }

    /// As text, as SQLite turns a value into text (PostgreSQL).
    fn text(&self) -> String {
        match self.ty {
            Ty::Text => self.sql.clone(),
            Ty::Int => format!("({})::text", self.sql),
            Ty::Json => format!("kip_text({})", self.sql),
            Ty::Null => "NULL::text".into(),
        }
    }
}

/// A `jsonb` value against an integer or a text (PostgreSQL): when the
/// value is a number (or a string) the two compare natively, as `kip_cmp`
/// would compare them but without a function call per row. The `jsonb`
/// type that allows it, and both sides in their native types: a number
/// against an integer literal compares as `jsonb` (numerically, exactly),
/// against another integer as `numeric`.
fn native(
    x: &Operand,
    y: &Operand,
    json_int: &mut impl FnMut(i64) -> String,
) -> Option<(&'static str, String, String)> {
    let literal = x.int.is_some() || y.int.is_some();
    let mut num = |o: &Operand| match (o.ty, o.int) {
        (Ty::Json, _) if literal => o.sql.clone(),
        (Ty::Json, _) => format!("({})::numeric", o.sql),
        (_, Some(n)) => json_int(n),
        _ => o.sql.clone(),
    };
    let text = |o: &Operand| match o.ty {
        Ty::Json => format!("({} #>> '{{}}') COLLATE \"C\"", o.sql),
        _ => format!("{} COLLATE \"C\"", o.sql),
    };
    match (x.ty, y.ty) {
        (Ty::Json, Ty::Int) | (Ty::Int, Ty::Json) => Some(("number", num(x), num(y))),
        (Ty::Json, Ty::Text) | (Ty::Text, Ty::Json) => Some(("string", text(x), text(y))),
        _ => None,
    }
}

/// The `jsonb` side of a pair [`native`] compares.
fn json_side<'a>(x: &'a Operand, y: &'a Operand) -> &'a str {
    if x.ty == Ty::Json { &x.sql } else { &y.sql }
}

impl Planner<'_> {
    /// The SQL value of `?var.path` for comparisons.
    pub fn field(&mut self, var: &str, path: &[String]) -> KipResult<String> {
        Ok(self.typed_field(var, path)?.sql)
    }

    /// A sort key: on PostgreSQL always `jsonb` (see [`Planner::sort_terms`],
    /// which reads a JSON `null` as missing itself).
    pub(super) fn sort_key(&mut self, var: &str, path: &[String]) -> KipResult<String> {
        let f = self.typed_field(var, path)?;
        Ok(match self.backend {
            Backend::Sqlite => f.sql,
            Backend::Postgres => f.raw.clone().unwrap_or_else(|| f.json()),
        })
    }

    /// The `ORDER BY` terms of a sort key column, `null` last.
    ///
    /// On PostgreSQL the key is one `jsonb` value whose own order is
    /// KQL's (SQLite's): a number as it is, a boolean as 0 or 1, and a
    /// string, array or object (after every number) as a one-element
    /// array of its text in hexadecimal UTF-8, so that it compares by code
    /// point whatever the database's collation. One key computed once per
    /// row sorts in a third of the time a key per rule would.
    pub(super) fn sort_terms(&self, k: &str, desc: bool) -> Vec<String> {
        let dir = if desc { "DESC" } else { "ASC" };
        match self.backend {
            Backend::Sqlite => vec![format!("({k} IS NULL)"), format!("{k} {dir}")],
            Backend::Postgres => {
                let text =
                    format!("jsonb_build_array(encode(convert_to(kip_text({k}), 'UTF8'), 'hex'))");
                // (a missing value or `null`: no case, so NULL)
                vec![format!(
                    "CASE jsonb_typeof({k}) WHEN 'number' THEN {k} \
                     WHEN 'boolean' THEN CASE WHEN {k} = 'true'::jsonb THEN '1'::jsonb ELSE '0'::jsonb END \
                     WHEN 'string' THEN {text} WHEN 'array' THEN {text} WHEN 'object' THEN {text} END {dir} NULLS LAST"
                )]
            }
        }
    }

    /// The aggregate taking a group's smallest sort key.
    pub(super) fn min_fn(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite => "MIN",
            Backend::Postgres => "kip_min",
        }
    }

    /// `LIMIT` meaning none (before an `OFFSET`).
    pub(super) fn no_limit(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite => "LIMIT -1",
            Backend::Postgres => "LIMIT ALL",
        }
    }

    fn typed_field(&mut self, var: &str, path: &[String]) -> KipResult<Operand> {
        let bound = match self.lookup(var).cloned() {
            Some(b) => b,
            None if self.merged.contains(var) => return Ok(Operand::new("NULL", Ty::Null)),
            None => {
                return Err(KipError::reference(format!(
                    "Unbound variable ?{var}: no clause in WHERE binds it"
                )));
            }
        };
        let (concept_alias, prop_alias, elem) = match &bound.kind {
            VarKind::Null => return Ok(Operand::new("NULL", Ty::Null)),
            VarKind::Pred => {
                return Ok(if path.is_empty() {
                    Operand::new(bound.expr, Ty::Text)
                } else {
                    Operand::new("NULL", Ty::Null)
                });
            }
            VarKind::Concept(a) => (Some(a.clone()), None, bound.expr.clone()),
            VarKind::Prop(a) => (None, Some(a.clone()), bound.expr.clone()),
            VarKind::Unknown => (None, None, bound.expr.clone()),
        };
        if path.is_empty() {
            return Ok(Operand::new(elem, Ty::Int));
        }
        let col = |col: &str, concept: bool, prop: bool| -> String {
            match (&concept_alias, &prop_alias) {
                (Some(a), _) if concept => format!("{a}.{col}"),
                (Some(_), _) => "NULL".into(),
                (_, Some(a)) if prop => format!("{a}.{col}"),
                (_, Some(_)) => "NULL".into(),
                _ => {
                    let c = if concept {
                        format!("(SELECT {col} FROM concepts WHERE id = {elem})")
                    } else {
                        "NULL".into()
                    };
                    let p = if prop {
                        format!("(SELECT {col} FROM propositions WHERE id = {elem})")
                    } else {
                        "NULL".into()
                    };
                    format!("COALESCE({c}, {p})")
                }
            }
        };
        let first = path[0].as_str();
        Ok(match first {
            "id" if path.len() == 1 => {
                let c = col("id", true, false);
                let p = col("'P:' || id || ':' || predicate", false, true);
                Operand::new(format!("COALESCE('C:' || {c}, {p})"), Ty::Text)
            }
            "type" | "name" if path.len() == 1 => Operand::new(col(first, true, false), Ty::Text),
            "predicate" if path.len() == 1 => Operand::new(col("predicate", false, true), Ty::Text),
            "subject" | "object" if path.len() == 1 => {
                let r = col(first, false, true);
                Operand::new(
                    format!(
                        "COALESCE((SELECT 'C:' || id FROM concepts WHERE id = {r}), (SELECT 'P:' || id || ':' || predicate FROM propositions WHERE id = {r}))"
                    ),
                    Ty::Text,
                )
            }
            "attributes" | "metadata" => {
                if first == "metadata" && path.len() == 2 && path[1] == "_version" {
                    Operand::new(col("version", true, true), Ty::Int)
                } else if first == "metadata" && path.len() == 2 && path[1] == "_updated_at" {
                    Operand::new(col("updated_at", true, true), Ty::Text)
                } else if path.len() == 1 {
                    Operand::new(col(first, true, true), Ty::Json)
                } else {
                    let c = col(first, true, true);
                    let keys: Vec<&str> = path[1..].iter().map(String::as_str).collect();
                    match self.backend {
                        Backend::Sqlite => {
                            let jp = self.backend.json_path(&keys);
                            let jp = self.p(jp);
                            Operand::new(format!("json_extract({c}, {jp})"), Ty::Json)
                        }
                        // a JSON null is a missing value, as SQLite reads
                        // it; one key is read with `->` (half the time of
                        // a `#>` path on a large object)
                        Backend::Postgres => {
                            let raw = if let [k] = keys[..] {
                                let k = self.ps(k);
                                format!("{c} -> ({k})::text")
                            } else {
                                let jp = self.backend.json_path(&keys);
                                let jp = self.p(jp);
                                format!("{c} #> ({jp})::text[]")
                            };
                            let mut o =
                                Operand::new(format!("NULLIF({raw}, 'null'::jsonb)"), Ty::Json);
                            o.doc = Some((c, keys.iter().map(|k| k.to_string()).collect()));
                            o.raw = Some(raw);
                            o
                        }
                    }
                }
            }
            _ => Operand::new("NULL", Ty::Null),
        })
    }

    fn operand(&mut self, o: &crate::kip::ast::Operand) -> KipResult<Operand> {
        match o {
            crate::kip::ast::Operand::Path(p) => self.typed_field(&p.var, &p.path),
            crate::kip::ast::Operand::Lit(v) => Ok(self.lit(v)),
        }
    }

    fn lit(&mut self, v: &Value) -> Operand {
        match (self.backend, v) {
            (_, Value::Null) => Operand::new("NULL", Ty::Null),
            (Backend::Sqlite, Value::Bool(b)) => Operand::new(self.p(Val::Int(*b as i64)), Ty::Int),
            (_, Value::Number(n)) if n.is_i64() => {
                let num = n.clone();
                let n = n.as_i64().unwrap_or(0);
                let mut o = Operand::new(self.p(Val::Int(n)), Ty::Int);
                o.int = Some(n);
                o.num = Some(num);
                o
            }
            (Backend::Sqlite, Value::Number(n)) => {
                Operand::new(self.p(Val::Real(n.as_f64().unwrap_or(0.0))), Ty::Json)
            }
            (_, Value::String(s)) => Operand::new(self.ps(s), Ty::Text),
            (Backend::Sqlite, other) => Operand::new(self.ps(&other.to_string()), Ty::Text),
            // booleans, fractions: compared as jsonb
            (Backend::Postgres, other) => {
                let mut o = Operand::new(self.p(Val::Json(other.clone())), Ty::Json);
                if let Value::Number(n) = other {
                    o.num = Some(n.clone());
                }
                o
            }
        }
    }

    /// `x op y`: native when both sides have one SQL type, else `kip_cmp`.
    fn compare(&mut self, x: &Operand, op: &str, y: &Operand) -> String {
        match self.backend {
            Backend::Sqlite => format!("COALESCE({} {op} {}, FALSE)", x.sql, y.sql),
            Backend::Postgres => match (x.ty, y.ty) {
                (Ty::Text, Ty::Text) => {
                    format!("COALESCE({} COLLATE \"C\" {op} {}, FALSE)", x.sql, y.sql)
                }
                (Ty::Int, Ty::Int) => format!("COALESCE({} {op} {}, FALSE)", x.sql, y.sql),
                _ => {
                    let general = format!(
                        "COALESCE(kip_cmp({}, {}) {op} 0, FALSE)",
                        x.json(),
                        y.json()
                    );
                    match native(x, y, &mut |n| self.p(Val::Json(n.into()))) {
                        Some((kind, a, b)) => format!(
                            "CASE WHEN jsonb_typeof({}) = '{kind}' THEN {a} {op} {b} ELSE {general} END",
                            json_side(x, y)
                        ),
                        None => general,
                    }
                }
            },
        }
    }

    /// `x == y`, where a missing value equals only a missing value.
    fn equal(&mut self, x: &Operand, y: &Operand) -> String {
        match self.backend {
            Backend::Sqlite => format!("({} IS {})", x.sql, y.sql),
            Backend::Postgres => match (x.ty, y.ty) {
                (Ty::Text, Ty::Text) | (Ty::Int, Ty::Int) => {
                    format!("({} IS NOT DISTINCT FROM {})", x.sql, y.sql)
                }
                (Ty::Null, Ty::Null) => "TRUE".into(),
                (Ty::Null, _) => format!("({} IS NULL)", y.sql),
                (_, Ty::Null) => format!("({} IS NULL)", x.sql),
                _ => {
                    let (a, b) = (x.json(), y.json());
                    let general =
                        format!("COALESCE(kip_cmp({a}, {b}) = 0, {a} IS NULL AND {b} IS NULL)");
                    match native(x, y, &mut |n| self.p(Val::Json(n.into()))) {
                        Some((kind, a, b)) => format!(
                            "CASE WHEN jsonb_typeof({}) = '{kind}' THEN {a} = {b} ELSE {general} END",
                            json_side(x, y)
                        ),
                        None => general,
                    }
                }
            },
        }
    }

    /// A document value against a number literal, on PostgreSQL: one SQL/JSON
    /// path match, which reads the value once and compares it in place.
    /// Written inline, the comparison would read it from the document two
    /// or three times per row (its type, its value), each read costing as
    /// much as the comparison.
    ///
    /// The path keeps KQL's rule (SQLite's): a number compares
    /// numerically, a boolean as 0 or 1, a string, array or object is
    /// greater than every number, a missing value or `null` compares
    /// false. In `strict` mode a comparison of two types that do not
    /// compare is unknown, and a path that is not there is an error,
    /// which `silent` turns into no match.
    fn doc_compare(&mut self, x: &Operand, op: CmpOp, y: &Operand) -> Option<String> {
        if self.backend != Backend::Postgres {
            return None;
        }
        // the document on the left, the number on the right
        let (d, n, op) = match (&x.doc, &y.num, &y.doc, &x.num) {
            (Some(d), Some(n), _, _) => (d, n, op),
            (_, _, Some(d), Some(n)) => (d, n, flipped(op)),
            _ => return None,
        };
        let (column, keys) = d;
        let mut path = String::from("strict $");
        for k in keys {
            // (KQL's path keys are identifiers: nothing to escape)
            if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return None;
            }
            path.push_str(&format!(".\"{k}\""));
        }
        let v = n.as_f64()?;
        let holds = |b: f64| match op {
            CmpOp::Eq | CmpOp::Ne => b == v,
            CmpOp::Lt => b < v,
            CmpOp::Le => b <= v,
            CmpOp::Gt => b > v,
            CmpOp::Ge => b >= v,
        };
        let sym = match op {
            CmpOp::Eq | CmpOp::Ne => "==",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        };
        // what else matches beside a number: booleans (as 0 and 1), and
        // for `>`, `>=` a string, array or object (tested in the order that
        // lets a number stop at the first test)
        let mut alts = Vec::new();
        match (holds(1.0), holds(0.0)) {
            (true, true) => alts.push("@.type() == \"boolean\""),
            (true, false) => alts.push("@ == true"),
            (false, true) => alts.push("@ == false"),
            (false, false) => {}
        }
        if matches!(op, CmpOp::Gt | CmpOp::Ge) {
            alts.push(
                "(@.type() != \"number\" && @.type() != \"boolean\" && @.type() != \"null\")",
            );
        }
        let vars = self.p(Val::Json(serde_json::json!({ "n": n })));
        // the comparison alone, as a path predicate (the quickest form):
        // true or false for a number, unknown (NULL) for anything else or
        // nothing; only then are the alternatives tried, by a filter that
        // reads the value once for all of them
        let number = format!("jsonb_path_match({column}, '{path} {sym} $n', {vars}, true)");
        let test = if alts.is_empty() {
            format!("COALESCE({number}, FALSE)")
        } else {
            format!(
                "CASE {number} WHEN TRUE THEN TRUE WHEN FALSE THEN FALSE \
                 ELSE COALESCE(jsonb_path_exists({column}, '{path} ? (@ {sym} $n || {})', {vars}, true), FALSE) END",
                alts.join(" || ")
            )
        };
        Some(match op {
            CmpOp::Ne => format!("(NOT {test})"),
            _ => test,
        })
    }

    pub(super) fn expr(&mut self, e: &Expr) -> KipResult<String> {
        Ok(match e {
            Expr::Or(a, b) => format!("({} OR {})", self.expr(a)?, self.expr(b)?),
            Expr::And(a, b) => format!("({} AND {})", self.expr(a)?, self.expr(b)?),
            Expr::Not(a) => format!("(NOT {})", self.expr(a)?),
            Expr::Cmp(a, op, b) => {
                let (x, y) = (self.operand(a)?, self.operand(b)?);
                if let Some(sql) = self.doc_compare(&x, *op, &y) {
                    return Ok(sql);
                }
                match op {
                    CmpOp::Eq => self.equal(&x, &y),
                    CmpOp::Ne => format!("(NOT {})", self.equal(&x, &y)),
                    CmpOp::Lt => self.compare(&x, "<", &y),
                    CmpOp::Le => self.compare(&x, "<=", &y),
                    CmpOp::Gt => self.compare(&x, ">", &y),
                    CmpOp::Ge => self.compare(&x, ">=", &y),
                }
            }
            Expr::In(a, list) => {
                let x = self.operand(a)?;
                if list.is_empty() {
                    "FALSE".into()
                } else {
                    let items: Vec<Operand> = list.iter().map(|v| self.lit(v)).collect();
                    let native = self.backend == Backend::Sqlite
                        || items.iter().all(|i| i.ty == x.ty && x.ty != Ty::Json);
                    if native {
                        let sql: Vec<&str> = items.iter().map(|i| i.sql.as_str()).collect();
                        format!("COALESCE({} IN ({}), FALSE)", x.sql, sql.join(", "))
                    } else {
                        let each: Vec<String> =
                            items.iter().map(|i| self.compare(&x, "=", i)).collect();
                        format!("({})", each.join(" OR "))
                    }
                }
            }
            Expr::IsNull(a) => format!("({} IS NULL)", self.operand(a)?.sql),
            Expr::IsNotNull(a) => format!("({} IS NOT NULL)", self.operand(a)?.sql),
            Expr::Str(f, a, b) => {
                let (x, y) = (self.operand(a)?, self.operand(b)?);
                match self.backend {
                    Backend::Sqlite => {
                        let (x, y) = (x.sql, y.sql);
                        match f {
                            StrFn::Contains => format!("COALESCE(instr({x}, {y}) > 0, FALSE)"),
                            StrFn::StartsWith => {
                                format!("COALESCE(substr({x}, 1, length({y})) = {y}, FALSE)")
                            }
                            StrFn::EndsWith => format!(
                                "COALESCE(length({y}) <= length({x}) AND substr({x}, length({x}) - length({y}) + 1) = {y}, FALSE)"
                            ),
                            StrFn::Regex => format!("COALESCE(kip_regex({y}, {x}), FALSE)"),
                        }
                    }
                    Backend::Postgres => {
                        let (x, y) = (x.text(), y.text());
                        match f {
                            StrFn::Contains => format!("COALESCE(strpos({x}, {y}) > 0, FALSE)"),
                            StrFn::StartsWith => {
                                format!("COALESCE(starts_with({x}, {y}), FALSE)")
                            }
                            StrFn::EndsWith => format!(
                                "COALESCE(length({y}) <= length({x}) AND right({x}, length({y})) = {y}, FALSE)"
                            ),
                            StrFn::Regex => format!("COALESCE({x} ~ {y}, FALSE)"),
                        }
                    }
                }
            }
        })
    }
}

/// `a op b` as `b op' a`.
fn flipped(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}
