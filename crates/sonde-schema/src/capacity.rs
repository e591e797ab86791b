//! `sonde capacity -J`: the path capacity by packet dispersion, every rate at the IP layer
//! (IP bits/s) unless a name says otherwise: the run's settings, the estimate (short trains'
//! rates and histogram, long trains' fits, the verdict), the early stop and, with
//! `--tx-timestamps`, the server's departure check.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The estimate, its parts, the early stop, the sizes and the departure check are the
/// runtime's own results.
pub use sonde_stats::capacity::converge::{Convergence, EarlyStop, StopRule};
pub use sonde_stats::capacity::departure::{Departure, DepartureCheck};
pub use sonde_stats::capacity::histogram::{Histogram, Mode};
pub use sonde_stats::capacity::shaper::ShapeFit;
pub use sonde_stats::capacity::sizes::{SizeRow, TrainSize};
pub use sonde_stats::capacity::{Estimate, TrainCounts, Verdict};

/// The whole document. A run that failed before anything arrived has no estimate (null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityDocument {
    /// The host as the user typed it.
    #[serde(default)]
    pub host: Option<String>,
    /// The server's address and port.
    #[serde(default)]
    pub server: Option<String>,
    /// "IPv4" or "IPv6".
    #[serde(default)]
    pub family: Option<String>,
    /// The layer of the rates: "ip".
    #[serde(default)]
    pub layer: Option<String>,
    /// How IP, UDP payload and shaper-counted bytes relate, in words.
    pub overhead_model: String,
    /// UDP payload bytes of each train datagram.
    pub payload_bytes: u32,
    /// IP bytes of each train datagram.
    pub ip_bytes: u32,
    /// Datagrams per short train (absent in documents from before it was recorded).
    #[serde(default)]
    pub short_train_len: Option<u32>,
    /// Datagrams per long train (absent likewise).
    #[serde(default)]
    pub long_train_len: Option<u32>,
    /// Whether arrivals were stamped by the kernel.
    #[serde(default)]
    pub kernel_timestamps: Option<bool>,
    /// Seconds the trains took.
    pub seconds: f64,
    /// Datagrams that belonged to no train of the run.
    #[serde(default)]
    pub ignored_datagrams: u64,
    /// The estimate's verdict (null without an estimate).
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// The sustained rate at the IP layer, as UDP payload and as a Linux shaper counts it.
    #[serde(default)]
    pub sustained_ip_bps: Option<f64>,
    #[serde(default)]
    pub sustained_payload_bps: Option<f64>,
    #[serde(default)]
    pub sustained_shaper_bps: Option<f64>,
    #[serde(default)]
    pub estimate: Option<Estimate>,
    /// Whether the run stopped once its long trains agreed.
    #[serde(default)]
    pub early_stop: Option<EarlyStop>,
    /// `--quick`: the run stopped at the first two long trains that agreed (false in
    /// documents from before it).
    #[serde(default)]
    pub quick: bool,
    /// Trains in the plan (absent in documents from before it was recorded).
    #[serde(default)]
    pub trains_planned: Option<u32>,
    /// Trains the server sent, as the client counted them from their datagrams (the highest
    /// train number seen, plus one; absent likewise).
    #[serde(default)]
    pub trains_sent: Option<u32>,
    /// The server's transmit stamps of each train (`--tx-timestamps` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub departures: Option<DepartureCheck>,
    /// With `--sizes`: each received train's size as its datagrams arrived.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub train_sizes: Vec<TrainSize>,
    /// With `--sizes`: the short trains' estimate per size, smallest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_size: Vec<SizeRow>,
    /// With `--longest-train`: the search for the longest train that arrived whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_loss_free_train: Option<LongestTrain>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// One train of the longest-train search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriedTrain {
    pub len: u32,
    pub received: u32,
    pub lost: u32,
}

/// The longest train that arrived without loss (`--longest-train`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongestTrain {
    /// Longest length that arrived whole (None: not even the shortest did).
    #[serde(default)]
    pub length: Option<u32>,
    /// `length` is the search's bound, reached without loss: the answer is at least it.
    pub at_least: bool,
    /// Shortest length that lost datagrams.
    #[serde(default)]
    pub shortest_lossy: Option<u32>,
    /// Bounds of the search: longest length, seconds.
    pub max_len: u32,
    pub limit_secs: f64,
    /// The time limit ended it before it was done.
    pub time_limited: bool,
    pub seconds: f64,
    /// Every train tried, in order.
    pub tried: Vec<TriedTrain>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn counts(trains: u32) -> TrainCounts {
        TrainCounts {
            trains,
            clean: trains,
            coalesced: 0,
            used: trains,
        }
    }

    fn document() -> CapacityDocument {
        let mode = Mode {
            low_bps: 99e6,
            high_bps: 101e6,
            count: 7,
        };
        let rule = StopRule {
            min_trains: 3,
            window: 3,
            max_spread: 0.02,
            max_ci: 0.01,
            host_paced_stops: false,
        };
        CapacityDocument {
            host: Some("h".into()),
            server: Some("127.0.0.1:5201".into()),
            family: Some("IPv4".into()),
            layer: Some("ip".into()),
            overhead_model: "IP = ...".into(),
            payload_bytes: 1472,
            ip_bytes: 1500,
            short_train_len: Some(10),
            long_train_len: Some(200),
            kernel_timestamps: Some(true),
            seconds: 1.5,
            ignored_datagrams: 0,
            verdict: Some(Verdict::HostLimited),
            sustained_ip_bps: Some(100e6),
            sustained_payload_bps: Some(98e6),
            sustained_shaper_bps: Some(101e6),
            estimate: Some(Estimate {
                verdict: Verdict::HostLimited,
                short: counts(8),
                long: counts(3),
                short_rates: vec![100e6; 8],
                histogram: Some(Histogram {
                    bin_bps: 2e6,
                    start_bps: 99e6,
                    counts: vec![7, 1],
                    modes: vec![mode],
                }),
                cov: Some(0.01),
                peak: Some(mode),
                adr_bps: Some(100e6),
                sustained_bps: Some(100e6),
                sustained_min_bps: Some(99e6),
                sustained_max_bps: Some(101e6),
                bucket_bytes: None,
                knees: 0,
                departure_bps: Some(100e6),
                arrival_share: Some(0.99),
                fits: vec![ShapeFit {
                    whole_bps: 100e6,
                    tail_bps: 100e6,
                    head_bps: None,
                    knee_bytes: None,
                    bucket_bytes: None,
                }],
            }),
            early_stop: Some(EarlyStop {
                enabled: true,
                rule,
                planned_long_trains: 5,
                stopped: true,
                after_long_trains: Some(3),
                last: Some(Convergence {
                    long_trains: 3,
                    mean_bps: Some(100e6),
                    spread: Some(0.0),
                    ci_half: Some(0.0),
                    same_shape: true,
                    converged: true,
                }),
            }),
            quick: true,
            trains_planned: Some(45),
            trains_sent: Some(42),
            departures: None,
            train_sizes: vec![TrainSize {
                train: 0,
                payload_bytes: 600,
                received: 10,
            }],
            by_size: vec![SizeRow {
                payload_bytes: 600,
                ip_bytes: 628,
                trains: 1,
                used: 1,
                estimate_bps: Some(100e6),
                low_bps: Some(99e6),
                high_bps: Some(101e6),
                cov: None,
            }],
            longest_loss_free_train: Some(LongestTrain {
                length: Some(1000),
                at_least: true,
                shortest_lossy: None,
                max_len: 1000,
                limit_secs: 30.0,
                time_limited: false,
                seconds: 0.5,
                tried: vec![TriedTrain {
                    len: 1000,
                    received: 1000,
                    lost: 0,
                }],
            }),
            envelope: Envelope::new("capacity", false, None),
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = document();
        let v = crate::to_value(&doc);
        assert_eq!(v["verdict"], "host-limited");
        assert_eq!(v["estimate"]["fits"][0]["head_bps"], Value::Null);
        assert!(v.get("departures").is_none(), "only with --tx-timestamps");
        let back: CapacityDocument = crate::from_value("capacity", v).unwrap();
        assert_eq!(back, doc);
        let with = CapacityDocument {
            departures: Some(DepartureCheck {
                reported: 1,
                median_gap_ns: Some(1000),
                max_gap_ns: Some(2000),
                not_back_to_back: vec![],
                trains: vec![Departure {
                    train: 0,
                    stamped: 10,
                    span_ns: 9000,
                    min_gap_ns: 900,
                    median_gap_ns: 1000,
                    max_gap_ns: 2000,
                }],
            }),
            ..document()
        };
        let back: CapacityDocument = crate::from_value("capacity", crate::to_value(&with)).unwrap();
        assert_eq!(back, with);
    }

    #[test]
    fn an_estimate_without_its_used_trains_is_refused_naming_the_field() {
        let mut v = crate::to_value(&document());
        if let Some(short) = v["estimate"]["short"].as_object_mut() {
            short.remove("used");
        }
        let e = crate::from_value::<CapacityDocument>("capacity", v).unwrap_err();
        assert!(
            e.to_string().starts_with("not a valid capacity document")
                && e.to_string().contains("used"),
            "{e}"
        );
    }
}
