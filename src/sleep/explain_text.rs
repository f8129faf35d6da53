//! Explanations as text a person reads: what `somnus why` prints and what
//! the console's why panel shows, from one place.

use serde_json::{Value, json};

/// Why an element is as it is (from [`super::explain::explain`]), one line
/// per fact; lines are not cut, a reader wraps them.
pub fn element_lines(label: &str, v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let st = &v["state"];
    if st["exists"] == json!(false) {
        out.push(format!("{label}: no longer in the memory"));
    } else {
        out.push(format!("{label}: {}", st["kind"].as_str().unwrap_or("")));
        for k in [
            "memory_strength",
            "strength_decay_rule",
            "archived",
            "archive_rule",
            "archive_reason",
            "superseded",
            "superseded_by",
            "superseded_reason",
            "expires_at",
            "confidence",
        ] {
            if !st[k].is_null() {
                out.push(format!("  {k}: {}", plain(&st[k])));
            }
        }
        let r = &st["relevance"];
        if !r.is_null() {
            out.push(format!(
                "  relevance now: {} ({})",
                number(&r["score"]),
                crate::sleep::cycle::decay::band(r["status"].as_str().unwrap_or(""))
            ));
            if r.get("base").is_some() {
                out.push(format!(
                    "    = base {} × e^(−{} × {} days) × log2({} + 1) × type weight {}",
                    number(&r["base"]),
                    number(&r["lambda"]),
                    number(&r["days_since_access"]),
                    number(&r["access_count"]),
                    number(&r["type_weight"])
                ));
            }
        }
    }
    let reads = &v["reads"];
    match reads["count"].as_i64() {
        Some(n) if n > 0 => {
            let by: Vec<String> = reads["by"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| {
                    format!(
                        "{} {}",
                        b["caller"].as_str().unwrap_or("?"),
                        plain(&b["count"])
                    )
                })
                .collect();
            out.push(format!(
                "  read by agents: {n} time{}, last {} ({})",
                if n == 1 { "" } else { "s" },
                reads["last"].as_str().unwrap_or("?"),
                by.join(", ")
            ));
        }
        Some(_) => out.push("  read by agents: never (since the read log began)".into()),
        None => {}
    }
    let notes = v["notes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if !notes.is_empty() {
        out.push(String::new());
        out.push("What the sleep cycle did:".into());
    }
    for n in notes {
        out.push(format!(
            "  run #{} {}: {}",
            plain(&n["run"]),
            n["at"].as_str().unwrap_or(""),
            n["action"].as_str().unwrap_or(""),
        ));
        out.push(format!("    rule: {}", n["rule"].as_str().unwrap_or("")));
        if let Some(o) = n["inputs"].as_object().filter(|o| !o.is_empty()) {
            let parts: Vec<String> = o.iter().map(|(k, x)| format!("{k} {}", plain(x))).collect();
            out.push(format!("    inputs: {}", parts.join(", ")));
        }
    }
    let history = v["history"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if !history.is_empty() {
        out.push(String::new());
        out.push("Its audit trail:".into());
    }
    for h in history {
        out.push(format!(
            "  #{} {} {} {} by {} via {}{}{}",
            plain(&h["entry"]),
            h["at"].as_str().unwrap_or(""),
            h["op"].as_str().unwrap_or(""),
            h["element"].as_str().unwrap_or(""),
            h["actor"].as_str().unwrap_or(""),
            h["trigger"].as_str().unwrap_or(""),
            h["batch"]
                .as_str()
                .map(|b| format!(" [{b}]"))
                .unwrap_or_default(),
            h["reason"]
                .as_str()
                .map(|r| format!(" because {r}"))
                .unwrap_or_default()
        ));
        if let Some(b) = h.get("before").filter(|b| !b.is_null()) {
            out.push(format!("    before: {}", image(b)));
        }
        if let Some(a) = h.get("after").filter(|a| !a.is_null()) {
            out.push(format!("    after:  {}", image(a)));
        }
    }
    out
}

/// Why two concepts are or are not one (from
/// [`super::cycle::why_not_merged`]).
pub fn pair_lines(a: &str, b: &str, v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if v["candidate"] == json!(false) {
        out.push(format!(
            "{a} / {b}: not a candidate: {}",
            v["why"].as_str().unwrap_or("")
        ));
        return out;
    }
    out.push(format!("{a} / {b}: {}", v["rule"].as_str().unwrap_or("")));
    if let Some(veto) = v["veto"].as_str() {
        out.push(format!("  vetoed: {veto}"));
    }
    out.push("  comparison vector (weight in bits = log2(m/u)):".into());
    for e in v["vector"].as_array().into_iter().flatten() {
        out.push(format!(
            "    {:<12} {:<15} m {:<7} u {:<7} {:+.2}  {}",
            e["feature"].as_str().unwrap_or(""),
            e["level"].as_str().unwrap_or(""),
            number(&e["m"]),
            number(&e["u"]),
            e["weight"].as_f64().unwrap_or(0.0),
            e["detail"].as_str().unwrap_or("")
        ));
    }
    out.push(format!(
        "    {:<12} {:<15} {:+.2}  ({} of this memory's candidate pairs are duplicates)",
        "prior",
        "",
        v["prior"]["weight"].as_f64().unwrap_or(0.0),
        number(&v["prior"]["share_of_duplicates"])
    ));
    let l = &v["learned"];
    let adj: Vec<String> = l["adjustments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| {
            format!(
                "{} {:+.2}",
                x["level"].as_str().unwrap_or(""),
                x["change"].as_f64().unwrap_or(0.0)
            )
        })
        .collect();
    out.push(format!(
        "  learned from {} decisions and {} candidate pairs of this memory{}",
        plain(&l["decisions"]),
        plain(&l["pairs_in_memory"]),
        if adj.is_empty() {
            String::new()
        } else {
            format!("; the decisions moved {}", adj.join(", "))
        }
    ));
    out.push(format!(
        "  probability {}{}: {}",
        number(&v["probability"]),
        if v["capped"] == json!(true) {
            " (held under the merge band: two people with nothing but a name in common)"
        } else {
            ""
        },
        match v["band"].as_str() {
            Some("merge") => "proposed as one",
            Some("ask") => "asked: same or different?",
            _ => "not merged",
        }
    ));
    out.push(format!("  {}", v["why"].as_str().unwrap_or("")));
    out
}

/// A value as a reader wants it: strings without quotes or escapes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.replace('\n', " ⏎ "),
        Value::Number(_) => number(v),
        other => other.to_string(),
    }
}

/// A number rounded for reading (4 significant decimals at most).
fn number(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if x.is_finite() && x.fract() != 0.0 => {
            let s = format!("{x:.4}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        Some(x) if x.is_infinite() => "∞".into(),
        _ => match v {
            Value::Null => "?".into(),
            other => other.to_string(),
        },
    }
}

/// An element's before/after image as `key: value` pairs, strings shown as
/// they are (their line breaks as ⏎), without the bookkeeping fields.
fn image(v: &Value) -> String {
    let Some(o) = v.as_object() else {
        return plain(v);
    };
    let mut parts = Vec::new();
    for (k, x) in o {
        if k == "updated_at" {
            continue;
        }
        let shown = match x {
            Value::Object(inner) if !inner.is_empty() => {
                let fields: Vec<String> = inner
                    .iter()
                    .map(|(ik, iv)| format!("{ik}: {}", plain(iv)))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
            other => plain(other),
        };
        parts.push(format!("{k}: {shown}"));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_read_without_quotes_or_escapes() {
        let v = json!({"state": {"exists": true, "kind": "concept", "superseded_reason": "moved\nto York"},
            "notes": [], "history": [{"entry": 3, "at": "t", "op": "update", "element": "C:1", "actor": "operator", "trigger": "console",
            "before": {"attributes": {"description": "a \"quoted\"\nline"}}}]});
        let text = element_lines("C:1", &v).join("\n");
        assert!(
            text.contains("superseded_reason: moved ⏎ to York"),
            "{text}"
        );
        assert!(text.contains("description: a \"quoted\" ⏎ line"), "{text}");
        assert!(!text.contains("\\n"), "{text}");
    }
}
