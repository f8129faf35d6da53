//! Sameness of names and texts: the forms a name is compared in
//! ([`names`]), spellings across languages ([`variants`]), candidate
//! duplicate pairs found by blocking ([`matching`]), pairs judged the
//! same grouped into clusters ([`clusters`]), and stemmed text overlap.

pub mod clusters;
pub mod matching;
pub mod names;
pub mod segment;
pub mod variants;

pub use matching::duplicates;
use std::collections::HashSet;
use unicode_normalization::UnicodeNormalization;

/// A text in Latin letters (deunicode's transliteration), its pictographs
/// and symbols left out: `"✅ Done ⭐"` is `" Done "`, never "white check
/// mark Done star", so an emoji is no word a name or a theme shares.
pub fn latin(text: &str) -> String {
    let kept: String = text
        .chars()
        .map(|c| {
            let symbol = !c.is_alphanumeric()
                && !c.is_ascii()
                && deunicode::deunicode_char(c)
                    .is_some_and(|t| t.chars().any(|x| x.is_ascii_alphanumeric()));
            if symbol { ' ' } else { c }
        })
        .collect();
    deunicode::deunicode(&kept)
}

/// Lowercase, accents folded, punctuation dropped, whitespace collapsed:
/// `"Tomás  Ruiz!"` → `"tomas ruiz"`.
pub fn normalise(s: &str) -> String {
    let folded: String = s
        .nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .collect();
    let mut out = String::with_capacity(folded.len());
    let mut space = false;
    for c in folded.chars() {
        if c.is_alphanumeric() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase());
        } else {
            space = true;
        }
    }
    out
}

/// The words of a name, splitting camel case: `"JavaScript"` →
/// `["java", "script"]`, `"Board games"` → `["board", "games"]`.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase();
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|w| normalise(&w)).collect()
}

fn english() -> &'static rust_stemmers::Stemmer {
    static S: std::sync::OnceLock<rust_stemmers::Stemmer> = std::sync::OnceLock::new();
    S.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))
}

/// The stem of one written word taken whole, camel case and all
/// (`"OpenClaw"` → `"openclaw"`, `"Heartbeats"` → `"heartbeat"`): a
/// product's name is one theme, never its halves ("Claw", "Poly"). None
/// for a word of under three letters or a function word.
pub fn stem_whole(word: &str) -> Option<String> {
    let w: String = normalise(&latin(word)).split(' ').collect();
    if w.chars().count() < 3
        || names::FUNCTION_WORDS.contains(&w.as_str())
        || STOP_WORDS.contains(&w.as_str())
    {
        return None;
    }
    Some(english().stem(&w).into_owned())
}

/// One concept offered for duplicate detection.
#[derive(Debug, Clone, Default)]
pub struct Named {
    pub id: i64,
    pub ty: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub description: String,
}

/// Why two names look like one thing.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub a: usize,
    pub b: usize,
    pub rule: &'static str,
    pub score: f64,
}

/// The English stems of a text's words of 3+ letters ("rehearsals" →
/// "rehears"), function words aside; Chinese and Japanese words as a
/// dictionary segments them, those common in general text aside
/// ([`segment::MIN_TOPIC_IDF`]), never read as their romanisation (whose
/// syllables every text shares).
pub fn stems_of(text: &str) -> HashSet<String> {
    let st = english();
    let latin = |t: &str| -> Vec<String> {
        words(&latin(t))
            .into_iter()
            .filter(|w| w.chars().count() >= 3 && !names::FUNCTION_WORDS.contains(&w.as_str()))
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .map(|w| st.stem(&w).into_owned())
            .collect()
    };
    if !segment::has_cjk(text) {
        return latin(text).into_iter().collect();
    }
    let mut out = HashSet::new();
    for w in segment::words(text) {
        if segment::has_cjk(&w) {
            if w.chars().count() >= 2 && segment::rarity(&w) >= segment::MIN_TOPIC_IDF {
                out.insert(w);
            }
        } else {
            out.extend(latin(&w));
        }
    }
    out
}

/// Common words that say nothing of a topic, left out of text overlap.
pub const STOP_WORDS: &[&str] = &[
    "with", "from", "that", "this", "these", "those", "was", "were", "are", "has", "have", "had",
    "her", "his", "their", "its", "our", "your", "who", "which", "what", "when", "where", "not",
    "but", "all", "any", "some", "one", "two", "also", "very", "about", "into", "over", "after",
    "before", "then", "than", "there", "here", "they", "them", "she", "him", "you", "can", "will",
    "would", "should", "could", "been", "being", "each", "other", "more", "most", "such", "only",
    "own", "same", "just", "now", "new", "out", "via", "per",
];

/// A statement's name (a preference, a fact, a lesson named after its
/// text) opens with at least this many words.
pub const STATEMENT_NAME_WORDS: usize = 4;

/// A statement's name without the mark that tells two of one opening
/// apart (`User prefers the nightly scan to run at 22:00 and to (bbbb)`),
/// when the name is how its description opens and has at least
/// [`STATEMENT_NAME_WORDS`] words: a preference, a fact or a lesson named
/// after its text. `None` for any other name.
pub fn statement_name<'a>(name: &'a str, description: &str) -> Option<&'a str> {
    let name = name.trim();
    let bare = match name.rsplit_once(" (") {
        Some((head, tail)) if tail.len() <= 12 && tail.ends_with(')') && !tail.contains(' ') => {
            head
        }
        _ => name,
    };
    let n = normalise(bare);
    if n.split(' ').count() < STATEMENT_NAME_WORDS {
        return None;
    }
    // (the description's opening only: a note's whole text is long)
    let opening: String = description
        .chars()
        .take(bare.chars().count() * 2 + 32)
        .collect();
    let d = normalise(&opening);
    (d.len() > n.len() && d.starts_with(&n)).then_some(bare)
}

/// Words that say "not" (and "without"), in the languages agents' notes
/// are written in, folded as [`normalise`] folds them.
const NEGATION_WORDS: &[&str] = &[
    "not",
    "no",
    "never",
    "non",
    "cannot",
    "without",
    "nicht",
    "kein",
    "keine",
    "keinen",
    "keiner",
    "nie",
    "niemals",
    "ohne",
    "pas",
    "jamais",
    "sans",
    "ne",
    "nao",
    "nunca",
    "sem",
    "sin",
    "mai",
    "senza",
    "не",
    "нет",
    "ни",
    "никогда",
    "без",
    "bez",
    "niet",
    "geen",
    "nooit",
    "zonder",
    "inte",
    "ej",
    "aldrig",
    "utan",
    "ikke",
    "aldri",
    "uden",
    "uten",
    "degil",
    "yok",
    "khong",
    "chua",
    "tidak",
    "bukan",
    "tanpa",
    "לא",
    "אין",
    "لا",
    "ليس",
    "غير",
    "नहीं",
];

/// What says "not" inside a word of the scripts written without spaces
/// (`不`, `没有`, `ない`, `않`).
const NEGATION_MARKS: &[&str] = &[
    "不",
    "没",
    "沒",
    "未",
    "无",
    "無",
    "别",
    "別",
    "勿",
    "ない",
    "ません",
    "ず",
    "않",
    "못",
    "없",
];

/// Whether a name says "not": `Не работает для`, `Don't use npm`,
/// `不要只写时间`, `Works without a key`.
pub fn denies(name: &str) -> bool {
    let lower = name.to_lowercase();
    if NEGATION_MARKS.iter().any(|m| lower.contains(m)) {
        return true;
    }
    lower
        .split(|c: char| {
            c.is_whitespace()
                || matches!(c, ',' | ';' | ':' | '.' | '(' | ')' | '›' | '—' | '-' | '/')
        })
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .any(negation_word)
}

/// Whether a word says "not" (`not`, `don't`, `nicht`, `não`, `не`).
pub fn negation_word(word: &str) -> bool {
    word.ends_with("n't")
        || word.ends_with("n’t")
        || NEGATION_WORDS.contains(&normalise(word).as_str())
}

/// Whether two statements say the same words but for their endings
/// (`Sempre enviar link clicável nas respostas` / `… links clicáveis …`):
/// as many words, each pair the same, or both of 4+ letters sharing all
/// but their last three (a plural, a gender, a tense). A word with a digit
/// must be the same (`v1.2.3` / `v1.2.4`), and so must a short one.
pub fn inflected_alike(a: &str, b: &str) -> bool {
    let (na, nb) = (normalise(a), normalise(b));
    let (wa, wb): (Vec<&str>, Vec<&str>) = (na.split(' ').collect(), nb.split(' ').collect());
    wa.len() == wb.len()
        && wa.iter().zip(&wb).all(|(x, y)| {
            if x == y {
                return true;
            }
            let (lx, ly) = (x.chars().count(), y.chars().count());
            let common = x.chars().zip(y.chars()).take_while(|(p, q)| p == q).count();
            lx.min(ly) >= 4
                && common >= 4
                && lx.max(ly) - common <= 3
                && !x.chars().chain(y.chars()).any(|c| c.is_ascii_digit())
        })
}

/// Word overlap of two texts: Jaccard over the stems of their words of 3+
/// letters, so "rehearsal" meets "rehearsals".
pub fn overlap(a: &str, b: &str) -> f64 {
    let wa = stems_of(a);
    let wb = stems_of(b);
    if wa.is_empty() || wb.is_empty() {
        return 0.0;
    }
    wa.intersection(&wb).count() as f64 / wa.union(&wb).count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: i64, ty: &str, name: &str, aliases: &[&str]) -> Named {
        Named {
            id,
            ty: ty.into(),
            name: name.into(),
            aliases: aliases.iter().map(|s| s.to_string()).collect(),
            description: String::new(),
        }
    }

    #[test]
    fn a_name_that_says_not() {
        for n in [
            "OpenRouter конфигурация › Не работает для",
            "Don't deploy on Fridays",
            "Never push to main",
            "不要只写时间",
            "Nicht vergessen",
            "Não usar npm",
            "Works without a key",
        ] {
            assert!(denies(n), "{n}");
        }
        for n in [
            "OpenRouter конфигурация › Работает для",
            "Deploy on Fridays",
            "Notion workspace",
            "Nonna's recipes",
        ] {
            assert!(!denies(n), "{n}");
        }
    }

    #[test]
    fn normalises_and_splits() {
        assert_eq!(normalise("Tomás  Ruiz!"), "tomas ruiz");
        assert_eq!(words("JavaScript"), vec!["java", "script"]);
        assert!(overlap("weekly rehearsal", "rehearsals") > 0.4);
    }

    #[test]
    fn an_emoji_is_no_word() {
        let stems = stems_of("Crypto Morning Analysis ✅ ⭐⭐ 🦄");
        for w in ["white", "check", "mark", "star", "unicorn"] {
            assert!(!stems.contains(w), "{w} in {stems:?}");
        }
        assert!(stems.contains("crypto"));
        // letters of every script are still read, and punctuation kept
        assert_eq!(latin("Dvořák №5 O’Brien"), "Dvorak  5 O'Brien");
        assert!(stems_of("Москва").contains("moskva"));
    }

    fn pairs(items: &[Named]) -> Vec<(i64, i64, &'static str)> {
        duplicates(items)
            .iter()
            .map(|x| (items[x.a].id, items[x.b].id, x.rule))
            .collect()
    }

    #[test]
    fn finds_the_planted_kinds_and_not_lookalikes() {
        let items = vec![
            n(1, "Topic", "JS", &[]),
            n(2, "Topic", "JavaScript", &["ECMAScript"]),
            n(3, "Topic", "Postgres", &["postgres db"]),
            n(4, "Topic", "PostgreSQL", &["pg"]),
            n(5, "Person", "Tom Ruiz", &["Tom"]),
            n(6, "Person", "Tomás Ruiz", &[]),
            n(7, "Topic", "Java", &[]),
            n(8, "Topic", "Zig", &[]),
            n(9, "Topic", "Zigbee", &[]),
            n(10, "Person", "Sam Chen", &[]),
            n(11, "Person", "Mira Chen", &[]),
            n(12, "Place", "JS", &[]),
            n(13, "Topic", "JSON Schema", &[]),
            n(14, "Person", "Person 1", &[]),
            n(15, "Person", "Person 10", &[]),
            n(16, "Topic", "Topic 123", &[]),
            n(17, "Topic", "Topic 1234", &[]),
        ];
        let p = pairs(&items);
        let ids: Vec<(i64, i64)> = p.iter().map(|x| (x.0, x.1)).collect();
        assert!(ids.contains(&(1, 2)), "{p:?}");
        assert!(ids.contains(&(3, 4)), "{p:?}");
        assert!(ids.contains(&(5, 6)), "{p:?}");
        assert_eq!(p.len(), 3, "{p:?}");
    }

    /// A statement and the same statement with `and …` added are one; a
    /// conjunct that turns it, a name written as a proper name, or a short
    /// name are not.
    #[test]
    fn a_statement_with_a_conjunct_added() {
        let items = vec![
            n(1, "Preference", "Prefers dark mode in every editor", &[]),
            n(
                2,
                "Preference",
                "Prefers dark mode in every editor and terminal",
                &[],
            ),
            n(3, "Preference", "Drinks tea in the morning", &[]),
            n(
                4,
                "Preference",
                "Drinks tea in the morning and not at night",
                &[],
            ),
            n(5, "Topic", "Research And Development Lab", &[]),
            n(6, "Topic", "Research And Development Lab And Annex", &[]),
            n(7, "Preference", "Likes jazz", &[]),
            n(8, "Preference", "Likes jazz and blues", &[]),
            n(9, "Fact", "The rehearsal is planned for March", &[]),
            n(
                10,
                "Fact",
                "The rehearsal is planned for March or April",
                &[],
            ),
        ];
        let p = pairs(&items);
        assert_eq!(
            p,
            vec![(1, 2, "one statement is the other with a conjunct added")],
            "{p:?}"
        );
    }

    #[test]
    fn names_in_other_forms() {
        let same = [
            ("Organization", "RNCM", "Royal Northern College of Music"),
            ("Person", "Liz Hartmann", "Elizabeth Hartmann"),
            ("Person", "Dr. Farah Siddiqui", "Farah Siddiqui"),
            ("Place", "St Malo", "Saint-Malo"),
            ("Person", "Mstislav Rostropovich", "Mstislav Rostropowitsch"),
            ("Person", "Pyotr Tchaikovsky", "Pjotr Tschaikowsky"),
            ("Place", "Göteborg", "Gothenburg"),
            ("Place", "Hagabadet", "Hagabadet Spa"),
            ("Person", "Hartmann, Elizabeth", "Elizabeth Hartmann"),
            ("Organization", "Volvo", "Volvo AB"),
            ("Topic", "Board games", "Board game"),
            ("Person", "Bob Okafor", "Robert Okafor"),
            ("Person", "Igor Stravinsky", "Igor Strawinsky"),
            ("Person", "Modest Mussorgski", "Modest Mussorgsky"),
            ("Person", "Natalia Gutman", "Natalija Gutmann"),
            ("Person", "Fyodor Dostoevsky", "Fyodor Dostoyevsky"),
            ("Person", "Dmitri Schostakowitsch", "Dmitri Shostakovich"),
            ("Organization", "NYO", "National Youth Orchestra"),
            ("Organization", "BBC SO", "BBC Symphony Orchestra"),
            ("Organization", "Steinway", "Steinway & Sons Inc"),
            ("Person", "K. Bianchi", "Katherine Bianchi"),
            ("Person", "E. Van der Berg", "Edward Van der Berg"),
            ("Place", "Fifth Avenue", "5th Avenue"),
            ("Topic", "Route Sixty-Six", "Route 66"),
            // an acronym with its legal form; a name written all in
            // capitals still has its initialism
            (
                "Organization",
                "IBM Corp.",
                "International Business Machines Corporation",
            ),
            (
                "Organization",
                "IBM CORP.",
                "INTERNATIONAL BUSINESS MACHINES CORPORATION",
            ),
            ("Organization", "ABB B.V.", "ASEA BROWN BOVERI AG"),
        ];
        let mut missed = Vec::new();
        for (ty, a, b) in same {
            let items = vec![n(1, ty, a, &[]), n(2, ty, b, &[])];
            if pairs(&items).len() != 1 {
                missed.push(format!("{a} / {b}"));
            }
        }
        assert!(missed.is_empty(), "{missed:?}");
        let different = [
            ("Person", "Erik Lund", "Erik Lundgren"),
            ("Person", "Anna Berg", "Anna Borg"),
            ("Person", "Jan Novak", "Jana Novak"),
            ("Person", "Maria Lopez", "Mario Lopez"),
            ("Place", "Lund", "Lunde"),
            ("Topic", "Topic 12", "Topic 120"),
            ("Person", "Anna Müller", "Anna Miller"),
            ("Place", "Fifth Avenue", "Sixth Avenue"),
            // "D SM": two words, so no acronym (a misspelt DSM)
            ("Organization", "D SM N. V.", "ST Microelectronics N.V."),
        ];
        // no rule takes them for one; names a letter or a sound apart are
        // left for the matcher to weigh (low), never matched by a rule
        for (ty, a, b) in different {
            let items = vec![n(1, ty, a, &[]), n(2, ty, b, &[])];
            assert!(
                pairs(&items)
                    .iter()
                    .all(|(_, _, r)| matches!(matching::level_of(r), "phonetic" | "similar")),
                "{a} / {b}: {:?}",
                pairs(&items)
            );
        }
        // a single given name: a candidate only when one person matches
        let items = vec![
            n(1, "Person", "Liz", &[]),
            n(2, "Person", "Elizabeth Hartmann", &[]),
            n(3, "Person", "Erik Lund", &[]),
        ];
        assert_eq!(pairs(&items).len(), 1, "{:?}", pairs(&items));
        let items = vec![
            n(1, "Person", "Liz", &[]),
            n(2, "Person", "Elizabeth Hartmann", &[]),
            n(3, "Person", "Elizabeth Moreau", &[]),
        ];
        assert!(pairs(&items).is_empty(), "{:?}", pairs(&items));
    }
}
