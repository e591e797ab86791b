//! Reading `sonde stress -J` documents and the series a report draws from them.
//!
//! Five shapes: a run (`start`, `intervals`, `end`): each connection's speed per interval and
//! Jain's fairness index per interval; a ramp (`ramp`: one row per connection count): the most
//! each way against the number of connections; and a load-step run (`steps`): achieved rate
//! and both ends' CPU against the offered rate; a `--storm` and an `--overload`, which are
//! tables only ([`crate::stress_end`]). A run's end (per connection and overall) is read
//! too, for its summary tables. Speeds are drawn in the direction the mode
//! carries (received for chargen, sent otherwise); a run of many connections is drawn with at
//! most [`MAX_LINES`] lines (the first ones, said in the title).

use serde::Serialize;
use serde_json::Value;

use crate::json::{at, num, text};

/// Most per-connection lines one chart draws.
pub const MAX_LINES: usize = 32;

/// What a stress document holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// One load step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepPoint {
    pub offered_bps: f64,
    pub achieved_bps: Option<f64>,
    /// `None`: the server did not report it.
    pub server_cpu: Option<f64>,
    pub client_cpu: Option<f64>,
}

/// One stress document, as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StressRun {
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
    at(doc, &["start", "connect_timeout_secs"]).is_some()
        || doc.get("storm").is_some_and(Value::is_object)
        || doc.get("overload").is_some_and(Value::is_object)
        || doc.get("ramp").is_some_and(Value::is_array)
        || doc
            .get("steps")
            .and_then(Value::as_array)
            .is_some_and(|s| s.iter().all(|r| r.get("offered_bps").is_some()))
}

fn opt_num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

/// Reads what the report needs; missing fields leave their series empty.
pub fn read(doc: &Value) -> StressRun {
    let mut run = common_fields(doc);
    if let Some(st) = crate::stress_end::storm(doc) {
        run.kind = StressKind::Storm;
        run.transport = "tcp".into();
        match st {
            Ok(st) => {
                run.seconds = Some(st.seconds);
                run.storm = Some(st);
            }
            Err(e) => run.error = run.error.or(Some(e)),
        }
        return run;
    }
    if let Some(o) = crate::stress_end::overload(doc) {
        run.kind = StressKind::Overload;
        run.transport = "tcp".into();
        match o {
            Ok(o) => {
                run.seconds = Some(o.held_seconds);
                run.overload = Some(o);
            }
            Err(e) => run.error = run.error.or(Some(e)),
        }
        return run;
    }
    if let Some(rows) = doc.get("ramp").and_then(Value::as_array) {
        run.kind = StressKind::Ramp;
        run.ramp = ramp_points(rows);
        return run;
    }
    if let Some(rows) = doc.get("steps").and_then(Value::as_array) {
        run.kind = StressKind::Steps;
        run.transport = std::mem::take(&mut run.mode);
        run.steps = step_points(rows);
        return run;
    }
    read_intervals(doc, &mut run);
    run.end = crate::stress_end::run_end(doc);
    run
}

/// The fields every shape may carry, read as a run with empty series; [`read`] then fills in
/// what the document's shape holds.
fn common_fields(doc: &Value) -> StressRun {
    StressRun {
        kind: StressKind::Run,
        mode: text(doc, &["start", "mode"])
            .or_else(|| text(doc, &["mode"]))
            .or_else(|| text(doc, &["protocol"]))
            .unwrap_or_default(),
        transport: text(doc, &["start", "transport"])
            .or_else(|| text(doc, &["transport"]))
            .unwrap_or_else(|| "tcp".into()),
        connections: num(doc, &["start", "connections"]).map_or(0, |n| n as u64),
        speeds: Vec::new(),
        fairness: Vec::new(),
        ramp: Vec::new(),
        steps: Vec::new(),
        seconds: num(doc, &["end", "seconds"]),
        error: text(doc, &["error"]),
        end: None,
        storm: None,
        overload: None,
    }
}

/// A ramp's rows; a row without its connection count is skipped.
fn ramp_points(rows: &[Value]) -> Vec<RampPoint> {
    rows.iter()
        .filter_map(|r| {
            Some(RampPoint {
                connections: opt_num(r, "connections")?,
                sent_bps: opt_num(r, "sent_bps").unwrap_or(0.0),
                received_bps: opt_num(r, "received_bps").unwrap_or(0.0),
                loss_percent: r.get("udp").and_then(|u| opt_num(u, "loss_percent")),
            })
        })
        .collect()
}

/// A load-step run's rows; a row without its offered rate is skipped.
fn step_points(rows: &[Value]) -> Vec<StepPoint> {
    rows.iter()
        .filter_map(|r| {
            Some(StepPoint {
                offered_bps: opt_num(r, "offered_bps")?,
                achieved_bps: opt_num(r, "achieved_bps"),
                server_cpu: opt_num(r, "server_cpu_percent"),
                client_cpu: opt_num(r, "client_cpu_percent"),
            })
        })
        .collect()
}

/// A run's intervals: the fairness per interval and the first [`MAX_LINES`] connections'
/// speeds in the mode's direction.
fn read_intervals(doc: &Value, run: &mut StressRun) {
    let key = if run.mode == "chargen" {
        "received_bps"
    } else {
        "sent_bps"
    };
    let mut per: std::collections::BTreeMap<u64, Vec<(f64, f64)>> = Default::default();
    for iv in array_items(doc, "intervals") {
        let Some(end) = opt_num(iv, "end") else {
            continue;
        };
        run.fairness.push(FairnessPoint {
            at: end,
            sent: opt_num(iv, "fairness_sent"),
            received: opt_num(iv, "fairness_received"),
        });
        for c in array_items(iv, "connections") {
            if let (Some(id), Some(bps)) = (c.get("id").and_then(Value::as_u64), opt_num(c, key)) {
                if id as usize <= MAX_LINES {
                    per.entry(id).or_default().push((end, bps));
                }
            }
        }
    }
    run.speeds = per.into_iter().collect();
}

/// The items of the array `v[k]`; none when it is missing or not an array.
fn array_items<'a>(v: &'a Value, k: &str) -> impl Iterator<Item = &'a Value> {
    v.get(k).and_then(Value::as_array).into_iter().flatten()
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
            "end": {"seconds": 0.5}, "error": null
        });
        assert!(is_stress(&run));
        let r = read(&run);
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
        assert_eq!(read(&ramp).ramp[0].sent_bps, 8e6);
        assert_eq!(read(&ramp).label(), "stress ramp, tcp discard");
        let udp_ramp = json!({"mode": "echo", "transport": "udp", "ramp": [{"connections": 2,
            "sent_bps": 1e6, "received_bps": 9e5, "udp": {"loss_percent": 10.0}}]});
        let r = read(&udp_ramp);
        assert_eq!(r.label(), "stress ramp, udp echo");
        assert_eq!(r.ramp[0].loss_percent, Some(10.0));
        let steps = json!({"protocol": "tcp", "steps": [{"offered_bps": 1e7, "achieved_bps": 9e6,
            "server_cpu_percent": null, "client_cpu_percent": 1.5}]});
        assert!(is_stress(&steps));
        let st = read(&steps).steps;
        assert_eq!((st[0].server_cpu, st[0].client_cpu), (None, Some(1.5)));
        // A latency document has start.mode but no connect_timeout_secs.
        assert!(!is_stress(&json!({"start": {"mode": "udp"}})));
    }
}
