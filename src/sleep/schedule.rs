//! When the memory sleeps on its own (the sleep-mode document's "Trigger
//! Conditions", Moltbot §10.1): a full cycle every `full_every`, caught up
//! at start when overdue; a quick cycle when a health target it tends is
//! exceeded (Unsorted, orphans, stale Events); a daydream when the agents
//! have been idle for `idle` and enough new Events wait for scoring. This
//! module decides what is due; `somnus maintain` (and the servers) act on
//! it, one cycle at a time per memory (the run lock).

use super::Scope;
use super::health::{self, Status};
use crate::engine::Nexus;
use crate::kip::KipResult;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// The thresholds. The quick cycle's come from the health targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Quiet time after the last write before a daydream.
    pub idle: Duration,
    /// New (unscored) Events that make a daydream worth it.
    pub events: u64,
    /// A full cycle at least this often.
    pub full_every: Duration,
    /// Days after which an unconsolidated Event is stale (health).
    pub stale_days: i64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            idle: Duration::from_secs(30 * 60),
            events: 5,
            full_every: Duration::from_secs(12 * 3600),
            stale_days: 7,
        }
    }
}

/// A cycle that is due, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    pub scope: Scope,
    /// scheduled, catch_up, threshold, idle
    pub trigger: &'static str,
    pub reason: String,
}

/// When the last completed (or partly completed) cycle of at least this
/// scope started.
fn last_run(nx: &Nexus, scopes: &[&str]) -> KipResult<Option<DateTime<Utc>>> {
    let list = scopes
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(",");
    let at: Option<String> = nx
        .connection_for_checks()
        .query_row(
            &format!(
                "SELECT MAX(started_at) FROM sleep_runs WHERE scope IN ({list}) AND status IN ('completed', 'completed with issues')"
            ),
            [],
            |r| r.get(0),
        )
        .unwrap_or(None);
    Ok(at
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.to_utc()))
}

/// When an agent last wrote (the audit trail, leaving out the cycle's own
/// writes and rollbacks).
pub fn last_write(nx: &Nexus) -> Option<DateTime<Utc>> {
    let at: Option<String> = nx
        .connection_for_checks()
        .query_row(
            "SELECT MAX(at) FROM audit_log WHERE actor != '$system' AND (batch IS NULL OR batch NOT LIKE 'sleep:%')",
            [],
            |r| r.get(0),
        )
        .unwrap_or(None);
    at.and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.to_utc())
}

/// What is due at `now`, the most thorough first: a full cycle overdue
/// (or never run on a memory with Events), a quick one for a health
/// target exceeded, a daydream after quiet with Events to score.
pub fn due(nx: &mut Nexus, now: DateTime<Utc>, s: &Schedule) -> KipResult<Option<Due>> {
    let full_every =
        chrono::Duration::from_std(s.full_every).unwrap_or(chrono::Duration::hours(12));
    let last_full = last_run(nx, &["full"])?;
    let events: i64 = nx
        .connection_for_checks()
        .query_row(
            "SELECT COUNT(*) FROM concepts WHERE type = 'Event'",
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    match last_full {
        None if events > 0 => {
            return Ok(Some(Due {
                scope: Scope::Full,
                trigger: "catch_up",
                reason: "no full cycle has run on this memory yet".into(),
            }));
        }
        Some(t) if now - t >= full_every => {
            let hours = (now - t).num_minutes() as f64 / 60.0;
            return Ok(Some(Due {
                scope: Scope::Full,
                trigger: if now - t >= full_every * 2 {
                    "catch_up"
                } else {
                    "scheduled"
                },
                reason: format!(
                    "the last full cycle started {hours:.1} h ago (every {:.1} h)",
                    full_every.num_minutes() as f64 / 60.0
                ),
            }));
        }
        _ => {}
    }
    let stamp = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let h = health::assess(nx, &stamp, s.stale_days)?;
    let over: Vec<String> = h
        .metrics
        .iter()
        .filter(|m| matches!(m.key, "unsorted" | "orphans" | "stale_events"))
        .filter(|m| matches!(m.status, Status::Warn | Status::Bad))
        .map(|m| format!("{} {} (target {})", m.label, m.value, m.target))
        .collect();
    // a quick cycle for a target, but not again while the last one is
    // younger than the idle time (its proposals may be waiting)
    let last_quick = last_run(nx, &["quick", "full"])?;
    let idle = chrono::Duration::from_std(s.idle).unwrap_or(chrono::Duration::minutes(30));
    if !over.is_empty() && last_quick.is_none_or(|t| now - t >= idle) {
        return Ok(Some(Due {
            scope: Scope::Quick,
            trigger: "threshold",
            reason: format!("over target: {}", over.join(", ")),
        }));
    }
    let unscored = h
        .metrics
        .iter()
        .find(|m| m.key == "unscored_events")
        .map(|m| m.value as u64)
        .unwrap_or(0);
    let quiet = last_write(nx).is_none_or(|t| now - t >= idle);
    if unscored >= s.events && quiet {
        return Ok(Some(Due {
            scope: Scope::Daydream,
            trigger: "idle",
            reason: format!(
                "{unscored} Events wait for scoring and no agent has written for {} s",
                idle.num_seconds()
            ),
        }));
    }
    Ok(None)
}

/// Runs the cycle that is due now, if any, with the heuristic reasoner,
/// cancelled cleanly past `budget`. Returns a line saying what ran and why.
/// Another process's cycle in progress holds the run lock: nothing runs.
pub fn run_due(nx: &mut Nexus, s: &Schedule, budget: Duration) -> KipResult<Option<String>> {
    let now = Utc::now();
    let Some(d) = due(nx, now, s)? else {
        return Ok(None);
    };
    let mut opts = super::Options::new(
        d.scope,
        &now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
    opts.trigger = format!("{}: {}", d.trigger, d.reason);
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let flag = cancel.clone();
    let timer = std::thread::spawn(move || {
        if done_rx.recv_timeout(budget).is_err() {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let out = super::run(nx, &opts, &mut super::Heuristic, None, Some(cancel.clone()));
    let _ = done_tx.send(());
    let _ = timer.join();
    let rep = out?;
    let over = cancel.load(std::sync::atomic::Ordering::SeqCst);
    Ok(Some(format!(
        "{} cycle #{} ({}): {}{}",
        d.scope.as_str(),
        rep.run,
        d.trigger,
        rep.status,
        if over {
            format!(" — past its budget of {} s, cancelled", budget.as_secs())
        } else {
            String::new()
        }
    )))
}
