//! Interval rows of a latency run, by send time: a row counts the probes sent in its interval,
//! how many of them were answered, how many were not, and the RTTs of those answers.
//!
//! Counting replies by arrival time would make a row's "lost" meaningless (a reply can arrive
//! in the next interval), so a row stays open after its interval ends until every probe sent
//! in it is answered, or until a grace time passes; whatever is unanswered then is the row's
//! loss. A reply that arrives after its row was printed still counts in the summary (the
//! tracker's totals), only not in the row. At most a few rows are open at once: with a grace
//! of g and rows every r seconds, about g / r + 1.
//!
//! Calling order: [`IntervalSlicer::on_sent`] for each probe, [`IntervalSlicer::on_answer`]
//! for each first reply, [`IntervalSlicer::close`] at each interval boundary (and at the end
//! of probing), [`IntervalSlicer::pop_ready`] whenever convenient, and
//! [`IntervalSlicer::pop_closed`] at the end to flush every closed row.

use super::histogram::DelayAccumulator;
use super::model::LatencyInterval;
use std::collections::VecDeque;

/// One interval, open or closed, whose row has not been given out yet.
#[derive(Debug, Clone)]
struct Slice {
    start: f64,
    /// Set by [`IntervalSlicer::close`].
    end: Option<f64>,
    /// The first sequence number sent in this interval.
    first_seq: u64,
    sent: u64,
    received: u64,
    rtt: DelayAccumulator,
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct IntervalSlicer {
    /// Oldest first; the last one is the current interval (never closed).
    open: VecDeque<Slice>,
    /// Accumulators of rows given out, reset for reuse (each holds a histogram).
    spare: Vec<DelayAccumulator>,
    /// The next sequence number to be sent.
    next_seq: u64,
}

impl Default for IntervalSlicer {
    fn default() -> Self {
        Self::new()
    }
}

impl IntervalSlicer {
    /// The first interval starts at 0 s with sequence number 1.
    pub fn new() -> Self {
        let mut s = Self {
            open: VecDeque::new(),
            spare: Vec::new(),
            next_seq: 1,
        };
        s.open_slice(0.0);
        s
    }

    fn open_slice(&mut self, start: f64) {
        let rtt = self.spare.pop().unwrap_or_else(DelayAccumulator::absolute);
        self.open.push_back(Slice {
            start,
            end: None,
            first_seq: self.next_seq,
            sent: 0,
            received: 0,
            rtt,
        });
    }

    /// Probe `seq` left (sequence numbers in order).
    pub fn on_sent(&mut self, seq: u64) {
        self.next_seq = self.next_seq.max(seq + 1);
        if let Some(cur) = self.open.back_mut() {
            cur.sent += 1;
        }
    }

    /// The first reply to probe `seq`, with its RTT; false when that probe's row was already
    /// given out.
    pub fn on_answer(&mut self, seq: u64, rtt_ns: i64) -> bool {
        match self.open.iter_mut().rev().find(|s| s.first_seq <= seq) {
            Some(s) => {
                s.received += 1;
                s.rtt.record(rtt_ns);
                true
            }
            None => false,
        }
    }

    /// Ends the current interval at `end` (seconds since the start) and opens the next. An
    /// interval of no length with nothing sent is not closed (it would be an empty row).
    pub fn close(&mut self, end: f64) {
        let Some(cur) = self.open.back_mut() else {
            return;
        };
        if cur.sent == 0 && end - cur.start < 1e-9 {
            return;
        }
        cur.end = Some(end);
        self.open_slice(end);
    }

    /// The oldest closed row if every probe in it was answered or `grace` seconds passed since
    /// its end (`now`, seconds since the start).
    pub fn pop_ready(&mut self, now: f64, grace: f64) -> Option<LatencyInterval> {
        let front = self.open.front()?;
        let end = front.end?;
        if front.received >= front.sent || now >= end + grace {
            self.pop_front()
        } else {
            None
        }
    }

    /// The oldest closed row, answered or not (at the end of the run).
    pub fn pop_closed(&mut self) -> Option<LatencyInterval> {
        self.open.front()?.end?;
        self.pop_front()
    }

    fn pop_front(&mut self) -> Option<LatencyInterval> {
        let mut s = self.open.pop_front()?;
        let row = LatencyInterval {
            start: s.start,
            end: s.end.unwrap_or(s.start),
            sent: s.sent,
            received: s.received,
            lost: s.sent.saturating_sub(s.received),
            rtt: s.rtt.stats(0, false),
        };
        s.rtt.reset();
        self.spare.push(s.rtt);
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn rows_count_by_send_time_and_wait_for_answers() {
        let mut s = IntervalSlicer::new();
        s.on_sent(1);
        s.on_sent(2);
        assert!(s.on_answer(1, 2 * MS));
        s.close(1.0);
        s.on_sent(3);
        // Probe 2 is unanswered: its row waits (grace 0.5 s).
        assert_eq!(s.pop_ready(1.1, 0.5), None);
        // Its reply arrives in the next interval but counts in its own row.
        assert!(s.on_answer(2, 4 * MS));
        let row = s.pop_ready(1.1, 0.5).unwrap();
        assert_eq!((row.start, row.end), (0.0, 1.0));
        assert_eq!((row.sent, row.received, row.lost), (2, 2, 0));
        assert_eq!(row.rtt.unwrap().max_ms, 4.0);
        // The current interval is never given out before it is closed.
        assert_eq!(s.pop_ready(100.0, 0.5), None);
        assert_eq!(s.pop_closed(), None);
    }

    #[test]
    fn grace_turns_unanswered_into_lost_and_late_answers_miss_the_row() {
        let mut s = IntervalSlicer::new();
        s.on_sent(1);
        s.on_sent(2);
        assert!(s.on_answer(2, MS));
        s.close(1.0);
        assert_eq!(s.pop_ready(1.4, 0.5), None);
        let row = s.pop_ready(1.5, 0.5).unwrap();
        assert_eq!((row.sent, row.received, row.lost), (2, 1, 1));
        assert!(!s.on_answer(1, 900 * MS), "its row is already out");
    }

    #[test]
    fn empty_intervals_get_rows_and_a_zero_length_tail_does_not() {
        let mut s = IntervalSlicer::new();
        s.on_sent(1);
        assert!(s.on_answer(1, MS));
        s.close(1.0);
        s.close(2.0); // nothing sent in 1..2 s
        s.close(2.0); // the end of probing on a boundary: no empty row
        let a = s.pop_closed().unwrap();
        let b = s.pop_closed().unwrap();
        assert_eq!(
            (a.sent, b.sent, b.start, b.end, b.rtt),
            (1, 0, 1.0, 2.0, None)
        );
        assert_eq!(s.pop_closed(), None);
    }
}
