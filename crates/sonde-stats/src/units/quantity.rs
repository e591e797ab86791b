//! The two quantities a test carries from the flag to the socket, as types rather than bare
//! `u64`s: a [`Rate`] in bits per second and a [`Size`] in bytes.
//!
//! Both read and print through this module's one parser and one formatter, so a rate is
//! spelled the same in a flag, a scenario file and the table; and both are
//! `#[serde(transparent)]`, so on the wire and in JSON they stay the plain numbers they were.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{
    format_bitrate, format_bytes, parse_rate, parse_scenario_rate, parse_scenario_size, parse_size,
    UnitError,
};

/// A bit rate: whole bits per second. Zero is what a sender reads as "no limit"
/// ([`Rate::UNLIMITED`]), as iperf3's `-b 0`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Rate(u64);

impl Rate {
    /// No limit: a sender paces nothing.
    pub const UNLIMITED: Rate = Rate(0);

    /// `bits` bits per second.
    pub const fn from_bits_per_sec(bits: u64) -> Self {
        Self(bits)
    }

    /// Bits per second.
    pub const fn bits_per_sec(self) -> u64 {
        self.0
    }

    /// Whole bytes per second (rounded down), as a socket option takes it.
    pub const fn bytes_per_sec(self) -> u64 {
        self.0 / 8
    }

    /// Bytes per second, for a pacer's arithmetic.
    pub fn bytes_per_sec_f64(self) -> f64 {
        self.0 as f64 / 8.0
    }

    /// True for 0, "no limit".
    pub const fn is_unlimited(self) -> bool {
        self.0 == 0
    }

    /// A scenario file's spelling, tc's (`"100mbit"`); see [`parse_scenario_rate`].
    ///
    /// # Errors
    /// A [`UnitError`] naming the problem.
    pub fn parse_scenario(s: &str) -> Result<Self, UnitError> {
        parse_scenario_rate(s).map(Self)
    }
}

impl FromStr for Rate {
    type Err = UnitError;
    /// The command line's spelling, iperf3's (`97.2m`, `1G`); see [`parse_rate`].
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_rate(s).map(Self)
    }
}

impl fmt::Display for Rate {
    /// iperf3's table: `942 Mbits/sec`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bitrate(self.0 as f64))
    }
}

/// A byte count.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Size(u64);

impl Size {
    /// Nothing: for a byte budget, "no budget".
    pub const ZERO: Size = Size(0);

    /// `bytes` bytes.
    pub const fn from_bytes(bytes: u64) -> Self {
        Self(bytes)
    }

    /// Bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// True for 0 bytes.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Bytes as a buffer's length; a size beyond the address space (only on a 32-bit host)
    /// is an error, not a wrapped number.
    ///
    /// # Errors
    /// [`SizeTooLarge`] with the size and what it was for.
    pub fn to_usize(self, what: &'static str) -> Result<usize, SizeTooLarge> {
        usize::try_from(self.0).map_err(|_| SizeTooLarge { size: self, what })
    }

    /// Bytes as a buffer's length, for a size already bounded where it entered (a checked
    /// test request's length, a socket buffer): saturates at `usize::MAX` on a 32-bit host,
    /// which the allocation or socket option then refuses, instead of wrapping.
    pub fn as_len(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }

    /// Bytes as a 32-bit field (a datagram's length, a socket buffer).
    ///
    /// # Errors
    /// [`SizeTooLarge`] with the size and what it was for.
    pub fn to_u32(self, what: &'static str) -> Result<u32, SizeTooLarge> {
        u32::try_from(self.0).map_err(|_| SizeTooLarge { size: self, what })
    }

    /// A scenario file's spelling (`"64kib"`); see [`parse_scenario_size`].
    ///
    /// # Errors
    /// A [`UnitError`] naming the problem.
    pub fn parse_scenario(s: &str) -> Result<Self, UnitError> {
        parse_scenario_size(s).map(Self)
    }
}

/// A size too big for the field it goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{what} of {size} ({bytes} bytes) is too large", bytes = size.0)]
pub struct SizeTooLarge {
    pub size: Size,
    pub what: &'static str,
}

impl FromStr for Size {
    type Err = UnitError;
    /// The command line's spelling, iperf3's (`128K`, powers of 1024); see [`parse_size`].
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_size(s).map(Self)
    }
}

impl fmt::Display for Size {
    /// iperf3's table: `1.10 MBytes`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_print_and_serialize_as_before() {
        let r: Rate = "97.2m".parse().unwrap();
        assert_eq!(r.bits_per_sec(), 97_200_000);
        assert_eq!(r.to_string(), "97.2 Mbits/sec");
        assert_eq!(
            Rate::parse_scenario("100mbit").unwrap().bits_per_sec(),
            100_000_000
        );
        assert!(Rate::parse_scenario("100").is_err());
        assert!("0.5".parse::<Rate>().is_err());
        assert!("0".parse::<Rate>().unwrap().is_unlimited());
        assert_eq!(Rate::default(), Rate::UNLIMITED);
        assert_eq!(serde_json::to_string(&r).unwrap(), "97200000");
        assert_eq!(
            serde_json::from_str::<Rate>("5").unwrap(),
            Rate::from_bits_per_sec(5)
        );
        assert_eq!(Rate::from_bits_per_sec(8000).bytes_per_sec_f64(), 1000.0);
    }

    #[test]
    fn sizes_read_print_and_serialize_as_before() {
        let s: Size = "128K".parse().unwrap();
        assert_eq!(s.bytes(), 131_072);
        assert_eq!(s.to_string(), "128 KBytes");
        assert_eq!(Size::parse_scenario("64kib").unwrap().bytes(), 65_536);
        assert!("1x".parse::<Size>().is_err());
        assert_eq!(serde_json::to_string(&s).unwrap(), "131072");
        assert_eq!(
            serde_json::from_str::<Size>("7").unwrap(),
            Size::from_bytes(7)
        );
        assert!(Size::ZERO.is_zero() && !s.is_zero());
        assert_eq!(s.to_u32("a length"), Ok(131_072));
        let big = Size::from_bytes(1 << 33);
        let err = big.to_u32("a window").unwrap_err();
        assert_eq!(
            err.to_string(),
            "a window of 8.00 GBytes (8589934592 bytes) is too large"
        );
    }
}
