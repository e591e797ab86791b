//! Active queue management at a link's bottleneck queue: the scenario's `aqm` keys.
//!
//! Without `aqm` the rate limiter's queue is a tail-drop FIFO, as it always was. With
//! `aqm = "codel"`, `"fq_codel"` or `"pie"` the queue behind the rate limit is managed by that
//! algorithm (RFC 8289, RFC 8290, RFC 8033), which needs the rate: without a bottleneck there
//! is no standing queue to manage, so an AQM without `rate` is refused. The tuning keys each
//! belong to some of the algorithms and are refused with the others, so a setting never
//! silently does nothing.

use std::time::Duration;

use crate::validate::{needs, zero};
use crate::{Impairments, ValidationError};

/// Which queue management the rate limiter's queue uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aqm {
    /// CoDel (RFC 8289): drops at dequeue once the sojourn time stays above target.
    Codel,
    /// FQ-CoDel (RFC 8290): flows hashed to queues served by deficit round robin, each with
    /// CoDel.
    FqCodel,
    /// PIE (RFC 8033): drops at enqueue with a probability steered towards a target delay.
    Pie,
}

impl Aqm {
    /// The name as a scenario writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Aqm::Codel => "codel",
            Aqm::FqCodel => "fq_codel",
            Aqm::Pie => "pie",
        }
    }

    /// The target delay when `aqm_target` is not set: 5 ms for CoDel (RFC 8289 section 4.4)
    /// and FQ-CoDel, 15 ms for PIE (RFC 8033 section 5.2).
    pub fn default_target(self) -> Duration {
        match self {
            Aqm::Codel | Aqm::FqCodel => Duration::from_millis(5),
            Aqm::Pie => Duration::from_millis(15),
        }
    }
}

/// CoDel's `interval` when `aqm_interval` is not set (RFC 8289 section 4.3).
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);
/// FQ-CoDel's number of flow queues when `flows` is not set (RFC 8290 section 4.1.1).
pub const DEFAULT_FLOWS: u32 = 1024;
/// FQ-CoDel's DRR quantum in bytes when `quantum` is not set (RFC 8290 section 4.1.1).
pub const DEFAULT_QUANTUM: u32 = 1514;

/// Checks the `aqm` keys of one direction.
///
/// # Errors
/// [`ValidationError::Needs`] for an AQM without `rate` or a tuning key without the AQM it
/// tunes, [`ValidationError::Zero`] for a zero value.
pub(crate) fn check_aqm(at: &str, imp: &Impairments) -> Result<(), ValidationError> {
    let aqm = imp.aqm;
    if aqm.is_some() && imp.rate.is_none() {
        return Err(needs(at, "aqm", "rate"));
    }
    if imp.aqm_target.is_some() && aqm.is_none() {
        return Err(needs(at, "aqm_target", "aqm"));
    }
    if imp.aqm_interval.is_some() && !matches!(aqm, Some(Aqm::Codel | Aqm::FqCodel)) {
        return Err(needs(at, "aqm_interval", "aqm = \"codel\" or \"fq_codel\""));
    }
    for (field, set) in [
        ("flows", imp.flows.is_some()),
        ("quantum", imp.quantum.is_some()),
    ] {
        if set && aqm != Some(Aqm::FqCodel) {
            return Err(needs(at, field, "aqm = \"fq_codel\""));
        }
    }
    for (field, is_zero) in [
        ("aqm_target", imp.aqm_target.is_some_and(|d| d.0.is_zero())),
        (
            "aqm_interval",
            imp.aqm_interval.is_some_and(|d| d.0.is_zero()),
        ),
        ("flows", imp.flows == Some(0)),
        ("quantum", imp.quantum == Some(0)),
    ] {
        if is_zero {
            return Err(zero(at, field));
        }
    }
    Ok(())
}
