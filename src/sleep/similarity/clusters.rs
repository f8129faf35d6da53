//! Pairs judged the same, as clusters: every element that is one thing
//! in one group, so a merge is one proposal item however many copies
//! there are.
//!
//! Pairs join greedily, most confident first; two groups never join
//! when any pair across them was judged different (`A~B`, `B~C` but
//! `A≠C` leaves C out of A's group rather than merge what was judged
//! apart).

use std::collections::HashSet;

/// Groups `n` elements by the pairs judged the same (`same`: `(a, b,
/// confidence)`), never putting a pair judged different (`apart`) in
/// one group. Returns the groups of two or more, each sorted, in the
/// order of their first element.
pub fn clusters(
    n: usize,
    same: &[(usize, usize, f64)],
    apart: &HashSet<(usize, usize)>,
) -> Vec<Vec<usize>> {
    let mut group: Vec<usize> = (0..n).collect();
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut order: Vec<&(usize, usize, f64)> = same.iter().filter(|e| e.0 < n && e.1 < n).collect();
    order.sort_by(|x, y| y.2.total_cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    for &(a, b, _) in order {
        let (ga, gb) = (group[a], group[b]);
        if ga == gb {
            continue;
        }
        let kept_apart = members[ga].iter().any(|&x| {
            members[gb]
                .iter()
                .any(|&y| apart.contains(&(x.min(y), x.max(y))))
        });
        if kept_apart {
            continue;
        }
        let moved = std::mem::take(&mut members[gb]);
        for &m in &moved {
            group[m] = ga;
        }
        members[ga].extend(moved);
    }
    let mut out: Vec<Vec<usize>> = members
        .into_iter()
        .filter(|m| m.len() > 1)
        .map(|mut m| {
            m.sort_unstable();
            m
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_become_one_group() {
        let g = clusters(5, &[(0, 1, 0.9), (1, 2, 0.8), (3, 4, 0.7)], &HashSet::new());
        assert_eq!(g, vec![vec![0, 1, 2], vec![3, 4]]);
    }

    #[test]
    fn a_pair_judged_apart_is_never_in_one_group() {
        let apart: HashSet<(usize, usize)> = [(0, 2)].into_iter().collect();
        // 0~1 is surer than 1~2: 2 stays out
        let g = clusters(3, &[(0, 1, 0.9), (1, 2, 0.8)], &apart);
        assert_eq!(g, vec![vec![0, 1]]);
        let g = clusters(3, &[(0, 1, 0.7), (1, 2, 0.8)], &apart);
        assert_eq!(g, vec![vec![1, 2]]);
    }

    #[test]
    fn out_of_range_pairs_are_ignored() {
        assert!(clusters(2, &[(0, 5, 1.0)], &HashSet::new()).is_empty());
    }
}
