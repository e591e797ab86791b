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

/// A connect under way and when it began; none once it settled or failed at once.
type Attempt = Option<(TcpStream, Instant)>;

/// Starts `cfg.connections` non-blocking connects (fewer when `stop` is raised meanwhile),
/// each registered for writability under its index. Per index: the attempt under way and
/// when it began (none: it failed at once, classified in `report`), and a slot for the stream
/// once connected.
fn start_all(
    cfg: &StressConfig,
    poll: &Poll,
    stop: &AtomicBool,
    report: &mut ConnectReport,
) -> (Vec<Attempt>, Vec<Option<TcpStream>>) {
    let mut pending: Vec<Attempt> = Vec::new();
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
                classify(report, &e);
                pending.push(None);
            }
        }
    }
    (pending, connected)
}

/// Gives up the attempts begun `timeout` or more before `now`; how many.
fn expire<T>(pending: &mut [Option<(T, Instant)>], now: Instant, timeout: Duration) -> u32 {
    let mut expired = 0;
    for slot in pending.iter_mut() {
        if slot.as_ref().is_some_and(|(_, at)| now >= *at + timeout) {
            *slot = None;
            expired += 1;
        }
    }
    expired
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
    let (mut pending, mut connected) = start_all(cfg, poll, stop, &mut report);
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
        let expired = expire(&mut pending, Instant::now(), cfg.connect_timeout);
        report.timed_out += expired;
        waiting -= expired as usize;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_classified_the_first_odd_one_kept() {
        let mut r = ConnectReport::default();
        classify(&mut r, &ErrorKind::ConnectionRefused.into());
        classify(&mut r, &ErrorKind::ConnectionReset.into());
        classify(&mut r, &ErrorKind::TimedOut.into());
        classify(&mut r, &std::io::Error::other("no route"));
        classify(&mut r, &std::io::Error::other("later"));
        assert_eq!((r.refused, r.timed_out, r.other_failed), (2, 1, 2));
        assert_eq!(r.first_error.as_deref(), Some("no route"));
    }

    #[test]
    fn attempts_past_their_timeout_are_given_up() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut pending = vec![
            Some(((), t0)),
            None,
            Some(((), t0 + s(2))),
            Some(((), t0 + s(1))),
        ];
        assert_eq!(expire(&mut pending, t0 + s(3), s(2)), 2);
        assert_eq!(pending, [None, None, Some(((), t0 + s(2))), None]);
        assert_eq!(expire(&mut pending, t0 + s(3), s(2)), 0);
    }
}
