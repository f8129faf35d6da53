//! A memory kept in PostgreSQL: where it is (a `postgres://` URL and a
//! memory name, one schema per memory, so several memories share one
//! database), connecting to it, and bringing its schema up to date from
//! the same list of migrations SQLite uses.
//!
//! The memory is chosen by `--memory NAME` or by `memory=NAME` in the
//! URL's query (`postgres://u@host/db?memory=alpha`), else `main`; its
//! schema is `somnus_<name>`. Migrating takes a transaction-scoped
//! advisory lock on the schema, so processes starting together migrate it
//! once.

use super::migrations::MIGRATIONS;
use super::pg_session::{Failure, PgSession};
use crate::kip::{ErrorCode, KipError, KipResult};
use postgres::{Client, NoTls};

/// The memory name when none is given.
pub const DEFAULT_MEMORY: &str = "main";
/// A memory name is at most this long (PostgreSQL names stop at 63 bytes;
/// the schema adds `somnus_`).
pub const MAX_MEMORY_NAME: usize = 48;
/// How long connecting may take before it is an error.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where a PostgreSQL memory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The server and database, as libpq reads them (without `memory=`).
    pub url: String,
    /// The memory's name; its schema is [`Location::schema`].
    pub memory: String,
}

/// Whether `--db` names a PostgreSQL database rather than a SQLite file.
pub fn is_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

impl Location {
    /// Reads a `postgres://` URL; `memory` (from `--memory`) wins over the
    /// URL's `memory=`.
    pub fn parse(db: &str, memory: Option<&str>) -> KipResult<Location> {
        if !is_url(db) {
            return Err(bad(format!(
                "`{db}` is not a PostgreSQL URL (postgres://user@host/database)"
            )));
        }
        let (base, query) = match db.split_once('?') {
            Some((b, q)) => (b, q),
            None => (db, ""),
        };
        let mut from_url = None;
        let mut rest = Vec::new();
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            match kv.split_once('=') {
                Some(("memory", v)) => from_url = Some(v.to_string()),
                _ => rest.push(kv),
            }
        }
        let memory = memory
            .map(str::to_string)
            .or(from_url)
            .unwrap_or_else(|| DEFAULT_MEMORY.to_string());
        check_name(&memory)?;
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        Ok(Location { url, memory })
    }

    /// The schema holding this memory.
    pub fn schema(&self) -> String {
        format!("somnus_{}", self.memory)
    }

    /// Connects, with the memory's schema first on the search path (it
    /// may not exist yet: [`migrate`] creates it).
    /// (administration: listing and dropping memories, tests).
    pub fn connect(&self) -> KipResult<Client> {
        let cfg = postgres::Config::from(self.config()?);
        let mut c = cfg.connect(NoTls).map_err(|e| unavailable(&self.url, &e))?;
        c.batch_execute(&self.session_setup())
            .map_err(|e| pg_error("setting up the session", &e))?;
        Ok(c)
    }

    /// Connects the session the engine drives (see [`PgSession`]).
    pub fn session(&self) -> KipResult<PgSession> {
        let mut s = PgSession::connect(&self.config()?).map_err(|e| match e {
            Failure::Postgres(e) => unavailable(&self.url, &e),
            Failure::Runtime(e) => KipError::new(
                ErrorCode::InternalError,
                format!("cannot start a PostgreSQL session: {e}"),
            ),
        })?;
        s.batch_execute(&self.session_setup())
            .map_err(|e| pg_error("setting up the session", &e))?;
        Ok(s)
    }

    fn config(&self) -> KipResult<tokio_postgres::Config> {
        let mut cfg: tokio_postgres::Config = self
            .url
            .parse()
            .map_err(|e| bad(format!("{}: {e}", redacted(&self.url))))?;
        // a password kept out of the URL (and so out of `ps`), as libpq
        // reads it
        if cfg.get_password().is_none()
            && let Ok(pw) = std::env::var("PGPASSWORD")
            && !pw.is_empty()
        {
            cfg.password(pw);
        }
        cfg.connect_timeout(CONNECT_TIMEOUT);
        // (pg_stat_activity shows which memory a connection serves)
        cfg.application_name(format!("somnus {}", self.memory));
        Ok(cfg)
    }

    /// What every connection runs first. JIT compilation pays off for
    /// long analytical queries; somnus's are short, and a recursive CTE's
    /// inflated estimate would have each one compiled (a 1,000-link
    /// cascade: 150 ms with it, 30 without). Quotes in string literals
    /// are doubled, backslashes are plain characters (the planner writes
    /// some literals into statements).
    fn session_setup(&self) -> String {
        format!(
            "SET search_path TO {}; SET jit = off; SET standard_conforming_strings = on",
            ident(&self.schema())
        )
    }
}

/// Memory names: lower-case letters, digits and `_`, starting with a
/// letter, at most [`MAX_MEMORY_NAME`].
fn check_name(name: &str) -> KipResult<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_MEMORY_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(bad(format!(
            "memory name `{name}`: lower-case letters, digits and _, starting with a letter, at most {MAX_MEMORY_NAME}"
        )))
    }
}

/// A quoted identifier.
fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Query parameters of a URL whose values are secrets.
const SECRET_PARAMS: [&str; 3] = ["password", "sslpassword", "sslkey"];

/// The URL without its password, for messages: the password of the user
/// part (everything up to the last `@`, so a raw `@` in a password is
/// hidden too) and any `password=` parameter.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (base, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let base = match base.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => base.to_string(),
    };
    let query = query.map(|q| {
        q.split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if SECRET_PARAMS.contains(&k.to_ascii_lowercase().as_str()) => {
                    format!("{k}=***")
                }
                _ => kv.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    match query {
        Some(q) => format!("{scheme}://{base}?{q}"),
        None => format!("{scheme}://{base}"),
    }
}

/// Whether `--db` looks like a libpq `key=value` connection string
/// (`host=… dbname=… password=…`), which somnus does not read: it would
/// otherwise be taken for a file name.
pub fn is_keyword_string(db: &str) -> bool {
    const KEYS: [&str; 8] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service",
    ];
    db.split_whitespace().any(|w| {
        w.split_once('=')
            .is_some_and(|(k, _)| KEYS.contains(&k.to_ascii_lowercase().as_str()))
    })
}

/// The words of a client error: the server's message when it sent one,
/// else the cause the client library gives (never a bare "db error").
fn detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(e) {
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        },
    }
}

fn bad(msg: String) -> KipError {
    KipError::new(ErrorCode::InvalidValueType, msg)
}

fn unavailable(url: &str, e: &postgres::Error) -> KipError {
    KipError::new(
        ErrorCode::InternalError,
        format!(
            "cannot reach PostgreSQL at {}: {}",
            redacted(url),
            detail(e)
        ),
    )
}

/// A PostgreSQL error while doing `what`, with the server's own words.
/// How an error from two writers colliding begins (see
/// [`is_concurrent_write`]).
pub const CONCURRENT_WRITE: &str = "a concurrent write collided with this one";

/// Whether a command failed only because another writer wrote the same
/// element at the same moment (its transaction was rolled back whole:
/// running it again is safe).
pub fn is_concurrent_write(e: &KipError) -> bool {
    e.code == ErrorCode::VersionConflict && e.message.starts_with(CONCURRENT_WRITE)
}

pub fn pg_error(what: &str, e: &postgres::Error) -> KipError {
    // a statement stopped by its timeout or cancelled
    if e.code() == Some(&postgres::error::SqlState::QUERY_CANCELED) {
        return KipError::new(ErrorCode::ExecutionTimeout, "execution time limit exceeded");
    }
    // two writers on one element at once: the later one's transaction
    // is rolled back whole, and the command can run again
    if let Some(code) = e.code()
        && [
            postgres::error::SqlState::T_R_SERIALIZATION_FAILURE,
            postgres::error::SqlState::T_R_DEADLOCK_DETECTED,
            postgres::error::SqlState::UNIQUE_VIOLATION,
        ]
        .contains(code)
    {
        let detail = e
            .as_db_error()
            .map_or_else(|| e.to_string(), |d| d.message().to_string());
        return KipError::new(
            ErrorCode::VersionConflict,
            format!("{CONCURRENT_WRITE}: {detail} ({})", code.code()),
        )
        .with_hint("Another writer changed the same element at the same moment; nothing was written. Retry.");
    }
    // a value PostgreSQL text cannot hold (U+0000): the value's fault, not
    // the server's, and no retry will store it
    if let Some(code) = e.code()
        && [
            postgres::error::SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            postgres::error::SqlState::UNTRANSLATABLE_CHARACTER,
        ]
        .contains(code)
    {
        return KipError::new(
            ErrorCode::InvalidValueType,
            format!(
                "a value holds a character PostgreSQL text cannot store (U+0000, NUL): {}",
                detail(e)
            ),
        )
        .with_hint("Remove the NUL character from the value; nothing was written.");
    }
    KipError::new(ErrorCode::InternalError, format!("{what}: {}", detail(e)))
}

/// What migrating asks of a connection: the engine's session, or a
/// blocking client (administration, tests).
pub trait Admin {
    fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error>;
    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, postgres::Error>;
}

impl Admin for Client {
    fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        Client::batch_execute(self, sql)
    }
    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, postgres::Error> {
        Client::query(self, sql, params)
    }
}

impl Admin for PgSession {
    fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        PgSession::batch_execute(self, sql)
    }
    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, postgres::Error> {
        PgSession::query(self, sql, params)
    }
}

/// The schema version a memory is at (0: none yet).
pub fn version(c: &mut impl Admin, loc: &Location) -> KipResult<i64> {
    let has_meta = c
        .query(
            "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'meta')",
            &[&loc.schema()],
        )
        .map_err(|e| pg_error("reading the schema version", &e))?
        .first()
        .is_some_and(|r| r.get::<_, bool>(0));
    if !has_meta {
        return Ok(0);
    }
    Ok(c.query(
        &format!(
            "SELECT value FROM {}.meta WHERE key = 'schema_version'",
            ident(&loc.schema())
        ),
        &[],
    )
    .map_err(|e| pg_error("reading the schema version", &e))?
    .first()
    .and_then(|r| r.get::<_, String>(0).parse().ok())
    .unwrap_or(0))
}

/// Creates the memory's schema if needed and applies the migrations it
/// lacks, in one transaction under an advisory lock on the schema (a
/// process starting at the same time waits, then finds it done). Returns
/// whether the memory was new.
pub fn migrate(c: &mut impl Admin, loc: &Location) -> KipResult<bool> {
    c.batch_execute("BEGIN")
        .map_err(|e| pg_error("starting the migration", &e))?;
    let out = migrate_in(c, loc);
    let end = if out.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let ended = c
        .batch_execute(end)
        .map_err(|e| pg_error("committing the migration", &e));
    let new = out?;
    ended?;
    Ok(new)
}

fn migrate_in(c: &mut impl Admin, loc: &Location) -> KipResult<bool> {
    let schema = loc.schema();
    let latest = MIGRATIONS.len() as i64;
    c.query(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&format!("somnus migrate {schema}")],
    )
    .map_err(|e| pg_error("locking the schema", &e))?;
    c.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {0}; SET LOCAL search_path TO {0}",
        ident(&schema)
    ))
    .map_err(|e| pg_error("creating the schema", &e))?;
    let has_meta = c
        .query(
            "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'meta')",
            &[&schema],
        )
        .map_err(|e| pg_error("reading the schema version", &e))?
        .first()
        .is_some_and(|r| r.get::<_, bool>(0));
    let found = if has_meta {
        c.query("SELECT value FROM meta WHERE key = 'schema_version'", &[])
            .map_err(|e| pg_error("reading the schema version", &e))?
            .first()
            .and_then(|r| r.get::<_, String>(0).parse::<i64>().ok())
            .unwrap_or(0)
    } else {
        0
    };
    if found > latest {
        return Err(KipError::new(
            ErrorCode::InternalError,
            format!(
                "memory `{}` is at schema {found}, newer than this somnus ({latest}); upgrade somnus",
                loc.memory
            ),
        ));
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        c.batch_execute(&m.postgres.replace("@schema@", &ident(&schema)))
            .map_err(|e| pg_error(&format!("migration {}", i + 1), &e))?;
    }
    if found < latest {
        c.query(
            "INSERT INTO meta(key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            &[&latest.to_string()],
        )
        .map_err(|e| pg_error("recording the schema version", &e))?;
    }
    Ok(found == 0)
}

/// Deletes a memory: its schema and everything in it.
pub fn drop_memory(loc: &Location) -> KipResult<()> {
    let mut c = loc.connect()?;
    c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {} CASCADE",
        ident(&loc.schema())
    ))
    .map_err(|e| pg_error("dropping the memory", &e))
}

/// The memories a database holds (its `somnus_*` schemas).
pub fn memories(c: &mut Client) -> KipResult<Vec<String>> {
    let rows = c
        .query(
            "SELECT substr(schema_name, 8) FROM information_schema.schemata WHERE schema_name LIKE 'somnus\\_%' ORDER BY 1",
            &[],
        )
        .map_err(|e| pg_error("listing the memories", &e))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        let l = Location::parse(
            "postgres://u:pw@h:5433/db?memory=alpha&sslmode=disable",
            None,
        )
        .expect("parse");
        assert_eq!(l.memory, "alpha");
        assert_eq!(l.url, "postgres://u:pw@h:5433/db?sslmode=disable");
        assert_eq!(l.schema(), "somnus_alpha");
        let l = Location::parse("postgresql://h/db?memory=alpha", Some("beta")).expect("parse");
        assert_eq!(l.memory, "beta");
        assert_eq!(l.url, "postgresql://h/db");
        assert_eq!(
            Location::parse("postgres://h/db", None)
                .expect("parse")
                .memory,
            DEFAULT_MEMORY
        );
        for bad in ["Alpha", "1x", "a-b", "", "a\"b", &"x".repeat(49)] {
            assert!(
                Location::parse("postgres://h/db", Some(bad)).is_err(),
                "{bad}"
            );
        }
        assert!(Location::parse("memory.db", None).is_err());
        assert_eq!(
            redacted("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
    }

    #[test]
    fn no_password_shows_in_a_redacted_url() {
        for (url, shown) in [
            ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),
            (
                "postgres://u@h/db?password=hunter2&sslmode=disable",
                "postgres://u@h/db?password=***&sslmode=disable",
            ),
            (
                "postgres://u:a:b@h:5/db?PASSWORD=x",
                "postgres://u:***@h:5/db?PASSWORD=***",
            ),
            ("postgres://h/db", "postgres://h/db"),
        ] {
            assert_eq!(redacted(url), shown);
            for secret in ["ss@h", "hunter2", "a:b", "=x"] {
                assert!(!redacted(url).contains(secret), "{url}");
            }
        }
    }

    #[test]
    fn a_keyword_connection_string_is_not_a_file_name() {
        assert!(is_keyword_string("host=localhost dbname=x password=secret"));
        assert!(is_keyword_string("dbname=x"));
        assert!(!is_keyword_string("memory.db"));
        assert!(!is_keyword_string("/tmp/a=b.db"));
        let e =
            crate::store::place::Place::parse("host=h password=secret", None).expect_err("refused");
        assert!(!e.message.contains("secret"), "{}", e.message);
    }
}
