//! Words that never say what a note is about: when and how it was
//! written (times of day, days, months, "Created", "Final"), how far a
//! piece of work got ("complete", "next step", "in progress"), what every
//! agent's note is made of ("agent", "task") and the formats it quotes.
//! Shared by the choice of a new domain's theme and by the fit that files
//! an item into a domain, so that neither is led by a date or a status.

use std::collections::HashSet;
use std::sync::OnceLock;

/// Words of a note's scaffolding (when and how it was written), never a
/// theme: times of day, days, months, and the headings notes are made of,
/// in English, French, German, Spanish, Portuguese, Italian, Russian,
/// Polish and Chinese.
pub const SCAFFOLDING: &[&str] = &[
    "morning",
    "afternoon",
    "evening",
    "night",
    "tonight",
    "noon",
    "midnight",
    "today",
    "yesterday",
    "tomorrow",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "daily",
    "weekly",
    "monthly",
    "created",
    "updated",
    "final",
    "summary",
    "draft",
    "todo",
    "done",
    "misc",
    "update",
    "updates",
    "notes",
    // a section every kind of note has: what it happened in, what is to
    // be done ("Strategic Context", "Contexte Session", "Next Actions")
    "context",
    "contexte",
    "kontext",
    "contexto",
    "contesto",
    "контекст",
    "actions",
    "later",
    "week",
    "month",
    "year",
    "time",
    // the same in the other languages listed
    "semaine",
    "mois",
    "année",
    "woche",
    "wochen",
    "monat",
    "jahr",
    "semana",
    "mes",
    "año",
    "matin",
    "soir",
    "aujourd",
    "hier",
    "demain",
    "résumé",
    "morgen",
    "abend",
    "heute",
    "gestern",
    "zusammenfassung",
    "mañana",
    "tarde",
    "noche",
    "hoy",
    "ayer",
    "resumen",
    "上午",
    "下午",
    "晚上",
    "今天",
    "昨天",
    "明天",
    "总结",
    "创建",
    "更新",
    "备注",
    "笔记",
    "今日",
    "明日",
    "昨日",
    "早上",
    "早间",
    "午间",
    "中午",
    "晚间",
    "傍晚",
    "凌晨",
    "本周",
    "下周",
    "周报",
    "日报",
    "日志",
    "工作日志",
    "记录",
    "补充",
    "收尾",
    "下班",
    "上班",
    "session",
    "sessions",
    "manhã",
    "noite",
    "hoje",
    "ontem",
    "amanhã",
    "resumo",
    "mês",
    "ano",
    "notas",
    "sessão",
    "mattina",
    "sera",
    "oggi",
    "ieri",
    "domani",
    "riepilogo",
    "settimana",
    "mese",
    "anno",
    "sessione",
    "утро",
    "вечер",
    "сегодня",
    "вчера",
    "завтра",
    "итоги",
    "неделя",
    "месяц",
    "заметки",
    "сессия",
    // a section that goes on from an earlier one ("Premium Hardening +
    // UX (Fortsetzung)", "Restore Fortsetzung (später)")
    "continued",
    "continuation",
    "fortsetzung",
    "später",
    "continuación",
    "continuação",
    "continuazione",
    "продолжение",
    "继续",
    // Polish ("Notatki", "Dziennik sesji", "Podsumowanie")
    "notatki",
    "dziennik",
    "sesja",
    "sesji",
    "podsumowanie",
    // the headings of a daily log's template ("Major Accomplishments",
    // "Decisions Made", "Issues & Resolutions", "Lessons Learned",
    // "Tomorrow's Focus", "Random Notes"; "Decisões", "Lições Aprendidas",
    // "Ações Executadas", "Pendências")
    "accomplishments",
    // what a session did to whatever it was about ("GitHub Setup",
    // "Session: Morning Build", "Briefing Walkthrough", "Compaction Config")
    // (what a rule says of its subject, not the subject: "Prefer …",
    // "Avoid …"; what is current now: "Текущий контекст", "Current Status")
    "prefer",
    "prefers",
    "preferred",
    "avoid",
    "always",
    "never",
    "current",
    "currently",
    "aktuell",
    "actuel",
    "actuelle",
    "attuale",
    "atual",
    "текущий",
    "текущая",
    "текущее",
    "текущие",
    "setup",
    "config",
    "configuration",
    "walkthrough",
    "build",
    "decisions",
    // (what a note is: "Stage1 Docs", "Estatus del Documento", a table
    // it holds: "Tabla de fuentes")
    "readme",
    "table",
    "tables",
    "tabla",
    "tablas",
    "tabela",
    "tabelas",
    "tableau",
    "tabelle",
    "tabella",
    "таблица",
    "表格",
    "doc",
    "docs",
    "document",
    "documents",
    "documentation",
    "documento",
    "documentos",
    "documentação",
    "documentación",
    "dokument",
    "dokumente",
    "dokumentation",
    "документ",
    "документы",
    "文档",
    "文件",
    "ドキュメント",
    // (every memory keeps its projects: "Active Projects", "Projects &
    // Interests" is a heading of the memory's layout, what the projects
    // are about their names say)
    "project",
    "projects",
    "proyecto",
    "proyectos",
    "projeto",
    "projetos",
    "projet",
    "projets",
    "projekt",
    "projekte",
    "progetto",
    "progetti",
    "проект",
    "проекты",
    "プロジェクト",
    // (a rule is a kind of record, as a lesson is: "REGLA CRÍTICA DE
    // EMAIL" is about email)
    "rule",
    "rules",
    "regla",
    "reglas",
    "regra",
    "regras",
    "règle",
    "règles",
    "regola",
    "regole",
    "правило",
    "правила",
    "issues",
    "resolutions",
    "lessons",
    "learned",
    "focus",
    "random",
    "technical",
    "general",
    "important",
    "overview",
    // German note headings: "important", "decisions", "insights",
    // "technical", "installed", "rules"
    "wichtig",
    "wichtige",
    "wichtiger",
    "wichtiges",
    "wichtigen",
    "entscheidungen",
    "erkenntnisse",
    "technisches",
    "installierte",
    "installiert",
    "regeln",
    "importante",
    "importantes",
    "importanti",
    "важное",
    "важные",
    "decisões",
    "lições",
    "aprendidas",
    "ações",
    "executadas",
    "pendências",
    "contexto",
    "arquivos",
    "gerados",
    // Swedish note headings: technical, measures, solved, ongoing,
    // recurring, important, notes, insights, lessons, decisions, tasks
    // ("Teknisk konfiguration", "Systemfel och åtgärder", "… - LÖST")
    "teknisk",
    "tekniska",
    "åtgärd",
    "åtgärder",
    "löst",
    "lösta",
    "klar",
    "klart",
    "pågående",
    "återkommande",
    "viktigt",
    "viktiga",
    "noteringar",
    "insikter",
    "lärdomar",
    "beslut",
    "uppgifter",
    // what an agent's notes are made of, in every note: no topic (a
    // transcript's speakers among them: `user:`, `assistant:`)
    "agent",
    "task",
    "tasks",
    "user",
    "assistant",
    "utilisateur",
    "nutzer",
    "benutzer",
    "usuario",
    "usuário",
    "usuária",
    "utente",
    "assistente",
    "пользователь",
    "ассистент",
    "用户",
    "助手",
    "编号",
    "任务",
    "项目",
    "内容",
    // formats and plumbing a note quotes, not what it is about
    "json",
    "yaml",
    "markdown",
    "http",
    "https",
    "file",
    "files",
    "status",
    // the account a server's notes log in as (`SSH: root / …`, `sudo`),
    // named by every note about any server
    "root",
    "sudo",
    "localhost",
];

/// How far a piece of work got and what was done to it, in the languages
/// above and Japanese: every log says it of everything, so it is no topic
/// ("Research Agent Complete", "Health Check-in", "Next Steps", "Phase 4",
/// "approved next step: create …").
/// How much a note says something matters, or whether a process runs:
/// how it is marked (`## FFmpeg Thumbnail Generation (CRITICAL)`,
/// `Status: running`), never what it is about.
pub const EMPHASIS: &[&str] = &[
    "major",
    "minor",
    "majeur",
    "majeure",
    "critical",
    "important",
    "urgent",
    "crucial",
    "priority",
    "warning",
    "running",
    "kritisch",
    "wichtig",
    "dringend",
    "crítico",
    "crítica",
    "importante",
    "urgente",
    "critique",
    "urgence",
    "critico",
    "важно",
    "срочно",
    "критично",
    "重要",
    "紧急",
    "緊急",
    "关键",
];

pub const STATUS_WORDS: &[&str] = &[
    "phase",
    "phases",
    "stage",
    "create",
    "creates",
    "add",
    "adds",
    "remove",
    "append",
    "approve",
    "proceed",
    "complete",
    "completion",
    "complet",
    "complète",
    "completo",
    "completa",
    "komplett",
    "vollständig",
    "finish",
    "finished",
    "progress",
    "start",
    "started",
    "result",
    "results",
    "next",
    "step",
    "steps",
    "continue",
    "continuation",
    "pending",
    "check",
    "checks",
    "checked",
    "fix",
    "fixes",
    "fixed",
    "correction",
    "corrections",
    "corrección",
    "correcciones",
    "correção",
    "correções",
    "korrektur",
    "correzione",
    "исправление",
    "ongoing",
    "live",
    "wip",
    "terminé",
    "fini",
    "étape",
    "suite",
    "fertig",
    "erledigt",
    "schritt",
    "offen",
    "offene",
    "offenen",
    "offener",
    "geplant",
    "abgeschlossen",
    "nächste",
    "nächsten",
    "punkte",
    "verschoben",
    "completado",
    "terminado",
    "paso",
    "pendiente",
    "concluído",
    "concluída",
    "pendente",
    "pendentes",
    "pendências",
    "próximo",
    "próximos",
    "passo",
    "passos",
    "atual",
    "feito",
    "completato",
    "prossimo",
    "fatto",
    "готово",
    "завершено",
    "следующий",
    "шаг",
    "статус",
    "完成",
    "进度",
    "状态",
    "下一步",
    "待办",
    "待处理",
    "待完成",
    "已完成",
    "未完成",
    "进展",
    "提醒",
    "计划",
    "问题",
    "修复",
    "变更",
    "完了",
    "進捗",
    "確認",
];

/// A past participle, what happened to something, never what it is
/// about: English ("approved", "completed", "fixed"), and German as it is
/// written, in lower case ("eingerichtet", "festgelegt", "abgeschlossen",
/// "aktualisiert"; a German noun is capitalised, so "Gesetz" is not one).
pub fn past_participle(w: &str) -> bool {
    let l = w.to_lowercase();
    if l.is_ascii() && l.len() >= 6 && l.ends_with("ed") && !l.ends_with("eed") {
        return true;
    }
    if IRREGULAR_PARTICIPLES.contains(&l.as_str()) {
        return true;
    }
    // Swedish, of a verb in -era, capitalised as a heading's first word or
    // not: `Implementerad`, `konfigurerade`
    if l.chars().count() >= 8
        && (l.ends_with("erad") || l.ends_with("erade"))
        && l.chars().all(char::is_alphabetic)
    {
        return true;
    }
    // French, of a verb in -er: `créé`, `terminé`, `déployé`, `configurés`,
    // `ajoutés` (never a noun in -ité, -été or -auté, `sécurité`, `société`,
    // `communauté`, nor one of the few others that end so: `marché`,
    // `santé`, `résumé`)
    let fr = l.strip_suffix('s').unwrap_or(&l);
    if fr.chars().count() >= 4
        && fr.ends_with('é')
        && !["ité", "été", "eté", "auté"]
            .iter()
            .any(|t| fr.ends_with(t))
        && !FRENCH_NOUNS_IN_E.contains(&fr)
        && fr.chars().all(char::is_alphabetic)
    {
        return true;
    }
    if w != l || l.chars().count() < 7 || !l.chars().all(|c| c.is_alphabetic()) {
        return false;
    }
    // -ieren verbs: `aktualisiert`, `konfiguriert`, `perfektioniert`
    if l.ends_with("iert") {
        return true;
    }
    // ge- after a separable prefix or none: `eingerichtet`, `gemacht`,
    // `angelegt`, `abgeschlossen`, `aufgesetzt`
    const SEPARABLE: [&str; 16] = [
        "", "ab", "an", "auf", "aus", "bei", "ein", "fest", "her", "hin", "mit", "nach", "vor",
        "weg", "zu", "zurück",
    ];
    SEPARABLE.iter().any(|p| {
        l.strip_prefix(p)
            .and_then(|r| r.strip_prefix("ge"))
            .is_some_and(|r| r.chars().count() >= 3 && (r.ends_with('t') || r.ends_with("en")))
    })
}

/// English past participles that do not end in -ed: what was done
/// ("Built", "Done", "Written"), never what a note is about. (Those that
/// are as often nouns, "set", "run", "cut", are left out.)
const IRREGULAR_PARTICIPLES: [&str; 40] = [
    "built",
    "done",
    "made",
    "written",
    "taken",
    "given",
    "sent",
    "found",
    "kept",
    "begun",
    "broken",
    "chosen",
    "drawn",
    "driven",
    "fallen",
    "forgotten",
    "frozen",
    "gotten",
    "grown",
    "hidden",
    "known",
    "risen",
    "seen",
    "shaken",
    "shown",
    "spoken",
    "stolen",
    "thrown",
    "woken",
    "bought",
    "brought",
    "caught",
    "fought",
    "sought",
    "taught",
    "paid",
    "sold",
    "told",
    "spent",
    "dealt",
];

/// French nouns in -é that are no participle (besides those in -ité,
/// -eté and -auté).
const FRENCH_NOUNS_IN_E: [&str; 23] = [
    "marché",
    "café",
    "comité",
    "résumé",
    "degré",
    "congé",
    "canapé",
    "lycée",
    "musée",
    "employé",
    "délégué",
    "député",
    "santé",
    "côté",
    "été",
    "liberté",
    "volonté",
    "clarté",
    "bonté",
    "fierté",
    "comté",
    "pâté",
    "traité",
];

/// A name without its remarks of when: a parenthesis that holds a day or
/// a number (`Token Watcher (eingerichtet 22.03.2026, verbessert …)`,
/// `Telegram (set up 2026-03-23)`) says when something was done to it,
/// not what it is.
pub fn without_dated_remarks(name: &str) -> String {
    let mut out = String::new();
    let mut rest = name;
    while let Some(i) = rest.find(['(', '（']) {
        let open = rest[i..].chars().next().map_or(1, char::len_utf8);
        let Some(j) = rest[i + open..].find([')', '）']) else {
            break;
        };
        let inner = &rest[i + open..i + open + j];
        let close = rest[i + open + j..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        out.push_str(&rest[..i]);
        if !inner.chars().any(|c| c.is_ascii_digit()) {
            out.push_str(&rest[i..i + open + j + close]);
        }
        rest = &rest[i + open + j + close..];
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// A text without the labels its list items open with (`- **Spec:**
/// features/…`, `- Status: Deployed`): a field of a list is how a note is
/// laid out, repeated in every note of a kind, not what one is about; what
/// follows it is kept. A sentence that opens with what it is about
/// (`Security: injection attempt blocked`) is no list item and keeps it.
pub fn without_labels(text: &str) -> String {
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            let Some(body) = t
                .strip_prefix("- ")
                .or_else(|| t.strip_prefix("* "))
                .or_else(|| t.strip_prefix("+ "))
            else {
                return line.to_string();
            };
            let plain = body.replace("**", "").replace("__", "");
            match plain.split_once([':', '：']) {
                Some((label, value))
                    if (1..=3).contains(&label.split_whitespace().count())
                        && label.chars().count() <= 30
                        && label.chars().next().is_some_and(char::is_alphabetic)
                        && !label.contains(['(', '/', '.', '`'])
                        && (value.is_empty() || value.starts_with(' ')) =>
                {
                    value.trim().to_string()
                }
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A letter only Vietnamese writes among the Latin scripts: `ă`, `đ`, `ơ`,
/// `ư` and the vowels with two marks or a dot below (U+1EA0–U+1EF9).
fn vietnamese_letter(c: char) -> bool {
    matches!(c, 'ă' | 'Ă' | 'đ' | 'Đ' | 'ơ' | 'Ơ' | 'ư' | 'Ư')
        || ('\u{1EA0}'..='\u{1EF9}').contains(&c)
}

/// Whether a text is Vietnamese: a tenth of its words or more hold a
/// letter only Vietnamese writes.
pub fn vietnamese(text: &str) -> bool {
    let (mut all, mut vi) = (0usize, 0usize);
    for w in text.split_whitespace() {
        all += 1;
        if w.chars().any(vietnamese_letter) {
            vi += 1;
        }
    }
    vi > 0 && vi * 10 >= all
}

/// Whether a word of a Vietnamese text is one syllable (`Dùng`, `Thiếu`,
/// `trong`): Vietnamese writes a word of several syllables with spaces
/// between them, so a syllable alone is a piece of a word (`dùng`, to
/// use; `thiếu`, lacking), never a theme's name. `Termux`, `Model` or
/// `ClawBrain` are no Vietnamese syllable.
pub fn vietnamese_syllable(w: &str) -> bool {
    static SYLLABLE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if w.chars().any(vietnamese_letter) {
        return true;
    }
    let folded = crate::analysis::fold(&w.to_lowercase());
    SYLLABLE
        .get_or_init(|| {
            regex::Regex::new(
                "^(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?[aeiouy]{1,3}(?:ch|ng|nh|[cmnpt])?$",
            )
            .expect("the syllable pattern")
        })
        .is_match(&folded)
}

/// A word that is never a theme: scaffolding, a status, a number, a
/// general word of one of the stop-word lists.
pub fn never_a_theme(word: &str) -> bool {
    let l = word.to_lowercase();
    SCAFFOLDING.contains(&l.as_str())
        || STATUS_WORDS.contains(&l.as_str())
        || EMPHASIS.contains(&l.as_str())
        || l.chars().any(|c| c.is_ascii_digit())
        || crate::analysis::never_a_topic(word)
        || russian_modifier(&l)
        || english_adverb(&l)
        || unweighed_script(word)
        // (a month's name in any of the languages dates are read in:
        // "Sesión 1 Mayo 2026" is not about May)
        || crate::analysis::month_named(word).is_some()
}

/// English adverbs made of an adjective (`correctly`, `automatically`,
/// `quickly`, `weekly`): how something is done or how often, never what
/// it is about. (`family`, `anomaly`, `supply`, `assembly` end otherwise.)
fn english_adverb(l: &str) -> bool {
    const TAILS: [&str; 16] = [
        "ally", "ently", "antly", "ctly", "ously", "ively", "fully", "lessly", "edly", "ingly",
        "ately", "ibly", "ably", "ckly", "arly", "tly",
    ];
    const OFTEN: [&str; 6] = ["daily", "hourly", "weekly", "monthly", "yearly", "nightly"];
    l.is_ascii() && l.len() >= 6 && (TAILS.iter().any(|t| l.ends_with(t)) || OFTEN.contains(&l))
}

/// Whether a word is written in a script whose words nothing here weighs
/// (Hebrew, Arabic, Thai, Devanagari, …): no stop-word list, stemmer or
/// dictionary says its noun from its adverb (`בפועל`, in practice), so it
/// is never proposed as a theme. Latin, Cyrillic, Greek, Chinese,
/// Japanese and Korean are weighed.
pub fn unweighed_script(word: &str) -> bool {
    word.chars().any(|c| {
        c.is_alphabetic()
            && !matches!(c as u32,
                0..=0x024F              // Latin, with its supplements and extensions
                | 0x0250..=0x02FF       // IPA, modifier letters
                | 0x0370..=0x03FF       // Greek
                | 0x0400..=0x052F       // Cyrillic
                | 0x1E00..=0x1FFF       // Latin extended additional, Greek extended
                | 0x2C60..=0x2C7F | 0xA720..=0xA7FF | 0xAB30..=0xAB6F
                | 0x3040..=0x30FF | 0x31F0..=0x31FF // kana
                | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // Han
                | 0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF // Hangul
                | 0xFF00..=0xFFEF       // full-width forms
                | 0x20000..=0x3134F     // Han extensions
            )
    })
}

/// Russian prepositions the stop-word lists lack, which open a title as
/// often as anything ("Вместо …": instead of).
const RUSSIAN_PREPOSITIONS: [&str; 16] = [
    "вместо",
    "после",
    "перед",
    "через",
    "около",
    "кроме",
    "между",
    "среди",
    "против",
    "вокруг",
    "внутри",
    "благодаря",
    "согласно",
    "вроде",
    "ради",
    "насчёт",
];

/// Endings only a Russian adjective (or participle) has, in the forms a
/// title opens with: "Ключевые решения" (key decisions), "Новый сервер",
/// "Технические проблемы". A noun ending in -ие (`решение`), -ий
/// (`сценарий`) or -ой (`герой`) is not one.
const RUSSIAN_ADJECTIVE_ENDINGS: [&str; 14] = [
    "ые", "ый", "ая", "ое", "ых", "ым", "ую", "кие", "гие", "хие", "жие", "шие", "щие", "чие",
];

/// Endings of a Russian verb's infinitive ("Добавить": to add, "Сделать",
/// "Разобраться"); a noun in -ость or -есть (`безопасность`, `новость`)
/// or in -мять (`память`) is not one.
const RUSSIAN_INFINITIVE_ENDINGS: [&str; 8] =
    ["ать", "ять", "ить", "еть", "уть", "ыть", "ться", "тись"];

/// Whether a word (in lower case) is a Russian preposition, or has an
/// adjective's or an infinitive's ending: it says what kind, how or what
/// to do, never what about.
pub fn russian_modifier(l: &str) -> bool {
    let cyrillic = !l.is_empty() && l.chars().all(|c| matches!(c, 'а'..='я' | 'ё'));
    let n = l.chars().count();
    cyrillic
        && (RUSSIAN_PREPOSITIONS.contains(&l)
            || (n >= 5 && RUSSIAN_ADJECTIVE_ENDINGS.iter().any(|e| l.ends_with(e)))
            || (n >= 6
                && !l.ends_with("ость")
                && !l.ends_with("есть")
                && !l.ends_with("мять")
                && RUSSIAN_INFINITIVE_ENDINGS.iter().any(|e| l.ends_with(e))))
}

/// What a note says in prose: its text without fenced blocks (```` ``` ````
/// or `~~~`) and the line that captions one (ends with `:` right before
/// it), whose code and data say how it was recorded, not what it is
/// about (an agent's transcript quotes each message's metadata so:
/// `Conversation info (untrusted metadata):`, then `"message_id"`,
/// `"conversation_label"` as JSON).
pub fn prose(text: &str) -> String {
    if !text.contains("```") && !text.contains("~~~") {
        return text.to_string();
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let t = line.trim_start();
        let mark = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        match (fence, mark) {
            (None, Some(m)) => {
                fence = Some(m);
                if kept.last().is_some_and(|l| l.trim_end().ends_with(':')) {
                    kept.pop();
                }
            }
            (Some(f), Some(m)) if f == m => fence = None,
            (None, None) => kept.push(line),
            _ => {}
        }
    }
    let mut out = kept.join("\n");
    out.push('\n');
    out
}

/// A text without the names of files and the addresses it quotes
/// (`SOUL.md`, `memory/2026-02-07.md`, `scripts/run.sh`,
/// `https://example.com/x`, `jiji@gmail.com`), and the time zones it names
/// (`Asia/Jakarta`): where something was written down, where someone is
/// written to, or in what zone, says nothing of what it is about
/// ("更新了 SOUL.md" is no note about a soul, a team's mail addresses no
/// note about Gmail).
pub fn without_files(text: &str) -> String {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(&format!(
            r"{}|(?i)[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[a-z][a-z0-9+.-]*://\S+|[\w./~-]*\w\.(?:md|markdown|txt|json|jsonl|json5|ya?ml|toml|ini|cfg|conf|env|js|mjs|cjs|ts|tsx|jsx|py|rs|go|rb|java|sh|bash|zsh|ps1|html?|css|csv|tsv|log|pdf|png|jpe?g|gif|webp|svg|mp[34]|wav|db|sqlite|xml|lock|zip|tar|gz)\b",
            crate::analysis::TIME_ZONE_NAME
        ))
        .expect("the file pattern")
    });
    re.replace_all(text, " ").into_owned()
}

/// Whether a stem (as [`super::similarity::stems_of`] gives it) may count
/// for how well an item fits a domain: never a number, a date, a time of
/// day or a status, which every domain's notes share.
pub fn counts_for_fit(stem: &str) -> bool {
    static S: OnceLock<HashSet<String>> = OnceLock::new();
    let never = S.get_or_init(|| {
        SCAFFOLDING
            .iter()
            .chain(STATUS_WORDS)
            .chain(&[
                "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
                "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "est", "edt", "pst", "pdt",
                "cst", "cet", "utc", "gmt",
            ])
            .flat_map(|w| super::similarity::stems_of(w))
            .collect()
    });
    !stem.chars().any(|c| c.is_ascii_digit()) && !never.contains(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_russian_adjective_or_preposition_is_no_theme() {
        for w in ["Ключевые", "Новый", "Вместо", "Технические", "новая"]
        {
            assert!(never_a_theme(w), "{w}");
        }
        for w in [
            "Сервер",
            "решение",
            "Парфюм",
            "сценарий",
            "Beflora",
            "безопасность",
            "память",
        ] {
            assert!(!russian_modifier(&w.to_lowercase()), "{w}");
        }
    }

    #[test]
    fn dates_times_and_statuses_never_count() {
        for w in super::super::similarity::stems_of(
            "2026 Feb 23 morning 09:45 EST complete next steps ✅ done",
        ) {
            assert!(!counts_for_fit(&w), "{w}");
        }
        for w in super::super::similarity::stems_of("crypto portfolio webhook") {
            assert!(counts_for_fit(&w), "{w}");
        }
        for w in ["Complete", "check", "2026", "完成", "Final"] {
            assert!(never_a_theme(w), "{w}");
        }
        assert!(!never_a_theme("heartbeat"));
        // what a session did to its subject: "GitHub Setup", "Session:
        // Morning Build", "System Walkthrough" (a real workspace's domains
        // `Setup`, `Build`, `Walkthrough`, `Config`)
        for w in ["Setup", "Build", "Walkthrough", "Config", "configuration"] {
            assert!(never_a_theme(w), "{w}");
        }
        assert!(never_a_theme("Woche") && never_a_theme("semaine"));
        // a Portuguese log's "Decisões do Usuário", "Status Atual"
        for w in ["Usuário", "atual", "Sessão", "utente", "Пользователь"] {
            assert!(never_a_theme(w), "{w}");
        }
        // a Chinese work log's "明日待处理", "今日下班总结", "下午补充"
        for w in ["待处理", "明日", "下班", "补充", "未完成"] {
            assert!(never_a_theme(w), "{w}");
        }
        assert!(!never_a_theme("博客"));
        for w in ["Mayo", "ABRIL", "Juli", "septembre", "Regla"] {
            assert!(never_a_theme(w), "{w}");
        }
        // a Hebrew memory's "המערכת" (the system), "בפועל" (in practice)
        for w in ["המערכת", "בפועל", "النظام", "ระบบ"] {
            assert!(never_a_theme(w), "{w}");
        }
        for w in [
            "Guardian",
            "Überblick",
            "сервер",
            "Σύστημα",
            "블로그",
            "ブログ",
        ] {
            assert!(!unweighed_script(w), "{w}");
        }
        // a German memory's "Wichtige Entscheidungen", "Offene Punkte"
        for w in ["Wichtige", "Entscheidungen", "Offene", "Punkte", "geplant"] {
            assert!(never_a_theme(w), "{w}");
        }
    }

    #[test]
    fn an_english_adverb_is_no_theme() {
        for w in [
            "Correctly",
            "automatically",
            "quickly",
            "Weekly",
            "recently",
            "exactly",
        ] {
            assert!(never_a_theme(w), "{w}");
        }
        for w in [
            "Family",
            "Anomaly",
            "Supply",
            "Assembly",
            "Italy",
            "Butterfly",
            "Reply",
        ] {
            assert!(!english_adverb(&w.to_lowercase()), "{w}");
        }
    }

    /// Domains proposed on real workspaces: `Jest` (Polish "is", over a
    /// Polish user's conversations), `Fortsetzung` ("continued", from
    /// `## Premium Hardening + UX (Fortsetzung)`), `Root` (the account in
    /// every server's `SSH: root / …`), `Notatki` ("notes").
    #[test]
    fn a_polish_word_a_continuation_and_a_login_are_no_theme() {
        for w in [
            "Jest",
            "jestem",
            "Fortsetzung",
            "Continued",
            "Root",
            "sudo",
            "Notatki",
            "Продолжение",
        ] {
            assert!(never_a_theme(w), "{w}");
        }
        for w in ["Beflora", "Magicline", "Hardening", "Furniture", "Timly"] {
            assert!(!never_a_theme(w), "{w}");
        }
    }

    #[test]
    fn a_vietnamese_syllable_is_no_theme() {
        let text = "Đã thử bật cliproxy qua PM2 nhưng fail do thiếu lệnh/binary trong Termux";
        assert!(vietnamese(text));
        assert!(!vietnamese(
            "Replaced the script with a Python one, café included"
        ));
        for w in ["Dùng", "Thiếu", "trong", "nhanh", "Người", "chat"] {
            assert!(vietnamese_syllable(w), "{w}");
        }
        for w in ["Termux", "Model", "ClawBrain", "Mimi", "Skill", "Oracle"] {
            assert!(!vietnamese_syllable(w), "{w}");
        }
    }

    #[test]
    fn what_was_done_when_and_how_lines_are_labelled_is_no_theme() {
        for w in [
            "eingerichtet",
            "festgelegt",
            "aktualisiert",
            "abgeschlossen",
            "approved",
            // what real daily notes' section titles say was done
            "Built",
            "Créé",
            "terminé",
            "déployés",
            "Ajoutés",
            "testé",
            "Implementerad",
        ] {
            assert!(past_participle(w), "{w}");
        }
        for w in [
            "sécurité",
            "Marché",
            "café",
            "idée",
            "année",
            "Set",
            "société",
            "santé",
            "Côté",
            "communauté",
            "liberté",
        ] {
            assert!(!past_participle(w), "{w}");
        }
        // a German noun is capitalised; an English word is no participle
        for w in [
            "Gesetz", "Eingang", "general", "benefit", "getter", "Telegram",
        ] {
            assert!(!past_participle(w), "{w}");
        }
        assert_eq!(
            without_dated_remarks("Token Watcher (eingerichtet 22.03.2026, verbessert 23.03.2026)"),
            "Token Watcher"
        );
        assert_eq!(
            without_dated_remarks("PROJ-19 Tourenverwaltung (ehemals Auftragsverwaltung)"),
            "PROJ-19 Tourenverwaltung (ehemals Auftragsverwaltung)"
        );
        assert_eq!(
            without_labels(
                "- **Spec:** features/PROJ-22.md\n- **Status:** Deployed\nSecurity: a sentence\nsee https://x.org"
            ),
            "features/PROJ-22.md\nDeployed\nSecurity: a sentence\nsee https://x.org"
        );
    }

    #[test]
    fn names_of_files_and_addresses_are_left_out() {
        assert_eq!(
            without_files("更新了 IDENTITY.md、USER.md、SOUL.md").trim(),
            "更新了  、 、"
        );
        let t = without_files(
            "see memory/2026-02-07.md and https://ex.com/a?b=1, then run scripts/deploy.sh now",
        );
        assert!(
            !t.contains("memory") && !t.contains("ex") && !t.contains("deploy"),
            "{t}"
        );
        assert!(
            t.contains("see") && t.contains("then run") && t.contains("now"),
            "{t}"
        );
        // a mail address is where someone is written to
        assert_eq!(
            without_files("**Jiji** - Propriétaire (phiphi.paradis@gmail.com)").trim(),
            "**Jiji** - Propriétaire ( )"
        );
        // a sentence's full stop, a version, an abbreviation stay
        assert_eq!(
            without_files("Moved to Berlin. Uses v1.2 e.g. daily."),
            "Moved to Berlin. Uses v1.2 e.g. daily."
        );
    }

    #[test]
    fn fenced_code_and_data_are_not_prose() {
        let t = "user: asked about the vault\n```json\n{\n  \"message_id\": \"x\"\n}\n```\n[Sun 09:00] Obsidian vault set up\n~~~\nls\n~~~\n";
        let p = prose(t);
        assert!(
            p.contains("asked about the vault") && p.contains("Obsidian vault set up"),
            "{p}"
        );
        assert!(!p.contains("message_id") && !p.contains("ls\n"), "{p}");
        // the caption of a block goes with it
        let t = "Set up the vault.\nConversation info (untrusted metadata):\n```json\n{}\n```\nThanks: done\n";
        assert_eq!(prose(t), "Set up the vault.\nThanks: done\n");
        // a fence left open hides what follows it, as Markdown does
        assert!(!prose("a\n```\nb").contains('b'));
    }
}
