//! The reconciliation cron's part of the load: each database's share, the control database's,
//! and the recount of a celebrity's followers.

use super::costs::Work;
use super::workload::Workload;

/// The databases the cron table was measured on (`capacity_runs/measure.rs`: 4).
pub const MEASURED_CRON_DATABASES: f64 = 4.0;
/// Parts of a reconciliation share that probe other databases, a statement each per database
/// probed (the graph slice and the orphan-claim check), at most this many others
/// (`domain/shard.rs::prefix_within_databases`, 16).
pub const CRON_PROBING_PARTS: f64 = 2.0;
pub const CRON_PROBED_DATABASES: f64 = 16.0;

/// One database's share of a cron pass on `databases` databases: the measured share, with its
/// probes of the other databases counted for this many of them (the table saw 3), and the
/// raise of its statement count into its own database's maximum (`CRON_RAISE`; the table was
/// measured when that raise went to the control database).
pub fn cron_share(measured: Work, databases: f64) -> Work {
    let probed = |p: f64| (p - 1.0).clamp(0.0, CRON_PROBED_DATABASES);
    let extra = CRON_PROBING_PARTS * (probed(databases) - probed(MEASURED_CRON_DATABASES));
    Work { statements: (measured.statements + extra).max(0.0), ..measured }.plus(CRON_RAISE)
}

/// What every cron share writes beside its figures: its statement count raised into the pass's
/// maximum (`services/reconcile.rs::database_share`, one upsert), on its own database since
/// the simulation found it on the control database (one statement per database per pass
/// there: the one term that grew with the number of databases, about 150/s at 9,000).
pub const CRON_RAISE: Work = Work { statements: 1.0, rows_read: 1.0, rows_written: 1.0 };

/// The control database's part of one cron pass: the measured one (4 databases) without the
/// raises of the 3 other databases' shares, which it carried when the table was measured. It no
/// longer grows with the databases.
pub fn cron_control(measured: Work) -> Work {
    let others = CRON_RAISE.scale(MEASURED_CRON_DATABASES - 1.0);
    Work {
        statements: (measured.statements - others.statements).max(0.0),
        rows_read: (measured.rows_read - others.rows_read).max(0.0),
        rows_written: (measured.rows_written - others.rows_written).max(0.0),
    }
}

/// Users whose counters one database's cron share checks a pass (`services/reconcile.rs`
/// `USERS_PER_PASS`): a user is visited every `users per database / 500` passes.
pub const CRON_USERS_PER_PASS: f64 = 500.0;
/// Rows the cron's counter check reads per follower of a user it visits (it recounts the
/// followers: `store/counters.rs`). Measured by the simulation: its hot author's database read
/// 16.0k (push) and 13.8k (hybrid) rows more than a typical one over 3 passes, for 2,000
/// followers: 2.67 and 2.31 a follower.
pub const CRON_ROWS_PER_FOLLOWER: f64 = 2.5;

/// The cron's recount of an author's `followers` on its database, rows read per second.
pub fn cron_recount(w: &Workload, followers: f64, p: f64) -> Work {
    let visits = (CRON_USERS_PER_PASS / (w.users / p.max(1.0)).max(1.0)).min(1.0) * w.cron_passes_per_s;
    Work { rows_read: followers * CRON_ROWS_PER_FOLLOWER * visits, ..Work::default() }
}
