//! EXPORT of a generated graph, imported into an empty memory and exported
//! again, gives the same capsule; and limits answer with their codes.

use proptest::prelude::*;
use serde_json::Value;
use somnus::Nexus;
use somnus::protocol::Request;

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    nx.execute(&Request::command(cmd)).to_json()
}

const SCHEMA: &str = r#"UPSERT { CONCEPT ?a { {type: "$ConceptType", name: "Thing"} } CONCEPT ?b { {type: "$PropositionType", name: "rel"} } CONCEPT ?c { {type: "$PropositionType", name: "about"} } }"#;
const EVERYTHING: &str = r#"EXPORT ?x WHERE { ?x {type: "Thing"} UNION { ?x (?s, "rel", ?o) } UNION { ?x (?s, "about", ?o) } } LIMIT 100000"#;

fn value_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i32>().prop_map(|n| n.to_string()),
        "[a-zA-Z \"\\\\é☃]{0,12}".prop_map(|s| Value::String(s).to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        Just("null".to_string()),
        prop::collection::vec(0i32..100, 0..3)
            .prop_map(|v| serde_json::to_string(&v).unwrap_or_default()),
    ]
}

type Link = (usize, usize, Vec<(String, String)>);

#[derive(Debug, Clone)]
struct Graph {
    names: Vec<(String, Vec<(String, String)>)>,
    links: Vec<Link>,
    about: Vec<(usize, usize)>,
}

fn graph_strategy() -> impl Strategy<Value = Graph> {
    (2usize..8)
        .prop_flat_map(|n| {
            let names = prop::collection::vec(
                (
                    "[a-z][a-z0-9 _:-]{0,10}",
                    prop::collection::vec(("[a-z_]{1,6}", value_strategy()), 0..3),
                ),
                n,
            );
            let links = prop::collection::vec(
                (
                    0..n,
                    0..n,
                    prop::collection::vec(("[a-z_]{1,6}", value_strategy()), 0..2),
                ),
                0..10,
            );
            let about = prop::collection::vec((0..n, 0usize..10), 0..4);
            (names, links, about)
        })
        .prop_map(|(names, links, about)| Graph {
            names,
            links,
            about,
        })
}

fn load(nx: &mut Nexus, g: &Graph) {
    assert!(kip(nx, SCHEMA).get("error").is_none());
    let mut seen = std::collections::HashSet::new();
    let mut names = Vec::new();
    for (i, (n, attrs)) in g.names.iter().enumerate() {
        let name = if seen.insert(n.clone()) {
            n.clone()
        } else {
            format!("{n}#{i}")
        };
        seen.insert(name.clone());
        let mut dedup = std::collections::BTreeMap::new();
        for (k, v) in attrs {
            dedup.insert(k.clone(), v.clone());
        }
        let attrs: Vec<String> = dedup.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let cmd = format!(
            r#"UPSERT {{ CONCEPT ?c {{ {{type: "Thing", name: {}}} SET ATTRIBUTES {{ {} }} }} WITH METADATA {{ source: "gen", rank: {i} }} }}"#,
            Value::String(name.clone()),
            attrs.join(", ")
        );
        let r = kip(nx, &cmd);
        assert!(r.get("error").is_none(), "{r}\n{cmd}");
        names.push(name);
    }
    let mut link_names = Vec::new();
    for (s, o, attrs) in &g.links {
        if s == o {
            continue;
        }
        let mut dedup = std::collections::BTreeMap::new();
        for (k, v) in attrs {
            dedup.insert(k.clone(), v.clone());
        }
        let attrs: Vec<String> = dedup.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let cmd = format!(
            r#"UPSERT {{ PROPOSITION ?p {{ ({{type: "Thing", name: {}}}, "rel", {{type: "Thing", name: {}}}) SET ATTRIBUTES {{ {} }} }} }}"#,
            Value::String(names[*s].clone()),
            Value::String(names[*o].clone()),
            attrs.join(", ")
        );
        let r = kip(nx, &cmd);
        assert!(r.get("error").is_none(), "{r}\n{cmd}");
        link_names.push((*s, *o));
    }
    // higher-order: a Thing is "about" an existing rel link
    for (who, which) in &g.about {
        if link_names.is_empty() {
            break;
        }
        let (s, o) = link_names[which % link_names.len()];
        let cmd = format!(
            r#"UPSERT {{ PROPOSITION ?p {{ ({{type: "Thing", name: {}}}, "about", ({{type: "Thing", name: {}}}, "rel", {{type: "Thing", name: {}}})) }} }}"#,
            Value::String(names[*who].clone()),
            Value::String(names[s].clone()),
            Value::String(names[o].clone())
        );
        let r = kip(nx, &cmd);
        assert!(r.get("error").is_none(), "{r}\n{cmd}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
    #[test]
    fn export_import_export_is_identity(g in graph_strategy()) {
        let mut a = Nexus::open_in_memory().expect("open");
        load(&mut a, &g);
        let first = kip(&mut a, EVERYTHING);
        prop_assert!(first.get("error").is_none(), "{}", first);
        let capsule = first["result"]["capsule"].as_str().unwrap_or("").to_string();

        let mut b = Nexus::open_in_memory().expect("open");
        prop_assert!(kip(&mut b, SCHEMA).get("error").is_none());
        let imported = kip(&mut b, &capsule);
        prop_assert!(imported.get("error").is_none(), "{}\n{}", imported, capsule);
        let second = kip(&mut b, EVERYTHING);
        prop_assert_eq!(&first["result"], &second["result"]);
    }
}

#[test]
fn export_pages_with_cursor_and_strips_engine_metadata() {
    let mut nx = Nexus::open_in_memory().expect("open");
    load(
        &mut nx,
        &Graph {
            names: (0..5).map(|i| (format!("t{i}"), vec![])).collect(),
            links: vec![(0, 1, vec![]), (1, 2, vec![])],
            about: vec![],
        },
    );
    let r = kip(&mut nx, r#"EXPORT ?x WHERE { ?x {type: "Thing"} } LIMIT 3"#);
    let capsule = r["result"]["capsule"].as_str().unwrap_or("");
    assert_eq!(r["result"]["concepts"], 3);
    assert!(
        !capsule.contains("_version") && !capsule.contains("_updated_at"),
        "{capsule}"
    );
    let cursor = r["next_cursor"].as_str().expect("more pages").to_string();
    let r2 = kip(
        &mut nx,
        &format!(r#"EXPORT ?x WHERE {{ ?x {{type: "Thing"}} }} LIMIT 3 CURSOR "{cursor}""#),
    );
    assert_eq!(r2["result"]["concepts"], 2);
    assert!(r2.get("next_cursor").is_none());
}

#[test]
fn limits_answer_with_their_codes() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let r = kip(&mut nx, r#"FIND(?s, ?o) WHERE { (?s, ?p, ?o) }"#);
    assert_eq!(r["error"]["code"], "KIP_4002");
    let r = kip(&mut nx, r#"FIND(?s, ?o) WHERE { (?s, ?p, ?o) } LIMIT 5"#);
    assert!(r.get("error").is_none(), "{r}");
    nx.set_timeout(std::time::Duration::from_millis(30));
    let r = kip(
        &mut nx,
        r#"FIND(COUNT(?a)) WHERE { ?a {type: "$ConceptType"} ?b {type: "$ConceptType"} ?c {type: "$ConceptType"} ?d {type: "$ConceptType"} ?e {type: "$ConceptType"} FILTER(?a.name != ?b.name && ?b.name != ?c.name && ?c.name != ?d.name && ?d.name != ?e.name && REGEX(?e.name, "^[A-Z$]")) }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_4001", "{r}");
    // the memory answers again afterwards
    nx.set_timeout(std::time::Duration::from_secs(30));
    let r = kip(
        &mut nx,
        r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType", name: "Event"} }"#,
    );
    assert_eq!(r["result"], serde_json::json!(["Event"]));
}
