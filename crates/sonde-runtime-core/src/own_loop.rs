//! The client's side of the tests that run their own loop on one UDP stream instead of the
//! engine (`--coded`, `sonde capacity`): the control session's set-up up to the stream's
//! confirmation, and its close (stop, both ends' results). Each step waits a bounded time.

use crate::connect::{open_control, open_data_stream, udp_handshake, ClientConfig};
use crate::control_conn::ControlConn;
use crate::control_wait;
pub use crate::control_wait::flush;
use crate::engine::DataSocket;
use crate::error::RunError;
use sonde_proto::message::{Results, Stop};
use sonde_proto::preamble::data_preamble;
use sonde_proto::session::{ClientEvent, ClientSession};
use sonde_stats::model::CpuUsage;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Longest wait for one control step.
pub const STEP: Duration = Duration::from_secs(30);
/// Longest wait for the server's results after Ctrl-C.
pub const STEP_INTERRUPTED: Duration = Duration::from_secs(5);

/// What the server must list to run the test, and what to tell the user when it does not.
pub struct Needs {
    pub capability: &'static str,
    pub what: &'static str,
}

/// A refusal or an abort among the session's events, as the error it is.
fn refusal_as_error(ev: ClientEvent) -> Result<ClientEvent, RunError> {
    match ev {
        ClientEvent::Aborted(r) => Err(RunError::PeerAborted(r)),
        ClientEvent::Refused(r) => Err(RunError::ServerRefused {
            code: r.code.as_str().to_string(),
            message: r.message,
        }),
        ev => Ok(ev),
    }
}

/// The next session event within [`STEP`], Ctrl-C ending the wait; refusals and aborts as
/// errors.
fn next_event(
    conn: &mut ControlConn,
    s: &mut ClientSession,
    what: &'static str,
    interrupt: &AtomicBool,
) -> Result<ClientEvent, RunError> {
    control_wait::next_event(conn, s, what, STEP, Some(interrupt)).and_then(refusal_as_error)
}

/// Connects the control session (`server` is filled in as soon as it is known).
pub fn connect(
    cfg: &ClientConfig,
    server: &mut String,
    interrupt: &AtomicBool,
) -> Result<(ControlConn, ClientSession, SocketAddr), RunError> {
    let c = open_control(cfg, interrupt)?;
    *server = c.server.to_string();
    Ok((c.conn, c.session, c.server))
}

/// From the hello to the server's confirmation of the one UDP stream; the start is queued
/// (flushed) when this returns.
pub fn open_stream(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    conn: &mut ControlConn,
    s: &mut ClientSession,
    server: SocketAddr,
    needs: &Needs,
) -> Result<UdpSocket, RunError> {
    flush(conn, s)?;
    match next_event(conn, s, "the server's welcome", interrupt)? {
        ClientEvent::Welcomed { caps, software, .. } => {
            if !caps.iter().any(|c| c == needs.capability) {
                return Err(RunError::PeerLacks {
                    software,
                    capability: needs.capability,
                    what: needs.what,
                    instead: "run sonde server from this release on the far end",
                });
            }
            s.request();
            flush(conn, s)?;
        }
        _ => return Err(RunError::Protocol("expected the server's welcome".into())),
    }
    let cookie = match next_event(conn, s, "the server to accept the test", interrupt)? {
        ClientEvent::Accepted { cookie } => cookie,
        _ => return Err(RunError::Protocol("expected the test's acceptance".into())),
    };
    let (sock, _) = open_data_stream(cfg, server, 1, &data_preamble(&cookie, 1), |u| {
        udp_handshake(u, &cookie, 1, interrupt)
    })?;
    let DataSocket::Udp(sock) = sock else {
        return Err(RunError::Setup(
            "the test's stream is not a UDP socket".into(),
        ));
    };
    match next_event(conn, s, "the server to confirm the data stream", interrupt)? {
        ClientEvent::StreamsReady => {}
        _ => return Err(RunError::Protocol("expected streams-ready".into())),
    }
    flush(conn, s)?; // the Start
    Ok(sock)
}

/// Stops the test and exchanges results: the server's CPU figures. After Ctrl-C
/// (`interrupted`) the server gets [`STEP_INTERRUPTED`] to answer, not [`STEP`]: the user
/// wants to stop, and the transfer's own figures are already kept.
pub fn close(
    conn: &mut ControlConn,
    s: &mut ClientSession,
    cpu_local: CpuUsage,
    interrupted: bool,
) -> Result<CpuUsage, RunError> {
    s.stop(Stop {
        sent: Vec::new(),
        stopped_at_ns: None,
    });
    flush(conn, s)?;
    let wait = if interrupted { STEP_INTERRUPTED } else { STEP };
    let peer = loop {
        match control_wait::next_event(conn, s, "the server's results", wait, None)
            .and_then(refusal_as_error)?
        {
            ClientEvent::PeerResults(r) => break r,
            ClientEvent::LiveInterval(_) => {}
            _ => return Err(RunError::Protocol("expected the server's results".into())),
        }
    };
    s.send_results(Results {
        cpu: cpu_local,
        ..Results::default()
    });
    let _ = flush(conn, s);
    Ok(peer.cpu)
}

/// Handles a control message if one is already here, without waiting (the control
/// connection's own reads wait up to a poll slice, far too long between datagrams); the
/// server's abort is an error.
pub fn watch_control(conn: &mut ControlConn, s: &mut ClientSession) -> Result<(), RunError> {
    if let Some(m) = conn.try_recv()? {
        s.handle(m).map_err(|e| RunError::Protocol(e.to_string()))?;
        if let Some(ClientEvent::Aborted(r)) = s.poll_event() {
            return Err(RunError::PeerAborted(r));
        }
    }
    Ok(())
}

/// Tells the server why the test ends early (unless it ended the test itself).
pub fn abort_on(conn: &mut ControlConn, s: &mut ClientSession, e: &RunError) {
    if !e.peer_ended() {
        s.abort(&e.to_string());
        let _ = flush(conn, s);
    }
}
