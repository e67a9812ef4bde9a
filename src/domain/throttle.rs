//! Password guessing: failed sign-ins (the password grant and the sign-in form) are counted per
//! client address and per account, and once either is over its limit the next attempt is
//! refused with 429 before any password is hashed (each hash costs ~0.1 s of CPU, so a refused
//! guess costs one D1 read instead).
//!
//! Each key's window starts at its first failure and ends after its period, whatever happens
//! meanwhile, so nobody is locked out for good: the right password works again once the window
//! ends, and from another address the per-address limit does not apply.
//! - Per address: Mastodon's own limit, 25 failures per 5 minutes.
//! - Per account: 20 failures per 15 minutes. An attacker spreading guesses over many addresses
//!   gets at most 80 an hour (under 2,000 a day) against one account, hopeless against the 10+
//!   character passwords sign-up requires; the owner, who mistypes a few times, never meets it.
//!   It is looser than a lockout on purpose: anyone can make an account's failures, so the
//!   account limit is also what a stranger can impose on its owner (a sign-in pause of at most
//!   15 minutes after the guessing stops; tokens already issued keep working).

/// One counted key: its name in storage, its limit and its window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub name: String,
    pub limit: i64,
    pub period_ms: i64,
}

pub const ADDRESS_LIMIT: i64 = 25;
pub const ADDRESS_PERIOD_MS: i64 = 5 * 60 * 1000;
pub const ACCOUNT_LIMIT: i64 = 20;
pub const ACCOUNT_PERIOD_MS: i64 = 15 * 60 * 1000;

/// The keys a sign-in attempt counts against: the client's address and the account it names
/// (lower-cased: handles are case-insensitive, so `Ana` and `ana` share one count).
pub fn keys(address: &str, account: &str) -> [Key; 2] {
    [
        Key { name: format!("ip:{address}"), limit: ADDRESS_LIMIT, period_ms: ADDRESS_PERIOD_MS },
        Key {
            name: format!("acct:{}", account.to_ascii_lowercase()),
            limit: ACCOUNT_LIMIT,
            period_ms: ACCOUNT_PERIOD_MS,
        },
    ]
}

/// The failures of one key so far in its current window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub name: String,
    pub failures: i64,
    pub expires_at: i64,
}

/// Whether an attempt at `now` is refused, and then the whole seconds until every key over its
/// limit has its window ended (`Retry-After`).
pub fn refused(keys: &[Key], counts: &[Count], now: i64) -> Option<u32> {
    let over = counts
        .iter()
        .filter(|c| c.expires_at > now)
        .filter(|c| keys.iter().any(|k| k.name == c.name && c.failures >= k.limit));
    let until = over.map(|c| c.expires_at).max()?;
    Some(u32::try_from((until - now + 999) / 1000).unwrap_or(u32::MAX).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(name: &str, failures: i64, expires_at: i64) -> Count {
        Count { name: name.into(), failures, expires_at }
    }

    #[test]
    fn refused_only_over_a_limit_within_its_window() {
        let keys = keys("1.2.3.4", "Ana");
        assert_eq!(keys[1].name, "acct:ana");
        let now = 1_000_000;
        let cases = [
            (vec![], None),
            (vec![count("ip:1.2.3.4", 24, now + 5_000)], None),
            (vec![count("ip:1.2.3.4", 25, now + 5_000)], Some(5)),
            (vec![count("ip:1.2.3.4", 25, now + 4_001)], Some(5)),
            (vec![count("ip:1.2.3.4", 99, now)], None), // the window has ended
            (vec![count("acct:ana", 19, now + 60_000)], None),
            (vec![count("acct:ana", 20, now + 60_000)], Some(60)),
            (vec![count("ip:1.2.3.4", 30, now + 1_000), count("acct:ana", 25, now + 90_000)], Some(90)),
            (vec![count("ip:1.2.3.4", 30, now + 1)], Some(1)),
            (vec![count("ip:9.9.9.9", 99, now + 5_000)], None), // another address's count
        ];
        for (counts, expected) in cases {
            assert_eq!(refused(&keys, &counts, now), expected, "{counts:?}");
        }
    }

    #[test]
    fn mastodon_s_address_limit() {
        assert_eq!((ADDRESS_LIMIT, ADDRESS_PERIOD_MS), (25, 300_000));
        assert_eq!((ACCOUNT_LIMIT, ACCOUNT_PERIOD_MS), (20, 900_000));
    }
}
