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
