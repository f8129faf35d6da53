//! An agent's own daily logs, as real workspaces write them: a status
//! written every half hour, statements that name files and web sites,
//! features described in the same words as instructions, a restaurant
//! called "La Llorona". What the cycle proposes of them is what their
//! owner would approve.

use super::*;

/// Writes daily-note sections (`event_class: "daily_note"`, the day from
/// the name's first word), each text as its summary.
fn daily(nx: &mut Nexus, sections: &[(&str, &str)]) {
    for (name, text) in sections {
        let out = nx.kip_with(
            r#"UPSERT { CONCEPT ?e { {type: "Event", name: :name} SET ATTRIBUTES { event_class: "daily_note", content_summary: :text, start_time: :start } } } WITH METADATA { source: "moltbot:memory/daily.md:1", author: "moltbot" }"#,
            json!({"name": name, "text": text, "start": format!("{}T00:00:00Z", &name[..10])}),
        );
        assert!(matches!(out, Outcome::Ok { .. }), "{}", out.to_json());
    }
}

/// Writes the memory's user, `name`.
fn user(nx: &mut Nexus, name: &str) {
    let out = nx.kip_with(
        r#"UPSERT { CONCEPT ?u { {type: "Person", name: :name} SET ATTRIBUTES { relationship_to_self: "user" } } }"#,
        json!({"name": name}),
    );
    assert!(matches!(out, Outcome::Ok { .. }), "{}", out.to_json());
}

/// A status the agent writes every half hour (`Session status: Idle`,
/// `WhatsApp gateway stable`) is the moment's state: its sections are
/// archived, kept whole, like any routine entry. A section written once
/// in the same `Label: value` form (the ids of a client's records) is the
/// only record of what it says, and is left as it is.
#[test]
fn a_status_written_every_half_hour_is_archived_and_a_one_off_list_of_labels_is_not() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    user(&mut nx, "Hector");
    daily(
        &mut nx,
        &[
            (
                "2026-10-16 04:46 Auto-save Checkpoint",
                "## 4:46 AM - Auto-save Checkpoint\n- Session status: No active work in progress\n- WhatsApp gateway stable and tested; Hector asleep",
            ),
            (
                "2026-10-16 05:16 Auto-save Checkpoint",
                "## 5:16 AM - Auto-save Checkpoint\n- Session status: Continues idle\n- WhatsApp gateway stable (1hr uptime)",
            ),
            (
                "2026-10-16 05:46 Auto-save Checkpoint",
                "## 5:46 AM - Auto-save Checkpoint\n- Session status: Idle, monitoring only\n- No work in progress",
            ),
            (
                "2026-10-16 Key IDs",
                "## Key IDs\n- La Llorona restaurant_id: 13 (mirror r13)\n- Chef role id: 8 in every restaurant (Hector's rule)",
            ),
            // one section the note holds three copies of, with no time:
            // one entry, not a routine
            (
                "2026-10-16 site-universidade — estado",
                "## site-universidade — estado\n- Stack: Next.js, TypeScript, Tailwind CSS\n- Data source: Google Sheet imported to data/courses.csv",
            ),
            (
                "2026-10-16 site-universidade — estado (2)",
                "## site-universidade — estado\n- Stack: Next.js, TypeScript, Tailwind CSS\n- Data source: Google Sheet imported to data/courses.csv",
            ),
            (
                "2026-10-16 site-universidade — estado (3)",
                "## site-universidade — estado\n- Stack: Next.js, TypeScript, Tailwind CSS\n- Data source: Google Sheet imported via gog to data/courses.csv",
            ),
        ],
    );
    let rep = cycle(&mut nx);
    let archived = proposed(&nx, &rep, "archive");
    assert_eq!(
        archived,
        vec![
            "Archive 2026-10-16 04:46 Auto-save Checkpoint (nothing durable to extract)",
            "Archive 2026-10-16 05:16 Auto-save Checkpoint (nothing durable to extract)",
            "Archive 2026-10-16 05:46 Auto-save Checkpoint (nothing durable to extract)",
        ]
    );
    let why: Vec<String> = proposals::items(&nx, rep.proposal.expect("a proposal"))
        .expect("items")
        .into_iter()
        .filter(|i| i.class == "archive")
        .map(|i| i.rationale)
        .collect();
    assert!(
        why.iter()
            .all(|w| w.contains("a log's regular entry, written 3 times on 1 day")),
        "{why:?}"
    );
    // who a status names in passing is not linked; who a note of its own
    // names is
    assert_eq!(
        proposed(&nx, &rep, "connection"),
        vec!["2026-10-16 Key IDs mentions Hector"]
    );
    let left = report_line(&rep, "`Label: value` lines");
    for name in [
        "2026-10-16 Key IDs",
        "2026-10-16 site-universidade — estado",
        "2026-10-16 site-universidade — estado (3)",
    ] {
        assert!(left.contains(name), "{name}: {left}");
    }
}

/// A full stop ends a statement only before a space: `USER.md` and
/// `noma.dk` stay whole. A decision not yet made ("hasn't decided yet") is
/// none.
#[test]
fn a_file_or_a_site_does_not_end_a_statement_and_a_decision_not_made_is_none() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    user(&mut nx, "Hector");
    daily(
        &mut nx,
        &[
            (
                "2026-10-19 Context for Resume",
                "## Context for Resume\n- User prefers explicit approval before code changes (per USER.md)",
            ),
            (
                "2026-10-22 Noma Style Clone for Café de Tacuba",
                "## Noma Style Clone for Café de Tacuba\n- User chose noma.dk as reference for the website\n- Colour scheme: user hasn't decided yet",
            ),
        ],
    );
    let rep = cycle(&mut nx);
    assert_eq!(
        proposed(&nx, &rep, "consolidate"),
        vec![
            "Consolidate 2026-10-19 Context for Resume into Preference:Prefers explicit approval before code changes (per USER.md) (1 new)"
        ]
    );
    let untyped = report_line(&rep, "no Decision type");
    assert!(
        untyped.contains("\"Noma.dk as reference for the website\""),
        "{untyped}"
    );
    assert!(!untyped.contains("\"Yet\""), "{untyped}");
    assert!(!untyped.contains("\"Noma\""), "{untyped}");
}

/// "Never auto-applies — always presents for admin approval", under a
/// module's heading, says what the module does: no instruction, and no
/// preference of anyone's. "Always test locally" is one. The same
/// third-person form under a heading that names the user says what the
/// user does, and is the user's.
#[test]
fn what_a_module_always_does_is_no_instruction_and_what_the_user_always_does_is_theirs() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    user(&mut nx, "Hector");
    daily(
        &mut nx,
        &[
            (
                "2026-10-22 Website Module — Full Build",
                "## Website Module — Full Build\n- Never auto-applies — always presents for admin approval\n- Always test locally before reporting completion",
            ),
            (
                "2026-10-23 Hector's habits",
                "## Hector's habits\n- Always reviews the diff on his phone first",
            ),
        ],
    );
    let rep = cycle(&mut nx);
    let consolidated = proposed(&nx, &rep, "consolidate");
    assert_eq!(
        consolidated,
        vec![
            "Consolidate 2026-10-22 Website Module — Full Build into Preference:Always test locally before reporting completion (1 new)",
            "Consolidate 2026-10-23 Hector's habits into Preference:Always reviews the diff on his phone first (1 new)",
        ]
    );
    proposals::approve(
        &mut nx,
        rep.proposal.expect("a proposal"),
        None,
        &Default::default(),
        &operator(),
    )
    .expect("approve");
    let held = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?u {type: "Person", name: "Hector"} (?u, "prefers", ?p) }"#,
    );
    assert_eq!(held, json!(["Always reviews the diff on his phone first"]));
    let modules = kip(
        &mut nx,
        r#"FIND(COUNT(?p)) WHERE { ?p {type: "Preference"} FILTER(CONTAINS(?p.name, "auto-applies")) }"#,
    );
    assert_eq!(modules, json!(0));
}

/// A restaurant called "La Llorona" in every note is proposed as the
/// domain "La Llorona", not "Llorona".
#[test]
fn a_name_is_proposed_as_the_notes_write_it_whole() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    for (name, text) in [
        (
            "2026-10-02 Sync La Llorona",
            "Synced the La Llorona sales and inventory from the mirror.",
        ),
        (
            "2026-10-03 Bar Cocktail Recipes Import",
            "Imported 42 cocktail recipes for La Llorona (r13).",
        ),
        (
            "2026-10-08 Daily Sync",
            "La Llorona sync failed at 06:00, retried at 06:30 and passed.",
        ),
        (
            "2026-10-09 Claude Code setup",
            "Installed Claude Code on the build server; Claude Code runs the nightly review.",
        ),
    ] {
        common::note_in(&mut nx, name, text, "Unsorted");
    }
    let rep = cycle(&mut nx);
    let domains = new_domains(&nx, &rep);
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"La Llorona\" for 3 items")),
        "{domains:?}"
    );
    common::assert_no_new_domain(&domains, &["Llorona"], true);
}

/// A real workspace titles every day's note `# YYYY-MM-DD Daily Memory`
/// and keeps the whole day under it (`## Session 1`, node addresses,
/// ports, what was fixed): the title recurs, so each day was archived as
/// "a log's regular entry, nothing durable". A title over a day's
/// sections is no regular entry; what such a day states in `Label:
/// value` lines is left as it is, for a reasoner that reads it.
#[test]
fn a_days_note_under_a_title_written_every_day_is_no_routine_entry() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    user(&mut nx, "Sebas");
    let day = |d: &str, body: &str| {
        format!(
            "# {d} Daily Memory\n\n## Session 1 (Morning)\n\n{body}\n\n## Session 2\n\n- Pending: nothing\n"
        )
    };
    let notes = [
        (
            "2026-04-09 Daily Memory",
            day(
                "2026-04-09",
                "### VPS nodes\n- **ChagnaieBlanc**: `82.66.243.38` (port 55332)\n- **ExternalJuju**: `176.160.237.59`",
            ),
        ),
        (
            "2026-04-10 Daily Memory",
            day(
                "2026-04-10",
                "### Explorer\n- Live at: https://colombia-staking.co/network/ (sigma.js v3)",
            ),
        ),
        (
            "2026-04-11 Daily Memory",
            day(
                "2026-04-11",
                "### Distribution\n- BONUS pool: 26.65 COLS to 100 addresses",
            ),
        ),
    ];
    let sections: Vec<(&str, &str)> = notes.iter().map(|(n, t)| (*n, t.as_str())).collect();
    daily(&mut nx, &sections);
    let rep = cycle(&mut nx);
    let archived = proposed(&nx, &rep, "archive");
    assert!(archived.is_empty(), "{archived:?}");
    let left = report_line(&rep, "`Label: value` lines");
    for (name, _) in &notes {
        assert!(left.contains(name), "{name}: {left}");
    }
}
