//! `-b RATE` for TCP stress connections: a token bucket per connection, so that none sends
//! faster than RATE whatever the device takes.
//!
//! The bucket fills at RATE and holds at most one write (`burst`), so by any time `t` since
//! the data began a connection has sent at most `RATE·t + burst`, and a stall is not made up
//! with a burst beyond that one write. Pure: the time (seconds since the data began) is an
//! argument; the event loop asks how much it may write now and, when held back, how long to
//! wait.

/// A connection's sending allowance.
#[derive(Debug, Clone, PartialEq)]
pub struct Pacer {
    bytes_per_sec: f64,
    burst: f64,
    tokens: f64,
    at: f64,
}

/// The least a held-back connection waits for before it writes again: one segment's worth,
/// so that a slow rate does not turn into a write per byte.
const QUANTUM: u64 = 1448;

impl Pacer {
    /// A bucket of `bits_per_sec` (at least 1) holding `burst` bytes (at least 1), full at 0.
    pub fn new(bits_per_sec: u64, burst: usize) -> Self {
        let burst = burst.max(1) as f64;
        Self {
            bytes_per_sec: bits_per_sec.max(1) as f64 / 8.0,
            burst,
            tokens: burst,
            at: 0.0,
        }
    }

    fn refill(&mut self, now: f64) {
        if now > self.at {
            self.tokens = (self.tokens + (now - self.at) * self.bytes_per_sec).min(self.burst);
            self.at = now;
        }
    }

    /// How many of `want` bytes may be written at `now`: 0 until the bucket holds the lesser
    /// of `want` and one segment, then as many as it holds.
    pub fn allowance(&mut self, now: f64, want: u64) -> u64 {
        self.refill(now);
        let have = self.tokens.floor() as u64;
        if have >= want.min(QUANTUM).min(self.burst as u64) {
            have.min(want)
        } else {
            0
        }
    }

    /// Takes `n` written bytes from the bucket.
    pub fn spend(&mut self, n: u64) {
        self.tokens -= n as f64;
    }

    /// Seconds from `now` until a write of `want` bytes is allowed (0: at once).
    pub fn wait(&self, now: f64, want: u64) -> f64 {
        let need = want.min(QUANTUM).min(self.burst as u64) as f64;
        let tokens = (self.tokens + (now - self.at).max(0.0) * self.bytes_per_sec).min(self.burst);
        ((need - tokens) / self.bytes_per_sec).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_gives_one_write_then_the_rate() {
        // 8 Mbit/s: a million bytes a second; one 10 000-byte write at once.
        let mut p = Pacer::new(8_000_000, 10_000);
        assert_eq!(p.allowance(0.0, 50_000), 10_000);
        p.spend(10_000);
        assert_eq!(p.allowance(0.0, 50_000), 0);
        assert_eq!(p.wait(0.0, 50_000), 1448.0 / 1e6);
        // 5 ms later: 5000 bytes.
        assert_eq!(p.allowance(0.005, 50_000), 5000);
        p.spend(5000);
        // A long stall fills the bucket to one write, no more.
        assert_eq!(p.allowance(10.0, 50_000), 10_000);
        assert_eq!(p.wait(10.0, 50_000), 0.0);
    }

    #[test]
    fn what_is_sent_never_passes_the_rate_plus_one_write() {
        // Write as soon as allowed, in steps of 0.3 ms, for 2 s at 1 Mbit/s.
        let (rate, burst) = (1_000_000u64, 4096usize);
        let mut p = Pacer::new(rate, burst);
        let mut sent = 0u64;
        for i in 0..=20_000 {
            let now = f64::from(i) * 1e-4;
            let n = p.allowance(now, 128 * 1024);
            p.spend(n);
            sent += n;
            let bound = rate as f64 / 8.0 * now + burst as f64;
            assert!(sent as f64 <= bound + 1e-6, "{sent} > {bound} at {now}");
        }
        // And it kept up: within one write of the rate.
        assert!(sent as f64 >= 250_000.0 - burst as f64, "{sent}");
    }

    #[test]
    fn a_small_want_is_allowed_at_once_and_a_slow_rate_waits_for_a_segment() {
        let mut p = Pacer::new(80_000, 2000); // 10 000 bytes/s
        p.spend(2000);
        assert_eq!(p.allowance(0.01, 10), 10, "100 bytes in, 10 asked");
        p.spend(10);
        // 1448 bytes needed before the next full write: not a write per byte.
        assert_eq!(p.allowance(0.02, 5000), 0);
        assert!(
            (p.wait(0.02, 5000) - 0.1258).abs() < 1e-3,
            "{}",
            p.wait(0.02, 5000)
        );
    }
}
