//! Black-box HTTP tests against a real `wrangler dev`; see common/mod.rs for the harness.

mod common;

mod accounts;
mod engagement;
mod errors;
mod feed;
mod graph;
mod ids;
mod ordering;
mod posts;
mod security;
