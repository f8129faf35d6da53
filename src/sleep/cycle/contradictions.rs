//! Phase 9: contradictions and state evolution.

use super::context::*;

pub(super) fn fact(l: &Value, o: &Value) -> FactView {
    let m = l.get("metadata").cloned().unwrap_or(Value::Null);
    let attrs = o.get("attributes").cloned().unwrap_or(Value::Null);
    let text = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
    FactView {
        link: s(l, &["id"]),
        object_type: s(o, &["type"]),
        object: s(o, &["name"]),
        observed_at: text("observed_at").or_else(|| {
            attrs
                .get("last_observed")
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        confidence: m.get("confidence").and_then(Value::as_f64),
        source: text("source"),
        valid_from: text("valid_from"),
        valid_until: text("valid_until"),
        reliability: m
            .get("reliability")
            .or_else(|| m.get("source_reliability"))
            .and_then(Value::as_f64),
        description: s(&attrs, &["description"]),
    }
}

/// A link with its subject and object, as FIND returns them.
pub(super) type Triple = (Value, Value, Value);

/// Predicates whose value cannot change over a life, known by name when
/// their schema does not say `immutable: true`.
pub const IMMUTABLE: &[&str] = &[
    "born_in",
    "born_on",
    "birth_date",
    "date_of_birth",
    "birthplace",
    "place_of_birth",
    "died_in",
    "died_on",
    "date_of_death",
    "biological_parent_of",
    "biological_child_of",
];

/// Preference categories that name one choice (a diet, a time zone, a
/// theme): two current Preferences in one of them are alternatives. In
/// other categories ("food", "music", "tools") Preferences add up, and
/// only a shared name slot or a stated change makes them alternatives.
pub const SINGLE_CHOICE_CATEGORIES: &[&str] = &[
    "diet",
    "dietary",
    "eating",
    "timezone",
    "time zone",
    "tz",
    "theme",
    "ui theme",
    "color scheme",
    "colour scheme",
    "editor",
    "main editor",
    "shell",
    "operating system",
    "os",
    "browser",
    "keyboard layout",
    "units",
    "unit system",
    "measurement units",
    "currency",
    "date format",
    "pronouns",
    "home",
    "residence",
    "seat",
    "salutation",
    "form of address",
    "reply language",
    "response language",
];

/// The fact that survives a contradiction gains this much confidence (it
/// was checked against a rival and kept), never past 0.99: only a person
/// makes a fact certain.
pub const SURVIVOR_BOOST: f64 = 0.05;

/// Words in a newer Preference's name or description that say it replaced
/// an earlier one.
pub const CHANGE_CUES: &[&str] = &[
    "switched",
    "switch",
    "instead",
    "no longer",
    "anymore",
    "any more",
    "again",
    "replaced",
    "gave up",
    "stopped",
    "now ",
    "became",
    "converted",
    "changed",
];

/// How two facts share one slot.
#[derive(Debug, Clone, PartialEq)]
enum Slot {
    /// A single-valued predicate.
    Single,
    /// An explicit `slot` attribute on the object.
    Explicit(String),
    /// The predicate declares its objects' name prefixes as slots
    /// (`slot_by: "name_prefix"`): `Diet: vegetarian`.
    NamePrefix(String),
    /// One Preference `category`.
    Category(String),
}

impl Slot {
    fn label(&self) -> String {
        match self {
            Slot::Single => "single-valued predicate".into(),
            Slot::Explicit(x) => format!("slot {x}"),
            Slot::NamePrefix(x) => format!("name slot {x}"),
            Slot::Category(x) => format!("Preference category {x}"),
        }
    }
}

/// The slots an object occupies for a predicate, strongest first.
fn slots(single: bool, by_prefix: bool, o: &Value) -> Vec<Slot> {
    if single {
        return vec![Slot::Single];
    }
    let mut out = Vec::new();
    let explicit = s(o, &["attributes", "slot"]);
    if !explicit.is_empty() {
        out.push(Slot::Explicit(similarity::normalise(&explicit)));
    }
    let name = s(o, &["name"]);
    if by_prefix && let Some((prefix, _)) = name.split_once(": ") {
        out.push(Slot::NamePrefix(format!(
            "{}: {}",
            s(o, &["type"]),
            similarity::normalise(prefix)
        )));
    }
    let category = s(o, &["attributes", "category"]);
    if s(o, &["type"]) == "Preference" && !category.is_empty() {
        out.push(Slot::Category(similarity::normalise(&category)));
    }
    out
}

/// The name prefixes ("snack" of "Snack: almonds") of the objects whose
/// links of predicate `p` from subject `sid` were superseded: slots this
/// memory has seen one value replace another in (read once per subject).
fn replaced_prefixes(
    nx: &mut Nexus,
    sid: &str,
    p: &str,
    cache: &mut HashMap<String, HashSet<String>>,
) -> KipResult<HashSet<String>> {
    if let Some(h) = cache.get(sid) {
        return Ok(h.clone());
    }
    let v = find(
        nx,
        &format!(
            r#"FIND(?o.name) WHERE {{ ?s {{id: :sid}} ?l (?s, {}, ?o) FILTER(?l.metadata.superseded == true) }} LIMIT 1000"#,
            q(p)
        ),
        json!({"sid": sid}),
    )?;
    let h: HashSet<String> = strs(Some(&v))
        .iter()
        .filter_map(|n| n.split_once(": ").map(|(p, _)| similarity::normalise(p)))
        .collect();
    cache.insert(sid.to_string(), h.clone());
    Ok(h)
}

/// An instant of a fact's validity, if it has one.
fn at(x: &Option<String>) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    x.as_deref().and_then(super::instant)
}

/// Whether two facts held at different times: one ended (`valid_until`)
/// before the other began (`valid_from`, else when it was observed), or
/// ended by `now` while the other's start is unknown (an ended fact is
/// history, not a rival of the current one; one that ends next year still
/// holds).
pub fn time_disjoint(a: &FactView, b: &FactView, now: &str) -> bool {
    let now = super::instant(now);
    let ended_before = |x: &FactView, y: &FactView| match at(&x.valid_until) {
        None => false,
        Some(until) => match at(&y.valid_from).or_else(|| at(&y.observed_at)) {
            Some(from) => until <= from,
            None => now.is_some_and(|n| until <= n),
        },
    };
    ended_before(a, b) || ended_before(b, a)
}

/// Whether two Preferences of one category are alternatives of one
/// choice: a single-choice category, either one marked `exclusive`, one
/// name slot the memory's own history shows replaced (`replaced`: the name
/// prefixes of this subject's superseded objects of the predicate), or the
/// newer one saying it replaced the older by name ("switched from VS
/// Code"). Two names that share a prefix are not alternatives on that
/// alone: "Snack: almonds on night shifts" and "Snack: rice crackers on
/// Saturdays" both hold.
fn alternatives(
    category: &str,
    a: &Value,
    b: &Value,
    newer: &FactView,
    replaced: &HashSet<String>,
) -> bool {
    if SINGLE_CHOICE_CATEGORIES.contains(&category) {
        return true;
    }
    if [a, b]
        .iter()
        .any(|o| o.pointer("/attributes/exclusive") == Some(&Value::Bool(true)))
    {
        return true;
    }
    let prefix = |o: &Value| {
        s(o, &["name"])
            .split_once(": ")
            .map(|(p, _)| similarity::normalise(p))
    };
    if let Some(pa) = prefix(a)
        && prefix(b).as_ref() == Some(&pa)
        && replaced.contains(&pa)
    {
        return true;
    }
    let text = format!(" {} {} ", newer.object, newer.description).to_lowercase();
    let older = if s(a, &["name"]) == newer.object {
        b
    } else {
        a
    };
    let named = similarity::stems_of(&s(older, &["name"]));
    CHANGE_CUES.iter().any(|c| text.contains(&format!(" {c}")))
        && !named.is_empty()
        && !named.is_disjoint(&similarity::stems_of(&text))
}

/// Conflicting facts from one subject: two active links of a single-valued
/// predicate, or two active links of one predicate to objects in one slot
/// (an explicit `slot`, a Preference `category` whose members are
/// alternatives, or a name prefix where the predicate declares it), that
/// held at the same time. Never across subjects or predicates.
pub(super) fn conflicts(
    nx: &mut Nexus,
    subject: Option<&str>,
    now: &str,
) -> KipResult<Vec<Conflict>> {
    conflicts_seen(nx, subject, now, &mut Vec::new())
}

/// [`conflicts`], also saying of each pair looked at which rule saw it and
/// whether it stayed a conflict.
pub(super) fn conflicts_seen(
    nx: &mut Nexus,
    subject: Option<&str>,
    now: &str,
    seen: &mut Vec<(String, bool)>,
) -> KipResult<Vec<Conflict>> {
    let mut out = Vec::new();
    for (p, attrs) in predicates(nx)? {
        if STRUCTURAL.contains(&p.as_str()) {
            continue;
        }
        let single = attrs.get("cardinality").and_then(Value::as_str) == Some("single");
        let by_prefix = attrs.get("slot_by").and_then(Value::as_str) == Some("name_prefix");
        let immutable =
            attrs.get("immutable") == Some(&Value::Bool(true)) || IMMUTABLE.contains(&p.as_str());
        let text = format!(
            r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.archived) || ?link.metadata.archived != true)
  {}
}} LIMIT 20000"#,
            q(&p),
            match (single, by_prefix) {
                (true, _) => "",
                (false, true) => {
                    r#"FILTER(!IS_NULL(?o.attributes.slot) || !IS_NULL(?o.attributes.category) || CONTAINS(?o.name, ": "))"#
                }
                (false, false) => {
                    r#"FILTER(!IS_NULL(?o.attributes.slot) || !IS_NULL(?o.attributes.category))"#
                }
            }
        );
        let v = find(nx, &text, json!({}))?;
        let mut groups: BTreeMap<(String, String), (Slot, Vec<Triple>)> = BTreeMap::new();
        for r in rows(&v, 3) {
            let sid = s(&r[0], &["subject"]);
            if let Some(want) = subject
                && s(&r[1], &["name"]) != want
            {
                continue;
            }
            // an object's strongest slot decides its group
            if let Some(slot) = slots(single, by_prefix, &r[2]).into_iter().next() {
                groups
                    .entry((sid, slot.label()))
                    .or_insert_with(|| (slot, Vec::new()))
                    .1
                    .push((r[0].clone(), r[1].clone(), r[2].clone()));
            }
        }
        // per subject, the name prefixes its superseded objects had
        let mut history: HashMap<String, HashSet<String>> = HashMap::new();
        for ((_, label), (slot, g)) in groups {
            if g.len() < 2 {
                continue;
            }
            // the facts a "needs context" resolution marked disputed: the
            // question is asked already, until one of them changes
            let disputed: HashMap<String, String> = g
                .iter()
                .filter(|(l, _, _)| l.pointer("/metadata/disputed") == Some(&Value::Bool(true)))
                .map(|(l, _, _)| (s(l, &["id"]), s(l, &["metadata", "_updated_at"])))
                .collect();
            // each with the newest it held alongside: n-1 conflicts at most
            let mut facts: Vec<(FactView, &Value, &Value)> =
                g.iter().map(|(l, sj, o)| (fact(l, o), sj, o)).collect();
            facts.sort_by_key(|a| observed(&a.0));
            let Some((newest, subj, newest_obj)) = facts.last().cloned() else {
                continue;
            };
            let rule = match &slot {
                Slot::Single => "contradictions: single-valued predicate",
                Slot::Explicit(_) => "contradictions: explicit slot",
                Slot::NamePrefix(_) => "contradictions: declared name slot",
                Slot::Category(_) => "contradictions: Preference category",
            };
            for (f, _, o) in facts.iter().take(facts.len() - 1) {
                if let (Some(a), Some(b)) = (disputed.get(&f.link), disputed.get(&newest.link))
                    && waiting_for_context(nx, &f.link, &newest.link, a, b)?
                {
                    seen.push((
                        "contradictions: waiting for context (marked needs_context)".into(),
                        false,
                    ));
                    continue;
                }
                if time_disjoint(f, &newest, now) {
                    seen.push(("contradictions: held at different times".into(), false));
                    continue;
                }
                if let Slot::Category(c) = &slot
                    && !alternatives(
                        c,
                        o,
                        newest_obj,
                        &newest,
                        &replaced_prefixes(nx, &s(subj, &["id"]), &p, &mut history)?,
                    )
                {
                    seen.push((rule.into(), false));
                    continue;
                }
                seen.push((rule.into(), true));
                out.push(Conflict {
                    subject_type: s(subj, &["type"]),
                    subject: s(subj, &["name"]),
                    predicate: p.clone(),
                    slot: label.clone(),
                    a: f.clone(),
                    b: newest.clone(),
                    immutable,
                });
            }
        }
    }
    Ok(out)
}

/// The commands that carry out a resolution of a conflict.
pub fn resolution_commands(
    c: &Conflict,
    verdict: Verdict,
    now: &str,
    note: &str,
) -> (Vec<String>, Map<String, Value>) {
    let (older, newer) = if observed(&c.a) <= observed(&c.b) {
        (&c.a, &c.b)
    } else {
        (&c.b, &c.a)
    };
    let supersede = |old: &FactView, cur: &FactView| -> (Vec<String>, Map<String, Value>) {
        (
            vec![r#"UPSERT {
  PROPOSITION ?old_link { (id: :old_link_id) }
  WITH METADATA { superseded: true, superseded_at: :timestamp, superseded_by: :current_link_id, superseded_reason: :reason, resolved_by: "ContradictionResolution", confidence: 0.1 }
  PROPOSITION ?current_link { (id: :current_link_id) }
  WITH METADATA { supersedes: :old_link_id, evolution_note: :temporal_context, resolved_by: "ContradictionResolution", confidence: :boosted_confidence }
}"#
                .to_string()],
            pm(json!({
                "old_link_id": old.link, "current_link_id": cur.link, "timestamp": now,
                "reason": note,
                "temporal_context": format!("{} {} {} from {}; before that {} (observed {})", c.subject, c.predicate, cur.object, cur.observed_at.as_deref().unwrap_or("?"), old.object, old.observed_at.as_deref().unwrap_or("?")),
                "boosted_confidence": ((cur.confidence.unwrap_or(0.8) + SURVIVOR_BOOST).min(0.99) * 100.0).round() / 100.0,
            })),
        )
    };
    match verdict {
        Verdict::KeepNewer => supersede(older, newer),
        Verdict::KeepOlder => supersede(newer, older),
        Verdict::BothValid => (
            vec![r#"UPSERT {
  PROPOSITION ?old_link { (id: :old_link_id) }
  WITH METADATA { valid_until: :boundary, evolution_note: :note, resolved_by: "ContradictionResolution" }
  PROPOSITION ?current_link { (id: :current_link_id) }
  WITH METADATA { valid_from: :boundary, evolution_note: :note, resolved_by: "ContradictionResolution" }
}"#
                .to_string()],
            pm(json!({"old_link_id": older.link, "current_link_id": newer.link, "boundary": newer.observed_at.clone().unwrap_or_else(|| now.to_string()), "timestamp": now, "note": note})),
        ),
        Verdict::Merge => (
            vec![r#"MERGE CONCEPT ?dup INTO ?canonical
WHERE {
  ?dup {type: :old_type, name: :old_name}
  ?canonical {type: :new_type, name: :new_name}
}"#
            .to_string()],
            pm(json!({"old_type": older.object_type, "old_name": older.object, "new_type": newer.object_type, "new_name": newer.object})),
        ),
        Verdict::NeedsContext => (
            vec![r#"UPSERT {
  PROPOSITION ?a { (id: :a_id) }
  PROPOSITION ?b { (id: :b_id) }
}
WITH METADATA { disputed: true, disputed_at: :timestamp, dispute_note: :note }"#
                .to_string()],
            pm(json!({"a_id": older.link, "b_id": newer.link, "timestamp": now, "note": note})),
        ),
    }
}

/// A conflict's identity, whichever fact came first.
pub(super) fn conflict_key(c: &Conflict) -> String {
    let (x, y) = if c.a.link < c.b.link {
        (&c.a.link, &c.b.link)
    } else {
        (&c.b.link, &c.a.link)
    };
    format!("conflict:{x}|{y}")
}

/// Each conflict's proposed resolution, as a draft with its verdict.
pub(super) fn contradiction_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    found: &[Conflict],
) -> KipResult<Vec<(Draft, Verdict)>> {
    cx.step("contradictions", 0, 0);
    let resolutions = cx.reasoner.current_fact(&mut Look(nx), found)?;
    let mut drafts = Vec::new();
    for (c, r) in found.iter().zip(resolutions) {
        let (commands, params) = resolution_commands(c, r.verdict, &cx.opts.now, &r.rationale);
        drafts.push((
            Draft {
                class: "contradiction".into(),
                key: conflict_key(c),
                title: format!(
                    "{} {}: \"{}\" vs \"{}\" → {}",
                    c.subject,
                    c.predicate,
                    c.a.object,
                    c.b.object,
                    r.verdict.as_str()
                ),
                commands,
                params,
                rationale: format!("{} ({})", r.rationale, c.slot),
                evidence: vec![c.a.link.clone(), c.b.link.clone()],
                confidence: r.confidence,
            },
            r.verdict,
        ));
    }
    Ok(drafts)
}

pub(super) fn contradictions(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let mut seen = Vec::new();
    let found = conflicts_seen(nx, None, &cx.opts.now.clone(), &mut seen)?;
    for (rule, kept) in seen {
        cx.rule(&rule, kept);
    }
    let drafts = contradiction_drafts(cx, nx, &found)?;
    let verdicts: Vec<Verdict> = drafts.iter().map(|(_, v)| *v).collect();
    // staged with the contradiction rows that name them, in one batch
    let keys = stage_in(
        cx,
        nx,
        drafts.into_iter().map(|(d, _)| d).collect(),
        usize::MAX,
    )?;
    for (c, verdict) in found.iter().zip(verdicts) {
        let key = conflict_key(c);
        let Some((proposal, item)) = keys.get(&key) else {
            continue;
        };
        let id = |l: &str| store::ids::parse_element_id(l).unwrap_or(0);
        let subject: i64 = nx
            .db()
            .query_i64(
                "SELECT subject FROM propositions WHERE id = ?1",
                crate::args![id(&c.a.link)],
            )?
            .unwrap_or(0);
        nx.db().execute(
            "INSERT INTO contradictions(run, found_at, subject, predicate, slot, fact_a, fact_b, detail, status, resolution, proposal, item) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'open', ?9, ?10, ?11)",
            crate::args![cx.run, store::now(), subject, &c.predicate, &c.slot, id(&c.a.link), id(&c.b.link), serde_json::to_string(c).unwrap_or_default(), verdict.as_str(), *proposal, *item],
        )?;
        cx.line(format!(
            "Contradiction: {} {} \"{}\" (observed {}) vs \"{}\" (observed {})",
            c.subject,
            c.predicate,
            c.a.object,
            c.a.observed_at.as_deref().unwrap_or("?"),
            c.b.object,
            c.b.observed_at.as_deref().unwrap_or("?")
        ));
    }
    cx.count("contradictions", found.len() as i64);
    if found.is_empty() {
        cx.line("No contradictions".into());
    }
    Ok(())
}

/// Whether two facts were last judged "needs context" and neither changed
/// since (`a` and `b`: when each was last written): the question stands,
/// and is not asked again.
fn waiting_for_context(nx: &Nexus, a: &str, b: &str, a_at: &str, b_at: &str) -> KipResult<bool> {
    let id = |l: &str| store::ids::parse_element_id(l).unwrap_or(0);
    let decided = nx.db().query_opt(
        "SELECT decided_at FROM contradictions WHERE status = 'needs_context' \
         AND ((fact_a = ?1 AND fact_b = ?2) OR (fact_a = ?2 AND fact_b = ?1)) ORDER BY id DESC LIMIT 1",
        crate::args![id(a), id(b)],
    )?;
    let Some(at) = decided.map(|r| r.opt_text(0)).transpose()?.flatten() else {
        return Ok(false);
    };
    Ok(a_at <= at.as_str() && b_at <= at.as_str())
}

/// When a fact was observed, as an instant (unknown sorts first).
fn observed(f: &FactView) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    f.observed_at.as_deref().and_then(super::instant)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(from: Option<&str>, until: Option<&str>, observed: Option<&str>) -> FactView {
        FactView {
            link: "P:1".into(),
            object_type: "City".into(),
            object: "Leeds".into(),
            observed_at: observed.map(str::to_string),
            confidence: None,
            source: None,
            valid_from: from.map(str::to_string),
            valid_until: until.map(str::to_string),
            reliability: None,
            description: String::new(),
        }
    }

    const NOW: &str = "2026-11-20T00:00:00Z";

    #[test]
    fn an_ended_fact_is_history_and_one_ending_later_still_holds() {
        let york = f(None, None, None);
        // ended in 2019: history, whatever the other's start
        assert!(time_disjoint(
            &f(None, Some("2019-06-30"), None),
            &york,
            NOW
        ));
        // ends next year: it holds now, beside a rival with no known start
        assert!(!time_disjoint(
            &f(None, Some("2027-06-30"), None),
            &york,
            NOW
        ));
        // ends next year, but the rival starts after that
        let later = f(Some("2027-07-01"), None, None);
        assert!(time_disjoint(
            &f(None, Some("2027-06-30"), None),
            &later,
            NOW
        ));
        // overlapping spans
        let since = f(Some("2027-01-01"), None, None);
        assert!(!time_disjoint(
            &f(None, Some("2027-06-30"), None),
            &since,
            NOW
        ));
    }
}
