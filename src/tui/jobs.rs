//! The console's jobs: engine work run off the UI thread (queries, loads,
//! sleep cycles, decisions, undo, explanations), each answering with a
//! `JobOutput`.

use super::component::Decision;
use super::component::{Job, JobOutput, WhyText};
use crate::Nexus;
use crate::protocol::{Arguments, Method, Request};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Concepts the fuzzy finder loads.
pub const INDEX_LIMIT: usize = 100_000;

impl Job {
    /// Runs the job against the engine (on a worker thread).
    pub fn run(self, nx: &mut Nexus) -> JobOutput {
        match self {
            Job::Query {
                text,
                params,
                dry_run,
                page,
            } => {
                let started = Instant::now();
                let command = match &page {
                    Some(c) => format!("{text}\nCURSOR {}", Value::String(c.clone())),
                    None => text.clone(),
                };
                let mut req = Request::new(
                    Method::ExecuteKip,
                    Arguments {
                        command: Some(command),
                        parameters: params.clone(),
                        dry_run,
                        ..Default::default()
                    },
                );
                req.actor.id = "operator".into();
                req.actor.trigger = "console".into();
                let response = nx.execute(&req).to_json();
                JobOutput::Query {
                    text,
                    params,
                    dry_run,
                    page: page.is_some(),
                    response,
                    elapsed: started.elapsed(),
                }
            }
            Job::Schema => JobOutput::Schema(nx.schema_overview().map_err(|e| e.message)),
            Job::Poll => {
                let (entry, proposal) = newest_changes(nx);
                JobOutput::Polled(nx.data_version(), entry, proposal)
            }
            Job::Index => JobOutput::Index(nx.concept_index(INDEX_LIMIT).map_err(|e| e.message)),
            Job::Neighbourhood(id) => JobOutput::Neighbourhood(
                nx.neighbourhood(id, 200)
                    .map(|o| o.map(Box::new))
                    .map_err(|e| e.message),
            ),
            Job::History => JobOutput::History(nx.history(500).unwrap_or_default()),
            Job::SaveHistory { text, params } => {
                let _ = nx.history_add(&text, &params);
                JobOutput::Saved
            }
            Job::Proposals => JobOutput::Proposals(
                crate::review::proposals::list(nx, None, 200)
                    .and_then(|mut v| {
                        crate::review::proposals::label_previews(nx, &mut v)?;
                        Ok(v)
                    })
                    .map_err(|e| e.message),
            ),
            Job::PreviewEdit {
                proposal,
                seq,
                text,
                params,
            } => JobOutput::EditPreview {
                proposal,
                seq,
                result: crate::review::proposals::preview_edit(nx, &text, &params)
                    .map_err(|e| format!("{}: {}", e.code, e.message)),
            },
            Job::Decide(d) => JobOutput::Decided(decide(nx, d)),
            Job::Impact { proposal, seq } => JobOutput::Impact {
                proposal,
                seq,
                result: impact(nx, proposal, seq).map_err(|e| format!("{}: {}", e.code, e.message)),
            },
            Job::Runs => JobOutput::Runs(
                crate::sleep::cycle::runs(nx, 200)
                    .and_then(|r| {
                        Ok((
                            r,
                            crate::sleep::maintainer::holders(nx)?,
                            crate::sleep::params::saved(nx)?,
                        ))
                    })
                    .map_err(|e| e.message),
            ),
            Job::SaveParams { params, base } => {
                let who = crate::audit::Who {
                    actor: "operator".into(),
                    trigger: "console: save sleep parameters".into(),
                    reason: None,
                };
                match crate::sleep::params::save_unless_changed(nx, &params, base.as_ref(), &who) {
                    Ok(Ok(saved)) => JobOutput::ParamsSaved(Ok(saved)),
                    Ok(Err(now)) => JobOutput::ParamsStale(now),
                    Err(e) => JobOutput::ParamsSaved(Err(format!("{}: {}", e.code, e.message))),
                }
            }
            Job::RunReport(id) => JobOutput::RunReport(
                crate::sleep::cycle::report(nx, id)
                    .map(|o| o.map(Box::new))
                    .map_err(|e| e.message),
            ),
            Job::Sleep {
                scope,
                cancel,
                now,
                params,
                llm,
            } => run_sleep(
                nx,
                SleepJob {
                    scope,
                    cancel,
                    now,
                    params,
                    llm,
                },
                &|_| {},
            ),
            Job::Import(job) => run_import(nx, job, &|_| {}),
            Job::Health { now } => {
                let now = now.unwrap_or_else(|| {
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                });
                let stale = crate::sleep::Params::default().stale_event_threshold_days;
                JobOutput::Health(
                    crate::sleep::health::assess(nx, &now, stale)
                        .and_then(|h| {
                            crate::sleep::health::history(nx, super::health::TREND_RUNS)
                                .map(|p| Box::new((h, p)))
                        })
                        .map_err(|e| e.message),
                )
            }
            Job::Traffic { after } => JobOutput::Traffic {
                after,
                result: nx
                    .recent_reads(
                        &crate::audit::reads::Filter {
                            after,
                            ..Default::default()
                        },
                        super::traffic::KEEP,
                    )
                    .map_err(|e| e.message),
            },
            Job::Usage => JobOutput::Usage(
                nx.read_usage(super::traffic::LISTED)
                    .map(Box::new)
                    .map_err(|e| e.message),
            ),
            Job::Audit(f) => JobOutput::Audit(nx.audit_list(&f).map_err(|e| e.message)),
            Job::AuditEntry(id) => JobOutput::AuditEntry(
                nx.audit_entry(id)
                    .map(|o| o.map(Box::new))
                    .map_err(|e| e.message),
            ),
            Job::WhyOf(what) => JobOutput::Why(why_element(nx, &what)),
            Job::WhyPair(a, b) => JobOutput::Why(
                crate::sleep::cycle::why_not_merged(nx, &a, &b)
                    .map(|v| WhyText {
                        title: format!(
                            "why {a} and {b} are {}",
                            if v["same"] == serde_json::json!(true) {
                                "one"
                            } else {
                                "not merged"
                            }
                        ),
                        lines: crate::sleep::explain_text::pair_lines(&a, &b, &v),
                    })
                    .map_err(|e| format!("{}: {}", e.code, e.message)),
            ),
            Job::Undo { entry, group } => JobOutput::Decided(undo(nx, entry, group)),
            Job::UndoPreview { entry, group } => JobOutput::UndoPreview {
                lines: crate::review::undo::preview(nx, entry, group.as_deref(), UNDO_LISTED)
                    .map_err(|e| format!("{}: {}", e.code, e.message)),
                entry,
                group,
            },
            Job::Contradictions => JobOutput::Contradictions(
                crate::sleep::contradictions::list(nx, None).map_err(|e| e.message),
            ),
            Job::Resolve { id, verdict } => {
                let who = crate::audit::Who {
                    actor: "operator".into(),
                    trigger: "console".into(),
                    reason: None,
                };
                JobOutput::Decided(
                    crate::sleep::contradictions::resolve(nx, id, verdict, None, &who)
                        .map(|(p, i)| {
                            format!(
                                "contradiction #{id}: {} (proposal #{p} item {i})",
                                verdict.as_str()
                            )
                        })
                        .map_err(|e| format!("{}: {}", e.code, e.message)),
                )
            }
        }
    }
}

/// An id and how it reads, when there is one.
type Newest = Option<(i64, String)>;

/// The newest audit entry (`#12 UPSERT by agent via execute_kip`) and the
/// newest proposal (`proposal #6 from scout`): what "changed elsewhere"
/// names.
fn newest_changes(nx: &Nexus) -> (Newest, Newest) {
    let entry = nx
        .db()
        .query_opt(
            "SELECT id, kind, actor, trigger_name FROM audit_log ORDER BY id DESC LIMIT 1",
            &[],
        )
        .ok()
        .flatten()
        .and_then(|r| {
            Some((
                r.i64(0).ok()?,
                format!(
                    "{} by {} (entry #{}, {})",
                    r.text(1).ok()?,
                    r.text(2).ok()?,
                    r.i64(0).ok()?,
                    r.text(3).ok()?
                ),
            ))
        });
    let proposal = nx
        .db()
        .query_opt(
            "SELECT id, actor, run FROM proposals ORDER BY id DESC LIMIT 1",
            &[],
        )
        .ok()
        .flatten()
        .and_then(|r| {
            let id = r.i64(0).ok()?;
            let from = match r.opt_i64(2).ok()? {
                Some(run) => format!("sleep run #{run}"),
                None => r.text(1).ok()?,
            };
            Some((id, format!("proposal #{id} from {from}")))
        });
    (entry, proposal)
}

/// How many changes an undo confirmation lists before "… and N more".
const UNDO_LISTED: usize = 8;

/// Why an element is as it is, as text, from what the operator typed.
fn why_element(nx: &mut Nexus, what: &str) -> Result<WhyText, String> {
    let what = what.trim();
    let (id, label) = crate::sleep::explain::resolve(nx, what)
        .map_err(|e| format!("{}: {}", e.code, e.message))?
        .ok_or_else(|| format!("{what}: no such element, and nothing recorded about it (give C:12, P:40 or Type:Name)"))?;
    // an id is named by what it is, when it still is
    let label = match crate::store::ids::parse_element_id(what) {
        Some(_) => match crate::store::concept_label(nx.db(), id) {
            Ok(Some((ty, name))) => format!("{ty}:{name} ({what})"),
            _ => label,
        },
        None => label,
    };
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let v = crate::sleep::explain::explain(nx, id, &now)
        .map_err(|e| format!("{}: {}", e.code, e.message))?;
    Ok(WhyText {
        title: format!("why {label}"),
        lines: crate::sleep::explain_text::element_lines(&label, &v),
    })
}

/// Sends intermediate outputs of a job (sleep progress) to the app.
pub type Emit = Arc<dyn Fn(JobOutput) + Send + Sync>;

impl Job {
    /// Runs the job: a sleep cycle on a connection of its own when the
    /// memory is a file (so the other panes keep working, and see its
    /// commits like any other writer's), everything else on the shared one.
    pub fn run_on(self, nexus: &Arc<Mutex<Nexus>>, emit: &Emit) -> JobOutput {
        match self {
            Job::Sleep {
                scope,
                cancel,
                now,
                params,
                llm,
            } => {
                let job = SleepJob {
                    scope,
                    cancel,
                    now,
                    params,
                    llm,
                };
                on_own_connection(
                    nexus,
                    |nx| run_sleep(nx, job, emit.as_ref()),
                    |e| JobOutput::SleepDone(Err(e)),
                )
            }
            Job::Import(job) => on_own_connection(
                nexus,
                |nx| run_import(nx, job, emit.as_ref()),
                |e| JobOutput::ImportDone(Err(e)),
            ),
            other => {
                let mut nx = nexus.lock().unwrap_or_else(|e| e.into_inner());
                let out = other.run(&mut nx);
                // the database closed the connection (PostgreSQL restarted):
                // the next job gets a new one; this one's error is shown
                if nx.connection_lost()
                    && let Some(place) = nx.place()
                    && let Ok(fresh) = Nexus::open_place(&place, Default::default())
                {
                    *nx = fresh;
                }
                out
            }
        }
    }
}

/// Runs a long writing job on a connection of its own when the memory is a
/// file (the panes keep reading, and see its commits like any other
/// writer's), on the shared one otherwise; `fail` says why it could not
/// open one.
fn on_own_connection(
    nexus: &Arc<Mutex<Nexus>>,
    run: impl FnOnce(&mut Nexus) -> JobOutput,
    fail: impl FnOnce(String) -> JobOutput,
) -> JobOutput {
    let place = nexus.lock().unwrap_or_else(|e| e.into_inner()).place();
    match place {
        Some(p) => match Nexus::open_place(&p, Default::default()) {
            Ok(mut own) => run(&mut own),
            Err(e) => fail(e.message),
        },
        None => run(&mut nexus.lock().unwrap_or_else(|e| e.into_inner())),
    }
}

/// An import from the console: the folder read, the plan applied as one
/// group, its progress forwarded at most every 50 ms.
fn run_import(
    nx: &mut Nexus,
    job: super::component::ImportJob,
    emit: &(dyn Fn(JobOutput) + Send + Sync),
) -> JobOutput {
    let user = crate::import::user_for(nx, &job.source, job.user.clone());
    let plan = match crate::import::read_with(&job.source, &job.dir, user.as_deref(), &job.extra) {
        Ok(p) => p,
        Err(e) => return JobOutput::ImportDone(Err(e)),
    };
    let who = crate::audit::Who {
        actor: "operator".into(),
        trigger: format!("console: import {} {}", job.source, job.dir.display()),
        reason: None,
    };
    let mut last: Option<Instant> = None;
    let mut progress = |done: usize, total: usize| {
        if done == total || last.is_none_or(|t| t.elapsed().as_millis() >= 50) {
            last = Some(Instant::now());
            emit(JobOutput::ImportProgress(done, total));
        }
    };
    let res = crate::import::apply_with(
        nx,
        &plan,
        &who,
        job.dry_run,
        &mut progress,
        Some(&job.cancel.0),
    );
    JobOutput::ImportDone(
        res.map(|out| WhyText {
            title: format!(
                "{} {} from {}",
                if job.dry_run {
                    "would import"
                } else {
                    "imported"
                },
                job.source,
                job.dir.display()
            ),
            lines: out.lines(&job.dir, plan.writes.len()),
        })
        .map_err(|e| format!("{}: {}", e.code, e.message)),
    )
}

/// A sleep cycle the console started.
struct SleepJob {
    scope: crate::sleep::Scope,
    cancel: super::component::CancelFlag,
    now: Option<String>,
    params: crate::sleep::Params,
    llm: bool,
}

/// A sleep cycle from the console, its progress forwarded as it comes.
fn run_sleep(nx: &mut Nexus, job: SleepJob, emit: &(dyn Fn(JobOutput) + Send + Sync)) -> JobOutput {
    let now = job
        .now
        .unwrap_or_else(|| chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    let mut opts = crate::sleep::Options::new(job.scope, &now);
    opts.trigger = "on_demand".into();
    opts.params = job.params;
    let mut reasoner: Box<dyn crate::sleep::Reasoner> = if job.llm {
        match crate::sleep::llm::LlmConfig::from_env() {
            Some(cfg) => Box::new(crate::sleep::llm::Llm::new(cfg)),
            None => {
                return JobOutput::SleepDone(Err(
                    "the LLM reasoner needs SOMNUS_LLM_URL and SOMNUS_LLM_MODEL".into(),
                ));
            }
        }
    } else {
        Box::new(crate::sleep::Heuristic)
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let cancel = job.cancel;
    let res = std::thread::scope(|s| {
        s.spawn(|| {
            for p in rx {
                emit(JobOutput::SleepProgress(p));
            }
        });
        crate::sleep::run(
            nx,
            &opts,
            reasoner.as_mut(),
            Some(tx),
            Some(cancel.0.clone()),
        )
    });
    JobOutput::SleepDone(
        res.map(Box::new)
            .map_err(|e| format!("{}: {}", e.code, e.message)),
    )
}

/// Rolls back an entry or a group (a sleep run, an approval) from the
/// console, as the operator.
fn undo(nx: &mut Nexus, entry: Option<i64>, group: Option<String>) -> Result<String, String> {
    let who = crate::audit::Who {
        actor: "operator".into(),
        trigger: "console".into(),
        reason: None,
    };
    let err = |e: crate::kip::KipError| match e.hint {
        Some(h) => format!("{}: {} ({h})", e.code, e.message),
        None => format!("{}: {}", e.code, e.message),
    };
    match (entry, group) {
        (Some(id), _) => crate::review::undo::entry(nx, id, &who)
            .map(|n| format!("entry #{id} undone as entry #{n}"))
            .map_err(err),
        (None, Some(g)) => {
            let ids = match g
                .strip_prefix("proposal:")
                .and_then(|p| p.parse::<i64>().ok())
            {
                Some(p) => crate::review::undo::proposal(nx, p, &who),
                None => crate::review::undo::group(nx, &g, &who),
            }
            .map_err(err)?;
            Ok(format!("`{g}` undone: {} entries", ids.len()))
        }
        (None, None) => Err("nothing to undo".into()),
    }
}

/// Carries out an operator's decision on a proposal, from the console.
fn decide(nx: &mut Nexus, d: Decision) -> Result<String, String> {
    use crate::review::proposals;
    let who = crate::audit::Who {
        actor: "operator".into(),
        trigger: "console".into(),
        reason: None,
    };
    let err = |e: crate::kip::KipError| match e.hint {
        Some(h) => format!("{}: {} ({h})", e.code, e.message),
        None => format!("{}: {}", e.code, e.message),
    };
    match d {
        Decision::Approve { id, items, edits } => {
            let a = proposals::approve(nx, id, items.as_deref(), &edits, &who).map_err(err)?;
            let mut msg = format!("proposal #{id}: applied {} item(s)", a.applied.len());
            if !edits.is_empty() {
                msg.push_str(&format!(" ({} as edited)", edits.len()));
            }
            if !a.stale.is_empty() {
                // what the operator saw is not what would apply now: the
                // items are shown again for a second look
                let which = a
                    .stale
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                let stale = format!(
                    "the memory changed since item {which} was shown ({}); its preview now shows what it does: a applies that",
                    a.changed_text()
                );
                if a.applied.is_empty() {
                    return Err(format!("proposal #{id}: {stale}"));
                }
                msg.push_str(&format!("; not applied: {stale}"));
            }
            Ok(msg)
        }
        Decision::Reject { id, items, reason } => {
            let n =
                proposals::reject(nx, id, items.as_deref(), &reason, &who.actor).map_err(err)?;
            Ok(format!(
                "proposal #{id}: rejected {n} item(s); the memory is unchanged"
            ))
        }
    }
}

/// A pending item's recall impact, as the proposal is now.
fn impact(
    nx: &mut Nexus,
    proposal: i64,
    seq: i64,
) -> crate::kip::KipResult<(usize, Vec<crate::review::impact::Changed>)> {
    let item = crate::review::proposals::items(nx, proposal)?
        .into_iter()
        .find(|i| i.seq == seq)
        .ok_or_else(|| {
            crate::kip::KipError::new(
                crate::kip::ErrorCode::NotFound,
                format!("proposal #{proposal} has no item {seq}"),
            )
        })?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let recent = crate::review::impact::recent_reads(nx, &now)?;
    let changed = crate::review::impact::impact(nx, &item, &recent)?;
    Ok((recent.len(), changed))
}
