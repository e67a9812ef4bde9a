//! A stream relay (`objects/relay.rs`, one per timeline index key: a public stripe or a tag):
//! what it buffers between flushes and what a flush sends.
//!
//! Without it every index write told every listener's window object of its post: a public post
//! cost one object call per public-stream listener, and its write read the key's listeners in
//! D1. The relay takes the post's news once (one call per key per post), and at most every
//! `STREAM_RELAY_MS` reads the key's listeners once and sends each listener's window **one**
//! call carrying all the news since the last flush, in the order it came. Best effort, as every
//! stream frame: a lost flush loses frames, and a reader re-reads the timeline.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::ids::PostId;
use crate::live::{Event, TimelineNews};
use crate::tags::IndexKey;

/// The most news a relay holds between flushes; beyond it the oldest goes (and is logged). A
/// stripe takes a sixteenth of the public posts: ~40 a second at the headline, so this is
/// many seconds of news, enough to ride out a few failed flushes.
pub const RELAY_BUFFER_CAP: usize = 1_000;

/// The relay object's name for an index key (one object per key).
pub fn relay_name(key: &IndexKey) -> String {
    format!("relay:{}", key.as_str())
}

/// What a relay is asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum RelayOp {
    /// News of one post under `key`, to pass on at the next flush.
    Tell { key: IndexKey, news: TimelineNews },
    /// The relay's figures (a test hook and the measurements).
    Stats,
}

/// A relay's figures since its object started (in memory: an evicted relay starts again at 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelayStats {
    /// News told to it.
    pub told: u64,
    /// Flushes that read the key's listeners (one D1 statement each).
    pub flushes: u64,
    /// Flushes whose listener read failed (their news kept for the next try).
    pub failed_flushes: u64,
    /// Calls to listeners' window objects (one per listener per flush).
    pub window_calls: u64,
    /// News sent on (each counted once however many listeners got it).
    pub sent: u64,
    /// News dropped: the oldest beyond [`RELAY_BUFFER_CAP`].
    pub dropped: u64,
    /// News left out by [`coalesce`].
    pub coalesced: u64,
}

/// The news one key's relay tells a listener about a post: only that key's part (the public
/// timeline for a stripe, the one tag for a tag), so a reader listening to a stripe and a tag
/// gets each frame once, from the relay of the key that carries it.
pub fn news_for_key(key: &IndexKey, post: PostId, event: Event, media: bool) -> TimelineNews {
    TimelineNews {
        post,
        event,
        public: key.is_public(),
        media,
        tags: key.tag_key().map(|t| vec![t.to_string()]).unwrap_or_default(),
        home: false,
    }
}

/// The news held between flushes, oldest first, at most `cap`.
#[derive(Debug, Clone)]
pub struct RelayBuffer {
    held: VecDeque<TimelineNews>,
    cap: usize,
}

impl RelayBuffer {
    pub fn new(cap: usize) -> Self {
        Self { held: VecDeque::new(), cap: cap.max(1) }
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Holds `news`; how many of the oldest went to keep the cap.
    pub fn push(&mut self, news: TimelineNews) -> usize {
        self.held.push_back(news);
        let mut dropped = 0;
        while self.held.len() > self.cap {
            self.held.pop_front();
            dropped += 1;
        }
        dropped
    }

    /// Everything held, for a flush (the buffer is empty after).
    pub fn take(&mut self) -> Vec<TimelineNews> {
        self.held.drain(..).collect()
    }

    /// Puts a flush's news back in front of what came meanwhile (its listener read failed), the
    /// cap kept by dropping the oldest; how many went.
    pub fn restore(&mut self, news: Vec<TimelineNews>) -> usize {
        for item in news.into_iter().rev() {
            self.held.push_front(item);
        }
        let mut dropped = 0;
        while self.held.len() > self.cap {
            self.held.pop_front();
            dropped += 1;
        }
        dropped
    }
}

/// A flush's news as sent, in order, with what would only be noise taken out: a post that
/// joined and left within the flush is not sent at all (its `update` would find it gone when
/// rendered, leaving a `delete` of a post the reader never saw), and an edit of a post whose
/// `update` or an earlier edit is in the same flush is sent once (each frame renders the
/// status as it is now, so a second would repeat the first).
pub fn coalesce(news: Vec<TimelineNews>) -> Vec<TimelineNews> {
    let mut keep = vec![true; news.len()];
    for (i, item) in news.iter().enumerate() {
        let earlier = |keep: &[bool], event: Event| {
            (0..i).rev().find(|&j| keep[j] && news[j].post == item.post && news[j].event == event)
        };
        match item.event {
            // The post's `update` in this flush, and every edit after it, go with the delete.
            Event::Delete => {
                if let Some(added) = earlier(&keep, Event::Update) {
                    for j in (added..=i).filter(|&j| news[j].post == item.post) {
                        keep[j] = false;
                    }
                }
            }
            Event::StatusUpdate => {
                keep[i] =
                    earlier(&keep, Event::Update).is_none() && earlier(&keep, Event::StatusUpdate).is_none();
            }
            _ => {}
        }
    }
    news.into_iter().zip(keep).filter_map(|(n, k)| k.then_some(n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn news(post: i64, event: Event) -> TimelineNews {
        news_for_key(&IndexKey::public_stripe(1), PostId::from_trusted(post), event, false)
    }

    fn shape(list: &[TimelineNews]) -> Vec<(i64, Event)> {
        list.iter().map(|n| (n.post.get(), n.event)).collect()
    }

    #[test]
    fn each_key_tells_only_its_part() {
        let post = PostId::from_trusted(7);
        let public = news_for_key(
            &IndexKey::public_of(post, crate::ids::UserId::from_trusted(3)),
            post,
            Event::Update,
            true,
        );
        assert!(public.public && public.media && public.tags.is_empty() && !public.home);
        let tag = news_for_key(&IndexKey::tag("Rust"), post, Event::Delete, false);
        assert!(!tag.public);
        assert_eq!(tag.tags, ["rust"]);
        assert_eq!(relay_name(&IndexKey::tag("Rust")), "relay:tag:rust");
    }

    #[test]
    fn the_buffer_keeps_order_and_drops_the_oldest_beyond_its_cap() {
        let mut buffer = RelayBuffer::new(3);
        assert_eq!((0..4).map(|p| buffer.push(news(p, Event::Update))).sum::<usize>(), 1);
        let flush = buffer.take();
        assert_eq!(shape(&flush), [(1, Event::Update), (2, Event::Update), (3, Event::Update)]);
        assert!(buffer.is_empty());
        buffer.push(news(9, Event::Update));
        buffer.push(news(10, Event::Update));
        assert_eq!(
            buffer.restore(flush),
            2,
            "a failed flush goes back in front, the oldest beyond the cap go"
        );
        assert_eq!(shape(&buffer.take()), [(3, Event::Update), (9, Event::Update), (10, Event::Update)]);
    }

    #[test]
    fn a_post_that_came_and_went_in_one_flush_is_not_sent_and_edits_repeat_nothing() {
        let flush = vec![
            news(1, Event::Update),
            news(2, Event::Update),
            news(1, Event::StatusUpdate),
            news(3, Event::StatusUpdate),
            news(3, Event::StatusUpdate),
            news(1, Event::Delete),
            news(4, Event::Delete),
            news(4, Event::Update),
        ];
        assert_eq!(
            shape(&coalesce(flush)),
            [(2, Event::Update), (3, Event::StatusUpdate), (4, Event::Delete), (4, Event::Update)],
            "1 came and went; 3's second edit repeats its first; 4 left and came back: both, in order"
        );
        let edited_then_deleted = vec![news(5, Event::StatusUpdate), news(5, Event::Delete)];
        assert_eq!(
            shape(&coalesce(edited_then_deleted)),
            [(5, Event::StatusUpdate), (5, Event::Delete)],
            "a post the reader saw before this flush still hears its delete"
        );
    }
}
