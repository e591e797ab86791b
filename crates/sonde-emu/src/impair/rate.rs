//! Rate limiting: a token bucket in front of a tail-drop FIFO.
//!
//! This is tc-tbf's model (`tc-tbf(8)`): tokens (bits) accrue at the configured rate up to a
//! bucket of `burst` bytes; the packet at the head of the queue leaves when the bucket holds
//! its size. A packet larger than the bucket leaves once the bucket is full and puts it in
//! debt, so a too-small `burst` slows nothing down wrongly and stalls nothing. `overhead` adds
//! bytes per packet to the accounting, as tc's `overhead` (for example 24 for Ethernet's
//! preamble, FCS and inter-frame gap, which IP-level packets do not carry), so the limiter
//! can enforce a line rate. The queue holds at most `limit` packets or bytes; a packet that
//! does not fit is dropped at the tail, as pfifo/bfifo do.
//!
//! Tokens come from the limiter's own bucket or, on a half-duplex link, from one shared with
//! the link's other direction ([`SharedRate`]).

use std::collections::VecDeque;

use super::medium::{Bucket, Budget, Head, SharedRate, NANOS};
use super::{ConfigError, QueueLimit, Stage, StageStats};
use crate::packet::Packet;
use crate::time::Instant;

/// Settings of a [`RateLimiter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateConfig {
    /// Bits per second.
    pub bits_per_sec: u64,
    /// Bytes added to each packet's size for the accounting.
    pub overhead: u32,
    /// Bucket depth in bytes: how much may leave back to back after an idle period.
    pub burst: u32,
    /// Queue limit; tail drop beyond it.
    pub limit: QueueLimit,
}

impl RateConfig {
    /// `bits_per_sec` with no overhead, a one-frame (1514-byte) bucket and netem's default
    /// limit of 1000 packets.
    pub fn new(bits_per_sec: u64) -> Self {
        RateConfig {
            bits_per_sec,
            overhead: 0,
            burst: 1514,
            limit: QueueLimit::Packets(1000),
        }
    }
}

/// A token-bucket rate limiter with a bounded queue. See the module docs.
#[derive(Debug)]
pub struct RateLimiter {
    overhead: i128,
    limit: QueueLimit,
    budget: Budget,
    /// Packets with the instant each reached the limiter.
    queue: VecDeque<(Instant, Packet)>,
    queued_bytes: u64,
    stats: StageStats,
}

impl RateLimiter {
    /// A limiter with `config`; the bucket starts full.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] when the rate or the bucket is zero.
    pub fn new(config: RateConfig) -> Result<Self, ConfigError> {
        let bucket = Bucket::new(config.bits_per_sec, config.burst)?;
        Ok(Self::with_budget(config, Budget::Own(bucket)))
    }

    /// A limiter of one direction of a half-duplex link: its tokens come from `shared`,
    /// whose rate and bucket replace `config`'s; the overhead and queue limit are `config`'s.
    pub fn sharing(config: RateConfig, shared: SharedRate) -> Self {
        Self::with_budget(config, Budget::Shared(shared))
    }

    fn with_budget(config: RateConfig, budget: Budget) -> Self {
        RateLimiter {
            overhead: i128::from(config.overhead),
            limit: config.limit,
            budget,
            queue: VecDeque::new(),
            queued_bytes: 0,
            stats: StageStats::default(),
        }
    }

    fn cost(&self, pkt: &Packet) -> i128 {
        (pkt.len() as i128 + self.overhead) * 8 * NANOS
    }

    /// The head of the queue as the budget sees it: a packet larger than the bucket needs
    /// only a full bucket.
    fn head(&self) -> Option<Head> {
        let (arrived, pkt) = self.queue.front()?;
        Some(Head {
            arrived: *arrived,
            need: self.cost(pkt).min(self.budget.cap()),
        })
    }

    /// The head after the current one leaves.
    fn next_head(&self) -> Option<Head> {
        let (arrived, pkt) = self.queue.get(1)?;
        Some(Head {
            arrived: *arrived,
            need: self.cost(pkt).min(self.budget.cap()),
        })
    }
}

impl Stage for RateLimiter {
    fn name(&self) -> &'static str {
        "rate"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        self.budget.refill(now);
        if self
            .limit
            .overflows(self.queue.len(), self.queued_bytes, pkt.len())
        {
            self.stats.on_drop(&pkt);
            return;
        }
        self.queued_bytes += pkt.len() as u64;
        self.queue.push_back((now, pkt));
        if self.queue.len() == 1 {
            let head = self.head();
            self.budget.set_head(head);
        }
        self.stats.set_queued(self.queue.len());
    }

    fn poll(&mut self, now: Instant) -> Option<Packet> {
        self.budget.refill(now);
        let head = self.head()?;
        let cost = self.cost(&self.queue.front()?.1);
        let next = self.next_head();
        if !self.budget.try_send(head, cost, next) {
            return None;
        }
        let (_, pkt) = self.queue.pop_front()?;
        self.queued_bytes -= pkt.len() as u64;
        self.stats.set_queued(self.queue.len());
        self.stats.on_out(&pkt);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        Some(self.budget.ready_at(self.head()?))
    }

    fn stats(&self) -> StageStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(len: usize, seq: u64) -> Packet {
        Packet::new(vec![0; len], seq)
    }

    #[test]
    fn serialises_at_the_rate() {
        // 12 Mbit/s, 1500-byte packets: one per 1 ms once the one-packet bucket is spent.
        let mut cfg = RateConfig::new(12_000_000);
        cfg.burst = 1500;
        let mut r = RateLimiter::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..3 {
            r.push(pkt(1500, i), Instant::ZERO);
        }
        assert!(r.poll(Instant::ZERO).is_some());
        assert_eq!(r.poll(Instant::ZERO), None);
        assert_eq!(r.next_wakeup(), Some(Instant::from_millis(1)));
        assert_eq!(r.poll(Instant::from_nanos(999_999)), None);
        assert!(r.poll(Instant::from_millis(1)).is_some());
        assert_eq!(r.next_wakeup(), Some(Instant::from_millis(2)));
    }

    #[test]
    fn overhead_counts() {
        let mut cfg = RateConfig::new(8_000_000);
        cfg.burst = 1;
        cfg.overhead = 24;
        let mut r = RateLimiter::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        r.push(pkt(976, 0), Instant::ZERO);
        r.push(pkt(976, 1), Instant::ZERO);
        assert!(r.poll(Instant::ZERO).is_some());
        // (976 + 24) bytes at 1 MB/s: the next may leave 1 ms later.
        assert_eq!(r.next_wakeup(), Some(Instant::from_millis(1)));
    }

    #[test]
    fn tail_drop_in_packets_and_bytes() {
        let mut cfg = RateConfig::new(1_000_000);
        cfg.limit = QueueLimit::Packets(2);
        let mut r = RateLimiter::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..5 {
            r.push(pkt(100, i), Instant::ZERO);
        }
        assert_eq!(r.stats().dropped, 3);
        cfg.limit = QueueLimit::Bytes(250);
        let mut r = RateLimiter::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..5 {
            r.push(pkt(100, i), Instant::ZERO);
        }
        assert_eq!(r.stats().dropped, 3);
        assert_eq!(r.stats().bytes_dropped, 300);
    }

    #[test]
    fn rejects_zero() {
        assert!(RateLimiter::new(RateConfig::new(0)).is_err());
    }
}
