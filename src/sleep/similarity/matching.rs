//! Candidate duplicate pairs: every name prepared once, grouped by keys that
//! do not depend on how a name begins (its words, their stems and sounds,
//! its initialisms, exonyms), and each pair in a group compared by the
//! rules below, strongest first. Only names are compared here; the
//! reasoner weighs the evidence for and against (descriptions,
//! neighbours, attributes) before anything is proposed.

use super::names::{self, FUNCTION_WORDS, LEGAL_FORMS};
use super::variants;
use super::{Match, Named, normalise};
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A group of names sharing one blocking key larger than this is a crowd
/// of common words ("music", "street"), not of duplicates: its pairs are
/// left to the other keys the names share.
pub const MAX_BLOCK: usize = 250;

/// Single given names ("Liz") compared against every person's given name:
/// past this many, the pass is skipped and the report says so.
pub const MAX_SINGLE_NAMES: usize = 2_000;

/// Rule scores: how strong a rule was taken to be before the matcher
/// (`crate::sleep::matcher`) weighed levels from data; kept to order the
/// rules and for an initial that fits one person only. The matcher, not
/// these, decides.
pub mod score {
    /// Same letters once case, accents and punctuation are set aside.
    pub const SAME_NAME: f64 = 0.97;
    /// Same once titles and abbreviations are set aside, or one is the
    /// other's alias.
    pub const CANONICAL: f64 = 0.95;
    /// The same words in another order ("Hartmann, Elizabeth").
    pub const REORDERED: f64 = 0.92;
    /// Listed exonyms of one place.
    pub const EXONYM: f64 = 0.9;
    /// The same words but for inflection ("Board games" / "Board game").
    pub const INFLECTION: f64 = 0.9;
    /// One differs only by a legal form ("Volvo" / "Volvo AB").
    pub const LEGAL_FORM: f64 = 0.9;
    /// A person's name in another form: a nickname, an initial, a middle
    /// name, a title (by the `human_name` comparison).
    pub const PERSON_FORM: f64 = 0.88;
    /// A near-identical spelling of a long name (a typo).
    pub const TYPO: f64 = 0.86;
    /// One is the other's initialism.
    pub const INITIALISM: f64 = 0.85;
    /// Every word the same or a transliteration of it.
    pub const TRANSLITERATION: f64 = 0.85;
    /// An extra word the shorter one's own description confirms
    /// ("Hagabadet" described as a spa / "Hagabadet Spa").
    pub const EXTRA_WORD_DESCRIBED: f64 = 0.85;
    /// One word is a prefix of the other's (3+ letters), or one name is
    /// the other plus a short tail ("Postgres" / "PostgreSQL").
    pub const PREFIX: f64 = 0.8;
    /// A person known by a given initial only ("E. Hartmann"), kept only
    /// when it matches one full name in the memory.
    pub const INITIAL_ONLY: f64 = 0.8;
    /// A single given name matching a person's full name ("Liz" /
    /// "Elizabeth Hartmann"): needs support and must be the only match.
    pub const GIVEN_NAME_ONLY: f64 = 0.75;
    /// A statement and the same statement with a short conjunct added
    /// ("Prefers dark mode in every editor" / "… and terminal").
    pub const CONJUNCT: f64 = 0.82;
    /// Alike in sound or spelling, matched by no rule: a candidate the
    /// matcher weighs, usually low.
    pub const ALIKE: f64 = 0.5;
}

/// The level of name agreement a rule stands for: what the matcher
/// weighs (`matcher::compare::NAME_LEVELS`).
pub fn level_of(rule: &str) -> &'static str {
    match rule {
        "same name once titles, abbreviations and punctuation are set aside" => "equal",
        "name is the other's alias" => "alias",
        "the same words in another order" => "reordered",
        "names of one place in different languages"
        | "every word the same or a transliteration of it" => "transliterated",
        "one person's name in another form (nickname, middle name or title)" => "person_form",
        "the same words but for a plural"
        | "one name is the other plus a company designation"
        | "one name is the other plus the word its description opens with"
        | "one statement is the other with a conjunct added" => "inflected",
        "name is the other's initialism" | "name abbreviates the other's words" => "abbreviation",
        "a person known by the initial of the other's given name" => "initial",
        "a single given name that matches one person's full name" => "given_name",
        "one name extends the other's words" | "one name is the other plus a short suffix" => {
            "extension"
        }
        "near-identical spelling" | "the same name but for a doubled letter" => "typo",
        "names that sound alike" => "phonetic",
        _ => "similar",
    }
}

/// Names alike but matched by no rule differ in one word, spelled within
/// this many edits of each other.
pub const ALIKE_MAX_EDITS: usize = 2;
/// ... and that word has at least this many letters.
pub const ALIKE_MIN_LEN: usize = 4;

/// Two names that differ in one word, that word alike in sound or
/// spelling ("Anna Berg" / "Anna Borg", "Lund" / "Lunde"): no rule takes
/// them for one, but the matcher weighs them, so that a memory whose
/// operator says they are one can learn it.
fn alike(a: &Prepared, b: &Prepared) -> Option<(&'static str, f64)> {
    if a.numbers != b.numbers || a.content.is_empty() || a.content.len() != b.content.len() {
        return None;
    }
    let differ: Vec<(&String, &String)> = a
        .content
        .iter()
        .zip(&b.content)
        .filter(|(x, y)| x != y)
        .collect();
    let [(x, y)] = differ.as_slice() else {
        return None;
    };
    if x.chars().count() < ALIKE_MIN_LEN
        || y.chars().count() < ALIKE_MIN_LEN
        || calendar_siblings(x, y)
    {
        return None;
    }
    if variants::phonetic_key(x) == variants::phonetic_key(y) {
        return Some(("names that sound alike", score::ALIKE));
    }
    (strsim::damerau_levenshtein(x, y) <= ALIKE_MAX_EDITS)
        .then_some(("similar spelling", score::ALIKE))
}

/// A statement is a name of at least this many words not written as a
/// proper name ("Prefers dark mode in every editor").
pub const STATEMENT_MIN_WORDS: usize = 4;
/// The conjunct the longer statement adds is at most this many words.
pub const CONJUNCT_MAX_WORDS: usize = 4;
/// Words that turn an added conjunct against what it joins.
const CONJUNCT_TURNS: &[&str] = &[
    "not", "no", "never", "except", "without", "but", "unless", "nor", "instead", "only",
];

/// Near-identical spelling: Jaro–Winkler at least this on names of at
/// least [`TYPO_MIN_LEN`] letters.
pub const TYPO_MIN_SIMILARITY: f64 = 0.96;
pub const TYPO_MIN_LEN: usize = 8;

/// Whether a type holds people (compared as personal names).
pub fn is_person_type(ty: &str) -> bool {
    matches!(
        ty.to_ascii_lowercase().as_str(),
        "person" | "people" | "contact" | "human"
    )
}

/// A name prepared once for all its comparisons.
pub(super) struct Prepared {
    pub tokens: Vec<String>,
    pub canonical: String,
    pub content: Vec<String>,
    pub initialisms: Vec<String>,
    pub acronym: Option<String>,
    pub exonym: Option<String>,
    pub aliases: Vec<String>,
    pub person: Option<human_name::Name>,
    pub numbers: Vec<String>,
    pub description: String,
    /// The name's words as written (transliterated, case kept).
    pub raw: Vec<String>,
    /// Written as a proper name: every content word capitalised.
    pub title_case: bool,
    /// Written with a comma ("Hartmann, Elizabeth", "Paris, Texas").
    pub comma: bool,
}

fn stemmer() -> &'static Stemmer {
    static S: std::sync::OnceLock<Stemmer> = std::sync::OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

pub(super) fn prepare(it: &Named) -> Prepared {
    let person = is_person_type(&it.ty);
    let tokens = names::canonical_tokens(&it.name, person);
    let canonical = tokens.join(" ");
    let content = names::content_tokens(&tokens);
    let raw_words: Vec<&str> = it
        .name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // an acronym, its legal form aside ("IBM Corp.", "ABB B.V.")
    // (a run of single letters is one word: "N. V." is "NV")
    let mut joined: Vec<String> = Vec::new();
    let mut single = false;
    for w in &raw_words {
        let one = w.chars().count() == 1;
        match joined.last_mut() {
            Some(last) if one && single => last.push_str(w),
            _ => joined.push(w.to_string()),
        }
        single = one;
    }
    let body: Vec<&String> = joined
        .iter()
        .filter(|w| !LEGAL_FORMS.contains(&normalise(w).as_str()))
        .collect();
    let acronym = match raw_words.as_slice() {
        [w] if names::is_acronym(w) => Some(normalise(w)),
        _ if !person
            && body.len() == 1
            && body.len() < joined.len()
            && names::is_acronym(body[0]) =>
        {
            Some(normalise(body[0]))
        }
        _ if tokens.len() == 1 && tokens[0].len() <= 6 && it.name.contains('.') => {
            Some(tokens[0].clone())
        }
        _ => None,
    };
    let raw: Vec<String> = super::latin(&it.name)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    let title_case = raw
        .iter()
        .filter(|w| !names::FUNCTION_WORDS.contains(&w.to_lowercase().as_str()))
        .all(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
        });
    Prepared {
        comma: it.name.contains(','),
        title_case,
        raw,
        exonym: variants::exonym_key(&tokens),
        numbers: canonical
            .split(|c: char| !c.is_ascii_digit())
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect(),
        initialisms: names::initialisms(&it.name),
        aliases: it
            .aliases
            .iter()
            .map(|a| names::canonical_tokens(a, person).join(" "))
            .filter(|a| !a.is_empty())
            .collect(),
        person: if person && tokens.len() >= 2 {
            human_name::Name::parse(&super::latin(&it.name))
        } else {
            None
        },
        description: it.description.clone(),
        tokens,
        canonical,
        content,
        acronym,
    }
}

/// The keys a name is grouped by.
fn keys(p: &Prepared) -> Vec<String> {
    let mut k = vec![format!("c:{}", p.canonical)];
    for a in &p.aliases {
        k.push(format!("c:{a}"));
    }
    let mut sorted = p.tokens.clone();
    sorted.sort();
    k.push(format!("s:{}", sorted.join(" ")));
    for t in &p.content {
        if t.chars().count() >= 3 {
            k.push(format!("t:{t}"));
            k.push(format!("t:{}", stemmer().stem(t)));
        }
        if t.chars().count() >= 4 && t.chars().any(|c| c.is_alphabetic()) {
            k.push(format!("p:{}", variants::phonetic_key(t)));
        }
    }
    for i in &p.initialisms {
        k.push(format!("i:{i}"));
    }
    if let Some(a) = &p.acronym {
        k.push(format!("i:{a}"));
    }
    if let Some(e) = &p.exonym {
        k.push(format!("x:{e}"));
    }
    k.sort();
    k.dedup();
    k
}

/// Why two prepared names of one type look like one thing, if they do.
pub(super) fn compare(a: &Prepared, b: &Prepared, person: bool) -> Option<(&'static str, f64)> {
    if a.numbers != b.numbers {
        return None; // "Topic 12" / "Topic 120", "iPhone 14" / "iPhone 15"
    }
    if a.canonical.is_empty() || b.canonical.is_empty() {
        return None;
    }
    if a.canonical == b.canonical {
        return Some((
            "same name once titles, abbreviations and punctuation are set aside",
            score::CANONICAL,
        ));
    }
    if a.aliases.contains(&b.canonical) || b.aliases.contains(&a.canonical) {
        return Some(("name is the other's alias", score::CANONICAL));
    }
    let mut sa = a.tokens.clone();
    let mut sb = b.tokens.clone();
    sa.sort();
    sb.sort();
    // "Hartmann, Elizabeth": a reordering is a name written surname first;
    // without a comma, other words in another order name another topic
    // ("Train visa" / "Visa train")
    if sa == sb && (person || a.comma || b.comma) {
        return Some(("the same words in another order", score::REORDERED));
    }
    if let (Some(x), Some(y)) = (&a.exonym, &b.exonym)
        && x == y
    {
        return Some(("names of one place in different languages", score::EXONYM));
    }
    for (s, l) in [(a, b), (b, a)] {
        if let Some(ac) = &s.acronym
            && l.acronym.is_none()
            && l.initialisms.contains(ac)
        {
            return Some(("name is the other's initialism", score::INITIALISM));
        }
    }
    if let Some(r) = abbreviated(a, b).or_else(|| abbreviated(b, a)) {
        return Some(r);
    }
    if person {
        return compare_people(a, b);
    }
    if plurals(&a.tokens, &b.tokens) {
        return Some(("the same words but for a plural", score::INFLECTION));
    }
    if let Some(r) = extra_words(a, b).or_else(|| conjunct(a, b)) {
        return Some(r);
    }
    if transliterated(&a.tokens, &b.tokens) {
        return Some((
            "every word the same or a transliteration of it",
            score::TRANSLITERATION,
        ));
    }
    if tokens_extend(&a.tokens, &b.tokens) {
        return Some(("one name extends the other's words", score::PREFIX));
    }
    if short_suffix(&a.canonical, &b.canonical) {
        return Some(("one name is the other plus a short suffix", score::PREFIX));
    }
    typo(a, b)
}

fn typo(a: &Prepared, b: &Prepared) -> Option<(&'static str, f64)> {
    let (x, y) = (&a.canonical, &b.canonical);
    (x.len() >= TYPO_MIN_LEN
        && y.len() >= TYPO_MIN_LEN
        && strsim::jaro_winkler(x, y) >= TYPO_MIN_SIMILARITY
        && !other_words(&a.tokens, &b.tokens))
    .then_some(("near-identical spelling", score::TYPO))
}

/// Two different months or weekdays ("June" / "July", "Mon" / "Sun"):
/// the names of a series, never one word misspelt.
fn calendar_siblings(p: &str, q: &str) -> bool {
    use std::str::FromStr;
    let month = |w: &str| chrono::Month::from_str(w).ok();
    let day = |w: &str| chrono::Weekday::from_str(w).ok();
    p != q && ((month(p).is_some() && month(q).is_some()) || (day(p).is_some() && day(q).is_some()))
}

/// Whether two names of as many words differ by whole words, not by a
/// slip inside one: "Automation A" / "Automation B", "Report — May" /
/// "Report — April", "Cleanup Plan" / "Cleanup Result", "v2" / "v3" name
/// siblings, while "Kubernets" / "Kubernetes" is one word misspelt. Each
/// word found on one side only must be a slip of the word in its place
/// on the other: both of three letters or more, no digit, one edit apart
/// (two for words of seven letters or more).
fn other_words(a: &[String], b: &[String]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).filter(|(p, q)| p != q).any(|(p, q)| {
        let n = p.chars().count().min(q.chars().count());
        let edits = strsim::damerau_levenshtein(p, q);
        n < 3
            || calendar_siblings(p, q)
            || p.chars().chain(q.chars()).any(|c| c.is_ascii_digit())
            || edits > if n >= 7 { 2 } else { 1 }
    })
}

/// A name with its doubled letters single ("hartmann" → "hartman").
fn undoubled(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if !out.ends_with(c) {
            out.push(c);
        }
    }
    out
}

/// People's names differ by one letter more often than people do ("Anna
/// Müller" / "Anna Miller", "Berg" / "Borg"): the only spelling slip taken
/// for one person is a doubled letter ("Hartmann" / "Hartman").
fn person_typo(a: &Prepared, b: &Prepared) -> Option<(&'static str, f64)> {
    (a.canonical != b.canonical && undoubled(&a.canonical) == undoubled(&b.canonical))
        .then_some(("the same name but for a doubled letter", score::TYPO))
}

/// People: the given names may be nicknames, initials or absent middle
/// names, and titles may differ (human_name's comparison); surnames must
/// agree, letter for letter or as transliterations.
fn compare_people(a: &Prepared, b: &Prepared) -> Option<(&'static str, f64)> {
    let (Some(x), Some(y)) = (&a.person, &b.person) else {
        return person_typo(a, b);
    };
    let surname = |n: &human_name::Name| normalise(&super::latin(n.surname()));
    let (sx, sy) = (surname(x), surname(y));
    let same_surname = sx == sy;
    if same_surname && x.consistent_with(y) && given_names_agree(x, y) {
        let initial_only = |n: &human_name::Name| n.given_name().is_none();
        if initial_only(x) || initial_only(y) {
            return Some((
                "a person known by the initial of the other's given name",
                score::INITIAL_ONLY,
            ));
        }
        return Some((
            "one person's name in another form (nickname, middle name or title)",
            score::PERSON_FORM,
        ));
    }
    if !same_surname
        && sx.split(' ').count() == sy.split(' ').count()
        && sx
            .split(' ')
            .zip(sy.split(' '))
            .all(|(p, q)| variants::transliterations(p, q))
    {
        // the surname transliterated, the given names consistent
        let given = |n: &human_name::Name| {
            n.given_name()
                .map(|g| normalise(&super::latin(g)))
                .unwrap_or_default()
        };
        let (gx, gy) = (given(x), given(y));
        if gx == gy || (!gx.is_empty() && !gy.is_empty() && variants::transliterations(&gx, &gy)) {
            return Some((
                "every word the same or a transliteration of it",
                score::TRANSLITERATION,
            ));
        }
    }
    person_typo(a, b)
}

/// The same words but one or more in the plural ("Board games" / "Board
/// game", "Libraries" / "Library"): only regular English plurals, since a
/// stemmer folds names too ("Lunde" / "Lund").
fn plurals(a: &[String], b: &[String]) -> bool {
    fn plural(s: &str, l: &str) -> bool {
        s.len() >= 3
            && (l.strip_suffix('s') == Some(s)
                || l.strip_suffix("es") == Some(s)
                || (s.ends_with('y') && l.strip_suffix("ies") == Some(&s[..s.len() - 1])))
    }
    a.len() == b.len()
        && a != b
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || plural(x, y) || plural(y, x))
}

/// Two written-out given names are one only as a nickname and its formal
/// name (the nickname short and clearly shorter: "Peggy" / "Margaret"), a
/// prefix ("Chris" / "Christopher") or a spelling variant ("Jon" /
/// "John"): two formal names that share a nickname are two names ("Edgar"
/// / "Edward", both "Ed").
fn given_names_agree(x: &human_name::Name, y: &human_name::Name) -> bool {
    let g = |n: &human_name::Name| n.given_name().map(|g| normalise(&super::latin(g)));
    let (Some(a), Some(b)) = (g(x), g(y)) else {
        return true; // an initial: human_name's comparison decides
    };
    if a == b {
        return true;
    }
    let (s, l) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    (s.len() <= NICKNAME_MAX_LEN && l.len() - s.len() >= 2)
        || l.starts_with(s.as_str())
        || strsim::jaro_winkler(s, l) >= GIVEN_NAME_SPELLING
}

/// A nickname is at most this long ("Maggie")…
pub const NICKNAME_MAX_LEN: usize = 6;
/// …and two given names this alike are one name spelled two ways ("Erik" /
/// "Eric", "Jon" / "John"; "Edgar" / "Edward" is 0.86).
pub const GIVEN_NAME_SPELLING: f64 = 0.88;

/// Every word of one is the other's word or a transliteration of it, at
/// least one differs.
fn transliterated(a: &[String], b: &[String]) -> bool {
    a.len() == b.len()
        && a != b
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || variants::transliterations(x, y))
}

/// One name is the other plus words: a company designation ("Volvo AB",
/// "Steinway & Sons Inc"), or, for a proper name, one closing word that the
/// shorter one's description opens with ("Hagabadet": "A day spa in the
/// old bathhouse" / "Hagabadet Spa"). Any other extra word names a part or
/// a kind of the shorter ("Rust" / "Rust async", "Lund" / "Lund
/// Cathedral"): not a candidate.
fn extra_words(a: &Prepared, b: &Prepared) -> Option<(&'static str, f64)> {
    let (s, l) = if a.tokens.len() <= b.tokens.len() {
        (a, b)
    } else {
        (b, a)
    };
    if s.tokens.len() == l.tokens.len() || s.content.is_empty() {
        return None;
    }
    if !l.tokens.starts_with(&s.tokens) {
        return None;
    }
    let extra: Vec<&String> = l.tokens[s.tokens.len()..]
        .iter()
        .filter(|t| !FUNCTION_WORDS.contains(&t.as_str()))
        .collect();
    if extra.is_empty() {
        return None;
    }
    if extra
        .iter()
        .all(|t| LEGAL_FORMS.contains(&t.as_str()) || COMPANY_WORDS.contains(&t.as_str()))
    {
        return Some((
            "one name is the other plus a company designation",
            score::LEGAL_FORM,
        ));
    }
    if extra.len() == 1 && l.title_case && s.title_case {
        let opening: HashSet<String> = super::stems_of(
            &s.description
                .split_whitespace()
                .take(DESCRIPTION_OPENING_WORDS)
                .collect::<Vec<_>>()
                .join(" "),
        );
        if opening.contains(&stemmer().stem(extra[0]).into_owned()) {
            return Some((
                "one name is the other plus the word its description opens with",
                score::EXTRA_WORD_DESCRIBED,
            ));
        }
    }
    None
}

/// A statement and the same statement with `and …` added: the longer
/// says all the shorter says. Names (title case) and short names are no
/// statements; a conjunct with a word that turns it ("but not", "except")
/// says something else.
fn conjunct(a: &Prepared, b: &Prepared) -> Option<(&'static str, f64)> {
    let (s, l) = if a.tokens.len() <= b.tokens.len() {
        (a, b)
    } else {
        (b, a)
    };
    if s.tokens.len() < STATEMENT_MIN_WORDS || s.title_case || l.title_case {
        return None;
    }
    let extra = l.tokens.strip_prefix(s.tokens.as_slice())?;
    let (first, rest) = extra.split_first()?;
    (first == "and"
        && !rest.is_empty()
        && extra.len() <= CONJUNCT_MAX_WORDS
        && !rest.iter().any(|w| CONJUNCT_TURNS.contains(&w.as_str())))
    .then_some((
        "one statement is the other with a conjunct added",
        score::CONJUNCT,
    ))
}

/// Words that close a company's name without naming another company
/// ("& Sons", "Group").
pub const COMPANY_WORDS: &[&str] = &[
    "sons",
    "son",
    "brothers",
    "bros",
    "group",
    "holding",
    "holdings",
    "international",
];

/// A description says what a thing is in its first words ("A day spa",
/// "The concert hall on ..."): how many are read for the extra-word rule.
pub const DESCRIPTION_OPENING_WORDS: usize = 5;

/// The short name abbreviates the long one word by word: each of its words
/// is the long name's next word, or an acronym of the long name's next
/// words, function words skipped or kept ("BBC SO" / "BBC Symphony
/// Orchestra"), with at least one acronym.
fn abbreviated(s: &Prepared, l: &Prepared) -> Option<(&'static str, f64)> {
    fn walk(short: &[String], long: &[String], used_acronym: bool) -> bool {
        let Some((w, rest)) = short.split_first() else {
            return long.is_empty() && used_acronym;
        };
        let lw = w.to_lowercase();
        if long.first().is_some_and(|x| x.to_lowercase() == lw)
            && walk(rest, &long[1..], used_acronym)
        {
            return true;
        }
        if !names::is_acronym(w) {
            return false;
        }
        // the acronym covers the next k words of the long name
        for k in 2..=long.len() {
            let words: Vec<String> = long[..k].iter().map(|x| x.to_lowercase()).collect();
            let all: String = words.iter().filter_map(|x| x.chars().next()).collect();
            let content: String = words
                .iter()
                .filter(|x| !FUNCTION_WORDS.contains(&x.as_str()))
                .filter_map(|x| x.chars().next())
                .collect();
            if (all == lw || content == lw) && walk(rest, &long[k..], true) {
                return true;
            }
        }
        false
    }
    (s.raw.len() >= 2 && s.raw.len() < l.raw.len() && walk(&s.raw, &l.raw, false))
        .then_some(("name abbreviates the other's words", score::INITIALISM))
}

fn tokens_extend(wa: &[String], wb: &[String]) -> bool {
    // every word of one is the other's word or a prefix of it (3+ letters):
    // "tom ruiz" / "tomas ruiz"
    if wa.len() != wb.len() || wa.len() < 2 {
        return false;
    }
    let mut differ = 0;
    for (x, y) in wa.iter().zip(wb) {
        if x == y {
            continue;
        }
        let (s, l) = if x.len() <= y.len() { (x, y) } else { (y, x) };
        if s.len() >= 3 && l.starts_with(s.as_str()) {
            differ += 1;
        } else {
            return false;
        }
    }
    differ == 1
}

fn short_suffix(a: &str, b: &str) -> bool {
    // one is the other plus a short tail: "postgres" / "postgresql"
    let (s, l) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    s.len() >= 5
        && !s.contains(' ')
        && l.starts_with(s)
        && l.len() - s.len() <= 3
        && !l[s.len()..].starts_with(' ')
}

/// The name rule that matches two concepts' names, if any (for "why not").
pub fn compare_names(a: &Named, b: &Named) -> Option<(&'static str, f64)> {
    if a.ty != b.ty {
        return None;
    }
    let person = is_person_type(&a.ty);
    let (pa, pb) = (prepare(a), prepare(b));
    let alike = alike(&pa, &pb);
    compare(&pa, &pb, person)
        .or_else(|| {
            // a single given name is matched against the whole memory in a
            // cycle; here against the other name alone
            if !person {
                return None;
            }
            let mut found = HashMap::new();
            let named = [a.clone(), b.clone()];
            given_names_only(&named, &[pa, pb], &[0, 1], &mut found);
            found.into_values().next().map(|m| (m.rule, m.score))
        })
        .or(alike)
}

/// Pairs of the same type that look like duplicates, with the rule that
/// matched. Work grows with the memory, not its square: only names that
/// share a key are compared, and crowded keys are left to rarer ones.
pub fn duplicates(items: &[Named]) -> Vec<Match> {
    let prepared: Vec<Prepared> = items.iter().map(prepare).collect();
    let mut by_type: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        by_type.entry(it.ty.as_str()).or_default().push(i);
    }
    let mut found: HashMap<(usize, usize), Match> = HashMap::new();
    for (ty, idx) in by_type {
        let person = is_person_type(ty);
        let mut blocks: HashMap<String, Vec<usize>> = HashMap::new();
        for &i in &idx {
            for k in keys(&prepared[i]) {
                blocks.entry(k).or_default().push(i);
            }
        }
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        for block in blocks.values() {
            if block.len() < 2 || block.len() > MAX_BLOCK {
                continue;
            }
            for (x, &i) in block.iter().enumerate() {
                for &j in &block[x + 1..] {
                    let key = (i.min(j), i.max(j));
                    if i == j || !seen.insert(key) {
                        continue;
                    }
                    if let Some((rule, s)) = compare(&prepared[i], &prepared[j], person)
                        .or_else(|| alike(&prepared[i], &prepared[j]))
                    {
                        found.insert(
                            key,
                            Match {
                                a: key.0,
                                b: key.1,
                                rule,
                                score: s,
                            },
                        );
                    }
                }
            }
        }
        if person {
            given_names_only(items, &prepared, &idx, &mut found);
        }
    }
    // an initial that matches several full names names none of them
    let mut per_holder: HashMap<usize, usize> = HashMap::new();
    for m in found.values().filter(|m| m.score == score::INITIAL_ONLY) {
        for i in [m.a, m.b] {
            *per_holder.entry(i).or_default() += 1;
        }
    }
    found.retain(|_, m| {
        m.score != score::INITIAL_ONLY
            || (per_holder[&m.a] == 1
                || prepared[m.a]
                    .person
                    .as_ref()
                    .is_some_and(|n| n.given_name().is_some()))
                && (per_holder[&m.b] == 1
                    || prepared[m.b]
                        .person
                        .as_ref()
                        .is_some_and(|n| n.given_name().is_some()))
    });
    let mut out: Vec<Match> = found.into_values().collect();
    out.sort_by_key(|x| (x.a, x.b));
    out
}

/// A person named by one given name ("Liz") against the full names whose
/// given name it may stand for ("Elizabeth Hartmann"): a candidate only
/// when exactly one full name matches.
fn given_names_only(
    items: &[Named],
    prepared: &[Prepared],
    idx: &[usize],
    found: &mut HashMap<(usize, usize), Match>,
) {
    let singles: Vec<usize> = idx
        .iter()
        .copied()
        .filter(|&i| prepared[i].tokens.len() == 1 && prepared[i].tokens[0].len() >= 2)
        .collect();
    if singles.is_empty() || singles.len() > MAX_SINGLE_NAMES {
        return;
    }
    // full names by given name, each given name parsed once
    let mut by_given: HashMap<String, Vec<usize>> = HashMap::new();
    for &i in idx {
        if let Some(g) = prepared[i].person.as_ref().and_then(|n| n.given_name()) {
            by_given
                .entry(normalise(&super::latin(g)))
                .or_default()
                .push(i);
        }
    }
    const PLACEHOLDER: &str = "Placeholdersurname";
    let givens: Vec<(human_name::Name, &Vec<usize>)> = by_given
        .iter()
        .filter_map(|(g, v)| human_name::Name::parse(&format!("{g} {PLACEHOLDER}")).map(|n| (n, v)))
        .collect();
    for &i in &singles {
        let Some(me) =
            human_name::Name::parse(&format!("{} {PLACEHOLDER}", super::latin(&items[i].name)))
        else {
            continue;
        };
        let hits: Vec<usize> = givens
            .iter()
            .filter(|(n, _)| me.consistent_with(n))
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|&j| j != i)
            .collect();
        if let [j] = hits.as_slice() {
            let key = (i.min(*j), i.max(*j));
            found.entry(key).or_insert(Match {
                a: key.0,
                b: key.1,
                rule: "a single given name that matches one person's full name",
                score: score::GIVEN_NAME_ONLY,
            });
        }
    }
}
