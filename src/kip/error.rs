//! KIP error codes (spec Appendix 4) and the one error type every layer returns.

use serde_json::{Value, json};
use std::fmt;

/// The standard KIP error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidSyntax,
    InvalidIdentifier,
    TypeMismatch,
    ConstraintViolation,
    InvalidValueType,
    ReferenceError,
    NotFound,
    DuplicateExists,
    ImmutableTarget,
    VersionConflict,
    ExecutionTimeout,
    ResourceExhausted,
    InternalError,
}

impl ErrorCode {
    /// The code named `KIP_2001` (or any code this engine answers with).
    pub fn from_code(code: &str) -> Option<ErrorCode> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }

    const ALL: [ErrorCode; 13] = {
        use ErrorCode::*;
        [
            InvalidSyntax,
            InvalidIdentifier,
            TypeMismatch,
            ConstraintViolation,
            InvalidValueType,
            ReferenceError,
            NotFound,
            DuplicateExists,
            ImmutableTarget,
            VersionConflict,
            ExecutionTimeout,
            ResourceExhausted,
            InternalError,
        ]
    };

    pub fn code(self) -> &'static str {
        match self {
            ErrorCode::InvalidSyntax => "KIP_1001",
            ErrorCode::InvalidIdentifier => "KIP_1002",
            ErrorCode::TypeMismatch => "KIP_2001",
            ErrorCode::ConstraintViolation => "KIP_2002",
            ErrorCode::InvalidValueType => "KIP_2003",
            ErrorCode::ReferenceError => "KIP_3001",
            ErrorCode::NotFound => "KIP_3002",
            ErrorCode::DuplicateExists => "KIP_3003",
            ErrorCode::ImmutableTarget => "KIP_3004",
            ErrorCode::VersionConflict => "KIP_3005",
            ErrorCode::ExecutionTimeout => "KIP_4001",
            ErrorCode::ResourceExhausted => "KIP_4002",
            ErrorCode::InternalError => "KIP_4003",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::InvalidSyntax => "InvalidSyntax",
            ErrorCode::InvalidIdentifier => "InvalidIdentifier",
            ErrorCode::TypeMismatch => "TypeMismatch",
            ErrorCode::ConstraintViolation => "ConstraintViolation",
            ErrorCode::InvalidValueType => "InvalidValueType",
            ErrorCode::ReferenceError => "ReferenceError",
            ErrorCode::NotFound => "NotFound",
            ErrorCode::DuplicateExists => "DuplicateExists",
            ErrorCode::ImmutableTarget => "ImmutableTarget",
            ErrorCode::VersionConflict => "VersionConflict",
            ErrorCode::ExecutionTimeout => "ExecutionTimeout",
            ErrorCode::ResourceExhausted => "ResourceExhausted",
            ErrorCode::InternalError => "InternalError",
        }
    }

    /// The default recovery hint for an agent (spec Appendix 4).
    pub fn default_hint(self) -> &'static str {
        match self {
            ErrorCode::InvalidSyntax => {
                "Check parenthesis matching, keyword spelling, and statement structure. Ensure JSON data format is valid."
            }
            ErrorCode::InvalidIdentifier => "Identifiers must match regex [a-zA-Z_][a-zA-Z0-9_]*.",
            ErrorCode::TypeMismatch => {
                "Execute DESCRIBE to confirm type names. Types are case-sensitive (Drug vs drug)."
            }
            ErrorCode::ConstraintViolation => {
                "Supply the missing required attributes. Never write _-prefixed metadata: it is engine-maintained."
            }
            ErrorCode::InvalidValueType => "Correct the JSON value type.",
            ErrorCode::ReferenceError => {
                "Bind every variable in WHERE, and define each handle before the clauses that use it."
            }
            ErrorCode::NotFound => {
                "The target may have been deleted or never created. Try SEARCH or FIND to confirm existence first."
            }
            ErrorCode::DuplicateExists => {
                "Narrow the WHERE pattern until each variable matches exactly one node."
            }
            ErrorCode::ImmutableTarget => {
                "Operation prohibited: meta-types, core domains and the identity of $self/$system are protected."
            }
            ErrorCode::VersionConflict => {
                "Re-read the element for its fresh _version, re-apply your change, and retry the guarded write."
            }
            ErrorCode::ExecutionTimeout => {
                "Optimize the query: lower LIMIT, reduce UNION, regex or hops."
            }
            ErrorCode::ResourceExhausted => {
                "Use LIMIT with CURSOR pagination, or constrain the pattern by type, predicate or domain."
            }
            ErrorCode::InternalError => "Retry later; if it persists, report it with the command.",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// An error answered to a KIP caller: code, message, hint, and for syntax
/// errors the line and column (1-based) where the command went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct KipError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

pub type KipResult<T> = Result<T, KipError>;

impl KipError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        KipError {
            code,
            message: message.into(),
            hint: None,
            line: None,
            column: None,
        }
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }
    pub fn syntax(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidSyntax, message)
    }
    pub fn reference(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ReferenceError, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    pub fn type_mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::TypeMismatch, message)
    }
    pub fn constraint(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ConstraintViolation, message)
    }
    pub fn immutable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ImmutableTarget, message)
    }
    pub fn exhausted(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ResourceExhausted, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InternalError, message)
    }

    /// The `{code, message, hint}` object of a KIP response (plus the
    /// position of a syntax error).
    pub fn to_json(&self) -> Value {
        let mut obj = json!({
            "code": self.code.code(),
            "message": self.message,
            "hint": self.hint.clone().unwrap_or_else(|| self.code.default_hint().to_string()),
        });
        if let (Some(line), Some(column)) = (self.line, self.column) {
            obj["line"] = json!(line);
            obj["column"] = json!(column);
        }
        obj
    }
}

impl From<rusqlite::Error> for KipError {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(err, _) = &e {
            if err.code == rusqlite::ErrorCode::OperationInterrupted {
                return KipError::new(ErrorCode::ExecutionTimeout, "execution time limit exceeded");
            }
            if err.code == rusqlite::ErrorCode::ReadOnly {
                return KipError::new(ErrorCode::ImmutableTarget, "this request is read-only")
                    .with_hint("Use execute_kip (not execute_kip_readonly) for KML commands.");
            }
        }
        let text = e.to_string();
        // SQLite's own size limits, met by a command larger than the
        // planner's limits let through: the command's fault, not the store's.
        const SIZE_LIMITS: [&str; 6] = [
            "tables in a join",
            "Expression tree is too large",
            "too many terms in compound SELECT",
            "too many FROM clause terms",
            "too many SQL variables",
            "parser stack overflow",
        ];
        if SIZE_LIMITS.iter().any(|m| text.contains(m)) {
            return KipError::new(
                ErrorCode::ResourceExhausted,
                format!("the command is too large to plan ({text})"),
            )
            .with_hint(
                "Split the query into several smaller ones, with fewer clauses or alternatives.",
            );
        }
        KipError::internal(format!("storage error: {text}"))
    }
}
