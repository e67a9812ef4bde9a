//! The capacity model's arithmetic (`benches/capacity/model.rs`) and the bench's
//! `Server-Timing` parser (`benches/capacity/timing.rs`), unit-tested natively: both are pure
//! code in the bench, run here so the suite pins them.

#[path = "../benches/capacity/model.rs"]
#[allow(dead_code)]
mod model;

#[path = "../benches/capacity/timing.rs"]
#[allow(dead_code)]
mod timing;

mod model_arithmetic {
    use super::model::*;

    fn work(statements: f64) -> Work {
        Work { statements, rows_read: statements * 2.0, rows_written: 0.0 }
    }

    /// Round numbers, so the case below can be worked by hand.
    fn costs() -> Costs {
        let page = OpCost { home: work(5.0), other: work(3.0), ..OpCost::default() };
        Costs {
            feed_push_page1: page,
            feed_push_page_n: page,
            feed_pull_page1: page,
            feed_pull_page_n: page,
            publish: OpCost { home: work(6.0), ..OpCost::default() },
            fanout_post: OpCost { queue_messages: 1.0, ..OpCost::default() },
            fanout_chunk: OpCost {
                home: work(2.0),
                other: work(1.0),
                queue_messages: 1.0,
                ..OpCost::default()
            },
            fanout_reader: OpCost { home: work(0.5), other: work(1.0), do_calls: 1.0, ..OpCost::default() },
            cron_pass: OpCost { home: work(10.0), control: work(30.0), ..OpCost::default() },
            consumer_batch: 10.0,
            ..Costs::default()
        }
    }

    fn small() -> Workload {
        Workload {
            users: 1_000.0,
            daily_active: 1.0,
            weekly_active: 1.0,
            window_holders: 1.0,
            follows_per_user: 10.0,
            tail: 2.2,
            celebrities: Vec::new(),
            celebrity_posts_per_day: 0.0,
            posts_per_s: 1.0,
            feed_reads_per_s: 10.0,
            page_n_share: 0.0,
            likes_per_s: 0.0,
            comments_per_s: 0.0,
            follows_per_s: 0.0,
            live_share: 0.0,
            hottest_post_like_share: 0.0,
            peak_to_mean: 1.0,
            retention_days: 0.0,
            cron_passes_per_s: 1.0 / 60.0,
            mode: Mode::Push,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn the_account_storage_cap_binds_on_the_day_the_growth_passes_it() {
        let mut c = costs();
        c.bytes =
            Bytes { user: 100.0, follow: 10.0, post: 200.0, like: 100.0, comment: 50.0, window_entry: 0.0 };
        // 1,000 users: 100 kB of users, 100 kB of follows. A day at 1 post, 2 likes and
        // 2 comments a second: 86,400 x (200 + 200 + 100) = 43.2 MB, 40% of it likes.
        let w = Workload { likes_per_s: 2.0, comments_per_s: 2.0, retention_days: 10.0, ..small() };
        let limits = Limits { account_d1_bytes: 200_000.0 + 3.0 * 43.2e6, ..Limits::default() };
        let s = account_storage(&c, &w, &limits);
        assert!(close(s.graph_bytes, 200_000.0));
        assert!(close(s.bytes_per_day, 43.2e6));
        assert!(close(s.like_bytes_per_day, 17.28e6));
        assert!(close(s.bytes_at_horizon, 200_000.0 + 432e6));
        assert!(s.days_to_cap.is_some_and(|d| close(d, 3.0)), "{s:?}");
        let roomy = Limits { account_d1_bytes: 1e12, ..Limits::default() };
        assert_eq!(account_storage(&c, &w, &roomy).days_to_cap, None);
    }

    #[test]
    fn a_small_push_workload_on_two_databases_by_hand() {
        let plan = plan(&costs(), &small(), &Policy::default(), &Limits::default(), &Prices::default(), 2.0);
        // Every follower holds a window: a post is written to its author's 10 followers.
        assert!(close(plan.graph.deliveries_per_post, 10.0), "{:?}", plan.graph);
        // A page's 10 authors touch the other database with probability 1 - (1/2)^10.
        let page = 5.0 + 3.0 * (1.0 - 0.5_f64.powi(10));
        assert!(close(plan.databases_touched_per_page, 1.0 + (1.0 - 0.5_f64.powi(10))));
        // One chunk per post (10 readers < 500), asking both databases which readers are active:
        // each holds at least one of the 10 with probability 1 - (1/2)^10.
        let chunk = 2.0 + 1.0 * 2.0 * (1.0 - 0.5_f64.powi(10));
        // Per database: half of reads (10/s), publish (6/s), the chunk, fan-out (10 readers x
        // 1.5) and the cron pass (10 statements per database per minute).
        let typical = (10.0 * page + 6.0 + chunk + 15.0) / 2.0 + 10.0 / 60.0;
        assert!(
            close(plan.typical.work.statements, typical),
            "{} vs {typical}",
            plan.typical.work.statements
        );
        assert!(close(plan.typical.work.rows_read, 2.0 * typical));
        assert!(close(plan.control.work.statements, typical + 30.0 / 60.0));
        assert_eq!(plan.busiest, "the control database (DB_0)");
        assert!(close(plan.window_writes_per_s, 10.0));
        // Queue: one message per post and one per chunk, 2/s for a month, three operations
        // each, the first million free, $0.40 per million.
        let ops = 2.0 * SECONDS_PER_MONTH * 3.0;
        let queue = plan.bill.iter().find(|l| l.item.starts_with("Queues")).unwrap();
        assert!(close(queue.usage, ops));
        assert!(close(queue.usd, (ops - 1e6) / 1e6 * 0.40), "{queue:?}");
        assert!(close(plan.monthly_usd, plan.bill.iter().map(|l| l.usd).sum()));
    }

    #[test]
    fn the_recommended_count_is_the_smallest_that_fits() {
        let mut w = small();
        w.feed_reads_per_s = 5_000.0;
        let (c, policy, limits, prices) = (costs(), Policy::default(), Limits::default(), Prices::default());
        let verdict = recommend(&c, &w, &policy, &limits, &prices);
        assert_eq!(verdict.why_not, None, "some P fits");
        let best = verdict.plan;
        assert!(fits(&best, &limits).is_ok());
        let one_less = plan(&c, &w, &policy, &limits, &prices, best.databases - 1.0);
        assert!(fits(&one_less, &limits).is_err(), "P = {} fits too", best.databases - 1.0);
        assert!(best.databases > 1.0);
    }

    #[test]
    fn a_load_on_the_control_database_that_no_count_spreads_is_named() {
        let mut c = costs();
        c.publish.control = work(1.0);
        let mut w = small();
        w.posts_per_s = 600.0;
        let limits = Limits { databases_per_account: 64.0, ..Limits::default() };
        let verdict = recommend(&c, &w, &Policy::default(), &limits, &Prices::default());
        let why = verdict.why_not.expect("nothing fits");
        assert_eq!(verdict.plan.databases, 64.0, "the plan shown is at the account's limit");
        assert!(why.contains("control database") && why.contains("publish"), "{why}");
    }

    #[test]
    fn the_power_law_has_the_mean_asked_for_and_caps_cut_its_deliveries() {
        let law = PowerLaw::with_mean(2.2, 200.0, 10_000_000.0);
        assert!((law.mean() - 200.0).abs() < 0.01, "{}", law.mean());
        assert!(close(law.capped_deliveries(0.5, 1e12), 100.0));
        assert!(law.capped_deliveries(0.5, 10_000.0) < 100.0);
        assert!(law.capped_deliveries(1.0, 1.0) <= 1.0 + 1e-9);
        assert!(close(law.pulled_per_reader(200.0, 1.0, 1e12), 0.0));
        let pulled = law.pulled_per_reader(200.0, 1.0, 10_000.0);
        assert!(pulled > 0.0 && pulled < 200.0, "{pulled}");
        assert!(close(touched_others(4.0, 1.0), 0.75));
        assert!(close(touched_others(1.0, 50.0), 0.0));
    }

    #[test]
    fn pull_mode_pulls_every_follow_and_writes_no_window() {
        let mut w = small();
        w.mode = Mode::Pull;
        let plan = plan(&costs(), &w, &Policy::default(), &Limits::default(), &Prices::default(), 8.0);
        assert!(close(plan.graph.pulled_per_reader, 10.0));
        assert_eq!(plan.window_writes_per_s, 0.0);
        assert!(close(plan.databases_touched_per_page, 1.0 + 7.0 * (1.0 - (7.0_f64 / 8.0).powf(20.0))));
    }
}

mod header_parsing {
    use super::model::Work;
    use super::timing::timing_of;

    #[test]
    fn server_timing_parses_into_per_database_work() {
        let header =
            "total;dur=40, d1;desc=\"9 statements in 3 round trips\";dur=30, do;desc=\"2 calls\";dur=6, \
                      queue;desc=\"1 sends; 3 messages\", storage;desc=\"2 sequential round trips\", \
                      d1-1;desc=\"5 statements in 2 round trips; 12 rows read; 3 rows written\";dur=20, \
                      d1-3;desc=\"4 statements in 1 round trips; 7 rows read; 0 rows written\";dur=10, \
                      d1-databases;desc=\"2 databases touched\"";
        let t = timing_of(header);
        assert_eq!(
            (t.total_ms, t.slowest_db_ms, t.do_ms, t.do_calls, t.queue_messages),
            (40.0, 20.0, 6.0, 2.0, 3.0)
        );
        assert_eq!(t.subrequests, 3.0 + 2.0 + 1.0);
        assert_eq!(t.per_db[1].0, Work { statements: 5.0, rows_read: 12.0, rows_written: 3.0 });
        assert_eq!(t.per_db[1].1, 2.0);
        assert_eq!(t.per_db[3].0.rows_read, 7.0);
        assert_eq!(t.per_db[0].0, Work::default());
    }
}
