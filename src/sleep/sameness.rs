//! Whether two concepts with similar names are one thing, as the cycle
//! decides it: the matcher's probability ([`super::matcher`]) puts each
//! candidate pair in one of three bands: merge, ask the operator, or
//! leave apart. A veto (an identifying attribute that differs, a link
//! between the two) leaves a pair apart whatever else agrees.

use super::matcher::compare::Candidate;
use super::matcher::{self, ASK_AT, Band, MERGE_AT};
use super::views::SameJudgement;

/// Which of the two a merge keeps: the better connected, then the one
/// with more attributes, then the longer name.
pub fn keep_a(p: &Candidate) -> bool {
    (
        p.a.links,
        p.a.attributes.as_object().map_or(0, |o| o.len()),
        p.a.name.len(),
    ) >= (
        p.b.links,
        p.b.attributes.as_object().map_or(0, |o| o.len()),
        p.b.name.len(),
    )
}

/// The weights in words: `for: name equal +6.2, one neighbour in common
/// +3.1; against: descriptions share no word -1.8`.
pub fn weighed(p: &Candidate) -> String {
    let part = |sign: bool| {
        p.weights
            .iter()
            // a level that weighs nothing either way is left unsaid
            .filter(|(_, w)| w.abs() >= 0.05 && (*w >= 0.0) == sign)
            .map(|(what, w)| format!("{what} {w:+.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (f, a) = (part(true), part(false));
    match (f.is_empty(), a.is_empty()) {
        (true, true) => "nothing weighed".into(),
        (false, true) => format!("for: {f}"),
        (true, false) => format!("against: {a}"),
        (false, false) => format!("for: {f}; against: {a}"),
    }
}

/// The band of a judged pair: the veto, then the cap on people known by
/// name only, then the probability.
pub fn band_of(p: &Candidate) -> Band {
    if p.comparison.veto.is_some() {
        return Band::Apart;
    }
    matcher::band(p.probability)
}

/// The heuristic judgement of one candidate pair: the matcher's band.
pub fn judge(p: &Candidate) -> SameJudgement {
    let keep_a = keep_a(p);
    let (keep, drop) = if keep_a { (&p.a, &p.b) } else { (&p.b, &p.a) };
    if let Some(v) = &p.comparison.veto {
        return SameJudgement {
            same: false,
            ask: false,
            keep_a,
            confidence: 0.0,
            rationale: v.clone(),
        };
    }
    let pr = p.probability;
    let head = format!(
        "{}: \"{}\" and \"{}\" ({}); {}; probability {pr:.2}",
        p.rule,
        p.a.name,
        p.b.name,
        p.a.ty,
        weighed(p)
    );
    let capped = if let Some(g) = &p.comparison.generation {
        format!("; {g}: asked about, never merged")
    } else if let Some(t) = &p.comparison.texts {
        format!("; {t}: asked about, never merged")
    } else if p.comparison.person && !p.comparison.beyond_name {
        "; two people with nothing beyond their names in common are asked about, never merged"
            .to_string()
    } else {
        String::new()
    };
    let band = band_of(p);
    SameJudgement {
        same: band == Band::Merge,
        ask: band == Band::Ask,
        keep_a,
        confidence: (pr * 100.0).round() / 100.0,
        rationale: match band {
            Band::Merge => format!(
                "{head}. Keep \"{}\" ({} links) and fold \"{}\" ({} links) into it",
                keep.name, keep.links, drop.name, drop.links
            ),
            Band::Ask => {
                format!("{head}, between {ASK_AT} and {MERGE_AT}: same or different?{capped}")
            }
            Band::Apart => format!("{head} is under {ASK_AT}"),
        },
    }
}

/// Another reasoner's answer held to the matcher's bands: a veto stands;
/// a merge needs both the reasoner and the band; where they differ, or
/// the pair is two people known by name only, the operator is asked.
pub fn combine(mut j: SameJudgement, p: &Candidate) -> SameJudgement {
    if let Some(v) = &p.comparison.veto {
        if j.same || j.ask {
            j.rationale = format!("{} [overruled: {v}]", j.rationale);
        }
        j.same = false;
        j.ask = false;
        return j;
    }
    let band = band_of(p);
    let (same, ask) = match (j.same, band) {
        (true, Band::Merge) => (true, false),
        (true, _) | (false, Band::Merge) => (false, true),
        (false, _) => (false, j.ask),
    };
    if (same, ask) != (j.same, j.ask) {
        j.rationale = format!(
            "{} [the matcher: probability {:.2}, {}]",
            j.rationale,
            p.probability,
            weighed(p)
        );
    }
    j.same = same;
    j.ask = ask;
    j
}
