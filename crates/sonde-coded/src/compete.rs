//! Sharing a bottleneck with a flow that keeps its queue full.
//!
//! The rate controller reads a standing queue as congestion it caused and backs off. A
//! loss-based flow (TCP cubic or reno) fills the bottleneck's queue and keeps it full whatever
//! this sender does, so reading delay alone the coded flow would yield round after round and
//! end with a fraction of its share (8 of 100 Mbit/s beside cubic, before this mode existed).
//!
//! The sign of such a flow is a queue that does not drain when this sender backs off: after
//! [`UNDRAINED_BACKOFFS`] delay back-offs in a row with every round's RTT still above the
//! minimum, the controller stops reading delay and competes as the loss-based flow does, by
//! following CUBIC's window law (RFC 9438) in rate form, with the same constants, so the two
//! grow and yield alike and share the queue:
//! - the usual loss, measured before the competition began, stays the baseline (random loss
//!   is still not congestion);
//! - the round's loss (every loss sample that completed in it, [`RoundLoss`]) above that
//!   baseline by more than chance gives, and by at least [`LOSS_FLOOR_DATAGRAMS`], is the
//!   shared queue overflowing: the rate drops to [`BETA`] of itself, and the losses reported
//!   in the round trip after it (datagrams sent before it) do not count again;
//! - in between, the window `W(t) = C·(t − K)³ + W_max` (packets of this sender's datagram
//!   size, `t` since the back-off, `K` the time back to `W_max`), or Reno's estimate where that
//!   is larger, divided by the smoothed RTT gives the rate;
//! - once a round's RTT comes back near the minimum the queue drained, the other flow left or
//!   backed off, and the controller reads delay again.

use std::time::Duration;

/// Delay back-offs in a row, with the queue never drained between them, that show another
/// flow holds the queue.
pub const UNDRAINED_BACKOFFS: u32 = 3;
/// CUBIC's multiplicative decrease: what a back-off keeps of the rate.
pub const BETA: f64 = 0.7;
/// CUBIC's growth constant, packets per second cubed.
pub const C: f64 = 0.4;
/// The least rise of a round's lost datagrams over the baseline's share read as the shared
/// queue overflowing: on a path without random loss, one lost datagram.
pub const LOSS_FLOOR_DATAGRAMS: f64 = 0.5;

/// The loss of one round: the datagrams its completed loss samples span, and how many of
/// them were lost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundLoss {
    pub sent: u64,
    pub lost: f64,
}

impl RoundLoss {
    /// Adds a loss sample (`fraction` lost of `span` datagrams).
    pub fn add(&mut self, fraction: f64, span: u64) {
        self.sent += span;
        self.lost += fraction.clamp(0.0, 1.0) * span as f64;
    }

    /// Whether more was lost than `base` gives by chance (four standard deviations of the
    /// binomial) and by at least `floor` datagrams.
    pub fn above(&self, base: f64, floor: f64) -> bool {
        if self.sent == 0 {
            return false;
        }
        let p = base.clamp(0.0, 1.0);
        let n = self.sent as f64;
        let chance = 4.0 * (n * p * (1.0 - p)).sqrt();
        self.lost > n * p + chance.max(floor)
    }
}

/// What one controller step does while competing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// The queue drained: read delay again.
    Leave,
    /// The shared queue overflowed: back off to this rate (bit/s).
    BackOff(f64),
    /// Grow to this rate (bit/s).
    Grow(f64),
}

/// The competing state: CUBIC's epoch in rate form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Competition {
    /// The loss the path showed before another flow filled the queue.
    pub baseline_loss: f64,
    /// Bits of one datagram (CUBIC counts its window in packets).
    packet_bits: f64,
    /// The rate at the last back-off (CUBIC's `W_max`), bit/s.
    rate_max: f64,
    /// The rate the epoch started from (`β·W_max` after a back-off).
    rate_start: f64,
    /// When the epoch started (the last back-off, or the start of the competition).
    epoch: Duration,
    /// `K`: the time from the epoch back to `rate_max`.
    k: Duration,
}

impl Competition {
    /// Starts competing at `rate` (bit/s) at `now`: an epoch on the plateau, so the rate
    /// holds and then probes upwards as CUBIC does past `W_max`.
    pub fn new(baseline_loss: f64, packet_bytes: usize, rate: f64, now: Duration) -> Self {
        Self {
            baseline_loss,
            packet_bits: (packet_bytes.max(1) * 8) as f64,
            rate_max: rate,
            rate_start: rate,
            epoch: now,
            k: Duration::ZERO,
        }
    }

    /// The step for a round: `queued` is whether all its RTT samples sat above the minimum,
    /// `loss` what the round lost, `rate` the current rate, `rtt` the smoothed RTT.
    pub fn step(
        &mut self,
        queued: bool,
        loss: &RoundLoss,
        rate: f64,
        rtt: Duration,
        now: Duration,
    ) -> Step {
        if !queued {
            return Step::Leave;
        }
        let rtt = rtt.as_secs_f64().max(1e-3);
        if loss.above(self.baseline_loss, LOSS_FLOOR_DATAGRAMS) {
            let window_max = rate * rtt / self.packet_bits;
            self.rate_max = rate;
            self.rate_start = rate * BETA;
            self.epoch = now;
            self.k = Duration::from_secs_f64((window_max * (1.0 - BETA) / C).cbrt());
            return Step::BackOff(self.rate_start);
        }
        let t = now.saturating_sub(self.epoch).as_secs_f64();
        let from_k = t - self.k.as_secs_f64();
        let cubic = self.rate_max + C * from_k.powi(3) * self.packet_bits / rtt;
        // Reno's window from the same start: 3(1-β)/(1+β) packets per round trip.
        let reno_per_rtt = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        let reno = self.rate_start + reno_per_rtt * (t / rtt) * self.packet_bits / rtt;
        Step::Grow(cubic.max(reno))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampled(sent: u64, lost: u64) -> RoundLoss {
        let mut l = RoundLoss::default();
        l.add(lost as f64 / sent as f64, sent);
        l
    }

    const SEC: Duration = Duration::from_secs(1);
    const RTT: Duration = Duration::from_millis(100);

    #[test]
    fn a_drained_queue_ends_the_competition() {
        let mut c = Competition::new(0.0, 1250, 50e6, SEC);
        assert_eq!(
            c.step(false, &sampled(100, 10), 50e6, RTT, SEC * 2),
            Step::Leave
        );
    }

    #[test]
    fn loss_over_the_baseline_backs_off_and_the_usual_loss_does_not() {
        let mut clean = Competition::new(0.0, 1250, 50e6, SEC);
        // One drop in 1000 on a clean path: the shared queue overflowed.
        assert_eq!(
            clean.step(true, &sampled(1000, 1), 50e6, RTT, SEC * 2),
            Step::BackOff(50e6 * BETA)
        );
        assert!(matches!(
            clean.step(true, &sampled(1000, 0), 50e6, RTT, SEC * 3),
            Step::Grow(_)
        ));
        // No samples in the round: nothing to judge, no back-off.
        assert!(matches!(
            clean.step(true, &RoundLoss::default(), 50e6, RTT, SEC * 4),
            Step::Grow(_)
        ));
        // 10 % random loss over 1000 datagrams: 4 deviations are 38, so 130 is chance and
        // 150 is not.
        let mut lossy = Competition::new(0.1, 1250, 50e6, SEC);
        assert!(matches!(
            lossy.step(true, &sampled(1000, 130), 50e6, RTT, SEC * 2),
            Step::Grow(_)
        ));
        assert_eq!(
            lossy.step(true, &sampled(1000, 150), 50e6, RTT, SEC * 2),
            Step::BackOff(50e6 * BETA)
        );
    }

    #[test]
    fn a_round_adds_up_its_samples() {
        let mut r = RoundLoss::default();
        r.add(0.0, 100);
        r.add(0.5, 4);
        assert_eq!(r.sent, 104);
        assert!((r.lost - 2.0).abs() < 1e-9);
        // A path losing 0.1 %: one loss in 1000 is what it always loses.
        let mut one = RoundLoss::default();
        one.add(0.001, 1000);
        assert!(!one.above(0.001, LOSS_FLOOR_DATAGRAMS));
        assert!(one.above(0.0, LOSS_FLOOR_DATAGRAMS));
    }

    #[test]
    fn after_a_back_off_the_rate_follows_cubics_curve_back_to_the_old_rate() {
        // 1250-byte packets, 100 ms: 50 Mbit/s is a window of 500 packets.
        let mut c = Competition::new(0.0, 1250, 50e6, Duration::ZERO);
        assert_eq!(
            c.step(true, &sampled(100, 5), 50e6, RTT, SEC),
            Step::BackOff(35e6)
        );
        // K = cbrt(500 * 0.3 / 0.4) = 7.21 s: concave up to 50 Mbit/s there, convex after.
        let k = (500.0f64 * 0.3 / 0.4).cbrt();
        let at = |c: &mut Competition, secs: f64| match c.step(
            true,
            &sampled(100, 0),
            35e6,
            RTT,
            SEC + Duration::from_secs_f64(secs),
        ) {
            Step::Grow(r) => r,
            s => panic!("{s:?}"),
        };
        let start = at(&mut c, 0.0);
        assert!((start - 35e6).abs() < 1e3, "{start}");
        let half = at(&mut c, k / 2.0);
        let plateau = at(&mut c, k);
        let beyond = at(&mut c, k * 1.5);
        assert!((plateau - 50e6).abs() < 1e3, "{plateau}");
        // Concave: more than half the way back in the first half of K.
        assert!(half > 42.5e6 && half < 50e6, "{half}");
        assert!(beyond > 50e6 && beyond - 50e6 < 50e6 - half, "{beyond}");
    }

    #[test]
    fn starting_to_compete_keeps_the_rate_and_then_probes_up() {
        let mut c = Competition::new(0.0, 1250, 40e6, SEC);
        let grow = |c: &mut Competition, secs: u64| match c.step(
            true,
            &sampled(100, 0),
            40e6,
            RTT,
            SEC * secs as u32,
        ) {
            Step::Grow(r) => r,
            s => panic!("{s:?}"),
        };
        let now = grow(&mut c, 1);
        let later = grow(&mut c, 4);
        assert!((now - 40e6).abs() < 1e3, "{now}");
        assert!(later > 40e6, "{later}");
    }
}
