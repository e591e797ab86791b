//! The local half of a running test: its stream workers, their control flags and the meter.
//! Client and server each run one engine per test, for sonde's protocol and iperf3's alike
//! (the datagram format is part of the [`StreamConfig`]); only who decides the end differs.

use crate::end_condition::EndCondition;
use crate::error::RunError;
use crate::meter::{Meter, MeteredStream};
use crate::streams::udp::ReceiveConfig;
use crate::streams::{self, Budget, Control, StreamConfig, StreamShared};
use sonde_platform::socket_queue::unacked_bytes;
use sonde_proto::message::{PeerStream, SentCount};
use sonde_proto::udp_hello::HelloAck;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{Event, Protocol, StreamRole};
use sonde_stats::sink::{deliver, Sink};
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A connected data socket.
pub enum DataSocket {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// One stream to run on this host.
pub struct LocalStream {
    pub id: u32,
    pub role: StreamRole,
    pub socket: DataSocket,
    /// Server side of UDP: the ack to repeat if a late hello arrives.
    pub ack: Option<HelloAck>,
}

/// The running workers of one test on this host.
pub struct Engine {
    pub ctl: Arc<Control>,
    pub meter: Meter,
    handles: Vec<JoinHandle<CpuTimes>>,
    budget: Option<Arc<Budget>>,
    /// The sending TCP sockets, to wait until the kernel has sent what they queued.
    senders_tcp: Vec<TcpStream>,
    /// The congestion control of the first receiving TCP stream (iperf3 reports it for the
    /// receiving end too: `receiver_tcp_congestion`).
    receiver_congestion: Option<String>,
    start: Instant,
}

impl Engine {
    /// Spawns one worker thread per stream and starts the clock. With `hold_senders`, sending
    /// streams wait for [`Engine::release_senders`] (receivers run at once).
    ///
    /// # Errors
    /// When a socket cannot be duplicated for TCP_INFO or a thread cannot be spawned.
    pub fn start(
        protocol: Protocol,
        streams: Vec<LocalStream>,
        send: &StreamConfig,
        budget: Option<Budget>,
        interval_secs: f64,
        omit_secs: f64,
        hold_senders: bool,
    ) -> std::io::Result<Self> {
        let ctl = Arc::new(Control::default());
        ctl.hold_send.store(hold_senders, Ordering::Relaxed);
        let budget = budget.map(Arc::new);
        let (mut metered, mut handles, mut senders_tcp) = (Vec::new(), Vec::new(), Vec::new());
        let mut receiver_congestion = None;
        for s in streams {
            let shared = Arc::new(StreamShared::new(s.id, s.role));
            let (ctl2, sh2, cfg, b) = (ctl.clone(), shared.clone(), send.clone(), budget.clone());
            let name = format!("sonde-stream-{}", s.id);
            let mut tcp_handle = None;
            let handle = match (s.socket, s.role) {
                (DataSocket::Tcp(t), StreamRole::Sender) => {
                    tcp_handle = Some(t.try_clone()?);
                    senders_tcp.push(t.try_clone()?);
                    std::thread::Builder::new()
                        .name(name)
                        .spawn(move || streams::tcp::send(t, sh2, cfg, b, ctl2))?
                }
                (DataSocket::Tcp(t), StreamRole::Receiver) => {
                    if receiver_congestion.is_none() {
                        receiver_congestion = sonde_platform::sockopt::congestion(&t);
                    }
                    std::thread::Builder::new()
                        .name(name)
                        .spawn(move || streams::tcp::receive(t, sh2, &cfg, ctl2))?
                }
                (DataSocket::Udp(u), StreamRole::Sender) => std::thread::Builder::new()
                    .name(name)
                    .spawn(move || streams::udp::send(u, sh2, cfg, b, ctl2))?,
                (DataSocket::Udp(u), StreamRole::Receiver) => {
                    let recv = ReceiveConfig {
                        format: cfg.format,
                        ack: s.ack,
                    };
                    std::thread::Builder::new()
                        .name(name)
                        .spawn(move || streams::udp::receive(u, sh2, recv, ctl2))?
                }
            };
            handles.push(handle);
            metered.push(MeteredStream {
                shared,
                tcp: tcp_handle,
            });
        }
        Ok(Self {
            ctl,
            meter: Meter::new(protocol, interval_secs, omit_secs, metered),
            handles,
            budget,
            senders_tcp,
            receiver_congestion,
            start: Instant::now(),
        })
    }

    /// Starts the workers of a test run with `p` (its interval and omit period), every
    /// stream at once: a foreign peer's test (iperf3's, iperf 2's) has no held start.
    ///
    /// # Errors
    /// [`RunError::Setup`] when a socket cannot be duplicated or a thread not spawned.
    pub fn start_now(
        p: &sonde_proto::message::TestParams,
        streams: Vec<LocalStream>,
        send: &StreamConfig,
        budget: Option<Budget>,
    ) -> Result<Self, RunError> {
        Self::start(
            p.protocol,
            streams,
            send,
            budget,
            p.interval_secs,
            p.omit_secs,
            false,
        )
        .map_err(|e| RunError::Setup(format!("starting stream workers: {e}")))
    }

    /// Starts the test clock again now (see [`Meter::restart_clock`]), if no interval was cut
    /// and it does not count from the first data yet.
    pub fn restart_clock(&mut self) {
        if let Some(ns) = self.meter.restart_clock() {
            self.start = crate::clock::instant_of(ns);
        }
    }

    /// Starts the test clock at this end's first data, once there was some (see
    /// [`Meter::settle_clock`]). The control loops call it on every turn.
    pub fn settle_clock(&mut self) {
        if let Some(ns) = self.meter.settle_clock() {
            self.start = crate::clock::instant_of(ns);
        }
    }

    /// Seconds since the engine started.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Sleeps until the next interval boundary or `end_at` (test seconds), whichever comes
    /// first, when it is less than `slice` away; true when it slept. The control loops call it
    /// before waiting for a message (which may take a whole read timeout), so that intervals
    /// and the test end where asked (0.00-2.00, not 0.00-2.02).
    pub fn sleep_to_boundary(&self, end_at: Option<f64>, slice: Duration) -> bool {
        let elapsed = self.elapsed();
        let next = [self.meter.next_due(), end_at]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min);
        let left = next - elapsed;
        // Infinite (no boundary ahead) or far enough: not now.
        if left.is_nan() || left >= slice.as_secs_f64() {
            return false;
        }
        if left > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(left));
        }
        true
    }

    fn shared(&self) -> impl Iterator<Item = &Arc<StreamShared>> {
        self.meter.streams().iter().map(|m| &m.shared)
    }

    fn of_role(&self, role: StreamRole) -> impl Iterator<Item = &Arc<StreamShared>> {
        self.shared().filter(move |s| s.role == role)
    }

    pub fn has_senders(&self) -> bool {
        self.of_role(StreamRole::Sender).next().is_some()
    }

    /// True when the `-n`/`-k` budget is used up and every sender has stopped.
    pub fn budget_done(&self) -> bool {
        self.budget.as_ref().is_some_and(|b| b.exhausted()) && self.senders_finished()
    }

    pub fn senders_finished(&self) -> bool {
        self.of_role(StreamRole::Sender)
            .all(|s| s.finished.load(Ordering::Relaxed))
    }

    pub fn receivers_finished(&self) -> bool {
        self.of_role(StreamRole::Receiver)
            .all(|s| s.finished.load(Ordering::Relaxed))
    }

    /// Seconds since this end's receivers last got data (since the start when none yet);
    /// None when it receives nothing or every receiver is done. For `--rcv-timeout`.
    pub fn receive_idle_secs(&self) -> Option<f64> {
        let mut receivers = self
            .of_role(StreamRole::Receiver)
            .filter(|s| !s.finished.load(Ordering::Relaxed))
            .peekable();
        receivers.peek()?;
        let last = receivers
            .map(|s| s.last_rx_ns.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0)
            .max(self.meter.start_ns());
        Some(crate::clock::now_ns().saturating_sub(last) as f64 / 1e9)
    }

    pub fn received_bytes(&self) -> u64 {
        self.of_role(StreamRole::Receiver)
            .map(|s| s.bytes.load(Ordering::Relaxed))
            .sum()
    }

    /// Bytes moved so far in both directions (for idle detection).
    pub fn moved_bytes(&self) -> u64 {
        self.shared().map(|s| s.bytes.load(Ordering::Relaxed)).sum()
    }

    /// A note per sending stream that fell behind its schedule (`who`: "client" or "server").
    pub fn slip_notes(&self, who: &str) -> Vec<String> {
        self.of_role(StreamRole::Sender)
            .filter_map(|s| s.slips.lock().ok().and_then(|sl| sl.note(s.id, who)))
            .collect()
    }

    /// The first error a sending worker hit (receivers' errors end only their stream).
    pub fn sender_error(&self) -> Option<(u32, String)> {
        self.of_role(StreamRole::Sender)
            .find_map(|s| s.error().map(|e| (s.id, e)))
    }

    /// The TCP congestion control of the first sending TCP stream, else of the first
    /// receiving one.
    pub fn congestion(&self) -> Option<String> {
        self.meter
            .streams()
            .iter()
            .find_map(|m| m.tcp.as_ref().and_then(sonde_platform::sockopt::congestion))
            .or_else(|| self.receiver_congestion.clone())
    }

    /// Waits (bounded by `wait`) until the kernel has handed every queued TCP byte of this
    /// host's senders to the network, so that a peer which stops counting at once (iperf3)
    /// has seen them.
    pub fn flush_tcp_senders(&self, wait: Duration) {
        let deadline = Instant::now() + wait;
        while self
            .senders_tcp
            .iter()
            .any(|t| unacked_bytes(t).unwrap_or(0) > 0)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The first error any worker hit.
    pub fn first_error(&self) -> Option<(u32, String)> {
        self.shared().find_map(|s| s.error().map(|e| (s.id, e)))
    }

    /// Tells senders to stop and waits (bounded) until they have. Looks every 100 µs: the
    /// Stop that follows marks the end of the receiver's span at the other end, so time spent
    /// here after the senders stopped lengthens it (2 ms looks made 0.3 s tests receive 0.7 %
    /// slower than they sent).
    pub fn stop_senders(&self, wait: Duration) {
        self.ctl.stop_send.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + wait;
        while !self.senders_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// What this host's senders wrote, for the peer's exact loss accounting.
    pub fn sent_counts(&self) -> Vec<SentCount> {
        self.of_role(StreamRole::Sender)
            .map(|s| SentCount {
                id: s.id,
                bytes: s.bytes.load(Ordering::Relaxed),
                packets: s.packets.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// How long receivers may keep draining after the end: TCP receivers end at the sender's
    /// EOF, which on a lossy link can take many retransmission timeouts; UDP receivers end as
    /// soon as every datagram the sender reported has arrived, so their wait only matters
    /// when some were lost.
    pub fn drain_grace(protocol: Protocol) -> Duration {
        match protocol {
            Protocol::Tcp => Duration::from_secs(20),
            Protocol::Udp => Duration::from_secs(2),
        }
    }

    /// Lets receivers finish: UDP ones as soon as every datagram in `peer_sent` arrived, all of
    /// them at the latest after `grace`. Waits (bounded) until they have.
    pub fn drain_receivers(&self, peer_sent: &[SentCount], grace: Duration) {
        for s in self.of_role(StreamRole::Receiver) {
            if let Some(c) = peer_sent.iter().find(|c| c.id == s.id) {
                s.expected_packets
                    .store(c.packets.max(1), Ordering::Relaxed);
            }
        }
        self.ctl.set_recv_deadline(grace);
        let deadline = Instant::now() + grace + Duration::from_millis(300);
        while !self.receivers_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Runs a client's test to the end `p` sets (`-t`, `-n`, `-k`) for a client that decides
    /// the end itself (the iperf3 and iperf 2 dialects): interval reports as they fall due,
    /// the ending's note. Between boundaries it calls `idle` (the iperf3 client reads its
    /// control connection there; it must return within a few milliseconds).
    ///
    /// # Errors
    /// [`RunError::Interrupted`] on Ctrl-C, [`RunError::Stream`] with the first error a
    /// sending worker hit, or what `idle` returned.
    pub fn until_end(
        &mut self,
        p: &sonde_proto::message::TestParams,
        interrupt: &std::sync::atomic::AtomicBool,
        emit: &mut dyn Sink<Event>,
        mut idle: impl FnMut() -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let mut end = EndCondition::new(p);
        loop {
            if interrupt.load(Ordering::Relaxed) {
                return Err(RunError::Interrupted);
            }
            if self.turn(&mut end, emit)? {
                return Ok(());
            }
            if !self.sleep_to_boundary(end.deadline(), Duration::from_millis(5)) {
                idle()?;
            }
        }
    }

    /// One turn of [`Engine::until_end`]: the interval report when one is due, then whether
    /// `end` says the test is over (with its note, if it has one). True when it is over.
    fn turn(
        &mut self,
        end: &mut EndCondition,
        emit: &mut dyn Sink<Event>,
    ) -> Result<bool, RunError> {
        let elapsed = self.elapsed();
        if let Some(r) = self.meter.tick(elapsed) {
            deliver(emit, &Event::Interval(r));
        }
        if let Some(ending) = end.check(elapsed, self.received_bytes(), self.budget_done()) {
            if let Some(note) = ending.note() {
                deliver(emit, &Event::Note(note));
            }
            return Ok(true);
        }
        if let Some((id, e)) = self.sender_error() {
            return Err(RunError::Stream {
                id,
                source: std::io::Error::other(e),
            });
        }
        Ok(false)
    }

    /// Each local stream's view of the test up to `stop_at`, after a last interval report,
    /// for a client whose peer sends no figures of this end's streams.
    pub fn final_views(&mut self, stop_at: f64, emit: &mut dyn Sink<Event>) -> Vec<PeerStream> {
        if let Some(r) = self.meter.finish(stop_at) {
            deliver(emit, &Event::Interval(r));
        }
        self.meter.peer_streams(stop_at, &|_| None, None)
    }

    /// Lets senders held back by `hold_senders` start.
    pub fn release_senders(&self) {
        self.ctl.hold_send.store(false, Ordering::Relaxed);
    }

    /// Stops everything now (Ctrl-C, peer gone).
    pub fn abort(&self) {
        self.ctl.abort.store(true, Ordering::Relaxed);
    }

    /// Stops every worker and returns the CPU time their threads used.
    pub fn join(&mut self) -> CpuTimes {
        self.abort();
        self.handles
            .drain(..)
            .filter_map(|h| h.join().ok())
            .fold(CpuTimes::default(), |a, b| a + b)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.join();
    }
}
