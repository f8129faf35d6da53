//! The one validator of the sleep cycle's parameters: the CLI (`--params`,
//! `health --stale-days`), the console's parameter table and any other
//! caller go through it, so a value out of range is refused the same way
//! everywhere and never reaches a date computation or a decay.

use serde_json::Value;

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
    /// Unsorted items one cycle files: the themes new
    /// domains are named for are found among them, and the rest wait for
    /// the next cycle.
    pub inbox_batch: usize,
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
            inbox_batch: 50,
        }
    }
}

/// Days in a day-valued parameter at most (a century).
pub const MAX_DAYS: i64 = 36_500;

/// `(key, least, most)` for every parameter; whole numbers are those whose
/// default is an integer.
pub const RANGES: [(&str, f64, f64); 14] = [
    ("stale_event_threshold_days", 0.0, MAX_DAYS as f64),
    ("memory_strength_decay_factor", 0.01, 1.0),
    ("unsorted_max_backlog", 0.0, 1_000_000.0),
    ("orphan_max_count", 0.0, 1_000_000.0),
    ("relevance_lambda", 0.0, 10.0),
    ("archive_threshold", 0.0, 1.0),
    ("speculative_ttl_days", 0.0, MAX_DAYS as f64),
    ("commitment_decay_days", 0.0, MAX_DAYS as f64),
    ("fact_archival_age_days", 0.0, MAX_DAYS as f64),
    ("archive_ttl_days", 0.0, MAX_DAYS as f64),
    ("task_ttl_days", 0.0, MAX_DAYS as f64),
    ("cleanup_cap", 0.0, 1_000_000.0),
    ("proposal_cap", 1.0, 100_000.0),
    ("inbox_batch", 1.0, 100_000.0),
];

/// The range of `key`, if it is a parameter.
pub fn range(key: &str) -> Option<(f64, f64)> {
    RANGES
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, lo, hi)| (*lo, *hi))
}

impl Params {
    /// `self` with `key` set to `value`, or why not.
    pub fn with(&self, key: &str, value: &Value) -> Result<Params, String> {
        let mut v = serde_json::to_value(self).map_err(|e| e.to_string())?;
        let (lo, hi) = range(key).ok_or_else(|| format!("unknown parameter `{key}`"))?;
        let Some(slot) = v.get_mut(key) else {
            return Err(format!("unknown parameter `{key}`"));
        };
        let n = value
            .as_f64()
            .filter(|n| n.is_finite())
            .ok_or_else(|| format!("{key} needs a number, not {value}"))?;
        if n < lo || n > hi {
            return Err(format!("{key} must be between {lo} and {hi} (got {value})"));
        }
        *slot = if slot.is_i64() || slot.is_u64() {
            if n.fract() != 0.0 {
                return Err(format!("{key} is a whole number (got {value})"));
            }
            Value::from(n as i64)
        } else {
            Value::from(n)
        };
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    /// `self` with every key of a JSON object applied, or the first
    /// problem. The instructions' old name `confidence_decay_factor` is
    /// read as `memory_strength_decay_factor`.
    pub fn with_json(&self, over: &Value) -> Result<Params, String> {
        let Some(o) = over.as_object() else {
            return Err("the parameters must be a JSON object".into());
        };
        let mut p = self.clone();
        for (k, v) in o {
            let key = if k == "confidence_decay_factor" {
                "memory_strength_decay_factor"
            } else {
                k.as_str()
            };
            p = p.with(key, v)?;
        }
        Ok(p)
    }

    /// Whether every parameter is in its range (a stored or hand-built
    /// value).
    pub fn validate(&self) -> Result<(), String> {
        let v = serde_json::to_value(self).map_err(|e| e.to_string())?;
        self.with_json(&v).map(|_| ())
    }
}

/// Where a memory keeps its own sleep parameters: this attribute of
/// `$system`, an object of the values that differ from the defaults. Only
/// an operator's write (the CLI's `somnus sleep --save-params`, the
/// console's Sleep pane) or the system sets it; an agent's write is refused
/// (`KIP_3004`), as for the maintenance log.
pub const SAVED_KEY: &str = "sleep_parameters";

/// A memory's saved sleep parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    /// The defaults with every saved value that is valid applied.
    pub params: Params,
    /// The keys saved (valid ones).
    pub keys: Vec<String>,
    /// Saved values that could not be applied (unknown key, out of range),
    /// each saying why; the default stands for them.
    pub problems: Vec<String>,
}

/// The parameters saved in a memory (the defaults when none are).
pub fn saved(nx: &crate::engine::Nexus) -> crate::kip::KipResult<Saved> {
    let mut out = Saved {
        params: Params::default(),
        keys: Vec::new(),
        problems: Vec::new(),
    };
    let Some(sys) = crate::store::concept_by_type_name(nx.db(), "Person", "$system")? else {
        return Ok(out);
    };
    match sys.attributes.get(SAVED_KEY) {
        None | Some(Value::Null) => {}
        Some(Value::Object(o)) => {
            for (k, v) in o {
                let one = serde_json::json!({ k.clone(): v.clone() });
                match out.params.with_json(&one) {
                    Ok(p) => {
                        out.params = p;
                        out.keys.push(k.clone());
                    }
                    Err(e) => out
                        .problems
                        .push(format!("saved sleep parameter ignored: {e}")),
                }
            }
        }
        Some(other) => out.problems.push(format!(
            "saved sleep parameters ignored: {SAVED_KEY} is not an object ({other})"
        )),
    }
    Ok(out)
}

/// The values of `p` that differ from the defaults, as saved.
pub fn changed(p: &Params) -> serde_json::Map<String, Value> {
    let d = serde_json::to_value(Params::default()).unwrap_or(Value::Null);
    let mut out = serde_json::Map::new();
    if let Ok(Value::Object(o)) = serde_json::to_value(p) {
        for (k, v) in o {
            if d.get(&k) != Some(&v) {
                out.insert(k, v);
            }
        }
    }
    out
}

/// Saves `p` as the memory's sleep parameters (the values that differ from
/// the defaults; saving the defaults clears them), as `who`, audited like
/// any write. Returns what was saved.
pub fn save(
    nx: &mut crate::engine::Nexus,
    p: &Params,
    who: &crate::audit::Who,
) -> crate::kip::KipResult<serde_json::Map<String, Value>> {
    p.validate().map_err(crate::kip::KipError::constraint)?;
    let values = changed(p);
    let text = format!(
        r#"UPSERT {{ CONCEPT ?s {{ {{type: "Person", name: "$system"}} SET ATTRIBUTES {{ {SAVED_KEY}: :p }} }} }}"#
    );
    let mut params = serde_json::Map::new();
    params.insert("p".into(), Value::Object(values.clone()));
    let cmd = crate::kip::parse(&text, &params)?;
    // an operator's setting, written as maintenance: `$system`'s origin
    // stays as it was
    let was = nx.set_maintaining(true);
    let out = nx.exec_as(&cmd, &text, who, false, false);
    nx.set_maintaining(was);
    out?;
    Ok(values)
}

/// Saves the memory's parameters changed by `over` (the saved ones, or the
/// defaults when `reset`, with `over` applied), reading and writing in one
/// transaction under the write lock: two processes saving different
/// parameters at once both keep theirs. Returns what was saved.
pub fn update(
    nx: &mut crate::engine::Nexus,
    reset: bool,
    over: Option<&Value>,
    who: &crate::audit::Who,
) -> crate::kip::KipResult<serde_json::Map<String, Value>> {
    nx.atomically("sleep-params", |nx| {
        let mut p = if reset {
            Params::default()
        } else {
            saved(nx)?.params
        };
        if let Some(o) = over {
            p = p.with_json(o).map_err(crate::kip::KipError::constraint)?;
        }
        save(nx, &p, who)
    })
}

/// Saves `p` if the memory's saved parameters are still `base` (what the
/// caller last read; None: it read none, nothing is checked), in one
/// transaction: Ok(Ok(saved after)) when saved, Ok(Err(saved now)) when
/// another process saved others meanwhile and nothing was written.
pub fn save_unless_changed(
    nx: &mut crate::engine::Nexus,
    p: &Params,
    base: Option<&Params>,
    who: &crate::audit::Who,
) -> crate::kip::KipResult<Result<Saved, Saved>> {
    nx.atomically("sleep-params", |nx| {
        let now = saved(nx)?;
        if base.is_some_and(|b| *b != now.params) {
            return Ok(Err(now));
        }
        save(nx, p, who)?;
        Ok(Ok(saved(nx)?))
    })
}

/// Checks a stale-days value given on its own (`somnus health`).
pub fn check_days(name: &str, days: i64) -> Result<i64, String> {
    if (0..=MAX_DAYS).contains(&days) {
        Ok(days)
    } else {
        Err(format!(
            "{name} must be between 0 and {MAX_DAYS} (got {days})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn out_of_range_values_are_refused_with_the_range() {
        let p = Params::default();
        for (k, v) in [
            ("memory_strength_decay_factor", json!(-5)),
            ("memory_strength_decay_factor", json!(0)),
            ("stale_event_threshold_days", json!(9223372036854775807i64)),
            ("archive_ttl_days", json!(-1)),
            ("task_ttl_days", json!(1.5)),
            ("proposal_cap", json!("ten")),
        ] {
            assert!(p.with(k, &v).is_err(), "{k} = {v}");
        }
        assert!(p.with("nonsense", &json!(1)).is_err());
        let q = p
            .with_json(&json!({"confidence_decay_factor": 0.8}))
            .unwrap();
        assert_eq!(q.memory_strength_decay_factor, 0.8);
        assert!(Params::default().validate().is_ok());
    }
}
