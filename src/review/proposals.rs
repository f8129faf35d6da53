//! Reflection proposals: the sleeping mind's judgement calls, staged for a
//! human. Each item is one change (one or more KIP commands) with its
//! rationale, evidence, confidence, a preview of every element before and
//! after, and the versions of the elements it would touch. A human approves
//! all, some, or an edited item, or rejects with a reason. Approval applies
//! the chosen items in one transaction; an item whose targets moved since it
//! was proposed is marked stale instead. This API is reachable from the
//! console and the CLI only, never from `execute_kip`, HTTP or MCP.

use crate::Nexus;
use crate::audit::Who;
use crate::kip::{self, ErrorCode, KipError, KipResult};
use crate::store;
use crate::store::db::{Backend, Db, Row, Val};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};

mod drift;
mod policy;
pub use drift::retitle;
use drift::{drift, retitle_and_mark, same_change, same_shape, show_again};
pub use policy::{AGENTS_DECIDE, CLASSES, IMPORT, policies, policy, set_policy};

/// A change a phase wants to make, before it is staged.
#[derive(Debug, Clone)]
pub struct Draft {
    /// merge, supersede, consolidate, pattern, archive, reclassify,
    /// self_model, connection, contradiction, domain, llm
    pub class: String,
    /// What the change is about, independent of wording and time
    /// (`merge:C:12>C:40`): a rejected key is not proposed again while its
    /// targets stay unchanged.
    pub key: String,
    pub title: String,
    pub commands: Vec<String>,
    pub params: Map<String, Value>,
    pub rationale: String,
    /// Ids of the elements that justify it (`C:12`, `P:40:prefers`).
    pub evidence: Vec<String>,
    pub confidence: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub proposal: i64,
    pub seq: i64,
    pub class: String,
    pub key: String,
    pub title: String,
    pub commands: Vec<String>,
    pub params: Map<String, Value>,
    pub rationale: String,
    pub evidence: Vec<String>,
    pub confidence: f64,
    pub preview: Vec<Value>,
    pub targets: Vec<(i64, i64)>,
    /// pending, applied, rejected, stale, rolled_back
    pub status: String,
    pub edited: Option<Vec<String>>,
    pub decided_at: Option<String>,
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    /// What was proposed, when the operator edited the item before
    /// approving it: `{"title", "commands", "preview"}` as proposed; the
    /// item's own title, commands and preview are then what was applied.
    pub proposed: Option<Value>,
    /// Where it disagrees with another pending item or with committed
    /// memory ("⚠ conflicts with #4 item 1: Person: Ines Duarte
    /// attributes.role \"vendor\" vs \"client\"").
    pub conflicts: Vec<String>,
}

impl Item {
    /// The commands as an operator edits them: blocks separated by a line
    /// holding only `;`.
    pub fn text(&self) -> String {
        join_commands(self.edited.as_ref().unwrap_or(&self.commands))
    }

    pub fn to_json(&self) -> Value {
        json!({
            "proposal": self.proposal, "item": self.seq, "class": self.class, "key": self.key,
            "title": self.title, "commands": self.commands, "parameters": self.params,
            "rationale": self.rationale, "evidence": self.evidence, "confidence": self.confidence,
            "preview": self.preview, "status": self.status, "edited_commands": self.edited,
            "decided_at": self.decided_at, "decided_by": self.decided_by, "reason": self.reason,
            "conflicts": self.conflicts, "proposed": self.proposed,
        })
    }
}

pub fn join_commands(cmds: &[String]) -> String {
    cmds.join("\n;\n")
}

/// Splits an edited text back into commands (blocks separated by a line
/// holding only `;`).
pub fn split_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        if line.trim() == ";" {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        } else {
            cur.push_str(line);
            cur.push('\n');
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub id: i64,
    pub run: Option<i64>,
    pub created_at: String,
    pub actor: String,
    pub title: String,
    /// pending, partially_applied, applied, rejected, rolled_back
    pub status: String,
    pub decided_at: Option<String>,
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    pub items: Vec<Item>,
}

impl Proposal {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "run": self.run, "created_at": self.created_at, "actor": self.actor,
            "title": self.title, "status": self.status, "decided_at": self.decided_at,
            "decided_by": self.decided_by, "reason": self.reason,
            "items": self.items.iter().map(Item::to_json).collect::<Vec<_>>(),
        })
    }

    pub fn count(&self, status: &str) -> usize {
        self.items.iter().filter(|i| i.status == status).count()
    }
}

fn item_row(r: &Row) -> KipResult<Item> {
    let j = |i: usize| -> KipResult<Value> {
        let s = r.text(i)?;
        Ok(serde_json::from_str(&s).unwrap_or(Value::Null))
    };
    let strings = |v: Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let edited = r.opt_text(13)?;
    Ok(Item {
        proposal: r.i64(0)?,
        seq: r.i64(1)?,
        class: r.text(2)?,
        key: r.text(3)?,
        title: r.text(4)?,
        commands: strings(j(5)?),
        params: j(6)?.as_object().cloned().unwrap_or_default(),
        rationale: r.text(7)?,
        evidence: strings(j(8)?),
        confidence: r.f64(9)?,
        preview: j(10)?.as_array().cloned().unwrap_or_default(),
        targets: j(11)?
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| Some((p.get(0)?.as_i64()?, p.get(1)?.as_i64()?)))
                    .collect()
            })
            .unwrap_or_default(),
        status: r.text(12)?,
        edited: edited.map(|e| strings(serde_json::from_str(&e).unwrap_or(Value::Null))),
        decided_at: r.opt_text(14)?,
        decided_by: r.opt_text(15)?,
        reason: r.opt_text(16)?,
        proposed: r.opt_text(17)?.and_then(|t| serde_json::from_str(&t).ok()),
        conflicts: vec![],
    })
}

const ITEM_COLS: &str = "proposal, seq, class, key, title, command, parameters, rationale, evidence, confidence, preview, targets, status, edited_command, decided_at, decided_by, reason, proposed";

pub fn items(nx: &Nexus, proposal: i64) -> KipResult<Vec<Item>> {
    let mut out = nx
        .db()
        .query(
            &format!("SELECT {ITEM_COLS} FROM proposal_items WHERE proposal = ?1 ORDER BY seq"),
            crate::args![proposal],
        )?
        .iter()
        .map(item_row)
        .collect::<KipResult<Vec<Item>>>()?;
    let at: std::collections::HashMap<i64, usize> =
        out.iter().enumerate().map(|(i, it)| (it.seq, i)).collect();
    for (seq, note) in crate::review::conflicts::of_proposal(nx.db(), proposal)? {
        if let Some(&i) = at.get(&seq) {
            out[i].conflicts.push(note);
        }
    }
    Ok(out)
}

/// One item of a proposal, with its conflict marks.
pub fn item(nx: &Nexus, proposal: i64, seq: i64) -> KipResult<Option<Item>> {
    let Some(row) = nx.db().query_opt(
        &format!("SELECT {ITEM_COLS} FROM proposal_items WHERE proposal = ?1 AND seq = ?2"),
        crate::args![proposal, seq],
    )?
    else {
        return Ok(None);
    };
    let mut it = item_row(&row)?;
    it.conflicts = crate::review::conflicts::of_proposal(nx.db(), proposal)?
        .into_iter()
        .filter(|(s, _)| *s == seq)
        .map(|(_, n)| n)
        .collect();
    Ok(Some(it))
}

pub fn get(nx: &Nexus, id: i64) -> KipResult<Option<Proposal>> {
    let p = match nx.db().query_opt(
        "SELECT id, run, created_at, actor, title, status, decided_at, decided_by, reason FROM proposals WHERE id = ?1",
        crate::args![id],
    )? {
        Some(r) => Some(Proposal {
            id: r.i64(0)?,
            run: r.opt_i64(1)?,
            created_at: r.text(2)?,
            actor: r.text(3)?,
            title: r.text(4)?,
            status: r.text(5)?,
            decided_at: r.opt_text(6)?,
            decided_by: r.opt_text(7)?,
            reason: r.opt_text(8)?,
            items: vec![],
        }),
        None => None,
    };
    match p {
        Some(mut p) => {
            p.items = items(nx, id)?;
            Ok(Some(p))
        }
        None => Ok(None),
    }
}

/// Proposals, newest first; `status` filters (`pending` also lists
/// partially decided ones).
pub fn list(nx: &Nexus, status: Option<&str>, limit: usize) -> KipResult<Vec<Proposal>> {
    let ids = nx
        .db()
        .query(
            "SELECT id FROM proposals WHERE CAST(?1 AS TEXT) IS NULL OR status = ?1 OR (?1 = 'pending' AND status = 'partially_applied' AND EXISTS (SELECT 1 FROM proposal_items i WHERE i.proposal = proposals.id AND i.status IN ('pending','stale'))) ORDER BY id DESC LIMIT ?2",
            crate::args![status, limit],
        )?
        .iter()
        .map(|r| r.i64(0))
        .collect::<KipResult<Vec<i64>>>()?;
    let mut out = Vec::new();
    for id in ids {
        if let Some(p) = get(nx, id)? {
            out.push(p);
        }
    }
    Ok(out)
}

/// Checks an operator's rewrite of an item (blocks separated by a line
/// holding only `;`) the way approval will: every block parses with the
/// item's parameters and writes.
pub fn check_edit(text: &str, params: &Map<String, Value>) -> KipResult<usize> {
    let cmds = split_commands(text);
    if cmds.is_empty() {
        return Err(KipError::new(
            ErrorCode::InvalidSyntax,
            "the edited item holds no command",
        ));
    }
    parse_all(&cmds, params).map(|c| c.len())
}

fn parse_all(cmds: &[String], params: &Map<String, Value>) -> KipResult<Vec<kip::ast::Command>> {
    cmds.iter()
        .map(|c| {
            let cmd = kip::parse(c, params)?;
            if !cmd.is_write() {
                return Err(KipError::new(
                    ErrorCode::InvalidSyntax,
                    format!("a proposal item holds writes only, not {}", cmd.kind()),
                ));
            }
            Ok(cmd)
        })
        .collect()
}

/// A preview's changes and targets.
type PreviewParts = (Vec<Value>, Vec<(i64, i64)>);

/// [`preview`] of an item of `class`: the sleep cycle's classes preview
/// as maintenance, keeping each element's origin as applying them will.
fn preview_of(
    nx: &mut Nexus,
    class: &str,
    cmds: &[String],
    params: &Map<String, Value>,
) -> KipResult<PreviewParts> {
    let was = nx.set_maintaining(CLASSES.contains(&class));
    let out = preview(nx, cmds, params);
    nx.set_maintaining(was);
    // a redaction's preview never shows the secret it removes: its
    // before-image is masked as the after-image will be (the audit keeps
    // the value, for undo)
    if class == "redact" {
        return out.map(|(mut changes, targets)| {
            changes.iter_mut().for_each(mask_secrets);
            (changes, targets)
        });
    }
    out
}

/// Every string in `v` with the secrets in it masked.
fn mask_secrets(v: &mut Value) {
    match v {
        Value::String(t) => {
            let (masked, found) = crate::secrets::redact(t);
            if !found.is_empty() {
                *t = masked;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(mask_secrets),
        Value::Object(m) => m.values_mut().for_each(mask_secrets),
        _ => {}
    }
}

/// What the item's commands would change, run one after another and
/// rolled back.
fn preview(
    nx: &mut Nexus,
    cmds: &[String],
    params: &Map<String, Value>,
) -> KipResult<PreviewParts> {
    parse_all(cmds, params)?;
    if cmds.len() == 1 {
        let p = nx.preview(&cmds[0], params)?;
        return Ok((p.changes, p.targets));
    }
    // several commands: preview each on top of the previous ones
    nx.db().savepoint("somnus_item_preview")?;
    let res = (|| {
        let mut changes = Vec::new();
        let mut targets = Vec::new();
        let mut seen = HashSet::new();
        let who = Who {
            actor: "preview".into(),
            trigger: "preview".into(),
            reason: None,
        };
        for c in cmds {
            let p = nx.preview(c, params)?;
            changes.extend(p.changes);
            for t in p.targets {
                if seen.insert(t.0) {
                    targets.push(t);
                }
            }
            let cmd = kip::parse(c, params)?;
            if nx.in_group() {
                nx.exec_as(&cmd, c, &who, false, false)?;
            } else {
                // outside a group each command would commit: apply it
                // inside the savepoint through the group path instead
                return Err(KipError::internal(
                    "multi-command previews run inside a group",
                ));
            }
        }
        Ok((changes, targets))
    })();
    let _ = nx.db().release("somnus_item_preview", false);
    // an element an earlier command of the item creates (a new Skill a
    // later command links to) is not a target the memory must still hold
    let (changes, targets) = res?;
    let mut kept = Vec::with_capacity(targets.len());
    for t in targets {
        if nx.element_version(t.0)?.is_some() {
            kept.push(t);
        }
    }
    Ok((changes, kept))
}

/// Whether any target moved: a version changed, or an endpoint (version
/// -1) is gone.
fn moved(nx: &Nexus, targets: &[(i64, i64)]) -> KipResult<bool> {
    for (el, v) in targets {
        let now = nx.element_version(*el)?;
        let ok = if *v == -1 {
            now.is_some()
        } else {
            now == Some(*v)
        };
        if !ok {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether a draft with this key is already waiting, or was rejected and
/// nothing it would touch has changed since.
fn already_decided(nx: &Nexus, key: &str) -> KipResult<Option<String>> {
    let rows = nx
        .db()
        .query(
            "SELECT status, targets, proposal, seq FROM proposal_items WHERE key = ?1 AND status IN ('pending','stale','rejected') ORDER BY proposal DESC",
            crate::args![key],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.text(1)?, r.i64(2)?, r.i64(3)?)))
        .collect::<KipResult<Vec<(String, String, i64, i64)>>>()?;
    for (status, targets, p, s) in rows {
        // a stale item is proposed afresh against the memory as it is now
        // (the stale one is then marked replaced)
        if status == "stale" {
            continue;
        }
        if status != "rejected" {
            return Ok(Some(format!("already proposed (#{p} item {s})")));
        }
        let t: Vec<(i64, i64)> =
            serde_json::from_str::<Vec<(i64, i64)>>(&targets).unwrap_or_default();
        if !moved(nx, &t)? {
            return Ok(Some(format!(
                "rejected before (#{p} item {s}) and unchanged since"
            )));
        }
    }
    Ok(None)
}

/// What staging did with the drafts.
#[derive(Debug, Default, Clone)]
pub struct Staged {
    pub proposal: Option<i64>,
    pub items: usize,
    /// Drafts left out, with why.
    pub skipped: Vec<(String, String)>,
    /// Items applied at once because the operator's policy allows it.
    pub auto_applied: usize,
    /// The staged items by key: (proposal, item).
    pub keys: BTreeMap<String, (i64, i64)>,
}

/// Stages drafts as one proposal (run from a sleep phase, inside its
/// group). Drafts already waiting, rejected and unchanged, or whose
/// commands fail their preview are left out.
pub fn stage(
    nx: &mut Nexus,
    run: Option<i64>,
    actor: &str,
    title: &str,
    drafts: Vec<Draft>,
    into: Option<i64>,
) -> KipResult<Staged> {
    stage_until(nx, run, actor, title, drafts, into, None)
}

/// [`stage`], giving up with `KIP_4001` (and so, inside a group, staging
/// nothing) once `deadline` passes: a request's time limit covers its
/// previews.
pub fn stage_until(
    nx: &mut Nexus,
    run: Option<i64>,
    actor: &str,
    title: &str,
    drafts: Vec<Draft>,
    into: Option<i64>,
    deadline: Option<std::time::Instant>,
) -> KipResult<Staged> {
    let mut out = Staged::default();
    let mut keys = HashSet::new();
    let mut rows = Vec::new();
    for d in drafts {
        if !keys.insert(d.key.clone()) {
            continue;
        }
        if deadline.is_some_and(|t| std::time::Instant::now() > t) {
            return Err(KipError::new(
                ErrorCode::ExecutionTimeout,
                "staging ran past the request's time limit: nothing was staged",
            )
            .with_hint("Send fewer writes per request."));
        }
        if let Some(why) = already_decided(nx, &d.key)? {
            out.skipped.push((d.key, why));
            continue;
        }
        match preview_of(nx, &d.class, &d.commands, &d.params) {
            Ok((changes, targets)) if !changes.is_empty() => rows.push((d, changes, targets)),
            Ok(_) => out.skipped.push((d.key, "would change nothing".into())),
            Err(e) => out
                .skipped
                .push((d.key, format!("preview failed: {}: {}", e.code, e.message))),
        }
    }
    if rows.is_empty() {
        return Ok(out);
    }
    let db = nx.db();
    let id = match into {
        Some(id) => id,
        None => db
            .query_i64(
                "INSERT INTO proposals(run, created_at, actor, title, status) VALUES (?1, ?2, ?3, ?4, 'pending') RETURNING id",
                crate::args![run, store::now(), actor, title],
            )?
            .ok_or_else(|| KipError::internal("a new proposal has no id"))?,
    };
    let base = db
        .query_i64(
            "SELECT COALESCE(MAX(seq), 0) FROM proposal_items WHERE proposal = ?1",
            crate::args![id],
        )?
        .unwrap_or(0);
    let mut auto = Vec::new();
    for (seq, (d, changes, targets)) in rows.into_iter().enumerate() {
        let seq = base + seq as i64 + 1;
        out.keys.insert(d.key.clone(), (id, seq));
        // the same change proposed before and gone stale: this item, with
        // its preview of the memory as it is now, takes its place
        let replaced: Vec<i64> = nx
            .db()
            .query(
                "UPDATE proposal_items SET status = 'replaced', decided_at = ?2, decided_by = ?3 WHERE key = ?1 AND status = 'stale' RETURNING proposal",
                crate::args![&d.key, store::now(), format!("proposal #{id} item {seq}")],
            )?
            .iter()
            .map(|r| r.i64(0))
            .collect::<KipResult<_>>()?;
        for p in replaced {
            refresh_status(nx, p, None)?;
        }
        nx.db().execute(
            &format!("INSERT INTO proposal_items({ITEM_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'pending', NULL, NULL, NULL, NULL, NULL)"),
            crate::args![
                id, seq, &d.class, &d.key, &d.title,
                serde_json::to_string(&d.commands).unwrap_or_default(),
                Value::Object(d.params.clone()).to_string(),
                &d.rationale,
                serde_json::to_string(&d.evidence).unwrap_or_default(),
                d.confidence,
                Value::Array(changes).to_string(),
                serde_json::to_string(&targets).unwrap_or_default(),
            ],
        )?;
        if policy(nx, &d.class)? == "auto" {
            auto.push(seq);
        }
        out.items += 1;
    }
    out.proposal = Some(id);
    if !auto.is_empty() {
        // applied in the proposer's name: the policy lets it through, the
        // change is still the proposer's
        let who = Who {
            actor: actor.to_string(),
            trigger: "policy auto".into(),
            reason: Some("the operator's policy applies this class without review".into()),
        };
        out.auto_applied = apply_items(
            nx,
            id,
            &auto,
            &BTreeMap::new(),
            &who,
            "policy",
            Decider::Person,
        )?
        .applied
        .len();
        refresh_status(nx, id, None)?;
    }
    Ok(out)
}

/// What an approval did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Approval {
    pub applied: Vec<i64>,
    /// Items the memory moved under since they were shown: not applied,
    /// shown again with what they would do now (status `stale`).
    pub stale: Vec<i64>,
    /// What changed under each stale item ("Person: Ines Duarte was
    /// created by operator (proposal #1 item 1) at 2026-…").
    pub changed: BTreeMap<i64, Vec<String>>,
}

impl Approval {
    /// "item 2: Person: Ines Duarte was created by …; item 3: …".
    pub fn changed_text(&self) -> String {
        self.changed
            .iter()
            .map(|(seq, why)| format!("item {seq}: {}", why.join("; ")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Who decides: a person may reconsider an item (approve one rejected
/// earlier, or one whose approval was undone); an agent key decides
/// pending items only, so it never overrules a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decider {
    Person,
    Agent,
}

/// The highest element id the memory has now.
fn highest_id(nx: &Nexus) -> KipResult<i64> {
    Ok(nx
        .db()
        .query_i64(
            "SELECT MAX(m) FROM (SELECT MAX(id) AS m FROM concepts UNION ALL SELECT MAX(id) AS m FROM propositions) t",
            &[],
        )?
        .unwrap_or(0))
}

fn apply_items(
    nx: &mut Nexus,
    id: i64,
    seqs: &[i64],
    edits: &BTreeMap<i64, String>,
    who: &Who,
    decided_by: &str,
    decider: Decider,
) -> KipResult<Approval> {
    let all = items(nx, id)?;
    let existing = highest_id(nx)?;
    let mut out = Approval::default();
    let mut chosen = Vec::new();
    for s in seqs {
        let it = all
            .iter()
            .find(|i| i.seq == *s)
            .ok_or_else(|| KipError::not_found(format!("proposal #{id} has no item {s}")))?;
        if decider == Decider::Agent && !matches!(it.status.as_str(), "pending" | "stale") {
            return Err(KipError::new(
                ErrorCode::ImmutableTarget,
                format!(
                    "item {s} of proposal #{id} is {}: agent keys decide pending items only{}",
                    it.status,
                    match &it.decided_by {
                        Some(b) => format!(" (decided by `{b}`)"),
                        None => String::new(),
                    }
                ),
            )
            .with_hint(
                "Only a person reconsiders a decided item (the console, or `somnus proposals`).",
            ));
        }
        // pending, shown again after the memory moved (`stale`: its
        // preview is what it would do now), or decided and then
        // reconsidered: an item whose approval was undone, or one rejected
        // earlier
        if !matches!(
            it.status.as_str(),
            "pending" | "stale" | "rolled_back" | "rejected"
        ) {
            return Err(KipError::new(
                ErrorCode::VersionConflict,
                format!("item {s} of proposal #{id} is {}, not pending", it.status),
            )
            .with_hint(match it.status.as_str() {
                "replaced" => format!(
                    "A later cycle proposed it again against the memory as it is now: decide {} instead.",
                    it.decided_by.as_deref().unwrap_or("that item")
                ),
                _ => "It is applied already; undo it (somnus rollback) to decide it again."
                    .to_string(),
            }));
        }
        chosen.push(it.clone());
    }
    // what the operator saw is checked against the memory as it is now,
    // before anything applies: if any chosen item would now change
    // something its preview did not show (another approval, an agent's
    // write, an undo moved what it touches), nothing applies; those items
    // are shown again with what they would do now and what changed
    let policy = decided_by == "policy";
    let mut drifted = Vec::new();
    for it in &chosen {
        if let Some(why) = drift(nx, it, edits.contains_key(&it.seq), policy, existing)? {
            drifted.push((it.clone(), why));
        }
    }
    if !drifted.is_empty() {
        for (it, why) in drifted {
            show_again(nx, &it, &why)?;
            out.stale.push(it.seq);
            out.changed.insert(it.seq, why);
        }
        return Ok(out);
    }
    // each later item is checked again just before it applies: an earlier
    // item of the same approval may have moved what it was previewed on
    // (a merge removes the node a new link would hang on)
    // (unless what it would change is still exactly what was shown: the
    // same fields of the same elements from the same values to the same
    // values, when an earlier item only changed other fields of them)
    for (n, it) in chosen.into_iter().enumerate() {
        if n > 0
            && let Some(why) = drift(nx, &it, edits.contains_key(&it.seq), policy, existing)?
        {
            let still = !edits.contains_key(&it.seq)
                && preview_of(nx, &it.class, &it.commands, &it.params)
                    .is_ok_and(|(now, _)| same_change(&it.preview, &now));
            if !still {
                show_again(nx, &it, &why)?;
                out.stale.push(it.seq);
                out.changed.insert(it.seq, why);
                continue;
            }
        }
        let (cmds, edited) = match edits.get(&it.seq) {
            Some(text) => {
                let c = split_commands(text);
                if c.is_empty() {
                    return Err(KipError::new(
                        ErrorCode::InvalidSyntax,
                        format!("the edited item {} holds no command", it.seq),
                    ));
                }
                (c.clone(), Some(c))
            }
            None => (it.commands.clone(), None),
        };
        let parsed = parse_all(&cmds, &it.params).map_err(|mut e| {
            e.message = format!("item {}: {}", it.seq, e.message);
            e
        })?;
        let w = Who {
            actor: who.actor.clone(),
            trigger: format!("proposal #{id} item {}", it.seq),
            reason: Some(match &who.reason {
                Some(r) => format!("{} ({r})", it.rationale),
                None => it.rationale.clone(),
            }),
        };
        // an edited item's record is what was applied: its title, commands
        // and preview describe the edit, and what was proposed is kept
        // beside them
        let record = match &edited {
            Some(c) => Some(preview_edit(nx, &join_commands(c), &it.params)?),
            None => None,
        };
        // the cycle's own items are maintenance: they keep the origin of
        // what they update (an item the operator edited is the operator's)
        let was = nx.set_maintaining(CLASSES.contains(&it.class.as_str()) && edited.is_none());
        let ran = parsed.iter().zip(&cmds).try_for_each(|(cmd, text)| {
            nx.exec_as(cmd, text, &w, false, false)
                .map(|_| ())
                .map_err(|mut e| {
                    e.message = format!("item {} ({}): {}", it.seq, it.title, e.message);
                    e
                })
        });
        nx.set_maintaining(was);
        ran?;
        if let (Some((title, changes)), Some(c)) = (record, &edited) {
            let proposed = json!({
                "title": it.title, "commands": it.commands, "preview": it.preview,
            });
            nx.db().execute(
                "UPDATE proposal_items SET title = ?3, command = ?4, preview = ?5, proposed = ?6 WHERE proposal = ?1 AND seq = ?2",
                crate::args![
                    id,
                    it.seq,
                    title,
                    serde_json::to_string(c).unwrap_or_default(),
                    Value::Array(changes).to_string(),
                    proposed.to_string()
                ],
            )?;
        }
        // an approved merge or "same" answer teaches the matcher
        crate::review::labels::record(nx.db(), id, it.seq, &it.params, true, decided_by)?;
        nx.db().execute(
            "UPDATE proposal_items SET status = 'applied', decided_at = ?3, decided_by = ?4, edited_command = ?5 WHERE proposal = ?1 AND seq = ?2",
            crate::args![id, it.seq, store::now(), decided_by, edited.map(|e| serde_json::to_string(&e).unwrap_or_default())],
        )?;
        nx.db().execute(
            "UPDATE contradictions SET status = CASE WHEN resolution = 'needs_context' THEN 'needs_context' ELSE 'resolved' END, decided_at = ?3, decided_by = ?4 WHERE proposal = ?1 AND item = ?2",
            crate::args![id, it.seq, store::now(), decided_by],
        )?;
        out.applied.push(it.seq);
    }
    Ok(out)
}

pub(super) fn refresh_status(nx: &Nexus, id: i64, decided_by: Option<&str>) -> KipResult<String> {
    refresh_status_on(nx.db(), id, decided_by)
}

pub(super) fn refresh_status_on<'a>(
    db: impl Into<Db<'a>>,
    id: i64,
    decided_by: Option<&str>,
) -> KipResult<String> {
    let db = db.into();
    let r = db
        .query_opt(
            "SELECT COUNT(*), SUM(CASE WHEN status = 'applied' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'rejected' THEN 1 ELSE 0 END), \
             SUM(CASE WHEN status = 'rolled_back' THEN 1 ELSE 0 END), SUM(CASE WHEN status IN ('pending','stale') THEN 1 ELSE 0 END) \
             FROM proposal_items WHERE proposal = ?1",
            &[id.into()],
        )?
        .ok_or_else(|| KipError::internal("counting proposal items gave nothing"))?;
    let n = |i: usize| -> KipResult<i64> { Ok(r.opt_i64(i)?.unwrap_or(0)) };
    let (total, applied, rejected, rolled, open) = (n(0)?, n(1)?, n(2)?, n(3)?, n(4)?);
    let status = if rolled > 0 && applied == 0 && open == 0 {
        "rolled_back"
    } else if applied == total {
        "applied"
    } else if rejected == total {
        "rejected"
    } else if applied > 0 || rolled > 0 {
        "partially_applied"
    } else if open == 0 {
        "rejected"
    } else {
        "pending"
    };
    let done = open == 0;
    db.execute(
        "UPDATE proposals SET status = ?2, decided_at = CASE WHEN ?3 = 1 THEN ?4 ELSE decided_at END, decided_by = COALESCE(?5, decided_by) WHERE id = ?1",
        &[
            id.into(),
            status.into(),
            Val::Int(done.into()),
            store::now().into(),
            decided_by.into(),
        ],
    )?;
    Ok(status.to_string())
}

/// Names the elements a preview refers to by id (a link's `subject` and
/// `object`), beside the ids: `subject_label: "Person: Mira Chen"`, so a
/// reader sees whom a change is about. Elements gone since are "(missing)".
pub fn label_previews(nx: &Nexus, props: &mut [Proposal]) -> KipResult<()> {
    for p in props.iter_mut() {
        for it in p.items.iter_mut() {
            label_changes(nx, &mut it.preview)?;
        }
    }
    Ok(())
}

/// `label_previews` for one list of changes.
pub fn label_changes(nx: &Nexus, changes: &mut [Value]) -> KipResult<()> {
    // elements the change itself creates are named from their new image
    let mut made: std::collections::HashMap<i64, String> = std::collections::HashMap::new();
    for ch in changes.iter() {
        if let Some(a) = ch.get("after").and_then(Value::as_object)
            && let (Some(id), Some(ty), Some(name)) = (
                a.get("id").and_then(Value::as_i64),
                a.get("type").and_then(Value::as_str),
                a.get("name").and_then(Value::as_str),
            )
        {
            made.insert(id, format!("{ty}: {name}"));
        }
    }
    for ch in changes.iter_mut() {
        for image in ["before", "after"] {
            let Some(obj) = ch.get_mut(image).and_then(Value::as_object_mut) else {
                continue;
            };
            for k in ["subject", "object"] {
                if let Some(id) = obj.get(k).and_then(Value::as_i64) {
                    let (mut l, _) = crate::engine::overview::label(nx.db(), id)?;
                    if l == "(missing)"
                        && let Some(m) = made.get(&id)
                    {
                        l = format!("{m} (new)");
                    }
                    obj.insert(format!("{k}_label"), Value::String(l));
                }
            }
        }
    }
    Ok(())
}

/// What an operator's rewrite of an item would change, computed on the
/// memory as it is now and rolled back (labelled like `label_previews`),
/// with a title that says it: "edited: update C:12, delete P:40".
pub fn preview_edit(
    nx: &mut Nexus,
    text: &str,
    params: &Map<String, Value>,
) -> KipResult<(String, Vec<Value>)> {
    let cmds = split_commands(text);
    if cmds.is_empty() {
        return Err(KipError::new(
            ErrorCode::InvalidSyntax,
            "the edited item holds no command",
        ));
    }
    let (mut changes, _) = if cmds.len() == 1 || nx.in_group() {
        preview(nx, &cmds, params)?
    } else {
        // each command on top of the previous ones, all rolled back
        nx.atomically("preview", |nx| preview(nx, &cmds, params))?
    };
    label_changes(nx, &mut changes)?;
    let summary = summarize_changes(&changes);
    let title = if summary.is_empty() {
        "edited: changes nothing".to_string()
    } else {
        format!("edited: {summary}")
    };
    Ok((title, changes))
}

/// "insert Person: Ines Duarte, insert Person: Ines Duarte works_at
/// Organization: Acme Labs, 1 more": what a (labelled) preview does, for a
/// title.
pub fn summarize_changes(changes: &[Value]) -> String {
    let mut parts: Vec<String> = changes
        .iter()
        .take(3)
        .map(|c| {
            let img = c.get("after").filter(|v| !v.is_null()).or(c.get("before"));
            let what = match img {
                Some(i) if i.get("name").is_some() => format!(
                    "{}: {}",
                    i["type"].as_str().unwrap_or("?"),
                    i["name"].as_str().unwrap_or("?")
                ),
                Some(i) if i.get("predicate").is_some() => format!(
                    "{} {} {}",
                    i["subject_label"].as_str().unwrap_or("?"),
                    i["predicate"].as_str().unwrap_or("?"),
                    i["object_label"].as_str().unwrap_or("?")
                ),
                _ => c["element"].as_str().unwrap_or("?").to_string(),
            };
            format!("{} {what}", c["op"].as_str().unwrap_or("?"))
        })
        .collect();
    if changes.len() > 3 {
        parts.push(format!("{} more", changes.len() - 3));
    }
    parts.join(", ")
}

/// Runs one KIP command as `who` inside the caller's group.
fn kip_as(
    nx: &mut Nexus,
    text: &str,
    params: Value,
    who: &Who,
    readonly: bool,
) -> KipResult<Value> {
    let p = params.as_object().cloned().unwrap_or_default();
    let cmd = kip::parse(text, &p)?;
    Ok(nx.exec_as(&cmd, text, who, readonly, false)?.0)
}

/// How long a SleepTask settled by a decision is kept (the sleep cycle's
/// `task_ttl_days` default).
pub const SETTLED_TASK_TTL_DAYS: i64 = 14;

/// SleepTasks waiting on items of proposal `id` (`in_progress`, with
/// `awaiting_proposal` and `awaiting_items`): once every item a task waits
/// on is decided, the task completes with what became of them. Returns how
/// many completed.
pub fn settle_tasks(nx: &mut Nexus, id: i64, who: &Who) -> KipResult<usize> {
    let tasks = kip_as(
        nx,
        r#"FIND(?t) WHERE { ?t {type: "SleepTask"} FILTER(?t.attributes.status == "in_progress" && ?t.attributes.awaiting_proposal == :p) } LIMIT 1000"#,
        json!({"p": id}),
        who,
        true,
    )?;
    let mut done = 0;
    for t in tasks.as_array().cloned().unwrap_or_default() {
        let seqs: Vec<i64> = t["attributes"]["awaiting_items"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        let mut parts = Vec::new();
        let mut open = false;
        for seq in &seqs {
            let row: Option<(String, Option<String>)> = match nx.db().query_opt(
                "SELECT status, reason FROM proposal_items WHERE proposal = ?1 AND seq = ?2",
                crate::args![id, *seq],
            )? {
                Some(r) => Some((r.text(0)?, r.opt_text(1)?)),
                None => None,
            };
            match row {
                // still to be decided (an undone approval is decided again)
                Some((st, _)) if matches!(st.as_str(), "pending" | "stale" | "rolled_back") => {
                    open = true
                }
                Some((st, Some(reason))) if st == "rejected" => {
                    parts.push(format!("item {seq} rejected ({reason})"))
                }
                Some((st, _)) => parts.push(format!("item {seq} {st}")),
                None => parts.push(format!("item {seq} gone")),
            }
        }
        if open {
            continue;
        }
        let now = store::now();
        let exp = chrono::DateTime::parse_from_rfc3339(&now)
            .map(|t| {
                (t + chrono::Duration::days(SETTLED_TASK_TTL_DAYS))
                    .to_utc()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            })
            .unwrap_or_else(|_| now.clone());
        kip_as(
            nx,
            r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :n} SET ATTRIBUTES { status: "completed", completed_at: :ts, result: :r } } WITH METADATA { expires_at: :exp } }"#,
            json!({"n": t["name"], "ts": now, "exp": exp, "r": format!("proposal #{id}: {}", parts.join("; "))}),
            who,
            false,
        )?;
        done += 1;
    }
    Ok(done)
}

/// Names the open group after this decision: `proposal:ID/N`, the Nth
/// decision on the proposal that changed something, so that each approval
/// (or rejection) is one group the audit trail can undo alone. Counted
/// inside the group's transaction, so two processes never share a number.
fn decision_group(nx: &Nexus, id: i64) -> KipResult<String> {
    let sql = match nx.backend() {
        Backend::Sqlite => {
            "SELECT COUNT(DISTINCT batch) FROM audit_log WHERE batch > ?1 || '/' AND batch < ?1 || '0'"
        }
        // (the database's collation need not order by code point)
        Backend::Postgres => {
            "SELECT COUNT(DISTINCT batch) FROM audit_log WHERE starts_with(batch, ?1 || '/')"
        }
    };
    let done = nx
        .db()
        .query_i64(sql, crate::args![format!("proposal:{id}")])?
        .unwrap_or(0);
    let name = format!("proposal:{id}/{}", done + 1);
    nx.audit_ctx().set_batch(Some(name.clone()));
    Ok(name)
}

/// The audit groups of a proposal's decisions: `proposal:ID` (decisions
/// made before each had its own group) and every `proposal:ID/N`.
pub fn decision_batches_sql(backend: Backend) -> &'static str {
    match backend {
        // a range the batch index serves: `/` sorts just before `0`
        Backend::Sqlite => "(batch = ?1 OR (batch > ?1 || '/' AND batch < ?1 || '0'))",
        // PostgreSQL compares text by the database's collation, which need
        // not be code point order: a prefix test instead
        Backend::Postgres => "(batch = ?1 OR starts_with(batch, ?1 || '/'))",
    }
}

/// Approves items of a proposal (all pending ones when `seqs` is None),
/// with optional edited command text per item. Applies them in one
/// transaction, audited as `who`; any failing command undoes the whole
/// approval. Items whose targets changed since are marked stale instead.
pub fn approve(
    nx: &mut Nexus,
    id: i64,
    seqs: Option<&[i64]>,
    edits: &BTreeMap<i64, String>,
    who: &Who,
) -> KipResult<Approval> {
    approve_as(nx, id, seqs, edits, who, Decider::Person)
}

/// How long a `batch` proposal keeps gathering a sub-agent's writes.
pub const BATCH_PERIOD_SECS: i64 = 3600;

/// Whether a proposal may still take new items: a sub-agent's `batch`
/// proposal, within its period, with nothing in it decided yet.
pub fn gathering(nx: &Nexus, p: &Proposal) -> KipResult<bool> {
    if p.run.is_some() || p.items.iter().any(|i| i.status != "pending") {
        return Ok(false);
    }
    if policy(nx, &format!("subagent:{}", p.actor))? != "batch" {
        return Ok(false);
    }
    let since = (chrono::Utc::now() - chrono::Duration::seconds(BATCH_PERIOD_SECS))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(p.created_at >= since)
}

/// [`approve`] by a person or an agent key (`decider`).
pub fn approve_as(
    nx: &mut Nexus,
    id: i64,
    seqs: Option<&[i64]>,
    edits: &BTreeMap<i64, String>,
    who: &Who,
    decider: Decider,
) -> KipResult<Approval> {
    let p = get(nx, id)?
        .ok_or_else(|| KipError::not_found(format!("proposal #{id} does not exist")))?;
    // "all of it" of a proposal still gathering writes could take items
    // that arrived after the reviewer looked: the items must be named
    if seqs.is_none() && gathering(nx, &p)? {
        let seqs: Vec<String> = p.items.iter().map(|i| i.seq.to_string()).collect();
        return Err(KipError::new(
            ErrorCode::VersionConflict,
            format!(
                "proposal #{id} is still gathering `{}`'s writes (it holds items {} now): name the items you reviewed",
                p.actor,
                seqs.join(", ")
            ),
        )
        .with_hint(format!(
            "somnus proposals approve {id} --items {} (HTTP: \"items\": [{}])",
            seqs.join(","),
            seqs.join(", ")
        )));
    }
    let chosen: Vec<i64> = match seqs {
        Some(s) => s.to_vec(),
        // what waits for a decision: pending items, and stale ones (shown
        // again with what they would do now)
        None => p
            .items
            .iter()
            .filter(|i| matches!(i.status.as_str(), "pending" | "stale"))
            .map(|i| i.seq)
            .collect(),
    };
    if chosen.is_empty() {
        return Err(KipError::new(
            ErrorCode::VersionConflict,
            format!("proposal #{id} has no pending item to approve"),
        ));
    }
    for k in edits.keys() {
        if !chosen.contains(k) {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!("item {k} is edited but not chosen for approval"),
            ));
        }
    }
    let actor = who.actor.clone();
    nx.atomically(&format!("proposal:{id}"), |nx| {
        decision_group(nx, id)?;
        let out = apply_items(nx, id, &chosen, edits, who, &actor, decider)?;
        refresh_status(nx, id, Some(&actor))?;
        settle_tasks(nx, id, who)?;
        Ok(out)
    })
}

/// Rejects items (all undecided ones when `seqs` is None) with a reason,
/// which is kept: the same idea is not proposed again unless what it
/// touches changes. The graph is not touched.
pub fn reject(
    nx: &mut Nexus,
    id: i64,
    seqs: Option<&[i64]>,
    reason: &str,
    by: &str,
) -> KipResult<usize> {
    reject_as(nx, id, seqs, reason, by, Decider::Person)
}

/// [`reject`] by a person or an agent key (`decider`: an agent rejects
/// pending items only).
pub fn reject_as(
    nx: &mut Nexus,
    id: i64,
    seqs: Option<&[i64]>,
    reason: &str,
    by: &str,
    decider: Decider,
) -> KipResult<usize> {
    if reason.trim().is_empty() {
        return Err(KipError::new(
            ErrorCode::InvalidSyntax,
            "a rejection needs a reason",
        ));
    }
    let p = get(nx, id)?
        .ok_or_else(|| KipError::not_found(format!("proposal #{id} does not exist")))?;
    let chosen: Vec<i64> = match seqs {
        Some(s) => {
            for x in s {
                match p.items.iter().find(|i| i.seq == *x) {
                    Some(i) if decider == Decider::Agent && i.status != "pending" => {
                        return Err(KipError::new(
                            ErrorCode::ImmutableTarget,
                            format!(
                                "item {x} of proposal #{id} is {}: agent keys decide pending items only",
                                i.status
                            ),
                        ));
                    }
                    Some(i) if matches!(i.status.as_str(), "pending" | "stale" | "rolled_back") => {
                    }
                    Some(i) => {
                        return Err(KipError::new(
                            ErrorCode::VersionConflict,
                            format!("item {x} of proposal #{id} is {}", i.status),
                        ));
                    }
                    None => {
                        return Err(KipError::not_found(format!(
                            "proposal #{id} has no item {x}"
                        )));
                    }
                }
            }
            s.to_vec()
        }
        None => p
            .items
            .iter()
            .filter(|i| match decider {
                Decider::Agent => i.status == "pending",
                Decider::Person => matches!(i.status.as_str(), "pending" | "stale"),
            })
            .map(|i| i.seq)
            .collect(),
    };
    nx.atomically(&format!("proposal:{id}"), |nx| {
        decision_group(nx, id)?;
        for s in &chosen {
            nx.db().execute(
                "UPDATE proposal_items SET status = 'rejected', decided_at = ?3, decided_by = ?4, reason = ?5 WHERE proposal = ?1 AND seq = ?2",
                crate::args![id, *s, store::now(), by, reason],
            )?;
            // a rejected merge or a "different" answer teaches the matcher
            if let Some(it) = p.items.iter().find(|i| i.seq == *s) {
                crate::review::labels::record(nx.db(), id, *s, &it.params, false, by)?;
            }
            nx.db().execute(
                "UPDATE contradictions SET status = 'dismissed', resolution = 'rejected', decided_at = ?3, decided_by = ?4 WHERE proposal = ?1 AND item = ?2 AND status = 'open'",
                crate::args![id, *s, store::now(), by],
            )?;
        }
        if seqs.is_none() {
            nx.db().execute(
                "UPDATE proposals SET reason = ?2 WHERE id = ?1",
                crate::args![id, reason],
            )?;
        }
        refresh_status(nx, id, Some(by))?;
        let who = Who {
            actor: by.to_string(),
            trigger: "proposal rejection".into(),
            reason: Some(reason.to_string()),
        };
        settle_tasks(nx, id, &who)?;
        Ok(chosen.len())
    })
}

/// Re-checks stale items against the memory as it is now: a new preview
/// and target versions, back to pending (or rejected if they would no
/// longer change anything or no longer run).
pub fn refresh(nx: &mut Nexus, id: i64, by: &str) -> KipResult<(usize, usize)> {
    let _ = by;
    if get(nx, id)?.is_none() {
        return Err(KipError::not_found(format!(
            "proposal #{id} does not exist"
        )));
    }
    nx.atomically(&format!("proposal:{id}"), |nx| {
        refresh_in_group(nx, id, false, &mut |_, _| {})
    })
}

/// `refresh` inside an open group; `pending_too` re-previews pending items
/// as well (the end of a sleep run).
pub fn refresh_in_group(
    nx: &mut Nexus,
    id: i64,
    pending_too: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> KipResult<(usize, usize)> {
    let by = "$system";
    {
        let stale: Vec<Item> = items(nx, id)?
            .into_iter()
            .filter(|i| i.status == "stale" || (pending_too && i.status == "pending"))
            .collect();
        let (mut back, mut dropped) = (0, 0);
        let total = stale.len();
        for (n, it) in stale.into_iter().enumerate() {
            progress(n, total);
            match preview_of(nx, &it.class, &it.commands, &it.params) {
                Ok((changes, targets)) if !changes.is_empty() => {
                    let moved = same_shape(&changes) != same_shape(&it.preview);
                    nx.db().execute(
                        "UPDATE proposal_items SET status = 'pending', preview = ?3, targets = ?4, reason = NULL WHERE proposal = ?1 AND seq = ?2",
                        crate::args![id, it.seq, Value::Array(changes).to_string(), serde_json::to_string(&targets).unwrap_or_default()],
                    )?;
                    if moved {
                        retitle_and_mark(nx, &it)?;
                    }
                    back += 1;
                }
                other => {
                    let why = match other {
                        Err(e) => format!("no longer runs: {}", e.message),
                        _ => "would no longer change anything".into(),
                    };
                    nx.db().execute(
                        "UPDATE proposal_items SET status = 'rejected', decided_at = ?3, decided_by = ?4, reason = ?5 WHERE proposal = ?1 AND seq = ?2",
                        crate::args![id, it.seq, store::now(), by, why],
                    )?;
                    dropped += 1;
                }
            }
        }
        refresh_status(nx, id, None)?;
        Ok((back, dropped))
    }
}
