//! The accept/reject verdict of our parser against the reference parser
//! (anda_kip 0.11.0) on its 800-command corpus and 55 edge-case probes.

use somnus::kip::parse_unbound;

#[derive(serde::Deserialize)]
struct Case {
    command: String,
    ok: bool,
}

/// Commands where we deliberately differ from the reference parser, each
/// with the part of the specification that makes our verdict right.
const DISAGREEMENTS: &[(&str, &str)] = &[];

#[test]
fn parser_agrees_with_reference_on_corpus() {
    let text = include_str!("data/parser_verdicts.json");
    let cases: Vec<Case> = serde_json::from_str(text).expect("corpus");
    let mut disagree = Vec::new();
    for c in &cases {
        let ours = parse_unbound(&c.command);
        if ours.is_ok() != c.ok {
            disagree.push((c.command.clone(), c.ok, ours.err().map(|e| e.message)));
        }
    }
    let unexplained: Vec<_> = disagree
        .iter()
        .filter(|(cmd, _, _)| !DISAGREEMENTS.iter().any(|(d, _)| d == cmd))
        .collect();
    for (cmd, reference_ok, err) in &unexplained {
        eprintln!("--- reference ok={reference_ok} ours err={err:?}\n{cmd}");
    }
    let agreement = 1.0 - disagree.len() as f64 / cases.len() as f64;
    eprintln!(
        "agreement {:.2}% ({} of {})",
        agreement * 100.0,
        cases.len() - disagree.len(),
        cases.len()
    );
    assert!(
        unexplained.is_empty(),
        "{} unexplained disagreements",
        unexplained.len()
    );
    assert!(agreement >= 0.99);
}

/// The hand-written reader and the pest grammar give the same tree for every
/// corpus command the grammar accepts, and the reader accepts nothing the
/// grammar refuses.
#[test]
fn the_fast_reader_and_the_grammar_agree_on_the_corpus() {
    use serde_json::Map;
    use somnus::kip::{fast, parser::parse_with_grammar};
    let text = include_str!("data/parser_verdicts.json");
    let cases: Vec<Case> = serde_json::from_str(text).expect("corpus");
    let none = Map::new();
    let mut deferred = Vec::new();
    let mut accepted = 0;
    for c in &cases {
        let grammar = parse_with_grammar(&c.command, &none);
        match (fast::parse(&c.command, &none), grammar) {
            (Some(f), Ok(g)) => {
                assert_eq!(f, g, "trees differ for {}", c.command);
                accepted += 1;
            }
            (Some(f), Err(e)) => panic!(
                "the fast reader accepts what the grammar refuses ({}): {}\n{f:?}",
                e.message, c.command
            ),
            (None, Ok(_)) => deferred.push(c.command.clone()),
            (None, Err(_)) => {}
        }
    }
    for d in &deferred {
        eprintln!("--- deferred to the grammar:\n{d}");
    }
    assert!(accepted > 500, "only {accepted} read directly");
    assert!(deferred.is_empty(), "{} commands deferred", deferred.len());
}

/// Every command of the conformance fixtures, every bootstrap capsule (long,
/// commented, multi-line) and commands with every kind of parameter: the
/// fast reader reads each one itself and gives the grammar's tree.
#[test]
fn the_fast_reader_reads_fixtures_capsules_and_parameters_as_the_grammar_does() {
    use serde_json::{Map, Value, json};
    use somnus::kip::{fast, parser::parse_with_grammar};
    let mut texts: Vec<(String, Map<String, Value>)> = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(dir.join("tests/data/conformance"))
        .expect("fixtures")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for f in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).expect("fixture"))
            .expect("fixture json");
        for s in v["setup"].as_array().into_iter().flatten() {
            texts.push((s.as_str().unwrap_or_default().to_string(), Map::new()));
        }
        for c in v["cases"].as_array().into_iter().flatten() {
            if let Some(t) = c["command"].as_str() {
                texts.push((t.to_string(), Map::new()));
            }
        }
    }
    let mut capsules = 0;
    for e in std::fs::read_dir(dir.join("assets/capsules"))
        .expect("capsules")
        .flatten()
    {
        texts.push((
            std::fs::read_to_string(e.path()).expect("capsule"),
            Map::new(),
        ));
        capsules += 1;
    }
    let params = json!({
        "name": "Aspirin", "type": "Drug", "n": 2, "t": 0.25, "c": "Yzo=",
        "attrs": {"risk": 2, "tags": ["a", "b"], "nested": {"k": null}},
        "meta": {"source": "unit", "confidence": 0.9},
        "list": ["Aspirin", 3, true, null], "pred": "treats", "mode": "hybrid", "v": 1,
        "delta": -0.5, "none": null
    });
    let params = params.as_object().cloned().unwrap_or_default();
    for t in [
        r#"FIND(?d) WHERE { ?d {type: :type, name: :name} } LIMIT :n"#,
        r#"FIND(?d.name) WHERE { ?d {type: :type} FILTER(IN(?d.name, :list) && ?d.attributes.risk >= :n) } ORDER BY ?d.name DESC LIMIT :n CURSOR :c"#,
        r#"FIND(?s) WHERE { ?l (?s, :pred, {type: :type, name: :name}) FILTER(?l.metadata.confidence > :t || IS_NULL(?l.metadata.x)) }"#,
        r#"UPSERT { CONCEPT ?d { {type: :type, name: :name} EXPECT VERSION :v SET ATTRIBUTES :attrs SET PROPOSITIONS { (:pred, {type: "Symptom", name: "Pain"}) WITH METADATA :meta } } WITH METADATA :meta }"#,
        r#"UPSERT { PROPOSITION ?p { ({type: :type, name: :name}, :pred, {type: "Symptom", name: "Pain"}) SET ATTRIBUTES :attrs } WITH METADATA :meta }"#,
        r#"UPDATE ?d SET ATTRIBUTES { risk: ADD(?d.attributes.risk, :n), w: CLAMP(MUL(?d.attributes.w, :t), 0, 1), z: COALESCE(?d.attributes.z, :none) } SET METADATA { confidence: ADD(?d.metadata.confidence, :delta) } WHERE { ?d {type: :type} } LIMIT :n"#,
        r#"SEARCH CONCEPT :name WITH TYPE :type MODE :mode THRESHOLD :t LIMIT :n"#,
        r#"DESCRIBE CONCEPT TYPE :type"#,
        r#"DESCRIBE PROPOSITION TYPES LIMIT :n CURSOR :c"#,
        r#"EXPORT ?d WHERE { ?d {type: :type} } LIMIT :n"#,
        r#"DELETE PROPOSITIONS ?l WHERE { ?l ({type: :type, name: :name}, :pred, ?o) }"#,
        r#"FIND(?o) WHERE { ({type: :type, name: :name}, :pred{1,3}, ?o) (?o, "treats" | :pred, ?x) }"#,
        r#"DELETE ATTRIBUTES {:name, "risk"} FROM ?d WHERE { ?d {type: :type} }"#,
    ] {
        texts.push((t.to_string(), params.clone()));
    }
    assert!(texts.len() > 400 && capsules > 10, "{} texts", texts.len());
    let with_params = texts.len() - 13;
    for (i, (t, p)) in texts.iter().enumerate() {
        let g = parse_with_grammar(t, p);
        assert!(
            i < with_params || g.is_ok(),
            "a parameter example does not parse: {t}: {g:?}"
        );
        match (fast::parse(t, p), g) {
            (Some(f), Ok(g)) => assert_eq!(f, g, "trees differ for {t}"),
            (Some(_), Err(e)) => panic!(
                "fast reader accepts what the grammar refuses ({}): {t}",
                e.message
            ),
            (None, Ok(_)) => panic!("the fast reader defers a command the grammar reads: {t}"),
            (None, Err(_)) => {}
        }
    }
}
