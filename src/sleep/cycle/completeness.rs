//! Phase 10B: schema completeness, the relationships a memory is expected
//! to hold and does not: people it knows nothing about but their name, and
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
            r#"FIND(?p.name) WHERE {
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
    let lonely: Vec<String> = strs(Some(&people))
        .into_iter()
        .filter(|p| !present.contains(p))
        .collect();
    cx.count("persons_without_relations", lonely.len() as i64);
    if !lonely.is_empty() {
        cx.report.recommendations.push(format!(
            "{} {} nothing but a name (no preference, relation or Event): {}",
            lonely.len(),
            if lonely.len() == 1 {
                "Person has"
            } else {
                "Persons have"
            },
            listed(&lonely)
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
        lonely.len(),
        missing.len()
    ));
    Ok(())
}
