//! `sonde capacity --longest-train`: the longest train that arrives without loss, searched
//! (the pure [`LengthSearch`]: doubling, then bisection) one train per test: each length is
//! one ordinary capacity test of a single long train and no short ones, so the server needs
//! nothing new. What arrived of each train is counted from its datagrams; a train lost
//! whole is one that arrived with nothing. The search ends at its bound, at the time limit,
//! or on the first failure that is not the loss of a train, keeping what it tried.

use super::client::run_with;
use sonde_proto::capacity::{limits, CapacityPlan};
use sonde_runtime_core::connect::ClientConfig;
use sonde_runtime_core::error::RunError;
use sonde_stats::capacity::longest::LengthSearch;
pub use sonde_stats::capacity::longest::LongestOutcome;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Length of the first train tried.
pub const START: u32 = 16;

/// Searches train lengths up to `max` (within the plan's limits) for at most `limit`, with
/// `cfg`'s datagram length and `spacing_ms` between trains.
pub fn run(
    cfg: &ClientConfig,
    max: u32,
    spacing_ms: u32,
    limit: Duration,
    interrupt: &AtomicBool,
) -> (LongestOutcome, Option<RunError>) {
    let min = *limits::LONG_LEN.start();
    let max = max.clamp(min, *limits::LONG_LEN.end());
    let mut out = LongestOutcome {
        search: LengthSearch::new(START, min, max),
        seconds: 0.0,
        time_limited: false,
        limit_secs: limit.as_secs_f64(),
    };
    let t0 = Instant::now();
    let mut error = None;
    while let Some(len) = out.search.next() {
        if t0.elapsed() >= limit {
            out.time_limited = true;
            break;
        }
        let plan = CapacityPlan {
            short_trains: 0,
            long_trains: 1,
            long_len: len,
            spacing_ms,
            ..CapacityPlan::default()
        };
        let mut one = cfg.clone();
        one.params = super::params(plan, cfg.params.length_u32());
        let (o, err) = run_with(&one, None, interrupt);
        let received = o.long_received.first().copied().unwrap_or(0);
        match err {
            // A train lost whole (or its tail and then the wait) is a measured loss.
            None | Some(RunError::Timeout(_)) => out.search.record(len, received),
            Some(e) => {
                error = Some(e);
                break;
            }
        }
    }
    out.seconds = t0.elapsed().as_secs_f64();
    (out, error)
}
