//! Rate pacing for senders (`-b`): how much may be sent by a given time.
//!
//! The schedule is cumulative from the stream start (bytes allowed = rate × elapsed), like
//! iperf3's average-rate check, but the sender sleeps exactly until the next block is due
//! instead of polling on a coarse tick, which keeps bursts small. A small allowance of
//! `burst_bytes` lets a batch (GSO) go out at once. Time is an argument.

use std::time::Duration;

/// A cumulative-rate pacer.
#[derive(Debug, Clone, Copy)]
pub struct Pacer {
    bytes_per_sec: f64,
}

impl Pacer {
    /// A pacer for `bits_per_sec`; None for 0 (unlimited).
    pub fn new(bits_per_sec: u64) -> Option<Self> {
        (bits_per_sec > 0).then(|| Self {
            bytes_per_sec: bits_per_sec as f64 / 8.0,
        })
    }

    /// Bytes allowed to have been sent `elapsed` after the start.
    pub fn allowance(&self, elapsed: Duration) -> u64 {
        (self.bytes_per_sec * elapsed.as_secs_f64()) as u64
    }

    /// How long after the start the `sent`-th byte becomes due.
    pub fn due_at(&self, sent: u64) -> Duration {
        Duration::from_secs_f64(sent as f64 / self.bytes_per_sec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifty_megabit_schedule() {
        let p = Pacer::new(50_000_000).unwrap();
        assert_eq!(p.allowance(Duration::from_secs(1)), 6_250_000);
        assert_eq!(p.due_at(6_250_000), Duration::from_secs(1));
        assert!(Pacer::new(0).is_none());
    }
}
