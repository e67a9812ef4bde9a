//! Black-box HTTP tests against a real `wrangler dev`; see common/mod.rs for the harness.

mod common;

mod accounts;
mod errors;
mod graph;
mod posts;
