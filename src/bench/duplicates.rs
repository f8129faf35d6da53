//! `somnus bench --duplicates FILE`: the sleep cycle's duplicate judgement
//! on names labelled by hand elsewhere. FILE holds one JSON object a line,
//! `{"type": "Organization", "name": "AKZO NOBEL N.V.", "entity": "569309"}`
//! (names of one `entity` are one thing; the same name twice is kept
//! once). Each name becomes a concept of its type, with nothing else to go
//! on, one full cycle runs with no cap on proposals, and what it proposes
//! is scored against the labels: merges and "same or different?"
//! questions right and wrong, and how many of the joins the labels need
//! (n − 1 for an entity of n names) the right ones make.

use crate::Nexus;
use crate::review::proposals;
use crate::sleep::{self, Heuristic, Options, Scope};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

/// What the cycle proposed against the labels.
#[derive(Debug, Default)]
pub struct Scored {
    pub names: usize,
    pub entities_with_variants: usize,
    /// Joins the labels need: Σ (names of an entity − 1).
    pub needed: usize,
    /// (proposed pairs, right, wrong, joins made so far) for merges, then
    /// merges and questions together.
    pub merges: (usize, usize, usize, usize),
    pub with_questions: (usize, usize, usize, usize),
    /// Entities whose names are left in more than one piece.
    pub split: usize,
    /// Wrong pairs, for the reader (at most 20).
    pub wrong: Vec<(String, String)>,
    pub seconds: f64,
}

/// Reads the labelled names: (type, name) → entity.
pub fn read(path: &std::path::Path) -> Result<BTreeMap<(String, String), String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        let field = |k: &str| -> Result<String, String> {
            match &v[k] {
                Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err(format!("{}:{}: no \"{k}\"", path.display(), i + 1)),
            }
        };
        out.insert((field("type")?, field("name")?), field("entity")?);
    }
    if out.is_empty() {
        return Err(format!("{}: no labelled names", path.display()));
    }
    Ok(out)
}

/// Union-find over names: the joins the right pairs make.
struct Joins {
    parent: HashMap<(String, String), (String, String)>,
    made: usize,
}

impl Joins {
    fn root(&mut self, x: &(String, String)) -> (String, String) {
        let mut x = x.clone();
        while let Some(y) = self.parent.get(&x).cloned() {
            x = y;
        }
        x
    }
    fn join(&mut self, a: &(String, String), b: &(String, String)) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent.insert(ra, rb);
            self.made += 1;
        }
    }
}

/// Builds the memory, runs the cycle, scores it.
pub fn measure(labels: &BTreeMap<(String, String), String>) -> Result<Scored, String> {
    let fail = |e: crate::kip::KipError| e.message;
    let mut nx = Nexus::open_in_memory().map_err(fail)?;
    let mut types: Vec<&String> = labels.keys().map(|(t, _)| t).collect();
    types.dedup();
    for t in types {
        let o = nx.kip_with(
            r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: :t} SET ATTRIBUTES { description: "Labelled names" } } }"#,
            json!({ "t": t }),
        );
        if let crate::protocol::Outcome::Err(e) = o {
            return Err(e.message);
        }
    }
    for (t, n) in labels.keys() {
        let o = nx.kip_with(
            r#"UPSERT { CONCEPT ?c { {type: :t, name: :n} } }"#,
            json!({ "t": t, "n": n }),
        );
        if let crate::protocol::Outcome::Err(e) = o {
            return Err(format!("{t}:{n}: {}", e.message));
        }
    }
    let mut groups: HashMap<(&String, &String), usize> = HashMap::new();
    for ((t, _), e) in labels {
        *groups.entry((t, e)).or_default() += 1;
    }
    let mut s = Scored {
        names: labels.len(),
        entities_with_variants: groups.values().filter(|&&n| n > 1).count(),
        needed: groups.values().map(|n| n - 1).sum(),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let mut opts = Options::new(Scope::Full, &crate::store::now());
    opts.params.proposal_cap = 100_000;
    let rep = sleep::run(&mut nx, &opts, &mut Heuristic, None, None).map_err(fail)?;
    s.seconds = started.elapsed().as_secs_f64();
    let items = match rep.proposal {
        Some(id) => proposals::items(&nx, id).map_err(fail)?,
        None => Vec::new(),
    };
    let mut joins = Joins {
        parent: HashMap::new(),
        made: 0,
    };
    for class in ["merge", "same_or_different"] {
        let tally = if class == "merge" {
            &mut s.merges
        } else {
            s.with_questions = s.merges;
            &mut s.with_questions
        };
        for i in items.iter().filter(|i| i.class == class) {
            let text = |k: &str| i.params.get(k).and_then(Value::as_str).unwrap_or("");
            let ty = text("type").to_string();
            let keep = (ty.clone(), text("canonical_name").to_string());
            for (k, v) in &i.params {
                if !k.starts_with("duplicate_name") {
                    continue;
                }
                let dup = (ty.clone(), v.as_str().unwrap_or("").to_string());
                tally.0 += 1;
                match (labels.get(&dup), labels.get(&keep)) {
                    (Some(a), Some(b)) if a == b => {
                        tally.1 += 1;
                        joins.join(&dup, &keep);
                    }
                    _ => {
                        tally.2 += 1;
                        if s.wrong.len() < 20 {
                            s.wrong.push((dup.1.clone(), keep.1.clone()));
                        }
                    }
                }
            }
        }
        tally.3 = joins.made;
    }
    let mut pieces: HashMap<(&String, &String), std::collections::HashSet<(String, String)>> =
        HashMap::new();
    for ((t, n), e) in labels {
        let r = joins.root(&(t.clone(), n.clone()));
        pieces.entry((t, e)).or_default().insert(r);
    }
    s.split = pieces.values().filter(|p| p.len() > 1).count();
    Ok(s)
}

/// The Markdown table of a measurement.
pub fn table(title: &str, s: &Scored) -> String {
    let pct = |n: usize| {
        if s.needed == 0 {
            0.0
        } else {
            100.0 * n as f64 / s.needed as f64
        }
    };
    let mut out = format!(
        "{title}: {} names, {} entities with more than one, {} joins needed; one cycle, {:.1} s\n\n\
         | proposed | pairs | right | wrong | joins made |\n|---|---:|---:|---:|---:|\n",
        s.names, s.entities_with_variants, s.needed, s.seconds
    );
    for (label, t) in [
        ("merges", s.merges),
        ("merges and \"same or different?\"", s.with_questions),
    ] {
        out.push_str(&format!(
            "| {label} | {} | {} | {} | {} ({:.1}%) |\n",
            t.0,
            t.1,
            t.2,
            t.3,
            pct(t.3)
        ));
    }
    out.push_str(&format!(
        "\nEntities left in more than one piece: {} of {}.\n",
        s.split, s.entities_with_variants
    ));
    for (a, b) in &s.wrong {
        out.push_str(&format!("- wrong: \"{a}\" / \"{b}\"\n"));
    }
    out
}
