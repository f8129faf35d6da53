//! Who the user is, when no `USER.md` and no block of `MEMORY.md` titled
//! for the user says so: a note's profile of a person (`- Name: Paul`
//! beside `- Timezone: Europe/Berlin`), or a block that says who someone
//! the agent assists is (`## Quién es Sandra`); and the user's `Person`
//! made from the block that names them.

use super::super::draft::Concept;
use super::blocks::{Block, aliases_of, parse, plain};
use super::contacts::{contact, lists_people};
use super::relations::family_role;
use super::{Reader, core_meta};
use crate::analysis::is_cjk;
use serde_json::{Map, json};
use std::path::Path;

/// Keys a user's profile gives besides a name (OpenClaw's USER.md
/// template: what to call them, pronouns, timezone; and the language to
/// speak), in the languages the titles are read in. Where someone lives
/// is left out: a note about a client says it as often.
const PROFILE_KEYS: [&str; 27] = [
    "fuso",
    "타임존",
    "시간대",
    "언어",
    "偏好語言",
    "timezone",
    "time zone",
    "zeitzone",
    "fuseau horaire",
    "zona horaria",
    "fuso horário",
    "fuso orario",
    "часовой пояс",
    "时区",
    "時區",
    "タイムゾーン",
    "pronouns",
    "pronomen",
    "what to call them",
    "sprache",
    "language",
    "idioma",
    "langue",
    "lingua",
    "язык",
    "语言",
    "言語",
];

impl Block {
    /// The name a person's profile gives: a `Name:` line beside a line
    /// of a key only a person's profile has (`Timezone:`, `Pronouns:`).
    pub(super) fn profile_name(&self) -> Option<(String, String)> {
        if self.has_profile_key() {
            self.name_line()
        } else {
            None
        }
    }

    /// Whether a line (or a table row) gives a key only a person's
    /// profile has.
    pub(super) fn has_profile_key(&self) -> bool {
        self.pairs()
            .iter()
            .any(|(_, k, _)| PROFILE_KEYS.contains(&k.to_lowercase().as_str()))
    }
}

/// How a title asks who someone is, in the languages the titles are read
/// in: `Who is Lu`, `Quién es Sandra`, `Wer ist Jan`, `Кто такая Женя`.
const WHO_IS: [&str; 15] = [
    "who is ",
    "who's ",
    "quién es ",
    "quien es ",
    "quem é ",
    "quem e ",
    "wer ist ",
    "qui est ",
    "chi è ",
    "chi e ",
    "wie is ",
    "kim jest ",
    "кто такой ",
    "кто такая ",
    "кто ",
];

/// The name a title that asks who someone is gives (`Quién es Sandra` →
/// `Sandra`): a name's shape, a capital first, at most three words.
fn who_is(title: &str) -> Option<String> {
    let t = plain(title);
    let lower = t.to_lowercase();
    let prefix = WHO_IS.iter().find(|p| lower.starts_with(*p))?;
    // (the prefix is as long in lower case: its letters are all ones whose
    // lower case is as long)
    let name = t
        .get(prefix.len()..)
        .or_else(|| {
            let n = prefix.chars().count();
            t.char_indices().nth(n).map(|(i, _)| &t[i..])
        })?
        .trim()
        .trim_end_matches(['?', '？', ':', '.'])
        .trim();
    let named = name.chars().next().is_some_and(char::is_uppercase)
        && (1..=3).contains(&name.split_whitespace().count())
        && !name.contains(|c: char| c.is_numeric() || "()[]`/".contains(c));
    named.then(|| name.to_string())
}

/// Words by which a text says the agent assists someone: `Tú eres
/// **Alfa**, su asistente`, `You are her assistant`, `Du bist sein
/// Assistent`.
fn assists(line: &str) -> bool {
    const WORDS: [&str; 8] = [
        "assistant",
        "asistente",
        "assistente",
        "assistent",
        "ассистент",
        "помощник",
        "助手",
        "アシスタント",
    ];
    let l = line.to_lowercase();
    WORDS.iter().any(|w| l.contains(w))
}

/// The fuller name a block's first line gives for the name in its title
/// (`Sandra Caicedo — agente de …` under `## Quién es Sandra`).
fn full_name(name: &str, body: &[String]) -> Option<String> {
    let first = body.iter().find(|l| !l.trim().is_empty())?;
    let line = first.replace("**", "").replace("__", "");
    let head = line
        .split([',', ':', '(', '—', '–'])
        .next()?
        .split(" - ")
        .next()?
        .trim();
    let words: Vec<&str> = head.split_whitespace().collect();
    let shaped = words.len() > name.split_whitespace().count()
        && words.len() <= 4
        && head.starts_with(name)
        && words.iter().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase) && !w.contains(char::is_numeric)
        });
    shaped.then(|| head.to_string())
}

impl Block {
    /// The name its title asks about (`## Quién es Sandra` → `Sandra`).
    pub(super) fn asks_who(&self) -> Option<String> {
        who_is(&self.title)
    }

    /// Whether its text says the agent assists someone.
    pub(super) fn says_it_assists(&self) -> bool {
        self.body.iter().any(|l| assists(l))
    }

    /// The fuller name its first line gives for `name`.
    pub(super) fn fuller_name(&self, name: &str) -> Option<String> {
        full_name(name, &self.body)
    }
}

/// Honorifics by which an agent speaks of someone else (`加藤さん`,
/// `민수 씨`): it never writes its own name so.
const POLITE: [&str; 7] = ["さん", "様", "さま", "ちゃん", "くん", "씨", "님"];

/// A title that is a name and nothing else (`## 阿杰`, `## 加藤さん`, `###
/// Bilal`, `## Ana Lima`): the name without its honorific, and whether it
/// had one. Words with a capital inside (`BooknGo`) or a digit are a
/// product's, not a person's.
fn bare_name(title: &str) -> Option<(String, bool)> {
    let t = plain(title);
    let t = t.trim();
    let (name, polite) = match POLITE.iter().find_map(|h| t.strip_suffix(h)) {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let n = name.chars().count();
    let cjk = (2..=4).contains(&n) && name.chars().all(is_cjk);
    let words: Vec<&str> = name.split_whitespace().collect();
    let spaced = (1..=3).contains(&words.len())
        && words.iter().all(|w| {
            let mut cs = w.chars();
            cs.next().is_some_and(char::is_uppercase)
                && w.chars().count() >= 2
                && cs.all(|c| c.is_lowercase() || c == '\'' || c == '-')
        });
    (cjk || spaced).then(|| (name.to_string(), polite))
}

/// Whether a text names someone: as a word of its own in the spaced
/// scripts, anywhere in the others.
fn mentions(text: &str, name: &str) -> bool {
    if name.chars().any(is_cjk) {
        return text.contains(name);
    }
    text.match_indices(name).any(|(i, m)| {
        let before = text[..i].chars().next_back();
        let after = text[i + m.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The names of the people a file's lists of people give, and of those
/// of them who are of the user's family (`| Noah | Filho |`).
fn listed(blocks: &[Block]) -> (Vec<String>, Vec<String>) {
    let mut all = Vec::new();
    let mut family = Vec::new();
    for b in blocks {
        if !lists_people(&b.title) && !b.parent.as_deref().is_some_and(lists_people) {
            continue;
        }
        let lines = b.bullets.iter().cloned().chain(b.row_lines());
        for c in lines.filter_map(|(l, t)| contact(l, &t)) {
            let names = std::iter::once(c.name.clone()).chain(c.aliases.clone());
            if family_role(&c.role) {
                family.extend(names.clone());
                // and the given name a block calls them by (`Daniela` of
                // `Daniela Alves`)
                let words: Vec<&str> = c.name.split_whitespace().collect();
                if words.len() > 1 && words[0].chars().count() >= 3 {
                    family.push(words[0].to_string());
                }
            }
            all.extend(names);
        }
    }
    (all, family)
}

/// The block named for the user, in a file that says nothing else of who
/// the user is: a block whose title is a name and nothing else, of
/// someone who is not the agent and not one of the people the file lists,
/// and which says it is the user's by one of
/// - a line only a person's profile has (`## 阿杰` with `- 時區:
///   Asia/Taipei`);
/// - an honorific the agent speaks of someone else with, the name said
///   again in another block (`## 加藤さん`, then `加藤さんメッセージに👀`);
/// - people the file lists as family, named in it, the name said again
///   in another block (`### Bilal`: `Vive em Sintra com Daniela`, and
///   `| Daniela Alves | Companheira |` in the people list).
///
/// The name (without its honorific) and the whole (with it).
fn named_for_user<'a>(
    blocks: &'a [Block],
    agent: Option<&str>,
) -> Option<(&'a Block, (String, String))> {
    let (people, family) = listed(blocks);
    let agents = agent.map(aliases_of).unwrap_or_default();
    blocks.iter().find_map(|b| {
        let (name, polite) = bare_name(&b.title)?;
        let own = aliases_of(&name);
        if b.about_self()
            || own.iter().any(|a| agents.contains(a))
            || people.contains(&name)
            || lists_people(&b.title)
            || b.parent.as_deref().is_some_and(lists_people)
        {
            return None;
        }
        let text = b.text();
        let again = blocks
            .iter()
            .filter(|o| o.at != b.at)
            .any(|o| mentions(&o.text(), &name));
        let kin = family.iter().any(|f| *f != name && mentions(&text, f));
        let whole = if polite {
            plain(&b.title).trim().to_string()
        } else {
            name.clone()
        };
        (b.has_profile_key() || (again && (polite || kin))).then_some((b, (name, whole)))
    })
}

impl Reader {
    /// The block named for the user ([`named_for_user`]), by the agent's
    /// name this reader knows.
    pub(super) fn titled_user<'a>(
        &self,
        blocks: &'a [Block],
    ) -> Option<(&'a Block, (String, String))> {
        named_for_user(blocks, self.agent.as_deref())
    }

    /// The user's Person, from a block that names them.
    pub(super) fn name_user(&mut self, p: &Path, b: &Block, name: String, whole: String) {
        let r = self.d.rel(p);
        self.d.note(format!(
            "{r}:{}: block `{}` names the user: Person `{name}`",
            b.at,
            b.label()
        ));
        self.user = Some(("Person".into(), name.clone()));
        self.aliases.extend(aliases_of(&name));
        self.aliases.extend(aliases_of(&whole));
        let source = self.d.at(p, b.at);
        let mut meta = core_meta(&self.d, source.clone());
        meta.insert("pinned".into(), json!(true));
        let mut attrs = Map::new();
        attrs.insert("relationship_to_self".into(), json!("user"));
        self.d.concept(Concept {
            ty: "Person".into(),
            name,
            attrs,
            meta,
            what: format!("Person (the user, {r})"),
            source,
        });
    }

    /// In a workspace whose USER.md and MEMORY.md name no user, a note's
    /// profile of a person that is not the agent names the user
    /// (`### Identity & Communication` with `- Name: Paul` and `-
    /// Timezone: Europe/Berlin`): an agent keeps one profile of a person,
    /// its user's. The note stays whole as it is.
    pub(super) fn profile_in_note(&mut self, p: &Path, text: &str) {
        // (a note in a folder of its own, `memory/clients/hans.md`, is
        // one of several people's: none of them is the user by it)
        let rel = self.d.rel(p);
        let top = rel.strip_prefix("memory/").unwrap_or(&rel);
        if self.user.is_some() || top.contains('/') {
            return;
        }
        let blocks = parse(text);
        let agent = self.agent.clone();
        let found = blocks.iter().filter(|b| !b.about_self()).find_map(|b| {
            let (name, whole) = b.profile_name()?;
            let own = aliases_of(&name);
            let agents = agent.as_deref().map(aliases_of).unwrap_or_default();
            (!own.iter().any(|a| agents.contains(a))).then_some((b, name, whole))
        });
        if let Some((b, name, whole)) = found {
            self.name_user(p, b, name, whole);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_that_is_a_name() {
        assert_eq!(bare_name("阿杰"), Some(("阿杰".into(), false)));
        assert_eq!(bare_name("加藤さん"), Some(("加藤".into(), true)));
        assert_eq!(bare_name("👤 Bilal"), Some(("Bilal".into(), false)));
        assert_eq!(bare_name("Ana Lima"), Some(("Ana Lima".into(), false)));
        assert_eq!(bare_name("BooknGo"), None);
        assert_eq!(bare_name("FY26事業計画"), None);
        assert_eq!(bare_name("Projectos Activos (Fev 2026)"), None);
        assert!(mentions("Bilal pediu finalizar", "Bilal"));
        assert!(!mentions("Bilala", "Bilal"));
        assert!(mentions("加藤さんは夜参戦", "加藤"));
    }

    #[test]
    fn a_title_that_asks_who_someone_is() {
        assert_eq!(who_is("Quién es Sandra").as_deref(), Some("Sandra"));
        assert_eq!(who_is("👤 Who is Lu Chen?").as_deref(), Some("Lu Chen"));
        assert_eq!(who_is("Кто такая Женя").as_deref(), Some("Женя"));
        assert_eq!(who_is("Wer ist Jan Bernd").as_deref(), Some("Jan Bernd"));
        assert_eq!(who_is("Who is responsible for deploys"), None);
        assert_eq!(who_is("Club Contable"), None);
        assert_eq!(
            full_name("Sandra", &["Sandra Caicedo — agente de seguros".into()]).as_deref(),
            Some("Sandra Caicedo")
        );
        assert_eq!(
            full_name("Sandra", &["Sandra vende seguros en Madrid".into()]),
            None
        );
    }
}
