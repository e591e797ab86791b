//! `sonde btc -J` (RFC 3148 bulk transfer capacity): one TCP session per size and family,
//! and the statistics of their goodput per family.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtcDocument {
    #[serde(default)]
    pub host: Option<String>,
    /// `"TCP payload"`: what the goodput counts.
    #[serde(default)]
    pub layer: Option<String>,
    #[serde(default)]
    pub sessions: Vec<BtcSession>,
    /// Per family (`"IPv4"`, `"IPv6"`).
    #[serde(default)]
    pub summary: BTreeMap<String, BtcStats>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// One session. The figures a report shows are required: a session without one is refused,
/// never read as a zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtcSession {
    /// 1-based, in the order run.
    pub index: u32,
    /// "IPv4" or "IPv6".
    pub family: String,
    /// Bytes asked for (`-n`).
    #[serde(default)]
    pub size: u64,
    /// Bytes the receiver counted.
    pub bytes: u64,
    pub seconds: f64,
    /// TCP payload bits per second at the receiver.
    pub goodput_bps: f64,
    pub retransmits: u64,
    #[serde(default)]
    pub max_cwnd: Option<u64>,
    #[serde(default)]
    pub mean_rtt_us: Option<u32>,
    #[serde(default)]
    pub congestion: Option<String>,
    /// Seconds since the Unix epoch (0 in documents from before it was recorded).
    #[serde(default)]
    pub start_unix_s: f64,
}

/// One family's statistics of the sessions' goodput (bits/s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BtcStats {
    pub sessions: u64,
    pub min_bps: f64,
    pub max_bps: f64,
    pub mean_bps: f64,
    pub median_bps: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = BtcDocument {
            host: Some("h".into()),
            layer: Some("TCP payload".into()),
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
            summary: BTreeMap::from([(
                "IPv4".into(),
                BtcStats {
                    sessions: 1,
                    min_bps: 96e6,
                    max_bps: 96e6,
                    mean_bps: 96e6,
                    median_bps: 96e6,
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
