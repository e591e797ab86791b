//! Rate pacing for senders (`-b`): when each datagram (or write) may leave. Pure: time is an
//! argument (nanoseconds since the stream started); the workers sleep until the times given.
//!
//! **Why per-datagram departures.** A device with a short frame ring drops what a sender puts
//! on the wire back to back, even when the average rate is below its ceiling. A sender that
//! sends a millisecond of traffic at once and then sleeps therefore measures its own bursts as
//! the device's loss. So a paced UDP sender gives every datagram its own departure time
//! (`length / rate` apart) and waits for it precisely ([`crate::clock::PreciseSleeper`]).
//!
//! **Where batching takes over.** Below [`MIN_TIMED_GAP`] between datagrams (above 100 000
//! datagrams/s per stream) datagrams leave in batches (UDP GSO or `sendmmsg`), as many as
//! fill one [`MIN_TIMED_GAP`], so a batch spans at most that much of the schedule; unpaced
//! senders (`-b 0`) send full batches. Why 10 µs: one `send` of one datagram costs 5-10 µs on
//! a veth path (the receiving side's kernel work runs in the sender's system call), so below
//! that a sender timing every datagram cannot keep the rate. Near the limit a sender on a busy
//! machine still falls behind (measured: 92 000/s instead of 100 000/s with the other core
//! loaded); at such rates (gaps under [`HIGH_RATE_GAP`]) a sender more than
//! [`CATCH_UP_AFTER_GAPS`] gaps late sends the datagrams it owes in one batch
//! ([`catch_up_batch`]), so the asked rate holds. Slower senders never batch to catch up.
//!
//! **Intended bursts** (`--burst N`): N datagrams back to back, the bursts spaced so that the
//! average is still the asked rate.
//!
//! **Falling behind.** The schedule is cumulative from the start (bytes allowed = rate ×
//! elapsed), so the average rate is exact. When the sender was held up (preempted, a full
//! socket buffer) it catches up, but never with a burst: consecutive departures stay at least
//! [`CATCH_UP_SPACING`] of their normal gap apart, i.e. it catches up at most twice the rate.
//! It owes at most [`MAX_OWED`] of schedule: a sender held up longer (a link cut, a stalled
//! path) forgives the rest instead of sending seconds of traffic at twice the rate once the
//! path is back, which would measure the tool's catch-up rather than the path's recovery. The
//! lateness itself is still recorded (the schedule slips in the results).
//!
//! **Steady pacing** ([`Pacing::Steady`], `--steady-pacing`, always on in `sonde sweep`). Up
//! to 200 ms made up at twice the rate is harmless on a path with deep buffers, but not near
//! the ceiling of a device with a short ring: offered 98 % of what a 20-frame ring drains, a
//! sender that makes up 5 ms at twice the rate overflows the ring in under 3 ms, and a sweep
//! then reports the sender's catch-up as the device's loss (seen in the lab: ceilings found
//! 2.7-5 % low on a busy host). A steady sender makes up at most [`STEADY_OWED_DEPARTURES`]
//! departures of schedule (and at most [`STEADY_MAX_OWED`]): enough to absorb the wake-up
//! jitter of every departure, so the average holds, while what it sends early can add at most
//! that many frames to a device's queue. What a longer hold-up cost is lost and shows as a
//! sender below the offered rate (which the sweep reruns), not as the device's loss.
//!
//! Why not a slower catch-up instead: a sender allowed only 2 % over the rate, measured in the
//! lab just above a device's frame rate, offered 10 % less than asked (4.06 instead of 4.5
//! Mbit/s at 64 B, with the lab's forwarder beside it on a 2-core host), so its departures
//! were late by about 11 µs each on average (10 % of a 114 µs gap; inferred from that
//! shortfall, not timed one by one), more than 2 % of a gap can make up; the sweep then took
//! every step above the ceiling for a sender shortfall. The two bounds (two departures, 1 ms)
//! are chosen, not tuned: two departures absorb that jitter, and the 1 ms keeps a slow sender
//! from making up a long gap in one go.

use std::time::Duration;

/// The smallest gap between departures that is timed one by one (10 µs: 100 000 datagrams/s).
pub const MIN_TIMED_GAP: Duration = Duration::from_micros(10);

/// Gaps below this count as a high rate, where a late sender may batch what it owes.
pub const HIGH_RATE_GAP: Duration = Duration::from_micros(20);

/// How many gaps late a high-rate sender must be before it batches.
pub const CATCH_UP_AFTER_GAPS: u64 = 4;

/// While catching up, departures keep at least this fraction of their normal gap: at most
/// twice the asked rate, never back to back. (How fast a sender catches up hardly changes what
/// a saturated device drops, since the same deficit must pass it either way; a faster catch-up
/// keeps the asked rate on a busy machine, where a sender is held up often.)
pub const CATCH_UP_SPACING: f64 = 0.5;

/// The most schedule a late sender makes up (at up to twice the rate); lateness beyond it is
/// forgiven. Long enough for the preemptions of a busy host, so the asked average holds there;
/// short enough that an outage of seconds is not followed by seconds of double rate.
pub const MAX_OWED: Duration = Duration::from_millis(200);

/// Steady pacing: the most departures of schedule a late sender makes up (see the module docs).
pub const STEADY_OWED_DEPARTURES: u64 = 2;

/// Steady pacing: the most schedule a late sender makes up, however slow the rate.
pub const STEADY_MAX_OWED: Duration = Duration::from_millis(1);

/// How a paced sender treats lost schedule (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// Keep the asked average: make up [`MAX_OWED`] at up to twice the rate.
    #[default]
    Average,
    /// Keep a device's queue short: make up [`STEADY_OWED_DEPARTURES`] departures at most.
    Steady,
}

impl Pacing {
    /// The most lateness made up after a departure whose own gap is `gap_ns`.
    fn max_owed_ns(self, gap_ns: u64) -> u64 {
        match self {
            Pacing::Average => MAX_OWED.as_nanos() as u64,
            Pacing::Steady => gap_ns
                .saturating_mul(STEADY_OWED_DEPARTURES)
                .min(STEADY_MAX_OWED.as_nanos() as u64),
        }
    }
}

/// Most datagrams in one intended burst (`--burst`), as iperf3 allows.
pub const MAX_BURST: u32 = sonde_proto::message::limits::MAX_BURST;

/// A paced TCP write carries at most this much of the schedule ([`Pacer::chunk`]).
pub const CHUNK_TIME: Duration = Duration::from_millis(1);

/// The smallest paced TCP write, so that a slow rate is not paced in writes of a few bytes.
pub const MIN_CHUNK: usize = 256;

/// A cumulative-rate pacer for byte streams (TCP writes): when the `sent`-th byte is due.
///
/// A write leaves when its first byte is due, so the bytes sent run ahead of the schedule by at
/// most one write. Whole blocks (`-l`, 128 KiB by default) were once written that way: `-b 10m
/// -t 1` sent ten blocks due before 1 s, 10.5 Mbit/s. A paced sender therefore writes each
/// block in [`Pacer::chunk`]s, each waiting for its own first byte.
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

    /// How long after the start the `sent`-th byte becomes due.
    pub fn due_at(&self, sent: u64) -> Duration {
        Duration::from_secs_f64(sent as f64 / self.bytes_per_sec)
    }

    /// The most bytes of a `length`-byte block written at once: [`CHUNK_TIME`] of the rate,
    /// at least [`MIN_CHUNK`], at most the block.
    pub fn chunk(&self, length: usize) -> usize {
        let per_chunk = self.bytes_per_sec * CHUNK_TIME.as_secs_f64();
        (per_chunk as usize).max(MIN_CHUNK).min(length.max(1))
    }
}

/// Nanoseconds between datagrams of `len` bytes at `bits_per_sec` (0 when unpaced).
pub fn datagram_gap_ns(len: usize, bits_per_sec: u64) -> u64 {
    (len.max(1) as u64)
        .saturating_mul(8_000_000_000)
        .checked_div(bits_per_sec)
        .unwrap_or(0)
}

/// How many datagrams leave together at each departure: the intended burst when paced (at
/// least one), enough to span [`MIN_TIMED_GAP`] when the gap is finer than that, and a full
/// batch when unpaced. `max_batch` caps the gap-filling batch, not an intended burst.
pub fn datagrams_per_departure(
    len: usize,
    bits_per_sec: u64,
    burst: u32,
    max_batch: usize,
) -> usize {
    let burst = burst.clamp(1, MAX_BURST) as usize;
    if bits_per_sec == 0 {
        return max_batch.max(burst).max(1);
    }
    let gap_ns = datagram_gap_ns(len, bits_per_sec) as f64;
    let min_gap_ns = MIN_TIMED_GAP.as_nanos() as f64;
    let fill = if gap_ns >= min_gap_ns {
        1
    } else {
        ((min_gap_ns / gap_ns).ceil() as usize).clamp(1, max_batch.max(1))
    };
    burst.max(fill)
}

/// Datagrams for a departure that leaves `late_ns` after its due time, when each departure
/// normally carries `base` datagrams `gap_ns` apart: `base`, or at a high rate (gap under
/// [`HIGH_RATE_GAP`]) and more than [`CATCH_UP_AFTER_GAPS`] gaps late, what is owed (at most
/// `max_batch`).
pub fn catch_up_batch(late_ns: u64, gap_ns: u64, base: usize, max_batch: usize) -> usize {
    let high_rate = gap_ns > 0 && gap_ns < HIGH_RATE_GAP.as_nanos() as u64;
    if !high_rate || late_ns <= gap_ns.saturating_mul(CATCH_UP_AFTER_GAPS) {
        return base;
    }
    let owed = usize::try_from(late_ns / gap_ns).unwrap_or(usize::MAX);
    owed.max(base).min(max_batch.max(base))
}

/// The departure times of a paced datagram stream.
///
/// Calling order: [`Self::next_departure_ns`] gives when the next departure (one datagram, a
/// burst or a batch) may leave; after sending, [`Self::on_departure`] records when it left and
/// how many bytes it carried.
#[derive(Debug, Clone)]
pub struct DepartureSchedule {
    ns_per_byte: f64,
    pacing: Pacing,
    scheduled_bytes: u64,
    last: Option<(u64, u64)>,
    /// Lateness beyond what `pacing` makes up that the schedule gave up on, in nanoseconds.
    forgiven_ns: u64,
}

impl DepartureSchedule {
    /// An [`Pacing::Average`] schedule for `bits_per_sec`; None for 0 (unlimited: no schedule).
    pub fn new(bits_per_sec: u64) -> Option<Self> {
        Self::with_pacing(bits_per_sec, Pacing::Average)
    }

    /// A schedule for `bits_per_sec` that treats lost schedule as `pacing` says; None for 0.
    pub fn with_pacing(bits_per_sec: u64, pacing: Pacing) -> Option<Self> {
        (bits_per_sec > 0).then(|| Self {
            ns_per_byte: 8e9 / bits_per_sec as f64,
            pacing,
            scheduled_bytes: 0,
            last: None,
            forgiven_ns: 0,
        })
    }

    /// When the bytes scheduled so far are due, less what was forgiven.
    fn due_ns(&self) -> u64 {
        ((self.scheduled_bytes as f64 * self.ns_per_byte) as u64).saturating_add(self.forgiven_ns)
    }

    /// Lateness the schedule gave up on so far (beyond [`MAX_OWED`] at a time, or what
    /// [`Pacing::Steady`] allows).
    pub fn forgiven(&self) -> Duration {
        Duration::from_nanos(self.forgiven_ns)
    }

    /// Nanoseconds after the start at which the next departure may leave: when the bytes
    /// before it are due at the asked rate, but no sooner than [`CATCH_UP_SPACING`] of the
    /// previous departure's own gap after it left.
    pub fn next_departure_ns(&self) -> u64 {
        let due = self.due_ns();
        match self.last {
            Some((at, bytes)) => {
                let spacing = (bytes as f64 * self.ns_per_byte * CATCH_UP_SPACING) as u64;
                due.max(at.saturating_add(spacing))
            }
            None => due,
        }
    }

    /// Datagrams for a departure that leaves `late_ns` after its due time: what
    /// [`catch_up_batch`] gives, except that a steady schedule never batches what it owes.
    pub fn batch(&self, late_ns: u64, gap_ns: u64, base: usize, max_batch: usize) -> usize {
        match self.pacing {
            Pacing::Average => catch_up_batch(late_ns, gap_ns, base, max_batch),
            Pacing::Steady => base,
        }
    }

    /// Records a departure of `bytes` that left at `at_ns` after the start.
    pub fn on_departure(&mut self, at_ns: u64, bytes: u64) {
        let owed = at_ns.saturating_sub(self.due_ns());
        let gap_ns = (bytes as f64 * self.ns_per_byte) as u64;
        let max_owed = self.pacing.max_owed_ns(gap_ns);
        if owed > max_owed {
            self.forgiven_ns = self.forgiven_ns.saturating_add(owed - max_owed);
        }
        self.scheduled_bytes = self.scheduled_bytes.saturating_add(bytes);
        self.last = Some((at_ns, bytes));
    }
}

/// How far ahead of a departure the sender stops sleeping and spins: long enough to cover
/// almost every OS timer wake-up lateness seen recently (the second largest of the last
/// [`SpinMargin::WINDOW`] sleeps, about the 99th percentile), plus [`SpinMargin::SLACK_NS`];
/// short enough not to spin away a core. On a VM the timer fires 30-40 µs late typically and
/// 50-100 µs late one time in a hundred, so the margin settles near 50-100 µs.
///
/// Why at most [`SpinMargin::MAX_NS`] (200 µs): on a busy host a sleep can end milliseconds
/// late because the thread waited for a CPU, not for the timer. Spinning cannot win that back;
/// it only uses up the thread's share, and the scheduler then holds the sender off for longer.
/// With a 1 ms cap a 500 datagrams/s sender on a loaded 2-core host (load average 7-9) spun
/// a third of a core away (31-37 % user CPU) and fell behind its schedule up to 68 ms; capped
/// at 200 µs it used about 5 %, at the same rate (bench/RESULTS.md, pacing section).
///
/// A sample expires after [`SpinMargin::MEMORY`] waits, slept or not: otherwise an outlier
/// (a page fault at start) could raise the margin above the gap between departures, after
/// which the sender would never sleep again and never learn that the timer is back to normal.
#[derive(Debug, Clone)]
pub struct SpinMargin {
    /// (lateness, wait number) of the last sleeps.
    recent: [(u64, u64); Self::WINDOW],
    slept: usize,
    waits: u64,
    ns: u64,
}

impl SpinMargin {
    pub const MIN_NS: u64 = 5_000;
    pub const MAX_NS: u64 = 200_000;
    pub const SLACK_NS: u64 = 5_000;
    pub const WINDOW: usize = 128;
    pub const MEMORY: u64 = 1024;
    const START_NS: u64 = 100_000;

    pub fn new() -> Self {
        Self {
            recent: [(0, 0); Self::WINDOW],
            slept: 0,
            waits: 0,
            ns: Self::START_NS,
        }
    }

    /// The current margin.
    pub fn ns(&self) -> u64 {
        self.ns
    }

    /// After an OS sleep meant to end at `wake_ns`: it ended at `woke_ns`.
    pub fn on_wake(&mut self, wake_ns: u64, woke_ns: u64) {
        self.waits += 1;
        self.recent[self.slept % Self::WINDOW] = (woke_ns.saturating_sub(wake_ns), self.waits);
        self.slept += 1;
        self.update();
    }

    /// After a wait that only spun (the departure was within the margin).
    pub fn on_spin(&mut self) {
        self.waits += 1;
        if self.waits & 63 == 0 {
            self.update();
        }
    }

    fn update(&mut self) {
        let oldest = self.waits.saturating_sub(Self::MEMORY);
        let (mut n, mut first, mut second) = (0, 0, 0);
        for &(l, at) in &self.recent[..self.slept.min(Self::WINDOW)] {
            if at <= oldest {
                continue;
            }
            n += 1;
            if l > first {
                second = first;
                first = l;
            } else if l > second {
                second = l;
            }
        }
        self.ns = match n {
            0 => Self::START_NS,
            1 => first + Self::SLACK_NS,
            _ => second + Self::SLACK_NS,
        }
        .clamp(Self::MIN_NS, Self::MAX_NS);
    }
}

impl Default for SpinMargin {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifty_megabit_schedule() {
        let p = Pacer::new(50_000_000).unwrap();
        assert_eq!(p.due_at(6_250_000), Duration::from_secs(1));
        assert!(Pacer::new(0).is_none());
    }

    #[test]
    fn a_paced_block_is_written_in_a_millisecond_of_the_rate() {
        let k128 = 128 * 1024;
        // 10 Mbit/s: 1250 B a millisecond, so 1 s runs ahead by at most 0.1 %.
        assert_eq!(Pacer::new(10_000_000).unwrap().chunk(k128), 1250);
        // Slow rates in writes of at least MIN_CHUNK, fast ones in whole blocks.
        assert_eq!(Pacer::new(100_000).unwrap().chunk(k128), MIN_CHUNK);
        assert_eq!(Pacer::new(10_000_000_000).unwrap().chunk(k128), k128);
        assert_eq!(Pacer::new(100_000).unwrap().chunk(100), 100);
        assert_eq!(Pacer::new(100_000).unwrap().chunk(0), 1);
    }

    #[test]
    fn every_datagram_has_its_own_departure() {
        // 64 B at 4.1 Mbit/s: 8008 datagrams/s, 124.878 µs apart.
        assert_eq!(datagram_gap_ns(64, 4_100_000), 124_878);
        assert_eq!(datagram_gap_ns(64, 0), 0);
        assert_eq!(datagrams_per_departure(64, 4_100_000, 1, 64), 1);
        let mut s = DepartureSchedule::new(4_100_000).unwrap();
        let mut times = Vec::new();
        for _ in 0..5 {
            let at = s.next_departure_ns();
            times.push(at);
            s.on_departure(at, 64);
        }
        assert_eq!(times, [0, 124_878, 249_756, 374_634, 499_512]);
    }

    #[test]
    fn a_late_sender_catches_up_without_bursting() {
        let mut s = DepartureSchedule::new(8_000_000).unwrap(); // 1000 B = 1 ms
        s.on_departure(0, 1000);
        // Held up: the second datagram leaves 5 ms late.
        s.on_departure(6_000_000, 1000);
        // Due at 2 ms, but no sooner than 0.5 ms after the last one.
        assert_eq!(s.next_departure_ns(), 6_500_000);
        s.on_departure(6_500_000, 1000);
        assert_eq!(s.next_departure_ns(), 7_000_000);
        // Caught up after enough departures: the plain schedule again.
        let mut at = 7_000_000;
        for _ in 0..30 {
            s.on_departure(at, 1000);
            at = s.next_departure_ns();
        }
        assert_eq!(at, 33_000_000);
    }

    #[test]
    fn a_sender_held_up_for_seconds_makes_up_at_most_the_owed_limit() {
        let mut s = DepartureSchedule::new(8_000_000).unwrap(); // 1000 B = 1 ms
        s.on_departure(0, 1000);
        // A 2 s outage: the next datagram leaves 2 s late.
        s.on_departure(2_001_000_000, 1000);
        assert_eq!(s.forgiven(), Duration::from_millis(1800));
        // In the second after it, departures as early as allowed: the normal 1000 plus the
        // 200 ms owed (at twice the rate), not the 2000 a cumulative schedule would catch up.
        let mut at = s.next_departure_ns();
        let end = at + 1_000_000_000;
        let mut sent = 0;
        while at < end {
            s.on_departure(at, 1000);
            sent += 1;
            at = s.next_departure_ns();
        }
        assert!(
            (1195..=1205).contains(&sent),
            "{sent} departures in the second after"
        );
        // Short hold-ups are made up in full, so the average stays exact on a busy host.
        let mut t = DepartureSchedule::new(8_000_000).unwrap();
        t.on_departure(0, 1000);
        t.on_departure(150_000_000, 1000);
        assert_eq!(t.forgiven(), Duration::ZERO);
    }

    #[test]
    fn a_steady_sender_makes_up_two_departures_at_most() {
        let mut s = DepartureSchedule::with_pacing(80_000_000, Pacing::Steady).unwrap(); // 100 µs
        s.on_departure(0, 1000);
        // Held up 500 µs: two departures (200 µs) are made up, the rest forgiven.
        s.on_departure(600_000, 1000);
        assert_eq!(s.forgiven(), Duration::from_micros(300));
        let mut at = s.next_departure_ns();
        assert_eq!(at, 650_000, "half a gap after the late one");
        let mut times = vec![600_000];
        while at < 2_000_000 {
            s.on_departure(at, 1000);
            times.push(at);
            at = s.next_departure_ns();
        }
        // Caught up after four departures at twice the rate, then on the schedule again:
        // two datagrams more than a sender that forgave everything would have sent.
        assert_eq!(
            times[..6],
            [600_000, 650_000, 700_000, 750_000, 800_000, 900_000]
        );
        assert_eq!(s.forgiven(), Duration::from_micros(300));
        // At a slow rate the bound is 1 ms, however long two gaps are.
        let mut slow = DepartureSchedule::with_pacing(800_000, Pacing::Steady).unwrap(); // 10 ms
        slow.on_departure(0, 1000);
        slow.on_departure(15_000_000, 1000);
        assert_eq!(slow.forgiven(), Duration::from_millis(4));
        // A timer that wakes tens of µs late at every departure costs nothing: the average
        // holds.
        let mut t = DepartureSchedule::with_pacing(8_000_000, Pacing::Steady).unwrap();
        let mut at = 0;
        for i in 0..1000u64 {
            t.on_departure(at + 20_000 + (i % 7) * 10_000, 1000);
            at = t.next_departure_ns();
        }
        assert_eq!(t.forgiven(), Duration::ZERO);
        assert!(
            (999_000_000..=1_001_000_000).contains(&at),
            "1000 departures end at {at}"
        );
        // Late at a high rate (10 µs gaps, 95 µs late), only the average schedule batches.
        let average = DepartureSchedule::new(100_000_000).unwrap();
        assert_eq!(average.batch(95_000, 10_000, 1, 64), 9);
        assert_eq!(t.batch(95_000, 10_000, 1, 64), 1);
    }

    #[test]
    fn only_a_late_high_rate_sender_batches_what_it_owes() {
        // 10 µs gaps (100 000/s): on time or a little late, one datagram.
        assert_eq!(catch_up_batch(0, 10_000, 1, 64), 1);
        assert_eq!(catch_up_batch(40_000, 10_000, 1, 64), 1);
        // 95 µs late: the 9 it owes, at once.
        assert_eq!(catch_up_batch(95_000, 10_000, 1, 64), 9);
        // Never more than a batch.
        assert_eq!(catch_up_batch(10_000_000, 10_000, 1, 64), 64);
        // 125 µs gaps (8000/s) are not a high rate: however late, never a batch.
        assert_eq!(catch_up_batch(10_000_000, 125_000, 1, 64), 1);
        // An intended burst stays the burst.
        assert_eq!(catch_up_batch(0, 10_000, 8, 64), 8);
    }

    #[test]
    fn intended_bursts_keep_the_average_rate() {
        // 10 datagrams of 1250 B back to back at 10 Mbit/s: one burst every 10 ms.
        assert_eq!(datagrams_per_departure(1250, 10_000_000, 10, 64), 10);
        let mut s = DepartureSchedule::new(10_000_000).unwrap();
        s.on_departure(0, 12_500);
        assert_eq!(s.next_departure_ns(), 10_000_000);
        // Bursts larger than a system call's batch stay one burst.
        assert_eq!(datagrams_per_departure(64, 1_000_000, 500, 64), 500);
        assert_eq!(
            datagrams_per_departure(64, 1_000_000, 5000, 64),
            MAX_BURST as usize
        );
    }

    #[test]
    fn batches_only_where_the_gap_is_below_the_timed_limit() {
        // 1448 B at 1 Gbit/s: 11.6 µs apart, timed one by one.
        assert_eq!(datagrams_per_departure(1448, 1_000_000_000, 1, 44), 1);
        // 1448 B at 2 Gbit/s: 5.8 µs apart, in pairs.
        assert_eq!(datagrams_per_departure(1448, 2_000_000_000, 1, 44), 2);
        // 64 B at 1 Gbit/s: 0.512 µs apart; 20 fill 10 µs.
        assert_eq!(datagrams_per_departure(64, 1_000_000_000, 1, 64), 20);
        // 64 B at 10 Gbit/s would need 196: capped at the batch size.
        assert_eq!(datagrams_per_departure(64, 10_000_000_000, 1, 64), 64);
        // Unpaced: full batches.
        assert_eq!(datagrams_per_departure(1448, 0, 1, 44), 44);
    }

    #[test]
    fn spin_margin_follows_the_recent_high_percentile_of_lateness() {
        let mut m = SpinMargin::new();
        assert_eq!(m.ns(), 100_000);
        m.on_wake(1_000_000, 1_040_000);
        assert_eq!(m.ns(), 45_000);
        // Typically 30 µs late, with one outlier of 900 µs: the outlier alone is ignored.
        for i in 0..200 {
            let late = if i == 150 { 150_000 } else { 30_000 };
            m.on_wake(0, late);
        }
        assert_eq!(m.ns(), 35_000);
        // Two outliers in the window raise it; the margin never exceeds its cap.
        m.on_wake(0, 5_000_000);
        assert_eq!(m.ns(), 155_000);
        m.on_wake(0, 7_000_000);
        assert_eq!(m.ns(), SpinMargin::MAX_NS);
        // Once the outliers leave the window it comes back down.
        for _ in 0..SpinMargin::WINDOW {
            m.on_wake(0, 10_000);
        }
        assert_eq!(m.ns(), 15_000);
    }

    #[test]
    fn an_outlier_at_start_cannot_stop_sleeping_for_good() {
        let mut m = SpinMargin::new();
        m.on_wake(0, 150_000);
        m.on_wake(0, 1_700_000);
        assert_eq!(m.ns(), 155_000);
        // Departures 128 µs apart now fall inside the margin: the sender only spins, and the
        // two samples expire.
        for _ in 0..SpinMargin::MEMORY + 64 {
            m.on_spin();
        }
        assert_eq!(m.ns(), 100_000);
    }
}
