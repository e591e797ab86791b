//! The one way to wait on a control session: feed the peer's messages into the session until
//! it has an event, sending whatever the session queues in reply, and give up at a deadline
//! or, when the caller allows it, at Ctrl-C ([`wait`]).
//!
//! Every sonde client (throughput, profile, coded, capacity) waits through [`next_event`],
//! and the servers' sessions (sonde's and iperf3's) through [`wait`] with their own
//! [`ControlSide`], so each wait has a timeout and each interruptible wait ends within one
//! read of Ctrl-C.

use crate::control_conn::ControlConn;
use crate::error::RunError;
use sonde_proto::session::{ClientEvent, ClientSession};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one read of the control connection blocks before the flags are checked again.
const SLICE: Duration = Duration::from_millis(50);

/// One end of a control session as [`wait`] drives it: how it reads the peer, what event it
/// has, and what it tells the peer when the wait ends without one.
pub trait ControlSide {
    type Event;
    /// The session's next event, if it has one (a client first sends what it queued).
    fn ready_event(&mut self) -> Result<Option<Self::Event>, RunError>;
    /// One bounded read of what the peer sent, into the session.
    fn read_peer(&mut self) -> Result<(), RunError>;
    /// Ctrl-C ended the wait: tells the peer, when this end does.
    fn tell_interrupted(&mut self) {}
    /// The wait for `what` timed out: tells the peer, when this end does.
    fn tell_timed_out(&mut self, _what: &'static str) {}
}

/// The next event of `side`, waiting at most `timeout` (then [`RunError::Timeout`] naming
/// `what`); with `interrupt`, Ctrl-C ends the wait with [`RunError::Interrupted`].
pub fn wait<S: ControlSide>(
    side: &mut S,
    what: &'static str,
    timeout: Duration,
    interrupt: Option<&AtomicBool>,
) -> Result<S::Event, RunError> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(ev) = side.ready_event()? {
            return Ok(ev);
        }
        if interrupt.is_some_and(|i| i.load(Ordering::Relaxed)) {
            side.tell_interrupted();
            return Err(RunError::Interrupted);
        }
        if Instant::now() >= deadline {
            side.tell_timed_out(what);
            return Err(RunError::Timeout(what));
        }
        side.read_peer()?;
    }
}

/// A sonde client's side: its queued messages go out before each look at its events.
struct Client<'a> {
    conn: &'a mut ControlConn,
    s: &'a mut ClientSession,
}

impl ControlSide for Client<'_> {
    type Event = ClientEvent;

    fn ready_event(&mut self) -> Result<Option<ClientEvent>, RunError> {
        flush(self.conn, self.s)?;
        Ok(self.s.poll_event())
    }

    fn read_peer(&mut self) -> Result<(), RunError> {
        if let Some(m) = self.conn.recv(SLICE)? {
            self.s
                .handle(m)
                .map_err(|e| RunError::Protocol(e.to_string()))?;
        }
        Ok(())
    }
}

/// The next event of a sonde client's session `s` ([`wait`]).
pub fn next_event(
    conn: &mut ControlConn,
    s: &mut ClientSession,
    what: &'static str,
    timeout: Duration,
    interrupt: Option<&AtomicBool>,
) -> Result<ClientEvent, RunError> {
    wait(&mut Client { conn, s }, what, timeout, interrupt)
}

/// Sends what the session has queued.
pub fn flush(conn: &mut ControlConn, s: &mut ClientSession) -> Result<(), RunError> {
    while let Some(m) = s.poll_transmit() {
        conn.send(&m)?;
    }
    Ok(())
}
