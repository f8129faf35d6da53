//! The LLM reasoner: each judgement call is one conversation with an
//! OpenAI-compatible chat-completions endpoint (a local Ollama, a hosted
//! model), given the sleep-mode instructions as its system prompt and an
//! `execute_kip` tool. Reads through the tool run against the memory
//! (read-only); writes are captured, never applied, and reach the human as
//! proposal items. The answer to each call is a JSON object; an unusable
//! answer falls back to the heuristic for that call and says so.

use super::reasoner::*;
use crate::kip::{self, ErrorCode, KipError, KipResult};
use serde_json::{Map, Value, json};
use std::time::Duration;

pub const INSTRUCTIONS: &str = include_str!("../../assets/sleep/kip-brain-sleep-mode.md");

#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Tool-call rounds per judgement call.
    pub max_rounds: usize,
    /// Tokens (prompt and completion, as the endpoint reports them) one
    /// cycle may spend; past it, judgements fall back to the heuristic.
    pub token_budget: Option<u64>,
    /// Completion tokens one cycle may spend (Moltbot §10.2: 8,000 of
    /// output per reflection cycle; reading is not capped there).
    pub output_budget: Option<u64>,
}

/// Moltbot §10.2's output cap per cycle.
pub const DEFAULT_OUTPUT_BUDGET: u64 = 8_000;
/// Prompt and completion tokens per cycle unless `SOMNUS_LLM_TOKEN_BUDGET`
/// says otherwise.
pub const DEFAULT_TOKEN_BUDGET: u64 = 400_000;

impl Default for LlmConfig {
    fn default() -> LlmConfig {
        LlmConfig {
            base_url: String::new(),
            model: String::new(),
            api_key: None,
            max_rounds: 6,
            token_budget: Some(DEFAULT_TOKEN_BUDGET),
            output_budget: Some(DEFAULT_OUTPUT_BUDGET),
        }
    }
}

/// What the endpoint said one call cost.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Call {
    pub judgement: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Tokens spent in one cycle.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Usage {
    pub calls: Vec<Call>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Judgements answered by the heuristic because a budget was spent.
    pub over_budget: usize,
}

impl LlmConfig {
    /// From `SOMNUS_LLM_URL` (e.g. `http://127.0.0.1:11434/v1`),
    /// `SOMNUS_LLM_MODEL` and `SOMNUS_LLM_KEY`.
    pub fn from_env() -> Option<LlmConfig> {
        let base_url = std::env::var("SOMNUS_LLM_URL")
            .ok()
            .filter(|s| !s.is_empty())?;
        let model = std::env::var("SOMNUS_LLM_MODEL")
            .ok()
            .filter(|s| !s.is_empty())?;
        let budget = |k: &str, d: u64| match std::env::var(k) {
            Ok(v) if v == "none" => None,
            Ok(v) => v.parse().ok().or(Some(d)),
            Err(_) => Some(d),
        };
        Some(LlmConfig {
            base_url,
            model,
            api_key: std::env::var("SOMNUS_LLM_KEY")
                .ok()
                .filter(|s| !s.is_empty()),
            max_rounds: 6,
            token_budget: budget("SOMNUS_LLM_TOKEN_BUDGET", DEFAULT_TOKEN_BUDGET),
            output_budget: budget("SOMNUS_LLM_OUTPUT_BUDGET", DEFAULT_OUTPUT_BUDGET),
        })
    }

    fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_string()
        } else {
            format!("{base}/chat/completions")
        }
    }
}

pub struct Llm {
    cfg: LlmConfig,
    captured: Vec<CapturedWrite>,
    fallback: Heuristic,
    /// Calls answered by the model / by the fallback.
    pub answered: usize,
    pub fell_back: usize,
    pub usage: Usage,
}

/// The rules of the sleep-mode instructions one judgement needs: who the
/// maintainer is, its principles, and the phase the judgement belongs to
/// (not the whole document for every call).
pub fn rules_for(phase: u8) -> String {
    let section = |start: &str| -> &str {
        let Some(i) = INSTRUCTIONS.find(start) else {
            return "";
        };
        let rest = &INSTRUCTIONS[i..];
        let end = rest[start.len()..]
            .find("\n## ")
            .into_iter()
            .chain(rest[start.len()..].find("\n### "))
            .min()
            .map(|e| e + start.len())
            .unwrap_or(rest.len());
        &rest[..end]
    };
    let mut out = String::new();
    for s in [
        "## 🧠 Identity & Operating Objective",
        "## 🎯 Core Principles",
        &format!("### Phase {phase}:"),
        "### Protected Entities",
    ] {
        let t = section(s);
        if !t.is_empty() {
            out.push_str(t.trim_end());
            out.push_str("\n\n");
        }
    }
    out
}

impl Llm {
    pub fn new(cfg: LlmConfig) -> Llm {
        Llm {
            cfg,
            captured: Vec::new(),
            fallback: Heuristic,
            answered: 0,
            fell_back: 0,
            usage: Usage::default(),
        }
    }

    /// Why no more calls may be made this cycle, if a budget is spent.
    fn spent(&self) -> Option<String> {
        let total = self.usage.prompt_tokens + self.usage.completion_tokens;
        if let Some(b) = self.cfg.token_budget
            && total >= b
        {
            return Some(format!("the cycle's token budget ({b}) is spent ({total})"));
        }
        if let Some(b) = self.cfg.output_budget
            && self.usage.completion_tokens >= b
        {
            return Some(format!(
                "the cycle's output budget ({b} completion tokens) is spent ({})",
                self.usage.completion_tokens
            ));
        }
        None
    }

    fn tool() -> Value {
        json!({
            "type": "function",
            "function": {
                "name": "execute_kip",
                "description": "Run a KIP command against the memory. FIND, DESCRIBE and SEARCH run; UPSERT, UPDATE, MERGE and DELETE are captured for human review, not applied.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "description": "One KIP command."},
                        "parameters": {"type": "object", "description": "Values for :placeholders."},
                        "reason": {"type": "string", "description": "Why (shown to the reviewer for writes)."}
                    },
                    "required": ["command"]
                }
            }
        })
    }

    fn post(&self, body: &Value) -> KipResult<Value> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(300)))
            .build()
            .into();
        let mut req = agent.post(&self.cfg.endpoint());
        if let Some(k) = &self.cfg.api_key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let fail = |e: String| {
            KipError::new(
                ErrorCode::InternalError,
                format!("LLM {}: {e}", self.cfg.endpoint()),
            )
            .with_hint("Check SOMNUS_LLM_URL / SOMNUS_LLM_MODEL, or run with --reasoner heuristic.")
        };
        let mut resp = req.send_json(body).map_err(|e| fail(e.to_string()))?;
        resp.body_mut().read_json().map_err(|e| fail(e.to_string()))
    }

    /// One judgement conversation; returns the model's JSON answer.
    fn ask(
        &mut self,
        look: &mut dyn Lookup,
        task: &str,
        input: Value,
        answer_shape: &str,
    ) -> KipResult<Value> {
        let phase: u8 = task
            .strip_prefix("Phase ")
            .and_then(|t| {
                t.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .ok()
            })
            .unwrap_or(0);
        let mut messages = vec![
            json!({"role": "system", "content": format!("{}---\nYou are called for one judgement at a time. Use the execute_kip tool to read the memory when you need context. Writes you issue are captured for a human to approve. Reply with one JSON object only, no prose.", rules_for(phase))}),
            json!({"role": "user", "content": format!("{task}\n\nInput:\n{}\n\nAnswer with JSON of this shape:\n{answer_shape}", serde_json::to_string_pretty(&input).unwrap_or_default())}),
        ];
        for _ in 0..self.cfg.max_rounds {
            if let Some(why) = self.spent() {
                return Err(KipError::internal(why));
            }
            let body = json!({
                "model": self.cfg.model,
                "messages": messages,
                "tools": [Self::tool()],
                "temperature": 0,
            });
            let v = self.post(&body)?;
            let tokens = |k: &str| {
                v.pointer(&format!("/usage/{k}"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            let call = Call {
                judgement: task.lines().next().unwrap_or("").chars().take(80).collect(),
                prompt_tokens: tokens("prompt_tokens"),
                completion_tokens: tokens("completion_tokens"),
            };
            self.usage.prompt_tokens += call.prompt_tokens;
            self.usage.completion_tokens += call.completion_tokens;
            self.usage.calls.push(call);
            let msg = v
                .pointer("/choices/0/message")
                .cloned()
                .ok_or_else(|| KipError::internal("the LLM answer has no choices[0].message"))?;
            let calls = msg
                .get("tool_calls")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if calls.is_empty() {
                let text = msg.get("content").and_then(Value::as_str).unwrap_or("");
                return parse_json(text).ok_or_else(|| {
                    KipError::internal(format!(
                        "the LLM answer is not JSON: {}",
                        text.chars().take(200).collect::<String>()
                    ))
                });
            }
            messages.push(msg.clone());
            for c in calls {
                let id = c
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let args: Value = c
                    .pointer("/function/arguments")
                    .and_then(|a| match a {
                        Value::String(s) => serde_json::from_str(s).ok(),
                        other => Some(other.clone()),
                    })
                    .unwrap_or(Value::Null);
                let command = args
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let params: Map<String, Value> = args
                    .get("parameters")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let out = match kip::parse(&command, &params) {
                    Err(e) => json!({"error": e.to_json()}),
                    Ok(cmd) if cmd.is_write() => {
                        self.captured.push(CapturedWrite {
                            command: command.clone(),
                            parameters: params,
                            rationale: args
                                .get("reason")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                                .unwrap_or_else(|| {
                                    format!(
                                        "proposed by the LLM reasoner ({}) during: {task}",
                                        self.cfg.model
                                    )
                                }),
                        });
                        json!({"captured": true, "note": "queued for human approval; not applied"})
                    }
                    Ok(_) => look.read(&command, &params),
                };
                messages
                    .push(json!({"role": "tool", "tool_call_id": id, "content": out.to_string()}));
            }
        }
        Err(KipError::internal(format!(
            "the LLM used all {} tool rounds without answering",
            self.cfg.max_rounds
        )))
    }

    /// Asks the model; on failure, answers with the heuristic and marks why.
    #[allow(clippy::too_many_arguments)]
    fn judge<T>(
        &mut self,
        look: &mut dyn Lookup,
        task: &str,
        input: Value,
        shape: &str,
        map: impl Fn(&Value) -> Option<T>,
        fallback: impl FnOnce(&mut Heuristic, &mut dyn Lookup) -> KipResult<T>,
        mark: impl Fn(&mut T, &str),
    ) -> KipResult<T> {
        let err = match self.ask(look, task, input, shape) {
            Ok(v) => match map(&v) {
                Some(t) => {
                    self.answered += 1;
                    return Ok(t);
                }
                None => format!(
                    "unusable answer {}",
                    v.to_string().chars().take(120).collect::<String>()
                ),
            },
            Err(e) => e.message,
        };
        if err.contains("budget") {
            self.usage.over_budget += 1;
        }
        self.fell_back += 1;
        let mut t = fallback(&mut self.fallback, look)?;
        mark(&mut t, &err);
        Ok(t)
    }
}

fn parse_json(text: &str) -> Option<Value> {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .map(|x| x.trim_end_matches("```"))
        .unwrap_or(t)
        .trim();
    serde_json::from_str(t).ok().or_else(|| {
        let (a, b) = (t.find('{')?, t.rfind('}')?);
        serde_json::from_str(&t[a..=b]).ok()
    })
}

fn arr<'a>(v: &'a Value, k: &str) -> Option<&'a Vec<Value>> {
    v.get(k).and_then(Value::as_array)
}

fn note(r: &mut String, err: &str) {
    if err.contains("budget") {
        r.push_str(&format!(" [heuristic: {err}]"));
    } else {
        r.push_str(&format!(
            " [heuristic: the model's answer was unusable: {err}]"
        ));
    }
}

impl Reasoner for Llm {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn salience(&mut self, look: &mut dyn Lookup, events: &[EventView]) -> KipResult<Vec<Scored>> {
        let n = events.len();
        let ev = events.to_vec();
        self.judge(
            look,
            "Phase 1B: score the salience (1-100) of each Event.",
            json!({"events": events.iter().map(|e| json!({"name": e.name, "class": e.class, "summary": e.summary, "start": e.start})).collect::<Vec<_>>()}),
            r#"{"scores": [{"name": "<event name>", "score": 0-100, "basis": "<why>"}]}"#,
            |v| {
                let s: Vec<Scored> = arr(v, "scores")?
                    .iter()
                    .filter_map(|x| {
                        Some(Scored {
                            name: x.get("name")?.as_str()?.to_string(),
                            score: x.get("score")?.as_f64()?.clamp(1.0, 100.0),
                            basis: x.get("basis").and_then(Value::as_str).unwrap_or("llm").to_string(),
                        })
                    })
                    .collect();
                (s.len() == n).then_some(s)
            },
            move |h, l| h.salience(l, &ev),
            |t, e| {
                for s in t.iter_mut() {
                    note(&mut s.basis, e);
                }
            },
        )
    }

    fn classify(
        &mut self,
        look: &mut dyn Lookup,
        items: &[ItemView],
        domains: &[DomainView],
    ) -> KipResult<Vec<Classification>> {
        let (it, ds) = (items.to_vec(), domains.to_vec());
        let names: Vec<String> = domains.iter().map(|d| d.name.clone()).collect();
        let n = items.len();
        self.judge(
            look,
            "Phases 3-4: choose the best existing Domain for each item, or null when unclear.",
            json!({"items": items, "domains": domains.iter().map(|d| json!({"name": d.name, "description": d.description})).collect::<Vec<_>>()}),
            r#"{"classifications": [{"item": "<name>", "domain": "<domain name or null>", "confidence": 0-1, "rationale": "<why>"}]}"#,
            |v| {
                let c: Vec<Classification> = arr(v, "classifications")?
                    .iter()
                    .filter_map(|x| {
                        let domain = x.get("domain").and_then(Value::as_str).map(str::to_string);
                        if domain.as_ref().is_some_and(|d| !names.contains(d)) {
                            return None;
                        }
                        Some(Classification {
                            item: x.get("item")?.as_str()?.to_string(),
                            domain,
                            confidence: x.get("confidence").and_then(Value::as_f64).unwrap_or(0.7).clamp(0.0, 1.0),
                            rationale: x.get("rationale").and_then(Value::as_str).unwrap_or("llm").to_string(),
                        })
                    })
                    .collect();
                (c.len() == n).then_some(c)
            },
            move |h, l| h.classify(l, &it, &ds),
            |t, e| {
                for c in t.iter_mut() {
                    note(&mut c.rationale, e);
                }
            },
        )
    }

    fn gist(&mut self, look: &mut dyn Lookup, events: &[EventView]) -> KipResult<Vec<Gist>> {
        let ev = events.to_vec();
        let n = events.len();
        self.judge(
            look,
            "Phase 5A: for each stale Event, name the existing concepts its stable knowledge belongs to (from its linked concepts), extract stable knowledge it states that no concept holds yet (a preference, a decision, a plan, or a standing instruction someone gave: \"never restart the laptop without asking\", kept as a Preference in its own words) as new concepts, with the clause that states it as written, or archive it when nothing durable remains; what the user told the agent is never archived as holding nothing.",
            json!({"events": events}),
            r#"{"gists": [{"event": "<name>", "into": [["<type>", "<name>"]], "extracted": [{"ty": "Preference|Insight", "name": "<name>", "description": "<what the Event says>", "kind": "preference|decision|plan|instruction", "cue": "<the phrase>", "clause": "<the clause, as written>", "holder": "<Person name or null>"}], "archive": false, "rationale": "<why>"}]}"#,
            |v| {
                let g: Vec<Gist> = arr(v, "gists")?
                    .iter()
                    .filter_map(|x| serde_json::from_value(x.clone()).ok())
                    .collect();
                (g.len() == n).then_some(g)
            },
            move |h, l| h.gist(l, &ev),
            |t, e| {
                for g in t.iter_mut() {
                    note(&mut g.rationale, e);
                }
            },
        )
    }

    fn patterns(
        &mut self,
        look: &mut dyn Lookup,
        clusters: &[Cluster],
    ) -> KipResult<Vec<Option<Pattern>>> {
        let cl = clusters.to_vec();
        let n = clusters.len();
        self.judge(
            look,
            "Phase 5B: for each cluster of Events, say whether it shows a recurring pattern worth keeping (null if not): a recurring preference (a Preference), repeated decisions (a trait), a schedule (a routine) or a recurring topic (each of these an Insight).",
            json!({"clusters": clusters.iter().map(|c| json!({"holder": c.holder, "key_concepts": c.key_concepts, "events": c.events.iter().map(|e| json!({"name": e.name, "summary": e.summary, "start": e.start, "domains": e.domains})).collect::<Vec<_>>()})).collect::<Vec<_>>()}),
            r#"{"patterns": [null or {"ty": "Insight|Preference", "kind": "preference|trait|routine|topic", "name": "...", "description": "...", "domain": "...", "confidence": 0-1, "rationale": "..."}]}"#,
            |v| {
                let p: Vec<Option<Pattern>> = arr(v, "patterns")?
                    .iter()
                    .map(|x| serde_json::from_value(x.clone()).ok())
                    .collect();
                (p.len() == n).then_some(p)
            },
            move |h, l| h.patterns(l, &cl),
            |t, e| {
                for p in t.iter_mut().flatten() {
                    note(&mut p.rationale, e);
                }
            },
        )
    }

    fn same_entity(
        &mut self,
        look: &mut dyn Lookup,
        pairs: &[Candidate],
    ) -> KipResult<Vec<SameJudgement>> {
        let pr = pairs.to_vec();
        let n = pairs.len();
        let judged = self.judge(
            look,
            "Phase 6: for each candidate pair (same type), decide whether they are the same entity and which to keep (a high similarity is not identity). Each pair carries the name rule that matched and its score, both descriptions, attributes and neighbours: different identifying attributes, a link between the two, or descriptions of different things mean two entities.",
            json!({"pairs": pairs}),
            r#"{"judgements": [{"same": true, "keep_a": true, "confidence": 0-1, "rationale": "..."}]}"#,
            |v| {
                let j: Vec<SameJudgement> = arr(v, "judgements")?
                    .iter()
                    .filter_map(|x| serde_json::from_value(x.clone()).ok())
                    .collect();
                (j.len() == n).then_some(j)
            },
            move |h, l| h.same_entity(l, &pr),
            |t, e| {
                for j in t.iter_mut() {
                    note(&mut j.rationale, e);
                }
            },
        )?;
        // what the graph vetoes, no answer overrides; a merge needs the
        // matcher's band too
        Ok(judged
            .into_iter()
            .zip(pairs)
            .map(|(j, p)| super::sameness::combine(j, p))
            .collect())
    }

    fn current_fact(
        &mut self,
        look: &mut dyn Lookup,
        conflicts: &[Conflict],
    ) -> KipResult<Vec<Resolution>> {
        let cf = conflicts.to_vec();
        let n = conflicts.len();
        let resolved = self.judge(
            look,
            "Phase 9: for each pair of conflicting facts, choose keep_newer, keep_older, both_valid, merge or needs_context. Each fact carries its observation time, validity, confidence, source and the source's reliability; a conflict marked immutable (a birthplace) is never keep_newer: one value is wrong.",
            json!({"conflicts": conflicts}),
            r#"{"resolutions": [{"verdict": "keep_newer", "confidence": 0-1, "rationale": "..."}]}"#,
            |v| {
                let r: Vec<Resolution> = arr(v, "resolutions")?
                    .iter()
                    .filter_map(|x| serde_json::from_value(x.clone()).ok())
                    .collect();
                (r.len() == n).then_some(r)
            },
            move |h, l| h.current_fact(l, &cf),
            |t, e| {
                for r in t.iter_mut() {
                    note(&mut r.rationale, e);
                }
            },
        )?;
        // a newer value of what cannot change is not a change
        Ok(resolved
            .into_iter()
            .zip(conflicts)
            .map(|(mut r, c)| {
                if c.immutable && r.verdict == Verdict::KeepNewer {
                    r.verdict = Verdict::NeedsContext;
                    r.confidence = r.confidence.min(0.3);
                    r.rationale = format!(
                        "{} [overruled: {} cannot change, so keep newer does not apply]",
                        r.rationale, c.predicate
                    );
                }
                r
            })
            .collect())
    }

    fn self_model(
        &mut self,
        look: &mut dyn Lookup,
        current: &Value,
        insights: &[InsightView],
    ) -> KipResult<Vec<SelfEdit>> {
        let (cur, ins) = (current.clone(), insights.to_vec());
        self.judge(
            look,
            "Phase 8: from the recent Insights, propose additions to $self's strengths, weaknesses or values, only on convergent signal.",
            json!({"self": current, "insights": insights}),
            r#"{"edits": [{"attribute": "strengths|weaknesses|values", "add": ["..."], "evidence": ["C:.."], "rationale": "..."}]}"#,
            |v| {
                Some(
                    arr(v, "edits")?
                        .iter()
                        .filter_map(|x| serde_json::from_value(x.clone()).ok())
                        .collect(),
                )
            },
            move |h, l| h.self_model(l, &cur, &ins),
            |t: &mut Vec<SelfEdit>, e| {
                for s in t.iter_mut() {
                    note(&mut s.rationale, e);
                }
            },
        )
    }

    fn usage(&self) -> Option<Value> {
        let mut v = serde_json::to_value(&self.usage).ok()?;
        v["token_budget"] = json!(self.cfg.token_budget);
        v["output_budget"] = json!(self.cfg.output_budget);
        v["answered"] = json!(self.answered);
        v["fell_back"] = json!(self.fell_back);
        Some(v)
    }

    fn captured(&mut self) -> Vec<CapturedWrite> {
        std::mem::take(&mut self.captured)
    }
}
