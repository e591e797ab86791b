//! `sonde stress --ramp LO..HI`: the most a device moves against how many connections share
//! it. The counts double from LO and end at HI; each step is a whole stress run, summed up
//! here as one row. Pure: summaries in, rows out.

use super::model::StressSummary;
use serde::{Deserialize, Serialize};

/// The connection counts of a ramp: LO, 2·LO, 4·LO, ... and HI last (LO <= HI, both >= 1).
pub fn counts(lo: u32, hi: u32) -> Vec<u32> {
    let (lo, hi) = (lo.max(1), hi.max(lo.max(1)));
    let mut out = vec![lo];
    while let Some(next) = out
        .last()
        .and_then(|n| n.checked_mul(2))
        .filter(|&n| n < hi)
    {
        out.push(next);
    }
    if out.last() != Some(&hi) {
        out.push(hi);
    }
    out
}

/// One step of the ramp.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampStep {
    /// Connections asked for.
    pub connections: u32,
    /// Connections that opened.
    pub opened: u32,
    /// Total rate to the device and from it (bits/s of TCP payload).
    pub sent_bps: f64,
    pub received_bps: f64,
    pub fairness_sent: Option<f64>,
    pub fairness_received: Option<f64>,
    /// Connections that closed cleanly at the end.
    pub closed_clean: u32,
}

impl RampStep {
    pub fn of(connections: u32, s: &StressSummary) -> Self {
        Self {
            connections,
            opened: s.connect.connected,
            sent_bps: s.sum.sent_bps,
            received_bps: s.sum.received_bps,
            fairness_sent: s.sum.fairness_sent,
            fairness_received: s.sum.fairness_received,
            closed_clean: s.closed_clean,
        }
    }
}

/// The steps with the highest rate each way (to the device, from it).
pub fn best(steps: &[RampStep]) -> (Option<&RampStep>, Option<&RampStep>) {
    let top = |f: fn(&RampStep) -> f64| {
        steps
            .iter()
            .filter(|s| f(s) > 0.0)
            .max_by(|a, b| f(a).total_cmp(&f(b)))
    };
    (top(|s| s.sent_bps), top(|s| s.received_bps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_double_and_end_at_the_top() {
        assert_eq!(counts(1, 8), vec![1, 2, 4, 8]);
        assert_eq!(counts(1, 10), vec![1, 2, 4, 8, 10]);
        assert_eq!(counts(3, 3), vec![3]);
        assert_eq!(counts(0, 0), vec![1]);
        assert_eq!(counts(5, 2), vec![5]);
    }

    #[test]
    fn the_best_step_each_way() {
        let step = |n, s, r| RampStep {
            connections: n,
            opened: n,
            sent_bps: s,
            received_bps: r,
            fairness_sent: None,
            fairness_received: None,
            closed_clean: n,
        };
        let steps = [step(1, 10.0, 0.0), step(2, 30.0, 0.0), step(4, 20.0, 0.0)];
        let (up, down) = best(&steps);
        assert_eq!(up.map(|s| s.connections), Some(2));
        assert!(down.is_none());
    }
}
