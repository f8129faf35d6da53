//! Consolidation and organisation: what Events state becomes knowledge,
//! patterns become Preferences, Routines and Insights, notes and themes
//! are filed in domains, duplicates merged, secrets redacted, gaps reported.

use super::*;

/// An item of `ty` named `name`, described as `about`, filed in Unsorted.
fn unsorted(nx: &mut Nexus, ty: &str, name: &str, about: &str) {
    let out = nx.kip_with(
        r#"UPSERT { CONCEPT ?n { {type: :ty, name: :name} SET ATTRIBUTES { description: :about } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Unsorted"}) } } }"#,
        serde_json::json!({"ty": ty, "name": name, "about": about}),
    );
    assert!(
        matches!(out, somnus::protocol::Outcome::Ok { .. }),
        "{name}: {}",
        out.to_json()
    );
}

/// 5A: a stale Event that states a preference outright gets a new
/// Preference, proposed, derived from it, with its holder's `prefers`
/// link; a decision the memory has no type for is reported, not forced
/// into another type; what the Event already links to is not made twice.
#[test]
fn consolidation_extracts_what_an_event_states() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?ada { {type: "Person", name: "Ada Park"} }
  CONCEPT ?e { {type: "Event", name: "Conversation:2026-10-01:travel"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z",
      content_summary: "Planning the Lisbon trip. Ada prefers window seats on long flights because she sleeps; decided to book the night train" }
    SET PROPOSITIONS { ("involves", {type: "Person", name: "Ada Park"}) } }
}"#,
    );
    let rep = cycle(&mut nx);
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let it = p
        .items
        .iter()
        .find(|i| i.class == "consolidate" && i.title.contains("Conversation:2026-10-01:travel"))
        .unwrap_or_else(|| panic!("{:?}", p.items.iter().map(|i| &i.title).collect::<Vec<_>>()));
    assert!(
        it.title
            .contains("Preference:Prefers window seats on long flights"),
        "{}",
        it.title
    );
    assert!(it.rationale.contains("\"prefers\""), "{}", it.rationale);
    let text = rep.markdown();
    assert!(
        text.contains("Events state 1 thing the memory has no Decision type to keep in: \"Book the night train\""),
        "{text}"
    );
    // nothing is created before approval
    let v = kip(
        &mut nx,
        r#"FIND(COUNT(?p)) WHERE { ?p {type: "Preference"} }"#,
    );
    assert_eq!(v, json!(0));
    proposals::approve(
        &mut nx,
        p.id,
        Some(&[it.seq]),
        &Default::default(),
        &operator(),
    )
    .unwrap();
    let v = kip(
        &mut nx,
        r#"FIND(?p.name, ?e.name) WHERE {
  ?a {type: "Person", name: "Ada Park"}
  (?a, "prefers", ?p)
  (?p, "derived_from", ?e)
  (?e, "consolidated_to", ?p)
}"#,
    );
    assert_eq!(
        v,
        json!([
            ["Prefers window seats on long flights"],
            ["Conversation:2026-10-01:travel"]
        ]),
        "{v}"
    );
    // the next cycle makes nothing twice
    let rep = cycle(&mut nx);
    assert!(
        proposed(&nx, &rep, "consolidate")
            .iter()
            .all(|t| !t.contains("Prefers window seats"))
    );
}

/// 5B: a pattern drawn from Events marks them consolidated into it.
#[test]
fn a_pattern_marks_its_source_events_consolidated() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada Park"} } CONCEPT ?t { {type: "$ConceptType", name: "Topic"} } CONCEPT ?c { {type: "Topic", name: "Cello"} } }"#,
    );
    for d in ["14", "16", "18"] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Lesson:2026-11-{d}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-11-{d}T10:00:00Z", content_summary: "Cello lesson with Ada", key_concepts: ["Cello"], participants: ["Ada Park"] }}
  SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "Ada Park"}}) ("mentions", {{type: "Topic", name: "Cello"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let it = p
        .items
        .iter()
        .find(|i| i.class == "pattern")
        .unwrap_or_else(|| panic!("{:?}", p.items.iter().map(|i| &i.title).collect::<Vec<_>>()));
    proposals::approve(
        &mut nx,
        p.id,
        Some(&[it.seq]),
        &Default::default(),
        &operator(),
    )
    .unwrap();
    let v = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} (?e, "consolidated_to", ?i) ?i {type: "Insight"} FILTER(?e.attributes.consolidation_status == "completed") }"#,
    );
    assert_eq!(v, json!(3), "{v}");
}

/// 5B: a preference stated in several recent Events (with different key
/// concepts alongside) becomes its holder's Preference, and Events on one
/// weekday a routine.
#[test]
fn patterns_are_preferences_and_routines_as_well_as_insights() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada Park"} } CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?c { {type: "Topic", name: "Coffee"} } CONCEPT ?q { {type: "Topic", name: "Quartet"} } }"#,
    );
    let ev = |nx: &mut Nexus, name: &str, at: &str, summary: &str, concepts: &str, topic: &str| {
        kip(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "{at}", content_summary: "{summary}", key_concepts: {concepts}, participants: ["Ada Park"] }}
  SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "Ada Park"}}) ("mentions", {{type: "Topic", name: "{topic}"}}) }} }} }}"#
            ),
        );
    };
    // three mornings, other subjects alongside each time
    ev(
        &mut nx,
        "Chat:1",
        "2026-11-02T08:00:00Z",
        "Ada prefers oat milk in her coffee",
        r#"["Coffee", "Travel"]"#,
        "Coffee",
    );
    ev(
        &mut nx,
        "Chat:2",
        "2026-11-06T08:00:00Z",
        "Ada prefers oat milk in her coffee. Long day ahead",
        r#"["Coffee", "Work"]"#,
        "Coffee",
    );
    ev(
        &mut nx,
        "Chat:3",
        "2026-11-12T08:00:00Z",
        "Coffee order; Ada prefers oat milk in her coffee",
        r#"["Coffee"]"#,
        "Coffee",
    );
    // Tuesday evenings, three weeks running
    for d in ["03", "10", "17"] {
        ev(
            &mut nx,
            &format!("Quartet:{d}"),
            &format!("2026-11-{d}T19:00:00Z"),
            "Quartet rehearsal",
            r#"["Quartet"]"#,
            "Quartet",
        );
    }
    let rep = cycle(&mut nx);
    let titles = proposed(&nx, &rep, "pattern");
    assert!(
        titles
            .iter()
            .any(|t| t == "New Preference \"Prefers oat milk in her coffee\" from 3 Events"),
        "{titles:?}"
    );
    assert!(
        titles.iter().any(
            |t| t == "New Insight \"Routine: Quartet with Ada Park on Tuesdays\" from 3 Events"
        ),
        "{titles:?}"
    );
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let seqs: Vec<i64> = p
        .items
        .iter()
        .filter(|i| i.class == "pattern")
        .map(|i| i.seq)
        .collect();
    proposals::approve(&mut nx, p.id, Some(&seqs), &Default::default(), &operator()).unwrap();
    let v = kip(
        &mut nx,
        r#"FIND(?p.attributes.pattern_kind, ?p.attributes.evidence_count) WHERE { ({type: "Person", name: "Ada Park"}, "prefers", ?p) }"#,
    );
    assert_eq!(v, json!([["preference", 3]]), "{v}");
    let v = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} (?e, "consolidated_to", ?p) FILTER(?e.attributes.consolidation_status == "completed") }"#,
    );
    assert_eq!(v, json!(6), "{v}");
    // the next cycle proposes none of them again
    let rep = cycle(&mut nx);
    assert!(proposed(&nx, &rep, "pattern").is_empty());
}

/// Items waiting in Unsorted whose names share only their type's word
/// ("Project Alpha", "Project Beta", …) get no domain named after the
/// type.
#[test]
fn a_type_name_is_no_theme_for_a_new_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Project"} } }"#,
    );
    for (name, about) in [
        ("Project Alpha", "a birdwatching survey of wetlands"),
        ("Project Beta", "a kitchen renovation"),
        ("Project Gamma", "learning the cello"),
        ("Project Delta", "tax returns for the year"),
    ] {
        unsorted(&mut nx, "Project", name, about);
    }
    let rep = cycle(&mut nx);
    let domains = proposed(&nx, &rep, "domain");
    assert!(
        domains
            .iter()
            .all(|t| !t.starts_with("New domain \"Project\"")),
        "{domains:?}"
    );
}

/// A person's name with its genitive written on to it, as Swedish writes
/// it ("Annas prioriteringar", Anna's priorities; a real workspace's
/// notes), names no domain, as the name itself does not.
#[test]
fn a_persons_genitive_is_no_theme_for_a_new_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Anna"} SET ATTRIBUTES { relationship_to_self: "user" } } }"#,
    );
    for (name, about) in [
        ("Annas prioriteringar", "Annas arbete med kalendern"),
        ("Annas önskemål", "Annas morgonrutin och skrivande"),
        ("Vår relation", "Annas tillit och feedback"),
        ("Transformationsfokus", "Annas andliga utveckling"),
    ] {
        unsorted(&mut nx, "Insight", name, about);
    }
    let rep = cycle(&mut nx);
    let domains = proposed(&nx, &rep, "domain");
    assert!(
        domains
            .iter()
            .all(|t| !t.starts_with("New domain \"Annas\"")),
        "{domains:?}"
    );
}

/// Three spellings of one person and two of another are two merge items,
/// one per group (a canonical and its duplicates), and approving the
/// three-way one is one step: one person is left, holding every fact the
/// three held; nothing is marked stale.
#[test]
fn duplicates_are_proposed_per_cluster_and_a_cluster_merges_in_one_step() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?city { {type: "City", name: "Arlington"} }
  CONCEPT ?a { {type: "Person", name: "Grace Hopper"} SET ATTRIBUTES { description: "Rear admiral, wrote the first compiler" } SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?b { {type: "Person", name: "grace hopper"} SET ATTRIBUTES { description: "Computer scientist" } SET PROPOSITIONS { ("lives_in", {type: "City", name: "Arlington"}) ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?c { {type: "Person", name: "Grace  Hopper."} SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?d { {type: "Person", name: "Alan Turing"} SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?e { {type: "Person", name: "alan turing"} SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
}"#,
    );
    let rep = cycle(&mut nx);
    let merges = proposed(&nx, &rep, "merge");
    assert_eq!(merges.len(), 2, "{merges:?}");
    let three = merges
        .iter()
        .find(|t| t.contains("Grace") || t.contains("grace"))
        .expect("the Hopper group");
    assert!(three.starts_with("Merge 2 Person ("), "{three}");
    let id = rep.proposal.expect("a proposal");
    let item = proposals::items(&nx, id)
        .expect("items")
        .into_iter()
        .find(|i| &i.title == three)
        .expect("item");
    assert_eq!(item.commands.len(), 2, "{item:?}");
    let done = proposals::approve(
        &mut nx,
        id,
        Some(&[item.seq]),
        &Default::default(),
        &operator(),
    )
    .expect("approve");
    assert_eq!(done.applied, vec![item.seq]);
    assert!(done.stale.is_empty());
    let people = kip(&mut nx, r#"FIND(?p.name) WHERE { ?p {type: "Person"} }"#);
    let left: Vec<String> = people
        .as_array()
        .expect("names")
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.to_lowercase().contains("hopper"))
        .map(str::to_string)
        .collect();
    assert_eq!(left.len(), 1, "{people}");
    let name = left[0].clone();
    for (pred, ty, object) in [
        ("lives_in", "City", "Arlington"),
        ("works_with", "Person", "Ada"),
    ] {
        let held = kip(
            &mut nx,
            &format!(
                r#"FIND(COUNT(?o)) WHERE {{ ?p {{type: "Person", name: "{name}"}} (?p, "{pred}", ?o) ?o {{type: "{ty}", name: "{object}"}} }}"#
            ),
        );
        assert_eq!(held, json!(1), "{pred}");
    }
}

/// A password and an API token kept in memory are counted by health,
/// proposed for redaction by the cycle, and gone once approved; the
/// memory still says a secret was there, the element keeps its source,
/// and neither the health list, the report nor the proposal shows the
/// value.
#[test]
fn secrets_are_counted_proposed_for_redaction_and_never_shown() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    kip(
        &mut nx,
        &format!(
            r#"UPSERT {{
  CONCEPT ?a {{ {{type: "Person", name: "Ada"}} SET ATTRIBUTES {{ notes: ["likes tea", "her email password: Tr0ub4dor&3"], bio: "Mathematician" }} }}
  CONCEPT ?t {{ {{type: "Topic", name: "Deploys"}} SET ATTRIBUTES {{ description: "deploy with {token} from CI" }} }}
}} WITH METADATA {{ source: "moltbot:MEMORY.md:4", author: "moltbot" }}"#
        ),
    );
    let health = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    let all = format!("{health:?}");
    assert!(!all.contains("Tr0ub4dor") && !all.contains(&token), "{all}");
    let m = health
        .metrics
        .iter()
        .find(|m| m.key == "secrets")
        .expect("a secrets metric");
    assert_eq!(m.value, 2.0);
    assert!(
        m.items.iter().any(|i| i.contains("Ada (notes: password)")),
        "{:?}",
        m.items
    );

    let rep = cycle(&mut nx);
    let said = serde_json::to_string(&rep).expect("json");
    assert!(
        !said.contains("Tr0ub4dor") && !said.contains(&token),
        "{said}"
    );
    let titles = proposed(&nx, &rep, "redact");
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles
            .iter()
            .any(|t| t == "Redact 1 secret (github-pat) in Topic \"Deploys\": description"),
        "{titles:?}"
    );
    let id = rep.proposal.expect("proposal");
    let items: Vec<i64> = proposals::items(&nx, id)
        .expect("items")
        .into_iter()
        .filter(|i| i.class == "redact")
        .map(|i| {
            assert!(!i.rationale.contains("Tr0ub4dor"), "{i:?}");
            // the preview an operator reviews (before and after) never
            // shows the secret either
            let preview = serde_json::to_string(&i.preview).expect("json");
            assert!(
                !preview.contains("Tr0ub4dor") && !preview.contains(&token),
                "{preview}"
            );
            i.seq
        })
        .collect();
    let done = proposals::approve(&mut nx, id, Some(&items), &Default::default(), &operator())
        .expect("approve");
    assert_eq!(done.applied.len(), 2);
    let ada = kip(
        &mut nx,
        r#"FIND(?a) WHERE { ?a {type: "Person", name: "Ada"} }"#,
    );
    assert_eq!(
        ada[0]["attributes"]["notes"],
        json!(["likes tea", "her email password: [redacted password]"])
    );
    assert_eq!(ada[0]["metadata"]["source"], json!("moltbot:MEMORY.md:4"));
    assert_eq!(ada[0]["metadata"]["redacted_secrets"], json!(["password"]));
    let topic = kip(
        &mut nx,
        r#"FIND(?t.attributes.description) WHERE { ?t {type: "Topic", name: "Deploys"} }"#,
    );
    assert_eq!(topic, json!(["deploy with [redacted github-pat] from CI"]));
    let after = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    let m = after
        .metrics
        .iter()
        .find(|m| m.key == "secrets")
        .expect("metric");
    assert_eq!(m.value, 0.0);
}

/// Daily-note Events waiting in Unsorted, named by their file and heading
/// ("2026-03-18-final", "Afternoon"), get a domain only for a theme their
/// text shares: never a date, a time of day, a file-name word or heading
/// scaffolding ("Created", "Final", "Summary").
#[test]
fn a_new_domain_is_named_by_a_theme_the_text_shares_never_by_scaffolding() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    for (name, text) in [
        (
            "2026-03-18-final: Afternoon",
            "Created: the invoice run for the bakery finished. Summary: fine.",
        ),
        (
            "2026-03-19-final: Afternoon",
            "Created: the bakery supplier sent new prices. Summary: higher.",
        ),
        (
            "2026-03-20-final: Morning",
            "Created: paid the bakery invoice by transfer. Summary: done.",
        ),
        (
            "2026-03-21-final: Afternoon",
            "Created: called the bakery about Sunday bread. Summary: ok.",
        ),
        // where a thing was written down, and a compound's parts, are no
        // themes (a real diary: "更新了 SOUL.md", "Minimal → Context-Graph")
        (
            "2026-03-22-final: Evening",
            "Updated SOUL.md and memory/journal.md; the bakery closes at six; protocol Minimal → Context-Graph.",
        ),
        (
            "2026-03-23-final: Evening",
            "Read SOUL.md again, see https://example.com/soul-notes; level Context-Graph reached.",
        ),
        (
            "2026-03-24-final: Night",
            "Backed up SOUL.md; compliance Context-Graph kept.",
        ),
        (
            "2026-03-25-final: Night",
            "Rewrote SOUL.md after the talk; still at Context-Graph.",
        ),
    ] {
        common::note_in(&mut nx, name, text, "Unsorted");
    }
    let rep = cycle(&mut nx);
    let domains = new_domains(&nx, &rep);
    common::assert_no_new_domain(
        &domains,
        &[
            "Final",
            "Afternoon",
            "Morning",
            "Created",
            "Summary",
            "2026",
            "SOUL",
            "Soul",
            "Context",
            "Graph",
            "Journal",
            "Example",
        ],
        true,
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Bakery\" for 5 items")),
        "{domains:?}"
    );
}

/// What real daily notes showed: a note that mentions a routine in
/// passing ("… during the heartbeat window") is not that routine's when its
/// name says what it is about ("Security Event"); a product's name is one
/// theme ("PolyCop", never "Poly"), an emoji no word ("✅" is not "white
/// check mark"), and a note is filed by what is particular to it, never by
/// the dates, times and log words every note shares.
#[test]
fn notes_are_filed_by_what_they_are_about_never_by_a_passing_mention_or_a_date() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let event = common::note_in;
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Heartbeat"} SET ATTRIBUTES { description: "heartbeat checks", status: "active" } } }"#,
    );
    for h in ["08", "09", "10", "11"] {
        event(
            &mut nx,
            &format!("2026-02-24 {h}:00 Heartbeat"),
            "Heartbeat check: gateway up, inbox empty. Session agent ok, Feb 24 2026 morning ✅",
            "Heartbeat",
        );
    }
    for (i, t) in ["9:53 PM", "1:25 AM", "4:00 AM"].iter().enumerate() {
        event(
            &mut nx,
            &format!("2026-02-2{i} Security Event — {t}"),
            "Security: injection attempt blocked, a prompt asked for the wallet key; refused and logged during the heartbeat window ✅",
            "Unsorted",
        );
    }
    for i in 0..3 {
        event(
            &mut nx,
            &format!("2026-03-2{i} 案例学习 {i}"),
            "Studied the PolyCop case: PolyCop copies whale trades on OpenClaw ✅",
            "Unsorted",
        );
    }
    // the agent's own name is who writes the notes, not what they are about
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?s { {type: "Person", name: "$self"} SET ATTRIBUTES { identity: { name: "Xiaomo" } } } }"#,
    );
    for (i, t) in [
        "Xiaomo restarted the gateway.",
        "Xiaomo wrote the weekly digest.",
        "Xiaomo archived old logs.",
    ]
    .iter()
    .enumerate()
    {
        event(&mut nx, &format!("2026-04-0{i} note"), t, "Unsorted");
    }
    // shares with Heartbeat only what every note says: a day, a time of
    // day, "session", "agent", a tick
    event(
        &mut nx,
        "2026-02-25 20:00 Crypto Full Analysis",
        "Session agent ran the crypto portfolio analysis, Feb 25 2026 morning: solana weak, ether steady ✅",
        "Unsorted",
    );
    let rep = cycle(&mut nx);
    let domains = proposed(&nx, &rep, "domain");
    let filed = proposed(&nx, &rep, "reclassify");
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Security\" for 3 items")),
        "{domains:?}"
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"PolyCop\" for 3 items")),
        "{domains:?}"
    );
    common::assert_no_new_domain(
        &domains,
        &[
            "Poly\"", "Claw", "White", "Check", "Mark", "Morning", "Session",
        ],
        false,
    );
    assert!(
        filed.iter().all(|t| !t.contains("under Heartbeat")),
        "nothing here is a heartbeat: {filed:?}"
    );
}

/// Chinese text is segmented by a dictionary, and a theme is a word rare
/// enough in general text to say what the items are about: "心跳"
/// (heartbeat), never "工作" (work) or "测试" (test), which every note
/// uses, nor the user's name; and one routine written in two languages is
/// one domain, not one per word.
#[test]
fn chinese_themes_are_segmented_words_that_say_something_and_one_routine_is_one_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?u { {type: "Person", name: "SAYELF"} SET ATTRIBUTES { relationship_to_self: "user" } } }"#,
    );
    for (i, text) in [
        "05:23 心跳检查：服务器心跳正常，SAYELF 的工作测试继续。",
        "06:23 heartbeat: 网关心跳超时一次，已重启，工作测试继续。",
        "07:23 heartbeat: 心跳检查通过，SAYELF 工作测试暂停。",
        "08:23 heartbeat check passed; the heartbeat log rotated.",
        "09:23 heartbeat check passed after the gateway restart.",
        "今天和 SAYELF 讨论了工作计划和测试安排。",
        "整理了工作笔记，测试了新的脚本，SAYELF 同意。",
    ]
    .iter()
    .enumerate()
    {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "2026-03-2{i} 记录"}} SET ATTRIBUTES {{ event_class: "Note", content_summary: "{text}", start_time: "2026-11-19T10:00:00Z" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let domains = new_domains(&nx, &rep);
    common::assert_no_new_domain(
        &domains,
        &["工作", "测试", "Sayelf", "SAYELF", "检查"],
        true,
    );
    assert_eq!(domains.len(), 1, "one routine, one domain: {domains:?}");
    assert!(
        domains[0].starts_with("New domain \"心跳\" for 5 items")
            || domains[0].starts_with("New domain \"Heartbeat\" for 5 items"),
        "{domains:?}"
    );
}

/// Phase 6: the duplicate's better values reach the canonical node before
/// the merge (issue 39: MERGE kept the canonical value on every conflict,
/// so a richer or fuller value on the duplicate was lost); a conflict the
/// canonical value wins is named in the rationale.
#[test]
fn a_merge_keeps_the_duplicates_better_values_and_names_those_it_drops() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Person", name: "Marie Curie"} SET ATTRIBUTES { born: "1867", city: "Paris", languages: ["Polish"], role: "" } SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?b { {type: "Person", name: "marie curie"} SET ATTRIBUTES { born: "1868", city: "Paris, France", languages: ["French"], role: "physicist" } SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
}"#,
    );
    let rep = cycle(&mut nx);
    let id = rep.proposal.expect("a proposal");
    let item = proposals::items(&nx, id)
        .expect("items")
        .into_iter()
        .find(|i| i.class == "merge")
        .expect("a merge");
    assert!(item.rationale.contains("born"), "{}", item.rationale);
    proposals::approve(
        &mut nx,
        id,
        Some(&[item.seq]),
        &Default::default(),
        &operator(),
    )
    .expect("approve");
    let v = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person"} FILTER(?p.name == "Marie Curie" || ?p.name == "marie curie") }"#,
    );
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
    let a = &v[0];
    assert_eq!(a["city"], "Paris, France", "{a}");
    assert_eq!(a["role"], "physicist", "{a}");
    let langs = a["languages"].as_array().cloned().unwrap_or_default();
    assert!(
        langs.contains(&json!("Polish")) && langs.contains(&json!("French")),
        "{a}"
    );
}

/// 10A and 10B: a connection no registered associative predicate can make
/// is logged for review, and the memory's gaps (a Person known by name
/// only, key concepts of Events no concept holds) are reported (issue 39:
/// both were silent).
#[test]
fn unmatched_connections_and_schema_gaps_are_reported() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?c { {type: "Topic", name: "Chess"} }
  CONCEPT ?ada { {type: "Person", name: "Ada"} }
  CONCEPT ?lena { {type: "Person", name: "Lena"} }
  CONCEPT ?kim { {type: "Person", name: "Kim"} SET PROPOSITIONS { ("mentions", ?c) } }
}"#,
    );
    for i in 0..5 {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Chess club {i}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-11-1{i}T18:00:00Z", content_summary: "Ada played chess at the club", participants: ["Ada"], key_concepts: ["Chess", "Queen's Gambit"] }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let recs = rep.recommendations.join("\n");
    assert!(
        recs.contains("no registered associative predicate can link")
            && recs.contains("Ada (Person) and Chess (Topic) share 5 Events"),
        "{recs}"
    );
    assert!(
        recs.contains("Person has nothing but a name") && recs.contains("Lena"),
        "{recs}"
    );
    assert!(!recs.contains("Kim"), "{recs}");
    assert!(
        recs.contains("\"Queen's Gambit\" (5 Events)") && !recs.contains("\"Chess\" ("),
        "{recs}"
    );
    assert_eq!(rep.count("connection_candidates_unmatched"), 1);
}

/// 5A in other languages: a stale Event written in Chinese, French,
/// Japanese or Korean that states a preference outright gets its Preference proposed, as the
/// English one does, instead of being archived with nothing extracted.
#[test]
fn consolidation_extracts_what_an_event_states_in_other_languages() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?u { {type: "Person", name: "王磊"} }
  CONCEPT ?m { {type: "Person", name: "Marie Dubois"} }
  CONCEPT ?e { {type: "Event", name: "Conversation:2026-10-01:偏好"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z",
      content_summary: "聊了周末安排。王磊喜欢深色主题，因为晚上看屏幕眼睛累" }
    SET PROPOSITIONS { ("involves", {type: "Person", name: "王磊"}) } }
  CONCEPT ?f { {type: "Event", name: "Conversation:2026-10-02:thé"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-02T10:00:00Z",
      content_summary: "Discussion du voyage. Marie préfère le thé vert parce que le café l'énerve" }
    SET PROPOSITIONS { ("involves", {type: "Person", name: "Marie Dubois"}) } }
  CONCEPT ?j { {type: "Event", name: "Conversation:2026-10-03:会議"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-03T10:00:00Z",
      content_summary: "週末の話をした。ユーザーは朝の会議が苦手。" } }
  CONCEPT ?k { {type: "Event", name: "Conversation:2026-10-04:음식"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-04T10:00:00Z",
      content_summary: "주말 이야기를 했다. 사용자는 매운 음식을 좋아한다." } }
}"#,
    );
    let rep = cycle(&mut nx);
    let titles = proposed(&nx, &rep, "consolidate");
    for (event, want) in [
        (
            "Conversation:2026-10-01:偏好",
            "Preference:Prefers 深色主题",
        ),
        (
            "Conversation:2026-10-02:thé",
            "Preference:Prefers le thé vert",
        ),
        ("Conversation:2026-10-03:会議", "Preference:Avoids 朝の会議"),
        (
            "Conversation:2026-10-04:음식",
            "Preference:Prefers 매운 음식",
        ),
    ] {
        assert!(
            titles.iter().any(|t| t.contains(event) && t.contains(want)),
            "{event}: {titles:?}"
        );
    }
}

/// 5A over many cycles: an Event archived by an earlier cycle is no
/// longer stale, so the next cycle reaches the Events past the first page
/// (200 a cycle) and the health metric counts only those still waiting; a
/// pinned Event (a MEMORY.md entry the user keeps) is never proposed for
/// archival nor counted stale.
#[test]
fn archived_and_pinned_events_no_longer_wait_and_the_next_cycle_reaches_the_rest() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    for i in 0..230 {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Chat {i:03}"}} SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-0{}-{:02}T10:00:00Z", content_summary: "hi there, number {i}" }} }} }} WITH METADATA {{ source: "test", author: "$self" }}"#,
                1 + i / 28,
                1 + i % 28
            ),
        );
    }
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "2026-01-01 重要事件"} SET ATTRIBUTES { event_class: "memory_entry", start_time: "2026-01-01T00:00:00Z", content_summary: "- 首次上线" } } } WITH METADATA { source: "moltbot:MEMORY.md:60", author: "moltbot", pinned: true }"#,
    );
    let who = somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    };
    let stale = |nx: &mut Nexus| {
        sleep::health::assess(nx, NOW, 7)
            .expect("health")
            .metrics
            .iter()
            .find(|m| m.key == "stale_events")
            .expect("the metric")
            .value
    };
    assert_eq!(stale(&mut nx), 230.0);
    let first = cycle(&mut nx);
    let archived = proposed(&nx, &first, "archive");
    assert_eq!(archived.len(), 200, "{archived:?}");
    assert!(
        !archived.iter().any(|t| t.contains("重要事件")),
        "{archived:?}"
    );
    proposals::approve(
        &mut nx,
        first.proposal.expect("proposal"),
        None,
        &Default::default(),
        &who,
    )
    .expect("approve");
    assert_eq!(stale(&mut nx), 30.0);
    let second = cycle(&mut nx);
    let archived = proposed(&nx, &second, "archive");
    assert_eq!(archived.len(), 30, "{archived:?}");
    assert!(
        !archived.iter().any(|t| t.contains("重要事件")),
        "{archived:?}"
    );
    proposals::approve(
        &mut nx,
        second.proposal.expect("proposal"),
        None,
        &Default::default(),
        &who,
    )
    .expect("approve");
    assert_eq!(stale(&mut nx), 0.0);
    // the pinned entry is as it was
    let e = kip(
        &mut nx,
        r#"FIND(?e.attributes.consolidation_status) WHERE { ?e {type: "Event", name: "2026-01-01 重要事件"} }"#,
    );
    assert_eq!(e, json!([null]));
}

/// A real Portuguese daily note: the user's standing instruction ("Usuário
/// alertou: **NUNCA reiniciar laptop sem permissão explícita**") becomes a
/// Preference the user holds, not an archived line; and a note holding a
/// password (a routine section, found on another day too) is both
/// archived and redacted by one approval of the whole
/// proposal (the redaction changes another field of the Event the
/// archival moved, so it still does exactly what was shown).
#[test]
fn a_users_instruction_is_kept_and_a_redaction_beside_an_archival_applies() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r####"UPSERT {
  CONCEPT ?u { {type: "Person", name: "Cássio"} SET ATTRIBUTES { relationship_to_self: "user" } }
  CONCEPT ?a { {type: "Event", name: "2026-10-04 Decisões do Usuário"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-04T00:00:00Z",
      content_summary: "## Decisões do Usuário\n- ✅ Usuário autorizou aplicar modificações\n- ⚠️ Usuário alertou: **NUNCA reiniciar laptop sem permissão explícita**" } }
  CONCEPT ?b { {type: "Event", name: "2026-10-04 Infraestrutura Descoberta"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-04T00:00:00Z",
      content_summary: "### Hardware\n- voltei ao roteador\n- **Credenciais:** admin / @CiaoMiau2955" } }
  CONCEPT ?c { {type: "Event", name: "2026-10-03 Infraestrutura Descoberta"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-03T00:00:00Z",
      content_summary: "### Hardware\n- roteador reiniciado\n- sem mudanças" } }
} WITH METADATA { source: "moltbot:memory/2026-10-04.md:1", author: "moltbot" }"####,
    );
    let rep = cycle(&mut nx);
    let id = rep.proposal.expect("a proposal");
    let items = proposals::items(&nx, id).expect("items");
    let titles: Vec<&str> = items.iter().map(|i| i.title.as_str()).collect();
    let kept = items
        .iter()
        .find(|i| i.title.contains("2026-10-04 Decisões do Usuário"))
        .unwrap_or_else(|| panic!("{titles:?}"));
    assert!(
        kept.title
            .contains("Preference:Nunca reiniciar laptop sem permissão explícita"),
        "{titles:?}"
    );
    assert!(
        kept.rationale.contains("an instruction"),
        "{}",
        kept.rationale
    );
    assert!(
        titles
            .contains(&"Archive 2026-10-04 Infraestrutura Descoberta (nothing durable to extract)"),
        "{titles:?}"
    );
    assert!(
        titles.iter().any(|t| t.starts_with(
            "Redact 1 secret (password) in Event \"2026-10-04 Infraestrutura Descoberta\""
        )),
        "{titles:?}"
    );
    let done =
        proposals::approve(&mut nx, id, None, &Default::default(), &operator()).expect("approve");
    assert!(done.stale.is_empty(), "{:?}", done.changed);
    assert_eq!(done.applied.len(), items.len());
    let held = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?u {type: "Person", name: "Cássio"} (?u, "prefers", ?p) }"#,
    );
    assert_eq!(
        held,
        json!(["Nunca reiniciar laptop sem permissão explícita"])
    );
    let b = kip(
        &mut nx,
        r#"FIND(?e) WHERE { ?e {type: "Event", name: "2026-10-04 Infraestrutura Descoberta"} }"#,
    );
    let summary = b[0]["attributes"]["content_summary"]
        .as_str()
        .unwrap_or_default();
    assert!(summary.contains("admin / [redacted password]"), "{summary}");
    assert!(!summary.contains("CiaoMiau"), "{summary}");
    assert_eq!(
        b[0]["attributes"]["consolidation_status"],
        json!("archived")
    );
    assert_eq!(
        b[0]["metadata"]["source"],
        json!("moltbot:memory/2026-10-04.md:1")
    );
}

/// A stale Event whose knowledge a concept already keeps (a line OpenClaw's
/// memory promotion copied into MEMORY.md, `derived_from` the Event) is
/// consolidated into it, not archived as if nothing durable were in it.
#[test]
fn an_event_a_promoted_line_came_from_is_consolidated_into_it() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?e { {type: "Event", name: "2026-10-04 10:00 Browser"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-04T10:00:00Z",
      content_summary: "- The browser lane is now hybrid: managed for isolated work" } }
  CONCEPT ?i { {type: "Insight", name: "The browser lane is now hybrid"}
    SET ATTRIBUTES { insight_class: "promoted", description: "The browser lane is now hybrid: managed for isolated work", promoted_from: "memory/2026-10-04.md:3-3" }
    SET PROPOSITIONS { ("derived_from", {type: "Event", name: "2026-10-04 10:00 Browser"}) } }
} WITH METADATA { source: "moltbot:MEMORY.md:9", author: "moltbot" }"#,
    );
    let rep = cycle(&mut nx);
    let titles = proposed(&nx, &rep, "consolidate");
    assert!(
        titles.iter().any(|t| t
            == "Consolidate 2026-10-04 10:00 Browser into Insight:The browser lane is now hybrid"),
        "{titles:?}"
    );
    assert!(proposed(&nx, &rep, "archive").is_empty());
}

/// An imported memory knows its people by name only: a block of contacts
/// made `池内先生` and `Ana Lima` Persons, and the Events that name them
/// (`池内先生ディスカッション`, "lunch with Ana Lima") link no one. The cycle
/// proposes `mentions` links from each Event to the person it names, by an
/// alias too (`大坪` for `大坪さん`), never a name inside a word ("Analysis"
/// is not Ana), nor a Person called `User`, and approving them leaves
/// neither "linked to nothing".
#[test]
fn events_are_linked_to_the_people_they_name() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Person", name: "池内先生"} SET ATTRIBUTES { description: "理論面の助言者" } }
  CONCEPT ?b { {type: "Person", name: "大坪さん"} SET ATTRIBUTES { aliases: ["大坪"] } }
  CONCEPT ?c { {type: "Person", name: "Ana"} SET ATTRIBUTES { description: "designer" } }
  CONCEPT ?u { {type: "Person", name: "User"} SET ATTRIBUTES { relationship_to_self: "user" } }
  CONCEPT ?e1 { {type: "Event", name: "2026-11-17 池内先生ディスカッション"} SET ATTRIBUTES { event_class: "memory_entry", start_time: "2026-11-17T00:00:00Z", content_summary: "GMRフレームワークの適用で合意" } }
  CONCEPT ?e2 { {type: "Event", name: "2026-11-18 決裁"} SET ATTRIBUTES { event_class: "memory_entry", start_time: "2026-11-18T00:00:00Z", content_summary: "部門長承認(大坪紹二さん)。User asked for the summary." } }
  CONCEPT ?e3 { {type: "Event", name: "2026-11-18 Analysis"} SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-11-18T10:00:00Z", content_summary: "Analysis of the logs; the user reviewed it." } }
  CONCEPT ?e4 { {type: "Event", name: "2026-11-19 Lunch"} SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-11-19T12:00:00Z", content_summary: "Lunch with Ana, then the mockups." } }
}"#,
    );
    let rep = cycle(&mut nx);
    let mut got = proposed(&nx, &rep, "connection");
    got.retain(|t| t.contains(" mentions "));
    got.sort();
    assert_eq!(
        got,
        [
            "2026-11-17 池内先生ディスカッション mentions 池内先生",
            "2026-11-18 決裁 mentions 大坪さん",
            "2026-11-19 Lunch mentions Ana",
        ],
        "{got:?}"
    );
    let p = proposals::get(&nx, rep.proposal.expect("a proposal"))
        .expect("read")
        .expect("the proposal");
    let seqs: Vec<i64> = p
        .items
        .iter()
        .filter(|i| i.title.contains(" mentions "))
        .map(|i| i.seq)
        .collect();
    proposals::approve(&mut nx, p.id, Some(&seqs), &Default::default(), &operator())
        .expect("approved");
    let linked = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { (?e, "mentions", ?p) ?p {type: "Person"} } ORDER BY ?p.name ASC"#,
    );
    assert_eq!(linked, json!(["Ana", "大坪さん", "池内先生"]));
}

/// The agent's diary names its user in entry after entry (87 times in a
/// real Taiwanese workspace): from six Events naming one person in a
/// cycle, the links are one item, and approving it links them all; a
/// person fewer Events name keeps an item an Event.
#[test]
fn many_events_naming_one_person_are_one_item() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let mut cmd = String::from(
        r#"UPSERT {
  CONCEPT ?l { {type: "Person", name: "Leonardo"} SET ATTRIBUTES { aliases: ["Leo"] } }
  CONCEPT ?a { {type: "Person", name: "Ana"} SET ATTRIBUTES { description: "designer" } }
"#,
    );
    let said = [
        "Leo reviewed the grant draft and cut the budget section.",
        "Leo booked the flight to Lisbon for the conference.",
        "Leo met Ana about the poster layout.",
        "Leo fixed the GPU driver after the kernel update.",
        "Leo wrote the related-work section on audio models.",
        "Leo moved the lab meeting to Thursday mornings.",
    ];
    for (i, text) in said.iter().enumerate() {
        let d = 14 + i;
        cmd.push_str(&format!(
            "  CONCEPT ?e{d} {{ {{type: \"Event\", name: \"2026-11-{d} diary\"}} SET ATTRIBUTES {{ event_class: \"daily_note\", start_time: \"2026-11-{d}T09:00:00Z\", content_summary: \"{text}\" }} }}\n"
        ));
    }
    cmd.push('}');
    kip(&mut nx, &cmd);
    let rep = cycle(&mut nx);
    let mut got = proposed(&nx, &rep, "connection");
    got.sort();
    assert_eq!(
        got,
        [
            "2026-11-16 diary mentions Ana",
            "6 Events mention Leonardo: 2026-11-14 diary, 2026-11-15 diary, 2026-11-16 diary, …",
        ],
        "{got:?}"
    );
    let p = proposals::get(&nx, rep.proposal.expect("a proposal"))
        .expect("read")
        .expect("the proposal");
    let bulk = p
        .items
        .iter()
        .find(|i| i.title.starts_with("6 Events"))
        .expect("the item");
    assert_eq!(bulk.evidence.len(), 6);
    proposals::approve(
        &mut nx,
        p.id,
        Some(&[bulk.seq]),
        &Default::default(),
        &operator(),
    )
    .expect("approved");
    let linked = kip(
        &mut nx,
        r#"FIND(?e.name) WHERE { (?e, "mentions", {type: "Person", name: "Leonardo"}) } ORDER BY ?e.name ASC"#,
    );
    assert_eq!(linked.as_array().map(Vec::len), Some(6), "{linked}");
}

/// Real Japanese daily notes: the heuristic reasoner reads no cue in a
/// section of decisions (`決定事項`), of lessons (`LINEスタンプ制作の教訓`)
/// or about someone (`かっぴーについて`), and leaves each as it is, named
/// in the report, instead of proposing it archived as "nothing durable";
/// a section that says there was none (`学んだこと・決定事項: なし`) and a
/// routine summary are still proposed archived.
#[test]
fn decisions_lessons_and_sections_about_someone_are_not_nothing_durable() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r####"UPSERT {
  CONCEPT ?a { {type: "Event", name: "2026-10-15 決定事項"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-15T00:00:00Z",
      content_summary: "## 決定事項\n- 全てのメッセージ・作業報告において Gemini 3 Flash をデフォルトとする。" } }
  CONCEPT ?b { {type: "Event", name: "2026-10-12 LINEスタンプ制作の教訓"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-12T00:00:00Z",
      content_summary: "## LINEスタンプ制作の教訓\n- rembg背景切り抜きは写真によっては「生首感」が出る\n- v3（角丸フレーム＋背景色）が一番マシだった" } }
  CONCEPT ?c { {type: "Event", name: "2026-10-11 かっぴー情報（追加）"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-11T00:00:00Z",
      content_summary: "## かっぴー情報（追加）\n- Logicool G604 LIGHTSPEED使用（多ボタンマウス）\n- デュアルモニター環境" } }
  CONCEPT ?d { {type: "Event", name: "2026-10-03 学んだこと・決定事項"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-03T00:00:00Z",
      content_summary: "## 学んだこと・決定事項\n\nなし（定常運用日）" } }
  CONCEPT ?e { {type: "Event", name: "2026-10-06 概要"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-06T00:00:00Z",
      content_summary: "## 概要\n- 定常運用日。特記事項なし。" } }
} WITH METADATA { source: "moltbot:memory/2026-10.md:1", author: "moltbot" }"####,
    );
    let rep = cycle(&mut nx);
    let archived = proposed(&nx, &rep, "archive");
    assert_eq!(
        archived,
        vec![
            "Archive 2026-10-03 学んだこと・決定事項 (nothing durable to extract)".to_string(),
            "Archive 2026-10-06 概要 (nothing durable to extract)".to_string(),
        ]
    );
    let left = report_line(&rep, "decisions, lessons or rules");
    for name in [
        "2026-10-15 決定事項",
        "2026-10-12 LINEスタンプ制作の教訓",
        "2026-10-11 かっぴー情報（追加）",
    ] {
        assert!(left.contains(name), "{left}");
    }
}

/// Three real notes the heuristic reasoner cannot call "nothing
/// durable", each stale: an Indonesian workspace's note of what the user's
/// partner likes (`their partner: name Bunga, likes food and likes EXO`,
/// once filed as the user's own preference), a Hebrew conversation (no
/// cue is written in Hebrew), and a Spanish session whose lesson is
/// labelled on its own line. None is filed as the user's, none archived;
/// the report says why each was left.
#[test]
fn what_a_partner_likes_a_hebrew_note_and_a_lesson_on_its_own_line_are_not_nothing_durable() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r####"UPSERT {
  CONCEPT ?u { {type: "Person", name: "Afu"} SET ATTRIBUTES { relationship_to_self: "user" } }
  CONCEPT ?a { {type: "Event", name: "2026-03-06"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-03-06T00:00:00Z",
      content_summary: "- Afu told me about their partner: name Bunga, likes food and likes EXO." }
    SET PROPOSITIONS { ("involves", {type: "Person", name: "Afu"}) } }
  CONCEPT ?b { {type: "Event", name: "2026-04-12 09:06 conversation"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-04-12T09:06:00Z",
      content_summary: "user (09:06): אל תתייחס לעניין החדשות, אבל אהבתי את ההצעה של סוכן חקירה לפי מה שרשמת, האם זה מעמיס על המערכת?\n\nassistant: כן, זה רעיון טוב." } }
  CONCEPT ?c { {type: "Event", name: "2026-05-01 01:58 Sesión 1 Mayo 2026, 01:58-02:12"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-05-01T01:58:00+08:00",
      content_summary: "## Sesión 1 Mayo 2026, 01:58-02:12\n### Auditoría de Integridad\n**Lección Aprendida #10 — Verificación Fuente Primaria > Generación Creativa**:\n> Cifras sin anclaje explícito en el documento original son fraude académico." } }
} WITH METADATA { source: "moltbot:memory/2026-05.md:1", author: "moltbot" }"####,
    );
    let rep = cycle(&mut nx);
    assert_eq!(proposed(&nx, &rep, "consolidate"), Vec::<String>::new());
    let archived = proposed(&nx, &rep, "archive");
    for name in ["2026-03-06 ", "conversation", "Sesión"] {
        assert!(!archived.iter().any(|a| a.contains(name)), "{archived:?}");
    }
    let partner = report_line(&rep, "someone close to the user");
    assert!(partner.contains("2026-03-06"), "{partner}");
    let hebrew = report_line(&rep, "written in Hebrew");
    assert!(hebrew.contains("2026-04-12 09:06 conversation"), "{hebrew}");
    let lesson = report_line(&rep, "decisions, lessons or rules");
    assert!(lesson.contains("Sesión 1 Mayo 2026"), "{lesson}");
}

/// A real Taiwanese daily note lists its user's design preferences under
/// a heading that names him (`### 阿杰設計偏好 ⚠️`), in traditional
/// characters: the cycle extracts `Avoids 大面積強調色` (not `Prefers ⚠️`
/// from the heading) and, once approved, the user holds it.
#[test]
fn a_preference_under_a_heading_that_names_the_user_is_the_users() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r####"UPSERT {
  CONCEPT ?u { {type: "Person", name: "阿杰"} SET ATTRIBUTES { relationship_to_self: "user" } }
  CONCEPT ?a { {type: "Event", name: "2026-10-12 RWD + 配色調整"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-12T00:00:00Z",
      content_summary: "## RWD + 配色調整\n### RWD 響應式重構 ✅\n- 子代理重寫所有 17 個頁面\n### 阿杰設計偏好 ⚠️\n- **不喜歡大面積強調色**" } }
} WITH METADATA { source: "moltbot:memory/2026-10-12.md:1", author: "moltbot" }"####,
    );
    let rep = cycle(&mut nx);
    let consolidated = proposed(&nx, &rep, "consolidate");
    assert_eq!(
        consolidated,
        vec![
            "Consolidate 2026-10-12 RWD + 配色調整 into Preference:Avoids 大面積強調色 (1 new)"
                .to_string()
        ]
    );
    let id = rep.proposal.expect("a proposal");
    proposals::approve(&mut nx, id, None, &Default::default(), &operator()).expect("approve");
    let held = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?u {type: "Person", name: "阿杰"} (?u, "prefers", ?p) }"#,
    );
    assert_eq!(held, json!(["Avoids 大面積強調色"]));
}

/// A real Japanese workspace's daily notes hold routine sections (`概要`
/// every day, a heartbeat) and sections of their own: technical memos on
/// two days (`X APIは有料化済み（Basic: $100/月）`), notes from a client's
/// meeting. The heuristic reasoner reads no cue in either. It proposes only
/// the routine ones archived; a section of notes, or whose heading no other
/// day has, that says something of its own is left as it is and named in
/// the report.
#[test]
fn only_routine_sections_of_daily_notes_are_nothing_durable() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let mut kml = String::from("UPSERT {");
    for (i, (name, text)) in [
        ("2026-10-05 概要", "## 概要\\n- 定常運用日\\n- cron 3件実行"),
        ("2026-10-06 概要", "## 概要\\n- 定常運用日\\n- cron 2件実行"),
        ("2026-10-07 概要", "## 概要\\n- 定常運用日\\n- メール確認"),
        ("2026-10-05 Heartbeat 09:00", "## Heartbeat 09:00\\n- OK\\n- inbox empty"),
        ("2026-10-06 Heartbeat 18:30", "## Heartbeat 18:30\\n- OK\\n- inbox empty"),
        ("2026-10-05 技術メモ", "## 技術メモ\\n- X APIは有料化済み（Basic: $100/月）\\n- Brave Search API設定が必要（web検索機能）"),
        ("2026-10-07 技術メモ", "## 技術メモ\\n- PyMuPDFでPDF読み取り可能に\\n- image toolはclaude-sonnet-4-5指定で成功"),
        ("2026-10-07 AWC（定例後）", "## AWC（定例後）\\n- 次回までに見積もりを再提出\\n- 担当は佐藤さんに変更\\n- 納期は11月末"),
        ("2026-10-06 セッションリセット", "## セッションリセット\\n- 実施"),
    ]
    .iter()
    .enumerate()
    {
        kml.push_str(&format!(
            r#" CONCEPT ?e{i} {{ {{type: "Event", name: "{name}"}} SET ATTRIBUTES {{ event_class: "daily_note", start_time: "{}T00:00:00Z", content_summary: "{text}" }} }}"#,
            &name[..10]
        ));
    }
    kml.push_str(
        r#" } WITH METADATA { source: "moltbot:memory/2026-10.md:1", author: "moltbot" }"#,
    );
    kip(&mut nx, &kml);
    let rep = cycle(&mut nx);
    let archived = proposed(&nx, &rep, "archive");
    assert_eq!(
        archived,
        vec![
            "Archive 2026-10-05 概要 (nothing durable to extract)".to_string(),
            "Archive 2026-10-05 Heartbeat 09:00 (nothing durable to extract)".to_string(),
            "Archive 2026-10-06 概要 (nothing durable to extract)".to_string(),
            "Archive 2026-10-06 Heartbeat 18:30 (nothing durable to extract)".to_string(),
            "Archive 2026-10-06 セッションリセット (nothing durable to extract)".to_string(),
            "Archive 2026-10-07 概要 (nothing durable to extract)".to_string(),
        ]
    );
    let left = report_line(&rep, "no other day's note has");
    for name in [
        "2026-10-05 技術メモ",
        "2026-10-07 技術メモ",
        "2026-10-07 AWC（定例後）",
    ] {
        assert!(left.contains(name), "{left}");
    }
}

#[test]
fn a_project_named_in_its_notes_titles_is_their_domain_not_a_word_of_their_text() {
    // three notes on one app, each titled "Le Nez — …": both words of the
    // name are short, and "подбора" (of selecting) is the only longer
    // word two of their texts share
    let mut nx = Nexus::open_in_memory().expect("memory");
    for (name, text) in [
        (
            "2025-02-13 Le Nez — TikTok видео",
            "Сделали видео для TikTok: алгоритм подбора парфюма по настроению, монтаж в Remotion.",
        ),
        (
            "2026-02-13 Le Nez — iOS приложение Кирилла",
            "iOS приложение: экран подбора, каталог ароматов, авторизация через Apple.",
        ),
        (
            "2026-02-16 Le Nez — Алгоритм подбора парфюма 🌸",
            "Новый алгоритм подбора: ноты, сезон, стойкость; веса настроены вручную.",
        ),
    ] {
        common::note_in(&mut nx, name, text, "Unsorted");
    }
    let rep = cycle(&mut nx);
    let domains = new_domains(&nx, &rep);
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Le Nez\" for 3 items")),
        "{domains:?}"
    );
    common::assert_no_new_domain(&domains, &["Подбора", "Алгоритм"], false);
}

#[test]
fn a_japanese_action_is_no_theme_however_rare_the_dictionary_finds_it() {
    // 削除 (delete) and 作成 (create) are what was done in these notes, as
    // "削除した" and "作成する" say; the Chinese dictionary that segments
    // them finds both rare, so each looked like a topic of its own
    let mut nx = Nexus::open_in_memory().expect("memory");
    for (name, text) in [
        (
            "2026-01-26 削除したもの",
            "不要になったcronジョブを削除した。古いログファイルも削除。",
        ),
        (
            "2026-01-27 トークン最適化",
            "プロンプトを短くしてトークンを削減。使わない設定を削除した。",
        ),
        (
            "2026-01-28 クライアント情報の最終調整",
            "クライアント情報を整理し、重複した項目を削除した。",
        ),
        (
            "2026-01-29 りんちゃんLP作成 🐕",
            "りんちゃんのLPを作成。ヒーロー画像とボタンを作成した。",
        ),
        (
            "2026-01-30 作成・変更したもの",
            "バナーを作成した。フォルダ構成を変更。",
        ),
        (
            "2026-01-31 次回作業のメモ",
            "見積書を作成する。請求書の作成も忘れずに。",
        ),
    ] {
        common::note_in(&mut nx, name, text, "Unsorted");
    }
    let rep = cycle(&mut nx);
    let domains = new_domains(&nx, &rep);
    common::assert_no_new_domain(&domains, &["削除", "作成"], false);
}

/// A word any note may share ("porta", "problema" in Portuguese notes on a
/// firewall) names no domain when no item is named for it; a word rare in
/// the language ("FortiGate") does, and a title's subject goes before its
/// words ("Digital Twin Bidirecional", not "Bidirecional").
#[test]
fn a_common_word_only_texts_share_names_no_domain_and_a_title_is_written_whole() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    for (name, about) in [
        (
            "Configuração VLAN",
            "Configurei a FortiGate e liguei a porta lan3 ao switch; o problema da porta ficou resolvido",
        ),
        (
            "Auditoria completa",
            "A FortiGate tem uma porta defeituosa; mudei o cabo para outra porta e o problema voltou",
        ),
        (
            "Topologia atual",
            "Uma porta da FortiGate vai ao roteador; a outra porta ao servidor, sem problema",
        ),
        (
            "Digital Twin Bidirecional - Conceito",
            "O drone envia a telemetria e recebe comandos do simulador",
        ),
        (
            "Digital Twin Bidirecional - Implementação",
            "O simulador Gazebo recebe a telemetria do drone em tempo real",
        ),
        (
            "Digital Twin Bidirecional - Problemas",
            "O contêiner do simulador não sobe; a telemetria do drone atrasa",
        ),
    ] {
        unsorted(&mut nx, "Insight", name, about);
    }
    let rep = cycle(&mut nx);
    let domains = proposed(&nx, &rep, "domain");
    assert!(
        domains
            .iter()
            .all(|t| !t.starts_with("New domain \"Porta\"")
                && !t.starts_with("New domain \"Problema\"")),
        "{domains:?}"
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"FortiGate\" for 3 items")),
        "{domains:?}"
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Digital Twin Bidirecional\" for 3 items")),
        "{domains:?}"
    );
}

/// A common word long notes each say once in passing ("pattern", "error"
/// in a developer's lessons and day logs) is no topic of theirs: no
/// domain. Items named for a common word ("Commit hash pointer") are
/// about it, and when fewer than half of the items that say the word are,
/// a domain for them takes them alone, not the long notes that mention a
/// commit. A short note saying a word once is about it
/// ("started tomatoes for the garden").
#[test]
fn a_common_word_said_in_passing_names_no_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let filler = "The team met in the morning and went through the open tickets one by one, \
                  agreed on owners and dates, moved two tasks to next week, and wrote down \
                  what each person will check before the review on Friday afternoon";
    for (name, about) in [
        (
            "Lessons Learned Today",
            "Waiting for approval slowed us; a clear pattern in the requests showed up late.",
        ),
        (
            "Decision Making",
            "Ayman decides quickly once the numbers are on the table, a pattern worth keeping.",
        ),
        (
            "Project Urgency Signals",
            "Short replies late at night are the pattern that says a deadline is close.",
        ),
        (
            "Weather Update Issue",
            "The forecast job failed with an error from the provider and was retried twice.",
        ),
        (
            "System Status",
            "All services up after the restart; one error in the log from the mail relay.",
        ),
        (
            "Auth Loading Loop",
            "The login page loaded forever; the root cause was an error swallowed in a hook.",
        ),
    ] {
        unsorted(&mut nx, "Insight", name, &format!("{about} {filler}."));
    }
    for (name, about) in [
        ("Commit hash pointer 03:37", "commit 4f2a9c1 on main"),
        ("Commit hash pointer 21:12", "commit 9be03d7 on main"),
        ("Commit hash pointer 22:01", "commit 1c77e0a on main"),
        (
            "Routing rules confirmed",
            "Agreed to route reports to the research channel and to note the commit with each.",
        ),
        (
            "Report throttling",
            "Reports now carry at most forty lines and the last commit they describe.",
        ),
        (
            "Evidence lines",
            "Evidence quotes default to twelve lines, and the commit they come from.",
        ),
        (
            "Rules and environment summary",
            "The week's rule changes, a new proxy, and the commit that holds them.",
        ),
    ] {
        let about = if name.starts_with("Commit") {
            about.to_string()
        } else {
            format!("{about} {filler}.")
        };
        unsorted(&mut nx, "Insight", name, &about);
    }
    for (name, about) in [
        ("Tomato seedlings", "started tomatoes for the garden"),
        ("Compost bin", "compost for the garden beds"),
        ("Allotment plot", "the garden plot by the river"),
    ] {
        unsorted(&mut nx, "Insight", name, about);
    }
    let rep = cycle(&mut nx);
    let domains = proposed(&nx, &rep, "domain");
    common::assert_no_new_domain(&domains, &["Pattern", "Error"], true);
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Commit\" for 3 items")),
        "{domains:?}"
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Garden\" for 3 items")),
        "{domains:?}"
    );
}

/// Two real daily notes state the same rule (`- Always create task
/// BEFORE starting work`): each is proposed consolidated into it, and the
/// second says the first proposes it too (both items read "(1 new)"
/// before). Approving only the second still creates it; approving both
/// creates it once, held by both.
#[test]
fn a_rule_two_notes_state_is_proposed_once_new_and_the_second_says_so() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r####"UPSERT {
  CONCEPT ?a { {type: "Event", name: "2026-02-19 Mission Control Development Day"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-02-19T00:00:00Z",
      content_summary: "## Mission Control Development Day\n- Always create task BEFORE starting work" } }
  CONCEPT ?b { {type: "Event", name: "2026-02-20 CV Maker Development"}
    SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-02-20T00:00:00Z",
      content_summary: "## CV Maker Development\nAlways create task BEFORE starting work" } }
} WITH METADATA { source: "moltbot:memory/2026-02.md:1", author: "moltbot" }"####,
    );
    let rep = cycle(&mut nx);
    let mut consolidated = proposed(&nx, &rep, "consolidate");
    consolidated.sort();
    assert_eq!(
        consolidated,
        vec![
            "Consolidate 2026-02-19 Mission Control Development Day into Preference:Always create task BEFORE starting work (1 new)".to_string(),
            "Consolidate 2026-02-20 CV Maker Development into Preference:Always create task BEFORE starting work (1 new, as 2026-02-19 Mission Control Development Day also proposes)".to_string(),
        ]
    );
    let id = rep.proposal.expect("a proposal");
    proposals::approve(&mut nx, id, None, &Default::default(), &operator()).expect("approve");
    let held = kip(
        &mut nx,
        r#"FIND(?e.name) WHERE { ?p {type: "Preference", name: "Always create task BEFORE starting work"} (?e, "consolidated_to", ?p) }"#,
    );
    assert_eq!(held.as_array().map(Vec::len), Some(2), "{held}");
}
