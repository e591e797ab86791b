//! How a train left the sender, from the kernel's software transmit stamps (taken as each
//! datagram is handed to the device, after the sender's own qdisc): the spread of the gaps
//! between departures, and whether the train left back to back.
//!
//! Dispersion measures the path only when the train reaches the narrow link faster than the
//! link drains it. A sender stalled in the middle of a train (preempted, its send buffer
//! full) leaves a gap at least one of the narrow link's packet times long; the link may go
//! idle in it and the train's dispersion then includes the sender. Such a train is flagged:
//! its largest departure gap is not shorter than its median arrival gap (the narrow link's
//! packet time). A train paced on leaving (a shaper on the sender's own interface) is flagged
//! by the same rule.

use super::train::Train;
use serde::{Deserialize, Serialize};

/// The departure gaps of one train (ns), from the transmit stamps the kernel gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Departure {
    pub train: u32,
    /// Datagrams the kernel stamped (a stamp dropped by a full error queue is missing).
    pub stamped: u32,
    /// First to last stamp.
    pub span_ns: u64,
    pub min_gap_ns: u64,
    pub median_gap_ns: u64,
    pub max_gap_ns: u64,
}

impl Departure {
    /// The spread of `stamps` (ns, any order; sorted here), None with fewer than two.
    pub fn of(train: u32, stamps: &mut [u64]) -> Option<Self> {
        stamps.sort_unstable();
        let mut gaps: Vec<u64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_unstable();
        Some(Self {
            train,
            stamped: u32::try_from(stamps.len()).unwrap_or(u32::MAX),
            span_ns: stamps.last()? - stamps.first()?,
            min_gap_ns: *gaps.first()?,
            median_gap_ns: gaps[gaps.len() / 2],
            max_gap_ns: *gaps.last()?,
        })
    }

    /// Whether `arrived` (this train as received) left back to back: its largest departure
    /// gap is shorter than its median arrival gap. None when the train gives no arrival gap.
    pub fn back_to_back(&self, arrived: &Train) -> Option<bool> {
        let mut gaps: Vec<u64> = arrived
            .arrivals
            .windows(2)
            .map(|w| w[1].rx_ns.saturating_sub(w[0].rx_ns))
            .collect();
        gaps.sort_unstable();
        let median = *gaps.get(gaps.len() / 2)?;
        Some(self.max_gap_ns < median)
    }
}

/// The departures of a run against its trains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepartureCheck {
    /// Trains with a departure report.
    pub reported: u32,
    /// Median over the reported trains of their median departure gap, ns.
    pub median_gap_ns: Option<u64>,
    /// Largest departure gap of any train, ns.
    pub max_gap_ns: Option<u64>,
    /// Trains that did not leave back to back (ids).
    #[serde(default)]
    pub not_back_to_back: Vec<u32>,
    /// The reports, in train order.
    #[serde(default)]
    pub trains: Vec<Departure>,
}

/// Checks `departures` against the `trains` received (matched by train id).
pub fn check(mut departures: Vec<Departure>, trains: &[&Train]) -> DepartureCheck {
    departures.sort_by_key(|d| d.train);
    departures.dedup_by_key(|d| d.train);
    let mut medians: Vec<u64> = departures.iter().map(|d| d.median_gap_ns).collect();
    medians.sort_unstable();
    let not_back_to_back = departures
        .iter()
        .filter(|d| {
            trains
                .iter()
                .find(|t| t.id == d.train)
                .and_then(|t| d.back_to_back(t))
                == Some(false)
        })
        .map(|d| d.train)
        .collect();
    DepartureCheck {
        reported: u32::try_from(departures.len()).unwrap_or(u32::MAX),
        median_gap_ns: medians.get(medians.len() / 2).copied(),
        max_gap_ns: departures.iter().map(|d| d.max_gap_ns).max(),
        not_back_to_back,
        trains: departures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::train::Arrival;

    fn arrived(id: u32, gap: u64, n: u32) -> Train {
        Train {
            id,
            sent: n,
            arrivals: (0..n)
                .map(|i| Arrival {
                    seq: i,
                    ip_bytes: 1500,
                    rx_ns: u64::from(i) * gap,
                    tx_ns: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn the_spread_of_the_gaps() {
        let d = Departure::of(3, &mut [130, 100, 110, 400, 120]).unwrap();
        assert_eq!(
            d,
            Departure {
                train: 3,
                stamped: 5,
                span_ns: 300,
                min_gap_ns: 10,
                median_gap_ns: 10,
                max_gap_ns: 270,
            }
        );
        assert_eq!(Departure::of(0, &mut [5]), None);
        assert_eq!(Departure::of(0, &mut []), None);
    }

    #[test]
    fn a_stall_as_long_as_an_arrival_gap_is_flagged() {
        // The narrow link spaces packets 120 µs apart (100 Mbit/s of 1500 B).
        let t = arrived(0, 120_000, 6);
        let quick = Departure::of(0, &mut [0, 2_000, 4_000, 6_000, 8_000, 10_000]).unwrap();
        assert_eq!(quick.back_to_back(&t), Some(true));
        let stalled = Departure::of(0, &mut [0, 2_000, 4_000, 130_000, 132_000]).unwrap();
        assert_eq!(stalled.back_to_back(&t), Some(false));
        assert_eq!(quick.back_to_back(&arrived(0, 1, 1)), None);
        let other = Departure {
            train: 1,
            ..stalled
        };
        let c = check(
            vec![stalled, quick, other, stalled],
            &[&t, &arrived(1, 1_000, 3)],
        );
        assert_eq!(c.reported, 2);
        assert_eq!(c.not_back_to_back, vec![0, 1]);
        assert_eq!(c.max_gap_ns, Some(126_000));
        assert_eq!(c.median_gap_ns, Some(2_000));
    }
}
