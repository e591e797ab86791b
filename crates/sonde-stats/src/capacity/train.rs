//! One probe train as the receiver saw it: which datagrams arrived, whether the receiving
//! host stamped them in batches (interrupt coalescing), and the dispersion rate.
//!
//! The kernel's software receive stamp is taken when a packet enters the stack, after the
//! NIC and NAPI have batched packets: the packets of one poll carry stamps well under a
//! microsecond apart, whatever the link's speed. Such gaps measure the host, not the path, so
//! the dispersion rate is taken between *batch starts* (the first packet of each batch, as
//! pathrate's coalescing mode does): bits after the first packet up to the last batch start,
//! over the time between them. On a path that stamps every packet on its own, every packet is
//! a batch start and this is the classic dispersion rate `(n - 1) · L / (t_n - t_1)`.

use serde::{Deserialize, Serialize};

/// Two stamps closer than this come from one batch of the receiving host. A 1500-byte
/// packet takes 1.2 µs on the wire even at 10 Gbit/s, so no link sonde measures spaces
/// packets this closely.
pub const BATCH_GAP_NS: u64 = 1_000;

/// A train counts as coalesced when more than this share of its gaps are batch gaps
/// (pathrate's 60 % rule).
pub const COALESCED_SHARE: f64 = 0.6;

/// One datagram of a train as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrival {
    /// Position in the train, from 0.
    pub seq: u32,
    /// Bytes at the IP layer (UDP payload + UDP header + IP header).
    pub ip_bytes: u32,
    /// Receive time, ns (the kernel's stamp when it gave one).
    pub rx_ns: u64,
    /// The sender's time when it handed the datagram's batch to its kernel, ns.
    pub tx_ns: u64,
}

/// A whole train: how many datagrams were sent and those that arrived, in arrival order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Train {
    pub id: u32,
    pub sent: u32,
    pub arrivals: Vec<Arrival>,
}

/// What one train says on its own.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TrainFigures {
    pub sent: u32,
    pub received: u32,
    /// Every datagram arrived, in order.
    pub clean: bool,
    /// More than [`COALESCED_SHARE`] of the gaps were batch gaps.
    pub coalesced: bool,
    /// Dispersion rate at the receiver, IP bits/s (None with fewer than two batches).
    pub rx_bps: Option<f64>,
    /// Departure rate at the sender, IP bits/s, by the same rule on the sender's stamps
    /// (None when the whole train left in one batch).
    pub tx_bps: Option<f64>,
}

impl Train {
    /// The train's figures.
    pub fn figures(&self) -> TrainFigures {
        let a = &self.arrivals;
        let clean =
            a.len() as u32 == self.sent && a.iter().enumerate().all(|(i, x)| x.seq as usize == i);
        let gaps: Vec<u64> = a
            .windows(2)
            .map(|w| w[1].rx_ns.saturating_sub(w[0].rx_ns))
            .collect();
        let batched = gaps.iter().filter(|&&g| g < BATCH_GAP_NS).count();
        let coalesced = !gaps.is_empty() && batched as f64 > COALESCED_SHARE * gaps.len() as f64;
        TrainFigures {
            sent: self.sent,
            received: a.len() as u32,
            clean,
            coalesced,
            rx_bps: batch_rate(a.iter().map(|x| (x.rx_ns, x.ip_bytes))),
            tx_bps: batch_rate(sent_points(a)),
        }
    }
}

/// The sender's (time, bytes handed to its kernel) at each arrival in sequence order: the
/// bytes count the datagrams lost on the way too (every datagram of a train has one size), so
/// a path that drops most of a train (a full device ring) does not look as slow at the sender
/// as at the receiver. Late (reordered) arrivals are skipped.
fn sent_points(a: &[Arrival]) -> impl Iterator<Item = (u64, u32)> + '_ {
    let mut next = 0u32;
    a.iter().filter_map(move |x| {
        if x.seq < next {
            return None;
        }
        let n = x.seq - next + 1;
        next = x.seq + 1;
        Some((x.tx_ns, x.ip_bytes.saturating_mul(n)))
    })
}

/// Bits after the first packet up to the last batch start, over the time from the first
/// packet to that batch start; `points` are (time ns, bytes) in order. None when every
/// point falls in one batch.
pub fn batch_rate(points: impl IntoIterator<Item = (u64, u32)>) -> Option<f64> {
    let mut it = points.into_iter();
    let (t0, _) = it.next()?;
    let (mut prev, mut bytes, mut last) = (t0, 0u64, None);
    for (t, b) in it {
        if t.saturating_sub(prev) >= BATCH_GAP_NS {
            last = Some((t, bytes + u64::from(b)));
        }
        bytes += u64::from(b);
        prev = t;
    }
    let (t, b) = last?;
    let span = t.checked_sub(t0).filter(|&s| s > 0)?;
    Some(b as f64 * 8e9 / span as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn train(stamps: &[u64]) -> Train {
        Train {
            id: 0,
            sent: stamps.len() as u32,
            arrivals: stamps
                .iter()
                .enumerate()
                .map(|(i, &t)| Arrival {
                    seq: i as u32,
                    ip_bytes: 1500,
                    rx_ns: t,
                    tx_ns: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn evenly_spaced_packets_give_the_link_rate() {
        // 1500 B every 120 µs is 100 Mbit/s.
        let f = train(&[0, 120_000, 240_000, 360_000]).figures();
        assert!(f.clean && !f.coalesced);
        assert!((f.rx_bps.unwrap() - 100e6).abs() < 1.0, "{:?}", f.rx_bps);
        // All sent in one batch: no departure rate.
        assert_eq!(f.tx_bps, None);
    }

    #[test]
    fn batches_count_from_their_first_packet() {
        // Two batches of three, 360 µs apart: 3 packets (after the first) in 360 µs.
        let f = train(&[0, 100, 200, 360_000, 360_100, 360_200]).figures();
        assert!(f.coalesced);
        assert!((f.rx_bps.unwrap() - 100e6).abs() < 1.0, "{:?}", f.rx_bps);
        // One batch only: unmeasurable, not infinite.
        assert_eq!(train(&[5, 5, 6]).figures().rx_bps, None);
    }

    #[test]
    fn loss_and_reorder_make_a_train_unclean() {
        let mut t = train(&[0, 10_000, 20_000]);
        t.sent = 4;
        assert!(!t.figures().clean);
        let mut t = train(&[0, 10_000, 20_000]);
        t.arrivals.swap(1, 2);
        assert!(!t.figures().clean);
        assert!(Train::default().figures().rx_bps.is_none());
    }

    #[test]
    fn the_departure_rate_counts_the_datagrams_lost_on_the_way() {
        // Datagrams 0, 4 and 8 of 9 arrive; the sender handed one over every 12 µs (1 Gbit/s
        // of 1500-byte packets), the receiver saw one every 480 µs (25 Mbit/s of what arrived).
        let t = Train {
            id: 0,
            sent: 9,
            arrivals: [0u32, 4, 8]
                .iter()
                .map(|&s| Arrival {
                    seq: s,
                    ip_bytes: 1500,
                    rx_ns: u64::from(s) * 120_000,
                    tx_ns: u64::from(s) * 12_000,
                })
                .collect(),
        };
        let f = t.figures();
        assert!((f.tx_bps.unwrap() - 1e9).abs() < 1.0, "{:?}", f.tx_bps);
        assert!((f.rx_bps.unwrap() - 25e6).abs() < 1.0, "{:?}", f.rx_bps);
    }
}
