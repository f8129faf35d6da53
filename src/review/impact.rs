//! Recall impact: which of the agents' recent reads (the read log) would
//! get a different answer if a pending item were applied. Each distinct
//! recent read runs now, then again inside a transaction where the item's
//! commands ran, which is rolled back: nothing is written.

use crate::Nexus;
use crate::audit::reads::{self, Filter};
use crate::kip::{ErrorCode, KipError, KipResult};
use crate::protocol::{Method, Outcome, Request, Response};
use serde_json::{Map, Value, json};

/// Reads this recent are weighed (days).
pub const IMPACT_DAYS: i64 = 14;
/// Distinct reads weighed at most (the newest).
pub const IMPACT_READS: usize = 50;
/// Log rows looked through to find them.
const SCANNED: usize = 5_000;

/// A read whose answer the item changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    pub read: i64,
    pub at: String,
    pub caller: String,
    pub command: String,
    pub parameters: Value,
    pub before: Value,
    pub after: Value,
}

impl Changed {
    pub fn to_json(&self) -> Value {
        json!({
            "read": self.read, "at": self.at, "caller": self.caller,
            "command": self.command, "parameters": self.parameters,
            "before": self.before, "after": self.after,
        })
    }
}

/// The distinct successful FIND and SEARCH reads of the last
/// `IMPACT_DAYS` before `now`, newest first, at most `IMPACT_READS`.
pub fn recent_reads(nx: &Nexus, now: &str) -> KipResult<Vec<reads::Request>> {
    let since = chrono::DateTime::parse_from_rfc3339(now)
        .map(|t| {
            (t - chrono::Duration::days(IMPACT_DAYS))
                .to_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        })
        .map_err(|e| KipError::internal(format!("not a time: {now}: {e}")))?;
    let rows = reads::recent(
        nx.reads_db()?,
        &Filter {
            since: Some(since),
            ..Default::default()
        },
        SCANNED,
    )?;
    let mut seen = std::collections::HashSet::new();
    Ok(rows
        .into_iter()
        .filter(|r| r.error.is_none() && matches!(r.kind.as_str(), "FIND" | "SEARCH"))
        .filter(|r| seen.insert((r.command.clone(), r.parameters.to_string())))
        .take(IMPACT_READS)
        .collect())
}

/// A logged read's answer now (None if it fails now).
fn answer(nx: &mut Nexus, r: &reads::Request) -> Option<Value> {
    let params = match &r.parameters {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let mut req = Request::command(&r.command).with_params(params);
    req.method = Method::ExecuteKipReadonly;
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => Some(result),
        _ => None,
    }
}

const DRY_RUN: &str = "recall impact: rolled back";

/// Of `recent` (from `recent_reads`), the reads whose answer would differ
/// if `item`'s commands (its edit, if any) ran now.
pub fn impact(
    nx: &mut Nexus,
    item: &super::proposals::Item,
    recent: &[reads::Request],
) -> KipResult<Vec<Changed>> {
    if recent.is_empty() {
        return Ok(Vec::new());
    }
    let before: Vec<Option<Value>> = recent.iter().map(|r| answer(nx, r)).collect();
    let cmds = item.edited.clone().unwrap_or_else(|| item.commands.clone());
    let mut after: Vec<Option<Value>> = Vec::new();
    let was = nx.set_maintaining(
        super::proposals::CLASSES.contains(&item.class.as_str()) && item.edited.is_none(),
    );
    let ran = nx.atomically("impact", |nx| {
        for c in &cmds {
            if let Outcome::Err(e) = nx.kip_with(c, Value::Object(item.params.clone())) {
                return Err(e);
            }
        }
        after = recent.iter().map(|r| answer(nx, r)).collect();
        Err(KipError::new(ErrorCode::InternalError, DRY_RUN))
    });
    nx.set_maintaining(was);
    match ran {
        Err(e) if e.message == DRY_RUN => {}
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    Ok(recent
        .iter()
        .zip(before.into_iter().zip(after))
        .filter(|(_, (b, a))| b != a)
        .map(|(r, (b, a))| Changed {
            read: r.id,
            at: r.at.clone(),
            caller: r.caller.clone(),
            command: r.command.clone(),
            parameters: r.parameters.clone(),
            before: b.unwrap_or(Value::Null),
            after: a.unwrap_or(Value::Null),
        })
        .collect())
}

/// "changes the answer to 3 of scout's recent reads" (or of several
/// callers'), or None when it changes none.
pub fn summary(changed: &[Changed], weighed: usize) -> Option<String> {
    if changed.is_empty() {
        return None;
    }
    let mut callers: Vec<&str> = changed.iter().map(|c| c.caller.as_str()).collect();
    callers.sort();
    callers.dedup();
    let whose = match callers.as_slice() {
        [one] => format!("{one}'s"),
        _ => format!("{} callers'", callers.len()),
    };
    Some(format!(
        "changes the answer to {} of {whose} recent reads ({} weighed, last {IMPACT_DAYS} days)",
        changed.len(),
        weighed
    ))
}
