//! The local store's retention (`retain_days`): tests older than that are deleted, at most
//! once per [`Retention::period`], and with PostgreSQL only those a copy has already taken.
//!
//! Why in the agent and not a cron job: only the agent knows which tests PostgreSQL holds
//! (the sync thread's [`crate::sync::Syncer::copied`] mark), and an outage longer than the
//! retention must not lose the results it buffered. Deleting is cheap (it walks only the rows
//! it deletes, see [`sonde_store::Store::prune_tests`]); SQLite reuses the freed pages, so the
//! file stops growing once it holds a retention's worth of tests.

use std::time::{Duration, Instant};

use sonde_store::WriteMark;

use crate::metrics::Metrics;
use crate::record::Recorder;

/// Longest time between two prunes.
const MAX_PERIOD: Duration = Duration::from_secs(3600);
/// Shortest time between two prunes.
const MIN_PERIOD: Duration = Duration::from_secs(1);

/// When to prune and what is old. Pure: time is an argument.
#[derive(Debug, Clone)]
pub struct Retention {
    keep: Duration,
    last: Option<Instant>,
}

impl Retention {
    /// A retention of `days` (positive; the configuration checks its range).
    pub fn new(days: f64) -> Retention {
        let keep = Duration::try_from_secs_f64(days * 86_400.0).unwrap_or(Duration::MAX);
        Retention { keep, last: None }
    }

    /// How often to prune: a tenth of the retention, between 1 s and an hour, so a test is
    /// kept at most 10 % (or an hour) longer than asked.
    pub fn period(&self) -> Duration {
        (self.keep / 10).clamp(MIN_PERIOD, MAX_PERIOD)
    }

    /// True when a prune is due at `now` (the first one at once); marks it done.
    pub fn due(&mut self, now: Instant) -> bool {
        if self
            .last
            .is_some_and(|l| now.saturating_duration_since(l) < self.period())
        {
            return false;
        }
        self.last = Some(now);
        true
    }

    /// The cut-off at Unix time `now_unix`: tests that ended before it are old.
    pub fn cutoff(&self, now_unix: f64) -> f64 {
        now_unix - self.keep.as_secs_f64()
    }
}

/// Deletes what is old at `now_unix` (only under `copied` when PostgreSQL is in use), counts
/// it in the metrics and logs it; a failure is logged and the agent goes on.
pub fn prune(
    r: &Retention,
    now_unix: f64,
    copied: Option<WriteMark>,
    recorder: &mut Recorder,
    metrics: &Metrics,
    log: &dyn Fn(&str),
) {
    match recorder.prune(r.cutoff(now_unix), copied) {
        Ok(0) => {}
        Ok(n) => {
            metrics.pruned(n);
            log(&format!(
                "deleted {n} tests older than {:.4} days from the local store",
                r.keep.as_secs_f64() / 86_400.0
            ));
        }
        Err(e) => log(&format!(
            "cannot delete old tests from the local store: {e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenth_of_the_retention_between_a_second_and_an_hour() {
        assert_eq!(Retention::new(30.0).period(), MAX_PERIOD);
        assert_eq!(Retention::new(0.1).period(), Duration::from_secs(864));
        assert_eq!(Retention::new(0.0001).period(), MIN_PERIOD);
    }

    #[test]
    fn due_at_once_then_once_per_period() {
        let mut r = Retention::new(0.1);
        let t0 = Instant::now();
        assert!(r.due(t0));
        assert!(!r.due(t0 + Duration::from_secs(863)));
        assert!(r.due(t0 + Duration::from_secs(864)));
        assert!(!r.due(t0 + Duration::from_secs(865)));
    }

    #[test]
    fn the_cut_off_is_the_retention_before_now() {
        let r = Retention::new(1.0);
        assert_eq!(r.cutoff(1_000_000.0), 1_000_000.0 - 86_400.0);
    }
}
