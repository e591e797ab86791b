//! The server's front door: accepting connections and reading what each one is, on one
//! event loop, so that idle or slow peers cost a descriptor and a few bytes each, never a
//! thread, and never a legitimate client its test.
//!
//! A connection leaves the gate, as a blocking `std` socket for its handler's thread, only
//! once it has identified itself (see [`super::pending`]). Until then it waits in a bounded
//! table with a deadline; when the table is full, or the process is out of descriptors, the
//! oldest waiting connection is closed to make room. What the gate closes is logged as a
//! summary at most once a second, so a storm cannot flood the log either.

use super::pending::{Fed, Key, Leaving, Pending, MAX_IDENTIFY_LEN};
use crate::serving::source_limit::SourceLimiter;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use sonde_proto::preamble::Preamble;
use std::io::{ErrorKind, Read};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

const LISTENER: Token = Token(usize::MAX);
/// Events taken per wait.
const EVENTS: usize = 1024;
/// Connections accepted per turn before the waiting ones get theirs.
const ACCEPTS_PER_TURN: usize = 4096;
/// Shortest gap between two summary lines in the log.
const LOG_EVERY: Duration = Duration::from_secs(1);
/// Shortest gap between two "out of descriptors" warnings.
const FD_WARN_EVERY: Duration = Duration::from_secs(10);
/// Identified connections served at once, each on a thread of its own; beyond it a new one
/// is closed as it arrives ([`Gate::turn_away`]). The per-source limit normally refuses a
/// flood long before this; it bounds the threads when the flood comes from many addresses.
pub const MAX_SERVED: usize = 4096;

/// A connection that said what it is, ready for its handler.
pub struct Identified {
    pub stream: std::net::TcpStream,
    pub peer: SocketAddr,
    /// Accept order (iperf3 data streams are ordered by it).
    pub seq: u64,
    pub preamble: Preamble,
    /// What it sent after the preamble (a control connection's first frame).
    pub early: Vec<u8>,
}

/// Why the gate closed connections, counted between two log lines.
#[derive(Default)]
struct Tally {
    timed_out: usize,
    /// Of those timed out, the ones that had sent part of a preamble (slow drip).
    partial: usize,
    silent_close: usize,
    failed: usize,
    evicted: usize,
    out_of_fds: usize,
    /// Closed at once: their address opened more than `--max-conn-rate` allows.
    rate_limited: usize,
    /// Closed after identifying themselves: [`MAX_SERVED`] were being served.
    over_served: usize,
    last_peer: Option<SocketAddr>,
    logged: Option<Instant>,
}

impl Tally {
    fn is_empty(&self) -> bool {
        self.timed_out
            + self.silent_close
            + self.failed
            + self.evicted
            + self.out_of_fds
            + self.rate_limited
            + self.over_served
            == 0
    }

    /// Logs what happened since the last line, at most once per [`LOG_EVERY`].
    fn flush(&mut self, now: Instant, cap: usize, timeout: Duration, log: &dyn Fn(&str)) {
        if self.is_empty() || self.logged.is_some_and(|t| now < t + LOG_EVERY) {
            return;
        }
        let from = self
            .last_peer
            .map(|p| format!(" (the last from {p})"))
            .unwrap_or_default();
        let mut parts = Vec::new();
        if self.timed_out > 0 {
            parts.push(format!(
                "{} sent no complete preamble within {} s ({} of them part of one)",
                self.timed_out,
                timeout.as_secs(),
                self.partial
            ));
        }
        if self.silent_close > 0 {
            parts.push(format!(
                "{} closed before identifying itself",
                self.silent_close
            ));
        }
        if self.failed > 0 {
            parts.push(format!("{} failed while identifying itself", self.failed));
        }
        if self.evicted > 0 {
            parts.push(format!(
                "{} closed as the oldest of {cap} unidentified connections held, to hear newer ones",
                self.evicted
            ));
        }
        if self.out_of_fds > 0 {
            parts.push(format!(
                "{} closed because the server ran out of file descriptors (raise `ulimit -n`)",
                self.out_of_fds
            ));
        }
        if self.rate_limited > 0 {
            parts.push(format!(
                "{} closed at once because their address opened connections faster than --max-conn-rate",
                self.rate_limited
            ));
        }
        if self.over_served > 0 {
            parts.push(format!(
                "{} closed after identifying themselves because {MAX_SERVED} connections were being served already",
                self.over_served
            ));
        }
        log(&format!("connections closed: {}{from}", parts.join("; ")));
        *self = Tally {
            logged: Some(now),
            ..Tally::default()
        };
    }
}

/// The accept and identify loop.
pub struct Gate {
    poll: Poll,
    events: Events,
    listener: TcpListener,
    pending: Pending<TcpStream>,
    timeout: Duration,
    accepted: u64,
    /// The listener may hold connections not yet accepted (an edge was left unfinished).
    backlog: bool,
    tally: Tally,
    /// When running out of descriptors with nothing to close was last logged.
    fds_warned: Option<Instant>,
    /// `--max-conn-rate`: connections accepted per source.
    limiter: Option<SourceLimiter>,
}

impl Gate {
    /// Takes over `listener`, holding at most `cap` unidentified connections for `timeout`.
    ///
    /// # Errors
    /// When the event loop cannot be created or the listener registered.
    pub fn new(
        listener: std::net::TcpListener,
        cap: usize,
        timeout: Duration,
    ) -> std::io::Result<Self> {
        listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        Ok(Self {
            poll,
            events: Events::with_capacity(EVENTS),
            listener,
            pending: Pending::new(cap, timeout),
            timeout,
            accepted: 0,
            backlog: true,
            tally: Tally::default(),
            fds_warned: None,
            limiter: None,
        })
    }

    /// Closes, as soon as they are accepted, connections from an address beyond `limiter`'s
    /// rate (with a reset: they never get a byte).
    pub fn limit_sources(&mut self, limiter: SourceLimiter) {
        self.limiter = Some(limiter);
    }

    /// Connections accepted and not yet identified.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Waits up to `wait` (less when a deadline is due), accepts, reads, expires; returns the
    /// connections that identified themselves.
    ///
    /// # Errors
    /// When waiting for events fails for good.
    pub fn turn(&mut self, wait: Duration, log: &dyn Fn(&str)) -> std::io::Result<Vec<Identified>> {
        let now = Instant::now();
        let mut wait = match self.pending.next_deadline() {
            Some(d) => wait.min(d.saturating_duration_since(now)),
            None => wait,
        };
        if self.backlog {
            wait = wait.min(Duration::from_millis(20));
        }
        match self.poll.poll(&mut self.events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        let mut ready = Vec::new();
        let mut listener_ready = self.backlog;
        for ev in self.events.iter() {
            if ev.token() == LISTENER {
                listener_ready = true;
            } else {
                ready.push(ev.token().0);
            }
        }
        let mut out = Vec::new();
        for key in ready {
            self.read(key, &mut out);
        }
        if listener_ready {
            self.accept(&mut out, log);
        }
        let now = Instant::now();
        for gone in self.pending.expire(now) {
            self.tally.timed_out += 1;
            self.tally.partial += usize::from(gone.sent > 0);
            self.close(gone);
        }
        self.tally.flush(now, self.pending.cap(), self.timeout, log);
        Ok(out)
    }

    /// Closes `a`, which identified itself when [`MAX_SERVED`] connections were being served
    /// already; the next summary line counts it.
    pub fn turn_away(&mut self, a: Identified) {
        self.tally.over_served += 1;
        self.tally.last_peer = Some(a.peer);
    }

    /// Closes every waiting connection (at shutdown).
    pub fn close_all(&mut self) {
        for l in self.pending.drain() {
            self.close(l);
        }
    }

    fn accept(&mut self, out: &mut Vec<Identified>, log: &dyn Fn(&str)) {
        self.backlog = false;
        for _ in 0..ACCEPTS_PER_TURN {
            match self.listener.accept() {
                Ok((stream, peer)) => self.admit(stream, peer, out),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    // Make room by closing the oldest waiting connection, then try again.
                    match self.pending.evict_oldest() {
                        Some(l) => {
                            self.tally.out_of_fds += 1;
                            self.close(l);
                        }
                        None => {
                            let now = Instant::now();
                            if !matches!(self.fds_warned, Some(t) if now < t + FD_WARN_EVERY) {
                                self.fds_warned = Some(now);
                                log(&format!(
                                    "out of file descriptors ({e}) with no unidentified connection left to close: new connections wait in the backlog (raise `ulimit -n`)"
                                ));
                            }
                            self.backlog = true;
                            return;
                        }
                    }
                }
                Err(e) => {
                    log(&format!("accept failed: {e}"));
                    self.backlog = true;
                    return;
                }
            }
        }
        self.backlog = true;
    }

    fn admit(&mut self, stream: TcpStream, peer: SocketAddr, out: &mut Vec<Identified>) {
        if let Some(l) = &mut self.limiter {
            if !l.allow(peer.ip(), Instant::now()) {
                self.tally.rate_limited += 1;
                self.tally.last_peer = Some(peer);
                let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
                return;
            }
        }
        self.accepted += 1;
        let (key, evicted) = self
            .pending
            .insert(stream, peer, self.accepted, Instant::now());
        if let Some(l) = evicted {
            self.tally.evicted += 1;
            self.close(l);
        }
        let registered = match self.pending.conn_mut(key) {
            Some(s) => self
                .poll
                .registry()
                .register(s, Token(key), Interest::READABLE)
                .is_ok(),
            None => false,
        };
        if registered {
            // A client that wrote at once may have its preamble in already.
            self.read(key, out);
        } else if let Some(l) = self.pending.remove(key) {
            self.tally.failed += 1;
            self.close(l);
        }
    }

    /// Reads what `key` still owes until it would block, is identified, or is gone.
    fn read(&mut self, key: Key, out: &mut Vec<Identified>) {
        let mut buf = [0u8; MAX_IDENTIFY_LEN];
        loop {
            let want = self.pending.need(key).min(buf.len());
            let Some(stream) = self.pending.conn_mut(key) else {
                return;
            };
            if want == 0 {
                return;
            }
            let got = match stream.read(&mut buf[..want]) {
                Ok(0) => {
                    self.tally.silent_close += 1;
                    self.drop_key(key);
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.tally.failed += 1;
                    self.drop_key(key);
                    return;
                }
            };
            match self.pending.feed(key, &buf[..got]) {
                Some(Fed::More) => {}
                Some(Fed::Identified(l, preamble)) => {
                    out.extend(self.release(l, preamble));
                    return;
                }
                None => return,
            }
        }
    }

    fn drop_key(&mut self, key: Key) {
        if let Some(l) = self.pending.remove(key) {
            self.close(l);
        }
    }

    fn close(&mut self, mut l: Leaving<TcpStream>) {
        let _ = self.poll.registry().deregister(&mut l.conn);
        self.tally.last_peer = Some(l.peer);
    }

    /// Hands an identified connection over as a blocking `std` socket.
    fn release(&mut self, mut l: Leaving<TcpStream>, preamble: Preamble) -> Option<Identified> {
        let _ = self.poll.registry().deregister(&mut l.conn);
        let stream = std::net::TcpStream::from(OwnedFd::from(l.conn));
        if stream.set_nonblocking(false).is_err() {
            self.tally.failed += 1;
            self.tally.last_peer = Some(l.peer);
            return None;
        }
        Some(Identified {
            stream,
            peer: l.peer,
            seq: l.seq,
            preamble,
            early: l.early,
        })
    }
}
