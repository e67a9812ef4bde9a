//! The physical databases (`DB_0` ..; `EDGEFEED_DATABASES`, 4 by default): every one is
//! migrated, the operator's stats list them, and `Server-Timing` says which ones a request
//! touched. Placement is on: the default map splits the 256 logical shards evenly, and a
//! request touches the databases of the rows it reads and no other.

use crate::common::*;

/// The migration files, sorted by name (their order of application).
fn migration_files() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the migrations dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().to_string()))
        .filter(|n| n.ends_with(".sql"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_stats_list_every_database_with_the_same_last_migration_and_no_drift() {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    let files = migration_files();
    let listed = stats["databases"].as_array().expect("a databases list");
    assert_eq!(listed.len(), databases(), "{:#}", stats["databases"]);
    for (index, db) in listed.iter().enumerate() {
        assert_eq!(db["index"], index, "{db}");
        assert_eq!(db["binding"], format!("DB_{index}"), "{db}");
        assert_eq!(db["last_migration"].as_str(), files.last().map(String::as_str), "{db}");
        assert_eq!(db["migrations_applied"], files.len(), "{db}");
        // The even split: contiguous ranges, database i from shard ceil(256 i / P).
        let (first, last) = even_range(index, databases());
        assert_eq!(db["shards"], format!("{first}-{last}"), "{db}");
    }
    assert_eq!(stats["migrations_drift"], false, "{:#}", stats["migrations_drifting"]);
    assert_eq!(stats["migrations_drifting"], serde_json::json!([]));
    let map: Vec<String> = (0..databases())
        .map(|i| {
            let (first, last) = even_range(i, databases());
            format!("{first}-{last}:{i}")
        })
        .collect();
    assert_eq!(stats["shard_map"], map.join(","));
}

/// The logical shards database `index` of `databases` holds under the even split.
fn even_range(index: usize, databases: usize) -> (usize, usize) {
    let first = (index * 256).div_ceil(databases);
    let last = ((index + 1) * 256).div_ceil(databases) - 1;
    (first, last)
}

/// The database a user's (or post's) id routes to under the even split.
pub(crate) fn home_of(id: &str) -> usize {
    let id: u64 = id.parse().expect("a numeric id");
    (((id >> 3) & 255) as usize) * databases() / 256
}

/// The databases a response's Server-Timing names, with their statement counts.
fn touched(header: &str) -> Vec<(usize, u32)> {
    header
        .split(", ")
        .filter_map(|part| {
            let rest = part.strip_prefix("d1-")?;
            let (index, desc) = rest.split_once(";desc=\"")?;
            Some((index.parse().ok()?, desc.split(' ').next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn server_timing_names_the_databases_a_request_touched() {
    let user = register("shardio");
    let r = user.get("/v1/me");
    assert_eq!(r.status, 200, "{}", r.body);
    let header = r.server_timing.clone().unwrap_or_default();
    // The profile and the token check: one statement each, both on the user's home.
    assert_eq!(r.timing("databases touched"), 1, "{header}");
    assert_eq!(touched(&header), vec![(home_of(&user.id), r.timing("statements"))], "{header}");
}

/// Rows read and written on database `index`, from its `d1-<index>` entry.
fn rows_on(header: &str, index: usize) -> Option<(u64, u64)> {
    let entry = header.split(", ").find(|part| part.starts_with(&format!("d1-{index};")))?;
    let number_before = |what: &str| -> Option<u64> {
        let end = entry.find(what)?;
        let digits: String = entry[..end].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
        digits.chars().rev().collect::<String>().parse().ok()
    };
    Some((number_before(" rows read")?, number_before(" rows written")?))
}

#[test]
fn server_timing_counts_rows_and_a_likes_commit_on_its_posts_database() {
    let author = register("rowsauthor");
    let fan = register("rowsfan");
    let r = author.post("/v1/posts", serde_json::json!({ "body": "rows", "visibility": "public" }));
    assert_eq!(r.status, 201, "{}", r.body);
    let header = r.server_timing.clone().unwrap_or_default();
    let (_, written) = rows_on(&header, home_of(&author.id)).expect("the author's database");
    assert!(written >= 2, "the post and its outbox event at least: {header}");
    let post = r.body["id"].as_str().unwrap().to_string();
    // The like's group commit runs in the post's object, which reports its statements back:
    // they count on the post's database in the like's own header.
    let like = fan.put(&format!("/v1/posts/{post}/like"), None);
    assert_eq!(like.status, 200, "{}", like.body);
    let header = like.server_timing.clone().unwrap_or_default();
    let on_post_db = touched(&header).into_iter().find(|(i, _)| *i == home_of(&author.id));
    assert!(on_post_db.is_some_and(|(_, n)| n >= 2), "the commit's statements: {header}");
    let (_, written) = rows_on(&header, home_of(&author.id)).expect("the post's database");
    assert!(written >= 1, "the like row: {header}");
    let total: u32 = touched(&header).iter().map(|(_, n)| n).sum();
    assert_eq!(like.timing("statements"), total, "the total counts the object's too: {header}");
    // The stats give each database's size, and background profiling is off by default.
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    let mut summed = 0;
    for db in stats["databases"].as_array().expect("databases") {
        assert!(db["size_bytes"].as_u64().is_some_and(|b| b > 4096), "{db}");
        summed += db["size_bytes"].as_u64().unwrap_or(0);
    }
    // Against the account's 1 TB, which binds before any one database's 10 GB.
    let storage = &stats["d1_storage"];
    assert_eq!(storage["bytes"].as_u64(), Some(summed), "{storage}");
    assert_eq!(storage["account_limit_bytes"].as_u64(), Some(1_000_000_000_000), "{storage}");
    assert_eq!(stats["profile_io"], serde_json::json!({}));
}

#[test]
fn a_post_reads_on_its_authors_database_and_a_feed_page_on_every_followed_one() {
    if databases() == 1 {
        return; // nothing to tell apart
    }
    let reader = register("shardreader");
    // Authors until two homes differ from the reader's and each other (ids are uniform).
    let mut authors: Vec<User> = Vec::new();
    while authors.len() < 2 {
        let a = register("shardauthor");
        let home = home_of(&a.id);
        if home != home_of(&reader.id) && authors.iter().all(|b| home_of(&b.id) != home) {
            authors.push(a);
        }
    }
    let mut posts = Vec::new();
    for a in &authors {
        reader.follow(a);
        posts.push(id_of(&a.publish("on its author's database", "public")));
    }
    let r = reader.get(&format!("/v1/posts/{}", posts[0]));
    assert_eq!(r.status, 200, "{}", r.body);
    let header = r.server_timing.clone().unwrap_or_default();
    let mut dbs: Vec<usize> = touched(&header).into_iter().map(|(i, _)| i).collect();
    dbs.sort_unstable();
    let mut want = vec![home_of(&reader.id), home_of(&authors[0].id)];
    want.sort_unstable();
    assert_eq!(dbs, want, "the token check on the reader's home, the post on its author's: {header}");
    poll("both posts in the feed", std::time::Duration::from_secs(60), || {
        let r = reader.get("/v1/feed?limit=10");
        let ids = ids(r.body["items"].as_array()?);
        posts.iter().all(|p| ids.contains(p)).then_some(())
    });
    // A steady page (the first read built the window).
    let feed = reader.get("/v1/feed?limit=10");
    let header = feed.server_timing.clone().unwrap_or_default();
    let dbs: Vec<usize> = touched(&header).into_iter().map(|(i, _)| i).collect();
    for a in &authors {
        assert!(dbs.contains(&home_of(&a.id)), "hydrated where each author lives: {header}");
    }
    // (The two-wave budget of a page inside the window is tests/api/budgets.rs's.)
}

#[test]
fn an_invalid_shard_map_fails_every_request_with_a_clear_problem() {
    // Shards 101 .. 255 unmapped: no request may guess where their rows are.
    let vars = vec![("SHARD_MAP".to_string(), "0-100:0".to_string())];
    let broken = start_server(ServerOptions { label: "bad-shard-map".into(), vars, port: None });
    for (method, path) in [("GET", "/v1/users/1"), ("POST", "/v1/users"), ("GET", "/v1/admin/stats")] {
        let response = match ureq::request(method, &format!("{}{path}", broken.base)).call() {
            Err(ureq::Error::Status(_, r)) | Ok(r) => r,
            Err(e) => panic!("{method} {path}: {e}"),
        };
        assert_eq!(response.status(), 500, "{method} {path}");
        assert_eq!(response.header("content-type"), Some("application/problem+json"), "{method} {path}");
        let body: serde_json::Value = response.into_json().expect("a problem document");
        assert_eq!(body["code"], "misconfigured", "{body}");
        let detail = body["detail"].as_str().unwrap_or("");
        assert!(detail.contains("SHARD_MAP") && detail.contains("logical shard 101 is not mapped"), "{body}");
    }
    broken.kill();
}

/// The data plane's internal D1 endpoint (a data script's only route, ARCHITECTURE.md "More
/// than one Worker script") is not reachable through the public front: the front has no such
/// route, with or without the token, so a client can never run SQL, whichever stack this is.
#[test]
fn the_public_front_never_answers_the_internal_d1_endpoint() {
    let call = br#"{"database":0,"mode":"all","statements":[{"sql":"SELECT * FROM users","params":[]}]}"#;
    for token in ["", "local-data-plane-token"] {
        let headers = [("content-type", "application/json"), ("x-edgefeed-data-token", token)];
        let resp = raw("POST", "/internal/d1", &headers, call);
        assert_eq!(resp.status, 404, "{}", resp.body);
        assert!(!resp.body.to_string().contains("\"results\""), "{}", resp.body);
    }
}
