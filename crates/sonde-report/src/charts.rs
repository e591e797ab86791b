//! The report's charts, built from the model. Each returns `None` when it has nothing to show
//! (no link loss known, no latency results, no per-stream loss), and the page skips it.
//!
//! What is drawn as a line is what was measured continuously: the intervals of one test. A
//! sweep over link settings is a set of separate measurements, drawn as markers; the RTT
//! distribution is drawn only from binned samples, never interpolated from quantiles.

use crate::fmt;
use crate::model::{GroupKind, Report, TestView};
use crate::result::ResultDoc;
use crate::svg::{Chart, Line, Style};
use crate::view::Series;

fn rate_chart(title: String, x_label: &str, y_label: &str, lines: Vec<Line>) -> Chart {
    Chart {
        title,
        x_label: x_label.into(),
        y_label: y_label.into(),
        y_unit: "bit/s".into(),
        si: true,
        y_range: None,
        lines,
    }
}

fn series_line(s: &Series) -> Line {
    Line {
        name: s.label.clone(),
        points: s.points.clone(),
        style: Style::Joined {
            breaks: s.breaks.clone(),
        },
    }
}

/// Goodput against link loss, one series of markers per throughput test kind (each point a
/// link setting of its own, so nothing joins them): scenario 3's chart.
pub fn goodput_vs_loss(r: &Report) -> Option<Chart> {
    let lines: Vec<Line> = r
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Throughput)
        .filter_map(|g| {
            let mut points: Vec<(f64, f64)> = g
                .rows
                .iter()
                .filter_map(|row| Some((row.link.as_ref()?.loss_percent?, row.goodput_bps?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            (!points.is_empty()).then(|| Line {
                name: g.name.clone(),
                points,
                style: Style::Markers,
            })
        })
        .collect();
    let c = rate_chart(
        "Goodput against link loss".into(),
        "link loss (%)",
        "Goodput",
        lines,
    );
    c.has_data().then_some(c)
}

/// Throughput over time of one test: each interval sum the document has, of both ends when it
/// has the other end's, and each direction's end-of-test sent and received averages as dashed
/// lines.
pub fn throughput_over_time(t: &TestView) -> Option<Chart> {
    let Some(ResultDoc::Throughput(th)) = &t.result else {
        return None;
    };
    let mut lines: Vec<Line> = th.throughput.iter().map(series_line).collect();
    lines.extend(switch_markers(&th.switches, th.throughput.first()));
    let x_end = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max);
    if x_end > 0.0 {
        for d in &th.directions {
            for (what, v) in [("sent", d.sent_bps), ("received", d.received_bps)] {
                if let Some(v) = v {
                    lines.push(Line {
                        name: format!("{} {what}, mean", d.label()),
                        points: vec![(0.0, v), (x_end, v)],
                        style: Style::Reference,
                    });
                }
            }
        }
    }
    let c = rate_chart(
        format!("Throughput over time: {}", t.id),
        "time (s)",
        "Throughput",
        lines,
    );
    c.has_data().then_some(c)
}

/// A switch test's moves between families as markers on its first series, at the value of
/// the interval each falls in; one marker line per kind and family ("planned to IPv6").
fn switch_markers(switches: &[(f64, String)], on: Option<&Series>) -> Vec<Line> {
    let Some(on) = on.filter(|s| !s.points.is_empty()) else {
        return Vec::new();
    };
    let mut lines: Vec<Line> = Vec::new();
    for (t, what) in switches {
        let y = on
            .points
            .iter()
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            .map_or(0.0, |p| p.1);
        match lines.iter_mut().find(|l| l.name == *what) {
            Some(l) => l.points.push((*t, y)),
            None => lines.push(Line {
                name: what.clone(),
                points: vec![(*t, y)],
                style: Style::Markers,
            }),
        }
    }
    for l in &mut lines {
        l.name = format!("{} ({})", l.name, l.points.len());
    }
    lines
}

/// Lost percent per interval for each receiving UDP stream of one test.
pub fn stream_loss(t: &TestView) -> Option<Chart> {
    let Some(ResultDoc::Throughput(th)) = &t.result else {
        return None;
    };
    let c = Chart {
        title: format!("Loss per stream over time: {}", t.id),
        x_label: "time (s)".into(),
        y_label: "Lost".into(),
        y_unit: "%".into(),
        si: false,
        y_range: None,
        lines: th.stream_loss.iter().map(series_line).collect(),
    };
    c.has_data().then_some(c)
}

/// RTT distribution of every successful latency test whose document has its round trips
/// binned: the empirical CDF as steps, the widest bin stated in the title. Documents with
/// quantiles only get no curve (their quantiles are in the tables).
pub fn rtt_cdf(r: &Report) -> Option<Chart> {
    let mut widest = 0.0f64;
    let lines: Vec<Line> = r
        .tests
        .iter()
        .filter(|t| t.ok)
        .filter_map(|t| match &t.result {
            Some(ResultDoc::Latency(l)) => l.rtt_histogram.as_ref().map(|h| {
                widest = widest.max(h.widest_bin_ms());
                Line {
                    name: format!("{} ({} samples)", t.id, h.samples()),
                    points: h.cdf(),
                    style: Style::Steps,
                }
            }),
            _ => None,
        })
        .collect();
    let c = Chart {
        title: format!(
            "RTT distribution (CDF of every sample, binned; widest bin {})",
            fmt::ms(widest)
        ),
        x_label: "RTT (ms)".into(),
        y_label: "Fraction of probes".into(),
        y_unit: String::new(),
        si: false,
        y_range: Some((0.0, 1.0)),
        lines,
    };
    c.has_data().then_some(c)
}

/// Successful latency tests whose documents carry quantiles but no binned samples.
pub fn tests_without_rtt_samples(r: &Report) -> Vec<&str> {
    r.tests
        .iter()
        .filter(|t| t.ok)
        .filter_map(|t| match &t.result {
            Some(ResultDoc::Latency(l)) if l.rtt_histogram.is_none() && l.rtt.is_some() => {
                Some(t.id.as_str())
            }
            _ => None,
        })
        .collect()
}

/// Median RTT per interval of one latency test.
pub fn latency_over_time(t: &TestView) -> Option<Chart> {
    let Some(ResultDoc::Latency(l)) = &t.result else {
        return None;
    };
    let c = Chart {
        title: format!("Latency over time: {}", t.id),
        x_label: "time (s)".into(),
        y_label: "Median RTT".into(),
        y_unit: "ms".into(),
        si: false,
        y_range: None,
        lines: vec![series_line(&l.over_time)],
    };
    c.has_data().then_some(c)
}

/// Lost percent of each burst of every stream of a profile run, against when the burst was
/// due (bins of consecutive bursts on long runs, said in the title).
pub fn profile_burst_loss(t: &TestView) -> Option<Chart> {
    let Some(ResultDoc::Profile(p)) = &t.result else {
        return None;
    };
    let per_point = p.streams.iter().map(|s| s.bursts_per_point()).max();
    let binned = match per_point {
        Some(n) if n > 1 => format!(" (up to {n} bursts per point)"),
        _ => String::new(),
    };
    let c = Chart {
        title: format!("Loss per burst over time: {}{binned}", t.id),
        x_label: "burst due at (s)".into(),
        y_label: "Lost of the burst".into(),
        y_unit: "%".into(),
        si: false,
        y_range: Some((0.0, 100.0)),
        lines: p
            .streams
            .iter()
            .map(|s| Line {
                name: format!("{} ({})", s.name, s.plan()),
                points: s.loss_per_burst(),
                style: Style::joined(),
            })
            .collect(),
    };
    c.has_data().then_some(c)
}

/// One-way delay distribution of every stream of a profile run, from its percentiles.
pub fn profile_delay_cdf(t: &TestView) -> Option<Chart> {
    let Some(ResultDoc::Profile(p)) = &t.result else {
        return None;
    };
    let estimated = p
        .streams
        .iter()
        .any(|s| s.delay_basis.as_deref().is_some_and(|b| b != "synced"));
    let what = if estimated {
        "estimate above each stream's fastest datagram"
    } else {
        "measured, clocks synced"
    };
    let c = Chart {
        title: format!(
            "One-way delay per stream ({what}; percentiles 0..100): {}",
            t.id
        ),
        x_label: "one-way delay (ms)".into(),
        y_label: "Fraction of datagrams".into(),
        y_unit: String::new(),
        si: false,
        y_range: Some((0.0, 1.0)),
        lines: p
            .streams
            .iter()
            .map(|s| Line {
                name: s.name.clone(),
                points: s.delay_cdf(),
                style: Style::Steps,
            })
            .collect(),
    };
    c.has_data().then_some(c)
}

/// Every chart of one test, in page order.
pub fn for_test(t: &TestView) -> Vec<Chart> {
    [
        throughput_over_time(t),
        stream_loss(t),
        latency_over_time(t),
        profile_burst_loss(t),
        profile_delay_cdf(t),
    ]
    .into_iter()
    .chain(crate::stress_charts::for_test(t))
    .chain(crate::sweep_report::charts(t))
    .chain(crate::capacity_report::charts(t))
    .chain(crate::compare_ip_report::charts(t))
    .chain(crate::btc_report::charts(t))
    .flatten()
    .collect()
}
