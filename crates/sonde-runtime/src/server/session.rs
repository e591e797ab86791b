//! One test on the server: from the client's hello to its Done, in this connection's thread.

use super::registry::Arrival;
use super::Shared;
use crate::control_conn::ControlConn;
use crate::engine::{DataSocket, Engine, LocalStream};
use crate::error::RunError;
use crate::serving::policy::{self, ClientSlot, Refusal};
use crate::sockets;
use crate::streams::StreamConfig;
use crate::test_events::TestEvents;
use sonde_platform::host::software;
use sonde_platform::{cpu, sockopt};
use sonde_proto::message::{PeerStream, ProcessLoad, RefuseCode, Results, Stop, TestParams};
use sonde_proto::preamble::{cookie_hex, Cookie};
use sonde_proto::session::{ServerEvent, ServerSession};
use sonde_proto::udp_hello::HelloAck;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{
    ConnectedStream, CpuUsage, Direction, Event, Role, StreamRole, TestStart,
};
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod await_start;
mod capacity;
mod close;
mod coded;
mod profile;

/// Longest wait for one control step of the client (hello, request, streams, start,
/// results). Generous because a lossy link is what sonde measures: at 30 % loss each way a
/// TCP segment can need several retransmissions, each after a doubled timeout (1, 2, 4, 8 s),
/// and the test must still set up and report rather than fail on its own control traffic.
const STEP: Duration = Duration::from_secs(30);

/// Serves one control connection, counting it against `--max-clients`; `early` is what the
/// client sent after its preamble (its first frame, read while it was identified).
pub(super) fn serve(stream: TcpStream, peer: SocketAddr, early: &[u8], shared: &Arc<Shared>) {
    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    let slot = ClientSlot::take(&shared.active, shared.cfg.max_clients);
    let source = shared.sessions.take(peer.ip());
    let Ok(mut conn) = ControlConn::new(stream) else {
        return;
    };
    conn.push_initial(early);
    let mut session = ServerSession::new(&software(), sockopt::available_congestion());
    if let Some(key) = &shared.cfg.auth.psk {
        match crate::auth::fresh_nonce() {
            Ok(n) => session.require_psk(key.clone(), n),
            Err(e) => {
                (shared.log)(&format!("closed {peer}: no challenge for its key: {e}"));
                return;
            }
        }
    }
    let mut emit = (shared.sinks)(&peer.to_string());
    let mut run = SessionRun {
        shared,
        conn,
        session,
        peer,
        cookie: None,
        events: TestEvents::new(&mut *emit),
        cpu_load: false,
        process0: None,
        auth_refused: false,
    };
    let over_limit = slot.over_limit();
    let result = run.execute(over_limit, source.refusal());
    run.events.close(result.as_ref().err());
    if let Some(c) = run.cookie {
        shared.registry.remove(&c);
    }
    match result {
        Ok(()) => {}
        Err(RunError::PeerAborted(r)) => {
            (shared.log)(&format!("client {peer} ended the test: {r}"))
        }
        // The server's own view of a vanished peer: "the client closed", not "the server".
        Err(RunError::PeerClosed) => (shared.log)(&format!(
            "test with {peer} failed: {}",
            RunError::ClientGone
        )),
        Err(e) => (shared.log)(&format!("test with {peer} failed: {e}")),
    }
    drop(slot);
    drop(source);
    let served = shared.served.fetch_add(1, Ordering::SeqCst) + 1;
    // As iperf3's -1, a client refused for its key does not use up the one test.
    if shared.cfg.one_off && served >= 1 && !over_limit && !run.auth_refused {
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
    /// The client listed `cpu-load`: its results get the process's CPU time over the test.
    cpu_load: bool,
    /// The process's CPU times when the test started (with `cpu_load`).
    process0: Option<CpuTimes>,
    /// The client was refused for its pre-shared key (it saw nothing of the server).
    auth_refused: bool,
}

fn random_cookie() -> Cookie {
    let mut c = [0u8; 16];
    sonde_platform::random::fill(&mut c);
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

    /// The session refused the client for its key and queued the refusal (already sent).
    fn auth_refused(&mut self, why: &str) -> Result<(), RunError> {
        self.auth_refused = true;
        (self.shared.log)(&format!("refused {}: {why}", self.peer));
        Ok(())
    }

    fn refuse(&mut self, code: RefuseCode, msg: String) -> Result<(), RunError> {
        (self.shared.log)(&format!("refused {}: {msg}", self.peer));
        self.session.refuse(code, &msg);
        self.flush()
    }

    fn execute(&mut self, over_limit: bool, source_busy: Option<Refusal>) -> Result<(), RunError> {
        match self.next_event(STEP, "the client's hello")? {
            ServerEvent::Greeted { caps, .. } => {
                self.cpu_load = caps.iter().any(|c| c == "cpu-load");
            }
            ServerEvent::AuthRefused(why) => return self.auth_refused(&why),
            ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
            _ => return Err(RunError::Protocol("unexpected first message".into())),
        }
        if self.shared.cfg.auth.rsa.is_some() && self.shared.cfg.auth.psk.is_none() {
            // Only iperf3's credentials admit a client here; a sonde client can send them.
            self.auth_refused = true;
            return self.refuse(
                RefuseCode::Auth,
                "this server admits only clients with iperf3 RSA credentials (it has no \
                 --psk-file): run `sonde client --iperf3 --username USER \
                 --rsa-public-key-path FILE`"
                    .into(),
            );
        }
        if let Some(busy) = source_busy {
            return self.refuse(busy.code(), busy.message());
        }
        if over_limit {
            let max = self.shared.cfg.max_clients.unwrap_or(0);
            let busy = Refusal::Busy { max };
            return self.refuse(busy.code(), busy.message());
        }
        if let Some(r) = self.shared.test_rate_refusal(self.peer) {
            return self.refuse(r.code(), r.message());
        }
        let params = match self.next_event(STEP, "the test request")? {
            ServerEvent::TestRequested(p) => *p,
            ServerEvent::AuthRefused(why) => return self.auth_refused(&why),
            ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
            _ => {
                // The session refused invalid parameters itself.
                self.flush()?;
                return Ok(());
            }
        };
        let limits = self.shared.cfg.limits();
        if let Some(r) = policy::check_test(&limits, &params, &sockopt::available_congestion()) {
            return self.refuse(r.code(), r.message());
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
        if params.profile.is_some() {
            return self.run_profile(&params, streams);
        }
        if params.coded {
            return self.run_coded(&params, streams);
        }
        if let Some(plan) = params.capacity {
            return self.run_capacity(&params, plan, streams);
        }
        // Receivers and the clock start now, so that nothing the client sends once it has
        // the streams-ready message is lost or timed wrongly while its start is in flight
        // (seconds, on a lossy link); senders wait for that start (see `until_stop`).
        self.run_test(&params, cookie, streams)
    }

    /// Collects the test's data streams as the registry routes them here, answering
    /// repeated UDP hellos and the control connection meanwhile; gives up after [`STEP`].
    fn collect_streams(
        &mut self,
        p: &TestParams,
        rx: &Receiver<Arrival>,
    ) -> Result<Vec<OpenStream>, RunError> {
        let want = p.stream_count() as usize;
        let mut got: BTreeMap<u32, OpenStream> = BTreeMap::new();
        let deadline = Instant::now() + STEP;
        while got.len() < want {
            self.check_stream_wait(got.len(), want, deadline)?;
            self.serve_control_during_setup()?;
            // Until streams-ready goes out the client sends only hellos, so every socket can
            // be read here: a hello whose ack was lost is answered again.
            for (s, _, _) in got.values() {
                if let (DataSocket::Udp(u), Some(ack)) = (&s.socket, s.ack) {
                    let _ = u.set_nonblocking(true);
                    reack_one(u, &ack);
                }
            }
            while let Ok(a) = rx.recv_timeout(Duration::from_millis(5)) {
                let (id, stream) = arrived_stream(p, a)?;
                got.insert(id, stream);
            }
        }
        Ok(got.into_values().collect())
    }

    /// Ends the wait for streams (telling the client why) when it took too long or the
    /// server is shutting down.
    fn check_stream_wait(
        &mut self,
        got: usize,
        want: usize,
        deadline: Instant,
    ) -> Result<(), RunError> {
        if Instant::now() >= deadline {
            let msg = format!(
                "only {got} of {want} data streams arrived within {} s",
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
        Ok(())
    }

    /// Handles one control message while streams arrive, if one comes within 5 ms; only an
    /// abort from the client matters then.
    fn serve_control_during_setup(&mut self) -> Result<(), RunError> {
        if let Some(m) = self.conn.recv(Duration::from_millis(5))? {
            let r = self.session.handle(m);
            self.flush()?;
            r.map_err(|e| RunError::Protocol(e.to_string()))?;
            if let Some(ServerEvent::Aborted(r)) = self.session.poll_event() {
                return Err(RunError::PeerAborted(r));
            }
        }
        Ok(())
    }

    /// Runs the accepted test: the start event, the stream workers, the test until the
    /// client's Stop, then results both ways and the summary (a partial one on failure).
    fn run_test(
        &mut self,
        p: &TestParams,
        cookie: Cookie,
        streams: Vec<OpenStream>,
    ) -> Result<(), RunError> {
        let interval = self.shared.cfg.interval_secs.unwrap_or(p.interval_secs);
        let start = self.start_event(p, &cookie, interval, &streams);
        self.events.start(start, p, Role::Server);
        let cpu0 = cpu::thread_times();
        self.process0 = self.cpu_load.then(cpu::process_times);
        let t0 = Instant::now();
        let reack = sending_udp_sockets(&streams);
        if let Some(core) = p.server_affinity {
            // This session's thread; the stream workers it starts inherit the mask.
            sonde_platform::affinity::pin_current_thread(core as usize).map_err(|e| {
                RunError::Setup(format!("cannot pin the test to CPU core {core} (-A): {e}"))
            })?;
        }
        let mut engine = start_engine(p, streams, interval)?;
        let congestion = engine.congestion();
        let outcome = self.until_stop(&mut engine, self.time_limit(p), &reack);
        let stop = match outcome {
            Ok(stop) => stop,
            Err(e) => {
                self.finish_partial(p, &mut engine, t0, cpu0, &e);
                return Err(e);
            }
        };
        let (local, cpu_local) =
            self.send_results(p, &mut engine, &stop, (t0, cpu0), congestion.clone())?;
        self.summarise(p, &local, cpu_local, congestion);
        Ok(())
    }

    /// The start event of this end: its streams and addresses as users read them.
    fn start_event(
        &self,
        p: &TestParams,
        cookie: &Cookie,
        interval: f64,
        streams: &[OpenStream],
    ) -> TestStart {
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
        crate::start::start_event(
            p,
            crate::start::StartContext {
                role: Role::Server,
                local: local_addr,
                remote: self.peer.to_string(),
                server_port: self.shared.cfg.port,
                cookie: cookie_hex(cookie),
                interval_secs: interval,
                connected,
                sockets: crate::start::socket_figures(
                    p,
                    streams.iter().map(|(s, _, _)| (&s.socket, s.role)),
                ),
            },
        )
    }

    /// How long (test seconds) the server lets a test run before giving up on the client:
    /// its duration with some slack, else the server's `--max-duration`, else no limit.
    fn time_limit(&self, p: &TestParams) -> f64 {
        policy::watchdog_secs(&self.shared.cfg.limits(), p)
    }

    /// Stops this end's senders, drains what the client sent, and sends this end's results.
    /// Returns the local stream views and this end's CPU usage.
    fn send_results(
        &mut self,
        p: &TestParams,
        engine: &mut Engine,
        stop: &Stop,
        (t0, cpu0): (Instant, CpuTimes),
        congestion: Option<String>,
    ) -> Result<(Vec<PeerStream>, CpuUsage), RunError> {
        let stop_at = engine.elapsed();
        engine.stop_senders(Duration::from_secs(3));
        engine.drain_receivers(&stop.sent, Engine::drain_grace(p.protocol));
        let sent_by_peer = |id| stop.sent.iter().find(|c| c.id == id).map(|c| c.packets);
        let peer_stopped_at = stop.stopped_at_ns.map(|ns| ns as f64 / 1e9);
        let local = self.final_views(engine, stop_at, &sent_by_peer, peer_stopped_at);
        let sent = engine.sent_counts();
        let notes = engine.slip_notes("server");
        for n in &notes {
            self.events.emit(Event::Note(n.clone()));
        }
        let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
        let cpu_local = cpu::usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
        let process_load = self.process0.map(|p0| {
            let d = cpu::process_times().saturating_sub(p0);
            ProcessLoad {
                user_secs: d.user_us as f64 / 1e6,
                system_secs: d.system_us as f64 / 1e6,
                wall_secs: t0.elapsed().as_secs_f64(),
            }
        });
        self.events.measured(&local, cpu_local);
        self.session.send_results(Results {
            process_load,
            cpu: cpu_local,
            congestion,
            streams: local.clone(),
            sent,
            notes,
            profile: Vec::new(),
        });
        self.flush()?;
        Ok((local, cpu_local))
    }

    /// Waits for the client's results and emits the summary; results that never arrive make
    /// a summary that says so. Then gives the client a moment to say it is done.
    fn summarise(
        &mut self,
        p: &TestParams,
        local: &[PeerStream],
        cpu_local: CpuUsage,
        congestion: Option<String>,
    ) {
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
            local,
            peer: peer.as_ref(),
            cpu_local,
            local_congestion: congestion,
            error,
        });
        self.events.emit(Event::End(Box::new(summary)));
        if peer.is_some() {
            let _ = self.next_event(Duration::from_secs(2), "the client's done");
        }
    }

    /// Each local stream's final figures up to `stop_at`, after emitting the last (partial)
    /// interval. `sent_by_peer` is how many datagrams the client sent on a UDP stream;
    /// `peer_stopped_at`, when the client stopped its senders (seconds of its clock).
    fn final_views(
        &mut self,
        engine: &mut Engine,
        stop_at: f64,
        sent_by_peer: &dyn Fn(u32) -> Option<u64>,
        peer_stopped_at: Option<f64>,
    ) -> Vec<PeerStream> {
        if let Some(r) = engine.meter.finish(stop_at) {
            // The client shows it too, as it showed the others live.
            self.session.live_interval(r.clone());
            self.events.emit(Event::Interval(r));
        }
        engine
            .meter
            .end_views(stop_at, sent_by_peer, peer_stopped_at)
            .into_iter()
            .map(|(id, role, view)| PeerStream { id, role, view })
            .collect()
    }

    /// Runs the test until the client's Stop; emits intervals and live reports on the way.
    fn until_stop(
        &mut self,
        engine: &mut Engine,
        limit: f64,
        reack: &[(UdpSocket, HelloAck)],
    ) -> Result<Stop, RunError> {
        loop {
            reack_hellos(reack);
            if self.interrupted() {
                self.session.abort("the server is shutting down");
                let _ = self.flush();
                return Err(RunError::Interrupted);
            }
            engine.settle_clock();
            let elapsed = engine.elapsed();
            if elapsed > limit {
                let msg = format!("test exceeded the server's time limit of {limit:.0} s");
                self.session.abort(&msg);
                let _ = self.flush();
                return Err(RunError::Setup(msg));
            }
            if let Err(e) =
                crate::client_checks::check_receiving(engine, self.shared.cfg.rcv_timeout)
            {
                self.session.abort(&e.to_string());
                let _ = self.flush();
                return Err(e);
            }
            if let Some(r) = engine.meter.tick(elapsed) {
                self.session.live_interval(r.clone());
                self.events.emit(Event::Interval(r));
                self.flush()?;
            }
            if engine.sleep_to_boundary(None, crate::control_conn::POLL_SLICE) {
                continue;
            }
            if let Some(m) = self.conn.recv(Duration::from_millis(5))? {
                let r = self.session.handle(m);
                self.flush()?;
                r.map_err(|e| RunError::Protocol(e.to_string()))?;
                match self.session.poll_event() {
                    Some(ServerEvent::Started) => {
                        // The client's clock starts with its Start: count from it too (or
                        // from the first data, when that came first or comes later), so
                        // that both ends' intervals cover the same spans.
                        engine.restart_clock();
                        engine.release_senders();
                    }
                    Some(ServerEvent::StopRequested(s)) => return Ok(s),
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
        cpu0: CpuTimes,
        e: &RunError,
    ) {
        let stop_at = engine.elapsed();
        engine.abort();
        let local = self.final_views(engine, stop_at, &|_| None, None);
        let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
        let cpu_local = cpu::usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
        let summary = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Server,
            params: p,
            local: &local,
            peer: None,
            cpu_local,
            local_congestion: None,
            error: Some(match e {
                RunError::Interrupted => "server interrupted".into(),
                RunError::PeerClosed => RunError::ClientGone.to_string(),
                other => other.to_string(),
            }),
        });
        self.events.emit(Event::End(Box::new(summary)));
    }
}

/// A data stream of this test with its local and remote addresses, as users read them.
type OpenStream = (LocalStream, String, String);

/// A data connection the registry routed to this test, as a local stream (keyed by id).
fn arrived_stream(p: &TestParams, a: Arrival) -> Result<(u32, OpenStream), RunError> {
    // This end sends on the streams the client receives on.
    let role = |id: u32| {
        if p.client_sends(id) {
            StreamRole::Receiver
        } else {
            StreamRole::Sender
        }
    };
    Ok(match a {
        Arrival::Tcp(id, t) => {
            let role = role(id);
            sockets::apply_tcp(&sockets::as_socket2(&t), p, "server")?;
            let local = t.local_addr().map(canonical).unwrap_or_default();
            let remote = t.peer_addr().map(canonical).unwrap_or_default();
            let socket = DataSocket::Tcp(t);
            let stream = LocalStream {
                id,
                role,
                socket,
                ack: None,
            };
            (id, (stream, local, remote))
        }
        Arrival::Udp(id, u, ack) => {
            let role = role(id);
            let local = u.local_addr().map(canonical).unwrap_or_default();
            let remote = u.peer_addr().map(canonical).unwrap_or_default();
            let socket = DataSocket::Udp(u);
            let stream = LocalStream {
                id,
                role,
                socket,
                ack: Some(ack),
            };
            (id, (stream, local, remote))
        }
    })
}

/// Starts this end's stream workers. With -n / -k the server's senders (reverse, bidir) stop
/// at the same exact budget as the client's would.
fn start_engine(
    p: &TestParams,
    streams: Vec<OpenStream>,
    interval: f64,
) -> Result<Engine, RunError> {
    let send = StreamConfig::for_test(p);
    let local_streams = streams.into_iter().map(|(s, _, _)| s).collect();
    let budget = if p.direction == Direction::Upload {
        None
    } else {
        crate::streams::Budget::new(p.bytes, p.blocks)
    };
    Engine::start(
        p.protocol,
        local_streams,
        &send,
        budget,
        interval,
        p.omit_secs,
        true,
    )
    .map_err(|e| RunError::Setup(format!("starting stream workers: {e}")))
}

/// Clones (nonblocking) of this end's sending UDP sockets with their hello acks. Hellos that
/// still arrive there (their ack was lost) are answered by the control loop; a receiving
/// socket's worker answers its own.
fn sending_udp_sockets(streams: &[OpenStream]) -> Vec<(UdpSocket, HelloAck)> {
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
