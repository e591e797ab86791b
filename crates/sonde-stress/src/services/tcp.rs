//! The TCP side of the services: a slab of connections, each driven on readiness.
//!
//! mio's readiness is edge-triggered, so every drive runs until the socket would block (or the
//! echo buffer is full and its peer is not reading: then the next writable edge resumes it).

use super::service::{Service, ServicesStats, CONN_BASE};
use crate::chargen::Pattern;
use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Registry, Token};
use std::io::{ErrorKind, Read, Write};

/// Largest chargen write and discard read.
const CHUNK: usize = 64 * 1024;

struct Conn {
    stream: TcpStream,
    service: Service,
    /// Echo only: bytes read and not yet written back, `buf[start..end]`.
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Chargen only: offset in the pattern.
    sent: u64,
    read_closed: bool,
}

/// What a drive decided.
pub(super) enum Next {
    /// Wait for the next readiness edge.
    Keep,
    /// Its turn is over but it could do more: drive it again without waiting.
    Again,
    Close,
}

/// Reads or writes per turn, so that one fast peer cannot starve the others (this is the
/// server whose fairness is measured against small devices).
const TURN: usize = 16;

/// The open connections of all services.
pub(super) struct Conns {
    slots: Vec<Option<Conn>>,
    free: Vec<usize>,
    open: usize,
    max: usize,
    echo_buffer: usize,
    scratch: Vec<u8>,
    pattern: Pattern,
}

impl Conns {
    pub(super) fn new(max: usize, echo_buffer: usize) -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            open: 0,
            max,
            echo_buffer: echo_buffer.max(1),
            scratch: vec![0; CHUNK],
            pattern: Pattern::new(CHUNK),
        }
    }

    pub(super) fn open(&self) -> usize {
        self.open
    }

    /// With no connection open, drops the slab's grown tables, and the allocator hands unused
    /// heap back to the OS: memory returns to its idle level after a burst.
    pub(super) fn release_if_idle(&mut self) {
        if self.open == 0 {
            self.slots = Vec::new();
            self.free = Vec::new();
            sonde_platform::memory::release_free_memory();
        }
    }

    /// Accepts until the backlog is empty; beyond the limit, refuses with a reset.
    pub(super) fn accept_all(
        &mut self,
        service: Service,
        l: &TcpListener,
        registry: &Registry,
        stats: &mut ServicesStats,
    ) {
        loop {
            match l.accept() {
                Ok((stream, _)) => {
                    if self.open >= self.max {
                        stats.refused_over_limit += 1;
                        crate::os::close_with_reset(stream);
                        continue;
                    }
                    stats.accepted += 1;
                    self.insert(service, stream, registry, stats);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // WouldBlock, or out of descriptors: the next connection's edge retries.
                Err(_) => return,
            }
        }
    }

    fn insert(
        &mut self,
        service: Service,
        mut stream: TcpStream,
        registry: &Registry,
        stats: &mut ServicesStats,
    ) {
        let idx = self.free.pop().unwrap_or(self.slots.len());
        let interest = match service {
            Service::Discard => Interest::READABLE,
            Service::Echo | Service::Chargen => Interest::READABLE | Interest::WRITABLE,
        };
        if registry
            .register(&mut stream, Token(CONN_BASE + idx), interest)
            .is_err()
        {
            self.free.push(idx);
            stats.closed += 1;
            return;
        }
        let buf = if service == Service::Echo {
            vec![0; self.echo_buffer].into_boxed_slice()
        } else {
            Box::default()
        };
        let conn = Conn {
            stream,
            service,
            buf,
            start: 0,
            end: 0,
            sent: 0,
            read_closed: false,
        };
        if idx == self.slots.len() {
            self.slots.push(Some(conn));
        } else if let Some(slot) = self.slots.get_mut(idx) {
            *slot = Some(conn);
        }
        self.open += 1;
        stats.open_peak = stats.open_peak.max(self.open);
    }

    /// Runs connection `idx` for one turn; closes it when it is done. True when it could do
    /// more and should be driven again.
    pub(super) fn drive(
        &mut self,
        idx: usize,
        registry: &Registry,
        stats: &mut ServicesStats,
    ) -> bool {
        let Some(Some(c)) = self.slots.get_mut(idx) else {
            return false;
        };
        let next = match c.service {
            Service::Discard => discard(c, &mut self.scratch),
            Service::Chargen => chargen(c, &mut self.scratch, &self.pattern),
            Service::Echo => echo(c),
        };
        if let Next::Close = next {
            if let Some(Some(mut c)) = self.slots.get_mut(idx).map(Option::take) {
                let _ = registry.deregister(&mut c.stream);
            }
            self.free.push(idx);
            self.open = self.open.saturating_sub(1);
            stats.closed += 1;
        }
        matches!(next, Next::Again)
    }
}

/// Reads everything into `scratch`; `Some(Close)` at end of stream or on an error.
/// `None` when the socket would block.
fn drain(stream: &mut TcpStream, scratch: &mut [u8]) -> Option<Next> {
    for _ in 0..TURN {
        match stream.read(scratch) {
            Ok(0) => return Some(Next::Close),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Some(Next::Close),
        }
    }
    Some(Next::Again)
}

/// RFC 863: throw away whatever arrives; close when the peer does.
fn discard(c: &mut Conn, scratch: &mut [u8]) -> Next {
    // Would block: wait for the next edge.
    drain(&mut c.stream, scratch).unwrap_or(Next::Keep)
}

/// RFC 864: send the pattern until the peer closes; what the peer sends is thrown away.
fn chargen(c: &mut Conn, scratch: &mut [u8], pattern: &Pattern) -> Next {
    let reads = drain(&mut c.stream, scratch);
    if let Some(Next::Close) = reads {
        return Next::Close;
    }
    for _ in 0..TURN {
        match c.stream.write(pattern.at(c.sent)) {
            Ok(n) => c.sent += n as u64,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return reads.unwrap_or(Next::Keep),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
    }
    Next::Again
}

/// RFC 862: send back what arrives, holding at most the connection's buffer; close when the
/// peer has closed and everything was sent back.
fn echo(c: &mut Conn) -> Next {
    for _ in 0..TURN {
        let mut progressed = false;
        if c.start == c.end {
            (c.start, c.end) = (0, 0);
        }
        if !c.read_closed {
            if let Some(space) = c.buf.get_mut(c.end..).filter(|s| !s.is_empty()) {
                match c.stream.read(space) {
                    Ok(0) => c.read_closed = true,
                    Ok(n) => {
                        c.end += n;
                        progressed = true;
                    }
                    Err(e) if is_transient(&e) => {}
                    Err(_) => return Next::Close,
                }
            }
        }
        if let Some(data) = c.buf.get(c.start..c.end).filter(|d| !d.is_empty()) {
            match c.stream.write(data) {
                Ok(n) => {
                    c.start += n;
                    progressed = true;
                }
                Err(e) if is_transient(&e) => {}
                Err(_) => return Next::Close,
            }
        }
        if c.end == c.buf.len() && c.start > 0 {
            c.buf.copy_within(c.start..c.end, 0);
            (c.start, c.end) = (0, c.end - c.start);
            progressed = true;
        }
        if c.read_closed && c.start == c.end {
            return Next::Close;
        }
        if !progressed {
            return Next::Keep;
        }
    }
    Next::Again
}

fn is_transient(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted)
}
