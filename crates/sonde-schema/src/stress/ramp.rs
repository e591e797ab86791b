//! The document of `sonde stress --ramp LO..HI`: a row per connection (UDP: flow) count (with
//! `--repeat N`, the mean of its runs, their maximum and every run), the best step each way.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// A run at one count is the runtime's own result.
pub use sonde_stats::stress::ramp::{RampStep, RampUdp};

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
