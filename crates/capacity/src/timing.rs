//! A request's storage figures from its `Server-Timing` header (`src/http/mod.rs` writes it):
//! D1 statements, rows read and written and round trips per database, object calls, queue
//! messages, and the durations.

use crate::model::Work;

/// Databases a header is read for (more are added when a header names them).
pub const DATABASES: usize = 4;

/// One request's storage figures, from its `Server-Timing` header.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    pub total_ms: f64,
    /// The slowest database's D1 milliseconds (its trips; the databases' run side by side).
    pub slowest_db_ms: f64,
    pub do_calls: f64,
    pub do_ms: f64,
    pub queue_messages: f64,
    pub subrequests: f64,
    /// Per database: its work and its round trips.
    pub per_db: Vec<(Work, f64)>,
}

/// The number just before `what` in `text` (`"3 statements"` -> 3).
fn number_before(text: &str, what: &str) -> f64 {
    let Some(end) = text.find(what) else { return 0.0 };
    let digits: String = text[..end].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
    digits.chars().rev().collect::<String>().parse().unwrap_or(0.0)
}

fn dur(part: &str) -> f64 {
    part.rsplit("dur=").next().and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

pub fn timing_of(header: &str) -> Timing {
    let mut t = Timing { per_db: vec![(Work::default(), 0.0); DATABASES], ..Timing::default() };
    let mut trips = 0.0;
    for part in header.split(", ") {
        let (name, rest) = part.split_once(';').unwrap_or((part, ""));
        match name {
            "total" => t.total_ms = dur(rest),
            "d1" => trips = number_before(rest, "round trips"),
            "do" => {
                t.do_calls = number_before(rest, "calls");
                t.do_ms = dur(rest);
            }
            "queue" => {
                t.queue_messages = number_before(rest, "messages");
                t.subrequests += number_before(rest, "sends");
            }
            _ => {
                let Some(index) = name.strip_prefix("d1-").and_then(|i| i.parse::<usize>().ok()) else {
                    continue;
                };
                if index >= t.per_db.len() {
                    t.per_db.resize(index + 1, (Work::default(), 0.0));
                }
                t.slowest_db_ms = t.slowest_db_ms.max(dur(rest));
                t.per_db[index] = (
                    Work {
                        statements: number_before(rest, "statements"),
                        rows_read: number_before(rest, "rows read"),
                        rows_written: number_before(rest, "rows written"),
                    },
                    number_before(rest, "round trips"),
                );
            }
        }
    }
    t.subrequests += trips + t.do_calls;
    t
}

#[cfg(test)]
mod tests {
    use super::timing_of;
    use crate::model::Work;

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
