//! Threads: a reply to a reply keeps its parent (`in_reply_to_id`), `context` lists ancestors
//! and descendants in thread order, and a reply (a post of its own) outlives its thread's root.

use serde_json::{json, Value};

use crate::common::*;

fn reply(user: &User, to: &str, text: &str) -> String {
    let s = user.post("/api/v1/statuses", json!({ "status": text, "in_reply_to_id": to })).expect(200);
    assert_eq!(s["in_reply_to_id"], to, "{s}");
    id_of(&s)
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(id_of).collect()
}

#[test]
fn replies_to_replies_keep_their_parents_and_context_is_in_thread_order() {
    let author = register("th_author");
    let ann = register("th_ann");
    let bob = register("th_bob");
    let post = id_of(&author.post("/api/v1/statuses", json!({ "status": "root" })).expect(200));
    let a = reply(&ann, &post, "a: to the post");
    let b = reply(&bob, &post, "b: to the post");
    let a1 = reply(&bob, &a, "a1: to a");
    let a1x = reply(&author, &a1, "a1x: to a1");
    let b1 = reply(&ann, &b, "b1: to b");
    let a2 = reply(&ann, &a, "a2: to a, later");
    let a1_status = bob.get(&format!("/api/v1/statuses/{a1}")).expect(200);
    assert_eq!(a1_status["in_reply_to_account_id"], ann.id.as_str(), "the parent's author");
    // The post: every reply, depth first, each level oldest first.
    let ctx = author.get(&format!("/api/v1/statuses/{post}/context")).expect(200);
    assert_eq!(ids(&ctx["ancestors"]), Vec::<String>::new());
    assert_eq!(
        ids(&ctx["descendants"]),
        vec![a.clone(), a1.clone(), a1x.clone(), a2.clone(), b.clone(), b1.clone()]
    );
    // A reply in the middle: the post and the chain above it; its own subtree below.
    let ctx = ann.get(&format!("/api/v1/statuses/{a1}/context")).expect(200);
    assert_eq!(ids(&ctx["ancestors"]), vec![post.clone(), a.clone()]);
    assert_eq!(ids(&ctx["descendants"]), vec![a1x.clone()]);
    let ctx = ann.get(&format!("/api/v1/statuses/{a}/context")).expect(200);
    assert_eq!(ids(&ctx["descendants"]), vec![a1.clone(), a1x.clone(), a2.clone()]);
    // A deleted middle reply leaves its replies in place, under the post.
    bob.delete(&format!("/api/v1/statuses/{a1}")).expect(200);
    let ctx = author.get(&format!("/api/v1/statuses/{post}/context")).expect(200);
    assert_eq!(ids(&ctx["descendants"]), vec![a.clone(), a2.clone(), b.clone(), b1.clone(), a1x.clone()]);
    // A reply's author deletes it and gets its text back (once).
    let gone = ann.delete(&format!("/api/v1/statuses/{b1}")).expect(200);
    assert_eq!((gone["id"].as_str(), gone["text"].as_str()), (Some(b1.as_str()), Some("b1: to b")));
    ann.delete(&format!("/api/v1/statuses/{b1}")).expect(404);
    // The post gone, its replies are posts of their own and stay (as Mastodon's do), each
    // still naming what it answered; their authors delete them as any post.
    author.delete(&format!("/api/v1/statuses/{post}")).expect(200);
    assert_eq!(ann.get(&format!("/api/v1/statuses/{a2}")).expect(200)["in_reply_to_id"], a.as_str());
    bob.delete(&format!("/api/v1/statuses/{b}")).expect(200);
    ann.delete(&format!("/api/v1/statuses/{a2}")).expect(200);
}
