//! What the iperf3 client and server do around the shared [`Engine`]: a stream list, the
//! stream views at the end, and a partial summary after a failure (the workers start with
//! the core's `Engine::start_now`). The workers are sonde's
//! own (iperf3's datagram header is the [`StreamConfig`]'s format); iperf3 senders start at
//! once (no held start, unlike sonde's server) and ask for the TCP queue flush at the end.

use sonde_proto::message::{PeerStream, TestParams};
use sonde_runtime_core::engine::Engine;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{CpuUsage, Event, Role, TestSummary};
use sonde_stats::sink::Sink;
use std::sync::atomic::Ordering;

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
