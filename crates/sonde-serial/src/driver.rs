//! Runs a [`Sender`] or a [`Receiver`] over a [`Tty`]: writes what the state machine has to
//! send, reads what arrives, and sleeps in `poll(2)` only until the state machine's next
//! deadline or a short tick that looks at the Ctrl-C flag. Nothing waits without a timeout.

use crate::receiver::{Event, Receiver};
use crate::sender::{Sender, Status};
use crate::tty::Tty;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a wait wakes to look at the interrupt flag.
const TICK: Duration = Duration::from_millis(50);
/// Unwritten bytes kept at most; past it new frames are dropped (the protocol's timeouts
/// and retries then decide), so a device that never drains cannot grow memory.
const MAX_QUEUE: usize = 256 * 1024;

/// Why a run over the device stopped early.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error("interrupted")]
    Interrupted,
    #[error("{path}: {what} failed: {source}")]
    Io {
        path: String,
        what: &'static str,
        source: io::Error,
    },
    #[error("{0}: the device hung up (its other end closed or it was unplugged)")]
    Hangup(String),
    #[error("the receiving end's callback failed: {0}")]
    Sink(String),
}

/// Bytes waiting to be written, and the device they go to.
struct Port<'a> {
    tty: &'a Tty,
    queue: Vec<u8>,
    buf: Vec<u8>,
}

impl<'a> Port<'a> {
    fn new(tty: &'a Tty) -> Port<'a> {
        Port {
            tty,
            queue: Vec::new(),
            buf: vec![0; 4096],
        }
    }

    fn io(&self, what: &'static str, source: io::Error) -> DriveError {
        if source.raw_os_error() == Some(libc_eio()) {
            return DriveError::Hangup(self.tty.path().display().to_string());
        }
        DriveError::Io {
            path: self.tty.path().display().to_string(),
            what,
            source,
        }
    }

    fn queue(&mut self, bytes: &[u8]) {
        if self.queue.len() + bytes.len() <= MAX_QUEUE {
            self.queue.extend_from_slice(bytes);
        }
    }

    fn flush(&mut self) -> Result<(), DriveError> {
        while !self.queue.is_empty() {
            let n = self
                .tty
                .write(&self.queue)
                .map_err(|e| self.io("write", e))?;
            if n == 0 {
                break;
            }
            self.queue.drain(..n);
        }
        Ok(())
    }

    /// Waits at most `timeout`, then hands every byte read to `input`.
    fn wait_and_read(
        &mut self,
        timeout: Duration,
        mut input: impl FnMut(&[u8]),
    ) -> Result<(), DriveError> {
        let ready = self
            .tty
            .wait(!self.queue.is_empty(), timeout.min(TICK))
            .map_err(|e| self.io("poll", e))?;
        if ready.readable || ready.hangup {
            loop {
                let n = self
                    .tty
                    .read(&mut self.buf)
                    .map_err(|e| self.io("read", e))?;
                if n == 0 {
                    break;
                }
                input(&self.buf[..n]);
            }
        }
        if ready.hangup && !ready.readable {
            return Err(DriveError::Hangup(self.tty.path().display().to_string()));
        }
        Ok(())
    }
}

fn libc_eio() -> i32 {
    nix::errno::Errno::EIO as i32
}

/// Runs `sender` to its end over `tty`; `progress` sees it after every step.
///
/// # Errors
/// [`DriveError::Interrupted`] when `interrupt` is raised, or the device's failure. A transfer
/// that fails by the protocol (no answer) ends `Ok` with the sender's status saying so.
pub fn send(
    tty: &Tty,
    sender: &mut Sender,
    interrupt: &AtomicBool,
    mut progress: impl FnMut(&Sender),
) -> Result<(), DriveError> {
    let mut port = Port::new(tty);
    loop {
        let now = Instant::now();
        sender.handle_timeout(now);
        if *sender.status() != Status::Running {
            return Ok(());
        }
        if interrupt.load(Ordering::SeqCst) {
            return Err(DriveError::Interrupted);
        }
        while let Some(bytes) = sender.poll_transmit(now) {
            port.queue(&bytes);
        }
        port.flush()?;
        let wait = sender
            .poll_timeout()
            .map_or(TICK, |d| d.saturating_duration_since(now));
        port.wait_and_read(wait, |bytes| sender.handle_input(bytes, Instant::now()))?;
        progress(sender);
    }
}

/// Serves transfers over `tty` until `interrupt` is raised; every event goes to `sink`.
///
/// # Errors
/// The device's failure, or the sink's (a file that cannot be written), which ends the
/// service. An interrupt ends it `Ok`.
pub fn serve(
    tty: &Tty,
    receiver: &mut Receiver,
    interrupt: &AtomicBool,
    mut sink: impl FnMut(Event) -> Result<(), String>,
) -> Result<(), DriveError> {
    let mut port = Port::new(tty);
    while !interrupt.load(Ordering::SeqCst) {
        port.wait_and_read(TICK, |bytes| receiver.handle_input(bytes))?;
        while let Some(e) = receiver.poll_event() {
            sink(e).map_err(DriveError::Sink)?;
        }
        while let Some(bytes) = receiver.poll_transmit() {
            port.queue(&bytes);
        }
        port.flush()?;
    }
    Ok(())
}
