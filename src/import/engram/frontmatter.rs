//! An Engram memory file's YAML frontmatter, read as Engram writes it:
//! one `key: value` per line, lists as `["a", "b"]`, and `links:` as a
//! list of maps (`- targetId: …` with `linkType`, `strength`, `reason`
//! indented under it). Not with a YAML library: Engram writes values
//! unquoted that strict YAML rejects (`intentGoal: fix: the flag`), and
//! reads each line by splitting it at its first colon; so does this, and
//! what does not fit is kept as text, never an error.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// A memory file's frontmatter: key → (raw value, line), and its links.
#[derive(Default)]
pub struct Front {
    pub keys: BTreeMap<String, (String, usize)>,
    pub links: Vec<(usize, Map<String, Value>)>,
}

/// The largest frontmatter read as keys: a larger one (Engram writes a
/// few hundred bytes) is reported and the whole file is kept as text, so
/// its cost stays that of its bytes.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Splits a memory file into its frontmatter, its text, and the line the
/// text starts on. A file with no frontmatter is an error naming why.
pub fn frontmatter(text: &str) -> Result<(Front, String, usize), String> {
    let text = text.trim_start_matches('\u{feff}');
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim()) != Some("---") {
        return Err("no frontmatter".into());
    }
    let Some(end) = lines.iter().skip(1).position(|l| l.trim() == "---") else {
        return Err("its frontmatter is not closed by `---`: the whole file is its text".into());
    };
    let end = end + 1;
    let size: usize = lines[1..end].iter().map(|l| l.len() + 1).sum();
    if size > MAX_FRONTMATTER_BYTES {
        return Err(format!(
            "its frontmatter is {} KB, larger than the {} KB read as keys: the whole file is kept as its text",
            size / 1024,
            MAX_FRONTMATTER_BYTES / 1024
        ));
    }
    let mut f = Front::default();
    let mut list_key: Option<String> = None;
    let mut nested: Option<(String, Value)> = None;
    for (i, line) in lines[1..end].iter().enumerate() {
        let n = i + 2;
        if line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if indented && list_key.as_deref() == Some("links") {
            let t = line.trim();
            let (t, new) = match t.strip_prefix("- ") {
                Some(rest) => (rest, true),
                None => (t, false),
            };
            if new || f.links.is_empty() {
                f.links.push((n, Map::new()));
            }
            if let Some((k, v)) = t.split_once(':')
                && let Some(last) = f.links.last_mut()
            {
                let v = unquote(v.trim());
                let v = v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map_or_else(|| json!(v), |x| json!(x));
                last.1.insert(k.trim().to_string(), v);
            }
            continue;
        }
        // a key's map or list indented under it (`structuredAttributes:`
        // then `  city: Ghost`): that key's value, as JSON, never keys of
        // the memory's own (gathered here, written once the key ends)
        if indented && let Some(k) = list_key.clone() {
            let t = line.trim();
            let held = &mut nested.get_or_insert_with(|| (k, Value::Null)).1;
            match t.strip_prefix("- ") {
                Some(item) => {
                    if !held.is_array() {
                        *held = json!([]);
                    }
                    if let Value::Array(a) = held {
                        a.push(json!(unquote(item.trim())));
                    }
                }
                None => {
                    if !held.is_object() {
                        *held = json!({});
                    }
                    if let (Value::Object(m), Some((nk, nv))) = (held, t.split_once(':')) {
                        m.insert(nk.trim().to_string(), json!(unquote(nv.trim())));
                    }
                }
            }
            continue;
        }
        if let Some((k, v)) = nested.take()
            && let Some(e) = f.keys.get_mut(&k)
        {
            e.0 = v.to_string();
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let k = k.trim().to_string();
        let v = v.trim();
        list_key = if v.is_empty() { Some(k.clone()) } else { None };
        if k == "links" {
            continue;
        }
        f.keys.insert(k, (unquote(v), n));
    }
    if let Some((k, v)) = nested.take()
        && let Some(e) = f.keys.get_mut(&k)
    {
        e.0 = v.to_string();
    }
    let body_start = end + 1;
    let body: Vec<&str> = lines[body_start.min(lines.len())..].to_vec();
    let skip = body.iter().take_while(|l| l.trim().is_empty()).count();
    let body_text = body[skip..].join("\n").trim().to_string();
    Ok((f, body_text, body_start + skip + 1))
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    if v.len() >= 2
        && ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\'')))
    {
        v[1..v.len() - 1].replace("\\\"", "\"")
    } else {
        v.to_string()
    }
}

/// `["a", "b"]` (or `[a, b]`) as its items.
pub fn list(v: &str) -> Vec<String> {
    if let Ok(Value::Array(a)) = serde_json::from_str::<Value>(v) {
        return a
            .into_iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
            .filter(|s| !s.is_empty())
            .collect();
    }
    v.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|s| unquote(s.trim()))
        .filter(|s| !s.is_empty())
        .collect()
}

/// `confidenceTier` → `confidence_tier`.
pub fn snake(k: &str) -> String {
    let mut out = String::new();
    for c in k.chars() {
        if c.is_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_or_a_list_indented_under_a_key_is_that_keys_value() {
        let (f, body, _) = frontmatter(
            "---\nid: fact-1\ncategory: fact\nstructuredAttributes:\n  city: Ghost\n  status: moved\ntags:\n  - a\n  - b\nstatus: active\n---\n\nText.\n",
        )
        .expect("frontmatter");
        assert_eq!(body, "Text.");
        assert_eq!(
            f.keys["structuredAttributes"].0,
            r#"{"city":"Ghost","status":"moved"}"#
        );
        assert_eq!(f.keys["tags"].0, r#"["a","b"]"#);
        assert_eq!(
            f.keys["status"].0, "active",
            "a nested key is not the memory's"
        );
        assert!(!f.keys.contains_key("city"));
    }

    #[test]
    fn a_frontmatter_past_the_limit_leaves_the_whole_file_as_text() {
        let tags: Vec<String> = (0..20_000).map(|i| format!("\"t{i}\"")).collect();
        let text = format!("---\nid: x\ntags: [{}]\n---\nBody.\n", tags.join(","));
        let why = frontmatter(&text).err().expect("refused");
        assert!(why.contains("larger than the 64 KB"), "{why}");
        let (f, body, line) = frontmatter("---\nid: x\n---\nBody.\n").expect("read");
        assert_eq!(
            (f.keys["id"].0.as_str(), body.trim(), line),
            ("x", "Body.", 4)
        );
    }
}
