//! Rendering for people: iperf3's table figures (`1.10 MBytes`, `942 Mbits/sec`, `-f`'s fixed
//! units) and a fixed Mbit/s for outputs whose figures are compared with each other.
//!
//! Each function has one job and its own spelling on purpose; a scenario file's canonical
//! spelling (`100mbit`), which must read back, lives with its parser in `scenario.rs`.

/// Renders a number with three significant digits as iperf3 does (`1.10`, `12.3`, `123`).
fn three_digits(v: f64) -> String {
    if v < 9.995 {
        format!("{v:.2}")
    } else if v < 99.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The rate units of iperf3's table, 1000 apart.
const BITS: [&str; 5] = [
    "bits/sec",
    "Kbits/sec",
    "Mbits/sec",
    "Gbits/sec",
    "Tbits/sec",
];

/// The byte-rate units of iperf3's `-f K` and `-f A`, 1024 apart.
const BYTES: [&str; 5] = [
    "Bytes/sec",
    "KBytes/sec",
    "MBytes/sec",
    "GBytes/sec",
    "TBytes/sec",
];

/// Divides `v` by `base` while it is at least `base` and a larger unit is left (of `units` in
/// all): the quotient and the index of its unit.
fn scale_down(mut v: f64, base: f64, units: usize) -> (f64, usize) {
    let mut unit = 0;
    while v >= base && unit + 1 < units {
        v /= base;
        unit += 1;
    }
    (v, unit)
}

/// A rate to render: negative and non-finite ones render as zero.
fn non_negative(bits_per_second: f64) -> f64 {
    if bits_per_second.is_finite() && bits_per_second > 0.0 {
        bits_per_second
    } else {
        0.0
    }
}

/// Renders a byte count like iperf3 (1024-based): `512 Bytes`, `12.3 KBytes`, `1.10 MBytes`,
/// `2.34 GBytes`, `TBytes` beyond.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KBytes", "MBytes", "GBytes", "TBytes"];
    if bytes < 1024 {
        return format!("{bytes} Bytes");
    }
    let (v, unit) = scale_down(bytes as f64 / 1024.0, 1024.0, UNITS.len());
    format!("{} {}", three_digits(v), UNITS[unit])
}

/// Renders a bit rate like iperf3 (1000-based, three significant digits): `0.00 bits/sec`,
/// `12.3 Kbits/sec`, `942 Mbits/sec`, `1.23 Gbits/sec`. Negative or non-finite input renders as
/// zero.
pub fn format_bitrate(bits_per_second: f64) -> String {
    let (v, unit) = scale_down(non_negative(bits_per_second), 1000.0, BITS.len());
    format!("{} {}", three_digits(v), BITS[unit])
}

/// Renders a bit rate in Mbit/s with two decimals whatever its size (`94.12 Mbit/s`,
/// `0.06 Mbit/s`): finer than iperf3's three significant digits, and one unit down a column,
/// for outputs whose figures are compared with each other (capacity's ±3 % check, the coded
/// transport's goodput against the wire).
pub fn format_mbit(bits_per_second: f64) -> String {
    format!("{:.2} Mbit/s", bits_per_second / 1e6)
}

/// The unit of rates in the human table (iperf3's `-f`): adaptive bits (the default), adaptive
/// bytes, or a fixed power of bits (1000-based, `k m g t`) or bytes (1024-based, `K M G T`).
/// Transfers stay in adaptive bytes whatever the choice, as in iperf3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateUnit {
    #[default]
    AdaptiveBits,
    AdaptiveBytes,
    /// Bits per second scaled by 1000^power (1 = Kbits/sec).
    Bits(u8),
    /// Bytes per second scaled by 1024^power (1 = KBytes/sec).
    Bytes(u8),
}

impl RateUnit {
    /// Parses iperf3's format letter: `a`/`A` adaptive, `k m g t` bits, `K M G T` bytes.
    pub fn parse(s: &str) -> Option<Self> {
        let power = |c: char| "kmgt".find(c.to_ascii_lowercase()).map(|i| i as u8 + 1);
        let mut chars = s.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return None;
        };
        match c {
            'a' => Some(Self::AdaptiveBits),
            'A' => Some(Self::AdaptiveBytes),
            c if c.is_ascii_lowercase() => power(c).map(Self::Bits),
            c => power(c).map(Self::Bytes),
        }
    }
}

/// Renders a bit rate in `unit` (see [`RateUnit`]), with iperf3's three significant digits.
pub fn format_rate_in(bits_per_second: f64, unit: RateUnit) -> String {
    let bps = non_negative(bits_per_second);
    let (v, name) = match unit {
        RateUnit::AdaptiveBits => return format_bitrate(bps),
        RateUnit::AdaptiveBytes => {
            let (v, power) = scale_down(bps / 8.0, 1024.0, BYTES.len());
            (v, BYTES[power])
        }
        RateUnit::Bits(p) => {
            let p = usize::from(p).min(BITS.len() - 1);
            (bps / 1000f64.powi(p as i32), BITS[p])
        }
        RateUnit::Bytes(p) => {
            let p = usize::from(p).min(BYTES.len() - 1);
            (bps / 8.0 / 1024f64.powi(p as i32), BYTES[p])
        }
    };
    format!("{} {name}", three_digits(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_units_follow_iperf3s_format_letters() {
        assert_eq!(RateUnit::parse("a"), Some(RateUnit::AdaptiveBits));
        assert_eq!(RateUnit::parse("A"), Some(RateUnit::AdaptiveBytes));
        assert_eq!(RateUnit::parse("k"), Some(RateUnit::Bits(1)));
        assert_eq!(RateUnit::parse("G"), Some(RateUnit::Bytes(3)));
        assert_eq!(RateUnit::parse("x"), None);
        assert_eq!(RateUnit::parse("kk"), None);
        assert_eq!(RateUnit::parse(""), None);
        // iperf3 3.12 printed these for 1.25 MiB in one second (-b 10m, 128 KiB blocks).
        let bps = 1_310_720.0 * 8.0;
        assert_eq!(format_rate_in(bps, RateUnit::Bits(1)), "10486 Kbits/sec");
        assert_eq!(format_rate_in(bps, RateUnit::Bytes(1)), "1280 KBytes/sec");
        assert_eq!(format_rate_in(bps, RateUnit::Bits(2)), "10.5 Mbits/sec");
        assert_eq!(
            format_rate_in(bps, RateUnit::AdaptiveBytes),
            "1.25 MBytes/sec"
        );
        assert_eq!(
            format_rate_in(bps, RateUnit::AdaptiveBits),
            "10.5 Mbits/sec"
        );
        assert_eq!(
            format_rate_in(f64::NAN, RateUnit::Bytes(2)),
            "0.00 MBytes/sec"
        );
    }

    #[test]
    fn bytes_render_like_iperf3() {
        assert_eq!(format_bytes(0), "0 Bytes");
        assert_eq!(format_bytes(1023), "1023 Bytes");
        assert_eq!(format_bytes(1024), "1.00 KBytes");
        assert_eq!(format_bytes(12_595), "12.3 KBytes");
        assert_eq!(format_bytes(126_976), "124 KBytes");
        assert_eq!(format_bytes(1_153_434), "1.10 MBytes");
        assert_eq!(format_bytes(2_512_555_868), "2.34 GBytes");
        assert_eq!(format_bytes(3 * 1024u64.pow(4)), "3.00 TBytes");
        assert_eq!(format_bytes(2048 * 1024u64.pow(4)), "2048 TBytes");
        // 9.996 KBytes rounds up into the next precision band, not to "10.00".
        assert_eq!(format_bytes(10_236), "10.0 KBytes");
    }

    #[test]
    fn bitrates_render_like_iperf3() {
        assert_eq!(format_bitrate(0.0), "0.00 bits/sec");
        assert_eq!(format_bitrate(-5.0), "0.00 bits/sec");
        assert_eq!(format_bitrate(f64::NAN), "0.00 bits/sec");
        assert_eq!(format_bitrate(f64::INFINITY), "0.00 bits/sec");
        assert_eq!(format_bitrate(999.0), "999 bits/sec");
        assert_eq!(format_bitrate(12_300.0), "12.3 Kbits/sec");
        assert_eq!(format_bitrate(942_123_456.0), "942 Mbits/sec");
        assert_eq!(format_bitrate(1_234_000_000.0), "1.23 Gbits/sec");
        assert_eq!(format_bitrate(5e12), "5.00 Tbits/sec");
        assert_eq!(format_bitrate(5e15), "5000 Tbits/sec");
    }

    #[test]
    fn mbit_is_fixed_with_two_decimals() {
        assert_eq!(format_mbit(94_123_456.0), "94.12 Mbit/s");
        assert_eq!(format_mbit(1.5e9), "1500.00 Mbit/s");
        assert_eq!(format_mbit(60_000.0), "0.06 Mbit/s");
        assert_eq!(format_mbit(0.0), "0.00 Mbit/s");
    }
}
