//! The delivery paths' arithmetic in the capacity model (#39: boosts, replies, quotes, mentions,
//! direct posts), pinned on hand-worked cases through the crate's public API.

use edgefeed_capacity::model::*;

fn work(statements: f64) -> Work {
    Work { statements, rows_read: statements * 2.0, rows_written: statements / 2.0 }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// A post: the request 6 statements, its part of the fan-out none, a chunk 2 at home and 1 on
/// each reader database; a boost measured at 11 at home (the post's 8 and 3 more) and 4 on the
/// original's database.
fn costs() -> Costs {
    Costs {
        publish: OpCost {
            home: work(6.0),
            queue_messages: 1.0,
            subrequests: 4.0,
            cpu_ms: 2.0,
            ..OpCost::default()
        },
        // A chunk as the table measured it before #40 merged its reads (the design's 2 today).
        fanout_chunk: OpCost { home: work(6.0), other: work(1.0), queue_messages: 1.0, ..OpCost::default() },
        fanout_reader: OpCost { other: work(1.0), do_calls: 1.0, ..OpCost::default() },
        paths: PathCosts {
            // A post's 12 at home (publish and one chunk) and 3 of its own.
            boost: OpCost {
                home: work(15.0),
                other: work(4.0),
                queue_messages: 1.0,
                subrequests: 6.0,
                cpu_ms: 3.0,
                ..OpCost::default()
            },
            mention: OpCost { home: work(5.0), other: work(2.0), control: work(1.0), ..OpCost::default() },
            ..PathCosts::default()
        },
        consumer_batch: 10.0,
        ..Costs::default()
    }
}

fn mix() -> PathMix {
    PathMix {
        boost_share: 0.3,
        reply_share: 0.1,
        quote_share: 0.1,
        direct_share: 0.1,
        mentions_per_post: 0.5,
        reply_reach: 0.2,
        direct_recipients: 1.0,
        boost_first_hour: 0.9,
    }
}

fn small(paths: PathMix) -> Workload {
    Workload {
        users: 1_000.0,
        daily_active: 1.0,
        weekly_active: 1.0,
        window_holders: 0.5,
        follows_per_user: 10.0,
        tail: 2.2,
        celebrities: Vec::new(),
        celebrity_posts_per_day: 0.0,
        posts_per_s: 100.0,
        feed_reads_per_s: 0.0,
        page_n_share: 0.0,
        likes_per_s: 0.0,
        comments_per_s: 0.0,
        follows_per_s: 0.0,
        live_share: 0.0,
        hottest_post_like_share: 0.0,
        peak_to_mean: 1.0,
        retention_days: 0.0,
        cron_passes_per_s: 0.0,
        mode: Mode::Push,
        paths,
        timelines: TimelineMix::default(),
    }
}

#[test]
fn a_path_adds_its_measured_figure_less_a_post_with_one_empty_chunk() {
    let c = costs();
    let boost = extra(&c, &c.paths.boost);
    // Home: 11 measured, less the request's 6 and a chunk's 2 (the post's part is 0 here).
    assert!(close(boost.home.statements, 3.0) && close(boost.home.rows_read, 6.0), "{boost:?}");
    // The other database is all the path's; messages and subrequests beyond the request's.
    assert_eq!(boost.other, work(4.0));
    assert!(close(boost.queue_messages, 0.0) && close(boost.subrequests, 2.0) && close(boost.cpu_ms, 1.0));
    // A figure below the post's is no negative cost; an unmeasured path adds nothing.
    let below = OpCost { home: work(5.0), ..OpCost::default() };
    assert_eq!(extra(&c, &below).home, Work::default());
    assert_eq!(extra(&c, &c.paths.reply), OpCost::default());
}

#[test]
fn the_mix_splits_the_statuses_and_counts_the_mentions() {
    let r = path_rates(&small(mix()));
    assert!(close(r.originals, 40.0) && close(r.boosts, 30.0) && close(r.directs, 10.0));
    assert!(close(r.replies, 10.0) && close(r.quotes, 10.0));
    // Originals, replies and quotes mention: (40 + 10 + 10) x 0.5.
    assert!(close(r.mentions, 30.0));
    assert!(close(r.targets(), 60.0));
    let none = path_rates(&small(PathMix::default()));
    assert!(close(none.originals, 100.0) && none.mentions == 0.0);
}

#[test]
fn a_reply_reaches_its_share_and_a_direct_post_its_recipients() {
    let g =
        Graph { deliveries_per_post: 10.0, chunks_per_post: 1.5, readers_per_chunk: 7.0, ..Graph::default() };
    let d = delivery(&small(mix()), &g);
    // (40 originals + 30 boosts + 10 quotes + 10 replies x 0.2) x 10, and 10 direct posts to one
    // account each, half of them holding a window; and every status's author's own window, half
    // of them held (50).
    assert!(close(d.deliveries, 820.0 + 5.0 + 50.0), "{d:?}");
    // Every status but the direct ones pages the followers; a direct post is one chunk.
    assert!(close(d.chunks, 90.0 * 1.5 + 10.0) && close(d.reply_chunks, 15.0));
    let pull = delivery(&Workload { mode: Mode::Pull, ..small(mix()) }, &Graph::default());
    assert!(close(pull.deliveries, 50.0), "pull mode: the authors' own windows only");
    assert_eq!(reply_check(&g), Work { statements: 1.0, rows_read: 7.0, rows_written: 0.0 });
}

#[test]
fn the_plan_spreads_the_extras_and_the_mentions_handle_lookups_too() {
    let (c, policy, limits, prices) = (costs(), Policy::default(), Limits::default(), Prices::default());
    let boosts = PathMix { boost_share: 0.5, ..PathMix::default() };
    let none = plan(&c, &small(PathMix::default()), &policy, &limits, &prices, 1.0);
    let with = plan(&c, &small(boosts), &policy, &limits, &prices, 1.0);
    // 50 boosts/s, each 3 statements at home and 4 on the original's database; delivered as posts.
    let added = with.typical.work.statements - none.typical.work.statements;
    assert!(close(added, 50.0 * 7.0), "{added}");
    assert!(close(with.window_writes_per_s, none.window_writes_per_s));
    // A mention's handle lookup (the statement the measurement saw on `DB_0`) lives on the
    // handle's database: spread like the rest, nothing on the control database beyond its
    // even share. 100 originals x 0.2 mentions, a statement each, over 4 databases.
    let mentions = PathMix { mentions_per_post: 0.2, ..PathMix::default() };
    let m = plan(&c, &small(mentions), &policy, &limits, &prices, 4.0);
    let base = plan(&c, &small(PathMix::default()), &policy, &limits, &prices, 4.0);
    let excess = |p: &Plan| p.control.work.statements - p.typical.work.statements;
    assert!(close(excess(&m), excess(&base)), "{} against {}", excess(&m), excess(&base));
    let lookups = c.paths.mention.control.statements * 20.0 / 4.0;
    let added = m.typical.work.statements - base.typical.work.statements;
    assert!(lookups > 0.0 && added >= lookups, "{added} against the lookups' {lookups}");
}

#[test]
fn an_author_takes_the_answers_to_its_posts_by_the_readers_they_reached() {
    let c = costs();
    let w = small(PathMix { boost_share: 0.5, ..PathMix::default() });
    // Boosts pick targets by reach: 50 statuses/s that can be boosted x 10 readers each; an
    // author with 100 followers posting 0.5/s takes 0.5 x 100 / 500 of the 50 boosts/s.
    assert!(close(answered_share(&w, 100.0, 0.5), 0.1));
    let g = Graph::default();
    assert!(close(answered_work(&c, &w, &g, 100.0, 0.5).statements, 0.1 * 50.0 * 4.0));
    assert!(close(answered_share(&w, 1e9, 1.0), 1.0));
}

#[test]
fn a_hot_post_boosted_by_hot_boosters_loads_the_boosters_databases_not_the_originals() {
    let c = costs();
    let celebrities =
        vec![Celebrities { count: 1.0, followers: 1_000.0 }, Celebrities { count: 2.0, followers: 400.0 }];
    let w = Workload {
        celebrities,
        ..small(PathMix { boost_share: 0.5, boost_first_hour: 0.9, ..PathMix::default() })
    };
    let policy = Policy { push_max_followers: 1e9, fanout_chunk: 100.0, ..Policy::default() };
    let k = boost_burst(&c, &w, &policy);
    // 0.5 x 100 boosts/s over 50 boostable statuses/s reaching 10 readers: 0.1 a reader, so 100
    // boosts of the 1,000-follower author's post, 4 statements each on its database.
    assert!(close(k.boosts, 100.0) && close(k.statements, 400.0));
    assert!(close(k.first_hour_per_s, 100.0 * 0.9 * 4.0 / 3_600.0));
    // The 400-follower booster's fan-out (200 window holders: 2 chunks) is on its own database:
    // the request's 6, 2 chunks' 12 (this table's 6 each), its boost's 3 more; the author's own
    // post: 6 + 5 x 6.
    assert_eq!(k.booster_followers, 400.0);
    assert!(close(k.booster_statements, 6.0 + 12.0 + 3.0) && close(k.original_statements, 36.0));
}

#[test]
fn the_first_hour_of_boosts_counts_against_the_hot_authors_database() {
    let limits = Limits::default();
    let load = DbLoad { work: Work { statements: 490.0, ..Work::default() }, bytes: 0.0 };
    let quiet = Plan { celebrity: load, ..Plan::default() };
    assert_eq!(fits(&quiet, &limits), Ok(()));
    let boosted =
        Plan { boost_burst: BoostBurst { first_hour_per_s: 20.0, ..BoostBurst::default() }, ..quiet };
    let why = fits(&boosted, &limits).unwrap_err();
    assert!(why.contains("510 statements/s in its post's first hour of boosts"), "{why}");
    let target = targets(&boosted, &limits).into_iter().find(|t| t.what.contains("boosted")).unwrap();
    assert!(!target.pass, "{target:?}");
}

#[test]
fn each_path_stores_a_notification_at_a_comments_notification_bytes() {
    let mut c = costs();
    c.bytes = Bytes { comment: 300.0, ..Bytes::default() };
    let w = Workload { retention_days: 1.0, ..small(mix()) };
    // 30 boosts + 10 replies + 10 quotes + 30 mentions + 10 direct = 90 notifications/s of
    // 300 - 82 bytes, over a day.
    assert!(close(notification_bytes_per_s(&c, &w), 90.0 * 218.0));
    let none = Workload { retention_days: 1.0, ..small(PathMix::default()) };
    assert!(close(stored_bytes(&c, &w) - stored_bytes(&c, &none), 90.0 * 218.0 * 86_400.0));
}
