//! The charts and tables of a rate sweep.
//!
//! A search: loss against offered rate, one series of markers per datagram length and
//! direction (every step is a run of its own, so nothing joins them), with the loss limit as
//! a dashed level; the table of the rates found. A rate list: achieved against asked, markers
//! per direction, the line where achieved equals asked, and each direction's knee as a
//! dashed vertical; a row per rate. Both axes of a rate chart share one SI prefix, so
//! "achieved = asked" is the diagonal it looks like. Every step is also a table row, so the
//! Markdown report keeps every figure the charts draw.

use crate::fmt::{self, opt};
use crate::model::TestView;
use crate::result::ResultDoc;
use crate::svg::{Chart, Line, Style};
use crate::sweep::SweepRun;
use crate::table::{Section, Table, DASH};

fn sweep(t: &TestView) -> Option<&SweepRun> {
    match &t.result {
        Some(ResultDoc::Sweep(s)) => Some(s),
        _ => None,
    }
}

/// Loss with three decimals (the limits are often 0.1 %).
fn loss(v: Option<f64>) -> String {
    opt(v, |l| format!("{} %", fmt::num(l, 3)))
}

/// The divisor and unit that suit the largest of `values` (bit/s).
fn rate_unit(values: impl Iterator<Item = f64>) -> (f64, String) {
    let max = values.filter(|v| v.is_finite()).fold(0.0f64, f64::max);
    let (div, prefix) = fmt::prefix_for(max);
    (div, format!("{prefix}bit/s"))
}

/// Loss against offered rate per length and direction (a search's steps).
pub fn loss_vs_offered(t: &TestView) -> Option<Chart> {
    let s = sweep(t).filter(|s| s.mode == "search")?;
    let (div, unit) = rate_unit(s.steps.iter().map(|x| x.offered_bps));
    let mut lines: Vec<Line> = s
        .series_keys()
        .into_iter()
        .map(|(len, dir)| Line {
            name: format!("{len} B {dir}"),
            points: s
                .steps
                .iter()
                .filter(|x| x.length == len && x.direction == dir)
                .filter_map(|x| Some((x.offered_bps / div, x.loss_percent?)))
                .collect(),
            style: Style::Markers,
        })
        .collect();
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max);
    if let (Some(limit), true) = (s.max_loss_percent, x_max > 0.0) {
        lines.push(Line {
            name: format!("loss limit {} %", fmt::num(limit, 3)),
            points: vec![(0.0, limit), (x_max, limit)],
            style: Style::Reference,
        });
    }
    let c = Chart {
        title: format!("Loss against offered rate, each step: {}", t.id),
        x_label: format!("offered ({unit}, {})", layer(s)),
        y_label: "Lost".into(),
        y_unit: "%".into(),
        si: false,
        y_range: None,
        lines,
    };
    c.has_data().then_some(c)
}

fn layer(s: &SweepRun) -> String {
    s.layer.clone().unwrap_or_else(|| "payload".into())
}

/// Achieved against asked per direction (a rate list), with the knee marked.
pub fn achieved_vs_asked(t: &TestView) -> Option<Chart> {
    let s = sweep(t).filter(|s| s.mode == "rates")?;
    let listed = || s.steps.iter().filter(|x| x.kind == "listed" && !x.rerun);
    let (div, unit) = rate_unit(listed().map(|x| x.offered_bps));
    let mut dirs: Vec<&str> = Vec::new();
    for x in listed() {
        if !dirs.contains(&x.direction.as_str()) {
            dirs.push(&x.direction);
        }
    }
    let mut lines: Vec<Line> = dirs
        .iter()
        .map(|d| Line {
            name: format!("{d}: achieved"),
            points: listed()
                .filter(|x| x.direction == *d)
                .filter_map(|x| Some((x.offered_bps / div, x.achieved_bps? / div)))
                .collect(),
            style: Style::Markers,
        })
        .collect();
    let top = listed().map(|x| x.offered_bps / div).fold(0.0f64, f64::max);
    if top > 0.0 {
        lines.push(Line {
            name: "achieved = asked".into(),
            points: vec![(0.0, 0.0), (top, top)],
            style: Style::Reference,
        });
    }
    for (dir, knee) in &s.knees {
        if let Some(k) = knee {
            lines.push(Line {
                name: format!("knee ({dir}): {}", fmt::rate(*k)),
                points: vec![(k / div, 0.0), (k / div, top)],
                style: Style::Reference,
            });
        }
    }
    let c = Chart {
        title: format!("Achieved against asked: {}", t.id),
        x_label: format!("asked ({unit})"),
        y_label: format!("Achieved, {}", layer(s)),
        y_unit: unit,
        si: false,
        y_range: None,
        lines,
    };
    c.has_data().then_some(c)
}

/// The sweep's charts, in page order.
pub fn charts(t: &TestView) -> Vec<Option<Chart>> {
    vec![loss_vs_offered(t), achieved_vs_asked(t)]
}

/// The rates each search found.
fn found(s: &SweepRun) -> Table {
    let mut tb = Table::new(&[
        "Length",
        "Direction",
        "Found rate",
        "Datagrams/s",
        "Loss there",
        "Steps",
        "Time",
        "Outcome",
    ]);
    for r in &s.results {
        tb.rows.push(vec![
            format!("{} B", r.length),
            r.direction.clone(),
            opt(r.rate_bps, fmt::rate),
            opt(r.datagrams_per_sec, |v| fmt::num(v, 0)),
            loss(r.loss_percent),
            opt(r.steps.map(|v| v as f64), |v| fmt::num(v, 0)),
            opt(r.seconds, fmt::secs),
            match r.verdict.as_str() {
                "found" => match s.confirm {
                    Some(0) => "found (not confirmed: --confirm 0)".into(),
                    Some(n) => format!("found, confirmed by {n} repeat runs"),
                    None => "found".into(),
                },
                "at_max_rate" => {
                    "passed at --max-rate, the highest rate tried: a lower bound, not the ceiling"
                        .into()
                }
                "below_floor" => "lost too much even at the lowest rate".into(),
                "step_limit" => "step limit reached: not confirmed".into(),
                "sender_limited" => {
                    "sender-limited: the host could not offer more (a lower bound)".into()
                }
                other => other.to_owned(),
            },
        ]);
    }
    tb
}

/// Achieved against asked, one row per listed rate, then the knees.
fn rates(s: &SweepRun) -> Table {
    let mut tb = Table::new(&["Direction", "Asked", "Achieved", "Loss", "Follows"]);
    for x in s.steps.iter().filter(|x| x.kind == "listed") {
        tb.rows.push(vec![
            x.direction.clone(),
            fmt::rate(x.offered_bps),
            opt(x.achieved_bps, fmt::rate),
            loss(x.loss_percent),
            match s.follows(x) {
                _ if x.rerun => "again (sender short)".into(),
                _ if x.sender_short => "no (sender short)".into(),
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => DASH.into(),
            },
        ]);
    }
    tb.drop_empty_columns(3)
}

/// Every step as it ran.
fn steps(s: &SweepRun) -> Table {
    let mut tb = Table::new(&[
        "Step",
        "Length",
        "Direction",
        "Kind",
        "Offered",
        "Achieved",
        "Loss",
        "Passed",
        "Time",
    ]);
    for x in &s.steps {
        tb.rows.push(vec![
            x.index.to_string(),
            format!("{} B", x.length),
            x.direction.clone(),
            x.kind.clone(),
            fmt::rate(x.offered_bps),
            opt(x.achieved_bps, fmt::rate),
            loss(x.loss_percent),
            match x.passed {
                _ if x.rerun => "again (sender short)".into(),
                _ if x.sender_short => "sender short".into(),
                Some(true) => "pass".into(),
                Some(false) => "FAIL".into(),
                None => DASH.into(),
            },
            opt(x.seconds, fmt::secs),
        ]);
    }
    tb.drop_empty_columns(5)
}

/// The sweep's tables: what it found (or achieved against asked with the knees), then
/// every step.
pub fn sections(s: &SweepRun) -> Vec<Section> {
    let layer = layer(s);
    let mut out = Vec::new();
    if s.mode == "rates" {
        let knees: Vec<String> = s
            .knees
            .iter()
            .map(|(dir, k)| match k {
                Some(k) => format!("{dir}: achieved stops following asked at {}", fmt::rate(*k)),
                None => format!("{dir}: achieved follows asked at every rate"),
            })
            .collect();
        let tol = s
            .tolerance_percent
            .map_or_else(String::new, |t| format!(" (within {} %)", fmt::num(t, 1)));
        out.push(Section::new(
            "Achieved against asked",
            Some(format!(
                "Rates are {layer}. A rate is followed when achieved is at most the tolerance \
                 below asked{tol}. {}.",
                knees.join("; ")
            )),
            rates(s),
        ));
    } else {
        let confirmed = match s.confirm {
            Some(0) => " (no confirmation runs asked)",
            Some(_) => " and in every confirmation run at it",
            None => "",
        };
        out.push(Section::new(
            "Rates found",
            Some(format!(
                "Per length and direction, the highest rate whose loss stayed at or below \
                 {}{confirmed}; rates are {layer}.",
                loss(s.max_loss_percent)
            )),
            found(s),
        ));
    }
    out.push(Section::new(
        "Steps",
        s.step_secs
            .map(|t| format!("Each step transmits for {}.", fmt::secs(t))),
        steps(s),
    ));
    out
}
