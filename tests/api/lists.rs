//! Mastodon lists (`/api/v1/lists`, `/api/v1/timelines/list/{id}`,
//! `/api/v1/accounts/{id}/lists`): driven by Mastodon.py (tests/mastodon_lists.py), and checked
//! directly: membership needs a follow and ends with it, titles, caps, someone else's list is
//! 404 everywhere, and which lists hold an account.

use serde_json::{json, Value};

use crate::common::*;
use crate::mastodon::register_with_password;

fn create(user: &User, title: &str) -> String {
    id_of(&user.post("/api/v1/lists", json!({ "title": title })).expect(200))
}

fn add(user: &User, list: &str, accounts: &[&User]) -> Resp {
    let ids: Vec<&str> = accounts.iter().map(|a| a.id.as_str()).collect();
    user.post(&format!("/api/v1/lists/{list}/accounts"), json!({ "account_ids": ids }))
}

fn members(user: &User, list: &str) -> Vec<String> {
    ids(user.get(&format!("/api/v1/lists/{list}/accounts")).expect(200).as_array().expect("accounts"))
}

fn lists_holding(user: &User, account: &User) -> Vec<String> {
    ids(user.get(&format!("/api/v1/accounts/{}/lists", account.id)).expect(200).as_array().expect("lists"))
}

fn timeline(user: &User, list: &str) -> Vec<String> {
    ids(user
        .get(&format!("/api/v1/timelines/list/{list}?limit=40"))
        .expect(200)
        .as_array()
        .expect("statuses"))
}

#[track_caller]
fn expect_error(resp: Resp, status: u16, text: &str) {
    let body = resp.expect(status);
    let error = body["error"].as_str().unwrap_or_default();
    assert!(error.contains(text), "{text} in {body}");
}

#[test]
fn mastodon_py_makes_fills_reads_scrolls_and_deletes_lists() {
    let second = register_with_password("mlst_second");
    let unlisted = register_with_password("mlst_other");
    let stdout = crate::mastodon::run_client("mastodon_lists", "mlst", &[&second.handle, &unlisted.handle]);
    assert!(stdout.contains("mastodon.py lists flow ok: 23 statuses"), "{stdout}");
}

#[test]
fn list_membership_needs_a_follow_and_unfollow_or_block_removes_it() {
    let reader = register("lsm_reader");
    let (a, b) = (register("lsm_a"), register("lsm_b"));
    reader.follow(&a);
    let list = create(&reader, "mine");
    // All or nothing: one account not followed refuses the whole add.
    expect_error(add(&reader, &list, &[&a, &b]), 404, "Record not found");
    assert!(members(&reader, &list).is_empty());
    assert_eq!(add(&reader, &list, &[&a]).expect(200), json!({}));
    expect_error(add(&reader, &list, &[&a]), 422, "already been taken");
    assert_eq!(members(&reader, &list), std::slice::from_ref(&a.id));
    let post = id_of(&a.publish("for the list", "followers"));
    reader.publish("the reader's own, not in the list", "public");
    b.publish("not followed", "public");
    assert_eq!(timeline(&reader, &list), std::slice::from_ref(&post));
    reader.unfollow(&a);
    assert!(members(&reader, &list).is_empty() && lists_holding(&reader, &a).is_empty());
    // The list delete rides the unfollow's batch without stopping its event (the author's side).
    poll("the unfollow to reach the author's side", std::time::Duration::from_secs(60), || {
        (a.profile()["followers_count"] == 0).then_some(())
    });
    assert!(timeline(&reader, &list).is_empty(), "an unfollowed author's posts leave at once");
    reader.follow(&a);
    assert!(members(&reader, &list).is_empty(), "a new follow does not bring the membership back");
    reader.follow(&b);
    add(&reader, &list, &[&a, &b]).expect(200);
    assert_eq!(members(&reader, &list).len(), 2);
    reader.block(&b);
    assert_eq!(members(&reader, &list), std::slice::from_ref(&a.id), "a block takes the account out");
    assert_eq!(timeline(&reader, &list), [post]);
    reader.delete(&format!("/api/v1/lists/{list}/accounts?account_ids[]={}", a.id)).expect(200);
    assert!(members(&reader, &list).is_empty());
}

#[test]
fn list_titles_are_validated_and_foreign_lists_are_404() {
    let owner = register("lst_owner");
    let other = register("lst_other");
    expect_error(owner.post("/api/v1/lists", json!({})), 422, "Title can't be blank");
    expect_error(owner.post("/api/v1/lists", json!({ "title": "  " })), 422, "Title can't be blank");
    expect_error(owner.post("/api/v1/lists", json!({ "title": "x".repeat(256) })), 422, "at most 255");
    expect_error(
        owner.post("/api/v1/lists", json!({ "title": "t", "replies_policy": "all" })),
        422,
        "replies_policy",
    );
    let made = owner
        .post("/api/v1/lists", json!({ "title": " ours ", "replies_policy": "followed", "exclusive": true }))
        .expect(200);
    assert_eq!(
        (&made["title"], &made["replies_policy"], &made["exclusive"]),
        (&json!("ours"), &json!("followed"), &json!(true))
    );
    let list = id_of(&made);
    let renamed =
        owner.put(&format!("/api/v1/lists/{list}"), Some(json!({ "title": "renamed" }))).expect(200);
    assert_eq!((&renamed["title"], &renamed["replies_policy"]), (&json!("renamed"), &json!("followed")));
    for path in [
        format!("/api/v1/lists/{list}"),
        format!("/api/v1/lists/{list}/accounts"),
        format!("/api/v1/timelines/list/{list}"),
    ] {
        expect_error(other.get(&path), 404, "Record not found");
    }
    expect_error(
        other.put(&format!("/api/v1/lists/{list}"), Some(json!({ "title": "mine" }))),
        404,
        "Record not found",
    );
    expect_error(other.delete(&format!("/api/v1/lists/{list}")), 404, "Record not found");
    expect_error(add(&other, &list, &[&owner]), 404, "Record not found");
    assert_eq!(owner.get(&format!("/api/v1/lists/{list}")).expect(200)["title"], "renamed");
    assert_eq!(other.get("/api/v1/lists").expect(200), json!([]));
    owner.get("/api/v1/lists/nope").expect(404);
}

#[test]
fn lists_are_capped_at_100_per_user_and_1000_accounts_per_list() {
    let owner = register("lsc_owner");
    let list = create(&owner, "first");
    let too_many: Vec<String> = (0..1001).map(|n| (n + 1).to_string()).collect();
    let full = owner.post(&format!("/api/v1/lists/{list}/accounts"), json!({ "account_ids": too_many }));
    expect_error(full, 409, "at most 1000");
    for n in 1..100 {
        create(&owner, &format!("list {n}"));
    }
    assert_eq!(owner.get("/api/v1/lists").expect(200).as_array().map(Vec::len), Some(100));
    expect_error(owner.post("/api/v1/lists", json!({ "title": "one more" })), 409, "at most 100");
    owner.delete(&format!("/api/v1/lists/{list}")).expect(200);
    expect_error(owner.get(&format!("/api/v1/lists/{list}")), 404, "Record not found");
    create(&owner, "room again");
}

#[test]
fn accounts_lists_names_the_lists_holding_an_account() {
    let reader = register("lsa_reader");
    let (a, b) = (register("lsa_a"), register("lsa_b"));
    reader.follow(&a);
    reader.follow(&b);
    let (first, second) = (create(&reader, "first"), create(&reader, "second"));
    add(&reader, &first, &[&a, &b]).expect(200);
    add(&reader, &second, &[&a]).expect(200);
    assert_eq!(lists_holding(&reader, &a), [first.clone(), second.clone()]);
    assert_eq!(lists_holding(&reader, &b), std::slice::from_ref(&first));
    assert!(lists_holding(&a, &b).is_empty(), "only the viewer's own lists");
    reader.get("/api/v1/accounts/1234567/lists").expect(404);
    reader.delete(&format!("/api/v1/lists/{first}")).expect(200);
    assert_eq!(lists_holding(&reader, &a), [second]);
    assert!(lists_holding(&reader, &b).is_empty());
    let list: Value = reader.get("/api/v1/lists").expect(200);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
}
