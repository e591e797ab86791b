//! `sonde services`: RFC 862 echo, RFC 863 discard and RFC 864 chargen over TCP and UDP.
//!
//! They are the servers a microcontroller's TCP/IP stack can run, here so that the stress
//! client can be checked against a known-good peer on a host. One thread drives every socket
//! through mio (epoll): thousands of connections cost a slab entry each, not a thread.
//!
//! Resource bounds: an echo connection holds at most [`ServicesConfig::echo_buffer`] bytes
//! (it stops reading while its reply is not taken); discard and chargen hold none; at most
//! [`ServicesConfig::max_connections`] connections are open, and those beyond are refused with
//! a reset. UDP replies are never larger than the datagram that asked, and each source gets
//! at most [`ServicesConfig::udp_rate`] replies per second.

mod service;
mod tcp;
mod udp;

use mio::net::{TcpListener, UdpSocket};
use mio::{Events, Interest, Poll, Token};
pub use service::{Service, ServicesStats};
use service::{CONN_BASE, UDP_BASE};
use socket2::{Domain, Socket, Type};
use sonde_stats::source_limit::{RateCap, SourceLimiter, WhenFull};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tcp::Conns;

/// What to serve where.
#[derive(Debug, Clone)]
pub struct ServicesConfig {
    /// The one address to listen on; `None`: IPv6 and IPv4 (`::`, dual-stack, as `sonde
    /// server`), IPv4 alone on a host without IPv6.
    pub bind: Option<IpAddr>,
    /// (service, port) pairs; each is served over TCP and/or UDP as below.
    pub ports: Vec<(Service, u16)>,
    pub tcp: bool,
    pub udp: bool,
    /// Open TCP connections at most, over all services.
    pub max_connections: usize,
    /// Bytes an echo connection may hold while its peer does not read.
    pub echo_buffer: usize,
    /// UDP replies per second per source address.
    pub udp_rate: u32,
    /// Sources the UDP limiter remembers.
    pub udp_sources: usize,
}

/// Why the services could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum ServicesError {
    #[error("cannot listen on {proto} {addr} ({service}): {source}{hint}")]
    Bind {
        service: &'static str,
        proto: &'static str,
        addr: SocketAddr,
        source: std::io::Error,
        hint: &'static str,
    },
    #[error("event loop: {0}")]
    Poll(#[source] std::io::Error),
}

/// Bound sockets, ready to [`Services::run`].
pub struct Services {
    poll: Poll,
    listeners: Vec<(Service, TcpListener)>,
    udp: Vec<(Service, UdpSocket)>,
    cfg: ServicesConfig,
}

impl Services {
    /// Binds every (service, protocol) asked for.
    ///
    /// # Errors
    /// A socket cannot be bound (port in use, or below 1024 without privilege), or epoll fails.
    pub fn bind(cfg: ServicesConfig) -> Result<Self, ServicesError> {
        if let Some(ip) = cfg.bind {
            return Self::bind_on(cfg, ip, false);
        }
        match Self::bind_on(cfg.clone(), IpAddr::V6(Ipv6Addr::UNSPECIFIED), true) {
            Err(ServicesError::Bind { source, .. })
                if sonde_platform::sockopt::family_unsupported(&source) =>
            {
                Self::bind_on(cfg, IpAddr::V4(Ipv4Addr::UNSPECIFIED), false)
            }
            r => r,
        }
    }

    /// Binds every (service, protocol) on `ip`; `dual`: an IPv6 socket takes IPv4 too.
    fn bind_on(cfg: ServicesConfig, ip: IpAddr, dual: bool) -> Result<Self, ServicesError> {
        let poll = Poll::new().map_err(ServicesError::Poll)?;
        let mut listeners = Vec::new();
        let mut udp = Vec::new();
        for &(service, port) in &cfg.ports {
            let addr = SocketAddr::new(ip, port);
            let err = |proto, source: std::io::Error| ServicesError::Bind {
                service: service.name(),
                proto,
                addr,
                hint: if source.kind() == std::io::ErrorKind::PermissionDenied {
                    " (ports below 1024 need root or CAP_NET_BIND_SERVICE; try --port-base)"
                } else {
                    ""
                },
                source,
            };
            if cfg.tcp {
                let mut l = listen(addr, dual, cfg.max_connections).map_err(|e| err("TCP", e))?;
                poll.registry()
                    .register(&mut l, Token(listeners.len()), Interest::READABLE)
                    .map_err(ServicesError::Poll)?;
                listeners.push((service, l));
            }
            if cfg.udp {
                let mut s = bind_udp(addr, dual).map_err(|e| err("UDP", e))?;
                sonde_platform::pktinfo::enable(&s).map_err(|e| err("UDP", e))?;
                poll.registry()
                    .register(&mut s, Token(UDP_BASE + udp.len()), Interest::READABLE)
                    .map_err(ServicesError::Poll)?;
                udp.push((service, s));
            }
        }
        Ok(Self {
            poll,
            listeners,
            udp,
            cfg,
        })
    }

    /// What is listening: (service, "TCP"/"UDP", local address).
    pub fn local_addrs(&self) -> Vec<(Service, &'static str, SocketAddr)> {
        let tcp = self
            .listeners
            .iter()
            .filter_map(|(s, l)| Some((*s, "TCP", l.local_addr().ok()?)));
        let udp = self
            .udp
            .iter()
            .filter_map(|(s, u)| Some((*s, "UDP", u.local_addr().ok()?)));
        tcp.chain(udp).collect()
    }

    /// Serves until `stop` is raised; returns the counters.
    ///
    /// # Errors
    /// Only when epoll itself fails; a failing connection or datagram is counted and dropped.
    pub fn run(mut self, stop: &AtomicBool) -> Result<ServicesStats, ServicesError> {
        let mut events = Events::with_capacity(1024);
        let mut stats = ServicesStats::default();
        let mut conns = Conns::new(self.cfg.max_connections, self.cfg.echo_buffer);
        let mut limiter = SourceLimiter::new(
            RateCap::per_second(self.cfg.udp_rate),
            self.cfg.udp_sources,
            WhenFull::RefuseNew,
        );
        let origin = Instant::now();
        // Tokens whose turn ended with work left (see `tcp::Next::Again`).
        let mut again: Vec<usize> = Vec::new();
        // Connections served since memory was last released, and when that was.
        let (mut busy, mut released) = (false, Instant::now());
        while !stop.load(Ordering::SeqCst) {
            let wait = if again.is_empty() {
                Duration::from_millis(100)
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(ServicesError::Poll(e));
            }
            let mut ready: Vec<usize> = std::mem::take(&mut again);
            ready.extend(events.iter().map(|ev| ev.token().0));
            ready.sort_unstable();
            ready.dedup();
            for t in ready {
                let more = if t >= CONN_BASE {
                    conns.drive(t - CONN_BASE, self.poll.registry(), &mut stats)
                } else if let Some((service, sock)) =
                    t.checked_sub(UDP_BASE).and_then(|i| self.udp.get(i))
                {
                    udp::serve(*service, sock, &mut limiter, origin.elapsed(), &mut stats)
                } else {
                    if let Some((service, l)) = self.listeners.get(t) {
                        conns.accept_all(*service, l, self.poll.registry(), &mut stats);
                    }
                    false
                };
                if more {
                    again.push(t);
                }
            }
            stats.open_now = conns.open();
            busy |= stats.open_now > 0;
            // At most once a second (a storm goes idle between connections all the time).
            if busy && stats.open_now == 0 && released.elapsed() >= RELEASE_EVERY {
                conns.release_if_idle();
                (busy, released) = (false, Instant::now());
            }
        }
        Ok(stats)
    }
}

/// How often, at most, idle services hand unused memory back to the OS.
const RELEASE_EVERY: Duration = Duration::from_secs(1);

/// A TCP listener whose accept queue can hold a burst of `max_connections` (up to the kernel's
/// somaxconn): a stress client opens thousands at once, and an overflowing queue would turn
/// into dropped handshakes and resets that are this server's fault, not the client's.
fn listen(addr: SocketAddr, dual: bool, max_connections: usize) -> std::io::Result<TcpListener> {
    let s = socket(addr, Type::STREAM, dual)?;
    s.bind(&addr.into())?;
    s.listen(i32::try_from(max_connections.clamp(128, 65_535)).unwrap_or(4096))?;
    Ok(TcpListener::from_std(s.into()))
}

/// A UDP socket bound to `addr` (`dual`: IPv4 too on an IPv6 socket).
fn bind_udp(addr: SocketAddr, dual: bool) -> std::io::Result<UdpSocket> {
    let s = socket(addr, Type::DGRAM, dual)?;
    s.bind(&addr.into())?;
    Ok(UdpSocket::from_std(s.into()))
}

/// A non-blocking socket of `addr`'s family, its address reusable; `dual` clears IPV6_V6ONLY
/// (whose default is the system's, `net.ipv6.bindv6only`) so that IPv4 arrives too.
fn socket(addr: SocketAddr, ty: Type, dual: bool) -> std::io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), ty, None)?;
    s.set_reuse_address(true)?;
    s.set_nonblocking(true)?;
    if dual && addr.is_ipv6() {
        s.set_only_v6(false)?;
    }
    Ok(s)
}
