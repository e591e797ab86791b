//! The probe accountant: every figure of a latency run from sends and replies, with the times
//! as arguments.
//!
//! Calling order: [`ProbeTracker::on_sent`] for each probe as it leaves (sequence numbers 1, 2,
//! 3, ... in order), [`ProbeTracker::on_reply`] for each reply as it arrives (any order, any
//! number of copies), optionally [`ProbeTracker::on_server_count`] with the server's count of
//! requests received, [`ProbeTracker::close_interval`] at each interval boundary and at the end
//! of probing, [`ProbeTracker::pop_interval`] for the rows that are ready (see
//! [`super::intervals`]), and the summary figures (`loss`, `rtt`, ...) at the end.
//!
//! - Duplicates and reordering: a bitmap of the last [`SEQ_WINDOW`] sequence numbers tells a
//!   copy from a first arrival in constant memory; a reply older than the window is counted as
//!   stale (lost), never as a duplicate. A reply with a lower sequence than one already seen is
//!   reordered (RFC 4737's "reordered" singleton).
//! - IPDV (RFC 3393): the delay difference between consecutive sequence numbers both answered,
//!   for the RTT and each one-way direction (a constant clock offset cancels in differences).
//!   RFC 3550 §6.4.1 smoothed jitter of the RTT is kept too, as iperf3 users know it.
//! - Loss split: with the server's count, `lost_up = sent − server_received` and
//!   `lost_down = server_received − received`.
//! - One-way delays: see [`super::offset`].

use super::histogram::DelayAccumulator;
use super::intervals::IntervalSlicer;
use super::model::{
    DelayStats, IpdvStats, LatencyInterval, LossStats, OneWayBasis, OneWayStats, RoundTrip,
    ScheduleStats,
};
use super::offset::{estimate_offset, OffsetSample, Reservoir, RESERVOIR};
use crate::jitter::Jitter;

/// Sequence numbers remembered for duplicate detection.
pub const SEQ_WINDOW: u64 = 1 << 16;

/// The server's timestamps in a reply (ns, server clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerStamps {
    pub recv_ns: u64,
    pub send_ns: u64,
}

/// One reply as the client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub seq: u64,
    /// Client clock at send (ns).
    pub sent_ns: u64,
    /// Client clock at receive (ns).
    pub recv_ns: u64,
    pub server: Option<ServerStamps>,
}

/// What the tracker made of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// First copy; counted.
    Fresh,
    Duplicate,
    /// Older than the duplicate window.
    Stale,
    /// A sequence number never sent, or a receive time before the send time.
    Invalid,
}

/// Settings of the accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TrackerConfig {
    /// Replies later than this (ns) count as late.
    pub late_ns: Option<u64>,
    /// The user vouches that both clocks are synchronised.
    pub clock_synced: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Ipdv {
    pairs: u64,
    sum_abs: f64,
    max_abs: i64,
}

impl Ipdv {
    fn add(&mut self, d: i64) {
        self.pairs += 1;
        self.sum_abs += d.unsigned_abs() as f64;
        self.max_abs = self.max_abs.max(d.saturating_abs());
    }
    fn stats(&self) -> Option<IpdvStats> {
        (self.pairs > 0).then(|| IpdvStats {
            pairs: self.pairs,
            mean_abs_ms: self.sum_abs / self.pairs as f64 / 1e6,
            max_abs_ms: self.max_abs as f64 / 1e6,
        })
    }
}

/// The previous fresh reply: sequence, RTT and raw one-way (up, down) values, for IPDV.
type Last = (u64, i64, Option<(i64, i64)>);

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct ProbeTracker {
    cfg: TrackerConfig,
    sent: u64,
    received: u64,
    duplicates: u64,
    reordered: u64,
    late: u64,
    stale: u64,
    invalid: u64,
    max_seq_seen: u64,
    seen: Vec<u64>,
    server_count: Option<u64>,
    refused: u64,
    rtt: DelayAccumulator,
    up: DelayAccumulator,
    down: DelayAccumulator,
    turnaround_sum_ns: f64,
    turnaround_n: u64,
    jitter: Jitter,
    last: Option<Last>,
    ipdv: Ipdv,
    ipdv_up: Ipdv,
    ipdv_down: Ipdv,
    offsets: Reservoir<OffsetSample>,
    rtt_samples: Reservoir<i64>,
    rows: IntervalSlicer,
    last_round_trip: Option<RoundTrip>,
}

impl ProbeTracker {
    /// A tracker with nothing sent yet.
    pub fn new(cfg: TrackerConfig) -> Self {
        Self {
            cfg,
            sent: 0,
            received: 0,
            duplicates: 0,
            reordered: 0,
            late: 0,
            stale: 0,
            invalid: 0,
            max_seq_seen: 0,
            seen: vec![0; (SEQ_WINDOW / 64) as usize],
            server_count: None,
            refused: 0,
            rtt: DelayAccumulator::absolute(),
            up: DelayAccumulator::relative(),
            down: DelayAccumulator::relative(),
            turnaround_sum_ns: 0.0,
            turnaround_n: 0,
            jitter: Jitter::new(),
            last: None,
            ipdv: Ipdv::default(),
            ipdv_up: Ipdv::default(),
            ipdv_down: Ipdv::default(),
            offsets: Reservoir::new(RESERVOIR),
            rtt_samples: Reservoir::new(RESERVOIR),
            rows: IntervalSlicer::new(),
            last_round_trip: None,
        }
    }

    fn bit(seq: u64) -> (usize, u64) {
        let i = seq % SEQ_WINDOW;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    /// Records that probe `seq` left; it must be the next sequence number (1, 2, ...).
    pub fn on_sent(&mut self, seq: u64) {
        self.sent = self.sent.max(seq);
        self.rows.on_sent(seq);
        let (w, b) = Self::bit(seq);
        if let Some(word) = self.seen.get_mut(w) {
            *word &= !b;
        }
    }

    /// Probes sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Distinct probes answered so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Accounts one reply.
    pub fn on_reply(&mut self, r: &Reply) -> Verdict {
        if r.seq == 0 || r.seq > self.sent || r.recv_ns < r.sent_ns {
            self.invalid += 1;
            return Verdict::Invalid;
        }
        if self.sent - r.seq >= SEQ_WINDOW {
            self.stale += 1;
            return Verdict::Stale;
        }
        let (w, b) = Self::bit(r.seq);
        let Some(word) = self.seen.get_mut(w) else {
            return Verdict::Invalid;
        };
        if *word & b != 0 {
            self.duplicates += 1;
            return Verdict::Duplicate;
        }
        *word |= b;
        self.received += 1;
        if r.seq < self.max_seq_seen {
            self.reordered += 1;
        }
        self.max_seq_seen = self.max_seq_seen.max(r.seq);
        let mut rtt = r.recv_ns.saturating_sub(r.sent_ns) as i64;
        let mut one_way = None;
        if let Some(s) = r.server {
            let turnaround = s.send_ns.saturating_sub(s.recv_ns) as i64;
            if turnaround <= rtt {
                rtt -= turnaround;
                self.turnaround_sum_ns += turnaround as f64;
                self.turnaround_n += 1;
            }
            let up = (s.recv_ns as i128 - r.sent_ns as i128) as i64;
            let down = (r.recv_ns as i128 - s.send_ns as i128) as i64;
            self.up.record(up);
            self.down.record(down);
            self.offsets.push(OffsetSample::from_stamps(
                r.sent_ns, s.recv_ns, s.send_ns, r.recv_ns,
            ));
            one_way = Some((up, down));
        }
        if self.cfg.late_ns.is_some_and(|l| rtt as u64 > l) {
            self.late += 1;
        }
        self.rtt.record(rtt);
        self.rows.on_answer(r.seq, rtt);
        let measured = |v: i64| (self.cfg.clock_synced).then_some(v as f64 / 1e6);
        self.last_round_trip = Some(RoundTrip {
            seq: r.seq,
            sent_unix_ns: r.sent_ns,
            received_unix_ns: r.recv_ns,
            rtt_ms: rtt as f64 / 1e6,
            up_ms: one_way.and_then(|(u, _)| measured(u)),
            down_ms: one_way.and_then(|(_, d)| measured(d)),
        });
        self.rtt_samples.push(rtt);
        self.jitter.on_packet(r.sent_ns, r.sent_ns + rtt as u64);
        if let Some((pseq, prtt, pow)) = self.last {
            if r.seq == pseq + 1 {
                self.ipdv.add(rtt - prtt);
                if let (Some((u, d)), Some((pu, pd))) = (one_way, pow) {
                    self.ipdv_up.add(u - pu);
                    self.ipdv_down.add(d - pd);
                }
            }
        }
        self.last = Some((r.seq, rtt, one_way));
        Verdict::Fresh
    }

    /// The server's count of requests it received in this session (the largest one seen wins).
    /// The peer's host answered a probe with "port unreachable" (see [`LossStats::refused`]).
    pub fn on_refused(&mut self) {
        self.refused += 1;
    }

    pub fn on_server_count(&mut self, count: u64) {
        self.server_count = Some(self.server_count.map_or(count, |c| c.max(count)));
    }

    /// The last fresh reply as a per-probe record (set by each [`Verdict::Fresh`]).
    pub fn last_round_trip(&self) -> Option<&RoundTrip> {
        self.last_round_trip.as_ref()
    }

    /// Ends the current interval at `end` (seconds since the start); see
    /// [`IntervalSlicer::close`].
    pub fn close_interval(&mut self, end: f64) {
        self.rows.close(end);
    }

    /// The oldest closed interval row, when all its probes are answered or `grace` seconds
    /// passed since it ended; with `force`, any closed row (at the end of the run).
    pub fn pop_interval(&mut self, now: f64, grace: f64, force: bool) -> Option<LatencyInterval> {
        if force {
            self.rows.pop_closed()
        } else {
            self.rows.pop_ready(now, grace)
        }
    }

    /// A uniform sample (at most [`RESERVOIR`]) of the RTTs in ms, for plots and significance
    /// tests.
    pub fn rtt_sample_ms(&self) -> Vec<f64> {
        self.rtt_samples
            .items()
            .iter()
            .map(|&v| v as f64 / 1e6)
            .collect()
    }

    /// RTT distribution so far.
    pub fn rtt(&self) -> Option<DelayStats> {
        self.rtt.stats(0, false)
    }

    /// Every round trip so far, binned (None before the first).
    pub fn rtt_histogram(&self) -> Option<super::model::Histogram> {
        let bins = self.rtt.bins_ms();
        (!bins.is_empty()).then(|| super::model::Histogram {
            unit: "ms".into(),
            bins,
        })
    }

    /// RFC 3550 jitter of the RTT, ms.
    pub fn jitter_ms(&self) -> f64 {
        self.jitter.seconds() * 1e3
    }

    /// RFC 3393 IPDV of the RTT.
    pub fn ipdv(&self) -> Option<IpdvStats> {
        self.ipdv.stats()
    }

    /// Mean server turnaround, µs.
    pub fn turnaround_us(&self) -> Option<f64> {
        (self.turnaround_n > 0).then(|| self.turnaround_sum_ns / self.turnaround_n as f64 / 1e3)
    }

    /// Loss, duplicates, reordering and lateness. Probes still in flight count as lost, so
    /// call this after waiting for the last replies.
    pub fn loss(&self) -> LossStats {
        let lost = self.sent.saturating_sub(self.received);
        let pct = |n: u64| {
            if self.sent == 0 {
                0.0
            } else {
                n as f64 * 100.0 / self.sent as f64
            }
        };
        let server = self
            .server_count
            .map(|c| c.min(self.sent).max(self.received));
        LossStats {
            sent: self.sent,
            received: self.received,
            lost,
            loss_percent: pct(lost),
            lost_up: server.map(|c| self.sent - c),
            lost_down: server.map(|c| c - self.received),
            server_received: self.server_count,
            duplicates: self.duplicates,
            reordered: self.reordered,
            late: self.late,
            late_percent: pct(self.late),
            // The answers to probes only: a late count query's refusal is no lost probe.
            refused: self.refused.min(lost),
        }
    }

    /// One-way delays: measured with `clock_synced`, else estimated; None without server
    /// timestamps.
    pub fn one_way(&self) -> Option<OneWayStats> {
        if self.up.count() == 0 {
            return None;
        }
        let ipdv_up = self.ipdv_up.stats();
        let ipdv_down = self.ipdv_down.stats();
        if self.cfg.clock_synced {
            let neg = self.up.min_ns().unwrap_or(0) < 0 || self.down.min_ns().unwrap_or(0) < 0;
            let (basis, up, down, note) = if neg {
                (
                    OneWayBasis::Invalid,
                    None,
                    None,
                    Some(format!(
                        "--clock-synced was given but one-way delays came out negative (min up {:.3} ms, min down {:.3} ms): the clocks are not synchronised; one-way figures withheld",
                        self.up.min_ns().unwrap_or(0) as f64 / 1e6,
                        self.down.min_ns().unwrap_or(0) as f64 / 1e6
                    )),
                )
            } else {
                (
                    OneWayBasis::Measured,
                    self.up.stats(0, false),
                    self.down.stats(0, false),
                    None,
                )
            };
            return Some(OneWayStats {
                basis,
                clock_offset_ms: None,
                method: "clocks synchronised (user's word, --clock-synced)".into(),
                up,
                down,
                ipdv_up,
                ipdv_down,
                note,
            });
        }
        let theta = estimate_offset(self.offsets.items())?;
        Some(OneWayStats {
            basis: OneWayBasis::Estimated,
            clock_offset_ms: Some(theta as f64 / 1e6),
            method: format!(
                "estimated: clock offset = median NTP offset of the fastest third of {} probes, assuming a symmetric path",
                self.offsets.items().len()
            ),
            up: self.up.stats(theta.saturating_neg(), true),
            down: self.down.stats(theta, true),
            ipdv_up,
            ipdv_down,
            note: Some("one-way figures are estimates (clocks not known to be synchronised); individual estimates below 0 are shown as 0".into()),
        })
    }
}

/// Send-time error against an isochronous schedule.
#[derive(Debug, Clone)]
pub struct ScheduleTracker {
    interval_ns: u64,
    err: DelayAccumulator,
}

impl ScheduleTracker {
    /// For a schedule of one probe every `interval_ns`.
    pub fn new(interval_ns: u64) -> Self {
        Self {
            interval_ns,
            err: DelayAccumulator::absolute(),
        }
    }

    /// One send: when it was due and when it happened (ns, same clock).
    pub fn on_send(&mut self, due_ns: u64, actual_ns: u64) {
        self.err.record(actual_ns.abs_diff(due_ns) as i64);
    }

    /// The figures so far; None before any send.
    pub fn stats(&self) -> Option<ScheduleStats> {
        let mean = self.err.mean_ns()?;
        Some(ScheduleStats {
            interval_ms: self.interval_ns as f64 / 1e6,
            mean_error_us: mean / 1e3,
            p99_error_us: self.err.quantile_ns(0.99).unwrap_or(0) as f64 / 1e3,
            max_error_us: self.err.max_ns().unwrap_or(0) as f64 / 1e3,
            error_percent: if self.interval_ns == 0 {
                0.0
            } else {
                mean * 100.0 / self.interval_ns as f64
            },
        })
    }
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tests;
