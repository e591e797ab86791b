//! A delay distribution in constant memory: exact count, min, max, mean and variance (Welford)
//! next to HDR histograms (3 significant digits) for the percentiles.
//!
//! A 12-hour run at 1 000 probes/s is 43 million samples; a vector of them would be 350 MB, the
//! histograms stay at a few hundred kilobytes whatever the run length. Values are signed
//! nanoseconds: one-way figures between unsynchronised clocks can be negative or far from zero.
//! An HDR histogram's precision is relative to the value, so such values are binned as their
//! deviation from the first sample (non-negative deviations in one histogram, negative ones
//! mirrored into a second); the 0.1 % precision then applies to the deviation, not to the
//! clock difference. Deviations beyond [`SPAN_NS`] are clamped and counted.

use super::model::DelayStats;
use hdrhistogram::Histogram;

/// How far from the first value a sample may lie and still be binned exactly (1 hour).
pub const SPAN_NS: i64 = 3_600 * 1_000_000_000;

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct DelayAccumulator {
    /// Deviations >= 0 from `base`, stored as deviation + 1.
    pos: Option<Histogram<u64>>,
    /// Deviations < 0 from `base`, stored as their magnitude (created on first use).
    neg: Option<Histogram<u64>>,
    base: i64,
    /// Non-negative samples only (round trips): base 0.
    absolute: bool,
    n: u64,
    n_neg: u64,
    mean: f64,
    m2: f64,
    min: i64,
    max: i64,
    clamped: u64,
}

fn new_hist() -> Option<Histogram<u64>> {
    Histogram::new_with_bounds(1, SPAN_NS as u64 + 2, 3).ok()
}

impl DelayAccumulator {
    /// For values that are never negative (round trips): base 0.
    pub fn absolute() -> Self {
        Self::make(true)
    }

    /// For values on an arbitrary offset (raw one-way differences between two clocks).
    pub fn relative() -> Self {
        Self::make(false)
    }

    fn make(absolute: bool) -> Self {
        Self {
            pos: new_hist(),
            neg: None,
            base: 0,
            absolute,
            n: 0,
            n_neg: 0,
            mean: 0.0,
            m2: 0.0,
            min: i64::MAX,
            max: i64::MIN,
            clamped: 0,
        }
    }

    /// Records one sample in nanoseconds.
    pub fn record(&mut self, v: i64) {
        if self.n == 0 && !self.absolute {
            self.base = v;
        }
        self.n += 1;
        let x = v as f64;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let dev = v.saturating_sub(self.base);
        let mag = dev.saturating_abs().min(SPAN_NS);
        if mag != dev.saturating_abs() {
            self.clamped += 1;
        }
        if dev >= 0 {
            if let Some(h) = &mut self.pos {
                h.saturating_record(mag as u64 + 1);
            }
        } else {
            self.n_neg += 1;
            if self.neg.is_none() {
                self.neg = new_hist();
            }
            if let Some(h) = &mut self.neg {
                h.saturating_record(mag as u64);
            }
        }
    }

    /// The samples in their histogram bins, in milliseconds: `(low, high, count)` per
    /// non-empty bin, ascending. Only for [`DelayAccumulator::absolute`] values (round trips),
    /// where a bin is a range of the values themselves; empty otherwise.
    pub fn bins_ms(&self) -> Vec<(f64, f64, u64)> {
        let Some(h) = self.pos.as_ref().filter(|_| self.absolute) else {
            return Vec::new();
        };
        // Stored as value + 1 ns (see `record`).
        let ms = |v: u64| v.saturating_sub(1) as f64 / 1e6;
        h.iter_recorded()
            .map(|v| {
                let at = v.value_iterated_to();
                (
                    ms(h.lowest_equivalent(at)),
                    ms(h.highest_equivalent(at)),
                    v.count_at_value(),
                )
            })
            .collect()
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Samples outside the histograms' span (their percentiles are clamped).
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Smallest sample (ns), if any.
    pub fn min_ns(&self) -> Option<i64> {
        (self.n > 0).then_some(self.min)
    }

    /// Largest sample (ns), if any.
    pub fn max_ns(&self) -> Option<i64> {
        (self.n > 0).then_some(self.max)
    }

    /// Mean (ns), if any.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Value at quantile `q` (0..=1) in ns.
    pub fn quantile_ns(&self, q: f64) -> Option<i64> {
        if self.n == 0 {
            return None;
        }
        let q = q.clamp(0.0, 1.0);
        let rank = q * self.n as f64;
        let dev = if self.n_neg > 0 && rank <= self.n_neg as f64 {
            // Ascending values are descending magnitudes on the negative side.
            let h = self.neg.as_ref()?;
            let mq = 1.0 - rank / self.n_neg as f64;
            -(h.value_at_quantile(mq.clamp(0.0, 1.0)) as i64)
        } else {
            let h = self.pos.as_ref()?;
            let n_pos = (self.n - self.n_neg).max(1) as f64;
            let pq = (rank - self.n_neg as f64) / n_pos;
            h.value_at_quantile(pq.clamp(0.0, 1.0)) as i64 - 1
        };
        // The histogram rounds to its bucket; never report outside the exact extremes.
        Some(self.base.saturating_add(dev).clamp(self.min, self.max))
    }

    /// Forgets all samples, keeping the memory (for interval statistics).
    pub fn reset(&mut self) {
        for h in [&mut self.pos, &mut self.neg].into_iter().flatten() {
            h.reset();
        }
        self.base = 0;
        self.n = 0;
        self.n_neg = 0;
        self.mean = 0.0;
        self.m2 = 0.0;
        self.min = i64::MAX;
        self.max = i64::MIN;
        self.clamped = 0;
    }

    /// The distribution in milliseconds, every value shifted by `adjust_ns` (an estimated clock
    /// offset) and, when `floor_zero`, raised to at least 0. None without samples.
    pub fn stats(&self, adjust_ns: i64, floor_zero: bool) -> Option<DelayStats> {
        if self.n == 0 {
            return None;
        }
        let ms = |v: i64| {
            let x = v.saturating_add(adjust_ns) as f64 / 1e6;
            if floor_zero {
                x.max(0.0)
            } else {
                x
            }
        };
        let q = |p: f64| self.quantile_ns(p).map_or(0.0, ms);
        let variance_ns2 = if self.n > 1 {
            self.m2 / (self.n - 1) as f64
        } else {
            0.0
        };
        let mean = (self.mean + adjust_ns as f64) / 1e6;
        Some(DelayStats {
            samples: self.n,
            min_ms: ms(self.min),
            mean_ms: if floor_zero { mean.max(0.0) } else { mean },
            median_ms: q(0.5),
            p90_ms: q(0.9),
            p99_ms: q(0.99),
            p999_ms: q(0.999),
            max_ms: ms(self.max),
            stddev_ms: variance_ns2.sqrt() / 1e6,
            variance_ms2: variance_ns2 / 1e12,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_one_to_a_thousand_microseconds() {
        let mut a = DelayAccumulator::absolute();
        for us in 1..=1000i64 {
            a.record(us * 1000);
        }
        let s = a.stats(0, false).unwrap();
        assert_eq!(s.samples, 1000);
        assert_eq!(s.min_ms, 0.001);
        assert_eq!(s.max_ms, 1.0);
        assert!((s.mean_ms - 0.5005).abs() < 1e-9);
        // 3 significant digits: within 0.1 % of the exact order statistic.
        for (got, want) in [(s.median_ms, 0.5), (s.p90_ms, 0.9), (s.p99_ms, 0.99)] {
            assert!((got - want).abs() <= want * 0.001, "{got} vs {want}");
        }
        assert!((s.p999_ms - 0.999).abs() < 0.002);
        // Sample variance of 1..=1000 µs: n(n+1)/12 µs² = 83 416.67 µs².
        assert!(
            (s.variance_ms2 - 0.083_416_67).abs() < 1e-6,
            "{}",
            s.variance_ms2
        );
        assert!((s.stddev_ms - s.variance_ms2.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn bins_hold_every_sample_within_their_bounds() {
        let mut a = DelayAccumulator::absolute();
        let samples = [250_000i64, 250_100, 1_000_000, 1_000_000, 7_345_678];
        for v in samples {
            a.record(v);
        }
        let bins = a.bins_ms();
        assert_eq!(bins.iter().map(|b| b.2).sum::<u64>(), samples.len() as u64);
        assert!(
            bins.windows(2).all(|w| w[0].1 < w[1].0),
            "ascending: {bins:?}"
        );
        for v in samples {
            let ms = v as f64 / 1e6;
            let bin = bins.iter().find(|b| b.0 <= ms && ms <= b.1);
            let bin = bin.unwrap_or_else(|| panic!("{ms} in no bin: {bins:?}"));
            // 3 significant digits: a bin is at most 0.1 % of its value wide.
            assert!(bin.1 - bin.0 <= ms * 0.001 + 1e-6, "{bin:?}");
        }
        assert_eq!(bins.iter().find(|b| b.0 <= 1.0 && 1.0 <= b.1).unwrap().2, 2);
        assert!(DelayAccumulator::relative().bins_ms().is_empty());
    }

    #[test]
    fn relative_values_may_be_negative_and_far_from_zero() {
        let mut a = DelayAccumulator::relative();
        let far = 1_700_000_000_000_000_000i64; // a wall-clock difference in ns
        for d in [-3_000_000i64, -1_000_000, 2_000_000] {
            a.record(far + d);
        }
        let s = a.stats(-far, false).unwrap();
        assert_eq!(s.min_ms, -3.0);
        assert_eq!(s.max_ms, 2.0);
        assert!((s.median_ms + 1.0).abs() < 0.002);
        assert_eq!(a.clamped(), 0);
        let floored = a.stats(-far, true).unwrap();
        assert_eq!(floored.min_ms, 0.0);
        assert_eq!(floored.max_ms, 2.0);
    }

    #[test]
    fn reset_keeps_working_and_empty_has_no_stats() {
        let mut a = DelayAccumulator::absolute();
        assert!(a.stats(0, false).is_none());
        a.record(5);
        a.reset();
        assert_eq!(a.count(), 0);
        a.record(7_000);
        assert_eq!(a.stats(0, false).unwrap().median_ms, 0.007);
    }

    #[test]
    fn memory_is_flat() {
        let mut a = DelayAccumulator::absolute();
        let before = a.pos.as_ref().map(|h| h.distinct_values()).unwrap_or(0);
        for i in 0..200_000i64 {
            a.record((i % 5000) * 1000 + 1);
        }
        assert_eq!(
            a.pos.as_ref().map(|h| h.distinct_values()).unwrap_or(0),
            before
        );
    }
}
