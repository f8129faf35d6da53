//! The KIP language: grammar, syntax tree, parser and error codes.

pub mod ast;
pub mod error;
pub mod fast;
pub mod limits;
pub mod parser;

pub use ast::Command;
pub use error::{ErrorCode, KipError, KipResult};
pub use parser::{parse, parse_unbound};
