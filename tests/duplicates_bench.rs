//! `somnus bench --duplicates`: labelled names in, the cycle's merges and
//! questions scored against the labels.

use std::io::Write;

fn file(name: &str, lines: &[&str]) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("somnus-dups-{name}-{}.jsonl", std::process::id()));
    let mut f = std::fs::File::create(&p).expect("create");
    for l in lines {
        writeln!(f, "{l}").expect("write");
    }
    p
}

#[test]
fn labelled_names_are_scored_against_what_the_cycle_proposes() {
    let p = file(
        "scored",
        &[
            r#"{"type": "Organization", "name": "ACME B.V.", "entity": 1}"#,
            r#"{"type": "Organization", "name": "ACME BV", "entity": 1}"#,
            r#"{"type": "Organization", "name": "Acme B.V.", "entity": 1}"#,
            r#"{"type": "Organization", "name": "Globex N.V.", "entity": 2}"#,
            r#"{"type": "Organization", "name": "Initech", "entity": "3"}"#,
            "",
        ],
    );
    let labels = somnus::bench::duplicates::read(&p).expect("read");
    assert_eq!(labels.len(), 5);
    let s = somnus::bench::duplicates::measure(&labels).expect("measure");
    assert_eq!((s.names, s.entities_with_variants, s.needed), (5, 1, 2));
    assert_eq!(s.with_questions.2, 0, "nothing wrong: {:?}", s.wrong);
    assert_eq!(s.with_questions.3, 2, "both joins made: {s:?}");
    assert_eq!(s.split, 0);
    let t = somnus::bench::duplicates::table("t", &s);
    assert!(
        t.contains("2 joins needed") && t.contains("(100.0%)"),
        "{t}"
    );
    let _ = std::fs::remove_file(&p);
}

#[test]
fn a_bad_line_is_named() {
    let p = file(
        "bad",
        &[
            r#"{"type": "Organization", "name": "ACME", "entity": 1}"#,
            r#"{"type": "Organization", "entity": 1}"#,
        ],
    );
    let e = somnus::bench::duplicates::read(&p).expect_err("refused");
    assert!(e.ends_with(":2: no \"name\""), "{e}");
    let p2 = file("empty", &[""]);
    assert!(somnus::bench::duplicates::read(&p2).is_err());
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::remove_file(&p2);
}
