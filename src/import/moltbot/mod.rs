//! A Moltbot memory folder (the Moltbot architecture, §3–7 and §9.3) as a
//! plan of KIP writes:
//!
//! | Moltbot | KIP |
//! |---|---|
//! | `MEMORY.md` Identity | the user's `Person` (`relationship_to_self: "user"`, each `Key: value` an attribute), pinned, core tier |
//! | `MEMORY.md` Active Context, Persona | `$self` attributes `active_context`, `persona` |
//! | `MEMORY.md` another block | on the user's `Person` as `memory_<title>` when it is about the user, else a pinned `Insight` note of its own (`blocks`) |
//! | `MEMORY.md` Critical Facts | one pinned `Insight` each (`insight_class: "critical_fact"`) |
//! | `memory/episodes/YYYY-MM-DD.md` entries | `Event`s (`event_class` the entry type, `start_time`, `content_summary`, `tags`), confidence high/medium/low → 0.9/0.7/0.4 |
//! | a `preference` entry | also a `Preference`, `derived_from` its Event, and the user `prefers` it |
//! | `graph/entities/*.md`, `graph/index.md` registry | a concept each (`person` → `Person`, any other type as its own concept type), summary, facts, timeline, open questions as attributes |
//! | `graph/index.md` edges, entity `## Relations` | links (`decided-on` → `decided_on`, `Developed by` → `developed_by`), confidence and first seen as metadata |
//! | `procedures/*.md` | `Skill`s (trigger, steps, notes, learned from) |
//! | `meta/decay-scores.json` | `memory_strength`, `access_count`, `last_accessed`, `pinned` on the element it scores |
//!
//! Every element carries `source: "moltbot:<file>:<line>"` and the
//! original time as `created_at`. Imported concepts are filed under the
//! `Unsorted` domain, for the sleep cycle to file them.

mod blocks;
mod contacts;
mod dreaming;
mod engram_store;
pub use engram_store::read_engram;
mod extra;
mod learnings;
mod promoted;
mod relations;
mod sessions;
mod tables;
mod who;
mod workspace;

use super::draft::{Concept, Draft, Link, files, first_sentence, short, wiki_links};
use super::{Plan, confidence, predicate_name, type_name};
use blocks::Block;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Reads a Moltbot workspace (with `MEMORY.md` and `memory/`) or its
/// `memory/` folder; `extra`: folders or files of the workspace that its
/// memory search also covers (OpenClaw's `memorySearch.extraPaths`),
/// beside those the configuration next to the workspace lists.
pub fn read(dir: &Path, extra: &[PathBuf]) -> Result<Plan, String> {
    if !dir.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    // the workspace's own files kept in one folder of it (`config/`) when
    // none is at its top
    let own = workspace::moved_files(dir);
    let mem = if own.is_some() || workspace::is_workspace(dir) {
        dir.join("memory")
    } else {
        dir.to_path_buf()
    };
    // a workspace whose `memory/` was moved into one of its folders
    // (`backup/memory/`), and is there alone, keeps its daily notes there
    let moved = (!mem.is_dir() && mem != dir)
        .then(|| workspace::moved_memory(dir))
        .flatten();
    let mem = moved.clone().unwrap_or(mem);
    let mut r = Reader::new(Draft::new(dir, "moltbot"));
    r.decay_scores(&mem.join("meta/decay-scores.json"));
    // the workspace's own files (OpenClaw): who the user is, who the agent
    // is
    if let Some(o) = &own {
        let rel = r.d.rel(o);
        r.d.note(format!(
            "no USER.md, MEMORY.md or agent files at the workspace's top: {rel}/, the one folder that holds them, read as the workspace's own"
        ));
    }
    r.workspace(own.as_deref().unwrap_or(dir));
    let mut core = vec![dir.join("MEMORY.md"), mem.join("MEMORY.md")];
    core.extend(own.iter().map(|o| o.join("MEMORY.md")));
    match core.iter().find(|p| p.is_file()) {
        Some(p) => r.core(p),
        None => r.d.note("no MEMORY.md: no core memory imported"),
    }
    for f in files(&mem.join("episodes"), "md") {
        r.episodes(&f);
    }
    r.graph(&mem.join("graph"));
    for f in files(&mem.join("procedures"), "md") {
        r.procedure(&f);
    }
    // daily notes, side notes and every other file of the memory folder
    if mem != dir {
        if let Some(m) = &moved {
            let rel = r.d.rel(m);
            r.d.note(format!(
                "no memory/ folder: {rel}/, the one memory folder in the workspace, read as its memory"
            ));
        } else if !mem.is_dir() {
            r.d.note("no memory/ folder: no daily notes imported");
        }
        r.notes(&mem);
    } else {
        r.notes_in(&mem, &mem);
    }
    r.session_corpus(&mem);
    if mem != dir {
        r.learnings(&dir.join(".learnings"));
    }
    r.extra_paths(dir, &mem, own.as_deref(), extra);
    r.engram_stores();
    r.drop_agent_quoted();
    r.link_promoted();
    for k in r.decay.keys() {
        r.d.note(format!(
            "meta/decay-scores.json: `{k}` scores nothing that was imported"
        ));
    }
    Ok(r.d.finish())
}

impl Reader {
    fn new(d: Draft) -> Reader {
        Reader {
            d,
            decay: HashMap::new(),
            user: None,
            agent: None,
            user_unnamed: false,
            agent_quoted: Default::default(),
            aliases: Vec::new(),
            handles: Vec::new(),
            known: HashMap::new(),
            names: std::collections::HashSet::new(),
            promoted: Vec::new(),
            saved_sessions: std::collections::HashSet::new(),
            users_senders: std::collections::HashSet::new(),
            engram: Vec::new(),
        }
    }
}

struct Reader {
    d: Draft,
    /// decay-scores.json entries not yet used, by key.
    decay: HashMap<String, Value>,
    /// The user's (type, name), from MEMORY.md Identity.
    user: Option<(String, String)>,
    /// Whether the user is `User` for want of a name (USER.md gives
    /// none): a block about them that does names them.
    user_unnamed: bool,
    /// Names a reply quoted the agent under, in any conversation.
    agent_quoted: std::collections::BTreeSet<String>,
    /// The agent's name, from IDENTITY.md.
    agent: Option<String>,
    /// What the files call the user (name, first name, what to call
    /// them), lowercase: a `MEMORY.md` block whose title names one is
    /// about the user.
    aliases: Vec<String>,
    /// The user's handles on chat platforms (`Telegram @ariffazil` in a
    /// block about the user, in `USER.md`), lowercase without the `@`: a
    /// saved conversation's sender with one of them is the user.
    handles: Vec<String>,
    /// Entity ids (`person--alex`) to (type, name).
    known: HashMap<String, (String, String)>,
    /// Names given to notes and daily-note Events so far (each unique).
    names: std::collections::HashSet<(String, String)>,
    /// Promoted lines kept so far: the Insight's name, the daily note
    /// and first line they came from, and where the Insight was read.
    promoted: Vec<(String, String, usize, String)>,
    /// The ids of the saved conversations imported (`Session ID`): a
    /// session the session corpus also holds is read from its saved copy.
    saved_sessions: std::collections::HashSet<String>,
    /// The senders said to be the user so far (each said once).
    users_senders: std::collections::HashSet<String>,
    /// Engram stores met among the notes (`memory/local/`), read by the
    /// Engram reader once the notes are.
    engram: Vec<PathBuf>,
}

/// Keys only an agent's identity has (OpenClaw's IDENTITY.md template:
/// `Creature:`, `Vibe:`, `Emoji:`).
const AGENT_ONLY_KEYS: [&str; 3] = ["creature", "vibe", "emoji"];

impl Reader {
    /// The scores decay-scores.json keeps for `key`, as metadata.
    fn scored(&mut self, key: &str, meta: &mut Map<String, Value>) {
        let Some(e) = self.decay.remove(key) else {
            return;
        };
        if let Some(s) = e.get("current_score").and_then(Value::as_f64) {
            meta.insert("memory_strength".into(), json!(s.clamp(0.0, 1.0)));
        }
        for (from, to) in [
            ("access_count", "access_count"),
            ("last_accessed", "last_accessed"),
            ("base_relevance", "base_relevance"),
            ("status", "decay_status"),
        ] {
            if let Some(v) = e.get(from).filter(|v| !v.is_null()) {
                meta.insert(to.into(), v.clone());
            }
        }
        if e.get("pinned").and_then(Value::as_bool) == Some(true) {
            meta.insert("pinned".into(), json!(true));
        }
    }

    fn decay_scores(&mut self, p: &Path) {
        if !p.is_file() {
            return;
        }
        let Some(t) = self.d.text(p) else { return };
        match serde_json::from_str::<Value>(&t) {
            Ok(v) => match v.get("entries").and_then(Value::as_object) {
                Some(m) => self.decay = m.clone().into_iter().collect(),
                None => self
                    .d
                    .note("meta/decay-scores.json: no `entries` object, nothing read"),
            },
            Err(e) => self.d.note(format!(
                "meta/decay-scores.json: not JSON ({e}), nothing read"
            )),
        }
    }

    fn core(&mut self, p: &Path) {
        let Some(text) = self.d.text(p) else { return };
        let mut sections = blocks::parse(&text);
        // what the file says before its first block (a file of bullets
        // and no heading, as many agents keep it): a block of its own,
        // named by the file's title (`# Long-term memory`), else the file's
        if let Some(b) = blocks::preamble(&text) {
            sections.insert(0, b);
        }
        // the file itself, verbatim: what the blocks below structure is
        // also kept as written, every line of it
        let mut self_attrs = Map::new();
        self_attrs.insert("memory_md".into(), json!(text));
        // blocks of no known title, placed once the user is known (an
        // Identity block may follow one about the user)
        let mut other: Vec<Block> = Vec::new();
        for block in sections {
            let key = match block.parent {
                // a sub-block is never one of the known blocks
                Some(_) => String::new(),
                None => block.title.to_ascii_lowercase(),
            };
            let (at, bullets) = (block.at, &block.bullets);
            match key.as_str() {
                "identity" => {
                    let mut attrs = Map::new();
                    let mut name = None;
                    let mut calls = Vec::new();
                    for (_, b) in bullets {
                        // `**Name:** Claw` as `Name: Claw`
                        let kv = super::markdown::key_values(b)
                            .into_iter()
                            .next()
                            .map(|(_, k, v)| (k, v))
                            .or_else(|| b.split_once(':').map(|(k, v)| (k.into(), v.into())));
                        if let Some((k, v)) = kv {
                            let k = predicate_name(&k);
                            let v = v.trim().to_string();
                            if k == "name" {
                                name = Some(v.clone());
                            }
                            if blocks::CALL_KEYS.contains(&k.as_str()) {
                                calls.push(v.clone());
                            }
                            attrs.insert(k, json!(v));
                        } else {
                            let r = self.d.rel(p);
                            self.d
                                .note(format!("{r}:{at}: identity line `{b}` is not `Key: value`"));
                        }
                    }
                    // the agent's own identity (its name is the one
                    // IDENTITY.md gives it, or it says what only an agent
                    // has: a creature, a vibe, an emoji), not the user's
                    if let Some(why) = self.agents_identity(name.as_deref(), &attrs) {
                        let r = self.d.rel(p);
                        self.d.note(format!(
                            "{r}:{at}: Identity is the agent's ({why}): kept on $self as agent_identity"
                        ));
                        self_attrs.insert("agent_identity".into(), Value::Object(attrs));
                        continue;
                    }
                    for v in &calls {
                        self.aliases.extend(blocks::aliases_of(v));
                    }
                    match name {
                        Some(n) => {
                            attrs.insert("relationship_to_self".into(), json!("user"));
                            let mut meta = core_meta(&self.d, self.d.at(p, at));
                            meta.insert("pinned".into(), json!(true));
                            self.user = Some(("Person".into(), n.clone()));
                            self.aliases.extend(blocks::aliases_of(&n));
                            self.d.concept(Concept {
                                ty: "Person".into(),
                                name: n,
                                attrs,
                                meta,
                                what: "Person".into(),
                                source: self.d.at(p, at),
                            });
                        }
                        None => {
                            let r = self.d.rel(p);
                            self.d.note(format!(
                                "{r}:{at}: Identity gives no Name: kept on $self as user_identity"
                            ));
                            self_attrs.insert("user_identity".into(), Value::Object(attrs));
                        }
                    }
                }
                "active context" | "persona" => {
                    let k = if key == "persona" {
                        "persona"
                    } else {
                        "active_context"
                    };
                    self_attrs.insert(
                        k.into(),
                        json!(bullets.iter().map(|b| b.1.clone()).collect::<Vec<_>>()),
                    );
                }
                "critical facts" => {
                    for (n, b) in bullets.iter().cloned() {
                        let mut meta = core_meta(&self.d, self.d.at(p, n));
                        meta.insert("pinned".into(), json!(true));
                        meta.insert("confidence".into(), json!(1.0));
                        let mut attrs = Map::new();
                        attrs.insert("description".into(), json!(b));
                        attrs.insert("insight_class".into(), json!("critical_fact"));
                        self.d.concept(Concept {
                            ty: "Insight".into(),
                            name: short(&b, 120),
                            attrs,
                            meta,
                            what: "Insight (critical fact)".into(),
                            source: self.d.at(p, n),
                        });
                    }
                }
                _ => other.push(block),
            }
        }
        self.other_blocks(p, other);
        if !self_attrs.is_empty() {
            self.d.concept(Concept {
                ty: "Person".into(),
                name: "$self".into(),
                attrs: self_attrs,
                meta: core_meta(&self.d, self.d.at(p, 1)),
                what: "$self (core blocks)".into(),
                source: self.d.at(p, 1),
            });
        }
    }

    /// Why an Identity block of MEMORY.md is the agent's own, if it is:
    /// its name is the one IDENTITY.md gives the agent (`Claw 🐧` for
    /// `Claw`), or it has keys only an agent's identity has.
    fn agents_identity(&self, name: Option<&str>, attrs: &Map<String, Value>) -> Option<String> {
        let letters = |s: &str| {
            s.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        };
        if let (Some(n), Some(a)) = (name, self.agent.as_deref())
            && !letters(n).is_empty()
            && letters(n) == letters(a)
        {
            return Some(format!("Name: {n}, as IDENTITY.md names the agent"));
        }
        AGENT_ONLY_KEYS
            .iter()
            .find(|k| attrs.contains_key(**k))
            .map(|k| format!("it gives the agent's {k}"))
    }

    fn episodes(&mut self, p: &Path) {
        let Some(text) = self.d.text(p) else { return };
        let day = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let day_ok = chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d").is_ok();
        if !day_ok {
            let r = self.d.rel(p);
            self.d.note(format!(
                "{r}: the file name is not a date (YYYY-MM-DD.md): its entries have no day"
            ));
        }
        // (header line, header, body lines)
        let mut entries: Vec<(usize, String, Vec<String>)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if let Some(h) = line.strip_prefix("## ") {
                entries.push((i + 1, h.to_string(), Vec::new()));
            } else if let Some(e) = entries.last_mut() {
                e.2.push(line.to_string());
            } else if !line.trim().is_empty() && !line.starts_with("# ") {
                let r = self.d.rel(p);
                self.d.note(format!(
                    "{r}:{}: text before the first entry, skipped",
                    i + 1
                ));
            }
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (n, header, body) in entries {
            let parts: Vec<&str> = header.split('|').map(str::trim).collect();
            let time = parts.first().copied().unwrap_or("");
            let time_ok = chrono::NaiveTime::parse_from_str(time, "%H:%M").is_ok();
            if !time_ok {
                let r = self.d.rel(p);
                self.d.note(format!(
                    "{r}:{n}: `## {header}` is not `HH:MM | type | confidence:… | tags:[…]`: imported with the heading as its name"
                ));
            }
            let kind = parts.get(1).copied().unwrap_or("event").to_string();
            let mut conf = None;
            let mut tags: Vec<String> = Vec::new();
            for part in parts.iter().skip(2) {
                if let Some(c) = part.strip_prefix("confidence:") {
                    conf = confidence(c);
                    if conf.is_none() {
                        let r = self.d.rel(p);
                        self.d.note(format!(
                            "{r}:{n}: confidence `{c}` is not high, medium or low"
                        ));
                    }
                } else if let Some(t) = part.strip_prefix("tags:") {
                    tags = t
                        .trim_matches(|c| c == '[' || c == ']')
                        .split(',')
                        .map(|t| t.trim().to_string())
                        .filter(|t| !t.is_empty())
                        .collect();
                } else if !part.is_empty() {
                    let r = self.d.rel(p);
                    self.d.note(format!(
                        "{r}:{n}: `{part}` in the entry heading is not understood"
                    ));
                }
            }
            if !matches!(
                kind.as_str(),
                "decision" | "fact" | "preference" | "task" | "event" | "emotion" | "correction"
            ) {
                let r = self.d.rel(p);
                self.d.note(format!(
                    "{r}:{n}: entry type `{kind}` is not one Moltbot defines: imported as an Event of that class"
                ));
            }
            let base = if time_ok && day_ok {
                format!("Episode {day} {time}")
            } else {
                format!("Episode {day} {}", header.trim())
            };
            let k = seen.entry(base.clone()).or_default();
            *k += 1;
            let name = if *k == 1 {
                base
            } else {
                format!("{base} ({k})")
            };
            let summary = body
                .iter()
                .map(|l| l.trim())
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let src = self.d.at(p, n);
            let mut attrs = Map::new();
            attrs.insert("event_class".into(), json!(kind));
            attrs.insert("content_summary".into(), json!(summary));
            if !tags.is_empty() {
                attrs.insert("tags".into(), json!(tags));
            }
            let mut meta = self.d.provenance(&src);
            if time_ok && day_ok {
                let at = format!("{day}T{time}:00Z");
                attrs.insert("start_time".into(), json!(at));
                meta.insert("created_at".into(), json!(at));
            }
            if let Some(c) = conf {
                meta.insert("confidence".into(), json!(c));
            }
            self.scored(&format!("episode:{day}:{time}"), &mut meta);
            self.d.concept(Concept {
                ty: "Event".into(),
                name: name.clone(),
                attrs,
                meta: meta.clone(),
                what: "Event".into(),
                source: src.clone(),
            });
            if kind == "preference" && !summary.is_empty() {
                let pref = short(&first_sentence(&summary), 100);
                let mut attrs = Map::new();
                attrs.insert("description".into(), json!(summary));
                let mut pmeta = meta.clone();
                pmeta.remove("memory_strength");
                self.d.concept(Concept {
                    ty: "Preference".into(),
                    name: pref.clone(),
                    attrs,
                    meta: pmeta.clone(),
                    what: "Preference".into(),
                    source: src.clone(),
                });
                self.d.link(Link {
                    from: ("Preference".into(), pref.clone()),
                    predicate: "derived_from".into(),
                    to: ("Event".into(), name.clone()),
                    meta: pmeta.clone(),
                    source: src.clone(),
                });
                if let Some(u) = self.user.clone() {
                    self.d.link(Link {
                        from: u,
                        predicate: "prefers".into(),
                        to: ("Preference".into(), pref),
                        meta: pmeta,
                        source: src,
                    });
                }
            }
        }
    }

    fn graph(&mut self, g: &Path) {
        // the registry: id → (type, label, decay score)
        let mut registry: BTreeMap<String, (String, String, Option<f64>, usize)> = BTreeMap::new();
        let mut edges: Vec<(usize, Vec<String>)> = Vec::new();
        let index = g.join("index.md");
        if index.is_file()
            && let Some(text) = self.d.text(&index)
        {
            let mut section = String::new();
            for (i, line) in text.lines().enumerate() {
                if let Some(h) = line.strip_prefix("## ") {
                    section = h.trim().to_ascii_lowercase();
                    continue;
                }
                let Some(cells) = table_row(line) else {
                    continue;
                };
                if cells
                    .iter()
                    .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
                {
                    continue;
                }
                match section.as_str() {
                    "entity registry" if cells.len() >= 3 && cells[0] != "ID" => {
                        let score = cells
                            .get(4)
                            .and_then(|s| s.split_whitespace().next())
                            .and_then(|s| s.parse::<f64>().ok());
                        registry.insert(
                            cells[0].clone(),
                            (cells[1].clone(), cells[2].clone(), score, i + 1),
                        );
                    }
                    "edges" if cells.len() >= 3 && cells[0] != "From" => {
                        edges.push((i + 1, cells));
                    }
                    "entity registry" | "edges" => {}
                    _ => {
                        let r = self.d.rel(&index);
                        self.d.note(format!(
                            "{r}:{}: a table row outside the registry and the edges, skipped",
                            i + 1
                        ));
                    }
                }
            }
        }
        // entity files
        let mut filed: HashMap<String, ()> = HashMap::new();
        let mut relations: Vec<(PathBuf, usize, String, String, String)> = Vec::new();
        for f in files(&g.join("entities"), "md") {
            let Some(text) = self.d.text(&f) else {
                continue;
            };
            let stem = f
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let mut id = stem.clone();
            let mut header: HashMap<String, String> = HashMap::new();
            let mut section = String::new();
            let mut summary: Vec<String> = Vec::new();
            let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (i, line) in text.lines().enumerate() {
                let t = line.trim();
                if let Some(h) = t.strip_prefix("# ") {
                    id = h.trim().to_string();
                } else if header_comment(t, &mut header) {
                } else if let Some(h) = t.strip_prefix("## ") {
                    section = h.trim().to_ascii_lowercase();
                } else if let Some(b) = t.strip_prefix("- ") {
                    if section == "relations" {
                        match b.split_once(':') {
                            Some((label, targets)) => {
                                for target in wiki_links(targets) {
                                    relations.push((
                                        f.clone(),
                                        i + 1,
                                        id.clone(),
                                        predicate_name(label),
                                        target,
                                    ));
                                }
                            }
                            None => {
                                let r = self.d.rel(&f);
                                self.d.note(format!(
                                    "{r}:{}: relation `{b}` is not `Label: [[entity]]`, skipped",
                                    i + 1
                                ));
                            }
                        }
                    } else if section.is_empty() {
                        let r = self.d.rel(&f);
                        self.d.note(format!(
                            "{r}:{}: a bullet outside any section, skipped",
                            i + 1
                        ));
                    } else {
                        lists
                            .entry(predicate_name(&section))
                            .or_default()
                            .push(b.trim().to_string());
                    }
                } else if !t.is_empty() && section == "summary" {
                    summary.push(t.to_string());
                } else if !t.is_empty() {
                    let r = self.d.rel(&f);
                    self.d.note(format!(
                        "{r}:{}: text outside Summary and the lists, skipped",
                        i + 1
                    ));
                }
            }
            let reg = registry.get(&id).cloned();
            let kind = header
                .get("type")
                .cloned()
                .or_else(|| reg.as_ref().map(|r| r.0.clone()))
                .or_else(|| id.split_once("--").map(|(k, _)| k.to_string()));
            let r = self.d.rel(&f);
            if header.is_empty() {
                self.d.note(format!(
                    "{r}: no header comment (Type, Created, Decay score): its type comes from {}",
                    if reg.is_some() {
                        "the registry"
                    } else {
                        "its id"
                    }
                ));
            }
            let ty = concept_type(kind.as_deref().unwrap_or("concept"));
            let name = reg
                .as_ref()
                .map(|r| r.1.clone())
                .unwrap_or_else(|| label_of(&id));
            let src = self.d.at(&f, 1);
            let mut attrs = Map::new();
            if !summary.is_empty() {
                attrs.insert("description".into(), json!(summary.join(" ")));
            }
            for (k, v) in lists {
                attrs.insert(k, json!(v));
            }
            attrs.insert("moltbot_id".into(), json!(id));
            let mut meta = self.d.provenance(&src);
            if let Some(c) = header.get("created") {
                meta.insert("created_at".into(), json!(c));
            }
            header_scores(&header, &mut meta);
            if !meta.contains_key("memory_strength")
                && let Some(s) = reg.as_ref().and_then(|r| r.2)
            {
                meta.insert("memory_strength".into(), json!(s.clamp(0.0, 1.0)));
            }
            if header
                .get("pinned")
                .is_some_and(|p| p.eq_ignore_ascii_case("yes") || p == "true")
            {
                meta.insert("pinned".into(), json!(true));
            }
            self.scored(&format!("entity:{id}"), &mut meta);
            self.known.insert(id.clone(), (ty.clone(), name.clone()));
            filed.insert(id.clone(), ());
            self.d.concept(Concept {
                ty: ty.clone(),
                name,
                attrs,
                meta,
                what: ty,
                source: src,
            });
        }
        // registry entries without a file
        for (id, (kind, label, score, line)) in registry {
            if filed.contains_key(&id) {
                continue;
            }
            let ty = concept_type(&kind);
            let src = self.d.at(&index, line);
            let mut meta = self.d.provenance(&src);
            if let Some(s) = score {
                meta.insert("memory_strength".into(), json!(s.clamp(0.0, 1.0)));
            }
            self.scored(&format!("entity:{id}"), &mut meta);
            let mut attrs = Map::new();
            attrs.insert("moltbot_id".into(), json!(id));
            self.known.insert(id.clone(), (ty.clone(), label.clone()));
            self.d.concept(Concept {
                ty: ty.clone(),
                name: label,
                attrs,
                meta,
                what: ty,
                source: src,
            });
        }
        // edges, then the files' relations
        for (line, cells) in edges {
            let src = self.d.at(&index, line);
            let from = self.entity(&cells[0], &src);
            let to = self.entity(&cells[2], &src);
            let mut meta = self.d.provenance(&src);
            if let Some(c) = cells.get(3).and_then(|c| confidence(c)) {
                meta.insert("confidence".into(), json!(c));
            }
            if let Some(d) = cells.get(4).filter(|d| !d.is_empty()) {
                meta.insert("created_at".into(), json!(d));
            }
            if let Some(d) = cells.get(5).filter(|d| !d.is_empty()) {
                meta.insert("last_accessed".into(), json!(d));
            }
            self.d.link(Link {
                from,
                predicate: predicate_name(&cells[1]),
                to,
                meta,
                source: src,
            });
        }
        for (f, line, from_id, pred, to_id) in relations {
            let src = self.d.at(&f, line);
            let from = self.entity(&from_id, &src);
            let to = self.entity(&to_id, &src);
            let meta = self.d.provenance(&src);
            self.d.link(Link {
                from,
                predicate: pred,
                to,
                meta,
                source: src,
            });
        }
    }

    /// The concept an entity id names; one with neither a file nor a
    /// registry row is created from its id, and reported.
    fn entity(&mut self, id: &str, src: &str) -> (String, String) {
        let id = id
            .trim()
            .trim_start_matches("[[")
            .trim_end_matches("]]")
            .trim();
        if let Some(k) = self.known.get(id) {
            return k.clone();
        }
        let ty = concept_type(id.split_once("--").map_or("concept", |(k, _)| k));
        let name = label_of(id);
        self.d.from_id(
            &ty,
            &name,
            "moltbot_id",
            id,
            src,
            "no entity file and no registry row",
        );
        self.known
            .insert(id.to_string(), (ty.clone(), name.clone()));
        (ty, name)
    }

    fn procedure(&mut self, p: &Path) {
        let Some(text) = self.d.text(p) else { return };
        let mut name = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut header: HashMap<String, String> = HashMap::new();
        let mut section = String::new();
        let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut trigger: Vec<String> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if let Some(h) = t.strip_prefix("# ") {
                name = h.trim().trim_end_matches(".md").to_string();
            } else if header_comment(t, &mut header) {
            } else if let Some(h) = t.strip_prefix("## ") {
                section = h.trim().to_ascii_lowercase();
            } else if t.is_empty() {
            } else if section == "trigger" {
                trigger.push(t.to_string());
            } else if !section.is_empty() {
                // "1. step" or "- note"
                let item = t
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .trim_start_matches(['.', ')', '-', '*'])
                    .trim();
                lists
                    .entry(predicate_name(&section))
                    .or_default()
                    .push(item.to_string());
            } else {
                let r = self.d.rel(p);
                self.d
                    .note(format!("{r}:{}: text outside any section, skipped", i + 1));
            }
        }
        let src = self.d.at(p, 1);
        let mut attrs = Map::new();
        if !trigger.is_empty() {
            attrs.insert("description".into(), json!(trigger.join(" ")));
            attrs.insert("trigger".into(), json!(trigger.join(" ")));
        }
        for (k, v) in lists {
            attrs.insert(k, json!(v));
        }
        let mut meta = self.d.provenance(&src);
        if let Some(d) = header.get("learned") {
            meta.insert("created_at".into(), json!(d));
        }
        if let Some(d) = header.get("last used") {
            meta.insert("last_accessed".into(), json!(d));
        }
        header_scores(&header, &mut meta);
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        self.scored(&format!("procedure:{stem}"), &mut meta);
        self.d.concept(Concept {
            ty: "Skill".into(),
            name,
            attrs,
            meta,
            what: "Skill".into(),
            source: src,
        });
    }
}

use crate::analysis::relations::says_any;

/// A list item's text: `- x`, `* x`, `+ x`, `1. x`, `1) x`.
fn bullet(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if let Some(b) = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
    {
        return Some(b);
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits <= 3 {
        let rest = &t[digits..];
        return rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "));
    }
    None
}

fn core_meta(d: &Draft, src: String) -> Map<String, Value> {
    let mut m = d.provenance(&src);
    m.insert("memory_tier".into(), json!("core"));
    m
}

/// Reads `<!-- Key: value | Key: value -->` into `header`; false when the
/// line is not such a comment.
fn header_comment(line: &str, header: &mut HashMap<String, String>) -> bool {
    let Some(c) = line
        .strip_prefix("<!--")
        .and_then(|c| c.strip_suffix("-->"))
    else {
        return false;
    };
    for kv in c.split('|') {
        if let Some((k, v)) = kv.split_once(':') {
            header.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    true
}

/// A header's `Decay score` and `Access count` as metadata.
fn header_scores(header: &HashMap<String, String>, meta: &mut Map<String, Value>) {
    if let Some(s) = header
        .get("decay score")
        .and_then(|s| s.parse::<f64>().ok())
    {
        meta.insert("memory_strength".into(), json!(s.clamp(0.0, 1.0)));
    }
    if let Some(a) = header
        .get("access count")
        .and_then(|s| s.parse::<i64>().ok())
    {
        meta.insert("access_count".into(), json!(a));
    }
}

/// A Moltbot entity type as a concept type: `person` → `Person`.
fn concept_type(kind: &str) -> String {
    match kind.trim().to_ascii_lowercase().as_str() {
        "person" | "people" => "Person".into(),
        "" => "Concept".into(),
        k => type_name(&predicate_name(k).replace('_', " ")).replace(' ', ""),
    }
}

/// `person--alexander-rivera` → `Alexander Rivera`; `concept--oauth2-pkce`
/// → `Oauth2 Pkce`.
fn label_of(id: &str) -> String {
    id.split_once("--")
        .map_or(id, |(_, rest)| rest)
        .split('-')
        .filter(|w| !w.is_empty())
        .map(type_name)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cells of a Markdown table row.
fn table_row(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    if !t.starts_with('|') {
        return None;
    }
    Some(
        t.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect(),
    )
}
