//! The steps of `sonde client --iperf2` around the engine that are not iperf 2's wire: the
//! start event, `--full-duplex`'s second stream on each connection, the wait for a TCP
//! server's close, and the partial summary after a failure.

use sonde_proto::message::TestParams;
use sonde_runtime_core::connect::{ClientConfig, OpenedStream};
use sonde_runtime_core::engine::{DataSocket, Engine};
use sonde_runtime_core::error::RunError;
use sonde_stats::model::StreamRole;
use sonde_stats::model::{ConnectedStream, Event, Role, TestSummary};
use sonde_stats::sink::{deliver, Sink};
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Sends the start event: the streams as connected, this host's socket and link figures
/// (iperf 2 has no cookie and tells nothing of its own end).
pub fn announce(
    cfg: &ClientConfig,
    opened: &[OpenedStream],
    server: SocketAddr,
    emit: &mut dyn Sink<Event>,
) {
    let p = &cfg.params;
    let connected = opened
        .iter()
        .map(|o| ConnectedStream {
            id: o.id,
            role: o.role,
            local: o.local.to_string(),
            remote: server.to_string(),
        })
        .collect();
    let sockets =
        sonde_runtime_core::start::socket_figures(p, opened.iter().map(|o| (&o.socket, o.role)));
    let local = opened.first().map_or(server, |o| o.local);
    let mut start = sonde_runtime_core::start::start_event(
        p,
        sonde_runtime_core::start::StartContext {
            role: Role::Client,
            local: local.to_string(),
            remote: server.to_string(),
            server_port: cfg.port,
            cookie: String::new(),
            interval_secs: p.interval_secs,
            connected,
            sockets,
        },
    );
    start.link = Some(sonde_runtime_core::start::link_pair(&local, &server, None));
    deliver(emit, &Event::Start(Box::new(start)));
}

/// `--full-duplex`: beside each sending stream `i` of `opened` (1..=`parallel`), stream
/// `parallel + i` receives on the same connection, as a bidirectional test numbers them.
///
/// # Errors
/// [`RunError::Stream`] when a socket cannot be duplicated.
pub fn duplex(mut opened: Vec<OpenedStream>, parallel: u32) -> Result<Vec<OpenedStream>, RunError> {
    let mut twins = Vec::with_capacity(opened.len());
    for o in &opened {
        if let DataSocket::Tcp(t) = &o.socket {
            let id = o.id + parallel;
            let socket = t
                .try_clone()
                .map_err(|source| RunError::Stream { id, source })?;
            twins.push(OpenedStream {
                id,
                role: StreamRole::Receiver,
                socket: DataSocket::Tcp(socket),
                local: o.local,
            });
        }
    }
    opened.extend(twins);
    Ok(opened)
}

/// Waits (at most `wait` in all) until `iperf -s` has closed each TCP stream after the
/// senders' half-close: then it has read, and counted, every byte. A note for those it
/// did not close in time.
pub fn await_close(streams: &[(u32, TcpStream)], wait: Duration, emit: &mut dyn Sink<Event>) {
    let deadline = Instant::now() + wait;
    let open: Vec<String> = streams
        .iter()
        .filter(|(_, s)| !closed_by(s, deadline))
        .map(|(id, _)| id.to_string())
        .collect();
    if !open.is_empty() {
        let note = format!(
            "iperf -s had not closed stream(s) {} {} s after this end stopped sending",
            open.join(", "),
            wait.as_secs()
        );
        deliver(emit, &Event::Note(note));
    }
}

/// True once the peer closed `s` (EOF or reset) before `deadline`; what it sends is dropped.
fn closed_by(s: &TcpStream, deadline: Instant) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return false;
        }
        match (&mut &*s).read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if sonde_runtime_core::error::is_timeout(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// A partial summary after a failure: this end's figures only, up to `stop_at` (now when
/// the senders were not stopped yet), the reason in it.
pub fn partial(
    engine: &mut Engine,
    p: &TestParams,
    stop_at: Option<f64>,
    reason: String,
    cpu0: sonde_platform::cpu::ProcessSpan,
    emit: &mut dyn Sink<Event>,
) -> TestSummary {
    let stop_at = stop_at.unwrap_or_else(|| engine.elapsed());
    engine.ctl.abort.store(true, Ordering::Relaxed);
    let local = engine.final_views(stop_at, emit);
    engine.join();
    sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
        role: Role::Client,
        params: p,
        local: &local,
        peer: None,
        cpu_local: cpu0.usage(),
        local_congestion: None,
        error: Some(reason),
    })
}
