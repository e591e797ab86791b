//! `sonde stress --ramp LO..HI`: one whole run per connection count (`-u`: per flow count,
//! the same offered rate over all flows), every count from LO to HI, each run `--repeat` times
//! and summed up as a [`RampRow`] (every run, their mean and maximum).
//!
//! The ramp goes on past a step that fails the checks of a single run ([`crate::verdict`]):
//! the most a device moves is still worth knowing at the counts it handles; such steps are
//! named in [`RampOutcome::problems`]. It stops at the first step that could not be made at
//! all (no connection opened, the event loop failed) or was cut short.

use crate::flows::{Flows, RunError};
use sonde_stats::sink::{deliver, Discard, Sink};
use sonde_stats::stress::model::Transport;
use sonde_stats::stress::ramp::{counts, RampRow, RampStep};
use std::sync::atomic::AtomicBool;

/// A ramp: the run of each step (its count replaced by the step's) and the counts' range.
#[derive(Debug, Clone)]
pub struct RampConfig {
    pub flows: Flows,
    /// The first count and the last (1 <= lo <= hi).
    pub lo: u32,
    pub hi: u32,
    /// Runs per count (`--repeat`, at least 1).
    pub repeat: u32,
}

/// Why a ramp ended before its last step.
#[derive(Debug, thiserror::Error)]
pub enum RampError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("interrupted")]
    Interrupted,
}

/// What a ramp found.
#[derive(Debug)]
pub struct RampOutcome {
    /// The counts run, in order, each with its runs (the one cut short included).
    pub steps: Vec<RampRow>,
    /// What ended the ramp early, if anything did.
    pub error: Option<RampError>,
    /// The steps that failed their checks, each "N connections: why".
    pub problems: Vec<String>,
}

impl RampOutcome {
    /// The failed steps as one line, if any failed.
    pub fn problems_line(&self) -> Option<String> {
        (!self.problems.is_empty())
            .then(|| format!("the ramp found problems - {}", self.problems.join("; ")))
    }
}

/// Runs the steps in order, each count's row to `sink` once its runs end (the runs' own
/// events go nowhere), until the last or the first run that could not be made or was cut
/// short (its count's row then holds the runs made).
pub fn run(cfg: &RampConfig, stop: &AtomicBool, sink: &mut dyn Sink<RampRow>) -> RampOutcome {
    let mut out = RampOutcome {
        steps: Vec::new(),
        error: None,
        problems: Vec::new(),
    };
    for n in counts(cfg.lo, cfg.hi) {
        let mut runs = Vec::new();
        let ended = count(cfg, n, stop, &mut runs, &mut out.problems);
        if let Some(row) = RampRow::of(runs) {
            deliver(sink, &row);
            out.steps.push(row);
        }
        if ended.is_some() {
            out.error = ended;
            return out;
        }
    }
    out
}

/// The `--repeat` runs at `n`, each into `runs` and its failed checks into `problems`; what
/// ended the ramp, if a run could not be made or was cut short.
fn count(
    cfg: &RampConfig,
    n: u32,
    stop: &AtomicBool,
    runs: &mut Vec<RampStep>,
    problems: &mut Vec<String>,
) -> Option<RampError> {
    let mode = cfg.flows.mode();
    let repeat = cfg.repeat.max(1);
    for i in 1..=repeat {
        let s = match cfg.flows.with_count(n).run(stop, &mut Discard) {
            Ok(s) => s,
            Err(e) => return Some(e.into()),
        };
        runs.push(RampStep::of(n, &s, mode));
        if s.partial {
            return Some(RampError::Interrupted);
        }
        if let Some(why) = crate::verdict::problems(&s, mode) {
            let unit = unit(cfg.flows.transport(), n);
            let which = if repeat > 1 {
                format!(" (run {i} of {repeat})")
            } else {
                String::new()
            };
            problems.push(format!("{n} {unit}{which}: {why}"));
        }
    }
    None
}

/// What a ramp's count counts: "connection(s)", or UDP "flow(s)".
fn unit(transport: Transport, n: u32) -> &'static str {
    match (transport, n) {
        (Transport::Udp, 1) => "flow",
        (Transport::Udp, _) => "flows",
        (Transport::Tcp, 1) => "connection",
        (Transport::Tcp, _) => "connections",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::StressConfig;
    use crate::services::{Service, Services, ServicesConfig};
    use sonde_stats::sink::FnSink;
    use sonde_stats::stress::model::StressMode;
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::time::Duration;

    fn tcp(addr: SocketAddr) -> Flows {
        Flows::Tcp(StressConfig {
            addr,
            remote: "127.0.0.1".into(),
            mode: StressMode::Discard,
            connections: 1,
            duration: Duration::from_millis(300),
            interval: Duration::from_millis(100),
            connect_timeout: Duration::from_secs(2),
            close_timeout: Duration::from_secs(2),
            block: 16 * 1024,
            echo_window: 256 * 1024,
            rate: None,
            warmup: Duration::ZERO,
        })
    }

    /// A discard service on loopback holding `max` connections at most: its stop flag, its
    /// thread and its address.
    fn discard(
        max: usize,
    ) -> (
        Arc<AtomicBool>,
        std::thread::JoinHandle<
            Result<crate::services::ServicesStats, crate::services::ServicesError>,
        >,
        SocketAddr,
    ) {
        let services = Services::bind(ServicesConfig {
            bind: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            ports: vec![(Service::Discard, 0)],
            tcp: true,
            udp: false,
            max_connections: max,
            echo_buffer: 16 * 1024,
            udp_rate: 1000,
            udp_sources: 16,
        })
        .expect("bind a discard service on loopback");
        let addr = services.local_addrs()[0].2;
        let stop = Arc::new(AtomicBool::new(false));
        let server = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || services.run(&stop))
        };
        (stop, server, addr)
    }

    /// `--repeat 2`: each count's row holds both runs, its mean and its maximum.
    #[test]
    fn each_count_runs_repeat_times() {
        let (stop, server, addr) = discard(8);
        let cfg = RampConfig {
            flows: tcp(addr),
            lo: 1,
            hi: 2,
            repeat: 2,
        };
        let out = run(&cfg, &AtomicBool::new(false), &mut Discard);
        stop.store(true, Ordering::SeqCst);
        let _ = server.join();
        assert!(out.error.is_none() && out.problems.is_empty(), "{out:?}");
        let counts: Vec<u32> = out.steps.iter().map(|r| r.mean.connections).collect();
        assert_eq!(counts, [1, 2]);
        for row in &out.steps {
            assert_eq!(row.runs.len(), 2, "{row:?}");
            let rates: Vec<f64> = row.runs.iter().map(|r| r.sent_bps).collect();
            assert_eq!(row.mean.sent_bps, (rates[0] + rates[1]) / 2.0, "{row:?}");
            assert_eq!(row.max.sent_bps, rates[0].max(rates[1]), "{row:?}");
            assert_eq!(row.mean.closed_clean, Some(row.mean.connections));
        }
    }

    /// A discard service on loopback that holds one connection at most: a ramp 1..4 runs
    /// every step, and the steps beyond one connection fail their checks, by name.
    #[test]
    fn a_ramp_runs_on_past_a_failed_step_and_names_it() {
        let (stop, server, addr) = discard(1);
        let mut rows = Vec::new();
        let cfg = RampConfig {
            flows: tcp(addr),
            lo: 1,
            hi: 4,
            repeat: 1,
        };
        let out = run(
            &cfg,
            &AtomicBool::new(false),
            &mut FnSink(|s: &RampRow| rows.push(s.mean.connections)),
        );
        stop.store(true, Ordering::SeqCst);
        let _ = server.join();
        assert!(out.error.is_none(), "{:?}", out.error);
        assert_eq!(rows, [1, 2, 3, 4], "a row per step, as it ends");
        assert_eq!(out.steps[0].mean.closed_clean, Some(1));
        assert!(out.steps[0].mean.sent_bps > 0.0, "{:?}", out.steps[0]);
        assert_eq!(out.problems.len(), 3, "{:?}", out.problems);
        assert!(
            out.problems[0].starts_with("2 connections: "),
            "{:?}",
            out.problems
        );
        assert!(
            out.problems[2].starts_with("4 connections: "),
            "{:?}",
            out.problems
        );
        let line = out.problems_line().unwrap_or_default();
        assert!(
            line.starts_with("the ramp found problems - 2 connections: "),
            "{line}"
        );
    }

    /// Nothing listens: the first step cannot be made, and the ramp stops there.
    #[test]
    fn a_ramp_stops_at_the_first_step_that_cannot_be_made() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port");
        let cfg = RampConfig {
            flows: tcp(closed),
            lo: 1,
            hi: 8,
            repeat: 3,
        };
        let mut rows = 0;
        let out = run(
            &cfg,
            &AtomicBool::new(false),
            &mut FnSink(|_: &RampRow| rows += 1),
        );
        assert!(out.steps.is_empty() && rows == 0, "{:?}", out.steps);
        let e = out
            .error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(e.starts_with("no connection to 127.0.0.1:"), "{e}");
        assert!(out.problems_line().is_none());
    }

    #[test]
    fn the_count_is_named_by_what_it_counts() {
        assert_eq!(unit(Transport::Tcp, 1), "connection");
        assert_eq!(unit(Transport::Tcp, 2), "connections");
        assert_eq!(unit(Transport::Udp, 1), "flow");
        assert_eq!(unit(Transport::Udp, 64), "flows");
    }
}
