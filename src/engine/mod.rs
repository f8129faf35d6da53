//! The engine: one `Nexus` owns a SQLite connection and answers KIP
//! requests. The console and the servers are clients of `Nexus::execute`.

pub mod embed;
pub mod export;
pub mod kml;
pub mod kql;
mod limits;
pub mod meta;
mod open;
pub mod overview;
pub mod plan;
pub mod rank;
mod read_log;
pub mod search;
mod tx;
use limits::Limits;
use tx::{InTx, Tx};

use crate::kip::ast::Command;
use crate::kip::{self, ErrorCode, KipError, KipResult};
use crate::protocol::{CommandItem, Method, Outcome, Request, Response};
use crate::store::db::{Backend, Conn, Db};
use rusqlite::Connection;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The capsules a new memory starts from, in load order.
pub const BOOTSTRAP_CAPSULES: &[(&str, &str)] = &[
    ("Genesis", include_str!("../../assets/capsules/Genesis.kip")),
    ("Person", include_str!("../../assets/capsules/Person.kip")),
    ("$self", include_str!("../../assets/capsules/self.kip")),
    ("$system", include_str!("../../assets/capsules/system.kip")),
    ("Event", include_str!("../../assets/capsules/Event.kip")),
    (
        "Preference",
        include_str!("../../assets/capsules/Preference.kip"),
    ),
    ("Insight", include_str!("../../assets/capsules/Insight.kip")),
    (
        "Commitment",
        include_str!("../../assets/capsules/Commitment.kip"),
    ),
    (
        "SleepTask",
        include_str!("../../assets/capsules/SleepTask.kip"),
    ),
    (
        "Experience",
        include_str!("../../assets/capsules/Experience.kip"),
    ),
    (
        "ExperienceStep",
        include_str!("../../assets/capsules/ExperienceStep.kip"),
    ),
    ("Skill", include_str!("../../assets/capsules/Skill.kip")),
    (
        "involves",
        include_str!("../../assets/capsules/involves.kip"),
    ),
    (
        "mentions",
        include_str!("../../assets/capsules/mentions.kip"),
    ),
    (
        "consolidated_to",
        include_str!("../../assets/capsules/consolidated_to.kip"),
    ),
    (
        "derived_from",
        include_str!("../../assets/capsules/derived_from.kip"),
    ),
    (
        "has_step",
        include_str!("../../assets/capsules/has_step.kip"),
    ),
    (
        "caused_by",
        include_str!("../../assets/capsules/caused_by.kip"),
    ),
    (
        "derived_insight",
        include_str!("../../assets/capsules/derived_insight.kip"),
    ),
    (
        "compiled_to",
        include_str!("../../assets/capsules/compiled_to.kip"),
    ),
];

/// A KIP memory: one SQLite database, or one schema of a PostgreSQL
/// database.
pub struct Nexus {
    conn: Conn,
    path: Option<PathBuf>,
    /// Where a PostgreSQL memory is (None: SQLite).
    location: Option<crate::store::postgres::Location>,
    /// Write commands committed by this connection (PostgreSQL has no
    /// count of changed rows per connection).
    writes: u64,
    /// The statement timeout set on the PostgreSQL session.
    pg_timeout: Option<std::time::Duration>,
    /// `total_changes()` when the planner statistics were last refreshed.
    analyzed_at: u64,
    /// Per-command execution limit (`KIP_4001` past it).
    timeout: std::time::Duration,
    /// The embedding provider for semantic and hybrid SEARCH, if any.
    embedder: Option<embed::EmbeddingConfig>,
    /// The audit entry the connection's writes belong to.
    audit: crate::audit::Context,
    /// Inside `atomically`: every command runs in a savepoint of one
    /// write transaction.
    in_group: bool,
    /// Inside a group whose transaction is committed for now (reads run
    /// without the write lock); `resume_group` opens the next one.
    suspended: bool,
    /// When the group's open transaction took the write lock, and the
    /// longest it was held at once since `take_longest_hold`.
    held_since: Option<std::time::Instant>,
    longest_hold: std::time::Duration,
    /// Called while SQLite works (every few thousand VM steps); returning
    /// true interrupts the running command (a cancelled job).
    tick: Option<Tick>,
    /// What the connection's progress handler checks (SQLite): installed
    /// once, armed and disarmed per command.
    limits: std::sync::Arc<Limits>,
    /// Set while answering a protocol request: a write then reports what
    /// it did (or would do) in `last_effects`.
    want_effects: bool,
    last_effects: Option<Value>,
    /// How the last SEARCH ranked (`search::Recall`).
    last_search: std::cell::RefCell<Option<Value>>,
    /// When the write-ahead log's size was last checked (`bound_wal`).
    checked_wal: std::time::Instant,
    /// Writes are maintenance (the sleep cycle's proposals being previewed
    /// or applied): they keep an element's origin (`kml::ORIGIN_KEYS`).
    maintaining: bool,
    /// The elements the last read returned (FIND's bound elements,
    /// SEARCH's hits) and its row count.
    returned: std::cell::RefCell<Returned>,
    /// Set by `execute_served`: each command answered, for the read log.
    serving: Option<Vec<crate::audit::reads::Served>>,
    /// SQLite file: the read log's own connection (`store::read_file`),
    /// opened at first use; read-only when the memory was opened so.
    reads: std::cell::OnceCell<Conn>,
    readonly: bool,
    /// SQLite: `PRAGMA data_version` and the memory's change counter at
    /// the last look, and the version `data_version` reported then.
    seen: std::cell::Cell<(i64, i64, i64)>,
}

/// The longest a SEARCH spends embedding concepts that changed before it
/// ranks (see `exec_as`); the rest waits for the next search or the
/// maintainer.
pub const EMBED_STEP: std::time::Duration = std::time::Duration::from_secs(5);

/// What a read returned, for the read log.
#[derive(Debug, Default, Clone)]
pub(crate) struct Returned {
    pub elements: Vec<i64>,
    pub rows: u64,
    /// How a SEARCH ranked (`search::Recall`), for the answer.
    pub search: Option<Value>,
}

/// A callback SQLite runs while a command works; true interrupts it.
pub type Tick = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// The caller of [`Nexus::kip`] and [`Nexus::kip_with`]: the agent.
fn default_actor() -> &'static crate::protocol::Actor {
    static ACTOR: std::sync::LazyLock<crate::protocol::Actor> =
        std::sync::LazyLock::new(crate::protocol::Actor::default);
    &ACTOR
}

/// What a write would change: every element created, updated or deleted,
/// with its image before and after, computed by running the command and
/// rolling it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub result: Value,
    /// `{element, op, before, after}` per element (ids as `C:12`/`P:40:p`).
    pub changes: Vec<Value>,
    /// Internal id and version of every element the command would update
    /// or delete (a later approval checks that none of them moved), and,
    /// with version -1, the existing endpoints of the links it would create
    /// (which must still exist).
    pub targets: Vec<(i64, i64)>,
}

/// The default per-command execution limit.
/// How many times a command that collided with a concurrent writer runs
/// again (PostgreSQL).
const CONCURRENT_RETRIES: u32 = 5;

pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

impl Nexus {
    /// Re-applies one bootstrap capsule (a core type, predicate, domain or
    /// actor a new memory starts with), audited as `who`. Only inside an
    /// atomic group (the caller's transaction): the sleep cycle restores
    /// missing structure this way, with the bootstrap's right to write
    /// protected definitions.
    pub fn restore_capsule(&mut self, capsule: &str, who: &crate::audit::Who) -> KipResult<()> {
        if !self.in_group {
            return Err(KipError::internal(
                "restore_capsule runs inside an atomic group",
            ));
        }
        let text = BOOTSTRAP_CAPSULES
            .iter()
            .find(|(n, _)| *n == capsule)
            .map(|(_, t)| *t)
            .ok_or_else(|| KipError::not_found(format!("no bootstrap capsule {capsule}")))?;
        let Command::Upsert(stmts) = kip::parse(text, &Map::new())? else {
            return Err(KipError::internal(format!(
                "capsule {capsule} is not an UPSERT"
            )));
        };
        let db = self.conn.db();
        db.savepoint("somnus_restore")?;
        let res = (|| {
            let entry = crate::audit::begin(db, &self.audit, who, text, "UPSERT", None)?;
            let out = kml::WriteCtx::new(db, true).upsert(&stmts);
            self.audit.clear();
            out?;
            crate::audit::finish(db, &self.audit, entry)?;
            Ok(())
        })();
        match res {
            Ok(()) => db.release("somnus_restore", true),
            Err(e) => {
                db.release("somnus_restore", false)?;
                Err(e)
            }
        }
    }

    /// The audit trail, newest first.
    pub fn audit_list(&self, f: &crate::audit::Filter) -> KipResult<Vec<crate::audit::Entry>> {
        crate::audit::list(self.conn.db(), f)
    }

    pub fn audit_entry(
        &self,
        id: i64,
    ) -> KipResult<Option<(crate::audit::Entry, Vec<crate::audit::Change>)>> {
        Ok(match crate::audit::entry(self.conn.db(), id)? {
            Some(e) => {
                let c = crate::audit::changes(self.conn.db(), id)?;
                Some((e, c))
            }
            None => None,
        })
    }

    /// Every recorded change to one element (by KIP id), newest first.
    pub fn element_history(
        &self,
        kip_id: &str,
    ) -> KipResult<Vec<(crate::audit::Entry, crate::audit::Change)>> {
        let Some(n) = crate::store::ids::parse_element_id(kip_id) else {
            return Err(KipError::syntax(format!(
                "{kip_id} is not an element id (C:<n> or P:<n>:<predicate>)"
            )));
        };
        crate::audit::history_of(self.conn.db(), n)
    }

    /// Undoes one audit entry, as a new entry by `who`. Records kept
    /// about entries elsewhere are not told: `review::undo::entry` undoes
    /// and keeps proposal items with it.
    pub fn rollback(&mut self, entry: i64, who: &crate::audit::Who) -> KipResult<i64> {
        self.rollback_following(entry, who, &crate::audit::unfollowed)
    }

    /// [`Nexus::rollback`], telling `follow` of each entry undone inside
    /// the same transaction.
    pub fn rollback_following(
        &mut self,
        entry: i64,
        who: &crate::audit::Who,
        follow: crate::audit::Follow<'_>,
    ) -> KipResult<i64> {
        let db = self.conn.db();
        if self.in_group {
            return crate::audit::rollback(db, &self.audit, entry, who, follow);
        }
        db.begin(true)?;
        let res = crate::audit::rollback(db, &self.audit, entry, who, follow)
            .and_then(|id| crate::store::sync_fts(db).map(|()| id));
        self.audit.clear();
        match res {
            Ok(id) => {
                db.commit()?;
                self.writes += 1;
                Ok(id)
            }
            Err(e) => {
                let _ = db.rollback();
                Err(e)
            }
        }
    }

    /// Runs `f` as one write transaction: every command `f` runs commits
    /// together or not at all (a sleep phase, an approval). Each command is
    /// its own audit entry, tagged with `batch`; a command that fails rolls
    /// back alone (its savepoint) and `f` decides whether to go on.
    pub fn atomically<T>(
        &mut self,
        batch: &str,
        f: impl FnOnce(&mut Nexus) -> KipResult<T>,
    ) -> KipResult<T> {
        if self.in_group {
            return Err(KipError::internal("atomic groups do not nest"));
        }
        self.conn.db().begin(true)?;
        self.in_group = true;
        self.suspended = false;
        self.held_since = Some(std::time::Instant::now());
        self.audit.set_batch(Some(batch.to_string()));
        let out = f(self);
        self.in_group = false;
        self.audit.set_batch(None);
        self.audit.clear();
        self.note_release();
        // left suspended: what it did is committed, nothing is open
        if std::mem::take(&mut self.suspended) {
            if out.is_ok() {
                self.refresh_statistics();
            }
            return out;
        }
        let db = self.conn.db();
        match out {
            Ok(v) => {
                if let Err(e) = crate::store::sync_fts(db).and_then(|()| db.commit()) {
                    let _ = db.rollback();
                    return Err(e);
                }
                self.writes += 1;
                self.refresh_statistics();
                Ok(v)
            }
            Err(e) => {
                let _ = db.rollback();
                Err(e)
            }
        }
    }

    /// Inside `atomically`: commits what the group has done so far, pauses
    /// for `pause` (writers of other connections waiting on the lock get in
    /// then) and starts the group's next transaction. The audit entries keep
    /// the group's batch label, so the group still rolls back as one. A long
    /// job (a sleep phase) calls it between self-contained batches, so it
    /// never holds the write lock for long.
    pub fn checkpoint(&mut self, pause: std::time::Duration) -> KipResult<()> {
        self.suspend_group()?;
        std::thread::sleep(pause);
        self.resume_group()
    }

    /// Inside `atomically`: commits what the group has done so far and
    /// leaves no transaction open, so what follows reads without holding
    /// the write lock (other writers go on). Writes must wait for
    /// `resume_group`.
    pub fn suspend_group(&mut self) -> KipResult<()> {
        if !self.in_group {
            return Err(KipError::internal("suspend outside an atomic group"));
        }
        if self.suspended {
            return Ok(());
        }
        crate::store::sync_fts(self.conn.db())?;
        self.conn.db().commit()?;
        self.writes += 1;
        self.suspended = true;
        self.note_release();
        Ok(())
    }

    fn note_release(&mut self) {
        if let Some(t) = self.held_since.take() {
            self.longest_hold = self.longest_hold.max(t.elapsed());
        }
    }

    /// The longest a group held the write lock at once since the last call
    /// (a sleep phase reports it).
    pub fn take_longest_hold(&mut self) -> std::time::Duration {
        if let Some(t) = self.held_since {
            self.longest_hold = self.longest_hold.max(t.elapsed());
        }
        std::mem::take(&mut self.longest_hold)
    }

    /// Opens the group's next transaction after `suspend_group` (waiting
    /// for the write lock as any writer does).
    pub fn resume_group(&mut self) -> KipResult<()> {
        if self.suspended {
            self.conn.db().begin(true)?;
            self.suspended = false;
            self.held_since = Some(std::time::Instant::now());
        }
        Ok(())
    }

    /// Whether the group's transaction is suspended (see `suspend_group`).
    pub fn is_suspended(&self) -> bool {
        self.suspended
    }

    /// Installs the per-command limits inside SQLite: the execution
    /// deadline and the tick (cancellation). `disarm_limits` removes them.
    /// On PostgreSQL the deadline is the session's statement timeout.
    fn arm_limits(&mut self) -> KipResult<()> {
        match &mut self.conn {
            Conn::Sqlite(_) => self.limits.arm(self.timeout, self.tick.clone()),
            Conn::Postgres(_) => {
                if self.pg_timeout != Some(self.timeout) {
                    self.conn.db().batch(&format!(
                        "SET statement_timeout = {}",
                        self.timeout.as_millis().max(1)
                    ))?;
                    self.pg_timeout = Some(self.timeout);
                }
            }
        }
        Ok(())
    }

    fn disarm_limits(&mut self) {
        self.limits.disarm();
    }

    /// Whether a group started by `atomically` is open.
    pub fn in_group(&self) -> bool {
        self.in_group
    }

    /// The database, for the sleep cycle's own bookkeeping tables (runs,
    /// proposals), written in the same transactions as the graph.
    pub fn db(&self) -> Db<'_> {
        self.conn.db()
    }

    /// Which database the memory lives in.
    pub fn backend(&self) -> Backend {
        self.conn.db().backend()
    }

    /// The SQLite connection, for the benchmark's hand-written SQL and
    /// checks that read a SQLite file directly; on PostgreSQL, an error.
    pub(crate) fn conn(&self) -> KipResult<&Connection> {
        match &self.conn {
            Conn::Sqlite(c) => Ok(c),
            Conn::Postgres(_) => Err(KipError::new(
                ErrorCode::InternalError,
                "this reads a SQLite file directly; the memory is in PostgreSQL",
            )),
        }
    }

    /// The audit context, for rollbacks run inside a group.
    pub(crate) fn audit_ctx(&self) -> &crate::audit::Context {
        &self.audit
    }

    /// Installs (or removes) the callback run while commands work.
    pub fn set_tick(&mut self, tick: Option<Tick>) {
        self.tick = tick;
    }

    /// What `text` would change, without changing anything.
    pub fn preview(&mut self, text: &str, params: &Map<String, Value>) -> KipResult<Preview> {
        let cmd = kip::parse(text, params)?;
        if !cmd.is_write() {
            let (result, _) = self.exec_as(
                &cmd,
                text,
                &crate::audit::Who {
                    actor: "preview".into(),
                    trigger: "preview".into(),
                    reason: None,
                },
                true,
                false,
            )?;
            return Ok(Preview {
                result,
                changes: vec![],
                targets: vec![],
            });
        }
        self.arm_limits()?;
        let db = self.conn.db();
        db.savepoint("somnus_preview")?;
        let saved = self.audit.batch();
        self.audit.set_batch(None);
        let res = (|| -> KipResult<Preview> {
            let who = crate::audit::Who {
                actor: "preview".into(),
                trigger: "preview".into(),
                reason: None,
            };
            let entry = crate::audit::begin(db, &self.audit, &who, text, cmd.kind(), None)?;
            let out = dispatch(
                db,
                &cmd,
                false,
                self.maintaining,
                self.embedder.as_ref(),
                &mut Returned::default(),
                false,
            );
            self.audit.clear();
            let (result, _) = out?;
            crate::audit::finish(db, &self.audit, entry)?;
            let changes = crate::audit::changes(db, entry)?;
            let mut targets: Vec<(i64, i64)> = changes
                .iter()
                .filter(|c| c.op != "insert")
                .filter_map(|c| {
                    c.before
                        .as_ref()
                        .and_then(|b| b.get("version"))
                        .and_then(Value::as_i64)
                        .map(|v| (c.element, v))
                })
                .collect();
            // the endpoints new links hang on: if one of them goes, the
            // change no longer means what it meant
            let created: std::collections::HashSet<i64> = changes
                .iter()
                .filter(|c| c.op == "insert")
                .map(|c| c.element)
                .collect();
            let mut seen: std::collections::HashSet<i64> = targets.iter().map(|t| t.0).collect();
            for c in changes
                .iter()
                .filter(|c| c.op == "insert" && c.table == "propositions")
            {
                for k in ["subject", "object"] {
                    let Some(id) = c
                        .after
                        .as_ref()
                        .and_then(|a| a.get(k))
                        .and_then(Value::as_i64)
                    else {
                        continue;
                    };
                    if created.contains(&id) || !seen.insert(id) {
                        continue;
                    }
                    if self.element_version(id)?.is_some() {
                        targets.push((id, -1));
                    }
                }
            }
            Ok(Preview {
                result,
                changes: changes.iter().map(|c| c.to_json()).collect(),
                targets,
            })
        })();
        self.audit.set_batch(saved);
        let _ = db.release("somnus_preview", false);
        self.disarm_limits();
        res
    }

    /// The current version of an element (concept or proposition), if it
    /// exists.
    pub fn element_version(&self, id: i64) -> KipResult<Option<i64>> {
        self.conn.db().query_i64(
            "SELECT version FROM concepts WHERE id = ?1 UNION ALL SELECT version FROM propositions WHERE id = ?1",
            &[id.into()],
        )
    }

    /// Undoes every change of a group still in effect (`sleep:3`), newest
    /// first, in one transaction.
    pub fn rollback_batch(&mut self, batch: &str, who: &crate::audit::Who) -> KipResult<Vec<i64>> {
        self.rollback_batch_following(batch, who, &crate::audit::unfollowed)
    }

    /// [`Nexus::rollback_batch`], telling `follow` of each entry undone.
    pub fn rollback_batch_following(
        &mut self,
        batch: &str,
        who: &crate::audit::Who,
        follow: crate::audit::Follow<'_>,
    ) -> KipResult<Vec<i64>> {
        let b = batch.to_string();
        self.atomically(&format!("rollback:{batch}"), move |nx| {
            crate::audit::rollback_batch(nx.conn.db(), &nx.audit, &b, who, follow)
        })
    }

    /// Restores the memory as of `to`: an RFC 3339 time, or `#N` (right
    /// after audit entry N). Returns the entry restored to and the new
    /// entries.
    pub fn rollback_to(&mut self, to: &str, who: &crate::audit::Who) -> KipResult<(i64, Vec<i64>)> {
        self.rollback_to_following(to, who, &crate::audit::unfollowed)
    }

    /// [`Nexus::rollback_to`], telling `follow` of each entry undone.
    pub fn rollback_to_following(
        &mut self,
        to: &str,
        who: &crate::audit::Who,
        follow: crate::audit::Follow<'_>,
    ) -> KipResult<(i64, Vec<i64>)> {
        let after = match to.strip_prefix('#') {
            Some(n) => n
                .parse::<i64>()
                .map_err(|_| KipError::syntax(format!("`{to}` is not an entry (#N)")))?,
            None => {
                if chrono::DateTime::parse_from_rfc3339(to).is_err() {
                    return Err(KipError::syntax(format!(
                        "`{to}` is not an RFC 3339 time or #N"
                    )));
                }
                crate::audit::entry_at(self.conn.db(), to)?
            }
        };
        self.atomically(&format!("rollback:after:{after}"), move |nx| {
            let ids = crate::audit::rollback_after(nx.conn.db(), &nx.audit, after, who, follow)?;
            Ok((after, ids))
        })
    }

    /// Drops the audit images of every entry up to `to` (a time, a date or
    /// `#N`); see `audit::prune`.
    pub fn audit_prune(
        &mut self,
        to: &str,
        dry_run: bool,
    ) -> KipResult<(i64, crate::audit::Pruned)> {
        let through = match to.strip_prefix('#') {
            Some(n) => n
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= 0)
                .ok_or_else(|| KipError::syntax(format!("`{to}` is not an entry (#N)")))?,
            None => crate::audit::entry_at(self.conn.db(), &crate::audit::time_bound(to, false)?)?,
        };
        let db = self.conn.db();
        db.begin(true)?;
        match crate::audit::prune(db, through, dry_run) {
            Ok(p) => {
                db.commit()?;
                Ok((through, p))
            }
            Err(e) => {
                let _ = db.rollback();
                Err(e)
            }
        }
    }

    /// Configures (or removes) the embedding provider.
    pub fn set_embedder(&mut self, cfg: Option<embed::EmbeddingConfig>) {
        self.embedder = cfg;
    }

    pub fn embedder(&self) -> Option<&embed::EmbeddingConfig> {
        self.embedder.as_ref()
    }

    /// Embeds every concept whose text changed since its last embedding.
    pub fn sync_embeddings(&mut self) -> KipResult<usize> {
        Ok(self.sync_embeddings_until(None)?.embedded)
    }

    /// `sync_embeddings`, starting no batch after `until`: what was
    /// embedded, and what still waits. (No command's time limit applies.)
    pub fn sync_embeddings_until(
        &mut self,
        until: Option<std::time::Instant>,
    ) -> KipResult<embed::Synced> {
        if let Some(e) = self.embedder.as_mut() {
            e.deadline = None;
        }
        self.embed_changed(until)
    }

    /// Embeds what changed, within the embedder's deadline as it is set.
    fn embed_changed(&mut self, until: Option<std::time::Instant>) -> KipResult<embed::Synced> {
        match &self.embedder {
            Some(cfg) => embed::sync(self.conn.db(), cfg, until),
            None => Ok(embed::Synced::default()),
        }
    }

    /// How the last SEARCH ranked (`search::Recall`).
    pub fn last_search(&self) -> Option<Value> {
        self.last_search.borrow().clone()
    }

    /// Sets the per-command execution limit.
    /// Marks the writes that follow as maintenance (or not): they keep
    /// the origin of every element they update. Returns what it was.
    pub fn set_maintaining(&mut self, on: bool) -> bool {
        std::mem::replace(&mut self.maintaining, on)
    }

    /// The per-command execution limit.
    pub fn timeout(&self) -> std::time::Duration {
        self.timeout
    }

    pub fn set_timeout(&mut self, timeout: std::time::Duration) {
        self.timeout = timeout;
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Read access for verification tools (benchmarks checking what landed).
    pub fn connection_for_checks(&self) -> KipResult<&Connection> {
        self.conn()
    }

    /// Copies this memory whole (graph, audit trail, runs, proposals,
    /// keys) into `target`, a new memory on either database; see
    /// `store::copy`.
    pub fn copy_into(&self, target: &Nexus) -> KipResult<crate::store::copy::Copied> {
        crate::store::copy::copy(
            self.conn.db(),
            target.conn.db(),
            self.reads_db()?,
            target.reads_db()?,
        )
    }

    /// Whether the database closed this connection (PostgreSQL: a restart,
    /// a terminated backend); it answers nothing more and must be opened
    /// again. A SQLite file never goes away under its connection.
    pub fn connection_lost(&self) -> bool {
        match &self.conn {
            Conn::Sqlite(_) => false,
            Conn::Postgres(c) => c.borrow().client.is_closed(),
        }
    }

    /// Where the memory is, to open it again (another connection): none
    /// for a memory held in this process only.
    pub fn place(&self) -> Option<crate::store::place::Place> {
        use crate::store::place::Place;
        match (&self.path, &self.location) {
            (Some(p), _) => Some(Place::File(p.clone())),
            (None, Some(l)) => Some(Place::Postgres(l.clone())),
            (None, None) => None,
        }
    }

    /// Where the memory is, for people: the file, or the PostgreSQL
    /// database and memory (password hidden).
    pub fn describe_location(&self) -> String {
        self.place()
            .map_or_else(|| "(in memory)".to_string(), |p| p.to_string())
    }

    /// Rows this connection has changed since it opened: with
    /// [`Nexus::data_version`] (others' commits), whether anything changed.
    pub fn own_changes(&self) -> u64 {
        match &self.conn {
            Conn::Sqlite(c) => c.total_changes(),
            Conn::Postgres(_) => self.writes,
        }
    }

    /// Changes whenever another connection (another process: a server, a
    /// sleep cycle) commits to this memory.
    pub fn data_version(&self) -> i64 {
        match &self.conn {
            // a commit elsewhere moves SQLite's `data_version`; it changed
            // the memory when the counter of its tables moved too (migration
            // 21): a read log's commit alone is no change
            Conn::Sqlite(c) => {
                let dv: i64 = c
                    .query_row("PRAGMA data_version", [], |r| r.get(0))
                    .unwrap_or(0);
                let Ok(n) = c
                    .prepare_cached("SELECT n FROM memory_changes")
                    .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
                else {
                    // a memory opened read-only before migration 21
                    return dv;
                };
                let (seen_dv, seen_n, v) = self.seen.get();
                let v = if dv != seen_dv && n != seen_n {
                    v + 1
                } else {
                    v
                };
                self.seen.set((dv, n, v));
                v
            }
            // the write statements other sessions committed (migration 15)
            Conn::Postgres(_) => self
                .conn
                .db()
                .query_i64(
                    "SELECT COALESCE(SUM(n), 0)::bigint FROM changes WHERE pid <> pg_backend_pid()",
                    &[],
                )
                .ok()
                .flatten()
                .unwrap_or(0),
        }
    }

    /// A handle that interrupts the command running now (from any thread).
    pub fn interrupt_handle(&self) -> Interrupter {
        match &self.conn {
            Conn::Sqlite(c) => Interrupter::Sqlite(c.get_interrupt_handle()),
            Conn::Postgres(c) => Interrupter::Postgres(c.borrow().client.cancel_token()),
        }
    }

    pub fn schema_overview(&self) -> KipResult<overview::SchemaOverview> {
        overview::schema_overview(self.conn.db())
    }

    pub fn concept_index(&self, limit: usize) -> KipResult<Vec<overview::ConceptEntry>> {
        overview::concept_index(self.conn.db(), limit)
    }

    pub fn neighbourhood(&self, id: i64, cap: usize) -> KipResult<Option<overview::Neighbourhood>> {
        overview::neighbourhood(self.conn.db(), id, cap)
    }

    pub fn history(&self, limit: usize) -> KipResult<Vec<overview::HistoryEntry>> {
        overview::history(self.conn.db(), limit)
    }

    pub fn history_add(&self, command: &str, parameters: &str) -> KipResult<()> {
        overview::history_add(self.conn.db(), command, parameters)
    }

    /// Answers one `execute_kip` / `execute_kip_readonly` request.
    pub fn execute(&mut self, req: &Request) -> Response {
        let readonly = req.method == Method::ExecuteKipReadonly;
        let args = &req.args;
        match (&args.command, &args.commands) {
            (Some(_), Some(_)) => Response::error(KipError::syntax(
                "give exactly one of `command` and `commands`, not both",
            )),
            (None, None) => Response::error(KipError::syntax(
                "the request has no `command` (or `commands`)",
            )),
            (Some(c), None) => Response::Single(
                self.served(c, &args.parameters, readonly, args.dry_run, &req.actor)
                    .0,
            ),
            (None, Some(list)) if list.len() > kip::limits::MAX_BATCH => Response::error(
                KipError::exhausted(format!(
                    "the batch has {} commands; the limit is {}",
                    list.len(),
                    kip::limits::MAX_BATCH
                ))
                .with_hint("Send the commands in several batches."),
            ),
            (None, Some(list)) => {
                let mut out = Vec::new();
                for item in list {
                    let (text, params) = match item {
                        CommandItem::Text(t) => (t.as_str(), args.parameters.clone()),
                        CommandItem::WithParams {
                            command,
                            parameters,
                        } => {
                            let mut p = args.parameters.clone();
                            for (k, v) in parameters {
                                p.insert(k.clone(), v.clone());
                            }
                            (command.as_str(), p)
                        }
                    };
                    // a command that does not parse never ran: the batch goes on
                    let (o, is_write) =
                        self.served(text, &params, readonly, args.dry_run, &req.actor);
                    let stop = is_write && o.is_err();
                    out.push(o);
                    if stop {
                        break;
                    }
                }
                Response::Batch(out)
            }
        }
    }

    /// `execute`, with each command it answered as the read log keeps it.
    pub fn execute_served(
        &mut self,
        req: &Request,
    ) -> (Response, Vec<crate::audit::reads::Served>) {
        self.serving = Some(Vec::new());
        let r = self.execute(req);
        (r, self.serving.take().unwrap_or_default())
    }

    /// One command of a request: parsed, run, and (while serving) logged.
    /// Says whether it was a write.
    fn served(
        &mut self,
        text: &str,
        params: &Map<String, Value>,
        readonly: bool,
        dry_run: bool,
        actor: &crate::protocol::Actor,
    ) -> (Outcome, bool) {
        let started = std::time::Instant::now();
        if self.serving.is_some() {
            *self.returned.borrow_mut() = Returned::default();
        }
        let (o, kind, is_write) = match kip::parse(text, params) {
            Ok(cmd) => (
                self.run_parsed(&cmd, text, readonly, dry_run, actor),
                cmd.kind(),
                cmd.is_write(),
            ),
            Err(e) => (Outcome::Err(e), "", false),
        };
        if let Some(log) = self.serving.as_mut() {
            let got = std::mem::take(&mut *self.returned.borrow_mut());
            let error = match &o {
                Outcome::Err(e) => Some(format!("{} {}", e.code.code(), e.message)),
                _ => None,
            };
            // (its secrets are masked as the log writes it, off the
            // request's path: `audit::reads::record_rows`)
            log.push(crate::audit::reads::Served {
                kind: kind.to_string(),
                command: text.to_string(),
                parameters: Value::Object(params.clone()),
                elements: if error.is_none() {
                    got.elements
                } else {
                    Vec::new()
                },
                rows: got.rows,
                micros: started.elapsed().as_micros().min(u64::MAX as u128) as u64,
                error,
                dry_run,
            });
        }
        (o, is_write)
    }

    /// Convenience: one read-write command without parameters.
    pub fn kip(&mut self, command: &str) -> Outcome {
        self.run(command, &Map::new(), false, false, default_actor())
    }

    /// Convenience: one read-write command with parameters (a JSON object).
    pub fn kip_with(&mut self, command: &str, params: Value) -> Outcome {
        let params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        self.run(command, &params, false, false, default_actor())
    }

    fn run(
        &mut self,
        text: &str,
        params: &Map<String, Value>,
        readonly: bool,
        dry_run: bool,
        actor: &crate::protocol::Actor,
    ) -> Outcome {
        self.served(text, params, readonly, dry_run, actor).0
    }

    fn run_parsed(
        &mut self,
        cmd: &Command,
        text: &str,
        readonly: bool,
        dry_run: bool,
        actor: &crate::protocol::Actor,
    ) -> Outcome {
        let who = crate::audit::Who {
            actor: actor.id.clone(),
            trigger: actor.trigger.clone(),
            reason: actor.reason.clone(),
        };
        self.want_effects = true;
        self.last_effects = None;
        *self.last_search.borrow_mut() = None;
        let res = self.exec_as(cmd, text, &who, readonly, dry_run);
        self.want_effects = false;
        match res {
            Ok((result, next_cursor)) => Outcome::Ok {
                result,
                next_cursor,
                effects: self.last_effects.take(),
                search: self.last_search.borrow_mut().take(),
            },
            Err(e) => Outcome::Err(e),
        }
    }

    /// Keeps the query planner's statistics current as the memory grows:
    /// a sampled `ANALYZE` (milliseconds) once enough rows changed.
    /// (PostgreSQL's autovacuum keeps its own.)
    fn refresh_statistics(&mut self) {
        self.bound_wal();
        let Conn::Sqlite(conn) = &self.conn else {
            return;
        };
        let changes = conn.total_changes();
        let rows: u64 = conn
            .query_row(
                "SELECT (SELECT MAX(id) FROM concepts) + (SELECT COUNT(*) FROM meta)",
                [],
                |r| r.get::<_, Option<i64>>(0),
            )
            .ok()
            .flatten()
            .unwrap_or(0) as u64;
        if changes.saturating_sub(self.analyzed_at) > 2_000.max(rows / 10) {
            let _ = conn.execute_batch("ANALYZE");
            // Each write command adds one full-text segment; folding them
            // together (a bounded amount of work) keeps SEARCH from
            // probing a growing pile of small segments.
            let _ = conn
                .execute_batch("INSERT INTO concept_fts(concept_fts, rank) VALUES('merge', -4000)");
            self.analyzed_at = changes;
        }
    }

    /// Keeps the write-ahead log bounded: at most every
    /// `crate::store::WAL_CHECK_SECS`, after a committed write, a log past
    /// `crate::store::WAL_TRUNCATE_BYTES` is checkpointed and truncated to
    /// nothing. It never waits: while a reader still reads an older
    /// snapshot the checkpoint gives up at once and the next check tries
    /// again (SQLite's own automatic checkpoints go on meanwhile, and
    /// `journal_size_limit` trims the log whenever it restarts).
    fn bound_wal(&mut self) {
        if !crate::store::wal_bound()
            || self.checked_wal.elapsed()
                < std::time::Duration::from_secs(crate::store::WAL_CHECK_SECS)
        {
            return;
        }
        self.checked_wal = std::time::Instant::now();
        let (Conn::Sqlite(conn), Some(path)) = (&mut self.conn, &self.path) else {
            return;
        };
        let mut wal = path.clone().into_os_string();
        wal.push("-wal");
        let big = std::fs::metadata(&wal).is_ok_and(|m| m.len() > crate::store::WAL_TRUNCATE_BYTES);
        if big {
            crate::store::truncate_wal(conn);
        }
    }

    /// Executes a parsed command as the default agent actor.
    pub fn exec(
        &mut self,
        cmd: &Command,
        readonly: bool,
        dry_run: bool,
    ) -> KipResult<(Value, Option<String>)> {
        let who = crate::audit::Who {
            actor: "agent".into(),
            trigger: "execute_kip".into(),
            reason: None,
        };
        self.exec_as(cmd, cmd.kind(), &who, readonly, dry_run)
    }

    /// Executes a parsed command; a write is recorded in the audit trail
    /// as `who` running `text`.
    /// `exec_as` a write, with what it did: `{"created", "updated",
    /// "deleted", "elements"}` (None when it changed nothing).
    pub fn exec_with_effects(
        &mut self,
        cmd: &Command,
        text: &str,
        who: &crate::audit::Who,
    ) -> KipResult<(Value, Option<Value>)> {
        self.want_effects = true;
        self.last_effects = None;
        let res = self.exec_as(cmd, text, who, false, false);
        self.want_effects = false;
        let effects = self.last_effects.take();
        res.map(|(v, _)| (v, effects))
    }

    pub fn exec_as(
        &mut self,
        cmd: &Command,
        text: &str,
        who: &crate::audit::Who,
        readonly: bool,
        dry_run: bool,
    ) -> KipResult<(Value, Option<String>)> {
        if readonly && cmd.is_write() {
            return Err(KipError::new(
                ErrorCode::ImmutableTarget,
                format!("{} is not allowed on execute_kip_readonly", cmd.kind()),
            )
            .with_hint("Use execute_kip for KML commands (UPSERT, UPDATE, MERGE, DELETE)."));
        }
        // A read runs in a transaction that is always rolled back, so
        // nothing it could touch survives it (a FIND on SQLite that is one
        // statement, `SELECT`s only, runs without one: `exec_once`). (No
        // `PRAGMA query_only` toggle: a flag pragma expires every prepared
        // statement.)
        // Provider calls count against the command's time limit.
        if let Some(e) = self.embedder.as_mut() {
            e.deadline = Some(std::time::Instant::now() + self.timeout);
        }
        // A semantic or hybrid SEARCH on a read-write request first embeds
        // what changed since the last one, for at most `EMBED_STEP` or half
        // the command's time: the rest waits for the next search or the
        // maintainer, and the answer says how many concepts were left out.
        // A read-only request writes nothing, not even vectors (a server's
        // readers never wait for the write lock). A provider that fails
        // here is reported by the search itself, which then ranks by
        // keyword.
        if !readonly
            && let Command::Search(s) = cmd
            && !self.in_group
            && search::effective_mode(s, self.embedder.as_ref())
                != crate::kip::ast::SearchMode::Keyword
        {
            let until = std::time::Instant::now() + EMBED_STEP.min(self.timeout / 2);
            if let Err(e) = self.embed_changed(Some(until))
                && e.code == ErrorCode::ExecutionTimeout
            {
                return Err(e);
            }
        }
        self.arm_limits()?;
        let armed_at = std::time::Instant::now();
        let res = if self.in_group {
            self.exec_in_savepoint(cmd, text, who, dry_run)
        } else {
            self.exec_retrying(cmd, text, who, dry_run)
        };
        self.disarm_limits();
        let res = res.map_err(|e: KipError| {
            if e.code != ErrorCode::ExecutionTimeout {
                return e;
            }
            let took = armed_at.elapsed();
            if took < self.timeout {
                // stopped before its limit: someone cancelled it (the
                // console's Esc, a sleep cycle's cancel)
                KipError::new(
                    ErrorCode::ExecutionTimeout,
                    format!("{} cancelled after {:.1} s", cmd.kind(), took.as_secs_f64()),
                )
                .with_hint("Cancelled on request; nothing it would have written was kept.")
            } else {
                KipError::new(
                    ErrorCode::ExecutionTimeout,
                    format!(
                        "{} exceeded the {:?} execution limit",
                        cmd.kind(),
                        self.timeout
                    ),
                )
            }
        });
        if res.is_ok() && cmd.is_write() && !dry_run && !self.in_group {
            self.refresh_statistics();
        }
        res
    }

    /// One command in a transaction of its own. On PostgreSQL a command
    /// that collided with a concurrent writer of the same element was
    /// rolled back whole; it runs again (a few times, after a short
    /// random pause), then reports the collision.
    fn exec_retrying(
        &mut self,
        cmd: &Command,
        text: &str,
        who: &crate::audit::Who,
        dry_run: bool,
    ) -> KipResult<(Value, Option<String>)> {
        let mut attempt = 0u32;
        loop {
            match self.exec_once(cmd, text, who, dry_run) {
                Err(e)
                    if attempt < CONCURRENT_RETRIES
                        && crate::store::postgres::is_concurrent_write(&e) =>
                {
                    attempt += 1;
                    let pause = 2 + (std::process::id() as u64 * 7 + u64::from(attempt) * 13) % 10;
                    std::thread::sleep(std::time::Duration::from_millis(
                        pause * u64::from(attempt),
                    ));
                }
                other => return other,
            }
        }
    }

    fn exec_once(
        &mut self,
        cmd: &Command,
        text: &str,
        who: &crate::audit::Who,
        dry_run: bool,
    ) -> KipResult<(Value, Option<String>)> {
        // Another process may hold the write lock past the busy timeout;
        // `begin` retries a few times to ride out a long commit elsewhere.
        // (An error below drops `tx`, which rolls it back.)
        // A FIND on SQLite begins its read transaction itself, and only
        // when it runs more than one statement (`kql::execute`).
        let unsnapped = matches!(cmd, Command::Find(_)) && self.conn.db().outside_transaction();
        let tx = if unsnapped {
            Tx::unbegun(self.conn.db())
        } else {
            Tx::begin(self.conn.db(), cmd.is_write())?
        };
        // a write's audit entry closes last: its statement carries the
        // commit (nothing is decided after it)
        let commit_at_close = cmd.is_write() && !dry_run;
        let (out, effects) = self.dispatch_recorded(
            tx.db,
            cmd,
            text,
            who,
            dry_run,
            InTx::own(commit_at_close, unsnapped),
        )?;
        if dry_run || !cmd.is_write() {
            tx.rollback()?;
        } else {
            crate::store::sync_fts(tx.db)?;
            tx.commit()?;
            self.writes += 1;
        }
        self.last_effects = effects;
        Ok(out)
    }

    /// Runs a command inside the caller's transaction or savepoint, a write
    /// under an audit entry of its own; with the effects it had when they
    /// are wanted. A dry run records too, so it can say what it would
    /// write; its transaction is rolled back with the entry.
    /// With [`InTx::CommitAtClose`], the statement closing the entry
    /// carries the transaction's commit ([`Db::commit_with_next`]); what is
    /// read after it (a sweep's effects) cannot fail the write any more:
    /// effects that cannot be read then are left out.
    fn dispatch_recorded(
        &self,
        db: Db<'_>,
        cmd: &Command,
        text: &str,
        who: &crate::audit::Who,
        dry_run: bool,
        in_tx: InTx,
    ) -> KipResult<Answered> {
        let commit_at_close = in_tx == InTx::CommitAtClose;
        let unsnapped = in_tx == InTx::Unbegun;
        let record = cmd.is_write() && (!dry_run || self.want_effects);
        // (on PostgreSQL the entry opens with the command's first
        // statement)
        let entry = if record {
            Some(crate::audit::begin_deferred(
                db,
                &self.audit,
                who,
                text,
                cmd.kind(),
            )?)
        } else {
            None
        };
        // (`$system` is never a caller's: keys, headers and --actor refuse it)
        let maintainer = who.actor == "$system" || self.maintaining;
        let mut returned = Returned::default();
        let out = dispatch(
            db,
            cmd,
            dry_run,
            maintainer,
            self.embedder.as_ref(),
            &mut returned,
            unsnapped,
        );
        *self.last_search.borrow_mut() = returned.search.take();
        if self.serving.is_some() {
            *self.returned.borrow_mut() = returned;
        }
        self.audit.clear();
        let out = out?;
        let mut effects = None;
        if let Some(e) = entry {
            // (on PostgreSQL the statement that closes the entry reads
            // what its effects need)
            let listed = self.want_effects.then(|| effects_listed(dry_run));
            let (span, pre) =
                crate::audit::finish_reading(db, &self.audit, e, listed, commit_at_close)?;
            if let Some(listed) = listed {
                effects = match crate::audit::effects_read(db, span, listed, pre) {
                    Ok(v) => Some(v),
                    // committed: the write stands, its effects unsaid
                    Err(_) if db.committed() => None,
                    Err(e) => return Err(e),
                };
            }
        }
        Ok((out, effects))
    }

    /// One command inside an open group: a savepoint, so a failing command
    /// undoes only itself.
    fn exec_in_savepoint(
        &mut self,
        cmd: &Command,
        text: &str,
        who: &crate::audit::Who,
        dry_run: bool,
    ) -> KipResult<(Value, Option<String>)> {
        let db = self.conn.db();
        db.savepoint("somnus_cmd")?;
        let res = self
            .dispatch_recorded(db, cmd, text, who, dry_run, InTx::Savepoint)
            .map(|(out, effects)| {
                self.last_effects = effects;
                out
            });
        let keep = res.is_ok() && cmd.is_write() && !dry_run;
        db.release("somnus_cmd", keep)?;
        res
    }
}

impl Drop for Nexus {
    fn drop(&mut self) {
        if let Conn::Sqlite(c) = &self.conn {
            let _ = c.execute_batch("PRAGMA optimize;");
        }
    }
}

/// Interrupts a running command from another thread.
pub enum Interrupter {
    Sqlite(rusqlite::InterruptHandle),
    Postgres(tokio_postgres::CancelToken),
}

impl Interrupter {
    pub fn interrupt(&self) {
        match self {
            Interrupter::Sqlite(h) => h.interrupt(),
            Interrupter::Postgres(t) => {
                // (a request to the server on a connection of its own)
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    let _ = rt.block_on(t.cancel_query(tokio_postgres::NoTls));
                }
            }
        }
    }
}

/// A command's answer (its result and next cursor) and, when wanted, the
/// effects a write had.
type Answered = ((Value, Option<String>), Option<Value>);

/// How many elements a write's `effects` names: a dry run is a preview, so
/// it names more; a write names a few and counts the rest, so reporting
/// costs little beside the write.
fn effects_listed(dry_run: bool) -> usize {
    if dry_run { 200 } else { 25 }
}

fn dispatch(
    conn: Db<'_>,
    cmd: &Command,
    dry_run: bool,
    maintainer: bool,
    embedder: Option<&embed::EmbeddingConfig>,
    returned: &mut Returned,
    unsnapped: bool,
) -> KipResult<(Value, Option<String>)> {
    match cmd {
        Command::Find(q) => {
            let out = kql::execute(conn, q, unsnapped)?;
            returned.elements = out.elements;
            returned.rows = out.rows;
            Ok((out.result, out.next_cursor))
        }
        Command::Upsert(stmts) => {
            let mut w = kml::WriteCtx::new(conn, false);
            w.maintainer = maintainer;
            let rep = w.upsert(stmts)?;
            Ok((kml::upsert_json(&rep, dry_run), None))
        }
        Command::Describe(d) => {
            let out = meta::describe(conn, d, embedder)?;
            Ok((out.result, out.next_cursor))
        }
        Command::Delete(d) => Ok((kml::delete(conn, d)?, None)),
        Command::Update(u) => Ok((kml::update(conn, u)?, None)),
        Command::Merge(m) => Ok((kml::merge(conn, m)?, None)),
        Command::Search(s) => {
            let (v, recall) = search::search(conn, s, embedder)?;
            returned.search = Some(recall.to_json());
            let hits = v.as_array().map(Vec::as_slice).unwrap_or_default();
            returned.rows = hits.len() as u64;
            returned.elements = hits
                .iter()
                .filter_map(|h| h.get("id").and_then(Value::as_str))
                .filter_map(crate::store::ids::parse_element_id)
                .collect();
            Ok((v, None))
        }
        Command::Export(x) => {
            let out = export::export(conn, x)?;
            Ok((out.result, out.next_cursor))
        }
    }
}
