//! The server's side of a coded test (`--coded`): after the usual set-up, drive the coded
//! receiver (upload) or sender (`-R`) on the test's one UDP stream, then stop and exchange
//! results as for any test.

use super::{OpenStream, SessionRun};
use crate::coded::endpoint::{drive, CodedFigures, Limits, Side};
use crate::engine::DataSocket;
use crate::error::RunError;
use sonde_platform::cpu;
use sonde_proto::message::TestParams;
use sonde_proto::session::ServerEvent;
use sonde_stats::model::Direction;
use std::time::{Duration, Instant};

impl SessionRun<'_> {
    /// Runs an accepted coded test from the client's start to its done.
    pub(super) fn run_coded(
        &mut self,
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
        self.await_start(&sock, ack)?;
        let cpu0 = cpu::thread_times();
        let t0 = Instant::now();
        let mut side = Side::new(p, p.direction == Direction::Reverse, None)?;
        let limit = Duration::from_secs_f64(self.time_limit(p).clamp(1.0, 86_400.0 * 2.0));
        let limits = Limits {
            finish_at: (p.bytes == 0).then(|| t0 + Duration::from_secs_f64(p.duration_secs)),
            deadline: t0 + limit,
            interrupt: &self.shared.interrupt,
        };
        let mut stopped = false;
        let mut figures = CodedFigures::default();
        let driven = {
            let (conn, session) = (&mut self.conn, &mut self.session);
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
        self.log_coded(&figures);
        driven?;
        let cpu = cpu::usage(cpu0, cpu::thread_times(), t0.elapsed().as_secs_f64());
        self.close_own_loop(stopped, cpu)
    }

    fn log_coded(&self, f: &CodedFigures) {
        let delivered = f.receiver.map_or(0, |r| r.delivered_bytes);
        let digest = match f.digest_ok {
            Some(true) => ", SHA-256 verified",
            Some(false) => ", SHA-256 MISMATCH",
            None => "",
        };
        (self.shared.log)(&format!(
            "coded transfer with {}: {} bytes delivered in {:.2} s{}{digest}",
            self.peer,
            delivered,
            f.elapsed_secs,
            if f.complete { "" } else { " (incomplete)" }
        ));
    }
}
