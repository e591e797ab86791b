//! One element of `intervals` (and of `sonde.peer_intervals`, and the data of a JSON-lines
//! `interval`): each stream's figures over the interval and the sums of this host.
//!
//! The objects share their figures: a [`Span`] (when, how many bytes, at what rate), TCP's
//! sender figures ([`TcpFigures`]) and UDP's ([`UdpFigures`]), the latter two present only
//! where they apply. `bytes` and `bits_per_second` are required: a sum or a stream without
//! them is refused, never drawn as a zero.

use serde::{Deserialize, Serialize};

use super::count::{count, opt_count};

/// One interval report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    #[serde(default)]
    pub streams: Vec<IntervalStream>,
    /// This host's sum; in a bidirectional test the client-to-server one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<Sum>,
    /// The server-to-client sum of a bidirectional test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_bidir_reverse: Option<Sum>,
}

/// When a figure was measured and what moved: seconds from the test's start, payload bytes
/// and bits per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Span {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    #[serde(deserialize_with = "count")]
    pub bytes: u64,
    pub bits_per_second: f64,
}

impl Span {
    /// `start` to `end` with `bytes` at `bits_per_second` (`seconds` is their difference).
    pub fn new(start: f64, end: f64, bytes: u64, bits_per_second: f64) -> Self {
        Self {
            start: Some(start),
            end: Some(end),
            seconds: Some(end - start),
            bytes,
            bits_per_second,
        }
    }
}

/// A TCP sender's figures at the end of an interval (TCP_INFO). `snd_wnd` and `reorder` are
/// left out where the kernel does not give them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpFigures {
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_cwnd: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_wnd: Option<u64>,
    /// Microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rttvar: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmtu: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<u64>,
}

/// UDP's figures: a sender's `packets` alone, a receiver's all of them (`out_of_order` and
/// `duplicates` are sonde's in intervals; iperf3 has them only at the end, if at all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpFigures {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_packets: Option<u64>,
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_percent: Option<f64>,
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_of_order: Option<u64>,
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<u64>,
}

/// One element of `intervals[].streams`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalStream {
    /// sonde's stream id (iperf3's file descriptor).
    #[serde(deserialize_with = "count")]
    pub socket: u64,
    #[serde(flatten)]
    pub span: Span,
    #[serde(flatten)]
    pub tcp: TcpFigures,
    #[serde(flatten)]
    pub udp: UdpFigures,
    #[serde(default)]
    pub omitted: bool,
    /// This host writes the stream.
    #[serde(default)]
    pub sender: bool,
}

/// A sum over streams: `intervals[].sum*`, and the `end` section's `sum_sent*` and
/// `sum_received*`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sum {
    #[serde(flatten)]
    pub span: Span,
    /// A TCP sender's.
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    #[serde(flatten)]
    pub udp: UdpFigures,
    /// Intervals only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<bool>,
    /// In intervals, this host sent; in the `end` sums, iperf3's quirk (see `end`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<bool>,
}
