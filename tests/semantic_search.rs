//! Semantic and hybrid SEARCH against a fake OpenAI-compatible embeddings
//! server on loopback.

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
    nx.set_embedder(Some(EmbeddingConfig {
        base_url: url,
        model: "fake".into(),
        api_key: Some("k".into()),
        deadline: None,
    }));
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
    nx.set_embedder(Some(EmbeddingConfig {
        base_url: url,
        model: "fake".into(),
        api_key: Some("k".into()),
        deadline: None,
    }));
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
