//! What the iperf3 client and server do around the shared [`Engine`]: a stream list, the
//! stream views at the end, and a partial summary after a failure. The workers are sonde's
//! own (iperf3's datagram header is the [`StreamConfig`]'s format); iperf3 senders start at
//! once (no held start, unlike sonde's server) and ask for the TCP queue flush at the end.

use sonde_proto::message::{PeerStream, TestParams};
use sonde_runtime_core::engine::{DataSocket, Engine, LocalStream};
use sonde_runtime_core::streams::{Budget, StreamConfig};
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{CpuUsage, Event, Protocol, Role, StreamRole, TestSummary};
use sonde_stats::sink::Sink;
use std::sync::atomic::Ordering;

/// One stream to run on this host (sonde id, 1-based).
pub struct StreamSpec {
    pub id: u32,
    pub role: StreamRole,
    pub socket: DataSocket,
}

/// Starts the workers of an iperf3 test on this host.
///
/// # Errors
/// When a socket cannot be duplicated or a thread cannot be spawned.
pub fn start(
    protocol: Protocol,
    streams: Vec<StreamSpec>,
    send: StreamConfig,
    budget: Option<Budget>,
    interval_secs: f64,
    omit_secs: f64,
) -> std::io::Result<Engine> {
    let streams = streams
        .into_iter()
        .map(|s| LocalStream {
            id: s.id,
            role: s.role,
            socket: s.socket,
            ack: None,
        })
        .collect();
    Engine::start(
        protocol,
        streams,
        &send,
        budget,
        interval_secs,
        omit_secs,
        false,
    )
}

/// Each local stream's view of the test up to `stop_at`, after a last interval report.
pub(crate) fn local_views(
    engine: &mut Engine,
    stop_at: f64,
    emit: &mut dyn Sink<Event>,
) -> Vec<PeerStream> {
    engine.final_views(stop_at, emit)
}

/// A partial summary after a failure: this end's figures only. `cpu` turns the workers' CPU
/// time into this end's usage.
pub(crate) fn finish(
    engine: &mut Engine,
    p: &TestParams,
    role: Role,
    error: Option<String>,
    emit: &mut dyn Sink<Event>,
    cpu: &dyn Fn(CpuTimes) -> CpuUsage,
) -> TestSummary {
    let stop_at = engine.elapsed();
    engine.ctl.abort.store(true, Ordering::Relaxed);
    let local = local_views(engine, stop_at, emit);
    let cpu_local = cpu(engine.join());
    sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
        role,
        params: p,
        local: &local,
        peer: None,
        cpu_local,
        local_congestion: None,
        error,
    })
}
