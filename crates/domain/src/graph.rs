//! The follow/block graph on both endpoints' sides: what each side's mirror must hold, decided
//! from the authoritative copies as they are *now* (invariant 8: events are applied by the
//! current state, so redelivery, reordering and a crash between the sides all converge).
//!
//! A pair of users `(a, b)` has four authoritative facts, two on each user's side:
//! `a follows b` and `a blocks b` on a's side, `b follows a` and `b blocks a` on b's side.
//! Each side also holds the mirrors of the other side's facts about it: `followers(a, b)`
//! (b follows a) and `blocked_by(a, b)` (b blocks a) on a's side, and symmetrically on b's.

/// One user's authoritative facts about the other user of the pair, read on that user's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SideFacts {
    /// This user follows the other (the follower-side row exists).
    pub follows: bool,
    /// This user blocks the other (the blocker-side row exists).
    pub blocks: bool,
}

/// What one user's side must hold about the other: the mirrors, and whether this user's own
/// follow of the other must go (a block either way removes follows both ways).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SideWrites {
    /// `blocked_by(me, other)`: the other blocks me.
    pub blocked_by: bool,
    /// `followers(me, other)`: the other follows me (and no block stands between us).
    pub follower: bool,
    /// Delete my follower-side row of the other (I follow them, but a block stands).
    pub drop_follow: bool,
}

/// The writes for `(a's side, b's side)` from both sides' facts.
pub fn mirror_writes(a: SideFacts, b: SideFacts) -> (SideWrites, SideWrites) {
    let blocked = a.blocks || b.blocks;
    let side = |me: SideFacts, other: SideFacts| SideWrites {
        blocked_by: other.blocks,
        follower: other.follows && !blocked,
        drop_follow: me.follows && blocked,
    };
    (side(a, b), side(b, a))
}

/// Whether two reads of the pair call for the same mirrors: the apply writes from one read,
/// reads again, and goes round once more when they differ (a change committed meanwhile whose
/// own apply may already have run before this one's write).
pub fn same_mirrors(before: (SideFacts, SideFacts), after: (SideFacts, SideFacts)) -> bool {
    let mirrors = |(a, b)| {
        let (wa, wb): (SideWrites, SideWrites) = mirror_writes(a, b);
        (wa.blocked_by, wa.follower, wb.blocked_by, wb.follower)
    };
    mirrors(before) == mirrors(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn f(follows: bool, blocks: bool) -> SideFacts {
        SideFacts { follows, blocks }
    }

    const fn w(blocked_by: bool, follower: bool, drop_follow: bool) -> SideWrites {
        SideWrites { blocked_by, follower, drop_follow }
    }

    #[test]
    fn mirrors_follow_the_authoritative_sides() {
        // (a's facts, b's facts) -> (a's side, b's side)
        let table = [
            (f(false, false), f(false, false), w(false, false, false), w(false, false, false)),
            // a follows b: b's side lists a as a follower.
            (f(true, false), f(false, false), w(false, false, false), w(false, true, false)),
            (f(true, false), f(true, false), w(false, true, false), w(false, true, false)),
            // a blocks b: b's side knows; b's follow of a goes, and no mirror of it stays.
            (f(false, true), f(true, false), w(false, false, false), w(true, false, true)),
            // a follows b and blocks b (a block racing a follow): a's follow goes.
            (f(true, true), f(false, false), w(false, false, true), w(true, false, false)),
            // Blocks both ways, follows both ways: everything goes but the two blocked_by.
            (f(true, true), f(true, true), w(true, false, true), w(true, false, true)),
        ];
        for (a, b, wa, wb) in table {
            assert_eq!(mirror_writes(a, b), (wa, wb), "a {a:?}, b {b:?}");
        }
    }

    #[test]
    fn applying_is_idempotent_and_any_order_converges() {
        // Whatever was applied before (any earlier state's writes), applying the current state's
        // writes gives the same mirrors: the result depends only on the state now.
        let states: Vec<SideFacts> =
            [(false, false), (true, false), (false, true), (true, true)].map(|(x, y)| f(x, y)).to_vec();
        for &a in &states {
            for &b in &states {
                let now = mirror_writes(a, b);
                assert_eq!(mirror_writes(a, b), now, "deterministic");
                // After the drops, the follows that a block removes are gone: same mirrors.
                let (wa, wb) = now;
                let a2 = SideFacts { follows: a.follows && !wa.drop_follow, ..a };
                let b2 = SideFacts { follows: b.follows && !wb.drop_follow, ..b };
                assert!(same_mirrors((a, b), (a2, b2)), "drops do not change the mirrors");
                let (xa, xb) = mirror_writes(a2, b2);
                assert!(!xa.drop_follow && !xb.drop_follow, "a second apply drops nothing more");
            }
        }
        assert!(!same_mirrors((f(true, false), f(false, false)), (f(false, false), f(false, false))));
    }
}
