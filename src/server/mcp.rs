//! MCP over stdio (the official Rust SDK, `rmcp`): the tools `execute_kip`
//! and `execute_kip_readonly` as agents are given them, and the KIP syntax
//! card as a resource and a prompt. Approval of reflection proposals is not
//! exposed here, so an agent cannot approve its own proposals.

use crate::Nexus;
use crate::protocol::{Arguments, Method, Request};
use rmcp::ErrorData as McpError;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

const EXECUTE: &str = include_str!("../../assets/mcp/FunctionDefinition.json");
const EXECUTE_READONLY: &str = include_str!("../../assets/mcp/FunctionDefinitionReadonly.json");
const SYNTAX: &str = include_str!("../../assets/mcp/KIPSyntax.md");
const SYNTAX_URI: &str = "somnus://kip/syntax";

#[derive(Clone)]
pub struct KipMcp {
    nexus: Arc<Mutex<Nexus>>,
    actor: String,
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

impl KipMcp {
    pub fn new(nexus: Nexus, actor: &str) -> Self {
        KipMcp {
            nexus: Arc::new(Mutex::new(nexus)),
            actor: actor.to_string(),
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
        let args: Arguments =
            match serde_json::from_value(Value::Object(request.arguments.unwrap_or_default())) {
                Ok(a) => a,
                Err(e) => {
                    let err = crate::kip::KipError::syntax(format!("invalid arguments: {e}"));
                    return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                        ContentBlock::text(
                            serde_json::json!({ "error": err.to_json() }).to_string(),
                        ),
                    ])));
                }
            };
        let mut req = Request::new(method, args);
        req.actor.id = self.actor.clone();
        req.actor.trigger = "mcp".into();
        let nexus = self.nexus.clone();
        let resp = tokio::task::spawn_blocking(move || {
            let mut nx = nexus.lock().unwrap_or_else(|e| e.into_inner());
            nx.execute(&req).to_json()
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the command failed: {e}"), None))?;
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
            vec![ResourceContents::text(SYNTAX, SYNTAX_URI)],
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
            PromptMessage::new_text(Role::User, SYNTAX),
        ])))
    }
}

/// Serves MCP on standard input and output until the client disconnects.
pub async fn serve_stdio(nexus: Nexus, actor: &str) -> Result<(), String> {
    let service = KipMcp::new(nexus, actor)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| e.to_string())?;
    service.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}
