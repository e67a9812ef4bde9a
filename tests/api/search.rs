//! Search v2 (issue 42, part 6): `GET /api/v2/search` for accounts (handle and display-name
//! word prefixes), hashtags (by prefix) and the statuses the viewer may see now (their own,
//! favourited, bookmarked, mentioning them, and public posts of `indexable` accounts), and
//! `GET /api/v1/accounts/search` sharing its accounts part. The index rows live on the
//! database of each term's hash (or the viewer's home): the words here are chosen to land on
//! different databases of the suite's four.

use serde_json::{json, Value};

use crate::common::*;
use crate::profiles::update_form;
use edgefeed::domain::search::Term;
use edgefeed::domain::shard::ShardMap;

/// A token no other test (or run) uses, letters only (a word on its own).
fn nonce() -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let mut n = nanos ^ (u128::from(std::process::id()) << 64);
    let mut word = String::new();
    for _ in 0..10 {
        word.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    word
}

/// Words starting with `stem` whose public status terms live on `count` different databases.
fn spread_words(stem: &str, count: usize) -> Vec<String> {
    let map = ShardMap::even(DEFAULT_DATABASES);
    let (mut words, mut used) = (Vec::new(), Vec::new());
    for suffix in 'a'..='z' {
        let word = format!("{stem}{suffix}");
        let db = map.database(Term::Status(word.clone()).shard());
        if !used.contains(&db) {
            used.push(db);
            words.push(word);
        }
        if words.len() == count {
            return words;
        }
    }
    panic!("no {count} databases for {stem}");
}

fn toot(user: &User, text: &str, visibility: &str) -> String {
    id_of(&user.post("/api/v1/statuses", json!({ "status": text, "visibility": visibility })).expect(200))
}

fn search(user: &User, query: &str) -> Value {
    user.get(&format!("/api/v2/search?{query}")).expect(200)
}

fn ids_in(v: &Value, kind: &str) -> Vec<String> {
    v[kind].as_array().unwrap_or_else(|| panic!("{kind} in {v}")).iter().map(id_of).collect()
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

fn set_name(user: &User, name: &str) {
    update_form(user, &format!("display_name={}", name.replace(' ', "+"))).expect(200);
}

#[test]
fn accounts_are_found_by_handle_and_display_name_prefixes_and_follow_renames() {
    let word = nonce();
    let viewer = register("srch_acct");
    let named = register("srch_named");
    let friend = register("srch_friend");
    let blocked = register("srch_blocked");
    let blocker = register("srch_blocker");
    set_name(&named, &format!("Zed {word}alpha"));
    set_name(&friend, &format!("{word}beta Quill"));
    set_name(&blocked, &format!("{word}gamma"));
    set_name(&blocker, &format!("{word}delta"));
    viewer.follow(&friend);
    viewer.block(&blocked);
    blocker.block(&viewer);
    let accounts = |q: &str| ids_in(&search(&viewer, &format!("type=accounts&q={q}")), "accounts");
    // A display-name word's prefix, any case; blocked either way never shows.
    assert_eq!(sorted(accounts(&word.to_uppercase())), sorted(vec![named.id.clone(), friend.id.clone()]));
    assert_eq!(accounts(&format!("{word}al")), vec![named.id.clone()]);
    // Every word must match (each the start of some word of the account).
    assert_eq!(accounts(&format!("{word}+qui")), vec![friend.id.clone()]);
    assert_eq!(accounts(&format!("{word}+zzz")), Vec::<String>::new());
    // `following` keeps those the viewer follows.
    assert_eq!(accounts(&format!("{word}&following=true")), vec![friend.id.clone()]);
    // A rename moves the account: the old words find it no more, the new ones do.
    let renamed = nonce();
    set_name(&named, &format!("{renamed} Zed"));
    assert_eq!(accounts(&format!("{word}al")), Vec::<String>::new());
    assert_eq!(accounts(&renamed), vec![named.id.clone()]);
    // The handle: by prefix, and an exact handle (with @ and our domain) first.
    let exact = search(&viewer, &format!("type=accounts&q=@{}", named.handle.to_uppercase()));
    assert_eq!(exact["accounts"][0]["id"], named.id.as_str(), "{exact}");
    assert!(accounts("srch_name").contains(&named.id));
    // `/api/v1/accounts/search` answers the same accounts part.
    let v1 = viewer.get(&format!("/api/v1/accounts/search?q={renamed}")).expect(200);
    assert_eq!(v1.as_array().unwrap().iter().map(id_of).collect::<Vec<_>>(), vec![named.id.clone()]);
    // A suspended account is never found.
    admin(
        "POST",
        &format!("/v1/admin/users/{}/suspend", friend.id),
        Some(&json!({ "reason": "t", "operator": "t" })),
    )
    .expect(200);
    assert_eq!(accounts(&format!("{word}beta")), Vec::<String>::new());
}

#[test]
fn hashtags_are_found_by_prefix_with_their_history_and_follow() {
    let stem = nonce();
    let author = register("srch_tagger");
    let viewer = register("srch_tagview");
    toot(&author, &format!("first #{stem}Rust and #{stem}Wasm"), "public");
    toot(&author, &format!("again #{stem}rust"), "public");
    let tags = |q: &str| search(&viewer, &format!("type=hashtags&q={q}"))["hashtags"].clone();
    let both = tags(&format!("%23{stem}"));
    let names: Vec<&str> = both.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec![format!("{stem}Rust"), format!("{stem}Wasm")], "{both}");
    let rust = &both[0];
    assert_eq!(rust["history"][0]["uses"], "2", "{rust}");
    assert_eq!(rust["history"][0]["accounts"], "1", "{rust}");
    assert_eq!(rust["following"], false);
    // Without the `#`, by a longer prefix, and with the viewer's follow.
    viewer.post(&format!("/api/v1/tags/{stem}Rust/follow"), json!({})).expect(200);
    let one = tags(&format!("{}ru", stem.to_uppercase()));
    assert_eq!(one.as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one[0]["following"], true);
    assert_eq!(tags(&format!("{stem}x")), json!([]));
    // A private post's tag is nobody's to find.
    toot(&author, &format!("secret #{stem}Hidden"), "private");
    assert_eq!(tags(&format!("{stem}h")), json!([]));
}

/// A viewer and the statuses around them, each holding `words`.
struct World {
    viewer: User,
    indexable: User,
    expected: Vec<String>,
    hidden: Vec<(String, &'static str)>,
}

fn statuses_world(words: &str) -> World {
    let viewer = register("srch_viewer");
    let stranger = register("srch_stranger");
    let indexable = register("srch_indexable");
    let blocked = register("srch_blockedau");
    for u in [&indexable, &blocked] {
        update_form(u, "indexable=true").expect(200);
    }
    let own = toot(&viewer, &format!("my own {words}"), "private");
    let favourited = toot(&stranger, &format!("liked {words}"), "public");
    viewer.post(&format!("/api/v1/statuses/{favourited}/favourite"), json!({})).expect(200);
    let bookmarked = toot(&stranger, &format!("saved {words}"), "public");
    viewer.post(&format!("/api/v1/statuses/{bookmarked}/bookmark"), json!({})).expect(200);
    let mention = toot(&stranger, &format!("@{} look {words}", viewer.handle), "public");
    let public = toot(&indexable, &format!("open {words}"), "public");
    let stranger_public = toot(&stranger, &format!("not indexable {words}"), "public");
    let followers_only = toot(&indexable, &format!("followers {words}"), "private");
    let deleted = toot(&indexable, &format!("deleted {words}"), "public");
    indexable.delete(&format!("/api/v1/statuses/{deleted}")).expect(200);
    let from_blocked = toot(&blocked, &format!("blocked {words}"), "public");
    viewer.block(&blocked);
    let expected = vec![own, favourited, bookmarked, mention, public];
    let hidden = vec![
        (stranger_public, "a non-indexable stranger's public post"),
        (followers_only, "a followers-only post of someone not followed"),
        (deleted, "a deleted post"),
        (from_blocked, "a blocked author's post"),
    ];
    World { viewer, indexable, expected, hidden }
}

#[test]
fn statuses_are_those_the_viewer_may_see_in_their_scope_matching_every_word() {
    let words = spread_words(&nonce(), 2);
    let w = statuses_world(&words.join(" "));
    let found = |q: &str| ids_in(&search(&w.viewer, &format!("type=statuses&q={q}")), "statuses");
    // A favourite joins the scope after its answer: awaited, the rest is there at once.
    let expected = sorted(w.expected.clone());
    let all = poll("the favourited post found", std::time::Duration::from_secs(30), || {
        let all = found(&words[0]);
        (sorted(all.clone()) == expected).then_some(all)
    });
    for (id, what) in &w.hidden {
        assert!(!all.contains(id), "{what} is never found");
    }
    // Newest first; both words (each on its own database) intersect to the same; a word none
    // of them has finds nothing; a prefix is no word.
    let mut newest_first = all.clone();
    newest_first.sort_by_key(|id| std::cmp::Reverse(id.parse::<i64>().unwrap()));
    assert_eq!(all, newest_first);
    assert_eq!(found(&format!("{}+{}", words[1], words[0].to_uppercase())), all);
    assert_eq!(found(&format!("{}+nowhere{}", words[0], nonce())), Vec::<String>::new());
    assert_eq!(found(&words[0][..words[0].len() - 1]), Vec::<String>::new());
    // `account_id`: one author's.
    assert_eq!(found(&format!("{}&account_id={}", words[0], w.indexable.id)), vec![w.expected[4].clone()]);
    // Paging by offset and limit, and by max_id.
    let page = |q: &str| found(&format!("{}&{q}", words[0]));
    assert_eq!(page("limit=2"), all[..2].to_vec());
    assert_eq!(page("limit=2&offset=2"), all[2..4].to_vec());
    assert_eq!(page(&format!("max_id={}", all[1])), all[2..].to_vec());
    assert_eq!(page(&format!("min_id={}&limit=2", all[3])), all[1..3].to_vec());
    // The flag off hides the indexable author's post at once.
    update_form(&w.indexable, "indexable=false").expect(200);
    assert!(!found(&words[0]).contains(&w.expected[4]));
}

#[test]
fn resolve_answers_a_status_or_account_url_of_this_instance() {
    let author = register("srch_resolved");
    let viewer = register("srch_resolver");
    let post = author
        .post("/api/v1/statuses", json!({ "status": "resolve me", "visibility": "public" }))
        .expect(200);
    let encode =
        |url: &str| url.replace(':', "%3A").replace('/', "%2F").replace('?', "%3F").replace('=', "%3D");
    let uri = post["uri"].as_str().unwrap();
    let found = search(&viewer, &format!("q={}&resolve=true", encode(uri)));
    assert_eq!(ids_in(&found, "statuses"), vec![id_of(&post)], "{found}");
    assert_eq!(found["accounts"], json!([]));
    let url = post["account"]["url"].as_str().unwrap();
    let account = search(&viewer, &format!("q={}&resolve=true", encode(url)));
    assert_eq!(ids_in(&account, "accounts"), vec![author.id.clone()], "{account}");
    let origin = uri.split("/api/v1/").next().unwrap();
    let mastodon_style = format!("{origin}/@{}/{}", author.handle, id_of(&post));
    assert_eq!(
        ids_in(&search(&viewer, &format!("q={}&resolve=true", encode(&mastodon_style))), "statuses"),
        vec![id_of(&post)]
    );
    // Without `resolve`, a URL finds nothing; nor does another host's.
    assert_eq!(
        search(&viewer, &format!("q={}", encode(uri))),
        json!({ "accounts": [], "statuses": [], "hashtags": [] })
    );
    let elsewhere = encode(&format!("https://elsewhere.example/@{}", author.handle));
    assert_eq!(
        ids_in(&search(&viewer, &format!("q={elsewhere}&resolve=true")), "accounts"),
        Vec::<String>::new()
    );
}

#[test]
fn bad_input_is_refused_and_changes_nothing_and_types_filter() {
    let word = nonce();
    let user = register("srch_bad");
    set_name(&user, &word);
    let post = toot(&user, &format!("#{word} {word}"), "public");
    let before = search(&user, &format!("q={word}"));
    assert_eq!(ids_in(&before, "accounts"), vec![user.id.clone()]);
    assert_eq!(ids_in(&before, "statuses"), vec![post.clone()]);
    assert_eq!(before["hashtags"][0]["name"], word.as_str());
    for query in [
        "",
        "q=",
        "q=%20",
        "q=a&type=toots",
        "q=a&limit=many",
        "q=a&offset=x",
        "q=a&following=maybe",
        "q=a&resolve=perhaps",
        "q=a&account_id=me",
        "q=a&max_id=x",
    ] {
        user.get(&format!("/api/v2/search?{query}")).expect(422);
    }
    assert_eq!(call("GET", "/api/v2/search?q=a", None, None).status, 401);
    assert_eq!(search(&user, &format!("q={word}")), before, "refused requests changed nothing");
    // `type` keeps one kind; `limit` out of range is clamped (as Mastodon does).
    let only = search(&user, &format!("q={word}&type=hashtags"));
    assert_eq!((only["accounts"].clone(), only["statuses"].clone()), (json!([]), json!([])));
    assert_eq!(only["hashtags"].as_array().unwrap().len(), 1);
    assert_eq!(ids_in(&search(&user, &format!("q={word}&limit=0")), "statuses"), vec![post.clone()]);
    assert_eq!(ids_in(&search(&user, &format!("q={word}&limit=1000")), "statuses"), vec![post]);
}

#[test]
fn a_search_reads_only_the_databases_of_its_terms() {
    let words = spread_words(&nonce(), 2);
    let w = statuses_world(&words.join(" "));
    let auth = format!("Bearer {}", w.viewer.token);
    let timed = |q: &str| raw("GET", &format!("/api/v2/search?{q}"), &[("authorization", &auth)], b"");
    // Statuses of two words: the viewer's home (their personal terms, one statement), each
    // word's database (one statement each), then the hits' posts where they live with the
    // viewer's bookmarks and mutes, and the Statuses' accounts and marks.
    let r = timed(&format!("type=statuses&q={}+{}", words[0], words[1]));
    assert_eq!(r.status, 200);
    let statements = r.timing("statements in");
    eprintln!("statuses search: {:?}", r.server_timing);
    assert!(statements <= 16, "{:?}", r.server_timing);
    assert!(r.timing("sequential round trips") <= 5, "{:?}", r.server_timing);
    // Writes: an indexable author's public post writes its words beside the timeline index,
    // one batch per database, side by side: the publish waits no more round trips than any.
    let author_auth = format!("Bearer {}", w.indexable.token);
    let body =
        json!({ "body": format!("budget {} {} #{}", words[0], words[1], words[0]), "visibility": "public" });
    let headers = [("authorization", author_auth.as_str()), ("content-type", "application/json")];
    let published = raw("POST", "/v1/posts", &headers, body.to_string().as_bytes());
    assert_eq!(published.status, 201, "{}", published.body);
    eprintln!("indexable publish: {:?}", published.server_timing);
    // As `budgets.rs` pins for any publish: the token check, the batch, the hooks' check.
    assert_eq!(published.timing("sequential round trips"), 3, "{:?}", published.server_timing);
    // Accounts: one bucket read (and the exact handle's directory entry), then the users.
    let a = timed(&format!("type=accounts&q={}", &words[0][..4]));
    eprintln!("accounts search: {:?}", a.server_timing);
    assert!(a.timing("statements in") <= 10, "{:?}", a.server_timing);
    assert!(a.timing("sequential round trips") <= 3, "{:?}", a.server_timing);
}
