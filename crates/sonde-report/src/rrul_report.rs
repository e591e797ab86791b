//! The rrul report: a row per phase, the load's goodput, the round-trip times under it, and
//! how much the load inflated them. Above the reader ([`crate::rrul`]), as every renderer is
//! above the model it shows.

use crate::fmt::{self, opt};
use crate::rrul::RrulRun;
use crate::table::{Section, Table, DASH};

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

    /// A phase's latency summary with the figures its model requires.
    fn latency(median_ms: f64, p99_ms: f64) -> serde_json::Value {
        json!({"rtt": {"samples": 10, "min_ms": median_ms, "mean_ms": median_ms,
                       "median_ms": median_ms, "p90_ms": p99_ms, "p99_ms": p99_ms,
                       "p999_ms": p99_ms, "max_ms": p99_ms, "stddev_ms": 0.1},
               "loss": {"sent": 10, "received": 10, "loss_percent": 0.0},
               "jitter_ms": 0.1})
    }

    #[test]
    fn an_rrul_document_reads_as_its_phases() {
        let doc = json!({"kind": "rrul", "partial": false, "error": null,
            "version": "sonde 0.1.0", "target": "h", "remote": "127.0.0.1:5201", "streams": 2,
            "phase_secs": 1.0, "step_secs": 0.1,
            "phases": [
                {"name": "idle", "latency": latency(0.1, 0.3)},
                {"name": "download", "download_bps": 9e8, "median_inflation_ms": 2.0,
                 "latency": latency(2.1, 5.0)}]});
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
