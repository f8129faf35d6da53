//! KIP element ids: `C:<n>` for concepts, `P:<n>:<predicate>` for propositions.

pub fn concept_id(n: i64) -> String {
    let mut digits = itoa::Buffer::new();
    let d = digits.format(n);
    let mut s = String::with_capacity(2 + d.len());
    s.push_str("C:");
    s.push_str(d);
    s
}

pub fn prop_id(n: i64, predicate: &str) -> String {
    format!("P:{n}:{predicate}")
}

/// The number inside a concept id; `None` when it is not shaped like one or
/// names no possible row.
pub fn parse_concept_id(s: &str) -> Option<i64> {
    let n = s.strip_prefix("C:")?;
    n.parse::<u64>().ok().and_then(|v| i64::try_from(v).ok())
}

/// The row number inside any element id, concept (`C:12`) or proposition
/// (`P:40` / `P:40:knows`).
pub fn parse_element_id(s: &str) -> Option<i64> {
    parse_concept_id(s).or(match parse_prop_id(s) {
        PropIdParse::Ok(n, _) if n >= 0 => Some(n),
        _ => None,
    })
}

#[derive(Debug, PartialEq, Eq)]
pub enum PropIdParse {
    Ok(i64, Option<String>),
    NotAProposition,
    Malformed,
}

pub fn parse_prop_id(s: &str) -> PropIdParse {
    let Some(rest) = s.strip_prefix("P:") else {
        return if s.starts_with("C:") {
            PropIdParse::NotAProposition
        } else {
            PropIdParse::Malformed
        };
    };
    let (num, pred) = match rest.split_once(':') {
        Some((n, p)) => (n, Some(p.to_string())),
        None => (rest, None),
    };
    match num.parse::<u64>() {
        Ok(v) => match i64::try_from(v) {
            Ok(n) => PropIdParse::Ok(n, pred),
            Err(_) => PropIdParse::Ok(-1, pred),
        },
        Err(_) => PropIdParse::Malformed,
    }
}
