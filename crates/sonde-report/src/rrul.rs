//! `sonde rrul -J` documents: latency while TCP streams load the path, one phase after
//! another (idle, download, upload, both). This module reads them; the phases table is
//! [`crate::rrul_report`]'s.

use serde::Serialize;
use serde_json::Value;
use sonde_schema::rrul::RrulDocument;

use crate::json::text;

/// One phase as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseRow {
    pub name: String,
    pub download_bps: Option<f64>,
    pub upload_bps: Option<f64>,
    pub rtt_median_ms: Option<f64>,
    pub rtt_p99_ms: Option<f64>,
    pub loss_percent: Option<f64>,
    pub median_inflation_ms: Option<f64>,
    pub p99_inflation_ms: Option<f64>,
    pub load_error: Option<String>,
}

/// An rrul run as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RrulRun {
    pub target: Option<String>,
    pub streams: Option<f64>,
    pub phase_secs: Option<f64>,
    pub phases: Vec<PhaseRow>,
    pub partial: bool,
    pub error: Option<String>,
}

impl RrulRun {
    /// "rrul, HOST".
    pub fn label(&self) -> String {
        match &self.target {
            Some(t) => format!("rrul, {t}"),
            None => "rrul".into(),
        }
    }

    /// Seconds measured: the phases run.
    pub fn seconds(&self) -> Option<f64> {
        self.phase_secs
            .map(|s| s * self.phases.len() as f64)
            .filter(|s| *s > 0.0)
    }
}

/// Whether `doc` is an rrul document (its kind, or its phases of latency under load).
pub fn is_rrul(doc: &Value) -> bool {
    text(doc, &["kind"]).as_deref() == Some("rrul")
        || (doc.get("phases").is_some_and(Value::is_array) && doc.get("step_secs").is_some())
}

/// Reads an rrul document through its model ([`sonde_schema::rrul`]); a phase without its
/// name or latency summary is an error naming the field.
pub fn read(doc: &Value) -> Result<RrulRun, String> {
    let doc: RrulDocument = crate::json::model("rrul", doc)?;
    let finite = |f: f64| Some(f).filter(|f| f.is_finite());
    let phases = doc
        .phases
        .into_iter()
        .map(|p| {
            let rtt = p.latency.rtt;
            PhaseRow {
                name: p.name,
                download_bps: p.download_bps.and_then(finite),
                upload_bps: p.upload_bps.and_then(finite),
                rtt_median_ms: rtt.and_then(|r| finite(r.median_ms)),
                rtt_p99_ms: rtt.and_then(|r| finite(r.p99_ms)),
                loss_percent: finite(p.latency.loss.loss_percent),
                median_inflation_ms: p.median_inflation_ms.and_then(finite),
                p99_inflation_ms: p.p99_inflation_ms.and_then(finite),
                load_error: p.load_error,
            }
        })
        .collect();
    Ok(RrulRun {
        target: doc.target,
        streams: doc.streams.map(f64::from),
        phase_secs: doc.phase_secs.and_then(finite),
        phases,
        partial: doc.envelope.partial,
        error: doc.envelope.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_without_its_loss_is_an_error_not_a_dash() {
        let doc = serde_json::json!({"kind": "rrul", "streams": 1, "phase_secs": 1.0,
            "phases": [{"name": "idle", "latency": {"jitter_ms": 0.1,
                "rtt": {"samples": 1, "min_ms": 1.0, "mean_ms": 1.0, "median_ms": 1.0,
                        "p90_ms": 1.0, "p99_ms": 1.0, "p999_ms": 1.0, "max_ms": 1.0,
                        "stddev_ms": 0.0}}}]});
        let e = crate::result::read(&doc).unwrap_err();
        assert!(e.contains("rrul") && e.contains("loss"), "{e}");
        let failed = serde_json::json!({"kind": "rrul", "partial": true, "error": "refused"});
        let r = read(&failed).unwrap();
        assert!(r.phases.is_empty() && r.partial);
        assert_eq!(r.error.as_deref(), Some("refused"));
    }
}
