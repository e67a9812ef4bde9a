//! The public and tag timelines' costs (#42, `--measure-timelines` -> `costs.timelines`): on a
//! push stack of 4 databases, authors on `DB_2` post tagged public posts, the reader lives on
//! `DB_1`, and the measured tag's rows on `DB_3` (a name is picked whose key hashes there), so
//! the tag's database takes only the tag page's range reads. Each figure is a request's
//! `Server-Timing` plus the fan-out it caused, summed over the 4 databases unless named for one.

use serde_json::{json, Value};

use crate::common::*;
use crate::measure::{admin_resp, drained, start, Samples, DATABASES, MEASURE_CHUNK};
use crate::placement::{shard_map, Pool};
use edgefeed::domain::tags::IndexKey;
use edgefeed_capacity::model::{TimelineCosts, Work};

const READER_DB: usize = 1;
const AUTHOR_DB: usize = 2;
const TAG_DB: usize = 3;
const SAMPLES: usize = 8;
/// Posts in the tag (every one also in the public timeline): more than a page.
const POSTS: usize = 40;
const AUTHORS: usize = 4;
/// Imported posts are this old: the last day's, for the trends.
const POST_AGE_SECS: i64 = 600;

/// A tag name whose key lives on `db`.
fn tag_on(map: &[usize], db: usize, prefix: &str) -> String {
    (0..10_000)
        .map(|i| format!("{prefix}{i}"))
        .find(|name| map[IndexKey::tag(name).shard().index()] == db)
        .expect("a tag name on every database")
}

/// Every database's work summed, request and fan-out.
fn total(s: &Samples) -> Work {
    s.per_db(true).iter().fold(Work::default(), |acc, w| acc.plus(*w))
}

fn minus(a: Work, b: Work) -> Work {
    a.plus(b.scale(-1.0))
}

/// The reader, the tag, and the tagged posts (some liked, for the trending statuses), ranked.
fn setup(pool: &mut Pool, tag: &str) -> (User, Vec<User>) {
    let reader = pool.users_on(&[READER_DB]).remove(0);
    let authors = std::sync::Arc::new(pool.users_on(&[AUTHOR_DB; AUTHORS]));
    let now = now_secs();
    let (a, label) = (authors.clone(), tag.to_string());
    let posts = parallel(8, POSTS, move |i| {
        let at = edgefeed::domain::time::format_rfc3339((now - POST_AGE_SECS - (i as i64) * 11) * 1000);
        id_of(&import_post(&a[i % AUTHORS], &format!("#{label} timeline post {i}"), "public", &at))
    });
    for post in posts.iter().take(5) {
        reader.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    }
    drained();
    admin_resp("POST", "/v1/admin/reconcile").expect(200); // the rankings, at once
    reader.get("/api/v1/timelines/public?limit=20").expect(200); // warm
    (reader, authors.to_vec())
}

/// Page 1 of the public timeline and of the tag's, with the tag database's part.
fn pages(reader: &User, tag: &str) -> ([Samples; 2], Value) {
    let (mut public, mut tagged) = (Samples::default(), Samples::default());
    for _ in 0..SAMPLES {
        public.run(|| reader.get("/api/v1/timelines/public?limit=20"));
        tagged.run(|| reader.get(&format!("/api/v1/timelines/tag/{tag}?limit=20")));
    }
    let full = reader.get(&format!("/api/v1/timelines/tag/{tag}?limit=20")).expect(200);
    assert_eq!(full.as_array().map_or(0, Vec::len), 20, "a full tag page: {full}");
    let raw = json!({ "public_page1": public.raw(), "tag_page1": tagged.raw() });
    ([public, tagged], raw)
}

/// A followers-only post, a public one, and a public one with two tags, by an author without
/// followers on `DB_1`.
fn publishes(pool: &mut Pool, map: &[usize]) -> ([Samples; 3], Value) {
    let author = pool.users_on(&[READER_DB]).remove(0);
    let tags = [tag_on(map, TAG_DB, "costa"), tag_on(map, AUTHOR_DB, "costb")];
    let mut samples: [Samples; 3] = Default::default();
    let [followers, public, tagged] = &mut samples;
    for i in 0..SAMPLES {
        let post = |body: String, visibility: &str| {
            author.post("/v1/posts", json!({ "body": body, "visibility": visibility }))
        };
        followers.run(|| post(format!("measured {i}"), "followers"));
        public.run(|| post(format!("measured {i}"), "public"));
        tagged.run(|| post(format!("measured #{} #{} {i}", tags[0], tags[1]), "public"));
    }
    let raw = json!({ "followers": followers.raw(), "public": public.raw(), "two_tags": tagged.raw() });
    (samples, raw)
}

/// The explore tab's trends reads, and forced reconciliation passes (each refreshes every
/// database's rankings).
fn trends_and_refresh(reader: &User) -> ([Samples; 3], Value) {
    let mut samples: [Samples; 3] = Default::default();
    let [tags, statuses, passes] = &mut samples;
    for _ in 0..SAMPLES {
        tags.run(|| reader.get("/api/v1/trends/tags"));
        statuses.run(|| reader.get("/api/v1/trends/statuses"));
    }
    for _ in 0..SAMPLES / 2 {
        passes.run(|| admin_resp("POST", "/v1/admin/reconcile"));
    }
    let raw = json!({ "trends_tags": tags.raw(), "trends_statuses": statuses.raw(), "pass": passes.raw() });
    (samples, raw)
}

/// Median Worker milliseconds outside storage and object waits (an upper bound on CPU).
fn cpu_ms(s: &Samples) -> f64 {
    let mut cpu: Vec<f64> =
        s.requests.iter().map(|t| (t.total_ms - t.slowest_db_ms - t.do_ms).max(0.0)).collect();
    cpu.sort_by(f64::total_cmp);
    cpu.get(cpu.len() / 2).copied().unwrap_or(0.0)
}

/// Measures the timelines on a fresh push stack of their own (`--measure-timelines`).
pub fn run() -> (TimelineCosts, Value) {
    let server = start("capacity-timelines", "push", MEASURE_CHUNK);
    let (_, map) = shard_map();
    let mut pool = Pool::new(map.clone(), DATABASES);
    let tag = tag_on(&map, TAG_DB, "benchtl");
    let (reader, _authors) = setup(&mut pool, &tag);
    let ([public, tagged], pages_raw) = pages(&reader, &tag);
    let ([followers, plain, two_tags], publish_raw) = publishes(&mut pool, &map);
    let ([trend_tags, trend_statuses, passes], trends_raw) = trends_and_refresh(&reader);
    server.kill();
    let trends = |i: usize| trend_tags.per_db(true)[i].plus(trend_statuses.per_db(true)[i]);
    let trends_other = (1..DATABASES).fold(Work::default(), |acc, i| acc.plus(trends(i)));
    let pass = passes.per_db(false);
    let costs = TimelineCosts {
        measured: true,
        public_page: total(&public),
        tag_page: total(&tagged),
        key_read: tagged.per_db(false)[TAG_DB],
        hydration: tagged.per_db(false)[AUTHOR_DB],
        public_entry: minus(total(&plain), total(&followers)),
        per_tag: minus(total(&two_tags), total(&plain)).scale(0.5),
        trends_control: trends(0),
        trends_other,
        pass_with_refresh: pass.iter().skip(1).fold(Work::default(), |a, w| a.plus(*w)).scale(1.0 / 3.0),
        page_cpu_ms: (cpu_ms(&public) + cpu_ms(&tagged)) / 2.0,
        page_subrequests: Samples::mean(
            public.requests.iter().chain(&tagged.requests).map(|t| t.subrequests),
        ),
    };
    let raw = json!({ "tag": tag, "pages": pages_raw, "publish": publish_raw, "trends": trends_raw });
    (costs, raw)
}
