//! Whose a conversation's sender is, by how they are written: a handle
//! that spells the user's name, a Latin name that writes the consonants
//! of the user's Hebrew or Arabic name, the handle a label gives in
//! parentheses.

/// The name of the user's (`aliases`, lower case) that a handle (lower
/// case, without the `@`) opens with, written in Latin letters: `роман`
/// in `romanskogorev`, `ana` in `ana_lima`. A name of four letters or
/// more, and after it the end, a digit, a `_` or `.`, or five letters or
/// more (a surname; `romantic` is no Roman).
pub(super) fn spelled_in<'a>(handle: &str, aliases: &'a [String]) -> Option<&'a String> {
    aliases.iter().find(|a| {
        let latin: String = deunicode::deunicode(a)
            .to_lowercase()
            .chars()
            .filter(char::is_ascii_alphabetic)
            .collect();
        if latin.len() < 4 || a.contains(char::is_whitespace) {
            return false;
        }
        handle.strip_prefix(&latin).is_some_and(|rest| {
            rest.is_empty()
                || rest.starts_with(|c: char| c.is_ascii_digit() || c == '_' || c == '.')
                || rest.chars().take_while(char::is_ascii_alphabetic).count() >= 5
        })
    })
}

/// The name of the user's (`aliases`) in Hebrew or Arabic script whose
/// consonants a name in Latin letters writes (`Elad`, of `אלעד`;
/// `Mohammed`, of `محمد`): those scripts leave most vowels unwritten, so
/// the consonants are what both spellings share. Both one word, their
/// consonants two or more; the letters that stand for vowels as well
/// (`ו`, `י`, `ע`, `א`; `v`, `y`, `w` in Latin letters) are left out on
/// both sides, `ו` kept too as a `v` may write it (`David`, `דוד`), and a
/// letter written twice is one (`Mohammed`).
pub(super) fn abjad_spelled<'a>(name: &str, aliases: &'a [String]) -> Option<&'a String> {
    fn consonants(s: &str, drop: &str) -> String {
        let mut out = String::new();
        for c in deunicode::deunicode(s).to_lowercase().chars() {
            if c.is_ascii_alphabetic() && !drop.contains(c) && !out.ends_with(c) {
                out.push(c);
            }
        }
        out
    }
    let name = name.trim();
    if name.is_empty()
        || name.contains(char::is_whitespace)
        || !name.chars().all(|c| c.is_ascii_alphabetic())
    {
        return None;
    }
    aliases.iter().find(|a| {
        let abjad = a.chars().any(|c| ('\u{0590}'..='\u{06FF}').contains(&c));
        if !abjad || a.trim().contains(char::is_whitespace) {
            return false;
        }
        [consonants(a, "aeiouwy"), consonants(a, "aeiouvwy")]
            .iter()
            .any(|skeleton| {
                skeleton.len() >= 2
                    && [consonants(name, "aeiouwy"), consonants(name, "aeiouvwy")]
                        .contains(skeleton)
            })
    })
}

/// The handle a sender's label gives in parentheses, in an older
/// gateway's stamp (`Telegram A J (@Aymanmj12) id:1186936952 …`) or a
/// group chat's quote (`Arif (@ariffazil)`): `aymanmj12`, lower case
/// without the `@`, as the metadata's `username` is kept.
pub(super) fn paren_handle(label: &str) -> Option<String> {
    let at = label.find("(@")?;
    let rest = &label[at + 2..];
    let end = rest.find(')')?;
    let h = &rest[..end];
    (!h.is_empty()
        && h.len() <= 64
        && h.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.'))
    .then(|| h.to_lowercase())
}
