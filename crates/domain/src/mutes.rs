//! Mutes: a user's choice to stop seeing an account's posts in their home and list timelines
//! (and, unless asked otherwise, its notifications), without unfollowing. The muter's side is
//! the only side (`mutes` on the muter's home, migration 0025); every read checks it at read
//! time, expiry included, so a timed mute ends by itself at its time, exactly.

use super::validate::Invalid;

/// The longest timed mute, in seconds (about 100 years: "for good" is `0`).
pub const MAX_DURATION_S: u64 = 100 * 365 * 86_400;

/// A mute as a request asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mute {
    /// Also hide the account's notifications (Mastodon's `notifications`, default true).
    pub notifications: bool,
    /// When the mute ends by itself (ms); `None`: when unmuted.
    pub expires_at: Option<i64>,
}

impl Mute {
    /// From Mastodon's parameters: `notifications` (default true) and `duration` in seconds
    /// (`0` or absent: indefinite).
    pub fn new(notifications: Option<bool>, duration_s: Option<u64>, now: i64) -> Result<Self, Invalid> {
        let expires_at = match duration_s {
            None | Some(0) => None,
            Some(s) if s <= MAX_DURATION_S => Some(now + s as i64 * 1000),
            Some(_) => {
                return Err(Invalid::new("duration", format!("duration must be 0..{MAX_DURATION_S} seconds")))
            }
        };
        Ok(Self { notifications: notifications.unwrap_or(true), expires_at })
    }
}

/// Whether a stored mute stands at `now`.
pub fn active(expires_at: Option<i64>, now: i64) -> bool {
    expires_at.is_none_or(|at| at > now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_map_to_a_mute() {
        let now = 1_000_000;
        let cases = [
            (None, None, Ok((true, None))),
            (Some(false), Some(0), Ok((false, None))),
            (Some(true), Some(60), Ok((true, Some(now + 60_000)))),
            (None, Some(MAX_DURATION_S), Ok((true, Some(now + MAX_DURATION_S as i64 * 1000)))),
            (None, Some(MAX_DURATION_S + 1), Err("duration")),
        ];
        for (notifications, duration, want) in cases {
            let got = Mute::new(notifications, duration, now).map(|m| (m.notifications, m.expires_at));
            assert_eq!(got.map_err(|e| e.field), want, "{notifications:?} {duration:?}");
        }
    }

    #[test]
    fn a_timed_mute_ends_at_its_time() {
        assert!(active(None, i64::MAX));
        assert!(active(Some(10), 9));
        assert!(!active(Some(10), 10));
        assert!(!active(Some(10), 11));
    }
}
