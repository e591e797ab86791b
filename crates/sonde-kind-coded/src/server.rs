//! The server's side of a coded test (`--coded`): after the server's set-up, drive the coded
//! receiver (upload) or sender (`-R`) on the test's one UDP stream, then stop and exchange
//! results as for any test.

use crate::endpoint::{drive, CodedFigures, Limits, Side};
use sonde_platform::cpu;
use sonde_proto::message::TestParams;
use sonde_proto::session::ServerEvent;
use sonde_runtime_core::engine::DataSocket;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::serving::served_test::{OpenStream, ServedTest};
use sonde_stats::model::Direction;
use std::time::{Duration, Instant};

/// Runs an accepted coded test from the client's start to its done.
pub fn serve(
    t: &mut ServedTest<'_>,
    p: &TestParams,
    streams: Vec<OpenStream>,
) -> Result<(), RunError> {
    let Some((stream, _, _)) = streams.into_iter().next() else {
        return Err(RunError::Setup("a coded test needs its UDP stream".into()));
    };
    let ack = stream.ack;
    let DataSocket::Udp(sock) = stream.socket else {
        return Err(RunError::Setup(
            "the coded stream is not a UDP socket".into(),
        ));
    };
    t.await_start(&sock, ack)?;
    let cpu0 = cpu::thread_times();
    let t0 = Instant::now();
    let mut side = Side::new(p, p.direction == Direction::Reverse, None)?;
    let limit = Duration::from_secs_f64(t.time_limit(p).clamp(1.0, 86_400.0 * 2.0));
    let limits = Limits {
        finish_at: p
            .bytes
            .is_zero()
            .then(|| t0 + Duration::from_secs_f64(p.duration_secs)),
        deadline: t0 + limit,
        interrupt: t.interrupt_flag(),
    };
    let mut stopped = false;
    let mut figures = CodedFigures::default();
    let driven = {
        let (conn, session) = (&mut t.conn, &mut t.session);
        let mut watch = || -> Result<bool, RunError> {
            if let Some(m) = conn.try_recv()? {
                session
                    .handle(m)
                    .map_err(|e| RunError::Protocol(e.to_string()))?;
                match session.poll_event() {
                    Some(ServerEvent::StopRequested(_)) => stopped = true,
                    Some(ServerEvent::Aborted(r)) => return Err(RunError::PeerAborted(r)),
                    _ => {}
                }
            }
            Ok(stopped)
        };
        drive(&mut side, &sock, &limits, &mut watch, &mut figures)
    };
    log_coded(t, &figures);
    driven?;
    let cpu = cpu::usage(cpu0, cpu::thread_times(), t0.elapsed().as_secs_f64());
    t.close_own_loop(stopped, cpu)
}

fn log_coded(t: &ServedTest<'_>, f: &CodedFigures) {
    let delivered = f.receiver.map_or(0, |r| r.delivered_bytes);
    let digest = match f.digest_ok {
        Some(true) => ", SHA-256 verified",
        Some(false) => ", SHA-256 MISMATCH",
        None => "",
    };
    t.log(&format!(
        "coded transfer with {}: {} bytes delivered in {:.2} s{}{digest}",
        t.peer,
        delivered,
        f.elapsed_secs,
        if f.complete { "" } else { " (incomplete)" }
    ));
}
