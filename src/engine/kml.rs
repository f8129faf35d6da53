//! KML writes. Each statement runs in one transaction opened by the caller:
//! any error rolls the whole statement back, so nothing is half-written.

use crate::kip::ast::*;
use crate::kip::{KipError, KipResult};
use crate::store::db::{Backend, Db, Val};
use crate::store::{self, Concept, ids};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

mod update;
pub use update::update;

/// Concepts whose definitions the whole schema stands on (`KIP_3004`):
/// the meta-types, the `Domain` type, the `belongs_to_domain` predicate and
/// the core domains the bootstrap creates and the sleep cycle relies on.
pub const PROTECTED: [(&str, &str); 8] = [
    ("$ConceptType", "$ConceptType"),
    ("$ConceptType", "$PropositionType"),
    ("$ConceptType", "Domain"),
    ("$PropositionType", "belongs_to_domain"),
    ("Domain", "CoreSchema"),
    ("Domain", "Unsorted"),
    ("Domain", "Archived"),
    ("Domain", "System"),
];

pub fn is_protected_concept(ty: &str, name: &str) -> bool {
    PROTECTED.iter().any(|(t, n)| *t == ty && *n == name)
}

/// `PROTECTED` as an SQL row-value list, for `(type, name) IN (...)`.
fn protected_values() -> String {
    let rows: Vec<String> = PROTECTED
        .iter()
        .map(|(t, n)| format!("('{t}', '{n}')"))
        .collect();
    format!("(VALUES {})", rows.join(", "))
}

/// Attributes of `$self` and `$system` that only the system writes: the
/// core directives, and the sleep cycle's log, last run and saved
/// parameters (which only a maintenance write, the cycle's or an
/// operator's setting, may set).
pub const SYSTEM_KEYS: [&str; 4] = [
    "core_directives",
    "maintenance_log",
    "last_sleep_cycle",
    "sleep_parameters",
];

/// Whether `key` is one of [`SYSTEM_KEYS`].
pub fn is_system_key(key: &str) -> bool {
    SYSTEM_KEYS.contains(&key)
}

pub fn is_system_actor(ty: &str, name: &str) -> bool {
    ty == "Person" && (name == "$self" || name == "$system")
}

pub fn concept_is_protected(conn: Db<'_>, id: i64) -> KipResult<bool> {
    Ok(match store::concept_by_id(conn, id)? {
        Some(c) => is_protected_concept(&c.ty, &c.name),
        None => false,
    })
}

/// Whether a concept is a type or predicate definition filed in the
/// `CoreSchema` domain: the schema every memory and the sleep cycle stand
/// on. Such a definition evolves (its attributes may be written) but is
/// never deleted or merged away, and its `CoreSchema` membership is never
/// severed (the sleep-mode instructions' protected entities: "CoreSchema
/// domain and its definitions").
pub fn is_core_schema_definition(conn: Db<'_>, c: &store::Concept) -> KipResult<bool> {
    if c.ty != "$ConceptType" && c.ty != "$PropositionType" {
        return Ok(false);
    }
    Ok(conn
        .query_i64(
            "SELECT p.id FROM propositions p JOIN concepts d ON d.id = p.object \
             WHERE p.subject = ?1 AND p.predicate = 'belongs_to_domain' \
             AND d.type = 'Domain' AND d.name = 'CoreSchema' LIMIT 1",
            &[Val::Int(c.id)],
        )?
        .is_some())
}

/// The refusal for deleting or merging away a `CoreSchema` definition.
fn core_schema_refusal(c: &store::Concept, what: &str) -> KipError {
    KipError::immutable(format!(
        "{}:{} is a CoreSchema definition and cannot be {what}",
        c.ty, c.name
    ))
    .with_hint(
        "The schema in CoreSchema is protected: its definitions may gain attributes but never go. To retire a type, mark it (e.g. SET ATTRIBUTES { status: \"deprecated\" }).",
    )
}

/// A proposition anchoring a protected node (its subject) is protected too.
pub fn prop_is_protected(conn: Db<'_>, subject: i64) -> KipResult<bool> {
    concept_is_protected(conn, subject)
}

pub fn check_reserved(meta: &Map<String, Value>) -> KipResult<()> {
    if let Some(k) = meta.keys().find(|k| k.starts_with('_')) {
        return Err(KipError::constraint(format!(
            "metadata key \"{k}\" is reserved: `_` keys are engine-maintained"
        )));
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
    pub conn: Db<'c>,
    /// Bootstrap writes may touch protected definitions.
    pub system: bool,
    /// A write made as `$system` (the sleep cycle) may set its log
    /// (`maintenance_log`, `last_sleep_cycle`), never the directives.
    pub maintainer: bool,
    /// Types and predicates already seen defined during this statement.
    defined: std::cell::RefCell<std::collections::HashSet<(bool, String)>>,
    ids: store::IdAllocator,
    /// Concepts this statement created, with whether each is a protected
    /// definition: they have no links but the ones in `links`.
    fresh: std::cell::RefCell<HashMap<i64, bool>>,
    /// Links this statement created, by (subject, predicate, object).
    links: std::cell::RefCell<HashMap<(i64, String, i64), i64>>,
    /// Endpoints already resolved by type and name.
    named: std::cell::RefCell<HashMap<(String, String), i64>>,
    /// Links of concepts this statement created, not yet written: they
    /// are written together before anything reads, and at the end
    /// ([`WriteCtx::db`]).
    pending: std::cell::RefCell<Vec<store::NewLink>>,
    /// Concepts a bulk statement creates, not yet written (as `pending`).
    pending_concepts: std::cell::RefCell<Vec<store::NewConcept>>,
    /// Names a bulk statement's concept blocks give that were found to
    /// name nothing (one read for all, [`WriteCtx::look_ahead`]).
    absent: std::cell::RefCell<std::collections::HashSet<(String, String)>>,
}

/// A statement with at least this many plain concept blocks looks their
/// names up at once, and writes the new concepts and their links
/// together; fewer are written one by one (a name looked up ahead would
/// cost more than it saves).
const LOOK_AHEAD_FROM: usize = 8;

#[derive(Default)]
pub struct UpsertReport {
    pub blocks: usize,
    pub concepts: Vec<String>,
    pub propositions: Vec<String>,
}

/// Metadata that says where an element came from: a maintenance write
/// (the sleep cycle, or the approval of its proposal) never rewrites them
/// on an element that has them; it records itself in
/// `maintained_by` / `maintained_at` instead.
pub const ORIGIN_KEYS: [&str; 3] = ["source", "author", "created_at"];

impl<'c> WriteCtx<'c> {
    /// `new` (the metadata an update would leave) with the element's
    /// origin kept, when this is a maintenance write: `old`'s `source`,
    /// `author` and `created_at` stay; the write's own
    /// `source` and time become `maintained_by` and `maintained_at`.
    fn keep_origin(
        &self,
        old: &Map<String, Value>,
        mut new: Map<String, Value>,
    ) -> Map<String, Value> {
        if !self.maintainer || self.system {
            return new;
        }
        for k in ORIGIN_KEYS {
            // an element whose origin was never recorded does not get the
            // maintainer's as its own: that would say the phase made it
            if !old.contains_key(k) {
                if let Some(v) = new.shift_remove(k) {
                    match k {
                        "source" => {
                            new.insert("maintained_by".into(), v);
                        }
                        "created_at" => {
                            new.insert("maintained_at".into(), v);
                        }
                        _ => {}
                    }
                }
                continue;
            }
            if let Some(was) = old.get(k)
                && new.get(k) != Some(was)
            {
                match k {
                    "source" => {
                        if let Some(v) = new.get(k).cloned() {
                            new.insert("maintained_by".into(), v);
                        }
                    }
                    "created_at" => {
                        if let Some(v) = new.get(k).cloned() {
                            new.insert("maintained_at".into(), v);
                        }
                    }
                    _ => {}
                }
                new.insert(k.to_string(), was.clone());
            }
        }
        new
    }

    pub fn new(conn: impl Into<Db<'c>>, system: bool) -> Self {
        let conn = conn.into();
        WriteCtx {
            conn,
            system,
            maintainer: false,
            defined: Default::default(),
            ids: Default::default(),
            fresh: Default::default(),
            links: Default::default(),
            named: Default::default(),
            pending: Default::default(),
            pending_concepts: Default::default(),
            absent: Default::default(),
        }
    }

    /// The database, to read or write: the pending concepts and links are
    /// written first, so every read sees them.
    fn db(&self) -> KipResult<Db<'c>> {
        let concepts = std::mem::take(&mut *self.pending_concepts.borrow_mut());
        if !concepts.is_empty() {
            store::insert_concepts(self.conn, &concepts)?;
        }
        let links = std::mem::take(&mut *self.pending.borrow_mut());
        if !links.is_empty() {
            store::insert_links(self.conn, &links)?;
        }
        Ok(self.conn)
    }

    /// Whether a concept block can be written without reading first: a
    /// plain named concept, no version expected, no protected or system
    /// identity.
    fn plain(c: &ConceptBlock) -> Option<(&str, &str)> {
        match &c.identity {
            ConceptIdentity::TypeName { ty, name }
                if c.expect_version.is_none()
                    && !is_protected_concept(ty, name)
                    && !is_system_actor(ty, name) =>
            {
                Some((ty, name))
            }
            _ => None,
        }
    }

    /// For a bulk statement: every name its plain concept blocks and their
    /// link targets give, looked up in one read. The ones found resolve
    /// from then on without a read; the blocks naming nothing are
    /// created without one.
    fn look_ahead(&self, st: &UpsertStmt) -> KipResult<()> {
        let mut names: Vec<(String, String)> = Vec::new();
        let mut blocks = 0;
        for it in &st.items {
            if let UpsertItem::Concept(c) = it
                && let Some((ty, name)) = Self::plain(c)
            {
                blocks += 1;
                names.push((ty.to_string(), name.to_string()));
                for sp in &c.propositions {
                    if let UpsertEndpoint::Concept(ConceptIdentity::TypeName { ty, name }) =
                        &sp.target
                    {
                        names.push((ty.clone(), name.clone()));
                    }
                }
            }
        }
        if blocks < LOOK_AHEAD_FROM {
            return Ok(());
        }
        {
            let named = self.named.borrow();
            names.retain(|k| !named.contains_key(k));
        }
        names.sort_unstable();
        names.dedup();
        let found = store::concept_ids_by_type_names(self.db()?, &names)?;
        let mut absent = self.absent.borrow_mut();
        for it in &st.items {
            if let UpsertItem::Concept(c) = it
                && let Some((ty, name)) = Self::plain(c)
            {
                let k = (ty.to_string(), name.to_string());
                if !found.contains_key(&k) && !self.named.borrow().contains_key(&k) {
                    absent.insert(k);
                }
            }
        }
        self.named.borrow_mut().extend(found);
        Ok(())
    }

    /// Whether `s` anchors a protected definition (known without a read for
    /// the concepts this statement created).
    fn anchors_protected(&self, s: i64) -> KipResult<bool> {
        match self.fresh.borrow().get(&s) {
            Some(p) => Ok(*p),
            None => prop_is_protected(self.db()?, s),
        }
    }

    fn cached_defined(&self, is_type: bool, name: &str) -> KipResult<bool> {
        let key = (is_type, name.to_string());
        if self.defined.borrow().contains(&key) {
            return Ok(true);
        }
        let meta = if is_type {
            "$ConceptType"
        } else {
            "$PropositionType"
        };
        // (a pending concept matters only if it is a definition)
        let db = if self.pending_concepts.borrow().iter().any(|c| c.ty == meta) {
            self.db()?
        } else {
            self.conn
        };
        let ok = store::concept_id_by_type_name(db, meta, name)?.is_some();
        if ok {
            self.defined.borrow_mut().insert(key);
        }
        Ok(ok)
    }

    fn type_defined(&self, ty: &str, name: &str) -> KipResult<bool> {
        if ty == "$ConceptType" && name == "$ConceptType" {
            return Ok(true);
        }
        self.cached_defined(true, ty)
    }

    fn predicate_defined(&self, p: &str) -> KipResult<bool> {
        self.cached_defined(false, p)
    }

    fn resolve_identity(&self, idn: &ConceptIdentity) -> KipResult<Option<Concept>> {
        match idn {
            ConceptIdentity::Id(s) => match ids::parse_concept_id(s) {
                Some(n) => store::concept_by_id(self.db()?, n),
                None if s.starts_with("P:") => Err(KipError::syntax(format!(
                    "{s} must be a Concept ID (C:<n>)"
                ))),
                None => Ok(None),
            },
            ConceptIdentity::TypeName { ty, name } => {
                store::concept_by_type_name(self.db()?, ty, name)
            }
        }
    }

    /// The id alone: endpoints need no attribute parsing.
    fn resolve_identity_id(&self, idn: &ConceptIdentity) -> KipResult<Option<i64>> {
        match idn {
            ConceptIdentity::TypeName { ty, name } => {
                let key = (ty.clone(), name.clone());
                if let Some(id) = self.named.borrow().get(&key) {
                    return Ok(Some(*id));
                }
                let id = store::concept_id_by_type_name(self.db()?, ty, name)?;
                if let Some(id) = id {
                    self.named.borrow_mut().insert(key, id);
                }
                Ok(id)
            }
            ConceptIdentity::Id(_) => Ok(self.resolve_identity(idn)?.map(|c| c.id)),
        }
    }

    fn resolve_prop(&self, p: &UpsertProp, handles: &HashMap<String, i64>) -> KipResult<i64> {
        match p {
            UpsertProp::Id(s) => match ids::parse_prop_id(s) {
                ids::PropIdParse::Ok(n, pred) if n >= 0 => store::prop_by_id(self.db()?, n)?
                    .filter(|x| pred.as_deref().is_none_or(|p| p == x.predicate))
                    .map(|x| x.id)
                    .ok_or_else(|| KipError::not_found(format!("proposition {s} does not exist"))),
                ids::PropIdParse::NotAProposition => Err(KipError::syntax(format!(
                    "{s} must be a Proposition ID (P:<n>:<predicate>)"
                ))),
                _ => Err(KipError::not_found(format!(
                    "proposition {s} does not exist"
                ))),
            },
            UpsertProp::Triple {
                subject,
                predicate,
                object,
            } => {
                let s = self.resolve_endpoint(subject, handles)?;
                let o = self.resolve_endpoint(object, handles)?;
                store::prop_by_spo(self.db()?, s, predicate, o)?
                    .map(|x| x.id)
                    .ok_or_else(|| {
                        KipError::not_found(format!(
                            "proposition (…, \"{predicate}\", …) does not exist"
                        ))
                    })
            }
        }
    }

    fn resolve_endpoint(
        &self,
        e: &UpsertEndpoint,
        handles: &HashMap<String, i64>,
    ) -> KipResult<i64> {
        match e {
            UpsertEndpoint::Handle(h) => handles.get(h).copied().ok_or_else(|| {
                KipError::reference(format!("handle ?{h} is used before it is defined")).with_hint(
                    "Define each CONCEPT/PROPOSITION handle before the clauses that reference it.",
                )
            }),
            UpsertEndpoint::Concept(idn) => match self.resolve_identity_id(idn)? {
                Some(id) => Ok(id),
                None => Err(KipError::not_found(match idn {
                    ConceptIdentity::Id(s) => format!("concept {s} does not exist"),
                    ConceptIdentity::TypeName { ty, name } => {
                        format!("concept {{type: \"{ty}\", name: \"{name}\"}} does not exist")
                    }
                })),
            },
            UpsertEndpoint::Prop(p) => self.resolve_prop(p, handles),
        }
    }

    fn check_version(
        &self,
        expect: Option<u64>,
        current: Option<i64>,
        what: &str,
    ) -> KipResult<()> {
        let Some(want) = expect else { return Ok(()) };
        let ok = match current {
            None => want == 0,
            Some(v) => want != 0 && v as u64 == want,
        };
        if !ok {
            let got = current
                .map(|v| v.to_string())
                .unwrap_or_else(|| "absent".into());
            return Err(KipError::new(
                crate::kip::ErrorCode::VersionConflict,
                format!(
                    "EXPECT VERSION {want} does not match {what} (current _version: {got}); nothing was written"
                ),
            ));
        }
        Ok(())
    }

    /// Creates or updates a proposition; returns its id.
    fn upsert_prop(
        &self,
        s: i64,
        p: &str,
        o: i64,
        attrs: Option<&Map<String, Value>>,
        meta: &Map<String, Value>,
        expect: Option<u64>,
    ) -> KipResult<i64> {
        if !self.predicate_defined(p)? {
            return Err(KipError::type_mismatch(format!("predicate \"{p}\" is not defined"))
                .with_hint(format!("Define it first: UPSERT {{ CONCEPT ?p {{ {{type: \"$PropositionType\", name: \"{p}\"}} }} }}")));
        }
        if s == o {
            return Err(KipError::syntax(format!(
                "Subject and object cannot be the same: a \"{p}\" self-loop is not allowed"
            )));
        }
        // a concept this statement created has only the links it made here
        let existing =
            if self.fresh.borrow().contains_key(&s) || self.fresh.borrow().contains_key(&o) {
                let made = self.links.borrow().get(&(s, p.to_string(), o)).copied();
                match made {
                    Some(id) => store::prop_by_id(self.db()?, id)?,
                    None => None,
                }
            } else {
                store::prop_by_spo(self.db()?, s, p, o)?
            };
        self.check_version(
            expect,
            existing.as_ref().map(|x| x.version),
            &format!("proposition \"{p}\""),
        )?;
        let empty = Map::new();
        let attrs = attrs.unwrap_or(&empty);
        match existing {
            Some(x) => {
                let na = shallow(&x.attributes, attrs);
                let nm = self.keep_origin(&x.metadata, shallow(&x.metadata, meta));
                if na != x.attributes || nm != x.metadata {
                    if !self.system && self.anchors_protected(s)? {
                        return Err(KipError::immutable(format!(
                            "proposition {} anchors a protected definition",
                            x.kip_id()
                        )));
                    }
                    store::update_prop(self.db()?, x.id, &na, &nm)?;
                }
                Ok(x.id)
            }
            None => {
                if !self.system && self.anchors_protected(s)? {
                    return Err(KipError::immutable(
                        "cannot add propositions to a protected definition",
                    ));
                }
                // a link of a concept created here cannot exist yet: it
                // waits to be written with the others
                let fresh = {
                    let f = self.fresh.borrow();
                    f.contains_key(&s) || f.contains_key(&o)
                };
                let id = if fresh {
                    let id = self.ids.alloc(self.conn)?;
                    let full = {
                        let mut pending = self.pending.borrow_mut();
                        pending.push(store::NewLink {
                            id,
                            subject: s,
                            predicate: p.to_string(),
                            object: o,
                            attributes: attrs.clone(),
                            metadata: meta.clone(),
                        });
                        pending.len() >= store::LINKS_PER_INSERT
                    };
                    if full {
                        self.db()?;
                    }
                    id
                } else {
                    store::insert_prop(self.db()?, &self.ids, s, p, o, attrs, meta)?
                };
                self.links.borrow_mut().insert((s, p.to_string(), o), id);
                Ok(id)
            }
        }
    }

    pub fn upsert(&self, stmts: &[UpsertStmt]) -> KipResult<UpsertReport> {
        let mut rep = UpsertReport::default();
        for st in stmts {
            self.upsert_one(st, &mut rep)?;
            rep.blocks += 1;
        }
        self.db()?;
        self.ids.flush(self.conn)?;
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
        self.look_ahead(st)?;
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
                            let x = store::prop_by_id(self.db()?, id)?
                                .ok_or_else(|| KipError::not_found("proposition vanished"))?;
                            self.upsert_prop(
                                x.subject,
                                &x.predicate,
                                x.object,
                                p.attributes.as_ref(),
                                &meta,
                                p.expect_version,
                            )?
                        }
                        UpsertProp::Triple {
                            subject,
                            predicate,
                            object,
                        } => {
                            let s = self.resolve_endpoint(subject, &handles)?;
                            let o = self.resolve_endpoint(object, &handles)?;
                            self.upsert_prop(
                                s,
                                predicate,
                                o,
                                p.attributes.as_ref(),
                                &meta,
                                p.expect_version,
                            )?
                        }
                    };
                    if let Some(h) = &p.handle {
                        handles.insert(h.clone(), id);
                    }
                    let pred = match &p.pattern {
                        UpsertProp::Triple { predicate, .. } => predicate.clone(),
                        UpsertProp::Id(_) => store::prop_by_id(self.db()?, id)?
                            .map(|x| x.predicate)
                            .unwrap_or_default(),
                    };
                    rep.propositions.push(ids::prop_id(id, &pred));
                }
            }
        }
        Ok(())
    }

    fn concept_block(
        &self,
        c: &ConceptBlock,
        stmt_meta: Option<&Map<String, Value>>,
        handles: &mut HashMap<String, i64>,
    ) -> KipResult<i64> {
        let meta = merged(&[stmt_meta, c.metadata.as_ref()]);
        // On PostgreSQL a named concept of a type not yet known here is
        // inserted by the statement that checks its type (one round trip
        // instead of two); one that exists, or an undefined type, goes on
        // below as it would have.
        let mut tried = false;
        if let Some((ty, name)) = Self::plain(c)
            && self.conn.backend() == Backend::Postgres
            && !(ty == "$ConceptType" && name == "$ConceptType")
            && !self.defined.borrow().contains(&(true, ty.to_string()))
        {
            let key = (ty.to_string(), name.to_string());
            if !self.absent.borrow().contains(&key) && !self.named.borrow().contains_key(&key) {
                let empty = Map::new();
                let attrs = c.attributes.as_ref().unwrap_or(&empty);
                let (defined, made) =
                    store::insert_concept_if_typed(self.db()?, &self.ids, ty, name, attrs, &meta)?;
                if defined {
                    self.defined.borrow_mut().insert((true, ty.to_string()));
                    tried = true;
                }
                if let Some(id) = made {
                    self.created(id, false, ty, name);
                    return self.concept_links(c, id, (ty, name), stmt_meta, handles);
                }
            }
        }
        // A bulk UPSERT mostly creates: an ordinary named concept without a
        // version expectation is inserted straight away, and only one that
        // already exists takes the read-and-merge path below.
        if let Some((ty, name)) = Self::plain(c)
            && self.type_defined(ty, name)?
        {
            let empty = Map::new();
            let attrs = c.attributes.as_ref().unwrap_or(&empty);
            let key = (ty.to_string(), name.to_string());
            // looked up ahead and absent: written with the others
            if self.absent.borrow_mut().remove(&key) {
                let id = self.ids.alloc(self.conn)?;
                let full = {
                    let mut pending = self.pending_concepts.borrow_mut();
                    pending.push(store::NewConcept {
                        id,
                        ty: key.0,
                        name: key.1,
                        attributes: attrs.clone(),
                        metadata: meta,
                    });
                    pending.len() >= store::LINKS_PER_INSERT
                };
                if full {
                    self.db()?;
                }
                self.created(id, false, ty, name);
                return self.concept_links(c, id, (ty, name), stmt_meta, handles);
            }
            // known to exist: merged below, without trying to insert
            if !tried
                && !self.named.borrow().contains_key(&key)
                && let Some(id) =
                    store::insert_concept_if_new(self.db()?, &self.ids, ty, name, attrs, &meta)?
            {
                self.created(id, false, ty, name);
                return self.concept_links(c, id, (ty, name), stmt_meta, handles);
            }
        }
        let existing = self.resolve_identity(&c.identity)?;
        let (ty, name) = match (&c.identity, &existing) {
            (_, Some(x)) => (x.ty.clone(), x.name.clone()),
            (ConceptIdentity::TypeName { ty, name }, None) => (ty.clone(), name.clone()),
            (ConceptIdentity::Id(s), None) => {
                return Err(KipError::not_found(format!("concept {s} does not exist")));
            }
        };
        if !self.type_defined(&ty, &name)? {
            return Err(KipError::type_mismatch(format!("concept type \"{ty}\" is not defined"))
                .with_hint(format!("Define it first: UPSERT {{ CONCEPT ?t {{ {{type: \"$ConceptType\", name: \"{ty}\"}} }} }}, or check DESCRIBE CONCEPT TYPES (types are case-sensitive).")));
        }
        self.check_version(
            c.expect_version,
            existing.as_ref().map(|x| x.version),
            &format!("concept {ty}:{name}"),
        )?;
        let empty = Map::new();
        let attrs = c.attributes.as_ref().unwrap_or(&empty);
        let protected = is_protected_concept(&ty, &name);
        if !self.system
            && is_system_actor(&ty, &name)
            && let Some(k) = attrs
                .keys()
                .find(|k| is_system_key(k) && !(self.maintainer && *k != "core_directives"))
        {
            return Err(KipError::immutable(format!(
                "{k} of {name} is written by the system only"
            )));
        }
        let id = match &existing {
            Some(x) => {
                let na = shallow(&x.attributes, attrs);
                let nm = self.keep_origin(&x.metadata, shallow(&x.metadata, &meta));
                if na != x.attributes || nm != x.metadata {
                    if protected && !self.system {
                        return Err(KipError::immutable(format!(
                            "{ty}:{name} is a protected definition"
                        )));
                    }
                    store::update_concept(self.db()?, x.id, &na, &nm)?;
                }
                x.id
            }
            None => {
                if protected && !self.system {
                    return Err(KipError::immutable(format!(
                        "{ty}:{name} is a protected definition"
                    )));
                }
                let id = store::insert_concept(self.db()?, &self.ids, &ty, &name, attrs, &meta)?;
                self.created(id, protected, &ty, &name);
                id
            }
        };
        self.concept_links(c, id, (&ty, &name), stmt_meta, handles)
    }

    /// Remembers a concept this statement created: it has no links but the
    /// ones made here, and its identity resolves without a read.
    fn created(&self, id: i64, protected: bool, ty: &str, name: &str) {
        self.fresh.borrow_mut().insert(id, protected);
        self.named
            .borrow_mut()
            .insert((ty.to_string(), name.to_string()), id);
    }

    /// A concept block's handle and its `SET PROPOSITIONS`, once the
    /// concept `id` exists.
    fn concept_links(
        &self,
        c: &ConceptBlock,
        id: i64,
        (ty, name): (&str, &str),
        stmt_meta: Option<&Map<String, Value>>,
        handles: &mut HashMap<String, i64>,
    ) -> KipResult<i64> {
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

// ---------------------------------------------------------------- matching

use super::plan::{self as planner, Binding, Planner, Selection};

/// The distinct element ids a `WHERE` binds to `var`.
pub fn match_targets(
    conn: Db<'_>,
    where_: &[WhereItem],
    var: &str,
    limit: Option<u64>,
) -> KipResult<Vec<i64>> {
    let sel = Selection {
        vars: vec![var.to_string()],
        order: vec![],
        limit,
        offset: 0,
        carry: vec![],
        all_rows: limit.is_none(),
        after: None,
    };
    let Some(c) = Planner::new(conn).compile(where_, &sel)? else {
        return Ok(vec![]);
    };
    let rows = planner::run(conn, &c, 1)?;
    let mut out = Vec::new();
    for r in rows {
        match &r[0] {
            Binding::Elem(id) => out.push(*id),
            Binding::Pred(_) => {
                return Err(KipError::reference(format!(
                    "?{var} binds a predicate name, not an element"
                )));
            }
            Binding::Null => {}
        }
    }
    Ok(out)
}

fn protected_element(conn: Db<'_>, el: &store::Element) -> KipResult<Option<String>> {
    Ok(match el {
        store::Element::Concept(c) if is_protected_concept(&c.ty, &c.name) => {
            Some(format!("{}:{} is a protected definition", c.ty, c.name))
        }
        store::Element::Prop(p) if prop_is_protected(conn, p.subject)? => Some(format!(
            "proposition {} anchors a protected definition",
            p.kip_id()
        )),
        _ => None,
    })
}

/// Deletes the given propositions and, transitively, every proposition
/// that references a deleted element. Returns how many propositions went.
pub fn cascade_delete(conn: Db<'_>, seeds: &[i64]) -> KipResult<usize> {
    if seeds.is_empty() {
        return Ok(0);
    }
    let seed_json = serde_json::to_string(seeds).unwrap_or_else(|_| "[]".into());
    let run = |sql: &str, p: &[Val]| -> KipResult<u64> { conn.execute(sql, p) };
    run(
        "CREATE TEMP TABLE IF NOT EXISTS doomed_(id BIGINT PRIMARY KEY)",
        &[],
    )?;
    run("DELETE FROM doomed_", &[])?;
    run(
        match conn.backend() {
            Backend::Sqlite => {
                "WITH RECURSIVE d(id) AS (SELECT value FROM json_each(?1) \
                   UNION SELECT p.id FROM propositions p JOIN d ON p.subject = d.id \
                   UNION SELECT p.id FROM propositions p JOIN d ON p.object = d.id) \
                 INSERT OR IGNORE INTO doomed_(id) SELECT id FROM d"
            }
            // the recursive term may name `d` once
            Backend::Postgres => {
                "INSERT INTO doomed_(id) WITH RECURSIVE d(id) AS (SELECT value::bigint FROM jsonb_array_elements_text(?1::jsonb) \
                   UNION SELECT x.id FROM d, LATERAL (SELECT p.id FROM propositions p WHERE p.subject = d.id \
                     UNION ALL SELECT p.id FROM propositions p WHERE p.object = d.id) x) \
                 SELECT id FROM d ON CONFLICT DO NOTHING"
            }
        },
        &[Val::Text(seed_json)],
    )?;
    // (PostgreSQL has no statistics for the temporary table and would
    // join it by scanning every proposition: it looks the ids up instead)
    let doomed = match conn.backend() {
        Backend::Sqlite => "IN (SELECT id FROM doomed_)",
        Backend::Postgres => "= ANY(ARRAY(SELECT id FROM doomed_))",
    };
    // a cascade never takes a link that anchors a protected definition
    let sql = format!(
        "SELECT p.id, p.predicate FROM propositions p JOIN concepts c ON c.id = p.subject \
         WHERE p.id {doomed} AND (c.type, c.name) IN {} LIMIT 1",
        protected_values()
    );
    if let Some(r) = conn.query_opt(&sql, &[])? {
        let (pid, pred) = (r.i64(0)?, r.text(1)?);
        run("DELETE FROM doomed_", &[])?;
        return Err(KipError::immutable(format!(
            "the delete would take proposition {}, which anchors a protected definition",
            ids::prop_id(pid, &pred)
        )));
    }
    let n = run(&format!("DELETE FROM propositions WHERE id {doomed}"), &[])?;
    run("DELETE FROM doomed_", &[])?;
    Ok(n as usize)
}

pub fn delete(conn: Db<'_>, st: &DeleteStmt) -> KipResult<Value> {
    let (DeleteStmt::Attributes { where_, .. }
    | DeleteStmt::Metadata { where_, .. }
    | DeleteStmt::Propositions { where_, .. }
    | DeleteStmt::Concept { where_, .. }) = st;
    planner::check_bounded(where_, false)?;
    match st {
        DeleteStmt::Attributes {
            keys,
            target,
            where_,
        }
        | DeleteStmt::Metadata {
            keys,
            target,
            where_,
        } => {
            let is_meta = matches!(st, DeleteStmt::Metadata { .. });
            if is_meta && let Some(k) = keys.iter().find(|k| k.starts_with('_')) {
                return Err(KipError::constraint(format!(
                    "metadata key \"{k}\" is reserved and cannot be deleted"
                )));
            }
            let ids = match_targets(conn, where_, target, None)?;
            let (mut nc, mut np) = (0, 0);
            for id in ids {
                let Some(el) = store::element(conn, id)? else {
                    continue;
                };
                let (attrs, meta) = match &el {
                    store::Element::Concept(c) => (&c.attributes, &c.metadata),
                    store::Element::Prop(p) => (&p.attributes, &p.metadata),
                };
                let mut na = attrs.clone();
                let mut nm = meta.clone();
                let map = if is_meta { &mut nm } else { &mut na };
                let mut changed = false;
                for k in keys {
                    changed |= map.shift_remove(k).is_some();
                }
                if changed {
                    if let Some(why) = protected_element(conn, &el)? {
                        return Err(KipError::immutable(why));
                    }
                    if let store::Element::Concept(c) = &el
                        && !is_meta
                        && is_system_actor(&c.ty, &c.name)
                        && let Some(k) = keys.iter().find(|k| is_system_key(k))
                    {
                        return Err(KipError::immutable(format!(
                            "{k} of {} is written by the system only",
                            c.name
                        )));
                    }
                }
                match &el {
                    store::Element::Concept(c) => {
                        if changed {
                            store::update_concept(conn, c.id, &na, &nm)?;
                        }
                        nc += 1;
                    }
                    store::Element::Prop(p) => {
                        if changed {
                            store::update_prop(conn, p.id, &na, &nm)?;
                        }
                        np += 1;
                    }
                }
            }
            Ok(json!({ "updated_concepts": nc, "updated_propositions": np }))
        }
        DeleteStmt::Propositions { target, where_ } => {
            let ids = match_targets(conn, where_, target, None)?;
            let mut seeds = Vec::new();
            for id in ids {
                match store::element(conn, id)? {
                    Some(el @ store::Element::Prop(_)) => {
                        if let Some(why) = protected_element(conn, &el)? {
                            return Err(KipError::immutable(why));
                        }
                        if let store::Element::Prop(p) = &el
                            && p.predicate == "belongs_to_domain"
                            && let Some(def) = store::concept_by_id(conn, p.subject)?
                            && let Some(d) = store::concept_by_id(conn, p.object)?
                            && d.ty == "Domain"
                            && d.name == "CoreSchema"
                            && is_core_schema_definition(conn, &def)?
                        {
                            return Err(core_schema_refusal(&def, "taken out of CoreSchema"));
                        }
                        seeds.push(id);
                    }
                    Some(store::Element::Concept(c)) => {
                        return Err(KipError::constraint(format!(
                            "?{target} binds concept {}: DELETE PROPOSITIONS deletes links (use DELETE CONCEPT ... DETACH)",
                            c.kip_id()
                        )));
                    }
                    None => {}
                }
            }
            let n = cascade_delete(conn, &seeds)?;
            Ok(json!({ "deleted_propositions": n }))
        }
        DeleteStmt::Concept { target, where_ } => {
            let ids = match_targets(conn, where_, target, None)?;
            let mut concepts = Vec::new();
            for id in ids {
                match store::concept_by_id(conn, id)? {
                    Some(c) => {
                        if is_protected_concept(&c.ty, &c.name) || is_system_actor(&c.ty, &c.name) {
                            return Err(KipError::immutable(format!(
                                "{}:{} is protected and cannot be deleted",
                                c.ty, c.name
                            )));
                        }
                        if is_core_schema_definition(conn, &c)? {
                            return Err(core_schema_refusal(&c, "deleted"));
                        }
                        concepts.push(id);
                    }
                    None => {
                        return Err(KipError::constraint(format!(
                            "?{target} binds a proposition: DELETE CONCEPT deletes concepts"
                        )));
                    }
                }
            }
            let n = cascade_delete(conn, &concepts)?;
            for id in &concepts {
                conn.execute("DELETE FROM concepts WHERE id = ?1", &[Val::Int(*id)])?;
            }
            Ok(json!({ "deleted_concepts": concepts.len(), "deleted_propositions": n }))
        }
    }
}

// ---------------------------------------------------------------- MERGE

fn identity_of(where_: &[WhereItem], var: &str) -> Option<(String, String)> {
    where_.iter().find_map(|w| match w {
        WhereItem::Concept(ConceptClause {
            var: Some(v),
            matcher:
                ConceptMatcher {
                    ty: Some(t),
                    name: Some(n),
                    ..
                },
        }) if v == var => Some((t.clone(), n.clone())),
        _ => None,
    })
}

/// Which of `ids` some proposition has as its subject or object.
fn links_about(conn: Db<'_>, ids: &[i64]) -> KipResult<std::collections::HashSet<i64>> {
    let mut out = std::collections::HashSet::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let sql = format!(
        "SELECT subject FROM propositions WHERE {} \
         UNION SELECT object FROM propositions WHERE {}",
        store::id_in(conn, "subject"),
        store::id_in(conn, "object")
    );
    for r in conn.query(&sql, &[store::id_list_arg(ids)])? {
        out.insert(r.i64(0)?);
    }
    Ok(out)
}

pub fn merge(conn: Db<'_>, st: &MergeStmt) -> KipResult<Value> {
    let sources = match match_targets(conn, &st.where_, &st.source, None) {
        Err(e) if e.code == crate::kip::ErrorCode::NotFound => {
            // A replayed merge: say so when the target already carries the
            // source in its provenance trail.
            if let (Some((st_ty, st_name)), Some((tt, tn))) = (
                identity_of(&st.where_, &st.source),
                identity_of(&st.where_, &st.target),
            ) && let Some(t) = store::concept_by_type_name(conn, &tt, &tn)?
            {
                let tag = format!("{st_ty}:{st_name}");
                let merged_already = t
                    .metadata
                    .get("_merged_from")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x == &json!(tag)));
                if merged_already {
                    return Err(KipError::not_found(format!(
                        "{tag} does not exist: it was already merged into {tt}:{tn}"
                    ))
                    .with_hint("The merge already happened; there is nothing left to do."));
                }
            }
            return Err(e);
        }
        other => other?,
    };
    let targets = match_targets(conn, &st.where_, &st.target, None)?;
    let one = |ids: &[i64], var: &str| -> KipResult<i64> {
        match ids {
            [] => Err(KipError::not_found(format!("?{var} matches no concept"))),
            [x] => Ok(*x),
            _ => Err(KipError::new(
                crate::kip::ErrorCode::DuplicateExists,
                format!(
                    "?{var} matches {} concepts; MERGE needs exactly one",
                    ids.len()
                ),
            )),
        }
    };
    let (sid, tid) = (one(&sources, &st.source)?, one(&targets, &st.target)?);
    let s = store::concept_by_id(conn, sid)?
        .ok_or_else(|| KipError::constraint(format!("?{} must bind a concept", st.source)))?;
    let t = store::concept_by_id(conn, tid)?
        .ok_or_else(|| KipError::constraint(format!("?{} must bind a concept", st.target)))?;
    if sid == tid {
        return Ok(
            json!({ "merged": true, "links_repointed": 0, "links_deduplicated": 0, "attributes_filled": 0 }),
        );
    }
    if s.ty != t.ty {
        return Err(KipError::constraint(format!(
            "cannot merge {}:{} into {}:{}: the types differ",
            s.ty, s.name, t.ty, t.name
        )));
    }
    for c in [&s, &t] {
        if is_protected_concept(&c.ty, &c.name) || is_system_actor(&c.ty, &c.name) {
            return Err(KipError::immutable(format!(
                "{}:{} is protected and cannot be merged",
                c.ty, c.name
            )));
        }
    }
    if is_core_schema_definition(conn, &s)? {
        return Err(core_schema_refusal(&s, "merged away"));
    }
    // links between the twins would become self-loops: they go
    let pair = [Val::Int(sid), Val::Int(tid)];
    let loops: Vec<i64> = conn
        .query(
            "SELECT id FROM propositions WHERE (subject = ?1 OR object = ?1) \
             AND (CASE WHEN subject = ?1 THEN ?2 ELSE subject END) = (CASE WHEN object = ?1 THEN ?2 ELSE object END) \
             ORDER BY id",
            &pair,
        )?
        .iter()
        .map(|r| r.i64(0))
        .collect::<KipResult<_>>()?;
    let mut dedup = loops.len();
    cascade_delete(conn, &loops)?;
    // a link the target already has: its attributes and metadata fill the
    // target's copy's gaps, links about it move to that copy, and it goes
    let twins: Vec<(i64, i64)> = conn
        .query(
            "SELECT l.id, k.id FROM propositions l JOIN propositions k ON k.predicate = l.predicate \
               AND k.subject = CASE WHEN l.subject = ?1 THEN ?2 ELSE l.subject END \
               AND k.object = CASE WHEN l.object = ?1 THEN ?2 ELSE l.object END \
             WHERE (l.subject = ?1 OR l.object = ?1) AND k.id != l.id ORDER BY l.id",
            &pair,
        )?
        .iter()
        .map(|r| Ok((r.i64(0)?, r.i64(1)?)))
        .collect::<KipResult<_>>()?;
    // (both copies of every pair read at once, and the links about the
    // folded ones found at once: most have none)
    let pair_ids: Vec<i64> = twins.iter().flat_map(|(l, k)| [*l, *k]).collect();
    let props = store::elements_by_ids(conn, &pair_ids)?;
    let lids: Vec<i64> = twins.iter().map(|(l, _)| *l).collect();
    let talked_about = links_about(conn, &lids)?;
    let mut folded = Vec::with_capacity(twins.len());
    for (lid, kid) in twins {
        let (Some(store::Element::Prop(l)), Some(store::Element::Prop(keep))) =
            (props.get(&lid), props.get(&kid))
        else {
            continue;
        };
        let mut na = keep.attributes.clone();
        for (k, v) in &l.attributes {
            na.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let mut nm = keep.metadata.clone();
        for (k, v) in &l.metadata {
            nm.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if na != keep.attributes || nm != keep.metadata {
            store::update_prop(conn, keep.id, &na, &nm)?;
        }
        // links about the folded twin move to the kept copy, except one
        // the copy already has
        if talked_about.contains(&lid) {
            let moved = [Val::Int(lid), Val::Int(keep.id)];
            conn.execute(
                "UPDATE propositions SET subject = ?2, version = version + 1 WHERE subject = ?1 \
                 AND NOT EXISTS (SELECT 1 FROM propositions q WHERE q.subject = ?2 AND q.predicate = propositions.predicate AND q.object = propositions.object)",
                &moved,
            )?;
            conn.execute(
                "UPDATE propositions SET object = ?2, version = version + 1 WHERE object = ?1 \
                 AND NOT EXISTS (SELECT 1 FROM propositions q WHERE q.object = ?2 AND q.predicate = propositions.predicate AND q.subject = propositions.subject)",
                &moved,
            )?;
        }
        folded.push(lid);
    }
    // no kept copy is itself a folded twin (it never touches the source),
    // so the folded ones go in one cascade
    cascade_delete(conn, &folded)?;
    dedup += folded.len();
    // the rest move over in one statement
    let repointed = conn.execute(
        "UPDATE propositions SET subject = CASE WHEN subject = ?1 THEN ?2 ELSE subject END, \
         object = CASE WHEN object = ?1 THEN ?2 ELSE object END, version = version + 1, updated_at = ?3 \
         WHERE subject = ?1 OR object = ?1",
        &[Val::Int(sid), Val::Int(tid), store::now().into()],
    )?;
    let mut na = t.attributes.clone();
    let mut filled = 0;
    for (k, v) in &s.attributes {
        if k == "aliases" {
            continue;
        }
        if !na.contains_key(k) {
            na.insert(k.clone(), v.clone());
            filled += 1;
        }
    }
    let mut aliases: Vec<Value> = na
        .get("aliases")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let before = aliases.clone();
    for a in s
        .attributes
        .get("aliases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(std::iter::once(&json!(s.name)))
    {
        if !aliases.contains(a) && a != &json!(t.name) {
            aliases.push(a.clone());
        }
    }
    if aliases != before {
        na.insert("aliases".into(), Value::Array(aliases));
        filled += 1;
    }
    let mut nm = t.metadata.clone();
    let mut trail: Vec<Value> = nm
        .get("_merged_from")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for x in s
        .metadata
        .get("_merged_from")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(std::iter::once(&json!(format!("{}:{}", s.ty, s.name))))
    {
        if !trail.contains(x) {
            trail.push(x.clone());
        }
    }
    nm.insert("_merged_from".into(), Value::Array(trail));
    store::update_concept(conn, tid, &na, &nm)?;
    cascade_delete(conn, &[sid])?;
    conn.execute("DELETE FROM concepts WHERE id = ?1", &[Val::Int(sid)])?;
    Ok(
        json!({ "merged": true, "links_repointed": repointed, "links_deduplicated": dedup, "attributes_filled": filled }),
    )
}
