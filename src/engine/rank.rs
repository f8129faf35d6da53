//! Keyword ranking: BM25F over the analysed full-text index (SQLite).
//!
//! FTS5's own `bm25()` fixes k1 at 1.2 and b at 0.75 and normalises each
//! column's length alone. Measured on conversational memory (`somnus bench
//! --recall`), short texts are better served by a gentler length
//! normalisation, so SEARCH takes FTS5's best [`POOL`] candidates and
//! ranks them again here: each field's term count weighed by the field
//! ([`WEIGHTS`]) and normalised by its own length against the field's
//! average (b = [`B`]), then saturated once (k1 = [`K1`]), times the
//! term's IDF over the whole index. A question's word counts once, by the
//! best of its stems. The index keeps the analysed terms, so this needs
//! no analysis, only counting.

use crate::kip::KipResult;
use crate::store::db::{Db, Val};
use std::collections::HashMap;

/// Term-frequency saturation.
pub const K1: f64 = 1.2;
/// Length normalisation (0 none, 1 full); FTS5's is 0.75.
pub const B: f64 = 0.3;
/// Field weights, in the index's column order: the name's words, its
/// codes and numbers, aliases, description, body, the other attributes'
/// texts (`store::fts`). A name's digits weigh least of all, so an id such
/// as "D17:24" never outweighs the text; what an element's other
/// attributes say weighs half what its own text does.
pub const WEIGHTS: [f64; COLUMNS] = [10.0, 0.2, 8.0, 2.0, 1.0, 0.5];
/// The index's columns.
pub const COLUMNS: usize = 6;
/// Candidates FTS5 ranks first and this ranks again.
pub const POOL: usize = 200;

/// The index's row count and each column's total length, from FTS5's
/// averages record (`%_data` row 1: varints, the row count then one
/// total per column).
fn averages(conn: Db<'_>) -> KipResult<(f64, [f64; COLUMNS])> {
    let rows = conn.query("SELECT block FROM concept_fts_data WHERE id = 1", &[])?;
    let Some(r) = rows.first() else {
        return Ok((0.0, [0.0; COLUMNS]));
    };
    let block = r.bytes(0)?;
    let mut at = 0usize;
    let mut next = || -> u64 {
        // SQLite's varint: 7 bits a byte, big-endian, the ninth byte whole
        let mut v: u64 = 0;
        for i in 0..9 {
            let Some(&b) = block.get(at) else {
                return v;
            };
            at += 1;
            if i == 8 {
                return (v << 8) | b as u64;
            }
            v = (v << 7) | (b & 0x7f) as u64;
            if b & 0x80 == 0 {
                return v;
            }
        }
        v
    };
    let n = next() as f64;
    let mut totals = [0.0; COLUMNS];
    for t in &mut totals {
        *t = next() as f64;
    }
    Ok((n, totals))
}

/// A candidate: its id, its name, its analysed columns, and whether
/// it is dated on a day the question names.
pub struct Candidate {
    pub id: i64,
    pub name: String,
    pub columns: [String; COLUMNS],
    pub on_day: bool,
}

/// Each candidate's BM25F score for the question's words (each word a set
/// of alternative terms), in the candidates' order. A candidate dated on a
/// day the question names gains as much as a word only it holds would
/// give (the highest IDF the index can give).
pub fn bm25f(conn: Db<'_>, words: &[Vec<String>], cands: &[Candidate]) -> KipResult<Vec<f64>> {
    let (n, totals) = averages(conn)?;
    let avg: Vec<f64> = totals
        .iter()
        .map(|t| if n > 0.0 { (t / n).max(1.0) } else { 1.0 })
        .collect();
    // document frequencies of every term asked for, in one statement
    let terms: Vec<&str> = words
        .iter()
        .flatten()
        .map(|t| t.trim_end_matches('*'))
        .collect();
    let list = serde_json::to_string(&terms).unwrap_or_else(|_| "[]".into());
    let df: HashMap<String, f64> = conn
        .query(
            "SELECT term, doc FROM concept_vocab WHERE term IN (SELECT value FROM json_each(?1))",
            &[Val::Text(list)],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.i64(1)? as f64)))
        .collect::<KipResult<_>>()?;
    let idf = |t: &str| {
        let d = df.get(t).copied().unwrap_or(0.0);
        ((n - d + 0.5) / (d + 0.5) + 1.0).ln()
    };
    let idf_one = ((n - 1.0 + 0.5) / 1.5 + 1.0).ln().max(0.0);
    let mut out = Vec::with_capacity(cands.len());
    for c in cands {
        let cols: Vec<Vec<&str>> = c
            .columns
            .iter()
            .map(|s| s.split(' ').filter(|t| !t.is_empty()).collect())
            .collect();
        let mut score = 0.0;
        for alts in words {
            let mut best: f64 = 0.0;
            for t in alts {
                // a word still being typed ("postg*") counts every term it begins
                let (t, prefix) = match t.strip_suffix('*') {
                    Some(p) => (p, true),
                    None => (t.as_str(), false),
                };
                let hit = |x: &&&str| if prefix { x.starts_with(t) } else { **x == t };
                let mut tf = 0.0;
                for (i, col) in cols.iter().enumerate() {
                    let f = col.iter().filter(hit).count() as f64;
                    if f > 0.0 {
                        let norm = 1.0 - B + B * col.len() as f64 / avg[i];
                        tf += WEIGHTS[i] * f / norm;
                    }
                }
                if tf > 0.0 {
                    best = best.max(idf(t) * tf * (K1 + 1.0) / (tf + K1));
                }
            }
            score += best;
        }
        if c.on_day {
            score += idf_one;
        }
        out.push(score);
    }
    Ok(out)
}
