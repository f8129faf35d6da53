//! What OpenClaw's dreaming (its own background consolidation of a
//! workspace's memory) leaves in the workspace, read or left out:
//!
//! - **its session corpus**, `memory/.dreams/session-corpus/YYYY-MM-DD.txt`:
//!   the messages of the agent's conversations it took in that day, one a
//!   line, each its first characters (`[main/sessions/<id>.jsonl#L12] User:
//!   …`; a long one goes on in more lines of the same `#L`). The session
//!   files themselves are kept outside the workspace, and OpenClaw deletes
//!   them (`….jsonl.deleted.<time>`): the corpus is then the only copy of
//!   what the user told the agent. Each session is read as a conversation
//!   `Event`, as a saved conversation is, unless one of the same session id
//!   was imported; a session of the dreaming's own (a dream diary's
//!   prompt and the diary it got back) is none, nor one where no person
//!   said anything (a scheduled job's run, a sub-agent's work: the agent's
//!   output alone, which the corpus cuts to its first characters).
//! - **its reports**, `memory/dreaming/<light|deep|rem>/YYYY-MM-DD.md`, the
//!   blocks it writes into daily notes between `<!--
//!   openclaw:dreaming:<phase>:start -->` and `…:end -->` (under `## Light
//!   Sleep`, `## REM Sleep`), and a daily note's `Dream Diary`: its digest
//!   of the notes and conversations, quoting them as scored candidates, and
//!   the prose it wrote from them. Left out, and counted: what they quote
//!   is imported from where it was said, and a quote imported again would
//!   be a second copy of every line, under the dreaming's name for it.

use super::Reader;
use super::sessions::{DREAM_PROMPT, PROMPTS, read, unstamped};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folders of the dreaming's reports, one a phase.
const PHASES: [&str; 3] = ["light", "deep", "rem"];

/// The headings the dreaming writes its blocks under in a daily note.
const BLOCK_HEADINGS: [&str; 3] = ["light sleep", "rem sleep", "deep sleep"];

/// How many files a folder is `memory/dreaming/` of the dreaming's reports
/// (only phase folders, each of only markdown files), or `None`.
pub(super) fn reports_folder(p: &Path) -> Option<usize> {
    if p.file_name()? != "dreaming" {
        return None;
    }
    let mut files = 0;
    let mut phases = 0;
    for e in std::fs::read_dir(p).ok()?.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().to_string();
        if !e.file_type().ok()?.is_dir() || !PHASES.contains(&name.as_str()) {
            return None;
        }
        phases += 1;
        for f in std::fs::read_dir(e.path()).ok()?.filter_map(Result::ok) {
            let n = f.file_name().to_string_lossy().to_string();
            if !f.file_type().ok()?.is_file() || !n.ends_with(".md") {
                return None;
            }
            files += 1;
        }
    }
    (phases > 0).then_some(files)
}

/// A marker of a dreaming block: whether the last one a line holds opens
/// a block (`<!-- openclaw:dreaming:light:start -->`) or closes one.
fn last_marker(line: &str) -> Option<bool> {
    let at = line.rfind("<!-- openclaw:dreaming:")?;
    let rest = &line[at..];
    let end = rest.find("-->")?;
    Some(rest[..end].trim_end().ends_with(":start"))
}

/// A heading's level and text (`## REM Sleep` → 2, `REM Sleep`).
fn heading(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start();
    let level = t.chars().take_while(|c| *c == '#').count();
    (level > 0 && t[level..].starts_with(' ')).then(|| (level, t[level..].trim()))
}

/// A note without what the dreaming wrote into it: each line of its
/// blocks (markers, the heading over them, what they quote) and of a
/// `Dream Diary` part blanked, so that every other line keeps its number;
/// and how many lines were blanked.
///
/// A block runs from a line opening with its start marker to one opening
/// with an end marker (a line that closes one and opens the next, as the
/// dreaming writes them, goes on); a line that quotes a marker inside
/// text is a quote of the dreaming's, within a block. A block never closed
/// ends at the next heading of level 1 or 2 that is not the dreaming's.
/// A `Dream Diary` heading's part (its prose) runs to the next heading
/// (in a note the dreaming wrote a block into: in any other, a
/// dream diary is the person's own).
pub(super) fn without_dreaming(text: &str) -> (String, usize) {
    // (a person's own dream diary is theirs: only a note the dreaming
    // wrote into has one of the dreaming's)
    if !text.contains("<!-- openclaw:dreaming:") {
        return (text.to_string(), 0);
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    let mut in_block = false;
    let mut diary = false;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim();
        let h = heading(l);
        if h.is_some() {
            diary = false;
        }
        if t.starts_with("<!-- openclaw:dreaming:") {
            in_block = last_marker(t).unwrap_or(false);
            drop[i] = true;
            continue;
        }
        if in_block {
            match h {
                Some((level, text))
                    if level <= 2 && !BLOCK_HEADINGS.contains(&text.to_lowercase().as_str()) =>
                {
                    in_block = false;
                }
                _ => {
                    drop[i] = true;
                    continue;
                }
            }
        }
        if let Some((_, text)) = h {
            // the heading over a block: the next line that says anything
            // opens one
            let over_block = BLOCK_HEADINGS.contains(&text.to_lowercase().as_str())
                && lines[i + 1..]
                    .iter()
                    .find(|n| !n.trim().is_empty())
                    .is_some_and(|n| n.trim().starts_with("<!-- openclaw:dreaming:"));
            if over_block {
                drop[i] = true;
                continue;
            }
            if text.trim_end().to_lowercase().ends_with("dream diary") {
                diary = true;
            }
        }
        if diary || t.contains("<!-- openclaw:dreaming:") {
            drop[i] = true;
        }
    }
    let n = drop
        .iter()
        .zip(&lines)
        .filter(|(d, l)| **d && !l.trim().is_empty())
        .count();
    let mut out = String::with_capacity(text.len());
    for (l, d) in lines.iter().zip(drop) {
        if !d {
            out.push_str(l);
        }
        out.push('\n');
    }
    (out, n)
}

/// One message of the corpus: its role and its text (the pieces of it
/// the corpus keeps).
struct Message {
    role: &'static str,
    pieces: Vec<String>,
}

/// A session of the corpus: its id and agent, whether its file was
/// deleted, its messages by their line in the session file, and where it
/// was first read (corpus file, line, that file's day).
struct CorpusSession {
    id: String,
    agent: String,
    deleted: bool,
    messages: BTreeMap<u64, Message>,
    first: (PathBuf, usize, chrono::NaiveDate),
}

/// `[main/sessions/main/<id>.jsonl.deleted.<time>#L12] User: text` as
/// (session path, line, role, text).
fn corpus_line(l: &str) -> Option<(&str, u64, &'static str, &str)> {
    let rest = l.strip_prefix('[')?;
    let (at, after) = rest.split_once("] ")?;
    let (path, line) = at.rsplit_once("#L")?;
    let line = line.parse().ok()?;
    let (role, text) = after.split_once(": ")?;
    let role = match role {
        "User" => "user",
        "Assistant" => "assistant",
        _ => return None,
    };
    Some((path, line, role, text))
}

/// A session file's path as (agent, id, deleted):
/// `main/sessions/main/69cf….jsonl.deleted.2026-05-05T08-10-53.233Z` →
/// (`main`, `69cf…`, true).
fn session_of(path: &str) -> (String, String, bool) {
    let agent = path.split('/').next().unwrap_or("").to_string();
    let file = path.rsplit('/').next().unwrap_or(path);
    let (id, rest) = file.split_once(".jsonl").unwrap_or((file, ""));
    (agent, id.to_string(), rest.starts_with(".deleted"))
}

/// A message as the corpus flattens it (its lines joined by spaces) set
/// out again on lines, as a saved session writes it: what the gateway
/// wraps around a message (metadata blocks, system notices, its prompts)
/// on lines of its own, for the saved session's reader to leave out.
fn unflatten(text: &str) -> String {
    let mut s = text.replace("```json ", "\n```json\n");
    s = s.replace(" ``` ", "\n```\n");
    if let Some(t) = s.strip_suffix(" ```") {
        s = format!("{t}\n```");
    }
    for m in ["(untrusted metadata): ", "(untrusted, for context): "] {
        s = s.replace(m, &format!("{}\n", m.trim_end()));
    }
    for m in [
        "Conversation info (untrusted",
        "Sender (untrusted",
        "Replied message (untrusted",
        "Chat history since last reply",
        "System: [",
        "System (untrusted): [",
    ]
    .iter()
    .chain(PROMPTS.iter())
    {
        s = s.replace(&format!(" {m}"), &format!("\n{m}"));
    }
    s
}

/// The name a scheduled job's prompt gives it (`[cron:<id> Portugal daily
/// news] …` → `Portugal daily news`).
fn job_name(text: &str) -> Option<String> {
    let rest = text.trim_start().strip_prefix("[cron:")?;
    let (inside, _) = rest.split_once(']')?;
    let (_, name) = inside.split_once(' ')?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

impl Reader {
    /// OpenClaw's dreaming's session corpus in `mem/.dreams/`, each
    /// session a conversation `Event` (see the module's text).
    pub(super) fn session_corpus(&mut self, mem: &Path) {
        let dir = mem.join(".dreams").join("session-corpus");
        if !dir.is_dir() {
            return;
        }
        let rel = self.d.rel(&dir);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        let mut sessions: Vec<CorpusSession> = Vec::new();
        // (by agent and id: a session the corpus took in before its file
        // was deleted, and again after, is one)
        let mut by_id: std::collections::HashMap<(String, String), usize> = Default::default();
        let mut unread = 0;
        for f in files {
            let day = f
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok());
            let (Some(day), true) = (day, f.extension().is_some_and(|e| e == "txt")) else {
                unread += 1;
                continue;
            };
            let Some(text) = self.d.text(&f) else {
                continue;
            };
            for (i, l) in text.lines().enumerate() {
                let Some((path, line, role, said)) = corpus_line(l) else {
                    continue;
                };
                let (agent, id, deleted) = session_of(path);
                let k = *by_id.entry((agent.clone(), id.clone())).or_insert_with(|| {
                    sessions.push(CorpusSession {
                        id,
                        agent,
                        deleted,
                        messages: BTreeMap::new(),
                        first: (f.clone(), i + 1, day),
                    });
                    sessions.len() - 1
                });
                sessions[k].deleted |= deleted;
                let m = sessions[k].messages.entry(line).or_insert_with(|| Message {
                    role,
                    pieces: Vec::new(),
                });
                // (a day's corpus may take a message in again)
                let said = said.trim();
                if !said.is_empty() && !m.pieces.iter().any(|p| p == said) {
                    m.pieces.push(said.to_string());
                }
            }
        }
        if unread > 0 {
            self.d.note(format!(
                "{rel}/: {unread} file{} not named for a day (YYYY-MM-DD.txt), skipped",
                if unread == 1 { "" } else { "s" }
            ));
        }
        let (mut read_in, mut saved, mut dreams, mut empty, mut messages, mut users) =
            (0, 0, 0, 0, 0, 0);
        // (what was left out of all of them, counted as of one)
        let mut all = super::sessions::Session::default();
        for cs in sessions {
            if self.saved_sessions.contains(&cs.id) {
                saved += 1;
                continue;
            }
            let ordered: Vec<&Message> = cs.messages.values().collect();
            if ordered.iter().any(|m| {
                m.role == "user"
                    && m.pieces
                        .iter()
                        .any(|p| unstamped(p).starts_with(DREAM_PROMPT))
            }) {
                dreams += 1;
                continue;
            }
            let topic = ordered
                .iter()
                .filter(|m| m.role == "user")
                .find_map(|m| m.pieces.first().and_then(|p| job_name(p)));
            let mut text = String::from("## Conversation Summary\n\n");
            for m in &ordered {
                text.push_str(m.role);
                text.push_str(": ");
                text.push_str(&unflatten(&m.pieces.join(" … ")));
                text.push('\n');
            }
            let s = read(&text);
            for (k, n) in &s.left_out {
                *all.left_out.entry(k).or_default() += n;
            }
            // (a scheduled job's run, a sub-agent's work: the agent's own
            // output, with nothing a person said)
            if !s.turns.iter().any(|t| t.role == "user") {
                empty += 1;
                continue;
            }
            let (f, line, day) = &cs.first;
            let about = topic.clone().unwrap_or_else(|| "conversation".into());
            let name = self.unique(
                "Event",
                &super::super::draft::short(&format!("{day} {about}"), 80),
            );
            let mut attrs = s.times(*day, None, None, false);
            let mut context = Map::new();
            context.insert("session_id".into(), json!(cs.id));
            context.insert("agent".into(), json!(cs.agent));
            context.insert(
                "kept".into(),
                json!(if cs.deleted {
                    "OpenClaw's session corpus only (the session file was deleted); each message's first characters"
                } else {
                    "OpenClaw's session corpus; each message's first characters"
                }),
            );
            attrs.insert("context".into(), Value::Object(context));
            if let Some(t) = &topic {
                attrs.insert("topic".into(), json!(t));
            }
            let src = self.d.at(f, *line);
            let what = format!("OpenClaw's session corpus keeps ({rel}/)");
            self.conversation(&s, &name, attrs, &src, &what);
            read_in += 1;
            messages += s.turns.len();
            users += s.turns.iter().filter(|t| t.role == "user").count();
        }
        let mut said = format!(
            "{rel}/: OpenClaw's dreaming's session corpus: {read_in} conversation{} read as Events ({messages} messages, {users} of them the user's; each message's first characters, as the corpus keeps them)",
            if read_in == 1 { "" } else { "s" }
        );
        if saved > 0 {
            said.push_str(&format!("; {saved} read from their saved copy instead"));
        }
        if dreams > 0 {
            said.push_str(&format!(
                "; {dreams} of the dreaming's own (a dream diary's prompt and the diary) left out"
            ));
        }
        if empty > 0 {
            said.push_str(&format!(
                "; {empty} where no person said anything (a scheduled job's run, a sub-agent's work, the agent's output alone) left out"
            ));
        }
        if let Some(l) = all.left_out_said() {
            said.push_str(&format!("; left out: {l}"));
        }
        self.d.note(said);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dreaming_block_is_blanked_and_every_other_line_keeps_its_number() {
        let note = "## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n- Candidate: User: hi\n  - confidence: 0.58\n<!-- openclaw:dreaming:light:end --> ## REM Sleep <!-- openclaw:dreaming:rem:start --> ### Reflections\n- Theme: `user`\n<!-- openclaw:dreaming:rem:end -->\n## April 8 Updates\n- Switched the backup to Drive.\n";
        let (out, n) = without_dreaming(note);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), note.lines().count());
        assert_eq!(lines[7], "## April 8 Updates");
        assert_eq!(lines[8], "- Switched the backup to Drive.");
        assert!(lines[..7].iter().all(|l| l.is_empty()), "{out}");
        assert_eq!(n, 7);
    }

    #[test]
    fn a_block_never_closed_ends_at_the_next_heading_of_the_owner() {
        let note = "# 2026-04-17\n## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n- Candidate: x\n## Errands\nBought the tent.\n### Later\nCalled Ana.\n";
        let (out, _) = without_dreaming(note);
        assert!(
            out.contains("## Errands\nBought the tent.\n### Later\nCalled Ana."),
            "{out}"
        );
        assert!(!out.contains("Candidate"));
        assert!(out.starts_with("# 2026-04-17\n"));
    }

    #[test]
    fn a_dream_diary_part_is_left_out_and_the_rest_kept() {
        let note = "# 2026-04-13 — Dream Diary\n\nThe server room hummed.\n\n## Meeting\nAna signed the lease.\n## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n- Candidate: x\n<!-- openclaw:dreaming:light:end -->\n";
        let (out, n) = without_dreaming(note);
        assert!(!out.contains("hummed"));
        assert!(out.contains("## Meeting\nAna signed the lease.\n"));
        assert_eq!(n, 6);
        // a person's own dream diary, in a note the dreaming never wrote
        // into, is theirs
        let own = "# Dream Diary\nI was flying over Lisbon.\n";
        assert_eq!(without_dreaming(own), (own.to_string(), 0));
    }

    #[test]
    fn hostile_notes_and_corpus_lines_are_read_whole() {
        // many blocks, never closed, headings of the dreaming's own, and a
        // line of a megabyte: every line kept in its place
        let mut note = String::new();
        for i in 0..20_000 {
            note.push_str("## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n");
            note.push_str(&format!("- Candidate {i}\n## Day {i}\nkept {i}\n"));
        }
        note.push_str(&"é<!-- openclaw:dreaming:rem:end -->".repeat(30_000));
        note.push('\n');
        let (out, n) = without_dreaming(&note);
        assert_eq!(out.lines().count(), note.lines().count());
        assert!(out.contains("## Day 19999\nkept 19999\n"));
        assert_eq!(n, 60_001);
        // a corpus line of a megabyte, brackets that never close, a role
        // with no text
        let huge = format!(
            "[main/sessions/a.jsonl#L1] User: {}",
            "ü ```json { ".repeat(100_000)
        );
        let (_, _, role, text) = corpus_line(&huge).expect("read");
        assert_eq!(role, "user");
        let s = read(&format!(
            "## Conversation Summary\n\nuser: {}\n",
            unflatten(text)
        ));
        assert!(s.turns.len() <= 1);
        assert!(corpus_line("[[[[#L#L] User:").is_none());
        assert!(corpus_line("[a#L99999999999999999999999] User: x").is_none());
    }

    #[test]
    fn a_corpus_line_gives_its_session_line_role_and_text() {
        // (the same session before and after its file was deleted)
        assert_eq!(
            session_of("main/sessions/0b96.jsonl").1,
            session_of("main/sessions/0b96.jsonl.deleted.2026-05-05T08-10-53.233Z").1
        );
        let l = "[main/sessions/main/0b96.jsonl.deleted.2026-05-05T08-10-53.233Z#L5] User: ganda nyx: lê o email";
        let (path, line, role, text) = corpus_line(l).unwrap();
        assert_eq!((line, role, text), (5, "user", "ganda nyx: lê o email"));
        assert_eq!(session_of(path), ("main".into(), "0b96".into(), true));
        assert!(corpus_line("[x#Lnope] User: a").is_none());
        assert!(corpus_line("[x#L3] Tool: a").is_none());
        assert!(corpus_line("no bracket").is_none());
        assert_eq!(
            job_name("[cron:b8f0 Portugal daily news] Prepara…").as_deref(),
            Some("Portugal daily news")
        );
    }

    #[test]
    fn a_flattened_message_is_set_out_so_its_metadata_is_left_out() {
        let flat = r#"Conversation info (untrusted metadata): ```json { "sender_id": "8217045820", "sender": "Diamond" } ``` Sender (untrusted metadata): ```json { "label": "Diamond (8217045820)", "id": "8217045820", "name": "Diamond" } ``` please renew the domain"#;
        let s = read(&format!(
            "## Conversation Summary\n\nuser: {}\n",
            unflatten(flat)
        ));
        assert_eq!(s.turns.len(), 1);
        assert_eq!(s.turns[0].text, "please renew the domain");
        assert_eq!(s.senders, vec!["Diamond".to_string()]);
        // cut inside its metadata: nothing the user wrote is left
        let cut = r#"Conversation info (untrusted metadata): ```json { "message_id": "5717", "sender_id": "82170"#;
        let s = read(&format!(
            "## Conversation Summary\n\nuser: {}\n",
            unflatten(cut)
        ));
        assert!(s.turns.is_empty(), "{:?}", s.turns);
    }
}
