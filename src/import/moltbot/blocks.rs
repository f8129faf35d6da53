//! `MEMORY.md`'s blocks of no known title (`## Shop numbers`,
//! `## About Lu`, `## 关于用户`): what each holds, and whether it is about
//! the user. A block about the user is kept on the user's `Person` as
//! `memory_<title>` (a bulleted block as a list of its items, any other,
//! a table, a paragraph, a code block, as its text, every line of it).
//! Any other block is a note of its own: an `Insight` named by its title,
//! its text verbatim as the description (what SEARCH reads and the sleep
//! cycle files by topic), pinned, as the curated long-term memory it is.

use super::super::draft::{Concept, short};
use super::super::markdown::{comment_only, heading_time, placeholder, strip_time};
use super::super::predicate_name;
use super::{Reader, core_meta};
use serde_json::{Map, Value, json};
use std::path::Path;

/// A `## ` block of `MEMORY.md`, or a `### ` block within one: its
/// title, its line, its bullets with their lines, every line under the
/// title, and the `## ` block it is part of.
pub(super) struct Block {
    pub title: String,
    pub at: usize,
    pub bullets: Vec<(usize, String)>,
    /// The lines of its bullets that are indented under another.
    pub nested: std::collections::HashSet<usize>,
    /// Where the `### ` blocks folded into it begin (its own lines end).
    pub own_until: usize,
    pub body: Vec<String>,
    pub parent: Option<String>,
    /// `### ` blocks within it.
    pub subs: usize,
    /// Its tables' rows below their headers, with their lines.
    pub rows: Vec<(usize, Vec<String>)>,
}

/// `## ` blocks whose lines are read as the seed's layout, `### `
/// headings included.
const KNOWN: [&str; 4] = ["identity", "active context", "persona", "critical facts"];

/// `MEMORY.md`'s blocks in order (what comes before the first is
/// [`preamble`]'s). A `### ` heading within a `## ` block of no known title starts a block
/// of its own (`## Core Facts` › `### About My Human`); a heading inside
/// a fenced code block is a line of it.
pub(super) fn parse(text: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    // the open `## ` block's title, and its index
    let mut top: Option<(String, usize)> = None;
    let mut fence = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
        }
        let new = |title: &str, parent: Option<String>| Block {
            title: title.trim().trim_matches('#').trim().to_string(),
            at: n,
            bullets: Vec::new(),
            nested: std::collections::HashSet::new(),
            own_until: usize::MAX,
            body: Vec::new(),
            parent,
            subs: 0,
            rows: Vec::new(),
        };
        if !fence && let Some(h) = line.strip_prefix("## ") {
            top = Some((h.trim().to_string(), blocks.len()));
            blocks.push(new(h, None));
            continue;
        }
        if !fence
            && let Some(h) = line.strip_prefix("### ")
            && let Some((parent, at)) = &top
            && !KNOWN.contains(&parent.to_lowercase().as_str())
        {
            blocks[*at].subs += 1;
            blocks.push(new(h, Some(parent.clone())));
            continue;
        }
        if let Some(b) = blocks.last_mut() {
            if let Some(item) = super::bullet(line) {
                b.bullets.push((n, item.trim().to_string()));
                if line.starts_with([' ', '\t']) {
                    b.nested.insert(n);
                }
            }
            // a table's rows; the row above the line under a header
            // is that header
            if !fence && let Some(cells) = super::tables::cells(line) {
                if super::tables::separator(&cells) {
                    if b.rows.last().is_some_and(|(at, _)| *at + 1 == n) {
                        b.rows.pop();
                    }
                } else {
                    b.rows.push((n, cells));
                }
            }
            b.body.push(line.to_string());
        }
    }
    blocks
}

/// What `MEMORY.md` says before its first `## ` block, when it lists
/// something (a file of bullets and no heading, as many agents keep it),
/// as a block of its own: titled by the file's `# ` title, else
/// `MEMORY.md`, from its first line that says something (the title,
/// rules `---`, comments and a template's hint in italics,
/// `_This is your curated memory._`, say nothing). `None` when it holds
/// no bullet or numbered item.
pub(super) fn preamble(text: &str) -> Option<Block> {
    let mut fence = false;
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| {
            let t = l.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                fence = !fence;
            }
            fence || !l.starts_with("## ")
        })
        .collect();
    let comments = comment_only(lines.iter().copied());
    let title_at = lines.iter().position(|l| l.starts_with("# "));
    let says = |i: usize| {
        let t = lines[i].trim();
        let italic = (t.len() > 2 && t.starts_with('_') && t.ends_with('_'))
            || (t.len() > 2 && t.starts_with('*') && t.ends_with('*') && !t.starts_with("**"));
        Some(i) != title_at
            && !t.is_empty()
            && !comments[i]
            && !italic
            && !t.chars().all(|c| matches!(c, '-' | '*' | '_' | '=' | ' '))
    };
    let first = (0..lines.len()).find(|&i| says(i))?;
    let last = (0..lines.len()).rev().find(|&i| says(i))?;
    let title = title_at
        .map(|i| lines[i].trim_start_matches('#').trim().to_string())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "MEMORY.md".to_string());
    let mut bullets = Vec::new();
    let mut nested = std::collections::HashSet::new();
    for (i, line) in lines.iter().enumerate().take(last + 1).skip(first) {
        if let Some(b) = super::bullet(line) {
            bullets.push((i + 1, b.trim().to_string()));
            if line.starts_with([' ', '\t']) {
                nested.insert(i + 1);
            }
        }
    }
    // (a paragraph alone before the first block says what the file is:
    // `Purpose: curated high-signal memory`, `Last update: …`)
    if bullets.is_empty() {
        return None;
    }
    Some(Block {
        title,
        at: first + 1,
        bullets,
        nested,
        own_until: usize::MAX,
        body: lines[first..=last].iter().map(|l| l.to_string()).collect(),
        parent: None,
        subs: 0,
        rows: Vec::new(),
    })
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
const USER_WORDS: [&str; 27] = [
    "user",
    "human",
    "owner",
    "humano",
    "humana",
    "humain",
    "umano",
    "mensch",
    "menschen",
    "пользователя",
    "пользователю",
    "пользователем",
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
const USER_PARTS: [&str; 7] = [
    "用户",
    "用戶",
    "使用者",
    "主人",
    "ユーザー",
    "사용자",
    "유저",
];

impl Block {
    /// What the block holds: its bullets as a list when every line that
    /// is not blank is one, else its text (every line, the blank ones
    /// around it trimmed); `None` for an empty block or one that holds
    /// only a template's blanks.
    pub fn value(&self) -> Option<Value> {
        let lines = self.body.iter().filter(|l| !l.trim().is_empty()).count();
        // a template's blanks only (`[Fill in after first conversation]`,
        // `<!-- One line per service endpoint -->`)
        let comments = comment_only(self.body.iter().map(String::as_str));
        let blank = |(i, l): (usize, &String)| {
            let t = l.trim();
            t.is_empty() || comments[i] || placeholder(super::bullet(t).unwrap_or(t))
        };
        if lines == 0 || self.body.iter().enumerate().all(blank) {
            return None;
        }
        if self.bullets.len() == lines {
            return Some(json!(
                self.bullets.iter().map(|b| b.1.clone()).collect::<Vec<_>>()
            ));
        }
        Some(json!(self.text()))
    }

    /// Its table rows below their headers, each as a bullet's text would
    /// be (`**Noah** — Filho — 15 anos`).
    pub(super) fn row_lines(&self) -> impl Iterator<Item = (usize, String)> {
        super::tables::row_lines(&self.rows).into_iter()
    }

    /// The block's keys and values: its bullets of the shape `Key:
    /// value`, and its table rows' first two cells.
    pub(super) fn pairs(&self) -> Vec<(usize, String, String)> {
        let mut out: Vec<(usize, String, String)> = self
            .bullets
            .iter()
            .filter_map(|(at, b)| {
                let plain = b.replace("**", "").replace("__", "");
                let (k, v) = plain.split_once([':', '：'])?;
                Some((*at, k.trim().to_string(), v.trim().to_string()))
            })
            .collect();
        out.extend(super::tables::row_pairs(&self.rows));
        out
    }

    /// Every line under the title, the blank ones around them trimmed.
    pub fn text(&self) -> String {
        self.body.join("\n").trim_matches('\n').to_string()
    }
}

/// What introduces another name in a `Name:` value.
const CALLED: [&str; 6] = [
    "goes by ",
    "aka ",
    "a.k.a. ",
    "called ",
    "call me ",
    "known as ",
];

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
        let mut t = part
            .trim()
            .trim_matches(['*', '_', '`', '"', '\'', '@'])
            .trim()
            .to_lowercase();
        // `goes by Ev`, `aka Ev`: the name is what follows
        for lead in CALLED {
            if let Some(rest) = t.strip_prefix(lead) {
                t = rest.trim().trim_start_matches('@').to_string();
            }
        }
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
    if super::says_any(title, &USER_WORDS, &USER_PARTS) {
        return true;
    }
    let t = title.to_lowercase();
    let cjk_title = t.chars().any(|c| !spaced(c) && c.is_alphanumeric());
    aliases.iter().any(|a| {
        if !a.chars().all(|c| spaced(c) || c.is_whitespace()) {
            return t.contains(a.as_str());
        }
        // a name in Latin letters inside a title in Chinese, Japanese or
        // Korean (`konukiについて`: about konuki; `konukiの好み`: konuki's
        // preferences), as a word of its own
        if cjk_title && a.chars().count() >= 3 {
            let a = a.to_lowercase();
            return t.match_indices(a.as_str()).any(|(i, m)| {
                let before = t[..i].chars().next_back();
                let after = t[i + m.len()..].chars().next();
                let latin = |c: Option<char>| c.is_some_and(|c| spaced(c) && c.is_alphanumeric());
                !latin(before) && !latin(after)
            });
        }
        // a name in a title of words of the spaced scripts: the title is
        // about the user when it is the name's (`Lucía's projects`) or
        // says nothing but about whom it is (`About Lu`, `Preferences of
        // Ev`); a name in a longer phrase (`When Karel Leaves a Note`, a
        // workflow) is no title about the user
        // (what parentheses add is a remark: `About Arif (Permanent Facts)`
        // is a title about Arif)
        let mut depth = 0usize;
        let outside: String = t
            .chars()
            .map(|c| match c {
                '(' | '（' => {
                    depth += 1;
                    ' '
                }
                ')' | '）' => {
                    depth = depth.saturating_sub(1);
                    ' '
                }
                _ if depth > 0 => ' ',
                c => c,
            })
            .collect();
        let words: Vec<&str> = outside
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let name: Vec<&str> = a.split_whitespace().collect();
        // (the name's genitive written on to it, as Swedish, German and
        // Dutch do: `Annas önskemål och förväntningar`, Anna's wishes, is
        // as `Lucía's projects`)
        let n = name.len();
        let glued = n > 0
            && name[n - 1].chars().count() >= 3
            && words.windows(n).any(|w| {
                w[..n - 1] == name[..n - 1]
                    && w[n - 1].strip_suffix('s') == Some(name[n - 1])
                    && !w[n - 1].ends_with("ss")
            });
        if glued {
            return true;
        }
        let at = words.windows(name.len()).position(|w| w == name.as_slice());
        let Some(at) = at else { return false };
        let after = words.get(at + name.len()).copied();
        after == Some("s")
            || words
                .iter()
                .enumerate()
                .filter(|(i, _)| !(at..at + name.len()).contains(i))
                .all(|(_, w)| {
                    ABOUT_WORDS.contains(w) || USER_WORDS.contains(w) || OPERATOR_WORDS.contains(w)
                })
    })
}

/// What a workspace calls its human when it names them beside their name
/// (`Opérateur — Blaise`, `Operator: Sam`). Alone, or with other words
/// (`Kubernetes Operator`), the word says nothing of the user.
const OPERATOR_WORDS: [&str; 8] = [
    "operator",
    "opérateur",
    "opératrice",
    "operador",
    "operadora",
    "operatore",
    "operatrice",
    "betreiber",
];

/// Words a title about someone is made of besides their name: `About
/// Lu`, `Preferences of Ev`, `Lucía: key facts`, in a few languages.
const ABOUT_WORDS: [&str; 52] = [
    "who",
    "quién",
    "quien",
    "es",
    "quem",
    "é",
    "wer",
    "ist",
    "qui",
    "est",
    "chi",
    "è",
    "кто",
    "about",
    "of",
    "on",
    "for",
    "the",
    "a",
    "my",
    "our",
    "is",
    "profile",
    "preferences",
    "preference",
    "facts",
    "fact",
    "key",
    "core",
    "info",
    "information",
    "details",
    "notes",
    "note",
    "context",
    "background",
    "bio",
    "likes",
    "dislikes",
    "habits",
    "style",
    "personal",
    "family",
    "contact",
    "contacts",
    "sobre",
    "über",
    "von",
    "de",
    "propos",
    "la",
    "el",
];

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

/// Keys of a line that gives the user's name in a block about the user
/// (`- **Name:** Евгений (Evgeny) Нечаев, goes by Ev`).
const NAME_KEYS: [&str; 14] = [
    "name",
    "full name",
    "名字",
    "姓名",
    "名稱",
    "名称",
    "nombre",
    "nom",
    "nome",
    "nome completo",
    "имя",
    "名前",
    "이름",
    "성명",
];

/// How a block is named, and whom it is about.
impl Block {
    /// Whether a heading says something, not only names a section: a
    /// sentence (a full stop or an exclamation inside or at its end), a
    /// label with a statement after its colon, or eight words or more.
    pub(super) fn states(title: &str) -> bool {
        let t = title.trim();
        if placeholder(t) {
            return false;
        }
        let words = t.split_whitespace().count();
        let after_colon = t
            .split_once(": ")
            .map_or(0, |(_, rest)| rest.split_whitespace().count());
        t.contains(". ") || t.ends_with(['.', '!', '。', '！']) || after_colon >= 3 || words >= 8
    }

    /// The block's title as reported: `Core Facts › About My Human`.
    pub(super) fn label(&self) -> String {
        match &self.parent {
            Some(p) => format!("{p} › {}", self.title),
            None => self.title.clone(),
        }
    }

    /// The attribute name's part for this block: `core_facts_about_my_human`.
    fn key(&self) -> String {
        match &self.parent {
            Some(p) => predicate_name(&format!("{p} {}", self.title)),
            None => predicate_name(&self.title),
        }
    }

    /// Whether it is about the user: its title or its `## ` block's, unless
    /// its own title says what someone is to the user (`### +65… (Tianshu
    /// 太太)` under `## 用户权限`: the permissions of his wife).
    fn about_user(&self, aliases: &[String]) -> bool {
        if super::relations::names_a_relation(&self.title) {
            return false;
        }
        about_user(&self.title, aliases)
            || self
                .parent
                .as_deref()
                .is_some_and(|p| about_user(p, aliases))
    }

    /// The name a `Name:` line gives (up to a comma, without what is in
    /// parentheses: `Евгений Нечаев`), and the whole value.
    pub(super) fn name_line(&self) -> Option<(String, String)> {
        self.pairs().into_iter().find_map(|(_, k, v)| {
            let v = v.as_str();
            if !NAME_KEYS.contains(&k.to_lowercase().as_str()) || placeholder(v) {
                return None;
            }
            let head = v.split([',', ';', '，', '；']).next().unwrap_or(v);
            let mut name = String::new();
            let mut depth = 0usize;
            for c in head.chars() {
                match c {
                    '(' | '（' => depth += 1,
                    ')' | '）' => depth = depth.saturating_sub(1),
                    c if depth == 0 => name.push(c),
                    _ => {}
                }
            }
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            let name = name
                .trim_matches(['*', '_', '`', '"', '\''])
                .trim()
                .to_string();
            (name.chars().count() >= 2).then(|| (name, v.trim().to_string()))
        })
    }

    /// The name a title about the user gives in parentheses
    /// (`### About My Human (Najia)`): a name's shape (a capital first,
    /// at most three words, no digit), never a remark (`(Draft)`).
    fn title_name(&self) -> Option<(String, String)> {
        let (before, rest) = self.title.split_once(['(', '（'])?;
        let (name, _) = rest.split_once([')', '）'])?;
        let mut name = name.trim().to_string();
        let mut lower = name.to_lowercase();
        // `## Jan Bernd Gudel (User)`: the name is what the parentheses
        // follow
        if USER_WORDS.contains(&lower.as_str()) || USER_PARTS.contains(&lower.as_str()) {
            name = plain(before);
            lower = name.to_lowercase();
            if about_user(&name, &[]) {
                return None;
            }
        }
        let named = name.chars().count() >= 2
            && name.chars().next().is_some_and(|c| !c.is_lowercase())
            && name.split_whitespace().count() <= 3
            && !name.contains(char::is_numeric)
            && !placeholder(&name)
            && !REMARKS.contains(&lower.as_str())
            && !USER_WORDS.contains(&lower.as_str());
        named.then(|| (name.clone(), name))
    }
}

/// What a title's parentheses say when the block is the agent's own
/// (`## Klausi (Ich)`), and whole titles that say so (`## About me`,
/// `## Über mich`, `## Sobre mí`, `## 关于我`): the agent writes its
/// memory in the first person.
const SELF_WORDS: [&str; 13] = [
    "ich", "me", "myself", "self", "i", "yo", "moi", "eu", "io", "я", "我", "私", "나",
];
const SELF_TITLES: [&str; 31] = [
    "my identity",
    "meine identität",
    "mi identidad",
    "minha identidade",
    "mon identité",
    "我的身份",
    "我的身分",
    "私のアイデンティティ",
    "나의 정체성",
    "about me",
    "about myself",
    "who i am",
    "myself",
    "über mich",
    "ueber mich",
    "wer ich bin",
    "sobre mí",
    "sobre mi",
    "sobre mim",
    "quién soy",
    "quem sou eu",
    "à propos de moi",
    "qui je suis",
    "chi sono",
    "su di me",
    "обо мне",
    "кто я",
    "关于我",
    "關於我",
    "私について",
    "나에 대해",
];

impl Block {
    /// Whether the block is the agent's own profile (its title says so),
    /// and not a block about the user.
    pub(super) fn about_self(&self) -> bool {
        let t = plain(&self.title).to_lowercase();
        if SELF_TITLES.contains(&t.as_str()) {
            return true;
        }
        let Some((before, rest)) = t.split_once(['(', '（']) else {
            return false;
        };
        let Some((inner, _)) = rest.split_once([')', '）']) else {
            return false;
        };
        SELF_WORDS.contains(&inner.trim()) && !about_user(before, &[])
    }
}

/// A title without the marks that open it: emoji, bullets, emphasis
/// (`💕 我们的关系` → `我们的关系`, `**Lessons**` → `Lessons`); a title of
/// nothing else is left as it is.
pub(super) fn plain(title: &str) -> String {
    let t = title
        .trim()
        .trim_start_matches(|c: char| !(c.is_alphanumeric() || "([{\"'#@$&<¿¡«“„‘".contains(c)))
        .trim_end_matches(['*', '_', ':', '：'])
        .trim();
    if t.is_empty() {
        title.trim().to_string()
    } else {
        t.to_string()
    }
}

/// The day a block's title begins with (`2026-02-13`, `📅 2026/02/13 —
/// Launch`, `2026年2月13日 上线`, a valid day only), and what follows it.
pub(super) fn title_day(title: &str) -> Option<(chrono::NaiveDate, String)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"^(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?(\D.*)?$")
            .expect("the day pattern")
    });
    let c = re
        .captures(plain(title).as_str())?
        .iter()
        .map(|m| m.map(|m| m.as_str().to_string()))
        .collect::<Vec<_>>();
    let num = |i: usize| c.get(i)?.as_deref()?.parse::<u32>().ok();
    let day = chrono::NaiveDate::from_ymd_opt(num(1)? as i32, num(2)?, num(3)?)?;
    let rest = c
        .get(4)
        .cloned()
        .flatten()
        .unwrap_or_default()
        .trim_start_matches(|c: char| c.is_whitespace() || "—–-:|·,：，".contains(c))
        .trim()
        .to_string();
    // what the day is about, in parentheses after it
    // (`2026-02-09（FY26タスク選定戦略）`)
    let rest = match rest
        .strip_prefix(['(', '（'])
        .and_then(|r| r.strip_suffix([')', '）']))
    {
        Some(inner) if !inner.contains(['(', '（', ')', '）']) => inner.trim().to_string(),
        _ => rest,
    };
    Some((day, rest))
}

/// Whether a block says something before its first `### ` block (a
/// rule or a template's blank is nothing).
fn has_own_text(b: &Block) -> bool {
    let comments = comment_only(b.body.iter().map(String::as_str));
    b.body.iter().enumerate().any(|(i, l)| {
        let t = l.trim();
        !t.is_empty()
            && !comments[i]
            && !t.chars().all(|c| matches!(c, '-' | '*' | '_' | '=' | ' '))
            && !placeholder(super::bullet(t).unwrap_or(t))
    })
}

/// `### ` blocks that are parts of their `## ` block's note: under a
/// block that says something of its own (`## Network (FortiGate 40F)`
/// with its host, then `### Topology`, `### VLANs`), each `### ` block
/// that is neither about the user nor dated is kept in that note, its
/// heading included, and not as a note named `Topology`. Under a block
/// that only groups them (`## Core Facts` › `### About Me`), they stay
/// blocks of their own.
fn fold_subs(blocks: Vec<Block>, aliases: &[String]) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut open: Option<usize> = None;
    for b in blocks {
        if b.parent.is_none() {
            let own = has_own_text(&b);
            out.push(b);
            open = own.then(|| out.len() - 1);
            continue;
        }
        match open {
            Some(i) if !b.about_user(aliases) && title_day(&b.title).is_none() => {
                let top = &mut out[i];
                if top.body.last().is_some_and(|l| !l.trim().is_empty()) {
                    top.body.push(String::new());
                }
                top.body.push(format!("### {}", b.title));
                top.body.extend(b.body);
                top.bullets.extend(b.bullets);
                top.nested.extend(b.nested);
                top.rows.extend(b.rows);
                top.own_until = top.own_until.min(b.at);
                top.subs -= 1;
            }
            _ => out.push(b),
        }
    }
    out
}

/// Keeps a block as `memory_<key>` on the user or `$self`: two blocks
/// under one title, the later one follows the earlier one, never
/// replaces it.
fn keep_block(attrs: &mut Map<String, Value>, key: &str, v: Value) {
    let key = format!("memory_{key}");
    match attrs.get_mut(&key) {
        Some(slot) => append(slot, v),
        None => {
            attrs.insert(key, v);
        }
    }
}

/// What a title's parentheses say that is no name.
const REMARKS: [&str; 12] = [
    "draft", "wip", "old", "new", "private", "public", "updated", "todo", "partial", "summary",
    "notes", "me",
];

impl Reader {
    /// The user's name a block about them gives (`**Name:** Hany
    /// Andriyanto`) when USER.md gave none: the user's Person, drafted as
    /// `User`, is renamed for it (and the links drafted to it).
    fn named_user(&mut self, b: &Block) -> Option<String> {
        if !self.user_unnamed {
            return None;
        }
        let (ty, old) = self.user.clone()?;
        // (a bullet, a table's row, or a line of its own: `**Name:** …`)
        let name = b.name_line().map(|(n, _)| n).or_else(|| {
            super::super::markdown::key_values(&b.text())
                .into_iter()
                .find(|(_, k, v)| NAME_KEYS.contains(&k.to_lowercase().as_str()) && !placeholder(v))
                .map(|(_, _, v)| clean_name(&v))
        })?;
        if name.trim().is_empty() || name == old {
            return None;
        }
        self.d.rename(&ty, &old, &name);
        self.user = Some((ty, name.clone()));
        self.user_unnamed = false;
        self.aliases.extend(aliases_of(&name));
        Some(name)
    }

    /// Keeps `MEMORY.md`'s blocks of no known title: on the user's
    /// Person when the block is about the user, else as a note of its
    /// own. Each is reported. With no user known yet (no `USER.md`, no
    /// Identity block), the first block about the user that gives a
    /// `Name:` line, or a name in its title's parentheses, makes the
    /// user's Person.
    pub(super) fn other_blocks(&mut self, p: &Path, mut blocks: Vec<Block>) {
        let r = self.d.rel(p);
        // the user's block: one whose title says so and gives a name, or
        // else the first block with a `Name:` line whose title is about
        // that name (`## konukiについて` with `**名前:** konuki (Akira)`,
        // `## About Lu` with `Name: Lu Chen`): an agent's memory with no
        // profile of its own opens with its user's
        let said = || {
            blocks
                .iter()
                .filter(|b| b.about_user(&[]) && !b.about_self())
                .find_map(|b| b.name_line().or_else(|| b.title_name()).map(|n| (b, n)))
        };
        // (a title that is the name and nothing else, `## Karina` with
        // `Nombre: Karina Schneider`, is as often the agent's own)
        let named = || {
            let b = blocks
                .iter()
                .find(|b| b.name_line().is_some() && !b.about_self())?;
            let (name, whole) = b.name_line()?;
            let mut own = aliases_of(&name);
            own.extend(aliases_of(&whole));
            let mut rest = b.title.to_lowercase();
            for a in &own {
                rest = rest.replace(a.as_str(), " ");
            }
            let more = rest.chars().any(char::is_alphanumeric);
            (more && b.about_user(&own)).then_some((b, (name, whole)))
        };
        // a block that says who someone is (`## Quién es Sandra`, `##
        // Who is Lu`), of someone the agent assists (`Tú eres **Alfa**, su
        // asistente`) or opening the file, is the user's: an agent's
        // memory opens with its user
        let agent = self.agent.clone();
        let who = || {
            blocks.iter().enumerate().find_map(|(i, b)| {
                let name = b.asks_who()?;
                let assists = b.says_it_assists();
                let agents = agent.as_deref().map(aliases_of).unwrap_or_default();
                let own = aliases_of(&name);
                if b.about_self() || own.iter().any(|a| agents.contains(a)) || !(assists || i == 0)
                {
                    return None;
                }
                let whole = b.fuller_name(&name).unwrap_or_else(|| name.clone());
                Some((b, (whole, name)))
            })
        };
        // a block whose title is the user's name and nothing else
        // (`## 阿杰`, `## 加藤さん`, `### Bilal`), by what it says
        let titled = || self.titled_user(&blocks);
        if self.user.is_none()
            && let Some((b, (name, whole))) = said().or_else(named).or_else(who).or_else(titled)
        {
            self.name_user(p, b, name, whole);
        }
        let mut user_attrs = Map::new();
        let mut user_at = None;
        let mut self_attrs = Map::new();
        let mut self_at = None;
        // what OpenClaw's memory promotion copied in: a memory each
        let mut promoting = std::collections::HashSet::new();
        for b in blocks.iter_mut() {
            let items = super::promoted::take(b.at, &mut b.body, &mut b.bullets);
            if items.is_empty() {
                continue;
            }
            promoting.insert(b.at);
            self.d.note(format!(
                "{r}:{}: block `{}`: {} {} OpenClaw promoted from daily notes, each an Insight of its own",
                b.at,
                b.label(),
                items.len(),
                if items.len() == 1 { "line" } else { "lines" }
            ));
            let section = b.label();
            for it in &items {
                self.promoted_note(p, &section, it);
            }
        }
        let blocks = fold_subs(blocks, &self.aliases);
        // a block written twice word for word, title and text, is one
        // memory (the file itself stays whole in `memory_md`)
        let mut seen: std::collections::HashMap<(String, String), usize> =
            std::collections::HashMap::new();
        for mut b in blocks {
            // a heading that says it all, with nothing under it (`## ⚠️
            // Filesystem: case-insensitive. NEVER create files that
            // differ only in case.`): what it says is the block's text
            if b.value().is_none()
                && b.subs == 0
                && !promoting.contains(&b.at)
                && b.bullets.is_empty()
                && Block::states(&b.title)
            {
                b.body = vec![b.title.clone()];
            }
            let key = b.key();
            if b.value().is_some() {
                let twin = (b.label(), b.text());
                if let Some(first) = seen.get(&twin) {
                    self.d.note(format!(
                        "{r}:{}: block `{}` repeats the block at line {first} word for word: kept once",
                        b.at,
                        b.label()
                    ));
                    continue;
                }
                seen.insert(twin, b.at);
            }
            let Some(v) = b.value() else {
                // a `## ` block whose lines are all in its `### ` blocks,
                // or all promoted lines
                if b.subs == 0 && !promoting.contains(&b.at) {
                    self.d.note(format!(
                        "{r}:{}: block `{}` is empty or a template's blank: nothing to keep",
                        b.at,
                        b.label()
                    ));
                }
                continue;
            };
            // the agent's own profile (`## Klausi (Ich)`, `## About me`)
            if b.about_self() && !b.about_user(&self.aliases) {
                self_at.get_or_insert(b.at);
                self.d.note(format!(
                    "{r}:{}: block `{}` is the agent's own: kept on $self as memory_{key}",
                    b.at,
                    b.label()
                ));
                keep_block(&mut self_attrs, &key, v);
                continue;
            }
            let user = self.user.clone().filter(|_| b.about_user(&self.aliases));
            let Some((ty, name)) = user else {
                match title_day(&b.title) {
                    Some((day, rest)) => self.block_event(p, &b, day, &rest),
                    None => {
                        self.people_of(p, &b);
                        self.block_note(p, &b)
                    }
                }
                continue;
            };
            user_at.get_or_insert(b.at);
            self.handles.extend(super::relations::handles_in(&b.text()));
            // the user's name, which USER.md did not give (`## User
            // Information` / `**Name:** Hany Andriyanto`)
            let (ty, name) = match self.named_user(&b) {
                Some(n) => {
                    self.d.note(format!(
                        "{r}:{}: block `{}` names the user, whom USER.md gives no name: Person `{name}` is `{n}`",
                        b.at,
                        b.label()
                    ));
                    (ty, n)
                }
                None => (ty, name),
            };
            self.d.note(format!(
                "{r}:{}: block `{}` is about the user: kept on {ty} `{name}` as memory_{key}",
                b.at,
                b.label()
            ));
            keep_block(&mut user_attrs, &key, v);
        }
        if let Some(at) = self_at {
            let source = self.d.at(p, at);
            let meta = core_meta(&self.d, source.clone());
            self.d.concept(Concept {
                ty: "Person".into(),
                name: "$self".into(),
                attrs: self_attrs,
                meta,
                what: "$self (MEMORY.md, the agent's own block)".into(),
                source,
            });
        }
        if let (Some((ty, name)), Some(at)) = (self.user.clone(), user_at) {
            let source = self.d.at(p, at);
            let meta = core_meta(&self.d, source.clone());
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

    /// A block whose title begins with a day (`### 2026-02-13` under
    /// `## 📅 重要事件`, `## 2026-02-08 03:19 — First call`): what
    /// happened then, an `Event` at that day (and time, when the title
    /// gives one), named as a daily note's are (`2026-02-13 重要事件`:
    /// what follows the day, else the `## ` block's title), pinned.
    fn block_event(&mut self, p: &Path, b: &Block, day: chrono::NaiveDate, rest: &str) {
        let r = self.d.rel(p);
        let time = heading_time(rest);
        let heading = match strip_time(rest) {
            h if time.is_some() && h == rest => String::new(),
            h => h,
        };
        let heading = match heading.trim() {
            "" => b
                .parent
                .as_deref()
                .map(plain)
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "MEMORY.md".into()),
            h => h.to_string(),
        };
        let (at, label) = match time {
            Some(t) => (
                format!("{day}T{}Z", t.format("%H:%M:%S")),
                format!("{day} {} {heading}", t.format("%H:%M")),
            ),
            None => (format!("{day}T00:00:00Z"), format!("{day} {heading}")),
        };
        let name = self.unique("Event", &short(&label, 80));
        self.d.note(format!(
            "{r}:{}: block `{}`: what happened on {day}, Event `{name}`",
            b.at,
            b.label()
        ));
        let source = self.d.at(p, b.at);
        let mut meta = core_meta(&self.d, source.clone());
        meta.insert("pinned".into(), json!(true));
        meta.insert("created_at".into(), json!(at));
        let mut attrs = Map::new();
        attrs.insert("event_class".into(), json!("memory_entry"));
        attrs.insert("content_summary".into(), json!(b.text()));
        attrs.insert("start_time".into(), json!(at));
        if time.is_none() {
            attrs.insert("time_precision".into(), json!("day"));
        }
        attrs.insert("note_file".into(), json!(r));
        if let Some(parent) = &b.parent {
            attrs.insert("note_section".into(), json!(parent));
        }
        self.d.concept(Concept {
            ty: "Event".into(),
            name,
            attrs,
            meta,
            what: "Event (MEMORY.md block)".into(),
            source,
        });
    }

    /// A block not about the user: a note of its own, an `Insight` named
    /// by its title (without the marks that open it: `💕 我们的关系` is
    /// `我们的关系`), pinned.
    fn block_note(&mut self, p: &Path, b: &Block) {
        let r = self.d.rel(p);
        // a block with no title is named by where it is; a part of a
        // block that only groups its parts by the block it is part of
        // (`Core Facts › About Me`, `Права доступа › Без подтверждения`)
        let title = match (plain(&b.title).as_str(), b.parent.as_deref().map(plain)) {
            ("", _) => format!("MEMORY.md line {}", b.at),
            (t, Some(p)) if !p.is_empty() => section_title(&p, t, NAME_CHARS),
            (t, _) => t.to_string(),
        };
        let name = self.unique("Insight", &short(&title, NAME_CHARS));
        self.d.note(format!(
            "{r}:{}: block `{}`: a note of its own, Insight `{name}`",
            b.at,
            b.label()
        ));
        let source = self.d.at(p, b.at);
        let mut meta = core_meta(&self.d, source.clone());
        meta.insert("pinned".into(), json!(true));
        let mut attrs = Map::new();
        attrs.insert("description".into(), json!(b.text()));
        attrs.insert("insight_class".into(), json!("note"));
        attrs.insert("note_file".into(), json!(r));
        if let Some(parent) = &b.parent {
            attrs.insert("note_section".into(), json!(parent));
        }
        self.d.concept(Concept {
            ty: "Insight".into(),
            name,
            attrs,
            meta,
            what: "Insight (MEMORY.md block)".into(),
            source,
        });
    }
}

/// A note's name is cut to this many characters.
const NAME_CHARS: usize = 80;
/// A section's heading keeps this many characters of the heading it is
/// under when both do not fit.
const PARENT_CHARS: usize = 40;

/// A section's title under its heading, `Heading › Section`, within `max`
/// characters: when both do not fit, the heading is cut, not the section's
/// own words (`Session 2026-03-14 — POLY_FACTORY… › 1. Déploiement initial
/// POLY_FACTORY sur VPS`, not `Session 2026-03-14 — POLY_FACTORY :
/// déploiement + intégrations + corrections ›`). The heading is cut the
/// same way for every section under it, so that they still read as parts
/// of one note.
fn section_title(parent: &str, title: &str, max: usize) -> String {
    let whole = format!("{parent} › {title}");
    if whole.chars().count() <= max {
        return whole;
    }
    let head = short(parent, PARENT_CHARS);
    let head = if head.chars().count() < parent.trim().chars().count() {
        format!(
            "{}…",
            head.trim_end_matches([' ', ',', ';', ':', '—', '-', '–'])
        )
    } else {
        head
    };
    let room = max.saturating_sub(head.chars().count() + 3).max(8);
    format!("{head} › {}", short(title, room))
}

/// A name as written on a `Name:` line, without emphasis or a trailing
/// remark in brackets.
pub(super) fn clean_name(v: &str) -> String {
    let v = v.trim().trim_matches(['*', '_', '`']).trim();
    let v = v.split(['(', '（']).next().unwrap_or(v);
    // what follows a name on its line is about the person, not the name:
    // `Jon Trevor Somwaru — goes by JT | Timezone: America/New_York`
    let v = v.split(['|', ';', '；', '—', '–']).next().unwrap_or(v);
    let v = v.split(" - ").next().unwrap_or(v);
    v.split(['，', ',']).next().unwrap_or(v).trim().to_string()
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
            nested: Default::default(),
            own_until: usize::MAX,
            body: body.iter().map(|l| l.to_string()).collect(),
            parent: None,
            subs: 0,
            rows: Vec::new(),
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
        assert_eq!(
            block(&["", "- [Empty - will populate as I learn their patterns]"]).value(),
            None
        );
        assert_eq!(block(&["[Fill in after first conversation]"]).value(), None);
        assert_eq!(
            block(&["- [x] done", "- [ ] open"]).value(),
            Some(json!(["[x] done", "[ ] open"]))
        );
    }

    #[test]
    fn a_section_under_a_long_heading_keeps_its_own_words() {
        let parent = "Session 2026-03-14 — POLY_FACTORY : déploiement + intégrations + corrections";
        let a = section_title(
            parent,
            "1. Déploiement initial POLY_FACTORY sur VPS",
            NAME_CHARS,
        );
        let b = section_title(parent, "2. Intégrations OpenClaw", NAME_CHARS);
        assert_eq!(
            a,
            "Session 2026-03-14 — POLY_FACTORY… › 1. Déploiement initial POLY_FACTORY sur VPS"
        );
        assert_eq!(
            b,
            "Session 2026-03-14 — POLY_FACTORY… › 2. Intégrations OpenClaw"
        );
        assert!(a.chars().count() <= NAME_CHARS);
        // what fits is left whole
        assert_eq!(
            section_title("Core Facts", "About Me", NAME_CHARS),
            "Core Facts › About Me"
        );
        // a heading with no space to cut at, and a section longer than the name
        let long = section_title(&"表".repeat(200), &"x ".repeat(100), NAME_CHARS);
        assert!(long.chars().count() <= NAME_CHARS + 1, "{long}");
        assert!(long.contains(" › x"), "{long}");
    }

    #[test]
    fn names_a_value_gives() {
        let mut a = aliases_of("Евгений (Evgeny) Нечаев, goes by Ev / @Evolv3");
        a.sort();
        assert_eq!(
            a,
            ["ev", "evgeny", "evolv3", "евгений", "нечаев"].map(String::from)
        );
    }

    #[test]
    fn titles_about_the_user() {
        let al: Vec<String> = aliases_of("Lucía Fernández")
            .into_iter()
            .chain(aliases_of("露西亚（Lu）"))
            .collect();
        for t in [
            "关于用户",
            "О пользователе",
            "Предпочтения пользователя",
            "Sobre o meu humano",
            "Über meinen Menschen",
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
            "Preferences of Lu",
            "Lucía Fernández: key facts",
            "Lucía’s habits",
            // the genitive written on to the name (a real Swedish
            // MEMORY.md: `Annas önskemål och förväntningar`)
            "Lucías önskemål och förväntningar",
            "Opérateur — Lucía",
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
            "When Lucía leaves a note",
            "Deploys Lu asked for last week",
            "Kubernetes Operator",
        ] {
            assert!(!about_user(t, &al), "{t}");
        }
        // a name in Latin letters inside a Japanese title
        let konuki = aliases_of("konuki (Akira)");
        for t in ["konukiについて", "konukiの好み", "Akiraとの約束"] {
            assert!(about_user(t, &konuki), "{t}");
        }
        for t in ["konukitoolsの設定", "運用ルール"] {
            assert!(!about_user(t, &konuki), "{t}");
        }
    }

    #[test]
    fn sub_blocks_and_fences() {
        let text = "- stray\n## Core Facts\n### About Me\n- I am Aria\n### About My Human (Najia)\n- Prefers concise answers\n## Identity\n### Basic\n- Name: N\n## Template\n```markdown\n## About My Human\n```\n";
        let b = parse(text);
        let outside: Vec<usize> = preamble(text)
            .map(|p| p.bullets.iter().map(|(n, _)| *n).collect())
            .unwrap_or_default();
        assert_eq!(outside, vec![1]);
        let titles: Vec<(String, Option<String>, usize)> = b
            .iter()
            .map(|b| (b.title.clone(), b.parent.clone(), b.subs))
            .collect();
        assert_eq!(
            titles,
            vec![
                ("Core Facts".into(), None, 2),
                ("About Me".into(), Some("Core Facts".into()), 0),
                (
                    "About My Human (Najia)".into(),
                    Some("Core Facts".into()),
                    0
                ),
                ("Identity".into(), None, 0),
                ("Template".into(), None, 0),
            ]
        );
        assert_eq!(b[3].bullets, vec![(9, "Name: N".to_string())]);
        assert!(b[2].about_user(&[]) && !b[1].about_user(&[]));
        assert_eq!(b[2].key(), "core_facts_about_my_human_najia");
        assert_eq!(b[4].body.len(), 3);
    }

    #[test]
    fn sub_blocks_of_a_block_with_text_of_its_own_are_part_of_its_note() {
        let b = parse(
            "## Rede (FortiGate 40F)\n**Hostname:** Firewall-LSA\n---\n### Topologia Física:\n| Porta | Função |\n|---|---|\n| wan | WAN |\n### About My Human\n- likes VLANs\n### 2026-03-04\n- sessão\n### Problema Pendente:\n- hard-switch\n## Core Facts\n---\n### About Me\n- I am Aria\n",
        );
        let folded = fold_subs(b, &[]);
        let titles: Vec<(&str, usize)> =
            folded.iter().map(|b| (b.title.as_str(), b.subs)).collect();
        assert_eq!(
            titles,
            [
                ("Rede (FortiGate 40F)", 2),
                ("About My Human", 0),
                ("2026-03-04", 0),
                ("Core Facts", 1),
                ("About Me", 0),
            ]
        );
        let text = folded[0].text();
        assert!(text.contains("**Hostname:** Firewall-LSA"), "{text}");
        assert!(
            text.contains("### Topologia Física:\n| Porta | Função |"),
            "{text}"
        );
        assert!(
            text.contains("### Problema Pendente:\n- hard-switch"),
            "{text}"
        );
        assert!(
            !text.contains("likes VLANs") && !text.contains("sessão"),
            "{text}"
        );
    }

    #[test]
    fn a_name_line() {
        let mut b = block(&[
            "- Name: Евгений (Evgeny) Нечаев, goes by Ev / @Evolv3",
            "- Timezone: PST",
        ]);
        assert_eq!(
            b.name_line().map(|n| n.0),
            Some("Евгений Нечаев".to_string())
        );
        b = block(&["- **名字：** 露西亚（Lu）"]);
        assert_eq!(b.name_line().map(|n| n.0), Some("露西亚".to_string()));
        b = block(&["- **Name:** [your name]", "- Likes tea"]);
        assert_eq!(b.name_line(), None);
        b.title = "About My Human (Najia)".into();
        assert_eq!(b.title_name().map(|n| n.0), Some("Najia".to_string()));
        for remark in ["since 2026", "Draft", "draft", "user", "WIP"] {
            b.title = format!("About My Human ({remark})");
            assert_eq!(b.title_name(), None, "{remark}");
        }
        b.title = "About my human (涂家鑫)".into();
        assert_eq!(b.title_name().map(|n| n.0), Some("涂家鑫".to_string()));
    }

    #[test]
    fn titles_plain_and_dated() {
        assert_eq!(plain("💕 我们的关系"), "我们的关系");
        assert_eq!(plain("**Lessons**"), "Lessons");
        assert_eq!(plain("🛠️ Tools"), "Tools");
        assert_eq!(plain("(Draft) notes"), "(Draft) notes");
        assert_eq!(plain("🎉"), "🎉");
        assert_eq!(plain("Topologia Física:"), "Topologia Física");
        assert_eq!(plain("关键偏好："), "关键偏好");
        let d = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).expect("a day");
        assert_eq!(
            title_day("2026-02-13"),
            Some((d(2026, 2, 13), String::new()))
        );
        assert_eq!(
            title_day("📅 2026/02/13 — Launch"),
            Some((d(2026, 2, 13), "Launch".into()))
        );
        assert_eq!(
            title_day("2026年2月13日 上线"),
            Some((d(2026, 2, 13), "上线".into()))
        );
        assert_eq!(
            title_day("2026-02-08 03:19 — First call"),
            Some((d(2026, 2, 8), "03:19 — First call".into()))
        );
        assert_eq!(
            title_day("2026-02-09（FY26タスク選定戦略）"),
            Some((d(2026, 2, 9), "FY26タスク選定戦略".into()))
        );
        assert_eq!(
            title_day("2026-02-09 (v1) → (v2)"),
            Some((d(2026, 2, 9), "(v1) → (v2)".into()))
        );
        assert_eq!(title_day("2026-02-30"), None);
        assert_eq!(title_day("2026-02-131"), None);
        assert_eq!(title_day("Q1 2026-02-13"), None);
        assert_eq!(title_day("2026 goals"), None);
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
