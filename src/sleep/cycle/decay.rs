//! Phase 7: memory-strength decay, relevance, and archival proposals.

use super::context::*;

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

/// An auto-detected memory's base relevance, and the confidence of a fact
/// whose writer gave none (Moltbot §9.1: 0.7 for auto-detected; the
/// sleep-mode 7B query reads a missing strength as 0.7 too).
pub const DEFAULT_BASE: f64 = 0.7;
pub const DEFAULT_CONFIDENCE: f64 = 0.7;
pub const DEFAULT_STRENGTH: f64 = 0.7;

/// Moltbot §9.1's weights by memory type: core memories are important by
/// definition, events become less relevant, facts persist, workflows are
/// neutral.
pub const CORE_WEIGHT: f64 = 1.5;
pub const EPISODIC_WEIGHT: f64 = 0.8;
pub const PROCEDURAL_WEIGHT: f64 = 1.0;
pub const SEMANTIC_WEIGHT: f64 = 1.2;

/// 7B stops at this strength (the sleep-mode query's floor): below it a
/// fact is already a candidate for archival, not for more decay.
pub const STRENGTH_FLOOR: f64 = 0.05;

/// 7B's bands: a fact confirmed this many times, or this salient or worth
/// learning from (0–100), is reinforced and decays at √factor...
pub const REINFORCED_CONFIRMATIONS: f64 = 3.0;
pub const REINFORCED_SALIENCE: f64 = 70.0;
/// ...one below this confidence, confirmed at most once and below this
/// salience is clutter and decays at factor².
pub const CLUTTER_CONFIDENCE: f64 = 0.5;
pub const CLUTTER_SALIENCE: f64 = 30.0;

/// Importance counts confirmations out of this many (five confirmations
/// weigh as much as full salience).
pub const IMPORTANCE_FULL_CONFIRMATIONS: f64 = 5.0;

/// Objects whose facts are Engram's protected categories whatever the
/// predicate (a preference, a lesson, a promise, a procedure).
pub const PROTECTED_OBJECT_TYPES: &[&str] = &["Preference", "Insight", "Commitment", "Skill"];

/// The confidence of a fact the operator confirmed when asked.
pub const CONFIRMED_CONFIDENCE: f64 = 0.8;

/// Engram's speculative TTL applies below this confidence: a guess the
/// writer was unsure of, never confirmed since.
pub const SPECULATIVE_BELOW: f64 = 0.4;

/// Relevance bands (Engram's lifecycle): at or above each, an element is
/// active, fading, dormant; below the last, archived.
pub const ACTIVE_AT: f64 = 0.5;
pub const FADING_AT: f64 = 0.2;
pub const DORMANT_AT: f64 = 0.05;

/// Reads by agents (the read log) that make a fact "often used": it decays
/// in the reinforced band.
pub const USED_READS: i64 = 3;
/// Engram's fact archival asks for "access ≤ 2": a fact read more often
/// than this is never proposed for archival by age.
pub const FACT_ARCHIVAL_MAX_READS: i64 = 2;

/// The later of two RFC 3339 times (either may be missing or unreadable).
fn later(a: Option<String>, b: Option<&str>) -> Option<String> {
    match (a, b.filter(|t| instant(t).is_some())) {
        (Some(a), Some(b)) => Some(if instant(b) > instant(&a) {
            b.to_string()
        } else {
            a
        }),
        (a, b) => a.or(b.map(str::to_string)),
    }
}

/// A relevance band as a person reads it: the lowest band is where
/// archival is proposed, which is not the same as archived.
pub fn band(status: &str) -> &str {
    match status {
        "archived" => "archival band",
        other => other,
    }
}

/// `reads`: how often agents read it and when last (the read log), if
/// ever.
pub fn relevance(
    meta: &Value,
    kind: &str,
    now: &str,
    lambda: f64,
    reads: Option<&(i64, String)>,
) -> Relevance {
    let pinned = meta.get("pinned").and_then(Value::as_bool).unwrap_or(false);
    let base = meta
        .get("base_relevance")
        .and_then(Value::as_f64)
        .or_else(|| meta.get("confidence").and_then(Value::as_f64))
        .unwrap_or(DEFAULT_BASE);
    let last = [
        "last_accessed_at",
        "last_accessed",
        "last_observed",
        "observed_at",
        "created_at",
        "_updated_at",
    ]
    .iter()
    .find_map(|k| meta.get(*k).and_then(Value::as_str).map(str::to_string));
    // accessed: the last time it was seen true or read by an agent
    let last = later(last, reads.map(|r| r.1.as_str())).unwrap_or_else(|| now.to_string());
    let days = days_between(&last, now).unwrap_or(0.0).max(0.0);
    // accesses: the read log's count, or the signals the sleep-mode
    // instructions name (times observed, times used), whichever is more
    let access = reinforcements(meta)
        .max(reads.map_or(0.0, |r| r.0 as f64))
        .max(1.0);
    let type_weight = match kind {
        "core" => CORE_WEIGHT,
        "episodic" => EPISODIC_WEIGHT,
        "procedural" => PROCEDURAL_WEIGHT,
        _ => SEMANTIC_WEIGHT,
    };
    let score = if pinned || meta.get("confidence").and_then(Value::as_f64) == Some(1.0) {
        f64::INFINITY
    } else {
        base * (-lambda * days).exp() * (access + 1.0).log2() * type_weight
    };
    let status = if score >= ACTIVE_AT {
        "active"
    } else if score >= FADING_AT {
        "fading"
    } else if score >= DORMANT_AT {
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

fn num(meta: &Value, k: &str) -> Option<f64> {
    meta.get(k).and_then(Value::as_f64)
}

/// How often a fact was confirmed: `evidence_count` (or an
/// `access_count` a client keeps).
fn reinforcements(meta: &Value) -> f64 {
    num(meta, "evidence_count")
        .unwrap_or(0.0)
        .max(num(meta, "access_count").unwrap_or(0.0))
}

/// When a fact was last seen true: `last_observed`, `observed_at`,
/// `created_at`, else when it last changed.
fn last_seen(meta: &Value) -> Option<String> {
    ["last_observed", "observed_at", "created_at", "_updated_at"]
        .iter()
        .find_map(|k| {
            meta.get(*k)
                .and_then(Value::as_str)
                .filter(|t| instant(t).is_some())
        })
        .map(str::to_string)
}

/// One link (or node, `fading`) phase 7 weighs.
pub(super) struct Fact {
    pub id: String,
    pub label: String,
    pub meta: Value,
    /// The salience of the subject (an Event's `salience_score`).
    pub subject_salience: Option<f64>,
    /// The type of the link's object ("" for a node).
    pub object_type: String,
    /// How often agents read it, and when last (the read log).
    pub reads: Option<(i64, String)>,
}

/// Fills in how often agents read each fact (one query a page).
pub(super) fn with_reads(nx: &Nexus, facts: &mut [Fact]) -> KipResult<()> {
    let ids: Vec<i64> = facts
        .iter()
        .filter_map(|f| store::ids::parse_element_id(&f.id))
        .collect();
    let mut uses = crate::audit::reads::uses(nx.reads_db()?, &ids)?;
    for f in facts {
        if let Some(id) = store::ids::parse_element_id(&f.id) {
            f.reads = uses.remove(&id);
        }
    }
    Ok(())
}

impl Fact {
    /// When it was last seen true or read by an agent.
    fn seen(&self) -> Option<String> {
        later(
            last_seen(&self.meta),
            self.reads.as_ref().map(|r| r.1.as_str()),
        )
    }
    fn read_count(&self) -> i64 {
        self.reads.as_ref().map_or(0, |r| r.0)
    }
    fn salience(&self) -> f64 {
        num(&self.meta, "salience_score")
            .or(self.subject_salience)
            .unwrap_or(0.0)
    }
    fn confidence(&self) -> f64 {
        num(&self.meta, "confidence").unwrap_or(DEFAULT_CONFIDENCE)
    }
    /// A link labelled with what someone is to another, family
    /// (`Wife`, `Ehefrau`, `太太`): an identity fact.
    pub(super) fn names_kin(&self) -> bool {
        self.meta
            .get("label")
            .and_then(Value::as_str)
            .is_some_and(|l| {
                category(l) == Some("identity") || crate::analysis::relations::family_role(l)
            })
    }
    pub(super) fn pinned_or_certain(&self) -> bool {
        self.meta.get("pinned").and_then(Value::as_bool) == Some(true) || self.confidence() >= 1.0
    }
    /// 7B's band: reinforced facts (seen 3+ times, salient, or worth
    /// learning from) decay at √factor, and so do facts agents often read;
    /// low-value clutter at factor², the rest at the factor.
    pub(super) fn band(&self, f: f64) -> (&'static str, f64) {
        let ev = reinforcements(&self.meta);
        let lv = num(&self.meta, "learning_value").unwrap_or(0.0);
        if self.read_count() >= USED_READS {
            ("used", f.sqrt())
        } else if ev >= REINFORCED_CONFIRMATIONS
            || self.salience() >= REINFORCED_SALIENCE
            || lv >= REINFORCED_SALIENCE
        {
            ("reinforced", f.sqrt())
        } else if self.confidence() < CLUTTER_CONFIDENCE
            && ev <= 1.0
            && self.salience() < CLUTTER_SALIENCE
        {
            ("clutter", f * f)
        } else {
            ("neglected", f)
        }
    }
    /// How much the fact matters, in [0, 1]: an `importance` the writer
    /// gave, else the mean of its confidence and its strongest sign of
    /// weight (salience, confirmations out of 5, memory strength).
    fn importance(&self) -> f64 {
        if let Some(i) = num(&self.meta, "importance") {
            return i.clamp(0.0, 1.0);
        }
        let weight = (self.salience() / 100.0)
            .max((reinforcements(&self.meta) / IMPORTANCE_FULL_CONFIRMATIONS).min(1.0))
            .max(num(&self.meta, "memory_strength").unwrap_or(DEFAULT_STRENGTH));
        ((self.confidence() + weight) / 2.0).clamp(0.0, 1.0)
    }
    /// A correction of an earlier fact (it superseded one, or says so).
    fn correction(&self) -> bool {
        self.meta.get("supersedes").is_some()
            || self.meta.get("correction").and_then(Value::as_bool) == Some(true)
            || s(&self.meta, &["source"])
                .to_lowercase()
                .contains("correction")
    }
}

/// One element's memory-strength decay this cycle.
pub(super) struct Step {
    pub id: String,
    pub next: f64,
    pub rule: String,
    pub band: &'static str,
    /// The version it was read at: written only if still at it.
    pub version: i64,
}

impl Fact {
    /// 7A/7B: how far this element decays now, by the time elapsed since
    /// its last decay (or since it passed the stale threshold):
    /// factor^(days/7) in its band, the same whether cycles run hourly or
    /// weekly. None when it does not decay (not stale, at the floor, or a
    /// step too small to write yet).
    pub(super) fn decay_step(&self, f: f64, threshold: f64, now: &str) -> Option<Step> {
        let strength = num(&self.meta, "memory_strength").unwrap_or(DEFAULT_STRENGTH);
        if strength <= STRENGTH_FLOOR {
            return None;
        }
        // a fact an agent read is not stale until the threshold passes
        // after that read
        let seen = self.seen()?;
        let stale_from = days_between(&seen, now).unwrap_or(0.0) - threshold;
        if stale_from <= 0.0 {
            return None;
        }
        // days to decay: since it went stale, or since the last decay
        let days = match days_between(&s(&self.meta, &["strength_decay_applied_at"]), now) {
            Some(d) => d.min(stale_from),
            None => stale_from,
        };
        if days <= 0.0 {
            return None;
        }
        let (band, factor) = self.band(f);
        let next = (strength * factor.powf(days / 7.0)).clamp(0.0, 1.0);
        if strength - next < MIN_DECAY_STEP {
            return None;
        }
        Some(Step {
            id: self.id.clone(),
            next,
            rule: format!(
                "{band}: memory_strength × {factor:.4}^({days:.2} days / 7) (decay factor {f})"
            ),
            band,
            version: self
                .meta
                .get("_version")
                .and_then(Value::as_i64)
                .unwrap_or(0),
        })
    }
}

/// Writes one batch of decay steps on concepts or links, under the lock,
/// only on the elements nobody changed since they were read (an agent's
/// reinforcement is never overwritten by a decay computed from the value
/// before it). Returns the steps written.
pub(super) fn write_steps<'a>(
    cx: &mut Cx,
    nx: &mut Nexus,
    concepts: bool,
    chunk: &'a [Step],
    reason: impl Fn(usize) -> String,
) -> KipResult<Vec<&'a Step>> {
    cx.cancelled()?;
    cx.yield_lock(nx)?;
    let table = if concepts { "concepts" } else { "propositions" };
    let current = versions(nx, table, chunk.iter().map(|u| u.id.as_str()))?;
    let chunk: Vec<&Step> = chunk
        .iter()
        .filter(|u| current.get(u.id.as_str()) == Some(&u.version))
        .collect();
    if chunk.is_empty() {
        return Ok(chunk);
    }
    let now = cx.opts.now.clone();
    let mut text = String::from("UPSERT {\n");
    for (k, u) in chunk.iter().enumerate() {
        let target = if concepts {
            format!("CONCEPT ?c{k} {{ {{id: {}}} }}", q(&u.id))
        } else {
            format!("PROPOSITION ?l{k} {{ (id: {}) }}", q(&u.id))
        };
        text.push_str(&format!(
            "  {target} WITH METADATA {{ memory_strength: {}, strength_decay_applied_at: {}, strength_decay_rule: {} }}\n",
            json!(u.next),
            q(&now),
            q(&u.rule)
        ));
    }
    text.push('}');
    write(cx, nx, &text, json!({}), &reason(chunk.len()))?;
    Ok(chunk)
}

/// One page of the live (not superseded) links of one predicate, and the
/// cursor of the next.
fn facts_page(
    nx: &mut Nexus,
    p: &str,
    cursor: Option<&str>,
) -> KipResult<(Vec<Fact>, Option<String>)> {
    let mut text = format!(
        r#"FIND(?link, ?s.name, ?o.name, ?s.attributes.salience_score, ?o.type) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
}} LIMIT {PAGE}"#,
        q(p)
    );
    if let Some(c) = cursor {
        text.push_str(&format!(" CURSOR {}", q(c)));
    }
    let (v, next) = find_page(nx, &text, json!({}))?;
    let out = rows(&v, 5)
        .into_iter()
        .map(|r| Fact {
            id: s(&r[0], &["id"]),
            label: format!(
                "{} {p} {}",
                r[1].as_str().unwrap_or("?"),
                r[2].as_str().unwrap_or("?")
            ),
            meta: r[0].get("metadata").cloned().unwrap_or(Value::Null),
            subject_salience: r[3].as_f64(),
            object_type: r[4].as_str().unwrap_or_default().to_string(),
            reads: None,
        })
        .collect::<Vec<_>>();
    let mut out = out;
    with_reads(nx, &mut out)?;
    Ok((out, next))
}

/// Links read per page (without the write lock).
const PAGE: usize = 2_000;
/// Links written per UPSERT (one batch each).
const WRITE_BATCH: usize = 100;

/// A decay smaller than this waits for a later cycle (it accumulates:
/// the time is counted from the last decay written).
const MIN_DECAY_STEP: f64 = 0.001;
/// Engram's fact-archival importance ceiling.
pub const FACT_ARCHIVAL_MAX_IMPORTANCE: f64 = 0.3;

pub(super) fn decay(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let f = cx.opts.params.memory_strength_decay_factor;
    let threshold = cx.opts.params.stale_event_threshold_days as f64;
    let now = cx.opts.now.clone();
    let preds: Vec<String> = predicates(nx)?
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !STRUCTURAL.contains(&n.as_str()))
        .collect();
    let mut decayed = 0i64;
    let mut by_band: BTreeMap<&str, i64> = BTreeMap::new();
    let mut drafts = Vec::new();
    let mut bands_count: BTreeMap<&str, i64> = BTreeMap::new();
    for (i, p) in preds.iter().enumerate() {
        cx.cancelled()?;
        cx.step(
            &format!("memory-strength decay: {p}"),
            i as u64,
            preds.len() as u64,
        );
        let cat = category(p);
        // a page at a time, each read, decided and written in one batch
        // (a yield point before each: nothing read is left unwritten there)
        let mut all: Vec<Fact> = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            // read without the write lock; what is written is checked
            // against what was read (below)
            let (page, next) = cx.unlocked(nx, |nx| facts_page(nx, p, cursor.as_deref()))?;
            cx.step(
                &format!("memory-strength decay: {p}"),
                i as u64,
                preds.len() as u64,
            );
            let mut updates: Vec<Step> = Vec::new();
            for fact in &page {
                // commitments and identity facts do not fade for want of
                // recall; pinned and certain facts never do
                // (nor does what someone is to the user, a link labelled
                // with it: `knows`, `Wife`, `Ehefrau`, `太太`)
                if matches!(cat, Some("commitment" | "identity"))
                    || fact.pinned_or_certain()
                    || fact.names_kin()
                {
                    continue;
                }
                if let Some(u) = fact.decay_step(f, threshold, &now) {
                    *by_band.entry(u.band).or_default() += 1;
                    updates.push(u);
                }
            }
            for chunk in updates.chunks(WRITE_BATCH) {
                let chunk = write_steps(cx, nx, false, chunk, |n| {
                    format!(
                        "memory-strength decay of {n} {p} facts (factor {f} per week past {threshold} days)"
                    )
                })?;
                if chunk.is_empty() {
                    continue;
                }
                decayed += chunk.len() as i64;
                // counted as it commits, so a run record written at a yield
                // point says what is in the memory
                cx.count("decayed", chunk.len() as i64);
            }
            all.extend(page);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        // Relevance and the lifecycle rules: the speculative TTL and fact
        // archival are proposals (archival is a judgement)
        // commitments and identity facts are settled elsewhere (the
        // prospective sweep, supersession); Engram's protected categories
        // still meet the speculative TTL, never fact archival
        if matches!(cat, Some("commitment" | "identity")) {
            continue;
        }
        let protected = PROTECTED_PREDICATES.contains(&p.as_str()) || cat.is_some();
        cx.step(&format!("relevance: {p}"), i as u64, preds.len() as u64);
        // what is decided here is proposed, not written: it needs no lock
        // (the notes are single statements)
        if cx.batched() {
            nx.suspend_group()?;
        }
        for fact in &all {
            if drafts.len() >= cx.opts.params.proposal_cap * 2 {
                break;
            }
            if fact.pinned_or_certain()
                || fact.meta.get("archived").and_then(Value::as_bool) == Some(true)
            {
                continue;
            }
            let Some(seen) = last_seen(&fact.meta) else {
                continue;
            };
            let age = days_between(&seen, &now).unwrap_or(0.0);
            // unused: neither seen true nor read by an agent since
            let unused = fact
                .seen()
                .and_then(|t| days_between(&t, &now))
                .unwrap_or(age);
            let r = relevance(
                &fact.meta,
                "semantic",
                &now,
                cx.opts.params.relevance_lambda,
                fact.reads.as_ref(),
            );
            let conf = fact.confidence();
            let importance = fact.importance();
            let speculative =
                conf < SPECULATIVE_BELOW && age > cx.opts.params.speculative_ttl_days as f64;
            // Engram's protected categories (preferences, lessons learned,
            // commitments, decisions, principles) are never archived by
            // the speculative rule: the operator is asked to confirm it
            if speculative
                && (protected || PROTECTED_OBJECT_TYPES.contains(&fact.object_type.as_str()))
            {
                let id = fact.id.clone();
                let label = fact.label.clone();
                drafts.push(Draft {
                    class: "confirm".into(),
                    key: format!("confirm:{id}"),
                    title: format!(
                        "Still true? \"{label}\" (confidence {conf}, unconfirmed for {age:.0} days)"
                    ),
                    commands: vec![r#"UPSERT {
  PROPOSITION ?link { (id: :link_id) }
}
WITH METADATA { confidence: :confidence, confirmed_at: :ts, last_observed: :ts }"#
                        .to_string()],
                    params: pm(json!({"link_id": id, "ts": now, "confidence": CONFIRMED_CONFIDENCE})),
                    rationale: format!(
                        "confidence {conf} < {SPECULATIVE_BELOW:.2}, unconfirmed for {age:.0} days (> {}): the speculative rule would archive it, but it is a protected kind of fact ({}), so it is asked, never archived. Approve: it holds (confidence {CONFIRMED_CONFIDENCE}, observed now). Reject: it stays as it is and is not asked again",
                        cx.opts.params.speculative_ttl_days,
                        if protected {
                            format!("predicate {p}")
                        } else {
                            format!("a {}", fact.object_type)
                        }
                    ),
                    evidence: vec![id.clone()],
                    confidence: 0.5,
                });
                note(
                    nx,
                    &id,
                    &label,
                    cx.run,
                    "asked",
                    "speculative TTL on a protected category: asked, not archived",
                    &json!({"confidence": conf, "age_days": age, "now": now}),
                )?;
                continue;
            }
            let (rule, why) = if speculative {
                (
                    "speculative TTL",
                    format!(
                        "confidence {conf} < {SPECULATIVE_BELOW:.2} and unconfirmed for {age:.0} days (> {})",
                        cx.opts.params.speculative_ttl_days
                    ),
                )
            } else if !protected
                && !PROTECTED_OBJECT_TYPES.contains(&fact.object_type.as_str())
                && unused > cx.opts.params.fact_archival_age_days as f64
                && fact.read_count() <= FACT_ARCHIVAL_MAX_READS
                && importance < FACT_ARCHIVAL_MAX_IMPORTANCE
                && r.score < cx.opts.params.archive_threshold
                && !fact.correction()
            {
                (
                    "fact archival",
                    format!(
                        "{unused:.0} days neither observed nor read (> {}), read {} times (≤ {FACT_ARCHIVAL_MAX_READS}), importance {importance:.2} < {FACT_ARCHIVAL_MAX_IMPORTANCE}, relevance {:.4} < {}, not a protected category, not a correction",
                        cx.opts.params.fact_archival_age_days,
                        fact.read_count(),
                        r.score,
                        cx.opts.params.archive_threshold
                    ),
                )
            } else {
                continue;
            };
            *bands_count.entry(band(r.status)).or_default() += 1;
            let id = fact.id.clone();
            let label = fact.label.clone();
            let inputs = json!({"rule": rule, "relevance": r, "reads": fact.read_count(), "last_read": fact.reads.as_ref().map(|r| r.1.clone()), "confidence": conf, "importance": importance, "evidence_count": reinforcements(&fact.meta), "salience": fact.salience(), "now": now});
            drafts.push(Draft {
                class: "archive".into(),
                key: format!("archive:{id}"),
                title: format!("Archive the fact \"{label}\" ({rule})"),
                commands: vec![r#"UPSERT {
  PROPOSITION ?link { (id: :link_id) }
}
WITH METADATA { archived: true, archived_at: :ts, archived_by: "$system", archive_rule: :rule, archive_reason: :why, memory_tier: "archived", relevance: :relevance }"#
                    .to_string()],
                params: pm(json!({"link_id": id, "ts": now, "rule": rule, "why": why, "relevance": (r.score * 10000.0).round() / 10000.0})),
                rationale: format!("{rule}: {why}; relevance {:.4} ({}) = base {} × e^(−{}×{:.0}) × log2({}+1) × {}", r.score, band(r.status), r.base, r.lambda, r.days_since_access, r.access_count, r.type_weight),
                evidence: vec![id.clone()],
                confidence: 0.7,
            });
            note(nx, &id, &label, cx.run, "proposed archival", rule, &inputs)?;
        }
        nx.resume_group()?;
        cx.slice_start = Instant::now();
    }
    for (b, n) in &by_band {
        cx.count(&format!("decayed_{b}"), *n);
    }
    cx.line(format!(
        "Decayed memory strength on {decayed} propositions{} (confidence untouched)",
        if by_band.is_empty() {
            String::new()
        } else {
            format!(
                ": {}",
                by_band
                    .iter()
                    .map(|(b, n)| format!("{n} {b}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));
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
    nx.db().execute(
        "INSERT INTO sleep_notes(element, label, run, at, action, rule, inputs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        crate::args![el, label, run, store::now(), action, rule, inputs.to_string()],
    )?;
    Ok(())
}
