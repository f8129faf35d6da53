//! The sleep cycle: while the agent is idle, its memory is assessed,
//! consolidated, deduplicated, decayed, corrected and cleaned (the
//! sleep-mode instructions), and every judgement the sleeping mind makes is
//! staged as a reflection proposal for a human to approve.

pub mod clock;
pub mod contradictions;
pub mod cycle;
pub mod explain;
pub mod explain_text;
pub mod extraction;
pub mod health;
pub mod llm;
pub mod maintainer;
pub mod matcher;
pub mod params;
pub mod reasoner;
pub mod recurrence;
pub mod sameness;
pub mod schedule;
pub mod similarity;
pub mod structure;
pub mod topic_words;
pub mod views;

pub use cycle::{Options, Params, Progress, Report, Scope, run};
pub use reasoner::{Heuristic, Reasoner};
