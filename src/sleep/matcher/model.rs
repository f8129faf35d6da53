//! The Fellegi–Sunter model: for each feature level, `m` = how often one
//! thing's two records agree at that level and `u` = how often two
//! different things do. A level weighs `log2(m / u)` bits; a pair's
//! probability of being one thing is the prior odds times the product of
//! its levels' ratios. The parameters start from priors (counted on
//! generated memories, [`PRIORS`]), are re-estimated on the memory's own
//! candidate pairs by expectation–maximisation, and the operator's
//! decisions enter as pairs whose answer is known.

use super::compare::{Comparison, FEATURES};
pub use crate::review::labels::Label;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of comparison levels among candidate pairs of generated
/// memories, split by whether the pair was one thing: the prior. Written
/// by `cargo test --release --test judgement -- --ignored fit_matcher_priors`.
pub const PRIORS: &str = include_str!("priors.json");

/// How many pairs the prior is worth, per feature and for the share of
/// candidates that are duplicates: the memory's own pairs and the
/// operator's decisions move the model from it in proportion.
pub const PRIOR_STRENGTH: f64 = 40.0;
/// How many pairs one operator decision is worth.
pub const LABEL_WEIGHT: f64 = 8.0;
/// Added to every level's count before the prior is normalised.
pub const SMOOTHING: f64 = 0.0;
/// The generated memories stand in for the world, not for it: their
/// shares are mixed with an even share over each feature's levels at this
/// rate, so that no level is taken as impossible on either side, and a
/// level seen on neither side weighs nothing.
pub const EVEN_SHARE: f64 = 0.05;
/// Expectation–maximisation stops after this many rounds, or when no
/// parameter moves by more than [`TOLERANCE`].
pub const MAX_ITERATIONS: usize = 100;
pub const TOLERANCE: f64 = 1e-7;
/// The share of duplicates among candidates is kept within these bounds:
/// a memory with three candidate pairs says little about it.
pub const LAMBDA_BOUNDS: (f64, f64) = (0.05, 0.95);

type Table = BTreeMap<String, BTreeMap<String, f64>>;

/// Level counts: feature → level → count.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    /// Where the counts come from.
    #[serde(default)]
    pub source: String,
    pub pairs: usize,
    pub same: usize,
    pub m: Table,
    pub u: Table,
}

impl Counts {
    /// Counts levels of pairs whose answer is known.
    pub fn count<'a>(
        source: &str,
        pairs: impl IntoIterator<Item = (&'a Comparison, bool)>,
    ) -> Counts {
        let mut c = Counts {
            source: source.into(),
            ..Default::default()
        };
        for (p, same) in pairs {
            c.pairs += 1;
            c.same += usize::from(same);
            let t = if same { &mut c.m } else { &mut c.u };
            for (f, l) in &p.levels {
                *t.entry(f.clone())
                    .or_default()
                    .entry(l.clone())
                    .or_default() += 1.0;
            }
        }
        c
    }

    /// The priors shipped with somnus, read once.
    pub fn shipped() -> &'static Counts {
        static C: std::sync::OnceLock<Counts> = std::sync::OnceLock::new();
        C.get_or_init(|| serde_json::from_str(PRIORS).unwrap_or_default())
    }
}

/// The fitted parameters.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Model {
    /// The share of candidate pairs that are one thing.
    pub lambda: f64,
    pub m: Table,
    pub u: Table,
    /// Candidate pairs of this memory it was fitted on.
    pub pairs: usize,
    /// Operator decisions it learned from.
    pub labels: usize,
    pub iterations: usize,
}

/// Levels that say the two disagree: they never count for sameness,
/// whatever the counts (a generated memory can make anything look
/// informative).
pub const DISAGREEMENTS: &[(&str, &str)] = &[
    ("neighbours", "none"),
    ("description", "some"),
    ("description", "disjoint"),
    ("description", "disjoint_names"),
    ("attributes", "differ"),
    ("domain", "different"),
];
/// Levels that say the two agree beyond their names: they never count
/// against.
pub const AGREEMENTS: &[(&str, &str)] = &[
    ("neighbours", "one"),
    ("neighbours", "several"),
    ("description", "names_other"),
    ("description", "agree"),
    ("attributes", "identifying"),
    ("attributes", "agree"),
    ("domain", "same"),
];

/// The `u` table a feature reads: how often two different things' names
/// agree at each level is one question for people and for things (the
/// pairs of different people are many and varied, of different things
/// few), while how one thing's two names agree is asked apart (`m`).
pub fn u_feature(f: &str) -> &str {
    match f {
        "person_name" => "name",
        other => other,
    }
}

/// Counts with the person and thing name rows of `u` added together.
fn pooled_u(u: &Table) -> Table {
    let mut out = Table::new();
    for (f, row) in u {
        let to = out.entry(u_feature(f).to_string()).or_default();
        for (l, n) in row {
            *to.entry(l.clone()).or_default() += n;
        }
    }
    out
}

/// A level's part in a pair's probability.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Term {
    pub feature: String,
    pub level: String,
    pub m: f64,
    pub u: f64,
    /// log2(m / u)
    pub weight: f64,
}

/// The distribution of each feature's levels under pseudo-counts.
fn normalised(counts: &Table, scale: f64) -> Table {
    let mut out = Table::new();
    for (f, levels) in FEATURES {
        let got = counts.get(*f);
        let total: f64 = levels
            .iter()
            .map(|l| got.and_then(|g| g.get(*l)).copied().unwrap_or(0.0) + SMOOTHING)
            .sum();
        let row = out.entry(f.to_string()).or_default();
        let even = 1.0 / levels.len() as f64;
        for l in *levels {
            let n = got.and_then(|g| g.get(*l)).copied().unwrap_or(0.0) + SMOOTHING;
            let share = if total > 0.0 { n / total } else { even };
            row.insert(
                l.to_string(),
                scale * ((1.0 - EVEN_SHARE) * share + EVEN_SHARE * even),
            );
        }
    }
    out
}

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).log2()
}

impl Model {
    /// The prior alone.
    pub fn prior(priors: &Counts) -> Model {
        Model::fit(priors, &[], &[])
    }

    /// Fits the model to a memory's candidate pairs (`pairs`, with
    /// `Some(false)` for a pair a veto says is two things) and the
    /// operator's decisions (`labels`).
    pub fn fit(priors: &Counts, pairs: &[(&Comparison, Option<bool>)], labels: &[Label]) -> Model {
        let alpha_m = normalised(&priors.m, PRIOR_STRENGTH);
        let alpha_u = normalised(&pooled_u(&priors.u), PRIOR_STRENGTH);
        let lambda0 = if priors.pairs == 0 {
            0.5
        } else {
            (priors.same as f64 + SMOOTHING) / (priors.pairs as f64 + 2.0 * SMOOTHING)
        };
        let mut model = Model {
            lambda: lambda0,
            m: normalised(&priors.m, 1.0),
            u: normalised(&pooled_u(&priors.u), 1.0),
            pairs: pairs.len(),
            labels: labels.len(),
            iterations: 0,
        };
        for it in 0..MAX_ITERATIONS {
            // expectation: each pair's chance of being one thing
            let r: Vec<f64> = pairs
                .iter()
                .map(|(c, known)| match known {
                    Some(true) => 1.0,
                    Some(false) => 0.0,
                    None => model.probability(&c.levels),
                })
                .collect();
            // maximisation, with the prior's pseudo-counts and the labels
            let mut cm = alpha_m.clone();
            let mut cu = alpha_u.clone();
            let mut add = |levels: &BTreeMap<String, String>, wm: f64, wu: f64| {
                for (f, l) in levels {
                    if let Some(x) = cm.get_mut(f).and_then(|row| row.get_mut(l)) {
                        *x += wm;
                    }
                    if let Some(x) = cu.get_mut(u_feature(f)).and_then(|row| row.get_mut(l)) {
                        *x += wu;
                    }
                }
            };
            for ((c, _), r) in pairs.iter().zip(&r) {
                add(&c.levels, *r, 1.0 - r);
            }
            for l in labels {
                let s = if l.same { 1.0 } else { 0.0 };
                add(&l.levels, LABEL_WEIGHT * s, LABEL_WEIGHT * (1.0 - s));
            }
            let rows = |t: Table| -> Table {
                t.into_iter()
                    .map(|(f, row)| {
                        let total: f64 = row.values().sum();
                        (f, row.into_iter().map(|(l, x)| (l, x / total)).collect())
                    })
                    .collect()
            };
            // the share of duplicates from the memory's own pairs only: the
            // operator's decisions are a chosen few, not a sample
            let lambda = ((PRIOR_STRENGTH * lambda0 + r.iter().sum::<f64>())
                / (PRIOR_STRENGTH + r.len() as f64))
                .clamp(LAMBDA_BOUNDS.0, LAMBDA_BOUNDS.1);
            let next = Model {
                lambda,
                m: rows(cm),
                u: rows(cu),
                pairs: pairs.len(),
                labels: labels.len(),
                iterations: it + 1,
            };
            let moved = next.distance(&model);
            model = next;
            if moved < TOLERANCE {
                break;
            }
        }
        model
    }

    fn distance(&self, o: &Model) -> f64 {
        let mut d = (self.lambda - o.lambda).abs();
        for (t, s) in [(&self.m, &o.m), (&self.u, &o.u)] {
            for (f, row) in t {
                for (l, x) in row {
                    let y = s.get(f).and_then(|r| r.get(l)).copied().unwrap_or(0.0);
                    d = d.max((x - y).abs());
                }
            }
        }
        d
    }

    /// Each known level's part.
    pub fn terms(&self, levels: &BTreeMap<String, String>) -> Vec<Term> {
        levels
            .iter()
            .filter_map(|(f, l)| {
                let m = *self.m.get(f)?.get(l)?;
                let u = *self.u.get(u_feature(f))?.get(l)?;
                let key = (f.as_str(), l.as_str());
                let raw = (m / u).log2();
                let weight = if DISAGREEMENTS.contains(&key) {
                    raw.min(0.0)
                } else if AGREEMENTS.contains(&key) {
                    raw.max(0.0)
                } else {
                    raw
                };
                Some(Term {
                    feature: f.clone(),
                    level: l.clone(),
                    m,
                    u,
                    weight,
                })
            })
            .collect()
    }

    /// The probability that a pair with these levels is one thing.
    pub fn probability(&self, levels: &BTreeMap<String, String>) -> f64 {
        let bits: f64 =
            logit(self.lambda) + self.terms(levels).iter().map(|t| t.weight).sum::<f64>();
        1.0 / (1.0 + (-bits).exp2())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A priors file that no longer reads would leave the model on even
    /// shares without a word: it must read, and say where it comes from.
    #[test]
    fn the_shipped_priors_read() {
        let c = Counts::shipped();
        assert!(c.pairs > 0 && c.same > 0 && c.same < c.pairs, "{c:?}");
        assert!(c.source.contains("seeds"), "{}", c.source);
        let m = Model::prior(c);
        for (f, levels) in FEATURES {
            let total: f64 = levels.iter().map(|l| m.m[*f][*l]).sum();
            assert!((total - 1.0).abs() < 1e-9, "{f}: {total}");
        }
    }
}
