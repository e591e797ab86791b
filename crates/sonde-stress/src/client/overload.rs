//! `--overload`: opens connections in batches until the device refuses one (or the `-P`
//! limit), holds them idle, closes them all (our FIN, then waiting for the device's), and
//! measures how long until the device accepts a new connection again.

use super::config::StressConfig;
use super::conn::{close_all, Conn};
use super::connect::open_all;
use super::error::StressError;
use mio::{Events, Poll};
use sonde_stats::stress::model::CloseOutcome;
use sonde_stats::stress::overload::{OverloadReport, Refusal};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Connections opened at once per step.
const BATCH: u32 = 256;
/// How long a recovered device may take to accept a connection after the close.
const RECOVERY_WAIT: Duration = Duration::from_secs(30);

/// Runs the overload: `cfg.connections` is the most to open, `cfg.duration` how long to hold.
///
/// # Errors
/// [`StressError::Poll`] when the event loop itself fails.
pub fn run(cfg: &StressConfig, stop: &AtomicBool) -> Result<OverloadReport, StressError> {
    crate::os::raise_nofile_limit();
    let mut poll = Poll::new().map_err(StressError::Poll)?;
    let mut events = Events::with_capacity(4096);
    let mut held: Vec<Conn> = Vec::new();
    let (mut attempted, mut refusal, mut first_error) = (0u32, Refusal::None, None);
    while (held.len() as u32) < cfg.connections && !stop.load(Ordering::SeqCst) {
        let n = BATCH.min(cfg.connections - held.len() as u32);
        let batch = StressConfig {
            connections: n,
            ..cfg.clone()
        };
        let (conns, report) = open_all(&batch, &mut poll, &mut events, stop)?;
        attempted += n;
        for mut c in conns {
            c.deregister(poll.registry());
            held.push(c);
        }
        if report.connected < n {
            refusal = if report.refused > 0 {
                Refusal::Reset
            } else if report.timed_out > 0 {
                Refusal::Timeout
            } else {
                Refusal::Other
            };
            first_error = report.first_error;
            break;
        }
    }
    let t_hold = Instant::now();
    while t_hold.elapsed() < cfg.duration && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let held_seconds = t_hold.elapsed().as_secs_f64();
    // Connections the device accepted and then reset or closed by itself while held: its way of
    // refusing past a limit (the kernel completes handshakes the application then rejects).
    let before = held.len();
    held.retain(Conn::alive);
    let dropped = (before - held.len()) as u32;
    if dropped > 0 && refusal == Refusal::None {
        refusal = Refusal::Reset;
    }
    let mut scratch = vec![0u8; 64 * 1024];
    // Held idle: nothing was sent, so nothing is checked on the way out.
    close_all(
        &mut held,
        cfg.mode,
        None,
        &mut poll,
        &mut events,
        cfg.close_timeout,
        &mut scratch,
    );
    let outcomes: Vec<Option<CloseOutcome>> = held
        .iter()
        .enumerate()
        .map(|(i, c)| Some(c.total(i as u32 + 1, held_seconds).close))
        .collect();
    let count = |o: CloseOutcome| outcomes.iter().filter(|c| **c == Some(o)).count() as u32;
    let recovery_seconds = recover(cfg, stop);
    Ok(OverloadReport {
        attempted,
        held: held.len() as u32,
        dropped_after_accept: dropped,
        refusal,
        first_error,
        held_seconds,
        closed_clean: count(CloseOutcome::Clean),
        closed_reset: count(CloseOutcome::Reset),
        closed_timeout: count(CloseOutcome::Timeout) + count(CloseOutcome::FailedDuringRun),
        recovery_seconds,
        partial: stop.load(Ordering::SeqCst),
    })
}

/// Seconds until a new connection is accepted (None within [`RECOVERY_WAIT`]).
fn recover(cfg: &StressConfig, stop: &AtomicBool) -> Option<f64> {
    let t0 = Instant::now();
    while t0.elapsed() < RECOVERY_WAIT && !stop.load(Ordering::SeqCst) {
        let timeout = cfg.connect_timeout.min(Duration::from_secs(1));
        if std::net::TcpStream::connect_timeout(&cfg.addr, timeout).is_ok() {
            return Some(t0.elapsed().as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}
