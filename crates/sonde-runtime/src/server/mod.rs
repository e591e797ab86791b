//! `sonde server`: many tests at once on one port, each isolated in its own threads.
//!
//! One TCP listener takes control connections and TCP data streams (told apart by their first
//! bytes, see `sonde_proto::preamble`); one UDP socket on the same port takes the hellos of UDP
//! streams and hands each stream a socket connected to its client. A registry keyed by session
//! cookie routes data streams to their test. Limits (`--max-clients`, `--max-duration`,
//! `--max-bitrate`) are refused with a message the client prints.

pub mod policy;
mod registry;
mod session;

use crate::error::RunError;
use crate::os::poll;
use registry::{HelloVerdict, Registry};
use socket2::{Domain, Protocol as SockProto, Socket, Type};
use sonde_proto::preamble::{classify, Preamble, PreambleError, DATA_PREAMBLE_LEN};
use sonde_proto::udp_hello::{Hello, HelloAck};
use sonde_stats::model::Event;
use std::io::Read;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the server is configured.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub port: u16,
    pub bind: Option<IpAddr>,
    pub max_clients: Option<usize>,
    pub max_duration_secs: Option<f64>,
    pub max_bitrate: Option<u64>,
    pub one_off: bool,
    /// Interval for the server's own reports; None = use the client's.
    pub interval_secs: Option<f64>,
    /// With no `bind` address: serve IPv6 only (`-6`) instead of both families.
    pub ipv6_only: bool,
    /// A test whose data stops arriving this long while the server receives fails
    /// (`--rcv-timeout`); None waits up to the test's time limit.
    pub rcv_timeout: Option<Duration>,
    /// Listen with Multipath TCP (`-m`); plain TCP clients are served as before.
    pub mptcp: bool,
    /// `--idle-timeout`: with `one_off`, stop when no client came for this long; otherwise
    /// log the idle time and go on.
    pub idle_timeout: Option<Duration>,
}

impl ServerConfig {
    /// The limits this configuration puts on each test (for both protocols).
    pub fn limits(&self) -> policy::Limits {
        policy::Limits {
            max_duration_secs: self.max_duration_secs,
            max_bitrate: self.max_bitrate,
        }
    }
}

/// Creates the event sink for one test, given a label for the client.
pub type SinkFactory = Arc<dyn Fn(&str) -> Box<dyn FnMut(Event) + Send> + Send + Sync>;

/// Connections still being classified at once; more are closed immediately.
const MAX_PENDING: usize = 256;
/// How long a new connection may take to identify itself. Long enough for a few TCP
/// retransmissions on a lossy link (the lab runs tests at 30 % loss), short enough that an
/// idle connection (iperf3 #788) only ties up its own thread, and at most MAX_PENDING of them.
const PREAMBLE_TIMEOUT: Duration = Duration::from_secs(15);

struct Shared {
    cfg: ServerConfig,
    registry: Registry,
    /// iperf3 sessions, for routing their data connections and UDP hellos.
    iperf3: crate::iperf3::Hub,
    active: AtomicUsize,
    pending: AtomicUsize,
    served: AtomicUsize,
    shutdown: AtomicBool,
    interrupt: Arc<AtomicBool>,
    sinks: SinkFactory,
    log: Arc<dyn Fn(&str) + Send + Sync>,
    udp_local: SocketAddr,
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
        let shared = Arc::new(Shared {
            cfg,
            registry: Registry::default(),
            iperf3: crate::iperf3::Hub::default(),
            active: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            served: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            interrupt,
            sinks,
            log,
            udp_local,
        });
        Ok(Self { tcp, udp, shared })
    }

    /// The bound TCP address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.tcp.local_addr().ok()
    }

    /// Serves until interrupted (or after one test with `--one-off`).
    ///
    /// # Errors
    /// [`RunError::Listen`] when accepting fails for good.
    pub fn run(self) -> Result<(), RunError> {
        let Server { tcp, udp, shared } = self;
        let udp_shared = shared.clone();
        let udp_thread = std::thread::Builder::new()
            .name("sonde-udp-listener".into())
            .spawn(move || udp_listener(udp, udp_shared))
            .map_err(|e| RunError::Setup(format!("spawning the UDP listener: {e}")))?;
        let mut sessions = Vec::new();
        // Accept order, so iperf3 data connections keep their order (their roles follow it).
        let mut accepted: u64 = 0;
        let mut last_busy = Instant::now();
        let result = loop {
            if shared.interrupt.load(Ordering::Relaxed) || shared.shutdown.load(Ordering::Relaxed) {
                break Ok(());
            }
            let busy =
                shared.active.load(Ordering::Relaxed) + shared.pending.load(Ordering::Relaxed);
            if busy > 0 {
                last_busy = Instant::now();
            } else if let Some(idle) = shared
                .cfg
                .idle_timeout
                .filter(|&t| last_busy.elapsed() >= t)
            {
                if shared.cfg.one_off {
                    (shared.log)(&format!(
                        "no client came for {} s (--idle-timeout); exiting",
                        idle.as_secs()
                    ));
                    break Ok(());
                }
                (shared.log)(&format!(
                    "idle for {} s (--idle-timeout); still serving",
                    idle.as_secs()
                ));
                last_busy = Instant::now();
            }
            match poll::readable(&tcp, Duration::from_millis(100)) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(e) => {
                    break Err(RunError::Listen {
                        addr: listen_addr(&shared.cfg).to_string(),
                        source: e,
                    })
                }
            }
            let (stream, peer) = match tcp.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    (shared.log)(&format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            if shared.pending.fetch_add(1, Ordering::Relaxed) >= MAX_PENDING {
                shared.pending.fetch_sub(1, Ordering::Relaxed);
                (shared.log)(&format!(
                    "too many unidentified connections; closing one from {peer}"
                ));
                continue;
            }
            let s = shared.clone();
            accepted += 1;
            let seq = accepted;
            match std::thread::Builder::new()
                .name("sonde-conn".into())
                .spawn(move || handle_connection(stream, peer, s, seq))
            {
                Ok(h) => sessions.push(h),
                Err(e) => (shared.log)(&format!("cannot spawn a thread for {peer}: {e}")),
            }
            sessions.retain(|h| !h.is_finished());
        };
        shared.shutdown.store(true, Ordering::Relaxed);
        for h in sessions {
            let _ = h.join();
        }
        let _ = udp_thread.join();
        result
    }
}

fn read_preamble(stream: &mut TcpStream) -> Result<Preamble, String> {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let deadline = Instant::now() + PREAMBLE_TIMEOUT;
    let mut buf = Vec::with_capacity(DATA_PREAMBLE_LEN);
    loop {
        match classify(&buf) {
            Ok(p) => return Ok(p),
            Err(PreambleError::Incomplete(n)) => {
                if Instant::now() >= deadline {
                    return Err(format!(
                        "sent only {} bytes in {} s",
                        buf.len(),
                        PREAMBLE_TIMEOUT.as_secs()
                    ));
                }
                let mut chunk = vec![0u8; n];
                match stream.read(&mut chunk) {
                    Ok(0) => return Err("closed before identifying itself".into()),
                    Ok(k) => buf.extend_from_slice(&chunk[..k]),
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock
                                | std::io::ErrorKind::TimedOut
                                | std::io::ErrorKind::Interrupted
                        ) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
        }
    }
}

fn handle_connection(mut stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>, seq: u64) {
    let preamble = read_preamble(&mut stream);
    shared.pending.fetch_sub(1, Ordering::Relaxed);
    match preamble {
        Err(why) => (shared.log)(&format!("connection from {peer} {why}; closed")),
        Ok(Preamble::Foreign(bytes)) => {
            let ctx = crate::iperf3::server::ServerCtx {
                cfg: &shared.cfg,
                hub: &shared.iperf3,
                active: &shared.active,
                served: &shared.served,
                shutdown: &shared.shutdown,
                interrupt: &shared.interrupt,
                sinks: &shared.sinks,
                log: &*shared.log,
            };
            crate::iperf3::server::handle_foreign(stream, peer, bytes, seq, &ctx);
        }
        Ok(Preamble::Data { cookie, stream_id }) => {
            if !shared.registry.route_tcp(&cookie, stream_id, stream) {
                (shared.log)(&format!(
                    "data connection from {peer} for an unknown test or stream {stream_id}; closed"
                ));
            }
        }
        Ok(Preamble::Control) => session::serve(stream, peer, &shared),
        Ok(Preamble::Rr) => {
            let stop = || {
                shared.shutdown.load(Ordering::Relaxed) || shared.interrupt.load(Ordering::Relaxed)
            };
            if let Err(e) = crate::latency::tcp::serve_rr(stream, stop) {
                (shared.log)(&format!("tcp-rr connection from {peer}: {e}"));
            }
        }
    }
}

fn udp_listener(sock: UdpSocket, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 65536];
    let mut probes = crate::latency::Responder::new();
    while !shared.shutdown.load(Ordering::Relaxed) && !shared.interrupt.load(Ordering::Relaxed) {
        if !matches!(poll::readable(&sock, Duration::from_millis(100)), Ok(true)) {
            continue;
        }
        let Ok((n, peer)) = sock.recv_from(&mut buf) else {
            continue;
        };
        if probes.handle(&sock, &mut buf[..n], peer) {
            continue;
        }
        if let Some(form) = sonde_proto::iperf3::udp::HelloForm::parse(&buf[..n]) {
            iperf3_udp_hello(&sock, &shared, peer, form);
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
                let _ = sock.send_to(&ack.emit(), peer);
            }
            HelloVerdict::Create(params, tx) => {
                match crate::sockets::server_udp_stream(shared.udp_local, peer, &params) {
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
    form: sonde_proto::iperf3::udp::HelloForm,
) {
    use crate::iperf3::UdpVerdict;
    match shared.iperf3.udp_hello(peer, form, shared.udp_local) {
        Ok(UdpVerdict::Created) | Ok(UdpVerdict::Unclaimed) => {}
        Ok(UdpVerdict::Repeat(reply)) => {
            let _ = sock.send_to(&reply, peer);
        }
        Err(e) => (shared.log)(&format!("cannot open an iperf3 UDP stream for {peer}: {e}")),
    }
}
