//! Serving a real iperf3 client on the sonde server's port, beside sonde clients.
//!
//! The accept loop hands over every connection whose first bytes are not sonde's; once its
//! cookie is read ([`super::accept`]), a cookie no session knows is a new control connection,
//! served here in the connection's own thread (a known one is a data stream for the [`Hub`]). Every read has a deadline, every protocol violation ends
//! the session with a logged reason and, where iperf3 has one, the SERVER_ERROR code its client
//! prints; nothing here blocks other clients (iperf3 #788 blocks the real server).

use super::convert::{local_results, peer_results, text_output};
use super::engine::{finish, local_views};
use super::{Arrival, Hub};
use serde_json::json;
use sonde_platform::{cpu, sockopt};
use sonde_proto::iperf3::params::Iperf3Options;
use sonde_proto::iperf3::session::{ServerEvent, ServerSession};
use sonde_proto::iperf3::state::errno;
use sonde_proto::iperf3::{cookie_text, Cookie};
use sonde_proto::message::PeerStream;
use sonde_proto::message::TestParams;
use sonde_runtime_core::control_wait::{self, ControlSide};
use sonde_runtime_core::engine::Engine;
use sonde_runtime_core::engine::{DataSocket, LocalStream};
use sonde_runtime_core::error::is_timeout;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::serving::admission::Serving;
use sonde_runtime_core::serving::policy::{self, ClientSlot, Refusal};
use sonde_runtime_core::serving::served_test::{connected_streams, OpenStream};
use sonde_runtime_core::serving::ServerConfig;
use sonde_runtime_core::sockets;
use sonde_runtime_core::streams::Budget;
use sonde_runtime_core::test_events::TestEvents;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{CpuUsage, Direction, Event, Role, StreamRole, TestStart};
use sonde_stats::sink::FnSink;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The parameters follow PARAM_EXCHANGE at once in every iperf3 version.
const PARAMS_TIMEOUT: Duration = Duration::from_secs(5);
/// Streams, results and other steps of the exchange.
const STEP: Duration = Duration::from_secs(10);
/// A test in which no byte moves for this long is ended (iperf3's --rcv-timeout is 120 s).
const IDLE_LIMIT: f64 = 60.0;

/// What an iperf3 session needs from the server it runs in: the server as every session sees
/// it (its fields read through this context) and the hub of iperf3 sessions.
pub struct ServerCtx<'a> {
    pub serving: Serving<'a>,
    pub hub: &'a Hub,
}

impl<'a> std::ops::Deref for ServerCtx<'a> {
    type Target = Serving<'a>;

    fn deref(&self) -> &Serving<'a> {
        &self.serving
    }
}

/// Serves a new iperf3 control connection from `peer`, which sent `cookie`, in this thread.
pub(super) fn serve_control(stream: TcpStream, peer: SocketAddr, cookie: Cookie, ctx: &ServerCtx) {
    let slot = ClientSlot::take(ctx.active, ctx.cfg.max_clients);
    let source = ctx.sessions.take(peer.ip());
    let over_limit = slot.over_limit();
    let refusal = if let Some(busy) = source.refusal() {
        Some(busy.message())
    } else if over_limit {
        let max = ctx.cfg.max_clients.unwrap_or(0);
        Some(format!("busy (--max-clients {max})"))
    } else {
        (ctx.source_refusal)(peer).map(|r| r.message())
    };
    let mut emit = (ctx.sinks)(&peer.to_string());
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    let _ = stream.set_write_timeout(Some(STEP));
    let mut run = Session {
        ctx,
        stream,
        peer,
        session: ServerSession::new(cookie),
        events: TestEvents::new(&mut *emit),
        registered: false,
        auth_refused: false,
    };
    let result = run.execute(refusal);
    run.events.close(result.as_ref().err());
    if run.registered {
        ctx.hub.remove(&cookie);
    }
    match result {
        Ok(()) => {}
        Err(RunError::PeerAborted(r)) => {
            (ctx.log)(&format!("iperf3 client {peer} ended the test: {r}"))
        }
        Err(e) => (ctx.log)(&format!("iperf3 test with {peer} failed: {e}")),
    }
    drop(slot);
    let served = ctx.served.fetch_add(1, Ordering::SeqCst) + 1;
    // iperf3's -1 does not count a client refused for its credentials either.
    if ctx.cfg.one_off && served >= 1 && !over_limit && !run.auth_refused {
        ctx.shutdown.store(true, Ordering::SeqCst);
    }
}

impl ControlSide for Session<'_, '_> {
    type Event = ServerEvent;

    fn ready_event(&mut self) -> Result<Option<ServerEvent>, RunError> {
        Ok(self.session.poll_event())
    }

    fn read_peer(&mut self) -> Result<(), RunError> {
        self.pump()
    }

    fn tell_interrupted(&mut self) {
        self.session.terminate();
        let _ = self.flush();
    }
}

/// The refusal a server limit calls for: iperf3's error number and a log line. iperf3
/// clients choose their congestion control without asking, as with iperf3's own server.
fn check_limits(cfg: &ServerConfig, p: &TestParams) -> Option<(i32, String)> {
    let refusal = policy::check_test(&cfg.limits(), p, &[])?;
    let code = match refusal {
        Refusal::Bitrate { .. } => errno::TOTAL_RATE,
        _ => errno::MAX_DURATION,
    };
    Some((code, refusal.message()))
}

fn describe(p: &TestParams) -> String {
    let dir = match p.direction {
        Direction::Upload => "upload",
        Direction::Reverse => "reverse",
        Direction::Bidir => "bidir",
    };
    format!("{} {dir} x{}", p.protocol.as_upper(), p.parallel)
}

struct Session<'a, 'c> {
    ctx: &'a ServerCtx<'c>,
    stream: TcpStream,
    peer: SocketAddr,
    session: ServerSession,
    events: TestEvents<'a>,
    registered: bool,
    /// Refused for its credentials (`--rsa-private-key-path`).
    auth_refused: bool,
}

type Collected = Vec<OpenStream>;

impl Session<'_, '_> {
    fn flush(&mut self) -> Result<(), RunError> {
        while let Some(b) = self.session.poll_transmit() {
            self.stream.write_all(&b).map_err(RunError::ControlIo)?;
        }
        Ok(())
    }

    /// Reads what the client sent (bounded by the socket's 20 ms timeout) into the session.
    fn pump(&mut self) -> Result<(), RunError> {
        let mut buf = [0u8; 16 * 1024];
        let n = match self.stream.read(&mut buf) {
            Ok(0) => return Err(RunError::ClientGone),
            Ok(n) => n,
            Err(e) if is_timeout(&e) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Err(RunError::ClientGone),
            Err(e) => return Err(RunError::ControlIo(e)),
        };
        if let Err(e) = self.session.handle_bytes(&buf[..n]) {
            let mut s = ServerSession::new(*self.session.cookie());
            s.refuse(e.iperf3_errno());
            self.session = s;
            let _ = self.flush();
            return Err(RunError::Protocol(format!("iperf3 client: {e}")));
        }
        self.flush()
    }

    /// Waits for the next session event (bounded); Ctrl-C terminates the test for the client.
    fn next_event(
        &mut self,
        timeout: Duration,
        what: &'static str,
    ) -> Result<ServerEvent, RunError> {
        let interrupt = self.ctx.interrupt;
        control_wait::wait(self, what, timeout, Some(interrupt))
    }

    fn refuse(&mut self, code: i32, why: &str) -> Result<(), RunError> {
        (self.ctx.log)(&format!("refused iperf3 client {}: {why}", self.peer));
        self.session.refuse(code);
        self.flush()
    }

    fn execute(&mut self, refusal: Option<String>) -> Result<(), RunError> {
        if let Some(why) = refusal {
            (self.ctx.log)(&format!(
                "refused iperf3 client {}: {why}; sent ACCESS_DENIED",
                self.peer
            ));
            self.session.deny();
            return self.flush();
        }
        self.session.begin();
        self.flush()?;
        let params = match self.next_event(PARAMS_TIMEOUT, "the iperf3 parameters") {
            Ok(ServerEvent::Params(p)) => p,
            Ok(ServerEvent::ClientTerminated) => {
                return Err(RunError::PeerAborted("CLIENT_TERMINATE".into()))
            }
            Ok(other) => return Err(RunError::Protocol(format!("unexpected {other:?}"))),
            Err(e @ RunError::Timeout(_)) => {
                self.refuse(errno::RECV_PARAMS, "no complete parameters within 5 s")?;
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        if let Some(refused) = self.refuse_unauthenticated(params.authtoken.as_deref()) {
            return refused;
        }
        let interval = self.ctx.cfg.interval_secs.unwrap_or(1.0);
        let (mut p, opts) = match params.to_sonde(interval) {
            Ok(x) => x,
            Err(e) => return self.refuse(e.iperf3_errno(), &e.to_string()),
        };
        if let Some((code, why)) = check_limits(self.ctx.cfg, &p) {
            return self.refuse(code, &why);
        }
        if let Some(algo) = &p.congestion {
            let avail = sockopt::available_congestion();
            if !avail.is_empty() && !avail.iter().any(|a| a == algo) {
                (self.ctx.log)(&format!("iperf3 client {} asked for congestion control \"{algo}\", not available here; using the default", self.peer));
                p.congestion = None;
            }
        }
        let p = Arc::new(p);
        let (tx, rx) = channel();
        self.ctx
            .hub
            .register(*self.session.cookie(), self.peer.ip(), p.clone(), tx);
        self.registered = true;
        self.session.accept();
        self.flush()?;
        let version = params
            .client_version
            .as_deref()
            .unwrap_or("unknown version");
        (self.ctx.log)(&format!(
            "accepted an iperf3 {} test from {} (iperf3 {version})",
            describe(&p),
            self.peer
        ));
        let streams = self.collect(&p, &rx)?;
        self.ctx.hub.stop_accepting(self.session.cookie());
        self.session.start();
        self.flush()?;
        self.run_test(&p, opts, streams)
    }

    /// The refusal (sent) of a client the server does not admit: a server guarded by sonde's
    /// key only, or an RSA token that does not pass; None when the client may go on.
    fn refuse_unauthenticated(&mut self, token: Option<&str>) -> Option<Result<(), RunError>> {
        if self.ctx.cfg.auth.rsa.is_none() && self.ctx.cfg.auth.psk.is_some() {
            // A key guards the server; iperf3 has no way to show it.
            self.auth_refused = true;
            return Some(self.refuse(
                errno::AUTH,
                "the server requires sonde's pre-shared key (--psk-file), which iperf3 \
                 cannot send (give the server --rsa-private-key-path and \
                 --authorized-users-path to admit iperf3 clients)",
            ));
        }
        let rsa = self.ctx.cfg.auth.rsa.as_ref()?;
        // As iperf3's server: checked before anything else of the request, refused with
        // error 142 and no data connection.
        match rsa.check(token, sonde_runtime_core::auth::unix_now()) {
            Ok(user) => {
                (self.ctx.log)(&format!(
                    "iperf3 client {} authenticated as user \"{user}\"",
                    self.peer
                ));
                None
            }
            Err(why) => {
                self.auth_refused = true;
                Some(self.refuse(errno::AUTH, &format!("authentication failed: {why}")))
            }
        }
    }

    /// Waits for every data stream, then numbers them in the order the client opened them
    /// (TCP: accept order, since each connection is classified in its own thread; UDP: hello
    /// order). In bidir the client's sending streams come first.
    fn collect(&mut self, p: &TestParams, rx: &Receiver<Arrival>) -> Result<Collected, RunError> {
        let want = p.stream_count() as usize;
        let mut arrived: Vec<(u64, Arrival)> = Vec::with_capacity(want);
        let deadline = Instant::now() + STEP;
        while arrived.len() < want {
            if Instant::now() >= deadline {
                let why = format!(
                    "only {} of {want} data streams arrived within {} s",
                    arrived.len(),
                    STEP.as_secs()
                );
                self.refuse(errno::ACCEPT, &why)?;
                return Err(RunError::Setup(why));
            }
            self.pump()?;
            if let Some(ServerEvent::ClientTerminated) = self.session.poll_event() {
                return Err(RunError::PeerAborted("CLIENT_TERMINATE".into()));
            }
            while let Ok(a) = rx.recv_timeout(Duration::from_millis(5)) {
                let order = match &a {
                    Arrival::Tcp(_, seq) => *seq,
                    Arrival::Udp(_) => arrived.len() as u64,
                };
                arrived.push((order, a));
                if arrived.len() == want {
                    break;
                }
            }
        }
        arrived.sort_by_key(|(order, _)| *order);
        let show = |a: std::io::Result<SocketAddr>| {
            a.map(|a| SocketAddr::new(a.ip().to_canonical(), a.port()).to_string())
                .unwrap_or_default()
        };
        let mut got = Vec::with_capacity(want);
        for (i, (_, a)) in arrived.into_iter().enumerate() {
            let id = i as u32 + 1;
            let role = if p.client_sends(id) {
                StreamRole::Receiver
            } else {
                StreamRole::Sender
            };
            let (socket, local, remote) = match a {
                Arrival::Tcp(t, _) => {
                    if let Err(e) = sockets::apply_tcp(&sockets::as_socket2(&t), p, "server") {
                        (self.ctx.log)(&format!("iperf3 stream {id} from {}: {e}", self.peer));
                    }
                    let (l, r) = (t.local_addr(), t.peer_addr());
                    (DataSocket::Tcp(t), l, r)
                }
                Arrival::Udp(u) => {
                    let (l, r) = (u.local_addr(), u.peer_addr());
                    (DataSocket::Udp(u), l, r)
                }
            };
            let stream = LocalStream {
                id,
                role,
                socket,
                ack: None,
            };
            got.push((stream, show(local), show(remote)));
        }
        Ok(got)
    }

    fn start_event(&self, p: &TestParams, streams: &Collected) -> TestStart {
        let local = self
            .stream
            .local_addr()
            .map(|a| SocketAddr::new(a.ip().to_canonical(), a.port()).to_string())
            .unwrap_or_default();
        let (connected, sockets) = connected_streams(p, streams);
        sonde_runtime_core::start::start_event(
            p,
            sonde_runtime_core::start::StartContext {
                role: Role::Server,
                local,
                remote: self.peer.to_string(),
                server_port: self.ctx.cfg.port,
                cookie: cookie_text(self.session.cookie()),
                interval_secs: p.interval_secs,
                connected,
                sockets,
            },
        )
    }

    fn run_test(
        &mut self,
        p: &TestParams,
        opts: Iperf3Options,
        streams: Collected,
    ) -> Result<(), RunError> {
        let start = self.start_event(p, &streams);
        self.events.start(start.clone(), p, Role::Server);
        let wire = super::send_config(p, &opts);
        let budget = if p.direction == Direction::Upload {
            None
        } else {
            Budget::new(p.bytes, p.blocks)
        };
        let specs = streams.into_iter().map(|(s, _, _)| s).collect();
        let (cpu0, t0) = (cpu::thread_times(), Instant::now());
        if let Some(core) = p.server_affinity {
            // As the sonde session: this thread and the workers it starts.
            sonde_platform::affinity::pin_current_thread(core as usize).map_err(|e| {
                RunError::Setup(format!("cannot pin the test to CPU core {core} (-A): {e}"))
            })?;
        }
        let mut engine = Engine::start_now(p, specs, &wire, budget)?;
        let congestion = engine.congestion();
        if let Err(e) = self.until_test_end(p, &mut engine) {
            self.finish_partial(p, &mut engine, (t0, cpu0), &e);
            return Err(e);
        }
        let stop_at = engine.elapsed();
        engine.stop_senders(Duration::from_secs(1));
        engine.flush_tcp_senders(Duration::from_secs(1));
        engine.drain_receivers(&[], Duration::from_millis(250));
        let local = local_views(
            &mut engine,
            stop_at,
            &mut FnSink(|e: &Event| self.events.emit(e.clone())),
        );
        let cpu_local = cpu::usage(
            CpuTimes::default(),
            engine.join() + cpu::thread_times().saturating_sub(cpu0),
            t0.elapsed().as_secs_f64(),
        );
        self.events.measured(&local, cpu_local);
        self.exchange_results(p, opts, (&start, stop_at), (&local, cpu_local), congestion)
    }

    /// After a failure: the End with this end's figures so far (a partial summary).
    fn finish_partial(
        &mut self,
        p: &TestParams,
        engine: &mut Engine,
        (t0, cpu0): (Instant, CpuTimes),
        e: &RunError,
    ) {
        let cpu_fn = |workers: CpuTimes| {
            let total = workers + cpu::thread_times().saturating_sub(cpu0);
            cpu::usage(CpuTimes::default(), total, t0.elapsed().as_secs_f64())
        };
        let summary = finish(
            engine,
            p,
            Role::Server,
            Some(e.to_string()),
            &mut FnSink(|e: &Event| self.events.emit(e.clone())),
            &cpu_fn,
        );
        self.events.emit(Event::End(Box::new(summary)));
    }

    /// Results both ways (this end's with the server's output when the client asked for
    /// it), the summary, then the client's IPERF_DONE.
    fn exchange_results(
        &mut self,
        p: &TestParams,
        opts: Iperf3Options,
        (start, stop_at): (&TestStart, f64),
        (local, cpu_local): (&[PeerStream], CpuUsage),
        congestion: Option<String>,
    ) -> Result<(), RunError> {
        self.session.exchange_results();
        self.flush()?;
        let peer = match self.next_event(STEP, "the iperf3 client's results")? {
            ServerEvent::ClientResults(r) => peer_results(&r, p, Role::Client, stop_at),
            other => {
                return Err(RunError::Protocol(format!(
                    "expected results, got {other:?}"
                )))
            }
        };
        let summary =
            sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
                role: Role::Server,
                params: p,
                local,
                peer: Some(&peer),
                cpu_local,
                local_congestion: congestion.clone(),
                error: None,
            });
        let mut results = local_results(local, p.protocol, cpu_local, congestion);
        if opts.get_server_output {
            results.server_output_text = Some(text_output(start, &summary));
            results.server_output_json = Some(json!({"start": start, "end": summary}));
        }
        self.session.send_results(&results);
        self.flush()?;
        self.events.emit(Event::End(Box::new(summary)));
        match self.next_event(Duration::from_secs(3), "IPERF_DONE") {
            Ok(_) | Err(RunError::ClientGone) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Runs until the client's TEST_END, emitting interval reports.
    fn until_test_end(&mut self, p: &TestParams, engine: &mut Engine) -> Result<(), RunError> {
        let limit = policy::watchdog_secs(&self.ctx.cfg.limits(), p);
        let (mut moved, mut last_move) = (0u64, 0.0f64);
        let idle_limit = self
            .ctx
            .cfg
            .rcv_timeout
            .map_or(IDLE_LIMIT, |d| d.as_secs_f64());
        loop {
            let elapsed = engine.elapsed();
            if let Some(r) = engine.meter.tick(elapsed) {
                self.events.emit(Event::Interval(r));
            }
            let now_moved = engine.moved_bytes();
            if now_moved != moved {
                (moved, last_move) = (now_moved, elapsed);
            }
            if elapsed > limit || elapsed - last_move > idle_limit {
                let code = if elapsed > limit {
                    errno::SERVER_DURATION
                } else {
                    errno::NO_DATA
                };
                let why = format!("test ran {elapsed:.0} s without ending (limit {limit:.0} s, or {idle_limit:.1} s without data)");
                self.refuse(code, &why)?;
                return Err(RunError::Setup(why));
            }
            match self.next_event(Duration::from_millis(5), "TEST_END") {
                Ok(ServerEvent::TestEnd) => return Ok(()),
                Ok(ServerEvent::ClientTerminated) => {
                    return Err(RunError::PeerAborted("CLIENT_TERMINATE".into()))
                }
                Ok(other) => return Err(RunError::Protocol(format!("unexpected {other:?}"))),
                Err(RunError::Timeout(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }
}
