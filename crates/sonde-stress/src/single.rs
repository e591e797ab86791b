//! `sonde stress` without `--ramp`, `--storm`, `--overload` or `--steps`: one run of
//! [`Flows`], its events to the caller's sink, then checked ([`crate::verdict`]).

use crate::flows::{Flows, RunError};
use crate::verdict::Checked;
use sonde_stats::sink::Sink;
use sonde_stats::stress::model::{StressEvent, StressSummary};
use std::sync::atomic::AtomicBool;

/// Runs `flows` once, events to `sink` as they happen (`Start` ... `End`); the summary with
/// its verdict. The sink is not finished: whoever made it finishes it.
///
/// # Errors
/// The run could not be made ([`RunError`]).
pub fn run(
    flows: &Flows,
    stop: &AtomicBool,
    sink: &mut dyn Sink<StressEvent>,
) -> Result<Checked<StressSummary>, RunError> {
    let report = flows.run(stop, sink)?;
    let problems = crate::verdict::problems(&report, flows.mode());
    Ok(Checked { report, problems })
}
