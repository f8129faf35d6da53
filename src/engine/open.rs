//! Opening a memory: a SQLite file (created, migrated and bootstrapped
//! as needed, by exactly one of several processes starting together), a
//! private in-memory one, or a PostgreSQL schema.

use super::*;
use rusqlite::functions::FunctionFlags;
use rusqlite::{Connection, TransactionBehavior};

fn register_functions(conn: &Connection) -> KipResult<()> {
    conn.create_scalar_function(
        "kip_regex",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let re: std::sync::Arc<regex::Regex> = ctx.get_or_create_aux(
                0,
                |vr| -> Result<_, Box<dyn std::error::Error + Send + Sync + 'static>> {
                    Ok(regex::Regex::new(vr.as_str()?)?)
                },
            )?;
            let text = match ctx.get_raw(1) {
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                rusqlite::types::ValueRef::Real(f) => f.to_string(),
                _ => return Ok(None),
            };
            Ok(Some(re.is_match(&text)))
        },
    )?;
    Ok(())
}

/// The `-wal` file beside a database.
fn wal_of(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

impl Nexus {
    /// Opens (creating and bootstrapping if new) the memory at `place`, a
    /// SQLite file or a PostgreSQL memory (where `opts` do not apply: the
    /// server keeps its own permissions).
    pub fn open_place(
        place: &crate::store::place::Place,
        opts: crate::store::OpenOptions,
    ) -> KipResult<Nexus> {
        match place {
            crate::store::place::Place::File(p) => Self::open_with(p, opts),
            crate::store::place::Place::Postgres(l) => Self::open_postgres(l),
        }
    }

    /// Opens (creating and bootstrapping if new) the memory at `path`.
    pub fn open(path: impl AsRef<Path>) -> KipResult<Nexus> {
        Self::open_with(path, crate::store::OpenOptions::default())
    }

    /// Opens the memory at `path` as `opts` says: read-only (nothing is
    /// written, not even a migration), or adopting a foreign SQLite file.
    pub fn open_with(path: impl AsRef<Path>, opts: crate::store::OpenOptions) -> KipResult<Nexus> {
        use rusqlite::OpenFlags;
        let path = path.as_ref();
        let ro = opts.readonly;
        if ro && !path.exists() {
            return Err(KipError::not_found(format!(
                "{} does not exist (a read-only open creates nothing)",
                path.display()
            )));
        }
        if !ro
            && let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| KipError::internal(format!("cannot create {}: {e}", dir.display())))?;
        }
        let flags = if ro {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        // A first open races other processes creating the same file; where
        // SQLite answers "busy" without waiting (changing the journal mode,
        // upgrading a read lock), the whole open is tried again.
        if ro {
            return match Self::open_once(path, flags, opts) {
                // A WAL memory read by a user who cannot create its `-shm`
                // file: with no `-wal` file there is nothing beyond the main
                // file to see, so it is read as immutable.
                Err(_) if !wal_of(path).exists() => {
                    let uri = crate::store::sqlite_uri(path, "immutable=1");
                    let conn = Connection::open_with_flags(
                        &uri,
                        OpenFlags::SQLITE_OPEN_READ_ONLY
                            | OpenFlags::SQLITE_OPEN_URI
                            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    )
                    .map_err(|e| {
                        KipError::internal(format!("cannot open {}: {e}", path.display()))
                    })?;
                    Self::init(conn, Some(path.to_path_buf()), opts)
                }
                other => other,
            };
        }
        let mut attempt = 0;
        loop {
            match Self::open_once(path, flags, opts) {
                Err(e) if e.message.contains("database is locked") && attempt < 200 => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5 + attempt % 20));
                }
                other => return other,
            }
        }
    }

    fn open_once(
        path: &Path,
        flags: rusqlite::OpenFlags,
        opts: crate::store::OpenOptions,
    ) -> KipResult<Nexus> {
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| KipError::internal(format!("cannot open {}: {e}", path.display())))?;
        // SQLite falls back to read-only when the file is not writable:
        // say so now, instead of failing the first write as "read-only".
        if !opts.readonly && conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(KipError::new(
                ErrorCode::ImmutableTarget,
                format!("{} is not writable by this user", path.display()),
            )
            .with_hint("Fix the file's permissions, or read it with --readonly."));
        }
        Self::init(conn, Some(path.to_path_buf()), opts)
    }

    /// A private in-memory memory (tests, conformance runs).
    pub fn open_in_memory() -> KipResult<Nexus> {
        Self::init(
            Connection::open_in_memory()?,
            None,
            crate::store::OpenOptions::default(),
        )
    }

    fn init(
        mut conn: Connection,
        path: Option<PathBuf>,
        opts: crate::store::OpenOptions,
    ) -> KipResult<Nexus> {
        register_functions(&conn)?;
        let audit = crate::audit::Context::default();
        crate::audit::register(&conn, &audit)?;
        crate::store::configure(&mut conn, opts.readonly)?;
        let version = crate::store::schema_version(&conn)?;
        let fresh = if version == crate::store::SCHEMA_VERSION {
            crate::store::check_identity(&conn, version, opts.adopt)?;
            false
        } else if opts.readonly {
            crate::store::check_identity(&conn, version, opts.adopt)?;
            return Err(KipError::new(
                ErrorCode::ConstraintViolation,
                if version == 0 {
                    "this file holds no somnus memory yet".to_string()
                } else {
                    format!(
                        "this memory has schema {version}; this somnus needs {} and a read-only open cannot migrate it",
                        crate::store::SCHEMA_VERSION
                    )
                },
            )
            .with_hint("Open it once without --readonly."));
        } else {
            // Another process may be creating or migrating the same file:
            // the version is read again inside one exclusive transaction
            // that migrates and bootstraps, so exactly one does the work.
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let version = crate::store::schema_version(&tx)?;
            crate::store::check_identity(&tx, version, opts.adopt)?;
            let fresh = crate::store::migrate(&tx, version)?;
            if fresh {
                Self::bootstrap(Db::Sqlite(&tx), &audit)?;
            }
            tx.commit()?;
            fresh
        };
        // A read log kept in the memory file (before it had its own) moves
        // to its own file, under the write lock: one process moves it.
        if let Some(p) = path.as_deref().filter(|_| !opts.readonly)
            && conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM main.read_log) OR EXISTS (SELECT 1 FROM main.read_use)",
                [],
                |r| r.get::<_, bool>(0),
            )?
        {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            crate::store::read_file::move_from_memory(&tx, p)?;
            tx.commit()?;
        }
        // Planner statistics persist in the file; they are refreshed after
        // bulk writes and when the memory is closed, not on the way in.
        conn.execute_batch("PRAGMA analysis_limit = 400;")?;
        if fresh {
            conn.execute_batch("ANALYZE")?;
        }
        let analyzed_at = conn.total_changes();
        Ok(Self::with_conn(
            Conn::Sqlite(conn),
            path,
            None,
            audit,
            analyzed_at,
            opts.readonly,
        ))
    }

    fn with_conn(
        mut conn: Conn,
        path: Option<PathBuf>,
        location: Option<crate::store::postgres::Location>,
        audit: crate::audit::Context,
        analyzed_at: u64,
        readonly: bool,
    ) -> Nexus {
        let limits = super::Limits::new();
        if let Conn::Sqlite(c) = &mut conn {
            // (installing a handler fails only on a closed connection)
            let _ = super::Limits::install(&limits, c);
        }
        Nexus {
            limits,
            conn,
            path,
            location,
            writes: 0,
            pg_timeout: None,
            analyzed_at,
            timeout: DEFAULT_TIMEOUT,
            embedder: embed::EmbeddingConfig::from_env(),
            audit,
            in_group: false,
            suspended: false,
            held_since: None,
            longest_hold: std::time::Duration::ZERO,
            tick: None,
            want_effects: false,
            last_effects: None,
            last_search: Default::default(),
            checked_wal: std::time::Instant::now(),
            maintaining: false,
            returned: Default::default(),
            serving: None,
            reads: Default::default(),
            readonly,
            seen: Default::default(),
        }
    }

    /// Opens (creating, migrating and bootstrapping if new) the memory at
    /// a PostgreSQL location. Processes starting together on a new memory
    /// migrate and bootstrap it once (each step under an advisory lock).
    pub fn open_postgres(loc: &crate::store::postgres::Location) -> KipResult<Nexus> {
        let mut client = loc.session()?;
        crate::store::postgres::migrate(&mut client, loc)?;
        let conn = Conn::Postgres(Box::new(std::cell::RefCell::new(
            crate::store::db::PgConn::new(client),
        )));
        let audit = crate::audit::Context::default();
        let db = conn.db();
        db.begin(true)?;
        let res = (|| -> KipResult<()> {
            db.execute(
                "SELECT pg_advisory_xact_lock(hashtext(?1))",
                &[format!("somnus bootstrap {}", loc.schema()).into()],
            )?;
            let done = db
                .query_opt("SELECT 1 FROM meta WHERE key = 'bootstrapped'", &[])?
                .is_some();
            if !done {
                Self::bootstrap(db, &audit)?;
                db.execute(
                    "INSERT INTO meta(key, value) VALUES ('bootstrapped', ?1)",
                    &[crate::store::now().into()],
                )?;
            }
            Ok(())
        })();
        match res {
            Ok(()) => db.commit()?,
            Err(e) => {
                let _ = db.rollback();
                return Err(e);
            }
        }
        Ok(Self::with_conn(
            conn,
            None,
            Some(loc.clone()),
            audit,
            0,
            false,
        ))
    }

    /// Writes the bootstrap capsules inside the caller's transaction.
    fn bootstrap(tx: Db<'_>, audit: &crate::audit::Context) -> KipResult<()> {
        let who = crate::audit::Who {
            actor: "$system".into(),
            trigger: "bootstrap".into(),
            reason: Some("a new memory starts from the bootstrap capsules".into()),
        };
        let entry = crate::audit::begin(tx, audit, &who, "bootstrap capsules", "BOOTSTRAP", None)?;
        for (name, text) in BOOTSTRAP_CAPSULES {
            let cmd = kip::parse(text, &Map::new()).map_err(|e| {
                KipError::internal(format!(
                    "bootstrap capsule {name} does not parse: {}",
                    e.message
                ))
            })?;
            let Command::Upsert(stmts) = cmd else {
                return Err(KipError::internal(format!(
                    "bootstrap capsule {name} is not an UPSERT"
                )));
            };
            kml::WriteCtx::new(tx, true).upsert(&stmts).map_err(|e| {
                KipError::internal(format!("bootstrap capsule {name} failed: {}", e.message))
            })?;
        }
        crate::audit::finish(tx, audit, entry)?;
        crate::store::sync_fts(tx)?;
        Ok(())
    }
}
