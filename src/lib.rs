//! somnus: a KIP memory engine on SQLite, with a sleep cycle and a console.

pub mod kip;
