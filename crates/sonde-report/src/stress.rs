//! Reading `sonde stress -J` documents and the series a report draws from them.
//!
//! Five shapes: a run (`start`, `intervals`, `end`): each connection's speed per interval and
//! Jain's fairness index per interval; a ramp (`ramp`: one row per connection count): the most
//! each way against the number of connections; and a load-step run (`steps`): achieved rate
//! and both ends' CPU against the offered rate, and the device's own load where a
//! `--load-probe` read it; a `--storm` and an `--overload`, which are
//! tables only ([`crate::stress_end`]). A run's end (per connection and overall) is read
//! too, for its summary tables. Speeds are drawn in the direction the mode
//! carries (received for chargen, sent otherwise); a run of many connections is drawn with at
//! most [`MAX_LINES`] lines (the first ones, said in the title).
//!
//! Each shape is read through its model in `sonde_schema::stress`: a run, ramp or steps
//! document that does not fit it is an error naming the field; a storm or overload whose
//! section does not fit reads as a failed test with that reason.

use serde::Serialize;
use serde_json::Value;

use sonde_schema::stress::ramp::RampDocument;
use sonde_schema::stress::run::RunDocument;
use sonde_schema::stress::steps::StepsDocument;
use sonde_schema::stress::{Header, Shape, StressDocument};

/// Most per-connection lines one chart draws.
pub const MAX_LINES: usize = 32;

/// What a stress document holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StressKind {
    Run,
    Ramp,
    Steps,
    Storm,
    Overload,
}

/// Jain's index of one interval, each direction (`None`: nothing moved that way).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FairnessPoint {
    /// The interval's end, seconds.
    pub at: f64,
    pub sent: Option<f64>,
    pub received: Option<f64>,
}

/// One ramp row (a UDP ramp's `connections` are flows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RampPoint {
    pub connections: f64,
    pub sent_bps: f64,
    pub received_bps: f64,
    /// UDP echo and chargen: requests that got no reply, percent.
    pub loss_percent: Option<f64>,
    /// Runs at this count (`--repeat`; the rates above are their mean), 1 in older documents.
    pub runs: usize,
    /// The largest rate each way over the runs (absent in older documents).
    pub max_sent_bps: Option<f64>,
    pub max_received_bps: Option<f64>,
}

/// One load step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepPoint {
    pub offered_bps: f64,
    pub achieved_bps: Option<f64>,
    /// `None`: the server did not report it.
    pub server_cpu: Option<f64>,
    pub client_cpu: Option<f64>,
    /// The `--load-probe` reading; `None` without a probe or when it gave none.
    pub device_load: Option<f64>,
    /// Why the probe gave no reading at this step.
    pub device_note: Option<String>,
}

/// One stress document, as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StressRun {
    /// `shape` in the report's JSON: `kind` there is the document's kind, "stress".
    #[serde(rename = "shape")]
    pub kind: StressKind,
    /// discard, chargen or echo (steps: the protocol).
    pub mode: String,
    /// tcp or udp.
    pub transport: String,
    pub connections: u64,
    /// Per connection: (interval end s, bits/s) in the mode's direction.
    pub speeds: Vec<(u64, Vec<(f64, f64)>)>,
    pub fairness: Vec<FairnessPoint>,
    pub ramp: Vec<RampPoint>,
    pub steps: Vec<StepPoint>,
    /// Steps: the `--load-probe` command that read the device's load, if one did.
    pub load_probe: Option<String>,
    /// Seconds measured (runs).
    pub seconds: Option<f64>,
    pub error: Option<String>,
    /// A run's end figures (runs only).
    pub end: Option<crate::stress_end::RunEnd>,
    pub storm: Option<sonde_stats::stress::storm::StormReport>,
    pub overload: Option<sonde_stats::stress::overload::OverloadReport>,
}

/// True for any of the five shapes.
pub fn is_stress(doc: &Value) -> bool {
    doc.get("start")
        .is_some_and(|s| s.get("connect_timeout_secs").is_some())
        || doc.get("storm").is_some_and(Value::is_object)
        || doc.get("overload").is_some_and(Value::is_object)
        || doc.get("ramp").is_some_and(Value::is_array)
        || doc
            .get("steps")
            .and_then(Value::as_array)
            .is_some_and(|s| s.iter().all(|r| r.get("offered_bps").is_some()))
}

/// Reads what the report needs through the document's model.
///
/// # Errors
/// A run, ramp or steps document that does not fit its model: the kind and the field.
pub fn read(doc: &Value) -> Result<StressRun, String> {
    let shape = Shape::of(doc);
    let model = match StressDocument::from_value(doc.clone()) {
        Ok(m) => m,
        Err(e) if matches!(shape, Shape::Storm | Shape::Overload) => {
            return Ok(unreadable_section(doc, shape, &e));
        }
        Err(e) => return Err(e.to_string()),
    };
    Ok(match model {
        StressDocument::Run(r) => run(*r),
        StressDocument::Ramp(r) => ramp(*r),
        StressDocument::Steps(s) => steps(*s),
        StressDocument::Storm(d) => {
            let st = crate::stress_end::storm(&d.storm);
            StressRun {
                seconds: Some(st.seconds),
                storm: Some(st),
                ..empty(StressKind::Storm, d.mode, "tcp".into(), d.envelope.error)
            }
        }
        StressDocument::Overload(d) => {
            let o = crate::stress_end::overload(&d.overload);
            StressRun {
                seconds: Some(o.held_seconds),
                overload: Some(o),
                ..empty(StressKind::Overload, d.mode, "tcp".into(), d.envelope.error)
            }
        }
    })
}

/// A storm or overload whose section does not read: the test, failed with the reason (the
/// document's own error first, as the command said it).
fn unreadable_section(doc: &Value, shape: Shape, e: &sonde_schema::SchemaError) -> StressRun {
    let (kind, key) = match shape {
        Shape::Overload => (StressKind::Overload, "overload"),
        _ => (StressKind::Storm, "storm"),
    };
    let h = Header::of(doc);
    let why = h
        .envelope
        .error
        .unwrap_or_else(|| format!("its {key} section does not read: {}", e.source));
    empty(kind, h.mode.unwrap_or_default(), "tcp".into(), Some(why))
}

/// A document of `kind` with no series yet.
fn empty(kind: StressKind, mode: String, transport: String, error: Option<String>) -> StressRun {
    StressRun {
        kind,
        mode,
        transport,
        connections: 0,
        speeds: Vec::new(),
        fairness: Vec::new(),
        ramp: Vec::new(),
        steps: Vec::new(),
        load_probe: None,
        seconds: None,
        error,
        end: None,
        storm: None,
        overload: None,
    }
}

fn finite(f: f64) -> Option<f64> {
    Some(f).filter(|f| f.is_finite())
}

/// A ramp's rows.
fn ramp(d: RampDocument) -> StressRun {
    StressRun {
        ramp: d
            .ramp
            .iter()
            .map(|r| RampPoint {
                connections: f64::from(r.mean.connections),
                sent_bps: r.mean.sent_bps,
                received_bps: r.mean.received_bps,
                loss_percent: r.mean.udp.and_then(|u| u.loss_percent),
                runs: r.runs.len().max(1),
                max_sent_bps: r.max.map(|m| m.sent_bps),
                max_received_bps: r.max.map(|m| m.received_bps),
            })
            .collect(),
        ..empty(StressKind::Ramp, d.mode, d.transport, d.envelope.error)
    }
}

/// A load-step run's rows (its protocol is the transport).
fn steps(d: StepsDocument) -> StressRun {
    StressRun {
        steps: d
            .steps
            .iter()
            .map(|r| StepPoint {
                offered_bps: r.offered_bps,
                achieved_bps: r.achieved_bps.and_then(finite),
                server_cpu: r.server_cpu_percent.and_then(finite),
                client_cpu: r.client_cpu_percent.and_then(finite),
                device_load: r
                    .device_load
                    .as_ref()
                    .and_then(|d| d.value.and_then(finite)),
                device_note: r.device_load.as_ref().and_then(|d| d.error.clone()),
            })
            .collect(),
        load_probe: d.load_probe,
        ..empty(
            StressKind::Steps,
            String::new(),
            d.protocol,
            d.envelope.error,
        )
    }
}

/// A run: the fairness per interval and the first [`MAX_LINES`] connections' speeds in the
/// mode's direction, and its end.
fn run(d: RunDocument) -> StressRun {
    let (mode, transport, connections) = d.start.map_or_else(
        || (String::new(), "tcp".to_string(), 0),
        |s| (s.mode, s.transport, u64::from(s.connections)),
    );
    let mut run = empty(StressKind::Run, mode, transport, d.envelope.error);
    run.connections = connections;
    let chargen = run.mode == "chargen";
    let mut per: std::collections::BTreeMap<u64, Vec<(f64, f64)>> = Default::default();
    for iv in &d.intervals {
        run.fairness.push(FairnessPoint {
            at: iv.end,
            sent: iv.fairness_sent.and_then(finite),
            received: iv.fairness_received.and_then(finite),
        });
        for c in &iv.connections {
            let bps = if chargen { c.received_bps } else { c.sent_bps };
            if c.id as usize <= MAX_LINES {
                per.entry(u64::from(c.id)).or_default().push((iv.end, bps));
            }
        }
    }
    run.speeds = per.into_iter().collect();
    run.seconds = d.end.as_ref().and_then(|e| finite(e.seconds));
    run.end = d.end.as_ref().map(crate::stress_end::run_end);
    run
}

impl StressRun {
    /// How the report names the test: "stress, tcp echo", "stress ramp, tcp discard",
    /// "stress steps, udp".
    pub fn label(&self) -> String {
        match self.kind {
            StressKind::Run => format!("stress, {} {}", self.transport, self.mode),
            StressKind::Ramp => format!("stress ramp, {} {}", self.transport, self.mode),
            StressKind::Steps => format!("stress steps, {}", self.transport),
            StressKind::Storm => format!("stress storm, {}", self.mode),
            StressKind::Overload => format!("stress overload, {}", self.mode),
        }
    }

    /// The direction the speeds are drawn in, for labels.
    pub fn direction(&self) -> &'static str {
        if self.mode == "chargen" {
            "from the device"
        } else {
            "to the device"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_runs_ramps_and_steps() {
        let run = json!({
            "start": {"mode": "chargen", "transport": "udp", "connections": 2, "connect_timeout_secs": 0.0},
            "intervals": [{"end": 0.5, "fairness_sent": null, "fairness_received": 0.9,
                "connections": [{"id": 1, "sent_bps": 0.0, "received_bps": 10.0},
                                {"id": 2, "sent_bps": 0.0, "received_bps": 5.0}]}],
            "end": {"seconds": 0.5, "connect": {"asked": 2, "connected": 2, "refused": 0,
                "timed_out": 0, "other_failed": 0, "seconds": 0.0}, "connections": [],
                "sent_bytes": 0, "received_bytes": 0, "sent_bps": 0.0, "received_bps": 0.0,
                "closed_clean": 0, "closed_reset": 0, "closed_timeout": 0,
                "failed_during_run": 0, "echo_mismatched_bytes": 0},
            "error": null
        });
        assert!(is_stress(&run));
        let r = read(&run).unwrap();
        assert_eq!(r.kind, StressKind::Run);
        assert_eq!(
            r.speeds,
            vec![(1, vec![(0.5, 10.0)]), (2, vec![(0.5, 5.0)])]
        );
        assert_eq!(
            r.fairness,
            vec![FairnessPoint {
                at: 0.5,
                sent: None,
                received: Some(0.9)
            }]
        );
        let ramp = json!({"mode": "discard", "ramp": [{"connections": 4, "sent_bps": 8e6, "received_bps": 0.0}]});
        assert_eq!(read(&ramp).unwrap().ramp[0].sent_bps, 8e6);
        assert_eq!(read(&ramp).unwrap().label(), "stress ramp, tcp discard");
        let udp_ramp = json!({"mode": "echo", "transport": "udp", "ramp": [{"connections": 2,
            "sent_bps": 1e6, "received_bps": 9e5, "udp": {"loss_percent": 10.0}}]});
        let r = read(&udp_ramp).unwrap();
        assert_eq!(r.label(), "stress ramp, udp echo");
        assert_eq!(r.ramp[0].loss_percent, Some(10.0));
        assert_eq!((r.ramp[0].runs, r.ramp[0].max_sent_bps), (1, None));
        let repeated = json!({"mode": "discard", "repeat": 2, "ramp": [{"connections": 3,
            "sent_bps": 2e6, "received_bps": 0.0, "max": {"connections": 3, "sent_bps": 3e6,
            "received_bps": 0.0}, "runs": [
                {"connections": 3, "sent_bps": 1e6, "received_bps": 0.0},
                {"connections": 3, "sent_bps": 3e6, "received_bps": 0.0}]}]});
        let r = read(&repeated).unwrap();
        assert_eq!((r.ramp[0].sent_bps, r.ramp[0].runs), (2e6, 2));
        assert_eq!(r.ramp[0].max_sent_bps, Some(3e6));
        let steps = json!({"protocol": "tcp", "steps": [{"offered_bps": 1e7, "achieved_bps": 9e6,
            "server_cpu_percent": null, "client_cpu_percent": 1.5}]});
        assert!(is_stress(&steps));
        let st = read(&steps).unwrap().steps;
        assert_eq!((st[0].server_cpu, st[0].client_cpu), (None, Some(1.5)));
        assert_eq!(
            (st[0].device_load, read(&steps).unwrap().load_probe),
            (None, None)
        );
        let probed = json!({"protocol": "tcp", "load_probe": "cat /x", "steps": [
            {"offered_bps": 1e7, "device_load": {"value": 42.0, "exit_status": 0, "error": null}},
            {"offered_bps": 2e7, "device_load": {"value": null, "exit_status": 1,
                "error": "load probe exited with status 1"}}]});
        let r = read(&probed).unwrap();
        assert_eq!(r.load_probe.as_deref(), Some("cat /x"));
        assert_eq!(
            (r.steps[0].device_load, r.steps[1].device_load),
            (Some(42.0), None)
        );
        assert_eq!(
            r.steps[1].device_note.as_deref(),
            Some("load probe exited with status 1")
        );
        // A latency document has start.mode but no connect_timeout_secs.
        assert!(!is_stress(&json!({"start": {"mode": "udp"}})));
    }

    /// A run whose figures do not fit the model is an error naming the field, never a row of
    /// zeros; a storm's section that does not fit is a failed test with the reason.
    #[test]
    fn a_document_that_does_not_fit_its_model_is_refused_by_field() {
        let run = json!({
            "start": {"mode": "echo", "connections": 1, "connect_timeout_secs": 5.0},
            "intervals": [{"end": 0.5, "connections": [{"id": 1, "received_bps": 10.0}]}]
        });
        let e = read(&run).unwrap_err();
        assert!(e.contains("stress") && e.contains("sent_bps"), "{e}");
        let ramp = json!({"mode": "discard", "ramp": [{"sent_bps": 8e6, "received_bps": 0.0}]});
        assert!(read(&ramp).unwrap_err().contains("connections"));
        let storm = json!({"mode": "echo", "storm": {"attempts": "many"}, "error": null});
        let r = read(&storm).unwrap();
        assert_eq!(
            (r.label(), &r.kind),
            ("stress storm, echo".into(), &StressKind::Storm)
        );
        let why = r.error.unwrap_or_default();
        assert!(
            why.starts_with("its storm section does not read: "),
            "{why}"
        );
    }
}
