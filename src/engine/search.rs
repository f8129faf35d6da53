//! `SEARCH`: keyword grounding over the FTS5 index, BM25-ranked, with the
//! score normalised to [0, 1) by `s / (1 + s)` so a perfect 1.0 is never
//! claimed (a `THRESHOLD 1.0` probe is an honest miss).

use super::embed::{self, EmbeddingConfig};
use crate::kip::KipResult;
use crate::kip::ast::*;
use crate::store;
use crate::store::db::{Backend, Db, Val};
use serde_json::{Value, json};

/// Turns free text into an FTS5 query over the analysed index
/// (`analysis::query`): each kept word as any of its stems, the last word
/// of a text still being typed also as a prefix; any word may match (BM25
/// ranks documents matching more, and rarer, words higher). At most
/// `MAX_SEARCH_WORDS` distinct words, each term cut to `MAX_SEARCH_WORD`
/// characters, so the index query stays small whatever the text.
pub fn fts_query(q: &crate::analysis::Query) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for w in &q.words {
        for t in w.terms.iter().filter(|t| w.prefix.as_ref() != Some(*t)) {
            parts.push(format!("\"{}\"", quoted(t)));
        }
        if let Some(p) = &w.prefix {
            parts.push(format!("\"{}\"*", quoted(p)));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" OR "))
}

/// The same query for PostgreSQL's `to_tsquery` over its unstemmed
/// `simple` document: each stem as a prefix (`'shelter':*` meets
/// "shelters", `'camp':*` "camping"), numbers whole: `'word':* | …`.
pub fn ts_query(q: &crate::analysis::Query) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for w in &q.words {
        let mut terms = w.terms.clone();
        if let Some(p) = &w.prefix {
            terms.push(p.clone());
        }
        for t in terms {
            let t = t.replace('\'', "''").replace('\\', "");
            let p = if w.code {
                format!("'{t}'")
            } else {
                format!("'{t}':*")
            };
            if !parts.contains(&p) {
                parts.push(p);
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}

fn quoted(t: &str) -> String {
    t.replace('"', "\"\"")
}

/// A search text analysed, within the search limits.
fn analysed(term: &str) -> crate::analysis::Query {
    use crate::kip::limits::{MAX_SEARCH_WORD, MAX_SEARCH_WORDS};
    let mut q = crate::analysis::query(term, MAX_SEARCH_WORDS);
    for w in &mut q.words {
        for t in w.terms.iter_mut().chain(w.prefix.iter_mut()) {
            if let Some((i, _)) = t.char_indices().nth(MAX_SEARCH_WORD) {
                t.truncate(i);
            }
        }
    }
    q
}

/// `rank` is BM25F's (`rank::bm25f`) on SQLite, `ts_rank`'s on
/// PostgreSQL (both positive, higher is better): either way `s / (1 + s)`.
fn normalise(rank: f64, exact: bool) -> f64 {
    let s = rank.abs() * if exact { 2.0 } else { 1.0 };
    s / (1.0 + s)
}

/// A `SEARCH`'s days (`@since`, `@until`: `YYYY-MM-DD`, both included).
#[derive(Debug, Clone, Copy, Default)]
pub struct Window<'a> {
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
}

impl Window<'_> {
    /// Whether a concept (as KIP returns it) falls inside: the day of its
    /// `start_time` as written. Without a bound, everything does; with
    /// one, a concept without a `start_time` does not.
    pub fn holds(&self, concept: &Value) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(day) = concept["attributes"]["start_time"]
            .as_str()
            .and_then(|t| t.get(..10))
        else {
            return false;
        };
        self.since.is_none_or(|s| day >= s) && self.until.is_none_or(|u| day <= u)
    }
}

/// The days a search text names (`analysis::days`), as `YYYY-MM-DD`.
fn named_days(term: &str) -> Vec<String> {
    crate::analysis::days(term)
        .iter()
        .map(|d| d.format("%Y-%m-%d").to_string())
        .collect()
}

/// `(concept id, score)` hits, best first (inside `window`).
pub fn concept_hits(
    conn: Db<'_>,
    term: &str,
    ty: Option<&str>,
    limit: usize,
    window: Window<'_>,
) -> KipResult<Vec<(i64, f64)>> {
    let lower = term.to_lowercase();
    let mut hits: Vec<(i64, f64)> = match conn.backend() {
        Backend::Sqlite => {
            let days: Vec<String> = named_days(term);
            let asked = analysed(term);
            let q = fts_query(&asked);
            if q.is_none() && days.is_empty() {
                return Ok(vec![]);
            }
            // concepts changed earlier in this transaction (a group's
            // earlier command) are indexed first
            store::sync_fts_for_read(conn)?;
            let [w0, w1, w2, w3, w4, w5] = super::rank::WEIGHTS;
            const COLUMNS: &str = "c.id, c.name, f.name, f.codes, f.aliases, f.description, f.body, f.rest, \
                 substr(json_extract(c.attributes, '$.start_time'), 1, 10)";
            let pool = (limit * 4).max(super::rank::POOL);
            let mut rows = Vec::new();
            if let Some(q) = q {
                // the candidates by what they say themselves, then those
                // found only by what their other attributes say, the
                // newest, twice as many as asked for: a word in every
                // Event's `participants` (a speaker's name) would
                // otherwise have FTS5 rank hundreds of rows for each
                // question, each a weaker match than the text's (a
                // candidate's other attributes still count in the
                // ranking below)
                let own = format!("{{name codes aliases description body}} : ({q})");
                let rest = format!("rest : ({q})");
                let ranked =
                    format!("bm25(concept_fts, {w0:?}, {w1:?}, {w2:?}, {w3:?}, {w4:?}, {w5:?})");
                let rest_room = (limit * 2).min(pool);
                for (expr, room, order) in [
                    (own, pool, ranked.as_str()),
                    (rest, rest_room, "f.rowid DESC"),
                ] {
                    rows.extend(conn.query(
                        &format!(
                            "SELECT {COLUMNS} FROM concept_fts f JOIN concepts c ON c.id = f.rowid \
                             WHERE concept_fts MATCH ?1 AND (?2 IS NULL OR c.type = ?2){WINDOW_SQLITE} \
                             ORDER BY {order} LIMIT ?3"
                        ),
                        &[
                            expr.into(),
                            ty.into(),
                            Val::Int(room as i64),
                            window.since.into(),
                            window.until.into(),
                        ],
                    )?);
                }
            }
            if !days.is_empty() {
                // what happened on a day the question names
                let list = serde_json::to_string(&days).unwrap_or_else(|_| "[]".into());
                rows.extend(conn.query(
                    &format!(
                        "SELECT {COLUMNS} FROM concepts c JOIN concept_fts f ON f.rowid = c.id \
                         WHERE (?2 IS NULL OR c.type = ?2) \
                         AND substr(json_extract(c.attributes, '$.start_time'), 1, 10) IN (SELECT value FROM json_each(?1)){WINDOW_SQLITE} \
                         ORDER BY c.id LIMIT ?3"
                    ),
                    &[
                        Val::Text(list),
                        ty.into(),
                        Val::Int(pool as i64),
                        window.since.into(),
                        window.until.into(),
                    ],
                )?);
            }
            let mut cands = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for mut r in rows {
                let id = r.i64(0)?;
                if !seen.insert(id) {
                    continue;
                }
                let mut col = |i: usize| {
                    r.take_text(i)
                        .or_else(|_| Ok::<_, crate::kip::KipError>(String::new()))
                };
                let columns = [col(2)?, col(3)?, col(4)?, col(5)?, col(6)?, col(7)?];
                let day = r.opt_text(8).ok().flatten();
                cands.push(super::rank::Candidate {
                    id,
                    name: r.text(1)?,
                    columns,
                    on_day: day.is_some_and(|d| days.contains(&d)),
                });
            }
            let words: Vec<Vec<String>> = asked
                .words
                .into_iter()
                .map(|w| {
                    w.terms
                        .into_iter()
                        .chain(w.prefix.map(|p| format!("{p}*")))
                        .collect()
                })
                .collect();
            let scores = super::rank::bm25f(conn, &words, &cands)?;
            cands
                .iter()
                .zip(scores)
                .map(|(c, s)| (c.id, normalise(s, c.name.to_lowercase() == lower)))
                .collect()
        }
        Backend::Postgres => {
            let q = ts_query(&analysed(term));
            let days: Vec<String> = named_days(term);
            if q.is_none() && days.is_empty() {
                return Ok(vec![]);
            }
            // what happened on a day the question names (the day as
            // written in its `start_time`) gains about what one more
            // matched word gives
            // (without a day, the words alone: found through the index)
            let sql = if days.is_empty() {
                format!(
                    "SELECT c.id, ts_rank(c.search, q)::float8 AS r, c.name FROM concepts c, to_tsquery('simple', ?1) q \
                 WHERE c.search @@ q AND (CAST(?2 AS TEXT) IS NULL OR c.type = ?2){WINDOW_PG} ORDER BY r DESC, c.id LIMIT ?3"
                )
            } else {
                format!(
                    "SELECT c.id, (CASE WHEN c.search @@ q THEN ts_rank(c.search, q) ELSE 0 END \
                   + CASE WHEN left(c.attributes->>'start_time', 10) = ANY(d.days) THEN CAST(?5 AS FLOAT8) ELSE 0 END)::float8 AS r, c.name \
                 FROM concepts c, to_tsquery('simple', ?1) q, \
                   (SELECT ARRAY(SELECT jsonb_array_elements_text(CAST(?4 AS JSONB))) AS days) d \
                 WHERE (c.search @@ q OR left(c.attributes->>'start_time', 10) = ANY(d.days)) \
                   AND (CAST(?2 AS TEXT) IS NULL OR c.type = ?2){WINDOW_PG} ORDER BY r DESC, c.id LIMIT ?3"
                )
            };
            let mut hits = Vec::new();
            for r in conn.query(
                &sql,
                &[
                    q.unwrap_or_default().into(),
                    ty.into(),
                    Val::Int((limit * 4).max(50) as i64),
                    Val::Json(serde_json::json!(days)),
                    Val::Real(DAY_RANK),
                    window.since.into(),
                    window.until.into(),
                ],
            )? {
                let (id, rank, name) = (r.i64(0)?, r.f64(1)?, r.text(2)?);
                hits.push((id, normalise(rank, name.to_lowercase() == lower)));
            }
            hits
        }
    };
    hits.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    hits.truncate(limit);
    Ok(hits)
}

/// A `SEARCH`'s days on SQLite (`?4` since, `?5` until, each may be null):
/// the day of `start_time` as written.
const WINDOW_SQLITE: &str = " AND (?4 IS NULL OR substr(json_extract(c.attributes, '$.start_time'), 1, 10) >= ?4) \
     AND (?5 IS NULL OR substr(json_extract(c.attributes, '$.start_time'), 1, 10) <= ?5)";
/// [`WINDOW_SQLITE`] on PostgreSQL (`?6`, `?7`).
const WINDOW_PG: &str = " AND (CAST(?6 AS TEXT) IS NULL OR left(c.attributes->>'start_time', 10) >= ?6) \
     AND (CAST(?7 AS TEXT) IS NULL OR left(c.attributes->>'start_time', 10) <= ?7)";

/// What a day named in the question adds to an element's `ts_rank` on
/// PostgreSQL when its `start_time` falls on it: about what one more
/// matched word adds (`ts_rank` of one word in a short text is 0.06).
const DAY_RANK: f64 = 0.06;

/// The mode a search runs in: what was asked, degraded to keyword when no
/// embedding provider is configured (spec §5.2.1).
pub fn effective_mode(s: &SearchStmt, embed: Option<&EmbeddingConfig>) -> SearchMode {
    match (s.mode, embed) {
        (_, None) => SearchMode::Keyword,
        (None, Some(_)) => SearchMode::Hybrid,
        (Some(m), Some(_)) => m,
    }
}

/// How a SEARCH ranked, said beside its result (`"search"` in the
/// answer): the mode that ran, the model that embedded the question, how
/// many concepts had no vector yet, and why it fell back to keywords when
/// it did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recall {
    pub mode: Option<SearchMode>,
    pub model: Option<String>,
    pub not_embedded: usize,
    pub keyword_only: Option<String>,
}

impl Recall {
    pub fn to_json(&self) -> Value {
        let mode = match self.mode.unwrap_or(SearchMode::Keyword) {
            SearchMode::Keyword => "keyword",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        };
        let mut o = json!({ "mode": mode });
        if let Some(m) = &self.model {
            o["model"] = json!(m);
        }
        if self.not_embedded > 0 {
            o["not_embedded"] = json!(self.not_embedded);
        }
        if let Some(w) = &self.keyword_only {
            o["keyword_only"] = json!(w);
        }
        o
    }
}

/// Why a search with no provider ranks by keyword alone.
pub const NO_MODEL: &str =
    "no embedding model is installed or configured (SOMNUS_EMBED_URL, SOMNUS_EMBED_MODEL_DIR)";

fn hits(
    conn: Db<'_>,
    s: &SearchStmt,
    embed: Option<&EmbeddingConfig>,
    ty: Option<&str>,
    limit: usize,
    window: Window<'_>,
    recall: &mut Recall,
) -> KipResult<Vec<(i64, f64)>> {
    let mode = effective_mode(s, embed);
    let semantic = match (mode, embed) {
        (SearchMode::Semantic | SearchMode::Hybrid, Some(cfg)) => {
            match embed::semantic_scores(conn, cfg, &s.term, ty, &named_days(&s.term)) {
                Ok(v) => {
                    recall.model = Some(cfg.model.clone());
                    recall.not_embedded = embed::not_embedded(conn)?;
                    Some(v)
                }
                // out of time: the command is over
                Err(e) if e.code == crate::kip::ErrorCode::ExecutionTimeout => return Err(e),
                // the provider failed: keywords still find something
                // (spec §5.2.1: degraded recall beats no recall)
                Err(e) => {
                    recall.keyword_only =
                        Some(format!("the embedding provider failed: {}", e.message));
                    None
                }
            }
        }
        (SearchMode::Keyword, None) if s.mode != Some(SearchMode::Keyword) => {
            recall.keyword_only = Some(NO_MODEL.into());
            None
        }
        _ => None,
    };
    match semantic {
        Some((mut v, off_day)) if mode == SearchMode::Semantic => {
            recall.mode = Some(SearchMode::Semantic);
            v.retain(|(id, _)| !off_day.contains(id));
            v.truncate(limit);
            Ok(v)
        }
        Some((v, off_day)) => {
            recall.mode = Some(SearchMode::Hybrid);
            let k = concept_hits(conn, &s.term, ty, limit * 2, window)?;
            Ok(embed::fuse(&k, &v, &off_day, limit))
        }
        None => {
            recall.mode = Some(SearchMode::Keyword);
            concept_hits(conn, &s.term, ty, limit, window)
        }
    }
}

/// The days `s` keeps.
fn window(s: &SearchStmt) -> Window<'_> {
    Window {
        since: s.since.as_deref(),
        until: s.until.as_deref(),
    }
}

/// The hits of `s`, and how they were ranked.
pub fn search(
    conn: Db<'_>,
    s: &SearchStmt,
    embed: Option<&EmbeddingConfig>,
) -> KipResult<(Value, Recall)> {
    let mut recall = Recall::default();
    let limit = s.limit.unwrap_or(10).min(1000) as usize;
    let threshold = s.threshold.unwrap_or(0.0);
    let mut out = Vec::new();
    match s.kind {
        SearchKind::Concept => {
            // twice the page is ranked, so a strong hit just past the page
            // can overtake a fading one
            let found: Vec<(i64, f64)> = hits(
                conn,
                s,
                embed,
                s.with_type.as_deref(),
                (limit * 2).min(2000),
                window(s),
                &mut recall,
            )?;
            // the hits' elements in one statement, as KIP returns them
            let ids = serde_json::to_string(&found.iter().map(|h| h.0).collect::<Vec<_>>())
                .unwrap_or_else(|_| "[]".into());
            let sql = match conn.backend() {
                Backend::Sqlite => {
                    "SELECT c.id, json_object('_type', 'ConceptNode', 'id', 'C:' || c.id, 'type', c.type, 'name', c.name, \
                     'attributes', json(c.attributes), 'metadata', json_set(c.metadata, '$._version', c.version, '$._updated_at', c.updated_at)) \
                     FROM concepts c WHERE c.id IN (SELECT value FROM json_each(?1))"
                }
                Backend::Postgres => {
                    "SELECT c.id, json_build_object('_type', 'ConceptNode', 'id', 'C:' || c.id, 'type', c.type, 'name', c.name, \
                     'attributes', c.attributes, 'metadata', c.metadata || jsonb_build_object('_version', c.version, '_updated_at', c.updated_at))::text \
                     FROM concepts c WHERE c.id = ANY(ARRAY(SELECT value::bigint FROM jsonb_array_elements_text(?1::jsonb)))"
                }
            };
            let mut texts: std::collections::HashMap<i64, String> = conn
                .query(sql, &[ids.into()])?
                .iter()
                .map(|r| Ok((r.i64(0)?, r.text(1)?)))
                .collect::<KipResult<_>>()?;
            let mut ranked = Vec::with_capacity(found.len());
            for (id, relevance) in found {
                if let Some(t) = texts.remove(&id) {
                    let mut v: Value = serde_json::from_str(&t)
                        .map_err(|e| crate::kip::KipError::internal(e.to_string()))?;
                    // (semantic hits are found without the window)
                    if !window(s).holds(&v) {
                        continue;
                    }
                    let factor = strength_factor(&v["metadata"], &v["attributes"]);
                    let score = relevance * factor;
                    if score < threshold {
                        continue;
                    }
                    v["metadata"]["_score"] = json!(score);
                    if factor < 1.0 {
                        v["metadata"]["_relevance"] = json!(relevance);
                    }
                    ranked.push((score, id, v));
                }
            }
            ranked.sort_by(|a, b| {
                b.0.partial_cmp(&a.0)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.1.cmp(&b.1))
            });
            out.extend(ranked.into_iter().take(limit).map(|(_, _, v)| v));
        }
        SearchKind::Proposition => {
            // Predicates whose definition matches (any time), then their
            // links (inside the window: a fact's time is its
            // `observed_at`, else its `created_at`).
            let preds = hits(
                conn,
                s,
                embed,
                Some("$PropositionType"),
                50,
                Window::default(),
                &mut recall,
            )?;
            let fact_day = match conn.backend() {
                Backend::Sqlite => {
                    "substr(COALESCE(json_extract(metadata, '$.observed_at'), json_extract(metadata, '$.created_at')), 1, 10)"
                }
                Backend::Postgres => {
                    "left(COALESCE(metadata->>'observed_at', metadata->>'created_at'), 10)"
                }
            };
            let links_sql = format!(
                "SELECT id FROM propositions WHERE predicate = ?1 \
                 AND (CAST(?3 AS TEXT) IS NULL OR {fact_day} >= ?3) AND (CAST(?4 AS TEXT) IS NULL OR {fact_day} <= ?4) \
                 ORDER BY id DESC LIMIT ?2"
            );
            for (pid, score) in preds {
                if score < threshold || out.len() >= limit {
                    continue;
                }
                let Some(def) = store::concept_by_id(conn, pid)? else {
                    continue;
                };
                if s.with_type.as_deref().is_some_and(|t| t != def.name) {
                    continue;
                }
                let ids: Vec<i64> = conn
                    .query(
                        &links_sql,
                        &[
                            def.name.as_str().into(),
                            Val::Int((limit - out.len()) as i64),
                            s.since.as_deref().into(),
                            s.until.as_deref().into(),
                        ],
                    )?
                    .iter()
                    .map(|r| r.i64(0))
                    .collect::<KipResult<_>>()?;
                let mut links = Vec::with_capacity(ids.len());
                for id in ids {
                    if let Some(el) = store::element(conn, id)? {
                        let mut v = store::element_json(conn, &el)?;
                        let factor = strength_factor(&v["metadata"], &Value::Null);
                        v["metadata"]["_score"] = json!(score * factor);
                        if factor < 1.0 {
                            v["metadata"]["_relevance"] = json!(score);
                        }
                        links.push((factor, v));
                    }
                }
                // within a predicate's page, the stronger links first
                links.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
                out.extend(links.into_iter().map(|(_, v)| v));
            }
        }
    }
    Ok((Value::Array(out), recall))
}

/// How much an element's memory strength weighs on its SEARCH rank (the
/// sleep-mode lifecycle): active (strength ≥ 0.5, or none recorded) 1.0;
/// fading (≥ 0.2) 0.8; dormant (≥ 0.05) 0.6; below 0.4; archived or
/// superseded 0.3. Relevance × this factor is the `_score`; nothing is
/// hidden (an archived element is still found, after the live ones).
pub fn strength_factor(metadata: &Value, attributes: &Value) -> f64 {
    let archived = metadata.get("archived").and_then(Value::as_bool) == Some(true)
        || metadata.get("superseded").and_then(Value::as_bool) == Some(true)
        || metadata.get("memory_tier").and_then(Value::as_str) == Some("archived")
        || attributes.get("status").and_then(Value::as_str) == Some("archived")
        || attributes
            .get("consolidation_status")
            .and_then(Value::as_str)
            == Some("archived");
    if archived {
        return 0.3;
    }
    match metadata.get("memory_strength").and_then(Value::as_f64) {
        None => 1.0,
        Some(s) if s >= 0.5 => 1.0,
        Some(s) if s >= 0.2 => 0.8,
        Some(s) if s >= 0.05 => 0.6,
        Some(_) => 0.4,
    }
}
