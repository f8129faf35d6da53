//! The demo memory: an agent's six weeks with its user, with the cases a
//! sleep cycle must find planted in it (listed in `assets/demo/README.md`).

use crate::Nexus;
use crate::kip::{KipError, KipResult};
use crate::protocol::{Outcome, Request};
use std::path::Path;

pub const DEMO_CAPSULES: &[(&str, &str)] = &[
    ("00-schema", include_str!("../assets/demo/00-schema.kip")),
    ("10-world", include_str!("../assets/demo/10-world.kip")),
    ("20-people", include_str!("../assets/demo/20-people.kip")),
    (
        "25-wider-world",
        include_str!("../assets/demo/25-wider-world.kip"),
    ),
    ("30-events", include_str!("../assets/demo/30-events.kip")),
    (
        "40-knowledge",
        include_str!("../assets/demo/40-knowledge.kip"),
    ),
];

/// Loads the demo capsules into a memory.
pub fn load(nx: &mut Nexus) -> KipResult<()> {
    for (name, text) in DEMO_CAPSULES {
        let mut req = Request::command(*text);
        req.actor.id = "demo".into();
        req.actor.trigger = "somnus demo".into();
        match nx.execute(&req) {
            crate::Response::Single(Outcome::Err(e)) => {
                return Err(KipError::internal(format!(
                    "demo capsule {name} failed: {} {}",
                    e.code, e.message
                )));
            }
            crate::Response::Single(_) => {}
            crate::Response::Batch(_) => {}
        }
    }
    Ok(())
}

/// Creates a fresh demo memory at `place`, replacing any memory there.
pub fn create_at(place: &crate::store::place::Place) -> KipResult<Nexus> {
    match place {
        crate::store::place::Place::File(p) => create(p),
        crate::store::place::Place::Postgres(l) => {
            crate::store::postgres::drop_memory(l)?;
            let mut nx = Nexus::open_postgres(l)?;
            load(&mut nx)?;
            Ok(nx)
        }
    }
}

/// Creates a fresh demo memory at `path`, replacing any file there.
pub fn create(path: &Path) -> KipResult<Nexus> {
    for suffix in ["", "-wal", "-shm", "-reads", "-reads-wal", "-reads-shm"] {
        let p = format!("{}{suffix}", path.display());
        if Path::new(&p).exists() {
            std::fs::remove_file(&p)
                .map_err(|e| KipError::internal(format!("cannot replace {p}: {e}")))?;
        }
    }
    let mut nx = Nexus::open(path)?;
    load(&mut nx)?;
    Ok(nx)
}

/// A demo memory in memory (tests, screenshots).
pub fn in_memory() -> KipResult<Nexus> {
    let mut nx = Nexus::open_in_memory()?;
    load(&mut nx)?;
    Ok(nx)
}
