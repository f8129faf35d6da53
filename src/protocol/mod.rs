//! The request/response envelope of `execute_kip` / `execute_kip_readonly`
//! (spec §6).

use crate::kip::KipError;
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    ExecuteKip,
    ExecuteKipReadonly,
}

impl Method {
    pub fn parse(name: &str) -> Option<Method> {
        match name {
            "execute_kip" => Some(Method::ExecuteKip),
            "execute_kip_readonly" => Some(Method::ExecuteKipReadonly),
            _ => None,
        }
    }
}

/// One entry of `commands`: a bare string, or a command with its own
/// parameters (which override the shared ones).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum CommandItem {
    Text(String),
    WithParams {
        command: String,
        #[serde(default)]
        parameters: Map<String, Value>,
    },
}

/// The arguments of `execute_kip`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub commands: Option<Vec<CommandItem>>,
    #[serde(default)]
    pub parameters: Map<String, Value>,
    #[serde(default)]
    pub dry_run: bool,
    /// Why the caller writes (a somnus addition): recorded with the write,
    /// and the rationale of a sub-agent's staged proposal.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Who is asking, recorded with every write.
#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    pub id: String,
    pub trigger: String,
    pub reason: Option<String>,
}

impl Default for Actor {
    fn default() -> Self {
        Actor {
            id: "agent".into(),
            trigger: "execute_kip".into(),
            reason: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: Method,
    pub args: Arguments,
    pub actor: Actor,
}

impl Request {
    pub fn new(method: Method, args: Arguments) -> Self {
        Request {
            method,
            args,
            actor: Actor::default(),
        }
    }

    pub fn command(command: impl Into<String>) -> Self {
        Request::new(
            Method::ExecuteKip,
            Arguments {
                command: Some(command.into()),
                ..Default::default()
            },
        )
    }

    pub fn readonly(command: impl Into<String>) -> Self {
        Request::new(
            Method::ExecuteKipReadonly,
            Arguments {
                command: Some(command.into()),
                ..Default::default()
            },
        )
    }

    pub fn with_params(mut self, params: Map<String, Value>) -> Self {
        self.args.parameters = params;
        self
    }

    /// Parses either envelope: `{"method": ..., "params": {...}}` or
    /// `{"function": {"name": ..., "arguments": {...}}}`.
    pub fn from_json(v: &Value) -> Result<Request, KipError> {
        if let Some(e) = other_version(v)
            .or_else(|| v.get("params").and_then(other_version))
            .or_else(|| v.pointer("/function/arguments").and_then(other_version))
        {
            return Err(e);
        }
        let (name, args) = if let Some(f) = v.get("function") {
            (f.get("name"), f.get("arguments"))
        } else {
            (v.get("method"), v.get("params"))
        };
        let name = name.and_then(Value::as_str).ok_or_else(|| {
            KipError::syntax("request needs \"method\" (or \"function.name\"): execute_kip or execute_kip_readonly")
        })?;
        let method = Method::parse(name).ok_or_else(|| {
            KipError::syntax(format!(
                "unknown method \"{name}\": use execute_kip or execute_kip_readonly"
            ))
        })?;
        let args = match args {
            // Some clients send the arguments as a JSON-encoded string.
            Some(Value::String(s)) => serde_json::from_str::<Arguments>(s),
            Some(a) => serde_json::from_value::<Arguments>(a.clone()),
            None => Ok(Arguments::default()),
        }
        .map_err(|e| KipError::syntax(format!("invalid arguments: {e}")))?;
        Ok(Request::new(method, args))
    }
}

/// The KIP version somnus speaks.
pub const KIP_VERSION: &str = "1.0-RC11";

/// A request in another version's shape (KIP 2.0's `{"kip": "2.0",
/// "operations": [...]}`) is refused by name, not parsed as a malformed
/// RC11 request: the error says which version somnus speaks and what to
/// send instead.
pub fn other_version(v: &Value) -> Option<KipError> {
    let obj = v.as_object()?;
    let version = obj.get("kip").map(|k| match k {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let speaks_ours = version
        .as_deref()
        .is_some_and(|s| s.trim_start_matches(['v', 'V']).starts_with("1."));
    if speaks_ours || (version.is_none() && !obj.contains_key("operations")) {
        return None;
    }
    let named = version
        .map(|s| format!("KIP {s}"))
        .unwrap_or_else(|| "a KIP version with `operations`".to_string());
    Some(
        KipError::syntax(format!(
            "this is a request in the shape of {named}; somnus speaks KIP v{KIP_VERSION}, the released version"
        ))
        .with_hint(
            "Send {\"method\": \"execute_kip\" | \"execute_kip_readonly\", \"params\": {\"command\": \"<KIP text>\", \"parameters\": {...}}} (several commands: \"commands\": [...]). The KIP 2.0 draft's `kip`/`operations` envelope is not implemented; the README's \"KIP version\" section says why and how the two differ.",
        ),
    )
}

/// One command's outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Ok {
        result: Value,
        next_cursor: Option<String>,
        /// What a write did, or under `dry_run` would do: counts and named
        /// elements created, updated, deleted (beside `result`, which
        /// keeps the shape the specification gives it).
        effects: Option<Value>,
        /// How a SEARCH ranked: `{"mode", "model"?, "not_embedded"?,
        /// "keyword_only"?}` (`engine::search::Recall`).
        search: Option<Value>,
    },
    Err(KipError),
}

impl Outcome {
    pub fn to_json(&self) -> Value {
        match self {
            Outcome::Ok {
                result,
                next_cursor,
                effects,
                search,
            } => {
                let mut o = json!({ "result": result });
                if let Some(c) = next_cursor {
                    o["next_cursor"] = json!(c);
                }
                if let Some(e) = effects {
                    o["effects"] = e.clone();
                }
                if let Some(s) = search {
                    o["search"] = s.clone();
                }
                o
            }
            Outcome::Err(e) => json!({ "error": e.to_json() }),
        }
    }

    pub fn is_err(&self) -> bool {
        matches!(self, Outcome::Err(_))
    }
}

// (one answer is built, sent and dropped: a `Single` kept inline costs
// nothing a box would save)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    Single(Outcome),
    Batch(Vec<Outcome>),
}

impl Response {
    pub fn error(e: KipError) -> Response {
        Response::Single(Outcome::Err(e))
    }

    pub fn to_json(&self) -> Value {
        match self {
            Response::Single(o) => o.to_json(),
            Response::Batch(v) => {
                json!({ "result": v.iter().map(Outcome::to_json).collect::<Vec<_>>() })
            }
        }
    }
}
