//! The document of `sonde stress --steps`: CPU load against offered rate, a row per step.
//! A figure not measured (a server that does not report its CPU) is null, never a zero.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepsDocument {
    #[serde(default)]
    pub host: Option<String>,
    /// `"tcp"` or `"udp"`.
    #[serde(default)]
    pub protocol: String,
    pub steps: Vec<LoadStep>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadStep {
    /// Offered over all streams, bits/s.
    pub offered_bps: f64,
    #[serde(default)]
    pub achieved_bps: Option<f64>,
    /// UDP only.
    #[serde(default)]
    pub loss_percent: Option<f64>,
    /// TCP only.
    #[serde(default)]
    pub retransmits: Option<u64>,
    #[serde(default)]
    pub server_cpu_percent: Option<f64>,
    #[serde(default)]
    pub client_cpu_percent: Option<f64>,
    #[serde(default)]
    pub seconds: f64,
    #[serde(default)]
    pub error: Option<String>,
}
