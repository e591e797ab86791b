//! A rate budget: the token bucket of one rate limiter, or the one shared by both directions
//! of a half-duplex link.
//!
//! On a half-duplex medium (10BASE-T without full duplex, a shared radio channel) a frame in
//! one direction takes the wire from the other: the two directions together carry at most the
//! link's rate. [`SharedRate`] models that as one token bucket both directions' rate limiters
//! draw on, with the frames at the heads of the two queues served in the order they reached
//! the medium (the direction that sent last yields on a tie), so neither direction starves
//! the other. What is not modelled: collisions and back-off, which on real half-duplex
//! Ethernet cost some of the rate; the shared budget is the ceiling such a link cannot pass.
//!
//! The arithmetic is exact: tokens are counted in bit-nanoseconds (bits × 10^9) in 128-bit
//! integers, so 20 000 packets at 1 Gbit/s leave at exactly the rate, with no float drift.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::ConfigError;
use crate::time::Instant;

pub(crate) const NANOS: i128 = 1_000_000_000;

/// Tokens accruing at a rate up to a cap, in bit-nanoseconds.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    rate: i128,
    cap: i128,
    tokens: i128,
    updated: Instant,
}

impl Bucket {
    /// A full bucket of `burst` bytes filling at `bits_per_sec`.
    pub(crate) fn new(bits_per_sec: u64, burst: u32) -> Result<Bucket, ConfigError> {
        if bits_per_sec == 0 {
            return Err(ConfigError::Zero { what: "rate" });
        }
        if burst == 0 {
            return Err(ConfigError::Zero { what: "burst" });
        }
        let cap = i128::from(burst) * 8 * NANOS;
        Ok(Bucket {
            rate: i128::from(bits_per_sec),
            cap,
            tokens: cap,
            updated: Instant::ZERO,
        })
    }

    /// Adds what accrued up to `now` (never going back in time).
    pub(crate) fn refill(&mut self, now: Instant) {
        if now > self.updated {
            let elapsed = i128::from(now.as_nanos() - self.updated.as_nanos());
            self.tokens = (self.tokens + elapsed * self.rate).min(self.cap);
            self.updated = now;
        }
    }

    /// The bucket's depth.
    pub(crate) fn cap(&self) -> i128 {
        self.cap
    }

    fn holds(&self, need: i128) -> bool {
        self.tokens >= need
    }

    /// The first instant at which the bucket holds `need`.
    fn ready_at(&self, need: i128) -> Instant {
        let missing = need - self.tokens;
        if missing <= 0 {
            return self.updated;
        }
        // Ceiling division: the first nanosecond at which the bucket holds enough.
        let wait = (missing + self.rate - 1) / self.rate;
        self.updated
            .add_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
    }
}

/// The frame at the head of a rate limiter's queue: when it reached the medium and the tokens
/// it needs before it may leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) arrived: Instant,
    pub(crate) need: i128,
}

#[derive(Debug)]
struct Medium {
    bucket: Bucket,
    heads: [Option<Head>; 2],
    last_sender: usize,
}

impl Medium {
    /// Whether `side`'s head `mine` goes before the other side's head.
    fn first(&self, side: usize, mine: Head) -> bool {
        match self.heads[1 - side] {
            None => true,
            Some(other) => {
                mine.arrived < other.arrived
                    || (mine.arrived == other.arrived && self.last_sender != side)
            }
        }
    }
}

/// One direction's handle on the rate budget of a half-duplex link. See the module docs.
#[derive(Debug, Clone)]
pub struct SharedRate {
    medium: Arc<Mutex<Medium>>,
    side: usize,
}

impl SharedRate {
    /// The two handles (one per direction) of one budget of `bits_per_sec` with a bucket of
    /// `burst` bytes, full at first.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] when the rate or the bucket is zero.
    pub fn pair(bits_per_sec: u64, burst: u32) -> Result<[SharedRate; 2], ConfigError> {
        let medium = Arc::new(Mutex::new(Medium {
            bucket: Bucket::new(bits_per_sec, burst)?,
            heads: [None, None],
            last_sender: 1,
        }));
        Ok([0, 1].map(|side| SharedRate {
            medium: Arc::clone(&medium),
            side,
        }))
    }

    fn lock(&self) -> MutexGuard<'_, Medium> {
        self.medium.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where a rate limiter takes its tokens from.
#[derive(Debug)]
pub(crate) enum Budget {
    /// Its own bucket.
    Own(Bucket),
    /// A bucket shared with the link's other direction.
    Shared(SharedRate),
}

impl Budget {
    pub(crate) fn refill(&mut self, now: Instant) {
        match self {
            Budget::Own(b) => b.refill(now),
            Budget::Shared(s) => s.lock().bucket.refill(now),
        }
    }

    pub(crate) fn cap(&self) -> i128 {
        match self {
            Budget::Own(b) => b.cap(),
            Budget::Shared(s) => s.lock().bucket.cap(),
        }
    }

    /// Publishes this direction's head (None: its queue is empty).
    pub(crate) fn set_head(&mut self, head: Option<Head>) {
        if let Budget::Shared(s) = self {
            let side = s.side;
            s.lock().heads[side] = head;
        }
    }

    /// Lets `head` leave if the budget holds its tokens (and, shared, it is the medium's
    /// turn): spends `cost`, publishes `next` as the new head and returns true.
    pub(crate) fn try_send(&mut self, head: Head, cost: i128, next: Option<Head>) -> bool {
        match self {
            Budget::Own(b) => {
                if !b.holds(head.need) {
                    return false;
                }
                b.tokens -= cost;
                true
            }
            Budget::Shared(s) => {
                let side = s.side;
                let mut m = s.lock();
                if !m.bucket.holds(head.need) || !m.first(side, head) {
                    return false;
                }
                m.bucket.tokens -= cost;
                m.heads[side] = next;
                m.last_sender = side;
                true
            }
        }
    }

    /// When `head` may leave: when the budget holds its tokens; shared, and the other
    /// direction's head goes first, no earlier than that head may leave (then it is asked
    /// again).
    pub(crate) fn ready_at(&self, head: Head) -> Instant {
        match self {
            Budget::Own(b) => b.ready_at(head.need),
            Budget::Shared(s) => {
                let m = s.lock();
                let mine = m.bucket.ready_at(head.need);
                match m.heads[1 - s.side] {
                    Some(other) if !m.first(s.side, head) => {
                        mine.max(m.bucket.ready_at(other.need))
                    }
                    _ => mine,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::{RateConfig, RateLimiter, Stage};
    use crate::packet::Packet;

    /// Two limiters on one 12 Mbit/s budget with a one-frame (1500-byte) bucket: one
    /// 1500-byte frame per millisecond between them.
    fn half_duplex() -> [RateLimiter; 2] {
        let mut cfg = RateConfig::new(12_000_000);
        cfg.burst = 1500;
        let shared =
            SharedRate::pair(cfg.bits_per_sec, cfg.burst).unwrap_or_else(|e| panic!("{e}"));
        shared.map(|s| RateLimiter::sharing(cfg, s))
    }

    /// Wakes at every instant either limiter announces and polls both (the side that polls
    /// first alternates, as nothing in the medium may depend on it); returns each departure as
    /// (ns, side).
    fn drive(dirs: &mut [RateLimiter; 2], limit: usize) -> Vec<(u64, usize)> {
        let mut out = Vec::new();
        let mut turn = 0;
        let mut wakeups = 0;
        while let Some(t) = dirs.iter().filter_map(|d| d.next_wakeup()).min() {
            wakeups += 1;
            assert!(
                wakeups <= 2 * limit,
                "woken {wakeups} times for {limit} packets"
            );
            for side in [turn, 1 - turn] {
                while dirs[side].poll(t).is_some() {
                    out.push((t.as_nanos(), side));
                }
            }
            turn = 1 - turn;
        }
        out
    }

    #[test]
    fn both_directions_share_one_serialisation_clock() {
        let mut dirs = half_duplex();
        for i in 0..10 {
            for d in dirs.iter_mut() {
                d.push(Packet::new(vec![0; 1500], i), Instant::ZERO);
            }
        }
        let out = drive(&mut dirs, 20);
        // Twenty frames, one per millisecond in all, not two.
        let times: Vec<u64> = out.iter().map(|(t, _)| *t).collect();
        let want: Vec<u64> = (0..20).map(|i| i * 1_000_000).collect();
        assert_eq!(times, want);
        // Frames that reached the medium together take turns.
        let sides: Vec<usize> = out.iter().map(|(_, s)| *s).collect();
        assert!(sides.windows(2).all(|w| w[0] != w[1]), "{sides:?}");
    }

    #[test]
    fn frames_are_served_in_the_order_they_reached_the_medium() {
        let mut dirs = half_duplex();
        // Empty the bucket, so both later frames wait for tokens.
        dirs[0].push(Packet::new(vec![0; 1500], 0), Instant::ZERO);
        assert!(dirs[0].poll(Instant::ZERO).is_some());
        dirs[0].push(Packet::new(vec![0; 1500], 1), Instant::from_nanos(300_000));
        dirs[1].push(Packet::new(vec![0; 1500], 2), Instant::from_nanos(200_000));
        // The b-side frame came first: it leaves at 1 ms, the a-side one at 2 ms; the a side,
        // blocked, does not announce an instant before the b side's.
        assert_eq!(dirs[0].next_wakeup(), Some(Instant::from_millis(1)));
        assert_eq!(
            dirs[0].poll(Instant::from_millis(1)).map(|p| p.meta.seq),
            None
        );
        assert_eq!(
            dirs[1].poll(Instant::from_millis(1)).map(|p| p.meta.seq),
            Some(2)
        );
        assert_eq!(dirs[0].next_wakeup(), Some(Instant::from_millis(2)));
        assert_eq!(
            dirs[0].poll(Instant::from_millis(2)).map(|p| p.meta.seq),
            Some(1)
        );
    }

    #[test]
    fn the_sum_of_both_directions_stays_under_the_rate() {
        // Each direction offered the whole rate (one frame per ms) for 1 s: together they
        // carry one link's worth, the bucket's frame at most more, and the rest waits.
        let mut dirs = half_duplex();
        let mut sent = 0u64;
        let mut t = Instant::ZERO;
        for i in 0..1000u64 {
            t = Instant::from_millis(i);
            for d in dirs.iter_mut() {
                d.push(Packet::new(vec![0; 1500], i), t);
                while d.poll(t).is_some() {
                    sent += 1;
                }
            }
            // Every departure announced before the next arrival.
            while let Some(w) = dirs.iter().filter_map(|d| d.next_wakeup()).min() {
                if w >= Instant::from_millis(i + 1) {
                    break;
                }
                for d in dirs.iter_mut() {
                    while d.poll(w).is_some() {
                        sent += 1;
                    }
                }
            }
        }
        assert!(t == Instant::from_millis(999));
        // 1 s at one frame per ms, plus the full bucket at the start.
        assert!((999..=1001).contains(&sent), "{sent} frames in 1 s");
        let queued: u64 = dirs.iter().map(|d| d.stats().queued).sum();
        assert_eq!(
            sent + queued + dirs.iter().map(|d| d.stats().dropped).sum::<u64>(),
            2000
        );
        // Neither direction starved: each carried close to half.
        for d in &dirs {
            let out = d.stats().packets_out;
            assert!((450..=550).contains(&out), "one direction carried {out}");
        }
    }

    #[test]
    fn rejects_zero() {
        assert!(SharedRate::pair(0, 1500).is_err());
        assert!(SharedRate::pair(1_000_000, 0).is_err());
    }
}
