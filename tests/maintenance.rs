//! Maintenance that runs itself inside `somnus serve`: a daydream after the
//! agents go quiet (and not while they write), a quick cycle for a backlog
//! over its target, a full cycle overdue at start caught up, one cycle at a
//! time across two servers on one memory, none with `--maintenance off`;
//! `GET /` shows the schedule.

use chrono::{Duration as D, Utc};
use serde_json::{Value, json};
use somnus::Nexus;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_somnus");

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("somnus-maint-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    dir
}

fn ok(nx: &mut Nexus, cmd: &str) {
    let r = nx.kip(cmd).to_json();
    assert!(r.get("error").is_none(), "{cmd}: {r}");
}

/// `n` conversation Events from the last hour.
fn events(nx: &mut Nexus, from: usize, n: usize) {
    let at = (Utc::now() - D::hours(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for i in from..from + n {
        ok(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Chat:{i}"}} SET ATTRIBUTES {{ start_time: "{at}", content_summary: "talk {i}" }} }} }}"#
            ),
        );
    }
}

/// A completed full cycle recorded as started `ago`.
fn full_run(nx: &Nexus, ago: D) {
    nx.connection_for_checks().expect("a SQLite memory")
        .execute(
            "INSERT INTO sleep_runs(started_at, finished_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status) VALUES (?1, ?1, 'full', 'test', 'heuristic', '$system', 0, ?1, '{}', 'completed')",
            [(Utc::now() - ago).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)],
        )
        .expect("run row");
}

/// (id, scope, trigger, status, started_at, finished_at) of every run but
/// the ones the test recorded.
type RunRow = (i64, String, String, String, String, Option<String>);

fn runs(db: &Path) -> Vec<RunRow> {
    let nx = Nexus::open(db).expect("open");
    let mut st = nx
        .connection_for_checks().expect("a SQLite memory")
        .prepare("SELECT id, scope, trigger_name, status, started_at, finished_at FROM sleep_runs WHERE trigger_name != 'test' ORDER BY id")
        .expect("prepare");
    st.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .expect("query")
    .filter_map(Result::ok)
    .collect()
}

struct Server {
    child: Child,
    addr: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    fn start(db: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args([
                "--db",
                &db.to_string_lossy(),
                "serve",
                "--addr",
                "127.0.0.1:0",
            ])
            .args(extra)
            .env_remove("SOMNUS_MAINTENANCE")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("serve");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let addr = loop {
            let line = lines.next().expect("server output").expect("line");
            log.lock().expect("log").push_str(&format!("{line}\n"));
            if let Some(i) = line.find("http://") {
                break line[i + 7..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_string();
            }
        };
        {
            let log = log.clone();
            std::thread::spawn(move || {
                for line in lines.map_while(Result::ok) {
                    log.lock().expect("log").push_str(&format!("{line}\n"));
                }
            });
        }
        Server { child, addr, log }
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into()
    }

    fn info(&self) -> Value {
        let mut r = Self::agent()
            .get(&format!("http://{}/", self.addr))
            .call()
            .expect("GET /");
        serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default()).expect("json")
    }

    fn kip(&self, command: &str, parameters: Value) -> Value {
        let body = json!({ "method": "execute_kip", "params": { "command": command, "parameters": parameters } });
        let mut r = Self::agent()
            .post(&format!("http://{}/kip", self.addr))
            .header("content-type", "application/json")
            .send(body.to_string())
            .expect("post");
        serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default()).expect("json")
    }

    fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }

    fn stop(mut self) -> String {
        #[cfg(unix)]
        {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(20) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.log()
    }
}

/// Waits up to `secs` for `f` to hold.
fn within(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(secs) {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    f()
}

const FAST: [&str; 6] = [
    "--idle-secs",
    "1",
    "--poll-secs",
    "0.2",
    "--budget-secs",
    "120",
];

#[test]
fn a_daydream_runs_once_the_agents_are_quiet_and_not_while_they_write() {
    let dir = tmp("idle");
    let db = dir.join("m.db");
    {
        let mut nx = Nexus::open(&db).expect("open");
        events(&mut nx, 0, 6);
        full_run(&nx, D::minutes(5));
    }
    let server = Server::start(&db, &FAST);
    let info = server.info();
    let m = &info["maintenance"];
    assert_eq!(m["enabled"], json!(true), "{info}");
    assert_eq!(m["settings"]["idle_secs"], json!(1), "{info}");
    assert_eq!(m["settings"]["full_every_hours"], json!(12.0), "{info}");
    // an agent writes every 250 ms for 4 s: no cycle starts meanwhile
    let t = Instant::now();
    let mut i = 0;
    while t.elapsed() < Duration::from_secs(4) {
        let r = server.kip(
            r#"UPSERT { CONCEPT ?e { {type: "Event", name: :n} SET ATTRIBUTES { content_summary: "more" } } }"#,
            json!({ "n": format!("Chat:w{i}") }),
        );
        assert!(r.get("result").is_some(), "{r}");
        i += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        runs(&db).is_empty(),
        "a cycle ran while the agent wrote: {:?}\n{}",
        runs(&db),
        server.log()
    );
    // what comes next is the daydream, once they are quiet
    let next = server.info()["maintenance"]["next"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(next.contains("daydream (idle)"), "{next}");
    // quiet: the daydream runs
    assert!(
        within(15, || runs(&db)
            .iter()
            .any(|r| r.1 == "daydream" && r.3 == "completed")),
        "{:?}\n{}",
        runs(&db),
        server.log()
    );
    let r = runs(&db);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].2.starts_with("idle: "), "{r:?}");
    assert!(
        within(5, || server.info()["maintenance"]["last"]
            .as_str()
            .is_some_and(|l| l.contains("daydream cycle #"))),
        "{}",
        server.info()
    );
    let log = server.stop();
    assert!(log.contains("maintenance: daydream cycle #"), "{log}");
    // a stopped server no longer says it maintains the memory
    let nx = Nexus::open(&db).expect("open");
    assert!(
        somnus::sleep::maintainer::holders(&nx)
            .expect("holders")
            .is_empty()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_backlog_over_its_target_starts_a_quick_cycle_and_maintenance_off_runs_none() {
    let dir = tmp("quick");
    let db = dir.join("m.db");
    {
        let mut nx = Nexus::open(&db).expect("open");
        ok(
            &mut nx,
            r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } }"#,
        );
        for i in 0..25 {
            ok(
                &mut nx,
                &format!(
                    r#"UPSERT {{ CONCEPT ?n {{ {{type: "Note", name: "n{i}"}} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
                ),
            );
        }
        events(&mut nx, 0, 1);
        // the last full cycle ran two hours ago: a quick one may run
        full_run(&nx, D::hours(2));
    }
    // off: nothing runs, and GET / says so
    let server = Server::start(&db, &[&FAST[..], &["--maintenance", "off"]].concat());
    assert_eq!(
        server.info()["maintenance"]["enabled"],
        json!(false),
        "{}",
        server.info()
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(runs(&db).is_empty(), "{:?}", runs(&db));
    server.stop();
    // the same through the environment
    let mut quiet = Command::new(BIN)
        .args([
            "--db",
            &db.to_string_lossy(),
            "serve",
            "--addr",
            "127.0.0.1:0",
        ])
        .args(FAST)
        .env("SOMNUS_MAINTENANCE", "off")
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("serve");
    std::thread::sleep(Duration::from_secs(2));
    let _ = quiet.kill();
    let _ = quiet.wait();
    assert!(runs(&db).is_empty(), "{:?}", runs(&db));
    // on: the backlog calls a quick cycle
    let server = Server::start(&db, &FAST);
    assert!(
        within(20, || runs(&db)
            .iter()
            .any(|r| r.1 == "quick" && r.3 == "completed")),
        "{:?}\n{}",
        runs(&db),
        server.log()
    );
    let r = runs(&db);
    assert!(
        r[0].2.starts_with("threshold: over target: Unsorted"),
        "{r:?}"
    );
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_full_cycle_overdue_at_start_is_caught_up() {
    let dir = tmp("catchup");
    let db = dir.join("m.db");
    {
        let mut nx = Nexus::open(&db).expect("open");
        events(&mut nx, 0, 3);
        // the host was off: the last full cycle is 30 hours old
        full_run(&nx, D::hours(30));
    }
    let server = Server::start(&db, &FAST);
    assert!(
        within(30, || runs(&db)
            .iter()
            .any(|r| r.1 == "full" && r.3 == "completed")),
        "{:?}\n{}",
        runs(&db),
        server.log()
    );
    let r = runs(&db);
    assert!(
        r[0].2
            .starts_with("catch_up: the last full cycle started 30.0 h ago"),
        "{r:?}"
    );
    // next: the scheduled one, twelve hours on
    assert!(
        within(5, || server.info()["maintenance"]["next"]
            .as_str()
            .is_some_and(|n| n.contains("full (scheduled)"))),
        "{}",
        server.info()
    );
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_servers_on_one_memory_never_run_two_cycles_at_once() {
    let dir = tmp("two");
    let db = dir.join("m.db");
    drop(somnus::demo::create(&db).expect("demo"));
    // every cycle kind comes due over and over: full every 3.6 s, daydreams
    // after 1 s of quiet
    let fast = [&FAST[..], &["--full-every-hours", "0.001"]].concat();
    let a = Server::start(&db, &fast);
    let b = Server::start(&db, &fast);
    // both say they maintain it
    assert!(
        within(5, || Nexus::open(&db)
            .ok()
            .and_then(|nx| somnus::sleep::maintainer::holders(&nx).ok())
            .is_some_and(|h| h.len() == 2)),
        "two holders"
    );
    assert!(
        within(60, || runs(&db)
            .iter()
            .filter(|r| r.3 == "completed")
            .count()
            >= 3),
        "{:?}\n{}\n{}",
        runs(&db),
        a.log(),
        b.log()
    );
    let (la, lb) = (a.stop(), b.stop());
    let r = runs(&db);
    for (i, x) in r.iter().enumerate() {
        for y in &r[i + 1..] {
            let x_end = x.5.clone().unwrap_or_else(|| "9999".into());
            // runs are recorded in start order; each began after the last ended
            assert!(y.4 >= x_end, "runs overlap: {x:?} and {y:?}\n{la}\n{lb}");
        }
    }
    assert!(
        r.iter()
            .all(|x| matches!(x.3.as_str(), "completed" | "cancelled")),
        "{r:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_mcp_session_maintains_its_memory_and_says_so() {
    let dir = tmp("mcp");
    let db = dir.join("m.db");
    {
        let mut nx = Nexus::open(&db).expect("open");
        events(&mut nx, 0, 3);
    }
    let mut child = Command::new(BIN)
        .args(["--db", &db.to_string_lossy(), "mcp"])
        .args(FAST)
        .env_remove("SOMNUS_MAINTENANCE")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mcp");
    // never a full cycle on a memory with Events: caught up at once
    assert!(
        within(30, || runs(&db)
            .iter()
            .any(|r| r.1 == "full" && r.3 == "completed")),
        "{:?}",
        runs(&db)
    );
    // (the holder's line is written after the run's own record: waited
    // for, not read at once, which a busy machine showed)
    let holders =
        || somnus::sleep::maintainer::holders(&Nexus::open(&db).expect("open")).expect("holders");
    assert!(
        within(10, || holders().first().is_some_and(|h| h
            .last
            .as_deref()
            .is_some_and(
                |l| l.contains("full cycle #1 (catch_up): completed")
            ))),
        "{:?}",
        holders()
    );
    let holders = holders();
    assert_eq!(holders.len(), 1, "{holders:?}");
    assert_eq!(holders[0].kind, "mcp");
    assert_eq!(holders[0].pid, child.id() as i64);
    // the session ends with its input
    drop(child.stdin.take());
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) && child.try_wait().ok().flatten().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that cannot listen maintains nothing: it exits before its
/// maintainer starts a cycle.
#[test]
fn a_server_that_cannot_listen_starts_no_cycle() {
    let dir = tmp("nolisten");
    let db = dir.join("m.db");
    {
        let mut nx = Nexus::open(&db).expect("open");
        events(&mut nx, 0, 3);
    }
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let out = Command::new(BIN)
        .args(["--db", &db.to_string_lossy(), "serve", "--addr", &addr])
        .args(FAST)
        .env_remove("SOMNUS_MAINTENANCE")
        .output()
        .expect("serve");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot listen"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(runs(&db).is_empty(), "{:?}", runs(&db));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `somnus bench --sleep 200,400`: each size measured in one run, then how
/// the cycle grew against the Events.
#[test]
fn the_sleep_bench_measures_sizes_side_by_side() {
    let rows = somnus::bench::sleep_sizes(&[200, 400]);
    let cycles: Vec<&somnus::bench::Row> = rows
        .iter()
        .filter(|r| r.workload.contains("full heuristic cycle (completed"))
        .collect();
    assert_eq!(
        cycles.len(),
        2,
        "{:?}",
        rows.iter().map(|r| &r.workload).collect::<Vec<_>>()
    );
    assert!(cycles[0].workload.starts_with("200: ") && cycles[1].workload.starts_with("400: "));
    let ratio = rows.last().expect("rows");
    assert!(
        ratio
            .workload
            .starts_with("400 against 200 Events: 2.0× the Events"),
        "{}",
        ratio.workload
    );
    assert_eq!(ratio.target, "≤ 2.4×");
    assert!(
        rows.iter()
            .any(|r| r.workload.contains("longest gap") && r.workload.contains("after "))
    );
}
