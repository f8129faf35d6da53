//! The workspace's folders beyond `memory/`. OpenClaw's memory is
//! `MEMORY.md` and `memory/`, and what its configuration adds:
//! `agents.defaults.memorySearch.extraPaths` (or an agent's own, in
//! `agents.list`), folders and files of Markdown it also searches. Those
//! are imported as notes, as `memory/`'s side notes are: the ones the
//! configuration beside the workspace (`~/.openclaw/openclaw.json`, JSON5)
//! lists, and the ones given with `--extra-path`. Every other folder that
//! holds notes is named with how many, so nothing is passed over without
//! a word.

use super::Reader;
use super::workspace::{AGENT_FILES, NOT_NOTES, USER_FILE, is_note};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The configuration OpenClaw keeps beside its workspace
/// (`~/.openclaw/openclaw.json` for `~/.openclaw/workspace`).
const CONFIG: &str = "openclaw.json";

/// The configuration file read at most (OpenClaw's own limit for an
/// included file).
const MAX_CONFIG_BYTES: u64 = 2 * 1024 * 1024;

/// How deep a count of notes goes.
const MAX_DEPTH: usize = 12;

/// Files counted at most in one folder (the count says "at least" then),
/// and the largest file whose lines are counted.
const MAX_COUNTED: usize = 100_000;
const MAX_COUNTED_BYTES: u64 = 4 * 1024 * 1024;

impl Reader {
    /// Imports the extra paths (the configuration's, then `given`), each
    /// once, then names the workspace's other folders that hold notes.
    /// `own` is the folder the agent's and the user's files were read
    /// from when the workspace's top has none (`config/`).
    pub(super) fn extra_paths(
        &mut self,
        dir: &Path,
        mem: &Path,
        own: Option<&Path>,
        given: &[PathBuf],
    ) {
        let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        // (the path, as it was written, and where)
        let mut paths: Vec<(PathBuf, String, String)> = self
            .configured(&root)
            .into_iter()
            .map(|(p, s)| (p, s, format!("{CONFIG}'s memorySearch.extraPaths")))
            .collect();
        paths.extend(
            given
                .iter()
                .map(|p| (p.clone(), p.display().to_string(), "--extra-path".into())),
        );
        let mem_c = std::fs::canonicalize(mem).unwrap_or_else(|_| mem.to_path_buf());
        let mut done: Vec<PathBuf> = Vec::new();
        for (p, shown, from) in paths {
            // (an absolute path stays as it is)
            let Ok(c) = std::fs::canonicalize(dir.join(&p)) else {
                self.d.note(format!(
                    "{from} `{shown}`: not found, nothing imported from it"
                ));
                continue;
            };
            if !c.starts_with(&root) {
                self.d.note(format!(
                    "{from} `{shown}`: outside the workspace, not imported (an import reads only the folder it is given): import it on its own with `somnus import openclaw {}`",
                    c.display()
                ));
                continue;
            }
            if c == root || c.starts_with(&mem_c) || mem_c.starts_with(&c) {
                self.d.note(format!(
                    "{from} `{shown}`: the workspace's memory itself, read already"
                ));
                continue;
            }
            if done.iter().any(|d| c.starts_with(d)) {
                continue;
            }
            done.retain(|d| !d.starts_with(&c));
            done.push(c.clone());
            // the path as it lies in the workspace (sources name it so)
            let inside = dir.join(c.strip_prefix(&root).unwrap_or(&c));
            if inside.is_dir() {
                self.notes_in(&inside, mem);
            } else {
                self.note_or_skip(&inside);
            }
        }
        // (a memory folder given alone has no workspace around it to name)
        if mem == dir {
            return;
        }
        self.other_files(dir, "");
        self.other_folders(dir, mem, "");
        if let Some(o) = own {
            let rel = format!("{}/", self.d.rel(o));
            self.other_files(o, &rel);
            self.other_folders(o, mem, &rel);
        }
    }

    /// Names the workspace's top-level files not read: its notes in one
    /// line (how many, how long, and how to import one), every other
    /// file in another.
    /// `inside` is the folder's path in the workspace (`config/`), empty
    /// for its top.
    fn other_files(&mut self, dir: &Path, inside: &str) {
        let place = if inside.is_empty() {
            "at the workspace's top level".to_string()
        } else {
            format!("in {inside} beside the agent's files")
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        let (mut notes, mut others, mut lines) = (Vec::new(), Vec::new(), 0);
        for f in files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            if name.starts_with('.')
                || name == "MEMORY.md"
                || name == USER_FILE
                || name == "pending-memories.md"
                || AGENT_FILES.contains(&name.as_str())
                || self.d.read_under(&f)
            {
                continue;
            }
            if is_note(&f) {
                if std::fs::metadata(&f).is_ok_and(|m| m.len() <= MAX_COUNTED_BYTES) {
                    lines += std::fs::read(&f)
                        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
                        .unwrap_or(0);
                }
                notes.push(format!("{inside}{name}"));
            } else {
                others.push(format!("{inside}{name}"));
            }
        }
        if !notes.is_empty() {
            let n = notes.len();
            self.d.note(format!(
                "{} ({lines} line{}): {n} note{} {place}, not imported: OpenClaw's memory is MEMORY.md and memory/ and the paths its memorySearch.extraPaths add; `--extra-path {}` imports {}",
                listed(&notes),
                if lines == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" },
                notes[0],
                if n == 1 { "it" } else { "one" },
            ));
        }
        if !others.is_empty() {
            let n = others.len();
            self.d.note(format!(
                "{}: {n} file{} {place}, not memory files, skipped",
                listed(&others),
                if n == 1 { "" } else { "s" },
            ));
        }
    }

    /// The extra paths the configuration beside the workspace (`root`,
    /// its canonical path) lists for it: the defaults', then those of the
    /// agent whose workspace it is.
    fn configured(&mut self, root: &Path) -> Vec<(PathBuf, String)> {
        let Some(parent) = root.parent() else {
            return Vec::new();
        };
        let file = parent.join(CONFIG);
        let Ok(meta) = std::fs::metadata(&file) else {
            return Vec::new();
        };
        let shown = format!("../{CONFIG}");
        if meta.len() > MAX_CONFIG_BYTES {
            self.d.note(format!(
                "{shown}: larger than {} MiB, not read: give its memorySearch.extraPaths with --extra-path",
                MAX_CONFIG_BYTES >> 20
            ));
            return Vec::new();
        }
        let config = match std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|t| json5::from_str::<Value>(&t).map_err(|e| e.to_string()))
        {
            Ok(v) => v,
            Err(e) => {
                self.d.note(format!(
                    "{shown}: not read ({e}): give its memorySearch.extraPaths with --extra-path"
                ));
                return Vec::new();
            }
        };
        if config.get("$include").is_some() || config["agents"].get("$include").is_some() {
            self.d.note(format!(
                "{shown}: includes other files ($include), which are not followed: give extra paths they list with --extra-path"
            ));
        }
        let mut out = strings(&config["agents"]["defaults"]["memorySearch"]["extraPaths"]);
        for agent in config["agents"]["list"].as_array().into_iter().flatten() {
            let ws = agent["workspace"].as_str().map(|w| expand(w, parent));
            if ws.and_then(|w| std::fs::canonicalize(w).ok()).as_deref() == Some(root) {
                out.extend(strings(&agent["memorySearch"]["extraPaths"]));
            }
        }
        out.into_iter().map(|p| (expand(&p, root), p)).collect()
    }

    /// Names the workspace's folders not read that hold notes (how many),
    /// and in one line those that hold none.
    fn other_folders(&mut self, dir: &Path, mem: &Path, inside: &str) {
        // (real folders only: a link was named with the workspace's files)
        let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        folders.sort();
        let mut empty = Vec::new();
        for f in folders {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            // (the folder a moved `memory/` is in, `backup/`: its other
            // notes are named)
            let holds_memory = mem != f && mem.starts_with(&f);
            if name.starts_with('.')
                || f == mem
                || name == "vault"
                || (self.d.read_under(&f) && !holds_memory)
            {
                continue;
            }
            let (n, lines) = if holds_memory {
                let (all, all_lines) = count_notes(&f, 0);
                let (read, read_lines) = count_notes(mem, 0);
                (
                    all.saturating_sub(read),
                    all_lines.saturating_sub(read_lines),
                )
            } else {
                count_notes(&f, 0)
            };
            if n == 0 {
                empty.push(format!("{inside}{name}/"));
                continue;
            }
            let many = if n >= MAX_COUNTED { "at least " } else { "" };
            if holds_memory {
                self.d.note(format!(
                    "{inside}{name}/: {many}{n} note{} ({lines} lines) beside the memory folder in it not imported: OpenClaw's memory is MEMORY.md and memory/ and the folders its memorySearch.extraPaths add; `--extra-path {inside}{name}/<folder or file>` imports one",
                    if n == 1 { "" } else { "s" }
                ));
                continue;
            }
            self.d.note(format!(
                "{inside}{name}/: {many}{n} note{} ({lines} lines) not imported: OpenClaw's memory is MEMORY.md and memory/ and the folders its memorySearch.extraPaths add; `--extra-path {inside}{name}` imports them",
                if n == 1 { "" } else { "s" }
            ));
        }
        if !empty.is_empty() {
            self.d.note(format!(
                "folders without notes, skipped: {}",
                empty.join(", ")
            ));
        }
    }
}

/// Names, the first [`MAX_LISTED`] of them and how many more.
fn listed(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(MAX_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > MAX_LISTED {
        s.push_str(&format!(" and {} more", names.len() - MAX_LISTED));
    }
    s
}

/// Files a line of the report names at most.
const MAX_LISTED: usize = 12;

/// The strings of a JSON array.
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// A configured path: `~/` is the home folder, a relative one is under
/// `base`.
fn expand(p: &str, base: &Path) -> PathBuf {
    base.join(super::super::expand_home(p))
}

/// Markdown and text files in `dir` and below (not hidden, not
/// dependencies, not through links), and their lines.
fn count_notes(dir: &Path, depth: usize) -> (usize, usize) {
    let (mut n, mut lines) = (0, 0);
    if depth > MAX_DEPTH {
        return (0, 0);
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().to_string();
        let Ok(t) = e.file_type() else { continue };
        if name.starts_with('.') || t.is_symlink() {
            continue;
        }
        if t.is_dir() {
            if !NOT_NOTES.contains(&name.as_str()) {
                let (a, b) = count_notes(&e.path(), depth + 1);
                n += a;
                lines += b;
            }
        } else if is_note(&e.path()) {
            n += 1;
            // (a file larger than a note is counted, its lines not)
            if e.metadata().is_ok_and(|m| m.len() <= MAX_COUNTED_BYTES) {
                lines += std::fs::read(e.path())
                    .map(|b| b.iter().filter(|&&c| c == b'\n').count())
                    .unwrap_or(0);
            }
        }
        if n >= MAX_COUNTED {
            break;
        }
    }
    (n, lines)
}
