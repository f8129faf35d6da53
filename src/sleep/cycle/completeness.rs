//! Phase 10B: schema completeness, the relationships a memory is expected
//! to hold and does not: people linked to nothing (known by nothing but a
//! name, or only by what their attributes say), and
//! Events whose key concepts were never elevated to semantic knowledge.
//! Reported with the names behind each count; nothing is written (what is
//! missing is for the agent to learn, not for the cycle to invent).

use super::context::*;

/// Names listed per finding at most.
const SHOWN: usize = 10;
/// Key concepts looked up per cycle at most.
const KEYS_CHECKED: usize = 500;

fn listed(names: &[String]) -> String {
    let shown = names.len().min(SHOWN);
    format!(
        "{}{}",
        names[..shown].join(", "),
        if names.len() > shown {
            format!(" and {} more", names.len() - shown)
        } else {
            String::new()
        }
    )
}

pub(super) fn completeness(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("schema completeness", 0, 0);
    // people with no relation at all: no link from or to them but their
    // domain
    let (people, events, present) = cx.unlocked(nx, |nx| {
        let people = find(
            nx,
            r#"FIND(?p.name, ?p.attributes) WHERE {
  ?p {type: "Person"}
  FILTER(?p.name != "$self" && ?p.name != "$system")
  NOT { (?p, ?r, ?x) FILTER(?r != "belongs_to_domain") }
  NOT { (?y, ?q, ?p) }
} LIMIT 1000"#,
            json!({}),
        )?;
        let events = find(
            nx,
            r#"FIND(?e.name, ?e.attributes.key_concepts) WHERE {
  ?e {type: "Event"}
  FILTER(IS_NOT_NULL(?e.attributes.key_concepts))
  FILTER(?e.attributes.consolidation_status != "archived")
} LIMIT 2000"#,
            json!({}),
        )?;
        // a person an Event names as a participant is known by more than
        // a name
        let present = find(
            nx,
            r#"FIND(?e.attributes.participants) WHERE {
  ?e {type: "Event"}
  FILTER(IS_NOT_NULL(?e.attributes.participants))
} LIMIT 5000"#,
            json!({}),
        )?;
        Ok((people, events, present))
    })?;
    let present: HashSet<String> = present
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| strs(Some(p)))
        .collect();
    // linked to nothing: known by nothing but a name, or only by what
    // its attributes say (a description, a profile)
    let (mut bare, mut described) = (Vec::new(), Vec::new());
    for r in people.as_array().into_iter().flatten() {
        let Some(name) = r.get(0).and_then(Value::as_str) else {
            continue;
        };
        if present.contains(name) {
            continue;
        }
        if r.get(1).is_some_and(describes) {
            described.push(name.to_string());
        } else {
            bare.push(name.to_string());
        }
    }
    cx.count(
        "persons_without_relations",
        (bare.len() + described.len()) as i64,
    );
    let one = |n: usize, one: &str, many: &str| if n == 1 { one } else { many }.to_string();
    if !bare.is_empty() {
        cx.report.recommendations.push(format!(
            "{} {} nothing but a name (no preference, relation or Event): {}",
            bare.len(),
            one(bare.len(), "Person has", "Persons have"),
            listed(&bare)
        ));
    }
    if !described.is_empty() {
        cx.report.recommendations.push(format!(
            "{} {} linked to nothing (no preference, relation or Event), known only by {} attributes: {}",
            described.len(),
            one(described.len(), "Person is", "Persons are"),
            one(described.len(), "its", "their"),
            listed(&described)
        ));
    }
    // key concepts Events name that no concept holds
    let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in events.as_array().into_iter().flatten() {
        let ev = r.get(0).and_then(Value::as_str).unwrap_or("").to_string();
        for k in strs(r.get(1)) {
            if !k.trim().is_empty() {
                keys.entry(k).or_default().push(ev.clone());
            }
        }
    }
    let mut missing: Vec<String> = Vec::new();
    for (i, (k, evs)) in keys.iter().take(KEYS_CHECKED).enumerate() {
        if i % 50 == 0 {
            cx.cancelled()?;
        }
        let n = find(
            nx,
            r#"FIND(COUNT(?x)) WHERE { ?x {name: :n} }"#,
            json!({"n": k}),
        );
        let n = match n {
            Ok(v) => count_of(&v),
            Err(e) if e.code == ErrorCode::NotFound => 0,
            Err(e) => return Err(e),
        };
        if n == 0 {
            missing.push(format!(
                "\"{k}\" ({} Event{})",
                evs.len(),
                if evs.len() == 1 { "" } else { "s" }
            ));
        }
    }
    cx.count("key_concepts_not_elevated", missing.len() as i64);
    if !missing.is_empty() {
        cx.report.recommendations.push(format!(
            "{} key concept{} of Events never elevated to semantic knowledge (no concept holds {}): {}",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            if missing.len() == 1 { "it" } else { "them" },
            listed(&missing)
        ));
    }
    cx.line(format!(
        "Schema completeness: {} Persons without relations, {} key concepts not elevated",
        bare.len() + described.len(),
        missing.len()
    ));
    Ok(())
}

/// Attributes that only name or file a person: no knowledge of them.
const NAMING: [&str; 4] = ["name", "person_class", "aliases", "id"];

/// Whether a person's attributes say anything of them beyond their name:
/// one that is not a name, a class or an id, and not empty.
fn describes(attrs: &Value) -> bool {
    attrs.as_object().is_some_and(|m| {
        m.iter().any(|(k, v)| {
            !NAMING.contains(&k.as_str())
                && !k.ends_with("_id")
                && match v {
                    Value::Null => false,
                    Value::String(s) => !s.trim().is_empty(),
                    Value::Array(a) => !a.is_empty(),
                    Value::Object(o) => !o.is_empty(),
                    _ => true,
                }
        })
    })
}
