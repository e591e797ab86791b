//! UDP figures of `sonde stress -u`: what each flow sent and got back, and for echo the
//! loss, duplicates, reordering and round-trip times of numbered datagrams.
//!
//! UDP echo and chargen servers answer at most one datagram per request (RFC 862, RFC 864),
//! and careful servers cap how many replies each source address gets per second (sonde's own
//! services do, to avoid being a reflector). From the client's side a cap looks like this:
//! requests keep going out at the offered rate while replies, summed over every flow from this
//! address, level off at a steady rate well below it. [`reply_cap`] judges that from the
//! per-interval counts; it cannot tell a cap from a path that drops the same share, so the
//! report says "looks capped", not "capped". Time is an argument everywhere.

use crate::latency::histogram::DelayAccumulator;
use crate::latency::model::DelayStats;
use serde::{Deserialize, Serialize};

/// Sequence numbers a flow remembers for duplicate detection (older replies are still counted
/// as received once, but can no longer be told apart from a duplicate: see `too_old`).
pub const SEEN_WINDOW: u64 = 1 << 16;

/// Per flow: which numbered echo replies came back, and in what order.
///
/// Calling order: [`EchoLedger::sent`] for every request, [`EchoLedger::received`] for every
/// reply with the sequence number it carries, then [`EchoLedger::summary`]. Round-trip times
/// are kept over the whole run by the caller ([`Reply::counts`] says which replies count).
#[derive(Debug, Clone)]
pub struct EchoLedger {
    sent: u64,
    unique: u64,
    duplicates: u64,
    reordered: u64,
    too_old: u64,
    unknown: u64,
    highest: Option<u64>,
    /// Bit `seq % SEEN_WINDOW` set when `seq` came back (only for `seq` within the window
    /// below `highest`).
    seen: Vec<u64>,
}

/// What one reply was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// First copy, in order.
    InOrder,
    /// First copy, but a later request's reply came first.
    Reordered,
    /// A copy of a reply already counted.
    Duplicate,
    /// A sequence number never sent (a corrupted or foreign datagram).
    Unknown,
    /// Older than the window: counted once, not checked for duplicates.
    TooOld,
}

impl Default for EchoLedger {
    fn default() -> Self {
        Self::new()
    }
}

impl EchoLedger {
    pub fn new() -> Self {
        Self {
            sent: 0,
            unique: 0,
            duplicates: 0,
            reordered: 0,
            too_old: 0,
            unknown: 0,
            highest: None,
            seen: vec![0; (SEEN_WINDOW / 64) as usize],
        }
    }

    /// The next request's sequence number (they run 0, 1, 2, ...); counts it as sent.
    pub fn sent(&mut self) -> u64 {
        self.sent += 1;
        self.sent - 1
    }

    fn bit(&mut self, seq: u64) -> (usize, u64) {
        let i = seq % SEEN_WINDOW;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    /// A reply carrying `seq`.
    pub fn received(&mut self, seq: u64) -> Reply {
        if seq >= self.sent {
            self.unknown += 1;
            return Reply::Unknown;
        }
        let highest = self.highest.unwrap_or(0);
        if self.highest.is_some() && seq + SEEN_WINDOW <= highest {
            self.too_old += 1;
            self.unique += 1;
            self.reordered += 1;
            return Reply::TooOld;
        }
        if self.highest.is_none_or(|h| seq > h) {
            // Forget the slots the window slides past.
            let from = self.highest.map_or(0, |h| h + 1);
            let span = (seq + 1 - from).min(SEEN_WINDOW);
            for s in (seq + 1 - span)..=seq {
                let (w, b) = self.bit(s);
                if let Some(x) = self.seen.get_mut(w) {
                    *x &= !b;
                }
            }
            self.highest = Some(seq);
        }
        let (w, b) = self.bit(seq);
        let Some(word) = self.seen.get_mut(w) else {
            return Reply::Unknown;
        };
        if *word & b != 0 {
            self.duplicates += 1;
            return Reply::Duplicate;
        }
        *word |= b;
        self.unique += 1;
        if seq < highest {
            self.reordered += 1;
            Reply::Reordered
        } else {
            Reply::InOrder
        }
    }

    /// Requests sent so far.
    pub fn sent_count(&self) -> u64 {
        self.sent
    }

    /// The flow's echo figures (no round-trip times: see the type's documentation).
    pub fn summary(&self) -> EchoFigures {
        EchoFigures {
            sent: self.sent,
            received: self.unique,
            lost: self.sent.saturating_sub(self.unique),
            duplicates: self.duplicates,
            reordered: self.reordered,
            unknown: self.unknown,
            rtt: None,
        }
    }
}

impl Reply {
    /// A first copy of a reply: its round trip counts.
    pub fn counts(self) -> bool {
        matches!(self, Self::InOrder | Self::Reordered | Self::TooOld)
    }
}

impl EchoFigures {
    /// Adds another flow's counts (not the round-trip times).
    pub fn add(&mut self, o: &EchoFigures) {
        self.sent += o.sent;
        self.received += o.received;
        self.lost += o.lost;
        self.duplicates += o.duplicates;
        self.reordered += o.reordered;
        self.unknown += o.unknown;
    }
}

/// Round-trip times over a whole run, in constant memory.
#[derive(Debug, Clone)]
pub struct RttAccumulator(DelayAccumulator);

impl Default for RttAccumulator {
    fn default() -> Self {
        Self(DelayAccumulator::absolute())
    }
}

impl RttAccumulator {
    pub fn record(&mut self, rtt_ns: i64) {
        self.0.record(rtt_ns.max(0));
    }

    /// Percentiles, `None` before the first sample.
    pub fn stats(&self) -> Option<DelayStats> {
        self.0.stats(0, true)
    }
}

/// Echo over UDP: numbered requests and their replies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EchoFigures {
    pub sent: u64,
    /// Distinct requests answered.
    pub received: u64,
    /// Requests never answered (before the end of the wait after the last one).
    pub lost: u64,
    /// Extra copies of replies already counted.
    pub duplicates: u64,
    /// Replies that came after a reply to a later request.
    pub reordered: u64,
    /// Datagrams that were not a reply to any request of this flow.
    pub unknown: u64,
    /// Round-trip times of the distinct replies.
    pub rtt: Option<DelayStats>,
}

/// The UDP part of a stress summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpSummary {
    /// Payload bytes per request datagram.
    pub datagram_bytes: u64,
    /// The offered rate over every flow (bits/s of request payload).
    pub offered_bps: f64,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Sends the local host refused (buffer full, ICMP port unreachable reported back).
    pub send_errors: u64,
    /// The first send error, as the OS said it.
    pub first_send_error: Option<String>,
    /// Echo only, over every flow.
    pub echo: Option<EchoFigures>,
    /// Echo and chargen: replies per second the server seemed to allow this source, when
    /// replies levelled off well below requests (see [`reply_cap`]).
    pub reply_cap_per_sec: Option<f64>,
    /// Echo and chargen: replies stopped altogether while requests went on (from this time on,
    /// seconds since the start).
    pub replies_stopped_at: Option<f64>,
    /// The longest reply's payload bytes (0: none came back).
    #[serde(default)]
    pub largest_reply_bytes: u64,
    /// Replies longer than the request that asked for them: the server amplifies (RFC 864
    /// allows chargen replies of up to 512 characters whatever the request; sonde's services
    /// never answer with more than they were sent).
    #[serde(default)]
    pub oversized_replies: u64,
}

/// One interval's request and reply datagram counts over every flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DatagramInterval {
    pub seconds: f64,
    pub requests: u64,
    pub replies: u64,
}

/// The reply rate the server seems to cap this source at, if replies levelled off.
///
/// Judged on the intervals after the first (a token bucket lets an initial burst through):
/// replies answered fewer than 90 % of requests overall, and the per-interval reply rates vary
/// by less than 20 % of their mean while requests were sent in every one of them.
pub fn reply_cap(iv: &[DatagramInterval]) -> Option<f64> {
    let tail: Vec<&DatagramInterval> = iv.iter().skip(1).filter(|i| i.seconds > 0.0).collect();
    if tail.len() < 2 || tail.iter().any(|i| i.requests == 0) {
        return None;
    }
    let req: u64 = tail.iter().map(|i| i.requests).sum();
    let rep: u64 = tail.iter().map(|i| i.replies).sum();
    if rep == 0 || rep as f64 >= 0.9 * req as f64 {
        return None;
    }
    let rates: Vec<f64> = tail.iter().map(|i| i.replies as f64 / i.seconds).collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len() as f64;
    (var.sqrt() <= 0.2 * mean).then_some(mean)
}

/// When replies stopped for good while requests went on: the start of the first interval of
/// a trailing run of at least two intervals with requests and no reply, after some replies.
pub fn replies_stopped(iv: &[DatagramInterval]) -> Option<f64> {
    let answered = iv.iter().rposition(|i| i.replies > 0)?;
    let silent = iv.get(answered + 1..)?;
    if silent.len() < 2 || silent.iter().any(|i| i.requests == 0) {
        return None;
    }
    Some(iv.iter().take(answered + 1).map(|i| i.seconds).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_counts_loss_reorder_and_duplicates() {
        let mut l = EchoLedger::new();
        for _ in 0..5 {
            l.sent();
        }
        let mut rtt = RttAccumulator::default();
        for (seq, ms, want) in [
            (0, 1, Reply::InOrder),
            (2, 3, Reply::InOrder),
            (1, 2, Reply::Reordered),
            (2, 3, Reply::Duplicate),
            (9, 0, Reply::Unknown),
        ] {
            let r = l.received(seq);
            assert_eq!(r, want);
            if r.counts() {
                rtt.record(ms * 1_000_000);
            }
        }
        let s = l.summary();
        assert_eq!((s.sent, s.received, s.lost), (5, 3, 2));
        assert_eq!((s.duplicates, s.reordered, s.unknown), (1, 1, 1));
        let rtt = rtt.stats().unwrap();
        assert_eq!(rtt.samples, 3);
        assert!((rtt.median_ms - 2.0).abs() < 0.01, "{rtt:?}");
    }

    #[test]
    fn window_slides_and_old_replies_count_once() {
        let mut l = EchoLedger::new();
        let n = SEEN_WINDOW * 2 + 10;
        for _ in 0..n {
            l.sent();
        }
        // Replies far apart: the slot of seq 0 is reused by SEEN_WINDOW, not a duplicate.
        assert_eq!(l.received(0), Reply::InOrder);
        assert_eq!(l.received(SEEN_WINDOW), Reply::InOrder);
        assert_eq!(l.received(2 * SEEN_WINDOW), Reply::InOrder);
        assert_eq!(l.received(5), Reply::TooOld);
        assert_eq!(l.received(2 * SEEN_WINDOW), Reply::Duplicate);
        assert_eq!(l.summary().received, 4);
    }

    fn iv(requests: u64, replies: u64) -> DatagramInterval {
        DatagramInterval {
            seconds: 0.5,
            requests,
            replies,
        }
    }

    #[test]
    fn a_flat_reply_rate_below_requests_is_a_cap() {
        // 4000 requests/s, replies level at 1000/s after a first burst.
        let v = [iv(2000, 1500), iv(2000, 500), iv(2000, 510), iv(2000, 495)];
        let cap = reply_cap(&v).unwrap();
        assert!((cap - 1003.0).abs() < 5.0, "{cap}");
        // Everything answered: no cap.
        assert_eq!(reply_cap(&[iv(10, 10), iv(10, 10), iv(10, 10)]), None);
        // Replies all over the place: a lossy path, not a cap.
        assert_eq!(reply_cap(&[iv(10, 1), iv(100, 10), iv(100, 70)]), None);
    }

    #[test]
    fn replies_that_stop_are_dated() {
        let v = [iv(10, 10), iv(10, 4), iv(10, 0), iv(10, 0)];
        assert_eq!(replies_stopped(&v), Some(1.0));
        assert_eq!(replies_stopped(&[iv(10, 10), iv(10, 0)]), None);
        assert_eq!(replies_stopped(&[iv(10, 0), iv(10, 0), iv(10, 0)]), None);
    }
}
