//! Search text analysis: how a text becomes the terms the full-text index
//! holds, and how a question becomes the terms it looks for. Both sides go
//! through the same steps, so "shelters" finds "shelter", "camps" finds
//! "camping" and "joined" finds "join":
//!
//! 1. **Words.** Runs of letters and digits; Chinese and Japanese runs
//!    (written without spaces) are cut into words by jieba.
//! 2. **Language.** whatlang names the text's language among those a
//!    Snowball stemmer exists for; a text it cannot place reliably is
//!    stemmed as English when written in Latin letters (the commonest
//!    case), and by its script otherwise (Cyrillic as Russian, Greek,
//!    Arabic), or not at all.
//! 3. **Stem, then fold.** Each word is lowercased, reduced to its Snowball
//!    stem in that language, then stripped of diacritics ("Dvořák" and
//!    "Dvorak" meet). A word holding a digit is a code or a number and is
//!    kept whole ("d17", "2023"). A text's word with diacritics is also
//!    indexed as its plain spelling stems (a stemmer reads "lavapies" and
//!    "lavapiés" differently: "lavapi", "lavapie"), so a question typed
//!    without accents finds it.
//!
//! A question also drops its stop words (the ISO lists of its language
//! and of English; never all of its words) and looks each remaining word
//! up under every stem it may have (its language's and English's).

pub mod frequency;
pub mod relations;

use jieba_rs::Jieba;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
use unicode_normalization::UnicodeNormalization;
use whatlang::{Detector, Lang, Script};

/// A term longer than this is cut (an index of pasted blobs stays small).
pub const MAX_TERM_CHARS: usize = 64;

/// The dictionary segmenter for Chinese and Japanese, loaded once.
pub fn jieba() -> &'static Jieba {
    static J: OnceLock<Jieba> = OnceLock::new();
    J.get_or_init(Jieba::new)
}

/// Whether a character is written without spaces between words: Han
/// ideographs and Japanese kana (Hangul, written with spaces, is not).
pub fn is_unspaced(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// An IANA time zone's name, by its area (`Asia/Jakarta`, `Europe/Lisbon`,
/// `America/Argentina/Buenos_Aires`, `Etc/GMT-3`): when a text was
/// written, never what it is about.
pub const TIME_ZONE_NAME: &str = r"\b(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)/[A-Za-z_+\-0-9]+(?:/[A-Za-z_]+)?";

/// Whether a character is Chinese, Japanese or Korean script (Han, kana,
/// Hangul).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// The languages a Snowball stemmer exists for, as whatlang names them.
const STEMMED: [(Lang, Algorithm, &str); 17] = [
    (Lang::Eng, Algorithm::English, "en"),
    (Lang::Fra, Algorithm::French, "fr"),
    (Lang::Deu, Algorithm::German, "de"),
    (Lang::Spa, Algorithm::Spanish, "es"),
    (Lang::Por, Algorithm::Portuguese, "pt"),
    (Lang::Ita, Algorithm::Italian, "it"),
    (Lang::Nld, Algorithm::Dutch, "nl"),
    (Lang::Swe, Algorithm::Swedish, "sv"),
    (Lang::Dan, Algorithm::Danish, "da"),
    (Lang::Nob, Algorithm::Norwegian, "no"),
    (Lang::Fin, Algorithm::Finnish, "fi"),
    (Lang::Hun, Algorithm::Hungarian, "hu"),
    (Lang::Ron, Algorithm::Romanian, "ro"),
    (Lang::Rus, Algorithm::Russian, "ru"),
    (Lang::Tur, Algorithm::Turkish, "tr"),
    (Lang::Ell, Algorithm::Greek, "el"),
    (Lang::Ara, Algorithm::Arabic, "ar"),
];

/// A language the analyzer stems (an index into [`STEMMED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language(usize);

impl Language {
    pub const ENGLISH: Language = Language(0);

    /// Its ISO 639-1 code ("en").
    pub fn code(self) -> &'static str {
        STEMMED[self.0].2
    }

    fn stemmer(self) -> &'static Stemmer {
        static S: OnceLock<Vec<Stemmer>> = OnceLock::new();
        &S.get_or_init(|| {
            STEMMED
                .iter()
                .map(|(_, a, _)| Stemmer::create(*a))
                .collect()
        })[self.0]
    }

    fn stop_words(self) -> &'static HashSet<String> {
        static S: OnceLock<Vec<HashSet<String>>> = OnceLock::new();
        &S.get_or_init(|| {
            STEMMED
                .iter()
                .map(|(_, _, code)| {
                    stop_words::lookup(code)
                        .unwrap_or(&[])
                        .iter()
                        .map(|w| fold(&w.to_lowercase()))
                        .collect()
                })
                .collect()
        })[self.0]
    }
}

fn detector() -> &'static Detector {
    static D: OnceLock<Detector> = OnceLock::new();
    D.get_or_init(|| Detector::with_allowlist(STEMMED.iter().map(|(l, _, _)| *l).collect()))
}

/// A text of at most this many words is placed by its script alone.
pub const SHORT_TEXT_WORDS: usize = 3;

/// The language a text is stemmed in, when it has one: whatlang's answer
/// when reliable, else by script (Latin as English).
pub fn language(text: &str) -> Option<Language> {
    // a name or a few words cannot be placed reliably: their script says
    // enough, and costs a fraction of a detection
    let script = if text.split_whitespace().nth(SHORT_TEXT_WORDS).is_none() {
        whatlang::detect_script(text)?
    } else {
        let info = detector().detect(text)?;
        if info.is_reliable()
            && let Some(i) = STEMMED.iter().position(|(l, _, _)| *l == info.lang())
        {
            return Some(Language(i));
        }
        info.script()
    };
    let by_script = match script {
        Script::Latin => Lang::Eng,
        Script::Cyrillic => Lang::Rus,
        Script::Greek => Lang::Ell,
        Script::Arabic => Lang::Ara,
        _ => return None,
    };
    STEMMED
        .iter()
        .position(|(l, _, _)| *l == by_script)
        .map(Language)
}

/// The share of a text's words that are among English's commonest (its
/// stop words): a good part of any English text, hardly any of another
/// language's.
pub fn english_stop_share(text: &str) -> f32 {
    let stop = Language::ENGLISH.stop_words();
    let (mut all, mut common) = (0usize, 0usize);
    for w in text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| w.chars().any(char::is_alphabetic))
    {
        all += 1;
        if stop.contains(&fold(&w.to_lowercase())) {
            common += 1;
        }
    }
    if all == 0 {
        0.0
    } else {
        common as f32 / all as f32
    }
}

/// `s` without its diacritics (NFD, combining marks dropped).
pub fn fold(s: &str) -> String {
    s.nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .collect()
}

/// A text's words, in order: runs of letters and digits, with Chinese and
/// Japanese runs segmented. Lowercased, not yet stemmed.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    let mut unspaced = String::new();
    let flush_run = |run: &mut String, out: &mut Vec<String>| {
        if !run.is_empty() {
            out.push(run.to_lowercase());
            run.clear();
        }
    };
    let flush_unspaced = |u: &mut String, out: &mut Vec<String>| {
        if !u.is_empty() {
            for w in jieba().cut_for_search(u, true) {
                let w = w.word.trim();
                if w.chars().any(char::is_alphanumeric) {
                    out.push(w.to_lowercase());
                }
            }
            u.clear();
        }
    };
    for c in text.chars() {
        if is_unspaced(c) {
            flush_run(&mut run, &mut out);
            unspaced.push(c);
        } else if c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c) {
            flush_unspaced(&mut unspaced, &mut out);
            run.push(c);
        } else {
            flush_run(&mut run, &mut out);
            flush_unspaced(&mut unspaced, &mut out);
        }
    }
    flush_run(&mut run, &mut out);
    flush_unspaced(&mut unspaced, &mut out);
    out
}

fn is_code(word: &str) -> bool {
    word.chars().any(|c| c.is_numeric())
}

fn cut(mut term: String) -> String {
    if let Some((i, _)) = term.char_indices().nth(MAX_TERM_CHARS) {
        term.truncate(i);
    }
    term
}

/// A lowercased word as the index holds it in `lang`.
pub fn term(word: &str, lang: Option<Language>) -> String {
    if is_code(word) || word.chars().any(is_unspaced) {
        return cut(word.to_string());
    }
    let stemmed = match lang {
        Some(l) => l.stemmer().stem(word).into_owned(),
        None => word.to_string(),
    };
    cut(fold(&stemmed))
}

/// Which of a text's terms a part of the index takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Every term.
    All,
    /// Terms without a digit (a name's words).
    Words,
    /// Terms with a digit (a name's codes and numbers: "D17:13", "v2").
    Codes,
}

impl Part {
    pub fn parse(s: &str) -> Option<Part> {
        match s {
            "all" => Some(Part::All),
            "words" => Some(Part::Words),
            "codes" => Some(Part::Codes),
            _ => None,
        }
    }
}

/// A text as the full-text index holds it: its terms, space-separated.
pub fn document(text: &str, part: Part) -> String {
    let lang = language(text);
    let mut out = String::with_capacity(text.len());
    for w in words(text) {
        let keep = match part {
            Part::All => true,
            Part::Words => !is_code(&w),
            Part::Codes => is_code(&w),
        };
        if keep {
            if !out.is_empty() {
                out.push(' ');
            }
            let t = term(&w, lang);
            out.push_str(&t);
            // typed without its accents, a word stems otherwise
            let plain = fold(&w);
            if plain != w {
                let p = term(&plain, lang);
                if p != t {
                    out.push(' ');
                    out.push_str(&p);
                }
            }
        }
    }
    out
}

/// One word of a question: the terms it may be indexed under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryWord {
    pub terms: Vec<String>,
    /// The word as typed (folded), also matched as a prefix: the last word
    /// of a text that does not end in a space or punctuation, as while typing.
    pub prefix: Option<String>,
    /// A number or code: matched whole, never as a prefix.
    pub code: bool,
}

/// A question as the index is asked it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Query {
    pub words: Vec<QueryWord>,
    /// The question's language, when one was found.
    pub language: Option<&'static str>,
}

/// The terms a question looks for: its words less its stop words (unless
/// that leaves none), each under its stems in the question's language and
/// in English. At most `max_words` distinct words.
pub fn query(text: &str, max_words: usize) -> Query {
    let lang = language(text);
    let langs: Vec<Language> = match lang {
        Some(l) if l != Language::ENGLISH => vec![l, Language::ENGLISH],
        _ => vec![Language::ENGLISH],
    };
    let mut all: Vec<String> = Vec::new();
    for w in words(text) {
        if !all.contains(&w) {
            all.push(w);
        }
    }
    let stop = |w: &String| {
        !is_code(w)
            && langs
                .iter()
                .any(|l| l.stop_words().contains(fold(w).as_str()))
    };
    let kept: Vec<&String> = if all.iter().all(stop) {
        all.iter().collect()
    } else {
        all.iter().filter(|w| !stop(w)).collect()
    };
    let typing = text
        .chars()
        .last()
        .is_some_and(|c| c.is_alphanumeric() || is_unspaced(c));
    let last = all.last().cloned();
    let mut out = Vec::new();
    for w in kept.into_iter().take(max_words) {
        let code = is_code(w);
        let mut terms: Vec<String> = Vec::new();
        for l in &langs {
            let t = term(w, Some(*l));
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
        let prefix = (typing && !code && Some(w) == last.as_ref() && w.chars().count() >= 2)
            .then(|| cut(fold(w)));
        out.push(QueryWord {
            terms,
            prefix,
            code,
        });
    }
    Query {
        words: out,
        language: lang.map(Language::code),
    }
}

/// The days a text names unambiguously: with a year and a month named in
/// words ("18 August, 2023", "August 18th 2023", "18 août 2023", "18. August
/// 2023", "18 de agosto de 2023", "18 августа 2023"; the month names of
/// [`MONTH_LOCALES`]), in ISO form ("2023-08-18"), or with the year, month
/// and day marks of Chinese, Japanese and Korean ("2023年8月18日",
/// "2023년 8월 18일"). "18/08/2023" is not read (day and month could swap),
/// nor is a date without its year.
pub fn days(text: &str) -> Vec<chrono::NaiveDate> {
    use chrono::NaiveDate;
    static RE: OnceLock<[regex::Regex; 4]> = OnceLock::new();
    let [dmy, mdy, iso, cjk] = RE.get_or_init(|| {
        [
            regex::Regex::new(r"(?i)\b(\d{1,2})(?:st|nd|rd|th|er|\.|º)?\s+(?:of\s+|de\s+|di\s+)?(\p{L}+)\.?,?\s+(?:de\s+|del\s+)?(\d{4})\b").expect("dmy"),
            regex::Regex::new(r"(?i)\b(\p{L}+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b").expect("mdy"),
            regex::Regex::new(r"\b(\d{4})-(\d{2})-(\d{2})\b").expect("iso"),
            regex::Regex::new(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]").expect("cjk"),
        ]
    });
    let mut out = Vec::new();
    let mut push = |y: &str, m: Option<u32>, d: &str| {
        if let (Ok(y), Some(m), Ok(d)) = (y.parse(), m, d.parse())
            && let Some(day) = NaiveDate::from_ymd_opt(y, m, d)
            && !out.contains(&day)
        {
            out.push(day);
        }
    };
    for c in dmy.captures_iter(text) {
        push(&c[3], month_named(&c[2]), &c[1]);
    }
    for c in mdy.captures_iter(text) {
        push(&c[3], month_named(&c[1]), &c[2]);
    }
    for c in iso.captures_iter(text) {
        push(&c[1], c[2].parse().ok(), &c[3]);
    }
    for c in cjk.captures_iter(text) {
        push(&c[1], c[2].parse().ok(), &c[3]);
    }
    out.truncate(MAX_DAYS);
    out
}

/// The languages whose month names [`days`] reads: the glibc locales'
/// names (full, abbreviated, and the nominative forms where dates use the
/// genitive), through `pure-rust-locales`.
pub const MONTH_LOCALES: [&str; 20] = [
    "en", "fr", "de", "es", "it", "pt", "pt_BR", "nl", "sv", "da", "nb", "fi", "pl", "cs", "ru",
    "uk", "tr", "ro", "id", "ca",
];

/// The month a word names in one of [`MONTH_LOCALES`] (any case, a final
/// dot dropped); a word that names different months in two of them names
/// none.
pub fn month_named(word: &str) -> Option<u32> {
    static NAMES: OnceLock<HashMap<String, u32>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        use pure_rust_locales as l;
        macro_rules! lists {
            ($($loc:ident),*) => {
                vec![$(
                    Some(l::$loc::LC_TIME::MON),
                    Some(l::$loc::LC_TIME::ABMON),
                    l::$loc::LC_TIME::ALT_MON,
                    l::$loc::LC_TIME::AB_ALT_MON,
                )*]
            };
        }
        let all = lists!(
            en_US, fr_FR, de_DE, es_ES, it_IT, pt_PT, pt_BR, nl_NL, sv_SE, da_DK, nb_NO, fi_FI,
            pl_PL, cs_CZ, ru_RU, uk_UA, tr_TR, ro_RO, id_ID, ca_ES
        );
        let mut map: HashMap<String, u32> = HashMap::new();
        let mut clash: HashSet<String> = HashSet::new();
        for names in all.into_iter().flatten() {
            for (i, n) in names.iter().enumerate() {
                let key = n.trim_end_matches('.').to_lowercase();
                if key.chars().count() < 3 || key.contains(char::is_whitespace) {
                    continue;
                }
                let m = i as u32 + 1;
                if *map.entry(key.clone()).or_insert(m) != m {
                    clash.insert(key);
                }
            }
        }
        map.retain(|k, _| !clash.contains(k));
        map
    });
    names
        .get(&word.trim_end_matches('.').to_lowercase())
        .copied()
}

/// At most this many days of a question are looked up.
pub const MAX_DAYS: usize = 8;

/// The languages whose long stop-word lists ([stopwords-iso], through
/// `stop-words` 0.9) say what can never name a topic.
///
/// [stopwords-iso]: https://github.com/stopwords-iso/stopwords-iso
pub const TOPIC_STOP_LANGUAGES: [&str; 16] = [
    "en", "fr", "de", "es", "it", "pt", "nl", "sv", "pl", "ru", "uk", "vi", "id", "zh", "ja", "ko",
];

/// Whether a word is too general to name a topic in any of
/// [`TOPIC_STOP_LANGUAGES`]: "next", "open", "new", "work", "system",
/// "done", 然后, まだ, 그리고. The lists are long on purpose: a word they
/// hold is a poor name for a domain even where it is a poor stop word for
/// a search.
pub fn never_a_topic(word: &str) -> bool {
    static S: OnceLock<HashSet<String>> = OnceLock::new();
    let set = S.get_or_init(|| {
        TOPIC_STOP_LANGUAGES
            .iter()
            .flat_map(|code| stop_words_iso::get(code).iter())
            .map(|w| fold(&w.to_lowercase()))
            .collect()
    });
    set.contains(&fold(&word.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> String {
        document(text, Part::All)
    }

    #[test]
    fn inflections_meet_both_ways() {
        assert_eq!(terms("shelters"), terms("shelter"));
        assert_eq!(terms("camps"), terms("camping"));
        assert_eq!(terms("joined"), terms("join"));
        assert_eq!(terms("Dvořák"), terms("Dvorak"));
    }

    #[test]
    fn codes_and_numbers_are_kept_whole_and_apart() {
        assert_eq!(document("D17:13 meeting", Part::Codes), "d17 13");
        assert_eq!(document("D17:13 meeting", Part::Words), "meet");
    }

    #[test]
    fn chinese_is_segmented() {
        let t = terms("我喜欢喝咖啡");
        assert!(t.split(' ').any(|w| w == "咖啡"), "{t}");
    }

    #[test]
    fn general_words_never_name_a_topic() {
        for w in ["next", "Open", "new", "done", "system", "然后", "그리고"] {
            assert!(never_a_topic(w), "{w}");
        }
        for w in [
            "polymarket",
            "cron",
            "skills",
            "telegram",
            "pottery",
            "野球",
        ] {
            assert!(!never_a_topic(w), "{w}");
        }
    }

    #[test]
    fn a_question_drops_its_stop_words_but_never_all() {
        let q = query("What books has John read?", 16);
        let ws: Vec<&str> = q.words.iter().map(|w| w.terms[0].as_str()).collect();
        assert_eq!(ws, ["book", "john", "read"]);
        let q = query("The Who", 16);
        assert_eq!(q.words.len(), 2);
        let q = query("Postg", 16);
        assert_eq!(q.words[0].prefix.as_deref(), Some("postg"));
        let q = query("camping?", 16);
        assert_eq!(q.words[0].prefix, None);
    }

    #[test]
    fn days_are_read_only_when_unambiguous() {
        let d = |y, m, dd| chrono::NaiveDate::from_ymd_opt(y, m, dd).expect("date");
        assert_eq!(days("What happened on 18 August, 2023?"), [d(2023, 8, 18)]);
        assert_eq!(
            days("on August 18th 2023 and Sept. 2, 2024"),
            [d(2023, 8, 18), d(2024, 9, 2)]
        );
        assert_eq!(days("the 2023-08-18 log"), [d(2023, 8, 18)]);
        assert!(days("on 18/08/2023, or on 18 August").is_empty());
        assert!(days("May I ask about 30 February 2023?").is_empty());
    }

    #[test]
    fn days_are_read_in_other_languages() {
        let d = |y, m, dd| chrono::NaiveDate::from_ymd_opt(y, m, dd).expect("date");
        let aug = [d(2023, 8, 18)];
        for text in [
            "Qu'avons-nous fait le 18 août 2023 ?",
            "Was war am 18. August 2023?",
            "¿Qué pasó el 18 de agosto de 2023?",
            "Cosa è successo il 18 agosto 2023?",
            "O que houve em 18 de agosto de 2023?",
            "Wat gebeurde er op 18 augustus 2023?",
            "Что было 18 августа 2023 года?",
            "Co się stało 18 sierpnia 2023?",
            "2023年8月18日に何をしましたか",
            "我们2023年8月18日做了什么",
            "2023년 8월 18일에 무엇을 했나요?",
            "on 18 Aug. 2023",
        ] {
            assert_eq!(days(text), aug, "{text}");
        }
        // a word that is no month, and a month without a year
        assert!(days("the 18 bottles 2023").is_empty());
        assert!(days("le 18 août").is_empty());
        // (Polish and Czech both call November "listopad")
        assert_eq!(super::month_named("listopad"), Some(11));
        assert_eq!(super::month_named("août"), Some(8));
        assert_eq!(super::month_named("Sierpnia"), Some(8));
    }

    #[test]
    fn other_languages_stem_in_their_own() {
        // French, placed by whatlang, stemmed by the French Snowball
        assert_eq!(
            terms("Elle aime les randonnées en montagne"),
            "ell aim les randonne en montagn"
        );
    }
}
