//! Phase 12: TTL reclamation, the only hard delete.

use super::context::*;
use super::decay::note;

pub(super) fn reclaim(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let cap = cx.opts.params.cleanup_cap;
    let mut deleted = 0usize;
    let mut held = Vec::new();
    let mut held_ids: HashSet<String> = HashSet::new();
    let mut suspicious = Vec::new();
    let mut review_tasks = 0usize;
    let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
    for t in concept_types(nx)? {
        if t == "Domain" || deleted >= cap {
            continue;
        }
        cx.step(&format!("expired {t} nodes"), deleted as u64, cap as u64);
        // the candidates are found without the write lock; each is read
        // again under it before anything is decided (an agent may have
        // renewed, linked or deleted it meanwhile)
        // page by page: expired nodes that are kept (suspicious TTLs, held
        // items) never stop the cycle reaching the ones after them
        let mut cursor: Option<String> = None;
        let mut pages = 0usize;
        loop {
            let mut text = format!(
                r#"FIND(?n) WHERE {{
  ?n {{type: {}}}
  FILTER(IS_NOT_NULL(?n.metadata.expires_at))
  FILTER(?n.metadata.expires_at < :bound)
  FILTER(?n.name != "$self" && ?n.name != "$system")
}} LIMIT {RECLAIM_PAGE}"#,
                q(&t)
            );
            if let Some(c) = &cursor {
                text.push_str(&format!(" CURSOR {}", q(c)));
            }
            let (v, next) = cx.unlocked(nx, |nx| {
                find_page(nx, &text, json!({"bound": widened(&cx.opts.now, true)}))
            })?;
            pages += 1;
            for n in v.as_array().cloned().unwrap_or_default() {
                if deleted >= cap {
                    break;
                }
                // a yield point: each node is settled in the batch it is read in
                cx.yield_lock(nx)?;
                let n = {
                    let fresh = match find(
                        nx,
                        r#"FIND(?n) WHERE { ?n {id: :id} FILTER(IS_NOT_NULL(?n.metadata.expires_at)) }"#,
                        json!({"id": s(&n, &["id"])}),
                    ) {
                        Ok(v) => v,
                        // deleted meanwhile
                        Err(e) if e.code == ErrorCode::NotFound => continue,
                        Err(e) => return Err(e),
                    };
                    match fresh.as_array().and_then(|a| a.first()).cloned() {
                        Some(f) => f,
                        None => continue,
                    }
                };
                // the exact test, as instants (offsets included)
                if before(&s(&n, &["metadata", "expires_at"]), &cx.opts.now) != Some(true) {
                    continue;
                }
                let name = s(&n, &["name"]);
                let id = s(&n, &["id"]);
                let attrs = n.get("attributes").cloned().unwrap_or(Value::Null);
                let status = s(&attrs, &["status"]);
                let tier = s(&n, &["metadata", "memory_tier"]);
                let exp = s(&n, &["metadata", "expires_at"]);
                let whitelisted = matches!(t.as_str(), "Event" | "Experience" | "ExperienceStep")
                    || (t == "SleepTask" && matches!(status.as_str(), "completed" | "failed"))
                    || (t == "Commitment"
                        && matches!(status.as_str(), "fulfilled" | "cancelled" | "expired"))
                    || tier == "short-term";
                if !whitelisted {
                    suspicious.push(format!(
                        "{t}:{name} carries expires_at {exp} but is not TTL-deletable"
                    ));
                    // 12A.2: logged, and a review SleepTask for it, never deleted
                    if review_tasks < REVIEW_TASKS_PER_CYCLE
                        && review_ttl_task(cx, nx, &t, &name, &exp)?
                    {
                        review_tasks += 1;
                    }
                    continue;
                }
                let cs = s(&attrs, &["consolidation_status"]);
                // a landmark is autobiographical: promoted, never reclaimed
                let deps = dependents(nx, &id)?;
                if t == "Event" {
                    let salience = attrs
                        .get("salience_score")
                        .and_then(Value::as_f64)
                        .unwrap_or(0.0);
                    let citing = citing_insights(&deps);
                    if salience >= LANDMARK_SALIENCE || citing >= 2 {
                        let why = if salience >= LANDMARK_SALIENCE {
                            format!("salience {salience} ≥ {LANDMARK_SALIENCE}")
                        } else {
                            format!("cited by {citing} Insights or milestones")
                        };
                        promote_landmark(cx, nx, &id, &format!("{t}:{name}"), &why)?;
                        cx.count("landmarks_promoted", 1);
                        continue;
                    }
                }
                // an Event archived with nothing extracted is the only copy of
                // what it says: kept, its TTL dropped
                if t == "Event"
                    && cs == "archived"
                    && !crate::sleep::reasoner::is_transient_class(&s(&attrs, &["event_class"]))
                {
                    keep_whole(cx, nx, &id, &format!("{t}:{name}"))?;
                    held.push(format!(
                    "{t}:{name} (expired {exp}; archived with nothing extracted, its text is held nowhere else: kept, TTL dropped)"
                ));
                    held_ids.insert(id.clone());
                    continue;
                }
                // a learning trace still waiting to be consolidated: an Event or
                // an Experience not yet consolidated or archived (pending,
                // partially consolidated, still going on), or a step of such an
                // Experience (12A.4)
                let pending: Option<String> = match t.as_str() {
                    "Event" | "Experience" if !trace_done(&attrs) => Some(format!(
                        "consolidation {}",
                        if cs.is_empty() { "pending" } else { &cs }
                    )),
                    "Experience" if s(&attrs, &["status"]) == "ongoing" => {
                        Some("the Experience is still going on".to_string())
                    }
                    "ExperienceStep" => live_parent(nx, &id, &cx.opts.now)?.map(|p| {
                        format!("a step of Experience \"{p}\", which is still to be learnt from")
                    }),
                    _ => None,
                };
                // or sole evidence of another concept, by element id
                let held_for = match pending {
                    Some(p) => Some(p),
                    None => sole_evidence_of(nx, &deps)?.map(|k| format!("sole evidence of {k}")),
                };
                if let Some(why) = held_for {
                    // held items keep living: their TTL and their links' move on
                    let until = shift(&cx.opts.now, cx.opts.params.archive_ttl_days);
                    extend_ttl(cx, nx, &id, &until, &why)?;
                    held_ids.insert(id.clone());
                    held.push(format!(
                        "{t}:{name} (expired {exp}, {why}; kept until {until})"
                    ));
                    continue;
                }
                let inputs = json!({"type": t, "name": name, "expires_at": exp, "status": status, "consolidation_status": cs, "memory_tier": tier, "now": cx.opts.now});
                note(
                    nx,
                    &id,
                    &format!("{t}:{name}"),
                    cx.run,
                    "deleted",
                    "TTL reclamation (expires_at passed, TTL-deletable, consolidated, not sole evidence)",
                    &inputs,
                )?;
                write(
                    cx,
                    nx,
                    r#"DELETE CONCEPT ?n DETACH
WHERE {
  ?n {id: :id}
  FILTER(IS_NOT_NULL(?n.metadata.expires_at))
}"#,
                    json!({"id": id}),
                    &format!("TTL reclamation: expired {exp}"),
                )?;
                deleted += 1;
                *by_type.entry(t.clone()).or_default() += 1;
            }
            match next {
                Some(c) if deleted < cap && pages < RECLAIM_PAGES => cursor = Some(c),
                _ => break,
            }
        }
    }
    // 12D: expired links, one predicate at a time
    let mut links = 0usize;
    for (p, _) in predicates(nx)? {
        if deleted + links >= cap {
            break;
        }
        let text = format!(
            r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NOT_NULL(?link.metadata.expires_at))
  FILTER(?link.metadata.expires_at < :bound)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
}} ORDER BY ?link.metadata.expires_at ASC LIMIT 200"#,
            q(&p)
        );
        // candidates without the lock, each read again under it
        let bound = widened(&cx.opts.now, true);
        let v = cx.unlocked(nx, |nx| find(nx, &text, json!({"bound": bound})))?;
        for r in rows(&v, 3) {
            if deleted + links >= cap {
                break;
            }
            cx.yield_lock(nx)?;
            let again = find(
                nx,
                &format!(
                    r#"FIND(?link, ?s, ?o) WHERE {{ ?s {{id: :s}} ?o {{id: :o}} ?link (?s, {}, ?o) FILTER(IS_NOT_NULL(?link.metadata.expires_at)) }}"#,
                    q(&p)
                ),
                json!({"s": s(&r[1], &["id"]), "o": s(&r[2], &["id"])}),
            );
            let r = match again {
                Ok(v) => match rows(&v, 3).into_iter().next() {
                    Some(r) => r,
                    None => continue,
                },
                Err(e) if e.code == ErrorCode::NotFound => continue,
                Err(e) => return Err(e),
            };
            if before(&s(&r[0], &["metadata", "expires_at"]), &cx.opts.now) != Some(true) {
                continue;
            }
            let id = s(&r[0], &["id"]);
            let label = format!("{} {} {}", s(&r[1], &["name"]), p, s(&r[2], &["name"]));
            let ends = [s(&r[1], &["id"]), s(&r[2], &["id"])];
            if ends.iter().any(|e| held_ids.contains(e)) {
                let until = shift(&cx.opts.now, cx.opts.params.archive_ttl_days);
                extend_ttl(cx, nx, &id, &until, "its node is held back")?;
                held.push(format!(
                    "link {label} (its node is held back; kept until {until})"
                ));
                continue;
            }
            // a landmark keeps its links: they are part of what it was
            if let Some(end) = [&r[1], &r[2]].into_iter().find(|n| is_landmark(n)) {
                let what = format!("{}:{}", s(end, &["type"]), s(end, &["name"]));
                note(
                    nx,
                    &id,
                    &label,
                    cx.run,
                    "kept",
                    "a link of a landmark is never reclaimed: TTL dropped",
                    &json!({"landmark": what, "now": cx.opts.now}),
                )?;
                write(
                    cx,
                    nx,
                    r#"DELETE METADATA {"expires_at"} FROM ?l WHERE { ?l (id: :id) }"#,
                    json!({"id": id}),
                    &format!("keep link {label}: a link of landmark {what}"),
                )?;
                held.push(format!(
                    "link {label} (a link of landmark {what}: kept, TTL dropped)"
                ));
                continue;
            }
            if s(&r[1], &["type"]) == "Event"
                && !matches!(
                    s(&r[1], &["attributes", "consolidation_status"]).as_str(),
                    "completed" | "archived" | "consolidated"
                )
            {
                held.push(format!("link {label} (its Event is not consolidated)"));
                continue;
            }
            let exp = s(&r[0], &["metadata", "expires_at"]);
            note(
                nx,
                &id,
                &label,
                cx.run,
                "deleted",
                "TTL reclamation of an expired link",
                &json!({"expires_at": exp, "now": cx.opts.now}),
            )?;
            write(
                cx,
                nx,
                r#"DELETE PROPOSITIONS ?link WHERE { ?link (id: :id) }"#,
                json!({"id": id}),
                &format!("TTL reclamation: link expired {exp}"),
            )?;
            links += 1;
        }
    }
    // 12D: a superseded link is history and should carry no TTL; one that
    // does is kept and said, never deleted
    let mut history_ttl = 0usize;
    for (p, _) in predicates(nx)? {
        let v = cx.unlocked(nx, |nx| {
            find(
                nx,
                &format!(
                    r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(?link.metadata.superseded == true)
  FILTER(IS_NOT_NULL(?link.metadata.expires_at))
}} LIMIT 50"#,
                    q(&p)
                ),
                json!({}),
            )
        })?;
        for r in rows(&v, 3) {
            history_ttl += 1;
            suspicious.push(format!(
                "superseded link {} {p} {} carries expires_at {}: it is history, kept",
                s(&r[1], &["name"]),
                s(&r[2], &["name"]),
                s(&r[0], &["metadata", "expires_at"])
            ));
        }
    }
    cx.count("superseded_links_with_ttl", history_ttl as i64);
    cx.count("ttl_review_tasks", review_tasks as i64);
    // named up to a bound; a memory with thousands says how many
    cx.count("suspicious_ttls", suspicious.len() as i64);
    for s in suspicious.iter().take(LISTED) {
        cx.report
            .issues
            .push(format!("Suspicious TTL (not deleted): {s}"));
    }
    if suspicious.len() > LISTED {
        cx.report.issues.push(format!(
            "Suspicious TTL (not deleted): {} more, not listed ({} in all; each kept; {REVIEW_TASKS_PER_CYCLE} review SleepTasks at most a cycle)",
            suspicious.len() - LISTED,
            suspicious.len()
        ));
    }
    for h in &held {
        cx.progress(Some(format!("held: {h}")), false);
    }
    if !held.is_empty() {
        let more = held.len().saturating_sub(LISTED);
        cx.report.issues.push(format!(
            "{} expired elements held back: {}{}",
            held.len(),
            held.iter()
                .take(LISTED)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ));
    }
    cx.count("deleted_nodes", deleted as i64);
    cx.count("deleted_links", links as i64);
    cx.count("held", held.len() as i64);
    cx.line(format!(
        "Physical cleanup: hard-deleted {deleted} expired nodes{} and {links} links; {} held",
        if by_type.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                by_type
                    .iter()
                    .map(|(t, n)| format!("{n} {t}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        held.len()
    ));
    Ok(())
}

/// Expired nodes of a type read per page, and pages read per type a
/// cycle at most (kept ones are skipped past, never re-read forever).
pub const RECLAIM_PAGE: usize = 200;
pub const RECLAIM_PAGES: usize = 100;

/// Suspicious TTLs and held items named in the report at most (the rest
/// are counted).
pub const LISTED: usize = 20;

/// Review SleepTasks a cycle creates for suspicious TTLs at most.
pub const REVIEW_TASKS_PER_CYCLE: usize = 20;

/// A `review` SleepTask for a node that carries a TTL its type does not
/// allow (most likely a statement-level `WITH METADATA` default that
/// spread onto it), unless one for it exists already. Whether one was made.
fn review_ttl_task(
    cx: &mut Cx,
    nx: &mut Nexus,
    ty: &str,
    name: &str,
    exp: &str,
) -> KipResult<bool> {
    let task = format!("Review TTL on {ty}:{name}");
    let exists = find(
        nx,
        r#"FIND(COUNT(?t)) WHERE { ?t {type: "SleepTask"} FILTER(?t.name == :n) }"#,
        json!({"n": task}),
    )?;
    if count_of(&exists) > 0 {
        return Ok(false);
    }
    write(
        cx,
        nx,
        r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :task}
  SET ATTRIBUTES { target_type: :ty, target_name: :name, requested_action: "review", reason: :reason, status: "pending", priority: 2 }
  SET PROPOSITIONS { ("assigned_to", {type: "Person", name: "$system"}) ("belongs_to_domain", {type: "Domain", name: "System"}) } } }
WITH METADATA { source: "TTLReclamation", author: "$system", created_at: :ts }"#,
        json!({
            "task": task,
            "ty": ty,
            "name": name,
            "reason": format!("{ty}:{name} carries expires_at {exp}, but a {ty} is not TTL-deletable: most likely a statement-level WITH METADATA default; remove the TTL, or mark the node memory_tier short-term if it is meant to go"),
            "ts": cx.opts.now,
        }),
        &format!(
            "TTL reclamation: {ty}:{name} has a TTL its type does not allow; a review task, not a deletion"
        ),
    )?;
    Ok(true)
}

/// Salience at which an Event is a landmark (5A).
pub const LANDMARK_SALIENCE: f64 = 90.0;

/// Whether an Event's or Experience's learning is done: consolidated
/// (`completed`, or `consolidated` as some writers say) or archived.
fn trace_done(attrs: &Value) -> bool {
    matches!(
        s(attrs, &["consolidation_status"]).as_str(),
        "completed" | "archived" | "consolidated"
    )
}

/// The Experience a step belongs to, when that Experience is still to be
/// learnt from: not archived, and either not yet consolidated or not yet
/// expired itself (12A.4: a step goes only with its Experience, or once
/// the Experience is archived).
fn live_parent(nx: &mut Nexus, step: &str, now: &str) -> KipResult<Option<String>> {
    let v = find(
        nx,
        r#"FIND(?x) WHERE { ?st {id: :id} ?x {type: "Experience"} (?x, "has_step", ?st) } LIMIT 20"#,
        json!({"id": step}),
    )?;
    for x in v.as_array().into_iter().flatten() {
        let attrs = x.get("attributes").cloned().unwrap_or(Value::Null);
        let archived = s(&attrs, &["consolidation_status"]) == "archived"
            || s(&attrs, &["status"]) == "archived";
        if archived {
            continue;
        }
        let expired = before(&s(x, &["metadata", "expires_at"]), now) == Some(true);
        if !trace_done(&attrs) || !expired || s(&attrs, &["status"]) == "ongoing" {
            return Ok(Some(s(x, &["name"])));
        }
    }
    Ok(None)
}

/// The concepts that cite an element as their evidence (`derived_from`
/// it), by element id.
pub(super) fn dependents(nx: &mut Nexus, id: &str) -> KipResult<Vec<Value>> {
    let v = find(
        nx,
        r#"FIND(?k) WHERE { ?e {id: :id} (?k, "derived_from", ?e) } LIMIT 200"#,
        json!({"id": id}),
    )?;
    Ok(v.as_array().cloned().unwrap_or_default())
}

/// How many of them are Insights or GrowthMilestone Events.
pub(super) fn citing_insights(deps: &[Value]) -> usize {
    deps.iter()
        .filter(|k| {
            s(k, &["type"]) == "Insight"
                || (s(k, &["type"]) == "Event"
                    && s(k, &["attributes", "event_class"]) == "GrowthMilestone")
        })
        .count()
}

/// The first of them whose only `derived_from` evidence is this element
/// (counted by element id, so a same-name concept of another type does not
/// stand in for it).
pub(super) fn sole_evidence_of(nx: &mut Nexus, deps: &[Value]) -> KipResult<Option<String>> {
    for k in deps {
        let kid = s(k, &["id"]);
        let c = find(
            nx,
            r#"FIND(COUNT(?src)) WHERE { ?k {id: :k} (?k, "derived_from", ?src) }"#,
            json!({"k": kid}),
        )?;
        if count_of(&c) <= 1 {
            return Ok(Some(format!("{}:{}", s(k, &["type"]), s(k, &["name"]))));
        }
    }
    Ok(None)
}

/// A landmark: a node kept long-term, pinned, or an Event salient enough
/// to be one (5A).
pub(super) fn is_landmark(node: &Value) -> bool {
    s(node, &["metadata", "memory_tier"]) == "long-term"
        || node.pointer("/metadata/pinned") == Some(&Value::Bool(true))
        || (s(node, &["type"]) == "Event"
            && node
                .pointer("/attributes/salience_score")
                .and_then(Value::as_f64)
                .is_some_and(|x| x >= LANDMARK_SALIENCE))
}

/// Marks an Event long-term and strips its TTL (5A landmark promotion).
pub(super) fn promote_landmark(
    cx: &mut Cx,
    nx: &mut Nexus,
    id: &str,
    label: &str,
    why: &str,
) -> KipResult<()> {
    note(
        nx,
        id,
        label,
        cx.run,
        "promoted",
        &format!("landmark ({why}): memory_tier long-term, TTL stripped, never reclaimed"),
        &json!({"why": why, "now": cx.opts.now}),
    )?;
    write(
        cx,
        nx,
        r#"UPDATE ?e SET METADATA { memory_tier: "long-term" } WHERE { ?e {id: :id} }"#,
        json!({"id": id}),
        &format!("landmark promotion: {why}"),
    )?;
    write(
        cx,
        nx,
        r#"DELETE METADATA {"expires_at"} FROM ?e WHERE { ?e {id: :id} }"#,
        json!({"id": id}),
        &format!("landmark promotion: {why}"),
    )?;
    cx.progress(Some(format!("landmark kept: {label} ({why})")), false);
    Ok(())
}

/// Drops an element's `expires_at`: it is kept for good.
fn keep_whole(cx: &mut Cx, nx: &mut Nexus, id: &str, what: &str) -> KipResult<()> {
    write(
        cx,
        nx,
        r#"DELETE METADATA {"expires_at"} FROM ?e WHERE { ?e {id: :id} }"#,
        json!({"id": id}),
        &format!("keep {what}: archived with nothing extracted, its text exists nowhere else"),
    )?;
    // its links stay with it
    write(
        cx,
        nx,
        r#"DELETE METADATA {"expires_at"} FROM ?l WHERE { ?e {id: :id} ?l (?e, ?p, ?o) }"#,
        json!({"id": id}),
        &format!("keep the links of {what} with it"),
    )?;
    Ok(())
}

/// Moves an element's `expires_at` to `until` (a held item is not lost to
/// the next cycle either).
pub(super) fn extend_ttl(
    cx: &Cx,
    nx: &mut Nexus,
    id: &str,
    until: &str,
    why: &str,
) -> KipResult<()> {
    let target = if id.starts_with("P:") {
        r#"UPDATE ?x SET METADATA { expires_at: :until } WHERE { ?x (id: :id) }"#
    } else {
        r#"UPDATE ?x SET METADATA { expires_at: :until } WHERE { ?x {id: :id} }"#
    };
    write(
        cx,
        nx,
        target,
        json!({"id": id, "until": until}),
        &format!("TTL extended: held back ({why})"),
    )?;
    Ok(())
}
