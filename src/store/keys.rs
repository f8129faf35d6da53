//! Callers' keys: each has a name (its identity in the audit trail) and a
//! role. Only a SHA-256 digest of a key is stored; the key itself is shown
//! once, when it is made.

use super::db::{Db, Val};
use crate::kip::{ErrorCode, KipError, KipResult};

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
pub fn add<'a>(db: impl Into<Db<'a>>, name: &str, role: Role, by: &str) -> KipResult<String> {
    let db = db.into();
    check_name(name)?;
    if db
        .query_opt("SELECT 1 FROM api_keys WHERE name = ?1", &[Val::from(name)])?
        .is_some()
    {
        return Err(KipError::new(
            ErrorCode::DuplicateExists,
            format!(
                "a key named `{name}` exists already (names are never reused, so the audit trail stays unambiguous)"
            ),
        ));
    }
    let key = fresh_key()?;
    db.execute(
        "INSERT INTO api_keys(name, role, digest, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5)",
        &[
            Val::from(name),
            Val::from(role.as_str()),
            Val::Text(digest(&key)),
            Val::Text(super::now()),
            Val::from(by),
        ],
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

pub fn list<'a>(db: impl Into<Db<'a>>) -> KipResult<Vec<KeyInfo>> {
    db.into()
        .query(
            "SELECT name, role, created_at, created_by, revoked_at FROM api_keys ORDER BY name",
            &[],
        )?
        .into_iter()
        .map(|mut r| {
            Ok(KeyInfo {
                name: r.take_text(0)?,
                role: r.take_text(1)?,
                created_at: r.take_text(2)?,
                created_by: r.take_text(3)?,
                revoked_at: r.opt_text(4)?,
            })
        })
        .collect()
}

/// Revokes a key at once; its name stays taken.
pub fn revoke<'a>(db: impl Into<Db<'a>>, name: &str) -> KipResult<()> {
    let n = db.into().execute(
        "UPDATE api_keys SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
        &[Val::from(name), Val::Text(super::now())],
    )?;
    if n == 0 {
        return Err(KipError::not_found(format!("no active key named `{name}`")));
    }
    Ok(())
}

/// Whether the memory has any active key (then every caller needs one).
pub fn any_active<'a>(db: impl Into<Db<'a>>) -> KipResult<bool> {
    Ok(db
        .into()
        .query_opt(
            "SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1",
            &[],
        )?
        .is_some())
}

/// Whether a caller admitted at the start of a session may still call:
/// with a key (its digest), that key is still active; without one, the
/// memory has never had an active key since (`keyed` remembers one seen).
pub fn still_admitted<'a>(
    db: impl Into<Db<'a>>,
    key_digest: Option<&str>,
    keyed: &std::sync::atomic::AtomicBool,
) -> KipResult<bool> {
    let db = db.into();
    match key_digest {
        Some(d) => Ok(db
            .query_opt(
                "SELECT 1 FROM api_keys WHERE digest = ?1 AND revoked_at IS NULL",
                &[Val::Text(d.to_string())],
            )?
            .is_some()),
        None => {
            if any_active(db)? {
                keyed.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(!keyed.load(std::sync::atomic::Ordering::SeqCst))
        }
    }
}

/// The identity behind a key, if it is active.
pub fn lookup<'a>(db: impl Into<Db<'a>>, key: &str) -> KipResult<Option<Identity>> {
    let row = db.into().query_opt(
        "SELECT name, role FROM api_keys WHERE digest = ?1 AND revoked_at IS NULL",
        &[Val::Text(digest(key))],
    )?;
    Ok(match row {
        Some(mut r) => {
            let (name, role) = (r.take_text(0)?, r.take_text(1)?);
            Role::parse(&role).map(|role| Identity { name, role })
        }
        None => None,
    })
}

/// Every active key's identity by digest (what a server keeps in memory
/// and reloads every second, so revoking takes effect within one).
pub fn active<'a>(db: impl Into<Db<'a>>) -> KipResult<std::collections::HashMap<String, Identity>> {
    let mut out = std::collections::HashMap::new();
    for mut r in db.into().query(
        "SELECT digest, name, role FROM api_keys WHERE revoked_at IS NULL",
        &[],
    )? {
        let (d, name, role) = (r.take_text(0)?, r.take_text(1)?, r.take_text(2)?);
        if let Some(role) = Role::parse(&role) {
            out.insert(d, Identity { name, role });
        }
    }
    Ok(out)
}
