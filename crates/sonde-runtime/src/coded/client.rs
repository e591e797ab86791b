//! `sonde client --coded`: one coded transfer against a sonde server.
//!
//! The control session is the usual one (so limits, refusals and aborts behave as for UDP):
//! hello (the server must list `coded`), a UDP test request of one stream marked coded, the
//! stream's hello, start. Then this end drives its coded sender (upload) or receiver (`-R`)
//! until the receiver reports every block decoded, stops, and both ends exchange results
//! (their CPU). The coded figures of the far end arrive in the protocol's own close.

use super::endpoint::{drive, CodedFigures, Limits, Side};
use crate::client::{connect_control, open_data_stream, udp_handshake, ClientConfig};
use crate::control_conn::ControlConn;
use crate::engine::DataSocket;
use crate::error::RunError;
use crate::os::cpu;
use crate::os::host::software;
use crate::os::resolve::resolve;
use sonde_proto::message::{Results, Stop};
use sonde_proto::preamble::{data_preamble, CONTROL_MAGIC};
use sonde_proto::session::{ClientEvent, ClientSession};
use sonde_stats::cpu::cpu_usage;
use sonde_stats::model::{CpuUsage, Direction};
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Longest wait for one control step.
const STEP: Duration = Duration::from_secs(30);
/// How long past its duration a timed transfer may take to deliver its last blocks (and a
/// sized one at least, on top of its time at the target rate) before it is given up.
const GRACE: Duration = Duration::from_secs(30);

/// The result of a coded test, for the reporters.
#[derive(Debug, Clone, Default)]
pub struct CodedOutcome {
    /// This end sent (upload) or received (`-R`).
    pub client_sends: bool,
    pub server: String,
    pub figures: CodedFigures,
    pub cpu_local: Option<CpuUsage>,
    pub cpu_remote: Option<CpuUsage>,
}

/// Runs a coded test; on failure the figures so far come with the error.
pub fn run(cfg: &ClientConfig, interrupt: &AtomicBool) -> (CodedOutcome, Option<RunError>) {
    let mut out = CodedOutcome {
        client_sends: cfg.params.direction != Direction::Reverse,
        ..CodedOutcome::default()
    };
    let err = execute(cfg, interrupt, &mut out).err();
    (out, err)
}

fn next_event(
    conn: &mut ControlConn,
    s: &mut ClientSession,
    what: &'static str,
) -> Result<ClientEvent, RunError> {
    let deadline = Instant::now() + STEP;
    loop {
        if let Some(ev) = s.poll_event() {
            return match ev {
                ClientEvent::Aborted(r) => Err(RunError::PeerAborted(r)),
                ClientEvent::Refused(r) => Err(RunError::ServerRefused {
                    code: r.code.as_str().to_string(),
                    message: r.message,
                }),
                ev => Ok(ev),
            };
        }
        if Instant::now() >= deadline {
            return Err(RunError::Timeout(what));
        }
        if let Some(m) = conn.recv(Duration::from_millis(50))? {
            s.handle(m).map_err(|e| RunError::Protocol(e.to_string()))?;
        }
        flush(conn, s)?;
    }
}

fn flush(conn: &mut ControlConn, s: &mut ClientSession) -> Result<(), RunError> {
    while let Some(m) = s.poll_transmit() {
        conn.send(&m)?;
    }
    Ok(())
}

fn execute(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    out: &mut CodedOutcome,
) -> Result<(), RunError> {
    let p = &cfg.params;
    let addrs = resolve(&cfg.host, cfg.port, cfg.family)?;
    let mut tcp = connect_control(&addrs, &cfg.local, cfg.connect_timeout)?;
    let server = tcp.peer_addr().map_err(RunError::ControlIo)?;
    out.server = server.to_string();
    tcp.write_all(CONTROL_MAGIC).map_err(RunError::ControlIo)?;
    let mut conn = ControlConn::new(tcp).map_err(RunError::ControlIo)?;
    let mut s = ClientSession::new(p.clone(), &software());
    let r = run_session(cfg, interrupt, &mut conn, &mut s, server, out);
    if let Err(e) = &r {
        if !matches!(
            e,
            RunError::PeerClosed | RunError::PeerAborted(_) | RunError::ServerRefused { .. }
        ) {
            s.abort(&e.to_string());
            let _ = flush(&mut conn, &mut s);
        }
    }
    r
}

fn run_session(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    conn: &mut ControlConn,
    s: &mut ClientSession,
    server: std::net::SocketAddr,
    out: &mut CodedOutcome,
) -> Result<(), RunError> {
    let p = &cfg.params;
    flush(conn, s)?;
    match next_event(conn, s, "the server's welcome")? {
        ClientEvent::Welcomed { caps, software, .. } => {
            if !caps.iter().any(|c| c == "coded") {
                return Err(RunError::PeerLacks {
                    software,
                    capability: "coded",
                    what: "run the coded transport (--coded)",
                    instead: "run sonde server from this release on the far end",
                });
            }
        }
        _ => return Err(RunError::Protocol("expected the server's welcome".into())),
    }
    let cookie = match next_event(conn, s, "the server to accept the test")? {
        ClientEvent::Accepted { cookie } => cookie,
        _ => return Err(RunError::Protocol("expected the test's acceptance".into())),
    };
    let (sock, _) = open_data_stream(cfg, server, 1, &data_preamble(&cookie, 1), |u| {
        udp_handshake(u, &cookie, 1, interrupt)
    })?;
    let DataSocket::Udp(sock) = sock else {
        return Err(RunError::Setup(
            "the coded stream is not a UDP socket".into(),
        ));
    };
    match next_event(conn, s, "the server to confirm the data stream")? {
        ClientEvent::StreamsReady => {}
        _ => return Err(RunError::Protocol("expected streams-ready".into())),
    }
    flush(conn, s)?; // the Start
    let cpu0 = cpu::process_times();
    let t0 = Instant::now();
    let mut side = Side::new(p, out.client_sends);
    let timed = p.bytes == 0;
    let run_for = Duration::from_secs_f64(if timed {
        p.duration_secs
    } else {
        // A sized transfer at the target rate, with room for repair and a slow path.
        (p.bytes as f64 * 8.0 / p.bitrate.max(1_000_000) as f64) * 4.0
    });
    let limits = Limits {
        finish_at: timed.then(|| t0 + run_for),
        deadline: t0 + run_for + GRACE,
        interrupt,
    };
    let mut watch = || -> Result<bool, RunError> {
        match crate::coded::endpoint::poll_control(conn) {
            Ok(Some(m)) => {
                s.handle(m).map_err(|e| RunError::Protocol(e.to_string()))?;
                match s.poll_event() {
                    Some(ClientEvent::Aborted(r)) => Err(RunError::PeerAborted(r)),
                    _ => Ok(false),
                }
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e),
        }
    };
    let driven = drive(&mut side, &sock, &limits, &mut watch, &mut out.figures);
    out.cpu_local = Some(cpu_usage(
        cpu0,
        cpu::process_times(),
        t0.elapsed().as_secs_f64(),
    ));
    driven?;
    s.stop(Stop { sent: Vec::new() });
    flush(conn, s)?;
    let peer = loop {
        match next_event(conn, s, "the server's results")? {
            ClientEvent::PeerResults(r) => break r,
            ClientEvent::LiveInterval(_) => {}
            _ => return Err(RunError::Protocol("expected the server's results".into())),
        }
    };
    out.cpu_remote = Some(peer.cpu);
    s.send_results(Results {
        cpu: out.cpu_local.unwrap_or_default(),
        congestion: None,
        streams: Vec::new(),
        sent: Vec::new(),
        notes: Vec::new(),
        profile: Vec::new(),
    });
    let _ = flush(conn, s);
    if !out.figures.complete {
        return Err(RunError::Setup(
            "the coded transfer ended before every block was delivered".into(),
        ));
    }
    Ok(())
}
