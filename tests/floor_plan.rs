//! The house as the README's "How it is built" draws it: each folder of
//! `src/` uses only the floors below it. Read from the code's own `crate::`
//! paths, so an import that runs back up a floor fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each part of the crate and what it may use (`Nexus` is the engine's).
const MAY_USE: &[(&str, &[&str])] = &[
    ("kip", &[]),
    ("analysis", &[]),
    ("text", &[]),
    ("secrets", &[]),
    ("protocol", &["kip"]),
    ("store", &["kip", "analysis"]),
    ("audit", &["store", "kip", "secrets"]),
    (
        "engine",
        &[
            "audit", "store", "analysis", "kip", "protocol", "text", "secrets",
        ],
    ),
    (
        "conformance",
        &["engine", "store", "analysis", "protocol", "kip"],
    ),
    (
        "demo",
        &["engine", "store", "analysis", "protocol", "kip", "audit"],
    ),
    (
        "review",
        &[
            "engine", "audit", "store", "analysis", "kip", "protocol", "secrets", "text",
        ],
    ),
    (
        "import",
        &[
            "review", "engine", "audit", "store", "analysis", "kip", "protocol", "secrets", "text",
        ],
    ),
    (
        "sleep",
        &[
            "review", "engine", "audit", "store", "analysis", "kip", "protocol", "secrets", "text",
        ],
    ),
    (
        "server",
        &[
            "sleep", "review", "engine", "audit", "store", "analysis", "kip", "protocol",
            "secrets", "text",
        ],
    ),
    (
        "tui",
        &[
            "server", "sleep", "import", "review", "engine", "audit", "store", "analysis", "kip",
            "protocol", "secrets", "text", "demo",
        ],
    ),
    (
        "bench",
        &[
            "tui", "server", "sleep", "import", "review", "engine", "audit", "store", "analysis",
            "kip", "protocol", "secrets", "text", "demo",
        ],
    ),
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The part of the crate a file belongs to: its folder under `src/`, or
/// its own name.
fn part(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

#[test]
fn no_part_of_the_crate_uses_one_above_it() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut wrong = BTreeSet::new();
    for f in &all {
        let me = part(&src, f);
        let Some((_, may)) = MAY_USE.iter().find(|(p, _)| *p == me) else {
            continue; // cli, main, lib: the top
        };
        let text = std::fs::read_to_string(f).expect("read");
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                let after = &rest[at + "crate::".len()..];
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                rest = &after[name.len()..];
                // `$crate::` in a macro, and the crate root's re-exports
                let used = match name.as_str() {
                    "Nexus" => "engine",
                    "Request" | "Response" => "protocol",
                    "args" | "say" | "say_err" | "say_json" => continue,
                    n => n,
                };
                if used != me && !may.contains(&used) {
                    wrong.insert(format!(
                        "{}:{}: {me} uses {used}",
                        f.strip_prefix(&src).unwrap().display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that run up a floor:\n{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}
