//! The MPTCP backend, chosen explicitly ([`Backend::Mptcp`]): one Multipath TCP connection
//! on a dual-stack AF_INET6 socket, with a subflow over IPv4 and one over IPv6; the kernel
//! keeps the byte stream whole across them, so there is no framing, replay or JOIN here.
//! Switching tells the path manager to prefer the other family's subflow: the subflows of
//! the family left are marked backup (MP_PRIO), so both ends send on the other family while
//! it is up, and fall back to the backup by themselves if it fails.
//!
//! Requirements, checked and reported rather than worked around (no silent fallback to
//! plain TCP): a kernel with MPTCP enabled ([`probe::check`]); root (CAP_NET_ADMIN) for the
//! path manager's endpoints ([`pm`]); a server that announces its address of the other
//! family ([`MptcpListener::bind`] adds `signal` endpoints for the addresses it is given).
//! Endpoint flags are per network namespace, so a switch moves every MPTCP connection of
//! this namespace that uses the same local addresses.

pub mod pm;
pub mod probe;
pub mod subflows;

use crate::error::Error;
use crate::options::{Options, Targets};
use crate::stats::{Family, Stats, SwitchKind, SwitchRecord};
pub use probe::Unavailable;
use socket2::Socket;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, SocketAddrV6};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Mutex;
use std::time::{Duration, Instant};
pub use subflows::Subflow;

/// Which transport carries a switching stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The portable framed protocol over one TCP connection per family ([`crate::Conn`]).
    #[default]
    Framed,
    /// One MPTCP connection with a subflow per family ([`MptcpConn`]).
    Mptcp,
}

/// How often a switch looks whether the wanted family's subflow has joined.
const SUBFLOW_POLL: Duration = Duration::from_millis(10);

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { what, source }
}

/// Runs a system call again while a signal interrupted it (the `ip` commands this backend
/// runs end with SIGCHLD, for one).
fn retry_eintr(mut f: impl FnMut() -> isize) -> isize {
    loop {
        let r = f();
        if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return r;
        }
    }
}

/// The error of a failed send or receive: would block (with MSG_DONTWAIT), timed out (the
/// socket's timeout passed), or the socket's own.
fn call_error(flags: libc::c_int, call: &'static str, doing: &'static str) -> Error {
    let e = std::io::Error::last_os_error();
    match e.kind() {
        std::io::ErrorKind::WouldBlock if flags & libc::MSG_DONTWAIT != 0 => {
            Error::WouldBlock(call)
        }
        std::io::ErrorKind::WouldBlock => Error::TimedOut(call),
        _ => Error::Io {
            what: doing,
            source: e,
        },
    }
}

/// `addr` as an address of a dual-stack IPv6 socket (IPv4 as IPv4-mapped).
fn dual_stack(addr: SocketAddr) -> SocketAddrV6 {
    match addr {
        SocketAddr::V4(a) => SocketAddrV6::new(a.ip().to_ipv6_mapped(), a.port(), 0, 0),
        SocketAddr::V6(a) => a,
    }
}

fn mptcp_socket() -> Result<Socket, Error> {
    let s = probe::socket().map_err(Error::MptcpUnavailable)?;
    s.set_only_v6(false)
        .map_err(io("making the socket dual-stack"))?;
    Ok(s)
}

#[derive(Debug, Default)]
struct Counters {
    written: u64,
    received: u64,
    preferred: Option<Family>,
    switches: Vec<SwitchRecord>,
    finished: bool,
}

/// One end of an MPTCP connection: blocking and non-blocking send and receive, switch,
/// stats, the same calls as [`crate::Conn`].
pub struct MptcpConn {
    sock: Socket,
    opts: Options,
    client: bool,
    start: Instant,
    counters: Mutex<Counters>,
}

impl MptcpConn {
    fn new(sock: Socket, opts: Options, client: bool, first: Family) -> Result<Self, Error> {
        if !subflows::is_mptcp(sock.as_raw_fd()) {
            return Err(Error::Failed(
                "the connection fell back to plain TCP: the peer does not speak MPTCP, or \
                 something on the path strips its options"
                    .into(),
            ));
        }
        sock.set_tcp_nodelay(true)
            .map_err(io("setting TCP_NODELAY"))?;
        sock.set_read_timeout(Some(opts.io_timeout))
            .map_err(io("setting the receive timeout"))?;
        sock.set_write_timeout(Some(opts.io_timeout))
            .map_err(io("setting the send timeout"))?;
        Ok(Self {
            sock,
            opts,
            client,
            start: Instant::now(),
            counters: Mutex::new(Counters {
                preferred: Some(first),
                ..Counters::default()
            }),
        })
    }

    /// Connects over `family` to the server's address of that family. Raises this
    /// namespace's MPTCP limits (when allowed) so the server's announced address of the other
    /// family gets a subflow.
    ///
    /// # Errors
    /// MPTCP unavailable (said why), no address, the dial failed, or the connection fell
    /// back to plain TCP.
    pub fn connect(targets: &Targets, family: Family, opts: Options) -> Result<Self, Error> {
        let sock = mptcp_socket()?;
        // Without root the limits stay as they are; a later switch says what is missing.
        let _ = pm::ensure_limits(2);
        let addr = dual_stack(targets.get(family)?);
        sock.connect_timeout(&addr.into(), opts.connect_timeout)
            .map_err(io("connecting over MPTCP"))?;
        Self::new(sock, opts, true, family)
    }

    fn counters(&self) -> std::sync::MutexGuard<'_, Counters> {
        self.counters.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send_flags(&self, data: &[u8], flags: libc::c_int) -> Result<usize, Error> {
        if data.is_empty() {
            return Ok(0);
        }
        let n = retry_eintr(|| {
            // SAFETY: data is a valid readable buffer of data.len() bytes.
            unsafe {
                libc::send(
                    self.sock.as_raw_fd(),
                    data.as_ptr().cast(),
                    data.len(),
                    flags | libc::MSG_NOSIGNAL,
                )
            }
        });
        if n < 0 {
            return Err(call_error(flags, "send", "sending"));
        }
        self.counters().written += n as u64;
        Ok(n as usize)
    }

    fn recv_flags(&self, buf: &mut [u8], flags: libc::c_int) -> Result<usize, Error> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = retry_eintr(|| {
            // SAFETY: buf is a valid writable buffer of buf.len() bytes.
            unsafe {
                libc::recv(
                    self.sock.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    flags,
                )
            }
        });
        if n < 0 {
            return Err(call_error(flags, "receive", "receiving"));
        }
        self.counters().received += n as u64;
        Ok(n as usize)
    }

    /// Sends; blocks until some bytes fit (up to the I/O timeout); returns how many.
    ///
    /// # Errors
    /// The connection failed or the timeout passed.
    pub fn send(&self, data: &[u8]) -> Result<usize, Error> {
        self.send_flags(data, 0)
    }

    /// Sends what fits now; [`Error::WouldBlock`] when nothing does.
    ///
    /// # Errors
    /// As [`MptcpConn::send`].
    pub fn try_send(&self, data: &[u8]) -> Result<usize, Error> {
        self.send_flags(data, libc::MSG_DONTWAIT)
    }

    /// Sends all of `data`.
    ///
    /// # Errors
    /// As [`MptcpConn::send`].
    pub fn send_all(&self, data: &[u8]) -> Result<(), Error> {
        crate::conn::send_all_with(data, |d| self.send(d))
    }

    /// Receives; blocks until bytes arrive (up to the I/O timeout); 0 at the end of stream.
    ///
    /// # Errors
    /// The connection failed or the timeout passed.
    pub fn recv(&self, buf: &mut [u8]) -> Result<usize, Error> {
        self.recv_flags(buf, 0)
    }

    /// Receives what has arrived; [`Error::WouldBlock`] when nothing has.
    ///
    /// # Errors
    /// As [`MptcpConn::recv`].
    pub fn try_recv(&self, buf: &mut [u8]) -> Result<usize, Error> {
        self.recv_flags(buf, libc::MSG_DONTWAIT)
    }

    /// The socket itself: POLLIN and POLLOUT mean what they mean for any TCP socket.
    pub fn poll_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// The subflows now, with their addresses and acknowledged bytes.
    ///
    /// # Errors
    /// The socket options failed.
    pub fn subflows(&self) -> Result<Vec<Subflow>, Error> {
        subflows::subflows(self.sock.as_raw_fd()).map_err(io("reading the MPTCP subflows"))
    }

    /// Makes `family`'s subflows the ones both ends send on: waits (up to the connect timeout)
    /// until such a subflow has joined, then marks its local address's endpoint non-backup
    /// and the other family's backup.
    ///
    /// # Errors
    /// Not the connecting end; no subflow of `family` joined (the server announces no such
    /// address, or this host's limits refuse it); the path manager refused (not root).
    pub fn switch(&self, family: Family) -> Result<SwitchRecord, Error> {
        if !self.client {
            return Err(Error::NotClient);
        }
        let requested = Instant::now();
        let deadline = requested + self.opts.connect_timeout;
        let flows = loop {
            let flows = self.subflows()?;
            if flows.iter().any(|f| f.family() == family) {
                break flows;
            }
            if Instant::now() >= deadline {
                return Err(pm::PmError::NoSubflow {
                    family: family.name(),
                    waited: self.opts.connect_timeout,
                    subflows: flows.iter().map(|f| (f.local, f.remote)).collect(),
                }
                .into());
            }
            std::thread::sleep(SUBFLOW_POLL);
        };
        let mut locals: Vec<(IpAddr, bool)> = flows
            .iter()
            .map(|f| (f.local, f.family() != family))
            .collect();
        locals.sort();
        locals.dedup();
        // Prefer first, then demote: the stream never has only backup subflows.
        locals.sort_by_key(|(_, backup)| *backup);
        for (addr, backup) in locals {
            let id = pm::ensure(addr, &[])?;
            pm::set_backup(id, backup)?;
        }
        let now = Instant::now();
        let mut c = self.counters();
        let from = c.preferred.replace(family);
        let rec = SwitchRecord {
            at: requested.saturating_duration_since(self.start),
            kind: SwitchKind::Planned,
            from,
            to: family,
            setup: Some(now.saturating_duration_since(requested)),
            first_sent: None,
            first_received: None,
            stall: None,
            replayed: 0,
            duplicates: 0,
        };
        c.switches.push(rec.clone());
        Ok(rec)
    }

    /// Ends this end's stream (the peer's receive returns 0 after the last byte).
    ///
    /// # Errors
    /// The shutdown failed.
    pub fn finish(&self) -> Result<(), Error> {
        let mut c = self.counters();
        if c.finished {
            return Ok(()); // a second shutdown fails once the peer has closed
        }
        self.sock
            .shutdown(std::net::Shutdown::Write)
            .map_err(io("ending the stream"))?;
        c.finished = true;
        Ok(())
    }

    /// Finishes, then waits for the peer's end of stream, which it sends once it has read
    /// everything; bytes of the peer's stream not yet read are dropped. The wait ends after
    /// the I/O timeout, plus at most one read's own timeout: a peer that keeps sending does
    /// not hold the close longer.
    ///
    /// # Errors
    /// The peer did not finish in time, or the connection failed.
    pub fn close(&self) -> Result<(), Error> {
        self.finish()?;
        let deadline = Instant::now() + self.opts.io_timeout;
        let mut buf = vec![0u8; 64 * 1024];
        while self.recv(&mut buf)? > 0 {
            if Instant::now() >= deadline {
                return Err(Error::TimedOut("close (the peer kept sending)"));
            }
        }
        Ok(())
    }

    /// The counters so far: bytes written and received, the preferred family, bytes
    /// acknowledged per family (summed over the subflows still open), one record per switch
    /// (with its setup time only: the kernel moves the data, so stalls and replays are not
    /// seen here).
    pub fn stats(&self) -> Stats {
        let mut sent = [0u64; 2];
        for f in self.subflows().unwrap_or_default() {
            sent[usize::from(f.family() == Family::V6)] += f.bytes_acked;
        }
        let c = self.counters();
        Stats {
            family: c.preferred,
            written: c.written,
            received: c.received,
            sent_by_family: sent,
            switches: c.switches.clone(),
            ..Stats::default()
        }
    }

    /// The family both ends are told to send on.
    pub fn family(&self) -> Option<Family> {
        self.counters().preferred
    }
}

/// Accepts MPTCP connections on one dual-stack socket (all addresses, the given port) and
/// announces the given addresses to clients, so each gets a subflow per family.
pub struct MptcpListener {
    sock: Socket,
    addrs: Vec<SocketAddr>,
    opts: Options,
}

impl MptcpListener {
    /// Listens on `[::]` at the port of `addrs` (the first one's; 0 picks one) and adds a
    /// `signal` endpoint for each of their addresses that has none, with this namespace's
    /// limits raised to accept subflows.
    ///
    /// # Errors
    /// MPTCP unavailable (said why), the bind failed, or the path manager refused (not root).
    pub fn bind(addrs: &[SocketAddr], opts: Options) -> Result<Self, Error> {
        let sock = mptcp_socket()?;
        let port = addrs.first().map_or(0, SocketAddr::port);
        sock.set_reuse_address(true)
            .map_err(io("listening over MPTCP"))?;
        let any = SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, port, 0, 0);
        sock.bind(&any.into()).map_err(io("listening over MPTCP"))?;
        sock.listen(128).map_err(io("listening over MPTCP"))?;
        let port = sock
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map_or(port, |a| a.port());
        pm::ensure_limits(2)?;
        for a in addrs.iter().filter(|a| !a.ip().is_unspecified()) {
            pm::ensure(a.ip(), &["signal"])?;
        }
        let addrs = addrs
            .iter()
            .map(|a| SocketAddr::new(a.ip(), port))
            .collect();
        Ok(Self { sock, addrs, opts })
    }

    /// The addresses announced, with the port bound.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.addrs.clone()
    }

    /// Waits for the next connection; `None` waits without limit.
    ///
    /// # Errors
    /// The timeout passed, the accept failed, or the connection fell back to plain TCP.
    pub fn accept(&self, timeout: Option<Duration>) -> Result<MptcpConn, Error> {
        let mut p = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as libc::c_int);
        // SAFETY: one valid pollfd for the duration of the call.
        let r = retry_eintr(|| unsafe { libc::poll(&mut p, 1, ms) } as isize);
        if r == 0 {
            return Err(Error::TimedOut("accept"));
        }
        if r < 0 {
            // Going on to accept() would block without the timeout asked for.
            return Err(Error::Io {
                what: "waiting for a connection",
                source: std::io::Error::last_os_error(),
            });
        }
        let (sock, peer) = self.sock.accept().map_err(io("accepting"))?;
        let family = match peer.as_socket() {
            Some(SocketAddr::V6(a)) if a.ip().to_ipv4_mapped().is_none() => Family::V6,
            _ => Family::V4,
        };
        MptcpConn::new(sock, self.opts.clone(), false, family)
    }
}
