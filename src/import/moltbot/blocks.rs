//! `MEMORY.md`'s blocks of no known title (`## Shop numbers`,
//! `## About Lu`, `## 关于用户`): what each holds, and whether it is about
//! the user. A block about the user is kept on the user's `Person` as
//! `memory_<title>`, any other on `$self` as `core_<title>`: a bulleted
//! block as a list of its items, any other (a table, a paragraph, a code
//! block) as its text, every line of it.

use super::super::draft::Concept;
use super::super::predicate_name;
use super::Reader;
use serde_json::{Map, Value, json};
use std::path::Path;

/// A `## ` block of `MEMORY.md`: its title, its line, its bullets with
/// their lines, and every line under the title.
pub(super) struct Block {
    pub title: String,
    pub at: usize,
    pub bullets: Vec<(usize, String)>,
    pub body: Vec<String>,
}

/// Keys of an Identity block whose value is what the user is called.
pub(super) const CALL_KEYS: [&str; 5] = [
    "name",
    "what_to_call_them",
    "preferred_name",
    "nickname",
    "call_them",
];

/// Words of a block's title that say it is about the user (whole words,
/// any case): "About the user", "User preferences", "My human",
/// "Über den Nutzer", "Sobre el usuario".
const USER_WORDS: [&str; 18] = [
    "user",
    "human",
    "owner",
    "nutzer",
    "nutzerin",
    "benutzer",
    "benutzerin",
    "utilisateur",
    "utilisatrice",
    "usuario",
    "usuaria",
    "usuário",
    "usuária",
    "utente",
    "gebruiker",
    "użytkownik",
    "пользователь",
    "пользователе",
];

/// The same in scripts that do not part words with spaces: "关于用户",
/// "ユーザーについて", "사용자 정보".
const USER_PARTS: [&str; 6] = ["用户", "用戶", "使用者", "主人", "ユーザー", "사용자"];

impl Block {
    /// What the block holds: its bullets as a list when every line that
    /// is not blank is one, else its text (every line, the blank ones
    /// around it trimmed); `None` for an empty block.
    pub fn value(&self) -> Option<Value> {
        let lines = self.body.iter().filter(|l| !l.trim().is_empty()).count();
        if lines == 0 {
            return None;
        }
        if self.bullets.len() == lines {
            return Some(json!(
                self.bullets.iter().map(|b| b.1.clone()).collect::<Vec<_>>()
            ));
        }
        Some(json!(self.body.join("\n").trim_matches('\n').to_string()))
    }
}

/// Words of a name that name nobody by themselves.
const PARTICLES: [&str; 12] = [
    "van", "von", "der", "den", "del", "della", "dos", "das", "bin", "binti", "les", "the",
];

/// Lowercase names for the user from one value (`Lucía Fernández` →
/// `lucía fernández`, `lucía`, `fernández`; `露西亚（Lu）` → `露西亚`,
/// `lu`): the whole of at least two characters, each word of at least
/// three.
pub(super) fn aliases_of(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in v.split(['(', ')', '（', '）', ',', '，', '/']) {
        let t = part
            .trim()
            .trim_matches(['*', '_', '`', '"', '\''])
            .trim()
            .to_lowercase();
        if t.chars().count() < 2 {
            continue;
        }
        // each of a name's words: the given name comes first in some
        // languages, last in others (Nguyễn Thành Doanh is Doanh)
        let words: Vec<&str> = t.split_whitespace().collect();
        if words.len() > 1 {
            out.extend(
                words
                    .iter()
                    .filter(|w| w.chars().count() >= 3 && !PARTICLES.contains(w))
                    .map(|w| w.to_string()),
            );
        }
        out.push(t);
    }
    out
}

/// Whether a letter is written with words parted by spaces (Latin,
/// Greek, Cyrillic): such a name is matched as a whole word, any other
/// (Chinese, Japanese) as a part of the title.
fn spaced(c: char) -> bool {
    (c as u32) < 0x0530
}

/// Whether a block's title says it is about the user: a word for the
/// user, or one of the names the files call the user by.
pub(super) fn about_user(title: &str, aliases: &[String]) -> bool {
    let t = title.to_lowercase();
    let words: Vec<&str> = t
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.iter().any(|w| USER_WORDS.contains(w)) || USER_PARTS.iter().any(|p| t.contains(p)) {
        return true;
    }
    aliases.iter().any(|a| {
        if a.contains(char::is_whitespace) || !a.chars().all(spaced) {
            t.contains(a.as_str())
        } else {
            words.contains(&a.as_str())
        }
    })
}

/// Adds a second block's value under a title already kept: two lists
/// become one, in order; with a text, both are kept as text.
fn append(slot: &mut Value, v: Value) {
    let text = |v: &Value| match v {
        Value::Array(a) => a
            .iter()
            .map(|i| format!("- {}", i.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match (slot, v) {
        (Value::Array(a), Value::Array(b)) => a.extend(b),
        (slot, v) => *slot = json!(format!("{}\n\n{}", text(slot), text(&v))),
    }
}

impl Reader {
    /// Keeps `MEMORY.md`'s blocks of no known title: on the user's
    /// Person when the block is about the user (and the user is known),
    /// else on `$self` (`self_attrs`). Each is reported.
    pub(super) fn other_blocks(
        &mut self,
        p: &Path,
        blocks: Vec<Block>,
        self_attrs: &mut Map<String, Value>,
    ) {
        let r = self.d.rel(p);
        let mut user_attrs = Map::new();
        let mut user_at = None;
        for b in blocks {
            let key = predicate_name(&b.title);
            let Some(v) = b.value() else {
                self.d.note(format!(
                    "{r}:{}: block `{}` is empty: nothing to keep",
                    b.at, b.title
                ));
                continue;
            };
            let (attrs, name) = match &self.user {
                Some((ty, name)) if about_user(&b.title, &self.aliases) => {
                    user_at.get_or_insert(b.at);
                    self.d.note(format!(
                        "{r}:{}: block `{}` is about the user: kept on {ty} `{name}` as memory_{key}",
                        b.at, b.title
                    ));
                    (&mut user_attrs, format!("memory_{key}"))
                }
                _ => {
                    self.d.note(format!(
                        "{r}:{}: block `{}` is not one of Identity, Active Context, Persona, Critical Facts: kept on $self as core_{key}",
                        b.at, b.title
                    ));
                    (&mut *self_attrs, format!("core_{key}"))
                }
            };
            // two blocks under one title: the later one follows the
            // earlier one, never replaces it
            match attrs.get_mut(&name) {
                Some(slot) => append(slot, v),
                None => {
                    attrs.insert(name, v);
                }
            }
        }
        if let (Some((ty, name)), Some(at)) = (self.user.clone(), user_at) {
            let source = self.d.at(p, at);
            let mut meta = self.d.provenance(&source);
            meta.insert("memory_tier".into(), json!("core"));
            self.d.concept(Concept {
                ty,
                name,
                attrs: user_attrs,
                meta,
                what: "Person (the user, MEMORY.md)".into(),
                source,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(body: &[&str]) -> Block {
        Block {
            title: "T".into(),
            at: 1,
            bullets: body
                .iter()
                .enumerate()
                .filter_map(|(i, l)| l.strip_prefix("- ").map(|b| (i + 2, b.to_string())))
                .collect(),
            body: body.iter().map(|l| l.to_string()).collect(),
        }
    }

    #[test]
    fn a_block_is_its_bullets_or_its_text() {
        assert_eq!(
            block(&["", "- a", "- b", ""]).value(),
            Some(json!(["a", "b"]))
        );
        assert_eq!(
            block(&["", "| m | n |", "|---|---|", "| 1 | 2 |", "", "Grew.", ""]).value(),
            Some(json!("| m | n |\n|---|---|\n| 1 | 2 |\n\nGrew."))
        );
        assert_eq!(
            block(&["- a", "then a paragraph"]).value(),
            Some(json!("- a\nthen a paragraph"))
        );
        assert_eq!(block(&["", "  "]).value(), None);
    }

    #[test]
    fn titles_about_the_user() {
        let al: Vec<String> = aliases_of("Lucía Fernández")
            .into_iter()
            .chain(aliases_of("露西亚（Lu）"))
            .collect();
        for t in [
            "关于用户",
            "About the user",
            "User preferences",
            "My human",
            "About Lu",
            "Lucía's projects",
            "Lucía Fernández",
            "露西亚的习惯",
            "Über den Nutzer",
            "Sobre el usuario",
            "ユーザーについて",
        ] {
            assert!(about_user(t, &al), "{t}");
        }
        for t in [
            "Shop numbers",
            "Kiln",
            "Lunch spots",
            "Users of the shop",
            "关键规则",
            "Lessons",
        ] {
            assert!(!about_user(t, &al), "{t}");
        }
    }

    #[test]
    fn a_second_block_of_one_title_follows_the_first() {
        let mut v = json!(["a"]);
        append(&mut v, json!(["b"]));
        assert_eq!(v, json!(["a", "b"]));
        append(&mut v, json!("a table"));
        assert_eq!(v, json!("- a\n- b\n\na table"));
    }
}
