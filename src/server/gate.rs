//! What a caller may do, by the role of its key: a reader only reads; an
//! agent reads and writes; a sub-agent reads committed memory, and each of
//! its write requests is staged as a proposal for review (Moltbot §13:
//! shared read, gated write) instead of being applied.

use crate::engine::Nexus;
use crate::kip::{ErrorCode, KipError};
use crate::protocol::{CommandItem, Method, Outcome, Request, Response};
use crate::review::proposals::{self, Draft};
use crate::store::keys::{Identity, Role};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Refuses what the role may not ask, before anything runs: `None` lets
/// the request through.
pub fn refuse(req: &Request, id: &Identity) -> Option<KipError> {
    if id.role == Role::Reader && req.method == Method::ExecuteKip {
        return Some(
            KipError::new(
                ErrorCode::ImmutableTarget,
                format!(
                    "key `{}` is a reader: it may call execute_kip_readonly only",
                    id.name
                ),
            )
            .with_hint(
                "Send reads with execute_kip_readonly; writes need an agent or subagent key.",
            ),
        );
    }
    None
}

/// The commands of a request with their parameters (a command's own
/// parameters over the shared ones).
pub(crate) fn commands(req: &Request) -> Vec<(String, Map<String, Value>)> {
    let params = &req.args.parameters;
    match (&req.args.command, &req.args.commands) {
        (Some(c), None) => vec![(c.clone(), params.clone())],
        (None, Some(list)) => list
            .iter()
            .map(|i| match i {
                CommandItem::Text(t) => (t.clone(), params.clone()),
                CommandItem::WithParams {
                    command,
                    parameters,
                } => {
                    let mut p = params.clone();
                    p.extend(parameters.clone());
                    (command.clone(), p)
                }
            })
            .collect(),
        _ => vec![],
    }
}

/// A sub-agent's request that writes nothing runs as `execute_kip_readonly`:
/// its reads see committed memory, and a SEARCH does no work on the
/// memory's account (no embedding of what changed, no provider call
/// beyond ranking). Returns whether it was turned.
pub fn read_only_for(req: &mut Request, id: &Identity) -> bool {
    let turn = id.role == Role::Subagent && req.method == Method::ExecuteKip && {
        let cmds = commands(req);
        !cmds.is_empty()
            && cmds
                .iter()
                .all(|(t, p)| crate::kip::parse(t, p).is_ok_and(|c| !c.is_write()))
    };
    if turn {
        req.method = Method::ExecuteKipReadonly;
    }
    turn
}

/// Whether a sub-agent's request carries a write that must be staged.
pub fn stages(req: &Request, id: &Identity) -> bool {
    id.role == Role::Subagent
        && req.method == Method::ExecuteKip
        && !req.args.dry_run
        && commands(req)
            .iter()
            .any(|(t, p)| crate::kip::parse(t, p).is_ok_and(|c| c.is_write()))
}

/// Answers a sub-agent's request: its reads run on committed memory, its
/// writes become the items of one proposal (source: the key's name), and
/// each write's answer says it was staged and names the proposal. A
/// command that does not parse fails as it would for anyone, and nothing
/// is staged.
pub fn stage(nx: &mut Nexus, req: &Request, id: &Identity) -> Response {
    let cmds = commands(req);
    if cmds.is_empty() {
        return nx.execute(req);
    }
    // the limits every caller has: a batch's size, then the sub-agent's
    // quota of items waiting for review
    if cmds.len() > crate::kip::limits::MAX_BATCH {
        return Response::error(
            KipError::exhausted(format!(
                "the batch has {} commands; the limit is {}",
                cmds.len(),
                crate::kip::limits::MAX_BATCH
            ))
            .with_hint("Send the commands in several batches."),
        );
    }
    let mut parsed = Vec::new();
    for (t, p) in &cmds {
        match crate::kip::parse(t, p) {
            Ok(c) => parsed.push(c.is_write()),
            Err(e) => return Response::error(e),
        }
    }
    let writes = parsed.iter().filter(|w| **w).count();
    match pending_of(nx, &id.name) {
        Ok(n) if n + writes > MAX_PENDING_PER_SUBAGENT => {
            return Response::error(
                KipError::exhausted(format!(
                    "sub-agent `{}` has {n} writes waiting for review; {writes} more would pass the limit of {MAX_PENDING_PER_SUBAGENT}",
                    id.name
                ))
                .with_hint("Wait until a reviewer decides the waiting ones (somnus proposals list)."),
            );
        }
        Ok(_) => {}
        Err(e) => return Response::error(e),
    }
    let class = format!("subagent:{}", id.name);
    let reason = req
        .args
        .reason
        .clone()
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "(no reason given)".into());
    let mut drafts = Vec::new();
    for ((t, p), write) in cmds.iter().zip(&parsed) {
        if !*write {
            continue;
        }
        drafts.push(Draft {
            class: class.clone(),
            key: format!(
                "{class}:{}",
                crate::store::keys::digest(&format!("{t}\u{0}{}", Value::Object(p.clone())))
            ),
            title: first_line(&with_values(t, p)),
            commands: vec![t.clone()],
            params: p.clone(),
            rationale: reason.clone(),
            evidence: vec![],
            confidence: 1.0,
        });
    }
    let keys: Vec<String> = drafts.iter().map(|d| d.key.clone()).collect();
    let title = format!(
        "Sub-agent {}: {} write{}",
        id.name,
        drafts.len(),
        if drafts.len() == 1 { "" } else { "s" }
    );
    // the request's time limit covers its previews
    let deadline = std::time::Instant::now() + nx.timeout();
    // one transaction: the previews, the items, their titles and conflict
    // marks are all staged, or (an error, the time limit) none of them
    let staged = nx.atomically(&class, |nx| {
        // `batch`: a sub-agent's writes of one hour gather in one proposal
        let into = match proposals::policy(nx, &class) {
            Ok(m) if m == "batch" => open_batch(nx, &id.name),
            _ => None,
        };
        let staged =
            proposals::stage_until(nx, None, &id.name, &title, drafts, into, Some(deadline))?;
        let Some(p) = staged.proposal else {
            return Ok((staged, BTreeMap::new()));
        };
        // a batch's title counts what it gathered
        if into.is_some() {
            nx.db().execute(
                "UPDATE proposals SET title = 'Sub-agent ' || ?2 || ': ' || (SELECT COUNT(*) FROM proposal_items WHERE proposal = ?1) || ' writes of the hour' WHERE id = ?1",
                &[p.into(), id.name.as_str().into()],
            )?;
        }
        // each new item is titled by what it does ("insert Person: Ines
        // Duarte, insert Person: Ines Duarte works_at Organization: Acme
        // Labs")
        let new: Vec<i64> = staged.keys.values().map(|(_, s)| *s).collect();
        for seq in &new {
            proposals::retitle(nx, p, *seq)?;
        }
        // items that disagree with other pending ones, or with the
        // memory, are marked on both
        crate::review::conflicts::mark(nx.db(), p, &new)?;
        // what each staged write's answer says of its item
        let mut state = BTreeMap::new();
        for seq in new {
            if let Some(it) = proposals::item(nx, p, seq)? {
                state.insert(seq, (it.status, it.conflicts));
            }
        }
        Ok((staged, state))
    });
    let (staged, state) = match staged {
        Ok(s) => s,
        Err(e) => return Response::error(e),
    };
    let mut outcomes = Vec::new();
    let mut k = 0;
    for ((t, p), write) in cmds.iter().zip(&parsed) {
        if !*write {
            let mut one = req.clone();
            one.method = Method::ExecuteKipReadonly;
            one.args.command = Some(t.clone());
            one.args.commands = None;
            one.args.parameters = p.clone();
            match nx.execute(&one) {
                Response::Single(o) => outcomes.push(o),
                Response::Batch(mut v) => outcomes.push(v.pop().unwrap_or(Outcome::Err(
                    KipError::new(ErrorCode::InternalError, "no answer"),
                ))),
            }
            continue;
        }
        let key = &keys[k];
        k += 1;
        let result = match staged.keys.get(key) {
            Some((proposal, item)) => {
                let (status, conflicts) = state
                    .get(item)
                    .cloned()
                    .unwrap_or_else(|| ("pending".into(), vec![]));
                json!({
                    "staged": true,
                    "proposal": proposal,
                    "item": item,
                    "status": status,
                    "conflicts": conflicts,
                    "note": if status == "applied" {
                        "applied at once: the memory's policy for this sub-agent is auto"
                    } else {
                        "not applied: a reviewer approves, edits or rejects it; reads see committed memory only"
                    },
                })
            }
            None => {
                let why = staged
                    .skipped
                    .iter()
                    .find(|(k2, _)| k2 == key)
                    .map(|(_, w)| w.clone())
                    .unwrap_or_else(|| "not staged".into());
                // a write that would fail fails now, with its own code
                if let Some(rest) = why.strip_prefix("preview failed: ")
                    && let Some((code, msg)) = rest.split_once(": ")
                    && let Some(code) = ErrorCode::from_code(code)
                {
                    outcomes.push(Outcome::Err(KipError::new(code, msg.to_string())));
                    continue;
                }
                json!({ "staged": false, "reason": why })
            }
        };
        outcomes.push(Outcome::Ok {
            result,
            next_cursor: None,
            effects: None,
            search: None,
        });
    }
    if req.args.command.is_some() {
        Response::Single(outcomes.pop().unwrap_or(Outcome::Err(KipError::new(
            ErrorCode::InternalError,
            "no answer",
        ))))
    } else {
        Response::Batch(outcomes)
    }
}

/// Writes one sub-agent may have waiting for review at once; past it, its
/// writes are refused (`KIP_4002`) until a reviewer decides some.
pub const MAX_PENDING_PER_SUBAGENT: usize = 1_000;

/// How many of a sub-agent's staged writes wait for review.
fn pending_of(nx: &Nexus, name: &str) -> Result<usize, KipError> {
    Ok(nx
        .db()
        .query_i64(
            "SELECT COUNT(*) FROM proposal_items i JOIN proposals p ON p.id = i.proposal WHERE p.actor = ?1 AND p.run IS NULL AND i.status IN ('pending', 'stale')",
            &[name.into()],
        )?
        .unwrap_or(0) as usize)
}

fn first_line(t: &str) -> String {
    let line = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = line.chars().take(70).collect();
    if cut.chars().count() < line.chars().count() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// An agent key deciding a sub-agent's proposal (`POST /proposals`):
/// `{"proposal": N, "decision": "approve" | "reject" | "defer", "items":
/// [1, 2]?, "edits": {"1": "KIP"}?, "reason": "..."}`. Allowed only to agent keys, only when the memory's
/// `agents_decide` policy is `auto`, and never for a sleep cycle's
/// proposal or the caller's own.
pub fn decide(nx: &mut Nexus, id: &Identity, body: &Value) -> Result<Value, KipError> {
    let forbidden = |m: String| KipError::new(ErrorCode::ImmutableTarget, m);
    if id.role != Role::Agent {
        return Err(forbidden(format!(
            "key `{}` is a {}: only agent keys decide proposals",
            id.name,
            id.role.as_str()
        )));
    }
    if proposals::policy(nx, proposals::AGENTS_DECIDE)? != "auto" {
        return Err(forbidden(
            "this memory keeps decisions to people: sub-agents' proposals are reviewed in the console or with `somnus proposals`".into(),
        )
        .with_hint("An operator may allow agents to decide: somnus proposals policy agents_decide auto"));
    }
    let pid = body["proposal"]
        .as_i64()
        .ok_or_else(|| KipError::syntax("give \"proposal\": the proposal's number"))?;
    let p = proposals::get(nx, pid)?
        .ok_or_else(|| KipError::not_found(format!("proposal #{pid} does not exist")))?;
    if p.run.is_some() {
        return Err(forbidden(format!(
            "proposal #{pid} comes from sleep run #{}: only people decide the sleep cycle's proposals",
            p.run.unwrap_or_default()
        )));
    }
    if p.actor == id.name {
        return Err(forbidden(format!(
            "proposal #{pid} is `{}`'s own: no key decides its own proposals",
            id.name
        )));
    }
    let is_subagent = nx
        .db()
        .query_opt(
            "SELECT role FROM api_keys WHERE name = ?1",
            crate::args![&p.actor],
        )?
        .is_some_and(|r| r.text(0).is_ok_and(|role| role == "subagent"));
    if !is_subagent {
        return Err(forbidden(format!(
            "proposal #{pid} is not a sub-agent's (its source is `{}`)",
            p.actor
        )));
    }
    let items: Option<Vec<i64>> = body["items"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_i64).collect());
    let reason = body["reason"].as_str().unwrap_or("").trim().to_string();
    // an edited approval: {"edits": {"1": "UPSERT ..."}}
    let mut edits = std::collections::BTreeMap::new();
    if let Some(m) = body["edits"].as_object() {
        for (k, v) in m {
            let (Ok(seq), Some(text)) = (k.parse::<i64>(), v.as_str()) else {
                return Err(KipError::syntax(
                    "\"edits\" maps an item number to its KIP text: {\"1\": \"UPSERT ...\"}",
                ));
            };
            edits.insert(seq, text.to_string());
        }
    }
    match body["decision"].as_str() {
        Some("defer") => {
            // left pending for people (or the next review), with a note
            let note = if reason.is_empty() {
                format!("deferred by `{}`", id.name)
            } else {
                format!("deferred by `{}`: {reason}", id.name)
            };
            nx.db().execute(
                "UPDATE proposals SET reason = ?2 WHERE id = ?1",
                crate::args![pid, &note],
            )?;
            Ok(json!({ "proposal": pid, "deferred": true, "note": note }))
        }
        Some("approve") => {
            // the audit entries name the approver (actor) and the proposer
            let who = crate::audit::Who {
                actor: id.name.clone(),
                trigger: format!("agent key `{}`", id.name),
                reason: Some(if reason.is_empty() {
                    format!(
                        "proposed by `{}`, approved by agent key `{}`",
                        p.actor, id.name
                    )
                } else {
                    format!(
                        "proposed by `{}`, approved by agent key `{}`: {reason}",
                        p.actor, id.name
                    )
                }),
            };
            let a = proposals::approve_as(
                nx,
                pid,
                items.as_deref(),
                &edits,
                &who,
                proposals::Decider::Agent,
            )?;
            let mut out = json!({ "proposal": pid, "applied": a.applied, "stale": a.stale });
            if !a.stale.is_empty() {
                // what they would do now, for a second look (HTTP 409)
                let mut now = Vec::new();
                for seq in &a.stale {
                    if let Some(mut it) = proposals::item(nx, pid, *seq)? {
                        proposals::label_changes(nx, &mut it.preview)?;
                        now.push(it.to_json());
                    }
                }
                out["changed"] = json!(a.changed);
                out["items"] = Value::Array(now);
                out["error"] = KipError::new(
                    ErrorCode::VersionConflict,
                    format!(
                        "not applied, the memory changed since they were shown: {}",
                        a.changed_text()
                    ),
                )
                .with_hint("Their previews (\"items\") show what they would do now; approve again to apply that.")
                .to_json();
            }
            Ok(out)
        }
        Some("reject") => {
            if reason.is_empty() {
                return Err(KipError::syntax("a rejection needs a \"reason\""));
            }
            let n = proposals::reject_as(
                nx,
                pid,
                items.as_deref(),
                &reason,
                &id.name,
                proposals::Decider::Agent,
            )?;
            Ok(json!({ "proposal": pid, "rejected": n }))
        }
        _ => Err(KipError::syntax(
            "give \"decision\": \"approve\", \"reject\" or \"defer\"",
        )),
    }
}

/// The text with each `:name` placeholder shown as its value, for a title
/// a reviewer reads (strings and comments are left alone).
fn with_values(t: &str, params: &Map<String, Value>) -> String {
    let mut out = String::new();
    let mut chars = t.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if c == '"' {
            in_str = !in_str;
        }
        if c == ':'
            && !in_str
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_')
        {
            let mut name = String::new();
            while let Some(n) = chars
                .peek()
                .copied()
                .filter(|n| n.is_ascii_alphanumeric() || *n == '_')
            {
                name.push(n);
                chars.next();
            }
            match params.get(&name) {
                Some(v) => out.push_str(&v.to_string()),
                None => {
                    out.push(':');
                    out.push_str(&name);
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

pub use proposals::BATCH_PERIOD_SECS;

/// The sub-agent's pending proposal still gathering writes: made within
/// the batch period, nothing in it decided yet.
fn open_batch(nx: &Nexus, name: &str) -> Option<i64> {
    let since = (chrono::Utc::now() - chrono::Duration::seconds(BATCH_PERIOD_SECS))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    nx.db()
        .query_i64(
            "SELECT p.id FROM proposals p WHERE p.actor = ?1 AND p.run IS NULL AND p.status = 'pending' AND p.created_at >= ?2 \
             AND NOT EXISTS (SELECT 1 FROM proposal_items i WHERE i.proposal = p.id AND i.status != 'pending') \
             ORDER BY p.id DESC LIMIT 1",
            &[name.into(), since.into()],
        )
        .ok()
        .flatten()
}
