//! What an Event teaches, read offline: a cue that opens a clause
//! ("prefers", "decided", "learned that") and what follows it up to the
//! clause's end is the knowledge extracted. Cues are listed for English,
//! French, German, Spanish, Portuguese, Italian and Russian (words between
//! spaces), for Chinese (written without spaces: a cue is found inside the
//! clause, and the clause ends at Chinese punctuation as well) and for
//! Japanese and Korean (what is liked comes before the cue). A standing
//! instruction ("Never …", "NUNCA …", "永远不要…") is kept in its own words.

use super::similarity;
use super::views::{EventView, Extracted};

mod language;
mod sentence;
mod told;
mod unspaced;
pub use language::unread_language;
pub use told::{asks_to_keep, tells_of_others, tells_of_self, users_turns};
pub use unspaced::EXTRACTION_MAX_CHARS_UNSPACED;
use unspaced::{CLAUSE_ENDS_UNSPACED, unspaced, unspaced_cue, unspaced_end};

/// Cue phrases that state stable knowledge, with what they state. A cue
/// must open a clause ("decided no coffee after 2pm"), and what follows it
/// up to the clause's end is the knowledge.
pub const EXTRACTION_CUES: &[(&str, &str)] = &[
    ("prefers", "preference"),
    ("would rather", "preference"),
    ("likes", "preference"),
    ("loves", "preference"),
    ("enjoys", "preference"),
    ("hates", "preference"),
    ("dislikes", "preference"),
    ("avoids", "preference"),
    ("doesn't like", "preference"),
    ("does not like", "preference"),
    ("can't stand", "preference"),
    ("decided to", "decision"),
    ("decided", "decision"),
    ("agreed to", "decision"),
    ("chose", "decision"),
    ("settled on", "decision"),
    ("plans to", "plan"),
    ("is planning to", "plan"),
    ("intends to", "plan"),
    // French (a negation before the liking it negates)
    ("n'aime pas", "preference"),
    ("déteste", "preference"),
    ("évite", "preference"),
    ("préfère", "preference"),
    ("aime", "preference"),
    ("adore", "preference"),
    ("a décidé de", "decision"),
    ("a choisi", "decision"),
    ("prévoit de", "plan"),
    // German
    ("mag keinen", "preference"),
    ("mag keine", "preference"),
    ("mag kein", "preference"),
    ("hasst", "preference"),
    ("vermeidet", "preference"),
    ("bevorzugt", "preference"),
    ("liebt", "preference"),
    ("mag", "preference"),
    ("hat beschlossen,", "decision"),
    ("hat beschlossen", "decision"),
    ("hat sich entschieden für", "decision"),
    // Spanish
    ("no le gusta", "preference"),
    ("no le gustan", "preference"),
    ("odia", "preference"),
    ("evita", "preference"),
    ("prefiere", "preference"),
    ("le gusta", "preference"),
    ("le gustan", "preference"),
    ("le encanta", "preference"),
    ("decidió", "decision"),
    ("acordamos", "decision"),
    ("eligió", "decision"),
    ("elegimos", "decision"),
    ("optó por", "decision"),
    ("optamos por", "decision"),
    ("planea", "plan"),
    // Portuguese (a negation before the liking it negates)
    ("não gosta de", "preference"),
    ("nao gosta de", "preference"),
    ("não gosta", "preference"),
    ("odeia", "preference"),
    ("prefere", "preference"),
    ("gosta de", "preference"),
    ("adora", "preference"),
    ("decidiu", "decision"),
    ("decidimos", "decision"),
    ("escolheu", "decision"),
    ("optou por", "decision"),
    ("planeja", "plan"),
    ("pretende", "plan"),
    // Italian
    ("non gli piace", "preference"),
    ("non le piace", "preference"),
    ("preferisce", "preference"),
    ("gli piace", "preference"),
    ("le piace", "preference"),
    ("ha deciso di", "decision"),
    ("abbiamo deciso di", "decision"),
    ("ha scelto", "decision"),
    ("ha intenzione di", "plan"),
    // Russian
    ("не любит", "preference"),
    ("ненавидит", "preference"),
    ("избегает", "preference"),
    ("предпочитает", "preference"),
    ("любит", "preference"),
    ("решил", "decision"),
    ("решила", "decision"),
    ("решили", "decision"),
    ("выбрал", "decision"),
    ("выбрала", "decision"),
    ("планирует", "plan"),
    ("собирается", "plan"),
];

/// Words that open a standing instruction ("Never reboot the laptop
/// without asking", "NUNCA reiniciar…", "Immer auf Deutsch antworten"):
/// at a clause's start, or after the colon that says who said it
/// ("Usuário alertou: NUNCA …"), what follows is kept whole, the word
/// included.
pub const INSTRUCTION_CUES: &[&str] = &[
    "never",
    "always",
    "nunca",
    "sempre",
    "jamais",
    "toujours",
    "niemals",
    "immer",
    "siempre",
    "никогда",
    "всегда",
    "항상",
    "절대",
    "반드시",
];

/// The same, for languages written without spaces.
pub const INSTRUCTION_CUES_UNSPACED: &[&str] = &[
    "永远不要",
    "千万不要",
    "千万别",
    "绝对不要",
    "绝不",
    "务必",
    "一定要",
    "絶対に",
    "必ず",
    // a prohibition opening its clause is addressed to the one who reads
    // it ("不要反复问": don't ask again and again); "必须" (must) and "禁止"
    // (forbidden) state as often what an API requires or refuses
    "不要",
    "请勿",
    "切勿",
];

/// Cues of languages written without spaces (Chinese, in its simplified
/// and traditional characters), found anywhere in a clause: a negation before the liking it negates, the longer before the
/// shorter. "计划" alone is left out: as a noun ("按计划执行") it states no plan.
pub const EXTRACTION_CUES_UNSPACED: &[(&str, &str)] = &[
    ("不喜欢", "preference"),
    ("不喜歡", "preference"),
    ("讨厌", "preference"),
    ("討厭", "preference"),
    ("更喜欢", "preference"),
    ("更喜歡", "preference"),
    ("偏好", "preference"),
    ("喜欢", "preference"),
    ("喜歡", "preference"),
    ("爱吃", "preference"),
    ("愛吃", "preference"),
    ("爱喝", "preference"),
    ("愛喝", "preference"),
    ("决定", "decision"),
    ("決定", "decision"),
    ("选择了", "decision"),
    ("選擇了", "decision"),
    ("打算", "plan"),
    ("计划要", "plan"),
    ("計劃要", "plan"),
];

/// Cues that state an aversion, in every language listed.
const AVERSIONS: &[&str] = &[
    "hates",
    "dislikes",
    "avoids",
    "doesn't like",
    "does not like",
    "can't stand",
    "n'aime pas",
    "déteste",
    "évite",
    "mag keinen",
    "mag keine",
    "mag kein",
    "hasst",
    "vermeidet",
    "no le gusta",
    "no le gustan",
    "odia",
    "evita",
    "não gosta de",
    "nao gosta de",
    "não gosta",
    "odeia",
    "non gli piace",
    "non le piace",
    "не любит",
    "ненавидит",
    "избегает",
    "不喜欢",
    "讨厌",
    "不喜歡",
    "討厭",
];

/// Cues of languages that put what is liked or decided before the verb
/// (Japanese, Korean), each with the particle that marks it: what a cue
/// states is the clause before it, after its topic ("私は辛い食べ物が好き":
/// "辛い食べ物"). The longer before the shorter.
pub const EXTRACTION_CUES_BEFORE: &[(&str, &str)] = &[
    ("が大好き", "preference"),
    ("が好き", "preference"),
    ("を好む", "preference"),
    ("が嫌い", "preference"),
    ("が苦手", "preference"),
    ("にすることにした", "decision"),
    ("することにした", "decision"),
    ("ことにした", "decision"),
    ("に決めた", "decision"),
    ("を選んだ", "decision"),
    ("予定", "plan"),
    ("つもり", "plan"),
    ("을 좋아", "preference"),
    ("를 좋아", "preference"),
    ("이 좋아", "preference"),
    ("가 좋아", "preference"),
    ("을 싫어", "preference"),
    ("를 싫어", "preference"),
    ("으로 결정", "decision"),
    ("로 결정", "decision"),
    ("을 선택", "decision"),
    ("를 선택", "decision"),
];

/// The cues of [`EXTRACTION_CUES_BEFORE`] that state an aversion.
const AVERSIONS_BEFORE: &[&str] = &["が嫌い", "が苦手", "을 싫어", "를 싫어"];

/// What follows a liking to negate it: "好きではない", "좋아하지 않는다".
const NEGATIONS_AFTER: &[&str] = &["ではな", "じゃな", "하지 않", "하지 않", "지 않"];

/// What ends the topic before what a cue states: "私は", "사용자는 ".
const TOPIC_ENDS_BEFORE: &[&str] = &["は", "、", "：", ":", "는 ", "은 "];

/// The cue of a clause that states before its verb, and what it states.
fn cue_before(clause: &str) -> Option<(&'static str, &'static str, String)> {
    let (cue, kind, at) = EXTRACTION_CUES_BEFORE
        .iter()
        .filter_map(|(c, k)| clause.find(c).map(|i| (*c, *k, i)))
        .min_by_key(|(c, _, i)| (*i, std::cmp::Reverse(c.len())))?;
    let after = &clause[at + cue.len()..];
    let negated = NEGATIONS_AFTER
        .iter()
        .any(|n| after.trim_start().starts_with(n));
    // a liking negated is an aversion; another statement negated, none
    let cue = match (kind, negated) {
        (_, false) => cue,
        ("preference", true) if !AVERSIONS_BEFORE.contains(&cue) => "が嫌い",
        _ => return None,
    };
    let mut stated = &clause[..at];
    for end in TOPIC_ENDS_BEFORE {
        if let Some(i) = stated.rfind(end) {
            stated = &stated[i + end.len()..];
        }
    }
    let stated = stated
        .trim_matches(|c: char| c.is_whitespace() || "「」『』“”\"'-*".contains(c))
        .to_string();
    // "…ことにした", "…予定", "…つもり" state what one will do: a verb in
    // its dictionary form ("走る", "行く") comes before them, or it is a
    // noun's schedule ("今日の予定"), no plan
    if matches!(cue, "ことにした" | "予定" | "つもり")
        && !stated.ends_with(['う', 'く', 'す', 'つ', 'ぬ', 'む', 'る', 'ぐ', 'ぶ'])
    {
        return None;
    }
    let n = stated.chars().count();
    // a number is a count, not a thing liked
    if stated
        .chars()
        .all(|c| c.is_ascii_digit() || c.is_whitespace())
    {
        return None;
    }
    (2..=EXTRACTION_MAX_CHARS_UNSPACED)
        .contains(&n)
        .then_some((cue, kind, stated))
}

/// Words that end the knowledge a cue states: a reason or a condition
/// is context, not the knowledge.
const CLAUSE_ENDS: &[&str] = &[
    // (a dash opens a remark: "Always ask before push/merge — added to
    // USER.md")
    " — ",
    " – ",
    " because ",
    " since ",
    " but ",
    " although ",
    " so that ",
    " parce que ",
    " mais ",
    " weil ",
    " aber ",
    " denn ",
    " porque ",
    " pero ",
    " mas ",
    " perché ",
    " ma ",
    " потому что ",
    " но ",
];

/// Words that point at what another clause named ("Matt loves it 🎉")
/// or only say how much: a statement made of these and symbols says
/// nothing by itself, and is not extracted.
const DEIXIS: &[&str] = &[
    "it",
    "this",
    "that",
    "them",
    "these",
    "those",
    "him",
    "her",
    "so",
    "much",
    "very",
    "too",
    "a",
    "lot",
    "really",
    "all",
    "of",
    "ça",
    "cela",
    "ceci",
    "beaucoup",
    "es",
    "das",
    "sehr",
    "eso",
    "esto",
    "ello",
    "mucho",
    "isso",
    "isto",
    "muito",
    "questo",
    "molto",
    "это",
    "очень",
    // "decided otherwise": a decision that only says it differs
    "otherwise",
    "differently",
    "else",
    "anders",
    "autrement",
    "altrimenti",
    "diversamente",
    "иначе",
    "подругому", // (по-другому, its letters)
];

/// Words that point at what another line says (`these mistakes`, `cette
/// règle`), in the languages the cues are listed for.
const DEMONSTRATIVES: &[&str] = &[
    "this", "that", "these", "those", "ce", "cet", "cette", "ces", "dieser", "diese", "dieses",
    "diesen", "este", "esta", "estos", "estas", "ese", "esa", "esos", "esas", "esse", "essa",
    "esses", "essas", "questo", "questa", "questi", "queste", "этот", "эта", "это", "эти", "этих",
    "эту",
];

/// Whether a short statement ends on what it points at elsewhere
/// (`Never repeat these mistakes`, `Always follow this rule`): at most
/// five words, the one before its last a demonstrative.
fn points_back(stated: &str) -> bool {
    let words: Vec<String> = stated
        .split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect()
        })
        .filter(|w: &String| !w.is_empty())
        .collect();
    words.len() <= 5
        && words.len() >= 2
        && DEMONSTRATIVES.contains(&words[words.len() - 2].as_str())
}

/// Whether a statement's words are only [`DEIXIS`] (and emoji or marks).
fn only_deixis(words: &[&str]) -> bool {
    words.iter().all(|w| {
        let w: String = w.chars().filter(|c| c.is_alphanumeric()).collect();
        w.is_empty() || DEIXIS.contains(&w.to_lowercase().as_str())
    })
}

/// An extracted statement is at most this many words.
pub const EXTRACTION_MAX_WORDS: usize = 8;

/// An extracted statement of words parted by spaces is at most this many
/// characters: a longer "word" is a blob (a hash, a path, a line of
/// data), no statement.
pub const EXTRACTION_MAX_CHARS: usize = 160;

/// Whether a cue (after `before`, lower case) is inside a parenthesis
/// that other words open (`(pure python, avoids …`, `Met Ana (she
/// prefers tea)`): an aside about what the parenthesis follows, not the
/// user's.
fn aside(before: &str) -> bool {
    let Some(open) = before.rfind('(') else {
        return false;
    };
    !before[open..].contains(')') && before[open + 1..].chars().any(char::is_alphanumeric)
}

/// A text's clauses: cut at a line's end and at the marks that end a
/// sentence or a clause, in every script; a full stop ends a sentence only
/// before a space or the text's end, so that a file (`USER.md`), a domain
/// (`noma.dk`) or a number (`3.5`) stays whole.
fn clauses(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = match c {
            ';' | '!' | '?' | '\n' | '。' | '；' | '！' | '？' | '，' => true,
            '.' => {
                chars.peek().is_none_or(|(_, n)| n.is_whitespace()) && !abbreviated(&text[from..i])
            }
            _ => false,
        };
        if ends {
            out.push(&text[from..i]);
            from = i + c.len_utf8();
        }
    }
    out.push(&text[from..]);
    out
}

/// Whether a text ends with an abbreviation its full stop belongs to
/// (`e.g.`, `i.e.`, `vs.`, `Dr.`), not a sentence's end.
fn abbreviated(before: &str) -> bool {
    let last = before
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_start_matches(['(', '['])
        .to_lowercase();
    [
        "e.g", "i.e", "vs", "cf", "dr", "mr", "mrs", "ms", "approx", "z.b", "p.ex", "ex",
    ]
    .contains(&last.as_str())
}

/// Words a statement does not end with: one that does was cut short (a
/// snippet a tool saved, "never overwrite, replace, or").
/// (No word of one letter: "Plan A", "vitamin E".)
const DANGLING: &[&str] = &[
    "or", "and", "to", "the", "an", "of", "for", "with", "but", "ou", "de", "und", "oder", "et",
    "или",
];

/// Whether a statement was cut short: it ends with a word that joins it
/// to what should follow.
fn cut_short(stated: &str) -> bool {
    stated
        .split_whitespace()
        .next_back()
        .is_some_and(|w| DANGLING.contains(&w.to_lowercase().as_str()))
}

/// Whether the words before a cue (`before`, lower case) end with a
/// negation of it ("hasn't decided yet", "not decided"): what follows is
/// no knowledge.
fn negated(before: &str) -> bool {
    let mut words = before.split_whitespace().rev();
    let Some(last) = words.next() else {
        return false;
    };
    // ("has not yet decided", "hasn't already…")
    let last = match last {
        "yet" | "already" | "really" | "even" => words.next().unwrap_or(""),
        w => w,
    };
    similarity::negation_word(last)
}

/// Labels whose value says what something brings about, or why, not what
/// anyone wants (`**Impact :** Évite pollution docs…`, under a lesson's
/// `**Règle établie :**`): a cue after one states no preference.
const EFFECT_LABELS: &[&str] = &[
    "impact",
    "impacto",
    "effect",
    "effet",
    "efecto",
    "effekt",
    "wirkung",
    "auswirkung",
    "result",
    "résultat",
    "resultado",
    "ergebnis",
    "outcome",
    "benefit",
    "bénéfice",
    "beneficio",
    "benefício",
    "vorteil",
    "avantage",
    "ventaja",
    "vantagem",
    "consequence",
    "conséquence",
    "consecuencia",
    "consequência",
    "why",
    "pourquoi",
    "warum",
    "por qué",
    "porque",
    "reason",
    "raison",
    "grund",
    "razón",
    "motivo",
];

/// Whether the words before a cue (`before`, lower case) are a label of
/// [`EFFECT_LABELS`] and its colon.
fn after_effect_label(before: &str) -> bool {
    let Some(label) = before.trim_end().strip_suffix([':', '：']) else {
        return false;
    };
    let label = label.trim();
    let label = label
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim();
    EFFECT_LABELS.contains(&label)
        || label
            .rsplit(|c: char| !c.is_alphanumeric())
            .find(|w| !w.is_empty())
            .is_some_and(|w| EFFECT_LABELS.contains(&w) && label.split_whitespace().count() <= 2)
}

/// Whether a subject-less statement says what something does, not what to
/// do: its verb is in the third person ("Never auto-applies — always
/// presents for admin approval", of a module under its heading), where an
/// instruction's is not ("Never apply …"). English only: its third person
/// is read from the word alone.
fn described(body: &str) -> bool {
    let Some(first) = body.split_whitespace().next() else {
        return false;
    };
    let verb = first
        .rsplit('-')
        .next()
        .unwrap_or(first)
        .trim_matches(|c: char| !c.is_alphabetic())
        .to_lowercase();
    verb.chars().count() >= 4
        && verb.is_ascii()
        && verb.ends_with('s')
        && !["ss", "us", "is"].iter().any(|e| verb.ends_with(e))
}

/// A text without its fenced blocks (between lines opening with three
/// backticks or tildes); a fence never closed runs to the text's end.
fn unfenced(text: &str) -> String {
    let mut fence = false;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if !fence {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Whether a subject-less `never`/`always` tells what happened, not what
/// to do: its verb, after an adverb of how often, is in the past ("never
/// once asked whether the domain was registered"). English only.
fn narrated(body: &str) -> bool {
    let Some(verb) = body
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()).to_lowercase())
        .find(|w| !["once", "ever", "even", "really", "actually"].contains(&w.as_str()))
    else {
        return false;
    };
    const PAST: &[&str] = &[
        "was", "were", "did", "had", "got", "made", "said", "went", "told", "knew", "thought",
        "took", "came", "saw", "found", "gave", "wrote", "sent", "ran",
    ];
    PAST.contains(&verb.as_str())
        || (verb.is_ascii()
            && verb.len() > 4
            && verb.ends_with("ed")
            && !verb.ends_with("eed")
            && !["embed", "shred"].contains(&verb.as_str()))
}

/// A statement without the closing quotation mark or bracket its clause's
/// end left behind (`Never trust this source without cross-check”`, cut
/// from a quotation that opened before the cue; `tea)`, from an aside).
fn unquoted_end(stated: &str) -> String {
    const PAIRS: &[(char, char)] = &[
        ('“', '”'),
        ('«', '»'),
        ('「', '」'),
        ('『', '』'),
        ('„', '“'),
        ('(', ')'),
        ('（', '）'),
        ('[', ']'),
    ];
    let mut out = stated.trim_end().to_string();
    if let Some(last) = out.chars().last() {
        let opened = |open: char| out.chars().filter(|c| *c == open).count();
        let unmatched = match last {
            '"' => out.chars().filter(|c| *c == '"').count() % 2 == 1,
            c => PAIRS
                .iter()
                .any(|(o, cl)| *cl == c && opened(*o) < out.chars().filter(|x| x == cl).count()),
        };
        if unmatched {
            out.pop();
            out = out.trim_end().to_string();
        }
    }
    out
}

/// The knowledge an Event's summary states outright, by cue phrase.
pub fn extract(e: &EventView) -> Vec<Extracted> {
    let holder = e
        .linked
        .iter()
        .find(|(t, n)| t == "Person" && !n.starts_with('$'))
        .map(|(_, n)| n.clone());
    let mut out: Vec<Extracted> = Vec::new();
    // in a conversation, what the user said (the agent's answers state
    // nothing the user holds)
    let said = match e.class.as_str() {
        "Conversation" => users_turns(&e.summary),
        _ => e.summary.clone(),
    };
    // the emphasis a note puts on what it says (`**NUNCA** …`) is no part
    // of it
    // (and what a fence holds is code or a diagram, not a statement: "Never
    // check back" in a flow drawn under "**NOT:**")
    let summary = unfenced(&said)
        .replace("**", "")
        .replace("__", "")
        .replace('`', "");
    for clause in clauses(&summary) {
        // a clause that announces a list (`ALWAYS include these
        // elements:`) states what the list says: without it, nothing
        let listed = announced_list(&summary, clause);
        if listed.as_ref().is_some_and(Vec::is_empty) {
            continue;
        }
        let keep =
            |out: &mut Vec<Extracted>, original: &str, cue, kind, stated: String| match &listed {
                Some(items) => {
                    let original = format!("{} {}", original, items.join("; "));
                    push(
                        out,
                        e,
                        &holder,
                        &original,
                        cue,
                        kind,
                        with_list(&stated, items),
                    );
                }
                // ("Never repeat these mistakes!": which, another
                // line says)
                None if points_back(&stated) => {}
                None => push(out, e, &holder, original, cue, kind, stated),
            };
        if unspaced(clause) {
            let Some((cue, kind, stated)) = unspaced_cue(clause.trim())
                .or_else(|| cue_before(clause.trim()))
                .or_else(|| instruction(clause.trim()))
            else {
                continue;
            };
            // (what a partner or a friend likes is theirs: `老婆喜欢…`)
            let at = clause.find(cue).unwrap_or(0);
            if kind != "instruction" && told::someone_else(&clause[..at]) {
                continue;
            }
            let stated = match kind {
                "instruction" => sentence::with_its_sentence(&summary, clause, &stated),
                _ => stated,
            };
            keep(&mut out, clause.trim(), cue, kind, stated);
            continue;
        }
        let lower = format!(" {} ", clause.trim().to_lowercase());
        let Some((cue, kind, at)) = EXTRACTION_CUES.iter().find_map(|(c, k)| {
            lower
                .find(&format!(" {c} "))
                .filter(|&i| !negated(&lower[..i + 1]) && !after_effect_label(&lower[..i + 1]))
                .map(|i| (*c, *k, i + c.len() + 2))
        }) else {
            if let Some((cue, kind, stated)) = instruction(clause.trim()) {
                keep(&mut out, clause.trim(), cue, kind, stated);
            }
            continue;
        };
        // what a partner, a child or a friend likes or decided is theirs
        // ("Afu told me about their partner: name Bunga, likes food")
        if told::someone_else(&lower[..at - cue.len() - 1]) {
            continue;
        }
        // an aside about what it follows ("collect-metrics.py (pure
        // Python, avoids all heredoc quoting issues)") says what that
        // thing does
        if aside(&lower[..at - cue.len() - 1]) {
            continue;
        }
        let mut rest = lower[at..].trim().to_string();
        for end in CLAUSE_ENDS {
            if let Some(i) = format!(" {rest} ").find(end) {
                rest.truncate(i.saturating_sub(1).min(rest.len()));
            }
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.is_empty()
            || words.len() > EXTRACTION_MAX_WORDS
            || rest.chars().count() > EXTRACTION_MAX_CHARS
            || only_deixis(&words)
        {
            continue;
        }
        // the knowledge as the Event wrote it (its case kept)
        let original = clause.trim();
        let start = original.to_lowercase().find(&words.join(" ")).unwrap_or(0);
        let stated = original
            .get(start..start + words.join(" ").len())
            .unwrap_or(&rest)
            .to_string();
        keep(&mut out, original, cue, kind, stated);
    }
    out
}

/// The items of the list a clause announces (it ends with a colon, and
/// the lines right after it are a list's: `- ✅ Rectangles, ellipses`),
/// each without its bullet and marks; `None` when the clause announces
/// nothing, empty when its list is missing. At most 12 items are read.
fn announced_list(text: &str, clause: &str) -> Option<Vec<String>> {
    if !clause.trim_end().ends_with([':', '：']) {
        return None;
    }
    // (the clause is a slice of the text: where it ends in it)
    let end = (clause.as_ptr() as usize + clause.len()).checked_sub(text.as_ptr() as usize)?;
    let after = text.get(end..)?;
    let mut items = Vec::new();
    for line in after.lines().skip(1).skip_while(|l| l.trim().is_empty()) {
        let t = line.trim_start();
        let Some(rest) = t
            .strip_prefix(['-', '*', '+', '•'])
            .filter(|r| r.starts_with(' '))
            .or_else(|| {
                let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                (digits > 0)
                    .then(|| t[digits..].strip_prefix(['.', ')']))
                    .flatten()
                    .filter(|r| r.starts_with(' '))
            })
        else {
            break;
        };
        let item = rest
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .trim();
        if !item.is_empty() {
            items.push(item.to_string());
        }
        if items.len() == 12 {
            break;
        }
    }
    Some(items)
}

/// A statement with the list it announces, the items joined until the
/// name would pass [`EXTRACTION_MAX_CHARS`] (the rest said by `…`).
fn with_list(stated: &str, items: &[String]) -> String {
    let mut out = format!("{}:", stated.trim_end_matches([':', '：']).trim_end());
    for (i, item) in items.iter().enumerate() {
        if i > 0 && out.chars().count() + item.chars().count() + 2 > EXTRACTION_MAX_CHARS {
            out.push_str("; …");
            break;
        }
        out.push_str(if i == 0 { " " } else { "; " });
        out.push_str(item);
    }
    out
}

/// A standing instruction a clause opens with (or states after the colon
/// that says who gave it): the cue and what follows it, up to the
/// clause's end, kept in the clause's own words (`Nunca reiniciar laptop
/// sem permissão explícita`).
fn instruction(clause: &str) -> Option<(&'static str, &'static str, String)> {
    let lead = |t: &str| {
        t.trim_start_matches(|c: char| !c.is_alphanumeric() || c.is_ascii_digit())
            .to_string()
    };
    let mut heads = vec![lead(clause)];
    if let Some((_, after)) = clause.split_once([':', '：']) {
        heads.push(lead(after));
    }
    for head in heads {
        let lower = head.to_lowercase();
        let spaced = INSTRUCTION_CUES
            .iter()
            .find(|c| lower.starts_with(&format!("{c} ")));
        let unspaced = INSTRUCTION_CUES_UNSPACED
            .iter()
            .find(|c| lower.starts_with(**c));
        let Some(cue) = spaced.or(unspaced) else {
            continue;
        };
        let mut rest = head.clone();
        let low = rest.to_lowercase();
        let ends = CLAUSE_ENDS
            .iter()
            .map(|e| low.find(e))
            .chain(CLAUSE_ENDS_UNSPACED.iter().map(|e| unspaced_end(&low, e)));
        for at in ends {
            if let Some(i) = at
                && i > cue.len()
                && rest.is_char_boundary(i)
            {
                rest.truncate(i);
            }
        }
        let rest = rest.trim().trim_end_matches([',', '，', ':', '：']).trim();
        let body = rest.get(cue.len()..).unwrap_or("").trim();
        let enough = if unspaced.is_some() {
            (2..=EXTRACTION_MAX_CHARS_UNSPACED).contains(&body.chars().count())
        } else {
            let words: Vec<&str> = body.split_whitespace().collect();
            !words.is_empty()
                && words.len() <= EXTRACTION_MAX_WORDS
                && body.chars().count() <= EXTRACTION_MAX_CHARS
                && !only_deixis(&words)
        };
        // ("NEVER AGAIN!", "never mind": an exclamation)
        let exclaimed = ["again", "ever", "mind", "more"].contains(&body.to_lowercase().as_str());
        if !enough || exclaimed || (["never", "always"].contains(cue) && narrated(body)) {
            continue;
        }
        // a statement of what something does is the knowledge of what it
        // is about (a habit of the user's when the user is who it is
        // about): not an instruction
        let kind = if ["never", "always"].contains(cue) && described(body) {
            "habit"
        } else {
            "instruction"
        };
        // the cue as a word of the sentence, not shouted
        let mut name = cue.to_string();
        if let Some(c) = name.chars().next() {
            name = c.to_uppercase().collect::<String>() + &name[c.len_utf8()..];
        }
        let name = if unspaced.is_some() {
            format!("{name}{body}")
        } else {
            format!("{name} {body}")
        };
        return Some((cue, kind, unquoted_end(&name)));
    }
    None
}

/// Statements extracted from one Event at most.
pub const EXTRACTED_PER_EVENT: usize = 200;

/// Adds what a cue states, once, named in the memory's words: `Prefers …`
/// or `Avoids …` for a preference, the statement itself for a decision, a
/// plan or a standing instruction (kept as a preference: how its holder
/// wants things done).
fn push(
    out: &mut Vec<Extracted>,
    e: &EventView,
    holder: &Option<String>,
    original: &str,
    cue: &str,
    kind: &str,
    stated: String,
) {
    // (a note of thousands of statements is a dump, not a note: its first
    // ones are kept, and each new one is compared with those kept so far)
    if out.len() >= EXTRACTED_PER_EVENT {
        return;
    }
    // a heading names the section under it (`### 阿杰設計偏好 ⚠️`: the
    // design preferences follow), it states none; and what is stated is
    // a word, not a mark or an emoji
    // (a remark's comma cut off with the remark: "prefers mixed PT/EN in
    // conversation, but wants …")
    // (and the bracket of an aside it was said in: "(she prefers tea)")
    let stated = unquoted_end(stated.trim_end_matches([',', ';', ':', '，', '、', ' ']));
    if original.trim_start().starts_with('#')
        || !stated.chars().any(char::is_alphanumeric)
        || cut_short(&stated)
    {
        return;
    }
    let (ty, name) = match kind {
        "preference" => {
            let verb = if AVERSIONS.contains(&cue) || AVERSIONS_BEFORE.contains(&cue) {
                "Avoids"
            } else {
                "Prefers"
            };
            ("Preference", format!("{verb} {stated}"))
        }
        "instruction" | "habit" => ("Preference", stated),
        _ => {
            let mut n = stated;
            if let Some(c) = n.chars().next() {
                n = c.to_uppercase().collect::<String>() + &n[c.len_utf8()..];
            }
            (if kind == "plan" { "Plan" } else { "Decision" }, n)
        }
    };
    // (nor again in other endings: "link clicável" and, a line later,
    // "links clicáveis")
    if out
        .iter()
        .any(|x| x.name == name || similarity::inflected_alike(&x.name, &name))
    {
        return;
    }
    out.push(Extracted {
        ty: ty.into(),
        name,
        description: format!("{}: \"{}\" ({})", kind, original, e.name),
        kind: kind.into(),
        cue: cue.into(),
        holder: holder.clone(),
        clause: original.to_string(),
    });
}

/// Words for the user, in the languages the cues are listed for.
const USER_WORDS: &[&str] = &[
    "user",
    "usuário",
    "usuária",
    "usuario",
    "usuaria",
    "utilisateur",
    "utilisatrice",
    "nutzer",
    "nutzerin",
    "benutzer",
    "utente",
    "пользователь",
    "用户",
    "使用者",
    "ユーザー",
    "사용자",
];

/// Whether a text states something a reader would keep in a form no cue
/// reads: a line that gives a label its value (`Sprache: Deutsch default`,
/// `API-Kostenregel (explizit von Paul): OpenAI API-Key nur für …`,
/// `**E-Mail Setup:** Himalaya + Gmail`). A time (`18:00`), an address
/// (`https:`), a line of code or a line that gives a secret is no such
/// label. What the heuristic
/// reasoner cannot extract from such a text is not "nothing durable".
pub fn states_knowledge(text: &str) -> bool {
    static TIME: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let time = TIME
        .get_or_init(|| regex::Regex::new(r"\d{1,2}:\d{2}(?::\d{2})?").expect("the time pattern"));
    let mut fence = false;
    text.lines().any(|line| {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            return false;
        }
        if fence || t.starts_with('#') || t.starts_with('|') {
            return false;
        }
        let t = t.trim_start_matches(|c: char| "-*+>".contains(c) || c.is_whitespace());
        // (and a numbered item's number: `1. **語言**：兩個專案皆使用繁體中文`)
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        let t = match t[digits..].strip_prefix(['.', ')']) {
            Some(rest) if (1..=3).contains(&digits) => rest.trim_start(),
            _ => t,
        };
        let t = t.replace("**", "").replace("__", "").replace('`', "");
        let t = time.replace_all(&t, "");
        let Some((label, value)) = t.split_once([':', '：']) else {
            return false;
        };
        // a credential is no knowledge to keep (it is to be redacted)
        if !crate::secrets::find(&t).is_empty() {
            return false;
        }
        let label = label.trim();
        let value = value.trim();
        let label_words = label.split_whitespace().count();
        (1..=6).contains(&label_words)
            && label.chars().count() <= 60
            && label.chars().next().is_some_and(char::is_alphabetic)
            && !value.starts_with("//")
            && (!label.contains(['{', '}', '(', '=', '"']) || label.contains(" ("))
            && (value.split_whitespace().count() >= 2 || value.chars().count() >= 8)
    })
}

/// Words of a heading or a label that say what follows is a decision, a
/// lesson, a rule or what was learned, in the spaced scripts (a word of
/// it) and the others (anywhere in it).
const LESSON_WORDS: &[&str] = &[
    "decision",
    "decisions",
    "decided",
    "lesson",
    "lessons",
    "learned",
    "learnt",
    "learning",
    "learnings",
    "takeaway",
    "takeaways",
    "rule",
    "rules",
    "principle",
    "principles",
    "guidelines",
    "conventions",
    "grundsätze",
    "richtlinien",
    "principes",
    "principios",
    "princípios",
    "convenciones",
    "convenções",
    "entscheidung",
    "entscheidungen",
    "entschieden",
    "lektion",
    "lektionen",
    "gelernt",
    "erkenntnis",
    "erkenntnisse",
    "regel",
    "regeln",
    "décision",
    "décisions",
    "leçon",
    "leçons",
    "appris",
    "règle",
    "règles",
    "decisión",
    "decisiones",
    "lección",
    "lecciones",
    "aprendido",
    "aprendizaje",
    "aprendizajes",
    "regla",
    "reglas",
    "decisão",
    "decisões",
    "lição",
    "lições",
    "aprendizado",
    "aprendizados",
    "regra",
    "regras",
    "decisione",
    "decisioni",
    "lezione",
    "lezioni",
    "imparato",
    "regola",
    "regole",
    "решение",
    "решения",
    "урок",
    "уроки",
    "выводы",
    "правило",
    "правила",
];
const LESSON_PARTS: &[&str] = &[
    "規範",
    "规范",
    "原則",
    "原则",
    "方針",
    "方针",
    "원칙",
    "決定",
    "决定",
    "決めた",
    "教訓",
    "教训",
    "学んだ",
    "学び",
    "经验",
    "經驗",
    "心得",
    "规则",
    "規則",
    "ルール",
    "결정",
    "교훈",
    "배운",
    "규칙",
];

/// What a section says when it has nothing to say: `なし（定常運用日）`,
/// `None`, `keine`, `—`.
const NOTHING: &[&str] = &[
    "none",
    "nothing",
    "n/a",
    "keine",
    "nichts",
    "aucun",
    "aucune",
    "rien",
    "ninguno",
    "ninguna",
    "nada",
    "nenhum",
    "nenhuma",
    "nessuno",
    "нет",
    "なし",
    "特になし",
    "無し",
    "无",
    "無",
    "没有",
    "없음",
];

/// Whether a line says nothing: a mark, or a word for "none" with at most
/// a short remark after it.
pub(crate) fn says_nothing(line: &str) -> bool {
    let t = line
        .trim()
        .trim_start_matches(|c: char| "-*+>".contains(c) || c.is_whitespace())
        .trim()
        .to_lowercase();
    if t.chars().all(|c| !c.is_alphanumeric()) {
        return true;
    }
    NOTHING.iter().any(|n| {
        t.strip_prefix(n).is_some_and(|rest| {
            !rest.starts_with(|c: char| {
                c.is_alphanumeric() && !super::similarity::segment::is_cjk(c)
            }) && rest.chars().filter(|c| c.is_alphanumeric()).count() <= 12
        })
    })
}

/// Whether a heading or a label says a decision, a lesson, a rule or what
/// was learned follows.
fn lesson_heading(text: &str) -> bool {
    let t = text.to_lowercase();
    t.split(|c: char| !c.is_alphanumeric())
        .any(|w| LESSON_WORDS.contains(&w))
        || LESSON_PARTS.iter().any(|p| t.contains(p))
}

/// Whether an Event records a decision, a lesson, a rule or what was
/// learned: its heading (its name) says so (`2026-02-15 決定事項`,
/// `LINEスタンプ制作の教訓`, `Lessons learned`) and its text says more
/// than "none", or a label in its text says so and gives a value
/// (`**教訓**: 別チャンネルで続きやるなら…`). The heuristic reasoner reads
/// cue phrases; a decision written as a note's section is no "nothing
/// durable" either.
pub fn records_lessons(name: &str, text: &str) -> bool {
    let body: Vec<&str> = body_lines(text).collect();
    if body.is_empty() {
        return false;
    }
    if lesson_heading(name) && !body.iter().all(|l| says_nothing(l)) {
        return true;
    }
    let says = |value: &str| {
        value.trim().chars().filter(|c| c.is_alphanumeric()).count() >= 4 && !says_nothing(value)
    };
    body.iter().enumerate().any(|(i, l)| {
        let t = l
            .trim_start_matches(|c: char| "-*+>".contains(c) || c.is_whitespace())
            .replace("**", "")
            .replace("__", "");
        t.split_once([':', '：']).is_some_and(|(label, value)| {
            // a label opened by its word may name what was learned
            // (`Lección Aprendida #10 — Verificación Fuente Primaria >
            // Generación Creativa:`)
            let opens = label
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .find(|w| !w.is_empty())
                .is_some_and(|w| LESSON_WORDS.contains(&w));
            (label.chars().count() <= 30 || (opens && label.chars().count() <= 120))
                && lesson_heading(label)
                // (its value on the line, or on the next when the label
                // ends the line)
                && (says(value)
                    || (value.trim().is_empty() && body.get(i + 1).is_some_and(|next| says(next))))
        })
    })
}

/// Whether a text holds a task still open (`- [ ] 等待娛樂城 Casino API
/// 文件`): what is still to be done is no "nothing durable".
pub fn holds_open_tasks(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l
            .trim_start()
            .trim_start_matches(['-', '*', '+'])
            .trim_start();
        t.strip_prefix("[ ]")
            .is_some_and(|rest| rest.chars().any(char::is_alphanumeric))
    })
}

/// How a heading says its section is about someone or something: at its
/// end in Chinese, Japanese and Korean (`かっぴーについて`, `かっぴー情報`,
/// `客户信息`), at its start in the spaced scripts (`About Ana`, `Über
/// den Kunden`).
const ABOUT_ENDS: &[&str] = &[
    "について",
    "に関して",
    "情報",
    "信息",
    "资料",
    "資料",
    "정보",
    "에 대해",
    "에 대하여",
];
const ABOUT_STARTS: &[&str] = &[
    "关于",
    "關於",
    "about ",
    "über ",
    "sobre ",
    "à propos de ",
    "acerca de ",
    "про ",
    "info on ",
];

/// Whether an Event's heading says it is about someone or something
/// (`2026-01-25 かっぴーについて`, `2026-02-11 かっぴー情報（追加）`, `About
/// the landlord`), and its text says more than "none": what a section
/// about someone says is what the memory knows of them, in whatever form.
pub fn describes(name: &str, text: &str) -> bool {
    let h = heading_of(name);
    let about = ABOUT_ENDS
        .iter()
        .any(|e| h.ends_with(e) && h.len() > e.len())
        || ABOUT_STARTS
            .iter()
            .any(|p| h.starts_with(p) && h.len() > p.len());
    about && body_lines(text).any(|l| !says_nothing(l))
}

/// A section's lines below its headings, trimmed, the empty ones left out.
pub(crate) fn body_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// A section Event's heading, lowercased: its name without the day and
/// time before it and a remark in parentheses at its end
/// (`2026-02-11 かっぴー情報（追加）` → `かっぴー情報`).
pub fn heading_of(name: &str) -> String {
    let mut h = name.trim();
    for _ in 0..3 {
        let first = h.split_whitespace().next().unwrap_or("");
        if first.chars().next().is_some_and(|c| c.is_ascii_digit())
            && first
                .chars()
                .all(|c| c.is_ascii_digit() || "-:/.".contains(c))
        {
            h = h[first.len()..].trim_start();
        }
    }
    match h.strip_suffix([')', '）']) {
        Some(open) => open
            .rsplit_once(['(', '（'])
            .map_or(h, |(before, _)| before),
        None => h,
    }
    .trim()
    .to_lowercase()
}

/// The heading nearest above a clause in a text (`### 阿杰設計偏好 ⚠️` over
/// `- 不喜歡大面積強調色`): whose preferences a section lists, its heading
/// says.
pub fn heading_over<'a>(text: &'a str, clause: &str) -> Option<&'a str> {
    let clause = clause.trim();
    if clause.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    // (the clause was read without the text's emphasis marks)
    let at = lines.iter().position(|l| {
        l.replace("**", "")
            .replace("__", "")
            .replace('`', "")
            .contains(clause)
    })?;
    lines[..at]
        .iter()
        .rev()
        .find(|l| l.trim_start().starts_with('#'))
        .map(|l| l.trim_start().trim_start_matches('#').trim())
}

/// Whether a clause says who holds what it states is the user: a word for
/// the user ("Usuário alertou: …"), or a word of the user's name ("Cássio
/// prefere …"), as a whole word.
pub fn names_the_user(clause: &str, user: &str) -> bool {
    let lower = clause.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let name = user.to_lowercase();
    // a name in Chinese or Japanese is two or three characters, written
    // inside the words around it ("强哥核心工作准则")
    if name.chars().count() >= 2
        && name.chars().all(|c| c as u32 >= 0x3000)
        && lower.contains(&name)
    {
        return true;
    }
    let name_words: Vec<&str> = name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .collect();
    words
        .iter()
        .any(|w| USER_WORDS.contains(w) || name_words.contains(w))
        || USER_WORDS
            .iter()
            .filter(|u| !u.is_ascii() && u.chars().all(|c| c as u32 >= 0x3000))
            .any(|u| clause.contains(u))
}

#[cfg(test)]
mod tests;
