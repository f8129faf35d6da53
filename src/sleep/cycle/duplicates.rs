//! Phase 6: duplicate detection and merge proposals.

use super::*;

/// Types whose nodes are episodes or bookkeeping, never deduplicated.
pub(super) const NO_DEDUP: &[&str] = &[
    "Event",
    "SleepTask",
    "Commitment",
    "Domain",
    "$ConceptType",
    "$PropositionType",
];

pub(super) fn concept_view(nx: &mut Nexus, node: &Value) -> KipResult<ConceptView> {
    let id = s(node, &["id"]);
    let links = {
        let c = store::ids::parse_concept_id(&id).unwrap_or(0);
        nx.db()
            .query_i64(
                "SELECT (SELECT COUNT(*) FROM propositions WHERE subject = ?1) + (SELECT COUNT(*) FROM propositions WHERE object = ?1)",
                crate::args![c],
            )?
            .unwrap_or(0)
    };
    let attrs = node.get("attributes").cloned().unwrap_or(Value::Null);
    let c = store::ids::parse_concept_id(&id).unwrap_or(0);
    let neighbours = nx
        .db()
        .query(
            "SELECT c.type, c.name FROM propositions p JOIN concepts c ON c.id = CASE WHEN p.subject = ?1 THEN p.object ELSE p.subject END \
             WHERE (p.subject = ?1 OR p.object = ?1) AND p.predicate <> 'belongs_to_domain' LIMIT 100",
            crate::args![c],
        )?
        .iter()
        .map(|r| Ok(format!("{}:{}", r.text(0)?, r.text(1)?)))
        .collect::<KipResult<Vec<_>>>()?;
    Ok(ConceptView {
        id,
        ty: s(node, &["type"]),
        name: s(node, &["name"]),
        aliases: strs(attrs.get("aliases")),
        description: s(&attrs, &["description"]),
        attributes: attrs,
        links,
        neighbours,
    })
}

pub(super) fn duplicate_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    only: Option<(&str, &str)>,
) -> KipResult<Vec<Draft>> {
    let types: Vec<String> = match only {
        Some((t, _)) => vec![t.to_string()],
        None => concept_types(nx)?,
    };
    let mut nodes = Vec::new();
    for t in types.iter().filter(|t| !NO_DEDUP.contains(&t.as_str())) {
        cx.step(&format!("duplicates among {t}"), 0, 0);
        let v = find(
            nx,
            r#"FIND(?c) WHERE { ?c {type: :t} } LIMIT 50000"#,
            json!({"t": t}),
        )?;
        nodes.extend(
            v.as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|n| !s(n, &["name"]).starts_with('$')),
        );
    }
    let named: Vec<similarity::Named> = nodes
        .iter()
        .map(|n| similarity::Named {
            id: store::ids::parse_concept_id(&s(n, &["id"])).unwrap_or(0),
            ty: s(n, &["type"]),
            name: s(n, &["name"]),
            aliases: strs(n.get("attributes").and_then(|a| a.get("aliases"))),
            description: s(n, &["attributes", "description"]),
        })
        .collect();
    let matches = similarity::duplicates(&named);
    let mut cands = Vec::new();
    let mut ends = Vec::new();
    for m in matches {
        if let Some((_, target)) = only
            && named[m.a].name != target
            && named[m.b].name != target
        {
            continue;
        }
        cands.push(Candidate {
            a: concept_view(nx, &nodes[m.a])?,
            b: concept_view(nx, &nodes[m.b])?,
            rule: m.rule.into(),
            score: m.score,
        });
        ends.push((m.a, m.b));
    }
    let judged = cx.reasoner.same_entity(&mut Look(nx), &cands)?;
    // the pairs judged one thing, and the pairs judged apart
    let mut same = Vec::new();
    let mut apart = HashSet::new();
    // the element each pair would keep, counted per element
    let mut kept: HashMap<usize, usize> = HashMap::new();
    let mut why: HashMap<(usize, usize), (String, f64)> = HashMap::new();
    for ((c, j), &(a, b)) in cands.iter().zip(judged).zip(&ends) {
        let is_same = j.same && c.a.ty == c.b.ty;
        cx.rule(&format!("duplicates: {}", c.rule), is_same);
        if !is_same {
            apart.insert((a.min(b), a.max(b)));
            for (x, y) in [(&c.a, &c.b), (&c.b, &c.a)] {
                decay::note(
                    nx,
                    &x.id,
                    &format!("{}:{}", x.ty, x.name),
                    cx.run,
                    "not merged",
                    &c.rule,
                    &json!({"with": format!("{}:{}", y.ty, y.name), "why": j.rationale, "confidence": j.confidence}),
                )?;
            }
            continue;
        }
        *kept.entry(if j.keep_a { a } else { b }).or_default() += 1;
        same.push((a, b, j.confidence));
        why.insert((a.min(b), a.max(b)), (j.rationale.clone(), j.confidence));
    }
    let mut drafts = Vec::new();
    for group in similarity::clusters::clusters(named.len(), &same, &apart) {
        // the one most pairs would keep; a tie, the oldest
        let keep = *group
            .iter()
            .max_by_key(|&&i| {
                (
                    kept.get(&i).copied().unwrap_or(0),
                    std::cmp::Reverse(named[i].id),
                )
            })
            .unwrap_or(&group[0]);
        let dups: Vec<usize> = group.iter().copied().filter(|&i| i != keep).collect();
        let k = &named[keep];
        let mut reasons = Vec::new();
        let mut confidence: f64 = 1.0;
        for (i, &x) in group.iter().enumerate() {
            for &y in &group[i + 1..] {
                if let Some((r, c)) = why.get(&(x.min(y), x.max(y))) {
                    confidence = confidence.min(*c);
                    reasons.push(if group.len() > 2 {
                        format!("\"{}\" ~ \"{}\": {r}", named[x].name, named[y].name)
                    } else {
                        r.clone()
                    });
                }
            }
        }
        let concept_id = |i: usize| format!("C:{}", named[i].id);
        // (sorted as text: the key a pair had before clusters)
        let mut ids: Vec<String> = group.iter().map(|&i| concept_id(i)).collect();
        ids.sort_unstable();
        let mut params = json!({"type": k.ty, "canonical_name": k.name});
        let mut commands = Vec::new();
        for (n, &d) in dups.iter().enumerate() {
            let key = if dups.len() == 1 {
                "duplicate_name".to_string()
            } else {
                format!("duplicate_name_{}", n + 1)
            };
            params[&key] = json!(named[d].name);
            commands.push(format!(
                r#"MERGE CONCEPT ?dup INTO ?canonical
WHERE {{
  ?dup {{type: :type, name: :{key}}}
  ?canonical {{type: :type, name: :canonical_name}}
}}"#
            ));
        }
        // the duplicates' better values go onto the canonical node first:
        // MERGE only fills what it lacks (instructions, phase 6)
        let (better, kept_notes) = better_values(
            &nodes[keep],
            &dups.iter().map(|&d| &nodes[d]).collect::<Vec<_>>(),
        );
        if !better.is_empty() {
            let mut sets = Vec::new();
            for (j, (attr, v)) in better.iter().enumerate() {
                sets.push(format!("{}: :better_{j}", Value::String(attr.clone())));
                params[format!("better_{j}")] = v.clone();
            }
            commands.insert(
                0,
                format!(
                    "UPSERT {{ CONCEPT ?canonical {{ {{type: :type, name: :canonical_name}} SET ATTRIBUTES {{ {} }} }} }}",
                    sets.join(", ")
                ),
            );
        }
        for n in kept_notes {
            reasons.push(n);
        }
        let names: Vec<String> = dups
            .iter()
            .map(|&d| format!("\"{}\"", named[d].name))
            .collect();
        drafts.push(Draft {
            class: "merge".into(),
            key: format!("merge:{}", ids.join("|")),
            title: match names.len() {
                1 => format!("Merge {} {} into \"{}\"", k.ty, names[0], k.name),
                n => format!(
                    "Merge {n} {} ({}) into \"{}\"",
                    k.ty,
                    names.join(", "),
                    k.name
                ),
            },
            commands,
            params: pm(params),
            rationale: reasons.join("; "),
            evidence: dups
                .iter()
                .map(|&d| concept_id(d))
                .chain([concept_id(keep)])
                .collect(),
            confidence,
        });
    }
    Ok(drafts)
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn confidence_of(n: &Value) -> f64 {
    n.pointer("/metadata/confidence")
        .and_then(Value::as_f64)
        .unwrap_or(0.5)
}

/// The attribute values of the duplicates that are better than the
/// canonical node's, to write onto it before the merge (MERGE keeps the
/// canonical value on a conflict): where the canonical value is empty;
/// lists joined; a text that says more and contains the canonical one
/// ("Berlin" → "Berlin, Germany"); the value of a duplicate recorded with
/// more confidence. A conflict the canonical value wins is said, so the
/// operator sees the value the merge drops. Aliases are MERGE's to join.
pub(super) fn better_values(
    canonical: &Value,
    dups: &[&Value],
) -> (Map<String, Value>, Vec<String>) {
    let mut out: Map<String, Value> = Map::new();
    let mut notes = Vec::new();
    let base = canonical
        .get("attributes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let cc = confidence_of(canonical);
    for d in dups {
        let dname = s(d, &["name"]);
        let dc = confidence_of(d);
        let Some(attrs) = d.get("attributes").and_then(Value::as_object) else {
            continue;
        };
        for (k, dv) in attrs {
            if k == "aliases" || k.starts_with('_') || empty(dv) {
                continue;
            }
            let cur = out.get(k).or_else(|| base.get(k)).cloned();
            let Some(cv) = cur else {
                continue; // MERGE fills what the canonical node lacks
            };
            if &cv == dv {
                continue;
            }
            let pick = if empty(&cv) {
                Some((
                    dv.clone(),
                    format!("{k}: \"{dname}\"'s value, the canonical one was empty"),
                ))
            } else if let (Value::Array(a), Value::Array(b)) = (&cv, dv) {
                let mut joined = a.clone();
                for x in b {
                    if !joined.contains(x) {
                        joined.push(x.clone());
                    }
                }
                (joined.len() > a.len()).then(|| {
                    (
                        Value::Array(joined),
                        format!("{k}: joined with \"{dname}\"'s"),
                    )
                })
            } else if let (Value::String(a), Value::String(b)) = (&cv, dv)
                && b.len() > a.len()
                && b.to_lowercase().contains(&a.to_lowercase())
            {
                Some((
                    dv.clone(),
                    format!("{k}: \"{b}\" from \"{dname}\" says more than \"{a}\""),
                ))
            } else if dc > cc {
                Some((
                    dv.clone(),
                    format!("{k}: \"{dname}\"'s {dv} (confidence {dc} > {cc})"),
                ))
            } else {
                notes.push(format!(
                    "{k}: the canonical {cv} is kept over \"{dname}\"'s {dv}"
                ));
                None
            };
            if let Some((v, why)) = pick {
                out.insert(k.clone(), v);
                notes.push(why);
            }
        }
    }
    (out, notes)
}

pub(super) fn duplicates(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let drafts = duplicate_drafts(cx, nx, None)?;
    let n = drafts.len();
    let elements: usize = drafts.iter().map(|d| d.evidence.len()).sum();
    let titles: Vec<String> = drafts.iter().map(|d| d.title.clone()).collect();
    stage(cx, nx, drafts)?;
    cx.count("duplicates", n as i64);
    if n > 0 {
        cx.line(format!(
            "Found {n} {} ({elements} elements): {}",
            if n == 1 {
                "set of duplicates"
            } else {
                "sets of duplicates"
            },
            titles.join("; ")
        ));
    }
    Ok(())
}

/// Why two concepts are, or are not, proposed as one (`somnus why A --with
/// B`): the name rule that matches them, if any, then the evidence for and
/// against, computed now as phase 6 would.
pub fn why_not_merged(nx: &mut Nexus, a: &str, b: &str) -> KipResult<Value> {
    let mut nodes = Vec::new();
    for what in [a, b] {
        let (ty, name) = what.split_once(':').ok_or_else(|| {
            KipError::new(
                ErrorCode::InvalidSyntax,
                format!("`{what}`: give a concept as Type:Name"),
            )
        })?;
        let v = find(
            nx,
            r#"FIND(?c) WHERE { ?c {type: :t, name: :n} }"#,
            json!({"t": ty.trim(), "n": name.trim()}),
        )?;
        let node = v
            .as_array()
            .and_then(|x| x.first())
            .cloned()
            .ok_or_else(|| KipError::new(ErrorCode::NotFound, format!("no concept {what}")))?;
        nodes.push(node);
    }
    let named: Vec<similarity::Named> = nodes
        .iter()
        .map(|n| similarity::Named {
            id: 0,
            ty: s(n, &["type"]),
            name: s(n, &["name"]),
            aliases: strs(n.get("attributes").and_then(|a| a.get("aliases"))),
            description: s(n, &["attributes", "description"]),
        })
        .collect();
    if named[0].ty != named[1].ty {
        return Ok(
            json!({"candidate": false, "why": format!("different types ({} and {}): never merged", named[0].ty, named[1].ty)}),
        );
    }
    if NO_DEDUP.contains(&named[0].ty.as_str()) {
        return Ok(
            json!({"candidate": false, "why": format!("{} is never deduplicated", named[0].ty)}),
        );
    }
    let Some((rule, score)) = similarity::matching::compare_names(&named[0], &named[1]) else {
        return Ok(
            json!({"candidate": false, "why": "no name rule matches these two names (a word prefix of a surname, another word, a different number or spelling is not the same name)"}),
        );
    };
    let cand = Candidate {
        a: concept_view(nx, &nodes[0])?,
        b: concept_view(nx, &nodes[1])?,
        rule: rule.into(),
        score,
    };
    let (veto, weights) = super::super::sameness::evidence(&cand);
    let j = super::super::sameness::judge(&cand);
    Ok(json!({
        "candidate": true,
        "rule": rule,
        "score": score,
        "veto": veto,
        "evidence": weights.iter().map(|(w, why)| json!({"weight": w, "why": why})).collect::<Vec<_>>(),
        "same": j.same,
        "confidence": j.confidence,
        "why": j.rationale,
    }))
}
