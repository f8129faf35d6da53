//! Phase 4: concepts outside every domain given one.

use super::classify::classify_drafts;
use super::context::*;

/// Orphans of one type one cycle reads (and files or leaves to
/// consolidation).
pub const ORPHANS_PER_TYPE: usize = 100;

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
            r#"FIND(?n) WHERE { ?n {type: :type} NOT { (?n, "belongs_to_domain", ?d) } } LIMIT :batch"#,
            json!({"type": t, "batch": ORPHANS_PER_TYPE}),
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
