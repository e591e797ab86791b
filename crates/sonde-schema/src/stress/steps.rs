//! The document of `sonde stress --steps`: CPU load against offered rate, a row per step.
//! A figure not measured (a server that does not report its CPU, a load probe that failed)
//! is null, never a zero.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// A step and its device reading are the runtime's own results.
pub use sonde_stats::stress::steps::{DeviceLoad, LoadStep};

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
