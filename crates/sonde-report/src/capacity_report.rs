//! The charts and tables of a capacity estimate.
//!
//! The dispersion-rate histogram is drawn as it was computed: bars of the document's bin
//! width from its start edge, the local modes as markers on their bins (the chosen peak
//! apart), and the long trains' average dispersion rate (ADR), which pathrate uses to discard
//! modes below it, as a dashed vertical. Rate against train length puts each short train's
//! rate at the short length and each long train's whole-train rate at the long length (and,
//! when a long train showed a knee, its rate before the knee at the knee's length); the
//! sustained and peak rates are dashed levels. Every rate is at the IP layer, said on the
//! axes; the table gives the figures the command prints, each with its layer.

use crate::capacity::CapacityRun;
use crate::fmt::{self, opt};
use crate::model::TestView;
use crate::result::ResultDoc;
use crate::svg::{Chart, Line, Style};
use crate::table::{count, Section, Table, DASH};
use sonde_schema::capacity as schema;

fn capacity(t: &TestView) -> Option<&CapacityRun> {
    match &t.result {
        Some(ResultDoc::Capacity(c)) => Some(c),
        _ => None,
    }
}

/// The histogram of the short trains' dispersion rates, modes and ADR marked.
pub fn histogram(t: &TestView) -> Option<Chart> {
    let c = capacity(t)?;
    let h = c.histogram.as_ref()?;
    let top_edge = h.start_bps + h.bin_bps * h.counts.len() as f64;
    let (div, prefix) = fmt::prefix_for(top_edge.max(c.adr_bps.unwrap_or(0.0)));
    let layer = c.layer_name();
    let mut lines = vec![Line {
        name: format!(
            "short trains per bin ({} used)",
            h.counts.iter().sum::<u64>()
        ),
        points: h
            .counts
            .iter()
            .enumerate()
            .map(|(i, n)| ((h.start_bps + i as f64 * h.bin_bps) / div, *n as f64))
            .collect(),
        style: Style::Bars {
            width: h.bin_bps / div,
        },
    }];
    let peak = c.peak;
    let others: Vec<(f64, f64)> = h
        .modes
        .iter()
        .filter(|m| Some(**m) != peak)
        .map(|m| ((m.low_bps + m.high_bps) / 2.0 / div, m.count as f64))
        .collect();
    if !others.is_empty() {
        lines.push(Line {
            name: "local modes".into(),
            points: others,
            style: Style::Markers,
        });
    }
    if let Some(p) = peak {
        lines.push(Line {
            // Both edges in the axis's unit: fmt::rate would pick the upper edge's own prefix.
            name: format!(
                "peak mode {}-{} {prefix}bit/s",
                fmt::num(p.low_bps / div, 2),
                fmt::num(p.high_bps / div, 2)
            ),
            points: vec![((p.low_bps + p.high_bps) / 2.0 / div, p.count as f64)],
            style: Style::Markers,
        });
    }
    let most = h.counts.iter().copied().max().unwrap_or(0) as f64;
    if let Some(adr) = c.adr_bps.filter(|_| most > 0.0) {
        lines.push(Line {
            name: format!("ADR of the long trains {}", fmt::rate(adr)),
            points: vec![(adr / div, 0.0), (adr / div, most)],
            style: Style::Reference,
        });
    }
    let chart = Chart {
        title: format!(
            "Dispersion rates of the short trains (bin {}, {layer}): {}",
            fmt::rate(h.bin_bps),
            t.id
        ),
        x_label: format!("dispersion rate ({prefix}bit/s, {layer})"),
        y_label: "Short trains".into(),
        y_unit: String::new(),
        si: false,
        y_range: None,
        lines,
    };
    chart.has_data().then_some(chart)
}

/// Rate against train length: short and long trains, sustained and peak rates as levels.
pub fn rate_vs_length(t: &TestView) -> Option<Chart> {
    let c = capacity(t)?;
    let (short_len, long_len) = (c.short_len? as f64, c.long_len? as f64);
    let mut lines = vec![
        Line {
            name: format!("short trains ({})", c.short_rates.len()),
            points: c.short_rates.iter().map(|r| (short_len, *r)).collect(),
            style: Style::Markers,
        },
        Line {
            name: "long trains, whole train".into(),
            points: c
                .fits
                .iter()
                .filter_map(|f| Some((long_len, f.whole_bps?)))
                .collect(),
            style: Style::Markers,
        },
    ];
    if let Some(ip) = c.ip_bytes.filter(|b| *b > 0) {
        let heads: Vec<(f64, f64)> = c
            .fits
            .iter()
            .filter_map(|f| Some((f.knee_bytes? as f64 / ip as f64 + 1.0, f.head_bps?)))
            .collect();
        lines.push(Line {
            name: "long trains before the knee".into(),
            points: heads,
            style: Style::Markers,
        });
    }
    let level = |name: String, v: f64| Line {
        name,
        points: vec![(0.0, v), (long_len, v)],
        style: Style::Reference,
    };
    if let Some(s) = c.sustained_bps {
        lines.push(level(format!("sustained {}", fmt::rate(s)), s));
    }
    if let Some(p) = c.peak {
        let mid = (p.low_bps + p.high_bps) / 2.0;
        lines.push(level(format!("peak {}", fmt::rate(mid)), mid));
    }
    rate_chart(
        c,
        &format!("Rate against train length ({})", c.layer_name()),
        t,
        "datagrams per train",
        lines,
    )
}

/// A chart of IP-layer rates against `x_label`, titled `title: test id`; None without data.
fn rate_chart(
    c: &CapacityRun,
    title: &str,
    t: &TestView,
    x_label: &str,
    mut lines: Vec<Line>,
) -> Option<Chart> {
    lines.retain(|l| !l.points.is_empty());
    let chart = Chart {
        title: format!("{title}: {}", t.id),
        x_label: x_label.into(),
        y_label: format!("Rate, {}", c.layer_name()),
        y_unit: "bit/s".into(),
        si: true,
        y_range: None,
        lines,
    };
    chart.has_data().then_some(chart)
}

/// The estimate against the probe size (`--sizes`): each size's mode centre, with its
/// bin's edges as the range.
pub fn rate_vs_size(t: &TestView) -> Option<Chart> {
    let c = capacity(t)?;
    let series = |name: &str, pick: fn(&schema::SizeRow) -> Option<f64>| Line {
        name: name.into(),
        points: c
            .by_size
            .iter()
            .filter_map(|r| Some((f64::from(r.payload_bytes), pick(r)?)))
            .collect(),
        style: Style::Markers,
    };
    let lines = vec![
        series("estimate (strongest mode)", |r| r.estimate_bps),
        series("its range, low", |r| r.low_bps),
        series("its range, high", |r| r.high_bps),
    ];
    let title = format!("Estimate against probe size ({})", c.layer_name());
    rate_chart(c, &title, t, "UDP payload per datagram, B", lines)
}

/// The capacity charts, in page order.
pub fn charts(t: &TestView) -> Vec<Option<Chart>> {
    vec![histogram(t), rate_vs_length(t), rate_vs_size(t)]
}

/// The estimate per probe size as a table (`--sizes`); None without sizes.
fn size_table(c: &CapacityRun) -> Option<Table> {
    if c.by_size.is_empty() {
        return None;
    }
    let mut tb = Table::new(&[
        "UDP payload",
        "IP packet",
        "Short trains",
        "Used",
        "Estimate (IP)",
        "Range (IP)",
        "CoV",
    ]);
    for r in &c.by_size {
        let range = match (r.low_bps, r.high_bps) {
            (Some(lo), Some(hi)) => format!("{} - {}", fmt::rate(lo), fmt::rate(hi)),
            _ => DASH.into(),
        };
        tb.rows.push(vec![
            format!("{} B", r.payload_bytes),
            format!("{} B", r.ip_bytes),
            r.trains.to_string(),
            r.used.to_string(),
            opt(r.estimate_bps, fmt::rate),
            range,
            r.cov.map_or_else(|| DASH.into(), |v| format!("{v:.3}")),
        ]);
    }
    Some(tb)
}

/// The figures the command prints, each with its layer; rows without a value are left out.
fn figures(c: &CapacityRun) -> Table {
    let ip = c.layer_name();
    let mut tb = Table::new(&["Figure", "Value", "Layer"]);
    train_figures(&mut tb, c);
    mode_figures(&mut tb, c, &ip);
    rate_figures(&mut tb, c, &ip);
    method_figures(&mut tb, c);
    tb.rows.retain(|r| r.get(1).is_some_and(|v| v != DASH));
    tb
}

/// One row of the figures table: figure, value, layer.
fn push_figure(tb: &mut Table, figure: &str, value: String, layer: &str) {
    tb.rows.push(vec![figure.into(), value, layer.into()]);
}

/// The verdict and what the trains were: counts, lengths, the spread of the short ones.
fn train_figures(tb: &mut Table, c: &CapacityRun) {
    let mut row = |f: &str, v: String, l: &str| push_figure(tb, f, v, l);
    row(
        "Verdict",
        c.verdict.clone().unwrap_or_else(|| DASH.into()),
        "",
    );
    let trains = |k: &crate::capacity::CountsView| {
        format!(
            "{} trains: {} clean, {} coalesced, {} used",
            count(k.trains),
            count(k.clean),
            count(k.coalesced),
            count(k.used)
        )
    };
    row("Short trains", trains(&c.short), "");
    row("Long trains", trains(&c.long), "");
    row(
        "Train lengths",
        format!("{} and {} datagrams", count(c.short_len), count(c.long_len)),
        "",
    );
    row(
        "CoV of the short-train rates",
        opt(c.cov, |v| fmt::num(v, 3)),
        "",
    );
}

/// The histogram's bin and modes, the peak chosen from them and the long trains' ADR.
fn mode_figures(tb: &mut Table, c: &CapacityRun, ip: &str) {
    let mut row = |f: &str, v: String, l: &str| push_figure(tb, f, v, l);
    if let Some(h) = &c.histogram {
        row("Histogram bin", fmt::rate(h.bin_bps), ip);
        for (i, m) in h.modes.iter().enumerate() {
            let chosen = if Some(*m) == c.peak { " (peak)" } else { "" };
            row(
                &format!("Mode {}{chosen}", i + 1),
                format!(
                    "{} ({} trains)",
                    fmt::rate_range(m.low_bps, m.high_bps),
                    m.count
                ),
                ip,
            );
        }
    }
    row(
        "Peak capacity",
        c.peak
            .map_or_else(|| DASH.into(), |p| fmt::rate_range(p.low_bps, p.high_bps)),
        ip,
    );
    row("ADR (long trains)", opt(c.adr_bps, fmt::rate), ip);
}

/// The sender's rate, the sustained rate at each layer and its range, and the shaper's knees
/// and bucket.
fn rate_figures(tb: &mut Table, c: &CapacityRun, ip: &str) {
    let mut row = |f: &str, v: String, l: &str| push_figure(tb, f, v, l);
    row(
        "Sender's departure rate",
        opt(c.departure_bps, fmt::rate),
        ip,
    );
    row(
        "Arrival / departure",
        opt(c.arrival_share, |v| fmt::percent(v * 100.0)),
        "",
    );
    row("Sustained rate", opt(c.sustained_bps, fmt::rate), ip);
    row(
        "Sustained rate",
        opt(c.sustained_payload_bps, fmt::rate),
        "UDP payload",
    );
    row(
        "Sustained rate",
        opt(c.sustained_shaper_bps, fmt::rate),
        "as a Linux shaper counts",
    );
    if let (Some(lo), Some(hi)) = (c.sustained_min_bps, c.sustained_max_bps) {
        row("Sustained range", fmt::rate_range(lo, hi), ip);
    }
    row("Long trains with a knee", count(c.knees), "");
    row(
        "Bucket",
        opt(c.bucket_bytes, |b| fmt::bytes(b as u64)),
        &format!("{ip} bytes"),
    );
}

/// How the run measured: datagram sizes, whose receive times, an early stop, how long.
fn method_figures(tb: &mut Table, c: &CapacityRun) {
    let mut row = |f: &str, v: String, l: &str| push_figure(tb, f, v, l);
    row(
        "Datagram",
        match (c.payload_bytes, c.ip_bytes) {
            (Some(p), Some(i)) => format!("{p} B UDP payload, {i} B IP"),
            _ => DASH.into(),
        },
        "",
    );
    row(
        "Receive times",
        match c.kernel_timestamps {
            Some(true) => "the kernel's (SO_TIMESTAMPING)".into(),
            Some(false) => "the wall clock after each read".into(),
            None => DASH.into(),
        },
        "",
    );
    row(
        "Early stop",
        c.early_stop
            .as_ref()
            .map_or_else(|| DASH.into(), |es| es.describe()),
        "",
    );
    row(
        "Trains sent",
        match (c.trains_sent, c.trains_planned) {
            (Some(s), Some(p)) => {
                format!(
                    "{s} of {p} planned{}",
                    if c.quick { " (--quick)" } else { "" }
                )
            }
            _ => DASH.into(),
        },
        "",
    );
    row(
        "Longest train without loss",
        c.longest
            .as_ref()
            .map_or_else(|| DASH.into(), |l| l.describe()),
        "",
    );
    row("Run time", opt(c.seconds, fmt::secs), "");
}

/// The capacity table, with the verdict's meaning and the overhead model as its note.
pub fn sections(c: &CapacityRun) -> Vec<Section> {
    let verdict = match c.verdict.as_deref() {
        Some("host-limited") => {
            "Host-limited: long trains arrived about as fast as the sender handed them over, so \
             these rates are the hosts' speed, not the path's capacity. "
        }
        Some("shaped") => {
            "Shaped: a token bucket, with a peak rate, a lower sustained rate and a bucket. "
        }
        Some("link") => "One rate throughout: the path's capacity. ",
        Some("unmeasured") => "Unmeasured: too few usable trains. ",
        _ => "",
    };
    let model = c
        .overhead_model
        .as_ref()
        .map_or_else(String::new, |m| format!("Overhead model: {m}."));
    let mut out = vec![Section::new(
        "Capacity",
        Some(format!("{verdict}{model}")),
        figures(c),
    )];
    if let Some(tb) = size_table(c) {
        out.push(Section::new(
            "Capacity per probe size",
            Some(
                "Short trains by the size of their datagrams as they arrived: each size's \
                 strongest mode and its bin, the capacity as a range per size."
                    .into(),
            ),
            tb,
        ));
    }
    out
}
