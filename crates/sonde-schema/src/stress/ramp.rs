//! The document of `sonde stress --ramp LO..HI`: a row per connection (UDP: flow) count (with
//! `--repeat N`, the mean of its runs, their maximum and every run), the best step each way.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampDocument {
    /// `"discard"`, `"chargen"` or `"echo"`.
    #[serde(default)]
    pub mode: String,
    /// `"tcp"` or `"udp"` (absent in documents from before UDP: TCP).
    #[serde(default = "super::tcp")]
    pub transport: String,
    /// `"TCP payload"` or `"UDP payload"`: what the rates count.
    #[serde(default)]
    pub layer: Option<String>,
    /// Runs per count (`--repeat`; absent in older documents: 1).
    #[serde(default = "one")]
    pub repeat: u32,
    pub ramp: Vec<RampRow>,
    #[serde(default)]
    pub best_sent: Option<RampStep>,
    #[serde(default)]
    pub best_received: Option<RampStep>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

fn one() -> u32 {
    1
}

/// One count: the mean of its runs (the row's own keys, as a single run's in older documents),
/// their maximum and every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampRow {
    #[serde(flatten)]
    pub mean: RampStep,
    /// Each figure's largest over the runs (absent in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<RampStep>,
    /// Every run at this count, in order (absent in older documents).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RampStep>,
}

/// One step: a whole run at one count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampStep {
    /// Connections (flows) asked for.
    pub connections: u32,
    #[serde(default)]
    pub opened: u32,
    /// Total rate to the device and from it, bits/s.
    pub sent_bps: f64,
    pub received_bps: f64,
    #[serde(default)]
    pub fairness_sent: Option<f64>,
    #[serde(default)]
    pub fairness_received: Option<f64>,
    /// TCP steps only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_clean: Option<u32>,
    /// UDP steps only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<RampUdp>,
    /// The largest share of intervals in which a connection moved nothing (absent in older
    /// documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_share_worst: Option<f64>,
}

/// A UDP step's datagrams and loss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampUdp {
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub replies: u64,
    /// Requests without a reply, percent (null for discard).
    #[serde(default)]
    pub loss_percent: Option<f64>,
    #[serde(default)]
    pub send_errors: u64,
}
