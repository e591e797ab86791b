//! The local data streams of one iperf3 test: workers, their flags and the meter.
//!
//! Like [`crate::engine::Engine`], with the same stream workers: UDP streams carry iperf3's
//! datagram header (`SendConfig::format`), TCP streams are sonde's unchanged.

use crate::engine::DataSocket;
use crate::meter::{Meter, MeteredStream};
use crate::streams::udp::ReceiveConfig;
use crate::streams::{self, Budget, Control, SendConfig, StreamShared};
use sonde_proto::message::{PeerStream, TestParams};
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{CpuUsage, Event, Protocol, Role, StreamRole, TestSummary};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One stream to run on this host (sonde id, 1-based).
pub struct StreamSpec {
    pub id: u32,
    pub role: StreamRole,
    pub socket: DataSocket,
}

/// The running workers of one iperf3 test on this host.
pub struct Iperf3Engine {
    pub ctl: Arc<Control>,
    pub meter: Meter,
    handles: Vec<JoinHandle<CpuTimes>>,
    budget: Option<Arc<Budget>>,
    senders_tcp: Vec<TcpStream>,
    start: Instant,
}

impl Iperf3Engine {
    /// Spawns one worker per stream and starts the clock.
    ///
    /// # Errors
    /// When a socket cannot be duplicated or a thread cannot be spawned.
    pub fn start(
        protocol: Protocol,
        streams: Vec<StreamSpec>,
        send: SendConfig,
        budget: Option<Budget>,
        interval_secs: f64,
        omit_secs: f64,
    ) -> std::io::Result<Self> {
        let ctl = Arc::new(Control::default());
        let budget = budget.map(Arc::new);
        let (mut metered, mut handles, mut senders_tcp) = (Vec::new(), Vec::new(), Vec::new());
        let recv = ReceiveConfig {
            format: send.format,
            ack: None,
        };
        for s in streams {
            let shared = Arc::new(StreamShared::new(s.id, s.role));
            let (c, sh, b) = (ctl.clone(), shared.clone(), budget.clone());
            let builder = std::thread::Builder::new().name(format!("iperf3-stream-{}", s.id));
            let mut tcp = None;
            let handle = match (s.socket, s.role) {
                (DataSocket::Tcp(t), StreamRole::Sender) => {
                    tcp = Some(t.try_clone()?);
                    senders_tcp.push(t.try_clone()?);
                    let cfg = send.clone();
                    builder.spawn(move || streams::tcp::send(t, sh, cfg, b, c))?
                }
                (DataSocket::Tcp(t), StreamRole::Receiver) => {
                    let len = send.length;
                    builder.spawn(move || streams::tcp::receive(t, sh, len, c))?
                }
                (DataSocket::Udp(u), StreamRole::Sender) => {
                    let cfg = send.clone();
                    builder.spawn(move || streams::udp::send(u, sh, cfg, b, c))?
                }
                (DataSocket::Udp(u), StreamRole::Receiver) => {
                    builder.spawn(move || streams::udp::receive(u, sh, recv, c))?
                }
            };
            handles.push(handle);
            metered.push(MeteredStream { shared, tcp });
        }
        Ok(Self {
            ctl,
            meter: Meter::new(protocol, interval_secs, omit_secs, metered),
            handles,
            budget,
            senders_tcp,
            start: Instant::now(),
        })
    }

    /// Seconds since the engine started.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn of_role(&self, role: StreamRole) -> impl Iterator<Item = &Arc<StreamShared>> {
        self.meter
            .streams()
            .iter()
            .map(|m| &m.shared)
            .filter(move |s| s.role == role)
    }

    pub fn senders_finished(&self) -> bool {
        self.of_role(StreamRole::Sender)
            .all(|s| s.finished.load(Ordering::Relaxed))
    }

    /// True when the `-n`/`-k` budget is used up and every sender has stopped.
    pub fn budget_done(&self) -> bool {
        self.budget.as_ref().is_some_and(|b| b.exhausted()) && self.senders_finished()
    }

    /// Bytes moved so far in both directions (for idle detection).
    pub fn moved_bytes(&self) -> u64 {
        self.meter
            .streams()
            .iter()
            .map(|m| m.shared.bytes.load(Ordering::Relaxed))
            .sum()
    }

    pub fn received_bytes(&self) -> u64 {
        self.of_role(StreamRole::Receiver)
            .map(|s| s.bytes.load(Ordering::Relaxed))
            .sum()
    }

    /// The first error a sending worker hit (receivers' errors end only their stream).
    pub fn sender_error(&self) -> Option<(u32, String)> {
        self.of_role(StreamRole::Sender)
            .find_map(|s| s.error().map(|e| (s.id, e)))
    }

    /// The TCP congestion control of the first sending stream.
    pub fn congestion(&self) -> Option<String> {
        self.meter
            .streams()
            .iter()
            .find_map(|m| m.tcp.as_ref().and_then(crate::os::sockopt::congestion))
    }

    /// Tells senders to stop and waits (bounded) until they have, then until the kernel has
    /// handed their queued TCP bytes to the network, so the peer can count them.
    pub fn stop_senders(&self, wait: Duration) {
        self.ctl.stop_send.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + wait;
        while !self.senders_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        while self.senders_tcp.iter().any(|t| unsent_bytes(t) > 0) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Lets receivers read what is still in flight for `grace`, then stop them.
    pub fn drain_receivers(&self, grace: Duration) {
        self.ctl.set_recv_deadline(grace);
        let deadline = Instant::now() + grace + Duration::from_millis(300);
        let done = || {
            self.of_role(StreamRole::Receiver)
                .all(|s| s.finished.load(Ordering::Relaxed))
        };
        while !done() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Stops every worker and returns the CPU time their threads used.
    pub fn join(&mut self) -> CpuTimes {
        self.ctl.abort.store(true, Ordering::Relaxed);
        self.handles
            .drain(..)
            .filter_map(|h| h.join().ok())
            .fold(CpuTimes::default(), |a, b| a + b)
    }
}

impl Drop for Iperf3Engine {
    fn drop(&mut self) {
        self.join();
    }
}

/// Each local stream's view of the test up to `stop_at`, after a last interval report.
pub(crate) fn local_views(
    engine: &mut Iperf3Engine,
    stop_at: f64,
    emit: &mut dyn FnMut(Event),
) -> Vec<PeerStream> {
    if let Some(r) = engine.meter.finish(stop_at) {
        emit(Event::Interval(r));
    }
    engine
        .meter
        .end_views(stop_at, &|_| None)
        .into_iter()
        .map(|(id, role, view)| PeerStream { id, role, view })
        .collect()
}

/// A partial summary after a failure: this end's figures only. `cpu` turns the workers' CPU
/// time into this end's usage.
pub(crate) fn finish(
    engine: &mut Iperf3Engine,
    p: &TestParams,
    role: Role,
    error: Option<String>,
    emit: &mut dyn FnMut(Event),
    cpu: &dyn Fn(CpuTimes) -> CpuUsage,
) -> TestSummary {
    let stop_at = engine.elapsed();
    engine.ctl.abort.store(true, Ordering::Relaxed);
    let local = local_views(engine, stop_at, emit);
    let cpu_local = cpu(engine.join());
    crate::summary::build(crate::summary::SummaryInput {
        role,
        params: p,
        local: &local,
        peer: None,
        cpu_local,
        local_congestion: None,
        error,
    })
}

/// Bytes written to a TCP socket that the kernel has not sent yet (0 where unknown).
#[cfg(target_os = "linux")]
fn unsent_bytes(s: &TcpStream) -> i32 {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int into `n`, which we own.
    let rc = unsafe { libc::ioctl(s.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
    if rc == 0 {
        n
    } else {
        0
    }
}

#[cfg(not(target_os = "linux"))]
fn unsent_bytes(_s: &TcpStream) -> i32 {
    0
}
