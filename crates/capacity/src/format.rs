//! Number formats the printed reports share (`report.rs`, `paths_report.rs`).

pub(crate) fn si(x: f64) -> String {
    let a = x.abs();
    if a >= 1e12 {
        format!("{:.2}T", x / 1e12)
    } else if a >= 1e9 {
        format!("{:.2}G", x / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

pub(crate) fn usd(x: f64) -> String {
    if x < 0.0 {
        format!("-{}", usd(-x))
    } else if x >= 1000.0 {
        format!("${}", si(x))
    } else {
        format!("${x:.2}")
    }
}
