//! Whether two concepts are one thing, as a calibrated probability: each
//! candidate pair (found by blocking on names, [`super::similarity`]) is
//! turned into a comparison vector ([`compare`]), whose levels a
//! Fellegi–Sunter model weighs ([`model`]); the model's parameters are
//! estimated on the memory's own pairs and re-estimated with each of the
//! operator's decisions ([`labels`]). Three bands follow:
//! [`MERGE_AT`] and above, a merge proposal; from [`ASK_AT`], a "same or
//! different?" question for the operator, never a merge; below, nothing
//! (noted, for `somnus why A --with B`). Two people are never put in the
//! merge band on their names alone.

pub mod compare;
pub mod model;

pub use compare::{Comparison, compare};
pub use model::{Counts, Label, Model, Term};

use crate::Nexus;
use crate::kip::KipResult;
use crate::review::labels;
use serde::{Deserialize, Serialize};

/// A merge is proposed at this probability and above.
pub const MERGE_AT: f64 = 0.9;
/// From this probability up to [`MERGE_AT`], the operator is asked.
pub const ASK_AT: f64 = 0.5;
/// Two people with no evidence beyond their names, two whose names differ
/// by a generation mark, and two that each hold a long text the other
/// lacks, are held under the merge band, at most this.
pub const NAME_ONLY_PERSON_CAP: f64 = 0.89;

/// The `meta` row holding the model last fitted on this memory.
pub const MODEL_KEY: &str = "matcher_model";

/// What a pair's probability calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    Merge,
    Ask,
    Apart,
}

/// The model fitted with the operator's decisions, and the same fitted
/// without them (what the decisions changed).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Fitted {
    pub model: Model,
    pub base: Model,
    pub fitted_at: String,
    /// The decisions it learned from ([`labels::digest`]).
    #[serde(default)]
    pub labels_digest: String,
}

/// A pair's verdict with its parts.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Scored {
    pub probability: f64,
    /// The model's probability before the cap on name-only people.
    pub raw: f64,
    pub band: Band,
    pub terms: Vec<Term>,
    /// Each level's weight now minus its weight without the operator's
    /// decisions.
    pub learned: Vec<(String, f64)>,
    pub prior_odds_bits: f64,
    pub capped: bool,
}

impl Fitted {
    /// Fits the model on a memory's candidate pairs and the decisions kept
    /// in it.
    pub fn fit(nx: &Nexus, pairs: &[&Comparison]) -> KipResult<Fitted> {
        let labels = labels::all(nx.db())?;
        let labels_digest = labels::digest(nx.db())?;
        let priors = Counts::shipped();
        // a vetoed pair is decided by its veto, a pair two generations
        // apart is always asked: they say nothing of how often names agree
        // among the pairs the model decides
        let known: Vec<(&Comparison, Option<bool>)> = pairs
            .iter()
            .filter(|c| c.decided_by_model())
            .map(|c| (*c, None))
            .collect();
        let base = Model::fit(priors, &known, &[]);
        // without decisions the model is its base: fitted once
        let model = if labels.is_empty() {
            base.clone()
        } else {
            Model::fit(priors, &known, &labels)
        };
        Ok(Fitted {
            model,
            base,
            fitted_at: crate::store::now(),
            labels_digest,
        })
    }

    /// Keeps the model, for `somnus why` and the next look.
    pub fn save(&self, nx: &Nexus) -> KipResult<()> {
        crate::store::meta::set(nx.db(), MODEL_KEY, self)
    }

    /// Whether the operator decided since it was fitted.
    pub fn out_of_date(&self, nx: &Nexus) -> KipResult<bool> {
        Ok(labels::digest(nx.db())? != self.labels_digest)
    }

    /// The model last kept, if any.
    pub fn load(nx: &Nexus) -> Option<Fitted> {
        crate::store::meta::get(nx.db(), MODEL_KEY)
    }

    /// The verdict on one pair.
    pub fn score(&self, c: &Comparison) -> Scored {
        let terms = self.model.terms(&c.levels);
        let base = self.base.terms(&c.levels);
        let learned = terms
            .iter()
            .zip(&base)
            .map(|(t, b)| (format!("{}={}", t.feature, t.level), t.weight - b.weight))
            .filter(|(_, d)| d.abs() >= 0.005)
            .collect();
        let raw = if c.veto.is_some() {
            0.0
        } else {
            self.model.probability(&c.levels)
        };
        let capped = (c.generation.is_some() || c.texts.is_some() || (c.person && !c.beyond_name))
            && raw > NAME_ONLY_PERSON_CAP;
        let probability = if capped { NAME_ONLY_PERSON_CAP } else { raw };
        Scored {
            probability,
            raw,
            band: band(probability),
            terms,
            learned,
            prior_odds_bits: (self.model.lambda / (1.0 - self.model.lambda)).log2(),
            capped,
        }
    }
}

/// The band a probability falls in.
pub fn band(p: f64) -> Band {
    if p >= MERGE_AT {
        Band::Merge
    } else if p >= ASK_AT {
        Band::Ask
    } else {
        Band::Apart
    }
}
