//! Loss, reordering and duplicate accounting for the receiving end of one UDP stream.
//!
//! Each datagram carries a sequence number (starting at 1) and the sender's timestamp. iperf3
//! infers loss as "highest sequence seen minus datagrams received" and cannot tell a late
//! datagram from a duplicate; sonde keeps a fixed-size bitmap of recent sequence numbers so that
//! duplicates are counted apart and never hide a loss. Jitter follows RFC 3550 §6.4.1 (see
//! [`crate::jitter`]). Times are arguments; nothing here reads a clock.

use crate::jitter::Jitter;
use crate::model::UdpReceiveStats;

/// How many sequence numbers at and below the highest one are remembered for duplicate
/// detection.
pub const WINDOW: u64 = 65_536;
const WORDS: usize = (WINDOW / 64) as usize;

/// Cumulative counters of one receiving UDP stream since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UdpRxCounters {
    /// Distinct sequence numbers received.
    pub unique: u64,
    /// Bytes of the distinct datagrams (goodput).
    pub bytes: u64,
    /// Highest sequence number seen (0 before the first valid datagram).
    pub max_seq: u64,
    /// Datagrams whose sequence number had already been received.
    pub duplicates: u64,
    /// Bytes of the duplicate datagrams.
    pub duplicate_bytes: u64,
    /// Distinct datagrams that arrived after a higher sequence number.
    pub out_of_order: u64,
    /// Datagrams with the invalid sequence number 0 (ignored otherwise).
    pub invalid: u64,
    /// Current RFC 3550 jitter, in seconds.
    pub jitter_secs: f64,
}

/// 100 * lost / packets, or 0 when no packets were expected.
pub fn lost_percent(lost: u64, packets: u64) -> f64 {
    if packets == 0 {
        0.0
    } else {
        100.0 * lost as f64 / packets as f64
    }
}

impl UdpRxCounters {
    /// Datagrams missing so far: the highest sequence number minus the distinct ones received.
    pub fn lost(&self) -> u64 {
        self.max_seq.saturating_sub(self.unique)
    }

    /// Statistics for the span between `prev` (counters at the span start) and `self`.
    ///
    /// A datagram that arrives late and fills a gap reported lost in an earlier interval makes
    /// this interval's loss count smaller; it never goes below zero.
    pub fn interval_stats(&self, prev: &UdpRxCounters) -> UdpReceiveStats {
        let packets = self.max_seq.saturating_sub(prev.max_seq);
        let lost = self.lost().saturating_sub(prev.lost());
        UdpReceiveStats {
            packets,
            lost,
            lost_percent: lost_percent(lost, packets),
            jitter_ms: self.jitter_secs * 1000.0,
            out_of_order: self.out_of_order.saturating_sub(prev.out_of_order),
            duplicates: self.duplicates.saturating_sub(prev.duplicates),
        }
    }
}

/// The whole-test summary of a receiving stream.
///
/// `baseline` is the counters at the end of the omit period (or `Default` with no omit).
/// When the sender's count of datagrams sent (cumulative from sequence 1) is known, the expected
/// count is `sent - baseline.max_seq` and losses at the tail of the test, which leave no higher
/// sequence number behind them, are counted too (iperf3 misses them). Without it, the figures
/// come from the highest sequence number seen.
pub fn final_stats(
    counters: &UdpRxCounters,
    baseline: &UdpRxCounters,
    sent_packets: Option<u64>,
) -> UdpReceiveStats {
    let mut stats = counters.interval_stats(baseline);
    if let Some(sent) = sent_packets {
        let expected = sent.saturating_sub(baseline.max_seq);
        let received = counters.unique.saturating_sub(baseline.unique);
        stats.packets = expected;
        stats.lost = expected.saturating_sub(received);
        stats.lost_percent = lost_percent(stats.lost, stats.packets);
    }
    stats
}

/// Receiver-side accounting for one UDP stream.
///
/// Feed every datagram to [`on_datagram`](Self::on_datagram) in arrival order; read
/// [`counters`](Self::counters) at interval ends. Duplicates are detected over the last
/// [`WINDOW`] sequence numbers at and below the highest seen; a datagram older than that cannot
/// be classified and is counted as a distinct, out-of-order arrival. Memory use is fixed (8 KiB)
/// whatever the sequence numbers are.
#[derive(Debug, Clone)]
pub struct UdpReceiveTracker {
    counters: UdpRxCounters,
    jitter: Jitter,
    /// Bit `seq % WINDOW` is set when `seq` (in the window) has been received.
    seen: Box<[u64; WORDS]>,
}

impl Default for UdpReceiveTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl UdpReceiveTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> Self {
        Self {
            counters: UdpRxCounters::default(),
            jitter: Jitter::new(),
            seen: Box::new([0; WORDS]),
        }
    }

    /// Accounts one datagram: its sequence number, the sender's timestamp and the arrival time
    /// (ns, each on its own clock) and its size in bytes.
    pub fn on_datagram(&mut self, seq: u64, send_ns: u64, arrival_ns: u64, bytes: u64) {
        let c = &mut self.counters;
        if seq == 0 {
            c.invalid += 1;
            return;
        }
        if seq > c.max_seq {
            self.advance(seq);
            self.set(seq);
        } else if c.max_seq - seq < WINDOW {
            if self.is_set(seq) {
                let c = &mut self.counters;
                c.duplicates += 1;
                c.duplicate_bytes = c.duplicate_bytes.saturating_add(bytes);
                return;
            }
            self.set(seq);
            self.counters.out_of_order += 1;
        } else {
            // Too old to tell apart from a duplicate: counted as a late, distinct arrival.
            c.out_of_order += 1;
        }
        let c = &mut self.counters;
        c.unique += 1;
        c.bytes = c.bytes.saturating_add(bytes);
        self.jitter.on_packet(send_ns, arrival_ns);
        self.counters.jitter_secs = self.jitter.seconds();
    }

    /// The cumulative counters so far.
    pub fn counters(&self) -> UdpRxCounters {
        self.counters
    }

    /// Moves the highest sequence number to `new_max`, forgetting the bits that leave the window.
    fn advance(&mut self, new_max: u64) {
        let old = self.counters.max_seq;
        if new_max - old >= WINDOW {
            self.seen.fill(0);
        } else {
            for s in old + 1..=new_max {
                self.clear(s);
            }
        }
        self.counters.max_seq = new_max;
    }

    fn slot(seq: u64) -> (usize, u64) {
        let bit = seq % WINDOW;
        ((bit / 64) as usize, 1 << (bit % 64))
    }

    fn is_set(&self, seq: u64) -> bool {
        let (w, m) = Self::slot(seq);
        self.seen[w] & m != 0
    }

    fn set(&mut self, seq: u64) {
        let (w, m) = Self::slot(seq);
        self.seen[w] |= m;
    }

    fn clear(&mut self, seq: u64) {
        let (w, m) = Self::slot(seq);
        self.seen[w] &= !m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds sequence numbers with 100-byte datagrams and constant transit.
    fn feed(t: &mut UdpReceiveTracker, seqs: &[u64]) {
        for &s in seqs {
            t.on_datagram(s, s * 1000, s * 1000 + 500, 100);
        }
    }

    fn tracker(seqs: &[u64]) -> UdpReceiveTracker {
        let mut t = UdpReceiveTracker::new();
        feed(&mut t, seqs);
        t
    }

    #[test]
    fn in_order() {
        let c = tracker(&[1, 2, 3, 4, 5]).counters();
        assert_eq!((c.unique, c.bytes, c.max_seq), (5, 500, 5));
        assert_eq!(
            (c.lost(), c.out_of_order, c.duplicates, c.invalid),
            (0, 0, 0, 0)
        );
        assert_eq!(c.jitter_secs, 0.0);
    }

    #[test]
    fn gaps_are_lost() {
        let c = tracker(&[1, 2, 5, 6, 10]).counters();
        assert_eq!((c.unique, c.max_seq, c.lost()), (5, 10, 5));
        let s = c.interval_stats(&UdpRxCounters::default());
        assert_eq!((s.packets, s.lost), (10, 5));
        assert_eq!(s.lost_percent, 50.0);
    }

    #[test]
    fn late_arrival_fills_a_gap() {
        let mut t = tracker(&[1, 2, 4]);
        let before = t.counters();
        assert_eq!((before.lost(), before.out_of_order), (1, 0));
        feed(&mut t, &[3]);
        let after = t.counters();
        assert_eq!((after.lost(), after.out_of_order, after.unique), (0, 1, 4));
        // The interval that saw the late datagram reports no loss, never a negative one.
        let s = after.interval_stats(&before);
        assert_eq!((s.packets, s.lost, s.out_of_order), (0, 0, 1));
        assert_eq!(s.lost_percent, 0.0);
    }

    #[test]
    fn duplicates_are_counted_apart() {
        let mut t = tracker(&[1, 2, 2, 3, 1]);
        t.on_datagram(3, 0, 0, 40);
        let c = t.counters();
        assert_eq!((c.unique, c.bytes, c.max_seq), (3, 300, 3));
        assert_eq!((c.duplicates, c.duplicate_bytes), (3, 240));
        assert_eq!((c.out_of_order, c.lost()), (0, 0));
    }

    #[test]
    fn reorder_and_duplicates() {
        let c = tracker(&[1, 4, 3, 4, 2, 3, 6]).counters();
        assert_eq!((c.unique, c.max_seq, c.lost()), (5, 6, 1));
        assert_eq!((c.out_of_order, c.duplicates), (2, 2));
    }

    #[test]
    fn seq_zero_is_invalid_and_ignored() {
        let c = tracker(&[0, 1, 0]).counters();
        assert_eq!((c.invalid, c.unique, c.bytes, c.max_seq), (2, 1, 100, 1));
    }

    #[test]
    fn far_behind_the_window_is_counted_as_late_and_unique() {
        let mut t = tracker(&[1, 2, WINDOW + 10]);
        // Inside the window (max - seq = WINDOW - 1): a real duplicate check happens.
        feed(&mut t, &[11, 11]);
        // seq 2 is WINDOW + 8 behind: cannot be classified, counted unique and out of order.
        feed(&mut t, &[2]);
        let c = t.counters();
        assert_eq!((c.unique, c.duplicates, c.out_of_order), (5, 1, 2));
        assert_eq!(c.lost(), WINDOW + 10 - 5);
    }

    #[test]
    fn window_bits_are_cleared_when_sliding() {
        // seq 5 and 5 + WINDOW share a bitmap slot; the second is new, not a duplicate.
        let c = tracker(&[5, 5 + WINDOW, 5 + 2 * WINDOW - 1, 5 + WINDOW]).counters();
        assert_eq!((c.unique, c.duplicates), (3, 1));
        let c = tracker(&[5, 6, 5 + WINDOW - 1, 6 + WINDOW]).counters();
        assert_eq!((c.unique, c.duplicates), (4, 0));
    }

    #[test]
    fn huge_jump_is_cheap_and_sane() {
        let mut t = tracker(&[1, 2]);
        t.on_datagram(u64::MAX, 0, 0, 100);
        t.on_datagram(u64::MAX, 0, 0, 100);
        t.on_datagram(u64::MAX - 1, 0, 0, 100);
        let c = t.counters();
        assert_eq!((c.max_seq, c.unique, c.duplicates), (u64::MAX, 4, 1));
        assert_eq!(c.lost(), u64::MAX - 4);
        assert_eq!(c.out_of_order, 1);
    }

    #[test]
    fn jitter_skips_duplicates() {
        let mut t = UdpReceiveTracker::new();
        t.on_datagram(1, 0, 1_000, 10);
        t.on_datagram(2, 10_000, 12_600, 10); // D = 1600 -> 100 ns
        t.on_datagram(2, 10_000, 99_999, 10); // duplicate, ignored
        assert!((t.counters().jitter_secs - 100e-9).abs() < 1e-15);
        let s = t.counters().interval_stats(&UdpRxCounters::default());
        assert!((s.jitter_ms - 100e-6).abs() < 1e-12);
    }

    #[test]
    fn interval_deltas() {
        let mut t = tracker(&[1, 2, 4, 5]);
        let prev = t.counters();
        feed(&mut t, &[7, 6, 7, 10]);
        let s = t.counters().interval_stats(&prev);
        // max 5 -> 10: 5 expected; lost 1 -> 3: 2 more (8, 9).
        assert_eq!(
            (s.packets, s.lost, s.out_of_order, s.duplicates),
            (5, 2, 1, 1)
        );
        assert_eq!(s.lost_percent, 40.0);
    }

    #[test]
    fn tail_loss_counts_with_sent_count() {
        // Sender sent 10; 9 and 10 vanished, leaving no higher sequence behind them.
        let c = tracker(&[1, 2, 3, 4, 5, 6, 7, 8]).counters();
        let none = UdpRxCounters::default();
        let without = final_stats(&c, &none, None);
        assert_eq!((without.packets, without.lost), (8, 0));
        let with = final_stats(&c, &none, Some(10));
        assert_eq!((with.packets, with.lost), (10, 2));
        assert_eq!(with.lost_percent, 20.0);
    }

    #[test]
    fn omit_baseline_is_subtracted() {
        let mut t = tracker(&[1, 2, 4]);
        let baseline = t.counters();
        feed(&mut t, &[5, 6, 8, 8, 7]);
        let c = t.counters();
        let s = final_stats(&c, &baseline, None);
        // After omit: max 4 -> 8, unique 3 -> 7: 4 expected, 0 lost; one duplicate, one late.
        assert_eq!(
            (s.packets, s.lost, s.duplicates, s.out_of_order),
            (4, 0, 1, 1)
        );
        // Sender sent 12 in all: 8 expected after omit, 4 received.
        let s = final_stats(&c, &baseline, Some(12));
        assert_eq!((s.packets, s.lost), (8, 4));
        assert_eq!(s.lost_percent, 50.0);
        // A bogus small sent count never produces negative figures.
        let s = final_stats(&c, &baseline, Some(2));
        assert_eq!((s.packets, s.lost, s.lost_percent), (0, 0, 0.0));
    }

    #[test]
    fn lost_percent_handles_zero() {
        assert_eq!(lost_percent(0, 0), 0.0);
        assert_eq!(lost_percent(1, 4), 25.0);
    }
}
