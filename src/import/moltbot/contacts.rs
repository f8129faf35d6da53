//! A `MEMORY.md` block that lists the people the user deals with
//! (`## 重要な連絡先・関係者`, `## Key People`, `## Contatos`): each line of
//! the shape `**Name** — what they are to the user` (or `Name: …`,
//! `Name - …`) is a `Person` of its own, named as written, its role as the
//! description, and the name without its honorific (`池内先生` → `池内`,
//! `Dr. Ana Lima` → `Ana Lima`) as an alias the sleep cycle's judgement
//! can match. The block itself stays a note, word for word.

use super::blocks::Block;
use super::{Reader, core_meta};
use crate::import::draft::Concept;
use serde_json::{Map, json};
use std::path::Path;

/// Words of a title that lists people, in the spaced scripts (a word of
/// the title) and the others (anywhere in it).
const PEOPLE_WORDS: &[&str] = &[
    "contacts",
    "people",
    "persons",
    "team",
    "stakeholders",
    "kontakte",
    "personen",
    "ansprechpartner",
    "contactos",
    "personas",
    "contatos",
    "pessoas",
    "personnes",
    "contatti",
    "persone",
    "контакты",
    "люди",
    "команда",
];
const PEOPLE_PARTS: &[&str] = &[
    "連絡先",
    "関係者",
    "人物",
    "联系人",
    "聯絡人",
    "人脉",
    "人脈",
    "相关人员",
    "關係人",
    "연락처",
    "인물",
];

/// Honorifics after a name (Japanese, Chinese, Korean) and titles before
/// one.
const HONORIFICS_AFTER: &[&str] = &[
    "さん",
    "先生",
    "様",
    "さま",
    "くん",
    "君",
    "ちゃん",
    "氏",
    "老师",
    "教授",
    "博士",
    "씨",
    "님",
];
const TITLES_BEFORE: &[&str] = &[
    "Mr. ", "Mrs. ", "Ms. ", "Dr. ", "Prof. ", "Sr. ", "Sra. ", "Herr ", "Frau ", "M. ", "Mme ",
];

/// Whether a block's title says it lists people.
pub(super) fn lists_people(title: &str) -> bool {
    let t = title.to_lowercase();
    t.split(|c: char| !c.is_alphanumeric())
        .any(|w| PEOPLE_WORDS.contains(&w))
        || PEOPLE_PARTS.iter().any(|p| t.contains(p))
}

/// One person of such a block: their name as written, what they are to
/// the user, and the name without its honorific when it has one.
#[derive(Debug, PartialEq)]
pub(super) struct Contact {
    pub line: usize,
    pub name: String,
    pub role: String,
    pub alias: Option<String>,
}

/// A line of a people block as a person, when it has the shape of one:
/// a name (at most four words and 40 characters, no digit, no address)
/// and, after a dash or a colon, a role that is no address, handle or
/// number (`Email: ana@…`, `Phone: +351…` are not people).
pub(super) fn contact(line: usize, bullet: &str) -> Option<Contact> {
    let b = bullet.trim();
    let (name, rest) = match b.strip_prefix("**") {
        Some(inner) => {
            let (n, r) = inner.split_once("**")?;
            (n.to_string(), r.to_string())
        }
        None => {
            let at = [" — ", " – ", " - ", ": ", "：", "—"]
                .iter()
                .filter_map(|sep| b.find(sep).map(|i| (i, sep.len())))
                .min()?;
            (b[..at.0].to_string(), b[at.0 + at.1..].to_string())
        }
    };
    let name = name.trim().trim_end_matches([':', '：']).trim().to_string();
    let role = rest
        .trim_start_matches(|c: char| c.is_whitespace() || "—–-:：,".contains(c))
        .trim()
        .to_string();
    let n = name.chars().count();
    let shaped = (2..=40).contains(&n)
        && name.split_whitespace().count() <= 4
        && !name.chars().any(|c| c.is_ascii_digit())
        && !name.contains(['@', '/', '`', '[', '(', '（'])
        && name
            .chars()
            .next()
            .is_some_and(|c| !c.is_lowercase() && c.is_alphanumeric());
    let reachable = role.contains('@')
        || role.contains("://")
        || role.starts_with(|c: char| c == '+' || c.is_ascii_digit());
    if !shaped || role.is_empty() || reachable {
        return None;
    }
    let mut alias = None;
    for t in TITLES_BEFORE {
        if let Some(r) = name.strip_prefix(t) {
            alias = Some(r.trim().to_string());
        }
    }
    for h in HONORIFICS_AFTER {
        if let Some(r) = name.strip_suffix(h)
            && r.chars().count() >= 2
        {
            alias = Some(r.trim().to_string());
        }
    }
    Some(Contact {
        line,
        name,
        role,
        alias: alias.filter(|a| !a.is_empty()),
    })
}

impl Reader {
    /// The people a block lists, each a `Person` (the user, were they
    /// listed, is left to the user's own block).
    pub(super) fn people_of(&mut self, p: &Path, b: &Block) {
        if !lists_people(&b.title) {
            return;
        }
        let r = self.d.rel(p);
        let user = self.user.as_ref().map(|(_, n)| n.clone());
        let contacts: Vec<Contact> = b
            .bullets
            .iter()
            .filter_map(|(line, text)| contact(*line, text))
            .filter(|c| Some(&c.name) != user.as_ref())
            .collect();
        if contacts.is_empty() {
            return;
        }
        self.d.note(format!(
            "{r}:{}: block `{}` lists people: {} Person{} ({})",
            b.at,
            b.title,
            contacts.len(),
            if contacts.len() == 1 { "" } else { "s" },
            contacts
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for c in contacts {
            let source = self.d.at(p, c.line);
            let meta = core_meta(&self.d, source.clone());
            let mut attrs = Map::new();
            attrs.insert("description".into(), json!(c.role));
            attrs.insert("note_file".into(), json!(r));
            attrs.insert("note_section".into(), json!(b.title));
            if let Some(a) = &c.alias {
                attrs.insert("aliases".into(), json!([a]));
            }
            self.d.concept(Concept {
                ty: "Person".into(),
                name: c.name,
                attrs,
                meta,
                what: "Person (MEMORY.md, a block of people)".into(),
                source,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_that_list_people() {
        for t in [
            "重要な連絡先・関係者",
            "Key People",
            "Contatos importantes",
            "Team",
            "联系人",
        ] {
            assert!(lists_people(t), "{t}");
        }
        for t in ["Contact", "Peoplesoft migration", "Lessons", "关于用户"] {
            assert!(!lists_people(t), "{t}");
        }
    }

    #[test]
    fn a_line_of_a_person_and_lines_that_are_not() {
        assert_eq!(
            contact(
                3,
                "**池内先生** — RFAの理論的アドバイザー（GMR/ICF/PTG/STG）"
            ),
            Some(Contact {
                line: 3,
                name: "池内先生".into(),
                role: "RFAの理論的アドバイザー（GMR/ICF/PTG/STG）".into(),
                alias: Some("池内".into()),
            })
        );
        assert_eq!(
            contact(4, "Dr. Ana Lima - cardiologist, sees Mum every March"),
            Some(Contact {
                line: 4,
                name: "Dr. Ana Lima".into(),
                role: "cardiologist, sees Mum every March".into(),
                alias: Some("Ana Lima".into()),
            })
        );
        assert_eq!(
            contact(5, "Priya: design lead").map(|c| c.name),
            Some("Priya".into())
        );
        for line in [
            "Email: ana@example.org",
            "Phone: +351 912 345 678",
            "Site: https://example.org",
            "the team meets on Mondays",
            "Room 12: the lab",
            "**Ana**",
            "a note with no dash at all",
        ] {
            assert_eq!(contact(1, line), None, "{line}");
        }
    }
}
