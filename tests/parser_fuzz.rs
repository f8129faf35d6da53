//! Random and mutated commands never panic the parser, and every rejection
//! is a KIP syntax error that names its line and column.

use proptest::prelude::*;
use somnus::kip::{ErrorCode, parse_unbound};

fn corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        #[derive(serde::Deserialize)]
        struct Case {
            command: String,
        }
        let cases: Vec<Case> =
            serde_json::from_str(include_str!("data/parser_verdicts.json")).expect("corpus");
        cases.into_iter().map(|c| c.command).collect()
    })
}

/// Corpus command `idx` with `delete` characters at `cut` replaced by `insert`.
fn mutate(idx: usize, cut: usize, insert: &str, delete: usize) -> String {
    let cmds = corpus();
    let chars: Vec<char> = cmds[idx % cmds.len()].chars().collect();
    let at = cut.min(chars.len());
    let end = (at + delete).min(chars.len());
    chars[..at]
        .iter()
        .copied()
        .chain(insert.chars())
        .chain(chars[end..].iter().copied())
        .collect()
}

fn check(text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = parse_unbound(text) {
        prop_assert!(
            matches!(
                e.code,
                ErrorCode::InvalidSyntax | ErrorCode::InvalidIdentifier
            ),
            "unexpected code {:?} for {text:?}",
            e.code
        );
        prop_assert!(
            e.line.is_some() && e.column.is_some(),
            "no position for {text:?}: {}",
            e.message
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        check(&s)?;
    }

    #[test]
    fn kip_shaped_noise_never_panics(s in "(FIND|WHERE|UPSERT|CONCEPT|\\{|\\}|\\(|\\)|\\?x|\"a\"|:p|,|FILTER|==|&&|!|[0-9]+| |\n|//c\n|\\.name|UNION|NOT|OPTIONAL|\\{0,3\\}|LIMIT|CURSOR){0,40}") {
        check(&s)?;
    }

    #[test]
    fn mutated_corpus_commands_never_panic(idx in 0usize..855, cut in 0usize..400, insert in "\\PC{0,4}", delete in 0usize..6) {
        let mutated = mutate(idx, cut, &insert, delete);
        check(&mutated)?;
    }
}

/// Whatever the hand-written reader accepts, the pest grammar accepts with
/// the same tree; what it defers, the grammar decides.
fn agree(
    text: &str,
    params: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), TestCaseError> {
    use somnus::kip::{fast, parser::parse_with_grammar};
    if let Some(f) = fast::parse(text, params) {
        match parse_with_grammar(text, params) {
            Ok(g) => prop_assert_eq!(f, g, "trees differ for {:?}", text),
            Err(e) => prop_assert!(
                false,
                "fast reader accepts what the grammar refuses ({}): {:?}",
                e.message,
                text
            ),
        }
    }
    Ok(())
}

fn params() -> serde_json::Map<String, serde_json::Value> {
    match serde_json::json!({
        "p": "a", "n": 3, "z": 0, "f": 0.5, "neg": -1, "big": 1e300, "o": {"k": 1}, "a": [1, "x"],
        "t": true, "nul": null, "s": "", "mode": "keyword", "re": "(", "name": "Alice", "type": "Person"
    }) {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, .. ProptestConfig::default() })]

    #[test]
    fn fast_reader_agrees_on_mutated_corpus(idx in 0usize..855, cut in 0usize..400, insert in "(\\PC|[ {}()\\[\\],:?.!\"\\\\/\n]){0,4}", delete in 0usize..6) {
        let mutated = mutate(idx, cut, &insert, delete);
        agree(&mutated, &serde_json::Map::new())?;
        agree(&mutated, &params())?;
    }

    #[test]
    fn fast_reader_agrees_on_kip_shaped_noise(s in "(FIND|WHERE|UPSERT|CONCEPT|PROPOSITION|SET|ATTRIBUTES|PROPOSITIONS|WITH|METADATA|\\{|\\}|\\(|\\)|\\[|\\]|\\?x|\\?y|\"a\"|\"b\"\\{1,2\\}|:p|:n|:o|:a|,|FILTER|==|<|&&|\\|\\||!|IN|IS_NULL|REGEX|[0-9]+|-1\\.5e3| |\n|//c\n|\\.name|UNION|NOT|OPTIONAL|LIMIT|CURSOR|type|name|id|:|true|null|ADD|CLAMP|UPDATE|DELETE|DETACH|SEARCH|THRESHOLD|DESCRIBE|TYPES){0,40}") {
        agree(&s, &serde_json::Map::new())?;
        agree(&s, &params())?;
    }
}
