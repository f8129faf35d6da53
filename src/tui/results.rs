//! A KIP response as a table: the column-major `FIND` answer turned into
//! rows, everything else as rows of its parts. Only visible rows are ever
//! turned into cells.

use crate::kip::ast::{Command, FindExpr};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultTable {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

fn expr_text(e: &FindExpr) -> String {
    match e {
        FindExpr::Path(p) => p.to_string(),
        FindExpr::Agg(a) => {
            let f = match a.func {
                crate::kip::ast::AggFunc::Count => "COUNT",
                crate::kip::ast::AggFunc::Sum => "SUM",
                crate::kip::ast::AggFunc::Avg => "AVG",
                crate::kip::ast::AggFunc::Min => "MIN",
                crate::kip::ast::AggFunc::Max => "MAX",
            };
            format!(
                "{f}({}{})",
                if a.distinct { "DISTINCT " } else { "" },
                a.path
            )
        }
    }
}

/// A column over `width` expressions holds one array per row: spread it.
fn push_cell(row: &mut Vec<Value>, cell: Value, width: usize) {
    if width == 1 {
        row.push(cell);
    } else {
        let parts = as_list(&cell);
        row.extend((0..width).map(|k| parts.get(k).cloned().unwrap_or(Value::Null)));
    }
}

fn as_list(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    }
}

/// Builds the table for a response to `text` (parsed with `params` to know
/// the shape of a `FIND`).
pub fn table(text: &str, params: &Map<String, Value>, result: &Value) -> ResultTable {
    if let Ok(Command::Find(q)) = crate::kip::parse(text, params) {
        return find_table(&q.find, result);
    }
    generic(result)
}

fn find_table(find: &[FindExpr], result: &Value) -> ResultTable {
    let headers: Vec<String> = find.iter().map(expr_text).collect();
    let has_agg = find.iter().any(|e| matches!(e, FindExpr::Agg(_)));
    // the engine's columns: consecutive plain expressions over one variable
    // form one column; each aggregate is its own column
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, e) in find.iter().enumerate() {
        match (e, groups.last_mut()) {
            (FindExpr::Path(p), Some(g))
                if matches!(&find[g[0]], FindExpr::Path(q) if q.var == p.var)
                    && !matches!(find[*g.last().unwrap_or(&0)], FindExpr::Agg(_)) =>
            {
                g.push(i)
            }
            _ => groups.push(vec![i]),
        }
    }
    let mut rows: Vec<Vec<Value>> = Vec::new();
    if !has_agg {
        let cols: Vec<Vec<Value>> = if groups.len() == 1 {
            vec![as_list(result)]
        } else {
            as_list(result).iter().map(as_list).collect()
        };
        let n = cols.iter().map(Vec::len).max().unwrap_or(0);
        for r in 0..n {
            let mut row = Vec::new();
            for (gi, g) in groups.iter().enumerate() {
                let cell = cols
                    .get(gi)
                    .and_then(|c| c.get(r))
                    .cloned()
                    .unwrap_or(Value::Null);
                push_cell(&mut row, cell, g.len());
            }
            rows.push(row);
        }
        return ResultTable { headers, rows };
    }
    let key_groups = groups
        .iter()
        .filter(|g| matches!(find[g[0]], FindExpr::Path(_)))
        .count();
    if key_groups == 0 {
        let vals = if find.len() == 1 {
            vec![result.clone()]
        } else {
            as_list(result)
        };
        return ResultTable {
            headers,
            rows: vec![vals],
        };
    }
    let cols: Vec<Value> = as_list(result);
    let n = groups
        .iter()
        .zip(cols.iter())
        .filter(|(g, _)| matches!(find[g[0]], FindExpr::Path(_)))
        .map(|(_, c)| as_list(c).len())
        .max()
        .unwrap_or(0);
    for r in 0..n {
        let mut row = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let col = cols.get(gi).cloned().unwrap_or(Value::Null);
            let cell = match (&find[g[0]], &col) {
                (FindExpr::Agg(_), Value::Array(a)) => a.get(r).cloned().unwrap_or(Value::Null),
                (FindExpr::Agg(_), scalar) => scalar.clone(),
                (_, c) => as_list(c).get(r).cloned().unwrap_or(Value::Null),
            };
            push_cell(&mut row, cell, g.len());
        }
        rows.push(row);
    }
    ResultTable { headers, rows }
}

/// The elements a write changed (or would): one row each, with what they
/// are and, for an update, the fields it changes.
pub fn effects_table(effects: &Value) -> ResultTable {
    let mut rows: Vec<Vec<Value>> = effects["elements"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|e| {
                    let fields = e["fields"]
                        .as_array()
                        .map(|f| {
                            f.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default();
                    vec![
                        e["change"].clone(),
                        e["id"].clone(),
                        e["what"].clone(),
                        Value::String(fields),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(n) = effects["more"].as_u64() {
        rows.push(vec![
            Value::String(format!("… {n} more")),
            Value::Null,
            Value::Null,
            Value::Null,
        ]);
    }
    ResultTable {
        headers: ["change", "element", "what", "fields"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

/// "would create 2, update 1" (a dry run) or "created 2, updated 1".
pub fn effects_summary(effects: &Value, dry_run: bool) -> String {
    let n = |k: &str| effects[k].as_u64().unwrap_or(0);
    let parts: Vec<String> = [
        ("created", "create", n("created")),
        ("updated", "update", n("updated")),
        ("deleted", "delete", n("deleted")),
    ]
    .iter()
    .filter(|(_, _, c)| *c > 0)
    .map(|(done, todo, c)| format!("{} {c}", if dry_run { *todo } else { *done }))
    .collect();
    match (parts.is_empty(), dry_run) {
        (true, true) => "would change nothing".into(),
        (true, false) => "changed nothing".into(),
        (false, true) => format!("would {}", parts.join(", ")),
        (false, false) => parts.join(", "),
    }
}

/// How a SEARCH ranked its rows, from the answer's `search`: "5 rows ·
/// hybrid, all-MiniLM-L6-v2", "5 rows · keyword only: no embedding model".
pub fn search_summary(rows: usize, search: &Value) -> String {
    let mode = search["mode"].as_str().unwrap_or("keyword");
    let mut s = format!("{rows} rows · {mode}");
    if let Some(m) = search["model"].as_str() {
        s.push_str(&format!(", {m}"));
    }
    if let Some(n) = search["not_embedded"].as_u64() {
        s.push_str(&format!(", {n} not embedded yet"));
    }
    if let Some(why) = search["keyword_only"].as_str() {
        let short = if why.starts_with("no embedding model") {
            "no embedding model"
        } else {
            "the embedding provider failed"
        };
        s = format!("{rows} rows · keyword only: {short}");
    }
    s
}

fn generic(result: &Value) -> ResultTable {
    match result {
        Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
            let mut headers: Vec<String> = Vec::new();
            for it in items {
                if let Value::Object(m) = it {
                    for k in m.keys() {
                        if !headers.contains(k) {
                            headers.push(k.clone());
                        }
                    }
                }
            }
            let rows = items
                .iter()
                .map(|it| {
                    headers
                        .iter()
                        .map(|h| it.get(h).cloned().unwrap_or(Value::Null))
                        .collect()
                })
                .collect();
            ResultTable { headers, rows }
        }
        Value::Array(items) => ResultTable {
            headers: vec!["value".into()],
            rows: items.iter().map(|v| vec![v.clone()]).collect(),
        },
        Value::Object(m) => ResultTable {
            headers: vec!["key".into(), "value".into()],
            rows: m
                .iter()
                .map(|(k, v)| vec![Value::String(k.clone()), v.clone()])
                .collect(),
        },
        other => ResultTable {
            headers: vec!["value".into()],
            rows: vec![vec![other.clone()]],
        },
    }
}

/// One cell as text: nodes and links as a short label, other objects as
/// compact JSON; control characters an agent wrote are shown escaped.
pub fn cell_text(v: &Value) -> String {
    crate::text::one_line(&cell_label(v))
}

fn cell_label(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => s.replace('\n', " "),
        Value::Object(m) if m.get("_type").and_then(Value::as_str) == Some("ConceptNode") => {
            format!(
                "{}: {}",
                m.get("type").and_then(Value::as_str).unwrap_or(""),
                m.get("name").and_then(Value::as_str).unwrap_or("")
            )
        }
        Value::Object(m) if m.get("_type").and_then(Value::as_str) == Some("PropositionLink") => {
            format!(
                "{} -{}→ {}",
                m.get("subject").and_then(Value::as_str).unwrap_or(""),
                m.get("predicate").and_then(Value::as_str).unwrap_or(""),
                m.get("object").and_then(Value::as_str).unwrap_or("")
            )
        }
        other => other.to_string(),
    }
}

impl ResultTable {
    /// The table as CSV (RFC 4180 quoting; cells as their text form).
    pub fn to_csv(&self) -> String {
        fn q(s: &str) -> String {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        }
        let mut out = self
            .headers
            .iter()
            .map(|h| q(h))
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
        for r in &self.rows {
            let line: Vec<String> = r
                .iter()
                .map(|v| match v {
                    Value::String(s) => q(s),
                    Value::Null => String::new(),
                    other => q(&other.to_string()),
                })
                .collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }

    /// The table as a JSON array of row objects.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.rows
                .iter()
                .map(|r| {
                    let mut m = Map::new();
                    for (h, v) in self.headers.iter().zip(r.iter()) {
                        m.insert(h.clone(), v.clone());
                    }
                    Value::Object(m)
                })
                .collect(),
        )
    }
}
