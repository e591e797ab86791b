//! The common end of the tests that run their own loop instead of the engine (coded,
//! capacity): wait for the client's stop, send this end's results, wait for the client's.

use super::{SessionRun, STEP};
use crate::error::RunError;
use sonde_proto::message::Results;
use sonde_proto::session::ServerEvent;
use sonde_stats::model::CpuUsage;

impl SessionRun<'_> {
    /// From the client's stop (unless `stopped` already) to its done, with `cpu` as this
    /// end's results.
    pub(super) fn close_own_loop(&mut self, stopped: bool, cpu: CpuUsage) -> Result<(), RunError> {
        let mut stopped = stopped;
        while !stopped {
            match self.next_event(STEP, "the client's stop")? {
                ServerEvent::StopRequested(_) => stopped = true,
                ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
                _ => {}
            }
        }
        self.session.send_results(Results {
            process_load: None,
            cpu,
            congestion: None,
            streams: Vec::new(),
            sent: Vec::new(),
            notes: Vec::new(),
            profile: Vec::new(),
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
