//! The capacity model's arithmetic (`src/model.rs`), pinned on hand-worked cases through the
//! crate's public API.

mod model_arithmetic {
    use edgefeed_capacity::model::*;

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
            paths: PathMix::default(),
            timelines: TimelineMix::default(),
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
        let before_40 = Policy { before_40: true, ..Policy::default() }; // #40's cases: below
        let plan = plan(&costs(), &small(), &before_40, &Limits::default(), &Prices::default(), 2.0);
        // Every follower holds a window: a post is written to its author's 10 followers.
        assert!(close(plan.graph.deliveries_per_post, 10.0), "{:?}", plan.graph);
        // A page's 10 authors touch the other database with probability 1 - (1/2)^10; the
        // reader's own runs the table's 5 statements whether its authors live there or not.
        let page = 5.0 + 3.0 * (1.0 - 0.5_f64.powi(10));
        assert!(close(plan.databases_touched_per_page, 1.0 + (1.0 - 0.5_f64.powi(10))));
        // One chunk per post (10 readers < 500), asking both databases which readers are active:
        // each holds at least one of the 10 with probability 1 - (1/2)^10.
        let chunk = 2.0 + 1.0 * 2.0 * (1.0 - 0.5_f64.powi(10));
        // Per database: half of reads (10/s), publish (6/s), the chunk, fan-out (10 readers and
        // the author's own window, x 1.5) and the cron pass (10 statements per database per
        // minute).
        // The cron share probes 1 other database here, against the table's 3 (on 4 databases):
        // 2 probing parts x 2 statements fewer than the measured 10; and it raises its own
        // figure (1 statement).
        let cron = 10.0 - 2.0 * 2.0 + 1.0;
        let typical = (10.0 * page + 6.0 + chunk + 16.5) / 2.0 + cron / 60.0;
        assert!(
            close(plan.typical.work.statements, typical),
            "{} vs {typical}",
            plan.typical.work.statements
        );
        // Rows: 2 per statement, except a page's, which are per author read: the reader's own
        // (home's 10 less the 6 rows of the 6 authors each measured database held: 4 for the
        // measured reader's 18 follows, 1.5 a follow fewer for this one's 10: none left), then
        // 1 row for each of the 10 authors (5 on each database).
        let own = (10.0_f64 - 6.0 - 1.5 * (18.0 - 10.0)).max(0.0);
        let page_rows = own + 10.0 / 2.0 + 10.0 / 2.0;
        // (Cron: the measured 20 rows, its raise's 1; its recount: 1,000 users x 25 rows a minute.)
        let recount = 1_000.0 / 60.0 * 25.0 / 2.0;
        let typical_rows = (10.0 * page_rows + 2.0 * (6.0 + chunk + 16.5)) / 2.0 + 21.0 / 60.0 + recount;
        assert!(
            close(plan.typical.work.rows_read, typical_rows),
            "{} vs {typical_rows}",
            plan.typical.work.rows_read
        );
        // The control database's measured 30 less the 3 other shares' raises it carried then.
        assert!(close(plan.control.work.statements, typical + (30.0 - 3.0) / 60.0));
        assert_eq!(plan.busiest, "the control database (DB_0)");
        assert!(close(plan.window_writes_per_s, 11.0));
        queue_and_total_by_hand(&plan);
    }

    /// Queue: one message per post, one per chunk and the cron's 2 shares a minute, for a
    /// month, three operations each, the first million free, $0.40 per million.
    fn queue_and_total_by_hand(plan: &Plan) {
        let ops = (2.0 + 2.0 / 60.0) * SECONDS_PER_MONTH * 3.0;
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
    fn an_authors_replicas_follow_its_read_rate_and_their_leases_are_bounded() {
        let c = costs();
        // 1,200 requests/s: ceil(1200 / 500) = 3 replicas at 400/s each. Each checks its lease
        // once per 10 s (1 statement, 1 row) and refreshes once per 30 s (1 statement, 200
        // rows): 3 x (0.1 + 1/30) statements/s, 3 x (0.1 + 200/30) rows read/s.
        let (n, work) = replicas_for(&c, 1_200.0);
        assert_eq!(n, 3.0);
        assert!(close(work.statements, 3.0 * (0.1 + 1.0 / 30.0)), "{work:?}");
        assert!(close(work.rows_read, 3.0 * (0.1 + 200.0 / 30.0)), "{work:?}");
        // A replica read less often than its lease checks on every read, and refreshes at
        // most every 30 s. An author has 2 replicas however little it is read (as built,
        // `domain/replica.rs` MIN_REPLICAS): at 0.05 requests/s, 0.025 each.
        let (n, work) = replicas_for(&c, 0.05);
        assert_eq!(n, 2.0);
        assert!(close(work.statements, 2.0 * (0.025 + 0.025)), "{work:?}");
        // 10 requests/s: 2 replicas at 5/s, each checking its lease every 10 s.
        let (n, work) = replicas_for(&c, 10.0);
        assert_eq!(n, 2.0);
        assert!(close(work.statements, 2.0 * (0.1 + 1.0 / 30.0)), "{work:?}");
        // An author read at 1M requests/s gets the most replicas, 256, at 3,906/s each: its
        // database still carries only 256 x (0.1 + 1/30) statements/s.
        let (n, work) = replicas_for(&c, 1e6);
        assert_eq!(n, 256.0);
        assert!(close(work.statements, 256.0 * (0.1 + 1.0 / 30.0)));
    }

    /// 1,000 users all following one author who posts once a second, read 10 times a second,
    /// in pull mode: every page pulls it, from its one replica.
    fn one_hot_author() -> (Workload, Policy) {
        let w = Workload {
            mode: Mode::Pull,
            celebrities: vec![Celebrities { count: 1.0, followers: 1_000.0 }],
            celebrity_posts_per_day: 86_400.0,
            ..small()
        };
        // Above every power-law author: the celebrity alone is hot.
        (w, Policy { hot_replicas: true, hot_followers: 1e9, before_40: true, ..Policy::default() })
    }

    #[test]
    fn a_hot_author_is_read_from_its_replica_and_its_database_only_sees_the_leases() {
        let c = costs();
        let (w, policy) = one_hot_author();
        let hot = hot_authors(&c, &w, &policy);
        // 10 reads/s, each pulling it once: 10 requests/s, on the 2 replicas an author has at
        // least; each post written to both.
        assert!(close(hot.authors, 1.0) && close(hot.replicas, 2.0), "{hot:?}");
        assert!(close(hot.pulled_per_read, 1.0) && close(hot.hydrated_per_read, 0.0), "{hot:?}");
        assert!(close(hot.writes_per_s, 2.0));
        assert!(close(hot.top_requests_per_s, 10.0) && close(hot.hottest_replica_rps, 5.0));
        let lease = 2.0 * (0.1 + 1.0 / 30.0);
        assert!(close(hot.top_lease.statements, lease), "{hot:?}");
        let p = plan(&c, &w, &policy, &Limits::default(), &Prices::default(), 2.0);
        // Its database: its even share plus the leases (pull: nothing paged, nothing read),
        // what each of its posts adds for its replicas (the design's 2 statements, 1 post/s)
        // and its posts' own 6 statements, of which the even share holds 1/P (P = 2).
        let told = c.replica.publish_author_db.statements;
        let own = 6.0 * (1.0 - 1.0 / 2.0);
        assert!(close(p.celebrity.work.statements - p.typical.work.statements, lease + told + own));
        // Requests: 10 reads and 2 writes a second; each write's 2 rows a second for a month.
        assert!(close(p.replica_requests_per_s, 12.0));
        let rows =
            p.bill.iter().find(|l| l.item.starts_with("Durable Object storage rows written (hot")).unwrap();
        assert!(close(rows.usage, 4.0 * SECONDS_PER_MONTH), "{rows:?}");
        // The other 9 follows are pulled from D1, beside the page's authors on D1: its 10 less
        // the hot one, whose posts come from its replica (the model counted it until the
        // simulation's hybrid pages showed otherwise). The other database is touched with
        // 1 - (1/2)^18, at 3 statements; the reader's own runs the table's 5 whatever lives
        // there, and its batch gains the liked-by-viewer one.
        let touched = 1.0 - 0.5_f64.powi(18);
        assert!(close(p.databases_touched_per_page, 1.0 + touched), "{}", p.databases_touched_per_page);
        assert!(close(p.page_d1_queries, 5.0 + 1.0 + 3.0 * touched), "{}", p.page_d1_queries);
    }

    #[test]
    fn a_celebritys_post_is_a_burst_paced_under_the_headroom() {
        let c = costs();
        let w = Workload { celebrities: vec![Celebrities { count: 1.0, followers: 1_000.0 }], ..small() };
        // Push: 1,000 readers in 2 chunks of 500, run as segments: 6 (publish) + 2 x 1.25
        // (chunks: 2 less the record's 1 statement on 3 chunks in 4) + 1,000 x 0.5 (paging)
        // = 508.5 statements, with no reader on the author's database (P very large). At
        // 1,000/s: 0.5085 s. Beside a steady 100/s under a ceiling of 500: 400/s spare,
        // 1.27 s. The queue (2 / 5,000) and the consumers (2 x 1 s / 250) are faster.
        let b = burst(&c, &w, &Policy::default(), &Limits::default(), (100.0, 1e12));
        assert!(close(b.delivered, 1_000.0) && close(b.chunks, 2.0) && close(b.statements, 508.5), "{b:?}");
        assert!(close(b.seconds_at_budget, 0.5085));
        assert!(close(b.seconds_paced, 508.5 / 400.0) && close(b.seconds, 508.5 / 400.0));
        assert!(close(b.seconds_queue, 2.0 / 5_000.0) && close(b.seconds_consumers, 2.0 / 250.0));
        assert!(close(b.added_per_s, 400.0));
        // On 2 databases nearly every chunk has a reader on the author's: its window check
        // there (the chunk's 1 statement a readers' database) for each chunk.
        let two = burst(&c, &w, &Policy::default(), &Limits::default(), (100.0, 2.0));
        assert!(close(two.statements, 510.5), "{two:?}");
        // Before #40 a chain recorded every chunk: the table's 2 statements a chunk.
        let before = Policy { before_40: true, ..Policy::default() };
        assert!(close(burst(&c, &w, &before, &Limits::default(), (100.0, 1e12)).statements, 510.0));
        // Hybrid caps it: 10,000 pushes at most, here all 1,000 (every reader is active).
        let pull = Workload { mode: Mode::Pull, ..w };
        assert_eq!(burst(&c, &pull, &Policy::default(), &Limits::default(), (100.0, 1e12)).statements, 6.0);
    }

    #[test]
    fn the_push_cost_ratio_is_what_a_pull_costs_over_a_push() {
        let mut c = costs();
        c.fanout_reader.do_calls = 1.0;
        c.window.delivery = Work { statements: 4.0, rows_read: 0.0, rows_written: 1.0 };
        c.feed_pull_page1.other = Work { statements: 3.0, rows_read: 256.0, rows_written: 0.0 };
        c.feed_push_page1.other = Work { statements: 3.0, rows_read: 86.0, rows_written: 0.0 };
        let k = push_cost(&c, &small(), &Limits::default(), &Prices::default());
        // A window write: $0.15 per million requests plus $1.00 per million rows written.
        assert!(close(k.push * 1e6, 1.15));
        // A D1 pull: 170 rows at $0.001 per million, plus 3 statements of a database that
        // carries 500/s at $0.10 a month.
        let statement = 0.10 / (500.0 * SECONDS_PER_MONTH);
        assert!(close(k.pull_d1, 170.0 * 1e-9 + 3.0 * statement));
        // A replica pull: the request, and 1 ms of 128 MB at $12.50 per million GB-s.
        assert!(close(k.pull_replica, 0.15e-6 + 0.001 * 0.128 * 12.5e-6));
        // small(): 10 reads/s over 1,000 daily readers, 1 post/s over 1,000 authors.
        assert!(close(k.reads_per_day, 864.0) && close(k.posts_per_day, 86.4));
    }

    #[test]
    fn the_realistic_profile_is_twitters_2012_rates_per_million_users() {
        let w = Workload::realistic(1e6, Mode::Hybrid);
        let peak = 12_000.0 / 4_600.0;
        // 2,000 reads/s and 31 posts/s per million at the mean; the model takes peak rates.
        assert!(close(w.feed_reads_per_s / peak, 2_000.0) && close(w.posts_per_s / peak, 31.0));
        assert!(close(w.likes_per_s, 5.0 * w.posts_per_s));
        // Its largest author: 31M of 150M, a fifth of the users.
        assert!(close(w.celebrities[0].followers, 1e6 * 31.0 / 150.0));
    }

    #[test]
    fn a_page_pays_the_pull_plans_own_rows_only_as_often_as_it_pulls_something() {
        // Push pages read 10 rows at home (4 their own, 6 of the measured six home authors),
        // pull pages 40 (16 their own, 24 of the six authors' ranges).
        let (push, pull) = (
            OpCost {
                home: Work { statements: 5.0, rows_read: 10.0, rows_written: 0.0 },
                other: work(3.0),
                ..OpCost::default()
            },
            OpCost {
                home: Work { statements: 5.0, rows_read: 40.0, rows_written: 0.0 },
                other: Work { statements: 3.0, rows_read: 24.0, rows_written: 0.0 },
                ..OpCost::default()
            },
        );
        // No pulled author: the push page's own 4 rows and 1 row per hydrated author (2 of
        // them, on one of 2 databases each).
        let none = home_work(push, pull, (0.0, 2.0, MEASURED_READER_FOLLOWS), 2.0);
        assert!(close(none.rows_read, 4.0 + 1.0 * 2.0 / 2.0), "{none:?}");
        // 0.01 pulled authors per reader (the simulation's hybrid readers, beside the hot
        // author's replica): 1% of pages pull, so the own rows are 4 + 1% of 12, and the pulled
        // author's range (4 rows) counts for 0.01 authors.
        let rare = home_work(push, pull, (0.01, 2.0, MEASURED_READER_FOLLOWS), 2.0);
        let pulls = 1.0 - (-0.01_f64).exp();
        assert!(close(rare.rows_read, 4.0 + 12.0 * pulls + (4.0 * 0.01 + 1.0 * 2.0) / 2.0), "{rare:?}");
        // Many pulled authors: every page pulls.
        let many = home_work(push, pull, (30.0, 2.0, MEASURED_READER_FOLLOWS), 2.0);
        assert!(close(many.rows_read, 16.0 + (4.0 * 30.0 + 2.0) / 2.0), "{many:?}");
        // The reader's edges are read on every page, 1.5 rows a follow: 200 follows read
        // 1.5 x 182 more rows of its own than the measured reader's 18.
        let big = home_work(push, pull, (0.0, 2.0, 200.0), 2.0);
        assert!(close(big.rows_read - none.rows_read, 1.5 * 182.0), "{big:?}");
    }

    #[test]
    fn a_cron_share_raises_its_figure_on_its_own_database_so_the_control_database_does_not_grow() {
        // The table's control share (4 databases) carried the 3 other shares' raises; now each
        // share raises on its own database (a statement, a row read and a row written).
        let raised = Work { statements: 30.0, rows_read: 60.0, rows_written: 5.0 };
        assert_eq!(cron_control(raised), Work { statements: 27.0, rows_read: 57.0, rows_written: 2.0 });
        assert_eq!(cron_share(raised, 4.0), Work { statements: 31.0, rows_read: 61.0, rows_written: 6.0 });
        // A pass every 10 s on 10,000 databases: the control database carries the same as on
        // 16 (it was a statement per database per 10 s, over its headroom past about 5,000).
        let mut w = small();
        w.feed_reads_per_s = 5_000.0;
        w.cron_passes_per_s = 0.1;
        let (c, policy, prices) = (costs(), Policy::default(), Prices::default());
        let limits = Limits::default();
        let verdict = recommend(&c, &w, &policy, &limits, &prices);
        assert_eq!(verdict.why_not, None, "some P fits");
        let p = verdict.plan.databases;
        assert!(fits(&plan(&c, &w, &policy, &limits, &prices, p - 1.0), &limits).is_err());
        let control = |p: f64| {
            let plan = plan(&c, &w, &policy, &limits, &prices, p);
            plan.control_shares
                .iter()
                .find(|s| s.operation == "cron pass")
                .map_or(0.0, |s| s.statements_per_s)
        };
        assert!(close(control(16.0), control(10_000.0)), "{} vs {}", control(16.0), control(10_000.0));
        let many = plan(&c, &w, &policy, &limits, &prices, 10_000.0);
        assert!(
            !fits(&many, &limits).is_err_and(|why| why.contains("control")),
            "{:?}",
            fits(&many, &limits)
        );
    }

    #[test]
    fn the_cron_recounts_a_celebritys_followers_when_its_slice_of_users_reaches_it() {
        // 1,000 users on 2 databases: 500 each, all checked every pass (a pass a minute); a
        // 1,000-follower author's followers read at 2.5 rows each.
        let w = small();
        assert!(close(cron_recount(&w, 1_000.0, 2.0).rows_read, 1_000.0 * 2.5 / 60.0));
        // 10M users on 1,000 databases: 10,000 each, a user checked every 20 passes.
        let big = Workload { users: 1e7, ..small() };
        assert!(close(cron_recount(&big, 1e6, 1_000.0).rows_read, 1e6 * 2.5 / 20.0 / 60.0));
        // On the celebrity's database, beside its even share.
        let w = Workload { celebrities: vec![Celebrities { count: 1.0, followers: 1_000.0 }], ..small() };
        let p = plan(&costs(), &w, &Policy::default(), &Limits::default(), &Prices::default(), 2.0);
        let recount = p.celebrity_shares.iter().any(|s| s.operation == "the cron recounting its followers");
        assert!(recount, "{:?}", p.celebrity_shares);
        assert!(p.celebrity.work.rows_read - p.typical.work.rows_read >= 1_000.0 * 2.5 / 60.0 - 1e-9);
    }

    #[test]
    fn the_databases_beyond_the_included_100000_are_billed() {
        let p =
            plan(&costs(), &small(), &Policy::default(), &Limits::default(), &Prices::default(), 100_010.0);
        let line = p.bill.iter().find(|l| l.item.starts_with("D1 databases")).unwrap();
        assert!(close(line.usd, 10.0 * 0.10), "{line:?}");
        // The cron's invocation sends a message per database, 100 to a send, plus its own
        // control statements (30 here): 1,001 + 30.
        assert!(close(p.cron_subrequests, 1_001.0 + 30.0), "{}", p.cron_subrequests);
    }

    #[test]
    fn pull_mode_pulls_every_follow_and_writes_only_the_authors_own_windows() {
        let mut w = small();
        w.mode = Mode::Pull;
        let plan = plan(&costs(), &w, &Policy::default(), &Limits::default(), &Prices::default(), 8.0);
        assert!(close(plan.graph.pulled_per_reader, 10.0));
        // A post's only window write: its author's own (1 post/s, every author holds a window).
        assert!(close(plan.window_writes_per_s, 1.0));
        assert!(close(plan.databases_touched_per_page, 1.0 + 7.0 * (1.0 - (7.0_f64 / 8.0).powf(20.0))));
    }

    /// #40: the recount reads the counters a change marked, and every counted row once a week.
    #[test]
    fn the_recount_reads_what_changed_and_a_weekly_sweep() {
        let w = Workload { follows_per_s: 1.0, ..small() };
        let before = recount_rows_per_s(&w, &Policy { before_40: true, ..Policy::default() }, 2.0);
        assert!(close(before.rows_read, 1_000.0 / 60.0 * 25.0), "{before:?}");
        // A follow marks both ends: 2 users' 25 rows each; the sweep: a user a database a pass.
        let after = recount_rows_per_s(&w, &Policy::default(), 2.0);
        let sweep = 2.0 / 60.0 * 25.0;
        assert!(close(after.rows_read, 50.0 + sweep), "{after:?}");
    }

    /// #40: a page calls one digest, whatever the hot authors it follows; a post of a hot author
    /// is written to every digest.
    #[test]
    fn a_page_calls_one_digest_and_a_hot_post_writes_each() {
        let c = costs();
        let (w, per_author) = one_hot_author();
        let policy = Policy { before_40: false, ..per_author };
        let hot = hot_authors(&c, &w, &policy);
        // Every reader follows the one hot author (1 per read): every read calls a digest (not
        // the Poisson chance at the mean, 1 - e^-1: the simulation's pages all called one);
        // 10 requests/s on the 2 digests at least.
        let per_read = 1.0;
        assert!(close(hot.calls_per_read(), per_read), "{hot:?}");
        assert!(close(hot.replicas, 2.0) && close(hot.hottest_replica_rps, 10.0 * per_read / 2.0));
        assert!(close(hot.writes_per_s, 2.0), "{hot:?}");
        // 99,500 digest reads a second: 199 digests at 500/s each.
        let busy = Workload { feed_reads_per_s: 99_500.0 / per_read, ..w };
        let hot = hot_authors(&c, &busy, &policy);
        assert!(close(hot.replicas, 199.0) && close(hot.hottest_replica_rps, 500.0), "{hot:?}");
    }

    /// #40: a page-1 read writes the reader's activity once a day; a like writes its post's
    /// group row instead of its own notification and no repair mark; the consumer's figure
    /// upserts write a row each.
    #[test]
    fn activity_is_written_once_a_day_and_a_like_updates_its_group() {
        let mut measured = costs();
        measured.window.page_read = Work { statements: 4.0, rows_read: 4.0, rows_written: 1.0 };
        measured.like.other = Work { statements: 7.0, rows_read: 27.0, rows_written: 15.0 };
        measured.bytes.like = 562.0;
        // 5 likes a post: 4 of 5 go into an existing group.
        let w = Workload { likes_per_s: 5.0, ..small() };
        measured.consumer_flush = Work { statements: 13.0, ..Work::default() };
        // The table's chunk: the event, the post and the page read apart, a record of 3.
        measured.fanout_chunk.home = Work { statements: 6.0, rows_read: 8.0, rows_written: 3.0 };
        // 10 reads/s by 1,000 daily readers: 864 reads a reader a day, one of them writes.
        let c = design_costs(&measured, &w, &Policy::default());
        assert!(close(c.window.page_read.rows_written, 1.0 / 864.0), "{:?}", c.window);
        // And its group commit writes one figure row, not three, and no repair mark on the
        // post (2 rows, a statement), which the repair's 11 reads of its row stand in for.
        assert!(close(c.like.other.rows_written, 15.0 - 4.0 * 0.8 - 2.0 - 2.0), "{:?}", c.like);
        assert!(close(c.like.other.statements, 7.0 + 1.0 - 2.0 - 1.0));
        assert!(close(c.like.other.rows_read, 27.0 + 15.8 + 11.0));
        assert!(close(c.bytes.like, 562.0 - 300.0 * 0.8 + 9.0));
        // The chunk reads once and records once; its two counts go with the batch's flush.
        assert!(close(c.fanout_chunk.home.statements, 2.0) && close(c.fanout_chunk.home.rows_written, 1.0));
        assert!(close(c.consumer_flush.rows_written, 15.0) && close(c.consumer_flush.statements, 15.0));
        // A segment's chunk records 1 in 4 of them.
        assert!(close(segment_chunk_statements(&c, &Policy::default()), 1.25));
        let old = design_costs(&measured, &w, &Policy { before_40: true, ..Policy::default() });
        assert!(close(old.window.page_read.rows_written, 1.0) && close(old.like.other.rows_written, 15.0));
        assert!(close(old.consumer_flush.rows_written, 13.0), "a correction, before #40 too");
        assert!(close(old.fanout_chunk.home.statements, 6.0));
    }

    /// #40: a consumer isolate writes its counters at most every 10 s: at most one flush a busy
    /// consumer every 10 s, never more than one a batch.
    #[test]
    fn the_consumers_counters_are_written_every_ten_seconds_not_every_batch() {
        let c = costs();
        let limits = Limits::default();
        let policy = Policy::default();
        let w = small();
        let after = plan(&c, &w, &policy, &limits, &Prices::default(), 4.0);
        let before = plan(&c, &w, &Policy { before_40: true, ..policy }, &limits, &Prices::default(), 4.0);
        let batches = before.queue_messages_per_s / c.consumer_batch;
        assert!(close(before.figure_flushes_per_s, batches), "{}", before.figure_flushes_per_s);
        let busy = after.consumers_busy.max(1.0);
        assert!(close(after.figure_flushes_per_s, batches.min(busy / CONSUMER_FLUSH_SECONDS)));
        assert!(after.figure_flushes_per_s < before.figure_flushes_per_s);
    }

    /// #40: one script binds every database while they fit in a data script's share; beyond,
    /// data scripts of 4,000 behind the front's service bindings.
    #[test]
    fn databases_beyond_one_scripts_share_take_data_scripts() {
        let policy = Policy::default();
        assert_eq!(scripts(3_000.0, &policy), (1.0, 3_000.0 + FRONT_FIXED_BINDINGS));
        assert_eq!(scripts(9_409.0, &policy), (4.0, 4_000.0));
        let small_scripts = Policy { databases_per_script: 2.0, ..policy };
        assert_eq!(scripts(4.0, &small_scripts), (3.0, 2.0_f64.max(2.0 + FRONT_FIXED_BINDINGS)));
    }
}
