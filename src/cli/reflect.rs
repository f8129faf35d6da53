//! The sleep cycle on the command line: `sleep`, `runs`, `proposals`,
//! `contradictions`, `why`.

use super::{ContradictionsCmd, ProposalsCmd};
use crate::Nexus;
use crate::audit::Who;
use crate::review::proposals;
use crate::sleep::{self, contradictions};
use color_eyre::eyre::{Result, eyre};
use serde_json::Value;
use std::collections::BTreeMap;

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn fail(e: crate::kip::KipError) -> Result<i32> {
    crate::say_err!("{}: {}", e.code, e.message);
    if let Some(h) = e.hint {
        crate::say_err!("{h}");
    }
    Ok(1)
}

/// The reasoner named on the command line.
pub fn reasoner(name: &str) -> Result<Box<dyn sleep::Reasoner>> {
    match name {
        "heuristic" => Ok(Box::new(sleep::Heuristic)),
        "llm" => {
            let cfg = sleep::llm::LlmConfig::from_env().ok_or_else(|| {
                eyre!("the llm reasoner needs SOMNUS_LLM_URL and SOMNUS_LLM_MODEL (an OpenAI-compatible /v1/chat/completions endpoint)")
            })?;
            Ok(Box::new(sleep::llm::Llm::new(cfg)))
        }
        other => Err(eyre!("unknown reasoner `{other}` (heuristic or llm)")),
    }
}

/// `somnus sleep --save-params` / `--reset-params`: the memory's own sleep
/// parameters, saved as `by`.
pub fn save_params(nx: &mut Nexus, params: Option<String>, reset: bool, by: &str) -> Result<i32> {
    if reset && params.is_some() {
        return Err(eyre!("--reset-params takes no --params"));
    }
    let over: Option<Value> = match params {
        Some(text) => {
            Some(serde_json::from_str(&text).map_err(|e| eyre!("--params is not JSON: {e}"))?)
        }
        None => None,
    };
    let who = Who {
        actor: by.to_string(),
        trigger: if reset {
            "somnus sleep --reset-params".into()
        } else {
            "somnus sleep --save-params".into()
        },
        reason: None,
    };
    match sleep::params::update(nx, reset, over.as_ref(), &who) {
        Ok(values) if values.is_empty() => {
            crate::say!("no sleep parameters saved: every cycle uses the defaults");
            Ok(0)
        }
        Ok(values) => {
            crate::say!("saved sleep parameters (every cycle uses them, scheduled ones too):");
            for (k, v) in values {
                crate::say!("  {k} = {v}");
            }
            Ok(0)
        }
        Err(e) => fail(e),
    }
}

#[allow(clippy::too_many_arguments)]
pub fn sleep(
    nx: &mut Nexus,
    scope: &str,
    reasoner_name: &str,
    trigger: &str,
    at: Option<String>,
    params: Option<String>,
    json_out: bool,
    quiet: bool,
) -> Result<i32> {
    let scope = sleep::Scope::parse(scope)
        .ok_or_else(|| eyre!("unknown scope `{scope}` (daydream, quick or full)"))?;
    if !matches!(
        trigger,
        "scheduled" | "threshold" | "on_demand" | "post_session"
    ) {
        return Err(eyre!(
            "unknown trigger `{trigger}` (scheduled, threshold, on_demand or post_session)"
        ));
    }
    // the memory's saved parameters, with --params over them
    let mut opts = sleep::Options::saved(nx, scope, &at.unwrap_or_else(now))
        .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
    for n in &opts.notes {
        crate::say_err!("{n}");
    }
    opts.trigger = trigger.to_string();
    if let Some(p) = params {
        let over: Value =
            serde_json::from_str(&p).map_err(|e| eyre!("--params is not JSON: {e}"))?;
        opts.params = opts
            .params
            .with_json(&over)
            .map_err(|e| eyre!("--params: {e}"))?;
    }
    let mut r = reasoner(reasoner_name)?;
    let (tx, rx) = std::sync::mpsc::channel::<sleep::Progress>();
    let printer = std::thread::spawn(move || {
        for p in rx {
            if quiet {
                continue;
            }
            if let Some(l) = &p.log {
                crate::say_err!(
                    "[{:>6} ms] phase {:>2} {}: {l}",
                    p.elapsed_ms,
                    p.phase,
                    p.name
                );
            }
        }
    });
    let res = sleep::run(nx, &opts, r.as_mut(), Some(tx), None);
    let _ = printer.join();
    let report = match res {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if json_out {
        crate::say_json!(&report.to_json())?;
    } else {
        print!("{}", crate::text::printable(&report.markdown()));
    }
    Ok(if report.status == "completed" { 0 } else { 1 })
}

pub fn runs(nx: &Nexus, run: Option<i64>, json_out: bool) -> Result<i32> {
    match run {
        Some(id) => {
            let r = sleep::cycle::report(nx, id)
                .map_err(|e| eyre!(e.message))?
                .ok_or_else(|| {
                    eyre!("sleep run #{id} does not exist (`somnus runs` lists them)")
                })?;
            if json_out {
                crate::say_json!(&r.to_json())?;
            } else {
                print!("{}", crate::text::printable(&r.markdown()));
            }
        }
        None => {
            let rows = sleep::cycle::runs(nx, 50).map_err(|e| eyre!(e.message))?;
            if json_out {
                crate::say_json!(&rows)?;
            } else {
                crate::say!(
                    "{:>5}  {:<24}  {:<9}  {:<9}  {:<11}  phase",
                    "run",
                    "started",
                    "scope",
                    "reasoner",
                    "status"
                );
                for r in rows {
                    crate::say!(
                        "{:>5}  {:<24}  {:<9}  {:<9}  {:<11}  {:>5}  {}",
                        r.run,
                        r.started_at,
                        r.scope,
                        r.reasoner,
                        r.status,
                        r.phase,
                        r.error.unwrap_or_default()
                    );
                }
            }
        }
    }
    Ok(0)
}

/// Each pending item's recall impact (the reads whose answer it changes),
/// by item number.
fn impacts(
    nx: &mut Nexus,
    p: &proposals::Proposal,
) -> crate::kip::KipResult<(usize, BTreeMap<i64, Vec<crate::review::impact::Changed>>)> {
    let recent = crate::review::impact::recent_reads(nx, &now())?;
    let mut out = BTreeMap::new();
    for i in p.items.iter().filter(|i| i.status == "pending") {
        out.insert(i.seq, crate::review::impact::impact(nx, i, &recent)?);
    }
    Ok((recent.len(), out))
}

fn print_proposal(
    p: &proposals::Proposal,
    impact: &(usize, BTreeMap<i64, Vec<crate::review::impact::Changed>>),
) {
    crate::say!(
        "proposal #{}  {}  ({}; run {}; {} items: {} pending, {} applied, {} rejected, {} stale)",
        p.id,
        p.title,
        p.status,
        p.run.map(|r| format!("#{r}")).unwrap_or_else(|| "-".into()),
        p.items.len(),
        p.count("pending"),
        p.count("applied"),
        p.count("rejected"),
        p.count("stale")
    );
    for i in &p.items {
        crate::say!(
            "\n  [{}] {:<8} {:<13} {}  (confidence {:.2})",
            i.seq,
            i.status,
            i.class,
            i.title,
            i.confidence
        );
        crate::say!("      why: {}", i.rationale);
        if let Some(changed) = impact.1.get(&i.seq) {
            match crate::review::impact::summary(changed, impact.0) {
                Some(s) => {
                    crate::say!("      recall: {s}");
                    for c in changed.iter().take(5) {
                        crate::say!(
                            "        {} {}: {}",
                            c.at,
                            c.caller,
                            crate::text::one_line(&c.command)
                        );
                    }
                }
                None if impact.0 > 0 => crate::say!(
                    "      recall: changes none of the {} recent reads weighed",
                    impact.0
                ),
                None => {}
            }
        }
        if let Some(was) = &i.proposed {
            crate::say!(
                "      proposed as: {} (edited before approval; `--json` keeps its commands and preview)",
                was["title"].as_str().unwrap_or("?")
            );
        }
        for c in &i.conflicts {
            crate::say!("      {c}");
        }
        if !i.evidence.is_empty() {
            crate::say!("      evidence: {}", i.evidence.join(", "));
        }
        for c in i.edited.as_ref().unwrap_or(&i.commands) {
            for l in c.lines() {
                crate::say!("      | {l}");
            }
        }
        for ch in &i.preview {
            let el = ch.get("element").and_then(Value::as_str).unwrap_or("?");
            let op = ch.get("op").and_then(Value::as_str).unwrap_or("?");
            crate::say!("      {op} {el}");
            if let Some(b) = ch.get("before").filter(|b| !b.is_null()) {
                crate::say!("        - {}", compact(b));
            }
            if let Some(a) = ch.get("after").filter(|a| !a.is_null()) {
                crate::say!("        + {}", compact(a));
            }
        }
        match &i.reason {
            Some(r) if i.status == "stale" => {
                crate::say!("      ⚠ {r}: the preview above is what it does now")
            }
            Some(r) => crate::say!(
                "      decided by {}: {r}",
                i.decided_by.as_deref().unwrap_or("?")
            ),
            None => {}
        }
    }
}

fn compact(v: &Value) -> String {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("updated_at");
    }
    let s = v.to_string();
    if s.chars().count() > 220 {
        s.chars().take(219).collect::<String>() + "…"
    } else {
        s
    }
}

pub fn proposals(nx: &mut Nexus, what: ProposalsCmd) -> Result<i32> {
    match what {
        ProposalsCmd::List {
            status,
            source,
            json,
        } => {
            let ps = match proposals::list(nx, status.as_deref(), 100) {
                Ok(p) => p,
                Err(e) => return fail(e),
            };
            let ps: Vec<_> = ps
                .into_iter()
                .filter(|p| match source.as_deref() {
                    None => true,
                    Some("sleep") => p.run.is_some(),
                    Some(s) if s.starts_with("sleep:") => {
                        p.run.map(|r| format!("sleep:{r}")).as_deref() == Some(s)
                    }
                    Some(s) => p.run.is_none() && p.actor == s,
                })
                .collect();
            if json {
                crate::say_json!(&ps.iter().map(|p| p.to_json()).collect::<Vec<_>>())?;
            } else {
                crate::say!(
                    "{:>5}  {:<14}  {:<18}  {:>5}  {:>7}  {:>7}  title",
                    "id",
                    "source",
                    "status",
                    "items",
                    "pending",
                    "applied"
                );
                for p in ps {
                    let source = match p.run {
                        Some(r) => format!("sleep run #{r}"),
                        None => p.actor.clone(),
                    };
                    crate::say!(
                        "{:>5}  {:<14}  {:<18}  {:>5}  {:>7}  {:>7}  {}",
                        p.id,
                        source,
                        p.status,
                        p.items.len(),
                        p.count("pending"),
                        p.count("applied"),
                        p.title
                    );
                }
            }
            Ok(0)
        }
        ProposalsCmd::Show { id, json } => match proposals::get(nx, id) {
            Ok(Some(p)) => {
                let impact = match impacts(nx, &p) {
                    Ok(i) => i,
                    Err(e) => return fail(e),
                };
                if json {
                    let mut v = p.to_json();
                    if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
                        for it in items {
                            let seq = it["item"].as_i64().unwrap_or(0);
                            if let Some(changed) = impact.1.get(&seq) {
                                it["impact"] = serde_json::json!({
                                    "weighed": impact.0,
                                    "days": crate::review::impact::IMPACT_DAYS,
                                    "changed": changed.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
                                });
                            }
                        }
                    }
                    crate::say_json!(&v)?;
                } else {
                    print_proposal(&p, &impact);
                }
                Ok(0)
            }
            Ok(None) => Err(eyre!(
                "proposal #{id} does not exist (`somnus proposals list` shows them)"
            )),
            Err(e) => fail(e),
        },
        ProposalsCmd::Approve {
            id,
            items,
            class,
            edit,
            by,
        } => {
            let items = match of_class(nx, id, items, class.as_deref(), &["pending"]) {
                Ok(i) => i,
                Err(e) => return fail(e),
            };
            let mut edits = BTreeMap::new();
            for e in edit {
                let (n, file) = e
                    .split_once('=')
                    .ok_or_else(|| eyre!("--edit takes ITEM=FILE (the item's new commands)"))?;
                let n: i64 = n
                    .parse()
                    .map_err(|_| eyre!("--edit: `{n}` is not an item number"))?;
                let text = std::fs::read_to_string(file)
                    .map_err(|err| eyre!("cannot read {file}: {err}"))?;
                edits.insert(n, text);
            }
            let who = Who {
                actor: by,
                trigger: "somnus proposals approve".into(),
                reason: None,
            };
            match proposals::approve(nx, id, items.as_deref(), &edits, &who) {
                Ok(a) if a.stale.is_empty() => {
                    crate::say!(
                        "applied {} item{} of proposal #{id}",
                        a.applied.len(),
                        if a.applied.len() == 1 { "" } else { "s" },
                    );
                    Ok(0)
                }
                Ok(a) => {
                    // what the operator saw is not what would apply now
                    if !a.applied.is_empty() {
                        crate::say!(
                            "applied {} item{} of proposal #{id}: {:?}",
                            a.applied.len(),
                            if a.applied.len() == 1 { "" } else { "s" },
                            a.applied
                        );
                    }
                    crate::say_err!(
                        "{}: not applied, the memory changed since {} {} {} shown: {}",
                        crate::kip::ErrorCode::VersionConflict,
                        if a.stale.len() == 1 { "item" } else { "items" },
                        a.stale
                            .iter()
                            .map(i64::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                        if a.stale.len() == 1 { "was" } else { "were" },
                        a.changed_text()
                    );
                    crate::say_err!(
                        "Their previews now show what they would do (`somnus proposals show {id}`): approve again to apply that."
                    );
                    Ok(1)
                }
                Err(e) => fail(e),
            }
        }
        ProposalsCmd::Reject {
            id,
            reason,
            items,
            class,
            by,
        } => match of_class(nx, id, items, class.as_deref(), &["pending", "stale"])
            .and_then(|items| proposals::reject(nx, id, items.as_deref(), &reason, &by))
        {
            Ok(n) => {
                crate::say!(
                    "rejected {n} item{} of proposal #{id}; the graph is unchanged",
                    if n == 1 { "" } else { "s" }
                );
                Ok(0)
            }
            Err(e) => fail(e),
        },
        ProposalsCmd::Refresh { id } => match proposals::refresh(nx, id, "operator") {
            Ok((back, dropped)) => {
                crate::say!("{back} stale items back to pending, {dropped} dropped");
                Ok(0)
            }
            Err(e) => fail(e),
        },
        ProposalsCmd::Rollback { id, reason } => {
            let who = Who {
                actor: "operator".into(),
                trigger: "somnus proposals rollback".into(),
                reason,
            };
            match crate::review::undo::proposal(nx, id, &who) {
                Ok(ids) => {
                    crate::say!(
                        "rolled back the approval of proposal #{id}: {} entries undone",
                        ids.len()
                    );
                    Ok(0)
                }
                Err(e) => fail(e),
            }
        }
        ProposalsCmd::Policy { class, mode } => match (class, mode) {
            (Some(c), Some(m)) => match proposals::set_policy(nx, &c, &m, "operator") {
                Ok(()) => {
                    crate::say!("{c}: {m}");
                    Ok(0)
                }
                Err(e) => fail(e),
            },
            (Some(c), None) => {
                crate::say!(
                    "{c}: {}",
                    proposals::policy(nx, &c).map_err(|e| eyre!(e.message))?
                );
                Ok(0)
            }
            _ => {
                let p = proposals::policies(nx).map_err(|e| eyre!(e.message))?;
                if p.is_empty() {
                    crate::say!("every class is reviewed (no policy set)");
                }
                for (c, m, at, by) in p {
                    crate::say!("{c:<14} {m:<7} set {at} by {by}");
                }
                Ok(0)
            }
        },
    }
}

pub fn contradictions(nx: &mut Nexus, what: ContradictionsCmd) -> Result<i32> {
    match what {
        ContradictionsCmd::List { status, json } => {
            let cs = contradictions::list(nx, status.as_deref()).map_err(|e| eyre!(e.message))?;
            if json {
                crate::say_json!(&cs.iter().map(|c| c.to_json()).collect::<Vec<_>>())?;
            } else {
                for c in cs {
                    let f = &c.conflict;
                    crate::say!(
                        "#{} {} {} {} [{}]: \"{}\" ({}) vs \"{}\" ({}) — proposal #{} item {}{}",
                        c.id,
                        c.status,
                        f.subject,
                        f.predicate,
                        f.slot,
                        f.a.object,
                        f.a.observed_at.as_deref().unwrap_or("?"),
                        f.b.object,
                        f.b.observed_at.as_deref().unwrap_or("?"),
                        c.proposal.unwrap_or(0),
                        c.item.unwrap_or(0),
                        c.resolution
                            .as_ref()
                            .map(|r| format!(" → {r}"))
                            .unwrap_or_default()
                    );
                }
            }
            Ok(0)
        }
        ContradictionsCmd::Resolve {
            id,
            verdict,
            note,
            by,
        } => {
            let v = sleep::reasoner::Verdict::parse(&verdict).ok_or_else(|| {
                eyre!("unknown verdict `{verdict}` (keep-newer, keep-older, both-valid, merge, needs-context)")
            })?;
            let who = Who {
                actor: by,
                trigger: "somnus contradictions resolve".into(),
                reason: note.clone(),
            };
            match contradictions::resolve(nx, id, v, note.as_deref(), &who) {
                Ok((p, i)) => {
                    crate::say!(
                        "contradiction #{id} resolved ({}) through proposal #{p} item {i}",
                        v.as_str()
                    );
                    Ok(0)
                }
                Err(e) => fail(e),
            }
        }
    }
}

/// `somnus why A --with B`: why two concepts are or are not one.
pub fn why_pair(nx: &mut Nexus, a: &str, b: &str, json_out: bool) -> Result<i32> {
    let v = match sleep::cycle::why_not_merged(nx, a, b) {
        Ok(v) => v,
        Err(e) => {
            crate::say!("{}: {}", e.code.code(), e.message);
            return Ok(1);
        }
    };
    if json_out {
        crate::say_json!(&v)?;
        return Ok(0);
    }
    for l in sleep::explain_text::pair_lines(a, b, &v) {
        crate::say!("{l}");
    }
    Ok(0)
}

pub fn why(nx: &Nexus, element: &str, json_out: bool) -> Result<i32> {
    let Some((id, label)) = sleep::explain::resolve(nx, element).map_err(|e| eyre!(e.message))?
    else {
        crate::say!("{element}: no such element, and nothing recorded about it");
        return Ok(1);
    };
    let v = sleep::explain::explain(nx, id, &now()).map_err(|e| eyre!(e.message))?;
    if json_out {
        crate::say_json!(&v)?;
        return Ok(0);
    }
    for l in sleep::explain_text::element_lines(&label, &v) {
        crate::say!("{l}");
    }
    Ok(0)
}

/// The items `--class` names: those of the proposal in that class and in
/// one of `statuses` (`--items` as given when no class is). A class the
/// proposal has no such item of is an error naming the classes it has.
fn of_class(
    nx: &Nexus,
    id: i64,
    items: Option<Vec<i64>>,
    class: Option<&str>,
    statuses: &[&str],
) -> Result<Option<Vec<i64>>, crate::kip::KipError> {
    let Some(class) = class else {
        return Ok(items);
    };
    let all = proposals::items(nx, id)?;
    let chosen: Vec<i64> = all
        .iter()
        .filter(|i| i.class == class && statuses.contains(&i.status.as_str()))
        .map(|i| i.seq)
        .collect();
    if chosen.is_empty() {
        let mut classes: Vec<&str> = all
            .iter()
            .filter(|i| statuses.contains(&i.status.as_str()))
            .map(|i| i.class.as_str())
            .collect();
        classes.sort_unstable();
        classes.dedup();
        return Err(crate::kip::KipError::new(
            crate::kip::ErrorCode::NotFound,
            format!(
                "proposal #{id} has no {} item of class `{class}`; its {} items are of: {}",
                statuses.join(" or "),
                statuses.join(" or "),
                if classes.is_empty() {
                    "none".to_string()
                } else {
                    classes.join(", ")
                }
            ),
        ));
    }
    Ok(Some(chosen))
}
