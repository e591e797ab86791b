//! Fixed number and date formatting.
//!
//! Reports are diffed, so every number goes through here: a fixed number of decimals, SI
//! prefixes chosen from the value alone, dates in UTC. Nothing reads the clock or the locale.

/// A rate in bit/s with an SI prefix: `"94.12 Mbit/s"`.
pub fn rate(bps: f64) -> String {
    let (v, unit) = scale(bps, "bit/s");
    format!("{v:.2} {unit}")
}

/// A range of rates, `"90.00 Mbit/s - 95.00 Mbit/s"` (each edge with its own prefix).
pub fn rate_range(lo: f64, hi: f64) -> String {
    format!("{} - {}", rate(lo), rate(hi))
}

/// A packet rate: `"8.33 kpkt/s"`.
pub fn pkt_rate(pps: f64) -> String {
    let (v, unit) = scale(pps, "pkt/s");
    format!("{v:.2} {unit}")
}

/// Bytes with a binary-free SI prefix (as iperf3's MBytes are 2^20, sonde's report uses 10^6
/// to match the rates): `"12.61 MB"`.
pub fn bytes(b: u64) -> String {
    let (v, unit) = scale(b as f64, "B");
    if unit == "B" {
        format!("{b} B")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// The value divided by its SI prefix, and the unit with the prefix.
pub fn scale(v: f64, unit: &str) -> (f64, String) {
    let (div, prefix) = prefix_for(v.abs());
    (v / div, format!("{prefix}{unit}"))
}

/// The divisor and prefix for a magnitude.
pub fn prefix_for(mag: f64) -> (f64, &'static str) {
    if !mag.is_finite() || mag < 1e3 {
        (1.0, "")
    } else if mag < 1e6 {
        (1e3, "k")
    } else if mag < 1e9 {
        (1e6, "M")
    } else if mag < 1e12 {
        (1e9, "G")
    } else {
        (1e12, "T")
    }
}

/// A percentage with two decimals: `"5.00 %"`.
pub fn percent(p: f64) -> String {
    format!("{p:.2} %")
}

/// Milliseconds, three decimals: `"20.125 ms"`.
pub fn ms(v: f64) -> String {
    format!("{v:.3} ms")
}

/// Seconds, two decimals: `"10.02 s"`.
pub fn secs(v: f64) -> String {
    format!("{v:.2} s")
}

/// A number with the given decimals, never `-0.00`.
pub fn num(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_owned()
    } else {
        s
    }
}

/// Unix seconds as `"2026-11-22 00:27:22 UTC"`.
pub fn date(unix: f64) -> String {
    if !unix.is_finite() {
        return "unknown".into();
    }
    let secs = unix.floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = sonde_stats::calendar::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A duration in seconds as `"1 h 02 min 03 s"`, `"2 min 05 s"` or `"12.34 s"`.
pub fn duration(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "unknown".into();
    }
    if s < 60.0 {
        return secs(s);
    }
    let total = s.round() as u64;
    let (h, m, sec) = (total / 3600, total % 3600 / 60, total % 60);
    if h > 0 {
        format!("{h} h {m:02} min {sec:02} s")
    } else {
        format!("{m} min {sec:02} s")
    }
}

/// `Some(v)` formatted, or an en dash for a missing value.
pub fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "–".to_owned(), f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(rate(94_123_456.0), "94.12 Mbit/s");
        assert_eq!(rate(999.0), "999.00 bit/s");
        assert_eq!(rate(1.5e9), "1.50 Gbit/s");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(12_610_632), "12.61 MB");
        assert_eq!(pkt_rate(8333.0), "8.33 kpkt/s");
        assert_eq!(num(-0.0001, 2), "0.00");
        assert_eq!(num(-1.5, 1), "-1.5");
    }

    #[test]
    fn dates_and_durations() {
        assert_eq!(date(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(date(1_795_307_242.9), "2026-11-22 00:27:22 UTC");
        assert_eq!(date(951_782_400.0), "2000-02-29 00:00:00 UTC");
        assert_eq!(duration(12.345), "12.35 s");
        assert_eq!(duration(125.0), "2 min 05 s");
        assert_eq!(duration(3723.0), "1 h 02 min 03 s");
        assert_eq!(duration(f64::NAN), "unknown");
    }
}
