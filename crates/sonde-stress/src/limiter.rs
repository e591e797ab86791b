//! Per-source reply budgets for the UDP services: a token bucket per source address.
//!
//! A UDP echo or chargen server answers whoever the source address claims to be, so a forged
//! source turns it into a reflector. Replies are never larger than the request (no byte
//! amplification, enforced by the services), and this caps how many replies each source gets
//! per second. The table of sources is bounded: when it is full, sources idle long enough to
//! have refilled their bucket are forgotten, and if none are, a new source gets no reply (the
//! limiter fails closed under a flood of forged addresses). Time is an argument.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Duration,
}

/// Token buckets of `rate` replies per second and `burst` replies, per source address.
#[derive(Debug)]
pub struct SourceLimiter {
    rate: f64,
    burst: f64,
    max_sources: usize,
    buckets: HashMap<IpAddr, Bucket>,
}

impl SourceLimiter {
    /// `rate` replies per second per source (at least 1), bursts of `burst`, at most
    /// `max_sources` sources remembered.
    pub fn new(rate: u32, burst: u32, max_sources: usize) -> Self {
        Self {
            rate: f64::from(rate.max(1)),
            burst: f64::from(burst.max(1)),
            max_sources: max_sources.max(1),
            buckets: HashMap::new(),
        }
    }

    /// True when `src` may have a reply at `now` (time since any fixed origin); takes the token.
    pub fn allow(&mut self, src: IpAddr, now: Duration) -> bool {
        if !self.buckets.contains_key(&src) && self.buckets.len() >= self.max_sources {
            self.forget_refilled(now);
            if self.buckets.len() >= self.max_sources {
                return false;
            }
        }
        let (rate, burst) = (self.rate, self.burst);
        let b = self.buckets.entry(src).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let dt = now.saturating_sub(b.at).as_secs_f64();
        b.tokens = (b.tokens + dt * rate).min(burst);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Sources remembered now.
    pub fn sources(&self) -> usize {
        self.buckets.len()
    }

    fn forget_refilled(&mut self, now: Duration) {
        let (rate, burst) = (self.rate, self.burst);
        self.buckets.retain(|_, b| {
            let dt = now.saturating_sub(b.at).as_secs_f64();
            b.tokens + dt * rate < burst
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, n])
    }

    #[test]
    fn burst_then_rate() {
        let mut l = SourceLimiter::new(10, 3, 16);
        let t0 = Duration::ZERO;
        assert!((0..3).all(|_| l.allow(ip(1), t0)));
        assert!(!l.allow(ip(1), t0));
        // another source has its own bucket
        assert!(l.allow(ip(2), t0));
        // 0.1 s at 10/s refills one token
        assert!(l.allow(ip(1), Duration::from_millis(100)));
        assert!(!l.allow(ip(1), Duration::from_millis(100)));
    }

    #[test]
    fn one_second_gives_rate_replies() {
        let mut l = SourceLimiter::new(100, 1, 4);
        let granted = (0..10_000)
            .filter(|i| l.allow(ip(1), Duration::from_micros(i * 100)))
            .count();
        // 1 s of requests every 100 us: the burst plus 100 per second
        assert!((99..=101).contains(&granted), "{granted}");
    }

    #[test]
    fn full_table_forgets_idle_and_fails_closed() {
        let mut l = SourceLimiter::new(1, 1, 2);
        let t0 = Duration::ZERO;
        assert!(l.allow(ip(1), t0));
        assert!(l.allow(ip(2), t0));
        // both are busy (empty buckets): a third source is refused
        assert!(!l.allow(ip(3), t0));
        assert_eq!(l.sources(), 2);
        // after 2 s both have refilled and are forgotten to make room
        assert!(l.allow(ip(3), Duration::from_secs(2)));
        assert!(l.sources() <= 2);
    }
}
