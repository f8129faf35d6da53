//! Phase 8: the self-model (8A gather, 8B refine, 8D write as a
//! proposal); 8C, the growth timeline, is `growth_timeline`.

use super::context::*;

pub(super) fn self_model(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("self-evidence", 0, 0);
    let v = find(
        nx,
        r#"FIND(?self) WHERE { ?self {type: "Person", name: "$self"} }"#,
        json!({}),
    )?;
    let Some(me) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(());
    };
    let attrs = me.get("attributes").cloned().unwrap_or(Value::Null);
    let version = me
        .get("metadata")
        .and_then(|m| m.get("_version"))
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let sys = find(
        nx,
        r#"FIND(?s.attributes.last_sleep_cycle) WHERE { ?s {type: "Person", name: "$system"} }"#,
        json!({}),
    )?;
    let since = sys
        .as_array()
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let v = find(
        nx,
        r#"FIND(?insight, ?link) WHERE {
  ?self {type: "Person", name: "$self"}
  ?link (?self, "learned", ?insight)
} LIMIT 200"#,
        json!({}),
    )?;
    let insights: Vec<InsightView> = rows(&v, 2)
        .into_iter()
        .filter(|r| {
            // as instants: `2026-11-19T22:00:00-05:00` is after
            // `2026-11-20T02:00:00Z`, whatever their text's order
            let at = s(&r[1], &["metadata", "created_at"]);
            match (instant(&at), instant(&since)) {
                (Some(a), Some(b)) => a >= b,
                _ => true,
            }
        })
        .map(|r| InsightView {
            id: s(&r[0], &["id"]),
            name: s(&r[0], &["name"]),
            class: s(&r[0], &["attributes", "insight_class"]),
            description: s(&r[0], &["attributes", "description"]),
        })
        .collect();
    cx.count("insights_reviewed", insights.len() as i64);
    let edits = cx.reasoner.self_model(&mut Look(nx), &attrs, &insights)?;
    // one read-modify-write of $self for all edits
    let edits: Vec<SelfEdit> = edits
        .into_iter()
        .filter(|e| {
            !matches!(
                e.attribute.as_str(),
                "core_directives" | "name" | "type" | "id" | "person_class"
            )
        })
        .collect();
    let mut drafts = Vec::new();
    if !edits.is_empty() {
        let mut values = Map::new();
        for e in &edits {
            let mut merged: Vec<Value> = values
                .get(&e.attribute)
                .or_else(|| attrs.get(&e.attribute))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for a in &e.add {
                if !merged.iter().any(|m| m.as_str() == Some(a)) {
                    merged.push(json!(a));
                }
            }
            values.insert(e.attribute.clone(), Value::Array(merged));
        }
        values.insert("self_model_updated_at".into(), json!(cx.opts.now));
        let e = SelfEdit {
            attribute: edits
                .iter()
                .map(|e| e.attribute.clone())
                .collect::<Vec<_>>()
                .join(", "),
            add: edits
                .iter()
                .flat_map(|e| e.add.iter().map(|a| format!("{}: {a}", e.attribute)))
                .collect(),
            evidence: edits.iter().flat_map(|e| e.evidence.clone()).collect(),
            rationale: edits
                .iter()
                .map(|e| format!("{}: {}", e.attribute, e.rationale))
                .collect::<Vec<_>>()
                .join("; "),
        };
        drafts.push(Draft {
            class: "self_model".into(),
            key: format!("self:{}", similarity::normalise(&e.add.join("|"))),
            title: format!("Refine $self: {} additions to {}", e.add.len(), e.attribute),
            commands: vec![r#"UPSERT {
  CONCEPT ?self {
    {type: "Person", name: "$self"}
    EXPECT VERSION :v
    SET ATTRIBUTES { :attr_values }
  }
}
WITH METADATA { source: "SelfModelConsolidation", author: "$system", confidence: 0.85, created_at: :ts }"#
                .replace("{ :attr_values }", ":attr_values")],
            params: pm(json!({"v": version, "attr_values": values, "ts": cx.opts.now})),
            rationale: e.rationale.clone(),
            evidence: e.evidence.clone(),
            confidence: 0.7,
        });
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("self_model_edits", n as i64);
    cx.line(format!(
        "Reviewed {} Insights for the self-model; proposed {n} edits",
        insights.len()
    ));
    cx.cancelled()?;
    // 8C: the growth timeline
    super::growth_timeline::growth_timeline(cx, nx)
}
