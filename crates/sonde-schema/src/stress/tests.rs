//! The stress models read back what they write, and refuse what a report would misread.

use super::overload::{Overload, OverloadDocument, Refusal};
use super::run::{ConnRate, Connect, End, Interval, RunDocument, Start};
use super::*;
use crate::Envelope;
use serde_json::json;

fn connect() -> Connect {
    Connect {
        asked: 2,
        connected: 2,
        refused: 0,
        timed_out: 0,
        other_failed: 0,
        seconds: 0.01,
        first_error: None,
    }
}

fn run_doc() -> RunDocument {
    RunDocument {
        start: Some(Start {
            remote: "h".into(),
            port: 7,
            mode: "echo".into(),
            transport: "tcp".into(),
            connections: 2,
            duration_secs: 1.0,
            interval_secs: 0.5,
            connect_timeout_secs: 5.0,
        }),
        connect: Some(connect()),
        intervals: vec![Interval {
            start: 0.0,
            end: 0.5,
            connections: vec![ConnRate {
                id: 1,
                sent_bytes: 10,
                received_bytes: 10,
                sent_bps: 160.0,
                received_bps: 160.0,
                open: true,
            }],
            sent_bytes: 10,
            received_bytes: 10,
            sent_bps: 160.0,
            received_bps: 160.0,
            fairness_sent: None,
            fairness_received: Some(1.0),
            warmup: true,
        }],
        end: Some(End {
            seconds: 1.0,
            connect: connect(),
            connections: Vec::new(),
            sent_bytes: 10,
            received_bytes: 10,
            sent_bps: 80.0,
            received_bps: 80.0,
            fairness_sent: None,
            fairness_received: None,
            closed_clean: 2,
            closed_reset: 0,
            closed_timeout: 0,
            failed_during_run: 0,
            echo_mismatched_bytes: 0,
            echo_unreturned_bytes: 0,
            partial: false,
            udp: None,
            warmup_secs: 0.5,
            zero_share_worst: Some(0.5),
        }),
        notes: vec!["a note".into()],
        envelope: Envelope::new(KIND, false, None),
    }
}

#[test]
fn a_run_reads_back_as_written_with_nulls_where_nothing_was_measured() {
    let doc = run_doc();
    let v = crate::to_value(&doc);
    assert_eq!(v["kind"], "stress");
    assert_eq!(v["intervals"][0]["fairness_sent"], serde_json::Value::Null);
    assert_eq!(v["connect"]["first_error"], serde_json::Value::Null);
    assert!(
        v["end"].get("udp").is_none(),
        "a TCP run has no udp section: {v}"
    );
    assert_eq!(v["intervals"][0]["warmup"], true);
    assert_eq!(v["end"]["zero_share_worst"], 0.5);
    let Ok(StressDocument::Run(back)) = StressDocument::from_value(v) else {
        panic!("not read as a run");
    };
    assert_eq!(*back, doc);
}

#[test]
fn a_run_that_failed_before_its_start_has_no_sections() {
    let doc = RunDocument {
        start: None,
        connect: None,
        intervals: Vec::new(),
        end: None,
        notes: Vec::new(),
        envelope: Envelope::new(KIND, true, Some("refused")),
    };
    let v = crate::to_value(&doc);
    assert!(v.get("start").is_none() && v.get("end").is_none(), "{v}");
    assert_eq!(
        (v["partial"].as_bool(), v["error"].as_str()),
        (Some(true), Some("refused"))
    );
}

#[test]
fn an_end_without_its_figures_is_refused_naming_the_field() {
    let mut v = crate::to_value(&run_doc());
    if let Some(end) = v["end"].as_object_mut() {
        end.remove("sent_bps");
    }
    let e = StressDocument::from_value(v).unwrap_err();
    let e = e.to_string();
    assert!(
        e.starts_with("not a valid stress document") && e.contains("sent_bps"),
        "{e}"
    );
    // A start from before UDP reads as TCP.
    let old = json!({"start": {"mode": "discard", "connections": 1, "connect_timeout_secs": 5.0}});
    let Ok(StressDocument::Run(r)) = StressDocument::from_value(old) else {
        panic!("not read as a run");
    };
    assert_eq!(r.start.map(|s| s.transport).as_deref(), Some("tcp"));
}

#[test]
fn each_shape_is_told_by_its_own_section() {
    let shape = |v| Shape::of(&v);
    assert_eq!(shape(json!({"storm": {}})), Shape::Storm);
    assert_eq!(shape(json!({"overload": {}})), Shape::Overload);
    assert_eq!(shape(json!({"ramp": []})), Shape::Ramp);
    assert_eq!(shape(json!({"steps": []})), Shape::Steps);
    assert_eq!(shape(json!({"start": {}, "intervals": []})), Shape::Run);
    let steps =
        json!({"protocol": "udp", "steps": [{"offered_bps": 1e7, "server_cpu_percent": null}]});
    let Ok(StressDocument::Steps(s)) = StressDocument::from_value(steps) else {
        panic!("not read as steps");
    };
    assert_eq!(
        (s.steps[0].offered_bps, s.steps[0].server_cpu_percent),
        (1e7, None)
    );
    let no_rate = json!({"steps": [{"achieved_bps": 1.0}]});
    let e = StressDocument::from_value(no_rate).unwrap_err().to_string();
    assert!(e.contains("offered_bps"), "{e}");
}

#[test]
fn an_overload_reads_back_and_an_unknown_refusal_is_refused() {
    let doc = OverloadDocument {
        mode: "echo".into(),
        host: Some("h".into()),
        overload: Overload {
            attempted: 256,
            held: 50,
            dropped_after_accept: 0,
            refusal: Refusal::Reset,
            first_error: None,
            held_seconds: 1.0,
            closed_clean: 50,
            closed_reset: 0,
            closed_timeout: 0,
            recovery_seconds: Some(0.01),
            partial: false,
        },
        envelope: Envelope::new(KIND, false, None),
    };
    let mut v = crate::to_value(&doc);
    assert_eq!(v["overload"]["refusal"], "reset");
    let Ok(StressDocument::Overload(back)) = StressDocument::from_value(v.clone()) else {
        panic!("not read as an overload");
    };
    assert_eq!(*back, doc);
    v["overload"]["refusal"] = "sideways".into();
    let e = StressDocument::from_value(v).unwrap_err().to_string();
    assert!(e.contains("sideways"), "{e}");
}

#[test]
fn a_ramp_row_holds_its_mean_its_max_and_its_runs_and_old_rows_still_read() {
    use super::ramp::{RampDocument, RampRow, RampStep};
    let step = |sent| RampStep {
        connections: 2,
        opened: 2,
        sent_bps: sent,
        received_bps: 0.0,
        fairness_sent: Some(1.0),
        fairness_received: None,
        zero_share_worst: None,
        closed_clean: Some(2),
        udp: None,
    };
    let doc = RampDocument {
        mode: "discard".into(),
        transport: "tcp".into(),
        layer: Some("TCP payload".into()),
        repeat: 2,
        ramp: vec![RampRow {
            mean: step(15.0),
            max: Some(step(20.0)),
            runs: vec![step(10.0), step(20.0)],
        }],
        best_sent: Some(step(15.0)),
        best_received: None,
        envelope: Envelope::new(KIND, false, None),
    };
    let v = crate::to_value(&doc);
    // The mean keeps a row's own keys; the maximum and the runs sit beside them.
    assert_eq!(v["ramp"][0]["sent_bps"], 15.0);
    assert_eq!(v["ramp"][0]["max"]["sent_bps"], 20.0);
    assert_eq!(v["ramp"][0]["runs"][1]["sent_bps"], 20.0);
    let Ok(StressDocument::Ramp(back)) = StressDocument::from_value(v) else {
        panic!("not read as a ramp");
    };
    assert_eq!(*back, doc);
    // A document from before --repeat: one run per row, no max, no runs.
    let old = json!({"mode": "discard", "ramp": [{"connections": 4, "sent_bps": 8e6, "received_bps": 0.0}]});
    let Ok(StressDocument::Ramp(r)) = StressDocument::from_value(old) else {
        panic!("not read as a ramp");
    };
    assert_eq!((r.repeat, r.ramp[0].mean.sent_bps), (1, 8e6));
    assert!(r.ramp[0].max.is_none() && r.ramp[0].runs.is_empty());
}

#[test]
fn a_run_from_before_the_warm_up_and_zero_shares_still_reads() {
    let mut v = crate::to_value(&run_doc());
    if let Some(end) = v["end"].as_object_mut() {
        end.remove("warmup_secs");
        end.remove("zero_share_worst");
    }
    if let Some(iv) = v["intervals"][0].as_object_mut() {
        iv.remove("warmup");
    }
    v["end"]["connections"] = json!([{"id": 1, "sent_bytes": 1, "received_bytes": 1,
        "sent_bps": 8.0, "received_bps": 8.0, "close": "clean"}]);
    let Ok(StressDocument::Run(r)) = StressDocument::from_value(v) else {
        panic!("not read as a run");
    };
    assert!(!r.intervals[0].warmup);
    let end = r.end.unwrap_or_else(|| unreachable!());
    assert_eq!((end.warmup_secs, end.zero_share_worst), (0.0, None));
    assert_eq!(end.connections[0].zero_share, None);
}
