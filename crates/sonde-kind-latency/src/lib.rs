//! `sonde latency`: round-trip times, probes on an isochronous schedule (or flooding), replies
//! accounted by the pure `sonde_stats::latency::tracker`, events out to a sink.
//!
//! Modes: UDP request/response to a sonde server (the `transports` module, answered by
//! [`responder::Responder`] inside `sonde server`), ICMP echo to any host (RFC 792 / RFC 4443),
//! TCP handshake times to any TCP service and request/response transactions on one TCP
//! connection to a sonde server ([`tcp`]).
//!
//! The schedule is absolute (probe n is due at start + n × interval, so delays never
//! accumulate) and kept by sleeping until ~200 µs before the due time, then spinning: a 1 ms
//! interval keeps a schedule error of a few microseconds where a plain sleep overshoots by
//! 50-100 µs (irtt #4 reports 33 % on macOS).
//!
//! This kind stands on the runtime core (`sonde-runtime-core`) alone. Latency under load
//! (`sonde_runtime::rrul`), the IPv4/IPv6 comparison (`sonde_runtime::compare_ip`) and the
//! clock offset before a profile (`sonde_runtime::profile_run`) are suites on top, in
//! `sonde-runtime`, which re-exports this crate as `sonde_runtime::latency`.

mod prober;
pub mod responder;
mod run_state;
pub mod tcp;
mod transports;
pub mod unanswered;

pub use responder::Responder;

use sonde_platform::host::software;
use sonde_platform::resolve::{resolve, Family};
use sonde_runtime_core::error::RunError;
use sonde_stats::latency::model::{LatencyEvent, LatencyMode, LatencyStart, LatencySummary};
use sonde_stats::sink::Sink;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use thiserror::Error;

/// What a latency run was asked to do.
#[derive(Debug, Clone)]
pub struct LatencyConfig {
    pub host: String,
    /// Server port (UDP, tcp-rr) or the service's port (tcp-connect); ignored for ICMP.
    pub port: u16,
    pub family: Family,
    pub mode: LatencyMode,
    /// Bytes per probe: UDP payload (at least the 56-byte probe header), ICMP data, tcp-rr
    /// transaction size.
    pub size: usize,
    /// Time between probes (ignored with `flood`).
    pub interval: Duration,
    pub flood: bool,
    /// Probes in flight at once in flood mode (UDP, ICMP).
    pub window: u32,
    pub count: Option<u64>,
    pub duration: Option<Duration>,
    pub late: Option<Duration>,
    pub clock_synced: bool,
    /// Interval lines every so often; None for the summary only.
    pub report_interval: Option<Duration>,
    /// How long to wait for the last replies (None: 3 × the largest RTT, 0.1..3 s).
    pub wait: Option<Duration>,
    /// Per-probe timeout of TCP connects and the first connection of tcp-rr.
    pub timeout: Duration,
    /// The pre-shared key of a server started with `--psk-file` (`--psk-file`): it tags UDP
    /// probes and answers tcp-rr's challenge, and the load of rrul and compare-ip answers
    /// the control connection's challenge with it.
    pub psk: Option<sonde_proto::psk::Psk>,
}

impl LatencyConfig {
    /// A UDP configuration with the defaults of `sonde latency` (56-byte probes every 1 s for
    /// 10 s, one interval line per second).
    pub fn udp(host: &str, port: u16) -> Self {
        Self {
            host: host.to_string(),
            port,
            family: Family::Any,
            mode: LatencyMode::Udp,
            size: 56,
            interval: Duration::from_secs(1),
            flood: false,
            window: 1,
            count: None,
            duration: Some(Duration::from_secs(10)),
            late: None,
            clock_synced: false,
            report_interval: Some(Duration::from_secs(1)),
            wait: None,
            timeout: Duration::from_secs(2),
            psk: None,
        }
    }
}

/// Why a latency run could not start or went wrong.
#[derive(Debug, Error)]
pub enum LatencyError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    IcmpUnavailable(String),
    /// Ctrl-C, SIGTERM or SIGHUP: the binary names which (it took the signal).
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Setup(String),
    /// The server refused the run (tcp-rr beyond its `--max-clients`), with its reason.
    #[error("the server refused the test: {0}")]
    Refused(String),
}

impl LatencyError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        LatencyError::Io {
            what: what.into(),
            source,
        }
    }
}

/// How a run ended: the summary when probing started, the error when it did not complete, and
/// a bounded uniform sample of the RTTs (ms) for significance tests and plots.
#[derive(Debug, Default)]
pub struct LatencyOutcome {
    pub summary: Option<LatencySummary>,
    pub error: Option<LatencyError>,
    pub rtt_sample_ms: Vec<f64>,
}

/// Resolves the target to one address of the wanted family.
///
/// # Errors
///
/// `LatencyError::Run` with the resolver's error (interrupted, no such host), or
/// `LatencyError::Setup` when it found no address of that family.
pub fn target(cfg: &LatencyConfig, interrupt: &AtomicBool) -> Result<SocketAddr, LatencyError> {
    let addrs = resolve(&cfg.host, cfg.port, cfg.family, interrupt).map_err(RunError::from)?;
    addrs
        .first()
        .copied()
        .ok_or_else(|| LatencyError::Setup(format!("no address for {}", cfg.host)))
}

pub(crate) fn start_event(
    cfg: &LatencyConfig,
    remote: SocketAddr,
    local: String,
    size: usize,
    size_meaning: String,
    timestamping: String,
) -> LatencyEvent {
    LatencyEvent::Start(Box::new(LatencyStart {
        version: software(),
        mode: cfg.mode,
        target: cfg.host.clone(),
        remote: if cfg.mode == LatencyMode::Icmp {
            remote.ip().to_string()
        } else {
            remote.to_string()
        },
        local,
        family: if remote.is_ipv4() { "IPv4" } else { "IPv6" }.into(),
        size: u32::try_from(size).unwrap_or(u32::MAX),
        size_meaning,
        interval_secs: if cfg.flood {
            0.0
        } else {
            cfg.interval.as_secs_f64()
        },
        flood: cfg.flood,
        window: cfg.window.max(1),
        count: cfg.count,
        duration_secs: cfg.duration.map(|d| d.as_secs_f64()),
        late_ms: cfg.late.map(|d| d.as_secs_f64() * 1e3),
        timestamping,
        clock_synced: cfg.clock_synced,
        timestamp_unix: sonde_platform::timestamp::realtime_ns() as f64 / 1e9,
    }))
}

/// Runs one latency measurement; events go to `emit` as they happen (Start, Interval..., End).
/// Ctrl-C (`interrupt`) ends it early with the statistics so far (`partial`).
pub fn run(
    cfg: &LatencyConfig,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<LatencyEvent>,
) -> LatencyOutcome {
    let result = match cfg.mode {
        LatencyMode::Udp | LatencyMode::Icmp => prober::run_datagram(cfg, interrupt, emit),
        LatencyMode::TcpConnect | LatencyMode::TcpRr => tcp::run(cfg, interrupt, emit),
    };
    match result {
        Ok(o) => o,
        Err(e) => LatencyOutcome {
            summary: None,
            error: Some(e),
            rtt_sample_ms: Vec::new(),
        },
    }
}
