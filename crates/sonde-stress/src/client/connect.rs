//! The connect phase: every connection opened at once, each classified by how it settled.

use super::config::StressConfig;
use super::conn::Conn;
use super::error::{poll_once, StressError};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use sonde_stats::stress::model::ConnectReport;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How one connect attempt failed.
fn classify(r: &mut ConnectReport, e: &std::io::Error) {
    match e.kind() {
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset => r.refused += 1,
        ErrorKind::TimedOut => r.timed_out += 1,
        _ => {
            r.other_failed += 1;
            if r.first_error.is_none() {
                r.first_error = Some(e.to_string());
            }
        }
    }
}

/// Opens `cfg.connections` connections and waits until each is connected, refused, failed or
/// past the connect timeout. Returns the connected ones, in the order they were opened.
pub(super) fn open_all(
    cfg: &StressConfig,
    poll: &mut Poll,
    events: &mut Events,
    stop: &AtomicBool,
) -> Result<(Vec<Conn>, ConnectReport), StressError> {
    let t0 = Instant::now();
    let mut report = ConnectReport {
        asked: cfg.connections,
        ..ConnectReport::default()
    };
    let mut pending: Vec<Option<(TcpStream, Instant)>> = Vec::new();
    let mut connected: Vec<Option<TcpStream>> = Vec::new();
    for i in 0..cfg.connections as usize {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        connected.push(None);
        let attempt = TcpStream::connect(cfg.addr).and_then(|mut s| {
            poll.registry()
                .register(&mut s, Token(i), Interest::WRITABLE)
                .map(|()| s)
        });
        match attempt {
            Ok(s) => pending.push(Some((s, Instant::now()))),
            Err(e) => {
                classify(&mut report, &e);
                pending.push(None);
            }
        }
    }
    let mut waiting = pending.iter().filter(|p| p.is_some()).count();
    while waiting > 0 && !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        let next_deadline = pending
            .iter()
            .flatten()
            .map(|(_, at)| *at + cfg.connect_timeout)
            .min()
            .unwrap_or(now);
        let wait = next_deadline
            .saturating_duration_since(now)
            .min(Duration::from_millis(100));
        poll_once(poll, events, wait)?;
        for ev in events.iter() {
            let i = ev.token().0;
            let Some(slot) = pending.get_mut(i) else {
                continue;
            };
            let Some((s, _)) = slot.as_ref() else {
                continue;
            };
            let state = match s.take_error() {
                Ok(Some(e)) | Err(e) => Err(e),
                Ok(None) => s.peer_addr().map(|_| ()),
            };
            match state {
                Ok(()) => {
                    if let (Some((s, _)), Some(c)) = (slot.take(), connected.get_mut(i)) {
                        *c = Some(s);
                        report.connected += 1;
                    }
                    waiting -= 1;
                }
                // Not connected yet: a spurious wake-up.
                Err(e) if e.kind() == ErrorKind::NotConnected => {}
                Err(e) => {
                    classify(&mut report, &e);
                    *slot = None;
                    waiting -= 1;
                }
            }
        }
        let now = Instant::now();
        for slot in pending.iter_mut() {
            if slot
                .as_ref()
                .is_some_and(|(_, at)| now >= *at + cfg.connect_timeout)
            {
                *slot = None;
                report.timed_out += 1;
                waiting -= 1;
            }
        }
    }
    report.seconds = t0.elapsed().as_secs_f64();
    let conns = connected
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, s)| Conn::new(s, i))
        .collect();
    Ok((conns, report))
}
