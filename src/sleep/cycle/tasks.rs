//! Phase 2: the SleepTasks assigned to $system.

use super::*;

pub(super) fn sleep_tasks(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("pending SleepTasks", 0, 0);
    let v = find(
        nx,
        r#"FIND(?task) WHERE {
  ?task {type: "SleepTask"}
  (?task, "assigned_to", {type: "Person", name: "$system"})
  FILTER(?task.attributes.status == "pending")
} ORDER BY ?task.attributes.priority DESC LIMIT 100"#,
        json!({}),
    )?;
    let tasks = v.as_array().cloned().unwrap_or_default();
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
        let drafts = match action.as_str() {
            "reclassify" if tt == "Domain" && tn == "Unsorted" => unsorted_drafts(cx, nx)?,
            "reclassify" => classify_drafts(cx, nx, &[(tt.clone(), tn.clone())], "reclassify")?,
            "merge_check" | "merge_duplicates" => duplicate_drafts(cx, nx, Some((&tt, &tn)))?,
            "archive" => archive_drafts(cx, nx, &tt, &tn, &format!("SleepTask \"{name}\""))?,
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
            if n == 0 {
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
    }
    Ok(())
}
