//! Polls (issue 42): what a poll may be (Mastodon's defaults: 2 to 4 options of at most 50
//! characters, open for 5 minutes to a month), what a vote may choose, and what a viewer is shown.

use serde::{Deserialize, Serialize};

use super::validate::Invalid;

pub const MIN_OPTIONS: usize = 2;
pub const MAX_OPTIONS: usize = 4;
pub const MAX_OPTION_CHARS: usize = 50;
pub const MIN_EXPIRATION_SECS: i64 = 300;
pub const MAX_EXPIRATION_SECS: i64 = 2_629_746;

/// A poll as a request sends it (a form's strings or JSON's values, already as text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawPoll {
    pub options: Vec<String>,
    pub expires_in: Option<String>,
    pub multiple: Option<bool>,
    pub hide_totals: Option<bool>,
}

/// A valid poll to publish with a post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollDraft {
    pub options: Vec<String>,
    pub expires_in_secs: i64,
    pub multiple: bool,
    pub hide_totals: bool,
}

fn refused(reason: impl Into<String>) -> Invalid {
    Invalid::new("poll", reason)
}

impl PollDraft {
    pub fn parse(raw: &RawPoll) -> Result<PollDraft, Invalid> {
        let options: Vec<String> = raw.options.iter().map(|o| o.trim().to_owned()).collect();
        if !(MIN_OPTIONS..=MAX_OPTIONS).contains(&options.len()) {
            return Err(refused(format!("poll: give {MIN_OPTIONS} to {MAX_OPTIONS} options")));
        }
        if options.iter().any(|o| o.is_empty() || o.chars().count() > MAX_OPTION_CHARS) {
            return Err(refused(format!("poll: each option needs 1 to {MAX_OPTION_CHARS} characters")));
        }
        if options.iter().any(|o| o.chars().any(char::is_control)) {
            return Err(refused("poll: an option may not hold control characters"));
        }
        let mut unique = options.clone();
        unique.sort();
        unique.dedup();
        if unique.len() != options.len() {
            return Err(refused("poll: the options must differ"));
        }
        let expires_in = raw.expires_in.as_deref().map(str::trim).filter(|e| !e.is_empty());
        let expires_in = expires_in.ok_or_else(|| refused("poll: expires_in is required"))?;
        let secs: i64 =
            expires_in.parse().map_err(|_| refused("poll: expires_in must be a number of seconds"))?;
        if !(MIN_EXPIRATION_SECS..=MAX_EXPIRATION_SECS).contains(&secs) {
            return Err(refused(format!(
                "poll: expires_in must be {MIN_EXPIRATION_SECS} to {MAX_EXPIRATION_SECS} seconds"
            )));
        }
        Ok(PollDraft {
            options,
            expires_in_secs: secs,
            multiple: raw.multiple.unwrap_or(false),
            hide_totals: raw.hide_totals.unwrap_or(false),
        })
    }

    /// The options as stored (a JSON array of strings).
    pub fn options_json(&self) -> String {
        serde_json::to_string(&self.options).unwrap_or_else(|_| "[]".into())
    }
}

/// A vote's choices (`choices[]`), checked against the poll: at least one, each an option, no
/// repeats, and exactly one unless the poll allows several. Sorted.
pub fn choices(given: &[String], options: usize, multiple: bool) -> Result<Vec<u8>, Invalid> {
    let bad = |reason: &str| Invalid::new("choices", reason.to_owned());
    let mut picked = Vec::with_capacity(given.len());
    for g in given {
        let i: usize = g.trim().parse().map_err(|_| bad("choices: each is an option's index"))?;
        if i >= options {
            return Err(bad("choices: no such option"));
        }
        picked.push(i as u8);
    }
    picked.sort_unstable();
    let before = picked.len();
    picked.dedup();
    if picked.is_empty() {
        return Err(bad("choices: choose at least one option"));
    }
    if picked.len() != before {
        return Err(bad("choices: an option is chosen once"));
    }
    if !multiple && picked.len() > 1 {
        return Err(bad("choices: this poll takes one choice"));
    }
    Ok(picked)
}

/// A poll as stored (its definition and counts), read beside its post.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PollState {
    pub options: Vec<String>,
    pub multiple: bool,
    pub hide_totals: bool,
    pub expires_at: i64,
    pub voters_count: i64,
    /// Votes per option, in order (as many as options).
    pub votes: Vec<i64>,
}

impl PollState {
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at <= now
    }

    /// The votes of each option as the viewer is shown them: hidden (`None`) while the poll runs
    /// with `hide_totals`, except to its author.
    pub fn shown_votes(&self, now: i64, is_author: bool) -> Vec<Option<i64>> {
        let hidden = self.hide_totals && !self.expired(now) && !is_author;
        self.votes.iter().map(|v| (!hidden).then_some(*v)).collect()
    }

    /// Every vote cast (a voter of a multiple-choice poll casts several).
    pub fn votes_count(&self) -> i64 {
        self.votes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(options: &[&str], expires_in: &str) -> RawPoll {
        RawPoll {
            options: options.iter().map(|o| o.to_string()).collect(),
            expires_in: Some(expires_in.into()),
            ..RawPoll::default()
        }
    }

    #[test]
    fn drafts() {
        let ok = PollDraft::parse(&raw(&[" a ", "b"], "300")).unwrap();
        assert_eq!((ok.options, ok.expires_in_secs, ok.multiple), (vec!["a".into(), "b".into()], 300, false));
        let long = "x".repeat(51);
        for bad in [
            raw(&["a"], "300"),
            raw(&["a", "b", "c", "d", "e"], "300"),
            raw(&["a", ""], "300"),
            raw(&["a", &long], "300"),
            raw(&["a", "a"], "300"),
            raw(&["a", "b"], "299"),
            raw(&["a", "b"], "2629747"),
            raw(&["a", "b"], "soon"),
            raw(&["a", "b"], ""),
        ] {
            let e = PollDraft::parse(&bad).unwrap_err();
            assert_eq!(e.field, "poll", "{bad:?}");
        }
        assert!(PollDraft::parse(&raw(&["a", &"é".repeat(50)], "2629746")).is_ok());
    }

    #[test]
    fn votes() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(choices(&s(&["1"]), 3, false), Ok(vec![1]));
        assert_eq!(choices(&s(&["2", "0"]), 3, true), Ok(vec![0, 2]));
        for (given, multiple) in [
            (&["3"][..], true),
            (&[][..], true),
            (&["0", "0"][..], true),
            (&["0", "1"][..], false),
            (&["x"][..], true),
        ] {
            assert!(choices(&s(given), 3, multiple).is_err(), "{given:?}");
        }
    }

    #[test]
    fn totals_hidden_while_running_except_to_the_author() {
        let poll = PollState {
            options: vec!["a".into(), "b".into()],
            multiple: true,
            hide_totals: true,
            expires_at: 100,
            voters_count: 2,
            votes: vec![2, 1],
        };
        assert_eq!(poll.shown_votes(50, false), vec![None, None]);
        assert_eq!(poll.shown_votes(50, true), vec![Some(2), Some(1)]);
        assert_eq!(poll.shown_votes(100, false), vec![Some(2), Some(1)]);
        assert_eq!(poll.votes_count(), 3);
    }
}
