//! The client's one way to wait on its control session: feed the server's messages into the
//! session until it has an event, sending whatever the session queues in reply, and give up
//! at a deadline or, when the caller allows it, at Ctrl-C.
//!
//! Every client (throughput, profile, coded, capacity) waits through this, so each wait has a
//! timeout and each interruptible wait ends within one poll slice of Ctrl-C.

use crate::control_conn::ControlConn;
use crate::error::RunError;
use sonde_proto::session::{ClientEvent, ClientSession};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one read of the control connection blocks before the flags are checked again.
const SLICE: Duration = Duration::from_millis(50);

/// The next event of `s`, waiting at most `timeout` (then [`RunError::Timeout`] naming
/// `what`); with `interrupt`, Ctrl-C ends the wait with [`RunError::Interrupted`].
pub(crate) fn next_event(
    conn: &mut ControlConn,
    s: &mut ClientSession,
    what: &'static str,
    timeout: Duration,
    interrupt: Option<&AtomicBool>,
) -> Result<ClientEvent, RunError> {
    let deadline = Instant::now() + timeout;
    loop {
        flush(conn, s)?;
        if let Some(ev) = s.poll_event() {
            return Ok(ev);
        }
        if interrupt.is_some_and(|i| i.load(Ordering::Relaxed)) {
            return Err(RunError::Interrupted);
        }
        if Instant::now() >= deadline {
            return Err(RunError::Timeout(what));
        }
        if let Some(m) = conn.recv(SLICE)? {
            s.handle(m).map_err(|e| RunError::Protocol(e.to_string()))?;
        }
    }
}

/// Sends what the session has queued.
pub(crate) fn flush(conn: &mut ControlConn, s: &mut ClientSession) -> Result<(), RunError> {
    while let Some(m) = s.poll_transmit() {
        conn.send(&m)?;
    }
    Ok(())
}
