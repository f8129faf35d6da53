//! The comparison vector of a candidate pair: for each feature, the level
//! at which the two agree or disagree. Levels are what the model weighs;
//! `unknown` (nothing to compare: a description missing, no neighbours)
//! carries no weight either way. What says outright that the two are two
//! (an identifying attribute that differs, a link between them, an
//! acronym spelled out as another name) is a veto, not a level.

use super::super::similarity::{self, matching};
use super::super::views::ConceptView;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// A pair the blocking keys found, with its comparison and what the
/// model made of it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Candidate {
    pub a: ConceptView,
    pub b: ConceptView,
    /// The name rule that made them a candidate.
    pub rule: String,
    pub score: f64,
    /// The comparison vector (`matcher::compare`).
    #[serde(default)]
    pub comparison: Comparison,
    /// The matcher's probability that the two are one thing.
    #[serde(default)]
    pub probability: f64,
    /// What weighed, in bits: `(what, weight)`.
    #[serde(default)]
    pub weights: Vec<(String, f64)>,
}

/// Attributes that identify: two concepts with different values are two
/// things, whatever their names; the same value is evidence beyond the
/// name.
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

/// Attributes that are not slot values: text about the node, its other
/// names, bookkeeping.
const NOT_SLOTS: &[&str] = &[
    "description",
    "aliases",
    "summary",
    "notes",
    "name",
    "source",
    "created_at",
    "updated_at",
];

/// Texts of at least this many content words each are weighed as
/// texts a merge could lose.
pub const LONG_TEXT_WORDS: usize = 40;
/// Long texts that share less than this (stemmed word Jaccard) each say
/// something the other does not.
pub const SAME_TEXT_OVERLAP: f64 = 0.6;
/// Two imported files are one document only when their texts share at
/// least this much.
pub const SAME_FILE_OVERLAP: f64 = 0.9;

/// Descriptions that share at least this much (stemmed word Jaccard)
/// agree.
pub const AGREE_OVERLAP: f64 = 0.25;
/// A description is compared only with this many content words or more.
pub const DESCRIPTION_MIN_WORDS: usize = 3;

/// The features of a comparison, with their levels, strongest agreement
/// first. `person_name` is `name` for people: a person's name says less
/// than a thing's (people share names; things rarely do).
pub const FEATURES: &[(&str, &[&str])] = &[
    ("name", NAME_LEVELS),
    ("person_name", NAME_LEVELS),
    ("neighbours", &["several", "one", "none"]),
    (
        "description",
        &["names_other", "agree", "some", "disjoint", "disjoint_names"],
    ),
    ("attributes", &["identifying", "agree", "differ"]),
    ("domain", &["same", "different"]),
];

/// Words that mark a generation at the end of a person's name.
pub const GENERATIONS: &[&str] = &[
    "jr", "junior", "sr", "senior", "ii", "iii", "iv", "fils", "pere", "elder", "younger",
];

/// A person's name without its generation mark, normalised.
fn without_generation(name: &str) -> String {
    let n = similarity::normalise(&similarity::latin(name));
    match generation(name) {
        Some(_) => n.rsplit_once(' ').map(|x| x.0.to_string()).unwrap_or(n),
        None => n,
    }
}

/// The generation a person's name ends with ("Robert Okafor Jr." → "jr").
fn generation(name: &str) -> Option<String> {
    let n = similarity::normalise(&similarity::latin(name));
    let last = n.split(' ').next_back()?;
    let last = match last {
        "junior" => "jr",
        "senior" => "sr",
        x => x,
    };
    (GENERATIONS.contains(&last) && n.contains(' ')).then(|| last.to_string())
}

/// The levels of name agreement (see [`matching::level_of`]).
pub const NAME_LEVELS: &[&str] = &[
    "equal",
    "alias",
    "reordered",
    "surname_first",
    "transliterated",
    "person_form",
    "inflected",
    "abbreviation",
    "initial",
    "given_name",
    "extension",
    "typo",
    "phonetic",
    "similar",
];

/// No information: the feature weighs nothing.
pub const UNKNOWN: &str = "unknown";

/// One candidate pair as the model sees it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    /// Feature → level (`unknown` features are left out).
    pub levels: BTreeMap<String, String>,
    /// What makes the two two things whatever the weights say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub veto: Option<String>,
    /// Whether the pair are people.
    #[serde(default)]
    pub person: bool,
    /// Evidence beyond the name (a shared neighbour, an agreeing
    /// attribute, a description that agrees or names the other): without
    /// it two people are never merged.
    #[serde(default)]
    pub beyond_name: bool,
    /// One person's name says which generation and the other's does not
    /// ("Robert Okafor" / "Robert Okafor Jr."): never merged, asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// Each holds a long text the other lacks (two drafts of a letter, two
    /// versions of a résumé): a merge keeps one text, so the pair is
    /// asked, never merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texts: Option<String>,
    /// What each level means here, for the operator.
    #[serde(default)]
    pub details: BTreeMap<String, String>,
}

impl Comparison {
    /// Whether the model decides the pair: not vetoed, not held by the
    /// generation rule.
    pub fn decided_by_model(&self) -> bool {
        self.veto.is_none() && self.generation.is_none()
    }
}

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

/// Whether a concept is a statement named by its opening words (a
/// preference, a fact, a lesson an import or a cycle named after its
/// text: `User prefers the nightly scan to run at 22:00 and to…`, with
/// `(bbbb)` after it when another opens the same way): what it is, is
/// its whole text, not its name.
pub fn is_statement(c: &ConceptView) -> bool {
    !matching::is_person_type(&c.ty)
        && similarity::statement_name(&c.name, &c.description).is_some()
}

/// What a statement names that another may not: its proper names (a
/// capitalised word not opening a sentence) and its values (a word with a
/// digit: `22:00`, `9876`, `2026-03-18`), normalised.
fn named_values(text: &str) -> HashSet<String> {
    let mut out = proper_names(text);
    out.extend(
        text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '[' | ']'))
            .map(|w| w.trim_end_matches(['.', ':', '!', '?']))
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(|w| w.to_lowercase()),
    );
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

/// What says the two are two, whatever their names.
pub fn veto(p: &Candidate) -> Option<String> {
    if p.a.ty != p.b.ty {
        return Some(format!(
            "different types ({} and {}): never merged",
            p.a.ty, p.b.ty
        ));
    }
    let differs =
        IDENTIFYING
            .iter()
            .find_map(|k| match (p.a.attributes.get(*k), p.b.attributes.get(*k)) {
                (Some(x), Some(y)) if x != y && !x.is_null() && !y.is_null() => Some(format!(
                    "`{k}` differs ({x} / {y}): two things with similar names"
                )),
                _ => None,
            });
    differs
        .or_else(|| {
            let me = |c: &ConceptView| format!("{}:{}", c.ty, c.name);
            (p.a.neighbours.contains(&me(&p.b)) || p.b.neighbours.contains(&me(&p.a))).then(|| {
                format!(
                    "\"{}\" and \"{}\" are linked to each other: two things",
                    p.a.name, p.b.name
                )
            })
        })
        .or_else(|| spelled_out_otherwise(p))
        .or_else(|| {
            // two files of a workspace are two documents unless their
            // texts are one
            let file = |c: &ConceptView| {
                c.attributes
                    .get("note_file")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            match (file(&p.a), file(&p.b)) {
                (Some(x), Some(y))
                    if x != y
                        && similarity::overlap(&p.a.description, &p.b.description)
                            < SAME_FILE_OVERLAP =>
                {
                    Some(format!(
                        "two files ({x} / {y}) with different texts: two documents"
                    ))
                }
                _ => None,
            }
        })
        .or_else(|| opposite(&p.a.name, &p.b.name))
        .or_else(|| sibling_sections(&p.a.name, &p.b.name))
        .or_else(|| {
            if !matching::is_person_type(&p.a.ty) {
                return None;
            }
            match (generation(&p.a.name), generation(&p.b.name)) {
                (Some(x), Some(y)) if x != y => Some(format!(
                    "\"{}\" and \"{}\" are two generations ({x} / {y})",
                    p.a.name, p.b.name
                )),
                _ => None,
            }
        })
}

/// One name says "not" and the other does not (`Работает для` / `Не
/// работает для`, `Use npm` / `Never use npm`): they say opposite things,
/// however alike their letters. (`Non-profit` / `Nonprofit` is one
/// spelling.)
fn opposite(a: &str, b: &str) -> Option<String> {
    let letters = |s: &str| similarity::normalise(s).replace(' ', "");
    (similarity::denies(a) != similarity::denies(b) && letters(a) != letters(b))
        .then(|| format!("\"{a}\" and \"{b}\": one says \"not\", the other does not: opposites"))
}

/// Two sections under one heading (`OpenRouter › Работает для` / `…
/// › Не работает для`, `Dashboard Tab fix › 教训` / `… › 解决方案`): the
/// parts one note was written in, never copies of each other, unless
/// their own headings differ only by a slip (`Kubernets` / `Kubernetes`).
fn sibling_sections(a: &str, b: &str) -> Option<String> {
    let (pa, xa) = a.rsplit_once(" › ")?;
    let (pb, xb) = b.rsplit_once(" › ")?;
    let (na, nb) = (similarity::normalise(xa), similarity::normalise(xb));
    if similarity::normalise(pa) != similarity::normalise(pb) || na == nb {
        return None;
    }
    let (wa, wb): (Vec<&str>, Vec<&str>) = (na.split(' ').collect(), nb.split(' ').collect());
    let slip = wa.len() == wb.len()
        && wa.iter().zip(&wb).filter(|(x, y)| x != y).all(|(x, y)| {
            let n = x.chars().count().min(y.chars().count());
            n >= 3 && strsim::damerau_levenshtein(x, y) <= if n >= 7 { 2 } else { 1 }
        });
    (!slip).then(|| format!("two sections of \"{pa}\" (\"{xa}\" / \"{xb}\"): parts of one note"))
}

fn slots(c: &ConceptView) -> BTreeMap<String, &serde_json::Value> {
    c.attributes
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, v)| {
                    let blank = v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty());
                    !(k.starts_with('_') || NOT_SLOTS.contains(&k.as_str()) || blank)
                })
                .map(|(k, v)| (k.clone(), v))
                .collect()
        })
        .unwrap_or_default()
}

/// The comparison vector of a candidate pair.
pub fn compare(p: &Candidate) -> Comparison {
    let mut c = Comparison {
        person: matching::is_person_type(&p.a.ty),
        veto: veto(p),
        ..Default::default()
    };
    let set = |c: &mut Comparison, f: &str, level: &str, detail: String| {
        c.levels.insert(f.into(), level.into());
        c.details.insert(f.into(), detail);
    };
    let name_feature = if c.person { "person_name" } else { "name" };
    // "Hartmann, Elizabeth" is a listing of one name; "Li Wei" / "Wei Li"
    // may be two people
    let level = match matching::level_of(&p.rule) {
        "reordered" if p.a.name.contains(',') || p.b.name.contains(',') => "surname_first",
        l => l,
    };
    set(
        &mut c,
        name_feature,
        level,
        format!("\"{}\" / \"{}\": {}", p.a.name, p.b.name, p.rule),
    );
    // neighbours
    if !p.a.neighbours.is_empty() && !p.b.neighbours.is_empty() {
        let na: HashSet<&String> = p.a.neighbours.iter().collect();
        let shared: Vec<&String> = p.b.neighbours.iter().filter(|n| na.contains(n)).collect();
        let level = match shared.len() {
            0 => "none",
            1 => "one",
            _ => "several",
        };
        let detail = if shared.is_empty() {
            format!(
                "no neighbour in common ({} and {})",
                p.a.neighbours.len(),
                p.b.neighbours.len()
            )
        } else {
            format!(
                "in common: {}",
                shared
                    .iter()
                    .take(3)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        set(&mut c, "neighbours", level, detail);
    }
    // descriptions
    // (a statement's name is its opening words: another text that opens
    // the same way does not name it)
    let statements = (is_statement(&p.a), is_statement(&p.b));
    let names_other = |desc: &str, other: &ConceptView, statement: bool| {
        let d = similarity::normalise(desc);
        let n = similarity::normalise(&other.name);
        !statement && n.len() >= 3 && format!(" {d} ").contains(&format!(" {n} "))
    };
    let (da, db) = (
        similarity::stems_of(&p.a.description),
        similarity::stems_of(&p.b.description),
    );
    if names_other(&p.a.description, &p.b, statements.1)
        || names_other(&p.b.description, &p.a, statements.0)
    {
        set(
            &mut c,
            "description",
            "names_other",
            "one description names the other".into(),
        );
    } else if da.len() >= DESCRIPTION_MIN_WORDS && db.len() >= DESCRIPTION_MIN_WORDS {
        let o = similarity::overlap(&p.a.description, &p.b.description);
        let (pa, pb) = (
            proper_names(&p.a.description),
            proper_names(&p.b.description),
        );
        // naming different places or people says more than a common word
        let other_names = !pa.is_empty() && !pb.is_empty() && pa.is_disjoint(&pb);
        let (level, detail) = if o >= AGREE_OVERLAP {
            (
                "agree",
                format!("descriptions agree ({o:.2} of their words)"),
            )
        } else if other_names {
            (
                "disjoint_names",
                format!(
                    "descriptions name different places or people ({o:.2} of their words shared)"
                ),
            )
        } else if o > 0.0 {
            ("some", format!("descriptions share a little ({o:.2})"))
        } else {
            ("disjoint", "descriptions share no word".into())
        };
        set(&mut c, "description", level, detail);
    }
    // single-valued slots and identifying attributes
    let (sa, sb) = (slots(&p.a), slots(&p.b));
    let shared: Vec<&String> = sa.keys().filter(|k| sb.contains_key(*k)).collect();
    if !shared.is_empty() {
        let differ: Vec<&&String> = shared.iter().filter(|k| sa[**k] != sb[**k]).collect();
        let same_id = shared
            .iter()
            .find(|k| IDENTIFYING.contains(&k.as_str()) && sa[**k] == sb[**k]);
        let (level, detail) = if let Some(k) = same_id {
            ("identifying", format!("the same `{k}` ({})", sa[*k]))
        } else if let Some(k) = differ.first() {
            (
                "differ",
                format!("`{k}` differs ({} / {})", sa[**k], sb[**k]),
            )
        } else {
            (
                "agree",
                format!(
                    "the same {}",
                    shared
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        };
        set(&mut c, "attributes", level, detail);
    }
    // domains
    if !p.a.domains.is_empty() && !p.b.domains.is_empty() {
        let common: Vec<&String> =
            p.a.domains
                .iter()
                .filter(|d| p.b.domains.contains(d))
                .collect();
        if let Some(d) = common.first() {
            set(&mut c, "domain", "same", format!("both in {d}"));
        } else {
            set(
                &mut c,
                "domain",
                "different",
                format!("{} / {}", p.a.domains.join(", "), p.b.domains.join(", ")),
            );
        }
    }
    if c.person {
        let (ga, gb) = (generation(&p.a.name), generation(&p.b.name));
        if ga != gb {
            c.generation = Some(format!(
                "only \"{}\" says which generation: a father and his son, or one man",
                if ga.is_some() { &p.a.name } else { &p.b.name }
            ));
            // the names compared without it
            if without_generation(&p.a.name) == without_generation(&p.b.name) {
                set(
                    &mut c,
                    "person_name",
                    "equal",
                    format!(
                        "\"{}\" / \"{}\": the same name but for the generation",
                        p.a.name, p.b.name
                    ),
                );
            }
        }
    }
    // two statements are one only when they say the same: each naming
    // what the other does not (`US microcaps` / `Hong Kong large caps`,
    // `22:00` / `23:00`) are two, or one changed; asked, never merged
    if statements.0 && statements.1 {
        let (va, vb) = (
            named_values(&p.a.description),
            named_values(&p.b.description),
        );
        let only = |x: &HashSet<String>, y: &HashSet<String>| {
            let mut v: Vec<String> = x.difference(y).cloned().collect();
            v.sort();
            v
        };
        let (oa, ob) = (only(&va, &vb), only(&vb, &va));
        if !oa.is_empty() && !ob.is_empty() {
            c.texts = Some(format!(
                "each states what the other does not ({} / {}): a merge would lose one",
                oa.join(", "),
                ob.join(", ")
            ));
        }
    }
    if c.texts.is_none() && da.len() >= LONG_TEXT_WORDS && db.len() >= LONG_TEXT_WORDS {
        let o = similarity::overlap(&p.a.description, &p.b.description);
        if o < SAME_TEXT_OVERLAP {
            c.texts = Some(format!(
                "each holds a text the other lacks ({o:.2} of their words shared): a merge would keep one"
            ));
        }
    }
    let lv = |f: &str| c.levels.get(f).map(String::as_str).unwrap_or(UNKNOWN);
    c.beyond_name = matches!(lv("neighbours"), "one" | "several")
        || matches!(lv("attributes"), "identifying" | "agree")
        || matches!(lv("description"), "names_other" | "agree");
    c
}
