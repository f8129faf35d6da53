//! What the engine comparison runs, shared by its SQLite and PostgreSQL
//! sides: the generated memory's shape, the workloads, and the answers the
//! hand-written SQL builds (a JSON array, SEARCH's top hits, a MERGE's
//! result).

use serde_json::{Map, Value, json};

/// The generated memory: `n` Entity concepts in 20 domains, each with one
/// `links_to` link (to a concept in the first three quarters, so a quarter
/// has no incoming link): `n` concepts and `2n` links.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub n: usize,
}

impl Shape {
    pub(super) fn score(&self, i: usize) -> usize {
        (i * 7919) % self.n
    }
    pub(super) fn target(&self, i: usize) -> usize {
        let m = (self.n * 3 / 4).max(1);
        (i * 7 + 1) % m
    }
    /// The 1% with the highest scores.
    pub(super) fn top(&self) -> usize {
        self.n - (self.n / 100).max(1)
    }
    /// The 1% with the lowest scores.
    pub(super) fn low(&self) -> usize {
        (self.n / 100).max(1)
    }
}

pub const BATCH: usize = 500;

pub const MERGE_LINKS: usize = 1_000;

pub const HUB_LINKS: usize = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Workload {
    Insert,
    Lookup,
    Scan,
    Hop,
    GroupCount,
    Path,
    AntiJoin,
    TopK,
    Search,
    UpdateSmall,
    UpdateLarge,
    Merge,
    Delete,
}

impl Workload {
    pub const ALL: [Workload; 13] = [
        Workload::Insert,
        Workload::Lookup,
        Workload::Scan,
        Workload::Hop,
        Workload::GroupCount,
        Workload::Path,
        Workload::AntiJoin,
        Workload::TopK,
        Workload::Search,
        Workload::UpdateSmall,
        Workload::UpdateLarge,
        Workload::Merge,
        Workload::Delete,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Workload::Insert => "bulk insert (UPSERT of 500 concepts + 500 links)",
            Workload::Lookup => "point lookup by {type, name}",
            Workload::Scan => "type scan + FILTER (1% match)",
            Workload::Hop => "1-hop from a grounded concept",
            Workload::GroupCount => "grouped COUNT (members per domain)",
            Workload::Path => "5-hop path (`\"links_to\"{5}`)",
            Workload::AntiJoin => "NOT anti-join (no incoming link, 1% filter)",
            Workload::TopK => "ORDER BY attribute DESC + LIMIT 10",
            Workload::Search => "SEARCH CONCEPT top-10",
            Workload::UpdateSmall => "UPDATE sweep of 200 concepts",
            Workload::UpdateLarge => "UPDATE sweep of 100,000 concepts (or all)",
            Workload::Merge => "MERGE of a concept with 1,000 links",
            Workload::Delete => "DELETE CONCEPT DETACH of a hub with 1,000 links",
        }
    }

    /// A short name for plots and JSON.
    pub fn key(self) -> &'static str {
        match self {
            Workload::Insert => "insert",
            Workload::Lookup => "lookup",
            Workload::Scan => "scan_filter",
            Workload::Hop => "one_hop",
            Workload::GroupCount => "group_count",
            Workload::Path => "five_hop",
            Workload::AntiJoin => "anti_join",
            Workload::TopK => "order_limit",
            Workload::Search => "search",
            Workload::UpdateSmall => "update_200",
            Workload::UpdateLarge => "update_100k",
            Workload::Merge => "merge",
            Workload::Delete => "delete_detach",
        }
    }

    pub(super) fn sweep(self, shape: Shape) -> usize {
        match self {
            Workload::UpdateSmall => 200.min(shape.n),
            _ => 100_000.min(shape.n),
        }
    }

    /// Whether the answer's order is part of it (else rows are compared as
    /// a set).
    pub(super) fn ordered(self) -> bool {
        matches!(self, Workload::TopK | Workload::Search)
    }

    /// Runs to measure: many for the quick ones, a few for the sweeps.
    pub(super) fn runs(self, shape: Shape, budget: usize) -> usize {
        match self {
            Workload::UpdateLarge => 3,
            Workload::Insert => 15.min(budget),
            // Microsecond reads: ten times the runs, so the median is the
            // steady state a serving memory is in, not first touches of
            // pages the CPU's caches have not seen yet.
            Workload::Lookup | Workload::Hop | Workload::Path | Workload::Search => {
                budget.saturating_mul(10)
            }
            Workload::Merge | Workload::Delete => 7.min(budget),
            Workload::GroupCount | Workload::Scan | Workload::AntiJoin | Workload::TopK
                if shape.n >= 100_000 =>
            {
                5
            }
            _ => budget,
        }
    }
}

/// `[a, b, …]` from rows that are JSON texts already.
pub(super) fn json_array(items: impl IntoIterator<Item = String>) -> String {
    let mut s = String::from("[");
    for (i, it) in items.into_iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&it);
    }
    s.push(']');
    s
}

/// SEARCH's answer from `(id, score, concept JSON)` hits: the best ten,
/// ties by id, each with its score in its metadata.
pub(super) fn top_hits(mut hits: Vec<(i64, f64, String)>) -> Result<String, String> {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(10);
    let mut out = Vec::with_capacity(hits.len());
    for (_, score, j) in hits {
        let mut v: Value = serde_json::from_str(&j).map_err(|x| x.to_string())?;
        v["metadata"]["_score"] = json!(score);
        out.push(v);
    }
    serde_json::to_string(&out).map_err(|x| x.to_string())
}

/// A MERGE's concept by hand: the target's attributes win, the source's
/// missing ones are filled in, the source's name and aliases become the
/// target's aliases, and the provenance trail grows. Returns the target's
/// attributes and metadata, and how many attributes changed.
pub(super) fn merged(
    source: &str,
    target: &str,
    s_a: Map<String, Value>,
    mut t_a: Map<String, Value>,
    s_m: Map<String, Value>,
    mut t_m: Map<String, Value>,
) -> (Map<String, Value>, Map<String, Value>, usize) {
    let mut filled = 0;
    for (k, v) in &s_a {
        if k != "aliases" && !t_a.contains_key(k) {
            t_a.insert(k.clone(), v.clone());
            filled += 1;
        }
    }
    let mut aliases: Vec<Value> = t_a
        .get("aliases")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let before = aliases.len();
    for a in s_a
        .get("aliases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(std::iter::once(&json!(source)))
    {
        if !aliases.contains(a) && a != &json!(target) {
            aliases.push(a.clone());
        }
    }
    if aliases.len() != before {
        t_a.insert("aliases".into(), Value::Array(aliases));
        filled += 1;
    }
    let mut trail: Vec<Value> = t_m
        .get("_merged_from")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for x in s_m
        .get("_merged_from")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(std::iter::once(&json!(format!("Entity:{source}"))))
    {
        if !trail.contains(x) {
            trail.push(x.clone());
        }
    }
    t_m.insert("_merged_from".into(), Value::Array(trail));
    (t_a, t_m, filled)
}
