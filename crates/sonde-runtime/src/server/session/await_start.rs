//! Waiting for the client's start in the tests that drive their one UDP stream themselves
//! (coded, capacity): the repeated hellos of a client whose acknowledgement was lost are
//! answered meanwhile, as the throughput test's loop does.

use super::{SessionRun, STEP};
use crate::error::RunError;
use sonde_proto::session::ServerEvent;
use sonde_proto::udp_hello::HelloAck;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

impl SessionRun<'_> {
    /// Waits for the client's start, answering its repeated hellos meanwhile: on a lossy
    /// link the first acknowledgement can be lost, and a client without one never starts.
    pub(super) fn await_start(
        &mut self,
        sock: &UdpSocket,
        ack: Option<HelloAck>,
    ) -> Result<(), RunError> {
        let reack = ack.and_then(|a| sock.try_clone().ok().map(|c| (c, a)));
        if let Some((c, _)) = &reack {
            let _ = c.set_nonblocking(true);
        }
        let deadline = Instant::now() + STEP;
        let result = loop {
            if let Some((c, a)) = &reack {
                super::reack_one(c, a);
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
                self.session.abort(why);
                let _ = self.flush();
                break Err(RunError::Timeout("the client's start"));
            }
            if let Some(m) = self.conn.recv(Duration::from_millis(20))? {
                let r = self.session.handle(m);
                self.flush()?;
                r.map_err(|e| RunError::Protocol(e.to_string()))?;
            }
        };
        // The same open file: the coded driver reads it with its own timeouts.
        if let Some((c, _)) = &reack {
            let _ = c.set_nonblocking(false);
        }
        result
    }
}
