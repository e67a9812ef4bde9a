//! The window's storage layout moves forward without losing an entry: version 5 of the
//! object's schema (`objects/window_sql.rs`) packs version 4's entry rows into blocks. The
//! `window_v4` test hook puts a live window back into version 4's layout, as an object last
//! written by that code would be; its next request migrates it.

use serde_json::{json, Value};

use crate::common::*;

fn window(reader: &User) -> Value {
    admin("POST", "/v1/admin/test/window", Some(&json!({ "reader_id": reader.id }))).expect(200)
}

#[test]
fn a_window_in_the_old_layout_migrates_without_losing_an_entry() {
    let author = register("layout_author");
    let reader = register("layout_reader");
    reader.follow(&author);
    // More posts than three blocks hold at the suite's cap (blocks of 300 / 16 = 18 entries).
    let posts = 60;
    let imported = parallel(6, posts, {
        let author = author.clone();
        move |i| {
            let at = format!("2026-03-01T10:{:02}:{:02}.000Z", i / 60, i % 60);
            id_of(&import_post(&author, &format!("layout {i}"), "public", &at))
        }
    });
    assert_eq!(imported.len(), posts);
    wait_drained(&author);
    reader.get("/v1/feed?limit=10").expect(200); // builds the window from D1
                                                 // And two deliveries by the fan-out, one of them removed again (a tombstone).
    let kept = id_of(&author.publish("delivered", "public"));
    let removed = id_of(&author.publish("removed", "public"));
    wait_drained(&author);
    author.delete(&format!("/v1/posts/{removed}")).expect(204);
    wait_drained(&author);
    let before = window(&reader);
    let held = before["post_ids"].as_array().unwrap().len();
    assert_eq!(held, posts + 1, "{before}");
    assert_eq!(before["post_ids"][0], json!(kept));

    let hook = json!({ "reader_id": reader.id });
    let old = admin("POST", "/v1/admin/test/window_v4", Some(&hook)).expect(200);
    assert_eq!(old["entries"], json!(held), "every entry written in the old layout");
    // Not migrated until the object's next request: the dump does not make the schema.
    assert_eq!(window(&reader)["post_ids"], json!([]));

    // A read migrates it: every entry is served, from the window (same entries, same floor).
    let pages = collect_pages(&reader, "/v1/feed?limit=7");
    let mut expected: Vec<String> =
        before["post_ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(ids(&pages), expected);
    let after = window(&reader);
    assert_eq!((&after["initialized"], &after["floor"]), (&before["initialized"], &before["floor"]));
    assert_eq!(after["post_ids"], before["post_ids"]);

    // The tombstone came through too, and the migrated window takes new deliveries.
    let newest = id_of(&author.publish("after the move", "public"));
    wait_drained(&author);
    expected.insert(0, newest);
    assert_eq!(ids(&collect_pages(&reader, "/v1/feed?limit=20")), expected);
    assert!(!window(&reader)["post_ids"].as_array().unwrap().contains(&json!(removed)));
    // Moved back and forward once more: the same entries again.
    assert_eq!(
        admin("POST", "/v1/admin/test/window_v4", Some(&hook)).expect(200)["entries"],
        json!(held + 1)
    );
    assert_eq!(ids(&collect_pages(&reader, "/v1/feed?limit=50")), expected);
}
