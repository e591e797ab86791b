//! The dispersion estimate per probe size (`sonde capacity --sizes`), pure: the short trains
//! as received in, a row per size out. Each train's size is what arrived (the datagrams'
//! own length), not what was asked, so a server that ignored the sizes shows as one row.
//!
//! A size's estimate is the strongest local mode of its own histogram (the same bins as the
//! run's, [`Histogram::of`]), its range that mode's bin: capacity as a range, per size. On a
//! path whose bit rate sets the pace the rows agree; rows that climb with the size point at
//! a per-packet cost (a host, a forwarding engine) rather than a link.

use super::histogram::{cov, Histogram};
use super::train::Train;
use serde::{Deserialize, Serialize};

/// One probe size's short trains and their estimate (rates IP bits/s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    /// UDP payload and IP bytes of the datagrams.
    pub payload_bytes: u32,
    pub ip_bytes: u32,
    /// Short trains of this size that arrived, and those that gave a rate (clean).
    pub trains: u32,
    pub used: u32,
    /// Centre of the strongest mode of this size's rates, and that mode's bin.
    pub estimate_bps: Option<f64>,
    pub low_bps: Option<f64>,
    pub high_bps: Option<f64>,
    /// Coefficient of variation of this size's rates.
    pub cov: Option<f64>,
}

/// One received train's size, as its datagrams arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainSize {
    pub train: u32,
    pub payload_bytes: u32,
    /// Datagrams of it that arrived.
    pub received: u32,
}

/// IP bytes of a train's datagrams (its first arrival's); None when nothing arrived.
fn ip_size(t: &Train) -> Option<u32> {
    t.arrivals.first().map(|a| a.ip_bytes)
}

/// The size of every train that arrived, in order; `headers` is IP + UDP header bytes.
pub fn train_sizes(trains: &[&Train], headers: u32) -> Vec<TrainSize> {
    trains
        .iter()
        .filter_map(|t| {
            Some(TrainSize {
                train: t.id,
                payload_bytes: ip_size(t)?.saturating_sub(headers),
                received: t.arrivals.len() as u32,
            })
        })
        .collect()
}

/// A row per size among the short trains `short`, smallest first; `headers` as above.
pub fn by_size(short: &[Train], headers: u32) -> Vec<SizeRow> {
    let mut sizes: Vec<u32> = short.iter().filter_map(ip_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|ip| {
            let mine: Vec<&Train> = short.iter().filter(|t| ip_size(t) == Some(ip)).collect();
            let rates: Vec<f64> = mine
                .iter()
                .map(|t| t.figures())
                .filter(|f| f.clean)
                .filter_map(|f| f.rx_bps)
                .collect();
            let mode = Histogram::of(&rates).and_then(|h| h.modes.first().copied());
            SizeRow {
                payload_bytes: ip.saturating_sub(headers),
                ip_bytes: ip,
                trains: mine.len() as u32,
                used: rates.len() as u32,
                estimate_bps: mode.map(|m| m.center_bps()),
                low_bps: mode.map(|m| m.low_bps),
                high_bps: mode.map(|m| m.high_bps),
                cov: cov(&rates),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::train::Arrival;
    use super::*;

    /// A short train of 10 `ip`-byte datagrams arriving every `gap_ns`, sent far faster.
    fn train(id: u32, ip: u32, gap_ns: u64) -> Train {
        Train {
            id,
            sent: 10,
            arrivals: (0..10u32)
                .map(|i| Arrival {
                    seq: i,
                    ip_bytes: ip,
                    rx_ns: 1_000_000 + u64::from(i) * gap_ns,
                    tx_ns: u64::from(i) * 100,
                })
                .collect(),
        }
    }

    #[test]
    fn a_row_per_size_with_its_own_mode() {
        // 100 Mbit/s for every size: 628 B IP every 50.24 µs, 1500 B every 120 µs; one
        // 1500-byte train is slowed (a competing burst), one lost its tail.
        let mut short: Vec<Train> = (0..8)
            .map(|i| {
                if i % 2 == 0 {
                    train(i, 628, 50_240)
                } else {
                    train(i, 1500, 120_000)
                }
            })
            .collect();
        short.push(train(8, 1500, 240_000));
        let mut cut = train(9, 1500, 120_000);
        cut.arrivals.truncate(6);
        short.push(cut);
        let rows = by_size(&short, 28);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!((rows[0].payload_bytes, rows[0].ip_bytes), (600, 628));
        assert_eq!((rows[0].trains, rows[0].used), (4, 4));
        assert_eq!(
            (rows[1].payload_bytes, rows[1].trains, rows[1].used),
            (1472, 6, 5)
        );
        for r in &rows {
            let (lo, est, hi) = (
                r.low_bps.unwrap(),
                r.estimate_bps.unwrap(),
                r.high_bps.unwrap(),
            );
            assert!(
                lo <= 100.1e6 && 99.9e6 <= hi && lo < est && est < hi,
                "{r:?}"
            );
        }
        assert_eq!(rows[0].cov, Some(0.0));
        assert!(rows[1].cov.unwrap() > 0.1);
        let all: Vec<&Train> = short.iter().collect();
        let sizes = train_sizes(&all, 28);
        assert_eq!(sizes.len(), 10);
        assert_eq!(
            sizes[9],
            TrainSize {
                train: 9,
                payload_bytes: 1472,
                received: 6
            }
        );
        assert!(by_size(&[], 28).is_empty());
    }
}
