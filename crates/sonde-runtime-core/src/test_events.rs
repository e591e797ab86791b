//! The events of one test on their way to the caller's sink, with one guarantee: a test whose
//! `Start` was emitted always gets an `End`, exactly one.
//!
//! Reporters finish their document (the `-J` JSON, the table's summary) at `End`. A server
//! session that failed after `Start` (the client vanished while results were exchanged, a
//! stream worker could not start) used to return its error without one, so that test's
//! document was never written. Every session now emits through a [`TestEvents`]: when it is
//! closed, or dropped on any path, after a `Start` without an `End`, it emits a partial `End`
//! that carries the error, and an `End` that follows another is dropped. Once a session knows
//! this end's final figures ([`TestEvents::measured`]), that partial `End` carries them.

use crate::error::RunError;
use sonde_proto::message::{PeerStream, TestParams};
use sonde_stats::model::{CpuUsage, Event, Role, TestStart};
use sonde_stats::sink::{deliver, Sink};

/// A sink for one test's events. See the module docs.
pub struct TestEvents<'a> {
    sink: &'a mut (dyn Sink<Event> + Send),
    /// The started test still waiting for its End.
    open: Option<(TestParams, Role)>,
    ended: bool,
    /// This end's final stream views and CPU, once known.
    local: Option<(Vec<PeerStream>, CpuUsage)>,
}

impl<'a> TestEvents<'a> {
    pub fn new(sink: &'a mut (dyn Sink<Event> + Send)) -> Self {
        Self {
            sink,
            open: None,
            ended: false,
            local: None,
        }
    }

    /// Records this end's final figures, so that a failure after this point (the peer gone
    /// during the results exchange) still ends the test with what was measured.
    pub fn measured(&mut self, local: &[PeerStream], cpu: CpuUsage) {
        self.local = Some((local.to_vec(), cpu));
    }

    /// Emits `ev` (a `Start` goes through [`Self::start`]). An `End` closes the test; a
    /// second `End` is dropped.
    pub fn emit(&mut self, ev: Event) {
        if matches!(ev, Event::End(_)) {
            if self.ended {
                return;
            }
            self.ended = true;
            self.open = None;
        }
        deliver(self.sink, &ev);
    }

    /// Emits the `Start` of the test run with `params` by `role`.
    pub fn start(&mut self, start: TestStart, params: &TestParams, role: Role) {
        self.open = Some((params.clone(), role));
        self.ended = false;
        deliver(self.sink, &Event::Start(Box::new(start)));
    }

    /// Whether a started test still lacks its End.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Ends the events: when a test started and has no End yet, emits a partial End that
    /// carries `error` (or says that the session ended without a result).
    pub fn close(&mut self, error: Option<&RunError>) {
        let Some((params, role)) = self.open.take() else {
            return;
        };
        let error = match error {
            Some(RunError::PeerClosed) if role == Role::Server => RunError::ClientGone.to_string(),
            Some(e) => e.to_string(),
            None => "the session ended before the test's results were complete".into(),
        };
        let (local, cpu_local) = self.local.take().unwrap_or_default();
        let summary = crate::summary::build(crate::summary::SummaryInput {
            role,
            params: &params,
            local: &local,
            peer: None,
            cpu_local,
            local_congestion: None,
            error: Some(error),
        });
        self.emit(Event::End(Box::new(summary)));
    }
}

impl Drop for TestEvents<'_> {
    fn drop(&mut self) {
        self.close(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::sink::FnSink;

    fn start_event() -> TestStart {
        crate::start::start_event(
            &TestParams::default(),
            crate::start::StartContext {
                role: Role::Server,
                local: "127.0.0.1:5201".into(),
                remote: "127.0.0.1:40000".into(),
                server_port: 5201,
                cookie: String::new(),
                interval_secs: 1.0,
                connected: Vec::new(),
                sockets: Default::default(),
            },
        )
    }

    fn ends(log: &[Event]) -> Vec<Option<String>> {
        log.iter()
            .filter_map(|e| match e {
                Event::End(s) => Some(s.error.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_started_test_that_fails_still_ends_once_with_its_error() {
        let mut log = Vec::new();
        let mut sink = FnSink(|e: &Event| log.push(e.clone()));
        let mut ev = TestEvents::new(&mut sink);
        ev.start(start_event(), &TestParams::default(), Role::Server);
        assert!(ev.is_open());
        ev.close(Some(&RunError::PeerClosed));
        ev.close(Some(&RunError::Interrupted));
        drop(ev);
        assert_eq!(
            ends(&log),
            [Some(RunError::ClientGone.to_string())],
            "one End, with the first error"
        );
    }

    #[test]
    fn a_complete_test_gets_no_second_end_and_no_start_means_no_end() {
        let mut log = Vec::new();
        let mut sink = FnSink(|e: &Event| log.push(e.clone()));
        let mut ev = TestEvents::new(&mut sink);
        ev.start(start_event(), &TestParams::default(), Role::Client);
        let done = crate::summary::build(crate::summary::SummaryInput {
            role: Role::Client,
            params: &TestParams::default(),
            local: &[],
            peer: None,
            cpu_local: CpuUsage::default(),
            local_congestion: None,
            error: None,
        });
        ev.emit(Event::End(Box::new(done.clone())));
        ev.emit(Event::End(Box::new(done)));
        ev.close(Some(&RunError::Interrupted));
        drop(ev);
        assert_eq!(ends(&log), [None]);

        let mut log = Vec::new();
        let mut sink = FnSink(|e: &Event| log.push(e.clone()));
        let mut ev = TestEvents::new(&mut sink);
        ev.emit(Event::Note("refused".into()));
        drop(ev);
        assert!(ends(&log).is_empty());
    }

    #[test]
    fn a_failure_after_the_final_figures_keeps_them() {
        let mut log = Vec::new();
        let mut sink = FnSink(|e: &Event| log.push(e.clone()));
        let mut ev = TestEvents::new(&mut sink);
        ev.start(start_event(), &TestParams::default(), Role::Server);
        let view = sonde_stats::model::EndView {
            start: 0.0,
            end: 1.0,
            bytes: 1000,
            bits_per_second: 8000.0,
            tcp: None,
            udp_sent_packets: None,
            udp_received: None,
        };
        let stream = PeerStream {
            id: 1,
            role: sonde_stats::model::StreamRole::Receiver,
            view,
        };
        ev.measured(&[stream], CpuUsage::default());
        ev.close(Some(&RunError::PeerClosed));
        drop(ev);
        let end = log.iter().find_map(|e| match e {
            Event::End(s) => Some(s.clone()),
            _ => None,
        });
        let end = end.expect("an End");
        assert_eq!(
            end.streams[0].receiver.as_ref().map(|v| v.bytes),
            Some(1000)
        );
        assert!(end.error.is_some());
    }

    #[test]
    fn dropping_an_open_test_emits_the_partial_end() {
        let mut log = Vec::new();
        let mut sink = FnSink(|e: &Event| log.push(e.clone()));
        let mut ev = TestEvents::new(&mut sink);
        ev.start(start_event(), &TestParams::default(), Role::Server);
        drop(ev);
        assert_eq!(ends(&log).len(), 1);
        assert!(ends(&log)[0]
            .as_deref()
            .is_some_and(|e| e.contains("before")));
    }
}
