//! The simulation's predictions (`edgefeed_capacity::simulation::predict`), pinned on a
//! hand-worked case: the discovery refresh as the simulation drives it.

use edgefeed_capacity::model::*;
use edgefeed_capacity::simulation::{predict, predict_run, DATABASES};

fn costs() -> Costs {
    Costs { timelines: TimelineCosts { measured: true, ..TimelineCosts::default() }, ..Costs::default() }
}

fn quiet() -> Workload {
    Workload {
        users: 1_600.0,
        daily_active: 1.0,
        weekly_active: 1.0,
        window_holders: 1.0,
        follows_per_user: 2.0,
        celebrities: Vec::new(),
        celebrity_posts_per_day: 0.0,
        posts_per_s: 0.0,
        feed_reads_per_s: 0.0,
        page_n_share: 0.0,
        likes_per_s: 0.0,
        comments_per_s: 0.0,
        follows_per_s: 0.0,
        live_share: 0.0,
        peak_to_mean: 1.0,
        retention_days: 0.0,
        cron_passes_per_s: 0.0,
        paths: PathMix::default(),
        ..Workload::headline(Mode::Push)
    }
}

/// A phase without the cron refreshes nothing, whatever it posts: the model's steady refresh
/// (a day of public posts at 160 a second, read every 600 s: 2 x 160 x 86,400 / 16 / 600 = 2,880
/// rows a database a second, plus the users' 1,600 / 16 + 20 = 120 / 600 = 0.2) is taken out.
#[test]
fn a_phase_without_the_cron_refreshes_no_ranking() {
    let w = Workload { posts_per_s: 160.0, ..quiet() };
    let p = DATABASES as f64;
    let plan = plan(
        &costs(),
        &Workload { timelines: TimelineMix::default(), ..w.clone() },
        &Policy {
            push_max_followers: 500.0,
            hot_replicas: true,
            hot_followers: 1_000.0,
            ..Policy::default()
        },
        &Limits::default(),
        &Prices::default(),
        p,
    );
    let predicted = predict(&costs(), &w, 1.0);
    let steady_rows = (2.0 * 160.0 * 86_400.0 / p + 1_600.0 / p + 20.0) / 600.0;
    assert!((plan.typical.work.rows_read - predicted.typical.rows_read - steady_rows).abs() < 1e-6);
    assert!(predicted.typical.rows_read.abs() < 1e-6, "{:?}", predicted.typical);
}

/// The admin pass the simulation's cron phase sends refreshes every database at once, every
/// pass: 3 passes on 16 databases replace 16 x 3 rankings on the control database, each a
/// delete and an insert of up to 100 rows (200 rows written, 2 statements): 9,600 rows and
/// 96 statements; each database's own refresh reads its users (1,600 / 16 + 20 = 120 rows,
/// 6 statements) per pass: 360 rows and 18 statements.
#[test]
fn the_admin_pass_refreshes_every_database_each_pass() {
    let predicted = predict(&costs(), &Workload { cron_passes_per_s: 3.0, ..quiet() }, 1.0);
    let unforced = predict(&costs(), &Workload { cron_passes_per_s: 0.0, ..quiet() }, 1.0);
    // The control database's own part (beyond its even share, which has its own refresh).
    let on_control = |p: &edgefeed_capacity::simulation::Predicted| p.control.plus(p.typical.scale(-1.0));
    let control = on_control(&predicted).plus(on_control(&unforced).scale(-1.0));
    assert!((control.rows_written - 9_600.0).abs() < 1e-6, "{control:?}");
    assert!((control.statements - 96.0).abs() < 1e-6, "{control:?}");
    // Each database's own refreshes against the model's plan of the same passes, which has the
    // steady refresh (120 rows and 6 statements every 600 s) instead.
    let w = Workload { cron_passes_per_s: 3.0, ..quiet() };
    let policy =
        Policy { push_max_followers: 500.0, hot_replicas: true, hot_followers: 1_000.0, ..Policy::default() };
    let steady = plan(&costs(), &w, &policy, &Limits::default(), &Prices::default(), DATABASES as f64);
    let own = predicted.typical.plus(steady.typical.work.scale(-1.0));
    assert!((own.rows_read - (360.0 - 120.0 / 600.0)).abs() < 1e-6, "{own:?}");
    // The stacks flush their figures every consumer batch, not as the plan's steady flushes
    // (the table here has no flush of its own, so only the plan's are taken off).
    let steady_flushes = steady
        .typical_shares
        .iter()
        .find(|s| s.operation == CONSUMER_FLUSH_SHARE)
        .map_or(0.0, |s| s.statements_per_s);
    assert!((own.statements + steady_flushes - (18.0 - 6.0 / 600.0)).abs() < 1e-6, "{own:?}");
}

/// The chance a page calls a digest is over the hot authors, not the Poisson chance at the
/// mean: 1,000 users, a celebrity half of them follow (no other hot author) leaves half the
/// pages without a call (the Poisson chance at 0.5, 1 - e^-0.5 = 0.39, was below); one every
/// user follows leaves none (the simulation: 2.0 object calls a page, a window and a digest).
#[test]
fn a_page_calls_a_digest_as_often_as_its_reader_follows_a_hot_author() {
    let w = |followers: f64| Workload {
        users: 1_000.0,
        feed_reads_per_s: 100.0,
        celebrities: vec![Celebrities { count: 1.0, followers }],
        celebrity_posts_per_day: 10.0,
        ..quiet()
    };
    let policy = Policy { hot_replicas: true, hot_followers: 1e9, ..Policy::default() };
    let c = Costs { replica: ReplicaCosts { read_calls: 1.0, ..ReplicaCosts::default() }, ..costs() };
    let half = hot_authors(&c, &w(500.0), &policy);
    assert!((half.calls_per_read() - 0.5).abs() < 1e-9, "{half:?}");
    let all = hot_authors(&c, &w(1_000.0), &policy);
    assert!((all.calls_per_read() - 1.0).abs() < 1e-9, "{all:?}");
}

/// The simulation's pages (2026-12-05) ran 6 statements at home with 0, 1, 2 or 3 of the
/// page's authors there alike: the reader's database runs the table's page statements (5 at
/// home in the table below), whatever lives there, beside 3 on each other database touched.
/// 100 readers following 10 authors each on 16 databases, no hot author: each other database
/// holds one of the 10 with 1 - (15/16)^10, so a page touches 15 x that of them.
#[test]
fn a_page_runs_the_tables_statements_at_home_whoever_lives_there() {
    let page = |home: f64, other: f64| OpCost {
        home: Work { statements: home, ..Work::default() },
        other: Work { statements: other, ..Work::default() },
        ..OpCost::default()
    };
    let c = Costs { feed_push_page1: page(5.0, 3.0), feed_push_page_n: page(5.0, 3.0), ..costs() };
    let w = Workload { users: 100.0, follows_per_user: 10.0, feed_reads_per_s: 1.0, ..quiet() };
    let p = plan(&c, &w, &Policy::default(), &Limits::default(), &Prices::default(), DATABASES as f64);
    let others = 15.0 * (1.0 - (15.0_f64 / 16.0).powi(10));
    assert!((p.databases_touched_per_page - (1.0 + others)).abs() < 1e-9, "{}", p.databases_touched_per_page);
    assert!((p.page_d1_queries - (5.0 + 3.0 * others)).abs() < 1e-9, "{}", p.page_d1_queries);
}

/// Open sockets cost their leases in every mode (the control database's once an hour, the
/// home row's every 16 minutes); outside push mode they also mark their pulled edges once per mark
/// refresh, and a delivery reads its author's marks on the author's database, with nothing on
/// the control database per status (the old live page read every open socket's lease there
/// for every status: 1 statement a status with no socket open, as the simulation measured).
/// 12,000 sockets pulling 30 authors each over 16 databases, 3 statuses a second.
#[test]
fn a_delivery_reads_its_authors_live_marks_and_no_open_sockets_lease() {
    let paths = PathMix { boost_share: 0.25, direct_share: 0.25, ..PathMix::default() };
    let w = Workload {
        users: 100_000.0,
        live_share: 0.12,
        posts_per_s: 4.0,
        paths,
        mode: Mode::Hybrid,
        ..quiet()
    };
    let g = Graph { pulled_per_reader: 30.0, ..Graph::default() };
    let live = live_work(&w, &g, 16.0);
    let close = |a: Work, b: Work| {
        (a.statements - b.statements).abs()
            + (a.rows_read - b.rows_read).abs()
            + (a.rows_written - b.rows_written).abs()
            < 1e-6
    };
    let work =
        |statements: f64, rows_read: f64, rows_written: f64| Work { statements, rows_read, rows_written };
    // Leases: 12,000 sockets, one write an hour on the control database (the row, its index).
    let hourly = 12_000.0 / 3_360.0;
    assert!(close(live.control, work(hourly, hourly, 2.0 * hourly)), "{live:?}");
    // Marks every 16 minutes (12.5 sockets a second), each its home row, a read of its follows
    // and an upsert on each of the 16 databases its 30 authors touch.
    let touched = 16.0 * (1.0 - (15.0_f64 / 16.0).powf(30.0));
    let sockets = work(12.5 * (2.0 + touched), 12.5 * 61.0, 12.5 * 31.0);
    assert!(close(live.sockets, sockets), "{live:?}");
    // 3 statuses a second (2 originals, 1 boost), each reading 3.6 marks (12,000 x 30 marks
    // over 100,000 authors) with an edge probe each, and the author's rates.
    assert!(close(live.authors, work(6.0, 3.0 * (7.2 + 1.0), 0.0)), "{live:?}");
    assert!((live.deliveries - 10.8).abs() < 1e-9 && live.messages == 0.0, "{live:?}");
    let push = live_work(&Workload { mode: Mode::Push, ..w.clone() }, &g, 16.0);
    assert_eq!((push.control, push.sockets), (live.control, work(12.5, 12.5, 12.5)), "{push:?}");
    assert_eq!((push.authors, push.deliveries), (Work::default(), 0.0), "{push:?}");
    let pull = live_work(&Workload { mode: Mode::Pull, ..w }, &g, 16.0);
    assert!(close(pull.authors, work(3.0, 21.6, 0.0)), "{pull:?}");
}

/// With `PROFILE_IO` every consumer batch of the simulated stacks flushes its figures on a
/// database picked at random: 32 posts a second, one chunk (one message) each (no author near
/// 500 followers), run 2 a batch (as measured: the run saved its batches): 16 batches of 13
/// statements over 16 databases, 13 a database, whatever the plan's steady flushes
/// (production's, at most one an isolate every few seconds) charged. Not measured: 3 a batch.
#[test]
fn every_profiled_consumer_batch_flushes_its_figures_somewhere() {
    let with_flush = |statements: f64| Costs {
        consumer_flush: Work { statements, ..Work::default() },
        fanout_chunk: OpCost { queue_messages: 1.0, ..OpCost::default() },
        ..costs()
    };
    let w = Workload { posts_per_s: 32.0, ..quiet() };
    let policy =
        Policy { push_max_followers: 500.0, hot_replicas: true, hot_followers: 1_000.0, ..Policy::default() };
    let steady =
        plan(&with_flush(13.0), &w, &policy, &Limits::default(), &Prices::default(), DATABASES as f64);
    assert!((steady.queue_messages_per_s - 32.0).abs() < 1e-9, "{}", steady.queue_messages_per_s);
    let flushed = predict_run(&with_flush(13.0), &w, 1.0, Some(16.0));
    let none = predict_run(&with_flush(0.0), &w, 1.0, Some(16.0));
    let extra = flushed.typical.statements - none.typical.statements;
    assert!((extra - 13.0).abs() < 1e-9, "{extra}");
    assert!((flushed.control.statements - none.control.statements - 13.0).abs() < 1e-9);
    let estimated = predict(&with_flush(13.0), &w, 1.0).typical.statements - none.typical.statements;
    assert!((estimated - 13.0 * 32.0 / 3.0 / 16.0).abs() < 1e-9, "{estimated}");
}
