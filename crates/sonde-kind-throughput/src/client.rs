//! The throughput client: one test against a sonde server, from the control connection to
//! the summary.

use sonde_platform::cpu;
use sonde_proto::message::{PeerStream, ProcessLoad, Results, Stop};
use sonde_proto::preamble::{cookie_hex, data_preamble, Cookie};
use sonde_proto::session::{ClientEvent, ClientSession};
use sonde_runtime_core::client_checks::{check_capabilities, check_congestion, check_receiving};
use sonde_runtime_core::connect::{
    open_control, open_data_stream, open_streams, udp_handshake, OpenControl,
};
use sonde_runtime_core::connect::{running, unexpected};
use sonde_runtime_core::control_conn::ControlConn;
use sonde_runtime_core::control_wait::{self, flush};
use sonde_runtime_core::engine::{Engine, LocalStream};
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::peer_rows::PeerRowOrder;
use sonde_runtime_core::start::link_pair;
use sonde_runtime_core::streams::{Budget, StreamConfig};
use sonde_stats::link::LinkFacts;
use sonde_stats::live_totals::LiveTotals;
use sonde_stats::model::{
    ConnectedStream, Direction, Event, IntervalReport, Role, SocketFigures, StreamRole, TestStart,
    TestSummary,
};
use sonde_stats::sink::{deliver, Sink};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sonde_runtime_core::connect::{ClientConfig, ClientOutcome};

/// Longest wait for one control step (accept, streams ready, results). Generous because
/// sonde measures lossy links: at 30 % loss each way a control segment can need several TCP
/// retransmissions with doubling timeouts (1, 2, 4, 8 s), and the test must still report.
const STEP: Duration = Duration::from_secs(30);
/// How long waiting for a control message may take: one read of the control connection.
const CONTROL_WAIT: Duration = sonde_runtime_core::control_conn::POLL_SLICE;
/// Runs one test. Events go to `emit` as they happen; the outcome says how it ended.
pub fn run(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<Event>,
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
    emit: &'a mut dyn Sink<Event>,
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
        let server_link = self.await_welcome(conn, session, server)?;
        let cookie = match self.next_event(conn, session, "the server to accept the test")? {
            ClientEvent::Accepted { cookie } => cookie,
            other => return Err(unexpected(other)),
        };
        let streams = self.open_streams(server, &cookie)?;
        let connected = connected_streams(&streams);
        let sockets = sonde_runtime_core::start::socket_figures(
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
        let mut start = start_event(self.cfg, &server, &local, &cookie, (connected, sockets));
        start.link = Some(link_pair(&local, &server, server_link));
        self.server_events.push(Event::Start(Box::new(
            sonde_runtime_core::start::as_seen_by_server(&start),
        )));
        deliver(self.emit, &Event::Start(Box::new(start)));
        self.run_until_end(conn, session)?;
        let (stop_at, peer) = self.stop_and_collect(conn, session)?;
        self.finish(conn, session, peer, stop_at, congestion)
    }

    /// Waits for the server's welcome and checks that it can run the test as asked; returns
    /// the server's link facts, if it sent them.
    fn await_welcome(
        &mut self,
        conn: &mut ControlConn,
        session: &mut ClientSession,
        server: SocketAddr,
    ) -> Result<Option<LinkFacts>, RunError> {
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
        let (server_cc, link) = match welcome {
            ClientEvent::Welcomed {
                congestion_available,
                caps,
                software,
                link,
            } => {
                check_capabilities(p, &caps, software)?;
                (congestion_available, link.map(|l| *l))
            }
            other => return Err(unexpected(other)),
        };
        if let Some(algo) = &p.congestion {
            check_congestion(algo, &server_cc, p.direction)?;
        }
        session.request();
        flush(conn, session)?;
        Ok(link)
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
            deliver(self.emit, &Event::Note(note));
        }
        for r in self.peer_rows.finish() {
            deliver(self.emit, &Event::PeerInterval(r));
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
        let summary =
            sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
                role: Role::Client,
                params: p,
                local: &local,
                peer: Some(&peer),
                cpu_local,
                local_congestion: congestion,
                error: None,
            });
        self.peer_results = Some(peer);
        deliver(self.emit, &Event::End(Box::new(summary.clone())));
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
        let mut end = sonde_runtime_core::end_condition::EndCondition::new(p);
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
                    deliver(self.emit, &Event::Note(note));
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

    /// Opens the data streams in id order, each announced with the test's cookie: a TCP
    /// stream with the data preamble, a UDP one with hellos until the server acknowledges.
    fn open_streams(
        &mut self,
        server: SocketAddr,
        cookie: &Cookie,
    ) -> Result<Vec<(LocalStream, SocketAddr, SocketAddr)>, RunError> {
        let (cfg, interrupt) = (self.cfg, self.interrupt);
        let opened = open_streams(&cfg.params, interrupt, |id| {
            open_data_stream(cfg, server, id, &data_preamble(cookie, id), |s| {
                udp_handshake(s, cookie, id, interrupt)
            })
        })?;
        Ok(opened
            .into_iter()
            .map(|o| {
                let stream = LocalStream {
                    id: o.id,
                    role: o.role,
                    socket: o.socket,
                    ack: None,
                };
                (stream, o.local, server)
            })
            .collect())
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
            deliver(self.emit, &Event::PeerInterval(r));
        }
    }

    /// The test as the server reported it: its start, its intervals and the summary it built
    /// from both ends' results (the same merge the server runs).
    fn server_view(&mut self) -> Option<Vec<Event>> {
        let (peer, own) = (self.peer_results.as_ref()?, self.own_results.as_ref()?);
        let summary =
            sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
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
        deliver(self.emit, &Event::Interval(r));
        for r in self.peer_rows.local(end) {
            deliver(self.emit, &Event::PeerInterval(r));
        }
    }

    /// Shows the server's rows still held (see `peer_rows`).
    fn show_peer_after_stop(&mut self) {
        for r in self.peer_rows.finish() {
            deliver(self.emit, &Event::PeerInterval(r));
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
            streams: self
                .peer_live
                .views()
                .map(|(id, v)| PeerStream {
                    id,
                    role: StreamRole::Receiver,
                    view: v.clone(),
                })
                .collect(),
            ..Results::default()
        });
        let mut summary =
            sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
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
        deliver(self.emit, &Event::End(Box::new(summary.clone())));
        Some(summary)
    }
}

/// Each local stream's final figures up to `stop_at`, after emitting the last (partial)
/// interval. `sent_by_peer` is how many datagrams the peer sent on a UDP stream received here.
fn final_views(
    engine: &mut Engine,
    stop_at: f64,
    sent_by_peer: &dyn Fn(u32) -> Option<u64>,
    emit: &mut dyn Sink<Event>,
) -> Vec<PeerStream> {
    if let Some(r) = engine.meter.finish(stop_at) {
        deliver(emit, &Event::Interval(r));
    }
    engine.meter.peer_streams(stop_at, sent_by_peer, None)
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

fn start_event(
    cfg: &ClientConfig,
    server: &SocketAddr,
    local: &SocketAddr,
    cookie: &Cookie,
    (connected, sockets): (Vec<ConnectedStream>, SocketFigures),
) -> TestStart {
    sonde_runtime_core::start::start_event(
        &cfg.params,
        sonde_runtime_core::start::StartContext {
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
