//! Per-source rate limits: a token bucket per source address, for every place a sonde server
//! must not let one address take without bound (connections, tests, latency probes, UDP
//! service replies).
//!
//! Each source holds up to `burst` tokens, refilled at `per_second`; each connection, test,
//! probe or reply takes one, and a source with none left is refused or ignored by the caller.
//! A UDP echo or chargen service answers whoever the source address claims to be, so a
//! forged source turns it into a reflector: replies are never larger than requests (the
//! services see to that) and this caps how many each source gets.
//!
//! The table is bounded. When it is full, sources whose buckets have refilled (they would be
//! allowed anyway) are forgotten first; if none are, [`WhenFull`] decides: a UDP service fails
//! closed (a new source gets nothing under a flood of forged addresses), a TCP server forgets
//! the source seen longest ago (a flood from many addresses then only resets its own members).
//! Time is an argument: any fixed origin.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

/// One limit: `burst` at once, refilled at `per_second`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateCap {
    pub per_second: f64,
    pub burst: f64,
}

impl RateCap {
    /// `n` per second, as many at once.
    pub fn per_second(n: u32) -> Self {
        Self {
            per_second: f64::from(n.max(1)),
            burst: f64::from(n.max(1)),
        }
    }

    /// `n` per minute, as many at once.
    pub fn per_minute(n: u32) -> Self {
        Self {
            per_second: f64::from(n.max(1)) / 60.0,
            burst: f64::from(n.max(1)),
        }
    }
}

/// What a full table does with a source it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenFull {
    /// Refuse it (fail closed).
    RefuseNew,
    /// Forget the source seen longest ago to make room.
    EvictOldest,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Duration,
}

/// Token buckets per source address; see the module documentation.
#[derive(Debug)]
pub struct SourceLimiter {
    rate: RateCap,
    max_sources: usize,
    when_full: WhenFull,
    buckets: HashMap<IpAddr, Bucket>,
}

impl SourceLimiter {
    /// At most `max_sources` sources remembered.
    pub fn new(rate: RateCap, max_sources: usize, when_full: WhenFull) -> Self {
        Self {
            rate,
            max_sources: max_sources.max(1),
            when_full,
            buckets: HashMap::new(),
        }
    }

    /// The limit it applies.
    pub fn rate(&self) -> RateCap {
        self.rate
    }

    /// Sources remembered now.
    pub fn sources(&self) -> usize {
        self.buckets.len()
    }

    /// Takes one token for `src` at `now` (time since any fixed origin); false when it has
    /// none. An IPv4 address seen on a dual-stack socket (`::ffff:a.b.c.d`) is `a.b.c.d`.
    pub fn allow(&mut self, src: IpAddr, now: Duration) -> bool {
        let src = src.to_canonical();
        if !self.buckets.contains_key(&src) && self.buckets.len() >= self.max_sources {
            self.forget_refilled(now);
            if self.buckets.len() >= self.max_sources {
                match self.when_full {
                    WhenFull::RefuseNew => return false,
                    WhenFull::EvictOldest => self.evict_oldest(),
                }
            }
        }
        let rate = self.rate;
        let b = self.buckets.entry(src).or_insert(Bucket {
            tokens: rate.burst,
            at: now,
        });
        let dt = now.saturating_sub(b.at).as_secs_f64();
        b.tokens = (b.tokens + dt * rate.per_second).min(rate.burst);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn forget_refilled(&mut self, now: Duration) {
        let rate = self.rate;
        self.buckets.retain(|_, b| {
            let dt = now.saturating_sub(b.at).as_secs_f64();
            b.tokens + dt * rate.per_second < rate.burst
        });
    }

    fn evict_oldest(&mut self) {
        if let Some(oldest) = self
            .buckets
            .iter()
            .min_by_key(|(_, b)| b.at)
            .map(|(ip, _)| *ip)
        {
            self.buckets.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, n])
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn limiter(per_second: f64, burst: f64, max: usize, when_full: WhenFull) -> SourceLimiter {
        SourceLimiter::new(RateCap { per_second, burst }, max, when_full)
    }

    #[test]
    fn burst_then_rate() {
        let mut l = limiter(10.0, 3.0, 16, WhenFull::RefuseNew);
        assert!((0..3).all(|_| l.allow(ip(1), Duration::ZERO)));
        assert!(!l.allow(ip(1), Duration::ZERO));
        // another source has its own bucket
        assert!(l.allow(ip(2), Duration::ZERO));
        // 0.1 s at 10/s refills one token
        assert!(l.allow(ip(1), ms(100)));
        assert!(!l.allow(ip(1), ms(100)));
        // never more than the burst, however long the pause
        assert_eq!((0..50).filter(|_| l.allow(ip(1), ms(3_600_000))).count(), 3);
    }

    #[test]
    fn one_second_gives_rate_replies() {
        let mut l = limiter(100.0, 1.0, 4, WhenFull::RefuseNew);
        let granted = (0..10_000)
            .filter(|i| l.allow(ip(1), Duration::from_micros(i * 100)))
            .count();
        // 1 s of requests every 100 us: the burst plus 100 per second
        assert!((99..=101).contains(&granted), "{granted}");
    }

    #[test]
    fn per_minute_limits_tests() {
        let mut l = SourceLimiter::new(RateCap::per_minute(3), 16, WhenFull::EvictOldest);
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        assert!((0..3).all(|_| l.allow(a, Duration::ZERO)));
        assert!(!l.allow(a, Duration::from_secs(10)));
        assert!(
            l.allow(a, Duration::from_secs(21)),
            "one refilled after 20 s"
        );
    }

    #[test]
    fn a_mapped_ipv4_address_is_the_same_source() {
        let mut l = SourceLimiter::new(RateCap::per_second(1), 16, WhenFull::EvictOldest);
        assert!(l.allow("192.0.2.7".parse().unwrap(), Duration::ZERO));
        assert!(!l.allow("::ffff:192.0.2.7".parse().unwrap(), Duration::ZERO));
    }

    #[test]
    fn full_table_forgets_idle_and_fails_closed() {
        let mut l = limiter(1.0, 1.0, 2, WhenFull::RefuseNew);
        assert!(l.allow(ip(1), Duration::ZERO));
        assert!(l.allow(ip(2), Duration::ZERO));
        // both are busy (empty buckets): a third source is refused
        assert!(!l.allow(ip(3), Duration::ZERO));
        assert_eq!(l.sources(), 2);
        // after 2 s both have refilled and are forgotten to make room
        assert!(l.allow(ip(3), Duration::from_secs(2)));
        assert!(l.sources() <= 2);
    }

    #[test]
    fn full_table_evicts_the_oldest_and_an_active_source_keeps_its_state() {
        let mut l = limiter(1.0, 1.0, 3, WhenFull::EvictOldest);
        let busy = IpAddr::from([203, 0, 113, 1]);
        assert!(l.allow(busy, Duration::ZERO));
        for i in 0..200u64 {
            let t = ms(i + 1);
            assert!(!l.allow(busy, t), "still empty at step {i}");
            let newcomer = IpAddr::from(std::net::Ipv4Addr::from(0x0A00_0000 + i as u32));
            assert!(l.allow(newcomer, t));
            assert!(l.sources() <= 3);
        }
    }
}
