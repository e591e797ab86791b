//! The document of `sonde stress --storm`: connections opened and closed as fast as the
//! device takes them. Every figure of the `storm` section is required (the report tables
//! them all).

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StormDocument {
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub host: Option<String>,
    pub storm: Storm,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// The storm's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Storm {
    pub seconds: f64,
    /// Attempts in flight at once (`-P`).
    pub concurrency: u32,
    pub attempts: u64,
    pub accepted: u64,
    pub refused: u64,
    pub timed_out: u64,
    pub failed: u64,
    pub accepted_per_second: f64,
    /// Connect times of the accepted ones, ms (null: none accepted).
    pub connect_ms_median: Option<f64>,
    pub connect_ms_p99: Option<f64>,
    pub connect_ms_max: Option<f64>,
    pub partial: bool,
}
