//! The server's side of a throughput test (`sonde client`): after the server's set-up, the
//! stream workers from the streams-ready message, the test until the client's Stop (live
//! intervals to the client on the way), then results both ways and the summary.

use sonde_platform::cpu;
use sonde_proto::message::{PeerStream, ProcessLoad, Results, Stop, TestParams};
use sonde_proto::preamble::{cookie_hex, Cookie};
use sonde_proto::session::ServerEvent;
use sonde_proto::udp_hello::HelloAck;
use sonde_runtime_core::engine::Engine;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::serving::served_test::{
    canonical, connected_streams, reack_hellos, sending_udp_sockets, OpenStream, ServedTest, STEP,
};
use sonde_runtime_core::streams::StreamConfig;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{CpuUsage, Direction, Event, Role, TestStart};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

/// Runs the accepted test: the start event, the stream workers, the test until the
/// client's Stop, then results both ways and the summary (a partial one on failure).
pub fn serve(
    t: &mut ServedTest<'_>,
    p: &TestParams,
    cookie: Cookie,
    streams: Vec<OpenStream>,
) -> Result<(), RunError> {
    let interval = t.rules.interval_secs.unwrap_or(p.interval_secs);
    let start = start_event(t, p, &cookie, interval, &streams);
    t.events.start(start, p, Role::Server);
    let cpu0 = cpu::thread_times();
    t.process0 = t.cpu_load.then(cpu::process_times);
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
    let limit = t.time_limit(p);
    let outcome = until_stop(t, &mut engine, limit, &reack);
    let stop = match outcome {
        Ok(stop) => stop,
        Err(e) => {
            finish_partial(t, p, &mut engine, t0, cpu0, &e);
            return Err(e);
        }
    };
    let (local, cpu_local) =
        send_results(t, p, &mut engine, &stop, (t0, cpu0), congestion.clone())?;
    summarise(t, p, &local, cpu_local, congestion);
    Ok(())
}

/// The start event of this end: its streams and addresses as users read them.
fn start_event(
    t: &ServedTest<'_>,
    p: &TestParams,
    cookie: &Cookie,
    interval: f64,
    streams: &[OpenStream],
) -> TestStart {
    let (connected, sockets) = connected_streams(p, streams);
    let local_addr = t
        .conn
        .stream()
        .local_addr()
        .map(canonical)
        .unwrap_or_default();
    sonde_runtime_core::start::start_event(
        p,
        sonde_runtime_core::start::StartContext {
            role: Role::Server,
            local: local_addr,
            remote: t.peer.to_string(),
            server_port: t.rules.port,
            cookie: cookie_hex(cookie),
            interval_secs: interval,
            connected,
            sockets,
        },
    )
}

/// Stops this end's senders, drains what the client sent, and sends this end's results.
/// Returns the local stream views and this end's CPU usage.
fn send_results(
    t: &mut ServedTest<'_>,
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
    let local = final_views(t, engine, stop_at, &sent_by_peer, peer_stopped_at);
    let sent = engine.sent_counts();
    let notes = engine.slip_notes("server");
    for n in &notes {
        t.events.emit(Event::Note(n.clone()));
    }
    let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
    let cpu_local = cpu::usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
    let process_load = t.process0.map(|p0| {
        let d = cpu::process_times().saturating_sub(p0);
        ProcessLoad {
            user_secs: d.user_us as f64 / 1e6,
            system_secs: d.system_us as f64 / 1e6,
            wall_secs: t0.elapsed().as_secs_f64(),
        }
    });
    t.events.measured(&local, cpu_local);
    t.session.send_results(Results {
        process_load,
        cpu: cpu_local,
        congestion,
        streams: local.clone(),
        sent,
        notes,
        profile: Vec::new(),
    });
    t.flush()?;
    Ok((local, cpu_local))
}

/// Waits for the client's results and emits the summary; results that never arrive make
/// a summary that says so. Then gives the client a moment to say it is done.
fn summarise(
    t: &mut ServedTest<'_>,
    p: &TestParams,
    local: &[PeerStream],
    cpu_local: CpuUsage,
    congestion: Option<String>,
) {
    let peer = match t.next_event(STEP, "the client's results") {
        Ok(ServerEvent::PeerResults(r)) => Some(*r),
        _ => None,
    };
    let error = peer
        .is_none()
        .then(|| "the client's results never arrived".to_string());
    let summary = sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
        role: Role::Server,
        params: p,
        local,
        peer: peer.as_ref(),
        cpu_local,
        local_congestion: congestion,
        error,
    });
    t.events.emit(Event::End(Box::new(summary)));
    if peer.is_some() {
        let _ = t.next_event(Duration::from_secs(2), "the client's done");
    }
}

/// Each local stream's final figures up to `stop_at`, after emitting the last (partial)
/// interval. `sent_by_peer` is how many datagrams the client sent on a UDP stream;
/// `peer_stopped_at`, when the client stopped its senders (seconds of its clock).
fn final_views(
    t: &mut ServedTest<'_>,
    engine: &mut Engine,
    stop_at: f64,
    sent_by_peer: &dyn Fn(u32) -> Option<u64>,
    peer_stopped_at: Option<f64>,
) -> Vec<PeerStream> {
    if let Some(r) = engine.meter.finish(stop_at) {
        // The client shows it too, as it showed the others live.
        t.session.live_interval(r.clone());
        t.events.emit(Event::Interval(r));
    }
    engine
        .meter
        .peer_streams(stop_at, sent_by_peer, peer_stopped_at)
}

/// Runs the test until the client's Stop; emits intervals and live reports on the way.
fn until_stop(
    t: &mut ServedTest<'_>,
    engine: &mut Engine,
    limit: f64,
    reack: &[(UdpSocket, HelloAck)],
) -> Result<Stop, RunError> {
    loop {
        reack_hellos(reack);
        if t.interrupted() {
            t.session.abort("the server is shutting down");
            let _ = t.flush();
            return Err(RunError::Interrupted);
        }
        engine.settle_clock();
        let elapsed = engine.elapsed();
        if elapsed > limit {
            let msg = format!("test exceeded the server's time limit of {limit:.0} s");
            t.session.abort(&msg);
            let _ = t.flush();
            return Err(RunError::Setup(msg));
        }
        if let Err(e) =
            sonde_runtime_core::client_checks::check_receiving(engine, t.rules.rcv_timeout)
        {
            t.session.abort(&e.to_string());
            let _ = t.flush();
            return Err(e);
        }
        if let Some(r) = engine.meter.tick(elapsed) {
            t.session.live_interval(r.clone());
            t.events.emit(Event::Interval(r));
            t.flush()?;
        }
        if engine.sleep_to_boundary(None, sonde_runtime_core::control_conn::POLL_SLICE) {
            continue;
        }
        if let Some(m) = t.conn.recv(Duration::from_millis(5))? {
            let r = t.session.handle(m);
            t.flush()?;
            r.map_err(|e| RunError::Protocol(e.to_string()))?;
            match t.session.poll_event() {
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
    t: &mut ServedTest<'_>,
    p: &TestParams,
    engine: &mut Engine,
    t0: Instant,
    cpu0: CpuTimes,
    e: &RunError,
) {
    let stop_at = engine.elapsed();
    engine.abort();
    let local = final_views(t, engine, stop_at, &|_| None, None);
    let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
    let cpu_local = cpu::usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
    let summary = sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
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
    t.events.emit(Event::End(Box::new(summary)));
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
        sonde_runtime_core::streams::Budget::new(p.bytes, p.blocks)
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
