//! `somnus bench`: generates a memory and measures the engine on it.
//! Every number is a median over many runs in this one process.

pub mod compare;
mod compare_pg;
pub mod duplicates;
pub mod plot;
pub mod recall;
#[cfg(feature = "reference")]
pub mod reference;
pub mod wal;
mod workload;
pub mod writers;

use crate::Nexus;
use crate::protocol::Outcome;
use std::time::{Duration, Instant};

/// What `somnus bench --compare` is asked to measure.
pub struct ComparePlan {
    pub sizes: Vec<usize>,
    pub runs: usize,
    pub reference_max: usize,
    /// Workload keys (`lookup`, `one_hop`, …); empty: all of them.
    pub workloads: Vec<String>,
    pub postgres: Option<String>,
}

/// `somnus bench --compare`: runs the comparison and writes
/// `compare.md`, `compare.json`, `compare.svg` and `compare.png` to `out`.
pub fn compare_to_files(plan: ComparePlan, out: &std::path::Path) -> color_eyre::Result<()> {
    use color_eyre::eyre::eyre;
    let mut workloads = Vec::new();
    for key in &plan.workloads {
        match workload::Workload::ALL
            .iter()
            .find(|w| w.key() == key.trim())
        {
            Some(w) => workloads.push(*w),
            None => {
                let keys: Vec<&str> = workload::Workload::ALL.iter().map(|w| w.key()).collect();
                return Err(eyre!(
                    "no workload is called {key:?}; they are: {}",
                    keys.join(", ")
                ));
            }
        }
    }
    if workloads.is_empty() {
        workloads = workload::Workload::ALL.to_vec();
    }
    std::fs::create_dir_all(out)?;
    if !cfg!(feature = "reference") {
        eprintln!(
            "built without the `reference` feature: somnus and hand-written SQL only (cargo run --release --features reference -- bench --compare)"
        );
    }
    let opts = compare::Options {
        sizes: plan.sizes,
        runs: plan.runs.clamp(5, 1000),
        dir: std::env::temp_dir().join(format!("somnus-compare-{}", std::process::id())),
        reference_max: plan.reference_max,
        verbose: true,
        postgres: plan.postgres,
        workloads,
    };
    let c = compare::run(&opts).map_err(|e| eyre!(e))?;
    let _ = std::fs::remove_dir_all(&opts.dir);
    write_comparison(&c, out)
}

/// `somnus bench --compare --from FILE`: the table and the plot again from
/// a recorded `compare.json`, without measuring.
pub fn rerender(from: &std::path::Path, out: &std::path::Path) -> color_eyre::Result<()> {
    use color_eyre::eyre::WrapErr;
    let text =
        std::fs::read_to_string(from).wrap_err_with(|| format!("reading {}", from.display()))?;
    let c: compare::Comparison = serde_json::from_str(&text)
        .wrap_err_with(|| format!("{} is not a recorded comparison", from.display()))?;
    std::fs::create_dir_all(out)?;
    write_comparison(&c, out)
}

fn write_comparison(c: &compare::Comparison, out: &std::path::Path) -> color_eyre::Result<()> {
    use color_eyre::eyre::eyre;
    let md = compare::markdown(c);
    std::fs::write(out.join("compare.md"), &md)?;
    std::fs::write(out.join("compare.json"), serde_json::to_string_pretty(c)?)?;
    let svg = plot::svg(c).map_err(|e| eyre!(e))?;
    std::fs::write(out.join("compare.svg"), &svg)?;
    std::fs::write(
        out.join("compare.png"),
        plot::png(&svg).map_err(|e| eyre!(e))?,
    )?;
    println!("{md}");
    println!(
        "wrote {0}/compare.md, {0}/compare.json, {0}/compare.svg, {0}/compare.png",
        out.display()
    );
    if !c.mismatches.is_empty() {
        return Err(eyre!(
            "{} answer(s) differed between somnus and the SQL",
            c.mismatches.len()
        ));
    }
    Ok(())
}

pub struct BenchOptions {
    pub concepts: usize,
    pub runs: usize,
    pub db: Option<std::path::PathBuf>,
}

pub(crate) struct Lcg(pub(crate) u64);
impl Lcg {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

pub struct Row {
    pub workload: String,
    pub median: Duration,
    /// The slow end of the runs, as [`Row::tail`] says.
    pub p95: Duration,
    pub tail: Tail,
    pub target: String,
    pub ok: Option<bool>,
}

/// What a row's `p95` column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The 95th percentile.
    P95,
    /// The 99th percentile (load tests).
    P99,
    /// The slowest of a few runs.
    Max,
    /// Nothing: the row is one run.
    One,
}

impl Row {
    /// The median's cell ("—" for a row that states a ratio, not a time).
    fn median_cell(&self) -> String {
        if self.median.is_zero() && self.tail == Tail::One {
            "—".into()
        } else {
            fmt_dur(self.median)
        }
    }

    /// The `p95` column's cell: the percentile it holds named when it is
    /// not the 95th.
    fn tail_cell(&self) -> String {
        match self.tail {
            Tail::P95 => fmt_dur(self.p95),
            Tail::P99 => format!("{} (p99)", fmt_dur(self.p95)),
            Tail::Max => format!("{} (max)", fmt_dur(self.p95)),
            Tail::One => "—".into(),
        }
    }
}

impl Row {
    /// A measured workload whose median must stay within `limit`.
    fn timed(
        workload: impl Into<String>,
        (median, p95): (Duration, Duration),
        target: &str,
        limit: Duration,
    ) -> Row {
        Row {
            workload: workload.into(),
            median,
            p95,
            tail: Tail::P95,
            target: target.into(),
            ok: Some(median <= limit),
        }
    }
}

pub(crate) fn must(o: Outcome, what: &str) -> serde_json::Value {
    match o {
        Outcome::Ok { result, .. } => result,
        Outcome::Err(e) => panic!("{what}: {} {}", e.code, e.message),
    }
}

fn fmt_dur(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1.0 {
        format!("{:.0} ns", us * 1000.0)
    } else if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

fn measure(runs: usize, mut f: impl FnMut(usize)) -> (Duration, Duration) {
    // warm-up
    for i in 0..runs.min(5) {
        f(i);
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|i| {
            let t = Instant::now();
            f(i + 1000);
            t.elapsed()
        })
        .collect();
    times.sort();
    (
        times[times.len() / 2],
        times[(times.len() * 95 / 100).min(times.len() - 1)],
    )
}

/// Builds the generated memory: `n` Entity concepts in 20 domains, each
/// with two `links_to` links, so `3n` propositions in all.
pub fn build(nx: &mut Nexus, n: usize) -> (Duration, usize) {
    must(
        nx.kip(r#"UPSERT {
            CONCEPT ?e { {type: "$ConceptType", name: "Entity"} SET ATTRIBUTES { description: "A generated entity" } }
            CONCEPT ?l { {type: "$PropositionType", name: "links_to"} SET ATTRIBUTES { description: "A generated directed link" } }
        }"#),
        "schema",
    );
    let mut d = String::from("UPSERT {");
    for k in 0..20 {
        d.push_str(&format!(r#" CONCEPT ?d{k} {{ {{type: "Domain", name: "Area{k}"}} SET ATTRIBUTES {{ description: "Generated area {k}" }} }}"#));
    }
    d.push('}');
    must(nx.kip(&d), "domains");
    let batch = 1000;
    let t = Instant::now();
    let mut elements = 0;
    let mut rng = Lcg(42);
    for start in (0..n).step_by(batch) {
        let mut s = String::with_capacity(batch * 200);
        s.push_str("UPSERT {");
        for i in start..(start + batch).min(n) {
            let score = rng.next() % 1000;
            s.push_str(&format!(
                r#" CONCEPT ?c{i} {{ {{type: "Entity", name: "e{i}"}} SET ATTRIBUTES {{ score: {score}, kind: "k{}" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Area{}"}}) }} }}"#,
                i % 7,
                i % 20
            ));
            elements += 2;
        }
        s.push_str(" } WITH METADATA { source: \"bench\", confidence: 0.8 }");
        must(nx.kip(&s), "concept batch");
    }
    for start in (0..n).step_by(batch) {
        let mut s = String::with_capacity(batch * 300);
        s.push_str("UPSERT {");
        for i in start..(start + batch).min(n) {
            let a = (i * 7 + 1) % n;
            let b = (i * 13 + 5) % n;
            for (j, t) in [a, b].iter().enumerate() {
                if *t != i {
                    s.push_str(&format!(
                        r#" PROPOSITION ?p{i}_{j} {{ ({{type: "Entity", name: "e{i}"}}, "links_to", {{type: "Entity", name: "e{t}"}}) }}"#
                    ));
                    elements += 1;
                }
            }
        }
        s.push_str(" } WITH METADATA { source: \"bench\", confidence: 0.7 }");
        must(nx.kip(&s), "link batch");
    }
    (t.elapsed(), elements)
}

/// Parsing a long UPSERT (500 concepts with attributes and a link each) and
/// a point lookup, by the hand-written reader every command goes through and
/// by the pest grammar that reports syntax errors.
fn parse_rows(runs: usize) -> Vec<Row> {
    let mut bulk = String::from("UPSERT {");
    for j in 0..500 {
        bulk.push_str(&format!(
            r#" CONCEPT ?x{j} {{ {{type: "Extra", name: "x{j}"}} SET ATTRIBUTES {{ score: {j}, kind: "x" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Area{}"}}) }} }}"#,
            j % 20
        ));
    }
    bulk.push_str(" } WITH METADATA { source: \"bench\", confidence: 0.8 }");
    let lookup = r#"FIND(?n) WHERE { ?n {type: "Entity", name: "e123"} }"#;
    let none = serde_json::Map::new();
    let mut rows = Vec::new();
    for (what, text, repeat) in [
        ("a 500-concept UPSERT", bulk.as_str(), 1),
        ("a point lookup", lookup, 1000),
    ] {
        let kb = text.len() as f64 / 1000.0;
        let per = |d: Duration| d / repeat;
        let (m, p) = measure(runs, |_| {
            for _ in 0..repeat {
                std::hint::black_box(crate::kip::parse(text, &none).ok());
            }
        });
        let reader = per(m);
        rows.push(Row::timed(
            format!("parse {what} ({kb:.1} KB), reader"),
            (reader, per(p)),
            "≤ 20 ns per byte",
            Duration::from_nanos(20 * text.len() as u64),
        ));
        let (m, p) = measure(runs, |_| {
            for _ in 0..repeat {
                std::hint::black_box(crate::kip::parser::parse_with_grammar(text, &none).ok());
            }
        });
        rows.push(Row {
            workload: format!("parse {what} ({kb:.1} KB), pest grammar"),
            median: per(m),
            p95: per(p),
            tail: Tail::P95,
            target: format!(
                "(the error path; {:.1}× the reader)",
                per(m).as_secs_f64() / reader.as_secs_f64()
            ),
            ok: None,
        });
    }
    rows
}

pub fn run(opts: &BenchOptions) -> Vec<Row> {
    let n = opts.concepts;
    let mut nx = match &opts.db {
        Some(p) => {
            let _ = std::fs::remove_file(p);
            Nexus::open(p).expect("open bench database")
        }
        None => Nexus::open_in_memory().expect("open in-memory database"),
    };
    let mut rows = parse_rows(opts.runs);
    let (elapsed, elements) = build(&mut nx, n);
    let rate = elements as f64 / elapsed.as_secs_f64();
    rows.push(Row {
        workload: format!(
            "bulk UPSERT ({} elements, batches of 1,000 concepts)",
            elements
        ),
        median: elapsed,
        p95: elapsed,
        tail: Tail::One,
        target: format!("≥ 50,000 elements/s (measured {:.0}/s)", rate),
        ok: Some(rate >= 50_000.0),
    });
    let runs = opts.runs;
    let mut rng = Lcg(7);
    let mut pick = move || rng.next() as usize % n;

    let names: Vec<usize> = (0..runs + 10).map(|_| pick()).collect();
    let (m, p) = measure(runs, |i| {
        let e = names[i % names.len()];
        must(
            nx.kip(&format!(
                r#"FIND(?n) WHERE {{ ?n {{type: "Entity", name: "e{e}"}} }}"#
            )),
            "lookup",
        );
    });
    rows.push(Row::timed(
        "point lookup by {type, name}",
        (m, p),
        "≤ 100 µs",
        Duration::from_micros(100),
    ));

    let (m, p) = measure(runs, |i| {
        let e = names[i % names.len()];
        must(nx.kip(&format!(r#"FIND(?o.name, ?l.metadata.confidence) WHERE {{ ?l ({{type: "Entity", name: "e{e}"}}, "links_to", ?o) }}"#)), "1-hop");
    });
    rows.push(Row::timed(
        "1-hop from a grounded concept",
        (m, p),
        "≤ 1 ms",
        Duration::from_millis(1),
    ));

    let (m, p) = measure(runs, |i| {
        let e = names[i % names.len()];
        must(nx.kip(&format!(r#"FIND(?d.name) WHERE {{ ({{type: "Entity", name: "e{e}"}}, "links_to"{{3}}, ?d) }}"#)), "3-hop");
    });
    rows.push(Row::timed(
        "3-hop path (`\"links_to\"{3}`)",
        (m, p),
        "≤ 10 ms",
        Duration::from_millis(10),
    ));

    let (m, p) = measure(runs, |i| {
        let e = names[i % names.len()];
        must(
            nx.kip(&format!(
                r#"FIND(?c.name) WHERE {{ ?a {{type: "Entity", name: "e{e}"}} (?a, "links_to", ?b) (?b, "links_to", ?c) (?c, "belongs_to_domain", {{type: "Domain", name: "Area3"}}) }}"#
            )),
            "3-hop chain",
        );
    });
    rows.push(Row::timed(
        "3-clause chain with a domain check",
        (m, p),
        "≤ 10 ms",
        Duration::from_millis(10),
    ));

    let small = runs.clamp(3, 7);
    let (m, p) = measure(small, |_| {
        must(nx.kip(r#"FIND(?d.name, COUNT(?n)) WHERE { ?d {type: "Domain"} (?n, "belongs_to_domain", ?d) }"#), "grouped count");
    });
    rows.push(Row {
        workload: "grouped COUNT (members per domain, whole memory)".into(),
        median: m,
        p95: p,
        tail: Tail::P95,
        target: "—".into(),
        ok: None,
    });

    let (m, p) = measure(small, |_| {
        must(nx.kip(r#"FIND(?n.name, ?n.attributes.score) WHERE { ?n {type: "Entity"} } ORDER BY ?n.attributes.score DESC LIMIT 10"#), "order by");
    });
    rows.push(Row {
        workload: "ORDER BY attribute + LIMIT 10 (full type scan)".into(),
        median: m,
        p95: p,
        tail: Tail::P95,
        target: "—".into(),
        ok: None,
    });

    let (m, p) = measure(runs, |i| {
        let e = names[i % names.len()];
        must(
            nx.kip(&format!(r#"SEARCH CONCEPT "e{e}" LIMIT 10"#)),
            "search",
        );
    });
    rows.push(Row::timed(
        "SEARCH CONCEPT top-10 by name",
        (m, p),
        "≤ 10 ms",
        Duration::from_millis(10),
    ));
    kml_workloads(&mut nx, n, &mut rows);
    rows
}

fn kml_workloads(nx: &mut Nexus, n: usize, rows: &mut Vec<Row>) {
    // UPDATE decay sweep: 100,000 propositions per statement (a fresh cycle
    // marker each run, so every run updates the full set)
    let sweep = 100_000.min(2 * n);
    let (m, p) = measure(3, |i| {
        must(
            nx.kip(&format!(
                r#"UPDATE ?l SET METADATA {{ confidence: CLAMP(MUL(COALESCE(?l.metadata.confidence, 1.0), 0.98), 0.0, 1.0), decayed_at: "run-{i}" }}
                   WHERE {{ ?l (?s, "links_to", ?o) }} LIMIT {sweep}"#
            )),
            "decay sweep",
        );
    });
    rows.push(Row::timed(
        format!("UPDATE decay sweep over {sweep} propositions"),
        (m, p),
        "≤ 2 s",
        Duration::from_secs(2),
    ));

    // MERGE of a node with 1,000 links into a twin sharing 100 of them
    let mut merge_times = Vec::new();
    for r in 0..5 {
        let mut s = format!(
            r#"UPSERT {{ CONCEPT ?a {{ {{type: "Entity", name: "dup{r}"}} SET PROPOSITIONS {{"#
        );
        for k in 0..1000 {
            s.push_str(&format!(
                r#" ("links_to", {{type: "Entity", name: "e{}"}})"#,
                (k * 97 + r) % n
            ));
        }
        s.push_str(&format!(
            r#" }} }} CONCEPT ?b {{ {{type: "Entity", name: "canon{r}"}} SET PROPOSITIONS {{"#
        ));
        for k in 0..100 {
            s.push_str(&format!(
                r#" ("links_to", {{type: "Entity", name: "e{}"}})"#,
                (k * 97 + r) % n
            ));
        }
        s.push_str(" } } }");
        must(nx.kip(&s), "merge setup");
        let t = Instant::now();
        must(nx.kip(&format!(r#"MERGE CONCEPT ?a INTO ?b WHERE {{ ?a {{type: "Entity", name: "dup{r}"}} ?b {{type: "Entity", name: "canon{r}"}} }}"#)), "merge");
        merge_times.push(t.elapsed());
    }
    merge_times.sort();
    let m = merge_times[merge_times.len() / 2];
    rows.push(Row {
        workload: "MERGE of a node with 1,000 links".into(),
        median: m,
        p95: merge_times[merge_times.len() - 1],
        tail: Tail::Max,
        target: "≤ 50 ms".into(),
        ok: Some(m <= Duration::from_millis(50)),
    });

    // DELETE CONCEPT ... DETACH of a hub with 10,000 links
    let mut del_times = Vec::new();
    for r in 0..3 {
        let mut s = format!(
            r#"UPSERT {{ CONCEPT ?h {{ {{type: "Entity", name: "hub{r}"}} SET PROPOSITIONS {{"#
        );
        for k in 0..10_000 {
            s.push_str(&format!(
                r#" ("links_to", {{type: "Entity", name: "e{}"}})"#,
                (k * 31 + r) % n
            ));
        }
        s.push_str(" } } }");
        must(nx.kip(&s), "hub setup");
        let t = Instant::now();
        must(
            nx.kip(&format!(
                r#"DELETE CONCEPT ?h DETACH WHERE {{ ?h {{type: "Entity", name: "hub{r}"}} }}"#
            )),
            "delete",
        );
        del_times.push(t.elapsed());
    }
    del_times.sort();
    let m = del_times[del_times.len() / 2];
    rows.push(Row {
        workload: "DELETE CONCEPT DETACH cascading over 10,000 links".into(),
        median: m,
        p95: del_times[del_times.len() - 1],
        tail: Tail::Max,
        target: "≤ 1 s".into(),
        ok: Some(m <= Duration::from_secs(1)),
    });
}

pub fn table_only(rows: &[Row]) -> String {
    let mut s = String::from("| workload | median | p95 | target |\n|---|---:|---:|---|\n");
    for r in rows {
        let mark = match r.ok {
            Some(true) => " ✅",
            Some(false) => " ❌",
            None => "",
        };
        s.push_str(&format!(
            "| {} | {} | {} | {}{} |\n",
            r.workload,
            r.median_cell(),
            r.tail_cell(),
            r.target,
            mark
        ));
    }
    s
}

pub fn markdown(rows: &[Row], n: usize) -> String {
    let mut s = format!(
        "Generated memory: {n} concepts, {} propositions (`somnus bench --concepts {n}`).\n\n| workload | median | p95 | target |\n|---|---:|---:|---|\n",
        n * 3
    );
    for r in rows {
        let mark = match r.ok {
            Some(true) => " ✅",
            Some(false) => " ❌",
            None => "",
        };
        s.push_str(&format!(
            "| {} | {} | {} | {}{} |\n",
            r.workload,
            r.median_cell(),
            r.tail_cell(),
            r.target,
            mark
        ));
    }
    s
}

/// Console workloads: drawing a frame over a 100,000-row result, and (given
/// a database) opening it to the first drawn frame.
pub fn console(db: Option<&std::path::Path>, runs: usize) -> Vec<Row> {
    use crate::tui::app::{App, Runner};
    use crate::tui::results::ResultTable;
    use crate::tui::workbench::Outcome;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::json;
    let mut rows = Vec::new();
    let nx = Nexus::open_in_memory().expect("memory");
    let mut app = App::new(nx, "bench", Runner::Inline(Default::default()));
    app.drain();
    let table = ResultTable {
        headers: vec!["?e.name".into(), "?e.attributes.score".into(), "?e".into()],
        rows: (0..100_000)
            .map(|i| {
                vec![
                    json!(format!("entity-{i}")),
                    json!(i % 997),
                    json!({"_type": "ConceptNode", "type": "Entity", "name": format!("e{i}")}),
                ]
            })
            .collect(),
    };
    app.workbench.outcome = Some(Outcome::Table {
        table,
        elapsed: Duration::from_millis(1),
        next_cursor: None,
        dry_run: false,
        kind: "FIND",
        summary: None,
    });
    let mut term = Terminal::new(TestBackend::new(120, 36)).expect("terminal");
    let (m, p) = measure(runs, |i| {
        if i % 2 == 0 {
            app.on_key(ratatui::crossterm::event::KeyEvent::new(
                ratatui::crossterm::event::KeyCode::F(2),
                ratatui::crossterm::event::KeyModifiers::NONE,
            ));
        }
        app.on_key(ratatui::crossterm::event::KeyEvent::new(
            ratatui::crossterm::event::KeyCode::PageDown,
            ratatui::crossterm::event::KeyModifiers::NONE,
        ));
        term.draw(|f| app.render(f)).expect("draw");
    });
    rows.push(Row::timed(
        "console: draw a frame of a 100,000-row result",
        (m, p),
        "≤ 5 ms",
        Duration::from_millis(5),
    ));
    if let Some(path) = db {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let (m, p) = measure(runs.min(20), |_| {
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            let nx = Nexus::open(path).expect("open");
            let mut app = App::new(
                nx,
                "bench",
                Runner::Pool {
                    tx,
                    handle: rt.handle().clone(),
                },
            );
            let mut term = Terminal::new(TestBackend::new(120, 36)).expect("terminal");
            term.draw(|f| app.render(f)).expect("draw");
        });
        rows.push(Row::timed(
            format!("console: open {} to the first frame", path.display()),
            (m, p),
            "≤ 300 ms",
            Duration::from_millis(300),
        ));
        rt.shutdown_timeout(Duration::from_secs(5));
    }
    rows
}

/// `somnus bench --server`: the load with the read log off and on, side
/// by side in one run (`ROUNDS` rounds, each an off run and an on run),
/// the rows of a middle round shown, and the cost of logging: the median
/// over the rounds of each round's throughput with the log against
/// without, and the p99 of every request served with the log against
/// that of every request served without (targets: ≥ 95% of the
/// throughput, p99 within 5%).
pub fn server_read_log(clients: usize, per_client: usize) -> Vec<Row> {
    // off-on, on-off, …: a run measured right after another is slower
    // (measured: off against off, the second 9% slower), so each mode
    // goes first as often as second. A round's throughputs are compared
    // with each other, never with another round's: the machine's pace
    // drifts between rounds by more than the log costs. One run's p99
    // rests on its slowest 400 requests and spreads ±4% from run to run
    // (measured: the same build's rounds from −6% to +17%); the p99 of
    // all the rounds' requests together rests on 2,400.
    const ROUNDS: usize = 6;
    let mut rounds: Vec<[(Vec<Row>, f64); 2]> = Vec::new();
    let mut all: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        let mut pair: [(Vec<Row>, f64); 2] = Default::default();
        for on in order {
            let (rows, tput, lat) = server_load(clients, per_client, None, false, on);
            all[usize::from(on)].extend(lat);
            pair[usize::from(on)] = (rows, tput);
        }
        rounds.push(pair);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        if v.len().is_multiple_of(2) {
            (v[mid - 1] + v[mid]) / 2.0
        } else {
            v[mid]
        }
    };
    let p99 = |lat: &mut Vec<Duration>| {
        lat.sort();
        lat.get((lat.len() * 99 / 100).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let ratio_of = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let ratios: Vec<f64> = rounds
        .iter()
        .map(|[off, on]| ratio_of(on.1, off.1))
        .collect();
    let ratio = median(ratios.clone());
    let off = median(rounds.iter().map(|r| r[0].1).collect());
    let on = median(rounds.iter().map(|r| r[1].1).collect());
    let [mut lat_off, mut lat_on] = all;
    let (p_off, p_on) = (p99(&mut lat_off), p99(&mut lat_on));
    let p_ratio = ratio_of(p_on.as_secs_f64(), p_off.as_secs_f64());
    // the rows of the round whose throughput ratio is nearest the median
    let mid = (0..rounds.len())
        .min_by(|&a, &b| {
            (ratios[a] - ratio)
                .abs()
                .total_cmp(&(ratios[b] - ratio).abs())
        })
        .unwrap_or(0);
    let [(off_rows, _), (on_rows, _)] = rounds.swap_remove(mid);
    let mut rows = off_rows;
    rows.extend(on_rows);
    rows.push(Row {
        workload: format!(
            "read log on: {:.0}% of the throughput without it ({on:.0} / {off:.0} req/s; rounds from {:.0}% to {:.0}%), p99 {:.2} ms against {:.2} ms ({:+.1}%), over {ROUNDS} rounds of an off run and an on run, in turn first and second",
            ratio * 100.0,
            ratios.iter().copied().fold(f64::MAX, f64::min) * 100.0,
            ratios.iter().copied().fold(f64::MIN, f64::max) * 100.0,
            p_on.as_secs_f64() * 1000.0,
            p_off.as_secs_f64() * 1000.0,
            (p_ratio - 1.0) * 100.0
        ),
        median: Duration::ZERO,
        p95: p_on,
        tail: Tail::P99,
        target: "≥ 95%, p99 within 5%".into(),
        ok: Some(ratio >= 0.95 && p_ratio <= 1.05),
    });
    rows
}

/// `somnus bench --server --during-sleep`: the load without cycles, then
/// the same load while full cycles run back to back, side by side in one
/// run, with the ratio of their throughputs and the p99 against the
/// targets (≥ 60% of the throughput, p99 ≤ 25 ms).
pub fn server_during_sleep(clients: usize, per_client: usize, events: usize) -> Vec<Row> {
    // the same memory (with the Events) both times
    let (mut rows, alone, _) = server_load(clients, per_client, Some(events), false, true);
    let (during, with, _) = server_load(clients, per_client, Some(events), true, true);
    let p99 = during.first().map(|r| r.p95).unwrap_or_default();
    let ratio = if alone > 0.0 { with / alone } else { 0.0 };
    rows.extend(during);
    rows.push(Row {
        workload: format!(
            "while cycles run: {:.0}% of the throughput without them ({with:.0} / {alone:.0} req/s), p99 {:.1} ms",
            ratio * 100.0,
            p99.as_secs_f64() * 1000.0
        ),
        median: Duration::ZERO,
        p95: p99,
        tail: Tail::P99,
        target: "≥ 60%, p99 ≤ 25 ms".into(),
        ok: Some(ratio >= 0.6 && p99 <= Duration::from_millis(25)),
    });
    rows
}

/// The HTTP server under load: `clients` concurrent clients, each sending
/// `per_client` requests (80% reads, 20% UPSERTs) over loopback; then every
/// acknowledged UPSERT is checked to be in the memory, and with the read
/// log on every request to be logged. With `sleep_events`, the memory
/// also holds that many generated Events, and with `cycles` full
/// heuristic sleep cycles run back to back on the same database, from
/// their own connection, for as long as the clients do. Returns the rows,
/// the throughput (requests per second) and every request's latency,
/// sorted.
pub fn server_load(
    clients: usize,
    per_client: usize,
    sleep_events: Option<usize>,
    cycles: bool,
    read_log: bool,
) -> (Vec<Row>, f64, Vec<Duration>) {
    use serde_json::{Value, json};
    let dir = std::env::temp_dir().join(format!("somnus-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("load.db");
    {
        let mut nx = crate::demo::create(&db).expect("demo memory");
        must(nx.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "A load-test note" } } }"#), "schema");
        if let Some(n) = sleep_events {
            build_events(&mut nx, n);
        }
    }
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sleeper = sleep_events.filter(|_| cycles).map(|_| {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            // as the servers' maintainer runs it
            crate::sleep::maintainer::lower_priority();
            let mut nx = Nexus::open(&db).expect("sleep connection");
            let mut r = crate::sleep::Heuristic;
            let mut cycles: Vec<(String, Duration)> = Vec::new();
            // the longest the cycles held the write lock, and in which phase
            let mut longest: (u64, String) = (0, String::new());
            let base =
                chrono::DateTime::parse_from_rfc3339("2026-11-20T03:00:00Z").expect("a time");
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let now = (base + chrono::Duration::hours(cycles.len() as i64))
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                let t = Instant::now();
                let status = match crate::sleep::run(
                    &mut nx,
                    &crate::sleep::Options::new(crate::sleep::Scope::Full, &now),
                    &mut r,
                    None,
                    None,
                ) {
                    Ok(rep) => {
                        for p in &rep.phases {
                            if p.longest_hold_ms > longest.0 {
                                longest = (p.longest_hold_ms, format!("{} {}", p.phase, p.name));
                            }
                        }
                        match rep.error {
                            Some(e) => format!("{}: {e}", rep.status),
                            None => rep.status,
                        }
                    }
                    Err(e) => format!("error: {}", e.message),
                };
                cycles.push((status, t.elapsed()));
            }
            (cycles, longest)
        })
    });
    let mut cfg =
        crate::server::ServerConfig::new(db.clone(), "127.0.0.1:0".parse().expect("addr"));
    if !read_log {
        cfg.read_log = None;
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let served = std::thread::spawn(move || {
        let rt = crate::server::runtime(Some(2)).expect("rt");
        let _ = rt.block_on(crate::server::serve_until(cfg, Some(tx), async {
            let _ = stop_rx.await;
        }));
    });
    let addr = rx.blocking_recv().expect("server");
    let url = format!("http://{addr}/kip");
    let started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
                let mut rng = Lcg(c as u64 + 11);
                let mut lat = Vec::with_capacity(per_client);
                let mut acked = Vec::new();
                let mut errors = 0usize;
                for i in 0..per_client {
                    let write = rng.next().is_multiple_of(5);
                    let body = if write {
                        json!({ "method": "execute_kip", "params": {
                            "command": "UPSERT { CONCEPT ?n { {type: \"Note\", name: :name} SET ATTRIBUTES { client: :c, seq: :i } } }",
                            "parameters": { "name": format!("note-{c}-{i}"), "c": c, "i": i } } })
                    } else if rng.next().is_multiple_of(2) {
                        json!({ "method": "execute_kip_readonly", "params": { "command": "FIND(?p.name, ?p.attributes.description) WHERE { ?p {type: \"Person\"} } LIMIT 20" } })
                    } else {
                        json!({ "method": "execute_kip_readonly", "params": { "command": "FIND(?pred, ?o.name) WHERE { ?l ({type: \"Person\", name: \"Mira Chen\"}, ?pred, ?o) } LIMIT 50" } })
                    };
                    let t = Instant::now();
                    let resp = agent.post(&url).header("content-type", "application/json").send(body.to_string());
                    let ok = match resp {
                        Ok(mut r) => {
                            let status = r.status().as_u16();
                            let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default()).unwrap_or(Value::Null);
                            status == 200 && v.get("result").is_some()
                        }
                        Err(_) => false,
                    };
                    lat.push(t.elapsed());
                    if !ok {
                        errors += 1;
                    } else if write {
                        acked.push(format!("note-{c}-{i}"));
                    }
                }
                (lat, acked, errors)
            })
        })
        .collect();
    let mut lat = Vec::new();
    let mut acked = Vec::new();
    let mut errors = 0;
    for h in handles {
        let (l, a, e) = h.join().expect("client");
        lat.extend(l);
        acked.extend(a);
        errors += e;
    }
    let wall = started.elapsed();
    // the server stops (writing what its log still queues)
    let _ = stop_tx.send(());
    let _ = served.join();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let (cycles, longest) = match sleeper.map(|h| h.join().unwrap_or_default()) {
        Some((c, l)) => (Some(c), Some(l)),
        None => (None, None),
    };
    lat.sort();
    let n = lat.len();
    let p50 = lat[n / 2];
    let p99 = lat[(n * 99 / 100).min(n - 1)];
    let nx = Nexus::open(&db).expect("reopen");
    let present: std::collections::HashSet<String> = {
        let conn = nx.connection_for_checks().expect("a SQLite memory");
        let mut st = conn
            .prepare("SELECT name FROM concepts WHERE type = 'Note'")
            .expect("prepare");
        st.query_map([], |r| r.get::<_, String>(0))
            .expect("query")
            .filter_map(Result::ok)
            .collect()
    };
    let missing = acked.iter().filter(|a| !present.contains(*a)).count();
    let logged = nx
        .reads_db()
        .and_then(crate::audit::reads::size)
        .map_or(0, |s| s.0);
    let _ = std::fs::remove_dir_all(&dir);
    let throughput = n as f64 / wall.as_secs_f64();
    let mut rows = vec![Row {
        workload: format!(
            "HTTP: {clients} clients × {per_client} requests (80% reads, 20% UPSERT): {:.0} req/s, {errors} errors, {} acknowledged writes, {missing} missing, {}{}",
            throughput,
            acked.len(),
            if read_log {
                format!("{logged} requests logged")
            } else {
                "read log off".to_string()
            },
            match (&cycles, sleep_events) {
                (Some(_), _) => ", while sleep cycles run".to_string(),
                (None, Some(n)) => format!(", {n} Events more, no cycle"),
                (None, None) => String::new(),
            }
        ),
        median: p50,
        p95: p99,
        tail: Tail::P99,
        target: "no errors, no lost write".into(),
        ok: Some(errors == 0 && missing == 0 && (!read_log || logged == n as i64)),
    }];
    if let Some(cycles) = cycles {
        let completed = cycles.iter().filter(|(s, _)| s == "completed").count();
        let mut times: Vec<Duration> = cycles.iter().map(|c| c.1).collect();
        times.sort();
        let median = times.get(times.len() / 2).copied().unwrap_or_default();
        let last = times.last().copied().unwrap_or_default();
        let failures: Vec<&str> = cycles
            .iter()
            .filter(|(s, _)| s != "completed")
            .map(|(s, _)| s.as_str())
            .collect();
        rows.push(Row {
            workload: format!(
                "full sleep cycles on the same database meanwhile: {completed} of {} completed, the write lock held {} ms at most (phase {}){}",
                cycles.len(),
                longest.as_ref().map_or(0, |l| l.0),
                longest.as_ref().map_or("", |l| l.1.as_str()),
                if failures.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", failures.join("; "))
                }
            ),
            median,
            p95: last,
            tail: Tail::Max,
            target: "every cycle completes".into(),
            ok: Some(!cycles.is_empty() && failures.is_empty()),
        });
    }
    (rows, throughput, lat)
}

/// Builds a memory of `events` conversations (each filed in a domain,
/// involving a person, mentioning a topic, and a fact that it discussed
/// the topic, observed then, with a confidence: four propositions apiece)
/// on top of 50 people and 2,000 topics.
pub fn build_events(nx: &mut Nexus, events: usize) -> Duration {
    let t = Instant::now();
    let mut s = String::from("UPSERT {");
    for k in 0..10 {
        s.push_str(&format!(r#" CONCEPT ?d{k} {{ {{type: "Domain", name: "Area{k}"}} SET ATTRIBUTES {{ description: "Generated area {k}" }} }}"#));
    }
    for k in 0..50 {
        s.push_str(&format!(r#" CONCEPT ?p{k} {{ {{type: "Person", name: "Person {k}"}} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Area{}"}}) }} }}"#, k % 10));
    }
    s.push_str(" }");
    must(nx.kip(&s), "people");
    must(nx.kip(r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Topic"} SET ATTRIBUTES { description: "A subject" } } CONCEPT ?d { {type: "$PropositionType", name: "discussed"} SET ATTRIBUTES { description: "A conversation discussed a subject" } } }"#), "topic type");
    for start in (0..2000).step_by(500) {
        let mut s = String::from("UPSERT {");
        for k in start..start + 500 {
            s.push_str(&format!(r#" CONCEPT ?t{k} {{ {{type: "Topic", name: "Topic {k}"}} SET ATTRIBUTES {{ description: "Generated topic {k}" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Area{}"}}) }} }}"#, k % 10));
        }
        s.push_str(" }");
        must(nx.kip(&s), "topics");
    }
    let mut rng = Lcg(7);
    let base = chrono::DateTime::parse_from_rfc3339("2026-11-20T00:00:00Z").expect("a time");
    for start in (0..events).step_by(1000) {
        let mut s = String::with_capacity(1000 * 600);
        s.push_str("UPSERT {");
        for i in start..(start + 1000).min(events) {
            let person = rng.next() % 50;
            let topic = rng.next() % 2000;
            let age = (rng.next() % (120 * 24)) as i64;
            let at = (base - chrono::Duration::hours(age))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            let salience = if i % 4 == 0 {
                String::new()
            } else {
                format!(", salience_score: {}", 10 + rng.next() % 80)
            };
            let status = if i % 3 == 0 { "completed" } else { "pending" };
            let conf = [0.9, 0.8, 0.6, 0.35][(rng.next() % 4) as usize];
            let expires = if i % 20 == 0 && status == "completed" {
                format!(
                    r#" WITH METADATA {{ expires_at: "{}" }}"#,
                    (base - chrono::Duration::days(1))
                        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )
            } else {
                String::new()
            };
            s.push_str(&format!(
                r#" CONCEPT ?e{i} {{ {{type: "Event", name: "Conversation:{i}"}} SET ATTRIBUTES {{ event_class: "Conversation", start_time: "{at}", content_summary: "Talked about topic {topic} with person {person}; decided next steps.", key_concepts: ["Topic {topic}"], participants: ["Person {person}"], consolidation_status: "{status}"{salience} }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Area{}"}}) ("involves", {{type: "Person", name: "Person {person}"}}) ("mentions", {{type: "Topic", name: "Topic {topic}"}}) ("discussed", {{type: "Topic", name: "Topic {topic}"}}) WITH METADATA {{ observed_at: "{at}", confidence: {conf} }} }} }}{expires}"#,
                topic % 10
            ));
        }
        s.push_str(r#" } WITH METADATA { source: "bench", author: "$self", confidence: 0.9 }"#);
        must(nx.kip(&s), "event batch");
    }
    t.elapsed()
}

/// [`sleep`] at each size, one after the other in one run, and for each
/// size after the first how many times the cycle's time grew against how
/// many times the Events did (the cycle should grow linearly: within a
/// fifth of the Events' ratio).
pub fn sleep_sizes(sizes: &[usize]) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut cycles: Vec<(usize, Duration)> = Vec::new();
    for &n in sizes {
        let r = sleep(n);
        if let Some(c) = r
            .iter()
            .find(|r| r.workload.starts_with("full heuristic cycle"))
        {
            cycles.push((n, c.median));
        }
        if sizes.len() == 1 {
            return r;
        }
        rows.extend(r.into_iter().map(|mut row| {
            row.workload = format!("{n}: {}", row.workload.trim_start());
            row
        }));
    }
    if let Some(&(n0, t0)) = cycles.first() {
        for &(n, t) in cycles.iter().skip(1) {
            let events = n as f64 / n0.max(1) as f64;
            let time = t.as_secs_f64() / t0.as_secs_f64().max(1e-9);
            rows.push(Row {
                workload: format!(
                    "{n} against {n0} Events: {events:.1}× the Events, {time:.2}× the cycle"
                ),
                median: t,
                p95: t,
                tail: Tail::One,
                target: format!("≤ {:.1}×", events * 1.2),
                ok: Some(time <= events * 1.2),
            });
        }
    }
    rows
}

/// A full heuristic sleep cycle over a generated memory of `events`
/// Events (four propositions each), on a file in a temporary folder:
/// total time, each phase, and the longest gap between progress events.
pub fn sleep(events: usize) -> Vec<Row> {
    let dir = std::env::temp_dir().join(format!("somnus-bench-sleep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    let mut nx = match Nexus::open(dir.join("memory.db")) {
        Ok(nx) => nx,
        Err(e) => panic!("cannot open the bench memory: {}", e.message),
    };
    let built = build_events(&mut nx, events);
    let (tx, rx) = std::sync::mpsc::channel::<crate::sleep::Progress>();
    // the longest gap, and the step it followed (where the cycle went
    // quiet)
    let watcher = std::thread::spawn(move || {
        let mut last = Instant::now();
        let mut gap = Duration::ZERO;
        let mut after = String::from("the start");
        let mut prev = String::from("the start");
        let mut n = 0u64;
        for p in rx {
            let now = Instant::now();
            if now - last > gap {
                gap = now - last;
                after = prev.clone();
            }
            prev = format!("phase {} {}", p.phase, p.step);
            last = now;
            n += 1;
        }
        (gap, n, after)
    });
    let mut r = crate::sleep::Heuristic;
    let opts = crate::sleep::Options::new(crate::sleep::Scope::Full, "2026-11-20T03:00:00Z");
    let t = Instant::now();
    let rep = crate::sleep::run(&mut nx, &opts, &mut r, Some(tx), None);
    let total = t.elapsed();
    let (gap, n, after) = watcher.join().unwrap_or((Duration::ZERO, 0, String::new()));
    let mut rows = vec![Row {
        workload: format!("build: {events} Events, {} propositions", events * 4),
        median: built,
        p95: built,
        tail: Tail::One,
        target: "(setup)".into(),
        ok: None,
    }];
    match rep {
        Ok(rep) => {
            rows.push(Row {
                workload: format!(
                    "full heuristic cycle ({}; {} items proposed)",
                    rep.status, rep.proposed_items
                ),
                median: total,
                p95: total,
                tail: Tail::One,
                target: "≤ 60 s".into(),
                ok: Some(total <= Duration::from_secs(60) && rep.status == "completed"),
            });
            rows.push(Row {
                workload: format!(
                    "longest gap between progress events ({n} events; after {after})"
                ),
                median: gap,
                p95: gap,
                tail: Tail::One,
                target: "≤ 250 ms".into(),
                ok: Some(gap <= Duration::from_millis(250)),
            });
            for p in &rep.phases {
                let d = Duration::from_millis(p.millis);
                rows.push(Row {
                    workload: format!("  phase {} {}", p.phase, p.name),
                    median: d,
                    p95: d,
                    tail: Tail::One,
                    target: String::new(),
                    ok: None,
                });
            }
        }
        Err(e) => rows.push(Row {
            workload: format!("full heuristic cycle failed: {}", e.message),
            median: total,
            p95: total,
            tail: Tail::One,
            target: "≤ 60 s".into(),
            ok: Some(false),
        }),
    }
    drop(nx);
    let _ = std::fs::remove_dir_all(&dir);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `p95` column says when it holds something else: a load test's
    /// 99th percentile, the slowest of a few runs, or nothing for one run.
    #[test]
    fn the_tail_column_names_what_it_holds() {
        let row = |tail| Row {
            workload: "w".into(),
            median: Duration::from_millis(2),
            p95: Duration::from_millis(27),
            tail,
            target: "t".into(),
            ok: None,
        };
        let table = table_only(&[
            row(Tail::P95),
            row(Tail::P99),
            row(Tail::Max),
            row(Tail::One),
            Row {
                median: Duration::ZERO,
                ..row(Tail::One)
            },
        ]);
        let lines: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(lines[0], "| w | 2.00 ms | 27.00 ms | t |");
        assert_eq!(lines[1], "| w | 2.00 ms | 27.00 ms (p99) | t |");
        assert_eq!(lines[2], "| w | 2.00 ms | 27.00 ms (max) | t |");
        assert_eq!(lines[3], "| w | 2.00 ms | — | t |");
        // a ratio: neither a median nor a tail
        assert_eq!(lines[4], "| w | — | — | t |");
    }
}
