//! Sums over parallel streams (`-P`), as iperf3's `[SUM]` lines and `sum_*` sections.
//!
//! Byte and packet counts add up; the rate is recomputed from the summed bytes over the covered
//! span; UDP loss percent is recomputed from the summed counts and jitter is the mean over
//! streams, as iperf3 does.

use crate::interval::bits_per_second;
use crate::model::{
    EndView, StreamRole, StreamSample, SumSample, TcpSenderSummary, UdpReceiveStats,
};
use crate::udp_rx::lost_percent;

/// Sums `samples` of the given `role` (samples of the other role are skipped).
///
/// Returns `None` when no sample has that role. The span runs from the earliest start to the
/// latest end; the sum is omitted only when every stream's sample is.
pub fn sum_streams(role: StreamRole, samples: &[&StreamSample]) -> Option<SumSample> {
    let mine: Vec<&StreamSample> = samples.iter().copied().filter(|s| s.role == role).collect();
    let first = mine.first()?;
    let start = mine.iter().map(|s| s.start).fold(first.start, f64::min);
    let end = mine.iter().map(|s| s.end).fold(first.end, f64::max);
    let bytes = mine.iter().fold(0u64, |acc, s| acc.saturating_add(s.bytes));
    let retransmits = sum_options(mine.iter().map(|s| s.tcp.map(|t| t.retransmits)));
    Some(SumSample {
        role,
        start,
        end,
        bytes,
        bits_per_second: bits_per_second(bytes, end - start),
        omitted: mine.iter().all(|s| s.omitted),
        retransmits,
        udp_sent_packets: sum_options(mine.iter().map(|s| s.udp_sent_packets)),
        udp_received: sum_udp(mine.iter().filter_map(|s| s.udp_received.as_ref())),
    })
}

/// Sums whole-test views of several streams (one end's view each).
///
/// Returns `None` when `views` is empty. TCP figures: retransmits summed, the largest window and
/// RTT, the smallest RTT and the mean of the mean RTTs, over the views that have RTT figures.
pub fn sum_end_views(views: &[&EndView]) -> Option<EndView> {
    let first = views.first()?;
    let start = views.iter().map(|v| v.start).fold(first.start, f64::min);
    let end = views.iter().map(|v| v.end).fold(first.end, f64::max);
    let bytes = views
        .iter()
        .fold(0u64, |acc, v| acc.saturating_add(v.bytes));
    Some(EndView {
        start,
        end,
        bytes,
        bits_per_second: bits_per_second(bytes, end - start),
        tcp: sum_tcp(views.iter().filter_map(|v| v.tcp.as_ref())),
        udp_sent_packets: sum_options(views.iter().map(|v| v.udp_sent_packets)),
        udp_received: sum_udp(views.iter().filter_map(|v| v.udp_received.as_ref())),
    })
}

/// The sum of the present values, or `None` when none is present.
fn sum_options(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    values.flatten().fold(None, |acc: Option<u64>, v| {
        Some(acc.unwrap_or(0).saturating_add(v))
    })
}

fn sum_udp<'a>(stats: impl Iterator<Item = &'a UdpReceiveStats>) -> Option<UdpReceiveStats> {
    let mut sum = UdpReceiveStats::default();
    let mut count = 0u32;
    for s in stats {
        sum.packets = sum.packets.saturating_add(s.packets);
        sum.lost = sum.lost.saturating_add(s.lost);
        sum.out_of_order = sum.out_of_order.saturating_add(s.out_of_order);
        sum.duplicates = sum.duplicates.saturating_add(s.duplicates);
        sum.jitter_ms += s.jitter_ms;
        count += 1;
    }
    if count == 0 {
        return None;
    }
    sum.jitter_ms /= f64::from(count);
    sum.lost_percent = lost_percent(sum.lost, sum.packets);
    Some(sum)
}

fn sum_tcp<'a>(tcp: impl Iterator<Item = &'a TcpSenderSummary>) -> Option<TcpSenderSummary> {
    let mut sum: Option<TcpSenderSummary> = None;
    let (mut mean_sum, mut rtt_views) = (0u64, 0u64);
    for t in tcp {
        let s = sum.get_or_insert_with(TcpSenderSummary::default);
        s.retransmits = s.retransmits.saturating_add(t.retransmits);
        s.max_snd_cwnd = s.max_snd_cwnd.max(t.max_snd_cwnd);
        if t.max_rtt_us == 0 {
            continue; // no RTT figures in this view
        }
        s.max_rtt_us = s.max_rtt_us.max(t.max_rtt_us);
        s.min_rtt_us = if rtt_views == 0 {
            t.min_rtt_us
        } else {
            s.min_rtt_us.min(t.min_rtt_us)
        };
        mean_sum += u64::from(t.mean_rtt_us);
        rtt_views += 1;
    }
    let mut s = sum?;
    if let Some(mean) = (mean_sum + rtt_views / 2).checked_div(rtt_views) {
        s.mean_rtt_us = u32::try_from(mean).unwrap_or(u32::MAX);
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TcpInfoSample;

    fn sample(id: u32, role: StreamRole, start: f64, end: f64, bytes: u64) -> StreamSample {
        StreamSample {
            id,
            role,
            start,
            end,
            bytes,
            bits_per_second: bits_per_second(bytes, end - start),
            omitted: false,
            tcp: None,
            udp_sent_packets: None,
            udp_received: None,
        }
    }

    fn udp(packets: u64, lost: u64, jitter_ms: f64, ooo: u64, dup: u64) -> UdpReceiveStats {
        UdpReceiveStats {
            packets,
            lost,
            lost_percent: lost_percent(lost, packets),
            jitter_ms,
            out_of_order: ooo,
            duplicates: dup,
        }
    }

    fn view(start: f64, end: f64, bytes: u64) -> EndView {
        EndView {
            start,
            end,
            bytes,
            bits_per_second: bits_per_second(bytes, end - start),
            tcp: None,
            udp_sent_packets: None,
            udp_received: None,
        }
    }

    fn tcp(retransmits: u64, cwnd: u64, min: u32, max: u32, mean: u32) -> TcpSenderSummary {
        TcpSenderSummary {
            retransmits,
            max_snd_cwnd: cwnd,
            max_rtt_us: max,
            min_rtt_us: min,
            mean_rtt_us: mean,
            ..TcpSenderSummary::default()
        }
    }

    #[test]
    fn empty_gives_none() {
        assert_eq!(sum_streams(StreamRole::Sender, &[]), None);
        let r = sample(1, StreamRole::Receiver, 0.0, 1.0, 10);
        assert_eq!(sum_streams(StreamRole::Sender, &[&r]), None);
        assert_eq!(sum_end_views(&[]), None);
    }

    #[test]
    fn tcp_senders_sum() {
        let mut a = sample(1, StreamRole::Sender, 0.0, 1.0, 1_000_000);
        let mut b = sample(2, StreamRole::Sender, 0.0, 1.0, 500_000);
        let other = sample(3, StreamRole::Receiver, 0.0, 1.0, 7);
        a.tcp = Some(TcpInfoSample {
            retransmits: 3,
            ..TcpInfoSample::default()
        });
        b.tcp = Some(TcpInfoSample {
            retransmits: 4,
            ..TcpInfoSample::default()
        });
        b.omitted = true;
        let s = sum_streams(StreamRole::Sender, &[&a, &other, &b]).unwrap();
        assert_eq!(s.role, StreamRole::Sender);
        assert_eq!((s.start, s.end, s.bytes), (0.0, 1.0, 1_500_000));
        assert_eq!(s.bits_per_second, 12_000_000.0);
        assert_eq!(s.retransmits, Some(7));
        assert!(!s.omitted);
        assert_eq!((s.udp_sent_packets, s.udp_received), (None, None));
    }

    #[test]
    fn span_and_omitted() {
        let mut a = sample(1, StreamRole::Receiver, 0.5, 1.5, 100);
        let mut b = sample(2, StreamRole::Receiver, 1.0, 2.5, 150);
        a.omitted = true;
        b.omitted = true;
        let s = sum_streams(StreamRole::Receiver, &[&a, &b]).unwrap();
        assert_eq!((s.start, s.end, s.bytes), (0.5, 2.5, 250));
        assert_eq!(s.bits_per_second, 1000.0);
        assert!(s.omitted);
        assert_eq!(s.retransmits, None);
    }

    #[test]
    fn udp_streams_sum() {
        let mut a = sample(1, StreamRole::Receiver, 0.0, 1.0, 10);
        let mut b = sample(2, StreamRole::Receiver, 0.0, 1.0, 10);
        a.udp_received = Some(udp(100, 10, 1.0, 2, 1));
        b.udp_received = Some(udp(300, 10, 3.0, 0, 4));
        let s = sum_streams(StreamRole::Receiver, &[&a, &b]).unwrap();
        assert_eq!(s.udp_received, Some(udp(400, 20, 2.0, 2, 5)));
        assert_eq!(s.udp_received.unwrap().lost_percent, 5.0);

        let mut c = sample(1, StreamRole::Sender, 0.0, 1.0, 10);
        let mut d = sample(2, StreamRole::Sender, 0.0, 1.0, 10);
        c.udp_sent_packets = Some(40);
        d.udp_sent_packets = Some(2);
        let s = sum_streams(StreamRole::Sender, &[&c, &d]).unwrap();
        assert_eq!(s.udp_sent_packets, Some(42));
    }

    #[test]
    fn end_views_sum() {
        let mut a = view(0.0, 10.0, 1_000);
        let mut b = view(0.0, 10.5, 2_000);
        let mut c = view(0.1, 10.0, 500);
        a.tcp = Some(tcp(1, 100, 900, 5_000, 2_000));
        b.tcp = Some(tcp(2, 300, 1_100, 4_000, 3_001));
        c.tcp = Some(tcp(4, 50, 0, 0, 0)); // no RTT figures
        let s = sum_end_views(&[&a, &b, &c]).unwrap();
        assert_eq!((s.start, s.end, s.bytes), (0.0, 10.5, 3_500));
        assert_eq!(s.bits_per_second, 3_500.0 * 8.0 / 10.5);
        assert_eq!(s.tcp, Some(tcp(7, 300, 900, 5_000, 2_501)));
        assert_eq!((s.udp_sent_packets, s.udp_received), (None, None));
    }

    #[test]
    fn end_views_without_rtt_or_tcp() {
        let mut a = view(0.0, 1.0, 1);
        a.tcp = Some(tcp(2, 10, 0, 0, 0));
        let b = view(0.0, 1.0, 1);
        let s = sum_end_views(&[&a, &b]).unwrap();
        assert_eq!(s.tcp, Some(tcp(2, 10, 0, 0, 0)));
        assert_eq!(sum_end_views(&[&b]).unwrap().tcp, None);
    }

    #[test]
    fn end_views_udp() {
        let mut a = view(0.0, 1.0, 1);
        let mut b = view(0.0, 1.0, 1);
        a.udp_sent_packets = Some(5);
        b.udp_sent_packets = Some(6);
        a.udp_received = Some(udp(10, 1, 0.5, 0, 0));
        b.udp_received = Some(udp(10, 0, 1.5, 1, 0));
        let s = sum_end_views(&[&a, &b]).unwrap();
        assert_eq!(s.udp_sent_packets, Some(11));
        assert_eq!(s.udp_received, Some(udp(20, 1, 1.0, 1, 0)));
    }

    #[test]
    fn zero_length_span_has_zero_rate() {
        let a = sample(1, StreamRole::Sender, 2.0, 2.0, 100);
        assert_eq!(
            sum_streams(StreamRole::Sender, &[&a])
                .unwrap()
                .bits_per_second,
            0.0
        );
    }
}
