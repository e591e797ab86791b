//! The peer's receive figures rebuilt from its live interval reports, for a test that ended
//! before the peer's results arrived (Ctrl-C during an upload, the peer gone).
//!
//! The server streams each interval's receiver figures while the test runs. Summed, they are
//! what it had received up to its last report: bytes, and for UDP datagrams expected, lost,
//! out of order and duplicated, with the last interval's jitter. That is a measured lower
//! bound of the receive side, better than no receive side at all; the summary that uses it
//! is still marked partial.

use crate::model::{EndView, IntervalReport, StreamRole, UdpReceiveStats};
use std::collections::BTreeMap;

/// Receiver totals per stream id, from the peer's live reports. Omitted intervals (`-O`) are
/// left out, as in a final summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveTotals {
    streams: BTreeMap<u32, EndView>,
}

impl LiveTotals {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one live interval report of the peer.
    pub fn add(&mut self, r: &IntervalReport) {
        for s in r
            .streams
            .iter()
            .filter(|s| s.role == StreamRole::Receiver && !s.omitted)
        {
            let v = self.streams.entry(s.id).or_insert_with(|| EndView {
                start: s.start,
                end: s.start,
                bytes: 0,
                bits_per_second: 0.0,
                tcp: None,
                udp_sent_packets: None,
                udp_received: None,
            });
            v.start = v.start.min(s.start);
            v.end = v.end.max(s.end);
            v.bytes += s.bytes;
            let span = v.end - v.start;
            v.bits_per_second = if span > 0.0 {
                v.bytes as f64 * 8.0 / span
            } else {
                0.0
            };
            if let Some(u) = &s.udp_received {
                let t = v.udp_received.get_or_insert(UdpReceiveStats {
                    packets: 0,
                    lost: 0,
                    lost_percent: 0.0,
                    jitter_ms: 0.0,
                    out_of_order: 0,
                    duplicates: 0,
                });
                t.packets += u.packets;
                t.lost += u.lost;
                t.out_of_order += u.out_of_order;
                t.duplicates += u.duplicates;
                t.jitter_ms = u.jitter_ms;
                t.lost_percent = if t.packets > 0 {
                    100.0 * t.lost as f64 / t.packets as f64
                } else {
                    0.0
                };
            }
        }
    }

    /// True when no receiver figure arrived.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// Each stream's receive totals so far, by stream id.
    pub fn views(&self) -> impl Iterator<Item = (u32, &EndView)> {
        self.streams.iter().map(|(id, v)| (*id, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StreamSample;

    fn sample(role: StreamRole, start: f64, bytes: u64, lost: u64, omitted: bool) -> StreamSample {
        StreamSample {
            id: 1,
            role,
            start,
            end: start + 1.0,
            bytes,
            bits_per_second: bytes as f64 * 8.0,
            omitted,
            tcp: None,
            udp_sent_packets: None,
            udp_received: Some(UdpReceiveStats {
                packets: 100,
                lost,
                lost_percent: lost as f64,
                jitter_ms: start,
                out_of_order: 1,
                duplicates: 0,
            }),
        }
    }

    fn report(streams: Vec<StreamSample>) -> IntervalReport {
        IntervalReport {
            streams,
            sums: Vec::new(),
        }
    }

    #[test]
    fn sums_receiver_intervals_and_keeps_the_last_jitter() {
        let mut t = LiveTotals::new();
        assert!(t.is_empty());
        t.add(&report(vec![sample(
            StreamRole::Receiver,
            0.0,
            1000,
            0,
            true,
        )]));
        t.add(&report(vec![sample(
            StreamRole::Receiver,
            1.0,
            1000,
            2,
            false,
        )]));
        t.add(&report(vec![
            sample(StreamRole::Receiver, 2.0, 3000, 4, false),
            sample(StreamRole::Sender, 2.0, 99_999, 0, false),
        ]));
        let views: Vec<(u32, &EndView)> = t.views().collect();
        assert_eq!(views.len(), 1);
        let (id, v) = views[0];
        assert_eq!(id, 1);
        assert_eq!((v.start, v.end, v.bytes), (1.0, 3.0, 4000));
        assert_eq!(v.bits_per_second, 16_000.0);
        let u = v.udp_received.expect("udp figures");
        assert_eq!((u.packets, u.lost, u.out_of_order), (200, 6, 2));
        assert_eq!(u.lost_percent, 3.0);
        assert_eq!(u.jitter_ms, 2.0);
    }
}
