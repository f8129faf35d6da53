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
    {
        let mut nx = Nexus::open_place(&places[0], Default::default()).map_err(|e| e.message)?;
        super::must(
            nx.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "A load-test note" } } }"#),
            "schema",
        );
    }
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
    lat.sort();
    let n = lat.len().max(1);
    let nx = Nexus::open_place(&places[0], Default::default()).map_err(|e| e.message)?;
    let present: std::collections::HashSet<String> = nx
        .db()
        .query("SELECT name FROM concepts WHERE type = 'Note'", &[])
        .map_err(|e| e.message)?
        .iter()
        .filter_map(|r| r.text(0).ok())
        .collect();
    Ok(Load {
        throughput: (clients * per_client) as f64 / wall.as_secs_f64(),
        p50: lat.get(n / 2).copied().unwrap_or_default(),
        p99: lat
            .get((n * 99 / 100).min(n - 1))
            .copied()
            .unwrap_or_default(),
        errors,
        missing: acked.iter().filter(|a| !present.contains(*a)).count(),
        acked: acked.len(),
    })
}
