//! `sonde stress --steps`: CPU load against offered rate, one paced test per rate, in order.
//!
//! This crate does not run the paced test itself (that is the ordinary throughput client, a
//! sonde or iperf3 server's peer): the caller hands in one step as a function of the rate,
//! and this loop decides what runs next and when it stops. A step that fails ends the run
//! (the steps after it are not run), and so does a stop.
//!
//! With a [`LoadProbe`] the device's own load is read at each step's end, the step's traffic
//! just over: a probe that fails is a note on its step, never the end of the run.

use crate::load_probe::LoadProbe;
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
    /// `--load-probe`: the command that reads the device's load at each step's end.
    pub load_probe: Option<LoadProbe>,
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
        let mut s = step(rate, stop);
        if let Some(p) = cfg
            .load_probe
            .as_ref()
            .filter(|_| !stop.load(Ordering::SeqCst))
        {
            s.device_load = Some(p.read(stop));
        }
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
            device_load: None,
        }
    }

    fn rates(r: &[u64]) -> StepsConfig {
        StepsConfig {
            rates: r.iter().copied().map(Rate::from_bits_per_sec).collect(),
            rest: Duration::ZERO,
            load_probe: None,
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

    /// A probe that prints the step's number: each step holds its own reading, and a probe
    /// that fails at one step is that step's note while the run goes on.
    #[test]
    fn the_load_probe_reads_each_step_and_a_failure_does_not_end_the_run() {
        let dir = std::env::temp_dir().join(format!("sonde-steps-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let count = dir.join("count");
        let mut cfg = rates(&[10, 20, 50]);
        cfg.load_probe = Some(LoadProbe {
            command: format!(
                "n=$(($(cat '{c}' 2>/dev/null || echo 0) + 1)); echo $n > '{c}'; \
                 [ $n -eq 2 ] && exit 4; echo \"load $((n * 10))\"",
                c = count.display()
            ),
            timeout: Duration::from_secs(10),
        });
        let out = run(
            &cfg,
            &mut |r, _| load(r, None),
            &AtomicBool::new(false),
            &mut sonde_stats::sink::Discard,
        );
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((out.steps.len(), out.error), (3, None));
        let got: Vec<_> = out
            .steps
            .iter()
            .map(|s| s.device_load.as_ref().map(|d| (d.value, d.exit_status)))
            .collect();
        assert_eq!(
            got,
            [
                Some((Some(10.0), Some(0))),
                Some((None, Some(4))),
                Some((Some(30.0), Some(0)))
            ]
        );
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
