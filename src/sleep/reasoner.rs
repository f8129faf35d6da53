//! The judgement calls of a sleep cycle, behind one trait: how salient an
//! Event is, which domain an item belongs to, what an Event teaches, which
//! recurring pattern is worth a concept, whether two nodes are one, which
//! of two facts is current, and what the self-model should absorb. The
//! phases find the candidates; a reasoner judges them.
//!
//! [`Heuristic`] works offline and deterministically; the LLM reasoner
//! (`super::llm`) asks any OpenAI-compatible chat model.

pub use super::extraction::*;
pub use super::matcher::compare::Candidate;
use super::sameness;
use super::similarity;
pub use super::views::*;
use crate::kip::KipResult;
use serde_json::Value;

/// Read-only access to the memory for a reasoner that wants to look
/// around (the LLM's `execute_kip` tool).
pub trait Lookup {
    fn read(&mut self, command: &str, parameters: &serde_json::Map<String, Value>) -> Value;
}

pub trait Reasoner: Send {
    fn name(&self) -> &'static str;
    fn salience(&mut self, look: &mut dyn Lookup, events: &[EventView]) -> KipResult<Vec<Scored>>;
    fn classify(
        &mut self,
        look: &mut dyn Lookup,
        items: &[ItemView],
        domains: &[DomainView],
    ) -> KipResult<Vec<Classification>>;
    fn gist(&mut self, look: &mut dyn Lookup, events: &[EventView]) -> KipResult<Vec<Gist>>;
    fn patterns(
        &mut self,
        look: &mut dyn Lookup,
        clusters: &[Cluster],
    ) -> KipResult<Vec<Option<Pattern>>>;
    fn same_entity(
        &mut self,
        look: &mut dyn Lookup,
        pairs: &[Candidate],
    ) -> KipResult<Vec<SameJudgement>>;
    fn current_fact(
        &mut self,
        look: &mut dyn Lookup,
        conflicts: &[Conflict],
    ) -> KipResult<Vec<Resolution>>;
    fn self_model(
        &mut self,
        look: &mut dyn Lookup,
        current: &Value,
        insights: &[InsightView],
    ) -> KipResult<Vec<SelfEdit>>;
    /// What the reasoner's calls cost this cycle (an LLM's tokens), if
    /// anything.
    fn usage(&self) -> Option<Value> {
        None
    }
    /// Writes the reasoner asked for on its own, taken once at the end.
    fn captured(&mut self) -> Vec<CapturedWrite> {
        Vec::new()
    }
}

/// Offline, deterministic judgement.
#[derive(Debug, Default)]
pub struct Heuristic;

/// Salience cues (sleep-mode 1B bands), strongest first, in English,
/// Chinese, Japanese, French, German, Spanish, Portuguese, Italian and
/// Russian: an Event is never scored
/// low for the language it is written in. Matched as substrings of the
/// lower-cased text (CJK needs no word boundaries for a cue).
const CUES: &[(&[&str], f64, &str)] = &[
    (
        &[
            "actually",
            "correction",
            "corrected",
            "wrong",
            "mistake",
            "其实",
            "纠正",
            "更正",
            "错了",
            "搞错",
            "訂正",
            "間違",
            "en fait",
            "erreur",
            "eigentlich",
            "korrektur",
            "falsch",
            "fehler",
            "en realidad",
            "corrección",
            "equivoc",
            "na verdade",
            "correção",
            "corrigido",
            "errado",
            "engano",
            "in realtà",
            "correzione",
            "sbagliato",
            "errore",
            "на самом деле",
            "исправлен",
            "ошибк",
            "неправильно",
        ],
        88.0,
        "explicit correction",
    ),
    (
        &[
            "frustrat",
            "angry",
            "annoyed",
            "upset",
            "沮丧",
            "生气",
            "不满",
            "烦",
            "イライラ",
            "怒っ",
            "énervé",
            "agacé",
            "fâché",
            "wütend",
            "genervt",
            "verärgert",
            "enojad",
            "molest",
            "frustrad",
            "irritad",
            "chatead",
            "arrabbiat",
            "infastidit",
            "раздраж",
            "недовол",
        ],
        82.0,
        "frustration",
    ),
    (
        &[
            "promise",
            "committed",
            "commitment",
            "deadline",
            "due ",
            "承诺",
            "答应",
            "截止",
            "期限",
            "約束",
            "締め切り",
            "promis",
            "engagement",
            "échéance",
            "date limite",
            "versprochen",
            "versprechen",
            "frist ",
            "prometí",
            "promesa",
            "compromiso",
            "plazo",
            "fecha límite",
            "prometi",
            "promessa",
            "compromisso",
            "prazo",
            "promesso",
            "scadenza",
            "обещал",
            "обещани",
            "дедлайн",
            "срок ",
        ],
        80.0,
        "commitment",
    ),
    (
        &[
            "breakthrough",
            "finally",
            "milestone",
            "first ",
            "突破",
            "终于",
            "里程碑",
            "第一次",
            "首次",
            "ついに",
            "初めて",
            "percée",
            "enfin",
            "première fois",
            "durchbruch",
            "endlich",
            "meilenstein",
            "zum ersten mal",
            "por fin",
            "hito ",
            "primera vez",
            "finalmente",
            "primeira vez",
            "prima volta",
            "traguardo",
            "наконец",
            "впервые",
            "прорыв",
        ],
        78.0,
        "breakthrough or first",
    ),
    (
        &[
            "my name",
            "e-mail",
            "email",
            "time zone",
            "timezone",
            "birthday",
            "lives in",
            "prefer",
            "名字",
            "叫我",
            "邮箱",
            "时区",
            "生日",
            "住在",
            "喜欢",
            "偏好",
            "名前",
            "メール",
            "タイムゾーン",
            "誕生日",
            "好き",
            "je m'appelle",
            "courriel",
            "fuseau horaire",
            "anniversaire",
            "préfère",
            "zeitzone",
            "geburtstag",
            "bevorzugt",
            "ich heiße",
            "zona horaria",
            "cumpleaños",
            "prefiere",
            "prefiero",
            "me llamo",
            "correo",
            "meu nome",
            "fuso horário",
            "aniversário",
            "prefere",
            "mi chiamo",
            "fuso orario",
            "compleanno",
            "preferisce",
            "меня зовут",
            "часовой пояс",
            "день рождения",
            "предпочитает",
        ],
        75.0,
        "the user's own details or preferences",
    ),
    (
        &[
            "decided",
            "decision",
            "agreed",
            "chose",
            "switched",
            "moved",
            "plan",
            "决定",
            "同意",
            "选择",
            "改用",
            "计划",
            "打算",
            "決定",
            "決め",
            "計画",
            "予定",
            "décidé",
            "décision",
            "convenu",
            "choisi",
            "prévu",
            "entschieden",
            "entscheidung",
            "vereinbart",
            "gewählt",
            "geplant",
            "decidí",
            "decidimos",
            "decisión",
            "acordamos",
            "elegí",
            "decidi",
            "decisão",
            "escolhi",
            "combinamos",
            "ho deciso",
            "abbiamo deciso",
            "decisione",
            "решил",
            "решение",
            "договорились",
        ],
        68.0,
        "decision or plan",
    ),
    (
        &[
            "new ",
            "discovered",
            "learned",
            "noticed",
            "investigat",
            "debugg",
            "fixed",
            "发现",
            "学到",
            "注意到",
            "修复",
            "调试",
            "新的",
            "発見",
            "学ん",
            "気づ",
            "修正",
            "découvert",
            "appris",
            "remarqué",
            "corrigé",
            "nouveau",
            "nouvelle",
            "entdeckt",
            "gelernt",
            "bemerkt",
            "behoben",
            "descubrí",
            "aprendí",
            "arreglé",
            "nuevo",
            "nueva",
            "descobri",
            "aprendi",
            "corrigi",
            "novo ",
            "nova ",
            "scoperto",
            "imparato",
            "risolto",
            "nuovo",
            "nuova",
            "обнаружил",
            "узнал",
            "исправил",
            "новый",
            "новая",
            "новое",
        ],
        50.0,
        "novel information",
    ),
    (
        &[
            "status",
            "hello",
            "thanks",
            "greeting",
            "check-in",
            "routine",
            "心跳",
            "问候",
            "谢谢",
            "例行",
            "挨拶",
            "ありがとう",
            "定期",
            "bonjour",
            "merci",
            "hallo",
            "danke",
            "hola",
            "gracias",
            "rutina",
            "olá",
            "obrigad",
            "rotina",
            "ciao",
            "grazie",
            "привет",
            "спасибо",
        ],
        15.0,
        "routine",
    ),
];

/// Whether an Event of this class is a transient record (a tool call's
/// log): archived with nothing extracted, it may expire; any other Event
/// archived so is the only copy of what it says and is kept.
pub fn is_transient_class(class: &str) -> bool {
    class_base(class).0 < 10.0
}

fn class_base(class: &str) -> (f64, &'static str) {
    match class {
        "SelfReflection" | "GrowthMilestone" => (72.0, "self-relevant event class"),
        "Decision" => (66.0, "decision event class"),
        "ToolUse" | "ToolCall" => (8.0, "transient tool call"),
        "Conversation" => (35.0, "conversation"),
        _ => (30.0, "default"),
    }
}

/// When a fact was observed, as an instant (offsets count).
fn observed(f: &FactView) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    f.observed_at.as_deref().and_then(super::clock::instant)
}

/// A fact's weight as evidence: its confidence (0.8 when unstated) times
/// its source's reliability (1 when unstated).
fn weight(f: &FactView) -> f64 {
    f.confidence.unwrap_or(0.8) * f.reliability.unwrap_or(1.0)
}

/// Two facts' weights differ by at least this before one is trusted over
/// the other for being better sourced.
pub const RELIABILITY_MARGIN: f64 = 0.25;

/// The heuristic verdict on a conflict: an immutable value is never
/// replaced by a newer one (one of the two is wrong: the better-sourced
/// one is kept if it is clearly better, else more context is needed); a
/// newer value from a clearly less reliable source needs context; else the
/// newer observation wins; without times to order them, context.
fn verdict(c: &Conflict) -> Resolution {
    let described = |f: &FactView| {
        format!(
            "{} (observed {}, confidence {:.2}{}{})",
            f.object,
            f.observed_at.as_deref().unwrap_or("?"),
            f.confidence.unwrap_or(0.8),
            f.reliability
                .map(|r| format!(", source reliability {r:.2}"))
                .unwrap_or_default(),
            f.source
                .as_deref()
                .map(|s| format!(", from {s}"))
                .unwrap_or_default()
        )
    };
    let order = match (observed(&c.a), observed(&c.b)) {
        (Some(x), Some(y)) if x != y => Some(if x < y { (&c.a, &c.b) } else { (&c.b, &c.a) }),
        _ => None,
    };
    if c.immutable {
        let (strong, weak) = if weight(&c.a) >= weight(&c.b) {
            (&c.a, &c.b)
        } else {
            (&c.b, &c.a)
        };
        let older_is_strong = order.is_none_or(|(old, _)| old.link == strong.link);
        if weight(strong) - weight(weak) >= RELIABILITY_MARGIN && older_is_strong {
            return Resolution {
                verdict: Verdict::KeepOlder,
                confidence: 0.7,
                rationale: format!(
                    "{} {} cannot change, so one value is wrong: {} is better sourced than {}",
                    c.subject,
                    c.predicate,
                    described(strong),
                    described(weak)
                ),
            };
        }
        return Resolution {
            verdict: Verdict::NeedsContext,
            confidence: 0.3,
            rationale: format!(
                "{} {} cannot change, so one of {} and {} is wrong{}; which one needs a source to decide",
                c.subject,
                c.predicate,
                described(&c.a),
                described(&c.b),
                if weight(strong) - weight(weak) >= RELIABILITY_MARGIN {
                    " (the newer is better sourced, but a newer value is not a change here)"
                } else {
                    ""
                }
            ),
        };
    }
    match order {
        Some((old, new)) if weight(old) - weight(new) >= RELIABILITY_MARGIN => Resolution {
            verdict: Verdict::NeedsContext,
            confidence: 0.35,
            rationale: format!(
                "{} {}: the newer {} comes from a clearly less reliable source than {}; not adopted without more context",
                c.subject,
                c.predicate,
                described(new),
                described(old)
            ),
        },
        Some((old, new)) => Resolution {
            verdict: Verdict::KeepNewer,
            confidence: 0.8,
            rationale: format!(
                "{} {} {} replaces {}: the newer observation wins; the older is kept as history",
                c.subject,
                c.predicate,
                described(new),
                described(old)
            ),
        },
        None => Resolution {
            verdict: Verdict::NeedsContext,
            confidence: 0.3,
            rationale: format!(
                "{} {} has {} and {} with no observation times to order them",
                c.subject, c.predicate, c.a.object, c.b.object
            ),
        },
    }
}

/// The least fit that files an item: the share of its words' weight found
/// in a domain's vocabulary (its name, description and members' names and
/// descriptions), each word weighing its inverse document frequency over
/// those texts times the share of the texts holding it that are the
/// domain's; dates, times of day and statuses weigh nothing.
pub const CLASSIFY_MIN_FIT: f64 = 0.12;
/// Two domains whose fit is this close are a tie, broken by where the
/// item's linked concepts live, then by how many members are like it.
pub const CLASSIFY_TIE: f64 = 0.02;
/// A member is "like" an item at this stemmed word overlap.
pub const MEMBER_ALIKE: f64 = 0.12;
/// Without words in common with any domain, an item follows its linked
/// concepts only when at least this share of them, and two or more, live
/// in one domain.
pub const NEIGHBOUR_MAJORITY: f64 = 0.6;

/// A domain for one item: its own words first (the share of them each
/// domain's vocabulary has, words many domains use counting less), its
/// neighbours only to break a tie or when its words say nothing.
fn classify_one(it: &ItemView, domains: &[DomainView]) -> Classification {
    let text = format!("{} {}", it.name, it.text);
    // a date, a time of day or a status is in every domain's notes
    let words: std::collections::HashSet<String> = similarity::stems_of(&text)
        .into_iter()
        .filter(|w| super::topic_words::counts_for_fit(w))
        .collect();
    // each domain's name and description, and each member, is a document
    let docs: Vec<Vec<std::collections::HashSet<String>>> = domains
        .iter()
        .map(|d| {
            std::iter::once(similarity::stems_of(&format!(
                "{} {}",
                d.name, d.description
            )))
            .chain(d.member_texts.iter().map(|m| similarity::stems_of(m)))
            .collect()
        })
        .collect();
    let vocab: Vec<std::collections::HashSet<String>> = docs
        .iter()
        .map(|ds| ds.iter().flatten().cloned().collect())
        .collect();
    // a word most documents hold ("session", "agent" in a log of sessions)
    // says little of which domain an item is in: each word weighs its
    // inverse document frequency, so that an item is filed for what is
    // particular to it, and an item whose particular words no domain has
    // stays unfiled; and a domain has of that weight the share of the
    // word's documents that are its own ("one of Mira's interests", said
    // by ten hobbies in Personal and two in Health, is Personal's)
    let n_docs = docs.iter().map(Vec::len).sum::<usize>() as f64;
    let spread: std::collections::HashMap<&String, (f64, Vec<usize>)> = words
        .iter()
        .map(|w| {
            let per: Vec<usize> = docs
                .iter()
                .map(|ds| ds.iter().filter(|d| d.contains(w)).count())
                .collect();
            let df = per.iter().sum::<usize>() as f64;
            (w, ((1.0 + n_docs / (1.0 + df)).ln(), per))
        })
        .collect();
    let total: f64 = spread.values().map(|(idf, _)| idf).sum();
    let mut scored: Vec<(f64, (f64, usize), &DomainView, String)> = domains
        .iter()
        .zip(&vocab)
        .enumerate()
        .map(|(k, (d, v))| {
            let known: Vec<&String> = words.iter().filter(|w| v.contains(*w)).collect();
            let fit = if total <= 0.0 {
                0.0
            } else {
                known
                    .iter()
                    .map(|w| {
                        let (idf, per) = &spread[*w];
                        idf * per[k] as f64 / per.iter().sum::<usize>().max(1) as f64
                    })
                    .sum::<f64>()
                    / total
            };
            let alike = d
                .member_texts
                .iter()
                .filter(|m| similarity::overlap(&text, m) >= MEMBER_ALIKE)
                .count();
            let votes = it.neighbour_domains.iter().filter(|n| **n == d.name).count();
            let share = if it.neighbour_domains.is_empty() {
                0.0
            } else {
                votes as f64 / it.neighbour_domains.len() as f64
            };
            let mut shown: Vec<&str> = known.iter().map(|w| w.as_str()).collect();
            shown.sort();
            let why = format!(
                "{} of its {} words are in its vocabulary ({}), fit {fit:.2}; {alike} members alike; {votes} of {} linked concepts live there",
                known.len(),
                words.len(),
                shown.join(", "),
                it.neighbour_domains.len()
            );
            (fit, (share, alike), d, why)
        })
        .collect();
    scored.sort_by(|x, y| {
        y.0.partial_cmp(&x.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(y.1.partial_cmp(&x.1).unwrap_or(std::cmp::Ordering::Equal))
    });
    let Some(top) = scored.first() else {
        return Classification {
            item: it.name.clone(),
            domain: None,
            confidence: 0.5,
            rationale: "no topic domain to compare with".into(),
        };
    };
    if top.0 >= CLASSIFY_MIN_FIT {
        // a tie on words goes to the domain the item's neighbours live in,
        // then to the one with more members like it
        let mut best = top;
        for x in scored
            .iter()
            .skip(1)
            .take_while(|x| top.0 - x.0 <= CLASSIFY_TIE)
        {
            if x.1.partial_cmp(&best.1) == Some(std::cmp::Ordering::Greater) {
                best = x;
            }
        }
        return Classification {
            item: it.name.clone(),
            domain: Some(best.2.name.clone()),
            confidence: (0.5 + best.0).min(0.9),
            rationale: format!("{} fits {}: {}", it.name, best.2.name, best.3),
        };
    }
    let by_neighbours = scored
        .iter()
        .filter(|x| x.1.0 >= NEIGHBOUR_MAJORITY)
        .max_by(|x, y| {
            x.1.0
                .partial_cmp(&y.1.0)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    if let Some(n) = by_neighbours
        && it.neighbour_domains.len() >= 2
    {
        return Classification {
            item: it.name.clone(),
            domain: Some(n.2.name.clone()),
            confidence: 0.6,
            rationale: format!(
                "{} shares no words with any domain; most of its linked concepts live in {}: {}",
                it.name, n.2.name, n.3
            ),
        };
    }
    Classification {
        item: it.name.clone(),
        domain: None,
        confidence: 0.5,
        rationale: format!(
            "no clear domain: the best, {}, fits at {:.2} (at least {CLASSIFY_MIN_FIT} needed): {}",
            top.2.name, top.0, top.3
        ),
    }
}

impl Reasoner for Heuristic {
    fn name(&self) -> &'static str {
        "heuristic"
    }

    fn salience(&mut self, _: &mut dyn Lookup, events: &[EventView]) -> KipResult<Vec<Scored>> {
        Ok(events
            .iter()
            .map(|e| {
                let (base, why) = class_base(&e.class);
                let text = e.summary.to_lowercase();
                let cue = if base < 10.0 {
                    None
                } else {
                    CUES.iter()
                        .find(|(words, _, _)| words.iter().any(|w| text.contains(w)))
                };
                let (score, basis) = match cue {
                    Some((_, s, label)) => (*s, format!("cue: {label}")),
                    None => (base, format!("class: {why}")),
                };
                Scored {
                    name: e.name.clone(),
                    score,
                    basis,
                }
            })
            .collect())
    }

    fn classify(
        &mut self,
        _: &mut dyn Lookup,
        items: &[ItemView],
        domains: &[DomainView],
    ) -> KipResult<Vec<Classification>> {
        Ok(items.iter().map(|it| classify_one(it, domains)).collect())
    }

    fn gist(&mut self, _: &mut dyn Lookup, events: &[EventView]) -> KipResult<Vec<Gist>> {
        Ok(events
            .iter()
            .map(|e| {
                let into: Vec<(String, String)> = e
                    .linked
                    .iter()
                    .filter(|(t, n)| t != "Person" && t != "Event" && !n.starts_with('$'))
                    .cloned()
                    .collect();
                let transient = class_base(&e.class).0 < 10.0;
                let extracted = if transient { Vec::new() } else { extract(e) };
                if (into.is_empty() && extracted.is_empty()) || transient {
                    Gist {
                        event: e.name.clone(),
                        into: vec![],
                        archive: true,
                        rationale: if transient {
                            format!(
                                "{} is a transient {} with nothing durable to keep",
                                e.name, e.class
                            )
                        } else {
                            format!("{} names no concept its knowledge could live in", e.name)
                        },
                        extracted: Vec::new(),
                    }
                } else {
                    Gist {
                        event: e.name.clone(),
                        rationale: if into.is_empty() {
                            // nothing it names to live in: the clauses that
                            // state something (not the whole note again)
                            format!(
                                "{} says {}",
                                e.name,
                                extracted
                                    .iter()
                                    .map(|x| match x.clause.as_str() {
                                        "" => format!("{} \"{}\"", x.a_kind(), x.name),
                                        c => format!("\"{c}\" ({})", x.a_kind()),
                                    })
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        } else {
                            format!(
                                "\"{}\" is about {}",
                                e.summary,
                                into.iter()
                                    .map(|(t, n)| format!("{t}:{n}"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        },
                        into,
                        archive: false,
                        extracted,
                    }
                }
            })
            .collect())
    }

    fn patterns(
        &mut self,
        _: &mut dyn Lookup,
        clusters: &[Cluster],
    ) -> KipResult<Vec<Option<Pattern>>> {
        Ok(clusters.iter().map(super::recurrence::judge).collect())
    }

    fn same_entity(
        &mut self,
        _: &mut dyn Lookup,
        pairs: &[Candidate],
    ) -> KipResult<Vec<SameJudgement>> {
        Ok(pairs.iter().map(sameness::judge).collect())
    }

    fn current_fact(
        &mut self,
        _: &mut dyn Lookup,
        conflicts: &[Conflict],
    ) -> KipResult<Vec<Resolution>> {
        Ok(conflicts.iter().map(verdict).collect())
    }

    fn self_model(
        &mut self,
        _: &mut dyn Lookup,
        current: &Value,
        insights: &[InsightView],
    ) -> KipResult<Vec<SelfEdit>> {
        // only convergent signal: two or more Insights of one kind
        let groups: &[(&str, &[&str])] = &[
            ("weaknesses", &["mistake", "knowledge_gap"]),
            ("strengths", &["reasoning_pattern", "operational"]),
        ];
        let mut out = Vec::new();
        for (attr, classes) in groups {
            let have: Vec<String> = current
                .get(*attr)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let hits: Vec<&InsightView> = insights
                .iter()
                .filter(|i| classes.contains(&i.class.as_str()))
                .filter(|i| !have.iter().any(|h| h == &i.description))
                .collect();
            if hits.len() >= 2 {
                out.push(SelfEdit {
                    attribute: attr.to_string(),
                    add: hits.iter().map(|i| i.description.clone()).collect(),
                    evidence: hits.iter().map(|i| i.id.clone()).collect(),
                    rationale: format!(
                        "{} Insights ({}) point the same way",
                        hits.len(),
                        hits.iter()
                            .map(|i| i.name.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod salience_tests {
    use super::*;

    fn score(summary: &str) -> (f64, String) {
        let e = EventView {
            id: "C:1".into(),
            name: "e".into(),
            class: "Note".into(),
            summary: summary.into(),
            start: String::new(),
            key_concepts: vec![],
            participants: vec![],
            salience: None,
            linked: vec![],
            domains: vec![],
            expires_at: None,
        };
        let s = Heuristic
            .salience(&mut NoLookup, &[e])
            .expect("scored")
            .remove(0);
        (s.score, s.basis)
    }

    struct NoLookup;
    impl Lookup for NoLookup {
        fn read(&mut self, _: &str, _: &serde_json::Map<String, Value>) -> Value {
            Value::Null
        }
    }

    /// The same moments, in nine languages, score in the same band.
    #[test]
    fn salience_does_not_depend_on_the_language() {
        for (band, texts) in [
            (
                88.0,
                [
                    "Actually the meeting is Thursday",
                    "其实会议是周四",
                    "En fait, la réunion est jeudi",
                    "Eigentlich ist das Treffen am Donnerstag",
                ],
            ),
            (
                80.0,
                [
                    "I promise to send the report",
                    "我答应周五前发报告",
                    "J'ai promis d'envoyer le rapport",
                    "Hice una promesa: el informe",
                ],
            ),
            (
                75.0,
                [
                    "My name is Lin, time zone Asia/Shanghai",
                    "用户的时区是 Asia/Shanghai",
                    "Mon fuseau horaire est Europe/Paris",
                    "Meine Zeitzone ist Europe/Berlin",
                ],
            ),
            (
                68.0,
                [
                    "We decided to use Postgres",
                    "我们决定改用 Postgres",
                    "Nous avons décidé d'utiliser Postgres",
                    "Wir haben entschieden, Postgres zu nehmen",
                ],
            ),
        ] {
            for t in texts {
                assert_eq!(score(t).0, band, "{t}: {:?}", score(t));
            }
        }
        // Portuguese, Italian, Russian
        for (band, t) in [
            (88.0, "Na verdade a reunião é quinta"),
            (88.0, "In realtà la riunione è giovedì"),
            (88.0, "На самом деле встреча в четверг"),
            (80.0, "Prometi enviar o relatório até sexta"),
            (80.0, "Ho promesso il rapporto: scadenza venerdì"),
            (75.0, "Meu fuso horário é America/Belem"),
            (75.0, "Меня зовут Ирина"),
            (68.0, "Decidi usar Postgres"),
            (68.0, "Abbiamo deciso di usare Postgres"),
            (68.0, "Мы договорились перейти на Postgres"),
        ] {
            assert_eq!(score(t).0, band, "{t}: {:?}", score(t));
        }
    }
}
