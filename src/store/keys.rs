//! Callers' keys: each has a name (its identity in the audit trail) and a
//! role. Only a SHA-256 digest of a key is stored; the key itself is shown
//! once, when it is made.

use crate::kip::{ErrorCode, KipError, KipResult};
use rusqlite::{Connection, OptionalExtension, params};

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `execute_kip_readonly` only.
    Reader,
    /// Reads and writes, as any agent.
    Agent,
    /// Reads committed memory; every write becomes a proposal for review.
    Subagent,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "reader" => Some(Role::Reader),
            "agent" => Some(Role::Agent),
            "subagent" => Some(Role::Subagent),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Agent => "agent",
            Role::Subagent => "subagent",
        }
    }
}

/// Who a request comes from: a key's name and role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub role: Role,
}

/// Names no key and no header may claim: they stand for the agent itself,
/// the system, and the human at the console.
pub const RESERVED: &[&str] = &["$self", "$system", "operator", "preview"];

/// Whether a name is reserved (case-insensitive, and anything starting
/// with `$`).
pub fn is_reserved(name: &str) -> bool {
    let n = name.trim().to_lowercase();
    n.starts_with('$') || RESERVED.iter().any(|r| *r == n)
}

/// A key's name: 1 to 64 letters, digits, `-`, `_`, `.`, not reserved.
pub fn check_name(name: &str) -> KipResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(KipError::syntax(format!(
            "`{name}` is not a key name: use 1 to 64 letters, digits, `-`, `_` or `.`"
        )));
    }
    if is_reserved(name) {
        return Err(KipError::new(
            ErrorCode::ImmutableTarget,
            format!(
                "`{name}` is reserved: it stands for the agent itself, the system or the operator"
            ),
        ));
    }
    Ok(())
}

/// The stored form of a key.
pub fn digest(key: &str) -> String {
    use sha2::Digest;
    let d: [u8; 32] = sha2::Sha256::digest(key.as_bytes()).into();
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh key: `smk_` and 43 characters of 256 random bits.
fn fresh_key() -> KipResult<String> {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| KipError::new(ErrorCode::InternalError, format!("no randomness: {e}")))?;
    Ok(format!(
        "smk_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    ))
}

/// Makes a key for `name` with `role`, and returns it (the only time it is
/// seen). A name in use, revoked or not, is refused.
pub fn add(conn: &Connection, name: &str, role: Role, by: &str) -> KipResult<String> {
    check_name(name)?;
    let exists: bool = conn
        .query_row("SELECT 1 FROM api_keys WHERE name = ?1", [name], |_| {
            Ok(true)
        })
        .optional()?
        .unwrap_or(false);
    if exists {
        return Err(KipError::new(
            ErrorCode::DuplicateExists,
            format!(
                "a key named `{name}` exists already (names are never reused, so the audit trail stays unambiguous)"
            ),
        ));
    }
    let key = fresh_key()?;
    conn.execute(
        "INSERT INTO api_keys(name, role, digest, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![name, role.as_str(), digest(&key), super::now(), by],
    )?;
    Ok(key)
}

/// One key as listed: never the key itself.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyInfo {
    pub name: String,
    pub role: String,
    pub created_at: String,
    pub created_by: String,
    pub revoked_at: Option<String>,
}

pub fn list(conn: &Connection) -> KipResult<Vec<KeyInfo>> {
    let mut st = conn.prepare(
        "SELECT name, role, created_at, created_by, revoked_at FROM api_keys ORDER BY name",
    )?;
    let rows = st.query_map([], |r| {
        Ok(KeyInfo {
            name: r.get(0)?,
            role: r.get(1)?,
            created_at: r.get(2)?,
            created_by: r.get(3)?,
            revoked_at: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Revokes a key at once; its name stays taken.
pub fn revoke(conn: &Connection, name: &str) -> KipResult<()> {
    let n = conn.execute(
        "UPDATE api_keys SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
        params![name, super::now()],
    )?;
    if n == 0 {
        return Err(KipError::not_found(format!("no active key named `{name}`")));
    }
    Ok(())
}

/// Whether the memory has any active key (then every caller needs one).
pub fn any_active(conn: &Connection) -> KipResult<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1",
            [],
            |_| Ok(true),
        )
        .optional()?
        .unwrap_or(false))
}

/// The identity behind a key, if it is active.
pub fn lookup(conn: &Connection, key: &str) -> KipResult<Option<Identity>> {
    let row: Option<(String, String)> = conn
        .prepare_cached("SELECT name, role FROM api_keys WHERE digest = ?1 AND revoked_at IS NULL")?
        .query_row([digest(key)], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(row.and_then(|(name, role)| Role::parse(&role).map(|role| Identity { name, role })))
}

/// Every active key's identity by digest (what a server keeps in memory
/// and reloads every second, so revoking takes effect within one).
pub fn active(conn: &Connection) -> KipResult<std::collections::HashMap<String, Identity>> {
    let mut st =
        conn.prepare_cached("SELECT digest, name, role FROM api_keys WHERE revoked_at IS NULL")?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut out = std::collections::HashMap::new();
    for row in rows {
        let (d, name, role) = row?;
        if let Some(role) = Role::parse(&role) {
            out.insert(d, Identity { name, role });
        }
    }
    Ok(out)
}
