//! When the memory sleeps on its own (the sleep-mode document's "Trigger
//! Conditions", Moltbot §10.1): a full cycle every `full_every`, caught up
//! at start when overdue; a quick cycle when a health target it tends is
//! exceeded (Unsorted, orphans, stale Events); after an agent's session
//! ends (`session_ended`), a daydream, or a quick cycle after a burst of
//! writes; a daydream when the agents
//! have been idle for `idle` and enough new Events wait for scoring. This
//! module decides what is due; `somnus maintain` (and the servers) act on
//! it, one cycle at a time per memory (the run lock).

use super::Scope;
use super::health::{self, Status};
use crate::engine::Nexus;
use crate::kip::KipResult;
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// A quick cycle for a health target at most this often (counted from
    /// the last quick or full cycle): a target the last cycle could not
    /// bring back (its proposals wait for a person) does not call a cycle
    /// after every write.
    pub quick_every: Duration,
    /// Days after which an unconsolidated Event is stale (health).
    pub stale_days: i64,
    /// Agent writes since the last cycle from which an ended session is a
    /// burst: its post-session cycle is quick (phases 1–2), not a daydream.
    pub burst: u64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            idle: Duration::from_secs(30 * 60),
            events: 5,
            full_every: Duration::from_secs(12 * 3600),
            quick_every: Duration::from_secs(3600),
            stale_days: 7,
            burst: 50,
        }
    }
}

/// A cycle that is due, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    pub scope: Scope,
    /// scheduled, catch_up, threshold, post_session, idle
    pub trigger: &'static str,
    pub reason: String,
    /// The health targets over their threshold (a threshold trigger): the
    /// cycle runs the phases that address them.
    pub targets: Vec<String>,
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
        .db()
        .query_opt(
            &format!(
                "SELECT MAX(started_at) FROM sleep_runs WHERE scope IN ({list}) AND status IN ('completed', 'completed with issues')"
            ),
            &[],
        )
        .ok()
        .flatten()
        .and_then(|r| r.opt_text(0).ok().flatten());
    Ok(at
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.to_utc()))
}

/// When an agent last wrote (the audit trail, leaving out the cycle's own
/// writes and rollbacks).
pub fn last_write(nx: &Nexus) -> Option<DateTime<Utc>> {
    let at: Option<String> = nx
        .db()
        .query_opt(
            "SELECT MAX(at) FROM audit_log WHERE actor != '$system' AND (batch IS NULL OR batch NOT LIKE 'sleep:%')",
            &[],
        )
        .ok()
        .flatten()
        .and_then(|r| r.opt_text(0).ok().flatten());
    at.and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.to_utc())
}

/// The `meta` row that holds the latest session end an agent reported.
pub const SESSION_END_KEY: &str = "session_end";

/// A session id is kept to this many characters.
pub const SESSION_ID_MAX: usize = 200;

/// An agent's conversation session that ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionEnd {
    /// RFC 3339, UTC.
    pub at: String,
    pub actor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// Records that `actor`'s session ended at `at` (the sleep-mode document's
/// "conversation session end", the post-session trigger): the next
/// maintenance check runs a cycle for it, once. The latest end is kept;
/// two sessions ending before a cycle make one cycle.
pub fn session_ended(
    nx: &mut Nexus,
    actor: &str,
    session: Option<&str>,
    at: DateTime<Utc>,
) -> KipResult<SessionEnd> {
    let actor = actor.trim();
    if actor.is_empty() {
        return Err(crate::kip::KipError::new(
            crate::kip::ErrorCode::ConstraintViolation,
            "a session end names the agent whose session it was",
        ));
    }
    let end = SessionEnd {
        at: at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        actor: printable(actor),
        session: session
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(printable),
    };
    crate::store::meta::set(nx.db(), SESSION_END_KEY, &end)?;
    Ok(end)
}

/// `s` without control characters, at most `SESSION_ID_MAX` of them.
fn printable(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .take(SESSION_ID_MAX)
        .collect()
}

/// The latest session end recorded, if any.
pub fn last_session_end(nx: &Nexus) -> Option<SessionEnd> {
    crate::store::meta::get(nx.db(), SESSION_END_KEY)
}

/// Agents' writes (audited requests, the cycle's own left out) since
/// `since` (all of them when None).
pub fn agent_writes_since(nx: &Nexus, since: Option<DateTime<Utc>>) -> i64 {
    let from = since
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default();
    nx.db()
        .query_i64(
            "SELECT COUNT(*) FROM audit_log WHERE at > ?1 AND actor != '$system' AND (batch IS NULL OR batch NOT LIKE 'sleep:%')",
            crate::args![from],
        )
        .ok()
        .flatten()
        .unwrap_or(0)
}

/// Writes `actor` made (audited requests) since `since`.
pub fn writes_by_since(nx: &Nexus, actor: &str, since: DateTime<Utc>) -> i64 {
    nx.db()
        .query_i64(
            "SELECT COUNT(*) FROM audit_log WHERE at >= ?1 AND actor = ?2 AND (batch IS NULL OR batch NOT LIKE 'sleep:%')",
            crate::args![
                since.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                actor
            ],
        )
        .ok()
        .flatten()
        .unwrap_or(0)
}

/// What is due at `now`, the most thorough first: a full cycle overdue
/// (or never run on a memory with Events), a quick one for a health
/// target exceeded, a daydream after quiet with Events to score.
pub fn due(nx: &mut Nexus, now: DateTime<Utc>, s: &Schedule) -> KipResult<Option<Due>> {
    Ok(plan(nx, now, s)?.due)
}

/// A cycle that will be due later, if nothing changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Upcoming {
    pub at: DateTime<Utc>,
    pub scope: Scope,
    pub trigger: &'static str,
    pub reason: String,
}

/// What is due now, and otherwise what comes next and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub due: Option<Due>,
    pub next: Option<Upcoming>,
}

impl Plan {
    /// "full (catch_up): no full cycle has run …" (when: `at`).
    pub fn describe(&self) -> String {
        match (&self.due, &self.next) {
            (Some(d), _) => format!("{} ({}): {}", d.scope.as_str(), d.trigger, d.reason),
            (None, Some(u)) => format!("{} ({}): {}", u.scope.as_str(), u.trigger, u.reason),
            (None, None) => "nothing foreseen until the memory holds Events".into(),
        }
    }

    /// When the next cycle runs: now, or its time.
    pub fn at(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match (&self.due, &self.next) {
            (Some(_), _) => Some(now),
            (None, Some(u)) => Some(u.at),
            (None, None) => None,
        }
    }
}

/// A memory's health measured at most this long ago is measured again
/// even when nothing was written (an Event grows stale with time alone).
pub const HEALTH_REUSE: Duration = Duration::from_secs(600);

/// The last health measurement a maintainer took, reused while the memory
/// is unchanged (nobody committed, this connection wrote nothing) and it is
/// younger than [`HEALTH_REUSE`]: on a large memory a measurement is
/// seconds of reading, and a maintainer looks every `--poll-secs`.
#[derive(Debug, Default)]
pub struct HealthCache {
    taken: Option<(i64, u64, DateTime<Utc>, health::Health)>,
    /// How many measurements were taken (for tests and the status).
    pub measured: u64,
}

impl HealthCache {
    fn get(
        &mut self,
        nx: &mut Nexus,
        now: DateTime<Utc>,
        stale_days: i64,
    ) -> KipResult<health::Health> {
        let key = (nx.data_version(), nx.own_changes());
        if let Some((v, c, at, h)) = &self.taken
            && (*v, *c) == key
            && now >= *at
            && (now - *at).to_std().is_ok_and(|d| d < HEALTH_REUSE)
        {
            return Ok(h.clone());
        }
        let stamp = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let h = health::assess(nx, &stamp, stale_days)?;
        self.measured += 1;
        // measuring writes nothing, so the key still holds
        self.taken = Some((key.0, key.1, now, h.clone()));
        Ok(h)
    }
}

/// What is due at `now` and, when nothing is, the earliest cycle to come:
/// the next scheduled full cycle, a quick one waiting out the last one's
/// idle time, or a daydream waiting for the agents to go quiet.
pub fn plan(nx: &mut Nexus, now: DateTime<Utc>, s: &Schedule) -> KipResult<Plan> {
    plan_with(nx, now, s, &mut HealthCache::default())
}

/// [`plan`], reusing a health measurement while the memory is unchanged.
pub fn plan_with(
    nx: &mut Nexus,
    now: DateTime<Utc>,
    s: &Schedule,
    cache: &mut HealthCache,
) -> KipResult<Plan> {
    let full_every =
        chrono::Duration::from_std(s.full_every).unwrap_or(chrono::Duration::hours(12));
    let idle = chrono::Duration::from_std(s.idle).unwrap_or(chrono::Duration::minutes(30));
    let last_full = last_run(nx, &["full"])?;
    let events: i64 = nx
        .db()
        .query_i64("SELECT COUNT(*) FROM concepts WHERE type = 'Event'", &[])
        .ok()
        .flatten()
        .unwrap_or(0);
    let hours = |d: chrono::Duration| d.num_minutes() as f64 / 60.0;
    let mut upcoming: Vec<Upcoming> = Vec::new();
    match last_full {
        None if events > 0 => {
            return Ok(Plan {
                due: Some(Due {
                    scope: Scope::Full,
                    trigger: "catch_up",
                    reason: "no full cycle has run on this memory yet".into(),
                    targets: vec![],
                }),
                next: None,
            });
        }
        Some(t) if now - t >= full_every => {
            return Ok(Plan {
                due: Some(Due {
                    scope: Scope::Full,
                    trigger: if now - t >= full_every * 2 {
                        "catch_up"
                    } else {
                        "scheduled"
                    },
                    reason: format!(
                        "the last full cycle started {:.1} h ago (every {:.1} h)",
                        hours(now - t),
                        hours(full_every)
                    ),
                    targets: vec![],
                }),
                next: None,
            });
        }
        Some(t) => upcoming.push(Upcoming {
            at: t + full_every,
            scope: Scope::Full,
            trigger: "scheduled",
            reason: format!("every {:.1} h", hours(full_every)),
        }),
        None => {}
    }
    let h = cache.get(nx, now, s.stale_days)?;
    let over_metrics: Vec<&health::Metric> = h
        .metrics
        .iter()
        .filter(|m| super::cycle::options::phase_for_target(m.key).is_some())
        .filter(|m| matches!(m.status, Status::Warn | Status::Bad))
        .collect();
    let over: Vec<String> = over_metrics
        .iter()
        .map(|m| format!("{} {} (target {})", m.label, m.value, m.target))
        .collect();
    let targets: Vec<String> = over_metrics.iter().map(|m| m.key.to_string()).collect();
    // a quick cycle for a target, but not again while the last one is
    // younger than `quick_every` (its proposals may be waiting)
    let quick_every =
        chrono::Duration::from_std(s.quick_every).unwrap_or(chrono::Duration::hours(1));
    let last_quick = last_run(nx, &["quick", "full"])?;
    if !over.is_empty() {
        let reason = format!("over target: {}", over.join(", "));
        match last_quick {
            Some(t) if now - t < quick_every => upcoming.push(Upcoming {
                at: t + quick_every,
                scope: Scope::Quick,
                trigger: "threshold",
                reason,
            }),
            _ => {
                return Ok(Plan {
                    due: Some(Due {
                        scope: Scope::Quick,
                        trigger: "threshold",
                        reason,
                        targets,
                    }),
                    next: None,
                });
            }
        }
    }
    // a session that ended since the last cycle of any scope, and wrote
    // something: a daydream for it, a quick cycle after a burst
    if let Some(end) = last_session_end(nx)
        && let Ok(at) = DateTime::parse_from_rfc3339(&end.at)
    {
        let at = at.to_utc();
        let last_any = last_run(nx, &["daydream", "quick", "full"])?;
        if at <= now && last_any.is_none_or(|t| t < at) {
            let writes = agent_writes_since(nx, last_any);
            if writes > 0 {
                let burst = writes as u64 >= s.burst;
                return Ok(Plan {
                    due: Some(Due {
                        scope: if burst { Scope::Quick } else { Scope::Daydream },
                        trigger: "post_session",
                        reason: format!(
                            "{}'s session{} ended at {} ({writes} agent write{} since the last cycle{})",
                            end.actor,
                            end.session
                                .as_deref()
                                .map(|s| format!(" {s}"))
                                .unwrap_or_default(),
                            end.at,
                            if writes == 1 { "" } else { "s" },
                            if burst {
                                format!(": a burst, {} or more", s.burst)
                            } else {
                                String::new()
                            }
                        ),
                        targets: vec![],
                    }),
                    next: None,
                });
            }
        }
    }
    let unscored = h
        .metrics
        .iter()
        .find(|m| m.key == "unscored_events")
        .map(|m| m.value as u64)
        .unwrap_or(0);
    if unscored >= s.events {
        let reason = format!(
            "{unscored} Events wait for scoring and no agent has written for {} s",
            idle.num_seconds()
        );
        match last_write(nx) {
            Some(t) if now - t < idle => upcoming.push(Upcoming {
                at: t + idle,
                scope: Scope::Daydream,
                trigger: "idle",
                reason: format!(
                    "{unscored} Events wait for scoring, once agents have been quiet for {} s",
                    idle.num_seconds()
                ),
            }),
            _ => {
                return Ok(Plan {
                    due: Some(Due {
                        scope: Scope::Daydream,
                        trigger: "idle",
                        reason,
                        targets: vec![],
                    }),
                    next: None,
                });
            }
        }
    }
    upcoming.sort_by_key(|u| u.at);
    Ok(Plan {
        due: None,
        next: upcoming.into_iter().next(),
    })
}

/// Runs the cycle that is due now, if any, with the heuristic reasoner,
/// cancelled cleanly past `budget` or when `stop` is set. Returns a line
/// saying what ran and why. Another process's cycle in progress holds the
/// run lock: nothing runs, and the line says whose it is.
pub fn run_due(
    nx: &mut Nexus,
    s: &Schedule,
    budget: Duration,
    stop: Option<&Arc<AtomicBool>>,
) -> KipResult<Option<String>> {
    let now = Utc::now();
    let Some(d) = due(nx, now, s)? else {
        return Ok(None);
    };
    // the memory's saved parameters (`somnus sleep --save-params`, the
    // console's Sleep pane), the defaults where none are saved
    let mut opts = super::Options::saved(
        nx,
        d.scope,
        &now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    )?;
    opts.trigger = format!("{}: {}", d.trigger, d.reason);
    opts.targets = d.targets.clone();
    let cancel = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let flag = cancel.clone();
    let stop = stop.cloned();
    let started = std::time::Instant::now();
    // why the cycle was cancelled: 1 past its budget, 2 the process stopping
    let why = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let timer = {
        let why = why.clone();
        std::thread::spawn(move || {
            loop {
                match done_rx.recv_timeout(Duration::from_millis(50)) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                if stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
                    why.store(2, Ordering::SeqCst);
                    flag.store(true, Ordering::SeqCst);
                    return;
                }
                if started.elapsed() >= budget {
                    why.store(1, Ordering::SeqCst);
                    flag.store(true, Ordering::SeqCst);
                    return;
                }
            }
        })
    };
    let out = super::run(nx, &opts, &mut super::Heuristic, None, Some(cancel.clone()));
    let _ = done_tx.send(());
    let _ = timer.join();
    let rep = match out {
        Ok(r) => r,
        Err(e) if e.code == crate::kip::ErrorCode::VersionConflict => {
            return Ok(Some(format!(
                "{} cycle due ({}), not started: {}",
                d.scope.as_str(),
                d.trigger,
                e.message
            )));
        }
        Err(e) => return Err(e),
    };
    if why.load(Ordering::SeqCst) == 1 {
        // the run record says why it was cancelled too
        let _ = nx.db().execute(
            "UPDATE sleep_runs SET error = CAST(?2 AS TEXT) || COALESCE(error, '') WHERE id = ?1",
            crate::args![
                rep.run,
                format!("past its budget of {} s: ", budget.as_secs())
            ],
        );
    }
    let status = match why.load(Ordering::SeqCst) {
        1 => format!(
            "cancelled: past its budget of {} s ({})",
            budget.as_secs(),
            rep.error.clone().unwrap_or_default()
        ),
        2 => "cancelled: the process is stopping".to_string(),
        _ => rep.status.clone(),
    };
    Ok(Some(format!(
        "{} cycle #{} ({}): {status}",
        d.scope.as_str(),
        rep.run,
        d.trigger,
    )))
}
