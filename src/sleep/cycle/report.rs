//! What a cycle tells: its scope, the progress events it sends while it
//! runs, and the report it leaves (per phase: lines, counts, rules).

use crate::sleep::params::Params;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Daydream,
    Quick,
    Full,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "daydream" => Some(Scope::Daydream),
            "quick" => Some(Scope::Quick),
            "full" => Some(Scope::Full),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Daydream => "daydream",
            Scope::Quick => "quick",
            Scope::Full => "full",
        }
    }
    /// The phases the scope runs; finalisation (13) ends every cycle.
    pub fn phases(self) -> Vec<u8> {
        match self {
            Scope::Daydream => vec![1, 13],
            Scope::Quick => vec![1, 2, 13],
            Scope::Full => (1..=13).collect(),
        }
    }
}

/// A progress event: the phase, the step in it, counts, elapsed time.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub run: i64,
    pub phase: u8,
    pub name: &'static str,
    pub step: String,
    pub done: u64,
    pub total: u64,
    pub elapsed_ms: u64,
    /// A line for the log tail.
    pub log: Option<String>,
    /// The phase finished (its counts are in the report).
    pub phase_done: bool,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PhaseReport {
    pub phase: u8,
    pub name: String,
    pub stage: String,
    pub millis: u64,
    pub lines: Vec<String>,
    pub counts: BTreeMap<String, i64>,
    /// Per rule of the phase: candidates it saw, proposed and dropped.
    pub rules: BTreeMap<String, RuleCount>,
    /// Transactions the phase committed (it commits between batches, so
    /// agents' writes get in; see `Cx::yield_lock`).
    pub batches: u64,
    /// The longest time the phase held the write lock at once.
    pub longest_hold_ms: u64,
}

/// What one rule did in one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RuleCount {
    pub seen: i64,
    pub proposed: i64,
    pub dropped: i64,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Report {
    pub run: i64,
    pub status: String,
    pub scope: String,
    pub trigger: String,
    pub reasoner: String,
    pub now: String,
    pub started_at: String,
    pub finished_at: String,
    pub millis: u64,
    pub phases: Vec<PhaseReport>,
    pub proposal: Option<i64>,
    pub proposed_items: usize,
    pub issues: Vec<String>,
    /// The health metrics measured again after the phases (when phase 1
    /// found any off target), by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub health_after: BTreeMap<String, f64>,
    pub recommendations: Vec<String>,
    pub error: Option<String>,
    /// The health metrics measured at the start of the cycle (phase 1),
    /// by key, unrounded: the history the health trend is drawn from.
    pub health: BTreeMap<String, f64>,
    /// The parameters the cycle ran with.
    pub params: Params,
    /// What the reasoner's calls cost (an LLM's tokens per call and in
    /// all, its budgets, the judgements that fell back).
    pub reasoner_usage: Option<Value>,
}

impl Report {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub fn count(&self, key: &str) -> i64 {
        self.phases.iter().filter_map(|p| p.counts.get(key)).sum()
    }

    /// The report in the shape the sleep-mode instructions give.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "Status: {}\nScope: {}\nTrigger: {}\nRun: #{} ({} reasoner, {} ms)\n",
            self.status, self.scope, self.trigger, self.run, self.reasoner, self.millis
        );
        let (now, default) = (
            serde_json::to_value(&self.params).unwrap_or_default(),
            serde_json::to_value(Params::default()).unwrap_or_default(),
        );
        let changed: Vec<String> = now
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, v)| default.get(k.as_str()) != Some(v))
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect()
            })
            .unwrap_or_default();
        if !changed.is_empty() {
            s.push_str(&format!("Parameters: {}\n", changed.join(", ")));
        }
        for stage in ["NREM", "REM", "Pre-Wake"] {
            let ps: Vec<&PhaseReport> = self.phases.iter().filter(|p| p.stage == stage).collect();
            if ps.is_empty() {
                continue;
            }
            let title = match stage {
                "NREM" => "NREM (Deep Consolidation)",
                "REM" => "REM (Memory Evolution)",
                _ => "Pre-Wake",
            };
            s.push_str(&format!("\n## {title}\n"));
            for p in ps {
                for l in &p.lines {
                    s.push_str(&format!("- {l}\n"));
                }
            }
        }
        if let Some(u) = &self.reasoner_usage {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let b = |k: &str| {
                u.get(k)
                    .and_then(Value::as_u64)
                    .map_or("none".to_string(), |x| x.to_string())
            };
            s.push_str(&format!(
                "\n## Reasoner cost\n- {} calls, {} prompt + {} completion tokens (budget {} in all, {} completion); {} judgements answered by the model, {} by the heuristic ({} because a budget was spent)\n",
                u.get("calls").and_then(Value::as_array).map_or(0, Vec::len),
                n("prompt_tokens"),
                n("completion_tokens"),
                b("token_budget"),
                b("output_budget"),
                n("answered"),
                n("fell_back"),
                n("over_budget")
            ));
        }
        let rules: Vec<(u8, &String, &RuleCount)> = self
            .phases
            .iter()
            .flat_map(|p| p.rules.iter().map(move |(r, c)| (p.phase, r, c)))
            .collect();
        if !rules.is_empty() {
            s.push_str("\n## Rules (candidates seen / proposed / dropped)\n");
            for (phase, r, c) in rules {
                s.push_str(&format!(
                    "- phase {phase}, {r}: {} / {} / {}\n",
                    c.seen, c.proposed, c.dropped
                ));
            }
        }
        if let Some(p) = self.proposal {
            s.push_str(&format!(
                "\n## Awaiting approval\n- Proposal #{p}: {} items (the console's Reflections pane, or `somnus proposals show {p}`)\n",
                self.proposed_items
            ));
        }
        s.push_str("\n## Issues\n");
        if self.issues.is_empty() {
            s.push_str("- none\n");
        }
        for i in &self.issues {
            s.push_str(&format!("- {i}\n"));
        }
        s.push_str("\n## Next Recommendations\n");
        if self.recommendations.is_empty() {
            s.push_str("- none\n");
        }
        for r in &self.recommendations {
            s.push_str(&format!("- {r}\n"));
        }
        if let Some(e) = &self.error {
            s.push_str(&format!("\n## Error\n- {e}\n"));
        }
        s
    }
}
