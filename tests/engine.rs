//! The engine as an agent meets it: KIP text and JSON requests in, JSON out.

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::protocol::{Arguments, CommandItem, Method, Request};

fn nexus() -> Nexus {
    let mut nx = Nexus::open_in_memory().expect("open");
    for c in [
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Drug"} } CONCEPT ?s { {type: "$ConceptType", name: "Symptom"} } CONCEPT ?p { {type: "$PropositionType", name: "treats"} } }"#,
        r#"UPSERT { CONCEPT ?h { {type: "Symptom", name: "Headache"} } CONCEPT ?f { {type: "Symptom", name: "Fever"} }
           CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 2 } SET PROPOSITIONS { ("treats", ?h) ("treats", ?f) } }
           CONCEPT ?i { {type: "Drug", name: "Ibuprofen"} SET ATTRIBUTES { risk_level: 3 } SET PROPOSITIONS { ("treats", ?h) } } }
           WITH METADATA { source: "test", confidence: 0.9 }"#,
    ] {
        let r = run(&mut nx, c);
        assert!(r.get("error").is_none(), "{r}");
    }
    nx
}

fn run(nx: &mut Nexus, cmd: &str) -> Value {
    nx.execute(&Request::command(cmd)).to_json()
}

fn count_drugs(nx: &mut Nexus) -> Value {
    run(nx, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#)["result"].clone()
}

#[test]
fn find_returns_columns_and_rows() {
    let mut nx = nexus();
    let r = run(
        &mut nx,
        r#"FIND(?d.name, ?s.name) WHERE { (?d, "treats", ?s) } ORDER BY ?d.name ASC, ?s.name ASC"#,
    );
    assert_eq!(
        r["result"],
        json!([
            ["Aspirin", "Aspirin", "Ibuprofen"],
            ["Fever", "Headache", "Headache"]
        ])
    );
    let r = run(
        &mut nx,
        r#"FIND(?d.name, ?d.attributes.risk_level) WHERE { ?d {type: "Drug"} } ORDER BY ?d.attributes.risk_level DESC"#,
    );
    assert_eq!(r["result"], json!([["Ibuprofen", 3], ["Aspirin", 2]]));
}

#[test]
fn syntax_errors_name_line_column_and_code() {
    let mut nx = nexus();
    let r = run(&mut nx, "FIND(?d.name)\nWHERE {\n  ?d {type: \"Drug\"\n}");
    assert_eq!(r["error"]["code"], "KIP_1001");
    assert_eq!(r["error"]["line"], 4);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("line 4"),
        "{r}"
    );
    let r = run(&mut nx, "FIND(?1x) WHERE { ?1x {type: \"Drug\"} }");
    assert_eq!(r["error"]["code"], "KIP_1002");
}

#[test]
fn a_failed_upsert_writes_nothing() {
    let mut nx = nexus();
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?n { {type: "Drug", name: "Naproxen"} } CONCEPT ?x { {type: "Drug", name: "X"} SET PROPOSITIONS { ("no_such_predicate", ?n) } } }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_2001");
    assert_eq!(count_drugs(&mut nx), json!(2));
}

#[test]
fn parameters_are_values_never_text() {
    let mut nx = nexus();
    let evil = "Aspirin\"} } DELETE CONCEPT ?d DETACH WHERE { ?d {type: \"Drug";
    let req = Request::command(r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: :n} }"#)
        .with_params(
            json!({ "n": evil })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
    let r = nx.execute(&req).to_json();
    assert_eq!(r["error"]["code"], "KIP_3002", "{r}");
    let req = Request::command(r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } LIMIT :limit"#)
        .with_params(
            json!({ "limit": 1 })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
    let r = nx.execute(&req).to_json();
    assert_eq!(r["result"].as_array().map(Vec::len), Some(1));
    assert!(r["next_cursor"].is_string());
    let r = run(&mut nx, r#"FIND(?d.name) WHERE { ?d {type: :t} }"#);
    assert_eq!(r["error"]["code"], "KIP_1001");
    assert_eq!(count_drugs(&mut nx), json!(2));
}

#[test]
fn readonly_refuses_writes() {
    let mut nx = nexus();
    let r = nx
        .execute(&Request::readonly(
            r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} } }"#,
        ))
        .to_json();
    assert!(r["error"]["code"].is_string());
    assert_eq!(count_drugs(&mut nx), json!(2));
    let r = nx
        .execute(&Request::readonly(
            r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
        ))
        .to_json();
    assert_eq!(r["result"], json!(["Aspirin"]));
    // the connection is writable again for execute_kip
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} } }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
}

#[test]
fn dry_run_validates_without_writing() {
    let mut nx = nexus();
    let req = Request::new(
        Method::ExecuteKip,
        Arguments {
            command: Some(r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} } }"#.into()),
            dry_run: true,
            ..Default::default()
        },
    );
    let r = nx.execute(&req).to_json();
    assert_eq!(
        r["result"],
        json!({ "blocks": 1, "upsert_concept_nodes": [], "upsert_proposition_links": [] })
    );
    assert_eq!(count_drugs(&mut nx), json!(2));
}

#[test]
fn batch_stops_on_the_first_kml_error_only() {
    let mut nx = nexus();
    let req = Request::new(
        Method::ExecuteKip,
        Arguments {
            commands: Some(vec![
                CommandItem::Text("FIND(?x WHERE".into()),
                CommandItem::Text(r#"FIND(?d) WHERE { ?d {type: "Nope", name: "x"} }"#.into()),
                CommandItem::WithParams {
                    command: r#"UPSERT { CONCEPT ?d { {type: "Drug", name: :n} } }"#.into(),
                    parameters: json!({ "n": "Naproxen" })
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                },
                CommandItem::Text(
                    r#"UPSERT { CONCEPT ?d { {type: "Undefined", name: "x"} } }"#.into(),
                ),
                CommandItem::Text(
                    r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Never"} } }"#.into(),
                ),
            ]),
            ..Default::default()
        },
    );
    let r = nx.execute(&req).to_json();
    let results = r["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 4, "{r}");
    assert_eq!(results[0]["error"]["code"], "KIP_1001");
    assert_eq!(results[1]["error"]["code"], "KIP_3002");
    assert_eq!(results[2]["result"]["blocks"], 1);
    assert_eq!(results[3]["error"]["code"], "KIP_2001");
    assert_eq!(count_drugs(&mut nx), json!(3));
}

#[test]
fn command_and_commands_are_exclusive() {
    let mut nx = nexus();
    let v = json!({ "method": "execute_kip", "params": { "command": "DESCRIBE PRIMER", "commands": ["DESCRIBE PRIMER"] } });
    let req = Request::from_json(&v).expect("envelope");
    assert_eq!(nx.execute(&req).to_json()["error"]["code"], "KIP_1001");
    let v = json!({ "function": { "name": "execute_kip_readonly", "arguments": { "command": "DESCRIBE CONCEPT TYPES LIMIT 2" } } });
    let req = Request::from_json(&v).expect("envelope");
    let r = nx.execute(&req).to_json();
    assert_eq!(r["result"].as_array().map(Vec::len), Some(2));
    assert!(r["next_cursor"].is_string());
}

#[test]
fn cursor_pages_cover_everything_once() {
    let mut nx = nexus();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let cmd = match &cursor {
            Some(c) => format!(
                r#"FIND(?t.name) WHERE {{ ?t {{type: "$ConceptType"}} }} ORDER BY ?t.name LIMIT 4 CURSOR "{c}""#
            ),
            None => r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} } ORDER BY ?t.name LIMIT 4"#
                .to_string(),
        };
        let r = run(&mut nx, &cmd);
        for v in r["result"].as_array().cloned().unwrap_or_default() {
            seen.push(v.as_str().unwrap_or("").to_string());
        }
        match r["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let all = run(
        &mut nx,
        r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} } ORDER BY ?t.name"#,
    );
    let all: Vec<String> = all["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(seen, all);
    assert!(all.len() > 10);
}

#[test]
fn memory_persists_and_ids_are_never_reused() {
    let dir = std::env::temp_dir().join(format!("somnus-test-{}", std::process::id()));
    let path = dir.join("m.db");
    let _ = std::fs::remove_dir_all(&dir);
    let first_id;
    {
        let mut nx = Nexus::open(&path).expect("open");
        run(
            &mut nx,
            r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"#,
        );
        let r = run(
            &mut nx,
            r#"UPSERT { CONCEPT ?n { {type: "Note", name: "a"} } }"#,
        );
        first_id = r["result"]["upsert_concept_nodes"][0]
            .as_str()
            .unwrap_or("")
            .to_string();
        run(
            &mut nx,
            r#"DELETE CONCEPT ?n DETACH WHERE { ?n {type: "Note", name: "a"} }"#,
        );
    }
    let mut nx = Nexus::open(&path).expect("reopen");
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?n { {type: "Note", name: "b"} } }"#,
    );
    let second = r["result"]["upsert_concept_nodes"][0]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert_ne!(first_id, second);
    let num = |s: &str| s.trim_start_matches("C:").parse::<i64>().unwrap_or(0);
    assert!(num(&second) > num(&first_id));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn protected_definitions_and_reserved_keys() {
    let mut nx = nexus();
    let r = run(
        &mut nx,
        r#"DELETE CONCEPT ?x DETACH WHERE { ?x {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_3004");
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?s { {type: "Person", name: "$self"} SET ATTRIBUTES { core_directives: [] } } }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_3004");
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?s { {type: "Person", name: "$self"} SET ATTRIBUTES { persona: "curious" } } }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} } WITH METADATA { _score: 1 } }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_2002");
}

/// An UPDATE of literal values over many targets (one statement per
/// table) leaves every element as the one-by-one path does, and refuses
/// protected targets the same way.
#[test]
fn literal_update_over_many_targets_matches_the_one_by_one_path() {
    let mut a = nexus();
    let mut b = nexus();
    // literals: the set-based path
    let r = run(
        &mut a,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 5, label: "x", tags: ["a", {"b": 1.5}] } SET METADATA { reviewed: true } WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!(r["result"], json!({"updated": 2, "matched": 2}), "{r}");
    // the same values through expressions: the one-by-one path
    let r = run(
        &mut b,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: ADD(0, 5), label: "x", tags: ["a", {"b": 1.5}] } SET METADATA { reviewed: true } WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!(r["result"], json!({"updated": 2, "matched": 2}), "{r}");
    let q = r#"FIND(?d.name, ?d.attributes, ?d.metadata.reviewed, ?d.metadata._version) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name"#;
    assert_eq!(run(&mut a, q)["result"], run(&mut b, q)["result"]);
    assert_eq!(
        run(&mut a, q)["result"][0][1],
        json!({"risk_level": 5, "label": "x", "tags": ["a", {"b": 1.5}]})
    );
    // links too
    let r = run(
        &mut a,
        r#"UPDATE ?l SET METADATA { checked: "yes" } WHERE { ?l (?d, "treats", ?s) }"#,
    );
    assert_eq!(r["result"], json!({"updated": 3, "matched": 3}), "{r}");
    // protected definitions are refused, and nothing changes
    let before = run(&mut a, "EXPORT");
    let r = run(
        &mut a,
        r#"UPDATE ?t SET ATTRIBUTES { note: "x" } WHERE { ?t {type: "$ConceptType"} }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_3004", "{r}");
    assert_eq!(run(&mut a, "EXPORT"), before);
}

/// Brackets nested past the limit are a syntax error naming where, not a
/// stack overflow, wherever they are; strings and comments do not count.
#[test]
fn deep_nesting_is_a_syntax_error_not_a_crash() {
    let mut nx = nexus();
    let deep = format!(
        "FIND(?d) WHERE {{ ?d {{type: \"Drug\"}} FILTER({}1 == 1{}) }}",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    let r = run(&mut nx, &deep);
    assert_eq!(r["error"]["code"], "KIP_1001", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nest deeper"))
    );
    assert_eq!(r["error"]["line"], 1);
    let r = run(
        &mut nx,
        &format!(
            "// {}\nFIND(?d.name) WHERE {{ ?d {{type: \"Drug\", name: \"{}\"}} }}",
            "(".repeat(500),
            "[".repeat(500)
        ),
    );
    // parsed: the name simply does not exist
    assert_eq!(r["error"]["code"], "KIP_3002", "{r}");
}

/// The names a query finds, sorted.
fn names(nx: &mut Nexus, cmd: &str) -> Vec<String> {
    let r = run(nx, cmd);
    assert!(r.get("error").is_none(), "{cmd}: {r}");
    let mut v: Vec<String> = r["result"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|x| x.as_str().unwrap_or_default().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn every_compilation_of_a_multi_hop_walk_finds_the_same_nodes() {
    // a graph with a cycle, a branch and a dead end:
    // A -> B -> C -> A, B -> D -> E
    let mut nx = Nexus::open_in_memory().expect("open");
    let r = run(
        &mut nx,
        r#"UPSERT {
             CONCEPT ?t { {type: "$ConceptType", name: "Node"} }
             CONCEPT ?p { {type: "$PropositionType", name: "next"} }
             CONCEPT ?a { {type: "Node", name: "A"} }
             CONCEPT ?b { {type: "Node", name: "B"} }
             CONCEPT ?c { {type: "Node", name: "C"} }
             CONCEPT ?d { {type: "Node", name: "D"} }
             CONCEPT ?e { {type: "Node", name: "E"} }
           }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    for (s, o) in [("A", "B"), ("B", "C"), ("C", "A"), ("B", "D"), ("D", "E")] {
        let r = run(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?x {{ {{type: "Node", name: "{s}"}} SET PROPOSITIONS {{ ("next", {{type: "Node", name: "{o}"}}) }} }} }}"#
            ),
        );
        assert!(r.get("error").is_none(), "{r}");
    }
    for hops in ["{1}", "{2}", "{3}", "{4}", "{5}", "{1,3}", "{2,4}", "{0,2}"] {
        for start in ["A", "B", "E"] {
            // a grounded start: compiled into the statement (a chain of
            // joins for an exact count, a recursive CTE for a range)
            let grounded = names(
                &mut nx,
                &format!(
                    r#"FIND(?x.name) WHERE {{ ({{type: "Node", name: "{start}"}}, "next"{hops}, ?x) }}"#
                ),
            );
            // a start bound by another clause: walked from its bindings
            let bound = names(
                &mut nx,
                &format!(
                    r#"FIND(?x.name) WHERE {{ ?s {{type: "Node", name: "{start}"}} (?s, "next"{hops}, ?x) }}"#
                ),
            );
            assert_eq!(grounded, bound, "forward {start} {hops}");
            let grounded_back = names(
                &mut nx,
                &format!(
                    r#"FIND(?x.name) WHERE {{ (?x, "next"{hops}, {{type: "Node", name: "{start}"}}) }}"#
                ),
            );
            let bound_back = names(
                &mut nx,
                &format!(
                    r#"FIND(?x.name) WHERE {{ ?s {{type: "Node", name: "{start}"}} (?x, "next"{hops}, ?s) }}"#
                ),
            );
            assert_eq!(grounded_back, bound_back, "backward {start} {hops}");
        }
    }
    // spot checks against the drawing
    let from_a = |nx: &mut Nexus, h: &str| {
        names(
            nx,
            &format!(r#"FIND(?x.name) WHERE {{ ({{type: "Node", name: "A"}}, "next"{h}, ?x) }}"#),
        )
    };
    assert_eq!(from_a(&mut nx, "{2}"), ["C", "D"]);
    assert_eq!(from_a(&mut nx, "{3}"), ["A", "E"]);
    assert_eq!(from_a(&mut nx, "{1,3}"), ["A", "B", "C", "D", "E"]);
    assert_eq!(from_a(&mut nx, "{0,1}"), ["A", "B"]);
}

#[test]
fn a_repeated_command_is_read_again_against_the_memory_as_it_is_now() {
    let mut nx = nexus();
    let q = r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name ASC"#;
    assert_eq!(run(&mut nx, q)["result"], json!(["Aspirin", "Ibuprofen"]));
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Codeine"} } }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    // the same text again is answered from the memory as it is now
    assert_eq!(
        run(&mut nx, q)["result"],
        json!(["Aspirin", "Codeine", "Ibuprofen"])
    );
    // the same text with other parameters gives their answer
    let with = |v: Value| {
        Request::command(
            r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name ASC LIMIT :n"#,
        )
        .with_params(json!({ "n": v }).as_object().cloned().unwrap_or_default())
    };
    assert_eq!(
        nx.execute(&with(json!(1))).to_json()["result"],
        json!(["Aspirin"])
    );
    assert_eq!(
        nx.execute(&with(json!(2))).to_json()["result"],
        json!(["Aspirin", "Codeine"])
    );
    // a text that does not parse keeps failing, with its position
    for _ in 0..2 {
        let r = run(&mut nx, "FIND(?d.name) WHERE { ?d {type: \"Drug\"} ");
        assert_eq!(r["error"]["code"], "KIP_1001", "{r}");
    }
}

/// A placeholder stands wherever a string literal may: predicates of a
/// pattern (plain, with a hop range, among alternatives) and the keys of
/// DELETE ATTRIBUTES, as substituting its JSON text would read.
#[test]
fn parameters_stand_for_predicates_and_deleted_keys() {
    let mut nx = nexus();
    let with = |cmd: &str, p: Value| {
        Request::command(cmd).with_params(p.as_object().cloned().unwrap_or_default())
    };
    let r = nx
        .execute(&with(
            r#"FIND(?s.name) WHERE { ({type: "Drug", name: :drug}, :pred, ?s) } ORDER BY ?s.name ASC"#,
            json!({"drug": "Aspirin", "pred": "treats"}),
        ))
        .to_json();
    assert_eq!(r["result"], json!(["Fever", "Headache"]), "{r}");
    let r = nx
        .execute(&with(
            r#"FIND(?s.name) WHERE { ({type: "Drug", name: "Ibuprofen"}, :pred{1}, ?s) }"#,
            json!({"pred": "treats"}),
        ))
        .to_json();
    assert_eq!(r["result"], json!(["Headache"]), "{r}");
    let r = nx
        .execute(&with(
            r#"FIND(COUNT(?s)) WHERE { ({type: "Drug", name: "Aspirin"}, "unknown_predicate" | :pred, ?s) }"#,
            json!({"pred": "treats"}),
        ))
        .to_json();
    assert_eq!(r["result"], json!(2), "{r}");
    let r = nx
        .execute(&with(
            r#"DELETE ATTRIBUTES {:key} FROM ?d WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
            json!({"key": "risk_level"}),
        ))
        .to_json();
    assert!(r.get("error").is_none(), "{r}");
    let r = run(
        &mut nx,
        r#"FIND(?d.attributes.risk_level) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(r["result"], json!([null]), "{r}");
    // a placeholder bound to something other than a string is refused by name
    let r = nx
        .execute(&with(
            r#"FIND(?s) WHERE { (?d, :pred, ?s) }"#,
            json!({"pred": 3}),
        ))
        .to_json();
    assert_eq!(r["error"]["code"], "KIP_1001", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("must be a string"),
        "{r}"
    );
}

fn dry(nx: &mut Nexus, cmd: &str) -> Value {
    nx.execute(&Request::new(
        Method::ExecuteKip,
        Arguments {
            command: Some(cmd.into()),
            dry_run: true,
            ..Default::default()
        },
    ))
    .to_json()
}

fn changes(r: &Value) -> Vec<(String, String)> {
    r["effects"]["elements"]
        .as_array()
        .expect("effects")
        .iter()
        .map(|e| {
            (
                e["change"].as_str().unwrap_or("").to_string(),
                e["what"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_write_reports_what_it_did_and_a_dry_run_what_it_would_do() {
    let mut nx = nexus();
    let upsert = r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk_level: 2 } SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Fever"}) } } }"#;
    // a dry run: the result keeps the specification's shape (empty
    // arrays), and the effects name the concept and the link it would make
    let r = dry(&mut nx, upsert);
    assert_eq!(
        r["result"],
        json!({ "blocks": 1, "upsert_concept_nodes": [], "upsert_proposition_links": [] })
    );
    assert_eq!(r["effects"]["created"], json!(2), "{r}");
    assert_eq!(
        changes(&r),
        vec![
            ("create".into(), "Drug: Naproxen".into()),
            (
                "create".into(),
                "Drug: Naproxen -treats-> Symptom: Fever".into()
            ),
        ]
    );
    assert_eq!(count_drugs(&mut nx), json!(2), "a dry run writes nothing");
    // the real write reports the SET PROPOSITIONS link the result leaves out
    let r = run(&mut nx, upsert);
    assert_eq!(r["result"]["upsert_proposition_links"], json!([]));
    assert_eq!(r["effects"]["created"], json!(2), "{r}");
    assert!(
        r["effects"]["elements"][1]["id"]
            .as_str()
            .is_some_and(|id| id.ends_with(":treats")),
        "{r}"
    );
    // again: nothing changes
    let r = run(&mut nx, upsert);
    assert_eq!(r["effects"]["elements"], json!([]), "{r}");
    assert_eq!(
        r["effects"],
        json!({"created": 0, "updated": 0, "deleted": 0, "elements": []})
    );
    // an update names the fields it changes
    let r = dry(
        &mut nx,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 4 } WHERE { ?d {type: "Drug", name: "Naproxen"} }"#,
    );
    assert_eq!(r["effects"]["updated"], json!(1), "{r}");
    assert_eq!(
        r["effects"]["elements"][0]["fields"],
        json!(["attributes.risk_level"]),
        "{r}"
    );
    // a delete names what goes, links included
    let r = dry(
        &mut nx,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Naproxen"} }"#,
    );
    assert_eq!(r["effects"]["deleted"], json!(2), "{r}");
    let mut ch = changes(&r);
    ch.sort();
    assert_eq!(
        ch,
        vec![
            ("delete".into(), "Drug: Naproxen".into()),
            (
                "delete".into(),
                "Drug: Naproxen -treats-> Symptom: Fever".into()
            ),
        ]
    );
    assert_eq!(count_drugs(&mut nx), json!(3));
    // a read reports no effects
    let r = run(&mut nx, r#"FIND(?d) WHERE { ?d {type: "Drug"} }"#);
    assert!(r.get("effects").is_none(), "{r}");
}

#[test]
fn a_large_write_counts_every_element_and_lists_the_first() {
    let mut nx = nexus();
    let mut cmd = String::from("UPSERT {");
    for i in 0..300 {
        cmd.push_str(&format!(
            r#" CONCEPT ?d{i} {{ {{type: "Drug", name: "D{i}"}} }}"#
        ));
    }
    cmd.push('}');
    let count = |r: &Value| {
        let listed = r["effects"]["elements"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0);
        (
            listed,
            listed + r["effects"]["more"].as_u64().unwrap_or(0) as usize,
        )
    };
    // a dry run names 200, a write 25; both count all 300
    let r = dry(&mut nx, &cmd);
    assert_eq!(r["effects"]["created"], json!(300), "{r}");
    assert_eq!(count(&r), (200, 300));
    let r = run(&mut nx, &cmd);
    assert_eq!(r["effects"]["created"], json!(300));
    assert_eq!(count(&r), (25, 300));
    // a sweep: every update counted once
    let r = run(
        &mut nx,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 1 } WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!(r["effects"]["updated"], json!(302), "{r}");
    assert_eq!(r["effects"]["created"], json!(0));
    assert_eq!(count(&r), (25, 302));
}

#[test]
fn an_unclosed_bracket_is_named_where_its_closer_belongs() {
    let mut nx = nexus();
    let cases: &[(&str, (u64, u64), &str)] = &[
        (
            "FIND(?x",
            (1, 8),
            "missing `)` to close the `(` at line 1, column 5",
        ),
        (
            "FIND(?x WHERE { ?x {type: \"Drug\"} }",
            (1, 8),
            "missing `)`",
        ),
        (
            "FIND(?x) WHERE { ?x {type: \"Drug\"}",
            (1, 35),
            "missing `}` to close the `{` at line 1, column 16",
        ),
        (
            "FIND(?x) WHERE { (?x, \"treats\", ?y }",
            (1, 36),
            "expected `)` to close the `(` at line 1, column 18, found `}`",
        ),
        (
            "FIND(?x) WHERE { ?x {type: \"Drug\"} } }",
            (1, 38),
            "`}` closes nothing",
        ),
        // brackets inside strings and comments do not count
        (
            "FIND(?x) // (\nWHERE { ?x {type: \"Dr(ug\"}",
            (2, 27),
            "missing `}`",
        ),
        // and a name with accents keeps columns in characters
        (
            "FIND(?x) WHERE { ?x {name: \"Tomás\"}",
            (1, 36),
            "missing `}`",
        ),
    ];
    for (text, (line, column), msg) in cases {
        let r = run(&mut nx, text);
        assert_eq!(r["error"]["code"], "KIP_1001", "{text}: {r}");
        assert_eq!(
            (r["error"]["line"].clone(), r["error"]["column"].clone()),
            (json!(line), json!(column)),
            "{text}: {r}"
        );
        assert!(
            r["error"]["message"].as_str().unwrap_or("").contains(msg),
            "{text}: {r}"
        );
    }
}

/// An identity matcher of the main block that names nothing is
/// `KIP_3002` in every shape a query takes: a plain FIND, a page past the
/// end, an aggregate (not a count of 0), a grouped count, a walk, a
/// DELETE's WHERE, beside a UNION that finds something, and before an
/// unbound variable. One that names something answers normally, also
/// with nothing to return.
#[test]
fn a_matcher_naming_nothing_is_kip_3002_in_every_shape() {
    let mut nx = nexus();
    let missing = [
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Nope"} }"#,
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Nope"} } LIMIT 1"#,
        r#"FIND(COUNT(?s)) WHERE { ?d {type: "Drug", name: "Nope"} (?d, "treats", ?s) }"#,
        r#"FIND(?d.name, COUNT(?s)) WHERE { ?d {type: "Drug", name: "Nope"} (?d, "treats", ?s) }"#,
        r#"FIND(?s) WHERE { (?d, "treats", ?s) ?d {type: "Drug", name: "Nope"} }"#,
        r#"FIND(?s) WHERE { ({type: "Drug", name: "Nope"}, "treats", ?s) }"#,
        r#"FIND(?s) WHERE { ?d {type: "Drug", name: "Nope"} (?d, "treats"{1,3}, ?s) }"#,
        r#"FIND(?d) WHERE { ?d {id: "C:999999"} }"#,
        r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Nope"} UNION { ?d {type: "Drug", name: "Aspirin"} } }"#,
        r#"FIND(?x) WHERE { ?d {type: "Drug", name: "Nope"} }"#,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Nope"} }"#,
    ];
    for q in missing {
        let r = run(&mut nx, q);
        assert_eq!(r["error"]["code"], "KIP_3002", "{q}: {r}");
    }
    // named and found, or named and nothing more to give: no error
    let fine = [
        (
            r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
            json!(["Aspirin"]),
        ),
        (
            r#"FIND(?s) WHERE { ?d {type: "Drug", name: "Ibuprofen"} (?s, "treats", ?d) }"#,
            json!([]),
        ),
        (
            r#"FIND(COUNT(?s)) WHERE { ?d {type: "Drug", name: "Ibuprofen"} (?s, "treats", ?d) }"#,
            json!(0),
        ),
        (
            r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Aspirin"} FILTER(?d.attributes.risk_level > 5) }"#,
            json!([]),
        ),
    ];
    for (q, want) in fine {
        let r = run(&mut nx, q);
        assert_eq!(r["result"], want, "{q}: {r}");
    }
    // the second and last page of what a named concept gives
    let q =
        r#"FIND(?s.name) WHERE { ?d {type: "Drug", name: "Aspirin"} (?d, "treats", ?s) } LIMIT 1"#;
    let r = run(&mut nx, q);
    let cursor = r["next_cursor"].as_str().expect("a cursor").to_string();
    let r = run(&mut nx, &format!(r#"{q} CURSOR "{cursor}""#));
    assert_eq!(r["result"].as_array().map(Vec::len), Some(1), "{r}");
}

/// A statement of many concept blocks is written in bulk (names looked
/// up at once, new concepts and their links written together); it leaves
/// exactly what the same blocks leave written one command at a time:
/// repeated names merged, existing concepts updated, a type defined in
/// the statement usable in it, links between new concepts, a link item
/// after them, and one undo removes it all.
#[test]
fn a_bulk_upsert_writes_what_the_blocks_write_one_by_one() {
    let mut blocks: Vec<String> = vec![
        r#"CONCEPT ?k { {type: "$ConceptType", name: "Kit"} }"#.into(),
        r#"CONCEPT ?old { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { bulk: true } }"#.into(),
    ];
    for i in 0..12 {
        blocks.push(format!(
            r#"CONCEPT ?k{i} {{ {{type: "Kit", name: "k{i}"}} SET ATTRIBUTES {{ n: {i}, tag: "t{}" }} SET PROPOSITIONS {{ ("treats", {{type: "Symptom", name: "{}"}}) }} }}"#,
            i % 3,
            if i % 2 == 0 { "Headache" } else { "Fever" }
        ));
    }
    blocks
        .push(r#"CONCEPT ?again { {type: "Kit", name: "k3"} SET ATTRIBUTES { again: 1 } }"#.into());
    blocks.push(r#"CONCEPT ?dr { {type: "Drug", name: "Kitamol"} SET PROPOSITIONS { ("treats", {type: "Kit", name: "k3"}) } }"#.into());
    let define = r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: "pairs_with"} } }"#;
    let link = r#"PROPOSITION ?l { (?k1, "pairs_with", ?k2) }"#;
    let meta = r#"WITH METADATA { source: "bulk", confidence: 0.7 }"#;

    let mut bulk = nexus();
    let mut single = nexus();
    for nx in [&mut bulk, &mut single] {
        assert!(run(nx, define).get("error").is_none());
    }
    // the bulk memory: one command
    let one = format!("UPSERT {{ {} {link} }} {meta}", blocks.join(" "));
    let r = run(&mut bulk, &one);
    assert!(r.get("error").is_none(), "{r}");
    // the other: each block alone (handles it needs are restated)
    for b in &blocks {
        let r = run(&mut single, &format!("UPSERT {{ {b} }} {meta}"));
        assert!(r.get("error").is_none(), "{b}: {r}");
    }
    let r = run(
        &mut single,
        &format!(
            r#"UPSERT {{ CONCEPT ?k1 {{ {{type: "Kit", name: "k1"}} }} CONCEPT ?k2 {{ {{type: "Kit", name: "k2"}} }} {link} }} {meta}"#
        ),
    );
    assert!(r.get("error").is_none(), "{r}");

    let everything = [
        r#"FIND(?k.name, ?k.attributes, ?k.metadata.source, ?k.metadata.confidence) WHERE { ?k {type: "Kit"} } ORDER BY ?k.name"#,
        r#"FIND(?d.name, ?d.attributes) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name"#,
        r#"FIND(?s.name, ?p, ?o.name) WHERE { (?s, ?p, ?o) ?s {type: "Kit"} } ORDER BY ?s.name, ?o.name"#,
        r#"FIND(?s.name, ?o.name, ?l.metadata.source) WHERE { ?l (?s, "treats", ?o) } ORDER BY ?s.name, ?o.name"#,
        r#"FIND(?s.name, ?o.name) WHERE { (?s, "pairs_with", ?o) }"#,
    ];
    for q in everything {
        assert_eq!(
            run(&mut bulk, q)["result"],
            run(&mut single, q)["result"],
            "{q}"
        );
    }
    let kits = run(&mut bulk, r#"FIND(COUNT(?k)) WHERE { ?k {type: "Kit"} }"#);
    assert_eq!(kits["result"], json!(12), "{kits}");

    // one undo takes the whole command back
    let entry = bulk.audit_list(&Default::default()).expect("audit")[0].id;
    let who = somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    };
    bulk.rollback(entry, &who).expect("rollback");
    let kits = run(&mut bulk, r#"FIND(COUNT(?k)) WHERE { ?k {type: "Kit"} }"#);
    assert_eq!(kits["result"], json!(0), "{kits}");
    let aspirin = run(
        &mut bulk,
        r#"FIND(?d.attributes.bulk) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(aspirin["result"], json!([null]), "{aspirin}");
}

/// A bulk statement past one batch of rows (1,000 per statement) writes
/// every concept and link, a large attribute whole, and names in any
/// script.
#[test]
fn a_bulk_upsert_past_one_batch_writes_every_row() {
    let mut nx = nexus();
    let big = "é".repeat(100_000);
    let mut cmd = String::from(r#"UPSERT { CONCEPT ?k { {type: "$ConceptType", name: "Kit"} }"#);
    for i in 0..2_500 {
        cmd.push_str(&format!(
            r#" CONCEPT ?k{i} {{ {{type: "Kit", name: "кит-{i} \"q\""}} SET ATTRIBUTES {{ n: {i} }} SET PROPOSITIONS {{ ("treats", {{type: "Symptom", name: "{}"}}) }} }}"#,
            if i % 2 == 0 { "Headache" } else { "Fever" }
        ));
    }
    cmd.push_str(&format!(
        r#" CONCEPT ?big {{ {{type: "Kit", name: "big"}} SET ATTRIBUTES {{ text: "{big}" }} }} }}"#
    ));
    let r = run(&mut nx, &cmd);
    assert!(
        r.get("error").is_none(),
        "{}",
        &r.to_string()[..200.min(r.to_string().len())]
    );
    let r = run(&mut nx, r#"FIND(COUNT(?k)) WHERE { ?k {type: "Kit"} }"#);
    assert_eq!(r["result"], json!(2_501), "{r}");
    let r = run(
        &mut nx,
        r#"FIND(COUNT(?l)) WHERE { ?l (?k, "treats", ?s) ?k {type: "Kit"} }"#,
    );
    assert_eq!(r["result"], json!(2_500), "{r}");
    let r = run(
        &mut nx,
        r#"FIND(?k.attributes.n, ?s.name) WHERE { ?k {type: "Kit", name: "кит-1999 \"q\""} (?k, "treats", ?s) }"#,
    );
    assert_eq!(r["result"], json!([[1999], ["Fever"]]), "{r}");
    let r = run(
        &mut nx,
        r#"FIND(?k.attributes.text) WHERE { ?k {type: "Kit", name: "big"} }"#,
    );
    assert_eq!(
        r["result"][0].as_str().map(|t| t.chars().count()),
        Some(100_000)
    );
}

#[path = "kip_cases/disconnected.rs"]
mod disconnected;
use disconnected::DISCONNECTED;

#[test]
fn every_clause_constrains_even_one_sharing_no_variable_with_find() {
    let mut nx = nexus();
    run(
        &mut nx,
        r#"UPSERT { CONCEPT ?h { {type: "$ConceptType", name: "Herb"} } }"#,
    );
    for (cmd, want) in DISCONNECTED {
        let r = run(&mut nx, cmd);
        let want: Value = serde_json::from_str(want).expect("json");
        assert_eq!(r["result"], want, "{cmd}\n→ {r}");
    }
    // a write whose guard fails changes nothing
    let r = run(
        &mut nx,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug"} ?s {type: "Symptom"} FILTER(?s.name == "none") }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(count_drugs(&mut nx), json!(2));
    let r = run(
        &mut nx,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 9 } WHERE { ?d {type: "Drug"} ?h {type: "Herb"} }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    let r = run(
        &mut nx,
        r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.risk_level == 9) }"#,
    );
    assert_eq!(r["result"], json!(0));
}

mod paging;

/// A page starts after the last row of the page before (see
/// `paging`): rows deleted or written meanwhile skip nothing.
#[test]
fn pages_start_after_the_last_row() {
    let mut nx = Nexus::open_in_memory().expect("open");
    paging::pages_start_after_the_last_row(&mut nx);
}

/// An aggregate over a stored field reads that field of each element:
/// numbers are summed and averaged, text, booleans, objects and missing
/// fields are not; MIN and MAX compare what is there; the `_version`
/// metadata shows is the element's own.
#[test]
fn aggregates_over_a_field_read_what_the_elements_hold() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let r = run(
        &mut nx,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Kit"} }
           CONCEPT ?a { {type: "Kit", name: "a"} SET ATTRIBUTES { w: 2, tag: "x" } }
           CONCEPT ?b { {type: "Kit", name: "b"} SET ATTRIBUTES { w: 3.5 } }
           CONCEPT ?c { {type: "Kit", name: "c"} SET ATTRIBUTES { w: "heavy" } }
           CONCEPT ?d { {type: "Kit", name: "d"} SET ATTRIBUTES { w: true } }
           CONCEPT ?e { {type: "Kit", name: "e"} SET ATTRIBUTES { w: { kg: 9 } } }
           CONCEPT ?f { {type: "Kit", name: "f"} SET ATTRIBUTES { w: null } }
           CONCEPT ?g { {type: "Kit", name: "g"} } }
           WITH METADATA { confidence: 0.5 }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    let agg = |nx: &mut Nexus, f: &str| {
        run(nx, &format!(r#"FIND({f}) WHERE {{ ?k {{type: "Kit"}} }}"#))["result"].clone()
    };
    assert_eq!(agg(&mut nx, "SUM(?k.attributes.w)"), json!(5.5));
    assert_eq!(agg(&mut nx, "AVG(?k.attributes.w)"), json!(2.75));
    // (counts every value there, whatever it is: a null is none)
    assert_eq!(agg(&mut nx, "COUNT(?k.attributes.w)"), json!(5));
    assert_eq!(agg(&mut nx, "AVG(?k.metadata.confidence)"), json!(0.5));
    assert_eq!(agg(&mut nx, "MAX(?k.metadata._version)"), json!(1));
    assert_eq!(agg(&mut nx, "COUNT(?k.attributes.tag)"), json!(1));
    assert_eq!(agg(&mut nx, "SUM(?k.attributes.w.kg)"), json!(9));
    // grouped by a field: each group its own
    let by = run(
        &mut nx,
        r#"FIND(?k.attributes.tag, SUM(?k.attributes.w)) WHERE { ?k {type: "Kit"} }"#,
    );
    assert_eq!(by["result"], json!([["x", null], [2, 3.5]]), "{by}");
}

mod common;
mod plan_cache;

/// A command answered with a plan kept from another of its shape answers
/// as one planned afresh (see `plan_cache`).
#[test]
fn kept_plans_answer_as_planning_afresh() {
    let mut nx = Nexus::open_in_memory().expect("open");
    plan_cache::kept_plans_answer_as_planning_afresh(&mut nx);
}

/// A FIND answered by its one statement begins no transaction: a
/// statement sees one state of the memory by itself. One that reads
/// again (a plan not kept yet, a name that may name nothing, an element
/// the statement did not carry) begins one first and answers inside it,
/// and nothing is left open after either.
#[test]
fn a_find_of_one_statement_begins_no_transaction() {
    use somnus::engine::kql::snapshot_stats;
    let dir = common::tmp("unsnapped");
    let path = dir.join("memory.db");
    let mut nx = Nexus::open(&path).expect("open");
    for c in [
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Person"} } CONCEPT ?k { {type: "$PropositionType", name: "knows"} } }"#,
        r#"UPSERT { CONCEPT ?m { {type: "Person", name: "Mira"} SET ATTRIBUTES { age: 31 } } CONCEPT ?t { {type: "Person", name: "Tomas"} SET PROPOSITIONS { ("knows", ?m) } } }"#,
    ] {
        let r = run(&mut nx, c);
        assert!(r.get("error").is_none(), "{r}");
    }
    let lookup =
        |name: &str| format!(r#"FIND(?n) WHERE {{ ?n {{type: "Person", name: "{name}"}} }}"#);
    let open_after = |nx: &Nexus| !nx.connection_for_checks().expect("conn").is_autocommit();

    // planned: in a snapshot
    let (alone, snapped) = snapshot_stats();
    let first = run(&mut nx, &lookup("Mira"));
    assert_eq!(
        first["result"][0]["attributes"]["age"],
        json!(31),
        "{first}"
    );
    assert_eq!(snapshot_stats(), (alone, snapped + 1));
    assert!(!open_after(&nx));
    // the same shape: its kept plan, one statement, no transaction
    let again = run(&mut nx, &lookup("Mira"));
    assert_eq!(again["result"], first["result"]);
    assert_eq!(snapshot_stats(), (alone + 1, snapped + 1));
    let tomas = run(&mut nx, &lookup("Tomas"));
    assert_eq!(tomas["result"][0]["name"], json!("Tomas"), "{tomas}");
    assert_eq!(snapshot_stats(), (alone + 2, snapped + 1));
    assert!(!open_after(&nx));
    // a name that names nothing: the check that says so reads again
    let nobody = run(&mut nx, &lookup("Nobody"));
    assert_eq!(nobody["error"]["code"], json!("KIP_3002"), "{nobody}");
    assert_eq!(snapshot_stats(), (alone + 2, snapped + 2));
    assert!(!open_after(&nx));
    // a proposition bound to a variable is read after the statement
    let links = r#"FIND(?l) WHERE { ?l ({type: "Person", name: "Tomas"}, "knows", ?o) }"#;
    run(&mut nx, links);
    let (a, s) = snapshot_stats();
    let l = run(&mut nx, links);
    assert_eq!(l["result"][0]["predicate"], json!("knows"), "{l}");
    assert_eq!(snapshot_stats(), (a, s + 1));
    assert!(!open_after(&nx));
    // a writer on another connection takes the write lock at once
    let other = rusqlite::Connection::open(&path).expect("other");
    other
        .execute_batch("BEGIN IMMEDIATE; COMMIT")
        .expect("write lock");
    drop(nx);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The concepts a FIND returns whole are carried by its statement beside
/// their ids: by a lookup in place, by a join after a walk. Either way each
/// is the concept whole (odd names, attributes, metadata with its version),
/// in the order asked for, page after page.
#[test]
fn concepts_returned_whole_keep_their_order_and_every_field() {
    let mut nx = nexus();
    let mut kml =
        String::from(r#"UPSERT { CONCEPT ?hub { {type: "Drug", name: "Hub"} SET PROPOSITIONS {"#);
    for i in 0..40 {
        kml.push_str(&format!(
            r#" ("treats", {{type: "Symptom", name: "S{i} \"quoted\" 頭痛 {i}"}})"#
        ));
    }
    kml.push_str(" } } }");
    let mut setup = String::from("UPSERT {");
    for i in 0..40 {
        setup.push_str(&format!(
            r#" CONCEPT ?s{i} {{ {{type: "Symptom", name: "S{i} \"quoted\" 頭痛 {i}"}} SET ATTRIBUTES {{ rank: {}, tags: ["a", {{"deep": {i}}}] }} }}"#,
            (i * 7) % 40
        ));
    }
    setup.push_str(r#" } WITH METADATA { source: "test", note: "line\nbreak" }"#);
    for c in [setup.as_str(), kml.as_str()] {
        let r = run(&mut nx, c);
        assert!(r.get("error").is_none(), "{r}");
    }
    // one concept looked up by name is the same object the walk returns
    let by_name = |nx: &mut Nexus, name: &str| {
        let r = run(
            nx,
            &format!(
                r#"FIND(?s) WHERE {{ ?s {{type: "Symptom", name: {}}} }}"#,
                json!(name)
            ),
        );
        r["result"][0].clone()
    };
    let walk = r#"FIND(?s) WHERE { ?h {type: "Drug", name: "Hub"} (?h, "treats", ?s) } ORDER BY ?s.attributes.rank DESC LIMIT 7"#;
    let mut ranks = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let cmd = match &cursor {
            Some(c) => format!(r#"{walk} CURSOR "{c}""#),
            None => walk.to_string(),
        };
        let r = run(&mut nx, &cmd);
        assert!(r.get("error").is_none(), "{r}");
        for s in r["result"].as_array().cloned().unwrap_or_default() {
            let keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(
                keys,
                ["_type", "id", "type", "name", "attributes", "metadata"]
            );
            assert_eq!(s["metadata"]["source"], "test");
            assert_eq!(s["metadata"]["note"], "line\nbreak");
            assert!(s["metadata"]["_version"].as_i64().is_some(), "{s}");
            assert!(s["metadata"]["_updated_at"].as_str().is_some(), "{s}");
            let name = s["name"].as_str().unwrap().to_string();
            assert!(name.contains("\"quoted\" 頭痛"), "{name}");
            assert_eq!(by_name(&mut nx, &name), s);
            ranks.push(s["attributes"]["rank"].as_i64().unwrap());
        }
        match r["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(ranks, (0..40).rev().collect::<Vec<i64>>());
    // with no ORDER BY: by id, as they were written; labels and the whole
    // concept of one variable side by side
    let r = run(
        &mut nx,
        r#"FIND(?s.name, ?s) WHERE { ?h {type: "Drug", name: "Hub"} (?h, "treats", ?s) }"#,
    );
    // (two projections of one variable: a row of both per solution)
    let rows = r["result"].as_array().unwrap();
    assert_eq!(rows.len(), 40);
    for (i, row) in rows.iter().enumerate() {
        let (n, s) = (&row[0], &row[1]);
        assert_eq!(n, &s["name"]);
        assert!(n.as_str().unwrap().starts_with(&format!("S{i} ")), "{n}");
        assert_eq!(by_name(&mut nx, n.as_str().unwrap()), *s);
    }
}
