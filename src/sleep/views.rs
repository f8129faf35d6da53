//! What the phases show a reasoner and what it answers: Events, items and
//! domains, patterns, facts in conflict, verdicts, self-model edits. Plain
//! data, shared by the reasoners, the matcher and the phases.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EventView {
    pub id: String,
    pub name: String,
    pub class: String,
    pub summary: String,
    pub start: String,
    pub key_concepts: Vec<String>,
    pub participants: Vec<String>,
    pub salience: Option<f64>,
    /// `Type:Name` of the concepts it mentions or involves.
    pub linked: Vec<(String, String)>,
    pub domains: Vec<String>,
    #[serde(default)]
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Scored {
    pub name: String,
    pub score: f64,
    pub basis: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ItemView {
    pub id: String,
    pub ty: String,
    pub name: String,
    pub text: String,
    /// Domains of the concepts it links to, one entry per link.
    pub neighbour_domains: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DomainView {
    pub name: String,
    pub description: String,
    /// Names and descriptions of a sample of its members of the item's
    /// type.
    pub member_texts: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Classification {
    pub item: String,
    pub domain: Option<String>,
    pub confidence: f64,
    pub rationale: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Gist {
    pub event: String,
    /// Existing concepts (type, name) the Event's knowledge lives in.
    pub into: Vec<(String, String)>,
    /// Nothing to extract: archive the Event with a TTL.
    pub archive: bool,
    pub rationale: String,
    /// New semantic concepts the Event states (5A "extract any missed
    /// stable knowledge"), proposed with `derived_from` the Event.
    #[serde(default)]
    pub extracted: Vec<Extracted>,
}

/// A piece of stable knowledge an Event states outright, with the phrase
/// that states it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Extracted {
    /// `Preference` (a stated liking or aversion), `Decision` or `Plan`
    /// (made only where the memory defines those types).
    pub ty: String,
    pub name: String,
    pub description: String,
    /// `preference`, `decision`, `plan`, `instruction` (a standing
    /// instruction, kept as a Preference) or `habit` (what someone or
    /// something always or never does, said without a subject: a
    /// Preference when it is said of the user).
    pub kind: String,
    /// The cue phrase, as written.
    pub cue: String,
    /// The Person it is about, when the Event names one.
    #[serde(default)]
    pub holder: Option<String>,
    /// The clause that states it, as written.
    #[serde(default)]
    pub clause: String,
}

impl Extracted {
    /// Its kind as a sentence says it: "a decision", "an instruction".
    pub fn a_kind(&self) -> String {
        let article = if self.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {}", self.kind)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cluster {
    pub holder: String,
    pub key_concepts: Vec<String>,
    pub events: Vec<EventView>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pattern {
    /// Insight or Preference
    pub ty: String,
    /// preference, trait, routine or topic (the sleep-mode pattern types)
    #[serde(default = "topic")]
    pub kind: String,
    pub name: String,
    pub description: String,
    pub domain: String,
    pub confidence: f64,
    pub rationale: String,
}

fn topic() -> String {
    "topic".into()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConceptView {
    pub id: String,
    pub ty: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub description: String,
    pub attributes: Value,
    pub links: i64,
    /// `Type:Name` of the concepts it is linked to (domains aside), up to
    /// a hundred.
    #[serde(default)]
    pub neighbours: Vec<String>,
    /// The domains it belongs to.
    #[serde(default)]
    pub domains: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SameJudgement {
    pub same: bool,
    /// Not sure either way: ask the operator "same or different?".
    #[serde(default)]
    pub ask: bool,
    /// The node to keep: `a` or `b`.
    pub keep_a: bool,
    pub confidence: f64,
    pub rationale: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FactView {
    pub link: String,
    pub object_type: String,
    pub object: String,
    pub observed_at: Option<String>,
    pub confidence: Option<f64>,
    pub source: Option<String>,
    #[serde(default)]
    pub valid_from: Option<String>,
    #[serde(default)]
    pub valid_until: Option<String>,
    /// How far the fact's source is trusted (metadata `reliability` or
    /// `source_reliability`, 0..1).
    #[serde(default)]
    pub reliability: Option<f64>,
    /// The object's description.
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Conflict {
    pub subject_type: String,
    pub subject: String,
    pub predicate: String,
    /// Why the two cannot both hold: `single-valued predicate` or the
    /// shared slot (`Diet`).
    pub slot: String,
    pub a: FactView,
    pub b: FactView,
    /// The predicate's value cannot change (`born_in`): one of the two is
    /// wrong, neither is newer.
    #[serde(default)]
    pub immutable: bool,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    KeepNewer,
    KeepOlder,
    BothValid,
    Merge,
    NeedsContext,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::KeepNewer => "keep_newer",
            Verdict::KeepOlder => "keep_older",
            Verdict::BothValid => "both_valid",
            Verdict::Merge => "merge",
            Verdict::NeedsContext => "needs_context",
        }
    }
    pub fn parse(s: &str) -> Option<Verdict> {
        Some(match s.replace('-', "_").as_str() {
            "keep_newer" | "newer" => Verdict::KeepNewer,
            "keep_older" | "older" => Verdict::KeepOlder,
            "both_valid" | "both" => Verdict::BothValid,
            "merge" => Verdict::Merge,
            "needs_context" | "context" => Verdict::NeedsContext,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Resolution {
    pub verdict: Verdict,
    pub confidence: f64,
    pub rationale: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InsightView {
    pub id: String,
    pub name: String,
    pub class: String,
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SelfEdit {
    /// `strengths`, `weaknesses`, `values`...
    pub attribute: String,
    pub add: Vec<String>,
    pub evidence: Vec<String>,
    pub rationale: String,
}

/// A write the reasoner asked for on its own (the LLM's `execute_kip`
/// calls): captured for review, never applied during the cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedWrite {
    pub command: String,
    pub parameters: serde_json::Map<String, Value>,
    pub rationale: String,
}
