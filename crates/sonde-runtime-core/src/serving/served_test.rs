//! One test the sonde server serves, as a kind's server side sees it once the test is
//! admitted: the control connection and its session, the peer, the sink its events go to,
//! the server's rules for the test, and the waits every kind's side shares (the control
//! pump, refusals, the time limit, answering repeated UDP hellos).
//!
//! Kind-neutral: the server admits a test and collects its data streams, then hands this to
//! the kind the test asks for (`sonde-kind-*`'s `server::serve`), so a kind's server side
//! stands beside its client on the core and the server never needs to know a kind's loop.

use crate::control_conn::ControlConn;
use crate::control_wait::{self, ControlSide};
use crate::engine::{DataSocket, LocalStream};
use crate::error::RunError;
use crate::serving::policy::{self, Limits};
use crate::test_events::TestEvents;
use sonde_proto::message::{RefuseCode, TestParams};
use sonde_proto::session::{ServerEvent, ServerSession};
use sonde_proto::udp_hello::{Hello, HelloAck};
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{ConnectedStream, SocketFigures, StreamRole};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Longest wait for one control step of the client (hello, request, streams, start,
/// results). Generous because a lossy link is what sonde measures: at 30 % loss each way a
/// TCP segment can need several retransmissions, each after a doubled timeout (1, 2, 4, 8 s),
/// and the test must still set up and report rather than fail on its own control traffic.
pub const STEP: Duration = Duration::from_secs(30);

/// A data stream of this test with its local and remote addresses, as users read them.
pub type OpenStream = (LocalStream, String, String);

/// What the server's configuration says about one test, for the kind that serves it.
#[derive(Debug, Clone)]
pub struct TestRules {
    /// The server's control port, as the test's start event shows it.
    pub port: u16,
    /// The server's own report interval (`-i`); None uses the client's.
    pub interval_secs: Option<f64>,
    /// `--rcv-timeout`: data that stops arriving this long fails the test.
    pub rcv_timeout: Option<Duration>,
    /// The limits on a test (its duration, rate, streams).
    pub limits: Limits,
}

/// Writes one line to the server's log.
pub type LogLine<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// One admitted test on the server, from its client's hello to its done.
pub struct ServedTest<'a> {
    pub conn: ControlConn,
    pub session: ServerSession,
    /// The client, its address as users read it.
    pub peer: SocketAddr,
    pub events: TestEvents<'a>,
    /// The client listed `cpu-load`: its results get the process's CPU time over the test.
    pub cpu_load: bool,
    /// The process's CPU times when the test started (with `cpu_load`).
    pub process0: Option<CpuTimes>,
    pub rules: TestRules,
    interrupt: &'a AtomicBool,
    log: LogLine<'a>,
}

impl<'a> ServedTest<'a> {
    /// A test on `conn` with `peer`, its events to `events`, ended early by `interrupt`.
    pub fn new(
        conn: ControlConn,
        session: ServerSession,
        peer: SocketAddr,
        events: TestEvents<'a>,
        (rules, interrupt, log): (TestRules, &'a AtomicBool, LogLine<'a>),
    ) -> Self {
        Self {
            conn,
            session,
            peer,
            events,
            cpu_load: false,
            process0: None,
            rules,
            interrupt,
            log,
        }
    }

    /// Sends what the session queued.
    ///
    /// # Errors
    /// The control connection failed.
    pub fn flush(&mut self) -> Result<(), RunError> {
        while let Some(m) = self.session.poll_transmit() {
            self.conn.send(&m)?;
        }
        Ok(())
    }

    /// The server is shutting down.
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    /// The flag that says so, for a loop that watches it itself.
    pub fn interrupt_flag(&self) -> &'a AtomicBool {
        self.interrupt
    }

    /// Writes `line` to the server's log.
    pub fn log(&self, line: &str) {
        (self.log)(line);
    }

    /// Waits for the next session event (bounded); the client hears why a wait ended
    /// without one.
    ///
    /// # Errors
    /// The wait timed out, was interrupted, or the control connection failed.
    pub fn next_event(
        &mut self,
        timeout: Duration,
        what: &'static str,
    ) -> Result<ServerEvent, RunError> {
        let interrupt = self.interrupt;
        control_wait::wait(self, what, timeout, Some(interrupt))
    }

    /// Refuses the client with `code` and `msg`, logging it.
    ///
    /// # Errors
    /// The refusal could not be sent.
    pub fn refuse(&mut self, code: RefuseCode, msg: String) -> Result<(), RunError> {
        self.log(&format!("refused {}: {msg}", self.peer));
        self.session.refuse(code, &msg);
        self.flush()
    }

    /// Tells the client the test ends for `why` (sent at once, best effort).
    pub fn abort(&mut self, why: &str) {
        self.session.abort(why);
        let _ = self.flush();
    }

    /// How long (test seconds) the server lets a test run before giving up on the client:
    /// its duration with some slack, else the server's `--max-duration`, else no limit.
    pub fn time_limit(&self, p: &TestParams) -> f64 {
        policy::watchdog_secs(&self.rules.limits, p)
    }

    /// Reads one control message (waiting up to `timeout`) into the session and sends its
    /// answer; returns the session's next event, if it has one.
    ///
    /// # Errors
    /// The control connection failed or the client broke the protocol.
    pub fn pump(&mut self, timeout: Duration) -> Result<Option<ServerEvent>, RunError> {
        if let Some(m) = self.conn.recv(timeout)? {
            let r = self.session.handle(m);
            self.flush()?;
            r.map_err(|e| RunError::Protocol(e.to_string()))?;
        }
        Ok(self.session.poll_event())
    }
}

impl ControlSide for ServedTest<'_> {
    type Event = ServerEvent;

    fn ready_event(&mut self) -> Result<Option<ServerEvent>, RunError> {
        Ok(self.session.poll_event())
    }

    fn read_peer(&mut self) -> Result<(), RunError> {
        if let Some(m) = self.conn.recv(Duration::from_millis(50))? {
            let r = self.session.handle(m);
            self.flush()?;
            r.map_err(|e| RunError::Protocol(e.to_string()))?;
        }
        Ok(())
    }

    fn tell_interrupted(&mut self) {
        self.abort("the server is shutting down");
    }

    fn tell_timed_out(&mut self, what: &'static str) {
        self.abort(&format!("server timed out waiting for {what}"));
    }
}

/// The start event's list of the streams a server collected (in stream order) and the
/// figures the kernel gives for their sockets, as [`crate::start::StartContext`] takes them.
pub fn connected_streams(
    p: &TestParams,
    streams: &[OpenStream],
) -> (Vec<ConnectedStream>, SocketFigures) {
    let connected = streams
        .iter()
        .map(|(s, l, r)| ConnectedStream {
            id: s.id,
            role: s.role,
            local: l.clone(),
            remote: r.clone(),
        })
        .collect();
    let sockets =
        crate::start::socket_figures(p, streams.iter().map(|(s, _, _)| (&s.socket, s.role)));
    (connected, sockets)
}

/// Clones (nonblocking) of this end's sending UDP sockets with their hello acks. Hellos that
/// still arrive there (their ack was lost) are answered by the control loop; a receiving
/// socket's worker answers its own.
pub fn sending_udp_sockets(streams: &[OpenStream]) -> Vec<(UdpSocket, HelloAck)> {
    let reack: Vec<(UdpSocket, HelloAck)> = streams
        .iter()
        .filter(|(s, _, _)| s.role == StreamRole::Sender)
        .filter_map(|(s, _, _)| match (&s.socket, s.ack) {
            (DataSocket::Udp(u), Some(a)) => u.try_clone().ok().map(|c| (c, a)),
            _ => None,
        })
        .collect();
    for (u, _) in &reack {
        let _ = u.set_nonblocking(true);
    }
    reack
}

/// Re-acknowledges hellos that reached already-connected UDP stream sockets: the client
/// repeats its hello until it sees an acknowledgement, so a lost one must be answered again.
/// Answers hellos waiting on sending UDP sockets (nonblocking; only hellos arrive there).
pub fn reack_hellos(sockets: &[(UdpSocket, HelloAck)]) {
    for (u, ack) in sockets {
        reack_one(u, ack);
    }
}

/// Drains a nonblocking UDP socket, answering each hello with `ack`.
pub fn reack_one(u: &UdpSocket, ack: &HelloAck) {
    let mut b = [0u8; 64];
    while let Ok(n) = u.recv(&mut b) {
        if Hello::parse(&b[..n]).is_ok() {
            let _ = u.send(&ack.emit());
        }
    }
}

/// An address as users expect to read it (IPv4-mapped IPv6 shown as IPv4).
pub fn canonical(a: SocketAddr) -> String {
    SocketAddr::new(a.ip().to_canonical(), a.port()).to_string()
}
