//! The threads behind a framed [`Conn`](crate::Conn): one reader and one writer per path over
//! the [`Session`] they share, the recovery of a failed path, and the timers that notice a
//! path failing silently.
//!
//! Why one module: a path's writer runs the session's timers, a timer that declares the path
//! dead starts the recovery, and the recovery opens a new path with its own writer. That loop
//! is the design (every way a path can fail ends in the same break-before-make), so its steps
//! live together here, below the application-facing [`Conn`](crate::Conn) and
//! [`Listener`](crate::Listener) that start it.
//!
//! Noticing a path that fails silently: packets dropped without an error or a close (a route
//! withdrawn, a firewall rule, a dead middlebox) leave a TCP socket open and blocked for
//! minutes. Two guards, both ending in the same break-before-make recovery as a socket error:
//! the session's heartbeat (a PING after a quiet spell, the path declared failed when nothing
//! arrived for [`Config::dead_after`](crate::session::Config::dead_after)), driven here by a
//! timer thread per session because the path's own writer may be stuck in a full socket;
//! and TCP_USER_TIMEOUT on every path's socket, so data the kernel cannot get acknowledged
//! fails the socket.

use crate::framer::{FrameReader, Polled};
use crate::options::{Options, Targets};
use crate::path::PathId;
use crate::ready::Readiness;
use crate::session::{Role, Session, Transmit};
use crate::stats::Family;
use std::collections::HashMap;
use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// How often blocked reader and accept threads look whether they should stop.
pub(crate) const TICK: Duration = Duration::from_millis(100);
/// Bytes a writer takes from the session per write call. Each take is a lock, a copy and a
/// wake-up of whoever waits for room; at 256 KiB the library ran at 0.90x a plain stream on
/// loopback, at 512 KiB at 1.01-1.03x (bench/RESULTS.md).
const WRITE_CHUNK: usize = 512 * 1024;
/// Pause between rounds of dialing while recovering a failed path.
const REDIAL: Duration = Duration::from_millis(20);

pub(crate) struct State {
    pub(crate) session: Session,
    pub(crate) failure: Option<String>,
    pub(crate) closed: bool,
    /// Set by close: writers leave once they have nothing more to send.
    pub(crate) closing: bool,
    /// Writer threads running.
    pub(crate) writers: usize,
    pub(crate) sockets: HashMap<PathId, TcpStream>,
    /// Since when the stream has had no path (the one carrying it failed), if it has none.
    pub(crate) orphaned: Option<Instant>,
    /// A recovery thread is dialing.
    pub(crate) redialing: bool,
    /// The pollable descriptor, once the application asked for it.
    pub(crate) ready: Option<Readiness>,
}

impl State {
    pub(crate) fn new(session: Session) -> Self {
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
    pub(crate) fn sync_ready(&mut self) {
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

pub(crate) struct Shared {
    pub(crate) st: Mutex<State>,
    pub(crate) cv: Condvar,
    /// Wakes the timer thread only, so it does not wake at every change while no pollable
    /// descriptor needs to follow them.
    pub(crate) timer_cv: Condvar,
    pub(crate) opts: Options,
    /// Where a recovering client dials (empty on the server).
    pub(crate) targets: Targets,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a thread of ours panicked; the state is still consistent
        // enough to report and close.
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn wait<'a>(&self, g: MutexGuard<'a, State>, d: Duration) -> MutexGuard<'a, State> {
        Self::wait_on(&self.cv, g, d)
    }

    pub(crate) fn wait_on<'a>(
        cv: &Condvar,
        g: MutexGuard<'a, State>,
        d: Duration,
    ) -> MutexGuard<'a, State> {
        match cv.wait_timeout(g, d) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        }
    }

    pub(crate) fn fail(&self, st: &mut State, why: String) {
        if st.failure.is_none() && !st.closed {
            st.failure = Some(why);
        }
        shut_all(st);
        self.cv.notify_all();
    }
}

pub(crate) fn shut_all(st: &mut State) {
    st.closed = true;
    for s in st.sockets.values() {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
}

/// Starts a library thread with every asynchronous signal blocked (see the module docs).
pub(crate) fn spawn(f: impl FnOnce() + Send + 'static) {
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
pub(crate) fn spawn_path(
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
    set_user_timeout(&sock, shared.opts.user_timeout);
    let _ = sock.set_read_timeout(Some(TICK));
    let _ = sock.set_write_timeout(Some(shared.opts.io_timeout));
    st.sockets.insert(id, sock);
    st.writers += 1;
    let s1 = shared.clone();
    let s2 = shared.clone();
    spawn(move || read_path(&s1, id, r, reader));
    spawn(move || write_path(&s2, id, w));
}

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
pub(crate) fn note_recovered(st: &mut State) {
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
            handle_timeout(shared, &mut st, now);
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

/// Runs the session's timers at `now`; closes the sockets of paths the heartbeat declared
/// failed and starts their recovery.
pub(crate) fn handle_timeout(shared: &Arc<Shared>, st: &mut State, now: Instant) {
    let family = st.session.family();
    let dead = st.session.handle_timeout(now);
    if dead.is_empty() {
        return;
    }
    for id in dead {
        if let Some(s) = st.sockets.remove(&id) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
    while st.session.poll_event().is_some() {}
    if let Some(family) = family {
        let quiet = st.session.config().dead_after;
        orphaned(
            shared,
            st,
            family,
            format!(
                "nothing arrived on the {} path for {} ms",
                family.name(),
                quiet.as_millis()
            ),
        );
    }
    shared.cv.notify_all();
}

/// Starts the thread that runs the session's timers until it closes (a PING is due or the
/// heartbeat deadline passes even while every writer is blocked) and keeps the pollable
/// descriptor, once there is one, in step with the session (it then wakes on every change).
pub(crate) fn spawn_timer(shared: &Arc<Shared>) {
    let shared = shared.clone();
    spawn(move || {
        let mut st = shared.lock();
        while !st.closed {
            // Every state change notifies; this thread mirrors it on the pollable descriptor.
            st.sync_ready();
            let pings = st.session.pings_sent();
            handle_timeout(&shared, &mut st, Instant::now());
            if st.session.pings_sent() != pings {
                shared.cv.notify_all(); // the PING's writer may be idle
            }
            let until = st
                .session
                .poll_timeout()
                .map(|t| t.saturating_duration_since(Instant::now()));
            let d = until.unwrap_or(TICK).clamp(Duration::from_millis(1), TICK);
            // Every change notifies `cv`; only the pollable descriptor needs to see them all.
            let cv = if st.ready.is_some() {
                &shared.cv
            } else {
                &shared.timer_cv
            };
            st = Shared::wait_on(cv, st, d);
        }
        st.sync_ready();
    });
}

/// Sets TCP_USER_TIMEOUT on `sock` (best effort: a system without it keeps its default).
pub(crate) fn set_user_timeout(sock: &TcpStream, timeout: Option<Duration>) {
    if timeout.is_some() {
        let _ = socket2::SockRef::from(sock).set_tcp_user_timeout(timeout);
    }
}
