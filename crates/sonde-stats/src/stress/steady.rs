//! What a stress run's intervals say beyond the sums: each connection's share of intervals in
//! which it moved nothing (the "zero samples" of a fairness test: a connection starved for
//! half the run is not fair, whatever the sum), and `--warmup`: intervals that end within the
//! first SECS are marked warm-up and left out of the rates, the fairness and the zero share.
//!
//! Pure: the intervals in, as the slicer cuts them; the summary's figures out.

use super::model::{ConnRate, StressInterval, StressMode, StressSummary};
use super::slicer::{bps, sum_of};

/// One connection over the counted intervals.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Counted {
    sent: u64,
    received: u64,
    intervals: u32,
    zero: u32,
}

/// The counted (not warm-up) part of a run, interval by interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Steady {
    mode: StressMode,
    warmup: f64,
    seconds: f64,
    conns: Vec<Counted>,
}

/// Whether `c` moved nothing in an interval in the direction the mode measures: what this
/// end sent (discard), what the device sent (chargen) or what came back (echo).
pub fn is_zero(mode: StressMode, c: &ConnRate) -> bool {
    match mode {
        StressMode::Discard => c.sent_bytes == 0,
        StressMode::Chargen | StressMode::Echo => c.received_bytes == 0,
    }
}

impl Steady {
    /// Intervals ending by `warmup_secs` not counted (0: every interval counts).
    pub fn new(mode: StressMode, warmup_secs: f64) -> Self {
        Self {
            mode,
            warmup: warmup_secs.max(0.0),
            seconds: 0.0,
            conns: Vec::new(),
        }
    }

    /// Marks `iv` warm-up when it ends by the warm-up's end, else counts it.
    pub fn take(&mut self, iv: &mut StressInterval) {
        if self.warmup > 0.0 && iv.end <= self.warmup + 1e-9 {
            iv.warmup = true;
            return;
        }
        self.seconds += iv.end - iv.start;
        if self.conns.len() < iv.connections.len() {
            self.conns.resize(iv.connections.len(), Counted::default());
        }
        for (i, c) in iv.connections.iter().enumerate() {
            if let Some(k) = self.conns.get_mut(i) {
                k.sent += c.sent_bytes;
                k.received += c.received_bytes;
                k.intervals += 1;
                k.zero += u32::from(is_zero(self.mode, c));
            }
        }
    }

    /// Each connection's zero share and the worst into `s`; with a warm-up, the rates and
    /// the fairness of the counted intervals in place of the whole run's (the bytes stay the
    /// whole run's).
    pub fn apply(&self, s: &mut StressSummary) {
        s.warmup_secs = self.warmup;
        for (t, k) in s.connections.iter_mut().zip(&self.conns) {
            t.zero_share = (k.intervals > 0).then(|| f64::from(k.zero) / f64::from(k.intervals));
            if self.warmup > 0.0 {
                t.sent_bps = bps(k.sent, self.seconds);
                t.received_bps = bps(k.received, self.seconds);
            }
        }
        s.zero_share_worst = s
            .connections
            .iter()
            .filter_map(|t| t.zero_share)
            .max_by(f64::total_cmp);
        if self.warmup > 0.0 {
            let counted = sum_of(
                self.mode,
                self.seconds,
                self.conns.iter().map(|k| (k.sent, k.received)),
            );
            s.sum.sent_bps = counted.sent_bps;
            s.sum.received_bps = counted.received_bps;
            s.sum.fairness_sent = counted.fairness_sent;
            s.sum.fairness_received = counted.fairness_received;
        }
    }

    /// Seconds counted (every interval's but the warm-up's).
    pub fn seconds(&self) -> f64 {
        self.seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress::model::{CloseOutcome, ConnTotal, ConnectReport, Sum};
    use crate::stress::slicer::{ConnCounters, IntervalSlicer};

    fn c(sent: u64) -> ConnCounters {
        ConnCounters {
            sent,
            received: 0,
            open: true,
        }
    }

    fn summary(n: u32, seconds: f64) -> StressSummary {
        StressSummary {
            seconds,
            connect: ConnectReport::default(),
            connections: (1..=n)
                .map(|id| ConnTotal {
                    id,
                    sent_bytes: 0,
                    received_bytes: 0,
                    sent_bps: -1.0,
                    received_bps: -1.0,
                    close: CloseOutcome::Clean,
                    error: None,
                    drained_bytes: 0,
                    zero_share: None,
                })
                .collect(),
            sum: Sum::default(),
            closed_clean: n,
            closed_reset: 0,
            closed_timeout: 0,
            failed_during_run: 0,
            echo_mismatched_bytes: 0,
            echo_unreturned_bytes: 0,
            partial: false,
            udp: None,
            warmup_secs: 0.0,
            zero_share_worst: None,
        }
    }

    /// Discard, two connections over four 1 s intervals: the second sends in only one.
    fn cut_all(warmup: f64) -> (Vec<StressInterval>, Steady) {
        let mut slicer = IntervalSlicer::new(StressMode::Discard, 2, 1.0);
        let mut steady = Steady::new(StressMode::Discard, warmup);
        let counters = [
            [c(1000), c(1000)],
            [c(2000), c(1000)],
            [c(3000), c(1000)],
            [c(4000), c(1000)],
        ];
        let mut out = Vec::new();
        for (i, cs) in counters.iter().enumerate() {
            let mut iv = slicer
                .cut(i as f64 + 1.0, cs)
                .unwrap_or_else(|| unreachable!());
            steady.take(&mut iv);
            out.push(iv);
        }
        (out, steady)
    }

    #[test]
    fn a_starved_connection_shows_its_zero_share() {
        let (ivs, steady) = cut_all(0.0);
        assert!(ivs.iter().all(|iv| !iv.warmup));
        let mut s = summary(2, 4.0);
        steady.apply(&mut s);
        let shares: Vec<Option<f64>> = s.connections.iter().map(|t| t.zero_share).collect();
        assert_eq!(shares, [Some(0.0), Some(0.75)]);
        assert_eq!(s.zero_share_worst, Some(0.75));
        // No warm-up: the whole run's rates stand.
        assert_eq!(s.connections[0].sent_bps, -1.0);
        assert_eq!(s.warmup_secs, 0.0);
    }

    #[test]
    fn warm_up_intervals_are_marked_and_left_out() {
        // The first interval ends at 1 s: warm-up. The second connection sent only then.
        let (ivs, steady) = cut_all(1.0);
        let marks: Vec<bool> = ivs.iter().map(|iv| iv.warmup).collect();
        assert_eq!(marks, [true, false, false, false]);
        assert_eq!(steady.seconds(), 3.0);
        let mut s = summary(2, 4.0);
        steady.apply(&mut s);
        assert_eq!(s.warmup_secs, 1.0);
        // 3000 bytes in 3 counted seconds; the second connection nothing.
        assert_eq!(s.connections[0].sent_bps, 8000.0);
        assert_eq!(s.connections[1].sent_bps, 0.0);
        assert_eq!(s.sum.sent_bps, 8000.0);
        assert_eq!(s.sum.fairness_sent, Some(0.5));
        assert_eq!(
            s.sum.fairness_sent,
            crate::stress::fairness::jain(&[3000.0, 0.0])
        );
        assert_eq!(s.connections[1].zero_share, Some(1.0));
        assert_eq!(s.zero_share_worst, Some(1.0));
    }

    #[test]
    fn the_direction_follows_the_mode_and_nothing_counted_is_no_share() {
        let rate = |sent, received| ConnRate {
            id: 1,
            sent_bytes: sent,
            received_bytes: received,
            sent_bps: 0.0,
            received_bps: 0.0,
            open: true,
        };
        assert!(is_zero(StressMode::Discard, &rate(0, 10)));
        assert!(!is_zero(StressMode::Chargen, &rate(0, 10)));
        assert!(is_zero(StressMode::Echo, &rate(10, 0)), "nothing came back");
        let steady = Steady::new(StressMode::Echo, 0.0);
        let mut s = summary(1, 0.0);
        steady.apply(&mut s);
        assert_eq!(
            (s.connections[0].zero_share, s.zero_share_worst),
            (None, None)
        );
    }
}
