//! The calibrated matcher at the level the operator meets it: what the
//! cycle proposes for a pair (merge, "same or different?", nothing), how
//! the operator's decisions move the next pairs, and what `somnus why A
//! --with B` shows.

mod common;

use serde_json::{Map, Value};
use somnus::audit::Who;
use somnus::protocol::{Outcome, Request};
use somnus::review::{proposals, undo};
use somnus::sleep;
use somnus::{Nexus, Response};
use std::collections::BTreeMap;

const NOW: &str = "2026-11-20T03:00:00Z";

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let req = Request::command(cmd).with_params(Map::new());
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

fn operator() -> Who {
    Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    }
}

fn memory() -> Nexus {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?k { {type: "$PropositionType", name: "knows"} SET ATTRIBUTES { description: "acquainted" } }
  CONCEPT ?l { {type: "$PropositionType", name: "likes"} SET ATTRIBUTES { description: "a liking" } }
  CONCEPT ?ada { {type: "Person", name: "Ada"} }
}"#,
    );
    nx
}

/// Two people (or things) as two notes would have them.
fn person(nx: &mut Nexus, name: &str, description: &str, known_by_ada: bool) {
    let d = serde_json::to_string(description).unwrap();
    let n = serde_json::to_string(name).unwrap();
    let link = if known_by_ada {
        r#"CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("knows", ?p) } }"#
    } else {
        ""
    };
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?p {{ {{type: "Person", name: {n}}} SET ATTRIBUTES {{ description: {d} }} }} {link} }}"#
        ),
    );
}

fn topic(nx: &mut Nexus, name: &str, description: &str) {
    let d = serde_json::to_string(description).unwrap();
    let n = serde_json::to_string(name).unwrap();
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?p {{ {{type: "Topic", name: {n}}} SET ATTRIBUTES {{ description: {d} }} }} }}"#
        ),
    );
}

fn cycle(nx: &mut Nexus) -> Vec<proposals::Item> {
    common::full_cycle(nx, NOW)
}

fn pair_of(i: &proposals::Item) -> (String, String) {
    let s = |k: &str| {
        i.params
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (a, b) = (s("duplicate_name"), s("canonical_name"));
    if a <= b { (a, b) } else { (b, a) }
}

fn find<'a>(
    items: &'a [proposals::Item],
    class: &str,
    a: &str,
    b: &str,
) -> Option<&'a proposals::Item> {
    let want = if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    };
    items
        .iter()
        .find(|i| i.class == class && pair_of(i) == want)
}

/// What the operator's decisions moved, per level, in a `why` answer.
fn adjustments(why: &Value) -> BTreeMap<String, f64> {
    why["learned"]["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["level"].as_str().unwrap().to_string(),
                x["change"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn why(nx: &mut Nexus, ty: &str, a: &str, b: &str) -> Value {
    sleep::cycle::why_not_merged(nx, &format!("{ty}:{a}"), &format!("{ty}:{b}")).expect("why")
}

#[test]
fn a_person_known_by_name_only_is_asked_about_never_merged() {
    let mut nx = memory();
    // the same name, a title apart, two notes on two sides of her
    person(&mut nx, "Farah Siddiqui", "Her GP in Uppsala", false);
    person(
        &mut nx,
        "Dr. Farah Siddiqui",
        "Prescribed the physiotherapy after the Vienna tour",
        false,
    );
    // the same name in the other order, nothing else in common
    person(&mut nx, "Wei Li", "Colleague from the tour office", false);
    person(
        &mut nx,
        "Li Wei",
        "Student who wrote about the concert",
        false,
    );
    let items = cycle(&mut nx);
    // the same words in another order, nothing else: more likely two
    // people than one; never merged
    assert!(
        find(&items, "merge", "Wei Li", "Li Wei").is_none(),
        "{items:#?}"
    );
    let v = why(&mut nx, "Person", "Wei Li", "Li Wei");
    assert_ne!(v["band"], "merge", "{v}");
    {
        let (a, b) = ("Farah Siddiqui", "Dr. Farah Siddiqui");
        assert!(
            find(&items, "merge", a, b).is_none(),
            "{a} / {b} merged on names alone: {items:#?}"
        );
        let q = find(&items, "same_or_different", a, b)
            .unwrap_or_else(|| panic!("{a} / {b} not asked about: {items:#?}"));
        assert!(q.title.starts_with("Same or different?"), "{}", q.title);
        assert!(
            q.rationale.contains("nothing beyond their names"),
            "{}",
            q.rationale
        );
        assert!(
            q.confidence >= 0.5 && q.confidence < 0.9,
            "{}",
            q.confidence
        );
        let v = why(&mut nx, "Person", a, b);
        assert_eq!(v["band"], "ask", "{v}");
        assert_eq!(v["capped"], true, "{v}");
    }
    // with a neighbour in common, the same name is a merge
    let mut nx = memory();
    person(&mut nx, "Farah Siddiqui", "Her GP in Uppsala", true);
    person(
        &mut nx,
        "Dr. Farah Siddiqui",
        "Prescribed the physiotherapy after the Vienna tour",
        true,
    );
    let items = cycle(&mut nx);
    assert!(
        find(&items, "merge", "Farah Siddiqui", "Dr. Farah Siddiqui").is_some(),
        "{items:#?}"
    );
}

#[test]
fn a_generation_mark_on_one_name_only_is_asked_never_merged() {
    let mut nx = memory();
    person(
        &mut nx,
        "Robert Okafor",
        "Retired engineer, her neighbour",
        true,
    );
    person(
        &mut nx,
        "Robert Okafor Jr.",
        "Plays viola in the youth orchestra",
        true,
    );
    let items = cycle(&mut nx);
    assert!(
        find(&items, "merge", "Robert Okafor", "Robert Okafor Jr.").is_none(),
        "{items:#?}"
    );
    let v = why(&mut nx, "Person", "Robert Okafor", "Robert Okafor Jr.");
    assert_ne!(v["band"], "merge", "{v}");
}

/// Two reordered pairs rejected: the third reordered pair leaves the merge
/// band, and a pair of another kind keeps its place.
#[test]
fn rejections_of_reordered_pairs_teach_the_matcher() {
    let mut nx = memory();
    let pairs = [
        ("Wei Zhang", "Zhang Wei"),
        ("Imre Nagy", "Nagy Imre"),
        ("Yuki Tanaka", "Tanaka Yuki"),
    ];
    for (a, b) in pairs {
        person(&mut nx, a, "Violist in the quartet she coaches", true);
        person(
            &mut nx,
            b,
            "Violist in the quartet she coaches, noted again",
            true,
        );
    }
    person(
        &mut nx,
        "Elizabeth Hartmann",
        "Cellist from the festival days",
        true,
    );
    person(
        &mut nx,
        "Liz Hartmann",
        "Cellist from the festival days, noted again",
        true,
    );
    let items = cycle(&mut nx);
    for (a, b) in pairs {
        assert!(
            find(&items, "merge", a, b).is_some(),
            "{a} / {b}: {items:#?}"
        );
    }
    let before = why(&mut nx, "Person", "Yuki Tanaka", "Tanaka Yuki");
    assert_eq!(before["band"], "merge", "{before}");
    let nickname_before = why(&mut nx, "Person", "Elizabeth Hartmann", "Liz Hartmann");
    assert_eq!(nickname_before["band"], "merge", "{nickname_before}");
    // the operator: two different people each time
    for (a, b) in &pairs[..2] {
        let it = find(&items, "merge", a, b).unwrap();
        proposals::reject(
            &mut nx,
            it.proposal,
            Some(&[it.seq]),
            "two different people",
            "operator",
        )
        .expect("reject");
    }
    let after = why(&mut nx, "Person", "Yuki Tanaka", "Tanaka Yuki");
    assert_ne!(
        after["band"], "merge",
        "still merged after two rejections: {after}"
    );
    assert!(
        after["probability"].as_f64().unwrap() < before["probability"].as_f64().unwrap(),
        "{before}\n{after}"
    );
    assert_eq!(after["learned"]["decisions"], 2, "{after}");
    let moved = adjustments(&after);
    assert!(moved["person_name=reordered"] < 0.0, "{moved:?}");
    // a pair of another kind keeps its place
    let nickname = why(&mut nx, "Person", "Elizabeth Hartmann", "Liz Hartmann");
    assert_eq!(nickname["band"], "merge", "{nickname}");
    // a new reordered pair: asked about, not merged, by the next cycle
    person(
        &mut nx,
        "Anna Kovács",
        "Violist in the quartet she coaches",
        true,
    );
    person(
        &mut nx,
        "Kovács Anna",
        "Violist in the quartet she coaches, noted again",
        true,
    );
    let items = cycle(&mut nx);
    assert!(
        find(&items, "merge", "Anna Kovács", "Kovács Anna").is_none(),
        "{items:#?}"
    );
    // the rejected ones are not asked about again
    for (a, b) in &pairs[..2] {
        assert!(
            find(&items, "same_or_different", a, b).is_none(),
            "{a} / {b} asked again"
        );
    }
    // the lesson is kept: the model of the last cycle says it
    let fitted = sleep::matcher::Fitted::load(&nx).expect("model kept");
    assert_eq!(fitted.model.labels, 2);
}

/// Approving transliterated pairs raises the next one.
#[test]
fn approvals_of_transliterated_pairs_raise_the_next() {
    let mut nx = memory();
    let pairs = [
        (
            "Tchaikovsky Violin Concerto",
            "Tschaikowsky Violin Concerto",
        ),
        ("Rachmaninov Vespers", "Rachmaninoff Vespers"),
        ("Prokofiev Cinderella", "Prokofjew Cinderella"),
    ];
    for (a, b) in pairs {
        topic(&mut nx, a, "Piece she played with the Oslo Philharmonic");
        topic(&mut nx, b, "Recording by Heifetz her teacher lent her");
    }
    let items = cycle(&mut nx);
    let before = why(&mut nx, "Topic", pairs[2].0, pairs[2].1);
    let p_before = before["probability"].as_f64().unwrap();
    for (a, b) in &pairs[..2] {
        let it = find(&items, "same_or_different", a, b)
            .or_else(|| find(&items, "merge", a, b))
            .unwrap_or_else(|| panic!("{a} / {b} neither merged nor asked: {items:#?}"));
        let done = proposals::approve(
            &mut nx,
            it.proposal,
            Some(&[it.seq]),
            &BTreeMap::new(),
            &operator(),
        )
        .expect("approve");
        assert_eq!(done.applied, vec![it.seq]);
    }
    let after = why(&mut nx, "Topic", pairs[2].0, pairs[2].1);
    let p_after = after["probability"].as_f64().unwrap();
    assert!(p_after > p_before, "{before}\n{after}");
    assert_eq!(after["learned"]["decisions"], 2, "{after}");
    assert!(p_after >= p_before + 0.1, "{before}\n{after}");
    let moved = adjustments(&after);
    assert!(moved["name=transliterated"] > 0.0, "{moved:?}");
}

/// An approval undone takes its lesson back.
#[test]
fn an_undone_approval_is_a_decision_taken_back() {
    let mut nx = memory();
    person(&mut nx, "Farah Siddiqui", "Her GP in Uppsala", false);
    person(
        &mut nx,
        "Dr. Farah Siddiqui",
        "Prescribed the physiotherapy",
        false,
    );
    let items = cycle(&mut nx);
    let q = find(
        &items,
        "same_or_different",
        "Farah Siddiqui",
        "Dr. Farah Siddiqui",
    )
    .expect("asked");
    proposals::approve(
        &mut nx,
        q.proposal,
        Some(&[q.seq]),
        &BTreeMap::new(),
        &operator(),
    )
    .expect("approve");
    let labels = somnus::review::labels::all(nx.db()).unwrap();
    assert_eq!(labels.len(), 1);
    assert!(labels[0].same);
    assert_eq!(labels[0].levels["person_name"], "equal");
    undo::proposal(&mut nx, q.proposal, &operator()).expect("undo");
    assert!(somnus::review::labels::all(nx.db()).unwrap().is_empty());
}

/// `somnus why A --with B`: the vector, each weight, what the decisions
/// changed, the probability.
#[test]
fn why_with_shows_the_vector_the_weights_and_the_probability() {
    let db = common::tmp("matcher-why").join("memory.db");
    for cmd in [
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Topic"} } }"#,
        r#"UPSERT { CONCEPT ?a { {type: "Topic", name: "Dvořák Cello Concerto"} SET ATTRIBUTES { description: "Concerto she played in Prague with the Czech Philharmonic" } } CONCEPT ?b { {type: "Topic", name: "Dvorak Cello Concerto"} SET ATTRIBUTES { description: "Recording by Rostropovich she listens to" } } }"#,
    ] {
        common::kip(&db, cmd);
    }
    let out = common::somnus(
        &db,
        &[
            "why",
            "Topic:Dvořák Cello Concerto",
            "--with",
            "Topic:Dvorak Cello Concerto",
        ],
    );
    common::ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "comparison vector",
        "name         equal",
        "description  disjoint_names",
        "m 0.",
        "u 0.",
        "prior",
        "learned from 0 decisions",
        "probability 0.",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    // plainly equal names are not overruled by two notes on two sides
    assert!(!text.contains("not merged"), "{text}");
}

/// Prints the demo memory's candidate pairs as the matcher weighs them
/// (`cargo test --release --test matcher -- --ignored --nocapture demo`).
#[test]
#[ignore]
fn demo_candidates() {
    let mut nx = somnus::demo::in_memory().expect("demo");
    for c in sleep::cycle::scored_candidates(&mut nx).unwrap() {
        println!(
            "{} / {}: {:.3} {:?} {:?}",
            c.a.name, c.b.name, c.probability, c.comparison.levels, c.weights
        );
    }
}

/// Crowds of look-alike names and names made of number words: the cycle
/// ends, proposes nothing absurd, and the model stays a probability.
#[test]
fn crowds_of_lookalikes_and_number_words_end_and_stay_calibrated() {
    let mut nx = memory();
    // 150 people one letter apart from the next: every pair alike, none one
    let mut cmd = String::from("UPSERT {\n");
    for i in 0..150 {
        let surname = format!(
            "Berg{}{}",
            (b'a' + (i / 26) as u8) as char,
            (b'a' + (i % 26) as u8) as char
        );
        cmd.push_str(&format!(
            "  CONCEPT ?p{i} {{ {{type: \"Person\", name: \"Anna {surname}\"}} }}\n"
        ));
    }
    cmd.push('}');
    kip(&mut nx, &cmd);
    // long names of number words, one word apart
    let words: Vec<&str> = ["one", "two", "three", "forty", "fifth", "hundred"]
        .iter()
        .copied()
        .cycle()
        .take(600)
        .collect();
    let long = words.join(" ");
    topic(&mut nx, &long, "A list");
    topic(&mut nx, &format!("{long} seven"), "Another list");
    topic(&mut nx, "Fifth Avenue", "Street in New York");
    topic(&mut nx, "5th Avenue", "Where the shop is, in New York");
    let items = cycle(&mut nx);
    assert!(
        !items
            .iter()
            .any(|i| i.class == "merge" && i.title.contains("Anna Berg")),
        "{items:#?}"
    );
    let cands = sleep::cycle::scored_candidates(&mut nx).unwrap();
    assert!(cands.len() > 1000, "the crowd is compared: {}", cands.len());
    for c in cands {
        assert!(
            (0.0..=1.0).contains(&c.probability),
            "{} / {}: {}",
            c.a.name,
            c.b.name,
            c.probability
        );
    }
    let v = why(&mut nx, "Topic", "Fifth Avenue", "5th Avenue");
    let name = v["vector"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["feature"] == "name")
        .cloned();
    assert_eq!(
        name.map(|t| t["level"].clone()),
        Some("equal".into()),
        "{v}"
    );
    assert_eq!(v["band"], "merge", "{v}");
}

/// Pairs of a series: an automation told apart by a letter, two months'
/// reports, a plan and its result.
const SIBLINGS: [(&str, &str); 3] = [
    (
        "Glow ReelFarm Automation A Current Settings",
        "Glow ReelFarm Automation B Current Settings",
    ),
    (
        "Niche Fitness Report June 2026",
        "Niche Fitness Report July 2026",
    ),
    (
        "Mission Control Cleanup Plan",
        "Mission Control Cleanup Result",
    ),
];

/// Names of a series are siblings, never one thing misspelt: two
/// automations told apart by a letter, two months' reports, a plan and its
/// result, even with the same text; a word misspelt inside a long name is
/// still one thing.
#[test]
fn siblings_of_a_series_are_never_taken_for_a_typo() {
    let mut nx = memory();
    let same = "Posts three reels a day from the prompt bank, captions from the template, at nine, one and six.";
    for (a, b) in SIBLINGS {
        topic(&mut nx, a, same);
        topic(&mut nx, b, same);
    }
    topic(
        &mut nx,
        "Kubernetes Migration Runbook",
        "Steps to move the staging cluster to the new nodes.",
    );
    topic(
        &mut nx,
        "Kubernets Migration Runbook",
        "Steps to move the staging cluster to the new nodes.",
    );
    let items = cycle(&mut nx);
    for (a, b) in SIBLINGS {
        assert!(
            find(&items, "merge", a, b).is_none(),
            "{a} / {b}: {items:#?}"
        );
    }
    assert!(
        find(
            &items,
            "merge",
            "Kubernetes Migration Runbook",
            "Kubernets Migration Runbook"
        )
        .is_some(),
        "{items:#?}"
    );
}

/// A merge keeps one text: two notes that each hold a long text the other
/// lacks (two drafts of one letter) are asked about, never merged; two
/// imported files with different texts are two documents, not even asked.
#[test]
fn two_texts_are_never_merged_into_one() {
    let mut nx = memory();
    let first = "The Tenex model of embedding, auditing, scoping, building and driving adoption is the pattern I ran across consulting engagements: a construction client came with no brief, I interviewed the site lead and two managers, mapped where work was dropped, ranked the fixes by effort and impact, and shipped a field dashboard that replaced manual check-ins before two follow-on projects. Before consulting I was a business systems analyst at Charter Communications on a billion-dollar enterprise portfolio, wrote the statement-of-work templates that became national references, and sat with executives to turn findings into structured briefs for forward-deployed engineers. Sincerely.";
    let second = "Pilots change nothing when nobody owns workflow redesign after launch. At Spectrum I spent six years translating fuzzy business demands into requirements, process maps, acceptance plans and launch checks; now I build approval queues, dashboards and reusable playbooks with Claude, n8n and spreadsheets, and AgentGuard shows confidence-gated review with audit trails and thresholds. I would run strategy audits that surface how work really happens, translate executive goals into technical direction, design sprints from diagnosis to prototype, and walk through how a stalled pilot becomes an adopted workflow with owners, rollout checkpoints, quality gates and measurable outcomes.";
    topic(&mut nx, "Cover Letter: Tenex, AI Strategist", first);
    topic(&mut nx, "Cover Letter - Tenex, AI Strategist", second);
    for (name, file, text) in [
        ("Resume JT Somwaru", "memory/resumes/a.md", first),
        (
            "Resume: JT Somwaru",
            "memory/resumes/b.md",
            "Jon Trevor Somwaru, New York. Business systems analyst, six years at Charter on a national product portfolio; consulting since.",
        ),
    ] {
        let (n, f, d) = (
            serde_json::to_string(name).unwrap(),
            serde_json::to_string(file).unwrap(),
            serde_json::to_string(text).unwrap(),
        );
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?p {{ {{type: "Topic", name: {n}}} SET ATTRIBUTES {{ description: {d}, note_file: {f} }} }} }}"#
            ),
        );
    }
    let items = cycle(&mut nx);
    let (a, b) = (
        "Cover Letter: Tenex, AI Strategist",
        "Cover Letter - Tenex, AI Strategist",
    );
    assert!(find(&items, "merge", a, b).is_none(), "{items:#?}");
    let v = why(&mut nx, "Topic", a, b);
    assert_eq!(v["band"], "ask", "{v}");
    assert!(find(&items, "merge", "Resume JT Somwaru", "Resume: JT Somwaru").is_none());
    assert!(
        find(
            &items,
            "same_or_different",
            "Resume JT Somwaru",
            "Resume: JT Somwaru"
        )
        .is_none()
    );
    let v = why(&mut nx, "Topic", "Resume JT Somwaru", "Resume: JT Somwaru");
    assert!(v.to_string().contains("two documents"), "{v}");
}

/// A preference (or a fact, a lesson) named by its opening words is its
/// text: two that open alike but name different things (`US microcap
/// stocks` / `Hong Kong large caps`) are asked about, never merged; two
/// that say the same in other words are merged, as before.
#[test]
fn two_statements_that_open_alike_are_one_only_when_they_say_the_same() {
    let mut nx = memory();
    let statement = |nx: &mut Nexus, name: &str, text: &str| {
        let (n, d) = (
            serde_json::to_string(name).unwrap(),
            serde_json::to_string(text).unwrap(),
        );
        kip(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?p {{ {{type: "Preference", name: {n}}} SET ATTRIBUTES {{ description: {d} }} }} CONCEPT ?ada {{ {{type: "Person", name: "Ada"}} SET PROPOSITIONS {{ ("likes", ?p) }} }} }}"#
            ),
        );
    };
    let scan = "User prefers the nightly portfolio scan to run at 22:00 Shanghai time and to";
    let scan_b = format!("{scan} (bbbb)");
    statement(
        &mut nx,
        scan,
        &format!("{scan} report only US microcap stocks."),
    );
    statement(
        &mut nx,
        &scan_b,
        &format!("{scan} report only Hong Kong large caps."),
    );
    let curl = "User strongly rejects running unverified 'curl | bash' installation scripts for";
    let curl_b = format!("{curl} (nsvh)");
    statement(
        &mut nx,
        curl,
        &format!("{curl} AI agents without auditing them first."),
    );
    statement(
        &mut nx,
        &curl_b,
        &format!("{curl} AI agents before a thorough audit of what they do."),
    );
    let items = cycle(&mut nx);
    assert!(
        find(&items, "merge", scan, &scan_b).is_none(),
        "two scans, two markets: {:?}",
        items.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
    let asked = find(&items, "same_or_different", scan, &scan_b).expect("asked");
    assert!(
        asked
            .rationale
            .contains("each states what the other does not (us / hong, kong)"),
        "{}",
        asked.rationale
    );
    assert!(
        find(&items, "merge", curl, &curl_b).is_some(),
        "one rule, said twice: {:?}",
        items.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
}

/// Two sections of one note (`OpenRouter конфигурация › Работает для` /
/// `… › Не работает для`, a real workspace's "works for" and "does not
/// work for"; `… › 教训` / `… › 解决方案`, lessons and solution) were
/// merged as near-identical spellings: a long shared heading made the
/// rest look like a slip. They are parts of one note, and a name that
/// says "not" is never the one that does not; a slip inside a section's
/// own heading still is one.
#[test]
fn sections_of_one_note_and_opposite_names_are_never_merged() {
    let mut nx = memory();
    let shared = "OpenRouter keys and which tools they serve";
    let pairs = [
        (
            "OpenRouter конфигурация › Работает для",
            "OpenRouter конфигурация › Не работает для",
        ),
        (
            "19:05-19:08 — Dashboard Tab叠层问题修复 › 教训",
            "19:05-19:08 — Dashboard Tab叠层问题修复 › 解决方案",
        ),
        ("Podman can run rootless", "Podman cannot run rootless"),
        ("Podman notes › Install", "Podman notes › Installation"),
    ];
    for (a, b) in pairs {
        topic(&mut nx, a, shared);
        topic(&mut nx, b, shared);
    }
    topic(&mut nx, "Infrastructure notes › Kubernetes upgrade", shared);
    topic(&mut nx, "Infrastructure notes › Kubernets upgrade", shared);
    let items = cycle(&mut nx);
    let titles: Vec<&String> = items.iter().map(|i| &i.title).collect();
    for (a, b) in pairs {
        assert!(
            find(&items, "merge", a, b).is_none(),
            "{a} / {b}: {titles:?}"
        );
        assert!(
            find(&items, "same_or_different", a, b).is_none(),
            "{a} / {b}: {titles:?}"
        );
    }
    let v = why(&mut nx, "Topic", pairs[2].0, pairs[2].1);
    assert!(v.to_string().contains("opposites"), "{v}");
    let v = why(&mut nx, "Topic", pairs[3].0, pairs[3].1);
    assert!(v.to_string().contains("parts of one note"), "{v}");
    assert!(
        find(
            &items,
            "merge",
            "Infrastructure notes › Kubernetes upgrade",
            "Infrastructure notes › Kubernets upgrade"
        )
        .is_some(),
        "a slip in a section's heading: {titles:?}"
    );
}
