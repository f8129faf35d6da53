//! Phase 2: the SleepTasks assigned to $system.

use super::classify::classify_drafts;
use super::consolidate::archive_drafts;
use super::consolidate::consolidation_drafts;
use super::context::*;
use super::contradictions::conflicts;
use super::contradictions::contradiction_drafts;
use super::duplicates::duplicate_drafts;
use super::inbox::unsorted_drafts;
use super::skills::skill_drafts;

/// SleepTasks one cycle takes up, most urgent first.
pub const TASKS_PER_CYCLE: usize = 100;
/// Pending SleepTasks read to choose them from.
const TASKS_READ: usize = 5000;

/// A SleepTask's priority on the schema's scale (higher is more urgent; 4
/// safety-critical … 1 routine, 1 when unset). A number counts as it is
/// (also written as text, `"3"`); a word counts as its place on the scale
/// (`critical`/`urgent` 4, `high` 3, `medium`/`normal` 2, `low` 1); anything
/// else is the default.
pub fn priority(v: Option<&Value>) -> f64 {
    const DEFAULT: f64 = 1.0;
    match v {
        Some(Value::Number(n)) => n.as_f64().filter(|x| x.is_finite()).unwrap_or(DEFAULT),
        Some(Value::String(s)) => {
            let s = s.trim().to_lowercase();
            if let Ok(x) = s.parse::<f64>()
                && x.is_finite()
            {
                return x;
            }
            match s.as_str() {
                "critical" | "urgent" | "highest" | "p0" => 4.0,
                "high" | "p1" => 3.0,
                "medium" | "normal" | "p2" => 2.0,
                "low" | "lowest" | "p3" => 1.0,
                _ => DEFAULT,
            }
        }
        _ => DEFAULT,
    }
}

pub(super) fn sleep_tasks(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("pending SleepTasks", 0, 0);
    let v = find(
        nx,
        &format!(
            r#"FIND(?task) WHERE {{
  ?task {{type: "SleepTask"}}
  (?task, "assigned_to", {{type: "Person", name: "$system"}})
  FILTER(?task.attributes.status == "pending")
}} LIMIT {TASKS_READ}"#
        ),
        json!({}),
    )?;
    // most urgent first (as the SleepTask schema reads its priority), the
    // older first among equals; at most TASKS_PER_CYCLE, the rest wait
    let mut tasks: Vec<(f64, i64, Value)> = v
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|t| {
            let made = [
                s(&t, &["metadata", "created_at"]),
                s(&t, &["attributes", "created_at"]),
            ]
            .into_iter()
            .find_map(|x| instant(&x).map(|i| i.timestamp_millis()))
            .unwrap_or(i64::MAX);
            (
                priority(t.get("attributes").and_then(|a| a.get("priority"))),
                made,
                t,
            )
        })
        .collect();
    tasks.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let waiting = tasks.len().saturating_sub(TASKS_PER_CYCLE);
    if waiting > 0 {
        cx.report.issues.push(format!(
            "{waiting} pending SleepTasks wait for the next cycle (at most {TASKS_PER_CYCLE} a cycle, most urgent first)"
        ));
    }
    let order: Vec<String> = tasks
        .iter()
        .take(TASKS_PER_CYCLE)
        .map(|(p, _, t)| format!("\"{}\" ({p})", s(t, &["name"])))
        .collect();
    let tasks: Vec<Value> = tasks
        .into_iter()
        .take(TASKS_PER_CYCLE)
        .map(|(_, _, t)| t)
        .collect();
    let mut by_action: BTreeMap<String, i64> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        cx.cancelled()?;
        let name = s(t, &["name"]);
        let action = s(t, &["attributes", "requested_action"]);
        let (tt, tn) = (
            s(t, &["attributes", "target_type"]),
            s(t, &["attributes", "target_name"]),
        );
        cx.step(&format!("task: {name}"), i as u64, tasks.len() as u64);
        write(
            cx,
            nx,
            r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :n} SET ATTRIBUTES { status: "in_progress", started_at: :ts } } } WITH METADATA { source: "SleepCycle", author: "$system", created_at: :ts }"#,
            json!({"n": name, "ts": cx.opts.now}),
            "SleepTask taken up",
        )?;
        // why a known action found nothing to do, when it can say
        let mut nothing_because: Option<String> = None;
        let drafts = match action.as_str() {
            "reclassify" if tt == "Domain" && tn == "Unsorted" => unsorted_drafts(cx, nx)?,
            "reclassify" => classify_drafts(cx, nx, &[(tt.clone(), tn.clone())], "reclassify")?,
            "merge_check" | "merge_duplicates" => duplicate_drafts(cx, nx, Some((&tt, &tn)))?,
            "archive" => archive_drafts(cx, nx, &tt, &tn, &format!("SleepTask \"{name}\""))?,
            "consolidate_to_semantic" if tt == "Experience" => {
                let (d, why) = super::experience_lessons::lesson_drafts(nx, &tn, &cx.opts.now)?;
                nothing_because = why;
                d
            }
            "consolidate_to_semantic" => {
                let ev = find(
                    nx,
                    r#"FIND(?e) WHERE { ?e {type: "Event", name: :n} }"#,
                    json!({"n": tn}),
                )?;
                let evs: Vec<EventView> = ev
                    .as_array()
                    .map(|a| a.iter().map(event_view).collect())
                    .unwrap_or_default();
                consolidation_drafts(cx, nx, evs)?
            }
            "compile_to_skill" => {
                // an Experience, or a Skill to recompile from its evidence
                let names = if tt == "Skill" {
                    strs(Some(&find(
                        nx,
                        r#"FIND(?x.name) WHERE { ?k {type: "Skill", name: :n} (?k, "derived_from", ?x) ?x {type: "Experience"} } LIMIT 100"#,
                        json!({"n": tn}),
                    )?))
                } else {
                    vec![tn.clone()]
                };
                skill_drafts(cx, nx, &names)?
            }
            "resolve_contradiction" => {
                let found = conflicts(nx, Some(&tn), &cx.opts.now)?;
                contradiction_drafts(cx, nx, &found)?
                    .into_iter()
                    .map(|(d, _)| d)
                    .collect()
            }
            _ => vec![],
        };
        let known = matches!(
            action.as_str(),
            "reclassify"
                | "merge_check"
                | "merge_duplicates"
                | "archive"
                | "consolidate_to_semantic"
                | "resolve_contradiction"
                | "compile_to_skill"
                | "review"
        );
        let n = drafts.len();
        let keys = stage(cx, nx, drafts)?;
        if !known {
            cx.report.issues.push(format!(
                "SleepTask \"{name}\" asks for `{action}`, which this cycle does not know how to do; marked failed"
            ));
        }
        // work that became proposal items waits for the operator: the task
        // stays in progress until every item is decided
        if known && !keys.is_empty() {
            let proposal = keys.values().next().map(|(p, _)| *p).unwrap_or(0);
            let seqs: Vec<i64> = keys.values().map(|(_, s)| *s).collect();
            let result = format!(
                "awaiting approval: proposal #{proposal} item{} {}",
                if seqs.len() == 1 { "" } else { "s" },
                seqs.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            write(
                cx,
                nx,
                r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :n} SET ATTRIBUTES { result: :r, awaiting_proposal: :p, awaiting_items: :items } } } WITH METADATA { source: "SleepCycle", author: "$system", created_at: :ts }"#,
                json!({"n": name, "r": result, "p": proposal, "items": seqs, "ts": cx.opts.now}),
                "SleepTask awaiting approval",
            )?;
            // items a policy applied at once settle it now
            proposals::settle_tasks(nx, proposal, &cx.who("SleepTask settled"))?;
            *by_action.entry(action.clone()).or_default() += 1;
            cx.progress(Some(format!("task \"{name}\": {result}")), false);
            continue;
        }
        let result = if !known {
            format!("unknown requested_action `{action}`")
        } else if action == "review" {
            format!("reviewed {tt} {tn}: findings in sleep run #{}", cx.run)
        } else if keys.is_empty() {
            if let Some(why) = nothing_because {
                why
            } else if n == 0 {
                "nothing to change".to_string()
            } else {
                "already proposed or decided before".to_string()
            }
        } else {
            let items: Vec<String> = keys.values().map(|(_, s)| s.to_string()).collect();
            format!(
                "proposed for approval: proposal #{} item{} {}",
                cx.report.proposal.unwrap_or(0),
                if items.len() == 1 { "" } else { "s" },
                items.join(", ")
            )
        };
        let status = if known { "completed" } else { "failed" };
        write(
            cx,
            nx,
            r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :n} SET ATTRIBUTES { status: :st, completed_at: :ts, result: :r } } WITH METADATA { expires_at: :exp } } WITH METADATA { source: "SleepCycle", author: "$system", created_at: :ts }"#,
            json!({"n": name, "st": status, "ts": cx.opts.now, "r": result, "exp": shift(&cx.opts.now, cx.opts.params.task_ttl_days)}),
            "SleepTask finished",
        )?;
        *by_action.entry(action.clone()).or_default() += 1;
        cx.progress(Some(format!("task \"{name}\": {result}")), false);
    }
    cx.count("tasks", tasks.len() as i64);
    cx.count("tasks_waiting", waiting as i64);
    if !tasks.is_empty() {
        cx.line(format!(
            "Processed {} SleepTasks ({})",
            tasks.len(),
            by_action
                .iter()
                .map(|(a, n)| format!("{n} {a}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let shown = order.len().min(10);
        cx.line(format!(
            "SleepTasks by priority: {}{}",
            order[..shown].join(", "),
            if order.len() > shown {
                format!(" and {} more", order.len() - shown)
            } else {
                String::new()
            }
        ));
    }
    Ok(())
}
