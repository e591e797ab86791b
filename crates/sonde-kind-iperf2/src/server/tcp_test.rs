//! One iperf 2 TCP test on sonde's engine: the streams an `iperf -c` opened, receiving what
//! it sends, sending for `-R`, both on each connection for `--full-duplex`. Reports and the
//! summary are built exactly as for sonde's and iperf3's tests (the meter, the summary
//! builder), so the server's output, `-J` and stores read them alike. iperf 2 sends no results
//! of its own over TCP: the summary is this end's view.

use super::header::{back_header, Request};
use sonde_platform::cpu;
use sonde_proto::iperf2::client_hdr::ConnectBack;
use sonde_proto::iperf2::request::test_params;
use sonde_proto::message::TestParams;
use sonde_runtime_core::control_conn::POLL_SLICE;
use sonde_runtime_core::engine::{DataSocket, Engine, LocalStream};
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::serving::admission::Serving;
use sonde_runtime_core::serving::policy;
use sonde_runtime_core::serving::served_test::{canonical, connected_streams, OpenStream};
use sonde_runtime_core::start::{start_event, StartContext};
use sonde_runtime_core::streams::{Budget, StreamConfig};
use sonde_runtime_core::summary::{build, SummaryInput};
use sonde_runtime_core::test_events::TestEvents;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{Direction, Event, Role, StreamRole};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long the connection back to a `-d` / `-r` client may take.
const BACK_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long senders get to hand the kernel their last write when the test ends.
const SENDER_STOP_WAIT: Duration = Duration::from_secs(2);

/// Runs the test of `streams` (the `-P` connections of one client, in arrival order).
pub fn run(
    streams: Vec<(TcpStream, SocketAddr)>,
    peer: SocketAddr,
    request: &Request,
    ctx: &Serving<'_>,
) {
    let mut p = test_params(&request.header, false);
    p.interval_secs = ctx.cfg.interval_secs.unwrap_or(1.0);
    let asked = p.parallel;
    p.parallel = u32::try_from(streams.len()).unwrap_or(1);
    let admitted = ctx.admit(peer);
    let refusal = admitted
        .refusal
        .clone()
        .or_else(|| policy::check_test(&ctx.cfg.limits(), &p, &[]).map(|r| r.message()));
    if let Some(msg) = refusal {
        ctx.log(&format!(
            "refused iperf 2 client {}: {msg}",
            canonical(peer)
        ));
        ctx.served(admitted);
        return;
    }
    if p.parallel < asked {
        ctx.log(&format!(
            "iperf 2 client {} asked for {asked} streams and {} came: serving those",
            canonical(peer),
            p.parallel
        ));
    }
    match request.header.connect_back_mode() {
        None => serve_logged(streams, peer, &p, ctx),
        Some(ConnectBack::Dual) => std::thread::scope(|scope| {
            scope.spawn(|| back_test(peer, request, &p, ctx));
            serve_logged(streams, peer, &p, ctx);
        }),
        Some(ConnectBack::Tradeoff) => {
            serve_logged(streams, peer, &p, ctx);
            back_test(peer, request, &p, ctx);
        }
    }
    ctx.served(admitted);
}

/// Connects to the client's listener. iperf 2 opens it as it sends its own header, so a
/// refusal in the first moments is retried until [`BACK_CONNECT_TIMEOUT`].
fn connect_back(to: SocketAddr) -> std::io::Result<TcpStream> {
    let deadline = Instant::now() + BACK_CONNECT_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match TcpStream::connect_timeout(&to, left.max(Duration::from_millis(10))) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && !left.is_zero() => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// [`serve`] with its own sink; a failure is logged.
fn serve_logged(
    streams: Vec<(TcpStream, SocketAddr)>,
    peer: SocketAddr,
    p: &TestParams,
    ctx: &Serving<'_>,
) {
    let mut sink = (ctx.sinks)(&canonical(peer));
    let mut events = TestEvents::new(&mut *sink);
    if let Err(e) = serve(streams, peer, p, ctx, &mut events) {
        ctx.log(&format!(
            "iperf 2 test with {} failed: {e}",
            canonical(peer)
        ));
    }
}

/// `-d` and `-r`: the server's test back to the client, on as many connections as the client
/// opened, to the port its header names on the address the request came from (never another).
fn back_test(peer: SocketAddr, request: &Request, p: &TestParams, ctx: &Serving<'_>) {
    let Some(to) = request.header.connect_back(peer.ip()) else {
        return;
    };
    let header = back_header(&request.raw);
    let mut streams = Vec::new();
    for _ in 0..p.parallel {
        let opened = connect_back(to).and_then(|mut s| s.write_all(&header).map(|()| s));
        match opened {
            Ok(s) => streams.push((s, to)),
            Err(e) => {
                ctx.log(&format!(
                    "iperf 2 test back to {}: cannot connect: {e}",
                    canonical(to)
                ));
                return;
            }
        }
    }
    let back = TestParams {
        direction: Direction::Reverse,
        ..p.clone()
    };
    serve_logged(streams, to, &back, ctx);
}

/// Starts the engine on the streams, runs the test and emits its End.
fn serve(
    streams: Vec<(TcpStream, SocketAddr)>,
    peer: SocketAddr,
    p: &TestParams,
    ctx: &Serving<'_>,
    events: &mut TestEvents<'_>,
) -> Result<(), RunError> {
    let (cpu0, t0) = (cpu::thread_times(), Instant::now());
    let closers: Vec<TcpStream> = streams
        .iter()
        .filter_map(|(s, _)| s.try_clone().ok())
        .collect();
    let open = local_streams(streams, p)?;
    let interval = p.interval_secs;
    let here = closers.first().and_then(|s| s.local_addr().ok());
    emit_start(&open, here, peer, p, interval, events);
    let local: Vec<LocalStream> = open.into_iter().map(|(s, _, _)| s).collect();
    let budget = (p.direction != Direction::Upload)
        .then(|| Budget::new(p.bytes, 0))
        .flatten();
    let mut engine = Engine::start_now(p, local, &StreamConfig::for_test(p), budget)?;
    let outcome = until_done(&mut engine, p, ctx, events);
    engine.stop_senders(SENDER_STOP_WAIT);
    for s in &closers {
        let _ = s.shutdown(Shutdown::Write);
    }
    let stop_at = engine.elapsed();
    engine.abort();
    if let Some(r) = engine.meter.finish(stop_at) {
        events.emit(Event::Interval(r));
    }
    let views = engine.meter.peer_streams(stop_at, &|_| None, None);
    let congestion = engine.congestion();
    let workers = engine.join();
    let cpu_local = cpu::usage(
        CpuTimes::default(),
        workers + cpu::thread_times().saturating_sub(cpu0),
        t0.elapsed().as_secs_f64(),
    );
    let summary = build(SummaryInput {
        role: Role::Server,
        params: p,
        local: &views,
        peer: None,
        cpu_local,
        local_congestion: congestion,
        error: outcome.as_ref().err().map(ToString::to_string),
    });
    events.emit(Event::End(Box::new(summary)));
    for s in &closers {
        drain(s);
        let _ = s.shutdown(Shutdown::Both);
    }
    outcome
}

/// The test's Start: its streams, as the server sees them from `here`.
fn emit_start(
    open: &[OpenStream],
    here: Option<SocketAddr>,
    peer: SocketAddr,
    p: &TestParams,
    interval_secs: f64,
    events: &mut TestEvents<'_>,
) {
    let (connected, sockets) = connected_streams(p, open);
    let start = start_event(
        p,
        StartContext {
            role: Role::Server,
            local: here.map(canonical).unwrap_or_default(),
            remote: canonical(peer),
            server_port: here.map_or(0, |a| a.port()),
            cookie: String::new(),
            interval_secs,
            connected,
            sockets,
        },
    );
    events.start(start, p, Role::Server);
}

/// Reads what is left unread on a connection this end only sent on (the client's
/// acknowledgement of a header sent back to it), so closing it ends with a FIN, not a reset
/// that could cost the client the last data. Bounded: at most 64 KiB, never waiting.
fn drain(s: &TcpStream) {
    let _ = s.set_nonblocking(true);
    let mut scratch = [0u8; 4096];
    let mut left: usize = 64 * 1024;
    let mut r = s;
    while left > 0 {
        match r.read(&mut scratch) {
            Ok(n) if n > 0 => left = left.saturating_sub(n),
            _ => break,
        }
    }
}

/// The engine's streams: a receiver per connection, a sender for `-R`, both (the sender a
/// clone of the socket, numbered after the receivers) for `--full-duplex`.
fn local_streams(
    streams: Vec<(TcpStream, SocketAddr)>,
    p: &TestParams,
) -> Result<Vec<OpenStream>, RunError> {
    let n = u32::try_from(streams.len()).unwrap_or(u32::MAX);
    let mut open = Vec::new();
    for (i, (s, remote)) in (1u32..).zip(streams) {
        let here = s.local_addr().map(canonical).unwrap_or_default();
        let mut add = |id: u32, role: StreamRole, socket: TcpStream| {
            let stream = LocalStream {
                id,
                role,
                socket: DataSocket::Tcp(socket),
                ack: None,
            };
            open.push((stream, here.clone(), canonical(remote)));
        };
        match p.direction {
            Direction::Upload => add(i, StreamRole::Receiver, s),
            Direction::Reverse => add(i, StreamRole::Sender, s),
            Direction::Bidir => {
                let clone = s
                    .try_clone()
                    .map_err(|e| RunError::Setup(format!("duplicating a stream socket: {e}")))?;
                add(i, StreamRole::Receiver, clone);
                add(n + i, StreamRole::Sender, s);
            }
        }
    }
    Ok(open)
}

/// Emits intervals until every receiver saw the client close and every sender finished its
/// time or bytes; fails on the server's time limit, `--rcv-timeout` or a shutdown.
fn until_done(
    engine: &mut Engine,
    p: &TestParams,
    ctx: &Serving<'_>,
    events: &mut TestEvents<'_>,
) -> Result<(), RunError> {
    let limit = policy::watchdog_secs(&ctx.cfg.limits(), p);
    let send_for = (p.duration_secs > 0.0).then_some(p.duration_secs);
    loop {
        if ctx.stopping() {
            return Err(RunError::Interrupted);
        }
        engine.settle_clock();
        let elapsed = engine.elapsed();
        if elapsed > limit {
            return Err(RunError::Setup(format!(
                "test exceeded the server's time limit of {limit:.0} s"
            )));
        }
        sonde_runtime_core::client_checks::check_receiving(engine, ctx.cfg.rcv_timeout)?;
        if let Some(r) = engine.meter.tick(elapsed) {
            events.emit(Event::Interval(r));
        }
        let sending_done = !engine.has_senders()
            || engine.senders_finished()
            || engine.budget_done()
            || send_for.is_some_and(|d| elapsed >= d);
        if sending_done && engine.receivers_finished() {
            return sender_outcome(engine, p, elapsed);
        }
        // Nothing else waits in this loop: when no boundary is near, sleep a slice.
        if !engine.sleep_to_boundary(send_for, POLL_SLICE) {
            std::thread::sleep(POLL_SLICE);
        }
    }
}

/// A sender that failed is the test's error, unless the client closed its connection at the
/// end of its own `-t` (iperf 2's `-R` client stops reading when its time is up, which may be
/// a moment before this end's clock says so).
fn sender_outcome(engine: &Engine, p: &TestParams, elapsed: f64) -> Result<(), RunError> {
    let Some((id, msg)) = engine.sender_error() else {
        return Ok(());
    };
    let near_end = p.duration_secs > 0.0 && elapsed >= p.duration_secs * 0.9;
    if near_end {
        return Ok(());
    }
    Err(RunError::Setup(format!("stream {id}: {msg}")))
}
