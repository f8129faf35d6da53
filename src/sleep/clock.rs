//! Times as the sleep cycle and `somnus health` read them: an instant from
//! any RFC 3339 text (or a date, or a time without an offset, read as UTC),
//! compared, shifted and measured as instants, never in string order.

/// A time read as an instant: RFC 3339 with any offset, or a date or a
/// time without an offset, read as UTC. Every time the cycle and `somnus
/// health` compare goes through here, never through string order.
pub fn instant(at: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let at = at.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(at) {
        return Some(t);
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(at, f) {
            return Some(t.and_utc().fixed_offset());
        }
    }
    chrono::NaiveDate::parse_from_str(at, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().fixed_offset())
}

/// `a` is strictly before `b`, both read as instants; None when either is
/// not a time.
pub fn before(a: &str, b: &str) -> Option<bool> {
    Some(instant(a)? < instant(b)?)
}

/// `at` moved by `days` (RFC 3339 in UTC, seconds).
pub fn shift(at: &str, days: i64) -> String {
    instant(at)
        .map(|t| {
            (t + chrono::Duration::days(days))
                .to_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        })
        .unwrap_or_else(|| at.to_string())
}

/// A string bound for a coarse KIP prefilter on times (string order): a
/// day wider than `at` on the side given, so that times written with any
/// offset (±14 h at most) are all read; the exact test is `before`.
pub fn widened(at: &str, later: bool) -> String {
    shift(at, if later { 1 } else { -1 })
}

/// Days from `from` to `to`, read as instants; None if either is not a time.
pub fn days_between(from: &str, to: &str) -> Option<f64> {
    let (a, b) = (instant(from)?, instant(to)?);
    Some((b - a).num_milliseconds() as f64 / 86_400_000.0)
}
