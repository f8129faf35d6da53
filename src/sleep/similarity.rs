//! Name similarity for duplicate detection: normalised names, aliases,
//! initialisms and fuzzy matches, found by blocking (no all-pairs scan).

use std::collections::{BTreeMap, HashMap};
use unicode_normalization::UnicodeNormalization;

/// Lowercase, accents folded, punctuation dropped, whitespace collapsed:
/// `"Tomás  Ruiz!"` → `"tomas ruiz"`.
pub fn normalise(s: &str) -> String {
    let folded: String = s
        .nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .collect();
    let mut out = String::with_capacity(folded.len());
    let mut space = false;
    for c in folded.chars() {
        if c.is_alphanumeric() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase());
        } else {
            space = true;
        }
    }
    out
}

/// The words of a name, splitting camel case: `"JavaScript"` →
/// `["java", "script"]`, `"Board games"` → `["board", "games"]`.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase();
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|w| normalise(&w)).collect()
}

/// The initials of a multi-word name (`"JavaScript"` → `"js"`), if it has
/// two or more words.
pub fn initials(s: &str) -> Option<String> {
    // a name made of acronyms has no initialism of its own ("JSON Schema"
    // is not "JS")
    if s.split(|c: char| !c.is_alphanumeric()).any(|w| {
        w.chars().count() >= 2 && w.chars().all(|c| c.is_uppercase() || c.is_ascii_digit())
    }) {
        return None;
    }
    let w = words(s);
    (w.len() >= 2).then(|| w.iter().filter_map(|x| x.chars().next()).collect())
}

/// One concept offered for duplicate detection.
#[derive(Debug, Clone)]
pub struct Named {
    pub id: i64,
    pub ty: String,
    pub name: String,
    pub aliases: Vec<String>,
}

/// Why two names look like one thing.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub a: usize,
    pub b: usize,
    pub rule: &'static str,
    pub score: f64,
}

fn tokens_extend(a: &str, b: &str) -> bool {
    // every word of one is the other's word or a prefix of it (3+ letters):
    // "tom ruiz" / "tomas ruiz"
    let (wa, wb): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    if wa.len() != wb.len() || wa.len() < 2 {
        return false;
    }
    let mut differ = 0;
    for (x, y) in wa.iter().zip(&wb) {
        if x == y {
            continue;
        }
        let (s, l) = if x.len() <= y.len() { (x, y) } else { (y, x) };
        if s.len() >= 3 && l.starts_with(s) {
            differ += 1;
        } else {
            return false;
        }
    }
    differ == 1
}

fn short_suffix(a: &str, b: &str) -> bool {
    // one is the other plus a short tail: "postgres" / "postgresql"
    let (s, l) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    s.len() >= 5
        && !s.contains(' ')
        && l.starts_with(s)
        && l.len() - s.len() <= 3
        && !l[s.len()..].starts_with(' ')
}

/// The numbers in a name: names that differ in them name different things
/// ("Topic 12" / "Topic 120", "iPhone 14" / "iPhone 15").
fn numbers(s: &str) -> Vec<&str> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|x| !x.is_empty())
        .collect()
}

/// Pairs of the same type that look like duplicates. Blocking keys:
/// normalised names and aliases, initialisms, and the first three letters
/// for the fuzzy rules, so the work grows with the memory, not its square.
pub fn duplicates(items: &[Named]) -> Vec<Match> {
    let mut by_type: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        by_type.entry(it.ty.as_str()).or_default().push(i);
    }
    let mut found: HashMap<(usize, usize), Match> = HashMap::new();
    let mut add = |a: usize, b: usize, rule: &'static str, score: f64| {
        if a == b {
            return;
        }
        let key = (a.min(b), a.max(b));
        let e = found.entry(key).or_insert(Match {
            a: key.0,
            b: key.1,
            rule,
            score,
        });
        if score > e.score {
            e.rule = rule;
            e.score = score;
        }
    };
    for idx in by_type.values() {
        let norm: Vec<String> = idx.iter().map(|&i| normalise(&items[i].name)).collect();
        // exact keys: names and aliases
        let mut keys: HashMap<String, Vec<usize>> = HashMap::new();
        for (k, &i) in idx.iter().enumerate() {
            keys.entry(norm[k].clone()).or_default().push(i);
            for a in &items[i].aliases {
                let n = normalise(a);
                if !n.is_empty() {
                    keys.entry(n).or_default().push(i);
                }
            }
        }
        for (k, &i) in idx.iter().enumerate() {
            if let Some(hits) = keys.get(&norm[k]) {
                for &j in hits {
                    if j != i {
                        let same_name = normalise(&items[j].name) == norm[k];
                        add(
                            i,
                            j,
                            if same_name {
                                "same normalised name"
                            } else {
                                "name is the other's alias"
                            },
                            if same_name { 0.97 } else { 0.95 },
                        );
                    }
                }
            }
        }
        // initialisms: "JS" is the initials of "JavaScript"
        let mut by_initials: HashMap<String, Vec<usize>> = HashMap::new();
        for &i in idx {
            if let Some(x) = initials(&items[i].name) {
                by_initials.entry(x).or_default().push(i);
            }
        }
        for (k, &i) in idx.iter().enumerate() {
            let n = &norm[k];
            if n.len() >= 2 && n.len() <= 5 && !n.contains(' ') {
                for &j in by_initials.get(n).into_iter().flatten() {
                    add(i, j, "name is the other's initialism", 0.85);
                }
            }
        }
        // fuzzy: within blocks of the same first three letters
        let mut blocks: HashMap<String, Vec<usize>> = HashMap::new();
        for (k, _) in idx.iter().enumerate() {
            let b: String = norm[k].chars().take(3).collect();
            if b.chars().count() == 3 {
                blocks.entry(b).or_default().push(k);
            }
        }
        for block in blocks.values() {
            if block.len() > 200 {
                continue; // a crowd of similar prefixes: names, not duplicates
            }
            for (x, &ka) in block.iter().enumerate() {
                for &kb in &block[x + 1..] {
                    let (a, b) = (&norm[ka], &norm[kb]);
                    if a == b || numbers(a) != numbers(b) {
                        continue;
                    }
                    if tokens_extend(a, b) {
                        add(idx[ka], idx[kb], "one name extends the other's words", 0.8);
                    } else if short_suffix(a, b) {
                        add(
                            idx[ka],
                            idx[kb],
                            "one name is the other plus a short suffix",
                            0.8,
                        );
                    } else if a.len() >= 8 && strsim::jaro_winkler(a, b) >= 0.96 {
                        add(
                            idx[ka],
                            idx[kb],
                            "near-identical spelling",
                            strsim::jaro_winkler(a, b) * 0.9,
                        );
                    }
                }
            }
        }
    }
    let mut out: Vec<Match> = found.into_values().collect();
    out.sort_by_key(|x| (x.a, x.b));
    out
}

/// Word overlap of two texts (Jaccard over words of 3+ letters).
pub fn overlap(a: &str, b: &str) -> f64 {
    let wa: std::collections::HashSet<String> =
        words(a).into_iter().filter(|w| w.len() >= 3).collect();
    let wb: std::collections::HashSet<String> =
        words(b).into_iter().filter(|w| w.len() >= 3).collect();
    if wa.is_empty() || wb.is_empty() {
        return 0.0;
    }
    wa.intersection(&wb).count() as f64 / wa.union(&wb).count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: i64, ty: &str, name: &str, aliases: &[&str]) -> Named {
        Named {
            id,
            ty: ty.into(),
            name: name.into(),
            aliases: aliases.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn normalises_and_splits() {
        assert_eq!(normalise("Tomás  Ruiz!"), "tomas ruiz");
        assert_eq!(words("JavaScript"), vec!["java", "script"]);
        assert_eq!(initials("JavaScript").as_deref(), Some("js"));
        assert_eq!(initials("Rust"), None);
    }

    #[test]
    fn finds_the_planted_kinds_and_not_lookalikes() {
        let items = vec![
            n(1, "Topic", "JS", &[]),
            n(2, "Topic", "JavaScript", &["ECMAScript"]),
            n(3, "Topic", "Postgres", &["postgres db"]),
            n(4, "Topic", "PostgreSQL", &["pg"]),
            n(5, "Person", "Tom Ruiz", &["Tom"]),
            n(6, "Person", "Tomás Ruiz", &[]),
            n(7, "Topic", "Java", &[]),
            n(8, "Topic", "Zig", &[]),
            n(9, "Topic", "Zigbee", &[]),
            n(10, "Person", "Sam Chen", &[]),
            n(11, "Person", "Mira Chen", &[]),
            n(12, "Place", "JS", &[]),
            n(13, "Topic", "JSON Schema", &[]),
            n(14, "Person", "Person 1", &[]),
            n(15, "Person", "Person 10", &[]),
            n(16, "Topic", "Topic 123", &[]),
            n(17, "Topic", "Topic 1234", &[]),
        ];
        let m = duplicates(&items);
        let pairs: Vec<(i64, i64)> = m.iter().map(|x| (items[x.a].id, items[x.b].id)).collect();
        assert!(pairs.contains(&(1, 2)), "{pairs:?}");
        assert!(pairs.contains(&(3, 4)), "{pairs:?}");
        assert!(pairs.contains(&(5, 6)), "{pairs:?}");
        assert_eq!(pairs.len(), 3, "{m:?}");
    }
}
