//! Phase 11: domain health and primer curation, then secrets kept in
//! memory (`secrets`).

use super::context::*;
use super::secrets;

pub(super) fn domain_health(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("domain sizes", 0, 0);
    let v = find(
        nx,
        r#"FIND(?d) WHERE { ?d {type: "Domain"} } LIMIT 500"#,
        json!({}),
    )?;
    let mut drafts = Vec::new();
    let (mut small, mut large) = (Vec::new(), Vec::new());
    for d in v.as_array().cloned().unwrap_or_default() {
        let name = s(&d, &["name"]);
        if SYSTEM_DOMAINS.contains(&name.as_str()) || s(&d, &["attributes", "status"]) == "archived"
        {
            continue;
        }
        let c = find(
            nx,
            r#"FIND(COUNT(?n)) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: :d}) }"#,
            json!({"d": name}),
        )?;
        let n = count_of(&c);
        if n == 0 {
            drafts.push(Draft {
                class: "domain".into(),
                key: format!("archive-domain:{}", s(&d, &["id"])),
                title: format!("Archive the empty domain {name}"),
                commands: vec![
                    r#"UPSERT {
  CONCEPT ?empty_domain {
    {type: "Domain", name: :domain_name}
    SET ATTRIBUTES { status: "archived", archived_at: :ts }
    SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) }
  }
}
WITH METADATA { source: "DomainHealthCheck", author: "$system", created_at: :ts }"#
                        .to_string(),
                ],
                params: pm(json!({"domain_name": name, "ts": cx.opts.now})),
                rationale: "a domain with no members misroutes nothing but clutters the primer"
                    .into(),
                evidence: vec![s(&d, &["id"])],
                confidence: 0.6,
            });
        } else if n <= 2 {
            small.push(format!("{name} ({n})"));
        } else if n > 100 {
            large.push(format!("{name} ({n})"));
        }
        if s(&d, &["attributes", "description"]).is_empty() && n > 0 {
            let m = find(
                nx,
                r#"FIND(?n.type) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: :d}) } LIMIT 500"#,
                json!({"d": name}),
            )?;
            let mut types: BTreeMap<String, usize> = BTreeMap::new();
            for t in strs(Some(&m)) {
                *types.entry(t).or_default() += 1;
            }
            let mut tv: Vec<(String, usize)> = types.into_iter().collect();
            tv.sort_by_key(|x| std::cmp::Reverse(x.1));
            let summary = format!(
                "{n} members, mostly {}.",
                tv.iter()
                    .take(3)
                    .map(|(t, c)| format!("{t} ({c})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            drafts.push(Draft {
                class: "domain".into(),
                key: format!("describe-domain:{}", s(&d, &["id"])),
                title: format!("Describe the domain {name}"),
                commands: vec![r#"UPSERT { CONCEPT ?d { {type: "Domain", name: :domain_name} SET ATTRIBUTES { description: :summary } } } WITH METADATA { source: "DomainHealthCheck", author: "$system", confidence: 0.9, created_at: :ts }"#.to_string()],
                params: pm(json!({"domain_name": name, "summary": summary, "ts": cx.opts.now})),
                rationale: "the primer's domain map is built from descriptions; this one has none".into(),
                evidence: vec![s(&d, &["id"])],
                confidence: 0.7,
            });
        }
    }
    if !small.is_empty() {
        cx.report.recommendations.push(format!(
            "Small domains, keep if meaningful or merge: {}",
            small.join(", ")
        ));
    }
    if !large.is_empty() {
        cx.report.recommendations.push(format!(
            "Large domains, consider splitting: {}",
            large.join(", ")
        ));
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("domain_proposals", n as i64);
    cx.line(format!(
        "Domain health: {} small, {} large, {n} proposals",
        small.len(),
        large.len()
    ));
    // the memory's hygiene before waking: secrets kept in it
    secrets::propose_redactions(cx, nx)
}
