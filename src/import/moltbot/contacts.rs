//! A `MEMORY.md` block that lists the people the user deals with
//! (`## 重要な連絡先・関係者`, `## Key People`, `## Contatos`): each line of
//! the shape `**Name** — what they are to the user` (or `Name: …`,
//! `Name - …`) is a `Person` of its own, named as written, its role as the
//! description, and the name without its honorific (`池内先生` → `池内`,
//! `Dr. Ana Lima` → `Ana Lima`) as an alias the sleep cycle's judgement
//! can match. The block itself stays a note, word for word.

use super::blocks::Block;
use super::{Reader, core_meta};
use crate::import::draft::{Concept, Link};
use serde_json::{Map, Value, json};
use std::path::Path;

/// Words of a title that lists people, in the spaced scripts (a word of
/// the title) and the others (anywhere in it).
const PEOPLE_WORDS: &[&str] = &[
    "contacts",
    "people",
    "persons",
    "team",
    "staff",
    "colleagues",
    "coworkers",
    "stakeholders",
    "équipe",
    "equipe",
    "collègues",
    "equipo",
    "colegas",
    "equipa",
    "squadra",
    "colleghi",
    "mitarbeiter",
    "kollegen",
    "коллеги",
    "сотрудники",
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
    "family",
    "familie",
    "familia",
    "família",
    "famille",
    "famiglia",
    "семья",
    "friends",
    "freunde",
    "amigos",
    "amis",
    "amici",
    "друзья",
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
    "家族",
    "家人",
    "가족",
    "友人",
    "朋友",
    "친구",
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

/// Words of a title that lists ways to reach someone (`## 📞 Emergency
/// Contacts`): in `USER.md`, the user's own, no other people.
const CONTACT_WORDS: &[&str] = &[
    "contact",
    "contacts",
    "kontakt",
    "kontakte",
    "contacto",
    "contactos",
    "contato",
    "contatos",
    "contatti",
    "контакты",
];
const CONTACT_PARTS: &[&str] = &["連絡先", "联系人", "聯絡人", "联系方式", "연락처"];

/// Whether a block's title says it lists ways to reach someone.
pub(super) fn lists_contacts(title: &str) -> bool {
    super::says_any(title, CONTACT_WORDS, CONTACT_PARTS)
}

/// Words of a title that lists groups, chats or channels, not the people
/// in them (`### Family Groups`: `| Kylian School | School updates | -506… |`).
const GROUP_WORDS: &[&str] = &[
    "group",
    "groups",
    "chat",
    "chats",
    "channel",
    "channels",
    "community",
    "communities",
    "gruppe",
    "gruppen",
    "grupo",
    "grupos",
    "groupe",
    "groupes",
    "gruppo",
    "gruppi",
    "группа",
    "группы",
    "чат",
    "чаты",
    "каналы",
];
const GROUP_PARTS: &[&str] = &["群", "그룹", "グループ", "チャンネル", "频道", "頻道"];

/// Whether a block's title says it lists people (and not their groups).
pub(super) fn lists_people(title: &str) -> bool {
    super::says_any(title, PEOPLE_WORDS, PEOPLE_PARTS)
        && !super::says_any(title, GROUP_WORDS, GROUP_PARTS)
}

/// A one-word label of a practice over what it says in quotes
/// (`**Naming:** "Alvie" for direct, "Diamond" for formal`): an English
/// gerund of six letters or more whose line goes on with a quotation, no
/// one's name in a list of people. (`**Irving:** my accountant` is.)
fn a_practice(name: &str, role: &str) -> bool {
    let n = name.trim();
    !n.contains(char::is_whitespace)
        && n.chars().count() >= 6
        && n.ends_with("ing")
        && role.starts_with(['"', '“', '«', '\'', '`'])
}

/// One person of such a block: their name as written, what they are to
/// the user, the other names it gives them (without an honorific,
/// `池内先生` → `池内`; in parentheses, `Michael Estel (Mitch)` → `Mitch`),
/// and whether the name was set in bold.
#[derive(Debug, PartialEq)]
pub(super) struct Contact {
    pub line: usize,
    pub name: String,
    pub role: String,
    pub aliases: Vec<String>,
    pub bold: bool,
}

/// A line that names two people or more (`**明淵、朗軒** — 大學好友`,
/// `Ana & Rui`): one contact each, the same role; any other, itself.
fn each_named(c: Contact) -> Vec<Contact> {
    let parts: Vec<&str> = c
        .name
        .split(['、', '，', '&', '/'])
        .flat_map(|p| p.split(", "))
        .flat_map(|p| p.split(" and "))
        .map(str::trim)
        .collect();
    if parts.len() < 2 || !parts.iter().all(|p| name_shaped(p)) {
        return vec![c];
    }
    parts
        .into_iter()
        .map(|p| Contact {
            line: c.line,
            name: p.to_string(),
            role: c.role.clone(),
            aliases: Vec::new(),
            bold: c.bold,
        })
        .collect()
}

/// A name's shape: at most four words and 40 characters, no digit, no
/// address, a capital (or a letter of a script without case) first, and
/// in a script with case each later word a capital too but for a name's
/// particles (`Ana de Souza`): `Edgar set me up` is a sentence.
fn name_shaped(name: &str) -> bool {
    let n = name.chars().count();
    let cased = name.chars().next().is_some_and(char::is_uppercase);
    (2..=40).contains(&n)
        && name.split_whitespace().count() <= 4
        && !name.chars().any(|c| c.is_ascii_digit())
        && !name.contains(['@', '/', '`', '[', '(', '（', ':', '：'])
        && name
            .chars()
            .next()
            .is_some_and(|c| !c.is_lowercase() && c.is_alphanumeric())
        && (!cased
            || name.split_whitespace().skip(1).all(|w| {
                !w.chars().next().is_some_and(char::is_lowercase)
                    || NAME_PARTICLES.contains(&w)
                    || LOWER_NAME_WORDS.contains(&w)
            }))
}

/// More words a name may hold in lower case (`Muhammad Arif bin Fazil`,
/// `Abd al Rahman`, `Pedro y Gasset`).
const LOWER_NAME_WORDS: [&str; 12] = [
    "bin", "binti", "bint", "ibn", "al", "el", "y", "e", "du", "des", "den", "zu",
];

/// `Name (Alias)`: the name and what the parentheses hold.
fn split_paren(s: &str) -> (String, Option<String>) {
    match s.split_once(['(', '（']) {
        Some((before, rest)) => {
            let inner = rest.split([')', '）']).next().unwrap_or(rest);
            (before.trim().to_string(), Some(inner.trim().to_string()))
        }
        None => (s.trim().to_string(), None),
    }
}

/// Words of a name that may be written in lower case (`Ana de Souza`,
/// `Jan van Dijk`).
const NAME_PARTICLES: [&str; 12] = [
    "de", "da", "do", "dos", "das", "del", "di", "van", "von", "der", "le", "la",
];

/// A role written before a name (`Wife` of `**Wife:** Sarah Dianne Dinn —
/// born 1983`): the name that opens the rest (its capitalised words, at
/// most four; a run of Chinese, Japanese or Korean letters), and the role
/// with what the rest says after the name (`Wife — born 1983`). `None`
/// when the first part is no role of family or of others, or the rest
/// opens with no name.
fn role_first(first: &str, rest: &str) -> Option<(String, String)> {
    if first.split_whitespace().count() > 3 || !super::relations::names_a_relation(first) {
        return None;
    }
    let rest = rest
        .trim_start_matches(|c: char| c.is_whitespace() || "—–-:：".contains(c))
        .trim_start();
    let mut end = 0;
    let mut at = 0;
    for (words, w) in rest.split_inclusive(char::is_whitespace).enumerate() {
        let i = at;
        at += w.len();
        let bare = w.trim_end();
        let word = bare.trim_end_matches([',', '.', ';', ':', '：']);
        let cased = word.chars().next().is_some_and(char::is_uppercase)
            && word.chars().count() >= 2
            && word
                .chars()
                .all(|c| c.is_alphabetic() || c == '-' || c == '\'' || c == '’');
        let unspaced = words == 0
            && (2..=4).contains(&word.chars().count())
            && word.chars().all(crate::analysis::is_cjk);
        let particle = words > 0 && NAME_PARTICLES.contains(&word);
        if words == 4 || !(cased || unspaced || particle) {
            break;
        }
        end = i + word.len();
        if word.len() != bare.len() || unspaced {
            break;
        }
    }
    let person = rest[..end].trim();
    // (a name does not end on a particle)
    let person = NAME_PARTICLES
        .iter()
        .find_map(|p| person.strip_suffix(&format!(" {p}")))
        .unwrap_or(person);
    if person.is_empty() || !name_shaped(person) {
        return None;
    }
    let after = rest[person.len()..]
        .trim_start_matches(|c: char| c.is_whitespace() || "—–-:：,;.".contains(c))
        .trim();
    let after = after
        .strip_prefix(['(', '（'])
        .and_then(|a| a.strip_suffix([')', '）']))
        .filter(|a| !a.contains(['(', '（', ')', '）']))
        .unwrap_or(after);
    let role = if after.is_empty() {
        first.to_string()
    } else {
        format!("{first} — {after}")
    };
    Some((person.to_string(), role))
}

/// A line that names one of the user's family by their role, wherever it
/// is (`- **Partner:** Mili`, `Son: Archer (born 2022)`): that person.
fn relative(line: usize, bullet: &str) -> Option<Contact> {
    let b = bullet.trim();
    let label = match b.strip_prefix("**") {
        Some(inner) => inner.split_once("**")?.0,
        None => b.split_once([':', '：'])?.0,
    };
    let label = label.trim().trim_end_matches([':', '：']).trim();
    if label.split_whitespace().count() != 1 || !super::relations::family_role(label) {
        return None;
    }
    let c = contact(line, bullet)?;
    (c.name != label).then_some(c)
}

/// A line of a people block as a person, when it has the shape of one:
/// a name ([`name_shaped`]) and, after a dash or a colon, a role that is
/// no address, handle or number (`Email: ana@…`, `Phone: +351…` are not
/// people). What the parentheses after a bold name hold is another name
/// when it has a name's shape, else a detail kept with the role
/// (`**Maja** (Telegram 8775438063) – Tochter von Mitch`).
pub(super) fn contact(line: usize, bullet: &str) -> Option<Contact> {
    let b = bullet.trim();
    let (name, rest, bold) = match b.strip_prefix("**") {
        Some(inner) => {
            let (n, r) = inner.split_once("**")?;
            (n.to_string(), r.to_string(), true)
        }
        None => {
            let at = [" — ", " – ", " - ", ": ", "：", "—"]
                .iter()
                .filter_map(|sep| b.find(sep).map(|i| (i, sep.len())))
                .min()?;
            (b[..at.0].to_string(), b[at.0 + at.1..].to_string(), false)
        }
    };
    let name = name.trim().trim_end_matches([':', '：']).trim().to_string();
    // a line that gives what someone is to the user first, then their
    // name (`**Wife:** Sarah Dinn — born 1983`, `Son: Archer (born
    // 2022)`): the person is the name
    let (name, rest) = match role_first(&name, &rest) {
        Some((person, role)) => (person, role),
        None => (name, rest),
    };
    let mut aliases = Vec::new();
    let (name, inner) = split_paren(&name);
    if let Some(a) = inner.filter(|a| name_shaped(a)) {
        aliases.push(a);
    }
    let mut rest = rest
        .trim_start_matches([':', '：'])
        .trim_start()
        .to_string();
    let mut details = None;
    if bold && rest.starts_with(['(', '（']) {
        let (_, inner) = split_paren(&rest);
        let close = rest
            .find([')', '）'])
            .map(|i| i + rest[i..].chars().next().map_or(1, char::len_utf8));
        if let (Some(inner), Some(close)) = (inner, close) {
            if name_shaped(&inner) {
                aliases.push(inner);
            } else {
                details = Some(inner);
            }
            rest = rest[close..].to_string();
        }
    }
    let mut role = rest
        .trim_start_matches(|c: char| c.is_whitespace() || "—–-:：,".contains(c))
        .trim()
        .to_string();
    // (a role that is an address; one that gives an address after what
    // the person is, `Propriétaire (jiji@gmail.com)`, is a role)
    let first = role.split_whitespace().next().unwrap_or("");
    let reachable = first.contains('@')
        || first.contains("://")
        || role.starts_with(|c: char| c == '+' || c.is_ascii_digit());
    if !name_shaped(&name) || a_practice(&name, &role) || role.is_empty() || reachable {
        return None;
    }
    if let Some(d) = details {
        role = format!("{role} ({d})");
    }
    for t in TITLES_BEFORE {
        if let Some(r) = name.strip_prefix(t) {
            aliases.insert(0, r.trim().to_string());
        }
    }
    for h in HONORIFICS_AFTER {
        if let Some(r) = name.strip_suffix(h)
            && r.chars().count() >= 2
        {
            aliases.insert(0, r.trim().to_string());
        }
    }
    aliases.retain(|a| !a.is_empty() && *a != name);
    aliases.dedup();
    Some(Contact {
        line,
        name,
        role,
        aliases,
        bold,
    })
}

impl Reader {
    /// The people a block lists, each a `Person` (the user, were they
    /// listed, is left to the user's own block). Only the block's own
    /// bullets are people; the bullets under one say more of that person
    /// (kept as its `details`). A block whose names are not set in bold
    /// lists people only when every one of its bullets is one (a setup
    /// note with `Kann: Kontakte suchen` lines is no list of people).
    pub(super) fn people_of(&mut self, p: &Path, b: &Block) {
        // a block that does not list people may still name the user's
        // family by role (`## Personal`: `- **Partner:** Mili`)
        let listing = lists_people(&b.title);
        let r = self.d.rel(p);
        let user = self.user.as_ref().map(|(_, n)| n.clone());
        // its own bullets, not those of the `### ` blocks folded into it
        let top: Vec<&(usize, String)> = b
            .bullets
            .iter()
            .filter(|(line, _)| !b.nested.contains(line) && *line < b.own_until)
            .collect();
        // (a table's rows are people as its bullets are: `| Noah | Filho
        // | 15 anos |`)
        let rows: Vec<(usize, String)> = b.row_lines().filter(|(l, _)| *l < b.own_until).collect();
        let mut contacts: Vec<Contact> = top
            .iter()
            .map(|(line, text)| (*line, text.as_str()))
            .chain(rows.iter().map(|(line, text)| (*line, text.as_str())))
            .filter_map(|(line, text)| {
                if listing {
                    contact(line, text)
                } else {
                    relative(line, text)
                }
            })
            .flat_map(each_named)
            .filter(|c| Some(&c.name) != user.as_ref())
            .collect();
        // a line on the user under another name the files give them (`**Alvie
        // (Diamond):** Primary operator` of the user Alvaro Medina, called
        // Alvie, handle Diamond) is the user's, no one else's; one that
        // says what someone is to the user (`Robert: my father`) is not
        if let Some(u) = &user {
            // (whole names only: a word of the user's name, `Robert` of
            // Emerson Robert Lackey, may well be someone else's)
            let mut names = vec![u.to_lowercase()];
            if let Some(a) = self.d.attrs_of("Person", u).and_then(|a| a.get("aliases")) {
                names.extend(
                    a.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_lowercase),
                );
            }
            let theirs = |n: &String| {
                let n = n.to_lowercase();
                names.contains(&n) || self.handles.contains(&n)
            };
            let (own, others): (Vec<Contact>, Vec<Contact>) = contacts.into_iter().partition(|c| {
                !super::relations::names_a_relation(&c.role)
                    && (theirs(&c.name) || c.aliases.iter().any(theirs))
            });
            contacts = others;
            for c in own {
                self.d.note(format!(
                    "{r}:{}: `{}` is the user `{u}`: a name the user's profile gives, no one else",
                    c.line, c.name
                ));
            }
        }
        // a line on the agent (`| Cleo | Owl | 🦉 | Clinical data |` in a
        // list of an agent family, of the agent IDENTITY.md names Cleo)
        // is `$self`'s, no Person's
        if let Some(me) = self.agent.clone() {
            let (mine, others): (Vec<Contact>, Vec<Contact>) = contacts
                .into_iter()
                .partition(|c| c.name.to_lowercase() == me.to_lowercase());
            contacts = others;
            for c in mine {
                self.d.note(format!(
                    "{r}:{}: `{}` is the agent (`$self`): IDENTITY.md names it so",
                    c.line, c.name
                ));
            }
        }
        // (a name another line gives as someone's other name is that one)
        let others: Vec<String> = contacts.iter().flat_map(|c| c.aliases.clone()).collect();
        contacts.retain(|c| !others.contains(&c.name));
        if contacts.is_empty()
            || (listing && !contacts.iter().any(|c| c.bold) && contacts.len() < top.len())
        {
            return;
        }
        self.d.note(format!(
            "{r}:{}: block `{}` {}: {} Person{} ({})",
            b.at,
            b.title,
            if listing {
                "lists people"
            } else {
                "names the user's family"
            },
            contacts.len(),
            if contacts.len() == 1 { "" } else { "s" },
            contacts
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for c in contacts {
            // the bullets under this one, up to the block's next own bullet
            let next = top
                .iter()
                .map(|(l, _)| *l)
                .find(|l| *l > c.line)
                .unwrap_or(usize::MAX);
            let details: Vec<String> = b
                .bullets
                .iter()
                .filter(|(l, _)| *l > c.line && *l < next && b.nested.contains(l))
                .map(|(_, t)| t.clone())
                .collect();
            let source = self.d.at(p, c.line);
            let meta = core_meta(&self.d, source.clone());
            let mut attrs = Map::new();
            attrs.insert("description".into(), json!(c.role));
            if !details.is_empty() {
                attrs.insert("details".into(), json!(details));
            }
            attrs.insert("note_file".into(), json!(r));
            attrs.insert("note_section".into(), json!(b.title));
            // a team of agents (`### AI Team`: `**Scout** (Researcher)`)
            // is of AIs, as `$self` is
            if of_agents(&b.title) {
                attrs.insert("person_class".into(), json!("AI"));
            }
            if !c.aliases.is_empty() {
                attrs.insert("aliases".into(), json!(c.aliases));
            }
            // what they are to the user is a link from the user (`knows`,
            // labelled with the role: `Wife`), as Engram's family and
            // friends are: a query finds the user's wife from the user
            let kin = !listing || super::relations::names_a_relation(&c.role);
            if let Some((ty, u)) = self.user.clone().filter(|_| kin) {
                // (core memory, as the Person is; a link labelled with kin
                // never fades)
                let mut meta = core_meta(&self.d, source.clone());
                // (the role's first words: `Wife` of `Wife — born 1983`)
                let label = c
                    .role
                    .split([' ', '—', '–', '(', ',', ';'])
                    .next()
                    .unwrap_or("");
                let label = c
                    .role
                    .split(" — ")
                    .next()
                    .filter(|l| l.split_whitespace().count() <= 4)
                    .unwrap_or(label);
                meta.insert("label".into(), json!(label.trim()));
                self.d.link(Link {
                    from: (ty, u),
                    predicate: "knows".into(),
                    to: ("Person".into(), c.name.clone()),
                    meta,
                    source: source.clone(),
                });
            }
            self.d.concept(Concept {
                ty: "Person".into(),
                name: c.name,
                attrs,
                meta,
                what: if listing {
                    format!("Person ({r}, a block of people)")
                } else {
                    format!("Person ({r}, a relative named by role)")
                },
                source,
            });
        }
    }
}

/// Words of a block's title that say its people are agents (`## Sub-agents`,
/// `## Bots`, `Agent Family`, `智能体团队`, `エージェント一覧`); `AI` says so
/// before a word for a group (`### AI Team`), never alone (`## Contacts
/// at AI labs` lists people).
const AGENT_WORDS: [&str; 9] = [
    "agent",
    "agents",
    "sub-agents",
    "subagents",
    "bot",
    "bots",
    "智能体",
    "エージェント",
    "에이전트",
];

/// Words for a group that `AI` before them makes a group of agents.
const TEAM_WORDS: [&str; 5] = ["team", "crew", "squad", "staff", "workers"];

/// Whether a block's title says the people it lists are agents.
fn of_agents(title: &str) -> bool {
    let low = title.to_lowercase();
    let words: Vec<&str> = low
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().any(|w| AGENT_WORDS.contains(w))
        || words
            .windows(2)
            .any(|p| p[0] == "ai" && TEAM_WORDS.contains(&p[1]))
        || AGENT_WORDS
            .iter()
            .filter(|w| !w.is_ascii())
            .any(|w| low.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_of_agents() {
        for t in [
            "AI Team",
            "Sub-agents",
            "Bots",
            "Spectator Health Agent Family",
            "智能体团队",
        ] {
            assert!(of_agents(t), "{t}");
        }
        for t in [
            "Contacts at AI labs",
            "代理商联系人",
            "Family",
            "Team",
            "Robotics club",
        ] {
            assert!(!of_agents(t), "{t}");
        }
    }

    /// A line of two friends (`**明淵、朗軒** — 大學好友，每週聚餐`, a real
    /// Taiwanese `## Key People`) was one Person `明淵、朗軒`.
    #[test]
    fn a_line_that_names_two_people_is_two_contacts() {
        let two = Contact {
            line: 30,
            name: "明淵、朗軒".into(),
            role: "大學好友，每週聚餐".into(),
            aliases: vec![],
            bold: true,
        };
        let names: Vec<String> = each_named(two).into_iter().map(|c| c.name).collect();
        assert_eq!(names, vec!["明淵", "朗軒"]);
        for (name, n) in [
            ("Ana & Rui", 2),
            ("Ana, Rui and Eva", 3),
            ("Ana de Souza", 1),
            ("R&D team", 1),
        ] {
            let c = Contact {
                line: 1,
                name: name.into(),
                role: String::new(),
                aliases: vec![],
                bold: false,
            };
            assert_eq!(each_named(c).len(), n, "{name}");
        }
    }

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
        for t in ["Familie & Kommunikation", "Family", "家族"] {
            assert!(lists_people(t), "{t}");
        }
        for t in [
            "Contact",
            "Peoplesoft migration",
            "Lessons",
            "关于用户",
            "Family Groups",
            "家人群",
        ] {
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
                aliases: vec!["池内".into()],
                bold: true,
            })
        );
        assert_eq!(
            contact(4, "Dr. Ana Lima - cardiologist, sees Mum every March"),
            Some(Contact {
                line: 4,
                name: "Dr. Ana Lima".into(),
                role: "cardiologist, sees Mum every March".into(),
                aliases: vec!["Ana Lima".into()],
                bold: false,
            })
        );
        assert_eq!(
            contact(5, "Priya: design lead").map(|c| c.name),
            Some("Priya".into())
        );
        // an address after what the person is
        assert_eq!(
            contact(
                6,
                "**Adam Wilson** - Collaborateur (wilson.adam@example.org)"
            )
            .map(|c| (c.name, c.role)),
            Some((
                "Adam Wilson".into(),
                "Collaborateur (wilson.adam@example.org)".into()
            ))
        );
        for line in [
            "Email: ana@example.org",
            "Email: ana@example.org (work)",
            "Phone: +351 912 345 678",
            "Site: https://example.org",
            "the team meets on Mondays",
            "Room 12: the lab",
            "**Ana**",
            "a note with no dash at all",
            "**Naming:** \"Alvie\" for direct, \"Diamond\" for formal/public",
        ] {
            assert_eq!(contact(1, line), None, "{line}");
        }
        assert_eq!(
            contact(1, "**Irving:** my accountant").map(|c| c.name),
            Some("Irving".into())
        );
    }

    #[test]
    fn a_role_written_before_the_name() {
        let person = |l: &str| contact(1, l).map(|c| (c.name, c.role));
        assert_eq!(
            person(
                "**Wife:** Sarah Dianne Dinn — born January 7, 1983. Together since high school."
            ),
            Some((
                "Sarah Dianne Dinn".into(),
                "Wife — born January 7, 1983. Together since high school.".into()
            ))
        );
        assert_eq!(
            person("**Daughter:** Amelia Jean Dinn-Lackey — born June 26, 2017."),
            Some((
                "Amelia Jean Dinn-Lackey".into(),
                "Daughter — born June 26, 2017.".into()
            ))
        );
        assert_eq!(
            person("Son: Archer (born May 24, 2022)"),
            Some(("Archer".into(), "Son — born May 24, 2022".into()))
        );
        assert_eq!(
            person("**Mãe** — Maria da Silva, mora em Porto"),
            Some(("Maria da Silva".into(), "Mãe — mora em Porto".into()))
        );
        assert_eq!(
            person("Sister: Linda, lives in Leeds"),
            Some(("Linda".into(), "Sister — lives in Leeds".into()))
        );
        assert_eq!(
            person("Mother: Ana de la Cruz"),
            Some(("Ana de la Cruz".into(), "Mother".into()))
        );
        assert_eq!(
            person("**Boss:** Carl"),
            Some(("Carl".into(), "Boss".into()))
        );
        assert_eq!(
            person("**妻子：** 小林"),
            Some(("小林".into(), "妻子".into()))
        );
        // a name that holds a role's word is a name; a role with no name
        // after it is left as it was
        assert_eq!(
            person("**Son Heung-min** — footballer, Ana's favourite"),
            Some(("Son Heung-min".into(), "footballer, Ana's favourite".into()))
        );
        assert_eq!(person("**Wife:** ana@example.org"), None);
        // a line of any length or script is read without a panic: one
        // whose words after the role are longer than a name opens with
        // no name, and is read as a line without a role first
        let long = format!("**Wife:** Zoë {}", "Ä".repeat(200_000));
        assert_eq!(person(&long).map(|(n, _)| n), Some("Wife".into()));
        assert_eq!(
            person("**Wife:** Zoë 🌸 Ångström"),
            Some(("Zoë".into(), "Wife — 🌸 Ångström".into()))
        );
    }

    #[test]
    fn a_relative_named_by_role_in_any_block() {
        let person = |l: &str| relative(1, l).map(|c| (c.name, c.role));
        assert_eq!(
            person("**Partner:** Mili"),
            Some(("Mili".into(), "Partner".into()))
        );
        assert_eq!(
            person("Son: Archer (born May 24, 2022)"),
            Some(("Archer".into(), "Son — born May 24, 2022".into()))
        );
        for line in [
            "**Gym:** goes with Agustin Lima",
            "**Boss:** Carl",
            "**Partner:** none yet",
            "Sister city: Porto",
            "**Dad jokes:** Loves Them",
        ] {
            assert_eq!(person(line), None, "{line}");
        }
    }

    #[test]
    fn a_sentence_before_a_dash_is_no_name() {
        for name in [
            "Ana de Souza",
            "Muhammad Arif bin Fazil",
            "Jan van Dijk",
            "Money Penny",
            "张伟",
        ] {
            assert!(name_shaped(name), "{name}");
        }
        for sentence in ["Edgar set me up", "Hugo handles iOS", "Ada monitors infra"] {
            assert!(!name_shaped(sentence), "{sentence}");
        }
        assert!(contact(1, "Edgar set me up (2026-03-24/25) — he's the senior agent").is_none());
    }

    #[test]
    fn a_name_with_another_in_parentheses_and_a_detail_before_the_role() {
        assert_eq!(
            contact(
                4,
                "**Michael Estel (Mitch)** (Telegram 6882251060) – Der Chef, autorisierte Quelle"
            ),
            Some(Contact {
                line: 4,
                name: "Michael Estel".into(),
                role: "Der Chef, autorisierte Quelle (Telegram 6882251060)".into(),
                aliases: vec!["Mitch".into()],
                bold: true,
            })
        );
        assert_eq!(
            contact(5, "**Robin Mandel** — Sohn von Chris"),
            Some(Contact {
                line: 5,
                name: "Robin Mandel".into(),
                role: "Sohn von Chris".into(),
                aliases: vec![],
                bold: true,
            })
        );
        assert_eq!(
            contact(6, "**Ana** (Ani): my sister").map(|c| (c.name, c.aliases, c.role)),
            Some(("Ana".into(), vec!["Ani".into()], "my sister".into()))
        );
    }
}
