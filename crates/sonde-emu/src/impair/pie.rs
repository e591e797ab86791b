//! PIE (RFC 8033): drop at enqueue with a probability steered towards a target queue delay.
//!
//! Every `tupdate` (15 ms) the drop probability moves by `alpha·(qdelay − target) +
//! beta·(qdelay − qdelay_old)` (alpha 0.125, beta 1.25 per second), the step scaled down
//! while the probability is small (RFC 8033 section 4.2's auto-tuning: ÷2048 below 10⁻⁶ ...
//! ÷2 below 10⁻¹), capped at 2 % per update once it is above 10 %, and decayed by 2 % per
//! update while the queue stays empty. The queue delay is read from timestamps (the RFC's
//! alternative to departure-rate estimation): the sojourn time of the packet last dequeued,
//! zero once the queue is empty. The updates run on the caller's virtual clock: each call
//! first runs every update whose instant has passed.
//!
//! A new burst is let through for `max_burst` (150 ms): the allowance is spent while the
//! controller runs and refilled once the probability is zero and the delay well under target.
//! A packet is not dropped early while the delay is under half the target and the probability
//! under 20 %, nor when fewer than two packets' worth of bytes are queued.

use std::time::Duration;

use super::codel::{FlowQueue, MAX_PACKET};
use super::managed::Queue;
use super::{QueueLimit, StageStats};
use crate::packet::Packet;
use crate::seed::StageRng;
use crate::time::Instant;
use rand::RngCore;

/// Settings of a [`Pie`] queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieConfig {
    /// Target queue delay (RFC default 15 ms).
    pub target: Duration,
    /// Update period (RFC default 15 ms).
    pub tupdate: Duration,
    /// Weight of the delay's distance from target, per second (RFC default 0.125).
    pub alpha: f64,
    /// Weight of the delay's trend, per second (RFC default 1.25).
    pub beta: f64,
    /// Burst allowance (RFC default 150 ms).
    pub max_burst: Duration,
    /// Tail-drop limit (packets or bytes).
    pub limit: QueueLimit,
}

impl PieConfig {
    /// The RFC's defaults with `target` and `limit`.
    pub fn new(target: Duration, limit: QueueLimit) -> Self {
        PieConfig {
            target,
            tupdate: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            limit,
        }
    }
}

/// Most updates run at once after an idle spell; beyond it the probability has long decayed.
const MAX_CATCH_UP: u32 = 10_000;

/// The PIE queue: `aqm = "pie"`. See the module docs.
#[derive(Debug)]
pub struct Pie {
    config: PieConfig,
    queue: FlowQueue,
    rng: StageRng,
    drop_prob: f64,
    qdelay: Duration,
    qdelay_old: Duration,
    burst_allowance: Duration,
    next_update: Instant,
}

impl Pie {
    /// A queue with `config`, drawing its drops from `rng`.
    pub fn new(config: PieConfig, rng: StageRng) -> Self {
        Pie {
            config,
            queue: FlowQueue::default(),
            rng,
            drop_prob: 0.0,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_allowance: config.max_burst,
            next_update: Instant::ZERO + config.tupdate,
        }
    }

    /// The current drop probability.
    pub fn drop_probability(&self) -> f64 {
        self.drop_prob
    }

    /// The burst allowance left.
    pub fn burst_allowance(&self) -> Duration {
        self.burst_allowance
    }

    /// Runs every update due by `now`.
    fn catch_up(&mut self, now: Instant) {
        let mut n = 0;
        while now >= self.next_update && n < MAX_CATCH_UP {
            self.update();
            self.next_update = self.next_update + self.config.tupdate;
            n += 1;
        }
        if now >= self.next_update {
            self.next_update = now + self.config.tupdate;
        }
    }

    /// One periodic update (RFC 8033 section 4.2 and 4.3).
    fn update(&mut self) {
        let c = self.config;
        let secs = |d: Duration| d.as_secs_f64();
        let mut p = c.alpha * (secs(self.qdelay) - secs(c.target))
            + c.beta * (secs(self.qdelay) - secs(self.qdelay_old));
        let scale = [
            (0.000_001, 2048.0),
            (0.000_01, 512.0),
            (0.000_1, 128.0),
            (0.001, 32.0),
            (0.01, 8.0),
            (0.1, 2.0),
        ]
        .into_iter()
        .find(|&(below, _)| self.drop_prob < below)
        .map_or(1.0, |(_, s)| s);
        p /= scale;
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        if self.qdelay.is_zero() && self.qdelay_old.is_zero() {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance = self.burst_allowance.saturating_sub(c.tupdate);
        let calm = c.target / 2;
        if self.drop_prob == 0.0 && self.qdelay < calm && self.qdelay_old < calm {
            self.burst_allowance = c.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// RFC 8033's `drop_early`.
    fn drop_early(&mut self) -> bool {
        if !self.burst_allowance.is_zero() {
            return false;
        }
        if self.qdelay_old < self.config.target / 2 && self.drop_prob < 0.2 {
            return false;
        }
        if self.queue.bytes() <= 2 * MAX_PACKET {
            return false;
        }
        // A draw in [0, 1) with 53 bits.
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        u < self.drop_prob
    }
}

impl Queue for Pie {
    fn name(&self) -> &'static str {
        "pie"
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, stats: &mut StageStats) {
        self.catch_up(now);
        let full = self
            .config
            .limit
            .overflows(self.queue.len(), self.queue.bytes(), pkt.len());
        if full || self.drop_early() {
            stats.on_drop(&pkt);
            return;
        }
        self.queue.push(pkt, now);
    }

    fn dequeue(&mut self, now: Instant, _stats: &mut StageStats) -> Option<Packet> {
        self.catch_up(now);
        let Some((stamp, pkt)) = self.queue.pop() else {
            self.qdelay = Duration::ZERO;
            return None;
        };
        self.qdelay = if self.queue.is_empty() {
            Duration::ZERO
        } else {
            now - stamp
        };
        Some(pkt)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::ChainSeed;

    const MS: u64 = 1_000_000;

    fn pie() -> Pie {
        let cfg = PieConfig::new(Duration::from_millis(15), QueueLimit::Packets(10_000));
        Pie::new(cfg, ChainSeed::from_raw(3).rng(0))
    }

    /// One packet sent per ms, `arrive(t)` arriving in ms `t`; returns drops.
    fn run(q: &mut Pie, from: u64, ms: u64, arrive: impl Fn(u64) -> u64) -> u64 {
        let mut stats = StageStats::default();
        for t in from..from + ms {
            let now = Instant::from_nanos(t * MS);
            for i in 0..arrive(t) {
                q.enqueue(Packet::new(vec![0; 1500], t * 10 + i), now, &mut stats);
            }
            q.dequeue(now, &mut stats);
        }
        stats.dropped
    }

    #[test]
    fn overload_raises_the_probability_from_zero() {
        let mut q = pie();
        assert_eq!(q.drop_probability(), 0.0);
        // Twice the link's rate for two seconds.
        let drops = run(&mut q, 0, 2000, |_| 2);
        assert!(q.drop_probability() > 0.1, "p = {}", q.drop_probability());
        assert!(drops > 0);
        // Then idle: the probability decays.
        let p = q.drop_probability();
        run(&mut q, 2000, 3000, |_| 0);
        assert!(q.drop_probability() < p / 2.0);
    }

    #[test]
    fn burst_allowance_lets_an_initial_burst_through() {
        // 100 ms at twice the rate: a 100 ms queue built within the 150 ms allowance.
        let mut q = pie();
        let drops = run(&mut q, 0, 100, |_| 2);
        assert_eq!(drops, 0);
        assert!(q.burst_allowance() < Duration::from_millis(150));
    }
}
