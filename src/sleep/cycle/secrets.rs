//! Secrets kept in memory (API keys, tokens, private keys, passwords,
//! seed phrases: `crate::secrets`), found and proposed for redaction.
//! Runs in phase 11 (the memory's health before waking). A redaction
//! replaces each secret in the attribute with `[redacted <rule>]`, so the
//! fact that a secret existed stays, and records the rules in the
//! element's `redacted_secrets` metadata. Titles, rationales, reports and
//! the health list name the element, the attribute and the rule, never
//! the value.

use super::context::*;
use crate::secrets;

/// One attribute holding secrets.
#[derive(Debug, Clone)]
pub struct Held {
    pub id: String,
    pub ty: String,
    pub name: String,
    pub attribute: String,
    /// The rules that found them, one per secret.
    pub rules: Vec<String>,
    /// The attribute's value with each secret masked.
    pub redacted: Value,
}

/// Concept types never scanned: the schema and the cycle's bookkeeping.
const NOT_SCANNED: [&str; 3] = ["$ConceptType", "$PropositionType", "SleepTask"];

/// Concepts read per page of a scan (every concept is scanned, a page
/// at a time, each page starting after the last id of the one before).
pub const SCAN_PAGE: i64 = 5_000;

/// Masks secrets in a string, or in each string of a list; `None` when
/// there are none.
fn redact_value(v: &Value) -> Option<(Value, Vec<String>)> {
    match v {
        Value::String(s) => {
            let (out, rules) = secrets::redact(s);
            (!rules.is_empty()).then(|| (json!(out), rules))
        }
        Value::Array(items) => {
            let mut all = Vec::new();
            let out: Vec<Value> = items
                .iter()
                .map(|i| match redact_value(i) {
                    Some((r, rules)) => {
                        all.extend(rules);
                        r
                    }
                    None => i.clone(),
                })
                .collect();
            (!all.is_empty()).then(|| (Value::Array(out), all))
        }
        _ => None,
    }
}

/// Every concept attribute holding a secret; a secret in a name is
/// listed with `attribute` "name" (a name cannot be redacted in place).
/// Reads each concept's name and attributes only, a page of ids at a
/// time: its cost grows with the memory, never with its square.
pub fn scan(nx: &mut Nexus) -> KipResult<Vec<Held>> {
    let mut out = Vec::new();
    let mut after = 0i64;
    loop {
        let rows = nx.db().query(
            "SELECT id, type, name, attributes FROM concepts WHERE id > ?1 ORDER BY id LIMIT ?2",
            crate::args![after, SCAN_PAGE],
        )?;
        let Some(last) = rows.last() else { break };
        after = last.i64(0)?;
        let full = rows.len() as i64 == SCAN_PAGE;
        for r in rows {
            let ty = r.text(1)?;
            if NOT_SCANNED.contains(&ty.as_str()) {
                continue;
            }
            let name = r.text(2)?;
            let id = store::ids::concept_id(r.i64(0)?);
            let held = |attribute: &str, rules: Vec<String>, redacted: Value| Held {
                id: id.clone(),
                ty: ty.clone(),
                name: name.clone(),
                attribute: attribute.to_string(),
                rules,
                redacted,
            };
            let found = secrets::find(&name);
            if !found.is_empty() {
                out.push(held(
                    "name",
                    found.into_iter().map(|f| f.rule).collect(),
                    Value::Null,
                ));
            }
            if let Value::Object(attrs) = r.json(3)? {
                for (k, v) in &attrs {
                    if let Some((r, rules)) = redact_value(v) {
                        out.push(held(k, rules, r));
                    }
                }
            }
        }
        if !full {
            break;
        }
    }
    Ok(out)
}

/// `github-pat, password ×2`.
pub fn rule_list(rules: &[String]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rules {
        *counts.entry(r.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(r, n)| {
            if n > 1 {
                format!("{r} ×{n}")
            } else {
                r.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn propose_redactions(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("secrets", 0, 0);
    let held = scan(nx)?;
    let mut drafts = Vec::new();
    let mut in_names = 0;
    for h in &held {
        if h.attribute == "name" {
            in_names += 1;
            continue;
        }
        let n = h.rules.len();
        drafts.push(Draft {
            class: "redact".into(),
            key: format!("redact:{}:{}", h.id, h.attribute),
            title: format!(
                "Redact {n} secret{} ({}) in {} \"{}\": {}",
                if n == 1 { "" } else { "s" },
                rule_list(&h.rules),
                h.ty,
                h.name,
                h.attribute
            ),
            commands: vec![format!(
                r#"UPSERT {{ CONCEPT ?c {{ {{type: :type, name: :name}} SET ATTRIBUTES {{ {}: :redacted }} }} }} WITH METADATA {{ redacted_secrets: :rules, redacted_at: :ts }}"#,
                json!(h.attribute)
            )],
            params: pm(json!({
                "type": h.ty,
                "name": h.name,
                "redacted": h.redacted,
                "rules": h.rules,
                "ts": cx.opts.now,
            })),
            rationale: format!(
                "a secret kept in memory can be read by every reader of the memory; the value is replaced by a mark naming its kind ({}), so the memory still says a secret was there",
                rule_list(&h.rules)
            ),
            evidence: vec![h.id.clone()],
            confidence: 0.9,
        });
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("secrets", held.len() as i64);
    if !held.is_empty() {
        cx.line(format!(
            "Found secrets in {} attributes: proposed redacting {n}{}",
            held.len(),
            if in_names > 0 {
                format!("; {in_names} in names (rename them by hand)")
            } else {
                String::new()
            }
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_redacted_item_by_item() {
        let v = json!(["wifi password: hunter22", "likes tea"]);
        let (r, rules) = redact_value(&v).expect("found");
        assert_eq!(
            r,
            json!(["wifi password: [redacted password]", "likes tea"])
        );
        assert_eq!(rules, vec!["password"]);
        assert!(redact_value(&json!(["likes tea"])).is_none());
        assert_eq!(rule_list(&["a".into(), "b".into(), "a".into()]), "a ×2, b");
    }
}
