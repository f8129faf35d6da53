//! What OpenClaw's dreaming leaves in a workspace, as real workspaces hold
//! it (a Portuguese one, a Texan one, a Chinese one; their shapes written
//! inline, their texts invented): the session corpus, often the only copy
//! of what the user told the agent, is read as conversations; the
//! dreaming's reports and the blocks it writes into daily notes, its digest
//! of all that quoted again as scored candidates, are left out, and the
//! sleep cycle proposes nothing about them.

mod common;

use serde_json::{Value, json};
use somnus::Nexus;
use std::path::Path;

use common::tmp;

fn put(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("folders");
    std::fs::write(p, text).expect("write");
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let r = nx.kip(cmd).to_json();
    assert!(r.get("error").is_none(), "{cmd}: {r}");
    r["result"].clone()
}

/// A daily note the dreaming wrote its blocks into, above the owner's
/// own section: its blocks (a line that closes one and opens the next, as
/// the dreaming writes them) quote the corpus as candidates.
const DAILY: &str = "## Light Sleep
<!-- openclaw:dreaming:light:start -->
- Candidate: User: lembra-te que o contrato da casa acaba em junho
  - confidence: 0.58
  - evidence: memory/.dreams/session-corpus/2026-04-17.txt:2-2
  - recalls: 0
  - status: staged
<!-- openclaw:dreaming:light:end --> ## REM Sleep <!-- openclaw:dreaming:rem:start --> ### Reflections - Theme: `user` kept surfacing across 11 memories.
### Possible Lasting Truths
- - Candidate: Assistant: A previsão para o Porto: 15°C [confidence=0.60 evidence=memory/2026-04-18.md:47-67]
<!-- openclaw:dreaming:rem:end -->
## Mota
- Revisão da mota marcada para 2026-04-25 na oficina do Zé.
";

/// The corpus of one day: a conversation whose session file was deleted
/// (the user's words in it are nowhere else), a long message kept in two
/// lines of one `#L`, a message in a Telegram metadata wrapper, a
/// scheduled job's run, a dream diary's session, a heartbeat's, and a
/// session saved as a conversation too.
const CORPUS_17: &str = r#"[main/sessions/46ff.jsonl.deleted.2026-04-18T06-00-34.363Z#L5] User: lembra-te que o contrato da casa acaba em junho e que a senhoria se chama Dona Rosa
[main/sessions/46ff.jsonl.deleted.2026-04-18T06-00-34.363Z#L6] Assistant: Anotado: o contrato da casa acaba em junho; a senhoria é a Dona Rosa.
[main/sessions/46ff.jsonl.deleted.2026-04-18T06-00-34.363Z#L9] User: Conversation info (untrusted metadata): ```json { "message_id": "537", "sender_id": "6384494297", "sender": "Tiago", "timestamp": "Wed 2026-04-15 16:27 GMT+1" } ``` e a renda sobe para 900 euros em julho
[main/sessions/46ff.jsonl.deleted.2026-04-18T06-00-34.363Z#L12] Assistant: Vou guardar isto: a renda sobe para 900 euros em julho, e o contrato
[main/sessions/46ff.jsonl.deleted.2026-04-18T06-00-34.363Z#L12] Assistant: com a Dona Rosa acaba em junho.
[main/sessions/60ee.jsonl#L5] User: [cron:749108ec Daily moto calendar event] Cria ou atualiza o evento diário da mota no Apple Calendar usando a skill
[main/sessions/60ee.jsonl#L8] Assistant: A previsão para o Porto: 15°C, sem chuva. Evento da mota criado para amanhã às 08:00.
[main/sessions/8c03.jsonl#L5] User: [Sun 2026-04-12 03:02 CDT] Write a dream diary entry from these memory fragments: - 2026-03-22: Met Tiago in main session.
[main/sessions/8c03.jsonl#L6] Assistant: The night unfurled in fragments, as if my thoughts were crons pinging distant servers.
[main/sessions/70c3.jsonl#L3] User: Read HEARTBEAT.md if it exists (workspace context). Follow it strictly.
[main/sessions/70c3.jsonl#L4] Assistant: HEARTBEAT_OK
[main/sessions/9a1b.jsonl#L3] User: corrige o gateway, por favor
[main/sessions/c1.jsonl#L3] User: queria muito que deixasses de fazer referências a gremlins
[main/sessions/c1.jsonl#L4] Assistant: Combinado, nada de gremlins.
[main/sessions/c2.jsonl#L3] User: yo nyx, por aqui?
[main/sessions/c2.jsonl#L4] Assistant: Sempre!
"#;

/// The next day's corpus takes a message of the deleted session in again.
const CORPUS_18: &str = "[main/sessions/46ff.jsonl.deleted.2026-04-18T06-00-34.363Z#L5] User: lembra-te que o contrato da casa acaba em junho e que a senhoria se chama Dona Rosa
[main/sessions/b2c4.jsonl#L2] User: 请记住：我下周三去上海出差
";

#[test]
fn the_session_corpus_is_read_and_the_dreamings_reports_are_not() {
    let dir = tmp("dreaming-import");
    let ws = dir.join("ws");
    put(
        &ws,
        "USER.md",
        "# USER.md\n\n- **Name:** Tiago Almeida\n- **Telegram ID:** 6384494297\n",
    );
    put(
        &ws,
        "MEMORY.md",
        "# MEMORY.md\n\n## Projects\n- Site da escola de surf.\n",
    );
    put(&ws, "memory/2026-04-18.md", DAILY);
    put(
        &ws,
        "memory/2026-04-17-gateway.md",
        "# Session: 2026-04-17 09:12:00 UTC\n\n- **Session Key**: agent:main:main\n- **Session ID**: 9a1b\n- **Source**: telegram\n\n## Conversation Summary\n\nuser: corrige o gateway, por favor, e diz-me quando estiver feito\nassistant: Gateway reiniciado.\n",
    );
    put(
        &ws,
        "memory/.dreams/session-corpus/2026-04-17.txt",
        CORPUS_17,
    );
    put(
        &ws,
        "memory/.dreams/session-corpus/2026-04-18.txt",
        CORPUS_18,
    );
    put(
        &ws,
        "memory/.dreams/short-term-recall.json",
        "{\"entries\": {}}",
    );
    put(&ws, "memory/.dreams/session-corpus/notes.md", "not a day");
    put(
        &ws,
        "memory/dreaming/rem/2026-04-18.md",
        "# REM Sleep\n\n### Possible Lasting Truths\n- - Candidate: User: lembra-te que o contrato da casa acaba em junho [confidence=0.51]\n",
    );
    put(
        &ws,
        "memory/dreaming/deep/2026-04-18.md",
        "# Deep Sleep\n\n- Ranked 6 candidate(s) for durable promotion.\n",
    );
    let db = dir.join("m.db");
    let (ok, said) = common::run(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{said}");
    for line in [
        "memory/dreaming/: OpenClaw's dreaming's reports (2 files): its digest of the notes and conversations read here, skipped",
        "memory/2026-04-18.md: 11 lines OpenClaw's dreaming wrote (its blocks, its dream diary) left out",
        "memory/.dreams/: OpenClaw's dreaming's state, skipped but for its session corpus (read below)",
        "memory/.dreams/session-corpus/: 1 file not named for a day (YYYY-MM-DD.txt), skipped",
        "memory/.dreams/session-corpus/: OpenClaw's dreaming's session corpus: 4 conversations read as Events (9 messages, 5 of them the user's; each message's first characters, as the corpus keeps them); 1 read from their saved copy instead; 1 of the dreaming's own (a dream diary's prompt and the diary) left out; 2 where no person said anything (a scheduled job's run, a sub-agent's work, the agent's output alone) left out; left out: 1 OpenClaw's own prompts, 1 metadata blocks, 1 scheduled jobs' prompts, 1 silent replies",
        "the sender `Tiago` (id 6384494297) is the user `Tiago Almeida`",
    ] {
        assert!(said.contains(line), "{line}\n---\n{said}");
    }
    let mut nx = Nexus::open(&db).expect("open");
    // the deleted session: what the user said, once, the long answer whole
    let e = kip(
        &mut nx,
        r#"FIND(?e.name, ?e.attributes, ?e.metadata) WHERE { ?e {type: "Event"} FILTER(CONTAINS(?e.attributes.content_summary, "Dona Rosa")) }"#,
    );
    let rows = e.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{e}");
    let (name, a, m) = (&rows[0][0], &rows[0][1], &rows[0][2]);
    assert_eq!(name, &json!("2026-04-17 conversation"));
    assert_eq!(
        a["content_summary"],
        json!(
            "user: lembra-te que o contrato da casa acaba em junho e que a senhoria se chama Dona Rosa\n\nassistant: Anotado: o contrato da casa acaba em junho; a senhoria é a Dona Rosa.\n\nuser: e a renda sobe para 900 euros em julho\n\nassistant: Vou guardar isto: a renda sobe para 900 euros em julho, e o contrato … com a Dona Rosa acaba em junho."
        ),
        "{a}"
    );
    assert_eq!(a["event_class"], json!("Conversation"));
    assert_eq!(a["start_time"], json!("2026-04-17T00:00:00Z"));
    assert_eq!(a["time_precision"], json!("day"));
    assert_eq!(a["context"]["session_id"], json!("46ff"));
    assert!(
        a["context"]["kept"]
            .as_str()
            .expect("kept")
            .contains("was deleted"),
        "{a}"
    );
    assert_eq!(a["participants"], json!(["$self", "Tiago Almeida"]), "{a}");
    assert_eq!(
        m["source"],
        json!("moltbot:memory/.dreams/session-corpus/2026-04-17.txt:1")
    );
    // a scheduled job's run is the agent's output alone: not read
    let job = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} FILTER(CONTAINS(?e.attributes.content_summary, "Evento da mota")) }"#,
    );
    assert_eq!(job, json!(0));
    // a session first taken in on the next day, in Chinese
    let zh = kip(
        &mut nx,
        r#"FIND(?e.attributes.content_summary) WHERE { ?e {type: "Event", name: "2026-04-18 conversation"} }"#,
    );
    assert_eq!(zh, json!(["user: 请记住：我下周三去上海出差"]));
    // the saved copy is the one read; the owner's section of the daily
    // note is kept at its line
    let saved = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} FILTER(CONTAINS(?e.attributes.content_summary, "corrige o gateway")) }"#,
    );
    assert_eq!(saved, json!(1));
    let mota = kip(
        &mut nx,
        r#"FIND(?e.metadata.source) WHERE { ?e {type: "Event"} FILTER(CONTAINS(?e.attributes.content_summary, "oficina do Zé")) }"#,
    );
    assert_eq!(mota, json!(["moltbot:memory/2026-04-18.md:12"]));
    // nothing of the dreaming's own reached the memory
    let all = nx
        .db()
        .query(
            "SELECT name, attributes FROM concepts WHERE type NOT LIKE '$%'",
            &[],
        )
        .expect("concepts");
    for r in all.iter() {
        let text = format!(
            "{} {}",
            r.text(0).unwrap_or_default(),
            r.text(1).unwrap_or_default()
        );
        for word in [
            "Candidate",
            "openclaw:dreaming",
            "unfurled",
            "Ranked 6",
            "HEARTBEAT",
            "Light Sleep",
        ] {
            assert!(!text.contains(word), "{word} in {text}");
        }
    }
    drop(nx);
    // importing again changes nothing
    let (ok, again) = common::run(&db, &["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(ok, "{again}");
    assert!(again.contains("created 0 elements"), "{again}");
    // a cycle proposes nothing about what the dreaming wrote; of the
    // conversations the corpus kept, it archives a greeting, and leaves
    // as they are those where the user asked the agent to keep something
    // or set it a rule, in words no cue of its reads
    let (ok, slept) = common::run(&db, &["sleep", "--now", "2026-05-20T03:00:00Z"]);
    assert!(ok, "{slept}");
    assert!(
        slept.contains("Left 2 conversations as they are: the user asked the agent to remember something or set it a rule")
            && slept.contains("can consolidate them: 2026-04-17 conversation, 2026-04-17 conversation (2)\n"),
        "{slept}"
    );
    let (_, shown) = common::run(&db, &["proposals", "show", "1"]);
    assert!(
        shown.contains("Archive 2026-04-17 conversation (3) (nothing durable to extract)"),
        "{shown}"
    );
    assert!(
        !shown.contains("Archive 2026-04-17 conversation (2)"),
        "{shown}"
    );
    let (ok, list) = common::run(&db, &["proposals", "list", "--json"]);
    assert!(ok, "{list}");
    let list: Value = serde_json::from_str(&list).expect("JSON");
    for p in list.as_array().expect("proposals") {
        let (ok, shown) = common::run(&db, &["proposals", "show", &p["id"].to_string(), "--json"]);
        assert!(ok, "{shown}");
        for word in ["Candidate", "Light Sleep", "dreaming", "confidence="] {
            assert!(!shown.contains(word), "{word} in {shown}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
