//! A rule said in the last clause of a sentence written without spaces,
//! with the rest of its sentence.

use super::unspaced;

/// A rule stated in the last clause of a sentence written without spaces
/// is said with what the sentence said before it (`定时推送，也是需要日期，
/// 不要只写时间对不`: "scheduled pushes need the date too, don't write the
/// time alone, right?"; alone, `不要只写时间` says of what): the sentence
/// from its start (after a list's number and a label before `=` or `:`),
/// when the whole is at most [`SENTENCE_RULE_MAX_CHARS`]; and without the
/// particle that asks for agreement at its end (`对不`, `吧`).
pub(super) fn with_its_sentence(text: &str, clause: &str, stated: &str) -> String {
    let stated = strip_particle(stated);
    let at = (clause.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let Some(before) = text.get(..at.min(text.len())) else {
        return stated.to_string();
    };
    // (only the characters a lead may have are looked back through: a
    // text of many clauses with no sentence's end is read once)
    let mut from = before.len().saturating_sub(SENTENCE_RULE_MAX_CHARS * 4 + 8);
    while !before.is_char_boundary(from) {
        from += 1;
    }
    let window = &before[from..];
    let ended = window.rfind(['\n', '。', '！', '？', '；', ';', '!', '?']);
    let start = ended.map_or(0, |i| {
        i + window[i..].chars().next().map_or(1, char::len_utf8)
    });
    let lead = window[start..]
        .trim_start_matches(|c: char| !c.is_alphanumeric() || c.is_ascii_digit())
        .trim();
    let labelled = lead.rsplit_once(['=', ':', '：']);
    // (a sentence that began before the window is too long for a lead)
    if ended.is_none() && from > 0 && labelled.is_none() {
        return stated.to_string();
    }
    let lead = labelled
        .map_or(lead, |(_, after)| after)
        .trim()
        .trim_end_matches(['，', ',', '、'])
        .trim();
    if lead.is_empty()
        || !unspaced(lead)
        || lead.chars().count() + stated.chars().count() + 1 > SENTENCE_RULE_MAX_CHARS
    {
        return stated.to_string();
    }
    format!("{lead}，{stated}")
}

/// A rule with its sentence is at most this many characters.
pub const SENTENCE_RULE_MAX_CHARS: usize = 40;

/// A statement without the particle at its end that asks for agreement
/// or softens it (`对不`, `对吧`, `吧`, `哈`): what is stated is before it.
fn strip_particle(stated: &str) -> &str {
    for p in [
        "对不对",
        "对不",
        "对吧",
        "好吗",
        "吧",
        "哈",
        "呀",
        "啊",
        "呢",
        "哦",
        "嘛",
    ] {
        if let Some(rest) = stated.strip_suffix(p)
            && rest.chars().count() >= 2
        {
            return rest.trim_end();
        }
    }
    stated
}
