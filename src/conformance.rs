//! Runs KIP conformance fixtures (the format of the cross-engine suite):
//! setup commands on a fresh memory, then cases in order, each compared
//! after the suite's normalisation (positional ids, volatile metadata
//! dropped, unordered top-level arrays sorted).

use crate::Nexus;
use crate::protocol::Outcome;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
pub struct Fixture {
    pub name: String,
    #[serde(default)]
    pub setup: Vec<String>,
    pub cases: Vec<Case>,
}

#[derive(Deserialize)]
pub struct Case {
    pub name: String,
    pub command: String,
    pub expect: Expect,
    #[serde(default)]
    pub ordered: bool,
}

#[derive(Deserialize)]
pub struct Expect {
    #[serde(default)]
    pub result: Option<Value>,
    #[serde(default)]
    pub error: Option<ExpectError>,
    #[serde(default)]
    pub next_cursor: Option<Value>,
}

#[derive(Deserialize)]
pub struct ExpectError {
    pub code: String,
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug)]
pub struct CaseReport {
    pub file: String,
    pub case: String,
    pub passed: bool,
    pub detail: String,
    /// Why the case was checked against the specification's answer
    /// instead of the suite's ([`DEPARTURES`]).
    pub departure: Option<&'static str>,
}

/// A case of the suite whose expected answer is the reference engine's
/// and contradicts the specification: somnus answers as the
/// specification says, and the runner checks that answer instead.
pub struct Departure {
    pub file: &'static str,
    pub case: &'static str,
    /// The answer the specification gives (JSON).
    pub answer: &'static str,
    pub why: &'static str,
}

/// The suite's cases where somnus follows the specification (README,
/// "Semantics"). Each is still checked: against the specification's answer.
pub const DEPARTURES: &[Departure] = &[
    Departure {
        file: "kql-clause-independence.json",
        case: "a clause after an empty disjoint group still binds its variable",
        answer: "[]",
        why: "§3.4: all WHERE clauses are AND-ed; a clause that matches nothing leaves no solution",
    },
    Departure {
        file: "kql-clause-independence.json",
        case: "an uncorrelated NOT whose block matches is a no-op",
        answer: "[]",
        why: "§3.4.7.1: NOT excludes the solutions for which its pattern holds; an uncorrelated one that matches holds for all",
    },
];

fn departure(file: &str, case: &str) -> Option<&'static Departure> {
    DEPARTURES.iter().find(|d| d.file == file && d.case == case)
}

fn is_id(s: &str) -> bool {
    if let Some(n) = s.strip_prefix("C:") {
        return !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    }
    if let Some(rest) = s.strip_prefix("P:") {
        let num = rest.split(':').next().unwrap_or("");
        return !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit());
    }
    false
}

/// Ids become positional tokens in first-appearance order of a sorted-key
/// depth-first walk; `_created_at` / `_updated_at` leave every metadata map.
pub fn normalize(v: &Value, seen: &mut HashMap<String, String>) -> Value {
    match v {
        Value::String(s) if is_id(s) => {
            let next = seen.len() + 1;
            let tok = seen
                .entry(s.clone())
                .or_insert_with(|| {
                    if let Some(rest) = s.strip_prefix("P:") {
                        let pred = rest.split_once(':').map(|(_, p)| p).unwrap_or("");
                        format!("P:<{next}>:{pred}")
                    } else {
                        format!("C:<{next}>")
                    }
                })
                .clone();
            Value::String(tok)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| normalize(x, seen)).collect()),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                let mut val = normalize(&m[k], seen);
                if k == "metadata"
                    && let Value::Object(mm) = &mut val
                {
                    mm.remove("_created_at");
                    mm.remove("_updated_at");
                }
                out.insert(k.clone(), val);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// JSON with object keys sorted.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&m[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

fn sorted(v: Value) -> Value {
    match v {
        Value::Array(mut a) => {
            a.sort_by_key(canonical);
            Value::Array(a)
        }
        other => other,
    }
}

pub fn run_fixture(path: &Path) -> Result<Vec<CaseReport>, String> {
    run_fixture_in(path, None)
}

/// Runs a fixture in a fresh memory: a private in-memory one, or, given a
/// `postgres://` URL, a throwaway memory of that database (dropped after).
pub fn run_fixture_in(path: &Path, postgres: Option<&str>) -> Result<Vec<CaseReport>, String> {
    let Some(url) = postgres else {
        return run_fixture_on(path, Nexus::open_in_memory().map_err(|e| e.to_string())?);
    };
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let memory = format!(
        "conformance_{}_{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    );
    let loc = crate::store::postgres::Location::parse(url, Some(&memory)).map_err(|e| e.message)?;
    let out = Nexus::open_postgres(&loc)
        .map_err(|e| e.message)
        .and_then(|nx| run_fixture_on(path, nx));
    crate::store::postgres::drop_memory(&loc).map_err(|e| e.message)?;
    out
}

fn run_fixture_on(path: &Path, mut nx: Nexus) -> Result<Vec<CaseReport>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let fx: Fixture =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut reports = Vec::new();
    for (i, s) in fx.setup.iter().enumerate() {
        if let Outcome::Err(e) = nx.kip(s) {
            // a failed setup fails every case of the file
            for c in &fx.cases {
                reports.push(CaseReport {
                    file: file.clone(),
                    case: c.name.clone(),
                    passed: false,
                    detail: format!("setup[{i}] failed: {} {}", e.code, e.message),
                    departure: None,
                });
            }
            return Ok(reports);
        }
    }
    for c in &fx.cases {
        let out = nx.kip(&c.command);
        let d = departure(&file, &c.name);
        let (passed, detail) = match d {
            Some(d) => {
                let answer: Value = serde_json::from_str(d.answer).unwrap_or(Value::Null);
                let spec = Case {
                    name: c.name.clone(),
                    command: c.command.clone(),
                    expect: Expect {
                        result: Some(answer),
                        error: None,
                        next_cursor: None,
                    },
                    ordered: c.ordered,
                };
                check(&spec, &out)
            }
            None => check(c, &out),
        };
        reports.push(CaseReport {
            file: file.clone(),
            case: c.name.clone(),
            passed,
            detail,
            departure: d.map(|d| d.why),
        });
    }
    let _ = fx.name;
    Ok(reports)
}

fn check(c: &Case, out: &Outcome) -> (bool, String) {
    match (out, &c.expect.error) {
        (Outcome::Err(e), Some(want)) => {
            if e.code.code() != want.code {
                return (
                    false,
                    format!(
                        "expected error {}, got {}: {}",
                        want.code, e.code, e.message
                    ),
                );
            }
            if let Some(m) = &want.message
                && !e.message.contains(m.as_str())
            {
                return (
                    false,
                    format!("error message \"{}\" does not contain \"{m}\"", e.message),
                );
            }
            (true, String::new())
        }
        (Outcome::Err(e), None) => (
            false,
            format!("expected a result, got {}: {}", e.code, e.message),
        ),
        (Outcome::Ok { result, .. }, Some(want)) => (
            false,
            format!(
                "expected error {}, got result {}",
                want.code,
                canonical(result)
            ),
        ),
        (
            Outcome::Ok {
                result,
                next_cursor,
                ..
            },
            None,
        ) => {
            let mut seen = HashMap::new();
            let mut actual = normalize(result, &mut seen);
            if let Some(expected) = &c.expect.result {
                let mut expected = expected.clone();
                if !c.ordered {
                    actual = sorted(actual);
                    expected = sorted(expected);
                }
                if canonical(&actual) != canonical(&expected) {
                    return (
                        false,
                        format!(
                            "\n    expected {}\n    actual   {}",
                            canonical(&expected),
                            canonical(&actual)
                        ),
                    );
                }
            }
            if let Some(nc) = &c.expect.next_cursor {
                let got = next_cursor
                    .clone()
                    .map(Value::String)
                    .unwrap_or(Value::Null);
                if &got != nc {
                    return (false, format!("expected next_cursor {nc}, got {got}"));
                }
            }
            (true, String::new())
        }
    }
}

/// Fixture files under the given paths (folders are searched for `*.json`
/// fixtures; parser corpora are not fixtures and are skipped).
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.extension().is_some_and(|x| x == "json")
                        && f.file_name()
                            .is_some_and(|n| !n.to_string_lossy().starts_with("parser_"))
                })
                .collect();
            v.sort();
            out.extend(v);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or folder", p.display()));
        }
    }
    Ok(out)
}
