//! Phase 9: contradictions and state evolution.

use super::*;

pub(super) fn fact(l: &Value, o: &Value) -> FactView {
    let m = l.get("metadata").cloned().unwrap_or(Value::Null);
    let attrs = o.get("attributes").cloned().unwrap_or(Value::Null);
    FactView {
        link: s(l, &["id"]),
        object_type: s(o, &["type"]),
        object: s(o, &["name"]),
        observed_at: m
            .get("observed_at")
            .and_then(Value::as_str)
            .or_else(|| attrs.get("last_observed").and_then(Value::as_str))
            .map(str::to_string),
        confidence: m.get("confidence").and_then(Value::as_f64),
        source: m.get("source").and_then(Value::as_str).map(str::to_string),
    }
}

/// A link with its subject and object, as FIND returns them.
pub(super) type Triple = (Value, Value, Value);

/// Conflicting facts: two active links of a single-valued predicate from
/// one subject, or two active links from one subject and predicate to
/// objects in the same slot (`Diet: vegetarian` / `Diet: pescatarian`).
/// Never across subjects or predicates.
pub(super) fn conflicts(nx: &mut Nexus, subject: Option<&str>) -> KipResult<Vec<Conflict>> {
    let mut out = Vec::new();
    for (p, attrs) in predicates(nx)? {
        if STRUCTURAL.contains(&p.as_str()) {
            continue;
        }
        let single = attrs.get("cardinality").and_then(Value::as_str) == Some("single");
        let text = format!(
            r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.archived) || ?link.metadata.archived != true)
  {}
}} LIMIT 20000"#,
            q(&p),
            if single {
                ""
            } else {
                r#"FILTER(CONTAINS(?o.name, ": "))"#
            }
        );
        let v = find(nx, &text, json!({}))?;
        let mut groups: BTreeMap<(String, String), Vec<Triple>> = BTreeMap::new();
        for r in rows(&v, 3) {
            let sid = s(&r[0], &["subject"]);
            if let Some(want) = subject
                && s(&r[1], &["name"]) != want
            {
                continue;
            }
            let slot = if single {
                "single-valued predicate".to_string()
            } else {
                let on = s(&r[2], &["name"]);
                let slot = s(&r[2], &["attributes", "slot"]);
                if !slot.is_empty() {
                    slot
                } else {
                    format!(
                        "{}: {}",
                        s(&r[2], &["type"]),
                        on.split(": ").next().unwrap_or("")
                    )
                }
            };
            groups
                .entry((sid, slot))
                .or_default()
                .push((r[0].clone(), r[1].clone(), r[2].clone()));
        }
        for ((_, slot), g) in groups {
            if g.len() < 2 {
                continue;
            }
            // each pair with the newest: n-1 conflicts
            let mut facts: Vec<(FactView, &Value)> =
                g.iter().map(|(l, sj, o)| (fact(l, o), sj)).collect();
            facts.sort_by_key(|a| observed(&a.0));
            let (newest, subj) = facts
                .last()
                .cloned()
                .unwrap_or_else(|| (fact(&Value::Null, &Value::Null), &Value::Null));
            for (f, _) in facts.iter().take(facts.len() - 1) {
                out.push(Conflict {
                    subject_type: s(subj, &["type"]),
                    subject: s(subj, &["name"]),
                    predicate: p.clone(),
                    slot: slot.clone(),
                    a: f.clone(),
                    b: newest.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// The commands that carry out a resolution of a conflict.
pub fn resolution_commands(
    c: &Conflict,
    verdict: Verdict,
    now: &str,
    note: &str,
) -> (Vec<String>, Map<String, Value>) {
    let (older, newer) = if observed(&c.a) <= observed(&c.b) {
        (&c.a, &c.b)
    } else {
        (&c.b, &c.a)
    };
    let supersede = |old: &FactView, cur: &FactView| -> (Vec<String>, Map<String, Value>) {
        (
            vec![r#"UPSERT {
  PROPOSITION ?old_link { (id: :old_link_id) }
  WITH METADATA { superseded: true, superseded_at: :timestamp, superseded_by: :current_link_id, superseded_reason: :reason, resolved_by: "ContradictionResolution", confidence: 0.1 }
  PROPOSITION ?current_link { (id: :current_link_id) }
  WITH METADATA { supersedes: :old_link_id, evolution_note: :temporal_context, resolved_by: "ContradictionResolution", confidence: :boosted_confidence }
}"#
                .to_string()],
            pm(json!({
                "old_link_id": old.link, "current_link_id": cur.link, "timestamp": now,
                "reason": note,
                "temporal_context": format!("{} {} {} from {}; before that {} (observed {})", c.subject, c.predicate, cur.object, cur.observed_at.as_deref().unwrap_or("?"), old.object, old.observed_at.as_deref().unwrap_or("?")),
                "boosted_confidence": ((cur.confidence.unwrap_or(0.8) + 0.05).min(0.99) * 100.0).round() / 100.0,
            })),
        )
    };
    match verdict {
        Verdict::KeepNewer => supersede(older, newer),
        Verdict::KeepOlder => supersede(newer, older),
        Verdict::BothValid => (
            vec![r#"UPSERT {
  PROPOSITION ?old_link { (id: :old_link_id) }
  WITH METADATA { valid_until: :boundary, evolution_note: :note, resolved_by: "ContradictionResolution" }
  PROPOSITION ?current_link { (id: :current_link_id) }
  WITH METADATA { valid_from: :boundary, evolution_note: :note, resolved_by: "ContradictionResolution" }
}"#
                .to_string()],
            pm(json!({"old_link_id": older.link, "current_link_id": newer.link, "boundary": newer.observed_at.clone().unwrap_or_else(|| now.to_string()), "timestamp": now, "note": note})),
        ),
        Verdict::Merge => (
            vec![r#"MERGE CONCEPT ?dup INTO ?canonical
WHERE {
  ?dup {type: :old_type, name: :old_name}
  ?canonical {type: :new_type, name: :new_name}
}"#
            .to_string()],
            pm(json!({"old_type": older.object_type, "old_name": older.object, "new_type": newer.object_type, "new_name": newer.object})),
        ),
        Verdict::NeedsContext => (
            vec![r#"UPSERT {
  PROPOSITION ?a { (id: :a_id) }
  PROPOSITION ?b { (id: :b_id) }
}
WITH METADATA { disputed: true, disputed_at: :timestamp, dispute_note: :note }"#
                .to_string()],
            pm(json!({"a_id": older.link, "b_id": newer.link, "timestamp": now, "note": note})),
        ),
    }
}

/// A conflict's identity, whichever fact came first.
pub(super) fn conflict_key(c: &Conflict) -> String {
    let (x, y) = if c.a.link < c.b.link {
        (&c.a.link, &c.b.link)
    } else {
        (&c.b.link, &c.a.link)
    };
    format!("conflict:{x}|{y}")
}

/// Each conflict's proposed resolution, as a draft with its verdict.
pub(super) fn contradiction_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    found: &[Conflict],
) -> KipResult<Vec<(Draft, Verdict)>> {
    cx.step("contradictions", 0, 0);
    let resolutions = cx.reasoner.current_fact(&mut Look(nx), found)?;
    let mut drafts = Vec::new();
    for (c, r) in found.iter().zip(resolutions) {
        let (commands, params) = resolution_commands(c, r.verdict, &cx.opts.now, &r.rationale);
        drafts.push((
            Draft {
                class: "contradiction".into(),
                key: conflict_key(c),
                title: format!(
                    "{} {}: \"{}\" vs \"{}\" → {}",
                    c.subject,
                    c.predicate,
                    c.a.object,
                    c.b.object,
                    r.verdict.as_str()
                ),
                commands,
                params,
                rationale: format!("{} ({})", r.rationale, c.slot),
                evidence: vec![c.a.link.clone(), c.b.link.clone()],
                confidence: r.confidence,
            },
            r.verdict,
        ));
    }
    Ok(drafts)
}

pub(super) fn contradictions(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let found = conflicts(nx, None)?;
    let drafts = contradiction_drafts(cx, nx, &found)?;
    let verdicts: Vec<Verdict> = drafts.iter().map(|(_, v)| *v).collect();
    let keys = stage(cx, nx, drafts.into_iter().map(|(d, _)| d).collect())?;
    for (c, verdict) in found.iter().zip(verdicts) {
        let key = conflict_key(c);
        let Some((proposal, item)) = keys.get(&key) else {
            continue;
        };
        let id = |l: &str| store::ids::parse_element_id(l).unwrap_or(0);
        let subject: i64 = nx
            .conn()
            .query_row(
                "SELECT subject FROM propositions WHERE id = ?1",
                [id(&c.a.link)],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        nx.conn().execute(
            "INSERT INTO contradictions(run, found_at, subject, predicate, slot, fact_a, fact_b, detail, status, resolution, proposal, item) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'open', ?9, ?10, ?11)",
            params![cx.run, store::now(), subject, c.predicate, c.slot, id(&c.a.link), id(&c.b.link), serde_json::to_string(c).unwrap_or_default(), verdict.as_str(), proposal, item],
        )?;
        cx.line(format!(
            "Contradiction: {} {} \"{}\" (observed {}) vs \"{}\" (observed {})",
            c.subject,
            c.predicate,
            c.a.object,
            c.a.observed_at.as_deref().unwrap_or("?"),
            c.b.object,
            c.b.observed_at.as_deref().unwrap_or("?")
        ));
    }
    cx.count("contradictions", found.len() as i64);
    if found.is_empty() {
        cx.line("No contradictions".into());
    }
    Ok(())
}

/// When a fact was observed, as an instant (unknown sorts first).
fn observed(f: &FactView) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    f.observed_at.as_deref().and_then(super::instant)
}
