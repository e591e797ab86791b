//! Reading a rate-sweep document (`sonde sweep -J`).
//!
//! The document holds every step it ran (offered rate, what the receiver counted, loss,
//! whether a search step passed), the rate each search found per datagram length and
//! direction, and with a rate list the knee of each direction: the lowest asked rate the
//! achieved one stopped following. The report draws the steps and tabulates the results
//! (in `sweep_report`); nothing here recomputes a verdict the sweep already gave,
//! except whether a listed row follows its asked rate, with the sweep's own rule and
//! tolerance.

use serde::Serialize;
use serde_json::Value;

use crate::json::{at, items, num, text, uint};

/// One step of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepStepView {
    pub index: u64,
    pub length: u64,
    /// up, down or bidir.
    pub direction: String,
    /// search, confirm or listed.
    pub kind: String,
    pub offered_bps: f64,
    pub achieved_bps: Option<f64>,
    pub loss_percent: Option<f64>,
    pub passed: Option<bool>,
    /// The step's sender fell short with too little loss to fail it: the rate ran again.
    pub rerun: bool,
    /// A listed rate whose sender still fell short after its reruns, the receiver getting
    /// what was sent: the sending host set its achieved rate.
    pub sender_short: bool,
    pub seconds: Option<f64>,
}

/// What one search found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepResultView {
    pub length: u64,
    pub direction: String,
    /// found, at_max_rate, below_floor, step_limit or sender_limited.
    pub verdict: String,
    pub rate_bps: Option<f64>,
    pub datagrams_per_sec: Option<f64>,
    pub loss_percent: Option<f64>,
    pub steps: Option<u64>,
    pub seconds: Option<f64>,
}

/// A sweep as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRun {
    pub host: Option<String>,
    /// udp or tcp.
    pub protocol: String,
    /// search or rates.
    pub mode: String,
    /// The layer its rates are counted at ("UDP payload").
    pub layer: Option<String>,
    pub step_secs: Option<f64>,
    pub max_loss_percent: Option<f64>,
    /// Repeat runs a found rate had to pass (`--confirm`; 0: none).
    pub confirm: Option<u64>,
    pub tolerance_percent: Option<f64>,
    pub steps: Vec<SweepStepView>,
    pub results: Vec<SweepResultView>,
    /// Per direction, the knee of a rate list (None: achieved followed every rate).
    pub knees: Vec<(String, Option<f64>)>,
    pub partial: bool,
    pub error: Option<String>,
}

/// Whether `doc` is a sweep document: a `sweep` settings object and a `steps` list.
pub fn is_sweep(doc: &Value) -> bool {
    doc.get("sweep").is_some_and(Value::is_object) && doc.get("steps").is_some_and(Value::is_array)
}

/// Reads a sweep document; a step without its offered rate is left out, other missing
/// fields are `None` (dashes in the tables).
pub fn read(doc: &Value) -> SweepRun {
    let s = |k: &str| at(doc, &["sweep", k]);
    let steps = items(doc, "steps")
        .filter_map(|v| {
            Some(SweepStepView {
                index: uint(v, &["index"]).unwrap_or(0),
                length: uint(v, &["length"]).unwrap_or(0),
                direction: text(v, &["direction"]).unwrap_or_default(),
                kind: text(v, &["kind"]).unwrap_or_default(),
                offered_bps: num(v, &["offered_bps"])?,
                achieved_bps: num(v, &["achieved_bps"]),
                loss_percent: num(v, &["loss_percent"]),
                passed: v.get("passed").and_then(Value::as_bool),
                rerun: v.get("rerun").and_then(Value::as_bool).unwrap_or(false),
                sender_short: v
                    .get("sender_short")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                seconds: num(v, &["seconds"]),
            })
        })
        .collect();
    let results = items(doc, "results")
        .map(|v| SweepResultView {
            length: uint(v, &["length"]).unwrap_or(0),
            direction: text(v, &["direction"]).unwrap_or_default(),
            verdict: text(v, &["verdict"]).unwrap_or_default(),
            rate_bps: num(v, &["rate_bps"]),
            datagrams_per_sec: num(v, &["datagrams_per_sec"]),
            loss_percent: num(v, &["loss_percent"]),
            steps: uint(v, &["steps"]),
            seconds: num(v, &["seconds"]),
        })
        .collect();
    let knees = items(doc, "knees")
        .map(|v| {
            (
                text(v, &["direction"]).unwrap_or_default(),
                num(v, &["knee_bps"]),
            )
        })
        .collect();
    SweepRun {
        host: s("host").and_then(Value::as_str).map(str::to_owned),
        protocol: s("protocol")
            .and_then(Value::as_str)
            .unwrap_or("udp")
            .to_owned(),
        mode: s("mode")
            .and_then(Value::as_str)
            .unwrap_or("search")
            .to_owned(),
        layer: s("layer").and_then(Value::as_str).map(str::to_owned),
        step_secs: s("step_secs").and_then(Value::as_f64),
        max_loss_percent: s("max_loss_percent").and_then(Value::as_f64),
        confirm: s("confirm").and_then(Value::as_u64),
        tolerance_percent: s("tolerance_percent").and_then(Value::as_f64),
        steps,
        results,
        knees,
        partial: doc.get("partial").and_then(Value::as_bool).unwrap_or(false),
        error: text(doc, &["error"]),
    }
}

impl SweepRun {
    /// How the report names the test: "sweep, udp search" / "sweep, tcp rates".
    pub fn label(&self) -> String {
        format!("sweep, {} {}", self.protocol, self.mode)
    }

    /// Whether a listed step's achieved rate follows its asked one, by the sweep's own rule
    /// and tolerance (None without a tolerance or an achieved rate).
    pub fn follows(&self, s: &SweepStepView) -> Option<bool> {
        let tol = self.tolerance_percent? / 100.0;
        let achieved = s.achieved_bps?;
        Some(sonde_stats::sweep::follows(
            s.offered_bps.max(0.0) as u64,
            achieved,
            tol,
        ))
    }

    /// The (length, direction) pairs of the steps, in the order they ran.
    pub fn series_keys(&self) -> Vec<(u64, String)> {
        let mut keys: Vec<(u64, String)> = Vec::new();
        for s in &self.steps {
            let k = (s.length, s.direction.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_steps_results_and_knees() {
        let d = json!({"sweep": {"protocol": "udp", "mode": "rates", "tolerance_percent": 2.0},
            "steps": [{"index": 1, "length": 1448, "direction": "up", "kind": "listed",
                       "offered_bps": 100, "achieved_bps": 99.0, "loss_percent": 0.0},
                      {"index": 2, "length": 1448, "direction": "up", "kind": "listed",
                       "offered_bps": 200, "achieved_bps": 150.0},
                      {"index": 3}],
            "results": [], "knees": [{"direction": "up", "knee_bps": 200}], "partial": false});
        assert!(is_sweep(&d));
        let r = read(&d);
        assert_eq!(r.steps.len(), 2);
        assert_eq!(r.follows(&r.steps[0]), Some(true));
        assert_eq!(r.follows(&r.steps[1]), Some(false));
        assert_eq!(r.knees, vec![("up".to_owned(), Some(200.0))]);
        assert_eq!(r.series_keys(), vec![(1448, "up".to_owned())]);
        // A stress load-step document also has steps with offered_bps, but no sweep object.
        assert!(!is_sweep(&json!({"steps": [{"offered_bps": 1}]})));
    }
}
