//! Phase 8C: the growth timeline, `GrowthMilestone` Events (`involves`
//! `$self`, in the `SelfModel` domain), curated as the sleep-mode 8C says:
//! 1. identity-class milestones (`identity_milestone`, `mission_clarified`,
//!    `persona_shift`) are landmarks: long-term, no TTL;
//! 2. minor ones (`capability_gain`, `weakness_acknowledged`,
//!    `values_emerged`) lapse once the self-model has absorbed them (a
//!    refinement of `$self` after them, and an entry of the attribute the
//!    kind feeds that says what they say): an absorbed one about to lapse
//!    is marked consolidated so phase 12 may reclaim it; one not absorbed
//!    has its TTL extended;
//! 3. a crowd of same-kind minor milestones in one quarter is proposed as
//!    one `summary` milestone derived from them, the originals' TTL
//!    shortened on approval;
//! 4. a legacy `$self.attributes.growth_log` array is re-encoded as
//!    milestone Events and then deleted, in one transaction (idempotent:
//!    the names are deterministic).
//!
//! 1, 2 and 4 only keep or move what is there, so they are applied; 3
//! shortens lives, so it is proposed.

use super::context::*;
use super::decay::note;
use super::reclaim::{extend_ttl, promote_landmark};

/// Milestone kinds that are born landmarks.
pub const IDENTITY_KINDS: [&str; 3] = ["identity_milestone", "mission_clarified", "persona_shift"];

/// Milestone kinds that lapse once absorbed.
pub const MINOR_KINDS: [&str; 3] = ["capability_gain", "weakness_acknowledged", "values_emerged"];

/// A minor milestone this close to its expiry, not yet absorbed, has its
/// TTL extended...
pub const LAPSE_WINDOW_DAYS: i64 = 14;

/// ...by this many days from now.
pub const UNABSORBED_EXTENSION_DAYS: i64 = 90;

/// Same-kind minor milestones in one quarter from which the cycle proposes
/// one summary.
pub const CROWD: usize = 5;

/// The originals of a summary expire this many days after its approval
/// (sooner if they already did).
pub const SUMMARISED_TTL_DAYS: i64 = 30;

/// A minor milestone migrated from `growth_log` lives this long.
pub const MIGRATED_MINOR_TTL_DAYS: i64 = 365;

/// Milestones read per cycle at most.
pub const READ: usize = 2000;

struct Milestone {
    id: String,
    name: String,
    kind: String,
    start: String,
    summary: String,
    tier: String,
    expires: String,
    consolidation: String,
}

fn milestones(nx: &mut Nexus) -> KipResult<Vec<Milestone>> {
    let v = find(
        nx,
        &format!(
            r#"FIND(?e) WHERE {{ ?e {{type: "Event"}} FILTER(?e.attributes.event_class == "GrowthMilestone") }} LIMIT {READ}"#
        ),
        json!({}),
    )?;
    Ok(v.as_array()
        .into_iter()
        .flatten()
        .map(|e| Milestone {
            id: s(e, &["id"]),
            name: s(e, &["name"]),
            kind: s(e, &["attributes", "context", "kind"]),
            start: s(e, &["attributes", "start_time"]),
            summary: s(e, &["attributes", "content_summary"]),
            tier: s(e, &["metadata", "memory_tier"]),
            expires: s(e, &["metadata", "expires_at"]),
            consolidation: s(e, &["attributes", "consolidation_status"]),
        })
        .collect())
}

/// `2026-Q3` for a time; None when it is not one.
fn quarter(at: &str) -> Option<String> {
    use chrono::Datelike;
    let t = instant(at)?.to_utc();
    Some(format!("{}-Q{}", t.year(), (t.month() - 1) / 3 + 1))
}

/// 8C, after the self-model review.
pub(super) fn growth_timeline(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("growth timeline", 0, 0);
    // one transaction: all the entries and the deletion, or nothing
    let migrated = locked(nx, |nx| migrate_growth_log(cx, nx))?;
    let all = milestones(nx)?;
    let me = find(
        nx,
        r#"FIND(?s.attributes) WHERE { ?s {type: "Person", name: "$self"} }"#,
        json!({}),
    )?;
    let me = me
        .as_array()
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or(Value::Null);
    let refined = s(&me, &["self_model_updated_at"]);
    let (mut promoted, mut lapsing, mut extended) = (0i64, 0i64, 0i64);
    let soon = shift(&cx.opts.now, LAPSE_WINDOW_DAYS);
    for m in &all {
        cx.cancelled()?;
        let label = format!("Event:{}", m.name);
        if IDENTITY_KINDS.contains(&m.kind.as_str()) {
            if m.tier != "long-term" || !m.expires.is_empty() {
                let why = format!("a {} milestone is part of who $self is", m.kind);
                locked(nx, |nx| promote_landmark(cx, nx, &m.id, &label, &why))?;
                promoted += 1;
            }
            continue;
        }
        if !MINOR_KINDS.contains(&m.kind.as_str()) || m.expires.is_empty() {
            continue;
        }
        if before(&soon, &m.expires) != Some(false) {
            // not about to lapse (or a TTL that is not a time: phase 12's)
            continue;
        }
        let absorbed = absorbed(m, &me, &refined);
        if absorbed {
            if !matches!(m.consolidation.as_str(), "completed" | "archived") {
                locked(nx, |nx| {
                    write(
                        cx,
                        nx,
                        r#"UPDATE ?e SET ATTRIBUTES { consolidation_status: "completed", absorbed_into_self_model_at: :at } WHERE { ?e {id: :id} }"#,
                        json!({"id": m.id, "at": refined}),
                        "8C: a minor milestone the self-model has absorbed lapses with its TTL",
                    )?;
                    note(
                        nx,
                        &m.id,
                        &label,
                        cx.run,
                        "absorbed",
                        "8C: absorbed into the self-model; left to lapse with its TTL",
                        &json!({"expires_at": m.expires, "self_model_updated_at": refined}),
                    )
                })?;
            }
            lapsing += 1;
            continue;
        }
        let until = shift(&cx.opts.now, UNABSORBED_EXTENSION_DAYS);
        locked(nx, |nx| {
            extend_ttl(
                cx,
                nx,
                &m.id,
                &until,
                "a minor milestone the self-model has not absorbed yet (no refinement of $self approved since)",
            )?;
            note(
                nx,
                &m.id,
                &label,
                cx.run,
                "extended",
                "8C: a minor milestone lapses only once the self-model has absorbed it",
                &json!({"expires_at": m.expires, "until": until, "self_model_updated_at": refined}),
            )
        })?;
        extended += 1;
    }
    let drafts = crowd_drafts(cx, &all);
    let crowds = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("milestones_promoted", promoted);
    cx.count("milestones_left_to_lapse", lapsing);
    cx.count("milestones_extended", extended);
    cx.count("milestone_crowds", crowds as i64);
    cx.count("growth_log_migrated", migrated as i64);
    let mut parts = Vec::new();
    if promoted > 0 {
        parts.push(format!(
            "{promoted} identity milestones promoted to landmarks"
        ));
    }
    if lapsing > 0 {
        parts.push(format!("{lapsing} absorbed minor milestones left to lapse"));
    }
    if extended > 0 {
        parts.push(format!(
            "{extended} minor milestones not yet absorbed kept {UNABSORBED_EXTENSION_DAYS} days more"
        ));
    }
    if crowds > 0 {
        parts.push(format!("{crowds} crowded quarters proposed as summaries"));
    }
    if migrated > 0 {
        parts.push(format!(
            "legacy growth_log migrated ({migrated} entries → GrowthMilestone Events, array deleted)"
        ));
    }
    if !parts.is_empty() {
        cx.line(format!("Growth timeline curated: {}", parts.join("; ")));
    }
    Ok(())
}

/// Where the self-model holds what a minor milestone of this kind says.
fn absorbing_attributes(kind: &str) -> &'static [&'static str] {
    match kind {
        "capability_gain" => &["strengths", "identity_narrative"],
        "weakness_acknowledged" => &["weaknesses", "identity_narrative"],
        _ => &["values", "identity_narrative", "core_mission"],
    }
}

/// A share of an entry's words a milestone must state for the entry to
/// hold it.
pub const ABSORBED_WORDS: f64 = 0.5;

/// Whether the self-model has absorbed a minor milestone: a refinement of
/// `$self` came after it, and one entry of the attribute its kind feeds
/// (`strengths` for a capability gain…) says what it says (half of that
/// entry's words are the milestone's).
fn absorbed(m: &Milestone, me: &Value, refined: &str) -> bool {
    if before(&m.start, refined) != Some(true) {
        return false;
    }
    let said = similarity::stems_of(&m.summary);
    absorbing_attributes(&m.kind).iter().any(|a| {
        let entries = match me.get(*a) {
            Some(Value::String(t)) => vec![t.clone()],
            v => strs(v),
        };
        entries.iter().any(|e| {
            let w = similarity::stems_of(e);
            !w.is_empty() && w.intersection(&said).count() as f64 / w.len() as f64 >= ABSORBED_WORDS
        })
    })
}

/// One summary proposal per quarter and minor kind with a crowd of
/// milestones not summarised yet.
fn crowd_drafts(cx: &Cx, all: &[Milestone]) -> Vec<Draft> {
    let mut groups: BTreeMap<(String, String), Vec<&Milestone>> = BTreeMap::new();
    for m in all {
        if !MINOR_KINDS.contains(&m.kind.as_str()) {
            continue;
        }
        if let Some(q) = quarter(&m.start) {
            groups.entry((q, m.kind.clone())).or_default().push(m);
        }
    }
    let mut out = Vec::new();
    for ((q, kind), mut ms) in groups {
        if ms.len() < CROWD {
            continue;
        }
        ms.sort_by_key(|m| instant(&m.start));
        let (first, last) = (ms[0].start.clone(), ms[ms.len() - 1].start.clone());
        let name = format!("GrowthMilestone:summary:{q}:{kind}");
        let gist: Vec<String> = ms
            .iter()
            .filter(|m| !m.summary.is_empty())
            .map(|m| m.summary.chars().take(160).collect())
            .collect();
        let summary = format!(
            "{} {} milestones in {q}: {}",
            ms.len(),
            kind.replace('_', " "),
            gist.join("; ")
        );
        let short = shift(&cx.opts.now, SUMMARISED_TTL_DAYS);
        let mut commands = vec![format!(
            r#"UPSERT {{
  CONCEPT ?domain {{ {{type: "Domain", name: "SelfModel"}} }}
  CONCEPT ?m {{
    {{type: "Event", name: :name}}
    SET ATTRIBUTES {{
      event_class: "GrowthMilestone", start_time: :first, end_time: :last,
      content_summary: :summary, participants: ["$self"],
      context: {{ kind: "summary", summarised_kind: :kind, quarter: :quarter, first: :first, last: :last, count: :count }},
      consolidation_status: "completed"
    }}
    SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "$self"}}) ("belongs_to_domain", ?domain) {} }}
  }}
}}
WITH METADATA {{ source: "GrowthTimelineCuration", author: "$system", confidence: 0.9, created_at: :ts }}"#,
            (0..ms.len())
                .map(|i| format!(r#"("derived_from", {{type: "Event", name: :m{i}}})"#))
                .collect::<Vec<_>>()
                .join(" ")
        )];
        let mut params = json!({
            "name": name, "first": first, "last": last, "summary": summary,
            "kind": kind, "quarter": q, "count": ms.len(), "ts": cx.opts.now,
        });
        for (i, m) in ms.iter().enumerate() {
            params[format!("m{i}")] = json!(m.name);
            // shortened, never lengthened
            if before(&m.expires, &short) != Some(true) {
                params[format!("u{i}")] = json!(short);
                commands.push(format!(
                    r#"UPDATE ?e SET METADATA {{ expires_at: :u{i} }} WHERE {{ ?e {{type: "Event", name: :m{i}}} }}"#
                ));
            }
        }
        let mut ids: Vec<String> = ms.iter().map(|m| m.id.clone()).collect();
        ids.sort();
        out.push(Draft {
            class: "self_model".into(),
            key: format!("milestones:{q}:{kind}:{}", ids.join(",")),
            title: format!(
                "Summarise {} {} milestones of {q} as one; the originals expire in {SUMMARISED_TTL_DAYS} days",
                ms.len(),
                kind.replace('_', " ")
            ),
            commands,
            params: pm(params),
            rationale: format!(
                "{} same-kind minor milestones in one quarter ({first} to {last}): one summary derived from them keeps the timeline readable (8C)",
                ms.len()
            ),
            evidence: ids,
            confidence: 0.8,
        });
    }
    out
}

/// One legacy `growth_log` entry, read whatever shape it has.
struct Entry {
    at: String,
    kind: String,
    summary: String,
    evidence_event: String,
    evidence_insight: String,
}

fn entry(v: &Value) -> Entry {
    let pick = |keys: &[&str]| -> String {
        keys.iter()
            .map(|k| s(v, &[k]))
            .find(|t| !t.is_empty())
            .unwrap_or_default()
    };
    match v {
        Value::String(t) => {
            // "2026-03-01: learned to ..." / "2026-03-01 - ..."
            let head: String = t.chars().take(10).collect();
            let (at, rest) = if instant(&head).is_some() {
                (
                    head,
                    t.chars()
                        .skip(10)
                        .collect::<String>()
                        .trim_start_matches([':', '-', ' ', '—', '–'])
                        .to_string(),
                )
            } else {
                (String::new(), t.clone())
            };
            Entry {
                at,
                kind: String::new(),
                summary: rest,
                evidence_event: String::new(),
                evidence_insight: String::new(),
            }
        }
        _ => Entry {
            at: pick(&[
                "timestamp",
                "date",
                "at",
                "time",
                "start_time",
                "created_at",
            ]),
            kind: pick(&["kind", "type", "category"]),
            summary: pick(&[
                "summary",
                "content_summary",
                "description",
                "event",
                "note",
                "text",
                "milestone",
                "insight",
            ]),
            evidence_event: pick(&["evidence_event", "source_event"]),
            evidence_insight: pick(&["evidence_insight", "insight_name"]),
        },
    }
}

/// 8C.4: the legacy array re-encoded as milestone Events, then deleted;
/// the number of entries migrated.
fn migrate_growth_log(cx: &mut Cx, nx: &mut Nexus) -> KipResult<usize> {
    let v = find(
        nx,
        r#"FIND(?self.attributes.growth_log) WHERE { ?self {type: "Person", name: "$self"} }"#,
        json!({}),
    )?;
    let Some(log) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(0);
    };
    let entries: Vec<Value> = match log {
        Value::Null => return Ok(0),
        Value::Array(a) => a,
        other => vec![other],
    };
    let mut names: HashSet<String> = HashSet::new();
    for (i, raw) in entries.iter().enumerate() {
        let e = entry(raw);
        // an entry of no known kind is kept for good: nothing says it may go
        let kind = if e.kind.is_empty() {
            "unclassified".to_string()
        } else {
            e.kind.clone()
        };
        let day = instant(&e.at)
            .map(|t| t.to_utc().format("%Y-%m-%dT%H:%M").to_string())
            .unwrap_or_else(|| format!("undated-{}", i + 1));
        let mut name = format!("GrowthMilestone:{day}:{kind}");
        let mut n = 2;
        while !names.insert(name.clone()) {
            name = format!("GrowthMilestone:{day}:{kind}:{n}");
            n += 1;
        }
        let lifecycle = if MINOR_KINDS.contains(&kind.as_str()) {
            format!(
                r#"expires_at: "{}""#,
                shift(&cx.opts.now, MIGRATED_MINOR_TTL_DAYS)
            )
        } else {
            r#"memory_tier: "long-term""#.to_string()
        };
        let summary = if e.summary.is_empty() {
            raw.to_string()
        } else {
            e.summary.clone()
        };
        write(
            cx,
            nx,
            &format!(
                r#"UPSERT {{
  CONCEPT ?domain {{
    {{type: "Domain", name: "SelfModel"}}
    SET ATTRIBUTES {{ description: "The agent's own growth timeline and self-model artifacts." }}
  }}
  CONCEPT ?m {{
    {{type: "Event", name: :name}}
    SET ATTRIBUTES {{
      event_class: "GrowthMilestone", start_time: :at, content_summary: :summary,
      participants: ["$self"],
      context: {{ kind: :kind, evidence_event: :ev, evidence_insight: :ei, legacy_entry: :raw }}
    }}
    SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "$self"}}) ("belongs_to_domain", ?domain) }}
  }}
  WITH METADATA {{ {lifecycle} }}
}}
WITH METADATA {{ source: "GrowthLogMigration", author: "$system", confidence: 1.0, created_at: :ts, observed_at: :at }}"#
            ),
            json!({
                "name": name, "at": if e.at.is_empty() { Value::Null } else { json!(e.at) },
                "summary": summary, "kind": kind, "ev": e.evidence_event,
                "ei": e.evidence_insight, "raw": raw, "ts": cx.opts.now,
            }),
            &format!(
                "8C.4: growth_log entry {} of {} re-encoded as {name}",
                i + 1,
                entries.len()
            ),
        )?;
    }
    write(
        cx,
        nx,
        r#"DELETE ATTRIBUTES {"growth_log"} FROM ?self WHERE { ?self {type: "Person", name: "$self"} }"#,
        json!({}),
        &format!(
            "8C.4: growth_log deleted once its {} entries were GrowthMilestone Events",
            entries.len()
        ),
    )?;
    Ok(entries.len())
}
