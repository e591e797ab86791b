//! The start and the end of the served tests that run their own loop on one UDP stream
//! instead of the engine (coded, capacity): waiting for the client's start while answering
//! its repeated hellos, and from the client's stop through the results to its done.

use super::served_test::{reack_one, ServedTest, STEP};
use crate::error::RunError;
use sonde_proto::message::Results;
use sonde_proto::session::ServerEvent;
use sonde_proto::udp_hello::HelloAck;
use sonde_stats::model::CpuUsage;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

impl ServedTest<'_> {
    /// Waits for the client's start, answering its repeated hellos meanwhile: on a lossy
    /// link the first acknowledgement can be lost, and a client without one never starts.
    ///
    /// # Errors
    /// The client aborted, broke the protocol or never started; the server shut down.
    pub fn await_start(&mut self, sock: &UdpSocket, ack: Option<HelloAck>) -> Result<(), RunError> {
        let reack = ack.and_then(|a| sock.try_clone().ok().map(|c| (c, a)));
        if let Some((c, _)) = &reack {
            let _ = c.set_nonblocking(true);
        }
        let deadline = Instant::now() + STEP;
        let result = loop {
            if let Some((c, a)) = &reack {
                reack_one(c, a);
            }
            match self.session.poll_event() {
                Some(ServerEvent::Started) => break Ok(()),
                Some(ServerEvent::Aborted(r)) => break Err(RunError::PeerAborted(r)),
                Some(_) => break Err(RunError::Protocol("expected the client's start".into())),
                None => {}
            }
            if self.interrupted() || Instant::now() >= deadline {
                let why = if self.interrupted() {
                    "the server is shutting down"
                } else {
                    "server timed out waiting for the client's start"
                };
                self.abort(why);
                break Err(RunError::Timeout("the client's start"));
            }
            if let Some(m) = self.conn.recv(Duration::from_millis(20))? {
                let r = self.session.handle(m);
                self.flush()?;
                r.map_err(|e| RunError::Protocol(e.to_string()))?;
            }
        };
        // The same open file: the kind's own loop reads it with its own timeouts.
        if let Some((c, _)) = &reack {
            let _ = c.set_nonblocking(false);
        }
        result
    }

    /// From the client's stop (unless `stopped` already) to its done, with `cpu` as this
    /// end's results.
    ///
    /// # Errors
    /// The client aborted, broke the protocol or went silent.
    pub fn close_own_loop(&mut self, stopped: bool, cpu: CpuUsage) -> Result<(), RunError> {
        let mut stopped = stopped;
        while !stopped {
            match self.next_event(STEP, "the client's stop")? {
                ServerEvent::StopRequested(_) => stopped = true,
                ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
                _ => {}
            }
        }
        self.session.send_results(Results {
            cpu,
            ..Results::default()
        });
        self.flush()?;
        loop {
            match self.next_event(STEP, "the client's results")? {
                ServerEvent::PeerResults(_) => {}
                ServerEvent::Done => return Ok(()),
                ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
                _ => {
                    return Err(RunError::Protocol(
                        "unexpected message after results".into(),
                    ))
                }
            }
        }
    }
}
