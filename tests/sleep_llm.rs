//! The LLM reasoner against a scripted OpenAI-compatible chat server on
//! loopback: it reads the memory through its `execute_kip` tool, its
//! writes are captured as proposal items (never applied), its verdicts
//! shape the proposal, and an unusable answer falls back to the heuristic.

use serde_json::{Value, json};
use somnus::review::proposals;
use somnus::sleep::llm::{Llm, LlmConfig};
use somnus::sleep::{self, Options, Scope};
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
    if user.starts_with("Phase 5A") && user.contains("Decisões do dia") {
        // the user's standing instruction, as the model reads it
        let g: Vec<Value> = input["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                if e["name"].as_str().unwrap_or("").contains("Decisões do dia") {
                    json!({"event": e["name"], "into": [], "archive": false, "rationale": "the user's warning",
                        "extracted": [{"ty": "Preference", "name": "Nunca reiniciar o laptop sem permissão",
                            "description": "the user's warning", "kind": "instruction", "cue": "NUNCA",
                            "clause": "NUNCA reiniciar o laptop sem permissão", "holder": "Cássio"}]})
                } else {
                    json!({"event": e["name"], "into": [], "archive": true, "rationale": "nothing durable"})
                }
            })
            .collect();
        return content(json!({"gists": g}));
    }
    if user.starts_with("Phase 9") && user.contains("born_in") {
        // a wrong answer: a birthplace "changed"
        let r: Vec<Value> = input["conflicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|_| json!({"verdict": "keep_newer", "confidence": 0.9, "rationale": "newer wins"}))
            .collect();
        return content(json!({"resolutions": r}));
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
            let mut out = reply(&req);
            // what a real endpoint reports: the prompt's size, a short answer
            out["usage"] = json!({"prompt_tokens": body.len() / 4, "completion_tokens": 40, "total_tokens": body.len() / 4 + 40});
            let out = out.to_string();
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
        ..Default::default()
    });
    let rep = full_cycle(&mut nx, &mut llm);
    assert_eq!(rep.status, "completed", "{:?}", rep.error);
    assert_eq!(rep.reasoner, "llm");

    // salience came from the model
    let r = nx.execute(&somnus::Request::readonly(r#"FIND(?e.attributes.salience_score) WHERE { ?e {type: "Event", name: "ToolUse:2026-10-20:weather_lookup"} }"#));
    assert!(r.to_json().to_string().contains("42"), "{}", r.to_json());

    let requests = seen.lock().unwrap().clone();
    // the system prompt is the sleep-mode instructions' rules for the
    // judgement's phase, with the tool offered
    assert!(
        requests[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Identity & Operating Objective")
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
            // (then the values the merge would drop, if any)
            .all(|i| i.rationale.starts_with("model says same"))
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

/// A full cycle with the LLM reasoner, at the tests' clock.
fn full_cycle(nx: &mut somnus::Nexus, llm: &mut Llm) -> sleep::Report {
    sleep::run(
        nx,
        &Options::new(Scope::Full, "2026-11-20T03:00:00Z"),
        llm,
        None,
        None,
    )
    .unwrap()
}

fn small_llm(url: String, output_budget: Option<u64>) -> Llm {
    Llm::new(LlmConfig {
        base_url: url,
        model: "scripted".into(),
        output_budget,
        ..Default::default()
    })
}

#[test]
fn each_judgement_gets_its_phase_rules_and_the_cycle_counts_and_caps_its_tokens() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = serve(seen.clone());
    let mut nx = somnus::demo::in_memory().unwrap();
    let mut llm = small_llm(url, Some(100));
    let rep = full_cycle(&mut nx, &mut llm);
    let requests = seen.lock().unwrap().clone();
    // the rules of the judgement's phase, not the whole 49 KB document
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("### Phase 1:"), "{}", &system[..200]);
    assert!(!system.contains("### Phase 12:"));
    assert!(
        system.len() * 3 < somnus::sleep::llm::INSTRUCTIONS.len(),
        "{} of {}",
        system.len(),
        somnus::sleep::llm::INSTRUCTIONS.len()
    );
    // 40 completion tokens a call: the third call would pass 100
    assert_eq!(requests.len(), 3, "calls made");
    let u = rep.reasoner_usage.clone().expect("usage");
    assert_eq!(u["calls"].as_array().unwrap().len(), 3);
    assert_eq!(u["completion_tokens"], json!(120));
    assert!(u["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(u["over_budget"].as_u64().unwrap() > 0);
    // the report says what it cost and that the heuristic took over
    let text = rep.markdown();
    assert!(text.contains("## Reasoner cost"), "{text}");
    assert!(text.contains("because a budget was spent"), "{text}");
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    assert!(p.items.iter().any(|i| {
        i.rationale
            .contains("[heuristic: the cycle's output budget (100 completion tokens) is spent")
    }));
}

#[test]
fn a_wrong_answer_does_not_override_what_the_graph_rules_out() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = serve(seen.clone());
    let mut nx = somnus::Nexus::open_in_memory().unwrap();
    for cmd in [
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Place"} } CONCEPT ?p { {type: "$PropositionType", name: "born_in"} SET ATTRIBUTES { cardinality: "single" } } }"#,
        r#"UPSERT { CONCEPT ?a { {type: "Person", name: "Ann Lee"} SET ATTRIBUTES { birth_date: "1990-02-01", description: "Violinist" } } CONCEPT ?b { {type: "Person", name: "Dr. Ann Lee"} SET ATTRIBUTES { birth_date: "1951-07-09", description: "Retired surgeon" } } }"#,
        r#"UPSERT { CONCEPT ?x { {type: "Place", name: "Leeds"} } CONCEPT ?y { {type: "Place", name: "York"} } CONCEPT ?a { {type: "Person", name: "Ann Lee"} SET PROPOSITIONS { ("born_in", ?x) WITH METADATA { observed_at: "2020-01-01T00:00:00Z", confidence: 0.9 } ("born_in", ?y) WITH METADATA { observed_at: "2025-01-01T00:00:00Z", confidence: 0.9 } } } }"#,
    ] {
        let r = nx.execute(&somnus::Request::command(cmd));
        assert!(
            !r.to_json().to_string().contains("\"error\""),
            "{}",
            r.to_json()
        );
    }
    let mut llm = small_llm(url, None);
    let rep = full_cycle(&mut nx, &mut llm);
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let titles: Vec<&str> = p.items.iter().map(|i| i.title.as_str()).collect();
    // the model said "same" for two people born 39 years apart
    assert!(!p.items.iter().any(|i| i.class == "merge"), "{titles:?}");
    // and "keep newer" for a birthplace
    let c = p
        .items
        .iter()
        .find(|i| i.class == "contradiction")
        .unwrap_or_else(|| panic!("{titles:?}"));
    assert!(c.title.ends_with("needs_context"), "{}", c.title);
    assert!(
        c.rationale.contains("[overruled: born_in cannot change"),
        "{}",
        c.rationale
    );
    // the model was asked, with both facts' evidence
    let requests = seen.lock().unwrap().clone();
    assert!(requests.iter().any(|q| {
        let u = q["messages"][1]["content"].as_str().unwrap_or("");
        u.starts_with("Phase 9") && u.contains("\"immutable\": true") && u.contains("observed_at")
    }));
}

/// Phase 5A asks the model for standing instructions too, with the clause
/// that states them: the user's "NUNCA reiniciar o laptop sem permissão"
/// becomes the Preference the user holds, proposed, never archived.
#[test]
fn the_model_keeps_the_users_standing_instruction() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = serve(seen.clone());
    let mut nx = somnus::Nexus::open_in_memory().unwrap();
    let r = nx.execute(&somnus::protocol::Request::command(
        r#"UPSERT {
  CONCEPT ?u { {type: "Person", name: "Cássio"} SET ATTRIBUTES { relationship_to_self: "user" } }
  CONCEPT ?e { {type: "Event", name: "2026-10-01 Decisões do dia"} SET ATTRIBUTES { event_class: "daily_note", start_time: "2026-10-01T09:00:00Z", content_summary: "Usuário alertou: NUNCA reiniciar o laptop sem permissão" } }
}"#,
    ));
    assert!(format!("{r:?}").contains("Ok"), "{r:?}");
    let mut llm = small_llm(url, None);
    let rep = full_cycle(&mut nx, &mut llm);
    let requests = seen.lock().unwrap().clone();
    let asked = requests
        .iter()
        .filter_map(|r| r["messages"].as_array())
        .flatten()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.starts_with("Phase 5A"))
        .expect("phase 5A asked")
        .to_string();
    assert!(
        asked.contains("standing instruction") && asked.contains("\"clause\""),
        "{asked}"
    );
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let item = p
        .items
        .iter()
        .find(|i| {
            i.title
                .contains("Preference:Nunca reiniciar o laptop sem permissão")
        })
        .unwrap_or_else(|| {
            panic!(
                "{:#?}",
                p.items.iter().map(|i| &i.title).collect::<Vec<_>>()
            )
        });
    assert!(
        item.rationale.contains("an instruction"),
        "{}",
        item.rationale
    );
    assert!(
        item.commands.iter().any(|c| c.contains("\"prefers\"")),
        "{:?}",
        item.commands
    );
}
