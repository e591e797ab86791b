//! `--storm`: connections opened and closed as fast as the device takes them. `concurrency`
//! attempts are in flight at once (non-blocking connects on one mio loop); each settles as
//! accepted (then closed at once with our FIN), refused, timed out or failed, and its slot
//! starts the next attempt until the time is up. Attempts still in flight at the end are not
//! counted.

use super::error::{poll_once, StressError};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use sonde_stats::stress::storm::{Attempt, StormReport, StormTally};
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a storm does.
#[derive(Debug, Clone, Copy)]
pub struct StormConfig {
    pub addr: SocketAddr,
    pub concurrency: u32,
    pub duration: Duration,
    pub connect_timeout: Duration,
}

/// How an attempt's error counts.
fn kind(e: &std::io::Error) -> Attempt {
    match e.kind() {
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset => Attempt::Refused,
        ErrorKind::TimedOut => Attempt::TimedOut,
        _ => Attempt::Failed,
    }
}

/// Starts an attempt in slot `i`; an immediate failure is recorded and leaves it empty.
fn start(
    poll: &Poll,
    addr: SocketAddr,
    i: usize,
    tally: &mut StormTally,
) -> Option<(TcpStream, Instant)> {
    let attempt = TcpStream::connect(addr).and_then(|mut s| {
        poll.registry()
            .register(&mut s, Token(i), Interest::WRITABLE)
            .map(|()| s)
    });
    match attempt {
        Ok(s) => Some((s, Instant::now())),
        Err(e) => {
            tally.record(kind(&e));
            None
        }
    }
}

/// Runs the storm until `duration` or `stop`.
///
/// # Errors
/// [`StressError::Poll`] when the event loop itself fails.
pub fn run(cfg: &StormConfig, stop: &AtomicBool) -> Result<StormReport, StressError> {
    crate::os::raise_nofile_limit();
    let mut poll = Poll::new().map_err(StressError::Poll)?;
    let mut events = Events::with_capacity(1024);
    let mut tally = StormTally::default();
    let t0 = Instant::now();
    let slots = cfg.concurrency.max(1) as usize;
    let mut inflight: Vec<Option<(TcpStream, Instant)>> = (0..slots)
        .map(|i| start(&poll, cfg.addr, i, &mut tally))
        .collect();
    while t0.elapsed() < cfg.duration && !stop.load(Ordering::SeqCst) {
        poll_once(&mut poll, &mut events, Duration::from_millis(10))?;
        let ready: Vec<usize> = events.iter().map(|e| e.token().0).collect();
        for i in ready {
            let Some(Some((s, at))) = inflight.get(i) else {
                continue;
            };
            let state = match s.take_error() {
                Ok(Some(e)) | Err(e) => Err(e),
                Ok(None) => s.peer_addr().map(|_| ()),
            };
            let outcome = match state {
                Ok(()) => Attempt::Accepted(at.elapsed().as_nanos() as u64),
                Err(e) if e.kind() == ErrorKind::NotConnected => continue,
                Err(e) => kind(&e),
            };
            tally.record(outcome);
            // Dropping the stream closes it (our FIN, or nothing after a failure).
            if let Some(slot) = inflight.get_mut(i) {
                *slot = None;
            }
        }
        let now = Instant::now();
        for (i, slot) in inflight.iter_mut().enumerate() {
            if slot
                .as_ref()
                .is_some_and(|(_, at)| now.duration_since(*at) >= cfg.connect_timeout)
            {
                *slot = None;
                tally.record(Attempt::TimedOut);
            }
            if slot.is_none() && t0.elapsed() < cfg.duration {
                *slot = start(&poll, cfg.addr, i, &mut tally);
            }
        }
    }
    let seconds = t0.elapsed().as_secs_f64().min(cfg.duration.as_secs_f64());
    Ok(tally.report(seconds, cfg.concurrency, stop.load(Ordering::SeqCst)))
}
