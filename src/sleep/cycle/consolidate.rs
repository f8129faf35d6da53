//! Phase 5: consolidation of stale Events, cross-event patterns, the commitment sweep.

use super::context::*;
use super::prospective::prospective_sweep;
use super::reclaim::LANDMARK_SALIENCE;
use super::skills::procedural_consolidation;

pub(super) fn linked_of(nx: &mut Nexus, e: &mut EventView) -> KipResult<()> {
    let v = find(
        nx,
        r#"FIND(?x) WHERE { ?e {type: "Event", name: :n} (?e, "mentions" | "involves", ?x) } LIMIT 50"#,
        json!({"n": e.name}),
    )?;
    e.linked = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| (s(x, &["type"]), s(x, &["name"])))
                .collect()
        })
        .unwrap_or_default();
    // what already keeps its knowledge elsewhere: a concept derived from
    // it (a line OpenClaw's memory promotion copied into MEMORY.md)
    let kept = find(
        nx,
        r#"FIND(?x.type, ?x.name) WHERE { ?e {type: "Event", name: :n} (?x, "derived_from", ?e) } LIMIT 50"#,
        json!({"n": e.name}),
    )?;
    for row in kept.as_array().into_iter().flatten() {
        let pair = (
            row[0].as_str().unwrap_or_default().to_string(),
            row[1].as_str().unwrap_or_default().to_string(),
        );
        if pair.0 != "Event" && !pair.1.is_empty() && !e.linked.contains(&pair) {
            e.linked.push(pair);
        }
    }
    let d = find(
        nx,
        r#"FIND(?d.name) WHERE { ?e {type: "Event", name: :n} (?e, "belongs_to_domain", ?d) } LIMIT 10"#,
        json!({"n": e.name}),
    )?;
    e.domains = strs(Some(&d));
    Ok(())
}

/// The TTL an archived transient Event gets: `archived_at +
/// archive_ttl_days` is the floor (an earlier expiry would let the next
/// cycle delete what this one promises to keep for that long); a later one
/// stands.
fn archive_ttl(cx: &Cx, e: &EventView) -> String {
    let ttl = shift(&cx.opts.now, cx.opts.params.archive_ttl_days);
    match &e.expires_at {
        Some(x) if later(x, &ttl) => x.clone(),
        _ => ttl,
    }
}

/// Whether RFC 3339 time `a` is after `b`, compared as instants.
fn later(a: &str, b: &str) -> bool {
    match (
        chrono::DateTime::parse_from_rfc3339(a),
        chrono::DateTime::parse_from_rfc3339(b),
    ) {
        (Ok(x), Ok(y)) => x > y,
        _ => false,
    }
}

pub(super) fn consolidation_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    mut events: Vec<EventView>,
) -> KipResult<Vec<Draft>> {
    for e in events.iter_mut() {
        linked_of(nx, e)?;
    }
    let gists = cx.reasoner.gist(&mut Look(nx), &events)?;
    let mut drafts = Vec::new();
    let mut untyped: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unread: Vec<String> = Vec::new();
    let mut untold: Vec<String> = Vec::new();
    let mut asked: Vec<String> = Vec::new();
    let mut lessons: Vec<String> = Vec::new();
    let mut one_off: Vec<String> = Vec::new();
    let mut foreign: Vec<(String, &'static str)> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    let mut headings = super::routine::Headings::default();
    // the first Event this cycle proposes each new concept from: another
    // that states it too says so (each item still applies on its own)
    let mut first_stated: BTreeMap<(String, String), String> = BTreeMap::new();
    for (g, e) in gists.iter().zip(&events) {
        if e.salience.unwrap_or(0.0) >= LANDMARK_SALIENCE {
            drafts.push(Draft {
                class: "consolidate".into(),
                key: format!("landmark:{}", e.id),
                title: format!("Keep {} as a landmark (salience {})", e.name, e.salience.unwrap_or(0.0)),
                commands: vec![
                    r#"UPSERT { CONCEPT ?landmark { {type: "Event", name: :event_name} SET ATTRIBUTES { consolidation_status: "completed", consolidated_at: :ts } } WITH METADATA { memory_tier: "long-term" } } WITH METADATA { source: "LandmarkPromotion", author: "$system", created_at: :ts }"#.to_string(),
                    r#"DELETE METADATA {"expires_at"} FROM ?landmark WHERE { ?landmark {type: "Event", name: :event_name} }"#.to_string(),
                ],
                params: pm(json!({"event_name": e.name, "ts": cx.opts.now})),
                rationale: format!("salience ≥ {LANDMARK_SALIENCE} makes an Event autobiographical: promoted instead of archived"),
                evidence: vec![e.id.clone()],
                confidence: 0.9,
            });
            continue;
        }
        let mut params = pm(json!({"event_name": e.name, "ts": cx.opts.now}));
        let (mut commands, new) = if g.archive {
            (Vec::new(), Vec::new())
        } else {
            extraction_commands(cx, nx, e, &g.extracted, &mut params, &mut untyped)?
        };
        if g.archive || (g.into.is_empty() && new.is_empty()) {
            // a tool call's log may expire; any other Event archived with
            // nothing extracted is the only copy of what it says: kept
            let transient = crate::sleep::reasoner::is_transient_class(&e.class);
            // the heuristic reasoner reads cues; a note that states things
            // in another form (`Sprache: Deutsch default`) is not "nothing
            // durable": it stays as it is, for a reasoner that reads it or
            // for the operator (said in the report)
            let said = match e.class.as_str() {
                "Conversation" => crate::sleep::extraction::users_turns(&e.summary),
                _ => e.summary.clone(),
            };
            // (a log's regular entry, `Auto-save Checkpoint` written every
            // half hour, states the moment's state in such lines:
            // `Session status: Idle`)
            let mut regular = None;
            if !transient && cx.reasoner.name() == "heuristic" {
                // a text in a language none of its cues is written in
                // (Hebrew, Indonesian) is one it cannot call "nothing
                // durable"
                if let Some(lang) = crate::sleep::extraction::unread_language(&said) {
                    foreign.push((e.name.clone(), lang));
                    continue;
                }
                regular = headings.routine(nx, e)?;
                // nor is what someone close to the user likes or decided
                // ("their partner … likes food"): no one's but the user's
                // is filed
                if crate::sleep::extraction::tells_of_others(&said) {
                    others.push(e.name.clone());
                    continue;
                }
                if crate::sleep::extraction::states_knowledge(&said) && regular.is_none() {
                    unread.push(e.name.clone());
                    continue;
                }
                // nor is a section of decisions, lessons or rules
                // (`決定事項`, `LINEスタンプ制作の教訓`, `Lessons learned`)
                // (or a section about someone or something, `かっぴーについて`)
                // (or one that holds tasks still open, `- [ ] …`)
                if crate::sleep::extraction::records_lessons(&e.name, &said)
                    || crate::sleep::extraction::describes(&e.name, &said)
                    || crate::sleep::extraction::holds_open_tasks(&said)
                {
                    lessons.push(e.name.clone());
                    continue;
                }
                // what the user told of themselves in a conversation, in
                // words no cue reads, is not "nothing durable" either
                if e.class == "Conversation" && crate::sleep::extraction::tells_of_self(&said) {
                    untold.push(e.name.clone());
                    continue;
                }
                // nor is what the user asked the agent to keep, or a rule
                // they set it ("remember", "from now on", "deixa de")
                if e.class == "Conversation" && crate::sleep::extraction::asks_to_keep(&said) {
                    asked.push(e.name.clone());
                    continue;
                }
                // nor is a daily note's section of notes or tasks
                // (`技術メモ`), or on a subject no other day has (a
                // client's meeting), saying something of its own: only a
                // routine section (`概要`, a heartbeat) is a log's line
                if headings.of_its_own(nx, e)? {
                    one_off.push(e.name.clone());
                    continue;
                }
            }
            let mut commands = vec![
                r#"UPSERT {
  CONCEPT ?event {
    {type: "Event", name: :event_name}
    SET ATTRIBUTES { consolidation_status: "archived", consolidated_at: :ts }
    SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) }
  }
}
WITH METADATA { source: "SleepConsolidation", author: "$system", created_at: :ts }"#
                    .to_string(),
            ];
            let mut params = pm(json!({"event_name": e.name, "ts": cx.opts.now}));
            let rationale = if transient {
                // the TTL goes on the node alone, in its own statement: a
                // block's metadata would land on the Archived link too
                commands.push(
                    r#"UPSERT { CONCEPT ?event { {type: "Event", name: :event_name} } WITH METADATA { expires_at: :archive_expires_at } }"#
                        .to_string(),
                );
                params.insert("archive_expires_at".into(), json!(archive_ttl(cx, e)));
                format!(
                    "{}; archived with a {}-day TTL so TTL reclamation can free it",
                    g.rationale, cx.opts.params.archive_ttl_days
                )
            } else {
                format!(
                    "{}{}; archived and kept whole (its text is held nowhere else, so no TTL)",
                    g.rationale,
                    regular.map_or(String::new(), |s| format!(
                        "; its heading is a log's regular entry, written {} times on {} {}",
                        s.written(),
                        s.days,
                        if s.days == 1 { "day" } else { "days" }
                    ))
                )
            };
            if regular.is_some() {
                cx.regular_entries.insert(e.id.clone());
            }
            drafts.push(Draft {
                class: "archive".into(),
                key: format!("archive:{}", e.id),
                title: format!("Archive {} (nothing durable to extract)", e.name),
                commands,
                params,
                rationale,
                evidence: vec![e.id.clone()],
                confidence: 0.8,
            });
        } else {
            let mut text = String::from(
                "UPSERT {\n  CONCEPT ?event {\n    {type: \"Event\", name: :event_name}\n    SET ATTRIBUTES { consolidation_status: \"completed\", consolidated_at: :ts }\n    SET PROPOSITIONS {\n",
            );
            let mut into = g.into.clone();
            into.extend(new.iter().cloned());
            let mut also: Vec<String> = Vec::new();
            for n in &new {
                match first_stated.get(n) {
                    Some(first) if !also.contains(first) => also.push(first.clone()),
                    Some(_) => {}
                    None => {
                        first_stated.insert(n.clone(), e.name.clone());
                    }
                }
            }
            for (i, (t, n)) in into.iter().enumerate() {
                text.push_str(&format!(
                    "      (\"consolidated_to\", {{type: :t{i}, name: :n{i}}})\n"
                ));
                params.insert(format!("t{i}"), json!(t));
                params.insert(format!("n{i}"), json!(n));
            }
            text.push_str("    }\n  }\n}\nWITH METADATA { source: \"SleepConsolidation\", author: \"$system\", created_at: :ts, confidence: 0.8 }");
            commands.push(text);
            drafts.push(Draft {
                class: "consolidate".into(),
                key: format!("consolidate:{}", e.id),
                title: format!(
                    "Consolidate {} into {}{}",
                    e.name,
                    into.iter()
                        .map(|(t, n)| format!("{t}:{n}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    match (new.len(), also.is_empty()) {
                        (0, _) => String::new(),
                        (n, true) => format!(" ({n} new)"),
                        (n, false) => format!(" ({n} new, as {} also proposes)", also.join(", ")),
                    }
                ),
                commands,
                params,
                rationale: if new.is_empty() {
                    g.rationale.clone()
                } else {
                    format!(
                        "{}; it states {}",
                        g.rationale,
                        g.extracted
                            .iter()
                            .filter(|x| new.iter().any(|(_, n)| *n == x.name))
                            .map(|x| format!("{} (\"{}\": {})", x.a_kind(), x.cue, x.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
                evidence: vec![e.id.clone()],
                confidence: 0.8,
            });
        }
    }
    for (ty, names) in untyped {
        cx.line(format!(
            "Events state {} {} the memory has no {ty} type to keep in: {}",
            names.len(),
            if names.len() == 1 { "thing" } else { "things" },
            names
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    left_as_they_are(cx, "stale_events_unread", "stale Event", &unread, |one| {
        format!(
            "{} things in a form the heuristic reasoner does not read (`Label: value` lines)",
            if one { "it states" } else { "they state" }
        )
    });
    left_as_they_are(
        cx,
        "stale_conversations_unread",
        "conversation",
        &untold,
        |_| {
            "the user told the agent of themselves in words the heuristic reasoner does not read (a message of eight words or more in the first person)".to_string()
        },
    );
    left_as_they_are(
        cx,
        "stale_conversations_asked",
        "conversation",
        &asked,
        |_| {
            "the user asked the agent to remember something or set it a rule, in words the heuristic reasoner does not read (`remember`, `from now on`, `deixa de`, `记住`)".to_string()
        },
    );
    left_as_they_are(
        cx,
        "stale_notes_of_their_own",
        "stale Event",
        &one_off,
        |one| {
            format!(
                "{} of notes or tasks, or on a subject no other day's note has, saying something of {} own in words the heuristic reasoner does not read (only a routine section, one that recurs from day to day, is archived as holding nothing)",
                if one {
                    "it is a daily note's section"
                } else {
                    "they are daily notes' sections"
                },
                if one { "its" } else { "their" }
            )
        },
    );
    let mut languages: Vec<&str> = foreign.iter().map(|(_, l)| *l).collect();
    languages.sort_unstable();
    languages.dedup();
    let foreign_names: Vec<String> = foreign.into_iter().map(|(n, _)| n).collect();
    left_as_they_are(
        cx,
        "stale_events_foreign",
        "stale Event",
        &foreign_names,
        |one| {
            format!(
                "{} written in {}, a language the heuristic reasoner reads no cue of (a reasoner that reads it, or the operator, can say what is durable there)",
                if one { "it is" } else { "they are" },
                languages.join(", ")
            )
        },
    );
    left_as_they_are(
        cx,
        "stale_events_of_others",
        "stale Event",
        &others,
        |one| {
            format!(
                "{} what someone close to the user (a partner, a friend, a colleague) likes, decided or plans, which the heuristic reasoner files as no one's",
                if one { "it states" } else { "they state" }
            )
        },
    );
    left_as_they_are(cx, "stale_lessons_unread", "stale Event", &lessons, |one| {
        format!(
            "{} decisions, lessons or rules, tasks still open, or what someone or something is, in words the heuristic reasoner does not read (a section or a label that says so, a `- [ ]` line)",
            if one { "it records" } else { "they record" }
        )
    });
    Ok(drafts)
}

/// Reports (and counts as `metric`) the Events the heuristic reasoner left
/// as they are rather than call them "nothing durable", and why (`why`,
/// told whether there is one).
fn left_as_they_are(
    cx: &mut Cx,
    metric: &str,
    noun: &str,
    names: &[String],
    why: impl Fn(bool) -> String,
) {
    if names.is_empty() {
        return;
    }
    cx.count(metric, names.len() as i64);
    let one = names.len() == 1;
    cx.line(format!(
        "Left {} {noun}{} as {}: {}, so {} not \"nothing durable\"; an LLM reasoner or the operator can consolidate {}: {}",
        names.len(),
        if one { "" } else { "s" },
        if one { "it is" } else { "they are" },
        why(one),
        if one { "it is" } else { "they are" },
        if one { "it" } else { "them" },
        names.join(", ")
    ));
}

/// The commands that create what an Event states (5A): each new concept
/// with `derived_from` the Event, in the Event's domain, and the holder's
/// `prefers` link for a Preference. Skipped, with a line in the report:
/// what the memory already holds (a concept of that type and name, or a
/// linked concept with the same words), and kinds the memory has no type
/// for.
fn extraction_commands(
    cx: &mut Cx,
    nx: &mut Nexus,
    e: &EventView,
    extracted: &[Extracted],
    params: &mut Map<String, Value>,
    untyped: &mut BTreeMap<String, Vec<String>>,
) -> KipResult<(Vec<String>, Vec<TypeName>)> {
    let mut commands = Vec::new();
    let mut new = Vec::new();
    // the memory's one user, who holds what a clause says of the user
    let user = if extracted.iter().any(|x| x.holder.is_none()) {
        let v = find(
            nx,
            r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") } LIMIT 2"#,
            json!({}),
        )?;
        match strs(Some(&v)).as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    } else {
        None
    };
    for (k, x) in extracted.iter().enumerate() {
        // (or the Event's own heading does: "强哥核心工作准则", the user's
        // core rules of work)
        // (or the heading of the section it is in: "### 阿杰設計偏好", the
        // user's design preferences)
        let holder = x.holder.clone().or_else(|| {
            user.clone().filter(|u| {
                crate::sleep::extraction::names_the_user(&x.clause, u)
                    || crate::sleep::extraction::names_the_user(&e.name, u)
                    || crate::sleep::extraction::heading_over(&e.summary, &x.clause)
                        .is_some_and(|h| crate::sleep::extraction::names_the_user(h, u))
            })
        });
        // what something does ("Never auto-applies", of a module) is the
        // user's habit only when the user is who it is said of
        if x.kind == "habit" && holder.is_none() {
            cx.rule("consolidation: extract a habit", false);
            continue;
        }
        let known = count_of(&find(
            nx,
            r#"FIND(COUNT(?c)) WHERE { ?c {type: "$ConceptType", name: :t} }"#,
            json!({"t": x.ty}),
        )?) > 0;
        if !known {
            cx.rule(&format!("consolidation: extract a {}", x.kind), false);
            let seen = untyped.entry(x.ty.clone()).or_default();
            if !seen.contains(&x.name) {
                seen.push(x.name.clone());
            }
            continue;
        }
        let exists = count_of(&find(
            nx,
            r#"FIND(COUNT(?c)) WHERE { ?c {type: :t, name: :n} }"#,
            json!({"t": x.ty, "n": x.name}),
        )?) > 0
            || e.linked
                .iter()
                .any(|(_, n)| similarity::overlap(n, &x.name) >= EXTRACTION_KNOWN_OVERLAP);
        cx.rule(&format!("consolidation: extract a {}", x.kind), !exists);
        if exists {
            continue;
        }
        let domain = e
            .domains
            .iter()
            .find(|d| !SYSTEM_DOMAINS.contains(&d.as_str()))
            .cloned()
            .unwrap_or_else(|| "Unsorted".into());
        params.insert(format!("xt{k}"), json!(x.ty));
        params.insert(format!("xn{k}"), json!(x.name));
        params.insert(format!("xd{k}"), json!(x.description));
        params.insert(format!("xdom{k}"), json!(domain));
        params.insert(format!("xstart{k}"), json!(e.start));
        commands.push(format!(
            r#"UPSERT {{
  CONCEPT ?new {{
    {{type: :xt{k}, name: :xn{k}}}
    SET ATTRIBUTES {{ description: :xd{k}, evidence_count: 1, first_observed: :xstart{k}, last_observed: :xstart{k}, source_memory: :event_name }}
    SET PROPOSITIONS {{
      ("derived_from", {{type: "Event", name: :event_name}})
      ("belongs_to_domain", {{type: "Domain", name: :xdom{k}}})
    }}
  }}
}}
WITH METADATA {{ source: "SleepConsolidation", author: "$system", created_at: :ts, confidence: 0.7 }}"#
        ));
        if x.ty == "Preference"
            && let Some(h) = &holder
        {
            params.insert(format!("xh{k}"), json!(h));
            commands.push(format!(
                r#"UPSERT {{
  PROPOSITION ?likes {{ ({{type: "Person", name: :xh{k}}}, "prefers", {{type: :xt{k}, name: :xn{k}}}) }}
}}
WITH METADATA {{ source: "SleepConsolidation", author: "$system", created_at: :ts, observed_at: :xstart{k}, confidence: 0.7 }}"#
            ));
        }
        new.push((x.ty.clone(), x.name.clone()));
    }
    Ok((commands, new))
}

/// A concept as (type, name).
type TypeName = (String, String);

/// An extracted statement whose words overlap a concept the Event already
/// links to this much is already known.
pub(super) const EXTRACTION_KNOWN_OVERLAP: f64 = 0.6;

pub(super) fn consolidate(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    // 5A: stale unconsolidated Events
    cx.step("stale Events", 0, 0);
    let cutoff = cx.days_ago(cx.opts.params.stale_event_threshold_days);
    // (an Event archived or consolidated before, or pinned, is not
    // stale: left out by the query itself, so the oldest of them never
    // fill the page and hide the Events that still wait)
    let v = find(
        nx,
        &format!(
            r#"FIND(?e) WHERE {{
  ?e {{type: "Event"}}
  FILTER(?e.attributes.start_time < :cutoff_date)
  NOT {{ (?e, "consolidated_to", ?semantic) }}
  {}
}} ORDER BY ?e.attributes.start_time ASC LIMIT 200"#,
            crate::sleep::health::STILL_WAITING
        ),
        json!({"cutoff_date": widened(&cutoff, true)}),
    )?;
    let stale: Vec<EventView> = v
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|e| before(&s(e, &["attributes", "start_time"]), &cutoff) == Some(true))
                .filter(|e| {
                    !matches!(
                        s(e, &["attributes", "consolidation_status"]).as_str(),
                        "archived" | "completed"
                    )
                })
                .map(event_view)
                .collect()
        })
        .unwrap_or_default();
    let n_stale = stale.len();
    cx.stale = Some(stale.clone());
    cx.step("stale Events", 0, n_stale as u64);
    let drafts = consolidation_drafts(cx, nx, stale)?;
    let archive = drafts.iter().filter(|d| d.class == "archive").count();
    let into = drafts.iter().filter(|d| d.class == "consolidate").count();
    stage(cx, nx, drafts)?;
    cx.count("stale_events", n_stale as i64);
    if archive + into > 0 {
        let of = if archive + into < n_stale {
            format!(" of {n_stale}")
        } else {
            String::new()
        };
        cx.line(format!(
            "Proposed consolidating {}{of} stale Events ({into} into semantic concepts, {archive} archived)",
            archive + into,
        ));
    }
    cx.cancelled()?;
    // 5B: cross-event patterns
    cx.step("cross-event patterns", 0, 0);
    let lookback = cx.days_ago(LOOKBACK_DAYS);
    let recent = recent_events(cx, nx)?;
    let consolidated: HashSet<String> = {
        let c = find(
            nx,
            r#"FIND(?e.name) WHERE { ?e {type: "Event"} (?e, "consolidated_to", ?s) FILTER(?e.attributes.start_time >= :lookback_start) } LIMIT 20000"#,
            json!({"lookback_start": widened(&lookback, false)}),
        )?;
        strs(Some(&c)).into_iter().collect()
    };
    let mut clusters = crate::sleep::recurrence::clusters(&recent, &consolidated);
    clusters.sort_by_key(|c| std::cmp::Reverse(c.events.len()));
    clusters.truncate(50);
    for c in clusters.iter_mut() {
        for e in c.events.iter_mut().take(20) {
            linked_of(nx, e)?;
        }
    }
    let patterns = cx.reasoner.patterns(&mut Look(nx), &clusters)?;
    let mut drafts = Vec::new();
    let has_preference = count_of(&find(
        nx,
        r#"FIND(COUNT(?c)) WHERE { ?c {type: "$ConceptType", name: "Preference"} }"#,
        json!({}),
    )?) > 0;
    for (c, p) in clusters.iter().zip(patterns) {
        let Some(mut p) = p else { continue };
        cx.rule(&format!("patterns: {}", p.kind), true);
        if p.ty == "Preference" && !has_preference {
            // kept as what the memory can hold
            p.rationale = format!(
                "{}; kept as an Insight: the memory has no Preference type",
                p.rationale
            );
            p.ty = "Insight".into();
            p.name = format!("Preference: {}", p.name);
        }
        // ground first: an existing concept of that name is reinforced
        let existing = find(
            nx,
            r#"FIND(?x) WHERE { ?x {type: :t, name: :n} }"#,
            json!({"t": p.ty, "n": p.name}),
        )?;
        let first = c
            .events
            .iter()
            .map(|e| e.start.clone())
            .min()
            .unwrap_or_default();
        let last = c
            .events
            .iter()
            .map(|e| e.start.clone())
            .max()
            .unwrap_or_default();
        // an Insight names its class (the capsule requires one): a trait is
        // a reasoning pattern, a routine or topic a discovery about how to
        // work with its holder
        let class_attr = match (p.ty.as_str(), p.kind.as_str()) {
            ("Insight", "trait") => ", insight_class: \"reasoning_pattern\"",
            ("Insight", _) => ", insight_class: \"operational_discovery\"",
            _ => "",
        };
        let mut text = format!(
            "UPSERT {{\n  CONCEPT ?pattern {{\n    {{type: :ptype, name: :pname}}\n    SET ATTRIBUTES {{ description: :description, pattern_kind: :pattern_kind{class_attr}, evidence_count: :evidence_count, first_observed: :first_observed, last_observed: :last_observed }}\n    SET PROPOSITIONS {{\n      (\"belongs_to_domain\", {{type: \"Domain\", name: :domain}})\n",
        );
        let mut params = pm(json!({
            "ptype": p.ty, "pname": p.name, "pattern_kind": p.kind, "description": p.description, "evidence_count": c.events.len(),
            "first_observed": first, "last_observed": last, "domain": p.domain, "ts": cx.opts.now, "confidence": p.confidence,
        }));
        for (i, e) in c.events.iter().take(10).enumerate() {
            text.push_str(&format!(
                "      (\"derived_from\", {{type: \"Event\", name: :ev{i}}})\n"
            ));
            params.insert(format!("ev{i}"), json!(e.name));
        }
        text.push_str("    }\n  }\n");
        // a recurring preference is its holder's (the sleep-mode 5B example)
        let holder_known = c.events.iter().any(|e| {
            e.linked
                .iter()
                .any(|(t, n)| t == "Person" && *n == c.holder)
        });
        if p.ty == "Preference" && holder_known {
            text.push_str("  CONCEPT ?holder {\n    {type: \"Person\", name: :holder_name}\n    SET PROPOSITIONS { (\"prefers\", ?pattern) }\n  }\n");
            params.insert("holder_name".into(), json!(c.holder));
        }
        // the Events the pattern was drawn from are consolidated into it
        for (i, e) in c.events.iter().take(10).enumerate() {
            if consolidated.contains(&e.name) {
                continue;
            }
            text.push_str(&format!(
                "  CONCEPT ?source{i} {{\n    {{type: \"Event\", name: :ev{i}}}\n    SET ATTRIBUTES {{ consolidation_status: \"completed\", consolidated_at: :ts }}\n    SET PROPOSITIONS {{ (\"consolidated_to\", ?pattern) }}\n  }}\n"
            ));
        }
        text.push_str("}\nWITH METADATA { source: \"CrossEventConsolidation\", author: \"$system\", confidence: :confidence, created_at: :ts }");
        let have = existing.as_array().and_then(|a| a.first()).cloned();
        let reinforce = have.is_some();
        if let Some(h) = &have
            && h.get("attributes")
                .and_then(|a| a.get("evidence_count"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
                >= c.events.len() as u64
        {
            continue; // already knows all of it
        }
        drafts.push(Draft {
            class: "pattern".into(),
            key: format!(
                "pattern:{}:{}:{}",
                p.ty,
                similarity::normalise(&p.name),
                c.events.len()
            ),
            title: if reinforce {
                format!(
                    "Reinforce {} \"{}\" ({} Events)",
                    p.ty,
                    p.name,
                    c.events.len()
                )
            } else {
                format!("New {} \"{}\" from {} Events", p.ty, p.name, c.events.len())
            },
            commands: vec![text],
            params,
            rationale: p.rationale.clone(),
            evidence: c.events.iter().take(10).map(|e| e.id.clone()).collect(),
            confidence: p.confidence,
        });
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("patterns", n as i64);
    if n > 0 {
        cx.line(format!("Proposed {n} cross-event patterns"));
    }
    cx.cancelled()?;
    // 5D: Experience → Skill
    procedural_consolidation(cx, nx)?;
    cx.cancelled()?;
    // 5E: what the Experiences since say of the Skills already held
    super::skill_evidence::skill_evidence(cx, nx)?;
    cx.cancelled()?;
    // 5C: the prospective sweep
    prospective_sweep(cx, nx)
}

/// Archival of one named concept: an Event is archived with a TTL (its
/// consolidation path); anything else by the safe-archive pattern.
pub(super) fn archive_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    ty: &str,
    name: &str,
    why: &str,
) -> KipResult<Vec<Draft>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { ?n {type: :t, name: :n} }"#,
        json!({"t": ty, "n": name}),
    )?;
    let Some(node) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(vec![]);
    };
    if ty == "Event" {
        let mut e = event_view(&node);
        linked_of(nx, &mut e)?;
        let mut d = consolidation_drafts(cx, nx, vec![e])?;
        for x in d.iter_mut() {
            x.rationale = format!("{why}: {}", x.rationale);
        }
        return Ok(d.into_iter().filter(|x| x.class == "archive").collect());
    }
    let id = s(&node, &["id"]);
    Ok(vec![Draft {
        class: "archive".into(),
        key: format!("archive:{id}"),
        title: format!("Archive {ty} \"{name}\""),
        commands: vec![
            r#"UPSERT {
  CONCEPT ?item {
    {type: :type, name: :name}
    SET ATTRIBUTES { status: "archived", archived_at: :ts, archived_by: "$system" }
    SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) }
  }
}
WITH METADATA { source: "SleepArchive", author: "$system", created_at: :ts }"#
                .to_string(),
            r#"DELETE PROPOSITIONS ?link
WHERE {
  ?d {type: "Domain"}
  FILTER(?d.name != "Archived")
  ?link ({type: :type, name: :name}, "belongs_to_domain", ?d)
}"#
            .to_string(),
        ],
        params: pm(json!({"type": ty, "name": name, "ts": cx.opts.now})),
        rationale: format!("{why} asks to archive it (safe archive: kept, moved to Archived)"),
        evidence: vec![id],
        confidence: 0.8,
    }])
}
