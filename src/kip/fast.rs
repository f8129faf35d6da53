//! A hand-written recursive-descent reading of `kip.pest`, for speed.
//!
//! The grammar in `kip.pest` is the definition of the language and its pest
//! parser is the authority on every text that does not parse: it names the
//! KIP error code, line and column. This reader walks the same rules byte by
//! byte and builds the same tree with the same checks, an order of magnitude
//! faster than pest on the long `UPSERT` texts agents send. It never reports
//! an error of its own: whatever it does not accept (a syntax error, a
//! failed check, a missing parameter, anything it is unsure of) is handed to
//! the pest parser, which either accepts it or explains why not. Tests hold
//! the two to the same answers on the grammar's corpus and on random
//! mutations of it.
//!
//! Rule by rule, implicit whitespace and comments are skipped before every
//! token of a non-atomic rule (`ws`), never inside an atomic one (names,
//! strings, numbers, keywords, dot paths), as pest does.

use super::ast::*;
use super::limits::{MAX_BOOL_OPERATORS, MAX_NESTING};
use serde_json::{Map, Number, Value};

/// The text is left to the pest parser.
struct Miss;
type R<T> = Result<T, Miss>;

/// Reads `text` into a command, or `None` when the pest parser must decide.
pub fn parse(text: &str, params: &Map<String, Value>) -> Option<Command> {
    let mut r = Reader {
        s: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
        ops: 0,
        params,
    };
    let c = r.command().ok()?;
    r.ws();
    (r.pos == r.s.len()).then_some(c)
}

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    /// Open brackets around `pos`, refused past `MAX_NESTING` as the pest
    /// path refuses them.
    depth: usize,
    /// Boolean operators read so far, left to the pest path (which names
    /// the limit) past `MAX_BOOL_OPERATORS`.
    ops: usize,
    params: &'a Map<String, Value>,
}

fn ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Reader<'a> {
    // ------------------------------------------------------------ lexical

    /// WHITESPACE and COMMENT, as many as there are.
    fn ws(&mut self) {
        while let Some(&b) = self.s.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                0xEF if self.s[self.pos..].starts_with("\u{feff}".as_bytes()) => self.pos += 3,
                b'/' if self.s.get(self.pos + 1) == Some(&b'/') => {
                    self.pos += 2;
                    while let Some(&c) = self.s.get(self.pos) {
                        if c == b'\n' || c == b'\r' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }

    /// Consumes punctuation `b` after whitespace if it is next.
    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            match b {
                b'(' | b'[' | b'{' => self.depth += 1,
                b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
            true
        } else {
            false
        }
    }

    /// `eat`, refusing a bracket that opens past `MAX_NESTING` at once
    /// (before recursing into it).
    fn open(&mut self, b: u8) -> R<bool> {
        if !self.eat(b) {
            return Ok(false);
        }
        if self.depth > MAX_NESTING {
            return Err(Miss);
        }
        Ok(true)
    }

    fn expect(&mut self, b: u8) -> R<()> {
        if self.open(b)? { Ok(()) } else { Err(Miss) }
    }

    /// A literal with no boundary check (`"IN"`, `"id"`, `"||"`).
    fn eat_lit(&mut self, lit: &str) -> bool {
        self.ws();
        if self.s[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    /// A keyword: the word, then not a name character, `?`, `"` or `:`.
    fn kw(&mut self, word: &str) -> bool {
        self.ws();
        let rest = &self.s[self.pos..];
        if rest.starts_with(word.as_bytes())
            && !rest
                .get(word.len())
                .is_some_and(|&b| ident_char(b) || matches!(b, b'?' | b'"' | b':'))
        {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn need_kw(&mut self, word: &str) -> R<()> {
        if self.kw(word) { Ok(()) } else { Err(Miss) }
    }

    /// One of `words` not followed by a name character (`agg_func`,
    /// `matcher_key`, the function names, `true`/`false`/`null`).
    fn word_of(&mut self, words: &[&'static str]) -> Option<&'static str> {
        self.ws();
        let rest = &self.s[self.pos..];
        for w in words {
            if rest.starts_with(w.as_bytes()) && !rest.get(w.len()).is_some_and(|&b| ident_char(b))
            {
                self.pos += w.len();
                return Some(w);
            }
        }
        None
    }

    /// `identifier` at the current byte (no whitespace skipped).
    fn ident_here(&mut self) -> R<&'a str> {
        let start = self.pos;
        match self.s.get(self.pos) {
            Some(&b) if b.is_ascii_alphabetic() || b == b'_' => self.pos += 1,
            _ => return Err(Miss),
        }
        while self.s.get(self.pos).is_some_and(|&b| ident_char(b)) {
            self.pos += 1;
        }
        Ok(&self.text[start..self.pos])
    }

    /// `variable?`
    fn optional_variable(&mut self) -> R<Option<String>> {
        if self.peek() == Some(b'?') {
            Ok(Some(self.variable()?))
        } else {
            Ok(None)
        }
    }

    fn variable(&mut self) -> R<String> {
        if self.peek() != Some(b'?') {
            return Err(Miss);
        }
        self.pos += 1;
        Ok(self.ident_here()?.to_string())
    }

    fn dot_path(&mut self) -> R<DotPath> {
        let var = self.variable()?;
        let mut path = Vec::new();
        while self.s.get(self.pos) == Some(&b'.') {
            let save = self.pos;
            self.pos += 1;
            match self.ident_here() {
                Ok(id) => path.push(id.to_string()),
                Err(_) => {
                    self.pos = save;
                    break;
                }
            }
        }
        Ok(DotPath { var, path })
    }

    fn param(&mut self) -> R<Value> {
        if self.peek() != Some(b':') {
            return Err(Miss);
        }
        self.pos += 1;
        let name = self.ident_here()?;
        self.params.get(name).cloned().ok_or(Miss)
    }

    fn string(&mut self) -> R<String> {
        if self.peek() != Some(b'"') {
            return Err(Miss);
        }
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            match self.s.get(self.pos) {
                None => return Err(Miss),
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    match self.s.get(self.pos + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 2
                        }
                        Some(b'u')
                            if self
                                .s
                                .get(self.pos + 2..self.pos + 6)
                                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
                        {
                            self.pos += 6
                        }
                        _ => return Err(Miss),
                    }
                }
                Some(&b) if b < 0x20 => return Err(Miss),
                Some(_) => self.pos += 1,
            }
        }
        self.pos += 1;
        if escaped {
            serde_json::from_str::<String>(&self.text[start..self.pos]).map_err(|_| Miss)
        } else {
            Ok(self.text[start + 1..self.pos - 1].to_string())
        }
    }

    /// `number`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> R<Value> {
        self.ws();
        let s = self.s;
        let start = self.pos;
        let mut p = self.pos;
        if s.get(p) == Some(&b'-') {
            p += 1;
        }
        match s.get(p) {
            Some(b'0') => p += 1,
            Some(b'1'..=b'9') => {
                while s.get(p).is_some_and(u8::is_ascii_digit) {
                    p += 1;
                }
            }
            _ => return Err(Miss),
        }
        let mut float = false;
        if s.get(p) == Some(&b'.') && s.get(p + 1).is_some_and(u8::is_ascii_digit) {
            float = true;
            p += 1;
            while s.get(p).is_some_and(u8::is_ascii_digit) {
                p += 1;
            }
        }
        if matches!(s.get(p), Some(b'e' | b'E')) {
            let mut q = p + 1;
            if matches!(s.get(q), Some(b'+' | b'-')) {
                q += 1;
            }
            if s.get(q).is_some_and(u8::is_ascii_digit) {
                float = true;
                while s.get(q).is_some_and(u8::is_ascii_digit) {
                    q += 1;
                }
                p = q;
            }
        }
        self.pos = p;
        let t = &self.text[start..p];
        if !float {
            if let Ok(i) = t.parse::<i64>() {
                return Ok(Value::Number(i.into()));
            }
            return t
                .parse::<u64>()
                .map(|u| Value::Number(u.into()))
                .map_err(|_| Miss);
        }
        let f: f64 = t.parse().map_err(|_| Miss)?;
        Number::from_f64(f).map(Value::Number).ok_or(Miss)
    }

    fn uint(&mut self) -> R<&'a str> {
        self.ws();
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(Miss);
        }
        Ok(&self.text[start..self.pos])
    }

    // ------------------------------------------------------------ values

    fn value(&mut self) -> R<Value> {
        match self.peek() {
            Some(b'{') => Ok(Value::Object(self.object()?)),
            Some(b'[') => {
                self.expect(b'[')?;
                let mut v = Vec::new();
                if !self.eat(b']') {
                    loop {
                        v.push(self.value()?);
                        if self.eat(b']') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Ok(Value::Array(v))
            }
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b':') => self.param(),
            _ => match self.word_of(&["true", "false", "null"]) {
                Some("true") => Ok(Value::Bool(true)),
                Some("false") => Ok(Value::Bool(false)),
                Some(_) => Ok(Value::Null),
                None => Err(Miss),
            },
        }
    }

    /// A key of an object: a string or an identifier.
    fn key(&mut self) -> R<String> {
        if self.peek() == Some(b'"') {
            self.string()
        } else {
            Ok(self.ident_here()?.to_string())
        }
    }

    fn object(&mut self) -> R<Map<String, Value>> {
        self.expect(b'{')?;
        let mut m = Map::new();
        if self.eat(b'}') {
            return Ok(m);
        }
        loop {
            let k = self.key()?;
            self.expect(b':')?;
            let v = self.value()?;
            if m.insert(k, v).is_some() {
                return Err(Miss);
            }
            if self.eat(b'}') {
                return Ok(m);
            }
            self.expect(b',')?;
        }
    }

    fn object_or_param(&mut self) -> R<Map<String, Value>> {
        if self.peek() == Some(b':') {
            match self.param()? {
                Value::Object(m) => Ok(m),
                _ => Err(Miss),
            }
        } else {
            self.object()
        }
    }

    fn string_or_param(&mut self) -> R<String> {
        if self.peek() == Some(b':') {
            match self.param()? {
                Value::String(s) => Ok(s),
                _ => Err(Miss),
            }
        } else {
            self.string()
        }
    }

    fn uint_or_param(&mut self) -> R<u64> {
        if self.peek() == Some(b':') {
            self.param()?.as_u64().ok_or(Miss)
        } else {
            self.uint()?.parse().map_err(|_| Miss)
        }
    }

    fn limit(&mut self) -> R<Option<u64>> {
        if !self.kw("LIMIT") {
            return Ok(None);
        }
        match self.uint_or_param()? {
            0 => Err(Miss),
            n => Ok(Some(n)),
        }
    }

    fn cursor(&mut self) -> R<Option<String>> {
        if !self.kw("CURSOR") {
            return Ok(None);
        }
        let s = self.string_or_param()?;
        if s.is_empty() {
            return Err(Miss);
        }
        Ok(Some(s))
    }

    // ------------------------------------------------------------ commands

    fn command(&mut self) -> R<Command> {
        match self.peek() {
            Some(b'F') => Ok(Command::Find(self.find()?)),
            Some(b'U') if self.kw("UPSERT") => {
                let mut out = vec![self.upsert()?];
                while self.kw("UPSERT") {
                    out.push(self.upsert()?);
                }
                Ok(Command::Upsert(out))
            }
            Some(b'U') => Ok(Command::Update(self.update()?)),
            Some(b'M') => {
                self.need_kw("MERGE")?;
                self.need_kw("CONCEPT")?;
                let source = self.variable()?;
                self.need_kw("INTO")?;
                let target = self.variable()?;
                let where_ = self.where_clause()?;
                Ok(Command::Merge(MergeStmt {
                    source,
                    target,
                    where_,
                }))
            }
            Some(b'D') if self.kw("DELETE") => Ok(Command::Delete(self.delete()?)),
            Some(b'D') => Ok(Command::Describe(self.describe()?)),
            Some(b'S') => Ok(Command::Search(self.search()?)),
            Some(b'E') => {
                self.need_kw("EXPORT")?;
                let target = self.variable()?;
                let where_ = self.where_clause()?;
                let limit = self.limit()?;
                let cursor = self.cursor()?;
                Ok(Command::Export(ExportStmt {
                    target,
                    where_,
                    limit,
                    cursor,
                }))
            }
            _ => Err(Miss),
        }
    }

    // ------------------------------------------------------------ KQL

    fn find(&mut self) -> R<FindQuery> {
        self.need_kw("FIND")?;
        self.expect(b'(')?;
        let mut find = Vec::new();
        loop {
            find.push(match self.aggregation()? {
                Some(a) => FindExpr::Agg(a),
                None => FindExpr::Path(self.dot_path()?),
            });
            if self.eat(b')') {
                break;
            }
            self.expect(b',')?;
        }
        let where_ = self.where_clause()?;
        let mut order_by = Vec::new();
        if self.kw("ORDER") {
            self.need_kw("BY")?;
            loop {
                let (agg, path) = match self.aggregation()? {
                    Some(a) => (Some((a.func, a.distinct)), a.path),
                    None => (None, self.dot_path()?),
                };
                let desc = if self.kw("ASC") {
                    false
                } else {
                    self.kw("DESC")
                };
                order_by.push(OrderItem { agg, path, desc });
                if !self.eat(b',') {
                    break;
                }
            }
        }
        let limit = self.limit()?;
        let cursor = self.cursor()?;
        Ok(FindQuery {
            find,
            where_,
            order_by,
            limit,
            cursor,
        })
    }

    /// `agg_func ( DISTINCT? dot_path )`, or `None` when no function name is next.
    fn aggregation(&mut self) -> R<Option<Aggregate>> {
        let func = match self.word_of(&["COUNT", "SUM", "AVG", "MIN", "MAX"]) {
            None => return Ok(None),
            Some("COUNT") => AggFunc::Count,
            Some("SUM") => AggFunc::Sum,
            Some("AVG") => AggFunc::Avg,
            Some("MIN") => AggFunc::Min,
            Some(_) => AggFunc::Max,
        };
        self.expect(b'(')?;
        let distinct = self.kw("DISTINCT");
        let path = self.dot_path()?;
        self.expect(b')')?;
        Ok(Some(Aggregate {
            func,
            distinct,
            path,
        }))
    }

    fn where_clause(&mut self) -> R<Vec<WhereItem>> {
        self.need_kw("WHERE")?;
        self.block()
    }

    fn block(&mut self) -> R<Vec<WhereItem>> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        loop {
            if !out.is_empty() && self.eat(b'}') {
                return Ok(out);
            }
            out.push(self.where_item()?);
        }
    }

    fn where_item(&mut self) -> R<WhereItem> {
        if self.kw("FILTER") {
            self.expect(b'(')?;
            let e = self.bool_expr()?;
            self.expect(b')')?;
            return Ok(WhereItem::Filter(e));
        }
        if self.kw("NOT") {
            return Ok(WhereItem::Not(self.block()?));
        }
        if self.kw("OPTIONAL") {
            return Ok(WhereItem::Optional(self.block()?));
        }
        if self.kw("UNION") {
            return Ok(WhereItem::Union(self.block()?));
        }
        let var = self.optional_variable()?;
        match self.peek() {
            Some(b'{') => Ok(WhereItem::Concept(ConceptClause {
                var,
                matcher: self.matcher()?,
            })),
            Some(b'(') => Ok(WhereItem::Prop(PropClause {
                var,
                pattern: self.prop_pattern()?,
            })),
            _ => Err(Miss),
        }
    }

    /// `{ id|type|name : string_or_param, ... }` with the builder's checks.
    fn matcher(&mut self) -> R<ConceptMatcher> {
        self.expect(b'{')?;
        let mut m = ConceptMatcher::default();
        loop {
            let slot = match self.word_of(&["id", "type", "name"]) {
                Some("id") => &mut m.id,
                Some("type") => &mut m.ty,
                Some(_) => &mut m.name,
                None => return Err(Miss),
            };
            if slot.is_some() {
                return Err(Miss);
            }
            self.expect(b':')?;
            *slot = Some(self.string_or_param()?);
            if self.eat(b'}') {
                break;
            }
            self.expect(b',')?;
        }
        if m.id.is_some() && (m.ty.is_some() || m.name.is_some()) {
            return Err(Miss);
        }
        Ok(m)
    }

    fn prop_pattern(&mut self) -> R<PropPattern> {
        self.expect(b'(')?;
        if self.eat_lit("id") {
            self.expect(b':')?;
            let id = self.string_or_param()?;
            self.expect(b')')?;
            return Ok(PropPattern::Id(id));
        }
        let subject = self.endpoint()?;
        self.expect(b',')?;
        let predicate = self.predicate()?;
        self.expect(b',')?;
        let object = self.endpoint()?;
        self.expect(b')')?;
        Ok(PropPattern::Triple {
            subject: Box::new(subject),
            predicate,
            object: Box::new(object),
        })
    }

    fn endpoint(&mut self) -> R<Endpoint> {
        match self.peek() {
            Some(b'?') => Ok(Endpoint::Var(self.variable()?)),
            Some(b'{') => Ok(Endpoint::Concept(self.matcher()?)),
            Some(b'(') => Ok(Endpoint::Prop(self.prop_pattern()?)),
            _ => Err(Miss),
        }
    }

    fn predicate(&mut self) -> R<PredSpec> {
        if self.peek() == Some(b'?') {
            return Ok(PredSpec::Var(self.variable()?));
        }
        let first = self.string_or_param()?;
        if self.open(b'{')? {
            let min: u32 = self.uint()?.parse().map_err(|_| Miss)?;
            let max = if self.eat(b',') {
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    Some(self.uint()?.parse::<u32>().map_err(|_| Miss)?)
                } else {
                    None
                }
            } else {
                Some(min)
            };
            self.expect(b'}')?;
            if max.is_some_and(|mx| mx < min) {
                return Err(Miss);
            }
            return Ok(PredSpec::Hop {
                predicate: first,
                min,
                max,
            });
        }
        let mut alts = vec![first];
        while self.eat(b'|') {
            alts.push(self.string_or_param()?);
        }
        Ok(PredSpec::Alts(alts))
    }

    // ------------------------------------------------------------ FILTER

    fn op(&mut self) -> R<()> {
        self.ops += 1;
        if self.ops > MAX_BOOL_OPERATORS {
            return Err(Miss);
        }
        Ok(())
    }

    fn bool_expr(&mut self) -> R<Expr> {
        let mut acc = self.and_expr()?;
        while self.eat_lit("||") {
            self.op()?;
            acc = Expr::Or(Box::new(acc), Box::new(self.and_expr()?));
        }
        Ok(acc)
    }

    fn and_expr(&mut self) -> R<Expr> {
        let mut acc = self.unary_expr()?;
        while self.eat_lit("&&") {
            self.op()?;
            acc = Expr::And(Box::new(acc), Box::new(self.unary_expr()?));
        }
        Ok(acc)
    }

    fn unary_expr(&mut self) -> R<Expr> {
        let mut negs = 0;
        while self.eat(b'!') {
            self.op()?;
            negs += 1;
        }
        let mut e = self.bool_primary()?;
        for _ in 0..negs {
            e = Expr::Not(Box::new(e));
        }
        Ok(e)
    }

    fn bool_primary(&mut self) -> R<Expr> {
        if self.open(b'(')? {
            let e = self.bool_expr()?;
            self.expect(b')')?;
            return Ok(e);
        }
        if self.eat_lit("IN") {
            self.expect(b'(')?;
            let a = self.operand()?;
            self.expect(b',')?;
            let values = match self.peek() {
                Some(b'[') => match self.value()? {
                    Value::Array(v) => v,
                    _ => return Err(Miss),
                },
                Some(b':') => match self.param()? {
                    Value::Array(v) => v,
                    _ => return Err(Miss),
                },
                _ => return Err(Miss),
            };
            self.expect(b')')?;
            return Ok(Expr::In(a, values));
        }
        if let Some(name) = self.word_of(&["IS_NOT_NULL", "IS_NULL"]) {
            self.expect(b'(')?;
            let o = self.operand()?;
            self.expect(b')')?;
            return Ok(if name == "IS_NULL" {
                Expr::IsNull(o)
            } else {
                Expr::IsNotNull(o)
            });
        }
        if let Some(name) = self.word_of(&["CONTAINS", "STARTS_WITH", "ENDS_WITH", "REGEX"]) {
            let func = match name {
                "CONTAINS" => StrFn::Contains,
                "STARTS_WITH" => StrFn::StartsWith,
                "ENDS_WITH" => StrFn::EndsWith,
                _ => StrFn::Regex,
            };
            self.expect(b'(')?;
            let a = self.operand()?;
            self.expect(b',')?;
            let b = self.operand()?;
            self.expect(b')')?;
            match (&b, func) {
                (Operand::Lit(Value::String(re)), StrFn::Regex)
                    if regex::Regex::new(re).is_err() =>
                {
                    return Err(Miss);
                }
                // the grammar path names the mistake
                (Operand::Lit(v), _) if !v.is_string() => return Err(Miss),
                _ => {}
            }
            return Ok(Expr::Str(func, a, b));
        }
        let a = self.operand()?;
        self.ws();
        let rest = &self.s[self.pos..];
        let (op, len) = match rest {
            [b'=', b'=', ..] => (CmpOp::Eq, 2),
            [b'!', b'=', ..] => (CmpOp::Ne, 2),
            [b'<', b'=', ..] => (CmpOp::Le, 2),
            [b'>', b'=', ..] => (CmpOp::Ge, 2),
            [b'<', ..] => (CmpOp::Lt, 1),
            [b'>', ..] => (CmpOp::Gt, 1),
            _ => return Err(Miss),
        };
        self.pos += len;
        let b = self.operand()?;
        Ok(Expr::Cmp(a, op, b))
    }

    fn operand(&mut self) -> R<Operand> {
        match self.peek() {
            Some(b'?') => Ok(Operand::Path(self.dot_path()?)),
            Some(b'{' | b'[') => Err(Miss),
            _ => Ok(Operand::Lit(self.value()?)),
        }
    }

    // ------------------------------------------------------------ KML

    fn identity(&mut self) -> R<ConceptIdentity> {
        match self.matcher()? {
            ConceptMatcher { id: Some(id), .. } => Ok(ConceptIdentity::Id(id)),
            ConceptMatcher {
                ty: Some(ty),
                name: Some(name),
                ..
            } => Ok(ConceptIdentity::TypeName { ty, name }),
            _ => Err(Miss),
        }
    }

    fn with_metadata(&mut self) -> R<Option<Object>> {
        let save = self.pos;
        if self.kw("WITH") {
            if self.kw("METADATA") {
                return Ok(Some(self.object_or_param()?));
            }
            self.pos = save;
        }
        Ok(None)
    }

    /// `SET <second>` if both words are next; otherwise nothing is consumed.
    fn set(&mut self, second: &str) -> bool {
        let save = self.pos;
        if self.kw("SET") && self.kw(second) {
            return true;
        }
        self.pos = save;
        false
    }

    /// `SET ATTRIBUTES object_or_param`, if next.
    fn set_attributes(&mut self) -> R<Option<Object>> {
        if self.set("ATTRIBUTES") {
            Ok(Some(self.object_or_param()?))
        } else {
            Ok(None)
        }
    }

    fn expect_version(&mut self) -> R<Option<u64>> {
        if !self.kw("EXPECT") {
            return Ok(None);
        }
        self.need_kw("VERSION")?;
        Ok(Some(self.uint_or_param()?))
    }

    fn upsert(&mut self) -> R<UpsertStmt> {
        self.expect(b'{')?;
        let mut items = Vec::new();
        while !self.eat(b'}') {
            if self.kw("CONCEPT") {
                items.push(UpsertItem::Concept(self.concept_block()?));
            } else if self.kw("PROPOSITION") {
                items.push(UpsertItem::Prop(self.prop_block()?));
            } else {
                return Err(Miss);
            }
        }
        Ok(UpsertStmt {
            items,
            metadata: self.with_metadata()?,
        })
    }

    fn concept_block(&mut self) -> R<ConceptBlock> {
        let handle = self.optional_variable()?;
        self.expect(b'{')?;
        let identity = self.identity()?;
        let expect_version = self.expect_version()?;
        let attributes = self.set_attributes()?;
        let mut propositions = Vec::new();
        if self.set("PROPOSITIONS") {
            self.expect(b'{')?;
            while !self.eat(b'}') {
                self.expect(b'(')?;
                let predicate = self.string_or_param()?;
                self.expect(b',')?;
                let target = self.upsert_endpoint()?;
                self.expect(b')')?;
                let metadata = self.with_metadata()?;
                propositions.push(SetProp {
                    predicate,
                    target,
                    metadata,
                });
                self.eat(b',');
            }
        }
        self.expect(b'}')?;
        Ok(ConceptBlock {
            handle,
            identity,
            expect_version,
            attributes,
            propositions,
            metadata: self.with_metadata()?,
        })
    }

    fn prop_block(&mut self) -> R<PropBlock> {
        let handle = self.optional_variable()?;
        self.expect(b'{')?;
        let pattern = self.upsert_prop()?;
        let expect_version = self.expect_version()?;
        let attributes = self.set_attributes()?;
        self.expect(b'}')?;
        Ok(PropBlock {
            handle,
            pattern,
            expect_version,
            attributes,
            metadata: self.with_metadata()?,
        })
    }

    fn upsert_prop(&mut self) -> R<UpsertProp> {
        self.expect(b'(')?;
        if self.eat_lit("id") {
            self.expect(b':')?;
            let id = self.string_or_param()?;
            self.expect(b')')?;
            return Ok(UpsertProp::Id(id));
        }
        let subject = self.upsert_endpoint()?;
        self.expect(b',')?;
        let predicate = self.string_or_param()?;
        self.expect(b',')?;
        let object = self.upsert_endpoint()?;
        self.expect(b')')?;
        Ok(UpsertProp::Triple {
            subject,
            predicate,
            object,
        })
    }

    fn upsert_endpoint(&mut self) -> R<UpsertEndpoint> {
        match self.peek() {
            Some(b'?') => Ok(UpsertEndpoint::Handle(self.variable()?)),
            Some(b'{') => Ok(UpsertEndpoint::Concept(self.identity()?)),
            Some(b'(') => Ok(UpsertEndpoint::Prop(Box::new(self.upsert_prop()?))),
            _ => Err(Miss),
        }
    }

    fn update(&mut self) -> R<UpdateStmt> {
        self.need_kw("UPDATE")?;
        let target = self.variable()?;
        let set_attributes = if self.set("ATTRIBUTES") {
            self.update_object(&target)?
        } else {
            Vec::new()
        };
        let set_metadata = if self.set("METADATA") {
            self.update_object(&target)?
        } else {
            Vec::new()
        };
        if set_attributes.is_empty() && set_metadata.is_empty() {
            return Err(Miss);
        }
        let where_ = self.where_clause()?;
        let limit = self.limit()?;
        Ok(UpdateStmt {
            target,
            set_attributes,
            set_metadata,
            where_,
            limit,
        })
    }

    fn update_object(&mut self, target: &str) -> R<Vec<(String, UpdateValue)>> {
        self.expect(b'{')?;
        let mut pairs: Vec<(String, UpdateValue)> = Vec::new();
        loop {
            let name = self.key()?;
            if pairs.iter().any(|(n, _)| *n == name) {
                return Err(Miss);
            }
            self.expect(b':')?;
            let value = match self.update_fn(target)? {
                Some(e) => UpdateValue::Expr(e),
                None => UpdateValue::Json(self.value()?),
            };
            pairs.push((name, value));
            if self.eat(b'}') {
                return Ok(pairs);
            }
            self.expect(b',')?;
        }
    }

    /// `update_fn`, or `None` when no function name is next.
    fn update_fn(&mut self, target: &str) -> R<Option<UpdateExpr>> {
        let Some(name) = self.word_of(&["ADD", "MUL", "CLAMP", "COALESCE"]) else {
            return Ok(None);
        };
        self.expect(b'(')?;
        let mut args = vec![Box::new(self.update_operand(target)?)];
        while self.eat(b',') {
            args.push(Box::new(self.update_operand(target)?));
        }
        self.expect(b')')?;
        let want = if name == "CLAMP" { 3 } else { 2 };
        if args.len() != want {
            return Err(Miss);
        }
        let mut a = args.into_iter();
        let (Some(x), Some(y)) = (a.next(), a.next()) else {
            return Err(Miss);
        };
        Ok(Some(match name {
            "ADD" => UpdateExpr::Add(x, y),
            "MUL" => UpdateExpr::Mul(x, y),
            "COALESCE" => UpdateExpr::Coalesce(x, y),
            _ => UpdateExpr::Clamp(x, y, a.next().ok_or(Miss)?),
        }))
    }

    fn update_operand(&mut self, target: &str) -> R<UpdateExpr> {
        if let Some(e) = self.update_fn(target)? {
            return Ok(e);
        }
        match self.peek() {
            Some(b'?') => {
                let d = self.dot_path()?;
                if d.var != target
                    || d.path.len() < 2
                    || !(d.path[0] == "attributes" || d.path[0] == "metadata")
                {
                    return Err(Miss);
                }
                Ok(UpdateExpr::Path(d.path))
            }
            Some(b'-' | b'0'..=b'9') => Ok(UpdateExpr::Lit(self.number()?)),
            Some(b':') => match self.param()? {
                v @ (Value::Number(_) | Value::Null) => Ok(UpdateExpr::Lit(v)),
                _ => Err(Miss),
            },
            _ if self.word_of(&["null"]).is_some() => Ok(UpdateExpr::Lit(Value::Null)),
            _ => Err(Miss),
        }
    }

    fn key_set(&mut self) -> R<Vec<String>> {
        self.expect(b'{')?;
        let mut keys = vec![self.string_or_param()?];
        while self.eat(b',') {
            keys.push(self.string_or_param()?);
        }
        self.expect(b'}')?;
        Ok(keys)
    }

    fn delete(&mut self) -> R<DeleteStmt> {
        if self.kw("ATTRIBUTES") {
            let keys = self.key_set()?;
            self.need_kw("FROM")?;
            let target = self.variable()?;
            let where_ = self.where_clause()?;
            return Ok(DeleteStmt::Attributes {
                keys,
                target,
                where_,
            });
        }
        if self.kw("METADATA") {
            let keys = self.key_set()?;
            self.need_kw("FROM")?;
            let target = self.variable()?;
            let where_ = self.where_clause()?;
            return Ok(DeleteStmt::Metadata {
                keys,
                target,
                where_,
            });
        }
        if self.kw("PROPOSITIONS") {
            let target = self.variable()?;
            let where_ = self.where_clause()?;
            return Ok(DeleteStmt::Propositions { target, where_ });
        }
        self.need_kw("CONCEPT")?;
        let target = self.variable()?;
        self.need_kw("DETACH")?;
        let where_ = self.where_clause()?;
        Ok(DeleteStmt::Concept { target, where_ })
    }

    // ------------------------------------------------------------ META

    fn describe(&mut self) -> R<Describe> {
        self.need_kw("DESCRIBE")?;
        if self.kw("PRIMER") {
            return Ok(Describe::Primer);
        }
        if self.kw("DOMAINS") {
            return Ok(Describe::Domains);
        }
        let concept = if self.kw("CONCEPT") {
            true
        } else {
            self.need_kw("PROPOSITION")?;
            false
        };
        if self.kw("TYPES") {
            let limit = self.limit()?;
            let cursor = self.cursor()?;
            return Ok(if concept {
                Describe::ConceptTypes { limit, cursor }
            } else {
                Describe::PropositionTypes { limit, cursor }
            });
        }
        self.need_kw("TYPE")?;
        let name = self.string_or_param()?;
        Ok(if concept {
            Describe::ConceptType(name)
        } else {
            Describe::PropositionType(name)
        })
    }

    fn search(&mut self) -> R<SearchStmt> {
        self.need_kw("SEARCH")?;
        let kind = if self.kw("CONCEPT") {
            SearchKind::Concept
        } else {
            self.need_kw("PROPOSITION")?;
            SearchKind::Proposition
        };
        let term = self.string_or_param()?;
        let with_type = {
            let save = self.pos;
            if self.kw("WITH") && self.kw("TYPE") {
                Some(self.string_or_param()?)
            } else {
                self.pos = save;
                None
            }
        };
        let mode = if self.kw("MODE") {
            Some(match self.string_or_param()?.as_str() {
                "keyword" => SearchMode::Keyword,
                "semantic" => SearchMode::Semantic,
                "hybrid" => SearchMode::Hybrid,
                _ => return Err(Miss),
            })
        } else {
            None
        };
        let threshold = if self.kw("THRESHOLD") {
            let v = if self.peek() == Some(b':') {
                self.param()?
            } else {
                self.number()?
            };
            let t = v.as_f64().ok_or(Miss)?;
            if !(0.0..=1.0).contains(&t) {
                return Err(Miss);
            }
            Some(t)
        } else {
            None
        };
        let limit = self.limit()?;
        Ok(SearchStmt {
            kind,
            term,
            with_type,
            mode,
            threshold,
            limit,
            since: None,
            until: None,
        })
    }
}
