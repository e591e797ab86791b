//! The document of one `sonde stress` run (`-J` without `--ramp`, `--steps`, `--storm` or
//! `--overload`): what it set out to do (`start`), how opening went (`connect`), each
//! interval's per-connection speeds and fairness (`intervals`), the totals (`end`, with a
//! `udp` section for `-u`), and the notes.
//!
//! Required: what `sonde report` draws or tabulates as a number (speeds, byte counts, close
//! counts, connect counts); a document without one is refused, never read as a zero. The
//! rest reads as its default when absent.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// A connection's interval figures are the runtime's own.
pub use sonde_stats::stress::model::ConnRate;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    /// Absent when the run failed before it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Connect>,
    #[serde(default)]
    pub intervals: Vec<Interval>,
    /// Absent when the run ended before its summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<End>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// What the run was asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// The host as the user typed it.
    #[serde(default)]
    pub remote: String,
    #[serde(default)]
    pub port: u16,
    /// `"discard"`, `"chargen"` or `"echo"`.
    pub mode: String,
    /// `"tcp"` or `"udp"` (absent in documents from before UDP: TCP).
    #[serde(default = "super::tcp")]
    pub transport: String,
    /// Connections (UDP: flows) asked for.
    pub connections: u32,
    #[serde(default)]
    pub duration_secs: f64,
    #[serde(default)]
    pub interval_secs: f64,
    pub connect_timeout_secs: f64,
}

/// How opening the connections went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Connect {
    pub asked: u32,
    pub connected: u32,
    pub refused: u32,
    pub timed_out: u32,
    pub other_failed: u32,
    /// From the first connect to the last one settled.
    pub seconds: f64,
    /// The first failure other than a refusal or time-out.
    #[serde(default)]
    pub first_error: Option<String>,
}

/// One report interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    #[serde(default)]
    pub start: f64,
    pub end: f64,
    #[serde(default)]
    pub connections: Vec<ConnRate>,
    #[serde(default)]
    pub sent_bytes: u64,
    #[serde(default)]
    pub received_bytes: u64,
    #[serde(default)]
    pub sent_bps: f64,
    #[serde(default)]
    pub received_bps: f64,
    /// Jain's index each way; null where nothing moved that way.
    #[serde(default)]
    pub fairness_sent: Option<f64>,
    #[serde(default)]
    pub fairness_received: Option<f64>,
    /// Ends within `--warmup`: not counted in the end's rates, fairness and zero shares.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

/// The run's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// Seconds measured.
    pub seconds: f64,
    pub connect: Connect,
    pub connections: Vec<ConnTotal>,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub sent_bps: f64,
    pub received_bps: f64,
    #[serde(default)]
    pub fairness_sent: Option<f64>,
    #[serde(default)]
    pub fairness_received: Option<f64>,
    pub closed_clean: u32,
    pub closed_reset: u32,
    pub closed_timeout: u32,
    pub failed_during_run: u32,
    pub echo_mismatched_bytes: u64,
    #[serde(default)]
    pub echo_unreturned_bytes: u64,
    #[serde(default)]
    pub partial: bool,
    /// `-u` runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<Udp>,
    /// `--warmup`: seconds whose intervals the rates, fairness and zero shares leave out.
    #[serde(default)]
    pub warmup_secs: f64,
    /// The largest of the connections' `zero_share`.
    #[serde(default)]
    pub zero_share_worst: Option<f64>,
}

/// One connection over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnTotal {
    pub id: u32,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub sent_bps: f64,
    pub received_bps: f64,
    /// `"clean"`, `"reset"`, `"timeout"`, `"failed_during_run"` or `"udp"`.
    pub close: String,
    #[serde(default)]
    pub error: Option<String>,
    /// Bytes read after this end's FIN.
    #[serde(default)]
    pub drained_bytes: u64,
    /// The share (0..1) of the counted intervals in which it moved nothing.
    #[serde(default)]
    pub zero_share: Option<f64>,
}

/// A UDP run's datagrams, echo figures and what the client could tell about a reply cap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Udp {
    pub datagram_bytes: u64,
    pub offered_bps: f64,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    #[serde(default)]
    pub send_errors: u64,
    #[serde(default)]
    pub first_send_error: Option<String>,
    #[serde(default)]
    pub echo: Option<Echo>,
    #[serde(default)]
    pub reply_cap_per_sec: Option<f64>,
    #[serde(default)]
    pub replies_stopped_at: Option<f64>,
    #[serde(default)]
    pub largest_reply_bytes: u64,
    #[serde(default)]
    pub oversized_replies: u64,
}

/// UDP echo: numbered requests and their replies over every flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Echo {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    #[serde(default)]
    pub unknown: u64,
    #[serde(default)]
    pub rtt: Option<Rtt>,
}

/// Round-trip times of the distinct echo replies, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Rtt {
    pub samples: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub median_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    pub stddev_ms: f64,
    pub variance_ms2: f64,
}
