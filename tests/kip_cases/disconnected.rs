//! Queries whose WHERE has a clause sharing no variable with FIND, and
//! the answers §3.4 gives on the memory of `tests/engine.rs` (two Drugs,
//! two Symptoms, the type Herb with no instance).

/// §3.4: all WHERE clauses are AND-ed. A clause that shares no variable
/// with what FIND projects still has to hold: a guard that fails leaves no
/// solution; one that holds neither multiplies nor drops any.
pub const DISCONNECTED: &[(&str, &str)] = &[
    // a FILTER on an unprojected variable that nothing satisfies
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} ?s {type: "Symptom"} FILTER(?s.name == "no such symptom") }"#,
        "[]",
    ),
    // the same guard, satisfied
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} ?s {type: "Symptom"} FILTER(?s.name == "Fever") } ORDER BY ?d.name ASC"#,
        r#"["Aspirin","Ibuprofen"]"#,
    ),
    // a clause on a declared type with no instance
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} ?h {type: "Herb"} }"#,
        "[]",
    ),
    // a disconnected link pattern that matches, then one that does not
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} (?x, "treats", {type: "Symptom", name: "Fever"}) } ORDER BY ?d.name ASC"#,
        r#"["Aspirin","Ibuprofen"]"#,
    ),
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Ibuprofen"} (?x, "treats", ?y) FILTER(?y.name == "Nausea") }"#,
        "[]",
    ),
    // counting is not multiplied by a guard that holds
    (
        r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} ?s {type: "Symptom"} }"#,
        "2",
    ),
    (
        r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} ?s {type: "Symptom"} FILTER(?s.name == "none") }"#,
        "0",
    ),
    // an uncorrelated NOT whose pattern holds excludes every solution ...
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} NOT { ?s {type: "Symptom"} } }"#,
        "[]",
    ),
    // ... and one whose pattern does not hold excludes none
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} NOT { ?s {type: "Symptom"} FILTER(?s.name == "none") } } ORDER BY ?d.name ASC"#,
        r#"["Aspirin","Ibuprofen"]"#,
    ),
    // a guard inside NOT that shares ?d stays correlated
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} NOT { (?d, "treats", {type: "Symptom", name: "Fever"}) ?h {type: "Herb"} } } ORDER BY ?d.name ASC"#,
        r#"["Aspirin","Ibuprofen"]"#,
    ),
    // an OPTIONAL that shares nothing keeps every solution
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} OPTIONAL { ?s {type: "Symptom"} FILTER(?s.name == "none") } } ORDER BY ?d.name ASC"#,
        r#"["Aspirin","Ibuprofen"]"#,
    ),
    // a UNION branch with a failing guard adds nothing; the other answers
    (
        r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Aspirin"} UNION { ?d {type: "Drug", name: "Ibuprofen"} ?h {type: "Herb"} } }"#,
        r#"["Aspirin"]"#,
    ),
];
