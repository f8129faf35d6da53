//! Where a memory lives: a SQLite file, or a schema in a PostgreSQL
//! database. `--db` (or `$SOMNUS_DB`) names either; `--memory NAME` picks
//! the memory inside a PostgreSQL database.

use super::postgres::{self, Location};
use crate::kip::{ErrorCode, KipError, KipResult};
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    File(PathBuf),
    Postgres(Location),
}

impl Place {
    /// Reads `--db`: a `postgres://` URL, else a file path. `memory` names
    /// a memory in a PostgreSQL database; with a file it is an error (a
    /// file holds one memory).
    pub fn parse(db: &str, memory: Option<&str>) -> KipResult<Place> {
        if postgres::is_url(db) {
            return Location::parse(db, memory).map(Place::Postgres);
        }
        if let Some(m) = memory {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!(
                    "--memory {m}: a SQLite file holds one memory; --memory chooses one in a PostgreSQL database (--db postgres://…)"
                ),
            ));
        }
        if postgres::is_keyword_string(db) {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                "--db looks like a libpq `key=value` connection string, which somnus does not read (nothing was created)",
            )
            .with_hint(
                "Give a URL: postgres://USER@HOST:PORT/DATABASE, with the password in $PGPASSWORD rather than on the command line.",
            ));
        }
        if db.is_empty() {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                "--db is empty: give a file path or a postgres:// URL",
            ));
        }
        Ok(Place::File(PathBuf::from(db)))
    }

    /// Whether the memory is there already (a PostgreSQL memory is created
    /// on first open, so it counts as there).
    pub fn exists(&self) -> bool {
        match self {
            Place::File(p) => p.exists(),
            Place::Postgres(_) => true,
        }
    }

    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Place::File(p) => Some(p),
            Place::Postgres(_) => None,
        }
    }
}

impl From<PathBuf> for Place {
    fn from(p: PathBuf) -> Place {
        Place::File(p)
    }
}

impl From<&std::path::Path> for Place {
    fn from(p: &std::path::Path) -> Place {
        Place::File(p.to_path_buf())
    }
}

impl From<Location> for Place {
    fn from(l: Location) -> Place {
        Place::Postgres(l)
    }
}

/// As shown to people: the path, or the server (its password hidden) and
/// the memory's name.
impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::File(p) => write!(f, "{}", p.display()),
            Place::Postgres(l) => write!(f, "{} (memory {})", postgres::redacted(&l.url), l.memory),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_names_a_file_or_a_postgresql_memory() {
        assert_eq!(
            Place::parse("/tmp/m.db", None).unwrap(),
            Place::File("/tmp/m.db".into())
        );
        let p = Place::parse("postgres://u:secret@h/db?memory=team", None).unwrap();
        let Place::Postgres(l) = &p else { panic!() };
        assert_eq!(l.memory, "team");
        assert!(!p.to_string().contains("secret"), "{p}");
        assert!(p.to_string().contains("memory team"));
        let p = Place::parse("postgresql://h/db", Some("other")).unwrap();
        assert!(p.to_string().contains("memory other"));
        assert!(Place::parse("/tmp/m.db", Some("x")).is_err());
        assert!(Place::parse("", None).is_err());
        assert!(Place::parse("postgres://h/db", Some("no spaces")).is_err());
    }
}
