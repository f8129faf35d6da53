//! Phase 10: the people an Event names. An Event that says a Person's
//! name (or one of their aliases) and links no Person of that name is
//! proposed a `mentions` link to them: a memory imported from notes
//! (`2026-02-03 池内先生ディスカッション`, "大坪さんFB反映") knows who took
//! part only by name, and its people stay "linked to nothing" until the
//! Events that name them are linked.
//!
//! A name is found as a word (`Ana` in "met Ana", never in "Analysis");
//! a name in Chinese or Japanese, written inside the words around it, as
//! it is written (two characters or more). Words for the user (`User`,
//! `Human`), names shorter than three letters, and the agent itself are
//! never looked for. The Events read are the lookback window's, those
//! written into the memory (or changed) within it whenever they happened,
//! and the stale ones phase 5 read this cycle, but for those it proposed
//! archived as a log's regular entries.

use super::context::*;

/// Names that are no one's in particular: a profile with no name is the
/// user's as `User`.
const NO_ONES_NAME: &[&str] = &["user", "human", "owner", "me", "you", "self", "assistant"];

/// At most this many `mentions` proposals a cycle (the class's cap
/// applies as well).
pub(crate) const MENTION_MAX: usize = 200;

/// Whether a name may be looked for: two characters or more in Chinese
/// or Japanese, three or more letters otherwise.
fn searchable(name: &str) -> bool {
    let n = name.chars().count();
    if cjk(name) { n >= 2 } else { n >= 3 }
}

fn cjk(name: &str) -> bool {
    name.chars().all(|c| c as u32 >= 0x3000)
}

/// Whether the match `at..end` of a name in `text` is the name itself: a
/// name in Chinese or Japanese anywhere, any other as a word of its own (a
/// letter of a script written without spaces is no part of a Latin name:
/// `konukiが言った`).
fn whole(text: &str, at: usize, end: usize, name: &str) -> bool {
    if cjk(name) {
        return true;
    }
    let word = |c: Option<char>| {
        c.is_some_and(|c| (c.is_alphanumeric() && (c as u32) < 0x3000) || c == '_')
    };
    !word(text[..at].chars().next_back()) && !word(text[end..].chars().next())
}

/// Whether `name` is written in `text` (see [`whole`]).
#[cfg(test)]
fn names(text: &str, name: &str) -> bool {
    searchable(name)
        && text
            .match_indices(name)
            .any(|(i, m)| whole(text, i, i + m.len(), name))
}

/// Every name of every Person, found in one pass over a text.
struct Finder {
    ac: aho_corasick::AhoCorasick,
    /// Each pattern's name and Person (an index into the people).
    names: Vec<(String, usize)>,
}

impl Finder {
    fn new(people: &[(String, Vec<String>)]) -> Option<Finder> {
        let mut names = Vec::new();
        for (i, (_, known)) in people.iter().enumerate() {
            for n in known.iter().filter(|n| searchable(n)) {
                names.push((n.clone(), i));
            }
        }
        let ac = aho_corasick::AhoCorasick::new(names.iter().map(|(n, _)| n.as_str())).ok()?;
        Some(Finder { ac, names })
    }

    /// The people `text` names, in the order it first names them, each
    /// with the name it used there (the longest at that place: `大坪さん`
    /// rather than `大坪`). A name written inside a longer one is not
    /// said at that place: `Ahmed Nasr` names Ahmed Nasr, not a Person
    /// `Nasr` too.
    fn people(&self, text: &str) -> Vec<(usize, String)> {
        // every place a name is written as itself: (start, end, who, name)
        let mut found: Vec<(usize, usize, usize, &str)> = self
            .ac
            .find_overlapping_iter(text)
            .filter_map(|m| {
                let (name, who) = &self.names[m.pattern().as_usize()];
                whole(text, m.start(), m.end(), name).then_some((
                    m.start(),
                    m.end(),
                    *who,
                    name.as_str(),
                ))
            })
            .collect();
        // by place, the longest first at each: one inside another (it
        // ends no later than a name begun before it) is none
        found.sort_by_key(|&(at, end, _, _)| (at, std::cmp::Reverse(end)));
        let mut reach = 0;
        let mut out: Vec<(usize, String)> = Vec::new();
        for (_, end, who, name) in found {
            if end <= reach {
                continue;
            }
            reach = end;
            if !out.iter().any(|(w, _)| *w == who) {
                out.push((who, name.to_string()));
            }
        }
        out
    }
}

pub(super) fn people_named(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("people Events name", 0, 0);
    let v = find(
        nx,
        r#"FIND(?p.name, ?p.attributes.aliases) WHERE { ?p {type: "Person"} } LIMIT 5000"#,
        json!({}),
    )?;
    // each Person's name, and every name it is known by
    let mut people: Vec<(String, Vec<String>)> = Vec::new();
    // (one variable's fields: a row per Person)
    for row in v.as_array().into_iter().flatten() {
        let Some(name) = row.get(0).and_then(Value::as_str) else {
            continue;
        };
        if name.starts_with('$') || NO_ONES_NAME.contains(&name.to_lowercase().as_str()) {
            continue;
        }
        let mut known = vec![name.to_string()];
        known.extend(strs(row.get(1)));
        known.retain(|n| !NO_ONES_NAME.contains(&n.to_lowercase().as_str()));
        people.push((name.to_string(), known));
    }
    let Some(finder) = Finder::new(&people) else {
        return Ok(());
    };
    let mut events = recent_events(cx, nx)?;
    events.extend(cx.stale.clone().unwrap_or_default());
    // and the Events written into the memory (or changed) within the
    // window, whenever they happened: an imported diary's people are
    // linked by the first cycle that reads it, not only its last weeks'
    let written = find(
        nx,
        r#"FIND(?e) WHERE { ?e {type: "Event"} FILTER(?e.metadata._updated_at >= :since) } LIMIT 5000"#,
        json!({"since": cx.days_ago(LOOKBACK_DAYS)}),
    )?;
    events.extend(written.as_array().into_iter().flatten().map(event_view));
    let mut seen = std::collections::HashSet::new();
    events.retain(|e| seen.insert(e.id.clone()));
    // (a log's regular entry this cycle proposes archived, `Heartbeat`
    // every half hour, names the user in passing: no link of its own)
    let regular = events.len();
    events.retain(|e| !cx.regular_entries.contains(&e.id));
    let regular = regular - events.len();
    let mut drafts = Vec::new();
    // (person, Event, its id, the name it says)
    let mut found: Vec<(String, String, String, String)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if found.len() >= MENTION_MAX {
            break;
        }
        if i % 64 == 0 {
            cx.cancelled()?;
        }
        let text = format!("{}\n{}", e.name, e.summary);
        // (a participant the Event lists is linked already)
        let named: Vec<(usize, String)> = finder
            .people(&text)
            .into_iter()
            .filter(|(who, _)| !e.participants.contains(&people[*who].0))
            .collect();
        if named.is_empty() {
            continue;
        }
        // the people it links already (one query: not the rest of what
        // phase 5 reads of an Event)
        let linked = strs(Some(&find(
            nx,
            r#"FIND(?x.name) WHERE { ?e {type: "Event", name: :n} (?e, "mentions" | "involves", ?x) ?x {type: "Person"} } LIMIT 200"#,
            json!({"n": e.name}),
        )?));
        for (who, said) in named {
            let person = &people[who].0;
            if linked.contains(person) {
                continue;
            }
            found.push((person.clone(), e.name.clone(), e.id.clone(), said));
        }
    }
    // a person many Events name (the user, in the agent's diary) is one
    // item: every link at once, one decision
    let mut by_person: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, f) in found.iter().enumerate() {
        match by_person.iter_mut().find(|(p, _)| *p == f.0) {
            Some((_, at)) => at.push(i),
            None => by_person.push((f.0.clone(), vec![i])),
        }
    }
    for (person, at) in by_person {
        if at.len() >= BULK_FROM {
            drafts.push(bulk(cx, &person, at.iter().map(|&i| &found[i])));
            continue;
        }
        for i in at {
            let (person, event, id, said) = &found[i];
            drafts.push(Draft {
                class: "connection".into(),
                key: format!("mentions:{id}:{person}"),
                title: format!("{event} mentions {person}"),
                commands: vec![
                    r#"UPSERT {
  PROPOSITION ?link {
    ({type: "Event", name: :event_name}, "mentions", {type: "Person", name: :person})
  }
}
WITH METADATA { source: "SleepConnections", author: "$system", confidence: 0.7, created_at: :ts }"#
                        .to_string(),
                ],
                params: pm(json!({"event_name": event, "person": person, "ts": cx.opts.now})),
                rationale: said_by(event, said, person),
                evidence: vec![id.clone()],
                confidence: 0.7,
            });
        }
    }
    let n = found.len();
    stage(cx, nx, drafts)?;
    cx.count("mentions", n as i64);
    if regular > 0 {
        cx.line(format!(
            "Left out {regular} Events proposed archived as a log's regular entries: the people they name are not looked for"
        ));
    }
    if n > 0 {
        cx.line(format!(
            "Proposed {n} links from Events to the people they name"
        ));
    }
    Ok(())
}

/// From this many Events naming one person in a cycle, their links are
/// one item.
pub(crate) const BULK_FROM: usize = 6;

/// Why an Event is proposed to mention a person.
fn said_by(event: &str, said: &str, person: &str) -> String {
    if said == person {
        format!("{event} says \"{said}\", and no link of it names them")
    } else {
        format!(
            "{event} says \"{said}\", a name {person} is known by, and no link of it names them"
        )
    }
}

/// One item linking every Event found naming `person` to them.
fn bulk<'a>(
    cx: &Cx,
    person: &str,
    found: impl Iterator<Item = &'a (String, String, String, String)>,
) -> Draft {
    let found: Vec<&(String, String, String, String)> = found.collect();
    let mut params = json!({"person": person, "ts": cx.opts.now});
    let mut commands = Vec::new();
    for (i, (_, event, _, _)) in found.iter().enumerate() {
        params[format!("event_{i}")] = json!(event);
        commands.push(format!(
            r#"UPSERT {{
  PROPOSITION ?link {{
    ({{type: "Event", name: :event_{i}}}, "mentions", {{type: "Person", name: :person}})
  }}
}}
WITH METADATA {{ source: "SleepConnections", author: "$system", confidence: 0.7, created_at: :ts }}"#
        ));
    }
    let shown: Vec<&str> = found.iter().take(3).map(|f| f.1.as_str()).collect();
    Draft {
        class: "connection".into(),
        key: format!("mentions-of:{person}"),
        title: format!(
            "{} Events mention {person}: {}{}",
            found.len(),
            shown.join(", "),
            if found.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ),
        commands,
        params: pm(params),
        rationale: found
            .iter()
            .map(|(_, event, _, said)| said_by(event, said, person))
            .collect::<Vec<_>>()
            .join("; "),
        evidence: found.iter().map(|f| f.2.clone()).collect(),
        confidence: 0.7,
    }
}

#[cfg(test)]
mod tests {
    use super::{Finder, names};

    #[test]
    fn one_pass_finds_each_person_once_by_any_of_their_names() {
        let people = vec![
            (
                "大坪さん".to_string(),
                vec!["大坪さん".to_string(), "大坪".to_string()],
            ),
            ("Ana".to_string(), vec!["Ana".to_string()]),
            ("Al".to_string(), vec!["Al".to_string()]),
        ];
        let f = Finder::new(&people).expect("a finder");
        assert_eq!(
            f.people("Analysis, then 大坪さん approved; Ana and Al too. 大坪 again"),
            vec![(0, "大坪さん".to_string()), (1, "Ana".to_string())]
        );
        assert!(f.people("Analysis only").is_empty());
    }

    /// A name inside a longer name of someone else is not theirs to
    /// claim: a Telegram sender `Ahmed Nasr` and a quoted sender `Nasr`
    /// were both proposed for every Event that says "Ahmed Nasr".
    #[test]
    fn a_name_inside_a_longer_one_is_not_said() {
        let people = vec![
            ("Ahmed Nasr".to_string(), vec!["Ahmed Nasr".to_string()]),
            ("Nasr".to_string(), vec!["Nasr".to_string()]),
        ];
        let f = Finder::new(&people).expect("a finder");
        assert_eq!(
            f.people("Ahmed Nasr asked for the CV batch"),
            vec![(0, "Ahmed Nasr".to_string())]
        );
        assert_eq!(
            f.people("Ahmed Nasr asked; Nasr replied"),
            vec![(0, "Ahmed Nasr".to_string()), (1, "Nasr".to_string())]
        );
        assert_eq!(f.people("Nasr wrote first"), vec![(1, "Nasr".to_string())]);
    }

    #[test]
    fn a_name_as_a_word_or_inside_cjk_text() {
        assert!(names("Met Ana at noon", "Ana"));
        assert!(!names("Analysis of the logs", "Ana"));
        assert!(!names("Ran the pipeline", "Ra"));
        assert!(names("大坪紹二さんの承認", "大坪"));
        assert!(names("池内先生ディスカッション", "池内先生"));
        assert!(!names("池", "池"));
        assert!(names("Dinner with Lucía, finally", "Lucía"));
        assert!(names("konukiが言ったことを記録する", "konuki"));
        assert!(!names("konukitoolsを入れた", "konuki"));
    }
}
