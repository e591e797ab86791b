//! `sonde server`: many tests at once on one port, each isolated in its own threads.
//!
//! One TCP listener takes control connections and TCP data streams (told apart by their first
//! bytes, see `sonde_proto::preamble`). Accepting and reading those bytes is one event loop
//! (`gate`) holding thousands of unidentified connections, so idle or slow peers never cost a
//! legitimate client its test; only identified connections get a thread. One UDP socket on the same port takes the hellos of UDP
//! streams and hands each stream a socket connected to its client. A registry keyed by session
//! cookie routes data streams to their test. Limits (`--max-clients`, `--max-duration`,
//! `--max-bitrate`) are refused with a message the client prints.

mod gate;
mod iperf2;
mod pending;
mod registry;
mod session;

/// The server's configuration, its sinks and its admission rules, as every caller of
/// [`Server::bind`] names them: the server is their public face (they live in the core's
/// [`crate::serving`], shared with iperf3's sessions and the latency responder).
pub use crate::serving::{policy, source_limit, source_slots, ServerConfig, SinkFactory};

use crate::error::RunError;
use gate::{Gate, Identified};
use registry::{HelloVerdict, Registry};
use socket2::{Domain, Protocol as SockProto, Socket, Type};
use sonde_platform::poll;
use sonde_proto::preamble::Preamble;
use sonde_proto::udp_hello::{Hello, HelloAck};
use sonde_runtime_core::serving::admission::Serving;
use source_limit::SourceLimiter;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// At most one log line per this long about probes left unanswered by the per-source limit
/// or dropped for their key tag.
const LIMIT_LOG_EVERY: Duration = Duration::from_secs(5);
/// Unidentified connections held at once; beyond it the oldest is closed to hear the newest.
const MAX_PENDING: usize = 20_000;
/// Fewest held, however low the descriptor limit.
const MIN_PENDING: usize = 64;
/// Descriptors kept for the tests themselves (their streams, UDP sockets, output files).
const FD_RESERVE: usize = 1024;
/// How long a new connection may take to identify itself. Long enough for a few TCP
/// retransmissions on a lossy link (the lab runs tests at 30 % loss); an idle connection
/// (iperf3 #788) costs only a descriptor and a table entry until then.
const PREAMBLE_TIMEOUT: Duration = Duration::from_secs(15);

struct Shared {
    cfg: ServerConfig,
    registry: Registry,
    /// iperf3 sessions, for routing their data connections and UDP hellos.
    iperf3: crate::iperf3::Hub,
    active: AtomicUsize,
    served: AtomicUsize,
    shutdown: AtomicBool,
    interrupt: Arc<AtomicBool>,
    sinks: SinkFactory,
    log: Arc<dyn Fn(&str) + Send + Sync>,
    udp_local: SocketAddr,
    /// `--max-test-rate`: tests started per source.
    test_rate: Option<Mutex<SourceLimiter>>,
    /// `--max-sessions-per-source`: control connections held per source.
    sessions: source_slots::SourceSlots,
}

impl Shared {
    /// The refusal for a test from `peer` beyond `--max-test-rate`, if it is one.
    fn test_rate_refusal(&self, peer: SocketAddr) -> Option<policy::Refusal> {
        let limiter = self.test_rate.as_ref()?;
        let mut l = limiter
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if l.allow(peer.ip(), Instant::now()) {
            return None;
        }
        Some(policy::Refusal::SourceRate {
            message: format!(
                "too many tests from {}: the server starts at most {} per minute from one address (--max-test-rate); try again later",
                peer.ip().to_canonical(),
                l.rate().burst
            ),
        })
    }
}

fn listen_addr(cfg: &ServerConfig) -> SocketAddr {
    SocketAddr::new(
        cfg.bind.unwrap_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
        cfg.port,
    )
}

fn bind_tcp(addr: SocketAddr, v6_only: bool, mptcp: bool) -> std::io::Result<TcpListener> {
    let s = crate::sockets::tcp_socket(addr, mptcp)?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        s.set_only_v6(v6_only)?;
    }
    s.bind(&addr.into())?;
    s.listen(1024)?;
    Ok(s.into())
}

fn bind_udp(addr: SocketAddr, v6_only: bool) -> std::io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(SockProto::UDP))?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        s.set_only_v6(v6_only)?;
    }
    s.bind(&addr.into())?;
    Ok(s.into())
}

/// A bound server, ready to [`Server::run`].
pub struct Server {
    tcp: TcpListener,
    udp: UdpSocket,
    shared: Arc<Shared>,
    iperf2: Option<iperf2::Iperf2Port>,
}

impl Server {
    /// Binds the TCP and UDP sockets (dual-stack unless `-B` names one address).
    ///
    /// # Errors
    /// [`RunError::Listen`] when the port is taken or the address is not local.
    pub fn bind(
        cfg: ServerConfig,
        interrupt: Arc<AtomicBool>,
        sinks: SinkFactory,
        log: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> Result<Self, RunError> {
        let addr = listen_addr(&cfg);
        let listen_err = |e| RunError::Listen {
            addr: addr.to_string(),
            source: e,
        };
        let tcp = bind_tcp(addr, cfg.ipv6_only, cfg.mptcp).map_err(listen_err)?;
        // With port 0 the kernel picks the TCP port; UDP must use the same one.
        let port = tcp.local_addr().map_err(listen_err)?.port();
        let udp = bind_udp(SocketAddr::new(addr.ip(), port), cfg.ipv6_only).map_err(listen_err)?;
        let udp_local = udp.local_addr().map_err(listen_err)?;
        // Answers and per-stream sockets leave from the address each datagram came to.
        sonde_platform::pktinfo::enable(&udp).map_err(listen_err)?;
        let cfg_tests = cfg.source_limits.tests;
        let sessions = source_slots::SourceSlots::new(cfg.source_limits.sessions);
        let shared = Arc::new(Shared {
            cfg,
            registry: Registry::default(),
            iperf3: crate::iperf3::Hub::default(),
            active: AtomicUsize::new(0),
            served: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            interrupt,
            sinks,
            log,
            udp_local,
            test_rate: cfg_tests.map(|r| Mutex::new(SourceLimiter::new(r))),
            sessions,
        });
        Ok(Self {
            tcp,
            udp,
            shared,
            iperf2: None,
        })
    }

    /// Serves iperf 2 clients too, on TCP and UDP `port` of the same address (`--iperf2`;
    /// 0 lets the kernel pick one, see [`Server::iperf2_addr`]).
    ///
    /// # Errors
    /// [`RunError::Listen`] when the port is taken; [`RunError::Setup`] when the server
    /// admits only authenticated clients, which iperf 2 clients cannot be (the port would let
    /// anyone test through it).
    pub fn with_iperf2(mut self, port: u16) -> Result<Self, RunError> {
        let auth = &self.shared.cfg.auth;
        if auth.psk.is_some() || auth.rsa.is_some() {
            return Err(RunError::Setup(
                "--iperf2 cannot be used on a server that admits only authenticated clients \
                 (--psk-file, --rsa-private-key-path): iperf 2 clients have no way to \
                 authenticate, so its port would admit anyone; run a separate server for them"
                    .into(),
            ));
        }
        let addr = SocketAddr::new(listen_addr(&self.shared.cfg).ip(), port);
        self.iperf2 = Some(iperf2::Iperf2Port::bind(addr, self.shared.cfg.ipv6_only)?);
        Ok(self)
    }

    /// The bound TCP address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.tcp.local_addr().ok()
    }

    /// The bound iperf 2 address, with [`Server::with_iperf2`].
    pub fn iperf2_addr(&self) -> Option<SocketAddr> {
        self.iperf2
            .as_ref()
            .and_then(iperf2::Iperf2Port::local_addr)
    }

    /// Serves until interrupted (or after one test with `--one-off`).
    ///
    /// # Errors
    /// [`RunError::Listen`] when accepting fails for good.
    pub fn run(self) -> Result<(), RunError> {
        let Server {
            tcp,
            udp,
            shared,
            iperf2,
        } = self;
        let listen_err = |e| RunError::Listen {
            addr: listen_addr(&shared.cfg).to_string(),
            source: e,
        };
        let cap = pending_cap(sonde_platform::nofile::soft_limit());
        if cap < MAX_PENDING {
            (shared.log)(&format!(
                "the file descriptor limit lets this server hold only {cap} unidentified connections (raise `ulimit -n` to hold up to {MAX_PENDING})"
            ));
        }
        let mut gate = Gate::new(tcp, cap, PREAMBLE_TIMEOUT).map_err(listen_err)?;
        if let Some(rate) = shared.cfg.source_limits.connections {
            gate.limit_sources(SourceLimiter::new(rate));
        }
        let udp_shared = shared.clone();
        let udp_thread = std::thread::Builder::new()
            .name("sonde-udp-listener".into())
            .spawn(move || udp_listener(udp, udp_shared))
            .map_err(|e| RunError::Setup(format!("spawning the UDP listener: {e}")))?;
        let iperf2_threads = match iperf2 {
            Some(port) => port.spawn(shared.clone())?,
            None => Vec::new(),
        };
        let mut sessions: Vec<std::thread::JoinHandle<()>> = Vec::new();
        let mut idle = IdleWatch::new();
        let result = loop {
            if shared.interrupt.load(Ordering::Relaxed) || shared.shutdown.load(Ordering::Relaxed) {
                break Ok(());
            }
            if idle.should_exit(&shared, gate.pending()) {
                break Ok(());
            }
            let arrivals = match gate.turn(Duration::from_millis(100), &*shared.log) {
                Ok(a) => a,
                Err(e) => break Err(listen_err(e)),
            };
            sessions.retain(|h| !h.is_finished());
            for a in arrivals {
                if sessions.len() >= gate::MAX_SERVED {
                    gate.turn_away(a);
                    continue;
                }
                let s = shared.clone();
                let peer = a.peer;
                match std::thread::Builder::new()
                    .name("sonde-conn".into())
                    .spawn(move || handle_connection(a, s))
                {
                    Ok(h) => sessions.push(h),
                    Err(e) => (shared.log)(&format!("cannot spawn a thread for {peer}: {e}")),
                }
            }
        };
        gate.close_all();
        shared.shutdown.store(true, Ordering::Relaxed);
        for h in sessions {
            let _ = h.join();
        }
        let _ = udp_thread.join();
        for t in iperf2_threads {
            let _ = t.join();
        }
        result
    }
}

/// `--idle-timeout`: when no client has been connected or connecting for that long.
struct IdleWatch {
    last_busy: Instant,
}

impl IdleWatch {
    fn new() -> Self {
        Self {
            last_busy: Instant::now(),
        }
    }

    /// Logs an idle period; true when the server should stop (with `--one-off`).
    fn should_exit(&mut self, shared: &Shared, pending: usize) -> bool {
        if shared.active.load(Ordering::Relaxed) + pending > 0 {
            self.last_busy = Instant::now();
            return false;
        }
        let Some(idle) = shared
            .cfg
            .idle_timeout
            .filter(|&t| self.last_busy.elapsed() >= t)
        else {
            return false;
        };
        if shared.cfg.one_off {
            (shared.log)(&format!(
                "no client came for {} s (--idle-timeout); exiting",
                idle.as_secs()
            ));
            return true;
        }
        (shared.log)(&format!(
            "idle for {} s (--idle-timeout); still serving",
            idle.as_secs()
        ));
        self.last_busy = Instant::now();
        false
    }
}

/// How many unidentified connections the server holds: [`MAX_PENDING`], less where the
/// descriptor limit would leave too few for the tests themselves.
fn pending_cap(nofile: Option<u64>) -> usize {
    match nofile {
        Some(n) => {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            n.saturating_sub(FD_RESERVE).clamp(MIN_PENDING, MAX_PENDING)
        }
        None => MAX_PENDING,
    }
}

fn handle_connection(a: Identified, shared: Arc<Shared>) {
    let Identified {
        stream,
        peer,
        seq,
        preamble,
        early,
    } = a;
    match preamble {
        Preamble::Foreign(bytes) => {
            let source_refusal = |p| shared.test_rate_refusal(p);
            let ctx = crate::iperf3::server::ServerCtx {
                serving: Serving {
                    cfg: &shared.cfg,
                    active: &shared.active,
                    served: &shared.served,
                    shutdown: &shared.shutdown,
                    interrupt: &shared.interrupt,
                    sinks: &shared.sinks,
                    log: &*shared.log,
                    source_refusal: &source_refusal,
                    sessions: &shared.sessions,
                },
                hub: &shared.iperf3,
            };
            crate::iperf3::accept::handle_foreign(stream, peer, bytes, seq, &ctx);
        }
        Preamble::Data { cookie, stream_id } => {
            if !shared.registry.route_tcp(&cookie, stream_id, stream) {
                (shared.log)(&format!(
                    "data connection from {peer} for an unknown test or stream {stream_id}; closed"
                ));
            }
        }
        Preamble::Control => session::serve(stream, peer, &early, &shared),
        Preamble::Rr => {
            // A tcp-rr run is a client like any other: it takes a `--max-clients` slot.
            let slot = policy::ClientSlot::take(&shared.active, shared.cfg.max_clients);
            let source = shared.sessions.take(peer.ip());
            let refusal = source.refusal().or_else(|| {
                if slot.over_limit() {
                    Some(policy::Refusal::Busy {
                        max: shared.cfg.max_clients.unwrap_or(0),
                    })
                } else {
                    shared.test_rate_refusal(peer)
                }
            });
            if let Some(r) = refusal {
                let msg = r.message();
                (shared.log)(&format!("refused tcp-rr from {peer}: {msg}"));
                crate::latency::tcp::refuse_rr(stream, &msg);
                return;
            }
            let stop = || {
                shared.shutdown.load(Ordering::Relaxed) || shared.interrupt.load(Ordering::Relaxed)
            };
            let key = shared
                .cfg
                .auth
                .psk
                .as_ref()
                .map(sonde_proto::probe_tag::ProbeKey::new);
            if let Err(e) = crate::latency::tcp::serve_rr(stream, key.as_ref(), stop) {
                (shared.log)(&format!("tcp-rr connection from {peer}: {e}"));
            }
        }
    }
}

/// Logs the probes the responder left unanswered (`--max-probe-rate`) or dropped (`--psk-file`)
/// since the last call, a line for each reason that has any.
fn log_dropped_probes(probes: &mut crate::latency::Responder, log: &(dyn Fn(&str) + Send + Sync)) {
    if let (limited @ 1.., Some(from)) = probes.take_limited() {
        log(&format!(
            "latency probes: {limited} left unanswered since the last note, from addresses beyond --max-probe-rate (the last from {from})"
        ));
    }
    if let (rejected @ 1.., Some(from)) = probes.take_rejected() {
        log(&format!(
            "latency probes: {rejected} dropped since the last note for a missing, wrong or replayed --psk-file tag (the last from {from})"
        ));
    }
}

fn udp_listener(sock: UdpSocket, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 65536];
    let mut probes = match shared.cfg.source_limits.probes {
        Some(rate) => crate::latency::Responder::with_limit(SourceLimiter::new(rate)),
        None => crate::latency::Responder::new(),
    };
    if let Some(k) = &shared.cfg.auth.psk {
        probes = probes.keyed(sonde_proto::probe_tag::ProbeKey::new(k));
    }
    let mut limited_logged = Instant::now();
    while !shared.shutdown.load(Ordering::Relaxed) && !shared.interrupt.load(Ordering::Relaxed) {
        // Checked on every turn, not only when a probe comes: the last of a flood is
        // reported within a poll slice of the period, however quiet it is afterwards.
        if limited_logged.elapsed() >= LIMIT_LOG_EVERY {
            log_dropped_probes(&mut probes, &*shared.log);
            limited_logged = Instant::now();
        }
        if !matches!(poll::readable(&sock, Duration::from_millis(100)), Ok(true)) {
            continue;
        }
        let Ok((n, peer, dst)) = sonde_platform::pktinfo::recv(&sock, &mut buf) else {
            continue;
        };
        if probes.handle(&sock, &mut buf[..n], peer, dst) {
            continue;
        }
        if let Some(form) = sonde_proto::iperf3::udp::HelloForm::parse(&buf[..n]) {
            iperf3_udp_hello(&sock, &shared, peer, dst, form);
            continue;
        }
        let Ok(hello) = Hello::parse(&buf[..n]) else {
            continue;
        };
        let ack = HelloAck {
            cookie: hello.cookie,
            stream_id: hello.stream_id,
        };
        match shared.registry.hello(&hello.cookie, hello.stream_id) {
            HelloVerdict::Unknown => {}
            HelloVerdict::Repeat => {
                let _ = sonde_platform::pktinfo::send(&sock, &ack.emit(), peer, dst);
            }
            HelloVerdict::Create(params, tx) => {
                let stream =
                    crate::sockets::server_udp_stream(shared.udp_local, dst, peer, &params);
                match stream {
                    Ok(s) => {
                        let _ = s.send(&ack.emit());
                        let _ = tx.send(registry::Arrival::Udp(hello.stream_id, s, ack));
                    }
                    Err(e) => (shared.log)(&format!(
                        "cannot open UDP stream {} for {peer}: {e}",
                        hello.stream_id
                    )),
                }
            }
        }
    }
}

/// An iperf3 UDP hello: the oldest iperf3 session waiting for UDP streams takes it.
fn iperf3_udp_hello(
    sock: &UdpSocket,
    shared: &Shared,
    peer: SocketAddr,
    dst: Option<IpAddr>,
    form: sonde_proto::iperf3::udp::HelloForm,
) {
    use crate::iperf3::UdpVerdict;
    match shared.iperf3.udp_hello(peer, form, shared.udp_local, dst) {
        Ok(UdpVerdict::Created) | Ok(UdpVerdict::Unclaimed) => {}
        Ok(UdpVerdict::Repeat(reply)) => {
            let _ = sonde_platform::pktinfo::send(sock, &reply, peer, dst);
        }
        Err(e) => (shared.log)(&format!("cannot open an iperf3 UDP stream for {peer}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_cap_leaves_descriptors_for_the_tests() {
        assert_eq!(pending_cap(None), MAX_PENDING);
        assert_eq!(pending_cap(Some(1_048_576)), MAX_PENDING);
        assert_eq!(pending_cap(Some(20_000)), 20_000 - FD_RESERVE);
        assert_eq!(pending_cap(Some(1024)), MIN_PENDING);
        assert_eq!(pending_cap(Some(0)), MIN_PENDING);
    }
}
