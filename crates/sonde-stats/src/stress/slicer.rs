//! Turns cumulative per-connection byte counters into report intervals and a summary.
//!
//! The runtime only counts; this decides where intervals begin and end and what the rates and
//! fairness are. Time is an argument (seconds since measuring began), so the figures can be
//! checked with fixed numbers.

use super::fairness::jain;
use super::model::{ConnRate, StressInterval, StressMode, Sum};

/// One connection's counters as the runtime keeps them: totals since measuring began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnCounters {
    pub sent: u64,
    pub received: u64,
    pub open: bool,
}

/// Cuts intervals of a fixed length from cumulative counters.
///
/// Calling order: [`IntervalSlicer::next_boundary`] says when the next cut is due; the runtime
/// calls [`IntervalSlicer::cut`] at (or after) that time with the counters of every connection,
/// in a stable order, and once more at the end for the last, possibly shorter, interval.
#[derive(Debug, Clone)]
pub struct IntervalSlicer {
    mode: StressMode,
    interval: f64,
    last_cut: f64,
    last: Vec<ConnCounters>,
}

/// Rate in bits per second of `bytes` over `secs` (0 for an empty span).
pub fn bps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

impl IntervalSlicer {
    /// A slicer for `connections` connections and intervals of `interval_secs` (> 0).
    pub fn new(mode: StressMode, connections: usize, interval_secs: f64) -> Self {
        Self {
            mode,
            interval: interval_secs.max(1e-3),
            last_cut: 0.0,
            last: vec![ConnCounters::default(); connections],
        }
    }

    /// When (seconds since measuring began) the next interval ends.
    pub fn next_boundary(&self) -> f64 {
        self.last_cut + self.interval
    }

    /// The interval from the last cut to `now`; `None` when no time passed since the last cut
    /// (a final cut right on a boundary).
    pub fn cut(&mut self, now: f64, counters: &[ConnCounters]) -> Option<StressInterval> {
        let secs = now - self.last_cut;
        if secs <= 1e-9 {
            return None;
        }
        let connections: Vec<ConnRate> = counters
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let before = self.last.get(i).copied().unwrap_or_default();
                let sent = c.sent.saturating_sub(before.sent);
                let received = c.received.saturating_sub(before.received);
                ConnRate {
                    id: i as u32 + 1,
                    sent_bytes: sent,
                    received_bytes: received,
                    sent_bps: bps(sent, secs),
                    received_bps: bps(received, secs),
                    open: c.open,
                }
            })
            .collect();
        let sum = sum_of(
            self.mode,
            secs,
            connections.iter().map(|c| (c.sent_bytes, c.received_bytes)),
        );
        let iv = StressInterval {
            start: self.last_cut,
            end: now,
            connections,
            sum,
            warmup: false,
        };
        self.last_cut = now;
        self.last = counters.to_vec();
        Some(iv)
    }
}

/// The sum over connections of (sent, received) bytes in `secs`, with Jain's index of each
/// direction the mode carries.
pub fn sum_of(mode: StressMode, secs: f64, shares: impl Iterator<Item = (u64, u64)>) -> Sum {
    let (sent, received): (Vec<u64>, Vec<u64>) = shares.unzip();
    let fair = |v: &[u64]| jain(&v.iter().map(|&b| b as f64).collect::<Vec<_>>());
    let (sent_bytes, received_bytes) = (sent.iter().sum(), received.iter().sum());
    Sum {
        sent_bytes,
        received_bytes,
        sent_bps: bps(sent_bytes, secs),
        received_bps: bps(received_bytes, secs),
        fairness_sent: mode.sends().then(|| fair(&sent)).flatten(),
        fairness_received: mode.receives().then(|| fair(&received)).flatten(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(sent: u64, received: u64) -> ConnCounters {
        ConnCounters {
            sent,
            received,
            open: true,
        }
    }

    #[test]
    fn intervals_take_differences_and_rates() {
        let mut s = IntervalSlicer::new(StressMode::Echo, 2, 0.5);
        assert_eq!(s.next_boundary(), 0.5);
        let a = s.cut(0.5, &[c(1000, 500), c(1000, 500)]).unwrap();
        assert_eq!((a.start, a.end), (0.0, 0.5));
        assert_eq!(a.sum.sent_bytes, 2000);
        assert_eq!(a.connections[0].sent_bps, 16_000.0);
        assert_eq!(a.sum.fairness_sent, Some(1.0));
        assert_eq!(s.next_boundary(), 1.0);
        let b = s.cut(1.0, &[c(3000, 500), c(1000, 500)]).unwrap();
        assert_eq!(b.connections[0].sent_bytes, 2000);
        assert_eq!(b.connections[1].sent_bytes, 0);
        // one of two took everything
        assert_eq!(b.sum.fairness_sent, Some(0.5));
        // nothing received in this interval: nothing to judge
        assert_eq!(b.sum.fairness_received, None);
        assert_eq!(b.sum.received_bps, 0.0);
    }

    #[test]
    fn direction_follows_mode() {
        let mut s = IntervalSlicer::new(StressMode::Chargen, 1, 1.0);
        let a = s.cut(1.0, &[c(0, 125)]).unwrap();
        assert_eq!(a.sum.fairness_sent, None);
        assert_eq!(a.sum.fairness_received, Some(1.0));
        assert_eq!(a.sum.received_bps, 1000.0);
    }

    #[test]
    fn empty_final_cut_is_none_and_short_one_is_scaled() {
        let mut s = IntervalSlicer::new(StressMode::Discard, 1, 1.0);
        assert!(s.cut(1.0, &[c(100, 0)]).is_some());
        assert!(s.cut(1.0, &[c(100, 0)]).is_none());
        let last = s.cut(1.25, &[c(200, 0)]).unwrap();
        assert_eq!(last.sum.sent_bps, 3200.0);
    }
}
