//! `SEARCH` and what an element's other attributes say (a profile's
//! lists, who took part in an Event), found after its own text, never
//! through a file kept verbatim or a time stamp, the same on SQLite and
//! PostgreSQL (`tests/search.rs`, `tests/postgres_engine.rs`).

use serde_json::json;
use somnus::Nexus;
use somnus::protocol::Outcome;

/// Names SEARCH returns for `q` among all types, best first.
pub fn search_all(nx: &mut Nexus, q: &str) -> Vec<String> {
    match nx.kip_with(r#"SEARCH CONCEPT :q LIMIT 10"#, json!({ "q": q })) {
        Outcome::Ok { result, .. } => result
            .as_array()
            .expect("a list")
            .iter()
            .map(|v| v["name"].as_str().expect("a name").to_string())
            .collect(),
        Outcome::Err(e) => panic!("{} {}", e.code, e.message),
    }
}

pub fn kip(nx: &mut Nexus, cmd: &str) {
    if let Outcome::Err(e) = nx.kip(cmd) {
        panic!("{cmd}\n→ {} {}", e.code, e.message);
    }
}

/// A Person described only by its profile (as an imported USER.md or a
/// MEMORY.md block about the user leaves it), an Event known by who took
/// part, and $self's verbatim files.
pub const PROFILE: &[&str] = &[
    r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Lucía Ortega"} SET ATTRIBUTES { relationship_to_self: "user", timezone: "Europe/Madrid", city: "Madrid", working_style: ["Prefers voice notes over long emails", "Fires the kiln on Sundays"], memory_about_my_human: { studio: "Shares a ceramics studio in Lavapiés" }, profile_md: "USER.md\n- Glaze recipes: celadon", joined_at: "2024-05-01", dates: ["2023-11-02T09:15:00Z"] } } } WITH METADATA { source: "test", author: "$self" }"#,
    r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Call about the voice notes"} SET ATTRIBUTES { event_class: "Conversation", content_summary: "We agreed voice notes are fine for quick questions." } } } WITH METADATA { source: "test", author: "$self" }"#,
    r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Studio visit"} SET ATTRIBUTES { event_class: "Conversation", content_summary: "Walked through the new shelves.", participants: ["Marisol Quintana"] } } } WITH METADATA { source: "test", author: "$self" }"#,
];

pub fn other_attributes_are_found(nx: &mut Nexus) {
    for c in PROFILE {
        kip(nx, c);
    }
    // a list item, a nested object's text, a plain text attribute
    assert_eq!(search_all(nx, "kiln"), ["Lucía Ortega"]);
    assert_eq!(search_all(nx, "ceramics"), ["Lucía Ortega"]);
    assert_eq!(search_all(nx, "Madrid"), ["Lucía Ortega"]);
    // an element's own text ranks before what another's profile says
    assert_eq!(
        search_all(nx, "voice notes"),
        ["Call about the voice notes", "Lucía Ortega"]
    );
    // an Event by who took part
    assert_eq!(search_all(nx, "Quintana"), ["Studio visit"]);
    // not a file kept verbatim, not days and time stamps
    assert!(search_all(nx, "celadon").is_empty());
    assert!(search_all(nx, "2024").is_empty());
    assert!(search_all(nx, "2023").is_empty());
    // a changed attribute is indexed again, whatever its name
    kip(
        nx,
        r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Lucía Ortega"} SET ATTRIBUTES { working_style: ["Answers after lunch"] } } } WITH METADATA { source: "test", author: "$self" }"#,
    );
    assert!(search_all(nx, "kiln").is_empty());
    assert_eq!(search_all(nx, "lunch"), ["Lucía Ortega"]);
    // a word is found without its accents, in any field, and a path's
    // parts are words (`Europe/Madrid`)
    assert_eq!(search_all(nx, "lucia"), ["Lucía Ortega"]);
    assert_eq!(search_all(nx, "Lavapies"), ["Lucía Ortega"]);
    assert_eq!(search_all(nx, "Lavapiés"), ["Lucía Ortega"]);
    assert_eq!(search_all(nx, "Europe"), ["Lucía Ortega"]);
    kip(
        nx,
        r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Cássio"} SET ATTRIBUTES { description: "O usuário prefere respostas curtas", timezone: "America/Belem" } } } WITH METADATA { source: "test", author: "$self" }"#,
    );
    assert_eq!(search_all(nx, "usuario"), ["Cássio"]);
    assert_eq!(search_all(nx, "cassio"), ["Cássio"]);
    assert_eq!(search_all(nx, "Belem"), ["Cássio"]);
}
