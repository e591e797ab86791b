//! `sonde stress`: many TCP connections to an echo, discard or chargen server.
//!
//! Three phases, one mio event loop: open every connection at once (each a non-blocking
//! connect, classified as connected, refused, timed out or failed); move data for the run's
//! duration, cutting an interval every `interval` ([`IntervalSlicer`]); then close every
//! connection (our FIN) and wait for the device's FIN, so that a stack which cannot close
//! cleanly under load shows it. Ctrl-C ends the data phase early and still closes and reports.

mod config;
mod conn;
mod connect;
mod error;
pub mod overload;
pub mod pace;
pub mod storm;
pub mod udp;

pub use config::StressConfig;
use conn::Conn;
use error::poll_once;
pub use error::StressError;
use mio::{Events, Poll};
use sonde_stats::sink::{deliver, Sink};
use sonde_stats::stress::model::{
    CloseOutcome, ConnTotal, ConnectReport, StressEvent, StressMode, StressStart, StressSummary,
};
use sonde_stats::stress::slicer::{sum_of, ConnCounters, IntervalSlicer};
use sonde_stats::stress::steady::Steady;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Runs the stress test, handing events to `emit` as they happen; returns the summary (also
/// emitted as `End`).
///
/// # Errors
/// epoll fails, or not one connection could be opened.
pub fn run(
    cfg: &StressConfig,
    stop: &AtomicBool,
    emit: &mut dyn Sink<StressEvent>,
) -> Result<StressSummary, StressError> {
    crate::os::raise_nofile_limit();
    deliver(emit, &StressEvent::Start(start_event(cfg)));
    let mut poll = Poll::new().map_err(StressError::Poll)?;
    let mut events = Events::with_capacity(4096);
    let (mut conns, report) = connect(cfg, &mut poll, &mut events, stop, emit)?;
    let pattern = crate::chargen::Pattern::new(cfg.block.max(1));
    let mut scratch = vec![0u8; 256 * 1024];
    for c in conns.iter_mut() {
        c.start_data(poll.registry(), cfg.mode);
        if let Some(rate) = cfg.rate.filter(|_| cfg.mode.sends()) {
            c.pace(pace::Pacer::new(rate.bits_per_sec(), cfg.block));
        }
    }
    let mut slicer = IntervalSlicer::new(cfg.mode, conns.len(), cfg.interval.as_secs_f64());
    let mut steady = Steady::new(cfg.mode, cfg.warmup.as_secs_f64());
    let t0 = Instant::now();
    let end = cfg.duration.as_secs_f64();
    let mut again: Vec<usize> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let now = t0.elapsed().as_secs_f64();
        if now >= end {
            break;
        }
        if now >= slicer.next_boundary() {
            if let Some(mut iv) = slicer.cut(now, &counters(&conns)) {
                steady.take(&mut iv);
                deliver(emit, &StressEvent::Interval(iv));
            }
            continue;
        }
        let boundary = slicer.next_boundary().min(end);
        let wake = Wake {
            t0,
            due: boundary,
            block: cfg.block,
            paced: cfg.rate.is_some(),
        };
        let ready = wake.ready(&mut poll, &mut events, &mut again, &conns)?;
        for (n, i) in ready.iter().copied().enumerate() {
            // A pass over thousands of busy connections takes a while: an interval that falls
            // due meanwhile is cut on time, the rest of the pass goes first after it.
            if n % 64 == 63 && t0.elapsed().as_secs_f64() >= boundary {
                again.extend(ready.get(n..).unwrap_or(&[]));
                break;
            }
            if let Some(c) = conns.get_mut(i) {
                let now = t0.elapsed().as_secs_f64();
                if c.drive(&pattern, &mut scratch, cfg.mode, cfg.echo_window, now) {
                    again.push(i);
                }
            }
        }
    }
    let seconds = t0.elapsed().as_secs_f64().min(end.max(0.0));
    let partial = stop.load(Ordering::SeqCst);
    if let Some(mut iv) = slicer.cut(seconds, &counters(&conns)) {
        steady.take(&mut iv);
        deliver(emit, &StressEvent::Interval(iv));
    }
    conn::close_all(
        &mut conns,
        cfg.mode,
        (cfg.mode == StressMode::Echo).then_some(&pattern),
        &mut poll,
        &mut events,
        cfg.close_timeout,
        &mut scratch,
    );
    let mut summary = summarise(cfg.mode, seconds, report, &conns, partial);
    steady.apply(&mut summary);
    deliver(emit, &StressEvent::End(summary.clone()));
    Ok(summary)
}

/// The run's `Start` event: what it was asked to do.
fn start_event(cfg: &StressConfig) -> StressStart {
    StressStart {
        remote: cfg.remote.clone(),
        port: cfg.addr.port(),
        mode: cfg.mode,
        transport: sonde_stats::stress::model::Transport::Tcp,
        connections: cfg.connections,
        duration_secs: cfg.duration.as_secs_f64(),
        interval_secs: cfg.interval.as_secs_f64(),
        connect_timeout_secs: cfg.connect_timeout.as_secs_f64(),
    }
}

/// The connect phase, its report emitted; an error when not one connection could be opened.
fn connect(
    cfg: &StressConfig,
    poll: &mut Poll,
    events: &mut Events,
    stop: &AtomicBool,
    emit: &mut dyn Sink<StressEvent>,
) -> Result<(Vec<Conn>, ConnectReport), StressError> {
    let (conns, report) = connect::open_all(cfg, poll, events, stop)?;
    deliver(emit, &StressEvent::Connected(report.clone()));
    if conns.is_empty() {
        let why = report
            .first_error
            .clone()
            .unwrap_or_else(|| describe_failures(&report));
        return Err(StressError::NoneConnected {
            addr: cfg.addr,
            why,
        });
    }
    Ok((conns, report))
}

fn describe_failures(r: &sonde_stats::stress::model::ConnectReport) -> String {
    format!(
        "{} refused, {} timed out, {} failed otherwise",
        r.refused, r.timed_out, r.other_failed
    )
}

/// When the event loop wakes: the data phase's start, the next interval's end, the write size
/// and whether any connection is paced (else no pacer need be asked).
struct Wake {
    t0: Instant,
    due: f64,
    block: usize,
    paced: bool,
}

impl Wake {
    /// Waits for events (not at all while `again` holds connections; at most until the
    /// interval's end or a paced connection may write), then the connections to drive in
    /// order: those left over, those the pacer lets go again, those with events.
    fn ready(
        &self,
        poll: &mut Poll,
        events: &mut Events,
        again: &mut Vec<usize>,
        conns: &[Conn],
    ) -> Result<Vec<usize>, StressError> {
        let now = self.t0.elapsed().as_secs_f64();
        let wait = if again.is_empty() {
            let due = secs(self.due - now).min(Duration::from_millis(100));
            match self.paced {
                true => held_wait(conns, now, self.block).map_or(due, |w| due.min(w)),
                false => due,
            }
        } else {
            Duration::ZERO
        };
        poll_once(poll, events, wait)?;
        let mut ready = std::mem::take(again);
        if self.paced {
            ready.extend(released(conns, self.t0.elapsed().as_secs_f64(), self.block));
        }
        ready.extend(events.iter().map(|e| e.token().0));
        ready.sort_unstable();
        ready.dedup();
        Ok(ready)
    }
}

/// How long until the first connection its pacer holds back may write again (`-b`).
fn held_wait(conns: &[Conn], now: f64, block: usize) -> Option<Duration> {
    conns
        .iter()
        .filter_map(|c| c.held_for(now, block))
        .min_by(f64::total_cmp)
        .map(secs)
}

/// The connections whose pacer lets them write again at `now`: no socket event says so.
fn released(conns: &[Conn], now: f64, block: usize) -> impl Iterator<Item = usize> + '_ {
    conns
        .iter()
        .enumerate()
        .filter(move |(_, c)| c.held_for(now, block).is_some_and(|w| w <= 0.0))
        .map(|(i, _)| i)
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(0.0)).unwrap_or(Duration::ZERO)
}

fn counters(conns: &[Conn]) -> Vec<ConnCounters> {
    conns.iter().map(Conn::counters).collect()
}

fn summarise(
    mode: StressMode,
    seconds: f64,
    connect: sonde_stats::stress::model::ConnectReport,
    conns: &[Conn],
    partial: bool,
) -> StressSummary {
    let totals: Vec<ConnTotal> = conns
        .iter()
        .enumerate()
        .map(|(i, c)| c.total(i as u32 + 1, seconds))
        .collect();
    let count = |o: CloseOutcome| totals.iter().filter(|t| t.close == o).count() as u32;
    let sum = sum_of(
        mode,
        seconds,
        totals.iter().map(|t| (t.sent_bytes, t.received_bytes)),
    );
    StressSummary {
        seconds,
        connect,
        sum,
        closed_clean: count(CloseOutcome::Clean),
        closed_reset: count(CloseOutcome::Reset),
        closed_timeout: count(CloseOutcome::Timeout),
        failed_during_run: count(CloseOutcome::FailedDuringRun),
        echo_mismatched_bytes: conns.iter().map(|c| c.mismatched).sum(),
        echo_unreturned_bytes: match mode {
            StressMode::Echo => conns.iter().map(Conn::unreturned).sum(),
            _ => 0,
        },
        connections: totals,
        partial,
        udp: None,
        warmup_secs: 0.0,
        zero_share_worst: None,
    }
}
