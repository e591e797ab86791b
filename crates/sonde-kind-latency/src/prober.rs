//! The datagram prober: an absolute isochronous schedule (or flood with a window), replies read
//! while waiting, interval lines, a final wait for stragglers and the server's count.

use super::run_state::RunState;
use super::transports::{IcmpEcho, Incoming, Transport, UdpProbes};
use super::{start_event, target, LatencyConfig, LatencyError, LatencyOutcome};
use sonde_stats::latency::model::{LatencyEvent, LatencyMode};
use sonde_stats::latency::tracker::{ScheduleTracker, Verdict};
use sonde_stats::sink::{deliver, Sink};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Spin for the last stretch before a due time (the OS sleep overshoots by tens of µs).
const SPIN: Duration = Duration::from_micros(200);
/// A flood probe with no reply is given up after this many largest-RTTs (bounded below/above).
const FLOOD_TIMEOUT_MIN: Duration = Duration::from_millis(5);
const FLOOD_TIMEOUT_MAX: Duration = Duration::from_secs(1);

fn open(cfg: &LatencyConfig, peer: SocketAddr) -> Result<Box<dyn Transport>, LatencyError> {
    Ok(match cfg.mode {
        LatencyMode::Icmp => Box::new(IcmpEcho::open(peer, cfg)?),
        _ => Box::new(UdpProbes::open(peer, cfg)?),
    })
}

/// Reads everything queued; returns the number of fresh replies.
fn drain(
    t: &mut dyn Transport,
    st: &mut RunState,
    window: &mut VecDeque<(u64, Instant)>,
) -> Result<usize, LatencyError> {
    let mut fresh = 0;
    loop {
        match t
            .recv()
            .map_err(|e| LatencyError::io("receiving replies", e))?
        {
            None => return Ok(fresh),
            Some(Incoming::Ignored) => {}
            Some(Incoming::Refused) => st.tracker.on_refused(),
            Some(Incoming::Count(c)) => {
                st.count_replies += 1;
                st.tracker.on_server_count(c);
            }
            Some(Incoming::Reply(r, count)) => {
                if let Some(c) = count {
                    st.tracker.on_server_count(c);
                }
                if st.answer(&r) == Verdict::Fresh {
                    fresh += 1;
                    window.retain(|(s, _)| *s != r.seq);
                }
            }
        }
    }
}

/// Waits until `until`, reading replies; spins the last [`SPIN`] when `precise`. Returns early
/// (true) when `early` says so after a read.
fn wait_until(
    t: &mut dyn Transport,
    st: &mut RunState,
    window: &mut VecDeque<(u64, Instant)>,
    until: Instant,
    precise: bool,
    interrupt: &AtomicBool,
    mut early: impl FnMut(&RunState, &VecDeque<(u64, Instant)>) -> bool,
) -> Result<bool, LatencyError> {
    loop {
        if interrupt.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let now = Instant::now();
        st.report_due(now);
        if now >= until {
            return Ok(false);
        }
        let left = until - now;
        let mut slice = if precise && left <= SPIN {
            Duration::ZERO
        } else if precise {
            left - SPIN
        } else {
            left
        };
        slice = slice.min(Duration::from_millis(100));
        if let Some(r) = st.next_report {
            slice = slice.min(r.saturating_duration_since(now));
        }
        if slice > Duration::ZERO {
            let _ = t
                .wait(slice)
                .map_err(|e| LatencyError::io("waiting for replies", e))?;
        } else {
            std::hint::spin_loop();
        }
        drain(t, st, window)?;
        if early(st, window) {
            return Ok(true);
        }
    }
}

/// Runs UDP or ICMP probing.
pub(crate) fn run_datagram(
    cfg: &LatencyConfig,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<LatencyEvent>,
) -> Result<LatencyOutcome, LatencyError> {
    let peer = target(cfg, interrupt)?;
    let t = open(cfg, peer)?;
    announce(cfg, &*t, peer, emit);
    let mut run = DatagramRun::new(cfg, interrupt, t, RunState::new(cfg, emit));
    let (mut failure, mut interrupted) = match run.send_probes() {
        Ok(interrupted) => (None, interrupted),
        Err(e) => (Some(e), false),
    };
    if failure.is_none() && !interrupted {
        failure = run.await_stragglers().err();
        interrupted = interrupt.load(Ordering::Relaxed);
    }
    let error = failure
        .map(|e| e.to_string())
        .or(interrupted.then(|| LatencyError::Interrupted.to_string()));
    let schedule = run.sched.and_then(|s| s.stats());
    Ok(run
        .st
        .finish(error.is_some(), error, |s| s.schedule = schedule))
}

/// Emits the start event, and a note when UDP probes had to grow to hold their header.
fn announce(
    cfg: &LatencyConfig,
    t: &dyn Transport,
    peer: SocketAddr,
    emit: &mut dyn Sink<LatencyEvent>,
) {
    deliver(
        emit,
        &start_event(
            cfg,
            peer,
            t.local(),
            t.wire_size(),
            t.size_meaning(),
            t.timestamping(),
        ),
    );
    let min = super::transports::min_probe_len(cfg);
    if cfg.mode == LatencyMode::Udp && cfg.size < min {
        let what = if cfg.psk.is_some() {
            "header and a 16-byte key tag"
        } else {
            "header"
        };
        deliver(
            emit,
            &LatencyEvent::Note(format!(
                "UDP probes carry a {}-byte {what}; --size {} raised to {min}",
                sonde_proto::probe::HEADER_LEN,
                cfg.size,
            )),
        );
    }
}

/// What the probe loop does next.
enum Slot {
    /// Send the next probe, due at this time.
    Send(Instant),
    /// Look at the end conditions again first (a reply freed the window, or Ctrl-C).
    Recheck,
    /// The run's duration ends before the next probe is due.
    Stop,
}

/// One datagram run: the transport, the shared bookkeeping, the schedule statistics and, in
/// flood mode, the probes in flight.
struct DatagramRun<'a> {
    cfg: &'a LatencyConfig,
    interrupt: &'a AtomicBool,
    t: Box<dyn Transport>,
    st: RunState<'a>,
    sched: Option<ScheduleTracker>,
    /// Flood mode: probes in flight (sequence number, send time), oldest first.
    window: VecDeque<(u64, Instant)>,
    /// Flood mode: the most probes in flight at once.
    win: usize,
    end_at: Option<Instant>,
    /// Probes sent so far (the last one's sequence number).
    seq: u64,
}

impl<'a> DatagramRun<'a> {
    fn new(
        cfg: &'a LatencyConfig,
        interrupt: &'a AtomicBool,
        t: Box<dyn Transport>,
        st: RunState<'a>,
    ) -> Self {
        Self {
            cfg,
            interrupt,
            t,
            sched: (!cfg.flood).then(|| ScheduleTracker::new(cfg.interval.as_nanos() as u64)),
            window: VecDeque::new(),
            win: cfg.window.max(1) as usize,
            end_at: cfg.duration.map(|d| st.start + d),
            seq: 0,
            st,
        }
    }

    /// Sends probes until the count or the duration is reached; true when Ctrl-C ended it.
    fn send_probes(&mut self) -> Result<bool, LatencyError> {
        loop {
            if self.interrupt.load(Ordering::Relaxed) {
                return Ok(true);
            }
            if self.cfg.count.is_some_and(|c| self.seq >= c) {
                return Ok(false);
            }
            let now = Instant::now();
            if self.end_at.is_some_and(|e| now >= e) {
                return Ok(false);
            }
            let slot = if self.cfg.flood {
                self.flood_slot(now)?
            } else {
                self.scheduled_slot()?
            };
            match slot {
                Slot::Send(due) => self.send_probe(due)?,
                Slot::Recheck => {}
                Slot::Stop => return Ok(false),
            }
        }
    }

    /// Flood: the next probe goes now, unless the window is full; then this waits until a
    /// reply frees a place or the oldest probe in flight times out.
    fn flood_slot(&mut self, now: Instant) -> Result<Slot, LatencyError> {
        let timeout = if self.st.max_rtt.is_zero() {
            FLOOD_TIMEOUT_MAX
        } else {
            (self.st.max_rtt * 4).clamp(FLOOD_TIMEOUT_MIN, FLOOD_TIMEOUT_MAX)
        };
        self.window
            .retain(|(_, at)| now.duration_since(*at) < timeout);
        if self.window.len() < self.win {
            return Ok(Slot::Send(now));
        }
        let oldest = self.window.front().map_or(now, |(_, at)| *at + timeout);
        let until = self.end_at.map_or(oldest, |e| e.min(oldest));
        let win = self.win;
        wait_until(
            &mut *self.t,
            &mut self.st,
            &mut self.window,
            until,
            false,
            self.interrupt,
            |_, w| w.len() < win,
        )?;
        Ok(Slot::Recheck)
    }

    /// Isochronous: probe n is due at start + n × interval; waits for it precisely, reading
    /// replies meanwhile.
    fn scheduled_slot(&mut self) -> Result<Slot, LatencyError> {
        let due = self.st.start
            + self
                .cfg
                .interval
                .saturating_mul(u32::try_from(self.seq).unwrap_or(u32::MAX));
        if self.end_at.is_some_and(|e| due >= e) {
            return Ok(Slot::Stop);
        }
        wait_until(
            &mut *self.t,
            &mut self.st,
            &mut self.window,
            due,
            true,
            self.interrupt,
            |_, _| false,
        )?;
        if self.interrupt.load(Ordering::Relaxed) {
            return Ok(Slot::Recheck);
        }
        Ok(Slot::Send(due))
    }

    /// Sends the next probe (due at `due`), records it and reads what has arrived.
    fn send_probe(&mut self, due: Instant) -> Result<(), LatencyError> {
        self.seq += 1;
        let seq = self.seq;
        let sent_at = Instant::now();
        let wall = sonde_platform::timestamp::realtime_ns();
        // The probe is accounted before its reply can be read; the reply carries its own
        // send stamp, taken by the transport just before the send call.
        self.st.sent(seq, wall);
        match self.t.send(seq, wall) {
            // A full socket buffer loses this probe, not the run.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            // An earlier probe's "port unreachable", reported by this send (which then did
            // not go out): counted, and probing goes on.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                self.st.tracker.on_refused();
            }
            Err(e) => return Err(LatencyError::io("sending a probe", e)),
            Ok(()) => {}
        }
        if let Some(s) = &mut self.sched {
            let base = self.st.start;
            s.on_send(
                due.duration_since(base).as_nanos() as u64,
                sent_at.duration_since(base).as_nanos() as u64,
            );
        }
        if self.cfg.flood {
            self.window.push_back((seq, sent_at));
        }
        drain(&mut *self.t, &mut self.st, &mut self.window)?;
        Ok(())
    }

    /// The rest of the run's time (reading replies), then stragglers, then the server's count
    /// (UDP), each with a deadline. The count is asked for even when waiting failed; that
    /// failure is returned.
    fn await_stragglers(&mut self) -> Result<(), LatencyError> {
        let end = self.st.probing_end(self.cfg, self.seq, Instant::now());
        wait_until(
            &mut *self.t,
            &mut self.st,
            &mut self.window,
            end,
            false,
            self.interrupt,
            |_, _| false,
        )?;
        if self.interrupt.load(Ordering::Relaxed) {
            return Ok(());
        }
        self.st.end_probing(end);
        let until = Instant::now() + self.st.final_wait();
        let sent = self.st.tracker.sent();
        let r = wait_until(
            &mut *self.t,
            &mut self.st,
            &mut self.window,
            until,
            false,
            self.interrupt,
            |s, _| s.tracker.received() >= sent,
        );
        query_count(&mut *self.t, &mut self.st, &mut self.window, self.interrupt);
        r.map(|_| ())
    }
}

/// Asks the server how many requests it received (three tries, 300 ms each).
fn query_count(
    t: &mut dyn Transport,
    st: &mut RunState,
    window: &mut VecDeque<(u64, Instant)>,
    interrupt: &AtomicBool,
) {
    for _ in 0..3 {
        match t.send_count_query() {
            Ok(true) => {}
            // An earlier datagram's "port unreachable": asked again. Not counted in
            // `refused`, which counts probes (so that it never exceeds `sent`).
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
            _ => return,
        }
        let before = st.count_replies;
        let until = Instant::now() + Duration::from_millis(300).max(st.max_rtt * 2);
        let _ = wait_until(t, st, window, until, false, interrupt, |s, _| {
            s.count_replies > before
        });
        if st.count_replies > before || interrupt.load(Ordering::Relaxed) {
            return;
        }
    }
}
