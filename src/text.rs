//! Text shown to people: whatever an agent wrote (a comment, a name, a
//! value) is printed with its control characters escaped, so no memory can
//! move a terminal's cursor, retitle its window, clear it, or reorder what
//! it shows.

use std::borrow::Cow;

/// Characters that would act on a terminal or reorder text: C0 controls
/// (but newline and tab), DEL, C1 controls, and the bidirectional
/// overrides and isolates.
fn acts(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every such character written as `\x1b` / `\u{202e}`.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(acts) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if acts(c) {
            if (c as u32) < 0x80 {
                out.push_str(&format!("\\x{:02x}", c as u32));
            } else {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `printable`, and on one line: newlines and tabs escaped too (table
/// cells, list rows).
pub fn one_line(s: &str) -> String {
    printable(s).replace('\n', "\\n").replace('\t', "\\t")
}

/// JSON text with every character that would act on a terminal written
/// as a JSON escape (`\u202e`): still JSON, and inert when printed.
/// (Serialised JSON holds control characters only inside strings, where
/// an escape means the same character.)
pub fn json_text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(acts) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if acts(c) && c != '\n' {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Prints a value as pretty JSON for people and programs alike: valid
/// JSON, inert on a terminal (`json_text`).
#[macro_export]
macro_rules! say_json {
    ($v:expr) => {
        serde_json::to_string_pretty($v).map(|t| println!("{}", $crate::text::json_text(&t)))
    };
}

/// `println!` for people: the formatted text passes through `printable`.
#[macro_export]
macro_rules! say {
    () => { println!() };
    ($($t:tt)*) => { println!("{}", $crate::text::printable(&format!($($t)*))) };
}

/// `eprintln!` for people, likewise.
#[macro_export]
macro_rules! say_err {
    () => { eprintln!() };
    ($($t:tt)*) => { eprintln!("{}", $crate::text::printable(&format!($($t)*))) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_stays_json_with_its_acting_characters_escaped() {
        let v = serde_json::json!({"name": "a\u{202e}b\u{85}c\u{7f}d\te\u{1b}"});
        let t = serde_json::to_string_pretty(&v).expect("json");
        let shown = json_text(&t);
        assert!(!shown.chars().any(acts), "{shown}");
        assert!(
            shown.contains("\\u202e") && shown.contains("\\u0085") && shown.contains("\\u007f"),
            "{shown}"
        );
        let back: serde_json::Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(back, v);
    }

    #[test]
    fn escapes_what_acts_on_a_terminal() {
        let s = "a\u{1b}]0;owned\u{7}\u{1b}[2J b\u{9b}c \u{202e}x\nok\t.";
        let p = printable(s);
        assert!(!p.chars().any(acts), "{p}");
        assert_eq!(p, "a\\x1b]0;owned\\x07\\x1b[2J b\\u{9b}c \\u{202e}x\nok\t.");
        assert_eq!(printable("plain é 中"), "plain é 中");
    }
}
