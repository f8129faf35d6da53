//! Text to AST: the pest grammar in `kip.pest`, then a typed build that binds
//! `:param` placeholders to JSON values and checks what a grammar cannot
//! (duplicate keys, identity shapes, value ranges).

use super::ast::*;
use super::error::{ErrorCode, KipError, KipResult};
use pest::Parser;
use pest::iterators::Pair;
use serde_json::{Map, Number, Value};

#[derive(pest_derive::Parser)]
#[grammar = "kip/kip.pest"]
struct KipGrammar;

/// Hop ranges above this are refused (`KIP_4002`); `{m,}` stops here.
pub const MAX_HOPS: u32 = 10;

/// Parses one command text (which may hold several `UPSERT` statements) and
/// binds its placeholders from `params`: read by the hand-written reader
/// (`fast`), and by the pest grammar when the reader does not accept it, so
/// the grammar decides every error.
pub fn parse(text: &str, params: &Map<String, Value>) -> KipResult<Command> {
    let mut command = match super::fast::parse(text, params) {
        Some(command) => command,
        None => parse_with_grammar(text, params)?,
    };
    super::limits::check_command(&command)?;
    super::limits::clamp_limits(&mut command);
    if let Command::Search(s) = &mut command {
        s.since = search_day(params, "@since")?;
        s.until = search_day(params, "@until")?;
    }
    Ok(command)
}

/// A `SEARCH`'s time bound from the request's parameters (`@since`,
/// `@until`): a day, `YYYY-MM-DD`, or a time whose day is taken
/// (`2023-08-18T10:00:00Z`).
fn search_day(params: &Map<String, Value>, key: &str) -> KipResult<Option<String>> {
    let Some(v) = params.get(key) else {
        return Ok(None);
    };
    let day = v
        .as_str()
        .and_then(|t| t.get(..10))
        .filter(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok());
    match day {
        Some(d) => Ok(Some(d.to_string())),
        None => Err(KipError::type_mismatch(format!(
            "the parameter {key} is {v}: a day (YYYY-MM-DD) or an RFC 3339 time is expected"
        ))),
    }
}

/// The pest parser: the authority on what the grammar accepts, and the only
/// path that reports errors.
pub fn parse_with_grammar(text: &str, params: &Map<String, Value>) -> KipResult<Command> {
    super::limits::check_text(text)?;
    let mut pairs = KipGrammar::parse(Rule::command, text).map_err(|e| syntax_error(text, e))?;
    let command = pairs
        .next()
        .ok_or_else(|| KipError::syntax("empty command"))?;
    let b = Builder { params, text };
    // Every syntax error carries a position; one found after parsing points
    // at the start of the command when nothing more precise is known.
    b.command(command)
        .map_err(|e| if e.line.is_none() { e.at(1, 1) } else { e })
}

/// Parses without parameters: a command whose placeholders are not supplied
/// is rejected like any other incomplete command.
pub fn parse_unbound(text: &str) -> KipResult<Command> {
    parse(text, &Map::new())
}

fn rule_name(r: &Rule) -> Option<&'static str> {
    Some(match r {
        Rule::variable => "a variable like ?name",
        Rule::identifier => "an identifier",
        Rule::string | Rule::string_or_param => "a string",
        Rule::number | Rule::number_or_param => "a number",
        Rule::uint | Rule::uint_or_param => "a whole number",
        Rule::param => "a :parameter",
        Rule::value => "a JSON value",
        Rule::object | Rule::object_or_param => "an object { ... }",
        Rule::array => "an array [ ... ]",
        Rule::find_expr | Rule::dot_path => "a variable or dot path",
        Rule::aggregation => "an aggregation",
        Rule::block => "a block { ... }",
        Rule::concept_clause | Rule::concept_matcher => "a concept clause {type: ..., name: ...}",
        Rule::proposition_clause | Rule::prop_pattern => "a proposition clause (?s, \"p\", ?o)",
        Rule::filter_clause => "FILTER",
        Rule::not_clause => "NOT",
        Rule::optional_clause => "OPTIONAL",
        Rule::union_clause => "UNION",
        Rule::matcher_pair | Rule::matcher_key => "one of id, type, name",
        Rule::endpoint | Rule::upsert_endpoint => "a subject/object (variable, {..} or (..))",
        Rule::predicate_spec => "a predicate",
        Rule::hop_range => "a hop range {m,n}",
        Rule::bool_expr | Rule::and_expr | Rule::unary_expr => "a boolean expression",
        Rule::comparison => "a comparison",
        Rule::cmp_op => "a comparison operator",
        Rule::operand => "an operand",
        Rule::order_by => "ORDER BY",
        Rule::order_item => "a sort key",
        Rule::direction => "ASC or DESC",
        Rule::limit => "LIMIT",
        Rule::cursor => "CURSOR",
        Rule::where_clause => "WHERE",
        Rule::find_clause => "FIND(...)",
        Rule::upsert_stmt | Rule::upsert_stmts => "UPSERT { ... }",
        Rule::concept_block => "CONCEPT",
        Rule::proposition_block => "PROPOSITION",
        Rule::expect_version => "EXPECT VERSION",
        Rule::set_attributes | Rule::update_set_attrs => "SET ATTRIBUTES",
        Rule::set_propositions => "SET PROPOSITIONS",
        Rule::update_set_meta => "SET METADATA",
        Rule::set_prop_entry => "a (\"predicate\", target) entry",
        Rule::with_metadata => "WITH METADATA",
        Rule::update_object | Rule::update_pair => "a key: value pair",
        Rule::update_value => "a value or update expression",
        Rule::update_operand => "an update operand",
        Rule::key_set => "a set of quoted keys {\"a\", ...}",
        Rule::search_kind => "CONCEPT or PROPOSITION",
        Rule::search_type => "WITH TYPE",
        Rule::search_mode => "MODE",
        Rule::search_threshold => "THRESHOLD",
        Rule::EOI => "the end of the command",
        Rule::find_stmt => "FIND",
        Rule::update_stmt => "UPDATE",
        Rule::merge_stmt => "MERGE",
        Rule::delete_stmt => "DELETE",
        Rule::describe_stmt => "DESCRIBE",
        Rule::search_stmt => "SEARCH",
        Rule::export_stmt => "EXPORT",
        _ => return None,
    })
}

fn syntax_error(text: &str, e: pest::error::Error<Rule>) -> KipError {
    let (line, column) = match e.line_col {
        pest::error::LineColLocation::Pos(p) => p,
        pest::error::LineColLocation::Span(p, _) => p,
    };
    let offset = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((p, _)) => p,
    };
    // A `?` or `:` followed by something that cannot start an identifier is
    // a bad identifier rather than a structural error.
    let rest = &text[offset.min(text.len())..];
    let before = text[..offset.min(text.len())].chars().last();
    let bad_ident = |s: &str| {
        let mut c = s.chars();
        matches!(c.next(), Some('?') | Some('$'))
            && matches!(c.next(), Some(ch) if ch.is_ascii_digit() || ch == '-')
    };
    if bad_ident(rest)
        || (before == Some('?') && rest.chars().next().is_some_and(|c| c.is_ascii_digit()))
    {
        return KipError::new(
            ErrorCode::InvalidIdentifier,
            format!("invalid identifier at line {line}, column {column}"),
        )
        .with_hint("Identifiers must match [a-zA-Z_][a-zA-Z0-9_]*; variables are ?snake_case.")
        .at(line, column);
    }
    // an unclosed or mismatched bracket is named where it goes wrong, not
    // where the grammar gave up backtracking
    if let Some(b) = brackets(text) {
        let line_text = text.lines().nth(b.line.saturating_sub(1)).unwrap_or("");
        let caret = format!("{}\n{}^", line_text, " ".repeat(b.column.saturating_sub(1)));
        return KipError::syntax(format!(
            "syntax error at line {}, column {}: {}",
            b.line, b.column, b.message
        ))
        .with_hint(format!("{caret}\nEvery ( [ {{ needs its closing ) ] }}."))
        .at(b.line, b.column);
    }
    let expected: Vec<&'static str> = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut v: Vec<&'static str> = positives.iter().filter_map(rule_name).collect();
            v.dedup();
            v.truncate(8);
            v
        }
        pest::error::ErrorVariant::CustomError { .. } => vec![],
    };
    let found: String = rest.chars().take(20).collect::<String>();
    let found = if found.is_empty() {
        "end of input".to_string()
    } else {
        format!("'{}'", found.split_whitespace().next().unwrap_or(""))
    };
    let message = if expected.is_empty() {
        format!("syntax error at line {line}, column {column}: unexpected {found}")
    } else {
        format!(
            "syntax error at line {line}, column {column}: expected {}, found {found}",
            expected.join(" or ")
        )
    };
    let line_text = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let caret = format!("{}\n{}^", line_text, " ".repeat(column.saturating_sub(1)));
    KipError::syntax(message)
        .with_hint(format!(
            "{caret}\nKeywords are upper case; strings use double quotes; check brackets and commas."
        ))
        .at(line, column)
}

/// A bracket that does not pair up: where, and what is wrong.
#[derive(Debug, PartialEq)]
struct Bracket {
    line: usize,
    column: usize,
    message: String,
}

/// Pairs the brackets of a command (outside strings and comments). A
/// closer that does not match its opener is reported at the closer; an
/// opener never closed, where its closer belongs: before the first
/// keyword that cannot come inside it (`FIND(?x WHERE` lacks `)` before
/// `WHERE`), else at the end of the text.
fn brackets(text: &str) -> Option<Bracket> {
    // (char, byte offset, depth-level keyword seen after it)
    let mut stack: Vec<(char, usize, Option<usize>)> = Vec::new();
    // the end of the last token, where a missing closer would go
    let mut last_end = 0usize;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    let pos = |off: usize| -> (usize, usize) {
        let before = &text[..off];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, col)
    };
    let closer = |c: char| match c {
        '(' => ')',
        '[' => ']',
        _ => '}',
    };
    while i < chars.len() {
        let (off, c) = chars[i];
        match c {
            '"' => {
                // a string: to its closing quote (or the end)
                i += 1;
                while i < chars.len() && chars[i].1 != '"' {
                    if chars[i].1 == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                last_end = chars.get(i).map(|(o, _)| o + 1).unwrap_or(text.len());
            }
            '/' if chars.get(i + 1).is_some_and(|x| x.1 == '/') => {
                while i < chars.len() && chars[i].1 != '\n' {
                    i += 1;
                }
                continue;
            }
            '(' | '[' | '{' => {
                stack.push((c, off, None));
                last_end = off + 1;
            }
            ')' | ']' | '}' => match stack.pop() {
                Some((open, _, _)) if closer(open) == c => last_end = off + 1,
                Some((open, at, kw)) => {
                    let (line, column) = pos(kw.unwrap_or(off));
                    let (ol, oc) = pos(at);
                    return Some(Bracket {
                        line,
                        column,
                        message: format!(
                            "expected `{}` to close the `{open}` at line {ol}, column {oc}, found `{c}`",
                            closer(open)
                        ),
                    });
                }
                None => {
                    let (line, column) = pos(off);
                    return Some(Bracket {
                        line,
                        column,
                        message: format!("`{c}` closes nothing"),
                    });
                }
            },
            c if c.is_whitespace() => {}
            c if c.is_ascii_uppercase() => {
                // a keyword: the first one after an opener at its depth
                // is where the opener should have closed
                let start = i;
                while i < chars.len() && (chars[i].1.is_alphanumeric() || chars[i].1 == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().map(|x| x.1).collect();
                let after_var = start > 0 && matches!(chars[start - 1].1, '?' | '$' | ':' | '.');
                if !after_var
                    && let Some(top) = stack.last_mut()
                    && top.2.is_none()
                    && (CLAUSES.contains(&word.as_str())
                        || (top.0 != '{' && INNER.contains(&word.as_str())))
                {
                    top.2 = Some(last_end);
                }
                last_end = chars.get(i).map(|x| x.0).unwrap_or(text.len());
                continue;
            }
            _ => last_end = off + c.len_utf8(),
        }
        i += 1;
    }
    let (open, at, kw) = stack.pop()?;
    let (line, column) = pos(kw.unwrap_or(last_end));
    let (ol, oc) = pos(at);
    Some(Bracket {
        line,
        column,
        message: format!(
            "missing `{}` to close the `{open}` at line {ol}, column {oc}",
            closer(open)
        ),
    })
}

/// Words that never come inside any bracket: an opener still open when one
/// of them comes should have closed before it.
const CLAUSES: &[&str] = &[
    "WHERE", "ORDER", "LIMIT", "CURSOR", "UPSERT", "FIND", "DELETE", "UPDATE", "MERGE", "SEARCH",
    "DESCRIBE", "EXPORT",
];

/// Words that come inside a `{ }` block but never inside `( )` or `[ ]`.
const INNER: &[&str] = &[
    "WITH",
    "SET",
    "FILTER",
    "OPTIONAL",
    "NOT",
    "UNION",
    "CONCEPT",
    "PROPOSITION",
    "DETACH",
];

struct Builder<'a> {
    params: &'a Map<String, Value>,
    text: &'a str,
}

type P<'i> = Pair<'i, Rule>;

fn err_at(p: &P<'_>, msg: impl Into<String>) -> KipError {
    let (line, col) = p.line_col();
    let msg = msg.into();
    KipError::syntax(format!("{msg} (line {line}, column {col})")).at(line, col)
}

fn kids<'i>(p: P<'i>) -> Vec<P<'i>> {
    p.into_inner().collect()
}

impl<'a> Builder<'a> {
    fn command(&self, p: P<'_>) -> KipResult<Command> {
        let stmt = p
            .into_inner()
            .find(|x| x.as_rule() != Rule::EOI)
            .ok_or_else(|| KipError::syntax("empty command"))?;
        match stmt.as_rule() {
            Rule::find_stmt => Ok(Command::Find(self.find(stmt)?)),
            Rule::upsert_stmts => {
                let mut out = Vec::new();
                for s in stmt.into_inner() {
                    out.push(self.upsert(s)?);
                }
                Ok(Command::Upsert(out))
            }
            Rule::update_stmt => Ok(Command::Update(self.update(stmt)?)),
            Rule::merge_stmt => {
                let mut v = None;
                let mut t = None;
                let mut w = None;
                for k in stmt.into_inner() {
                    match k.as_rule() {
                        Rule::variable if v.is_none() => v = Some(var_name(&k)),
                        Rule::variable => t = Some(var_name(&k)),
                        Rule::where_clause => w = Some(self.where_clause(k)?),
                        _ => {}
                    }
                }
                Ok(Command::Merge(MergeStmt {
                    source: v.unwrap_or_default(),
                    target: t.unwrap_or_default(),
                    where_: w.unwrap_or_default(),
                }))
            }
            Rule::delete_stmt => Ok(Command::Delete(self.delete(stmt)?)),
            Rule::describe_stmt => Ok(Command::Describe(self.describe(stmt)?)),
            Rule::search_stmt => Ok(Command::Search(self.search(stmt)?)),
            Rule::export_stmt => {
                let mut target = String::new();
                let mut where_ = Vec::new();
                let mut limit = None;
                let mut cursor = None;
                for k in stmt.into_inner() {
                    match k.as_rule() {
                        Rule::variable => target = var_name(&k),
                        Rule::where_clause => where_ = self.where_clause(k)?,
                        Rule::limit => limit = Some(self.limit(k)?),
                        Rule::cursor => cursor = Some(self.cursor(k)?),
                        _ => {}
                    }
                }
                Ok(Command::Export(ExportStmt {
                    target,
                    where_,
                    limit,
                    cursor,
                }))
            }
            _ => Err(KipError::syntax("unsupported statement")),
        }
    }

    // -------------------------------------------------------------- values

    fn param(&self, p: &P<'_>) -> KipResult<Value> {
        let name = &p.as_str()[1..];
        self.params.get(name).cloned().ok_or_else(|| {
            err_at(p, format!("parameter :{name} is not supplied"))
                .with_hint("Pass every :placeholder in the request's `parameters` object.")
        })
    }

    fn value(&self, p: P<'_>) -> KipResult<Value> {
        let inner = match p.as_rule() {
            Rule::value => p
                .into_inner()
                .next()
                .ok_or_else(|| KipError::syntax("empty value"))?,
            _ => p,
        };
        match inner.as_rule() {
            Rule::object => Ok(Value::Object(self.object(inner)?)),
            Rule::array => {
                let mut v = Vec::new();
                for x in inner.into_inner() {
                    v.push(self.value(x)?);
                }
                Ok(Value::Array(v))
            }
            Rule::string => Ok(Value::String(unescape(&inner)?)),
            Rule::number => number(&inner),
            Rule::true_lit => Ok(Value::Bool(true)),
            Rule::false_lit => Ok(Value::Bool(false)),
            Rule::null_lit => Ok(Value::Null),
            Rule::param => self.param(&inner),
            _ => Err(err_at(&inner, "expected a value")),
        }
    }

    fn object(&self, p: P<'_>) -> KipResult<Map<String, Value>> {
        let mut m = Map::new();
        for pair in p.into_inner() {
            let mut it = pair.into_inner();
            let (Some(k), Some(v)) = (it.next(), it.next()) else {
                return Err(KipError::syntax("malformed key: value pair"));
            };
            let key = key_text(&k)?;
            if m.contains_key(&key) {
                return Err(err_at(&k, format!("duplicate key \"{key}\"")));
            }
            m.insert(key, self.value(v)?);
        }
        Ok(m)
    }

    fn object_or_param(&self, p: P<'_>) -> KipResult<Map<String, Value>> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("expected an object"))?;
        match inner.as_rule() {
            Rule::object => self.object(inner),
            _ => match self.param(&inner)? {
                Value::Object(m) => Ok(m),
                _ => Err(err_at(&inner, "parameter must be a JSON object")),
            },
        }
    }

    fn string_or_param(&self, p: P<'_>) -> KipResult<String> {
        let inner = match p.as_rule() {
            Rule::string_or_param => p
                .into_inner()
                .next()
                .ok_or_else(|| KipError::syntax("expected a string"))?,
            _ => p,
        };
        match inner.as_rule() {
            Rule::string => unescape(&inner),
            _ => match self.param(&inner)? {
                Value::String(s) => Ok(s),
                other => Err(err_at(
                    &inner,
                    format!("parameter must be a string, got {other}"),
                )),
            },
        }
    }

    fn uint_or_param(&self, p: P<'_>) -> KipResult<u64> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("expected a number"))?;
        match inner.as_rule() {
            Rule::uint => inner
                .as_str()
                .parse::<u64>()
                .map_err(|_| err_at(&inner, "number out of range")),
            _ => match self.param(&inner)? {
                Value::Number(n) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or(0)),
                other => Err(err_at(
                    &inner,
                    format!("parameter must be a non-negative integer, got {other}"),
                )),
            },
        }
    }

    fn limit(&self, p: P<'_>) -> KipResult<u64> {
        let pos = p.clone();
        let inner = p.into_inner().find(|k| k.as_rule() == Rule::uint_or_param);
        let n = match inner {
            Some(i) => self.uint_or_param(i)?,
            None => return Err(err_at(&pos, "LIMIT needs a number")),
        };
        if n == 0 {
            return Err(err_at(&pos, "LIMIT must be at least 1"));
        }
        Ok(n)
    }

    fn cursor(&self, p: P<'_>) -> KipResult<String> {
        let pos = p.clone();
        let inner = p
            .into_inner()
            .find(|k| k.as_rule() == Rule::string_or_param)
            .ok_or_else(|| err_at(&pos, "CURSOR needs a token"))?;
        let s = self.string_or_param(inner)?;
        if s.is_empty() {
            return Err(err_at(&pos, "CURSOR token is empty"));
        }
        Ok(s)
    }

    // -------------------------------------------------------------- KQL

    fn find(&self, p: P<'_>) -> KipResult<FindQuery> {
        let mut q = FindQuery {
            find: vec![],
            where_: vec![],
            order_by: vec![],
            limit: None,
            cursor: None,
        };
        for k in p.into_inner() {
            match k.as_rule() {
                Rule::find_clause => {
                    for e in k.into_inner().filter(|x| x.as_rule() == Rule::find_expr) {
                        let inner = e
                            .into_inner()
                            .next()
                            .ok_or_else(|| KipError::syntax("empty FIND expression"))?;
                        q.find.push(match inner.as_rule() {
                            Rule::aggregation => FindExpr::Agg(self.aggregation(inner)?),
                            _ => FindExpr::Path(dot_path(&inner)),
                        });
                    }
                }
                Rule::where_clause => q.where_ = self.where_clause(k)?,
                Rule::order_by => {
                    for item in k.into_inner().filter(|x| x.as_rule() == Rule::order_item) {
                        let mut agg = None;
                        let mut path = None;
                        let mut desc = false;
                        for x in item.into_inner() {
                            match x.as_rule() {
                                Rule::aggregation => {
                                    let a = self.aggregation(x)?;
                                    agg = Some((a.func, a.distinct));
                                    path = Some(a.path);
                                }
                                Rule::dot_path => path = Some(dot_path(&x)),
                                Rule::direction => desc = x.as_str().trim() == "DESC",
                                _ => {}
                            }
                        }
                        q.order_by.push(OrderItem {
                            agg,
                            path: path.ok_or_else(|| KipError::syntax("ORDER BY needs a key"))?,
                            desc,
                        });
                    }
                }
                Rule::limit => q.limit = Some(self.limit(k)?),
                Rule::cursor => q.cursor = Some(self.cursor(k)?),
                _ => {}
            }
        }
        Ok(q)
    }

    fn aggregation(&self, p: P<'_>) -> KipResult<Aggregate> {
        let mut func = AggFunc::Count;
        let mut distinct = false;
        let mut path = None;
        for k in p.into_inner() {
            match k.as_rule() {
                Rule::agg_func => {
                    func = match k.as_str() {
                        "COUNT" => AggFunc::Count,
                        "SUM" => AggFunc::Sum,
                        "AVG" => AggFunc::Avg,
                        "MIN" => AggFunc::Min,
                        _ => AggFunc::Max,
                    }
                }
                Rule::kw_DISTINCT => distinct = true,
                Rule::dot_path => path = Some(dot_path(&k)),
                _ => {}
            }
        }
        Ok(Aggregate {
            func,
            distinct,
            path: path.ok_or_else(|| KipError::syntax("aggregation needs a variable"))?,
        })
    }

    fn where_clause(&self, p: P<'_>) -> KipResult<Vec<WhereItem>> {
        let block = p
            .into_inner()
            .find(|k| k.as_rule() == Rule::block)
            .ok_or_else(|| KipError::syntax("WHERE needs a block"))?;
        self.block(block)
    }

    fn block(&self, p: P<'_>) -> KipResult<Vec<WhereItem>> {
        let mut out = Vec::new();
        for k in p.into_inner() {
            out.push(match k.as_rule() {
                Rule::filter_clause => {
                    let e = k
                        .into_inner()
                        .find(|x| x.as_rule() == Rule::bool_expr)
                        .ok_or_else(|| KipError::syntax("FILTER needs a condition"))?;
                    WhereItem::Filter(self.bool_expr(e)?)
                }
                Rule::not_clause => WhereItem::Not(self.sub_block(k)?),
                Rule::optional_clause => WhereItem::Optional(self.sub_block(k)?),
                Rule::union_clause => WhereItem::Union(self.sub_block(k)?),
                Rule::concept_clause => {
                    let mut var = None;
                    let mut matcher = None;
                    for x in k.into_inner() {
                        match x.as_rule() {
                            Rule::variable => var = Some(var_name(&x)),
                            Rule::concept_matcher => matcher = Some(self.matcher(x)?),
                            _ => {}
                        }
                    }
                    WhereItem::Concept(ConceptClause {
                        var,
                        matcher: matcher.unwrap_or_default(),
                    })
                }
                Rule::proposition_clause => {
                    let mut var = None;
                    let mut pattern = None;
                    for x in k.into_inner() {
                        match x.as_rule() {
                            Rule::variable => var = Some(var_name(&x)),
                            Rule::prop_pattern => pattern = Some(self.prop_pattern(x)?),
                            _ => {}
                        }
                    }
                    WhereItem::Prop(PropClause {
                        var,
                        pattern: pattern.ok_or_else(|| {
                            KipError::syntax("proposition clause needs a pattern")
                        })?,
                    })
                }
                _ => continue,
            });
        }
        Ok(out)
    }

    fn sub_block(&self, p: P<'_>) -> KipResult<Vec<WhereItem>> {
        let b = p
            .into_inner()
            .find(|k| k.as_rule() == Rule::block)
            .ok_or_else(|| KipError::syntax("expected a block"))?;
        self.block(b)
    }

    fn matcher(&self, p: P<'_>) -> KipResult<ConceptMatcher> {
        let pos = p.clone();
        let mut m = ConceptMatcher::default();
        for pair in p.into_inner() {
            let mut it = pair.into_inner();
            let (Some(k), Some(v)) = (it.next(), it.next()) else {
                continue;
            };
            let val = self.string_or_param(v)?;
            let slot = match k.as_str() {
                "id" => &mut m.id,
                "type" => &mut m.ty,
                _ => &mut m.name,
            };
            if slot.is_some() {
                return Err(err_at(&k, format!("duplicate key \"{}\"", k.as_str())));
            }
            *slot = Some(val);
        }
        if m.id.is_some() && (m.ty.is_some() || m.name.is_some()) {
            return Err(err_at(
                &pos,
                "a concept clause takes either {id} or {type, name}, not both",
            ));
        }
        Ok(m)
    }

    fn prop_pattern(&self, p: P<'_>) -> KipResult<PropPattern> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("empty proposition pattern"))?;
        match inner.as_rule() {
            Rule::prop_id => {
                let v = inner
                    .into_inner()
                    .next()
                    .ok_or_else(|| KipError::syntax("(id: ...) needs a value"))?;
                Ok(PropPattern::Id(self.string_or_param(v)?))
            }
            _ => {
                let parts = kids(inner);
                if parts.len() != 3 {
                    return Err(KipError::syntax(
                        "a proposition pattern is (subject, predicate, object)",
                    ));
                }
                let mut it = parts.into_iter();
                let (Some(s), Some(pr), Some(o)) = (it.next(), it.next(), it.next()) else {
                    return Err(KipError::syntax("malformed proposition pattern"));
                };
                Ok(PropPattern::Triple {
                    subject: Box::new(self.endpoint(s)?),
                    predicate: self.predicate(pr)?,
                    object: Box::new(self.endpoint(o)?),
                })
            }
        }
    }

    fn endpoint(&self, p: P<'_>) -> KipResult<Endpoint> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("empty endpoint"))?;
        Ok(match inner.as_rule() {
            Rule::variable => Endpoint::Var(var_name(&inner)),
            Rule::concept_matcher => Endpoint::Concept(self.matcher(inner)?),
            _ => Endpoint::Prop(self.prop_pattern(inner)?),
        })
    }

    fn predicate(&self, p: P<'_>) -> KipResult<PredSpec> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("empty predicate"))?;
        match inner.as_rule() {
            Rule::variable => Ok(PredSpec::Var(var_name(&inner))),
            Rule::hop_predicate => {
                let pos = inner.clone();
                let mut it = inner.into_inner();
                let s = it
                    .next()
                    .ok_or_else(|| KipError::syntax("hop needs a predicate"))?;
                let range = it
                    .next()
                    .ok_or_else(|| KipError::syntax("hop needs a range"))?;
                let predicate = self.string_or_param(s)?;
                let mut nums = Vec::new();
                let mut comma = false;
                for r in range.into_inner() {
                    match r.as_rule() {
                        Rule::uint => nums.push(
                            r.as_str()
                                .parse::<u32>()
                                .map_err(|_| err_at(&r, "hop count out of range"))?,
                        ),
                        Rule::hop_comma => comma = true,
                        _ => {}
                    }
                }
                let min = nums.first().copied().unwrap_or(1);
                let max = if comma {
                    nums.get(1).copied()
                } else {
                    Some(min)
                };
                if let Some(mx) = max
                    && mx < min
                {
                    return Err(err_at(
                        &pos,
                        format!("hop range {{{min},{mx}}} has max below min"),
                    ));
                }
                Ok(PredSpec::Hop {
                    predicate,
                    min,
                    max,
                })
            }
            _ => {
                let mut alts = Vec::new();
                for s in inner.into_inner() {
                    alts.push(self.string_or_param(s)?);
                }
                Ok(PredSpec::Alts(alts))
            }
        }
    }

    fn bool_expr(&self, p: P<'_>) -> KipResult<Expr> {
        match p.as_rule() {
            Rule::bool_expr | Rule::and_expr => {
                let is_or = p.as_rule() == Rule::bool_expr;
                let mut it = p.into_inner();
                let first = it
                    .next()
                    .ok_or_else(|| KipError::syntax("empty expression"))?;
                let mut acc = self.bool_expr(first)?;
                for next in it {
                    let rhs = self.bool_expr(next)?;
                    acc = if is_or {
                        Expr::Or(Box::new(acc), Box::new(rhs))
                    } else {
                        Expr::And(Box::new(acc), Box::new(rhs))
                    };
                }
                Ok(acc)
            }
            Rule::unary_expr => {
                let mut negs = 0;
                let mut body = None;
                for k in p.into_inner() {
                    match k.as_rule() {
                        Rule::negation => negs += 1,
                        _ => body = Some(self.bool_expr(k)?),
                    }
                }
                let mut e = body.ok_or_else(|| KipError::syntax("empty expression"))?;
                for _ in 0..negs {
                    e = Expr::Not(Box::new(e));
                }
                Ok(e)
            }
            Rule::bool_func => {
                let f = p
                    .into_inner()
                    .next()
                    .ok_or_else(|| KipError::syntax("empty function"))?;
                match f.as_rule() {
                    Rule::in_func => {
                        let mut it = f.into_inner();
                        let (Some(a), Some(list)) = (it.next(), it.next()) else {
                            return Err(KipError::syntax("IN needs a value and a list"));
                        };
                        let values = match list.as_rule() {
                            Rule::array => match self.value(list)? {
                                Value::Array(v) => v,
                                _ => vec![],
                            },
                            _ => match self.param(&list)? {
                                Value::Array(v) => v,
                                other => {
                                    return Err(err_at(
                                        &list,
                                        format!("IN needs an array, got {other}"),
                                    ));
                                }
                            },
                        };
                        Ok(Expr::In(self.operand(a)?, values))
                    }
                    Rule::null_func => {
                        let mut it = f.into_inner();
                        let (Some(name), Some(a)) = (it.next(), it.next()) else {
                            return Err(KipError::syntax("IS_NULL needs an argument"));
                        };
                        let o = self.operand(a)?;
                        Ok(if name.as_str() == "IS_NULL" {
                            Expr::IsNull(o)
                        } else {
                            Expr::IsNotNull(o)
                        })
                    }
                    _ => {
                        let mut it = f.into_inner();
                        let (Some(name), Some(a), Some(b)) = (it.next(), it.next(), it.next())
                        else {
                            return Err(KipError::syntax("string function needs two arguments"));
                        };
                        let func = match name.as_str() {
                            "CONTAINS" => StrFn::Contains,
                            "STARTS_WITH" => StrFn::StartsWith,
                            "ENDS_WITH" => StrFn::EndsWith,
                            _ => StrFn::Regex,
                        };
                        let bpos = b.clone();
                        let ob = self.operand(b)?;
                        match (&ob, func) {
                            (Operand::Lit(Value::String(re)), StrFn::Regex) => {
                                regex::Regex::new(re).map_err(|e| {
                                    err_at(&bpos, format!("invalid REGEX pattern: {e}"))
                                })?;
                            }
                            (Operand::Lit(v), _) if !v.is_string() => {
                                return Err(err_at(
                                    &bpos,
                                    format!(
                                        "{name} takes a string as its second argument, not {v}"
                                    ),
                                ));
                            }
                            _ => {}
                        }
                        Ok(Expr::Str(func, self.operand(a)?, ob))
                    }
                }
            }
            Rule::comparison => {
                let mut it = p.into_inner();
                let (Some(a), Some(op), Some(b)) = (it.next(), it.next(), it.next()) else {
                    return Err(KipError::syntax("malformed comparison"));
                };
                let op = match op.as_str() {
                    "==" => CmpOp::Eq,
                    "!=" => CmpOp::Ne,
                    "<=" => CmpOp::Le,
                    ">=" => CmpOp::Ge,
                    "<" => CmpOp::Lt,
                    _ => CmpOp::Gt,
                };
                Ok(Expr::Cmp(self.operand(a)?, op, self.operand(b)?))
            }
            _ => Err(err_at(&p, "expected a boolean expression")),
        }
    }

    fn operand(&self, p: P<'_>) -> KipResult<Operand> {
        let inner = match p.as_rule() {
            Rule::operand => p
                .into_inner()
                .next()
                .ok_or_else(|| KipError::syntax("empty operand"))?,
            _ => p,
        };
        match inner.as_rule() {
            Rule::dot_path => Ok(Operand::Path(dot_path(&inner))),
            _ => Ok(Operand::Lit(self.value(inner)?)),
        }
    }

    // -------------------------------------------------------------- KML

    fn identity(&self, p: P<'_>) -> KipResult<ConceptIdentity> {
        let pos = p.clone();
        let m = self.matcher(p)?;
        match m {
            ConceptMatcher { id: Some(id), .. } => Ok(ConceptIdentity::Id(id)),
            ConceptMatcher {
                ty: Some(ty),
                name: Some(name),
                ..
            } => Ok(ConceptIdentity::TypeName { ty, name }),
            _ => Err(err_at(
                &pos,
                "a concept here is identified by {type: \"...\", name: \"...\"} or {id: \"...\"}",
            )),
        }
    }

    fn upsert(&self, p: P<'_>) -> KipResult<UpsertStmt> {
        let mut st = UpsertStmt {
            items: vec![],
            metadata: None,
        };
        for k in p.into_inner() {
            match k.as_rule() {
                Rule::concept_block => st.items.push(UpsertItem::Concept(self.concept_block(k)?)),
                Rule::proposition_block => st.items.push(UpsertItem::Prop(self.prop_block(k)?)),
                Rule::with_metadata => st.metadata = Some(self.with_metadata(k)?),
                _ => {}
            }
        }
        Ok(st)
    }

    fn with_metadata(&self, p: P<'_>) -> KipResult<Object> {
        let o = p
            .into_inner()
            .find(|k| k.as_rule() == Rule::object_or_param)
            .ok_or_else(|| KipError::syntax("WITH METADATA needs an object"))?;
        self.object_or_param(o)
    }

    fn concept_block(&self, p: P<'_>) -> KipResult<ConceptBlock> {
        let mut handle = None;
        let mut identity = None;
        let mut expect_version = None;
        let mut attributes = None;
        let mut propositions = Vec::new();
        let mut metadata = None;
        for k in p.into_inner() {
            match k.as_rule() {
                Rule::variable => handle = Some(var_name(&k)),
                Rule::concept_matcher => identity = Some(self.identity(k)?),
                Rule::expect_version => expect_version = Some(self.expect(k)?),
                Rule::set_attributes => attributes = Some(self.set_attrs(k)?),
                Rule::set_propositions => {
                    for e in k
                        .into_inner()
                        .filter(|x| x.as_rule() == Rule::set_prop_entry)
                    {
                        let mut pred = None;
                        let mut target = None;
                        let mut md = None;
                        for x in e.into_inner() {
                            match x.as_rule() {
                                Rule::string_or_param => pred = Some(self.string_or_param(x)?),
                                Rule::upsert_endpoint => target = Some(self.upsert_endpoint(x)?),
                                Rule::with_metadata => md = Some(self.with_metadata(x)?),
                                _ => {}
                            }
                        }
                        propositions.push(SetProp {
                            predicate: pred.unwrap_or_default(),
                            target: target.ok_or_else(|| {
                                KipError::syntax("SET PROPOSITIONS entry needs a target")
                            })?,
                            metadata: md,
                        });
                    }
                }
                Rule::with_metadata => metadata = Some(self.with_metadata(k)?),
                _ => {}
            }
        }
        Ok(ConceptBlock {
            handle,
            identity: identity
                .ok_or_else(|| KipError::syntax("CONCEPT block needs an identity"))?,
            expect_version,
            attributes,
            propositions,
            metadata,
        })
    }

    fn set_attrs(&self, p: P<'_>) -> KipResult<Object> {
        let o = p
            .into_inner()
            .find(|k| k.as_rule() == Rule::object_or_param)
            .ok_or_else(|| KipError::syntax("SET ATTRIBUTES needs an object"))?;
        self.object_or_param(o)
    }

    fn expect(&self, p: P<'_>) -> KipResult<u64> {
        let v = p
            .into_inner()
            .find(|k| k.as_rule() == Rule::uint_or_param)
            .ok_or_else(|| KipError::syntax("EXPECT VERSION needs a number"))?;
        self.uint_or_param(v)
    }

    fn prop_block(&self, p: P<'_>) -> KipResult<PropBlock> {
        let mut b = PropBlock {
            handle: None,
            pattern: UpsertProp::Id(String::new()),
            expect_version: None,
            attributes: None,
            metadata: None,
        };
        for k in p.into_inner() {
            match k.as_rule() {
                Rule::variable => b.handle = Some(var_name(&k)),
                Rule::upsert_prop => b.pattern = self.upsert_prop(k)?,
                Rule::expect_version => b.expect_version = Some(self.expect(k)?),
                Rule::set_attributes => b.attributes = Some(self.set_attrs(k)?),
                Rule::with_metadata => b.metadata = Some(self.with_metadata(k)?),
                _ => {}
            }
        }
        Ok(b)
    }

    fn upsert_prop(&self, p: P<'_>) -> KipResult<UpsertProp> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("empty proposition"))?;
        match inner.as_rule() {
            Rule::prop_id => {
                let v = inner
                    .into_inner()
                    .next()
                    .ok_or_else(|| KipError::syntax("(id: ...) needs a value"))?;
                Ok(UpsertProp::Id(self.string_or_param(v)?))
            }
            _ => {
                let mut it = inner.into_inner();
                let (Some(s), Some(pr), Some(o)) = (it.next(), it.next(), it.next()) else {
                    return Err(KipError::syntax(
                        "a proposition is (subject, \"predicate\", object)",
                    ));
                };
                Ok(UpsertProp::Triple {
                    subject: self.upsert_endpoint(s)?,
                    predicate: self.string_or_param(pr)?,
                    object: self.upsert_endpoint(o)?,
                })
            }
        }
    }

    fn upsert_endpoint(&self, p: P<'_>) -> KipResult<UpsertEndpoint> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("empty endpoint"))?;
        Ok(match inner.as_rule() {
            Rule::variable => UpsertEndpoint::Handle(var_name(&inner)),
            Rule::concept_matcher => UpsertEndpoint::Concept(self.identity(inner)?),
            _ => UpsertEndpoint::Prop(Box::new(self.upsert_prop(inner)?)),
        })
    }

    fn update(&self, p: P<'_>) -> KipResult<UpdateStmt> {
        let pos = p.clone();
        let mut st = UpdateStmt {
            target: String::new(),
            set_attributes: vec![],
            set_metadata: vec![],
            where_: vec![],
            limit: None,
        };
        for k in p.into_inner() {
            match k.as_rule() {
                Rule::variable => st.target = var_name(&k),
                Rule::update_set_attrs | Rule::update_set_meta => {
                    let is_attr = k.as_rule() == Rule::update_set_attrs;
                    let obj = k
                        .into_inner()
                        .find(|x| x.as_rule() == Rule::update_object)
                        .ok_or_else(|| KipError::syntax("SET needs an object"))?;
                    let mut pairs: Vec<(String, UpdateValue)> = Vec::new();
                    for pair in obj.into_inner() {
                        let mut it = pair.into_inner();
                        let (Some(key), Some(val)) = (it.next(), it.next()) else {
                            continue;
                        };
                        let name = key_text(&key)?;
                        if pairs.iter().any(|(n, _)| n == &name) {
                            return Err(err_at(&key, format!("duplicate key \"{name}\"")));
                        }
                        pairs.push((name, self.update_value(val, &st.target)?));
                    }
                    if is_attr {
                        st.set_attributes = pairs
                    } else {
                        st.set_metadata = pairs
                    }
                }
                Rule::where_clause => st.where_ = self.where_clause(k)?,
                Rule::limit => st.limit = Some(self.limit(k)?),
                _ => {}
            }
        }
        if st.set_attributes.is_empty() && st.set_metadata.is_empty() {
            return Err(err_at(&pos, "UPDATE needs SET ATTRIBUTES or SET METADATA"));
        }
        Ok(st)
    }

    fn update_value(&self, p: P<'_>, target: &str) -> KipResult<UpdateValue> {
        let inner = p
            .into_inner()
            .next()
            .ok_or_else(|| KipError::syntax("empty value"))?;
        match inner.as_rule() {
            Rule::update_fn => Ok(UpdateValue::Expr(self.update_expr(inner, target)?)),
            _ => Ok(UpdateValue::Json(self.value(inner)?)),
        }
    }

    fn update_expr(&self, p: P<'_>, target: &str) -> KipResult<UpdateExpr> {
        let pos = p.clone();
        match p.as_rule() {
            Rule::update_operand => {
                let inner = p
                    .into_inner()
                    .next()
                    .ok_or_else(|| KipError::syntax("empty operand"))?;
                self.update_expr(inner, target)
            }
            Rule::update_fn => {
                let mut it = p.into_inner();
                let name = it
                    .next()
                    .ok_or_else(|| KipError::syntax("missing function"))?;
                let mut args = Vec::new();
                for a in it {
                    args.push(Box::new(self.update_expr(a, target)?));
                }
                let n = name.as_str();
                let want = match n {
                    "CLAMP" => 3,
                    _ => 2,
                };
                if args.len() != want {
                    return Err(err_at(
                        &pos,
                        format!("{n} takes {want} arguments, got {}", args.len()),
                    ));
                }
                let mut a = args.into_iter();
                let (x, y) = (a.next(), a.next());
                let (Some(x), Some(y)) = (x, y) else {
                    return Err(KipError::syntax("missing arguments"));
                };
                Ok(match n {
                    "ADD" => UpdateExpr::Add(x, y),
                    "MUL" => UpdateExpr::Mul(x, y),
                    "COALESCE" => UpdateExpr::Coalesce(x, y),
                    _ => UpdateExpr::Clamp(
                        x,
                        y,
                        a.next()
                            .ok_or_else(|| KipError::syntax("CLAMP takes 3 arguments"))?,
                    ),
                })
            }
            Rule::dot_path => {
                let d = dot_path(&p);
                if d.var != target {
                    return Err(err_at(
                        &pos,
                        format!(
                            "update expressions may only read ?{target} itself, not ?{}",
                            d.var
                        ),
                    ));
                }
                if d.path.len() < 2 || !(d.path[0] == "attributes" || d.path[0] == "metadata") {
                    return Err(err_at(
                        &pos,
                        "update expression paths read ?target.attributes.<key> or ?target.metadata.<key>",
                    ));
                }
                Ok(UpdateExpr::Path(d.path))
            }
            Rule::number => Ok(UpdateExpr::Lit(number(&p)?)),
            Rule::null_lit => Ok(UpdateExpr::Lit(Value::Null)),
            Rule::param => match self.param(&p)? {
                v @ (Value::Number(_) | Value::Null) => Ok(UpdateExpr::Lit(v)),
                other => Err(err_at(
                    &pos,
                    format!("update expression operands are numbers, got {other}"),
                )),
            },
            _ => Err(err_at(&pos, "unexpected operand")),
        }
    }

    fn delete(&self, p: P<'_>) -> KipResult<DeleteStmt> {
        let inner = p
            .into_inner()
            .find(|k| k.as_rule() != Rule::kw_DELETE)
            .ok_or_else(|| KipError::syntax("DELETE what?"))?;
        let rule = inner.as_rule();
        let mut keys = Vec::new();
        let mut target = String::new();
        let mut where_ = Vec::new();
        for k in inner.into_inner() {
            match k.as_rule() {
                Rule::key_set => {
                    for s in k.into_inner() {
                        keys.push(self.string_or_param(s)?);
                    }
                }
                Rule::variable => target = var_name(&k),
                Rule::where_clause => where_ = self.where_clause(k)?,
                _ => {}
            }
        }
        Ok(match rule {
            Rule::delete_attributes => DeleteStmt::Attributes {
                keys,
                target,
                where_,
            },
            Rule::delete_metadata => DeleteStmt::Metadata {
                keys,
                target,
                where_,
            },
            Rule::delete_propositions => DeleteStmt::Propositions { target, where_ },
            _ => DeleteStmt::Concept { target, where_ },
        })
    }

    // -------------------------------------------------------------- META

    fn describe(&self, p: P<'_>) -> KipResult<Describe> {
        let inner = p
            .into_inner()
            .find(|k| k.as_rule() != Rule::kw_DESCRIBE)
            .ok_or_else(|| KipError::syntax("DESCRIBE what?"))?;
        let rule = inner.as_rule();
        let mut limit = None;
        let mut cursor = None;
        let mut name = None;
        for k in inner.into_inner() {
            match k.as_rule() {
                Rule::limit => limit = Some(self.limit(k)?),
                Rule::cursor => cursor = Some(self.cursor(k)?),
                Rule::string_or_param => name = Some(self.string_or_param(k)?),
                _ => {}
            }
        }
        Ok(match rule {
            Rule::describe_primer => Describe::Primer,
            Rule::describe_domains => Describe::Domains,
            Rule::describe_concept_types => Describe::ConceptTypes { limit, cursor },
            Rule::describe_prop_types => Describe::PropositionTypes { limit, cursor },
            Rule::describe_concept_type => Describe::ConceptType(name.unwrap_or_default()),
            _ => Describe::PropositionType(name.unwrap_or_default()),
        })
    }

    fn search(&self, p: P<'_>) -> KipResult<SearchStmt> {
        let mut st = SearchStmt {
            kind: SearchKind::Concept,
            term: String::new(),
            with_type: None,
            mode: None,
            threshold: None,
            limit: None,
            since: None,
            until: None,
        };
        for k in p.into_inner() {
            match k.as_rule() {
                Rule::search_kind => {
                    st.kind = if k.as_str().trim() == "PROPOSITION" {
                        SearchKind::Proposition
                    } else {
                        SearchKind::Concept
                    }
                }
                Rule::string_or_param => st.term = self.string_or_param(k)?,
                Rule::search_type => {
                    let v = k
                        .into_inner()
                        .find(|x| x.as_rule() == Rule::string_or_param)
                        .ok_or_else(|| KipError::syntax("WITH TYPE needs a name"))?;
                    st.with_type = Some(self.string_or_param(v)?);
                }
                Rule::search_mode => {
                    let pos = k.clone();
                    let v = k
                        .into_inner()
                        .find(|x| x.as_rule() == Rule::string_or_param)
                        .ok_or_else(|| KipError::syntax("MODE needs a value"))?;
                    st.mode = Some(match self.string_or_param(v)?.as_str() {
                        "keyword" => SearchMode::Keyword,
                        "semantic" => SearchMode::Semantic,
                        "hybrid" => SearchMode::Hybrid,
                        other => {
                            return Err(err_at(
                                &pos,
                                format!(
                                    "MODE must be \"keyword\", \"semantic\" or \"hybrid\", not \"{other}\""
                                ),
                            ));
                        }
                    });
                }
                Rule::search_threshold => {
                    let pos = k.clone();
                    let v = k
                        .into_inner()
                        .find(|x| x.as_rule() == Rule::number_or_param)
                        .ok_or_else(|| KipError::syntax("THRESHOLD needs a number"))?;
                    let inner = v
                        .into_inner()
                        .next()
                        .ok_or_else(|| KipError::syntax("THRESHOLD needs a number"))?;
                    let val = match inner.as_rule() {
                        Rule::number => number(&inner)?,
                        _ => self.param(&inner)?,
                    };
                    let t = val
                        .as_f64()
                        .ok_or_else(|| err_at(&pos, "THRESHOLD must be a number"))?;
                    if !(0.0..=1.0).contains(&t) {
                        return Err(err_at(&pos, "THRESHOLD must be between 0.0 and 1.0"));
                    }
                    st.threshold = Some(t);
                }
                Rule::limit => st.limit = Some(self.limit(k)?),
                _ => {}
            }
        }
        let _ = self.text;
        Ok(st)
    }
}

fn var_name(p: &P<'_>) -> String {
    p.as_str()[1..].to_string()
}

fn dot_path(p: &P<'_>) -> DotPath {
    let mut it = p.as_str().split('.');
    let var = it.next().unwrap_or("?")[1..].to_string();
    DotPath {
        var,
        path: it.map(str::to_string).collect(),
    }
}

fn key_text(k: &P<'_>) -> KipResult<String> {
    match k.as_rule() {
        Rule::string => unescape(k),
        _ => Ok(k.as_str().to_string()),
    }
}

fn unescape(p: &P<'_>) -> KipResult<String> {
    // The grammar only admits JSON escapes, so JSON decoding is exact.
    serde_json::from_str::<String>(p.as_str())
        .map_err(|e| err_at(p, format!("invalid string: {e}")))
}

fn number(p: &P<'_>) -> KipResult<Value> {
    let s = p.as_str();
    if !s.contains(['.', 'e', 'E']) {
        if let Ok(i) = s.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = s.parse::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        return Err(err_at(p, format!("integer {s} is out of range")));
    }
    let f: f64 = s
        .parse()
        .map_err(|_| err_at(p, format!("invalid number {s}")))?;
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| err_at(p, format!("number {s} is not finite")))
}
