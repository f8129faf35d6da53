//! Markdown tables in a block: a profile kept as a table of keys and
//! values (`| **名稱** | 痞子林 |` under `## 👤 用戶資料`), a list of people
//! kept as a table of names and what each is to the user (`| Noah |
//! Filho | 15 anos |` under `## 🔗 Pessoas Importantes`). The block itself
//! stays as written; its rows are read as its bullets are.

/// A table's row as its cells (without their bold marks), when the line
/// is one: it opens with `|` and parts at least two cells.
pub(super) fn cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    let inner = t.strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let cells: Vec<String> = inner
        .split('|')
        .map(|c| {
            c.trim()
                .trim_matches(['*', '_'])
                .trim()
                .trim_matches('`')
                .trim()
                .to_string()
        })
        .collect();
    (cells.len() >= 2).then_some(cells)
}

/// Whether a row is the line under a table's header (`|---|:---:|`).
pub(super) fn separator(cells: &[String]) -> bool {
    cells.iter().all(|c| {
        let c = c.trim_matches(':');
        !c.is_empty() && c.chars().all(|ch| ch == '-')
    })
}

/// A cell that says nothing (`-`, `—`, `…`).
fn empty(cell: &str) -> bool {
    cell.chars()
        .all(|c| c.is_whitespace() || "-—–…./".contains(c))
}

/// A table's rows below their headers, each as a bullet's text would be:
/// `**name** — what the other cells say`.
pub(super) fn row_lines(rows: &[(usize, Vec<String>)]) -> Vec<(usize, String)> {
    rows.iter()
        .filter_map(|(at, cells)| {
            let first = cells.first()?.trim();
            if first.is_empty() {
                return None;
            }
            let rest: Vec<&str> = cells[1..]
                .iter()
                .map(|c| c.trim())
                .filter(|c| !empty(c))
                .collect();
            if rest.is_empty() {
                return None;
            }
            Some((*at, format!("**{first}** — {}", rest.join(" — "))))
        })
        .collect()
}

/// A table's rows as keys and values: each row's first two cells.
pub(super) fn row_pairs(rows: &[(usize, Vec<String>)]) -> Vec<(usize, String, String)> {
    rows.iter()
        .filter_map(|(at, cells)| {
            let (k, v) = (cells.first()?, cells.get(1)?);
            (!k.is_empty() && !empty(v)).then(|| (*at, k.clone(), v.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_and_its_header() {
        assert_eq!(
            cells("| **名稱** | 痞子林 |"),
            Some(vec!["名稱".to_string(), "痞子林".to_string()])
        );
        assert_eq!(cells("|------|:----:|").map(|c| separator(&c)), Some(true));
        assert_eq!(cells("| a | b |").map(|c| separator(&c)), Some(false));
        assert_eq!(cells("no | table"), None);
        assert_eq!(cells("|one|"), None);
        let rows = vec![(3, vec!["Noah".to_string(), "Filho".into(), "-".into()])];
        assert_eq!(row_lines(&rows), vec![(3, "**Noah** — Filho".to_string())]);
        assert_eq!(
            row_pairs(&rows),
            vec![(3, "Noah".to_string(), "Filho".to_string())]
        );
    }
}
