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
//! never looked for. The Events read are the lookback window's and the
//! stale ones phase 5 read this cycle.

use super::context::*;

/// Names that are no one's in particular: a profile with no name is the
/// user's as `User`.
const NO_ONES_NAME: &[&str] = &["user", "human", "owner", "me", "you", "self", "assistant"];

/// At most this many `mentions` proposals a cycle (the class's cap
/// applies as well).
pub(crate) const MENTION_MAX: usize = 200;

/// Whether `name` is written in `text`: as a word of its own, or, for a
/// name in Chinese or Japanese, anywhere.
pub(crate) fn names(text: &str, name: &str) -> bool {
    if name.chars().all(|c| c as u32 >= 0x3000) {
        return name.chars().count() >= 2 && text.contains(name);
    }
    if name.chars().count() < 3 {
        return false;
    }
    // (a letter of a script written without spaces is no part of a Latin
    // name: `konukiが言った`)
    let word = |c: Option<char>| {
        c.is_some_and(|c| (c.is_alphanumeric() && (c as u32) < 0x3000) || c == '_')
    };
    text.match_indices(name).any(|(i, m)| {
        !word(text[..i].chars().next_back()) && !word(text[i + m.len()..].chars().next())
    })
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
    if people.is_empty() {
        return Ok(());
    }
    let mut events = recent_events(cx, nx)?;
    events.extend(cx.stale.clone().unwrap_or_default());
    let mut seen = std::collections::HashSet::new();
    events.retain(|e| seen.insert(e.id.clone()));
    let mut drafts = Vec::new();
    for (i, e) in events.iter_mut().enumerate() {
        if drafts.len() >= MENTION_MAX {
            break;
        }
        if i % 64 == 0 {
            cx.cancelled()?;
        }
        let text = format!("{}\n{}", e.name, e.summary);
        // (a participant the Event lists is linked already)
        let named: Vec<&(String, Vec<String>)> = people
            .iter()
            .filter(|(person, known)| {
                !e.participants.contains(person) && known.iter().any(|n| names(&text, n))
            })
            .collect();
        if named.is_empty() {
            continue;
        }
        super::consolidate::linked_of(nx, e)?;
        for (person, known) in named {
            if e.linked.iter().any(|(t, n)| t == "Person" && n == person) {
                continue;
            }
            let said = known
                .iter()
                .find(|n| names(&text, n))
                .cloned()
                .unwrap_or_else(|| person.clone());
            drafts.push(Draft {
                class: "connection".into(),
                key: format!("mentions:{}:{person}", e.id),
                title: format!("{} mentions {person}", e.name),
                commands: vec![
                    r#"UPSERT {
  PROPOSITION ?link {
    ({type: "Event", name: :event_name}, "mentions", {type: "Person", name: :person})
  }
}
WITH METADATA { source: "SleepConnections", author: "$system", confidence: 0.7, created_at: :ts }"#
                        .to_string(),
                ],
                params: pm(json!({"event_name": e.name, "person": person, "ts": cx.opts.now})),
                rationale: if said == *person {
                    format!("{} says \"{said}\", and no link of it names them", e.name)
                } else {
                    format!(
                        "{} says \"{said}\", a name {person} is known by, and no link of it names them",
                        e.name
                    )
                },
                evidence: vec![e.id.clone()],
                confidence: 0.7,
            });
        }
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("mentions", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed {n} links from Events to the people they name"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::names;

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
