//! `SEARCH` and days: a day named in the question, and a search narrowed
//! by days (`@since`, `@until`), the same on SQLite and PostgreSQL
//! (`tests/search.rs`, `tests/postgres_engine.rs`).

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::protocol::Outcome;

/// The names a SEARCH with `params` returns, best first, or its error code.
fn names(nx: &mut Nexus, params: Value) -> Result<Vec<String>, String> {
    match nx.kip_with(r#"SEARCH CONCEPT :q WITH TYPE "Event" LIMIT 10"#, params) {
        Outcome::Ok { result, .. } => Ok(result
            .as_array()
            .expect("a list")
            .iter()
            .map(|v| v["name"].as_str().expect("a name").to_string())
            .collect()),
        Outcome::Err(e) => Err(e.code.to_string()),
    }
}

pub fn a_search_keeps_the_days_asked(nx: &mut Nexus) {
    for (name, day, text) in [
        (
            "a",
            Some("2023-08-17T10:00:00Z"),
            "We talked about the garden.",
        ),
        (
            "b",
            Some("2023-08-18T19:30:00+02:00"),
            "The garden again, by night.",
        ),
        ("c", Some("2023-08-19"), "The garden, the third time."),
        ("d", None, "A garden note with no time."),
    ] {
        let mut attrs = json!({ "content_summary": text });
        if let Some(d) = day {
            attrs["start_time"] = json!(d);
        }
        match nx.kip_with(
            r#"UPSERT { CONCEPT ?e { {type: "Event", name: :n} SET ATTRIBUTES :a } }"#,
            json!({ "n": name, "a": attrs }),
        ) {
            Outcome::Ok { .. } => {}
            Outcome::Err(e) => panic!("{} {}", e.code, e.message),
        }
    }
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let all = names(nx, json!({ "q": "garden" })).expect("search");
    assert_eq!(sorted(all), ["a", "b", "c", "d"]);
    // both ends are included; a time's day counts as written
    let got = names(nx, json!({ "q": "garden", "@since": "2023-08-18" })).expect("since");
    assert_eq!(sorted(got), ["b", "c"]);
    let got = names(
        nx,
        json!({ "q": "garden", "@until": "2023-08-18T23:59:59Z" }),
    )
    .expect("until");
    assert_eq!(sorted(got), ["a", "b"]);
    let got = names(
        nx,
        json!({ "q": "garden", "@since": "2023-08-18", "@until": "2023-08-18" }),
    )
    .expect("one day");
    assert_eq!(got, ["b"]);
    // nothing inside: nothing, not everything
    let got = names(nx, json!({ "q": "garden", "@since": "2024-01-01" })).expect("none");
    assert!(got.is_empty(), "{got:?}");
    // a bound that is no day is refused, naming itself
    assert_eq!(
        names(nx, json!({ "q": "garden", "@since": "last week" })),
        Err("KIP_2001".to_string())
    );
    assert_eq!(
        names(nx, json!({ "q": "garden", "@until": 20230818 })),
        Err("KIP_2001".to_string())
    );
    // a link's time is its observed_at, else its created_at
    let ok = |nx: &mut Nexus, cmd: &str| match nx.kip_with(cmd, json!({})) {
        Outcome::Ok { .. } => {}
        Outcome::Err(e) => panic!("{cmd}: {} {}", e.code, e.message),
    };
    ok(
        nx,
        r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: "tended"} SET ATTRIBUTES { description: "who tended the garden after whom" } } }"#,
    );
    for (s, o, meta) in [
        ("a", "b", r#"{ observed_at: "2023-08-17T09:00:00Z" }"#),
        ("b", "c", r#"{ observed_at: "2023-08-19" }"#),
        ("c", "a", r#"{ created_at: "2023-08-18T10:00:00Z" }"#),
        ("a", "c", r#"{ source: "no time" }"#),
    ] {
        ok(
            nx,
            &format!(
                r#"UPSERT {{ PROPOSITION ?l {{ ({{type: "Event", name: "{s}"}}, "tended", {{type: "Event", name: "{o}"}}) }} WITH METADATA {meta} }}"#
            ),
        );
    }
    let links = |nx: &mut Nexus, params: Value| -> Vec<String> {
        match nx.kip_with(r#"SEARCH PROPOSITION "tended" LIMIT 10"#, params) {
            Outcome::Ok { result, .. } => {
                let mut days: Vec<String> = result
                    .as_array()
                    .expect("a list")
                    .iter()
                    .map(|v| {
                        let m = &v["metadata"];
                        m["observed_at"]
                            .as_str()
                            .or(m["created_at"].as_str())
                            .unwrap_or("none")
                            .chars()
                            .take(10)
                            .collect()
                    })
                    .collect();
                days.sort();
                days
            }
            Outcome::Err(e) => panic!("{} {}", e.code, e.message),
        }
    };
    assert_eq!(links(nx, json!({})).len(), 4);
    assert_eq!(
        links(nx, json!({ "@since": "2023-08-18" })),
        ["2023-08-18", "2023-08-19"]
    );
    assert_eq!(links(nx, json!({ "@until": "2023-08-17" })), ["2023-08-17"]);
}

/// A day named in the question brings in what happened that day, in other
/// languages too.
pub fn a_day_named_finds_that_day(nx: &mut Nexus) {
    for (name, day, text) in [
        (
            "a",
            "2023-08-17T10:00:00Z",
            "We talked about the garden and the hike.",
        ),
        (
            "b",
            "2023-08-18T19:30:00+02:00",
            "Nothing special, a quiet evening.",
        ),
        (
            "c",
            "2023-08-19T08:00:00Z",
            "We talked about the garden again.",
        ),
    ] {
        match nx.kip_with(
            r#"UPSERT { CONCEPT ?e { {type: "Event", name: :n} SET ATTRIBUTES { content_summary: :s, start_time: :t } } } WITH METADATA { source: "test", author: "$self" }"#,
            json!({"n": name, "s": text, "t": day}),
        ) {
            Outcome::Ok { .. } => {}
            Outcome::Err(e) => panic!("{} {}", e.code, e.message),
        }
    }
    let mut search = |q: &str| names(nx, json!({ "q": q })).expect("search");
    // only the date ties the question to its answer
    assert_eq!(search("What happened on 18 August, 2023?")[0], "b");
    assert_eq!(search("What happened on August 18th 2023?")[0], "b");
    // in other languages' month names, and with CJK date marks
    assert_eq!(search("Que s'est-il passé le 18 août 2023 ?")[0], "b");
    assert_eq!(search("Was geschah am 18. August 2023?")[0], "b");
    assert_eq!(search("2023年8月18日に何がありましたか")[0], "b");
    // a day and words: the words still rank within and beyond that day
    let hits = search("What about the garden on 2023-08-19?");
    assert_eq!(hits[0], "c", "{hits:?}");
    assert!(hits.contains(&"a".to_string()), "{hits:?}");
    // an ambiguous date is not read as one
    assert!(search("What happened on 18/08/2023?").is_empty());
}
