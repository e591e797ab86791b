//! The `end` section of a throughput document: each stream's totals, the sums per direction,
//! the CPU use of both ends, the congestion control and sonde's `end.sonde`.
//!
//! A run that died before its summary writes only `end.sonde`, so every part is optional.
//! The `sender` flag of the sums follows iperf3's quirk: it says whether the reporting host
//! sent that direction, except in UDP's `sum_sent` (always true) and `sum_received` (always
//! false).

use serde::{Deserialize, Serialize};

use super::count::{count, opt_count};

use super::interval::{Span, Sum};

/// The `end` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct End {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<EndStream>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_sent: Option<Sum>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_received: Option<Sum>,
    /// UDP's combined view of the direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<UdpTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_sent_bidir_reverse: Option<Sum>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_received_bidir_reverse: Option<Sum>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_bidir_reverse: Option<UdpTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_utilization_percent: Option<Cpu>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_tcp_congestion: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_tcp_congestion: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sonde: Option<EndSonde>,
}

/// One element of `end.streams`: TCP's `sender` and `receiver` views (each only when that
/// end's figures arrived), or UDP's combined `udp` view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndStream {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<EndSide>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<EndSide>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpTotals>,
}

/// One end's view of a TCP stream. The sender's carries its TCP figures (`max_snd_wnd` and
/// `reorder` only where known); the receiver's none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndSide {
    pub socket: u64,
    #[serde(flatten)]
    pub span: Span,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_snd_cwnd: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_snd_wnd: Option<u64>,
    /// Microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rtt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rtt: Option<u64>,
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_rtt: Option<u64>,
    /// True in the `sender` object, false in the `receiver` one.
    #[serde(default)]
    pub sender: bool,
}

/// UDP's combined view of a stream (`end.streams[].udp`, with its `socket`) or of a
/// direction (`end.sum*`): bytes and rate from the sender's view when known (the span is left
/// out when neither end's arrived), loss and jitter from the receiver's. The receiver's
/// counts are required; the span is not read (a span without its rate reads as none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpTotals {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<u64>,
    #[serde(flatten)]
    pub span: Option<Span>,
    pub jitter_ms: f64,
    #[serde(deserialize_with = "count")]
    pub lost_packets: u64,
    #[serde(deserialize_with = "count")]
    pub packets: u64,
    pub lost_percent: f64,
    #[serde(default, deserialize_with = "count")]
    pub out_of_order: u64,
    /// sonde's (iperf3 counts duplicates as out of order).
    #[serde(default, deserialize_with = "count")]
    pub duplicates: u64,
    #[serde(default)]
    pub sender: bool,
}

/// `end.cpu_utilization_percent`: percent of one core. The totals are required; sonde
/// writes the remote ones as 0 when they never arrived (`end.sonde.remote_cpu_known`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub host_total: f64,
    #[serde(default)]
    pub host_user: f64,
    #[serde(default)]
    pub host_system: f64,
    pub remote_total: f64,
    #[serde(default)]
    pub remote_user: f64,
    #[serde(default)]
    pub remote_system: f64,
}

/// `end.sonde`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndSonde {
    /// The summary is partial (or there is none).
    #[serde(default)]
    pub partial: bool,
    /// null when the test never started.
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub direction: Option<String>,
    /// The remote CPU figures arrived (documents without the field: taken as known).
    #[serde(default = "known")]
    pub remote_cpu_known: bool,
    /// Why the test ended early; null when it did not.
    #[serde(default)]
    pub error: Option<String>,
    /// The notes seen up to the end.
    #[serde(default)]
    pub notes: Vec<String>,
}

fn known() -> bool {
    true
}
