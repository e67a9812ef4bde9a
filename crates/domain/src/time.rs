//! Millisecond timestamps <-> RFC 3339 UTC text (`2026-11-30T08:15:02.123Z`).
//!
//! Hand-written instead of pulling a date crate: the API only ever emits UTC with
//! milliseconds, and only parses the handful of RFC 3339 shapes an import might carry.

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// The earliest and latest instants we accept (years 1970..=9999), so that formatting is
/// always four-digit years and ids/times stay far inside the 2^53 range.
pub const MIN_MILLIS: Millis = 0;
pub const MAX_MILLIS: Millis = 253_402_300_799_999;

/// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Formats as RFC 3339 UTC with exactly three fractional digits.
pub fn format_rfc3339(ms: Millis) -> String {
    let ms = ms.clamp(MIN_MILLIS, MAX_MILLIS);
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, mo, d) = civil_from_days(days);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Digits `text[from..from + len]` as a number; `None` unless they are all ASCII digits.
fn digits(text: &str, from: usize, len: usize) -> Option<i64> {
    let s = text.get(from..from + len)?;
    if !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An optional `.fraction` at `pos`: the milliseconds (extra digits truncated) and where the
/// text goes on. A dot without digits is malformed.
fn fraction(b: &[u8], mut pos: usize) -> Option<(i64, usize)> {
    if b.get(pos) != Some(&b'.') {
        return Some((0, pos));
    }
    pos += 1;
    let start = pos;
    let mut millis = 0i64;
    while pos < b.len() && b[pos].is_ascii_digit() {
        if pos - start < 3 {
            millis = millis * 10 + i64::from(b[pos] - b'0');
        }
        pos += 1;
    }
    let count = pos - start;
    if count == 0 {
        return None;
    }
    for _ in count..3 {
        millis *= 10;
    }
    Some((millis, pos))
}

/// The zone suffix: `Z` or `±HH:MM`, as minutes east of UTC.
fn offset_minutes(text: &str, pos: usize) -> Option<i64> {
    let rest = text.get(pos..)?;
    if rest == "Z" || rest == "z" {
        return Some(0);
    }
    let sign = match rest.as_bytes() {
        [b'+', _, _, b':', _, _] => 1,
        [b'-', _, _, b':', _, _] => -1,
        _ => return None,
    };
    let (oh, om) = (digits(text, pos + 1, 2)?, digits(text, pos + 4, 2)?);
    (oh <= 23 && om <= 59).then_some(sign * (oh * 60 + om))
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`. Fractions beyond milliseconds are
/// truncated. Returns `None` for anything else, including out-of-range fields.
pub fn parse_rfc3339(text: &str) -> Option<Millis> {
    let b = text.as_bytes();
    if b.len() < 20 || !text.is_ascii() {
        return None;
    }
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (digits(text, 0, 4)?, digits(text, 5, 2)?, digits(text, 8, 2)?);
    let (hour, minute, second) = (digits(text, 11, 2)?, digits(text, 14, 2)?, digits(text, 17, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let (millis, pos) = fraction(b, 19)?;
    let offset = offset_minutes(text, pos)?;
    let days = days_from_civil(year, month, day);
    let ms = ((days * 24 + hour) * 60 + minute - offset) * 60_000 + second * 1000 + millis;
    (MIN_MILLIS..=MAX_MILLIS).contains(&ms).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_epoch_and_known_instants() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(1_796_026_502_123), "2026-11-30T08:15:02.123Z");
        assert_eq!(format_rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn parse_round_trips_every_day_of_a_leap_cycle() {
        let mut ms = 946_684_800_000; // 2000-01-01
        for _ in 0..(366 * 4 + 3) {
            let text = format_rfc3339(ms + 45_296_789);
            assert_eq!(parse_rfc3339(&text), Some(ms + 45_296_789), "{text}");
            ms += 86_400_000;
        }
    }

    #[test]
    fn parses_offsets_and_fractions() {
        assert_eq!(parse_rfc3339("2026-11-30T09:15:02.123+01:00"), Some(1_796_026_502_123));
        assert_eq!(parse_rfc3339("2026-11-30T08:15:02Z"), Some(1_796_026_502_000));
        assert_eq!(parse_rfc3339("2026-11-30T08:15:02.1Z"), Some(1_796_026_502_100));
        assert_eq!(parse_rfc3339("2026-11-30T08:15:02.123456Z"), Some(1_796_026_502_123));
    }

    #[test]
    fn rejects_malformed_and_out_of_range() {
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30 08:15:02Z",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T08:15:02.Z",
            "2026-11-30T08:15:02",
            "2026-11-30T08:15:02+0100",
            "1969-12-31T23:59:59Z",
            "2026-11-30T08:15:02Zjunk",
            "２026-11-30T08:15:02Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
