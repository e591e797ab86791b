//! `sonde btc`: bulk transfer capacity as a series of sessions, one TCP transfer of a growing
//! size each (`-n`), started every `every`, per address family. Each session is an ordinary
//! sonde test (the same client, server and figures); this module only schedules them and turns
//! each summary into a [`BtcSession`].

use crate::client;
use crate::clock::sleep_unless_interrupted;
use crate::connect::ClientConfig;
use crate::error::RunError;
use sonde_platform::resolve::Family;
use sonde_proto::message::TestParams;
use sonde_stats::btc::BtcSession;
use sonde_stats::model::{Direction, Event, Protocol, TestSummary};
use sonde_stats::sink::FnSink;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a BTC run does.
#[derive(Debug, Clone)]
pub struct BtcConfig {
    /// The client settings of every session (host, port, timeouts, local sockets); its
    /// params give the write length and socket options, bytes and family are set per session.
    pub client: ClientConfig,
    /// Bytes of each session, in order (per family).
    pub sizes: Vec<u64>,
    /// Families to measure; with both, each size runs on IPv4, then IPv6.
    pub families: Vec<Family>,
    /// From one session's start to the next one's.
    pub every: Duration,
}

/// Runs the sessions, handing each to `on_session` as it ends. Returns the sessions run; a
/// session that fails ends the run with its error (the sessions before it are kept).
///
/// # Errors
/// The failing session's [`RunError`] with the sessions done so far.
pub fn run(
    cfg: &BtcConfig,
    interrupt: &AtomicBool,
    on_session: &mut dyn FnMut(&BtcSession),
) -> (Vec<BtcSession>, Option<RunError>) {
    let mut done = Vec::new();
    let mut next_start = Instant::now();
    for &size in &cfg.sizes {
        for &family in &cfg.families {
            if !sleep_unless_interrupted(next_start, interrupt) {
                return (done, Some(RunError::Interrupted));
            }
            next_start = Instant::now() + cfg.every;
            let index = done.len() as u32 + 1;
            match run_session(&cfg.client, family, size, index, interrupt) {
                Ok(s) => {
                    on_session(&s);
                    done.push(s);
                }
                Err(e) => return (done, Some(e)),
            }
        }
    }
    (done, None)
}

/// One session: a TCP upload of `size` bytes with `client`'s settings over `family`,
/// numbered `index`.
///
/// # Errors
/// The session's [`RunError`], or [`RunError::Setup`] when it ended without figures.
pub fn run_session(
    client: &ClientConfig,
    family: Family,
    size: u64,
    index: u32,
    interrupt: &AtomicBool,
) -> Result<BtcSession, RunError> {
    let session_cfg = ClientConfig {
        family,
        params: TestParams {
            protocol: Protocol::Tcp,
            direction: Direction::Upload,
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
    let start_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
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
        .and_then(|s| session(index, family, size, s))
        .map(|s| BtcSession { start_unix_s, ..s })
        .ok_or_else(|| RunError::Setup(format!("session {index} ended without figures")))
}

/// A session's figures from its test summary: what the receiver counted, the sender's TCP.
fn session(index: u32, family: &str, size: u64, s: &TestSummary) -> Option<BtcSession> {
    let up = s.directions.iter().find(|d| d.client_sends)?;
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
