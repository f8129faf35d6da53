//! What every reader shares: the concepts and links it found, each with
//! the file and line it came from, merged per element and written as a
//! plan of UPSERTs (new concept types and predicates first, then the
//! concepts filed under `Unsorted`, then the links).

use super::Plan;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The largest file a reader takes; a larger one is reported and skipped
/// (a memory's files are notes, and reading one is reading it whole).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Concept types every memory has.
const KNOWN_TYPES: [&str; 7] = [
    "Person",
    "Event",
    "Preference",
    "Insight",
    "Skill",
    "Domain",
    "Commitment",
];

/// A concept to write.
pub struct Concept {
    pub ty: String,
    pub name: String,
    pub attrs: Map<String, Value>,
    pub meta: Map<String, Value>,
    /// What it is, for the report (`Person`, `Insight (critical fact)`).
    pub what: String,
    pub source: String,
}

/// A link to write: (type, name) → (type, name).
pub struct Link {
    pub from: (String, String),
    pub predicate: String,
    pub to: (String, String),
    pub meta: Map<String, Value>,
    pub source: String,
}

/// A reader's findings so far.
pub struct Draft {
    /// The folder read; sources are named relative to it.
    pub root: PathBuf,
    /// `moltbot`, `engram`: the prefix of every source and the `author`.
    pub author: &'static str,
    pub plan: Plan,
    /// Concept types and predicates the files use, with where first seen.
    types: BTreeMap<String, String>,
    predicates: BTreeMap<String, String>,
    concepts: Vec<Concept>,
    links: Vec<Link>,
    /// Concepts the memory may already have (the user named with
    /// `--user`): written without filing them under `Unsorted`.
    elsewhere: Vec<(String, String)>,
    /// The files read so far, so that one is never read twice and none
    /// is passed over as read when it was not.
    read: std::collections::HashSet<PathBuf>,
}

impl Draft {
    pub fn new(root: &Path, author: &'static str) -> Draft {
        Draft {
            root: root.to_path_buf(),
            author,
            plan: Plan {
                source: author.into(),
                ..Default::default()
            },
            types: BTreeMap::new(),
            predicates: BTreeMap::new(),
            concepts: Vec::new(),
            links: Vec::new(),
            elsewhere: Vec::new(),
            read: Default::default(),
        }
    }

    /// `p` relative to the folder read.
    pub fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    }

    /// Why a file is not the folder's own: a symbolic link, or a path that
    /// leads out of the folder (through a linked parent folder).
    fn outside(&self, p: &Path) -> Option<String> {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                return Some("a symbolic link".into());
            }
            Ok(_) => {}
            Err(e) => return Some(format!("cannot be read ({e})")),
        }
        let root = std::fs::canonicalize(&self.root).ok()?;
        match std::fs::canonicalize(p) {
            Ok(c) if c.starts_with(&root) => None,
            Ok(_) => Some("outside the folder (through a linked folder)".into()),
            Err(e) => Some(format!("cannot be read ({e})")),
        }
    }

    /// The sub-folders of a folder, sorted; linked folders are reported and
    /// skipped (an import never leaves the folder it is given).
    pub fn folders(&mut self, dir: &Path) -> Vec<PathBuf> {
        let mut v = Vec::new();
        let mut links = Vec::new();
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.filter_map(Result::ok) {
                match e.file_type() {
                    Ok(t) if t.is_dir() => v.push(e.path()),
                    Ok(t) if t.is_symlink() && e.path().is_dir() => links.push(e.path()),
                    _ => {}
                }
            }
        }
        links.sort();
        for l in links {
            let r = self.rel(&l);
            self.note(format!(
                "{r}/: a symbolic link to a folder: skipped (an import reads only the files inside the folder it is given)"
            ));
        }
        v.sort();
        v
    }

    /// `<author>:<file>:<line>`.
    pub fn at(&self, p: &Path, line: usize) -> String {
        format!("{}:{}:{line}", self.author, self.rel(p))
    }

    /// `source` (the file and line) and `author`.
    pub fn provenance(&self, src: &str) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("source".into(), json!(src));
        m.insert("author".into(), json!(self.author));
        m
    }

    /// Reports what the reader did not understand, or took only in part.
    /// Notes name the file and line without the source prefix.
    pub fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        let prefix = format!("{}:", self.author);
        self.plan
            .note(s.strip_prefix(&prefix).map_or(s.clone(), str::to_string));
    }

    /// The file as text; one that cannot be read or is not UTF-8 is
    /// reported and skipped.
    /// Whether `p` was read by [`Draft::text`] already.
    pub fn was_read(&self, p: &Path) -> bool {
        self.read.contains(p)
    }

    /// Takes back that `p` was read (a reader that found nothing of its
    /// kind in it hands it to another).
    pub fn forget(&mut self, p: &Path) {
        self.read.remove(p);
    }

    /// Whether a file in `dir` or below it was read.
    pub fn read_under(&self, dir: &Path) -> bool {
        self.read.iter().any(|p| p.starts_with(dir))
    }

    pub fn text(&mut self, p: &Path) -> Option<String> {
        if let Some(why) = self.outside(p) {
            let r = self.rel(p);
            self.note(format!(
                "{r}: {why}: skipped (an import reads only the files inside the folder it is given)"
            ));
            return None;
        }
        if let Ok(m) = std::fs::metadata(p)
            && m.len() > MAX_FILE_BYTES
        {
            let r = self.rel(p);
            self.note(format!(
                "{r}: {} MB, larger than the {} MB a file may be: skipped",
                m.len() / (1024 * 1024),
                MAX_FILE_BYTES / (1024 * 1024)
            ));
            return None;
        }
        self.read.insert(p.to_path_buf());
        match std::fs::read(p) {
            Ok(b) => match String::from_utf8(b) {
                Ok(s) => Some(s),
                Err(e) => match decoded(e.as_bytes()) {
                    Some((s, how)) => {
                        let r = self.rel(p);
                        self.note(format!("{r}: {how}"));
                        Some(s)
                    }
                    None => {
                        let r = self.rel(p);
                        self.note(format!("{r}: not UTF-8 text, skipped"));
                        None
                    }
                },
            },
            Err(e) => {
                let r = self.rel(p);
                self.note(format!("{r}: cannot be read ({e}), skipped"));
                None
            }
        }
    }

    /// Adds a concept; one without a type or a name is reported instead
    /// (no file should make an element nobody can name).
    pub fn concept(&mut self, c: Concept) {
        if c.ty.trim().is_empty() || c.name.trim().is_empty() {
            let src = c.source.clone();
            self.note(format!(
                "{src}: an element with no type or no name, skipped"
            ));
            return;
        }
        if !KNOWN_TYPES.contains(&c.ty.as_str()) {
            self.types.entry(c.ty.clone()).or_insert(c.source.clone());
        }
        self.concepts.push(c);
    }

    /// A concept a file names by its id but no file describes: made from
    /// the id (kept as `id_key`), and reported.
    pub fn from_id(&mut self, ty: &str, name: &str, id_key: &str, id: &str, src: &str, why: &str) {
        self.note(format!(
            "{src}: `{id}` has {why}: created as {ty} `{name}` from its id"
        ));
        let mut attrs = Map::new();
        attrs.insert(id_key.into(), json!(id));
        let meta = self.provenance(src);
        self.concept(Concept {
            ty: ty.to_string(),
            name: name.to_string(),
            attrs,
            meta,
            what: ty.to_string(),
            source: src.to_string(),
        });
    }

    /// `(ty, name)` may already be in the memory, filed where it belongs:
    /// what the files say of it is added, it is not filed again.
    pub fn elsewhere(&mut self, ty: &str, name: &str) {
        self.elsewhere.push((ty.to_string(), name.to_string()));
    }

    /// Adds a link; one whose predicate or either end has no name is
    /// reported instead.
    /// Renames a concept drafted as `ty` `from`, and the links drafted
    /// to or from it (the user, named `User` until a later file names
    /// them).
    pub fn rename(&mut self, ty: &str, from: &str, to: &str) {
        let is = |t: &str, n: &str| t == ty && n == from;
        for c in self.concepts.iter_mut().filter(|c| is(&c.ty, &c.name)) {
            c.name = to.to_string();
        }
        for l in &mut self.links {
            for end in [&mut l.from, &mut l.to] {
                if is(&end.0, &end.1) {
                    end.1 = to.to_string();
                }
            }
        }
        for e in self.elsewhere.iter_mut().filter(|e| is(&e.0, &e.1)) {
            e.1 = to.to_string();
        }
    }

    /// Takes back a concept drafted as `ty` `name`, the links drafted to
    /// or from it, and its name from every list attribute `list_key` of
    /// the others (an Event's `participants`).
    pub fn remove(&mut self, ty: &str, name: &str, list_key: &str) {
        let is = |t: &str, n: &str| t == ty && n == name;
        self.concepts.retain(|c| !is(&c.ty, &c.name));
        self.links
            .retain(|l| !is(&l.from.0, &l.from.1) && !is(&l.to.0, &l.to.1));
        for c in &mut self.concepts {
            if let Some(Value::Array(a)) = c.attrs.get_mut(list_key) {
                a.retain(|v| v.as_str() != Some(name));
            }
        }
    }

    /// The concepts drafted so far.
    pub fn concepts(&self) -> &[Concept] {
        &self.concepts
    }

    /// The attributes of the first concept drafted as `ty` `name`, to add
    /// to what a later file says of it.
    pub fn attrs_of(&mut self, ty: &str, name: &str) -> Option<&mut Map<String, Value>> {
        self.concepts
            .iter_mut()
            .find(|c| c.ty == ty && c.name == name)
            .map(|c| &mut c.attrs)
    }

    pub fn link(&mut self, l: Link) {
        if [&l.predicate, &l.from.1, &l.to.1]
            .iter()
            .any(|s| s.trim().is_empty())
        {
            let src = l.source.clone();
            self.note(format!(
                "{src}: a link with no predicate or an end with no name, skipped"
            ));
            return;
        }
        if l.from == l.to {
            let src = l.source.clone();
            self.note(format!(
                "{src}: a `{}` link from {} `{}` to itself, skipped",
                l.predicate, l.from.0, l.from.1
            ));
            return;
        }
        self.predicates
            .entry(l.predicate.clone())
            .or_insert(l.source.clone());
        self.links.push(l);
    }

    /// The plan: new types and predicates first (declared in the
    /// CoreSchema domain, as the memory's own are), then the concepts (one
    /// UPSERT each, filed under Unsorted), then the links.
    pub fn finish(mut self) -> Plan {
        for (t, src) in std::mem::take(&mut self.types) {
            self.plan.write(
                "concept type",
                &src,
                r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: :name} SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "CoreSchema"}) } } } WITH METADATA { source: :source, author: :author }"#,
                json!({"name": t, "source": src, "author": self.author}),
            );
        }
        for (p, src) in std::mem::take(&mut self.predicates) {
            self.plan.write(
                "predicate",
                &src,
                r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: :name} SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "CoreSchema"}) } } } WITH METADATA { source: :source, author: :author }"#,
                json!({"name": p, "source": src, "author": self.author}),
            );
        }
        // one write per element: what several files say of one concept or
        // link is merged (the first file wins a disagreement, the others
        // are listed in `also_from`), so a second import changes nothing
        let mut concepts: Vec<Concept> = Vec::new();
        let mut at: HashMap<(String, String), usize> = HashMap::new();
        for c in std::mem::take(&mut self.concepts) {
            match at.get(&(c.ty.clone(), c.name.clone())) {
                Some(&i) => {
                    let first = &mut concepts[i];
                    merge(&mut first.attrs, &mut first.meta, c.attrs, c.meta)
                }
                None => {
                    at.insert((c.ty.clone(), c.name.clone()), concepts.len());
                    concepts.push(c);
                }
            }
        }
        let mut links: Vec<Link> = Vec::new();
        let mut lat: HashMap<(String, String, String, String, String), usize> = HashMap::new();
        for l in std::mem::take(&mut self.links) {
            let k = (
                l.from.0.clone(),
                l.from.1.clone(),
                l.predicate.clone(),
                l.to.0.clone(),
                l.to.1.clone(),
            );
            match lat.get(&k) {
                Some(&i) => merge(&mut Map::new(), &mut links[i].meta, Map::new(), l.meta),
                None => {
                    lat.insert(k, links.len());
                    links.push(l);
                }
            }
        }
        for c in concepts {
            let mut params = Map::new();
            params.insert("name".into(), json!(c.name));
            let attrs = assignments(&c.attrs, "a", &mut params);
            let meta = assignments(&c.meta, "m", &mut params);
            let filed =
                if c.name == "$self" || self.elsewhere.contains(&(c.ty.clone(), c.name.clone())) {
                    String::new()
                } else if c.meta.get("expires_at").is_some_and(|v| !v.is_null()) {
                    // filed while it lives: a memory that expires keeps its
                    // domain until it is reclaimed itself (the block's TTL
                    // would otherwise reach the link, which reclamation then
                    // takes first, leaving it in no domain)
                    UNSORTED[0].to_string()
                } else {
                    UNSORTED[1].to_string()
                };
            let meta = if meta.is_empty() {
                String::new()
            } else {
                format!(" WITH METADATA {{ {meta} }}")
            };
            let text = format!(
                "UPSERT {{ CONCEPT ?c {{ {{type: {}, name: :name}}{}{filed} }}{meta} }}",
                json!(c.ty),
                if attrs.is_empty() {
                    String::new()
                } else {
                    format!(" SET ATTRIBUTES {{ {attrs} }}")
                },
            );
            self.plan
                .write(&c.what, &c.source, &text, Value::Object(params));
        }
        for l in links {
            let mut params = Map::new();
            params.insert("a".into(), json!(l.from.1));
            params.insert("b".into(), json!(l.to.1));
            let meta = assignments(&l.meta, "m", &mut params);
            let text = format!(
                "UPSERT {{ CONCEPT ?a {{ {{type: {}, name: :a}} SET PROPOSITIONS {{ ({}, {{type: {}, name: :b}}) WITH METADATA {{ {meta} }} }} }} }}",
                json!(l.from.0),
                json!(l.predicate),
                json!(l.to.0),
            );
            self.plan.write(
                &format!("link {}", l.predicate),
                &l.source,
                &text,
                Value::Object(params),
            );
        }
        self.plan
    }
}

/// At most this many bytes of a UTF-8 note may be another encoding's
/// (read as Windows-1252, said); more, and the file is not UTF-8 text.
pub const STRAY_BYTES_MAX: usize = 64;

/// A note that is not UTF-8 as text, when it can be read without
/// guessing, and how: one saved as UTF-16 (its byte-order mark says so),
/// or a UTF-8 note with a few bytes a Windows tool wrote into it (`today\x92s`,
/// Windows-1252's apostrophe), each read as Windows-1252 reads it.
pub fn decoded(b: &[u8]) -> Option<(String, String)> {
    for (bom, enc) in [
        (&[0xFF, 0xFE][..], encoding_rs::UTF_16LE),
        (&[0xFE, 0xFF][..], encoding_rs::UTF_16BE),
    ] {
        if b.starts_with(bom) {
            let (s, _, bad) = enc.decode(b);
            return (!bad).then(|| {
                (
                    s.into_owned(),
                    format!("saved as {}, read as such", enc.name()),
                )
            });
        }
    }
    let mut out = String::with_capacity(b.len());
    let mut rest = b;
    let mut stray = 0;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (ok, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(ok).ok()?);
                let n = e.error_len().unwrap_or(after.len()).max(1);
                stray += n;
                if stray > STRAY_BYTES_MAX {
                    return None;
                }
                let (s, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(&after[..n]);
                out.push_str(&s);
                rest = &after[n..];
            }
        }
    }
    Some((
        out,
        format!(
            "{stray} byte{} not UTF-8 (a Windows tool's), read as Windows-1252",
            if stray == 1 { "" } else { "s" }
        ),
    ))
}

/// Adds what another file says of an element: keys it lacks, and the
/// other file's source in `also_from`.
pub fn merge(
    attrs: &mut Map<String, Value>,
    meta: &mut Map<String, Value>,
    more_attrs: Map<String, Value>,
    more_meta: Map<String, Value>,
) {
    for (k, v) in more_attrs {
        attrs.entry(k).or_insert(v);
    }
    if let Some(src) = more_meta.get("source").cloned()
        && meta.get("source") != Some(&src)
    {
        let also = meta.entry("also_from").or_insert_with(|| json!([]));
        if let Some(a) = also.as_array_mut()
            && !a.contains(&src)
        {
            a.push(src);
        }
    }
    for (k, v) in more_meta {
        meta.entry(k).or_insert(v);
    }
}

/// `key: :p0, other: :p1`, the values put into `params`.
fn assignments(m: &Map<String, Value>, prefix: &str, params: &mut Map<String, Value>) -> String {
    m.iter()
        .enumerate()
        .map(|(i, (k, v))| {
            let p = format!("{prefix}{i}");
            params.insert(p.clone(), v.clone());
            // quoted, so a key in any script (`创建时间`, `café`) is a key
            format!("{}: :{p}", Value::String(k.clone()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `.ext` files of a folder, sorted (none if it is missing). A
/// symbolic link is listed too, so that reading it reports and skips it
/// (`Draft::text`).
pub fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| {
                    e.file_type()
                        .is_ok_and(|t| t.is_file() || (t.is_symlink() && !e.path().is_dir()))
                })
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == ext))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The `[[id]]`s in a text.
pub fn wiki_links(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(a) = rest.find("[[") {
        let after = &rest[a + 2..];
        match after.find("]]") {
            Some(b) => {
                out.push(after[..b].trim().to_string());
                rest = &after[b + 2..];
            }
            None => break,
        }
    }
    out
}

/// Up to the first `.`, `!` or `?` followed by a space or the end (so
/// `v2.3` and `e.g.` stay whole).
pub fn first_sentence(s: &str) -> String {
    let s = s.trim();
    let mut prev_end = false;
    for (i, c) in s.char_indices() {
        if prev_end && c.is_whitespace() {
            return s[..i].trim_end_matches(['.', '!', '?']).trim().to_string();
        }
        prev_end = matches!(c, '.' | '!' | '?');
    }
    s.trim_end_matches(['.', '!', '?']).trim().to_string()
}

/// About `n` characters, cut at a word: at most `n`, or, when the cut
/// falls inside a long word that ends within [`SHORT_WORD_SLACK`] more,
/// that word whole.
pub fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.trim().to_string();
    }
    let cut: String = s.chars().take(n).collect();
    match cut.rfind(' ') {
        Some(i) if i > n / 2 => cut[..i].trim().to_string(),
        // a long word (a path, `agent-system/tools/check-consistency.py`)
        // is kept whole when it ends soon after, not cut inside (a script
        // written without spaces has no words to end: cut at the length)
        _ => {
            let tail: String = s
                .chars()
                .skip(n)
                .take_while(|c| !c.is_whitespace() && (*c as u32) < 0x3000)
                .take(SHORT_WORD_SLACK + 1)
                .collect();
            let len = tail.chars().count();
            let ends =
                len <= SHORT_WORD_SLACK && s.chars().nth(n + len).is_none_or(char::is_whitespace);
            if ends {
                format!("{cut}{tail}")
                    .trim()
                    .trim_end_matches([',', ';', ':'])
                    .to_string()
            } else {
                cut.trim().to_string()
            }
        }
    }
}

/// Characters a name cut at [`short`]'s length may run on to end the
/// word it is in.
const SHORT_WORD_SLACK: usize = 24;

/// How the readers file a concept under `Unsorted` (the link an import
/// leaves out when the concept was filed elsewhere since).
pub const UNSORTED: [&str; 2] = [
    r#" SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Unsorted"}) WITH METADATA { expires_at: null } }"#,
    r#" SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Unsorted"}) }"#,
];

#[cfg(test)]
mod tests {
    use super::decoded;

    /// A note a Windows tool wrote a byte into, or saved as UTF-16, is
    /// read; a file of another encoding throughout is not guessed at.
    #[test]
    fn a_stray_windows_byte_or_utf16_is_read_and_said() {
        let (s, how) = decoded(b"today\x92s macro watchouts\n").expect("read");
        assert_eq!(s, "today\u{2019}s macro watchouts\n");
        assert!(how.contains("1 byte not UTF-8"), "{how}");
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Résumé ✓".encode_utf16().flat_map(|u| u.to_le_bytes()))
            .collect();
        assert_eq!(decoded(&utf16).expect("read").0, "Résumé ✓");
        // (GBK throughout: many bytes, not guessed)
        let gbk: Vec<u8> = std::iter::repeat_n([0xC4u8, 0xE3], 100).flatten().collect();
        assert!(decoded(&gbk).is_none());
        // (a file cut inside a character: its end read as Windows-1252)
        assert_eq!(decoded(b"caf\xC3").expect("read").0, "caf\u{C3}");
    }
    use super::short;

    #[test]
    fn a_name_is_cut_between_words_and_a_long_word_is_kept_whole() {
        assert_eq!(short("short enough", 60), "short enough");
        assert_eq!(
            short(
                "Doanh approved next step: update integration roadmap to include Phase 5",
                56
            ),
            "Doanh approved next step: update integration roadmap to"
        );
        // the cut falls inside a path that ends soon after: kept whole
        assert_eq!(
            short(
                "Doanh approved creating `agent-system/tools/check-consistency.py`, running it",
                60
            ),
            "Doanh approved creating `agent-system/tools/check-consistency.py`"
        );
        // a word that runs on and on is cut at the length
        let long = format!("see {}", "x".repeat(200));
        assert_eq!(short(&long, 20).chars().count(), 20);
        // no panic on scripts without spaces
        assert_eq!(short("阿杰設計偏好不喜歡大面積強調色", 5), "阿杰設計偏");
    }
}
