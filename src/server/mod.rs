//! Agents reach the memory over HTTP: `POST /kip` answers the
//! `execute_kip` / `execute_kip_readonly` envelope, `GET /` describes the
//! service. Reads go to a pool of reader connections (WAL: never blocked by
//! the writer); writes are serialised on one writer connection.

use crate::Nexus;

pub mod gate;
pub mod mcp;
pub mod pool;
pub mod read_log;
use crate::kip::{ErrorCode, KipError};
use crate::protocol::{Method, Outcome, Request, Response};
use crate::store::keys::{Identity, Role};
use crate::store::place::Place;
use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use pool::Pool;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub struct ServerConfig {
    /// The memory served: a SQLite file or a PostgreSQL memory.
    pub db: Place,
    pub addr: SocketAddr,
    pub api_key: Option<String>,
    pub max_body: usize,
    pub readers: usize,
    /// Per-command execution limit.
    pub timeout: Duration,
    /// Connections served at once; more wait in the listen queue.
    pub max_connections: usize,
    /// A request's header must arrive within this (slow clients are cut).
    pub header_timeout: Duration,
    /// A request's body must arrive within this.
    pub body_timeout: Duration,
    /// After SIGINT/SIGTERM, requests in flight get this long to finish.
    pub shutdown_grace: Duration,
    /// Keep the memory maintained from this process (`somnus serve` does
    /// unless `--maintenance off`); None: no maintenance.
    pub maintenance: Option<crate::sleep::maintainer::Settings>,
    /// Log every request answered (`audit::reads`); None: `--read-log off`.
    pub read_log: Option<read_log::Settings>,
}

impl ServerConfig {
    /// The defaults `somnus serve` uses.
    pub fn new(db: impl Into<Place>, addr: SocketAddr) -> ServerConfig {
        ServerConfig {
            db: db.into(),
            addr,
            api_key: None,
            max_body: 1 << 20,
            readers: 4,
            timeout: crate::engine::DEFAULT_TIMEOUT,
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(3),
            maintenance: None,
            read_log: Some(read_log::Settings::default()),
        }
    }
}

/// The memory's active keys as last read, and when.
type KeyCache = (
    std::time::Instant,
    Arc<std::collections::HashMap<String, Identity>>,
);

struct Shared {
    pool: Arc<Pool>,
    /// Where answered requests are logged (None: `--read-log off`).
    read_log: Option<Arc<read_log::ReadLog>>,
    /// Reloaded when a second old, so a key made or revoked by another
    /// process counts within a second. Fails closed: a memory whose keys
    /// cannot be read is treated as keyed, with no key accepted.
    keys: tokio::sync::Mutex<Option<KeyCache>>,
    /// Digest of the API key (compared in constant time, whatever its length).
    api_key: Option<[u8; 32]>,
    /// Set once the server has had a key (`--api-key`, or a key of the
    /// memory's, at start or since) and never cleared: revoking the last
    /// key leaves a server that admits nobody without a key, never one
    /// open to anyone.
    keyed: std::sync::atomic::AtomicBool,
    max_body: usize,
    body_timeout: Duration,
    search_modes: Vec<&'static str>,
    /// The embedding model semantic and hybrid SEARCH use, if any.
    search_model: Option<String>,
    /// The maintainer's status (`GET /`), or None when off.
    maintenance: Option<Arc<std::sync::Mutex<serde_json::Value>>>,
}

impl Shared {
    async fn keys(&self) -> Arc<std::collections::HashMap<String, Identity>> {
        let mut c = self.keys.lock().await;
        if let Some((at, k)) = c.as_ref()
            && at.elapsed() < Duration::from_secs(1)
        {
            return k.clone();
        }
        let loaded = self
            .pool
            .read(|nx| crate::store::keys::active(nx.db()))
            .await;
        let k = match loaded {
            Ok(Ok(k)) => Arc::new(k),
            // unreadable: keyed, and nothing matches
            _ => Arc::new(std::collections::HashMap::from([(
                String::new(),
                Identity {
                    name: String::new(),
                    role: Role::Reader,
                },
            )])),
        };
        if !k.is_empty() {
            self.keyed.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        *c = Some((std::time::Instant::now(), k.clone()));
        k
    }

    /// Whether callers need a key: the server has had one, whatever the
    /// memory holds now.
    fn is_keyed(&self) -> bool {
        self.api_key.is_some() || self.keyed.load(std::sync::atomic::Ordering::SeqCst)
    }
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

/// Whether a request only reads (it may then run on a reader connection).
pub(crate) fn is_read_only(req: &Request) -> bool {
    if req.method == Method::ExecuteKipReadonly {
        return true;
    }
    let texts = gate::commands(req);
    if texts.is_empty() {
        return false;
    }
    texts.iter().all(|(t, p)| {
        crate::kip::parse(t, p)
            .map(|c| !c.is_write())
            .unwrap_or(true)
    })
}

/// A request body as JSON: within the size limit and the body timeout,
/// or the error response that says which limit it broke.
async fn read_json(s: &Shared, body: Body) -> Result<Value, HttpResponse> {
    let body =
        match tokio::time::timeout(s.body_timeout, axum::body::to_bytes(body, s.max_body)).await {
            Ok(Ok(b)) => b,
            Ok(Err(_)) => {
                return Err(error_response(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    KipError::exhausted(format!(
                        "the request body is larger than the server accepts ({} bytes)",
                        s.max_body
                    ))
                    .with_hint("Split the batch, or raise --max-body."),
                ));
            }
            Err(_) => {
                return Err(error_response(
                    StatusCode::REQUEST_TIMEOUT,
                    KipError::new(
                        ErrorCode::ExecutionTimeout,
                        format!(
                            "the request body did not arrive within {:?}",
                            s.body_timeout
                        ),
                    ),
                ));
            }
        };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                KipError::syntax(format!("the request body is not JSON: {e}")),
            ));
        }
    };
    Ok(value)
}

async fn kip(
    State(s): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    axum::Extension(caller): axum::Extension<Caller>,
    headers: HeaderMap,
    body: Body,
) -> HttpResponse {
    let value = match read_json(&s, body).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let mut req = match Request::from_json(&value) {
        Ok(r) => r,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, e),
    };
    let header = headers.get("x-somnus-actor").and_then(|v| v.to_str().ok());
    let actor = match actor_of(&caller, header) {
        Ok(a) => a,
        Err(e) => return error_response(StatusCode::FORBIDDEN, e),
    };
    if let Some(e) = gate::refuse(&req, &caller.id) {
        return error_response(StatusCode::FORBIDDEN, e);
    }
    gate::read_only_for(&mut req, &caller.id);
    req.actor.id = actor;
    req.actor.trigger = format!("http {peer} key {}", caller.id.name);
    req.actor.reason = req.args.reason.clone();
    let id = caller.id.clone();
    let at = crate::store::now();
    let who = req.actor.id.clone();
    let logging = s.read_log.is_some();
    let out = if gate::stages(&req, &id) {
        s.pool.write(move |nx| gate::stage(nx, &req, &id)).await
    } else {
        let read_only = s.pool.separates_reads() && is_read_only(&req);
        let run = move |nx: &mut Nexus| answer(nx, &req, logging);
        let answered = if read_only {
            s.pool.read(run).await
        } else {
            s.pool.write(run).await
        };
        answered.map(|(r, served)| {
            log(&s, &who, at, served);
            r
        })
    };
    let resp = match out {
        Ok(r) => r,
        Err(e) => return error_response(StatusCode::INTERNAL_SERVER_ERROR, e),
    };
    let status = match &resp {
        Response::Single(Outcome::Err(e)) => status_for(e.code),
        _ => StatusCode::OK,
    };
    (status, axum::Json(resp.to_json())).into_response()
}

/// Answers a request, with what the read log keeps of it when logging.
pub(crate) fn answer(
    nx: &mut Nexus,
    req: &Request,
    logging: bool,
) -> (Response, Vec<crate::audit::reads::Served>) {
    if logging {
        nx.execute_served(req)
    } else {
        (nx.execute(req), Vec::new())
    }
}

fn log(s: &Shared, caller: &str, at: String, served: Vec<crate::audit::reads::Served>) {
    if let Some(l) = &s.read_log {
        l.record(caller, "http", at, served);
    }
}

/// `POST /session/end`: the caller's conversation session ended (body:
/// `{}` or `{"session": "id"}`); the maintainer runs a post-session cycle
/// if the agents wrote since the last cycle. A reader key may not.
async fn session_end(
    State(s): State<Arc<Shared>>,
    axum::Extension(caller): axum::Extension<Caller>,
    headers: HeaderMap,
    body: Body,
) -> HttpResponse {
    let value = match read_json(&s, body).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    if caller.id.role == crate::store::keys::Role::Reader {
        return error_response(
            StatusCode::FORBIDDEN,
            KipError::new(
                ErrorCode::ImmutableTarget,
                format!(
                    "key `{}` is a reader: it may not end sessions",
                    caller.id.name
                ),
            ),
        );
    }
    let session = match value.get("session") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                KipError::new(ErrorCode::InvalidValueType, "`session` is a string"),
            );
        }
    };
    let header = headers.get("x-somnus-actor").and_then(|v| v.to_str().ok());
    let actor = match actor_of(&caller, header) {
        Ok(a) => a,
        Err(e) => return error_response(StatusCode::FORBIDDEN, e),
    };
    let out = s
        .pool
        .write(move |nx| {
            crate::sleep::schedule::session_ended(
                nx,
                &actor,
                session.as_deref(),
                chrono::Utc::now(),
            )
        })
        .await;
    match out {
        Ok(Ok(end)) => (StatusCode::OK, axum::Json(json!({ "result": end }))).into_response(),
        Ok(Err(e)) | Err(e) => error_response(status_for(e.code), e),
    }
}

/// An agent key deciding a sub-agent's proposal (see `gate::decide`).
async fn decide(
    State(s): State<Arc<Shared>>,
    axum::Extension(caller): axum::Extension<Caller>,
    body: Body,
) -> HttpResponse {
    let value = match read_json(&s, body).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    if caller.anonymous {
        return error_response(
            StatusCode::FORBIDDEN,
            KipError::new(
                ErrorCode::ImmutableTarget,
                "deciding proposals needs an agent key (somnus keys add NAME --role agent)",
            ),
        );
    }
    let id = caller.id.clone();
    match s.pool.write(move |nx| gate::decide(nx, &id, &value)).await {
        // an approval refused because the memory moved under what was
        // shown: 409, with what the items would do now
        Ok(Ok(mut v)) if v.get("error").is_some() => {
            let e = v.as_object_mut().and_then(|o| o.remove("error"));
            (
                StatusCode::CONFLICT,
                axum::Json(json!({ "error": e, "result": v })),
            )
                .into_response()
        }
        Ok(Ok(v)) => (StatusCode::OK, axum::Json(json!({ "result": v }))).into_response(),
        Ok(Err(e)) | Err(e) => error_response(status_for(e.code), e),
    }
}

async fn info(State(s): State<Arc<Shared>>) -> impl IntoResponse {
    // (reading the keys notes one the server has just been given)
    let _ = s.keys().await;
    let keyed = s.is_keyed();
    axum::Json(json!({
        "name": "somnus",
        "version": env!("CARGO_PKG_VERSION"),
        "protocol": "KIP v1.0-RC11",
        "endpoints": {
            "POST /kip": ["execute_kip", "execute_kip_readonly"],
            "POST /session/end": "the caller's session ended: a post-session sleep cycle follows",
        },
        "search_modes": s.search_modes,
        "search_model": s.search_model,
        "read_log": s.read_log.as_ref().map(|l| l.status()).unwrap_or_else(|| json!("off")),
        "auth": if keyed { "bearer" } else { "none (loopback callers only)" },
        "maintenance": s.maintenance.as_ref()
            .map(crate::sleep::maintainer::public)
            .unwrap_or_else(crate::sleep::maintainer::disabled),
        "roles": {
            "reader": "execute_kip_readonly only",
            "agent": "reads and writes",
            "subagent": "reads committed memory; each write request is staged as a proposal for review",
        },
    }))
}

/// The key of an `Authorization` header: the scheme `Bearer` in any case
/// (RFC 9110 §11.1), then the key.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, key) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| key.trim())
        .filter(|k| !k.is_empty())
}

/// Who a request is from, decided per request: a key's identity when the
/// server is keyed; without keys, an unnamed agent, and only for a caller
/// connected from this machine (loopback), whatever address the server
/// listens on.
fn admit(
    keyed: bool,
    api_key: Option<&[u8; 32]>,
    keys: &std::collections::HashMap<String, Identity>,
    given: Option<&str>,
    peer: Option<SocketAddr>,
) -> Result<Caller, &'static str> {
    if !keyed {
        // a server without keys serves this machine alone
        if !peer.is_some_and(|p| p.ip().is_loopback() || p.ip().to_canonical().is_loopback()) {
            return Err("this server has no keys: it answers callers on this machine only");
        }
        return Ok(Caller {
            id: Identity {
                name: "http-client".into(),
                role: Role::Agent,
            },
            anonymous: true,
        });
    }
    let Some(g) = given else {
        return Err("missing or wrong API key");
    };
    if api_key.is_some_and(|k| constant_time_eq(&digest(g.as_bytes()), k)) {
        // the one key of --api-key: an agent, as it always was
        return Ok(Caller {
            id: Identity {
                name: "api-client".into(),
                role: Role::Agent,
            },
            anonymous: false,
        });
    }
    match keys.get(&crate::store::keys::digest(g)) {
        Some(id) => Ok(Caller {
            id: id.clone(),
            anonymous: false,
        }),
        None => Err("missing or wrong API key"),
    }
}

/// Checks the bearer key before the body is read.
async fn auth(
    State(s): State<Arc<Shared>>,
    req: axum::extract::Request,
    next: Next,
) -> HttpResponse {
    let mut req = req;
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .map(str::to_string);
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let keys = s.keys().await;
    match admit(
        s.is_keyed(),
        s.api_key.as_ref(),
        &keys,
        given.as_deref(),
        peer,
    ) {
        Ok(caller) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(why) => error_response(
            StatusCode::UNAUTHORIZED,
            KipError::new(ErrorCode::ImmutableTarget, why).with_hint(
                "Send `Authorization: Bearer <key>` (a key from `somnus keys add`, or --api-key).",
            ),
        ),
    }
}

/// Who sent a request: its key's identity, or nobody in particular on an
/// unauthenticated loopback server.
#[derive(Clone)]
struct Caller {
    id: Identity,
    anonymous: bool,
}

/// The actor a request's writes are recorded as: the key's name, with the
/// `X-Somnus-Actor` header only as a sub-label (`scout/run-7`); without
/// keys the header names the caller, but never as a reserved name.
fn actor_of(caller: &Caller, header: Option<&str>) -> Result<String, KipError> {
    let label = header
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| v.chars().take(64).collect::<String>());
    if let Some(l) = &label
        && (crate::store::keys::is_reserved(l) || l.chars().any(char::is_control))
    {
        return Err(KipError::new(
            ErrorCode::ImmutableTarget,
            format!("X-Somnus-Actor `{l}` is reserved or not a name: $self, $system and operator are never claimed by a caller"),
        )
        .with_hint("Name a sub-label of your own (X-Somnus-Actor: run-7), or send no header."));
    }
    Ok(match (caller.anonymous, label) {
        (true, Some(l)) => l,
        (false, Some(l)) => format!("{}/{l}", caller.id.name),
        (_, None) => caller.id.name.clone(),
    })
}

fn digest(key: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(key).into()
}

/// Equal digests, compared without an early exit.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The routes, their shared state and the key check.
#[allow(clippy::too_many_arguments)]
pub fn router(
    pool: Arc<Pool>,
    read_log: Option<Arc<read_log::ReadLog>>,
    api_key: Option<String>,
    keyed: bool,
    max_body: usize,
    body_timeout: Duration,
    maintenance: Option<Arc<std::sync::Mutex<serde_json::Value>>>,
) -> Router {
    let embedder = crate::engine::embed::EmbeddingConfig::from_env();
    let search_modes = if embedder.is_some() {
        vec!["keyword", "semantic", "hybrid"]
    } else {
        vec!["keyword"]
    };
    let search_model = embedder.map(|e| e.model);
    let shared = Arc::new(Shared {
        pool,
        read_log,
        keys: tokio::sync::Mutex::new(None),
        api_key: api_key.map(|k| digest(k.as_bytes())),
        keyed: std::sync::atomic::AtomicBool::new(keyed),
        max_body,
        body_timeout,
        search_modes,
        search_model,
        maintenance,
    });
    Router::new()
        .route("/", get(info))
        .route("/kip", post(kip))
        .route("/proposals", post(decide))
        .route("/session/end", post(session_end))
        .layer(middleware::from_fn_with_state(shared.clone(), auth))
        .with_state(shared)
}

/// Refuses to expose an unauthenticated memory beyond this machine, and an
/// empty key.
pub fn check_bind(addr: &SocketAddr, api_key: &Option<String>) -> Result<(), String> {
    if api_key.as_deref().is_some_and(|k| k.trim().is_empty()) {
        return Err("refusing an empty --api-key: give a key, or none (loopback only)".into());
    }
    if !addr.ip().is_loopback() && api_key.is_none() {
        return Err(format!(
            "refusing to listen on {addr} without --api-key: only loopback addresses may be unauthenticated"
        ));
    }
    Ok(())
}

/// Stack of every thread a server runs engine work on. The engine bounds
/// its own recursion (`kip::limits`); this is room to spare, not the guard.
pub const THREAD_STACK: usize = 8 * 1024 * 1024;

/// The runtime the servers run on: worker and blocking threads alike get
/// `THREAD_STACK`.
pub fn runtime(workers: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = workers {
        b.worker_threads(n);
    }
    b.thread_stack_size(THREAD_STACK).enable_all().build()
}

/// Opens the memory (one writer, `readers` reader connections) and serves
/// until SIGINT or SIGTERM: then it stops accepting, lets requests in
/// flight finish for `shutdown_grace`, and returns.
pub async fn serve(
    cfg: ServerConfig,
    ready: Option<tokio::sync::oneshot::Sender<SocketAddr>>,
) -> Result<(), String> {
    serve_until(cfg, ready, shutdown_signal()).await
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// `serve`, stopping when `stop` resolves.
pub async fn serve_until(
    cfg: ServerConfig,
    ready: Option<tokio::sync::oneshot::Sender<SocketAddr>>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto;
    // (opened off the async threads: a PostgreSQL client blocks)
    let open = |what: &'static str| {
        let (db, timeout) = (cfg.db.clone(), cfg.timeout);
        async move {
            tokio::task::spawn_blocking(move || {
                let mut nx = Nexus::open_place(&db, Default::default())
                    .map_err(|e| format!("cannot open {db} ({what}): {}", e.message))?;
                nx.set_timeout(timeout);
                Ok::<_, String>(nx)
            })
            .await
            .map_err(|e| format!("cannot open the memory ({what}): {e}"))?
        }
    };
    let writer = open("writer").await?;
    // keys kept in the memory authenticate like --api-key does
    let (writer, has_keys) = tokio::task::spawn_blocking(move || {
        let has = crate::store::keys::any_active(writer.db()).unwrap_or(false);
        (writer, has)
    })
    .await
    .map_err(|e| format!("cannot read the memory's keys: {e}"))?;
    check_bind(
        &cfg.addr,
        &cfg.api_key
            .clone()
            .or_else(|| has_keys.then(|| "keys".to_string())),
    )?;
    let mut readers = Vec::new();
    for _ in 0..cfg.readers {
        readers.push(open("reader").await?);
    }
    let pool = Arc::new(Pool::new(writer, readers).with_timeout(cfg.timeout));
    let log = cfg.read_log.map(|settings| {
        let file = match &cfg.db {
            Place::File(p) => Some(p.as_path()),
            Place::Postgres(_) => None,
        };
        read_log::ReadLog::start(pool.clone(), settings, file)
    });
    let listener = tokio::net::TcpListener::bind(cfg.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.addr))?;
    // the maintainer works from its own connection, on its own thread,
    // once the server listens; it stops (cancelling a cycle in progress)
    // when the server returns
    let maintainer = cfg
        .maintenance
        .clone()
        .map(|m| crate::sleep::maintainer::Maintainer::start(cfg.db.clone(), "serve", m));
    let app = router(
        pool,
        log.clone(),
        cfg.api_key.clone(),
        has_keys,
        cfg.max_body,
        cfg.body_timeout,
        maintainer.as_ref().map(|m| m.status_handle()),
    );
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    if let Some(tx) = ready {
        let _ = tx.send(local);
    }
    let slots = Arc::new(tokio::sync::Semaphore::new(cfg.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(cfg.header_timeout);
    let builder = builder.http1_only();
    tokio::pin!(stop);
    loop {
        // a free slot first, so the process never holds more than
        // `max_connections` sockets; the rest wait in the listen queue
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            _ = &mut stop => break,
        };
        let (stream, peer) = tokio::select! {
            a = listener.accept() => match a {
                Ok(a) => a,
                Err(_) => {
                    // out of descriptors or a reset in the queue: pause, go on
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let svc = app.clone().layer(axum::Extension(ConnectInfo(peer)));
        let svc = hyper_util::service::TowerToHyperService::new(svc);
        let conn = builder
            .serve_connection(TokioIo::new(stream), svc)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    // requests in flight get the grace period; idle connections close now
    let _ = tokio::time::timeout(cfg.shutdown_grace, graceful.shutdown()).await;
    // what the log still queues is written
    if let Some(l) = log {
        l.close(cfg.shutdown_grace).await;
    }
    if let Some(m) = maintainer {
        let _ = tokio::task::spawn_blocking(move || m.stop()).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(a: &str) -> Option<SocketAddr> {
        Some(a.parse().expect("addr"))
    }

    #[test]
    fn without_keys_only_loopback_callers_get_in() {
        let none = std::collections::HashMap::new();
        assert!(admit(false, None, &none, None, peer("127.0.0.1:9")).is_ok());
        assert!(admit(false, None, &none, None, peer("[::1]:9")).is_ok());
        assert!(admit(false, None, &none, None, peer("[::ffff:127.0.0.1]:9")).is_ok());
        // a caller from elsewhere, or of unknown origin, is refused
        assert!(admit(false, None, &none, None, peer("192.0.2.7:9")).is_err());
        assert!(admit(false, None, &none, None, peer("[2001:db8::1]:9")).is_err());
        assert!(admit(false, None, &none, None, None).is_err());
    }

    #[test]
    fn a_keyed_server_with_no_key_left_admits_nobody_without_one() {
        let none = std::collections::HashMap::new();
        for p in ["127.0.0.1:9", "192.0.2.7:9"] {
            assert!(admit(true, None, &none, None, peer(p)).is_err());
            assert!(admit(true, None, &none, Some("smk_old"), peer(p)).is_err());
        }
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer k1"), Some("k1"));
        assert_eq!(bearer("bearer k1"), Some("k1"));
        assert_eq!(bearer("BEARER   k1 "), Some("k1"));
        assert_eq!(bearer("Basic k1"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("Bearer"), None);
    }
}
