//! Loss and round-trip estimates the sender derives from feedback.
//!
//! Loss counts every symbol that did not arrive, recovered by the code or not (as RFC 9265
//! asks of coding under congestion control): the receiver's running count of datagrams
//! received against the highest sequence number it saw, sampled once at least
//! [`MIN_SAMPLE`] datagrams went out since the last sample, smoothed by an EWMA.

use std::time::Duration;

/// Datagrams a loss sample spans at least (fewer give too coarse a fraction).
pub const MIN_SAMPLE: u64 = 32;
/// EWMA weight of a new loss sample.
const ALPHA: f64 = 0.125;

/// The sender's view of the path's loss.
#[derive(Debug, Clone, Default)]
pub struct LossEstimator {
    base_seq: Option<u64>,
    base_received: u64,
    /// Smoothed loss fraction.
    pub loss: f64,
    /// Smoothed mean deviation of the samples.
    pub deviation: f64,
    /// The latest sample (for congestion detection).
    pub last_sample: Option<f64>,
    /// Datagrams the latest sample spans.
    pub last_span: u64,
    samples: u64,
}

impl LossEstimator {
    /// Whether the latest sample sits above `base` by more than chance gives a sample of its
    /// size (four standard deviations), and by at least `floor`.
    pub fn latest_above(&self, base: f64, floor: f64) -> bool {
        match self.last_sample {
            Some(s) => {
                let p = base.clamp(0.0, 1.0);
                let chance = 4.0 * (p * (1.0 - p) / self.last_span.max(1) as f64).sqrt();
                s > p + chance.max(floor)
            }
            None => false,
        }
    }

    /// Samples completed so far (a caller tells a new sample from the last one by it).
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Folds in a feedback's counters; returns the new sample, if one completed.
    pub fn on_feedback(&mut self, highest_seq: u64, received: u64) -> Option<f64> {
        let Some(base) = self.base_seq else {
            self.base_seq = Some(highest_seq);
            self.base_received = received;
            return None;
        };
        if highest_seq < base + MIN_SAMPLE || received < self.base_received {
            return None;
        }
        let sent = (highest_seq - base) as f64;
        let got = (received - self.base_received) as f64;
        let sample = (1.0 - got / sent).clamp(0.0, 1.0);
        self.base_seq = Some(highest_seq);
        self.base_received = received;
        if self.samples == 0 {
            self.loss = sample;
        } else {
            self.deviation += ALPHA * ((sample - self.loss).abs() - self.deviation);
            self.loss += ALPHA * (sample - self.loss);
        }
        self.samples += 1;
        self.last_sample = Some(sample);
        self.last_span = highest_seq - base;
        Some(sample)
    }
}

/// Smoothed and minimum round-trip time (RFC 6298 smoothing).
#[derive(Debug, Clone, Default)]
pub struct RttEstimator {
    pub smoothed: Option<Duration>,
    pub min: Option<Duration>,
    pub latest: Option<Duration>,
}

impl RttEstimator {
    pub fn on_sample(&mut self, rtt: Duration) {
        self.latest = Some(rtt);
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
        self.smoothed = Some(match self.smoothed {
            None => rtt,
            Some(s) => (s * 7 + rtt) / 8,
        });
    }
}

/// Proactive repair for a block of `k`: the fewest `r` with
/// `(k+r)(1-p) - z*sqrt((k+r)p(1-p)) >= k`, so the block decodes without feedback with
/// probability about Φ(z) under independent loss `p`.
pub fn proactive_repair(k: u16, p: f64, z: f64) -> u16 {
    let p = p.clamp(0.0, 0.9);
    if p <= 0.0 {
        return 0;
    }
    let k = f64::from(k);
    let mut r = 0u16;
    loop {
        let n = k + f64::from(r);
        if n * (1.0 - p) - z * (n * p * (1.0 - p)).sqrt() >= k || r >= 4 * k as u16 {
            return r;
        }
        r += 1;
    }
}

/// Repair to send for a block missing `needed` symbols: enough that they arrive on average
/// under loss `p`, rounded up.
pub fn reactive_repair(needed: u16, p: f64) -> u16 {
    let p = p.clamp(0.0, 0.9);
    (f64::from(needed) / (1.0 - p)).ceil() as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_samples_span_enough_datagrams() {
        let mut e = LossEstimator::default();
        assert_eq!(e.on_feedback(10, 10), None);
        assert_eq!(e.on_feedback(20, 15), None);
        let s = e.on_feedback(110, 90).unwrap();
        assert!((s - 0.2).abs() < 1e-9);
        assert!((e.loss - 0.2).abs() < 1e-9);
        assert_eq!(e.on_feedback(210, 190), Some(0.0));
        assert!((e.loss - 0.175).abs() < 1e-9);
    }

    #[test]
    fn proactive_repair_grows_with_loss_and_margin() {
        assert_eq!(proactive_repair(128, 0.0, 1.0), 0);
        let r10 = proactive_repair(128, 0.10, 1.0);
        // Mean alone needs 128/0.9 - 128 = 14.2; one deviation adds about 4.
        assert!((17..=20).contains(&r10), "{r10}");
        assert!(proactive_repair(128, 0.20, 1.0) > r10);
        assert!(proactive_repair(128, 0.10, 2.0) > r10);
        assert_eq!(reactive_repair(3, 0.2), 4);
        assert_eq!(reactive_repair(4, 0.0), 4);
    }

    #[test]
    fn rtt_keeps_min_and_smooths() {
        let mut r = RttEstimator::default();
        r.on_sample(Duration::from_millis(8));
        r.on_sample(Duration::from_millis(16));
        assert_eq!(r.min, Some(Duration::from_millis(8)));
        assert_eq!(r.smoothed, Some(Duration::from_millis(9)));
    }
}
