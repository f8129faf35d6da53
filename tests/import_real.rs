//! Importing a real public OpenClaw workspace (`tests/data/openclaw-catalyst`,
//! MIT, see its LICENSE and SOURCE.md), written in Chinese and English
//! by an agent and its user, never for somnus: every content line reaches
//! the memory, daily notes become Events on their day at their time, a
//! note about one topic stays one document, and three sleep cycles, each
//! approved whole, lose no line and rewrite no element's origin.
//! Beside it, the shapes other real workspaces use, written inline:
//! stamped log entries, a user profile grouped under labels.

mod common;

use serde_json::{Value, json};
use somnus::Nexus;
use std::path::{Path, PathBuf};

use common::tmp;

/// The binary's answer: whether it succeeded, and all it said.
fn somnus(db: &Path, args: &[&str]) -> (bool, String) {
    common::run(db, args)
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let r = nx.kip(cmd).to_json();
    assert!(r.get("error").is_none(), "{cmd}: {r}");
    r["result"].clone()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openclaw-catalyst")
}

/// Every string the memory's concepts hold.
fn all_text(db: &Path) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let nx = Nexus::open(db).expect("open");
    let mut out = String::new();
    for r in nx
        .db()
        .query("SELECT name, attributes FROM concepts", &[])
        .expect("concepts")
        .iter()
    {
        out.push_str(&r.text(0).unwrap_or_default());
        out.push('\n');
        let v: Value = serde_json::from_str(&r.text(1).unwrap_or_default()).unwrap_or(Value::Null);
        walk(&v, &mut out);
    }
    out
}

/// The markdown files of the fixture, and each content line of them that
/// is missing from `text` (a heading's `#`s are markup, not content).
fn missing_lines(text: &str) -> Vec<String> {
    let mut missing = Vec::new();
    let root = fixture();
    let mut files = vec![root.join("IDENTITY.md"), root.join("SOUL.md")];
    for e in std::fs::read_dir(root.join("memory")).expect("memory") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    assert_eq!(files.len(), 7, "{files:?}");
    for f in files {
        let body = std::fs::read_to_string(&f).expect("read");
        for (i, line) in body.lines().enumerate() {
            let l = line.trim().trim_start_matches('#').trim();
            if !l.is_empty() && !text.contains(l) {
                missing.push(format!("{}:{}: {l}", f.display(), i + 1));
            }
        }
    }
    missing
}

#[test]
fn a_real_workspace_reaches_the_memory_line_by_line_with_its_days_and_times() {
    let dir = tmp("catalyst");
    let db = dir.join("m.db");
    let ws = fixture();
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    // the state file is named, not read, and nothing aborted
    assert!(
        said.contains("memory/.memory-manager-state.json: a hidden file (a tool's state), skipped"),
        "{said}"
    );
    let missing = missing_lines(&all_text(&db));
    assert!(
        missing.is_empty(),
        "lines that reached no element:\n{}",
        missing.join("\n")
    );
    let mut nx = Nexus::open(&db).expect("open");
    let events = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes.start_time) WHERE { ?e {type: "Event"} } ORDER BY ?e.attributes.start_time ASC"#,
    );
    let pairs: Vec<(String, String)> = events
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap_or("").into(),
                r[1].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    for (name, at) in [
        // a section's time in brackets at its end, given once in the name
        (
            "2026-04-02 22:00 agent-log CLI 工具",
            "2026-04-02T22:00:00Z",
        ),
        ("2026-04-03 19:00 晚间创意探索", "2026-04-03T19:00:00Z"),
        // a note without a time: its day
        ("2026-04-09 DeepSeek V4 跟踪", "2026-04-09T00:00:00Z"),
        // a note about one topic is one document, named by its title
        (
            "2026-04-05 Local Embedding Memory Plugin 修复完成",
            "2026-04-05T00:00:00Z",
        ),
        ("2026-03-27 早间随笔生成", "2026-03-27T00:00:00Z"),
    ] {
        assert!(
            pairs.iter().any(|(n, t)| n == name && t == at),
            "{name} at {at} in {pairs:?}"
        );
    }
    // the topic notes' sections ("问题描述", "根本原因") are no Events of
    // their own
    assert!(
        !pairs
            .iter()
            .any(|(n, _)| n.contains("问题描述") || n.contains("根本原因")),
        "{pairs:?}"
    );
    assert_eq!(pairs.len(), 5, "{pairs:?}");
    // the agent's identity on $self, its placeholder avatar left out
    let me = kip(
        &mut nx,
        r#"FIND(?s.attributes.identity) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(me[0]["name"], json!("Catalyst"), "{me}");
    assert!(me[0].get("avatar").is_none(), "{me}");
    drop(nx);
    // importing again changes nothing
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    assert!(said.contains("created 0 elements"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn three_cycles_approved_whole_on_a_real_workspace_lose_no_line() {
    let dir = tmp("catalyst-cycles");
    let db = dir.join("m.db");
    let ws = fixture();
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    let origins = |db: &Path| -> Vec<(i64, String)> {
        let nx = Nexus::open(db).expect("open");
        nx.db()
            .query("SELECT id, metadata FROM concepts ORDER BY id", &[])
            .expect("concepts")
            .iter()
            .map(|r| {
                let m: Value =
                    serde_json::from_str(&r.text(1).unwrap_or_default()).unwrap_or(Value::Null);
                let g = |k: &str| m[k].as_str().unwrap_or("").to_string();
                (
                    r.i64(0).unwrap_or(0),
                    format!("{} {} {}", g("source"), g("author"), g("created_at")),
                )
            })
            .filter(|(_, o)| o.starts_with("moltbot:"))
            .collect()
    };
    let before = origins(&db);
    assert!(before.len() >= 6, "{before:?}");
    for now in [
        "2026-04-20T03:00:00Z",
        "2026-06-01T03:00:00Z",
        "2026-09-01T03:00:00Z",
    ] {
        let (ok, said) = somnus(&db, &["sleep", "--now", now]);
        assert!(ok, "{said}");
        let (ok, list) = somnus(&db, &["proposals", "list", "--json"]);
        assert!(ok, "{list}");
        let list: Value = serde_json::from_str(&list).expect("JSON");
        for p in list.as_array().expect("proposals") {
            if p["status"] == "pending" || p["status"] == "partially_applied" {
                let id = p["id"].to_string();
                let (ok, said) = somnus(&db, &["proposals", "approve", &id]);
                assert!(ok || said.contains("no pending item"), "{said}");
            }
        }
    }
    let after = origins(&db);
    for o in &before {
        assert!(after.contains(o), "{o:?} lost or its origin rewritten");
    }
    let missing = missing_lines(&all_text(&db));
    assert!(
        missing.is_empty(),
        "lines lost by the cycles:\n{}",
        missing.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A session transcript OpenClaw saves (`memory/2026-02-07-0431.md`: the
/// rest of the name is when it was written, no topic; its title says only
/// when) whose messages are stamped in the sender's time zone (`GMT+8`),
/// and a daily note whose one heading is its day: each stamped message is
/// an Event at its own instant, the offset kept; the transcript is named
/// for what it is (`Session`), never `0431`; the day is not named twice.
#[test]
fn a_session_transcript_keeps_its_senders_time_zone() {
    let dir = tmp("session-zone");
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("ws");
    std::fs::write(
        ws.join("memory/2026-02-07-0431.md"),
        "# Session: 2026-02-07 04:31:14 UTC\n\n- **Source**: telegram\n\n## Conversation Summary\n\nuser: [Telegram Ana id:42 +18m 2026-02-07 10:52 GMT+8] are you there\nuser: [Telegram Ana id:42 +6s 2026-02-07 10:53 GMT+8] hello again\nassistant: here\n",
    )
    .expect("session");
    std::fs::write(
        ws.join("memory/2026-02-08-0915.md"),
        "# Session: 2026-02-08 09:15:00 UTC\n\n## Conversation Summary\n\nuser: set up the backup\nassistant: done\n",
    )
    .expect("session");
    std::fs::write(
        ws.join("memory/2026-02-06.md"),
        "## 2026-02-06\n\n### Server\n- Ubuntu 24.04\n",
    )
    .expect("day");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    let events = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes.start_time, ?e.attributes.topic) WHERE { ?e {type: "Event"} } ORDER BY ?e.name ASC"#,
    );
    // a saved session is one conversation, from its first message (at
    // the offset its sender's stamp gives) to when it was saved
    assert_eq!(
        events,
        json!([
            ["2026-02-06", "2026-02-06T00:00:00Z", null],
            [
                "2026-02-07 04:31 conversation",
                "2026-02-07T10:52:00+08:00",
                null
            ],
            [
                "2026-02-08 09:15 conversation",
                "2026-02-08T09:15:00Z",
                null
            ]
        ]),
        "{events}"
    );
    let talk = kip(
        &mut nx,
        r#"FIND(?e.attributes) WHERE { ?e {type: "Event", name: "2026-02-07 04:31 conversation"} }"#,
    );
    let a = &talk[0];
    assert_eq!(a["event_class"], json!("Conversation"), "{a}");
    assert_eq!(a["end_time"], json!("2026-02-07T04:31:14Z"), "{a}");
    assert_eq!(
        a["content_summary"],
        json!("user (10:52): are you there\n\nuser (10:53): hello again\n\nassistant: here"),
        "{a}"
    );
    assert_eq!(a["participants"], json!(["$self", "Ana"]), "{a}");
    assert_eq!(a["context"]["channel"], json!("telegram"), "{a}");
    let with = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { (?e, "involves", ?p) ?e {type: "Event", name: "2026-02-07 04:31 conversation"} }"#,
    );
    assert_eq!(with, json!(["Ana"]), "{with}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A conversation OpenClaw saved as its session ended (its
/// session-memory hook), as a real German workspace holds them: one
/// `Conversation` Event of what was said, without the metadata the
/// gateway quotes, the memories a recall plugin injected, system notices
/// and OpenClaw's own prompts (each counted in `left_out`, and the
/// import says so); the sender the metadata names is a Person the
/// conversation involves; and the cycle reads what the user said, not the
/// agent's answers, and leaves a note whose `Label: value` lines it
/// cannot read as it is instead of archiving it as "nothing durable".
#[test]
fn a_saved_conversation_is_one_event_of_what_was_said() {
    let dir = tmp("session-saved");
    let ws = dir.join("ws");
    put(
        &ws,
        "memory/2026-02-20-gateway-fix.md",
        "# Session: 2026-02-20 08:08:25 UTC\n\n- **Session Key**: agent:main:main\n- **Session ID**: 956e9532\n- **Source**: telegram\n\n## Conversation Summary\n\nuser: System: [2026-02-20 08:48:55 GMT+1] Cron (error): Gamma Daily Note bereit\n\nA scheduled reminder has been triggered. The reminder content is:\n\nCron (error): Gamma Daily Note bereit\n\nPlease relay this reminder to the user in a helpful and friendly way.\nCurrent time: Friday, February 20th, 2026 — 8:48 AM (Europe/Berlin)\nassistant: Gamma Daily Note von gestern ist da.\nuser: Conversation info (untrusted metadata):\n```json\n{\n  \"message_id\": \"dd47\",\n  \"sender\": \"gateway-client\"\n}\n```\n\nSender (untrusted metadata):\n```json\n{\n  \"label\": \"Paul Weber (+4915100000000)\",\n  \"name\": \"Paul Weber\"\n}\n```\n\n[Fri 2026-02-20 08:50 GMT+1] der Gateway war disconnected, bitte prüfen\nassistant: [[reply_to_current]] Ursache: 429 quota exceeded.\n\n## Option A\nPrefers the file-based memory.\nuser: <relevant-memories>\nThe following memories may be relevant:\n- [sqlite/fact] Dashboard control.example\n</relevant-memories>\n\n[Fri 2026-02-20 09:04 GMT+1] Option A\nassistant: NO_REPLY\n",
    );
    put(
        &ws,
        "memory/2026-02-15.md",
        "# 2026-02-15 — Day One\n\n## Bootstrap\n- Came online\n- Sprache: Deutsch default\n- Wohnort: Berlin, seit neun Jahren\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    assert!(
        said.contains("memory/2026-02-20-gateway-fix.md: a saved conversation (telegram, 4 messages, 2 of them the user's): Event `2026-02-20 08:08 gateway fix`; left out: 2 OpenClaw's own prompts, 2 metadata blocks, 1 recalled memories, 1 silent replies, 1 system notices"),
        "{said}"
    );
    let mut nx = Nexus::open(&db).expect("open");
    let e = kip(
        &mut nx,
        r#"FIND(?e.attributes) WHERE { ?e {type: "Event", name: "2026-02-20 08:08 gateway fix"} }"#,
    );
    let a = &e[0];
    assert_eq!(
        a["content_summary"],
        json!(
            "assistant: Gamma Daily Note von gestern ist da.\n\nuser (08:50): der Gateway war disconnected, bitte prüfen\n\nassistant: Ursache: 429 quota exceeded.\n\n## Option A\nPrefers the file-based memory.\n\nuser (09:04): Option A"
        ),
        "{a}"
    );
    assert_eq!(a["start_time"], json!("2026-02-20T08:50:00+01:00"), "{a}");
    assert_eq!(a["end_time"], json!("2026-02-20T08:08:25Z"), "{a}");
    assert_eq!(a["participants"], json!(["$self", "Paul Weber"]), "{a}");
    assert_eq!(a["context"]["session_key"], json!("agent:main:main"), "{a}");
    drop(nx);
    // a week later, a cycle: the agent's "Prefers …" is no preference of
    // the user's, and the day note is left as it is, not archived
    let (ok, said) = somnus(&db, &["sleep", "--now", "2026-03-01T03:00:00Z"]);
    assert!(ok, "{said}");
    assert!(
        said.contains("Left 1 stale Event as it is") && said.contains("2026-02-15 Bootstrap"),
        "{said}"
    );
    let mut nx = Nexus::open(&db).expect("open");
    let prefs = kip(
        &mut nx,
        r#"FIND(COUNT(?p)) WHERE { ?p {type: "Preference"} }"#,
    );
    assert_eq!(prefs, json!(0), "{said}");
    let (_, shown) = somnus(&db, &["proposals", "show", "1"]);
    assert!(!shown.contains("Archive 2026-02-15 Bootstrap"), "{shown}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Shapes of other real workspaces (kept inline: their sources carry no
/// licence): a daily note that is a log of stamped entries, each an Event
/// at its own day and time; a profile whose lists sit under bold labels,
/// each a list on the user, its template blanks left out.
#[test]
fn stamped_entries_and_a_grouped_profile() {
    let dir = tmp("shapes");
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("ws");
    std::fs::write(
        ws.join("USER.md"),
        "# USER.md - About Your Human\n\n- **Name:** Nguyễn Thành Doanh\n- **Pronouns:** _(optional)_\n- **Timezone:** UTC+7 (Vietnam)\n\n## Contact\n\n**Telegram:**\n- Username: `Doanh31`\n\n## Context\n\n**Working Style:**\n- Prefers Vietnamese for communication\n- Dislikes broad changes without approval\n\n**Past Projects:**\n1. **web-ban-hang** (on-hold) - E-commerce website\n",
    )
    .expect("user");
    std::fs::write(
        ws.join("memory/2026-05-26.md"),
        "\n[Tue 2026-05-26 08:35 UTC] Doanh approved direction 2 for agent-system.\n\n[Tue 2026-05-26 09:17 UTC] Doanh noted there is already a PM Agent.\nDo not treat the draft as canonical.\n\n[Wed 2026-05-27 07:14 UTC] Doanh instructed: Làm Phase 4A.\n",
    )
    .expect("note");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    assert!(
        said.contains("left blank in the file, not imported as facts: Pronouns"),
        "{said}"
    );
    let mut nx = Nexus::open(&db).expect("open");
    let events = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes.start_time) WHERE { ?e {type: "Event"} } ORDER BY ?e.attributes.start_time ASC"#,
    );
    assert_eq!(
        events,
        json!([
            [
                "2026-05-26 08:35 Doanh approved direction 2 for agent-system",
                "2026-05-26T08:35:00Z"
            ],
            [
                "2026-05-26 09:17 Doanh noted there is already a PM Agent",
                "2026-05-26T09:17:00Z"
            ],
            [
                "2026-05-27 07:14 Doanh instructed: Làm Phase 4A",
                "2026-05-27T07:14:00Z"
            ]
        ])
    );
    let user = kip(
        &mut nx,
        r#"FIND(?p) WHERE { ?p {type: "Person", name: "Nguyễn Thành Doanh"} }"#,
    );
    let a = &user[0]["attributes"];
    assert_eq!(a["timezone"], json!("UTC+7 (Vietnam)"));
    assert_eq!(a["telegram_username"], json!("Doanh31"));
    assert_eq!(
        a["working_style"],
        json!([
            "Prefers Vietnamese for communication",
            "Dislikes broad changes without approval"
        ])
    );
    assert_eq!(
        a["past_projects"],
        json!(["**web-ban-hang** (on-hold) - E-commerce website"])
    );
    assert!(a.get("pronouns").is_none(), "{a}");
    assert!(a.get("web_ban_hang").is_none(), "{a}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `MEMORY.md` as real workspaces write it: blocks about the user under
/// the user's name or a word for the user, in any language, and blocks
/// that are a table, a paragraph or a code block. What is about the user
/// is kept on the user's Person; every other block on `$self`, a table or
/// a code block as its text (never an empty list); each is reported.
#[test]
fn memory_md_blocks_about_the_user_are_kept_on_the_user() {
    let dir = tmp("memory-blocks");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md\n\n- **Name:** Nguyễn Thành Doanh\n- **What to call them:** Anh Doanh\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## About Doanh\n- Works nights, sleeps until noon\n- Allergic to peanuts\n\n## Shop numbers\n\n| month | orders |\n|---|---|\n| 2026-01 | 41 |\n\nOrders doubled after the sale.\n\n## Lunch spots\n- Phở 24\n\n## Über den Nutzer\n- Spricht Deutsch\n\n## About Doanh\n- Has two cats\n\n## Empty\n\n## \n- under a heading with no title\n",
    );
    put(
        &ws,
        "memory/2026-05-26.md",
        "# 2026-05-26\n\nA quiet day.\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    for line in [
        "MEMORY.md:3: block `About Doanh` is about the user: kept on Person `Nguyễn Thành Doanh` as memory_about_doanh",
        "MEMORY.md:18: block `Über den Nutzer` is about the user",
        "MEMORY.md:7: block `Shop numbers`: a note of its own, Insight `Shop numbers`",
        "MEMORY.md:24: block `Empty` is empty or a template's blank: nothing to keep",
    ] {
        assert!(said.contains(line), "{line}\n{said}");
    }
    let mut nx = Nexus::open(&db).expect("open");
    let user = kip(
        &mut nx,
        r#"FIND(?p) WHERE { ?p {type: "Person", name: "Nguyễn Thành Doanh"} }"#,
    );
    let a = &user[0]["attributes"];
    assert_eq!(
        a["memory_about_doanh"],
        json!([
            "Works nights, sleeps until noon",
            "Allergic to peanuts",
            "Has two cats"
        ]),
        "{a}"
    );
    assert_eq!(
        a["memory_über_den_nutzer"],
        json!(["Spricht Deutsch"]),
        "{a}"
    );
    // where the user's facts came from: USER.md first, MEMORY.md beside
    let m = &user[0]["metadata"];
    assert_eq!(m["source"], json!("moltbot:USER.md:1"), "{m}");
    assert_eq!(m["also_from"], json!(["moltbot:MEMORY.md:3"]), "{m}");
    // every other block a note of its own, found by SEARCH, pinned
    let notes = kip(
        &mut nx,
        r#"FIND(?n.name, ?n.attributes.description, ?n.metadata.pinned) WHERE { ?n {type: "Insight"} FILTER(?n.attributes.note_file == "MEMORY.md") }"#,
    );
    assert_eq!(
        notes,
        json!([
            [
                "Shop numbers",
                "| month | orders |\n|---|---|\n| 2026-01 | 41 |\n\nOrders doubled after the sale.",
                true
            ],
            ["Lunch spots", "- Phở 24", true],
            ["MEMORY.md line 26", "- under a heading with no title", true]
        ]),
        "{notes}"
    );
    let found = kip(&mut nx, r#"SEARCH CONCEPT "orders doubled" LIMIT 3"#);
    assert_eq!(found[0]["name"], json!("Shop numbers"), "{found}");
    drop(nx);
    // a second import changes nothing
    let (ok, again) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok && again.contains("updated 0"), "{again}");
    // the cycle does not call the user a name it knows nothing about
    let (ok, slept) = somnus(&db, &["sleep", "--quiet", "--now", "2026-06-20T03:00:00Z"]);
    assert!(ok, "{slept}");
    assert!(
        slept.contains("1 Person is linked to nothing (no preference, relation or Event), known only by its attributes: Nguyễn Thành Doanh")
            && !slept.contains("nothing but a name"),
        "{slept}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `MEMORY.md` with no `USER.md` beside it, shaped as real workspaces
/// write one: the user named in a block about them, facts about the user
/// in a `###` block of a larger one, the agent's own `### About Me`, and a
/// template's blanks. The user becomes a Person from the `Name:` line;
/// what is about them is kept on it; what is about the agent stays on
/// `$self`; a blank is reported, never kept as a fact.
#[test]
fn memory_md_names_the_user_when_no_profile_does() {
    let dir = tmp("memory-user");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md — Long-Term Memory\n\n## Core Facts\n\n### About Me\n- I am Aria Blue, created January 2026\n\n### Preferences of Ev\n- Prefers concise, technical communication\n\n## About My Human\n- **Name:** Евгений (Evgeny) Нечаев, goes by Ev / @Evolv3\n- **Timezone:** America/Los_Angeles (PST)\n\n## Lessons Learned\n[Mistakes made, corrections received]\n\n```markdown\n## About My Human\n- a template in a code block\n```\n",
    );
    put(
        &ws,
        "memory/2026-02-23.md",
        "# 2026-02-23\n\nSet up the VPS.\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    for line in [
        "MEMORY.md:11: block `About My Human` names the user: Person `Евгений Нечаев`",
        "MEMORY.md:8: block `Core Facts › Preferences of Ev` is about the user: kept on Person `Евгений Нечаев` as memory_core_facts_preferences_of_ev",
        "MEMORY.md:5: block `Core Facts › About Me` is the agent's own: kept on $self as memory_core_facts_about_me",
        "MEMORY.md:15: block `Lessons Learned`: a note of its own, Insight `Lessons Learned`",
    ] {
        assert!(said.contains(line), "{line}\n{said}");
    }
    assert!(!said.contains("block `Core Facts` is empty"), "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    let user = kip(
        &mut nx,
        r#"FIND(?p) WHERE { ?p {type: "Person", name: "Евгений Нечаев"} }"#,
    );
    let a = &user[0]["attributes"];
    assert_eq!(a["relationship_to_self"], json!("user"), "{a}");
    assert_eq!(
        a["memory_about_my_human"],
        json!([
            "**Name:** Евгений (Evgeny) Нечаев, goes by Ev / @Evolv3",
            "**Timezone:** America/Los_Angeles (PST)"
        ]),
        "{a}"
    );
    assert_eq!(
        a["memory_core_facts_preferences_of_ev"],
        json!(["Prefers concise, technical communication"]),
        "{a}"
    );
    let notes = kip(
        &mut nx,
        r#"FIND(?n.name, ?n.attributes.description, ?n.attributes.note_section) WHERE { ?n {type: "Insight"} FILTER(?n.attributes.note_file == "MEMORY.md") }"#,
    );
    // the blank line and the code block: kept as the block's text, the
    // heading inside the code block read as one of its lines
    assert_eq!(
        notes,
        json!([[
            "Lessons Learned",
            "[Mistakes made, corrections received]\n\n```markdown\n## About My Human\n- a template in a code block\n```",
            null
        ]]),
        "{notes}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Japanese agent's MEMORY.md with no USER.md: it opens with its user's
/// profile, titled "about konuki" (`konukiについて`) with a name line in
/// Japanese (`**名前:** konuki (Akira)`), and keeps what happened in
/// blocks whose day is followed by what the day was about in full-width
/// parentheses. The user is a Person with the profile and its parts, and
/// the days are named without the parentheses.
#[test]
fn a_japanese_memory_md_names_its_user_by_a_profile_block() {
    let dir = tmp("memory-ja");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md - 長期記憶\n\n## konukiについて\n\n- **名前:** konuki (Akira)\n- **タイムゾーン:** JST (Asia/Tokyo)\n\n### コミュニケーション傾向\n- 構造化された説明を好む\n- 冗長さを嫌う\n\n## 学んだこと・決定事項\n\n### 2026-02-09（タスク選定戦略）\n- 二軸戦略を採用\n\n### 2026-02-09（タスク選定戦略）\n- 二軸戦略を採用\n\n## 重要な連絡先\n\n- **池内先生** — 理論面の助言者\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    for line in [
        "MEMORY.md:3: block `konukiについて` names the user: Person `konuki`",
        "block `konukiについて › コミュニケーション傾向` is about the user: kept on Person `konuki`",
        "what happened on 2026-02-09, Event `2026-02-09 タスク選定戦略`",
        // the same block written twice
        "MEMORY.md:17: block `学んだこと・決定事項 › 2026-02-09（タスク選定戦略）` repeats the block at line 14 word for word: kept once",
        // the people the user deals with
        "MEMORY.md:20: block `重要な連絡先` lists people: 1 Person (池内先生)",
    ] {
        assert!(said.contains(line), "{line}\n{said}");
    }
    let mut nx = Nexus::open(&db).expect("open");
    let user = kip(
        &mut nx,
        r#"FIND(?p) WHERE { ?p {type: "Person", name: "konuki"} }"#,
    );
    let a = &user[0]["attributes"];
    assert_eq!(a["relationship_to_self"], json!("user"), "{a}");
    let all = a.to_string();
    assert!(
        all.contains("構造化された説明を好む") && all.contains("Asia/Tokyo"),
        "{a}"
    );
    let days = kip(&mut nx, r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} }"#);
    assert_eq!(days, json!(1));
    // a block titled by a name alone may be the agent's own: no user
    let agent = dir.join("agent");
    put(
        &agent,
        "MEMORY.md",
        "# MEMORY.md\n\n## Karina\n- Nombre: Karina Schneider\n- Voz: cercana\n",
    );
    let (ok, said) = somnus(
        &dir.join("a.db"),
        &["import", "openclaw", agent.to_str().expect("utf-8")],
    );
    assert!(ok && !said.contains("names the user"), "{said}");
    let advisor = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person", name: "池内先生"} }"#,
    );
    assert_eq!(
        advisor[0]["description"],
        json!("理論面の助言者"),
        "{advisor}"
    );
    assert_eq!(advisor[0]["aliases"], json!(["池内"]), "{advisor}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// German `MEMORY.md` files as agents write them: the user's block named
/// `Name (User)`, the agent's own `Name (Ich)` (kept on `$self`, never
/// taken for the user), a family block whose people are set in bold with
/// another name and a Telegram id in parentheses and what is known of
/// each in the bullets under them; and a setup note whose `Kann: …`
/// lines are no people.
#[test]
fn a_german_memory_md_names_its_user_its_agent_and_its_family() {
    let dir = tmp("memory-de");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md - Langzeitgedächtnis\n\n## Jan Bernd Gudel (User)\n\n- **Rolle:** Produktmanager\n- **Sprache:** Deutsch\n\n## Klausi (Ich)\n\n- **Name:** Klausi\n- **Rolle:** KI-Entwickler auf Jan Bernds Server\n\n## Familie & Kommunikation\n- **Michael Estel (Mitch)** (Telegram 6882251060) – Der Chef, autorisierte Quelle\n  - Telefon: +49 152 0000000\n- **Mara** (Telegram 8665383554) – Tochter von Mitch, 10 Jahre\n  - Interessiert sich für Roblox\n\n### Sprachnachrichten-Regeln\n- **Mitch:** Nur Sprachnachrichten senden, wenn er eine schickt\n\n## Outlook Kontakte (verbunden 23.03.2026)\n- 145 Kontakte im Konto\n- Kann: Kontakte suchen, Geburtstage abfragen\n- Bekannte Kontakte: Familie Mandel, Ewalds\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    for line in [
        "MEMORY.md:3: block `Jan Bernd Gudel (User)` names the user: Person `Jan Bernd Gudel`",
        "MEMORY.md:8: block `Klausi (Ich)` is the agent's own: kept on $self as memory_klausi_ich",
        "MEMORY.md:13: block `Familie & Kommunikation` lists people: 2 Persons (Michael Estel, Mara)",
    ] {
        assert!(said.contains(line), "{line}\n{said}");
    }
    assert!(
        !said.contains("Outlook Kontakte (verbunden 23.03.2026)` lists people"),
        "{said}"
    );
    let mut nx = Nexus::open(&db).expect("open");
    let people = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} } ORDER BY ?p.name ASC"#,
    );
    assert_eq!(
        people,
        json!([
            "$self",
            "$system",
            "Jan Bernd Gudel",
            "Mara",
            "Michael Estel"
        ]),
        "{people}"
    );
    let chef = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person", name: "Michael Estel"} }"#,
    );
    assert_eq!(chef[0]["aliases"], json!(["Mitch"]), "{chef}");
    assert_eq!(
        chef[0]["description"],
        json!("Der Chef, autorisierte Quelle (Telegram 6882251060)"),
        "{chef}"
    );
    assert_eq!(
        chef[0]["details"],
        json!(["Telefon: +49 152 0000000"]),
        "{chef}"
    );
    let me = kip(
        &mut nx,
        r#"FIND(?p.attributes.memory_klausi_ich) WHERE { ?p {type: "Person", name: "$self"} }"#,
    );
    assert!(me.to_string().contains("KI-Entwickler"), "{me}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A consultant's workspace with no USER.md and no profile in MEMORY.md
/// (OpenClaw's `mission-control` layout): the user is named by a note's
/// profile block (`### Identity & Communication`, `- Name: Paul`, `-
/// Timezone: …`), never by the agent's own (`- Name: Turtok`, IDENTITY.md's
/// name), nor by a client's card in a folder of cards. Before, the user
/// was no Person, and the cycle proposed a domain
/// "Paul" for the 17 notes that name him. A saved conversation in which
/// the user tells the agent of their plans, in words no cue reads, is left
/// as it is, not archived as "nothing durable".
#[test]
fn a_profile_note_names_the_user_when_no_user_file_does() {
    let dir = tmp("profile-note");
    let ws = dir.join("ws");
    put(
        &ws,
        "IDENTITY.md",
        "# IDENTITY.md\n\n- **Name:** Turtok\n- **Emoji:** 🐢\n",
    );
    put(
        &ws,
        "memory/AGENT-NOTES.md",
        "# Agent\n\n## Wer ich bin\n- Name: Turtok\n- Sprache: Deutsch\n\n## Setup\n- Name: Turtok\n- Timezone: Europe/Berlin\n",
    );
    // a client's card, one of several, is no user's profile
    put(
        &ws,
        "memory/clients/hans.md",
        "# Hans\n\n## Kontakt\n- Name: Hans Müller\n- Timezone: Europe/Vienna\n- Sprache: Deutsch\n",
    );
    put(
        &ws,
        "memory/MEMORY-BASELINE.md",
        "# MEMORY Baseline\n\n## Keep (persistent)\n\n### Identity & Communication\n- Name: Paul\n- Timezone: Europe/Berlin\n- Sprache: Deutsch als Standard\n",
    );
    for (day, text) in [
        (
            "2026-02-15",
            "## Bootstrap\n- Came online, met Paul\n- Paul lebt in Berlin\n",
        ),
        (
            "2026-02-16",
            "## Termine\n- Paul hat morgen drei Kundentermine\n",
        ),
        ("2026-02-17", "## Abend\n- Abend-Update an Paul gesendet\n"),
    ] {
        put(
            &ws,
            &format!("memory/{day}.md"),
            &format!("# {day}\n\n{text}"),
        );
    }
    put(
        &ws,
        "memory/2026-02-19-content-strategy.md",
        "# Session: 2026-02-19 15:09:00 UTC\n\n- **Session Key**: agent:main:main\n- **Source**: telegram\n\n## Conversation Summary\n\nuser: Ja das wird ein Mix. Ich werd Talking Heads machen, gleichzeitig will ich aber auch Selfie-Videos machen\nassistant: Gut. Frage 1 von 10: Was ist dein Vorteil?\nuser: keep going\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    assert!(
        said.contains("memory/MEMORY-BASELINE.md:5: block `Keep (persistent) › Identity & Communication` names the user: Person `Paul`"),
        "{said}"
    );
    let mut nx = Nexus::open(&db).expect("open");
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.relationship_to_self) WHERE { ?p {type: "Person"} } ORDER BY ?p.name ASC"#,
    );
    assert_eq!(
        people,
        json!([["$self", null], ["$system", null], ["Paul", "user"]]),
        "{people}"
    );
    drop(nx);
    let (ok, said) = somnus(&db, &["sleep", "--now", "2026-03-01T03:00:00Z"]);
    assert!(ok, "{said}");
    assert!(
        said.contains("Left 1 conversation as it is: the user told the agent of themselves")
            && said.contains("2026-02-19 15:09 content strategy"),
        "{said}"
    );
    let (_, shown) = somnus(&db, &["proposals", "show", "1"]);
    assert!(!shown.contains("New domain \"Paul\""), "{shown}");
    assert!(!shown.contains("Archive 2026-02-19 15:09"), "{shown}");
    assert!(
        shown.contains("2026-02-16 Termine mentions Paul"),
        "{shown}"
    );
    // the client's card alone names nobody
    let ws2 = dir.join("ws2");
    put(
        &ws2,
        "memory/clients/hans.md",
        "# Hans\n\n## Kontakt\n- Name: Hans Müller\n- Timezone: Europe/Vienna\n",
    );
    let db2 = dir.join("m2.db");
    let (ok, said) = somnus(&db2, &["import", "openclaw", ws2.to_str().expect("utf-8")]);
    assert!(ok && !said.contains("names the user"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Spanish agent's MEMORY.md opens with who its user is, in prose,
/// with no `Name:` line (`## Quién es Sandra`, `Sandra Caicedo — agente
/// de … Tú eres **Alfa**, su asistente autónomo`): the user is a Person,
/// by the fuller name the block gives, and the block is kept on her. A
/// block that says who the agent is (IDENTITY.md names it) never is.
#[test]
fn a_block_that_says_who_the_user_is_names_the_user() {
    let dir = tmp("who-is");
    for (agent_first, expect) in [(false, Some("Sandra Caicedo")), (true, None)] {
        let ws = dir.join(format!("ws{agent_first}"));
        let who = if agent_first { "Alfa" } else { "Sandra" };
        put(&ws, "IDENTITY.md", "# IDENTITY.md\n\n- **Name:** Alfa\n");
        put(
            &ws,
            "MEMORY.md",
            &format!(
                "# MEMORY.md — Memoria permanente\n\n## Quién es {who}\n{who} Caicedo — agente de **Grupo Galilea** en Madrid. Tú eres **Alfa**, su asistente autónomo.\n\n## Club Contable\n- Web: clubcontable.com\n"
            ),
        );
        let db = dir.join(format!("m{agent_first}.db"));
        let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
        assert!(ok, "{said}");
        let mut nx = Nexus::open(&db).expect("open");
        let user = kip(
            &mut nx,
            r#"FIND(?p.name, ?p.attributes) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
        );
        match expect {
            Some(name) => {
                assert_eq!(user[0][0], json!(name), "{said}");
                assert!(
                    user[0][1]["memory_quién_es_sandra"]
                        .to_string()
                        .contains("Grupo Galilea"),
                    "{user}"
                );
            }
            None => assert_eq!(user, json!([]), "{said}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile `MEMORY.md`: 1,000 blocks of one title, a title of 50,000
/// characters, a code block never closed. Every block is a note of its
/// own (`Notes`, `Notes (2)`, …), the long title is cut to a name, the
/// unclosed code block keeps the rest of the file as its lines, and
/// importing again changes nothing.
#[test]
fn a_hostile_memory_md_imports_whole() {
    let dir = tmp("memory-hostile");
    let ws = dir.join("ws");
    let mut text = String::from("# MEMORY.md\n");
    for i in 0..1000 {
        text.push_str(&format!("## Notes\n- item {i}\n"));
    }
    text.push_str(&format!(
        "## {}\n- under a long title\n",
        "T".repeat(50_000)
    ));
    text.push_str("## Fence\n```\n## not a block\n- inside\n");
    put(&ws, "MEMORY.md", &text);
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    let n = kip(
        &mut nx,
        r#"FIND(COUNT(?n)) WHERE { ?n {type: "Insight"} FILTER(?n.attributes.note_file == "MEMORY.md") }"#,
    );
    assert_eq!(n, json!(1002));
    let last = kip(
        &mut nx,
        r#"FIND(?n.attributes.description) WHERE { ?n {type: "Insight", name: "Notes (1000)"} }"#,
    );
    assert_eq!(last, json!(["- item 999"]));
    let fence = kip(
        &mut nx,
        r#"FIND(?n.attributes.description) WHERE { ?n {type: "Insight", name: "Fence"} }"#,
    );
    assert_eq!(fence, json!(["```\n## not a block\n- inside"]));
    let long = kip(
        &mut nx,
        r#"FIND(?n.name) WHERE { ?n {type: "Insight"} FILTER(?n.attributes.description == "- under a long title") }"#,
    );
    let name = long[0].as_str().expect("a name");
    assert!(
        name.starts_with("TTTT") && name.chars().count() <= 81,
        "{name}"
    );
    drop(nx);
    let (ok, again) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(
        ok && again.contains("created 0 elements, updated 0"),
        "{again}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `MEMORY.md` as agents keep a diary in it: `### 2026-02-13` blocks
/// under `## 📅 重要事件`, a `## 2026-02-08 03:19 — First call` block,
/// titles opened by emoji. A dated block is an Event on its day (at its
/// time when the title gives one), named as a daily note's Events are;
/// an emoji does not open a note's name. The workspace's other top-level
/// files are named in two lines, its notes with how to import one.
#[test]
fn memory_md_dated_blocks_are_events_on_their_day() {
    let dir = tmp("memory-dated");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## 💕 我们的关系\n- 一起做项目\n\n## 📅 重要事件\n\n### 2026-02-13\n- WhatsApp 断连，自动恢复\n\n### 2026-02-12\n- 探索社区\n\n## 2026-02-08 03:19 — First call\n- Set up the bot\n\n### 2026-02-30\n- not a day\n",
    );
    put(
        &ws,
        "memory/2026-02-13.md",
        "# 2026-02-13\n\n## 09:00 早间\n- 检查\n",
    );
    put(&ws, "DECISIONS.md", "# Decisions\n- use SQLite\n");
    put(&ws, "PATTERNS.md", "# Patterns\n");
    put(&ws, "avatar.jpg", "not an image");
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    for line in [
        "MEMORY.md:3: block `💕 我们的关系`: a note of its own, Insight `我们的关系`",
        "MEMORY.md:8: block `📅 重要事件 › 2026-02-13`: what happened on 2026-02-13, Event `2026-02-13 重要事件`",
        "MEMORY.md:11: block `📅 重要事件 › 2026-02-12`: what happened on 2026-02-12, Event `2026-02-12 重要事件`",
        "MEMORY.md:14: block `2026-02-08 03:19 — First call`: what happened on 2026-02-08, Event `2026-02-08 03:19 First call`",
        "DECISIONS.md, PATTERNS.md (3 lines): 2 notes at the workspace's top level, not imported",
        "`--extra-path DECISIONS.md` imports one",
        "avatar.jpg: 1 file at the workspace's top level, not memory files, skipped",
    ] {
        assert!(said.contains(line), "{line}\n{said}");
    }
    let mut nx = Nexus::open(&db).expect("open");
    let events = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes.start_time, ?e.attributes.time_precision, ?e.attributes.note_section, ?e.metadata.pinned) WHERE { ?e {type: "Event"} FILTER(?e.attributes.note_file == "MEMORY.md") } ORDER BY ?e.attributes.start_time ASC"#,
    );
    assert_eq!(
        events,
        json!([
            [
                "2026-02-08 03:19 First call",
                "2026-02-08T03:19:00Z",
                null,
                null,
                true
            ],
            [
                "2026-02-12 重要事件",
                "2026-02-12T00:00:00Z",
                "day",
                "📅 重要事件",
                true
            ],
            [
                "2026-02-13 重要事件",
                "2026-02-13T00:00:00Z",
                "day",
                "📅 重要事件",
                true
            ]
        ]),
        "{events}"
    );
    // a `### ` block that is no day is part of the block it is in
    let first = kip(
        &mut nx,
        r#"FIND(?e.attributes.content_summary) WHERE { ?e {type: "Event", name: "2026-02-08 03:19 First call"} }"#,
    );
    assert_eq!(
        first,
        json!(["- Set up the bot\n\n### 2026-02-30\n- not a day"]),
        "{first}"
    );
    // the day's own note is an Event of its own beside it
    let day = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} FILTER(STARTS_WITH(?e.attributes.start_time, "2026-02-13")) }"#,
    );
    assert_eq!(day, json!(2));
    drop(nx);
    // --extra-path imports a top-level note, then no longer named
    let (ok, again) = somnus(
        &db,
        &[
            "import",
            "openclaw",
            ws.to_str().expect("utf-8"),
            "--extra-path",
            "DECISIONS.md",
        ],
    );
    assert!(ok, "{again}");
    assert!(
        again.contains("PATTERNS.md (1 line): 1 note at the workspace's top level, not imported"),
        "{again}"
    );
    assert!(!again.contains("DECISIONS.md,"), "{again}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Portuguese workspace written the way real ones are: a profile kept
/// in tables (`| **Name** | Cássia |`, a project table), a template's
/// hint and an italic footer; a MEMORY.md block with text of its own and
/// `### ` parts; a daily note titled by its file name. The profile's
/// pairs are attributes and its table rows items, the block is one note
/// with its parts, and the note's Event is named by what it is.
#[test]
fn a_profile_in_tables_and_a_memory_block_with_its_parts() {
    let dir = tmp("tables");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n_This is who you're helping. Know them well._\n\n## 👤 Basic Info\n\n| Field | Value |\n|-------|-------|\n| **Name** | Cássia Prado |\n| **Pronouns** | — |\n| **Timezone** | America/Belem (GMT-3) |\n\n### Communication Style\n| Preference | Setting |\n|---|---|\n| **Style** | Exact, concise |\n\n## 📋 Active Work\n| Project | Status | Notes |\n|---|---|---|\n| **Rede do escritório** | ⚠️ Pending | VLANs por andar |\n\n_Last updated: 2026-03-01_\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Infraestrutura de Rede (Roteador 40F)\n\n**Hostname:** roteador-sala\n\n### Topologia Física:\n| Porta | Função |\n|---|---|\n| lan2 | WAN |\n\n### Problema Pendente:\n- hard-switch agrupa lan1+lan2\n\n## Core Facts\n\n### About Me\n- Sou o assistente\n",
    );
    put(
        &ws,
        "memory/2026-03-04.md",
        "# memory/2026-03-04.md - Daily Log\n\n_Dia 4: rede_\n\n## Contexto\n- Sessão sobre a rede\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    assert!(!said.contains("no `Name:` line"), "{said}");
    assert!(
        said.contains("block `Infraestrutura de Rede (Roteador 40F)`: a note of its own"),
        "{said}"
    );
    assert!(!said.contains("Insight `Topologia Física"), "{said}");
    assert!(
        said.contains("block `Core Facts › About Me` is the agent's own"),
        "{said}"
    );
    let mut nx = Nexus::open(&db).expect("open");
    let user = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person", name: "Cássia Prado"} }"#,
    );
    let a = &user[0];
    assert_eq!(a["timezone"], json!("America/Belem (GMT-3)"), "{a}");
    assert_eq!(a["style"], json!("Exact, concise"), "{a}");
    assert_eq!(a["last_updated"], json!("2026-03-01"), "{a}");
    assert_eq!(
        a["active_work"],
        json!(["Rede do escritório (Status: ⚠️ Pending; Notes: VLANs por andar)"]),
        "{a}"
    );
    assert!(a.get("pronouns").is_none(), "{a}");
    assert!(a.get("user_md_about_your_human").is_none(), "{a}");
    let note = kip(
        &mut nx,
        r#"FIND(?n.attributes.description) WHERE { ?n {type: "Insight", name: "Infraestrutura de Rede (Roteador 40F)"} }"#,
    );
    let text = note[0].as_str().unwrap_or_default();
    assert!(
        text.contains("**Hostname:** roteador-sala")
            && text.contains("### Topologia Física:\n| Porta | Função |")
            && text.contains("- hard-switch agrupa lan1+lan2"),
        "{text}"
    );
    let events = kip(
        &mut nx,
        r#"FIND(?e.name) WHERE { ?e {type: "Event"} } ORDER BY ?e.name ASC"#,
    );
    assert_eq!(
        events,
        json!(["2026-03-04 Contexto", "2026-03-04 Daily Log"]),
        "{events}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// OpenClaw's memory promotion as real MEMORY.md files hold it: each
/// promoted line (after its `openclaw-memory-promotion` marker, ending in
/// its score) is an Insight of its own in its own words, with the daily
/// note and lines it came from, its day and score; the markers and scores
/// are no text of a note; importing again changes nothing.
#[test]
fn lines_openclaw_promoted_into_memory_md_are_memories_of_their_own() {
    let dir = tmp("promoted");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# Long-Term Memory\n\n## Rules\n- 先查再答\n\n## Promoted From Short-Term Memory (2026-05-20)\n\n<!-- openclaw-memory-promotion:memory:memory/2026-05-14.md:6:6 -->\n- 为飞书多维表格\"选品\"视图中已勾选商品生成电商套图，上传回\"商品主图\"字段。 [score=0.868 recalls=0 avg=0.620 source=memory/2026-05-14.md:6-6]\n<!-- openclaw-memory-promotion:memory:memory/2026-05-14.md:9:10 -->\n- Oracle 串行排队，不并发 [score=0.812 recalls=3 avg=0.620 source=memory/2026-05-14.md:9-10]\n",
    );
    put(
        &ws,
        "memory/2026-05-14.md",
        "# 2026-05-14\n\n## 09:00 选品\n- 为飞书多维表格生成套图\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    assert!(
        said.contains("MEMORY.md:6: block `Promoted From Short-Term Memory (2026-05-20)`: 2 lines OpenClaw promoted from daily notes, each an Insight of its own"),
        "{said}"
    );
    assert!(!said.contains("is empty or a template's blank"), "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    let got = kip(
        &mut nx,
        r#"FIND(?n.name, ?n.attributes.description, ?n.attributes.promoted_from, ?n.attributes.promoted_on, ?n.attributes.promotion_score, ?n.attributes.promotion_recalls, ?n.metadata.source) WHERE { ?n {type: "Insight"} FILTER(?n.attributes.insight_class == "promoted") } ORDER BY ?n.attributes.promotion_score DESC"#,
    );
    assert_eq!(
        got,
        json!([
            [
                "为飞书多维表格\"选品\"视图中已勾选商品生成电商套图，上传回\"商品主图\"字段。",
                "为飞书多维表格\"选品\"视图中已勾选商品生成电商套图，上传回\"商品主图\"字段。",
                "memory/2026-05-14.md:6-6",
                "2026-05-20",
                0.868,
                0,
                "moltbot:MEMORY.md:9"
            ],
            [
                "Oracle 串行排队，不并发",
                "Oracle 串行排队，不并发",
                "memory/2026-05-14.md:9-10",
                "2026-05-20",
                0.812,
                3,
                "moltbot:MEMORY.md:11"
            ]
        ]),
        "{got}"
    );
    // each is derived from the daily note's Event it came from
    let from = kip(
        &mut nx,
        r#"FIND(?n.name, ?e.name) WHERE { ?n {type: "Insight"} (?n, "derived_from", ?e) } ORDER BY ?n.attributes.promotion_score DESC"#,
    );
    assert_eq!(
        from,
        json!([
            [
                "为飞书多维表格\"选品\"视图中已勾选商品生成电商套图，上传回\"商品主图\"字段。",
                "Oracle 串行排队，不并发"
            ],
            ["2026-05-14 09:00 选品", "2026-05-14 09:00 选品"]
        ]),
        "{from}"
    );
    // no note holds the markers or the scores
    let all = all_text(&db);
    let notes = kip(
        &mut nx,
        r#"FIND(?n.attributes.description) WHERE { ?n {type: "Insight"} FILTER(?n.attributes.insight_class == "note") }"#,
    );
    assert!(!notes.to_string().contains("score="), "{notes}");
    assert!(all.contains("先查再答"));
    drop(nx);
    let (ok, again) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{again}");
    assert!(again.contains("created 0 elements"), "{again}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `text` at `dir/rel`, making its folders.
fn put(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("folders");
    std::fs::write(p, text).expect("write");
}

/// A workspace laid out as OpenClaw lays one out
/// (`~/.openclaw/workspace` beside `~/.openclaw/openclaw.json`), with a
/// knowledge library the configuration adds to its memory search
/// (`memorySearch.extraPaths`, JSON5 with comments, unquoted keys and
/// trailing commas), as real workspaces keep one: the library is
/// imported; the folders it does not list are named with their notes,
/// never passed over without a word; `--extra-path` adds one; a path
/// outside the workspace, or the memory itself, is refused and said so;
/// importing again changes nothing; a configuration that cannot be read
/// is said so, and the rest imports.
#[test]
fn a_workspaces_extra_memory_paths_are_imported_and_other_folders_named() {
    let home = tmp("extra-paths");
    let ws = home.join("workspace");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Core Facts\n- Lives in Chicago\n",
    );
    put(
        &ws,
        "memory/2026-01-30.md",
        "# 2026-01-30\n\n## 09:00 Setup\n- Installed the voice stack\n",
    );
    put(
        &ws,
        "knowledge/300-personal/matt-profile.md",
        "# Matt\n\n- Trades commodities for a living\n- Prefers Fahrenheit\n",
    );
    put(
        &ws,
        "knowledge/README.md",
        "# Knowledge Library\n\nDewey-style shelves.\n",
    );
    put(
        &ws,
        "skills/weather/SKILL.md",
        "# Weather skill\n\nAsk the forecast API.\n",
    );
    put(&ws, "skills/node_modules/dep/README.md", "# a dependency\n");
    put(&ws, "data/vectors.bin", "\u{0}\u{1}");
    put(&home, "outside/secret-notes.md", "# Not the workspace's\n");
    put(
        &home,
        "openclaw.json",
        r#"// OpenClaw's configuration (JSON5)
{
  agents: {
    defaults: {
      workspace: "~/.openclaw/workspace",
      memorySearch: { extraPaths: ["knowledge", "../outside", "memory",], },
    },
  },
}
"#,
    );
    let db = home.join("m.db");
    let ws_arg = ws.to_string_lossy().to_string();
    let (ok, out) = somnus(&db, &["import", "openclaw", &ws_arg]);
    assert!(ok, "{out}");
    let text = all_text(&db);
    for line in [
        "Trades commodities for a living",
        "Prefers Fahrenheit",
        "Dewey-style shelves.",
        "Installed the voice stack",
        "Lives in Chicago",
    ] {
        assert!(text.contains(line), "{line} missing:\n{out}");
    }
    assert!(!text.contains("Ask the forecast API"), "{out}");
    assert!(!text.contains("Not the workspace's"), "{out}");
    // the library's notes name where they came from, under the workspace
    let mut nx = Nexus::open(&db).expect("open");
    let sources = kip(
        &mut nx,
        r#"FIND(?n.metadata.source) WHERE { ?n {type: "Insight"} }"#,
    );
    let sources = sources.to_string();
    assert!(
        sources.contains("knowledge/300-personal/matt-profile.md"),
        "{sources}"
    );
    drop(nx);
    assert!(
        out.contains("skills/: 1 note (3 lines) not imported")
            && out.contains("`--extra-path skills` imports them"),
        "{out}"
    );
    assert!(
        out.contains("folders without notes, skipped: data/"),
        "{out}"
    );
    assert!(
        out.contains("`../outside`: outside the workspace, not imported"),
        "{out}"
    );
    assert!(
        out.contains("`memory`: the workspace's memory itself"),
        "{out}"
    );
    assert!(!out.contains("knowledge/:"), "read, so not named: {out}");
    // again: nothing changes
    let before = all_text(&db);
    let (ok, again) = somnus(&db, &["import", "openclaw", &ws_arg]);
    assert!(ok, "{again}");
    assert!(again.contains("created 0 elements"), "{again}");
    assert_eq!(all_text(&db), before);
    // a folder given by hand is imported too, and no longer named
    let (ok, more) = somnus(
        &db,
        &["import", "openclaw", &ws_arg, "--extra-path", "skills"],
    );
    assert!(ok, "{more}");
    assert!(all_text(&db).contains("Ask the forecast API"), "{more}");
    assert!(!all_text(&db).contains("a dependency"), "{more}");
    assert!(
        more.contains(
            "skills/node_modules/: a project's dependencies or build output, not notes: skipped"
        ),
        "{more}"
    );
    assert!(!more.contains("skills/: 1 note"), "{more}");
    // a link inside the workspace that leads out of it is refused, as a
    // path outside is
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(home.join("outside"), ws.join("linked")).expect("link");
        let (ok, linked) = somnus(
            &db,
            &["import", "openclaw", &ws_arg, "--extra-path", "linked"],
        );
        assert!(ok, "{linked}");
        assert!(
            linked.contains("--extra-path `linked`: outside the workspace, not imported"),
            "{linked}"
        );
        assert!(!all_text(&db).contains("Not the workspace's"), "{linked}");
        std::fs::remove_file(ws.join("linked")).expect("unlink");
    }
    // a configuration past its size limit is not read, and said so
    let huge = format!("{{ agents: {{}}, pad: \"{}\" }}", "x".repeat(3 << 20));
    put(&home, "openclaw.json", &huge);
    let (ok, big) = somnus(&home.join("m3.db"), &["import", "openclaw", &ws_arg]);
    assert!(ok, "{big}");
    assert!(
        big.contains("../openclaw.json: larger than 2 MiB, not read"),
        "{big}"
    );
    // a configuration that cannot be read: said so, the rest imports
    put(&home, "openclaw.json", "{ agents: { defaults: ");
    let db2 = home.join("m2.db");
    let (ok, out2) = somnus(&db2, &["import", "openclaw", &ws_arg]);
    assert!(ok, "{out2}");
    assert!(
        out2.contains("../openclaw.json: not read (")
            && out2.contains("give its memorySearch.extraPaths with --extra-path"),
        "{out2}"
    );
    assert!(
        all_text(&db2).contains("Installed the voice stack"),
        "{out2}"
    );
    assert!(
        out2.contains("knowledge/: 2 notes (7 lines) not imported"),
        "{out2}"
    );
    // an Engram store takes no extra path
    let (ok, e) = somnus(&db2, &["import", "engram", &ws_arg, "--extra-path", "x"]);
    assert!(
        !ok && e.contains("--extra-path is for an OpenClaw workspace"),
        "{e}"
    );
}

/// The console's import prompt takes extra paths as the command line does.
#[test]
fn the_console_import_prompt_takes_extra_paths() {
    use somnus::tui::component::ImportJob;
    let j =
        ImportJob::parse(r#"openclaw /w --extra-path knowledge --extra-path "my notes" --dry-run"#)
            .expect("parse");
    assert_eq!(j.dir, PathBuf::from("/w"));
    assert_eq!(
        j.extra,
        vec![PathBuf::from("knowledge"), PathBuf::from("my notes")]
    );
    assert!(j.dry_run);
    let e = ImportJob::parse("openclaw /w --extra-path").expect_err("no path");
    assert!(e.contains("--extra-path needs a folder or file"), "{e}");
}
