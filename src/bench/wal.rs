//! `somnus bench --wal`: how large the SQLite write-ahead log grows under
//! sustained writes while readers hold older snapshots (full sleep cycles
//! back to back, as a maintaining server runs them, and a long read every
//! few seconds), and how large it stays once the load stops. The same
//! load runs twice in one run, on fresh copies of one memory: with the
//! log's bound off (SQLite's defaults: automatic checkpoints, no size
//! limit) and on (`journal_size_limit` and the writer's truncating
//! checkpoints, `store::WAL_*`).

use super::{Lcg, Row, Tail};
use crate::Nexus;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one run of the load measured.
struct Measured {
    peak: u64,
    after: u64,
    file: u64,
    writes: usize,
    errors: usize,
    wall: Duration,
}

fn wal_size(db: &Path) -> u64 {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0)
}

/// The load on a copy of `seed`, with the bound on or off.
fn run(seed: &Path, dir: &Path, bounded: bool, clients: usize, per_client: usize) -> Measured {
    crate::store::set_wal_bound(bounded);
    let db = dir.join(if bounded {
        "bounded.db"
    } else {
        "unbounded.db"
    });
    let _ = std::fs::remove_file(&db);
    std::fs::copy(seed, &db).expect("copy the memory");
    // a connection open from start to end, as a server keeps its own
    // (SQLite removes the log when the last connection closes)
    let mut keeper = Nexus::open(&db).expect("the server's connection");
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    // the log's size, every 50 ms
    let sampler = {
        let (db, done, peak) = (db.clone(), done.clone(), peak.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                peak.fetch_max(wal_size(&db), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    // full sleep cycles back to back, as a maintaining server runs them
    let sleeper = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            let mut nx = Nexus::open(&db).expect("sleep connection");
            let mut r = crate::sleep::Heuristic;
            let base = chrono::DateTime::parse_from_rfc3339("2026-11-20T03:00:00Z").expect("time");
            let mut n = 0;
            while !done.load(Ordering::SeqCst) {
                let now = (base + chrono::Duration::hours(n))
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                let _ = crate::sleep::run(
                    &mut nx,
                    &crate::sleep::Options::new(crate::sleep::Scope::Full, &now),
                    &mut r,
                    None,
                    None,
                );
                n += 1;
            }
        })
    };
    // a long read every few seconds (a reader's snapshot held 2 s)
    let reader = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            let c = rusqlite::Connection::open(&db).expect("reader");
            while !done.load(Ordering::SeqCst) {
                let _ = c.execute_batch("BEGIN");
                let _: Result<i64, _> =
                    c.query_row("SELECT COUNT(*) FROM concepts", [], |r| r.get(0));
                std::thread::sleep(Duration::from_secs(2));
                let _ = c.execute_batch("COMMIT");
                std::thread::sleep(Duration::from_millis(500));
            }
        })
    };
    let started = Instant::now();
    let writers: Vec<_> = (0..clients)
        .map(|c| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut nx = Nexus::open(&db).expect("writer");
                let mut rng = Lcg(c as u64 + 3);
                let mut errors = 0;
                for i in 0..per_client {
                    let text: String = (0..40)
                        .map(|_| format!("w{} ", rng.next() % 100_000))
                        .collect();
                    let r = nx.kip_with(
                        "UPSERT { CONCEPT ?n { {type: \"Note\", name: :name} SET ATTRIBUTES { body: :t, seq: :i } } }",
                        serde_json::json!({ "name": format!("note-{c}-{i}"), "t": text, "i": i }),
                    );
                    if r.is_err() {
                        errors += 1;
                    }
                }
                errors
            })
        })
        .collect();
    let errors: usize = writers
        .into_iter()
        .map(|h| h.join().unwrap_or(per_client))
        .sum();
    let wall = started.elapsed();
    done.store(true, Ordering::SeqCst);
    let _ = sleeper.join();
    let _ = reader.join();
    let _ = sampler.join();
    peak.fetch_max(wal_size(&db), Ordering::SeqCst);
    // the load is over: what the log keeps once the writer next writes
    // after its check period (an agent's next write)
    std::thread::sleep(Duration::from_secs(crate::store::WAL_CHECK_SECS + 1));
    let _ = keeper.kip_with(
        "UPSERT { CONCEPT ?n { {type: \"Note\", name: \"after\"} } }",
        serde_json::json!({}),
    );
    let after = wal_size(&db);
    let file = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    drop(keeper);
    crate::store::set_wal_bound(true);
    Measured {
        peak: peak.load(Ordering::SeqCst),
        after,
        file,
        writes: clients * per_client - errors,
        errors,
        wall,
    }
}

/// Both runs side by side.
pub fn wal(events: usize, clients: usize, per_client: usize) -> Vec<Row> {
    let dir = std::env::temp_dir().join(format!("somnus-wal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let seed = dir.join("seed.db");
    {
        let mut nx = crate::demo::create(&seed).expect("demo memory");
        super::must(
            nx.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "A load-test note" } } }"#),
            "schema",
        );
        super::build_events(&mut nx, events);
    }
    let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
    let mut rows = Vec::new();
    for bounded in [false, true] {
        let m = run(&seed, &dir, bounded, clients, per_client);
        rows.push(Row {
            workload: format!(
                "WAL, bound {}: {} writes ({} errors) in {:.1} s while sleep cycles and 2 s reads run; memory {:.0} MB, log at its peak {:.0} MB, after the load {:.1} MB",
                if bounded { "on" } else { "off" },
                m.writes,
                m.errors,
                m.wall.as_secs_f64(),
                mb(m.file),
                mb(m.peak),
                mb(m.after),
            ),
            median: Duration::ZERO,
            p95: Duration::ZERO,
            tail: Tail::One,
            target: if bounded {
                format!(
                    "after ≤ {} MB",
                    crate::store::WAL_LIMIT_BYTES / (1024 * 1024)
                )
            } else {
                "—".into()
            },
            ok: bounded.then_some(m.after <= crate::store::WAL_LIMIT_BYTES && m.errors == 0),
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    rows
}
