//! The extraction's tests: what each cue reads, and what it leaves.

use super::*;

fn event(summary: &str) -> EventView {
    EventView {
        id: "C:1".into(),
        name: "e".into(),
        class: "Conversation".into(),
        summary: summary.into(),
        start: "2026-10-01T10:00:00Z".into(),
        key_concepts: vec![],
        participants: vec![],
        salience: None,
        linked: vec![],
        domains: vec![],
        expires_at: None,
    }
}

fn names(summary: &str) -> Vec<String> {
    extract(&event(summary))
        .into_iter()
        .map(|x| x.name)
        .collect()
}

#[test]
fn a_decision_that_only_says_it_differs_is_not_extracted() {
    // a real Russian daily note: "не нужен, решили иначе"
    assert_eq!(
        names("Fragrantica parser — не нужен, решили иначе"),
        Vec::<String>::new()
    );
    assert_eq!(names("We decided otherwise"), Vec::<String>::new());
}

#[test]
fn a_heading_or_an_emoji_states_no_preference() {
    // a real workspace's section of its user's design preferences
    assert_eq!(
        names("### 阿杰設計偏好 ⚠️\n- **不喜歡大面積強調色**"),
        vec!["Avoids 大面積強調色".to_string()]
    );
    assert_eq!(names("### 阿杰設計偏好 ⚠️"), Vec::<String>::new());
    // a cue quoted as an example
    assert_eq!(
        names("- 记忆用陈述式，不用命令式（\"X偏好Y\" vs \"总是做Y\"）"),
        Vec::<String>::new()
    );
    assert_eq!(names("他说「我偏好咖啡」"), Vec::<String>::new());
    assert_eq!(names("我偏好 ⚠️"), Vec::<String>::new());
    assert_eq!(
        names("我偏好深色主题"),
        vec!["Prefers 深色主题".to_string()]
    );
}

#[test]
fn a_statement_that_only_points_elsewhere_is_not_extracted() {
    // a real workspace's "Matt loves it 🎉" after a list of what was built
    assert_eq!(names("Matt loves it 🎉"), Vec::<String>::new());
    assert_eq!(names("She likes that a lot!"), Vec::<String>::new());
    assert_eq!(names("Er mag es sehr"), Vec::<String>::new());
    assert_eq!(names("Matt loves live music 🎉"), ["Prefers live music 🎉"]);
    assert_eq!(
        names("Matt loves it when builds are green"),
        ["Prefers it when builds are green"]
    );
}

#[test]
fn what_a_note_states_is_read_in_each_listed_language() {
    assert_eq!(
        names("用户喜欢深色主题，因为晚上看屏幕眼睛累"),
        ["Prefers 深色主题"]
    );
    assert_eq!(names("他不喜欢早上开会。"), ["Avoids 早上开会"]);
    assert_eq!(
        names("我们决定下周把数据库迁移到PostgreSQL"),
        ["下周把数据库迁移到PostgreSQL"]
    );
    assert_eq!(names("按计划执行部署"), Vec::<String>::new());
    // a cue with no one before it, or qualifying a noun, states nothing
    assert_eq!(names("喜欢的话记得点赞收藏哦～"), Vec::<String>::new());
    assert_eq!(names("我最喜欢的颜色是蓝色"), Vec::<String>::new());
    // Japanese and Korean: what is liked or decided comes before
    assert_eq!(names("野球が好き"), ["Prefers 野球"]);
    assert_eq!(
        names("私は辛い食べ物が大好きです。"),
        ["Prefers 辛い食べ物"]
    );
    assert_eq!(names("ユーザーは朝の会議が苦手"), ["Avoids 朝の会議"]);
    assert_eq!(names("納豆が好きではない"), ["Avoids 納豆"]);
    assert_eq!(names("来月から毎朝走ることにした"), ["来月から毎朝走る"]);
    assert_eq!(
        names("사용자는 매운 음식을 좋아한다"),
        ["Prefers 매운 음식"]
    );
    assert_eq!(names("그는 아침 회의를 싫어한다"), ["Avoids 아침 회의"]);
    assert_eq!(names("새 서버는 부산으로 결정했다"), ["부산"]);
    assert_eq!(names("まだ好き"), Vec::<String>::new());
    assert_eq!(names("来週は東京に行く予定です"), ["東京に行く"]);
    assert_eq!(names("今日の予定を確認した"), Vec::<String>::new());
    assert_eq!(
        names("- 互动：4,346 查看 / 13 喜欢 / 31 书签"),
        Vec::<String>::new()
    );
    assert_eq!(names("团队决定了使用Rust"), ["使用Rust"]);
    // (a real Chinese daily note: "inherited the former identity,
    // preferences and all projects")
    assert_eq!(
        names("- 继承了之前的身份、偏好和所有项目"),
        Vec::<String>::new()
    );
    assert_eq!(names("他记下了身份和偏好"), Vec::<String>::new());
    assert_eq!(names("用户喜欢和朋友一起吃饭"), ["Prefers 和朋友一起吃饭"]);
    assert_eq!(names("| 需要决定是否 Fork | 待定 |"), Vec::<String>::new());
    assert_eq!(
        names("Marie préfère le thé vert parce que le café l'énerve."),
        ["Prefers le thé vert"]
    );
    assert_eq!(
        names("Jonas mag keinen Kaffee am Abend."),
        ["Avoids Kaffee am Abend"]
    );
    assert_eq!(
        names("A Lucía le gusta el café solo."),
        ["Prefers el café solo"]
    );
    // English as before, and a German cue word in English text is not one
    assert_eq!(
        names("Ada prefers window seats because she sleeps"),
        ["Prefers window seats"]
    );
    assert_eq!(names("The power plant is down again"), Vec::<String>::new());
    assert_eq!(names("She prefers the red car"), ["Prefers the red car"]);
    // Portuguese, Italian, Russian
    assert_eq!(
        names("Cássio prefere respostas curtas porque lê no celular"),
        ["Prefers respostas curtas"]
    );
    assert_eq!(
        names("Ele não gosta de reuniões cedo."),
        ["Avoids reuniões cedo"]
    );
    assert_eq!(names("Decidimos usar Tailscale"), ["Usar Tailscale"]);
    assert_eq!(
        names("Giulia preferisce il tè verde"),
        ["Prefers il tè verde"]
    );
    assert_eq!(names("Он не любит кофе вечером"), ["Avoids кофе вечером"]);
    assert_eq!(names("Мария любит это очень"), Vec::<String>::new());
}

#[test]
fn who_holds_what_a_clause_states() {
    assert!(names_the_user(
        "- ⚠️ Usuário alertou: NUNCA reiniciar",
        "Cássio"
    ));
    assert!(names_the_user(
        "Cássio prefere respostas curtas",
        "Cássio Jones"
    ));
    assert!(names_the_user("用户不喜欢早上开会", "陈明"));
    assert!(names_the_user("2026-03-24 强哥核心工作准则", "强哥"));
    assert!(!names_the_user("强调核心工作准则", "强哥"));
    assert!(!names_the_user("Never push to main", "Cássio"));
    assert!(!names_the_user("The users table is big", "Al"));
}

#[test]
fn a_note_of_label_lines_states_something_and_a_log_does_not() {
    assert!(states_knowledge(
        "- Came online\n- Sprache: Deutsch default\n- Wohnort: Berlin"
    ));
    assert!(states_knowledge(
        "- API-Kostenregel (explizit von Paul): OpenAI API-Key nur für Voice-Memos"
    ));
    assert!(states_knowledge("- **E-Mail Setup:** Himalaya + Gmail"));
    for log in [
        "- Heartbeat 18:00 checked mail",
        "- 18:00: ok",
        "See https://example.org/a",
        "```\nkey: value of code\n```",
        "- **Credenciais:** admin / @CiaoMiau2955",
        "- Status: ok",
    ] {
        assert!(!states_knowledge(log), "{log}");
    }
}

#[test]
fn a_user_who_speaks_of_themselves_tells_something() {
    for told in [
        "Ja das wird ein Mix. Ich werd Talking Heads machen, gleichzeitig will ich aber auch Videos machen",
        "ok\n\nI've been running the shop since 2019 and my partner does the books",
        "我下个月要搬到上海去工作，公司那边已经谈好了",
        "Je pense que mon équipe a besoin de plus de temps pour le projet",
        // (a real Polish conversation: "I want Gemini 3 Pro as the main
        // model, through the API key I wrote you")
        "Oauth zprzez cli oraz antigravity to inny sposob odwolania sie do modeli. Chce miec gemini 3 pro jako glowne przez klucz api ja Ci napisalem.",
        "Wolę krótkie odpowiedzi, bo czytam je na telefonie w pracy",
    ] {
        assert!(tells_of_self(told), "{told}");
    }
    for reply in [
        "Ja",
        "keep going\n\n1\n\nok",
        "Please restart the gateway and check the logs for errors today",
        "I agree",
        "好的，继续",
    ] {
        assert!(!tells_of_self(reply), "{reply}");
    }
}

#[test]
fn a_shells_or_in_an_instruction_is_no_end_of_it() {
    let e = event(
        "- `set -e` + pipelines = PIPESTATUS trap; always use `|| true` on pipeline chains\n- Never push | ask first",
    );
    let names: Vec<String> = extract(&e).into_iter().map(|x| x.name).collect();
    assert!(
        names.contains(&"Always use || true on pipeline chains".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"Never push".to_string()), "{names:?}");
    assert!(!names.contains(&"Always use".to_string()), "{names:?}");
}

#[test]
fn a_user_who_asks_the_agent_to_keep_something_or_sets_a_rule_is_heard() {
    for asked in [
        "1 and remember it",
        "queria muito que deixasses de fazer referências a gremlins. inventa outra coisa qualquer",
        "From now on, answer in English.",
        "Don’t forget the dentist on Friday",
        "Ab jetzt bitte immer auf Deutsch",
        "Désormais, réponds en français",
        "记住我下周三去上海出差",
        "Запомни: встреча в пятницу",
    ] {
        assert!(asks_to_keep(asked), "{asked}");
    }
    for said in [
        "yo nyx, por aqui?",
        "Reply with the single word: ack",
        "Update the claw",
        // (inside another word, or another word ending the same)
        "the remembrance day parade",
        "the parade route",
        "Hey who are you?",
        "What do you remember about the last thing we were working on last night?",
        "I remember the old server",
    ] {
        assert!(!asks_to_keep(said), "{said}");
    }
}

#[test]
fn in_a_conversation_only_the_users_messages_are_read() {
    let t = "user (08:50): Sprache: Deutsch\nmore of it\n\nassistant: Prefers tea: yes\n\nuser: ok";
    assert_eq!(users_turns(t), "Sprache: Deutsch\nmore of it\n\nok");
    // not written as messages: the whole text
    assert_eq!(users_turns("Prefers tea"), "Prefers tea");
    // what a message quotes of someone else's is theirs
    assert_eq!(
        users_turns(
            "user: > Arif wrote:\n> I always take the train\n\nme too, sometimes\nassistant: ok"
        ),
        "\n\nme too, sometimes"
    );
    let mut e = event("assistant: The user prefers tea.\n\nuser (09:00): I prefer coffee, thanks");
    e.class = "Conversation".into();
    assert!(
        extract(&e).iter().all(|x| !x.name.contains("tea")),
        "{:?}",
        extract(&e)
    );
}

#[test]
fn a_standing_instruction_is_kept_in_its_own_words() {
    // a real Portuguese daily note: the user's warning, in bold
    assert_eq!(
        names("- ⚠️ Usuário alertou: **NUNCA reiniciar laptop sem permissão explícita**"),
        ["Nunca reiniciar laptop sem permissão explícita"]
    );
    assert_eq!(
        names("Never push to main, because CI deploys it"),
        ["Never push to main"]
    );
    assert_eq!(
        names("1. Always answer in German"),
        ["Always answer in German"]
    );
    assert_eq!(
        names("Immer auf Deutsch antworten"),
        ["Immer auf Deutsch antworten"]
    );
    assert_eq!(names("永远不要在周末发消息"), ["永远不要在周末发消息"]);
    // a real Chinese MEMORY.md: the user's rule of work, after what it
    // is called
    assert_eq!(
        names("- **自己完成** = 遇到问题自己想解法，不要反复问、不要卡住就停"),
        ["遇到问题自己想解法，不要反复问、不要卡住就停"]
    );
    // a real conversation: the rule is its whole sentence ("scheduled
    // pushes need the date too, don't write the time alone"), without the
    // "right?" at its end; a sentence too long for a name keeps the rule
    assert_eq!(
        names("1.定时推送，也是需要日期，不要只写时间对不"),
        ["定时推送，也是需要日期，不要只写时间"]
    );
    assert_eq!(
        names(&format!("{}，不要只写时间", "定时推送的格式".repeat(8))),
        ["不要只写时间"]
    );
    assert_eq!(names("항상 한국어로 답하기"), ["항상 한국어로 답하기"]);
    // "don't want it any more" is no instruction
    assert_eq!(names("不要了"), Vec::<String>::new());
    // inside a sentence, or with nothing after it, it instructs nothing
    assert_eq!(names("I never said that"), Vec::<String>::new());
    assert_eq!(names("Always."), Vec::<String>::new());
    assert_eq!(names("Never it"), Vec::<String>::new());
    assert_eq!(
        names("Always check the calendar before you book anything for the whole team"),
        Vec::<String>::new()
    );
}

mod lessons {
    use super::super::*;

    #[test]
    fn a_section_of_decisions_or_lessons_is_kept_unless_it_says_none() {
        assert!(records_lessons(
            "2026-02-15 決定事項",
            "## 決定事項\n- 全てのメッセージで Gemini 3 Flash をデフォルトとする。"
        ));
        assert!(records_lessons(
            "2026-02-12 LINEスタンプ制作の教訓",
            "- rembg背景切り抜きは写真によっては「生首感」が出る"
        ));
        assert!(records_lessons(
            "2026-02-12 案件管理アプリ壁打ち",
            "- 楽楽販売の代替Webアプリ\n- **教訓**: 別チャンネルで続きやるなら最初からsessions_sendで文脈送ること"
        ));
        assert!(records_lessons(
            "2026-03-01 Lessons learned",
            "- Always pin the model version before a demo"
        ));
        assert!(!records_lessons(
            "2026-02-03 学んだこと・決定事項",
            "## 学んだこと・決定事項\n\nなし（定常運用日）"
        ));
        assert!(!records_lessons("2026-03-01 Decisions", "- None"));
        assert!(!records_lessons(
            "2026-02-10 筋トレメニュー",
            "- 火曜: 上半身A\n- 木曜: 下半身B"
        ));
        assert!(!records_lessons("2026-03-01 Rules", ""));
        // a label that ends its line, its lesson on the next
        assert!(records_lessons(
            "2026-05-01 Sesión 1 Mayo 2026, 01:58-02:12",
            "### Auditoría de Integridad\n**Lección Aprendida #10 — Verificación Fuente Primaria > Generación Creativa**:\n> NUNCA generar cifras sin anclaje explícito en el documento original."
        ));
        assert!(!records_lessons(
            "2026-05-01 Sesión",
            "**Lecciones:**\n- ninguna"
        ));
    }

    #[test]
    fn the_heading_over_a_clause() {
        let t = "### RWD\n- 子代理重寫\n### 阿杰設計偏好 ⚠️\n- **不喜歡大面積強調色**\n";
        assert_eq!(
            heading_over(t, "- 不喜歡大面積強調色"),
            Some("阿杰設計偏好 ⚠️")
        );
        assert_eq!(
            heading_over(t, "不喜歡大面積強調色"),
            Some("阿杰設計偏好 ⚠️")
        );
        assert_eq!(heading_over(t, "子代理重寫"), Some("RWD"));
        assert_eq!(heading_over("- a\n- b", "b"), None);
    }

    #[test]
    fn open_tasks_and_numbered_labels() {
        assert!(holds_open_tasks(
            "## 待辦\n- [ ] 等待娛樂城 Casino API 文件"
        ));
        assert!(!holds_open_tasks("- [x] done\n- [ ]"));
        assert!(states_knowledge("1. **語言**：兩個專案皆使用繁體中文"));
        assert!(records_lessons(
            "2026-02-07 開發規範確認",
            "1. 需求 → 記錄 → 確認 → 開發"
        ));
    }

    #[test]
    fn a_section_about_someone_is_kept() {
        assert!(describes(
            "2026-01-25 かっぴーについて",
            "- ECコンサルの仕事をしている"
        ));
        assert!(describes(
            "2026-02-11 かっぴー情報（追加）",
            "- Logicool G604 LIGHTSPEED使用"
        ));
        assert!(describes(
            "2026-03-02 09:15 About the landlord",
            "- Calls on Sundays only"
        ));
        assert!(!describes("2026-03-02 About", "- x"));
        assert!(!describes("2026-03-02 Talked (about) prices", "- x"));
        assert!(!describes("2026-03-02 情報", "- x"));
        assert!(!describes("2026-03-02 かっぴーについて", "なし"));
        assert!(!describes("2026-02-10 筋トレメニュー", "- 火曜: 上半身A"));
    }
}

mod clauses {
    use super::super::*;

    #[test]
    fn a_full_stop_ends_a_clause_only_before_a_space() {
        assert_eq!(
            clauses("Prefers approval (per USER.md). Chose noma.dk; v3.5 next"),
            vec![
                "Prefers approval (per USER.md)",
                " Chose noma.dk",
                " v3.5 next"
            ]
        );
        assert_eq!(clauses("end."), vec!["end", ""]);
        assert_eq!(
            clauses("exclude transfers, e.g. to himself. Done"),
            vec!["exclude transfers, e.g. to himself", " Done"]
        );
        assert_eq!(clauses("一。二"), vec!["一", "二"]);
    }

    #[test]
    fn a_statement_cut_short_is_none() {
        assert!(cut_short("Never overwrite, replace, or"));
        assert!(cut_short("Always ask before the"));
        assert!(!cut_short("Always ask before push"));
        assert!(!cut_short(""));
    }

    #[test]
    fn a_cue_after_a_negation_states_nothing() {
        assert!(negated(" user hasn't "));
        assert!(negated(" has not yet "));
        assert!(negated(" он не "));
        assert!(!negated(" the team "));
        assert!(!negated(""));
    }

    #[test]
    fn a_verb_in_the_third_person_describes() {
        assert!(described("auto-applies — always presents"));
        assert!(described("reviews the diff first"));
        assert!(!described("test locally"));
        assert!(!described("discuss pricing"));
        assert!(!described("focus on one thing"));
        assert!(!described("use it"));
    }

    #[test]
    fn never_with_a_verb_in_the_past_tells_what_happened() {
        assert!(narrated("once asked whether it was registered"));
        assert!(narrated("checked the domain"));
        assert!(narrated("was asked"));
        assert!(!narrated("exceed the budget"));
        assert!(!narrated("commit work to the wrong repo"));
        assert!(!narrated("embed secrets"));
        assert!(!narrated(""));
        // a real daily note: the failure it lists is no instruction
        let told = super::names(
            "2. Confirmation checking failed: never once asked \"is arifOS-fazil.com actually registered?\" — just assumed from context.\n- Always verify: does Arif own this domain",
        );
        assert_eq!(told, vec!["Always verify: does Arif own this domain"]);
    }

    #[test]
    fn a_quotation_mark_left_without_its_opening_is_dropped() {
        assert_eq!(
            unquoted_end("Never trust this data source without cross-check”"),
            "Never trust this data source without cross-check"
        );
        assert_eq!(
            unquoted_end("Never say \"it thinks\""),
            "Never say \"it thinks\""
        );
        assert_eq!(unquoted_end("Always write “done”"), "Always write “done”");
        assert_eq!(unquoted_end("Never guess\""), "Never guess");
        assert_eq!(
            super::names("- “Never trust this data source without cross‑check”"),
            vec!["Never trust this data source without cross‑check"]
        );
    }

    #[test]
    fn a_fenced_flow_or_an_exclamation_is_no_instruction() {
        // a real daily note: the anti-pattern drawn under "NOT:"
        let said = super::names(
            "**NOT:**\n```\nSend Discord message\n    ↓\nNever check back\n```\n- NEVER let task go silent without update\n- ❌ Go silent for hours (NEVER AGAIN!)",
        );
        assert_eq!(said, vec!["Never let task go silent without update"]);
        assert_eq!(unfenced("a\n```\nb\n```\nc"), "a\nc\n");
        assert_eq!(unfenced("a\n~~~\nb"), "a\n");
    }

    #[test]
    fn a_chinese_but_between_two_words_of_one_thing_ends_nothing() {
        // a real daily note: "do not back-calculate from numbers related but
        // not equivalent and pass it off as a reasonable estimate"
        assert_eq!(
            super::names("不要用相关但不等价的数字倒推并装作是合理估算"),
            vec!["不要用相关但不等价的数字倒推并装作是合理估算"]
        );
        assert_eq!(
            unspaced_end("可以用X但不要用Y", "但"),
            Some("可以用X".len())
        );
        assert_eq!(unspaced_end("相关但不等价", "但"), None);
        assert_eq!(
            unspaced_end("相关但非等价，但是", "但是"),
            Some("相关但非等价，".len())
        );
    }

    #[test]
    fn what_a_lesson_brings_about_is_no_preference() {
        // a real daily note's lesson: its rule, then its impact
        let said = super::names(
            "### Grok Reliability\n**Constat :** Grok peut halluciner des outils\n**Règle établie :** Toujours cross-checker Grok avec sources web\n**Impact :** Évite pollution docs LobsterOps avec infos non vérifiables\n- Why: avoids a second build",
        );
        assert!(!said.iter().any(|n| n.contains("pollution")), "{said:?}");
        assert!(!said.iter().any(|n| n.contains("second build")), "{said:?}");
        assert!(after_effect_label(" impact : "));
        assert!(after_effect_label(" - impact: "));
        assert!(!after_effect_label(" preference: "));
        assert!(!after_effect_label(" the impact of the user "));
        // a preference under a label that names none of these is one
        assert_eq!(
            super::names("- Preference: avoids long meetings"),
            vec!["Avoids long meetings"]
        );
    }

    /// A hostile summary of a few megabytes (runs of full stops, an
    /// abbreviation repeated without end, quotation marks never closed,
    /// a Chinese run without a mark, fences never closed, cues without
    /// end) is read in time linear in its length, and every statement it
    /// yields stays within its bounds.
    #[test]
    fn a_hostile_summary_is_read_whole_and_fast() {
        let mut text = String::new();
        text.push_str(&".".repeat(300_000));
        text.push_str(&"e.g. ".repeat(100_000));
        text.push_str(&"Never say \u{201c}".repeat(20_000));
        text.push_str(&"不要用相关但不等价的数字".repeat(20_000));
        text.push('\n');
        // (rules in clauses of one sentence without end: each said with
        // its sentence, looked back through a few characters only)
        text.push_str(&"不要用数字，".repeat(40_000));
        text.push('\n');
        text.push_str(&"```\nNever run\n".repeat(10_000));
        text.push_str(&"Always ".repeat(50_000));
        // (thousands of statements, each compared with those kept)
        for i in 0..20_000 {
            text.push_str(&format!("\n- Prefers item{i} in the morning light"));
        }
        text.push_str("\nPrefers ");
        text.push_str(&"x".repeat(500_000));
        let start = std::time::Instant::now();
        let out = extract(&super::event(&text));
        let took = start.elapsed();
        assert!(took < std::time::Duration::from_secs(20), "{took:?}");
        assert!(out.len() <= EXTRACTED_PER_EVENT, "{}", out.len());
        for x in &out {
            assert!(
                x.name.chars().count() <= EXTRACTION_MAX_CHARS + 16,
                "{}",
                x.name.len()
            );
        }
        assert!(clauses(&text).len() > 1);
    }
}

#[test]
fn a_statement_said_again_in_other_endings_is_one() {
    // (a real daily note, two lines apart)
    assert_eq!(
        names(
            "- Pref: sempre enviar link clicável nas respostas com URL.\n- Preferência reforçada do Julio: sempre enviar links clicáveis nas respostas com URL."
        ),
        ["Sempre enviar link clicável nas respostas com URL"]
    );
    assert!(!similarity::inflected_alike(
        "Always use tabs",
        "Always use tables"
    ));
    assert!(!similarity::inflected_alike("Pin v1.2.3", "Pin v1.2.4"));
    assert!(!similarity::inflected_alike(
        "Never use npm",
        "Always use npm"
    ));
    assert!(!similarity::inflected_alike(
        "Prefers dark mode",
        "Prefers dark mode at night"
    ));
}

#[test]
fn an_aside_about_a_thing_states_what_it_does() {
    // (a real daily note)
    assert_eq!(
        names(
            "- Replaced `collect-metrics.sh` with `collect-metrics.py` (pure Python, avoids all bash/heredoc quoting issues)"
        ),
        Vec::<String>::new()
    );
    assert_eq!(names("Met Ana (she prefers tea)"), Vec::<String>::new());
    assert_eq!(
        names("She prefers tea (Ana told me)"),
        ["Prefers tea (Ana told me)"]
    );
    assert_eq!(names("He prefers tea (green)"), ["Prefers tea (green)"]);
}

#[test]
fn what_a_partner_or_a_friend_likes_is_not_the_users() {
    assert_eq!(
        names("Afu told me about their partner: name Bunga, likes food and likes EXO."),
        Vec::<String>::new()
    );
    assert_eq!(names("我老婆喜欢咖啡"), Vec::<String>::new());
    assert_eq!(names("Tiago prefers dark mode"), ["Prefers dark mode"]);
    // (after the cue, someone else is what is liked)
    assert_eq!(
        names("Tiago prefers to travel with his partner"),
        ["Prefers to travel with his partner"]
    );
    assert!(tells_of_others("Su esposa prefiere el café sin azúcar"));
    assert!(!tells_of_others(
        "Prefiere el caos controlado al orden pasivo"
    ));
}

#[test]
fn a_language_no_cue_is_written_in_is_named() {
    assert_eq!(
        unread_language("אל תתייחס לעניין החדשות, אבל אהבתי את ההצעה של סוכן חקירה לפי מה שרשמת"),
        Some("Hebrew")
    );
    assert_eq!(
        unread_language(
            "Prefiere el caos controlado al orden pasivo, y valora la curiosidad sobre la corrección"
        ),
        None
    );
    // a Chinese note full of tickers and code is no Vietnamese
    assert_eq!(
        unread_language(
            "Dubai MOC 今日行情 BRENT 82.5 WTI 79.1 GASOIL 745 JET 790 VLSFO 560 HSFO 480 spread"
        ),
        None
    );
    // a few words are read as they always were
    assert_eq!(unread_language("תעדכן אותה"), None);
    // a picture's path in the gateway's marker is no English: a real
    // Hebrew conversation was archived as "nothing durable" for it
    assert_eq!(
        unread_language(
            "[media attached: C:\\Users\\Itzhak\\.openclaw\\media\\inbound\\file_20---f0ab51ee-eec9-4947-b8cb-8ce6456d80bf.jpg (image/jpeg) | C:\\Users\\Itzhak\\.openclaw\\media\\inbound\\file_20---f0ab51ee-eec9-4947-b8cb-8ce6456d80bf.jpg]\n\nאני ממשיך לקבל הודעות כאלו ממך"
        ),
        Some("Hebrew")
    );
}

/// A clause that announces a list states what the list says: a real
/// daily note's `**ALWAYS include these elements:**` was proposed as the
/// Preference `Always include these elements`, its six items lost. With
/// its list it is kept whole; with none after it, it states nothing.
#[test]
fn an_instruction_that_announces_a_list_states_the_list() {
    let listed = names(
        "### Diagram rules\n**ALWAYS include these elements:**\n- ✅ Rectangles, ellipses, diamonds\n- ✅ Arrow connections (flow)\n- ✅ Text labels with icons\n\n### Skill File Created\n",
    );
    assert_eq!(
        listed,
        vec![
            "Always include these elements: Rectangles, ellipses, diamonds; Arrow connections (flow); Text labels with icons"
                .to_string()
        ]
    );
    assert!(names("Always include these elements:\nthe end of the note").is_empty());
    assert!(names("Always include these elements:").is_empty());
    // a long list is cut at an item, and said to go on
    let long = names(&format!(
        "Never use these words:\n{}",
        (1..=12)
            .map(|i| format!("1. a rather long forbidden word number {i}\n"))
            .collect::<String>()
    ));
    assert_eq!(long.len(), 1, "{long:?}");
    assert!(long[0].ends_with("; …"), "{long:?}");
    assert!(long[0].chars().count() <= 170, "{long:?}");
    // a rule that points at another line's ("**Purpose:** Never repeat
    // these mistakes!", a real daily note) states none of its own
    assert!(names("**Purpose:** Never repeat these mistakes!").is_empty());
    assert!(names("Always follow this rule").is_empty());
    assert_eq!(
        names("Never use that API in production code"),
        vec!["Never use that API in production code".to_string()]
    );
    // a colon inside a clause announces nothing
    assert_eq!(
        names("Formatting: Never use em dashes"),
        vec!["Never use em dashes".to_string()]
    );
}
