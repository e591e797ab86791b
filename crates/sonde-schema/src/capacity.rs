//! `sonde capacity -J`: the path capacity by packet dispersion, every rate at the IP layer
//! (IP bits/s) unless a name says otherwise: the run's settings, the estimate (short trains'
//! rates and histogram, long trains' fits, the verdict), the early stop and, with
//! `--tx-timestamps`, the server's departure check.

use serde::{Deserialize, Serialize};

use crate::Envelope;

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

/// What limits the path, as far as the trains tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Long trains arrived as fast as they left: the hosts, not the path, set the rate.
    HostLimited,
    /// A token bucket: a peak rate, a lower sustained rate and a bucket.
    Shaped,
    /// One rate throughout: the path's capacity.
    Link,
    /// Too few usable trains.
    Unmeasured,
}

impl Verdict {
    /// The name as the document spells it (`"host-limited"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::HostLimited => "host-limited",
            Verdict::Shaped => "shaped",
            Verdict::Link => "link",
            Verdict::Unmeasured => "unmeasured",
        }
    }
}

/// Counts of one kind of train.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainCounts {
    pub trains: u32,
    /// Every datagram arrived, in order.
    pub clean: u32,
    /// Stamped in batches by the receiving host.
    pub coalesced: u32,
    /// Gave a rate.
    pub used: u32,
}

/// A local mode of the short trains' histogram: a bin's edges (bits/s) and its count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mode {
    pub low_bps: f64,
    pub high_bps: f64,
    /// Rates in the bin.
    #[serde(default)]
    pub count: u32,
}

/// The short trains' histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub bin_bps: f64,
    /// Lower edge of bin 0.
    #[serde(default)]
    pub start_bps: f64,
    #[serde(default)]
    pub counts: Vec<u32>,
    /// Local modes, strongest first.
    #[serde(default)]
    pub modes: Vec<Mode>,
}

/// What one long train says about a shaper.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShapeFit {
    /// Rate of the train as a whole (first to last arrival).
    pub whole_bps: f64,
    /// Rate after the knee, or of the one line when there is none.
    pub tail_bps: f64,
    /// Rate before the knee (None without a knee).
    #[serde(default)]
    pub head_bps: Option<f64>,
    /// Bytes delivered by the knee and the bucket depth, IP bytes (None without a knee).
    #[serde(default)]
    pub knee_bytes: Option<u64>,
    #[serde(default)]
    pub bucket_bytes: Option<f64>,
}

/// The estimate. Its verdict, train counts and knees are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub verdict: Verdict,
    pub short: TrainCounts,
    pub long: TrainCounts,
    /// Dispersion rates of the clean short trains.
    #[serde(default)]
    pub short_rates: Vec<f64>,
    #[serde(default)]
    pub histogram: Option<Histogram>,
    /// Coefficient of variation of `short_rates`.
    #[serde(default)]
    pub cov: Option<f64>,
    /// The mode taken as the peak capacity.
    #[serde(default)]
    pub peak: Option<Mode>,
    /// Median whole-train rate of the long trains (asymptotic dispersion rate).
    #[serde(default)]
    pub adr_bps: Option<f64>,
    /// Median rate after the knee of the long trains, and their range.
    #[serde(default)]
    pub sustained_bps: Option<f64>,
    #[serde(default)]
    pub sustained_min_bps: Option<f64>,
    #[serde(default)]
    pub sustained_max_bps: Option<f64>,
    /// Median bucket depth of the long trains that showed a knee, IP bytes.
    #[serde(default)]
    pub bucket_bytes: Option<f64>,
    /// Long trains with a knee holding a bucket.
    pub knees: u32,
    /// Median departure rate of the long trains at the sender.
    #[serde(default)]
    pub departure_bps: Option<f64>,
    /// Median over the long trains of arrival rate / departure rate.
    #[serde(default)]
    pub arrival_share: Option<f64>,
    #[serde(default)]
    pub fits: Vec<ShapeFit>,
}

/// The early stop's rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Fewest long trains before any stop.
    pub min_trains: u32,
    /// Long trains the rule looks at (the last ones).
    pub window: u32,
    /// Largest (max − min) / mean of the window's sustained rates.
    pub max_spread: f64,
    /// Largest half-width of the 95 % confidence interval of their mean, over the mean
    /// (1 or more: no interval test).
    pub max_ci: f64,
    /// A window of trains all at the sender's pace stops too (`--quick`; false in documents
    /// from before it).
    #[serde(default)]
    pub host_paced_stops: bool,
}

/// What the rule saw after the latest long train.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    /// Long trains received so far.
    pub long_trains: u32,
    /// Mean sustained rate of the window.
    #[serde(default)]
    pub mean_bps: Option<f64>,
    /// (max − min) / mean of the window's sustained rates.
    #[serde(default)]
    pub spread: Option<f64>,
    /// Half-width of the 95 % confidence interval of the mean, over the mean.
    #[serde(default)]
    pub ci_half: Option<f64>,
    /// The window agrees on knee and host limit.
    pub same_shape: bool,
    pub converged: bool,
}

/// Whether and when the run stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EarlyStop {
    /// The rule was applied (`--no-early-stop` turns it off).
    pub enabled: bool,
    pub rule: StopRule,
    /// Long trains in the plan.
    pub planned_long_trains: u32,
    /// The run stopped before the end of its plan, after `after_long_trains`.
    pub stopped: bool,
    #[serde(default)]
    pub after_long_trains: Option<u32>,
    /// The rule's figures after the last long train received.
    #[serde(default)]
    pub last: Option<Convergence>,
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

/// One received train's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainSize {
    pub train: u32,
    /// UDP payload bytes of its datagrams, as they arrived.
    pub payload_bytes: u32,
    /// Datagrams of it that arrived.
    pub received: u32,
}

/// One probe size's short trains and their estimate (IP bits/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    pub payload_bytes: u32,
    pub ip_bytes: u32,
    /// Short trains of this size that arrived, and those that gave a rate.
    pub trains: u32,
    pub used: u32,
    /// Centre of the strongest mode of this size's rates, and that mode's bin.
    #[serde(default)]
    pub estimate_bps: Option<f64>,
    #[serde(default)]
    pub low_bps: Option<f64>,
    #[serde(default)]
    pub high_bps: Option<f64>,
    #[serde(default)]
    pub cov: Option<f64>,
}

/// The departure gaps of one train, ns, from the server's kernel transmit stamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Departure {
    pub train: u32,
    /// Datagrams the kernel stamped.
    pub stamped: u32,
    /// First to last stamp.
    pub span_ns: u64,
    pub min_gap_ns: u64,
    pub median_gap_ns: u64,
    pub max_gap_ns: u64,
}

/// The departures of a run against its trains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepartureCheck {
    /// Trains with a departure report.
    pub reported: u32,
    /// Median over the reported trains of their median departure gap, ns.
    #[serde(default)]
    pub median_gap_ns: Option<u64>,
    /// Largest departure gap of any train, ns.
    #[serde(default)]
    pub max_gap_ns: Option<u64>,
    /// Trains that did not leave back to back (ids).
    #[serde(default)]
    pub not_back_to_back: Vec<u32>,
    /// The reports, in train order.
    #[serde(default)]
    pub trains: Vec<Departure>,
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
