//! The log an agent keeps of what it learned (`.learnings/`, the
//! self-improving-agent skill's, in 4 of 26 public workspaces): each entry
//! an Insight of its own, the skill's template and preamble left out and
//! said, any other file a note; a byte a Windows tool wrote into a file
//! no longer costs the whole file.

mod common;

use common::{kip, put, run, tmp};

#[test]
fn each_entry_of_the_agents_learning_log_is_an_insight() {
    let home = tmp("learnings");
    let ws = home.join("workspace");
    put(
        &ws,
        "MEMORY.md",
        b"# MEMORY.md\n\n## Core\n- Lives in Hanoi\n",
    );
    put(
        &ws,
        "memory/2026-04-28.md",
        b"# 2026-04-28\n\n- Shipped the report\n",
    );
    put(
        &ws,
        ".learnings/LEARNINGS.md",
        b"# Learnings\n\nUse this file for durable lessons.\n\n## Entry template\n\n## [LRN-YYYYMMDD-XXX] short-title\n\n- Logged: ISO-8601 timestamp\n- Summary: one-line lesson\n\n---\n\n## [LRN-20260428-001] repo-scripts-may-ignore-help-flags\n\n- Logged: 2026-04-28T19:32:00+07:00\n- Status: pending\n- Area: tools\n- Summary: Some repo scripts ignore --help and run for real.\n- Action: Read a script before probing it.\n\n### Details\nRan `sync.py --help`; it synced.\n",
    );
    put(
        &ws,
        ".learnings/ERRORS.md",
        b"# Errors\n\n## [ERR-20260511-001] web_search_dns_failure\n\n**Logged**: 2026-05-11T08:00:00+07:00\n**Priority**: high\n\n### Summary\nweb_search failed on DNS; TradingEconomics worked for today\x92s watchouts.\n\n### Suggested Fix\nFall back to web_fetch.\n",
    );
    put(
        &ws,
        ".learnings/FEATURE_REQUESTS.md",
        b"# Feature Requests\n\n## Entry template\n\n## [FEAT-YYYYMMDD-XXX] short-title\n\n- Summary: requested capability\n",
    );
    put(
        &ws,
        ".learnings/RULES.md",
        b"# Learning Rules\n\n## Purpose\n\nCapture lessons that matter.\n",
    );
    let db = home.join("m.db");
    let (ok, out) = run(&db, &["import", "openclaw", &ws.to_string_lossy()]);
    assert!(ok, "{out}");
    for said in [
        ".learnings/: the agent's log of what it learned: 2 entries read as Insights, 1 other note",
        ".learnings/LEARNINGS.md: 1 entry read; its preamble (1 line) and 2 entry templates are the skill's instructions, left out",
        ".learnings/FEATURE_REQUESTS.md: the skill's entry template and no entry: nothing imported",
        ".learnings/ERRORS.md: 1 byte not UTF-8 (a Windows tool's), read as Windows-1252",
    ] {
        assert!(out.contains(said), "the report says {said:?}:\n{out}");
    }
    let r = kip(
        &db,
        r#"FIND(?c.name, ?c.attributes.insight_class, ?c.attributes.description, ?c.attributes.correction, ?c.attributes.learning_id, ?c.metadata.created_at, ?c.metadata.source) WHERE { ?c {type: "Insight"} FILTER(CONTAINS(?c.metadata.source, ".learnings/")) } ORDER BY ?c.name"#,
    );
    assert_eq!(
        r["result"],
        serde_json::json!([
            [
                "Learning Rules",
                "note",
                "# Learning Rules\n\n## Purpose\n\nCapture lessons that matter.",
                null,
                null,
                null,
                "moltbot:.learnings/RULES.md:1"
            ],
            [
                "repo scripts may ignore help flags",
                "lesson_learned",
                "Some repo scripts ignore --help and run for real.",
                "Read a script before probing it.",
                "LRN-20260428-001",
                "2026-04-28T19:32:00+07:00",
                "moltbot:.learnings/LEARNINGS.md:14"
            ],
            [
                "web search dns failure",
                "lesson_learned",
                "web_search failed on DNS; TradingEconomics worked for today\u{2019}s watchouts.",
                "Fall back to web_fetch.",
                "ERR-20260511-001",
                "2026-05-11T08:00:00+07:00",
                "moltbot:.learnings/ERRORS.md:3"
            ],
        ]),
        "{r}"
    );
}
