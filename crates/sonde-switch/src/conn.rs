//! The framed backend over TCP: drives a [`Session`] with one reader and one writer thread
//! per path, and gives the application a blocking, socket-like [`Conn`].
//!
//! Threads, not an event loop: each path's reader blocks in `read` (with a short timeout so
//! it notices a closed session), each writer blocks in `write`; the session sits behind one
//! mutex and a condition variable wakes whoever waits for room, data or a path change. Every
//! wait ends: reads and writes on the application side fail after [`Options::io_timeout`].
//! Rust's standard library writes with `MSG_NOSIGNAL`, so a closed peer never raises SIGPIPE,
//! and the library's threads block every asynchronous signal, so an application's handlers
//! (a C program switching on SIGUSR1, say) run in the application's own threads.
//!
//! When the path carrying the stream fails (a socket error or the peer's close), the client
//! dials again, the other family first, and JOINs: break-before-make. The server keeps the
//! session and waits for that JOIN. Both give up after [`Options::recovery_timeout`].

use crate::framer::{FrameReader, Polled};
use crate::ready::Readiness;
use crate::session::{Config, PathId, Role, Session, Transmit};
use crate::stats::{Family, Stats, SwitchRecord};
use crate::wire::{Frame, RejectReason, SessionId};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread;
use std::time::{Duration, Instant};

/// How often blocked reader and accept threads look whether they should stop.
const TICK: Duration = Duration::from_millis(100);
/// Bytes a writer takes from the session per write call. Each take is a lock, a copy and a
/// wake-up of whoever waits for room; at 256 KiB the library ran at 0.90x a plain stream on
/// loopback, at 512 KiB at 1.01-1.03x (bench/RESULTS.md).
const WRITE_CHUNK: usize = 512 * 1024;
/// Pause between rounds of dialing while recovering a failed path.
const REDIAL: Duration = Duration::from_millis(20);

/// What went wrong, with what was being done.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: io::Error,
    },
    #[error("no {0} address to connect to")]
    NoAddress(&'static str),
    #[error("cannot resolve {host}: {source}")]
    Resolve { host: String, source: io::Error },
    #[error("{0} timed out")]
    TimedOut(&'static str),
    #[error("the session failed: {0}")]
    Failed(String),
    #[error("only the connecting end can switch paths")]
    NotClient,
    #[error("the session is closed")]
    Closed,
    #[error("{0} would block")]
    WouldBlock(&'static str),
    #[error("the MPTCP backend cannot run here: {0}")]
    MptcpUnavailable(crate::mptcp::Unavailable),
    #[error("the MPTCP path manager: {0}")]
    PathManager(#[from] crate::mptcp::pm::PmError),
}

/// Hands all of `data` to `send`, which takes some bytes per call.
pub(crate) fn send_all_with(
    mut data: &[u8],
    mut send: impl FnMut(&[u8]) -> Result<usize, Error>,
) -> Result<(), Error> {
    while !data.is_empty() {
        let n = send(data)?;
        data = data.get(n..).unwrap_or(&[]);
    }
    Ok(())
}

/// Fills `buf` from `recv`, which returns 0 at the end of the stream.
pub(crate) fn recv_exact_with(
    mut buf: &mut [u8],
    mut recv: impl FnMut(&mut [u8]) -> Result<usize, Error>,
) -> Result<(), Error> {
    while !buf.is_empty() {
        let n = recv(buf)?;
        if n == 0 {
            return Err(Error::Failed("the stream ended early".into()));
        }
        buf = buf.get_mut(n..).unwrap_or(&mut []);
    }
    Ok(())
}

fn io_err(what: &'static str) -> impl FnOnce(io::Error) -> Error {
    move |source| Error::Io { what, source }
}

/// Sizes and time limits.
#[derive(Debug, Clone)]
pub struct Options {
    pub session: Config,
    /// Dial plus handshake of one path.
    pub connect_timeout: Duration,
    /// The longest a send, receive or close waits for the peer.
    pub io_timeout: Duration,
    /// After the path carrying the stream failed: how long the client keeps dialing (and the
    /// server waits for its JOIN) before the session fails.
    pub recovery_timeout: Duration,
    /// TCP_USER_TIMEOUT of every path's socket: data unacknowledged this long fails the path
    /// in the kernel (the write or read errors), a backstop behind the heartbeat deadline
    /// ([`Config::dead_after`]). Longer than that deadline, because on a healthy but lossy path
    /// one lost retransmission already holds data unacknowledged for 600 ms (Linux's minimum
    /// retransmission timeout is 200 ms, doubled at each try). `None` keeps the system default.
    pub user_timeout: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            session: Config::default(),
            connect_timeout: Duration::from_secs(3),
            io_timeout: Duration::from_secs(30),
            recovery_timeout: Duration::from_secs(10),
            user_timeout: Some(Duration::from_secs(1)),
        }
    }
}

/// The peer's address in each family.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    pub v4: Option<SocketAddr>,
    pub v6: Option<SocketAddr>,
}

impl Targets {
    /// The first address of each family among `addrs`.
    pub fn from_addrs(addrs: &[SocketAddr]) -> Self {
        Self {
            v4: addrs.iter().copied().find(SocketAddr::is_ipv4),
            v6: addrs.iter().copied().find(SocketAddr::is_ipv6),
        }
    }

    /// Resolves `host` (a name or an address) and keeps one address per family.
    ///
    /// This asks the system resolver and waits as long as it does (with a name server that
    /// does not answer, its own time-outs: 10 s and more). An application that must stay
    /// responsive looks the name up its own way and passes the addresses to [`Self::from_addrs`].
    ///
    /// # Errors
    /// The name does not resolve.
    pub fn resolve(host: &str, port: u16) -> Result<Self, Error> {
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|source| Error::Resolve {
                host: host.to_string(),
                source,
            })?
            .collect();
        Ok(Self::from_addrs(&addrs))
    }

    /// The address of `family`.
    ///
    /// # Errors
    /// There is none.
    pub fn get(&self, family: Family) -> Result<SocketAddr, Error> {
        match family {
            Family::V4 => self.v4.ok_or(Error::NoAddress("IPv4")),
            Family::V6 => self.v6.ok_or(Error::NoAddress("IPv6")),
        }
    }
}

struct State {
    session: Session,
    failure: Option<String>,
    closed: bool,
    /// Set by close: writers leave once they have nothing more to send.
    closing: bool,
    /// Writer threads running.
    writers: usize,
    sockets: HashMap<PathId, TcpStream>,
    /// Since when the stream has had no path (the one carrying it failed), if it has none.
    orphaned: Option<Instant>,
    /// A recovery thread is dialing.
    redialing: bool,
    /// The pollable descriptor, once the application asked for it.
    ready: Option<Readiness>,
}

impl State {
    fn new(session: Session) -> Self {
        Self {
            session,
            failure: None,
            closed: false,
            closing: false,
            writers: 0,
            sockets: HashMap::new(),
            orphaned: None,
            redialing: false,
            ready: None,
        }
    }

    /// Mirrors whether receive and send would block onto the pollable descriptor (a failed or
    /// closed session blocks neither: the calls report it).
    fn sync_ready(&mut self) {
        let over = self.closed || self.failure.is_some();
        let (r, w) = (
            over || self.session.can_read(),
            over || self.session.can_write(),
        );
        if let Some(ready) = self.ready.as_mut() {
            ready.set(r, w);
        }
    }
}

struct Shared {
    st: Mutex<State>,
    cv: Condvar,
    /// Wakes the timer thread only, so it does not wake at every change while no pollable
    /// descriptor needs to follow them.
    timer_cv: Condvar,
    opts: Options,
    /// Where a recovering client dials (empty on the server).
    targets: Targets,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a thread of ours panicked; the state is still consistent
        // enough to report and close.
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>, d: Duration) -> MutexGuard<'a, State> {
        Self::wait_on(&self.cv, g, d)
    }

    fn wait_on<'a>(cv: &Condvar, g: MutexGuard<'a, State>, d: Duration) -> MutexGuard<'a, State> {
        match cv.wait_timeout(g, d) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        }
    }

    fn fail(&self, st: &mut State, why: String) {
        if st.failure.is_none() && !st.closed {
            st.failure = Some(why);
        }
        shut_all(st);
        self.cv.notify_all();
    }
}

fn shut_all(st: &mut State) {
    st.closed = true;
    for s in st.sockets.values() {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
}

/// Starts a library thread with every asynchronous signal blocked (see the module docs).
fn spawn(f: impl FnOnce() + Send + 'static) {
    thread::spawn(move || {
        block_signals();
        f()
    });
}

fn block_signals() {
    // SAFETY: a sigset_t initialised by sigfillset, changed by sigdelset and applied to the
    // calling thread only. Faults (SIGSEGV and the like) stay deliverable.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL] {
            libc::sigdelset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Starts the reader and writer threads of one path.
fn spawn_path(
    shared: &Arc<Shared>,
    st: &mut State,
    id: PathId,
    sock: TcpStream,
    reader: FrameReader,
) {
    let (Ok(r), Ok(w)) = (sock.try_clone(), sock.try_clone()) else {
        st.session.path_failed(id);
        return;
    };
    let _ = sock.set_nodelay(true);
    liveness::set_user_timeout(&sock, shared.opts.user_timeout);
    let _ = sock.set_read_timeout(Some(TICK));
    let _ = sock.set_write_timeout(Some(shared.opts.io_timeout));
    st.sockets.insert(id, sock);
    st.writers += 1;
    let s1 = shared.clone();
    let s2 = shared.clone();
    spawn(move || read_path(&s1, id, r, reader));
    spawn(move || write_path(&s2, id, w));
}

#[path = "liveness.rs"]
mod liveness;

fn path_done(shared: &Arc<Shared>, id: PathId, why: Option<String>) {
    let mut st = shared.lock();
    if let Some(s) = st.sockets.remove(&id) {
        if why.is_some() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
    let family = st.session.path_family(id);
    if why.is_some() && family.is_some() {
        st.session.path_failed(id);
    }
    while st.session.poll_event().is_some() {}
    if let (Some(why), Some(family)) = (why, family) {
        orphaned(shared, &mut st, family, why);
    }
    shared.cv.notify_all();
}

/// After a path failed: if the stream has lost its last path, note since when, and on the
/// client start dialing again.
fn orphaned(shared: &Arc<Shared>, st: &mut State, lost: Family, why: String) {
    if st.closed || !st.session.needs_path() {
        return;
    }
    let since = *st.orphaned.get_or_insert_with(Instant::now);
    if since.elapsed() >= shared.opts.recovery_timeout {
        return shared.fail(
            st,
            format!("no path came back after the last failed: {why}"),
        );
    }
    if st.session.role() == Role::Client && !st.redialing {
        st.redialing = true;
        let s = shared.clone();
        spawn(move || redial(&s, lost, since));
    } else if st.session.role() == Role::Server {
        let s = shared.clone();
        spawn(move || await_join(&s, since, why));
    }
}

/// Ends an orphaned spell once a path carries the stream again.
fn note_recovered(st: &mut State) {
    if st.orphaned.is_some() && st.session.active_path().is_some() {
        st.orphaned = None;
    }
}

/// Break-before-make on the client: dials the other family, then the lost one, until one
/// connects, and JOINs there (the session replays from what the server expects).
fn redial(shared: &Arc<Shared>, lost: Family, since: Instant) {
    let deadline = since + shared.opts.recovery_timeout;
    let mut last = String::from("no address to dial");
    loop {
        for family in [lost.other(), lost] {
            let Ok(addr) = shared.targets.get(family) else {
                continue;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match TcpStream::connect_timeout(&addr, left.min(shared.opts.connect_timeout)) {
                Ok(sock) => {
                    let mut st = shared.lock();
                    st.redialing = false;
                    if !st.closed && st.session.needs_path() {
                        // The switch record's setup then runs from the failure's detection.
                        st.session.request_switch(since);
                        let id = st.session.open_path(family, Instant::now());
                        spawn_path(shared, &mut st, id, sock, FrameReader::new());
                        shared.cv.notify_all();
                    }
                    return;
                }
                Err(e) => last = format!("dialing {addr}: {e}"),
            }
        }
        let mut st = shared.lock();
        if st.closed || Instant::now() >= deadline {
            st.redialing = false;
            return shared.fail(&mut st, format!("no path could be re-established: {last}"));
        }
        drop(st);
        thread::sleep(REDIAL);
    }
}

/// The server's side of a failed path: fails the session when no JOIN came in time.
fn await_join(shared: &Shared, since: Instant, why: String) {
    let deadline = since + shared.opts.recovery_timeout;
    let mut st = shared.lock();
    while !st.closed && st.session.needs_path() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return shared.fail(&mut st, format!("the client did not come back: {why}"));
        }
        st = shared.wait(st, left.min(TICK));
    }
}

fn read_path(shared: &Arc<Shared>, id: PathId, mut sock: TcpStream, mut fr: FrameReader) {
    loop {
        // Read a DATA frame only when the receive window can take it (backpressure).
        let header = fr.peek_header(&mut sock);
        let offset = match header {
            Ok(Some(_)) => fr.peek_data_offset(&mut sock),
            _ => Ok(None),
        };
        let mut st = shared.lock();
        if st.closed || !st.session.path_readable(id) {
            break;
        }
        match (header, offset) {
            (Ok(Some(h)), Ok(Some(o)))
                if st.session.recv_room_at(id, o) < h.len.saturating_sub(8) =>
            {
                // The peer's bytes are here; only this end's application (or, for bytes
                // ahead of the stream, the path still filling the gap) is slow.
                st.session.path_alive(id, Instant::now());
                drop(shared.wait(st, TICK));
                continue;
            }
            (Ok(Some(h)), Ok(None))
                if h.kind == crate::framer::DATA && h.len >= 8 && !fr.at_eof() =>
            {
                // The offset is not in yet: the next peek waits for it.
                continue;
            }
            (_, Err(e)) => {
                drop(st);
                return path_done(shared, id, Some(e.to_string()));
            }
            (Ok(_), Ok(_)) => {}
            (Err(e), _) => {
                drop(st);
                return path_done(shared, id, Some(e.to_string()));
            }
        }
        drop(st);
        let before = fr.received();
        let polled = fr.poll(&mut sock);
        let mut st = shared.lock();
        let now = Instant::now();
        match polled {
            Ok(Polled::Frame(f)) => {
                if let Err(e) = st.session.handle(id, f, now) {
                    shared.fail(&mut st, e.to_string());
                    return;
                }
                note_recovered(&mut st);
                shared.cv.notify_all();
            }
            Ok(Polled::Pending) => {
                if fr.received() != before {
                    st.session.path_alive(id, now);
                }
            }
            Ok(Polled::Eof) => {
                drop(st);
                return path_done(shared, id, Some("closed by the peer".into()));
            }
            Err(e) => {
                drop(st);
                return path_done(shared, id, Some(e.to_string()));
            }
        }
    }
    path_done(shared, id, None);
}

fn write_path(shared: &Arc<Shared>, id: PathId, sock: TcpStream) {
    write_loop(shared, id, sock);
    let mut st = shared.lock();
    st.writers = st.writers.saturating_sub(1);
    shared.cv.notify_all();
}

fn write_loop(shared: &Arc<Shared>, id: PathId, mut sock: TcpStream) {
    let mut out = Vec::with_capacity(WRITE_CHUNK + 64 * 1024);
    loop {
        out.clear();
        let mut st = shared.lock();
        loop {
            if st.closed {
                return;
            }
            let now = Instant::now();
            liveness::handle_timeout(shared, &mut st, now);
            match st.session.poll_transmit(id, now, &mut out, WRITE_CHUNK) {
                Transmit::Some => break,
                Transmit::Done => return,
                Transmit::Idle if st.closing => return,
                Transmit::Idle => {
                    let until = st
                        .session
                        .poll_timeout()
                        .map(|t| t.saturating_duration_since(now));
                    st = shared.wait(st, until.unwrap_or(TICK).min(TICK));
                }
            }
        }
        drop(st);
        if let Err(e) = sock.write_all(&out) {
            return path_done(shared, id, Some(format!("writing: {e}")));
        }
    }
}

/// One end of a switching stream: blocking send and receive, switch, stats.
///
/// One thread may send while another receives; `switch` may be called from either.
pub struct Conn {
    shared: Arc<Shared>,
}

fn random_id() -> SessionId {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No OS randomness: fall back to time and address, still unique per process.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        b = (t ^ (&b as *const _ as u128)).to_be_bytes();
    }
    SessionId(b)
}

impl Conn {
    /// Connects to the server's address of `family` and completes the HELLO exchange.
    ///
    /// # Errors
    /// No address of that family, the dial or the handshake failed or timed out.
    pub fn connect(targets: &Targets, family: Family, opts: Options) -> Result<Self, Error> {
        let addr = targets.get(family)?;
        let sock = TcpStream::connect_timeout(&addr, opts.connect_timeout)
            .map_err(io_err("connecting"))?;
        let now = Instant::now();
        let mut session = Session::client(random_id(), opts.session.clone(), now);
        let id = session.open_path(family, now);
        let deadline = now + opts.connect_timeout;
        let shared = Arc::new(Shared {
            st: Mutex::new(State::new(session)),
            cv: Condvar::new(),
            timer_cv: Condvar::new(),
            opts,
            targets: targets.clone(),
        });
        let mut st = shared.lock();
        spawn_path(&shared, &mut st, id, sock, FrameReader::new());
        liveness::spawn_timer(&shared);
        while !st.session.is_established() {
            if let Some(f) = &st.failure {
                return Err(Error::Failed(f.clone()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                shut_all(&mut st);
                return Err(Error::TimedOut("the HELLO exchange"));
            }
            st = shared.wait(st, left);
        }
        drop(st);
        Ok(Self { shared })
    }

    fn check(&self, st: &State) -> Result<(), Error> {
        match (&st.failure, st.closed) {
            (Some(f), _) => Err(Error::Failed(f.clone())),
            (None, true) => Err(Error::Closed),
            _ => Ok(()),
        }
    }

    /// Hands bytes to the stream; blocks until some fit; returns how many were taken.
    ///
    /// # Errors
    /// The session failed, was closed, or no room came free within the I/O timeout.
    pub fn send(&self, data: &[u8]) -> Result<usize, Error> {
        self.send_inner(data, true)
    }

    /// Hands bytes to the stream if there is room now.
    ///
    /// # Errors
    /// [`Error::WouldBlock`] when the replay buffer is full; otherwise as [`Conn::send`].
    pub fn try_send(&self, data: &[u8]) -> Result<usize, Error> {
        self.send_inner(data, false)
    }

    fn send_inner(&self, data: &[u8], block: bool) -> Result<usize, Error> {
        if data.is_empty() {
            return Ok(0);
        }
        let deadline = Instant::now() + self.shared.opts.io_timeout;
        let mut st = self.shared.lock();
        loop {
            self.check(&st)?;
            let n = st.session.write(data);
            if n > 0 {
                st.sync_ready();
                self.shared.cv.notify_all();
                return Ok(n);
            }
            if !block {
                st.sync_ready();
                return Err(Error::WouldBlock("send"));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::TimedOut("send (the peer confirms nothing)"));
            }
            st = self.shared.wait(st, left);
        }
    }

    /// Sends all of `data`.
    ///
    /// # Errors
    /// As [`Conn::send`].
    pub fn send_all(&self, data: &[u8]) -> Result<(), Error> {
        send_all_with(data, |d| self.send(d))
    }

    /// Receives into `buf`; blocks until bytes arrive; 0 means the peer finished its stream.
    ///
    /// # Errors
    /// The session failed or nothing arrived within the I/O timeout.
    pub fn recv(&self, buf: &mut [u8]) -> Result<usize, Error> {
        self.recv_inner(buf, true)
    }

    /// Receives what has arrived, without waiting; 0 means the peer finished its stream.
    ///
    /// # Errors
    /// [`Error::WouldBlock`] when nothing is there yet; otherwise as [`Conn::recv`].
    pub fn try_recv(&self, buf: &mut [u8]) -> Result<usize, Error> {
        self.recv_inner(buf, false)
    }

    fn recv_inner(&self, buf: &mut [u8], block: bool) -> Result<usize, Error> {
        let deadline = Instant::now() + self.shared.opts.io_timeout;
        let mut st = self.shared.lock();
        loop {
            let n = st.session.read(buf);
            if n > 0 {
                st.sync_ready();
                self.shared.cv.notify_all();
                return Ok(n);
            }
            if st.session.peer_finished() || buf.is_empty() {
                return Ok(0);
            }
            self.check(&st)?;
            if !block {
                st.sync_ready();
                return Err(Error::WouldBlock("receive"));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::TimedOut("receive"));
            }
            st = self.shared.wait(st, left);
        }
    }

    /// Fills `buf` completely.
    ///
    /// # Errors
    /// As [`Conn::recv`], or the stream ended first.
    pub fn recv_exact(&self, buf: &mut [u8]) -> Result<(), Error> {
        recv_exact_with(buf, |b| self.recv(b))
    }

    /// Moves the stream to `family`, make-before-break: dials, joins, and returns once this
    /// end sends on the new path (the record's later fields fill in as data flows).
    ///
    /// # Errors
    /// Not the connecting end, no address of that family, the dial or join failed.
    pub fn switch(&self, family: Family) -> Result<SwitchRecord, Error> {
        let requested = Instant::now();
        {
            let mut st = self.shared.lock();
            self.check(&st)?;
            if st.session.role() != Role::Client {
                return Err(Error::NotClient);
            }
            st.session.request_switch(requested);
        }
        let addr = self.shared.targets.get(family)?;
        let timeout = self.shared.opts.connect_timeout;
        let sock = TcpStream::connect_timeout(&addr, timeout)
            .map_err(io_err("connecting the new path"))?;
        let mut st = self.shared.lock();
        let id = st.session.open_path(family, Instant::now());
        spawn_path(&self.shared, &mut st, id, sock, FrameReader::new());
        let deadline = requested + timeout;
        while st.session.active_path() != Some(id) {
            self.check(&st)?;
            if !st.session.paths().any(|p| p == id) {
                return Err(Error::Failed("the new path closed before the join".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                st.session.path_failed(id);
                return Err(Error::TimedOut("the join"));
            }
            st = self.shared.wait(st, left);
        }
        let rec = st.session.stats().switches.last().cloned();
        rec.ok_or(Error::Failed("no switch record".into()))
    }

    /// Ends this end's stream; the peer's `recv` returns 0 after the last byte.
    ///
    /// # Errors
    /// The session failed.
    pub fn finish(&self) -> Result<(), Error> {
        let mut st = self.shared.lock();
        self.check(&st)?;
        st.session.finish();
        self.shared.cv.notify_all();
        Ok(())
    }

    /// Finishes, waits until the peer has confirmed every byte and ended its own stream,
    /// lets the last confirmation go out, then closes all paths. Bytes of the peer's stream
    /// not yet read are dropped.
    ///
    /// # Errors
    /// The peer did not confirm or finish within the I/O timeout (the paths close anyway).
    pub fn close(&self) -> Result<(), Error> {
        let deadline = Instant::now() + self.shared.opts.io_timeout;
        let mut st = self.shared.lock();
        st.session.finish();
        self.shared.cv.notify_all();
        let result = loop {
            if st.session.all_acked() && st.session.peer_fin_confirmed() {
                break Ok(());
            }
            if let Err(e) = self.check(&st) {
                break Err(e);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break Err(Error::TimedOut(
                    "close (waiting for the peer's confirmation)",
                ));
            }
            st = self.shared.wait(st, left.min(TICK));
        };
        st.closing = true;
        self.shared.cv.notify_all();
        let flush = Instant::now() + TICK * 5;
        while st.writers > 0 && Instant::now() < flush {
            st = self.shared.wait(st, TICK);
        }
        shut_all(&mut st);
        self.shared.cv.notify_all();
        result
    }

    /// A descriptor to poll (level-triggered) before the non-blocking calls: POLLIN while
    /// [`Conn::try_recv`] would not return [`Error::WouldBlock`] (bytes are buffered, the
    /// peer's stream ended, or the session failed or closed), POLLOUT while [`Conn::try_send`]
    /// would not (the replay buffer has room, or the session failed or closed). It follows
    /// the state a thread switch after a change, so a call may still say "would block" after
    /// a wake-up (poll again); it does not stay quiet while a call would succeed. Only poll
    /// it: do not read, write or close it. It stays valid as long as this `Conn`.
    ///
    /// # Errors
    /// The socket pair behind it could not be made.
    pub fn poll_fd(&self) -> Result<std::os::fd::RawFd, Error> {
        let mut st = self.shared.lock();
        if st.ready.is_none() {
            st.ready = Some(Readiness::new().map_err(io_err("making the pollable descriptor"))?);
            // The timer thread now has to follow every change.
            self.shared.timer_cv.notify_all();
        }
        st.sync_ready();
        Ok(st.ready.as_ref().map_or(-1, Readiness::fd))
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.shared.lock().session.stats()
    }

    /// The family the stream is sent on now.
    pub fn family(&self) -> Option<Family> {
        self.shared.lock().session.family()
    }
}

/// Dropping a connection without [`Conn::close`] aborts it: bytes not yet confirmed are lost.
impl Drop for Conn {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        shut_all(&mut st);
        self.shared.cv.notify_all();
    }
}

struct Registry {
    sessions: Mutex<HashMap<SessionId, Weak<Shared>>>,
    ready: Mutex<VecDeque<Conn>>,
    cv: Condvar,
    stop: AtomicBool,
    opts: Options,
}

/// Accepts sessions on one or more addresses (typically an IPv4 and an IPv6 one, same port);
/// JOINs of known sessions attach to them here, so keep the listener while its sessions may
/// still switch (dropping it stops accepting; open paths go on).
pub struct Listener {
    reg: Arc<Registry>,
    addrs: Vec<SocketAddr>,
}

impl Listener {
    /// Listens on every address in `addrs` with default options.
    ///
    /// # Errors
    /// A bind failed.
    pub fn bind(addrs: &[SocketAddr]) -> Result<Self, Error> {
        Self::bind_with(addrs, Options::default())
    }

    /// Listens on every address in `addrs` (IPv6 ones IPv6-only, so both can share a port).
    ///
    /// # Errors
    /// A bind failed.
    pub fn bind_with(addrs: &[SocketAddr], opts: Options) -> Result<Self, Error> {
        let reg = Arc::new(Registry {
            sessions: Mutex::new(HashMap::new()),
            ready: Mutex::new(VecDeque::new()),
            cv: Condvar::new(),
            stop: AtomicBool::new(false),
            opts,
        });
        let mut bound = Vec::new();
        for a in addrs {
            let l = listen(*a).map_err(io_err("listening"))?;
            bound.push(l.local_addr().map_err(io_err("listening"))?);
            let r = reg.clone();
            spawn(move || accept_loop(&r, &l));
        }
        Ok(Self { reg, addrs: bound })
    }

    /// The addresses bound (with the ports the system chose for port 0).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.addrs.clone()
    }

    /// Waits for the next new session (HELLO); `None` waits without limit.
    ///
    /// # Errors
    /// The timeout passed.
    pub fn accept(&self, timeout: Option<Duration>) -> Result<Conn, Error> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut q = self.reg.ready.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(c) = q.pop_front() {
                return Ok(c);
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => TICK,
            };
            if left.is_zero() {
                return Err(Error::TimedOut("accept"));
            }
            q = match self.reg.cv.wait_timeout(q, left.min(TICK)) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.reg.stop.store(true, Ordering::SeqCst);
    }
}

fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_address(true)?;
    s.bind(&addr.into())?;
    s.listen(128)?;
    let l: TcpListener = s.into();
    l.set_nonblocking(true)?;
    Ok(l)
}

fn accept_loop(reg: &Arc<Registry>, l: &TcpListener) {
    while !reg.stop.load(Ordering::SeqCst) {
        match l.accept() {
            Ok((sock, peer)) => {
                let r = reg.clone();
                spawn(move || {
                    let _ = handshake(&r, sock, Family::of(&peer));
                });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_readable(l, TICK),
            Err(_) => thread::sleep(TICK),
        }
    }
}

/// Waits until `l` has a connection to accept, or `d` passes.
fn wait_readable(l: &TcpListener, d: Duration) {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd {
        fd: l.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut p, 1, d.as_millis() as libc::c_int) };
}

/// Reads the first frame of an accepted connection: HELLO starts a session, JOIN adds a path.
fn handshake(reg: &Registry, mut sock: TcpStream, family: Family) -> Result<(), Error> {
    sock.set_nonblocking(false).map_err(io_err("accepting"))?;
    sock.set_read_timeout(Some(TICK))
        .map_err(io_err("accepting"))?;
    let deadline = Instant::now() + reg.opts.connect_timeout;
    let mut fr = FrameReader::new();
    let (hello, session, next) = loop {
        if Instant::now() >= deadline {
            return Err(Error::TimedOut("the first frame"));
        }
        match fr
            .poll(&mut sock)
            .map_err(|e| Error::Failed(e.to_string()))?
        {
            Polled::Frame(Frame::Hello { version, session }) => break (Some(version), session, 0),
            Polled::Frame(Frame::Join { session, next }) => break (None, session, next),
            Polled::Frame(_) => return Err(Error::Failed("neither HELLO nor JOIN".into())),
            Polled::Pending => {}
            Polled::Eof => return Err(Error::Closed),
        }
    };
    let now = Instant::now();
    if let Some(version) = hello {
        let mut s = Session::server(session, reg.opts.session.clone(), now);
        let accepted = s.accept_hello(family, version, now);
        let shared = Arc::new(Shared {
            st: Mutex::new(State::new(s)),
            cv: Condvar::new(),
            timer_cv: Condvar::new(),
            opts: reg.opts.clone(),
            targets: Targets::default(),
        });
        let mut st = shared.lock();
        let id = accepted.unwrap_or(PathId(0)); // a REJECT is queued on it either way
        spawn_path(&shared, &mut st, id, sock, fr);
        liveness::spawn_timer(&shared);
        drop(st);
        if let Ok(mut m) = reg.sessions.lock() {
            m.retain(|_, w| w.strong_count() > 0);
            m.insert(session, Arc::downgrade(&shared));
        }
        let conn = Conn { shared };
        if let Ok(mut q) = reg.ready.lock() {
            q.push_back(conn);
        }
        reg.cv.notify_all();
        return Ok(());
    }
    let shared = reg
        .sessions
        .lock()
        .ok()
        .and_then(|m| m.get(&session).and_then(Weak::upgrade));
    let Some(shared) = shared else {
        let mut out = Vec::new();
        Frame::Reject {
            reason: RejectReason::UnknownSession,
        }
        .emit(&mut out);
        let _ = sock.write_all(&out);
        return Err(Error::Failed("JOIN for an unknown session".into()));
    };
    let mut st = shared.lock();
    match st.session.accept_join(family, next, now) {
        Ok(id) => {
            spawn_path(&shared, &mut st, id, sock, fr);
            note_recovered(&mut st);
        }
        Err(e) => shared.fail(&mut st, e.to_string()),
    }
    shared.cv.notify_all();
    Ok(())
}
