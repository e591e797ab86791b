//! The document of `sonde stress --overload`: how many connections the device held, how it
//! refused the next, how they closed, how long until it accepted again. Every figure of the
//! `overload` section is required (the report tables them all and judges by them).

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The runtime's own names, spelled the same in the document.
pub use sonde_stats::stress::overload::Refusal;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverloadDocument {
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub host: Option<String>,
    pub overload: Overload,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// The overload's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overload {
    pub attempted: u32,
    pub held: u32,
    pub dropped_after_accept: u32,
    pub refusal: Refusal,
    pub first_error: Option<String>,
    pub held_seconds: f64,
    pub closed_clean: u32,
    pub closed_reset: u32,
    pub closed_timeout: u32,
    /// Null: no new connection within the wait.
    pub recovery_seconds: Option<f64>,
    pub partial: bool,
}
