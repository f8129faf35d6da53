//! Keyword SEARCH as an agent meets it: KIP text in, hits out. Words meet
//! across their inflections both ways, a name's digits do not outweigh
//! the text, stop words do not rank, Chinese is segmented, and a memory
//! from before the analysed index is re-indexed when opened.

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::protocol::Outcome;

fn event(nx: &mut Nexus, name: &str, text: &str) {
    match nx.kip_with(
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: :n} SET ATTRIBUTES { event_class: "Conversation", content_summary: :s } } } WITH METADATA { source: "test", author: "$self" }"#,
        json!({"n": name, "s": text}),
    ) {
        Outcome::Ok { .. } => {}
        Outcome::Err(e) => panic!("{} {}", e.code, e.message),
    }
}

/// The names SEARCH returns for `q`, best first.
fn search(nx: &mut Nexus, q: &str) -> Vec<String> {
    match nx.kip_with(
        r#"SEARCH CONCEPT :q WITH TYPE "Event" LIMIT 10"#,
        json!({ "q": q }),
    ) {
        Outcome::Ok { result, .. } => result
            .as_array()
            .expect("a list")
            .iter()
            .map(|v| v["name"].as_str().expect("a name").to_string())
            .collect(),
        Outcome::Err(e) => panic!("{} {}", e.code, e.message),
    }
}

fn memory() -> Nexus {
    let mut nx = Nexus::open_in_memory().expect("memory");
    event(
        &mut nx,
        "D1:1",
        "I volunteer at the animal shelter on Saturdays.",
    );
    event(
        &mut nx,
        "D1:2",
        "We went camping by the lake with the kids.",
    );
    event(&mut nx, "D1:3", "She joined a pottery class downtown.");
    event(
        &mut nx,
        "D1:4",
        "The shelters in town are full this winter.",
    );
    event(
        &mut nx,
        "D2:5",
        "Our camps were near the river last summer.",
    );
    event(
        &mut nx,
        "D2:6",
        "The weather was nice, we talked for hours.",
    );
    nx
}

#[test]
fn words_meet_across_their_inflections_both_ways() {
    let mut nx = memory();
    // a plural finds the singular, and the singular the plural
    let hits = search(&mut nx, "Which shelters does she volunteer at?");
    assert_eq!(hits[0], "D1:1", "{hits:?}");
    assert!(hits.contains(&"D1:4".to_string()), "{hits:?}");
    // "camps" finds "camping", "camping" finds "camps"
    let hits = search(&mut nx, "camps");
    assert!(hits.contains(&"D1:2".to_string()), "{hits:?}");
    let hits = search(&mut nx, "Where did they go camping?");
    assert!(hits.contains(&"D2:5".to_string()), "{hits:?}");
    // "join" finds "joined" (and "joins" too)
    let hits = search(&mut nx, "What class does she join?");
    assert_eq!(hits[0], "D1:3", "{hits:?}");
    // a word still being typed is a prefix
    let hits = search(&mut nx, "pott");
    assert_eq!(hits, ["D1:3"]);
}

#[test]
fn a_names_digits_do_not_outweigh_the_text() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    // ids whose numbers are the question's numbers
    for i in 1..=8 {
        event(
            &mut nx,
            &format!("D{i}:24"),
            "We had a quiet evening at home.",
        );
        event(
            &mut nx,
            &format!("D24:{i}"),
            "Nothing much happened that day.",
        );
    }
    event(
        &mut nx,
        "D3:7",
        "On July 24 Andrew and his girlfriend went hiking at Fox Hollow.",
    );
    let hits = search(
        &mut nx,
        "What did Andrew and his girlfriend do on July 24, 2023?",
    );
    assert_eq!(hits[0], "D3:7", "{hits:?}");
    // an id is still found by its number
    let hits = search(&mut nx, "D3:7");
    assert_eq!(hits[0], "D3:7", "{hits:?}");
}

#[test]
fn stop_words_do_not_rank_but_a_question_of_only_stop_words_is_asked() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    event(&mut nx, "a", "What did you do? What was it? What is it?");
    event(&mut nx, "b", "John read Dune and two books by Le Guin.");
    let hits = search(&mut nx, "What books has John read?");
    assert_eq!(hits[0], "b", "{hits:?}");
    // nothing but stop words: they are looked for rather than nothing
    let hits = search(&mut nx, "what is it");
    assert_eq!(hits[0], "a", "{hits:?}");
}

#[test]
fn chinese_and_accented_text_is_found() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    event(&mut nx, "zh", "用户说他每天早上喝咖啡，不喝茶。");
    event(&mut nx, "fr", "Elle aime les randonnées en montagne.");
    event(&mut nx, "cz", "Tonight: Dvořák's cello concerto.");
    event(&mut nx, "other", "A note about something else entirely.");
    assert_eq!(search(&mut nx, "咖啡"), ["zh"]);
    assert_eq!(search(&mut nx, "用户喝什么咖啡？")[0], "zh");
    assert_eq!(search(&mut nx, "Dvorak")[0], "cz");
    assert_eq!(search(&mut nx, "randonnées")[0], "fr");
}

#[test]
fn a_memory_indexed_before_analysis_is_reindexed_when_opened() {
    let dir = std::env::temp_dir().join(format!("somnus-search-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("memory.db");
    {
        let mut nx = Nexus::open(&path).expect("open");
        event(&mut nx, "old", "The shelters in town are full this winter.");
    }
    // the index as schema 19 kept it: raw words, four columns
    {
        let conn = rusqlite::Connection::open(&path).expect("raw");
        conn.execute_batch(
            "DROP TABLE concept_vocab; DROP TABLE concept_fts;
             CREATE VIRTUAL TABLE concept_fts USING fts5(name, aliases, description, body, tokenize = 'unicode61 remove_diacritics 2');
             INSERT INTO concept_fts(rowid, name, body) SELECT id, name, json_extract(attributes, '$.content_summary') FROM concepts;
             PRAGMA user_version = 19;",
        )
        .expect("downgrade");
    }
    let mut nx = Nexus::open(&path).expect("reopen");
    assert_eq!(search(&mut nx, "shelter"), ["old"]);
    let v: Value = match nx.kip("SEARCH CONCEPT \"winters\" LIMIT 5") {
        Outcome::Ok { result, .. } => result,
        Outcome::Err(e) => panic!("{} {}", e.code, e.message),
    };
    assert_eq!(v[0]["name"], "old");
    drop(nx);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_day_named_in_the_question_finds_what_happened_that_day() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    search_window::a_day_named_finds_that_day(&mut nx);
}

#[test]
fn huge_texts_index_and_huge_questions_are_bounded() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    // 300 KB of Chinese without a space, a 10,000-letter word, 50,000 numbers
    let zh = "用户说他每天早上喝咖啡".repeat(10_000);
    let long = "x".repeat(10_000);
    let numbers: String = (0..50_000).map(|i| format!("{i} ")).collect();
    event(&mut nx, "zh", &zh);
    event(&mut nx, "long", &format!("{long} marker"));
    event(&mut nx, "numbers", &numbers);
    assert_eq!(search(&mut nx, "咖啡")[0], "zh");
    assert_eq!(search(&mut nx, "marker"), ["long"]);
    assert_eq!(search(&mut nx, "49999"), ["numbers"]);
    // a question at the length limit, of stop words, digits and dates
    let q: String = "what is the 12 May 2023 of it "
        .repeat(200)
        .chars()
        .take(4000)
        .collect();
    let _ = search(&mut nx, &q);
    // past it, a KIP error, not a panic
    let over = "word ".repeat(1000);
    match nx.kip_with(r#"SEARCH CONCEPT :q LIMIT 5"#, json!({ "q": over })) {
        Outcome::Err(e) => assert_eq!(e.code.code(), "KIP_4002", "{}", e.message),
        Outcome::Ok { .. } => panic!("a 5,000-byte SEARCH text is past the limit"),
    }
}

#[path = "kip_cases/search_window.rs"]
mod search_window;

/// `@since` and `@until` keep the days asked (on SQLite).
#[test]
fn a_search_keeps_the_days_asked() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    search_window::a_search_keeps_the_days_asked(&mut nx);
}

#[path = "kip_cases/search_attributes.rs"]
mod search_attributes;
use search_attributes::{PROFILE, kip, search_all};

#[test]
fn what_an_elements_other_attributes_say_is_found_after_its_own_text() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    search_attributes::other_attributes_are_found(&mut nx);
}

#[test]
fn a_huge_attribute_is_indexed_up_to_its_bound_and_written_whole() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let bound = somnus::store::fts::MAX_REST_BYTES;
    // words up to the bound, then one past it
    let head = "ñandú ".repeat(bound / "ñandú ".len() + 1);
    let text = format!("{head} zebra");
    match nx.kip_with(
        r#"UPSERT { CONCEPT ?p { {type: "Person", name: "Long"} SET ATTRIBUTES { notes: :t } } } WITH METADATA { source: "test", author: "$self" }"#,
        json!({ "t": text }),
    ) {
        Outcome::Ok { .. } => {}
        Outcome::Err(e) => panic!("{} {}", e.code, e.message),
    }
    assert_eq!(search_all(&mut nx, "ñandú"), ["Long"]);
    assert!(search_all(&mut nx, "zebra").is_empty());
    let v = match nx.kip(r#"FIND(?p.attributes.notes) WHERE { ?p {type: "Person", name: "Long"} }"#)
    {
        Outcome::Ok { result, .. } => result,
        Outcome::Err(e) => panic!("{} {}", e.code, e.message),
    };
    assert_eq!(v[0].as_str().map(str::len), Some(text.len()));
}

/// A memory file in a fresh folder holding [`PROFILE`]: the folder and
/// the file.
fn profile_on_disk(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("somnus-search-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("memory.db");
    let mut nx = Nexus::open(&path).expect("open");
    for c in PROFILE {
        kip(&mut nx, c);
    }
    (dir, path)
}

#[test]
fn a_memory_indexed_before_other_attributes_counted_is_reindexed_when_opened() {
    let (dir, path) = profile_on_disk("rest");
    // the index as schema 21 kept it: five columns
    {
        let conn = rusqlite::Connection::open(&path).expect("raw");
        conn.execute_batch(
            "DROP TABLE concept_vocab; DROP TABLE concept_fts;
             CREATE VIRTUAL TABLE concept_fts USING fts5(name, codes, aliases, description, body, tokenize = 'unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE concept_vocab USING fts5vocab(concept_fts, 'row');
             INSERT INTO concept_fts(rowid, name, body) SELECT id, lower(name), lower(json_extract(attributes, '$.content_summary')) FROM concepts;
             PRAGMA user_version = 21;",
        )
        .expect("downgrade");
    }
    let mut nx = Nexus::open(&path).expect("reopen");
    assert_eq!(search_all(&mut nx, "kiln"), ["Lucía Ortega"]);
    assert_eq!(search_all(&mut nx, "shelves"), ["Studio visit"]);
    drop(nx);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A memory of schema 22 is indexed again when opened (schema 23 adds a
/// word's plain spelling stems): what it holds is found, and found without
/// its accents.
#[test]
fn a_memory_of_schema_22_is_indexed_again_when_opened() {
    let (dir, path) = profile_on_disk("fold");
    // an index that does not hold them
    {
        let conn = rusqlite::Connection::open(&path).expect("raw");
        conn.execute_batch("DELETE FROM concept_fts; PRAGMA user_version = 22;")
            .expect("downgrade");
    }
    let mut nx = Nexus::open(&path).expect("reopen");
    assert_eq!(search_all(&mut nx, "Lavapies"), ["Lucía Ortega"]);
    assert_eq!(search_all(&mut nx, "shelves"), ["Studio visit"]);
    drop(nx);
    let _ = std::fs::remove_dir_all(&dir);
}
