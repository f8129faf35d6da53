//! The typed syntax tree of a KIP command. Parameters are already bound:
//! every `:name` placeholder has been replaced by its JSON value.

use serde_json::{Map, Value};

pub type Object = Map<String, Value>;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Find(FindQuery),
    Upsert(Vec<UpsertStmt>),
    Update(UpdateStmt),
    Merge(MergeStmt),
    Delete(DeleteStmt),
    Describe(Describe),
    Search(SearchStmt),
    Export(ExportStmt),
}

impl Command {
    /// KML commands mutate; KQL and META only read.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Command::Upsert(_) | Command::Update(_) | Command::Merge(_) | Command::Delete(_)
        )
    }
    pub fn kind(&self) -> &'static str {
        match self {
            Command::Find(_) => "FIND",
            Command::Upsert(_) => "UPSERT",
            Command::Update(_) => "UPDATE",
            Command::Merge(_) => "MERGE",
            Command::Delete(_) => "DELETE",
            Command::Describe(_) => "DESCRIBE",
            Command::Search(_) => "SEARCH",
            Command::Export(_) => "EXPORT",
        }
    }
}

// ------------------------------------------------------------------ KQL

#[derive(Debug, Clone, PartialEq)]
pub struct FindQuery {
    pub find: Vec<FindExpr>,
    pub where_: Vec<WhereItem>,
    pub order_by: Vec<OrderItem>,
    pub limit: Option<u64>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FindExpr {
    Path(DotPath),
    Agg(Aggregate),
}

impl FindExpr {
    pub fn var(&self) -> &str {
        match self {
            FindExpr::Path(p) => &p.var,
            FindExpr::Agg(a) => &a.path.var,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    pub func: AggFunc,
    pub distinct: bool,
    pub path: DotPath,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

/// `?var.seg.seg...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DotPath {
    pub var: String,
    pub path: Vec<String>,
}

impl DotPath {
    pub fn bare(var: &str) -> Self {
        DotPath {
            var: var.to_string(),
            path: Vec::new(),
        }
    }
}

impl std::fmt::Display for DotPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "?{}", self.var)?;
        for s in &self.path {
            write!(f, ".{s}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum WhereItem {
    Concept(ConceptClause),
    Prop(PropClause),
    Filter(Expr),
    Not(Vec<WhereItem>),
    Optional(Vec<WhereItem>),
    Union(Vec<WhereItem>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConceptClause {
    pub var: Option<String>,
    pub matcher: ConceptMatcher,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConceptMatcher {
    pub id: Option<String>,
    pub ty: Option<String>,
    pub name: Option<String>,
}

impl ConceptMatcher {
    /// `{id}` or `{type, name}` name exactly one node.
    pub fn is_identity(&self) -> bool {
        self.id.is_some() || (self.ty.is_some() && self.name.is_some())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropClause {
    pub var: Option<String>,
    pub pattern: PropPattern,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PropPattern {
    Id(String),
    Triple {
        subject: Box<Endpoint>,
        predicate: PredSpec,
        object: Box<Endpoint>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    Var(String),
    Concept(ConceptMatcher),
    Prop(PropPattern),
}

#[derive(Debug, Clone, PartialEq)]
pub enum PredSpec {
    Var(String),
    Alts(Vec<String>),
    Hop {
        predicate: String,
        min: u32,
        max: Option<u32>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Cmp(Operand, CmpOp, Operand),
    In(Operand, Vec<Value>),
    IsNull(Operand),
    IsNotNull(Operand),
    Str(StrFn, Operand, Operand),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrFn {
    Contains,
    StartsWith,
    EndsWith,
    Regex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Path(DotPath),
    Lit(Value),
}

#[derive(Debug, Clone, PartialEq)]
pub struct OrderItem {
    pub agg: Option<(AggFunc, bool)>,
    pub path: DotPath,
    pub desc: bool,
}

// ------------------------------------------------------------------ KML

#[derive(Debug, Clone, PartialEq)]
pub struct UpsertStmt {
    pub items: Vec<UpsertItem>,
    pub metadata: Option<Object>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum UpsertItem {
    Concept(ConceptBlock),
    Prop(PropBlock),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConceptIdentity {
    Id(String),
    TypeName { ty: String, name: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConceptBlock {
    pub handle: Option<String>,
    pub identity: ConceptIdentity,
    pub expect_version: Option<u64>,
    pub attributes: Option<Object>,
    pub propositions: Vec<SetProp>,
    pub metadata: Option<Object>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SetProp {
    pub predicate: String,
    pub target: UpsertEndpoint,
    pub metadata: Option<Object>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropBlock {
    pub handle: Option<String>,
    pub pattern: UpsertProp,
    pub expect_version: Option<u64>,
    pub attributes: Option<Object>,
    pub metadata: Option<Object>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum UpsertProp {
    Id(String),
    Triple {
        subject: UpsertEndpoint,
        predicate: String,
        object: UpsertEndpoint,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum UpsertEndpoint {
    Handle(String),
    Concept(ConceptIdentity),
    Prop(Box<UpsertProp>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct UpdateStmt {
    pub target: String,
    pub set_attributes: Vec<(String, UpdateValue)>,
    pub set_metadata: Vec<(String, UpdateValue)>,
    pub where_: Vec<WhereItem>,
    pub limit: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum UpdateValue {
    Json(Value),
    Expr(UpdateExpr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum UpdateExpr {
    Add(Box<UpdateExpr>, Box<UpdateExpr>),
    Mul(Box<UpdateExpr>, Box<UpdateExpr>),
    Clamp(Box<UpdateExpr>, Box<UpdateExpr>, Box<UpdateExpr>),
    Coalesce(Box<UpdateExpr>, Box<UpdateExpr>),
    /// A literal operand (a number, or null).
    Lit(Value),
    /// A path on the target itself, without the variable: `["metadata", "confidence"]`.
    Path(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct MergeStmt {
    pub source: String,
    pub target: String,
    pub where_: Vec<WhereItem>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DeleteStmt {
    Attributes {
        keys: Vec<String>,
        target: String,
        where_: Vec<WhereItem>,
    },
    Metadata {
        keys: Vec<String>,
        target: String,
        where_: Vec<WhereItem>,
    },
    Propositions {
        target: String,
        where_: Vec<WhereItem>,
    },
    Concept {
        target: String,
        where_: Vec<WhereItem>,
    },
}

// ------------------------------------------------------------------ META

#[derive(Debug, Clone, PartialEq)]
pub enum Describe {
    Primer,
    Domains,
    ConceptTypes {
        limit: Option<u64>,
        cursor: Option<String>,
    },
    PropositionTypes {
        limit: Option<u64>,
        cursor: Option<String>,
    },
    ConceptType(String),
    PropositionType(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchKind {
    Concept,
    Proposition,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Keyword,
    Semantic,
    Hybrid,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchStmt {
    pub kind: SearchKind,
    pub term: String,
    pub with_type: Option<String>,
    pub mode: Option<SearchMode>,
    pub threshold: Option<f64>,
    pub limit: Option<u64>,
    /// The days a `SEARCH` keeps (`YYYY-MM-DD`, both ends included;
    /// either may be open): a concept's `start_time`, a link's
    /// `observed_at` (else `created_at`). The request's `@since` and
    /// `@until` parameters, an extension RC11 engines ignore (a parameter
    /// no placeholder names is unused).
    pub since: Option<String>,
    pub until: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExportStmt {
    pub target: String,
    pub where_: Vec<WhereItem>,
    pub limit: Option<u64>,
    pub cursor: Option<String>,
}
