//! The compare-ip charts along the run: each family's median round trip per span of the run,
//! and each family's BTC sessions at their start. Both charts count seconds from the same
//! instant (the run's first probe or session), so a moment when one family's latency rose
//! stands at the same x as that family's sessions.

use crate::compare_ip::CompareIpRun;
use crate::fmt;
use crate::model::TestView;
use crate::result::ResultDoc;
use crate::svg::{Chart, Line, Style};

fn compare_ip(t: &TestView) -> Option<&CompareIpRun> {
    match &t.result {
        Some(ResultDoc::CompareIp(c)) => Some(c),
        _ => None,
    }
}

/// The first instant of the run either chart shows, Unix s; None when there is none.
fn start(c: &CompareIpRun) -> Option<f64> {
    let t0 = c
        .latency_over_time
        .iter()
        .map(|b| b.1)
        .chain(c.btc_sessions.iter().map(|s| s.1))
        .fold(f64::INFINITY, f64::min);
    t0.is_finite().then_some(t0)
}

/// A series per family, in the order the families first appear in `rows`
/// (family, Unix s, value).
fn per_family(rows: &[(String, f64, f64)], t0: f64, div: f64) -> Vec<Line> {
    let mut families: Vec<&str> = Vec::new();
    for r in rows {
        if !families.contains(&r.0.as_str()) {
            families.push(&r.0);
        }
    }
    families
        .into_iter()
        .map(|f| Line {
            name: f.to_owned(),
            points: rows
                .iter()
                .filter(|r| r.0 == f)
                .map(|r| (r.1 - t0, r.2 / div))
                .collect(),
            style: Style::joined(),
        })
        .collect()
}

/// Each family's median RTT per span of the run (spans with no answer left out).
pub fn latency(t: &TestView) -> Option<Chart> {
    let c = compare_ip(t)?;
    let t0 = start(c)?;
    let rows: Vec<(String, f64, f64)> = c
        .latency_over_time
        .iter()
        .filter_map(|(f, at, ms)| Some((f.clone(), *at, (*ms)?)))
        .collect();
    let chart = Chart {
        title: format!("Round-trip time along the run, per family: {}", t.id),
        x_label: "time from the run's start (s)".into(),
        y_label: "RTT, median per span".into(),
        y_unit: "ms".into(),
        si: false,
        y_range: None,
        lines: per_family(&rows, t0, 1.0),
    };
    chart.has_data().then_some(chart)
}

/// Each family's BTC sessions at their start.
pub fn btc(t: &TestView) -> Option<Chart> {
    let c = compare_ip(t)?;
    let t0 = start(c)?;
    let max = c.btc_sessions.iter().map(|s| s.2).fold(0.0, f64::max);
    let (div, prefix) = fmt::prefix_for(max);
    let chart = Chart {
        title: format!("BTC along the run, per family: {}", t.id),
        x_label: "time from the run's start (s)".into(),
        y_label: "BTC, TCP payload".into(),
        y_unit: format!("{prefix}bit/s"),
        si: false,
        y_range: None,
        lines: per_family(&c.btc_sessions, t0, div),
    };
    chart.has_data().then_some(chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> CompareIpRun {
        let doc = serde_json::json!({"kind": "compare-ip",
            "ipv4": {"family": "IPv4"}, "ipv6": {"family": "IPv6"},
            "latency_over_time": [
                {"family": "IPv4", "start_unix": 100.0, "secs": 1.0, "sent": 2, "answered": 2, "median_ms": 1.5},
                {"family": "IPv6", "start_unix": 100.0, "secs": 1.0, "sent": 2, "answered": 0, "median_ms": null},
                {"family": "IPv6", "start_unix": 101.0, "secs": 1.0, "sent": 2, "answered": 1, "median_ms": 4.0}],
            "btc": [
                {"family": "IPv4", "sessions": [{"index": 1, "family": "IPv4", "bytes": 1, "seconds": 1.0,
                  "goodput_bps": 2e6, "retransmits": 0, "start_unix_s": 110.0}]},
                {"family": "IPv6", "sessions": [{"index": 2, "family": "IPv6", "bytes": 1, "seconds": 1.0,
                  "goodput_bps": 1e6, "retransmits": 0, "start_unix_s": 0.0}]}]});
        crate::compare_ip::read(&doc).unwrap()
    }

    #[test]
    fn both_charts_count_from_the_runs_first_instant_and_skip_what_has_no_figure() {
        let c = run();
        assert_eq!(start(&c), Some(100.0));
        let lat: Vec<(String, f64, f64)> = c
            .latency_over_time
            .iter()
            .filter_map(|(f, at, ms)| Some((f.clone(), *at, (*ms)?)))
            .collect();
        let lines = per_family(&lat, 100.0, 1.0);
        let got: Vec<_> = lines
            .iter()
            .map(|l| (l.name.as_str(), l.points.clone()))
            .collect();
        assert_eq!(
            got,
            [("IPv4", vec![(0.0, 1.5)]), ("IPv6", vec![(1.0, 4.0)])]
        );
        // The IPv6 session without a start time is not placed on the time axis.
        let btc = per_family(&c.btc_sessions, 100.0, 1e6);
        assert_eq!(btc.len(), 1);
        assert_eq!(btc[0].points, [(10.0, 2.0)]);
    }
}
