//! `sonde profile run`: one profile against a sonde server, from the hello to both ends'
//! figures. Ctrl-C stops the senders early and still collects and reports what was measured.

use super::workers::{ProfileStream, Workers};
use sonde_platform::resolve::Family;
use sonde_platform::sockopt;
use sonde_profile::receive::StreamReceiver;
use sonde_profile::result::{DelayBasis, ProfileReport, StreamResult, MAX_EXCEPTIONS};
use sonde_profile::schedule::Schedule;
use sonde_profile::Profile;
use sonde_proto::message::{ProfileRequest, Results, SentCount, Stop, TestParams, PROFILE_GAP};
use sonde_proto::preamble::Cookie;
use sonde_proto::session::{ClientEvent, ClientSession};
use sonde_runtime_core::connect::{open_control, open_data_stream, udp_handshake, unexpected};
use sonde_runtime_core::connect::{ClientConfig, OpenControl};
use sonde_runtime_core::control_conn::ControlConn;
use sonde_runtime_core::control_wait::flush;
use sonde_runtime_core::engine::DataSocket;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::sockets::ClientSockets;
use sonde_stats::model::{Direction, Protocol};
use sonde_stats::sink::{deliver, ProgressNote, Sink};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest wait for one control step (as the throughput client: lossy links are the point).
const STEP: Duration = Duration::from_secs(30);
/// Longest wait for the server's results after Ctrl-C: the user wants to stop.
const STEP_INTERRUPTED: Duration = Duration::from_secs(5);

/// What `sonde profile run` was asked to do.
#[derive(Debug, Clone)]
pub struct ProfileConfig {
    pub host: String,
    pub port: u16,
    pub family: Family,
    pub local: ClientSockets,
    pub connect_timeout: Duration,
    pub request: ProfileRequest,
}

/// How a run ended: the figures measured (partial when it ended early) and the error, if any.
pub struct ProfileOutcome {
    pub report: Option<ProfileReport>,
    pub error: Option<RunError>,
}

impl ProfileConfig {
    /// The test request that carries the profile: UDP, one data stream per profile stream.
    fn params(&self) -> TestParams {
        let p = &self.request.profile;
        TestParams {
            protocol: Protocol::Udp,
            direction: Direction::Upload,
            parallel: p.streams.len() as u32,
            duration_secs: p.duration_s,
            length: sonde_stats::units::Size::from_bytes(p.max_size().into()),
            rate: sonde_stats::units::Rate::from_bits_per_sec(p.max_stream_bitrate().max(1)),
            interval_secs: 0.0,
            profile: Some(self.request.clone()),
            ..TestParams::default()
        }
    }
}

/// Runs the profile with the clocks as its request states them (synced, an offset already
/// measured, or neither: delays above each stream's fastest datagram); `note` receives
/// progress lines for the user. `sonde_runtime::profile_run::run` measures the offset first.
pub fn run_as_requested(
    cfg: &ProfileConfig,
    interrupt: &AtomicBool,
    note: &mut dyn Sink<ProgressNote>,
) -> ProfileOutcome {
    let ccfg = ClientConfig {
        host: cfg.host.clone(),
        port: cfg.port,
        family: cfg.family,
        cport: None,
        params: cfg.params(),
        connect_timeout: cfg.connect_timeout,
        local: cfg.local.clone(),
        rcv_timeout: None,
        file: None,
    };
    let mut run = Run {
        cfg,
        ccfg: &ccfg,
        interrupt,
        note,
        workers: None,
        t0: None,
        stopped_at: None,
        ended_early: None,
    };
    let result = run.execute();
    match result {
        Ok(report) => ProfileOutcome {
            report: Some(report),
            error: None,
        },
        Err(e) => ProfileOutcome {
            report: run.partial(&e),
            error: Some(e),
        },
    }
}

/// What a profile needs of the server: profiles at all, and spaced bursts when a stream has a
/// gap (a server from before gaps closes the connection on one, without a word the client
/// could show).
fn server_can_run(profile: &Profile, caps: &[String], software: String) -> Result<(), RunError> {
    let has = |c: &str| caps.iter().any(|x| x == c);
    if !has("profile") {
        return Err(RunError::PeerLacks {
            software,
            capability: "profile",
            what: "run traffic profiles",
            instead: "run the profile against a newer sonde server",
        });
    }
    if profile.streams.iter().any(|s| s.gap_ns() > 0) && !has(PROFILE_GAP) {
        return Err(RunError::PeerLacks {
            software,
            capability: PROFILE_GAP,
            what: "space the datagrams of a burst (a stream's gap)",
            instead: "leave the gaps out of the profile",
        });
    }
    Ok(())
}

struct Run<'a> {
    cfg: &'a ProfileConfig,
    ccfg: &'a ClientConfig,
    interrupt: &'a AtomicBool,
    note: &'a mut dyn Sink<ProgressNote>,
    workers: Option<Workers>,
    t0: Option<Instant>,
    stopped_at: Option<f64>,
    ended_early: Option<String>,
}

impl Run<'_> {
    fn execute(&mut self) -> Result<ProfileReport, RunError> {
        let OpenControl {
            mut conn,
            mut session,
            server,
            ..
        } = open_control(self.ccfg, self.interrupt)?;
        let result = self.connected(&mut conn, &mut session, server);
        if let Err(e) = &result {
            if !e.peer_ended() {
                session.abort(&e.to_string());
                let _ = flush(&mut conn, &mut session);
            }
        }
        result
    }

    fn connected(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
        server: SocketAddr,
    ) -> Result<ProfileReport, RunError> {
        flush(conn, session)?;
        match self.next_event(conn, session, "the server's welcome", STEP, true)? {
            ClientEvent::Welcomed { caps, software, .. } => {
                server_can_run(&self.cfg.request.profile, &caps, software)?;
                session.request();
                flush(conn, session)?;
            }
            other => return Err(unexpected(other)),
        }
        let cookie = match self.next_event(
            conn,
            session,
            "the server to accept the profile",
            STEP,
            true,
        )? {
            ClientEvent::Accepted { cookie } => cookie,
            other => return Err(unexpected(other)),
        };
        let (send, receive) = self.open_streams(server, &cookie)?;
        match self.next_event(
            conn,
            session,
            "the server to confirm the data streams",
            STEP,
            true,
        )? {
            ClientEvent::StreamsReady => {}
            other => return Err(unexpected(other)),
        }
        let profile = &self.cfg.request.profile;
        let mut workers = Workers::new(send, receive, profile.duration_s)
            .map_err(|e| RunError::Setup(format!("starting stream threads: {e}")))?;
        let t0 = Instant::now();
        workers
            .start(t0)
            .map_err(|e| RunError::Setup(format!("starting stream threads: {e}")))?;
        self.workers = Some(workers);
        self.t0 = Some(t0);
        flush(conn, session)?;
        deliver(
            self.note,
            &ProgressNote(format!(
                "running profile {} ({} streams) against {server} for {} s",
                profile.name,
                profile.streams.len(),
                profile.duration_s
            )),
        );
        self.until_end(conn, session)?;
        self.stop_and_report(conn, session)
    }

    /// Waits for the next session event, feeding control messages in; Ctrl-C ends the wait
    /// only when `interruptible`.
    fn next_event(
        &mut self,
        conn: &mut ControlConn,
        s: &mut ClientSession,
        what: &'static str,
        timeout: Duration,
        interruptible: bool,
    ) -> Result<ClientEvent, RunError> {
        let interrupt = interruptible.then_some(self.interrupt);
        sonde_runtime_core::control_wait::next_event(conn, s, what, timeout, interrupt)
    }

    /// Opens the data streams in id order; returns those this end sends and receives.
    fn open_streams(
        &mut self,
        server: SocketAddr,
        cookie: &Cookie,
    ) -> Result<(Vec<ProfileStream>, Vec<ProfileStream>), RunError> {
        let (mut send, mut receive) = (Vec::new(), Vec::new());
        let profile = &self.cfg.request.profile;
        for (i, spec) in profile.streams.iter().enumerate() {
            let id = i as u32 + 1;
            if self.interrupt.load(Ordering::Relaxed) {
                return Err(RunError::Interrupted);
            }
            let (socket, _) = open_data_stream(self.ccfg, server, id, &[], |s| {
                udp_handshake(s, cookie, id, self.interrupt)
            })?;
            let DataSocket::Udp(socket) = socket else {
                return Err(RunError::Setup("a profile stream must be UDP".into()));
            };
            set_dscp(&socket, id, spec.dscp)?;
            let stream = ProfileStream {
                id,
                spec: spec.clone(),
                socket,
                ack: None,
            };
            if profile.client_sends(id) {
                send.push(stream);
            } else {
                receive.push(stream);
            }
        }
        Ok((send, receive))
    }

    /// Runs until the profile's duration has passed and both ends are through their plans,
    /// Ctrl-C (then the run stops early but still reports), or the server aborts. This end's
    /// senders say when they are through; the server's are when every datagram of its streams
    /// arrived, or, should some never arrive, a drain grace after the last was due. The server
    /// starts its senders a one-way trip after this end and a spaced burst due just before the
    /// end runs past it, so the Stop waits for them rather than cut them short.
    fn until_end(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
    ) -> Result<(), RunError> {
        let duration = self.cfg.request.profile.duration_s;
        let far_end_until = far_end_last_due_s(&self.cfg.request.profile)
            + drain_grace(&self.cfg.request).as_secs_f64();
        loop {
            let elapsed = self.t0.map(|t| t.elapsed().as_secs_f64()).unwrap_or(0.0);
            if self.interrupt.load(Ordering::Relaxed) {
                self.ended_early = Some(format!(
                    "interrupted (Ctrl-C) after {elapsed:.1} s; partial result"
                ));
                return Ok(());
            }
            let done = self.workers.as_ref().is_none_or(Workers::senders_done);
            let far_end_done = elapsed >= far_end_until
                || self
                    .workers
                    .as_ref()
                    .is_none_or(Workers::receivers_complete);
            if elapsed >= duration && done && far_end_done {
                return Ok(());
            }
            if let Some(m) = conn.recv(sonde_runtime_core::control_conn::POLL_SLICE)? {
                session
                    .handle(m)
                    .map_err(|e| RunError::Protocol(e.to_string()))?;
                while let Some(ev) = session.poll_event() {
                    match ev {
                        ClientEvent::LiveInterval(_) => {}
                        other => return Err(unexpected(other)),
                    }
                }
            }
        }
    }

    /// Stops the senders, exchanges the counts and results, and builds the report.
    fn stop_and_report(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
    ) -> Result<ProfileReport, RunError> {
        let workers = self
            .workers
            .as_mut()
            .ok_or(RunError::Setup("stream threads missing".into()))?;
        self.stopped_at = self.t0.map(|t| t.elapsed().as_secs_f64());
        let (sent, send_error) = workers.stop_senders();
        if let Some(e) = send_error {
            self.ended_early
                .get_or_insert(format!("a sender failed: {e}"));
        }
        session.stop(Stop {
            sent: sent.clone(),
            stopped_at_ns: None,
        });
        flush(conn, session)?;
        let wait = if self.ended_early.is_some() {
            STEP_INTERRUPTED
        } else {
            STEP
        };
        let peer = loop {
            match self.next_event(conn, session, "the server's results", wait, false)? {
                ClientEvent::PeerResults(r) => break *r,
                ClientEvent::LiveInterval(_) => {}
                other => return Err(unexpected(other)),
            }
        };
        let local = self.finish_receivers(&|id| count_of(&peer.sent, id));
        session.send_results(Results {
            sent,
            profile: local.clone(),
            ..Results::default()
        });
        let _ = flush(conn, session);
        Ok(self.report(peer.profile.into_iter().chain(local).collect()))
    }

    /// Drains this end's receivers (until the peer's counts arrived or a grace period) and
    /// turns their accounts into figures.
    fn finish_receivers(&mut self, peer_sent: &dyn Fn(u32) -> Option<u64>) -> Vec<StreamResult> {
        let Some(workers) = self.workers.as_mut() else {
            return Vec::new();
        };
        let request = &self.cfg.request;
        let grace = drain_grace(request);
        let accounts = workers.drain_receivers(peer_sent, grace);
        finish_all(&accounts, peer_sent, request, false)
    }

    fn report(&self, mut streams: Vec<StreamResult>) -> ProfileReport {
        streams.sort_by_key(|s| s.id);
        ProfileReport {
            profile: self.cfg.request.profile.name.clone(),
            planned_s: self.cfg.request.profile.duration_s,
            ran_s: self.stopped_at.unwrap_or(0.0),
            clock_synced: self.cfg.request.clock_synced,
            clock_offset: self.cfg.request.clock_offset,
            ended_early: self.ended_early.clone(),
            streams,
        }
    }

    /// After a failure: what this end received so far, if the streams ran at all.
    fn partial(&mut self, e: &RunError) -> Option<ProfileReport> {
        let workers = self.workers.as_mut()?;
        if self.stopped_at.is_none() {
            self.stopped_at = self.t0.map(|t| t.elapsed().as_secs_f64());
        }
        let _ = workers.stop_senders();
        let local = self.finish_receivers(&|_| None);
        self.ended_early = Some(format!(
            "{e}; partial result (only the streams this end received)"
        ));
        Some(self.report(local))
    }
}

/// Seconds after the start when the last datagram of the profile's from-server streams is
/// due (0 without any).
fn far_end_last_due_s(p: &Profile) -> f64 {
    p.streams
        .iter()
        .filter(|s| s.direction == sonde_profile::spec::Direction::FromServer)
        .filter_map(|s| Schedule::new(s, p.duration_s).last_send_ns())
        .max()
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

/// How long receivers wait for stragglers after the senders stopped: the largest late
/// threshold of the profile plus half a second, at most 3 s.
pub fn drain_grace(r: &ProfileRequest) -> Duration {
    let late = r
        .profile
        .streams
        .iter()
        .map(|s| s.late_ms)
        .fold(0.0, f64::max);
    Duration::from_secs_f64((late / 1000.0 + 0.5).min(3.0))
}

/// The figures of every account, with the exception records shared out over the streams;
/// `receiver_is_server` says which end's clock the receive times are on.
pub fn finish_all(
    accounts: &[StreamReceiver],
    peer_sent: &dyn Fn(u32) -> Option<u64>,
    r: &ProfileRequest,
    receiver_is_server: bool,
) -> Vec<StreamResult> {
    let (basis, correction) = match (r.clock_synced, r.clock_offset) {
        (true, _) => (DelayBasis::Synced, 0),
        (false, Some(o)) => (
            DelayBasis::OffsetEstimated,
            o.correction_ns(receiver_is_server),
        ),
        (false, None) => (DelayBasis::AboveMinimum, 0),
    };
    let cap = MAX_EXCEPTIONS / r.profile.streams.len().max(1);
    accounts
        .iter()
        .map(|a| a.finish(peer_sent(a.id()), basis, correction, cap))
        .collect()
}

/// The datagram count of stream `id` in `sent`.
pub fn count_of(sent: &[SentCount], id: u32) -> Option<u64> {
    sent.iter().find(|c| c.id == id).map(|c| c.packets)
}

/// Marks stream `id`'s datagrams with DiffServ code point `dscp` (0 leaves them unmarked).
///
/// # Errors
///
/// `RunError::Stream` of stream `id` when the socket refuses the TOS byte.
pub fn set_dscp(sock: &std::net::UdpSocket, id: u32, dscp: u8) -> Result<(), RunError> {
    if dscp == 0 {
        return Ok(());
    }
    sockopt::set_tos(sock, dscp << 2).map_err(|source| RunError::Stream { id, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(c: &[&str]) -> Vec<String> {
        c.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_profile_with_gaps_needs_a_server_that_spaces_bursts() {
        let spaced = sonde_profile::builtin::get("monitoring").unwrap();
        assert!(spaced.streams.iter().any(|s| s.gap_ns() > 0));
        let old = server_can_run(&spaced, &caps(&["profile"]), "sonde 0.0".into());
        let e = old.unwrap_err().to_string();
        assert!(e.contains(PROFILE_GAP) && e.contains("sonde 0.0"), "{e}");
        assert!(server_can_run(&spaced, &caps(&["profile", PROFILE_GAP]), "new".into()).is_ok());
        let mut back_to_back = spaced.clone();
        for s in &mut back_to_back.streams {
            s.gap = None;
        }
        assert!(server_can_run(&back_to_back, &caps(&["profile"]), "old".into()).is_ok());
        let none = server_can_run(&back_to_back, &caps(&[]), "older".into());
        assert!(none.unwrap_err().to_string().contains("profile"));
    }
}
