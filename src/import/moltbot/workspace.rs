//! An OpenClaw workspace as real ones are laid out (Moltbot's successor):
//! `USER.md` (the user), `IDENTITY.md`, `SOUL.md`, `TOOLS.md`,
//! `AGENTS.md`, `HEARTBEAT.md` (the agent), daily notes
//! `memory/YYYY-MM-DD*.md` in any subfolder (`memory/archive/`), and side
//! notes (`memory/*.md` without a date, `vault/`, `pending-memories.md`).
//! Every file is kept whole: what can be structured is (a `Key: value`
//! line becomes an attribute, a daily note's section an Event with its
//! day and time), and the text itself is kept verbatim beside it, so no
//! line of the source is lost.

use super::super::draft::{Concept, short};
use super::super::markdown::{
    Line, dated_name, heading_time, key_values, named_topic, outline, placeholder, split,
    strip_time, without_file_name, without_zone, zone_at, zone_of,
};
use super::super::predicate_name;
use super::Reader;
use super::blocks::clean_name;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The agent's own workspace files, each kept verbatim on `$self` as
/// `<stem>_md` (`soul_md`): who the agent is, how it works, its tools.
pub(super) const AGENT_FILES: [&str; 5] = [
    "IDENTITY.md",
    "SOUL.md",
    "TOOLS.md",
    "AGENTS.md",
    "HEARTBEAT.md",
];

/// The user's profile.
pub(super) const USER_FILE: &str = "USER.md";

/// The one `memory/` folder a workspace without its own holds one level
/// down (`backup/memory/`), if there is exactly one.
pub(super) fn moved_memory(dir: &Path) -> Option<PathBuf> {
    let mut found = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path().join("memory"))
        .filter(|m| m.is_dir());
    let one = found.next()?;
    found.next().is_none().then_some(one)
}

/// Whether a folder is an OpenClaw workspace, not a memory folder given
/// alone: it has `memory/`, or the agent's or the user's own files
/// (`SOUL.md`, `USER.md` …), which a memory folder never holds (or holds
/// them in one folder of its own: [`moved_files`]). A workspace with no
/// `memory/` has no daily notes: its other folders (a project's code, a
/// backup) are named, not read as notes.
pub(super) fn is_workspace(dir: &Path) -> bool {
    dir.join("memory").is_dir() || own_files(dir) > 0
}

/// How many of the agent's and the user's files (`SOUL.md`, `USER.md`,
/// `MEMORY.md` …) a folder holds.
fn own_files(dir: &Path) -> usize {
    AGENT_FILES
        .iter()
        .chain([&USER_FILE, &"MEMORY.md"])
        .filter(|f| dir.join(f).is_file())
        .count()
}

/// The one folder one level down that holds the agent's and the user's
/// files (`config/USER.md`, `config/MEMORY.md`, `config/SOUL.md`) when the
/// workspace has none at its top: two of them at least, in exactly one
/// folder. A memory folder given alone (daily notes at its top) has none
/// moved: a copy of them in its `backup/` is a note.
pub(super) fn moved_files(dir: &Path) -> Option<PathBuf> {
    if own_files(dir) > 0 {
        return None;
    }
    let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .collect();
    let daily = entries.iter().any(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        name.ends_with(".md") && dated_name(name.trim_end_matches(".md")).is_some()
    });
    if daily {
        return None;
    }
    let mut found = entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            !name.starts_with('.') && name != "memory" && !NOT_NOTES.contains(&name.as_str())
        })
        .map(|e| e.path())
        .filter(|f| own_files(f) >= 2);
    let one = found.next()?;
    found.next().is_none().then_some(one)
}

/// Folders of the memory folder that the seed's layout reads its own way.
const SEED_FOLDERS: [&str; 4] = ["episodes", "graph", "procedures", "meta"];

/// Folders that hold a project's dependencies or build output, not the
/// agent's notes: never read, never counted as notes.
pub(super) const NOT_NOTES: [&str; 4] = ["node_modules", "target", "__pycache__", "venv"];

/// How many files a count of a folder's files reads at most.
const MAX_FILES_COUNTED: usize = 100_000;

/// Whether a folder holds a note anywhere in it (hidden files and
/// folders, and dependencies, left out), and how many files it holds
/// when it holds none (counted to [`MAX_FILES_COUNTED`], 12 folders deep).
fn holds_notes(dir: &Path, depth: usize) -> (bool, usize) {
    let mut files = 0;
    if depth > 12 {
        return (false, 0);
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return (false, 0);
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().to_string();
        let Ok(t) = e.file_type() else { continue };
        if name.starts_with('.') {
            continue;
        }
        if t.is_dir() {
            if NOT_NOTES.contains(&name.as_str()) {
                continue;
            }
            let (notes, n) = holds_notes(&e.path(), depth + 1);
            if notes {
                return (true, 0);
            }
            files += n;
        } else if is_note(&e.path()) {
            return (true, 0);
        } else {
            files += 1;
        }
        if files >= MAX_FILES_COUNTED {
            break;
        }
    }
    (false, files.min(MAX_FILES_COUNTED))
}

/// Whether a file is a note: Markdown or text.
pub(super) fn is_note(p: &Path) -> bool {
    p.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .is_some_and(|e| matches!(e.as_str(), "md" | "markdown" | "txt"))
}

/// Keys and headings of `USER.md` that say who the user is, in the order
/// one is taken as the Person's description.
const DESCRIBING: [&str; 8] = [
    "about",
    "bio",
    "summary",
    "who",
    "notes",
    "context",
    "background",
    "关于",
];

/// Keys that name the user in `USER.md`, in the order they are preferred.
const NAME_KEYS: [&str; 10] = [
    "name",
    "full name",
    "preferred name",
    "what to call them",
    "call them",
    "名字",
    "姓名",
    "称呼",
    "nom",
    "nombre",
];

/// Words of `USER.md`'s template title and its kin (`# USER.md - About
/// Your Human`, `# USER.md — User Profile`): no name.
const TITLE_NOT_A_NAME: [&str; 12] = [
    "your", "the", "my", "this", "you", "who", "user", "human", "profile", "person", "me", "owner",
];

/// The user's name in `USER.md`'s title, after the file's name and a dash
/// or colon (`# USER.md - Yusuke (ゆーすけ)`, `# USER.md — About Kirill`):
/// at most four words, the first a capital or a letter of a script without
/// capitals, none a word of the template's title.
fn titled_name(text: &str) -> Option<String> {
    let title = text.lines().find(|l| !l.trim().is_empty())?.trim();
    let title = title.strip_prefix("# ")?.trim();
    let rest = title
        .get(..7)
        .filter(|h| h.eq_ignore_ascii_case("user.md"))
        .map(|_| title[7..].trim_start())?;
    let rest = rest.strip_prefix(['-', '—', '–', ':', '|'])?.trim();
    let rest = match rest.get(..6) {
        Some(a) if a.eq_ignore_ascii_case("about ") => rest[6..].trim(),
        _ => rest,
    };
    let name = clean_name(rest);
    let words: Vec<&str> = name.split_whitespace().collect();
    let first = name.chars().next()?;
    let capital = first.is_uppercase() || (first.is_alphabetic() && !first.is_lowercase());
    (capital
        && (1..=4).contains(&words.len())
        && !words
            .iter()
            .any(|w| TITLE_NOT_A_NAME.contains(&w.to_lowercase().as_str())))
    .then(|| rest.to_string())
}

impl Reader {
    /// The workspace's own files: `USER.md` (the user becomes a Person)
    /// and the agent's files (on `$self`).
    pub(super) fn workspace(&mut self, dir: &Path) {
        let user = dir.join(USER_FILE);
        if user.is_file() || user.is_symlink() {
            self.user_file(&user);
        }
        for f in AGENT_FILES {
            let p = dir.join(f);
            if p.is_file() || p.is_symlink() {
                self.agent_file(&p);
            }
        }
        // the workspace's other files are named once the extra paths
        // are read (`extra::others`)
    }

    /// `USER.md`: the user as a Person, each `Key: value` line an
    /// attribute (the first of a key wins), the file verbatim as
    /// `profile_md`.
    fn user_file(&mut self, p: &Path) {
        let Some(text) = self.d.text(p) else { return };
        self.handles.extend(super::relations::handles_in(&text));
        let lines = outline(&text);
        let mut kv: Vec<(String, String)> = lines
            .iter()
            .filter_map(|l| match l {
                Line::Key { key, value, .. } => Some((key.clone(), value.clone())),
                Line::Item { .. } => None,
            })
            .collect();
        for (k, v) in &kv {
            for h in handles_given(k, v) {
                if !self.handles.contains(&h) {
                    self.handles.push(h);
                }
            }
        }
        // no name key: the name the file's title gives (`# USER.md -
        // Yusuke (ゆーすけ)`), read as a `Name:` line
        if !kv
            .iter()
            .any(|(k, v)| NAME_KEYS.contains(&k.to_lowercase().as_str()) && !placeholder(v))
            && let Some(n) = titled_name(&text)
        {
            kv.insert(0, ("Name".into(), n));
        }
        let name = NAME_KEYS
            .iter()
            .find_map(|k| {
                kv.iter()
                    .find(|(key, v)| key.to_lowercase() == *k && !placeholder(v))
                    .map(|(_, v)| clean_name(v))
            })
            .filter(|n| !n.is_empty());
        let rel = self.d.rel(p);
        let name = match (name, self.user.clone()) {
            (Some(n), _) => n,
            (None, Some((_, n))) => n,
            (None, None) => {
                self.d.note(format!(
                    "{rel}: no `Name:` line: the user is imported as Person `User`"
                ));
                self.user_unnamed = true;
                "User".to_string()
            }
        };
        let mut attrs = Map::new();
        let mut blank = Vec::new();
        for (k, v) in &kv {
            let key = predicate_name(k);
            if key.is_empty() || key == "name" || attrs.contains_key(&key) {
                continue;
            }
            // the template's blanks (`_(optional)_`, "not told yet") are
            // no facts about the user
            if placeholder(v) {
                blank.push(k.clone());
                continue;
            }
            attrs.insert(key, json!(unquoted(v)));
        }
        // what the file says under its headings and labels (`## Context`,
        // `**Working Style:**`), one list per group
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for l in &lines {
            if let Line::Item { group, text, .. } = l {
                match groups.iter_mut().find(|(g, _)| g == group) {
                    Some((_, items)) => items.push(text.clone()),
                    None => groups.push((group.clone(), vec![text.clone()])),
                }
            }
        }
        for (group, items) in groups {
            let items: Vec<String> = items.into_iter().filter(|i| !placeholder(i)).collect();
            let key = predicate_name(&group);
            if items.is_empty() || key.is_empty() || key == "name" || attrs.contains_key(&key) {
                continue;
            }
            attrs.insert(key, json!(items));
        }
        if !blank.is_empty() {
            self.d.note(format!(
                "{rel}: left blank in the file, not imported as facts: {}",
                blank.join(", ")
            ));
        }
        // what the file says the user is, in its own words, as the
        // description SEARCH reads (`Notes:`, `About:`, `## Context`)
        if !attrs.contains_key("description")
            && let Some(d) = DESCRIBING.iter().find_map(|k| match attrs.get(*k) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Array(a)) if !a.is_empty() => Some(
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                _ => None,
            })
        {
            attrs.insert("description".into(), json!(d));
        }
        // the other names the file gives (`Name: Alvaro Medina (Alvie)`,
        // `What to call them: Alvie`): the user's `aliases`, which the
        // cycle reads as the user's (mentions, themes)
        let mut other: Vec<String> = Vec::new();
        for (k, v) in &kv {
            if !NAME_KEYS.contains(&k.to_lowercase().as_str()) || placeholder(v) {
                continue;
            }
            let inside = v
                .split(['(', '（'])
                .skip(1)
                .filter_map(|p| p.split([')', '）']).next())
                .map(str::trim);
            for n in std::iter::once(clean_name(v)).chain(inside.map(str::to_string)) {
                // (or a name in Chinese, Japanese or Korean: `Leonardo（胡皓雍）`)
                let shaped = (n.chars().next().is_some_and(char::is_uppercase)
                    && n.split_whitespace().count() <= 3
                    && n.chars().all(|c| c.is_alphabetic() || " .'-’".contains(c)))
                    || ((2..=5).contains(&n.chars().count())
                        && n.chars().all(|c| c.is_alphabetic() && c as u32 >= 0x3040));
                if shaped && n != name && !other.contains(&n) {
                    other.push(n);
                }
            }
        }
        if !other.is_empty() && !attrs.contains_key("aliases") {
            attrs.insert("aliases".into(), json!(other));
        }
        attrs.insert("relationship_to_self".into(), json!("user"));
        attrs.insert("profile_md".into(), json!(text));
        let src = self.d.at(p, 1);
        let mut meta = self.d.provenance(&src);
        meta.insert("memory_tier".into(), json!("core"));
        meta.insert("pinned".into(), json!(true));
        self.user = Some(("Person".into(), name.clone()));
        // every name the file gives (`Name:`, `What to call them:`)
        self.aliases.extend(super::blocks::aliases_of(&name));
        for (k, v) in &kv {
            if NAME_KEYS.contains(&k.to_lowercase().as_str()) && !placeholder(v) {
                self.aliases
                    .extend(super::blocks::aliases_of(&clean_name(v)));
            }
        }
        self.d.concept(Concept {
            ty: "Person".into(),
            name,
            attrs,
            meta,
            what: "Person (the user, USER.md)".into(),
            source: src,
        });
        // the people the file lists (`## Family`: `- **Wife:** Sarah …`),
        // each a Person as in MEMORY.md; the lines stay on the user too
        // (its contacts, `## 📞 Emergency Contacts`, are how to reach the
        // user: `| **Urgent** | WhatsApp (+55 …) |`)
        let blocks = super::blocks::parse(&text);
        for b in &blocks {
            if !super::contacts::lists_contacts(&b.title) {
                self.people_of(p, b);
            }
        }
    }

    /// An agent file: verbatim on `$self` as `<stem>_md`; `IDENTITY.md`'s
    /// `Key: value` lines also as `identity` (an object).
    fn agent_file(&mut self, p: &Path) {
        let Some(text) = self.d.text(p) else { return };
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let mut attrs = Map::new();
        if stem == "identity" {
            let mut id = Map::new();
            for (_, k, v) in key_values(&text) {
                let key = predicate_name(&k);
                // (an emoji is no letter, yet no blank: `Emoji: 🐢`)
                let emoji = key == "emoji"
                    && v.trim()
                        .chars()
                        .any(|c| c as u32 >= 0x2600 && !c.is_alphanumeric());
                if !key.is_empty() && (emoji || !placeholder(&v)) {
                    id.entry(key).or_insert(json!(v.trim()));
                }
            }
            if let Some(n) = id.get("name").and_then(Value::as_str) {
                self.agent = Some(n.to_string());
                // the name `$self` goes by (the Person schema's `name`)
                attrs.insert("name".into(), json!(n));
            }
            // its avatar, as the Person schema keeps one: a picture's
            // address, else its emoji
            let avatar = id
                .get("avatar")
                .and_then(Value::as_str)
                .filter(|a| {
                    ["http://", "https://", "data:image/"]
                        .iter()
                        .any(|p| a.starts_with(p))
                })
                .map(|a| json!({ "type": "url", "value": a }))
                .or_else(|| {
                    id.get("emoji")
                        .and_then(Value::as_str)
                        .map(|e| json!({ "type": "emoji", "value": e }))
                });
            if let Some(a) = avatar {
                attrs.insert("avatar".into(), a);
            }
            if !id.is_empty() {
                attrs.insert("identity".into(), Value::Object(id));
            }
        }
        attrs.insert(format!("{stem}_md"), json!(text));
        let src = self.d.at(p, 1);
        let mut meta = self.d.provenance(&src);
        meta.insert("memory_tier".into(), json!("core"));
        self.d.concept(Concept {
            ty: "Person".into(),
            name: "$self".into(),
            attrs,
            meta,
            what: "$self (workspace files)".into(),
            source: src,
        });
    }

    /// Every file of the memory folder the seed's layout does not read:
    /// daily notes, side notes, subfolders; and `vault/` and
    /// `pending-memories.md` beside it.
    pub(super) fn notes(&mut self, mem: &Path) {
        let root = self.d.root.clone();
        self.notes_in(mem, mem);
        if mem != root {
            let vault = root.join("vault");
            if vault.is_dir() {
                self.notes_in(&vault, &root);
            }
            let pending = root.join("pending-memories.md");
            if pending.is_file() {
                self.note_file(&pending);
            }
        }
    }

    /// The notes of `dir` and its subfolders (`top` is the memory folder,
    /// whose seed folders and core files are read elsewhere).
    pub(super) fn notes_in(&mut self, dir: &Path, top: &Path) {
        let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter_map(|e| e.file_type().ok().map(|t| (e.path(), t)))
                    .collect()
            })
            .unwrap_or_default();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let at_top = dir == top;
        let at_root = dir == self.d.root;
        for (p, t) in entries {
            let name = p
                .file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            // a hidden file or folder is a tool's state (`.dreams/`,
            // `.memory-manager-state.json`): named, not read
            if name.starts_with('.') {
                let r = self.d.rel(&p);
                // (OpenClaw's dreaming's: its session corpus is read after
                // the notes, its other files are its state)
                if at_top && name == ".dreams" && p.join("session-corpus").is_dir() {
                    self.d.note(format!(
                        "{r}/: OpenClaw's dreaming's state, skipped but for its session corpus (read below)"
                    ));
                    continue;
                }
                self.d.note(if t.is_dir() {
                    format!("{r}/: a hidden folder (a tool's state), skipped")
                } else {
                    format!("{r}: a hidden file (a tool's state), skipped")
                });
                continue;
            }
            if t.is_dir() {
                if at_top && SEED_FOLDERS.contains(&name.as_str()) {
                    continue;
                }
                if at_top && let Some(n) = super::dreaming::reports_folder(&p) {
                    let r = self.d.rel(&p);
                    self.d.note(format!(
                        "{r}/: OpenClaw's dreaming's reports ({n} file{}): its digest of the notes and conversations read here, skipped",
                        if n == 1 { "" } else { "s" }
                    ));
                    continue;
                }
                // Engram's (OpenClaw's memory plugin) memories: read as
                // Engram's, not as notes
                if super::super::engram::is_engram_store(&p) {
                    let r = self.d.rel(&p);
                    self.d.note(format!(
                        "{r}/: an Engram store (OpenClaw's memory plugin): its memories, entities, profile and transcripts read as Engram's, below"
                    ));
                    self.engram.push(p);
                    continue;
                }
                if NOT_NOTES.contains(&name.as_str()) {
                    let r = self.d.rel(&p);
                    self.d.note(format!(
                        "{r}/: a project's dependencies or build output, not notes: skipped"
                    ));
                    continue;
                }
                // a folder with no note anywhere in it (a vector index's
                // files, `vector_db/…/*.lance`): one line, not one a file
                let (notes, files) = holds_notes(&p, 0);
                if !notes {
                    if files > 0 {
                        let r = self.d.rel(&p);
                        let many = if files >= MAX_FILES_COUNTED {
                            "at least "
                        } else {
                            ""
                        };
                        self.d.note(format!(
                            "{r}/: {many}{files} file{} and no markdown or text note, skipped",
                            if files == 1 { "" } else { "s" }
                        ));
                    }
                    continue;
                }
                self.notes_in(&p, top);
                continue;
            }
            if t.is_symlink() && p.is_dir() {
                let r = self.d.rel(&p);
                self.d.note(format!(
                    "{r}/: a symbolic link to a folder: skipped (an import reads only the files inside the folder it is given)"
                ));
                continue;
            }
            // the core files, read already (one of the same name in the
            // memory folder beside the workspace's own is a note of its own)
            if (at_top || at_root)
                && (name == "MEMORY.md"
                    || name == USER_FILE
                    || AGENT_FILES.contains(&name.as_str()))
                && self.d.was_read(&p)
            {
                continue;
            }
            self.note_or_skip(&p);
        }
    }

    /// A file as a note when it is one (and was not read already), else
    /// named as skipped.
    pub(super) fn note_or_skip(&mut self, p: &Path) {
        if !is_note(p) {
            let r = self.d.rel(p);
            self.d
                .note(format!("{r}: not a markdown or text note, skipped"));
        } else if !self.d.was_read(p) {
            self.note_file(p);
        }
    }

    /// One note: a daily note (its name starts with a date) as Events, any
    /// other as one note concept.
    pub(super) fn note_file(&mut self, p: &Path) {
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        match dated_name(&stem) {
            Some((day, topic)) => self.daily(p, day, topic),
            None => self.side_note(p),
        }
    }

    /// A daily note: one Event per section (its heading's time on the
    /// file's day), the section verbatim as `content_summary`; what comes
    /// before the first section is an Event of its own when it says
    /// anything beyond the title. A note about one topic
    /// (`2026-03-22-edit-failure-lesson.md`) whose sections are not
    /// timed entries is one document, so one Event: its sections
    /// ("Root cause", "Fix") mean nothing apart. A part made of stamped
    /// entries (`[Tue 2026-05-26 08:35 UTC] …`) is one Event per entry,
    /// at its own day and time.
    fn daily(&mut self, p: &Path, day: chrono::NaiveDate, topic: Option<String>) {
        let Some(text) = self.note_text(p) else {
            return;
        };
        // a conversation OpenClaw saved when its session ended
        if super::sessions::is_session(&text) {
            self.session(p, day, topic, &text);
            return;
        }
        let mut doc = split(&text);
        // (`# memory/2026-03-01.md - Daily Log` is titled `Daily Log`)
        doc.title = doc.title.map(|t| without_file_name(&t));
        let rel = self.d.rel(p);
        let archived = rel.contains("/archive/") || rel.starts_with("archive/");
        let pre_says = doc
            .preamble
            .lines()
            .map(str::trim)
            .any(|l| !l.is_empty() && !l.starts_with('#') && l != "---");
        let timed = doc
            .sections
            .iter()
            .filter(|s| heading_time(&s.heading).is_some())
            .count();
        let document =
            topic.is_some() && !doc.sections.is_empty() && timed * 2 < doc.sections.len();
        // `2026-02-06-2012.md`: the rest of the name is when it was
        // written (20:12), a note of its own but of no topic
        let topic = named_topic(topic);
        let mut parts: Vec<(usize, String, String)> = Vec::new();
        if document {
            let heading = doc
                .title
                .clone()
                .filter(|t| says_more_than_when(t))
                .or_else(|| topic.as_deref().map(topic_words))
                // (`Session: 2026-02-06 20:12:14 UTC`: what it is)
                .or_else(|| {
                    doc.title
                        .as_deref()
                        .map(without_when)
                        .filter(|t| !t.is_empty())
                })
                .unwrap_or_else(|| "notes".into());
            let heading = match doc.title.as_deref().and_then(heading_time) {
                Some(t) if heading_time(&heading).is_none() => {
                    format!("{} {heading}", t.format("%H:%M"))
                }
                _ => heading,
            };
            parts.push((1, heading, text.trim().to_string()));
        } else {
            if pre_says || (doc.sections.is_empty() && !doc.preamble.trim().is_empty()) {
                let heading = doc
                    .title
                    .clone()
                    .or_else(|| topic.clone())
                    .unwrap_or_else(|| "notes".into());
                parts.push((1, heading, doc.preamble.trim().to_string()));
            }
            for s in &doc.sections {
                parts.push((s.line, s.heading.clone(), s.text.clone()));
            }
        }
        if parts.is_empty() {
            self.d
                .note(format!("{rel}: an empty note, nothing imported"));
            return;
        }
        // stamped entries, each an Event of its own
        #[allow(clippy::type_complexity)]
        let mut events: Vec<(
            usize,
            String,
            String,
            chrono::NaiveDate,
            Option<chrono::NaiveTime>,
            Option<String>,
        )> = Vec::new();
        for (line, heading, body) in parts {
            let time = heading_time(&heading);
            match stamped(&body) {
                Some((before, entries)) => {
                    if !before.trim().is_empty()
                        && before
                            .lines()
                            .any(|l| !l.trim().starts_with('#') && !l.trim().is_empty())
                    {
                        events.push((
                            line,
                            heading.clone(),
                            before.trim().to_string(),
                            day,
                            time,
                            None,
                        ));
                    }
                    for e in entries {
                        events.push((
                            line + e.line,
                            e.label,
                            e.text,
                            e.day.unwrap_or(day),
                            Some(e.time),
                            e.zone,
                        ));
                    }
                }
                None => events.push((line, heading, body, day, time, None)),
            }
        }
        for (line, heading, body, day, time, zone) in events {
            // the day is in the name once (`# 2026-03-27 早间随笔生成`)
            let d = day.to_string();
            // (a heading that is the day alone names nothing more)
            let heading = match heading.trim().strip_prefix(d.as_str()).map(str::trim) {
                Some(h) => h.to_string(),
                None => heading,
            };
            // at the offset the stamp gives (`… 10:53 GMT+8]`) or the
            // heading (`19:55 (Asia/Jakarta)`, on that day), else as UTC
            let zone = zone.or_else(|| time.and_then(|t| zone_at(&heading, day, t)));
            let at = match time {
                Some(t) => format!(
                    "{day}T{}{}",
                    t.format("%H:%M:%S"),
                    zone.as_deref().unwrap_or("Z")
                ),
                None => format!("{day}T00:00:00Z"),
            };
            // (the zone is when, not what: `19:55 (Asia/Jakarta)`,
            // `Heartbeat — UTC`)
            let label = match time {
                Some(t) => format!(
                    "{day} {} {}",
                    t.format("%H:%M"),
                    without_zone(&strip_time(&heading))
                ),
                None => format!("{day} {}", without_zone(&heading)),
            };
            let name = self.unique("Event", &short(label.trim(), 80));
            let src = self.d.at(p, line);
            let mut attrs = Map::new();
            attrs.insert("event_class".into(), json!(event_class(&heading)));
            attrs.insert("content_summary".into(), json!(body));
            attrs.insert("start_time".into(), json!(at));
            if time.is_none() {
                attrs.insert("time_precision".into(), json!("day"));
            }
            if let Some(t) = &topic {
                attrs.insert("topic".into(), json!(t));
            }
            if let Some(t) = &doc.title
                && !pre_says
                && !document
            {
                attrs.insert("note_title".into(), json!(t));
            }
            if archived {
                attrs.insert("archived_in_source".into(), json!(true));
            }
            let mut meta = self.d.provenance(&src);
            meta.insert("created_at".into(), json!(at));
            self.d.concept(Concept {
                ty: "Event".into(),
                name,
                attrs,
                meta,
                what: "Event (daily note)".into(),
                source: src,
            });
        }
    }

    /// A note without a date: one Insight (`insight_class: "note"`) named
    /// by its title, the file verbatim as its `description`; in `vault/`
    /// (the user's pinned memories) it is pinned.
    fn side_note(&mut self, p: &Path) {
        let Some(text) = self.note_text(p) else {
            return;
        };
        if text.trim().is_empty() {
            let r = self.d.rel(p);
            self.d.note(format!("{r}: an empty note, nothing imported"));
            return;
        }
        let rel = self.d.rel(p);
        let doc = split(&text);
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let title = doc
            .title
            .clone()
            .or_else(|| doc.sections.first().map(|s| s.heading.clone()))
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(stem);
        let name = self.unique("Insight", &short(title.trim(), 80));
        self.profile_in_note(p, &text);
        let src = self.d.at(p, 1);
        let mut attrs = Map::new();
        attrs.insert("description".into(), json!(text.trim()));
        attrs.insert("insight_class".into(), json!("note"));
        attrs.insert("note_file".into(), json!(rel));
        let mut meta = self.d.provenance(&src);
        if rel.starts_with("vault/") || rel.contains("/vault/") {
            meta.insert("pinned".into(), json!(true));
        }
        self.d.concept(Concept {
            ty: "Insight".into(),
            name,
            attrs,
            meta,
            what: "Insight (note)".into(),
            source: src,
        });
    }

    /// `name`, or `name (2)`, … : one not given yet to a concept of `ty`
    /// by this import.
    /// A note's text without what OpenClaw's dreaming wrote into it
    /// (its lines blanked, so that the rest keep their numbers).
    fn note_text(&mut self, p: &Path) -> Option<String> {
        let text = self.d.text(p)?;
        let (text, n) = super::dreaming::without_dreaming(&text);
        if n > 0 {
            let r = self.d.rel(p);
            self.d.note(format!(
                "{r}: {n} line{} OpenClaw's dreaming wrote (its blocks, its dream diary) left out",
                if n == 1 { "" } else { "s" }
            ));
        }
        Some(text)
    }

    pub(super) fn unique(&mut self, ty: &str, name: &str) -> String {
        let mut n = 1;
        loop {
            let candidate = if n == 1 {
                name.to_string()
            } else {
                format!("{name} ({n})")
            };
            if self.names.insert((ty.to_string(), candidate.clone())) {
                return candidate;
            }
            n += 1;
        }
    }
}

/// One stamped entry of a daily note: `[Tue 2026-05-26 08:35 UTC] Doanh
/// approved …` and the lines after it up to the next stamp.
struct Stamped {
    /// Its line, 0-based in the part.
    line: usize,
    /// The day the stamp names, if it names one.
    day: Option<chrono::NaiveDate>,
    time: chrono::NaiveTime,
    /// The offset from UTC the stamp gives (`GMT+8` → `+08:00`), if any.
    zone: Option<String>,
    /// Its first words, for the Event's name.
    label: String,
    /// The entry verbatim, stamp included.
    text: String,
}

/// A part made of stamped entries (two or more lines that start with a
/// bracketed time, or a transcript's speaker and one: `user: [Telegram
/// Ana 2026-02-07 10:52 GMT+8] …`): what comes before the first, and the
/// entries. `None` when the part is not such a log.
fn stamped(body: &str) -> Option<(String, Vec<Stamped>)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"^\s*(?:[-*+]\s+)?(?:[A-Za-z]{2,16}:\s*)?\[([^\]\n]{0,48}?\d{1,2}:\d{2}[^\]\n]{0,24})\]\s*(.*)$",
        )
        .expect("the stamp pattern")
    });
    static DAY: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let day_re =
        DAY.get_or_init(|| regex::Regex::new(r"\d{4}-\d{2}-\d{2}").expect("the day pattern"));
    let lines: Vec<&str> = body.lines().collect();
    #[allow(clippy::type_complexity)]
    let mut starts: Vec<(
        usize,
        Option<chrono::NaiveDate>,
        chrono::NaiveTime,
        Option<String>,
        String,
    )> = Vec::new();
    let mut fence = false;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let Some(c) = re.captures(l) else { continue };
        let stamp = c.get(1).map_or("", |m| m.as_str());
        let Some(time) = heading_time(stamp) else {
            continue;
        };
        let day = day_re
            .find(stamp)
            .and_then(|m| chrono::NaiveDate::parse_from_str(m.as_str(), "%Y-%m-%d").ok());
        let rest = c.get(2).map_or("", |m| m.as_str()).trim();
        starts.push((i, day, time, zone_of(stamp), rest.to_string()));
    }
    if starts.len() < 2 {
        return None;
    }
    let before = lines[..starts[0].0].join("\n");
    let mut out = Vec::new();
    for (k, (i, day, time, zone, rest)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(lines.len(), |n| n.0);
        let text = lines[*i..end].join("\n").trim().to_string();
        let label = rest
            .trim_matches(['*', '_', ' '])
            .split(['.', '。', '\n'])
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        out.push(Stamped {
            line: *i,
            day: *day,
            time: *time,
            zone: zone.clone(),
            label: if label.is_empty() {
                "entry".into()
            } else {
                short(&label, 60)
            },
            text,
        });
    }
    Some((before, out))
}

/// Whether a title says what a note is about, not only when it was
/// written (`Session: 2026-02-21 20:43:39 UTC` does not).
fn says_more_than_when(t: &str) -> bool {
    let words: Vec<String> = t
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| {
            !matches!(
                w.as_str(),
                "session" | "utc" | "gmt" | "am" | "pm" | "daily" | "note" | "notes" | "log"
            )
        })
        .collect();
    words.iter().map(|w| w.chars().count()).sum::<usize>() >= 3
        || words.iter().any(|w| !w.is_ascii())
}

/// A title without the days, times and zones it gives: `Session:
/// 2026-02-06 20:12:14 UTC` → `Session`.
fn without_when(t: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"(?i)\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?|\b(?:utc|gmt)\b")
            .expect("the when pattern")
    });
    re.replace_all(t, " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_string()
}

/// A file name's topic as words: `edit-failure-lesson` → `edit failure
/// lesson`.
fn topic_words(t: &str) -> String {
    t.replace(['-', '_'], " ").trim().to_string()
}

/// A value without the code marks around it (`` `Doanh31` `` → `Doanh31`).
fn unquoted(v: &str) -> String {
    let t = v.trim();
    match t.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        Some(inner) if !inner.contains('`') => inner.to_string(),
        _ => t.to_string(),
    }
}

/// The handles and chat ids a `USER.md` line gives the user, lowercase
/// without the `@`: each name a line of handles lists (`Online Handles:
/// DiamondAlchemy, Diamond`, `Username: @alvie`), and the number a line of
/// an id gives (`Telegram ID: 8217045820`).
fn handles_given(key: &str, value: &str) -> Vec<String> {
    let key = key.to_lowercase();
    let words: Vec<&str> = key.split_whitespace().collect();
    let parts = || {
        value
            .split([',', '/', '(', ')', ';', '|'])
            .map(|p| p.trim().trim_matches(['*', '_', '`', '"', '\'']).trim())
            .map(|p| p.trim_start_matches('@').to_lowercase())
    };
    if words
        .iter()
        .any(|w| matches!(*w, "handle" | "handles" | "username" | "usernames"))
    {
        parts()
            .filter(|p| {
                (2..=32).contains(&p.chars().count())
                    && p.chars().all(|c| c.is_alphanumeric() || "_.-".contains(c))
            })
            .collect()
    } else if words.last().is_some_and(|w| *w == "id" || *w == "ids") {
        parts().filter(|p| super::sessions::chat_id(p)).collect()
    } else {
        Vec::new()
    }
}

/// The kind of entry a heading names: the seed's `HH:MM | type | …`, else
/// a daily note's section.
fn event_class(h: &str) -> String {
    let parts: Vec<&str> = h.split('|').map(str::trim).collect();
    match parts.get(1) {
        Some(t) if parts.len() >= 2 && !t.is_empty() && t.len() <= 20 => t.to_lowercase(),
        _ => "daily_note".into(),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_profile_line_of_handles_or_of_an_id_gives_them() {
        let h = |k: &str, v: &str| handles_given(k, v);
        assert_eq!(
            h("Online Handles", "DiamondAlchemy, Diamond"),
            ["diamondalchemy", "diamond"]
        );
        assert_eq!(h("Username", "@alvie_m"), ["alvie_m"]);
        assert_eq!(h("Telegram ID", "8217045820"), ["8217045820"]);
        // (a name, a time zone, an id that is no number: none)
        assert!(h("Name", "Alvaro Medina").is_empty());
        assert!(h("Timezone", "America/Chicago").is_empty());
        assert!(h("Discord ID", "alvie#1234").is_empty());
        assert!(h("Handles", "the one on X, ask him").is_empty());
    }

    use super::*;

    #[test]
    fn names_and_headings() {
        assert_eq!(clean_name("**Midhun**"), "Midhun");
        assert_eq!(clean_name("陈明，30岁"), "陈明");
        assert_eq!(clean_name("Mira Chen (she/her)"), "Mira Chen");
        assert_eq!(
            clean_name("Jon Trevor Somwaru — goes by JT | Timezone: America/New_York"),
            "Jon Trevor Somwaru"
        );
        assert_eq!(clean_name("Ana-Lucía Pérez - she/her"), "Ana-Lucía Pérez");
        assert_eq!(
            strip_time("3:30 AM Session — The Core Vision"),
            "Session — The Core Vision"
        );
        assert_eq!(strip_time("05:23 心跳检查"), "心跳检查");
        // a range and its part of the day; a remark of the day after it
        assert_eq!(
            strip_time("1:22-2:16 PM - Roles Filter Fix & Railway Deploy Issues"),
            "Roles Filter Fix & Railway Deploy Issues"
        );
        assert_eq!(
            strip_time("6:10-16 PM - Railway Success"),
            "Railway Success"
        );
        assert_eq!(
            strip_time("13:10 PM - Auto-save Checkpoint"),
            "Auto-save Checkpoint"
        );
        assert_eq!(
            strip_time("12:10 AM (April 4) - Night Watch"),
            "Night Watch"
        );
        assert_eq!(strip_time("9:00 (Standup) notes"), "(Standup) notes");
        // a number after the dash is no end of a range
        assert_eq!(
            strip_time("21:40 PM - 17.5+ Hour Crisis Status"),
            "17.5+ Hour Crisis Status"
        );
        assert_eq!(strip_time("01:10 AM - 21+ Hour Status"), "21+ Hour Status");
        assert_eq!(strip_time("03:41 - 05:10 AM Session"), "Session");
        assert_eq!(strip_time("10:00 - 11:00 Standup"), "Standup");
        assert_eq!(strip_time("TODO"), "TODO");
        assert_eq!(
            strip_time("【23:14 · GEO 工具开源项目】[重要事件]"),
            "GEO 工具开源项目[重要事件]"
        );
        assert_eq!(strip_time("[21:40] Deploy"), "Deploy");
        assert_eq!(
            strip_time("20:42 エージェント数修正 (2026-02-12 20:42 UTC)"),
            "エージェント数修正"
        );
        assert_eq!(strip_time("08:55 整理 続報 (08:55-13:02 UTC)"), "整理 続報");
        assert_eq!(strip_time("Status-Update (14:20 Uhr)"), "Status-Update");
        assert_eq!(strip_time("Check-in (9:05h)"), "Check-in");
        assert_eq!(strip_time("18:45 Project (2026-02-12T18:45)"), "Project");
        assert_eq!(strip_time("09:00 Call (with Ana)"), "Call (with Ana)");
        // a time after the part of the day it is in, once
        assert_eq!(strip_time("中午 12:41 - 讨论"), "中午 - 讨论");
        assert_eq!(strip_time("Session at 3:30 PM"), "Session");
        assert_eq!(
            strip_time("7:35 早间新闻任务 ✅ (7:55完成)"),
            "早间新闻任务 ✅ (7:55完成)"
        );
        assert_eq!(
            strip_time("Meeting 10:00-11:00 with Ana"),
            "Meeting 10:00-11:00 with Ana"
        );
        assert_eq!(strip_time("Ratio 3:2 works"), "Ratio 3:2 works");
        assert!(!says_more_than_when("Session: 2026-02-21 20:43:39 UTC"));
        assert!(says_more_than_when("CAD 工程量计算技能开发项目"));
        assert!(says_more_than_when("Edit failure lesson"));
        assert_eq!(topic_words("edit-failure-lesson"), "edit failure lesson");
        assert_eq!(event_class("09:15 | fact | confidence:high"), "fact");
        assert_eq!(event_class("3:30 AM Session"), "daily_note");
    }

    #[test]
    fn zones_and_titles_that_say_when() {
        assert_eq!(
            zone_of("Telegram yue id:84 +18m 2026-02-07 10:52 GMT+8").as_deref(),
            Some("+08:00")
        );
        assert_eq!(
            zone_of("2026-02-07 10:52 UTC+05:30").as_deref(),
            Some("+05:30")
        );
        assert_eq!(zone_of("Tue 2026-05-26 08:35 UTC").as_deref(), Some("Z"));
        assert_eq!(zone_of("10:53 -0500").as_deref(), Some("-05:00"));
        assert_eq!(zone_of("10:53 +18m"), None);
        assert_eq!(zone_of("10:53"), None);
        assert_eq!(zone_of("10:53 GMT+15"), None);
        assert_eq!(without_when("Session: 2026-02-06 20:12:14 UTC"), "Session");
        assert_eq!(without_when("2026-02-06"), "");
    }

    #[test]
    fn stamped_entries_are_split_with_their_day_and_time() {
        let body = "intro\n\n[Tue 2026-05-26 08:35 UTC] Doanh approved direction 2. More.\nsecond line\n\n[Wed 2026-05-27 06:55 UTC] Continued the step\n```\n[09:00] not a stamp\n```\n";
        let (before, e) = stamped(body).expect("a log");
        assert_eq!(before.trim(), "intro");
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].line, 2);
        assert_eq!(
            e[0].day.map(|d| d.to_string()).as_deref(),
            Some("2026-05-26")
        );
        assert_eq!(e[0].time.format("%H:%M").to_string(), "08:35");
        assert_eq!(e[0].label, "Doanh approved direction 2");
        assert!(e[0].text.ends_with("second line"));
        assert_eq!(
            e[1].day.map(|d| d.to_string()).as_deref(),
            Some("2026-05-27")
        );
        assert!(e[1].text.contains("[09:00] not a stamp"));
        // one stamp is no log; a link in brackets is no stamp
        assert!(stamped("[10:00] once\ntext").is_none());
        assert!(stamped("[docs](http://a:80)\n[x](http://b:81)").is_none());
    }
}
