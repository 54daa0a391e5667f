//! Timestamps as people read them, computed the same on server and browser
//! (so server-rendered and hydrated text agree byte for byte).
//!
//! The server renders times in UTC: it cannot know the watcher's time zone.
//! The browser, once hydrated, shows the same instant in its local time by
//! passing its UTC offset to [`format_local`]; everything else here is pure
//! calendar arithmetic, so both halves format identically.

/// The calendar date and wall-clock time of `secs` (Unix seconds, already
/// shifted to the zone wanted): `YYYY-MM-DD HH:MM`, with `:SS` if `seconds`.
fn format_clock(secs: i64, seconds: bool) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm), proleptic Gregorian.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut text = format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rem / 3_600,
        (rem % 3_600) / 60
    );
    if seconds {
        text.push_str(&format!(":{:02}", rem % 60));
    }
    text
}

/// Formats Unix seconds as `YYYY-MM-DD HH:MM UTC`.
pub fn format_utc(secs: i64) -> String {
    format!("{} UTC", format_clock(secs, false))
}

/// Formats Unix milliseconds as `YYYY-MM-DD HH:MM[:SS] UTC`: what the
/// server renders before the browser switches to local time.
pub fn format_utc_ms(ms: i64, seconds: bool) -> String {
    format!("{} UTC", format_clock(ms.div_euclid(1000), seconds))
}

/// Formats Unix milliseconds in a zone `offset_minutes` east of UTC (the
/// negation of JavaScript's `getTimezoneOffset()`) as
/// `YYYY-MM-DD HH:MM[:SS]`, without a zone: the watcher's own time.
pub fn format_local(ms: i64, offset_minutes: i64, seconds: bool) -> String {
    format_clock(ms.div_euclid(1000) + offset_minutes * 60, seconds)
}

/// The instant as an RFC 3339 UTC timestamp (`2026-11-18T11:06:40Z`), the
/// machine-readable `datetime` of a `<time>` element.
pub fn iso_utc_ms(ms: i64) -> String {
    format!(
        "{}Z",
        format_clock(ms.div_euclid(1000), true).replace(' ', "T")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_format_correctly() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_795_000_000), "2026-11-18 11:06 UTC");
        assert_eq!(format_utc(-60), "1969-12-31 23:59 UTC");
    }

    #[test]
    fn milliseconds_format_with_or_without_seconds() {
        assert_eq!(
            format_utc_ms(1_795_000_000_999, true),
            "2026-11-18 11:06:40 UTC"
        );
        assert_eq!(
            format_utc_ms(1_795_000_000_999, false),
            "2026-11-18 11:06 UTC"
        );
        assert_eq!(iso_utc_ms(1_795_000_000_999), "2026-11-18T11:06:40Z");
        assert_eq!(iso_utc_ms(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn local_time_shifts_by_the_offset_across_midnight() {
        let ms = 1_795_000_000_000;
        assert_eq!(format_local(ms, 0, true), "2026-11-18 11:06:40");
        assert_eq!(format_local(ms, 330, false), "2026-11-18 16:36");
        assert_eq!(format_local(ms, -12 * 60, false), "2026-11-17 23:06");
        assert_eq!(format_local(ms, 14 * 60, true), "2026-11-19 01:06:40");
    }
}
