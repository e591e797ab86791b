//! The document of `sonde stress --steps`: CPU load against offered rate, a row per step.
//! A figure not measured (a server that does not report its CPU, a load probe that failed)
//! is null, never a zero.

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
    /// `--load-probe`: the command that read the device's load at each step's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_probe: Option<String>,
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
    /// The `--load-probe` reading at the step's end; null without a probe.
    #[serde(default)]
    pub device_load: Option<DeviceLoad>,
}

/// One `--load-probe` reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceLoad {
    /// The last number the command printed; null when it failed, timed out or printed none.
    #[serde(default)]
    pub value: Option<f64>,
    /// Its exit status; null when it did not exit by itself (not started, killed).
    #[serde(default)]
    pub exit_status: Option<i32>,
    /// Why there is no value.
    #[serde(default)]
    pub error: Option<String>,
}
