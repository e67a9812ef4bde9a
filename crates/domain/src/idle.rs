//! Idle windows (seed 002 §5.1: the timelines of inactive readers are evicted). A reader who has
//! not read their feed for more than `WINDOW_IDLE_DAYS` has their window object's storage
//! deleted; D1 is the truth, so nothing is lost: their next read builds the window from D1 as
//! it builds a new reader's (`domain::read`, the window's opening).
//!
//! This is the rule the object's alarm applies: given what the object holds, is it idle now, and
//! when does it become idle if nothing changes (when to wake next). The reference time is the
//! reader's last read; an object that records no read (one whose storage was deleted and that
//! fan-out kept delivering to, or one from before reads were recorded) goes by its newest
//! entry, so a delivery racing a rebuild from D1 (always of a post made moments ago) is never
//! deleted before the rebuild merges it. An object that keeps neither holds nothing of the
//! reader's feed (an empty schema, stray tombstones): idle whenever the check runs, but a
//! request that finds it so schedules the check a whole period out, so a stray request is never
//! followed at once by a deletion that could race a rebuild.
//!
//! Never idle while a live socket is open (its sessions live in the object), nor while a live
//! ticket the object accepted is still valid (forgetting it would let it be used twice).

/// While something keeps the object (a live socket), how soon to look again at the latest.
pub const RECHECK_MS: i64 = 60 * 60 * 1000;

/// What the object holds, as far as idleness goes. Times in ms since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Holdings {
    /// The reader's last feed read, if the object records one.
    pub last_read_at: Option<i64>,
    /// The creation time of the window's newest entry, if it has any.
    pub newest_entry_at: Option<i64>,
    /// Whether a live socket is open.
    pub live_sockets: bool,
    /// When the last live ticket the object remembers expires.
    pub tickets_until: Option<i64>,
}

/// The rule's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Idleness {
    /// Delete the object's storage now.
    pub idle: bool,
    /// When to run the check if nothing changes (never before `now`): when the object becomes
    /// idle, or when what keeps it may have gone. A request schedules the check for this time
    /// (the alarm evicts when `idle`, or asks again for this time).
    pub wake_at: i64,
}

/// Idle means more than `idle_ms` since the reference time (exactly `idle_ms` is not idle
/// yet, as exactly `ACTIVE_DAYS` is still active in `domain::policy`).
pub fn idleness(holdings: &Holdings, now: i64, idle_ms: i64) -> Idleness {
    let since = holdings.last_read_at.or(holdings.newest_entry_at);
    let due = since.map_or(now, |t| t.saturating_add(idle_ms).saturating_add(1));
    let kept_until = if holdings.live_sockets {
        Some(now.saturating_add(RECHECK_MS))
    } else {
        holdings.tickets_until.filter(|t| *t > now)
    };
    match kept_until {
        Some(until) => Idleness { idle: false, wake_at: due.max(until) },
        None if since.is_none() => Idleness { idle: true, wake_at: now.saturating_add(idle_ms) },
        None => Idleness { idle: due <= now, wake_at: due.max(now) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::DAY_MS;

    const NOW: i64 = 1_800_000_000_000;
    const IDLE: i64 = 30 * DAY_MS;

    fn read(days_ago: i64) -> Holdings {
        Holdings { last_read_at: Some(NOW - days_ago * DAY_MS), ..Holdings::default() }
    }

    fn check(h: Holdings) -> (bool, i64) {
        let i = idleness(&h, NOW, IDLE);
        (i.idle, i.wake_at)
    }

    #[test]
    fn idle_after_the_period_since_the_last_read() {
        let cases = [
            // (holdings, idle, wake_at)
            (read(0), false, NOW + IDLE + 1),
            (read(10), false, NOW + 20 * DAY_MS + 1),
            (read(30), false, NOW + 1), // exactly the period: not yet
            (Holdings { last_read_at: Some(NOW - IDLE - 1), ..Holdings::default() }, true, NOW),
            (read(31), true, NOW),
            (read(400), true, NOW),
        ];
        for (h, idle, wake_at) in cases {
            assert_eq!(check(h), (idle, wake_at), "{h:?}");
        }
    }

    #[test]
    fn the_last_read_wins_over_entries_and_entries_stand_in_without_one() {
        let fresh_entry = Some(NOW - DAY_MS);
        let both = Holdings { newest_entry_at: fresh_entry, ..read(31) };
        assert_eq!(check(both), (true, NOW), "deliveries do not keep an idle reader's window");
        // No read recorded (storage deleted before, fan-out kept delivering): the newest entry.
        let delivered = Holdings { newest_entry_at: fresh_entry, ..Holdings::default() };
        assert_eq!(check(delivered), (false, NOW + 29 * DAY_MS + 1));
        let stale = Holdings { newest_entry_at: Some(NOW - 31 * DAY_MS), ..Holdings::default() };
        assert_eq!(check(stale), (true, NOW));
        // Nothing of the feed held (an empty schema, stray tombstones): idle when the alarm
        // runs, but a request finding it so schedules the check a period out, not at once.
        assert_eq!(check(Holdings::default()), (true, NOW + IDLE));
    }

    #[test]
    fn never_idle_while_a_socket_is_open_or_a_ticket_is_valid() {
        let live = |h: Holdings| Holdings { live_sockets: true, ..h };
        assert_eq!(check(live(read(31))), (false, NOW + RECHECK_MS));
        assert_eq!(check(live(Holdings::default())), (false, NOW + RECHECK_MS));
        assert_eq!(check(live(read(0))), (false, NOW + IDLE + 1), "the later of the two");
        let ticket = |h: Holdings, until: i64| Holdings { tickets_until: Some(until), ..h };
        assert_eq!(check(ticket(read(31), NOW + 60_000)), (false, NOW + 60_000));
        assert_eq!(check(ticket(read(31), NOW)), (true, NOW), "an expired ticket keeps nothing");
        assert_eq!(check(ticket(read(0), NOW + 60_000)), (false, NOW + IDLE + 1));
    }

    #[test]
    fn a_reader_who_reads_again_is_looked_at_a_whole_period_later() {
        // The alarm set for the old read fires; the reader read since: wake a period after that.
        let old = idleness(&read(5), NOW, IDLE);
        let fired_at = old.wake_at;
        let again = idleness(
            &Holdings { last_read_at: Some(fired_at - DAY_MS), ..Holdings::default() },
            fired_at,
            IDLE,
        );
        assert_eq!((again.idle, again.wake_at), (false, fired_at - DAY_MS + IDLE + 1));
        // Never a wake in the past, whatever the clocks say.
        let future_read = Holdings { last_read_at: Some(NOW + DAY_MS), ..Holdings::default() };
        assert!(idleness(&future_read, NOW, IDLE).wake_at > NOW);
        let overflow =
            idleness(&Holdings { last_read_at: Some(i64::MAX - 5), ..Holdings::default() }, NOW, IDLE);
        assert_eq!((overflow.idle, overflow.wake_at), (false, i64::MAX));
    }
}
