//! Engram entity files (`entities/<type>-<name>.md`) as concepts, and
//! their `## Connected to` lines as links.
//!
//! - An entity's type is its file's `**Type:**` line, else the type its
//!   id starts with when that is one of Engram's entity types
//!   ([`ENTITY_TYPES`]); an id that starts with anything else
//!   (`ai-sales-agent`) is a name, never a type.
//! - Files whose ids name one thing under several types (`engram`,
//!   `project-engram`, `tool-engram`) are one concept; the other ids are
//!   its `aliases`. A person is one only with a person (or an untyped id).
//! - A connection's label maps onto a small vocabulary of predicates
//!   ([`relation`]), the label kept as the link's `label`; Engram writes
//!   each relationship twice, the second as `<label> (reverse)` on the
//!   other entity: that one is the same link read from its other end.
//! - Every link carries its time: when the entity file last changed
//!   (`updated`), the latest time the file says the link held.

use super::frontmatter::{Front, frontmatter, snake};
use super::{Reader, label, stem};
use crate::import::draft::{Concept, Link, wiki_links};
use crate::import::predicate_name;
use serde_json::{Map, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The entity types Engram writes (its schema's, and the older
/// `topic`, `organization`, `team`), as the first word of an id.
pub const ENTITY_TYPES: [&str; 10] = [
    "person",
    "project",
    "tool",
    "company",
    "place",
    "other",
    "topic",
    "organization",
    "team",
    "entity",
];

/// The sections of an entity file Engram writes.
const SECTIONS: [&str; 8] = [
    "summary",
    "synthesis",
    "facts",
    "timeline",
    "connected to",
    "activity",
    "aliases",
    "beliefs",
];

/// The predicates connections map onto, each with the phrases (whole
/// words of a label, lower case) that say it, and the phrases that say
/// it from the other end (`used by` is `uses` reversed). Checked in
/// order, reversed phrases first; a label no phrase matches is
/// `related_to`.
const VOCABULARY: [(&str, &[&str], &[&str]); 11] = [
    (
        "works_at",
        &[
            "works at",
            "works for",
            "employed by",
            "employed at",
            "employee of",
            "worked at",
            "worked for",
        ],
        &["employs", "employer of"],
    ),
    (
        "works_with",
        &[
            "works with",
            "worked with",
            "collaborates with",
            "collaborator",
            "colleague",
            "teammate",
            "coworker",
            "partner",
            "partners with",
        ],
        &[],
    ),
    (
        "manages",
        &[
            "manages",
            "leads",
            "supervises",
            "manager of",
            "lead of",
            "runs",
        ],
        &[
            "managed by",
            "led by",
            "reports to",
            "run by",
            "supervised by",
        ],
    ),
    (
        "created",
        &[
            "created",
            "founded",
            "authored",
            "author of",
            "wrote",
            "built",
            "made",
            "creator of",
            "founder of",
        ],
        &[
            "created by",
            "founded by",
            "authored by",
            "written by",
            "built by",
            "made by",
        ],
    ),
    (
        "works_on",
        &[
            "works on",
            "working on",
            "worked on",
            "contributes to",
            "contributor to",
            "develops",
            "developing",
            "maintains",
            "maintainer of",
            "builds",
            "building",
        ],
        &["developed by", "maintained by"],
    ),
    (
        "depends_on",
        &["depends on", "requires", "relies on", "dependency"],
        &["required by", "dependency of"],
    ),
    (
        "uses",
        &[
            "uses",
            "using",
            "used",
            "built with",
            "runs on",
            "powered by",
            "integrates with",
            "integrated with",
            "deployed on",
            "hosted on",
        ],
        &["used by", "used in", "hosts"],
    ),
    (
        "part_of",
        &[
            "part of",
            "belongs to",
            "member of",
            "component of",
            "module of",
            "subproject of",
            "feature of",
            "plugin for",
            "plugin of",
        ],
        &[
            "contains",
            "includes",
            "has member",
            "has part",
            "consists of",
        ],
    ),
    ("owns", &["owns", "owner of", "has"], &["owned by"]),
    (
        "located_in",
        &[
            "located in",
            "lives in",
            "based in",
            "located at",
            "lives at",
            "headquartered in",
        ],
        &["location of", "home of"],
    ),
    (
        "knows",
        &[
            "knows", "friend", "met", "family", "spouse", "wife", "husband", "married", "sibling",
            "brother", "sister", "parent", "mother", "father", "son", "daughter", "child",
        ],
        &[],
    ),
];

/// The predicate a connection's label says, and whether the label says
/// it from the other end (`used by`: the target uses the entity).
pub fn relation(label: &str) -> (&'static str, bool) {
    let words = format!(
        " {} ",
        label
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let says = |p: &&str| words.contains(&format!(" {p} "));
    for (pred, _, reversed) in VOCABULARY {
        if reversed.iter().any(says) {
            return (pred, true);
        }
    }
    for (pred, forward, _) in VOCABULARY {
        if forward.iter().any(says) {
            return (pred, false);
        }
    }
    ("related_to", false)
}

/// `project-engram` → (`project`, `engram`); an id whose first word is
/// not an entity type is all name: `ai-sales-agent` → (``,
/// `ai-sales-agent`).
pub fn typed_id(id: &str) -> (&str, &str) {
    match id.split_once('-') {
        Some((p, rest))
            if !rest.is_empty() && ENTITY_TYPES.contains(&p.to_ascii_lowercase().as_str()) =>
        {
            (p, rest)
        }
        _ => ("", id),
    }
}

/// What an id names, whatever its type: its name part, lower case,
/// letters and digits only (`tool-engram`, `Engram`, `en-gram` →
/// `engram`).
pub fn identity(id: &str) -> String {
    typed_id(id.trim())
        .1
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// An entity file, read.
pub struct EntityFile {
    pub stem: String,
    /// Its type and name, from the file (`**Type:**`, `# Name`) or its id.
    pub ty: String,
    pub name: String,
    pub named: bool,
    pub typed: bool,
    pub front: Front,
    /// The text after the frontmatter, and the line it starts on.
    pub body: String,
    pub body_line: usize,
}

impl EntityFile {
    pub fn read(p: &Path, text: &str) -> EntityFile {
        let stem = stem(p);
        let (front, body, body_line) = match frontmatter(text) {
            Ok(x) => x,
            Err(_) => (Front::default(), text.to_string(), 1),
        };
        let mut name = None;
        let mut kind = None;
        for line in body.lines() {
            let t = line.trim();
            if let Some(h) = t.strip_prefix("# ") {
                name.get_or_insert_with(|| h.trim().to_string());
            } else if let Some(v) = t.strip_prefix("**Type:**") {
                kind.get_or_insert_with(|| v.trim().to_string());
            }
        }
        // (a file that gives its type and name in its frontmatter:
        // `type: project`, `name: AgentAds`; the body's `**Type:**` first,
        // the frontmatter's name before its heading, which may carry a
        // mark: `# AgentAds 🤫`)
        let given = |k: &str| {
            front
                .keys
                .get(k)
                .map(|(v, _)| v.trim().trim_matches('"').trim().to_string())
                .filter(|v| !v.is_empty() && !v.starts_with('[') && !v.starts_with('{'))
        };
        let kind = kind.or_else(|| given("type"));
        let name = given("name").or(name);
        let (prefix, rest) = typed_id(&stem);
        EntityFile {
            ty: entity_type(kind.as_deref().unwrap_or(prefix)),
            name: name.clone().unwrap_or_else(|| label(rest)),
            named: name.is_some(),
            typed: kind.is_some() || !prefix.is_empty(),
            stem,
            front,
            body,
            body_line,
        }
    }

    /// When the file says it last changed (frontmatter `updated`, else
    /// `**Updated:**`, else frontmatter `created`).
    fn updated(&self) -> Option<String> {
        let from_front = |k: &str| {
            self.front
                .keys
                .get(k)
                .map(|(v, _)| v.trim_matches('"').to_string())
        };
        from_front("updated")
            .or_else(|| {
                self.body.lines().find_map(|l| {
                    l.trim()
                        .strip_prefix("**Updated:**")
                        .map(|v| v.trim().to_string())
                })
            })
            .or_else(|| from_front("created"))
            .filter(|t| super::is_time(t))
    }
}

/// An Engram entity type as a concept type.
pub fn entity_type(kind: &str) -> String {
    match kind.trim().to_ascii_lowercase().as_str() {
        "person" | "people" => "Person".into(),
        "" | "other" | "entity" => "Entity".into(),
        k => crate::import::type_name(&predicate_name(k).replace('_', " ")).replace(' ', ""),
    }
}

/// Whether files of these types may name one thing: a person is one only
/// with a person or an untyped entity.
fn may_be_one(a: &str, b: &str) -> bool {
    a == b || a == "Entity" || b == "Entity" || (a != "Person" && b != "Person")
}

/// Groups the entity files that name one thing: the first of each group
/// (a typed one before an untyped one, then by id) is the concept, the
/// others' ids its aliases. Returns each file's index of its group's
/// first file.
pub fn groups(files: &[&EntityFile]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| (files[i].ty == "Entity", files[i].stem.clone()));
    let mut head: Vec<usize> = (0..files.len()).collect();
    let mut firsts: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for i in order {
        let key = identity(&files[i].stem);
        let list = firsts.entry(key.clone()).or_default();
        match list
            .iter()
            .find(|&&h| !key.is_empty() && may_be_one(&files[h].ty, &files[i].ty))
        {
            Some(&h) => head[i] = h,
            None => list.push(i),
        }
    }
    head
}

impl Reader {
    /// An entity file as its concept (or, for a file naming the same
    /// thing as another, as more of that concept), and its connections.
    pub(super) fn entity(&mut self, p: &Path, f: &EntityFile) {
        let r = self.d.rel(p);
        let (ty, name) = self
            .entities
            .get(&f.stem)
            .cloned()
            .unwrap_or_else(|| (f.ty.clone(), f.name.clone()));
        let mut section = String::new();
        let mut summary: Vec<String> = Vec::new();
        let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut connected: Vec<(usize, String, String)> = Vec::new();
        let mut outside = 0;
        for (i, line) in f.body.lines().enumerate() {
            let n = f.body_line + i;
            let t = line.trim();
            if t.starts_with("# ") || t.starts_with("**Type:**") || t.starts_with("**Updated:**") {
            } else if let Some(h) = t.strip_prefix("## ") {
                section = h.trim().to_lowercase();
                if !SECTIONS.contains(&section.as_str()) {
                    self.d.note(format!(
                        "{r}:{n}: section `{}` is not one Engram writes: its items kept as `{}`",
                        h.trim(),
                        list_key(h)
                    ));
                }
            } else if let Some(b) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
                let b = b.trim();
                match section.as_str() {
                    "connected to" => match connection(b) {
                        Some((target, label)) => connected.push((n, target, label)),
                        None => {
                            self.d.note(format!(
                                "{r}:{n}: `{b}` is not `[[entity]] — label`: kept in its `connections` as written"
                            ));
                            lists
                                .entry("connections".into())
                                .or_default()
                                .push(b.to_string());
                        }
                    },
                    "" => {
                        self.d.note(format!(
                            "{r}:{n}: a bullet outside any section: kept as one of its facts"
                        ));
                        lists.entry("facts".into()).or_default().push(b.to_string());
                    }
                    s => lists.entry(list_key(s)).or_default().push(b.to_string()),
                }
            } else if t.is_empty() {
            } else if matches!(section.as_str(), "summary" | "synthesis") {
                summary.push(t.to_string());
            } else {
                // prose outside Summary and Synthesis: kept as written
                outside += 1;
                lists.entry("notes".into()).or_default().push(t.to_string());
            }
        }
        if outside > 0 {
            self.d.note(format!(
                "{r}: {outside} line(s) of text outside Summary and the lists: kept in its `notes` as written"
            ));
        }
        if !f.named || !f.typed {
            self.d.note(format!(
                "{r}: no {}: {} from the file name",
                match (f.named, f.typed) {
                    (false, false) => "`# Name` and no type",
                    (false, _) => "`# Name`",
                    _ => "`**Type:**` and its id starts with no entity type",
                },
                match (f.named, f.typed) {
                    (false, false) => "its name comes, as `Entity`,",
                    (false, _) => "its name comes",
                    _ => "it is an `Entity`, its name",
                }
            ));
        }
        let rest = typed_id(&f.stem).1;
        let src = self.d.at(p, 1);
        let mut attrs = Map::new();
        if !summary.is_empty() {
            attrs.insert("description".into(), json!(summary.join(" ")));
        }
        if let Some((more, _)) = self.aliases.remove(rest) {
            lists.entry("aliases".into()).or_default().extend(more);
        }
        // (frontmatter `aliases: ["agent-ads", "ad-network"]`)
        if let Some((v, _)) = f.front.keys.get("aliases") {
            let list = lists.entry("aliases".into()).or_default();
            for a in super::frontmatter::list(v) {
                if !list.contains(&a) {
                    list.push(a);
                }
            }
            if list.is_empty() {
                lists.remove("aliases");
            }
        }
        let merged = (ty.clone(), name.clone()) != (f.ty.clone(), f.name.clone());
        if merged {
            // a file naming the same thing as another: its id and its own
            // name are the concept's aliases
            let list = lists.entry("aliases".into()).or_default();
            list.push(f.stem.clone());
            if f.name != name {
                list.push(f.name.clone());
            }
        }
        for (k, v) in lists {
            attrs.insert(k, json!(v));
        }
        if !merged {
            attrs.insert("engram_id".into(), json!(f.stem));
        }
        let mut meta = self.d.provenance(&src);
        for (k, (v, _)) in &f.front.keys {
            let v = v.trim_matches('"');
            match k.as_str() {
                "created" if super::is_time(v) => {
                    meta.insert("created_at".into(), json!(v));
                }
                "updated" if super::is_time(v) => {
                    meta.insert("observed_at".into(), json!(v));
                }
                // (its type, name and aliases, read above)
                "type" | "name" | "aliases" => {}
                _ => {
                    meta.insert(snake(k), json!(v));
                }
            }
        }
        if !meta.contains_key("observed_at")
            && let Some(u) = f.updated()
        {
            meta.insert("observed_at".into(), json!(u));
        }
        let from = (ty.clone(), name.clone());
        self.d.concept(Concept {
            ty: ty.clone(),
            name,
            attrs,
            meta,
            what: ty,
            source: src,
        });
        let when = f.updated();
        for (n, target, label) in connected {
            let src = self.d.at(p, n);
            let Some(to) = self.entity_ref(&target, &src) else {
                continue;
            };
            let base = label
                .trim()
                .strip_suffix("(reverse)")
                .map(str::trim)
                .unwrap_or(label.trim());
            let (predicate, said_backwards) = relation(base);
            // `(reverse)`: Engram's copy of a link, written on its target
            let backwards = said_backwards != (base.len() < label.trim().len());
            let mut meta = self.d.provenance(&src);
            meta.insert("label".into(), json!(base));
            if let Some(t) = &when {
                meta.insert("created_at".into(), json!(t));
            }
            let (a, b) = if backwards {
                (to, from.clone())
            } else {
                (from.clone(), to)
            };
            self.d.link(Link {
                from: a,
                predicate: predicate.to_string(),
                to: b,
                meta,
                source: src,
            });
        }
    }

    /// The concept an entity id names: an entity file's (by its id, or by
    /// what the id names whatever its type: `ai-sales-agent` finds
    /// `project-ai-sales-agent`), the user's (`user`, or the user's own
    /// name), or, with no file, one created from the id and reported; an
    /// id that names nothing is reported.
    pub(super) fn entity_ref(&mut self, id: &str, src: &str) -> Option<(String, String)> {
        let id = id
            .trim()
            .trim_start_matches("[[")
            .trim_end_matches("]]")
            .trim();
        let id = id.split_once('|').map_or(id, |(a, _)| a.trim());
        if let Some(k) = self.entities.get(id) {
            return Some(k.clone());
        }
        let key = identity(id);
        if let Some(k) = self.identities.get(&key) {
            return Some(k.clone());
        }
        let (prefix, rest) = typed_id(id);
        let user = identity(&self.user.1);
        if (key == "user" || (!user.is_empty() && key == user))
            && matches!(prefix.to_ascii_lowercase().as_str(), "" | "person")
        {
            self.user_used.get_or_insert(src.to_string());
            return Some(self.user.clone());
        }
        let ty = entity_type(prefix);
        let name = label(rest);
        if name.is_empty() {
            self.d.note(format!(
                "{src}: `{id}` names no entity: its link is skipped"
            ));
            return None;
        }
        self.d
            .from_id(&ty, &name, "engram_id", id, src, "no entity file");
        self.entities
            .insert(id.to_string(), (ty.clone(), name.clone()));
        self.identities.insert(key, (ty.clone(), name.clone()));
        Some((ty, name))
    }
}

/// A section's list key: `Key Facts` → `key_facts`; a name with nothing
/// a key can hold (`## ---`) is `notes`.
fn list_key(h: &str) -> String {
    let k = predicate_name(h);
    if k.is_empty() { "notes".into() } else { k }
}

/// `[[project-atlas]] — works on` → (`project-atlas`, `works on`).
fn connection(b: &str) -> Option<(String, String)> {
    let target = wiki_links(b).into_iter().next()?;
    let after = b.split_once("]]")?.1.trim();
    let label = after.trim_start_matches(['—', '–', '-', ':']).trim();
    (!label.is_empty() && !target.is_empty()).then(|| (target, label.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_map_onto_the_vocabulary() {
        assert_eq!(relation("works on"), ("works_on", false));
        assert_eq!(relation("Works on"), ("works_on", false));
        assert_eq!(relation("used by"), ("uses", true));
        assert_eq!(relation("uses"), ("uses", false));
        assert_eq!(relation("created by"), ("created", true));
        assert_eq!(relation("is part of"), ("part_of", false));
        assert_eq!(relation("contains"), ("part_of", true));
        assert_eq!(relation("reports to"), ("manages", true));
        assert_eq!(relation("inspired the naming of"), ("related_to", false));
        assert_eq!(relation("与…合作"), ("related_to", false));
    }

    #[test]
    fn an_id_is_typed_only_by_an_entity_type() {
        assert_eq!(typed_id("project-engram"), ("project", "engram"));
        assert_eq!(typed_id("ai-sales-agent"), ("", "ai-sales-agent"));
        assert_eq!(typed_id("engram"), ("", "engram"));
        assert_eq!(identity("tool-engram"), identity("engram"));
        assert_eq!(identity("project-open-claw"), "openclaw");
        assert_eq!(entity_type("ai"), "Ai");
        assert_eq!(entity_type(""), "Entity");
    }
}
