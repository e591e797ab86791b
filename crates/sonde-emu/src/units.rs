//! Strict parsing of the quantities in scenario files: rates, durations, percentages, sizes
//! and queue limits, with tc's unit names.
//!
//! A number always needs its unit (`"100mbit"`, `"10ms"`, `"5%"`, `"100pkt"`); only zero may be
//! written bare. tc reads `mbps` as megabytes per second, which is a classic source of
//! ten-fold mistakes, so byte-per-second units are refused with a hint instead of guessed.
//! Arithmetic is exact decimal (no floating point) for rates, durations and sizes.

use std::fmt;
use std::time::Duration;

use crate::impair::QueueLimit;

/// What was being parsed, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A bit rate.
    Rate,
    /// A duration.
    Duration,
    /// A percentage.
    Percent,
    /// A byte size.
    Size,
    /// A queue limit in packets or bytes.
    QueueLimit,
}

impl Quantity {
    fn expected(self) -> &'static str {
        match self {
            Quantity::Rate => "a rate such as \"100mbit\", \"97.2mbit\", \"1gbit\" or \"64kbit\"",
            Quantity::Duration => "a duration such as \"10ms\", \"500us\", \"1.5s\" or \"0\"",
            Quantity::Percent => "a percentage such as \"5%\" or \"0.1%\"",
            Quantity::Size => "a size such as \"1514b\", \"64kib\" or \"1mb\"",
            Quantity::QueueLimit => "a limit such as \"100pkt\" or \"150kb\"",
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Rate => "rate",
            Quantity::Duration => "duration",
            Quantity::Percent => "percentage",
            Quantity::Size => "size",
            Quantity::QueueLimit => "queue limit",
        })
    }
}

/// Why a quantity could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not a non-negative decimal number followed by a unit.
    #[error("invalid {kind} {given:?}: expected {}", .kind.expected())]
    Syntax {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// A number without its unit.
    #[error("{kind} {given:?} has no unit: expected {}", .kind.expected())]
    MissingUnit {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// A unit this quantity does not have.
    #[error("unknown unit {unit:?} in {kind} {given:?}: expected {}", .kind.expected())]
    UnknownUnit {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
        /// The unit found.
        unit: String,
    },
    /// A byte-per-second rate unit, which tc and iperf users read differently.
    #[error("ambiguous rate {given:?}: tc reads {unit:?} as bytes per second; write bits per second, such as \"100mbit\"")]
    BytesPerSecond {
        /// The text.
        given: String,
        /// The unit found.
        unit: String,
    },
    /// Too large to represent.
    #[error("{kind} {given:?} is too large")]
    TooLarge {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// A minus sign: no quantity of a scenario is negative.
    #[error("{kind} {given:?} must not be negative")]
    Negative {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// A rate that is not zero but comes to less than 1 bit/s: the command line's rule.
    #[error(transparent)]
    BelowOneBit(#[from] sonde_stats::units::BelowOneBit),
}

/// Splits `s` into its decimal number and its unit, and scales the number by the unit's
/// multiplier (looked up in `units`); fractions below the base unit are truncated.
fn parse_scaled(s: &str, kind: Quantity, units: &[(&str, u128)]) -> Result<u128, UnitError> {
    let given = || s.to_owned();
    let t = s.trim();
    if sonde_stats::units::looks_negative(t) {
        return Err(UnitError::Negative {
            kind,
            given: given(),
        });
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() || (num.contains('.') && frac.is_empty()) || frac.len() > 18 {
        return Err(UnitError::Syntax {
            kind,
            given: given(),
        });
    }
    let digits = |d: &str| -> Result<u128, UnitError> {
        d.parse::<u128>().map_err(|_| UnitError::TooLarge {
            kind,
            given: given(),
        })
    };
    let int_v = digits(int)?;
    let frac_v = if frac.is_empty() { 0 } else { digits(frac)? };
    let zero = int_v == 0 && frac_v == 0;
    let mult = if unit.is_empty() {
        if !zero {
            return Err(UnitError::MissingUnit {
                kind,
                given: given(),
            });
        }
        1
    } else {
        let lower = unit.to_ascii_lowercase();
        if kind == Quantity::Rate && (lower.ends_with("bps") || lower.ends_with("b/s")) {
            return Err(UnitError::BytesPerSecond {
                given: given(),
                unit: unit.to_owned(),
            });
        }
        units
            .iter()
            .find(|(name, _)| *name == lower)
            .map(|(_, m)| *m)
            .ok_or_else(|| UnitError::UnknownUnit {
                kind,
                given: given(),
                unit: unit.to_owned(),
            })?
    };
    let too_large = || UnitError::TooLarge {
        kind,
        given: given(),
    };
    let scale = 10u128.pow(frac.len() as u32);
    let whole = int_v.checked_mul(mult).ok_or_else(too_large)?;
    let part = frac_v.checked_mul(mult).ok_or_else(too_large)? / scale;
    whole.checked_add(part).ok_or_else(too_large)
}

fn to_u64(v: u128, kind: Quantity, s: &str) -> Result<u64, UnitError> {
    u64::try_from(v).map_err(|_| UnitError::TooLarge {
        kind,
        given: s.to_owned(),
    })
}

/// Parses a rate in tc's bit units (`bit`, `kbit`, `mbit`, `gbit`, `tbit`; powers of 1000)
/// into bits per second; the command line's `k`, `m`, `g`, `t` (`100m`, `1G`) mean the same.
///
/// A rate that is not zero but below 1 bit/s (`"0.5bit"`) is refused, by the same rule as the
/// command line's ([`sonde_stats::units::refuse_rounded_to_zero`]).
///
/// # Errors
/// A [`UnitError`] naming the problem; byte units (`mbps`) are refused as ambiguous.
pub fn parse_rate(s: &str) -> Result<u64, UnitError> {
    const UNITS: &[(&str, u128)] = &[
        ("bit", 1),
        ("kbit", 1_000),
        ("mbit", 1_000_000),
        ("gbit", 1_000_000_000),
        ("tbit", 1_000_000_000_000),
    ];
    // The command line's spelling (iperf3's): `100m`, `1G`, `64k`.
    let with_bit;
    let b = s.as_bytes();
    let number_then_letter =
        b.len() >= 2 && (b[b.len() - 2].is_ascii_digit() || b[b.len() - 2] == b'.');
    let s = match b.last() {
        Some(b'k' | b'K' | b'm' | b'M' | b'g' | b'G' | b't' | b'T') if number_then_letter => {
            with_bit = format!("{}bit", s.to_ascii_lowercase());
            with_bit.as_str()
        }
        _ => s,
    };
    let bits = to_u64(parse_scaled(s, Quantity::Rate, UNITS)?, Quantity::Rate, s)?;
    Ok(sonde_stats::units::refuse_rounded_to_zero(bits, s)?)
}

/// Parses a duration (`ns`, `us`, `ms`, `s`).
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    const UNITS: &[(&str, u128)] = &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ];
    let ns = parse_scaled(s, Quantity::Duration, UNITS)?;
    Ok(Duration::from_nanos(to_u64(ns, Quantity::Duration, s)?))
}

/// Parses a percentage (`"5%"`) into a fraction (0.05). Values above 100 % parse; whether they
/// make sense is for the caller to say, with the field's name.
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_percent(s: &str) -> Result<f64, UnitError> {
    // Millionths of a percent, exactly.
    let v = parse_scaled(s, Quantity::Percent, &[("%", 1_000_000)])?;
    Ok(v as f64 / 100_000_000.0)
}

const SIZE_UNITS: &[(&str, u128)] = &[
    ("b", 1),
    ("bytes", 1),
    ("kb", 1_000),
    ("kib", 1_024),
    ("mb", 1_000_000),
    ("mib", 1_048_576),
];

/// Parses a size in bytes (`b`, `kb`, `kib`, `mb`, `mib`).
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    to_u64(
        parse_scaled(s, Quantity::Size, SIZE_UNITS)?,
        Quantity::Size,
        s,
    )
}

/// Parses a queue limit: packets (`"100pkt"`, `"100packets"`) or bytes (as [`parse_size`]).
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_queue_limit(s: &str) -> Result<QueueLimit, UnitError> {
    let mut units: Vec<(&str, u128)> = vec![("pkt", 1), ("packets", 1)];
    units.extend_from_slice(SIZE_UNITS);
    let v = to_u64(
        parse_scaled(s, Quantity::QueueLimit, &units)?,
        Quantity::QueueLimit,
        s,
    )?;
    let t = s.trim();
    let (num, unit) = t.split_at(
        t.find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len()),
    );
    let unit = unit.trim().to_ascii_lowercase();
    if unit == "pkt" || unit == "packets" {
        if num.contains('.') {
            return Err(UnitError::Syntax {
                kind: Quantity::QueueLimit,
                given: s.to_owned(),
            });
        }
        Ok(QueueLimit::Packets(v))
    } else {
        Ok(QueueLimit::Bytes(v))
    }
}

/// Renders a rate in the largest tc unit that keeps it exact.
pub fn format_rate(bps: u64) -> String {
    for (unit, m) in [
        ("tbit", 1_000_000_000_000),
        ("gbit", 1_000_000_000),
        ("mbit", 1_000_000),
        ("kbit", 1_000),
    ] {
        if bps >= m && bps % m == 0 {
            return format!("{}{unit}", bps / m);
        }
    }
    format!("{bps}bit")
}

/// Renders a duration in the largest unit that keeps it exact.
pub fn format_duration(d: Duration) -> String {
    let ns = crate::time::duration_nanos(d);
    for (unit, m) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= m && ns % m == 0 {
            return format!("{}{unit}", ns / m);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("97.2Mbit"), Ok(97_200_000));
        assert_eq!(parse_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("0"), Ok(0));
        assert!(matches!(
            parse_rate("100"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_rate("100mbps"),
            Err(UnitError::BytesPerSecond { .. })
        ));
        // The command line's spelling works in a scenario too.
        assert_eq!(parse_rate("100m"), Ok(100_000_000));
        assert_eq!(parse_rate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_rate("97.2M"), Ok(97_200_000));
        assert!(matches!(
            parse_rate("100x"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_rate("-1mbit"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_rate("1.mbit"),
            Err(UnitError::Syntax { .. })
        ));
        assert!(matches!(
            parse_rate("99999999999tbit"),
            Err(UnitError::TooLarge { .. })
        ));
        assert_eq!(format_rate(97_200_000), "97200kbit");
        assert_eq!(format_rate(100_000_000), "100mbit");
    }

    #[test]
    fn a_rate_that_rounds_to_zero_is_refused() {
        for bad in ["0.5bit", "0.0000001kbit", "0.0000001k", "0.9 bit"] {
            assert!(
                matches!(parse_rate(bad), Err(UnitError::BelowOneBit(_))),
                "{bad:?}"
            );
        }
        assert!(parse_rate("0.5bit")
            .unwrap_err()
            .to_string()
            .contains("below 1 bit/s"));
        assert_eq!(parse_rate("0"), Ok(0));
        assert_eq!(parse_rate("0.0mbit"), Ok(0));
        assert_eq!(parse_rate("1bit"), Ok(1));
        assert_eq!(parse_rate("0.001kbit"), Ok(1));
    }

    #[test]
    fn a_negative_quantity_says_it_must_not_be_negative() {
        let e = parse_duration("-10ms").unwrap_err();
        assert!(matches!(e, UnitError::Negative { .. }), "{e:?}");
        assert_eq!(e.to_string(), "duration \"-10ms\" must not be negative");
        assert!(matches!(
            parse_percent("-5%"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_rate("-0.5m"),
            Err(UnitError::Negative { .. })
        ));
    }

    #[test]
    fn durations_percent_sizes() {
        assert_eq!(parse_duration("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("10 minutes").is_err());
        assert_eq!(parse_percent("5%"), Ok(0.05));
        assert_eq!(parse_percent("0.1%"), Ok(0.001));
        assert_eq!(parse_percent("120%"), Ok(1.2));
        assert!(parse_percent("5").is_err());
        assert!(parse_percent("0.05").is_err());
        assert_eq!(parse_size("64kib"), Ok(65_536));
        assert_eq!(parse_queue_limit("100pkt"), Ok(QueueLimit::Packets(100)));
        assert_eq!(parse_queue_limit("150kb"), Ok(QueueLimit::Bytes(150_000)));
        assert_eq!(parse_queue_limit("1.5kb"), Ok(QueueLimit::Bytes(1500)));
        assert!(parse_queue_limit("1.5pkt").is_err());
        assert!(parse_queue_limit("100").is_err());
        assert_eq!(format_duration(Duration::from_millis(10)), "10ms");
    }
}
