//! Interval slicing: when reports fall due, which of them lie in the omit period, and rates.
//!
//! Follows iperf3: with `-i` reports come every interval from the test start; with `-O` the
//! omit period is reported too (flagged omitted) and its end is always a boundary, after which
//! intervals restart from the omit end. Times are seconds since the test start, passed in.

/// Slack for comparing boundary times, so that float rounding never yields a sliver interval.
const EPSILON: f64 = 1e-9;

/// The report boundaries of a test.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IntervalSchedule {
    interval: f64,
    omit: f64,
}

fn non_negative(v: f64) -> f64 {
    if v.is_finite() && v > 0.0 {
        v
    } else {
        0.0
    }
}

impl IntervalSchedule {
    /// A schedule with reports every `interval_secs` (0 = no interval reports) and an omit period
    /// of `omit_secs`. Negative or non-finite values count as 0.
    pub fn new(interval_secs: f64, omit_secs: f64) -> Self {
        Self {
            interval: non_negative(interval_secs),
            omit: non_negative(omit_secs),
        }
    }

    /// The interval length in seconds (0 = none).
    pub fn interval(&self) -> f64 {
        self.interval
    }

    /// The omit period in seconds.
    pub fn omit(&self) -> f64 {
        self.omit
    }

    /// The next report time strictly after `after` seconds, or `None` without interval reports.
    pub fn next_boundary(&self, after: f64) -> Option<f64> {
        if self.interval <= 0.0 {
            return None;
        }
        let after = if after.is_nan() { 0.0 } else { after };
        if self.omit > 0.0 && after + EPSILON < self.omit {
            let next = self.next_multiple(0.0, after);
            return Some(if next + EPSILON < self.omit {
                next
            } else {
                self.omit
            });
        }
        Some(self.next_multiple(self.omit, after))
    }

    /// The first `base + k * interval` (k >= 1) strictly after `after`.
    fn next_multiple(&self, base: f64, after: f64) -> f64 {
        let k = ((after - base) / self.interval).floor().max(0.0) + 1.0;
        let next = base + k * self.interval;
        if next <= after + EPSILON {
            next + self.interval
        } else {
            next
        }
    }

    /// True when a span ending at `span_end` lies inside the omit period.
    pub fn is_omitted(&self, span_end: f64) -> bool {
        self.omit > 0.0 && span_end <= self.omit + EPSILON
    }
}

/// Bits per second for `bytes` over `seconds`; 0 when the span is empty or negative.
pub fn bits_per_second(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boundaries(s: &IntervalSchedule, until: f64) -> Vec<f64> {
        let mut out = Vec::new();
        let mut t = 0.0;
        while let Some(b) = s.next_boundary(t) {
            if b > until {
                break;
            }
            out.push(b);
            t = b;
        }
        out
    }

    fn approx(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn no_interval_means_no_boundaries() {
        assert_eq!(IntervalSchedule::new(0.0, 2.0).next_boundary(0.0), None);
        assert_eq!(IntervalSchedule::new(-1.0, 0.0).next_boundary(0.0), None);
        assert_eq!(
            IntervalSchedule::new(f64::NAN, 0.0).next_boundary(0.0),
            None
        );
    }

    #[test]
    fn plain_intervals() {
        let s = IntervalSchedule::new(1.0, 0.0);
        assert_eq!(boundaries(&s, 3.0), vec![1.0, 2.0, 3.0]);
        assert_eq!(s.next_boundary(0.5), Some(1.0));
        assert_eq!(s.next_boundary(1.0), Some(2.0));
        assert_eq!(s.next_boundary(-3.0), Some(1.0));
    }

    #[test]
    fn float_steps_do_not_make_slivers() {
        let s = IntervalSchedule::new(0.1, 0.0);
        let b = boundaries(&s, 0.55);
        assert!(approx(&b, &[0.1, 0.2, 0.3, 0.4, 0.5]), "{b:?}");
        let next = s.next_boundary(0.30000000000000004).unwrap();
        assert!((next - 0.4).abs() < 1e-9);
    }

    #[test]
    fn omit_end_is_a_boundary_and_intervals_restart_there() {
        let s = IntervalSchedule::new(1.0, 2.5);
        assert!(approx(
            &boundaries(&s, 5.5),
            &[1.0, 2.0, 2.5, 3.5, 4.5, 5.5]
        ));
        let s = IntervalSchedule::new(1.0, 2.0);
        assert!(approx(&boundaries(&s, 4.0), &[1.0, 2.0, 3.0, 4.0]));
        // Omit shorter than the interval.
        let s = IntervalSchedule::new(2.0, 0.5);
        assert!(approx(&boundaries(&s, 4.5), &[0.5, 2.5, 4.5]));
    }

    #[test]
    fn omitted_spans() {
        let s = IntervalSchedule::new(1.0, 2.5);
        assert!(s.is_omitted(1.0));
        assert!(s.is_omitted(2.5));
        assert!(!s.is_omitted(3.5));
        assert!(!IntervalSchedule::new(1.0, 0.0).is_omitted(0.0));
        assert_eq!(s.interval(), 1.0);
        assert_eq!(s.omit(), 2.5);
    }

    #[test]
    fn rates() {
        assert_eq!(bits_per_second(125_000_000, 1.0), 1e9);
        assert_eq!(bits_per_second(1000, 0.5), 16_000.0);
        assert_eq!(bits_per_second(1000, 0.0), 0.0);
        assert_eq!(bits_per_second(1000, -1.0), 0.0);
        assert_eq!(bits_per_second(1000, f64::NAN), 0.0);
    }
}
