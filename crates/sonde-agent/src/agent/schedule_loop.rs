//! The schedule loop itself: each turn pops what is due, flies latency runs side by side and
//! any other kind alone, lands what finished, applies a reload between runs, and sleeps in
//! slices no longer than [`SLICE`] so the interrupt flag is seen within one.

use super::books::Books;
use super::running::{Running, SLICE};
use crate::config::{AgentConfig, Peer};
use crate::inflight::{InFlight, MAX_AT_ONCE};
use crate::outcome::RunResult;
use crate::reload::Reload;
use crate::retain::Retention;
use crate::runner::{outcome_of, run_job};
use crate::schedule::{Job, Kind, Schedule};
use crate::sync::Syncer;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The schedule loop: its state, where outcomes go, and what it watches.
pub(super) struct Loop<'a> {
    pub(super) state: Running,
    pub(super) inflight: InFlight,
    pub(super) retention: Option<Retention>,
    pub(super) books: Books<'a>,
    pub(super) reload: Option<&'a Reload>,
    /// The agent's own server port (an entry naming this agent is skipped).
    pub(super) port: u16,
    pub(super) interrupt: &'a Arc<AtomicBool>,
    pub(super) start: Instant,
}

impl Loop<'_> {
    /// Turns until the interrupt flag is up; then the runs in flight end at once, with what
    /// they measured.
    pub(super) fn run(&mut self) {
        while !self.interrupt.load(Ordering::Relaxed) {
            self.turn();
        }
        self.land_all();
    }

    /// One turn: lands what ended, reloads or prunes when due, then runs the job due or
    /// waits for one.
    fn turn(&mut self) {
        for o in self.inflight.ended() {
            self.books.account(&o);
        }
        self.books.metrics.set_in_flight(self.inflight.len());
        if let Some(r) = self.reload {
            if r.requested.swap(false, Ordering::SeqCst) {
                // A run in flight lands before its peer can be dropped from the metrics.
                self.land_all();
                let now = self.start.elapsed();
                let books = &mut self.books;
                self.state
                    .reload(r, books.metrics, &mut *books.recorder, now, books.log);
            }
        }
        self.prune_if_due();
        let now = self.start.elapsed();
        let Some(job) = self.state.schedule.pop_due(now) else {
            let wait = idle_wait(self.state.schedule.next_due(), now);
            if let Some(o) = self.inflight.next(wait) {
                self.books.account(&o);
            }
            return;
        };
        self.dispatch(job);
    }

    /// Lands every run in flight.
    fn land_all(&mut self) {
        for o in self.inflight.drain() {
            self.books.account(&o);
        }
        self.books.metrics.set_in_flight(0);
    }

    fn prune_if_due(&mut self) {
        if let Some(r) = self.retention.as_mut() {
            if r.due(Instant::now()) {
                let b = &mut self.books;
                let copied = b.syncer.map(Syncer::copied);
                crate::retain::prune(
                    r,
                    sonde_platform::host::unix_now(),
                    copied,
                    b.recorder,
                    b.metrics,
                    b.log,
                );
            }
        }
    }

    /// Runs `job` to each of its entry's peers: latency runs in flight, any other kind alone.
    fn dispatch(&mut self, job: Job) {
        let Some(peers) = self
            .state
            .resolve(job, self.port, &mut self.books, self.interrupt)
        else {
            return;
        };
        if job.kind != Kind::Latency {
            // Alone on the link: the latency runs in flight land first.
            self.land_all();
        }
        for peer in &peers {
            if self.interrupt.load(Ordering::Relaxed) {
                break;
            }
            if job.kind == Kind::Latency {
                let state = &mut self.state;
                fly(
                    peer,
                    job,
                    &state.cfg,
                    &mut self.inflight,
                    &mut state.schedule,
                    &mut self.books,
                    self.interrupt,
                );
                continue;
            }
            self.run_alone(peer, job);
        }
        self.books.totals.skipped = self.state.schedule.skipped();
        self.books.metrics.set_skipped(self.books.totals.skipped);
    }

    /// Runs a job other than latency to `peer` and accounts for it; a capacity figure becomes
    /// the peer's throughput reference.
    fn run_alone(&mut self, peer: &Peer, job: Job) {
        let state = &mut self.state;
        let known = state.measured.get(peer.label()).copied();
        let (cfg, interrupt) = (&state.cfg, self.interrupt);
        // Alone: the latency runs in flight have landed.
        self.books.metrics.set_in_flight(1);
        // A defect's panic is this run's failed outcome, not the agent's end.
        let outcome = outcome_of(peer, job, || run_job(peer, job, cfg, known, interrupt));
        self.books.metrics.set_in_flight(0);
        if let RunResult::Capacity(c) = &outcome.result {
            state
                .measured
                .insert(peer.label().to_string(), c.bps as u64);
        }
        self.books.account(&outcome);
    }
}

/// How long an idle turn waits for a run in flight to land: until the next job is due, at most
/// [`SLICE`] (also without one), at least a millisecond.
fn idle_wait(next_due: Option<Duration>, now: Duration) -> Duration {
    let wait = next_due.map_or(SLICE, |d| d.saturating_sub(now).min(SLICE));
    wait.max(Duration::from_millis(1))
}

/// Starts a latency run of `peer` in flight, once fewer than [`MAX_AT_ONCE`] are (landing
/// those that end meanwhile); skips it when the peer's previous run is still in flight.
fn fly(
    peer: &Peer,
    job: Job,
    cfg: &AgentConfig,
    inflight: &mut InFlight,
    schedule: &mut Schedule,
    books: &mut Books,
    interrupt: &Arc<AtomicBool>,
) {
    let Some(task) = cfg.latency.clone() else {
        books.account(&crate::runner::unknown(peer, job));
        return;
    };
    if inflight.runs(peer.label()) {
        schedule.skip_one();
        return;
    }
    while inflight.len() >= MAX_AT_ONCE {
        if let Some(o) = inflight.next(SLICE) {
            books.account(&o);
        }
    }
    if let Err(o) = inflight.start(peer.clone(), job, task, interrupt.clone()) {
        books.account(&o);
    }
    books.metrics.set_in_flight(inflight.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_turn_waits_until_the_next_job_at_most_a_slice() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        // Due in 30 ms: wait 30 ms; due in 5 s, or nothing due: one slice.
        assert_eq!(idle_wait(Some(s(10) + ms(30)), s(10)), ms(30));
        assert_eq!(idle_wait(Some(s(15)), s(10)), SLICE);
        assert_eq!(idle_wait(None, s(10)), SLICE);
        // Overdue (popped next turn) or due now: still a millisecond, not a spin.
        assert_eq!(idle_wait(Some(s(9)), s(10)), ms(1));
        assert_eq!(idle_wait(Some(s(10)), s(10)), ms(1));
    }
}
