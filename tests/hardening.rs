//! Hardening of the engine and the CLI, tried as an attacker and as a
//! careless operator would: KIP text in, JSON out; processes racing on one
//! file; the CLI's output bytes. Every test here failed before the fix it
//! guards.

mod common;
use common::*;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

// ------------------------------------------------------------------ 2

#[test]
fn every_update_target_is_checked_for_protection() {
    let mut nx = somnus::Nexus::open_in_memory().expect("open");
    let mut run = |c: &str| nx.kip(c).to_json();
    let v = run(
        r#"UPSERT { CONCEPT ?k { {type: "$PropositionType", name: "knows"} SET ATTRIBUTES { description: "x" } } }"#,
    );
    assert!(v.get("error").is_none(), "{v}");
    let people: String = (0..70)
        .map(|i| format!("CONCEPT ?p{i} {{ {{type: \"Person\", name: \"p{i}\"}} }} "))
        .collect();
    let links: String = (0..70).map(|i| format!("(\"knows\", ?p{i}) ")).collect();
    let v = run(&format!(
        "UPSERT {{ {people} CONCEPT ?s {{ {{type: \"Person\", name: \"$self\"}} SET PROPOSITIONS {{ {links} }} }} }}"
    ));
    assert!(v.get("error").is_none(), "{v}");
    let before =
        run(r#"FIND(?s.attributes.core_directives) WHERE { ?s {type: "Person", name: "$self"} }"#);
    // 70 harmless targets come first; the protected one is the 71st
    let v = run(
        r#"UPDATE ?x SET ATTRIBUTES {core_directives: []} WHERE { ?x ({type:"Person",name:"$self"}, "knows", ?o) UNION { ?x {type:"Person", name:"$self"} } }"#,
    );
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
    let after =
        run(r#"FIND(?s.attributes.core_directives) WHERE { ?s {type: "Person", name: "$self"} }"#);
    assert_eq!(before, after);
    // a protected definition among many targets, and a link anchoring one
    let v = run(
        r#"UPDATE ?t SET ATTRIBUTES {description: "mine now"} WHERE { ?t {type: "$ConceptType"} }"#,
    );
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
    let v = run(r#"UPDATE ?l SET METADATA {note: "x"} WHERE { ?l (?s, "belongs_to_domain", ?d) }"#);
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
    // DELETE and MERGE check every target too
    let v = run(r#"DELETE ATTRIBUTES {"description"} FROM ?t WHERE { ?t {type: "$ConceptType"} }"#);
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
}

// ------------------------------------------------------------------ 3

#[test]
fn eight_processes_creating_one_memory_leave_one_whole_memory() {
    let dir = tmp("race");
    let mut shapes = std::collections::BTreeSet::new();
    for trial in 0..8 {
        let db = dir.join(format!("m{trial}.db"));
        let kids: Vec<Child> = (0..8)
            .map(|_| {
                Command::new(BIN)
                    .arg("--db")
                    .arg(&db)
                    .args(["kip", "DESCRIBE PRIMER"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        for k in kids {
            let out = k.wait_with_output().expect("wait");
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            assert!(
                out.status.success() && v.get("result").is_some(),
                "trial {trial}: {} {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let types = kip(
            &db,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "$ConceptType"} }"#,
        );
        let boots = kip(&db, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Domain"} }"#);
        shapes.insert((types["result"].to_string(), boots["result"].to_string()));
        // and it takes writes
        let v = kip(
            &db,
            r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Ada"} } }"#,
        );
        assert!(v.get("error").is_none(), "trial {trial}: {v}");
    }
    assert_eq!(
        shapes.len(),
        1,
        "every memory bootstrapped exactly once: {shapes:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 8

#[test]
fn human_output_never_carries_terminal_escapes() {
    let dir = tmp("escapes");
    let db = dir.join("m.db");
    let evil = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    let params = json!({ "n": format!("Eve{evil}") }).to_string();
    let out = somnus(
        &db,
        &[
            "kip",
            "--params",
            &params,
            &format!("UPSERT {{ CONCEPT ?p {{ {{type: \"Person\", name: :n}} }} }} // {evil}"),
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v.get("error").is_none(), "{v}");
    let id = v["result"]["upsert_concept_nodes"][0]
        .as_str()
        .expect("id")
        .to_string();
    for args in [
        vec!["audit"],
        vec!["audit", "show", "2"],
        vec!["why", id.as_str()],
        vec!["audit", "--json"],
    ] {
        let out = somnus(&db, &args);
        assert!(
            !out.stdout.contains(&0x1b) && !out.stdout.contains(&0x07),
            "{args:?} printed a raw escape: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let out = somnus(&db, &["audit"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\\x1b]0"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 9

#[test]
fn sleep_and_health_parameters_are_validated_once_for_every_caller() {
    let dir = tmp("params");
    let db = dir.join("m.db");
    let out = somnus(&db, &["demo", "--no-console"]);
    ok(&out);
    let before = kip(&db, "EXPORT ?l WHERE { ?l (?s, ?p, ?o) } LIMIT 100000");
    for params in [
        r#"{"memory_strength_decay_factor": -5}"#,
        r#"{"stale_event_threshold_days": 9223372036854775807}"#,
        r#"{"archive_ttl_days": 9223372036854775807}"#,
        r#"{"task_ttl_days": -1}"#,
        r#"{"proposal_cap": "lots"}"#,
        r#"{"no_such_parameter": 1}"#,
    ] {
        let out = somnus(&db, &["sleep", "--params", params]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{params}: {err}");
        assert!(!err.contains("panicked"), "{params}: {err}");
        assert!(err.contains("--params"), "{params}: {err}");
    }
    let after = kip(&db, "EXPORT ?l WHERE { ?l (?s, ?p, ?o) } LIMIT 100000");
    assert_eq!(before, after, "a refused cycle changed the memory");
    let out = somnus(&db, &["health", "--stale-days", "9223372036854775807"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("36500"), "{err}");
    // the instructions' own name for the factor is accepted
    let out = somnus(
        &db,
        &[
            "sleep",
            "--scope",
            "daydream",
            "--params",
            r#"{"confidence_decay_factor": 0.9}"#,
        ],
    );
    ok(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 10

#[test]
fn numbers_at_the_edges_never_wrap() {
    let mut nx = somnus::Nexus::open_in_memory().expect("open");
    let mut run = |c: &str| nx.kip(c).to_json();
    let v = run(
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Account"} }
           CONCEPT ?a { {type: "Account", name: "a"} SET ATTRIBUTES { balance: 9223372036854775807 } }
           CONCEPT ?b { {type: "Account", name: "b"} SET ATTRIBUTES { balance: 1 } } }"#,
    );
    assert!(v.get("error").is_none(), "{v}");
    let v = run(r#"FIND(SUM(?a.attributes.balance)) WHERE { ?a {type: "Account"} }"#);
    assert_eq!(v["result"], json!(9223372036854775808u64), "{v}");
    for limit in ["9223372036854775807", "18446744073709551615"] {
        let v = run(&format!(
            r#"FIND(?a.name) WHERE {{ ?a {{type: "Account"}} }} LIMIT {limit}"#
        ));
        assert_eq!(
            v["result"].as_array().map(Vec::len),
            Some(2),
            "LIMIT {limit}: {v}"
        );
    }
    use base64::Engine;
    let cursor =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("somnus:18446744073709551615");
    let v = run(&format!(
        r#"FIND(?a.name) WHERE {{ ?a {{type: "Account"}} }} LIMIT 1 CURSOR "{cursor}""#
    ));
    assert_eq!(v["error"]["code"], "KIP_1001", "{v}");
    let v = run(r#"DESCRIBE CONCEPT TYPES LIMIT 18446744073709551615"#);
    assert!(v.get("error").is_none(), "{v}");
}

// ------------------------------------------------------------------ 11, 12

#[test]
fn bootstrap_and_core_domains_survive_any_caller() {
    let dir = tmp("boot");
    let db = dir.join("m.db");
    let count = |db: &Path| {
        kip(db, r#"FIND(COUNT(?c)) WHERE { ?c {type: "$ConceptType"} }"#)["result"].clone()
    };
    let types = count(&db);
    for to in ["#0", "#-5", "1970-01-01T00:00:00Z"] {
        let out = somnus(&db, &["rollback", "--to", to]);
        assert_ne!(
            out.status.code(),
            Some(0),
            "rollback --to {to} was accepted"
        );
        assert_eq!(count(&db), types, "rollback --to {to} undid the bootstrap");
    }
    let out = somnus(&db, &["rollback", "1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("bootstrap"));
    for d in ["Unsorted", "Archived", "System", "CoreSchema"] {
        let v = kip(
            &db,
            &format!(r#"DELETE CONCEPT ?n DETACH WHERE {{ ?n {{type:"Domain", name:"{d}"}} }}"#),
        );
        assert_eq!(v["error"]["code"], "KIP_3004", "{d}: {v}");
        let v = kip(
            &db,
            &format!(
                r#"UPDATE ?n SET ATTRIBUTES {{description: "x"}} WHERE {{ ?n {{type:"Domain", name:"{d}"}} }}"#
            ),
        );
        assert_eq!(v["error"]["code"], "KIP_3004", "{d}: {v}");
    }
    let out = somnus(&db, &["health"]);
    ok(&out);
    let out = somnus(&db, &["sleep", "--scope", "quick"]);
    ok(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 13

#[test]
fn mistakes_get_errors_that_say_what_is_wrong() {
    let dir = tmp("errors");
    let db = dir.join("m.db");
    kip(&db, "DESCRIBE PRIMER");
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).to_string();

    // an empty API key is refused before anything listens
    let out = somnus(&db, &["serve", "--addr", "0.0.0.0:0", "--api-key", ""]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("empty"), "{}", stderr(&out));

    // a SQLite file of another program is left alone unless adopted
    let foreign = dir.join("other.db");
    foreign_file(&foreign);
    let out = somnus(&foreign, &["kip", "DESCRIBE PRIMER"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("not a somnus memory"),
        "{}",
        stderr(&out)
    );
    let out = somnus(&foreign, &["--adopt", "kip", "DESCRIBE PRIMER"]);
    ok(&out);

    // filters that are not understood say so
    let out = somnus(&db, &["audit", "--since", "garbage"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("not a time"), "{}", stderr(&out));
    let out = somnus(&db, &["audit", "--since", "2000-01-01"]);
    ok(&out);
    let out = somnus(&db, &["proposals", "refresh", "999"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    let out = somnus(&db, &["proposals", "policy", "nonsense", "auto"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("no item class"), "{}", stderr(&out));

    // one bad line in an rpc session is answered, and the session goes on
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .arg("rpc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("rpc");
    {
        let mut input = child.stdin.take().expect("stdin");
        let good = br#"{"method":"execute_kip_readonly","params":{"command":"DESCRIBE DOMAINS"}}"#;
        input.write_all(good).expect("w");
        input.write_all(b"\n\xff\xfe not utf-8\n").expect("w");
        input.write_all(good).expect("w");
        input.write_all(b"\n").expect("w");
    }
    let out = child.wait_with_output().expect("rpc out");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].get("result").is_some() && lines[2].get("result").is_some());
    assert_eq!(lines[1]["error"]["code"], "KIP_1001");

    // REGEX on a number, and a proposition id whose predicate is wrong
    let v = kip(
        &db,
        r#"FIND(?c.name) WHERE { ?c {type:"Domain"} FILTER(REGEX(?c.name, 5)) }"#,
    );
    assert_eq!(v["error"]["code"], "KIP_1001", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("string"),
        "{v}"
    );
    let link = kip(
        &db,
        r#"FIND(?l) WHERE { ?l (?s, "belongs_to_domain", ?d) } LIMIT 1"#,
    );
    let id = link["result"][0]["id"]
        .as_str()
        .expect("a link id")
        .to_string();
    let n = id.split(':').nth(1).expect("number");
    let v = kip(&db, &format!(r#"FIND(?l) WHERE {{ ?l (id: "P:{n}:x") }}"#));
    assert_eq!(v["error"]["code"], "KIP_3002", "{v}");
    let v = kip(&db, &format!(r#"FIND(?l) WHERE {{ ?l (id: "{id}") }}"#));
    assert_eq!(v["result"].as_array().map(Vec::len), Some(1), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Makes a SQLite file with another program's table, through the SQLite
/// the engine links (an in-process connection).
fn foreign_file(path: &Path) {
    let nx = somnus::Nexus::open_in_memory().expect("mem");
    let sql = format!(
        "ATTACH '{}' AS other; CREATE TABLE other.invoices(id INTEGER); DETACH other;",
        path.display()
    );
    nx.connection_for_checks()
        .expect("a SQLite memory")
        .execute_batch(&sql)
        .expect("foreign file");
}

#[test]
fn a_file_this_user_cannot_write_is_read_with_readonly_and_refused_without() {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false);
    if !is_root || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and setpriv to act as another user");
        return;
    }
    let dir = tmp("perm");
    let db = dir.join("m.db");
    kip(
        &db,
        r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Ada"} } }"#,
    );
    for p in [&dir, &db] {
        let _ = Command::new("chmod").args(["a+rX,go-w"]).arg(p).status();
    }
    let as_nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args([
                "--reuid",
                "65534",
                "--regid",
                "65534",
                "--clear-groups",
                BIN,
                "--db",
            ])
            .arg(&db)
            .args(args)
            .output()
            .expect("setpriv")
    };
    let out = as_nobody(&[
        "kip",
        "--readonly",
        r#"FIND(?p.name) WHERE { ?p {type: "Person", name: "Ada"} }"#,
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        v["result"],
        json!(["Ada"]),
        "{v} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = as_nobody(&[
        "kip",
        r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Bob"} } }"#,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("not writable"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pruned_audit_images_are_refused_by_rollback_by_name() {
    let dir = tmp("prune");
    let db = dir.join("m.db");
    for n in ["a", "b", "c"] {
        let v = kip(
            &db,
            &format!(
                r#"UPSERT {{ CONCEPT ?p {{ {{type: "Person", name: "{n}"}} SET ATTRIBUTES {{ big: "{}" }} }} }}"#,
                "x".repeat(10_000)
            ),
        );
        assert!(v.get("error").is_none(), "{v}");
        let v = kip(
            &db,
            &format!(
                r#"UPDATE ?p SET ATTRIBUTES {{ big: "y" }} WHERE {{ ?p {{type: "Person", name: "{n}"}} }}"#
            ),
        );
        assert!(v.get("error").is_none(), "{v}");
    }
    let out = somnus(&db, &["audit", "--json", "--limit", "1"]);
    let last: Value = serde_json::from_slice(&out.stdout).expect("json");
    let last = last[0]["id"].as_i64().expect("id");
    let through = format!("#{}", last - 2);
    let out = somnus(&db, &["audit", "prune", &through, "--dry-run"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("would prune"));
    let out = somnus(&db, &["audit", "prune", &through]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("pruned"), "{said}");
    let out = somnus(&db, &["rollback", &(last - 2).to_string()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("pruned"), "{err}");
    let out = somnus(&db, &["rollback", &last.to_string()]);
    ok(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ 39.9

#[test]
fn a_core_schema_definition_is_never_deleted_merged_or_taken_out_of_core_schema() {
    let mut nx = somnus::Nexus::open_in_memory().expect("open");
    let mut run = |c: &str| nx.kip(c).to_json();
    let count = |run: &mut dyn FnMut(&str) -> Value, ty: &str| {
        run(&format!(
            r#"FIND(COUNT(?t)) WHERE {{ ?t {{type: "$ConceptType", name: "{ty}"}} }}"#
        ))["result"]
            .clone()
    };
    // the cycle's own types, and one the agent filed in CoreSchema
    let v = run(
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Recipe"} SET ATTRIBUTES { description: "a dish" } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "CoreSchema"}) } } }"#,
    );
    assert!(v.get("error").is_none(), "{v}");
    for ty in ["SleepTask", "Event", "Recipe"] {
        let v = run(&format!(
            r#"DELETE CONCEPT ?t DETACH WHERE {{ ?t {{type: "$ConceptType", name: "{ty}"}} }}"#
        ));
        assert_eq!(v["error"]["code"], "KIP_3004", "{ty}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("CoreSchema definition"),
            "{v}"
        );
        assert_eq!(count(&mut run, ty), json!(1), "{ty} is still there");
    }
    // a predicate definition, and every definition at once
    let v = run(
        r#"DELETE CONCEPT ?p DETACH WHERE { ?p {type: "$PropositionType", name: "derived_from"} }"#,
    );
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
    let v = run(r#"DELETE CONCEPT ?t DETACH WHERE { ?t {type: "$ConceptType"} }"#);
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
    // the way round: first out of CoreSchema, then delete
    let v = run(
        r#"DELETE PROPOSITIONS ?l WHERE { ?t {type: "$ConceptType", name: "Recipe"} ?l (?t, "belongs_to_domain", {type: "Domain", name: "CoreSchema"}) }"#,
    );
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
    // merged away into another definition
    let v = run(
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Dish"} SET ATTRIBUTES { description: "a dish" } } }"#,
    );
    assert!(v.get("error").is_none(), "{v}");
    let v = run(
        r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "$ConceptType", name: "Recipe"} ?b {type: "$ConceptType", name: "Dish"} }"#,
    );
    assert_eq!(v["error"]["code"], "KIP_3004", "{v}");
    assert_eq!(count(&mut run, "Recipe"), json!(1));
    // a definition outside CoreSchema is the agent's own to remove, and a
    // CoreSchema definition still evolves
    let v = run(r#"DELETE CONCEPT ?t DETACH WHERE { ?t {type: "$ConceptType", name: "Dish"} }"#);
    assert!(v.get("error").is_none(), "{v}");
    let v = run(
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Recipe"} SET ATTRIBUTES { description: "a dish and how to cook it" } } }"#,
    );
    assert!(v.get("error").is_none(), "{v}");
}
