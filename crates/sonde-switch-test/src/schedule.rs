//! When a switch test switches: every N seconds, or at the times given (`--at`).
//!
//! Time is an argument (the elapsed time of the transfer), so the schedule is tested without
//! a clock.

use std::time::Duration;

/// The switches still to come.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// Every `every`, the next one at `next`.
    Every { every: Duration, next: Duration },
    /// At these times from the start, earliest last (popped as they fall due).
    At(Vec<Duration>),
}

impl Schedule {
    /// `at` (seconds from the start, any order) when given, else every `every` seconds.
    pub fn new(every: f64, at: &[f64]) -> Self {
        if at.is_empty() {
            let every = Duration::from_secs_f64(every);
            return Self::Every { every, next: every };
        }
        let mut times: Vec<Duration> = at.iter().map(|s| Duration::from_secs_f64(*s)).collect();
        times.sort_by(|a, b| b.cmp(a));
        Self::At(times)
    }

    /// Whether a switch is due at `elapsed`; if so, it is taken off the schedule (several
    /// overdue times give one switch each, one per call).
    pub fn due(&mut self, elapsed: Duration) -> bool {
        match self {
            Self::Every { every, next } if elapsed >= *next => {
                *next += *every;
                true
            }
            Self::Every { .. } => false,
            Self::At(times) => match times.last() {
                Some(t) if elapsed >= *t => {
                    times.pop();
                    true
                }
                _ => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: f64) -> Duration {
        Duration::from_secs_f64(v)
    }

    #[test]
    fn every_n_seconds_from_the_first_step_on() {
        let mut sc = Schedule::new(0.5, &[]);
        assert!(!sc.due(s(0.4)));
        assert!(sc.due(s(0.5)));
        assert!(!sc.due(s(0.6)));
        assert!(sc.due(s(1.0)));
    }

    #[test]
    fn given_times_in_any_order_fall_due_once_each() {
        let mut sc = Schedule::new(1.0, &[2.0, 0.5, 1.0]);
        assert!(!sc.due(s(0.2)));
        assert!(sc.due(s(1.5))); // 0.5
        assert!(sc.due(s(1.5))); // 1.0, overdue
        assert!(!sc.due(s(1.5)));
        assert!(sc.due(s(2.0)));
        assert!(!sc.due(s(100.0)));
    }
}
