//! Who the user is, when no `USER.md` and no block of `MEMORY.md` titled
//! for the user says so: a note's profile of a person (`- Name: Paul`
//! beside `- Timezone: Europe/Berlin`), or a block that says who someone
//! the agent assists is (`## Quién es Sandra`); and the user's `Person`
//! made from the block that names them.

use super::super::draft::Concept;
use super::blocks::{Block, aliases_of, parse, plain};
use super::{Reader, core_meta};
use serde_json::{Map, json};
use std::path::Path;

/// Keys a user's profile gives besides a name (OpenClaw's USER.md
/// template: what to call them, pronouns, timezone; and the language to
/// speak), in the languages the titles are read in. Where someone lives
/// is left out: a note about a client says it as often.
const PROFILE_KEYS: [&str; 22] = [
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
        let keyed = self.bullets.iter().any(|(_, b)| {
            let plain = b.replace("**", "").replace("__", "");
            plain
                .split_once([':', '：'])
                .is_some_and(|(k, _)| PROFILE_KEYS.contains(&k.trim().to_lowercase().as_str()))
        });
        if keyed { self.name_line() } else { None }
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

impl Reader {
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
        let (blocks, _) = parse(text);
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
