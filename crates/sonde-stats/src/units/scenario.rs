//! A scenario file's notation, tc's: `rate = "100mbit"`, `delay = "10ms"`, `loss = "5%"`,
//! `queue_limit = "100pkt"`; read strictly, and written back in a canonical spelling that reads
//! to the same value.
//!
//! A number always needs its unit; only zero may be written bare. tc reads `mbps` as megabytes
//! per second, which is a classic source of ten-fold mistakes, so byte-per-second units are
//! refused with a hint instead of guessed. Arithmetic is exact decimal (no floating point) for
//! rates, durations and sizes.

use std::time::Duration;

use super::{looks_negative, refuse_rounded_to_zero, Notation, Quantity, UnitError};

/// Splits `s` into its decimal number and its unit, and scales the number by the unit's
/// multiplier (looked up in `units`); fractions below the base unit are truncated.
fn parse_with_unit(s: &str, kind: Quantity, units: &[(&str, u128)]) -> Result<u128, UnitError> {
    let given = || s.to_owned();
    let t = s.trim();
    if looks_negative(t) {
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
    let too_large = || UnitError::TooLarge {
        kind,
        given: given(),
        notation: Notation::Scenario,
    };
    let digits =
        |d: &str| -> Result<u128, UnitError> { d.parse::<u128>().map_err(|_| too_large()) };
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
        unit_multiplier(s, kind, unit, units)?
    };
    let scale = 10u128.pow(frac.len() as u32);
    let whole = int_v.checked_mul(mult).ok_or_else(too_large)?;
    let part = frac_v.checked_mul(mult).ok_or_else(too_large)? / scale;
    whole.checked_add(part).ok_or_else(too_large)
}

/// The multiplier of `unit` (any case) in `units`; a byte-per-second rate unit is refused as
/// ambiguous before it is looked up.
fn unit_multiplier(
    s: &str,
    kind: Quantity,
    unit: &str,
    units: &[(&str, u128)],
) -> Result<u128, UnitError> {
    let lower = unit.to_ascii_lowercase();
    if kind == Quantity::Rate && (lower.ends_with("bps") || lower.ends_with("b/s")) {
        return Err(UnitError::BytesPerSecond {
            given: s.to_owned(),
            unit: unit.to_owned(),
        });
    }
    units
        .iter()
        .find(|(name, _)| *name == lower)
        .map(|(_, m)| *m)
        .ok_or_else(|| UnitError::UnknownUnit {
            kind,
            given: s.to_owned(),
            unit: unit.to_owned(),
        })
}

fn to_u64(v: u128, kind: Quantity, s: &str) -> Result<u64, UnitError> {
    u64::try_from(v).map_err(|_| UnitError::TooLarge {
        kind,
        given: s.to_owned(),
        notation: Notation::Scenario,
    })
}

/// Parses a rate in tc's bit units (`bit`, `kbit`, `mbit`, `gbit`, `tbit`; powers of 1000)
/// into bits per second; the command line's `k`, `m`, `g`, `t` (`100m`, `1G`) mean the same.
///
/// A rate that is not zero but below 1 bit/s (`"0.5bit"`) is refused, by the same rule as the
/// command line's ([`refuse_rounded_to_zero`]).
///
/// # Errors
/// A [`UnitError`] naming the problem; byte units (`mbps`) are refused as ambiguous.
pub fn parse_scenario_rate(s: &str) -> Result<u64, UnitError> {
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
    let bits = to_u64(
        parse_with_unit(s, Quantity::Rate, UNITS)?,
        Quantity::Rate,
        s,
    )?;
    Ok(refuse_rounded_to_zero(bits, s)?)
}

/// Parses a duration (`ns`, `us`, `µs`, `ms`, `s`).
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_scenario_duration(s: &str) -> Result<Duration, UnitError> {
    const UNITS: &[(&str, u128)] = &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ];
    let ns = parse_with_unit(s, Quantity::Duration, UNITS)?;
    Ok(Duration::from_nanos(to_u64(ns, Quantity::Duration, s)?))
}

/// Parses a percentage (`"5%"`) into a fraction (0.05). Values above 100 % parse; whether they
/// make sense is for the caller to say, with the field's name.
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_scenario_percent(s: &str) -> Result<f64, UnitError> {
    // Millionths of a percent, exactly.
    let v = parse_with_unit(s, Quantity::Percent, &[("%", 1_000_000)])?;
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

/// Parses a size in bytes (`b`, `bytes`, `kb`, `kib`, `mb`, `mib`).
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_scenario_size(s: &str) -> Result<u64, UnitError> {
    to_u64(
        parse_with_unit(s, Quantity::Size, SIZE_UNITS)?,
        Quantity::Size,
        s,
    )
}

/// A queue limit, in packets or in bytes, as tc's `limit` (pfifo counts packets, bfifo bytes),
/// or in time: the bytes the link drains in that long at its rate (tc-tbf's `latency`).
///
/// In scenario files it is a string: `"100pkt"`, `"150kb"` or `"100ms"` (see
/// [`parse_queue_limit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum QueueLimit {
    /// At most this many packets queued.
    Packets(u64),
    /// At most this many bytes queued.
    Bytes(u64),
    /// At most the bytes that take this long to leave at the link's rate; a queue resolves it
    /// to [`QueueLimit::Bytes`] with [`QueueLimit::at_rate`] once it knows the rate.
    Time(Duration),
}

impl QueueLimit {
    /// True when a packet of `len` bytes does not fit behind `packets` packets of `bytes` bytes.
    ///
    /// A [`QueueLimit::Time`] not resolved with [`QueueLimit::at_rate`] limits nothing: only
    /// a queue with a rate can say how many bytes a time holds.
    pub fn overflows(self, packets: usize, bytes: u64, len: usize) -> bool {
        match self {
            QueueLimit::Packets(max) => packets as u64 >= max,
            QueueLimit::Bytes(max) => bytes.saturating_add(len as u64) > max,
            QueueLimit::Time(_) => false,
        }
    }

    /// The limit a queue drained at `bits_per_sec` applies: a time becomes the bytes that
    /// leave in that long (`100ms` at 20 Mbit/s: 250 000 bytes); packets and bytes stay.
    pub fn at_rate(self, bits_per_sec: u64) -> QueueLimit {
        match self {
            QueueLimit::Time(t) => {
                let bytes = t.as_nanos() * u128::from(bits_per_sec) / 8 / 1_000_000_000;
                QueueLimit::Bytes(u64::try_from(bytes).unwrap_or(u64::MAX))
            }
            other => other,
        }
    }
}

impl TryFrom<String> for QueueLimit {
    type Error = UnitError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        parse_queue_limit(&s)
    }
}

impl From<QueueLimit> for String {
    fn from(l: QueueLimit) -> String {
        match l {
            QueueLimit::Packets(n) => format!("{n}pkt"),
            QueueLimit::Bytes(n) => format!("{n}b"),
            QueueLimit::Time(t) => format_scenario_duration(t),
        }
    }
}

/// Parses a queue limit: packets (`"100pkt"`, `"100packets"`), bytes (as
/// [`parse_scenario_size`]) or a time (as [`parse_scenario_duration`]).
///
/// # Errors
/// A [`UnitError`] naming the problem.
pub fn parse_queue_limit(s: &str) -> Result<QueueLimit, UnitError> {
    match parse_count_or_size(s) {
        Err(e) => parse_scenario_duration(s)
            .map(QueueLimit::Time)
            .map_err(|_| e),
        ok => ok,
    }
}

fn parse_count_or_size(s: &str) -> Result<QueueLimit, UnitError> {
    let mut units: Vec<(&str, u128)> = vec![("pkt", 1), ("packets", 1)];
    units.extend_from_slice(SIZE_UNITS);
    let v = to_u64(
        parse_with_unit(s, Quantity::QueueLimit, &units)?,
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

/// Writes a rate in the largest tc unit that keeps it exact (`100mbit`, `97200kbit`).
pub fn format_scenario_rate(bps: u64) -> String {
    for (unit, m) in [
        ("tbit", 1_000_000_000_000),
        ("gbit", 1_000_000_000),
        ("mbit", 1_000_000),
        ("kbit", 1_000),
    ] {
        if bps >= m && bps.is_multiple_of(m) {
            return format!("{}{unit}", bps / m);
        }
    }
    format!("{bps}bit")
}

/// Writes a duration in the largest unit that keeps it exact (`10ms`, `1500us`).
pub fn format_scenario_duration(d: Duration) -> String {
    let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    for (unit, m) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= m && ns.is_multiple_of(m) {
            return format!("{}{unit}", ns / m);
        }
    }
    format!("{ns}ns")
}

/// Writes a fraction as a percentage (0.05 -> `5%`).
pub fn format_scenario_percent(fraction: f64) -> String {
    format!("{}%", fraction * 100.0)
}

/// Writes a size in bytes (`1514b`).
pub fn format_scenario_size(bytes: u64) -> String {
    format!("{bytes}b")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_scenario_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_scenario_rate("97.2Mbit"), Ok(97_200_000));
        assert_eq!(parse_scenario_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_scenario_rate("0"), Ok(0));
        assert!(matches!(
            parse_scenario_rate("100"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_scenario_rate("100mbps"),
            Err(UnitError::BytesPerSecond { .. })
        ));
        // The command line's spelling works in a scenario too.
        assert_eq!(parse_scenario_rate("100m"), Ok(100_000_000));
        assert_eq!(parse_scenario_rate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_scenario_rate("97.2M"), Ok(97_200_000));
        assert!(matches!(
            parse_scenario_rate("100x"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_scenario_rate("-1mbit"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_scenario_rate("1.mbit"),
            Err(UnitError::Syntax { .. })
        ));
        assert!(matches!(
            parse_scenario_rate("99999999999tbit"),
            Err(UnitError::TooLarge { .. })
        ));
        assert_eq!(format_scenario_rate(97_200_000), "97200kbit");
        assert_eq!(format_scenario_rate(100_000_000), "100mbit");
    }

    #[test]
    fn a_rate_that_rounds_to_zero_is_refused() {
        for bad in ["0.5bit", "0.0000001kbit", "0.0000001k", "0.9 bit"] {
            assert!(
                matches!(parse_scenario_rate(bad), Err(UnitError::BelowOneBit(_))),
                "{bad:?}"
            );
        }
        assert!(parse_scenario_rate("0.5bit")
            .unwrap_err()
            .to_string()
            .contains("below 1 bit/s"));
        assert_eq!(parse_scenario_rate("0"), Ok(0));
        assert_eq!(parse_scenario_rate("0.0mbit"), Ok(0));
        assert_eq!(parse_scenario_rate("1bit"), Ok(1));
        assert_eq!(parse_scenario_rate("0.001kbit"), Ok(1));
    }

    #[test]
    fn a_negative_quantity_says_it_must_not_be_negative() {
        let e = parse_scenario_duration("-10ms").unwrap_err();
        assert!(matches!(e, UnitError::Negative { .. }), "{e:?}");
        assert_eq!(e.to_string(), "duration \"-10ms\" must not be negative");
        assert!(matches!(
            parse_scenario_percent("-5%"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_scenario_rate("-0.5m"),
            Err(UnitError::Negative { .. })
        ));
    }

    #[test]
    fn durations_percent_sizes() {
        assert_eq!(
            parse_scenario_duration("10ms"),
            Ok(Duration::from_millis(10))
        );
        assert_eq!(
            parse_scenario_duration("1.5s"),
            Ok(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_scenario_duration("250us"),
            Ok(Duration::from_micros(250))
        );
        assert_eq!(parse_scenario_duration("0"), Ok(Duration::ZERO));
        assert!(parse_scenario_duration("10").is_err());
        assert!(parse_scenario_duration("10 minutes").is_err());
        assert_eq!(parse_scenario_percent("5%"), Ok(0.05));
        assert_eq!(parse_scenario_percent("0.1%"), Ok(0.001));
        assert_eq!(parse_scenario_percent("120%"), Ok(1.2));
        assert!(parse_scenario_percent("5").is_err());
        assert!(parse_scenario_percent("0.05").is_err());
        assert_eq!(parse_scenario_size("64kib"), Ok(65_536));
        assert_eq!(parse_queue_limit("100pkt"), Ok(QueueLimit::Packets(100)));
        assert_eq!(parse_queue_limit("150kb"), Ok(QueueLimit::Bytes(150_000)));
        assert_eq!(parse_queue_limit("1.5kb"), Ok(QueueLimit::Bytes(1500)));
        assert!(parse_queue_limit("1.5pkt").is_err());
        assert!(parse_queue_limit("100").is_err());
        let t = parse_queue_limit("100ms");
        assert_eq!(t, Ok(QueueLimit::Time(Duration::from_millis(100))));
        assert_eq!(
            t.map(|l| l.at_rate(20_000_000)),
            Ok(QueueLimit::Bytes(250_000))
        );
        assert_eq!(
            String::from(QueueLimit::Time(Duration::from_millis(100))),
            "100ms"
        );
        assert_eq!(format_scenario_duration(Duration::from_millis(10)), "10ms");
    }

    #[test]
    fn queue_limits() {
        assert!(!QueueLimit::Packets(2).overflows(1, 0, 1500));
        assert!(QueueLimit::Packets(2).overflows(2, 0, 1500));
        assert!(!QueueLimit::Bytes(3000).overflows(1, 1500, 1500));
        assert!(QueueLimit::Bytes(3000).overflows(1, 1501, 1500));
    }
}
