//! End-of-test summary of a TCP sender's kernel figures (TCP_INFO samples).
//!
//! iperf3's `-J` summary gives retransmits, the largest congestion window and peer receive
//! window, the reordering count and min/max/mean smoothed RTT per sending stream. The runtime samples TCP_INFO at interval ends; this builder
//! folds those samples. RTT samples of 0 mean "not available" and are left out of RTT figures.

use crate::model::{TcpInfoSample, TcpSenderSummary};

/// Folds [`TcpInfoSample`]s into a [`TcpSenderSummary`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpSummaryBuilder {
    retransmits: u64,
    max_snd_cwnd: u64,
    min_rtt_us: u32,
    max_rtt_us: u32,
    rtt_sum_us: u64,
    rtt_count: u64,
    max_snd_wnd: Option<u64>,
    reorder: Option<u64>,
}

impl TcpSummaryBuilder {
    /// A builder that has seen no samples.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one interval's sample.
    pub fn add(&mut self, s: &TcpInfoSample) {
        self.retransmits = self.retransmits.saturating_add(s.retransmits);
        self.max_snd_cwnd = self.max_snd_cwnd.max(s.snd_cwnd);
        if let Some(w) = s.snd_wnd {
            self.max_snd_wnd = Some(self.max_snd_wnd.map_or(w, |m| m.max(w)));
        }
        if s.reorder.is_some() {
            self.reorder = s.reorder;
        }
        if s.rtt_us == 0 {
            return;
        }
        self.min_rtt_us = if self.rtt_count == 0 {
            s.rtt_us
        } else {
            self.min_rtt_us.min(s.rtt_us)
        };
        self.max_rtt_us = self.max_rtt_us.max(s.rtt_us);
        self.rtt_sum_us = self.rtt_sum_us.saturating_add(u64::from(s.rtt_us));
        self.rtt_count += 1;
    }

    /// The summary so far: retransmits summed, the largest window, RTT figures over the samples
    /// with an RTT (all zero when there were none; the mean is rounded to the nearest µs).
    pub fn build(&self) -> TcpSenderSummary {
        let mean = (self.rtt_sum_us + self.rtt_count / 2)
            .checked_div(self.rtt_count)
            .unwrap_or(0);
        TcpSenderSummary {
            retransmits: self.retransmits,
            max_snd_cwnd: self.max_snd_cwnd,
            max_rtt_us: self.max_rtt_us,
            min_rtt_us: self.min_rtt_us,
            mean_rtt_us: u32::try_from(mean).unwrap_or(u32::MAX),
            max_snd_wnd: self.max_snd_wnd,
            reorder: self.reorder,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(retransmits: u64, snd_cwnd: u64, rtt_us: u32) -> TcpInfoSample {
        TcpInfoSample {
            retransmits,
            snd_cwnd,
            rtt_us,
            ..TcpInfoSample::default()
        }
    }

    #[test]
    fn empty_is_all_zero() {
        assert_eq!(
            TcpSummaryBuilder::new().build(),
            TcpSenderSummary::default()
        );
    }

    #[test]
    fn folds_samples() {
        let mut b = TcpSummaryBuilder::new();
        b.add(&sample(3, 64_000, 1_000));
        b.add(&sample(0, 128_000, 3_000));
        b.add(&sample(2, 96_000, 2_001));
        let s = b.build();
        assert_eq!(s.retransmits, 5);
        assert_eq!(s.max_snd_cwnd, 128_000);
        assert_eq!((s.min_rtt_us, s.max_rtt_us), (1_000, 3_000));
        // (1000 + 3000 + 2001) / 3 = 2000.33 -> 2000
        assert_eq!(s.mean_rtt_us, 2_000);
    }

    #[test]
    fn zero_rtt_samples_are_ignored_for_rtt() {
        let mut b = TcpSummaryBuilder::new();
        b.add(&sample(1, 10, 0));
        b.add(&sample(1, 20, 500));
        b.add(&sample(1, 5, 0));
        b.add(&sample(0, 5, 700));
        let s = b.build();
        assert_eq!((s.retransmits, s.max_snd_cwnd), (3, 20));
        assert_eq!((s.min_rtt_us, s.max_rtt_us, s.mean_rtt_us), (500, 700, 600));
    }

    #[test]
    fn only_zero_rtt_gives_zero_rtt() {
        let mut b = TcpSummaryBuilder::new();
        b.add(&sample(4, 10, 0));
        let s = b.build();
        assert_eq!((s.min_rtt_us, s.max_rtt_us, s.mean_rtt_us), (0, 0, 0));
        assert_eq!(s.retransmits, 4);
    }

    #[test]
    fn receive_window_is_the_largest_and_reorder_the_last_seen() {
        let mut b = TcpSummaryBuilder::new();
        b.add(&sample(0, 10, 100));
        assert_eq!((b.build().max_snd_wnd, b.build().reorder), (None, None));
        for (wnd, reorder) in [
            (Some(65_536), Some(1)),
            (Some(262_144), Some(4)),
            (None, None),
        ] {
            b.add(&TcpInfoSample {
                snd_wnd: wnd,
                reorder,
                ..sample(0, 10, 100)
            });
        }
        b.add(&TcpInfoSample {
            snd_wnd: Some(131_072),
            reorder: Some(5),
            ..sample(0, 10, 100)
        });
        let s = b.build();
        assert_eq!(s.max_snd_wnd, Some(262_144));
        assert_eq!(s.reorder, Some(5));
    }

    #[test]
    fn mean_rounds_to_nearest() {
        let mut b = TcpSummaryBuilder::new();
        b.add(&sample(0, 0, 1));
        b.add(&sample(0, 0, 2));
        assert_eq!(b.build().mean_rtt_us, 2);
        b.add(&sample(u64::MAX, 0, u32::MAX));
        b.add(&sample(1, 0, u32::MAX));
        assert_eq!(b.build().retransmits, u64::MAX);
        assert_eq!(b.build().max_rtt_us, u32::MAX);
    }
}
