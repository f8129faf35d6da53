//! Phase 13: finalisation and the maintenance log.

use super::context::*;

pub(super) fn finalise(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("maintenance log", 0, 0);
    // captured writes of the reasoner (LLM tool calls) become proposal items
    let captured = cx.reasoner.captured();
    if !captured.is_empty() {
        let drafts = captured
            .into_iter()
            .map(|w| Draft {
                class: "llm".into(),
                // the same write asked twice is one item
                key: format!(
                    "llm:{}",
                    similarity::normalise(&format!(
                        "{} {}",
                        w.command,
                        Value::Object(w.parameters.clone())
                    ))
                ),
                title: w
                    .command
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(80)
                    .collect(),
                commands: vec![w.command],
                params: w.parameters,
                rationale: w.rationale,
                evidence: vec![],
                confidence: 0.5,
            })
            .collect();
        stage(cx, nx, drafts)?;
    }
    // later phases (decay, cleanup) may have moved what earlier items were
    // previewed on: preview this run's items again on the final state
    if let Some(pid) = cx.report.proposal {
        cx.step("re-checking proposal items", 0, 0);
        let (_, dropped) = {
            let c = &*cx;
            proposals::refresh_in_group(nx, pid, true, &mut |n, total| {
                c.step("re-checking proposal items", n as u64, total as u64)
            })?
        };
        if dropped > 0 {
            cx.count("dropped", dropped as i64);
        }
        // an Event the inbox filed into a topic domain and consolidation
        // found nothing durable in: both items say so, to be decided
        // together
        let marked = crate::review::conflicts::mark_archived_and_filed(nx.db(), pid)?;
        if marked > 0 {
            cx.count("archived_and_filed", (marked / 2) as i64);
        }
    }
    let mut processed = 0;
    for p in &cx.report.phases {
        processed += p
            .counts
            .iter()
            .filter(|(k, _)| !k.starts_with("health."))
            .map(|(_, v)| *v)
            .sum::<i64>();
    }
    let entry = json!({
        "timestamp": cx.opts.now,
        "trigger": cx.opts.trigger,
        "scope": cx.opts.scope.as_str(),
        "run": cx.run,
        "actions_taken": cx.report.phases.iter().flat_map(|p| p.lines.iter().cloned()).take(12).collect::<Vec<_>>().join("; "),
        "items_processed": processed,
        "issues_found": cx.report.issues.iter().take(10).cloned().collect::<Vec<_>>(),
        "next_recommendations": cx.report.recommendations.iter().take(10).cloned().collect::<Vec<_>>(),
        "proposal": cx.report.proposal,
    });
    for attempt in 0..2 {
        let v = find(
            nx,
            r#"FIND(?system.attributes.maintenance_log, ?system.metadata._version) WHERE { ?system {type: "Person", name: "$system"} }"#,
            json!({}),
        )?;
        let row = v
            .as_array()
            .and_then(|a| a.first())
            .cloned()
            .unwrap_or(Value::Null);
        let mut log: Vec<Value> = row
            .get(0)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let version = row.get(1).and_then(Value::as_i64).unwrap_or(1);
        log.push(entry.clone());
        if log.len() > 50 {
            log.drain(..log.len() - 50);
        }
        let r = write(
            cx,
            nx,
            r#"UPSERT {
  CONCEPT ?system {
    {type: "Person", name: "$system"}
    EXPECT VERSION :v
    SET ATTRIBUTES { last_sleep_cycle: :current_timestamp, maintenance_log: :appended_maintenance_log }
  }
}
WITH METADATA { source: "SleepCycle", author: "$system", created_at: :current_timestamp }"#,
            json!({"v": version, "current_timestamp": cx.opts.now, "appended_maintenance_log": log}),
            "maintenance log entry of the cycle",
        );
        match r {
            Ok(_) => break,
            Err(e) if e.code == ErrorCode::VersionConflict && attempt == 0 => continue,
            Err(e) => return Err(e),
        }
    }
    cx.line(format!(
        "Logged the cycle to $system.maintenance_log{}",
        cx.report
            .proposal
            .map(|p| format!("; proposal #{p} awaits approval"))
            .unwrap_or_default()
    ));
    Ok(())
}
