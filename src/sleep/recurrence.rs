//! Cross-event patterns (phase 5B) without a model: which Events belong
//! together, and what kind of recurrence they show. The kinds follow the
//! sleep-mode pattern types: recurring preferences become a Preference,
//! repeated decisions a trait, temporal clustering a routine (a schedule
//! insight); anything else that keeps coming back is a recurring topic.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use chrono::Datelike;

use super::clock::instant;
use super::extraction::extract;
use super::views::{Cluster, EventView, Pattern};

/// A pattern needs at least this many Events: two is a coincidence.
pub const MIN_EVENTS: usize = 3;

/// A concept is one of a cluster's shared concepts when at least this
/// share of its Events name it: a pattern need not have the very same key
/// concepts in every Event ("rehearsal + Bach", "rehearsal + Elgar").
pub const SHARED_CONCEPT_SHARE: f64 = 2.0 / 3.0;

/// Two candidate clusters of one holder whose Events overlap this much
/// (Jaccard) are one pattern seen from two of its concepts.
pub const SAME_CLUSTER_OVERLAP: f64 = 0.8;

/// A kind (stated preferences, decisions) is the cluster's when at least
/// this share of its Events state one: one remark among many is not a
/// pattern of remarks.
pub const KIND_SHARE: f64 = 0.5;

/// A recurring preference names one preference stated in at least this
/// many Events.
pub const PREFERENCE_REPEATS: usize = 2;

/// A routine by weekday: at least this share of the Events fall on one
/// day of the week (three of three by chance is 1 in 49).
pub const SAME_WEEKDAY_SHARE: f64 = 2.0 / 3.0;

/// A routine by interval needs this many Events (three Events always have
/// two gaps, and two gaps agree too often by chance)...
pub const INTERVAL_MIN_EVENTS: usize = 4;

/// ...gaps of at least a day (several Events in one day are a session,
/// not a routine)...
pub const INTERVAL_MIN_GAP_DAYS: f64 = 1.0;

/// ...and no gap more than this many times another.
pub const INTERVAL_GAP_RATIO: f64 = 1.5;

/// The clusters the Events of the lookback window form: each Event joins
/// the cluster of its first participant and each of its key concepts; a
/// cluster's concepts are those most of its Events share. The most
/// specific clusters (most shared concepts) are taken first; a cluster
/// that is another seen from a second concept, or that adds fewer than
/// [`MIN_EVENTS`] Events to those taken, is left out (a broad "Atlas" is
/// not proposed beside its "Atlas + Kafka" and "Atlas + Terraform"), and
/// so are clusters whose Events are all consolidated already.
pub fn clusters(recent: &[EventView], consolidated: &HashSet<String>) -> Vec<Cluster> {
    let mut seeds: BTreeMap<(String, String), BTreeSet<usize>> = BTreeMap::new();
    for (i, e) in recent.iter().enumerate() {
        if e.key_concepts.is_empty() || e.class == "ToolUse" {
            continue;
        }
        let holder = e.participants.first().cloned().unwrap_or_default();
        for k in &e.key_concepts {
            seeds
                .entry((holder.clone(), k.clone()))
                .or_default()
                .insert(i);
        }
    }
    let mut candidates: Vec<(String, Vec<String>, BTreeSet<usize>)> = seeds
        .into_iter()
        .filter(|(_, evs)| evs.len() >= MIN_EVENTS)
        .map(|((holder, _), evs)| {
            let shared = shared_concepts(recent, &evs);
            (holder, shared, evs)
        })
        .collect();
    candidates.sort_by(|a, b| {
        b.1.len()
            .cmp(&a.1.len())
            .then_with(|| b.2.len().cmp(&a.2.len()))
            .then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1)))
    });
    let mut taken: Vec<(String, BTreeSet<usize>)> = Vec::new();
    let mut out = Vec::new();
    for (holder, key_concepts, evs) in candidates {
        let mine = taken.iter().filter(|(h, _)| *h == holder);
        let mut covered = BTreeSet::new();
        let mut same = false;
        for (_, t) in mine {
            same |= jaccard(t, &evs) >= SAME_CLUSTER_OVERLAP;
            covered.extend(t.intersection(&evs).copied());
        }
        if same || evs.len() - covered.len() < MIN_EVENTS {
            continue;
        }
        taken.push((holder.clone(), evs.clone()));
        if evs.iter().all(|i| consolidated.contains(&recent[*i].name)) {
            continue;
        }
        let mut events: Vec<EventView> = evs.iter().map(|i| recent[*i].clone()).collect();
        events.sort_by(|a, b| a.start.cmp(&b.start).then_with(|| a.name.cmp(&b.name)));
        out.push(Cluster {
            holder,
            key_concepts,
            events,
        });
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.events.len()));
    out
}

/// The concepts at least [`SHARED_CONCEPT_SHARE`] of the Events name, in
/// name order.
fn shared_concepts(recent: &[EventView], evs: &BTreeSet<usize>) -> Vec<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for i in evs {
        let mut seen = BTreeSet::new();
        for k in &recent[*i].key_concepts {
            if seen.insert(k.as_str()) {
                *counts.entry(k.as_str()).or_default() += 1;
            }
        }
    }
    let n = evs.len() as f64;
    counts
        .into_iter()
        .filter(|(_, c)| *c as f64 >= SHARED_CONCEPT_SHARE * n - 1e-9)
        .map(|(k, _)| k.to_string())
        .collect()
}

fn jaccard(a: &BTreeSet<usize>, b: &BTreeSet<usize>) -> f64 {
    let inter = a.intersection(b).count() as f64;
    let union = a.union(b).count() as f64;
    if union == 0.0 { 0.0 } else { inter / union }
}

/// What a cluster shows, judged by the kinds in order: a stated
/// preference, repeated decisions, a schedule, a recurring topic.
pub fn judge(c: &Cluster) -> Option<Pattern> {
    let n = c.events.len();
    if n < MIN_EVENTS || c.key_concepts.is_empty() {
        return None;
    }
    let concepts = c.key_concepts.join(" + ");
    let with = if c.holder.is_empty() {
        String::new()
    } else {
        format!(" with {}", c.holder)
    };
    let (first, last) = span(c);
    let domain = main_domain(c);
    // convergent evidence beats one observation
    let confidence = (0.6 + 0.05 * n as f64).min(0.9);
    let base = |kind: &str, ty: &str, name: String, description: String, rationale: String| {
        Some(Pattern {
            ty: ty.into(),
            kind: kind.into(),
            name,
            description,
            domain: domain.clone(),
            confidence,
            rationale,
        })
    };
    // recurring preferences → a Preference
    let stated: Vec<Vec<String>> = c
        .events
        .iter()
        .map(|e| {
            extract(e)
                .into_iter()
                .filter(|x| x.kind == "preference")
                .map(|x| x.name)
                .collect()
        })
        .collect();
    let with_pref = stated.iter().filter(|s| !s.is_empty()).count();
    let mut pref_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &stated {
        for p in s.iter().collect::<BTreeSet<_>>() {
            *pref_counts.entry(p.as_str()).or_default() += 1;
        }
    }
    if let Some((pref, times)) = pref_counts
        .iter()
        .max_by_key(|(p, k)| (**k, std::cmp::Reverse(**p)))
        && *times >= PREFERENCE_REPEATS
        && with_pref as f64 >= KIND_SHARE * n as f64
    {
        return base(
            "preference",
            "Preference",
            pref.to_string(),
            format!(
                "Stated in {times} of {n} Events about {} between {first} and {last}",
                c.key_concepts.join(", ")
            ),
            format!("a recurring preference: \"{pref}\" stated {times} times{with}"),
        );
    }
    // repeated decisions → a trait
    let decisions: Vec<String> = c
        .events
        .iter()
        .flat_map(|e| {
            extract(e)
                .into_iter()
                .filter(|x| x.kind == "decision")
                .map(|x| x.name)
                .take(1)
        })
        .collect();
    if decisions.len() as f64 >= KIND_SHARE * n as f64 && decisions.len() >= 2 {
        // one decision kept again and again is a rule its holder keeps
        let mut same: BTreeMap<&str, usize> = BTreeMap::new();
        for d in &decisions {
            *same.entry(d.as_str()).or_default() += 1;
        }
        let (top, times) = same
            .iter()
            .max_by_key(|(d, k)| (**k, std::cmp::Reverse(**d)))
            .map(|(d, k)| (d.to_string(), *k))
            .unwrap_or_default();
        let kept = times * 2 > decisions.len() && times >= PREFERENCE_REPEATS;
        let name = match (kept, c.holder.is_empty()) {
            (true, true) => format!("Trait: keeps to \"{top}\""),
            (true, false) => format!("Trait: {} keeps to \"{top}\"", c.holder),
            (false, true) => format!("Trait: repeated decisions on {concepts}"),
            (false, false) => format!("Trait: {} repeatedly decides on {concepts}", c.holder),
        };
        let mut listed: Vec<&str> = Vec::new();
        for d in &decisions {
            if !listed.contains(&d.as_str()) {
                listed.push(d);
            }
        }
        return base(
            "trait",
            "Insight",
            name,
            format!(
                "{} decisions on {} between {first} and {last}: {}",
                decisions.len(),
                c.key_concepts.join(", "),
                listed.join("; ")
            ),
            format!(
                "repeated decisions: {} of {n} Events state one",
                decisions.len()
            ),
        );
    }
    // temporal clustering → a routine
    if let Some(when) = schedule(c) {
        return base(
            "routine",
            "Insight",
            format!("Routine: {concepts}{with} {when}"),
            format!(
                "{} came back {n} times {when}, between {first} and {last}",
                c.key_concepts.join(", ")
            ),
            format!("a schedule: {n} Events {when}"),
        );
    }
    // anything else that keeps coming back
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &c.events {
        *counts.entry(e.summary.as_str()).or_default() += 1;
    }
    let (summary, _) = counts.iter().max_by_key(|(_, k)| **k)?;
    base(
        "topic",
        "Insight",
        format!("Recurring: {concepts}{with}"),
        format!(
            "{} came back {n} times between {first} and {last}: {summary}",
            c.key_concepts.join(", ")
        ),
        format!(
            "{n} Events share the key concepts {}{with}",
            c.key_concepts.join(", ")
        ),
    )
}

/// "on Tuesdays" or "every 7 days", when the Events keep one.
fn schedule(c: &Cluster) -> Option<String> {
    let times: Vec<_> = c.events.iter().filter_map(|e| instant(&e.start)).collect();
    if times.len() < MIN_EVENTS {
        return None;
    }
    let mut days: BTreeMap<u32, usize> = BTreeMap::new();
    for t in &times {
        *days.entry(t.weekday().num_days_from_monday()).or_default() += 1;
    }
    if let Some((d, k)) = days
        .iter()
        .max_by_key(|(d, k)| (**k, std::cmp::Reverse(**d)))
        && *k as f64 >= SAME_WEEKDAY_SHARE * times.len() as f64 - 1e-9
        && *k >= MIN_EVENTS
    {
        let name = [
            "Mondays",
            "Tuesdays",
            "Wednesdays",
            "Thursdays",
            "Fridays",
            "Saturdays",
            "Sundays",
        ][*d as usize];
        // a weekday routine must not be one burst within a week
        let mut sorted = times.clone();
        sorted.sort();
        let spread = (*sorted.last()? - sorted[0]).num_days();
        if spread >= 7 {
            return Some(format!("on {name}"));
        }
    }
    if times.len() < INTERVAL_MIN_EVENTS {
        return None;
    }
    let mut sorted = times;
    sorted.sort();
    let gaps: Vec<f64> = sorted
        .windows(2)
        .map(|w| (w[1] - w[0]).num_minutes() as f64 / 1440.0)
        .collect();
    let min = gaps.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = gaps.iter().cloned().fold(0.0, f64::max);
    if min >= INTERVAL_MIN_GAP_DAYS && max <= INTERVAL_GAP_RATIO * min {
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        return Some(format!("every {} days", mean.round() as i64));
    }
    None
}

fn span(c: &Cluster) -> (String, String) {
    let day = |s: &str| s.get(..10).unwrap_or(s).to_string();
    let first = c
        .events
        .iter()
        .map(|e| e.start.as_str())
        .min()
        .unwrap_or("");
    let last = c
        .events
        .iter()
        .map(|e| e.start.as_str())
        .max()
        .unwrap_or("");
    (day(first), day(last))
}

fn main_domain(c: &Cluster) -> String {
    let mut domains: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &c.events {
        for d in &e.domains {
            *domains.entry(d.as_str()).or_default() += 1;
        }
    }
    domains
        .iter()
        .max_by_key(|(d, k)| (**k, std::cmp::Reverse(**d)))
        .map(|(d, _)| d.to_string())
        .unwrap_or_else(|| "Unsorted".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, start: &str, summary: &str, concepts: &[&str]) -> EventView {
        EventView {
            id: name.into(),
            name: name.into(),
            class: "Conversation".into(),
            summary: summary.into(),
            start: start.into(),
            key_concepts: concepts.iter().map(|s| s.to_string()).collect(),
            participants: vec!["Ada".into()],
            salience: None,
            linked: vec![("Person".into(), "Ada".into())],
            domains: vec!["Music".into()],
            expires_at: None,
        }
    }

    #[test]
    fn clusters_need_not_share_every_key_concept() {
        let evs = vec![
            ev("a", "2026-11-02T10:00:00Z", "x", &["Rehearsal", "Bach"]),
            ev("b", "2026-11-05T10:00:00Z", "x", &["Rehearsal", "Elgar"]),
            ev("c", "2026-11-13T10:00:00Z", "x", &["Rehearsal", "Haydn"]),
        ];
        let c = clusters(&evs, &HashSet::new());
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].key_concepts, vec!["Rehearsal"]);
        assert_eq!(c[0].events.len(), 3);
    }

    #[test]
    fn one_set_of_events_is_one_cluster() {
        let evs: Vec<_> = ["01", "04", "09"]
            .iter()
            .map(|d| {
                ev(
                    d,
                    &format!("2026-11-{d}T10:00:00Z"),
                    "x",
                    &["Cello", "Bach"],
                )
            })
            .collect();
        let c = clusters(&evs, &HashSet::new());
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].key_concepts, vec!["Bach", "Cello"]);
    }

    #[test]
    fn a_broad_cluster_made_of_specific_ones_is_left_out() {
        let mut evs = Vec::new();
        for (k, other) in ["Kafka", "Terraform"].iter().enumerate() {
            for d in 0..3 {
                evs.push(ev(
                    &format!("{other}{d}"),
                    &format!("2026-11-{:02}T10:00:00Z", 1 + d * 3 + k),
                    "x",
                    &["Atlas", other],
                ));
            }
        }
        let c = clusters(&evs, &HashSet::new());
        let names: Vec<_> = c.iter().map(|c| c.key_concepts.join("+")).collect();
        assert_eq!(names, vec!["Atlas+Kafka", "Atlas+Terraform"]);
    }

    #[test]
    fn kinds() {
        let weekly: Vec<_> = ["03", "10", "17"]
            .iter()
            .map(|d| {
                ev(
                    d,
                    &format!("2026-11-{d}T18:00:00Z"),
                    "Quartet rehearsal",
                    &["Quartet"],
                )
            })
            .collect();
        let c = &clusters(&weekly, &HashSet::new())[0];
        let p = judge(c).unwrap();
        assert_eq!(p.kind, "routine");
        assert_eq!(p.name, "Routine: Quartet with Ada on Tuesdays");

        let prefs: Vec<_> = ["03", "06", "12"]
            .iter()
            .map(|d| {
                ev(
                    d,
                    &format!("2026-11-{d}T08:00:00Z"),
                    "Ada prefers oat milk in her coffee. Chatted about the week.",
                    &["Coffee"],
                )
            })
            .collect();
        let p = judge(&clusters(&prefs, &HashSet::new())[0]).unwrap();
        assert_eq!(
            (p.kind.as_str(), p.ty.as_str()),
            ("preference", "Preference")
        );
        assert_eq!(p.name, "Prefers oat milk in her coffee");

        let decisions = vec![
            ev(
                "a",
                "2026-11-01T08:00:00Z",
                "Ada decided to postpone the tour",
                &["Tour"],
            ),
            ev(
                "b",
                "2026-11-04T08:00:00Z",
                "Ada chose the later dates",
                &["Tour"],
            ),
            ev(
                "c",
                "2026-11-15T08:00:00Z",
                "Talked about the tour",
                &["Tour"],
            ),
        ];
        let p = judge(&clusters(&decisions, &HashSet::new())[0]).unwrap();
        assert_eq!(p.kind, "trait");
        assert_eq!(p.name, "Trait: Ada repeatedly decides on Tour");
        let kept: Vec<_> = ["01", "04", "15"]
            .iter()
            .map(|d| {
                ev(
                    d,
                    &format!("2026-11-{d}T08:00:00Z"),
                    "Ada decided no coffee after 2pm",
                    &["Health"],
                )
            })
            .collect();
        let p = judge(&clusters(&kept, &HashSet::new())[0]).unwrap();
        assert_eq!(p.name, "Trait: Ada keeps to \"No coffee after 2pm\"");

        let topic = vec![
            ev(
                "a",
                "2026-11-01T08:00:00Z",
                "Talked about the tour",
                &["Tour"],
            ),
            ev(
                "b",
                "2026-11-04T08:00:00Z",
                "Talked about the tour",
                &["Tour"],
            ),
            ev("c", "2026-11-15T08:00:00Z", "Tour budget", &["Tour"]),
        ];
        let p = judge(&clusters(&topic, &HashSet::new())[0]).unwrap();
        assert_eq!(p.kind, "topic");
        assert_eq!(p.name, "Recurring: Tour with Ada");
    }

    #[test]
    fn a_burst_within_one_week_is_no_routine() {
        let burst: Vec<_> = [
            "2026-11-03T08:00:00Z",
            "2026-11-03T12:00:00Z",
            "2026-11-03T18:00:00Z",
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| ev(&i.to_string(), t, "Tour call", &["Tour"]))
        .collect();
        let p = judge(&clusters(&burst, &HashSet::new())[0]).unwrap();
        assert_eq!(p.kind, "topic");
    }
}
