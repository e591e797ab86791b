//! `sonde client --iperf3`: one test against a real iperf3 server.
//!
//! The same flow as iperf3's own client (`iperf_client_api.c`), driven by the pure
//! [`ClientSession`]: cookie, parameters, data streams (TCP: the cookie again; UDP: the 4-byte
//! hello, skipping early data in reverse mode), then this end decides when the test ends
//! (time, bytes or blocks), sends TEST_END and exchanges results. The events and the summary
//! are sonde's own, so the table, `-J` and `--json-stream` reporters work unchanged.

use super::convert::{local_results, peer_results};
use super::engine::{finish, local_views};
use sonde_platform::cpu;
use sonde_platform::host::software;
use sonde_platform::resolve::resolve;
use sonde_proto::iperf3::params::{params_json, Iperf3Options};
use sonde_proto::iperf3::results::Results as WireResults;
use sonde_proto::iperf3::session::{ClientEvent, ClientSession};
use sonde_proto::iperf3::state::errno;
use sonde_proto::iperf3::udp::{is_reply, HELLO};
use sonde_proto::iperf3::{cookie_from_random, cookie_text, Cookie};
use sonde_proto::message::PeerStream;
use sonde_runtime_core::connect::{connect_control, open_data_stream, open_streams, running};
use sonde_runtime_core::connect::{ClientConfig, ClientOutcome};
use sonde_runtime_core::engine::{Engine, LocalStream};
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::streams::Budget;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{
    ConnectedStream, CpuUsage, Direction, Event, Role, SocketFigures, TestStart, TestSummary,
};
use sonde_stats::sink::{deliver, Sink};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const STEP: Duration = Duration::from_secs(10);
/// iperf3 waits this long for the answer to a UDP hello.
const UDP_HELLO_DEADLINE: Duration = Duration::from_secs(10);

/// Runs one test against an iperf3 server. Events go to `emit`; the outcome says how it ended.
pub fn run(
    cfg: &ClientConfig,
    opts: Iperf3Options,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<Event>,
) -> ClientOutcome {
    run_with_token(cfg, opts, None, interrupt, emit)
}

/// [`run`], sending iperf3's RSA `authtoken` (made by `sonde_runtime_core::auth::iperf3_token`).
pub fn run_with_token(
    cfg: &ClientConfig,
    opts: Iperf3Options,
    authtoken: Option<&str>,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<Event>,
) -> ClientOutcome {
    let mut run = Run {
        cfg,
        opts,
        authtoken,
        interrupt,
        emit,
        engine: None,
        cpu0: cpu::ProcessSpan::start(),
    };
    match run.execute() {
        Ok(summary) => ClientOutcome {
            summary: Some(summary),
            error: None,
            server_view: None,
            server_load: None,
        },
        Err(e) => {
            let summary = run.partial(&e);
            ClientOutcome {
                summary,
                error: Some(e),
                server_view: None,
                server_load: None,
            }
        }
    }
}

fn random_cookie() -> Cookie {
    let mut r = [0u8; 36];
    sonde_platform::random::fill(&mut r);
    cookie_from_random(&r)
}

/// The control connection and its state machine.
struct Control {
    tcp: TcpStream,
    s: ClientSession,
}

impl Control {
    fn flush(&mut self) -> Result<(), RunError> {
        while let Some(b) = self.s.poll_transmit() {
            self.tcp.write_all(&b).map_err(RunError::ControlIo)?;
        }
        Ok(())
    }

    /// Reads once (bounded by the socket timeout) and returns the next event, if any.
    fn poll(&mut self) -> Result<Option<ClientEvent>, RunError> {
        if let Some(ev) = self.s.poll_event() {
            return Ok(Some(ev));
        }
        let mut buf = [0u8; 16 * 1024];
        match self.tcp.read(&mut buf) {
            Ok(0) if self.s.handle_eof() => return Ok(self.s.poll_event()),
            Ok(0) => return Err(RunError::PeerClosed),
            Ok(n) => self
                .s
                .handle_bytes(&buf[..n])
                .map_err(|e| RunError::Protocol(format!("iperf3 server: {e}")))?,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Err(RunError::PeerClosed),
            Err(e) => return Err(RunError::ControlIo(e)),
        }
        self.flush()?;
        Ok(self.s.poll_event())
    }
}

/// Turns the server's refusals into errors.
fn refusal(ev: ClientEvent) -> RunError {
    match ev {
        ClientEvent::AccessDenied => RunError::ServerRefused {
            code: "busy".into(),
            message: "the iperf3 server is busy running a test; try again later".into(),
        },
        ClientEvent::ServerError { i_errno, errno: e } => RunError::ServerRefused {
            code: format!("iperf3 error {i_errno}"),
            message: if e != 0 {
                format!(
                    "{} ({})",
                    errno::describe(i_errno),
                    std::io::Error::from_raw_os_error(e)
                )
            } else {
                errno::describe(i_errno)
            },
        },
        ClientEvent::ServerTerminated => {
            RunError::PeerAborted("the iperf3 server terminated the test".into())
        }
        other => RunError::Protocol(format!("unexpected iperf3 event {other:?}")),
    }
}

struct Run<'a> {
    cfg: &'a ClientConfig,
    opts: Iperf3Options,
    authtoken: Option<&'a str>,
    interrupt: &'a AtomicBool,
    emit: &'a mut dyn Sink<Event>,
    engine: Option<Engine>,
    cpu0: cpu::ProcessSpan,
}

impl Run<'_> {
    fn wait_for(
        &mut self,
        c: &mut Control,
        what: &'static str,
        want: fn(&ClientEvent) -> bool,
    ) -> Result<ClientEvent, RunError> {
        let deadline = Instant::now() + STEP;
        loop {
            if self.interrupt.load(Ordering::Relaxed) {
                return Err(RunError::Interrupted);
            }
            if Instant::now() >= deadline {
                return Err(RunError::Timeout(what));
            }
            match c.poll()? {
                Some(ev) if want(&ev) => return Ok(ev),
                Some(ClientEvent::TestStart) => {}
                Some(ev) => return Err(refusal(ev)),
                None => {}
            }
        }
    }

    fn execute(&mut self) -> Result<TestSummary, RunError> {
        let cfg = self.cfg;
        let addrs = resolve(&cfg.host, cfg.port, cfg.family, self.interrupt)?;
        let tcp = connect_control(&addrs, &cfg.local, cfg.connect_timeout)?;
        let server = tcp.peer_addr().map_err(RunError::ControlIo)?;
        let local = tcp.local_addr().map_err(RunError::ControlIo)?;
        tcp.set_nodelay(true).map_err(RunError::ControlIo)?;
        tcp.set_read_timeout(Some(Duration::from_millis(5)))
            .map_err(RunError::ControlIo)?;
        tcp.set_write_timeout(Some(STEP))
            .map_err(RunError::ControlIo)?;
        let cookie = random_cookie();
        let mut json = params_json(&cfg.params, &self.opts, &software());
        if let (Some(t), Some(o)) = (self.authtoken, json.as_object_mut()) {
            o.insert("authtoken".into(), t.into());
        }
        let s = ClientSession::new(&cookie, &json)
            .map_err(|e| RunError::Setup(format!("iperf3 parameters: {e}")))?;
        let mut c = Control { tcp, s };
        c.flush()?;
        let r = self.with_control(&mut c, server, local, &cookie);
        if let Err(e) = &r {
            if !e.peer_ended() {
                c.s.terminate();
                let _ = c.flush();
            }
        }
        r
    }

    /// Everything after the control connection is up, in iperf3's order: stream creation,
    /// the test, TEST_END, then results both ways and DISPLAY_RESULTS.
    fn with_control(
        &mut self,
        c: &mut Control,
        server: SocketAddr,
        local: SocketAddr,
        cookie: &Cookie,
    ) -> Result<TestSummary, RunError> {
        let p = &self.cfg.params;
        self.await_create_streams(c, server)?;
        let streams = self.open_streams(server, cookie)?;
        self.wait_for(c, "the iperf3 server to start the test", |e| {
            matches!(e, ClientEvent::TestRunning)
        })?;
        let connected = connected_streams(&streams, server);
        let sockets = sonde_runtime_core::start::socket_figures(
            p,
            streams.iter().map(|(s, _)| (&s.socket, s.role)),
        );
        let congestion = self.start_engine(streams)?;
        let start = self.start_event(server, local, cookie, (connected, sockets));
        deliver(self.emit, &Event::Start(Box::new(start)));
        self.until_end(c)?;
        let stop_at = self.end_test(c)?;
        let (local_streams, cpu_local) = self.send_local_results(c, stop_at, &congestion)?;
        let results = self.await_server_results(c)?;
        let peer = peer_results(&results, p, Role::Server, stop_at);
        let summary =
            sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
                role: Role::Client,
                params: p,
                local: &local_streams,
                peer: Some(&peer),
                cpu_local,
                local_congestion: congestion,
                error: None,
            });
        deliver(self.emit, &Event::End(Box::new(summary.clone())));
        Ok(summary)
    }

    /// Waits for CREATE_STREAMS; silence means the peer is probably not an iperf3 server.
    fn await_create_streams(
        &mut self,
        c: &mut Control,
        server: SocketAddr,
    ) -> Result<(), RunError> {
        self.wait_for(c, "the iperf3 server to accept the test", |e| {
            matches!(e, ClientEvent::CreateStreams)
        })
        .map_err(|e| match e {
            RunError::Timeout(_) => RunError::Setup(format!(
                "{server} did not answer the iperf3 handshake within {} s: is it an iperf3 server?",
                STEP.as_secs()
            )),
            e => e,
        })?;
        Ok(())
    }

    /// Starts this end's stream workers and the CPU clock; returns the congestion control
    /// the streams use.
    fn start_engine(
        &mut self,
        streams: Vec<(LocalStream, SocketAddr)>,
    ) -> Result<Option<String>, RunError> {
        let p = &self.cfg.params;
        let wire = sonde_runtime_core::streams::StreamConfig {
            file: self.cfg.file.clone(),
            ..super::send_config(p, &self.opts)
        };
        let budget = if p.direction == Direction::Reverse {
            None
        } else {
            Budget::new(p.bytes, p.blocks)
        };
        self.cpu0 = cpu::ProcessSpan::start();
        let specs = streams.into_iter().map(|(s, _)| s).collect();
        let engine = Engine::start_now(p, specs, &wire, budget)?;
        let congestion = engine.congestion();
        self.engine = Some(engine);
        Ok(congestion)
    }

    /// Stops the senders (flushing TCP queues), sends TEST_END and waits for the server to
    /// ask for results. Returns the stop time in test seconds.
    fn end_test(&mut self, c: &mut Control) -> Result<f64, RunError> {
        let engine = running(&mut self.engine)?;
        let stop_at = engine.elapsed();
        engine.stop_senders(Duration::from_secs(1));
        engine.flush_tcp_senders(Duration::from_secs(1));
        c.s.test_end();
        c.flush()?;
        self.wait_for(c, "the iperf3 server's results request", |e| {
            matches!(e, ClientEvent::ExchangeResults)
        })?;
        Ok(stop_at)
    }

    /// Finishes the engine (no partial summary after this point) and sends this end's
    /// results. Returns the local stream views and this end's CPU usage.
    fn send_local_results(
        &mut self,
        c: &mut Control,
        stop_at: f64,
        congestion: &Option<String>,
    ) -> Result<(Vec<PeerStream>, CpuUsage), RunError> {
        let p = &self.cfg.params;
        let mut engine = self
            .engine
            .take()
            .ok_or(RunError::Setup("engine missing".into()))?;
        engine.drain_receivers(&[], Duration::from_millis(250));
        let local_streams = local_views(&mut engine, stop_at, &mut *self.emit);
        engine.join();
        let cpu_local = self.cpu0.usage();
        c.s.send_results(&local_results(
            &local_streams,
            p.protocol,
            cpu_local,
            congestion.clone(),
        ));
        c.flush()?;
        Ok((local_streams, cpu_local))
    }

    /// Waits for the server's results and DISPLAY_RESULTS, and shows the server's output
    /// when it sent some.
    fn await_server_results(&mut self, c: &mut Control) -> Result<Box<WireResults>, RunError> {
        let results = match self.wait_for(c, "the iperf3 server's results", |e| {
            matches!(e, ClientEvent::ServerResults(_))
        })? {
            ClientEvent::ServerResults(r) => r,
            other => return Err(refusal(other)),
        };
        self.wait_for(c, "DISPLAY_RESULTS", |e| matches!(e, ClientEvent::Done))?;
        c.flush()?;
        if let Some(t) = &results.server_output_text {
            deliver(
                self.emit,
                &Event::Note(format!("iperf3 server output:\n{t}")),
            );
        } else if let Some(j) = &results.server_output_json {
            deliver(
                self.emit,
                &Event::Note(format!("iperf3 server output: {j}")),
            );
        }
        Ok(results)
    }

    fn until_end(&mut self, c: &mut Control) -> Result<(), RunError> {
        let engine = running(&mut self.engine)?;
        engine.until_end(
            &self.cfg.params,
            self.interrupt,
            &mut *self.emit,
            || match c.poll()? {
                Some(ev) => Err(refusal(ev)),
                None => Ok(()),
            },
        )
    }

    /// Opens the data streams in id order and announces each as iperf3 does: a TCP stream
    /// with the cookie, a UDP one with the 4-byte hello.
    fn open_streams(
        &mut self,
        server: SocketAddr,
        cookie: &Cookie,
    ) -> Result<Vec<(LocalStream, SocketAddr)>, RunError> {
        let (cfg, interrupt) = (self.cfg, self.interrupt);
        let opened = open_streams(&cfg.params, interrupt, |id| {
            open_data_stream(cfg, server, id, cookie, |s| udp_hello(s, id, interrupt))
        })?;
        Ok(opened
            .into_iter()
            .map(|o| {
                let spec = LocalStream {
                    id: o.id,
                    role: o.role,
                    socket: o.socket,
                    ack: None,
                };
                (spec, o.local)
            })
            .collect())
    }

    fn start_event(
        &self,
        server: SocketAddr,
        local: SocketAddr,
        cookie: &Cookie,
        (connected, sockets): (Vec<ConnectedStream>, SocketFigures),
    ) -> TestStart {
        let mut start = sonde_runtime_core::start::start_event(
            &self.cfg.params,
            sonde_runtime_core::start::StartContext {
                role: Role::Client,
                local: local.to_string(),
                remote: server.to_string(),
                server_port: self.cfg.port,
                cookie: cookie_text(cookie),
                interval_secs: self.cfg.params.interval_secs,
                connected,
                sockets,
            },
        );
        // This host's link; iperf3 servers report none of theirs.
        start.link = Some(sonde_runtime_core::start::link_pair(&local, &server, None));
        start
    }

    fn partial(&mut self, e: &RunError) -> Option<TestSummary> {
        let mut engine = self.engine.take()?;
        let span = self.cpu0;
        let cpu_fn = |_: CpuTimes| span.usage();
        // The summary says it is partial; the reason is only the reason.
        let reason = e.to_string();
        let summary = finish(
            &mut engine,
            &self.cfg.params,
            Role::Client,
            Some(reason),
            &mut *self.emit,
            &cpu_fn,
        );
        deliver(self.emit, &Event::End(Box::new(summary.clone())));
        Some(summary)
    }
}

/// The streams as the start event lists them.
fn connected_streams(
    streams: &[(LocalStream, SocketAddr)],
    server: SocketAddr,
) -> Vec<ConnectedStream> {
    streams
        .iter()
        .map(|(s, l)| ConnectedStream {
            id: s.id,
            role: s.role,
            local: l.to_string(),
            remote: server.to_string(),
        })
        .collect()
}

/// Sends the UDP hello and waits for the server's answer, skipping early data (reverse mode
/// servers may start sending before the answer arrives). The hello is repeated every 2 s.
fn udp_hello(sock: &UdpSocket, id: u32, interrupt: &AtomicBool) -> Result<(), RunError> {
    let stream_err = |e| RunError::Stream { id, source: e };
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(stream_err)?;
    let deadline = Instant::now() + UDP_HELLO_DEADLINE;
    let mut buf = vec![0u8; 65_536];
    let mut next_send = Instant::now();
    while Instant::now() < deadline {
        if interrupt.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        if Instant::now() >= next_send {
            let _ = sock.send(&HELLO);
            next_send = Instant::now() + Duration::from_secs(2);
        }
        match sock.recv(&mut buf) {
            Ok(n) if is_reply(&buf[..n]) => {
                let _ = sock.set_read_timeout(None);
                return Ok(());
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock
                        | ErrorKind::TimedOut
                        | ErrorKind::Interrupted
                        | ErrorKind::ConnectionRefused
                ) => {}
            Err(e) => return Err(stream_err(e)),
        }
    }
    Err(RunError::Setup(format!(
        "UDP stream {id}: the iperf3 server did not answer the UDP hello within {} s (is the UDP port blocked?)",
        UDP_HELLO_DEADLINE.as_secs()
    )))
}
