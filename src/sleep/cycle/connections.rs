//! Phase 10: cross-domain connections and belief trajectories.

use super::context::*;

/// Words of predicates that co-occurrence can support: weak, associative
/// relations (an interest, a use, a collaboration).
pub(super) const ASSOCIATIVE_WORDS: &[&str] = &[
    "related",
    "associated",
    "interested",
    "interest",
    "uses",
    "use",
    "works",
    "mentions",
    "involves",
    "participates",
    "collaborates",
    "attends",
    "frequents",
    "likes",
    "enjoys",
    "studies",
    "practises",
    "practices",
    "plays",
    "follows",
    "discusses",
    "visits",
];

/// Words of relations co-occurrence never supports: family, identity,
/// origin and other facts that need to be said, not inferred.
pub(super) const NEVER_INFERRED_WORDS: &[&str] = &[
    "married",
    "spouse",
    "husband",
    "wife",
    "partner",
    "parent",
    "child",
    "son",
    "daughter",
    "father",
    "mother",
    "sibling",
    "brother",
    "sister",
    "family",
    "relative",
    "grandparent",
    "grandchild",
    "born",
    "birth",
    "identity",
    "same",
    "alias",
    "is",
    "owns",
    "employed",
];

/// Whether co-occurrence may propose this predicate: the schema says so
/// (`associative: true`), or its name reads as a weak association and
/// never as a family, identity or origin relation.
pub(super) fn associative(name: &str, attrs: &Value) -> bool {
    if let Some(b) = attrs.get("associative").and_then(Value::as_bool) {
        return b;
    }
    let words: Vec<String> = name
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .collect();
    !words
        .iter()
        .any(|w| NEVER_INFERRED_WORDS.contains(&w.as_str()))
        && words
            .iter()
            .any(|w| ASSOCIATIVE_WORDS.contains(&w.as_str()))
}

pub(super) fn connections(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    // 10A: implicit connections, only through registered predicates
    cx.step("implicit connections", 0, 0);
    let mut pairs: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for ev in recent_events(cx, nx)? {
        for p in &ev.participants {
            for k in &ev.key_concepts {
                if k != p {
                    pairs
                        .entry((p.clone(), k.clone()))
                        .or_default()
                        .push(ev.id.clone());
                }
            }
        }
    }
    let preds: Vec<(String, Value)> = predicates(nx)?;
    let mut drafts = Vec::new();
    // pairs no registered associative predicate can link: logged for
    // review, never linked by an invented relation (10A)
    let mut unmatched: Vec<String> = Vec::new();
    for ((person, concept), evs) in pairs.into_iter().filter(|(_, e)| e.len() >= 5) {
        cx.cancelled()?;
        let st = find(
            nx,
            r#"FIND(?x.type) WHERE { ?x {name: :n} } LIMIT 2"#,
            json!({"n": person}),
        )?;
        let ot = find(
            nx,
            r#"FIND(?x.type) WHERE { ?x {name: :n} } LIMIT 2"#,
            json!({"n": concept}),
        )?;
        let (Some(st), Some(ot)) = (
            strs(Some(&st)).first().cloned(),
            strs(Some(&ot)).first().cloned(),
        ) else {
            continue;
        };
        // a domain is where a concept is filed, not what it is about
        if st == "Domain" || ot == "Domain" {
            continue;
        }
        let mut matched = false;
        for (pn, attrs) in &preds {
            if STRUCTURAL.contains(&pn.as_str()) || pn == "knows" || !associative(pn, attrs) {
                continue;
            }
            let subj_ok = strs(attrs.get("subject_types")).contains(&st);
            let obj_ok = strs(attrs.get("object_types")).contains(&ot);
            if !(subj_ok && obj_ok) {
                continue;
            }
            matched = true;
            let text = format!(
                r#"FIND(COUNT(?l)) WHERE {{ ?l ({{type: :st, name: :sn}}, {}, {{type: :ot, name: :on}}) }}"#,
                q(pn)
            );
            let have = find(
                nx,
                &text,
                json!({"st": st, "sn": person, "ot": ot, "on": concept}),
            )?;
            if count_of(&have) > 0 {
                continue;
            }
            // never a second value of a single-valued predicate
            if attrs.get("cardinality").and_then(Value::as_str) == Some("single") {
                let text = format!(
                    r#"FIND(COUNT(?l)) WHERE {{ ?l ({{type: :st, name: :sn}}, {}, ?o) FILTER(IS_NULL(?l.metadata.superseded) || ?l.metadata.superseded != true) }}"#,
                    q(pn)
                );
                let any = find(nx, &text, json!({"st": st, "sn": person}))?;
                if count_of(&any) > 0 {
                    continue;
                }
            }
            drafts.push(Draft {
                class: "connection".into(),
                key: format!("connect:{st}:{person}:{pn}:{ot}:{concept}"),
                title: format!("{person} {pn} {concept}?"),
                commands: vec![format!(
                    r#"UPSERT {{
  PROPOSITION ?link {{
    ({{type: :st, name: :sn}}, {}, {{type: :ot, name: :on}})
  }}
}}
WITH METADATA {{ source: "CrossDomainInference", author: "$system", confidence: 0.6, created_at: :ts }}"#,
                    q(pn)
                )],
                params: pm(json!({"st": st, "sn": person, "ot": ot, "on": concept, "ts": cx.opts.now})),
                rationale: format!("{} Events involve {person} and {concept}, and `{pn}` links a {st} to a {ot}; there is no such link yet", evs.len()),
                evidence: evs.iter().take(10).cloned().collect(),
                confidence: 0.6,
            });
        }
        if !matched {
            unmatched.push(format!(
                "{person} ({st}) and {concept} ({ot}) share {} Events",
                evs.len()
            ));
        }
    }
    cx.count("connection_candidates_unmatched", unmatched.len() as i64);
    if !unmatched.is_empty() {
        let shown = unmatched.len().min(10);
        let line = format!(
            "{} connection candidate{} no registered associative predicate can link (define one with `associative: true` and its subject and object types, or leave them): {}{}",
            unmatched.len(),
            if unmatched.len() == 1 { "" } else { "s" },
            unmatched[..shown].join("; "),
            if unmatched.len() > shown {
                format!("; and {} more", unmatched.len() - shown)
            } else {
                String::new()
            }
        );
        cx.line(line.clone());
        cx.report.recommendations.push(line);
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("connections", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed {n} implicit connections from shared Events"
        ));
    }
    // the people an Event names
    super::mentions::people_named(cx, nx)?;
    // 10B: schema completeness
    super::completeness::completeness(cx, nx)?;
    // 10C: belief trajectories
    cx.step("belief trajectories", 0, 0);
    let v = find(
        nx,
        r#"FIND(?link, ?s, ?o) WHERE { ?link (?s, ?p, ?o) FILTER(?link.metadata.superseded == true) } LIMIT 200"#,
        json!({}),
    )?;
    let mut n = 0;
    for r in rows(&v, 3) {
        n += 1;
        cx.line(format!(
            "Trajectory: {} {} \"{}\" superseded by {} on {}",
            s(&r[1], &["name"]),
            s(&r[0], &["predicate"]),
            s(&r[2], &["name"]),
            s(&r[0], &["metadata", "superseded_by"]),
            s(&r[0], &["metadata", "superseded_at"])
        ));
    }
    cx.count("superseded", n);
    Ok(())
}
