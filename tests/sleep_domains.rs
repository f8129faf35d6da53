//! Domains the sleep cycle proposes for what waits in Unsorted, on memories
//! where one theme runs through most notes (a project the agent works on
//! every day): a domain is a part of the memory, never all of it.

mod common;

use serde_json::{Map, Value};
use somnus::protocol::{Outcome, Request};
use somnus::{Nexus, Response};

const NOW: &str = "2026-11-20T03:00:00Z";

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let req = Request::command(cmd).with_params(Map::new());
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

fn note(nx: &mut Nexus, name: &str, text: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?n {{ {{type: "Insight", name: "{name}"}} SET ATTRIBUTES {{ content: "{text}" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
        ),
    );
}

/// The titles of the new domains a full cycle proposes.
fn new_domains(nx: &mut Nexus) -> Vec<String> {
    common::full_cycle(nx, NOW)
        .into_iter()
        .filter(|i| i.class == "domain" && i.title.starts_with("New domain"))
        .map(|i| i.title)
        .collect()
}

/// On a real workspace (an agent building a voice assistant) the theme
/// "voice" was shared by a third of the notes, and themes whose items
/// were mostly voice notes brought their other items in ("setup",
/// "integration"): one domain "Voice" of 32 of 44 notes, the user's
/// profile, a timer app and a server guide among them. A domain grows
/// by other themes only while it holds at most half the notes, as one
/// theme may.
#[test]
fn a_domain_never_grows_past_half_the_notes_through_other_themes() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    // six notes about the voice stack, two of them about its setup
    for (i, extra) in ["setup", "setup", "", "", "", ""].iter().enumerate() {
        note(
            &mut nx,
            &format!("Voice note {i}"),
            &format!("Worked on the voice pipeline {extra} today."),
        );
    }
    // two more setup notes with nothing of voice, and four of other things
    note(&mut nx, "Server", "The server setup took an hour.");
    note(&mut nx, "Editor", "Editor setup with the new theme.");
    note(&mut nx, "Groceries", "Bought oranges and bread.");
    note(&mut nx, "Running", "Ran five kilometres by the river.");
    note(
        &mut nx,
        "Reading",
        "Finished the novel about the lighthouse.",
    );
    note(&mut nx, "Garden", "Planted tulips along the fence.");
    let domains = new_domains(&mut nx);
    let voice = domains
        .iter()
        .find(|t| t.starts_with("New domain \"Voice\""))
        .unwrap_or_else(|| panic!("{domains:?}"));
    assert!(
        voice.starts_with("New domain \"Voice\" for 6 items"),
        "{voice}"
    );
    assert!(
        !voice.contains("\"Server\"") && !voice.contains("\"Editor\""),
        "{voice}"
    );
}

/// An agent's transcripts, as OpenClaw's session notes keep them: each
/// message under a caption and its metadata as JSON (`message_id`,
/// `conversation_label`), each reply tagged `[[reply_to_current]]`. On a
/// real German workspace the cycle proposed domains "Metadata", "Message",
/// "Info" and "Current" for them. What a block of code or data and its
/// caption say, and an identifier, are no theme; what the messages say is.
#[test]
fn a_transcripts_metadata_and_reply_tags_found_no_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let said = [
        "Ich habe über Obsidian einen Remote Vault angelegt",
        "Kannst du den Obsidian Vault strukturieren",
        "Der Obsidian Sync läuft jetzt auf dem MacBook",
        "Bestellt wurden Orangen und Brot",
        "Der Podcast ist geschnitten",
        "Die Steuererklärung liegt beim Berater",
        "Der Zug nach Hamburg fällt aus",
        "Die Heizung im Büro ist repariert",
        "Das Inserat für den Stuhl ist online",
        "Die Landingpage hat neue Texte",
    ];
    for (i, text) in said.iter().enumerate() {
        let summary = format!(
            "user: Conversation info (untrusted metadata):\n```json\n{{\n  \"message_id\": \"m-{i}\",\n  \"conversation_label\": \"openclaw-tui\"\n}}\n```\n\n[Sun 2026-02-15 23:{i:02} GMT+1] {text}.\nassistant: [[reply_to_current]] Erledigt."
        );
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "2026-02-15 23:{i:02} message {i}"}} SET ATTRIBUTES {{ event_class: "Note", content_summary: {}, start_time: "2026-02-15T22:{i:02}:00Z" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#,
                serde_json::to_string(&summary).expect("json")
            ),
        );
    }
    // the day's own notes beside them, written by the agent: the
    // transcripts are a part of the memory, not most of it
    for (i, text) in [
        "Rechnung an Kunde Berger verschickt",
        "Kalender für Freitag geprüft",
        "Backup des Laptops erstellt",
        "Neue Schriftart für das Logo gewählt",
        "Fahrrad zur Inspektion gebracht",
        "Angebot für den Umzug eingeholt",
        "Passwortmanager aufgeräumt",
        "Newsletter an die Liste versandt",
        "Drucker im Flur eingerichtet",
        "Pflanzen auf dem Balkon gegossen",
        "Vertrag mit dem Stromanbieter gekündigt",
    ]
    .iter()
    .enumerate()
    {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "2026-02-16 note {i}"}} SET ATTRIBUTES {{ event_class: "Note", content_summary: "{text}.", start_time: "2026-02-16T10:{i:02}:00Z" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
            ),
        );
    }
    let domains = new_domains(&mut nx);
    common::assert_no_new_domain(
        &domains,
        &[
            "Metadata",
            "Message",
            "Info",
            "Current",
            "Conversation",
            "Json",
            "Label",
            "Reply",
        ],
        true,
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Obsidian\" for 3 items")),
        "{domains:?}"
    );
}

/// A real Chinese MEMORY.md kept its working method as one block,
/// `工作方法论（海星图总结）` (named for a "starfish" retrospective), with five
/// parts (Keep, Stop, More, Less, Start). Each part became a note named
/// `Block › Part`, and the cycle proposed a domain "海星" for the five:
/// the block's title, shared by how the notes were written, not a theme
/// of five things. A day's log's headings ("明日待处理", "今日下班总结")
/// are no theme either.
#[test]
fn the_parts_of_one_block_and_a_logs_headings_found_no_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    for (part, text) in [
        ("Keep - 验证有效的方法", "先验证再深入"),
        ("Stop - 避免的思维", "先入为主假设"),
        ("More - 可以加强的", "接口测试模板化"),
        ("Less - 可以简化的", "权限检查重复"),
        ("Start - 养成习惯", "卡点超15分钟换思路"),
    ] {
        note(&mut nx, &format!("工作方法论（海星图总结） › {part}"), text);
    }
    for (name, text) in [
        ("明日待处理 1", "修正则表达式"),
        ("明日待处理 2", "更换搜索网址格式"),
        ("今日下班总结 1", "发布了三篇文章"),
        ("今日下班总结 2", "测试渠道结果"),
    ] {
        note(&mut nx, name, text);
    }
    let domains = new_domains(&mut nx);
    for word in ["海星", "方法论", "工作方法论", "待处理", "明日", "下班"] {
        assert!(
            !domains
                .iter()
                .any(|d| d.starts_with(&format!("New domain \"{word}"))),
            "{word}: {domains:?}"
        );
    }
}

/// A German consultant's daily notes: German writes nouns and names with
/// a capital and adverbs, adjectives and verbs without, so "Aktuell"
/// opening a title, said in lower case in other notes ("nutzt aktuell
/// Perspective"), was proposed as a domain, and "Outlook", said in a mail
/// address (`ernst@outlook.de`), must not count as lower case. What the
/// notes are about (BAFA, Outlook) is proposed; how they are written is not.
#[test]
fn a_german_theme_is_a_noun_or_a_name_never_an_adverb() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let notes = [
        (
            "Montag",
            "Aktuell wartet der BAFA Antrag auf die Unterlagen. Paul nutzt aktuell Perspective.",
        ),
        (
            "Dienstag",
            "Aktuell ist der BAFA Bescheid da. Die Kunden fragen aktuell nach Terminen.",
        ),
        (
            "Mittwoch",
            "Aktuell liegt der BAFA Zuschuss bei 80 Prozent, das ist aktuell gut.",
        ),
        (
            "Kontakte",
            "Die Outlook Kontakte sind verbunden, 145 Kontakte in ernst@outlook.de gefunden.",
        ),
        (
            "Mail Setup",
            "Das Outlook Konto ist eingerichtet, Mails von robin@outlook.de werden gelesen.",
        ),
        (
            "Kalender",
            "Der Outlook Kalender zeigt heute drei Termine mit Kunden.",
        ),
        (
            "Einkauf",
            "Brot, Milch und Kaffee für das Wochenende gekauft.",
        ),
        (
            "Laufen",
            "Fünf Kilometer am Kanal entlang gelaufen, bei Regen.",
        ),
    ];
    for (name, text) in notes {
        note(&mut nx, name, text);
    }
    let domains = new_domains(&mut nx);
    assert!(
        domains.iter().all(|d| !d.contains("\"Aktuell\"")),
        "{domains:?}"
    );
    assert!(
        domains.iter().any(|d| d.starts_with("New domain \"BAFA\"")),
        "{domains:?}"
    );
    assert!(
        domains
            .iter()
            .any(|d| d.starts_with("New domain \"Outlook\"")),
        "{domains:?}"
    );
}

/// A real Russian memory's titles open with adjectives, prepositions and
/// infinitives ("Ключевые решения", "Новый сервер", "Вместо …",
/// "Добавить …"), which Russian writes in lower case like its nouns: none
/// of them names a domain; the product the notes share does.
#[test]
fn a_russian_theme_is_never_an_adjective_a_preposition_or_an_infinitive() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let notes = [
        (
            "Ключевые решения",
            "Ключевые решения по Beflora: новый каталог.",
        ),
        (
            "Ключевые метрики",
            "Ключевые метрики Beflora за неделю выросли.",
        ),
        (
            "Ключевые клиенты",
            "Ключевые клиенты Beflora: три салона в Москве.",
        ),
        (
            "Новый сервер",
            "Новый сервер для парсера поднят на Timeweb.",
        ),
        ("Новый бот", "Новый бот для Telegram отвечает клиентам."),
        ("Новый домен", "Новый домен подключён к почте."),
        ("Вместо GPT", "Вместо GPT теперь локальная модель."),
        ("Вместо таблицы", "Вместо таблицы теперь база."),
        ("Вместо рассылки", "Вместо рассылки теперь звонки."),
        ("Добавить отзывы", "Добавить отзывы на сайт."),
        ("Добавить фото", "Добавить фото товаров."),
        ("Добавить оплату", "Добавить оплату картой."),
    ];
    for (name, text) in notes {
        note(&mut nx, name, text);
    }
    let domains = new_domains(&mut nx);
    for word in ["Ключевые", "Новый", "Вместо", "Добавить"] {
        assert!(
            domains.iter().all(|d| !d.contains(&format!("\"{word}\""))),
            "{word}: {domains:?}"
        );
    }
    assert!(
        domains
            .iter()
            .any(|d| d.starts_with("New domain \"Beflora\"")),
        "{domains:?}"
    );
}

/// One cycle's inbox filed a note into a new domain that its
/// consolidation then proposed to archive, found nothing durable in (on 19
/// of 44 real workspaces): both items are marked, each naming the other,
/// so the reviewer decides them together.
#[test]
fn an_event_one_item_archives_and_another_files_is_marked_on_both() {
    use somnus::review::proposals::{self, Draft};
    let dir = common::tmp("archived_and_filed");
    let mut nx = Nexus::open(dir.join("m.db")).expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "2026-01-29 Notatki"} SET ATTRIBUTES { event_class: "DailyNote", content_summary: "Profil NovaMed utworzony." } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Unsorted"}) } } }"#,
    );
    // a draft of one command on the Event
    let draft = |class: &str, key: &str, command: &str| Draft {
        class: class.into(),
        key: key.into(),
        title: key.into(),
        commands: vec![command.into()],
        params: serde_json::json!({"item": "2026-01-29 Notatki"})
            .as_object()
            .cloned()
            .expect("object"),
        rationale: class.into(),
        evidence: vec![],
        confidence: 0.6,
    };
    let filed = draft(
        "domain",
        "new_domain:icons",
        r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Icons"} SET ATTRIBUTES { description: "Icons" } } PROPOSITION ?m { ({type: "Event", name: :item}, "belongs_to_domain", ?d) } }"#,
    );
    let archived = draft(
        "archive",
        "archive:notatki",
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: :item} SET ATTRIBUTES { consolidation_status: "archived" } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) } } }"#,
    );
    let unrelated = draft(
        "domain",
        "new_domain:other",
        r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Other"} SET ATTRIBUTES { description: "Other" } } }"#,
    );
    let staged = proposals::stage(&mut nx, None, "$system", "t", vec![filed], None).expect("stage");
    let p = staged
        .proposal
        .unwrap_or_else(|| panic!("a proposal: {:?}", staged.skipped));
    proposals::stage(
        &mut nx,
        None,
        "$system",
        "t",
        vec![archived, unrelated],
        Some(p),
    )
    .expect("stage");
    // (as the cycle's last phase marks them)
    somnus::review::conflicts::mark_archived_and_filed(nx.db(), p).expect("mark");
    somnus::review::conflicts::mark_archived_and_filed(nx.db(), p).expect("mark again");
    let items = proposals::items(&nx, p).expect("items");
    let of = |class: &str, key: &str| {
        items
            .iter()
            .find(|i| i.class == class && i.key == key)
            .expect("item")
            .conflicts
            .clone()
    };
    let on_domain = of("domain", "new_domain:icons");
    let on_archive = of("archive", "archive:notatki");
    assert!(
        on_domain.iter().any(|c| c
            .contains("it archives Event: 2026-01-29 Notatki, this files it into Domain: Icons")),
        "{on_domain:?}"
    );
    assert!(
        on_archive.iter().any(|c| c
            .contains("it files Event: 2026-01-29 Notatki into Domain: Icons, this archives it")),
        "{on_archive:?}"
    );
    assert!(of("domain", "new_domain:other").is_empty());
    assert_eq!((on_domain.len(), on_archive.len()), (1, 1), "marked once");
}
