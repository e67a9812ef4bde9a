//! Merging candidate streams that are each already in feed order (newest first), dropping
//! duplicates by id: the window and a D1 pull can both hold a post that is mid-fan-out.

use std::collections::HashSet;

use super::cursor::SortKey;

/// Merges two newest-first sequences into one newest-first sequence without duplicate ids.
pub fn merge_newest_first<T>(a: Vec<T>, b: Vec<T>, key: impl Fn(&T) -> SortKey) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut seen = HashSet::new();
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => key(x) >= key(y),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        let next = if take_a { a.next() } else { b.next() };
        if let Some(item) = next {
            if seen.insert(key(&item).id) {
                out.push(item);
            }
        }
    }
}

/// How far down a newest-first batch asked for `want` items is complete: its last key if it
/// came back full (more may follow), else `bound` (the source is exhausted down to there).
/// Merging two sources is exact only down to the higher of their two answers.
pub fn covered_to<T>(batch: &[T], want: usize, bound: SortKey, key: impl Fn(&T) -> SortKey) -> SortKey {
    match batch.last() {
        Some(last) if batch.len() >= want => key(last).max(bound),
        _ => bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(t: i64, id: i64) -> SortKey {
        SortKey::new(t, id)
    }

    #[test]
    fn merges_in_order_and_drops_duplicates() {
        let a = vec![k(9, 5), k(7, 3), k(5, 1)];
        let b = vec![k(8, 4), k(7, 3), k(1, 0)];
        assert_eq!(merge_newest_first(a, b, |x| *x), vec![k(9, 5), k(8, 4), k(7, 3), k(5, 1), k(1, 0)]);
    }

    #[test]
    fn ties_on_time_break_by_id() {
        let a = vec![k(5, 2)];
        let b = vec![k(5, 3), k(5, 1)];
        assert_eq!(merge_newest_first(a, b, |x| *x), vec![k(5, 3), k(5, 2), k(5, 1)]);
    }

    #[test]
    fn empty_inputs() {
        assert!(merge_newest_first(Vec::<SortKey>::new(), vec![], |x| *x).is_empty());
        assert_eq!(merge_newest_first(vec![], vec![k(1, 1)], |x| *x), vec![k(1, 1)]);
    }

    #[test]
    fn coverage_of_full_and_short_batches() {
        let floor = k(2, 0);
        assert_eq!(covered_to(&[k(9, 1), k(7, 1)], 2, floor, |x| *x), k(7, 1), "full: more may follow");
        assert_eq!(covered_to(&[k(9, 1)], 2, floor, |x| *x), floor, "short: exhausted to the bound");
        assert_eq!(covered_to(&[k(9, 1), k(1, 1)], 2, floor, |x| *x), floor, "never below the bound");
        assert_eq!(covered_to(&Vec::<SortKey>::new(), 0, floor, |x| *x), floor);
    }
}
