//! Cues read in languages written without spaces (Chinese): where a
//! clause is one, where what a cue states ends, and what it states.

/// Words that end what an unspaced cue states: a reason or a contrast.
pub(super) const CLAUSE_ENDS_UNSPACED: &[&str] = &["因为", "但是", "但", "所以", "不过", "|"];

/// Where a clause written without spaces ends at `end`: not at a "but"
/// that joins two words of one thing ("相关但不等价的数字", numbers related
/// but not equivalent), only at one that opens what follows ("但不要…",
/// but do not …).
pub(super) fn unspaced_end(text: &str, end: &str) -> Option<usize> {
    text.match_indices(end).map(|(i, _)| i).find(|&i| {
        // (a table's cell ends at `|`, a shell's `||` is a word of the
        // sentence: "always use `|| true` on pipeline chains")
        if end == "|" {
            return !text[..i].ends_with('|') && !text[i + 1..].starts_with('|');
        }
        if end != "但" {
            return true;
        }
        let after = &text[i + end.len()..];
        let modifier = (after.starts_with('不')
            && !["不要", "不能", "不用", "不可", "不得", "不必", "不应"]
                .iter()
                .any(|m| after.starts_with(m)))
            || after.starts_with('非');
        !modifier
    })
}

/// What follows a cue as a question, not a statement: "决定是否…" (to decide
/// whether), "如何" (how).
const OPEN_QUESTIONS_UNSPACED: &[&str] = &["是否", "要不要", "如何", "怎么", "什么"];

/// What an unspaced cue states is at most this many characters.
pub const EXTRACTION_MAX_CHARS_UNSPACED: usize = 24;

/// Whether a text is written without spaces (mostly Han, kana or Hangul).
pub(super) fn unspaced(text: &str) -> bool {
    let (mut cjk, mut other) = (0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        if crate::analysis::is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    cjk > 0 && cjk * 2 >= other
}

/// Whether what follows a text is inside quotation marks it opened: more
/// opening marks than closing ones (`“`, `「`, `『`), or an odd number of
/// straight ones.
pub(super) fn quoted(before: &str) -> bool {
    let count = |c: char| before.chars().filter(|x| *x == c).count();
    count('"') % 2 == 1
        || count('“') > count('”')
        || count('「') > count('」')
        || count('『') > count('』')
}

/// The cue of an unspaced clause and what it states.
pub(super) fn unspaced_cue(clause: &str) -> Option<(&'static str, &'static str, String)> {
    let (cue, kind, at) = super::EXTRACTION_CUES_UNSPACED
        .iter()
        .filter_map(|(c, k)| clause.find(c).map(|i| (*c, *k, i)))
        .min_by_key(|(c, _, i)| (*i, std::cmp::Reverse(c.len())))?;
    // a cue opening its clause has no one who holds it ("喜欢的话…": "if you
    // like it…"), and one followed by 的 qualifies a noun ("喜欢的颜色")
    if at == 0 {
        return None;
    }
    // inside quotation marks it is an example, not a statement
    // ("记忆用陈述式（"X偏好Y" vs "总是做Y"）": "X prefers Y" is quoted)
    if quoted(&clause[..at]) {
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
    // a noun in a list ("继承了之前的身份、偏好和所有项目": inherited the
    // identity, preferences and all projects) states nothing; after a
    // verb, 和 is "with" ("喜欢和朋友一起吃饭"): only 偏好, a noun as often
    // as a verb, is read so before it
    const AND: [char; 3] = ['和', '与', '及'];
    if clause[..at].ends_with('、')
        || clause[..at].ends_with(AND)
        || after.starts_with('、')
        || (cue == "偏好" && after.starts_with(AND))
    {
        return None;
    }
    let mut rest = after.trim_start_matches('了').to_string();
    for end in CLAUSE_ENDS_UNSPACED {
        if let Some(i) = unspaced_end(&rest, end) {
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
