//! Command-line interface.

use crate::Nexus;
use crate::conformance;
use crate::protocol::{Arguments, Method, Request};
use clap::{Parser, Subcommand};
use color_eyre::eyre::{Result, WrapErr, eyre};
use serde_json::{Map, Value, json};
use std::io::{BufRead, Write};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "somnus",
    version,
    about = "A KIP memory engine and console for AI agents"
)]
pub struct Cli {
    /// The memory database (default: $SOMNUS_DB, else ~/.local/share/somnus/memory.db)
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run one KIP command and print the JSON response
    Kip {
        /// Parameters for :placeholders, as a JSON object
        #[arg(long)]
        params: Option<String>,
        /// Use execute_kip_readonly (writes are refused)
        #[arg(long)]
        readonly: bool,
        /// Validate and execute without committing
        #[arg(long)]
        dry_run: bool,
        /// The KIP command text (`-` reads it from standard input)
        command: String,
    },
    /// Answer one JSON request per line on standard input
    Rpc,
    /// Create the demo memory (at --db, else demo.db beside the default memory) and open the console on it
    Demo {
        /// Only create the memory; do not open the console
        #[arg(long)]
        no_console: bool,
    },
    /// Generate a memory and measure the engine on it (Markdown table)
    Bench {
        /// Concepts to generate (three propositions each)
        #[arg(long, default_value_t = 1_000_000)]
        concepts: usize,
        /// Runs per query workload
        #[arg(long, default_value_t = 200)]
        runs: usize,
        /// Measure the console instead (with --db: opening that memory to its first frame)
        #[arg(long)]
        console: bool,
    },
    /// Run conformance fixture files or folders; ends with `N passed, N failed`
    Conformance {
        /// Fixture files or folders
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print every case, not only failures
        #[arg(long, short)]
        verbose: bool,
    },
}

/// `$SOMNUS_DB`, else the per-user data folder.
pub fn default_db() -> PathBuf {
    if let Some(p) = std::env::var_os("SOMNUS_DB") {
        return PathBuf::from(p);
    }
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("somnus").join("memory.db")
}

/// The demo memory's default home, beside the default memory.
pub fn default_demo_db() -> PathBuf {
    default_db().with_file_name("demo.db")
}

fn open(db: &Option<PathBuf>) -> Result<Nexus> {
    let path = db.clone().unwrap_or_else(default_db);
    Nexus::open(&path).map_err(|e| eyre!("cannot open {}: {}", path.display(), e.message))
}

pub fn run(cli: Cli) -> Result<i32> {
    match cli.cmd {
        None => {
            let nx = open(&cli.db)?;
            let label = nx
                .path()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            crate::tui::run(nx, &label)?;
            Ok(0)
        }
        Some(Cmd::Kip {
            params,
            readonly,
            dry_run,
            command,
        }) => {
            let command = if command == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
                s
            } else {
                command
            };
            let parameters: Map<String, Value> = match params {
                Some(p) => serde_json::from_str(&p).wrap_err("--params must be a JSON object")?,
                None => Map::new(),
            };
            let mut nx = open(&cli.db)?;
            let method = if readonly {
                Method::ExecuteKipReadonly
            } else {
                Method::ExecuteKip
            };
            let req = Request::new(
                method,
                Arguments {
                    command: Some(command),
                    parameters,
                    dry_run,
                    ..Default::default()
                },
            );
            let resp = nx.execute(&req).to_json();
            println!("{}", serde_json::to_string_pretty(&resp)?);
            Ok(if resp.get("error").is_some() { 1 } else { 0 })
        }
        Some(Cmd::Demo { no_console }) => {
            let path = cli.db.clone().unwrap_or_else(default_demo_db);
            let nx = crate::demo::create(&path).map_err(|e| {
                eyre!(
                    "cannot create the demo memory at {}: {}",
                    path.display(),
                    e.message
                )
            })?;
            if no_console {
                let o = nx.schema_overview().map_err(|e| eyre!(e.message))?;
                println!(
                    "demo memory at {}: {} concepts, {} propositions",
                    path.display(),
                    o.concepts,
                    o.propositions
                );
                return Ok(0);
            }
            crate::tui::run(nx, &format!("demo · {}", path.display()))?;
            Ok(0)
        }
        Some(Cmd::Rpc) => {
            let mut nx = open(&cli.db)?;
            let stdin = std::io::stdin();
            let mut out = std::io::stdout().lock();
            for line in stdin.lock().lines() {
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                let resp = match serde_json::from_str::<Value>(&line) {
                    Err(e) => {
                        json!({ "error": crate::kip::KipError::syntax(format!("request is not JSON: {e}")).to_json() })
                    }
                    Ok(v) => match Request::from_json(&v) {
                        Ok(req) => nx.execute(&req).to_json(),
                        Err(e) => json!({ "error": e.to_json() }),
                    },
                };
                writeln!(out, "{}", serde_json::to_string(&resp)?)?;
                out.flush()?;
            }
            Ok(0)
        }
        Some(Cmd::Bench {
            runs,
            console: true,
            ..
        }) => {
            let rows = crate::bench::console(cli.db.as_deref(), runs);
            println!("{}", crate::bench::table_only(&rows));
            Ok(0)
        }
        Some(Cmd::Bench {
            concepts,
            runs,
            console: false,
        }) => {
            let opts = crate::bench::BenchOptions {
                concepts,
                runs,
                db: cli.db.clone(),
            };
            let rows = crate::bench::run(&opts);
            println!("{}", crate::bench::markdown(&rows, concepts));
            Ok(0)
        }
        Some(Cmd::Conformance { paths, verbose }) => {
            let files = conformance::collect(&paths).map_err(|e| eyre!(e))?;
            let (mut passed, mut failed) = (0, 0);
            for f in files {
                let reports = conformance::run_fixture(&f).map_err(|e| eyre!(e))?;
                for r in reports {
                    if r.passed {
                        passed += 1;
                        if verbose {
                            println!("PASS {} :: {}", r.file, r.case);
                        }
                    } else {
                        failed += 1;
                        println!("FAIL {} :: {}: {}", r.file, r.case, r.detail);
                    }
                }
            }
            println!("{passed} passed, {failed} failed");
            Ok(if failed == 0 { 0 } else { 1 })
        }
    }
}
