//! `sonde capacity HOST`: receive a plan's trains from a sonde server and estimate.
//!
//! The control session is the usual one (hello, where the server must list `capacity`; a
//! reverse UDP test request of one stream carrying the plan; the stream's hello; start).
//! Then this end reads datagrams with their kernel receive stamps, builds trains
//! ([`Collector`]), acknowledges each one on the stream (twice: a lost acknowledgement costs
//! the server a bounded wait), and stops when the last train is in, when the long trains so
//! far agree (the pure [`StopRule`], unless turned off: the client then stops the test as
//! it would at its end, and the server sends no more trains), at the deadline, or on
//! Ctrl-C, keeping what arrived. Both ends exchange results (their CPU) as for any test.

use super::collect::Collector;
use sonde_platform::{cpu, sockopt, timestamp};
use sonde_proto::capacity::{emit_ack, parse_departure, CapacityPlan, Departure, Probe};
use sonde_runtime_core::connect::ClientConfig;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::own_loop::{self, Needs};
use sonde_stats::capacity::converge::{EarlyStop, StopRule};
use sonde_stats::capacity::departure::{check, DepartureCheck};
use sonde_stats::capacity::sizes::{by_size, train_sizes, SizeRow, TrainSize};
use sonde_stats::capacity::{estimate, Estimate, Layers};
use sonde_stats::model::CpuUsage;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A train whose datagrams stop this long before its last one is closed as it is.
const QUIET: Duration = Duration::from_millis(250);
/// Receive buffer asked for: a whole long train of large datagrams fits.
const RCVBUF: usize = 16 << 20;
/// With transmit stamps asked for, how long to wait after the last train for its departure
/// report (the server sends it once it has the acknowledgement).
const REPORT_WAIT: Duration = Duration::from_millis(300);

/// The result of a capacity run, for the reporters.
#[derive(Debug, Clone)]
pub struct CapacityOutcome {
    pub server: String,
    pub plan: CapacityPlan,
    pub layers: Layers,
    /// "IPv4" or "IPv6".
    pub family: &'static str,
    /// Receive times are the kernel's (else the wall clock after each read).
    pub kernel_stamps: bool,
    pub trains_received: usize,
    /// Trains the server sent, as counted from their datagrams: the highest train number
    /// seen (the ones after an early stop too), plus one; None when nothing arrived.
    pub trains_sent: Option<u32>,
    /// Datagrams ignored (late, duplicated, not fitting the plan).
    pub ignored: u64,
    pub seconds: f64,
    /// The user stopped the run; the estimate is of what arrived.
    pub interrupted: bool,
    pub estimate: Option<Estimate>,
    pub cpu_local: Option<CpuUsage>,
    pub cpu_remote: Option<CpuUsage>,
    /// With `tx_timestamps` in the plan: the server's departure reports checked against the
    /// trains received (None when not asked for).
    pub departures: Option<DepartureCheck>,
    /// Whether the long trains agreed before the end of the plan and the run stopped.
    pub early_stop: EarlyStop,
    /// With probe sizes in the plan: each received train's size as it arrived, and the
    /// short trains' estimate per size (empty otherwise).
    pub train_sizes: Vec<TrainSize>,
    pub by_size: Vec<SizeRow>,
    /// Datagrams of each long train that arrived, in order.
    pub long_received: Vec<u32>,
}

/// Runs a capacity test (`cfg.params` from [`super::params`]) that stops early by the
/// default [`StopRule`]; on failure what was measured so far comes with the error.
pub fn run(cfg: &ClientConfig, interrupt: &AtomicBool) -> (CapacityOutcome, Option<RunError>) {
    run_with(cfg, Some(StopRule::default()), interrupt)
}

/// [`run`] with the early-stop rule given, or none to receive the whole plan.
pub fn run_with(
    cfg: &ClientConfig,
    rule: Option<StopRule>,
    interrupt: &AtomicBool,
) -> (CapacityOutcome, Option<RunError>) {
    let plan = cfg.params.capacity.unwrap_or_default();
    let mut out = CapacityOutcome {
        server: String::new(),
        plan,
        layers: Layers::udp(cfg.params.length_u32(), false),
        family: "IPv4",
        kernel_stamps: false,
        trains_received: 0,
        trains_sent: None,
        ignored: 0,
        seconds: 0.0,
        interrupted: false,
        estimate: None,
        cpu_local: None,
        cpu_remote: None,
        departures: None,
        early_stop: EarlyStop {
            enabled: rule.is_some(),
            rule: rule.unwrap_or_default(),
            planned_long_trains: plan.long_trains,
            stopped: false,
            after_long_trains: None,
            last: None,
        },
        train_sizes: Vec::new(),
        by_size: Vec::new(),
        long_received: Vec::new(),
    };
    let err = execute(cfg, interrupt, &mut out).err();
    (out, err)
}

fn execute(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    out: &mut CapacityOutcome,
) -> Result<(), RunError> {
    let (mut conn, mut s, server) = own_loop::connect(cfg, &mut out.server, interrupt)?;
    let v6 = server.ip().to_canonical().is_ipv6();
    out.layers = Layers::udp(cfg.params.length_u32(), v6);
    out.family = if v6 { "IPv6" } else { "IPv4" };
    let needs = Needs {
        capability: "capacity",
        what: "send capacity probe trains (sonde capacity)",
    };
    let r = (|| {
        let sock = own_loop::open_stream(cfg, interrupt, &mut conn, &mut s, server, &needs)?;
        check_path_mtu(&sock, &out.plan, out.layers, v6)?;
        let span = cpu::ProcessSpan::start();
        let t0 = Instant::now();
        let deadline = t0 + Duration::from_secs_f64(cfg.params.duration_secs);
        let received = receive(&sock, out, deadline, interrupt, &mut conn, &mut s);
        out.seconds = t0.elapsed().as_secs_f64();
        let cpu_local = span.usage();
        out.cpu_local = Some(cpu_local);
        let complete = received?;
        out.cpu_remote = Some(own_loop::close(
            &mut conn,
            &mut s,
            cpu_local,
            out.interrupted,
        )?);
        if out.interrupted {
            return Err(RunError::Interrupted);
        }
        if !complete {
            return Err(RunError::Timeout("the last capacity train"));
        }
        Ok(())
    })();
    if let Err(e) = &r {
        own_loop::abort_on(&mut conn, &mut s, e);
    }
    r
}

/// Receives trains until the plan's last one is in or the long trains agree (true), the
/// deadline or Ctrl-C (false); the estimate of what arrived goes into `out` in every case.
fn receive(
    sock: &UdpSocket,
    out: &mut CapacityOutcome,
    deadline: Instant,
    interrupt: &AtomicBool,
    conn: &mut sonde_runtime_core::control_conn::ControlConn,
    s: &mut sonde_proto::session::ClientSession,
) -> Result<bool, RunError> {
    if sockopt::force_recv_buffer(sock, RCVBUF).is_err() {
        let v = (RCVBUF.min(i32::MAX as usize) as libc::c_int).to_ne_bytes();
        let _ = sockopt::set_raw(sock, libc::SOL_SOCKET, libc::SO_RCVBUF, &v);
    }
    out.kernel_stamps = timestamp::enable_rx(sock);
    let mut col = Collector::new(out.plan, out.layers.ip - out.layers.payload);
    let mut buf = vec![0u8; 65_536];
    let mut last_rx = Instant::now();
    let mut departures: Vec<Departure> = Vec::new();
    let mut complete_at: Option<Instant> = None;
    let mut late_ack: Option<u32> = None;
    let result = loop {
        if interrupt.load(Ordering::Relaxed) {
            out.interrupted = true;
            break Ok(false);
        }
        if all_in(&col, out, &departures, &mut complete_at) {
            break Ok(true);
        }
        if Instant::now() >= deadline {
            break Ok(false);
        }
        if let Err(e) = own_loop::watch_control(conn, s) {
            break Err(e);
        }
        let ready = match timestamp::wait_readable(sock, Duration::from_millis(5)) {
            Ok(r) => r,
            Err(e) => break Err(RunError::Stream { id: 1, source: e }),
        };
        let mut ack = None;
        if ready {
            while let Ok(r) = timestamp::recv(sock, &mut buf) {
                if let Some(d) = buf.get(..r.len).and_then(parse_departure) {
                    if departures.len() < out.plan.trains() as usize * 2 {
                        departures.push(d);
                    }
                    continue;
                }
                last_rx = Instant::now();
                let Some(p) = buf.get(..r.len).and_then(|b| Probe::parse(b).ok()) else {
                    col.ignored += 1;
                    continue;
                };
                if p.train < out.plan.trains() {
                    out.trains_sent = out.trains_sent.max(Some(p.train + 1));
                }
                if out.early_stop.stopped {
                    // A train the server started before it saw the stop: not kept, but
                    // acknowledged, so a server that waits for it does not wait long.
                    if late_ack.is_none_or(|t| t < p.train) {
                        late_ack = Some(p.train);
                        let _ = sock.send(&emit_ack(p.train));
                    }
                    continue;
                }
                ack = col.push(p, r.len, r.best_ns()).or(ack);
            }
        } else if last_rx.elapsed() >= QUIET {
            ack = col.quiet();
        }
        if let Some(train) = ack {
            let a = emit_ack(train);
            let _ = sock.send(&a);
            let _ = sock.send(&a);
            if train >= out.plan.short_trains && !col.complete() {
                consider_stop(&mut out.early_stop, col.long());
            }
        }
    };
    conclude(out, col, departures);
    result
}

/// Whether the receiving is over: the last train is in (or the early stop came) and, with
/// transmit stamps asked for, its departure report too or [`REPORT_WAIT`] has passed since.
fn all_in(
    col: &Collector,
    out: &CapacityOutcome,
    departures: &[Departure],
    complete_at: &mut Option<Instant>,
) -> bool {
    if !(col.complete() || out.early_stop.stopped) {
        return false;
    }
    let since = *complete_at.get_or_insert_with(Instant::now);
    let last_train = col.done.last().map_or(0, |t| t.id);
    let reported = departures.iter().any(|d| d.train == last_train);
    !out.plan.tx_timestamps || reported || since.elapsed() >= REPORT_WAIT
}

/// The figures of what arrived, into `out`: counts, departure check, the last look of the
/// early-stop rule, the estimate.
fn conclude(out: &mut CapacityOutcome, col: Collector, departures: Vec<Departure>) {
    out.ignored = col.ignored;
    out.trains_received = col.done.len();
    let (short, long) = col.finish();
    out.long_received = long.iter().map(|t| t.arrivals.len() as u32).collect();
    if out.plan.tx_timestamps {
        let all: Vec<_> = short.iter().chain(long.iter()).collect();
        out.departures = Some(check(departures, &all));
    }
    if out.early_stop.enabled && !long.is_empty() {
        out.early_stop.last = Some(out.early_stop.rule.check(&long));
    }
    if !out.plan.sizes.is_empty() {
        let headers = out.layers.ip - out.layers.payload;
        let all: Vec<_> = short.iter().chain(long.iter()).collect();
        out.train_sizes = train_sizes(&all, headers);
        out.by_size = by_size(&short, headers);
    }
    out.estimate = Some(estimate(&short, &long));
}

/// Refuses probe sizes whose IP packets would not fit the path MTU
/// the kernel knows for the connected socket (`IP_MTU`/`IPV6_MTU`): they would be
/// fragmented or dropped, and a fragment train measures something else. Not checked when
/// the kernel does not say.
fn check_path_mtu(
    sock: &UdpSocket,
    plan: &CapacityPlan,
    layers: Layers,
    v6: bool,
) -> Result<(), RunError> {
    let (level, name) = if v6 {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU)
    } else {
        (libc::IPPROTO_IP, libc::IP_MTU)
    };
    let Ok(mtu) = sonde_platform::socket_figures::get_int(sock, level, name) else {
        return Ok(());
    };
    let headers = layers.ip - layers.payload;
    let Some(largest) = plan.sizes.as_slice().iter().copied().max() else {
        return Ok(());
    };
    if i64::from(largest) + i64::from(headers) > i64::from(mtu) {
        return Err(RunError::Setup(format!(
            "a probe of {largest} B makes a {} B IP packet, over the path MTU of {mtu} B; use sizes up to {} B",
            largest + headers,
            i64::from(mtu) - i64::from(headers)
        )));
    }
    Ok(())
}

/// After a long train of `long` closed before the plan's end: whether to stop now.
fn consider_stop(es: &mut EarlyStop, long: &[sonde_stats::capacity::train::Train]) {
    if !es.enabled || es.stopped {
        return;
    }
    let c = es.rule.check(long);
    es.last = Some(c);
    if c.converged {
        es.stopped = true;
        es.after_long_trains = Some(c.long_trains);
    }
}
