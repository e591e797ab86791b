//! `sonde rrul -J` documents: latency while TCP streams load the path, one phase after
//! another (idle, download, upload, both). This module reads them; the phases table is
//! [`crate::rrul_report`]'s.

use serde::Serialize;
use serde_json::Value;

use crate::json::{items, num, text};

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

/// Reads an rrul document.
pub fn read(doc: &Value) -> RrulRun {
    RrulRun {
        target: text(doc, &["target"]),
        streams: num(doc, &["streams"]),
        phase_secs: num(doc, &["phase_secs"]),
        phases: items(doc, "phases")
            .map(|p| PhaseRow {
                name: text(p, &["name"]).unwrap_or_default(),
                download_bps: num(p, &["download_bps"]),
                upload_bps: num(p, &["upload_bps"]),
                rtt_median_ms: num(p, &["latency", "rtt", "median_ms"]),
                rtt_p99_ms: num(p, &["latency", "rtt", "p99_ms"]),
                loss_percent: num(p, &["latency", "loss", "loss_percent"]),
                median_inflation_ms: num(p, &["median_inflation_ms"]),
                p99_inflation_ms: num(p, &["p99_inflation_ms"]),
                load_error: text(p, &["load_error"]),
            })
            .collect(),
        partial: doc.get("partial").and_then(Value::as_bool) == Some(true),
        error: text(doc, &["error"]),
    }
}
