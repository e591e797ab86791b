//! `sonde stress --steps`: CPU load against offered rate, one row per step.
//!
//! Each step is a whole paced test against a sonde server at one offered rate. A row holds
//! what was offered, what arrived, the loss (UDP; TCP retransmits instead of losing), and the
//! CPU both ends spent: the client's own process, and the server process's as the server
//! measured and sent it (`cpu-load`). A server that does not report it leaves the column
//! empty, never zero: an absent figure must not read as an idle server.

use crate::model::{Protocol, TestSummary};
use serde::{Deserialize, Serialize};

/// One step's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadStep {
    /// Offered rate over all streams, bits/s.
    pub offered_bps: f64,
    /// What the receiving end counted, bits/s (sum over streams of the client's direction).
    pub achieved_bps: Option<f64>,
    /// UDP: datagrams lost in percent; TCP: `None`.
    pub loss_percent: Option<f64>,
    /// TCP: the sender's retransmitted segments.
    pub retransmits: Option<u64>,
    /// The server process's user + system CPU time over the step, percent of one core; `None`
    /// when the server did not report it.
    pub server_cpu_percent: Option<f64>,
    /// This client process's user + system CPU over the step, percent of one core.
    pub client_cpu_percent: Option<f64>,
    /// Seconds the step ran.
    pub seconds: f64,
    /// Why the step did not complete.
    pub error: Option<String>,
}

impl LoadStep {
    /// The row of a step offered `offered_bps`, from the test's summary and the server's
    /// process load (percent), if it sent one.
    pub fn of(
        offered_bps: f64,
        s: Option<&TestSummary>,
        server_cpu_percent: Option<f64>,
        error: Option<String>,
    ) -> Self {
        let dir = s.and_then(|s| s.directions.first());
        let received = dir.and_then(|d| d.received.as_ref());
        let sent = dir.and_then(|d| d.sent.as_ref());
        let udp = s.is_some_and(|s| s.protocol == Protocol::Udp);
        Self {
            offered_bps,
            achieved_bps: received.map(|r| r.bits_per_second),
            loss_percent: if udp {
                received
                    .and_then(|r| r.udp_received.as_ref())
                    .map(|u| u.lost_percent)
            } else {
                None
            },
            retransmits: if udp {
                None
            } else {
                sent.and_then(|v| v.tcp.as_ref()).map(|t| t.retransmits)
            },
            server_cpu_percent,
            client_cpu_percent: s.filter(|s| !s.partial).map(|s| s.cpu_local.total),
            seconds: received.map_or(0.0, |r| r.end - r.start),
            error,
        }
    }
}
