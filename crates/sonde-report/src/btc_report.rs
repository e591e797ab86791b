//! The btc report: the goodput statistics per family, then the sessions and the ones that
//! failed; the charts of BTC over time (a series per family) and of its distribution (a CDF
//! per family). Above the reader ([`crate::btc`]), as every renderer is above the model it
//! shows.

use crate::btc::BtcRun;
use crate::fmt::{self, opt};
use crate::model::TestView;
use crate::result::ResultDoc;
use crate::svg::{Chart, Line, Style};
use crate::table::{count, Section, Table};

fn btc(t: &TestView) -> Option<&BtcRun> {
    match &t.result {
        Some(ResultDoc::Btc(b)) => Some(b),
        _ => None,
    }
}

/// The families in the order their sessions appear.
fn families(r: &BtcRun) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for s in &r.sessions {
        if !out.contains(&s.family.as_str()) {
            out.push(&s.family);
        }
    }
    out
}

/// The divisor and unit that suit the largest goodput.
fn unit(r: &BtcRun) -> (f64, String) {
    let max = r
        .sessions
        .iter()
        .filter_map(|s| s.goodput_bps)
        .fold(0.0f64, f64::max);
    let (div, prefix) = fmt::prefix_for(max);
    (div, format!("{prefix}bit/s"))
}

/// Each session's goodput against its start (seconds after the first session's), a series
/// per family: the study's BTC over time. None without start times.
pub fn over_time(t: &TestView) -> Option<Chart> {
    let r = btc(t)?;
    let t0 = r
        .sessions
        .iter()
        .filter_map(|s| s.start_unix_s)
        .fold(f64::INFINITY, f64::min);
    if !t0.is_finite() {
        return None;
    }
    let (div, unit) = unit(r);
    let lines = families(r)
        .into_iter()
        .map(|f| Line {
            name: f.to_owned(),
            points: r
                .sessions
                .iter()
                .filter(|s| s.family == f)
                .filter_map(|s| Some((s.start_unix_s? - t0, s.goodput_bps? / div)))
                .collect(),
            style: Style::joined(),
        })
        .collect();
    let c = Chart {
        title: format!("BTC over time, per family: {}", t.id),
        x_label: "session start (s)".into(),
        y_label: "BTC, TCP payload".into(),
        y_unit: unit,
        si: false,
        y_range: None,
        lines,
    };
    c.has_data().then_some(c)
}

/// The distribution of the sessions' goodput, a CDF per family.
pub fn distribution(t: &TestView) -> Option<Chart> {
    let r = btc(t)?;
    let (div, unit) = unit(r);
    let lines = families(r)
        .into_iter()
        .map(|f| {
            let mut v: Vec<f64> = r
                .sessions
                .iter()
                .filter(|s| s.family == f)
                .filter_map(|s| s.goodput_bps)
                .collect();
            v.sort_by(f64::total_cmp);
            let n = v.len() as f64;
            Line {
                name: f.to_owned(),
                points: v
                    .iter()
                    .enumerate()
                    .map(|(i, g)| (g / div, (i + 1) as f64 / n))
                    .collect(),
                style: Style::Steps,
            }
        })
        .collect();
    let c = Chart {
        title: format!("BTC distribution, per family: {}", t.id),
        x_label: format!("BTC ({unit}, TCP payload)"),
        y_label: "Sessions at or below".into(),
        y_unit: String::new(),
        si: false,
        y_range: Some((0.0, 1.0)),
        lines,
    };
    c.has_data().then_some(c)
}

/// The btc charts, in page order.
pub fn charts(t: &TestView) -> Vec<Option<Chart>> {
    vec![over_time(t), distribution(t)]
}

/// The statistics per family, then the sessions.
pub fn sections(r: &BtcRun) -> Vec<Section> {
    let mut stats = Table::new(&[
        "Family", "Sessions", "Min", "Median", "Mean", "Max", "Std dev", "Variance",
    ]);
    for f in &r.summary {
        stats.rows.push(vec![
            f.family.clone(),
            count(f.sessions),
            opt(f.min_bps, fmt::rate),
            opt(f.median_bps, fmt::rate),
            opt(f.mean_bps, fmt::rate),
            opt(f.max_bps, fmt::rate),
            opt(f.stddev_bps, fmt::rate),
            opt(f.variance, |v| format!("{v:.3e} (bit/s)²")),
        ]);
    }
    let mut sessions = Table::new(&["#", "Family", "Bytes", "Time", "BTC", "Retransmits"]);
    for s in &r.sessions {
        sessions.rows.push(vec![
            count(s.index),
            s.family.clone(),
            s.bytes
                .map_or_else(|| crate::table::DASH.into(), fmt::bytes),
            opt(s.seconds, |v| format!("{v:.2} s")),
            opt(s.goodput_bps, fmt::rate),
            count(s.retransmits),
        ]);
    }
    let sender = if r.reverse {
        "the server"
    } else {
        "the client"
    };
    let mut out = vec![
        Section::new(
            "BTC per family",
            Some(format!(
                "TCP payload at the receiver, per session (RFC 3148), {sender} sending; \
                 standard deviation and variance of the sample (n - 1)."
            )),
            stats,
        ),
        Section::new("BTC sessions", None, sessions),
    ];
    if !r.failed.is_empty() {
        let mut failed = Table::new(&["#", "Family", "Size", "Error"]);
        for f in &r.failed {
            failed.rows.push(vec![
                f.index.to_string(),
                f.family.clone(),
                fmt::bytes(f.size),
                f.error.clone(),
            ]);
        }
        out.push(Section::new(
            "BTC sessions that failed",
            Some("Recorded with their error; the run went on after each.".into()),
            failed,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{read as read_doc, ResultDoc};
    use serde_json::json;

    #[test]
    fn a_btc_document_reads_as_its_sessions_and_statistics() {
        let doc = json!({"kind": "btc", "partial": false, "error": null, "host": "h",
            "layer": "TCP payload",
            "sessions": [{"index": 1, "family": "IPv4", "size": 1000, "bytes": 1000,
                          "seconds": 0.5, "goodput_bps": 16000.0, "retransmits": 0}],
            "summary": {"IPv4": {"sessions": 1, "min_bps": 16000.0, "max_bps": 16000.0,
                                 "mean_bps": 16000.0, "median_bps": 16000.0}}});
        let Ok(ResultDoc::Btc(b)) = read_doc(&doc) else {
            panic!("not read as btc");
        };
        assert_eq!(b.label(), "btc, h");
        let s = sections(&b);
        assert_eq!(s[0].table.rows[0][0], "IPv4");
        assert_eq!(s[1].table.rows.len(), 1);
    }
}
