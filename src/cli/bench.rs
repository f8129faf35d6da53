//! `somnus bench`: which measurement a flag asks for, run and printed as
//! a Markdown table.

use super::{Cmd, Target};
use crate::store::place::Place;
use color_eyre::eyre::{Result, eyre};
use std::path::PathBuf;

/// Runs the measurement `cmd` (a `Cmd::Bench`) asks for.
pub(super) fn run(cmd: Cmd, target: &Target) -> Result<i32> {
    match cmd {
        Cmd::Bench {
            postgres: Some(_),
            server: false,
            compare: false,
            ..
        } => Err(eyre!(
            "--postgres goes with --server (many writers) or --compare (the workloads side by side)"
        )),
        Cmd::Bench {
            compare: true,
            sizes,
            reference_max,
            workloads,
            out,
            runs,
            from,
            postgres,
            ..
        } => {
            match from {
                Some(f) => crate::bench::rerender(&f, &out)?,
                None => {
                    let plan = crate::bench::ComparePlan {
                        sizes,
                        runs,
                        reference_max,
                        workloads,
                        postgres,
                    };
                    crate::bench::compare_to_files(plan, &out)?
                }
            }
            Ok(0)
        }
        Cmd::Bench {
            recall: true,
            dataset,
            ..
        } => {
            let (title, convs) = match &dataset {
                Some(f) => (
                    format!("SEARCH recall on {}", f.display()),
                    crate::bench::recall::locomo(f).map_err(|e| eyre!(e))?,
                ),
                None => (
                    "SEARCH recall on the generated conversations".to_string(),
                    crate::bench::recall::generated(4),
                ),
            };
            let model = crate::engine::embed::EmbeddingConfig::from_env();
            let r = crate::bench::recall::measure(&convs, model.as_ref()).map_err(|e| eyre!(e))?;
            crate::say!("{}", crate::bench::recall::table(&title, &r));
            Ok(0)
        }
        Cmd::Bench {
            duplicates: Some(f),
            ..
        } => {
            let labels = crate::bench::duplicates::read(&f).map_err(|e| eyre!(e))?;
            let s = crate::bench::duplicates::measure(&labels).map_err(|e| eyre!(e))?;
            crate::say!(
                "{}",
                crate::bench::duplicates::table(&format!("Duplicates in {}", f.display()), &s)
            );
            Ok(0)
        }
        Cmd::Bench {
            wal: true, runs, ..
        } => {
            let rows = crate::bench::wal::wal(20_000, 4, runs.max(1));
            crate::say!("{}", crate::bench::table_only(&rows));
            Ok(0)
        }
        Cmd::Bench { sleep, .. } if !sleep.is_empty() => {
            let rows = crate::bench::sleep_sizes(&sleep);
            crate::say!("{}", crate::bench::table_only(&rows));
            Ok(0)
        }
        Cmd::Bench {
            server: true,
            postgres: Some(url),
            runs,
            ..
        } => {
            // (--runs: UPSERTs per writer)
            let rows =
                crate::bench::writers::writers(&url, 8, runs.max(1)).map_err(|e| eyre!(e))?;
            crate::say!("{}", crate::bench::table_only(&rows));
            Ok(0)
        }
        Cmd::Bench {
            server: true,
            during_sleep,
            ..
        } => {
            let rows = if during_sleep {
                crate::bench::server_during_sleep(8, 5000, 20_000)
            } else {
                crate::bench::server_read_log(8, 5000)
            };
            crate::say!("{}", crate::bench::table_only(&rows));
            Ok(0)
        }
        Cmd::Bench {
            runs,
            console: true,
            ..
        } => {
            let rows = crate::bench::console(bench_file(target)?.as_deref(), runs);
            crate::say!("{}", crate::bench::table_only(&rows));
            Ok(0)
        }
        Cmd::Bench {
            concepts,
            runs,
            console: false,
            server: false,
            ..
        } => {
            let opts = crate::bench::BenchOptions {
                concepts,
                runs,
                db: bench_file(target)?,
            };
            let rows = crate::bench::run(&opts);
            crate::say!("{}", crate::bench::markdown(&rows, concepts));
            Ok(0)
        }
        _ => Err(eyre!("not a bench command")),
    }
}

/// The file `--db` names for a benchmark (which builds its own memories
/// in SQLite files).
fn bench_file(t: &Target) -> Result<Option<PathBuf>> {
    match &t.given {
        None => Ok(None),
        Some(db) => match Place::parse(db, None).map_err(|e| eyre!("{}", e.message))? {
            Place::File(p) => Ok(Some(p)),
            Place::Postgres(_) => Err(eyre!(
                "the benchmark builds SQLite memories: --db names a file here"
            )),
        },
    }
}
