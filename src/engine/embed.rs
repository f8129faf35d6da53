//! Semantic retrieval: an OpenAI-compatible `/v1/embeddings` provider
//! (a local Ollama or llama.cpp server, or a hosted API), vectors kept in
//! SQLite, cosine similarity, and reciprocal-rank fusion for `hybrid`.

use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store::db::{Db, Val};
use serde_json::{Value, json};
use std::time::Duration;

/// Where embeddings come from.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingConfig {
    /// Base URL, e.g. `http://127.0.0.1:11434/v1` (the `/embeddings` path is appended).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// When the command that calls the provider must be done by: every
    /// call waits at most until then (`KIP_4001` past it).
    pub deadline: Option<std::time::Instant>,
}

impl EmbeddingConfig {
    /// From `SOMNUS_EMBED_URL`, `SOMNUS_EMBED_MODEL` and `SOMNUS_EMBED_KEY`.
    pub fn from_env() -> Option<EmbeddingConfig> {
        let base_url = std::env::var("SOMNUS_EMBED_URL")
            .ok()
            .filter(|s| !s.is_empty())?;
        Some(EmbeddingConfig {
            base_url,
            model: std::env::var("SOMNUS_EMBED_MODEL")
                .unwrap_or_else(|_| "nomic-embed-text".into()),
            api_key: std::env::var("SOMNUS_EMBED_KEY")
                .ok()
                .filter(|s| !s.is_empty()),
            deadline: None,
        })
    }

    /// How long the next provider call may take: at most 60 s, and never
    /// past the command's deadline.
    fn budget(&self) -> KipResult<Duration> {
        let cap = Duration::from_secs(60);
        match self.deadline {
            None => Ok(cap),
            Some(d) => {
                let left = d.saturating_duration_since(std::time::Instant::now());
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

    fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with("/embeddings") {
            base.to_string()
        } else {
            format!("{base}/embeddings")
        }
    }

    /// Embeds a batch of texts.
    pub fn embed(&self, texts: &[String]) -> KipResult<Vec<Vec<f32>>> {
        let budget = self.budget()?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(budget))
            .build()
            .into();
        let mut req = agent.post(&self.endpoint());
        if let Some(k) = &self.api_key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let fail = |e: String| {
            KipError::new(
                ErrorCode::InternalError,
                format!("embedding provider {}: {e}", self.endpoint()),
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
    for k in ["description", "content_summary", "summary", "title"] {
        if let Some(s) = attrs.get(k).and_then(Value::as_str) {
            parts.push(s.to_string());
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

/// Embeds every concept whose text changed since it was last embedded.
/// Returns how many were embedded.
pub fn sync(db: Db<'_>, cfg: &EmbeddingConfig) -> KipResult<usize> {
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
    let mut done = 0;
    loop {
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
            return Ok(done);
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

/// `(concept id, similarity in [0, 1])`, best first.
pub fn semantic_hits(
    db: Db<'_>,
    cfg: &EmbeddingConfig,
    term: &str,
    ty: Option<&str>,
    limit: usize,
) -> KipResult<Vec<(i64, f64)>> {
    let q = cfg.embed(&[term.to_string()])?.pop().unwrap_or_default();
    let rows = db.query(
        "SELECT e.id, e.vector FROM embeddings e JOIN concepts c ON c.id = e.id WHERE e.model = ?1 AND (CAST(?2 AS TEXT) IS NULL OR c.type = ?2)",
        &[Val::from(cfg.model.as_str()), Val::from(ty)],
    )?;
    let mut hits = Vec::new();
    for r in rows {
        let Val::Bytes(blob) = &r.0[1] else { continue };
        let s = cosine(&q, &from_blob(blob)).max(0.0);
        hits.push((r.i64(0)?, s));
    }
    hits.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    hits.truncate(limit);
    Ok(hits)
}

/// Reciprocal-rank fusion of keyword and semantic hits. The fused order is
/// RRF (k = 60); each hit's score is the mean of its two normalised scores.
pub fn fuse(keyword: &[(i64, f64)], semantic: &[(i64, f64)], limit: usize) -> Vec<(i64, f64)> {
    use std::collections::HashMap;
    const K: f64 = 60.0;
    let mut rrf: HashMap<i64, f64> = HashMap::new();
    let mut score: HashMap<i64, (f64, f64)> = HashMap::new();
    for (rank, (id, s)) in keyword.iter().enumerate() {
        *rrf.entry(*id).or_default() += 1.0 / (K + rank as f64 + 1.0);
        score.entry(*id).or_default().0 = *s;
    }
    for (rank, (id, s)) in semantic.iter().enumerate() {
        *rrf.entry(*id).or_default() += 1.0 / (K + rank as f64 + 1.0);
        score.entry(*id).or_default().1 = *s;
    }
    let mut out: Vec<(i64, f64, f64)> = rrf
        .into_iter()
        .map(|(id, r)| (id, r, (score[&id].0 + score[&id].1) / 2.0))
        .collect();
    out.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    out.truncate(limit);
    out.into_iter().map(|(id, _, s)| (id, s)).collect()
}
