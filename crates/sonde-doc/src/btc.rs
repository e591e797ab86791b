//! `sonde btc -J` documents (RFC 3148 bulk transfer capacity): one TCP session per size and
//! family, and the statistics of their goodput per family. This module reads them; the
//! tables are [`crate::btc_report`]'s.

use serde::Serialize;
use serde_json::Value;

use crate::json::{items, num, text, uint};

/// One session as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    pub index: Option<u64>,
    pub family: String,
    pub bytes: Option<u64>,
    pub seconds: Option<f64>,
    pub goodput_bps: Option<f64>,
    pub retransmits: Option<u64>,
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
}

/// A btc run as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BtcRun {
    pub host: Option<String>,
    pub sessions: Vec<SessionRow>,
    pub summary: Vec<FamilyStats>,
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

/// Reads a btc document.
pub fn read(doc: &Value) -> BtcRun {
    let summary = doc
        .get("summary")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(family, s)| FamilyStats {
                    family: family.clone(),
                    sessions: uint(s, &["sessions"]),
                    min_bps: num(s, &["min_bps"]),
                    median_bps: num(s, &["median_bps"]),
                    mean_bps: num(s, &["mean_bps"]),
                    max_bps: num(s, &["max_bps"]),
                })
                .collect()
        })
        .unwrap_or_default();
    BtcRun {
        host: text(doc, &["host"]),
        sessions: items(doc, "sessions")
            .map(|s| SessionRow {
                index: uint(s, &["index"]),
                family: text(s, &["family"]).unwrap_or_default(),
                bytes: uint(s, &["bytes"]),
                seconds: num(s, &["seconds"]),
                goodput_bps: num(s, &["goodput_bps"]),
                retransmits: uint(s, &["retransmits"]),
            })
            .collect(),
        summary,
        partial: doc.get("partial").and_then(Value::as_bool) == Some(true),
        error: text(doc, &["error"]),
    }
}
