//! Reader activity at day granularity (issue 40 item 5): a page-1 read writes the reader's
//! activity row in their window object only when a report is due (the first read, a read a
//! day after the last report, a read rate that moved by 1.5x), seen through `Server-Timing`'s
//! `window rows written`.

use serde_json::json;

use crate::common::*;

fn page_one_writes(reader: &User) -> u32 {
    let response = reader.get("/v1/feed?limit=5");
    assert_eq!(response.status, 200, "{}", response.body);
    response.timing("window rows written")
}

#[test]
fn a_page_one_read_writes_the_readers_activity_only_when_a_report_is_due() {
    let author = register("act_author");
    let reader = register("act_reader");
    reader.follow(&author);
    author.publish("something to read", "public");
    wait_drained(&author);
    // Back to back, the rate grows by 1/7 a read: reports (and writes) at reads 1, 2, 4, 7
    // and 11 (each a move past 1.5x the last report), none after until 17.
    let writes: Vec<u32> = (0..16).map(|_| page_one_writes(&reader)).collect();
    eprintln!("window rows written by 16 page-1 reads back to back: {writes:?}");
    assert!(writes[0] >= 1, "the first read records the reader: {writes:?}");
    // Which reads move the rate past 1.5x depends on their spacing in time (a loaded machine
    // spaces them unevenly), so the count is bounded, not the positions: a write a read before.
    let writing = writes.iter().filter(|&&w| w > 0).count();
    assert!(writing <= 6, "only the reads that report write: {writes:?}");
    assert!(writes[8..].iter().filter(|&&w| w > 0).count() <= 2, "later reads rarely write: {writes:?}");
    // A day later (the record aged by the test hook), the next read writes (and reports) again.
    admin("POST", "/v1/admin/test/age_reader", Some(&json!({ "reader_id": reader.id, "days": 1 })))
        .expect(200);
    assert_eq!(page_one_writes(&reader), 1, "the first read of a new day writes its record");
    assert_eq!(page_one_writes(&reader), 0, "the second read that day writes nothing");
}
