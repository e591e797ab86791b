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
//!
//! A queue that its back-offs do not drain belongs to another flow; the controller then
//! competes for its share on loss instead of yielding on delay ([`crate::compete`]).
use crate::compete::{self, Competition, RoundLoss, Step};
use crate::loss::{LossEstimator, RttEstimator};
use std::collections::VecDeque;
use std::time::Duration;

/// What a back-off keeps of the rate the bottleneck recently passed: enough below it that
/// the queue drains, not so far that the path idles.
pub const BACKOFF: f64 = 0.95;
/// How far back the delivery-rate maximum looks.
pub const DELIVERY_WINDOW: Duration = Duration::from_millis(250);

/// The datagram size assumed until [`RateController::set_packet_bytes`] says otherwise.
pub const DEFAULT_PACKET_BYTES: usize = 1400;

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
    /// Delay back-offs in a row with the queue never drained between them.
    undrained: u32,
    /// Set while another flow holds the queue.
    competing: Option<Competition>,
    /// Times the controller found another flow holding the queue.
    pub competitions: u64,
    /// Bytes of one datagram (competing follows a window law counted in packets).
    packet_bytes: usize,
    /// The loss samples that completed since the last step.
    round_loss: RoundLoss,
    /// Loss samples seen so far (to add each one to the round once).
    samples_seen: u64,
    /// Until when loss samples are not counted: the round trip after a competing back-off,
    /// whose losses are of datagrams sent before it.
    loss_ignored_until: Duration,
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
            undrained: 0,
            competing: None,
            competitions: 0,
            packet_bytes: DEFAULT_PACKET_BYTES,
            round_loss: RoundLoss::default(),
            samples_seen: 0,
            loss_ignored_until: Duration::ZERO,
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

    /// The size of this sender's datagrams.
    pub fn set_packet_bytes(&mut self, bytes: usize) {
        self.packet_bytes = bytes.max(1);
    }

    /// Whether another flow holds the queue (the controller competes on loss meanwhile).
    pub fn competing(&self) -> bool {
        self.competing.is_some()
    }

    /// Whether every RTT sample of the round sat above the minimum: a standing queue.
    fn queued(&self, rtt: &RttEstimator) -> bool {
        match (self.round_min_rtt, rtt.min) {
            (Some(round), Some(min)) => round > min + (min / 4).max(Duration::from_millis(5)),
            _ => false,
        }
    }

    /// Whether the latest loss sample is far above the usual loss: loss the rate caused.
    fn loss_jumped(loss: &LossEstimator) -> bool {
        let floor = (3.0 * loss.deviation).max(0.1);
        loss.latest_above(loss.loss, floor) && loss.last_sample.is_some_and(|s| s > 0.25)
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
        self.note_samples(now, rtt, loss);
        if now < self.next_step {
            return;
        }
        let round_loss = std::mem::take(&mut self.round_loss);
        let round = rtt
            .smoothed
            .unwrap_or(Duration::from_millis(10))
            .max(Duration::from_millis(5));
        let queued = self.queued(rtt);
        self.round_min_rtt = None;
        if self.step_competing(now, queued, &round_loss, round) {
            return;
        }
        self.step_alone(now, queued, loss, passed, round);
    }

    /// Counts the feedback's samples into the round: its RTT into the round's minimum, its
    /// loss sample (a new one, outside the time loss is ignored) into the round's loss.
    fn note_samples(&mut self, now: Duration, rtt: &RttEstimator, loss: &LossEstimator) {
        if let Some(latest) = rtt.latest {
            self.round_min_rtt = Some(self.round_min_rtt.map_or(latest, |m| m.min(latest)));
        }
        if loss.samples() > self.samples_seen {
            self.samples_seen = loss.samples();
            if let (Some(s), true) = (loss.last_sample, now >= self.loss_ignored_until) {
                self.round_loss.add(s, loss.last_span);
            }
        }
    }

    /// The round's step while competing with another flow; true when that step set the rate
    /// (false when not competing, or when the competition just ended).
    fn step_competing(
        &mut self,
        now: Duration,
        queued: bool,
        round_loss: &RoundLoss,
        round: Duration,
    ) -> bool {
        let Some(c) = self.competing.as_mut() else {
            return false;
        };
        match c.step(queued, round_loss, self.rate, round, now) {
            Step::Leave => {
                self.competing = None;
                self.undrained = 0;
                false
            }
            Step::BackOff(rate) => {
                self.rate = rate.max(MIN_RATE_BPS);
                self.backoffs += 1;
                self.next_step = now + round * 2;
                self.loss_ignored_until = now + round;
                true
            }
            Step::Grow(rate) => {
                self.rate = rate.clamp(MIN_RATE_BPS, self.cap);
                self.next_step = now + round;
                true
            }
        }
    }

    /// The round's step with the queue to itself: start competing when back-offs left the
    /// queue standing, back off on a standing queue or a jump in loss, grow otherwise.
    fn step_alone(
        &mut self,
        now: Duration,
        queued: bool,
        loss: &LossEstimator,
        passed: Option<f64>,
        round: Duration,
    ) {
        if !queued {
            self.undrained = 0;
        } else if self.undrained >= compete::UNDRAINED_BACKOFFS {
            // Three back-offs left the queue standing: it is another flow's.
            self.competing = Some(Competition::new(
                loss.loss,
                self.packet_bytes,
                self.rate,
                now,
            ));
            self.competitions += 1;
            self.next_step = now + round;
            return;
        }
        if queued || Self::loss_jumped(loss) {
            self.undrained += u32::from(queued);
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

    /// Feeds `rounds` steps of 10 ms each with every RTT sample at `rtt_ms` and no loss,
    /// starting at `t`; returns the time after.
    fn rounds(c: &mut RateController, t: Duration, rtt_ms: u32, rounds: u32) -> Duration {
        let mut rtt = steady_rtt();
        let loss = loss_at(0.0);
        let mut t = t;
        for _ in 0..rounds {
            rtt.on_sample(MS * rtt_ms);
            c.on_feedback(t, &rtt, &loss, Some(50e6));
            t += MS * 10;
        }
        t
    }

    #[test]
    fn a_queue_its_back_offs_do_not_drain_is_competed_for() {
        let loss = loss_at(0.0);
        let (mut c, _) = warmed(&loss, Some(100e6));
        // Another flow keeps the queue at 40 ms over the 10 ms minimum.
        let t = rounds(&mut c, MS * 200, 50, 200);
        assert!(c.competing());
        assert_eq!(c.competitions, 1);
        // Three delay back-offs, then no more: the rate grows again.
        assert_eq!(c.backoffs, 3);
        let before = c.rate();
        rounds(&mut c, t, 50, 100);
        assert!(c.rate() > before, "{} then {}", before, c.rate());
    }

    #[test]
    fn a_queue_that_drains_after_a_back_off_is_not_competed_for() {
        let loss = loss_at(0.0);
        let (mut c, _) = warmed(&loss, Some(100e6));
        let mut t = MS * 200;
        for _ in 0..10 {
            t = rounds(&mut c, t, 50, 3);
            t = rounds(&mut c, t, 10, 3);
        }
        assert!(!c.competing());
        assert_eq!(c.competitions, 0);
        // The queue was seen: it was backed off from each time it came.
        assert!(c.backoffs >= 10, "{}", c.backoffs);
    }

    #[test]
    fn competing_backs_off_on_overflow_loss_and_ends_when_the_queue_drains() {
        let loss = loss_at(0.0);
        let (mut c, mut rtt) = warmed(&loss, Some(100e6));
        let t = rounds(&mut c, MS * 200, 50, 20);
        assert!(c.competing());
        let (rate, backoffs) = (c.rate(), c.backoffs);
        // The shared queue overflows: 5 of the next 100 datagrams are lost.
        let mut lossy = loss.clone();
        lossy.on_feedback(2000 + 100, 2000 + 95);
        rtt.on_sample(MS * 50);
        // (A round is the smoothed RTT, 50 ms by now: step after it.)
        let t = t + MS * 100;
        c.on_feedback(t, &rtt, &lossy, Some(50e6));
        assert_eq!(c.backoffs, backoffs + 1);
        assert!(
            (c.rate() - rate * compete::BETA).abs() < 1.0,
            "{}",
            c.rate()
        );
        // The other flow leaves: the RTT falls to the minimum and delay counts again.
        let t = rounds(&mut c, t + MS * 200, 10, 3);
        assert!(!c.competing());
        rounds(&mut c, t, 50, 3);
        assert!(!c.competing());
        assert_eq!(c.backoffs, backoffs + 2);
    }
}
