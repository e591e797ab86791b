//! Interarrival jitter, as defined by RFC 3550 §6.4.1 (and reported by iperf3 for UDP).
//!
//! For consecutive packets i-1 and i, with transit time `S = arrival - send`,
//! `D = |S_i - S_{i-1}|` and the estimate moves by `J += (|D| - J) / 16`. Only differences of
//! transit times are used, so a constant offset between the sender's and receiver's clocks
//! cancels out; the times are plain arguments in nanoseconds.

/// RFC 3550 interarrival jitter estimator.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Jitter {
    /// Transit time of the previous packet, in ns (may be negative with skewed clocks).
    prev_transit: Option<i128>,
    /// Current estimate, in ns.
    jitter_ns: f64,
}

impl Jitter {
    /// A fresh estimator: zero jitter, no previous packet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one packet: its sender timestamp and arrival time, both in nanoseconds on their own
    /// clocks. The first packet only records its transit time.
    pub fn on_packet(&mut self, send_ns: u64, arrival_ns: u64) {
        let transit = i128::from(arrival_ns) - i128::from(send_ns);
        if let Some(prev) = self.prev_transit {
            let d = (transit - prev).unsigned_abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.prev_transit = Some(transit);
    }

    /// The current estimate in seconds.
    pub fn seconds(&self) -> f64 {
        self.jitter_ns / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-15
    }

    #[test]
    fn fresh_and_single_packet_are_zero() {
        let mut j = Jitter::new();
        assert_eq!(j.seconds(), 0.0);
        j.on_packet(1_000, 5_000);
        assert_eq!(j.seconds(), 0.0);
    }

    #[test]
    fn constant_transit_gives_zero_even_with_clock_offset() {
        let mut j = Jitter::new();
        // Receiver clock is far behind the sender's: transit is negative but constant.
        for i in 0..10u64 {
            j.on_packet(1_000_000_000 + i * 1_000, 10 + i * 1_000);
        }
        assert_eq!(j.seconds(), 0.0);
    }

    #[test]
    fn hand_computed_sequence() {
        // Transits (ns): 1000, 2600, 1000, 1000.
        // D = 1600 -> J = 1600/16 = 100
        // D = 1600 -> J = 100 + 1500/16 = 193.75
        // D = 0    -> J = 193.75 - 193.75/16 = 181.640625
        let mut j = Jitter::new();
        j.on_packet(0, 1_000);
        j.on_packet(10_000, 12_600);
        assert!(close(j.seconds(), 100e-9));
        j.on_packet(20_000, 21_000);
        assert!(close(j.seconds(), 193.75e-9));
        j.on_packet(30_000, 31_000);
        assert!(close(j.seconds(), 181.640625e-9));
    }

    #[test]
    fn extreme_timestamps_do_not_overflow() {
        let mut j = Jitter::new();
        j.on_packet(u64::MAX, 0);
        j.on_packet(0, u64::MAX);
        let expected = 2.0 * u64::MAX as f64 / 16.0 / 1e9;
        assert!((j.seconds() - expected).abs() / expected < 1e-12);
    }
}
