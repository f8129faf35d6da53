//! KML writes. Each statement runs in one transaction opened by the caller:
//! any error rolls the whole statement back, so nothing is half-written.

use crate::kip::ast::*;
use crate::kip::{KipError, KipResult};
use crate::store::{self, Concept, ids};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Concepts whose definitions the whole schema stands on.
pub fn is_protected_concept(ty: &str, name: &str) -> bool {
    matches!(
        (ty, name),
        ("$ConceptType", "$ConceptType")
            | ("$ConceptType", "$PropositionType")
            | ("$ConceptType", "Domain")
            | ("$PropositionType", "belongs_to_domain")
            | ("Domain", "CoreSchema")
    )
}

pub fn is_system_actor(ty: &str, name: &str) -> bool {
    ty == "Person" && (name == "$self" || name == "$system")
}

pub fn concept_is_protected(conn: &Connection, id: i64) -> KipResult<bool> {
    Ok(match store::concept_by_id(conn, id)? {
        Some(c) => is_protected_concept(&c.ty, &c.name),
        None => false,
    })
}

/// A proposition anchoring a protected node (its subject) is protected too.
pub fn prop_is_protected(conn: &Connection, subject: i64) -> KipResult<bool> {
    concept_is_protected(conn, subject)
}

pub fn check_reserved(meta: &Map<String, Value>) -> KipResult<()> {
    if let Some(k) = meta.keys().find(|k| k.starts_with('_')) {
        return Err(KipError::constraint(format!("metadata key \"{k}\" is reserved: `_` keys are engine-maintained")));
    }
    Ok(())
}

fn merged(layers: &[Option<&Map<String, Value>>]) -> Map<String, Value> {
    let mut m = Map::new();
    for l in layers.iter().flatten() {
        for (k, v) in l.iter() {
            m.insert(k.clone(), v.clone());
        }
    }
    m
}

fn shallow(base: &Map<String, Value>, over: &Map<String, Value>) -> Map<String, Value> {
    let mut m = base.clone();
    for (k, v) in over {
        m.insert(k.clone(), v.clone());
    }
    m
}

pub struct WriteCtx<'c> {
    pub conn: &'c Connection,
    /// Bootstrap writes may touch protected definitions.
    pub system: bool,
}

#[derive(Default)]
pub struct UpsertReport {
    pub blocks: usize,
    pub concepts: Vec<String>,
    pub propositions: Vec<String>,
}

impl<'c> WriteCtx<'c> {
    fn type_defined(&self, ty: &str, name: &str) -> KipResult<bool> {
        if ty == "$ConceptType" && name == "$ConceptType" {
            return Ok(true);
        }
        Ok(store::concept_id_by_type_name(self.conn, "$ConceptType", ty)?.is_some())
    }

    fn predicate_defined(&self, p: &str) -> KipResult<bool> {
        Ok(store::concept_id_by_type_name(self.conn, "$PropositionType", p)?.is_some())
    }

    fn resolve_identity(&self, idn: &ConceptIdentity) -> KipResult<Option<Concept>> {
        match idn {
            ConceptIdentity::Id(s) => match ids::parse_concept_id(s) {
                Some(n) => store::concept_by_id(self.conn, n),
                None if s.starts_with("P:") => Err(KipError::syntax(format!("{s} must be a Concept ID (C:<n>)"))),
                None => Ok(None),
            },
            ConceptIdentity::TypeName { ty, name } => store::concept_by_type_name(self.conn, ty, name),
        }
    }

    fn resolve_prop(&self, p: &UpsertProp, handles: &HashMap<String, i64>) -> KipResult<i64> {
        match p {
            UpsertProp::Id(s) => match ids::parse_prop_id(s) {
                ids::PropIdParse::Ok(n, _) if n >= 0 => store::prop_by_id(self.conn, n)?
                    .map(|x| x.id)
                    .ok_or_else(|| KipError::not_found(format!("proposition {s} does not exist"))),
                ids::PropIdParse::NotAProposition => Err(KipError::syntax(format!("{s} must be a Proposition ID (P:<n>:<predicate>)"))),
                _ => Err(KipError::not_found(format!("proposition {s} does not exist"))),
            },
            UpsertProp::Triple { subject, predicate, object } => {
                let s = self.resolve_endpoint(subject, handles)?;
                let o = self.resolve_endpoint(object, handles)?;
                store::prop_by_spo(self.conn, s, predicate, o)?.map(|x| x.id).ok_or_else(|| {
                    KipError::not_found(format!("proposition (…, \"{predicate}\", …) does not exist"))
                })
            }
        }
    }

    fn resolve_endpoint(&self, e: &UpsertEndpoint, handles: &HashMap<String, i64>) -> KipResult<i64> {
        match e {
            UpsertEndpoint::Handle(h) => handles.get(h).copied().ok_or_else(|| {
                KipError::reference(format!("handle ?{h} is used before it is defined"))
                    .with_hint("Define each CONCEPT/PROPOSITION handle before the clauses that reference it.")
            }),
            UpsertEndpoint::Concept(idn) => match self.resolve_identity(idn)? {
                Some(c) => Ok(c.id),
                None => Err(KipError::not_found(match idn {
                    ConceptIdentity::Id(s) => format!("concept {s} does not exist"),
                    ConceptIdentity::TypeName { ty, name } => format!("concept {{type: \"{ty}\", name: \"{name}\"}} does not exist"),
                })),
            },
            UpsertEndpoint::Prop(p) => self.resolve_prop(p, handles),
        }
    }

    fn check_version(&self, expect: Option<u64>, current: Option<i64>, what: &str) -> KipResult<()> {
        let Some(want) = expect else { return Ok(()) };
        let ok = match current {
            None => want == 0,
            Some(v) => want != 0 && v as u64 == want,
        };
        if !ok {
            let got = current.map(|v| v.to_string()).unwrap_or_else(|| "absent".into());
            return Err(KipError::new(
                crate::kip::ErrorCode::VersionConflict,
                format!("EXPECT VERSION {want} does not match {what} (current _version: {got}); nothing was written"),
            ));
        }
        Ok(())
    }

    /// Creates or updates a proposition; returns its id.
    fn upsert_prop(&self, s: i64, p: &str, o: i64, attrs: Option<&Map<String, Value>>, meta: &Map<String, Value>, expect: Option<u64>) -> KipResult<i64> {
        if !self.predicate_defined(p)? {
            return Err(KipError::type_mismatch(format!("predicate \"{p}\" is not defined"))
                .with_hint(format!("Define it first: UPSERT {{ CONCEPT ?p {{ {{type: \"$PropositionType\", name: \"{p}\"}} }} }}")));
        }
        if s == o {
            return Err(KipError::syntax(format!("Subject and object cannot be the same: a \"{p}\" self-loop is not allowed")));
        }
        let existing = store::prop_by_spo(self.conn, s, p, o)?;
        self.check_version(expect, existing.as_ref().map(|x| x.version), &format!("proposition \"{p}\""))?;
        let empty = Map::new();
        let attrs = attrs.unwrap_or(&empty);
        match existing {
            Some(x) => {
                let na = shallow(&x.attributes, attrs);
                let nm = shallow(&x.metadata, meta);
                if na != x.attributes || nm != x.metadata {
                    if !self.system && prop_is_protected(self.conn, s)? {
                        return Err(KipError::immutable(format!("proposition {} anchors a protected definition", x.kip_id())));
                    }
                    store::update_prop(self.conn, x.id, &na, &nm)?;
                }
                Ok(x.id)
            }
            None => {
                if !self.system && prop_is_protected(self.conn, s)? {
                    return Err(KipError::immutable("cannot add propositions to a protected definition"));
                }
                store::insert_prop(self.conn, s, p, o, attrs, meta)
            }
        }
    }

    pub fn upsert(&self, stmts: &[UpsertStmt]) -> KipResult<UpsertReport> {
        let mut rep = UpsertReport::default();
        for st in stmts {
            self.upsert_one(st, &mut rep)?;
            rep.blocks += 1;
        }
        Ok(rep)
    }

    fn upsert_one(&self, st: &UpsertStmt, rep: &mut UpsertReport) -> KipResult<()> {
        // reserved keys anywhere in the statement are refused before writing
        if let Some(m) = &st.metadata {
            check_reserved(m)?;
        }
        for it in &st.items {
            match it {
                UpsertItem::Concept(c) => {
                    if let Some(m) = &c.metadata {
                        check_reserved(m)?;
                    }
                    for sp in &c.propositions {
                        if let Some(m) = &sp.metadata {
                            check_reserved(m)?;
                        }
                    }
                }
                UpsertItem::Prop(p) => {
                    if let Some(m) = &p.metadata {
                        check_reserved(m)?;
                    }
                }
            }
        }
        let mut handles: HashMap<String, i64> = HashMap::new();
        for it in &st.items {
            match it {
                UpsertItem::Concept(c) => {
                    let id = self.concept_block(c, st.metadata.as_ref(), &mut handles)?;
                    rep.concepts.push(ids::concept_id(id));
                }
                UpsertItem::Prop(p) => {
                    let meta = merged(&[st.metadata.as_ref(), p.metadata.as_ref()]);
                    let id = match &p.pattern {
                        UpsertProp::Id(_) => {
                            let id = self.resolve_prop(&p.pattern, &handles)?;
                            let x = store::prop_by_id(self.conn, id)?.ok_or_else(|| KipError::not_found("proposition vanished"))?;
                            self.upsert_prop(x.subject, &x.predicate, x.object, p.attributes.as_ref(), &meta, p.expect_version)?
                        }
                        UpsertProp::Triple { subject, predicate, object } => {
                            let s = self.resolve_endpoint(subject, &handles)?;
                            let o = self.resolve_endpoint(object, &handles)?;
                            self.upsert_prop(s, predicate, o, p.attributes.as_ref(), &meta, p.expect_version)?
                        }
                    };
                    if let Some(h) = &p.handle {
                        handles.insert(h.clone(), id);
                    }
                    let pred = store::prop_by_id(self.conn, id)?.map(|x| x.predicate).unwrap_or_default();
                    rep.propositions.push(ids::prop_id(id, &pred));
                }
            }
        }
        Ok(())
    }

    fn concept_block(&self, c: &ConceptBlock, stmt_meta: Option<&Map<String, Value>>, handles: &mut HashMap<String, i64>) -> KipResult<i64> {
        let meta = merged(&[stmt_meta, c.metadata.as_ref()]);
        let existing = self.resolve_identity(&c.identity)?;
        let (ty, name) = match (&c.identity, &existing) {
            (_, Some(x)) => (x.ty.clone(), x.name.clone()),
            (ConceptIdentity::TypeName { ty, name }, None) => (ty.clone(), name.clone()),
            (ConceptIdentity::Id(s), None) => return Err(KipError::not_found(format!("concept {s} does not exist"))),
        };
        if !self.type_defined(&ty, &name)? {
            return Err(KipError::type_mismatch(format!("concept type \"{ty}\" is not defined"))
                .with_hint(format!("Define it first: UPSERT {{ CONCEPT ?t {{ {{type: \"$ConceptType\", name: \"{ty}\"}} }} }}, or check DESCRIBE CONCEPT TYPES (types are case-sensitive).")));
        }
        self.check_version(c.expect_version, existing.as_ref().map(|x| x.version), &format!("concept {ty}:{name}"))?;
        let empty = Map::new();
        let attrs = c.attributes.as_ref().unwrap_or(&empty);
        let protected = is_protected_concept(&ty, &name);
        if !self.system && is_system_actor(&ty, &name) && attrs.contains_key("core_directives") {
            return Err(KipError::immutable(format!("core_directives of {name} are protected")));
        }
        let id = match &existing {
            Some(x) => {
                let na = shallow(&x.attributes, attrs);
                let nm = shallow(&x.metadata, &meta);
                if na != x.attributes || nm != x.metadata {
                    if protected && !self.system {
                        return Err(KipError::immutable(format!("{ty}:{name} is a protected definition")));
                    }
                    store::update_concept(self.conn, x.id, &na, &nm)?;
                }
                x.id
            }
            None => {
                if protected && !self.system {
                    return Err(KipError::immutable(format!("{ty}:{name} is a protected definition")));
                }
                store::insert_concept(self.conn, &ty, &name, attrs, &meta)?
            }
        };
        if let Some(h) = &c.handle {
            handles.insert(h.clone(), id);
        }
        for sp in &c.propositions {
            let target = self.resolve_endpoint(&sp.target, handles)?;
            if target == id {
                return Err(KipError::syntax(format!(
                    "self-loop: {ty}:{name} cannot point \"{}\" at itself",
                    sp.predicate
                )));
            }
            let m = merged(&[stmt_meta, c.metadata.as_ref(), sp.metadata.as_ref()]);
            self.upsert_prop(id, &sp.predicate, target, None, &m, None)?;
        }
        Ok(id)
    }
}

pub fn upsert_json(rep: &UpsertReport, dry_run: bool) -> Value {
    json!({
        "blocks": rep.blocks,
        "upsert_concept_nodes": if dry_run { vec![] } else { rep.concepts.clone() },
        "upsert_proposition_links": if dry_run { vec![] } else { rep.propositions.clone() },
    })
}
