//! somnus: a KIP memory engine on SQLite, with a sleep cycle and a console.

extern crate alloc;

pub mod analysis;
pub mod audit;
pub mod bench;
pub mod cli;
pub mod conformance;
pub mod demo;
pub mod engine;
pub mod import;
pub mod kip;
pub mod protocol;
pub mod review;
pub mod secrets;
pub mod server;
pub mod sleep;
pub mod store;
pub mod text;
pub mod tui;

pub use engine::Nexus;
pub use protocol::{Request, Response};
