//! Followed hashtags delivered into home (issue 42, part 3): a public, listed post carrying a tag
//! the reader follows reaches their home as if its author were followed (the post's tag pages
//! push it into the windows of the tag's followers), and every read checks it again now: the
//! tag still followed and still on the post, the post still public, listed and live, its author
//! not blocked either way, muted or suspended. A post reaching home by two paths shows once, and
//! `/api/v1/timelines/home` pages stay exact.

use std::time::Duration;

use edgefeed::domain::shard::ShardMap;
use edgefeed::domain::tags::IndexKey;
use serde_json::{json, Value};

use crate::common::mastodon_page as page;
use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn follow_tag(user: &User, tag: &str) {
    let followed = user.post(&format!("/api/v1/tags/{tag}/follow"), json!({})).expect(200);
    assert_eq!(followed["following"], true);
}

fn unfollow_tag(user: &User, tag: &str) {
    user.post(&format!("/api/v1/tags/{tag}/unfollow"), json!({})).expect(200);
}

fn home(user: &User) -> Vec<String> {
    page(user, "/api/v1/timelines/home?limit=40").0
}

/// Waits until `status` is in the reader's home (its tag page is a queued message of its own).
fn await_home(reader: &User, status: &Value) {
    let id = id_of(status);
    poll("the tagged post in the tag follower's home", DEADLINE, || home(reader).contains(&id).then_some(()));
}

/// A reader with a window who follows `tag`.
fn tag_follower(prefix: &str, tag: &str) -> User {
    let reader = register(prefix);
    activate(&reader);
    follow_tag(&reader, tag);
    reader
}

#[test]
fn a_strangers_public_tagged_post_reaches_a_tag_followers_home_and_no_other_visibility_does() {
    let tag = fresh_tag("FtReach");
    let author = register("ft_author");
    let reader = tag_follower("ft_reader", &tag);
    let bystander = register("ft_bystander");
    activate(&bystander);
    let unlisted = toot(&author, &format!("quiet #{tag}"), "unlisted");
    let private = toot(&author, &format!("followers only #{tag}"), "private");
    let direct = toot(&author, &format!("@{} direct #{tag}", bystander.handle), "direct");
    // Case-insensitive: followed as written, posted upper-cased.
    let public = toot(&author, &format!("hello #{}", tag.to_uppercase()), "public");
    await_home(&reader, &public);
    wait_drained(&author);
    let shown = home(&reader);
    assert_eq!(shown.iter().filter(|id| **id == id_of(&public)).count(), 1, "once: {shown:?}");
    for hidden in [&unlisted, &private, &direct] {
        assert!(
            !shown.contains(&id_of(hidden)),
            "{} is not delivered by a tag: {shown:?}",
            hidden["visibility"]
        );
    }
    // Someone who does not follow the tag does not get it; the author has it as their own.
    assert!(!home(&bystander).contains(&id_of(&public)));
    assert!(home(&author).contains(&id_of(&public)));
}

#[test]
fn a_post_reaching_home_by_a_followed_author_and_a_followed_tag_shows_once() {
    let tag = fresh_tag("FtBoth");
    let author = register("ft_both_author");
    let reader = tag_follower("ft_both_reader", &tag);
    reader.follow(&author);
    let status = toot(&author, &format!("both ways #{tag}"), "public");
    await_home(&reader, &status);
    wait_drained(&author);
    // The tag page ran too (the author's own window has it; the reader's is written twice,
    // kept once): poll a little past the delivery, the count never exceeds one.
    poll("the post once in home", DEADLINE, || {
        let shown = home(&reader);
        let n = shown.iter().filter(|id| **id == id_of(&status)).count();
        assert!(n <= 1, "twice: {shown:?}");
        window_ids(&reader).contains(&id_of(&status)).then_some(())
    });
}

#[test]
fn a_boost_of_a_post_a_followed_tag_brought_is_hidden_as_a_repeat_but_not_of_an_older_one() {
    let tag = fresh_tag("FtBoost");
    let author = register("ft_bst_author");
    let booster = register("ft_bst_booster");
    // The older post's tag page has run (a witness has it) before the reader follows the tag:
    // a follow made while a post's page is still queued gets that post too.
    let witness = tag_follower("ft_bst_witness", &tag);
    let old = toot(&author, &format!("before the tag follow #{tag}"), "public");
    await_home(&witness, &old);
    let reader = tag_follower("ft_bst_reader", &tag);
    reader.follow(&booster);
    let status = toot(&author, &format!("brought by the tag #{tag}"), "public");
    await_home(&reader, &status);
    let boost =
        |s: &Value| booster.post(&format!("/api/v1/statuses/{}/reblog", id_of(s)), json!({})).expect(200);
    let (repeat, older) = (boost(&status), boost(&old));
    poll("both boosts in the reader's window", DEADLINE, || {
        let window = window_ids(&reader);
        (window.contains(&id_of(&repeat)) && window.contains(&id_of(&older))).then_some(())
    });
    let shown = home(&reader);
    assert!(shown.contains(&id_of(&status)), "{shown:?}");
    assert!(!shown.contains(&id_of(&repeat)), "its earliest entry is the post itself: {shown:?}");
    // A post from before the tag was followed was never delivered: its boost is its entry.
    assert!(shown.contains(&id_of(&older)) && !shown.contains(&id_of(&old)), "{shown:?}");
}

#[test]
fn unfollowing_the_tag_hides_past_tag_only_entries_at_once_and_following_again_shows_them() {
    let tag = fresh_tag("FtUnfollow");
    let author = register("ft_unf_author");
    let reader = tag_follower("ft_unf_reader", &tag);
    let status = toot(&author, &format!("soon unfollowed #{tag}"), "public");
    await_home(&reader, &status);
    unfollow_tag(&reader, &tag.to_lowercase());
    assert!(!home(&reader).contains(&id_of(&status)), "the very next read");
    follow_tag(&reader, &tag);
    assert!(home(&reader).contains(&id_of(&status)), "the entry stayed in the window");
    // A tag followed after a post is published does not bring that post (no backfill, as
    // Mastodon); the next one is delivered.
    let other_tag = fresh_tag("FtLate");
    let before = toot(&author, &format!("before the follow #{other_tag}"), "public");
    wait_drained(&author);
    follow_tag(&reader, &other_tag);
    let after = toot(&author, &format!("after the follow #{other_tag}"), "public");
    await_home(&reader, &after);
    assert!(!home(&reader).contains(&id_of(&before)), "no backfill");
}

#[test]
fn blocking_or_muting_the_author_or_being_blocked_hides_a_tag_delivered_post() {
    let tag = fresh_tag("FtBlock");
    let author = register("ft_blk_author");
    let muter = tag_follower("ft_muter", &tag);
    let blocker = tag_follower("ft_blocker", &tag);
    let blocked = tag_follower("ft_blocked", &tag);
    let status = toot(&author, &format!("seen by three #{tag}"), "public");
    for reader in [&muter, &blocker, &blocked] {
        await_home(reader, &status);
    }
    muter.post(&format!("/api/v1/accounts/{}/mute", author.id), json!({})).expect(200);
    blocker.block(&author);
    author.block(&blocked);
    for reader in [&muter, &blocker, &blocked] {
        assert!(!home(reader).contains(&id_of(&status)), "{}: hidden at once", reader.handle);
    }
    muter.post(&format!("/api/v1/accounts/{}/unmute", author.id), json!({})).expect(200);
    assert!(home(&muter).contains(&id_of(&status)), "unmuted: shown again");
}

#[test]
fn a_tag_edited_away_or_a_post_made_unlisted_or_deleted_leaves_home_at_once() {
    let tag = fresh_tag("FtEdit");
    let author = register("ft_edit_author");
    let reader = tag_follower("ft_edit_reader", &tag);
    let edited = toot(&author, &format!("tag soon gone #{tag}"), "public");
    let quieted = toot(&author, &format!("soon unlisted #{tag}"), "public");
    let deleted = toot(&author, &format!("soon deleted #{tag}"), "public");
    for status in [&edited, &quieted, &deleted] {
        await_home(&reader, status);
    }
    author
        .put(&format!("/api/v1/statuses/{}", id_of(&edited)), Some(json!({ "status": "no tags now" })))
        .expect(200);
    let quiet = json!({ "status": format!("soon unlisted #{tag}"), "visibility": "unlisted" });
    author.put(&format!("/api/v1/statuses/{}", id_of(&quieted)), Some(quiet)).expect(200);
    author.delete(&format!("/api/v1/statuses/{}", id_of(&deleted))).expect(200);
    let shown = home(&reader);
    for gone in [&edited, &quieted, &deleted] {
        assert!(!shown.contains(&id_of(gone)), "{}: {shown:?}", gone["content"]);
    }
    // Edited back: the tag admits it again (the entry is still in the window).
    let back = json!({ "status": format!("tag back #{tag}") });
    author.put(&format!("/api/v1/statuses/{}", id_of(&edited)), Some(back)).expect(200);
    assert!(home(&reader).contains(&id_of(&edited)));
}

/// `n` fresh tags whose keys live on `n` different databases (the harness runs 4).
fn tags_on_distinct_databases(n: usize) -> Vec<String> {
    let map = ShardMap::even(databases());
    let mut found: Vec<(usize, String)> = Vec::new();
    for i in 0..10_000 {
        let tag = format!("{}x{i}", fresh_tag("FtDb"));
        let database = map.database(IndexKey::tag(&tag).shard());
        if !found.iter().any(|(d, _)| *d == database) {
            found.push((database, tag));
        }
        if found.len() == n {
            break;
        }
    }
    assert_eq!(found.len(), n, "tags on {n} databases");
    found.into_iter().map(|(_, tag)| tag).collect()
}

#[test]
fn tags_living_on_every_database_each_deliver_and_a_post_under_several_shows_once() {
    let n = databases().min(4);
    let tags = tags_on_distinct_databases(n);
    let author = register("ft_db_author");
    let reader = register("ft_db_reader");
    activate(&reader);
    for tag in &tags {
        follow_tag(&reader, tag);
    }
    let one_each: Vec<Value> =
        tags.iter().map(|tag| toot(&author, &format!("on its db #{tag}"), "public")).collect();
    let all = tags.iter().map(|t| format!("#{t}")).collect::<Vec<_>>().join(" ");
    let every = toot(&author, &format!("under all {all}"), "public");
    for status in one_each.iter().chain([&every]) {
        await_home(&reader, status);
    }
    let shown = home(&reader);
    assert_eq!(shown.iter().filter(|id| **id == id_of(&every)).count(), 1, "{shown:?}");
}

#[test]
fn home_pages_stay_exact_across_tag_and_follow_paths_and_a_tag_unfollow_mid_scroll() {
    let tag = fresh_tag("FtPages");
    let followed = register("ft_pg_followed");
    let stranger = register("ft_pg_stranger");
    let reader = tag_follower("ft_pg_reader", &tag);
    reader.follow(&followed);
    let mut newest_first: Vec<(String, bool)> = Vec::new();
    for k in 0..12 {
        let (by, text) = match k % 3 {
            0 => (&stranger, format!("tag only {k} #{tag}")),
            1 => (&followed, format!("followed {k}")),
            _ => (&followed, format!("both {k} #{tag}")),
        };
        let status = toot(by, &text, "public");
        newest_first.insert(0, (id_of(&status), k % 3 == 0));
        if k % 3 == 0 {
            await_home(&reader, &status);
        }
    }
    wait_drained(&followed);
    let expected: Vec<String> = newest_first.iter().map(|(id, _)| id.clone()).collect();
    poll("every post in home", DEADLINE, || {
        let top = home(&reader);
        expected.iter().all(|id| top.contains(id)).then_some(())
    });
    let top: Vec<String> = home(&reader).into_iter().filter(|id| expected.contains(id)).collect();
    assert_eq!(top, expected, "one total order, each once");

    // Three at a time by the `Link` header: exactly the posts, in order, once each.
    let mut seen = Vec::new();
    let mut next = Some("/api/v1/timelines/home?limit=3".to_string());
    while let Some(path) = next.take() {
        let (ids, link) = page(&reader, &path);
        seen.extend(ids.clone());
        next = link.filter(|_| !ids.is_empty());
    }
    assert_eq!(seen.iter().filter(|id| expected.contains(id)).cloned().collect::<Vec<_>>(), expected);

    // Unfollowing the tag after the first page: the rest continues from the cursor, without
    // the tag-only posts and without repeating anything.
    let (first, link) = page(&reader, "/api/v1/timelines/home?limit=3");
    unfollow_tag(&reader, &tag.to_lowercase());
    let mut rest = Vec::new();
    let mut next = link;
    while let Some(path) = next.take() {
        let (ids, link) = page(&reader, &path);
        rest.extend(ids.clone());
        next = link.filter(|_| !ids.is_empty());
    }
    let after_first: Vec<String> =
        newest_first[3..].iter().filter(|(_, tag_only)| !tag_only).map(|(id, _)| id.clone()).collect();
    assert_eq!(first, expected[..3].to_vec());
    assert_eq!(rest.iter().filter(|id| expected.contains(id)).cloned().collect::<Vec<_>>(), after_first);
}
