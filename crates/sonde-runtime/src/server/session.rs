//! One test on the server: from the client's hello to its Done, in this connection's thread.

use super::registry::Arrival;
use super::Shared;
use crate::client::software;
use crate::control_conn::ControlConn;
use crate::engine::{DataSocket, Engine, LocalStream};
use crate::error::RunError;
use crate::os::{cpu, sockopt};
use crate::sockets;
use crate::streams::SendConfig;
use crate::test_events::TestEvents;
use sonde_proto::message::{PeerStream, RefuseCode, Results, SentCount, TestParams};
use sonde_proto::preamble::{cookie_hex, Cookie};
use sonde_proto::session::{ServerEvent, ServerSession};
use sonde_proto::udp_hello::HelloAck;
use sonde_stats::cpu::cpu_usage;
use sonde_stats::model::{ConnectedStream, Direction, Event, Role, StreamRole};
use sonde_stats::units::format_bitrate;
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait for one control step of the client (hello, request, streams, start,
/// results). Generous because a lossy link is what sonde measures: at 30 % loss each way a
/// TCP segment can need several retransmissions, each after a doubled timeout (1, 2, 4, 8 s),
/// and the test must still set up and report rather than fail on its own control traffic.
const STEP: Duration = Duration::from_secs(30);
/// Extra time a test may run beyond its duration before the server gives up on the client.
const WATCHDOG_SLACK: f64 = 30.0;

/// Serves one control connection, counting it against `--max-clients`.
pub(super) fn serve(stream: TcpStream, peer: SocketAddr, shared: &Arc<Shared>) {
    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    let active = shared.active.fetch_add(1, Ordering::SeqCst) + 1;
    let Ok(conn) = ControlConn::new(stream) else {
        shared.active.fetch_sub(1, Ordering::SeqCst);
        return;
    };
    let mut emit = (shared.sinks)(&peer.to_string());
    let mut run = SessionRun {
        shared,
        conn,
        session: ServerSession::new(&software(), sockopt::available_congestion()),
        peer,
        cookie: None,
        events: TestEvents::new(&mut *emit),
    };
    let over_limit = shared.cfg.max_clients.is_some_and(|m| active > m);
    let result = run.execute(over_limit);
    run.events.close(result.as_ref().err());
    if let Some(c) = run.cookie {
        shared.registry.remove(&c);
    }
    match result {
        Ok(()) => {}
        Err(RunError::PeerAborted(r)) => {
            (shared.log)(&format!("client {peer} ended the test: {r}"))
        }
        Err(e) => (shared.log)(&format!("test with {peer} failed: {e}")),
    }
    shared.active.fetch_sub(1, Ordering::SeqCst);
    let served = shared.served.fetch_add(1, Ordering::SeqCst) + 1;
    if shared.cfg.one_off && served >= 1 && !over_limit {
        shared.shutdown.store(true, Ordering::SeqCst);
    }
}

struct SessionRun<'a> {
    shared: &'a Arc<Shared>,
    conn: ControlConn,
    session: ServerSession,
    peer: SocketAddr,
    cookie: Option<Cookie>,
    events: TestEvents<'a>,
}

fn random_cookie() -> Cookie {
    let mut c = [0u8; 16];
    crate::os::random::fill(&mut c);
    c
}

impl SessionRun<'_> {
    fn flush(&mut self) -> Result<(), RunError> {
        while let Some(m) = self.session.poll_transmit() {
            self.conn.send(&m)?;
        }
        Ok(())
    }

    fn interrupted(&self) -> bool {
        self.shared.interrupt.load(Ordering::Relaxed)
    }

    /// Waits for the next session event (bounded).
    fn next_event(
        &mut self,
        timeout: Duration,
        what: &'static str,
    ) -> Result<ServerEvent, RunError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(ev) = self.session.poll_event() {
                return Ok(ev);
            }
            if self.interrupted() {
                self.session.abort("the server is shutting down");
                let _ = self.flush();
                return Err(RunError::Interrupted);
            }
            if Instant::now() >= deadline {
                self.session
                    .abort(&format!("server timed out waiting for {what}"));
                let _ = self.flush();
                return Err(RunError::Timeout(what));
            }
            if let Some(m) = self.conn.recv(Duration::from_millis(50))? {
                let r = self.session.handle(m);
                self.flush()?;
                r.map_err(|e| RunError::Protocol(e.to_string()))?;
            }
        }
    }

    fn refuse(&mut self, code: RefuseCode, msg: String) -> Result<(), RunError> {
        (self.shared.log)(&format!("refused {}: {msg}", self.peer));
        self.session.refuse(code, &msg);
        self.flush()
    }

    fn check_limits(&self, p: &TestParams) -> Option<(RefuseCode, String)> {
        let cfg = &self.shared.cfg;
        if let Some(max) = cfg.max_duration_secs {
            let total = p.duration_secs + p.omit_secs;
            if p.duration_secs == 0.0 {
                return Some((RefuseCode::MaxDuration, format!("server allows tests of at most {max} s (--max-duration); byte- or block-limited tests have no time bound, add -t")));
            }
            if total > max {
                return Some((RefuseCode::MaxDuration, format!("requested {total} s exceeds the server's limit of {max} s (--max-duration)")));
            }
        }
        if let Some(max) = cfg.max_bitrate {
            let dirs = if p.direction == Direction::Bidir {
                2
            } else {
                1
            };
            let total = p
                .bitrate
                .saturating_mul(u64::from(p.parallel))
                .saturating_mul(dirs);
            if p.bitrate == 0 || total > max {
                let asked = if p.bitrate == 0 {
                    "an unlimited rate".to_string()
                } else {
                    format_bitrate(total as f64)
                };
                return Some((RefuseCode::MaxBitrate, format!("requested {asked} exceeds the server's limit of {} (--max-bitrate); use -b with streams x rate <= the limit", format_bitrate(max as f64))));
            }
        }
        if let Some(algo) = &p.congestion {
            let avail = sockopt::available_congestion();
            if p.direction != Direction::Upload
                && !avail.is_empty()
                && !avail.iter().any(|a| a == algo)
            {
                return Some((RefuseCode::Congestion, format!("congestion control \"{algo}\" is not available on the server (available: {})", avail.join(", "))));
            }
        }
        None
    }

    fn execute(&mut self, over_limit: bool) -> Result<(), RunError> {
        match self.next_event(STEP, "the client's hello")? {
            ServerEvent::Greeted { .. } => {}
            ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
            _ => return Err(RunError::Protocol("unexpected first message".into())),
        }
        if over_limit {
            let max = self.shared.cfg.max_clients.unwrap_or(0);
            return self.refuse(
                RefuseCode::MaxClients,
                format!("server is busy: it serves at most {max} clients at once (--max-clients)"),
            );
        }
        let params = match self.next_event(STEP, "the test request")? {
            ServerEvent::TestRequested(p) => *p,
            ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
            _ => {
                // The session refused invalid parameters itself.
                self.flush()?;
                return Ok(());
            }
        };
        if let Some((code, msg)) = self.check_limits(&params) {
            return self.refuse(code, msg);
        }
        let params = Arc::new(params);
        let cookie = random_cookie();
        let (tx, rx) = channel();
        self.shared.registry.insert(cookie, params.clone(), tx);
        self.cookie = Some(cookie);
        self.session.accept(&cookie);
        self.flush()?;
        (self.shared.log)(&format!(
            "accepted a {} test from {}",
            describe(&params),
            self.peer
        ));
        let streams = self.collect_streams(&params, &rx)?;
        self.session.streams_ready();
        self.flush()?;
        // Receivers and the clock start now, so that nothing the client sends once it has
        // the streams-ready message is lost or timed wrongly while its start is in flight
        // (seconds, on a lossy link); senders wait for that start (see `until_stop`).
        self.run_test(&params, cookie, streams)
    }

    fn collect_streams(
        &mut self,
        p: &TestParams,
        rx: &Receiver<Arrival>,
    ) -> Result<Vec<(LocalStream, String, String)>, RunError> {
        let want = p.stream_count() as usize;
        let mut got: BTreeMap<u32, (LocalStream, String, String)> = BTreeMap::new();
        let deadline = Instant::now() + STEP;
        while got.len() < want {
            if Instant::now() >= deadline {
                let msg = format!(
                    "only {} of {want} data streams arrived within {} s",
                    got.len(),
                    STEP.as_secs()
                );
                self.session.abort(&msg);
                let _ = self.flush();
                return Err(RunError::Setup(msg));
            }
            if self.interrupted() {
                self.session.abort("the server is shutting down");
                let _ = self.flush();
                return Err(RunError::Interrupted);
            }
            if let Some(m) = self.conn.recv(Duration::from_millis(5))? {
                let r = self.session.handle(m);
                self.flush()?;
                r.map_err(|e| RunError::Protocol(e.to_string()))?;
                if let Some(ServerEvent::Aborted(r)) = self.session.poll_event() {
                    return Err(RunError::PeerAborted(r));
                }
            }
            // Until streams-ready goes out the client sends only hellos, so every socket can
            // be read here: a hello whose ack was lost is answered again.
            for (s, _, _) in got.values() {
                if let (DataSocket::Udp(u), Some(ack)) = (&s.socket, s.ack) {
                    let _ = u.set_nonblocking(true);
                    reack_one(u, &ack);
                }
            }
            while let Ok(a) = rx.recv_timeout(Duration::from_millis(5)) {
                let server_sends = |id: u32| !p.client_sends(id);
                match a {
                    Arrival::Tcp(id, t) => {
                        let role = if server_sends(id) {
                            StreamRole::Sender
                        } else {
                            StreamRole::Receiver
                        };
                        sockets::apply_tcp(&sockets::as_socket2(&t), p, "server")?;
                        let local = t.local_addr().map(canonical).unwrap_or_default();
                        let remote = t.peer_addr().map(canonical).unwrap_or_default();
                        got.insert(
                            id,
                            (
                                LocalStream {
                                    id,
                                    role,
                                    socket: DataSocket::Tcp(t),
                                    ack: None,
                                },
                                local,
                                remote,
                            ),
                        );
                    }
                    Arrival::Udp(id, u, ack) => {
                        let role = if server_sends(id) {
                            StreamRole::Sender
                        } else {
                            StreamRole::Receiver
                        };
                        let local = u.local_addr().map(canonical).unwrap_or_default();
                        let remote = u.peer_addr().map(canonical).unwrap_or_default();
                        got.insert(
                            id,
                            (
                                LocalStream {
                                    id,
                                    role,
                                    socket: DataSocket::Udp(u),
                                    ack: Some(ack),
                                },
                                local,
                                remote,
                            ),
                        );
                    }
                }
            }
        }
        Ok(got.into_values().collect())
    }

    fn run_test(
        &mut self,
        p: &TestParams,
        cookie: Cookie,
        streams: Vec<(LocalStream, String, String)>,
    ) -> Result<(), RunError> {
        let interval = self.shared.cfg.interval_secs.unwrap_or(p.interval_secs);
        let connected = streams
            .iter()
            .map(|(s, l, r)| ConnectedStream {
                id: s.id,
                role: s.role,
                local: l.clone(),
                remote: r.clone(),
            })
            .collect();
        let local_addr = self
            .conn
            .stream()
            .local_addr()
            .map(canonical)
            .unwrap_or_default();
        let start = crate::start::start_event(
            p,
            crate::start::StartContext {
                role: Role::Server,
                local: local_addr,
                remote: self.peer.to_string(),
                server_port: self.shared.cfg.port,
                cookie: cookie_hex(&cookie),
                interval_secs: interval,
                connected,
            },
        );
        self.events.start(start, p, Role::Server);
        let cpu0 = cpu::thread_times();
        let t0 = Instant::now();
        let send = SendConfig::for_test(p);
        // Hellos that still arrive on this end's sending UDP sockets (their ack was lost) are
        // answered by the control loop; a receiving socket's worker answers its own.
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
        let local_streams = streams.into_iter().map(|(s, _, _)| s).collect();
        // With -n / -k the server's senders (reverse, bidir) stop at the same exact budget.
        let budget = if p.direction == Direction::Upload {
            None
        } else {
            crate::streams::Budget::new(p.bytes, p.blocks)
        };
        let mut engine = Engine::start(
            p.protocol,
            local_streams,
            &send,
            budget,
            interval,
            p.omit_secs,
            true,
        )
        .map_err(|e| RunError::Setup(format!("starting stream workers: {e}")))?;
        let congestion = engine.congestion();
        let limit = match (p.duration_secs > 0.0, self.shared.cfg.max_duration_secs) {
            (true, _) => p.duration_secs + p.omit_secs + WATCHDOG_SLACK,
            (false, Some(m)) => m,
            (false, None) => f64::INFINITY,
        };
        let outcome = self.until_stop(&mut engine, limit, &reack);
        let stop = match outcome {
            Ok(stop) => stop,
            Err(e) => {
                self.finish_partial(p, &mut engine, t0, cpu0, &e);
                return Err(e);
            }
        };
        let stop_at = engine.elapsed();
        engine.stop_senders(Duration::from_secs(3));
        engine.drain_receivers(&stop, Engine::drain_grace(p.protocol));
        if let Some(r) = engine.meter.finish(stop_at) {
            self.events.emit(Event::Interval(r));
        }
        let views = engine.meter.end_views(stop_at, &|id| {
            stop.iter().find(|c| c.id == id).map(|c| c.packets)
        });
        let local: Vec<PeerStream> = views
            .into_iter()
            .map(|(id, role, view)| PeerStream { id, role, view })
            .collect();
        let sent = engine.sent_counts();
        let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
        let cpu_local = cpu_usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
        self.session.send_results(Results {
            cpu: cpu_local,
            congestion: congestion.clone(),
            streams: local.clone(),
            sent,
        });
        self.flush()?;
        let peer = match self.next_event(STEP, "the client's results") {
            Ok(ServerEvent::PeerResults(r)) => Some(*r),
            _ => None,
        };
        let error = peer
            .is_none()
            .then(|| "the client's results never arrived".to_string());
        let summary = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Server,
            params: p,
            local: &local,
            peer: peer.as_ref(),
            cpu_local,
            local_congestion: congestion,
            error,
        });
        self.events.emit(Event::End(Box::new(summary)));
        if peer.is_some() {
            let _ = self.next_event(Duration::from_secs(2), "the client's done");
        }
        Ok(())
    }

    /// Runs the test until the client's Stop; emits intervals and live reports on the way.
    fn until_stop(
        &mut self,
        engine: &mut Engine,
        limit: f64,
        reack: &[(UdpSocket, HelloAck)],
    ) -> Result<Vec<SentCount>, RunError> {
        loop {
            reack_hellos(reack);
            if self.interrupted() {
                self.session.abort("the server is shutting down");
                let _ = self.flush();
                return Err(RunError::Interrupted);
            }
            let elapsed = engine.elapsed();
            if elapsed > limit {
                let msg = format!("test exceeded the server's time limit of {limit:.0} s");
                self.session.abort(&msg);
                let _ = self.flush();
                return Err(RunError::Setup(msg));
            }
            if let Some(r) = engine.meter.tick(elapsed) {
                self.session.live_interval(r.clone());
                self.events.emit(Event::Interval(r));
                self.flush()?;
            }
            if let Some(m) = self.conn.recv(Duration::from_millis(5))? {
                let r = self.session.handle(m);
                self.flush()?;
                r.map_err(|e| RunError::Protocol(e.to_string()))?;
                match self.session.poll_event() {
                    Some(ServerEvent::Started) => engine.release_senders(),
                    Some(ServerEvent::StopRequested(s)) => return Ok(s.sent),
                    Some(ServerEvent::Aborted(r)) => return Err(RunError::PeerAborted(r)),
                    _ => {}
                }
            }
        }
    }

    fn finish_partial(
        &mut self,
        p: &TestParams,
        engine: &mut Engine,
        t0: Instant,
        cpu0: sonde_stats::cpu::CpuTimes,
        e: &RunError,
    ) {
        let stop_at = engine.elapsed();
        engine.abort();
        if let Some(r) = engine.meter.finish(stop_at) {
            self.events.emit(Event::Interval(r));
        }
        let views = engine.meter.end_views(stop_at, &|_| None);
        let local: Vec<PeerStream> = views
            .into_iter()
            .map(|(id, role, view)| PeerStream { id, role, view })
            .collect();
        let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
        let cpu_local = cpu_usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
        let summary = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Server,
            params: p,
            local: &local,
            peer: None,
            cpu_local,
            local_congestion: None,
            error: Some(match e {
                RunError::Interrupted => "server interrupted (Ctrl-C); partial result".into(),
                RunError::PeerClosed => RunError::ClientGone.to_string(),
                other => other.to_string(),
            }),
        });
        self.events.emit(Event::End(Box::new(summary)));
    }
}

fn describe(p: &TestParams) -> String {
    let proto = match p.protocol {
        sonde_stats::model::Protocol::Tcp => "TCP",
        sonde_stats::model::Protocol::Udp => "UDP",
    };
    let dir = match p.direction {
        Direction::Upload => "upload",
        Direction::Reverse => "reverse",
        Direction::Bidir => "bidir",
    };
    format!("{proto} {dir} x{}", p.parallel)
}

/// An address as users expect to read it (IPv4-mapped IPv6 shown as IPv4).
fn canonical(a: SocketAddr) -> String {
    SocketAddr::new(a.ip().to_canonical(), a.port()).to_string()
}

/// Re-acknowledges hellos that reached already-connected UDP stream sockets: the client
/// repeats its hello until it sees an acknowledgement, so a lost one must be answered again.
/// Answers hellos waiting on sending UDP sockets (nonblocking; only hellos arrive there).
fn reack_hellos(sockets: &[(UdpSocket, HelloAck)]) {
    for (u, ack) in sockets {
        reack_one(u, ack);
    }
}

/// Drains a nonblocking UDP socket, answering each hello with `ack`.
fn reack_one(u: &UdpSocket, ack: &HelloAck) {
    let mut b = [0u8; 64];
    while let Ok(n) = u.recv(&mut b) {
        if sonde_proto::udp_hello::Hello::parse(&b[..n]).is_ok() {
            let _ = u.send(&ack.emit());
        }
    }
}
