//! Random and mutated commands never panic the parser, and every rejection
//! is a KIP syntax error that names its line and column.

use proptest::prelude::*;
use somnus::kip::{ErrorCode, parse_unbound};

fn corpus() -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Case {
        command: String,
    }
    let cases: Vec<Case> =
        serde_json::from_str(include_str!("data/parser_verdicts.json")).expect("corpus");
    cases.into_iter().map(|c| c.command).collect()
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
        let cmds = corpus();
        let cmd = &cmds[idx % cmds.len()];
        let chars: Vec<char> = cmd.chars().collect();
        let at = cut.min(chars.len());
        let end = (at + delete).min(chars.len());
        let mutated: String = chars[..at].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[end..].iter()).collect();
        check(&mutated)?;
    }
}
