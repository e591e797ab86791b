//! One vocabulary for the quantities sonde reads and prints: sizes, rates, durations,
//! percentages and queue limits.
//!
//! Two notations are read, each exactly as its users already write it:
//! - the command line's, iperf3's ([`parse_size`], [`parse_rate`]): a bare number or one with
//!   a suffix `k m g t`; sizes in powers of 1024 (`-l 128K`, `-n 1.5G`), rates in powers of
//!   1000 (`-b 97.2m`), so that iperf3 muscle memory carries over;
//! - the lab's scenario files', tc's ([`parse_scenario_rate`], [`parse_scenario_duration`],
//!   [`parse_scenario_percent`], [`parse_scenario_size`], [`parse_queue_limit`]): a number
//!   always needs its unit (`"100mbit"`, `"10ms"`, `"5%"`, `"100pkt"`) and only zero may be
//!   written bare. tc reads `mbps` as megabytes per second, a classic source of ten-fold
//!   mistakes, so byte-per-second rate units are refused with a hint instead of guessed.
//!
//! Both share one error type, one rule for rates below 1 bit/s
//! ([`refuse_rounded_to_zero`]) and each other's rate spelling (`100mbit` on the command line,
//! `100m` in a scenario). Arithmetic is exact decimal, no floating point, so `97.2m` is exactly
//! 97 200 000.
//!
//! Printing has one function per job: iperf3's table ([`format_bitrate`], [`format_rate_in`],
//! [`format_bytes`]: `942 Mbits/sec`), a fixed unit where figures are compared with each other
//! ([`format_mbit`]: `94.12 Mbit/s`), and a scenario file's canonical spelling
//! ([`format_scenario_rate`] and friends: `100mbit`), which reads back to the same value.
//!
//! [`Rate`] and [`Size`] carry a parsed rate or size as a type, not a bare `u64`, and read and
//! print through the functions above.

mod flag;
mod format;
mod quantity;
mod scenario;

use std::fmt;

pub use flag::{parse_positive_rate, parse_rate, parse_size};
pub use format::{format_bitrate, format_bytes, format_mbit, format_rate_in, RateUnit};
pub use quantity::{Rate, Size, SizeTooLarge};
pub use scenario::{
    format_scenario_duration, format_scenario_percent, format_scenario_rate, format_scenario_size,
    parse_queue_limit, parse_scenario_duration, parse_scenario_percent, parse_scenario_rate,
    parse_scenario_size, QueueLimit,
};

/// What was being parsed, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A byte count: powers of 1024 on the command line; `b`, `kb`, `kib`, ... in a scenario.
    Size,
    /// A bit rate, in powers of 1000.
    Rate,
    /// A duration (scenario files only).
    Duration,
    /// A percentage (scenario files only).
    Percent,
    /// A queue limit in packets or bytes (scenario files only).
    QueueLimit,
}

/// Which notation a text was written in; the messages differ as the notations do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notation {
    /// The command line's, iperf3's: `128K`, `97.2m`.
    Flag,
    /// A scenario file's, tc's: `"100mbit"`, `"10ms"`.
    Scenario,
}

impl Quantity {
    /// What a text of this quantity looks like in `notation`.
    fn expected(self, notation: Notation) -> &'static str {
        match (notation, self) {
            (Notation::Flag, Quantity::Size) => {
                "a number with an optional suffix k, m, g or t (powers of 1024, for example \
                 1.5M, 128K, 1G)"
            }
            // The command line reads only sizes and rates in this notation.
            (Notation::Flag, _) => {
                "a number with an optional suffix k, m, g or t (for example 97.2m, 1G, 128K)"
            }
            (Notation::Scenario, Quantity::Rate) => {
                "a rate such as \"100mbit\", \"97.2mbit\", \"1gbit\" or \"64kbit\""
            }
            (Notation::Scenario, Quantity::Duration) => {
                "a duration such as \"10ms\", \"500us\", \"1.5s\" or \"0\""
            }
            (Notation::Scenario, Quantity::Percent) => "a percentage such as \"5%\" or \"0.1%\"",
            (Notation::Scenario, Quantity::Size) => {
                "a size such as \"1514b\", \"64kib\" or \"1mb\""
            }
            (Notation::Scenario, Quantity::QueueLimit) => {
                "a limit such as \"100pkt\", \"150kb\" or \"100ms\""
            }
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Size => "size",
            Quantity::Rate => "rate",
            Quantity::Duration => "duration",
            Quantity::Percent => "percentage",
            Quantity::QueueLimit => "queue limit",
        })
    }
}

impl Notation {
    /// What a "too large" message adds: the command line names the maximum.
    fn too_large_note(self) -> String {
        match self {
            Notation::Flag => format!(": the maximum is {}", u64::MAX),
            Notation::Scenario => String::new(),
        }
    }
}

/// Why a quantity could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Command line: not a non-negative number with an optional suffix k, m, g or t.
    #[error("invalid {kind} {given:?}: expected {}", .kind.expected(Notation::Flag))]
    Invalid {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// Scenario file: not a non-negative decimal number followed by a unit.
    #[error("invalid {kind} {given:?}: expected {}", .kind.expected(Notation::Scenario))]
    Syntax {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// Scenario file: a number other than zero without its unit.
    #[error("{kind} {given:?} has no unit: expected {}", .kind.expected(Notation::Scenario))]
    MissingUnit {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// Scenario file: a unit this quantity does not have.
    #[error(
        "unknown unit {unit:?} in {kind} {given:?}: expected {}",
        .kind.expected(Notation::Scenario)
    )]
    UnknownUnit {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
        /// The unit found.
        unit: String,
    },
    /// Scenario file: a byte-per-second rate unit, which tc and iperf users read differently.
    #[error("ambiguous rate {given:?}: tc reads {unit:?} as bytes per second; write bits per second, such as \"100mbit\"")]
    BytesPerSecond {
        /// The text.
        given: String,
        /// The unit found.
        unit: String,
    },
    /// The value does not fit in 64 bits.
    #[error("{kind} {given:?} is too large{}", .notation.too_large_note())]
    TooLarge {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
        /// Where it was written.
        notation: Notation,
    },
    /// A minus sign: no size, rate or other quantity here is negative.
    #[error("{kind} {given:?} must not be negative")]
    Negative {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
    /// Zero where only a quantity above zero makes sense (a link's rate, a server's limit,
    /// a sweep's step: to a sender 0 means "no limit", never a rate).
    #[error("{kind} {given:?} must be above 0 (e.g. \"100M\", \"1G\")")]
    Zero {
        /// What was being parsed.
        kind: Quantity,
        /// The text.
        given: String,
    },
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

/// The rule every rate parser of sonde applies (the command line's and the scenario files'):
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

/// A minus sign before a number (`-5`, `-0.5m`, `-.5`): said as such, not as malformed text.
pub fn looks_negative(s: &str) -> bool {
    s.strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One error type speaks both notations: each message as that notation's parser wrote it
    /// before the two were one module.
    #[test]
    fn each_notation_keeps_its_messages() {
        let said = |r: Result<u64, UnitError>| r.map_err(|e| e.to_string());
        assert_eq!(
            said(parse_size("1x")),
            Err(
                "invalid size \"1x\": expected a number with an optional suffix k, m, g or t \
                 (powers of 1024, for example 1.5M, 128K, 1G)"
                    .into()
            )
        );
        assert_eq!(
            said(parse_rate("18446744073709551616")),
            Err(
                "rate \"18446744073709551616\" is too large: the maximum is \
                 18446744073709551615"
                    .into()
            )
        );
        assert_eq!(
            said(parse_scenario_rate("99999999999tbit")),
            Err("rate \"99999999999tbit\" is too large".into())
        );
        assert_eq!(
            said(parse_scenario_size("1x")),
            Err(
                "unknown unit \"x\" in size \"1x\": expected a size such as \"1514b\", \
                 \"64kib\" or \"1mb\""
                    .into()
            )
        );
        assert_eq!(
            parse_scenario_duration("10").map_err(|e| e.to_string()),
            Err(
                "duration \"10\" has no unit: expected a duration such as \"10ms\", \
                 \"500us\", \"1.5s\" or \"0\""
                    .into()
            )
        );
        assert_eq!(
            parse_scenario_percent("5x").map_err(|e| e.to_string()),
            Err(
                "unknown unit \"x\" in percentage \"5x\": expected a percentage such as \
                 \"5%\" or \"0.1%\""
                    .into()
            )
        );
        assert_eq!(
            parse_queue_limit("1.5pkt").map_err(|e| e.to_string()),
            Err(
                "invalid queue limit \"1.5pkt\": expected a limit such as \"100pkt\", \
                 \"150kb\" or \"100ms\""
                    .into()
            )
        );
        assert_eq!(
            said(parse_scenario_rate("8MBps")),
            Err(
                "ambiguous rate \"8MBps\": tc reads \"MBps\" as bytes per second; write \
                 bits per second, such as \"100mbit\""
                    .into()
            )
        );
    }
}
