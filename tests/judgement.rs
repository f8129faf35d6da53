//! Judgement on memories the cycle has never seen: synthetic memories from
//! seeds, each with planted defects and look-alike traps in every class
//! (duplicates, contradictions, orphans, the Unsorted inbox). A full
//! heuristic cycle must find at least 95% of the planted cases in every
//! class, over every seed together, and propose nothing it should not.

#[path = "judgement/generator.rs"]
mod generator;

use generator::Gen;
use serde_json::{Map, Value};
use somnus::protocol::{Outcome, Request};
use somnus::review::proposals;
use somnus::sleep::{self, Heuristic, Options, Scope};
use somnus::{Nexus, Response};
use std::collections::{BTreeMap, HashSet};

const NOW: &str = "2026-11-20T03:00:00Z";
/// Seeds 1..=20 by default; `SOMNUS_JUDGEMENT_SEEDS=FROM..TO` for others.
fn seeds() -> std::ops::RangeInclusive<u64> {
    std::env::var("SOMNUS_JUDGEMENT_SEEDS")
        .ok()
        .and_then(|v| {
            let (a, b) = v.split_once("..")?;
            Some(a.parse().ok()?..=b.parse().ok()?)
        })
        .unwrap_or(1..=20)
}

fn link_id(nx: &mut Nexus, s: &str, p: &str, o: &str) -> Option<String> {
    let mut params = Map::new();
    params.insert("s".into(), Value::from(s));
    params.insert("o".into(), Value::from(o));
    let req = Request::command(format!(
        r#"FIND(?l) WHERE {{ ?x {{type: "Person"}} FILTER(?x.name == :s) ?l (?x, "{p}", ?y) FILTER(?y.name == :o) }}"#
    ))
    .with_params(params);
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result
            .as_array()
            .and_then(|a| a.first())
            .and_then(|l| l.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string),
        other => panic!("{other:?}"),
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    planted: usize,
    found: usize,
    /// Of `found`, those asked about ("same or different?") rather than
    /// proposed.
    asked: usize,
    false_positives: usize,
    /// Questions about pairs that are two things: not wrong, but the
    /// operator's time.
    questions: usize,
}

/// The matcher's probability of each candidate pair of a generated memory,
/// and whether the pair is a planted duplicate.
fn calibration_points(g: &Gen, nx: &mut Nexus) -> Vec<(f64, bool)> {
    let want: HashSet<(String, String)> = g
        .planted
        .duplicates
        .iter()
        .map(|(_, a, b)| pair(a, b))
        .collect();
    sleep::cycle::scored_candidates(nx)
        .expect("candidates")
        .iter()
        .map(|c| (c.probability, want.contains(&pair(&c.a.name, &c.b.name))))
        .collect()
}

fn str_param(i: &proposals::Item, k: &str) -> String {
    i.params
        .get(k)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// One seed's tallies, and the misses and false positives in words.
/// A seed's tallies, notes, and (probability, truth) of its candidate pairs.
type Judged = (BTreeMap<&'static str, Tally>, Vec<String>, Vec<(f64, bool)>);

fn judge(seed: u64) -> Judged {
    let g = Gen::build(seed);
    let mut nx = Nexus::open_in_memory().expect("open");
    g.load(&mut nx);
    let points = calibration_points(&g, &mut nx);
    let p = &g.planted;
    // link ids of the planted and trap facts
    let mut planted_conflicts: Vec<(HashSet<String>, Vec<&'static str>, String)> = Vec::new();
    for (s, pred, a, b, wrong) in &p.contradictions {
        let x = link_id(&mut nx, s, pred, a).expect("planted link a");
        let y = link_id(&mut nx, s, pred, b).expect("planted link b");
        planted_conflicts.push((
            HashSet::from([x, y]),
            wrong.clone(),
            format!("{s} {pred} {a} / {b}"),
        ));
    }
    let rep = sleep::run(
        &mut nx,
        &Options::new(Scope::Full, NOW),
        &mut Heuristic,
        None,
        None,
    )
    .expect("cycle");
    let items = rep
        .proposal
        .map(|id| proposals::items(&nx, id).expect("items"))
        .unwrap_or_default();
    let mut t: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut notes = Vec::new();

    // duplicates
    let merges = pairs_of(&items, "merge");
    let asks = pairs_of(&items, "same_or_different");
    let want: HashSet<(String, String)> = p.duplicates.iter().map(|(_, a, b)| pair(a, b)).collect();
    let d = t.entry("duplicates").or_default();
    d.planted = want.len();
    for q in asks.difference(&want) {
        d.questions += 1;
        notes.push(format!("seed {seed}: asked about {} / {}", q.0, q.1));
    }
    for w in &want {
        if merges.contains(w) {
            d.found += 1;
        } else if asks.contains(w) {
            d.found += 1;
            d.asked += 1;
        } else {
            let why: Vec<String> = p
                .duplicates
                .iter()
                .filter(|(_, a, b)| pair(a, b) == *w)
                .flat_map(|(ty, a, _)| {
                    let Some((id, _)) = sleep::explain::resolve(&nx, &format!("{ty}:{a}")).unwrap()
                    else {
                        return Vec::new();
                    };
                    let e = sleep::explain::explain(&nx, id, NOW).unwrap();
                    e["notes"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|n| n["action"] == "not merged")
                        .map(|n| n["inputs"]["why"].to_string())
                        .collect::<Vec<_>>()
                })
                .collect();
            notes.push(format!(
                "seed {seed}: missed duplicate {} / {}{}",
                w.0,
                w.1,
                if why.is_empty() {
                    " (never a candidate)".to_string()
                } else {
                    format!(": {}", why.join("; "))
                }
            ));
        }
    }
    for m in merges.difference(&want) {
        d.false_positives += 1;
        notes.push(format!("seed {seed}: wrong merge {} / {}", m.0, m.1));
    }

    // contradictions: the pair found, with a verdict that is not wrong
    let found: Vec<(HashSet<String>, String)> = items
        .iter()
        .filter(|i| i.class == "contradiction")
        .map(|i| {
            (
                i.evidence.iter().cloned().collect(),
                i.title.rsplit("→ ").next().unwrap_or("").to_string(),
            )
        })
        .collect();
    let c = t.entry("contradictions").or_default();
    c.planted = planted_conflicts.len();
    for (links, wrong, label) in &planted_conflicts {
        match found.iter().find(|(l, _)| l == links) {
            Some((_, verdict)) if wrong.contains(&verdict.as_str()) => {
                c.false_positives += 1;
                notes.push(format!("seed {seed}: wrong verdict {verdict} on {label}"));
            }
            Some(_) => c.found += 1,
            None => notes.push(format!("seed {seed}: missed contradiction {label}")),
        }
    }
    for (links, verdict) in &found {
        if !planted_conflicts.iter().any(|(l, _, _)| l == links) {
            c.false_positives += 1;
            let title = items
                .iter()
                .find(|i| i.evidence.iter().cloned().collect::<HashSet<_>>() == *links)
                .map(|i| i.title.clone())
                .unwrap_or_default();
            notes.push(format!(
                "seed {seed}: wrong contradiction ({verdict}) {title}"
            ));
        }
    }

    // orphans and the Unsorted inbox: filed where they belong
    let filed: BTreeMap<String, String> = items
        .iter()
        .filter(|i| i.class == "reclassify")
        .map(|i| {
            let d = str_param(i, "domain");
            (
                str_param(i, "item_name"),
                if d.is_empty() { "Unsorted".into() } else { d },
            )
        })
        .collect();
    let new_domains: Vec<(String, Vec<String>)> = items
        .iter()
        .filter(|i| i.class == "domain" && i.key.starts_with("new_domain:"))
        .map(|i| {
            (
                str_param(i, "domain"),
                i.params
                    .iter()
                    .filter(|(k, _)| k.starts_with("item_"))
                    .filter_map(|(_, v)| v.as_str().map(str::to_string))
                    .collect(),
            )
        })
        .collect();
    let lines: Vec<String> = rep.phases.iter().flat_map(|p| p.lines.clone()).collect();
    let o = t.entry("orphans").or_default();
    o.planted = p.orphans.len();
    for (_, name, domain) in &p.orphans {
        match filed.get(name) {
            Some(d) if d == domain => o.found += 1,
            Some(d) => {
                o.false_positives += 1;
                notes.push(format!(
                    "seed {seed}: orphan {name} filed under {d}, not {domain}"
                ));
            }
            None => notes.push(format!("seed {seed}: missed orphan {name} ({domain})")),
        }
    }
    let u = t.entry("unsorted").or_default();
    u.planted = p.unsorted.len();
    for (_, name, domain) in &p.unsorted {
        if let Some(theme) = domain.strip_prefix('*') {
            match new_domains.iter().find(|(_, m)| m.contains(name)) {
                Some((d, _)) if d.to_lowercase().starts_with(theme) => u.found += 1,
                Some((d, _)) => {
                    u.false_positives += 1;
                    notes.push(format!(
                        "seed {seed}: {name} in new domain {d}, not {theme}"
                    ));
                }
                None if filed.contains_key(name) => {
                    u.false_positives += 1;
                    notes.push(format!(
                        "seed {seed}: {name} ({theme}) filed under {}",
                        filed[name]
                    ));
                }
                None => notes.push(format!("seed {seed}: no new domain for {name} ({theme})")),
            }
        } else if domain.is_empty() {
            if filed.contains_key(name) {
                u.false_positives += 1;
                notes.push(format!("seed {seed}: {name} filed under {}", filed[name]));
            } else if lines
                .iter()
                .any(|l| l.contains(&format!("\"{name}\" stays in Unsorted")))
            {
                u.found += 1;
            } else {
                notes.push(format!("seed {seed}: {name} left without a reason"));
            }
        } else {
            match filed.get(name) {
                Some(d) if d == domain => u.found += 1,
                Some(d) => {
                    u.false_positives += 1;
                    notes.push(format!("seed {seed}: {name} filed under {d}, not {domain}"));
                }
                None => notes.push(format!(
                    "seed {seed}: missed Unsorted item {name} ({domain})"
                )),
            }
        }
    }
    // the traps: nothing filed, merged or contradicted that is not planted
    for (_, a, b) in &p.duplicate_traps {
        if merges.contains(&pair(a, b)) {
            // already counted as a wrong merge above
            notes.push(format!("seed {seed}: (trap) {a} / {b}"));
        }
    }
    (t, notes, points)
}

/// The pairs the items of a class would make one (merges, questions).
fn pairs_of(items: &[proposals::Item], class: &str) -> HashSet<(String, String)> {
    items
        .iter()
        .filter(|i| i.class == class)
        .map(|i| {
            pair(
                &str_param(i, "duplicate_name"),
                &str_param(i, "canonical_name"),
            )
        })
        .collect()
}

/// The probability bands of the calibration table.
const BANDS: &[(f64, f64)] = &[
    (0.0, 0.1),
    (0.1, 0.5),
    (0.5, 0.9),
    (0.9, 0.99),
    (0.99, 1.01),
];

/// Seeds the matcher's priors are counted on; the judgement runs on
/// others (`seeds()`), so what it reports is held out.
const TRAINING_SEEDS: std::ops::RangeInclusive<u64> = 1001..=1060;

#[test]
fn heuristic_judgement_on_generated_memories() {
    let mut total: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut points = Vec::new();
    let seeds = seeds();
    assert!(
        !seeds.clone().any(|s| TRAINING_SEEDS.contains(&s)),
        "the judgement runs on seeds the priors were not counted on"
    );
    for seed in seeds.clone() {
        let (t, n, pts) = judge(seed);
        for (k, v) in t {
            let e = total.entry(k).or_default();
            e.planted += v.planted;
            e.found += v.found;
            e.asked += v.asked;
            e.false_positives += v.false_positives;
            e.questions += v.questions;
        }
        notes.extend(n);
        points.extend(pts);
    }
    println!(
        "\nmatcher calibration on held-out seeds {}..={} (priors counted on seeds {}..={})",
        seeds.start(),
        seeds.end(),
        TRAINING_SEEDS.start(),
        TRAINING_SEEDS.end()
    );
    println!("| predicted probability | pairs | true duplicates | share |");
    println!("|---|---:|---:|---:|");
    let mut table = Vec::new();
    for &(lo, hi) in BANDS {
        let inb: Vec<&(f64, bool)> = points.iter().filter(|(p, _)| *p >= lo && *p < hi).collect();
        let yes = inb.iter().filter(|(_, t)| *t).count();
        println!(
            "| {lo:.2}–{:.2} | {} | {yes} | {} |",
            hi.min(1.0),
            inb.len(),
            if inb.is_empty() {
                "–".to_string()
            } else {
                format!("{:.1}%", 100.0 * yes as f64 / inb.len() as f64)
            }
        );
        table.push((lo, inb.len(), yes));
    }
    // calibrated: what the model calls near-certain is, what it calls
    // unlikely is not
    for (lo, n, yes) in table {
        if n == 0 {
            continue;
        }
        let share = yes as f64 / n as f64;
        if lo >= 0.9 {
            assert!(share >= 0.9, "pairs predicted ≥ {lo}: {yes}/{n} true");
        }
        if lo < 0.1 {
            assert!(share <= 0.1, "pairs predicted < 0.1: {yes}/{n} true");
        }
    }
    println!(
        "\nheuristic reasoner, {} generated memories (seeds {}..={})",
        seeds.clone().count(),
        seeds.start(),
        seeds.end()
    );
    println!(
        "| class | planted | found | of which asked | recall | false positives | questions on pairs that are two |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (k, v) in &total {
        println!(
            "| {k} | {} | {} | {} | {:.1}% | {} | {} |",
            v.planted,
            v.found,
            v.asked,
            100.0 * v.found as f64 / v.planted.max(1) as f64,
            v.false_positives,
            v.questions
        );
    }
    for n in &notes {
        println!("{n}");
    }
    for (k, v) in &total {
        assert!(
            v.found as f64 >= 0.95 * v.planted as f64,
            "{k}: recall {}/{} under 95%",
            v.found,
            v.planted
        );
        assert_eq!(v.false_positives, 0, "{k}: false positives");
    }
}

#[test]
fn why_answers_for_a_pair_that_was_not_merged() {
    let mut nx = Nexus::open_in_memory().expect("open");
    for cmd in [
        r#"UPSERT { CONCEPT ?a { {type: "Person", name: "Erik Lund"} SET ATTRIBUTES { description: "Luthier in Malmö" } } CONCEPT ?b { {type: "Person", name: "Erik Lundgren"} SET ATTRIBUTES { description: "Accountant" } } }"#,
        r#"UPSERT { CONCEPT ?a { {type: "Person", name: "Ann Lee"} SET ATTRIBUTES { birth_date: "1990-02-01" } } CONCEPT ?b { {type: "Person", name: "Dr. Ann Lee"} SET ATTRIBUTES { birth_date: "1951-07-09" } } }"#,
        r#"UPSERT { CONCEPT ?a { {type: "Person", name: "Liz"} } CONCEPT ?b { {type: "Person", name: "Elizabeth Hartmann"} } }"#,
    ] {
        let r = nx.execute(&Request::command(cmd));
        assert!(
            !r.to_json().to_string().contains("\"error\""),
            "{}",
            r.to_json()
        );
    }
    let v =
        sleep::cycle::why_not_merged(&mut nx, "Person:Erik Lund", "Person:Erik Lundgren").unwrap();
    assert_eq!(v["candidate"], false, "{v}");
    let v = sleep::cycle::why_not_merged(&mut nx, "Person:Ann Lee", "Person:Dr. Ann Lee").unwrap();
    assert_eq!(v["candidate"], true, "{v}");
    assert_eq!(v["same"], false, "{v}");
    assert!(v["veto"].as_str().unwrap().contains("birth_date"), "{v}");
    let v =
        sleep::cycle::why_not_merged(&mut nx, "Person:Liz", "Person:Elizabeth Hartmann").unwrap();
    assert_eq!(v["candidate"], true, "{v}");
    assert_eq!(v["same"], false, "a single given name needs support: {v}");
    assert_eq!(v["ask"], true, "asked about, never merged: {v}");
    assert!(
        v["why"]
            .as_str()
            .unwrap()
            .contains("nothing beyond their names"),
        "{v}"
    );
}

/// Counts the matcher's priors on the training seeds and writes them to
/// `src/sleep/matcher/priors.json` (run by hand after the generator or the
/// comparison levels change: `cargo test --release --test judgement --
/// --ignored fit_matcher_priors`).
#[test]
#[ignore]
fn fit_matcher_priors() {
    let mut pairs: Vec<(somnus::sleep::matcher::Comparison, bool)> = Vec::new();
    for seed in TRAINING_SEEDS {
        let g = Gen::build(seed);
        let mut nx = Nexus::open_in_memory().expect("open");
        g.load(&mut nx);
        let want: HashSet<(String, String)> = g
            .planted
            .duplicates
            .iter()
            .map(|(_, a, b)| pair(a, b))
            .collect();
        for c in sleep::cycle::scored_candidates(&mut nx).expect("candidates") {
            if !c.comparison.decided_by_model() {
                continue; // decided by a veto or a rule, never by the model
            }
            let truth = want.contains(&pair(&c.a.name, &c.b.name));
            pairs.push((c.comparison, truth));
        }
    }
    let counts = somnus::sleep::matcher::Counts::count(
        &format!(
            "candidate pairs of generated memories, seeds {}..={}",
            TRAINING_SEEDS.start(),
            TRAINING_SEEDS.end()
        ),
        pairs.iter().map(|(c, t)| (c, *t)),
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/sleep/matcher/priors.json");
    std::fs::write(path, serde_json::to_string_pretty(&counts).unwrap() + "\n").unwrap();
    println!(
        "{} pairs, {} duplicates → {path}",
        counts.pairs, counts.same
    );
}

#[test]
#[ignore]
fn debug_pairs() {
    let seed: u64 = std::env::var("SEED").unwrap().parse().unwrap();
    let g = Gen::build(seed);
    let mut nx = Nexus::open_in_memory().expect("open");
    g.load(&mut nx);
    let want = std::env::var("NAME").unwrap();
    for c in sleep::cycle::scored_candidates(&mut nx).unwrap() {
        if c.a.name.contains(&want) || c.b.name.contains(&want) {
            println!(
                "{} / {}: {:.3} {:?} {:?} {:?} {:?}",
                c.a.name,
                c.b.name,
                c.probability,
                c.comparison.levels,
                c.weights,
                c.a.neighbours,
                c.b.neighbours
            );
        }
    }
}
