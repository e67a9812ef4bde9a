use serde_json::json;

use crate::common::*;

#[test]
fn follow_is_idempotent_and_counts_once() {
    let a = register("fol_a");
    let b = register("fol_b");
    for _ in 0..3 {
        let r = a.put(&format!("/v1/me/following/{}", b.id), None).expect(200);
        assert_eq!(r, json!({ "following": true, "group": null }));
    }
    let seen = a.get(&format!("/v1/users/{}", b.id)).expect(200);
    assert_eq!(seen["followers_count"], 1);
    assert_eq!(a.profile()["following_count"], 1);
    for _ in 0..2 {
        assert_eq!(
            a.delete(&format!("/v1/me/following/{}", b.id)).expect(200),
            json!({ "following": false })
        );
    }
    assert_eq!(a.profile()["following_count"], 0);
    assert_eq!(a.get(&format!("/v1/users/{}", b.id)).expect(200)["followers_count"], 0);
}

#[test]
fn follow_groups_can_be_set_moved_kept_and_cleared() {
    let a = register("grp_a");
    let b = register("grp_b");
    let path = format!("/v1/me/following/{}", b.id);
    assert_eq!(a.put(&path, Some(json!({ "group": "friends" }))).expect(200)["group"], "friends");
    assert_eq!(a.put(&path, None).expect(200)["group"], "friends", "absent group keeps the group");
    assert_eq!(a.put(&path, Some(json!({ "group": "work" }))).expect(200)["group"], "work");
    assert_eq!(a.put(&path, Some(json!({ "group": null }))).expect(200)["group"], json!(null));
    a.put(&path, Some(json!({ "group": "Bad Name" }))).expect_problem(422, "invalid_field");
    assert_eq!(a.get(&format!("/v1/users/{}", b.id)).expect(200)["followers_count"], 1);
}

#[test]
fn self_and_unknown_follows_are_refused() {
    let a = register("self");
    a.put(&format!("/v1/me/following/{}", a.id), None).expect_problem(422, "invalid_field");
    a.put("/v1/me/following/987654321", None).expect_problem(404, "not_found");
    a.put(&format!("/v1/me/blocks/{}", a.id), None).expect_problem(422, "invalid_field");
    a.put("/v1/me/blocks/987654321", None).expect_problem(404, "not_found");
    assert_eq!(a.profile()["following_count"], 0);
}

#[test]
fn follow_across_a_block_is_403_either_way() {
    let a = register("blk_a");
    let b = register("blk_b");
    a.block(&b);
    a.put(&format!("/v1/me/following/{}", b.id), None).expect_problem(403, "blocked");
    b.put(&format!("/v1/me/following/{}", a.id), None).expect_problem(403, "blocked");
    assert_eq!(a.profile()["following_count"], 0);
    assert_eq!(b.profile()["following_count"], 0);
    // Unblocking lets the follow through again.
    assert_eq!(a.delete(&format!("/v1/me/blocks/{}", b.id)).expect(200), json!({ "blocked": false }));
    a.follow(&b);
}

#[test]
fn block_removes_follows_in_both_directions() {
    let a = register("blr_a");
    let b = register("blr_b");
    a.follow(&b);
    b.follow(&a);
    assert_eq!(a.profile()["followers_count"], 1);
    for _ in 0..2 {
        assert_eq!(b.put(&format!("/v1/me/blocks/{}", a.id), None).expect(200), json!({ "blocked": true }));
    }
    let pa = a.profile();
    assert_eq!((pa["followers_count"].clone(), pa["following_count"].clone()), (json!(0), json!(0)));
    let pb = b.profile();
    assert_eq!((pb["followers_count"].clone(), pb["following_count"].clone()), (json!(0), json!(0)));
    assert!(collect_pages(&a, &format!("/v1/users/{}/following", a.id)).is_empty());
    // Blocks hide the profile both ways.
    a.get(&format!("/v1/users/{}", b.id)).expect_problem(404, "not_found");
    b.get(&format!("/v1/users/{}", a.id)).expect_problem(404, "not_found");
}

#[test]
fn follower_lists_are_newest_first_and_paged() {
    let star = register("star");
    let fans: Vec<User> = (0..7).map(|_| register("fan")).collect();
    for f in &fans {
        f.follow(&star);
    }
    let viewer = register("viewer");
    let items = collect_pages(&viewer, &format!("/v1/users/{}/followers?limit=3", star.id));
    let expected: Vec<String> = fans.iter().rev().map(|f| f.id.clone()).collect();
    assert_eq!(ids(&items), expected);
    assert_eq!(items[0]["handle"], fans[6].handle.as_str());
    let following = collect_pages(&viewer, &format!("/v1/users/{}/following", fans[0].id));
    assert_eq!(ids(&following), vec![star.id.clone()]);
    // A user who blocked the viewer disappears from lists the viewer reads.
    fans[6].block(&viewer);
    let items = collect_pages(&viewer, &format!("/v1/users/{}/followers?limit=3", star.id));
    assert_eq!(items.len(), 6);
}
