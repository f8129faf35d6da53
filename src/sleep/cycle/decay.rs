//! Phase 7: memory-strength decay, relevance, and archival proposals.

use super::*;

/// The relevance score of the decay model: base × e^(−λ·days) ×
/// log2(access+1) × type weight, with its status band.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Relevance {
    pub score: f64,
    pub status: &'static str,
    pub base: f64,
    pub days_since_access: f64,
    pub access_count: f64,
    pub type_weight: f64,
    pub lambda: f64,
}

pub fn relevance(meta: &Value, kind: &str, now: &str, lambda: f64) -> Relevance {
    let pinned = meta.get("pinned").and_then(Value::as_bool).unwrap_or(false);
    let base = meta
        .get("base_relevance")
        .and_then(Value::as_f64)
        .or_else(|| meta.get("confidence").and_then(Value::as_f64))
        .unwrap_or(0.7);
    let last = [
        "last_accessed_at",
        "last_accessed",
        "observed_at",
        "created_at",
        "_updated_at",
    ]
    .iter()
    .find_map(|k| meta.get(*k).and_then(Value::as_str).map(str::to_string))
    .unwrap_or_else(|| now.to_string());
    let days = days_between(&last, now).unwrap_or(0.0).max(0.0);
    let access = meta
        .get("access_count")
        .and_then(Value::as_f64)
        .unwrap_or(1.0)
        .max(1.0);
    let type_weight = match kind {
        "core" => 1.5,
        "episodic" => 0.8,
        "procedural" => 1.0,
        _ => 1.2,
    };
    let score = if pinned || meta.get("confidence").and_then(Value::as_f64) == Some(1.0) {
        f64::INFINITY
    } else {
        base * (-lambda * days).exp() * (access + 1.0).log2() * type_weight
    };
    let status = if score >= 0.5 {
        "active"
    } else if score >= 0.2 {
        "fading"
    } else if score >= 0.05 {
        "dormant"
    } else {
        "archived"
    };
    Relevance {
        score,
        status,
        base,
        days_since_access: (days * 10.0).round() / 10.0,
        access_count: access,
        type_weight,
        lambda,
    }
}

pub(super) fn phase7(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let f = cx.opts.params.memory_strength_decay_factor;
    let stale_cutoff = cx.days_ago(cx.opts.params.stale_event_threshold_days);
    let preds: Vec<String> = predicates(nx)?
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !STRUCTURAL.contains(&n.as_str()))
        .collect();
    // 7A/7B: strength-aware decay of memory_strength, one UPDATE per
    // predicate and band; confidence 1.0, pinned and superseded links and
    // links decayed this cycle are left alone.
    let bands: [(&str, f64, &str); 3] = [
        ("reinforced", f.sqrt(), "?link.metadata.access_count >= 3"),
        (
            "neglected",
            f,
            "(IS_NULL(?link.metadata.access_count) || ?link.metadata.access_count < 3) && (IS_NULL(?link.metadata.confidence) || ?link.metadata.confidence >= 0.5)",
        ),
        (
            "clutter",
            f * f,
            "(IS_NULL(?link.metadata.access_count) || ?link.metadata.access_count < 3) && ?link.metadata.confidence < 0.5",
        ),
    ];
    let mut decayed = 0i64;
    for (i, p) in preds.iter().enumerate() {
        cx.cancelled()?;
        cx.step(
            &format!("memory-strength decay: {p}"),
            i as u64,
            preds.len() as u64,
        );
        for (band, factor, cond) in &bands {
            let text = format!(
                r#"UPDATE ?link
SET METADATA {{
  memory_strength: CLAMP(MUL(COALESCE(?link.metadata.memory_strength, 0.7), :decay_factor), 0.0, 1.0),
  strength_decay_applied_at: :timestamp,
  strength_decay_rule: :rule
}}
WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.pinned) || ?link.metadata.pinned != true)
  FILTER(IS_NULL(?link.metadata.confidence) || ?link.metadata.confidence < 1.0)
  FILTER(IS_NULL(?link.metadata.observed_at) || ?link.metadata.observed_at < :stale_cutoff)
  FILTER(IS_NULL(?link.metadata.memory_strength) || ?link.metadata.memory_strength > 0.05)
  FILTER(IS_NULL(?link.metadata.strength_decay_applied_at) || ?link.metadata.strength_decay_applied_at < :cycle_start)
  FILTER({cond})
}}"#,
                q(p)
            );
            let rule = format!("{band}: memory_strength × {factor:.4} (decay factor {f})");
            let r = write(
                cx,
                nx,
                &text,
                json!({"decay_factor": (factor * 10000.0).round() / 10000.0, "timestamp": cx.opts.now, "stale_cutoff": stale_cutoff, "cycle_start": cx.opts.now, "rule": rule}),
                &format!("memory-strength decay, band {rule}"),
            )?;
            decayed += r.get("updated").and_then(Value::as_i64).unwrap_or(0);
        }
    }
    cx.count("decayed", decayed);
    cx.line(format!(
        "Decayed memory strength on {decayed} propositions (confidence untouched)"
    ));
    // Relevance and the lifecycle rules: speculative TTL and fact archival
    // are proposals (archival is a judgement), explained by rule and inputs.
    let spec_cut = cx.days_ago(cx.opts.params.speculative_ttl_days);
    let arch_cut = cx.days_ago(cx.opts.params.fact_archival_age_days);
    let mut drafts = Vec::new();
    let mut bands_count: BTreeMap<&str, i64> = BTreeMap::new();
    for (i, p) in preds.iter().enumerate() {
        if PROTECTED_PREDICATES.contains(&p.as_str()) {
            continue;
        }
        cx.cancelled()?;
        cx.step(&format!("relevance: {p}"), i as u64, preds.len() as u64);
        let text = format!(
            r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.archived) || ?link.metadata.archived != true)
  FILTER((?link.metadata.confidence < 0.4 && (?link.metadata.observed_at < :spec_cut || (IS_NULL(?link.metadata.observed_at) && ?link.metadata.created_at < :spec_cut))) || ?link.metadata.observed_at < :arch_cut || (IS_NULL(?link.metadata.observed_at) && ?link.metadata.created_at < :arch_cut))
}} LIMIT 500"#,
            q(p)
        );
        let v = find(
            nx,
            &text,
            json!({"spec_cut": spec_cut, "arch_cut": arch_cut}),
        )?;
        for row in rows(&v, 3) {
            let (l, sn, on) = (&row[0], &row[1], &row[2]);
            let meta = l.get("metadata").cloned().unwrap_or(Value::Null);
            // pinned and certain facts are never decayed or archived
            if meta.get("pinned").and_then(Value::as_bool) == Some(true)
                || meta
                    .get("confidence")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    >= 1.0
            {
                continue;
            }
            let r = relevance(
                &meta,
                "semantic",
                &cx.opts.now,
                cx.opts.params.relevance_lambda,
            );
            *bands_count.entry(r.status).or_default() += 1;
            let conf = meta
                .get("confidence")
                .and_then(Value::as_f64)
                .unwrap_or(0.7);
            let access = meta
                .get("access_count")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let label = format!("{} {} {}", s(sn, &["name"]), p, s(on, &["name"]));
            let (rule, why) = if conf < 0.4 {
                (
                    "speculative TTL",
                    format!(
                        "confidence {conf} < 0.40 and unconfirmed for {:.0} days (> {})",
                        r.days_since_access, cx.opts.params.speculative_ttl_days
                    ),
                )
            } else if conf < 0.3 + 1e-9
                || (access <= 2.0 && r.score < cx.opts.params.archive_threshold)
            {
                (
                    "fact archival",
                    format!(
                        "{:.0} days old (> {}), relevance {:.4} < {}, accessed {access} times (≤ 2)",
                        r.days_since_access,
                        cx.opts.params.fact_archival_age_days,
                        r.score,
                        cx.opts.params.archive_threshold
                    ),
                )
            } else {
                continue;
            };
            let id = s(l, &["id"]);
            let inputs = json!({"rule": rule, "relevance": r, "confidence": conf, "access_count": access, "now": cx.opts.now});
            drafts.push(Draft {
                class: "archive".into(),
                key: format!("archive:{id}"),
                title: format!("Archive the fact \"{label}\" ({rule})"),
                commands: vec![r#"UPSERT {
  PROPOSITION ?link { (id: :link_id) }
}
WITH METADATA { archived: true, archived_at: :ts, archived_by: "$system", archive_rule: :rule, archive_reason: :why, memory_tier: "archived", relevance: :relevance }"#
                    .to_string()],
                params: pm(json!({"link_id": id, "ts": cx.opts.now, "rule": rule, "why": why, "relevance": (r.score * 10000.0).round() / 10000.0})),
                rationale: format!("{rule}: {why}; relevance {:.4} ({}) = base {} × e^(−{}×{:.0}) × log2({}+1) × {}", r.score, r.status, r.base, r.lambda, r.days_since_access, r.access_count, r.type_weight),
                evidence: vec![id.clone()],
                confidence: 0.7,
            });
            note(nx, &id, &label, cx.run, "proposed archival", rule, &inputs)?;
        }
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("archival_proposed", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed archiving {n} faded facts ({})",
            bands_count
                .iter()
                .map(|(b, n)| format!("{n} {b}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

/// Records why the cycle acted on an element (for `somnus why`).
pub(super) fn note(
    nx: &Nexus,
    kip_id: &str,
    label: &str,
    run: i64,
    action: &str,
    rule: &str,
    inputs: &Value,
) -> KipResult<()> {
    let el = store::ids::parse_element_id(kip_id).unwrap_or(0);
    nx.conn().execute(
        "INSERT INTO sleep_notes(element, label, run, at, action, rule, inputs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![el, label, run, store::now(), action, rule, inputs.to_string()],
    )?;
    Ok(())
}
