//! What a profile run measured: per stream and per burst. These values are what both ends
//! exchange at the end of a run (the receiving end counts) and what the reporters render.
//!
//! Per-burst records are kept only for bursts that were incomplete or late ("exceptions"):
//! every other burst arrived whole and in time, so the loss-per-burst series is complete
//! without them, and a day-long profile still fits one control message. At most
//! [`MAX_EXCEPTIONS`] per run are kept, spread over the streams; `exceptions_dropped` counts
//! the rest.

use crate::spec::Direction;
use serde::{Deserialize, Serialize};

/// Most per-burst exception records in one run (all streams together).
pub const MAX_EXCEPTIONS: usize = 1500;

/// How one-way delays were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DelayBasis {
    /// Receive time minus send stamp, the two clocks taken as agreeing (`--clock-synced`).
    Synced,
    /// An estimate: the clock offset taken as the stream's smallest raw delay, so delays are
    /// above the fastest datagram of the stream (queueing and serialisation, not the
    /// path's propagation time).
    AboveMinimum,
    /// An estimate: receive time minus send stamp, corrected by the clock offset the client
    /// measured with round-trip probes just before the run ([`ClockOffset`]). Right to within
    /// the offset's uncertainty, and only as right as the path is symmetric.
    OffsetEstimated,
}

impl DelayBasis {
    /// A label for tables.
    pub fn label(self) -> &'static str {
        match self {
            DelayBasis::Synced => "one-way delay (clocks synced)",
            DelayBasis::AboveMinimum => {
                "one-way delay estimate: above each stream's fastest datagram (clock offset not measured)"
            }
            DelayBasis::OffsetEstimated => {
                "one-way delay estimate: corrected by the clock offset measured before the run"
            }
        }
    }
}

/// The two ends' clock offset, estimated by the client before a run from round-trip probes
/// to the server (the NTP on-wire calculation over the fastest probes, which assumes the path
/// is as fast one way as the other).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// Server clock minus client clock, nanoseconds.
    pub offset_ns: i64,
    /// Half the fastest probe's round trip: the offset is right to within this, even on a
    /// path as asymmetric as it can be.
    pub uncertainty_ns: i64,
    /// Probes answered.
    pub probes: u32,
}

impl ClockOffset {
    /// What a receiver subtracts from its raw delays (receive time minus send stamp): the
    /// server's clock runs `offset_ns` ahead of the client's, so the server's raw delays are
    /// that much too long and the client's that much too short.
    pub fn correction_ns(self, receiver_is_server: bool) -> i64 {
        if receiver_is_server {
            self.offset_ns
        } else {
            self.offset_ns.saturating_neg()
        }
    }
}

/// One-way delays of a stream's datagrams, milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DelaySummary {
    pub basis: DelayBasis,
    /// Datagrams whose delay was kept (all received, up to the receiver's cap).
    pub samples: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Percentiles 0, 1, ..., 100: the delay CDF.
    pub percentiles_ms: Vec<f64>,
}

/// A burst that was not complete or not in time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BurstRecord {
    /// Burst number from 0.
    pub index: u64,
    /// When it was due, seconds after the start of the profile.
    pub at_s: f64,
    pub received: u32,
    pub expected: u32,
    /// One-way delay of the datagram of this burst that arrived last; None when none did.
    pub last_delay_ms: Option<f64>,
    /// That delay exceeded the stream's late threshold.
    pub late: bool,
}

/// One stream's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    pub id: u32,
    pub name: String,
    pub direction: Direction,
    pub size: u32,
    pub burst: u32,
    /// The plan's time between the datagrams of a burst, ms (0: back to back; 0 from peers
    /// that did not send it).
    #[serde(default)]
    pub gap_ms: f64,
    pub period_ms: f64,
    /// When the first burst was due, ms after the start (so burst `k` was due at
    /// `offset_ms + k * period_ms`); 0 from peers that did not send it.
    #[serde(default)]
    pub offset_ms: f64,
    pub late_ms: f64,
    /// Datagrams the sender sent.
    pub sent: u64,
    /// Distinct datagrams that arrived.
    pub received: u64,
    pub lost: u64,
    /// Arrived, but later than `late_ms`.
    pub late: u64,
    /// Arrived after a datagram with a higher sequence number.
    pub out_of_order: u64,
    pub duplicates: u64,
    /// Datagrams that do not belong to the stream's plan (ignored).
    pub foreign: u64,
    pub delay: Option<DelaySummary>,
    /// Measured: the mean time between consecutive arrivals of one burst, per sequence step
    /// (a lost datagram between two arrivals makes their time two steps), ms; None when no
    /// two datagrams of one burst arrived in order (or from peers that did not measure it).
    #[serde(default)]
    pub burst_spacing_ms: Option<f64>,
    /// Bursts the sender started.
    pub bursts_sent: u64,
    /// Bursts whose every datagram arrived.
    pub bursts_complete: u64,
    /// Bursts whose last-arriving datagram was late.
    pub bursts_late: u64,
    /// Incomplete or late bursts, in order.
    pub exceptions: Vec<BurstRecord>,
    pub exceptions_dropped: u64,
}

impl StreamResult {
    /// Lost datagrams as a percentage of those sent.
    pub fn loss_percent(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 * 100.0 / self.sent as f64
        }
    }
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileReport {
    pub profile: String,
    /// Seconds the profile was planned to run.
    pub planned_s: f64,
    /// Seconds it ran.
    pub ran_s: f64,
    pub clock_synced: bool,
    /// The clock offset the one-way delays were corrected by, when it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset: Option<ClockOffset>,
    /// Why the run ended early (Ctrl-C, a failure); the figures are then partial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_early: Option<String>,
    pub streams: Vec<StreamResult>,
}
