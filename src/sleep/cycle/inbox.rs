//! Phase 3: the Unsorted inbox filed into topic domains.

use super::classify::classify_drafts;
use super::context::*;

pub(super) fn unsorted_drafts(cx: &mut Cx, nx: &mut Nexus) -> KipResult<Vec<Draft>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) } LIMIT :batch"#,
        json!({"batch": cx.opts.params.inbox_batch}),
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
