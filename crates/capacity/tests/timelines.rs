//! The public and tag timelines' arithmetic in the capacity model (#42: their pages, index rows,
//! trends reads, the discovery refresh and the keys on one database), pinned on hand-worked
//! cases through the crate's public API.

use edgefeed_capacity::model::*;

fn work(statements: f64) -> Work {
    Work { statements, rows_read: statements * 2.0, rows_written: statements / 2.0 }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// A public page 8 statements, a tag page 5 of which 2 on the tag's database, a public post's
/// extra 3 (its stripe row twice and the listeners' read), a tag's 2, a trends read 1 on the
/// control database and 2 elsewhere.
fn costs() -> Costs {
    Costs {
        timelines: TimelineCosts {
            measured: true,
            public_page: work(8.0),
            tag_page: work(5.0),
            key_read: work(2.0),
            public_entry: work(3.0),
            per_tag: work(2.0),
            trends_control: work(1.0),
            trends_other: work(2.0),
            page_cpu_ms: 4.0,
            ..TimelineCosts::default()
        },
        consumer_batch: 10.0,
        ..Costs::default()
    }
}

fn mix() -> TimelineMix {
    TimelineMix {
        page_share: 0.5,
        tag_share: 0.25,
        tags_per_post: 2.0,
        trends_per_active_day: 8.64,
        hottest_tag_share: 0.4,
        public_stream_share: 0.1,
        relays: false,
    }
}

fn small(timelines: TimelineMix) -> Workload {
    Workload {
        users: 1_000.0,
        daily_active: 0.5,
        weekly_active: 1.0,
        window_holders: 0.5,
        follows_per_user: 10.0,
        tail: 2.2,
        celebrities: Vec::new(),
        celebrity_posts_per_day: 0.0,
        posts_per_s: 100.0,
        feed_reads_per_s: 100.0,
        page_n_share: 0.0,
        likes_per_s: 0.0,
        comments_per_s: 0.0,
        follows_per_s: 0.0,
        live_share: 0.2,
        hottest_post_like_share: 0.0,
        peak_to_mean: 1.0,
        retention_days: 0.0,
        cron_passes_per_s: 0.0,
        mode: Mode::Push,
        paths: PathMix::default(),
        timelines,
    }
}

#[test]
fn the_mix_adds_timeline_pages_to_the_home_reads_and_counts_the_index_rows() {
    let r = timeline_rates(&small(mix()));
    // Half of all page reads: as many as the 100 home reads, a quarter of them tag pages.
    assert!(close(r.public_pages, 75.0) && close(r.tag_pages, 25.0), "{r:?}");
    // Every status is an original here: 100 public posts, 2 tag rows each.
    assert!(close(r.public_posts, 100.0) && close(r.tag_rows, 200.0));
    // 500 active users, 8.64 reads a day each: 0.05/s.
    assert!(close(r.trends_reads, 0.05));
    // 500 active x 20% live x 10% listening: 10 sockets, each sent every public post.
    assert!(close(r.public_listeners, 10.0) && close(r.listener_calls, 1_000.0));
    // Boosts and direct posts are not indexed; a post has at most 10 indexed tags.
    let paths = PathMix { boost_share: 0.3, direct_share: 0.1, ..PathMix::default() };
    let many = TimelineMix { tags_per_post: 25.0, ..mix() };
    let r = timeline_rates(&Workload { paths, ..small(many) });
    assert!(close(r.public_posts, 60.0) && close(r.tag_rows, 600.0));
    assert_eq!(timeline_rates(&small(TimelineMix::default())).public_pages, 0.0);
}

#[test]
fn a_refresh_reads_the_days_rows_of_its_database_and_writes_two_statements_on_the_control() {
    let w = small(mix());
    // A day of 100 public posts/s and 200 tag rows/s over 10 databases, and 100 users each.
    let own = refresh_own(&w, 10.0);
    let day = 86_400.0;
    assert!(close(own.rows_read, 200.0 * day / 10.0 + 2.0 * 100.0 * day / 10.0 + 100.0 + 20.0), "{own:?}");
    assert_eq!((own.statements, own.rows_written), (6.0, 1.0));
    assert_eq!(refresh_control(), Work { statements: 2.0, rows_read: 0.0, rows_written: 200.0 });
}

#[test]
fn the_pages_and_rows_spread_and_their_sum_does_not_grow_with_the_databases() {
    let (c, w) = (costs(), small(mix()));
    let sum = |p: f64| {
        timeline_spread_parts(&c, &w, p)
            .iter()
            .filter(|(name, _)| !name.starts_with("discovery"))
            .fold(0.0, |acc, (_, x)| acc + x.statements)
    };
    // Public pages: their 8 statements less the 4 stripes' range reads (2 each) the heads make
    // instead, at most 8 loads a second (8 replicas, 1 s) of 4 x 2; then 25 x 5 + 100 x 3 +
    // 200 x 2 + 0.05 x 2, whatever P.
    let expected = 75.0 * (8.0 - 8.0) + 8.0 * 8.0 + 125.0 + 300.0 + 400.0 + 0.1;
    assert!(close(sum(4.0), expected) && close(sum(4_000.0), expected), "{}", sum(4.0));
    // The refresh: 6 statements per database per 10 minutes.
    let refresh = |p: f64| {
        timeline_spread_parts(&c, &w, p)
            .iter()
            .find(|(n, _)| n.starts_with("discovery"))
            .unwrap()
            .1
            .statements
    };
    assert!(close(refresh(600.0), 6.0));
    // The control database: the trends reads' one statement, and 2 statements per database
    // per 10 minutes (at 9,000 databases, 30/s).
    let control = timeline_control_parts(&c, &w, 9_000.0);
    assert!(close(control[0].1.statements, 0.05) && close(control[1].1.statements, 30.0), "{control:?}");
    // A table without the timelines measured adds nothing.
    let none = Costs::default();
    assert!(
        timeline_spread_parts(&none, &w, 4.0).is_empty() && timeline_control_parts(&none, &w, 4.0).is_empty()
    );
    assert_eq!(requests_and_calls(&none, &w), (0.0, 0.0, 0.0));
    // Pages and trends reads (two requests each) are Worker requests; listeners' calls objects',
    // and so are the heads' (each page reads one; each public post and tag row tells one).
    let r = timeline_rates(&w);
    let heads = r.public_pages + r.tag_pages + r.public_posts + r.tag_rows;
    assert_eq!(requests_and_calls(&c, &w), (100.1, 1_000.0 + heads, 400.0));
}

#[test]
fn the_keys_on_one_database_are_checked_against_the_headroom() {
    let (c, w) = (costs(), small(mix()));
    let k = hot_keys(&c, &w, 100.0, 500.0);
    // A stripe: its heads' loads (8 a second at most, of the 75 public pages, x 2), a quarter of
    // the public posts' rows (25 x the extra less the listeners' read, 2).
    assert!(close(k.stripe.work.statements, 16.0 + 50.0) && !k.stripe.binds, "{k:?}");
    assert!(close(k.stripe.total_statements, 166.0));
    // The listeners: a read per public post (100), a row per listener (10 each).
    assert!(close(k.listeners.work.statements, 100.0) && close(k.listeners.work.rows_read, 1_000.0));
    // The hottest tag: 40% of 25 tag pages, its heads' loads at most 8 a second, 2 statements each.
    assert!(close(k.hottest_tag_pages, 10.0) && close(k.hottest_tag.work.statements, 16.0));
    // Ten times the readers: the keys' databases take the same loads (the pages go to the
    // heads), so nothing binds that did not; a hundred times the posts bind a stripe by its writes.
    let busy = Workload { feed_reads_per_s: 1_000.0, ..w.clone() };
    let k = hot_keys(&c, &busy, 100.0, 500.0);
    assert!(close(k.stripe.work.statements, 66.0) && !k.stripe.binds && !k.hottest_tag.binds, "{k:?}");
    let prolific = Workload { posts_per_s: 10_000.0, ..w.clone() };
    assert!(hot_keys(&c, &prolific, 100.0, 500.0).stripe.binds);
    assert_eq!(hot_keys(&Costs::default(), &w, 100.0, 500.0), HotKeys::default());
}

#[test]
fn the_plan_carries_the_timelines_on_every_database_and_the_control() {
    // Before #40's relays (every listener's window per post; the relays' case is below).
    let policy = Policy { before_40: true, ..Policy::default() };
    let (c, limits, prices) = (costs(), Limits::default(), Prices::default());
    let (with, without) = (small(mix()), small(TimelineMix::default()));
    let p = 10.0;
    let a = plan(&c, &with, &policy, &limits, &prices, p);
    let b = plan(&c, &without, &policy, &limits, &prices, p);
    let parts: f64 = timeline_spread_parts(&c, &with, p).iter().map(|(_, x)| x.statements).sum();
    let refresh_alone: f64 = timeline_spread_parts(&c, &without, p).iter().map(|(_, x)| x.statements).sum();
    assert!(close(a.typical.work.statements - b.typical.work.statements, (parts - refresh_alone) / p));
    // The control database: the typical share's difference, and the trends reads' statement.
    let control = a.control.work.statements - b.control.work.statements;
    assert!(close(control, (parts - refresh_alone) / p + 0.05), "{control}");
    // Each public post goes to each of the 10 listeners' windows (the hottest object is one),
    // and the heads take a call per page, public post and tag row.
    let objects = a.object_requests_per_s - b.object_requests_per_s;
    let heads = |w: &Workload| {
        let r = timeline_rates(w);
        r.public_pages + r.tag_pages + r.public_posts + r.tag_rows
    };
    // (Public posts tell their heads whether or not anyone reads the timelines.)
    assert!(close(objects, 1_000.0 + heads(&with) - heads(&without)), "{objects}");
    assert_eq!(a.hottest_object, "a public-stream listener's window");
    assert!(close(a.hot_keys.listeners.work.statements, 100.0));
    // More pages, more requests and a bigger bill.
    assert!(close(a.worker_requests_per_s - b.worker_requests_per_s, 100.1));
    assert!(a.monthly_usd > b.monthly_usd);
}

#[test]
fn a_pages_posts_are_read_from_up_to_twenty_databases_whatever_p() {
    // 20 posts over 1 database: 1; over 20: 20 x (1 - 0.95^20), about 12.8; over a million: ~20.
    assert!(close(databases_holding(1.0, 20.0), 1.0));
    assert!(close(databases_holding(20.0, 20.0), 20.0 * (1.0 - 0.95_f64.powf(20.0))));
    assert!((databases_holding(1e6, 20.0) - 20.0).abs() < 1e-3);
    // A page measured with its posts on one database, a hydration batch of 2 statements there:
    // at P its posts' databases each take one, and the rows stay the posts'.
    let measured = work(7.0);
    let hydration = Work { statements: 2.0, rows_read: 97.0, rows_written: 0.0 };
    assert_eq!(page_work(measured, hydration, 1.0, 20.0), measured);
    let at = |p: f64| page_work(measured, hydration, p, PAGE_POSTS);
    assert!(close(at(1e6).statements, 7.0 + 2.0 * (databases_holding(1e6, 20.0) - 1.0)));
    assert!(at(1e6).statements < 7.0 + 2.0 * 19.0 + 1e-9 && at(1e9).statements < 45.0 + 1e-6);
    assert_eq!(at(9_409.0).rows_read, measured.rows_read);
    // The plan's timeline parts at P use it: a measured hydration adds statements per page.
    let c = Costs { timelines: TimelineCosts { hydration, ..costs().timelines }, ..costs() };
    let pages = |c: &Costs| timeline_spread_parts(c, &small(mix()), 100.0)[0].1.statements;
    assert!(close(pages(&c) - pages(&costs()), 75.0 * 2.0 * (databases_holding(100.0, 20.0) - 1.0)));
}

/// #40: a public post calls its stripe's relay, which reads the stripe's listeners and calls
/// each one's window once per flush; the public timeline has 16 stripes.
#[test]
fn relays_tell_each_listener_once_a_flush_and_read_the_listeners_once() {
    let c = costs();
    let w = small(TimelineMix { relays: true, ..mix() });
    let r = timeline_rates(&w);
    // 100 public posts/s over 16 stripes: 6.25 a stripe, so each relay flushes every second;
    // the 10 listeners get a call from each of the 16 relays: 160, and the posts' 100 calls to
    // their stripes' relays, 200 to their tags'.
    assert!(close(r.listener_calls, 100.0 + 200.0 + 10.0 * 16.0), "{r:?}");
    let k = hot_keys(&c, &w, 100.0, 500.0);
    // A stripe's listeners: one read a flush (10 rows), not one a post.
    assert!(close(k.listeners.work.statements, 1.0) && close(k.listeners.work.rows_read, 10.0), "{k:?}");
    // A stripe's writes: a sixteenth of the posts' rows, less the listeners' read (1 of 4 a post).
    assert!(close(k.stripe.work.statements, 16.0 + 100.0 / 16.0), "{k:?}");
}
