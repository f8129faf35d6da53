//! The sleep cycle's state assessment (Phase 1A of the sleep-mode
//! instructions): the memory's health against its targets, found through
//! the engine's own KIP API.

pub mod health;
