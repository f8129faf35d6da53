//! Choosing a topic domain for an item: shared by the Unsorted inbox (phase 3) and
//! the orphans (phase 4).

use super::*;

pub(super) fn domain_views(
    nx: &mut Nexus,
    ty: &str,
    cache: &mut HashMap<String, Vec<DomainView>>,
) -> KipResult<Vec<DomainView>> {
    if let Some(v) = cache.get(ty) {
        return Ok(v.clone());
    }
    let v = find(
        nx,
        r#"FIND(?d) WHERE { ?d {type: "Domain"} } LIMIT 500"#,
        json!({}),
    )?;
    let mut out = Vec::new();
    for d in v.as_array().cloned().unwrap_or_default() {
        let name = s(&d, &["name"]);
        if SYSTEM_DOMAINS.contains(&name.as_str()) || s(&d, &["attributes", "status"]) == "archived"
        {
            continue;
        }
        let m = find(
            nx,
            r#"FIND(?m) WHERE { ?m {type: :t} (?m, "belongs_to_domain", {type: "Domain", name: :d}) } LIMIT 40"#,
            json!({"t": ty, "d": name}),
        )?;
        let member_texts = m
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| {
                        format!(
                            "{} {}",
                            s(x, &["name"]),
                            s(x, &["attributes", "description"])
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(DomainView {
            description: s(&d, &["attributes", "description"]),
            name,
            member_texts,
        });
    }
    cache.insert(ty.to_string(), out.clone());
    Ok(out)
}

pub(super) fn item_view(nx: &mut Nexus, ty: &str, name: &str) -> KipResult<Option<ItemView>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { ?n {type: :t, name: :n} }"#,
        json!({"t": ty, "n": name}),
    )?;
    let Some(node) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(None);
    };
    let mut neighbour_domains = Vec::new();
    for text in [
        r#"FIND(?d.name) WHERE { ?x {type: :t, name: :n} (?x, ?p, ?y) (?y, "belongs_to_domain", ?d) } LIMIT 200"#,
        r#"FIND(?d.name) WHERE { ?x {type: :t, name: :n} (?y, ?p, ?x) (?y, "belongs_to_domain", ?d) } LIMIT 200"#,
    ] {
        let d = find(nx, text, json!({"t": ty, "n": name}))?;
        neighbour_domains.extend(
            strs(Some(&d))
                .into_iter()
                .filter(|d| !SYSTEM_DOMAINS.contains(&d.as_str())),
        );
    }
    Ok(Some(ItemView {
        id: s(&node, &["id"]),
        ty: ty.to_string(),
        name: name.to_string(),
        text: s(&node, &["attributes", "description"]),
        neighbour_domains,
    }))
}

pub(super) fn classify_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    items: &[(String, String)],
    class: &str,
) -> KipResult<Vec<Draft>> {
    let mut cache = HashMap::new();
    let mut drafts = Vec::new();
    for (ty, name) in items {
        cx.cancelled()?;
        let Some(view) = item_view(nx, ty, name)? else {
            continue;
        };
        let domains = domain_views(nx, ty, &mut cache)?;
        let c = cx
            .reasoner
            .classify(&mut Look(nx), std::slice::from_ref(&view), &domains)?
            .into_iter()
            .next();
        let Some(c) = c else { continue };
        let in_unsorted = class == "unsorted";
        match (&c.domain, in_unsorted) {
            (Some(d), _) => {
                let mut commands = vec![r#"UPSERT {
  PROPOSITION ?membership {
    ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: :domain})
  }
}
WITH METADATA { source: "SleepReclassification", author: "$system", confidence: :confidence, created_at: :ts }"#
                    .to_string()];
                if in_unsorted {
                    commands.push(
                        r#"DELETE PROPOSITIONS ?link
WHERE {
  ?link ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: "Unsorted"})
}"#
                        .to_string(),
                    );
                }
                drafts.push(Draft {
                    class: "reclassify".into(),
                    key: format!("domain:{}>{d}", view.id),
                    title: format!("File {ty} \"{name}\" under {d}{}", if in_unsorted { " (out of Unsorted)" } else { "" }),
                    commands,
                    params: pm(json!({"item_type": ty, "item_name": name, "domain": d, "confidence": (c.confidence * 100.0).round() / 100.0, "ts": cx.opts.now})),
                    rationale: c.rationale.clone(),
                    evidence: vec![view.id.clone()],
                    confidence: c.confidence,
                });
            }
            (None, false) if class == "orphan" => {
                drafts.push(Draft {
                    class: "reclassify".into(),
                    key: format!("domain:{}>Unsorted", view.id),
                    title: format!("File orphan {ty} \"{name}\" in Unsorted for review"),
                    commands: vec![
                        r#"UPSERT {
  PROPOSITION ?membership {
    ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: "Unsorted"})
  }
}
WITH METADATA { source: "OrphanResolution", author: "$system", confidence: 0.5, created_at: :ts }"#
                            .to_string(),
                    ],
                    params: pm(json!({"item_type": ty, "item_name": name, "ts": cx.opts.now})),
                    rationale: c.rationale.clone(),
                    evidence: vec![view.id.clone()],
                    confidence: 0.5,
                });
            }
            _ => {
                cx.progress(
                    Some(format!("{ty} \"{name}\" stays: {}", c.rationale)),
                    false,
                );
            }
        }
    }
    Ok(drafts)
}
