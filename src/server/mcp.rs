//! MCP over stdio (the official Rust SDK, `rmcp`): the tools `execute_kip`
//! and `execute_kip_readonly` as agents are given them, and the KIP syntax
//! card as a resource and a prompt. Approval of reflection proposals is not
//! exposed here, so an agent cannot approve its own proposals.
//!
//! A thin framing layer sits between stdio and the SDK: every line is
//! checked first, and one that is not a single JSON object gets the
//! JSON-RPC parse error (-32700, id null), a `tools/call` whose params are
//! malformed gets -32602, and a second `initialize` gets -32600, where the
//! SDK would stay silent or answer "method not found". Reads run on idle
//! reader connections, so a slow call does not hold up the others.

use super::pool::Pool;
use crate::protocol::{Arguments, Method, Request};
use crate::store::keys::{self, Identity};
use rmcp::ErrorData as McpError;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use std::sync::Arc;

const EXECUTE: &str = include_str!("../../assets/mcp/FunctionDefinition.json");
const EXECUTE_READONLY: &str = include_str!("../../assets/mcp/FunctionDefinitionReadonly.json");
const SYNTAX: &str = include_str!("../../assets/mcp/KIPSyntax.md");
const SYNTAX_URI: &str = "somnus://kip/syntax";

#[derive(Clone)]
pub struct KipMcp {
    pool: Arc<Pool>,
    /// Who calls: a key's name and role, or the `--actor` name as an agent.
    caller: Identity,
    /// The digest of the caller's key, re-checked on every call (a key
    /// revoked mid-session stops working at its next call); None for a
    /// memory without keys, which must stay without.
    key_digest: Option<String>,
    /// Set once the memory is seen with a key: a keyless session then ends.
    keyed: Arc<std::sync::atomic::AtomicBool>,
    /// Where answered calls are logged (None: `--read-log off`).
    read_log: Option<Arc<super::read_log::ReadLog>>,
}

fn tool(definition: &str) -> Tool {
    let v: Value = serde_json::from_str(definition).unwrap_or(Value::Null);
    let name = v["name"].as_str().unwrap_or("execute_kip").to_string();
    let description = v["description"].as_str().unwrap_or("").to_string();
    let schema = match &v["parameters"] {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    Tool::new(name, description, Arc::new(schema))
}

/// What the card adds for a sub-agent: its writes are proposals.
const STAGING: &str = "\n\n## You are a sub-agent: your writes are proposals\n\nThis memory has one owner. Every `execute_kip` request of yours that writes (UPSERT, UPDATE, MERGE, DELETE) is **staged**, not applied: it becomes an item of a proposal that the main agent or a person approves, edits or rejects. The answer says so: `{\"staged\": true, \"proposal\": N, \"item\": K, \"status\": \"pending\"}`. Until it is approved, your own reads see the memory as committed, without it, so do not write the same thing again (a repeated write is answered `staged: false`, already proposed). Give a `reason` with each write (`{\"command\": ..., \"reason\": \"why\"}`): it is what the reviewer reads. A write that would fail (an undefined type, a missing concept) fails at once with its KIP error.\n";

impl KipMcp {
    /// The syntax card, with what staging means when the caller is a
    /// sub-agent.
    fn card(&self) -> String {
        if self.caller.role == keys::Role::Subagent {
            format!("{SYNTAX}{STAGING}")
        } else {
            SYNTAX.to_string()
        }
    }

    pub fn new(
        pool: Arc<Pool>,
        caller: Identity,
        key_digest: Option<String>,
        read_log: Option<Arc<super::read_log::ReadLog>>,
    ) -> Self {
        KipMcp {
            pool,
            caller,
            key_digest,
            read_log,
            keyed: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        }
    }

    /// The caller's authority, checked again for this call.
    async fn recheck(&self) -> Option<crate::kip::KipError> {
        let (digest, keyed) = (self.key_digest.clone(), self.keyed.clone());
        let ok = self
            .pool
            .read(move |nx| keys::still_admitted(nx.db(), digest.as_deref(), &keyed))
            .await;
        match ok {
            Ok(Ok(true)) => None,
            Ok(Ok(false)) => Some(crate::kip::KipError::new(
                crate::kip::ErrorCode::ImmutableTarget,
                if self.key_digest.is_some() {
                    format!(
                        "key `{}` was revoked: this session may no longer call",
                        self.caller.name
                    )
                } else {
                    "this memory has keys now: start the session again with --key or $SOMNUS_KEY"
                        .to_string()
                },
            )),
            // unreadable: refused, never let through
            Ok(Err(e)) | Err(e) => Some(e),
        }
    }
}

impl ServerHandler for KipMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build())
            .with_server_info(Implementation::new("somnus", env!("CARGO_PKG_VERSION")))
            .with_instructions("Your long-term memory, spoken in KIP v1.0-RC11. Read the syntax card (resource somnus://kip/syntax or prompt kip_syntax), start with DESCRIBE PRIMER, and prefer execute_kip_readonly for reads.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            tool(EXECUTE),
            tool(EXECUTE_READONLY),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let method = match request.name.as_ref() {
            "execute_kip" => Method::ExecuteKip,
            "execute_kip_readonly" => Method::ExecuteKipReadonly,
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        if let Some(err) = self.recheck().await {
            return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(serde_json::json!({ "error": err.to_json() }).to_string()),
            ])));
        }
        let raw = Value::Object(request.arguments.unwrap_or_default());
        if let Some(err) = crate::protocol::other_version(&raw) {
            return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(serde_json::json!({ "error": err.to_json() }).to_string()),
            ])));
        }
        let args: Arguments = match serde_json::from_value(raw) {
            Ok(a) => a,
            Err(e) => {
                let err = crate::kip::KipError::syntax(format!("invalid arguments: {e}"));
                return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                    ContentBlock::text(serde_json::json!({ "error": err.to_json() }).to_string()),
                ])));
            }
        };
        let mut req = Request::new(method, args);
        req.actor.id = self.caller.name.clone();
        req.actor.trigger = "mcp".into();
        req.actor.reason = req.args.reason.clone();
        if let Some(err) = super::gate::refuse(&req, &self.caller) {
            return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(serde_json::json!({ "error": err.to_json() }).to_string()),
            ])));
        }
        let caller = self.caller.clone();
        super::gate::read_only_for(&mut req, &caller);
        let at = crate::store::now();
        let logging = self.read_log.is_some();
        let log = |(v, served): (Value, Vec<crate::audit::reads::Served>)| {
            if let Some(l) = &self.read_log {
                l.record(&self.caller.name, "mcp", at.clone(), served);
            }
            v
        };
        let out = if super::gate::stages(&req, &caller) {
            self.pool
                .write(move |nx| super::gate::stage(nx, &req, &caller).to_json())
                .await
        } else {
            let read_only = self.pool.separates_reads() && super::is_read_only(&req);
            let run = move |nx: &mut crate::Nexus| {
                let (r, served) = super::answer(nx, &req, logging);
                (r.to_json(), served)
            };
            let answered = if read_only {
                self.pool.read(run).await
            } else {
                self.pool.write(run).await
            };
            answered.map(log)
        };
        let resp = out.map_err(|e| McpError::internal_error(e.message, None))?;
        let text = resp.to_string();
        let result = if resp.get("error").is_some() {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        Ok(CallToolResponse::Complete(result))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let r = Resource::new(SYNTAX_URI, "kip_syntax").with_title("KIP syntax card");
        Ok(ListResourcesResult::with_all_items(vec![r]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != SYNTAX_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![ResourceContents::text(self.card(), SYNTAX_URI)],
        )))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "kip_syntax",
            Some("The KIP syntax card: how to read and write this memory"),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != "kip_syntax" {
            return Err(McpError::invalid_params(
                format!("no prompt {}", request.name),
                None,
            ));
        }
        Ok(GetPromptResponse::Complete(GetPromptResult::new(vec![
            PromptMessage::new_text(Role::User, self.card()),
        ])))
    }
}

/// Serves MCP on standard input and output until the client disconnects.
pub async fn serve_stdio(
    pool: Pool,
    caller: Identity,
    key_digest: Option<String>,
    read_log: Option<super::read_log::Settings>,
) -> Result<(), String> {
    serve_io_logged(
        pool,
        caller,
        key_digest,
        tokio::io::stdin(),
        tokio::io::stdout(),
        read_log,
    )
    .await
}

/// Serves MCP on any line-oriented pair of streams (stdio, or a test's
/// pipes), through the framing layer.
pub async fn serve_io(
    pool: Pool,
    actor: &str,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
) -> Result<(), String> {
    let caller = Identity {
        name: actor.to_string(),
        role: keys::Role::Agent,
    };
    serve_io_as(pool, caller, None, input, output).await
}

/// `serve_io` for a caller with a key's identity and role (requests
/// logged with the default retention).
pub async fn serve_io_as(
    pool: Pool,
    caller: Identity,
    key_digest: Option<String>,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
) -> Result<(), String> {
    let log = Some(super::read_log::Settings::default());
    serve_io_logged(pool, caller, key_digest, input, output, log).await
}

/// `serve_io_as`, logging requests with these settings (None: not at all).
pub async fn serve_io_logged(
    pool: Pool,
    caller: Identity,
    key_digest: Option<String>,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
    read_log: Option<super::read_log::Settings>,
) -> Result<(), String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (mut to_sdk, sdk_in) = tokio::io::duplex(1 << 16);
    let (sdk_out, from_sdk) = tokio::io::duplex(1 << 16);
    // one writer owns the output, so lines never interleave
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    let sdk_lines = tx.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_sdk).split(b'\n');
        while let Ok(Some(line)) = lines.next_segment().await {
            if sdk_lines.send(line).is_err() {
                break;
            }
        }
    });
    let errors = tx.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(input).split(b'\n');
        let mut initialized = false;
        while let Ok(Some(line)) = lines.next_segment().await {
            match check_line(&line, &mut initialized) {
                Frame::Skip => {}
                Frame::Answer(v) => {
                    let _ = errors.send(v.to_string().into_bytes());
                }
                Frame::Pass => {
                    if to_sdk.write_all(&line).await.is_err()
                        || to_sdk.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
            }
        }
        // end of input: the SDK sees its input close and stops
        let _ = to_sdk.shutdown().await;
    });
    drop(tx);
    let served = async {
        let actor = caller.name.clone();
        let pool = Arc::new(pool);
        let log = read_log.map(|s| super::read_log::ReadLog::start(pool.clone(), s, None));
        let mcp = KipMcp::new(pool.clone(), caller, key_digest, log.clone());
        let started = chrono::Utc::now();
        let service = mcp
            .serve((sdk_in, sdk_out))
            .await
            .map_err(|e| e.to_string())?;
        let waited = service.waiting().await.map_err(|e| e.to_string());
        // the client went away: if its session wrote, the maintainer runs
        // a post-session cycle for it
        let _ = pool
            .write(move |nx| {
                if crate::sleep::schedule::writes_by_since(nx, &actor, started) > 0 {
                    crate::sleep::schedule::session_ended(nx, &actor, None, chrono::Utc::now())?;
                }
                Ok::<(), crate::kip::KipError>(())
            })
            .await;
        if let Some(l) = log {
            l.close(std::time::Duration::from_secs(3)).await;
        }
        waited?;
        Ok::<(), String>(())
    }
    .await;
    let _ = writer.await;
    served
}

enum Frame {
    /// Hand the line to the SDK.
    Pass,
    /// Answer it here.
    Answer(Value),
    /// A blank line.
    Skip,
}

fn rpc_error(id: Value, code: i64, message: String) -> Frame {
    Frame::Answer(serde_json::json!({
        "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message }
    }))
}

/// What the framing layer does with one input line.
fn check_line(line: &[u8], initialized: &mut bool) -> Frame {
    let Ok(text) = std::str::from_utf8(line) else {
        return rpc_error(
            Value::Null,
            -32700,
            "Parse error: the line is not UTF-8".into(),
        );
    };
    if text.trim().is_empty() {
        return Frame::Skip;
    }
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return rpc_error(Value::Null, -32700, format!("Parse error: {e}")),
    };
    let Value::Object(m) = &v else {
        return rpc_error(
            Value::Null,
            -32600,
            "Invalid Request: a message is one JSON object".into(),
        );
    };
    let id = m.get("id").cloned().unwrap_or(Value::Null);
    let is_request = m.contains_key("id");
    match m.get("method").and_then(Value::as_str) {
        Some("initialize") if is_request => {
            if *initialized {
                return rpc_error(
                    id,
                    -32600,
                    "Invalid Request: the session is already initialized".into(),
                );
            }
            *initialized = true;
        }
        Some("tools/call") if is_request => {
            let problem = match m.get("params") {
                None => Some("tools/call needs params".to_string()),
                Some(Value::Object(p)) => match (p.get("name"), p.get("arguments")) {
                    (Some(Value::String(_)), None | Some(Value::Object(_)) | Some(Value::Null)) => {
                        None
                    }
                    (Some(Value::String(_)), Some(a)) => {
                        Some(format!("tools/call arguments must be an object, not {a}"))
                    }
                    (None, _) => Some("tools/call needs params.name".into()),
                    (Some(n), _) => {
                        Some(format!("tools/call params.name must be a string, not {n}"))
                    }
                },
                Some(p) => Some(format!("tools/call params must be an object, not {p}")),
            };
            if let Some(p) = problem {
                return rpc_error(id, -32602, format!("Invalid params: {p}"));
            }
        }
        _ => {}
    }
    Frame::Pass
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(f: Frame) -> Option<(Value, i64)> {
        match f {
            Frame::Answer(v) => Some((v["id"].clone(), v["error"]["code"].as_i64()?)),
            _ => None,
        }
    }

    #[test]
    fn malformed_lines_get_json_rpc_errors() {
        let mut init = false;
        for bad in [&b"{nope"[..], b"\xff\xfe", b"{} {}", b"\x00\x01binary"] {
            assert_eq!(
                code(check_line(bad, &mut init)),
                Some((Value::Null, -32700))
            );
        }
        assert!(matches!(
            check_line(
                br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
                &mut init
            ),
            Frame::Pass
        ));
        assert_eq!(
            code(check_line(
                br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#,
                &mut init
            )),
            Some((serde_json::json!(2), -32600))
        );
        for bad in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_kip","arguments":[1]}}"#,
        ] {
            assert_eq!(
                code(check_line(bad.as_bytes(), &mut init)),
                Some((serde_json::json!(3), -32602)),
                "{bad}"
            );
        }
    }
}
