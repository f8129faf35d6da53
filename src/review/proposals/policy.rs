//! How the operator wants each class of proposal item handled: reviewed,
//! or applied without review (`auto`), and which classes there are.

use crate::Nexus;
use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store;

/// How the operator set an item class to be handled.
pub fn policy(nx: &Nexus, class: &str) -> KipResult<String> {
    match nx.db().query_opt(
        "SELECT mode FROM sleep_policy WHERE class = ?1",
        crate::args![class],
    )? {
        Some(r) => r.text(0),
        None => Ok("review".into()),
    }
}

pub fn policies(nx: &Nexus) -> KipResult<Vec<(String, String, String, String)>> {
    nx.db()
        .query(
            "SELECT class, mode, set_at, set_by FROM sleep_policy ORDER BY class",
            &[],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.text(1)?, r.text(2)?, r.text(3)?)))
        .collect()
}

/// The policy that lets agent keys decide their sub-agents' proposals
/// (`auto`); by default (`review`) only people do.
pub const AGENTS_DECIDE: &str = "agents_decide";

/// The class of what an import holds back for review (a write that would
/// replace a value someone else wrote).
pub const IMPORT: &str = "import";

/// The classes of proposal items the cycle makes.
pub const CLASSES: [&str; 15] = [
    "archive",
    "commitment",
    "confirm",
    "connection",
    "consolidate",
    "contradiction",
    "domain",
    "llm",
    "merge",
    "pattern",
    "reclassify",
    "redact",
    "same_or_different",
    "self_model",
    "skill",
];

/// Sets an item class to `auto` (applied without review) or `review`.
pub fn set_policy(nx: &Nexus, class: &str, mode: &str, by: &str) -> KipResult<()> {
    // beside the cycle's classes: what imports hold back (`import`), one
    // sub-agent's writes (`subagent:NAME`),
    // and whether agent keys may decide sub-agents' proposals
    // (`agents_decide`: auto lets them, review keeps it to people)
    let sub = class
        .strip_prefix("subagent:")
        .is_some_and(|n| crate::store::keys::check_name(n).is_ok());
    if !CLASSES.contains(&class) && !sub && class != AGENTS_DECIDE && class != IMPORT {
        return Err(KipError::new(
            ErrorCode::InvalidSyntax,
            format!(
                "there is no item class `{class}`; the classes are {}, {IMPORT}, subagent:NAME and {AGENTS_DECIDE}",
                CLASSES.join(", ")
            ),
        ));
    }
    if !(matches!(mode, "auto" | "review") || (sub && mode == "batch")) {
        return Err(KipError::new(
            ErrorCode::InvalidSyntax,
            format!(
                "policy mode must be `auto` or `review`{}, not `{mode}`",
                if sub { " or `batch`" } else { "" }
            ),
        ));
    }
    nx.db().execute(
        "INSERT INTO sleep_policy(class, mode, set_at, set_by) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT(class) DO UPDATE SET mode = excluded.mode, set_at = excluded.set_at, set_by = excluded.set_by",
        crate::args![class, mode, store::now(), by],
    )?;
    Ok(())
}
