//! What one scheduled run produced, in the agent's terms: the figures the metrics need, the
//! document the store keeps, and the error when it failed. A failed run is an outcome like
//! any other (recorded, counted), never a reason to stop the schedule.

use crate::schedule::Kind;

/// One finished run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The peer's label.
    pub peer: String,
    pub kind: Kind,
    /// The run's number for this peer and kind.
    pub seq: u64,
    /// `ipv4` or `ipv6` (the address used), `any` when the run failed before choosing one.
    pub family: String,
    pub started_unix: f64,
    pub ended_unix: f64,
    pub result: RunResult,
    /// Why it failed (also set for a run cut short with partial figures).
    pub error: Option<String>,
    /// The run's parameters (peer, address, rates), as stored.
    pub parameters: serde_json::Value,
    /// The run's result document (start and summary), as stored.
    pub document: Option<serde_json::Value>,
}

impl RunOutcome {
    /// True when the run completed.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
}

/// The figures of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunResult {
    Latency(LatencyFigures),
    Throughput(ThroughputFigures),
    Capacity(CapacityFigures),
    Profile(ProfileFigures),
    /// Nothing measured.
    Failed,
}

/// Figures of a latency run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatencyFigures {
    pub sent: u64,
    pub lost: u64,
    /// Round-trip times, milliseconds (every answered probe, up to the runtime's sample bound).
    pub rtt_ms: Vec<f64>,
}

/// Figures of a throughput run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThroughputFigures {
    /// The rate the test was paced to (bits/s).
    pub paced_bps: u64,
    /// Received rate per direction (`upload`: this agent sent).
    pub received_bps: Vec<(&'static str, f64)>,
    /// A UDP test's datagrams per direction, as the receiver counted them.
    pub udp: Vec<(&'static str, UdpFigures)>,
}

/// What the receiver of a UDP test counted.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UdpFigures {
    /// Datagrams expected (received and lost).
    pub packets: u64,
    pub lost: u64,
    /// RFC 3550 interarrival jitter at the end, milliseconds.
    pub jitter_ms: f64,
}

/// Figures of a capacity run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CapacityFigures {
    /// The sustained rate of the long trains (else their asymptotic dispersion rate), bits/s.
    pub bps: f64,
}

/// Figures of a profile run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProfileFigures {
    /// The highest loss ratio of any stream (0..1).
    pub worst_loss_ratio: f64,
}

/// `ipv4`/`ipv6` of an address as the runtime writes it (`1.2.3.4:5`, `[::1]:5`, `::1`).
pub fn family_of(addr: &str) -> Option<&'static str> {
    let ip = addr
        .parse::<std::net::SocketAddr>()
        .map(|a| a.ip())
        .or_else(|_| addr.parse::<std::net::IpAddr>())
        .ok()?;
    Some(if ip.to_canonical().is_ipv4() {
        "ipv4"
    } else {
        "ipv6"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_of_addresses() {
        assert_eq!(family_of("127.0.0.1:5201"), Some("ipv4"));
        assert_eq!(family_of("[::1]:5201"), Some("ipv6"));
        assert_eq!(family_of("[::ffff:10.0.0.1]:1"), Some("ipv4"));
        assert_eq!(family_of("fe80::1"), Some("ipv6"));
        assert_eq!(family_of("nonsense"), None);
    }
}
