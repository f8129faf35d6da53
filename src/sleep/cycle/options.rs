//! What a cycle runs with: the sleep-mode instructions' parameters (saved
//! per memory, see `sleep::params`), the scope and trigger, and the phases
//! a threshold trigger adds.

use super::report::Scope;
use crate::Nexus;
use crate::kip::KipResult;
pub use crate::sleep::params::Params;

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
