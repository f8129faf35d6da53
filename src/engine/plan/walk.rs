//! `{m,n}` hops: a walk along one predicate from a grounded endpoint (a
//! recursive CTE, or a chain of joins for an exact count) or, from the
//! candidates of a bound variable, walked here and handed to the statement.

use super::{Block, Planner};
use crate::kip::ast::*;
use crate::kip::parser::MAX_HOPS;
use crate::kip::{KipError, KipResult};
use crate::store::db::{Backend, Db, Val};
use std::collections::{HashMap, HashSet};

impl Planner<'_> {
    /// A superset of the ids an endpoint can take, as an uncorrelated
    /// subquery, or a constant.
    fn anchor(&mut self, e: &Endpoint) -> KipResult<Option<Anchor>> {
        Ok(match e {
            Endpoint::Concept(m) if m.is_identity() => Some(Anchor::One(self.matcher_id(m)?)),
            Endpoint::Concept(m) => {
                let mut conds = Vec::new();
                if let Some(t) = &m.ty {
                    conds.push(format!("type = {}", self.ps(t)));
                }
                if let Some(n) = &m.name {
                    conds.push(format!("name = {}", self.ps(n)));
                }
                Some(Anchor::Sub(format!(
                    "SELECT id FROM concepts WHERE {}",
                    if conds.is_empty() {
                        "TRUE".into()
                    } else {
                        conds.join(" AND ")
                    }
                )))
            }
            Endpoint::Var(v) => match self.lookup(v).cloned() {
                None => None,
                Some(bound) => {
                    // The alias whose column the variable reads, restricted
                    // by that alias's own conditions.
                    let alias: String = bound.expr.split('.').next().unwrap_or("").to_string();
                    match self.alias_tables.get(&alias) {
                        Some((table, conds)) => {
                            let w = if conds.is_empty() {
                                "TRUE".into()
                            } else {
                                conds.join(" AND ")
                            };
                            Some(Anchor::Sub(format!(
                                "SELECT {} FROM {table} {alias} WHERE {w}",
                                bound.expr
                            )))
                        }
                        None if alias.starts_with('h') => Some(Anchor::Sub(format!(
                            "SELECT {} FROM {alias}_v {alias}",
                            bound.expr
                        ))),
                        None => Some(Anchor::Sub(
                            "SELECT id FROM concepts UNION ALL SELECT id FROM propositions"
                                .to_string(),
                        )),
                    }
                }
            },
            Endpoint::Prop(_) => None,
        })
    }

    pub(super) fn hop(
        &mut self,
        s: &Endpoint,
        pred: &str,
        min: u32,
        max: Option<u32>,
        o: &Endpoint,
        b: &mut Block,
    ) -> KipResult<String> {
        let max = match max {
            Some(m) if m > MAX_HOPS => {
                return Err(KipError::exhausted(format!(
                    "hop range up to {m} exceeds the engine cap of {MAX_HOPS}"
                )));
            }
            Some(m) => m,
            None if min > MAX_HOPS => {
                return Err(KipError::exhausted(format!(
                    "hop lower bound {min} exceeds the engine cap of {MAX_HOPS}"
                )));
            }
            None => MAX_HOPS,
        };
        let is_const = |e: &Endpoint| matches!(e, Endpoint::Concept(m) if m.is_identity());
        let s_anchor = self.anchor(s)?;
        let o_anchor = self.anchor(o)?;
        let forward = match (&s_anchor, &o_anchor) {
            (None, None) => {
                return Err(KipError::syntax("subject and object cannot both be variables in multi-hop matching")
                    .with_hint("Ground one endpoint with {type, name}, {id} or a variable bound by another clause."));
            }
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(_), Some(_)) => is_const(s) || !is_const(o),
        };
        let anchor = if forward { s_anchor } else { o_anchor }.unwrap_or(Anchor::One(None));
        let h = self.alias("h");
        // a walk from one named concept starts there by construction: the
        // endpoint needs no condition of its own
        let started = matches!(anchor, Anchor::One(Some(_)));
        if let Anchor::One(Some(a)) = anchor {
            self.single_starts.insert(h.clone());
            // One grounded start: the walk is a recursive CTE inside the
            // statement itself. (n, d) pairs are distinct, so a cycle ends
            // at the depth limit.
            let (from, to) = if forward {
                ("subject", "object")
            } else {
                ("object", "subject")
            };
            let pp = self.p(Val::Text(pred.to_string()));
            if min == max && (1..=UNROLLED_HOPS).contains(&max) {
                // an exact hop count: a chain of joins, as one would write
                // it by hand (walks of exactly that length, like the
                // recursion below)
                let mut sql = format!(
                    "{h}_v(start, node) AS (SELECT DISTINCT {h}_p1.{from}, {h}_p{max}.{to} FROM propositions {h}_p1"
                );
                for i in 2..=max {
                    sql.push_str(&format!(
                        " JOIN propositions {h}_p{i} ON {h}_p{i}.{from} = {h}_p{prev}.{to} AND {h}_p{i}.predicate = {pp}",
                        prev = i - 1
                    ));
                }
                sql.push_str(&format!(
                    " WHERE {h}_p1.{from} = {a} AND {h}_p1.predicate = {pp})"
                ));
                self.ctes.push(sql);
            } else {
                // (the start is read once; naming nothing, the walk is empty)
                self.ctes.push(format!(
                    "{h}_w(n, d) AS (SELECT a_.n, 0 FROM (SELECT {a} AS n) AS a_ WHERE a_.n IS NOT NULL \
                     UNION SELECT p.{to}, w.d + 1 FROM {h}_w w \
                     JOIN propositions p ON p.{from} = w.n AND p.predicate = {pp} WHERE w.d < {max})"
                ));
                self.ctes.push(format!(
                    "{h}_v(start, node) AS (SELECT DISTINCT {a}, n FROM {h}_w WHERE d >= {min})"
                ));
            }
        } else {
            self.walked(anchor, &h, pred, forward, min, max)?;
        }
        b.from.push(format!("{h}_v {h}"));
        let (s_slot, o_slot) = if forward {
            (format!("{h}.start"), format!("{h}.node"))
        } else {
            (format!("{h}.node"), format!("{h}.start"))
        };
        // (the anchored side is the subject going forward, else the object)
        if !started || !forward {
            self.endpoint(s, &s_slot, b)?;
        }
        if !started || forward {
            self.endpoint(o, &o_slot, b)?;
        }
        Ok(format!("{h}.start"))
    }

    /// The pairs a walk from several starts reaches, computed by `walk`
    /// and handed to the statement as a CTE named `{h}_v`.
    fn walked(
        &mut self,
        anchor: Anchor,
        h: &str,
        pred: &str,
        forward: bool,
        min: u32,
        max: u32,
    ) -> KipResult<()> {
        // (what is walked is read now and written into the statement)
        self.read_db.set(true);
        let anchors: Vec<i64> = match anchor {
            // (a single anchor is walked in the statement)
            Anchor::One(_) => vec![],
            Anchor::Sub(q) => {
                let with = if self.ctes.is_empty() {
                    String::new()
                } else {
                    format!("WITH RECURSIVE {} ", self.ctes.join(", "))
                };
                let mut v = Vec::new();
                for r in self.conn.query(
                    &format!("{with}SELECT DISTINCT * FROM ({q}) AS a_"),
                    &self.params,
                )? {
                    if let Some(id) = r.opt_i64(0)? {
                        v.push(id);
                    }
                }
                v
            }
        };
        let pairs = walk(self.conn, &anchors, pred, forward, min, max)?;
        let jp = self.p(Val::Text(
            serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".into()),
        ));
        self.ctes.push(match self.backend {
            Backend::Sqlite => format!(
                "{h}_v(start, node) AS (SELECT value ->> 0, value ->> 1 FROM json_each({jp}))"
            ),
            Backend::Postgres => format!(
                "{h}_v(start, node) AS (SELECT (value ->> 0)::bigint, (value ->> 1)::bigint FROM jsonb_array_elements({jp}::jsonb))"
            ),
        });
        Ok(())
    }
}

pub(super) enum Anchor {
    /// One concept, named by an identity matcher: the SQL of its id
    /// (`None`: it is known to name nothing).
    One(Option<String>),
    /// The ids a subquery selects.
    Sub(String),
}

/// Pairs of hop results above this are refused (`KIP_4002`).
pub const MAX_HOP_PAIRS: usize = 2_000_000;

/// Exact hop counts up to this are compiled as a chain of joins.
const UNROLLED_HOPS: u32 = 8;

/// Breadth-first walk along one predicate from every anchor: the pairs
/// (anchor, node) where node is reachable in exactly d steps for some d in
/// [min, max] (walks, so a node reachable at depth 1 and 3 counts for both).
fn walk(
    conn: Db<'_>,
    anchors: &[i64],
    pred: &str,
    forward: bool,
    min: u32,
    max: u32,
) -> KipResult<Vec<[i64; 2]>> {
    let sql = if forward {
        "SELECT object FROM propositions WHERE subject = ?1 AND predicate = ?2"
    } else {
        "SELECT subject FROM propositions WHERE object = ?1 AND predicate = ?2"
    };
    let mut out = Vec::new();
    let mut neighbours: HashMap<i64, Vec<i64>> = HashMap::new();
    for &a in anchors {
        let mut found: HashSet<i64> = HashSet::new();
        if min == 0 {
            found.insert(a);
        }
        let mut frontier: HashSet<i64> = HashSet::from([a]);
        for depth in 1..=max {
            let mut next = HashSet::new();
            for n in &frontier {
                if !neighbours.contains_key(n) {
                    let v: Vec<i64> = conn
                        .query(sql, &[Val::Int(*n), Val::Text(pred.to_string())])?
                        .iter()
                        .map(|r| r.i64(0))
                        .collect::<KipResult<_>>()?;
                    neighbours.insert(*n, v);
                }
                next.extend(neighbours[n].iter().copied());
            }
            if depth >= min {
                found.extend(next.iter().copied());
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        let mut f: Vec<i64> = found.into_iter().collect();
        f.sort_unstable();
        out.extend(f.into_iter().map(|n| [a, n]));
        if out.len() > MAX_HOP_PAIRS {
            return Err(KipError::exhausted(format!(
                "the multi-hop pattern reaches more than {MAX_HOP_PAIRS} pairs"
            ))
            .with_hint("Ground the walk on fewer start nodes or lower the hop range."));
        }
    }
    Ok(out)
}
