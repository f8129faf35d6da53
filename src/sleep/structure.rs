//! The structure the sleep cycle relies on: the Genesis types and domains,
//! `$self` and `$system`, and the types and predicates of the bootstrap
//! capsules. A memory adopted from elsewhere, or edited outside somnus,
//! may lack some; the cycle restores them (audited, from the same
//! capsules a new memory starts from) and `somnus health` lists them.

use crate::Nexus;
use crate::engine::BOOTSTRAP_CAPSULES;
use crate::kip::KipResult;

/// What one bootstrap capsule defines: (type, name) pairs that must exist.
fn defines(capsule: &str) -> Vec<(&'static str, String)> {
    match capsule {
        "Genesis" => vec![
            ("$ConceptType", "$ConceptType".into()),
            ("$ConceptType", "$PropositionType".into()),
            ("$ConceptType", "Domain".into()),
            ("$PropositionType", "belongs_to_domain".into()),
            ("Domain", "CoreSchema".into()),
            ("Domain", "Unsorted".into()),
            ("Domain", "Archived".into()),
            ("Domain", "System".into()),
        ],
        "$self" | "$system" => vec![("Person", capsule.into())],
        c if c.starts_with(|ch: char| ch.is_uppercase()) => vec![("$ConceptType", c.into())],
        p => vec![("$PropositionType", p.into())],
    }
}

/// One missing piece, and the capsule that restores it.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    pub capsule: &'static str,
    /// `Type:Name` of each element of the capsule that is missing.
    pub elements: Vec<String>,
}

/// The bootstrap structure this memory lacks, capsule by capsule.
pub fn missing(nx: &Nexus) -> KipResult<Vec<Missing>> {
    let db = nx.db();
    let mut out = Vec::new();
    for (capsule, _) in BOOTSTRAP_CAPSULES {
        let mut gone = Vec::new();
        for (t, n) in defines(capsule) {
            let here = db.query_i64(
                "SELECT 1 FROM concepts WHERE type = ?1 AND name = ?2",
                crate::args![t, n.as_str()],
            )?;
            if here.is_none() {
                gone.push(format!("{t}:{n}"));
            }
        }
        if !gone.is_empty() {
            out.push(Missing {
                capsule,
                elements: gone,
            });
        }
    }
    Ok(out)
}
