//! Sizes, rates and their human rendering, as iperf3 users type and read them.
//!
//! iperf3 mixes two conventions and sonde keeps both so that muscle memory carries over:
//! sizes (`-l 128K`, `-n 1.5G`) use powers of 1024, rates (`-b 97.2m`) use powers of 1000.
//! Parsing is exact decimal arithmetic (no floating point), so `97.2m` is exactly 97 200 000.

use std::fmt;

/// Which kind of quantity was being parsed, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A byte count with 1024-based suffixes.
    Size,
    /// A bit rate with 1000-based suffixes.
    Rate,
}

impl Quantity {
    fn examples(self) -> &'static str {
        match self {
            Quantity::Size => "powers of 1024, for example 1.5M, 128K, 1G",
            Quantity::Rate => "for example 97.2m, 1G, 128K",
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Size => "size",
            Quantity::Rate => "rate",
        })
    }
}

/// Why a size or rate could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The text is not a non-negative number with an optional suffix.
    #[error(
        "invalid {kind} {given:?}: expected a number with an optional suffix k, m, g or t ({})",
        .kind.examples()
    )]
    Invalid { kind: Quantity, given: String },
    /// The value does not fit in 64 bits.
    #[error("{kind} {given:?} is too large: the maximum is {}", u64::MAX)]
    TooLarge { kind: Quantity, given: String },
    /// A minus sign: no size or rate is negative.
    #[error("{kind} {given:?} must not be negative")]
    Negative { kind: Quantity, given: String },
    /// A rate that is not zero but comes to less than 1 bit/s.
    #[error(transparent)]
    BelowOneBit(#[from] BelowOneBit),
}

/// A rate written as a number other than zero that comes to less than 1 bit/s (`0.5`,
/// `0.0000001k`). Rates are whole bits per second, and 0 means "no limit" to a sender, so
/// rounding such a rate down would turn a request for a trickle into a flood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "rate {given:?} is below 1 bit/s, the smallest rate: it would round to 0, and only a \
     written 0 means no limit"
)]
pub struct BelowOneBit {
    /// The text.
    pub given: String,
}

/// The rule every rate parser of sonde applies (this crate's and the lab's scenario files'):
/// `bits`, the whole bits per second that `given` came to, may be 0 only when `given` writes
/// zero (`0`, `0.0`, `0k`, `0mbit`). A number with a non-zero digit that truncates to 0 is
/// refused rather than read as "no limit".
///
/// # Errors
/// [`BelowOneBit`] for a non-zero text that came to 0.
pub fn refuse_rounded_to_zero(bits: u64, given: &str) -> Result<u64, BelowOneBit> {
    if bits == 0 && given.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return Err(BelowOneBit {
            given: given.to_owned(),
        });
    }
    Ok(bits)
}

/// Parses an iperf3-style size: a number with an optional suffix k, m, g or t (either case),
/// each a power of 1024. Decimals are allowed (`1.5M` = 1 572 864); a fractional byte is
/// truncated.
///
/// # Errors
/// [`UnitError::Invalid`] for empty or malformed text, [`UnitError::Negative`] for a minus
/// sign, [`UnitError::TooLarge`] when the value exceeds `u64::MAX`.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    parse_scaled(s, Quantity::Size, 1024)
}

/// Parses an iperf3-style rate in bits/s: a number with an optional suffix k, m, g or t (either
/// case), each a power of 1000 (`97.2m` = 97 200 000, `1G` = 10^9). `0` is allowed; a rate
/// that is not zero but below 1 bit/s (`0.5`) is refused (see [`refuse_rounded_to_zero`]). The lab
/// scenario's spelling works too: `100mbit`, `1gbit`, `64kbit`, `9600bit` (and `bit/s`), so one
/// rate reads the same on the command line and in a scenario file. (`mbps` stays an error: tc
/// reads it as megabytes per second.)
///
/// # Errors
/// As [`parse_size`], and [`UnitError::BelowOneBit`] for a rate that would round to 0.
pub fn parse_rate(s: &str) -> Result<u64, UnitError> {
    let bits = parse_scaled(strip_bit_unit(s), Quantity::Rate, 1000)?;
    Ok(refuse_rounded_to_zero(bits, s)?)
}

/// `100mbit` -> `100m`, `9600bit/s` -> `9600` (any case); other text unchanged.
fn strip_bit_unit(s: &str) -> &str {
    let lower = s.to_ascii_lowercase();
    for unit in ["bit/s", "bits/s", "bit"] {
        if lower.ends_with(unit) && s.len() > unit.len() {
            return &s[..s.len() - unit.len()];
        }
    }
    s
}

/// A minus sign before a number (`-5`, `-0.5m`, `-.5`): said as such, not as malformed text.
pub fn looks_negative(s: &str) -> bool {
    s.strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
}

/// Most fractional digits kept; more would overflow the exact arithmetic below.
const MAX_FRACTION_DIGITS: u32 = 18;

fn parse_scaled(s: &str, kind: Quantity, base: u128) -> Result<u64, UnitError> {
    let invalid = || UnitError::Invalid {
        kind,
        given: s.to_owned(),
    };
    let too_large = || UnitError::TooLarge {
        kind,
        given: s.to_owned(),
    };
    if looks_negative(s) {
        return Err(UnitError::Negative {
            kind,
            given: s.to_owned(),
        });
    }
    let (number, power) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 1),
        Some(b'm' | b'M') => (&s[..s.len() - 1], 2),
        Some(b'g' | b'G') => (&s[..s.len() - 1], 3),
        Some(b't' | b'T') => (&s[..s.len() - 1], 4),
        _ => (s, 0),
    };
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return Err(invalid());
    }
    // Extra fractional digits beyond 18 cannot change the truncated result for any suffix.
    let frac_part = &frac_part[..frac_part.len().min(MAX_FRACTION_DIGITS as usize)];
    let digits = int_part.bytes().chain(frac_part.bytes());
    let mut mantissa: u128 = 0;
    for d in digits {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(d - b'0')))
            .ok_or_else(too_large)?;
    }
    let scale = 10u128.pow(frac_part.len() as u32);
    let value = mantissa
        .checked_mul(base.pow(power))
        .ok_or_else(too_large)?
        / scale;
    u64::try_from(value).map_err(|_| too_large())
}

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

/// Renders a byte count like iperf3 (1024-based): `512 Bytes`, `12.3 KBytes`, `1.10 MBytes`,
/// `2.34 GBytes`, `TBytes` beyond.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KBytes", "MBytes", "GBytes", "TBytes"];
    if bytes < 1024 {
        return format!("{bytes} Bytes");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{} {}", three_digits(v), UNITS[unit])
}

/// Renders a bit rate like iperf3 (1000-based, three significant digits): `0.00 bits/sec`,
/// `12.3 Kbits/sec`, `942 Mbits/sec`, `1.23 Gbits/sec`. Negative or non-finite input renders as
/// zero.
pub fn format_bitrate(bits_per_second: f64) -> String {
    const UNITS: [&str; 5] = [
        "bits/sec",
        "Kbits/sec",
        "Mbits/sec",
        "Gbits/sec",
        "Tbits/sec",
    ];
    let mut v = if bits_per_second.is_finite() && bits_per_second > 0.0 {
        bits_per_second
    } else {
        0.0
    };
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{} {}", three_digits(v), UNITS[unit])
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
    const BITS: [&str; 5] = [
        "bits/sec",
        "Kbits/sec",
        "Mbits/sec",
        "Gbits/sec",
        "Tbits/sec",
    ];
    const BYTES: [&str; 5] = [
        "Bytes/sec",
        "KBytes/sec",
        "MBytes/sec",
        "GBytes/sec",
        "TBytes/sec",
    ];
    let bps = if bits_per_second.is_finite() && bits_per_second > 0.0 {
        bits_per_second
    } else {
        0.0
    };
    let (v, name) = match unit {
        RateUnit::AdaptiveBits => return format_bitrate(bps),
        RateUnit::AdaptiveBytes => {
            let mut v = bps / 8.0;
            let mut power = 0;
            while v >= 1024.0 && power + 1 < BYTES.len() {
                v /= 1024.0;
                power += 1;
            }
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
    fn sizes_use_powers_of_1024() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("1400"), Ok(1400));
        assert_eq!(parse_size("128K"), Ok(131_072));
        assert_eq!(parse_size("128k"), Ok(131_072));
        assert_eq!(parse_size("1M"), Ok(1_048_576));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert_eq!(parse_size("2g"), Ok(2_147_483_648));
        assert_eq!(parse_size("1T"), Ok(1_099_511_627_776));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert_eq!(parse_size("3."), Ok(3));
    }

    #[test]
    fn fractional_bytes_truncate() {
        assert_eq!(parse_size("1.9"), Ok(1));
        assert_eq!(parse_size("0.0001K"), Ok(0));
        assert_eq!(parse_size("1.0000000000000000000009K"), Ok(1024));
    }

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
    fn rates_use_powers_of_1000() {
        assert_eq!(parse_rate("0"), Ok(0));
        assert_eq!(parse_rate("97.2m"), Ok(97_200_000));
        assert_eq!(parse_rate("97.2M"), Ok(97_200_000));
        assert_eq!(parse_rate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_rate("128K"), Ok(128_000));
        assert_eq!(parse_rate("2t"), Ok(2_000_000_000_000));
        assert_eq!(parse_rate("1000"), Ok(1000));
        // The scenario files' spelling.
        assert_eq!(parse_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("1Gbit/s"), Ok(1_000_000_000));
        assert_eq!(parse_rate("64kbit"), Ok(64_000));
        assert!(parse_rate("64kbps").is_err(), "tc's kbps is kilobytes/s");
        assert_eq!(parse_rate("9600bit"), Ok(9600));
        assert!(parse_rate("bit").is_err());
        assert!(parse_rate("100mbyte").is_err());
    }

    #[test]
    fn junk_is_rejected() {
        for bad in [
            "", "-", "-x", "+1", "12x", "x", "K", ".", ".K", "1.2.3", " 1", "1 ", "1KK", "1e3", "١",
        ] {
            assert!(
                matches!(parse_size(bad), Err(UnitError::Invalid { .. })),
                "size {bad:?}"
            );
            assert!(
                matches!(parse_rate(bad), Err(UnitError::Invalid { .. })),
                "rate {bad:?}"
            );
        }
    }

    #[test]
    fn a_negative_size_or_rate_says_it_must_not_be_negative() {
        for bad in ["-1", "-5m", "-0.5", "-.5K"] {
            assert!(
                matches!(parse_size(bad), Err(UnitError::Negative { .. })),
                "size {bad:?}"
            );
            assert!(
                matches!(parse_rate(bad), Err(UnitError::Negative { .. })),
                "rate {bad:?}"
            );
        }
        assert_eq!(
            parse_rate("-5m").unwrap_err().to_string(),
            "rate \"-5m\" must not be negative"
        );
    }

    #[test]
    fn a_rate_that_rounds_to_zero_is_refused() {
        for bad in [
            "0.5",
            "0.0000001k",
            "0.9",
            "0.0000000009g",
            "0.5bit",
            "0.0001kbit/s",
        ] {
            assert!(
                matches!(parse_rate(bad), Err(UnitError::BelowOneBit(_))),
                "rate {bad:?}"
            );
        }
        assert!(parse_rate("0.5")
            .unwrap_err()
            .to_string()
            .contains("below 1 bit/s"));
        // Only a written zero means "no limit"; anything from 1 bit/s up still truncates.
        for zero in ["0", "0.0", "00", "0k", "0.000M", "0bit", ".0"] {
            assert_eq!(parse_rate(zero), Ok(0), "{zero:?}");
        }
        assert_eq!(parse_rate("1"), Ok(1));
        assert_eq!(parse_rate("1.9"), Ok(1));
        assert_eq!(parse_rate("0.001k"), Ok(1));
        assert_eq!(
            refuse_rounded_to_zero(0, "0.5"),
            Err(BelowOneBit {
                given: "0.5".into()
            })
        );
        assert_eq!(refuse_rounded_to_zero(0, "0mbit"), Ok(0));
        assert_eq!(refuse_rounded_to_zero(7, "7"), Ok(7));
    }

    #[test]
    fn overflow_is_rejected() {
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert!(matches!(
            parse_size("18446744073709551616"),
            Err(UnitError::TooLarge { .. })
        ));
        assert!(matches!(
            parse_size("16777216T"),
            Err(UnitError::TooLarge { .. })
        ));
        assert!(matches!(
            parse_rate("99999999999999999999999999999999999999999"),
            Err(UnitError::TooLarge { .. })
        ));
    }

    #[test]
    fn errors_say_what_was_given_and_what_is_accepted() {
        assert_eq!(
            parse_rate("12x").unwrap_err().to_string(),
            "invalid rate \"12x\": expected a number with an optional suffix k, m, g or t \
             (for example 97.2m, 1G, 128K)"
        );
        assert_eq!(
            parse_size("").unwrap_err().to_string(),
            "invalid size \"\": expected a number with an optional suffix k, m, g or t \
             (powers of 1024, for example 1.5M, 128K, 1G)"
        );
        assert_eq!(
            parse_size("20000000T").unwrap_err().to_string(),
            "size \"20000000T\" is too large: the maximum is 18446744073709551615"
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
}
