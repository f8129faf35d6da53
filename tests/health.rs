//! The sleep-cycle assessment finds the cases planted in the demo memory.

use somnus::sleep::health::{Status, assess};

#[test]
fn the_demo_memory_assessment_finds_every_planted_case() {
    let mut nx = somnus::demo::in_memory().expect("demo");
    let h = assess(&mut nx, "2026-11-20T00:00:00Z", 7).expect("assess");
    let items = |k: &str| h.get(k).map(|m| m.items.clone()).unwrap_or_default();

    let orphans = items("orphans");
    for o in [
        "Topic: Zig",
        "Place: Porto",
        "Event: ToolUse:2026-10-20:weather_lookup",
    ] {
        assert!(
            orphans.iter().any(|x| x == o),
            "{o} missing from {orphans:?}"
        );
    }
    assert!(
        !orphans.iter().any(|x| x.contains("$self")),
        "system actors are not orphans"
    );

    let unsorted = items("unsorted");
    assert!(
        unsorted.iter().any(|x| x.contains("Vinyl records"))
            && unsorted.iter().any(|x| x.contains("Board games")),
        "{unsorted:?}"
    );

    let stale = items("stale_events");
    assert!(
        stale.contains(&"Conversation:2026-10-09:atlas_schema_review".to_string()),
        "{stale:?}"
    );
    assert!(
        stale
            .iter()
            .all(|e| e.as_str() < "Conversation:2026-11-13" || e.starts_with("ToolUse")),
        "nothing younger than 7 days: {stale:?}"
    );
    assert_eq!(stale.len(), 22);

    assert_eq!(
        items("overdue_commitments"),
        vec!["Remind Mira to renew her passport".to_string()]
    );
    assert_eq!(
        h.get("overdue_commitments").map(|m| m.status),
        Some(Status::Bad)
    );
    assert_eq!(items("pending_sleep_tasks").len(), 3);
    assert_eq!(h.get("superseded").map(|m| m.value), Some(1.0));
    assert!(h.get("unscored_events").map(|m| m.value).unwrap_or(0.0) >= 15.0);
    // a week later the pending commitment is overdue too
    let later = assess(&mut nx, "2026-12-01T00:00:00Z", 7).expect("assess");
    assert_eq!(
        later.get("overdue_commitments").map(|m| m.items.len()),
        Some(2)
    );
}

/// Past the lists' limits the numbers stay exact: 1,250 unscored and stale
/// Events are counted as 1,250 (more than the 1,000 the list shows).
#[test]
fn counts_past_the_list_limits_are_exact() {
    use somnus::protocol::{Outcome, Request};
    let mut nx = somnus::Nexus::open_in_memory().expect("open");
    for b in 0..5 {
        let mut text = String::from("UPSERT {\n");
        for i in 0..250 {
            let n = b * 250 + i;
            text.push_str(&format!(
                "  CONCEPT ?e{i} {{ {{type: \"Event\", name: \"Call:{n}\"}} SET ATTRIBUTES {{ event_class: \"Conversation\", start_time: \"2026-01-01T10:00:00Z\" }} }}\n"
            ));
        }
        text.push('}');
        let r = nx.execute(&Request::command(text).with_params(Default::default()));
        assert!(
            matches!(r, somnus::Response::Single(Outcome::Ok { .. })),
            "{r:?}"
        );
    }
    let h = assess(&mut nx, "2026-11-20T00:00:00Z", 7).expect("assess");
    for k in ["unscored_events", "stale_events", "orphans"] {
        let m = h.get(k).expect(k);
        assert!(m.value >= 1250.0, "{k}: {}", m.value);
        assert!(m.items.len() <= 1000, "{k}: {}", m.items.len());
    }
    assert_eq!(h.get("unscored_events").unwrap().value, 1250.0);
    assert_eq!(h.get("stale_events").unwrap().value, 1250.0);
}
