//! `sonde stress --ramp LO..HI`: one whole run per connection count (`-u`: per flow count,
//! the same offered rate over all flows), LO, 2·LO, ... HI, each summed up as a
//! [`RampStep`].
//!
//! The ramp goes on past a step that fails the checks of a single run ([`crate::verdict`]):
//! the most a device moves is still worth knowing at the counts it handles; such steps are
//! named in [`RampOutcome::problems`]. It stops at the first step that could not be made at
//! all (no connection opened, the event loop failed) or was cut short.

use crate::flows::{Flows, RunError};
use sonde_stats::sink::{deliver, Discard, Sink};
use sonde_stats::stress::model::Transport;
use sonde_stats::stress::ramp::{counts, RampStep};
use std::sync::atomic::AtomicBool;

/// A ramp: the run of each step (its count replaced by the step's) and the counts' range.
#[derive(Debug, Clone)]
pub struct RampConfig {
    pub flows: Flows,
    /// The first count and the last (1 <= lo <= hi).
    pub lo: u32,
    pub hi: u32,
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
    /// The steps run, in order (the one cut short included).
    pub steps: Vec<RampStep>,
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

/// Runs the steps in order, each finished step to `sink` as it ends (the steps' own events
/// go nowhere), until the last or the first that could not be made or was cut short.
pub fn run(cfg: &RampConfig, stop: &AtomicBool, sink: &mut dyn Sink<RampStep>) -> RampOutcome {
    let mode = cfg.flows.mode();
    let mut out = RampOutcome {
        steps: Vec::new(),
        error: None,
        problems: Vec::new(),
    };
    for n in counts(cfg.lo, cfg.hi) {
        let s = match cfg.flows.with_count(n).run(stop, &mut Discard) {
            Ok(s) => s,
            Err(e) => {
                out.error = Some(e.into());
                return out;
            }
        };
        let step = RampStep::of(n, &s, mode);
        deliver(sink, &step);
        out.steps.push(step);
        if s.partial {
            out.error = Some(RampError::Interrupted);
            return out;
        }
        if let Some(why) = crate::verdict::problems(&s, mode) {
            let unit = unit(cfg.flows.transport(), n);
            out.problems.push(format!("{n} {unit}: {why}"));
        }
    }
    out
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
        })
    }

    /// A discard service on loopback that holds one connection at most: a ramp 1..4 runs
    /// every step, and the steps beyond one connection fail their checks, by name.
    #[test]
    fn a_ramp_runs_on_past_a_failed_step_and_names_it() {
        let services = Services::bind(ServicesConfig {
            bind: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            ports: vec![(Service::Discard, 0)],
            tcp: true,
            udp: false,
            max_connections: 1,
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
        let mut rows = Vec::new();
        let cfg = RampConfig {
            flows: tcp(addr),
            lo: 1,
            hi: 4,
        };
        let out = run(
            &cfg,
            &AtomicBool::new(false),
            &mut FnSink(|s: &RampStep| rows.push(s.connections)),
        );
        stop.store(true, Ordering::SeqCst);
        let _ = server.join();
        assert!(out.error.is_none(), "{:?}", out.error);
        assert_eq!(rows, [1, 2, 4], "a row per step, as it ends");
        assert_eq!(out.steps[0].closed_clean, Some(1));
        assert!(out.steps[0].sent_bps > 0.0, "{:?}", out.steps[0]);
        assert_eq!(out.problems.len(), 2, "{:?}", out.problems);
        assert!(
            out.problems[0].starts_with("2 connections: "),
            "{:?}",
            out.problems
        );
        assert!(
            out.problems[1].starts_with("4 connections: "),
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
        };
        let mut rows = 0;
        let out = run(
            &cfg,
            &AtomicBool::new(false),
            &mut FnSink(|_: &RampStep| rows += 1),
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
