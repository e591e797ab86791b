//! `sonde stress -u`: N UDP flows (a socket each) to an echo, discard or chargen server.
//!
//! UDP has no flow control, so nothing here sends unpaced: the offered rate (`rate`, over
//! every flow together) is split into datagrams of one size sent round-robin over the flows on
//! a fixed schedule; a stall is not made up by a burst later (the schedule restarts from now
//! when it falls more than [`MAX_LAG`] behind). Discard counts what was sent; chargen sends one
//! request per reply it wants (RFC 864: one datagram answers each) and counts what comes back;
//! echo numbers its requests ([`probe`]) and matches the replies: loss, duplicates, reordering,
//! round trips, and bytes that came back changed. After the last request the flows keep
//! listening for `drain` so that late replies are not counted lost.
//!
//! Per-flow bytes go through the same [`IntervalSlicer`] as TCP runs, so intervals, fairness
//! and the reporters are shared. Ctrl-C ends the run early and still reports.

mod flow;
pub mod probe;

use flow::Flow;
use mio::{Events, Interest, Poll, Token};
use sonde_stats::sink::{deliver, Sink};
use sonde_stats::stress::model::{
    CloseOutcome, ConnTotal, ConnectReport, StressEvent, StressMode, StressStart, StressSummary,
    Transport,
};
use sonde_stats::stress::slicer::{sum_of, ConnCounters, IntervalSlicer};
use sonde_stats::stress::steady::Steady;
use sonde_stats::stress::udp::{
    replies_stopped, reply_cap, DatagramInterval, EchoFigures, RttAccumulator, UdpSummary,
};
use sonde_stats::units::Rate;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How far the send schedule may fall behind before it restarts from now.
pub const MAX_LAG: Duration = Duration::from_millis(50);
/// Largest UDP payload over IPv4.
pub const MAX_DATAGRAM: usize = 65_507;

/// One UDP stress run.
#[derive(Debug, Clone)]
pub struct UdpStressConfig {
    pub addr: SocketAddr,
    /// The host as the user typed it, for the report.
    pub remote: String,
    pub mode: StressMode,
    pub flows: u32,
    pub duration: Duration,
    pub interval: Duration,
    /// Payload bytes per request (echo: at least [`probe::LEN`]).
    pub datagram: usize,
    /// Offered rate over every flow, of request payload.
    pub rate: Rate,
    /// How long to keep listening for replies after the last request.
    pub drain: Duration,
    /// `--warmup`, as [`crate::client::StressConfig::warmup`].
    pub warmup: Duration,
}

/// Why a UDP stress run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum UdpStressError {
    #[error("event loop: {0}")]
    Poll(#[source] std::io::Error),
    #[error("no UDP socket to {addr} could be opened ({why})")]
    NoSocket { addr: SocketAddr, why: String },
}

/// Runs the flows, handing events to `emit` as they happen; returns the summary (also emitted
/// as `End`).
///
/// # Errors
/// epoll fails, or not one socket could be opened.
pub fn run(
    cfg: &UdpStressConfig,
    stop: &AtomicBool,
    emit: &mut dyn Sink<StressEvent>,
) -> Result<StressSummary, UdpStressError> {
    crate::os::raise_nofile_limit();
    deliver(
        emit,
        &StressEvent::Start(StressStart {
            remote: cfg.remote.clone(),
            port: cfg.addr.port(),
            mode: cfg.mode,
            transport: Transport::Udp,
            connections: cfg.flows,
            duration_secs: cfg.duration.as_secs_f64(),
            interval_secs: cfg.interval.as_secs_f64(),
            connect_timeout_secs: 0.0,
        }),
    );
    let poll = Poll::new().map_err(UdpStressError::Poll)?;
    let (mut flows, connect) = open(cfg, &poll);
    deliver(emit, &StressEvent::Connected(connect.clone()));
    if flows.is_empty() {
        return Err(UdpStressError::NoSocket {
            addr: cfg.addr,
            why: connect.first_error.unwrap_or_default(),
        });
    }
    let mut run = Runner::new(cfg, poll);
    let seconds = run.measure(&mut flows, stop, emit)?;
    let partial = stop.load(Ordering::SeqCst);
    if !partial {
        run.drain(&mut flows, stop)?;
    }
    let summary = run.summarise(&flows, seconds, connect, partial);
    deliver(emit, &StressEvent::End(summary.clone()));
    Ok(summary)
}

/// One connected, non-blocking socket per flow.
fn open(cfg: &UdpStressConfig, poll: &Poll) -> (Vec<Flow>, ConnectReport) {
    let t0 = Instant::now();
    let mut report = ConnectReport {
        asked: cfg.flows,
        ..ConnectReport::default()
    };
    let mut flows = Vec::new();
    for id in 0..cfg.flows {
        match Flow::open(cfg.addr, id, cfg.datagram.clamp(1, MAX_DATAGRAM)) {
            Ok(mut f) => {
                let token = Token(flows.len());
                match poll
                    .registry()
                    .register(f.socket_mut(), token, Interest::READABLE)
                {
                    Ok(()) => flows.push(f),
                    Err(e) => fail(&mut report, e),
                }
            }
            Err(e) => fail(&mut report, e),
        }
    }
    report.connected = flows.len() as u32;
    report.seconds = t0.elapsed().as_secs_f64();
    (flows, report)
}

fn fail(report: &mut ConnectReport, e: std::io::Error) {
    report.other_failed += 1;
    report.first_error.get_or_insert_with(|| e.to_string());
}

/// The run's clock, schedule and run-wide counters.
struct Runner<'a> {
    cfg: &'a UdpStressConfig,
    poll: Poll,
    events: Events,
    t0: Instant,
    /// Seconds between two requests, over every flow.
    gap: f64,
    next_send: f64,
    next_flow: usize,
    request: Vec<u8>,
    buf: Vec<u8>,
    pattern: crate::chargen::Pattern,
    rtt: RttAccumulator,
    datagram_intervals: Vec<DatagramInterval>,
    send_errors: u64,
    first_send_error: Option<String>,
    steady: Steady,
}

impl<'a> Runner<'a> {
    fn new(cfg: &'a UdpStressConfig, poll: Poll) -> Self {
        let bits = (cfg.datagram.max(1) * 8) as f64;
        Self {
            cfg,
            poll,
            events: Events::with_capacity(1024),
            t0: Instant::now(),
            gap: bits / (cfg.rate.bits_per_sec().max(1) as f64),
            next_send: 0.0,
            next_flow: 0,
            request: vec![0; cfg.datagram.clamp(1, MAX_DATAGRAM)],
            buf: vec![0; 65_536],
            pattern: crate::chargen::Pattern::new(cfg.datagram.clamp(1, MAX_DATAGRAM)),
            rtt: RttAccumulator::default(),
            datagram_intervals: Vec::new(),
            send_errors: 0,
            first_send_error: None,
            steady: Steady::new(cfg.mode, cfg.warmup.as_secs_f64()),
        }
    }

    fn now(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    /// The paced data phase; returns the seconds measured.
    fn measure(
        &mut self,
        flows: &mut [Flow],
        stop: &AtomicBool,
        emit: &mut dyn Sink<StressEvent>,
    ) -> Result<f64, UdpStressError> {
        let mut slicer =
            IntervalSlicer::new(self.cfg.mode, flows.len(), self.cfg.interval.as_secs_f64());
        let end = self.cfg.duration.as_secs_f64();
        let mut last = (0u64, 0u64);
        self.t0 = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            let now = self.now();
            if now >= end {
                break;
            }
            if now >= slicer.next_boundary() {
                self.cut(&mut slicer, now, flows, &mut last, emit);
                continue;
            }
            self.send_due(flows, now);
            let due = self.next_send.min(slicer.next_boundary()).min(end);
            let wait = secs(due - self.now()).min(Duration::from_millis(100));
            self.receive(flows, wait)?;
        }
        let seconds = self.now().min(end);
        self.cut(&mut slicer, seconds, flows, &mut last, emit);
        Ok(seconds)
    }

    /// Ends an interval at `now`: bytes per flow to the slicer, datagram counts kept for the
    /// reply-cap judgement.
    fn cut(
        &mut self,
        slicer: &mut IntervalSlicer,
        now: f64,
        flows: &[Flow],
        last: &mut (u64, u64),
        emit: &mut dyn Sink<StressEvent>,
    ) {
        let start = slicer.next_boundary() - self.cfg.interval.as_secs_f64();
        if let Some(mut iv) = slicer.cut(now, &counters(flows)) {
            self.steady.take(&mut iv);
            let counts = datagram_counts(flows);
            self.datagram_intervals.push(DatagramInterval {
                seconds: now - start,
                requests: counts.0 - last.0,
                replies: counts.1 - last.1,
            });
            *last = counts;
            deliver(emit, &StressEvent::Interval(iv));
        }
    }

    /// Sends every request due by `now`, round-robin over the flows.
    fn send_due(&mut self, flows: &mut [Flow], now: f64) {
        if now - self.next_send > MAX_LAG.as_secs_f64() {
            self.next_send = now;
        }
        while self.next_send <= now {
            let n = flows.len().max(1);
            let i = self.next_flow % n;
            self.next_flow = (i + 1) % n;
            self.next_send += self.gap;
            let sent_ns = self.t0.elapsed().as_nanos() as u64;
            let Some(f) = flows.get_mut(i) else {
                return;
            };
            if let Err(e) = f.send(self.cfg.mode, &mut self.request, &self.pattern, sent_ns) {
                self.send_errors += 1;
                self.first_send_error.get_or_insert_with(|| e.to_string());
            }
        }
    }

    /// Waits up to `wait` for replies and reads every flow that has some.
    fn receive(&mut self, flows: &mut [Flow], wait: Duration) -> Result<(), UdpStressError> {
        match self.poll.poll(&mut self.events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(UdpStressError::Poll(e)),
        }
        let now_ns = self.t0.elapsed().as_nanos() as u64;
        for ev in self.events.iter() {
            if let Some(f) = flows.get_mut(ev.token().0) {
                f.read_all(
                    self.cfg.mode,
                    &mut self.buf,
                    &self.pattern,
                    now_ns,
                    &mut self.rtt,
                );
            }
        }
        Ok(())
    }

    /// After the last request: replies still on their way are counted, for `drain`.
    fn drain(&mut self, flows: &mut [Flow], stop: &AtomicBool) -> Result<(), UdpStressError> {
        if !self.cfg.mode.receives() {
            return Ok(());
        }
        let until = Instant::now() + self.cfg.drain;
        while !stop.load(Ordering::SeqCst) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.receive(flows, left.min(Duration::from_millis(100)))?;
        }
        Ok(())
    }

    fn summarise(
        &self,
        flows: &[Flow],
        seconds: f64,
        connect: ConnectReport,
        partial: bool,
    ) -> StressSummary {
        let mode = self.cfg.mode;
        let totals: Vec<ConnTotal> = flows
            .iter()
            .enumerate()
            .map(|(i, f)| f.total(i as u32 + 1, seconds))
            .collect();
        let sum = sum_of(
            mode,
            seconds,
            totals.iter().map(|t| (t.sent_bytes, t.received_bytes)),
        );
        let echo = (mode == StressMode::Echo).then(|| {
            let mut e = EchoFigures::default();
            for f in flows {
                e.add(&f.echo_figures());
            }
            e.rtt = self.rtt.stats();
            e
        });
        let (sent, received) = datagram_counts(flows);
        let udp = UdpSummary {
            datagram_bytes: self.request.len() as u64,
            offered_bps: self.cfg.rate.bits_per_sec() as f64,
            datagrams_sent: sent,
            datagrams_received: received,
            send_errors: self.send_errors,
            first_send_error: self.first_send_error.clone(),
            echo,
            reply_cap_per_sec: mode
                .receives()
                .then(|| reply_cap(&self.datagram_intervals))
                .flatten(),
            replies_stopped_at: mode
                .receives()
                .then(|| replies_stopped(&self.datagram_intervals))
                .flatten(),
            largest_reply_bytes: flows.iter().map(|f| f.largest_reply).max().unwrap_or(0),
            oversized_replies: flows.iter().map(|f| f.oversized_replies).sum(),
        };
        let mut s = StressSummary {
            seconds,
            connect,
            sum,
            closed_clean: 0,
            closed_reset: 0,
            closed_timeout: 0,
            failed_during_run: 0,
            echo_mismatched_bytes: flows.iter().map(|f| f.mismatched).sum(),
            // UDP promises no delivery: what did not come back is the echo loss above.
            echo_unreturned_bytes: 0,
            connections: totals,
            partial,
            udp: Some(Box::new(udp)),
            warmup_secs: 0.0,
            zero_share_worst: None,
        };
        self.steady.apply(&mut s);
        s
    }
}

fn counters(flows: &[Flow]) -> Vec<ConnCounters> {
    flows
        .iter()
        .map(|f| ConnCounters {
            sent: f.sent_bytes,
            received: f.received_bytes,
            open: true,
        })
        .collect()
}

/// (requests sent, replies received) over every flow.
fn datagram_counts(flows: &[Flow]) -> (u64, u64) {
    flows.iter().fold((0, 0), |(s, r), f| {
        (s + f.sent_datagrams, r + f.received_datagrams)
    })
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(0.0)).unwrap_or(Duration::ZERO)
}

impl Flow {
    fn total(&self, id: u32, seconds: f64) -> ConnTotal {
        use sonde_stats::stress::slicer::bps;
        ConnTotal {
            id,
            sent_bytes: self.sent_bytes,
            received_bytes: self.received_bytes,
            sent_bps: bps(self.sent_bytes, seconds),
            received_bps: bps(self.received_bytes, seconds),
            close: CloseOutcome::Udp,
            error: self.error.clone(),
            drained_bytes: 0,
            zero_share: None,
        }
    }
}
