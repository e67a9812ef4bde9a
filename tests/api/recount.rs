//! The counters' repair figures at the suite's data size (issue 40 item 7), for the capacity
//! model: what one pass read for the users marked since the last pass, and what the sweep read
//! per user it recounted. The suite's server sweeps 500 users a database per pass, which is
//! what the whole repair read before the change marks; production sweeps `COUNT_SWEEP_USERS`
//! (1). Prints the figures (run with `--nocapture`).

use crate::common::*;

#[test]
fn a_pass_reads_the_marked_users_rows_and_the_sweeps_slice() {
    let author = register("recount_author");
    for i in 0..5 {
        author.publish(&format!("counted {i}"), "public");
    }
    let report = admin("POST", "/v1/admin/reconcile", None).expect(200);
    let counts = &report["user_counts"];
    let n = |k: &str| counts[k].as_u64().unwrap_or_else(|| panic!("{k} in {counts}"));
    let (marked, marked_read) = (n("marked_users"), n("marked_rows_read"));
    let (swept, swept_read) = (n("swept_users"), n("swept_rows_read"));
    assert!(marked >= 1, "the author's posts marked them: {counts}");
    assert!(swept >= 1, "the suite's sweep ran: {counts}");
    assert_eq!(n("users_checked"), marked + swept, "{counts}");
    let per = |read: u64, users: u64| read as f64 / users.max(1) as f64;
    println!(
        "recount pass on {} databases: {marked} marked users read {marked_read} rows ({:.1} a user); \
         the sweep's {swept} users read {swept_read} rows ({:.1} a user)",
        report["databases"],
        per(marked_read, marked),
        per(swept_read, swept)
    );
}
