//! Phase 7, the concept half: memory nodes fade too. 7A decays links;
//! 7B's bands speak of nodes ("high-salience Events and high-learning-value
//! Experiences decay slowly"), and Moltbot's model fades unaccessed
//! memories whatever they are. A concept's `memory_strength` decays by the
//! same rule as a link's: factor^(days/7) past the stale threshold,
//! counted from its last decay, in the band its signals put it in
//! (reinforced √factor, clutter factor²). Its confidence is never touched.
//!
//! What does not fade for want of recall (7B): Persons (identity),
//! Commitments, Skills (7D: procedural evidence, not recency), the schema
//! (types, predicates, Domains), SleepTasks; and any node pinned, certain
//! (confidence 1.0) or archived.

use super::decay::{Fact, MIN_DECAY_STEP, STRENGTH_FLOOR};
use super::*;

/// Types whose nodes never fade.
pub const NEVER_FADE: &[&str] = &[
    "Person",
    "Commitment",
    "Skill",
    "$ConceptType",
    "$PropositionType",
    "Domain",
    "SleepTask",
];

/// Concepts read per page (without the write lock).
const PAGE: usize = 2_000;
/// Concepts written per UPSERT.
const WRITE_BATCH: usize = 100;

/// The concept as the decay rule weighs it: its metadata, with the
/// signals its attributes hold (salience, learning value, confirmations,
/// when it was last seen) where the metadata has none.
fn as_fact(c: &Value) -> Fact {
    let mut meta = match c.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let attrs = c.get("attributes").cloned().unwrap_or(Value::Null);
    for k in ["salience_score", "learning_value", "evidence_count"] {
        if !meta.contains_key(k)
            && let Some(v) = attrs.get(k).filter(|v| v.is_number())
        {
            meta.insert(k.into(), v.clone());
        }
    }
    // when it was last seen true: an observation time, else when the
    // episode happened, before any time of the record itself
    if !["last_observed", "observed_at"].iter().any(|k| {
        meta.get(*k)
            .and_then(Value::as_str)
            .is_some_and(|t| instant(t).is_some())
    }) && let Some(t) = [
        "last_observed",
        "end_time",
        "ended_at",
        "start_time",
        "started_at",
    ]
    .iter()
    .filter_map(|k| attrs.get(*k).and_then(Value::as_str))
    .find(|t| instant(t).is_some())
    {
        meta.insert("last_observed".into(), json!(t));
    }
    Fact {
        id: s(c, &["id"]),
        label: format!("{}:{}", s(c, &["type"]), s(c, &["name"])),
        meta: Value::Object(meta),
        subject_salience: None,
        object_type: String::new(),
    }
}

/// Phase 7: the links decay (`decay`), then the nodes fade by the same
/// rule.
pub(super) fn decay_and_fade(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    super::decay::decay(cx, nx)?;
    let faded = fade_concepts(cx, nx)?;
    let n: i64 = faded.values().sum();
    if n > 0 {
        cx.line(format!(
            "Decayed memory strength on {n} concepts: {} (confidence untouched)",
            faded
                .iter()
                .map(|(b, n)| format!("{n} {b}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

/// The concept types that may fade.
fn fading_types(nx: &mut Nexus) -> KipResult<Vec<String>> {
    let v = find(
        nx,
        r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} } LIMIT 1000"#,
        json!({}),
    )?;
    Ok(strs(Some(&v))
        .into_iter()
        .filter(|t| !NEVER_FADE.contains(&t.as_str()))
        .collect())
}

/// 7A/7B on concepts; returns how many faded, per band.
pub(super) fn fade_concepts(cx: &mut Cx, nx: &mut Nexus) -> KipResult<BTreeMap<&'static str, i64>> {
    let f = cx.opts.params.memory_strength_decay_factor;
    let threshold = cx.opts.params.stale_event_threshold_days as f64;
    let now = cx.opts.now.clone();
    let types = cx.unlocked(nx, fading_types)?;
    let mut by_band: BTreeMap<&'static str, i64> = BTreeMap::new();
    for (i, t) in types.iter().enumerate() {
        let mut cursor: Option<String> = None;
        loop {
            cx.cancelled()?;
            cx.step(
                &format!("memory-strength decay: {t} nodes"),
                i as u64,
                types.len() as u64,
            );
            let mut text = format!(r#"FIND(?c) WHERE {{ ?c {{type: {}}} }} LIMIT {PAGE}"#, q(t));
            if let Some(c) = &cursor {
                text.push_str(&format!(" CURSOR {}", q(c)));
            }
            let (page, next) = cx.unlocked(nx, |nx| find_page(nx, &text, json!({})))?;
            let mut updates: Vec<(String, f64, String, i64, &'static str)> = Vec::new();
            for c in page.as_array().into_iter().flatten() {
                let name = s(c, &["name"]);
                if name.starts_with('$') {
                    continue;
                }
                let fact = as_fact(c);
                if fact.pinned_or_certain()
                    || fact.meta.get("archived").and_then(Value::as_bool) == Some(true)
                    || s(&fact.meta, &["memory_tier"]) == "archived"
                {
                    continue;
                }
                let strength = fact
                    .meta
                    .get("memory_strength")
                    .and_then(Value::as_f64)
                    .unwrap_or(super::decay::DEFAULT_STRENGTH);
                if strength <= STRENGTH_FLOOR {
                    continue;
                }
                let Some(seen) = super::decay::last_seen(&fact.meta) else {
                    continue;
                };
                let stale_from = days_between(&seen, &now).unwrap_or(0.0) - threshold;
                if stale_from <= 0.0 {
                    continue;
                }
                let days = match days_between(&s(&fact.meta, &["strength_decay_applied_at"]), &now)
                {
                    Some(d) => d.min(stale_from),
                    None => stale_from,
                };
                if days <= 0.0 {
                    continue;
                }
                let (band, factor) = fact.band(f);
                let next = (strength * factor.powf(days / 7.0)).clamp(0.0, 1.0);
                if strength - next < MIN_DECAY_STEP {
                    continue;
                }
                let rule = format!(
                    "{band}: memory_strength × {factor:.4}^({days:.2} days / 7) (decay factor {f})"
                );
                let version = fact
                    .meta
                    .get("_version")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                updates.push((fact.id, next, rule, version, band));
            }
            for chunk in updates.chunks(WRITE_BATCH) {
                cx.cancelled()?;
                cx.yield_lock(nx)?;
                // only what nobody changed since it was read
                let current = versions(nx, "concepts", chunk.iter().map(|u| u.0.as_str()))?;
                let chunk: Vec<_> = chunk
                    .iter()
                    .filter(|u| current.get(u.0.as_str()) == Some(&u.3))
                    .collect();
                if chunk.is_empty() {
                    continue;
                }
                let mut text = String::from("UPSERT {\n");
                for (k, (id, next, rule, _, _)) in chunk.iter().enumerate() {
                    text.push_str(&format!(
                        "  CONCEPT ?c{k} {{ {{id: {}}} }} WITH METADATA {{ memory_strength: {}, strength_decay_applied_at: {}, strength_decay_rule: {} }}\n",
                        q(id),
                        json!(next),
                        q(&now),
                        q(rule)
                    ));
                }
                text.push('}');
                write(
                    cx,
                    nx,
                    &text,
                    json!({}),
                    &format!(
                        "memory-strength decay of {} {t} nodes (factor {f} per week past {threshold} days)",
                        chunk.len()
                    ),
                )?;
                for u in &chunk {
                    *by_band.entry(u.4).or_default() += 1;
                }
                cx.count("concepts_faded", chunk.len() as i64);
            }
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    Ok(by_band)
}
