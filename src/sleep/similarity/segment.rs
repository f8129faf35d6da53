//! Words of text written without spaces. Chinese (and the kanji of
//! Japanese) is segmented by jieba's dictionary and model, and each word
//! weighed by how rare it is in general text (jieba's IDF table), so a
//! theme is a word that says what an item is about ("心跳", "Polymarket"),
//! not one every note uses ("工作", "测试", "风险").

use crate::analysis::jieba;
use jieba_rs::{KeywordExtract, TfIdf};
use std::sync::OnceLock;

/// A word at least this rare in general text (jieba's IDF; common words
/// such as 工作 4.2, 风险 4.9, 测试 7.1, 验证 7.8; specific ones such as 心跳 8.3,
/// 关键词 8.9; words the table lacks count as its median, about 11) can
/// name a theme.
pub const MIN_THEME_IDF: f64 = 8.0;

/// A word at least this rare in general text counts when two texts are
/// compared (their overlap): 的, 我们, 进行, 时间 do not (below 5), 部署,
/// 服务器, 缓存 do.
pub const MIN_TOPIC_IDF: f64 = 6.0;

/// How many of an item's words, best first, can be its themes.
pub const KEYWORDS_PER_ITEM: usize = 8;

/// The parts of speech a theme can be, in jieba's tag set: nouns (common,
/// person, place, organisation, other proper, transliterated), Latin
/// words (`eng`), and verbs and verbal nouns, since its dictionary tags
/// words out of context ("心跳", heartbeat, is a verb there); rarity
/// ([`MIN_THEME_IDF`]) then keeps the common ones out.
const THEME_TAGS: [&str; 9] = ["n", "nr", "ns", "nt", "nz", "nrt", "eng", "v", "vn"];

fn tfidf() -> &'static TfIdf {
    static T: OnceLock<TfIdf> = OnceLock::new();
    T.get_or_init(TfIdf::default)
}

pub use crate::analysis::is_cjk;

/// Whether a text holds any CJK script.
pub fn has_cjk(text: &str) -> bool {
    text.chars().any(is_cjk)
}

/// How rare a word is in general text (jieba's IDF; its median for a word
/// the table lacks).
pub fn rarity(word: &str) -> f64 {
    // a text of one word weighs that word by its IDF alone
    tfidf()
        .extract_keywords(jieba(), word, 1, Vec::new())
        .first()
        .map(|k| k.weight)
        .unwrap_or(0.0)
}

/// The CJK words of a text that can name its theme: words of two or more
/// characters ([`THEME_TAGS`]), the text's best by TF-IDF, each rare enough in general text
/// ([`MIN_THEME_IDF`]). Latin words in the text are left to the caller.
pub fn cjk_theme_words(text: &str) -> Vec<String> {
    if !has_cjk(text) {
        return Vec::new();
    }
    let tags = THEME_TAGS.iter().map(|t| t.to_string()).collect();
    tfidf()
        .extract_keywords(jieba(), text, KEYWORDS_PER_ITEM, tags)
        .into_iter()
        .map(|k| k.keyword)
        .filter(|w| has_cjk(w) && w.chars().count() >= 2 && rarity(w) >= MIN_THEME_IDF)
        .collect()
}

/// A text's words, CJK runs segmented: "心跳检查 ok" → ["心跳", "检查", "ok"].
pub fn words(text: &str) -> Vec<String> {
    if !has_cjk(text) {
        return super::words(text);
    }
    jieba()
        .cut(text, true)
        .into_iter()
        .map(|t| t.word)
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .flat_map(|w| {
            if has_cjk(w) {
                vec![w.to_string()]
            } else {
                super::words(w)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_is_segmented_and_common_words_are_no_theme() {
        assert_eq!(words("心跳检查 ok"), vec!["心跳", "检查", "ok"]);
        assert!(rarity("工作") < MIN_THEME_IDF);
        assert!(rarity("测试") < MIN_THEME_IDF);
        assert!(rarity("心跳") >= MIN_THEME_IDF);
        let t = cjk_theme_words("今天的心跳检查发现服务器心跳超时，工作正常进行。");
        assert!(t.contains(&"心跳".to_string()), "{t:?}");
        assert!(!t.contains(&"工作".to_string()), "{t:?}");
        assert!(cjk_theme_words("no chinese here").is_empty());
        assert!(rarity("时间") < MIN_TOPIC_IDF);
        assert!(rarity("服务器") >= MIN_TOPIC_IDF);
    }
}

#[cfg(test)]
mod huge {
    use super::*;

    /// A text of a million characters (one run with no punctuation, and
    /// one of mixed scripts) is segmented without running away: each word
    /// is a piece of the text, and themes stay within their bound.
    #[test]
    fn a_huge_text_is_segmented_and_bounded() {
        let run: String = "心跳检查服务器缓存部署"
            .chars()
            .cycle()
            .take(1_000_000)
            .collect();
        let w = words(&run);
        assert!(!w.is_empty() && w.iter().all(|x| run.contains(x.as_str())));
        let themes = cjk_theme_words(&run);
        assert!(themes.len() <= KEYWORDS_PER_ITEM, "{themes:?}");
        let mixed: String = "abc 心跳 déjà 한국어 ok。".repeat(40_000);
        let w = words(&mixed);
        assert!(w.len() >= 40_000, "{}", w.len());
    }
}
