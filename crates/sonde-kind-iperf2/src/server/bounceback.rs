//! `iperf -c --bounceback`: request and response on one TCP connection. Each request is
//! `size` bytes starting with the bounceback header; the server reads it whole, waits the
//! hold the client asked for, and writes the same bytes back with its receive and send times
//! in the header, until the client closes (or marks a request as its last).
//!
//! The test's document counts the requests and both directions' bytes; the round trips are
//! the client's to measure. Requests are held in one buffer of the request's size, at most
//! [`MAX_SIZE`].

use sonde_platform::cpu;
use sonde_proto::iperf2::bounceback::{BouncebackHeader, MIN_LEN, STOP};
use sonde_proto::iperf2::Timestamp;
use sonde_proto::message::PeerStream;
use sonde_proto::message::TestParams;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::serving::admission::Serving;
use sonde_runtime_core::serving::served_test::canonical;
use sonde_runtime_core::start::{start_event, StartContext};
use sonde_runtime_core::summary::{build, SummaryInput};
use sonde_runtime_core::test_events::TestEvents;
use sonde_stats::interval::bits_per_second;
use sonde_stats::model::{ConnectedStream, Direction, EndView, Event, Protocol, Role, StreamRole};
use sonde_stats::units::Size;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Largest request served (iperf 2's default is 100 bytes).
pub const MAX_SIZE: usize = 1024 * 1024;
/// How long the client may leave the connection silent between requests.
const IDLE_DEFAULT: Duration = Duration::from_secs(30);

/// What the test moved.
#[derive(Debug, Default, Clone, Copy)]
struct Moved {
    requests: u64,
    received: u64,
    sent: u64,
}

/// Serves a bounceback test whose first request began with `first`.
pub fn serve(stream: TcpStream, peer: SocketAddr, first: [u8; 4], ctx: &Serving<'_>) {
    let admitted = ctx.admit(peer);
    if let Some(msg) = admitted.refusal.clone() {
        ctx.log(&format!(
            "refused iperf 2 client {}: {msg}",
            canonical(peer)
        ));
        ctx.served(admitted);
        return;
    }
    let p = TestParams {
        protocol: Protocol::Tcp,
        direction: Direction::Bidir,
        parallel: 1,
        duration_secs: 0.0,
        length: Size::from_bytes(0),
        ..TestParams::default()
    };
    let mut sink = (ctx.sinks)(&canonical(peer));
    let mut events = TestEvents::new(&mut *sink);
    let (t0, cpu0) = (Instant::now(), cpu::thread_times());
    start(&stream, peer, &p, ctx, &mut events);
    let mut moved = Moved::default();
    let outcome = answer_all(&stream, first, &mut moved, ctx);
    if let Err(e) = &outcome {
        ctx.log(&format!(
            "iperf 2 bounceback test with {} failed: {e}",
            canonical(peer)
        ));
    }
    events.emit(Event::Note(format!(
        "iperf 2 bounceback: {} requests answered",
        moved.requests
    )));
    let secs = t0.elapsed().as_secs_f64();
    let view = |bytes: u64| EndView {
        start: 0.0,
        end: secs,
        bytes,
        bits_per_second: bits_per_second(bytes, secs),
        tcp: None,
        udp_sent_packets: None,
        udp_received: None,
    };
    let local = [
        PeerStream {
            id: 1,
            role: StreamRole::Receiver,
            view: view(moved.received),
        },
        PeerStream {
            id: 2,
            role: StreamRole::Sender,
            view: view(moved.sent),
        },
    ];
    let cpu_local = cpu::usage(
        Default::default(),
        cpu::thread_times().saturating_sub(cpu0),
        secs,
    );
    let summary = build(SummaryInput {
        role: Role::Server,
        params: &p,
        local: &local,
        peer: None,
        cpu_local,
        local_congestion: None,
        error: outcome.err().map(|e| e.to_string()),
    });
    events.emit(Event::End(Box::new(summary)));
    drop(events);
    ctx.served(admitted);
}

fn start(
    stream: &TcpStream,
    peer: SocketAddr,
    p: &TestParams,
    ctx: &Serving<'_>,
    events: &mut TestEvents<'_>,
) {
    let here = stream.local_addr().map(canonical).unwrap_or_default();
    let conn = |id, role| ConnectedStream {
        id,
        role,
        local: here.clone(),
        remote: canonical(peer),
    };
    let start = start_event(
        p,
        StartContext {
            role: Role::Server,
            local: here.clone(),
            remote: canonical(peer),
            server_port: stream.local_addr().map_or(0, |a| a.port()),
            cookie: String::new(),
            interval_secs: ctx.cfg.interval_secs.unwrap_or(1.0),
            connected: vec![conn(1, StreamRole::Receiver), conn(2, StreamRole::Sender)],
            sockets: Default::default(),
        },
    );
    events.start(start, p, Role::Server);
}

/// Answers requests until the client closes between two of them, marks one as its last, or
/// the server's time limit passes.
fn answer_all(
    stream: &TcpStream,
    first: [u8; 4],
    moved: &mut Moved,
    ctx: &Serving<'_>,
) -> Result<(), RunError> {
    let idle = ctx.cfg.rcv_timeout.unwrap_or(IDLE_DEFAULT);
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .map_err(io_err)?;
    let limit = ctx.cfg.max_duration_secs.map(Duration::from_secs_f64);
    let t0 = Instant::now();
    let mut buf = Vec::new();
    let mut have = first.to_vec();
    loop {
        if ctx.stopping() {
            return Err(RunError::Interrupted);
        }
        if limit.is_some_and(|l| t0.elapsed() > l) {
            return Err(RunError::Setup(
                "test exceeded the server's --max-duration".into(),
            ));
        }
        let Some(rx) = read_request(stream, &mut have, &mut buf, idle, ctx)? else {
            return Ok(());
        };
        moved.requests += 1;
        moved.received += buf.len() as u64;
        let (h, _) =
            BouncebackHeader::parse(&buf).map_err(|e| RunError::Protocol(e.to_string()))?;
        if h.hold > 0 {
            std::thread::sleep(Duration::from_micros(u64::from(h.hold)));
        }
        let mut reply = Vec::with_capacity(buf.len());
        h.reply(rx, now()).emit(&mut reply);
        reply.extend_from_slice(buf.get(reply.len()..).unwrap_or_default());
        (&*stream).write_all(&reply).map_err(io_err)?;
        moved.sent += reply.len() as u64;
        if h.bb_flags & STOP != 0 {
            return Ok(());
        }
    }
}

/// Reads one whole request into `buf` (`have` holds bytes of it already read); its receive
/// time, or None when the client closed before a new request began.
fn read_request(
    stream: &TcpStream,
    have: &mut Vec<u8>,
    buf: &mut Vec<u8>,
    idle: Duration,
    ctx: &Serving<'_>,
) -> Result<Option<Timestamp>, RunError> {
    let mut s = stream;
    let mut last = Instant::now();
    let mut rx = None;
    let mut need = MIN_LEN;
    let mut chunk = [0u8; 64 * 1024];
    while have.len() < need {
        if ctx.stopping() {
            return Err(RunError::Interrupted);
        }
        let want = (need - have.len()).min(chunk.len());
        match s.read(&mut chunk[..want]) {
            Ok(0) if have.is_empty() => return Ok(None),
            Ok(0) => return Err(RunError::PeerClosed),
            Ok(n) => {
                rx.get_or_insert_with(now);
                have.extend_from_slice(&chunk[..n]);
                last = Instant::now();
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if last.elapsed() > idle {
                    return Err(RunError::Setup(format!(
                        "no request for {} s",
                        idle.as_secs()
                    )));
                }
            }
            Err(e) => return Err(io_err(e)),
        }
        if have.len() >= MIN_LEN && need == MIN_LEN {
            need = request_size(have)?;
        }
    }
    *buf = std::mem::take(have);
    Ok(Some(rx.unwrap_or_else(now)))
}

/// The size the request's header declares, checked.
fn request_size(head: &[u8]) -> Result<usize, RunError> {
    let (h, _) = BouncebackHeader::parse(head).map_err(|e| RunError::Protocol(e.to_string()))?;
    h.check()
        .map_err(|r| RunError::Protocol(format!("bounceback request refused: {r}")))?;
    let size = h.size as usize;
    if size > MAX_SIZE {
        return Err(RunError::Protocol(format!(
            "bounceback requests of {size} bytes are larger than the {MAX_SIZE} served"
        )));
    }
    Ok(size.max(MIN_LEN))
}

/// A failed read or write of the test's one connection.
fn io_err(source: std::io::Error) -> RunError {
    RunError::Stream { id: 1, source }
}

/// The wall clock as iperf 2 carries times.
fn now() -> Timestamp {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp {
        sec: d.as_secs() as u32,
        usec: d.subsec_micros(),
    }
}
