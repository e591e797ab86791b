//! Receive accounting of one profile stream: arrivals in (sequence number, send stamp, receive
//! time), per-stream and per-burst figures out. Pure: the runtime passes the times.
//!
//! Loss is counted against what the sender says it sent (its count arrives at the end), so
//! datagrams still in flight when a run is cut short are not mistaken for lost ones beyond
//! what the sender reports. Out of order means: arrived after a higher sequence number
//! (RFC 4737's "reordered"), each datagram at most once; a duplicate is a sequence number
//! seen before. Memory is bounded by the stream's plan (validated limits), whatever a peer
//! sends: sequence numbers outside the plan are counted as foreign and otherwise ignored.
//!
//! A datagram's delay is its receive time minus its own send stamp (the sender stamps each
//! datagram as it leaves, at the time the plan has it due when the sender keeps its
//! schedule), so the last datagram of a spaced-out burst is measured from when it was sent,
//! not from its burst's start. The receiver also measures how far apart a burst's datagrams arrived (the burst spacing),
//! to compare with the gap the plan asked for.

use crate::result::{BurstRecord, DelayBasis, DelaySummary, StreamResult};
use crate::schedule::Schedule;
use crate::spec::StreamSpec;

/// Most delay samples kept per stream (8 MB); later datagrams still count for loss, order
/// and bursts.
pub const MAX_SAMPLES: usize = 1_000_000;

#[derive(Debug, Clone, Copy, Default)]
struct BurstAcc {
    received: u32,
    /// Raw delay (receive time minus send stamp) of the latest arrival of the burst.
    last_raw: Option<i64>,
}

/// Counts the arrivals of one stream.
#[derive(Debug, Clone)]
pub struct StreamReceiver {
    id: u32,
    spec: StreamSpec,
    schedule: Schedule,
    seen: Vec<u64>,
    max_seq: u64,
    received: u64,
    duplicates: u64,
    out_of_order: u64,
    foreign: u64,
    raw: Vec<i64>,
    bursts: Vec<BurstAcc>,
    spacing: Spacing,
}

/// The spacing of arrivals inside bursts: over each pair of consecutive arrivals of one burst
/// in rising sequence order, the time between them and how many sequence numbers apart they
/// are (2 across a lost datagram), so the mean is per step of the plan whatever was lost.
#[derive(Debug, Clone, Copy, Default)]
struct Spacing {
    /// The previous arrival: its burst, sequence number, receive time.
    last: Option<(u64, u64, u64)>,
    span_ns: u128,
    steps: u64,
}

impl Spacing {
    fn on_arrival(&mut self, burst: u64, seq: u64, recv_ns: u64) {
        if let Some((b, s, t)) = self.last {
            if b == burst && seq > s && recv_ns >= t {
                self.span_ns += u128::from(recv_ns - t);
                self.steps += seq - s;
            }
        }
        self.last = Some((burst, seq, recv_ns));
    }

    /// The mean, ms; None before two datagrams of one burst arrived in order.
    fn mean_ms(&self) -> Option<f64> {
        (self.steps > 0).then(|| self.span_ns as f64 / self.steps as f64 / 1e6)
    }
}

impl StreamReceiver {
    /// A receiver for stream `id` of a profile of `profile_s` seconds.
    pub fn new(id: u32, spec: &StreamSpec, profile_s: f64) -> Self {
        Self {
            id,
            spec: spec.clone(),
            schedule: Schedule::new(spec, profile_s),
            seen: Vec::new(),
            max_seq: 0,
            received: 0,
            duplicates: 0,
            out_of_order: 0,
            foreign: 0,
            raw: Vec::new(),
            bursts: Vec::new(),
            spacing: Spacing::default(),
        }
    }

    /// The stream's protocol id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Distinct datagrams so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// One arrival: datagram `seq`, stamped `send_ns` by the sender as it left, received at `recv_ns` (both nanoseconds on their ends' clocks).
    pub fn on_datagram(&mut self, seq: u64, send_ns: u64, recv_ns: u64) {
        let Some(k) = self.schedule.burst_of(seq) else {
            self.foreign += 1;
            return;
        };
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        if self.seen.len() <= word {
            self.seen.resize(word + 1, 0);
        }
        if self.seen[word] & (1 << bit) != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen[word] |= 1 << bit;
        self.received += 1;
        if seq < self.max_seq {
            self.out_of_order += 1;
        }
        self.max_seq = self.max_seq.max(seq);
        self.spacing.on_arrival(k, seq, recv_ns);
        let raw = (i128::from(recv_ns) - i128::from(send_ns))
            .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        if self.raw.len() < MAX_SAMPLES {
            self.raw.push(raw);
        }
        let k = k as usize;
        if self.bursts.len() <= k {
            self.bursts.resize(k + 1, BurstAcc::default());
        }
        let b = &mut self.bursts[k];
        b.received = b.received.saturating_add(1);
        b.last_raw = Some(raw);
    }

    /// The stream's figures, given how many datagrams the sender sent (None when unknown, as
    /// after a failure: the highest sequence number seen stands in). With
    /// [`DelayBasis::OffsetEstimated`], `correction_ns` is subtracted from every raw delay
    /// (see [`crate::result::ClockOffset::correction_ns`]); the other bases ignore it. At most
    /// `exception_cap` per-burst records are kept.
    pub fn finish(
        &self,
        sent: Option<u64>,
        basis: DelayBasis,
        correction_ns: i64,
        exception_cap: usize,
    ) -> StreamResult {
        let sent = sent.unwrap_or(self.max_seq).max(self.max_seq);
        let burst_len = u64::from(self.schedule.burst_len());
        let bursts_sent = sent.div_ceil(burst_len).min(self.schedule.bursts());
        let offset = match basis {
            DelayBasis::Synced => 0,
            DelayBasis::AboveMinimum => self.raw.iter().copied().min().unwrap_or(0),
            DelayBasis::OffsetEstimated => correction_ns,
        };
        let late_ns = (self.spec.late_ms * 1e6) as i64;
        let to_ms = |raw: i64| (raw.saturating_sub(offset)) as f64 / 1e6;
        let late = self
            .raw
            .iter()
            .filter(|r| r.saturating_sub(offset) > late_ns)
            .count() as u64;
        let (mut complete, mut bursts_late) = (0, 0);
        let mut exceptions = Vec::new();
        let mut dropped = 0;
        for k in 0..bursts_sent {
            let acc = self.bursts.get(k as usize).copied().unwrap_or_default();
            let first = self.schedule.first_seq(k);
            let expected = (sent + 1 - first).min(burst_len) as u32;
            let whole = acc.received >= expected;
            let is_late = acc
                .last_raw
                .is_some_and(|r| r.saturating_sub(offset) > late_ns);
            complete += u64::from(whole);
            bursts_late += u64::from(is_late);
            if whole && !is_late {
                continue;
            }
            if exceptions.len() >= exception_cap {
                dropped += 1;
                continue;
            }
            exceptions.push(BurstRecord {
                index: k,
                at_s: self.schedule.due_ns(k) as f64 / 1e9,
                received: acc.received,
                expected,
                last_delay_ms: acc.last_raw.map(to_ms),
                late: is_late,
            });
        }
        StreamResult {
            id: self.id,
            name: self.spec.name.clone(),
            direction: self.spec.direction,
            size: self.spec.size,
            burst: self.spec.burst,
            gap_ms: self.schedule.gap_ns() as f64 / 1e6,
            period_ms: self.spec.period_ms,
            offset_ms: self.spec.offset_ms,
            late_ms: self.spec.late_ms,
            sent,
            received: self.received,
            lost: sent.saturating_sub(self.received),
            late,
            out_of_order: self.out_of_order,
            duplicates: self.duplicates,
            foreign: self.foreign,
            delay: delay_summary(&self.raw, offset, basis),
            burst_spacing_ms: self.spacing.mean_ms(),
            bursts_sent,
            bursts_complete: complete,
            bursts_late,
            exceptions,
            exceptions_dropped: dropped,
        }
    }
}

fn delay_summary(raw: &[i64], offset: i64, basis: DelayBasis) -> Option<DelaySummary> {
    if raw.is_empty() {
        return None;
    }
    let mut ms: Vec<f64> = raw
        .iter()
        .map(|r| r.saturating_sub(offset) as f64 / 1e6)
        .collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    Some(DelaySummary {
        basis,
        samples: ms.len() as u64,
        min_ms: ms[0],
        mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        max_ms: ms[ms.len() - 1],
        percentiles_ms: (0..=100).map(|p| at(f64::from(p) / 100.0)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Direction;

    fn spec() -> StreamSpec {
        StreamSpec {
            name: "bulk".into(),
            direction: Direction::ToServer,
            size: 800,
            burst: 4,
            gap: None,
            period_ms: 100.0,
            offset_ms: 0.0,
            duration_s: None,
            dscp: 0,
            late_ms: 10.0,
        }
    }

    const MS: u64 = 1_000_000;
    /// The receiver's clock is 5 s ahead of the sender's.
    const SKEW: u64 = 5_000 * MS;

    #[test]
    fn a_clean_stream_is_complete_and_on_time() {
        let mut r = StreamReceiver::new(1, &spec(), 1.0);
        for seq in 1..=40 {
            let send = (seq - 1) / 4 * 100 * MS;
            r.on_datagram(seq, send, send + SKEW + 2 * MS);
        }
        let res = r.finish(Some(40), DelayBasis::AboveMinimum, 0, 100);
        assert_eq!((res.sent, res.received, res.lost, res.late), (40, 40, 0, 0));
        assert_eq!((res.bursts_sent, res.bursts_complete), (10, 10));
        assert!(res.exceptions.is_empty());
        let d = res.delay.unwrap();
        assert_eq!((d.min_ms, d.max_ms, d.samples), (0.0, 0.0, 40));
        // With the clocks taken as synced the 5 s skew shows, and every datagram is late.
        let res = r.finish(Some(40), DelayBasis::Synced, 0, 100);
        assert_eq!(res.delay.unwrap().min_ms, 5002.0);
        assert_eq!(res.late, 40);
    }

    #[test]
    fn loss_reorder_duplicates_and_late_bursts_are_placed() {
        let mut r = StreamReceiver::new(1, &spec(), 1.0);
        // Burst 0 (1..=4) on time; burst 1 loses 7; burst 2 arrives 2 and 1 swapped...
        let mut arrivals: Vec<(u64, u64)> = vec![(1, 1), (2, 1), (3, 1), (4, 1)];
        arrivals.extend([(5, 1), (6, 1), (8, 1)]);
        arrivals.extend([(10, 1), (9, 1), (11, 1), (12, 1), (12, 1)]);
        // ... burst 3's last datagram waits 25 ms (later than 10 ms).
        arrivals.extend([(13, 1), (14, 1), (15, 1), (16, 25)]);
        for (seq, delay_ms) in arrivals {
            let send = (seq - 1) / 4 * 100 * MS;
            r.on_datagram(seq, send, send + delay_ms * MS);
        }
        // A peer's garbage: outside the plan (10 bursts of 4).
        r.on_datagram(41, 0, 0);
        r.on_datagram(u64::MAX, 0, 0);
        let res = r.finish(Some(16), DelayBasis::Synced, 0, 100);
        assert_eq!(res.received, 15);
        assert_eq!(res.lost, 1);
        assert_eq!(res.out_of_order, 1);
        assert_eq!(res.duplicates, 1);
        assert_eq!(res.foreign, 2);
        assert_eq!(res.late, 1);
        assert_eq!(
            (res.bursts_sent, res.bursts_complete, res.bursts_late),
            (4, 3, 1)
        );
        let ex: Vec<_> = res
            .exceptions
            .iter()
            .map(|b| (b.index, b.received, b.expected, b.late))
            .collect();
        assert_eq!(ex, [(1, 3, 4, false), (3, 4, 4, true)]);
        assert_eq!(res.exceptions[1].last_delay_ms, Some(25.0));
        assert_eq!(res.exceptions[1].at_s, 0.3);
        // The cap keeps the first and counts the rest.
        let capped = r.finish(Some(16), DelayBasis::Synced, 0, 1);
        assert_eq!((capped.exceptions.len(), capped.exceptions_dropped), (1, 1));
    }

    #[test]
    fn a_burst_lost_whole_and_a_cut_short_sender() {
        let mut r = StreamReceiver::new(1, &spec(), 1.0);
        for seq in (1..=4).chain(9..=10) {
            r.on_datagram(seq, 0, MS);
        }
        // The sender stopped after 10 datagrams: burst 2 expects only 2.
        let res = r.finish(Some(10), DelayBasis::Synced, 0, 100);
        assert_eq!((res.bursts_sent, res.bursts_complete), (3, 2));
        assert_eq!(res.exceptions[0].index, 1);
        assert_eq!(res.exceptions[0].received, 0);
        assert_eq!(res.exceptions[0].last_delay_ms, None);
        // Unknown sent count: the highest sequence seen stands in.
        assert_eq!(r.finish(None, DelayBasis::Synced, 0, 100).sent, 10);
    }

    #[test]
    fn the_spacing_inside_bursts_is_measured_per_step_of_the_plan() {
        let mut spaced = spec();
        spaced.gap = Some("2ms".into());
        let mut r = StreamReceiver::new(1, &spaced, 1.0);
        // Burst 0 arrives 2 ms apart; burst 1 loses 6 and 8 comes 3 ms after 5 (three steps),
        // then 7 (out of order: not a step); burst 2 has a single arrival (no pair).
        let arrivals = [(1, 0), (2, 2), (3, 4), (4, 6), (5, 100), (8, 103), (7, 104)];
        for (seq, at_ms) in arrivals.into_iter().chain([(9, 200)]) {
            r.on_datagram(seq, at_ms * MS, at_ms * MS);
        }
        let res = r.finish(Some(12), DelayBasis::Synced, 0, 100);
        assert_eq!(res.gap_ms, 2.0);
        // 1-2, 2-3, 3-4 (2 ms each), 5-8 (3 steps in 3 ms): 9 ms over 6 steps.
        assert_eq!(res.burst_spacing_ms, Some((6.0 + 3.0) / 6.0));
        // Nothing measured: a single datagram per burst.
        let mut r = StreamReceiver::new(1, &spec(), 1.0);
        r.on_datagram(1, 0, 0);
        r.on_datagram(5, 0, 0);
        let res = r.finish(Some(5), DelayBasis::Synced, 0, 100);
        assert_eq!((res.gap_ms, res.burst_spacing_ms), (0.0, None));
    }
}
