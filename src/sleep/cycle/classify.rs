//! Phases 3 and 4: filing the Unsorted inbox and the orphans into topic domains.

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

pub(super) fn unsorted_drafts(cx: &mut Cx, nx: &mut Nexus) -> KipResult<Vec<Draft>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) } LIMIT 50"#,
        json!({}),
    )?;
    let items: Vec<(String, String)> = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| (s(n, &["type"]), s(n, &["name"])))
                .collect()
        })
        .unwrap_or_default();
    classify_drafts(cx, nx, &items, "unsorted")
}

pub(super) fn inbox(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("Unsorted inbox", 0, 0);
    let backlog = count_of(&find(
        nx,
        r#"FIND(COUNT(?n)) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) }"#,
        json!({}),
    )?);
    cx.count("unsorted_backlog", backlog);
    if backlog > cx.opts.params.unsorted_max_backlog {
        cx.report.issues.push(format!(
            "Unsorted backlog {backlog} exceeds unsorted_max_backlog {}: reclassify to topic domains",
            cx.opts.params.unsorted_max_backlog
        ));
    }
    let drafts = unsorted_drafts(cx, nx)?;
    let n = drafts.len();
    let keys = stage(cx, nx, drafts)?;
    cx.count("unsorted_reclassified", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed filing {n} Unsorted items into topic domains{}",
            if keys.len() < n {
                format!(" ({} already proposed)", n - keys.len())
            } else {
                String::new()
            }
        ));
    }
    Ok(())
}

pub(super) fn orphans(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let mut orphans = Vec::new();
    let mut left_to_consolidation = 0;
    for t in concept_types(nx)? {
        if t == "Domain" {
            continue;
        }
        cx.step(&format!("orphans of type {t}"), 0, 0);
        let v = find(
            nx,
            r#"FIND(?n) WHERE { ?n {type: :type} NOT { (?n, "belongs_to_domain", ?d) } } LIMIT 100"#,
            json!({"type": t}),
        )?;
        for n in v.as_array().cloned().unwrap_or_default() {
            let name = s(&n, &["name"]);
            if name.starts_with('$') {
                continue;
            }
            // Events wait for consolidation (phase 5), which files or archives them
            if t == "Event" && s(&n, &["attributes", "consolidation_status"]) != "completed" {
                left_to_consolidation += 1;
                continue;
            }
            orphans.push((t.clone(), name));
        }
    }
    cx.count("orphans", (orphans.len() + left_to_consolidation) as i64);
    let all = (orphans.len() + left_to_consolidation) as i64;
    if all > cx.opts.params.orphan_max_count {
        cx.report.issues.push(format!(
            "{all} orphans exceed orphan_max_count {}: classify or archive them",
            cx.opts.params.orphan_max_count
        ));
    }
    let drafts = classify_drafts(cx, nx, &orphans, "orphan")?;
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    if n > 0 || left_to_consolidation > 0 {
        cx.line(format!(
            "Found {} orphans: proposed a domain for {n}; {left_to_consolidation} unconsolidated Events left to consolidation",
            orphans.len() + left_to_consolidation
        ));
    }
    Ok(())
}
