//! Latency runs side by side, each on its own thread.
//!
//! A latency run is a few probes and a wait for their replies: 0.2 s to a peer that
//! answers, 2 s to one that does not (1 s for replies, then three asks for its count). Run
//! one after another, a dead peer held back every other peer's runs, and a mesh with a few
//! sites down measured the healthy ones less often than asked (runs past their time are
//! skipped). So latency runs start when due, up to [`MAX_AT_ONCE`] at a time, and the loop
//! goes on; a throughput, capacity or profile run still runs alone, once those in flight
//! have ended, so that nothing of the agent's own shares the link it measures. A peer whose
//! previous run is still in flight when the next is due skips that one.
//!
//! Outcomes come back over a channel to the loop, which alone touches the metrics and the
//! store.

use crate::config::{LatencyTask, Peer};
use crate::outcome::RunOutcome;
use crate::runner::{outcome_of, run_latency};
use crate::schedule::Job;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Most latency runs in flight at once: enough that a few silent peers hold back none of the
/// others, few enough that the probes' precise waits leave a small board's cores alone.
pub const MAX_AT_ONCE: usize = 4;

struct Flight {
    id: u64,
    label: String,
    thread: JoinHandle<()>,
}

/// The latency runs in flight.
pub struct InFlight {
    tx: Sender<(u64, RunOutcome)>,
    rx: Receiver<(u64, RunOutcome)>,
    flights: Vec<Flight>,
    next_id: u64,
}

impl Default for InFlight {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            tx,
            rx,
            flights: Vec::new(),
            next_id: 0,
        }
    }
}

impl InFlight {
    /// How many runs are in flight.
    pub fn len(&self) -> usize {
        self.flights.len()
    }

    /// True when no run is in flight.
    pub fn is_empty(&self) -> bool {
        self.flights.is_empty()
    }

    /// True when a run of the peer labelled `label` is in flight.
    pub fn runs(&self, label: &str) -> bool {
        self.flights.iter().any(|f| f.label == label)
    }

    /// Starts `task` against `peer` on a thread of its own.
    ///
    /// # Errors
    /// The thread could not be started: the run's failed outcome, to be recorded.
    pub fn start(
        &mut self,
        peer: Peer,
        job: Job,
        task: LatencyTask,
        interrupt: Arc<AtomicBool>,
    ) -> Result<(), Box<RunOutcome>> {
        let id = self.next_id;
        self.next_id += 1;
        let tx = self.tx.clone();
        let label = peer.label().to_string();
        let spawned = std::thread::Builder::new()
            .name(format!("latency {label}"))
            .spawn({
                let peer = peer.clone();
                move || {
                    let outcome =
                        outcome_of(&peer, job, || run_latency(&peer, job, &task, &interrupt));
                    let _ = tx.send((id, outcome));
                }
            });
        match spawned {
            Ok(thread) => {
                self.flights.push(Flight { id, label, thread });
                Ok(())
            }
            Err(e) => Err(Box::new(crate::runner::not_started(
                &peer,
                job,
                format!("cannot start the run's thread: {e}"),
            ))),
        }
    }

    /// The outcome of a run that ended, waiting at most `timeout` for one; None when none
    /// ended meanwhile.
    pub fn next(&mut self, timeout: Duration) -> Option<RunOutcome> {
        if let Ok((id, outcome)) = self.rx.try_recv() {
            self.landed(id);
            return Some(outcome);
        }
        if self.flights.is_empty() {
            std::thread::sleep(timeout);
            return None;
        }
        match self.rx.recv_timeout(timeout) {
            Ok((id, outcome)) => {
                self.landed(id);
                Some(outcome)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                // Every run sends its outcome (a defect's too, see outcome_of); a thread that
                // ended anyway without one is in flight no more, not waited for.
                self.flights.retain(|f| !f.thread.is_finished());
                self.rx.try_recv().ok().map(|(id, outcome)| {
                    self.landed(id);
                    outcome
                })
            }
        }
    }

    /// The outcomes of the runs that have ended, without waiting.
    pub fn ended(&mut self) -> Vec<RunOutcome> {
        let mut out = Vec::new();
        while let Ok((id, outcome)) = self.rx.try_recv() {
            self.landed(id);
            out.push(outcome);
        }
        out
    }

    /// Waits for every run in flight to end (each ends within its own waits, at once when
    /// the interrupt flag is up) and returns their outcomes.
    pub fn drain(&mut self) -> Vec<RunOutcome> {
        let mut out = self.ended();
        while !self.flights.is_empty() {
            out.extend(self.next(Duration::from_millis(100)));
        }
        // Outcomes sent by runs whose flights ended in the same wait.
        out.extend(self.ended());
        out
    }

    fn landed(&mut self, id: u64) {
        if let Some(i) = self.flights.iter().position(|f| f.id == id) {
            let f = self.flights.swap_remove(i);
            let _ = f.thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FamilyChoice;
    use crate::schedule::Kind;
    use std::net::UdpSocket;

    fn peer(name: &str, port: u16) -> Peer {
        Peer {
            name: Some(name.into()),
            host: "127.0.0.1".into(),
            port,
            family: FamilyChoice::Ipv4,
            link_rate: None,
            psk_file: None,
            every_address: false,
        }
    }

    fn task() -> LatencyTask {
        LatencyTask {
            every_secs: 1.0,
            probes: 3,
            probe_interval_ms: 10.0,
        }
    }

    fn job(peer: usize) -> Job {
        Job {
            peer,
            kind: Kind::Latency,
            seq: 0,
        }
    }

    /// Two peers that never answer (bound sockets that read nothing): both runs are in
    /// flight at once, each known by its label, and both outcomes come back, failed.
    #[test]
    fn runs_fly_side_by_side_and_all_come_back() {
        let silent: Vec<UdpSocket> = (0..2)
            .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let mut f = InFlight::default();
        assert!(f.is_empty());
        for (i, s) in silent.iter().enumerate() {
            let port = s.local_addr().unwrap().port();
            f.start(peer(&format!("p{i}"), port), job(i), task(), stop.clone())
                .map_err(|o| o.error.clone())
                .unwrap();
        }
        assert_eq!(f.len(), 2);
        assert!(f.runs("p0") && f.runs("p1") && !f.runs("p2"));
        let out = f.drain();
        assert!(f.is_empty());
        let mut labels: Vec<&str> = out.iter().map(|o| o.peer.as_str()).collect();
        labels.sort_unstable();
        assert_eq!(labels, ["p0", "p1"]);
        // Side by side: each began before the other ended (one after the other, the second
        // would begin 2 s after the first, once it ended).
        let last_start = out.iter().map(|o| o.started_unix).fold(0.0, f64::max);
        let first_end = out.iter().map(|o| o.ended_unix).fold(f64::MAX, f64::min);
        assert!(last_start < first_end, "{out:?}");
        assert!(out.iter().all(|o| !o.ok()), "{out:?}");
    }

    /// Raising the interrupt flag ends the runs in flight at once, each with its outcome.
    #[test]
    fn the_interrupt_ends_the_runs_in_flight() {
        let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let mut f = InFlight::default();
        f.start(peer("p", port), job(0), task(), stop.clone())
            .map_err(|o| o.error.clone())
            .unwrap();
        assert_eq!(f.next(Duration::from_millis(50)).map(|o| o.peer), None);
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let out = f.drain();
        assert_eq!(out.len(), 1);
        // Ended by the flag, not by its own end (a silent peer's run says "none answered").
        let why = out[0].error.as_deref().unwrap_or("");
        assert!(why.contains("interrupted"), "{why}");
    }
}
