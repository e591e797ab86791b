//! One stress connection: its counters, its data moves, and its close.

use super::error::poll_once;
use super::pace::Pacer;
use crate::chargen::Pattern;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Registry, Token};
use sonde_stats::stress::model::{CloseOutcome, ConnTotal, StressMode};
use sonde_stats::stress::slicer::{bps, ConnCounters};
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

/// Reads plus writes per turn, so that one fast connection cannot starve the others.
const TURN: usize = 4;

pub(super) struct Conn {
    stream: TcpStream,
    token: usize,
    sent: u64,
    received: u64,
    /// Still moving data (the data phase), or not yet settled (the close phase).
    open: bool,
    close: Option<CloseOutcome>,
    error: Option<String>,
    /// Echo: bytes that came back different from what was sent.
    pub(super) mismatched: u64,
    /// Bytes read after this end's FIN (not in the rates, which are of the data phase).
    drained: u64,
    /// `-b`: this connection's sending allowance.
    pacer: Option<Pacer>,
    /// The pacer, not the socket, stopped its last write: no event will say when to go on.
    held: bool,
}

impl Conn {
    pub(super) fn new(stream: TcpStream, token: usize) -> Self {
        Self {
            stream,
            token,
            sent: 0,
            received: 0,
            open: true,
            close: None,
            error: None,
            mismatched: 0,
            drained: 0,
            pacer: None,
            held: false,
        }
    }

    /// Paces its writes (`-b`, per connection) from now on.
    pub(super) fn pace(&mut self, pacer: Pacer) {
        self.pacer = Some(pacer);
    }

    /// Seconds from `now` until its pacer lets it write again, when the pacer holds it back.
    pub(super) fn held_for(&self, now: f64, block: usize) -> Option<f64> {
        let p = self.pacer.as_ref().filter(|_| self.held && self.open)?;
        Some(p.wait(now, block as u64))
    }

    /// Whether the device still holds this idle connection: not closed (EOF) or reset by it.
    pub(super) fn alive(&self) -> bool {
        let mut b = [0u8; 1];
        match self.stream.peek(&mut b) {
            Ok(0) => false,
            Ok(_) => true,
            Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
        }
    }

    /// Stops its events until the close phase registers it again (held idle by --overload).
    pub(super) fn deregister(&mut self, registry: &Registry) {
        let _ = registry.deregister(&mut self.stream);
    }

    /// Registers for the data phase; a connection that cannot be is failed.
    pub(super) fn start_data(&mut self, registry: &Registry, mode: StressMode) {
        let interest = if mode.sends() {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        if let Err(e) = registry.reregister(&mut self.stream, Token(self.token), interest) {
            self.fail(&e);
        }
    }

    pub(super) fn counters(&self) -> ConnCounters {
        ConnCounters {
            sent: self.sent,
            received: self.received,
            open: self.open,
        }
    }

    fn fail(&mut self, e: &std::io::Error) {
        self.open = false;
        self.close = Some(CloseOutcome::FailedDuringRun);
        self.error = Some(if e.kind() == ErrorKind::UnexpectedEof {
            "closed by the device during the run".into()
        } else {
            e.to_string()
        });
    }

    /// Moves data for one turn (`now`: seconds since the data began, for the pacer); true
    /// when it could do more at once.
    pub(super) fn drive(
        &mut self,
        pattern: &Pattern,
        scratch: &mut [u8],
        mode: StressMode,
        echo_window: u64,
        now: f64,
    ) -> bool {
        if !self.open {
            return false;
        }
        self.held = false;
        for _ in 0..TURN {
            let mut progressed = false;
            // Read in every mode: a discard server sends nothing, but its FIN or RST shows here.
            match self.stream.read(scratch) {
                Ok(0) => {
                    self.fail(&ErrorKind::UnexpectedEof.into());
                    return false;
                }
                Ok(n) => {
                    let got = scratch.get(..n).unwrap_or(&[]);
                    if mode == StressMode::Echo {
                        self.mismatched += pattern.mismatches(self.received, got);
                    }
                    self.received += n as u64;
                    progressed = true;
                }
                Err(e) if transient(&e) => {}
                Err(e) => {
                    self.fail(&e);
                    return false;
                }
            }
            let room = match mode {
                StressMode::Echo => {
                    echo_window.saturating_sub(self.sent.saturating_sub(self.received))
                }
                _ => u64::MAX,
            };
            let next = pattern.at(self.sent);
            let room = if mode.sends() {
                self.paced(now, room.min(next.len() as u64))
            } else {
                0
            };
            if mode.sends() && room > 0 {
                let len = next.len().min(usize::try_from(room).unwrap_or(usize::MAX));
                match self.stream.write(next.get(..len).unwrap_or(next)) {
                    Ok(n) => {
                        self.sent += n as u64;
                        if let Some(p) = self.pacer.as_mut() {
                            p.spend(n as u64);
                        }
                        progressed = true;
                    }
                    Err(e) if transient(&e) => {}
                    Err(e) => {
                        self.fail(&e);
                        return false;
                    }
                }
            }
            if !progressed {
                return false;
            }
        }
        true
    }

    /// How much of `want` bytes the pacer (if any) lets it write at `now`; held back when none.
    fn paced(&mut self, now: f64, want: u64) -> u64 {
        let Some(p) = self.pacer.as_mut() else {
            return want;
        };
        let n = p.allowance(now, want);
        self.held = n == 0 && want > 0;
        n
    }

    /// Echo: bytes sent that never came back on a connection that closed cleanly.
    pub(super) fn unreturned(&self) -> u64 {
        if self.close != Some(CloseOutcome::Clean) {
            return 0;
        }
        self.sent.saturating_sub(self.received + self.drained)
    }

    /// Reads what is left after our FIN (`echo`: checked against the pattern, as in the data
    /// phase); settles on the device's FIN or a reset. True when it could do more at once.
    fn drain_close(&mut self, scratch: &mut [u8], echo: Option<&Pattern>) -> bool {
        for _ in 0..TURN {
            match self.stream.read(scratch) {
                Ok(0) => {
                    self.settle(CloseOutcome::Clean, None);
                    return false;
                }
                Ok(n) => {
                    if let Some(p) = echo {
                        let got = scratch.get(..n).unwrap_or(&[]);
                        self.mismatched += p.mismatches(self.received + self.drained, got);
                    }
                    self.drained += n as u64;
                }
                Err(e) if transient(&e) => return false,
                Err(e) => {
                    self.settle(CloseOutcome::Reset, Some(e.to_string()));
                    return false;
                }
            }
        }
        true
    }

    fn settle(&mut self, how: CloseOutcome, error: Option<String>) {
        self.open = false;
        self.close = Some(how);
        self.error = error;
    }

    pub(super) fn total(&self, id: u32, secs: f64) -> ConnTotal {
        ConnTotal {
            id,
            sent_bytes: self.sent,
            received_bytes: self.received,
            sent_bps: bps(self.sent, secs),
            received_bps: bps(self.received, secs),
            close: self.close.unwrap_or(CloseOutcome::Timeout),
            error: self.error.clone(),
            drained_bytes: self.drained,
            zero_share: None,
        }
    }
}

/// Registers every open connection for reading and sends our FIN; the indices of those it
/// could (one that could not is settled as reset).
fn send_fins(conns: &mut [Conn], poll: &Poll) -> Vec<usize> {
    let mut again = Vec::new();
    for (i, c) in conns.iter_mut().enumerate() {
        if !c.open {
            continue;
        }
        // Registered already (data phase), or not any more (held idle by --overload).
        let registered = poll
            .registry()
            .reregister(&mut c.stream, Token(i), Interest::READABLE)
            .or_else(|_| {
                poll.registry()
                    .register(&mut c.stream, Token(i), Interest::READABLE)
            });
        if let Err(e) = registered.and_then(|()| c.stream.shutdown(Shutdown::Write)) {
            c.settle(CloseOutcome::Reset, Some(e.to_string()));
            continue;
        }
        again.push(i);
    }
    again
}

fn transient(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted)
}

/// Sends our FIN on every connection still open and waits for each device's FIN; `echo`: the
/// bytes that come back meanwhile are checked against this pattern. A connection
/// times out after `timeout` without progress: neither data from the device nor a shrinking
/// queue of our unacknowledged bytes (a device working through what was sent before the FIN is
/// not stuck). Twelve times `timeout` bounds the whole phase. Every socket is closed on return.
///
/// A chargen device need not read (RFC 864: it sends until the user closes), so it may never
/// see our FIN: xinetd's built-in chargen keeps sending. In `StressMode::Chargen` a connection
/// still delivering data `timeout` after our FIN is healthy and counts as closed cleanly; the
/// socket's close then ends it (a reset, as for any chargen client that stops reading).
pub(super) fn close_all(
    conns: &mut [Conn],
    mode: StressMode,
    echo: Option<&Pattern>,
    poll: &mut Poll,
    events: &mut Events,
    timeout: Duration,
    scratch: &mut [u8],
) {
    let mut again = send_fins(conns, poll);
    let start = Instant::now();
    // Per connection: when it last made progress, and its unacknowledged bytes then.
    let mut progress: Vec<(Instant, Option<u32>)> = conns
        .iter()
        .map(|c| {
            (
                start,
                sonde_platform::socket_queue::unacked_bytes(&c.stream),
            )
        })
        .collect();
    let hard_end = start + timeout * 12;
    loop {
        let now = Instant::now();
        for (c, p) in conns.iter_mut().zip(progress.iter_mut()) {
            if !c.open {
                continue;
            }
            let q = sonde_platform::socket_queue::unacked_bytes(&c.stream);
            if q != p.1 {
                *p = (now, q);
            } else if now.duration_since(p.0) >= timeout || now >= hard_end {
                c.settle(
                    CloseOutcome::Timeout,
                    Some(format!("no FIN from the device within {timeout:?}")),
                );
            } else if mode == StressMode::Chargen && now.duration_since(start) >= timeout {
                c.settle(CloseOutcome::Clean, None);
            }
        }
        if !conns.iter().any(|c| c.open) {
            break;
        }
        let mut ready = std::mem::take(&mut again);
        let wait = if ready.is_empty() {
            Duration::from_millis(100)
        } else {
            Duration::ZERO
        };
        if poll_once(poll, events, wait).is_err() {
            break;
        }
        ready.extend(events.iter().map(|e| e.token().0));
        ready.sort_unstable();
        ready.dedup();
        for i in ready {
            if let (Some(c), Some(p)) = (conns.get_mut(i).filter(|c| c.open), progress.get_mut(i)) {
                p.0 = Instant::now();
                if c.drain_close(scratch, echo) {
                    again.push(i);
                }
            }
        }
    }
    for c in conns.iter_mut() {
        let _ = poll.registry().deregister(&mut c.stream);
    }
}
