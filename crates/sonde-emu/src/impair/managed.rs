//! The rate limiter with a managed queue (CoDel, FQ-CoDel, PIE) in place of its FIFO.
//!
//! A qdisc under a real link hands the device one packet at a time, when the device can take
//! it; the AQM decides then (CoDel) or at enqueue (PIE) what to drop. [`Managed`] does the
//! same on the virtual clock: the [`RateLimiter`] holds at most one packet, the one on the
//! wire next, and the moment it lets that one go the next is dequeued from the [`Queue`]. A
//! packet's sojourn time is therefore measured from its arrival to the instant the link
//! starts on it, as `sch_codel` measures it.

use super::{RateLimiter, Stage, StageStats};
use crate::packet::Packet;
use crate::time::Instant;

/// A queue discipline behind the rate limiter: it queues, drops (counting in `stats`) and
/// hands out the next packet for the wire.
pub trait Queue: Send + core::fmt::Debug {
    /// The name the stage takes in records (`"codel"`, `"fq_codel"`, `"pie"`).
    fn name(&self) -> &'static str;
    /// Takes `pkt` at `now`, or drops it (or another packet) and counts the drop.
    fn enqueue(&mut self, pkt: Packet, now: Instant, stats: &mut StageStats);
    /// The next packet for the wire at `now`; drops counted in `stats`.
    fn dequeue(&mut self, now: Instant, stats: &mut StageStats) -> Option<Packet>;
    /// Packets held.
    fn len(&self) -> usize;
    /// True when nothing is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A rate limiter whose queue is a [`Queue`]. See the module docs.
#[derive(Debug)]
pub struct Managed {
    limiter: RateLimiter,
    queue: Box<dyn Queue>,
    /// Whether the limiter holds the next packet for the wire.
    on_wire: bool,
    stats: StageStats,
}

impl Managed {
    /// `queue` in front of `limiter`; the limiter's own queue limit no longer matters, since
    /// it holds one packet at most.
    pub fn new(limiter: RateLimiter, queue: Box<dyn Queue>) -> Self {
        Managed {
            limiter,
            queue,
            on_wire: false,
            stats: StageStats::default(),
        }
    }

    /// Hands the limiter the queue's next packet when it holds none; counts what is held.
    fn refill(&mut self, now: Instant) {
        if !self.on_wire {
            if let Some(pkt) = self.queue.dequeue(now, &mut self.stats) {
                self.limiter.push(pkt, now);
                self.on_wire = true;
            }
        }
        self.stats
            .set_queued(self.queue.len() + usize::from(self.on_wire));
    }
}

impl Stage for Managed {
    fn name(&self) -> &'static str {
        self.queue.name()
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        self.queue.enqueue(pkt, now, &mut self.stats);
        self.refill(now);
    }

    fn poll(&mut self, now: Instant) -> Option<Packet> {
        self.refill(now);
        let pkt = self.limiter.poll(now)?;
        self.on_wire = false;
        self.refill(now);
        self.stats.on_out(&pkt);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        self.limiter.next_wakeup()
    }

    fn stats(&self) -> StageStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::{CodelParams, CodelQueue, QueueLimit, RateConfig};

    #[test]
    fn the_queue_feeds_the_limiter_one_packet_at_a_time() {
        // 12 Mbit/s, 1500-byte packets: one per ms once the one-frame bucket is spent.
        let mut cfg = RateConfig::new(12_000_000);
        cfg.burst = 1500;
        let limiter = RateLimiter::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        let codel = CodelQueue::new(CodelParams::default(), QueueLimit::Packets(2));
        let mut m = Managed::new(limiter, Box::new(codel));
        for i in 0..4 {
            m.push(Packet::new(vec![0; 1500], i), Instant::ZERO);
        }
        // One on the wire, two queued, the fourth over the limit.
        assert_eq!(m.stats().dropped, 1);
        assert_eq!(m.stats().max_queued, 3);
        assert_eq!(m.poll(Instant::ZERO).map(|p| p.meta.seq), Some(0));
        assert_eq!(m.poll(Instant::ZERO), None);
        assert_eq!(m.next_wakeup(), Some(Instant::from_millis(1)));
        assert_eq!(m.stats().queued, 2);
        assert_eq!(m.poll(Instant::from_millis(1)).map(|p| p.meta.seq), Some(1));
        assert_eq!(m.poll(Instant::from_millis(2)).map(|p| p.meta.seq), Some(2));
        assert_eq!(m.next_wakeup(), None);
        assert_eq!(m.name(), "codel");
    }
}
