//! `sonde rrul -J`: latency while TCP streams load the path, one phase after another (idle,
//! download, upload, both), each with the goodput of its load and the latency summary of
//! its probes ([`crate::latency::LatencySummary`]).

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// A phase is the runtime's own result.
pub use sonde_stats::latency::model::RrulPhase;

/// The whole document. A run that failed before its first phase has only the envelope, so
/// everything above the phases reads as absent when missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RrulDocument {
    /// `"sonde 0.1.0"`.
    #[serde(default)]
    pub version: Option<String>,
    /// The host as the user typed it.
    #[serde(default)]
    pub target: Option<String>,
    /// The server's address and port.
    #[serde(default)]
    pub remote: Option<String>,
    /// TCP streams per loaded direction.
    #[serde(default)]
    pub streams: Option<u32>,
    /// Seconds each phase lasts.
    #[serde(default)]
    pub phase_secs: Option<f64>,
    /// Seconds between probes.
    #[serde(default)]
    pub step_secs: Option<f64>,
    /// In the order run.
    #[serde(default)]
    pub phases: Vec<RrulPhase>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::tests::summary;

    fn document() -> RrulDocument {
        RrulDocument {
            version: Some("sonde test".into()),
            target: Some("h".into()),
            remote: Some("127.0.0.1:5201".into()),
            streams: Some(2),
            phase_secs: Some(1.0),
            step_secs: Some(0.1),
            phases: vec![RrulPhase {
                name: "download".into(),
                download_bps: Some(9e8),
                upload_bps: None,
                latency: summary(),
                median_inflation_ms: Some(2.0),
                p99_inflation_ms: None,
                load_error: None,
            }],
            envelope: Envelope::new("rrul", false, None),
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = document();
        let v = crate::to_value(&doc);
        assert_eq!(v["phases"][0]["latency"]["loss"]["sent"], 4);
        assert_eq!(v["kind"], "rrul");
        let back: RrulDocument = crate::from_value("rrul", v).unwrap();
        assert_eq!(back, doc);
        let failed = serde_json::json!({"kind": "rrul", "partial": true, "error": "refused"});
        let f: RrulDocument = crate::from_value("rrul", failed).unwrap();
        assert!(f.phases.is_empty() && f.envelope.partial);
    }

    #[test]
    fn a_phase_without_its_latency_is_refused_naming_the_field() {
        let v = serde_json::json!({"phases": [{"name": "idle", "download_bps": 1.0}]});
        let e = crate::from_value::<RrulDocument>("rrul", v).unwrap_err();
        assert!(
            e.to_string().starts_with("not a valid rrul document")
                && e.to_string().contains("latency"),
            "{e}"
        );
    }
}
