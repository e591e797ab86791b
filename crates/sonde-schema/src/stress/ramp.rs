//! The document of `sonde stress --ramp LO..HI`: a row per connection (UDP: flow) count, the
//! best step each way.

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
    pub ramp: Vec<RampStep>,
    #[serde(default)]
    pub best_sent: Option<RampStep>,
    #[serde(default)]
    pub best_received: Option<RampStep>,
    #[serde(flatten)]
    pub envelope: Envelope,
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
