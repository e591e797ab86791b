//! Reordering: some packets are held back so that later ones overtake them.
//!
//! netem's `reorder P gap G` sends a chosen packet at once while the others wait out the
//! configured delay, so it only reorders when a delay is set. This stage reorders on its
//! own: with probability `p` a packet is held until `gap` later packets have gone past it, or
//! until `max_hold` has passed, whichever comes first (the deadline keeps the last packet of
//! a flow from waiting forever). Packets not held pass at once.

use std::collections::VecDeque;
use std::time::Duration;

use super::{chance, ConfigError, Ready, Stage, StageStats};
use crate::packet::Packet;
use crate::seed::{Chance, StageRng};
use crate::time::Instant;

/// Settings of a [`Reorder`] stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReorderConfig {
    /// Probability that a packet is held back.
    pub probability: f64,
    /// How many later packets overtake a held one (at least 1).
    pub gap: u32,
    /// The longest a packet is held.
    pub max_hold: Duration,
}

#[derive(Debug)]
struct Held {
    pkt: Packet,
    remaining: u32,
    deadline: Instant,
}

/// Holds back random packets so later ones overtake them. See the module docs.
#[derive(Debug)]
pub struct Reorder {
    p: Chance,
    gap: u32,
    max_hold: Duration,
    held: VecDeque<Held>,
    out: Ready,
    rng: StageRng,
    stats: StageStats,
}

impl Reorder {
    /// A reorder stage with `config`.
    ///
    /// # Errors
    /// [`ConfigError::Probability`] for a probability outside 0..=1, [`ConfigError::Zero`] for
    /// a zero gap.
    pub fn new(config: ReorderConfig, rng: StageRng) -> Result<Self, ConfigError> {
        if config.gap == 0 {
            return Err(ConfigError::Zero {
                what: "reorder gap",
            });
        }
        Ok(Reorder {
            p: chance("reorder probability", config.probability)?,
            gap: config.gap,
            max_hold: config.max_hold,
            held: VecDeque::new(),
            out: Ready::default(),
            rng,
            stats: StageStats::default(),
        })
    }

    fn release_expired(&mut self, now: Instant) {
        // All share one max_hold, so deadlines are in push order.
        while self.held.front().is_some_and(|h| h.deadline <= now) {
            if let Some(h) = self.held.pop_front() {
                if h.remaining < self.gap {
                    self.stats.reordered += 1;
                }
                self.out.put(h.pkt, now);
            }
        }
    }
}

impl Stage for Reorder {
    fn name(&self) -> &'static str {
        "reorder"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        self.release_expired(now);
        if self.p.roll(&mut self.rng) {
            self.held.push_back(Held {
                pkt,
                remaining: self.gap,
                deadline: now + self.max_hold,
            });
            self.stats.set_queued(self.held.len());
            return;
        }
        self.out.put(pkt, now);
        for h in &mut self.held {
            h.remaining -= 1;
        }
        while let Some(i) = self.held.iter().position(|h| h.remaining == 0) {
            if let Some(h) = self.held.remove(i) {
                self.stats.reordered += 1;
                self.out.put(h.pkt, now);
            }
        }
        self.stats.set_queued(self.held.len());
    }

    fn poll(&mut self, now: Instant) -> Option<Packet> {
        self.release_expired(now);
        let pkt = self.out.take()?;
        self.stats.on_out(&pkt);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        match (self.out.wakeup(), self.held.front()) {
            (Some(t), _) => Some(t),
            (None, h) => h.map(|h| h.deadline),
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
    fn held_packet_released_after_gap_or_deadline() {
        let cfg = ReorderConfig {
            probability: 1.0,
            gap: 2,
            max_hold: Duration::from_millis(5),
        };
        let mut r =
            Reorder::new(cfg, ChainSeed::from_raw(1).rng(0)).unwrap_or_else(|e| panic!("{e}"));
        r.push(Packet::new(vec![0; 10], 0), Instant::ZERO);
        assert_eq!(r.poll(Instant::ZERO), None);
        assert_eq!(r.next_wakeup(), Some(Instant::from_millis(5)));
        assert_eq!(r.poll(Instant::from_millis(5)).map(|p| p.meta.seq), Some(0));
        // Not overtaken: not counted as reordered.
        assert_eq!(r.stats().reordered, 0);
    }

    #[test]
    fn gap_counts_passing_packets() {
        let mut r = Reorder::new(
            ReorderConfig {
                probability: 0.0,
                gap: 2,
                max_hold: Duration::from_secs(1),
            },
            ChainSeed::from_raw(1).rng(0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        r.held.push_back(Held {
            pkt: Packet::new(vec![], 0),
            remaining: 2,
            deadline: Instant::from_secs(1),
        });
        for seq in 1..=3 {
            r.push(Packet::new(vec![], seq), Instant::ZERO);
        }
        let order: Vec<u64> = std::iter::from_fn(|| r.poll(Instant::ZERO))
            .map(|p| p.meta.seq)
            .collect();
        assert_eq!(order, [1, 2, 0, 3]);
        assert_eq!(r.stats().reordered, 1);
    }
}
