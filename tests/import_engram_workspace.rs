//! An OpenClaw workspace whose memory plugin is Engram, laid out as a
//! real one is (`memory/local/` beside the daily notes, written in
//! Chinese and English): the store is read as Engram's memories, not as
//! notes; its preferences are the user the workspace names; its
//! curiosity questions and state stay out; and the conversations it kept
//! message by message (`transcripts/`) become Events of what was said,
//! without the memories it recalled before each message.

mod common;

use common::{kip, put, run, tmp};
use serde_json::Value;
use std::path::Path;

/// What Engram put before each of the user's messages.
const RECALL: &str = "## User Profile\\n\\n- User strongly prefers auditing installation scripts.\\n\\n## Recent Memories\\n\\n[1] /root/.openclaw/workspace/memory/local/facts/2026-03-18/fact-1.md (score: 1.1)\\nTwitter API is down.\\n\\nUse this context naturally when relevant. Never quote or expose this memory context to the user.\\n\\n";

fn workspace(ws: &Path) {
    put(
        ws,
        "USER.md",
        "# USER.md\n\n- **Name:** 掌管🦞的神\n- **Timezone:** Asia/Shanghai\n",
    );
    put(
        ws,
        "IDENTITY.md",
        "# IDENTITY.md\n\n- **Name:** 小蓝虾\n- **Creature:** shrimp\n",
    );
    put(
        ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## 核心\n- 主人关注美股微盘股\n",
    );
    put(
        ws,
        "memory/2026-03-19.md",
        "# 2026-03-19\n\n## 08:25 AISA 余额\n- API 余额耗尽，已换 Stooq\n",
    );
    put(
        ws,
        "memory/local/facts/2026-03-17/preference-1773716096371-jrjw.md",
        "---\nid: preference-1773716096371-jrjw\ncategory: preference\ncreated: 2026-03-17T02:54:56.371Z\nupdated: 2026-03-17T02:54:56.371Z\nsource: extraction\nconfidence: 0.95\nconfidenceTier: explicit\ntags: [\"security\"]\nstructuredAttributes: {\"tool\":\"curl\"}\n---\n\nUser strongly prefers to audit installation scripts before running them.\n",
    );
    put(
        ws,
        "memory/local/entities/project-openclaw.md",
        "# OpenClaw\n\n**Type:** project\n\n## Summary\n\nThe agent framework the user runs.\n",
    );
    // (an entity that gives its type, name and aliases in frontmatter, as
    // an agent writing Engram's files by hand does)
    put(
        ws,
        "memory/local/entities/venture-agentads.md",
        "---\nid: entity-venture-agentads\ncategory: entity\ntype: project\nname: AgentAds\naliases: [\"agent-ads\", \"ad-network\"]\nstatus: poc-complete\n---\n\n# AgentAds 🤫\n\n## Summary\n\nAdWords for AI agents.\n",
    );
    put(
        ws,
        "memory/local/profile.md",
        "# Behavioral Profile\n\n- User values security audits.\n",
    );
    put(
        ws,
        "memory/local/questions/q-mmtzvgjj-9r.md",
        "---\nid: \"q-mmtzvgjj-9r\"\npriority: 0.6\n---\n\nWould running two agents on one machine conflict?\n",
    );
    put(ws, "memory/local/state/buffer.json", "{\"turns\": []}");
    let line = |role: &str, at: &str, content: &str| {
        format!(
            "{{\"timestamp\":\"{at}\",\"role\":\"{role}\",\"content\":\"{content}\",\"sessionKey\":\"agent:main:daxiang:direct:2872173767\",\"turnId\":\"t\"}}\n"
        )
    };
    let mut t = String::new();
    t += &line(
        "user",
        "2026-03-19T00:26:22.239Z",
        &format!(
            "{RECALL}[Daxiang 2872173767 Thu 2026-03-19 08:25 GMT+8] 2872173767: 为啥api又没钱了，啥原因？"
        ),
    );
    t += &line(
        "assistant",
        "2026-03-19T00:26:40.000Z",
        "[[reply_to_current]] 原因找到了：昨天消耗过猛。",
    );
    t += "{not json\n";
    t += &line(
        "user",
        "2026-03-19T06:41:00.000Z",
        &format!(
            "{RECALL}[Daxiang 2872173767 Thu 2026-03-19 14:41 GMT+8] 2872173767: 以后推送都要写日期，不要只写时间"
        ),
    );
    t += &line(
        "user",
        "2026-03-19T07:00:00.000Z",
        &format!(
            "{RECALL}Write any lasting notes to memory/2026-03-19.md; reply with NO_REPLY if nothing to store."
        ),
    );
    t += &line("assistant", "2026-03-19T07:00:01.000Z", "NO_REPLY");
    put(
        ws,
        "memory/local/transcripts/daxiang/direct/2026-03-19.jsonl",
        &t,
    );
    put(
        ws,
        "memory/local/transcripts/subagent/d58eaec5-350a/2026-03-17.jsonl",
        line(
            "user",
            "2026-03-17T01:00:00.000Z",
            "Research Hermes Agent and report back.",
        ),
    );
}

#[test]
fn an_engram_store_in_a_workspace_is_read_as_engrams_with_its_conversations() {
    let home = tmp("engram-in-workspace");
    let ws = home.join("workspace");
    workspace(&ws);
    let db = home.join("m.db");
    let ws_arg = ws.to_string_lossy().to_string();
    let (ok, out) = run(&db, &["import", "openclaw", &ws_arg]);
    assert!(ok, "{out}");
    for said in [
        "memory/local/: an Engram store",
        "memory/local/questions/: not imported (curiosity questions",
        "memory/local/state/: not imported",
        "memory/local/transcripts/: Engram's transcripts: 1 conversation read; 1 of sub-agents",
        "2026-03-19.jsonl:3: 1 line not a message",
        "Event `2026-03-19 conversation, daxiang direct`",
    ] {
        assert!(out.contains(said), "the report says {said:?}:\n{out}");
    }
    assert!(
        !out.contains("structuredAttributes"),
        "a key Engram writes: {out}"
    );
    assert!(
        !out.contains("Insight (note)"),
        "no Engram file is a note: {out}"
    );

    // the preference is Engram's, held by the user the workspace names
    let r = kip(
        &db,
        r#"FIND(?p.name, ?p.metadata.source, ?p.metadata.author) WHERE { ?u {type: "Person", name: "掌管🦞的神"} (?u, "prefers", ?p) }"#,
    );
    let rows = r["result"].as_array().expect("rows").clone();
    assert!(
        rows.iter().any(|row| row[1]
            == "engram:memory/local/facts/2026-03-17/preference-1773716096371-jrjw.md:13"
            && row[2] == "engram"),
        "{r}"
    );
    let attrs = kip(
        &db,
        r#"FIND(?p.metadata.structured_attributes) WHERE { ?p {type: "Preference"} }"#,
    );
    assert_eq!(
        attrs["result"],
        serde_json::json!([{"tool": "curl"}]),
        "{attrs}"
    );
    let users = kip(&db, r#"FIND(?p.name) WHERE { ?p {type: "Person"} }"#);
    assert_eq!(
        users["result"],
        serde_json::json!(["$self", "$system", "掌管🦞的神"]),
        "one Person, the user: no `User`, no chat id, no agent"
    );
    let profile = kip(
        &db,
        r#"FIND(?p.attributes.behavior_preferences) WHERE { ?p {type: "Person", name: "掌管🦞的神"} }"#,
    );
    assert_eq!(
        profile["result"][0][0], "User values security audits.",
        "{profile}"
    );
    let project = kip(
        &db,
        r#"FIND(?p.name, ?p.attributes.aliases, ?p.metadata.status) WHERE { ?p {type: "Project"} FILTER(?p.name == "AgentAds") }"#,
    );
    assert_eq!(
        project["result"],
        serde_json::json!([["AgentAds", ["agent-ads", "ad-network"], "poc-complete"]]),
        "its frontmatter's type, name and aliases"
    );
    // the question and the state are nowhere
    let all = kip(&db, r#"FIND(?c) WHERE { ?c {type: "Insight"} }"#).to_string()
        + &kip(&db, r#"FIND(?c) WHERE { ?c {type: "Fact"} }"#).to_string();
    assert!(!all.contains("two agents on one machine"), "{all}");

    // the conversation: what the user said, in the zone they wrote in
    let e = kip(
        &db,
        r#"FIND(?e.attributes) WHERE { ?e {type: "Event", name: "2026-03-19 conversation, daxiang direct"} }"#,
    );
    let a = &e["result"][0];
    let said = a["content_summary"].as_str().expect("text");
    assert_eq!(
        said,
        "user (08:25): 为啥api又没钱了，啥原因？\n\nassistant: 原因找到了：昨天消耗过猛。\n\nuser (14:41): 以后推送都要写日期，不要只写时间",
        "{a}"
    );
    assert_eq!(a["start_time"], "2026-03-19T08:25:00+08:00");
    assert_eq!(a["end_time"], "2026-03-19T15:00:01+08:00");
    assert_eq!(a["context"]["channel"], "daxiang");
    let left: &Value = &a["left_out"];
    assert_eq!(left["recalled memories"], 3, "{left}");
    let involves = kip(
        &db,
        r#"FIND(?p.name) WHERE { ?e {type: "Event", name: "2026-03-19 conversation, daxiang direct"} (?e, "involves", ?p) }"#,
    );
    assert_eq!(involves["result"], serde_json::json!(["掌管🦞的神"]));

    // again: nothing changes
    let (ok, again) = run(&db, &["import", "openclaw", &ws_arg]);
    assert!(ok, "{again}");
    assert!(again.contains("created 0 elements, updated 0"), "{again}");

    // the store alone: its memories, and its transcripts read as the
    // workspace reads them
    let db2 = home.join("m2.db");
    let store = ws.join("memory/local").to_string_lossy().to_string();
    let (ok, alone) = run(&db2, &["import", "engram", &store, "--user", "掌管🦞的神"]);
    assert!(ok, "{alone}");
    assert!(
        alone.contains("transcripts/: Engram's transcripts: 1 conversation read"),
        "{alone}"
    );
    let e = kip(
        &db2,
        r#"FIND(?e.attributes.content_summary, ?e.attributes.start_time) WHERE { ?e {type: "Event", name: "2026-03-19 conversation, daxiang direct"} }"#,
    );
    assert_eq!(
        e["result"],
        serde_json::json!([[said, "2026-03-19T08:25:00+08:00"]]),
        "{alone}"
    );
    let (ok, again) = run(&db2, &["import", "engram", &store, "--user", "掌管🦞的神"]);
    assert!(ok, "{again}");
    assert!(again.contains("created 0 elements, updated 0"), "{again}");
}

/// A folder of the memory that merely looks like Engram's (a `facts/`
/// of plain notes) is notes, read as notes.
#[test]
fn a_folder_named_like_engrams_without_its_memories_is_notes() {
    let home = tmp("engram-lookalike");
    let ws = home.join("workspace");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Core\n- Lives in Lisbon\n",
    );
    put(
        &ws,
        "memory/local/facts/lisbon.md",
        "# Lisbon\n\nThe user moved there in 2024.\n",
    );
    let db = home.join("m.db");
    let (ok, out) = run(&db, &["import", "openclaw", &ws.to_string_lossy()]);
    assert!(ok, "{out}");
    assert!(!out.contains("an Engram store"), "{out}");
    let r = kip(&db, r#"FIND(?c.name) WHERE { ?c {type: "Insight"} }"#);
    assert!(r.to_string().contains("Lisbon"), "{r}");
}

/// A hostile transcript: 20,000 messages, each under a session key of
/// its own, one a line past the limit, one never a message: read in one
/// pass, its context keeping the first 16 keys, the long line said.
#[test]
fn a_transcript_of_many_session_keys_and_a_huge_line_is_read_in_one_pass() {
    let home = tmp("engram-hostile-transcript");
    let ws = home.join("workspace");
    workspace(&ws);
    let mut t = String::new();
    for i in 0..20_000 {
        t += &format!(
            "{{\"timestamp\":\"2026-03-21T01:00:00.000Z\",\"role\":\"user\",\"content\":\"message {i}\",\"sessionKey\":\"key-{i}\"}}\n"
        );
    }
    t += &format!(
        "{{\"role\":\"user\",\"content\":\"{}\"}}\n",
        "x".repeat(5 * 1024 * 1024)
    );
    put(
        &ws,
        "memory/local/transcripts/main/default/2026-03-21.jsonl",
        &t,
    );
    let db = home.join("m.db");
    let (ok, out) = run(&db, &["import", "openclaw", &ws.to_string_lossy()]);
    assert!(ok, "{out}");
    assert!(
        out.contains("2026-03-21.jsonl: 1 line longer than 4 MB, skipped"),
        "{out}"
    );
    let e = kip(
        &db,
        r#"FIND(?e.attributes.context) WHERE { ?e {type: "Event", name: "2026-03-21 conversation, main"} }"#,
    );
    let keys = e["result"][0]["session_keys"]
        .as_array()
        .expect("keys")
        .len();
    assert_eq!(keys, 16, "{e}");
}
