//! Batches: how a phase keeps the write lock short. A phase that only
//! proposes reads unlocked and stages in short transactions (`locked`); a
//! phase that writes commits at yield points (`Cx::yield_lock`), reads
//! what it may without the lock (`Cx::unlocked`), and writes only what is
//! unchanged since it was read (`versions`).

use super::*;

impl Cx<'_> {
    /// A yield point, where the phase has nothing read but not yet written:
    /// once the phase's transaction has held the write lock for the slice,
    /// its work so far commits as one batch (audited under the run's group,
    /// the run record updated to match), agents' writes waiting on the lock
    /// get in, and the phase goes on in a new transaction. A kill or cancel
    /// loses only the batch in progress; a later cycle picks up where the
    /// committed ones left off (each phase skips what it already did: decay
    /// markers, scores, proposals already staged).
    /// Returns whether it committed (what was read before may have changed
    /// since: a caller holding a read re-reads it).
    pub(super) fn yield_lock(&mut self, nx: &mut Nexus) -> KipResult<bool> {
        let held = self.slice_start.elapsed();
        if held < self.slice || nx.is_suspended() {
            return Ok(false);
        }
        self.cancelled()?;
        self.phase.batches += 1;
        // the run record says what is committed: the phases done and this
        // one's batches so far
        let mut partial = self.report.clone();
        let mut ph = self.phase.clone();
        ph.lines.push(format!(
            "(in progress: {} batch{} committed)",
            ph.batches,
            if ph.batches == 1 { "" } else { "es" }
        ));
        partial.phases.push(ph);
        nx.db().execute(
            "UPDATE sleep_runs SET report = ?2 WHERE id = ?1",
            crate::args![self.run, partial.to_json().to_string()],
        )?;
        nx.checkpoint(YIELD_PAUSE)?;
        self.slice_start = Instant::now();
        Ok(true)
    }

    /// Runs `f`, which only reads, without holding the write lock: what
    /// the phase wrote so far commits first (as at a yield point).
    pub(super) fn unlocked<T>(
        &mut self,
        nx: &mut Nexus,
        f: impl FnOnce(&mut Nexus) -> KipResult<T>,
    ) -> KipResult<T> {
        if nx.is_suspended() || !self.batched() {
            return f(nx);
        }
        self.phase.batches += 1;
        nx.suspend_group()?;
        let out = f(nx);
        nx.resume_group()?;
        self.slice_start = Instant::now();
        out
    }

    /// Whether the phase commits in batches (see `slice`).
    pub(super) fn batched(&self) -> bool {
        self.slice != WHOLE_PHASE
    }
}

/// How long a phase holds the write lock before it commits a batch at its
/// next yield point (`SOMNUS_SLEEP_SLICE_MS` sets it; 0: commit at every
/// yield point; `phase`: no batches, each phase one transaction).
pub(super) fn slice() -> std::time::Duration {
    match std::env::var("SOMNUS_SLEEP_SLICE_MS").ok().as_deref() {
        Some("phase") => WHOLE_PHASE,
        Some(v) => v
            .parse::<u64>()
            .map(std::time::Duration::from_millis)
            .unwrap_or(DEFAULT_SLICE),
        None => DEFAULT_SLICE,
    }
}

/// The slice that means "no batches".
pub(super) const WHOLE_PHASE: std::time::Duration = std::time::Duration::MAX;

/// A phase's batches hold the write lock about this long at most.
pub(super) const DEFAULT_SLICE: std::time::Duration = std::time::Duration::from_millis(8);
/// Between batches the phase waits this long: writers of other processes,
/// which poll for the lock every millisecond, get in.
pub(super) const YIELD_PAUSE: std::time::Duration = std::time::Duration::from_millis(2);

/// Runs `f` holding the write lock: in a phase that reads unlocked, as a
/// short transaction of its own (left open on failure, so the phase's
/// group rolls it back).
pub(super) fn locked<T>(
    nx: &mut Nexus,
    f: impl FnOnce(&mut Nexus) -> KipResult<T>,
) -> KipResult<T> {
    if !nx.is_suspended() {
        return f(nx);
    }
    nx.resume_group()?;
    let out = f(nx)?;
    nx.suspend_group()?;
    Ok(out)
}

/// The current version of each of these elements (`C:12`, `P:12:knows`)
/// in `table` (concepts or propositions), by id; one that is gone is
/// missing. A batch read without the write lock writes only what is
/// unchanged since.
pub(super) fn versions<'a>(
    nx: &Nexus,
    table: &str,
    ids: impl Iterator<Item = &'a str>,
) -> KipResult<HashMap<&'a str, i64>> {
    let mut out = HashMap::new();
    let sql = match table {
        "concepts" => "SELECT version FROM concepts WHERE id = ?1",
        _ => "SELECT version FROM propositions WHERE id = ?1",
    };
    let db = nx.db();
    for id in ids {
        let Some(n) = id.split(':').nth(1).and_then(|n| n.parse::<i64>().ok()) else {
            continue;
        };
        if let Some(v) = db.query_i64(sql, crate::args![n])? {
            out.insert(id, v);
        }
    }
    Ok(out)
}
