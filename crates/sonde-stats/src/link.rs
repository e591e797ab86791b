//! The facts of the link a test leaves by, at each end: the interface, its speed, duplex,
//! auto-negotiation, driver, MTU and offloads, and the host's TCP settings that shape a
//! result (`tcp_rmem`, `tcp_wmem`, the default congestion control).
//!
//! Why they are recorded: a throughput figure means little without the link under it (a
//! 100 Mbit/s port, a jumbo MTU, GRO off on a board). Every field is an `Option`: `None` is
//! "the OS would not say" (loopback has no speed, a virtual NIC no auto-negotiation), never a
//! guess. The platform crate reads them; the control protocol carries the server's in its
//! welcome, which is why the type sits here, below both, and why [`LinkFacts::bounded`]
//! exists: a peer's facts are shown on a terminal and written to documents.

use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// The driver text of an interface with no device behind it (loopback, veth, a bridge).
pub const VIRTUAL_DRIVER: &str = "none (virtual)";

/// Longest text a peer's facts may carry in one field once [`LinkFacts::bounded`].
const MAX_TEXT: usize = 64;

/// One end's link and TCP settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkFacts {
    /// The interface holding the address the test's control connection leaves from.
    pub interface: String,
    /// Its speed as the driver reports it (`/sys/class/net/IF/speed`).
    #[serde(default)]
    pub speed_bps: Option<Rate>,
    /// `"full"` or `"half"`.
    #[serde(default)]
    pub duplex: Option<String>,
    /// Auto-negotiation on (ethtool's link settings).
    #[serde(default)]
    pub autoneg: Option<bool>,
    /// The device's driver, or [`VIRTUAL_DRIVER`] when there is no device.
    #[serde(default)]
    pub driver: Option<String>,
    #[serde(default)]
    pub mtu: Option<u32>,
    /// `"up"`, `"down"`, `"dormant"`... (`None` where the kernel says `unknown`, as on `lo`).
    #[serde(default)]
    pub operstate: Option<String>,
    /// Generic segmentation offload.
    #[serde(default)]
    pub gso: Option<bool>,
    /// Generic receive offload.
    #[serde(default)]
    pub gro: Option<bool>,
    /// TCP segmentation offload.
    #[serde(default)]
    pub tso: Option<bool>,
    /// `net.ipv4.tcp_rmem`: min, default, max bytes.
    #[serde(default)]
    pub tcp_rmem: Option<[u64; 3]>,
    /// `net.ipv4.tcp_wmem`: min, default, max bytes.
    #[serde(default)]
    pub tcp_wmem: Option<[u64; 3]>,
    /// `net.ipv4.tcp_congestion_control`: the default for new sockets.
    #[serde(default)]
    pub tcp_congestion_control: Option<String>,
}

impl LinkFacts {
    /// Whether the interface has no device behind it (its speed, if any, is a constant of
    /// its driver: veth says 10 Gbit/s whatever carries it).
    pub fn is_virtual(&self) -> bool {
        self.driver.as_deref() == Some(VIRTUAL_DRIVER)
    }

    /// The facts with every text cut to a sane length and stripped of control characters:
    /// what a reader of a peer's facts keeps.
    pub fn bounded(mut self: Box<Self>) -> Box<Self> {
        let clean = |s: &mut String| {
            *s = s
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_TEXT)
                .collect();
        };
        clean(&mut self.interface);
        for s in [
            &mut self.duplex,
            &mut self.driver,
            &mut self.operstate,
            &mut self.tcp_congestion_control,
        ]
        .into_iter()
        .flatten()
        {
            clean(s);
        }
        self
    }
}

/// Both ends' facts as a client records them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkPair {
    /// This host's; `None` when no interface holds the control connection's address.
    #[serde(default)]
    pub local: Option<LinkFacts>,
    /// The server's; `None` when it did not report them (an older sonde, iperf3).
    #[serde(default)]
    pub remote: Option<LinkFacts>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peers_texts_are_cut_and_cleaned() {
        let f = Box::new(LinkFacts {
            interface: "eth0\u{1b}[31m".into(),
            driver: Some("x".repeat(10_000)),
            ..LinkFacts::default()
        })
        .bounded();
        assert_eq!(f.interface, "eth0[31m");
        assert_eq!(f.driver.map(|d| d.len()), Some(MAX_TEXT));
    }

    #[test]
    fn virtual_is_the_driver_text() {
        let mut f = LinkFacts::default();
        assert!(!f.is_virtual());
        f.driver = Some(VIRTUAL_DRIVER.into());
        assert!(f.is_virtual());
    }
}
