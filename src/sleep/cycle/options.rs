//! What a cycle runs with: the sleep-mode instructions' parameters (saved
//! per memory, see `sleep::params`), the scope and trigger, and the phases
//! a threshold trigger adds.

use super::*;

/// The input parameters of the sleep-mode instructions, plus the lifecycle
/// rules of the decay model and the memory lifecycle.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Params {
    pub stale_event_threshold_days: i64,
    pub memory_strength_decay_factor: f64,
    pub unsorted_max_backlog: i64,
    pub orphan_max_count: i64,
    /// Relevance decay rate λ (0.03: a half-life of about 23 days).
    pub relevance_lambda: f64,
    /// Below this relevance a fact is proposed for archival.
    pub archive_threshold: f64,
    /// Facts under 0.40 confidence unconfirmed this long are speculative
    /// and proposed for archival.
    pub speculative_ttl_days: i64,
    /// Resolved commitments get a TTL this long.
    pub commitment_decay_days: i64,
    /// Old, unimportant, unused facts are proposed for archival after this.
    pub fact_archival_age_days: i64,
    /// Archived Events are reclaimable after this.
    pub archive_ttl_days: i64,
    /// Completed SleepTasks are reclaimable after this.
    pub task_ttl_days: i64,
    /// Hard deletions per cycle (nodes and links).
    pub cleanup_cap: usize,
    /// Items of one class per proposal.
    pub proposal_cap: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            stale_event_threshold_days: 7,
            memory_strength_decay_factor: 0.95,
            unsorted_max_backlog: 20,
            orphan_max_count: 20,
            relevance_lambda: 0.03,
            archive_threshold: 0.05,
            speculative_ttl_days: 30,
            commitment_decay_days: 90,
            fact_archival_age_days: 90,
            archive_ttl_days: 30,
            task_ttl_days: crate::review::proposals::SETTLED_TASK_TTL_DAYS,
            cleanup_cap: 500,
            proposal_cap: 200,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub scope: Scope,
    /// scheduled, threshold, on_demand
    pub trigger: String,
    /// The cycle's clock (RFC 3339).
    pub now: String,
    pub params: Params,
    /// The health targets a threshold trigger is for (`unsorted`,
    /// `orphans`, `stale_events`): the cycle runs the phase that addresses
    /// each, beside its scope's.
    pub targets: Vec<String>,
    /// Lines the report starts its issues with (saved parameters that could
    /// not be applied).
    pub notes: Vec<String>,
}

impl Options {
    /// Options whose parameters are the memory's saved ones (the defaults
    /// where none are saved); a saved value that cannot be applied is a
    /// note in the report.
    pub fn saved(nx: &Nexus, scope: Scope, now: &str) -> KipResult<Options> {
        let saved = crate::sleep::params::saved(nx)?;
        let mut o = Options::new(scope, now);
        o.params = saved.params;
        o.notes = saved.problems;
        Ok(o)
    }

    pub fn new(scope: Scope, now: &str) -> Options {
        Options {
            scope,
            trigger: "on_demand".into(),
            now: now.to_string(),
            params: Params::default(),
            targets: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The phases this cycle runs: its scope's, and the phase addressing
    /// each of its targets, in order.
    pub fn phases(&self) -> Vec<u8> {
        let mut out = self.scope.phases();
        for t in &self.targets {
            if let Some(p) = phase_for_target(t)
                && !out.contains(&p)
            {
                out.push(p);
            }
        }
        out.sort_unstable();
        out
    }
}

/// The phase that brings a health target back: the Unsorted inbox (3),
/// orphans (4), stale Events by consolidation (5). The sleep-mode
/// instructions trigger a quick cycle (phases 1–2) on these thresholds,
/// yet neither phase 1 (assessment) nor 2 (SleepTasks) can lower them; a
/// threshold-triggered cycle runs the phase that can.
pub fn phase_for_target(target: &str) -> Option<u8> {
    match target {
        "unsorted" => Some(3),
        "orphans" => Some(4),
        "stale_events" => Some(5),
        _ => None,
    }
}
