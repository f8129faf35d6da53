//! Semantic retrieval: embeddings from an OpenAI-compatible
//! `/v1/embeddings` provider (a local Ollama or llama.cpp server, or a
//! hosted API) or from a model run inside the process (`local`, feature
//! `local-embed`), vectors kept in the memory, cosine similarity, and
//! reciprocal-rank fusion for `hybrid`.

#[cfg(feature = "local-embed")]
pub mod local;

use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store::db::{Db, Val};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Who computes the vectors.
#[derive(Debug, Clone)]
pub enum Provider {
    /// An OpenAI-compatible server: base URL such as
    /// `http://127.0.0.1:11434/v1` (`/embeddings` is appended), and a key
    /// if it needs one.
    Http {
        base_url: String,
        api_key: Option<String>,
    },
    /// A model loaded from a folder on this machine.
    #[cfg(feature = "local-embed")]
    Local(Arc<local::LocalModel>),
}

/// Where embeddings come from.
#[derive(Debug, Clone)]
pub struct EmbeddingConfig {
    pub provider: Provider,
    /// The model's name, kept with each vector: vectors of another model
    /// are never compared with this one's.
    pub model: String,
    /// When the command that calls the provider must be done by: every
    /// call waits at most until then (`KIP_4001` past it).
    pub deadline: Option<Instant>,
}

/// Whether `SOMNUS_EMBED` turns semantic retrieval off (`off`, `none`,
/// `keyword`, `0`, `false`).
fn turned_off() -> bool {
    std::env::var("SOMNUS_EMBED").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "none" | "keyword" | "0" | "false"
        )
    })
}

/// The model the environment names or this machine has installed, found
/// once per process (its weights are read at its first use). A folder that
/// is not a usable model is said on stderr once and skipped.
#[cfg(feature = "local-embed")]
fn installed_model() -> Option<Arc<local::LocalModel>> {
    static MODEL: std::sync::OnceLock<Option<Arc<local::LocalModel>>> = std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| {
            let named = std::env::var_os("SOMNUS_EMBED_MODEL_DIR")
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from);
            let candidates = match named {
                Some(d) => vec![d],
                None => local::discover(),
            };
            for dir in candidates {
                match local::LocalModel::open(&dir) {
                    Ok(m) => return Some(Arc::new(m)),
                    Err(e) => eprintln!("somnus: embedding model skipped: {e}"),
                }
            }
            None
        })
        .clone()
}

impl EmbeddingConfig {
    /// From the environment: none when `SOMNUS_EMBED=off`; else the server
    /// at `SOMNUS_EMBED_URL` (with `SOMNUS_EMBED_MODEL`, `SOMNUS_EMBED_KEY`);
    /// else the model in `SOMNUS_EMBED_MODEL_DIR`, else one installed on
    /// this machine (`local::discover`); else none (SEARCH by keyword).
    pub fn from_env() -> Option<EmbeddingConfig> {
        if turned_off() {
            return None;
        }
        if let Some(base_url) = std::env::var("SOMNUS_EMBED_URL")
            .ok()
            .filter(|s| !s.is_empty())
        {
            return Some(EmbeddingConfig::http(
                base_url,
                std::env::var("SOMNUS_EMBED_MODEL").unwrap_or_else(|_| "nomic-embed-text".into()),
                std::env::var("SOMNUS_EMBED_KEY")
                    .ok()
                    .filter(|s| !s.is_empty()),
            ));
        }
        #[cfg(feature = "local-embed")]
        if let Some(m) = installed_model() {
            return Some(EmbeddingConfig::with_model(m));
        }
        None
    }

    /// An OpenAI-compatible server.
    pub fn http(base_url: String, model: String, api_key: Option<String>) -> EmbeddingConfig {
        EmbeddingConfig {
            provider: Provider::Http { base_url, api_key },
            model,
            deadline: None,
        }
    }

    /// The model in `dir`, run in this process.
    #[cfg(feature = "local-embed")]
    pub fn local(dir: &std::path::Path) -> Result<EmbeddingConfig, String> {
        Ok(EmbeddingConfig::with_model(Arc::new(
            local::LocalModel::open(dir)?,
        )))
    }

    #[cfg(feature = "local-embed")]
    fn with_model(m: Arc<local::LocalModel>) -> EmbeddingConfig {
        EmbeddingConfig {
            model: m.name.clone(),
            provider: Provider::Local(m),
            deadline: None,
        }
    }

    /// Where the vectors come from, for a person: `all-MiniLM-L6-v2 (in
    /// process, /path)` or `nomic-embed-text at http://…`.
    pub fn describe(&self) -> String {
        match &self.provider {
            Provider::Http { base_url, .. } => format!("{} at {base_url}", self.model),
            #[cfg(feature = "local-embed")]
            Provider::Local(m) => format!("{} (in process, {})", self.model, m.dir.display()),
        }
    }

    /// How long the next provider call may take: at most 60 s, and never
    /// past the command's deadline.
    fn budget(&self) -> KipResult<Duration> {
        let cap = Duration::from_secs(60);
        match self.deadline {
            None => Ok(cap),
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    Err(KipError::new(
                        ErrorCode::ExecutionTimeout,
                        "the command's time ran out waiting for the embedding provider",
                    ))
                } else {
                    Ok(left.min(cap))
                }
            }
        }
    }

    /// Embeds a batch of texts.
    pub fn embed(&self, texts: &[String]) -> KipResult<Vec<Vec<f32>>> {
        match &self.provider {
            Provider::Http { base_url, api_key } => {
                self.embed_http(base_url, api_key.as_deref(), texts)
            }
            #[cfg(feature = "local-embed")]
            Provider::Local(m) => m.embed(texts, self.deadline),
        }
    }

    fn embed_http(
        &self,
        base_url: &str,
        api_key: Option<&str>,
        texts: &[String],
    ) -> KipResult<Vec<Vec<f32>>> {
        let budget = self.budget()?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(budget))
            .build()
            .into();
        let base = base_url.trim_end_matches('/');
        let endpoint = if base.ends_with("/embeddings") {
            base.to_string()
        } else {
            format!("{base}/embeddings")
        };
        let mut req = agent.post(&endpoint);
        if let Some(k) = api_key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let fail = |e: String| {
            KipError::new(
                ErrorCode::InternalError,
                format!("embedding provider {endpoint}: {e}"),
            )
            .with_hint(
                "Check SOMNUS_EMBED_URL / SOMNUS_EMBED_MODEL, or search with MODE \"keyword\".",
            )
        };
        let mut resp = req
            .send_json(json!({ "model": self.model, "input": texts }))
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => KipError::new(
                    ErrorCode::ExecutionTimeout,
                    format!(
                        "the embedding provider did not answer within the command's remaining {budget:?}"
                    ),
                ),
                e => fail(e.to_string()),
            })?;
        let v: Value = resp
            .body_mut()
            .read_json()
            .map_err(|e| fail(e.to_string()))?;
        let data = v
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| fail("response has no `data` array".into()))?;
        let mut out = vec![Vec::new(); texts.len()];
        for (i, item) in data.iter().enumerate() {
            let idx = item
                .get("index")
                .and_then(Value::as_u64)
                .map(|x| x as usize)
                .unwrap_or(i);
            let vec: Vec<f32> = item
                .get("embedding")
                .and_then(Value::as_array)
                .ok_or_else(|| fail("an item has no `embedding`".into()))?
                .iter()
                .map(|x| x.as_f64().unwrap_or(0.0) as f32)
                .collect();
            if idx < out.len() {
                out[idx] = vec;
            }
        }
        if out.iter().any(Vec::is_empty) {
            return Err(fail(format!("expected {} embeddings", texts.len())));
        }
        Ok(out)
    }
}

/// The text a concept is grounded by: name, aliases, description and the
/// salient text attributes.
pub fn grounding_text(name: &str, attrs: &serde_json::Map<String, Value>) -> String {
    let mut parts = vec![name.to_string()];
    if let Some(a) = attrs.get("aliases").and_then(Value::as_array) {
        parts.extend(a.iter().filter_map(Value::as_str).map(str::to_string));
    }
    // who took part, as a transcript names its speaker ("Caroline: …"):
    // a question names people more often than it quotes them
    let who: Vec<&str> = attrs
        .get("participants")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).take(8).collect())
        .unwrap_or_default();
    for k in ["description", "content_summary", "summary", "title"] {
        if let Some(s) = attrs.get(k).and_then(Value::as_str) {
            if k == "content_summary" && !who.is_empty() {
                parts.push(format!("{}: {s}", who.join(", ")));
            } else {
                parts.push(s.to_string());
            }
        }
    }
    parts.join(". ")
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// What one `sync` did: concepts embedded, and concepts still waiting.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Synced {
    pub embedded: usize,
    pub pending: usize,
}

/// Embeds every concept whose text changed since it was last embedded, or
/// that has no vector of `cfg`'s model (a new model queues them all), in
/// batches of 64, each committed on its own. With `until`, no batch starts
/// after it: the rest stays queued for the next call.
pub fn sync(db: Db<'_>, cfg: &EmbeddingConfig, until: Option<Instant>) -> KipResult<Synced> {
    // concepts created since the last scan (ids only grow)
    db.execute(
        "INSERT INTO embed_queue(id) SELECT id FROM concepts WHERE id > (SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'embed_scanned_to') \
         ON CONFLICT (id) DO NOTHING",
        &[],
    )?;
    db.execute(
        "UPDATE meta SET value = (SELECT CAST(COALESCE(MAX(id), 0) AS TEXT) FROM concepts) WHERE key = 'embed_scanned_to'",
        &[],
    )?;
    // another model's vectors are not this one's: every concept waits
    let current = db
        .query("SELECT value FROM meta WHERE key = 'embed_model'", &[])?
        .first()
        .map(|r| r.text(0))
        .transpose()?;
    if current.as_deref() != Some(cfg.model.as_str()) {
        db.execute(
            "INSERT INTO embed_queue(id) SELECT id FROM concepts WHERE true ON CONFLICT (id) DO NOTHING",
            &[],
        )?;
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('embed_model', ?1) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[Val::from(cfg.model.as_str())],
        )?;
    }
    let mut done = 0;
    loop {
        if until.is_some_and(|u| Instant::now() >= u) {
            return Ok(Synced {
                embedded: done,
                pending: not_embedded(db)?,
            });
        }
        let mut batch: Vec<(i64, String)> = Vec::new();
        for r in db.query(
            "SELECT c.id, c.name, c.attributes FROM embed_queue q JOIN concepts c ON c.id = q.id ORDER BY q.id LIMIT 64",
            &[],
        )? {
            batch.push((r.i64(0)?, grounding_text(&r.text(1)?, &r.obj(2)?)));
        }
        if batch.is_empty() {
            // queue entries whose concept is gone
            db.execute(
                "DELETE FROM embed_queue WHERE id NOT IN (SELECT id FROM concepts)",
                &[],
            )?;
            return Ok(Synced {
                embedded: done,
                pending: 0,
            });
        }
        let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
        let vectors = cfg.embed(&texts)?;
        db.begin(true)?;
        let written = (|| -> KipResult<()> {
            for ((id, _), v) in batch.iter().zip(vectors.iter()) {
                db.execute(
                    "INSERT INTO embeddings(id, model, vector) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
                    &[Val::Int(*id), Val::from(cfg.model.as_str()), Val::Bytes(to_blob(v))],
                )?;
                db.execute("DELETE FROM embed_queue WHERE id = ?1", &[Val::Int(*id)])?;
            }
            Ok(())
        })();
        match written {
            Ok(()) => db.commit()?,
            Err(e) => {
                let _ = db.rollback();
                return Err(e);
            }
        }
        done += batch.len();
    }
}

/// Concepts with no vector of the current model yet: those queued, and
/// those created since the queue was last filled.
pub fn not_embedded(db: Db<'_>) -> KipResult<usize> {
    let n = db
        .query(
            "SELECT (SELECT COUNT(*) FROM embed_queue) + (SELECT COUNT(*) FROM concepts WHERE id > (SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'embed_scanned_to'))",
            &[],
        )?
        .first()
        .map(|r| r.i64(0))
        .transpose()?
        .unwrap_or(0);
    Ok(n.max(0) as usize)
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        dot += (*x as f64) * (*y as f64);
        na += (*x as f64) * (*x as f64);
        nb += (*y as f64) * (*y as f64);
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Every embedded concept's similarity to a question, best first, and
/// those that happened on none of the days it names.
pub type Similarities = (Vec<(i64, f64)>, HashSet<i64>);

/// `(concept id, similarity in [0, 1])` of every embedded concept (of
/// type `ty`), best first; and those whose `start_time` falls on none of
/// `days` (the days a question names; none when it names none).
pub fn semantic_scores(
    db: Db<'_>,
    cfg: &EmbeddingConfig,
    term: &str,
    ty: Option<&str>,
    days: &[String],
) -> KipResult<Similarities> {
    let q = cfg.embed(&[term.to_string()])?.pop().unwrap_or_default();
    let day = match db.backend() {
        crate::store::db::Backend::Sqlite => {
            "substr(json_extract(c.attributes, '$.start_time'), 1, 10)"
        }
        crate::store::db::Backend::Postgres => "left(c.attributes->>'start_time', 10)",
    };
    let rows = db.query(
        &format!(
            "SELECT e.id, e.vector, {day} FROM embeddings e JOIN concepts c ON c.id = e.id \
             WHERE e.model = ?1 AND (CAST(?2 AS TEXT) IS NULL OR c.type = ?2)"
        ),
        &[Val::from(cfg.model.as_str()), Val::from(ty)],
    )?;
    let mut hits = Vec::with_capacity(rows.len());
    let mut off_day = HashSet::new();
    for r in rows {
        let Val::Bytes(blob) = &r.0[1] else { continue };
        let id = r.i64(0)?;
        hits.push((id, cosine(&q, &from_blob(blob)).max(0.0)));
        if !days.is_empty()
            && let Val::Text(d) = &r.0[2]
            && !days.iter().any(|x| x == d)
        {
            off_day.insert(id);
        }
    }
    hits.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    Ok((hits, off_day))
}

/// How much of a hybrid score is the keyword score (the rest is the
/// similarity of meaning). Measured on conversational memory
/// (`somnus bench --recall`, README "Semantic search"): keyword matches
/// carry the names, numbers and days that a small sentence encoder blurs,
/// so they weigh more; 0.6 to 0.9 land within 0.015 of recall@5.
pub const KEYWORD_WEIGHT: f64 = 0.8;

/// Hybrid ranking: every keyword hit and the best `limit` by meaning
/// (but those in `off_day`: a question that names a day does not get,
/// on likeness alone, what happened on another), each scored
/// `KEYWORD_WEIGHT × keyword + (1 − KEYWORD_WEIGHT) × similarity`, where
/// a concept the keywords did not find scores 0 for them and every
/// candidate's similarity is its own (`semantic` holds all of them), best
/// first.
pub fn fuse(
    keyword: &[(i64, f64)],
    semantic: &[(i64, f64)],
    off_day: &HashSet<i64>,
    limit: usize,
) -> Vec<(i64, f64)> {
    use std::collections::HashMap;
    let weight = KEYWORD_WEIGHT;
    let similarity: HashMap<i64, f64> = semantic.iter().copied().collect();
    let mut score: HashMap<i64, f64> = HashMap::new();
    for (id, k) in keyword {
        let v = similarity.get(id).copied().unwrap_or(0.0);
        score.insert(*id, weight * k + (1.0 - weight) * v);
    }
    for (id, v) in semantic
        .iter()
        .filter(|(id, _)| !off_day.contains(id))
        .take(limit)
    {
        score.entry(*id).or_insert((1.0 - weight) * v);
    }
    let mut out: Vec<(i64, f64)> = score.into_iter().collect();
    out.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    out.truncate(limit);
    out
}
