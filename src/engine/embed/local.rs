//! The embedded embedding model: a sentence-transformers BERT encoder
//! (such as all-MiniLM-L6-v2) read from a folder on this machine and run
//! on the CPU by candle, so semantic and hybrid SEARCH need no server.
//!
//! A model folder holds `config.json` (a `bert` model), `tokenizer.json`
//! and `model.safetensors`; `1_Pooling/config.json`, `modules.json` and
//! `sentence_bert_config.json` say how token vectors become one sentence
//! vector (mean or first-token pooling, normalised or not, how many
//! tokens are read). Nothing is downloaded: see `discover` for where an
//! installed model is looked for.

use crate::kip::{ErrorCode, KipError, KipResult};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Texts encoded together: long enough to keep the matrix products busy,
/// short enough that a deadline is checked often (about 0.1 s a batch for
/// a six-layer model on one core).
const BATCH: usize = 16;

/// Tokens read of a text when the model folder does not say.
const DEFAULT_MAX_TOKENS: usize = 256;

/// How one sentence vector is made from the token vectors.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pooling {
    Mean,
    Cls,
}

/// A model folder, shared by every connection of the process. Its
/// weights are read when it first embeds something, so a process that
/// never searches by meaning never pays for them.
pub struct LocalModel {
    /// What the model calls itself (its card's title, else its folder).
    pub name: String,
    pub dir: PathBuf,
    loaded: std::sync::OnceLock<Result<Loaded, String>>,
}

/// The tokenizer and weights, once read.
struct Loaded {
    tokenizer: Tokenizer,
    model: BertModel,
    pooling: Pooling,
    normalize: bool,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("name", &self.name)
            .field("dir", &self.dir)
            .field("loaded", &self.loaded.get().map(|l| l.is_ok()))
            .finish()
    }
}

fn read_json(p: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
}

/// Whether `dir` has what `LocalModel::load` reads.
pub fn is_model_dir(dir: &Path) -> bool {
    ["config.json", "tokenizer.json", "model.safetensors"]
        .iter()
        .all(|f| dir.join(f).is_file())
}

/// The model's name: the first `# ` title of its card (`README.md`), else
/// the Hugging Face cache's repository name, else the folder's name (its
/// parent's when the folder is called `model`).
fn model_name(dir: &Path) -> String {
    if let Ok(card) = std::fs::read_to_string(dir.join("README.md"))
        && let Some(t) = card
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .map(str::trim)
            .find(|t| !t.is_empty() && t.len() <= 80 && !t.contains(' '))
    {
        return t.to_string();
    }
    for a in dir.ancestors() {
        if let Some(repo) = a
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("models--"))
        {
            return repo.rsplit("--").next().unwrap_or(repo).to_string();
        }
    }
    let last = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("model")
            .to_string()
    };
    match last(dir).as_str() {
        "model" | "snapshot" => dir.parent().map(last).unwrap_or_else(|| "model".into()),
        n => n.to_string(),
    }
}

impl LocalModel {
    /// The model in `dir`, or why there is none: the folder is checked
    /// (its files, a BERT `config.json`) now, the weights read at first use.
    pub fn open(dir: &Path) -> Result<LocalModel, String> {
        if !is_model_dir(dir) {
            return Err(format!(
                "{} is not a model folder: it needs config.json, tokenizer.json and model.safetensors",
                dir.display()
            ));
        }
        let cfg_json = read_json(&dir.join("config.json"))
            .ok_or_else(|| format!("{}: config.json is not JSON", dir.display()))?;
        let ty = cfg_json
            .get("model_type")
            .and_then(Value::as_str)
            .unwrap_or("");
        if ty != "bert" {
            return Err(format!(
                "{}: a `{ty}` model; the embedded runtime runs BERT encoders only (serve others with an OpenAI-compatible server and SOMNUS_EMBED_URL)",
                dir.display()
            ));
        }
        Ok(LocalModel {
            name: model_name(dir),
            dir: dir.to_path_buf(),
            loaded: std::sync::OnceLock::new(),
        })
    }

    /// The tokenizer and weights, read once.
    fn loaded(&self) -> Result<&Loaded, String> {
        self.loaded
            .get_or_init(|| Loaded::read(&self.dir))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// One vector per text, in order; `KIP_4001` once `deadline` passes
    /// (checked before each batch).
    pub fn embed(&self, texts: &[String], deadline: Option<Instant>) -> KipResult<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(KipError::new(
                    ErrorCode::ExecutionTimeout,
                    "the command's time ran out while the embedded model encoded its texts",
                ));
            }
            out.extend(
                self.loaded()
                    .and_then(|m| m.embed_batch(chunk))
                    .map_err(|e| {
                        KipError::new(
                            ErrorCode::InternalError,
                            format!("embedded model {}: {e}", self.name),
                        )
                    })?,
            );
        }
        Ok(out)
    }
}

impl Loaded {
    fn read(dir: &Path) -> Result<Loaded, String> {
        let cfg_json = read_json(&dir.join("config.json"))
            .ok_or_else(|| format!("{}: config.json is not JSON", dir.display()))?;
        let cfg: Config = serde_json::from_value(cfg_json.clone())
            .map_err(|e| format!("{}: config.json: {e}", dir.display()))?;
        let max_positions = cfg_json
            .get("max_position_embeddings")
            .and_then(Value::as_u64)
            .unwrap_or(512) as usize;
        let max_tokens = read_json(&dir.join("sentence_bert_config.json"))
            .and_then(|v| v.get("max_seq_length").and_then(Value::as_u64))
            .map(|n| n as usize)
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .clamp(8, max_positions);
        let pooling = match read_json(&dir.join("1_Pooling/config.json")) {
            Some(p) if p.get("pooling_mode_cls_token") == Some(&Value::Bool(true)) => Pooling::Cls,
            _ => Pooling::Mean,
        };
        let normalize = read_json(&dir.join("modules.json"))
            .and_then(|m| {
                m.as_array().map(|a| {
                    a.iter().any(|x| {
                        x.get("type")
                            .and_then(Value::as_str)
                            .is_some_and(|t| t.ends_with("Normalize"))
                    })
                })
            })
            // without modules.json, normalise: cosine similarity is what
            // SEARCH ranks by either way
            .unwrap_or(true);
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| format!("{}: tokenizer.json: {e}", dir.display()))?;
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token: "[PAD]".into(),
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| format!("{}: tokenizer: {e}", dir.display()))?;
        // SAFETY: the weights file is mapped read-only; a model folder is
        // not rewritten while a process reads it (a package upgrade writes
        // a new file and renames it).
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(
                &[dir.join("model.safetensors")],
                DType::F32,
                &Device::Cpu,
            )
        }
        .map_err(|e| format!("{}: model.safetensors: {e}", dir.display()))?;
        let model = BertModel::load(vb, &cfg)
            .map_err(|e| format!("{}: the weights do not fit config.json: {e}", dir.display()))?;
        Ok(Loaded {
            tokenizer,
            model,
            pooling,
            normalize,
        })
    }

    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let err = |e: candle_core::Error| e.to_string();
        let enc = self
            .tokenizer
            .encode_batch(texts.iter().map(String::as_str).collect::<Vec<_>>(), true)
            .map_err(|e| e.to_string())?;
        let dev = Device::Cpu;
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, String> {
            let t: Vec<Tensor> = enc
                .iter()
                .map(|e| Tensor::new(f(e), &dev))
                .collect::<Result<_, _>>()
                .map_err(err)?;
            Tensor::stack(&t, 0).map_err(err)
        };
        let ids = rows(&|e| e.get_ids())?;
        let mask = rows(&|e| e.get_attention_mask())?;
        let types = ids.zeros_like().map_err(err)?;
        let tokens = self.model.forward(&ids, &types, Some(&mask)).map_err(err)?;
        let pooled = match self.pooling {
            Pooling::Cls => tokens.narrow(1, 0, 1).and_then(|t| t.squeeze(1)),
            Pooling::Mean => (|| {
                let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let sum = tokens.broadcast_mul(&m)?.sum(1)?;
                sum.broadcast_div(&m.sum(1)?.clamp(1e-9, f64::MAX)?)
            })(),
        }
        .map_err(err)?;
        let v = if self.normalize {
            (|| {
                let n = pooled
                    .sqr()?
                    .sum_keepdim(1)?
                    .sqrt()?
                    .clamp(1e-12, f64::MAX)?;
                pooled.broadcast_div(&n)
            })()
            .map_err(err)?
        } else {
            pooled
        };
        v.to_vec2::<f32>().map_err(err)
    }
}

/// Where installed models are looked for, in order: somnus's own folder
/// (`$XDG_DATA_HOME/somnus/models/*`, else `~/.local/share/somnus/models/*`),
/// the Hugging Face cache's sentence-transformers models
/// (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`),
/// then Python packages that carry a model (`<package>/model` in the
/// site-packages of `$VIRTUAL_ENV`, `$CONDA_PREFIX`, the user's, pyenv's
/// and the system's Pythons).
pub fn discover() -> Vec<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = env("HOME");
    let mut found = Vec::new();
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|r| {
                r.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let data = env("XDG_DATA_HOME").or_else(|| home.as_ref().map(|h| h.join(".local/share")));
    if let Some(d) = data {
        found.extend(
            subdirs(&d.join("somnus/models"))
                .into_iter()
                .filter(|p| is_model_dir(p)),
        );
    }
    let hub = env("HF_HUB_CACHE")
        .or_else(|| env("HF_HOME").map(|h| h.join("hub")))
        .or_else(|| home.as_ref().map(|h| h.join(".cache/huggingface/hub")));
    if let Some(hub) = hub {
        for repo in subdirs(&hub) {
            let n = repo.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if n.starts_with("models--sentence-transformers--") {
                found.extend(
                    subdirs(&repo.join("snapshots"))
                        .into_iter()
                        .filter(|p| is_model_dir(p)),
                );
            }
        }
    }
    let mut libs: Vec<PathBuf> = Vec::new();
    for prefix in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = env(prefix) {
            libs.push(v.join("lib"));
        }
    }
    if let Some(h) = &home {
        libs.push(h.join(".local/lib"));
    }
    // pyenv's Pythons
    let pyenv = env("PYENV_ROOT").or_else(|| home.as_ref().map(|h| h.join(".pyenv")));
    if let Some(p) = pyenv {
        libs.extend(
            subdirs(&p.join("versions"))
                .into_iter()
                .map(|v| v.join("lib")),
        );
    }
    libs.push("/usr/local/lib".into());
    libs.push("/usr/lib".into());
    for lib in libs {
        for py in subdirs(&lib) {
            if !py
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python3"))
            {
                continue;
            }
            for packages in ["site-packages", "dist-packages"] {
                for pkg in subdirs(&py.join(packages)) {
                    let m = pkg.join("model");
                    if m.join("modules.json").is_file() && is_model_dir(&m) {
                        found.push(m);
                    }
                }
            }
        }
    }
    found
}
