//! Services: the operations of the product, on top of the stores and the Durable Object
//! clients. They take a [`crate::context::Ctx`] and never import the HTTP layer.

pub mod backlog;
pub mod boosts;
pub mod comments;
pub mod deadline;
pub mod fanout;
pub mod faults;
pub mod feed;
pub mod feed_io;
pub mod follows;
pub mod graph;
pub mod hot;
pub mod liked;
pub mod likes;
pub mod lists;
pub mod live;
pub mod mastodon_entities;
pub mod media;
pub mod mentions;
pub mod moderation;
pub mod mutes;
pub mod notification_groups;
pub mod notifications;
pub mod originals;
pub mod policy;
pub mod posts;
pub mod queue;
pub mod reconcile;
pub mod replicas;
pub mod saved;
pub mod shard_move;
pub mod stats;
pub mod streaming;
pub mod tally;
pub mod users;
