//! Phase 6: duplicate detection and merge proposals.

use super::context::*;
use super::decay;

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
    let domains = nx
        .db()
        .query(
            "SELECT c.name FROM propositions p JOIN concepts c ON c.id = p.object \
             WHERE p.subject = ?1 AND p.predicate = 'belongs_to_domain' ORDER BY c.name LIMIT 20",
            crate::args![c],
        )?
        .iter()
        .map(|r| r.text(0))
        .collect::<KipResult<Vec<_>>>()?;
    Ok(ConceptView {
        domains,
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

/// The comparison vector, the matcher's probability and the weights of
/// each candidate, under a fitted model.
pub(super) fn weigh(fitted: &matcher::Fitted, cands: &mut [Candidate]) {
    for c in cands {
        let scored = fitted.score(&c.comparison);
        c.probability = scored.probability;
        c.weights = scored
            .terms
            .iter()
            .map(|t| (format!("{} {}", t.feature, t.level), t.weight))
            .collect();
    }
}

/// The pairs an item decides, kept with it so that the operator's
/// decision teaches the matcher (`review::labels`).
fn comparison_param(pairs: &[&Candidate]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|c| {
                json!({
                    "a": format!("{}:{}", c.a.ty, c.a.name),
                    "b": format!("{}:{}", c.b.ty, c.b.name),
                    "levels": c.comparison.levels,
                    "probability": (c.probability * 1000.0).round() / 1000.0,
                })
            })
            .collect(),
    )
}

/// The commands that fold `dups` into `keep`, with their parameters and
/// the notes on attribute values the merge keeps or drops.
fn merge_commands(
    nodes: &[Value],
    named: &[similarity::Named],
    keep: usize,
    dups: &[usize],
) -> (Vec<String>, Value, Vec<String>) {
    let k = &named[keep];
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
    let (better, notes) = better_values(
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
    (commands, params, notes)
}

/// Candidate pairs, the indices of their two ends, and the model fitted
/// on them.
type Weighed = (Vec<Candidate>, Vec<(usize, usize)>, matcher::Fitted);

/// Candidate pairs among `nodes`, each with its comparison vector, and
/// the model fitted on them (kept for `somnus why`).
pub(super) fn candidates(
    nx: &mut Nexus,
    nodes: &[Value],
    named: &[similarity::Named],
) -> KipResult<Weighed> {
    let mut cands = Vec::new();
    let mut ends = Vec::new();
    for m in similarity::duplicates(named) {
        let mut c = Candidate {
            a: concept_view(nx, &nodes[m.a])?,
            b: concept_view(nx, &nodes[m.b])?,
            rule: m.rule.into(),
            score: m.score,
            comparison: Default::default(),
            probability: 0.0,
            weights: Vec::new(),
        };
        c.comparison = matcher::compare(&c);
        cands.push(c);
        ends.push((m.a, m.b));
    }
    let fitted =
        matcher::Fitted::fit(nx, &cands.iter().map(|c| &c.comparison).collect::<Vec<_>>())?;
    weigh(&fitted, &mut cands);
    Ok((cands, ends, fitted))
}

/// Pairs under this probability whose names only sound or look alike
/// are not noted: a memory has many.
pub const NOTE_ALIKE_FROM: f64 = 0.1;

/// The concepts of `types` that are deduplicated, as nodes and as names.
fn dedup_nodes(
    nx: &mut Nexus,
    types: &[String],
    progress: &mut dyn FnMut(&str),
) -> KipResult<(Vec<Value>, Vec<similarity::Named>)> {
    let mut nodes = Vec::new();
    for t in types.iter().filter(|t| !NO_DEDUP.contains(&t.as_str())) {
        progress(t);
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
    Ok((nodes, named))
}

/// Every candidate pair of the memory with its comparison vector and
/// probability, as phase 6 sees them (nothing is written).
pub fn scored_candidates(nx: &mut Nexus) -> KipResult<Vec<Candidate>> {
    let types = concept_types(nx)?;
    let (nodes, named) = dedup_nodes(nx, &types, &mut |_| {})?;
    Ok(candidates(nx, &nodes, &named)?.0)
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
    let (nodes, named) = dedup_nodes(nx, &types, &mut |t| {
        cx.step(&format!("duplicates among {t}"), 0, 0)
    })?;
    let (all, all_ends, fitted) = candidates(nx, &nodes, &named)?;
    if only.is_none() {
        fitted.save(nx)?;
    }
    let mut cands = Vec::new();
    let mut ends = Vec::new();
    for (c, e) in all.into_iter().zip(all_ends) {
        if let Some((_, target)) = only
            && named[e.0].name != target
            && named[e.1].name != target
        {
            continue;
        }
        cands.push(c);
        ends.push(e);
    }
    let judged = cx.reasoner.same_entity(&mut Look(nx), &cands)?;
    // the pairs judged one thing, the pairs to ask about, the pairs apart
    let mut same = Vec::new();
    let mut ask = Vec::new();
    let mut apart = HashSet::new();
    // the element each pair would keep, counted per element
    let mut kept: HashMap<usize, usize> = HashMap::new();
    let mut why: HashMap<(usize, usize), (String, f64, usize)> = HashMap::new();
    for (n, ((c, j), &(a, b))) in cands.iter().zip(judged).zip(&ends).enumerate() {
        let is_same = j.same && c.a.ty == c.b.ty;
        let asked = !is_same && j.ask && c.a.ty == c.b.ty;
        cx.rule(&format!("duplicates: {}", c.rule), is_same);
        let key = (a.min(b), a.max(b));
        if asked {
            apart.insert(key);
            ask.push((n, a, b, j));
            continue;
        }
        if !is_same {
            apart.insert(key);
            let alike = matches!(matching_level(c), "phonetic" | "similar");
            if alike && c.probability < NOTE_ALIKE_FROM {
                continue;
            }
            for (x, y) in [(&c.a, &c.b), (&c.b, &c.a)] {
                decay::note(
                    nx,
                    &x.id,
                    &format!("{}:{}", x.ty, x.name),
                    cx.run,
                    "not merged",
                    &c.rule,
                    &json!({"with": format!("{}:{}", y.ty, y.name), "why": j.rationale, "confidence": j.confidence, "probability": c.probability}),
                )?;
            }
            continue;
        }
        *kept.entry(if j.keep_a { a } else { b }).or_default() += 1;
        same.push((a, b, j.confidence));
        why.insert(key, (j.rationale.clone(), j.confidence, n));
    }
    let mut drafts = Vec::new();
    let mut cluster_of: HashMap<usize, usize> = HashMap::new();
    for (gi, group) in similarity::clusters::clusters(named.len(), &same, &apart)
        .into_iter()
        .enumerate()
    {
        for &i in &group {
            cluster_of.insert(i, gi);
        }
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
        let mut pairs = Vec::new();
        for (i, &x) in group.iter().enumerate() {
            for &y in &group[i + 1..] {
                if let Some((r, c, n)) = why.get(&(x.min(y), x.max(y))) {
                    confidence = confidence.min(*c);
                    pairs.push(&cands[*n]);
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
        let (commands, mut params, notes) = merge_commands(&nodes, &named, keep, &dups);
        params[crate::review::labels::PARAM] = comparison_param(&pairs);
        reasons.extend(notes);
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
    // "same or different?": never inside a merge the cycle proposes
    for (n, a, b, j) in ask {
        if cluster_of
            .get(&a)
            .is_some_and(|g| cluster_of.get(&b) == Some(g))
        {
            continue;
        }
        let (keep, dup) = if j.keep_a { (a, b) } else { (b, a) };
        let (commands, mut params, notes) = merge_commands(&nodes, &named, keep, &[dup]);
        params[crate::review::labels::PARAM] = comparison_param(&[&cands[n]]);
        let mut ids = [format!("C:{}", named[a].id), format!("C:{}", named[b].id)];
        ids.sort_unstable();
        let mut rationale = j.rationale.clone();
        for note in notes {
            rationale.push_str("; ");
            rationale.push_str(&note);
        }
        rationale.push_str(&format!(
            ". Approving says they are one: \"{}\" is folded into \"{}\". Rejecting says they are two; either way the matcher learns from it",
            named[dup].name, named[keep].name
        ));
        drafts.push(Draft {
            class: SAME_OR_DIFFERENT.into(),
            // the key a merge of the pair has: a merge rejected is not
            // asked about again, nor a question answered proposed again
            key: format!("merge:{}", ids.join("|")),
            title: format!(
                "Same or different? {} \"{}\" and \"{}\" ({:.0}%)",
                named[keep].ty,
                named[dup].name,
                named[keep].name,
                cands[n].probability * 100.0
            ),
            commands,
            params: pm(params),
            rationale,
            evidence: vec![
                format!("C:{}", named[dup].id),
                format!("C:{}", named[keep].id),
            ],
            confidence: j.confidence,
        });
    }
    Ok(drafts)
}

/// The class of a "same or different?" question.
pub const SAME_OR_DIFFERENT: &str = "same_or_different";

fn matching_level(c: &Candidate) -> &'static str {
    similarity::matching::level_of(&c.rule)
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
    let asked = drafts
        .iter()
        .filter(|d| d.class == SAME_OR_DIFFERENT)
        .count();
    let n = drafts.len() - asked;
    let merges = || drafts.iter().filter(|d| d.class != SAME_OR_DIFFERENT);
    let elements: usize = merges().map(|d| d.evidence.len()).sum();
    let titles: Vec<String> = merges().map(|d| d.title.clone()).collect();
    stage(cx, nx, drafts)?;
    cx.count("duplicates", n as i64);
    cx.count("same_or_different", asked as i64);
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
    if asked > 0 {
        cx.line(format!(
            "Asked about {asked} {} that may be one thing",
            if asked == 1 { "pair" } else { "pairs" }
        ));
    }
    Ok(())
}

/// Why two concepts are, or are not, proposed as one (`somnus why A --with
/// B`): the name rule that makes them a candidate, if any, then the
/// comparison vector with each level's weight, what the operator's
/// decisions changed, and the probability, computed now as phase 6 would
/// with the model last fitted on this memory.
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
            json!({"candidate": false, "why": "no name rule matches these two names, and they differ in more than one word alike in sound or spelling: never compared"}),
        );
    };
    let mut cand = Candidate {
        a: concept_view(nx, &nodes[0])?,
        b: concept_view(nx, &nodes[1])?,
        rule: rule.into(),
        score,
        comparison: Default::default(),
        probability: 0.0,
        weights: Vec::new(),
    };
    cand.comparison = matcher::compare(&cand);
    // the model of the last cycle, unless the operator decided since:
    // then fitted again on the memory's pairs, as the next cycle will
    let fitted = match matcher::Fitted::load(nx) {
        Some(f) if !f.out_of_date(nx)? => f,
        _ => {
            let types = concept_types(nx)?;
            let (nodes, named) = dedup_nodes(nx, &types, &mut |_| {})?;
            candidates(nx, &nodes, &named)?.2
        }
    };
    let scored = fitted.score(&cand.comparison);
    weigh(&fitted, std::slice::from_mut(&mut cand));
    let j = super::super::sameness::judge(&cand);
    let vector: Vec<Value> = scored
        .terms
        .iter()
        .map(|t| {
            json!({
                "feature": t.feature,
                "level": t.level,
                "detail": cand.comparison.details.get(&t.feature),
                "m": (t.m * 10000.0).round() / 10000.0,
                "u": (t.u * 10000.0).round() / 10000.0,
                "weight": (t.weight * 100.0).round() / 100.0,
            })
        })
        .collect();
    Ok(json!({
        "candidate": true,
        "rule": rule,
        "veto": cand.comparison.veto,
        "vector": vector,
        "prior": {
            "share_of_duplicates": (fitted.model.lambda * 1000.0).round() / 1000.0,
            "weight": (scored.prior_odds_bits * 100.0).round() / 100.0,
        },
        "learned": {
            "decisions": fitted.model.labels,
            "pairs_in_memory": fitted.model.pairs,
            "adjustments": scored.learned.iter().map(|(what, d)| json!({"level": what, "change": (d * 100.0).round() / 100.0})).collect::<Vec<_>>(),
        },
        "probability": (scored.probability * 1000.0).round() / 1000.0,
        "capped": scored.capped,
        "band": scored.band,
        "bands": {"merge_from": matcher::MERGE_AT, "ask_from": matcher::ASK_AT},
        "same": j.same,
        "ask": j.ask,
        "confidence": j.confidence,
        "why": j.rationale,
    }))
}
