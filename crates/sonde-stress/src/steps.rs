//! `sonde stress --steps`: CPU load against offered rate, one paced test per rate, in order.
//!
//! This crate does not run the paced test itself (that is the ordinary throughput client, a
//! sonde or iperf3 server's peer): the caller hands in one step as a function of the rate,
//! and this loop decides what runs next and when it stops. A step that fails ends the run
//! (the steps after it are not run), and so does a stop.

use sonde_stats::sink::{deliver, Sink};
use sonde_stats::stress::steps::LoadStep;
use sonde_stats::units::Rate;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The steps: their rates (over all streams) and the pause before each after the first.
#[derive(Debug, Clone, PartialEq)]
pub struct StepsConfig {
    pub rates: Vec<Rate>,
    /// Time between two steps (an iperf3 server refuses a test as busy for a moment after
    /// the last one ends); zero for none.
    pub rest: Duration,
}

/// What the steps found.
#[derive(Debug, Clone, PartialEq)]
pub struct StepsOutcome {
    /// The steps run, in order (a failed one last).
    pub steps: Vec<LoadStep>,
    /// Why the steps ended before the last: the failed step's error, or "interrupted".
    pub error: Option<String>,
    /// A stop ended them.
    pub interrupted: bool,
}

/// Runs `step` at each rate in turn, each finished step to `sink` as it ends, until the
/// last, the first that failed (its `error`) or a stop.
pub fn run(
    cfg: &StepsConfig,
    step: &mut dyn FnMut(Rate, &AtomicBool) -> LoadStep,
    stop: &AtomicBool,
    sink: &mut dyn Sink<LoadStep>,
) -> StepsOutcome {
    let mut out = StepsOutcome {
        steps: Vec::new(),
        error: None,
        interrupted: false,
    };
    for (i, &rate) in cfg.rates.iter().enumerate() {
        if i > 0 && !cfg.rest.is_zero() {
            std::thread::sleep(cfg.rest);
        }
        let s = step(rate, stop);
        deliver(sink, &s);
        let why = s.error.clone();
        out.steps.push(s);
        if why.is_some() || stop.load(Ordering::SeqCst) {
            out.interrupted = stop.load(Ordering::SeqCst);
            out.error = why.or(Some("interrupted".into()));
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::sink::FnSink;

    fn load(rate: Rate, error: Option<&str>) -> LoadStep {
        LoadStep {
            offered_bps: rate.bits_per_sec() as f64,
            achieved_bps: Some(rate.bits_per_sec() as f64),
            loss_percent: None,
            retransmits: Some(0),
            server_cpu_percent: None,
            client_cpu_percent: Some(1.0),
            seconds: 1.0,
            error: error.map(str::to_owned),
        }
    }

    fn rates(r: &[u64]) -> StepsConfig {
        StepsConfig {
            rates: r.iter().copied().map(Rate::from_bits_per_sec).collect(),
            rest: Duration::ZERO,
        }
    }

    #[test]
    fn every_rate_runs_in_order_when_none_fails() {
        let mut seen = Vec::new();
        let mut rows = Vec::new();
        let out = run(
            &rates(&[10, 20, 50]),
            &mut |r, _| {
                seen.push(r.bits_per_sec());
                load(r, None)
            },
            &AtomicBool::new(false),
            &mut FnSink(|s: &LoadStep| rows.push(s.offered_bps)),
        );
        assert_eq!(seen, [10, 20, 50]);
        assert_eq!(rows, [10.0, 20.0, 50.0]);
        assert_eq!(
            (out.steps.len(), out.error, out.interrupted),
            (3, None, false)
        );
    }

    #[test]
    fn a_failed_step_ends_the_run_and_is_its_error() {
        let mut asked = 0;
        let out = run(
            &rates(&[10, 20, 50]),
            &mut |r, _| {
                asked += 1;
                load(r, (r.bits_per_sec() == 20).then_some("refused"))
            },
            &AtomicBool::new(false),
            &mut sonde_stats::sink::Discard,
        );
        assert_eq!(asked, 2, "the step after the failed one is not run");
        assert_eq!(out.steps.len(), 2);
        assert_eq!(out.error.as_deref(), Some("refused"));
        assert!(!out.interrupted);
    }

    #[test]
    fn a_stop_ends_the_run_as_interrupted() {
        let stop = AtomicBool::new(false);
        let out = run(
            &rates(&[10, 20]),
            &mut |r, stop| {
                stop.store(true, Ordering::SeqCst);
                load(r, None)
            },
            &stop,
            &mut sonde_stats::sink::Discard,
        );
        assert_eq!(out.steps.len(), 1);
        assert_eq!(out.error.as_deref(), Some("interrupted"));
        assert!(out.interrupted);
    }
}
