//! Favourite notifications grouped at write (migration 0048): a burst of likes on one post
//! leaves one group row on the author's home (read through the `liked` test hook), while
//! `/api/v1/notifications` still lists each liker once, paging with stable ids, `/api/v2`
//! counts the group exactly, and an unlike or a dismiss takes one liker out (a dismissed one
//! stays out while the like stays on); the last unlike takes the group row too.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;
use crate::shards::home_of;

/// Groups are fixed 12-hour windows (00:00 and 12:00 UTC): a burst straddling an edge would
/// be two groups. A test that starts within this long of an edge waits it out (not a wait
/// for an effect, so no poll).
fn clear_of_a_window_edge() {
    const WINDOW_MS: u64 = 12 * 3_600_000;
    const MARGIN_MS: u64 = 120_000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let to_edge = WINDOW_MS - now % WINDOW_MS;
    if to_edge < MARGIN_MS {
        std::thread::sleep(Duration::from_millis(to_edge + 1_000));
    }
}

/// The post's favourite notification rows and, of them, group rows.
fn rows_of(liker: &User, post: &str) -> (i64, i64) {
    let body = json!({ "user_id": liker.id, "post_id": post });
    let r = admin("POST", "/v1/admin/test/liked", Some(&body)).expect(200);
    (r["favourite_rows"].as_i64().unwrap(), r["favourite_group_rows"].as_i64().unwrap())
}

/// Every favourite of `/api/v1/notifications`, paged `limit` at a time through `max_id`:
/// (notification id, liker id), newest first.
fn v1_favourites(author: &User, limit: usize) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut max_id = String::new();
    loop {
        let page =
            author.get(&format!("/api/v1/notifications?types[]=favourite&limit={limit}{max_id}")).expect(200);
        let items = page.as_array().expect("a list").clone();
        for n in &items {
            assert_eq!(n["type"], "favourite", "{n}");
            out.push((
                n["id"].as_str().unwrap().parse().unwrap(),
                n["account"]["id"].as_str().unwrap().to_string(),
            ));
        }
        match items.last() {
            Some(last) => max_id = format!("&max_id={}", last["id"].as_str().unwrap()),
            None => return out,
        }
    }
}

fn v2_count(author: &User) -> Option<i64> {
    let page = author.get("/api/v2/notifications").expect(200);
    let groups = page["notification_groups"].as_array().expect("groups").clone();
    assert!(groups.len() <= 1, "one post's likes are one group: {page}");
    groups.first().map(|g| g["notifications_count"].as_i64().unwrap())
}

fn likers(listed: &[(u64, String)]) -> BTreeSet<String> {
    listed.iter().map(|(_, liker)| liker.clone()).collect()
}

#[test]
fn a_burst_of_likes_is_one_group_row_listed_once_per_liker_and_counted_exactly() {
    clear_of_a_window_edge();
    let author = register("lg_author");
    let post = id_of(&author.publish("a burst of likes", "public"));
    let fans: Vec<User> = (0..12).map(|_| register("lg_fan")).collect();
    let fans = std::sync::Arc::new(fans);
    let burst = fans.clone();
    let p = post.clone();
    parallel(6, fans.len(), move |i| {
        burst[i].put(&format!("/v1/posts/{p}/like"), None).expect(200);
    });
    assert_eq!(rows_of(&fans[0], &post), (1, 1), "twelve likes, one group row");
    let all: BTreeSet<String> = fans.iter().map(|f| f.id.clone()).collect();
    for limit in [5, 40] {
        let listed = v1_favourites(&author, limit);
        assert_eq!(listed.len(), 12, "each liker once (pages of {limit}): {listed:?}");
        assert_eq!(likers(&listed), all);
        assert!(listed.windows(2).all(|w| w[0].0 > w[1].0), "ids unique, newest first: {listed:?}");
    }
    let ids = v1_favourites(&author, 40);
    assert_eq!(v1_favourites(&author, 3), ids, "stable ids, paged exactly once");
    assert_eq!(v2_count(&author), Some(12));
    // One liker's notification alone, by its id.
    let (id, liker) = ids[4].clone();
    let one = author.get(&format!("/api/v1/notifications/{id}")).expect(200);
    assert_eq!(one["account"]["id"], liker.as_str());
    // An unlike takes its liker out; the group row stays for the others.
    fans[0].delete(&format!("/v1/posts/{post}/like")).expect(200);
    let listed = v1_favourites(&author, 5);
    assert_eq!(listed.len(), 11);
    assert!(!likers(&listed).contains(&fans[0].id));
    assert_eq!(v2_count(&author), Some(11));
    assert_eq!(rows_of(&fans[0], &post), (1, 1));
    // A dismissed one stays out while its like stays on (a repeated like brings nothing back).
    let (dismissed, whose) = listed[0].clone();
    author.delete(&format!("/v1/notifications/{dismissed}")).expect(204);
    let liker = fans.iter().find(|f| f.id == whose).unwrap();
    liker.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    let listed = v1_favourites(&author, 5);
    assert_eq!(listed.len(), 10);
    assert!(!likers(&listed).contains(&whose));
    assert_eq!(v2_count(&author), Some(10));
    // The unread count counts each liker once.
    let unread = author.get("/api/v1/notifications/unread_count").expect(200);
    assert_eq!(unread["count"], 10, "{unread}");
    // Every like off: no group row is left, and nothing is listed.
    for fan in fans.iter() {
        fan.delete(&format!("/v1/posts/{post}/like")).expect(200);
    }
    assert_eq!(rows_of(&fans[0], &post), (0, 0));
    assert!(v1_favourites(&author, 5).is_empty());
    assert_eq!(v2_count(&author), None);
    // A like again is a new notification, in a new group row.
    fans[1].put(&format!("/v1/posts/{post}/like"), None).expect(200);
    assert_eq!(rows_of(&fans[1], &post), (1, 1));
    let again = v1_favourites(&author, 5);
    assert_eq!(again.len(), 1);
    assert!(again[0].0 > ids[0].0, "newer than every removed one");
    let _: Value = author.get("/api/v2/notifications").expect(200);
}

/// Rows written on database `index`, from the `d1-<index>` entry of a `Server-Timing` header.
fn rows_written_on(header: &str, index: usize) -> u64 {
    let entry = header.split(", ").find(|part| part.starts_with(&format!("d1-{index};"))).expect(header);
    let end = entry.find(" rows written").expect(header);
    let digits: String = entry[..end].chars().rev().take_while(char::is_ascii_digit).collect();
    digits.chars().rev().collect::<String>().parse().expect(header)
}

/// What a like writes on the post's database (its author's home): a post's first like of a
/// window makes the group row (a row and its four index entries, as a like's own notification
/// row did before), a later one only raises the author's highest notification id. Neither
/// marks the post for the count repair (`touched_at`, the post's row and an index entry: 2
/// rows a like before): the repair finds liked posts by their likes' own `updated_at`.
#[test]
fn a_like_into_a_group_writes_four_rows_fewer_than_the_like_that_makes_it() {
    clear_of_a_window_edge();
    let author = register("lgr_author");
    let post = id_of(&author.publish("rows", "public"));
    let db = home_of(&author.id);
    let written: Vec<u64> = (0..3)
        .map(|_| {
            // A fan on the post's database would add their liker-side row to its count.
            let fan = loop {
                let fan = register("lgr_fan");
                if databases() == 1 || home_of(&fan.id) != db {
                    break fan;
                }
            };
            let r = fan.put(&format!("/v1/posts/{post}/like"), None);
            assert_eq!(r.status, 200, "{}", r.body);
            rows_written_on(r.server_timing.as_deref().expect("Server-Timing"), db)
        })
        .collect();
    eprintln!(
        "rows written on the post's database by a like: first {}, later {:?}",
        written[0],
        &written[1..]
    );
    assert_eq!(written[1], written[2], "{written:?}");
    assert_eq!(written[0], written[1] + 4, "the group row and its index entries, once: {written:?}");
    assert_eq!(rows_of(&author, &post), (1, 1));
}
