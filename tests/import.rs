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
    let c = nx.connection_for_checks().expect("a SQLite memory");
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
    assert!(said.contains("would create 68 elements"), "{said}");
    assert_eq!(snapshot(&db), before);

    let (ok, said) = somnus(&db, &["import", "moltbot", &folder]);
    assert!(ok, "{said}");
    assert!(said.contains("created 68 elements"), "{said}");
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
    // two critical facts and the Scratchpad block, a note
    assert_eq!(count(&mut nx, "Insight"), 3);
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
    // two notes on one person, nothing in common but the name: asked
    // about, never merged on the name alone
    assert!(
        said.contains(r#"Same or different? Person "Alexander Rivera" and "Alex Rivera""#),
        "the duplicate across files is asked about:\n{said}"
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
        // (more bytes than a Windows tool's few strays: not UTF-8 text)
        [&b"## 09:00 | fact\n"[..], &[0xFF; 100]].concat(),
    )
    .expect("write");
    std::fs::write(folder.join("memory/meta/decay-scores.json"), "{ not json").expect("write");
    let long = "word ".repeat(800_000);
    std::fs::write(
        folder.join("memory/episodes/2026-01-02.md"),
        format!("## 10:00 | fact | confidence:high\n{long}\n"),
    )
    .expect("write");
    // a relation to an id that names nothing: no element without a name
    std::fs::create_dir_all(folder.join("memory/graph/entities")).expect("dirs");
    std::fs::write(
        folder.join("memory/graph/entities/person--ana.md"),
        "# person--ana\n\n## Relations\n- Knows: [[person--]]\n",
    )
    .expect("write");
    let (ok, said) = somnus(&db, &["import", "moltbot", &folder.to_string_lossy()]);
    assert!(ok, "{said}");
    assert!(
        said.contains("2026-01-01.md: not UTF-8 text, skipped"),
        "{said}"
    );
    assert!(
        said.contains("an element with no type or no name, skipped")
            && said.contains("a link with no predicate or an end with no name, skipped"),
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

fn engram_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engram")
}

/// `somnus import engram` on a workspace holding an Engram store built
/// from the formats Engram writes, awkward cases included (a memory with
/// no frontmatter, one with nothing after it, a category and a key Engram
/// does not define, a time that is not one, an entity file with no
/// header, an alias for no entity, a relation to an entity with no file,
/// a link to a memory that is not there, an artifact quoting a memory that
/// is not there): counts by type, provenance, supersession and archival,
/// what is reported, idempotent re-import, dry run, rollback.
#[test]
fn an_engram_store_imports_with_provenance_once_and_undoes_as_one_group() {
    let dir = tmp("engram");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["kip", "DESCRIBE PRIMER"]);
    assert!(ok, "{said}");
    let before = snapshot(&db);
    let fixture = engram_fixture();
    let folder = fixture.to_string_lossy();

    let (ok, said) = somnus(&db, &["import", "engram", &folder, "--dry-run"]);
    assert!(ok, "{said}");
    assert!(said.contains("would create 84 elements"), "{said}");
    assert_eq!(snapshot(&db), before);

    let (ok, said) = somnus(&db, &["import", "engram", &folder]);
    assert!(ok, "{said}");
    assert!(said.contains("created 84 elements"), "{said}");
    let l = "memory/local/";
    for note in [
        format!(
            "{l}facts/2026-03-05/relationship-1772697600000-4c4c.md: no frontmatter: its category and time come from the file name"
        ),
        format!(
            "{l}facts/2026-03-05/fact-1772697600000-6d6d.md: no text after the frontmatter, skipped"
        ),
        format!(
            "{l}facts/2026-03-05/hunch-1772697600000-7a7a.md:3: category `hunch` is not one Engram defines"
        ),
        format!(
            "{l}facts/2026-03-05/hunch-1772697600000-7a7a.md:6: `mood` is not a key Engram writes: kept as metadata `mood`"
        ),
        format!(
            "{l}facts/2026-03-05/hunch-1772697600000-7a7a.md:5: confidence `very` is not a number: kept as `engram_confidence`"
        ),
        format!(
            "{l}facts/2026-03-05/fact-1772697600000-8f8f.md:4: created `yesterday` is not an ISO 8601 time"
        ),
        format!(
            "{l}facts/2026-03-05/fact-1772697600000-8f8f.md:7: `fact-0000000000000-nope` is not a memory in the folder"
        ),
        format!("{l}facts/2026-03-05/notes.txt: not a markdown memory, skipped"),
        format!(
            "{l}entities/tool-grafana-dashboards.md: no `# Name`: its name comes from the file name"
        ),
        format!(
            "{l}entities/person-priya-natarajan.md:18: `company-northwind-labs` has no entity file: created as Company `Northwind Labs`"
        ),
        format!(
            "{l}entities/person-priya-natarajan.md:19: `works with Samuel on the rollout` is not `[[entity]] — label`"
        ),
        format!(
            "{l}config/aliases.json:1: aliases [\"Bob\"] name `robert-smith`, which no entity file is"
        ),
        format!(
            "{l}artifacts/2026-03-02/artifact-1772451600600-8e8e.md:11: quotes `commitment-1760000000000-gone`"
        ),
        format!("{l}boxes/: not imported"),
        "an Engram store does not name its user".to_string(),
    ] {
        assert!(said.contains(&note), "{note}:\n{said}");
    }

    let mut nx = Nexus::open(&db).expect("open");
    for (ty, n) in [
        ("Fact", 11),
        ("Preference", 3),
        ("Insight", 2),
        ("Event", 1),
        ("Commitment", 1),
        ("Skill", 1),
        ("Project", 1),
        ("Tool", 1),
        ("Company", 1),
    ] {
        assert_eq!(count(&mut nx, ty), n, "{ty}");
    }
    let people = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.name != "$self" && ?p.name != "$system") } ORDER BY ?p.name ASC"#,
    );
    assert_eq!(
        people,
        json!(["Priya Natarajan", "Sam Okafor", "Samuel Okafor", "User"])
    );

    // a decision: provenance, times, confidence, protected → pinned, the
    // artifact quoting it as `verbatim`, the entity it is about
    let d = kip(
        &mut nx,
        r#"FIND(?f) WHERE { ?f {type: "Fact", name: "Atlas ships behind a feature flag until the cut-over rehearsal passes"} }"#,
    );
    let d = &d[0];
    assert_eq!(
        d["metadata"]["source"],
        json!("engram:memory/local/facts/2026-03-02/decision-1772451600000-e5f6.md:15")
    );
    assert_eq!(
        d["metadata"]["engram_id"],
        json!("decision-1772451600000-e5f6")
    );
    assert_eq!(
        d["metadata"]["created_at"],
        json!("2026-03-02T11:40:00.000Z")
    );
    assert_eq!(d["metadata"]["confidence"], json!(0.9));
    assert_eq!(d["metadata"]["pinned"], json!(true));
    assert_eq!(d["attributes"]["fact_class"], json!("decision"));
    assert_eq!(
        d["attributes"]["verbatim"],
        json!("\"We keep Atlas behind the flag until the rehearsal is green.\"")
    );
    let about = kip(
        &mut nx,
        r#"FIND(?o.name) WHERE { ?l ({type: "Fact", name: "Atlas ships behind a feature flag until the cut-over rehearsal passes"}, "about", ?o) }"#,
    );
    assert_eq!(about, json!(["Atlas"]));
    // an episode is an Event that mentions its entity, with its counts
    let e = kip(
        &mut nx,
        r#"FIND(?e, ?o.name) WHERE { ?e {type: "Event"} ?l (?e, "mentions", ?o) }"#,
    );
    // (FIND answers a column per variable; several expressions over one
    // variable give a tuple per solution)
    assert_eq!(e[1], json!(["Samuel Okafor"]));
    assert_eq!(
        e[0][0]["attributes"]["start_time"],
        json!("2026-03-02T16:05:00.000Z")
    );
    assert_eq!(e[0][0]["attributes"]["event_class"], json!("moment"));
    assert_eq!(e[0][0]["metadata"]["access_count"], json!(3));
    // supersession both ways, archival, a tier alone as a confidence
    let old = kip(
        &mut nx,
        r#"FIND(?f.metadata.superseded, ?f.metadata.superseded_by) WHERE { ?f {type: "Fact", name: "The Atlas cut-over rehearsal is planned for 13 March"} }"#,
    );
    assert_eq!(
        old,
        json!([[true, "Fact: The Atlas cut-over rehearsal moved to 20 March"]])
    );
    let archived = kip(
        &mut nx,
        r#"FIND(?f.metadata.archived, ?f.metadata.importance) WHERE { ?f {type: "Fact", name: "The old billing cron ran at 02:00 UTC"} }"#,
    );
    assert_eq!(archived, json!([[true, 0.3]]));
    let spec = kip(
        &mut nx,
        r#"FIND(?f.metadata.confidence, ?f.metadata.expires_at) WHERE { ?f {type: "Fact", name: "Northwind might move the billing team to the Atlas stack next quarter"} }"#,
    );
    assert_eq!(spec, json!([[0.3, "2026-04-04T08:00:00.000Z"]]));
    // no frontmatter: the category and the time from the file name
    let bare = kip(
        &mut nx,
        r#"FIND(?f.attributes.fact_class, ?f.metadata.created_at) WHERE { ?f {type: "Fact", name: "Sam reports to Priya on the Atlas rollout"} }"#,
    );
    assert_eq!(bare, json!([["relationship", "2026-03-05T08:00:00.000Z"]]));
    // entities: connections, aliases (the file's and aliases.json's)
    let leads = kip(
        &mut nx,
        r#"FIND(?o.name, ?l.metadata.label) WHERE { ?l ({type: "Person", name: "Priya Natarajan"}, "manages", ?o) }"#,
    );
    // (Sam's file says he reports to her: the same predicate, read backwards)
    assert_eq!(
        leads,
        json!([["Sam Okafor", "Atlas"], ["reports to", "leads"]])
    );
    let aliases = kip(
        &mut nx,
        r#"FIND(?p.attributes.aliases) WHERE { ?p {type: "Person", name: "Priya Natarajan"} }"#,
    );
    assert_eq!(aliases, json!([["Priya N.", "Pn"]]));
    // a frontmatter link between two memories
    let supports = kip(
        &mut nx,
        r#"FIND(?o.name, ?l.metadata.strength) WHERE { ?l ({type: "Fact", name: "Atlas replicates from MySQL 5.7 with a 40-second lag during the nightly batch"}, "supports", ?o) }"#,
    );
    assert_eq!(
        supports,
        json!([
            ["Atlas ships behind a feature flag until the cut-over rehearsal passes"],
            [0.8]
        ])
    );
    // the user prefers the preferences; profile.md is the user's
    let prefers = kip(
        &mut nx,
        r#"FIND(COUNT(?o)) WHERE { ?l ({type: "Person", name: "User"}, "prefers", ?o) }"#,
    );
    assert_eq!(prefers, json!(3));
    let profile = kip(
        &mut nx,
        r#"FIND(?p.attributes.behavior_preferences) WHERE { ?p {type: "Person", name: "User"} }"#,
    );
    assert_eq!(
        profile[0][2],
        json!("Communication: Wants bad news early, not softened")
    );
    drop(nx);

    let after = snapshot(&db);
    let (ok, said) = somnus(&db, &["import", "engram", &folder]);
    assert!(ok, "{said}");
    assert!(said.contains("created 0 elements, updated 0"), "{said}");
    assert_eq!(snapshot(&db), after);

    let (ok, said) = somnus(&db, &["rollback", "--group", "import:engram"]);
    assert!(ok, "{said}");
    let back: Vec<_> = snapshot(&db);
    assert_eq!(
        back.iter().map(|r| (&r.1, &r.2)).collect::<Vec<_>>(),
        before.iter().map(|r| (&r.1, &r.2)).collect::<Vec<_>>(),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The memory's own user takes the Engram store's preferences and
/// profile: found by `relationship_to_self`, or named with `--user`; that
/// Person keeps its domain and its provenance.
#[test]
fn an_engram_import_gives_the_preferences_to_the_memorys_user() {
    let dir = tmp("engram-user");
    let db = dir.join("m.db");
    let (ok, said) = somnus(
        &db,
        &[
            "kip",
            r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Family"} } CONCEPT ?p { {type: "Person", name: "Dana Whitfield"} SET ATTRIBUTES { relationship_to_self: "user" } SET PROPOSITIONS { ("belongs_to_domain", ?d) } } } WITH METADATA { source: "onboarding" }"#,
        ],
    );
    assert!(ok, "{said}");
    let folder = engram_fixture();
    let (ok, said) = somnus(&db, &["import", "engram", &folder.to_string_lossy()]);
    assert!(ok, "{said}");
    assert!(!said.contains("does not name its user"), "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    let dana = kip(
        &mut nx,
        r#"FIND(?p.metadata.source, ?d.name) WHERE { ?p {type: "Person", name: "Dana Whitfield"} ?l (?p, "belongs_to_domain", ?d) }"#,
    );
    assert_eq!(dana, json!([["onboarding"], ["Family"]]));
    let prefers = kip(
        &mut nx,
        r#"FIND(COUNT(?o)) WHERE { ?l ({type: "Person", name: "Dana Whitfield"}, "prefers", ?o) }"#,
    );
    assert_eq!(prefers, json!(3));
    assert_eq!(
        kip(
            &mut nx,
            r#"FIND(COUNT(?p)) WHERE { ?p {type: "Person"} FILTER(?p.name == "User") }"#
        ),
        json!(0)
    );
    drop(nx);
    // --user names another
    let db2 = dir.join("m2.db");
    let (ok, said) = somnus(
        &db2,
        &[
            "import",
            "engram",
            &folder.to_string_lossy(),
            "--user",
            "Rowan Price",
        ],
    );
    assert!(ok, "{said}");
    let mut nx = Nexus::open(&db2).expect("open");
    let prefers = kip(
        &mut nx,
        r#"FIND(COUNT(?o)) WHERE { ?l ({type: "Person", name: "Rowan Price"}, "prefers", ?o) }"#,
    );
    assert_eq!(prefers, json!(3));
    let _ = std::fs::remove_dir_all(&dir);
}

/// After an Engram import, a full cycle proposes the duplicates planted
/// across files (one person in two entity files, one preference in two
/// fact files) and does not merge the superseded schedule with the one
/// that replaced it.
#[test]
fn a_sleep_cycle_after_an_engram_import_proposes_the_duplicates_across_files() {
    let dir = tmp("engram-cycle");
    let db = dir.join("m.db");
    let folder = engram_fixture();
    let (ok, said) = somnus(&db, &["import", "engram", &folder.to_string_lossy()]);
    assert!(ok, "{said}");
    let (ok, said) = somnus(&db, &["sleep", "--now", "2026-03-06T03:00:00Z", "--json"]);
    assert!(ok, "{said}");
    let (ok, said) = somnus(&db, &["proposals", "show", "1"]);
    assert!(ok, "{said}");
    for merge in [
        // a person known by two forms of a name and nothing else in common
        r#"Same or different? Person "Sam Okafor" and "Samuel Okafor""#,
        r#"Merge Preference "Prefers dark mode in every editor" into "Prefers dark mode in every editor and terminal""#,
    ] {
        assert!(said.contains(merge), "{merge}:\n{said}");
    }
    let merges = said.matches("] pending  merge").count();
    assert_eq!(merges, 1, "{said}");
    assert!(!said.contains("13 March\" into"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An import cancelled part way (as the console's ^C does) writes
/// nothing, and says how far it had gone.
#[test]
fn a_cancelled_import_writes_nothing() {
    let dir = tmp("cancel");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["kip", "DESCRIBE PRIMER"]);
    assert!(ok, "{said}");
    let before = snapshot(&db);
    let mut nx = Nexus::open(&db).expect("open");
    let plan = somnus::import::read("engram", &engram_fixture(), None).expect("read");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let who = somnus::audit::Who {
        actor: "tester".into(),
        trigger: "test".into(),
        reason: None,
    };
    let mut seen = Vec::new();
    let r = somnus::import::apply_with(
        &mut nx,
        &plan,
        &who,
        false,
        &mut |done, total| {
            seen.push((done, total));
            if done == 10 {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        },
        Some(&stop),
    );
    let e = r.expect_err("cancelled");
    assert!(
        e.message
            .contains("cancelled after 10 of 51 writes: nothing was written"),
        "{e:?}"
    );
    assert_eq!(seen.first(), Some(&(0, 51)));
    drop(nx);
    assert_eq!(snapshot(&db), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Engram files a reader cannot take are reported and the rest imports:
/// an entity file whose heading and name give no name, an `entityRef`
/// naming nothing, frontmatter never closed, bytes that are not UTF-8, a
/// 4 MB memory with 50,000 tags, a file past the 16 MB limit. No element
/// gets an empty name or a name of several lines.
#[test]
fn hostile_engram_files_are_reported_and_the_rest_imports() {
    let dir = tmp("engram-hostile");
    let db = dir.join("m.db");
    let store = dir.join("store");
    let day = store.join("facts/2026-01-01");
    std::fs::create_dir_all(&day).expect("dirs");
    std::fs::create_dir_all(store.join("entities")).expect("dirs");
    std::fs::write(store.join("entities/-.md"), "# \n\n**Type:** person\n").expect("write");
    std::fs::write(
        day.join("fact-1-a.md"),
        "---\nid: x\ncategory: fact\nentityRef: -\n---\nA fact about nobody in particular.\n",
    )
    .expect("write");
    std::fs::write(day.join("fact-2-b.md"), "---\ncategory: fact\n").expect("write");
    std::fs::write(day.join("fact-3-c.md"), [0xC0u8; 100]).expect("write");
    let tags = vec!["\"t\""; 50_000].join(",");
    std::fs::write(
        day.join("fact-4-d.md"),
        format!(
            "---\ncategory: fact\ntags: [{tags}]\n---\n{}",
            "word ".repeat(800_000)
        ),
    )
    .expect("write");
    // a file past the size limit (sparse: nothing is written to disk)
    std::fs::File::create(day.join("fact-5-e.md"))
        .and_then(|f| f.set_len(17 * 1024 * 1024))
        .expect("big file");
    let (ok, said) = somnus(&db, &["import", "engram", &store.to_string_lossy()]);
    assert!(ok, "{said}");
    for note in [
        "facts/2026-01-01/fact-5-e.md: 17 MB, larger than the 16 MB a file may be: skipped",
        "entities/-.md: neither its heading nor its file name gives a name: skipped",
        "facts/2026-01-01/fact-1-a.md:6: `-` names no entity: its link is skipped",
        "facts/2026-01-01/fact-2-b.md: its frontmatter is not closed by `---`",
        "facts/2026-01-01/fact-3-c.md: not UTF-8 text, skipped",
    ] {
        assert!(said.contains(note), "{note}:\n{said}");
    }
    let mut nx = Nexus::open(&db).expect("open");
    let names = kip(&mut nx, r#"FIND(?c.name) WHERE { ?c {type: "Fact"} }"#);
    let names: Vec<&str> = names
        .as_array()
        .expect("names")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        names.contains(&"A fact about nobody in particular"),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .all(|n| !n.is_empty() && !n.contains('\n') && n.chars().count() <= 80),
        "{names:?}"
    );
    let empty = kip(
        &mut nx,
        r#"FIND(COUNT(?c)) WHERE { ?c {type: "Person"} FILTER(?c.name == "") }"#,
    );
    assert_eq!(empty, json!(0));
    let _ = std::fs::remove_dir_all(&dir);
}

fn openclaw_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openclaw")
}

/// Every string a memory's concepts hold, in their attributes.
fn all_text(db: &Path) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let nx = Nexus::open(db).expect("open");
    let mut out = String::new();
    for r in nx
        .db()
        .query("SELECT name, attributes FROM concepts", &[])
        .expect("concepts")
    {
        out.push_str(&r.text(0).unwrap_or_default());
        out.push('\n');
        let v: Value = serde_json::from_str(&r.text(1).unwrap_or_default()).unwrap_or(Value::Null);
        walk(&v, &mut out);
    }
    out
}

/// An OpenClaw workspace as real ones are laid out: every content line of
/// every note reaches the memory (as an attribute or verbatim in an Event's
/// or note's text), with its day; the user becomes a Person; files that are
/// not notes are named as skipped; non-ASCII headings and keys abort
/// nothing.
#[test]
fn an_openclaw_workspace_imports_every_line_with_its_day() {
    let dir = tmp("openclaw");
    let db = dir.join("m.db");
    let fixture = openclaw_fixture();
    let (ok, said) = somnus(&db, &["import", "moltbot", &fixture.to_string_lossy()]);
    assert!(ok, "{said}");
    assert!(
        said.contains("memory/heartbeat-state.json: not a markdown or text note, skipped"),
        "{said}"
    );
    assert!(
        said.contains("README.md (6 lines): 1 note at the workspace's top level, not imported"),
        "{said}"
    );
    // every content line of every note, accounted for
    let text = all_text(&db);
    let mut files = Vec::new();
    fn md_files(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).expect("dir").filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                md_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") && !p.ends_with("README.md") {
                out.push(p);
            }
        }
    }
    md_files(&fixture, &mut files);
    assert!(files.len() >= 11, "{files:?}");
    let mut missing = Vec::new();
    for f in &files {
        let body = std::fs::read_to_string(f).expect("read");
        for (i, line) in body.lines().enumerate() {
            // (a heading's `#`s are its markup, not its content)
            let l = line.trim().trim_start_matches('#').trim();
            if l.is_empty() {
                continue;
            }
            if !text.contains(l) {
                missing.push(format!("{}:{}: {l}", f.display(), i + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "lines that reached no element:\n{}",
        missing.join("\n")
    );
    let mut nx = Nexus::open(&db).expect("open");
    // the user, from USER.md
    let user = kip(
        &mut nx,
        r#"FIND(?p) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(user.as_array().map(Vec::len), Some(1), "{user}");
    assert_eq!(user[0]["name"], json!("Lucía Fernández"));
    assert_eq!(
        user[0]["attributes"]["timezone"],
        json!("Europe/Madrid (UTC+1)")
    );
    assert_eq!(user[0]["metadata"]["source"], json!("moltbot:USER.md:1"));
    // what USER.md says she is, in its words, is what SEARCH finds her by
    assert_eq!(
        user[0]["attributes"]["description"],
        json!("Runs a small ceramics studio; answers in Spanish or English")
    );
    let found = kip(&mut nx, r#"SEARCH CONCEPT "ceramics studio" LIMIT 3"#);
    assert_eq!(found[0]["name"], json!("Lucía Fernández"), "{found}");
    // the agent's identity on $self
    let me = kip(
        &mut nx,
        r#"FIND(?s.attributes.identity) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(me[0]["name"], json!("Tejo"), "{me}");
    // daily notes: Events on their day, at their heading's time
    let times = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes.start_time) WHERE { ?e {type: "Event"} } ORDER BY ?e.attributes.start_time ASC"#,
    );
    let pairs: Vec<(String, String)> = times
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap_or("").into(),
                r[1].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    for (name, at) in [
        (
            "2026-03-14 09:30 Session — Product photos",
            "2026-03-14T09:30:00Z",
        ),
        ("2026-03-14 16:45 Supplier call", "2026-03-14T16:45:00Z"),
        ("2026-03-14 TODO", "2026-03-14T00:00:00Z"),
        ("2026-03-15 11:10 Suivi", "2026-03-15T11:10:00Z"),
        ("2026-03-16 05:23 心跳检查", "2026-03-16T05:23:00Z"),
        ("2026-02-01 notes", "2026-02-01T00:00:00Z"),
    ] {
        assert!(
            pairs.iter().any(|(n, t)| n == name && t == at),
            "{name} at {at} in {pairs:?}"
        );
    }
    // the café note keeps its topic; the vault is pinned, and so are
    // MEMORY.md's blocks (the curated long-term memory), each a note
    let cafe = kip(
        &mut nx,
        r#"FIND(?e.attributes.topic) WHERE { ?e {type: "Event", name: "2026-03-15 Café notes"} }"#,
    );
    assert_eq!(cafe, json!(["café-notes"]));
    let pinned = kip(
        &mut nx,
        r#"FIND(?n.name) WHERE { ?n {type: "Insight"} FILTER(?n.metadata.pinned == true && ?n.attributes.insight_class == "note") }"#,
    );
    assert_eq!(
        pinned,
        json!(["关键规则", "Shop numbers", "Kiln", "Pinned"])
    );
    drop(nx);
    // importing again changes nothing
    let (ok, said) = somnus(&db, &["import", "moltbot", &fixture.to_string_lossy()]);
    assert!(ok, "{said}");
    assert!(said.contains("created 0 elements"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three sleep cycles, each approved whole, on an imported workspace: no
/// content line is lost (an Event archived with nothing extracted is kept,
/// never reclaimed), and no element's `source`, `author` or `created_at`
/// is rewritten (a phase records itself in `maintained_by`).
#[test]
fn three_cycles_approved_whole_lose_no_line_and_rewrite_no_origin() {
    let dir = tmp("openclaw-cycles");
    let db = dir.join("m.db");
    let fixture = openclaw_fixture();
    let (ok, said) = somnus(&db, &["import", "moltbot", &fixture.to_string_lossy()]);
    assert!(ok, "{said}");
    let origins = |db: &Path| -> std::collections::BTreeMap<i64, (String, String, String)> {
        let nx = Nexus::open(db).expect("open");
        nx.db()
            .query("SELECT id, metadata FROM concepts", &[])
            .expect("concepts")
            .iter()
            .map(|r| {
                let m: Value =
                    serde_json::from_str(&r.text(1).unwrap_or_default()).unwrap_or(Value::Null);
                let g = |k: &str| m[k].as_str().unwrap_or("").to_string();
                (
                    r.i64(0).unwrap_or(0),
                    (g("source"), g("author"), g("created_at")),
                )
            })
            .filter(|(_, o)| o.0.starts_with("moltbot:"))
            .collect()
    };
    let before = origins(&db);
    assert!(before.len() >= 13, "{before:?}");
    for now in [
        "2026-03-20T03:00:00Z",
        "2026-04-25T03:00:00Z",
        "2026-07-01T03:00:00Z",
    ] {
        let (ok, said) = somnus(&db, &["sleep", "--now", now]);
        assert!(ok, "{said}");
        let (ok, list) = somnus(&db, &["proposals", "list", "--json"]);
        assert!(ok, "{list}");
        let list: Value = serde_json::from_str(&list).expect("JSON");
        for p in list.as_array().expect("proposals") {
            if p["status"] == "pending" || p["status"] == "partially_applied" {
                let id = p["id"].to_string();
                let (ok, said) = somnus(&db, &["proposals", "approve", &id]);
                assert!(ok || said.contains("no pending item"), "{said}");
            }
        }
    }
    let after = origins(&db);
    for (id, o) in &before {
        assert_eq!(
            after.get(id),
            Some(o),
            "C:{id} lost or its origin rewritten"
        );
    }
    let text = all_text(&db);
    for f in [
        "memory/2026-03-14.md",
        "memory/2026-03-16.md",
        "memory/archive/2026-02-01.md",
        "memory/2026-03-15-café-notes.md",
    ] {
        let body = std::fs::read_to_string(fixture.join(f)).expect("read");
        for line in body.lines() {
            let l = line.trim().trim_start_matches('#').trim();
            if !l.is_empty() {
                assert!(text.contains(l), "{f}: `{l}` was lost");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A workspace whose memory folder has files named like the workspace's
/// own (`memory/HEARTBEAT.md`, `memory/MEMORY.md`) beside or without the
/// workspace's: each is read, none passed over as "read already"; the
/// user's `Name:` line that goes on about them gives the name alone; and
/// `openclaw` is a source name as `moltbot` is.
#[test]
fn files_named_like_the_workspaces_own_in_the_memory_folder_are_read_too() {
    let dir = tmp("same-names");
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("ws");
    std::fs::write(
        ws.join("USER.md"),
        "# USER.md\n\n## Core\n- **Name:** Jon Trevor Somwaru — goes by JT | Timezone: America/New_York\n",
    )
    .expect("user");
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n## Critical Facts\n- JT works from Queens.\n",
    )
    .expect("memory");
    std::fs::write(
        ws.join("memory/MEMORY.md"),
        "# Older memory\n\n- JT once kept his notes in Notion.\n",
    )
    .expect("memory/memory");
    std::fs::write(
        ws.join("memory/HEARTBEAT.md"),
        "# HEARTBEAT.md\n\n## Active Hours\n8:00 AM – 11:00 PM EST. Outside these hours: HEARTBEAT_OK immediately.\n",
    )
    .expect("heartbeat");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    let text = all_text(&db);
    for line in [
        "JT works from Queens.",
        "JT once kept his notes in Notion.",
        "8:00 AM – 11:00 PM EST. Outside these hours: HEARTBEAT_OK immediately.",
        "goes by JT | Timezone: America/New_York",
    ] {
        assert!(text.contains(line), "{line} is not in the memory:\n{said}");
    }
    let mut nx = Nexus::open(&db).expect("open");
    let user = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(user, json!(["Jon Trevor Somwaru"]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Copies a folder (a workspace to edit in a test).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

fn timezone(db: &Path) -> String {
    let mut nx = Nexus::open(db).expect("open");
    kip(
        &mut nx,
        r#"FIND(?p.attributes.timezone) WHERE { ?p {type: "Person", name: "Lucía Fernández"} }"#,
    )[0]
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Importing a workspace again once the memory has moved on does not
/// take the memory back. The agent learnt the user moved: while USER.md
/// still says what was imported, the memory's value is kept (and named);
/// when the file says something new too, the write is held back and
/// proposed for review, naming both values and who wrote the memory's.
/// Approving applies the file's value; rejecting keeps the memory's and is
/// not asked again; a value this import wrote itself follows the file at
/// once; a dry run proposes nothing; the `import` policy set to auto
/// applies it.
#[test]
fn importing_again_proposes_what_would_replace_someone_elses_value() {
    let dir = tmp("held");
    let ws = dir.join("ws");
    copy_dir(&openclaw_fixture(), &ws);
    let ws_s = ws.to_string_lossy().to_string();
    let db = dir.join("m.db");
    let user = ws.join("USER.md");
    let text = std::fs::read_to_string(&user).expect("USER.md");
    let file_says = |tz: &str| {
        std::fs::write(&user, text.replace("Europe/Madrid (UTC+1)", tz)).expect("write");
    };
    let agent_says = |tz: &str| {
        let (ok, said) = somnus(
            &db,
            &[
                "kip",
                &format!(
                    r#"UPSERT {{ CONCEPT ?p {{ {{type: "Person", name: "Lucía Fernández"}} SET ATTRIBUTES {{ timezone: "{tz}" }} }} }}"#
                ),
            ],
        );
        assert!(ok, "{said}");
    };
    let (ok, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(ok && !said.contains("held back"), "{said}");
    assert_eq!(timezone(&db), "Europe/Madrid (UTC+1)");
    // the file changed: the import's own value follows it at once
    file_says("Europe/Lisbon");
    let (ok, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(ok && !said.contains("held back"), "{said}");
    assert_eq!(timezone(&db), "Europe/Lisbon");
    // the agent learns she moved; the file still says what was imported:
    // the memory's value is kept, and said so
    agent_says("America/Mexico_City");
    let (ok, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(ok && !said.contains("held back"), "{said}");
    assert!(
        said.contains(r#"timezone: kept the memory's "America/Mexico_City" (written by agent"#),
        "{said}"
    );
    assert!(
        said.contains(r#"the file still says "Europe/Lisbon""#),
        "{said}"
    );
    assert_eq!(timezone(&db), "America/Mexico_City");
    // the file says something new as well: a disagreement. A dry run says
    // it would propose, and leaves nothing
    file_says("Europe/Berlin");
    let (ok, said) = somnus(&db, &["import", "openclaw", &ws_s, "--dry-run"]);
    assert!(ok, "{said}");
    assert!(said.contains("1 write held back"), "{said}");
    assert!(said.contains("would be proposed as #1 item 1"), "{said}");
    let (_, list) = somnus(&db, &["proposals", "list"]);
    assert!(!list.contains("Import"), "{list}");
    // the import keeps the agent's value and proposes the file's
    let (ok, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(ok, "{said}");
    assert_eq!(timezone(&db), "America/Mexico_City");
    assert!(said.contains("1 write held back"), "{said}");
    assert!(
        said.contains(r#"timezone: the memory holds "America/Mexico_City" (written by agent"#),
        "{said}"
    );
    assert!(said.contains(r#"the file says "Europe/Berlin""#), "{said}");
    assert!(said.contains("proposed as #1 item 1"), "{said}");
    let (_, show) = somnus(&db, &["proposals", "show", "1"]);
    assert!(show.contains("pending  import"), "{show}");
    assert!(
        show.contains(
            r#"Person: Lucía Fernández timezone: "America/Mexico_City" → "Europe/Berlin""#
        ),
        "{show}"
    );
    // every other line of the workspace was imported as before
    assert!(all_text(&db).contains("Never schedule anything before 10:00"));
    // asked once: importing again while it waits proposes nothing new
    let (_, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(said.contains("already proposed (#1 item 1)"), "{said}");
    // rejected: the memory keeps its value, and is not asked again
    let (ok, said) = somnus(&db, &["proposals", "reject", "1", "--reason", "she moved"]);
    assert!(ok, "{said}");
    let (_, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(said.contains("rejected before (#1 item 1)"), "{said}");
    assert_eq!(timezone(&db), "America/Mexico_City");
    // the user edits the file again: a new question; approved, the file's
    // value is applied exactly, and importing again changes nothing
    file_says("Europe/Paris");
    let (_, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(said.contains("proposed as #2 item 1"), "{said}");
    let (ok, said) = somnus(&db, &["proposals", "approve", "2"]);
    assert!(ok, "{said}");
    assert_eq!(timezone(&db), "Europe/Paris");
    let (_, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(
        !said.contains("held back") && !said.contains("since an earlier import kept"),
        "{said}"
    );
    // with the import policy auto, such a write is applied in the
    // importer's name, as a recorded item
    agent_says("Asia/Tokyo");
    file_says("Europe/Rome");
    let (ok, said) = somnus(&db, &["proposals", "policy", "import", "auto"]);
    assert!(ok, "{said}");
    let (_, said) = somnus(&db, &["import", "openclaw", &ws_s]);
    assert!(
        said.contains("the operator's policy for `import` is auto"),
        "{said}"
    );
    assert_eq!(timezone(&db), "Europe/Rome");
}

/// A sleep cycle's approved work survives importing the same store again:
/// a merged duplicate is not brought back, concepts filed under a new
/// domain are not filed back under Unsorted, a merged list is not cut
/// back to the file's, and each is named in the report; a file that says
/// something new of a deleted element is asked about instead. A memory
/// that expires keeps its domain link until it is reclaimed itself.
#[test]
fn importing_again_keeps_what_the_cycle_did_since() {
    let dir = tmp("cycle-kept");
    let db = dir.join("m.db");
    let store = dir.join("store");
    copy_dir(&engram_fixture(), &store);
    let store_s = store.to_string_lossy().to_string();
    let (ok, said) = somnus(&db, &["import", "engram", &store_s]);
    assert!(ok, "{said}");
    // the domain link of a Fact that expires carries no TTL of its own
    {
        let mut nx = Nexus::open(&db).expect("open");
        let r = kip(
            &mut nx,
            r#"FIND(?l.metadata.expires_at) WHERE { ?f {type: "Fact"} ?l (?f, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) FILTER(IS_NOT_NULL(?f.metadata.expires_at)) }"#,
        );
        let a = r.as_array().expect("rows");
        assert!(!a.is_empty() && a.iter().all(Value::is_null), "{r}");
    }
    let (ok, said) = somnus(&db, &["sleep", "--now", "2027-06-01T00:00:00Z"]);
    assert!(ok, "{said}");
    let (ok, said) = somnus(&db, &["proposals", "approve", "1"]);
    assert!(ok, "{said}");
    let before = snapshot(&db);
    let (ok, said) = somnus(&db, &["import", "engram", &store_s, "--json"]);
    assert!(ok, "{said}");
    let out: Value = serde_json::from_str(&said).expect("json");
    assert_eq!(out["created"], 0, "{said}");
    assert_eq!(out["updated"], 0, "{said}");
    assert_eq!(out["proposed"], 0, "{said}");
    assert_eq!(out["skipped"], 0, "{said}");
    let kept = out["kept"].as_array().expect("kept").len();
    assert!(kept >= 3, "{said}");
    let text = said.replace("\\\"", "\"");
    assert!(
        text.contains("Person: Sam Okafor was deleted (by operator"),
        "{text}"
    );
    assert!(
        text.contains("-belongs_to_domain-> Domain: Unsorted was deleted"),
        "{text}"
    );
    assert!(
        text.contains("link manages left out: Person: Sam Okafor was deleted"),
        "{text}"
    );
    assert_eq!(snapshot(&db), before, "the memory is as the cycle left it");
    // the file says something new of the merged person: asked, not applied
    let sam = std::fs::read_dir(store.join("memory/local/entities"))
        .expect("entities")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_string_lossy().ends_with("person-sam-okafor.md"))
        .expect("Sam's file");
    let t = std::fs::read_to_string(&sam).expect("read");
    std::fs::write(
        &sam,
        t.replace(
            "- Reports to Priya Natarajan",
            "- Reports to Priya Natarajan\n- Moved to the Lagos office",
        ),
    )
    .expect("write");
    let (ok, said) = somnus(&db, &["import", "engram", &store_s]);
    assert!(ok, "{said}");
    assert!(said.contains("held back"), "{said}");
    assert!(
        said.contains("Person: Sam Okafor was deleted (by operator"),
        "{said}"
    );
    assert!(said.contains("the file would bring it back"), "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    assert_eq!(
        kip(
            &mut nx,
            r#"FIND(COUNT(?p)) WHERE { ?p {type: "Person"} FILTER(?p.name == "Sam Okafor") }"#
        ),
        json!(0)
    );
}
