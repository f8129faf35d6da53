//! Bringing memories kept elsewhere into KIP: a reader per source turns its
//! files into a plan (KIP commands with their parameters, each carrying the
//! file and line it came from), and `apply` runs the plan as one audited
//! group (`import:<source>`), so `somnus rollback --group` undoes it. Every
//! write is an UPSERT of what the files say, so importing the same folder
//! again changes nothing. What a reader does not understand is reported,
//! never dropped silently.

pub mod draft;
pub mod engram;
pub mod markdown;
pub mod moltbot;
pub mod overwrites;

use crate::audit::Who;
use crate::engine::Nexus;
use crate::kip::{self, KipResult};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// One write of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    pub text: String,
    pub params: Map<String, Value>,
    /// The file and line it came from (`memory/episodes/2026-02-02.md:3`).
    pub source: String,
    /// What it writes, for the report (`Event`, `link develops`).
    pub what: String,
}

/// What a reader made of a folder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub source: String,
    pub writes: Vec<Write>,
    /// Shapes it did not understand, or understood only in part, each with
    /// its file and line.
    pub notes: Vec<String>,
}

impl Plan {
    pub fn write(&mut self, what: &str, source: &str, text: &str, params: Value) {
        self.writes.push(Write {
            text: text.to_string(),
            params: params.as_object().cloned().unwrap_or_default(),
            source: source.to_string(),
            what: what.to_string(),
        });
    }

    pub fn note(&mut self, s: impl Into<String>) {
        self.notes.push(s.into());
    }
}

/// What an import did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub source: String,
    pub group: String,
    pub dry_run: bool,
    /// Writes planned, by what they write.
    pub planned: BTreeMap<String, usize>,
    pub created: u64,
    pub updated: u64,
    /// Writes the memory refused (each named in `notes` with its file,
    /// line and error), skipped while the rest was imported.
    pub skipped: usize,
    /// Writes held back because they would replace a value someone else
    /// wrote since (each named in `held`): proposed for review as items of
    /// `proposal`.
    pub proposed: usize,
    pub proposal: Option<i64>,
    /// Held-back writes: what each would replace, and where it went
    /// (an item of the proposal, or left out: proposed already, or
    /// rejected before and unchanged since).
    pub held: Vec<String>,
    /// Values the memory changed since an earlier import that the files
    /// still say as they were: the memory's are kept, each named here.
    pub kept: Vec<String>,
    pub notes: Vec<String>,
}

/// Runs the plan as one group `import:<source>`. A write the memory
/// refuses (a value it cannot hold, an element that breaks one of its
/// rules) is rolled back alone, named with its file, line and error in
/// the notes, and skipped; a failure of the memory itself (a timeout, an
/// internal error) or a cancel leaves nothing written. A dry run runs it
/// the same way and rolls it back.
pub fn apply(nx: &mut Nexus, plan: &Plan, who: &Who, dry_run: bool) -> KipResult<Outcome> {
    apply_with(nx, plan, who, dry_run, &mut |_, _| {}, None)
}

/// [`apply`], telling `progress` (writes done, writes planned) as it goes
/// and stopping, with nothing written, when `cancel` is set.
pub fn apply_with(
    nx: &mut Nexus,
    plan: &Plan,
    who: &Who,
    dry_run: bool,
    progress: &mut dyn FnMut(usize, usize),
    cancel: Option<&AtomicBool>,
) -> KipResult<Outcome> {
    let group = format!("import:{}", plan.source);
    let mut out = Outcome {
        source: plan.source.clone(),
        group: group.clone(),
        dry_run,
        notes: plan.notes.clone(),
        ..Default::default()
    };
    for w in &plan.writes {
        *out.planned.entry(w.what.clone()).or_default() += 1;
    }
    let total = plan.writes.len();
    let mut counts = (0u64, 0u64);
    let mut skipped = Vec::new();
    let mut held = Vec::new();
    let mut kept_lines = Vec::new();
    let mut staged = (None, 0usize, Vec::new());
    let res = nx.atomically(&group, |nx| {
        let deleted = overwrites::Deleted::read(nx.db(), &group)?;
        progress(0, total);
        for (i, w) in plan.writes.iter().enumerate() {
            if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                return Err(kip::KipError::new(
                    kip::ErrorCode::ExecutionTimeout,
                    format!(
                        "the import was cancelled after {i} of {total} writes: nothing was written"
                    ),
                ));
            }
            let at = |e: kip::KipError| {
                let msg = format!("{} (from {}): {}", e.code, w.source, e.message);
                kip::KipError::new(e.code, msg)
            };
            // a type or predicate the memory already has is left as it
            // is (its definition and where it came from are its own)
            if let Some(meta) = match w.what.as_str() {
                "concept type" => Some("$ConceptType"),
                "predicate" => Some("$PropositionType"),
                _ => None,
            } && known(nx, meta, &w.params)
            {
                progress(i + 1, total);
                continue;
            }
            let mut who = who.clone();
            who.reason = Some(format!("imported from {}", w.source));
            let mut w = std::borrow::Cow::Borrowed(w);
            let mut kept = Vec::new();
            // a write runs in a savepoint of its own; when it would replace
            // a value someone else wrote since (or bring back what someone
            // deleted), it is undone: values the file still says as it
            // did when imported are left as the memory has them, the rest
            // is proposed for review
            let (done, over) = loop {
                nx.db().savepoint(WRITE_SAVEPOINT)?;
                let done = kip::parse(&w.text, &w.params)
                    .and_then(|cmd| nx.exec_with_effects(&cmd, &w.text, &who));
                // only a write that changed what was there (or created
                // what someone deleted) can replace another's value
                let over = match &done {
                    Ok((_, Some(fx)))
                        if fx["updated"].as_u64().unwrap_or(0) > 0
                            || fx["deleted"].as_u64().unwrap_or(0) > 0
                            || !deleted.is_empty() =>
                    {
                        match last_entry(nx, &group)? {
                            Some(e) => overwrites::of_entry(nx.db(), e, &group, &deleted)?,
                            None => vec![],
                        }
                    }
                    _ => vec![],
                };
                nx.db()
                    .release(WRITE_SAVEPOINT, done.is_ok() && over.is_empty())?;
                let stale: Vec<&overwrites::Overwrite> =
                    over.iter().filter(|o| o.stale_file).collect();
                if kept.is_empty()
                    && !stale.is_empty()
                    && let Some(again) = overwrites::keeping(&w, &stale)
                {
                    kept = stale.iter().map(|o| o.describe()).collect();
                    match again {
                        Some(again) => {
                            w = std::borrow::Cow::Owned(again);
                            continue;
                        }
                        None => break (None, vec![]),
                    }
                }
                break (Some(done), over);
            };
            let Some(done) = done else {
                // about what someone deleted since: nothing is written
                for k in kept {
                    kept_lines.push(format!("{}: {k}", w.source));
                }
                progress(i + 1, total);
                continue;
            };
            if !over.is_empty() {
                // a stale value that could not be kept is asked about too
                let over = over
                    .into_iter()
                    .map(|o| overwrites::Overwrite {
                        stale_file: false,
                        ..o
                    })
                    .collect();
                held.push((w.into_owned(), over));
                progress(i + 1, total);
                continue;
            }
            for k in kept {
                kept_lines.push(format!("{}: {k}", w.source));
            }
            let effects = match done {
                Ok((_, effects)) => effects,
                // one element the memory refuses (its savepoint rolled
                // back alone) is reported and skipped; what stops the
                // whole import is a failure of the memory itself
                // a link to what someone deleted since an earlier import
                // (merged, reclaimed) is left out with it
                Err(e)
                    if e.code == kip::ErrorCode::NotFound
                        && let Some(gone) = deleted.explain(&e.message) =>
                {
                    kept_lines.push(format!("{}: {} left out: {gone}", w.source, w.what));
                    progress(i + 1, total);
                    continue;
                }
                Err(e) if skippable(e.code) => {
                    skipped.push(format!(
                        "{}: {} not imported ({}: {})",
                        w.source, w.what, e.code, e.message
                    ));
                    progress(i + 1, total);
                    continue;
                }
                Err(e) => return Err(at(e)),
            };
            if let Some(e) = effects {
                counts.0 += e["created"].as_u64().unwrap_or(0);
                counts.1 += e["updated"].as_u64().unwrap_or(0);
            }
            progress(i + 1, total);
        }
        staged = propose(nx, plan, who, std::mem::take(&mut held), dry_run)?;
        if dry_run {
            // rolls the group back
            return Err(kip::KipError::internal("dry run"));
        }
        Ok(())
    });
    match res {
        Ok(()) => {}
        Err(e) if dry_run && e.message == "dry run" => {}
        Err(e) => return Err(e),
    }
    out.created = counts.0;
    out.updated = counts.1;
    out.skipped = skipped.len();
    out.notes.extend(skipped);
    (out.proposal, out.proposed, out.held) = staged;
    out.kept = kept_lines;
    Ok(out)
}

/// How many kept values an import's report lists.
const KEPT_LISTED: usize = 10;

/// The savepoint each write of an import runs in, so that one held back
/// for review leaves nothing behind.
const WRITE_SAVEPOINT: &str = "somnus_import_write";

/// The newest audit entry of the import's group (this write's, when it
/// changed anything).
fn last_entry(nx: &Nexus, group: &str) -> KipResult<Option<i64>> {
    nx.db().query_i64(
        "SELECT MAX(id) FROM audit_log WHERE batch = ?1",
        crate::args![group],
    )
}

/// Stages the held-back writes as one proposal of the review layer (in
/// the import's group: both happen, or neither), marks where its items
/// disagree with other pending ones, and says where each write went:
/// `(proposal, items staged, a line per write)`.
fn propose(
    nx: &mut Nexus,
    plan: &Plan,
    who: &Who,
    held: Vec<(Write, Vec<overwrites::Overwrite>)>,
    dry_run: bool,
) -> KipResult<(Option<i64>, usize, Vec<String>)> {
    if held.is_empty() {
        return Ok((None, 0, vec![]));
    }
    use crate::review::proposals;
    let drafts: Vec<_> = held
        .iter()
        .map(|(w, over)| overwrites::draft(&plan.source, w, over))
        .collect();
    let title = format!(
        "Import {}: {} write{} that would replace what the memory holds now",
        plan.source,
        drafts.len(),
        if drafts.len() == 1 { "" } else { "s" }
    );
    let keys: Vec<String> = drafts.iter().map(|d| d.key.clone()).collect();
    let staged = proposals::stage(nx, None, &who.actor, &title, drafts, None)?;
    if let Some(p) = staged.proposal {
        let seqs: Vec<i64> = staged.keys.values().map(|(_, s)| *s).collect();
        crate::review::conflicts::mark(nx.db(), p, &seqs)?;
    }
    let mut lines = Vec::new();
    for ((w, over), key) in held.iter().zip(&keys) {
        let would = if dry_run { "would be " } else { "" };
        let went = match (
            staged.keys.get(key),
            staged.skipped.iter().find(|(k, _)| k == key),
        ) {
            (Some((p, s)), _) if staged.auto_applied > 0 => format!(
                "{would}applied as proposal #{p} item {s} (the operator's policy for `import` is auto)"
            ),
            (Some((p, s)), _) => format!("{would}proposed as #{p} item {s}"),
            (None, Some((_, why))) => format!("not written: {why}"),
            (None, None) => "not written".into(),
        };
        let what: Vec<String> = over
            .iter()
            .filter(|o| !o.stale_file)
            .map(|o| o.describe())
            .collect();
        lines.push(format!("{}: {}; {went}", w.source, what.join("; ")));
    }
    Ok((staged.proposal, staged.items, lines))
}

/// Whether the memory has a definition (`$ConceptType`,
/// `$PropositionType`) of the name a write declares.
fn known(nx: &mut Nexus, meta: &str, params: &Map<String, Value>) -> bool {
    let Some(name) = params.get("name") else {
        return false;
    };
    let found = nx.kip_with(
        &format!(
            "FIND(COUNT(?t)) WHERE {{ ?t {{type: {}, name: :name}} }}",
            serde_json::json!(meta)
        ),
        serde_json::json!({ "name": name }),
    );
    matches!(found, crate::protocol::Outcome::Ok { result, .. } if result.as_i64().unwrap_or(0) > 0)
}

/// Whether a write's error is the element's (a value, a name, a rule of
/// the memory it breaks), so the write is skipped and the import goes on;
/// a timeout, a full resource or an internal failure stops it.
fn skippable(code: kip::ErrorCode) -> bool {
    use kip::ErrorCode::*;
    !matches!(code, ExecutionTimeout | ResourceExhausted | InternalError)
}

impl Outcome {
    /// What the import did, in lines: the totals, the writes by what they
    /// write, what to know, and how to undo it.
    pub fn lines(&self, dir: &std::path::Path, writes: usize) -> Vec<String> {
        let dry = self.dry_run;
        let mut v = vec![format!(
            "{} {}: {} writes planned{}; {} {} elements, {} {}{}",
            if dry { "would import" } else { "imported" },
            dir.display(),
            writes,
            if self.skipped > 0 {
                format!(
                    " ({} refused by the memory and skipped, listed below)",
                    self.skipped
                )
            } else {
                String::new()
            },
            if dry { "would create" } else { "created" },
            self.created,
            if dry { "would update" } else { "updated" },
            self.updated,
            if dry {
                String::new()
            } else {
                format!(
                    " (audit group {}: `somnus rollback --group {}` undoes it)",
                    self.group, self.group
                )
            }
        )];
        for (what, n) in &self.planned {
            v.push(format!("  {n:>6}  {what}"));
        }
        if !self.held.is_empty() {
            v.push(format!(
                "{} write{} held back: {} replace what someone else wrote or deleted since{}",
                self.held.len(),
                if self.held.len() == 1 { "" } else { "s" },
                if self.held.len() == 1 {
                    "it would"
                } else {
                    "each would"
                },
                match self.proposal {
                    Some(p) if dry => format!(" (would be proposed for review, as proposal #{p})"),
                    Some(p) => format!(
                        "; proposed for review as proposal #{p} (`somnus proposals show {p}`)"
                    ),
                    None => String::new(),
                }
            ));
            for h in &self.held {
                v.push(format!("  - {h}"));
            }
        }
        if !self.kept.is_empty() {
            v.push(format!(
                "{} change{} since an earlier import kept (the files still say what was imported then):",
                self.kept.len(),
                if self.kept.len() == 1 { "" } else { "s" },
            ));
            for k in self.kept.iter().take(KEPT_LISTED) {
                v.push(format!("  - {k}"));
            }
            if self.kept.len() > KEPT_LISTED {
                v.push(format!(
                    "  - and {} more (`--json` lists them all)",
                    self.kept.len() - KEPT_LISTED
                ));
            }
        }
        if !self.notes.is_empty() {
            v.push(format!("{} things to know:", self.notes.len()));
            for n in &self.notes {
                v.push(format!("  - {n}"));
            }
        }
        v
    }
}

/// A path as a user writes it: `~/` is the home folder.
pub fn expand_home(p: &str) -> std::path::PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
        _ => p.into(),
    }
}

/// The sources somnus reads. `openclaw` is Moltbot's successor, whose
/// workspaces the same reader reads; both names are accepted.
pub const SOURCES: [&str; 3] = ["openclaw", "moltbot", "engram"];

/// Reads a source's folder. `user` names the Person whose preferences an
/// Engram store holds (Moltbot names its user in MEMORY.md).
pub fn read(source: &str, dir: &std::path::Path, user: Option<&str>) -> Result<Plan, String> {
    read_with(source, dir, user, &[])
}

/// [`read`], with `extra`: an OpenClaw workspace's folders or files that
/// its memory search also covers (`--extra-path`; an Engram store takes
/// none).
pub fn read_with(
    source: &str,
    dir: &std::path::Path,
    user: Option<&str>,
    extra: &[std::path::PathBuf],
) -> Result<Plan, String> {
    if !extra.is_empty() && source == "engram" {
        return Err(
            "--extra-path is for an OpenClaw workspace (its memorySearch.extraPaths); an Engram store has none".into(),
        );
    }
    match source {
        "moltbot" | "openclaw" => moltbot::read(dir, extra),
        "engram" => moltbot::read_engram(dir, user),
        other => Err(format!(
            "somnus reads {} folders; `{other}` is not a source it knows",
            SOURCES.map(|s| format!("`{s}`")).join(", ")
        )),
    }
}

/// The Person whose preferences a source's files hold, when the source
/// does not name one itself (Engram): `given`, else the memory's user.
pub fn user_for(nx: &mut Nexus, source: &str, given: Option<String>) -> Option<String> {
    match source {
        "engram" => given.or_else(|| user_of(nx)),
        _ => given,
    }
}

/// The memory's user: the one Person whose `relationship_to_self` is
/// `user`, if there is exactly one.
pub fn user_of(nx: &mut Nexus) -> Option<String> {
    let r = nx
        .kip(r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.attributes.relationship_to_self == "user") } LIMIT 2"#)
        .to_json();
    match r["result"].as_array().map(Vec::as_slice) {
        Some([one]) => one.as_str().map(str::to_string),
        _ => None,
    }
}

/// `high` / `medium` / `low` as a confidence.
pub fn confidence(word: &str) -> Option<f64> {
    match word.trim().to_ascii_lowercase().as_str() {
        "high" => Some(0.9),
        "medium" => Some(0.7),
        "low" => Some(0.4),
        _ => word
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|c| (0.0..=1.0).contains(c)),
    }
}

/// `decided-on`, `Developed by` → `decided_on`, `developed_by`.
pub fn predicate_name(s: &str) -> String {
    let mut out = String::new();
    for c in s.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// `project` → `Project`.
pub fn type_name(s: &str) -> String {
    let mut c = s.trim().chars();
    match c.next() {
        Some(f) => f
            .to_uppercase()
            .chain(c.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}
