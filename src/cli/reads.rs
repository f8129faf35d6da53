//! `somnus reads`: what agents asked (the read log of `serve`, `mcp` and
//! `rpc`), the elements they use most and never, and the log's retention;
//! and the `--read-log` options of the commands that log.

use crate::Nexus;
use crate::audit::reads::{self, Filter};
use clap::{Args, Subcommand};
use color_eyre::eyre::{Result, eyre};
use serde_json::json;

/// Whether and how long requests are logged (`serve`, `mcp`, `rpc`).
#[derive(Args, Debug, Clone)]
pub struct ReadLogArgs {
    /// Log every request with its caller, what came back and its latency (on, off)
    #[arg(long, default_value = "on")]
    read_log: String,
    /// Days a logged request is kept (read counts per element are kept longer)
    #[arg(long, default_value_t = reads::DEFAULT_RETENTION_DAYS)]
    read_log_days: u32,
    /// Requests the log keeps at most (the oldest go first)
    #[arg(long, default_value_t = reads::DEFAULT_MAX_ROWS)]
    read_log_max: u64,
}

impl ReadLogArgs {
    pub fn settings(&self) -> Result<Option<crate::server::read_log::Settings>> {
        let on = match self.read_log.as_str() {
            "on" => true,
            "off" => false,
            other => return Err(eyre!("--read-log takes on or off, not `{other}`")),
        };
        if self.read_log_days == 0 || self.read_log_max == 0 {
            return Err(eyre!(
                "--read-log-days and --read-log-max must be at least 1 (--read-log off logs nothing)"
            ));
        }
        Ok(on.then_some(crate::server::read_log::Settings {
            retention_days: self.read_log_days,
            max_rows: self.read_log_max,
        }))
    }
}

#[derive(Subcommand, Debug)]
pub enum ReadsCmd {
    /// The elements agents read most, with how often and when last
    Top {
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Concepts no agent has read since the log began (oldest first)
    Never {
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Drop logged requests older than the retention (and past --max), and the counts of elements that no longer exist
    Prune {
        /// Keep this many days of requests
        #[arg(long, default_value_t = reads::DEFAULT_RETENTION_DAYS)]
        older_than_days: u32,
        /// Keep at most this many requests
        #[arg(long)]
        max: Option<u64>,
        /// Only say what would be dropped
        #[arg(long)]
        dry_run: bool,
    },
}

/// What `somnus reads` lists.
pub struct List {
    pub caller: Option<String>,
    pub kind: Option<String>,
    pub errors: bool,
    pub since: Option<String>,
    pub limit: usize,
    pub json: bool,
}

fn fail(e: crate::kip::KipError) -> color_eyre::Report {
    eyre!("{}: {}", e.code, e.message)
}

/// `somnus reads [...]`: the newest requests first.
pub fn list(nx: &Nexus, l: &List) -> Result<i32> {
    let since = match &l.since {
        Some(t) => Some(crate::audit::time_bound(t, false).map_err(fail)?),
        None => None,
    };
    let f = Filter {
        caller: l.caller.clone(),
        kind: l.kind.clone(),
        errors_only: l.errors,
        after: None,
        since,
    };
    let rows = reads::recent(nx.reads_db().map_err(fail)?, &f, l.limit).map_err(fail)?;
    if l.json {
        crate::say_json!(&json!(rows.iter().map(|r| r.to_json()).collect::<Vec<_>>()))?;
        return Ok(0);
    }
    if rows.is_empty() {
        let (n, _, _) = reads::size(nx.reads_db().map_err(fail)?).map_err(fail)?;
        crate::say!(
            "{}",
            if n == 0 {
                "No request logged yet: agents' requests over `somnus serve`, `mcp` and `rpc` are logged as they are answered."
            } else {
                "No logged request matches."
            }
        );
        return Ok(0);
    }
    for r in &rows {
        let first_line = r.command.lines().next().unwrap_or("");
        crate::say!(
            "#{} {} {} via {} {} rows={} {:.1} ms{}\n    {}",
            r.id,
            r.at,
            r.caller,
            r.channel,
            if r.kind.is_empty() { "?" } else { &r.kind },
            r.rows,
            r.micros as f64 / 1000.0,
            r.error
                .as_deref()
                .map(|e| format!(" ERROR {e}"))
                .unwrap_or_default(),
            clip(&crate::text::one_line(first_line), 160)
        );
    }
    Ok(0)
}

/// At most `n` characters, `…` marking a cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Labels for element ids: `Type:Name` for concepts, the KIP id of links.
pub fn run(nx: &mut Nexus, what: &ReadsCmd) -> Result<i32> {
    match what {
        ReadsCmd::Top { limit, json } => {
            let top = reads::most_read_named(nx.reads_db().map_err(fail)?, *limit).map_err(fail)?;
            if *json {
                crate::say_json!(&json!(
                    top.iter()
                        .map(|u| json!({"element": u.label, "id": u.id, "reads": u.reads, "last": u.last}))
                        .collect::<Vec<_>>()
                ))?;
            } else if top.is_empty() {
                crate::say!("No element has been read by an agent yet.");
            } else {
                for u in &top {
                    crate::say!("{:>7}  {}  {}", u.reads, u.last, u.label);
                }
            }
            Ok(0)
        }
        ReadsCmd::Never { limit, json } => {
            let never = reads::never_read(nx.reads_db().map_err(fail)?, *limit).map_err(fail)?;
            if *json {
                crate::say_json!(&json!(
                    never
                        .iter()
                        .map(|(id, t, n)| json!({"element": format!("{t}:{n}"), "id": format!("C:{id}")}))
                        .collect::<Vec<_>>()
                ))?;
            } else if never.is_empty() {
                crate::say!("Every concept has been read by an agent at least once.");
            } else {
                for (id, t, n) in &never {
                    crate::say!("C:{id}  {t}:{n}");
                }
            }
            Ok(0)
        }
        ReadsCmd::Prune {
            older_than_days,
            max,
            dry_run,
        } => {
            let p = nx
                .prune_reads(&reads::days_ago(*older_than_days), *max, *dry_run)
                .map_err(fail)?;
            crate::say!(
                "{} {} logged requests and the read counts of {} elements no longer in the memory",
                if *dry_run { "would drop" } else { "dropped" },
                p.requests,
                p.counts
            );
            Ok(0)
        }
    }
}
