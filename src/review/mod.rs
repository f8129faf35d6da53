//! The review layer: what waits for a human before it changes the memory.
//! Proposals and their items (each one change with its preview, targets
//! and versions), decisions (approve all, some or edited; reject with a
//! reason), policies for who may decide what, conflict marks between
//! pending items, sub-agents' staged writes, the operator's decisions on
//! pairs (labels the matcher learns from), and undo that keeps all of them
//! with the audit trail. The sleep cycle, sub-agent staging, import, the
//! console, the CLI and the server are its clients; it uses the engine, the
//! audit trail and the store below it, and nothing above.

pub mod conflicts;
pub mod impact;
pub mod labels;
pub mod proposals;
pub mod undo;
