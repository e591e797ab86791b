//! What the receiving application of a switch test saw over time: bytes per interval
//! (the throughput series the report charts) and the longest gaps between two deliveries.
//!
//! The library's switch records give each switch's stall as the session saw it from its JOIN
//! on; a path that failed shows earlier, in the application's own wait for bytes, so the
//! receiver keeps its longest gaps too (each with when it ended). Time is an argument: the
//! caller reads the clock. Memory is bounded: at most [`MAX_INTERVALS`] intervals (later
//! bytes go into the last one) and [`KEPT_GAPS`] gaps.

use sonde_schema::switch_test::{Gap, ReceivedOverTime};
use std::time::Duration;

/// Intervals kept (a day at 0.1 s is 864 000; the cap keeps a peer's long test bounded).
pub const MAX_INTERVALS: usize = 1 << 20;
/// The longest gaps kept.
pub const KEPT_GAPS: usize = 32;

/// Bytes per interval and the longest gaps of one receiving application.
#[derive(Debug, Clone)]
pub struct Samples {
    interval: Duration,
    bytes: Vec<u64>,
    last: Option<Duration>,
    /// (gap, when it ended), longest first.
    gaps: Vec<(Duration, Duration)>,
}

impl Samples {
    /// Counts bytes in intervals of `interval` (at least 1 ms).
    pub fn new(interval: Duration) -> Self {
        Self {
            interval: interval.max(Duration::from_millis(1)),
            bytes: Vec::new(),
            last: None,
            gaps: Vec::new(),
        }
    }

    /// `n` bytes delivered at `at` (from the start of the transfer).
    pub fn delivered(&mut self, at: Duration, n: u64) {
        let i = (at.as_nanos() / self.interval.as_nanos().max(1)) as usize;
        let i = i.min(MAX_INTERVALS - 1);
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0);
        }
        if let Some(b) = self.bytes.get_mut(i) {
            *b += n;
        }
        if let Some(last) = self.last {
            self.gap(at.saturating_sub(last), at);
        }
        self.last = Some(at);
    }

    fn gap(&mut self, gap: Duration, at: Duration) {
        let pos = self.gaps.partition_point(|g| g.0 >= gap);
        if pos < KEPT_GAPS {
            self.gaps.insert(pos, (gap, at));
            self.gaps.truncate(KEPT_GAPS);
        }
    }

    /// The document's `received_over_time`: the interval (s), the bytes of each, and the
    /// longest gaps (when each ended, s; how long, ms).
    pub fn model(&self) -> ReceivedOverTime {
        ReceivedOverTime {
            interval: self.interval.as_secs_f64(),
            bytes: self.bytes.clone(),
            gaps: self
                .gaps
                .iter()
                .map(|(g, at)| Gap {
                    end: at.as_secs_f64(),
                    ms: g.as_secs_f64() * 1e3,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn bytes_fall_into_their_interval_and_the_longest_gaps_are_kept_longest_first() {
        let mut s = Samples::new(ms(100));
        s.delivered(ms(10), 5);
        s.delivered(ms(50), 5);
        s.delivered(ms(250), 7); // a 200 ms gap, ending at 250 ms
        s.delivered(ms(260), 1);
        let j = s.model();
        assert_eq!(j.bytes, [10, 0, 8]);
        assert_eq!(j.gaps[0].ms, 200.0);
        assert_eq!(j.gaps[0].end, 0.25);
        assert_eq!(j.gaps[1].ms, 40.0);
    }

    #[test]
    fn memory_stays_bounded_however_long_or_gappy_the_transfer() {
        let mut s = Samples::new(ms(1));
        for i in 0..1000u64 {
            s.delivered(ms(i * i), 1);
        }
        s.delivered(Duration::from_secs(10_000_000), 1);
        let j = s.model();
        assert_eq!(j.bytes.len(), MAX_INTERVALS);
        assert_eq!(j.gaps.len(), KEPT_GAPS);
    }
}
