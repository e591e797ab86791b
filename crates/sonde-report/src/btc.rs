//! `sonde btc -J` documents (RFC 3148 bulk transfer capacity): one TCP session per size and
//! family, and the statistics of their goodput per family. This module reads them; the
//! tables are [`crate::btc_report`]'s.

use serde::Serialize;
use serde_json::Value;

use sonde_schema::btc::BtcDocument;

use crate::json::text;

/// One session as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    pub index: Option<u64>,
    pub family: String,
    pub bytes: Option<u64>,
    pub seconds: Option<f64>,
    pub goodput_bps: Option<f64>,
    pub retransmits: Option<u64>,
    /// Seconds since the Unix epoch (None in documents from before it was recorded).
    pub start_unix_s: Option<f64>,
}

/// A session that failed, with its error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedRow {
    pub index: u64,
    pub family: String,
    pub size: u64,
    pub error: String,
}

/// One family's statistics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyStats {
    pub family: String,
    pub sessions: Option<u64>,
    pub min_bps: Option<f64>,
    pub median_bps: Option<f64>,
    pub mean_bps: Option<f64>,
    pub max_bps: Option<f64>,
    pub stddev_bps: Option<f64>,
    /// (bits/s)^2.
    pub variance: Option<f64>,
}

/// A btc run as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BtcRun {
    pub host: Option<String>,
    pub sessions: Vec<SessionRow>,
    pub summary: Vec<FamilyStats>,
    pub failed: Vec<FailedRow>,
    /// The server sent (`-R`).
    pub reverse: bool,
    pub partial: bool,
    pub error: Option<String>,
}

impl BtcRun {
    /// "btc, HOST".
    pub fn label(&self) -> String {
        match &self.host {
            Some(h) => format!("btc, {h}"),
            None => "btc".into(),
        }
    }

    /// Seconds the sessions moved data.
    pub fn seconds(&self) -> Option<f64> {
        Some(self.sessions.iter().filter_map(|s| s.seconds).sum::<f64>()).filter(|s| *s > 0.0)
    }
}

/// Whether `doc` is a btc document (its kind, or its sessions and TCP payload layer).
pub fn is_btc(doc: &Value) -> bool {
    text(doc, &["kind"]).as_deref() == Some("btc")
        || (doc.get("sessions").is_some_and(Value::is_array)
            && text(doc, &["layer"]).as_deref() == Some("TCP payload"))
}

/// Reads a btc document through its model ([`sonde_schema::btc`]); a document that does not
/// fit it is an error naming the kind and the field.
pub fn read(doc: &Value) -> Result<BtcRun, String> {
    let doc: BtcDocument = crate::json::model("btc", doc)?;
    let finite = |f: f64| Some(f).filter(|f| f.is_finite());
    let summary = doc
        .summary
        .into_iter()
        .map(|(family, s)| FamilyStats {
            family,
            sessions: Some(s.sessions),
            min_bps: finite(s.min_bps),
            median_bps: finite(s.median_bps),
            mean_bps: finite(s.mean_bps),
            max_bps: finite(s.max_bps),
            stddev_bps: s.stddev_bps.and_then(finite),
            variance: s.variance.and_then(finite),
        })
        .collect();
    Ok(BtcRun {
        host: doc.host,
        sessions: doc
            .sessions
            .into_iter()
            .map(|s| SessionRow {
                index: Some(u64::from(s.index)),
                family: s.family,
                bytes: Some(s.bytes),
                seconds: finite(s.seconds),
                goodput_bps: finite(s.goodput_bps),
                retransmits: Some(s.retransmits),
                start_unix_s: finite(s.start_unix_s).filter(|t| *t > 0.0),
            })
            .collect(),
        summary,
        failed: doc
            .failed
            .into_iter()
            .map(|f| FailedRow {
                index: u64::from(f.index),
                family: f.family,
                size: f.size,
                error: f.error,
            })
            .collect(),
        reverse: doc.reverse,
        partial: doc.envelope.partial,
        error: doc.envelope.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_that_does_not_fit_the_model_is_an_error_naming_the_kind() {
        let doc = serde_json::json!({"kind": "btc", "sessions": [{"index": 1, "bytes": "many"}]});
        let e = read(&doc).unwrap_err();
        assert!(e.contains("btc") && e.contains("invalid type"), "{e}");
        let ok = serde_json::json!({"kind": "btc", "host": "h", "sessions": [{"index": 1,
            "family": "IPv4", "bytes": 10, "seconds": 1.0, "goodput_bps": 80.0, "retransmits": 0}]});
        let run = read(&ok).unwrap();
        assert_eq!(run.label(), "btc, h");
        assert_eq!(run.sessions[0].goodput_bps, Some(80.0));
        assert_eq!(run.sessions[0].start_unix_s, None, "0 is not a time");
        assert!(run.failed.is_empty() && !run.reverse);
    }

    #[test]
    fn failed_sessions_and_the_spread_are_read() {
        let doc = serde_json::json!({"kind": "btc", "reverse": true, "sessions": [{"index": 1,
            "family": "IPv4", "bytes": 10, "seconds": 1.0, "goodput_bps": 80.0,
            "retransmits": 0, "start_unix_s": 1.7e9}],
            "failed": [{"index": 2, "family": "IPv6", "size": 10, "error": "refused"}],
            "summary": {"IPv4": {"sessions": 1, "min_bps": 80.0, "max_bps": 80.0,
                "mean_bps": 80.0, "median_bps": 80.0, "stddev_bps": 0.0, "variance": 0.0}}});
        let run = read(&doc).unwrap();
        assert!(run.reverse);
        assert_eq!(run.sessions[0].start_unix_s, Some(1.7e9));
        assert_eq!(run.failed[0].error, "refused");
        assert_eq!(run.summary[0].stddev_bps, Some(0.0));
    }
}
