//! Password guessing: failed sign-ins (the password grant and the sign-in form) are counted per
//! client address, per (address, account) pair and per account, and an attempt the rules below
//! refuse answers 429 before any password is hashed (each hash costs ~0.1 s of CPU, so a refused
//! guess costs one D1 read instead).
//!
//! Each key's window starts at its first failure and ends after its period, whatever happens
//! meanwhile, so nobody is refused for good: the right password works again once the window
//! that refuses it ends.
//! - Per address: Mastodon's own limit, 25 failures per 5 minutes; over it, the address is
//!   refused for every account.
//! - Per pair (one address guessing one account): 10 failures per 15 minutes; over it, that
//!   address is refused for that account. It stops a single guesser well before the address
//!   limit, and keeps one address's guesses from filling the account's count by itself.
//! - Per account: 20 failures per 15 minutes from all addresses together; over it, the account
//!   refuses only the addresses that have themselves failed against it in their pair's window.
//!
//! The account rule refuses guessers, not the account. A lockout that refuses everyone is itself
//! a denial of service (OWASP Authentication Cheat Sheet): anyone can make an account's
//! failures, so with it a stranger could keep its owner out (200 wrong passwords from 3
//! addresses used to answer the right one from a 4th with `429 retry after 897 s`). An address
//! that has not failed against the account gets through, so the owner signing in from a clean
//! address is never refused. The price: a guesser spreading over many addresses gets, once the
//! account is over, one guess per fresh address per 15 minutes (at most 20 plus one per fresh
//! address per 15 minutes against one account, each address also bounded by its own two
//! limits), hopeless against the 10+ character passwords sign-up requires. An owner who
//! mistypes while the account is over waits out their own pair's window, or signs in from
//! another address.
//!
//! Attempts in flight at once are each checked against the counts before any of them failed,
//! so a burst sent at the same moment can overshoot every limit by its own size; the counts
//! catch up as each one fails.

/// What a key counts, which decides whom its being over the limit refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One client address, whatever account it names.
    Address,
    /// One client address against one account.
    Pair,
    /// One account, from every address.
    Account,
}

/// One counted key: its name in storage, what it counts, its limit and its window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub name: String,
    pub scope: Scope,
    pub limit: i64,
    pub period_ms: i64,
}

pub const ADDRESS_LIMIT: i64 = 25;
pub const ADDRESS_PERIOD_MS: i64 = 5 * 60 * 1000;
pub const PAIR_LIMIT: i64 = 10;
pub const PAIR_PERIOD_MS: i64 = 15 * 60 * 1000;
pub const ACCOUNT_LIMIT: i64 = 20;
pub const ACCOUNT_PERIOD_MS: i64 = 15 * 60 * 1000;

/// The keys a sign-in attempt counts against: the client's address, the address with the
/// account, and the account (lower-cased: handles are case-insensitive, so `Ana` and `ana`
/// share one count). The pair's name puts the address first: an address (from
/// `CF-Connecting-IP`) has no `/`, so a username with `/` or `:` in it cannot name another
/// address's pair.
pub fn keys(address: &str, account: &str) -> [Key; 3] {
    let account = account.to_ascii_lowercase();
    [
        key(format!("ip:{address}"), Scope::Address, ADDRESS_LIMIT, ADDRESS_PERIOD_MS),
        key(format!("pair:{address}/{account}"), Scope::Pair, PAIR_LIMIT, PAIR_PERIOD_MS),
        key(format!("acct:{account}"), Scope::Account, ACCOUNT_LIMIT, ACCOUNT_PERIOD_MS),
    ]
}

fn key(name: String, scope: Scope, limit: i64, period_ms: i64) -> Key {
    Key { name, scope, limit, period_ms }
}

/// The failures of one key so far in its current window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub name: String,
    pub failures: i64,
    pub expires_at: i64,
}

/// A key's open window at `now`: its failures, whether they reach its limit, when it ends.
#[derive(Debug, Clone, Copy, Default)]
struct Open {
    failures: i64,
    over: bool,
    ends: i64,
}

fn open(keys: &[Key], counts: &[Count], scope: Scope, now: i64) -> Open {
    let Some(key) = keys.iter().find(|k| k.scope == scope) else {
        return Open::default();
    };
    counts.iter().find(|c| c.name == key.name && c.expires_at > now).map_or_else(Open::default, |c| Open {
        failures: c.failures,
        over: c.failures >= key.limit,
        ends: c.expires_at,
    })
}

/// Whether an attempt at `now` is refused, and then the whole seconds until every rule that
/// refuses it has lifted (`Retry-After`). The account's rule lifts when either its own window
/// or the pair's ends: with the pair's ended, the address is clean again.
pub fn refused(keys: &[Key], counts: &[Count], now: i64) -> Option<u32> {
    let [address, pair, account] =
        [Scope::Address, Scope::Pair, Scope::Account].map(|scope| open(keys, counts, scope, now));
    let guessing = pair.failures >= 1;
    let lifts = [
        address.over.then_some(address.ends),
        pair.over.then_some(pair.ends),
        (account.over && guessing).then_some(account.ends.min(pair.ends)),
    ];
    let until = lifts.into_iter().flatten().max()?;
    Some(u32::try_from((until - now + 999) / 1000).unwrap_or(u32::MAX).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(name: &str, failures: i64, expires_at: i64) -> Count {
        Count { name: name.into(), failures, expires_at }
    }

    const IP: &str = "ip:1.2.3.4";
    const PAIR: &str = "pair:1.2.3.4/ana";
    const ACCT: &str = "acct:ana";

    #[test]
    fn keys_name_the_address_the_pair_and_the_account() {
        let names = keys("1.2.3.4", "Ana").map(|k| (k.name, k.scope, k.limit, k.period_ms));
        assert_eq!(
            names,
            [
                (IP.to_owned(), Scope::Address, 25, 300_000),
                (PAIR.to_owned(), Scope::Pair, 10, 900_000),
                (ACCT.to_owned(), Scope::Account, 20, 900_000),
            ]
        );
        // An IPv6 address keeps its colons; the account after the first `/` cannot move it.
        assert_eq!(keys("2001:db8::1", "ana")[1].name, "pair:2001:db8::1/ana");
        assert_ne!(keys("db8::1", "ana:2001")[1].name, keys("2001:db8::1", "ana")[1].name);
    }

    #[test]
    fn the_rule_table() {
        let keys = keys("1.2.3.4", "Ana");
        let now = 1_000_000;
        let (ip, pair, acct) = (|n, t| count(IP, n, t), |n, t| count(PAIR, n, t), |n, t| count(ACCT, n, t));
        let cases = [
            (vec![], None),
            // The address: over 25, refused whatever else.
            (vec![ip(24, now + 5_000)], None),
            (vec![ip(25, now + 5_000)], Some(5)),
            (vec![ip(25, now + 4_001)], Some(5)),
            (vec![ip(99, now)], None), // the window has ended
            (vec![ip(30, now + 1)], Some(1)),
            // The pair: over 10, refused.
            (vec![pair(9, now + 60_000)], None),
            (vec![pair(10, now + 60_000)], Some(60)),
            (vec![pair(10, now)], None),
            // The account over 20 refuses only an address that has failed against it.
            (vec![acct(19, now + 60_000), pair(1, now + 60_000)], None),
            (vec![acct(20, now + 60_000)], None),
            (vec![acct(200, now + 60_000), pair(0, now + 60_000)], None),
            (vec![acct(200, now + 60_000), pair(1, now)], None), // the pair's window has ended
            (vec![acct(20, now + 60_000), pair(1, now + 90_000)], Some(60)),
            (vec![acct(20, now + 90_000), pair(1, now + 30_000)], Some(30)), // lifts with the pair
            (vec![acct(20, now + 90_000), pair(10, now + 30_000)], Some(30)),
            // Several rules: the answer waits for the last to lift.
            (vec![ip(30, now + 1_000), acct(25, now + 90_000), pair(3, now + 120_000)], Some(90)),
            (vec![ip(30, now + 200_000), acct(25, now + 90_000), pair(3, now + 120_000)], Some(200)),
            (vec![ip(30, now + 1_000), pair(10, now + 50_000)], Some(50)),
            // Other keys' counts do not apply.
            (vec![count("ip:9.9.9.9", 99, now + 5_000)], None),
            (vec![count("pair:9.9.9.9/ana", 99, now + 5_000), acct(20, now + 5_000)], None),
            (vec![count("acct:bob", 99, now + 5_000), pair(5, now + 5_000)], None),
        ];
        for (counts, expected) in cases {
            assert_eq!(refused(&keys, &counts, now), expected, "{counts:?}");
        }
    }

    /// Counts one failure against each key as the store does: in its open window, or in a new
    /// one from `now`.
    fn fail(counts: &mut Vec<Count>, keys: &[Key], now: i64) {
        for k in keys {
            match counts.iter_mut().find(|c| c.name == k.name) {
                Some(c) if c.expires_at > now => c.failures += 1,
                Some(c) => (c.failures, c.expires_at) = (1, now + k.period_ms),
                None => counts.push(count(&k.name, 1, now + k.period_ms)),
            }
        }
    }

    /// Addresses guessing one after another until refused, within one window: how many guesses
    /// each got.
    fn guesses(counts: &mut Vec<Count>, addresses: usize, now: i64) -> Vec<usize> {
        (0..addresses)
            .map(|i| {
                let keys = keys(&format!("10.0.0.{i}"), "ana");
                let mut made = 0;
                while refused(&keys, counts, now).is_none() {
                    fail(counts, &keys, now);
                    made += 1;
                }
                made
            })
            .collect()
    }

    #[test]
    fn a_distributed_guesser_gets_20_plus_one_per_fresh_address_and_the_owner_gets_in() {
        let now = 1_000_000;
        let mut counts = Vec::new();
        let made = guesses(&mut counts, 50, now);
        // Two addresses fill their pairs and the account; every later one gets one guess.
        assert_eq!(made[..3], [10, 10, 1]);
        assert_eq!(made.iter().sum::<usize>(), 20 + 48);
        assert!(made.iter().all(|&n| n as i64 <= PAIR_LIMIT));
        // The owner, from an address that has not been guessing, is not refused.
        assert_eq!(refused(&keys("192.0.2.7", "Ana"), &counts, now), None);
        // Every guessing address is, even with the right password, until its pair's window ends.
        let guesser = keys("10.0.0.30", "ana");
        assert_eq!(refused(&guesser, &counts, now), Some(900));
        assert_eq!(refused(&guesser, &counts, now + PAIR_PERIOD_MS), None);
    }

    #[test]
    fn one_address_meets_its_pair_limit_before_its_address_limit() {
        let now = 1_000_000;
        let mut counts = Vec::new();
        assert_eq!(guesses(&mut counts, 1, now), [10]);
        // The same address against another account still has its address limit left.
        assert_eq!(refused(&keys("10.0.0.0", "bob"), &counts, now), None);
        assert_eq!(refused(&keys("10.0.0.0", "ana"), &counts, now + 1_000), Some(899));
    }
}
