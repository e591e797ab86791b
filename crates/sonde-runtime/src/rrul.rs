//! Latency under load (`sonde rrul`, after flent's RRUL test): a suite of the latency prober
//! and the throughput client; the IPv4/IPv6 comparison (`sonde compare-ip`, in
//! [`crate::compare_ip`]) shares its probe and load runners.
//!
//! RRUL: an idle phase, then UDP probes while N TCP streams saturate the download, then the
//! upload, then both; each phase reports the goodput and how much the median and p99 RTT grew
//! over idle (the bufferbloat figure).

use crate::client;
use crate::connect::ClientConfig;
use crate::latency::unanswered::unanswered;
use crate::latency::{run as run_latency, LatencyConfig, LatencyError, LatencyOutcome};
use sonde_platform::host::software;
use sonde_platform::resolve::Family;
use sonde_proto::message::TestParams;
use sonde_stats::latency::model::{LatencySummary, RrulPhase, RrulResult};
use sonde_stats::model::{Direction, Protocol};
use sonde_stats::sink::{deliver, Discard, Sink};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Settings of `sonde rrul`.
#[derive(Debug, Clone)]
pub struct RrulConfig {
    /// Probe settings (host, port, family, size); interval and duration are set per phase.
    pub probe: LatencyConfig,
    pub streams: u32,
    pub phase: Duration,
    pub step: Duration,
    pub connect_timeout: Duration,
}

pub(crate) fn tcp_params(
    direction: Direction,
    streams: u32,
    secs: f64,
    interval: f64,
) -> TestParams {
    TestParams {
        protocol: Protocol::Tcp,
        direction,
        parallel: streams,
        duration_secs: secs,
        interval_secs: interval,
        ..TestParams::default()
    }
}

/// Goodput of a throughput run.
pub(crate) struct Load {
    pub download_bps: Option<f64>,
    pub upload_bps: Option<f64>,
    pub error: Option<String>,
}

impl Load {
    /// A run that produced nothing, for `error`.
    fn failed(error: &str) -> Self {
        Load {
            download_bps: None,
            upload_bps: None,
            error: Some(error.into()),
        }
    }
}

pub(crate) fn throughput(cfg: ClientConfig, interrupt: Arc<AtomicBool>) -> Load {
    let outcome = client::run(&cfg, &interrupt, &mut Discard);
    let mut load = Load {
        download_bps: None,
        upload_bps: None,
        error: outcome.error.map(|e| e.to_string()),
    };
    if let Some(s) = outcome.summary {
        for d in &s.directions {
            let bps = d.received.as_ref().map(|v| v.bits_per_second);
            if d.client_sends {
                load.upload_bps = bps;
            } else {
                load.download_bps = bps;
            }
        }
    }
    load
}

pub(crate) fn probe_quietly(cfg: &LatencyConfig, interrupt: &AtomicBool) -> LatencyOutcome {
    run_latency(cfg, interrupt, &mut Discard)
}

/// The RRUL phases in order: a name and the direction of the TCP load (none when idle). A run
/// that reached its end has `RRUL_PHASES.len()` phases in [`RrulResult::phases`].
pub const RRUL_PHASES: [(&str, Option<Direction>); 4] = [
    ("idle", None),
    ("download", Some(Direction::Reverse)),
    ("upload", Some(Direction::Upload)),
    ("bidirectional", Some(Direction::Bidir)),
];

/// An RRUL phase as it starts (`idle`, `download`, ...): the event the run hands its sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseStart {
    pub name: &'static str,
}

/// Runs the four RRUL phases; `progress` hears about each phase as it starts.
///
/// # Errors
/// [`LatencyError`] when the idle baseline cannot be measured (nothing else would mean
/// anything); later failures are recorded in the phase and the result is marked partial.
pub fn run_rrul(
    cfg: &RrulConfig,
    interrupt: &Arc<AtomicBool>,
    progress: &mut dyn Sink<PhaseStart>,
) -> Result<RrulResult, LatencyError> {
    let peer = crate::latency::target(&cfg.probe, interrupt)?;
    let probe = phase_probe(cfg, peer);
    let mut result = RrulResult {
        version: software(),
        target: cfg.probe.host.clone(),
        remote: peer.to_string(),
        streams: cfg.streams,
        phase_secs: cfg.phase.as_secs_f64(),
        step_secs: cfg.step.as_secs_f64(),
        phases: Vec::new(),
        partial: false,
        error: None,
    };
    // The idle phase's median and p99 RTT, which the loaded phases are compared with.
    let mut idle: Option<(f64, f64)> = None;
    let mut failures = Vec::new();
    for (name, dir) in RRUL_PHASES {
        if interrupt.load(Ordering::Relaxed) {
            result.partial = true;
            result.error = Some(LatencyError::Interrupted.to_string());
            break;
        }
        deliver(progress, &PhaseStart { name });
        let (lat, load) = run_phase(cfg, &probe, peer, dir, interrupt);
        let Some(summary) = lat.summary else {
            let e = lat
                .error
                .unwrap_or(LatencyError::Setup("no latency result".into()));
            if idle.is_none() {
                return Err(e);
            }
            result.partial = true;
            result.error = Some(format!("{name} phase: {e}"));
            break;
        };
        if dir.is_none() {
            let (med, p99) = median_p99(&summary);
            idle = med.zip(p99);
        }
        let partial = summary.partial;
        let phase = phase_result(name, summary, load, idle);
        let failure = phase_failure(&phase, dir.is_some(), &probe);
        let unanswered_idle = dir.is_none() && phase.latency.rtt.is_none();
        failures.extend(failure);
        result.phases.push(phase);
        if unanswered_idle {
            // No baseline: the loaded phases could not be compared with anything.
            break;
        }
        if partial {
            result.partial = true;
            break;
        }
    }
    if !failures.is_empty() {
        // A phase whose load or probes could not run is no measurement of latency under load:
        // the run failed, even though every phase ran to its end.
        let mut all = failures;
        all.extend(result.error.take());
        result.error = Some(all.join("; "));
    }
    Ok(result)
}

/// Why a finished phase measured nothing useful: its load could not run (`loaded` phases), or
/// no probe of `probe` was answered (see [`unanswered`]).
fn phase_failure(phase: &RrulPhase, loaded: bool, probe: &LatencyConfig) -> Option<String> {
    if loaded {
        if let Some(e) = &phase.load_error {
            return Some(format!("{} phase: load failed: {e}", phase.name));
        }
    }
    unanswered(probe, &phase.latency.loss).map(|why| format!("{} phase: {why}", phase.name))
}

/// The probe settings of every phase: the resolved peer, one probe per step for a phase.
fn phase_probe(cfg: &RrulConfig, peer: SocketAddr) -> LatencyConfig {
    let mut probe = cfg.probe.clone();
    probe.host = peer.ip().to_string();
    probe.interval = cfg.step;
    probe.flood = false;
    probe.count = None;
    probe.duration = Some(cfg.phase);
    probe.report_interval = None;
    probe
}

/// One phase: the load (if any) starts first and runs past the probing, so every probe
/// sees a full load. Returns the probes' outcome and the load's figures.
fn run_phase(
    cfg: &RrulConfig,
    probe: &LatencyConfig,
    peer: SocketAddr,
    dir: Option<Direction>,
    interrupt: &Arc<AtomicBool>,
) -> (LatencyOutcome, Option<Load>) {
    let ramp = Duration::from_millis(if dir.is_some() { 500 } else { 0 });
    let handle = dir.map(|d| start_load(cfg, peer, d, ramp, interrupt));
    std::thread::sleep(ramp);
    let lat = probe_quietly(probe, interrupt);
    let load = handle.map(|h| h.join().unwrap_or(Load::failed("the load thread panicked")));
    (lat, load)
}

/// Starts `streams` TCP streams in direction `d` in their own thread, lasting the ramp, the
/// phase and a little more.
fn start_load(
    cfg: &RrulConfig,
    peer: SocketAddr,
    d: Direction,
    ramp: Duration,
    interrupt: &Arc<AtomicBool>,
) -> JoinHandle<Load> {
    let c = ClientConfig {
        host: peer.ip().to_string(),
        port: cfg.probe.port,
        family: Family::Any,
        cport: None,
        params: tcp_params(
            d,
            cfg.streams,
            (cfg.phase + ramp).as_secs_f64() + 0.3,
            cfg.step.as_secs_f64().max(0.1),
        ),
        connect_timeout: cfg.connect_timeout,
        local: keyed(&cfg.probe),
        rcv_timeout: None,
        file: None,
    };
    let i = interrupt.clone();
    std::thread::spawn(move || throughput(c, i))
}

/// The load's sockets: the probes' key answers the server's challenge.
pub(crate) fn keyed(probe: &LatencyConfig) -> crate::sockets::ClientSockets {
    crate::sockets::ClientSockets {
        psk: probe.psk.clone(),
        ..Default::default()
    }
}

/// The median and p99 RTT of a phase, when any probe was answered.
fn median_p99(summary: &LatencySummary) -> (Option<f64>, Option<f64>) {
    summary
        .rtt
        .map_or((None, None), |r| (Some(r.median_ms), Some(r.p99_ms)))
}

/// A phase's line: goodput, latency and how much the RTT grew over `idle`.
fn phase_result(
    name: &str,
    summary: LatencySummary,
    load: Option<Load>,
    idle: Option<(f64, f64)>,
) -> RrulPhase {
    let (med, p99) = median_p99(&summary);
    RrulPhase {
        name: name.into(),
        download_bps: load.as_ref().and_then(|l| l.download_bps),
        upload_bps: load.as_ref().and_then(|l| l.upload_bps),
        median_inflation_ms: idle.zip(med).map(|((im, _), m)| m - im),
        p99_inflation_ms: idle.zip(p99).map(|((_, ip), p)| p - ip),
        load_error: load.and_then(|l| l.error),
        latency: summary,
    }
}
