//! Delay with jitter, after netem's `delay TIME [JITTER [CORRELATION]] [distribution DIST]`.
//!
//! Each packet is held for `delay + jitter × X`, X drawn from the chosen distribution and the
//! sum clamped at zero. As in netem, jitter is the half-width for the uniform distribution and
//! the standard deviation for the others (netem's tables are scaled that way). Netem's
//! correlation knob is not offered: it is known to distort the distribution it claims to keep.
//!
//! Order: with `keep_order` (the default), a packet never leaves before the one ahead of it;
//! its delay is stretched instead, which is what a real link with variable latency does.
//! Without it, packets leave in order of their own due time, so jitter larger than the packet
//! spacing reorders them, as netem does when no `rate` is set.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use rand::Rng;

use super::{Distribution, QueueLimit, Stage, StageStats};
use crate::packet::Packet;
use crate::seed::StageRng;
use crate::time::{duration_nanos, Instant};

/// Pareto shape; 3 keeps the variance finite.
const ALPHA: f64 = 3.0;
/// Mean and standard deviation of Pareto(x_m = 1, α = 3).
const PARETO_MEAN: f64 = 1.5;
const PARETO_SD: f64 = 0.866_025_403_784_438_6;

/// One draw of `distribution` with mean 0 and standard deviation 1 (half-width 1 for uniform).
pub fn sample(distribution: Distribution, rng: &mut StageRng) -> f64 {
    match distribution {
        Distribution::Uniform => rng.random::<f64>() * 2.0 - 1.0,
        Distribution::Normal => normal(rng),
        Distribution::Pareto => pareto(rng),
        Distribution::ParetoNormal => 0.5 * pareto(rng) + 0.75_f64.sqrt() * normal(rng),
    }
}

/// Standard normal by Box-Muller (one of the pair; simplicity over the second draw).
fn normal(rng: &mut StageRng) -> f64 {
    // 1 - u is in (0, 1], so the logarithm is finite.
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (core::f64::consts::TAU * u2).cos()
}

fn pareto(rng: &mut StageRng) -> f64 {
    let u = 1.0 - rng.random::<f64>();
    (u.powf(-1.0 / ALPHA) - PARETO_MEAN) / PARETO_SD
}

/// Settings of a [`Delay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayConfig {
    /// The base delay.
    pub delay: Duration,
    /// Jitter scale (see the module docs).
    pub jitter: Duration,
    /// Jitter distribution.
    pub distribution: Distribution,
    /// Never let a packet overtake the one ahead of it.
    pub keep_order: bool,
    /// Most packets or bytes in flight; beyond it, tail drop. `None`: bounded only by what the
    /// upstream stages let through.
    pub limit: Option<QueueLimit>,
}

impl DelayConfig {
    /// A fixed delay: no jitter, order kept, no limit.
    pub fn fixed(delay: Duration) -> Self {
        DelayConfig {
            delay,
            jitter: Duration::ZERO,
            distribution: Distribution::Uniform,
            keep_order: true,
            limit: None,
        }
    }
}

#[derive(Debug)]
struct Timed {
    due: Instant,
    order: u64,
    pkt: Packet,
}

impl PartialEq for Timed {
    fn eq(&self, other: &Self) -> bool {
        (self.due, self.order) == (other.due, other.order)
    }
}
impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timed {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.due, self.order).cmp(&(other.due, other.order))
    }
}

#[derive(Debug)]
enum Queue {
    Fifo(VecDeque<Timed>),
    Sorted(BinaryHeap<Reverse<Timed>>),
}

/// Holds each packet for its delay. See the module docs.
#[derive(Debug)]
pub struct Delay {
    delay: f64,
    jitter: f64,
    distribution: Distribution,
    limit: Option<QueueLimit>,
    queue: Queue,
    queued_bytes: u64,
    last_due: Instant,
    pushed: u64,
    /// Highest push order already sent, to count overtaken packets.
    max_sent: Option<u64>,
    rng: StageRng,
    stats: StageStats,
}

impl Delay {
    /// A delay stage with `config`, drawing jitter from `rng`.
    pub fn new(config: DelayConfig, rng: StageRng) -> Self {
        Delay {
            delay: duration_nanos(config.delay) as f64,
            jitter: duration_nanos(config.jitter) as f64,
            distribution: config.distribution,
            limit: config.limit,
            queue: if config.keep_order {
                Queue::Fifo(VecDeque::new())
            } else {
                Queue::Sorted(BinaryHeap::new())
            },
            queued_bytes: 0,
            last_due: Instant::ZERO,
            pushed: 0,
            max_sent: None,
            rng,
            stats: StageStats::default(),
        }
    }

    fn len(&self) -> usize {
        match &self.queue {
            Queue::Fifo(q) => q.len(),
            Queue::Sorted(h) => h.len(),
        }
    }

    fn hold_nanos(&mut self) -> u64 {
        if self.jitter == 0.0 {
            return self.delay as u64;
        }
        let x = sample(self.distribution, &mut self.rng);
        // Float to integer casts saturate; negative sums clamp to zero.
        (self.delay + self.jitter * x).max(0.0) as u64
    }
}

impl Stage for Delay {
    fn name(&self) -> &'static str {
        "delay"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        if let Some(limit) = self.limit {
            if limit.overflows(self.len(), self.queued_bytes, pkt.len()) {
                self.stats.on_drop(&pkt);
                return;
            }
        }
        let mut due = now.add_nanos(self.hold_nanos());
        let order = self.pushed;
        self.pushed += 1;
        self.queued_bytes += pkt.len() as u64;
        match &mut self.queue {
            Queue::Fifo(q) => {
                due = due.max(self.last_due);
                self.last_due = due;
                q.push_back(Timed { due, order, pkt });
            }
            Queue::Sorted(h) => h.push(Reverse(Timed { due, order, pkt })),
        }
        self.stats.set_queued(self.len());
    }

    fn poll(&mut self, now: Instant) -> Option<Packet> {
        if self.next_wakeup()? > now {
            return None;
        }
        let timed = match &mut self.queue {
            Queue::Fifo(q) => q.pop_front()?,
            Queue::Sorted(h) => h.pop()?.0,
        };
        if self.max_sent.is_some_and(|m| m > timed.order) {
            self.stats.reordered += 1;
        }
        self.max_sent = Some(self.max_sent.map_or(timed.order, |m| m.max(timed.order)));
        self.queued_bytes -= timed.pkt.len() as u64;
        self.stats.set_queued(self.len());
        self.stats.on_out(&timed.pkt);
        Some(timed.pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        match &self.queue {
            Queue::Fifo(q) => q.front().map(|t| t.due),
            Queue::Sorted(h) => h.peek().map(|t| t.0.due),
        }
    }

    fn stats(&self) -> StageStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::ChainSeed;

    #[test]
    fn fixed_delay_is_exact() {
        let mut d = Delay::new(
            DelayConfig::fixed(Duration::from_millis(10)),
            ChainSeed::from_raw(1).rng(0),
        );
        d.push(Packet::new(vec![1; 64], 7), Instant::from_micros(5));
        assert_eq!(d.next_wakeup(), Some(Instant::from_nanos(10_005_000)));
        assert_eq!(d.poll(Instant::from_nanos(10_004_999)), None);
        assert_eq!(
            d.poll(Instant::from_nanos(10_005_000)).map(|p| p.meta.seq),
            Some(7)
        );
    }

    #[test]
    fn distributions_are_standardised() {
        let mut rng = ChainSeed::from_raw(9).rng(0);
        for (dist, sd) in [
            (Distribution::Uniform, 1.0 / 3f64.sqrt()),
            (Distribution::Normal, 1.0),
            (Distribution::Pareto, 1.0),
            (Distribution::ParetoNormal, 1.0),
        ] {
            let n = 200_000;
            let xs: Vec<f64> = (0..n).map(|_| sample(dist, &mut rng)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            assert!(mean.abs() < 0.02, "{dist:?} mean {mean}");
            assert!(
                (var.sqrt() - sd).abs() < 0.05 * sd,
                "{dist:?} sd {}",
                var.sqrt()
            );
        }
    }

    #[test]
    fn unordered_jitter_reorders_and_counts() {
        let cfg = DelayConfig {
            jitter: Duration::from_millis(5),
            keep_order: false,
            ..DelayConfig::fixed(Duration::from_millis(10))
        };
        let mut d = Delay::new(cfg, ChainSeed::from_raw(2).rng(0));
        for i in 0..1000 {
            d.push(Packet::new(vec![0; 64], i), Instant::from_micros(i * 10));
        }
        let mut out = Vec::new();
        while let Some(t) = d.next_wakeup() {
            while let Some(p) = d.poll(t) {
                out.push(p.meta.seq);
            }
        }
        assert_eq!(out.len(), 1000);
        assert!(d.stats().reordered > 100);
    }
}
