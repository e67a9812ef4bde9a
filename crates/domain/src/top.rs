//! The orders of a post's comments, and "top": a hot score of likes and age, paged by a cursor
//! bound to a score snapshot.
//!
//! `score = (likes + 1) / (age_hours + 2)^2`, the age taken at the snapshot time (the first
//! page's request time, carried by every later page's cursor) and never below 0. Likes lift a
//! comment, age pulls it down: at equal age more likes rank higher; a fresh comment outranks an
//! old one with few likes, and as both age the ratio of their denominators tends to 1, so an
//! old thread's order tends to its likes. The score is computed by SQLite (`score_sql`) with
//! the same IEEE-754 operations in the same order as [`score`], over every live comment of the
//! post: there is no index on a time-dependent order.
//!
//! Paging: the list is `(score, id)` descending at the snapshot, and a cursor carries the last
//! comment's exact score (its bits) and id with the snapshot; the next page is the comments
//! strictly below that key, scored at the same snapshot. So age terms never move between pages,
//! and an unchanged thread pages every comment exactly once. What moves is likes (and comments
//! made or deleted meanwhile), and each comment is judged by its score now against the cursor:
//! - a comment **repeats** only if it was shown and then lost likes so its score fell below the
//!   cursor;
//! - a comment is **skipped** only if it was not yet shown and gained likes so its score rose
//!   above the cursor;
//! - a comment made after the snapshot is scored at age 0; it appears on a later page only if
//!   that score is below the cursor, else on a fresh first page; a deleted one just stops
//!   appearing.
//!
//! `oldest` and `newest` stay the exact `(created_at, id)` orders of `domain/cursor.rs`.

use super::cursor::{Order, SortKey};

/// Milliseconds in an hour: the score's unit of age.
const HOUR_MS: f64 = 3_600_000.0;
/// Hours added to every age, so a brand-new comment's score is finite and a few minutes of age
/// do not decide the order on their own.
const AGE_OFFSET_HOURS: f64 = 2.0;

/// A comment's hot score at `snapshot` (ms): `(likes + 1) / (age_hours + 2)^2`. The gravity
/// is 2, a product rather than a power, so SQLite computes it without math functions.
pub fn score(likes: i64, created_at: i64, snapshot: i64) -> f64 {
    let age = (snapshot - created_at).max(0) as f64 / HOUR_MS + AGE_OFFSET_HOURS;
    (likes as f64 + 1.0) / (age * age)
}

/// [`score`] as a SQL expression over the columns `likes` and `created_at` and the snapshot
/// parameter `snapshot` (e.g. `?6`): the same operations in the same order.
pub fn score_sql(likes: &str, created_at: &str, snapshot: &str) -> String {
    let age = format!("(max({snapshot} - {created_at}, 0) / {HOUR_MS:.1} + {AGE_OFFSET_HOURS:.1})");
    format!("(({likes} + 1.0) / ({age} * {age}))")
}

/// How `GET /v1/posts/{id}/comments` lists a post's comments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CommentOrder {
    /// By `(created_at, id)`, exact.
    Time(Order),
    /// By `(score, id)` descending, scored at `snapshot` (ms).
    Top { snapshot: i64 },
}

impl CommentOrder {
    /// The `order` parameter's values, with the first page's snapshot for `top`.
    pub fn parse(text: &str, now: i64) -> Option<Self> {
        match text {
            "oldest" => Some(Self::Time(Order::OldestFirst)),
            "newest" => Some(Self::Time(Order::NewestFirst)),
            "top" => Some(Self::Top { snapshot: now }),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Time(Order::OldestFirst) => "oldest",
            Self::Time(Order::NewestFirst) => "newest",
            Self::Top { .. } => "top",
        }
    }

    /// The key of a comment made at `created_at`, with `score` at the snapshot (top only).
    pub fn key(self, created_at: i64, id: i64, score: Option<f64>) -> SortKey {
        match self {
            Self::Time(_) => SortKey::new(created_at, id),
            Self::Top { .. } => top_key(score.unwrap_or(0.0), id),
        }
    }

    /// The key before the list's first item.
    pub fn start(self) -> SortKey {
        match self {
            Self::Time(Order::OldestFirst) => SortKey::BOTTOM,
            Self::Time(Order::NewestFirst) => SortKey::TOP,
            // Above every score: a score is at most (likes + 1) / 4.
            Self::Top { .. } => top_key(f64::MAX, i64::MAX),
        }
    }
}

/// A top-ordered comment's cursor key: its score's bits (a score is never negative, and the
/// bits of non-negative doubles order as the doubles do) and its id. The exact bits travel, so
/// the next page starts exactly below it.
pub fn top_key(score: f64, id: i64) -> SortKey {
    SortKey::new(score.to_bits() as i64, id)
}

/// The score a [`top_key`] carries.
pub fn score_of(key: SortKey) -> f64 {
    f64::from_bits(key.primary as u64)
}

/// Whether a comment with `score` and `id` belongs after `cursor` in top order (the SQL's
/// `(score, id) < (cursor's score, cursor's id)`).
pub fn is_after(score: f64, id: i64, cursor: SortKey) -> bool {
    let at = score_of(cursor);
    score < at || (score == at && id < cursor.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;
    const T: i64 = 1_800_000_000_000;

    /// A comment as the model needs it: id, likes, created_at.
    type C = (i64, i64, i64);

    /// What the SQL does: the comments after `cursor` at `snapshot`, best first, `limit` of
    /// them, and the cursor key of the last one when more remain.
    fn page(comments: &[C], snapshot: i64, cursor: SortKey, limit: usize) -> (Vec<i64>, Option<SortKey>) {
        let mut scored: Vec<(f64, i64)> = comments
            .iter()
            .map(|&(id, likes, at)| (score(likes, at, snapshot), id))
            .filter(|&(s, id)| is_after(s, id, cursor))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let more = scored.len() > limit;
        scored.truncate(limit);
        let next = scored.last().filter(|_| more).map(|&(s, id)| top_key(s, id));
        (scored.into_iter().map(|(_, id)| id).collect(), next)
    }

    #[test]
    fn likes_lift_and_age_pulls_down() {
        assert_eq!(score(0, T, T), 0.25);
        assert_eq!(score(3, T, T), 1.0);
        assert!(score(5, T, T) > score(4, T, T));
        assert!(score(4, T - HOUR, T) < score(4, T, T));
        // A comment from the future of the snapshot (made after it) counts as brand new.
        assert_eq!(score(0, T + HOUR, T), score(0, T, T));
        // An hour-old comment with 10 likes beats a fresh one with none; a day later it still
        // does, and the ratio of their ages' terms has moved toward 1.
        assert!(score(10, T - HOUR, T) > score(0, T, T));
        assert!(score(10, T - HOUR, T + 24 * HOUR) > score(0, T, T + 24 * HOUR));
        // A fresh comment beats a week-old one with a few likes.
        assert!(score(0, T, T) > score(20, T - 7 * 24 * HOUR, T));
    }

    #[test]
    fn the_sql_form_has_the_same_operations() {
        assert_eq!(
            score_sql("c.like_count", "c.created_at", "?6"),
            "((c.like_count + 1.0) / ((max(?6 - c.created_at, 0) / 3600000.0 + 2.0) * \
             (max(?6 - c.created_at, 0) / 3600000.0 + 2.0)))"
        );
    }

    #[test]
    fn keys_carry_the_exact_score_and_order_as_scores_do() {
        for s in [0.0, 1e-300, 0.25, 1.0 / 3.0, 7.5, 1e15] {
            assert_eq!(score_of(top_key(s, 9)), s);
            assert!(top_key(s, 9) < top_key(s * 2.0 + 1e-300, 1), "{s}");
        }
        let start = CommentOrder::Top { snapshot: T }.start();
        assert!(is_after(score(1_000_000, T, T), 5, start));
        assert!(is_after(0.5, 4, top_key(0.5, 5)) && !is_after(0.5, 5, top_key(0.5, 5)));
        assert!(!is_after(0.6, 1, top_key(0.5, 5)));
    }

    #[test]
    fn orders_parse_and_name_themselves() {
        for name in ["oldest", "newest", "top"] {
            assert_eq!(CommentOrder::parse(name, T).map(CommentOrder::name), Some(name));
        }
        assert_eq!(CommentOrder::parse("top", T), Some(CommentOrder::Top { snapshot: T }));
        assert_eq!(CommentOrder::parse("hot", T), None);
        assert_eq!(CommentOrder::parse("Top", T), None);
    }

    /// Comments with many ties (equal likes, equal times) and a spread of ages.
    fn thread() -> Vec<C> {
        (1..=37).map(|id| (id, (id * 7) % 5, T - (id % 4) * HOUR / 2)).collect()
    }

    #[test]
    fn an_unchanged_thread_pages_every_comment_exactly_once_in_score_order() {
        let comments = thread();
        for limit in [1, 2, 5, 36, 37, 100] {
            let (mut seen, mut cursor) = (Vec::new(), CommentOrder::Top { snapshot: T }.start());
            // Pages read later than the snapshot: the cursor's snapshot, not the clock, scores.
            loop {
                let (ids, next) = page(&comments, T, cursor, limit);
                seen.extend(ids);
                match next {
                    Some(next) => cursor = next,
                    None => break,
                }
            }
            let mut sorted = seen.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (1..=37).collect::<Vec<_>>(), "limit {limit}: each once");
            let scores: Vec<f64> = seen
                .iter()
                .map(|id| comments.iter().find(|c| c.0 == *id).map(|c| score(c.1, c.2, T)).unwrap_or(-1.0))
                .collect();
            assert!(scores.windows(2).all(|w| w[0] >= w[1]), "limit {limit}: best first");
        }
    }

    #[test]
    fn likes_moving_between_pages_repeat_only_the_unliked_and_skip_only_the_newly_liked() {
        let mut comments = thread();
        let (first, cursor) = page(&comments, T, CommentOrder::Top { snapshot: T }.start(), 10);
        let cursor = cursor.unwrap_or(SortKey::BOTTOM);
        // A shown comment loses its likes; an unshown one below the cursor gains many.
        let shown = first[0];
        let unshown = (1..=37).find(|id| !first.contains(id)).unwrap_or(0);
        for c in comments.iter_mut() {
            if c.0 == shown {
                c.1 = 0;
            }
            if c.0 == unshown {
                c.1 = 1_000;
            }
        }
        let mut rest = Vec::new();
        let mut at = cursor;
        loop {
            let (ids, next) = page(&comments, T, at, 10);
            rest.extend(ids);
            match next {
                Some(next) => at = next,
                None => break,
            }
        }
        let repeated: Vec<i64> = rest.iter().copied().filter(|id| first.contains(id)).collect();
        let all: Vec<i64> = first.iter().chain(&rest).copied().collect();
        let skipped: Vec<i64> = (1..=37).filter(|id| !all.contains(id)).collect();
        assert_eq!(repeated, vec![shown], "only the unliked comment repeats");
        assert_eq!(skipped, vec![unshown], "only the newly liked comment is skipped");
    }
}
