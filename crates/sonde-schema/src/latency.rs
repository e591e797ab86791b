//! `sonde latency -J`: what was probed and how (`start`), a row per report interval, the
//! summary (`end`), a record per probe (`round_trips`, the first 100 000) and notes.
//!
//! The delay, loss and summary types are also the parts of the `rrul` and `compare-ip`
//! documents that hold latency ([`crate::rrul`], [`crate::compare_ip`]). Milliseconds unless
//! a name says otherwise (`_us`, `_ns`, `_secs`); times in intervals are seconds since the
//! start of the run.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The runtime's own names, spelled the same in the document.
pub use sonde_stats::latency::model::LatencyMode;

/// The summary and its parts are the runtime's own results.
pub use sonde_stats::latency::model::{
    DelayStats, Histogram, IpdvStats, LatencySummary, LossStats, OneWayBasis, OneWayStats,
    ScheduleStats,
};

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyDocument {
    /// Absent when the run failed before its first probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<LatencyStart>,
    #[serde(default)]
    pub intervals: Vec<LatencyInterval>,
    /// Absent when the run did not reach its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<LatencySummary>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// One record per probe, the first probes of the run only.
    #[serde(default)]
    pub round_trips: Vec<ProbeRecord>,
    /// Probes past those in `round_trips` (in the summary only).
    #[serde(default)]
    pub round_trips_omitted: u64,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// What is known when probing starts. The mode is required (it is what makes a document a
/// latency one); the rest reads as absent from documents that lack it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyStart {
    /// `"sonde 0.1.0"`.
    #[serde(default)]
    pub version: Option<String>,
    pub mode: LatencyMode,
    /// The host as the user typed it.
    #[serde(default)]
    pub target: Option<String>,
    /// The address probed (with its port where it has one).
    #[serde(default)]
    pub remote: String,
    #[serde(default)]
    pub local: String,
    /// "IPv4" or "IPv6".
    #[serde(default)]
    pub family: Option<String>,
    /// Bytes per probe as `size_meaning` defines them.
    #[serde(default)]
    pub size: Option<u32>,
    /// What `size` counts (for ICMP: the echo payload, without the 8-byte ICMP header).
    #[serde(default)]
    pub size_meaning: String,
    /// Seconds between probes (0 with `--flood`).
    #[serde(default)]
    pub interval_secs: f64,
    #[serde(default)]
    pub flood: bool,
    /// Probes allowed in flight at once.
    #[serde(default)]
    pub window: u32,
    /// Probes asked for (`-c`).
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub duration_secs: Option<f64>,
    /// A reply later than this is counted late (`--late`).
    #[serde(default)]
    pub late_ms: Option<f64>,
    /// How send and receive times were taken (kernel or user space).
    #[serde(default)]
    pub timestamping: String,
    #[serde(default)]
    pub clock_synced: bool,
    /// Unix time (seconds) at the start.
    #[serde(default)]
    pub timestamp_unix: Option<f64>,
}

/// One interval row: the probes sent in `start..end` (seconds since the start) and the RTTs
/// of those answered by the time the row was written.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyInterval {
    #[serde(default)]
    pub start: Option<f64>,
    pub end: f64,
    #[serde(default)]
    pub sent: u64,
    #[serde(default)]
    pub received: u64,
    /// Probes of this interval still unanswered when the row was written.
    #[serde(default)]
    pub lost: u64,
    #[serde(default)]
    pub rtt: Option<DelayStats>,
}

/// One probe's record in `round_trips`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    pub seq: u64,
    /// Wall clock at the send, Unix ns.
    pub sent_unix_ns: u64,
    /// Wall clock at the receive, Unix ns (null when lost).
    #[serde(default)]
    pub received_unix_ns: Option<u64>,
    #[serde(default)]
    pub rtt_ms: Option<f64>,
    /// One-way delays, only when measured (`--clock-synced`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_ms: Option<f64>,
    /// No reply arrived before the run ended.
    pub lost: bool,
}

impl ProbeRecord {
    /// The record of a probe just sent: lost until its reply arrives.
    pub fn sent(seq: u64, sent_unix_ns: u64) -> Self {
        Self {
            seq,
            sent_unix_ns,
            received_unix_ns: None,
            rtt_ms: None,
            up_ms: None,
            down_ms: None,
            lost: true,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{json, Value};

    pub(crate) fn delay(median: f64) -> DelayStats {
        DelayStats {
            samples: 3,
            min_ms: median / 2.0,
            mean_ms: median,
            median_ms: median,
            p90_ms: median * 2.0,
            p99_ms: median * 3.0,
            p999_ms: median * 3.0,
            max_ms: median * 3.0,
            stddev_ms: 0.5,
            variance_ms2: 0.25,
        }
    }

    pub(crate) fn summary() -> LatencySummary {
        LatencySummary {
            seconds: 1.0,
            loss: LossStats {
                sent: 4,
                received: 3,
                lost: 1,
                loss_percent: 25.0,
                lost_up: Some(1),
                ..LossStats::default()
            },
            rtt: Some(delay(2.0)),
            rtt_histogram: Some(Histogram {
                unit: "ms".into(),
                bins: vec![(1.0, 1.001, 1), (2.0, 2.002, 2)],
            }),
            jitter_ms: 0.4,
            ipdv: Some(IpdvStats {
                pairs: 2,
                mean_abs_ms: 0.5,
                max_abs_ms: 1.0,
            }),
            one_way: Some(OneWayStats {
                basis: OneWayBasis::Estimated,
                clock_offset_ms: Some(0.1),
                method: "estimated".into(),
                up: Some(delay(1.0)),
                down: None,
                ipdv_up: None,
                ipdv_down: None,
                note: None,
            }),
            server_turnaround_us: Some(12.0),
            schedule: None,
            rate_per_second: 3.0,
            partial: false,
            error: None,
        }
    }

    fn document() -> LatencyDocument {
        LatencyDocument {
            start: Some(LatencyStart {
                version: Some("sonde test".into()),
                mode: LatencyMode::TcpConnect,
                target: Some("h".into()),
                remote: "192.0.2.1:80".into(),
                local: String::new(),
                family: Some("IPv4".into()),
                size: Some(0),
                size_meaning: "none".into(),
                interval_secs: 0.01,
                flood: false,
                window: 1,
                count: Some(4),
                duration_secs: None,
                late_ms: None,
                timestamping: "kernel".into(),
                clock_synced: false,
                timestamp_unix: Some(1.7e9),
            }),
            intervals: vec![LatencyInterval {
                start: Some(0.0),
                end: 1.0,
                sent: 4,
                received: 3,
                lost: 1,
                rtt: Some(delay(2.0)),
            }],
            end: Some(summary()),
            notes: vec!["a note".into()],
            round_trips: vec![ProbeRecord::sent(1, 10)],
            round_trips_omitted: 0,
            envelope: Envelope::new("latency", false, None),
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = document();
        let v = crate::to_value(&doc);
        assert_eq!(v["start"]["mode"], "tcp_connect");
        assert_eq!(v["end"]["one_way"]["basis"], "estimated");
        assert_eq!(v["end"]["rtt_histogram"]["bins"][1], json!([2.0, 2.002, 2]));
        assert!(v["round_trips"][0].get("up_ms").is_none(), "{v}");
        assert_eq!(v["round_trips"][0]["rtt_ms"], Value::Null);
        let back: LatencyDocument = crate::from_value("latency", v).unwrap();
        assert_eq!(back, doc);
        let bare = LatencyDocument {
            start: None,
            end: None,
            ..document()
        };
        let v = crate::to_value(&bare);
        assert!(v.get("start").is_none() && v.get("end").is_none(), "{v}");
    }

    #[test]
    fn a_summary_without_its_loss_figures_is_refused_naming_the_field() {
        let mut v = crate::to_value(&document());
        if let Some(loss) = v["end"]["loss"].as_object_mut() {
            loss.remove("loss_percent");
        }
        let e = crate::from_value::<LatencyDocument>("latency", v).unwrap_err();
        assert!(
            e.to_string().starts_with("not a valid latency document")
                && e.to_string().contains("loss_percent"),
            "{e}"
        );
        let no_mode = json!({"start": {"target": "h"}});
        let e = crate::from_value::<LatencyDocument>("latency", no_mode).unwrap_err();
        assert!(e.to_string().contains("mode"), "{e}");
    }
}
