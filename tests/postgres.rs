//! A memory's schema on a real PostgreSQL server: the migrations from the
//! list SQLite uses, several memories in one database, the audit triggers'
//! before/after images, the full-text index and its score, the re-embed
//! queue, and processes migrating at the same time.
//!
//! They need a server: `SOMNUS_TEST_PG=postgres://user@host:port/db`
//! (`.ci/run` starts a throwaway one). Without it each test says so and
//! passes, so the README's test command needs no PostgreSQL.

use serde_json::{Value, json};
use somnus::store::migrations::MIGRATIONS;
use somnus::store::postgres::{self as pg, Location};

mod pg_support;
use pg_support::{Memory, server};

const NOW: &str = "2026-11-25T12:00:00.000Z";

fn insert_concept(c: &mut impl postgres::GenericClient, ty: &str, name: &str, attrs: Value) -> i64 {
    let id: i64 = c
        .query_one("SELECT nextval('element_ids')", &[])
        .expect("id")
        .get(0);
    c.execute(
        "INSERT INTO concepts(id, type, name, attributes, metadata, updated_at) VALUES ($1, $2, $3, $4, '{}', $5)",
        &[&id, &ty, &name, &attrs, &NOW],
    )
    .expect("insert");
    id
}

#[test]
fn migrations_build_a_memory_once_and_memories_share_a_database() {
    let Some(url) = server() else { return };
    let a = Memory::new(&url, "t_mig_a");
    let b = Memory::new(&url, "t_mig_b");
    let mut c = a.loc.connect().expect("connect");
    assert!(pg::migrate(&mut c, &a.loc).expect("migrate"), "new");
    assert_eq!(
        pg::version(&mut c, &a.loc).expect("version"),
        MIGRATIONS.len() as i64
    );
    // again: nothing to do, not new
    assert!(!pg::migrate(&mut c, &a.loc).expect("migrate again"));
    let tables: Vec<String> = c
        .query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
            &[&a.loc.schema()],
        )
        .expect("tables")
        .iter()
        .map(|r| r.get(0))
        .collect();
    for t in [
        "api_keys",
        "audit_changes",
        "audit_log",
        "concepts",
        "console_history",
        "contradictions",
        "embed_queue",
        "embeddings",
        "maintainers",
        "meta",
        "proposal_conflicts",
        "proposal_items",
        "proposals",
        "propositions",
        "sleep_notes",
        "sleep_phases",
        "sleep_policy",
        "sleep_runs",
    ] {
        assert!(tables.contains(&t.to_string()), "{t}: {tables:?}");
    }
    // a second memory in the same database is apart from the first
    let mut d = b.loc.connect().expect("connect");
    pg::migrate(&mut d, &b.loc).expect("migrate b");
    insert_concept(&mut c, "Person", "Ada", json!({}));
    let n: i64 = d
        .query_one("SELECT COUNT(*) FROM concepts", &[])
        .expect("count")
        .get(0);
    assert_eq!(n, 0);
    let all = pg::memories(&mut c).expect("memories");
    assert!(
        all.contains(&a.loc.memory) && all.contains(&b.loc.memory),
        "{all:?}"
    );
}

/// The triggers write what SQLite's write: nothing outside an entry; a
/// new element only when re-inserted below the entry's first id; the
/// before and after images of an update; the before image of a delete.
#[test]
fn audit_triggers_record_before_and_after_images() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_audit");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    // outside an audit entry nothing is recorded
    let nobody = insert_concept(&mut c, "Person", "Nobody", json!({}));
    let mut tx = c.transaction().expect("tx");
    // the entry's first id: the next the sequence gives
    let first: i64 = tx
        .query_one("SELECT nextval('element_ids') + 1", &[])
        .expect("first")
        .get(0);
    tx.execute(
        "SELECT set_config('somnus.audit_entry', '7', true), set_config('somnus.audit_first_id', $1, true)",
        &[&first.to_string()],
    )
    .expect("entry");
    let id = insert_concept(&mut tx, "Person", "Ada", json!({"role": "engineer"}));
    tx.execute(
        "UPDATE concepts SET attributes = $1, version = version + 1 WHERE id = $2",
        &[&json!({"role": "lead"}), &id],
    )
    .expect("update");
    tx.execute("DELETE FROM concepts WHERE id = $1", &[&id])
        .expect("delete");
    // an element older than the entry, deleted and inserted again (as a
    // rollback restores it): its insert is recorded, a new one's is not
    tx.execute("DELETE FROM concepts WHERE id = $1", &[&nobody])
        .expect("delete");
    tx.execute(
        "INSERT INTO concepts(id, type, name, updated_at) VALUES ($1, 'Person', 'Nobody', $2)",
        &[&nobody, &NOW],
    )
    .expect("reinsert");
    tx.commit().expect("commit");
    let rows = c
        .query(
            "SELECT entry, element, tbl, op, before, after FROM audit_changes ORDER BY id",
            &[],
        )
        .expect("changes");
    let ops: Vec<(i64, i64, String, String)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    assert_eq!(
        ops,
        vec![
            (7, id, "concepts".into(), "update".into()),
            (7, id, "concepts".into(), "delete".into()),
            (7, nobody, "concepts".into(), "delete".into()),
            (7, nobody, "concepts".into(), "insert".into()),
        ]
    );
    let before: Value = serde_json::from_str(&rows[0].get::<_, String>(4)).expect("json");
    let after: Value = serde_json::from_str(&rows[0].get::<_, String>(5)).expect("json");
    assert_eq!(before["attributes"], json!({"role": "engineer"}));
    assert_eq!(after["attributes"], json!({"role": "lead"}));
    assert_eq!(
        (before["version"].clone(), after["version"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(before["name"], json!("Ada"));
    let keys: Vec<&String> = before.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "type",
            "name",
            "attributes",
            "metadata",
            "version",
            "updated_at"
        ]
    );
    let deleted: Option<String> = rows[1].get(5);
    assert!(deleted.is_none());
    // a link's update, by the same trigger function
    let link: i64 = c
        .query_one("SELECT nextval('element_ids')", &[])
        .expect("id")
        .get(0);
    c.execute(
        "INSERT INTO propositions(id, subject, predicate, object, updated_at) VALUES ($1, $2, 'knows', $2, $3)",
        &[&link, &nobody, &NOW],
    )
    .expect("link");
    let mut tx = c.transaction().expect("tx");
    tx.execute("SELECT set_config('somnus.audit_entry', '8', true)", &[])
        .expect("entry");
    tx.execute(
        "UPDATE propositions SET version = 2 WHERE id = $1",
        &[&link],
    )
    .expect("update link");
    tx.commit().expect("commit");
    let row = c
        .query_one(
            "SELECT element, tbl, op, before, after FROM audit_changes WHERE entry = 8",
            &[],
        )
        .expect("link change");
    let (element, tbl, op): (i64, String, String) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(
        (element, tbl.as_str(), op.as_str()),
        (link, "propositions", "update")
    );
    let after: Value = serde_json::from_str(&row.get::<_, String>(4)).expect("json");
    assert_eq!(
        (after["predicate"].clone(), after["version"].clone()),
        (json!("knows"), json!(2))
    );
}

/// SEARCH's index: a concept is found by its name, an alias, its
/// description or its salient text, names ranking above bodies, every
/// score in [0, 1).
#[test]
fn the_full_text_index_finds_and_ranks_within_0_and_1() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_fts");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    let named = insert_concept(&mut c, "Topic", "Kestrel migration", json!({}));
    let aliased = insert_concept(
        &mut c,
        "Topic",
        "Project K",
        json!({"aliases": ["kestrel"]}),
    );
    let described = insert_concept(
        &mut c,
        "Topic",
        "Falcons",
        json!({"description": "birds such as the kestrel"}),
    );
    let event = insert_concept(
        &mut c,
        "Event",
        "Walk",
        json!({"content_summary": "saw a kestrel hovering"}),
    );
    insert_concept(
        &mut c,
        "Topic",
        "Unrelated",
        json!({"description": "nothing here"}),
    );
    let rows = c
        .query(
            "SELECT id, ts_rank_cd(search, q, 32) AS score FROM concepts, plainto_tsquery('simple', $1) q WHERE search @@ q ORDER BY score DESC, id",
            &[&"Kestrel"],
        )
        .expect("search");
    let found: Vec<(i64, f32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let ids: Vec<i64> = found.iter().map(|f| f.0).collect();
    assert_eq!(ids.len(), 4, "{found:?}");
    for id in [named, aliased, described, event] {
        assert!(ids.contains(&id), "{id}: {found:?}");
    }
    assert!(found.iter().all(|f| (0.0..1.0).contains(&f.1)), "{found:?}");
    let score = |id: i64| found.iter().find(|f| f.0 == id).map_or(0.0, |f| f.1);
    assert!(score(named) > score(event), "{found:?}");
    // an update is indexed as it is written
    c.execute(
        "UPDATE concepts SET attributes = '{\"description\": \"now about owls\"}' WHERE id = $1",
        &[&described],
    )
    .expect("update");
    let n: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM concepts WHERE search @@ plainto_tsquery('simple', 'owls')",
            &[],
        )
        .expect("count")
        .get(0);
    assert_eq!(n, 1);
}

/// A concept whose name or attributes change waits to be embedded again;
/// a deleted one leaves neither its vector nor its place in the queue.
#[test]
fn the_re_embed_queue_follows_changes() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_embed");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    let id = insert_concept(&mut c, "Topic", "Owls", json!({}));
    let queued = |c: &mut postgres::Client| -> i64 {
        c.query_one("SELECT COUNT(*) FROM embed_queue", &[])
            .expect("count")
            .get(0)
    };
    assert_eq!(
        queued(&mut c),
        0,
        "a new concept is found by id, not queued"
    );
    c.execute("UPDATE concepts SET version = 2 WHERE id = $1", &[&id])
        .expect("update");
    assert_eq!(queued(&mut c), 0, "its text did not change");
    for _ in 0..2 {
        c.execute(
            "UPDATE concepts SET attributes = jsonb_build_object('description', random()::text) WHERE id = $1",
            &[&id],
        )
        .expect("update");
    }
    assert_eq!(queued(&mut c), 1);
    c.execute(
        "INSERT INTO embeddings(id, model, vector) VALUES ($1, 'm', '\\x00')",
        &[&id],
    )
    .expect("vector");
    c.execute("DELETE FROM concepts WHERE id = $1", &[&id])
        .expect("delete");
    assert_eq!(queued(&mut c), 0);
    let v: i64 = c
        .query_one("SELECT COUNT(*) FROM embeddings", &[])
        .expect("count")
        .get(0);
    assert_eq!(v, 0);
}

/// Processes that open a new memory at the same moment migrate it once:
/// each waits for the one migrating, then finds it done.
#[test]
fn processes_migrating_together_migrate_once() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_race");
    let news: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let loc = m.loc.clone();
                s.spawn(move || {
                    let mut c = loc.connect().expect("connect");
                    pg::migrate(&mut c, &loc).expect("migrate")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    assert_eq!(news.iter().filter(|n| **n).count(), 1, "{news:?}");
    let mut c = m.loc.connect().expect("connect");
    assert_eq!(
        pg::version(&mut c, &m.loc).expect("version"),
        MIGRATIONS.len() as i64
    );
}

/// A memory whose schema is newer than this somnus is refused, and left
/// as it is.
#[test]
fn a_newer_memory_is_refused() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_newer");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    c.execute(
        "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
        &[],
    )
    .expect("bump");
    let e = pg::migrate(&mut c, &m.loc).expect_err("refused");
    assert!(
        e.message.contains("newer than this somnus"),
        "{}",
        e.message
    );
    assert_eq!(pg::version(&mut c, &m.loc).expect("version"), 999);
}

/// A server that is not there is an error naming it, not a hang.
#[test]
fn an_unreachable_server_is_a_clear_error() {
    let loc = Location::parse("postgres://somnus:secret@127.0.0.1:1/db", None).expect("parse");
    let t = std::time::Instant::now();
    let Err(e) = loc.connect() else {
        panic!("a server at port 1")
    };
    assert!(
        e.message
            .contains("cannot reach PostgreSQL at postgres://somnus:***@127.0.0.1:1/db"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("secret"));
    assert!(t.elapsed() < std::time::Duration::from_secs(15));
}

/// The seam: the same SQL (SQLite's `?1` parameters) reads and writes a
/// PostgreSQL memory, `jsonb` columns going in and out as JSON, a JSON
/// path asked of the backend, and errors naming the server's words.
#[test]
fn the_seam_runs_the_same_sql_on_postgresql() {
    use somnus::store::db::{Backend, Db, Val};
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_seam");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    let cell = std::cell::RefCell::new(somnus::store::db::PgConn::new(
        m.loc.session().expect("session"),
    ));
    let db = Db::from(&cell);
    assert_eq!(db.backend(), Backend::Postgres);
    let id = db
        .query_opt("SELECT nextval('element_ids')", &[])
        .expect("id")
        .expect("row")
        .i64(0)
        .expect("int");
    let n = db
        .execute(
            "INSERT INTO concepts(id, type, name, attributes, metadata, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            &[
                Val::Int(id),
                Val::from("Person"),
                Val::from("Ada"),
                Val::Json(json!({"role": "lead", "team": {"size": 4}})),
                Val::Json(json!({"source": "test"})),
                Val::from(NOW),
            ],
        )
        .expect("insert");
    assert_eq!(n, 1);
    let r = db
        .query_opt(
            "SELECT id, type, name, attributes, metadata, version, updated_at FROM concepts WHERE type = ?1 AND name = ?2",
            &[Val::from("Person"), Val::from("Ada")],
        )
        .expect("query")
        .expect("row");
    assert_eq!(r.i64(0).expect("id"), id);
    assert_eq!(r.text(2).expect("name"), "Ada");
    assert_eq!(r.obj(3).expect("attributes")["team"]["size"], json!(4));
    assert_eq!(r.obj(4).expect("metadata")["source"], json!("test"));
    assert_eq!(r.i64(5).expect("version"), 1);
    let get = db.backend().json_get("attributes", "?1");
    let r = db
        .query_opt(
            &format!("SELECT {get} FROM concepts WHERE id = ?2"),
            &[db.backend().json_path(&["team", "size"]), Val::Int(id)],
        )
        .expect("path")
        .expect("row");
    assert_eq!(r.json(0).expect("json"), json!(4));
    let none = db
        .query_opt("SELECT id FROM concepts WHERE name = ?1", &[Val::Null])
        .expect("null");
    assert!(none.is_none());
    let e = db
        .execute(
            "INSERT INTO concepts(id, type, name, updated_at) VALUES (?1, 'Person', 'Ada', ?2)",
            &[Val::Int(id + 1), Val::from(NOW)],
        )
        .expect_err("duplicate type and name");
    assert!(e.message.contains("23505"), "{}", e.message);
}

/// The store's readers answer from a PostgreSQL memory as from SQLite:
/// a concept by id and by type and name, a proposition by its ends, any
/// element as KIP shows it.
#[test]
fn the_store_reads_elements_from_postgresql() {
    use somnus::store;
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_reads");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    let ada = insert_concept(&mut c, "Person", "Ada", json!({"role": "lead"}));
    let bob = insert_concept(&mut c, "Person", "Bob", json!({}));
    let link: i64 = c
        .query_one("SELECT nextval('element_ids')", &[])
        .expect("id")
        .get(0);
    c.execute(
        "INSERT INTO propositions(id, subject, predicate, object, attributes, metadata, updated_at) VALUES ($1, $2, 'knows', $3, '{}', '{\"confidence\": 0.9}', $4)",
        &[&link, &ada, &bob, &NOW],
    )
    .expect("link");
    let cell = std::cell::RefCell::new(somnus::store::db::PgConn::new(
        m.loc.session().expect("session"),
    ));
    let got = store::concept_by_id(&cell, ada)
        .expect("read")
        .expect("ada");
    assert_eq!((got.ty.as_str(), got.name.as_str()), ("Person", "Ada"));
    assert_eq!(got.attributes["role"], json!("lead"));
    assert_eq!(
        store::concept_id_by_type_name(&cell, "Person", "Bob").expect("read"),
        Some(bob)
    );
    assert_eq!(
        store::concept_label(&cell, bob).expect("read"),
        Some(("Person".into(), "Bob".into()))
    );
    let p = store::prop_by_spo(&cell, ada, "knows", bob)
        .expect("read")
        .expect("link");
    assert_eq!(p.metadata["confidence"], json!(0.9));
    let el = store::element(&cell, link).expect("read").expect("element");
    let shown = store::element_json(&cell, &el).expect("json");
    assert_eq!(shown["subject"], json!(format!("C:{ada}")));
    assert_eq!(shown["id"], json!(format!("P:{link}:knows")));
    assert_eq!(shown["metadata"]["_version"], json!(1));
    assert!(store::element(&cell, 999_999).expect("read").is_none());
}

/// The store's writers on PostgreSQL: ids from the memory's sequence
/// (never the same twice, whoever asks), an existing concept left alone,
/// updates bumping the version, links between concepts.
#[test]
fn the_store_writes_elements_to_postgresql() {
    use somnus::store;
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_writes");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    let cell = std::cell::RefCell::new(somnus::store::db::PgConn::new(
        m.loc.session().expect("session"),
    ));
    let ids = store::IdAllocator::default();
    let mut attrs = serde_json::Map::new();
    attrs.insert("role".into(), json!("lead"));
    let meta = serde_json::Map::new();
    let ada = store::insert_concept(&cell, &ids, "Person", "Ada", &attrs, &meta).expect("ada");
    let again =
        store::insert_concept_if_new(&cell, &ids, "Person", "Ada", &attrs, &meta).expect("again");
    assert_eq!(again, None, "an existing concept is left alone");
    let bob = store::insert_concept(&cell, &ids, "Person", "Bob", &attrs, &meta).expect("bob");
    assert!(bob > ada);
    // another writer's ids never collide with these
    let other = store::IdAllocator::default();
    let carol =
        store::insert_concept(&cell, &other, "Person", "Carol", &attrs, &meta).expect("carol");
    assert!(carol > bob);
    attrs.insert("role".into(), json!("director"));
    store::update_concept(&cell, ada, &attrs, &meta).expect("update");
    let got = store::concept_by_id(&cell, ada)
        .expect("read")
        .expect("ada");
    assert_eq!(
        (got.version, got.attributes["role"].clone()),
        (2, json!("director"))
    );
    let link = store::insert_prop(
        &cell,
        &ids,
        ada,
        "knows",
        bob,
        &serde_json::Map::new(),
        &meta,
    )
    .expect("link");
    let p = store::prop_by_spo(&cell, ada, "knows", bob)
        .expect("read")
        .expect("link");
    assert_eq!(p.id, link);
    store::update_prop(&cell, link, &attrs, &meta).expect("update link");
    let p = store::prop_by_id(&cell, link).expect("read").expect("link");
    assert_eq!(p.version, 2);
}

/// Callers' keys kept in a PostgreSQL memory: made once, looked up by
/// digest, listed without the key, revoked, the name never reused.
#[test]
fn keys_live_in_a_postgresql_memory() {
    use somnus::store::keys::{self, Role};
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_keys");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    let cell = std::cell::RefCell::new(somnus::store::db::PgConn::new(
        m.loc.session().expect("session"),
    ));
    assert!(!keys::any_active(&cell).expect("any"));
    let key = keys::add(&cell, "scout", Role::Subagent, "tester").expect("add");
    assert!(keys::any_active(&cell).expect("any"));
    let who = keys::lookup(&cell, &key).expect("lookup").expect("scout");
    assert_eq!((who.name.as_str(), who.role), ("scout", Role::Subagent));
    assert!(keys::lookup(&cell, "not-a-key").expect("lookup").is_none());
    assert_eq!(keys::active(&cell).expect("active").len(), 1);
    let e = keys::add(&cell, "scout", Role::Reader, "tester").expect_err("taken");
    assert!(e.message.contains("exists already"), "{}", e.message);
    keys::revoke(&cell, "scout").expect("revoke");
    assert!(keys::lookup(&cell, &key).expect("lookup").is_none());
    let listed = keys::list(&cell).expect("list");
    assert_eq!(listed.len(), 1);
    assert!(listed[0].revoked_at.is_some());
    assert!(keys::revoke(&cell, "scout").is_err());
}

/// A write's changes are counted through the entry's index, however long
/// the trail: before migration 16 the count read the whole table when
/// the planner's statistics lagged behind it.
#[test]
fn a_writes_changes_are_found_by_its_entry_not_by_scanning_the_trail() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_trail");
    let mut nx = m.open();
    let mut big = String::from(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} }"#);
    for i in 0..3000 {
        big.push_str(&format!(
            r#" CONCEPT ?n{i} {{ {{type: "Note", name: "n{i}"}} }}"#
        ));
    }
    big.push('}');
    assert!(matches!(nx.kip(&big), somnus::protocol::Outcome::Ok { .. }));
    let small = r#"UPSERT { CONCEPT ?n { {type: "Note", name: "last"} } }"#;
    assert!(matches!(
        nx.kip(small),
        somnus::protocol::Outcome::Ok { .. }
    ));
    drop(nx);
    let mut c = m.loc.connect().expect("connect");
    c.batch_execute("ANALYZE audit_changes").expect("analyze");
    let (entry, first): (i64, i64) = {
        let r = c
            .query_one(
                "SELECT id, first_change FROM audit_log ORDER BY id DESC LIMIT 1",
                &[],
            )
            .expect("last entry");
        (r.get(0), r.get(1))
    };
    let plan: Vec<String> = c
        .query(
            &format!(
                "EXPLAIN SELECT COUNT(*) FROM audit_changes c WHERE c.id >= {first} AND c.entry = {entry}"
            ),
            &[],
        )
        .expect("explain")
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect();
    assert!(
        plan.iter().any(|l| l.contains("audit_changes_entry")),
        "{plan:#?}"
    );
}

/// A connection the database ends (a restart, a terminated backend) fails
/// the next command at once with a clear error, a read (whose end was
/// sent without waiting) as well as a write; the memory then says its
/// connection is lost, and opens again.
#[test]
fn a_connection_ended_by_the_database_fails_the_next_command_at_once() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_ended");
    let read = r#"FIND(?t) WHERE { ?t {type: "$ConceptType"} } LIMIT 1"#;
    let write = r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Ada"} } }"#;
    // (the server's FATAL may reach the command before the socket's end
    // does, or after: rounds give both orders a chance)
    for cmd in [read, write].repeat(10) {
        let mut nx = m.open();
        assert!(matches!(nx.kip(read), somnus::protocol::Outcome::Ok { .. }));
        let mut admin = m.loc.connect().expect("connect");
        admin
            .batch_execute(&format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = 'somnus {}' AND pid <> pg_backend_pid()",
                m.loc.memory
            ))
            .expect("terminate");
        // (a hang fails the test instead of stopping it)
        let (tx, rx) = std::sync::mpsc::channel();
        let text = cmd.to_string();
        std::thread::spawn(move || {
            let out = nx.kip(&text);
            let _ = tx.send((out, nx.connection_lost()));
        });
        let (out, lost) = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("an answer, not a hang");
        let somnus::protocol::Outcome::Err(e) = out else {
            panic!("{cmd}: a command on an ended connection succeeded");
        };
        assert!(!e.message.is_empty(), "{e:?}");
        assert!(lost, "{cmd}: the connection is not seen as lost ({e:?})");
    }
    let mut nx = m.open();
    assert!(matches!(
        nx.kip(write),
        somnus::protocol::Outcome::Ok { .. }
    ));
}

/// A value PostgreSQL text cannot hold (U+0000) is the value's error
/// (`KIP_2003`, a `400`), not the server's "retry later", and nothing is
/// written; a server's refusal is given in its own words, never a bare
/// "db error", and no password shows.
#[test]
fn a_nul_in_a_value_is_a_clear_error_and_connection_errors_say_why() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_nul");
    let mut nx = m.demo();
    for cmd in [
        "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Nul Value\"} SET ATTRIBUTES { note: \"a\\u0000b\" } } }",
        "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Nul\\u0000Name\"} } }",
    ] {
        let v = nx.kip(cmd).to_json();
        assert_eq!(v["error"]["code"], "KIP_2003", "{cmd}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("U+0000"),
            "{v}"
        );
    }
    let v = nx
        .kip("FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} FILTER(?p.name == \"Nul Value\") }")
        .to_json();
    assert_eq!(v["result"], json!(0), "{v}");
    // a database that does not exist, with a password in the URL
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap_or(&url);
    let with_pw = base.replacen("://", "://somnus:hunter2@", 1);
    let with_pw = if with_pw.matches('@').count() > 1 {
        base.to_string()
    } else {
        with_pw
    };
    let loc = Location::parse(
        &format!("{with_pw}/no_such_database_here?password=hunter2"),
        None,
    )
    .expect("parse");
    let Err(e) = loc.connect() else {
        panic!("connected to a database that does not exist")
    };
    assert!(e.message.contains("does not exist"), "{}", e.message);
    assert!(!e.message.contains("hunter2"), "{}", e.message);
}

/// The body of the function `name` as the first migration that creates it
/// wrote it (`CREATE FUNCTION name(…) … AS $$ body $$`).
fn first_body(name: &str) -> String {
    let head = format!("CREATE FUNCTION {name}(");
    let text = MIGRATIONS
        .iter()
        .map(|m| m.postgres)
        .find(|t| t.contains(&head))
        .expect("a migration creates it");
    let from = text.find(&head).expect("head");
    let body = &text[from..];
    let open = body.find("AS $$").expect("body") + 5;
    let close = body[open..].find("$$;").expect("end") + open;
    body[open..close].to_string()
}

#[test]
fn the_search_documents_text_is_the_same_from_the_compiled_functions() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_fold");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    // the functions as the migrations first wrote them, beside the ones
    // the memory now has
    c.batch_execute(&format!(
        "CREATE FUNCTION pg_temp.old_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ {} $$;
         CREATE FUNCTION pg_temp.old_rest(a jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$ {} $$;",
        first_body("somnus_fold"),
        first_body("somnus_rest")
    ))
    .expect("the old functions");
    // every letter the fold maps and the ones just past its ranges, ASCII
    // with and without a slash, other scripts, marks alone, empty, NULL
    let mapped: String = (0xC0u32..=0x24F)
        .chain(0x300..=0x36F)
        .chain(0x1E00..=0x1EFF)
        .filter_map(char::from_u32)
        .collect();
    let texts: Vec<Option<String>> = vec![
        None,
        Some(String::new()),
        Some("Europe/Madrid".into()),
        Some("plain ascii, no slash".into()),
        Some("Lavapiés / Malasaña".into()),
        Some("東京/大阪 の メモ".into()),
        Some("Москва/Питер".into()),
        Some("Ελληνικά".into()),
        Some("e\u{301}\u{308}".into()),
        Some("\u{BF}\u{250}\u{2FF}\u{370}\u{1DFF}\u{1F00}/".into()),
        Some("🚨 ИНЦИДЕНТ — Ǆemal".into()),
        Some(mapped.clone()),
    ];
    // each letter alone in a word, with no slash beside it: the regular
    // expression that lets a text through unfolded must see every one
    let words: Vec<String> = (0xA0u32..0x2000)
        .filter_map(char::from_u32)
        .map(|ch| format!("a{ch}b"))
        .collect();
    let differ: Vec<String> = c
        .query(
            "SELECT t FROM unnest($1::text[]) t WHERE somnus_fold(t) IS DISTINCT FROM pg_temp.old_fold(t)",
            &[&words],
        )
        .expect("every letter")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(differ.is_empty(), "{differ:?}");
    for t in &texts {
        let row = c
            .query_one(
                "SELECT somnus_fold($1) IS NOT DISTINCT FROM pg_temp.old_fold($1), somnus_fold($1)",
                &[t],
            )
            .expect("fold");
        assert!(
            row.get::<_, bool>(0),
            "{t:?} folds to {:?}",
            row.get::<_, Option<String>>(1)
        );
    }
    for a in [
        json!({}),
        json!([1, 2]),
        json!("text"),
        json!({"role": "lead", "born": "1815-12-10", "met": "2026-01-02T10:00:00Z"}),
        json!({"description": "left out", "notes_md": "left out", "team": {"lead": "Ada", "ids": [1, "x-9"]}}),
        json!({"tags": ["東京", "Lavapiés"], "n": 3, "ok": true, "none": null}),
    ] {
        let row = c
            .query_one(
                "SELECT somnus_rest($1) IS NOT DISTINCT FROM pg_temp.old_rest($1), somnus_rest($1)",
                &[&a],
            )
            .expect("rest");
        assert!(
            row.get::<_, bool>(0),
            "{a} gives {:?}",
            row.get::<_, Option<String>>(1)
        );
    }
    // the search document of a row written now is the one the old
    // functions would have made
    let id = insert_concept(
        &mut c,
        "Place",
        "Malasaña/Madrid",
        json!({"description": "barrio de Madrid", "aliases": ["Maravillas"], "district": "Centro"}),
    );
    let same: bool = c
        .query_one(
            "SELECT search = setweight(to_tsvector('simple', pg_temp.old_fold(name)), 'A')
                || setweight(to_tsvector('simple', pg_temp.old_fold(COALESCE(attributes -> 'aliases', '[]')::text)), 'A')
                || setweight(to_tsvector('simple', pg_temp.old_fold(COALESCE(attributes ->> 'description', ''))), 'B')
                || setweight(to_tsvector('simple', pg_temp.old_fold(
                       COALESCE(attributes ->> 'content_summary', '') || ' ' || COALESCE(attributes ->> 'summary', '') || ' '
                       || COALESCE(attributes ->> 'title', '') || ' ' || COALESCE(attributes ->> 'content', ''))), 'C')
                || setweight(to_tsvector('simple', pg_temp.old_fold(pg_temp.old_rest(attributes))), 'D')
             FROM concepts WHERE id = $1",
            &[&id],
        )
        .expect("document")
        .get(0);
    assert!(same);
}

#[test]
fn the_triggers_find_the_memory_from_a_session_on_another_search_path() {
    let Some(url) = server() else { return };
    let m = Memory::new(&url, "t_path");
    let mut c = m.loc.connect().expect("connect");
    pg::migrate(&mut c, &m.loc).expect("migrate");
    let schema = format!("\"{}\"", m.loc.schema());
    // no trigger switches the session's path at each row any more
    let set: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = $1 AND p.proconfig IS NOT NULL",
            &[&m.loc.schema()],
        )
        .expect("proconfig")
        .get(0);
    assert_eq!(set, 0);
    let id = insert_concept(&mut c, "Person", "Ada", json!({"role": "engineer"}));
    // a session whose path does not hold the memory: the audit, the
    // re-embed queue and the change counter still find their tables
    c.batch_execute("SET search_path TO public").expect("path");
    let mut tx = c.transaction().expect("tx");
    tx.execute(
        "SELECT set_config('somnus.audit_entry', '9', true), set_config('somnus.audit_first_id', '0', true)",
        &[],
    )
    .expect("entry");
    tx.execute(
        &format!(
            "UPDATE {schema}.concepts SET attributes = $1, version = version + 1 WHERE id = $2"
        ),
        &[&json!({"role": "lead"}), &id],
    )
    .expect("update");
    tx.execute(
        &format!("INSERT INTO {schema}.audit_log(at, actor, trigger_name, command, kind) VALUES ($1, 'agent', 'test', 'x', 'UPSERT')"),
        &[&NOW],
    )
    .expect("an entry");
    tx.commit().expect("commit");
    let (op, after): (String, String) = {
        let r = c
            .query_one(
                &format!(
                    "SELECT op, after FROM {schema}.audit_changes WHERE entry = 9 AND element = $1"
                ),
                &[&id],
            )
            .expect("the change");
        (r.get(0), r.get(1))
    };
    assert_eq!(op, "update");
    assert!(after.contains("lead"), "{after}");
    let queued: i64 = c
        .query_one(
            &format!("SELECT count(*) FROM {schema}.embed_queue WHERE id = $1"),
            &[&id],
        )
        .expect("queue")
        .get(0);
    assert_eq!(queued, 1);
    let counted: i64 = c
        .query_one(&format!("SELECT count(*) FROM {schema}.changes"), &[])
        .expect("changes")
        .get(0);
    assert!(counted >= 1);
}
