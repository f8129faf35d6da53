//! Who the user is, in the shapes real `MEMORY.md` files in Chinese,
//! Japanese, Korean and Portuguese give it: a profile kept as a table, a
//! block titled with the user's name and nothing else, the people a
//! table lists; and a cycle that links an imported diary's Events to the
//! people they name, however long ago they happened; and the times a
//! daily note's headings give as people write them.

mod common;

use common::tmp;
use serde_json::{Value, json};
use somnus::Nexus;
use std::path::Path;

fn somnus(db: &Path, args: &[&str]) -> (bool, String) {
    common::run(db, args)
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let r = nx.kip(cmd).to_json();
    assert!(r.get("error").is_none(), "{cmd}: {r}");
    r["result"].clone()
}

fn put(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("folders");
    std::fs::write(p, text).expect("write");
}

/// Imports the workspace `ws` into a memory in a folder `name` of `dir`
/// of its own, for several workspaces under one `dir`.
fn imported_in(dir: &Path, name: &str, ws: &Path) -> (Nexus, String) {
    let at = dir.join(name);
    std::fs::create_dir_all(&at).expect("folder");
    imported(&at, ws)
}

/// Imports the workspace `ws` into a memory in `dir`, and opens it, with
/// all the import said.
fn imported(dir: &Path, ws: &Path) -> (Nexus, String) {
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    (Nexus::open(&db).expect("open"), said)
}

/// Imports a workspace of one `MEMORY.md` (and an `IDENTITY.md`, when
/// given) and returns the user's name and attributes (`null` for none),
/// with all the import said.
fn user_of(dir: &Path, case: &str, memory: &str, identity: Option<&str>) -> (Value, String) {
    let ws = dir.join(case);
    put(&ws, "MEMORY.md", memory);
    if let Some(id) = identity {
        put(&ws, "IDENTITY.md", id);
    }
    let db = dir.join(format!("{case}.db"));
    let (ok, said) = somnus(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    let mut nx = Nexus::open(&db).expect("open");
    let user = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    (user.get(0).cloned().unwrap_or(Value::Null), said)
}

/// A profile kept as a table of keys and values names the user; the
/// agent's own table beside it (`我的身份`, "my identity") is the agent's;
/// a Korean profile (`유저 정보`, "user info", `이름:`) names the user too.
#[test]
fn a_profile_kept_as_a_table_names_the_user() {
    let dir = tmp("profile-table");
    let (user, said) = user_of(
        &dir,
        "zh",
        "# MEMORY.md - 長期記憶\n\n## 👤 用戶資料\n\n| 項目 | 內容 |\n|------|------|\n| **名稱** | 林小明 |\n| **時區** | Asia/Taipei (GMT+8) |\n\n## ✨ 我的身份\n\n| 項目 | 內容 |\n|---|---|\n| **名稱** | 星語 |\n| **角色** | AI 助手 |\n\n## 排程任務\n\n| 任務 | 時間 |\n|---|---|\n| 每日備份 | 00:00 |\n",
        None,
    );
    assert_eq!(user[0], json!("林小明"), "{said}");
    assert!(
        user[1]["memory_用戶資料"]
            .to_string()
            .contains("Asia/Taipei"),
        "{user}"
    );
    assert!(
        said.contains("block `✨ 我的身份` is the agent's own"),
        "{said}"
    );
    let (user, said) = user_of(
        &dir,
        "ko",
        "# MEMORY.md - 장기 기억\n\n## 👤 유저 정보\n- **이름:** Minho Park (Min)\n- **타임존:** Asia/Seoul\n\n## 🔧 환경 설정\n- **채널:** Telegram\n",
        None,
    );
    assert_eq!(user[0], json!("Minho Park"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A block whose title is a name and nothing else names the user by what
/// it says: a line only a profile has (`時區`), or an honorific the agent
/// speaks of someone else with and the name said again elsewhere. The
/// same shapes of the agent's own name, of a product, or of a client the
/// file lists, name nobody.
#[test]
fn a_block_titled_with_a_name_names_the_user_by_what_it_says() {
    let dir = tmp("titled-user");
    let (user, said) = user_of(
        &dir,
        "keyed",
        "# MEMORY.md - 長期記憶\n\n## 阿明\n\n- 時區: Asia/Taipei (UTC+8)\n- 工作：電商平台開發\n\n## 技術偏好\n- Docker Compose 部署\n",
        None,
    );
    assert_eq!(user[0], json!("阿明"), "{said}");
    let (user, said) = user_of(
        &dir,
        "polite",
        "# MEMORY.md - 長期記憶\n\n## 佐藤さん\n- ECコンサルタント、マネージャー職\n- プログラミング知識ゼロ → 画面操作レベルで説明\n\n## 運用\n- 佐藤さんのメッセージに👀で受信確認\n",
        None,
    );
    assert_eq!(user[0], json!("佐藤"), "{said}");
    assert!(
        user[1]["memory_佐藤さん"]
            .to_string()
            .contains("マネージャー"),
        "{user}"
    );
    // the agent's own name, under a title of nothing else
    let (user, said) = user_of(
        &dir,
        "agent",
        "# MEMORY.md\n\n## 星語\n- 時區: Asia/Taipei\n- 我是助手\n",
        Some("# IDENTITY.md\n\n- **Name:** 星語\n"),
    );
    assert_eq!(user, Value::Null, "{said}");
    // a product named in other blocks, and a client the file lists
    let (user, said) = user_of(
        &dir,
        "product",
        "# MEMORY.md\n\n## Aurora\n- Dashboard for Paula, sells frozen food\n\n## Pessoas\n- **Paula** — Cliente, Aurora\n\n## Timeline\n- Aurora deployed\n- Aurora sync fixed\n",
        None,
    );
    assert_eq!(user, Value::Null, "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A block titled with a name that speaks of the people the file lists as
/// family is the user's (`### Bilal`: "vive em Sintra com Daniela",
/// `| Daniela Alves | Companheira |`); the people table gives a Person
/// per row, with what the other cells say; a cycle months after the
/// Events happened proposes linking the Events that name the user to the
/// user, since they were written into the memory within its window.
#[test]
fn family_in_a_people_table_says_whose_block_it_is_and_the_cycle_links_the_diary() {
    let dir = tmp("family-table");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md - Memória de Longo Prazo\n\n## ⚠️ NOTA\n**Estamos em 2026.**\n\n## 🎯 Contexto Atual\n\n### Rafael\n- Vive em Sintra com Daniela\n- Filho de 15 anos, quartas e fins de semana alternados\n- **NUNCA usar emoji 🤖!** Rafael odeia.\n\n### Projectos\n| Projecto | Cliente | Notas |\n|---|---|---|\n| **BooknGo** | Interno | Rafael pediu ir para produção |\n\n## 📅 Timeline\n\n### 2026-02-10\n- Rafael pediu: BooknGo produção, IVA finalizar\n\n### 2026-02-08\n- Pesquisa gerador MXR2300 para Rafael\n\n## 🔗 Pessoas Importantes\n\n| Pessoa | Relação | Notas |\n|--------|---------|-------|\n| Tomás | Filho | 15 anos |\n| Daniela Alves | Companheira | Terapeuta |\n| Paula | Cliente | - |\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let db = dir.join("m.db");
    let user = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(user, json!(["Rafael"]), "{said}");
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.description) WHERE { ?p {type: "Person"} FILTER(?p.attributes.note_section == "🔗 Pessoas Importantes") } ORDER BY ?p.name ASC"#,
    );
    assert_eq!(
        people,
        json!([
            ["Daniela Alves", "Companheira — Terapeuta"],
            ["Paula", "Cliente"],
            ["Tomás", "Filho — 15 anos"]
        ]),
        "{said}"
    );
    drop(nx);
    // months later: the diary's days are far outside the cycle's window
    let (ok, said) = somnus(&db, &["sleep", "--quiet", "--now", "2026-06-01T09:00:00Z"]);
    assert!(ok, "{said}");
    let (ok, shown) = somnus(&db, &["proposals", "show", "1"]);
    assert!(ok, "{shown}");
    assert!(
        shown.contains("2026-02-10 Timeline mentions Rafael")
            && shown.contains("2026-02-08 Timeline mentions Rafael"),
        "{shown}"
    );
    assert!(!shown.contains("New domain \"Rafael\""), "{shown}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile table: a profile of 20,000 rows, one row of 20,000 cells, a
/// row of pipes only, a header line never followed by its separator, and
/// a people table whose cells are empty. The import finishes, names the
/// user from the first name row, keeps the block whole, and makes no
/// Person of an empty cell.
#[test]
fn a_hostile_table_imports_whole() {
    let dir = tmp("table-hostile");
    let mut text = String::from(
        "# MEMORY.md\n\n## 👤 用戶資料\n\n| 項目 | 內容 |\n|---|---|\n| **名稱** | 林小明 |\n| **時區** | Asia/Taipei |\n",
    );
    for i in 0..20_000 {
        text.push_str(&format!("| key {i} | value {i} |\n"));
    }
    text.push_str(&format!("|{}\n", " x |".repeat(20_000)));
    text.push_str("||||||\n| only a header |\n\n## 🔗 Pessoas\n\n| Pessoa | Relação |\n|---|---|\n| | |\n| - | - |\n");
    let (user, said) = user_of(&dir, "hostile", &text, None);
    assert_eq!(user[0], json!("林小明"), "{said}");
    let kept = user[1]["memory_用戶資料"].as_str().unwrap_or_default();
    assert!(kept.contains("value 19999"), "{}", kept.len());
    assert!(!said.contains("block `🔗 Pessoas` lists people"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A daily note's headings give their time as people write it: a range
/// with its part of the day at its end (`1:22-2:16 PM`, `6:10-16 PM`), a
/// 24-hour time that says PM as well (`13:10 PM`), a remark of the day
/// after the time (`12:10 AM (April 4)`). Each Event starts when its
/// section did and is named for what it is about, no piece of a time left
/// in its name.
#[test]
fn a_daily_notes_time_ranges_give_each_section_its_start() {
    let dir = tmp("heading-times");
    let ws = dir.join("ws");
    put(
        &ws,
        "memory/2026-03-16.md",
        "# 2026-03-16\n\n## 1:22-2:16 PM - Roles Filter Fix & Railway Deploy Issues\n- Fixed the roles filter\n\n## 6:10-16 PM - Railway Success\n- Deploy went green\n\n## 13:10 PM - Auto-save Checkpoint\n- Session status: idle\n\n## 12:10 AM (April 4) - Night Watch\n- Overnight monitoring\n",
    );
    let (mut nx, _) = imported(&dir, &ws);
    let events = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes.start_time) WHERE { ?e {type: "Event"} FILTER(?e.attributes.event_class == "daily_note") } ORDER BY ?e.attributes.start_time ASC"#,
    );
    let got: Vec<(String, String)> = events
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap_or("").to_string(),
                r[1].as_str()
                    .unwrap_or("")
                    .get(..16)
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    let want = [
        ("2026-03-16 00:10 Night Watch", "2026-03-16T00:10"),
        ("2026-03-16 13:10 Auto-save Checkpoint", "2026-03-16T13:10"),
        (
            "2026-03-16 13:22 Roles Filter Fix & Railway Deploy Issues",
            "2026-03-16T13:22",
        ),
        ("2026-03-16 18:10 Railway Success", "2026-03-16T18:10"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect::<Vec<_>>()
    );
}

/// A `MEMORY.md` heading that says it all, with nothing under it, is kept
/// as a note whose text is the heading; a section's title left empty
/// (`## Lessons Learned`) still holds nothing.
#[test]
fn a_heading_that_states_a_rule_with_nothing_under_it_is_kept() {
    let dir = tmp("heading-rule");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md — Persistent Context\n\n## ⚠️ Filesystem: case-insensitive (virtiofs macOS). NEVER create files that differ only in case.\n\n## Workspace\n- Mounted via virtiofs, survives resets.\n\n## Lessons Learned\n\n## Pending\n- Renew the domain\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let kept = kip(
        &mut nx,
        r#"FIND(?i.attributes.description) WHERE { ?i {type: "Insight"} FILTER(CONTAINS(?i.attributes.description, "NEVER create files")) }"#,
    );
    assert_eq!(
        kept,
        json!([
            "⚠️ Filesystem: case-insensitive (virtiofs macOS). NEVER create files that differ only in case."
        ])
    );
    assert!(
        said.contains("block `Lessons Learned` is empty or a template's blank: nothing to keep"),
        "{said}"
    );
    assert!(!said.contains("only in case.` is empty"), "{said}");
}

/// A workspace (its `SOUL.md`, `USER.md` …) without `memory/` is still a
/// workspace: its project folders are named, not read as notes. Its
/// `memory/` moved into one of its folders (`backup/memory/`), alone
/// there, is read as its memory, and the folder's other notes are named.
#[test]
fn a_workspace_without_memory_reads_its_moved_memory_and_names_its_projects() {
    let dir = tmp("moved-memory");
    let ws = dir.join("ws");
    put(&ws, "SOUL.md", "# SOUL.md\n\nBe direct.\n");
    put(&ws, "USER.md", "# USER.md\n\n- **Name:** Franco\n");
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Pending\n- Renew the domain\n",
    );
    put(
        &ws,
        "backup/memory/2026-02-18.md",
        "# 2026-02-18\n\n## Conversación con Franco\n- Quiere lanzar la consultora en marzo\n",
    );
    put(
        &ws,
        "backup/research/report.md",
        "# Report\n\nMarket gaps.\n",
    );
    put(&ws, "platform/README.md", "# Platform\n\nRun `make up`.\n");
    put(&ws, "platform/requirements.txt", "fastapi==0.110\n");
    let (mut nx, said) = imported(&dir, &ws);
    let events = kip(&mut nx, r#"FIND(?e.name) WHERE { ?e {type: "Event"} }"#);
    assert_eq!(events, json!(["2026-02-18 Conversación con Franco"]));
    let notes = kip(
        &mut nx,
        r#"FIND(COUNT(?i)) WHERE { ?i {type: "Insight"} FILTER(CONTAINS(?i.attributes.note_file, "platform") || CONTAINS(?i.attributes.note_file, "research")) }"#,
    );
    assert_eq!(notes, json!(0));
    for line in [
        "no memory/ folder: backup/memory/, the one memory folder in the workspace, read as its memory",
        "backup/: 1 note (3 lines) beside the memory folder in it not imported",
        "platform/: 2 notes",
    ] {
        assert!(said.contains(line), "{line}: {said}");
    }
}

/// A group chat's saved session quotes as JSON the messages the agent had
/// not answered and the one a user replied to. On a real Malaysian
/// workspace the agent's own analysis, replied to, stayed in the user's
/// message as JSON with its `\n` escapes, and the cycle read "she chose
/// the CEO over the institution.\n\n───\n\nTHE TENGKU TAUFIK PROBLEM" as
/// the user's decision. A person's message is kept, quoted under their
/// name; the agent's own, a picture's placeholder and a message said
/// again after the block are left out, and counted.
#[test]
fn a_group_chats_quoted_messages_are_kept_as_said_never_as_json() {
    let dir = tmp("group-quotes");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# Memory\n\n## Family\n- Arif lives in Bangi.\n",
    );
    put(
        &ws,
        "memory/2026-04-10-rhetoric-reality.md",
        r#"# Session: 2026-04-10 13:56:00 UTC

- **Source**: telegram

## Conversation Summary

user: Replied message (untrusted, for context):
```json
{
  "sender_label": "arifOS_bot",
  "body": "Board analysis.\n\n───\n\nStaying silent = she chose the CEO over the institution.\n\n───\n\nTHE TENGKU TAUFIK PROBLEM"
}
```

Betul ke analisis ni?
assistant: Ya, berdasarkan laporan tahunan.
user: Chat history since last reply (untrusted, for context):
```json
[
  {"sender": "Nur Farhana MR id:99", "body": "Arif, jgn menekan2 lydia"},
  {"sender": "Arif (@ariffazil) id:267378578", "body": "<media:image>"},
  {"sender": "Arif (@ariffazil) id:267378578", "body": "Ni Putrajaya story. Berbaloi ka pi"}
]
```

Ni Putrajaya story. Berbaloi ka pi
assistant: Berbaloi.
"#,
    );
    let (mut nx, said) = imported(&dir, &ws);
    assert!(said.contains("3 quoted messages said elsewhere"), "{said}");
    let text = kip(
        &mut nx,
        r#"FIND(?e.attributes.content_summary) WHERE { ?e {type: "Event"} FILTER(?e.attributes.event_class == "Conversation") }"#,
    );
    let text = text[0].as_str().expect("the conversation").to_string();
    assert!(
        text.contains("> Nur Farhana MR wrote:\n> Arif, jgn menekan2 lydia"),
        "{text}"
    );
    assert!(
        !text.contains("sender_label") && !text.contains("\\n") && !text.contains("TENGKU"),
        "{text}"
    );
    assert_eq!(text.matches("Ni Putrajaya story").count(), 1, "{text}");
    // the person quoted took part in the conversation
    let involved = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?e {type: "Event"} (?e, "involves", ?p) }"#,
    );
    assert_eq!(involved, json!(["Nur Farhana MR"]));
    let items = common::full_cycle(&mut nx, "2026-12-20T09:00:00Z");
    assert!(
        items.iter().all(|i| !i.title.contains("chose")),
        "{:?}",
        items.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
}

/// On a real Singaporean workspace, `## 👥 用户权限` ("user permissions")
/// lists what the user's wife and colleagues may ask the agent, each
/// under a heading that names the user and what they are to him
/// (`### +6597777239 (Tianshu 太太)`: Tianshu's wife). Each was kept on
/// the user's own Person, as if the wife's permissions were his. A
/// heading that says what someone is to the user is about that person: a
/// note of its own.
#[test]
fn a_block_about_the_users_wife_or_colleague_is_not_the_users() {
    let dir = tmp("users-relations");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md\n\n- **Name:** Tianshu\n- **Timezone:** Asia/Singapore\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## 👥 用户权限\n\n### +6597777239 (Tianshu 太太)\n- 独立 session\n- 一般查询\n\n### +6596249687 (Tianshu 同事 Hchen)\n- ✅ 可使用 Platts 接口\n- ❌ 不可访问个人信息\n\n## Tianshu's wife\n- Prefers WhatsApp over Telegram\n\n## About Tianshu\n- Trades refined products\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let user = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person", name: "Tianshu"} }"#,
    );
    let keys: Vec<&String> = user[0].as_object().expect("the user").keys().collect();
    assert!(
        keys.iter().any(|k| k.starts_with("memory_about")),
        "{keys:?}\n{said}"
    );
    assert!(
        !keys
            .iter()
            .any(|k| k.contains("太太") || k.contains("同事") || k.contains("wife")),
        "{keys:?}\n{said}"
    );
    let notes = kip(
        &mut nx,
        r#"FIND(?i.name) WHERE { ?i {type: "Insight"} } ORDER BY ?i.name"#,
    );
    let notes = notes.to_string();
    for n in ["Tianshu 太太", "Tianshu 同事 Hchen", "Tianshu's wife"] {
        assert!(notes.contains(n), "{n}: {notes}\n{said}");
    }
}

/// On a real Malaysian workspace, the user's profile (`## 👤 About Arif
/// (Permanent Facts)`, `Full Name: Muhammad Arif bin Fazil`, `Telegram
/// @ariffazil`) was a note and not the user, since its title adds a
/// remark in parentheses; and the sender of every saved conversation,
/// `Arif` with the handle `ariffazil`, became a second Person no one
/// linked to the user. A title's remark in parentheses is a remark; a
/// sender with a handle the user's profile gives is the user, and the
/// name they go by there is one the user is known by. A sender with
/// another handle stays someone else.
#[test]
fn a_sender_with_the_users_handle_is_the_user() {
    let dir = tmp("sender-handle");
    let ws = dir.join("ws");
    put(
        &ws,
        "MEMORY.md",
        "# Memory\n\n## 👤 About Arif (Permanent Facts)\n\n- **Full Name:** Muhammad Arif bin Fazil\n- **Timezone:** Asia/Kuala Lumpur\n- **Alert preference:** Telegram @ariffazil\n",
    );
    let session = |name: &str, user: &str, said: &str| {
        format!(
            "# Session: 2026-04-01 00:24:00 UTC\n\n- **Source**: telegram\n\n## Conversation Summary\n\nuser: Sender (untrusted metadata):\n```json\n{{\n  \"label\": \"{name} (267378578)\",\n  \"name\": \"{name}\",\n  \"username\": \"{user}\"\n}}\n```\n\n{said}\nassistant: Noted.\n"
        )
    };
    put(
        &ws,
        "memory/2026-04-01-workspace-setup.md",
        &session("Arif", "AriffAzil", "Set up the workspace today"),
    );
    put(
        &ws,
        "memory/2026-04-02-brunch.md",
        &session("Nur Farhana", "farhana_mr", "Brunch at Bangi on Sunday"),
    );
    let (mut nx, said) = imported(&dir, &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.relationship_to_self, ?p.attributes.aliases) WHERE { ?p {type: "Person"} FILTER(!STARTS_WITH(?p.name, "$")) } ORDER BY ?p.name"#,
    );
    assert_eq!(
        people,
        json!([
            ["Muhammad Arif bin Fazil", "user", ["Arif"]],
            ["Nur Farhana", null, null]
        ]),
        "{said}"
    );
    assert!(
        said.contains("the sender `Arif` (@ariffazil) is the user `Muhammad Arif bin Fazil`"),
        "{said}"
    );
    let involved = kip(
        &mut nx,
        r#"FIND(?e.name, ?p.name) WHERE { ?e {type: "Event"} (?e, "involves", ?p) } ORDER BY ?e.name"#,
    );
    // (the user takes part in every conversation; the other sender in hers)
    assert_eq!(
        involved,
        json!([
            [
                "2026-04-01 00:24 workspace setup",
                "2026-04-02 00:24 brunch",
                "2026-04-02 00:24 brunch"
            ],
            [
                "Muhammad Arif bin Fazil",
                "Muhammad Arif bin Fazil",
                "Nur Farhana"
            ]
        ])
    );
}

/// A workspace kept in a repository with the agent's files in one folder
/// (`config/`, a real French workspace) reads them from there: the user
/// from `config/USER.md`, the core memory from `config/MEMORY.md`, and
/// the block the operator is named in (`Opérateur — Blaise`) kept on the
/// user. The folder's other notes are named. A block holding nothing but
/// a template's HTML comment is nothing; a profile's line in italics
/// (the template's hint) is no fact; `IDENTITY.md`'s name and emoji are
/// `$self`'s `name` and `avatar`.
#[test]
fn agent_files_kept_in_one_folder_are_the_workspaces() {
    let dir = tmp("agent-files-folder");
    let ws = dir.join("ws");
    put(
        &ws,
        "config/USER.md",
        "# USER.md - About Your Human\n\n*Learn about the person you're helping. Update this as you go.*\n\n- **Name:** Blaise\n- **Timezone:** Europe/Paris\n\n## Context\n\n*(What do they care about?)*\n\nBuilds multi-agent systems.\n",
    );
    put(
        &ws,
        "config/MEMORY.md",
        "# Ralph — MEMORY.md\n\n## Opérateur — Blaise\n\n- Profil : technique avancé, basé Nancy\n- Comm : français par défaut\n\n## Services\n\n<!-- One line per service endpoint after registration -->\n\n## Heuristiques\n\n- Constraints > freedom\n",
    );
    put(
        &ws,
        "config/IDENTITY.md",
        "# IDENTITY.md - Who Am I?\n\n- **Name:** Ralph\n- **Emoji:** 🦞\n- **Avatar:**\n",
    );
    put(&ws, "config/BOOTSTRAP.md", "# Bootstrap\n\nHello, world.\n");
    put(
        &ws,
        "memory/2026-02-13.md",
        "# 2026-02-13\n\n## Setup\n\n- Gateway configured\n",
    );
    put(&ws, "README.md", "# LobsterOps\n");
    let (mut nx, said) = imported(&dir, &ws);
    assert!(
        said.contains("config/, the one folder that holds them, read as the workspace's own"),
        "{said}"
    );
    assert!(
        said.contains("config/BOOTSTRAP.md (3 lines): 1 note in config/ beside the agent's files, not imported"),
        "{said}"
    );
    assert!(!said.contains("no MEMORY.md"), "{said}");
    let user = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(user[0][0], json!("Blaise"), "{said}");
    let attrs = &user[0][1];
    assert_eq!(attrs["timezone"], json!("Europe/Paris"));
    assert_eq!(attrs["context"], json!(["Builds multi-agent systems."]));
    // (the file itself is kept verbatim as `profile_md`; no fact says it)
    let mut facts = attrs.clone();
    facts["profile_md"] = Value::Null;
    assert!(
        !facts.to_string().contains("Learn about the person"),
        "{attrs}"
    );
    assert!(
        attrs.to_string().contains("technique avancé, basé Nancy"),
        "the operator's block is the user's: {attrs}\n{said}"
    );
    let notes = kip(
        &mut nx,
        r#"FIND(?n.name) WHERE { ?n {type: "Insight"} } ORDER BY ?n.name"#,
    );
    assert_eq!(notes, json!(["Heuristiques"]), "{said}");
    assert!(
        said.contains("block `Services` is empty or a template's blank"),
        "{said}"
    );
    let me = kip(
        &mut nx,
        r#"FIND(?s.attributes.name, ?s.attributes.avatar, ?s.attributes.identity.emoji) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(
        me,
        json!([["Ralph", {"type": "emoji", "value": "🦞"}, "🦞"]])
    );
}

/// A folder given alone that holds daily notes is a memory folder, even
/// with copies of the agent's files in one of its folders: those are its
/// notes, not the workspace's own.
#[test]
fn a_memory_folders_backup_of_the_agent_files_is_no_workspace() {
    let dir = tmp("memory-folder-backup");
    let mem = dir.join("memory");
    put(
        &mem,
        "2026-02-13.md",
        "# 2026-02-13\n\n## Setup\n\n- Gateway configured\n",
    );
    put(&mem, "backup/USER.md", "# USER.md\n\n- **Name:** Blaise\n");
    put(&mem, "backup/MEMORY.md", "# Memory\n\n## Notes\n\n- kept\n");
    let (mut nx, said) = imported(&dir, &mem);
    assert!(!said.contains("read as the workspace's own"), "{said}");
    let users = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(users, json!([]), "{said}");
}

/// A folder of the memory with no note in it (a vector index a real
/// workspace keeps in `memory/vector_db/`, 175 `.lance` files) is named
/// in one line with its count, not file by file.
#[test]
fn a_memory_folder_without_notes_is_named_once() {
    let dir = tmp("folder-without-notes");
    let ws = dir.join("ws");
    put(&ws, "USER.md", "# USER.md\n\n- **Name:** Ayman\n");
    put(
        &ws,
        "memory/2026-02-03.md",
        "# 2026-02-03\n\n## Setup\n\n- Gateway configured\n",
    );
    for i in 0..40 {
        put(
            &ws,
            &format!("memory/vector_db/chunks.lance/data/{i}.lance"),
            "\u{1}binary",
        );
    }
    put(&ws, "memory/state.json", "{}");
    let (_, said) = imported(&dir, &ws);
    assert!(
        said.contains("memory/vector_db/: 40 files and no markdown or text note, skipped"),
        "{said}"
    );
    assert!(!said.contains(".lance: not a markdown"), "{said}");
    assert!(
        said.contains("memory/state.json: not a markdown or text note, skipped"),
        "{said}"
    );
}

/// An older gateway's stamp gives its sender's handle in parentheses
/// (`[Telegram A J (@Aymanmj12) id:1186936952 …]`, a real Saudi
/// workspace): it is the sender's `handle`, and a sender whose handle the
/// user's profile gives is the user.
#[test]
fn a_stamps_handle_is_the_senders_and_names_the_user() {
    let dir = tmp("stamp-handle");
    let session = |who: &str, said: &str| {
        format!(
            "# Session: 2026-02-01 21:08:40 UTC\n\n- **Session Key**: agent:main:telegram:dm:1186936952\n- **Source**: telegram\n\n## Conversation Summary\n\nassistant: Restart complete.\nuser: [Telegram {who} id:1186936952 +1m 2026-02-01 21:03 UTC] {said}\n[message_id: 1147]\nassistant: On it.\n"
        )
    };
    // the user's profile without the handle: the sender stays someone
    // else, with the handle they wrote under
    let ws = dir.join("without");
    put(&ws, "USER.md", "# USER.md\n\n- **Name:** Ayman\n");
    put(
        &ws,
        "memory/2026-02-01-context-optimization.md",
        &session("A J (@Aymanmj12)", "Ok so how can we optimize it more ?"),
    );
    let (mut nx, said) = imported(&dir.join("a"), &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.handle) WHERE { ?p {type: "Person"} FILTER(!STARTS_WITH(?p.name, "$") && ?p.attributes.relationship_to_self != "user") }"#,
    );
    assert_eq!(people, json!([["A J", "@aymanmj12"]]), "{said}");
    // with it: the sender is the user
    let ws = dir.join("with");
    put(
        &ws,
        "USER.md",
        "# USER.md\n\n- **Name:** Ayman\n- **Telegram:** @Aymanmj12\n",
    );
    put(
        &ws,
        "memory/2026-02-01-context-optimization.md",
        &session("A J (@Aymanmj12)", "Ok so how can we optimize it more ?"),
    );
    let (mut nx, said) = imported(&dir.join("b"), &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.aliases) WHERE { ?p {type: "Person"} FILTER(!STARTS_WITH(?p.name, "$")) }"#,
    );
    assert_eq!(people, json!([["Ayman", ["A J"]]]), "{said}");
}

/// A profile's family, written role first (`- **Wife:** Sarah Dianne Dinn
/// — born …`, a real Toronto workspace's `USER.md`): each is a Person
/// named for who they are, not for the role (no Person `Wife`), in
/// `USER.md` as in `MEMORY.md`, and a relative named by role in any block
/// (`## Personal`: `- **Partner:** Mili`); the profile keeps the lines
/// too. A profile's contacts are how to reach the user, no other people.
#[test]
fn a_family_written_role_first_is_people_named_for_themselves() {
    let dir = tmp("family-role-first");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n- **Name:** Emerson Robert Lackey\n- **Timezone:** America/Toronto (EDT)\n\n## Family\n\n- **Wife:** Sarah Dianne Dinn — born January 7, 1983. Together since high school.\n- **Daughter:** Amelia Jean Dinn-Lackey — born June 26, 2017. Long blonde hair.\n- **Son:** Archer Emerson Dinn-Lackey — born May 24, 2022.\n\n## Personal\n\n- **Partner:** Mili\n- **Gym:** goes with Agustin Lima\n\n## 📞 Emergency Contacts\n\n| Context | Method |\n|---------|--------|\n| **Urgent** | WhatsApp (+1 416 555 0199) |\n| **System Access** | pi5 (local) |\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Extended Family\n- Mom: Dale Lackey (born 1955)\n",
    );
    let (mut nx, said) = imported(&dir.join("m"), &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.description) WHERE { ?p {type: "Person"} FILTER(!STARTS_WITH(?p.name, "$") && ?p.attributes.relationship_to_self != "user") } ORDER BY ?p.name"#,
    );
    assert_eq!(
        people,
        json!([
            [
                "Amelia Jean Dinn-Lackey",
                "Daughter — born June 26, 2017. Long blonde hair."
            ],
            ["Archer Emerson Dinn-Lackey", "Son — born May 24, 2022."],
            ["Dale Lackey", "Mom — born 1955"],
            ["Mili", "Partner"],
            [
                "Sarah Dianne Dinn",
                "Wife — born January 7, 1983. Together since high school."
            ]
        ]),
        "{said}"
    );
    assert!(
        said.contains("USER.md:6: block `Family` lists people: 3 Persons (Sarah Dianne Dinn, Amelia Jean Dinn-Lackey, Archer Emerson Dinn-Lackey)"),
        "{said}"
    );
    assert!(
        said.contains("USER.md:12: block `Personal` names the user's family: 1 Person (Mili)"),
        "{said}"
    );
    let user = kip(
        &mut nx,
        r#"FIND(?p.attributes.wife) WHERE { ?p {type: "Person", name: "Emerson Robert Lackey"} }"#,
    );
    assert_eq!(
        user,
        json!(["Sarah Dianne Dinn — born January 7, 1983. Together since high school."])
    );
    // what each is to the user is a link from the user, labelled with it
    // (the people `Personal` names besides family are no relatives); and
    // a family link never fades for want of recall, as an identity fact
    let kin = r#"FIND(?l.metadata.label, ?k.name) WHERE { ?u {type: "Person", name: "Emerson Robert Lackey"} ?l (?u, "knows", ?k) } ORDER BY ?k.name"#;
    let want = json!([
        ["Daughter", "Amelia Jean Dinn-Lackey"],
        ["Son", "Archer Emerson Dinn-Lackey"],
        ["Mom", "Dale Lackey"],
        ["Partner", "Mili"],
        ["Wife", "Sarah Dianne Dinn"]
    ]);
    let got = kip(&mut nx, kin);
    let rows: Vec<Value> = got[0]
        .as_array()
        .unwrap()
        .iter()
        .zip(got[1].as_array().unwrap())
        .map(|(l, k)| json!([l, k]))
        .collect();
    assert_eq!(Value::Array(rows), want, "{said}");
    drop(nx);
    let db = dir.join("m").join("m.db");
    let (ok, out) = somnus(&db, &["sleep", "--quiet", "--now", "2027-12-01T00:00:00Z"]);
    assert!(ok, "{out}");
    let mut nx = Nexus::open(&db).expect("open");
    let faded = kip(
        &mut nx,
        r#"FIND(COUNT(?l)) WHERE { ?u {type: "Person", name: "Emerson Robert Lackey"} ?l (?u, "knows", ?k) FILTER(IS_NOT_NULL(?l.metadata.strength_decay_applied_at)) }"#,
    );
    assert_eq!(faded, json!(0));
}

/// On a real Texan workspace, `USER.md` names the user `Alvaro Medina
/// (Alvie)`, to be called Alvie, with `Online Handles: DiamondAlchemy,
/// Diamond` and `Telegram ID: 8217045820`. `MEMORY.md`'s people block
/// opens with `**Alvie (Diamond):** Primary operator`, and every saved
/// Telegram conversation's sender is `Diamond`, id 8217045820. They were
/// two more Persons, `Alvie` and `Diamond`, beside the user. Both are the
/// user; the partner the same block lists, anyone the user is related
/// to under one of the user's names, and one named by a word of the
/// user's name (`Alvaro`: the user, or another man) are still people.
#[test]
fn the_user_under_a_name_or_handle_their_profile_gives_is_the_user() {
    let dir = tmp("user-handles");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n- **Name:** Alvaro Medina (Alvie)\n- **Online Handles:** DiamondAlchemy, Diamond\n- **What to call them:** Alvie\n- **Telegram ID:** 8217045820\n- **Timezone:** America/Chicago\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## People & Contacts\n\n- **Alvie (Diamond):** Primary operator. Telegram: 8217045820.\n- **Christian (Wannabee63):** Partner. Telegram: 7437937082.\n- **Medina:** my father, lives in El Paso.\n- **Alvaro:** fixes bikes on Saturdays.\n",
    );
    put(
        &ws,
        "memory/2026-03-05-browser-access.md",
        r#"# Session: 2026-03-05 18:44:00 UTC

- **Source**: telegram

## Conversation Summary

user: Conversation info (untrusted metadata):
```json
{
  "message_id": "1343",
  "sender_id": "8217045820",
  "sender": "Diamond",
  "timestamp": "Thu 2026-03-05 12:44 CST"
}
```

Sender (untrusted metadata):
```json
{
  "label": "Diamond (8217045820)",
  "id": "8217045820",
  "name": "Diamond"
}
```

Can you open the browser on the Mac mini for me?
assistant: Opened it.
"#,
    );
    let (mut nx, said) = imported(&dir, &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.name != "$self" && ?p.name != "$system") } ORDER BY ?p.name"#,
    );
    assert_eq!(
        people,
        json!(["Alvaro", "Alvaro Medina", "Christian", "Medina"]),
        "{said}"
    );
    assert!(
        said.contains("`Alvie` is the user `Alvaro Medina`"),
        "{said}"
    );
    assert!(
        said.contains("the sender `Diamond` (id 8217045820) is the user `Alvaro Medina`"),
        "{said}"
    );
    let involved = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?e {type: "Event"} (?e, "involves", ?p) }"#,
    );
    assert_eq!(involved, json!(["Alvaro Medina"]), "{said}");
    let aliases = kip(
        &mut nx,
        r#"FIND(?p.attributes.aliases) WHERE { ?p {type: "Person", name: "Alvaro Medina"} }"#,
    );
    assert_eq!(aliases, json!([["Alvie", "Diamond"]]), "{said}");
}

/// The same workspace's notes say `Alvie` (the user, by the name
/// `USER.md` says to call them) and `MoneyPenny` (the agent, `Name: Money
/// Penny` in `IDENTITY.md`) in most entries, and the cycle proposed
/// domains `Alvie` and `MoneyPenny`. Who writes the notes and whom they
/// are for is no topic of theirs, under any name the files give them.
#[test]
fn no_domain_is_named_for_the_user_or_the_agent_under_another_name() {
    let dir = tmp("user-agent-names");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md\n\n- **Name:** Alvaro Medina (Alvie)\n- **What to call them:** Alvie\n",
    );
    put(
        &ws,
        "IDENTITY.md",
        "# IDENTITY.md\n\n- **Name:** Money Penny\n",
    );
    put(
        &ws,
        "memory/2026-03-05.md",
        "# 2026-03-05\n\n## Avatar setup\nAlvie asked MoneyPenny for a new avatar; MoneyPenny drew three.\n\n## Browser access\nAlvie gave MoneyPenny the browser on the Mac mini.\n\n## Backups\nMoneyPenny set the nightly backup Alvie asked for.\n\n## Contacts\nAlvie added two contacts; MoneyPenny filed them.\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let items = common::full_cycle(&mut nx, "2026-12-20T09:00:00Z");
    let domains: Vec<&String> = items
        .iter()
        .map(|i| &i.title)
        .filter(|t| t.starts_with("New domain"))
        .collect();
    assert!(
        domains
            .iter()
            .all(|t| !t.contains("\"Alvie\"") && !t.contains("\"MoneyPenny\"")),
        "{domains:?}\n{said}"
    );
}

/// An agent's `MEMORY.md` lists the agents of its family in a table, its
/// own row among them, and says under it what one of them did (a real
/// workspace's shape, its text invented): the others are Persons, the
/// agent's own row is `$self`'s, and a sentence before a dash (`Edgar set
/// me up — he's the senior agent`) names no one.
#[test]
fn an_agent_family_table_lists_the_others_and_a_sentence_names_no_one() {
    let dir = tmp("agent-family");
    let ws = dir.join("ws");
    put(
        &ws,
        "IDENTITY.md",
        "# IDENTITY.md\n\n- **Name:** Cleo\n- **Creature:** Digital owl\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Agent Family\n\n| Agent | Animal | Role |\n|---|---|---|\n| Edgar | Lobster | General assistant / infra |\n| Ada | Butterfly | Infrastructure monitoring |\n| Cleo | Owl | Clinical data |\n\n- Edgar set me up (2026-03-24/25) — he's the senior agent\n- Ada monitors infrastructure\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    assert!(
        said.contains("MEMORY.md:9: `Cleo` is the agent (`$self`): IDENTITY.md names it so"),
        "{said}"
    );
    let people = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} } ORDER BY ?p.name ASC"#,
    );
    assert_eq!(
        people,
        json!(["$self", "$system", "Ada", "Edgar"]),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A daily note whose headings give their time in a named zone, as an
/// Indonesian workspace writes them (`## 2026-03-26 19:55 (Asia/Jakarta)`),
/// or say the zone after what they are (`## 05:14 Heartbeat — UTC`): each
/// section starts at that zone's offset on its day, summer time included,
/// its name keeps the time and drops the zone, and no cycle proposes a
/// domain named for a zone's area ("Asia") that five headings share.
#[test]
fn a_headings_named_zone_gives_its_offset_and_names_nothing() {
    let dir = tmp("heading-zones");
    let ws = dir.join("ws");
    let mut note = String::from("# 2026-03-26\n\n");
    for (time, text) in [
        ("19:55", "trading docs updated"),
        ("20:25", "log rotation added"),
        ("21:38", "dashboard fixed"),
        ("22:45", "backtest rerun"),
        ("23:05", "alerts muted"),
    ] {
        note.push_str(&format!(
            "## 2026-03-26 {time} (Asia/Jakarta)\n- {text}\n\n"
        ));
    }
    note.push_str("## 05:14 Heartbeat — UTC\n- all quiet\n");
    put(&ws, "memory/2026-03-26.md", &note);
    put(
        &ws,
        "memory/2026-07-01.md",
        "# 2026-07-01\n\n## 09:30 (Europe/Lisbon) Dentist\n- booked\n",
    );
    put(
        &ws,
        "memory/2026-07-02.md",
        "# 2026-07-02\n\n## 2026-07-02 (Asia/Jakarta)\n- quiet day\n",
    );
    let (mut nx, _) = imported(&dir, &ws);
    let events = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes.start_time) WHERE { ?e {type: "Event"} } ORDER BY ?e.name ASC"#,
    );
    assert_eq!(
        events,
        json!([
            ["2026-03-26 05:14 Heartbeat", "2026-03-26T05:14:00Z"],
            ["2026-03-26 19:55", "2026-03-26T19:55:00+07:00"],
            ["2026-03-26 20:25", "2026-03-26T20:25:00+07:00"],
            ["2026-03-26 21:38", "2026-03-26T21:38:00+07:00"],
            ["2026-03-26 22:45", "2026-03-26T22:45:00+07:00"],
            ["2026-03-26 23:05", "2026-03-26T23:05:00+07:00"],
            ["2026-07-01 09:30 Dentist", "2026-07-01T09:30:00+01:00"],
            ["2026-07-02", "2026-07-02T00:00:00Z"]
        ]),
        "{events}"
    );
    drop(nx);
    let db = dir.join("m.db");
    let (ok, said) = somnus(&db, &["sleep", "--now", "2026-12-01T03:00:00Z"]);
    assert!(ok, "{said}");
    let (_, shown) = somnus(&db, &["proposals", "show", "1"]);
    assert!(!shown.contains("New domain \"Asia\""), "{shown}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A real `MEMORY.md` opens with the agent's identity, not the user's
/// (`## Identity` / `- **Name:** Claw 🐧` / `- **Role:** Linux expert
/// assistant`, the name `IDENTITY.md` gives the agent), over a block
/// titled with the user's name. The user is who `USER.md` names, the
/// block about them is kept on them, and no Person is named for the agent
/// (it was the user, named `** Claw 🐧`, the bold's stars in its name).
#[test]
fn an_identity_block_that_is_the_agents_names_no_user() {
    let dir = tmp("agents_identity_block");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n- **Name:** Rob Oudendijk\n- **What to call them:** Rob\n- **Timezone:** Asia/Tokyo (GMT+9)\n",
    );
    put(
        &ws,
        "IDENTITY.md",
        "# IDENTITY.md - Who Am I?\n\n- **Name:** Claw\n- **Creature:** AI assistant — a Linux expert\n- **Emoji:** 🐧\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md - Long-Term Memory\n\n## Identity\n- **Name:** Claw 🐧\n- **Role:** Linux expert assistant\n- **Setup date:** 2026-02-24\n\n## Rob Oudendijk\n- CEO at YR-DESIGN — software engineer, designer, consultant\n- Based in Mitsue, Japan (GMT+9)\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes) WHERE { ?p {type: "Person"} }"#,
    );
    let names: Vec<&str> = people
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r[0].as_str())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("Claw")),
        "{names:?}\n{said}"
    );
    let users: Vec<&Value> = people
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r[1]["relationship_to_self"] == json!("user"))
        .collect();
    assert_eq!(users.len(), 1, "{people}");
    assert_eq!(users[0][0], json!("Rob Oudendijk"));
    assert!(
        users[0][1].to_string().contains("YR-DESIGN"),
        "the block about the user is on them: {}",
        users[0][1]
    );
    // the agent's identity is kept, on the agent
    let me = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(
        me[0]["agent_identity"]["role"],
        json!("Linux expert assistant"),
        "{me}"
    );
    assert!(said.contains("is the agent's"), "{said}");
}

/// A real Taiwanese workspace: the user's Chinese name in full-width
/// parentheses after the one they go by (`Leonardo（胡皓雍）`) is one of
/// their names (it was dropped: mentions of 胡皓雍 found no one), and a
/// line of two friends (`**明淵、朗軒** — 大學好友，每週聚餐`) is two
/// Persons (it was one, `明淵、朗軒`).
#[test]
fn a_chinese_name_beside_the_users_and_a_line_of_two_friends() {
    let dir = tmp("leo-people");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n- **Name:** Leonardo（胡皓雍）\n- **What to call them:** Leo\n- **Timezone:** Asia/Taipei (GMT+8)\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Key People\n\n- **李宏毅老師** — 指導教授\n- **明淵、朗軒** — 大學好友，每週聚餐\n- **Rocky** — 馬來西亞好友\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes) WHERE { ?p {type: "Person"} FILTER(?p.name != "$self" && ?p.name != "$system") }"#,
    );
    let mut names: Vec<&str> = people
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r[0].as_str())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["Leonardo", "Rocky", "明淵", "朗軒", "李宏毅老師"],
        "{said}"
    );
    let user = people
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r[0] == json!("Leonardo"))
        .expect("the user");
    let aliases = &user[1]["aliases"];
    assert!(
        aliases
            .as_array()
            .is_some_and(|a| a.contains(&json!("胡皓雍"))),
        "{aliases}"
    );
}

/// A real Indonesian workspace's USER.md gives no name, and its
/// MEMORY.md's `## User Information` does (`**Name:** Hany Andriyanto`):
/// the user is Person `Hany Andriyanto` (it stayed `User`), the block is
/// kept on them, and the links drafted to the user follow.
#[test]
fn a_users_name_that_only_memory_gives_names_the_user() {
    let dir = tmp("user-named-in-memory");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n- **Name:**\n- **What to call them:**\n- **Timezone:** Asia/Jakarta\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## User Information\n\n**Name:** Hany Andriyanto\n**Timezone:** Asia/Jakarta (GMT+7)\n**Location:** Bojonggede, Bogor\n\n## GitHub Repositories\n\n- streamhub: the video platform\n",
    );
    put(
        &ws,
        "memory/2026-03-06.md",
        "# 2026-03-06\n\n## StreamHub\n\n- Hany asked for updates every 5 minutes.\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let users = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(users.as_array().map(Vec::len), Some(1), "{users}");
    assert_eq!(users[0][0], json!("Hany Andriyanto"), "{said}");
    assert!(
        users[0][1].to_string().contains("Bojonggede"),
        "{}",
        users[0][1]
    );
    assert!(
        said.contains("names the user, whom USER.md gives no name"),
        "{said}"
    );
    let none = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.name == "User") }"#,
    );
    assert_eq!(none, json!([]));
}

/// A real Hebrew workspace's user replies to the agent's messages, and
/// the gateway quotes them under the agent's name (`"sender_label":
/// "Clawy"`): Clawy was a Person every such conversation involved, and
/// the cycle proposed Events "mention" it. A reply quoting it saying what
/// the agent said in that conversation shows the name is the agent's: no
/// Person in any conversation, said once.
#[test]
fn a_name_a_reply_quotes_the_agent_under_is_no_person() {
    let dir = tmp("agent-quoted");
    let ws = dir.join("ws");
    put(&ws, "MEMORY.md", "# MEMORY.md\n");
    let reply = |body: &str| {
        format!(
            "user: Replied message (untrusted, for context):\n```json\n{{\n  \"sender_label\": \"Clawy\",\n  \"body\": \"{body}\"\n}}\n```\n\ndone with it?\n"
        )
    };
    put(
        &ws,
        "memory/2026-04-12-1452.md",
        &format!(
            "# Session: 2026-04-12 14:52:00 UTC\n\n## Conversation Summary\n\nassistant: I found the problem: `run-checks.js` sends alerts through PowerShell.\n{}",
            reply("I found the problem: run-checks.js sends alerts through PowerShell.")
        ),
    );
    put(
        &ws,
        "memory/2026-04-13-0900.md",
        &format!(
            "# Session: 2026-04-13 09:00:00 UTC\n\n## Conversation Summary\n\n{}",
            reply("The dashboard is deployed on port 8080 and the monitor restarted.")
        ),
    );
    let (mut nx, said) = imported(&dir, &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.name == "Clawy") }"#,
    );
    assert_eq!(people, json!([]), "{said}");
    assert_eq!(said.matches("`Clawy` is the agent").count(), 1, "{said}");
}

/// A real Russian workspace: `USER.md` names the user `Роман`; its saved
/// Telegram conversations come from `Rem`, whose handle is
/// `RomanSkogorev`. The cycle then proposed mentions of two people, `Rem`
/// and `Роман`. A handle that spells the user's name (in Latin letters,
/// then the end, a digit, a `_` or a surname) is the user's; one that
/// only opens with its letters (`romanov`, someone's surname) is not.
#[test]
fn a_sender_whose_handle_spells_the_users_name_is_the_user() {
    let dir = tmp("user-handle-spelled");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n- **Name:** Роман\n- **What to call them:** Роман\n- **Timezone:** MSK (Moscow)\n",
    );
    let chat = |sender: &str, username: &str, text: &str| {
        format!(
            "# Session: 2026-04-02 20:01:32 UTC\n\n- **Source**: telegram\n\n## Conversation Summary\n\nuser: Conversation info (untrusted metadata):\n```json\n{{\n  \"message_id\": \"4314\",\n  \"sender_id\": \"386235337\",\n  \"sender\": \"{sender}\",\n  \"timestamp\": \"Thu 2026-04-02 22:52 GMT+3\"\n}}\n```\n\nSender (untrusted metadata):\n```json\n{{\n  \"label\": \"{sender} (386235337)\",\n  \"id\": \"386235337\",\n  \"name\": \"{sender}\",\n  \"username\": \"{username}\"\n}}\n```\n\n{text}\nassistant: Готово.\n"
        )
    };
    put(
        &ws,
        "memory/2026-04-02-task-workflow.md",
        &chat(
            "Rem",
            "RomanSkogorev",
            "почему ты задачи не ведешь как нужно?",
        ),
    );
    put(
        &ws,
        "memory/2026-04-03-poems.md",
        &chat("Ivan", "romanov", "пришли мне стихи"),
    );
    let (mut nx, said) = imported(&dir, &ws);
    assert!(
        said.contains(
            "the sender `Rem` (@romanskogorev) is the user `Роман`: the handle spells the user's name"
        ),
        "{said}"
    );
    let people = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.name != "$self" && ?p.name != "$system") } ORDER BY ?p.name"#,
    );
    assert_eq!(people, json!(["Ivan", "Роман"]), "{said}");
    let aliases = kip(
        &mut nx,
        r#"FIND(?p.attributes.aliases) WHERE { ?p {type: "Person", name: "Роман"} }"#,
    );
    assert_eq!(aliases, json!([["Rem"]]), "{said}");
}

/// OpenClaw's templates put each value on the line under its key
/// (`- **Name:**` then `  Mimi`): a workspace filled in that way names its
/// agent and its user; one left as the template names neither.
#[test]
fn profiles_filled_in_under_their_keys_name_the_agent_and_the_user() {
    let dir = tmp("profiles_under_keys");
    // (a real Vietnamese workspace's IDENTITY.md and USER.md)
    let ws = dir.join("filled");
    put(
        &ws,
        "IDENTITY.md",
        "# IDENTITY.md - Who Am I?\n\n_Fill this in during your first conversation. Make it yours._\n\n- **Name:**\n  Mimi\n- **Creature:**\n  AI Assistant trong môi trường Termux\n- **Emoji:**\n  🍀\n- **Avatar:**\n  _(chưa thiết lập)_\n",
    );
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n_Learn about the person you're helping. Update this as you go._\n\n- **Name:**\n  Hoàn\n- **What to call them:**\n  Sếp\n- **Pronouns:** _(optional)_\n- **Timezone:**\n  GMT+7 (Hồ Chí Minh, Việt Nam)\n\n## Context\n\n- Bận rộn với nhiều dự án.\n",
    );
    put(
        &ws,
        "memory/2026-03-05.md",
        "# 2026-03-05\n\n- Sếp quyết định không dùng PM2.\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let me = kip(
        &mut nx,
        r#"FIND(?s.attributes.name, ?s.attributes.identity.creature) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(
        me,
        json!([["Mimi", "AI Assistant trong môi trường Termux"]]),
        "{said}"
    );
    let user = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(user, json!(["Hoàn"]), "{said}");
    let timezone = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person", name: "Hoàn"} }"#,
    );
    assert!(timezone.to_string().contains("GMT+7"), "{timezone}");

    // the template itself, unfilled: its hints are no names
    let ws = dir.join("template");
    put(
        &ws,
        "IDENTITY.md",
        "# IDENTITY.md - Who Am I?\n\n- **Name:**\n  _(pick something you like)_\n- **Creature:**\n  _(AI? robot? familiar? ghost in the machine? something weirder?)_\n",
    );
    put(
        &ws,
        "USER.md",
        "# USER.md - About Your Human\n\n- **Name:**\n- **What to call them:**\n- **Timezone:**\n",
    );
    put(&ws, "MEMORY.md", "# MEMORY.md\n\n## Projects\n\n- somnus\n");
    // (its memory beside the first one's workspace, imported already)
    let (mut nx, said) = imported(&dir.join("filled"), &ws);
    let me = kip(
        &mut nx,
        r#"FIND(?s.attributes.name) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(me, json!([null]), "{said}");
    let people = kip(&mut nx, r#"FIND(?p.name) WHERE { ?p {type: "Person"} }"#);
    assert!(!people.to_string().contains("pick"), "{people}");
}

/// A `USER.md` with no `Name:` line names the user in its title (a real
/// Japanese workspace's: `# USER.md - Yusuke (ゆーすけ)`), the reading in
/// parentheses an alias; the template's own title names nobody.
#[test]
fn a_user_named_in_the_profiles_title() {
    let dir = tmp("user_named_in_title");
    let ws = dir.join("titled");
    put(
        &ws,
        "USER.md",
        "# USER.md - Yusuke (ゆーすけ)\n- **Timezone:** Asia/Tokyo\n- **Focus:** Deepening understanding of OpenClaw and Neo.\n- **Preferences:** Efficiency first. Match models to task complexity.\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY\n\n- ゆーすけ prefers short answers.\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let user = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.aliases, ?p.attributes.timezone) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(
        user,
        json!([["Yusuke", ["ゆーすけ"], "Asia/Tokyo"]]),
        "{said}"
    );
    assert!(!said.contains("no `Name:` line"), "{said}");

    for (case, title) in [
        ("template", "# USER.md - About Your Human"),
        ("profile", "# USER.md — User Profile"),
        ("plain", "# USER.md"),
        ("lower", "# USER.md - notes on them"),
    ] {
        let ws = dir.join(case);
        put(&ws, "USER.md", &format!("{title}\n\n- **Timezone:** UTC\n"));
        let (mut nx, said) = imported_in(&dir, &format!("{case}-memory"), &ws);
        let user = kip(
            &mut nx,
            r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
        );
        assert_eq!(user, json!(["User"]), "{title}: {said}");
    }
    let ws = dir.join("about");
    put(
        &ws,
        "USER.md",
        "# USER.md — About Kirill\n\n- **Timezone:** GMT+3\n",
    );
    let (mut nx, said) = imported_in(&dir, "about-memory", &ws);
    let user = kip(
        &mut nx,
        r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") }"#,
    );
    assert_eq!(user, json!(["Kirill"]), "{said}");
}

/// A `MEMORY.md` of bullets and no `## ` block (as many agents keep it; a
/// real Chinese workspace opened its file with 48 of them) kept them only
/// in `$self`'s copy of the file, each said to be skipped: they are a note
/// of their own now, named by the file's title, else `MEMORY.md`.
#[test]
fn bullets_before_any_block_of_memory_md_are_a_note() {
    let dir = tmp("memory_md_preamble");
    let ws = dir.join("flat");
    put(
        &ws,
        "MEMORY.md",
        "- Ana prefers tea over coffee.\n- Ana lives in Lisbon.\n  - works at Feedzai\n- Never schedule calls before 10am.\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let notes = kip(
        &mut nx,
        r#"FIND(?n.name, ?n.attributes.description) WHERE { ?n {type: "Insight"} }"#,
    );
    assert_eq!(
        notes,
        json!([[
            "MEMORY.md",
            "- Ana prefers tea over coffee.\n- Ana lives in Lisbon.\n  - works at Feedzai\n- Never schedule calls before 10am."
        ]]),
        "{said}"
    );
    assert!(!said.contains("outside any block"), "{said}");

    let ws = dir.join("titled");
    put(
        &ws,
        "MEMORY.md",
        "# Long-term memory\n\nWhat I keep.\n\n- The office wifi is guest-5G.\n\n## Projects\n\n- Atlas ships in May.\n",
    );
    let (mut nx, said) = imported_in(&dir, "titled-memory", &ws);
    let notes = kip(
        &mut nx,
        r#"FIND(?n.name) WHERE { ?n {type: "Insight"} } ORDER BY ?n.name"#,
    );
    assert_eq!(notes, json!(["Long-term memory", "Projects"]), "{said}");

    // a heading inside a code fence is a line of the preamble, a comment
    // never closed says nothing, and a file of 20,000 bullets is one note
    let ws = dir.join("hostile");
    let mut text = String::from("- see:\n```\n## not a block\n```\n<!-- never closed\n");
    let mut big = String::new();
    for i in 0..20_000 {
        big.push_str(&format!("- fact {i}\n"));
    }
    text.push_str("-->\n");
    text.push_str(&big);
    put(&ws, "MEMORY.md", &text);
    let (mut nx, said) = imported_in(&dir, "hostile-memory", &ws);
    let notes = kip(
        &mut nx,
        r#"FIND(?n.name, ?n.attributes.description) WHERE { ?n {type: "Insight"} }"#,
    );
    let rows = notes.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{said}");
    let body = rows[0][1].as_str().expect("text");
    assert!(
        body.starts_with("- see:\n```\n## not a block\n```"),
        "{body:.80}"
    );
    assert!(body.ends_with("- fact 19999"), "{said}");
}

/// A team of agents `USER.md` lists (a real workspace's `### AI Team`:
/// `**Scout** (Researcher) — Research, web searches`) is of AIs, as
/// `$self` is; a family is not.
#[test]
fn a_team_of_agents_is_of_ais() {
    let dir = tmp("team_of_agents");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md\n\n- **Name:** Kamtorn\n\n## Your Systems\n\n### AI Team\n\n- **Morpheus** (Lead) — Orchestration, strategy, decisions\n- **Scout** (Researcher) — Research, web searches, analysis\n\n## Family\n\n- **Wife:** Nok Suwan — teacher\n",
    );
    let (mut nx, said) = imported(&dir, &ws);
    let people = kip(
        &mut nx,
        r#"FIND(?p.name, ?p.attributes.person_class) WHERE { ?p {type: "Person"} FILTER(?p.name != "$self" && ?p.name != "$system") } ORDER BY ?p.name"#,
    );
    assert_eq!(
        people,
        json!([
            ["Kamtorn", null],
            ["Morpheus", "AI"],
            ["Nok Suwan", null],
            ["Scout", "AI"]
        ]),
        "{said}"
    );
}
