//! `sonde btc -J` (RFC 3148 bulk transfer capacity): one TCP session per size and family,
//! and the statistics of their goodput per family.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// A session and a failed session are the runtime's own records.
pub use sonde_stats::btc::{BtcFailure, BtcSession};

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtcDocument {
    #[serde(default)]
    pub host: Option<String>,
    /// `"TCP payload"`: what the goodput counts.
    #[serde(default)]
    pub layer: Option<String>,
    /// `true` when the server sent (`-R`); older documents: the client sent.
    #[serde(default)]
    pub reverse: bool,
    #[serde(default)]
    pub sessions: Vec<BtcSession>,
    /// Sessions that gave no figures, each with its error; the run went on after them.
    #[serde(default)]
    pub failed: Vec<BtcFailure>,
    /// Per family (`"IPv4"`, `"IPv6"`).
    #[serde(default)]
    pub summary: BTreeMap<String, BtcStats>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// One family's statistics of the sessions' goodput (bits/s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BtcStats {
    pub sessions: u64,
    pub min_bps: f64,
    pub max_bps: f64,
    pub mean_bps: f64,
    pub median_bps: f64,
    /// Sample standard deviation (absent in documents from before it was recorded).
    #[serde(default)]
    pub stddev_bps: Option<f64>,
    /// Sample variance, (bits/s)^2.
    #[serde(default)]
    pub variance: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = BtcDocument {
            host: Some("h".into()),
            layer: Some("TCP payload".into()),
            reverse: true,
            sessions: vec![BtcSession {
                index: 1,
                family: "IPv4".into(),
                size: 6_000_000,
                bytes: 6_000_000,
                seconds: 0.5,
                goodput_bps: 96e6,
                retransmits: 2,
                max_cwnd: Some(1 << 20),
                mean_rtt_us: None,
                congestion: Some("cubic".into()),
                start_unix_s: 1.7e9,
            }],
            failed: vec![BtcFailure {
                index: 2,
                family: "IPv6".into(),
                size: 6_000_000,
                start_unix_s: 1.7e9,
                error: "connection refused".into(),
            }],
            summary: BTreeMap::from([(
                "IPv4".into(),
                BtcStats {
                    sessions: 1,
                    min_bps: 96e6,
                    max_bps: 96e6,
                    mean_bps: 96e6,
                    median_bps: 96e6,
                    stddev_bps: Some(0.0),
                    variance: Some(0.0),
                },
            )]),
            envelope: Envelope::new("btc", false, None),
        };
        let v = crate::to_value(&doc);
        assert_eq!(v["error"], serde_json::Value::Null);
        assert_eq!(v["sessions"][0]["mean_rtt_us"], serde_json::Value::Null);
        let back: BtcDocument = crate::from_value("btc", v).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn an_older_document_reads_without_the_new_fields() {
        let v = serde_json::json!({"kind": "btc", "sessions": [], "summary": {"IPv4": {
            "sessions": 1, "min_bps": 1.0, "max_bps": 1.0, "mean_bps": 1.0, "median_bps": 1.0}}});
        let d: BtcDocument = crate::from_value("btc", v).unwrap();
        assert!(!d.reverse && d.failed.is_empty());
        assert_eq!(d.summary["IPv4"].stddev_bps, None);
    }

    #[test]
    fn a_failure_without_its_error_is_refused() {
        let v = serde_json::json!({"failed": [{"index": 1, "family": "IPv6"}]});
        let e = crate::from_value::<BtcDocument>("btc", v).unwrap_err();
        assert!(e.to_string().contains("error"), "{e}");
    }

    #[test]
    fn a_wrong_field_is_named() {
        let v = serde_json::json!({"sessions": [{"index": "one"}]});
        let e = crate::from_value::<BtcDocument>("btc", v).unwrap_err();
        assert!(e.to_string().starts_with("not a valid btc document"), "{e}");
    }

    #[test]
    fn a_session_without_its_goodput_is_refused_not_read_as_zero() {
        let v = serde_json::json!({"sessions": [{"index": 1, "family": "IPv4", "bytes": 10,
            "seconds": 1.0, "retransmits": 0}]});
        let e = crate::from_value::<BtcDocument>("btc", v).unwrap_err();
        assert!(e.to_string().contains("goodput_bps"), "{e}");
    }
}
