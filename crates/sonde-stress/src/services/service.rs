//! What the services' driver and its per-protocol handlers share: which service a socket
//! serves ([`Service`]), the counters they all add to ([`ServicesStats`]), and how event-loop
//! tokens are numbered.
//!
//! A leaf of `services`: the TCP and UDP handlers use it, and the driver that calls them
//! ([`super::Services`]) does too, so neither handler imports the driver.

/// One of the three services.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Echo,
    Discard,
    Chargen,
}

impl Service {
    pub fn name(self) -> &'static str {
        match self {
            Self::Echo => "echo",
            Self::Discard => "discard",
            Self::Chargen => "chargen",
        }
    }
}

/// Counters of a services run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServicesStats {
    pub accepted: u64,
    pub refused_over_limit: u64,
    pub open_now: usize,
    pub open_peak: usize,
    pub closed: u64,
    pub udp_requests: u64,
    pub udp_replies: u64,
    pub udp_rate_limited: u64,
}

/// Tokens: listeners are their index, UDP sockets `UDP_BASE` + index, connections
/// `CONN_BASE` + slab index.
pub(super) const UDP_BASE: usize = 1 << 15;
pub(super) const CONN_BASE: usize = 1 << 16;
