//! The scenario modes of `sonde compare-ip`: latency over a cycle of probe sizes, BTC sessions
//! and path capacity, run to each family's address so the figures stand side by side. The
//! measuring is the existing prober, `btc::run_session` and `capacity::client::run`; this
//! module only schedules them per family and collects the figures (`sonde_stats::dual_stack`
//! judges them).
//!
//! BTC: the families' sessions alternate (IPv4, IPv6, IPv4, ...), so a change of the path
//! during the run falls on both; each family's running statistics are kept apart. Capacity
//! runs one family and then the other.
//!
//! Sizes: one prober per family and size, all started together and offset so the probes of a
//! family go out one every `every`, cycling over the sizes (size i at i x every, repeating
//! every sizes x every); IPv6 runs half a step after IPv4, so the two families never probe at
//! the same instant yet see the same conditions over the run.

use crate::btc;
use crate::clock::sleep_unless_interrupted;
use crate::connect::ClientConfig;
use crate::latency::{run as run_latency, LatencyConfig};
use crate::sockets::ClientSockets;
use sonde_platform::resolve::Family;
use sonde_proto::capacity::CapacityPlan;
use sonde_proto::message::TestParams;
use sonde_stats::btc::BtcStats;
use sonde_stats::capacity::Estimate;
use sonde_stats::dual_stack::{udp_ip_overhead, BtcFamily, CapacityFamily, SizeRow};
use sonde_stats::latency::timeline::{ProbePoint, ProbeTimeline};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Latency over sizes: UDP payload bytes, the time between a family's probes, probes per size.
#[derive(Debug, Clone)]
pub struct SizesPlan {
    pub sizes: Vec<u32>,
    pub every: Duration,
    pub count: u64,
}

/// BTC per family: session sizes (bytes) and the time from one session's start to the next.
#[derive(Debug, Clone)]
pub struct BtcPlan {
    pub sizes: Vec<sonde_stats::units::Size>,
    pub every: Duration,
}

fn family_name(v6: bool) -> &'static str {
    if v6 {
        "IPv6"
    } else {
        "IPv4"
    }
}

/// What the size cycle measured: the per-size rows of each family (IPv4's first, sizes in
/// the plan's order), each family's RTT samples over all sizes and each family's probes
/// along the run.
pub struct SizeCycle {
    pub rows: Vec<SizeRow>,
    pub samples: [Vec<f64>; 2],
    pub points: [Vec<ProbePoint>; 2],
}

/// Runs the size cycle (see the module docs). `addrs` holds the address of each family
/// measured.
pub fn run_sizes(
    plan: &SizesPlan,
    probe: &LatencyConfig,
    addrs: [Option<IpAddr>; 2],
    interrupt: &Arc<AtomicBool>,
) -> SizeCycle {
    let n = plan.sizes.len().max(1) as u32;
    let start = Instant::now();
    let mut handles = Vec::new();
    for (fi, addr) in addrs.iter().enumerate() {
        let Some(addr) = *addr else { continue };
        let v6 = fi == 1;
        for (si, &size) in plan.sizes.iter().enumerate() {
            let mut cfg = probe.clone();
            cfg.host = addr.to_string();
            cfg.family = Family::Any;
            cfg.size = size as usize;
            cfg.interval = plan.every * n;
            cfg.count = Some(plan.count);
            cfg.duration = None;
            cfg.flood = false;
            cfg.report_interval = None;
            let offset = plan.every * si as u32 + if v6 { plan.every / 2 } else { Duration::ZERO };
            let stop = interrupt.clone();
            let h = std::thread::spawn(move || {
                if !sleep_unless_interrupted(start + offset, &stop) {
                    return (
                        size_row(v6, size, None, Some("interrupted".into())),
                        Vec::new(),
                        Vec::new(),
                    );
                }
                let mut timeline = ProbeTimeline::default();
                let out = run_latency(&cfg, &stop, &mut timeline);
                let err = out.error.map(|e| e.to_string());
                let row = size_row(v6, size, out.summary, err);
                (row, out.rtt_sample_ms, timeline.into_points())
            });
            handles.push((v6, size, h));
        }
    }
    let mut cycle = SizeCycle {
        rows: Vec::new(),
        samples: [Vec::new(), Vec::new()],
        points: [Vec::new(), Vec::new()],
    };
    for (v6, size, h) in handles {
        let (row, s, p) = h.join().unwrap_or_else(|_| {
            let row = size_row(v6, size, None, Some("the prober thread panicked".into()));
            (row, Vec::new(), Vec::new())
        });
        cycle.rows.push(row);
        cycle.samples[usize::from(v6)].extend(s);
        cycle.points[usize::from(v6)].extend(p);
    }
    cycle
}

fn size_row(
    v6: bool,
    size: u32,
    summary: Option<sonde_stats::latency::model::LatencySummary>,
    error: Option<String>,
) -> SizeRow {
    let loss = summary.as_ref().map(|s| s.loss);
    SizeRow {
        family: family_name(v6).into(),
        payload_bytes: size,
        ip_bytes: size + udp_ip_overhead(v6),
        sent: loss.map_or(0, |l| l.sent),
        received: loss.map_or(0, |l| l.received),
        lost: loss.map_or(0, |l| l.lost),
        loss_percent: loss.map_or(0.0, |l| l.loss_percent),
        refused: loss.map_or(0, |l| l.refused),
        rtt: summary.as_ref().and_then(|s| s.rtt),
        error: error.or_else(|| summary.and_then(|s| s.error)),
    }
}

/// A client configuration to `addr` with `params`, its sockets (and key) as `local`.
fn client_to(
    addr: IpAddr,
    port: u16,
    params: TestParams,
    connect_timeout: Duration,
    local: &ClientSockets,
) -> ClientConfig {
    ClientConfig {
        host: addr.to_string(),
        port,
        family: Family::Any,
        cport: None,
        params,
        connect_timeout,
        local: local.clone(),
        rcv_timeout: None,
        file: None,
    }
}

/// The BTC sessions of both families, alternating (IPv4, IPv6, IPv4, ... for each size in
/// turn, one session started every `plan.every`), so both see the same path conditions over
/// the run. `addrs` holds each family's address (an error: the family has no address, and
/// why). A failed session ends its family's sessions; the other family goes on.
pub fn run_btc(
    plan: &BtcPlan,
    addrs: [Result<IpAddr, String>; 2],
    port: u16,
    connect_timeout: Duration,
    local: &ClientSockets,
    interrupt: &AtomicBool,
) -> [BtcFamily; 2] {
    let mut fams = [false, true].map(|v6| BtcFamily {
        family: family_name(v6).into(),
        address: addrs[usize::from(v6)]
            .as_ref()
            .ok()
            .map(ToString::to_string),
        sessions: Vec::new(),
        summary: None,
        error: addrs[usize::from(v6)].as_ref().err().cloned(),
    });
    let mut next_start = Instant::now();
    let mut index = 0u32;
    'sizes: for &size in &plan.sizes {
        for (fi, addr) in addrs.iter().enumerate() {
            let (Ok(addr), Some(fam)) = (addr, fams.get_mut(fi)) else {
                continue;
            };
            if fam.error.is_some() {
                continue;
            }
            if !sleep_unless_interrupted(next_start, interrupt) {
                break 'sizes;
            }
            next_start = Instant::now() + plan.every;
            index += 1;
            let client = client_to(*addr, port, TestParams::default(), connect_timeout, local);
            match btc::run_session(&client, Family::Any, size, index, interrupt) {
                Ok(s) => fam.sessions.push(s),
                Err(e) => fam.error = Some(e.to_string()),
            }
        }
    }
    if interrupt.load(Ordering::Relaxed) {
        for f in fams.iter_mut().filter(|f| f.error.is_none()) {
            f.error = Some(crate::error::RunError::Interrupted.to_string());
        }
    }
    for f in &mut fams {
        f.summary = BtcStats::of(&f.sessions);
    }
    fams
}

/// The path capacity of one family to `addr`, with the default train plan and datagrams
/// whose IP packet is 1500 bytes in either family.
pub fn run_capacity(
    v6: bool,
    addr: Result<IpAddr, String>,
    port: u16,
    connect_timeout: Duration,
    local: &ClientSockets,
    interrupt: &AtomicBool,
) -> CapacityFamily {
    let payload = 1500 - udp_ip_overhead(v6);
    let mut fam = CapacityFamily {
        family: family_name(v6).into(),
        address: addr.as_ref().ok().map(ToString::to_string),
        verdict: None,
        sustained_bps: None,
        sustained_min_bps: None,
        sustained_max_bps: None,
        peak_low_bps: None,
        peak_high_bps: None,
        long_trains_used: 0,
        payload_bytes: payload,
        seconds: 0.0,
        error: None,
    };
    let addr = match addr {
        Ok(a) => a,
        Err(e) => {
            fam.error = Some(e);
            return fam;
        }
    };
    let params = crate::capacity::params(CapacityPlan::default(), payload);
    let cfg = client_to(addr, port, params, connect_timeout, local);
    let (out, error) = crate::capacity::client::run(&cfg, interrupt);
    fam.seconds = out.seconds;
    fam.error = error.map(|e| e.to_string());
    if let Some(e) = &out.estimate {
        fill_capacity(&mut fam, e);
    }
    fam
}

fn fill_capacity(fam: &mut CapacityFamily, e: &Estimate) {
    fam.verdict = Some(e.verdict);
    fam.sustained_bps = e.sustained_bps;
    fam.sustained_min_bps = e.sustained_min_bps;
    fam.sustained_max_bps = e.sustained_max_bps;
    fam.peak_low_bps = e.peak.map(|m| m.low_bps);
    fam.peak_high_bps = e.peak.map(|m| m.high_bps);
    fam.long_trains_used = e.long.used;
}
