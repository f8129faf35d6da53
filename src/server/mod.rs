//! Agents reach the memory over HTTP: `POST /kip` answers the
//! `execute_kip` / `execute_kip_readonly` envelope, `GET /` describes the
//! service. Reads go to a pool of reader connections (WAL: never blocked by
//! the writer); writes are serialised on one writer connection.

use crate::Nexus;

pub mod mcp;
use crate::kip::{ErrorCode, KipError};
use crate::protocol::{Method, Outcome, Request, Response};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub struct ServerConfig {
    pub db: PathBuf,
    pub addr: SocketAddr,
    pub api_key: Option<String>,
    pub max_body: usize,
    pub readers: usize,
    /// Per-command execution limit.
    pub timeout: std::time::Duration,
}

struct Shared {
    writer: Mutex<Nexus>,
    readers: Vec<Mutex<Nexus>>,
    next: std::sync::atomic::AtomicUsize,
    api_key: Option<String>,
}

/// The HTTP status a KIP error class answers with.
pub fn status_for(code: ErrorCode) -> StatusCode {
    use ErrorCode::*;
    match code {
        InvalidSyntax | InvalidIdentifier | TypeMismatch | ConstraintViolation
        | InvalidValueType | ReferenceError | ResourceExhausted => StatusCode::BAD_REQUEST,
        NotFound => StatusCode::NOT_FOUND,
        DuplicateExists | VersionConflict => StatusCode::CONFLICT,
        ImmutableTarget => StatusCode::FORBIDDEN,
        ExecutionTimeout => StatusCode::REQUEST_TIMEOUT,
        InternalError => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn error_response(status: StatusCode, e: KipError) -> HttpResponse {
    (status, axum::Json(json!({ "error": e.to_json() }))).into_response()
}

fn is_read_only(req: &Request) -> bool {
    if req.method == Method::ExecuteKipReadonly {
        return true;
    }
    let params = &req.args.parameters;
    let texts: Vec<(String, serde_json::Map<String, Value>)> =
        match (&req.args.command, &req.args.commands) {
            (Some(c), None) => vec![(c.clone(), params.clone())],
            (None, Some(list)) => list
                .iter()
                .map(|i| match i {
                    crate::protocol::CommandItem::Text(t) => (t.clone(), params.clone()),
                    crate::protocol::CommandItem::WithParams {
                        command,
                        parameters,
                    } => {
                        let mut p = params.clone();
                        p.extend(parameters.clone());
                        (command.clone(), p)
                    }
                })
                .collect(),
            _ => return false,
        };
    texts.iter().all(|(t, p)| {
        crate::kip::parse(t, p)
            .map(|c| !c.is_write())
            .unwrap_or(true)
    })
}

async fn kip(
    State(s): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResponse {
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                KipError::syntax(format!("the request body is not JSON: {e}")),
            );
        }
    };
    let mut req = match Request::from_json(&value) {
        Ok(r) => r,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, e),
    };
    let caller = headers
        .get("x-somnus-actor")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128)
        .map(str::to_string)
        .unwrap_or_else(|| {
            if s.api_key.is_some() {
                "api-client".into()
            } else {
                "http-client".into()
            }
        });
    req.actor.id = caller;
    req.actor.trigger = format!("http {peer}");
    let read_only = is_read_only(&req);
    let shared = s.clone();
    let out = tokio::task::spawn_blocking(move || {
        if read_only && !shared.readers.is_empty() {
            let i = shared
                .next
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                % shared.readers.len();
            let mut nx = shared.readers[i].lock().unwrap_or_else(|e| e.into_inner());
            nx.execute(&req)
        } else {
            let mut nx = shared.writer.lock().unwrap_or_else(|e| e.into_inner());
            nx.execute(&req)
        }
    })
    .await;
    let resp = match out {
        Ok(r) => r,
        Err(e) => {
            return error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                KipError::internal(format!("the request failed: {e}")),
            );
        }
    };
    let status = match &resp {
        Response::Single(Outcome::Err(e)) => status_for(e.code),
        _ => StatusCode::OK,
    };
    (status, axum::Json(resp.to_json())).into_response()
}

async fn info(State(s): State<Arc<Shared>>) -> impl IntoResponse {
    let modes = {
        let nx = s.writer.lock().unwrap_or_else(|e| e.into_inner());
        if nx.embedder().is_some() {
            vec!["keyword", "semantic", "hybrid"]
        } else {
            vec!["keyword"]
        }
    };
    axum::Json(json!({
        "name": "somnus",
        "version": env!("CARGO_PKG_VERSION"),
        "protocol": "KIP v1.0-RC11",
        "endpoints": { "POST /kip": ["execute_kip", "execute_kip_readonly"] },
        "search_modes": modes,
        "auth": if s.api_key.is_some() { "bearer" } else { "none" },
    }))
}

/// Checks the bearer key before the body is read.
async fn auth(
    State(s): State<Arc<Shared>>,
    req: axum::extract::Request,
    next: Next,
) -> HttpResponse {
    if let Some(key) = &s.api_key {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let ok = given.is_some_and(|g| constant_time_eq(g.as_bytes(), key.as_bytes()));
        if !ok {
            return error_response(
                StatusCode::UNAUTHORIZED,
                KipError::new(ErrorCode::ImmutableTarget, "missing or wrong API key")
                    .with_hint("Send `Authorization: Bearer <key>`."),
            );
        }
    }
    next.run(req).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn too_large(req: axum::extract::Request, next: Next) -> HttpResponse {
    let resp = next.run(req).await;
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            KipError::exhausted("the request body is larger than the server accepts")
                .with_hint("Split the batch, or raise --max-body."),
        );
    }
    resp
}

pub fn router(
    writer: Nexus,
    readers: Vec<Nexus>,
    api_key: Option<String>,
    max_body: usize,
) -> Router {
    let shared = Arc::new(Shared {
        writer: Mutex::new(writer),
        readers: readers.into_iter().map(Mutex::new).collect(),
        next: Default::default(),
        api_key,
    });
    Router::new()
        .route("/", get(info))
        .route("/kip", post(kip))
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn(too_large))
        .layer(middleware::from_fn_with_state(shared.clone(), auth))
        .with_state(shared)
}

/// Refuses to expose an unauthenticated memory beyond this machine.
pub fn check_bind(addr: &SocketAddr, api_key: &Option<String>) -> Result<(), String> {
    if !addr.ip().is_loopback() && api_key.is_none() {
        return Err(format!(
            "refusing to listen on {addr} without --api-key: only loopback addresses may be unauthenticated"
        ));
    }
    Ok(())
}

/// Opens the memory (one writer, `readers` reader connections) and serves
/// until the process is stopped.
pub async fn serve(
    cfg: ServerConfig,
    ready: Option<tokio::sync::oneshot::Sender<SocketAddr>>,
) -> Result<(), String> {
    check_bind(&cfg.addr, &cfg.api_key)?;
    let mut writer = Nexus::open(&cfg.db)
        .map_err(|e| format!("cannot open {}: {}", cfg.db.display(), e.message))?;
    writer.set_timeout(cfg.timeout);
    let mut readers = Vec::new();
    for _ in 0..cfg.readers {
        let mut r = Nexus::open(&cfg.db)
            .map_err(|e| format!("cannot open {}: {}", cfg.db.display(), e.message))?;
        r.set_timeout(cfg.timeout);
        readers.push(r);
    }
    let app = router(writer, readers, cfg.api_key.clone(), cfg.max_body);
    let listener = tokio::net::TcpListener::bind(cfg.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.addr))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    if let Some(tx) = ready {
        let _ = tx.send(local);
    }
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
    .map_err(|e| e.to_string())
}
