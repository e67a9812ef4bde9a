//! Pure domain logic: no `worker` types, unit-tested natively with `cargo test`.

pub mod activity;
pub mod cors;
pub mod cursor;
pub mod fanout;
pub mod feed;
pub mod graph;
pub mod hot;
pub mod idle;
pub mod ids;
pub mod likes;
pub mod live;
pub mod mastodon;
pub mod merge;
pub mod moderation;
pub mod oauth;
pub mod outbox;
pub mod password;
pub mod plan;
pub mod policy;
pub mod shard;
pub mod sign;
pub mod time;
pub mod token;
pub mod validate;
pub mod visibility;
pub mod window;
