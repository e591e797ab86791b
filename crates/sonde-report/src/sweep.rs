//! Reading a rate-sweep document (`sonde sweep -J`).
//!
//! The document holds every step it ran (offered rate, what the receiver counted, loss,
//! whether a search step passed), the rate each search found per datagram length and
//! direction, and with a rate list the knee of each direction: the lowest asked rate the
//! achieved one stopped following. The report draws the steps and tabulates the results
//! (in `sweep_report`); nothing here recomputes a verdict the sweep already gave,
//! except whether a listed row follows its asked rate, with the sweep's own rule and
//! tolerance.
//!
//! Read through the document's typed model ([`sonde_schema::sweep`]): a result without its
//! length, direction or verdict is an error naming the field; a step without its offered
//! rate is left out, as it always was.

use serde::Serialize;
use serde_json::Value;
use sonde_schema::sweep::SweepDocument;

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

/// Reads a sweep document through its model; a step without its offered rate is left out,
/// other missing fields the model allows are `None` (dashes in the tables).
pub fn read(doc: &Value) -> Result<SweepRun, String> {
    let d: SweepDocument = crate::json::model("sweep", doc)?;
    let finite = |f: f64| Some(f).filter(|f| f.is_finite());
    let steps = d
        .steps
        .iter()
        .filter_map(|v| {
            Some(SweepStepView {
                index: u64::from(v.index),
                length: u64::from(v.length),
                direction: v
                    .direction
                    .map(|d| d.as_str())
                    .unwrap_or_default()
                    .to_owned(),
                kind: v.kind.map(|k| k.as_str()).unwrap_or_default().to_owned(),
                offered_bps: v.offered_bps? as f64,
                achieved_bps: v.achieved_bps.and_then(finite),
                loss_percent: v.loss_percent.and_then(finite),
                passed: v.passed,
                rerun: v.rerun,
                sender_short: v.sender_short,
                seconds: v.seconds.and_then(finite),
            })
        })
        .collect();
    let results = d
        .results
        .iter()
        .map(|v| SweepResultView {
            length: u64::from(v.length),
            direction: v.direction.as_str().to_owned(),
            verdict: v.verdict.as_str().to_owned(),
            rate_bps: v.rate_bps.map(|r| r as f64),
            datagrams_per_sec: v.datagrams_per_sec.and_then(finite),
            loss_percent: v.loss_percent.and_then(finite),
            steps: v.steps.map(u64::from),
            seconds: v.seconds.and_then(finite),
        })
        .collect();
    let knees = d
        .knees
        .iter()
        .map(|k| {
            (
                k.direction.as_str().to_owned(),
                k.knee_bps.map(|b| b as f64),
            )
        })
        .collect();
    let s = d.sweep;
    Ok(SweepRun {
        host: s.host,
        protocol: s.protocol.unwrap_or_else(|| "udp".into()),
        mode: s.mode.unwrap_or_else(|| "search".into()),
        layer: s.layer,
        step_secs: s.step_secs.and_then(finite),
        max_loss_percent: s.max_loss_percent.and_then(finite),
        confirm: s.confirm.map(u64::from),
        tolerance_percent: s.tolerance_percent.and_then(finite),
        steps,
        results,
        knees,
        partial: d.envelope.partial,
        error: d.envelope.error,
    })
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
        let r = read(&d).unwrap();
        assert_eq!(r.steps.len(), 2);
        assert_eq!(r.follows(&r.steps[0]), Some(true));
        assert_eq!(r.follows(&r.steps[1]), Some(false));
        assert_eq!(r.knees, vec![("up".to_owned(), Some(200.0))]);
        assert_eq!(r.series_keys(), vec![(1448, "up".to_owned())]);
        // A stress load-step document also has steps with offered_bps, but no sweep object.
        assert!(!is_sweep(&json!({"steps": [{"offered_bps": 1}]})));
    }

    #[test]
    fn a_result_without_its_verdict_is_an_error_not_a_dash() {
        let d = json!({"sweep": {"protocol": "udp", "mode": "search"}, "steps": [],
            "results": [{"length": 1448, "direction": "up", "verdict": "below_floor"}]});
        assert_eq!(read(&d).unwrap().results[0].verdict, "below_floor");
        let lacking = json!({"sweep": {"protocol": "udp", "mode": "search"}, "steps": [],
            "results": [{"length": 1448, "direction": "up", "rate_bps": 1000}]});
        let e = crate::result::read(&lacking).unwrap_err();
        assert!(e.contains("sweep") && e.contains("verdict"), "{e}");
    }
}
