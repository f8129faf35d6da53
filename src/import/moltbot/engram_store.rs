//! An Engram store inside the workspace (Engram, OpenClaw's memory
//! plugin, keeps one in `memory/local/`): its memories, entities and
//! profile read by the Engram reader into the same plan, the user the
//! workspace names being the one its preferences are of; and the
//! conversations it kept message by message (`transcripts/<channel>/
//! <kind>/YYYY-MM-DD.jsonl`) read as the workspace's saved
//! conversations are, one `Conversation` Event a file.

use super::super::Plan;
use super::super::draft::{Draft, short};
use super::super::engram::{self, User};
use super::Reader;
use super::sessions::from_turns;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// At most this many session keys a conversation keeps in its context.
const SESSION_KEYS_MAX: usize = 16;

/// A transcript line past this many bytes is left out (and said): a
/// message is never this long, a line this long is no transcript's.
const LINE_MAX: usize = 4 * 1024 * 1024;

/// Reads an Engram store imported alone (`somnus import engram`): its
/// memories, entities and profile, the user being `user` (else the
/// memory's, else `Person "User"`), and the conversations it kept, as
/// the workspace holding it would have them read.
pub fn read_engram(dir: &Path, user: Option<&str>) -> Result<Plan, String> {
    let (d, store) = engram::store_in(dir)?;
    let Some(store) = store else {
        return Ok(d.finish());
    };
    let mut r = Reader::new(d);
    let given = match user {
        Some(u) => {
            r.user = Some(("Person".into(), u.to_string()));
            User::Given(u.to_string())
        }
        None => User::Unnamed,
    };
    let d = std::mem::replace(&mut r.d, Draft::new(Path::new(""), "engram"));
    r.d = engram::read_store(d, &store, given);
    r.transcripts(&store.join("transcripts"));
    r.drop_agent_quoted();
    Ok(r.d.finish())
}

impl Reader {
    /// Reads the Engram stores met among the notes.
    pub(super) fn engram_stores(&mut self) {
        for store in std::mem::take(&mut self.engram) {
            let user = match &self.user {
                Some((ty, name)) => User::Drafted(ty.clone(), name.clone()),
                None => User::Unnamed,
            };
            // (its files are Engram's: their sources and authors say so)
            let author = self.d.author;
            let mut d = std::mem::replace(&mut self.d, Draft::new(Path::new(""), author));
            d.author = "engram";
            self.d = engram::read_store(d, &store, user);
            self.transcripts(&store.join("transcripts"));
            self.d.author = author;
        }
    }

    /// Engram's transcripts: a file a conversation, named for its day
    /// and channel (`2026-03-19 conversation, daxiang direct`); a
    /// sub-agent's (`subagent/<id>/`) is the agent's task, not a
    /// conversation with anyone, and is left out.
    fn transcripts(&mut self, dir: &Path) {
        if !dir.is_dir() {
            return;
        }
        let mut files: Vec<PathBuf> = Vec::new();
        walk(dir, 0, &mut files);
        files.sort();
        let (mut read, mut subagent, mut empty, mut other) = (0, 0, 0, 0);
        for f in files {
            let within: Vec<String> = f
                .strip_prefix(dir)
                .unwrap_or(&f)
                .iter()
                .map(|c| c.to_string_lossy().to_string())
                .collect();
            let day = f
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok());
            let (Some(day), true) = (day, f.extension().is_some_and(|e| e == "jsonl")) else {
                other += 1;
                continue;
            };
            if within.first().map(String::as_str) == Some("subagent") {
                subagent += 1;
                continue;
            }
            if self.transcript(&f, day, &within[..within.len() - 1]) {
                read += 1;
            } else {
                empty += 1;
            }
        }
        let rel = self.d.rel(dir);
        let mut said = vec![format!(
            "{read} conversation{} read",
            if read == 1 { "" } else { "s" }
        )];
        if empty > 0 {
            said.push(format!("{empty} with nothing the user said, skipped"));
        }
        if subagent > 0 {
            said.push(format!(
                "{subagent} of sub-agents (the agent's own tasks), skipped"
            ));
        }
        if other > 0 {
            said.push(format!(
                "{other} file{} not named for a day (YYYY-MM-DD.jsonl), skipped",
                if other == 1 { "" } else { "s" }
            ));
        }
        self.d
            .note(format!("{rel}/: Engram's transcripts: {}", said.join("; ")));
    }

    /// One transcript file; whether it held a message of the user's.
    fn transcript(&mut self, f: &Path, day: chrono::NaiveDate, channel: &[String]) -> bool {
        let Some(text) = self.d.text(f) else {
            return false;
        };
        let rel = self.d.rel(f);
        let mut turns: Vec<(String, Option<String>, String)> = Vec::new();
        let mut keys: Vec<String> = Vec::new();
        let (mut bad, mut long, mut first_bad) = (0, 0, None);
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            if l.len() > LINE_MAX {
                long += 1;
                continue;
            }
            let v: Value = match serde_json::from_str(l) {
                Ok(v) => v,
                Err(_) => {
                    bad += 1;
                    first_bad.get_or_insert(i + 1);
                    continue;
                }
            };
            let (Some(role), Some(content)) = (
                v.get("role").and_then(Value::as_str),
                v.get("content").and_then(Value::as_str),
            ) else {
                bad += 1;
                first_bad.get_or_insert(i + 1);
                continue;
            };
            let at = v
                .get("timestamp")
                .and_then(Value::as_str)
                .filter(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok())
                .map(str::to_string);
            // (the first few: a file of a session key a line stays linear)
            if let Some(k) = v.get("sessionKey").and_then(Value::as_str)
                && keys.len() < SESSION_KEYS_MAX
                && !keys.iter().any(|x| x == k)
            {
                keys.push(k.to_string());
            }
            turns.push((role.to_string(), at, content.to_string()));
        }
        if bad > 0 {
            self.d.note(format!(
                "{rel}:{}: {bad} line{} not a message (JSON with a role and a text), skipped",
                first_bad.unwrap_or(1),
                if bad == 1 { "" } else { "s" }
            ));
        }
        if long > 0 {
            self.d.note(format!(
                "{rel}: {long} line{} longer than {} MB, skipped",
                if long == 1 { "" } else { "s" },
                LINE_MAX / (1024 * 1024)
            ));
        }
        let s = from_turns(&turns);
        if !s.turns.iter().any(|t| t.role == "user") {
            return false;
        }
        let channel: Vec<String> = channel
            .iter()
            .filter(|c| c.as_str() != "default")
            .map(|c| short(c, 8).trim_end_matches('…').to_string())
            .collect();
        let label = if channel.is_empty() {
            format!("{day} conversation")
        } else {
            format!("{day} conversation, {}", channel.join(" "))
        };
        let name = self.unique("Event", &short(&label, 80));
        let times: Vec<&str> = turns.iter().filter_map(|t| t.1.as_deref()).collect();
        let mut attrs = s.times(day, times.first().copied(), times.last().copied(), true);
        let mut context = Map::new();
        if let Some(c) = channel.first() {
            context.insert("channel".into(), json!(c));
        }
        match keys.as_slice() {
            [] => {}
            [one] => {
                context.insert("session_key".into(), json!(one));
            }
            many => {
                context.insert("session_keys".into(), json!(many));
            }
        }
        if !context.is_empty() {
            attrs.insert("context".into(), Value::Object(context));
        }
        let src = self.d.at(f, 1);
        let what = format!("Engram kept in {rel}");
        self.conversation(&s, &name, attrs, &src, &what);
        let users = s.turns.iter().filter(|t| t.role == "user").count();
        self.d.note(format!(
            "{rel}: a conversation Engram kept ({} messages, {users} of them the user's): Event `{name}`{}",
            s.turns.len(),
            s.left_out_said()
                .map(|l| format!("; left out: {l}"))
                .unwrap_or_default()
        ));
        true
    }
}

/// The files under a transcripts folder (at most 4 folders deep:
/// `<channel>/<kind>/` and a sub-agent's id).
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            walk(&e.path(), depth + 1, out);
        } else if t.is_file() {
            out.push(e.path());
        }
    }
}
