//! Latency under load (`sonde rrul`, after flent's RRUL test) and the IPv4/IPv6 comparison
//! (`sonde compare-ip`), built from the latency prober and the throughput client.
//!
//! RRUL: an idle phase, then UDP probes while N TCP streams saturate the download, then the
//! upload, then both; each phase reports the goodput and how much the median and p99 RTT grew
//! over idle (the bufferbloat figure). compare-ip: the same probes and a short TCP upload over
//! each family, judged with the tests of `sonde_stats::latency::compare`.

use super::unanswered::{unanswered, NO_ANSWER};
use super::{run as run_latency, LatencyConfig, LatencyError, LatencyOutcome};
use crate::client::{self, ClientConfig};
use crate::dual_stack::{run_btc, run_capacity, run_sizes, BtcPlan, SizesPlan};
use crate::os::host::software;
use crate::os::resolve::{resolve, Family};
use sonde_proto::message::TestParams;
use sonde_stats::dual_stack::{self, SizeRow};
use sonde_stats::latency::compare::{judge, judge_latency, mann_whitney_p, welch_p};
use sonde_stats::latency::histogram::DelayAccumulator;
use sonde_stats::latency::model::{
    CompareIpResult, FamilyResult, LatencyEvent, LatencySummary, RrulPhase, RrulResult,
};
use sonde_stats::model::{Direction, Event, Protocol, StreamRole};
use sonde_stats::verdict::{Measure, MeasureVerdict, Verdict};
use std::net::{IpAddr, SocketAddr};
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

fn tcp_params(direction: Direction, streams: u32, secs: f64, interval: f64) -> TestParams {
    TestParams {
        protocol: Protocol::Tcp,
        direction,
        parallel: streams,
        duration_secs: secs,
        interval_secs: interval,
        ..TestParams::default()
    }
}

/// Goodput and per-interval sender rates of a throughput run.
struct Load {
    download_bps: Option<f64>,
    upload_bps: Option<f64>,
    samples: Vec<f64>,
    error: Option<String>,
}

impl Load {
    /// A run that produced nothing, for `error`.
    fn failed(error: &str) -> Self {
        Load {
            download_bps: None,
            upload_bps: None,
            samples: Vec::new(),
            error: Some(error.into()),
        }
    }
}

fn throughput(cfg: ClientConfig, interrupt: Arc<AtomicBool>) -> Load {
    let mut samples = Vec::new();
    let outcome = client::run(&cfg, &interrupt, &mut |ev: Event| {
        if let Event::Interval(r) = ev {
            if let Some(s) = r.sums.iter().find(|s| s.role == StreamRole::Sender) {
                samples.push(s.bits_per_second);
            }
        }
    });
    let mut load = Load {
        download_bps: None,
        upload_bps: None,
        samples,
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

fn probe_quietly(cfg: &LatencyConfig, interrupt: &AtomicBool) -> LatencyOutcome {
    run_latency(cfg, interrupt, &mut |_ev: LatencyEvent| {})
}

/// The RRUL phases in order: a name and the direction of the TCP load (none when idle).
const RRUL_PHASES: [(&str, Option<Direction>); 4] = [
    ("idle", None),
    ("download", Some(Direction::Reverse)),
    ("upload", Some(Direction::Upload)),
    ("bidirectional", Some(Direction::Bidir)),
];

/// Runs the four RRUL phases; `progress` hears about each phase as it starts.
///
/// # Errors
/// [`LatencyError`] when the idle baseline cannot be measured (nothing else would mean
/// anything); later failures are recorded in the phase and the result is marked partial.
pub fn run_rrul(
    cfg: &RrulConfig,
    interrupt: &Arc<AtomicBool>,
    progress: &mut dyn FnMut(&str),
) -> Result<RrulResult, LatencyError> {
    let peer = super::target(&cfg.probe, interrupt)?;
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
        progress(name);
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
    unanswered(probe, &phase.latency).map(|why| format!("{} phase: {why}", phase.name))
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
fn keyed(probe: &LatencyConfig) -> crate::sockets::ClientSockets {
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

/// Settings of `sonde compare-ip`.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// Probe settings; `family` is overridden per run.
    pub probe: LatencyConfig,
    /// Use this IPv4 / IPv6 address instead of resolving the host.
    pub ipv4: Option<IpAddr>,
    pub ipv6: Option<IpAddr>,
    /// Seconds of TCP upload per family (0 skips it).
    pub throughput_secs: f64,
    pub connect_timeout: Duration,
    /// Latency over a cycle of probe sizes instead of the single-size probe run.
    pub sizes: Option<SizesPlan>,
    /// BTC sessions per family.
    pub btc: Option<BtcPlan>,
    /// Path capacity per family.
    pub capacity: bool,
}

fn family_addr(cfg: &CompareConfig, v6: bool, interrupt: &AtomicBool) -> Result<IpAddr, String> {
    let given = if v6 { cfg.ipv6 } else { cfg.ipv4 };
    if let Some(a) = given {
        return Ok(a);
    }
    let fam = if v6 { Family::V6 } else { Family::V4 };
    resolve(&cfg.probe.host, cfg.probe.port, fam, interrupt)
        .map_err(|e| e.to_string())
        .and_then(|v| {
            v.first()
                .map(SocketAddr::ip)
                .ok_or_else(|| "no address".into())
        })
}

fn measure_family(
    cfg: &CompareConfig,
    v6: bool,
    interrupt: &Arc<AtomicBool>,
) -> (FamilyResult, Vec<f64>, Vec<f64>) {
    let mut r = FamilyResult {
        family: if v6 { "IPv6" } else { "IPv4" }.into(),
        address: None,
        rtt: None,
        loss_percent: None,
        throughput_bps: None,
        error: None,
    };
    let addr = match family_addr(cfg, v6, interrupt) {
        Ok(a) => a,
        Err(e) => {
            r.error = Some(e);
            return (r, Vec::new(), Vec::new());
        }
    };
    r.address = Some(addr.to_string());
    let mut probe = cfg.probe.clone();
    probe.host = addr.to_string();
    probe.family = Family::Any;
    probe.report_interval = None;
    // With sizes, the latency comes from the size cycle (run_sizes) instead.
    let lat = if cfg.sizes.is_some() {
        LatencyOutcome {
            summary: None,
            error: None,
            rtt_sample_ms: Vec::new(),
        }
    } else {
        probe_quietly(&probe, interrupt)
    };
    let mut errors: Vec<String> = lat.error.iter().map(|e| e.to_string()).collect();
    let summary: Option<LatencySummary> = lat.summary;
    if let Some(s) = &summary {
        r.rtt = s.rtt;
        r.loss_percent = Some(s.loss.loss_percent);
        errors.extend(s.error.clone());
        errors.extend(unanswered(&probe, s));
    }
    let mut tput = Vec::new();
    if cfg.throughput_secs > 0.0 && errors.is_empty() && !interrupt.load(Ordering::Relaxed) {
        let load = upload(cfg, addr, interrupt);
        r.throughput_bps = load.upload_bps;
        errors.extend(load.error);
        tput = load.samples;
    }
    if !errors.is_empty() {
        r.error = Some(errors.join("; "));
    }
    (r, lat.rtt_sample_ms, tput)
}

/// The short single-stream TCP upload of compare-ip to `addr`.
fn upload(cfg: &CompareConfig, addr: IpAddr, interrupt: &Arc<AtomicBool>) -> Load {
    let c = ClientConfig {
        host: addr.to_string(),
        port: cfg.probe.port,
        family: Family::Any,
        cport: None,
        params: tcp_params(
            Direction::Upload,
            1,
            cfg.throughput_secs,
            (cfg.throughput_secs / 5.0).clamp(0.1, 1.0),
        ),
        connect_timeout: cfg.connect_timeout,
        local: keyed(&cfg.probe),
        rcv_timeout: None,
        file: None,
    };
    throughput(c, interrupt.clone())
}

/// Measures both families one after the other and compares them: the probe run (or the size
/// cycle) and the short upload, then BTC and capacity when asked; the verdict weighs them all.
pub fn run_compare(cfg: &CompareConfig, interrupt: &Arc<AtomicBool>) -> CompareIpResult {
    let (mut v4, mut rtt4, tp4) = measure_family(cfg, false, interrupt);
    let (mut v6, mut rtt6, tp6) = measure_family(cfg, true, interrupt);
    let addr = |f: &FamilyResult| -> Result<IpAddr, String> {
        f.address
            .as_deref()
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| f.error.clone().unwrap_or_else(|| "no address".into()))
    };
    let mut sizes = Vec::new();
    if let Some(plan) = &cfg.sizes {
        let (rows, [s4, s6]) = run_sizes(
            plan,
            &cfg.probe,
            [addr(&v4).ok(), addr(&v6).ok()],
            interrupt,
        );
        pool_sizes(&mut v4, &rows, &s4);
        pool_sizes(&mut v6, &rows, &s6);
        (rtt4, rtt6, sizes) = (s4, s6, rows);
    }
    let port = cfg.probe.port;
    let local = keyed(&cfg.probe);
    let btc = cfg.btc.as_ref().map(|plan| {
        let addrs = [addr(&v4), addr(&v6)];
        run_btc(plan, addrs, port, cfg.connect_timeout, &local, interrupt)
    });
    let capacity = cfg.capacity.then(|| {
        [false, true].map(|v6f| {
            let a = addr(if v6f { &v6 } else { &v4 });
            run_capacity(v6f, a, port, cfg.connect_timeout, &local, interrupt)
        })
    });
    let latency = v4
        .rtt
        .zip(v6.rtt)
        .map(|(a, b)| judge_latency(a.median_ms, b.median_ms, mann_whitney_p(&rtt4, &rtt6)));
    let throughput = v4
        .throughput_bps
        .zip(v6.throughput_bps)
        .map(|(a, b)| judge(a, b, false, welch_p(&tp4, &tp6)));
    let mut measures = vec![dual_stack::latency_measure(&rtt4, &rtt6)];
    if let Some((a, b)) = v4.throughput_bps.zip(v6.throughput_bps) {
        let n = (tp4.len() as u64, tp6.len() as u64);
        measures.push(MeasureVerdict::from_test(
            Measure::Throughput,
            a,
            b,
            welch_p(&tp4, &tp6),
            n,
        ));
    }
    if let Some([a, b]) = &btc {
        measures.push(dual_stack::btc_measure(a, b));
    }
    if let Some([a, b]) = &capacity {
        measures.push(dual_stack::capacity_measure(a, b));
    }
    let verdict = verdict(&v4, &v6, measures);
    CompareIpResult {
        version: software(),
        target: cfg.probe.host.clone(),
        ipv4: v4,
        ipv6: v6,
        latency,
        throughput,
        every_secs: cfg.sizes.as_ref().map(|p| p.every.as_secs_f64()),
        sizes,
        btc,
        capacity,
        verdict,
        partial: interrupt.load(Ordering::Relaxed),
    }
}

/// A family's latency over all sizes (RTT distribution and loss), from its size rows and
/// samples; an error when nothing was answered.
fn pool_sizes(f: &mut FamilyResult, rows: &[SizeRow], samples: &[f64]) {
    let mine: Vec<&SizeRow> = rows.iter().filter(|r| r.family == f.family).collect();
    let (sent, lost) = mine
        .iter()
        .fold((0, 0), |(s, l), r| (s + r.sent, l + r.lost));
    if sent > 0 {
        f.loss_percent = Some(lost as f64 * 100.0 / sent as f64);
    }
    let mut acc = DelayAccumulator::absolute();
    for ms in samples {
        acc.record((ms * 1e6) as i64);
    }
    f.rtt = acc.stats(0, false);
    let errors: Vec<String> = mine
        .iter()
        .filter_map(|r| {
            r.error
                .as_ref()
                .map(|e| format!("{} B: {e}", r.payload_bytes))
        })
        .collect();
    if f.rtt.is_none() && f.error.is_none() && f.address.is_some() {
        let mut e = vec![NO_ANSWER.to_string()];
        e.extend(errors);
        f.error = Some(e.join("; "));
    }
}

/// The verdict of the measures, unless a family failed outright.
fn verdict(v4: &FamilyResult, v6: &FamilyResult, measures: Vec<MeasureVerdict>) -> Verdict {
    match (&v4.error, &v6.error) {
        (Some(e), None) => {
            Verdict::undecided(format!("IPv4 failed ({e}); only IPv6 works"), measures)
        }
        (None, Some(e)) => {
            Verdict::undecided(format!("IPv6 failed ({e}); only IPv4 works"), measures)
        }
        (Some(_), Some(_)) => Verdict::undecided("both IPv4 and IPv6 failed".into(), measures),
        (None, None) => Verdict::decide(measures),
    }
}
