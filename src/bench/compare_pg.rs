//! The hand-written SQL of `somnus bench --compare --postgres URL`: each
//! workload as a skilled person would write it for PostgreSQL, on its own
//! connection to the same memory somnus uses (one schema, the same tables,
//! triggers and indexes).
//!
//! Statements are prepared once per connection; a bulk write sends its
//! rows as arrays (`unnest`) rather than one statement per row; answers
//! are built as JSON by the database. Writes keep the memory's guarantees,
//! as somnus's do: one transaction with an audit entry, before and after
//! images recorded by the audit triggers, the full-text document kept by
//! the row itself.

use super::workload::{BATCH, Shape, Workload, json_array, merged, top_hits};
use postgres::types::ToSql;
use postgres::{Client, Statement};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The concept `c` as KIP returns it, built by PostgreSQL (a macro, so
/// statements stay literals).
macro_rules! concept_json {
    () => {
        "jsonb_build_object('_type', 'ConceptNode', 'id', 'C:' || c.id, 'type', c.type, 'name', c.name, \
         'attributes', c.attributes, 'metadata', c.metadata || jsonb_build_object('_version', c.version, '_updated_at', c.updated_at))::text"
    };
}

/// Every insert is recorded by the audit triggers (the audit entry's first
/// id is past any id): ids come from a sequence, so an entry cannot claim
/// a range of them.
const NO_ID_RANGE: &str = "9223372036854775807";

fn e(err: postgres::Error) -> String {
    match err.as_db_error() {
        Some(d) => format!("PostgreSQL: {} ({})", d.message(), d.code().code()),
        None => err.to_string(),
    }
}

/// The hand-written side's connection and its prepared statements.
pub struct PgSql {
    client: Client,
    prepared: HashMap<&'static str, Statement>,
}

type Args<'a> = [&'a (dyn ToSql + Sync)];
type Obj = Map<String, Value>;

impl PgSql {
    pub fn new(client: Client) -> PgSql {
        PgSql {
            client,
            prepared: HashMap::new(),
        }
    }

    fn statement(&mut self, sql: &'static str) -> Result<Statement, String> {
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).map_err(e)?;
        self.prepared.insert(sql, s.clone());
        Ok(s)
    }

    fn query(&mut self, sql: &'static str, args: &Args) -> Result<Vec<postgres::Row>, String> {
        let st = self.statement(sql)?;
        self.client.query(&st, args).map_err(e)
    }

    fn execute(&mut self, sql: &'static str, args: &Args) -> Result<u64, String> {
        let st = self.statement(sql)?;
        self.client.execute(&st, args).map_err(e)
    }

    /// The first column of every row, as text.
    fn texts(&mut self, sql: &'static str, args: &Args) -> Result<Vec<String>, String> {
        Ok(self
            .query(sql, args)?
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect())
    }

    /// A write in one transaction with its audit entry, as every write to
    /// the memory is.
    fn audited<T>(
        &mut self,
        what: &str,
        kind: &str,
        f: impl FnOnce(&mut PgSql) -> Result<T, String>,
    ) -> Result<T, String> {
        self.client.batch_execute("BEGIN").map_err(e)?;
        let res = (|| {
            let entry: i64 = self
                .query(
                    "WITH e AS (INSERT INTO audit_log(at, actor, trigger_name, command, kind, first_change, first_id, end_id) \
                     VALUES ($1, 'sql', 'bench', $2, $3, (SELECT COALESCE(MAX(id), 0) + 1 FROM audit_changes), 0, 0) RETURNING id) \
                     SELECT id, set_config('somnus.audit_entry', id::text, true), set_config('somnus.audit_first_id', $4, true) FROM e",
                    &[&crate::store::now(), &what, &kind, &NO_ID_RANGE],
                )?[0]
                .get(0);
            let out = f(self)?;
            self.query(
                "UPDATE audit_log l SET n_changes = (SELECT COUNT(*) FROM audit_changes c WHERE c.id >= l.first_change AND c.entry = l.id) \
                 WHERE l.id = $1 RETURNING set_config('somnus.audit_entry', '', true)",
                &[&entry],
            )?;
            Ok(out)
        })();
        match &res {
            Ok(_) => self.client.batch_execute("COMMIT").map_err(e)?,
            Err(_) => {
                let _ = self.client.batch_execute("ROLLBACK");
            }
        }
        res
    }

    /// Workload `w`, run `i` (picked concept `k`), for the side tagged `t`:
    /// the JSON answer.
    pub fn run(
        &mut self,
        w: Workload,
        shape: Shape,
        t: &str,
        i: usize,
        k: usize,
    ) -> Result<String, String> {
        let to_json = |v: Value| serde_json::to_string(&v).map_err(|x| x.to_string());
        match w {
            Workload::Insert => self.audited("INSERT concepts, propositions", "UPSERT", |q| {
                q.insert(t, i)
            }),
            Workload::Lookup => {
                let rows = self.texts(
                    concat!(
                        "SELECT ",
                        concept_json!(),
                        " FROM concepts c WHERE c.type = 'Entity' AND c.name = $1"
                    ),
                    &[&format!("e{k}")],
                )?;
                Ok(json_array(rows))
            }
            Workload::Scan => to_json(json!(self.texts(
                "SELECT name FROM concepts WHERE type = 'Entity' AND (attributes ->> 'score')::float8 >= $1",
                &[&(shape.top() as f64)],
            )?)),
            Workload::Hop => {
                let rows = self.texts(
                    concat!(
                        "SELECT ",
                        concept_json!(),
                        " FROM concepts c WHERE c.id IN (SELECT p.object FROM concepts s \
                         JOIN propositions p ON p.subject = s.id AND p.predicate = 'links_to' \
                         WHERE s.type = 'Entity' AND s.name = $1)"
                    ),
                    &[&format!("e{k}")],
                )?;
                Ok(json_array(rows))
            }
            Workload::GroupCount => {
                let rows = self.query(
                    "SELECT d.name, g.n FROM (SELECT object AS o, COUNT(*) AS n FROM propositions \
                     WHERE predicate = 'belongs_to_domain' GROUP BY object) g JOIN concepts d ON d.id = g.o WHERE d.type = 'Domain'",
                    &[],
                )?;
                let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
                let counts: Vec<i64> = rows.iter().map(|r| r.get(1)).collect();
                to_json(json!([names, counts]))
            }
            Workload::Path => to_json(json!(self.texts(
                "SELECT DISTINCT c.name FROM concepts s \
                 JOIN propositions p1 ON p1.subject = s.id AND p1.predicate = 'links_to' \
                 JOIN propositions p2 ON p2.subject = p1.object AND p2.predicate = 'links_to' \
                 JOIN propositions p3 ON p3.subject = p2.object AND p3.predicate = 'links_to' \
                 JOIN propositions p4 ON p4.subject = p3.object AND p4.predicate = 'links_to' \
                 JOIN propositions p5 ON p5.subject = p4.object AND p5.predicate = 'links_to' \
                 JOIN concepts c ON c.id = p5.object WHERE s.type = 'Entity' AND s.name = $1",
                &[&format!("e{k}")],
            )?)),
            Workload::AntiJoin => to_json(json!(self.texts(
                "SELECT n.name FROM concepts n WHERE n.type = 'Entity' AND (n.attributes ->> 'score')::float8 < $1 \
                 AND NOT EXISTS (SELECT 1 FROM propositions p WHERE p.object = n.id AND p.predicate = 'links_to')",
                &[&(shape.low() as f64)],
            )?)),
            Workload::TopK => {
                // rows of [name, score] (no aggregate: one array per row)
                let rows = self.query(
                    "SELECT name, (attributes -> 'score')::text FROM concepts WHERE type = 'Entity' \
                     ORDER BY attributes -> 'score' DESC NULLS LAST LIMIT 10",
                    &[],
                )?;
                let mut out = Vec::with_capacity(rows.len());
                for r in &rows {
                    let score: Option<String> = r.get(1);
                    let score: Value = match score {
                        Some(s) => serde_json::from_str(&s).map_err(|x| x.to_string())?,
                        None => Value::Null,
                    };
                    out.push(json!([r.get::<_, String>(0), score]));
                }
                to_json(Value::Array(out))
            }
            Workload::Search => {
                let term = format!("e{k}");
                let rows = self.query(
                    concat!(
                        "SELECT c.id, ts_rank(c.search, q)::float8 AS r, lower(c.name) = lower($2), ",
                        concept_json!(),
                        " FROM concepts c, to_tsquery('simple', $1) q WHERE c.search @@ q ORDER BY r DESC, c.id LIMIT 50"
                    ),
                    &[&format!("'{term}'"), &term],
                )?;
                top_hits(
                    rows.iter()
                        .map(|r| {
                            let s =
                                r.get::<_, f64>(1) * if r.get::<_, bool>(2) { 2.0 } else { 1.0 };
                            (r.get(0), s / (1.0 + s), r.get(3))
                        })
                        .collect(),
                )
            }
            Workload::UpdateSmall | Workload::UpdateLarge => {
                self.audited("UPDATE concepts SET attributes", "UPDATE", |q| {
                    let n = q.execute(
                        "UPDATE concepts SET attributes = attributes || jsonb_build_object('reviewed', $1::text), \
                         version = version + 1, updated_at = $2 \
                         WHERE type = 'Entity' AND (attributes ->> 'score')::float8 < $3",
                        &[
                            &format!("{t}{i}"),
                            &crate::store::now(),
                            &(w.sweep(shape) as f64),
                        ],
                    )?;
                    Ok(format!(r#"{{"updated":{n},"matched":{n}}}"#))
                })
            }
            Workload::Merge => self.audited("merge twins", "MERGE", |q| {
                q.merge(&format!("dup{t}{i}"), &format!("canon{t}{i}"))
            }),
            Workload::Delete => self.audited("delete hub", "DELETE", |q| {
                let id: i64 = q.query(
                    "SELECT id FROM concepts WHERE type = 'Entity' AND name = $1",
                    &[&format!("hub{t}{i}")],
                )?[0]
                    .get(0);
                // links, and links about those links, all the way down
                let links = q.execute(
                    "WITH RECURSIVE doomed(id) AS (SELECT id FROM propositions WHERE subject = $1 OR object = $1 \
                     UNION SELECT p.id FROM propositions p JOIN doomed d ON p.subject = d.id OR p.object = d.id) \
                     DELETE FROM propositions WHERE id IN (SELECT id FROM doomed)",
                    &[&id],
                )?;
                let concepts = q.execute("DELETE FROM concepts WHERE id = $1", &[&id])?;
                Ok(format!(
                    r#"{{"deleted_concepts":{concepts},"deleted_propositions":{links}}}"#
                ))
            }),
        }
    }

    /// 500 concepts and their 500 domain links, each table in one
    /// statement over arrays of rows.
    fn insert(&mut self, t: &str, i: usize) -> Result<String, String> {
        let now = crate::store::now();
        let meta = r#"{"source":"bench","confidence":0.8}"#;
        let names: Vec<String> = (0..BATCH).map(|j| format!("{t}{i}_{j}")).collect();
        let attrs: Vec<String> = (0..BATCH)
            .map(|j| format!(r#"{{"score":{j},"kind":"x"}}"#))
            .collect();
        let areas: Vec<String> = (0..BATCH).map(|j| format!("Area{}", j % 20)).collect();
        // the concepts, in the order given
        let rows = self.query(
            "INSERT INTO concepts AS c (id, type, name, attributes, metadata, updated_at) \
             SELECT nextval('element_ids'), 'Extra', u.name, u.attrs::jsonb, $3::text::jsonb, $4 \
             FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(name, attrs, k) ORDER BY u.k \
             ON CONFLICT (type, name) DO UPDATE SET attributes = c.attributes || excluded.attributes, \
             metadata = c.metadata || excluded.metadata, version = c.version + 1, updated_at = excluded.updated_at \
             RETURNING c.id, c.name",
            &[&names, &attrs, &meta, &now],
        )?;
        let by_name: HashMap<String, i64> = rows.iter().map(|r| (r.get(1), r.get(0))).collect();
        let ids: Vec<i64> = names
            .iter()
            .map(|n| by_name.get(n).copied().ok_or("a concept got no id"))
            .collect::<Result<_, _>>()?;
        // their links to the domains
        self.execute(
            "INSERT INTO propositions AS p (id, subject, predicate, object, metadata, updated_at) \
             SELECT nextval('element_ids'), u.s, 'belongs_to_domain', d.id, $3::text::jsonb, $4 \
             FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS u(s, area, k) \
             JOIN concepts d ON d.type = 'Domain' AND d.name = u.area ORDER BY u.k \
             ON CONFLICT (subject, predicate, object) DO UPDATE SET metadata = p.metadata || excluded.metadata, \
             version = p.version + 1, updated_at = excluded.updated_at",
            &[&ids, &areas, &meta, &now],
        )?;
        Ok(format!(
            r#"{{"blocks":1,"upsert_concept_nodes":{},"upsert_proposition_links":[]}}"#,
            json_array(ids.iter().map(|id| format!("\"C:{id}\"")))
        ))
    }

    /// MERGE by hand, as on SQLite: links that would duplicate one of the
    /// target's (or join the twins) go, the rest move over; the target
    /// takes the source's missing attributes, its name as an alias, and the
    /// provenance trail.
    fn merge(&mut self, source: &str, target: &str) -> Result<String, String> {
        let rows = self.query(
            "SELECT id, name, attributes::text, metadata::text FROM concepts WHERE type = 'Entity' AND name IN ($1, $2)",
            &[&source, &target],
        )?;
        let find = |name: &str| -> Result<(i64, Obj, Obj), String> {
            let r = rows
                .iter()
                .find(|r| r.get::<_, String>(1) == name)
                .ok_or_else(|| format!("no Entity {name}"))?;
            let parse =
                |s: String| -> Map<String, Value> { serde_json::from_str(&s).unwrap_or_default() };
            Ok((r.get(0), parse(r.get(2)), parse(r.get(3))))
        };
        let (sid, s_a, s_m) = find(source)?;
        let (tid, t_a, t_m) = find(target)?;
        // the twin's copy of a link the target has: its metadata folds into
        // the target's (the target's values win), then it goes
        let dups = self.query(
            "WITH d AS (SELECT l.id AS lid, k.id AS kid, l.metadata AS m FROM propositions l JOIN propositions k \
               ON k.predicate = l.predicate AND k.subject = CASE WHEN l.subject = $1 THEN $2 ELSE l.subject END \
              AND k.object = CASE WHEN l.object = $1 THEN $2 ELSE l.object END \
             WHERE (l.subject = $1 OR l.object = $1) AND k.id <> l.id), \
             folded AS (UPDATE propositions p SET metadata = d.m || p.metadata, version = p.version + 1 \
               FROM d WHERE p.id = d.kid AND d.m || p.metadata <> p.metadata) \
             DELETE FROM propositions WHERE id IN (SELECT lid FROM d) RETURNING id",
            &[&sid, &tid],
        )?;
        let selfloops = self.execute(
            "DELETE FROM propositions WHERE (subject = $1 AND object = $2) OR (subject = $2 AND object = $1)",
            &[&sid, &tid],
        )?;
        let now = crate::store::now();
        let moved = self.execute(
            "UPDATE propositions SET subject = CASE WHEN subject = $1 THEN $2 ELSE subject END, \
             object = CASE WHEN object = $1 THEN $2 ELSE object END, version = version + 1, updated_at = $3 \
             WHERE subject = $1 OR object = $1",
            &[&sid, &tid, &now],
        )?;
        let (t_a, t_m, filled) = merged(source, target, s_a, t_a, s_m, t_m);
        self.execute(
            "UPDATE concepts SET attributes = $2::text::jsonb, metadata = $3::text::jsonb, version = version + 1, updated_at = $4 WHERE id = $1",
            &[
                &tid,
                &Value::Object(t_a).to_string(),
                &Value::Object(t_m).to_string(),
                &now,
            ],
        )?;
        self.execute("DELETE FROM concepts WHERE id = $1", &[&sid])?;
        Ok(format!(
            r#"{{"merged":true,"links_repointed":{moved},"links_deduplicated":{},"attributes_filled":{filled}}}"#,
            dups.len() as u64 + selfloops
        ))
    }
}
