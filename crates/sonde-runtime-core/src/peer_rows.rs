//! The order of the far end's live interval rows among this end's: the server's row of an
//! interval is shown right after the client's row of the same interval, never before it. The
//! two ends cut on one clock (the server's starts at the client's Start), but either may be a
//! little late on a busy host, so the client holds back a server row until its own row of that
//! span is out. Pure: reports in, reports out.

use sonde_stats::model::IntervalReport;

/// Slack when comparing interval ends cut on two hosts' clocks (seconds).
const SAME_END: f64 = 0.05;

/// Holds the far end's rows until this end has shown its own row of the same span.
#[derive(Debug, Default)]
pub struct PeerRowOrder {
    /// End (test seconds) of the last interval this end showed.
    shown_until: f64,
    held: Vec<IntervalReport>,
}

impl PeerRowOrder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A row of the far end arrived: the rows to show now (it, or none while held).
    pub fn peer(&mut self, r: IntervalReport) -> Vec<IntervalReport> {
        if end_of(&r) <= self.shown_until + SAME_END {
            vec![r]
        } else {
            self.held.push(r);
            Vec::new()
        }
    }

    /// This end showed its row ending at `end`: the far end's rows that may follow it.
    pub fn local(&mut self, end: f64) -> Vec<IntervalReport> {
        self.shown_until = self.shown_until.max(end);
        let limit = self.shown_until + SAME_END;
        let (now, later) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|r| end_of(r) <= limit);
        self.held = later;
        now
    }

    /// The test is over: every row still held, in order.
    pub fn finish(&mut self) -> Vec<IntervalReport> {
        std::mem::take(&mut self.held)
    }
}

/// Where a report ends: its streams' or sums' end.
fn end_of(r: &IntervalReport) -> f64 {
    r.streams
        .iter()
        .map(|s| s.end)
        .chain(r.sums.iter().map(|s| s.end))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::model::{StreamRole, StreamSample};

    fn report(start: f64, end: f64) -> IntervalReport {
        IntervalReport {
            streams: vec![StreamSample {
                id: 1,
                role: StreamRole::Receiver,
                start,
                end,
                bytes: 0,
                bits_per_second: 0.0,
                omitted: false,
                tcp: None,
                udp_sent_packets: None,
                udp_received: None,
            }],
            sums: Vec::new(),
        }
    }

    fn ends(v: &[IntervalReport]) -> Vec<f64> {
        v.iter().map(end_of).collect()
    }

    #[test]
    fn a_server_row_that_comes_early_waits_for_the_clients_row() {
        let mut o = PeerRowOrder::new();
        assert!(o.peer(report(0.0, 1.0)).is_empty());
        assert_eq!(ends(&o.local(1.0)), vec![1.0]);
        // On time: shown at once.
        assert_eq!(ends(&o.peer(report(0.0, 1.0))), vec![1.0]);
        // Two early ones, released one per client row.
        assert!(o.peer(report(1.0, 2.0)).is_empty());
        assert!(o.peer(report(2.0, 3.0)).is_empty());
        assert_eq!(ends(&o.local(2.0)), vec![2.0]);
        assert_eq!(ends(&o.local(3.0)), vec![3.0]);
    }

    #[test]
    fn a_server_clock_a_little_behind_counts_as_the_same_interval() {
        let mut o = PeerRowOrder::new();
        o.local(1.0);
        assert_eq!(ends(&o.peer(report(0.0, 1.02))), vec![1.02]);
    }

    #[test]
    fn rows_still_held_at_the_end_all_come_out() {
        let mut o = PeerRowOrder::new();
        o.local(1.0);
        assert!(o.peer(report(1.0, 1.7)).is_empty());
        assert_eq!(ends(&o.finish()), vec![1.7]);
        assert!(o.finish().is_empty());
    }
}
