//! `sonde btc`: bulk transfer capacity as a series of sessions, one TCP transfer of a growing
//! size each (`-n`), started every `every`, per address family, in rounds repeated for a
//! count or a duration; a session that fails is recorded and the run goes on. Each session is an ordinary
//! sonde test (the same client, server and figures); this module only schedules them and turns
//! each summary into a [`BtcSession`].

use crate::client;
use crate::clock::sleep_unless_interrupted;
use crate::connect::ClientConfig;
use crate::error::RunError;
use sonde_platform::resolve::Family;
use sonde_proto::message::TestParams;
use sonde_stats::btc::{BtcFailure, BtcSession};
use sonde_stats::model::{Direction, Event, Protocol, TestSummary};
use sonde_stats::sink::{deliver, FnSink, Sink};
use sonde_stats::units::Size;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a BTC run does.
#[derive(Debug, Clone)]
pub struct BtcConfig {
    /// The client settings of every session (host, port, timeouts, local sockets); its
    /// params give the write length and socket options, bytes and family are set per session.
    pub client: ClientConfig,
    /// Bytes of each session, in order (per family): one round.
    pub sizes: Vec<Size>,
    /// Families to measure; with both, each size runs on IPv4, then IPv6.
    pub families: Vec<Family>,
    /// From one session's start to the next one's.
    pub every: Duration,
    /// Rounds to run (every size on every family each); with `duration`, whichever ends
    /// first. Neither: one round.
    pub count: Option<u32>,
    /// No session starts after this long.
    pub duration: Option<Duration>,
    /// The server sends (`-R`); the client counts what it receives.
    pub reverse: bool,
}

/// What the run did: the sessions with figures, the ones that failed (each recorded with
/// its error, the run going on after it), and whether Ctrl-C stopped it.
#[derive(Debug, Clone, Default)]
pub struct BtcOutcome {
    pub sessions: Vec<BtcSession>,
    pub failed: Vec<BtcFailure>,
    pub interrupted: bool,
}

/// One session's end, as `run` hands it on.
#[derive(Debug, Clone, Copy)]
pub enum SessionEnd<'a> {
    Done(&'a BtcSession),
    Failed(&'a BtcFailure),
}

fn family_word(f: Family) -> &'static str {
    match f {
        Family::V4 => "IPv4",
        Family::V6 => "IPv6",
        Family::Any => "any",
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Runs the rounds of sessions, handing each to `on_session` as it ends. A session that
/// fails is recorded with its error and the run goes on; Ctrl-C stops it early, and so does
/// a first session failing on every family before any succeeded (nothing answers there).
pub fn run(
    cfg: &BtcConfig,
    interrupt: &AtomicBool,
    on_session: &mut dyn for<'a> Sink<SessionEnd<'a>>,
) -> BtcOutcome {
    let mut out = BtcOutcome::default();
    let began = Instant::now();
    let mut next_start = began;
    let rounds = match (cfg.count, cfg.duration) {
        (Some(n), _) => n,
        (None, Some(_)) => u32::MAX,
        (None, None) => 1,
    };
    for _ in 0..rounds {
        for &size in &cfg.sizes {
            for &family in &cfg.families {
                if cfg
                    .duration
                    .is_some_and(|d| next_start.saturating_duration_since(began) >= d)
                {
                    return out;
                }
                if !sleep_unless_interrupted(next_start, interrupt) {
                    out.interrupted = true;
                    return out;
                }
                next_start = Instant::now() + cfg.every;
                let index = (out.sessions.len() + out.failed.len()) as u32 + 1;
                let start_unix_s = unix_now();
                match transfer(&cfg.client, family, (size, cfg.reverse), index, interrupt) {
                    Ok(s) => {
                        deliver(on_session, &SessionEnd::Done(&s));
                        out.sessions.push(s);
                    }
                    Err(RunError::Interrupted) => {
                        out.interrupted = true;
                        return out;
                    }
                    Err(e) => {
                        let f = BtcFailure {
                            index,
                            family: family_word(family).into(),
                            size: size.bytes(),
                            start_unix_s,
                            error: e.to_string(),
                        };
                        deliver(on_session, &SessionEnd::Failed(&f));
                        out.failed.push(f);
                        // Every family failed and none ever answered: the host or port is
                        // wrong, not the path; the run ends rather than retry it for hours.
                        if out.sessions.is_empty() && out.failed.len() >= cfg.families.len() {
                            return out;
                        }
                    }
                }
            }
        }
    }
    out
}

/// One session: a TCP upload of `size` bytes with `client`'s settings over `family`,
/// numbered `index`.
///
/// # Errors
/// The session's [`RunError`], or [`RunError::Setup`] when it ended without figures.
pub fn run_session(
    client: &ClientConfig,
    family: Family,
    size: Size,
    index: u32,
    interrupt: &AtomicBool,
) -> Result<BtcSession, RunError> {
    transfer(client, family, (size, false), index, interrupt)
}

/// A session of `size` bytes, the server sending when `reverse`.
fn transfer(
    client: &ClientConfig,
    family: Family,
    (size, reverse): (Size, bool),
    index: u32,
    interrupt: &AtomicBool,
) -> Result<BtcSession, RunError> {
    let session_cfg = ClientConfig {
        family,
        params: TestParams {
            protocol: Protocol::Tcp,
            direction: if reverse {
                Direction::Reverse
            } else {
                Direction::Upload
            },
            parallel: 1,
            duration_secs: 0.0,
            bytes: size,
            blocks: 0,
            interval_secs: 0.0,
            omit_secs: 0.0,
            ..client.params.clone()
        },
        ..client.clone()
    };
    let start_unix_s = unix_now();
    // The family the session really used: its server address.
    let mut remote = String::new();
    let outcome = client::run(
        &session_cfg,
        interrupt,
        &mut FnSink(|ev: &Event| {
            if let Event::Start(s) = ev {
                remote.clone_from(&s.remote);
            }
        }),
    );
    if let Some(e) = outcome.error {
        return Err(e);
    }
    let family = if remote.starts_with('[') {
        "IPv6"
    } else {
        "IPv4"
    };
    outcome
        .summary
        .as_ref()
        .and_then(|s| session(index, family, size.bytes(), reverse, s))
        .map(|s| BtcSession { start_unix_s, ..s })
        .ok_or_else(|| RunError::Setup(format!("session {index} ended without figures")))
}

/// A session's figures from its test summary: what the receiver counted, the sender's TCP
/// (the direction the client sends, or with `reverse` the one it receives).
fn session(
    index: u32,
    family: &str,
    size: u64,
    reverse: bool,
    s: &TestSummary,
) -> Option<BtcSession> {
    let up = s.directions.iter().find(|d| d.client_sends != reverse)?;
    let received = up.received.as_ref()?;
    let tcp = up.sent.as_ref().and_then(|v| v.tcp);
    Some(BtcSession {
        index,
        family: family.into(),
        size,
        bytes: received.bytes,
        seconds: received.end - received.start,
        goodput_bps: received.bits_per_second,
        retransmits: tcp.map_or(0, |t| t.retransmits),
        max_cwnd: tcp.map(|t| t.max_snd_cwnd),
        mean_rtt_us: tcp.map(|t| t.mean_rtt_us),
        congestion: s.sender_congestion.clone(),
        start_unix_s: 0.0,
    })
}
