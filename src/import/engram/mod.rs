//! An Engram memory folder (`memory/local/`: markdown memories with YAML
//! frontmatter, entity files, `profile.md`) as a plan of KIP writes.
//!
//! | Engram | KIP |
//! |---|---|
//! | a memory with `memoryKind: episode`, or of category `moment` | an `Event` (`event_class` the category, `start_time` and `created_at` its `created`, `content_summary` its text) |
//! | category `preference` | a `Preference`, which the user `prefers` |
//! | category `commitment` | a `Commitment` (`commitment_class: "promise"`, `status` pending unless the file says fulfilled, expired or cancelled) |
//! | category `skill` | a `Skill` (`skill_class: "procedure"`, `maturity: "candidate"`) |
//! | category `correction` (also `corrections/`) | an `Insight` (`insight_class: "lesson_learned"`, `correction` its text) |
//! | category `principle` | an `Insight` (`insight_class: "principle"`) |
//! | categories `fact`, `decision`, `entity`, `relationship`, and any other | a `Fact` (`fact_class` the category, `description` its text) |
//! | `entityRef` | the memory is `about` that entity (an Event `mentions` it) |
//! | frontmatter `links` | a link per target (`linkType` as the predicate, `strength` and `reason` as metadata) |
//! | `confidence`, `confidenceTier` | `confidence` (a tier alone: explicit 0.95, implied 0.8, inferred 0.6, speculative 0.3) and `confidence_tier` |
//! | `importanceScore`, `importanceLevel` | `importance` (a level alone: critical 0.95, high 0.8, normal 0.5, low 0.3, trivial 0.1) and `importance_level` |
//! | `status: superseded` / `archived`, `archive/` | `superseded: true` with `superseded_by`, / `archived: true` with `archived_at` |
//! | `expiresAt`, `accessCount`, `lastAccessed`, `updated` | `expires_at`, `access_count`, `last_accessed`, `observed_at` |
//! | `policyClass: protected` | `pinned: true` |
//! | `entities/<type>-<name>.md` | a concept (`person` → `Person`, `other` → `Entity`, any other type as its own concept type): Summary as `description`, Facts, Activity and Aliases as lists |
//! | `## Connected to` `- [[entity]] — label` | a link (`works on` → `works_on`) |
//! | `config/aliases.json` | the variant names in the entity's `aliases` |
//! | `profile.md` bullets | the user's `behavior_preferences` |
//! | `artifacts/` verbatim anchors | `verbatim` on the memory they quote (a `Fact` when that memory is not in the folder) |
//! | `structuredAttributes` (a map, inline as JSON or indented under the key) | metadata `structured_attributes`, an object |
//! | `transcripts/` | conversations, one `Event` a file, read by the OpenClaw workspace's reader of saved conversations (`moltbot::read_engram`, or the workspace's import when the store is in one) |
//!
//! Every element carries `source: "engram:<file>:<line>"`, its Engram id
//! as `engram_id` and its original times. Frontmatter keys Engram writes
//! that have no KIP counterpart are kept as metadata under their
//! snake_case names; keys Engram does not write are kept the same way
//! and reported.

use super::draft::{Concept, Draft, Link, files, first_sentence, short};
use super::{predicate_name, type_name};
use frontmatter::{Front, frontmatter, list, snake};

mod entities;
mod frontmatter;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// How long a generated name may be, in characters.
const NAME_CHARS: usize = 80;

/// Frontmatter keys Engram writes.
const KNOWN_KEYS: [&str; 41] = [
    "id",
    "category",
    "memoryKind",
    "created",
    "updated",
    "source",
    "confidence",
    "confidenceTier",
    "importanceScore",
    "importanceLevel",
    "importanceReasons",
    "importanceKeywords",
    "status",
    "tags",
    "entityRef",
    "parentId",
    "traceId",
    "boxId",
    "intentGoal",
    "intentActionType",
    "intentEntityTypes",
    "supersedes",
    "supersededBy",
    "supersededAt",
    "archivedAt",
    "expiresAt",
    "lineage",
    "accessCount",
    "lastAccessed",
    "chunkIndex",
    "chunkTotal",
    "links",
    "artifactType",
    "sourceMemoryId",
    "sourceTurnId",
    "lifecycleState",
    "verificationState",
    "policyClass",
    "heatScore",
    "decayScore",
    "structuredAttributes",
];

/// Engram's memory categories.
const CATEGORIES: [&str; 10] = [
    "fact",
    "preference",
    "correction",
    "entity",
    "decision",
    "relationship",
    "principle",
    "commitment",
    "moment",
    "skill",
];

/// Folders of an Engram store that hold no memory of their own, with why
/// they are not read.
const NOT_READ: [(&str, &str); 7] = [
    (
        "boxes",
        "memory boxes group memories that are imported one by one",
    ),
    ("questions", "curiosity questions the agent meant to ask"),
    ("threads", "conversation threads, not memories"),
    (
        "summaries",
        "summaries of memories that are imported one by one",
    ),
    (
        "compounding",
        "weekly syntheses of memories that are imported one by one",
    ),
    (
        "state",
        "indexes and buffers Engram derives from the memories",
    ),
    ("identity", "identity reflections"),
];

/// Whose the store's preferences and profile are.
pub enum User {
    /// No one named: `Person "User"`, who is the memory's user.
    Unnamed,
    /// A Person the memory may already have (`--user NAME`): what the
    /// store says of them is added, they are not filed again.
    Given(String),
    /// The user another reader of the same import drafted (the OpenClaw
    /// workspace holding the store names them): (type, name).
    Drafted(String, String),
}

/// Where the Engram store of `dir` is (`memory/local/`, or a workspace
/// holding one), with the draft its import starts (`None`: `dir` is no
/// store, and the draft says so). Its memories are read by
/// [`read_store`]; its transcripts by the OpenClaw workspace's reader of
/// conversations (`import::moltbot::read_engram`).
pub fn store_in(dir: &Path) -> Result<(Draft, Option<PathBuf>), String> {
    if !dir.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    let store = [dir.join("memory/local"), dir.join("local")]
        .into_iter()
        .find(|p| p.is_dir() && !is_store(dir))
        .unwrap_or_else(|| dir.to_path_buf());
    let mut d = Draft::new(dir, "engram");
    if !is_store(&store) {
        d.note(format!(
            "{}: no facts/, entities/ or profile.md: not an Engram store, nothing imported",
            dir.display()
        ));
        return Ok((d, None));
    }
    Ok((d, Some(store)))
}

/// Whether a folder inside an OpenClaw workspace's memory is an Engram
/// store (Engram, OpenClaw's memory plugin, keeps it in
/// `memory/local/`): a memory folder of Engram's (`facts/`, `entities/`,
/// `corrections/`, `artifacts/`) holding a file that opens with
/// Engram's frontmatter (an `id:` and a `category:`).
pub fn is_engram_store(p: &Path) -> bool {
    let opens_as_engram = |f: &Path| {
        use std::io::Read;
        let mut head = [0u8; 1024];
        let n = std::fs::File::open(f)
            .and_then(|mut h| h.read(&mut head))
            .unwrap_or(0);
        let head = String::from_utf8_lossy(&head[..n]);
        head.starts_with("---")
            && head.lines().any(|l| l.starts_with("id:"))
            && head.lines().any(|l| l.starts_with("category:"))
    };
    ["facts", "entities", "corrections", "artifacts"]
        .iter()
        .map(|sub| p.join(sub))
        .filter(|d| d.is_dir())
        .any(|d| {
            // the first few memories directly in it, or in its first dated
            // folder
            let mut dirs = vec![d.clone()];
            if let Ok(rd) = std::fs::read_dir(&d) {
                let mut days: Vec<PathBuf> = rd
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|x| x.is_dir())
                    .collect();
                days.sort();
                dirs.extend(days.into_iter().take(1));
            }
            dirs.iter()
                .any(|dir| files(dir, "md").iter().take(8).any(|f| opens_as_engram(f)))
        })
}

/// Reads the Engram store `store` into `d` (whose root names the
/// sources), its preferences and profile `user`'s.
pub fn read_store(d: Draft, store: &Path, user: User) -> Draft {
    let (user, user_given, user_drafted) = match user {
        User::Unnamed => (("Person".to_string(), "User".to_string()), false, false),
        User::Given(n) => (("Person".to_string(), n), true, false),
        User::Drafted(t, n) => ((t, n), true, true),
    };
    let mut r = Reader {
        d,
        store: store.to_path_buf(),
        user,
        user_given,
        user_drafted,
        user_used: None,
        profile: Vec::new(),
        entities: HashMap::new(),
        identities: HashMap::new(),
        aliases: BTreeMap::new(),
        memories: HashMap::new(),
        names: HashMap::new(),
        links: Vec::new(),
        verbatim: Vec::new(),
    };
    let store = r.store.clone();
    r.aliases(&store.join("config/aliases.json"));
    // every entity's name first, so a link finds the file it names
    // whatever the order; files naming one thing under several ids are
    // one concept
    let mut entities = Vec::new();
    for f in files(&store.join("entities"), "md") {
        if let Some(t) = r.d.text(&f) {
            let e = entities::EntityFile::read(&f, &t);
            if e.name.is_empty() {
                let rel = r.d.rel(&f);
                r.d.note(format!(
                    "{rel}: neither its heading nor its file name gives a name: skipped"
                ));
                continue;
            }
            entities.push((f, e));
        }
    }
    let heads = entities::groups(&entities.iter().map(|(_, e)| e).collect::<Vec<_>>());
    for (i, (f, e)) in entities.iter().enumerate() {
        let h = &entities[heads[i]].1;
        let mut k = (h.ty.clone(), h.name.clone());
        // the user's own entity file is the user
        let user = entities::identity(&r.user.1);
        let key = entities::identity(&h.stem);
        if matches!(k.0.as_str(), "Person" | "Entity") && (key == "user" || key == user) {
            k = r.user.clone();
            r.user_used.get_or_insert(r.d.at(f, 1));
        }
        if heads[i] != i {
            let rel = r.d.rel(f);
            r.d.note(format!(
                "{rel}: `{}` names what `{}` names: one {} `{}`, `{}` kept as an alias",
                e.stem, h.stem, k.0, k.1, e.stem
            ));
        }
        r.entities.insert(e.stem.clone(), k.clone());
        r.identities
            .entry(entities::identity(&e.stem))
            .or_insert_with(|| k.clone());
        r.identities.entry(entities::identity(&e.name)).or_insert(k);
    }
    for (f, e) in &entities {
        r.entity(f, e);
    }
    r.unused_aliases();
    r.dated(&store.join("facts"), false);
    for f in files(&store.join("corrections"), "md") {
        r.memory(&f, None, false);
    }
    r.dated(&store.join("archive"), true);
    r.dated(&store.join("artifacts"), false);
    r.profile(&store.join("profile.md"));
    for (sub, why) in NOT_READ {
        let p = store.join(sub);
        if p.is_dir() {
            r.d.note(format!("{}/: not imported ({why})", r.d.rel(&p)));
        }
    }
    r.resolve();
    r.finish_user();
    r.d
}

fn is_store(p: &Path) -> bool {
    p.join("facts").is_dir() || p.join("entities").is_dir() || p.join("profile.md").is_file()
}

struct Reader {
    d: Draft,
    store: PathBuf,
    /// The user (type, name); whether it was named; where first needed.
    user: (String, String),
    user_given: bool,
    /// Whether the user was drafted by the reader of the workspace
    /// holding the store (filed by it).
    user_drafted: bool,
    user_used: Option<String>,
    /// profile.md's items, with where it is.
    profile: Vec<(String, String)>,
    /// Entity ids (`person-jane-doe`) to (type, name).
    entities: HashMap<String, (String, String)>,
    /// What ids name whatever their type (`entities::identity`) to
    /// (type, name).
    identities: HashMap<String, (String, String)>,
    /// config/aliases.json: canonical name part → variants, with where.
    aliases: BTreeMap<String, (Vec<String>, String)>,
    /// Memory ids to (type, name).
    memories: HashMap<String, (String, String)>,
    /// (type, name) given to a memory → its text, to tell a clash of
    /// names from one memory kept twice.
    names: HashMap<(String, String), String>,
    /// Frontmatter links and supersessions, resolved once every memory is
    /// read: (source, from, predicate, target id, metadata).
    links: Vec<Pending>,
    /// Artifacts: (source, quoted memory id, text, the artifact itself).
    verbatim: Vec<(String, String, String, Concept)>,
}

/// A link from a memory to another named by its id: (source, from,
/// predicate, target id, metadata).
type Pending = (String, (String, String), String, String, Map<String, Value>);

impl Reader {
    fn aliases(&mut self, p: &Path) {
        if !p.is_file() {
            return;
        }
        let Some(t) = self.d.text(p) else { return };
        let r = self.d.rel(p);
        match serde_json::from_str::<Value>(&t) {
            Ok(Value::Object(m)) => {
                for (variant, canonical) in m {
                    match canonical.as_str() {
                        Some(c) => {
                            let e = self
                                .aliases
                                .entry(c.to_string())
                                .or_insert_with(|| (Vec::new(), format!("engram:{r}:1")));
                            e.0.push(label(&variant));
                        }
                        None => self.d.note(format!(
                            "{r}: `{variant}` maps to {canonical}, not a name: skipped"
                        )),
                    }
                }
            }
            Ok(_) => self.d.note(format!(
                "{r}: not a JSON object of variant → name, nothing read"
            )),
            Err(e) => self.d.note(format!("{r}: not JSON ({e}), nothing read")),
        }
    }

    fn unused_aliases(&mut self) {
        for (canonical, (variants, src)) in std::mem::take(&mut self.aliases) {
            self.d.note(format!(
                "{src}: aliases {variants:?} name `{canonical}`, which no entity file is: skipped"
            ));
        }
    }

    /// `facts/`, `archive/`, `artifacts/`: memories in `YYYY-MM-DD/`
    /// folders (and any directly inside).
    fn dated(&mut self, dir: &Path, archived: bool) {
        if !dir.is_dir() {
            return;
        }
        self.stray(dir);
        for f in files(dir, "md") {
            self.memory(&f, None, archived);
        }
        for day in self.d.folders(dir) {
            let d = day
                .file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let date = chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok();
            if date.is_none() {
                let r = self.d.rel(&day);
                self.d.note(format!(
                    "{r}/: the folder name is not a date (YYYY-MM-DD): its memories' times come from their frontmatter"
                ));
            }
            self.stray(&day);
            for f in files(&day, "md") {
                self.memory(&f, date, archived);
            }
        }
    }

    /// Files of a memory folder that are not markdown, reported.
    fn stray(&mut self, dir: &Path) {
        let mut stray: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"))
                    .collect()
            })
            .unwrap_or_default();
        stray.sort();
        for p in stray {
            let r = self.d.rel(&p);
            self.d.note(format!("{r}: not a markdown memory, skipped"));
        }
    }

    fn memory(&mut self, p: &Path, day: Option<chrono::NaiveDate>, archived: bool) {
        let Some(text) = self.d.text(p) else { return };
        let r = self.d.rel(p);
        let stem = stem(p);
        let (front, body, body_line) = match frontmatter(&text) {
            Ok(x) => x,
            Err(why) => {
                if why != "no frontmatter" {
                    self.d.note(format!("{r}: {why}"));
                }
                (Front::default(), text.trim().to_string(), 1)
            }
        };
        if body.is_empty() {
            self.d
                .note(format!("{r}: no text after the frontmatter, skipped"));
            return;
        }
        let src = self.d.at(p, body_line);
        let get = |k: &str| {
            front
                .keys
                .get(k)
                .map(|v| v.0.clone())
                .filter(|v| !v.is_empty())
        };
        for (k, (_, n)) in &front.keys {
            if !KNOWN_KEYS.contains(&k.as_str()) {
                self.d.note(format!(
                    "{r}:{n}: `{k}` is not a key Engram writes: kept as metadata `{}`",
                    snake(k)
                ));
            }
        }
        // what the file name says: <category>-<epoch ms>-<hash>
        let (name_cat, name_ms) = file_name_parts(&stem);
        if front.keys.is_empty() {
            self.d.note(format!(
                "{r}: no frontmatter: {}",
                if name_cat.is_some() {
                    "its category and time come from the file name"
                } else {
                    if day.is_some() {
                        "imported as a fact, its time from its folder"
                    } else {
                        "imported as a fact with no time"
                    }
                }
            ));
        }
        let within = p
            .strip_prefix(&self.store)
            .map(|x| x.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let is_artifact = within.starts_with("artifacts/") || get("artifactType").is_some();
        let category = get("category")
            .or(name_cat.clone())
            .unwrap_or_else(|| {
                if within.starts_with("corrections/") {
                    "correction".into()
                } else {
                    "fact".into()
                }
            })
            .to_ascii_lowercase();
        if !CATEGORIES.contains(&category.as_str()) {
            let at = front.keys.get("category").map_or(1, |v| v.1);
            self.d.note(format!(
                "{r}:{at}: category `{category}` is not one Engram defines: imported as a Fact of that class"
            ));
        }
        let kind = get("memoryKind").map(|k| k.to_ascii_lowercase());
        if let Some(k) = &kind
            && k != "episode"
            && k != "note"
        {
            let at = front.keys.get("memoryKind").map_or(1, |v| v.1);
            self.d.note(format!(
                "{r}:{at}: memoryKind `{k}` is neither episode nor note: read by its category"
            ));
        }
        // times
        let created = match get("created") {
            Some(c) if is_time(&c) => Some(c),
            Some(c) => {
                let at = front.keys.get("created").map_or(1, |v| v.1);
                self.d.note(format!(
                    "{r}:{at}: created `{c}` is not an ISO 8601 time: the time comes from the file name or folder"
                ));
                None
            }
            None => None,
        }
        .or_else(|| name_ms.and_then(ms_time))
        .or_else(|| day.map(|d| format!("{d}T00:00:00Z")));
        let id = get("id").unwrap_or_else(|| stem.clone());

        let ty = if is_artifact {
            "Fact"
        } else if kind.as_deref() == Some("episode") || (kind.is_none() && category == "moment") {
            "Event"
        } else {
            match category.as_str() {
                "preference" => "Preference",
                "commitment" => "Commitment",
                "skill" => "Skill",
                "correction" | "principle" => "Insight",
                _ => "Fact",
            }
        };
        let mut attrs = Map::new();
        match ty {
            "Event" => {
                attrs.insert("event_class".into(), json!(category));
                attrs.insert("content_summary".into(), json!(body));
                if let Some(c) = &created {
                    attrs.insert("start_time".into(), json!(c));
                }
            }
            "Commitment" => {
                attrs.insert("commitment_class".into(), json!("promise"));
                attrs.insert("description".into(), json!(body));
                let status = match get("status").as_deref() {
                    Some("fulfilled" | "resolved" | "done") => "fulfilled",
                    Some("expired") => "expired",
                    Some("cancelled" | "canceled") => "cancelled",
                    _ => "pending",
                };
                attrs.insert("status".into(), json!(status));
            }
            "Skill" => {
                attrs.insert("skill_class".into(), json!("procedure"));
                attrs.insert("maturity".into(), json!("candidate"));
                attrs.insert("description".into(), json!(body));
            }
            "Insight" => {
                let class = if category == "correction" {
                    "lesson_learned"
                } else {
                    "principle"
                };
                attrs.insert("insight_class".into(), json!(class));
                attrs.insert("description".into(), json!(body));
                if category == "correction" {
                    attrs.insert("correction".into(), json!(body));
                }
            }
            "Preference" => {
                attrs.insert("description".into(), json!(body));
                if let Some(c) = &created {
                    attrs.insert("first_observed".into(), json!(c));
                }
            }
            _ => {
                attrs.insert(
                    "fact_class".into(),
                    json!(if is_artifact { "artifact" } else { &category }),
                );
                attrs.insert("description".into(), json!(body));
            }
        }
        if let Some(t) = front.keys.get("tags").map(|v| list(&v.0))
            && !t.is_empty()
        {
            attrs.insert("tags".into(), json!(t));
        }
        let mut meta = self.d.provenance(&src);
        meta.insert("engram_id".into(), json!(id));
        if let Some(c) = &created {
            meta.insert("created_at".into(), json!(c));
        }
        self.frontmatter_meta(&r, &front, &mut meta);
        if archived {
            meta.insert("archived".into(), json!(true));
        }
        // the name: its first sentence; another memory's text under the
        // same name gets its id's last part
        // its first line with a letter or digit, quotes aside
        let line = body
            .lines()
            .find(|l| l.chars().any(char::is_alphanumeric))
            .unwrap_or("");
        let quoted = line.trim_matches(['"', '\u{201c}', '\u{201d}', ' ', '#', '-', '*']);
        let lead = first_sentence(quoted);
        // a procedure is named by what comes before its steps
        let lead = match lead.split_once(": ") {
            Some((head, _)) if ty == "Skill" && head.split_whitespace().count() >= 2 => {
                head.to_string()
            }
            _ => lead,
        };
        let base = short(&lead, NAME_CHARS);
        let base = if base.is_empty() { id.clone() } else { base };
        let norm = normalized(&body);
        let mut name = base.clone();
        if let Some(other) = self.names.get(&(ty.to_string(), name.clone()))
            && *other != norm
        {
            name = format!("{base} ({})", id.rsplit('-').next().unwrap_or(&id));
        }
        self.names.insert((ty.to_string(), name.clone()), norm);
        if self.memories.contains_key(&id) {
            self.d.note(format!(
                "{r}: id `{id}` is also another file's: both imported, links to it reach the first"
            ));
        } else {
            self.memories
                .insert(id.clone(), (ty.to_string(), name.clone()));
        }
        let me = (ty.to_string(), name.clone());
        let concept = Concept {
            ty: ty.to_string(),
            name,
            attrs,
            meta: meta.clone(),
            what: match ty {
                "Insight" => format!("Insight ({category})"),
                "Fact" if is_artifact => "Fact (artifact)".to_string(),
                t => t.to_string(),
            },
            source: src.clone(),
        };
        if is_artifact && let Some(q) = get("sourceMemoryId") {
            self.verbatim.push((src.clone(), q, body.clone(), concept));
            return;
        }
        self.d.concept(concept);
        // links
        let mut lmeta = self.d.provenance(&src);
        // a memory's links hold from when it was written
        if let Some(c) = &created {
            lmeta.insert("created_at".into(), json!(c));
        }
        if let Some(c) = meta.get("confidence") {
            lmeta.insert("confidence".into(), c.clone());
        }
        if let Some(e) = get("entityRef")
            && let Some(to) = self.entity_ref(&e, &src)
        {
            let pred = if ty == "Event" { "mentions" } else { "about" };
            self.d.link(Link {
                from: me.clone(),
                predicate: pred.into(),
                to,
                meta: lmeta.clone(),
                source: src.clone(),
            });
        }
        if ty == "Preference" {
            self.user_used.get_or_insert(src.clone());
            self.d.link(Link {
                from: self.user.clone(),
                predicate: "prefers".into(),
                to: me.clone(),
                meta: lmeta,
                source: src.clone(),
            });
        }
        for (n, l) in &front.links {
            let n = *n;
            let target = l.get("targetId").and_then(Value::as_str).unwrap_or("");
            let kind = l.get("linkType").and_then(Value::as_str).unwrap_or("");
            if target.is_empty() || kind.is_empty() {
                self.d.note(format!(
                    "{r}:{n}: a link without targetId or linkType, skipped"
                ));
                continue;
            }
            let mut m = self.d.provenance(&self.d.at(p, n));
            if let Some(c) = &created {
                m.insert("created_at".into(), json!(c));
            }
            if let Some(s) = l.get("strength").and_then(Value::as_f64) {
                m.insert("strength".into(), json!(s.clamp(0.0, 1.0)));
            }
            if let Some(s) = l.get("reason").and_then(Value::as_str) {
                m.insert("reason".into(), json!(s));
            }
            self.links.push((
                self.d.at(p, n),
                me.clone(),
                predicate_name(kind),
                target.to_string(),
                m,
            ));
        }
        for (k, pred) in [
            ("supersededBy", "superseded_by"),
            ("supersedes", "supersedes"),
        ] {
            if let Some(t) = get(k) {
                let at = front.keys.get(k).map_or(1, |v| v.1);
                self.links
                    .push((self.d.at(p, at), me.clone(), pred.into(), t, Map::new()));
            }
        }
    }

    /// The frontmatter keys other than the text's type and times, as
    /// metadata.
    fn frontmatter_meta(&mut self, r: &str, front: &Front, meta: &mut Map<String, Value>) {
        for (k, (v, n)) in &front.keys {
            let num = || v.parse::<f64>().ok().filter(|x| x.is_finite());
            let keep = format!("engram_{}", snake(k));
            let bad = |what: &str, d: &mut Draft, meta: &mut Map<String, Value>| {
                d.note(format!(
                    "{r}:{n}: {k} `{v}` is not {what}: kept as `{keep}`"
                ));
                meta.insert(keep.clone(), json!(v));
            };
            match k.as_str() {
                "id" | "category" | "memoryKind" | "created" | "tags" | "entityRef" | "links"
                | "supersedes" | "supersededBy" => {}
                "source" => {
                    meta.insert("engram_source".into(), json!(v));
                }
                "updated" => {
                    meta.insert("observed_at".into(), json!(v));
                }
                "confidence" => match num() {
                    Some(c) => {
                        meta.insert("confidence".into(), json!(c.clamp(0.0, 1.0)));
                    }
                    None => bad("a number", &mut self.d, meta),
                },
                "confidenceTier" => {
                    meta.insert("confidence_tier".into(), json!(v));
                    let c = match v.as_str() {
                        "explicit" => Some(0.95),
                        "implied" => Some(0.8),
                        "inferred" => Some(0.6),
                        "speculative" => Some(0.3),
                        _ => None,
                    };
                    match c {
                        Some(c) if !front.keys.contains_key("confidence") => {
                            meta.insert("confidence".into(), json!(c));
                        }
                        Some(_) => {}
                        None => bad(
                            "explicit, implied, inferred or speculative",
                            &mut self.d,
                            meta,
                        ),
                    }
                }
                "importanceScore" => match num() {
                    Some(i) => {
                        meta.insert("importance".into(), json!(i.clamp(0.0, 1.0)));
                    }
                    None => bad("a number", &mut self.d, meta),
                },
                "importanceLevel" => {
                    meta.insert("importance_level".into(), json!(v));
                    let i = match v.as_str() {
                        "critical" => Some(0.95),
                        "high" => Some(0.8),
                        "normal" => Some(0.5),
                        "low" => Some(0.3),
                        "trivial" => Some(0.1),
                        _ => None,
                    };
                    if let Some(i) = i
                        && !front.keys.contains_key("importanceScore")
                    {
                        meta.insert("importance".into(), json!(i));
                    }
                }
                "status" => match v.as_str() {
                    "active" | "" => {}
                    "superseded" => {
                        meta.insert("superseded".into(), json!(true));
                    }
                    "archived" => {
                        meta.insert("archived".into(), json!(true));
                    }
                    // a commitment's own status is an attribute
                    "fulfilled" | "resolved" | "done" | "expired" | "cancelled" | "canceled" => {}
                    _ => {
                        self.d.note(format!(
                            "{r}:{n}: status `{v}` is not active, superseded or archived: kept as `engram_status`"
                        ));
                        meta.insert("engram_status".into(), json!(v));
                    }
                },
                "supersededAt" => {
                    meta.insert("superseded_at".into(), json!(v));
                }
                "archivedAt" => {
                    meta.insert("archived_at".into(), json!(v));
                }
                "expiresAt" => {
                    if is_time(v) {
                        meta.insert("expires_at".into(), json!(v));
                    } else {
                        self.d.note(format!(
                            "{r}:{n}: expiresAt `{v}` is not an ISO 8601 time: kept as `engram_expires_at`, it expires nothing"
                        ));
                        meta.insert("engram_expires_at".into(), json!(v));
                    }
                }
                "accessCount" => match v.parse::<i64>() {
                    Ok(a) => {
                        meta.insert("access_count".into(), json!(a.max(0)));
                    }
                    Err(_) => bad("a count", &mut self.d, meta),
                },
                "lastAccessed" => {
                    meta.insert("last_accessed".into(), json!(v));
                }
                "policyClass" => {
                    meta.insert("policy_class".into(), json!(v));
                    if v == "protected" {
                        meta.insert("pinned".into(), json!(true));
                    }
                }
                "importanceReasons" | "importanceKeywords" | "lineage" | "intentEntityTypes" => {
                    meta.insert(snake(k), json!(list(v)));
                }
                // (what extraction read off the text: `{"tool": "curl"}`)
                "structuredAttributes" => {
                    let v = serde_json::from_str::<Value>(v)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!(v));
                    meta.insert(snake(k), v);
                }
                "heatScore" | "decayScore" | "chunkIndex" | "chunkTotal" => {
                    meta.insert(snake(k), num().map_or_else(|| json!(v), |x| json!(x)));
                }
                _ => {
                    meta.insert(snake(k), json!(v));
                }
            }
        }
    }

    fn profile(&mut self, p: &Path) {
        if !p.is_file() {
            return;
        }
        let Some(text) = self.d.text(p) else { return };
        let r = self.d.rel(p);
        let mut section = String::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if let Some(h) = t.strip_prefix("## ") {
                section = h.trim().to_string();
            } else if let Some(b) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
                let b = b.trim();
                if b.is_empty() {
                    continue;
                }
                let item = if section.is_empty() {
                    b.to_string()
                } else {
                    format!("{section}: {b}")
                };
                self.profile.push((item, self.d.at(p, i + 1)));
            } else if t.is_empty() || t.starts_with("# ") || t.starts_with("*Last updated") {
            } else {
                // a line of prose is an item as a bullet is
                let item = if section.is_empty() {
                    t.to_string()
                } else {
                    format!("{section}: {t}")
                };
                self.profile.push((item, self.d.at(p, i + 1)));
            }
        }
        if self.profile.is_empty() {
            self.d.note(format!("{r}: no bullets, nothing read"));
        } else {
            self.user_used.get_or_insert(self.d.at(p, 1));
        }
    }

    /// Frontmatter links, supersessions and artifacts, now that every
    /// memory has its name.
    fn resolve(&mut self) {
        for (src, from, pred, target, mut meta) in std::mem::take(&mut self.links) {
            let Some(to) = self.memories.get(&target).cloned() else {
                self.d.note(format!(
                    "{src}: `{target}` is not a memory in the folder: its {pred} link is skipped"
                ));
                continue;
            };
            match pred.as_str() {
                // one element saying it replaces another: metadata on
                // both, as a contradiction the sleep cycle resolved
                "superseded_by" | "supersedes" => {
                    let (old, new) = if pred == "superseded_by" {
                        (from, to)
                    } else {
                        (to, from)
                    };
                    self.d.concept(Concept {
                        ty: old.0.clone(),
                        name: old.1.clone(),
                        attrs: Map::new(),
                        meta: [
                            ("superseded".to_string(), json!(true)),
                            (
                                "superseded_by".to_string(),
                                json!(format!("{}: {}", new.0, new.1)),
                            ),
                        ]
                        .into_iter()
                        .collect(),
                        what: old.0.clone(),
                        source: src.clone(),
                    });
                    self.d.concept(Concept {
                        ty: new.0.clone(),
                        name: new.1.clone(),
                        attrs: Map::new(),
                        meta: [(
                            "supersedes".to_string(),
                            json!(format!("{}: {}", old.0, old.1)),
                        )]
                        .into_iter()
                        .collect(),
                        what: new.0.clone(),
                        source: src.clone(),
                    });
                }
                _ => {
                    meta.insert("source".into(), json!(src));
                    self.d.link(Link {
                        from,
                        predicate: pred,
                        to,
                        meta,
                        source: src,
                    });
                }
            }
        }
        for (src, quoted, text, artifact) in std::mem::take(&mut self.verbatim) {
            match self.memories.get(&quoted).cloned() {
                Some((ty, name)) => {
                    let mut attrs = Map::new();
                    attrs.insert("verbatim".into(), json!(text));
                    let mut meta = Map::new();
                    meta.insert("verbatim_source".into(), json!(src));
                    self.d.concept(Concept {
                        ty: ty.clone(),
                        name,
                        attrs,
                        meta,
                        what: ty,
                        source: src,
                    });
                }
                None => {
                    self.d.note(format!(
                        "{src}: quotes `{quoted}`, which is not in the folder: imported as a Fact"
                    ));
                    self.d.concept(artifact);
                }
            }
        }
    }

    /// The user, when preferences or profile.md need one.
    fn finish_user(&mut self) {
        let Some(first) = self.user_used.clone() else {
            return;
        };
        let (ty, name) = self.user.clone();
        let mut attrs = Map::new();
        if !self.profile.is_empty() {
            let items: Vec<String> = self.profile.iter().map(|p| p.0.clone()).collect();
            attrs.insert("behavior_preferences".into(), json!(items));
        }
        let meta = if self.user_drafted {
            Map::new()
        } else if self.user_given {
            self.d.elsewhere(&ty, &name);
            Map::new()
        } else {
            self.d.note(format!(
                "{first}: an Engram store does not name its user: preferences and profile.md are `Person \"{name}\"`'s (`--user NAME` names one)"
            ));
            attrs.insert("relationship_to_self".into(), json!("user"));
            let mut m = self.d.provenance(&first);
            m.insert("memory_tier".into(), json!("core"));
            m.insert("pinned".into(), json!(true));
            m
        };
        if attrs.is_empty() && meta.is_empty() {
            return;
        }
        let source = self.profile.first().map_or(first.clone(), |p| p.1.clone());
        self.d.concept(Concept {
            ty,
            name,
            attrs,
            meta,
            what: "Person (the user)".into(),
            source,
        });
    }
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// `preference-1738789200000-c3d4` → (`preference`, 1738789200000).
fn file_name_parts(stem: &str) -> (Option<String>, Option<i64>) {
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() >= 3
        && parts[0].chars().all(|c| c.is_ascii_alphabetic())
        && let Ok(ms) = parts[1].parse::<i64>()
    {
        return (Some(parts[0].to_ascii_lowercase()), Some(ms));
    }
    (None, None)
}

fn ms_time(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

fn is_time(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
        || chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
        || chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// `jane-doe` → `Jane Doe`.
fn label(part: &str) -> String {
    part.split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(type_name)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lower case, letters and digits, single spaces (as Engram hashes it).
fn normalized(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
