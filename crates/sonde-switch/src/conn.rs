//! The framed backend over TCP: drives a [`Session`] with one reader and one writer thread
//! per path, and gives the application a blocking, socket-like [`Conn`].
//!
//! Threads, not an event loop: each path's reader blocks in `read` (with a short timeout so
//! it notices a closed session), each writer blocks in `write`; the session sits behind one
//! mutex and a condition variable wakes whoever waits for room, data or a path change. Every
//! wait ends: reads and writes on the application side fail after [`Options::io_timeout`].
//! The threads themselves are `paths`'s; this module starts them and is what the
//! application holds.
//! Rust's standard library writes with `MSG_NOSIGNAL`, so a closed peer never raises SIGPIPE,
//! and the library's threads block every asynchronous signal, so an application's handlers
//! (a C program switching on SIGUSR1, say) run in the application's own threads.
//!
//! When the path carrying the stream fails (a socket error or the peer's close), the client
//! dials again, the other family first, and JOINs: break-before-make. The server keeps the
//! session and waits for that JOIN. Both give up after [`Options::recovery_timeout`].

pub use crate::error::Error;
use crate::framer::{FrameReader, Polled};
pub use crate::options::{Options, Targets};
use crate::path::PathId;
use crate::paths::{note_recovered, shut_all, spawn, spawn_path, spawn_timer, Shared, State, TICK};
use crate::ready::Readiness;
use crate::session::{Role, Session};
use crate::stats::{Family, Stats, SwitchRecord};
use crate::wire::{Frame, RejectReason, SessionId};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

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
        spawn_timer(&shared);
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
        spawn_timer(&shared);
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
