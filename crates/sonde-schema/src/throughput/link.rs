//! `start.sonde.link`: both ends' links and TCP settings, as a sonde client records them.
//!
//! Every figure is written, `null` when that end's OS would not say (loopback has no speed)
//! or, for the whole `remote` object, when the server did not report its own (an older
//! sonde, iperf3).

use serde::{Deserialize, Serialize};

/// `start.sonde.link`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// This host's; null when no interface held the control connection's address.
    #[serde(default)]
    pub local: Option<LinkFacts>,
    /// The server's; null when it did not report them.
    #[serde(default)]
    pub remote: Option<LinkFacts>,
}

/// One end's link facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkFacts {
    /// The interface the test leaves by.
    #[serde(default)]
    pub interface: String,
    /// Bits per second, as the driver reports it.
    #[serde(default)]
    pub speed_bps: Option<u64>,
    /// `"full"` or `"half"`.
    #[serde(default)]
    pub duplex: Option<String>,
    #[serde(default)]
    pub autoneg: Option<bool>,
    /// The driver, or `"none (virtual)"` for an interface without a device.
    #[serde(default)]
    pub driver: Option<String>,
    #[serde(default)]
    pub mtu: Option<u32>,
    #[serde(default)]
    pub operstate: Option<String>,
    #[serde(default)]
    pub gso: Option<bool>,
    #[serde(default)]
    pub gro: Option<bool>,
    #[serde(default)]
    pub tso: Option<bool>,
    /// `net.ipv4.tcp_rmem`: min, default, max bytes.
    #[serde(default)]
    pub tcp_rmem: Option<[u64; 3]>,
    /// `net.ipv4.tcp_wmem`: min, default, max bytes.
    #[serde(default)]
    pub tcp_wmem: Option<[u64; 3]>,
    /// `net.ipv4.tcp_congestion_control`.
    #[serde(default)]
    pub tcp_congestion_control: Option<String>,
}
