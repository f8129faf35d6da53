//! The LLM reasoner against a scripted OpenAI-compatible chat server on
//! loopback: it reads the memory through its `execute_kip` tool, its
//! writes are captured as proposal items (never applied), its verdicts
//! shape the proposal, and an unusable answer falls back to the heuristic.

use serde_json::{Value, json};
use somnus::sleep::llm::{Llm, LlmConfig};
use somnus::sleep::{self, Options, Scope, proposals};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

fn reply(req: &Value) -> Value {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let user = msgs
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .unwrap_or_default();
    let tools = msgs.iter().filter(|m| m["role"] == "tool").count();
    let input: Value = user
        .split_once("Input:\n")
        .and_then(|(_, rest)| rest.split_once("\n\nAnswer with JSON").map(|(j, _)| j))
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or(Value::Null);
    let content = |v: Value| json!({"choices": [{"message": {"role": "assistant", "content": v.to_string()}}]});
    let call = |cmd: &str| {
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call{tools}"), "type": "function", "function": {"name": "execute_kip", "arguments": json!({"command": cmd, "reason": "the model wants this"}).to_string()}}
        ]}}]})
    };
    if user.starts_with("Phase 1B") {
        let scores: Vec<Value> = input["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| json!({"name": e["name"], "score": 42, "basis": "model"}))
            .collect();
        return content(json!({"scores": scores}));
    }
    if user.starts_with("Phase 6") {
        return match tools {
            0 => call(
                r#"FIND(?t.name) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JavaScript") }"#,
            ),
            1 => call(
                r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "JavaScript"} SET ATTRIBUTES { note: "the model's idea" } } }"#,
            ),
            _ => {
                let j: Vec<Value> = input["pairs"].as_array().unwrap().iter().map(|_| json!({"same": true, "keep_a": false, "confidence": 0.9, "rationale": "model says same"})).collect();
                content(json!({"judgements": j}))
            }
        };
    }
    if user.starts_with("Phase 9") {
        let r: Vec<Value> = input["conflicts"].as_array().unwrap().iter().map(|_| json!({"verdict": "keep_older", "confidence": 0.7, "rationale": "model prefers the older"})).collect();
        return content(json!({"resolutions": r}));
    }
    json!({"choices": [{"message": {"role": "assistant", "content": "I would rather chat about this."}}]})
}

fn serve(seen: Arc<Mutex<Vec<Value>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut len = 0usize;
            let mut line = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            let req: Value = serde_json::from_slice(&body).unwrap_or(json!({}));
            let out = reply(&req).to_string();
            seen.lock().unwrap().push(req);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
                out.len()
            );
        }
    });
    format!("http://{addr}/v1")
}

#[test]
fn the_llm_reasoner_reads_through_its_tool_and_its_writes_wait_for_approval() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = serve(seen.clone());
    let mut nx = somnus::demo::in_memory().unwrap();
    let mut llm = Llm::new(LlmConfig {
        base_url: url,
        model: "scripted".into(),
        api_key: None,
        max_rounds: 6,
    });
    let rep = sleep::run(
        &mut nx,
        &Options::new(Scope::Full, "2026-11-20T03:00:00Z"),
        &mut llm,
        None,
        None,
    )
    .unwrap();
    assert_eq!(rep.status, "completed", "{:?}", rep.error);
    assert_eq!(rep.reasoner, "llm");

    // salience came from the model
    let r = nx.execute(&somnus::Request::readonly(r#"FIND(?e.attributes.salience_score) WHERE { ?e {type: "Event", name: "ToolUse:2026-10-20:weather_lookup"} }"#));
    assert!(r.to_json().to_string().contains("42"), "{}", r.to_json());

    let requests = seen.lock().unwrap().clone();
    // the system prompt is the sleep-mode instructions, with the tool offered
    assert!(
        requests[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Sleep Mode")
    );
    assert_eq!(
        requests[0]["tools"][0]["function"]["name"],
        json!("execute_kip")
    );
    // its read ran: the tool answer carried the result back
    assert!(requests.iter().any(|q| {
        q["messages"].as_array().unwrap().iter().any(|m| {
            m["role"] == "tool"
                && m["content"].as_str().unwrap_or("").contains("JavaScript")
                && m["content"].as_str().unwrap_or("").contains("result")
        })
    }));
    // its write was captured, not applied
    assert!(requests.iter().any(|q| {
        q["messages"].as_array().unwrap().iter().any(|m| {
            m["role"] == "tool" && m["content"].as_str().unwrap_or("").contains("captured")
        })
    }));
    let note = nx.execute(&somnus::Request::readonly(
        r#"FIND(?t.attributes.note) WHERE { ?t {type: "Topic", name: "JavaScript"} }"#,
    ));
    assert!(!note.to_json().to_string().contains("the model's idea"));

    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let llm_items: Vec<&proposals::Item> = p.items.iter().filter(|i| i.class == "llm").collect();
    assert_eq!(llm_items.len(), 1);
    assert!(llm_items[0].commands[0].contains("the model's idea"));
    assert_eq!(llm_items[0].rationale, "the model wants this");
    // its verdicts shape the proposal
    assert!(
        p.items
            .iter()
            .any(|i| i.class == "contradiction" && i.title.ends_with("keep_older"))
    );
    assert!(
        p.items
            .iter()
            .filter(|i| i.class == "merge")
            .all(|i| i.rationale == "model says same")
    );
    // an unusable answer fell back to the heuristic, and says so
    assert!(p.items.iter().any(|i| {
        i.class == "reclassify"
            && i.rationale
                .contains("[heuristic: the model's answer was unusable")
    }));
    assert!(llm.fell_back > 0 && llm.answered > 0);

    // approving the captured write applies it
    let seq = llm_items[0].seq;
    proposals::approve(
        &mut nx,
        p.id,
        Some(&[seq]),
        &Default::default(),
        &somnus::audit::Who {
            actor: "operator".into(),
            trigger: "test".into(),
            reason: None,
        },
    )
    .unwrap();
    let note = nx.execute(&somnus::Request::readonly(
        r#"FIND(?t.attributes.note) WHERE { ?t {type: "Topic", name: "JavaScript"} }"#,
    ));
    assert!(note.to_json().to_string().contains("the model's idea"));
}
