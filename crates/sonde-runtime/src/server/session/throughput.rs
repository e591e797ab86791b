//! The server's side of a throughput test (`sonde client`): after the usual set-up, the
//! stream workers from the streams-ready message, the test until the client's Stop (live
//! intervals to the client on the way), then results both ways and the summary.

use super::{canonical, reack_hellos, sending_udp_sockets, OpenStream, SessionRun, STEP};
use crate::engine::Engine;
use crate::error::RunError;
use crate::streams::StreamConfig;
use sonde_platform::cpu;
use sonde_proto::message::{PeerStream, ProcessLoad, Results, Stop, TestParams};
use sonde_proto::preamble::{cookie_hex, Cookie};
use sonde_proto::session::ServerEvent;
use sonde_proto::udp_hello::HelloAck;
use sonde_stats::cpu::CpuTimes;
use sonde_stats::model::{ConnectedStream, CpuUsage, Direction, Event, Role, TestStart};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

impl SessionRun<'_> {
    /// Runs the accepted test: the start event, the stream workers, the test until the
    /// client's Stop, then results both ways and the summary (a partial one on failure).
    pub(super) fn run_test(
        &mut self,
        p: &TestParams,
        cookie: Cookie,
        streams: Vec<OpenStream>,
    ) -> Result<(), RunError> {
        let interval = self.shared.cfg.interval_secs.unwrap_or(p.interval_secs);
        let start = self.start_event(p, &cookie, interval, &streams);
        self.events.start(start, p, Role::Server);
        let cpu0 = cpu::thread_times();
        self.process0 = self.cpu_load.then(cpu::process_times);
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
        let outcome = self.until_stop(&mut engine, self.time_limit(p), &reack);
        let stop = match outcome {
            Ok(stop) => stop,
            Err(e) => {
                self.finish_partial(p, &mut engine, t0, cpu0, &e);
                return Err(e);
            }
        };
        let (local, cpu_local) =
            self.send_results(p, &mut engine, &stop, (t0, cpu0), congestion.clone())?;
        self.summarise(p, &local, cpu_local, congestion);
        Ok(())
    }

    /// The start event of this end: its streams and addresses as users read them.
    fn start_event(
        &self,
        p: &TestParams,
        cookie: &Cookie,
        interval: f64,
        streams: &[OpenStream],
    ) -> TestStart {
        let connected = streams
            .iter()
            .map(|(s, l, r)| ConnectedStream {
                id: s.id,
                role: s.role,
                local: l.clone(),
                remote: r.clone(),
            })
            .collect();
        let local_addr = self
            .conn
            .stream()
            .local_addr()
            .map(canonical)
            .unwrap_or_default();
        crate::start::start_event(
            p,
            crate::start::StartContext {
                role: Role::Server,
                local: local_addr,
                remote: self.peer.to_string(),
                server_port: self.shared.cfg.port,
                cookie: cookie_hex(cookie),
                interval_secs: interval,
                connected,
                sockets: crate::start::socket_figures(
                    p,
                    streams.iter().map(|(s, _, _)| (&s.socket, s.role)),
                ),
            },
        )
    }

    /// Stops this end's senders, drains what the client sent, and sends this end's results.
    /// Returns the local stream views and this end's CPU usage.
    fn send_results(
        &mut self,
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
        let local = self.final_views(engine, stop_at, &sent_by_peer, peer_stopped_at);
        let sent = engine.sent_counts();
        let notes = engine.slip_notes("server");
        for n in &notes {
            self.events.emit(Event::Note(n.clone()));
        }
        let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
        let cpu_local = cpu::usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
        let process_load = self.process0.map(|p0| {
            let d = cpu::process_times().saturating_sub(p0);
            ProcessLoad {
                user_secs: d.user_us as f64 / 1e6,
                system_secs: d.system_us as f64 / 1e6,
                wall_secs: t0.elapsed().as_secs_f64(),
            }
        });
        self.events.measured(&local, cpu_local);
        self.session.send_results(Results {
            process_load,
            cpu: cpu_local,
            congestion,
            streams: local.clone(),
            sent,
            notes,
            profile: Vec::new(),
        });
        self.flush()?;
        Ok((local, cpu_local))
    }

    /// Waits for the client's results and emits the summary; results that never arrive make
    /// a summary that says so. Then gives the client a moment to say it is done.
    fn summarise(
        &mut self,
        p: &TestParams,
        local: &[PeerStream],
        cpu_local: CpuUsage,
        congestion: Option<String>,
    ) {
        let peer = match self.next_event(STEP, "the client's results") {
            Ok(ServerEvent::PeerResults(r)) => Some(*r),
            _ => None,
        };
        let error = peer
            .is_none()
            .then(|| "the client's results never arrived".to_string());
        let summary = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Server,
            params: p,
            local,
            peer: peer.as_ref(),
            cpu_local,
            local_congestion: congestion,
            error,
        });
        self.events.emit(Event::End(Box::new(summary)));
        if peer.is_some() {
            let _ = self.next_event(Duration::from_secs(2), "the client's done");
        }
    }

    /// Each local stream's final figures up to `stop_at`, after emitting the last (partial)
    /// interval. `sent_by_peer` is how many datagrams the client sent on a UDP stream;
    /// `peer_stopped_at`, when the client stopped its senders (seconds of its clock).
    fn final_views(
        &mut self,
        engine: &mut Engine,
        stop_at: f64,
        sent_by_peer: &dyn Fn(u32) -> Option<u64>,
        peer_stopped_at: Option<f64>,
    ) -> Vec<PeerStream> {
        if let Some(r) = engine.meter.finish(stop_at) {
            // The client shows it too, as it showed the others live.
            self.session.live_interval(r.clone());
            self.events.emit(Event::Interval(r));
        }
        engine
            .meter
            .end_views(stop_at, sent_by_peer, peer_stopped_at)
            .into_iter()
            .map(|(id, role, view)| PeerStream { id, role, view })
            .collect()
    }

    /// Runs the test until the client's Stop; emits intervals and live reports on the way.
    fn until_stop(
        &mut self,
        engine: &mut Engine,
        limit: f64,
        reack: &[(UdpSocket, HelloAck)],
    ) -> Result<Stop, RunError> {
        loop {
            reack_hellos(reack);
            if self.interrupted() {
                self.session.abort("the server is shutting down");
                let _ = self.flush();
                return Err(RunError::Interrupted);
            }
            engine.settle_clock();
            let elapsed = engine.elapsed();
            if elapsed > limit {
                let msg = format!("test exceeded the server's time limit of {limit:.0} s");
                self.session.abort(&msg);
                let _ = self.flush();
                return Err(RunError::Setup(msg));
            }
            if let Err(e) =
                crate::client_checks::check_receiving(engine, self.shared.cfg.rcv_timeout)
            {
                self.session.abort(&e.to_string());
                let _ = self.flush();
                return Err(e);
            }
            if let Some(r) = engine.meter.tick(elapsed) {
                self.session.live_interval(r.clone());
                self.events.emit(Event::Interval(r));
                self.flush()?;
            }
            if engine.sleep_to_boundary(None, crate::control_conn::POLL_SLICE) {
                continue;
            }
            if let Some(m) = self.conn.recv(Duration::from_millis(5))? {
                let r = self.session.handle(m);
                self.flush()?;
                r.map_err(|e| RunError::Protocol(e.to_string()))?;
                match self.session.poll_event() {
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
        &mut self,
        p: &TestParams,
        engine: &mut Engine,
        t0: Instant,
        cpu0: CpuTimes,
        e: &RunError,
    ) {
        let stop_at = engine.elapsed();
        engine.abort();
        let local = self.final_views(engine, stop_at, &|_| None, None);
        let cpu_total = engine.join() + cpu::thread_times().saturating_sub(cpu0);
        let cpu_local = cpu::usage(Default::default(), cpu_total, t0.elapsed().as_secs_f64());
        let summary = crate::summary::build(crate::summary::SummaryInput {
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
        self.events.emit(Event::End(Box::new(summary)));
    }
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
        crate::streams::Budget::new(p.bytes, p.blocks)
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
