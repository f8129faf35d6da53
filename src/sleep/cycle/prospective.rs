//! Phase 5C: the prospective sweep. Closed commitments get their TTL,
//! overdue ones are reported (and proposed expired past 30 days), and a
//! pending commitment that a later Event shows delivered is closed: at
//! once when the Event is linked to it and says plainly, in the past, that
//! it was done with nothing still to come; as a proposal when the match is
//! only in the words or the Event also promises more. A promise repeated
//! ("I said I'd send it Friday") closes nothing.

use super::context::*;
use super::decay::note;
use rust_stemmers::{Algorithm, Stemmer};

/// Words that say something was done.
const DONE_WORDS: &[&str] = &[
    "done",
    "completed",
    "complete",
    "fulfilled",
    "finished",
    "delivered",
    "sent",
    "kept",
    "handed",
    "shipped",
    "submitted",
    "paid",
    "returned",
    "published",
    "booked",
    "wrote",
    "gave",
    "made",
    "told",
    "brought",
    "bought",
];

/// Words that say it was not (or not yet) done.
const NOT_DONE_WORDS: &[&str] = &[
    "not",
    "never",
    "failed",
    "forgot",
    "forgotten",
    "postponed",
    "cancelled",
    "canceled",
    "yet",
    "still",
    "pending",
    "todo",
    "missed",
    "unable",
    "without",
];

/// Words that say it is still to come: a promise renewed is not a promise
/// kept ("I said I'd send it Friday", "will send", "asked again").
const INTENT_WORDS: &[&str] = &[
    "will", "would", "shall", "going", "gonna", "plan", "plans", "planned", "planning", "promise",
    "promised", "promises", "intend", "intends", "tomorrow", "later", "soon", "next", "again",
    "asked", "asks", "chased", "follow", "awaiting", "waiting",
];

/// Words that say something was done only when nothing says it is still to
/// come ("told him I'd send it" is talk about the promise, not its keeping).
const WEAK_DONE_WORDS: &[&str] = &["told", "made", "gave", "kept"];

/// Words too common to tie an Event to a commitment.
const STOP: &[&str] = &[
    "the", "and", "for", "her", "his", "their", "our", "your", "with", "about", "before", "after",
    "from", "into", "this", "that", "them", "him", "she", "they", "will", "once",
];

/// The stems of a text's words (3+ letters, common words left out).
fn stems(st: &Stemmer, text: &str) -> HashSet<String> {
    similarity::words(text)
        .into_iter()
        .filter(|w| w.len() >= 3 && !STOP.contains(&w.as_str()))
        .map(|w| st.stem(&w).into_owned())
        .collect()
}

/// What an Event says of a commitment.
#[derive(Debug, PartialEq)]
enum Fulfilment {
    /// Linked to it, and says plainly that it was done.
    Sure,
    /// Says something like it was done, by the words only.
    Likely,
    None,
}

/// The past forms of common irregular verbs a commitment opens with.
fn irregular_past(verb: &str) -> Option<&'static str> {
    Some(match verb {
        "send" => "sent",
        "make" => "made",
        "give" => "gave|given",
        "write" => "wrote|written",
        "buy" => "bought",
        "bring" => "brought",
        "pay" => "paid",
        "tell" => "told",
        "keep" => "kept",
        "take" => "took|taken",
        "find" => "found",
        "get" => "got|gotten",
        "leave" => "left",
        "meet" => "met",
        "read" => "read",
        "sell" => "sold",
        "teach" => "taught",
        "build" => "built",
        "lend" => "lent",
        "do" => "did|done",
        "go" => "went|gone",
        "see" => "saw|seen",
        "say" => "said",
        "ring" => "rang|rung",
        "draw" => "drew|drawn",
        "drive" => "drove|driven",
        "put" => "put",
        "set" => "set",
        "show" => "showed|shown",
        "speak" => "spoke|spoken",
        "choose" => "chose|chosen",
        "hold" => "held",
        "feed" => "fed",
        _ => return None,
    })
}

fn judge(
    st: &Stemmer,
    commitment: &str,
    verb: Option<&str>,
    event: &str,
    linked: bool,
) -> (Fulfilment, f64) {
    let want = stems(st, commitment);
    let raw: Vec<String> = similarity::words(event);
    let lower = event.to_lowercase();
    if raw.iter().any(|w| NOT_DONE_WORDS.contains(&w.as_str()))
        || lower.contains("n't")
        || lower.contains("n\u{2019}t")
    {
        return (Fulfilment::None, 0.0);
    }
    let have = stems(st, event);
    let coverage = if want.is_empty() {
        0.0
    } else {
        want.intersection(&have).count() as f64 / want.len() as f64
    };
    // "I'd", "we'll": a contraction that says it is still to come
    let intent = raw.iter().any(|w| INTENT_WORDS.contains(&w.as_str()))
        || ["'d ", "'ll ", "\u{2019}d ", "\u{2019}ll "]
            .iter()
            .any(|c| format!("{lower} ").contains(c));
    // the commitment's own verb done in the Event ("Remind" → "reminded":
    // the base form alone, "send", is the promise repeated, not kept), or a
    // word that says it was done
    let verb_done = verb.is_some_and(|v| {
        let v = v.to_lowercase();
        let stem = st.stem(&v).into_owned();
        raw.iter().any(|w| {
            (*w != v && w.ends_with("ed") && st.stem(w) == stem.as_str())
                || irregular_past(&v).is_some_and(|past| past.split('|').any(|p| p == w.as_str()))
        })
    });
    // an Event not linked to the commitment must say its own verb was
    // done: a word of completion about something else ("read reviews of
    // the luthier; he had finished a cello repair") is not "Book the
    // luthier" kept
    if !linked && !verb_done {
        return (Fulfilment::None, coverage);
    }
    let strong = verb_done
        || raw
            .iter()
            .any(|w| DONE_WORDS.contains(&w.as_str()) && !WEAK_DONE_WORDS.contains(&w.as_str()));
    let weak = raw.iter().any(|w| WEAK_DONE_WORDS.contains(&w.as_str()));
    let acted = strong || (weak && !intent);
    if !acted {
        return (Fulfilment::None, coverage);
    }
    // a plain past with nothing still to come closes it; a past beside a
    // promise renewed ("sent the draft, will send the rest") is for the
    // operator to judge
    if intent {
        return if coverage >= LIKELY_COVERAGE || (linked && coverage > 0.0) {
            (Fulfilment::Likely, coverage)
        } else {
            (Fulfilment::None, coverage)
        };
    }
    if linked && coverage >= SURE_LINKED_COVERAGE {
        (Fulfilment::Sure, coverage)
    } else if coverage >= LIKELY_COVERAGE || (linked && coverage > 0.0) {
        (Fulfilment::Likely, coverage)
    } else {
        (Fulfilment::None, coverage)
    }
}

pub(super) fn prospective_sweep(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("commitments", 0, 0);
    let v = find(
        nx,
        r#"FIND(?c) WHERE { ?c {type: "Commitment"} } LIMIT 1000"#,
        json!({}),
    )?;
    let st = Stemmer::create(Algorithm::English);
    let recent = recent_events(cx, nx)?;
    let (mut closed, mut overdue, mut pending, mut fulfilled_now) = (0, 0, 0, 0);
    let mut drafts = Vec::new();
    for c in v.as_array().cloned().unwrap_or_default() {
        let name = s(&c, &["name"]);
        let id = s(&c, &["id"]);
        let status = s(&c, &["attributes", "status"]);
        let due = s(&c, &["attributes", "due_at"]);
        if matches!(status.as_str(), "fulfilled" | "cancelled" | "expired") {
            closed += 1;
            if c.get("metadata")
                .and_then(|m| m.get("expires_at"))
                .is_none()
            {
                let at = [
                    s(&c, &["attributes", "fulfilled_at"]),
                    s(&c, &["attributes", "closed_at"]),
                ]
                .into_iter()
                .find(|x| instant(x).is_some())
                .unwrap_or_else(|| cx.opts.now.clone());
                let exp = shift(&at, cx.opts.params.commitment_decay_days);
                // the TTL only: where the commitment came from stays as it was
                write(
                    cx,
                    nx,
                    r#"UPSERT { CONCEPT ?c { {id: :id} } WITH METADATA { expires_at: :exp, expires_set_by: "ProspectiveSweep", expires_set_at: :ts } }"#,
                    json!({"id": id, "exp": exp, "ts": cx.opts.now}),
                    &format!(
                        "commitment decay: a {status} commitment is reclaimable {} days after it closed",
                        cx.opts.params.commitment_decay_days
                    ),
                )?;
                cx.line(format!(
                    "Commitment \"{name}\" is {status}: reclaimable after {exp}"
                ));
            }
            continue;
        }
        // a later Event that shows it delivered
        let made = [
            s(&c, &["attributes", "committed_at"]),
            s(&c, &["attributes", "created_at"]),
            s(&c, &["metadata", "created_at"]),
        ]
        .into_iter()
        .find(|x| instant(x).is_some());
        let text = name.clone();
        let verb = similarity::words(&name).into_iter().next();
        let linked = linked_events(nx, &id)?;
        let mut best: Option<(Fulfilment, f64, EventView)> = None;
        let mut candidates: Vec<(EventView, bool)> =
            linked.into_iter().map(|e| (e, true)).collect();
        for e in &recent {
            if !candidates.iter().any(|(x, _)| x.id == e.id) {
                let named = e.key_concepts.iter().any(|k| k == &name);
                candidates.push((e.clone(), named));
            }
        }
        for (e, linked) in candidates {
            if let Some(m) = &made
                && before(&e.start, m) != Some(false)
            {
                continue;
            }
            let (f, cov) = judge(
                &st,
                &text,
                verb.as_deref(),
                &format!("{} {}", e.name, e.summary),
                linked,
            );
            if f == Fulfilment::None {
                continue;
            }
            let better = match &best {
                None => true,
                Some((bf, bc, _)) => {
                    (f == Fulfilment::Sure && *bf != Fulfilment::Sure) || (f == *bf && cov > *bc)
                }
            };
            if better {
                best = Some((f, cov, e));
            }
        }
        if let Some((f, cov, e)) = best {
            let when = if instant(&e.start).is_some() {
                e.start.clone()
            } else {
                cx.opts.now.clone()
            };
            let exp = shift(&when, cx.opts.params.commitment_decay_days);
            let outcome = format!("delivered: {} ({})", e.name, e.summary);
            let cmd = r#"UPSERT { CONCEPT ?c { {id: :id} SET ATTRIBUTES { status: "fulfilled", fulfilled_at: :at, fulfilled_by: :event, outcome: :outcome } } WITH METADATA { expires_at: :exp, expires_set_by: "ProspectiveSweep", expires_set_at: :ts } }"#;
            let params = json!({"id": id, "at": when, "event": e.name, "outcome": outcome, "exp": exp, "ts": cx.opts.now});
            let why = format!(
                "Event \"{}\" ({}) {} the commitment and says it was done ({:.0}% of its words)",
                e.name,
                e.start,
                if f == Fulfilment::Sure {
                    "is linked to"
                } else {
                    "reads like"
                },
                cov * 100.0
            );
            note(
                nx,
                &id,
                &format!("Commitment:{name}"),
                cx.run,
                "fulfilment found",
                "prospective sweep",
                &json!({"event": e.id, "coverage": cov, "sure": f == Fulfilment::Sure}),
            )?;
            if f == Fulfilment::Sure {
                write(cx, nx, cmd, params, &format!("prospective sweep: {why}"))?;
                cx.line(format!("Commitment \"{name}\" fulfilled by \"{}\"", e.name));
                fulfilled_now += 1;
            } else {
                drafts.push(Draft {
                    class: "commitment".into(),
                    key: format!("fulfilled:{id}"),
                    title: format!("Mark \"{name}\" fulfilled by \"{}\"", e.name),
                    commands: vec![cmd.to_string()],
                    params: pm(params),
                    rationale: format!("{why}; not linked to it, so it is for you to confirm"),
                    evidence: vec![e.id.clone(), id.clone()],
                    confidence: 0.6,
                });
                pending += 1;
            }
            continue;
        }
        if status == "pending" && before(&due, &cx.opts.now) == Some(true) {
            overdue += 1;
            let late = days_between(&due, &cx.opts.now).unwrap_or(0.0);
            let ago = if late < 1.0 {
                format!("{:.0} hours ago", (late * 24.0).max(1.0))
            } else {
                format!("{late:.0} days ago")
            };
            cx.report
                .issues
                .push(format!("Overdue commitment: \"{name}\" (due {due}, {ago})"));
            if late >= EXPIRE_OVERDUE_DAYS {
                drafts.push(Draft {
                    class: "commitment".into(),
                    key: format!("expire:{id}"),
                    title: format!("Mark \"{name}\" expired (30+ days overdue)"),
                    commands: vec![r#"UPSERT { CONCEPT ?c { {id: :id} SET ATTRIBUTES { status: "expired", outcome: :outcome, closed_at: :ts } } WITH METADATA { expires_at: :exp, expires_set_by: "ProspectiveSweep", expires_set_at: :ts } }"#.to_string()],
                    params: pm(json!({"id": id, "outcome": format!("no activity {late:.0} days past due"), "exp": shift(&cx.opts.now, cx.opts.params.commitment_decay_days), "ts": cx.opts.now})),
                    rationale: format!("due {due}, {late:.0} days past with no sign of delivery: abandoned (history, not deletion)"),
                    evidence: vec![id.clone()],
                    confidence: 0.6,
                });
            } else {
                cx.report
                    .recommendations
                    .push(format!("Nudge in the next briefing: \"{name}\""));
            }
        } else {
            pending += 1;
        }
    }
    stage(cx, nx, drafts)?;
    cx.count("commitments_closed", closed);
    cx.count("commitments_fulfilled", fulfilled_now);
    cx.count("commitments_overdue", overdue);
    cx.count("commitments_pending", pending);
    cx.line(format!(
        "Prospective sweep: {closed} closed, {fulfilled_now} found fulfilled, {overdue} overdue, {pending} pending"
    ));
    Ok(())
}

/// The Events linked to a commitment, either way round.
fn linked_events(nx: &mut Nexus, id: &str) -> KipResult<Vec<EventView>> {
    let mut out: Vec<EventView> = Vec::new();
    for text in [
        r#"FIND(?e) WHERE { ?c {id: :id} ?e {type: "Event"} (?e, ?p, ?c) } LIMIT 50"#,
        r#"FIND(?e) WHERE { ?c {id: :id} ?e {type: "Event"} (?c, ?p, ?e) } LIMIT 50"#,
    ] {
        let v = find(nx, text, json!({"id": id}))?;
        for e in v.as_array().into_iter().flatten() {
            let e = event_view(e);
            if !out.iter().any(|x| x.id == e.id) {
                out.push(e);
            }
        }
    }
    Ok(out)
}

/// An Event linked to a commitment that says it was done and shares this
/// share of its words closes it at once.
pub const SURE_LINKED_COVERAGE: f64 = 0.5;
/// An Event that says it was done and shares this share of a commitment's
/// words (or any, when linked) proposes closing it.
pub const LIKELY_COVERAGE: f64 = 0.6;
/// A commitment this many days overdue is proposed as expired (the
/// sleep-mode instructions' 5C sweep: "30+ days overdue").
pub const EXPIRE_OVERDUE_DAYS: f64 = 30.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_event_says_of_a_commitment() {
        let st = Stemmer::create(Algorithm::English);
        let c = "Remind Mira to renew her passport";
        let verb = Some("Remind");
        let j = |e: &str, linked| judge(&st, c, verb, e, linked).0;
        assert_eq!(
            j("Reminded Mira to renew her passport; she booked it", true),
            Fulfilment::Sure
        );
        assert_eq!(
            j("Reminded Mira about renewing the passport", false),
            Fulfilment::Likely
        );
        assert_eq!(
            j("Forgot to remind Mira about the passport", true),
            Fulfilment::None
        );
        assert_eq!(
            j("Mira didn't renew her passport yet", true),
            Fulfilment::None
        );
        assert_eq!(j("Talked about passports", true), Fulfilment::None);
        // the promise repeated is not the promise kept
        assert_eq!(
            j(
                "Mira asked again; I said I'd remind her to renew the passport Friday",
                true
            ),
            Fulfilment::None
        );
        assert_eq!(
            j(
                "Told Mira I will remind her about the passport renewal",
                true
            ),
            Fulfilment::None
        );
        // done, with more to come: for the operator
        assert_eq!(
            j(
                "Reminded Mira to renew her passport; will remind her again",
                true
            ),
            Fulfilment::Likely
        );
        assert_eq!(j("Sent the weekly report", false), Fulfilment::None);
        // a word of completion about something else is not the commitment
        // kept, unless the Event is linked to it
        let b = |e: &str, linked| {
            judge(
                &st,
                "Book the luthier for the cello repair",
                Some("Book"),
                e,
                linked,
            )
            .0
        };
        assert_eq!(
            b(
                "Read reviews of the luthier; he had finished a cello repair for Anna",
                false
            ),
            Fulfilment::None
        );
        assert_eq!(
            b("Booked the luthier for the cello repair on Tuesday", false),
            Fulfilment::Likely
        );
        let s = |e: &str| {
            judge(
                &st,
                "Send Omar the budget spreadsheet",
                Some("Send"),
                e,
                false,
            )
            .0
        };
        assert_eq!(s("Sent Omar the budget spreadsheet"), Fulfilment::Likely);
    }
}
