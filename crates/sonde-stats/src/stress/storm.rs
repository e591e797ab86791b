//! `sonde stress --storm`: connections opened and closed as fast as the device takes them, for
//! a while: how many it accepted per second, how the others failed, and how long a connect
//! took. Pure: outcomes and times in, the report out.

use crate::latency::histogram::DelayAccumulator;
use serde::{Deserialize, Serialize};

/// How one storm attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Established (then closed at once); with the connect time in ns.
    Accepted(u64),
    /// Answered with a reset.
    Refused,
    /// No answer within the connect timeout.
    TimedOut,
    /// Any other error.
    Failed,
}

/// Counts and connect times of a storm, as they come.
#[derive(Debug, Clone)]
pub struct StormTally {
    accepted: u64,
    refused: u64,
    timed_out: u64,
    failed: u64,
    connect: DelayAccumulator,
}

impl Default for StormTally {
    fn default() -> Self {
        Self {
            accepted: 0,
            refused: 0,
            timed_out: 0,
            failed: 0,
            connect: DelayAccumulator::absolute(),
        }
    }
}

/// The storm's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StormReport {
    pub seconds: f64,
    /// Connections in flight at once (`-P`).
    pub concurrency: u32,
    pub attempts: u64,
    pub accepted: u64,
    pub refused: u64,
    pub timed_out: u64,
    pub failed: u64,
    /// Accepted connections per second.
    pub accepted_per_second: f64,
    /// Connect time (SYN to established) of the accepted ones, ms.
    pub connect_ms_median: Option<f64>,
    pub connect_ms_p99: Option<f64>,
    pub connect_ms_max: Option<f64>,
    /// The run was cut short (Ctrl-C).
    pub partial: bool,
}

impl StormTally {
    pub fn record(&mut self, a: Attempt) {
        match a {
            Attempt::Accepted(ns) => {
                self.accepted += 1;
                self.connect.record(i64::try_from(ns).unwrap_or(i64::MAX));
            }
            Attempt::Refused => self.refused += 1,
            Attempt::TimedOut => self.timed_out += 1,
            Attempt::Failed => self.failed += 1,
        }
    }

    /// The report after `seconds` of storm at `concurrency`.
    pub fn report(&self, seconds: f64, concurrency: u32, partial: bool) -> StormReport {
        let ms = |q: f64| self.connect.quantile_ns(q).map(|v| v as f64 / 1e6);
        StormReport {
            seconds,
            concurrency,
            attempts: self.accepted + self.refused + self.timed_out + self.failed,
            accepted: self.accepted,
            refused: self.refused,
            timed_out: self.timed_out,
            failed: self.failed,
            accepted_per_second: if seconds > 0.0 {
                self.accepted as f64 / seconds
            } else {
                0.0
            },
            connect_ms_median: ms(0.5),
            connect_ms_p99: ms(0.99),
            connect_ms_max: self.connect.max_ns().map(|v| v as f64 / 1e6),
            partial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_kind_and_the_accepted_rate() {
        let mut t = StormTally::default();
        for i in 1..=100u64 {
            t.record(Attempt::Accepted(i * 10_000)); // 0.01 .. 1 ms
        }
        t.record(Attempt::Refused);
        t.record(Attempt::TimedOut);
        t.record(Attempt::Failed);
        t.record(Attempt::Failed);
        let r = t.report(2.0, 8, false);
        assert_eq!(
            (r.attempts, r.accepted, r.refused, r.timed_out, r.failed),
            (104, 100, 1, 1, 2)
        );
        assert!((r.accepted_per_second - 50.0).abs() < 1e-9);
        let median = r.connect_ms_median.unwrap();
        assert!((median - 0.5).abs() < 0.01, "{median}");
        assert!((r.connect_ms_max.unwrap() - 1.0).abs() < 1e-6);
        let empty = StormTally::default().report(1.0, 1, true);
        assert_eq!((empty.attempts, empty.connect_ms_median), (0, None));
    }
}
