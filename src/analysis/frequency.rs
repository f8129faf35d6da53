//! How common a word is in its language: the word lists of wordfreq
//! (`data/wordfreq/`, CC BY-SA 4.0), for each language the analyzer stems,
//! down to Zipf [`MIN_ZIPF`]. The Zipf scale is the base-10 logarithm of a
//! word's occurrences per billion words: "the" is 7.7, "account" 5.2,
//! "heartbeat" 3.7.
//!
//! The sleep cycle reads it to tell a word any text may share ("account",
//! "problema", "active") from one that says what its texts are about
//! ("FortiGate", "heartbeat"): a domain is never named for a word that is
//! common in the memory's languages unless its items are named for it.

use super::Language;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The rarest a listed word is: words rarer than this are not listed, and
/// [`zipf`] says `None` for them.
pub const MIN_ZIPF: f32 = 4.0;

/// The lists, by the analyzer's ISO 639-1 code.
const LISTS: [(&str, &str); 17] = [
    ("en", include_str!("../../data/wordfreq/en.txt")),
    ("fr", include_str!("../../data/wordfreq/fr.txt")),
    ("de", include_str!("../../data/wordfreq/de.txt")),
    ("es", include_str!("../../data/wordfreq/es.txt")),
    ("pt", include_str!("../../data/wordfreq/pt.txt")),
    ("it", include_str!("../../data/wordfreq/it.txt")),
    ("nl", include_str!("../../data/wordfreq/nl.txt")),
    ("sv", include_str!("../../data/wordfreq/sv.txt")),
    ("da", include_str!("../../data/wordfreq/da.txt")),
    ("no", include_str!("../../data/wordfreq/no.txt")),
    ("fi", include_str!("../../data/wordfreq/fi.txt")),
    ("hu", include_str!("../../data/wordfreq/hu.txt")),
    ("ro", include_str!("../../data/wordfreq/ro.txt")),
    ("ru", include_str!("../../data/wordfreq/ru.txt")),
    ("tr", include_str!("../../data/wordfreq/tr.txt")),
    ("el", include_str!("../../data/wordfreq/el.txt")),
    ("ar", include_str!("../../data/wordfreq/ar.txt")),
];

/// One language's list, read on first use: word → Zipf × 10.
fn list(code: &str) -> Option<&'static HashMap<&'static str, u8>> {
    static READ: OnceLock<Vec<OnceLock<HashMap<&'static str, u8>>>> = OnceLock::new();
    let i = LISTS.iter().position(|(c, _)| *c == code)?;
    let lists = READ.get_or_init(|| LISTS.iter().map(|_| OnceLock::new()).collect());
    Some(lists[i].get_or_init(|| {
        let mut words = HashMap::new();
        let mut zipf = 0u8;
        for line in LISTS[i].1.lines() {
            if let Some(z) = line.strip_prefix('@') {
                zipf = z.parse().unwrap_or(0);
            } else if !line.is_empty() {
                // a word listed twice keeps its first, highest, frequency
                words.entry(line).or_insert(zipf);
            }
        }
        words
    }))
}

/// The word's Zipf frequency in the language (to a tenth), or `None` when
/// it is rarer than [`MIN_ZIPF`] there. Case does not matter.
pub fn zipf(word: &str, lang: Language) -> Option<f32> {
    let words = list(lang.code())?;
    let lower = word.to_lowercase();
    words.get(lower.as_str()).map(|&z| f32::from(z) / 10.0)
}

/// The word's highest Zipf frequency among the languages (and English,
/// which notes in any language borrow from), or `None` when it is rarer
/// than [`MIN_ZIPF`] in all of them.
pub fn commonest(word: &str, langs: &[Language]) -> Option<f32> {
    std::iter::once(Language::ENGLISH)
        .chain(langs.iter().copied())
        .filter_map(|l| zipf(word, l))
        .reduce(f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(text: &str) -> Language {
        crate::analysis::language(text).unwrap()
    }

    #[test]
    fn every_list_is_read_and_ordered() {
        for (code, text) in LISTS {
            let words = list(code).unwrap();
            assert!(words.len() > 5_000, "{code}: {}", words.len());
            assert!(text.starts_with('@'), "{code}");
            assert!(
                words.values().all(|&z| f32::from(z) / 10.0 >= MIN_ZIPF),
                "{code}"
            );
        }
    }

    #[test]
    fn common_words_and_rare_ones() {
        let en = Language::ENGLISH;
        assert!(zipf("the", en).unwrap() > 7.0);
        assert!(zipf("Account", en).unwrap() >= 5.0);
        assert_eq!(zipf("heartbeat", en), None);
        assert_eq!(zipf("FortiGate", en), None);
        let pt = lang("O problema da porta do roteador foi resolvido ontem à noite pela equipe");
        assert_eq!(pt.code(), "pt");
        assert!(zipf("problema", pt).unwrap() >= 5.0);
        assert!(commonest("porta", &[pt]).unwrap() >= 4.5);
        // English is always asked too: a Portuguese note borrows "setup"
        assert!(commonest("setup", &[pt]).is_some());
        assert_eq!(commonest("openclaw", &[pt]), None);
    }
}
