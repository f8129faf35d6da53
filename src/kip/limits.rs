//! The size limits of one KIP command, in one place. Each is checked before
//! anything recurses over the text or the tree, so an over-deep or
//! over-long command gets a KIP error naming the limit on any thread, and
//! never reaches a stack or a SQLite limit first.

use super::ast::{Command, Endpoint, PropPattern, WhereItem};
use super::error::{ErrorCode, KipError, KipResult};

/// Brackets (`(`, `[`, `{`) nested deeper than this are refused.
pub const MAX_NESTING: usize = 64;

/// `||`, `&&` and `!` operators in one command (all its FILTERs together).
/// Each one deepens the expression tree by one level, and SQLite refuses
/// expressions deeper than 1,000.
pub const MAX_BOOL_OPERATORS: usize = 256;

/// WHERE items (clauses, FILTERs, NOT, OPTIONAL, UNION and what they hold,
/// counted at every level) in one query or one write's pattern.
/// (SQLite joins at most 64 tables.)
pub const MAX_PATTERN_ITEMS: usize = 64;

/// NOT / OPTIONAL / UNION groups nested inside each other.
pub const MAX_GROUP_DEPTH: usize = 8;

/// UNION branches in one pattern (at any level).
pub const MAX_UNION_BRANCHES: usize = 32;

/// The largest page: a `LIMIT` above it is read as this (the answer then
/// carries a `next_cursor` when more remain), so no count wraps.
pub const MAX_LIMIT: u64 = 1_000_000;

/// The largest offset a `CURSOR` may carry (offset + page stays within a
/// signed 64-bit integer).
pub const MAX_OFFSET: u64 = i64::MAX as u64 - MAX_LIMIT - 1;

/// Bytes of a `SEARCH` text.
pub const MAX_SEARCH_TEXT: usize = 4_096;

/// Distinct words of a `SEARCH` text that are matched (the first ones).
pub const MAX_SEARCH_WORDS: usize = 32;

/// Characters of one `SEARCH` word that are matched (its prefix).
pub const MAX_SEARCH_WORD: usize = 64;

/// Commands in one `commands` batch.
pub const MAX_BATCH: usize = 1_000;

/// Refuses text whose brackets nest deeper than `MAX_NESTING` or that holds
/// more than `MAX_BOOL_OPERATORS` boolean operators, naming the line and
/// column, in one pass that skips strings and comments.
pub fn check_text(text: &str) -> KipResult<()> {
    let (mut depth, mut ops, mut line, mut col) = (0usize, 0usize, 1usize, 0usize);
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        col += 1;
        if c == '\n' {
            line += 1;
            col = 0;
            continue;
        }
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                    col += 1;
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        let op = match c {
            '"' => {
                in_string = true;
                false
            }
            '/' if chars.peek() == Some(&'/') => {
                // a comment runs to the end of the line
                for n in chars.by_ref() {
                    if n == '\n' {
                        line += 1;
                        col = 0;
                        break;
                    }
                }
                false
            }
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(KipError::syntax(format!(
                        "syntax error at line {line}, column {col}: brackets nest deeper than {MAX_NESTING} levels (the limit)"
                    ))
                    .at(line, col)
                    .with_hint("Flatten the command: fewer nested groups, lists or objects."));
                }
                false
            }
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                false
            }
            '|' | '&' if chars.peek() == Some(&c) => {
                chars.next();
                col += 1;
                true
            }
            '!' => chars.peek() != Some(&'='),
            _ => false,
        };
        if op {
            ops += 1;
            if ops > MAX_BOOL_OPERATORS {
                return Err(KipError::syntax(format!(
                    "syntax error at line {line}, column {col}: more than {MAX_BOOL_OPERATORS} boolean operators (||, &&, !) in one command (the limit)"
                ))
                .at(line, col)
                .with_hint("Use IN(?x.field, [...]) for a list of alternatives, or split the query."));
            }
        }
    }
    Ok(())
}

/// Reads every `LIMIT` above `MAX_LIMIT` as `MAX_LIMIT`.
pub fn clamp_limits(c: &mut Command) {
    use super::ast::Describe;
    let limit = match c {
        Command::Find(q) => &mut q.limit,
        Command::Update(u) => &mut u.limit,
        Command::Search(s) => &mut s.limit,
        Command::Export(e) => &mut e.limit,
        Command::Describe(Describe::ConceptTypes { limit, .. })
        | Command::Describe(Describe::PropositionTypes { limit, .. }) => limit,
        _ => return,
    };
    if let Some(l) = limit {
        *l = (*l).min(MAX_LIMIT);
    }
}

/// Refuses a parsed command whose pattern is larger than the planner takes.
pub fn check_command(c: &Command) -> KipResult<()> {
    let pattern: &[WhereItem] = match c {
        Command::Find(q) => &q.where_,
        Command::Update(u) => &u.where_,
        Command::Merge(m) => &m.where_,
        Command::Export(e) => &e.where_,
        Command::Delete(
            super::ast::DeleteStmt::Attributes { where_, .. }
            | super::ast::DeleteStmt::Metadata { where_, .. }
            | super::ast::DeleteStmt::Propositions { where_, .. }
            | super::ast::DeleteStmt::Concept { where_, .. },
        ) => where_,
        Command::Search(s) if s.term.len() > MAX_SEARCH_TEXT => {
            return Err(too_large(format!(
                "the SEARCH text has {} bytes; the limit is {MAX_SEARCH_TEXT}",
                s.term.len()
            )));
        }
        _ => return Ok(()),
    };
    let mut n = Counts::default();
    n.items(pattern);
    if n.items > MAX_PATTERN_ITEMS {
        return Err(too_large(format!(
            "the pattern has {} WHERE items; the limit is {MAX_PATTERN_ITEMS}",
            n.items
        )));
    }
    if n.deepest > MAX_GROUP_DEPTH {
        return Err(too_large(format!(
            "NOT, OPTIONAL and UNION groups nest {} deep; the limit is {MAX_GROUP_DEPTH}",
            n.deepest
        )));
    }
    if n.unions > MAX_UNION_BRANCHES {
        return Err(too_large(format!(
            "the pattern has {} UNION branches; the limit is {MAX_UNION_BRANCHES}",
            n.unions
        )));
    }
    Ok(())
}

fn too_large(message: String) -> KipError {
    KipError::new(ErrorCode::ResourceExhausted, message)
        .with_hint("Split the query into several smaller ones, or use IN(...) for alternatives.")
}

#[derive(Default)]
struct Counts {
    items: usize,
    unions: usize,
    depth: usize,
    deepest: usize,
}

impl Counts {
    /// Nesting is bounded by `MAX_NESTING`, so this recursion is too.
    fn items(&mut self, list: &[WhereItem]) {
        for item in list {
            self.items += 1;
            match item {
                WhereItem::Not(inner) | WhereItem::Optional(inner) => self.group(inner),
                WhereItem::Union(inner) => {
                    self.unions += 1;
                    self.group(inner)
                }
                WhereItem::Prop(p) => self.prop(&p.pattern),
                WhereItem::Concept(_) | WhereItem::Filter(_) => {}
            }
        }
    }

    fn group(&mut self, inner: &[WhereItem]) {
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        self.items(inner);
        self.depth -= 1;
    }

    fn prop(&mut self, p: &PropPattern) {
        if let PropPattern::Triple {
            subject, object, ..
        } = p
        {
            for e in [subject, object] {
                if let Endpoint::Prop(inner) = e.as_ref() {
                    self.items += 1;
                    self.prop(inner);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_are_counted_outside_strings_and_comments() {
        let ok = format!(
            "FIND(?a) WHERE {{ ?a {{name: \"{}\"}} }} // {}",
            "||".repeat(400),
            "!".repeat(400)
        );
        assert!(check_text(&ok).is_ok());
        let ne = format!("FILTER({})", vec!["?a != 1"; 400].join(" , "));
        assert!(check_text(&ne).is_ok(), "!= is not a negation");
        let many = format!("FILTER({}(?a == 1))", "!".repeat(MAX_BOOL_OPERATORS + 1));
        let e = check_text(&many).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidSyntax);
        assert!(e.message.contains("256"), "{}", e.message);
        assert_eq!(e.line, Some(1));
    }
}
