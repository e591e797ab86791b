//! `sonde client`: drives one test against a sonde server.
//!
//! Connects, negotiates, opens the data streams (UDP ones with retransmitted hellos), runs the
//! local engine, decides the end (time, bytes or blocks), exchanges results and emits events.
//! Whatever ends the test (Ctrl-C, a dead server, a refused request) the events seen so far and
//! a partial summary are still delivered.

use crate::control_conn::ControlConn;
use crate::control_wait;
pub(crate) use crate::control_wait::flush;
use crate::engine::{DataSocket, Engine, LocalStream};
use crate::error::RunError;
use crate::peer_rows::PeerRowOrder;
use crate::sockets;
use crate::streams::{Budget, StreamConfig};
use sonde_platform::cpu;
use sonde_platform::host::software;
use sonde_platform::resolve::resolve;
use sonde_proto::message::{PeerStream, ProcessLoad, Results, Stop, TestParams};
use sonde_proto::preamble::{cookie_hex, data_preamble, Cookie, CONTROL_MAGIC};
use sonde_proto::session::{ClientEvent, ClientSession};
use sonde_proto::udp_hello::{Hello, HelloAck};
use sonde_stats::live_totals::LiveTotals;
use sonde_stats::model::{
    ConnectedStream, Direction, Event, IntervalReport, Protocol, Role, SocketFigures, StreamRole,
    TestStart, TestSummary,
};
use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The address family of [`ClientConfig::family`], re-exported where the configuration is.
pub use crate::client_checks::check_receiving;
use crate::client_checks::{check_capabilities, check_congestion};
pub use sonde_platform::resolve::Family;

/// What `sonde client` was asked to do.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub host: String,
    pub port: u16,
    pub family: Family,
    pub cport: Option<u16>,
    pub params: TestParams,
    pub connect_timeout: Duration,
    /// Where this client's sockets leave from (`-B`, `--bind-dev`).
    pub local: sockets::ClientSockets,
    /// A test whose data stops arriving this long while this end receives fails
    /// (`--rcv-timeout`); None waits as long as the test lasts.
    pub rcv_timeout: Option<Duration>,
    /// TCP (`-F`): this end's senders send the file, its receivers write into it.
    pub file: Option<std::path::PathBuf>,
}

/// How a client run ended: the summary when the test got far enough to have one, and the
/// error when it did not complete.
pub struct ClientOutcome {
    pub summary: Option<TestSummary>,
    pub error: Option<RunError>,
    /// The test as the server reported it (start, its intervals, its summary), rebuilt from
    /// what it sent: for `--get-server-output`. Complete tests only.
    pub server_view: Option<Vec<Event>>,
    /// The server process's CPU time over the test, when the server has `cpu-load` and its
    /// figures pass [`ProcessLoad::checked`]; `None` from any other server.
    pub server_load: Option<ProcessLoad>,
}

/// Longest wait for one control step (accept, streams ready, results). Generous because
/// sonde measures lossy links: at 30 % loss each way a control segment can need several TCP
/// retransmissions with doubling timeouts (1, 2, 4, 8 s), and the test must still report.
const STEP: Duration = Duration::from_secs(30);
/// How long waiting for a control message may take: one read of the control connection.
const CONTROL_WAIT: Duration = crate::control_conn::POLL_SLICE;
const HELLO_RETRY: Duration = Duration::from_millis(100);
/// How long a UDP stream's hello is repeated (every [`HELLO_RETRY`]) before set-up fails: at
/// 30 % loss each way half the round trips fail, so 300 attempts leave no realistic doubt
/// that the port is really blocked.
const HELLO_DEADLINE: Duration = Duration::from_secs(30);

/// Connects to the first of `addrs` that answers within `timeout` (the sonde and iperf3
/// clients' control connection); the error is the last address's.
pub(crate) fn connect_control(
    addrs: &[SocketAddr],
    local: &sockets::ClientSockets,
    timeout: Duration,
) -> Result<TcpStream, RunError> {
    let mut last = None;
    for a in addrs {
        match sockets::connect_plain(*a, local, timeout) {
            Ok(s) => return Ok(s),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                last = Some(RunError::Refused {
                    addr: a.to_string(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                last = Some(RunError::ConnectTimeout {
                    addr: a.to_string(),
                    secs: timeout.as_secs(),
                })
            }
            Err(e) => {
                last = Some(RunError::Connect {
                    addr: a.to_string(),
                    source: e,
                })
            }
        }
    }
    Err(last.unwrap_or(RunError::Setup("no address to connect to".into())))
}

/// A sonde control connection, just opened: the magic sent, the session ready to send its
/// hello.
pub(crate) struct OpenControl {
    pub conn: ControlConn,
    pub session: ClientSession,
    pub server: SocketAddr,
    pub local: SocketAddr,
}

/// Opens the control connection of every sonde-protocol client (`sonde client`, `--coded`,
/// `capacity`, `profile` and all that run them): connects to the first of `cfg.host`'s
/// addresses that answers, sends the magic and makes the session for `cfg.params`, holding
/// the pre-shared key of `cfg.local` (`--psk-file`) to answer a keyed server's challenge.
/// The one place a client's key reaches its session.
pub(crate) fn open_control(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
) -> Result<OpenControl, RunError> {
    let addrs = resolve(&cfg.host, cfg.port, cfg.family, interrupt)?;
    let mut tcp = connect_control(&addrs, &cfg.local, cfg.connect_timeout)?;
    let server = tcp.peer_addr().map_err(RunError::ControlIo)?;
    let local_addr = tcp.local_addr().map_err(RunError::ControlIo)?;
    tcp.write_all(CONTROL_MAGIC).map_err(RunError::ControlIo)?;
    let mut conn = ControlConn::new(tcp).map_err(RunError::ControlIo)?;
    conn.opened_with(CONTROL_MAGIC);
    let mut session = ClientSession::new(cfg.params.clone(), &software());
    if let Some(k) = &cfg.local.psk {
        session.set_psk(k.clone());
    }
    Ok(OpenControl {
        conn,
        session,
        server,
        local: local_addr,
    })
}

/// Runs one test. Events go to `emit` as they happen; the outcome says how it ended.
pub fn run(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    emit: &mut dyn FnMut(Event),
) -> ClientOutcome {
    let mut run = ClientRun {
        cfg,
        interrupt,
        emit,
        engine: None,
        cpu_span: None,
        peer_results: None,
        peer_live: LiveTotals::new(),
        peer_rows: PeerRowOrder::new(),
        server_events: Vec::new(),
        own_results: None,
    };
    match run.execute() {
        Ok(summary) => ClientOutcome {
            summary: Some(summary),
            error: None,
            server_view: run.server_view(),
            server_load: run
                .peer_results
                .as_ref()
                .and_then(|r| r.process_load)
                .and_then(ProcessLoad::checked),
        },
        Err(e) => {
            let summary = run.partial_summary(&e);
            ClientOutcome {
                summary,
                error: Some(e),
                server_view: None,
                server_load: None,
            }
        }
    }
}

struct ClientRun<'a> {
    cfg: &'a ClientConfig,
    interrupt: &'a AtomicBool,
    emit: &'a mut dyn FnMut(Event),
    engine: Option<Engine>,
    cpu_span: Option<cpu::ProcessSpan>,
    peer_results: Option<Results>,
    /// The server's receive figures from its live reports, for a test cut short.
    peer_live: LiveTotals,
    /// Holds the server's live rows until this end's row of the same interval is out.
    peer_rows: PeerRowOrder,
    /// The server's start (as it saw it) and live intervals, for [`ClientRun::server_view`].
    server_events: Vec<Event>,
    /// The results this end sent the server.
    own_results: Option<Results>,
}

impl ClientRun<'_> {
    fn check_interrupt(&self) -> Result<(), RunError> {
        if self.interrupt.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        Ok(())
    }

    /// Waits for the next session event, feeding control messages in; Ctrl-C ends the wait.
    fn next_event(
        &mut self,
        conn: &mut ControlConn,
        s: &mut ClientSession,
        what: &'static str,
    ) -> Result<ClientEvent, RunError> {
        control_wait::next_event(conn, s, what, STEP, Some(self.interrupt))
    }

    fn execute(&mut self) -> Result<TestSummary, RunError> {
        let cfg = self.cfg;
        let OpenControl {
            mut conn,
            mut session,
            server,
            local,
        } = open_control(cfg, self.interrupt)?;
        let result = self.execute_connected(&mut conn, &mut session, server, local);
        if let Err(e) = &result {
            // Tell the server why, unless it is the one that ended the test.
            if !e.peer_ended() {
                session.abort(&e.to_string());
                let _ = flush(&mut conn, &mut session);
            }
        }
        result
    }

    /// Everything after the control connection is up, in protocol order: welcome and
    /// acceptance, the data streams, the test itself, then results both ways.
    fn execute_connected(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
        server: SocketAddr,
        local: SocketAddr,
    ) -> Result<TestSummary, RunError> {
        flush(conn, session)?;
        self.await_welcome(conn, session, server)?;
        let cookie = match self.next_event(conn, session, "the server to accept the test")? {
            ClientEvent::Accepted { cookie } => cookie,
            other => return Err(unexpected(other)),
        };
        let streams = self.open_streams(server, &cookie)?;
        let connected = connected_streams(&streams);
        let sockets = crate::start::socket_figures(
            &self.cfg.params,
            streams.iter().map(|(s, _, _)| (&s.socket, s.role)),
        );
        match self.next_event(conn, session, "the server to confirm the data streams")? {
            ClientEvent::StreamsReady => {}
            other => return Err(unexpected(other)),
        }
        // The clock starts before the Start leaves, and moves to the first data once there is
        // some (`Engine::settle_clock`); the server's starts at the Start or at the data.
        let congestion = self.start_engine(streams)?;
        flush(conn, session)?;
        let start = start_event(self.cfg, &server, &local, &cookie, (connected, sockets));
        self.server_events
            .push(Event::Start(Box::new(crate::start::as_seen_by_server(
                &start,
            ))));
        (self.emit)(Event::Start(Box::new(start)));
        self.run_until_end(conn, session)?;
        let (stop_at, peer) = self.stop_and_collect(conn, session)?;
        self.finish(conn, session, peer, stop_at, congestion)
    }

    /// Waits for the server's welcome and checks that it can run the test as asked.
    fn await_welcome(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
        server: SocketAddr,
    ) -> Result<(), RunError> {
        let cfg = self.cfg;
        let p = &cfg.params;
        let welcome = self
            .next_event(conn, session, "the server's welcome")
            .map_err(|e| match e {
                // Bytes that are not a sonde frame (an iperf3 state byte, say) mean another
                // protocol; a plain close does not (a lossy path, a server that gave up).
                RunError::Protocol(_) => RunError::NotSonde {
                    addr: server.to_string(),
                },
                e => e,
            })?;
        let server_cc = match welcome {
            ClientEvent::Welcomed {
                congestion_available,
                caps,
                software,
            } => {
                check_capabilities(p, &caps, software)?;
                congestion_available
            }
            other => return Err(unexpected(other)),
        };
        if let Some(algo) = &p.congestion {
            check_congestion(algo, &server_cc, p.direction)?;
        }
        session.request();
        flush(conn, session)
    }

    /// Starts this end's stream workers and the test clock; returns the congestion control
    /// the streams use.
    fn start_engine(
        &mut self,
        streams: Vec<(LocalStream, SocketAddr, SocketAddr)>,
    ) -> Result<Option<String>, RunError> {
        let p = &self.cfg.params;
        let send = StreamConfig {
            file: self.cfg.file.clone(),
            ..StreamConfig::for_test(p)
        };
        let budget = if p.direction == Direction::Reverse {
            None
        } else {
            Budget::new(p.bytes, p.blocks)
        };
        let local_streams = streams.into_iter().map(|(s, _, _)| s).collect();
        // Before the stream threads start: they send from the moment they exist.
        let span = cpu::ProcessSpan::start();
        let engine = Engine::start(
            p.protocol,
            local_streams,
            &send,
            budget,
            p.interval_secs,
            p.omit_secs,
            false,
        )
        .map_err(|e| RunError::Setup(format!("starting stream workers: {e}")))?;
        let congestion = engine.congestion();
        self.cpu_span = Some(span);
        self.engine = Some(engine);
        Ok(congestion)
    }

    /// Stops this end's senders, tells the server, and waits for its results (showing its
    /// live intervals meanwhile). Returns the stop time in test seconds and the results.
    fn stop_and_collect(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
    ) -> Result<(f64, Results), RunError> {
        let engine = running(&mut self.engine)?;
        let stop_at = engine.elapsed();
        engine.stop_senders(Duration::from_secs(3));
        session.stop(Stop {
            sent: engine.sent_counts(),
            stopped_at_ns: Some((stop_at * 1e9) as u64),
        });
        flush(conn, session)?;
        let peer = loop {
            match self.next_event(conn, session, "the server's results")? {
                ClientEvent::PeerResults(r) => break *r,
                ClientEvent::LiveInterval(r) => self.on_peer_interval(*r),
                other => return Err(unexpected(other)),
            }
        };
        Ok((stop_at, peer))
    }

    /// Drains what the server sent, sends this end's results (best effort: the test is
    /// complete) and emits the summary.
    fn finish(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
        peer: Results,
        stop_at: f64,
        congestion: Option<String>,
    ) -> Result<TestSummary, RunError> {
        let p = &self.cfg.params;
        let engine = running(&mut self.engine)?;
        engine.drain_receivers(&peer.sent, Engine::drain_grace(p.protocol));
        let sent_by_peer = |id| peer.sent.iter().find(|c| c.id == id).map(|c| c.packets);
        let local = final_views(engine, stop_at, &sent_by_peer, &mut *self.emit);
        // Whether a sender, here or at the server, fell behind its schedule.
        let slips = engine.slip_notes("client");
        // The server's, bounded: a few lines of reasonable length.
        let server_notes = peer
            .notes
            .iter()
            .take(sonde_proto::message::MAX_RESULT_NOTES)
            .map(|n| n.chars().take(400).collect::<String>());
        for note in slips.into_iter().chain(server_notes) {
            (self.emit)(Event::Note(note));
        }
        for r in self.peer_rows.finish() {
            (self.emit)(Event::PeerInterval(r));
        }
        engine.join();
        // Set with the engine in `start_engine`; the fallback is never taken.
        let cpu_local = self.cpu_span.map(|s| s.usage()).unwrap_or_default();
        let own = Results {
            process_load: None,
            cpu: cpu_local,
            congestion: congestion.clone(),
            streams: local.clone(),
            sent: engine.sent_counts(),
            notes: Vec::new(),
            profile: Vec::new(),
        };
        self.own_results = Some(own.clone());
        session.send_results(own);
        let _ = flush(conn, session);
        let summary = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Client,
            params: p,
            local: &local,
            peer: Some(&peer),
            cpu_local,
            local_congestion: congestion,
            error: None,
        });
        self.peer_results = Some(peer);
        (self.emit)(Event::End(Box::new(summary.clone())));
        Ok(summary)
    }

    /// Runs the test until its end condition (time, bytes, blocks), showing intervals; a
    /// failed stream, an abort from the server or Ctrl-C end it with an error.
    fn run_until_end(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
    ) -> Result<(), RunError> {
        let p = &self.cfg.params;
        let mut end = crate::end_condition::EndCondition::new(p);
        loop {
            self.check_interrupt()?;
            let engine = running(&mut self.engine)?;
            engine.settle_clock();
            let elapsed = engine.elapsed();
            if let Some(r) = engine.meter.tick(elapsed) {
                self.show_interval(r);
            }
            let engine = running(&mut self.engine)?;
            check_receiving(engine, self.cfg.rcv_timeout)?;
            if let Some(ending) = end.check(elapsed, engine.received_bytes(), engine.budget_done())
            {
                if let Some(note) = ending.note() {
                    (self.emit)(Event::Note(note));
                }
                return Ok(());
            }
            if let Some((id, e)) = engine.first_error() {
                if engine.has_senders() || !engine.receivers_finished() {
                    let failed = RunError::Stream {
                        id,
                        source: std::io::Error::other(e),
                    };
                    return Err(self.control_verdict(conn, session).unwrap_or(failed));
                }
            }
            let engine = running(&mut self.engine)?;
            if !engine.sleep_to_boundary(end.deadline(), CONTROL_WAIT) {
                self.serve_control(conn, session)?;
            }
        }
    }

    /// Handles one control message during the test, if one arrives within 5 ms: the
    /// server's live intervals are shown, an abort or anything else ends the test.
    fn serve_control(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
    ) -> Result<(), RunError> {
        if let Some(m) = conn.recv(Duration::from_millis(5))? {
            session
                .handle(m)
                .map_err(|e| RunError::Protocol(e.to_string()))?;
            while let Some(ev) = session.poll_event() {
                match ev {
                    ClientEvent::Aborted(reason) => return Err(RunError::PeerAborted(reason)),
                    ClientEvent::LiveInterval(r) => self.on_peer_interval(*r),
                    other => return Err(unexpected(other)),
                }
            }
        }
        Ok(())
    }

    /// Opens the data streams in id order, each announced with the test's cookie.
    fn open_streams(
        &mut self,
        server: SocketAddr,
        cookie: &Cookie,
    ) -> Result<Vec<(LocalStream, SocketAddr, SocketAddr)>, RunError> {
        let p = &self.cfg.params;
        let mut out = Vec::new();
        for id in 1..=p.stream_count() {
            self.check_interrupt()?;
            let role = if p.client_sends(id) {
                StreamRole::Sender
            } else {
                StreamRole::Receiver
            };
            let (socket, local) = self.open_stream(server, cookie, id)?;
            out.push((
                LocalStream {
                    id,
                    role,
                    socket,
                    ack: None,
                },
                local,
                server,
            ));
        }
        Ok(out)
    }

    /// Connects stream `id` and announces it: a TCP stream with the data preamble, a UDP one
    /// with hellos until the server acknowledges. Returns the socket and its local address.
    fn open_stream(
        &self,
        server: SocketAddr,
        cookie: &Cookie,
        id: u32,
    ) -> Result<(DataSocket, SocketAddr), RunError> {
        open_data_stream(self.cfg, server, id, &data_preamble(cookie, id), |s| {
            udp_handshake(s, cookie, id, self.interrupt)
        })
    }

    /// After a failure: stops the engine and emits the End with this end's figures so far
    /// (and the server's results if they had arrived). None when no engine ran.
    /// Why a data stream failed, as the control connection tells it within a moment: the
    /// server closed it (killed, crashed) or aborted the test with a reason. A reset data
    /// stream alone says neither.
    fn control_verdict(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
    ) -> Option<RunError> {
        let deadline = Instant::now() + Duration::from_millis(300);
        while Instant::now() < deadline {
            if let Err(e) = self.serve_control(conn, session) {
                return Some(e);
            }
        }
        None
    }

    /// A live row of the server: counted for a test cut short, shown in its place.
    fn on_peer_interval(&mut self, r: IntervalReport) {
        self.peer_live.add(&r);
        self.server_events.push(Event::Interval(r.clone()));
        for r in self.peer_rows.peer(r) {
            (self.emit)(Event::PeerInterval(r));
        }
    }

    /// The test as the server reported it: its start, its intervals and the summary it built
    /// from both ends' results (the same merge the server runs).
    fn server_view(&mut self) -> Option<Vec<Event>> {
        let (peer, own) = (self.peer_results.as_ref()?, self.own_results.as_ref()?);
        let summary = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Server,
            params: &self.cfg.params,
            local: &peer.streams,
            peer: Some(own),
            cpu_local: peer.cpu,
            local_congestion: peer.congestion.clone(),
            error: None,
        });
        let mut events = std::mem::take(&mut self.server_events);
        events.push(Event::End(Box::new(summary)));
        Some(events)
    }

    /// Shows this end's interval row, then the server's rows of the same span.
    fn show_interval(&mut self, r: IntervalReport) {
        let end = r.streams.iter().map(|s| s.end).fold(0.0, f64::max);
        (self.emit)(Event::Interval(r));
        for r in self.peer_rows.local(end) {
            (self.emit)(Event::PeerInterval(r));
        }
    }

    /// Shows the server's rows still held (see `peer_rows`).
    fn show_peer_after_stop(&mut self) {
        for r in self.peer_rows.finish() {
            (self.emit)(Event::PeerInterval(r));
        }
    }

    fn partial_summary(&mut self, e: &RunError) -> Option<TestSummary> {
        let mut engine = self.engine.take()?;
        let stop_at = engine.elapsed();
        engine.abort();
        let local = final_views(&mut engine, stop_at, &|_| None, &mut *self.emit);
        self.show_peer_after_stop();
        engine.join();
        let cpu_local = self.cpu_span.map(|s| s.usage()).unwrap_or_default();
        // The summary says it is partial; the reason is only the reason.
        let reason = e.to_string();
        // Without the server's results, what it reported live is its receive side so far.
        let from_live = self.peer_results.is_none() && !self.peer_live.is_empty();
        let live = from_live.then(|| Results {
            process_load: None,
            cpu: Default::default(),
            congestion: None,
            streams: self
                .peer_live
                .views()
                .map(|(id, v)| PeerStream {
                    id,
                    role: StreamRole::Receiver,
                    view: v.clone(),
                })
                .collect(),
            sent: Vec::new(),
            notes: Vec::new(),
            profile: Vec::new(),
        });
        let mut summary = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Client,
            params: &self.cfg.params,
            local: &local,
            peer: self.peer_results.as_ref().or(live.as_ref()),
            cpu_local,
            local_congestion: None,
            error: Some(reason),
        });
        if from_live {
            summary.cpu_remote = None; // the live reports carry no CPU figures
        }
        (self.emit)(Event::End(Box::new(summary.clone())));
        Some(summary)
    }
}

/// Connects data stream `id` of a client test to `server` with the test's socket options, and
/// announces it (the sonde and iperf3 clients differ only there): `tcp_announce` is written
/// on a TCP stream, `udp_announce` runs on a UDP one. Returns the socket and its local address.
pub(crate) fn open_data_stream(
    cfg: &ClientConfig,
    server: SocketAddr,
    id: u32,
    tcp_announce: &[u8],
    udp_announce: impl FnOnce(&UdpSocket) -> Result<(), RunError>,
) -> Result<(DataSocket, SocketAddr), RunError> {
    let p = &cfg.params;
    let cport = cfg.cport.map(|c| c.saturating_add((id - 1) as u16));
    let stream_err = |e| RunError::Stream { id, source: e };
    match p.protocol {
        Protocol::Tcp => {
            let mut s = sockets::connect_tcp(server, &cfg.local, cport, p, cfg.connect_timeout)?;
            s.write_all(tcp_announce).map_err(stream_err)?;
            let local = s.local_addr().map_err(stream_err)?;
            Ok((DataSocket::Tcp(s), local))
        }
        Protocol::Udp => {
            let s = sockets::connect_udp(server, &cfg.local, cport, p)?;
            udp_announce(&s)?;
            let local = s.local_addr().map_err(stream_err)?;
            Ok((DataSocket::Udp(s), local))
        }
    }
}

/// The engine of a running test; an error if there is none (a bug, not a peer's doing).
pub(crate) fn running(engine: &mut Option<Engine>) -> Result<&mut Engine, RunError> {
    engine
        .as_mut()
        .ok_or(RunError::Setup("engine missing".into()))
}

/// Each local stream's final figures up to `stop_at`, after emitting the last (partial)
/// interval. `sent_by_peer` is how many datagrams the peer sent on a UDP stream received here.
fn final_views(
    engine: &mut Engine,
    stop_at: f64,
    sent_by_peer: &dyn Fn(u32) -> Option<u64>,
    emit: &mut dyn FnMut(Event),
) -> Vec<PeerStream> {
    if let Some(r) = engine.meter.finish(stop_at) {
        emit(Event::Interval(r));
    }
    engine
        .meter
        .end_views(stop_at, sent_by_peer, None)
        .into_iter()
        .map(|(id, role, view)| PeerStream { id, role, view })
        .collect()
}

/// The streams as the start event lists them.
fn connected_streams(streams: &[(LocalStream, SocketAddr, SocketAddr)]) -> Vec<ConnectedStream> {
    streams
        .iter()
        .map(|(s, l, r)| ConnectedStream {
            id: s.id,
            role: s.role,
            local: l.to_string(),
            remote: r.to_string(),
        })
        .collect()
}

pub(crate) fn unexpected(ev: ClientEvent) -> RunError {
    match ev {
        ClientEvent::Refused(r) => RunError::ServerRefused {
            code: format!("{:?}", r.code).to_lowercase(),
            message: r.message,
        },
        ClientEvent::Aborted(reason) => RunError::PeerAborted(reason),
        other => RunError::Protocol(format!("unexpected event {other:?}")),
    }
}

/// Sends the stream's hello until the server acknowledges it (survives loss of either).
pub(crate) fn udp_handshake(
    sock: &UdpSocket,
    cookie: &Cookie,
    id: u32,
    interrupt: &AtomicBool,
) -> Result<(), RunError> {
    let hello = Hello {
        cookie: *cookie,
        stream_id: id,
    }
    .emit();
    let want = HelloAck {
        cookie: *cookie,
        stream_id: id,
    };
    let deadline = Instant::now() + HELLO_DEADLINE;
    let _ = sock.set_read_timeout(Some(HELLO_RETRY));
    let mut buf = [0u8; 2048];
    let mut attempts = 0u32;
    while Instant::now() < deadline {
        if interrupt.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let _ = sock.send(&hello);
        attempts += 1;
        let wait_until = Instant::now() + HELLO_RETRY;
        while Instant::now() < wait_until {
            match sock.recv(&mut buf) {
                Ok(n) if HelloAck::parse(&buf[..n]) == Ok(want) => {
                    let _ = sock.set_read_timeout(None);
                    return Ok(());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    Err(RunError::Setup(format!(
        "UDP stream {id}: no acknowledgement from the server after {attempts} hellos in {} s (is UDP port blocked?)",
        HELLO_DEADLINE.as_secs()
    )))
}

fn start_event(
    cfg: &ClientConfig,
    server: &SocketAddr,
    local: &SocketAddr,
    cookie: &Cookie,
    (connected, sockets): (Vec<ConnectedStream>, SocketFigures),
) -> TestStart {
    crate::start::start_event(
        &cfg.params,
        crate::start::StartContext {
            role: Role::Client,
            local: local.to_string(),
            remote: server.to_string(),
            server_port: cfg.port,
            cookie: cookie_hex(cookie),
            interval_secs: cfg.params.interval_secs,
            connected,
            sockets,
        },
    )
}
