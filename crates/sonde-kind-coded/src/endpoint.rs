//! Drives one coded sender or receiver over a connected UDP socket until the transfer is
//! complete, the caller stops it, or its time runs out.

use super::data::{FileSource, Sink};
use super::{symbol_size, K};
use sonde_coded::pattern;
use sonde_coded::receiver::{FeedbackMode, Receiver, ReceiverConfig};
use sonde_coded::sender::{PatternSource, Sender, SenderConfig, Source};
use sonde_coded::wire::{ReceiverReport, SenderReport};
use sonde_proto::coded::{CodedData, CodedFeedback, CodedScheme};
use sonde_proto::message::TestParams;
use sonde_runtime_core::error::RunError;
use std::net::UdpSocket;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a sender keeps answering the receiver's done report after the first one.
const SENDER_LINGER: Duration = Duration::from_millis(300);
/// How long a complete receiver waits for the sender's figures.
const RECEIVER_LINGER: Duration = Duration::from_secs(2);
/// Longest sleep between looks at the stop condition.
const MAX_WAIT: Duration = Duration::from_millis(5);

/// Which end of the transfer this is.
pub enum Side {
    Send(Box<Sender>),
    Receive {
        rx: Box<Receiver>,
        /// Bytes of one block: block `i` starts at `i * block_bytes`.
        block_bytes: u64,
        bad_bytes: u64,
        sink: Sink,
    },
}

impl Side {
    /// The side `sends` asks for, set up from the test's parameters. `file` is this end's
    /// `--file`: read when it sends, written when it receives.
    ///
    /// # Errors
    /// The file cannot be opened or created.
    pub fn new(p: &TestParams, sends: bool, file: Option<&Path>) -> Result<Self, RunError> {
        let symbol = symbol_size(p.length_u32());
        let opts = p.coded_options.unwrap_or_default();
        let arq = opts.scheme == CodedScheme::Arq;
        let file_err = |e: std::io::Error| {
            RunError::Setup(format!(
                "--file {}: {e}",
                file.map_or_else(String::new, |f| f.display().to_string())
            ))
        };
        if sends {
            let cfg = SenderConfig {
                symbol_size: symbol,
                k: K,
                max_rate_bps: if p.rate.is_unlimited() {
                    10_000_000_000
                } else {
                    p.rate.bits_per_sec()
                },
                ..SenderConfig::default()
            };
            let cfg = if arq { cfg.arq() } else { cfg };
            let len = (!p.bytes.is_zero()).then_some(p.bytes.bytes());
            let source: Box<dyn Source + Send> = match file {
                Some(f) => Box::new(FileSource::open(f, p.bytes.bytes()).map_err(file_err)?),
                None => Box::new(PatternSource { len }),
            };
            Ok(Side::Send(Box::new(Sender::new(cfg, source))))
        } else {
            let mode = match opts.feedback {
                CodedFeedback::Unrestricted => FeedbackMode::Unrestricted,
                CodedFeedback::Restricted => FeedbackMode::Restricted,
            };
            let rx_cfg = ReceiverConfig::for_mode(mode);
            let rx = Receiver::new(if arq { rx_cfg.arq() } else { rx_cfg });
            let block_symbols = if arq { 1 } else { u64::from(K) };
            // The far end sends a file only on an upload: then only its digest can be checked.
            let pattern = opts.data == CodedData::Pattern || file.is_some();
            Ok(Side::Receive {
                rx: Box::new(rx),
                block_bytes: block_symbols * symbol as u64,
                bad_bytes: 0,
                sink: Sink::new(file, pattern).map_err(file_err)?,
            })
        }
    }
}

/// What one end measured, plus what the other end reported at the close.
#[derive(Debug, Clone, Default)]
pub struct CodedFigures {
    /// Seconds from the first datagram to the transfer's completion (or the stop).
    pub elapsed_secs: f64,
    /// Whether every block decoded and the receiver said so.
    pub complete: bool,
    pub sender: Option<SenderReport>,
    pub receiver: Option<ReceiverReport>,
    /// Delivered bytes that differed from what was sent (receiving end only; must be 0).
    pub bad_bytes: Option<u64>,
    /// The sender's last path view: rate (bit/s), loss fraction, smoothed RTT (ms).
    pub path: Option<(f64, f64, Option<f64>)>,
    /// Times the sender's rate controller backed off on a congestion signal (sending end).
    pub backoffs: Option<u64>,
    /// Times the controller found another flow holding the bottleneck's queue and competed
    /// for its share on loss instead of yielding on delay (sending end).
    pub competitions: Option<u64>,
    /// This end's comparison of the sender's and the receiver's SHA-256 of the data (None
    /// when the other end's digest did not arrive).
    pub digest_ok: Option<bool>,
}

/// When the drive ends besides completion.
pub struct Limits<'a> {
    /// A timed test: the sender stops starting blocks at this moment.
    pub finish_at: Option<Instant>,
    /// Give up (the transfer did not complete) at this moment.
    pub deadline: Instant,
    pub interrupt: &'a AtomicBool,
}

/// Runs `side` over `sock` (connected to the peer). `stop` is asked every few milliseconds
/// whether the control connection ended the test. On error the figures so far come back in
/// the error's place through `out`.
///
/// # Errors
/// [`RunError::Interrupted`] on Ctrl-C, [`RunError::Timeout`] at the deadline, a data error
/// when the socket fails; `out` holds the partial figures in every case.
pub fn drive(
    side: &mut Side,
    sock: &UdpSocket,
    limits: &Limits<'_>,
    stop: &mut dyn FnMut() -> Result<bool, RunError>,
    out: &mut CodedFigures,
) -> Result<(), RunError> {
    let t0 = Instant::now();
    let mut buf = vec![0u8; 65536];
    let mut done_at: Option<Instant> = None;
    let mut next_stop_check = t0;
    sock.set_nonblocking(true).map_err(data_err)?;
    sonde_platform::timer::set_thread_timer_slack_ns(1000);
    let result = loop {
        let now = t0.elapsed();
        if limits.interrupt.load(Ordering::Relaxed) {
            break Err(RunError::Interrupted);
        }
        if Instant::now() >= limits.deadline {
            break Err(RunError::Timeout("the coded transfer to complete"));
        }
        if Instant::now() >= next_stop_check {
            next_stop_check = Instant::now() + Duration::from_millis(10);
            match stop() {
                Ok(true) => break Ok(()),
                Ok(false) => {}
                Err(e) => break Err(e),
            }
        }
        if let Err(e) = transmit(side, sock, now, &mut buf, limits) {
            break Err(e);
        }
        if finished(side, &mut done_at) {
            break Ok(());
        }
        let wait = next_wait(side, now);
        if let Err(e) = receive(side, sock, t0, wait, &mut buf) {
            break Err(e);
        }
    };
    let end = done_at.unwrap_or_else(Instant::now);
    out.elapsed_secs = end.duration_since(t0).as_secs_f64();
    figures(side, out);
    result
}

fn transmit(
    side: &mut Side,
    sock: &UdpSocket,
    now: Duration,
    buf: &mut [u8],
    limits: &Limits<'_>,
) -> Result<(), RunError> {
    match side {
        Side::Send(tx) => {
            if limits.finish_at.is_some_and(|t| Instant::now() >= t) {
                tx.finish();
            }
            while let Some(n) = tx
                .poll_transmit(now, buf)
                .map_err(|e| RunError::Setup(format!("coded sender: {e}")))?
            {
                send(sock, &buf[..n])?;
            }
        }
        Side::Receive { rx, .. } => {
            while let Some(n) = rx.poll_transmit(now, buf) {
                send(sock, &buf[..n])?;
            }
        }
    }
    Ok(())
}

/// Sends one datagram; a full socket buffer or a refused datagram (the peer's socket is not
/// there yet or any more) is a lost datagram, which the protocol repairs.
fn send(sock: &UdpSocket, b: &[u8]) -> Result<(), RunError> {
    match sock.send(b) {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::ConnectionRefused
            ) || e.raw_os_error() == Some(libc::ENOBUFS) =>
        {
            Ok(())
        }
        Err(e) => Err(data_err(e)),
    }
}

/// Whether this end has nothing left to do; marks when the transfer completed.
fn finished(side: &mut Side, done_at: &mut Option<Instant>) -> bool {
    let (complete, closed) = match side {
        Side::Send(tx) => (tx.is_done(), false),
        Side::Receive { rx, .. } => (rx.is_complete(), rx.peer_report().is_some()),
    };
    if !complete {
        return false;
    }
    let at = *done_at.get_or_insert_with(Instant::now);
    let linger = match side {
        Side::Send(_) => SENDER_LINGER,
        Side::Receive { .. } => RECEIVER_LINGER,
    };
    closed || at.elapsed() >= linger
}

fn next_wait(side: &mut Side, now: Duration) -> Duration {
    let next = match side {
        Side::Send(tx) => tx.poll_timeout(now),
        Side::Receive { rx, .. } => rx.poll_timeout(now),
    };
    next.map_or(MAX_WAIT, |t| t.saturating_sub(now))
        .clamp(Duration::from_micros(20), MAX_WAIT)
}

fn receive(
    side: &mut Side,
    sock: &UdpSocket,
    t0: Instant,
    wait: Duration,
    buf: &mut [u8],
) -> Result<(), RunError> {
    if !sonde_platform::poll::readable_precise(sock, wait).map_err(data_err)? {
        return Ok(());
    }
    for _ in 0..64 {
        let n = match sock.recv(buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                return Ok(())
            }
            Err(e) => return Err(data_err(e)),
        };
        let now = t0.elapsed();
        // A datagram that fails its checks is counted by the state machine and dropped.
        match side {
            Side::Send(tx) => {
                let _ = tx.handle(now, &buf[..n]);
            }
            Side::Receive {
                rx,
                block_bytes,
                bad_bytes,
                sink,
            } => {
                let _ = rx.handle(now, &buf[..n]);
                while let Some(b) = rx.poll_block() {
                    sink.write(&b.data).map_err(file_write_err)?;
                    if sink.pattern {
                        let offset = u64::from(b.index) * *block_bytes;
                        let bad = pattern::mismatches(offset, &b.data);
                        *bad_bytes += bad;
                        rx.note_mismatches(bad);
                    }
                }
                if rx.is_complete() {
                    sink.flush().map_err(file_write_err)?;
                }
            }
        }
    }
    Ok(())
}

fn figures(side: &Side, out: &mut CodedFigures) {
    match side {
        Side::Send(tx) => {
            out.complete = tx.is_done();
            out.sender = Some(tx.report());
            out.receiver = tx.peer_report();
            let (rate, loss, rtt) = tx.path();
            out.path = Some((rate, loss, rtt.map(|d| d.as_secs_f64() * 1e3)));
            out.backoffs = Some(tx.backoffs());
            out.competitions = Some(tx.competitions());
            out.digest_ok = tx.digest_check();
        }
        Side::Receive {
            rx,
            bad_bytes,
            sink,
            ..
        } => {
            out.complete = rx.is_complete();
            out.receiver = Some(rx.report());
            out.sender = rx.peer_report();
            out.bad_bytes = sink.pattern.then_some(*bad_bytes);
            out.digest_ok = rx.digest_check();
        }
    }
}

fn file_write_err(e: std::io::Error) -> RunError {
    RunError::Setup(format!("writing the received data to --file: {e}"))
}

fn data_err(e: std::io::Error) -> RunError {
    RunError::Stream { id: 1, source: e }
}
