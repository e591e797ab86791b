//! The switch test's client: streams pseudo-random bytes for a while, switching family on
//! the schedule from a thread of its own ([`crate::driver`]), then ends its stream and
//! reads the server's [`crate::wire`] reply.
//!
//! A failure after the connection keeps what was measured: [`run`] returns the
//! [`Outcome`] with its `error` set (no server figures), so the caller still reports the
//! client's side as far as it got.

use crate::driver::SwitchDriver;
use crate::policy::{Chooser, PolicySettings};
use crate::schedule::Schedule;
use crate::stream::Stream;
use crate::{peer, wire, Error, Event};
use sha2::Digest;
use sonde_schema::switch_test::ServerSide;
use sonde_stats::sink::{deliver, Sink};
use sonde_switch::{AnyConn, Backend, Family, Options, Stats, Targets};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One client run.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub backend: Backend,
    /// The server's address per family (both are needed).
    pub targets: Targets,
    /// The family the stream starts on.
    pub start: Family,
    /// How long to stream.
    pub time: Duration,
    /// When to switch.
    pub schedule: Schedule,
    /// End the transfer after this many switches.
    pub switches: Option<u64>,
    /// Switch by a verdict file instead of to the other family each time.
    pub policy: Option<PolicySettings>,
}

/// What one run measured, at both ends.
#[derive(Debug)]
pub struct Outcome {
    /// Bytes sent.
    pub bytes: u64,
    /// From the first byte to the end of the stream.
    pub secs: f64,
    /// SHA-256 of the bytes sent.
    pub sha: [u8; 32],
    /// The server's SHA-256 of what it received (zeros without its reply).
    pub server_sha: [u8; 32],
    /// Bytes the server received (0 without its reply).
    pub server_bytes: u64,
    /// The client's session counters and switch records.
    pub client: Stats,
    /// The server's records (None without its reply).
    pub server: Option<ServerSide>,
    /// Ctrl-C ended the stream.
    pub interrupted: bool,
    /// What chose the families, with its log.
    pub policy: Chooser,
    /// What ended the transfer early (a failed switch, send or close); the run is then
    /// partial: the client's side as far as it got, no server figures.
    pub error: Option<String>,
}

impl Outcome {
    /// Both ends saw the same stream: the same SHA-256 and length, nothing failed.
    pub fn hash_equal(&self) -> bool {
        self.error.is_none() && self.sha == self.server_sha && self.bytes == self.server_bytes
    }

    /// Why the run failed, whichever way (None: it passed): the error, an interrupt (the
    /// transfer did not reach its end), or the two ends' streams differing.
    pub fn failure(&self) -> Option<String> {
        self.error.clone().or_else(|| {
            if self.interrupted {
                Some("interrupted".into())
            } else {
                (!self.hash_equal())
                    .then(|| "the stream's SHA-256 or length differs at the two ends".into())
            }
        })
    }
}

/// Runs one switch test against the server of `cfg`.
///
/// # Errors
/// Before anything was measured: the verdict file, or the connection (a peer that is no
/// switch-test server is named, see [`crate::peer`]). Later failures are in the
/// [`Outcome`].
pub fn run(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    events: &mut dyn Sink<Event>,
) -> Result<Outcome, Error> {
    let mut chooser = Chooser::new(cfg.policy.as_ref())?;
    let c = connect(cfg.backend, &cfg.targets, cfg.start)?;
    let mut stream = Stream::new();
    let start = Instant::now();
    let (sent, switching) =
        send_while_switching(cfg, &c, start, &mut chooser, &mut stream, interrupt);
    let mut secs = start.elapsed().as_secs_f64();
    let ended = (|| -> Result<(wire::Head, ServerSide), Error> {
        switching?;
        sent?;
        stream.send_rest(&c)?;
        secs = start.elapsed().as_secs_f64();
        close_transfer(&c, events)
    })();
    let (server_sha, server_bytes, server, error) = match ended {
        Ok((head, server)) => (head.sha256, head.bytes, Some(server), None),
        Err(e) => ([0; 32], 0, None, Some(e.to_string())),
    };
    Ok(Outcome {
        bytes: stream.bytes,
        secs,
        sha: stream.hash.finalize().into(),
        server_sha,
        server_bytes,
        client: c.stats(),
        server,
        interrupted: interrupt.load(Ordering::SeqCst),
        policy: chooser,
        error,
    })
}

/// Connects, saying what the peer is when it does not answer as a switch-test server.
fn connect(backend: Backend, t: &Targets, fam: Family) -> Result<AnyConn, Error> {
    match AnyConn::connect(backend, t, fam, Options::default()) {
        Err(sonde_switch::Error::TimedOut(what)) => {
            let addr = if fam == Family::V6 { t.v6 } else { t.v4 };
            match addr {
                Some(addr) => Err(Error::NotASwitchTestServer(peer::hello_timed_out(addr))),
                None => Err(sonde_switch::Error::TimedOut(what).into()),
            }
        }
        r => Ok(r?),
    }
}

/// Streams for the configured time (or until Ctrl-C or the last switch) while a thread of
/// its own switches: the schedule says when, the chooser where to. The sender's result,
/// then the switcher's.
fn send_while_switching(
    cfg: &ClientConfig,
    c: &AnyConn,
    start: Instant,
    chooser: &mut Chooser,
    stream: &mut Stream,
    interrupt: &AtomicBool,
) -> (Result<(), Error>, Result<(), Error>) {
    let end = start + cfg.time;
    let stop = AtomicBool::new(false);
    let switched = AtomicU64::new(0);
    let driver = SwitchDriver {
        conn: c,
        start,
        family: cfg.start,
        limit: cfg.switches,
        stop: &stop,
        switched: &switched,
    };
    let schedule = cfg.schedule.clone();
    std::thread::scope(|s| {
        let switcher = s.spawn(|| driver.run(chooser, schedule));
        let sent = stream.send_until(c, end, interrupt, &stop);
        stop.store(true, Ordering::SeqCst);
        let switching = switcher
            .join()
            .map_or(Err(Error::SwitcherPanicked), |r| r.map_err(Error::from));
        (sent.map_err(Error::from), switching)
    })
}

/// Ends the stream and reads the server's reply: its head and its switch records.
fn close_transfer(
    c: &AnyConn,
    events: &mut dyn Sink<Event>,
) -> Result<(wire::Head, ServerSide), Error> {
    c.finish()?;
    let reply = read_reply(c)?;
    // The server's figures are in: a failed close loses nothing measured.
    if let Err(e) = c.close() {
        deliver(events, &Event::CloseFailed(e));
    }
    Ok(reply)
}

/// Reads the reply off the connection, checked ([`crate::wire`]).
fn read_reply(c: &AnyConn) -> Result<(wire::Head, ServerSide), Error> {
    let mut head = [0u8; wire::HEAD_LEN];
    c.recv_exact(&mut head)?;
    let head = wire::Head::parse(&head)?;
    let mut body = vec![0u8; head.body_len];
    c.recv_exact(&mut body)?;
    Ok((head, wire::parse_body(&body)?))
}
