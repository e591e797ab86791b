//! `sonde rrul -J` documents: latency while TCP streams load the path, one phase after
//! another (idle, download, upload, both). The report shows a row per phase: the load's
//! goodput, the round-trip times under it, and how much the load inflated them.

use serde::Serialize;
use serde_json::Value;

use crate::fmt::{self, opt};
use crate::result::{items, num, text};
use crate::sections::Section;
use crate::tables::{Table, DASH};

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

/// The phases table.
pub fn sections(r: &RrulRun) -> Vec<Section> {
    let mut t = Table::new(&[
        "Phase",
        "Download",
        "Upload",
        "RTT median",
        "RTT p99",
        "Loss",
        "Median inflation",
        "p99 inflation",
        "Load error",
    ]);
    for p in &r.phases {
        t.rows.push(vec![
            p.name.clone(),
            opt(p.download_bps, fmt::rate),
            opt(p.upload_bps, fmt::rate),
            opt(p.rtt_median_ms, fmt::ms),
            opt(p.rtt_p99_ms, fmt::ms),
            opt(p.loss_percent, |v| format!("{v:.2} %")),
            opt(p.median_inflation_ms, fmt::ms),
            opt(p.p99_inflation_ms, fmt::ms),
            p.load_error.clone().unwrap_or_else(|| DASH.into()),
        ]);
    }
    let note = format!(
        "Round trips under each phase's load; inflation is against the idle phase.{}",
        r.streams
            .map(|n| format!(" {n} TCP stream(s) per loaded direction."))
            .unwrap_or_default()
    );
    vec![Section::new(
        "Latency under load",
        Some(note),
        t.drop_empty_columns(1),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{read as read_doc, ResultDoc};
    use serde_json::json;

    #[test]
    fn an_rrul_document_reads_as_its_phases() {
        let doc = json!({"kind": "rrul", "partial": false, "error": null,
            "version": "sonde 0.1.0", "target": "h", "remote": "127.0.0.1:5201", "streams": 2,
            "phase_secs": 1.0, "step_secs": 0.1,
            "phases": [
                {"name": "idle", "latency": {"rtt": {"median_ms": 0.1, "p99_ms": 0.3},
                                              "loss": {"loss_percent": 0.0}}},
                {"name": "download", "download_bps": 9e8, "median_inflation_ms": 2.0,
                 "latency": {"rtt": {"median_ms": 2.1, "p99_ms": 5.0}}}]});
        let Ok(ResultDoc::Rrul(r)) = read_doc(&doc) else {
            panic!("not read as rrul");
        };
        assert_eq!(r.label(), "rrul, h");
        assert_eq!(r.seconds(), Some(2.0));
        let s = sections(&r);
        assert_eq!(s[0].table.rows.len(), 2);
        assert_eq!(s[0].table.rows[1][0], "download");
    }
}
