//! The string-typed values of scenario files, checked as they are read so a syntax error
//! points at its line (the `toml` crate adds the position to the message).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use sonde_stats::units::{self, UnitError};

macro_rules! string_value {
    ($(#[$doc:meta])* $name:ident($inner:ty), $parse:expr, $format:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(pub $inner);

        impl TryFrom<String> for $name {
            type Error = UnitError;
            fn try_from(s: String) -> Result<Self, UnitError> {
                let parse: fn(&str) -> Result<$inner, UnitError> = $parse;
                parse(&s).map($name)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                let format: fn($inner) -> String = $format;
                format(v.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&String::from(*self))
            }
        }
    };
}

string_value!(
    /// A rate in bits per second, written `"100mbit"`.
    Rate(u64),
    units::parse_scenario_rate,
    units::format_scenario_rate
);
string_value!(
    /// A duration, written `"10ms"`.
    Dur(Duration),
    units::parse_scenario_duration,
    units::format_scenario_duration
);
string_value!(
    /// A fraction, written as a percentage `"5%"`; range-checked by validation.
    Percent(f64),
    units::parse_scenario_percent,
    units::format_scenario_percent
);
string_value!(
    /// A size in bytes, written `"1514b"` or `"64kib"`.
    Size(u64),
    units::parse_scenario_size,
    units::format_scenario_size
);

/// Why a subnet could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid subnet {given:?}: {reason}")]
pub struct SubnetError {
    /// The text.
    pub given: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

fn split_prefix(s: &str, max: u8) -> Result<(&str, u8), SubnetError> {
    let err = |reason| SubnetError {
        given: s.to_owned(),
        reason,
    };
    let (addr, len) = s
        .split_once('/')
        .ok_or_else(|| err("expected ADDRESS/PREFIX-LENGTH"))?;
    let len: u8 = len.parse().map_err(|_| err("bad prefix length"))?;
    if len > max {
        return Err(err("prefix length too long"));
    }
    Ok((addr, len))
}

/// An IPv4 subnet such as `"10.77.1.0/24"`: the network address, host bits zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Ipv4Subnet {
    /// The network address.
    pub network: Ipv4Addr,
    /// The prefix length.
    pub prefix: u8,
}

impl Ipv4Subnet {
    /// The subnet's address number `n` (network + n).
    pub fn host(self, n: u32) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.network).wrapping_add(n))
    }

    /// True when the two subnets share an address.
    pub fn overlaps(self, other: Ipv4Subnet) -> bool {
        let p = self.prefix.min(other.prefix);
        let mask = u32::MAX.checked_shl(32 - u32::from(p)).unwrap_or(0);
        u32::from(self.network) & mask == u32::from(other.network) & mask
    }
}

impl TryFrom<String> for Ipv4Subnet {
    type Error = SubnetError;
    fn try_from(s: String) -> Result<Self, SubnetError> {
        let (addr, prefix) = split_prefix(&s, 32)?;
        let err = |reason| SubnetError {
            given: s.clone(),
            reason,
        };
        let network: Ipv4Addr = addr.parse().map_err(|_| err("not an IPv4 address"))?;
        let host_mask = u32::MAX.checked_shr(u32::from(prefix)).unwrap_or(0);
        if u32::from(network) & host_mask != 0 {
            return Err(err("host bits set: write the network address"));
        }
        Ok(Ipv4Subnet { network, prefix })
    }
}

impl From<Ipv4Subnet> for String {
    fn from(s: Ipv4Subnet) -> String {
        format!("{}/{}", s.network, s.prefix)
    }
}

/// An IPv6 subnet such as `"fd00:77:0:1::/64"`: the network address, host bits zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Ipv6Subnet {
    /// The network address.
    pub network: Ipv6Addr,
    /// The prefix length.
    pub prefix: u8,
}

impl Ipv6Subnet {
    /// The subnet's address number `n` (network + n).
    pub fn host(self, n: u128) -> Ipv6Addr {
        Ipv6Addr::from(u128::from(self.network).wrapping_add(n))
    }

    /// True when the two subnets share an address.
    pub fn overlaps(self, other: Ipv6Subnet) -> bool {
        let p = self.prefix.min(other.prefix);
        let mask = u128::MAX.checked_shl(128 - u32::from(p)).unwrap_or(0);
        u128::from(self.network) & mask == u128::from(other.network) & mask
    }
}

impl TryFrom<String> for Ipv6Subnet {
    type Error = SubnetError;
    fn try_from(s: String) -> Result<Self, SubnetError> {
        let (addr, prefix) = split_prefix(&s, 128)?;
        let err = |reason| SubnetError {
            given: s.clone(),
            reason,
        };
        let network: Ipv6Addr = addr.parse().map_err(|_| err("not an IPv6 address"))?;
        let host_mask = u128::MAX.checked_shr(u32::from(prefix)).unwrap_or(0);
        if u128::from(network) & host_mask != 0 {
            return Err(err("host bits set: write the network address"));
        }
        Ok(Ipv6Subnet { network, prefix })
    }
}

impl From<Ipv6Subnet> for String {
    fn from(s: Ipv6Subnet) -> String {
        format!("{}/{}", s.network, s.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnets() {
        let a = Ipv4Subnet::try_from("10.77.1.0/24".to_owned()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.host(1), Ipv4Addr::new(10, 77, 1, 1));
        assert!(Ipv4Subnet::try_from("10.77.1.1/24".to_owned()).is_err());
        assert!(Ipv4Subnet::try_from("10.77.1.0/33".to_owned()).is_err());
        let b = Ipv4Subnet::try_from("10.77.0.0/16".to_owned()).unwrap_or_else(|e| panic!("{e}"));
        assert!(a.overlaps(b) && b.overlaps(a));
        let c =
            Ipv6Subnet::try_from("fd00:77:0:1::/64".to_owned()).unwrap_or_else(|e| panic!("{e}"));
        let d =
            Ipv6Subnet::try_from("fd00:77:0:2::/64".to_owned()).unwrap_or_else(|e| panic!("{e}"));
        assert!(!c.overlaps(d));
        assert_eq!(c.host(2).to_string(), "fd00:77:0:1::2");
    }
}
