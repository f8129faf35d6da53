//! `somnus bench --recall`: how well SEARCH finds what an agent asks for
//! in a conversational memory. Each dialogue turn is stored as an Event
//! (named by its turn id, "D17:13"; its text, "Speaker: words", in
//! `content_summary`; its session's time in `start_time`), each question
//! is sent as an agent sends it (`SEARCH CONCEPT :q WITH TYPE "Event"
//! LIMIT 10`), and recall@k is the share of the questions' evidence turns
//! among the first k hits, by question category. A textbook BM25 over the
//! same texts (lowercased words, k1 1.2, b 0.75, no stemming, no stop
//! words) runs beside it on the same questions.
//!
//! The memory is either generated here (deterministic, shipped: see
//! [`generated`]) or read from a file in LoCoMo's layout (`--dataset`).

use crate::engine::Nexus;
use crate::protocol::Outcome;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// One dialogue turn.
#[derive(Debug, Clone)]
pub struct Turn {
    pub id: String,
    pub speaker: String,
    pub text: String,
    /// RFC 3339, the session's time.
    pub time: Option<String>,
}

/// One question and the turns that answer it.
#[derive(Debug, Clone)]
pub struct Question {
    pub text: String,
    pub category: String,
    pub evidence: Vec<String>,
}

/// One conversation: its turns and the questions asked of it.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    pub turns: Vec<Turn>,
    pub questions: Vec<Question>,
}

impl Turn {
    /// The text both retrievers see: the turn's words (the speaker is the
    /// Event's `participants`).
    pub fn document(&self) -> String {
        self.text.clone()
    }
}

/// LoCoMo's category numbers, named as its authors name them.
fn locomo_category(n: i64) -> &'static str {
    match n {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => "other",
    }
}

/// A session time as LoCoMo writes it ("1:56 pm on 8 May, 2023").
fn locomo_time(s: &str) -> Option<String> {
    let s = s.trim().to_uppercase().replace(" ON ", " ");
    chrono::NaiveDateTime::parse_from_str(&s, "%I:%M %p %d %B, %Y")
        .ok()
        .map(|t| {
            t.and_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        })
}

/// Conversations from a file in LoCoMo's layout: a list of samples, each
/// with `conversation.session_N` (turns with `speaker`, `dia_id`, `text`,
/// maybe `blip_caption`), `session_N_date_time`, and `qa` (`question`,
/// `evidence`, `category`).
pub fn locomo(path: &std::path::Path) -> Result<Vec<Conversation>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let data: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let samples = data
        .as_array()
        .ok_or_else(|| format!("{}: not a list of conversations", path.display()))?;
    let mut out = Vec::new();
    for s in samples {
        let conv = &s["conversation"];
        let mut c = Conversation::default();
        for n in 1.. {
            let Some(turns) = conv.get(format!("session_{n}")).and_then(Value::as_array) else {
                break;
            };
            let time = conv
                .get(format!("session_{n}_date_time"))
                .and_then(Value::as_str)
                .and_then(locomo_time);
            for t in turns {
                let mut text = t["text"].as_str().unwrap_or_default().to_string();
                if let Some(cap) = t.get("blip_caption").and_then(Value::as_str) {
                    text.push_str(&format!(" [shares a photo: {cap}]"));
                }
                c.turns.push(Turn {
                    id: t["dia_id"].as_str().unwrap_or_default().to_string(),
                    speaker: t["speaker"].as_str().unwrap_or_default().to_string(),
                    text,
                    time: time.clone(),
                });
            }
        }
        for q in s["qa"].as_array().into_iter().flatten() {
            let evidence: Vec<String> = q["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                // "D8:6; D9:17" is written as one entry in places
                .flat_map(|e| e.split([';', ',']).map(|x| x.trim().to_string()))
                .filter(|e| !e.is_empty())
                .collect();
            if evidence.is_empty() {
                continue;
            }
            c.questions.push(Question {
                text: q["question"].as_str().unwrap_or_default().to_string(),
                category: locomo_category(q["category"].as_i64().unwrap_or(0)).to_string(),
                evidence,
            });
        }
        out.push(c);
    }
    if out
        .iter()
        .all(|c| c.turns.is_empty() || c.questions.is_empty())
    {
        return Err(format!(
            "{}: no conversation with turns (conversation.session_N) and questions with evidence (qa) — is it in LoCoMo's layout?",
            path.display()
        ));
    }
    Ok(out)
}

/// What one speaker tells in a turn, and how a later question asks for it:
/// (statement, question). `{a}` is the speaker, `{o}` the other.
/// Statements and questions use different forms of the same words (a
/// plural for a singular, a past for a gerund), as people do.
const FACTS: &[(&str, &str)] = &[
    (
        "We went camping by the lake last weekend, the kids loved the tents.",
        "Where did {a} camp with the kids?",
    ),
    (
        "I volunteered at the animal shelter on Saturday, walking the dogs.",
        "Which shelters has {a} been volunteering at?",
    ),
    (
        "I finally joined a pottery class downtown, my first bowl cracked.",
        "What class did {a} join?",
    ),
    (
        "My sister is getting married in Lisbon in the spring.",
        "Where is the wedding of {a}'s sister?",
    ),
    (
        "I started running again, five kilometres every morning before work.",
        "How far does {a} run in the mornings?",
    ),
    (
        "We adopted a grey cat from the rescue centre, we named her Pebble.",
        "What is the name of the cat {a} adopted?",
    ),
    (
        "I have been painting sunsets with watercolours on the balcony.",
        "What does {a} paint?",
    ),
    (
        "The interview for the nursing job went well, they call back Friday.",
        "Which job did {a} interview for?",
    ),
    (
        "I read two novels by Ursula Le Guin on the train this month.",
        "Which author's novels did {a} read?",
    ),
    (
        "My grandmother taught me her recipe for plum dumplings.",
        "Whose recipes did {a} learn?",
    ),
    (
        "I'm learning to play the cello, the lessons are on Tuesdays.",
        "Which instrument is {a} learning?",
    ),
    (
        "We hiked up to the old fortress and had a picnic at the top.",
        "Where did {a} go hiking?",
    ),
    (
        "I was promoted to team lead at the bakery cooperative.",
        "What promotion did {a} get?",
    ),
    (
        "My brother moved to Osaka to teach English at a high school.",
        "Where did {a}'s brother move to?",
    ),
    (
        "I signed up for the charity swim across the bay in August.",
        "What charity event did {a} sign up for?",
    ),
    (
        "The garden finally has tomatoes, the basil keeps dying though.",
        "What vegetables are growing in {a}'s garden?",
    ),
];

/// Small talk between the facts: the text most turns of a real
/// conversation hold.
const FILLER: &[&str] = &[
    "That sounds wonderful, I'm so happy for you!",
    "Haha, I know what you mean. How was the rest of your week?",
    "Work has been busy, but I'm trying to keep a good balance.",
    "Thanks for asking, {o}! It means a lot.",
    "Oh wow, tell me more about it next time.",
    "I hope the weather stays nice for the weekend.",
    "You always know how to cheer me up.",
    "Same here, the kids keep me on my toes.",
    "I saw a movie about the lake district, it reminded me of you.",
    "Let's catch up again soon, take care!",
];

const PEOPLE: &[&str] = &[
    "Amara", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jonas",
];

/// `n` generated conversations, each between two people over ten sessions
/// of twenty turns: every fact told once in a session, each followed by
/// its question, plus a temporal question naming the session's date and a
/// two-hop question pairing two of a speaker's facts.
pub fn generated(n: usize) -> Vec<Conversation> {
    let mut rng = super::Lcg(0x5eed_1234_abcd_0001);
    let base = chrono::DateTime::parse_from_rfc3339("2025-01-06T18:00:00Z").expect("date");
    let mut out = Vec::new();
    for ci in 0..n {
        let (a, b) = (
            PEOPLE[(2 * ci) % PEOPLE.len()],
            PEOPLE[(2 * ci + 1) % PEOPLE.len()],
        );
        let mut c = Conversation::default();
        let mut told: HashMap<&str, Vec<String>> = HashMap::new();
        let mut order: Vec<usize> = (0..FACTS.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        for session in 1..=10 {
            let when = base + chrono::Duration::days(9 * (session as i64 - 1) + ci as i64);
            let time = when.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            let fact_slots = [3usize, 11];
            for t in 1..=20 {
                let speaker = if t % 2 == 1 { a } else { b };
                let other = if speaker == a { b } else { a };
                let id = format!("D{session}:{t}");
                let fact = fact_slots
                    .iter()
                    .position(|&s| s == t || s + 1 == t)
                    .map(|slot| order[((session - 1) * 2 + slot) % order.len()]);
                let text = match fact {
                    Some(f) if (session * 2 + t) % 3 != 0 => {
                        let (said, asked) = FACTS[f];
                        c.questions.push(Question {
                            text: asked.replace("{a}", speaker),
                            category: "single-hop".into(),
                            evidence: vec![id.clone()],
                        });
                        told.entry(speaker).or_default().push(id.clone());
                        c.questions.push(Question {
                            text: format!(
                                "What did {speaker} tell {other} on {}?",
                                when.format("%-d %B %Y")
                            ),
                            category: "temporal".into(),
                            evidence: vec![id.clone()],
                        });
                        said.to_string()
                    }
                    _ => FILLER[(rng.next() % FILLER.len() as u64) as usize].replace("{o}", other),
                };
                c.turns.push(Turn {
                    id,
                    speaker: speaker.to_string(),
                    text,
                    time: Some(time.clone()),
                });
            }
        }
        // two-hop: two things one speaker told, asked together
        for (who, ids) in &told {
            for pair in ids.chunks(2).filter(|p| p.len() == 2) {
                let q = |id: &String| {
                    c.questions
                        .iter()
                        .find(|q| q.category == "single-hop" && q.evidence[0] == *id)
                        .map(|q| q.text.trim_end_matches('?').to_string())
                        .unwrap_or_default()
                };
                let (q1, q2) = (q(&pair[0]), q(&pair[1]));
                c.questions.push(Question {
                    text: format!("{q1}, and {}?", q2.replacen(who, "they", 1).to_lowercase()),
                    category: "multi-hop".into(),
                    evidence: pair.to_vec(),
                });
            }
        }
        out.push(c);
    }
    out
}

/// Textbook Okapi BM25 (k1 1.2, b 0.75, Lucene's IDF) over lowercased
/// words: the baseline.
pub struct Bm25 {
    docs: Vec<HashMap<String, u32>>,
    lens: Vec<f64>,
    avg: f64,
    df: HashMap<String, u32>,
}

fn plain_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Bm25 {
    pub fn new(texts: &[String]) -> Bm25 {
        let mut docs = Vec::new();
        let mut lens = Vec::new();
        let mut df: HashMap<String, u32> = HashMap::new();
        for t in texts {
            let ws = plain_words(t);
            lens.push(ws.len() as f64);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for w in ws {
                *tf.entry(w).or_default() += 1;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1;
            }
            docs.push(tf);
        }
        let avg = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        Bm25 {
            docs,
            lens,
            avg,
            df,
        }
    }

    /// Document indices, best first.
    pub fn top(&self, query: &str, k: usize) -> Vec<usize> {
        let (k1, b) = (1.2, 0.75);
        let n = self.docs.len() as f64;
        let terms: HashSet<String> = plain_words(query).into_iter().collect();
        let mut scored: Vec<(f64, usize)> = Vec::new();
        for (i, d) in self.docs.iter().enumerate() {
            let mut s = 0.0;
            for t in &terms {
                if let Some(&f) = d.get(t) {
                    let df = self.df[t] as f64;
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    let f = f as f64;
                    s += idf * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * self.lens[i] / self.avg));
                }
            }
            if s > 0.0 {
                scored.push((s, i));
            }
        }
        scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        scored.into_iter().take(k).map(|(_, i)| i).collect()
    }
}

/// Found and asked-for evidence turns, per category, for one retriever.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub questions: usize,
    pub evidence: usize,
    pub at5: usize,
    pub at10: usize,
}

impl Tally {
    fn add(&mut self, evidence: &[String], ranked: &[String]) {
        self.questions += 1;
        self.evidence += evidence.len();
        let found = |k: usize| {
            evidence
                .iter()
                .filter(|e| ranked.iter().take(k).any(|r| r == *e))
                .count()
        };
        self.at5 += found(5);
        self.at10 += found(10);
    }
    pub fn recall5(&self) -> f64 {
        self.at5 as f64 / self.evidence.max(1) as f64
    }
    pub fn recall10(&self) -> f64 {
        self.at10 as f64 / self.evidence.max(1) as f64
    }
}

/// The retrievers compared, in the table's order: SEARCH by keyword,
/// by meaning and fused (the last two only with a model), and the BM25
/// baseline.
pub const RETRIEVERS: [&str; 4] = ["keyword", "semantic", "hybrid", "BM25"];

/// Per category (and "all"), one tally per retriever of `RETRIEVERS`
/// (semantic and hybrid empty without a model); the median time of one
/// keyword and of one hybrid SEARCH, of storing one turn and of embedding
/// one; and the model's name.
pub struct Results {
    pub rows: Vec<(String, [Tally; 4])>,
    pub search: std::time::Duration,
    pub hybrid_search: std::time::Duration,
    pub store: std::time::Duration,
    pub embed: std::time::Duration,
    pub model: Option<String>,
}

/// Stores each conversation in a fresh in-memory memory and asks its
/// questions of SEARCH (by keyword; with `model`, also by meaning and
/// fused) and of the baseline.
pub fn measure(
    convs: &[Conversation],
    model: Option<&crate::engine::embed::EmbeddingConfig>,
) -> Result<Results, String> {
    let mut by: HashMap<String, [Tally; 4]> = HashMap::new();
    let mut searches = Vec::new();
    let mut hybrid_searches = Vec::new();
    let mut stores = Vec::new();
    let mut embeds = Vec::new();
    for c in convs {
        let mut nx = Nexus::open_in_memory().map_err(|e| e.message)?;
        nx.set_embedder(model.cloned());
        for chunk in c.turns.chunks(200) {
            let t0 = std::time::Instant::now();
            let mut cmd = String::from("UPSERT {");
            let mut params = serde_json::Map::new();
            for (i, t) in chunk.iter().enumerate() {
                cmd.push_str(&format!(
                    " CONCEPT ?t{i} {{ {{type: \"Event\", name: :n{i}}} SET ATTRIBUTES {{ event_class: \"Conversation\", content_summary: :s{i}, start_time: :w{i}, participants: [:p{i}] }} }}"
                ));
                params.insert(format!("n{i}"), json!(t.id));
                params.insert(format!("s{i}"), json!(t.document()));
                params.insert(format!("w{i}"), json!(t.time));
                params.insert(format!("p{i}"), json!(t.speaker));
            }
            cmd.push_str(" } WITH METADATA { source: \"bench\", author: \"$self\" }");
            if let Outcome::Err(e) = nx.kip_with(&cmd, Value::Object(params)) {
                return Err(format!("{} {}", e.code, e.message));
            }
            stores.push(t0.elapsed() / chunk.len() as u32);
        }
        if model.is_some() {
            let t0 = std::time::Instant::now();
            let n = nx.sync_embeddings().map_err(|e| e.message)?;
            embeds.push(t0.elapsed() / n.max(1) as u32);
        }
        let texts: Vec<String> = c.turns.iter().map(Turn::document).collect();
        let bm25 = Bm25::new(&texts);
        let modes: &[&str] = if model.is_some() {
            &["keyword", "semantic", "hybrid"]
        } else {
            &["keyword"]
        };
        for q in &c.questions {
            let mut ranked: [Option<Vec<String>>; 4] = Default::default();
            for (m, mode) in modes.iter().enumerate() {
                let t0 = std::time::Instant::now();
                let answer = nx.kip_with(
                    &format!("SEARCH CONCEPT :q WITH TYPE \"Event\" MODE \"{mode}\" LIMIT 10"),
                    json!({ "q": q.text }),
                );
                match *mode {
                    "keyword" => searches.push(t0.elapsed()),
                    "hybrid" => hybrid_searches.push(t0.elapsed()),
                    _ => {}
                }
                ranked[m] = Some(match answer {
                    Outcome::Ok { result, .. } => result
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v["name"].as_str().map(str::to_string))
                        .collect::<Vec<_>>(),
                    Outcome::Err(e) => return Err(format!("{}: {} {}", q.text, e.code, e.message)),
                });
            }
            ranked[3] = Some(
                bm25.top(&q.text, 10)
                    .into_iter()
                    .map(|i| c.turns[i].id.clone())
                    .collect(),
            );
            let digits = if q.text.chars().any(|c| c.is_ascii_digit()) {
                "with a number"
            } else {
                ""
            };
            for cat in [q.category.as_str(), digits, "all"] {
                if cat.is_empty() {
                    continue;
                }
                let e = by.entry(cat.to_string()).or_default();
                for (t, r) in e.iter_mut().zip(&ranked) {
                    if let Some(r) = r {
                        t.add(&q.evidence, r);
                    }
                }
            }
        }
    }
    let mut out: Vec<(String, [Tally; 4])> = by.into_iter().collect();
    let rank = |c: &str| match c {
        "all" => 2,
        "with a number" => 1,
        _ => 0,
    };
    out.sort_by(|x, y| rank(&x.0).cmp(&rank(&y.0)).then(x.0.cmp(&y.0)));
    let median = |mut v: Vec<std::time::Duration>| {
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    };
    Ok(Results {
        rows: out,
        search: median(searches),
        hybrid_search: median(hybrid_searches),
        store: median(stores),
        embed: median(embeds),
        model: model.map(|m| m.describe()),
    })
}

/// The results as a Markdown table: recall@5 and @10 of each retriever,
/// and keyword SEARCH's and hybrid SEARCH's ratio to BM25 at @5.
pub fn table(title: &str, r: &Results) -> String {
    let with_model = r.model.is_some();
    let shown: Vec<usize> = if with_model {
        vec![0, 1, 2, 3]
    } else {
        vec![0, 3]
    };
    let mut s = format!("{title}\n\n| questions | n | evidence |");
    for k in [5, 10] {
        for &i in &shown {
            s.push_str(&format!(" {} @{k} |", RETRIEVERS[i]));
        }
    }
    s.push_str(" keyword ÷ BM25 @5 |");
    if with_model {
        s.push_str(" hybrid ÷ BM25 @5 |");
    }
    s.push_str("\n|---|---:|---:|");
    let cols = shown.len() * 2 + if with_model { 2 } else { 1 };
    s.push_str(&"---:|".repeat(cols));
    s.push('\n');
    let ratio = |a: &Tally, b: &Tally| {
        if b.at5 == 0 {
            "—".to_string()
        } else {
            format!("{:.2}×", a.recall5() / b.recall5())
        }
    };
    for (cat, t) in &r.rows {
        s.push_str(&format!(
            "| {cat} | {} | {} |",
            t[0].questions, t[0].evidence
        ));
        for &i in &shown {
            s.push_str(&format!(" {:.3} |", t[i].recall5()));
        }
        for &i in &shown {
            s.push_str(&format!(" {:.3} |", t[i].recall10()));
        }
        s.push_str(&format!(" {} |", ratio(&t[0], &t[3])));
        if with_model {
            s.push_str(&format!(" {} |", ratio(&t[2], &t[3])));
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "\nOne keyword SEARCH: {:.2} ms (median); storing one turn: {:.0} µs (median, in batches of 200).\n",
        r.search.as_secs_f64() * 1e3,
        r.store.as_secs_f64() * 1e6
    ));
    match &r.model {
        Some(m) => s.push_str(&format!(
            "Model: {m}. One hybrid SEARCH: {:.2} ms (median, the question embedded); embedding one turn: {:.2} ms (median).\n",
            r.hybrid_search.as_secs_f64() * 1e3,
            r.embed.as_secs_f64() * 1e3
        )),
        None => s.push_str(&format!(
            "No embedding model: keyword and BM25 only ({}).\n",
            crate::engine::search::NO_MODEL
        )),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locomo_times_are_read() {
        assert_eq!(
            locomo_time("1:56 pm on 8 May, 2023").as_deref(),
            Some("2023-05-08T13:56:00Z")
        );
    }

    #[test]
    fn the_baseline_ranks_the_matching_text_first() {
        let b = Bm25::new(&["a cat sat".into(), "the dog ran".into(), "dog dog".into()]);
        assert_eq!(b.top("dog", 1), vec![2]);
    }
}
