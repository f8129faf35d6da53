//! Engram entity files as real stores write them: frontmatter, Synthesis
//! and Timeline sections, one thing under several ids, link targets that
//! are names rather than ids, `(reverse)` copies of links, a self-link,
//! the user's own entity file, a label in another language.

use serde_json::{Value, json};
use somnus::Nexus;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engram-entities")
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    match nx.kip(cmd) {
        somnus::protocol::Outcome::Ok { result, .. } => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

fn import() -> (Nexus, somnus::import::Outcome) {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let plan = somnus::import::read("engram", &fixture(), None).expect("read");
    let who = somnus::audit::Who {
        actor: "tester".into(),
        trigger: "test".into(),
        reason: None,
    };
    let out = somnus::import::apply(&mut nx, &plan, &who, false).expect("import");
    (nx, out)
}

fn links(nx: &mut Nexus) -> Vec<(String, String, String, String)> {
    let v = kip(
        nx,
        r#"FIND(?a.name, ?l, ?b.name) WHERE { ?l (?a, ?p, ?b) FILTER(?p != "belongs_to_domain") } LIMIT 500"#,
    );
    // (one column per expression)
    let col = |i: usize| v[i].as_array().cloned().unwrap_or_default();
    let (a, l, b) = (col(0), col(1), col(2));
    let text = |x: &Value| x.as_str().unwrap_or_default().to_string();
    let mut out: Vec<(String, String, String, String)> = (0..a.len())
        .map(|i| {
            (
                text(&a[i]),
                text(&l[i]["predicate"]),
                text(&b[i]),
                text(&l[i]["metadata"]["label"]),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn one_thing_under_several_ids_is_one_concept_and_links_read_both_ways() {
    let (mut nx, out) = import();
    let notes = out.notes.join("\n");
    for note in [
        "entities/tool-engram.md: `tool-engram` names what `project-engram` names: one Project `engram`",
        "entities/project-engram.md:24: a `related_to` link from Project `engram` to itself, skipped",
        "entities/tool-engram.md: 1 line(s) of text outside Summary and the lists: kept in its `notes`",
        "`company-northwind` has no entity file: created as Company `Northwind`",
    ] {
        assert!(notes.contains(note), "{note}:\n{notes}");
    }
    // no type from an id's first word, one concept for three ids, the
    // user's entity file is the user
    let types = kip(
        &mut nx,
        r#"FIND(?c.type, ?c.name) WHERE { ?c {type: :t} } "#
            .replace(":t", "\"Ai\"")
            .as_str(),
    );
    assert_eq!(types, json!([]));
    let projects = kip(
        &mut nx,
        r#"FIND(?c.name) WHERE { ?c {type: "Project"} } ORDER BY ?c.name ASC"#,
    );
    assert_eq!(projects, json!(["AI Sales Agent", "engram"]));
    let tools = kip(&mut nx, r#"FIND(COUNT(?c)) WHERE { ?c {type: "Tool"} }"#);
    assert_eq!(tools, json!(0));
    let users = kip(
        &mut nx,
        r#"FIND(?c.type, ?c.name) WHERE { ?c {name: "User"} }"#,
    );
    assert_eq!(users, json!([["Person", "User"]]), "{users}");

    let e = kip(
        &mut nx,
        r#"FIND(?c) WHERE { ?c {type: "Project", name: "engram"} }"#,
    );
    let e = &e[0];
    let aliases = e["attributes"]["aliases"].to_string();
    assert!(aliases.contains("tool-engram"), "{e}");
    assert!(
        e["attributes"]["description"]
            .as_str()
            .unwrap_or_default()
            .contains("Local-first memory plugin"),
        "{e}"
    );
    assert_eq!(
        e["attributes"]["timeline"].as_array().map(Vec::len),
        Some(2)
    );
    assert!(
        e["attributes"]["facts"]
            .to_string()
            .contains("plugins install engram")
    );
    assert!(e["attributes"]["notes"].to_string().contains("Some prose"));
    assert_eq!(
        e["metadata"]["created_at"],
        json!("2026-03-01T09:00:00.000Z")
    );

    // a small vocabulary; each relationship once, whichever file wrote it
    // and whichever way; the label kept
    let got = links(&mut nx);
    let want = [
        ("AI Sales Agent", "related_to", "Northwind", "为…开发"),
        ("AI Sales Agent", "uses", "engram", "uses"),
        ("Priya Natarajan", "manages", "AI Sales Agent", "led by"),
        ("Priya Natarajan", "works_on", "engram", "maintains"),
        ("User", "created", "engram", "created by"),
    ];
    for (a, p, b, _) in want {
        assert!(
            got.iter()
                .any(|g| (g.0.as_str(), g.1.as_str(), g.2.as_str()) == (a, p, b)),
            "{a} {p} {b}: {got:?}"
        );
    }
    // the fact about `tool-engram` is about the one concept
    assert!(
        got.iter().any(|g| g.1 == "about" && g.2 == "engram"),
        "{got:?}"
    );
    assert_eq!(
        got.iter().filter(|g| g.1 != "about").count(),
        want.len(),
        "{got:?}"
    );
    // every link carries its time
    let times = kip(
        &mut nx,
        r#"FIND(?l.metadata.created_at) WHERE { ?l (?a, ?p, ?b) FILTER(?p != "belongs_to_domain") } LIMIT 500"#,
    );
    let times = times.as_array().expect("rows");
    assert_eq!(times.len(), want.len() + 1, "{times:?}");
    assert!(times.iter().all(|t| t.is_string()), "{times:?}");
    // the predicates are declared in a domain: nothing imported is an orphan
    let orphans = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "$PropositionType"} NOT { (?p, "belongs_to_domain", ?d) } }"#,
    );
    assert_eq!(orphans, json!([]), "{orphans}");
}

/// A write the memory refuses is skipped and named; the rest imports.
#[test]
fn a_refused_write_is_skipped_and_named_and_the_rest_imports() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let mut plan = somnus::import::read("engram", &fixture(), None).expect("read");
    let at = plan.writes.len() / 2;
    plan.writes.insert(
        at,
        somnus::import::Write {
            text: r#"UPSERT { CONCEPT ?c { {type: "NoSuchType", name: "x"} } }"#.into(),
            params: Default::default(),
            source: "engram:entities/broken.md:3".into(),
            what: "Broken".into(),
        },
    );
    let who = somnus::audit::Who {
        actor: "tester".into(),
        trigger: "test".into(),
        reason: None,
    };
    let out = somnus::import::apply(&mut nx, &plan, &who, false).expect("import");
    assert_eq!(out.skipped, 1);
    assert!(
        out.notes
            .iter()
            .any(|n| n.starts_with("engram:entities/broken.md:3: Broken not imported (KIP_")),
        "{:?}",
        out.notes
    );
    let n = kip(&mut nx, r#"FIND(COUNT(?c)) WHERE { ?c {type: "Project"} }"#);
    assert_eq!(n, json!(2));
}
