//! Which of a workspace's daily-note sections are routine.
//!
//! A daily note repeats its regular sections day after day (`概要`,
//! `活動時間`, `Heartbeat 14:00`): such an entry holding nothing the
//! reasoner reads is a log's line, and archiving it is what the seeds ask.
//! A section whose heading no other day has (a client's meeting, a workout
//! plan) is the only record of its subject, and a section of notes or of
//! tasks still to do (`技術メモ`, `未完了タスク・次回への申し送り`, `Next
//! steps`) holds what the day left to keep, however often its heading
//! comes back. The heuristic reasoner reads cues, not meaning, so it cannot
//! tell whether such a section holds anything durable: when the section
//! says something of its own (two lines or more, or a line of 40
//! characters: a sentence) it is left as it is and the report says so. A
//! reasoner that reads the text (an LLM) decides.

use super::context::{find, strs};
use crate::engine::Nexus;
use crate::kip::KipResult;
use crate::sleep::extraction::{body_lines, heading_of, says_nothing};
use crate::sleep::views::EventView;
use serde_json::json;
use std::collections::{HashMap, HashSet};

/// Daily notes whose headings are counted, at most.
pub const MAX_COUNTED: usize = 100_000;
/// Lines a section says at least to be one of its own…
const MIN_LINES: usize = 2;
/// …or characters on its one line.
const MIN_CHARS: usize = 40;

/// Words of a heading (whole words) that say its section keeps notes or
/// tasks still to do.
const NOTES_WORDS: &[&str] = &[
    "memo",
    "memos",
    "notes",
    "tips",
    "todo",
    "notizen",
    "aufgaben",
    "notas",
    "tareas",
    "tâches",
    "appunti",
    "заметки",
    "задачи",
];
/// The same, as parts of a heading (phrases, and words of languages
/// written without spaces).
const NOTES_PARTS: &[&str] = &[
    "next steps",
    "to do",
    "to-do",
    "action items",
    "open tasks",
    "follow up",
    "follow-up",
    "メモ",
    "備忘",
    "备忘",
    "笔记",
    "筆記",
    "메모",
    "未完了",
    "申し送り",
    "待办",
    "待辦",
    "할 일",
];

/// Whether a heading says its section keeps notes or tasks to do.
fn of_notes(name: &str) -> bool {
    let h = heading_of(name);
    // (a word ends where Chinese or Japanese text begins: `明日のTODO`)
    h.split(|c: char| !c.is_alphanumeric() || crate::analysis::is_cjk(c))
        .any(|w| NOTES_WORDS.contains(&w))
        || NOTES_PARTS.iter().any(|p| h.contains(p))
}

/// A heading's letters alone: what recurs whatever the time, the number or
/// the emoji around it (`Heartbeat 14:00` and `Heartbeat 18:30` are one).
fn key(name: &str) -> Option<String> {
    let k: String = heading_of(name)
        .chars()
        .filter(|c| c.is_alphabetic())
        .collect();
    (!k.is_empty()).then_some(k)
}

/// The day a section Event is of: its name's first word.
fn day(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or("")
}

/// The time of day a section Event's name gives after its day (`2026-03-16
/// 04:46 Auto-save Checkpoint`).
fn time(name: &str) -> Option<&str> {
    let t = name.split_whitespace().nth(1)?;
    let (h, m) = t.split_once(':')?;
    (h.len() == 2 && m.len() == 2 && (h.to_owned() + m).chars().all(|c| c.is_ascii_digit()))
        .then_some(t)
}

/// Whether a text holds a day's note whole, under the file's title and
/// sections and all (`# 2026-04-09 Daily Memory`, then `## Session 1`,
/// `### Network Explorer v2 Work`, …): a title written every day over
/// what that day did, no log's regular entry, however often the title
/// recurs.
fn whole_note(text: &str) -> bool {
    // (a file's title, `# `, over it: a section of a note is `## ` or
    // deeper, and a routine one may hold sections of its own)
    let titled = text
        .trim_start()
        .lines()
        .next()
        .is_some_and(|l| l.starts_with("# "));
    let mut fence = false;
    titled
        && text
            .trim_start()
            .lines()
            .skip(1)
            .filter(|l| {
                let t = l.trim_start();
                if t.starts_with("```") {
                    fence = !fence;
                }
                !fence && t.starts_with('#') && t.trim_start_matches('#').starts_with(' ')
            })
            .count()
            >= WHOLE_NOTE_HEADINGS
}

/// Headings under its first line that make a text a whole note.
const WHOLE_NOTE_HEADINGS: usize = 2;

/// Whether a section says something of its own (lines that are not
/// headings and say more than "none").
fn substantive(text: &str) -> bool {
    let lines: Vec<&str> = body_lines(text).filter(|l| !says_nothing(l)).collect();
    lines.len() >= MIN_LINES || lines.iter().map(|l| l.chars().count()).sum::<usize>() >= MIN_CHARS
}

/// How often each heading of the memory's daily notes appears: on how
/// many days, in how many sections. Read once, when first asked.
#[derive(Default)]
pub(super) struct Headings(Option<HashMap<String, Seen>>);

/// How often a heading appears.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Seen {
    /// The days whose notes have it.
    pub days: usize,
    /// The times it was written at (`Auto-save Checkpoint` at 4:46, 5:46,
    /// 6:16 … of one day): sections whose names give a time of day, each
    /// day and time once.
    pub times: usize,
}

impl Seen {
    /// Whether a heading is a log's regular entry: written on
    /// [`ROUTINE_MIN_TIMES`] days or more, or at as many times of day. (A
    /// section copied under the same heading, with no time, `Project —
    /// state on 2026-05-10 (2)`, is one entry, not a routine.)
    pub fn routine(self) -> bool {
        self.days >= ROUTINE_MIN_TIMES || self.times >= ROUTINE_MIN_TIMES
    }

    /// How many times it was written, as the report says it.
    pub fn written(self) -> usize {
        self.days.max(self.times)
    }
}

/// A heading written this many times is a log's regular entry (a status
/// written every half hour, a daily summary): what its sections say in
/// `Label: value` lines (`Session status: Idle`) is the state of the
/// moment, and the section is archived (kept whole) like any routine one.
pub const ROUTINE_MIN_TIMES: usize = 3;

impl Headings {
    fn seen(&mut self, nx: &mut Nexus, e: &EventView) -> KipResult<Option<Seen>> {
        let Some(k) = key(&e.name) else {
            return Ok(None);
        };
        if self.0.is_none() {
            self.0 = Some(days_of_headings(nx)?);
        }
        Ok(Some(
            self.0
                .as_ref()
                .and_then(|m| m.get(&k))
                .copied()
                .unwrap_or_default(),
        ))
    }

    /// Whether `e` is a daily note's section of notes or tasks, or with a
    /// heading no other day has (and not written again and again that
    /// day), saying something of its own.
    pub fn of_its_own(&mut self, nx: &mut Nexus, e: &EventView) -> KipResult<bool> {
        if e.class != "daily_note" || !substantive(&e.summary) {
            return Ok(false);
        }
        if of_notes(&e.name) {
            return Ok(true);
        }
        Ok(self
            .seen(nx, e)?
            .is_some_and(|s| s.days <= 1 && !s.routine()))
    }

    /// How often `e`'s heading is written, when `e` is a daily note's
    /// regular entry (see [`Seen::routine`]) and not a section of notes or
    /// tasks.
    pub fn routine(&mut self, nx: &mut Nexus, e: &EventView) -> KipResult<Option<Seen>> {
        if e.class != "daily_note" || of_notes(&e.name) || whole_note(&e.summary) {
            return Ok(None);
        }
        Ok(self.seen(nx, e)?.filter(|s| s.routine()))
    }
}

fn days_of_headings(nx: &mut Nexus) -> KipResult<HashMap<String, Seen>> {
    let v = find(
        nx,
        &format!(
            r#"FIND(?e.name) WHERE {{ ?e {{type: "Event"}} FILTER(?e.attributes.event_class == "daily_note") }} LIMIT {MAX_COUNTED}"#
        ),
        json!({}),
    )?;
    let mut days: HashMap<String, (HashSet<String>, HashSet<String>)> = HashMap::new();
    for name in strs(Some(&v)) {
        if let Some(k) = key(&name) {
            let e = days.entry(k).or_default();
            e.0.insert(day(&name).to_string());
            if let Some(t) = time(&name) {
                e.1.insert(format!("{} {t}", day(&name)));
            }
        }
    }
    Ok(days
        .into_iter()
        .map(|(k, (d, t))| {
            (
                k,
                Seen {
                    days: d.len(),
                    times: t.len(),
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_is_its_letters_without_day_time_or_remark() {
        assert_eq!(
            key("2026-02-07 📊 モデル切り替え（続き）").as_deref(),
            Some("モデル切り替え")
        );
        assert_eq!(
            key("2026-02-01 14:12 Heartbeat").as_deref(),
            Some("heartbeat")
        );
        assert_eq!(
            key("2026-02-01 Heartbeat 18:30"),
            key("2026-02-02 Heartbeat 09:00")
        );
        assert_eq!(key("2026-02-01 12:00"), None);
    }

    #[test]
    fn a_sections_time_is_the_one_its_name_gives_after_its_day() {
        assert_eq!(time("2026-03-16 04:46 Auto-save Checkpoint"), Some("04:46"));
        assert_eq!(time("2026-03-16 Key IDs"), None);
        assert_eq!(time("2026-03-16 4:46 x"), None);
        assert_eq!(time("2026-03-16"), None);
    }

    #[test]
    fn notes_and_tasks_are_named_by_their_heading() {
        assert!(of_notes("2026-02-10 技術メモ"));
        assert!(of_notes("2026-02-05 未完了タスク・次回への申し送り"));
        assert!(of_notes("2026-02-15 明日のTODO (2/21)"));
        assert!(of_notes("2026-03-01 Next steps"));
        assert!(!of_notes("2026-03-01 Memory upkeep"));
        assert!(!of_notes("2026-02-04 概要"));
    }

    #[test]
    fn a_section_of_its_own_says_two_things_or_a_long_one() {
        assert!(substantive(
            "## 技術メモ\n- X APIは有料化済み\n- Brave Search API設定が必要"
        ));
        assert!(!substantive("## 学んだこと\n- なし"));
        assert!(!substantive("## セッションリセット\n- 実施"));
        assert!(substantive(&format!("## Note\n{}", "a".repeat(40))));
        assert!(substantive(
            "## キャンプ場予約設定変更\n- かっぴーから「満員情報いらんよー」→空きがある日程のみ報告に（既存ルール確認）"
        ));
        assert!(!substantive("## 概要\n- 定常運用日。特記事項なし。"));
    }
}
