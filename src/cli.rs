//! Command-line interface.

mod bench;
mod reads;
mod reflect;
use reads::{ReadLogArgs, ReadsCmd};

use crate::Nexus;
use crate::conformance;
use crate::protocol::{Arguments, Method, Request};
use crate::store::place::Place;
use clap::{Args, Parser, Subcommand};
use color_eyre::eyre::{Result, WrapErr, eyre};
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum KeysCmd {
    /// Make a key and print it once (only its digest is kept)
    Add {
        /// The caller's name: its identity in the audit trail
        name: String,
        /// reader (execute_kip_readonly only), agent (reads and writes) or subagent (writes become proposals)
        #[arg(long)]
        role: String,
    },
    /// The keys: names, roles, when made, whether revoked (never the keys)
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key at once (servers stop accepting it within a second)
    Revoke { name: String },
}

#[derive(Subcommand, Debug)]
pub enum ProposalsCmd {
    /// Proposals, newest first
    List {
        /// pending, partially_applied, applied, rejected, rolled_back
        #[arg(long)]
        status: Option<String>,
        /// Only proposals from this source: `sleep` (every sleep run), `sleep:N`, or a sub-agent's key name
        #[arg(long)]
        source: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// One proposal: its items, rationale, evidence and before/after preview
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Approve all pending items, or --items 1,3, or --class connection; --edit N=FILE replaces item N's commands
    Approve {
        id: i64,
        #[arg(long, value_delimiter = ',', conflicts_with = "class")]
        items: Option<Vec<i64>>,
        /// Only the pending items of this class (merge, archive, connection, …)
        #[arg(long)]
        class: Option<String>,
        #[arg(long)]
        edit: Vec<String>,
        #[arg(long, default_value = "operator")]
        by: String,
    },
    /// Reject all undecided items, or --items 1,3, or --class connection, with a reason (kept)
    Reject {
        id: i64,
        #[arg(long)]
        reason: String,
        #[arg(long, value_delimiter = ',', conflicts_with = "class")]
        items: Option<Vec<i64>>,
        /// Only the undecided items of this class
        #[arg(long)]
        class: Option<String>,
        #[arg(long, default_value = "operator")]
        by: String,
    },
    /// Re-check stale items against the memory as it is now
    Refresh { id: i64 },
    /// Undo an approval (every change it applied)
    Rollback {
        id: i64,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Show policies, or set CLASS to auto (applied without review) or review
    Policy {
        class: Option<String>,
        mode: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum ContradictionsCmd {
    /// Contradictions, newest first
    List {
        /// open, resolved, dismissed
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Resolve one: keep-newer, keep-older, both-valid, merge, needs-context
    Resolve {
        id: i64,
        verdict: String,
        #[arg(long)]
        note: Option<String>,
        #[arg(long, default_value = "operator")]
        by: String,
    },
}

/// `somnus rpc` writes its log after this many requests (or a second).
const RPC_LOG_BATCH: usize = 64;

/// When the memory maintains itself (`serve`, `mcp`, `maintain`).
#[derive(Args, Debug, Clone)]
pub struct MaintenanceArgs {
    /// Quiet time after the last agent write before a daydream, in seconds
    #[arg(long, default_value_t = 1800)]
    idle_secs: u64,
    /// Unscored Events that make a daydream worth running
    #[arg(long, default_value_t = 5)]
    daydream_events: u64,
    /// A full cycle at least this often, in hours (one overdue at start runs then)
    #[arg(long, default_value_t = 12.0)]
    full_every_hours: f64,
    /// A quick cycle for a health target over its limit at most this often, in minutes
    #[arg(long, default_value_t = 60.0)]
    quick_every_mins: f64,
    /// Agent writes since the last cycle that make an ended session a burst (its post-session cycle is quick, not a daydream)
    #[arg(long, default_value_t = 50)]
    burst_writes: u64,
    /// How often to check what is due, in seconds
    #[arg(long, default_value_t = 30.0)]
    poll_secs: f64,
    /// A cycle running longer than this is cancelled (its running phase rolled back), in seconds
    #[arg(long, default_value_t = 1800)]
    budget_secs: u64,
}

impl MaintenanceArgs {
    fn settings(&self) -> Result<crate::sleep::maintainer::Settings> {
        if !(self.full_every_hours.is_finite() && self.full_every_hours > 0.0) {
            return Err(eyre!(
                "--full-every-hours must be a positive number of hours"
            ));
        }
        if !(self.quick_every_mins.is_finite() && self.quick_every_mins >= 0.0) {
            return Err(eyre!(
                "--quick-every-mins must be a number of minutes, 0 or more"
            ));
        }
        if !(self.poll_secs.is_finite() && self.poll_secs >= 0.05 && self.poll_secs <= 86_400.0) {
            return Err(eyre!("--poll-secs must be between 0.05 and 86400"));
        }
        Ok(crate::sleep::maintainer::Settings {
            schedule: crate::sleep::schedule::Schedule {
                idle: std::time::Duration::from_secs(self.idle_secs),
                events: self.daydream_events,
                full_every: std::time::Duration::from_secs_f64(
                    (self.full_every_hours * 3600.0).min(1e9),
                ),
                quick_every: std::time::Duration::from_secs_f64(
                    (self.quick_every_mins * 60.0).min(1e9),
                ),
                burst: self.burst_writes.max(1),
                ..Default::default()
            },
            budget: std::time::Duration::from_secs(self.budget_secs.max(1)),
            poll: std::time::Duration::from_secs_f64(self.poll_secs),
        })
    }
}

/// The flag, else $SOMNUS_MAINTENANCE, else on.
fn maintenance_choice(flag: Option<String>) -> String {
    flag.or_else(|| {
        std::env::var("SOMNUS_MAINTENANCE")
            .ok()
            .filter(|v| !v.is_empty())
    })
    .unwrap_or_else(|| "on".into())
}

/// `--maintenance on|off`.
fn maintenance_on(v: &str) -> Result<bool> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(eyre!("--maintenance is on or off, not `{other}`")),
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "somnus",
    version,
    about = "A KIP memory engine and console for AI agents"
)]
pub struct Cli {
    /// The memory: a SQLite file, or a PostgreSQL database as postgres://user@host/dbname (a password: in $PGPASSWORD, not the URL, which `ps` shows)
    /// (default: $SOMNUS_DB, else ~/.local/share/somnus/memory.db)
    #[arg(long, global = true)]
    pub db: Option<String>,
    /// Which memory of a PostgreSQL database (default: $SOMNUS_MEMORY, else the URL's
    /// memory=NAME, else `main`); each lives in a schema of its own
    #[arg(long, global = true)]
    pub memory: Option<String>,
    /// Accept a SQLite file that another program created (somnus adds its tables)
    #[arg(long, global = true)]
    pub adopt: bool,
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run one KIP command and print the JSON response
    Kip {
        /// Parameters for :placeholders, as a JSON object
        #[arg(long)]
        params: Option<String>,
        /// Use execute_kip_readonly (writes are refused)
        #[arg(long)]
        readonly: bool,
        /// Validate and execute without committing
        #[arg(long)]
        dry_run: bool,
        /// The KIP command text (`-` reads it from standard input)
        command: String,
    },
    /// Answer one JSON request per line on standard input
    Rpc {
        #[command(flatten)]
        read_log: ReadLogArgs,
    },
    /// Serve the memory to an agent over MCP on stdio (tools execute_kip, execute_kip_readonly)
    Mcp {
        /// The actor the agent's writes are attributed to (without a key)
        #[arg(long, default_value = "mcp-agent")]
        actor: String,
        /// The caller's key (`somnus keys add`; default: $SOMNUS_KEY): its name is the actor, its role what it may do. Prefer $SOMNUS_KEY: a command line is visible to every user of the machine in `ps`
        #[arg(long)]
        key: Option<String>,
        /// Keep the memory maintained while serving (on, off; default: $SOMNUS_MAINTENANCE, else on)
        #[arg(long)]
        maintenance: Option<String>,
        #[command(flatten)]
        schedule: MaintenanceArgs,
        #[command(flatten)]
        read_log: ReadLogArgs,
    },
    /// Serve the memory to agents over HTTP (POST /kip, GET /)
    Serve {
        /// Address to listen on (loopback unless an API key is set)
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: std::net::SocketAddr,
        /// Require `Authorization: Bearer KEY` (default: $SOMNUS_API_KEY; prefer it: a command line is visible to every user of the machine in `ps`)
        #[arg(long)]
        api_key: Option<String>,
        /// Largest request body in bytes
        #[arg(long, default_value_t = 1 << 20)]
        max_body: usize,
        /// Reader connections (reads never wait for the writer)
        #[arg(long, default_value_t = 4)]
        readers: usize,
        /// Per-command execution limit in milliseconds (KIP_4001 past it)
        #[arg(long, default_value_t = 30_000)]
        timeout_ms: u64,
        /// Connections served at once (more wait in the listen queue)
        #[arg(long, default_value_t = 512)]
        max_connections: usize,
        /// A request's header must arrive within this many milliseconds (idle connections close after it too)
        #[arg(long, default_value_t = 10_000)]
        header_timeout_ms: u64,
        /// A request's body must arrive within this many milliseconds
        #[arg(long, default_value_t = 30_000)]
        body_timeout_ms: u64,
        /// Keep the memory maintained while serving (on, off; default: $SOMNUS_MAINTENANCE, else on)
        #[arg(long)]
        maintenance: Option<String>,
        #[command(flatten)]
        schedule: MaintenanceArgs,
        #[command(flatten)]
        read_log: ReadLogArgs,
    },
    /// Create the demo memory (at --db, else demo.db beside the default memory) and open the console on it
    Demo {
        /// Only create the memory; do not open the console
        #[arg(long)]
        no_console: bool,
    },
    /// Generate a memory and measure the engine on it (Markdown table)
    Bench {
        /// Concepts to generate (three propositions each)
        #[arg(long, default_value_t = 1_000_000)]
        concepts: usize,
        /// Runs per query workload
        #[arg(long, default_value_t = 200)]
        runs: usize,
        /// Measure the console instead (with --db: opening that memory to its first frame)
        #[arg(long)]
        console: bool,
        /// Load-test the HTTP server instead (8 clients × 5,000 requests)
        #[arg(long)]
        server: bool,
        /// With --server: many writers side by side, one somnus serve on a SQLite file against
        /// two on one memory in this PostgreSQL database (postgres://user@host/db); 8 writers,
        /// --runs UPSERTs each. With --compare: somnus and hand-written SQL on a throwaway
        /// memory in this database too
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// With --server: the same load again on 20,000 generated Events more while full sleep cycles run on the same database throughout (as the servers' maintainer runs them), side by side with the load alone
        #[arg(long, requires = "server")]
        during_sleep: bool,
        /// Measure how large SQLite's write-ahead log grows under sustained writes while sleep cycles and long reads hold old snapshots, and how large it stays: the log's bound off and on, side by side (4 writers × --runs UPSERTs, on 20,000 Events)
        #[arg(long)]
        wal: bool,
        /// Measure a full sleep cycle instead, over this many generated Events (four propositions each); several sizes (`--sleep 75000,300000`) are measured one after the other in one run, with how the cycle's time grows against the Events
        #[arg(long, value_delimiter = ',')]
        sleep: Vec<usize>,
        /// Run the KIP workloads side by side: somnus, hand-written SQL on the same file, and (built with `--features reference`) the reference engine anda_cognitive_nexus 0.11.0
        #[arg(long)]
        compare: bool,
        /// Measure SEARCH's recall on a conversational memory instead, beside a textbook BM25
        /// baseline (recall@5 and @10 of the evidence turns, by question category)
        #[arg(long)]
        recall: bool,
        /// With --recall: conversations from this file in LoCoMo's layout instead of the
        /// generated ones
        #[arg(long, requires = "recall", value_name = "FILE")]
        dataset: Option<std::path::PathBuf>,
        /// Measure the sleep cycle's duplicate judgement on names labelled by hand
        /// elsewhere: FILE holds one JSON object a line, {"type", "name", "entity"}
        #[arg(long, value_name = "FILE")]
        duplicates: Option<std::path::PathBuf>,
        /// With --compare: the memory sizes, in concepts
        #[arg(long, value_delimiter = ',', default_value = "5000,100000,1000000")]
        sizes: Vec<usize>,
        /// With --compare: the largest size the reference engine runs at
        #[arg(long, default_value_t = 5000)]
        reference_max: usize,
        /// With --compare: only these workloads (their keys: insert, lookup, one_hop,
        /// five_hop, search, …; all by default)
        #[arg(long, value_delimiter = ',', requires = "compare")]
        workloads: Vec<String>,
        /// With --compare: where the Markdown table, the JSON and the plot (SVG, PNG) go
        #[arg(long, default_value = "bench")]
        out: std::path::PathBuf,
        /// With --compare: draw the table and the plot again from a recorded compare.json instead of measuring
        #[arg(long, requires = "compare")]
        from: Option<std::path::PathBuf>,
    },
    /// The audit trail: every change to the memory, who made it and why
    Audit {
        #[command(subcommand)]
        what: Option<AuditCmd>,
        /// Only entries by this actor
        #[arg(long)]
        actor: Option<String>,
        /// Only entries of this kind (UPSERT, UPDATE, MERGE, DELETE, ROLLBACK, BOOTSTRAP)
        #[arg(long)]
        kind: Option<String>,
        /// Only entries that touched this element (C:<n> or P:<n>:<predicate>)
        #[arg(long)]
        element: Option<String>,
        /// Only entries at or after this time (RFC 3339)
        #[arg(long)]
        since: Option<String>,
        /// Only entries at or before this time (RFC 3339)
        #[arg(long)]
        until: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// What agents asked (requests over serve, mcp and rpc, newest first), the elements they read most and never, and the log's retention
    Reads {
        #[command(subcommand)]
        what: Option<ReadsCmd>,
        /// Only requests by this caller
        #[arg(long)]
        caller: Option<String>,
        /// Only requests of this kind (FIND, SEARCH, DESCRIBE, UPSERT, …)
        #[arg(long)]
        kind: Option<String>,
        /// Only requests that failed
        #[arg(long)]
        errors: bool,
        /// Only requests at or after this time (RFC 3339 or YYYY-MM-DD)
        #[arg(long)]
        since: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// JSON instead of lines
        #[arg(long)]
        json: bool,
    },
    /// Undo an audit entry, a sleep run, an approval, or everything after a time (each undo is recorded, so it can be undone too)
    Rollback {
        /// The audit entry to undo
        entry: Option<i64>,
        /// Undo every change of this sleep run
        #[arg(long, conflicts_with_all = ["entry", "proposal", "to"])]
        run: Option<i64>,
        /// Undo every change applied by approving this proposal (every decision on it)
        #[arg(long, conflicts_with_all = ["entry", "run", "to"])]
        proposal: Option<i64>,
        /// Restore the memory as it was at this time (RFC 3339) or right after this audit entry (#N)
        #[arg(long, conflicts_with_all = ["entry", "run", "proposal", "group"])]
        to: Option<String>,
        /// Undo one audit group: one decision on a proposal (`proposal:3/2`), a sleep run (`sleep:4`)
        #[arg(long, conflicts_with_all = ["entry", "run", "proposal", "to"])]
        group: Option<String>,
        /// Why (recorded with the rollback)
        #[arg(long)]
        reason: Option<String>,
    },
    /// Run a sleep cycle: maintenance phases, and a reflection proposal for approval
    Sleep {
        /// daydream (phase 1), quick (1-2) or full (1-13)
        #[arg(long, default_value = "full")]
        scope: String,
        /// heuristic (offline) or llm ($SOMNUS_LLM_URL, $SOMNUS_LLM_MODEL, $SOMNUS_LLM_KEY)
        #[arg(long, default_value = "heuristic")]
        reasoner: String,
        /// scheduled, threshold, on_demand or post_session
        #[arg(long, default_value = "on_demand")]
        trigger: String,
        /// The cycle's clock (RFC 3339; default now)
        #[arg(long)]
        now: Option<String>,
        /// Parameters as JSON (stale_event_threshold_days, memory_strength_decay_factor, ...), over the memory's saved ones
        #[arg(long)]
        params: Option<String>,
        /// Save the parameters (the saved ones with --params over them) as the memory's own, used by every cycle after (scheduled ones too); runs no cycle
        #[arg(long, conflicts_with = "reset_params")]
        save_params: bool,
        /// Forget the memory's saved parameters (cycles use the defaults again); runs no cycle
        #[arg(long)]
        reset_params: bool,
        /// Who saves the parameters (the audit's actor)
        #[arg(long, default_value = "operator")]
        by: String,
        /// Print the report as JSON
        #[arg(long)]
        json: bool,
        /// No progress lines on standard error
        #[arg(long)]
        quiet: bool,
    },
    /// Keep the memory maintained: run the sleep cycle that is due (full every --full-every-hours, caught up when overdue; quick when a health target is exceeded; daydream after --idle-secs of quiet with Events to score), one at a time per memory
    Maintain {
        /// Check once, run what is due (if anything), and exit
        #[arg(long)]
        once: bool,
        #[command(flatten)]
        schedule: MaintenanceArgs,
    },
    /// Tell the maintainer an agent's conversation session has ended: its next check runs a post-session cycle (a daydream, or a quick cycle after a burst of writes) if the agents wrote since the last cycle. The MCP server records it itself when its client disconnects; `POST /session/end` does over HTTP
    SessionEnd {
        /// The agent whose session it was
        #[arg(long, default_value = "agent")]
        actor: String,
        /// The session's id, if the agent has one (kept in the record)
        #[arg(long)]
        session: Option<String>,
    },
    /// Bring a memory kept elsewhere in: `somnus import openclaw DIR` (an OpenClaw or Moltbot workspace, or its memory/ folder; `moltbot` is the same) or `somnus import engram DIR` (an Engram store, memory/local/, or its workspace), one audited group `import:<source>` that `somnus rollback --group` undoes; importing again changes nothing
    Import {
        /// The source's format: openclaw (or moltbot) or engram
        source: String,
        /// Its folder
        dir: PathBuf,
        /// The Person whose preferences and profile an Engram store holds (default: the memory's one Person with relationship_to_self "user", else a new Person "User")
        #[arg(long)]
        user: Option<String>,
        /// A folder or file of an OpenClaw workspace that its memory search also covers (its `memorySearch.extraPaths`), imported as notes; repeatable. Those listed in the `openclaw.json` beside the workspace are imported without it
        #[arg(long = "extra-path", value_name = "PATH")]
        extra_path: Vec<PathBuf>,
        /// Show what would be written, write nothing
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Past sleep runs
    Runs {
        /// Show one run's report
        run: Option<i64>,
        #[arg(long)]
        json: bool,
    },
    /// Callers' keys for `somnus serve` and `somnus mcp`: a name and a role each
    Keys {
        #[command(subcommand)]
        what: KeysCmd,
    },
    /// Reflection proposals: review, approve (all, some, edited), reject, roll back
    Proposals {
        #[command(subcommand)]
        what: ProposalsCmd,
    },
    /// Contradictions found by sleep cycles, and their resolution
    Contradictions {
        #[command(subcommand)]
        what: ContradictionsCmd,
    },
    /// The memory's health against the maintenance targets
    Health {
        /// Assess as of this time (RFC 3339; default now)
        #[arg(long)]
        now: Option<String>,
        /// Days after which an unconsolidated Event is stale
        #[arg(long, default_value_t = 7)]
        stale_days: i64,
        /// JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Explain what happened to an element: decay, archival, deletion, every change, by whom and why
    Why {
        /// C:<n>, P:<n>:<predicate>, or Type:Name (also for deleted elements)
        element: String,
        /// Another concept (Type:Name): why the two are or are not proposed
        /// as one
        #[arg(long)]
        with: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Copy a memory whole (graph, audit trail, sleep runs, proposals, keys) into a new one,
    /// between SQLite files and PostgreSQL memories either way
    Copy {
        /// The memory to copy: a file, or postgres://user@host/db?memory=NAME
        #[arg(long)]
        from: String,
        /// The new memory: a file, or postgres://user@host/db?memory=NAME (created; refused
        /// if anything was written to it)
        #[arg(long)]
        to: String,
    },
    /// Run conformance fixture files or folders; ends with `N passed, N failed` (the suite's cases that contradict the specification are checked against the specification's answer, and listed)
    Conformance {
        /// Fixture files or folders
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print every case, not only failures
        #[arg(long, short)]
        verbose: bool,
        /// Run each fixture in a throwaway memory of this PostgreSQL
        /// database (postgres://user@host/db) instead of in memory
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum AuditCmd {
    /// One entry with the before/after image of every element it touched
    Show { entry: i64 },
    /// Drop the before/after images of every entry up to a time, a date or #N
    /// (entries stay, marked pruned; they can no longer be undone)
    Prune {
        /// RFC 3339 time, YYYY-MM-DD, or #N
        through: String,
        /// Only say what would be freed
        #[arg(long)]
        dry_run: bool,
    },
}

/// The per-user data folder's memory.
pub fn default_db() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("somnus").join("memory.db")
}

/// The demo memory's default home, beside the default memory.
pub fn default_demo_db() -> PathBuf {
    default_db().with_file_name("demo.db")
}

/// The memory a command works on, as `--db` and `--memory` (or
/// `$SOMNUS_DB` and `$SOMNUS_MEMORY`) name it.
struct Target {
    db: Option<String>,
    memory: Option<String>,
    /// `--db` itself (a benchmark never falls back on `$SOMNUS_DB`: it
    /// would write into the user's memory).
    given: Option<String>,
}

impl Target {
    fn new(cli: &Cli) -> Target {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Target {
            db: cli.db.clone().or_else(|| env("SOMNUS_DB")),
            memory: cli.memory.clone().or_else(|| env("SOMNUS_MEMORY")),
            given: cli.db.clone(),
        }
    }

    fn place(&self) -> Result<Place> {
        self.place_or(default_db)
    }

    /// The place, with `default` for a file when none is named.
    fn place_or(&self, default: fn() -> PathBuf) -> Result<Place> {
        match &self.db {
            Some(db) => Place::parse(db, self.memory.as_deref()),
            None => Place::parse(&default().to_string_lossy(), self.memory.as_deref()),
        }
        .map_err(|e| eyre!("{}", e.message))
    }
}

/// `--adopt`, for every open of this process.
static ADOPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn open(t: &Target) -> Result<Nexus> {
    open_as(t, false)
}

/// Opens the memory; `readonly` opens an existing file without writing
/// anything to it (a missing one is created as usual).
fn open_as(t: &Target, readonly: bool) -> Result<Nexus> {
    let place = t.place()?;
    let opts = crate::store::OpenOptions {
        readonly: readonly && place.exists(),
        adopt: ADOPT.load(std::sync::atomic::Ordering::Relaxed),
    };
    Nexus::open_place(&place, opts).map_err(|e| {
        let hint = e
            .hint
            .as_deref()
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        eyre!("cannot open {place}: {}{hint}", e.message)
    })
}

pub fn run(cli: Cli) -> Result<i32> {
    ADOPT.store(cli.adopt, std::sync::atomic::Ordering::Relaxed);
    let target = Target::new(&cli);
    match cli.cmd {
        None => {
            let nx = open(&target)?;
            let label = nx.describe_location();
            crate::tui::run(nx, &label)?;
            Ok(0)
        }
        Some(Cmd::Kip {
            params,
            readonly,
            dry_run,
            command,
        }) => {
            let command = if command == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
                s
            } else {
                command
            };
            let parameters: Map<String, Value> = match params {
                Some(p) => serde_json::from_str(&p).wrap_err("--params must be a JSON object")?,
                None => Map::new(),
            };
            let mut nx = open_as(&target, readonly)?;
            let method = if readonly {
                Method::ExecuteKipReadonly
            } else {
                Method::ExecuteKip
            };
            let req = Request::new(
                method,
                Arguments {
                    command: Some(command),
                    parameters,
                    dry_run,
                    ..Default::default()
                },
            );
            let resp = nx.execute(&req).to_json();
            crate::say_json!(&resp)?;
            Ok(if resp.get("error").is_some() { 1 } else { 0 })
        }
        Some(Cmd::Demo { no_console }) => {
            // (a PostgreSQL database's demo is the memory `demo`, unless
            // one is named: the default memory is the user's)
            let path = match &target.db {
                Some(db)
                    if crate::store::postgres::is_url(db)
                        && target.memory.is_none()
                        && !db.contains("memory=") =>
                {
                    Place::parse(db, Some("demo")).map_err(|e| eyre!("{}", e.message))?
                }
                _ => target.place_or(default_demo_db)?,
            };
            let nx = crate::demo::create_at(&path)
                .map_err(|e| eyre!("cannot create the demo memory at {path}: {}", e.message))?;
            if no_console {
                let o = nx.schema_overview().map_err(|e| eyre!(e.message))?;
                crate::say!(
                    "demo memory at {}: {} concepts, {} propositions",
                    path,
                    o.concepts,
                    o.propositions
                );
                return Ok(0);
            }
            crate::tui::run(nx, &format!("demo · {path}"))?;
            Ok(0)
        }
        Some(Cmd::Serve {
            addr,
            api_key,
            max_body,
            readers,
            timeout_ms,
            max_connections,
            header_timeout_ms,
            body_timeout_ms,
            maintenance,
            schedule,
            read_log,
        }) => {
            let read_log = read_log.settings()?;
            let maintain = maintenance_on(&maintenance_choice(maintenance))?;
            let settings = schedule.settings()?;
            let api_key = api_key.or_else(|| {
                std::env::var("SOMNUS_API_KEY")
                    .ok()
                    .filter(|k| !k.is_empty())
            });
            let db = target.place()?;
            let rt = crate::server::runtime(None)?;
            let (tx, rx) = tokio::sync::oneshot::channel();
            let mut cfg = crate::server::ServerConfig::new(db.clone(), addr);
            cfg.api_key = api_key;
            cfg.max_body = max_body;
            cfg.readers = readers;
            cfg.timeout = std::time::Duration::from_millis(timeout_ms);
            cfg.max_connections = max_connections;
            cfg.header_timeout = std::time::Duration::from_millis(header_timeout_ms.max(1));
            cfg.body_timeout = std::time::Duration::from_millis(body_timeout_ms.max(1));
            cfg.maintenance = maintain.then_some(settings);
            cfg.read_log = read_log;
            rt.spawn(async move {
                if let Ok(a) = rx.await {
                    crate::say_err!("somnus serving {} on http://{a} (POST /kip, GET /)", db);
                }
            });
            let served = rt.block_on(crate::server::serve(cfg, Some(tx)));
            // a command still running on a blocking thread is not waited for
            rt.shutdown_timeout(std::time::Duration::from_millis(500));
            served.map_err(|e| eyre!(e))?;
            crate::say_err!("somnus: stopped");
            Ok(0)
        }
        Some(Cmd::Mcp {
            actor,
            key,
            maintenance,
            schedule,
            read_log,
        }) => {
            let read_log = read_log.settings()?;
            let maintain = maintenance_on(&maintenance_choice(maintenance))?;
            let settings = schedule.settings()?;
            let writer = open(&target)?;
            let key = key.or_else(|| std::env::var("SOMNUS_KEY").ok().filter(|k| !k.is_empty()));
            let key_digest = key.as_deref().map(crate::store::keys::digest);
            let caller = match key {
                Some(k) => crate::store::keys::lookup(writer.db(), &k)
                    .map_err(|e| eyre!("{}", e.message))?
                    .ok_or_else(|| {
                        eyre!("the key is not one of this memory's active keys (somnus keys list)")
                    })?,
                None => {
                    if crate::store::keys::any_active(writer.db()).unwrap_or(false) {
                        return Err(eyre!(
                            "this memory has keys: give the caller's with --key or $SOMNUS_KEY"
                        ));
                    }
                    if crate::store::keys::is_reserved(&actor) {
                        return Err(eyre!("--actor `{actor}` is reserved: name the agent"));
                    }
                    crate::store::keys::Identity {
                        name: actor,
                        role: crate::store::keys::Role::Agent,
                    }
                }
            };
            let mut readers = Vec::new();
            for _ in 0..2 {
                readers.push(open(&target)?);
            }
            let pool = crate::server::pool::Pool::new(writer, readers);
            let maintainer = maintain.then(|| {
                crate::sleep::maintainer::Maintainer::start(
                    target.place().expect("the memory opened above"),
                    "mcp",
                    settings,
                )
            });
            let rt = crate::server::runtime(Some(2))?;
            let served = rt.block_on(crate::server::mcp::serve_stdio(
                pool, caller, key_digest, read_log,
            ));
            if let Some(m) = maintainer {
                m.stop();
            }
            served.map_err(|e| eyre!(e))?;
            Ok(0)
        }
        Some(Cmd::Rpc { read_log }) => {
            let read_log = read_log.settings()?;
            let mut nx = open(&target)?;
            if let Some(s) = read_log {
                let _ = nx.prune_reads(
                    &crate::audit::reads::days_ago(s.retention_days),
                    Some(s.max_rows),
                    false,
                );
            }
            // answered requests, written to the log after their answers
            // (every RPC_LOG_BATCH requests or second, and at the end)
            let mut logged: Vec<crate::audit::reads::Logged> = Vec::new();
            let mut flushed = std::time::Instant::now();
            let stdin = std::io::stdin();
            let mut out = std::io::stdout().lock();
            for line in std::io::BufRead::split(stdin.lock(), b'\n') {
                let line = line?;
                // one bad line gets its own error; the session goes on
                let Ok(line) = String::from_utf8(line) else {
                    let e = crate::kip::KipError::syntax("the request line is not UTF-8");
                    writeln!(out, "{}", json!({ "error": e.to_json() }))?;
                    out.flush()?;
                    continue;
                };
                if line.trim().is_empty() {
                    continue;
                }
                let resp = match serde_json::from_str::<Value>(&line) {
                    Err(e) => {
                        json!({ "error": crate::kip::KipError::syntax(format!("request is not JSON: {e}")).to_json() })
                    }
                    Ok(v) => match Request::from_json(&v) {
                        Ok(req) if read_log.is_some() => {
                            let at = crate::store::now();
                            let (r, served) = nx.execute_served(&req);
                            logged.extend(crate::audit::reads::Logged::all(
                                served,
                                &req.actor.id,
                                "rpc",
                                &at,
                            ));
                            r.to_json()
                        }
                        Ok(req) => nx.execute(&req).to_json(),
                        Err(e) => json!({ "error": e.to_json() }),
                    },
                };
                writeln!(out, "{}", serde_json::to_string(&resp)?)?;
                out.flush()?;
                if logged.len() >= RPC_LOG_BATCH
                    || (!logged.is_empty()
                        && flushed.elapsed() >= std::time::Duration::from_secs(1))
                {
                    let _ = nx.record_reads(&logged);
                    logged.clear();
                    flushed = std::time::Instant::now();
                }
            }
            if !logged.is_empty() {
                let _ = nx.record_reads(&logged);
            }
            Ok(0)
        }
        Some(b @ Cmd::Bench { .. }) => bench::run(b, &target),
        Some(Cmd::Reads {
            what: Some(what), ..
        }) => {
            let mut nx = open(&target)?;
            reads::run(&mut nx, &what)
        }
        Some(Cmd::Reads {
            what: None,
            caller,
            kind,
            errors,
            since,
            limit,
            json,
        }) => {
            let nx = open(&target)?;
            reads::list(
                &nx,
                &reads::List {
                    caller,
                    kind,
                    errors,
                    since,
                    limit,
                    json,
                },
            )
        }
        Some(Cmd::Audit {
            what: Some(AuditCmd::Prune { through, dry_run }),
            ..
        }) => {
            let mut nx = open(&target)?;
            let (to, p) = nx
                .audit_prune(&through, dry_run)
                .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
            crate::say!(
                "{} {} entries through #{to}: {} images, {} bytes{}",
                if dry_run { "would prune" } else { "pruned" },
                p.entries,
                p.images,
                p.bytes,
                if dry_run {
                    ""
                } else {
                    " (the file keeps its size; SQLite reuses the pages)"
                }
            );
            Ok(0)
        }
        Some(Cmd::Audit {
            what: Some(AuditCmd::Show { entry }),
            ..
        }) => {
            let nx = open(&target)?;
            match nx.audit_entry(entry).map_err(|e| eyre!(e.message))? {
                None => {
                    crate::say_err!("no audit entry #{entry}");
                    Ok(1)
                }
                Some((e, changes)) => {
                    let mut v = e.to_json();
                    v["changes"] = Value::Array(changes.iter().map(|c| c.to_json()).collect());
                    crate::say_json!(&v)?;
                    Ok(0)
                }
            }
        }
        Some(Cmd::Audit {
            what: None,
            actor,
            kind,
            element,
            since,
            until,
            limit,
            json,
        }) => {
            let nx = open(&target)?;
            let element = match element {
                Some(e) => Some(crate::store::ids::parse_element_id(&e).ok_or_else(|| {
                    eyre!("{e} is not an element id (C:<n> or P:<n>:<predicate>)")
                })?),
                None => None,
            };
            let f = crate::audit::Filter {
                actor,
                kind,
                element,
                since,
                until,
                batch: None,
                limit,
            };
            let entries = nx.audit_list(&f).map_err(|e| eyre!(e.message))?;
            if json {
                crate::say_json!(&entries.iter().map(|e| e.to_json()).collect::<Vec<_>>())?;
            } else {
                crate::say!(
                    "{:>6}  {:<24}  {:<12}  {:<10}  {:>7}  command",
                    "entry",
                    "at",
                    "actor",
                    "kind",
                    "changes"
                );
                for e in entries {
                    let mut cmd: String =
                        e.command.split_whitespace().collect::<Vec<_>>().join(" ");
                    if cmd.chars().count() > 60 {
                        cmd = cmd.chars().take(59).collect::<String>() + "…";
                    }
                    let note = match (e.rolled_back_by, e.rolls_back) {
                        (Some(by), _) => format!("  (rolled back by #{by})"),
                        (None, Some(of)) => format!("  (undoes #{of})"),
                        _ => String::new(),
                    };
                    crate::say!(
                        "{:>6}  {:<24}  {:<12}  {:<10}  {:>7}  {cmd}{note}",
                        e.id,
                        e.at,
                        e.actor,
                        e.kind,
                        e.changes
                    );
                }
            }
            Ok(0)
        }
        Some(Cmd::Rollback {
            entry,
            run,
            proposal,
            to,
            group,
            reason,
        }) => {
            let mut nx = open(&target)?;
            let who = crate::audit::Who {
                actor: "operator".into(),
                trigger: "somnus rollback".into(),
                reason,
            };
            if let Some(g) = group {
                return match crate::review::undo::group(&mut nx, &g, &who) {
                    Ok(ids) => {
                        crate::say!("rolled back `{g}`: {} entries undone", ids.len());
                        Ok(0)
                    }
                    Err(e) => {
                        crate::say_err!(
                            "{}: {}\n{}",
                            e.code,
                            e.message,
                            e.hint.unwrap_or_default()
                        );
                        Ok(1)
                    }
                };
            }
            let res = match (entry, run, proposal, to) {
                (Some(e), _, _, _) => crate::review::undo::entry(&mut nx, e, &who).map(|id| {
                    format!("rolled back #{e} as entry #{id} (undo it with `somnus rollback {id}`)")
                }),
                (_, Some(r), _, _) => {
                    crate::review::undo::group(&mut nx, &format!("sleep:{r}"), &who).map(|ids| {
                        format!("rolled back sleep run #{r}: {} entries undone", ids.len())
                    })
                }
                (_, _, Some(p), _) => crate::review::undo::proposal(&mut nx, p, &who).map(|ids| {
                    format!(
                        "rolled back the approval of proposal #{p}: {} entries undone",
                        ids.len()
                    )
                }),
                (_, _, _, Some(t)) => {
                    crate::review::undo::to(&mut nx, &t, &who).map(|(after, ids)| {
                        format!(
                            "restored the memory as of entry #{after}: {} later entries undone",
                            ids.len()
                        )
                    })
                }
                _ => {
                    return Err(eyre!(
                        "give an entry, --run N, --proposal N, --group NAME or --to TIME"
                    ));
                }
            };
            match res {
                Ok(msg) => {
                    crate::say!("{msg}");
                    Ok(0)
                }
                Err(e) => {
                    crate::say_err!("{}: {}\n{}", e.code, e.message, e.hint.unwrap_or_default());
                    Ok(1)
                }
            }
        }
        Some(Cmd::Sleep {
            scope,
            reasoner,
            trigger,
            now,
            params,
            save_params,
            reset_params,
            by,
            json,
            quiet,
        }) => {
            let mut nx = open(&target)?;
            if save_params || reset_params {
                return reflect::save_params(&mut nx, params, reset_params, &by);
            }
            reflect::sleep(
                &mut nx, &scope, &reasoner, &trigger, now, params, json, quiet,
            )
        }
        Some(Cmd::SessionEnd { actor, session }) => {
            let mut nx = open(&target)?;
            let end = crate::sleep::schedule::session_ended(
                &mut nx,
                &actor,
                session.as_deref(),
                chrono::Utc::now(),
            )
            .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
            let plan = crate::sleep::schedule::plan(
                &mut nx,
                chrono::Utc::now(),
                &crate::sleep::schedule::Schedule::default(),
            )
            .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
            crate::say!(
                "session of {} ended at {}; next cycle: {}",
                end.actor,
                end.at,
                plan.describe()
            );
            Ok(0)
        }
        Some(Cmd::Maintain { once, schedule }) => {
            let settings = schedule.settings()?;
            if once {
                let mut nx = open(&target)?;
                match crate::sleep::schedule::run_due(
                    &mut nx,
                    &settings.schedule,
                    settings.budget,
                    None,
                ) {
                    Ok(Some(line)) => crate::say!("{line}"),
                    Ok(None) => crate::say!("nothing is due"),
                    Err(e) => return Err(eyre!("maintenance: {}: {}", e.code, e.message)),
                }
                return Ok(0);
            }
            // the memory must open (and be migrated) before the loop starts
            drop(open(&target)?);
            let db = target.place()?;
            crate::say_err!(
                "somnus maintaining {} (checks every {:.0} s; Ctrl+C stops)",
                db,
                settings.poll.as_secs_f64()
            );
            let m = crate::sleep::maintainer::Maintainer::start(db, "maintain", settings);
            let rt = crate::server::runtime(Some(1))?;
            rt.block_on(crate::server::shutdown_signal());
            m.stop();
            crate::say_err!("somnus: stopped");
            Ok(0)
        }
        Some(Cmd::Import {
            source,
            dir,
            user,
            extra_path,
            dry_run,
            json,
        }) => {
            let mut nx = open(&target)?;
            let user = crate::import::user_for(&mut nx, &source, user);
            let plan = crate::import::read_with(&source, &dir, user.as_deref(), &extra_path)
                .map_err(|e| eyre!(e))?;
            let who = crate::audit::Who {
                actor: std::env::var("USER").unwrap_or_else(|_| "operator".into()),
                trigger: format!("import {source} {}", dir.display()),
                reason: None,
            };
            let out = crate::import::apply(&mut nx, &plan, &who, dry_run)
                .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
            if json {
                crate::say_json!(&out)?;
                return Ok(0);
            }
            for l in out.lines(&dir, plan.writes.len()) {
                crate::say!("{l}");
            }
            Ok(0)
        }
        Some(Cmd::Runs { run, json }) => {
            let nx = open(&target)?;
            reflect::runs(&nx, run, json)
        }
        Some(Cmd::Keys { what }) => {
            use crate::store::keys;
            let nx = open(&target)?;
            let by = std::env::var("USER").unwrap_or_else(|_| "operator".into());
            match what {
                KeysCmd::Add { name, role } => {
                    let role = keys::Role::parse(&role).ok_or_else(|| {
                        eyre!("--role must be reader, agent or subagent, not `{role}`")
                    })?;
                    let key = keys::add(nx.db(), &name, role, &by)
                        .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
                    crate::say!("{key}");
                    eprintln!(
                        "key for `{name}` ({}): shown once, only its digest is kept; send it as `Authorization: Bearer <key>` (HTTP) or `somnus mcp --key` / $SOMNUS_KEY (MCP)",
                        role.as_str()
                    );
                }
                KeysCmd::List { json } => {
                    let list = keys::list(nx.db()).map_err(|e| eyre!("{}", e.message))?;
                    if json {
                        let v: Vec<Value> = list
                            .iter()
                            .map(|k| json!({"name": k.name, "role": k.role, "created_at": k.created_at, "created_by": k.created_by, "revoked_at": k.revoked_at}))
                            .collect();
                        crate::say_json!(&v)?;
                    } else if list.is_empty() {
                        crate::say!("no keys: `somnus keys add NAME --role agent` makes one");
                    } else {
                        for k in list {
                            crate::say!(
                                "{:<24} {:<9} made {} by {}{}",
                                k.name,
                                k.role,
                                k.created_at,
                                k.created_by,
                                k.revoked_at
                                    .map(|r| format!(", revoked {r}"))
                                    .unwrap_or_default()
                            );
                        }
                    }
                }
                KeysCmd::Revoke { name } => {
                    keys::revoke(nx.db(), &name).map_err(|e| eyre!("{}: {}", e.code, e.message))?;
                    crate::say!("revoked `{name}`");
                }
            }
            Ok(0)
        }
        Some(Cmd::Proposals { what }) => {
            let mut nx = open(&target)?;
            reflect::proposals(&mut nx, what)
        }
        Some(Cmd::Contradictions { what }) => {
            let mut nx = open(&target)?;
            reflect::contradictions(&mut nx, what)
        }
        Some(Cmd::Health {
            now,
            stale_days,
            json,
        }) => {
            let mut nx = open(&target)?;
            let now = now.unwrap_or_else(|| {
                chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            });
            let stale_days = crate::sleep::params::check_days("--stale-days", stale_days)
                .map_err(|e| eyre!(e))?;
            let h = crate::sleep::health::assess(&mut nx, &now, stale_days)
                .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
            if json {
                crate::say_json!(&h.to_json())?;
            } else {
                crate::say!("health at {}", h.at);
                for m in &h.metrics {
                    let v = if m.value.fract() == 0.0 {
                        format!("{}", m.value)
                    } else {
                        format!("{:.2}", m.value)
                    };
                    crate::say!(
                        "  {:<5} {:<58} {:>8}  target {:<14} {}",
                        m.status.as_str(),
                        m.label,
                        v,
                        m.target,
                        if m.status == crate::sleep::health::Status::Ok
                            || m.status == crate::sleep::health::Status::Info
                        {
                            ""
                        } else {
                            m.action
                        }
                    );
                }
            }
            Ok(0)
        }
        Some(Cmd::Why {
            element,
            with: Some(other),
            json,
        }) => {
            let mut nx = open(&target)?;
            reflect::why_pair(&mut nx, &element, &other, json)
        }
        Some(Cmd::Why { element, json, .. }) => {
            let nx = open(&target)?;
            reflect::why(&nx, &element, json)
        }
        Some(Cmd::Copy { from, to }) => {
            let parse = |s: &str| Place::parse(s, None).map_err(|e| eyre!("{}", e.message));
            let (from, to) = (parse(&from)?, parse(&to)?);
            if from == to {
                return Err(eyre!("--from and --to are the same memory"));
            }
            let exists = match &from {
                Place::File(p) => p.exists(),
                Place::Postgres(l) => {
                    let mut c = l.connect().map_err(|e| eyre!("{}", e.message))?;
                    crate::store::postgres::memories(&mut c)
                        .map_err(|e| eyre!("{}", e.message))?
                        .contains(&l.memory)
                }
            };
            if !exists {
                return Err(eyre!("{from} does not exist: nothing to copy"));
            }
            let src = Nexus::open_place(
                &from,
                crate::store::OpenOptions {
                    readonly: matches!(from, Place::File(_)),
                    adopt: false,
                },
            )
            .map_err(|e| eyre!("cannot open {from}: {}", e.message))?;
            let dst = Nexus::open_place(&to, Default::default())
                .map_err(|e| eyre!("cannot open {to}: {}", e.message))?;
            let started = std::time::Instant::now();
            let copied = src
                .copy_into(&dst)
                .map_err(|e| eyre!("{}: {}", e.code, e.message))?;
            for (t, n) in &copied.tables {
                crate::say!("{t:<20} {n:>9}");
            }
            crate::say!(
                "copied {from} to {to} in {:.1} s (next element id {})",
                started.elapsed().as_secs_f64(),
                copied.next_id
            );
            Ok(0)
        }
        Some(Cmd::Conformance {
            paths,
            verbose,
            postgres,
        }) => {
            let files = conformance::collect(&paths).map_err(|e| eyre!(e))?;
            let (mut passed, mut failed) = (0, 0);
            let mut departed = Vec::new();
            for f in files {
                let reports =
                    conformance::run_fixture_in(&f, postgres.as_deref()).map_err(|e| eyre!(e))?;
                for r in reports {
                    if r.passed {
                        passed += 1;
                        if verbose {
                            crate::say!("PASS {} :: {}", r.file, r.case);
                        }
                        if let Some(why) = r.departure {
                            departed.push(format!("  {} :: {}: {why}", r.file, r.case));
                        }
                    } else {
                        failed += 1;
                        crate::say!("FAIL {} :: {}: {}", r.file, r.case, r.detail);
                    }
                }
            }
            if !departed.is_empty() {
                crate::say!(
                    "{} answered as the specification says, where the suite expects the reference engine's answer (README, Semantics):\n{}",
                    departed.len(),
                    departed.join("\n")
                );
            }
            crate::say!("{passed} passed, {failed} failed");
            Ok(if failed == 0 { 0 } else { 1 })
        }
    }
}
