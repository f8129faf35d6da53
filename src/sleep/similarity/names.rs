//! The forms of a name that sameness compares: transliterated to Latin
//! letters, case and punctuation set aside, honorifics and titles dropped,
//! common abbreviations spelled out, function words known, initialisms
//! taken with and without them.

use super::normalise;

/// Honorifics and academic or religious titles that may open a person's
/// name and say nothing about who it is ("Dr. Farah Siddiqui").
pub const TITLES: &[&str] = &[
    "dr",
    "doctor",
    "prof",
    "professor",
    "mr",
    "mrs",
    "ms",
    "miss",
    "mx",
    "sir",
    "dame",
    "lord",
    "lady",
    "rev",
    "revd",
    "reverend",
    "fr",
    "father",
    "hon",
    "herr",
    "frau",
    "mme",
    "mlle",
    "madame",
    "monsieur",
    "sr",
    "sra",
    "srta",
    "senor",
    "senora",
    "don",
    "dona",
    "dott",
    "ing",
    "maestro",
    "capt",
    "captain",
    "col",
    "gen",
    "sgt",
    "lt",
    "uncle",
    "aunt",
    "auntie",
    "grandma",
    "grandpa",
    "fru",
    "hr",
];

/// Suffixes after a person's name that are credentials or generations,
/// not part of who it is ("Anna Berg PhD").
pub const PERSON_SUFFIXES: &[&str] = &[
    "phd", "md", "dds", "esq", "mba", "msc", "bsc", "ma", "ba", "rn", "frcs", "obe", "mbe", "cbe",
];

/// Legal forms of organisations: a name with or without one names the same
/// body ("Volvo" / "Volvo AB").
pub const LEGAL_FORMS: &[&str] = &[
    "inc",
    "incorporated",
    "ltd",
    "limited",
    "llc",
    "llp",
    "plc",
    "corp",
    "corporation",
    "co",
    "company",
    "gmbh",
    "ag",
    "kg",
    "ab",
    "asa",
    "as",
    "oy",
    "oyj",
    "sa",
    "sas",
    "sarl",
    "srl",
    "spa",
    "bv",
    "nv",
    "pty",
    "kk",
    "eg",
    "ev",
];

/// Words that carry no identity in a multi-word name and are skipped by
/// initialisms ("Royal Northern College of Music" → "RNCM"), in the
/// languages names are commonly drawn from.
pub const FUNCTION_WORDS: &[&str] = &[
    "of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "de", "del", "della", "di", "da",
    "do", "dos", "das", "la", "le", "les", "du", "des", "der", "die", "den", "von", "van", "und",
    "y", "e", "et", "och", "og", "i", "el", "al", "zu", "zur", "zum", "am", "im",
];

/// Abbreviations spelled out where they open a name ("St Malo" →
/// "saint malo", "Mt Fuji" → "mount fuji").
const LEADING_ABBREVIATIONS: &[(&str, &str)] = &[
    ("st", "saint"),
    ("ste", "sainte"),
    ("sta", "santa"),
    ("sto", "santo"),
    ("mt", "mount"),
    ("ft", "fort"),
    ("pt", "point"),
];

/// Abbreviations spelled out where they close a name ("Baker St" →
/// "baker street").
const TRAILING_ABBREVIATIONS: &[(&str, &str)] = &[
    ("st", "street"),
    ("rd", "road"),
    ("ave", "avenue"),
    ("av", "avenue"),
    ("blvd", "boulevard"),
    ("sq", "square"),
    ("ln", "lane"),
    ("univ", "university"),
    ("dept", "department"),
    ("intl", "international"),
];

/// A name's text transliterated to Latin letters and normalised:
/// `"Göteborg"` → `"goteborg"`, `"Чайковский"` → `"chaikovskii"`,
/// `"St-Malo"` → `"st malo"`.
pub fn latin(s: &str) -> String {
    normalise(&super::latin(&s.replace('&', " and ")))
}

/// Numbers and ordinals written in English words as digits ("Fifth
/// Avenue" → "5th Avenue", "Route Sixty-Six" → "Route 66"), by text2num,
/// so that a name written either way is one name.
pub fn numbers_as_digits(name: &str) -> String {
    static EN: std::sync::OnceLock<text2num::Language> = std::sync::OnceLock::new();
    // a name longer than this is a statement, not a name with a number
    const MAX_LEN: usize = 200;
    if name.len() > MAX_LEN || !name.chars().any(|c| c.is_ascii_alphabetic()) {
        return name.to_string();
    }
    text2num::replace_numbers_in_text(name, EN.get_or_init(text2num::Language::english), 0.0)
}

/// The tokens of a name once titles (for people), credentials and common
/// abbreviations are set aside.
pub fn canonical_tokens(name: &str, person: bool) -> Vec<String> {
    let mut t: Vec<String> = latin(&numbers_as_digits(name))
        .split(' ')
        .map(str::to_string)
        .collect();
    t.retain(|w| !w.is_empty());
    // "R. N. C. M." is one initialism
    if t.len() >= 2 && t.iter().all(|w| w.chars().count() == 1) {
        return vec![t.concat()];
    }
    if person {
        while t.len() > 1 && TITLES.contains(&t[0].as_str()) {
            t.remove(0);
        }
        while t.len() > 1 && PERSON_SUFFIXES.contains(&t[t.len() - 1].as_str()) {
            t.pop();
        }
    } else if t.len() >= 2 {
        if let Some((_, full)) = LEADING_ABBREVIATIONS.iter().find(|(a, _)| *a == t[0]) {
            t[0] = full.to_string();
        }
        let last = t.len() - 1;
        if let Some((_, full)) = TRAILING_ABBREVIATIONS.iter().find(|(a, _)| *a == t[last]) {
            t[last] = full.to_string();
        }
    }
    t
}

/// Whether a word is written as an acronym (`RNCM`, `JSON`, `NASA`).
pub fn is_acronym(word: &str) -> bool {
    let n = word.chars().count();
    (2..=8).contains(&n) && word.chars().all(|c| c.is_uppercase() || c.is_ascii_digit())
}

/// The initialisms a multi-word name may go by: every word's first letter,
/// and the same without function words ("Royal Northern College of Music"
/// → `rncom`, `rncm`). None for a name that holds an acronym already
/// ("JSON Schema" is not "JS").
pub fn initialisms(name: &str) -> Vec<String> {
    // (a name written all in capitals says nothing by its case: its
    // words are words, not acronyms)
    if !all_capitals(name) && name.split(|c: char| !c.is_alphanumeric()).any(is_acronym) {
        return Vec::new();
    }
    let w: Vec<String> = super::words(&super::latin(name));
    if w.len() < 2 {
        return Vec::new();
    }
    let all: String = w.iter().filter_map(|x| x.chars().next()).collect();
    let content: String = w
        .iter()
        .filter(|x| !FUNCTION_WORDS.contains(&x.as_str()))
        .filter_map(|x| x.chars().next())
        .collect();
    // and without its legal form ("International Business Machines
    // Corporation" goes by IBM)
    let body: String = w
        .iter()
        .filter(|x| !FUNCTION_WORDS.contains(&x.as_str()) && !LEGAL_FORMS.contains(&x.as_str()))
        .filter_map(|x| x.chars().next())
        .collect();
    let mut out = vec![all];
    for i in [content, body] {
        if i.len() >= 2 && !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// Written all in capitals (at least two letters, none small).
pub fn all_capitals(name: &str) -> bool {
    name.chars().filter(|c| c.is_alphabetic()).count() >= 2 && !name.chars().any(char::is_lowercase)
}

/// The content words of a name (function words, legal forms and single
/// letters aside), the tokens blocking works on.
pub fn content_tokens(tokens: &[String]) -> Vec<String> {
    tokens
        .iter()
        .filter(|w| w.chars().count() >= 2)
        .filter(|w| !FUNCTION_WORDS.contains(&w.as_str()) && !LEGAL_FORMS.contains(&w.as_str()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            canonical_tokens("Dr. Farah Siddiqui", true),
            ["farah", "siddiqui"]
        );
        assert_eq!(canonical_tokens("St Malo", false), ["saint", "malo"]);
        assert_eq!(canonical_tokens("Saint-Malo", false), ["saint", "malo"]);
        assert_eq!(canonical_tokens("Baker St", false), ["baker", "street"]);
        assert_eq!(canonical_tokens("R.N.C.M.", false), ["rncm"]);
        assert_eq!(latin("Göteborg"), "goteborg");
        assert_eq!(latin("Чайковский"), "chaikovskii");
        assert_eq!(
            initialisms("Royal Northern College of Music"),
            ["rncom", "rncm"]
        );
        assert!(initialisms("JSON Schema").is_empty());
        assert_eq!(initialisms("JavaScript"), ["js"]);
    }
}
