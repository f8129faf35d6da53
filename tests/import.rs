//! `somnus import moltbot DIR` on a fixture folder built from the formats
//! the Moltbot architecture shows, awkward cases included (a block and an
//! entry type it does not define, a heading without a time, an entity file
//! without its header, relations to entities with no file, one person in
//! two files, a decay score for nothing): counts by type, provenance,
//! what is reported, idempotent re-import, dry run, rollback, and the
//! sleep cycle's proposals on the imported memory.

use serde_json::{Value, json};
use somnus::Nexus;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_somnus");

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/moltbot")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("somnus-import-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    dir
}

fn somnus(db: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("somnus");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let r = nx.kip(cmd).to_json();
    assert!(r.get("error").is_none(), "{cmd}: {r}");
    r["result"].clone()
}

fn count(nx: &mut Nexus, ty: &str) -> i64 {
    let r = kip(
        nx,
        &format!(r#"FIND(COUNT(?c)) WHERE {{ ?c {{type: "{ty}"}} }}"#),
    );
    r.as_i64().unwrap_or(0)
}

/// Every concept and link, as `somnus` stores them (versions aside).
fn snapshot(db: &Path) -> Vec<(i64, String, String, String)> {
    let nx = Nexus::open(db).expect("open");
    let c = nx.connection_for_checks();
    let mut st = c
        .prepare("SELECT id, type, name, attributes || metadata FROM concepts UNION ALL SELECT id, predicate, CAST(subject AS TEXT) || '>' || CAST(object AS TEXT), attributes || metadata FROM propositions ORDER BY 1")
        .expect("prepare");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("query")
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_moltbot_folder_imports_with_provenance_once_and_undoes_as_one_group() {
    let dir = tmp("moltbot");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["kip", "DESCRIBE PRIMER"]);
    assert!(ok, "{said}");
    let before = snapshot(&db);

    // a dry run writes nothing and says what it would
    let fixture = fixture();
    let folder = fixture.to_string_lossy();
    let (ok, said) = somnus(&db, &["import", "moltbot", &folder, "--dry-run"]);
    assert!(ok, "{said}");
    assert!(said.contains("would import"), "{said}");
    assert!(said.contains("would create 57 elements"), "{said}");
    assert_eq!(snapshot(&db), before);

    let (ok, said) = somnus(&db, &["import", "moltbot", &folder]);
    assert!(ok, "{said}");
    assert!(said.contains("created 57 elements"), "{said}");
    // what it did not understand is reported, with file and line
    for note in [
        "MEMORY.md:17: block `Scratchpad`",
        "memory/episodes/2026-02-01.md:7: entry type `brainstorm`",
        "memory/episodes/2026-02-01.md:9: `## Late evening thoughts`",
        "concept--oauth2-pkce.md: no header comment",
        "`concept--brainstorm-first` has no entity file",
        "`concept--letta-sleep-time` has no entity file",
        "`episode:2026-01-05:08:00` scores nothing",
    ] {
        assert!(said.contains(note), "{note}:\n{said}");
    }

    let mut nx = Nexus::open(&db).expect("open");
    // counts by type
    assert_eq!(count(&mut nx, "Event"), 7);
    assert_eq!(count(&mut nx, "Skill"), 1);
    assert_eq!(count(&mut nx, "Preference"), 1);
    assert_eq!(count(&mut nx, "Insight"), 2);
    assert_eq!(count(&mut nx, "Project"), 1);
    assert_eq!(count(&mut nx, "Tool"), 1);
    // (the user from MEMORY.md and person--alex are one concept; the
    // second file's Alexander Rivera is another, for the cycle to judge)
    let people = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.name != "$self" && ?p.name != "$system") }"#,
    );
    assert_eq!(people, json!(["Alex Rivera", "Alexander Rivera"]));

    // provenance and the original times on a sample
    let e = kip(
        &mut nx,
        r#"FIND(?e) WHERE { ?e {type: "Event", name: "Episode 2026-02-02 14:30"} }"#,
    );
    let e = &e[0];
    assert_eq!(
        e["metadata"]["source"],
        json!("moltbot:memory/episodes/2026-02-02.md:2")
    );
    assert_eq!(e["metadata"]["created_at"], json!("2026-02-02T14:30:00Z"));
    assert_eq!(e["attributes"]["start_time"], json!("2026-02-02T14:30:00Z"));
    assert_eq!(e["attributes"]["event_class"], json!("decision"));
    assert_eq!(e["metadata"]["confidence"], json!(0.9));
    // from meta/decay-scores.json
    assert_eq!(e["metadata"]["memory_strength"], json!(0.92));
    assert_eq!(e["metadata"]["access_count"], json!(2));
    let alex = kip(
        &mut nx,
        r#"FIND(?p) WHERE { ?p {type: "Person", name: "Alex Rivera"} }"#,
    );
    let alex = &alex[0];
    assert_eq!(alex["attributes"]["relationship_to_self"], json!("user"));
    assert_eq!(alex["attributes"]["timezone"], json!("Europe/Lisbon"));
    assert_eq!(alex["metadata"]["source"], json!("moltbot:MEMORY.md:3"));
    assert_eq!(
        alex["metadata"]["also_from"],
        json!(["moltbot:memory/graph/entities/person--alex.md:1"])
    );
    assert_eq!(alex["metadata"]["pinned"], json!(true));
    // core blocks on $self, critical facts pinned
    let me = kip(
        &mut nx,
        r#"FIND(?s.attributes.active_context) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(me[0][1], json!("Open decisions: decay function parameters"));
    let fact = kip(
        &mut nx,
        r#"FIND(?i.metadata.pinned) WHERE { ?i {type: "Insight", name: "Alex is allergic to penicillin"} }"#,
    );
    assert_eq!(fact, json!([true]));
    // links: the index's edges and the files' relations
    let develops = kip(
        &mut nx,
        r#"FIND(?l.metadata.confidence, ?l.metadata.created_at) WHERE { ?l ({type: "Person", name: "Alex Rivera"}, "develops", {type: "Project", name: "Moltbot Memory System"}) }"#,
    );
    assert_eq!(develops, json!([[0.9, "2026-01-15"]]));
    let prefers = kip(
        &mut nx,
        r#"FIND(?o.name) WHERE { ?l ({type: "Person", name: "Alex Rivera"}, "prefers", ?o) } ORDER BY ?o.name ASC"#,
    );
    assert_eq!(
        prefers,
        json!([
            "Brainstorm First",
            "User prefers brainstorming before implementation"
        ])
    );
    let skill = kip(
        &mut nx,
        r#"FIND(?s.attributes.steps) WHERE { ?s {type: "Skill", name: "how-to-deploy"} }"#,
    );
    assert_eq!(
        skill[0][0],
        json!("Run test suite first (user insists on this)")
    );
    drop(nx);

    // importing again changes nothing
    let after = snapshot(&db);
    let (ok, said) = somnus(&db, &["import", "moltbot", &folder]);
    assert!(ok, "{said}");
    assert!(said.contains("created 0 elements, updated 0"), "{said}");
    assert_eq!(snapshot(&db), after);

    // one group: rolled back, the memory is as before
    let (ok, said) = somnus(&db, &["rollback", "--group", "import:moltbot"]);
    assert!(ok, "{said}");
    let back: Vec<_> = snapshot(&db);
    assert_eq!(
        back.iter().map(|r| (&r.1, &r.2)).collect::<Vec<_>>(),
        before.iter().map(|r| (&r.1, &r.2)).collect::<Vec<_>>(),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// After an import, a full sleep cycle judges the imported memory: the
/// person planted in two files is proposed as one.
#[test]
fn a_sleep_cycle_after_an_import_proposes_the_duplicate_across_files() {
    let dir = tmp("cycle");
    let db = dir.join("m.db");
    let fixture = fixture();
    let (ok, said) = somnus(&db, &["import", "moltbot", &fixture.to_string_lossy()]);
    assert!(ok, "{said}");
    let (ok, said) = somnus(&db, &["sleep", "--now", "2026-02-03T03:00:00Z", "--json"]);
    assert!(ok, "{said}");
    let (ok, said) = somnus(&db, &["proposals", "show", "1"]);
    assert!(ok, "{said}");
    assert!(
        said.contains(r#"Merge Person "Alexander Rivera" into "Alex Rivera""#),
        "the duplicate across files is proposed:\n{said}"
    );
    // and nothing absurd: the date and the word "Episode" in the Events'
    // names are no theme for a new domain
    assert!(
        !said.contains(r#"New domain "2026""#) && !said.contains(r#"New domain "Episode""#),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_source_or_a_missing_folder_is_refused_and_writes_nothing() {
    let dir = tmp("refused");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "letta", "/nonexistent"]);
    assert!(!ok);
    assert!(said.contains("`letta` is not a source"), "{said}");
    let (ok, said) = somnus(&db, &["import", "moltbot", "/nonexistent/folder"]);
    assert!(!ok);
    assert!(said.contains("is not a folder"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files a reader cannot take are reported, not fatal: bytes that are not
/// UTF-8, a decay-scores file that is not JSON, a 4 MB entry; an empty
/// folder imports nothing and says why.
#[test]
fn hostile_files_are_reported_and_the_rest_imports() {
    let dir = tmp("hostile");
    let db = dir.join("m.db");
    let folder = dir.join("ws");
    std::fs::create_dir_all(folder.join("memory/episodes")).expect("dirs");
    std::fs::create_dir_all(folder.join("memory/meta")).expect("dirs");
    std::fs::write(
        folder.join("memory/episodes/2026-01-01.md"),
        b"## 09:00 | fact\n\xff\xfe bad\n",
    )
    .expect("write");
    std::fs::write(folder.join("memory/meta/decay-scores.json"), "{ not json").expect("write");
    let long = "word ".repeat(800_000);
    std::fs::write(
        folder.join("memory/episodes/2026-01-02.md"),
        format!("## 10:00 | fact | confidence:high\n{long}\n"),
    )
    .expect("write");
    let (ok, said) = somnus(&db, &["import", "moltbot", &folder.to_string_lossy()]);
    assert!(ok, "{said}");
    assert!(
        said.contains("2026-01-01.md: not UTF-8 text, skipped"),
        "{said}"
    );
    assert!(said.contains("decay-scores.json: not JSON"), "{said}");
    assert!(said.contains("no MEMORY.md"), "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    assert_eq!(count(&mut nx, "Event"), 1);
    drop(nx);
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("dir");
    let (ok, said) = somnus(&db, &["import", "moltbot", &empty.to_string_lossy()]);
    assert!(ok, "{said}");
    assert!(said.contains("0 writes planned"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}
