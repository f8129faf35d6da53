//! What an Event teaches, read offline: a cue that opens a clause
//! ("prefers", "decided", "learned that") and what follows it up to the
//! clause's end is the knowledge extracted. Cues are listed for English,
//! French, German and Spanish (words between spaces) and for Chinese
//! (written without spaces: a cue is found inside the clause, and the
//! clause ends at Chinese punctuation as well).

use super::views::{EventView, Extracted};

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
    ("eligió", "decision"),
    ("planea", "plan"),
];

/// Cues of languages written without spaces (Chinese), found anywhere in a
/// clause: a negation before the liking it negates, the longer before the
/// shorter. "计划" alone is left out: as a noun ("按计划执行") it states no plan.
pub const EXTRACTION_CUES_UNSPACED: &[(&str, &str)] = &[
    ("不喜欢", "preference"),
    ("讨厌", "preference"),
    ("更喜欢", "preference"),
    ("偏好", "preference"),
    ("喜欢", "preference"),
    ("爱吃", "preference"),
    ("爱喝", "preference"),
    ("决定", "decision"),
    ("选择了", "decision"),
    ("打算", "plan"),
    ("计划要", "plan"),
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
    "不喜欢",
    "讨厌",
];

/// Words that end what an unspaced cue states: a reason or a contrast.
const CLAUSE_ENDS_UNSPACED: &[&str] = &["因为", "但是", "但", "所以", "不过", "|"];

/// What follows a cue as a question, not a statement: "决定是否…" (to decide
/// whether), "如何" (how).
const OPEN_QUESTIONS_UNSPACED: &[&str] = &["是否", "要不要", "如何", "怎么", "什么"];

/// What an unspaced cue states is at most this many characters.
pub const EXTRACTION_MAX_CHARS_UNSPACED: usize = 24;

/// Whether a text is written without spaces (mostly Han, kana or Hangul).
fn unspaced(text: &str) -> bool {
    let (mut cjk, mut other) = (0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        if matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
        {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    cjk > 0 && cjk * 2 >= other
}

/// The cue of an unspaced clause and what it states.
fn unspaced_cue(clause: &str) -> Option<(&'static str, &'static str, String)> {
    let (cue, kind, at) = EXTRACTION_CUES_UNSPACED
        .iter()
        .filter_map(|(c, k)| clause.find(c).map(|i| (*c, *k, i)))
        .min_by_key(|(c, _, i)| (*i, std::cmp::Reverse(c.len())))?;
    // a cue opening its clause has no one who holds it ("喜欢的话…": "if you
    // like it…"), and one followed by 的 qualifies a noun ("喜欢的颜色")
    if at == 0 {
        return None;
    }
    // after a number it is a count ("13 喜欢 / 31 书签": 13 likes)
    if clause[..at]
        .trim_end()
        .ends_with(|c: char| c.is_ascii_digit() || "一二三四五六七八九十百千万".contains(c))
    {
        return None;
    }
    let after = clause[at + cue.len()..].trim_start();
    if after.starts_with('的') || OPEN_QUESTIONS_UNSPACED.iter().any(|q| after.starts_with(q)) {
        return None;
    }
    let mut rest = after.trim_start_matches('了').to_string();
    for end in CLAUSE_ENDS_UNSPACED {
        if let Some(i) = rest.find(end) {
            rest.truncate(i);
        }
    }
    let rest = rest
        .trim_matches(|c: char| c.is_whitespace() || "：:“”\"'「」".contains(c))
        .to_string();
    let n = rest.chars().count();
    (2..=EXTRACTION_MAX_CHARS_UNSPACED)
        .contains(&n)
        .then_some((cue, kind, rest))
}

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
];

/// Words that point at what another clause named ("Matt loves it 🎉")
/// or only say how much: a statement made of these and symbols says
/// nothing by itself, and is not extracted.
const DEIXIS: &[&str] = &[
    "it", "this", "that", "them", "these", "those", "him", "her", "so", "much", "very", "too", "a",
    "lot", "really", "all", "of", "ça", "cela", "ceci", "beaucoup", "es", "das", "sehr", "eso",
    "esto", "ello", "mucho",
];

/// Whether a statement's words are only [`DEIXIS`] (and emoji or marks).
fn only_deixis(words: &[&str]) -> bool {
    words.iter().all(|w| {
        let w: String = w.chars().filter(|c| c.is_alphanumeric()).collect();
        w.is_empty() || DEIXIS.contains(&w.to_lowercase().as_str())
    })
}

/// An extracted statement is at most this many words.
pub const EXTRACTION_MAX_WORDS: usize = 8;

/// The knowledge an Event's summary states outright, by cue phrase.
pub fn extract(e: &EventView) -> Vec<Extracted> {
    let holder = e
        .linked
        .iter()
        .find(|(t, n)| t == "Person" && !n.starts_with('$'))
        .map(|(_, n)| n.clone());
    let mut out: Vec<Extracted> = Vec::new();
    for clause in e
        .summary
        .split(['.', ';', '!', '?', '\n', '。', '；', '！', '？', '，'])
    {
        if unspaced(clause) {
            let Some((cue, kind, stated)) =
                unspaced_cue(clause.trim()).or_else(|| cue_before(clause.trim()))
            else {
                continue;
            };
            push(&mut out, e, &holder, clause.trim(), cue, kind, stated);
            continue;
        }
        let lower = format!(" {} ", clause.trim().to_lowercase());
        let Some((cue, kind, at)) = EXTRACTION_CUES.iter().find_map(|(c, k)| {
            lower
                .find(&format!(" {c} "))
                .map(|i| (*c, *k, i + c.len() + 2))
        }) else {
            continue;
        };
        let mut rest = lower[at..].trim().to_string();
        for end in CLAUSE_ENDS {
            if let Some(i) = format!(" {rest} ").find(end) {
                rest.truncate(i.saturating_sub(1).min(rest.len()));
            }
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.is_empty() || words.len() > EXTRACTION_MAX_WORDS || only_deixis(&words) {
            continue;
        }
        // the knowledge as the Event wrote it (its case kept)
        let original = clause.trim();
        let start = original.to_lowercase().find(&words.join(" ")).unwrap_or(0);
        let stated = original
            .get(start..start + words.join(" ").len())
            .unwrap_or(&rest)
            .to_string();
        push(&mut out, e, &holder, original, cue, kind, stated);
    }
    out
}

/// Adds what a cue states, once, named in the memory's words: `Prefers …`
/// or `Avoids …` for a preference, the statement itself for a decision or
/// a plan.
fn push(
    out: &mut Vec<Extracted>,
    e: &EventView,
    holder: &Option<String>,
    original: &str,
    cue: &str,
    kind: &str,
    stated: String,
) {
    let (ty, name) = match kind {
        "preference" => {
            let verb = if AVERSIONS.contains(&cue) || AVERSIONS_BEFORE.contains(&cue) {
                "Avoids"
            } else {
                "Prefers"
            };
            ("Preference", format!("{verb} {stated}"))
        }
        _ => {
            let mut n = stated;
            if let Some(c) = n.chars().next() {
                n = c.to_uppercase().collect::<String>() + &n[c.len_utf8()..];
            }
            (if kind == "plan" { "Plan" } else { "Decision" }, n)
        }
    };
    if out.iter().any(|x| x.name == name) {
        return;
    }
    out.push(Extracted {
        ty: ty.into(),
        name,
        description: format!("{}: \"{}\" ({})", kind, original, e.name),
        kind: kind.into(),
        cue: cue.into(),
        holder: holder.clone(),
    });
}

#[cfg(test)]
mod tests {
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
    }
}
