//! What the PostgreSQL tests share: the server they run against.

/// The server `SOMNUS_TEST_PG` names; without one a test says it was
/// skipped and passes, so the README's test command needs no PostgreSQL.
pub fn server() -> Option<String> {
    match std::env::var("SOMNUS_TEST_PG") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!(
                "skipped: no PostgreSQL server (set SOMNUS_TEST_PG=postgres://user@host:port/db)"
            );
            None
        }
    }
}

/// A throwaway memory on the test server: created empty, dropped with
/// the value.
#[allow(dead_code)]
pub struct Memory {
    pub loc: somnus::store::postgres::Location,
}

#[allow(dead_code)]
impl Memory {
    /// A memory named for the test (and the process, so runs never meet).
    pub fn new(url: &str, test: &str) -> Memory {
        let name = format!("{test}_{}", std::process::id());
        let loc = somnus::store::postgres::Location::parse(url, Some(&name)).expect("location");
        somnus::store::postgres::drop_memory(&loc).expect("drop");
        Memory { loc }
    }

    pub fn open(&self) -> somnus::Nexus {
        somnus::Nexus::open_postgres(&self.loc).expect("open")
    }

    /// The memory with the demo capsules loaded.
    pub fn demo(&self) -> somnus::Nexus {
        let mut nx = self.open();
        somnus::demo::load(&mut nx).expect("demo capsules");
        nx
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        let _ = somnus::store::postgres::drop_memory(&self.loc);
    }
}
