//! `somnus bench --server --postgres URL`: many writers, side by side in
//! one run. The same load (8 clients, every request an UPSERT of a note of
//! its own over HTTP) goes to one `somnus serve` on a SQLite file, then to
//! two `somnus serve` on one PostgreSQL memory (the clients split between
//! them, as behind a load balancer). Every acknowledged write is then
//! looked for in the memory. Targets: no errors, no acknowledged write
//! missing, and PostgreSQL's throughput at least twice SQLite's (SQLite
//! has one writer at a time; PostgreSQL locks only the rows a write
//! touches).

use super::{Lcg, Row, Tail};
use crate::Nexus;
use crate::store::place::Place;
use std::time::{Duration, Instant};

/// One run: what it measured.
struct Load {
    throughput: f64,
    p50: Duration,
    p99: Duration,
    errors: usize,
    missing: usize,
    acked: usize,
}

impl Load {
    /// A run's tally from every request's latency (acknowledged or not)
    /// and its wall time.
    fn of(
        mut lat: Vec<Duration>,
        wall: Duration,
        errors: usize,
        missing: usize,
        acked: usize,
    ) -> Load {
        lat.sort();
        let n = lat.len().max(1);
        Load {
            throughput: lat.len() as f64 / wall.as_secs_f64(),
            p50: lat.get(n / 2).copied().unwrap_or_default(),
            p99: lat
                .get((n * 99 / 100).min(n - 1))
                .copied()
                .unwrap_or_default(),
            errors,
            missing,
            acked,
        }
    }
}

/// Defines the `Note` type the load writes.
fn define_note(place: &Place) -> Result<(), String> {
    let mut nx = Nexus::open_place(place, Default::default()).map_err(|e| e.message)?;
    super::must(
        nx.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "A load-test note" } } }"#),
        "schema",
    );
    Ok(())
}

/// The side-by-side rows.
pub fn writers(url: &str, clients: usize, per_client: usize) -> Result<Vec<Row>, String> {
    let dir = std::env::temp_dir().join(format!("somnus-writers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = Place::File(dir.join("writers.db"));
    let pg = Place::parse(url, Some(&format!("bench_writers_{}", std::process::id())))
        .map_err(|e| e.message)?;
    let lite = load(&[file], clients, per_client)?;
    let Place::Postgres(loc) = &pg else {
        return Err(format!("{url} is not a PostgreSQL URL"));
    };
    let _ = crate::store::postgres::drop_memory(loc);
    let out = load(&[pg.clone(), pg.clone()], clients, per_client);
    let _ = crate::store::postgres::drop_memory(loc);
    let raw = out.as_ref().ok().map(|_| raw_sql(loc, clients, per_client));
    let _ = crate::store::postgres::drop_memory(loc);
    let _ = std::fs::remove_dir_all(&dir);
    let post = out?;
    let mut rows = Vec::new();
    for (name, l) in [
        ("one somnus serve on a SQLite file", &lite),
        ("two somnus serve on one PostgreSQL memory", &post),
    ] {
        rows.push(Row {
            workload: format!(
                "{name}: {clients} writers × {per_client} UPSERTs, {:.0} writes/s, {} errors, {} of {} acknowledged missing",
                l.throughput, l.errors, l.missing, l.acked
            ),
            median: l.p50,
            p95: l.p99,
            tail: Tail::P99,
            target: "0 errors, 0 missing".into(),
            ok: Some(l.errors == 0 && l.missing == 0),
        });
    }
    if let Some(raw) = raw {
        let raw = raw?;
        let of_db = post.throughput / raw.throughput.max(f64::MIN_POSITIVE);
        rows.push(Row {
            workload: format!(
                "the database alone: the same write as hand-written SQL from {clients} connections (no HTTP, no KIP), {:.0} writes/s ({:.2}× SQLite's somnus)",
                raw.throughput,
                raw.throughput / lite.throughput.max(f64::MIN_POSITIVE)
            ),
            median: raw.p50,
            p95: raw.p99,
            tail: Tail::P99,
            target: "(what this machine's PostgreSQL can do)".into(),
            ok: None,
        });
        rows.push(Row {
            workload: format!(
                "two somnus serve ÷ the database alone: {of_db:.2}× ({:.0} / {:.0} writes/s)",
                post.throughput, raw.throughput
            ),
            median: Duration::ZERO,
            p95: Duration::ZERO,
            tail: Tail::One,
            target: "≥ 0.8×".into(),
            ok: Some(of_db >= 0.8),
        });
    }
    let ratio = if lite.throughput > 0.0 {
        post.throughput / lite.throughput
    } else {
        0.0
    };
    rows.push(Row {
        workload: format!(
            "PostgreSQL ÷ SQLite throughput with {clients} writers: {ratio:.2}× ({:.0} / {:.0} writes/s)",
            post.throughput, lite.throughput
        ),
        median: Duration::ZERO,
        p95: Duration::ZERO,
        tail: Tail::One,
        target: "≥ 2×".into(),
        ok: Some(ratio >= 2.0),
    });
    Ok(rows)
}

/// The load against one server per place (the same memory), clients
/// taking the servers in turn.
fn load(places: &[Place], clients: usize, per_client: usize) -> Result<Load, String> {
    define_note(&places[0])?;
    let mut urls = Vec::new();
    let mut stops = Vec::new();
    for p in places {
        let mut cfg =
            crate::server::ServerConfig::new(p.clone(), "127.0.0.1:0".parse().expect("addr"));
        cfg.maintenance = None;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = crate::server::runtime(Some(2)).expect("rt");
            let _ = rt.block_on(crate::server::serve_until(cfg, Some(tx), async {
                let _ = stop_rx.await;
            }));
        });
        let addr = rx
            .blocking_recv()
            .map_err(|_| "a server did not start".to_string())?;
        urls.push(format!("http://{addr}/kip"));
        stops.push(stop_tx);
    }
    let started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let url = urls[c % urls.len()].clone();
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let mut rng = Lcg(c as u64 + 7);
                let mut lat = Vec::with_capacity(per_client);
                let (mut acked, mut errors) = (Vec::new(), 0usize);
                for i in 0..per_client {
                    let body = serde_json::json!({ "method": "execute_kip", "params": {
                        "command": "UPSERT { CONCEPT ?n { {type: \"Note\", name: :name} SET ATTRIBUTES { client: :c, seq: :i, r: :r } } }",
                        "parameters": { "name": format!("note-{c}-{i}"), "c": c, "i": i, "r": rng.next() % 1000 } } });
                    let t = Instant::now();
                    let ok = match agent
                        .post(&url)
                        .header("content-type", "application/json")
                        .send(body.to_string())
                    {
                        Ok(mut r) => {
                            let status = r.status().as_u16();
                            let v: serde_json::Value = serde_json::from_str(
                                &r.body_mut().read_to_string().unwrap_or_default(),
                            )
                            .unwrap_or_default();
                            status == 200 && v.get("result").is_some()
                        }
                        Err(_) => false,
                    };
                    lat.push(t.elapsed());
                    if ok {
                        acked.push(format!("note-{c}-{i}"));
                    } else {
                        errors += 1;
                    }
                }
                (lat, acked, errors)
            })
        })
        .collect();
    let (mut lat, mut acked, mut errors) = (Vec::new(), Vec::new(), 0);
    for h in handles {
        let (l, a, e) = h.join().map_err(|_| "a client panicked".to_string())?;
        lat.extend(l);
        acked.extend(a);
        errors += e;
    }
    let wall = started.elapsed();
    for s in stops {
        let _ = s.send(());
    }
    let nx = Nexus::open_place(&places[0], Default::default()).map_err(|e| e.message)?;
    let present: std::collections::HashSet<String> = nx
        .db()
        .query("SELECT name FROM concepts WHERE type = 'Note'", &[])
        .map_err(|e| e.message)?
        .iter()
        .filter_map(|r| r.text(0).ok())
        .collect();
    let missing = acked.iter().filter(|a| !present.contains(*a)).count();
    Ok(Load::of(lat, wall, errors, missing, acked.len()))
}

/// The same write as hand-written SQL, in the round trips somnus uses
/// (the entry opened with the insert; closed and committed), from `clients`
/// connections of their own: what the database itself allows on this
/// machine, with no HTTP, parsing or planning in front of it.
fn raw_sql(
    loc: &crate::store::postgres::Location,
    clients: usize,
    per_client: usize,
) -> Result<Load, String> {
    define_note(&Place::Postgres(loc.clone()))?;
    const OPEN: &str = "WITH e AS (INSERT INTO audit_log(at, actor, trigger_name, command, kind, first_change, first_id, end_id) \
        VALUES ($1, 'agent', 'execute_kip', $2, 'UPSERT', (SELECT COALESCE(MAX(id), 0) + 1 FROM audit_changes), 0, 0) RETURNING id) \
        SELECT id, set_config('somnus.audit_entry', id::text, true), set_config('somnus.audit_first_id', $3, true) FROM e";
    const INSERT: &str = "WITH t AS (SELECT 1 FROM concepts WHERE type = '$ConceptType' AND name = 'Note'), \
        ins AS (INSERT INTO concepts (id, type, name, attributes, metadata, version, updated_at) \
          SELECT nextval('element_ids'), 'Note', $1, $2::jsonb, '{}', 1, $3 WHERE EXISTS (SELECT 1 FROM t) \
          ON CONFLICT(type, name) DO NOTHING RETURNING id) \
        SELECT EXISTS (SELECT 1 FROM t), (SELECT id FROM ins)";
    const CLOSE: &str = "WITH c AS (SELECT COUNT(*) AS n FROM audit_changes x \
          WHERE x.entry = current_setting('somnus.audit_entry')::bigint), \
        kept AS (UPDATE audit_log SET n_changes = (SELECT n FROM c) \
          WHERE id = current_setting('somnus.audit_entry')::bigint) \
        SELECT c.n, (SELECT to_jsonb(k) - 'search' FROM concepts k WHERE k.name = $1 AND k.type = 'Note') FROM c";
    let started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let loc = loc.clone();
            std::thread::spawn(move || -> Result<(Vec<Duration>, Vec<String>), String> {
                let mut s = loc.session().map_err(|e| e.message)?;
                let err = |e: tokio_postgres::Error| e.to_string();
                let (open, insert, close) = (
                    s.prepare(OPEN).map_err(err)?,
                    s.prepare(INSERT).map_err(err)?,
                    s.prepare(CLOSE).map_err(err)?,
                );
                let mut rng = Lcg(c as u64 + 7);
                let mut lat = Vec::with_capacity(per_client);
                let mut acked = Vec::with_capacity(per_client);
                for i in 0..per_client {
                    let name = format!("raw-{c}-{i}");
                    let attrs =
                        serde_json::json!({ "client": c, "seq": i, "r": rng.next() % 1000 });
                    let (now, cmd, first) = (crate::store::now(), "UPSERT", i64::MAX.to_string());
                    let t = Instant::now();
                    let opening: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
                        [&now, &cmd, &first];
                    let (_, made) = s
                        .query_with(
                            Some("BEGIN"),
                            Some((&open, &opening)),
                            &insert,
                            &[&name, &attrs, &now],
                            None,
                        )
                        .map_err(err)?;
                    let made: Option<i64> = made.first().and_then(|r| r.get(1));
                    s.query_with(None, None, &close, &[&name], Some("COMMIT"))
                        .map_err(err)?;
                    lat.push(t.elapsed());
                    if made.is_some() {
                        acked.push(name);
                    }
                }
                Ok((lat, acked))
            })
        })
        .collect();
    let (mut lat, mut acked) = (Vec::new(), Vec::new());
    for h in handles {
        let (l, a) = h.join().map_err(|_| "a client panicked".to_string())??;
        lat.extend(l);
        acked.extend(a);
    }
    let wall = started.elapsed();
    let errors = clients * per_client - acked.len();
    Ok(Load::of(lat, wall, errors, 0, acked.len()))
}
