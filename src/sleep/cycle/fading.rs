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

use super::context::*;
use super::decay::{Fact, Step, with_reads, write_steps};

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
        reads: None,
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
    Ok(concept_types(nx)?
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
            let mut facts: Vec<Fact> = page
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| !s(c, &["name"]).starts_with('$'))
                .map(as_fact)
                .collect();
            cx.unlocked(nx, |nx| with_reads(nx, &mut facts))?;
            let mut updates: Vec<Step> = Vec::new();
            for fact in facts {
                if fact.pinned_or_certain()
                    || fact.meta.get("archived").and_then(Value::as_bool) == Some(true)
                    || s(&fact.meta, &["memory_tier"]) == "archived"
                {
                    continue;
                }
                updates.extend(fact.decay_step(f, threshold, &now));
            }
            for chunk in updates.chunks(WRITE_BATCH) {
                let chunk = write_steps(cx, nx, true, chunk, |n| {
                    format!(
                        "memory-strength decay of {n} {t} nodes (factor {f} per week past {threshold} days)"
                    )
                })?;
                for u in &chunk {
                    *by_band.entry(u.band).or_default() += 1;
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
