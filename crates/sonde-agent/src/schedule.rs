//! When each peer's next test runs: pure, with the time since the agent started as an argument.
//!
//! Every (peer, kind) pair has a period. Run n is planned at `n × period` after the pair's
//! start and starts a random delay of up to `jitter × period` after that, drawn afresh per
//! run from a seeded generator: agents started at the same moment (a fleet rebooted together)
//! drift apart instead of measuring each other at the same instants, while the long-run rate
//! stays exactly one run per period (the plan does not accumulate the jitter). The first run
//! of each pair is also spread over its first period (at most [`FIRST_SPREAD`]), so one agent
//! does not start all its peers at once.
//!
//! Latency runs go side by side (crate::inflight); any other kind runs alone. When a test
//! outlasts the next planned times (a slow throughput test, a peer that times out), the
//! missed runs are skipped and counted, never fired back to back: catching up would load the
//! links the schedule is meant to spare.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::time::Duration;

/// The first run of each pair falls within this long of the start (or its period, if shorter):
/// spread, but soon enough that a freshly started agent shows figures.
pub const FIRST_SPREAD: Duration = Duration::from_secs(10);

/// What a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// UDP round trips to the peer's server.
    Latency,
    /// A TCP transfer paced to the throughput budget.
    Throughput,
    /// Packet-dispersion capacity: short bursts at line rate, whose figure sets the budget.
    Capacity,
    /// A traffic profile (concurrent UDP burst streams both ways), within the budget.
    Profile,
}

impl Kind {
    /// The label in metrics and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Latency => "latency",
            Kind::Throughput => "throughput",
            Kind::Capacity => "capacity",
            Kind::Profile => "profile",
        }
    }
}

/// One run to start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Index of the peer in the configuration.
    pub peer: usize,
    pub kind: Kind,
    /// The run's number for this pair, from 0 (skipped runs keep their numbers).
    pub seq: u64,
}

#[derive(Debug, Clone)]
struct Slot {
    peer: usize,
    kind: Kind,
    period: Duration,
    /// The pair's start: its run n is planned at `origin + n × period`.
    origin: Duration,
    seq: u64,
    due: Duration,
}

/// The schedule of every pair.
#[derive(Debug, Clone)]
pub struct Schedule {
    slots: Vec<Slot>,
    jitter: f64,
    rng: Pcg64Mcg,
    skipped: u64,
}

impl Schedule {
    /// A schedule for `pairs` (peer, kind, period), starting at time zero. `jitter` is the
    /// largest start delay as a fraction of the period (clamped to 0..=1).
    pub fn new(pairs: &[(usize, Kind, Duration)], jitter: f64, seed: u64) -> Self {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let slots = pairs
            .iter()
            .filter(|(_, _, p)| !p.is_zero())
            .map(|&(peer, kind, period)| new_slot(&mut rng, peer, kind, period, Duration::ZERO))
            .collect();
        Self {
            slots,
            jitter,
            rng,
            skipped: 0,
        }
    }

    /// When the next run is due (None with nothing scheduled).
    pub fn next_due(&self) -> Option<Duration> {
        self.slots.iter().map(|s| s.due).min()
    }

    /// Runs skipped so far: an earlier test outlasted their planned time, or (counted by
    /// [`Schedule::skip_one`]) their peer's last run was still going.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Counts one run popped but not run: its pair's previous run was still going.
    pub fn skip_one(&mut self) {
        self.skipped += 1;
    }

    /// The run due at `now`, if one is (the earliest first), and plans that pair's next run
    /// after `now`: runs whose planned time has passed meanwhile are skipped.
    pub fn pop_due(&mut self, now: Duration) -> Option<Job> {
        let i = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.due <= now)
            .min_by_key(|(_, s)| (s.due, s.kind, s.peer))
            .map(|(i, _)| i)?;
        let jitter = self.jitter;
        let draw = self.rng.random_range(0.0..=1.0_f64);
        let slot = self.slots.get_mut(i)?;
        let job = Job {
            peer: slot.peer,
            kind: slot.kind,
            seq: slot.seq,
        };
        let period = slot.period.as_secs_f64();
        // The next planned run strictly after now (runs planned in between are skipped).
        let elapsed = now.saturating_sub(slot.origin).as_secs_f64();
        let next = ((elapsed / period).floor() as u64).saturating_add(1);
        self.skipped += next.saturating_sub(slot.seq + 1);
        slot.seq = next;
        slot.due =
            slot.origin + Duration::from_secs_f64(period * next as f64 + period * jitter * draw);
        Some(job)
    }

    /// The schedule of a reloaded configuration, at `now`: `pairs` as [`Schedule::new`] takes
    /// them, and `was` giving the index an entry had before (None for a new one). A pair of an
    /// entry that stays, with its period unchanged, keeps its plan (its next run is not moved
    /// and nothing is skipped); a new pair, or one whose period changed, starts afresh from
    /// `now` with its first run spread as at the start, numbered from 0 (the results' names
    /// stay unique all the same: crate::record).
    pub fn reshape(
        &mut self,
        pairs: &[(usize, Kind, Duration)],
        jitter: f64,
        was: impl Fn(usize) -> Option<usize>,
        now: Duration,
    ) {
        self.jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let old = std::mem::take(&mut self.slots);
        for &(peer, kind, period) in pairs.iter().filter(|(_, _, p)| !p.is_zero()) {
            let before = was(peer).and_then(|w| old.iter().find(|s| s.peer == w && s.kind == kind));
            let slot = match before {
                Some(s) if s.period == period => Slot { peer, ..s.clone() },
                _ => new_slot(&mut self.rng, peer, kind, period, now),
            };
            self.slots.push(slot);
        }
    }
}

/// A pair's plan from `start`: its first run spread over its first period (at most
/// [`FIRST_SPREAD`]).
fn new_slot(
    rng: &mut Pcg64Mcg,
    peer: usize,
    kind: Kind,
    period: Duration,
    start: Duration,
) -> Slot {
    let origin = start + period.min(FIRST_SPREAD).mul_f64(rng.random_range(0.0..1.0));
    Slot {
        peer,
        kind,
        period,
        origin,
        seq: 0,
        due: origin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// Drives the schedule like the agent does, each run lasting `run_for`, up to `until`;
    /// returns the start times of each pair's runs.
    fn drive(s: &mut Schedule, run_for: Duration, until: f64) -> Vec<(Job, f64)> {
        let mut now = Duration::ZERO;
        let mut out = Vec::new();
        while now < secs(until) {
            match s.pop_due(now) {
                Some(job) => {
                    out.push((job, now.as_secs_f64()));
                    now += run_for;
                }
                None => now = s.next_due().unwrap().max(now),
            }
        }
        out
    }

    #[test]
    fn keeps_one_run_per_period_despite_jitter() {
        let mut s = Schedule::new(&[(0, Kind::Latency, secs(10.0))], 0.5, 7);
        let runs = drive(&mut s, secs(0.1), 1000.0);
        // 100 periods: 99 or 100 runs (the first is somewhere in the first period).
        assert!((99..=100).contains(&runs.len()), "{}", runs.len());
        // Each run starts within its period's jitter window.
        let origin = runs[0].1;
        for (job, t) in &runs {
            let planned = origin + 10.0 * job.seq as f64;
            assert!(
                *t >= planned - 1e-9 && *t <= planned + 5.0 + 1e-9,
                "{t} vs {planned}"
            );
        }
        assert_eq!(s.skipped(), 0);
    }

    #[test]
    fn jitter_differs_between_agents_and_repeats_with_a_seed() {
        let starts = |seed| {
            let mut s = Schedule::new(&[(0, Kind::Latency, secs(10.0))], 0.3, seed);
            drive(&mut s, secs(0.1), 100.0)
                .iter()
                .map(|r| r.1)
                .collect::<Vec<_>>()
        };
        assert_eq!(starts(1), starts(1));
        assert_ne!(starts(1), starts(2));
        // The gaps are not all equal: the jitter is drawn per run.
        let a = starts(3);
        let gaps: Vec<f64> = a.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().any(|g| (g - gaps[0]).abs() > 0.01), "{gaps:?}");
    }

    #[test]
    fn without_jitter_runs_are_exactly_periodic() {
        let mut s = Schedule::new(&[(0, Kind::Latency, secs(2.0))], 0.0, 9);
        let runs = drive(&mut s, secs(0.01), 20.0);
        for w in runs.windows(2) {
            assert!((w[1].1 - w[0].1 - 2.0).abs() < 1e-6);
        }
    }

    #[test]
    fn a_long_test_skips_runs_instead_of_bursting() {
        // Runs last 25 s with a 10 s period: every run misses the next one or two.
        let mut s = Schedule::new(&[(0, Kind::Throughput, secs(10.0))], 0.0, 5);
        let runs = drive(&mut s, secs(25.0), 300.0);
        for w in runs.windows(2) {
            assert!(w[1].1 - w[0].1 >= 25.0 - 1e-9, "back to back: {runs:?}");
        }
        assert!(s.skipped() >= 12, "skipped {}", s.skipped());
        // Sequence numbers still count planned runs.
        assert!(runs.last().unwrap().0.seq >= 25, "{runs:?}");
    }

    #[test]
    fn several_pairs_share_one_runner_in_due_order() {
        let pairs = [
            (0, Kind::Latency, secs(1.0)),
            (1, Kind::Latency, secs(1.0)),
            (0, Kind::Throughput, secs(60.0)),
        ];
        let mut s = Schedule::new(&pairs, 0.2, 11);
        let runs = drive(&mut s, secs(0.05), 120.0);
        let count = |p, k| {
            runs.iter()
                .filter(|(j, _)| j.peer == p && j.kind == k)
                .count()
        };
        assert!((118..=120).contains(&count(0, Kind::Latency)));
        assert!((118..=120).contains(&count(1, Kind::Latency)));
        assert!((1..=2).contains(&count(0, Kind::Throughput)));
        for w in runs.windows(2) {
            assert!(w[1].1 >= w[0].1);
        }
    }

    #[test]
    fn long_periods_start_within_the_first_spread() {
        for seed in 0..50 {
            let s = Schedule::new(&[(0, Kind::Capacity, secs(3600.0))], 0.2, seed);
            assert!(s.next_due().unwrap() < FIRST_SPREAD);
        }
    }

    #[test]
    fn a_reload_keeps_the_plans_of_unchanged_pairs_and_starts_new_ones_afresh() {
        let pairs = [
            (0, Kind::Latency, secs(1.0)),
            (1, Kind::Latency, secs(1.0)),
            (1, Kind::Throughput, secs(60.0)),
        ];
        let mut s = Schedule::new(&pairs, 0.0, 4);
        let before = drive(&mut s, secs(0.01), 100.0);
        let last = |runs: &[(Job, f64)], p, k| {
            runs.iter()
                .filter(|(j, _)| j.peer == p && j.kind == k)
                .map(|(j, _)| j.seq)
                .max()
        };
        let latency1 = last(&before, 1, Kind::Latency).unwrap();
        let due_before: Vec<Duration> = s.slots.iter().map(|x| x.due).collect();
        // Entry 0 goes, entry 1 moves to index 0 with latency kept and throughput every
        // 30 s instead of 60, and a new entry 1 comes.
        let now = secs(100.0);
        let reloaded = [
            (0, Kind::Latency, secs(1.0)),
            (0, Kind::Throughput, secs(30.0)),
            (1, Kind::Latency, secs(1.0)),
        ];
        s.reshape(&reloaded, 0.0, |i| (i == 0).then_some(1), now);
        // The kept pair's next run is where it was; nothing was skipped by the reload.
        assert_eq!(s.slots[0].due, due_before[1]);
        let skipped = s.skipped();
        // The others start within their first spread from now.
        assert!(s.slots[1].due >= now && s.slots[1].due < now + FIRST_SPREAD);
        assert!(s.slots[2].due >= now && s.slots[2].due < now + secs(1.0));
        let mut after = Vec::new();
        let mut t = now;
        while t < secs(200.0) {
            match s.pop_due(t) {
                Some(job) => {
                    after.push((job, t.as_secs_f64()));
                    t += secs(0.01);
                }
                None => t = s.next_due().unwrap().max(t),
            }
        }
        assert_eq!(s.skipped(), skipped, "the reload skipped runs");
        // The kept pair's numbers go on; the re-timed and the new pair start over.
        let first = |p, k| {
            after
                .iter()
                .find(|(j, _)| j.peer == p && j.kind == k)
                .map(|(j, _)| j.seq)
                .unwrap()
        };
        assert_eq!(first(0, Kind::Latency), latency1 + 1);
        assert_eq!(first(0, Kind::Throughput), 0);
        assert_eq!(first(1, Kind::Latency), 0);
        // One run per period from the reload on: 100 s of latency, 3 or 4 of throughput.
        let count = |p, k| {
            after
                .iter()
                .filter(|(j, _)| j.peer == p && j.kind == k)
                .count()
        };
        assert!(
            (99..=101).contains(&count(0, Kind::Latency)),
            "{}",
            count(0, Kind::Latency)
        );
        assert!((3..=4).contains(&count(0, Kind::Throughput)));
    }

    #[test]
    fn nothing_due_before_the_first_run() {
        let mut s = Schedule::new(&[(0, Kind::Latency, secs(5.0))], 0.1, 1);
        let first = s.next_due().unwrap();
        assert!(first < secs(5.0));
        if first > Duration::ZERO {
            assert_eq!(s.pop_due(first - Duration::from_nanos(1)), None);
        }
        assert!(s.pop_due(first).is_some());
        assert!(Schedule::new(&[], 0.1, 1).next_due().is_none());
    }
}
