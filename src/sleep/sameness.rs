//! Whether two concepts with similar names are one thing: the name rule's
//! score, then the evidence of the graph for and against. Attributes that
//! name a different thing outright veto; a link between the two says they
//! are two; descriptions that share nothing and neighbourhoods that do not
//! meet weigh against; shared neighbours and descriptions that agree
//! weigh for. A merge is proposed at [`SAME_AT`] and above.

use super::reasoner::{Candidate, SameJudgement};
use super::similarity::{self, matching::SAME_AT};
use std::collections::HashSet;

/// Attributes that identify: two concepts with different values are two
/// things, whatever their names.
pub const IDENTIFYING: &[&str] = &[
    "person_class",
    "country",
    "birth_date",
    "date_of_birth",
    "born_on",
    "email",
    "phone",
    "website",
    "url",
    "iso_code",
    "coordinates",
];

/// Each neighbour the two share adds this (both linked to one person, one
/// Event), up to [`MAX_SHARED_SUPPORT`].
pub const SHARED_NEIGHBOUR: f64 = 0.06;
pub const MAX_SHARED_SUPPORT: f64 = 0.12;
/// Descriptions that agree (stemmed word overlap at least
/// [`AGREE_OVERLAP`]) add this.
pub const DESCRIPTIONS_AGREE: f64 = 0.06;
pub const AGREE_OVERLAP: f64 = 0.25;
/// One description naming the other ("RNCM": "where she studied at the
/// Royal Northern College of Music") adds this.
pub const DESCRIPTION_NAMES_OTHER: f64 = 0.1;
/// Two descriptions of three or more words each that share no word stem
/// take this away; more if their proper names differ too ("a city in
/// Massachusetts" / "a city in England").
/// Kept small: a second note on one thing is often written about another
/// side of it; a rule scored 0.85 or more survives it alone.
pub const DESCRIPTIONS_DISJOINT: f64 = 0.05;
pub const PROPER_NAMES_DISJOINT: f64 = 0.15;
pub const DESCRIPTION_MIN_WORDS: usize = 3;
// Neighbourhoods that do not meet are no evidence against: a second note
// on one thing is usually written from other episodes.

/// The capitalised words inside a text that are not its first word: the
/// proper names it mentions.
fn proper_names(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for sentence in text.split(['.', ';', ':', '!', '?']) {
        for w in sentence
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .skip(1)
        {
            if w.chars().next().is_some_and(char::is_uppercase) {
                out.insert(similarity::normalise(w));
            }
        }
    }
    out
}

/// An acronym whose description spells it out as something other than the
/// other name ("CSO": "Chicago Symphony Orchestra, heard on tour" against
/// "City of Stockholm Orchestra").
fn spelled_out_otherwise(p: &Candidate) -> Option<String> {
    for (x, y) in [(&p.a, &p.b), (&p.b, &p.a)] {
        let acronym = x.name.trim();
        if !similarity::names::is_acronym(acronym) {
            continue;
        }
        let want = acronym.to_lowercase();
        let words: Vec<&str> = x
            .description
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        for start in 0..words.len() {
            for end in start + 2..=words.len().min(start + 8) {
                let run = &words[start..end];
                if !run[0].chars().next().is_some_and(char::is_uppercase) {
                    break;
                }
                let initials: Vec<String> = similarity::names::initialisms(&run.join(" "));
                if initials.contains(&want) {
                    let spelled = similarity::normalise(&run.join(" "));
                    if spelled != similarity::normalise(&y.name) {
                        return Some(format!(
                            "\"{}\" is spelled out as \"{}\" in its description, not \"{}\"",
                            x.name,
                            run.join(" "),
                            y.name
                        ));
                    }
                    return None;
                }
            }
        }
    }
    None
}

/// The evidence for and against, as signed weights with their reasons.
pub fn evidence(p: &Candidate) -> (Option<String>, Vec<(f64, String)>) {
    let veto =
        IDENTIFYING
            .iter()
            .find_map(|k| match (p.a.attributes.get(*k), p.b.attributes.get(*k)) {
                (Some(x), Some(y)) if x != y && !x.is_null() && !y.is_null() => Some(format!(
                    "`{k}` differs ({x} / {y}): two things with similar names"
                )),
                _ => None,
            });
    let veto = veto.or_else(|| {
        let me = |c: &super::reasoner::ConceptView| format!("{}:{}", c.ty, c.name);
        (p.a.neighbours.contains(&me(&p.b)) || p.b.neighbours.contains(&me(&p.a))).then(|| {
            format!(
                "\"{}\" and \"{}\" are linked to each other: two things",
                p.a.name, p.b.name
            )
        })
    });
    let veto = veto.or_else(|| spelled_out_otherwise(p));
    let mut w = Vec::new();
    let na: HashSet<&String> = p.a.neighbours.iter().collect();
    let shared = p.b.neighbours.iter().filter(|n| na.contains(n)).count();
    if shared > 0 {
        w.push((
            (shared as f64 * SHARED_NEIGHBOUR).min(MAX_SHARED_SUPPORT),
            format!("{shared} neighbour(s) in common"),
        ));
    }
    let names_other = |desc: &str, other: &super::reasoner::ConceptView| {
        let d = similarity::normalise(desc);
        let n = similarity::normalise(&other.name);
        n.len() >= 3 && format!(" {d} ").contains(&format!(" {n} "))
    };
    if names_other(&p.a.description, &p.b) || names_other(&p.b.description, &p.a) {
        w.push((
            DESCRIPTION_NAMES_OTHER,
            "one description names the other".into(),
        ));
    }
    let (da, db) = (
        similarity::stems_of(&p.a.description),
        similarity::stems_of(&p.b.description),
    );
    if da.len() >= DESCRIPTION_MIN_WORDS && db.len() >= DESCRIPTION_MIN_WORDS {
        let o = similarity::overlap(&p.a.description, &p.b.description);
        if o >= AGREE_OVERLAP {
            w.push((DESCRIPTIONS_AGREE, format!("descriptions agree ({o:.2})")));
        } else if da.is_disjoint(&db) && shared == 0 {
            // with a neighbour in common, two descriptions are two sides
            w.push((
                -DESCRIPTIONS_DISJOINT,
                "descriptions share no word".to_string(),
            ));
            let (pa, pb) = (
                proper_names(&p.a.description),
                proper_names(&p.b.description),
            );
            if !pa.is_empty() && !pb.is_empty() && pa.is_disjoint(&pb) {
                w.push((
                    -PROPER_NAMES_DISJOINT,
                    "their descriptions name different places or people".to_string(),
                ));
            }
        }
    }
    (veto, w)
}

/// The heuristic judgement of one candidate pair.
pub fn judge(p: &Candidate) -> SameJudgement {
    let keep_a = (
        p.a.links,
        p.a.attributes.as_object().map_or(0, |o| o.len()),
        p.a.name.len(),
    ) >= (
        p.b.links,
        p.b.attributes.as_object().map_or(0, |o| o.len()),
        p.b.name.len(),
    );
    let (keep, drop) = if keep_a { (&p.a, &p.b) } else { (&p.b, &p.a) };
    let (veto, weights) = evidence(p);
    if let Some(v) = veto {
        return SameJudgement {
            same: false,
            keep_a,
            confidence: 0.0,
            rationale: v,
        };
    }
    let total = (p.score + weights.iter().map(|(x, _)| x).sum::<f64>()).clamp(0.0, 0.99);
    // in hundredths, as shown: 0.85 - 0.05 is 0.80, not 0.7999…
    let total = (total * 100.0).round() / 100.0;
    let context = if weights.is_empty() {
        "no other evidence".to_string()
    } else {
        weights
            .iter()
            .map(|(x, why)| format!("{why} {x:+.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let same = total >= SAME_AT;
    SameJudgement {
        same,
        keep_a,
        confidence: (total * 100.0).round() / 100.0,
        rationale: if same {
            format!(
                "{}: \"{}\" and \"{}\" ({}), {:.2}; {context}; total {total:.2}. Keep \"{}\" ({} links) and fold \"{}\" ({} links) into it",
                p.rule,
                p.a.name,
                p.b.name,
                p.a.ty,
                p.score,
                keep.name,
                keep.links,
                drop.name,
                drop.links
            )
        } else {
            format!(
                "{}: \"{}\" and \"{}\" ({}), {:.2}; {context}; total {total:.2} is under {SAME_AT}",
                p.rule, p.a.name, p.b.name, p.a.ty, p.score
            )
        },
    }
}
