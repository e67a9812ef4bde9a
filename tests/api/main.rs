//! Black-box HTTP tests against a real `wrangler dev`; see tests/common/mod.rs for the harness
//! (shared with the crash test in tests/crash, the hybrid tests in tests/hybrid and the bench).

#[path = "../common/mod.rs"]
mod common;

mod accounts;
mod activity;
mod app_screens;
mod apps;
mod boosts;
mod browser;
mod budgets;
mod comment_likes;
mod comment_moves;
mod cors;
mod degraded;
mod direct;
mod discovery;
mod engagement;
mod errors;
mod favourites;
mod feed;
mod filters;
mod follow_requests;
mod followed_tags;
mod graph;
mod grouped;
mod idle;
mod ids;
mod in_flight;
mod lists;
mod live;
mod mastodon;
mod media;
mod mentions;
mod mirror;
mod moderation;
mod mutes;
mod notification_policy;
mod notifications;
mod openapi;
mod ordering;
mod post_extras;
mod posts;
mod profiles;
mod push;
mod quotes;
mod recount;
mod replies;
mod scheduled;
mod search;
mod security;
mod shards;
mod streaming;
mod threads;
mod timelines;
mod window_layout;
