//! Runs one scheduled job with the runtime's own entry points (`latency::run`, `client::run`)
//! and turns how it ended into a [`RunOutcome`]. The agent resolves a peer's name before
//! every run (crate::targets) and hands the run its address, so a name that moves, or a peer
//! that restarts, is found again at its next run.

use crate::budget::{paced_write_len, profile_fits, profile_load, throughput_bitrate};
use crate::config::{
    parse_positive_rate, AgentConfig, FamilyChoice, LatencyTask, Peer, ProfileTask,
    ThroughputDirection, ThroughputProtocol, ThroughputTask,
};
use crate::outcome::{
    family_of, CapacityFigures, LatencyFigures, ProfileFigures, RunOutcome, RunResult,
    ThroughputFigures, UdpFigures,
};
use crate::schedule::{Job, Kind};
use sonde_platform::resolve::Family;
use sonde_proto::capacity::CapacityPlan;
use sonde_proto::message::ProfileRequest;
use sonde_runtime::client::{self, ClientConfig};
use sonde_runtime::latency::{self, LatencyConfig};
use sonde_runtime::profile::client::ProfileConfig;
use sonde_stats::latency::model::LatencyEvent;
use sonde_stats::model::{Direction, DirectionSummary, Event, Protocol};
use sonde_stats::sink::{Discard, FnSink};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long a peer may take to accept the control connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A throughput test whose data stops arriving this long fails.
const RCV_TIMEOUT: Duration = Duration::from_secs(10);
/// Wait for the last latency replies at most this long.
const REPLY_WAIT: Duration = Duration::from_secs(1);
pub fn family(choice: FamilyChoice) -> Family {
    match choice {
        FamilyChoice::Any => Family::Any,
        FamilyChoice::Ipv4 => Family::V4,
        FamilyChoice::Ipv6 => Family::V6,
    }
}

/// The family's label in the store and the metrics.
pub fn family_label(choice: FamilyChoice) -> &'static str {
    match choice {
        FamilyChoice::Any => "any",
        FamilyChoice::Ipv4 => "ipv4",
        FamilyChoice::Ipv6 => "ipv6",
    }
}

fn base(peer: &Peer, job: Job, parameters: serde_json::Value) -> RunOutcome {
    RunOutcome {
        peer: peer.label().to_string(),
        kind: job.kind,
        seq: job.seq,
        family: family_label(peer.family).into(),
        started_unix: sonde_platform::host::unix_now(),
        ended_unix: 0.0,
        result: RunResult::Failed,
        error: None,
        parameters,
        document: None,
    }
}

/// Ends `out` as failed before anything was measured, with `error` as its reason.
fn failed(mut out: RunOutcome, error: String) -> RunOutcome {
    out.ended_unix = sonde_platform::host::unix_now();
    out.error = Some(error);
    out
}

/// The peer's pre-shared key (`psk_file`), for every kind of run; the error ends the run.
fn peer_key(peer: &Peer) -> Result<Option<sonde_proto::psk::Psk>, String> {
    match peer.psk_file.as_deref().map(sonde_runtime::auth::load_psk) {
        None => Ok(None),
        Some(Ok(k)) => Ok(Some(k)),
        Some(Err(e)) => Err(format!("psk_file: {e}")),
    }
}

/// The client sockets of a run: defaults, with the peer's key.
fn sockets_with(psk: Option<sonde_proto::psk::Psk>) -> sonde_runtime::sockets::ClientSockets {
    sonde_runtime::sockets::ClientSockets {
        psk,
        ..Default::default()
    }
}

/// Runs a latency job: `task.probes` UDP probes to the peer's server.
pub fn run_latency(
    peer: &Peer,
    job: Job,
    task: &LatencyTask,
    interrupt: &AtomicBool,
) -> RunOutcome {
    let mut cfg = LatencyConfig::udp(&peer.host, peer.port);
    cfg.family = family(peer.family);
    cfg.count = Some(task.probes);
    cfg.duration = None;
    cfg.interval = Duration::from_secs_f64(task.probe_interval_ms / 1e3);
    cfg.report_interval = None;
    cfg.wait = Some(REPLY_WAIT);
    cfg.timeout = CONNECT_TIMEOUT;
    let params = serde_json::json!({
        "host": peer.host, "port": peer.port, "probes": task.probes,
        "probe_interval_ms": task.probe_interval_ms,
    });
    let mut out = base(peer, job, params);
    match peer_key(peer) {
        Ok(k) => cfg.psk = k,
        Err(e) => return failed(out, e),
    }
    let mut start = None;
    let mut end = None;
    let mut sink = FnSink(|ev: &LatencyEvent| match ev {
        LatencyEvent::Start(s) => start = Some(s.clone()),
        LatencyEvent::End(e) => end = Some(e.clone()),
        _ => {}
    });
    let outcome = latency::run(&cfg, interrupt, &mut sink);
    out.ended_unix = sonde_platform::host::unix_now();
    if let Some(f) = start.as_ref().and_then(|s| family_of(&s.remote)) {
        out.family = f.into();
    }
    let summary = end.or(outcome.summary.map(Box::new));
    if let Some(s) = &summary {
        out.result = RunResult::Latency(LatencyFigures {
            sent: s.loss.sent,
            lost: s.loss.lost,
            rtt_ms: outcome.rtt_sample_ms.clone(),
        });
        if s.partial {
            out.error = Some(s.error.clone().unwrap_or_else(|| "cut short".into()));
        } else if s.loss.refused > 0 {
            // The peer's host is up but its server is not (starting, restarting, stopped):
            // the run failed, and its lost probes are no measurement of the path.
            out.result = RunResult::Failed;
            out.error = Some(format!(
                "refused: no server listening on port {} ({} of {} probes answered)",
                peer.port, s.loss.received, s.loss.sent
            ));
        } else if s.loss.sent > 0 && s.loss.received == 0 {
            // A measurement (loss 1 in the metrics), but the peer is down: the run failed.
            out.error = Some(format!("none of {} probes was answered", s.loss.sent));
        }
    }
    if let Some(e) = outcome.error {
        out.error = Some(e.to_string());
    }
    out.document = Some(serde_json::json!({ "start": start, "end": summary }));
    out
}

/// The runtime's direction for a task's, and the share each direction of data gets.
fn direction_and_share(task: &ThroughputTask) -> (Direction, &'static str, f64) {
    match task.direction {
        ThroughputDirection::Upload => (Direction::Upload, "upload", task.share),
        ThroughputDirection::Download => (Direction::Reverse, "download", task.share),
        ThroughputDirection::Both => (Direction::Bidir, "both", task.share / 2.0),
    }
}

/// A UDP test's datagram: fits a 1500-byte MTU under IPv6 and IPv4 headers (as `-u`).
const UDP_LEN: u32 = 1448;

/// Runs a throughput job: one TCP or UDP test in the task's direction, each direction of data
/// paced to its part of the budget's share of the link.
pub fn run_throughput(
    peer: &Peer,
    job: Job,
    task: &ThroughputTask,
    measured: Option<u64>,
    interrupt: &AtomicBool,
) -> RunOutcome {
    let link = peer
        .link_rate
        .as_deref()
        .and_then(|r| parse_positive_rate(r).ok());
    let (direction, direction_name, share) = direction_and_share(task);
    let paced = throughput_bitrate(link, measured, share);
    let params = serde_json::json!({
        "host": peer.host, "port": peer.port, "duration_secs": task.duration_secs,
        "share": task.share, "direction": direction_name,
        "protocol": task.protocol.as_str(),
        "link_rate_bps": link,
        "measured_capacity_bps": measured, "bitrate_bps": paced,
    });
    let mut out = base(peer, job, params);
    let Some(paced) = paced else {
        return failed(
            out,
            "no link rate configured and no capacity measured yet to take the throughput share of"
                .into(),
        );
    };
    let key = match peer_key(peer) {
        Ok(k) => k,
        Err(e) => return failed(out, e),
    };
    let cfg = ClientConfig {
        host: peer.host.clone(),
        port: peer.port,
        family: family(peer.family),
        cport: None,
        params: throughput_params(task, direction, paced),
        connect_timeout: CONNECT_TIMEOUT,
        local: sockets_with(key),
        rcv_timeout: Some(RCV_TIMEOUT),
        file: None,
    };
    let mut start = None;
    let mut sink = FnSink(|ev: &Event| {
        if let Event::Start(s) = ev {
            start = Some(s.clone());
        }
    });
    let outcome = client::run(&cfg, interrupt, &mut sink);
    out.ended_unix = sonde_platform::host::unix_now();
    if let Some(f) = start.as_ref().and_then(|s| family_of(&s.remote)) {
        out.family = f.into();
    }
    if let Some(s) = &outcome.summary {
        out.result = RunResult::Throughput(throughput_figures(&s.directions, paced));
    }
    if let Some(e) = outcome.error {
        out.error = Some(e.to_string());
    }
    out.document = Some(serde_json::json!({ "start": start, "end": outcome.summary }));
    out
}

/// A throughput test's parameters: the task's length and protocol, one direction of data at
/// `paced` bits/s, each write or datagram of the size that pacing takes.
fn throughput_params(
    task: &ThroughputTask,
    direction: Direction,
    paced: u64,
) -> sonde_proto::message::TestParams {
    sonde_proto::message::TestParams {
        duration_secs: task.duration_secs,
        protocol: match task.protocol {
            ThroughputProtocol::Tcp => Protocol::Tcp,
            ThroughputProtocol::Udp => Protocol::Udp,
        },
        direction,
        rate: sonde_stats::units::Rate::from_bits_per_sec(paced),
        length: sonde_stats::units::Size::from_bytes(u64::from(match task.protocol {
            ThroughputProtocol::Tcp => paced_write_len(paced),
            ThroughputProtocol::Udp => UDP_LEN,
        })),
        ..Default::default()
    }
}

/// What a throughput test's directions received, named `upload` (this agent sends) or
/// `download`; a direction whose receiver's figures never arrived is left out.
fn throughput_figures(directions: &[DirectionSummary], paced: u64) -> ThroughputFigures {
    let name = |d: &DirectionSummary| if d.client_sends { "upload" } else { "download" };
    let received_bps = directions
        .iter()
        .filter_map(|d| Some((name(d), d.received.as_ref()?.bits_per_second)))
        .collect();
    let udp = directions
        .iter()
        .filter_map(|d| {
            let u = d.received.as_ref()?.udp_received.as_ref()?;
            Some((
                name(d),
                UdpFigures {
                    packets: u.packets,
                    lost: u.lost,
                    jitter_ms: u.jitter_ms,
                },
            ))
        })
        .collect();
    ThroughputFigures {
        paced_bps: paced,
        received_bps,
        udp,
    }
}

/// Runs a capacity job: `sonde capacity`'s default plan (trains sent by the peer's server).
pub fn run_capacity(peer: &Peer, job: Job, interrupt: &AtomicBool) -> RunOutcome {
    let plan = CapacityPlan::default();
    let length = if peer.family == FamilyChoice::Ipv6 {
        1452
    } else {
        1472
    };
    let params =
        serde_json::json!({ "host": peer.host, "port": peer.port, "plan": plan, "length": length });
    let mut out = base(peer, job, params);
    let key = match peer_key(peer) {
        Ok(k) => k,
        Err(e) => return failed(out, e),
    };
    let cfg = ClientConfig {
        host: peer.host.clone(),
        port: peer.port,
        family: family(peer.family),
        cport: None,
        params: sonde_runtime::capacity::params(plan, length),
        connect_timeout: CONNECT_TIMEOUT,
        local: sockets_with(key),
        rcv_timeout: None,
        file: None,
    };
    let (cap, error) = sonde_runtime::capacity::client::run(&cfg, interrupt);
    out.ended_unix = sonde_platform::host::unix_now();
    if error.is_none() || cap.trains_received > 0 {
        out.family = cap.family.to_ascii_lowercase();
    }
    let figure = cap
        .estimate
        .as_ref()
        .and_then(|e| e.sustained_bps.or(e.adr_bps))
        .filter(|b| b.is_finite() && *b >= 1.0);
    if let Some(bps) = figure {
        out.result = RunResult::Capacity(CapacityFigures { bps });
    }
    out.error = match (error, figure) {
        (Some(e), _) => Some(e.to_string()),
        (None, None) => Some(format!(
            "no capacity estimate from {} trains received",
            cap.trains_received
        )),
        (None, Some(_)) => None,
    };
    out.document = Some(serde_json::json!({
        "server": cap.server, "family": cap.family, "trains_received": cap.trains_received,
        "seconds": cap.seconds, "estimate": cap.estimate,
    }));
    out
}

fn load_profile(task: &ProfileTask) -> Result<sonde_profile::Profile, String> {
    let profile = match (&task.name, &task.file) {
        (Some(n), _) => sonde_profile::builtin::get(n)
            .ok_or_else(|| format!("{n:?} is not a built-in profile"))?,
        (None, Some(f)) => {
            let text = std::fs::read_to_string(f)
                .map_err(|e| format!("cannot read the profile {}: {e}", f.display()))?;
            sonde_profile::Profile::from_toml(&text)
                .map_err(|e| format!("profile {}: {e}", f.display()))?
        }
        (None, None) => return Err("no profile named".into()),
    };
    let profile = profile.with_duration(task.duration_secs);
    profile.validate().map_err(|e| e.to_string())?;
    Ok(profile)
}

/// The family label of a profile run to `peer`. A profile's report names no address, so this
/// is the configured family, or the host's own when it is an address literal: only a name
/// resolved either way stays `any`.
fn profile_family(peer: &Peer) -> &'static str {
    match peer.family {
        FamilyChoice::Any => family_of(&peer.host).unwrap_or("any"),
        choice => family_label(choice),
    }
}

/// Runs a profile job: the profile (cut to the task's duration) when its load fits the budget.
pub fn run_profile(
    peer: &Peer,
    job: Job,
    task: &ProfileTask,
    measured: Option<u64>,
    interrupt: &AtomicBool,
) -> RunOutcome {
    let link = peer
        .link_rate
        .as_deref()
        .and_then(|r| parse_positive_rate(r).ok());
    let mut out = base(peer, job, serde_json::Value::Null);
    out.family = profile_family(peer).into();
    let profile = match load_profile(task) {
        Ok(p) => p,
        Err(e) => return failed(out, e),
    };
    let load = profile_load(&profile);
    out.parameters = serde_json::json!({
        "host": peer.host, "port": peer.port, "profile": profile.name,
        "duration_secs": task.duration_secs, "share": task.share, "load_bps": load,
        "link_rate_bps": link, "measured_capacity_bps": measured,
    });
    if let Err(e) = profile_fits(load, link, measured, task.share) {
        return failed(out, e);
    }
    let key = match peer_key(peer) {
        Ok(k) => k,
        Err(e) => return failed(out, e),
    };
    let cfg = ProfileConfig {
        host: peer.host.clone(),
        port: peer.port,
        family: family(peer.family),
        local: sockets_with(key),
        connect_timeout: CONNECT_TIMEOUT,
        request: ProfileRequest {
            profile,
            clock_synced: false,
            clock_offset: None,
        },
    };
    let result = sonde_runtime::profile_run::run(&cfg, interrupt, &mut Discard);
    out.ended_unix = sonde_platform::host::unix_now();
    if let Some(r) = &result.report {
        let worst = r
            .streams
            .iter()
            .map(|s| s.loss_percent() / 100.0)
            .fold(0.0, f64::max);
        out.result = RunResult::Profile(ProfileFigures {
            worst_loss_ratio: worst,
        });
        if let Some(why) = &r.ended_early {
            out.error = Some(why.clone());
        }
    }
    if let Some(e) = result.error {
        out.error = Some(e.to_string());
    }
    out.document = result
        .report
        .as_ref()
        .and_then(|r| serde_json::to_value(r).ok());
    out
}

/// Runs `job` against `peer` with the task of its kind (a job of a kind without a task
/// fails); `measured` is the peer's latest capacity figure, for the throughput budget.
pub fn run_job(
    peer: &Peer,
    job: Job,
    cfg: &AgentConfig,
    measured: Option<u64>,
    interrupt: &AtomicBool,
) -> RunOutcome {
    match job.kind {
        Kind::Latency => cfg
            .latency
            .as_ref()
            .map(|t| run_latency(peer, job, t, interrupt)),
        Kind::Throughput => cfg
            .throughput
            .as_ref()
            .map(|t| run_throughput(peer, job, t, measured, interrupt)),
        Kind::Capacity => cfg
            .capacity
            .as_ref()
            .map(|_| run_capacity(peer, job, interrupt)),
        Kind::Profile => cfg
            .profile
            .as_ref()
            .map(|t| run_profile(peer, job, t, measured, interrupt)),
    }
    .unwrap_or_else(|| unknown(peer, job))
}

/// A run of `peer` that failed before it began, with `error` as its reason: its name gave
/// no address to measure (an `every_address` entry: crate::group), or its thread could not
/// be started (crate::inflight).
pub fn not_started(peer: &Peer, job: Job, error: String) -> RunOutcome {
    failed(base(peer, job, serde_json::Value::Null), error)
}

/// The outcome of `run`, or when it panics (a defect in sonde, never the peer's doing: its
/// answers end in errors) a failed outcome saying so, so the run is counted and stored
/// rather than lost with its thread.
pub fn outcome_of(peer: &Peer, job: Job, run: impl FnOnce() -> RunOutcome) -> RunOutcome {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        failed(
            base(peer, job, serde_json::Value::Null),
            format!("the run ended on a defect in sonde (please report it): {what}"),
        )
    })
}

/// A run of a kind the configuration has no task for.
pub fn unknown(peer: &Peer, job: Job) -> RunOutcome {
    not_started(
        peer,
        job,
        format!("no [{}] task configured", job.kind.as_str()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_run_to_an_address_is_labelled_with_its_family() {
        let peer = |host: &str, family| Peer {
            host: host.into(),
            family,
            ..peer("p")
        };
        assert_eq!(
            profile_family(&peer("127.0.0.1", FamilyChoice::Any)),
            "ipv4"
        );
        assert_eq!(profile_family(&peer("::1", FamilyChoice::Any)), "ipv6");
        assert_eq!(
            profile_family(&peer("example.net", FamilyChoice::Any)),
            "any"
        );
        assert_eq!(
            profile_family(&peer("example.net", FamilyChoice::Ipv6)),
            "ipv6"
        );
    }

    #[test]
    fn throughput_figures_name_each_direction_that_received() {
        let view = |bps: f64, udp: Option<(u64, u64, f64)>| sonde_stats::model::EndView {
            start: 0.0,
            end: 10.0,
            bytes: 0,
            bits_per_second: bps,
            tcp: None,
            udp_sent_packets: None,
            udp_received: udp.map(|(packets, lost, jitter_ms)| {
                sonde_stats::model::UdpReceiveStats {
                    packets,
                    lost,
                    lost_percent: 0.0,
                    jitter_ms,
                    out_of_order: 0,
                    duplicates: 0,
                }
            }),
        };
        let directions = [
            DirectionSummary {
                client_sends: true,
                sent: None,
                received: Some(view(9e5, None)),
            },
            DirectionSummary {
                client_sends: false,
                sent: None,
                received: Some(view(8e5, Some((200, 10, 0.5)))),
            },
            // Its receiver's figures never came: left out.
            DirectionSummary {
                client_sends: false,
                sent: None,
                received: None,
            },
        ];
        let f = throughput_figures(&directions, 1_000_000);
        assert_eq!(f.paced_bps, 1_000_000);
        assert_eq!(f.received_bps, vec![("upload", 9e5), ("download", 8e5)]);
        assert_eq!(f.udp.len(), 1);
        let (name, u) = &f.udp[0];
        assert_eq!(
            (*name, u.packets, u.lost, u.jitter_ms),
            ("download", 200, 10, 0.5)
        );
    }

    fn peer(name: &str) -> Peer {
        Peer {
            name: Some(name.into()),
            host: "127.0.0.1".into(),
            port: 9,
            family: FamilyChoice::Ipv4,
            link_rate: None,
            psk_file: None,
            every_address: false,
        }
    }

    /// A run that panics still gives a failed outcome, with the panic's message; one that
    /// does not is passed through.
    #[test]
    fn a_run_that_panics_is_a_failed_outcome_not_a_lost_one() {
        let p = peer("p");
        let job = Job {
            peer: 0,
            kind: Kind::Latency,
            seq: 3,
        };
        let o = outcome_of(&p, job, || panic!("index out of range"));
        assert!(!o.ok());
        assert_eq!(o.peer, "p");
        let why = o.error.as_deref().unwrap_or("");
        assert!(
            why.contains("defect in sonde") && why.contains("index out of range"),
            "{why}"
        );
        let fine = outcome_of(&p, job, || unknown(&p, job));
        assert_eq!(fine.error, unknown(&p, job).error);
    }
}
