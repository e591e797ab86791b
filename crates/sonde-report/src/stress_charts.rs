//! The charts of a stress document: each connection's speed over time and Jain's fairness
//! per interval (a run), the most each way against the connection count (a ramp), achieved
//! rate and both ends' CPU against the offered rate, and the device's load as its
//! `--load-probe` read it (load steps).

use crate::model::TestView;
use crate::result::ResultDoc;
use crate::stress::{FairnessPoint, RampPoint, StepPoint, StressKind, StressRun, MAX_LINES};
use crate::svg::{Chart, Line, Style};

fn stress(t: &TestView) -> Option<&StressRun> {
    match &t.result {
        Some(ResultDoc::Stress(s)) => Some(s),
        _ => None,
    }
}

/// Each connection's speed per interval, in the mode's direction.
pub fn connection_speed(t: &TestView) -> Option<Chart> {
    let s = stress(t).filter(|s| s.kind == StressKind::Run)?;
    let first = if s.connections as usize > MAX_LINES {
        format!(" (the first {MAX_LINES} of {})", s.connections)
    } else {
        String::new()
    };
    let c = Chart {
        title: format!(
            "Speed per {} {}{first}: {}",
            if s.transport == "udp" {
                "flow"
            } else {
                "connection"
            },
            s.direction(),
            t.id
        ),
        x_label: "time (s)".into(),
        y_label: "Speed".into(),
        y_unit: "bit/s".into(),
        si: true,
        y_range: None,
        lines: s
            .speeds
            .iter()
            .map(|(id, points)| Line {
                name: format!("#{id}"),
                points: points.clone(),
                style: Style::joined(),
            })
            .collect(),
    };
    c.has_data().then_some(c)
}

/// Jain's fairness index per interval, each direction the mode carries.
pub fn fairness(t: &TestView) -> Option<Chart> {
    let s = stress(t).filter(|s| s.kind == StressKind::Run)?;
    let series = |pick: fn(&FairnessPoint) -> Option<f64>| {
        s.fairness
            .iter()
            .filter_map(|f| Some((f.at, pick(f)?)))
            .collect::<Vec<_>>()
    };
    let lines = named_lines(
        [
            ("to the device", series(|f| f.sent)),
            ("from the device", series(|f| f.received)),
        ],
        Style::joined(),
    );
    let c = Chart {
        title: format!(
            "Jain's fairness index per interval (1 = equal shares): {}",
            t.id
        ),
        x_label: "time (s)".into(),
        y_label: "Fairness".into(),
        y_unit: String::new(),
        si: false,
        y_range: Some((0.0, 1.0)),
        lines,
    };
    c.has_data().then_some(c)
}

/// The total speed each way against the number of connections (`--ramp`).
pub fn ramp(t: &TestView) -> Option<Chart> {
    let s = stress(t).filter(|s| s.kind == StressKind::Ramp)?;
    let series = |pick: fn(&RampPoint) -> f64| {
        s.ramp
            .iter()
            .filter(|r| pick(r) > 0.0)
            .map(|r| (r.connections, pick(r)))
            .collect::<Vec<_>>()
    };
    let lines = named_lines(
        [
            ("to the device", series(|r| r.sent_bps)),
            ("from the device", series(|r| r.received_bps)),
        ],
        Style::Markers,
    );
    let (counted, what) = if s.transport == "udp" {
        ("flows", format!("udp {}", s.mode))
    } else {
        ("connections", s.mode.clone())
    };
    let c = Chart {
        title: format!("Total speed against {counted} ({what}): {}", t.id),
        x_label: counted.into(),
        y_label: "Total speed".into(),
        y_unit: "bit/s".into(),
        si: true,
        y_range: None,
        lines,
    };
    c.has_data().then_some(c)
}

/// Server and client CPU against the offered rate (`--steps`); steps whose server did not
/// report its CPU have no server point.
pub fn steps_cpu(t: &TestView) -> Option<Chart> {
    let s = stress(t).filter(|s| s.kind == StressKind::Steps)?;
    let series = |pick: fn(&StepPoint) -> Option<f64>| {
        s.steps
            .iter()
            .filter_map(|r| Some((r.offered_bps, pick(r)?)))
            .collect::<Vec<_>>()
    };
    let lines = named_lines(
        [
            ("server process", series(|r| r.server_cpu)),
            ("client process", series(|r| r.client_cpu)),
        ],
        Style::Markers,
    );
    let c = Chart {
        title: format!(
            "CPU (user + system, % of one core) against offered rate: {}",
            t.id
        ),
        x_label: "offered (bit/s)".into(),
        y_label: "CPU".into(),
        y_unit: "%".into(),
        si: false,
        y_range: None,
        lines,
    };
    c.has_data().then_some(c)
}

/// The device's load as the `--load-probe` command read it, against the offered rate; steps
/// where it gave no reading have no point.
pub fn steps_device_load(t: &TestView) -> Option<Chart> {
    let s = stress(t).filter(|s| s.kind == StressKind::Steps)?;
    s.load_probe.as_ref()?;
    let points = s
        .steps
        .iter()
        .filter_map(|r| Some((r.offered_bps, r.device_load?)))
        .collect();
    let c = Chart {
        title: format!(
            "Device load (as --load-probe read it) against offered rate: {}",
            t.id
        ),
        x_label: "offered (bit/s)".into(),
        y_label: "Device load".into(),
        y_unit: String::new(),
        si: false,
        y_range: None,
        lines: named_lines([("device (load probe)", points)], Style::Markers),
    };
    c.has_data().then_some(c)
}

/// Every stress chart of one test, in page order.
pub fn for_test(t: &TestView) -> Vec<Option<Chart>> {
    vec![
        connection_speed(t),
        fairness(t),
        ramp(t),
        steps_cpu(t),
        steps_device_load(t),
    ]
}

/// A line per named series that has points, drawn in `style`.
fn named_lines<const N: usize>(series: [(&str, Vec<(f64, f64)>); N], style: Style) -> Vec<Line> {
    series
        .into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(name, points)| Line {
            name: name.into(),
            points,
            style: style.clone(),
        })
        .collect()
}
