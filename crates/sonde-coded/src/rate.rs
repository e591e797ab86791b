//! Pacing and the sending-rate controller.
//!
//! The controller never treats loss at its usual level as congestion: random loss only sizes
//! the repair (see [`crate::loss`]). It backs off on the two signs of a queue it caused: every
//! round-trip sample of a round above the minimum by max(5 ms, a quarter of it) (one late
//! sample is a scheduling hiccup somewhere, a queue delays them all), or a loss sample far
//! above the usual loss, beyond what chance gives a sample of its size (loss that rises with
//! the sending rate). It then sends a little under what the bottleneck recently passed: the
//! highest delivery rate of the last [`DELIVERY_WINDOW`], each divided by one minus the usual
//! loss (a single window's rate is too noisy: a stall on the path would set the rate to a
//! fraction of the path). Otherwise it grows (×1.25 per round trip until the first back-off,
//! then 3 % per round trip). It never exceeds the cap (`-b`).
use crate::loss::{LossEstimator, RttEstimator};
use std::collections::VecDeque;
use std::time::Duration;

/// What a back-off keeps of the rate the bottleneck recently passed: enough below it that
/// the queue drains, not so far that the path idles.
pub const BACKOFF: f64 = 0.95;
/// How far back the delivery-rate maximum looks.
pub const DELIVERY_WINDOW: Duration = Duration::from_millis(250);

/// Lowest rate the controller goes to.
pub const MIN_RATE_BPS: f64 = 100_000.0;
/// Rate the controller starts at (or the cap, if lower).
pub const START_RATE_BPS: f64 = 20_000_000.0;

/// A token bucket over bytes, with time as an argument.
#[derive(Debug, Clone)]
pub struct Pacer {
    rate_bps: f64,
    tokens: f64,
    burst: f64,
    last: Duration,
}

impl Pacer {
    /// A pacer at `rate_bps` that lets `burst` bytes go back to back.
    pub fn new(rate_bps: f64, burst: usize) -> Self {
        Self {
            rate_bps,
            tokens: burst as f64,
            burst: burst as f64,
            last: Duration::ZERO,
        }
    }

    pub fn set_rate(&mut self, rate_bps: f64) {
        self.rate_bps = rate_bps.max(1.0);
    }

    pub fn rate(&self) -> f64 {
        self.rate_bps
    }

    fn refill(&mut self, now: Duration) {
        if now > self.last {
            let dt = (now - self.last).as_secs_f64();
            self.tokens = (self.tokens + dt * self.rate_bps / 8.0).min(self.burst);
            self.last = now;
        }
    }

    /// When `bytes` may go: `now` or later.
    pub fn next_send(&mut self, now: Duration, bytes: usize) -> Duration {
        self.refill(now);
        let short = bytes as f64 - self.tokens;
        if short <= 0.0 {
            now
        } else {
            now + Duration::from_secs_f64(short * 8.0 / self.rate_bps)
        }
    }

    /// Takes `bytes` from the bucket (it may go negative by one datagram).
    pub fn on_send(&mut self, now: Duration, bytes: usize) {
        self.refill(now);
        self.tokens -= bytes as f64;
    }
}

/// The sending-rate controller.
#[derive(Debug, Clone)]
pub struct RateController {
    cap: f64,
    rate: f64,
    startup: bool,
    next_step: Duration,
    /// Least RTT sample seen since the last step.
    round_min_rtt: Option<Duration>,
    /// Recent rates the bottleneck passed (bit/s), newest last.
    passed: VecDeque<(Duration, f64)>,
    /// Back-offs taken (each one a congestion signal acted on).
    pub backoffs: u64,
}

impl RateController {
    /// A controller that never exceeds `cap_bps`.
    pub fn new(cap_bps: u64) -> Self {
        let cap = (cap_bps as f64).max(MIN_RATE_BPS);
        Self {
            cap,
            rate: START_RATE_BPS.min(cap),
            startup: true,
            next_step: Duration::ZERO,
            round_min_rtt: None,
            passed: VecDeque::new(),
            backoffs: 0,
        }
    }

    /// A controller that keeps `rate_bps` whatever happens (`-b` as a fixed rate).
    pub fn fixed(rate_bps: u64) -> Self {
        let mut c = Self::new(rate_bps);
        c.rate = c.cap;
        c
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Whether the round's samples show a queue this sender built.
    fn congested(&self, rtt: &RttEstimator, loss: &LossEstimator) -> bool {
        if let (Some(round), Some(min)) = (self.round_min_rtt, rtt.min) {
            if round > min + (min / 4).max(Duration::from_millis(5)) {
                return true;
            }
        }
        match loss.last_sample {
            Some(s) => {
                let p = loss.loss.clamp(0.0, 1.0);
                let chance = 4.0 * (p * (1.0 - p) / loss.last_span.max(1) as f64).sqrt();
                s > p + (3.0 * loss.deviation).max(chance).max(0.1) && s > 0.25
            }
            None => false,
        }
    }

    /// The highest rate the bottleneck passed within [`DELIVERY_WINDOW`] of `now`.
    fn recent_max(&mut self, now: Duration, sample: Option<f64>) -> Option<f64> {
        if let Some(r) = sample {
            self.passed.push_back((now, r));
        }
        while self
            .passed
            .front()
            .is_some_and(|(t, _)| *t + DELIVERY_WINDOW < now)
        {
            self.passed.pop_front();
        }
        self.passed.iter().map(|(_, r)| *r).reduce(f64::max)
    }

    /// Updates the rate after a feedback; `delivered_bps` is what the receiver took in lately.
    pub fn on_feedback(
        &mut self,
        now: Duration,
        rtt: &RttEstimator,
        loss: &LossEstimator,
        delivered_bps: Option<f64>,
    ) {
        // What the receiver took in is what the bottleneck passed less the random loss after
        // it: scale it back up, or every back-off on a lossy path would also cut by the loss.
        let passed = delivered_bps.map(|d| d / (1.0 - loss.loss.clamp(0.0, 0.5)));
        let passed = self.recent_max(now, passed);
        if let Some(latest) = rtt.latest {
            self.round_min_rtt = Some(self.round_min_rtt.map_or(latest, |m| m.min(latest)));
        }
        if now < self.next_step {
            return;
        }
        let round = rtt
            .smoothed
            .unwrap_or(Duration::from_millis(10))
            .max(Duration::from_millis(5));
        let congested = self.congested(rtt, loss);
        self.round_min_rtt = None;
        if congested {
            let took = passed.unwrap_or(self.rate).min(self.rate);
            self.rate = (took * BACKOFF).max(MIN_RATE_BPS);
            self.startup = false;
            self.backoffs += 1;
            // Let the queue drain before judging again.
            self.next_step = now + round * 2;
            return;
        }
        self.rate = if self.startup {
            self.rate * 1.25
        } else {
            self.rate * 1.03
        }
        .min(self.cap);
        self.next_step = now + round;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn pacer_spaces_datagrams_at_the_rate() {
        let mut p = Pacer::new(8_000_000.0, 1000); // 1 byte per µs
        assert_eq!(p.next_send(Duration::ZERO, 1000), Duration::ZERO);
        p.on_send(Duration::ZERO, 1000);
        assert_eq!(p.next_send(Duration::ZERO, 1000), MS);
        p.on_send(MS, 1000);
        assert_eq!(p.next_send(MS, 500), MS + MS / 2);
    }

    fn loss_at(p: f64) -> LossEstimator {
        let mut l = LossEstimator::default();
        let mut seq = 0;
        let mut got = 0;
        l.on_feedback(seq, got);
        for _ in 0..20 {
            seq += 100;
            got += (100.0 * (1.0 - p)) as u64;
            l.on_feedback(seq, got);
        }
        l
    }

    fn steady_rtt() -> RttEstimator {
        let mut r = RttEstimator::default();
        r.on_sample(MS * 10);
        r
    }

    /// A 1 Gbit/s-capped controller after ten steady rounds, and the RTT it saw.
    fn warmed(loss: &LossEstimator, delivered: Option<f64>) -> (RateController, RttEstimator) {
        let mut c = RateController::new(1_000_000_000);
        let rtt = steady_rtt();
        for i in 0..10 {
            c.on_feedback(MS * 10 * i, &rtt, loss, delivered);
        }
        (c, rtt)
    }

    #[test]
    fn random_loss_does_not_cut_the_rate() {
        let mut c = RateController::new(100_000_000);
        let loss = loss_at(0.2);
        let rtt = steady_rtt();
        for i in 0..100 {
            c.on_feedback(MS * 10 * i, &rtt, &loss, Some(50e6));
        }
        assert_eq!(c.rate(), 100e6);
        assert_eq!(c.backoffs, 0);
    }

    #[test]
    fn queue_growth_backs_off_to_the_delivered_rate() {
        let loss = loss_at(0.0);
        let (mut c, mut rtt) = warmed(&loss, None);
        assert!(c.rate() > 100e6);
        rtt.on_sample(MS * 30);
        c.on_feedback(MS * 200, &rtt, &loss, Some(100e6));
        assert!((c.rate() - 100e6 * BACKOFF).abs() < 1.0, "{}", c.rate());
        assert_eq!(c.backoffs, 1);
    }

    #[test]
    fn one_late_sample_in_a_round_is_not_a_queue() {
        let mut c = RateController::new(1_000_000_000);
        let mut rtt = steady_rtt();
        let loss = loss_at(0.0);
        c.on_feedback(Duration::ZERO, &rtt, &loss, Some(100e6));
        rtt.on_sample(MS * 30);
        c.on_feedback(MS * 3, &rtt, &loss, Some(100e6));
        rtt.on_sample(MS * 10);
        c.on_feedback(MS * 20, &rtt, &loss, Some(100e6));
        assert_eq!(c.backoffs, 0);
    }

    #[test]
    fn a_stall_does_not_set_the_rate_to_what_trickled_through() {
        let loss = loss_at(0.0);
        let (mut c, mut rtt) = warmed(&loss, Some(100e6));
        // The path stalled: a queue, and almost nothing arrived in the last window.
        rtt.on_sample(MS * 30);
        c.on_feedback(MS * 200, &rtt, &loss, Some(5e6));
        assert_eq!(c.backoffs, 1);
        assert!((c.rate() - 100e6 * BACKOFF).abs() < 1.0, "{}", c.rate());
    }

    #[test]
    fn a_back_off_on_a_lossy_path_does_not_also_cut_by_the_loss() {
        let loss = loss_at(0.2);
        let (mut c, mut rtt) = warmed(&loss, None);
        rtt.on_sample(MS * 30);
        // 80 Mbit/s arrived of the 100 the bottleneck passed.
        c.on_feedback(MS * 200, &rtt, &loss, Some(80e6));
        assert!((c.rate() - 100e6 * BACKOFF).abs() < 1e3, "{}", c.rate());
    }

    #[test]
    fn loss_that_jumps_with_the_rate_backs_off() {
        let mut c = RateController::new(1_000_000_000);
        let mut loss = loss_at(0.05);
        let rtt = steady_rtt();
        c.on_feedback(Duration::ZERO, &rtt, &loss, None);
        loss.on_feedback(2000 + 100, 1900 + 40);
        c.on_feedback(MS * 100, &rtt, &loss, Some(10e6));
        assert_eq!(c.backoffs, 1);
        // The jump is a congestion signal; the usual loss only scales what got through.
        let passed = 10e6 / (1.0 - loss.loss);
        assert!((c.rate() - passed * BACKOFF).abs() < 1.0, "{}", c.rate());
        assert!(c.rate() < 11e6);
    }
}
