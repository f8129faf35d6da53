//! The engine on a PostgreSQL memory: the same KIP text gives the same
//! JSON as on SQLite, writes are audited and roll back, a failed write
//! leaves the memory as it was, the time limit holds, and processes
//! opening a new memory together bootstrap it once.
//!
//! They need a server: `SOMNUS_TEST_PG=postgres://user@host:port/db`
//! (`.ci/run` starts a throwaway one). Without it each test says so and
//! passes.

use serde_json::Value;
use somnus::Nexus;
use somnus::protocol::Outcome;

mod pg_support;
use pg_support::{Memory, server};

fn ok(nx: &mut Nexus, cmd: &str) -> Value {
    match nx.kip(cmd) {
        Outcome::Ok { result, .. } => result,
        Outcome::Err(e) => panic!("{cmd}\n→ {} {}", e.code, e.message),
    }
}

/// What both memories answer, ids replaced by their order of appearance.
fn same(sqlite: &mut Nexus, pg: &mut Nexus, cmd: &str) {
    let norm = |o: Outcome| -> String {
        let mut v = match o {
            Outcome::Ok { result, .. } => result,
            Outcome::Err(e) => serde_json::json!({ "error": e.code.to_string() }),
        };
        // SEARCH ranks alike, but its scores come from each database's
        // own ranking (BM25, ts_rank): both lie in [0, 1)
        if let Value::Array(items) = &mut v {
            for it in items {
                if let Some(m) = it.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("_score");
                    m.remove("_relevance");
                }
            }
        }
        somnus::conformance::canonical(&somnus::conformance::normalize(&v, &mut Default::default()))
    };
    let a = norm(sqlite.kip(cmd));
    let b = norm(pg.kip(cmd));
    assert_eq!(a, b, "SQLite and PostgreSQL differ on\n{cmd}");
}

const SCRIPT: &[&str] = &[
    r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Drug"} SET ATTRIBUTES { description: "A drug" } } }"#,
    r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: "treats"} SET ATTRIBUTES { description: "treats" } } }"#,
    r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: "leads_to"} SET ATTRIBUTES { description: "leads to" } } }"#,
    r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { dose: 500, tags: ["pain"], note: "für Kopfschmerz", risk: 0.25, otc: true } }
               CONCEPT ?b { {type: "Drug", name: "Ibuprofen"} SET ATTRIBUTES { dose: 200, note: "anti-inflammatory", risk: 0.5, otc: true } }
               CONCEPT ?c { {type: "Drug", name: "Morphine"} SET ATTRIBUTES { dose: "10", note: "opioid", otc: false } }
               CONCEPT ?d { {type: "Drug", name: "Zeta"} SET ATTRIBUTES { note: null } }
               PROPOSITION ?l1 { (?a, "leads_to", ?b) } PROPOSITION ?l2 { (?b, "leads_to", ?c) } PROPOSITION ?l3 { (?c, "leads_to", ?d) }
               PROPOSITION ?t1 { (?a, "treats", ?b) } WITH METADATA { confidence: 0.9 } }"#,
];

const QUERIES: &[&str] = &[
    // every solution in the default order (by element id; PostgreSQL
    // orders them once read), a missing OPTIONAL value last
    r#"FIND(?x) WHERE { ?x {type: "Drug"} }"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug"} FILTER(?x.attributes.dose >= 200) }"#,
    r#"FIND(?y.name, ?x.name) WHERE { ?x {type: "Drug"} OPTIONAL { (?y, "leads_to", ?x) } }"#,
    r#"FIND(?l, ?x) WHERE { ?l (?x, ?p, ?y) }"#,
    // a type written into the statement: quotes and backslashes are text
    r#"FIND(?x) WHERE { ?x {type: "Dr'ug\' OR 'a'='a"} }"#,
    r#"FIND(COUNT(?x)) WHERE { ?x {type: "it's"} }"#,
    r#"FIND(?x) WHERE { ?x {type: "a\u0000b"} }"#,
    // answers that carry their concepts (PostgreSQL reads them in the
    // query): whole or labels, ordered and paged, through a walk, beside
    // a predicate, a proposition, a missing OPTIONAL, and a UNION whose
    // branches bind a concept and a proposition
    r#"FIND(?x) WHERE { ?x {type: "Drug"} } ORDER BY ?x.attributes.dose DESC LIMIT 2"#,
    r#"FIND(?y, ?x.name) WHERE { (?x, "leads_to", ?y) } ORDER BY ?x.name"#,
    r#"FIND(?y) WHERE { ({type: "Drug", name: "Aspirin"}, "leads_to"{1,3}, ?y) } ORDER BY ?y.name"#,
    r#"FIND(?p, ?y, ?y.name) WHERE { (?x, ?p, ?y) ?x {type: "Drug"} } ORDER BY ?p"#,
    r#"FIND(?x.name, ?y, ?y.type) WHERE { ?x {type: "Drug"} OPTIONAL { (?x, "treats", ?y) } } ORDER BY ?x.name"#,
    r#"FIND(?l, ?l.metadata.confidence, ?y.name) WHERE { ?l (?x, "treats", ?y) }"#,
    r#"FIND(?y, ?y.name) WHERE { (?x, "treats", ?y) UNION { ?y (?a, "leads_to", ?b) } }"#,
    // a named endpoint is looked up inside the statement on PostgreSQL:
    // found, missing (KIP_3002), a walk from it, from zero hops
    r#"FIND(?y.name) WHERE { ({type: "Drug", name: "Nobody"}, "leads_to"{1,3}, ?y) }"#,
    r#"FIND(?y) WHERE { ({id: "C:999999"}, "leads_to", ?y) }"#,
    r#"FIND(?y) WHERE { ({id: "bogus"}, "leads_to", ?y) }"#,
    r#"FIND(?x.name) WHERE { ({type: "Drug", name: "Aspirin"}, "leads_to"{0,2}, ?x) } ORDER BY ?x.name"#,
    r#"FIND(?x.name) WHERE { ({type: "Drug", name: "Nobody"}, "leads_to"{0,2}, ?x) }"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug", name: "Aspirin"} ({type: "Drug", name: "Aspirin"}, "leads_to"{1,3}, {type: "Drug", name: "Morphine"}) }"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug", name: "Aspirin"} ({type: "Drug", name: "Aspirin"}, "leads_to"{1}, {type: "Drug", name: "Morphine"}) }"#,
    r#"FIND(?x.name) WHERE { (?x, "leads_to"{2}, {type: "Drug", name: "Zeta"}) }"#,
    r#"FIND(?x.name) WHERE { (?x, "leads_to", {type: "Drug", name: "Zeta"}) (?x, "leads_to", ?z) }"#,
    // integer literals against numbers past 2^53, booleans, text, arrays
    r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Gauge"} SET ATTRIBUTES { description: "A gauge" } } }"#,
    r#"UPSERT { CONCEPT ?a { {type: "Gauge", name: "g1"} SET ATTRIBUTES { big: 9007199254740993, level: 2 } }
               CONCEPT ?b { {type: "Gauge", name: "g2"} SET ATTRIBUTES { big: 9007199254740992, level: true } }
               CONCEPT ?c { {type: "Gauge", name: "g3"} SET ATTRIBUTES { big: "9007199254740993", level: [1] } }
               CONCEPT ?d { {type: "Gauge", name: "g4"} SET ATTRIBUTES { level: false, nested: { x: 3, y: "3" }, big: null } } }"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.big > 9007199254740992) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.big == 9007199254740993) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.big <= 9007199254740992) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.level >= 1) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.level < 2) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(1 < ?g.attributes.level) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(IN(?g.attributes.level, [1, 2, true])) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.level != 2) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.level > 0.5) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.level <= 0) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.level == 1) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(0 == ?g.attributes.level) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.big >= 9.007199254740993e15) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.big < -1) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.missing < 5 || ?g.attributes.missing >= 5) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.missing != 5) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.nested.x == 3 && ?g.attributes.nested.y > 2) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.attributes.nested > 2 || ?g.attributes.level.deep < 2) } ORDER BY ?g.name"#,
    r#"FIND(?g.name) WHERE { ?g {type: "Gauge"} FILTER(?g.metadata.source >= 0) } ORDER BY ?g.name"#,
    // ORDER BY over every kind of value: numbers, booleans (0 and 1),
    // text by code point whatever the collation, arrays, objects, null,
    // missing; both ways, paged, and grouped (rows joined more than once)
    r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Key"} SET ATTRIBUTES { description: "A key" } } }"#,
    r#"UPSERT { CONCEPT ?a { {type: "Key", name: "k01"} SET ATTRIBUTES { v: 2 } }
               CONCEPT ?b { {type: "Key", name: "k02"} SET ATTRIBUTES { v: 1.5 } }
               CONCEPT ?c { {type: "Key", name: "k03"} SET ATTRIBUTES { v: true } }
               CONCEPT ?d { {type: "Key", name: "k04"} SET ATTRIBUTES { v: false } }
               CONCEPT ?e { {type: "Key", name: "k05"} SET ATTRIBUTES { v: "b" } }
               CONCEPT ?f { {type: "Key", name: "k06"} SET ATTRIBUTES { v: "B" } }
               CONCEPT ?g { {type: "Key", name: "k07"} SET ATTRIBUTES { v: "é" } }
               CONCEPT ?h { {type: "Key", name: "k08"} SET ATTRIBUTES { v: "ä" } }
               CONCEPT ?i { {type: "Key", name: "k09"} SET ATTRIBUTES { v: "10" } }
               CONCEPT ?j { {type: "Key", name: "k10"} SET ATTRIBUTES { v: null } }
               CONCEPT ?k { {type: "Key", name: "k11"} SET ATTRIBUTES { w: 1 } }
               CONCEPT ?l { {type: "Key", name: "k12"} SET ATTRIBUTES { v: -3 } }
               CONCEPT ?m { {type: "Key", name: "k13"} SET ATTRIBUTES { v: 1 } }
               CONCEPT ?n { {type: "Key", name: "k14"} SET ATTRIBUTES { v: "b" } }
               PROPOSITION ?p1 { (?a, "leads_to", ?b) } PROPOSITION ?p2 { (?a, "leads_to", ?c) }
               PROPOSITION ?p3 { (?e, "leads_to", ?f) } PROPOSITION ?p4 { (?e, "leads_to", ?g) } }"#,
    r#"FIND(?k.name) WHERE { ?k {type: "Key"} } ORDER BY ?k.attributes.v ASC"#,
    r#"FIND(?k.name) WHERE { ?k {type: "Key"} } ORDER BY ?k.attributes.v DESC"#,
    r#"FIND(?k.name, ?k.attributes.v) WHERE { ?k {type: "Key"} } ORDER BY ?k.attributes.v DESC, ?k.name DESC LIMIT 5"#,
    r#"FIND(?k.name) WHERE { ?k {type: "Key"} OPTIONAL { (?k, "leads_to", ?z) } } ORDER BY ?k.attributes.v ASC"#,
    r#"FIND(?k.name, ?z.name) WHERE { ?k {type: "Key"} (?k, "leads_to", ?z) } ORDER BY ?z.attributes.v DESC, ?k.name"#,
    // an OPTIONAL that reads a variable bound before the last table
    r#"FIND(?x.name, ?z.name) WHERE { ?x {type: "Drug"} (?x, "leads_to", ?w) OPTIONAL { (?x, "treats", ?z) } } ORDER BY ?x.name"#,
    // a FILTER's fields read once per row: the same one twice, beside
    // OPTIONAL and inside NOT and OPTIONAL, of a proposition, a path
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.risk >= 0.25 && ?d.attributes.risk < 0.5 || ?d.attributes.dose > 300) } ORDER BY ?d.name"#,
    r#"FIND(?x.name, ?z.name) WHERE { ?x {type: "Drug"} FILTER(?x.attributes.dose >= 200) OPTIONAL { (?x, "leads_to", ?z) FILTER(?z.attributes.otc == true) } } ORDER BY ?x.name"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug"} NOT { (?x, "leads_to", ?z) FILTER(?z.attributes.dose < 300) } } ORDER BY ?x.name"#,
    r#"FIND(?x.name) WHERE { ?l (?x, "treats", ?y) FILTER(?l.metadata.confidence > 0.5) }"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug"} FILTER(?x.metadata.source.a != 1 && ?x.attributes.note.deep == null) } ORDER BY ?x.name"#,
    r#"FIND(?x.name, ?x.type, ?x.attributes.note) WHERE { ?x {type: "Drug"} } ORDER BY ?x.name LIMIT 3"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name DESC"#,
    r#"FIND(?d.name, ?d.attributes.dose) WHERE { ?d {type: "Drug"} } ORDER BY ?d.attributes.dose ASC"#,
    r#"FIND(?d.name, ?d.attributes.dose) WHERE { ?d {type: "Drug"} } ORDER BY ?d.attributes.dose DESC"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.attributes.otc DESC, ?d.attributes.risk ASC"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.attributes.tags DESC, ?d.name ASC"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.attributes.note ASC LIMIT 2"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.dose > 100) }"#,
    // a value against a number or a text: native when the types match,
    // the general comparison otherwise (a text dose, a boolean, a missing one)
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.dose <= 200) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.dose != 500) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.otc >= 1) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.note < "o") } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER("10" == ?d.attributes.dose || 200 == ?d.attributes.dose) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.tags > 3) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.dose == "10") }"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.otc == true) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.risk >= 0.25 && ?d.attributes.risk < 0.5) }"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.note == null) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(CONTAINS(?d.attributes.note, "Kopf")) }"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(STARTS_WITH(?d.name, "Ib") || ENDS_WITH(?d.name, "ine")) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(REGEX(?d.name, "^[AM]")) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(IN(?d.name, ["Zeta", "Aspirin"])) } ORDER BY ?d.name"#,
    r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(IN(?d.attributes.dose, [500, "10"])) } ORDER BY ?d.name"#,
    r#"FIND(?x.name, ?y.name) WHERE { ?x {type: "Drug"} OPTIONAL { (?x, "treats", ?y) } } ORDER BY ?x.name"#,
    r#"FIND(?y.name) WHERE { (?x, "leads_to"{1,3}, ?y) ?x {type: "Drug", name: "Aspirin"} } ORDER BY ?y.name"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug"} (?x, "leads_to"{2}, ?y) } ORDER BY ?x.name"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug"} NOT { (?x, "leads_to", ?z) } }"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug", name: "Aspirin"} UNION { ?x {type: "Drug", name: "Zeta"} } } ORDER BY ?x.name"#,
    r#"FIND(?p, COUNT(?y)) WHERE { (?x, ?p, ?y) ?x {type: "Drug"} } ORDER BY ?p"#,
    r#"FIND(?l.metadata.confidence) WHERE { ?l (?x, "treats", ?y) }"#,
    r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#,
    r#"DESCRIBE CONCEPT TYPES"#,
    r#"DESCRIBE CONCEPT TYPE "Drug""#,
    r#"SEARCH CONCEPT "aspirin" WITH TYPE "Drug" LIMIT 3"#,
    r#"UPDATE ?d SET ATTRIBUTES { checked: true } WHERE { ?d {type: "Drug"} FILTER(?d.attributes.dose > 100) }"#,
    // UPDATE of literal values (one statement on PostgreSQL): on links,
    // limited, matching nothing, naming nothing (KIP_3002), on protected
    // definitions and the system actors' directives (refused, nothing
    // written), with expressions (one element at a time)
    r#"UPDATE ?l SET METADATA { checked: true } WHERE { ?l (?x, "treats", ?y) }"#,
    r#"UPDATE ?d SET ATTRIBUTES { lim: 1, more: {a: [1, "b"]} } WHERE { ?d {type: "Drug"} } LIMIT 2"#,
    r#"UPDATE ?d SET ATTRIBUTES { none: 1 } WHERE { ?d {type: "Drug"} FILTER(?d.attributes.dose > 100000) }"#,
    r#"UPDATE ?d SET ATTRIBUTES { none: 1 } WHERE { ?d {type: "Drug", name: "Nobody"} }"#,
    r#"UPDATE ?t SET ATTRIBUTES { x: 1 } WHERE { ?t {type: "$ConceptType"} }"#,
    r#"UPDATE ?t SET ATTRIBUTES { x: 1 } WHERE { ?t {type: "$ConceptType", name: "Drug"} }"#,
    r#"UPDATE ?p SET ATTRIBUTES { core_directives: [] } WHERE { ?p {type: "Person"} }"#,
    r#"UPDATE ?p SET ATTRIBUTES { mood: "calm" } WHERE { ?p {type: "Person", name: "$self"} }"#,
    r#"UPDATE ?pr SET ATTRIBUTES { x: 1 } WHERE { (?x, ?pr, ?y) }"#,
    r#"UPDATE ?y SET ATTRIBUTES { reached: true } WHERE { ({type: "Drug", name: "Aspirin"}, "leads_to"{1,3}, ?y) }"#,
    r#"UPDATE ?d SET METADATA { tag: "u" } WHERE { ?d {type: "Drug", name: "Aspirin"} UNION { ?d {type: "Drug", name: "Zeta"} } }"#,
    r#"FIND(?d.name, ?d.attributes.reached, ?d.metadata.tag) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name"#,
    r#"FIND(?d.name, ?d.attributes, ?d.metadata._version) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name"#,
    r#"FIND(?t.name, ?t.attributes.x) WHERE { ?t {type: "$ConceptType"} } ORDER BY ?t.name"#,
    r#"FIND(?p.name, ?p.attributes.mood) WHERE { ?p {type: "Person"} } ORDER BY ?p.name"#,
    r#"FIND(?l.metadata.checked) WHERE { ?l (?x, "treats", ?y) }"#,
    r#"FIND(?d.name, ?d.attributes.checked) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name"#,
    r#"DELETE ATTRIBUTES {"note"} FROM ?d WHERE { ?d {type: "Drug", name: "Morphine"} }"#,
    r#"MERGE CONCEPT ?s INTO ?t WHERE { ?s {type: "Drug", name: "Ibuprofen"} ?t {type: "Drug", name: "Aspirin"} }"#,
    r#"FIND(?x.name, ?y.name) WHERE { (?x, "leads_to", ?y) } ORDER BY ?x.name"#,
    r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Zeta"} }"#,
    r#"FIND(?d.name, ?d.attributes) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name"#,
    r#"FIND(?x) WHERE { ?x {type: "Drug", name: "Nobody"} }"#,
    // many concept blocks: written in bulk
    r#"UPSERT { CONCEPT ?b0 { {type: "Drug", name: "Bulk0"} SET ATTRIBUTES { dose: 0 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b1 { {type: "Drug", name: "Bulk1"} SET ATTRIBUTES { dose: 1 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b2 { {type: "Drug", name: "Bulk2"} SET ATTRIBUTES { dose: 2 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b3 { {type: "Drug", name: "Bulk3"} SET ATTRIBUTES { dose: 3 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b4 { {type: "Drug", name: "Bulk4"} SET ATTRIBUTES { dose: 4 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b5 { {type: "Drug", name: "Bulk5"} SET ATTRIBUTES { dose: 5 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b6 { {type: "Drug", name: "Bulk6"} SET ATTRIBUTES { dose: 6 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b7 { {type: "Drug", name: "Bulk7"} SET ATTRIBUTES { dose: 7 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?b8 { {type: "Drug", name: "Bulk8"} SET ATTRIBUTES { dose: 8 } SET PROPOSITIONS { ("leads_to", {type: "Drug", name: "Aspirin"}) } } CONCEPT ?again { {type: "Drug", name: "Bulk2"} SET ATTRIBUTES { again: true } } PROPOSITION ?l { (?b1, "treats", ?b2) } } WITH METADATA { source: "bulk" }"#,
    r#"FIND(?d.name, ?d.attributes, ?d.metadata.source) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name"#,
    r#"FIND(?x.name, ?p, ?y.name) WHERE { (?x, ?p, ?y) ?x {type: "Drug"} } ORDER BY ?x.name, ?y.name"#,
    // links counted per endpoint before the join (PostgreSQL's plan shape)
    r#"FIND(?y.name, COUNT(?x)) WHERE { ?y {type: "Drug"} (?x, "leads_to", ?y) }"#,
    r#"FIND(?x.name, COUNT(?y)) WHERE { ?x {type: "Drug"} (?x, "leads_to", ?y) }"#,
    r#"FIND(?y.name, COUNT(DISTINCT ?x)) WHERE { (?x, "leads_to", ?y) ?y {type: "Drug"} }"#,
    r#"FIND(?x.name, COUNT(?y)) WHERE { ?x {type: "Drug", name: "Aspirin"} (?x, "leads_to", ?y) }"#,
    r#"FIND(?x.name, COUNT(?y)) WHERE { ?x {type: "Drug"} (?x, "treats", ?y) }"#,
    // a matcher naming nothing, where the check waits for an empty answer
    r#"FIND(COUNT(?y)) WHERE { ?x {type: "Drug", name: "Nobody"} (?x, "leads_to", ?y) }"#,
    r#"FIND(?x.name, COUNT(?y)) WHERE { ?x {type: "Drug", name: "Nobody"} (?x, "leads_to", ?y) }"#,
    r#"FIND(?y) WHERE { ({type: "Drug", name: "Nobody"}, "leads_to", ?y) }"#,
    r#"FIND(?x.name) WHERE { ?x {type: "Drug", name: "Nobody"} UNION { ?x {type: "Drug", name: "Aspirin"} } }"#,
    r#"FIND(?y) WHERE { ?x {type: "Drug", name: "Nobody"} }"#,
    r#"FIND(COUNT(?y)) WHERE { ?x {type: "Drug", name: "Aspirin"} (?y, "leads_to", ?x) }"#,
];

#[test]
fn kip_answers_the_same_on_postgresql_as_on_sqlite() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_same");
    let mut pg = m.open();
    let mut sqlite = Nexus::open_in_memory().expect("sqlite");
    for cmd in SCRIPT.iter().chain(QUERIES) {
        same(&mut sqlite, &mut pg, cmd);
    }
    // the bulk statement wrote (on both: they answered the same)
    let bulk = ok(
        &mut pg,
        r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} FILTER(STARTS_WITH(?d.name, "Bulk")) }"#,
    );
    assert_eq!(bulk, serde_json::json!(9));
    // EXPORT writes the same elements; jsonb keeps an object's keys in
    // its own order (shorter first), so the capsule's text may differ
    let export = r#"EXPORT ?d WHERE { ?d {type: "Drug"} }"#;
    let (a, b) = (ok(&mut sqlite, export), ok(&mut pg, export));
    assert_eq!(
        (&a["concepts"], &a["propositions"]),
        (&b["concepts"], &b["propositions"])
    );
    // scores are in [0, 1) on both
    let hits = ok(&mut pg, r#"SEARCH CONCEPT "aspirin""#);
    let score = hits[0]["metadata"]["_score"].as_f64().expect("score");
    assert!((0.0..1.0).contains(&score) && score > 0.0, "{score}");
}

#[test]
fn writes_are_audited_and_roll_back_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_audit");
    let mut nx = m.open();
    for c in SCRIPT {
        ok(&mut nx, c);
    }
    let who = somnus::audit::Who {
        actor: "tester".into(),
        trigger: "test".into(),
        reason: None,
    };
    let f = somnus::audit::Filter {
        limit: 1,
        ..Default::default()
    };
    let last = nx.audit_list(&f).expect("list")[0].clone();
    assert_eq!(last.kind, "UPSERT");
    // four concepts and four links created, each with its image
    let (_, changes) = nx.audit_entry(last.id).expect("entry").expect("some");
    let inserts: Vec<_> = changes.iter().filter(|c| c.op == "insert").collect();
    assert_eq!(inserts.len(), 8, "{changes:?}");
    assert!(inserts.iter().all(|c| c.after.is_some()));
    ok(
        &mut nx,
        r#"UPDATE ?d SET ATTRIBUTES { dose: 750 } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let update = nx.audit_list(&f).expect("list")[0].clone();
    let (_, changes) = nx.audit_entry(update.id).expect("entry").expect("some");
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[0].before.as_ref().expect("before")["attributes"]["dose"],
        500
    );
    assert_eq!(
        changes[0].after.as_ref().expect("after")["attributes"]["dose"],
        750
    );
    let dose = r#"FIND(?d.attributes.dose) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#;
    // the update rolls back; then the creation (nothing refers to it now)
    nx.rollback(update.id, &who).expect("rollback update");
    assert_eq!(ok(&mut nx, dose), serde_json::json!([500]));
    // a later entry still in effect blocks undoing an earlier one
    ok(
        &mut nx,
        r#"UPDATE ?d SET ATTRIBUTES { dose: 1 } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let e = nx.rollback(last.id, &who).expect_err("conflict");
    assert_eq!(e.code.to_string(), "KIP_3005", "{}", e.message);
    let newest = nx.audit_list(&f).expect("list")[0].id;
    nx.rollback(newest, &who).expect("undo the dose");
    nx.rollback(last.id, &who).expect("undo the creation");
    assert_eq!(
        ok(&mut nx, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#),
        serde_json::json!(0)
    );
}

#[test]
fn a_failed_write_leaves_a_postgresql_memory_as_it_was() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_failed");
    let mut nx = m.open();
    for c in SCRIPT {
        ok(&mut nx, c);
    }
    let count = r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#;
    let before = ok(&mut nx, count);
    // the second concept's type does not exist: the whole UPSERT fails
    let out = nx.kip(
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "New"} } CONCEPT ?b { {type: "NoSuchType", name: "X"} } }"#,
    );
    assert!(out.is_err());
    assert_eq!(ok(&mut nx, count), before);
    // the connection is usable after the error (no aborted transaction)
    ok(
        &mut nx,
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "New"} } }"#,
    );
    let n = ok(&mut nx, count).as_i64().expect("n");
    assert_eq!(n, before.as_i64().expect("n") + 1);
    // inside a group, a failing command undoes only itself
    let res = nx.atomically("test", |nx| {
        assert!(
            nx.kip(r#"UPSERT { CONCEPT ?b { {type: "NoSuchType", name: "X"} } }"#)
                .is_err()
        );
        match nx.kip(r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Grouped"} } }"#) {
            Outcome::Ok { .. } => Ok(()),
            Outcome::Err(e) => Err(e),
        }
    });
    res.expect("group");
    assert_eq!(ok(&mut nx, count).as_i64(), Some(n + 1));
}

/// A write's commit travels with the statement that closes its audit
/// entry (one round trip for both): when that statement fails, the
/// commit is a rollback, and nothing of the write is left; a write whose
/// closing succeeds is committed when its answer comes (another
/// connection reads it at once).
#[test]
fn a_write_failing_as_its_entry_closes_leaves_nothing_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_close_fails");
    let mut nx = m.open();
    for c in SCRIPT {
        ok(&mut nx, c);
    }
    nx.db()
        .batch(
            "CREATE FUNCTION refuse_close() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN IF NEW.command LIKE '%Refused%' THEN RAISE EXCEPTION 'closing refused'; END IF; \
             RETURN NEW; END $$; \
             CREATE TRIGGER refuse_close BEFORE UPDATE ON audit_log FOR EACH ROW \
             EXECUTE FUNCTION refuse_close()",
        )
        .expect("trigger");
    let count = r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#;
    let before = ok(&mut nx, count);
    let entries = |nx: &mut Nexus| {
        nx.db()
            .query_i64("SELECT COUNT(*) FROM audit_log", &[])
            .expect("audit")
    };
    let logged = entries(&mut nx);
    let out = nx.kip(r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Refused"} } }"#);
    match out {
        Outcome::Err(e) => assert!(e.message.contains("closing refused"), "{}", e.message),
        other => panic!("the write succeeded: {:?}", other.to_json()),
    }
    assert_eq!(ok(&mut nx, count), before);
    assert_eq!(entries(&mut nx), logged, "no audit entry is left");
    // the connection goes on, and what it writes is committed on return
    ok(
        &mut nx,
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Kept"} } }"#,
    );
    let mut other = m.open();
    assert_eq!(
        ok(
            &mut other,
            r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug", name: "Kept"} }"#
        ),
        serde_json::json!(1)
    );
    assert_eq!(entries(&mut other), logged.map(|n| n + 1));
}

#[test]
fn the_time_limit_stops_a_postgresql_query() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_timeout");
    let mut nx = m.open();
    let mut big = String::from(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "N"} } "#);
    for i in 0..300 {
        big.push_str(&format!(
            r#"CONCEPT ?n{i} {{ {{type: "N", name: "n{i}"}} }} "#
        ));
    }
    big.push('}');
    ok(&mut nx, &big);
    nx.set_timeout(std::time::Duration::from_millis(20));
    // a cross product of 300^4 rows
    let out = nx.kip(
        r#"FIND(COUNT(?a)) WHERE { ?a {type: "N"} ?b {type: "N"} ?c {type: "N"} ?d {type: "N"} FILTER(?a.name != ?b.name && ?b.name != ?c.name && ?c.name != ?d.name) }"#,
    );
    match out {
        Outcome::Err(e) => assert_eq!(e.code.to_string(), "KIP_4001", "{}", e.message),
        Outcome::Ok { .. } => panic!("finished within 20 ms"),
    }
    nx.set_timeout(std::time::Duration::from_secs(30));
    assert_eq!(
        ok(&mut nx, r#"FIND(COUNT(?a)) WHERE { ?a {type: "N"} }"#),
        serde_json::json!(300)
    );
}

#[test]
fn processes_opening_a_new_postgresql_memory_bootstrap_it_once() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_together");
    let loc = m.loc.clone();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let loc = loc.clone();
            std::thread::spawn(move || Nexus::open_postgres(&loc).map(|_| ()))
        })
        .collect();
    for t in threads {
        t.join().expect("thread").expect("open");
    }
    let mut nx = m.open();
    assert_eq!(
        ok(
            &mut nx,
            r#"FIND(COUNT(?p)) WHERE { ?p {type: "Person", name: "$self"} }"#
        ),
        serde_json::json!(1)
    );
    let boots = nx
        .audit_list(&somnus::audit::Filter {
            kind: Some("BOOTSTRAP".into()),
            limit: 10,
            ..Default::default()
        })
        .expect("list");
    assert_eq!(boots.len(), 1);
}

/// `somnus bench --compare --postgres`: every workload runs on somnus and
/// on the hand-written SQL over the same PostgreSQL memory, their answers
/// agree, and the table gains the PostgreSQL section.
#[test]
fn the_comparison_runs_on_postgres_with_the_same_answers_as_its_sql() {
    let Some(url) = server() else { return };
    use somnus::bench::compare::{self, Side, Workload};
    let dir = std::env::temp_dir().join(format!("somnus-compare-pg-{}", std::process::id()));
    let c = compare::run(&compare::Options {
        sizes: vec![300],
        runs: 3,
        dir: dir.clone(),
        reference_max: 0,
        verbose: false,
        postgres: Some(url.clone()),
        workloads: Workload::ALL.to_vec(),
    })
    .expect("the comparison runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(c.mismatches.is_empty(), "{:#?}", c.mismatches);
    for w in Workload::ALL {
        for side in [
            Side::Somnus,
            Side::Sql,
            Side::SomnusPostgres,
            Side::SqlPostgres,
        ] {
            let m = c.get(w, side, 300).expect("measured");
            assert!(m.median > std::time::Duration::ZERO, "{w:?} {side:?}");
        }
    }
    let md = compare::markdown(&c);
    assert!(
        md.contains("**PostgreSQL: 300 concepts, 600 links**"),
        "{md}"
    );
    // the throwaway memory is gone
    let mut client = somnus::store::postgres::Location::parse(&url, None)
        .expect("url")
        .connect()
        .expect("connect");
    let left = somnus::store::postgres::memories(&mut client).expect("memories");
    assert!(
        !left.iter().any(|m| m.starts_with("bench_compare_300_")),
        "{left:?}"
    );
}

/// A bulk statement past one batch of rows (1,000 per statement) writes
/// every concept and link on PostgreSQL, a large attribute whole, names
/// with quotes and any script, as SQLite does.
#[test]
fn a_bulk_upsert_past_one_batch_writes_every_row_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_bulk");
    let mut pg = m.open();
    let mut sqlite = Nexus::open_in_memory().expect("sqlite");
    let big = "é".repeat(100_000);
    let mut cmd = String::from(
        r#"UPSERT { CONCEPT ?k { {type: "$ConceptType", name: "Kit"} } CONCEPT ?s { {type: "$ConceptType", name: "Symptom"} } CONCEPT ?p { {type: "$PropositionType", name: "treats"} } CONCEPT ?h { {type: "Symptom", name: "Headache"} } CONCEPT ?f { {type: "Symptom", name: "Fever"} } }"#,
    );
    for nx in [&mut pg, &mut sqlite] {
        ok(nx, &cmd);
    }
    cmd = String::from("UPSERT {");
    for i in 0..2_500 {
        cmd.push_str(&format!(
            r#" CONCEPT ?k{i} {{ {{type: "Kit", name: "кит-{i} \"q\""}} SET ATTRIBUTES {{ n: {i} }} SET PROPOSITIONS {{ ("treats", {{type: "Symptom", name: "{}"}}) }} }}"#,
            if i % 2 == 0 { "Headache" } else { "Fever" }
        ));
    }
    cmd.push_str(&format!(
        r#" CONCEPT ?big {{ {{type: "Kit", name: "big"}} SET ATTRIBUTES {{ text: "{big}" }} }} }}"#
    ));
    for nx in [&mut pg, &mut sqlite] {
        ok(nx, &cmd);
    }
    assert_eq!(
        ok(&mut pg, r#"FIND(COUNT(?k)) WHERE { ?k {type: "Kit"} }"#),
        serde_json::json!(2_501)
    );
    for q in [
        r#"FIND(?s.name, COUNT(?k)) WHERE { ?s {type: "Symptom"} (?k, "treats", ?s) }"#,
        r#"FIND(?k.attributes.n, ?s.name) WHERE { ?k {type: "Kit", name: "кит-1999 \"q\""} (?k, "treats", ?s) }"#,
        r#"FIND(?k.attributes.text) WHERE { ?k {type: "Kit", name: "big"} }"#,
    ] {
        same(&mut sqlite, &mut pg, q);
    }
}

/// A write's effects (what it created, updated and deleted, named, with
/// the fields an update changed), as a comparable list: PostgreSQL reads
/// them with the statement that closes the audit entry, SQLite in
/// process. Ids differ between the two; names, counts and fields do not.
fn effects(nx: &mut Nexus, cmd: &str, dry_run: bool) -> Value {
    use somnus::protocol::{Arguments, Method, Request};
    let r = nx
        .execute(&Request::new(
            Method::ExecuteKip,
            Arguments {
                command: Some(cmd.into()),
                dry_run,
                ..Default::default()
            },
        ))
        .to_json();
    let Some(mut e) = r.get("effects").cloned() else {
        return serde_json::json!({ "error": r["error"]["code"] });
    };
    let mut items: Vec<Value> = e["elements"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut x| {
            x.as_object_mut().map(|m| m.remove("id"));
            x
        })
        .collect();
    items.sort_by_key(|x| x.to_string());
    // which elements a long list names first follows the order the
    // command touched them in, and PostgreSQL updates a sweep's targets
    // in no particular order: past the list, only its length compares
    e["elements"] = if e.get("more").is_some() {
        Value::from(items.len())
    } else {
        Value::Array(items)
    };
    e
}

#[test]
fn a_write_reports_the_same_effects_on_postgresql_as_on_sqlite() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_effects");
    let mut pg = m.open();
    let mut sqlite = Nexus::open_in_memory().expect("sqlite");
    for cmd in SCRIPT {
        ok(&mut sqlite, cmd);
        ok(&mut pg, cmd);
    }
    let mut bulk = String::from("UPSERT {");
    for i in 0..60 {
        bulk.push_str(&format!(
            r#" CONCEPT ?b{i} {{ {{type: "Drug", name: "B{i}"}} SET ATTRIBUTES {{ dose: {i} }} }}"#
        ));
    }
    bulk.push('}');
    let writes: &[&str] = &[
        // created, with a link to a new concept
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk: 2 } SET PROPOSITIONS { ("treats", {type: "Drug", name: "Aspirin"}) } } }"#,
        // again: nothing changes
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk: 2 } SET PROPOSITIONS { ("treats", {type: "Drug", name: "Aspirin"}) } } }"#,
        // updated: the fields that changed
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk: 3, note: "new" } } }"#,
        r#"UPDATE ?d SET ATTRIBUTES { risk: 4 } WHERE { ?d {type: "Drug", name: "Naproxen"} }"#,
        // a link's metadata
        r#"UPSERT { PROPOSITION ?l { ({type: "Drug", name: "Naproxen"}, "treats", {type: "Drug", name: "Aspirin"}) } WITH METADATA { confidence: 0.4 } }"#,
        // created and updated in one command
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { dose: 650 } } CONCEPT ?n { {type: "Drug", name: "Codeine"} } }"#,
        // many: counted, the first listed
        &bulk,
        r#"UPDATE ?d SET ATTRIBUTES { sweep: true } WHERE { ?d {type: "Drug"} }"#,
        // deleted: a link, then a concept with its links
        r#"DELETE PROPOSITIONS ?l WHERE { ?l ({type: "Drug", name: "Naproxen"}, "treats", ?x) }"#,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Ibuprofen"} }"#,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Codeine"} }"#,
        // made again after its delete; a failed write
        r#"UPSERT { CONCEPT ?n { {type: "Drug", name: "Codeine"} SET ATTRIBUTES { dose: 30 } } }"#,
        r#"UPSERT { CONCEPT ?n { {type: "Nothing", name: "Codeine"} } }"#,
    ];
    for dry_run in [true, false] {
        for cmd in writes {
            let (a, b) = (
                effects(&mut sqlite, cmd, dry_run),
                effects(&mut pg, cmd, dry_run),
            );
            assert_eq!(a, b, "effects differ (dry run: {dry_run}) on\n{cmd}");
        }
    }
}

#[path = "kip_cases/disconnected.rs"]
mod disconnected;

/// §3.4 on PostgreSQL: a clause sharing no variable with FIND constrains
/// the answer exactly as on SQLite (tests/engine.rs checks the answers).
#[test]
fn every_clause_constrains_on_postgresql_as_on_sqlite() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_and");
    let mut pg = m.open();
    let mut sqlite = Nexus::open_in_memory().expect("sqlite");
    let setup = [
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Drug"} } CONCEPT ?s { {type: "$ConceptType", name: "Symptom"} } CONCEPT ?h { {type: "$ConceptType", name: "Herb"} } CONCEPT ?p { {type: "$PropositionType", name: "treats"} } }"#,
        r#"UPSERT { CONCEPT ?h { {type: "Symptom", name: "Headache"} } CONCEPT ?f { {type: "Symptom", name: "Fever"} }
           CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 2 } SET PROPOSITIONS { ("treats", ?h) ("treats", ?f) } }
           CONCEPT ?i { {type: "Drug", name: "Ibuprofen"} SET ATTRIBUTES { risk_level: 3 } SET PROPOSITIONS { ("treats", ?h) } } }"#,
    ];
    for cmd in setup {
        same(&mut sqlite, &mut pg, cmd);
    }
    for (cmd, want) in disconnected::DISCONNECTED {
        let got = ok(&mut pg, cmd);
        let want: Value = serde_json::from_str(want).expect("json");
        assert_eq!(got, want, "{cmd}");
        same(&mut sqlite, &mut pg, cmd);
    }
    same(
        &mut sqlite,
        &mut pg,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug"} ?h {type: "Herb"} }"#,
    );
    assert_eq!(
        ok(&mut pg, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#),
        serde_json::json!(2)
    );
}

/// The read log on PostgreSQL: a served FIND names the elements it bound,
/// its reads are counted per element and caller, and the retention cuts
/// by time and by count as on SQLite.
#[test]
fn the_read_log_counts_and_prunes_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_reads");
    let mut pg = m.open();
    ok(
        &mut pg,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Drug"} } CONCEPT ?a { {type: "Drug", name: "Aspirin"} } CONCEPT ?b { {type: "Drug", name: "Ibuprofen"} } }"#,
    );
    let req = somnus::protocol::Request::command(r#"FIND(?d.name) WHERE { ?d {type: "Drug"} }"#);
    let (_, served) = pg.execute_served(&req);
    assert_eq!(served.len(), 1);
    assert_eq!(served[0].kind, "FIND");
    assert_eq!(served[0].rows, 2);
    let ids = served[0].elements.clone();
    assert_eq!(ids.len(), 2);
    let logged = |at: &str| somnus::audit::reads::Logged {
        at: at.into(),
        caller: "scout".into(),
        channel: "http".into(),
        served: served[0].clone(),
    };
    pg.record_reads(&[
        logged("2026-01-01T00:00:00.000Z"),
        logged("2026-06-01T00:00:00.000Z"),
        logged("2026-07-01T00:00:00.000Z"),
        logged("2026-08-01T00:00:00.000Z"),
    ])
    .expect("record");
    let u = somnus::audit::reads::use_of(pg.db(), ids[0]).expect("use");
    assert_eq!(
        (u.count, u.last.as_deref()),
        (4, Some("2026-08-01T00:00:00.000Z"))
    );
    let many = somnus::audit::reads::uses(pg.db(), &ids).expect("uses");
    assert_eq!(many.get(&ids[1]).map(|u| u.0), Some(4));
    let p = pg
        .prune_reads("2026-05-01T00:00:00.000Z", Some(2), false)
        .expect("prune");
    assert_eq!(p.requests, 2);
    let left = somnus::audit::reads::recent(pg.db(), &Default::default(), 10).expect("recent");
    assert_eq!(
        left.iter().map(|r| r.at.as_str()).collect::<Vec<_>>(),
        ["2026-08-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z"]
    );
    assert_eq!(
        somnus::audit::reads::use_of(pg.db(), ids[0])
            .expect("use")
            .count,
        4
    );
}

/// SEARCH on PostgreSQL asks its `simple` index for the question's stems
/// as prefixes, less its stop words: inflections meet both ways there too.
#[test]
fn search_finds_inflections_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_search");
    let mut pg = m.open();
    ok(
        &mut pg,
        r#"UPSERT { CONCEPT ?a { {type: "Event", name: "D1:1"} SET ATTRIBUTES { content_summary: "I volunteer at the animal shelter." } } CONCEPT ?b { {type: "Event", name: "D1:2"} SET ATTRIBUTES { content_summary: "We went camping by the lake." } } CONCEPT ?c { {type: "Event", name: "D1:3"} SET ATTRIBUTES { content_summary: "What did you do? What was it?" } } }"#,
    );
    let names = |v: Value| -> Vec<String> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|x| x["name"].as_str().expect("name").to_string())
            .collect()
    };
    let v = ok(
        &mut pg,
        r#"SEARCH CONCEPT "Which shelters did she volunteer at?" WITH TYPE "Event" LIMIT 5"#,
    );
    assert_eq!(names(v), ["D1:1"]);
    let v = ok(
        &mut pg,
        r#"SEARCH CONCEPT "camps" WITH TYPE "Event" LIMIT 5"#,
    );
    assert_eq!(names(v), ["D1:2"]);
}

#[path = "kip_cases/search_window.rs"]
mod search_window;

#[path = "kip_cases/search_attributes.rs"]
mod search_attributes;

/// What an element's other attributes say is found after its own text,
/// never through a verbatim file or a time stamp, on PostgreSQL as on
/// SQLite.
#[test]
fn other_attributes_are_found_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_search_rest");
    let mut pg = m.open();
    search_attributes::other_attributes_are_found(&mut pg);
}

/// A memory from before the other attributes were indexed (schema 21)
/// finds them, and its accented words without their accents, once it is
/// opened again.
#[test]
fn a_postgresql_memory_from_before_other_attributes_counted_finds_them() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_search_rest_old");
    {
        let mut pg = m.open();
        for c in search_attributes::PROFILE {
            search_attributes::kip(&mut pg, c);
        }
    }
    // the search document as schema 21 kept it
    let mut c = m.loc.connect().expect("connect");
    c.batch_execute(
        "ALTER TABLE concepts DROP COLUMN search;
         DROP FUNCTION somnus_rest(jsonb);
         DROP FUNCTION somnus_fold(text);
         ALTER TABLE concepts ADD COLUMN search tsvector GENERATED ALWAYS AS (
             setweight(to_tsvector('simple'::regconfig, name), 'A')
             || setweight(to_tsvector('simple'::regconfig, COALESCE(attributes ->> 'description', '')), 'B')
             || setweight(to_tsvector('simple'::regconfig, COALESCE(attributes ->> 'content_summary', '')), 'C')
         ) STORED;
         CREATE INDEX concepts_search ON concepts USING GIN (search);
         UPDATE meta SET value = '21' WHERE key = 'schema_version';",
    )
    .expect("downgrade");
    drop(c);
    let mut pg = m.open();
    assert_eq!(
        search_attributes::search_all(&mut pg, "kiln"),
        ["Lucía Ortega"]
    );
    // and what is written with accents, without them (schema 23)
    assert_eq!(
        search_attributes::search_all(&mut pg, "Lavapies"),
        ["Lucía Ortega"]
    );
}

/// A day named in the question brings in what happened that day, on
/// PostgreSQL as on SQLite.
#[test]
fn a_day_named_in_the_question_finds_that_day_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_days");
    let mut pg = m.open();
    search_window::a_day_named_finds_that_day(&mut pg);
}

/// `@since` and `@until` keep the days asked, on PostgreSQL as on SQLite.
#[test]
fn a_search_keeps_the_days_asked_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_window");
    let mut pg = m.open();
    search_window::a_search_keeps_the_days_asked(&mut pg);
}

mod paging;

/// Paging as on SQLite (see `paging`).
#[test]
fn pages_start_after_the_last_row_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_paging");
    let mut pg = m.open();
    paging::pages_start_after_the_last_row(&mut pg);
}

mod plan_cache;

/// Kept plans on PostgreSQL (see `plan_cache`).
#[test]
fn kept_plans_answer_as_planning_afresh_on_postgresql() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "e_plan_cache");
    let mut pg = m.open();
    plan_cache::kept_plans_answer_as_planning_afresh(&mut pg);
}
