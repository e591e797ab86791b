//! A chain: the stages of one link direction, each feeding the next.

use super::{Ready, Stage, StageStats};
use crate::packet::Packet;
use crate::time::Instant;

/// Stages in series; itself a [`Stage`], so chains nest.
///
/// [`poll`](Stage::poll) moves every packet that is due from each stage into the next, in
/// order, then returns the last stage's next packet. A driver that wakes at
/// [`next_wakeup`](Stage::next_wakeup) (the earliest of all stages) therefore runs every stage
/// on its exact virtual-time schedule. An empty chain passes packets straight through.
#[derive(Debug, Default)]
pub struct Chain {
    stages: Vec<Box<dyn Stage>>,
    passthrough: Ready,
    stats: StageStats,
}

impl Chain {
    /// An empty chain.
    pub fn new() -> Self {
        Chain::default()
    }

    /// Appends `stage` after the current last stage.
    pub fn push_stage(&mut self, stage: Box<dyn Stage>) {
        self.stages.push(stage);
    }

    /// Builder form of [`push_stage`](Chain::push_stage).
    #[must_use]
    pub fn with(mut self, stage: impl Stage + 'static) -> Self {
        self.stages.push(Box::new(stage));
        self
    }

    /// Number of stages.
    pub fn len(&self) -> usize {
        self.stages.len()
    }

    /// True when the chain has no stage.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// Each stage's name and counters, in chain order; a stage with parts of its own
    /// ([`Stage::parts`]) gives one entry per part.
    pub fn stage_stats(&self) -> Vec<(&'static str, StageStats)> {
        self.stages.iter().flat_map(|s| s.parts()).collect()
    }

    /// Moves every packet due by `now` from each stage into the next.
    fn cascade(&mut self, now: Instant) {
        for i in 1..self.stages.len() {
            let (before, after) = self.stages.split_at_mut(i);
            if let (Some(from), Some(to)) = (before.last_mut(), after.first_mut()) {
                while let Some(pkt) = from.poll(now) {
                    to.push(pkt, now);
                }
            }
        }
    }
}

impl Stage for Chain {
    fn name(&self) -> &'static str {
        "chain"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        match self.stages.first_mut() {
            Some(first) => first.push(pkt, now),
            None => self.passthrough.put(pkt, now),
        }
    }

    fn poll(&mut self, now: Instant) -> Option<Packet> {
        self.cascade(now);
        let pkt = match self.stages.last_mut() {
            Some(last) => last.poll(now),
            None => self.passthrough.take(),
        }?;
        self.stats.on_out(&pkt);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        if self.stages.is_empty() {
            return self.passthrough.wakeup();
        }
        self.stages.iter().filter_map(|s| s.next_wakeup()).min()
    }

    /// Totals for the chain: packets and bytes in and out at its ends, and the sum of the
    /// stages' drops, duplicates, corruptions, reorderings and queues.
    fn stats(&self) -> StageStats {
        let mut total = self.stats;
        let mut queued = self.passthrough.len() as u64;
        for (_, st) in self.stage_stats() {
            total.dropped += st.dropped;
            total.bytes_dropped += st.bytes_dropped;
            total.duplicated += st.duplicated;
            total.corrupted += st.corrupted;
            total.reordered += st.reordered;
            queued += st.queued;
        }
        total.queued = queued;
        total.max_queued = total.max_queued.max(queued);
        total
    }

    fn parts(&self) -> Vec<(&'static str, StageStats)> {
        self.stage_stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::{Delay, DelayConfig, RandomLoss};
    use crate::seed::ChainSeed;
    use std::time::Duration;

    #[test]
    fn empty_chain_passes_through() {
        let mut c = Chain::new();
        c.push(Packet::new(vec![1], 3), Instant::from_millis(1));
        assert_eq!(c.next_wakeup(), Some(Instant::from_millis(1)));
        assert_eq!(c.poll(Instant::from_millis(1)).map(|p| p.meta.seq), Some(3));
        assert_eq!(c.poll(Instant::from_millis(1)), None);
    }

    #[test]
    fn stages_compose_in_order() {
        let seed = ChainSeed::from_raw(5);
        let loss = RandomLoss::new(0.0, seed.rng(0)).unwrap_or_else(|e| panic!("{e}"));
        let mut c = Chain::new()
            .with(loss)
            .with(Delay::new(
                DelayConfig::fixed(Duration::from_millis(1)),
                seed.rng(1),
            ))
            .with(Delay::new(
                DelayConfig::fixed(Duration::from_millis(2)),
                seed.rng(2),
            ));
        c.push(Packet::new(vec![0; 8], 1), Instant::ZERO);
        // Waking at each announced instant walks the packet through both delays.
        let mut t = Instant::ZERO;
        let mut got = None;
        while let Some(w) = c.next_wakeup() {
            t = w;
            if let Some(p) = c.poll(t) {
                got = Some(p);
            }
        }
        assert_eq!(got.map(|p| p.meta.seq), Some(1));
        assert_eq!(t, Instant::from_millis(3));
        assert_eq!(c.stats().packets_out, 1);
    }
}
