//! The compare-ip report: each family's overview, the latency per probe size with both
//! families' rows next to each other, BTC and capacity with a column per family, and the
//! verdict with each measure it weighed. Above the reader ([`crate::compare_ip`]), as every
//! renderer is above the model it shows.
//!
//! The latency against the probe's size, per family, the median of each size
//! as a marker with its min..max as a whisker (what the table rows give). The x axis is the
//! IP packet, so the two families' whiskers of one payload size stand 20 bytes apart (the
//! IPv6 header's extra) instead of on top of each other. The charts along the run are
//! [`crate::compare_ip_time`]'s. The other figures are a handful per family, which a table
//! shows exactly.

use crate::compare_ip::{path_figure, CompareIpRun, SizeRow};
use crate::fmt::{self, opt};
use crate::model::TestView;
use crate::result::ResultDoc;
use crate::svg::{Chart, Line, Style};
use crate::table::{count, Section, Table, DASH};

fn ms(v: Option<f64>) -> String {
    opt(v, fmt::ms)
}

/// A figure in the measure's unit.
fn in_unit(v: Option<f64>, unit: &str) -> String {
    opt(v, |x| {
        if unit.starts_with("bit/s") {
            fmt::rate(x)
        } else if unit == "ms" {
            fmt::ms(x)
        } else {
            format!("{} {unit}", fmt::num(x, 3))
        }
    })
}

/// Rows of `(figure, value)` per family as one table with a column per family.
fn side_by_side(per: &[(String, Vec<(String, String)>)]) -> Table {
    let mut header = vec!["Figure".to_owned()];
    header.extend(per.iter().map(|(f, _)| f.clone()));
    let mut tb = Table {
        header,
        rows: Vec::new(),
    };
    let keys: Vec<String> = per
        .first()
        .map(|(_, rows)| rows.iter().map(|r| r.0.clone()).collect())
        .unwrap_or_default();
    for k in keys {
        let mut row = vec![k.clone()];
        for (_, rows) in per {
            row.push(
                rows.iter()
                    .find(|r| r.0 == k)
                    .map_or_else(|| DASH.into(), |r| r.1.clone()),
            );
        }
        if row[1..].iter().any(|c| c != DASH) {
            tb.rows.push(row);
        }
    }
    tb
}

fn families(c: &CompareIpRun) -> Table {
    let mut tb = Table::new(&[
        "Family",
        "Address",
        "RTT median",
        "RTT mean",
        "Loss",
        "Throughput (TCP payload)",
        "Error",
    ]);
    for f in &c.families {
        tb.rows.push(vec![
            f.family.clone(),
            f.address.clone().unwrap_or_else(|| DASH.into()),
            ms(f.rtt_median_ms),
            ms(f.rtt_mean_ms),
            opt(f.loss_percent, fmt::percent),
            opt(f.throughput_bps, fmt::rate),
            f.error.clone().unwrap_or_else(|| DASH.into()),
        ]);
    }
    tb.drop_empty_columns(1)
}

fn sizes(c: &CompareIpRun) -> Table {
    let mut tb = Table::new(&[
        "Size", "Family", "Sent", "Received", "Loss", "Min", "Max", "Avg", "Median", "Stddev",
        "Variance", "Error",
    ]);
    let mut rows: Vec<&SizeRow> = c.sizes.iter().collect();
    // Both families of one size next to each other, sizes ascending (a stable sort keeps
    // the document's family order).
    rows.sort_by_key(|r| r.payload_bytes.unwrap_or(0));
    for r in rows {
        let mut cells = vec![
            match (r.payload_bytes, r.ip_bytes) {
                (Some(p), Some(i)) => format!("{p} B ({i} B IP)"),
                (Some(p), None) => format!("{p} B"),
                _ => DASH.into(),
            },
            r.family.clone(),
            count(r.sent),
            count(r.received),
            opt(r.loss_percent, fmt::percent),
        ];
        cells.extend(r.rtt[..5].iter().map(|v| ms(*v)));
        cells.push(opt(r.rtt[5], |v| format!("{} ms²", fmt::num(v, 6))));
        cells.push(r.error.clone().unwrap_or_else(|| DASH.into()));
        tb.rows.push(cells);
    }
    tb.drop_empty_columns(2)
}

fn measures(c: &CompareIpRun) -> Table {
    let mut tb = Table::new(&[
        "Measure",
        "IPv4",
        "IPv6",
        "Better",
        "Margin",
        "p",
        "Samples (v4/v6)",
        "Test",
        "Significant",
        "Note",
    ]);
    for m in &c.measures {
        tb.rows.push(vec![
            format!("{} ({})", m.measure, m.unit),
            in_unit(m.ipv4, &m.unit),
            in_unit(m.ipv6, &m.unit),
            m.better.clone(),
            opt(m.margin_pct, fmt::percent),
            opt(m.p_value, |p| fmt::num(p, 4)),
            format!("{}/{}", count(m.samples.0), count(m.samples.1)),
            m.test.clone().unwrap_or_else(|| DASH.into()),
            match m.significant {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => DASH.into(),
            },
            m.note.clone().unwrap_or_else(|| DASH.into()),
        ]);
    }
    tb.drop_empty_columns(1)
}

/// Latency against the probe's IP size, per family: median markers, min..max whiskers.
pub fn latency_by_size(t: &TestView) -> Option<Chart> {
    let Some(ResultDoc::CompareIp(c)) = &t.result else {
        return None;
    };
    let mut families: Vec<&str> = Vec::new();
    for r in &c.sizes {
        if !families.contains(&r.family.as_str()) {
            families.push(&r.family);
        }
    }
    let mut lines = Vec::new();
    for fam in families {
        // (IP bytes, min, max, median, probes answered) of the rows with figures.
        let rows: Vec<(f64, f64, f64, f64, u64)> = c
            .sizes
            .iter()
            .filter(|r| r.family == fam)
            .filter_map(|r| {
                let [min, max, _, median, ..] = r.rtt;
                Some((
                    r.ip_bytes? as f64,
                    min?,
                    max?,
                    median?,
                    r.received.unwrap_or(0),
                ))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let answered: u64 = rows.iter().map(|r| r.4).sum();
        lines.push(Line {
            name: format!(
                "{fam} median ({} sizes, {answered} probes answered)",
                rows.len()
            ),
            points: rows.iter().map(|r| (r.0, r.3)).collect(),
            style: Style::Markers,
        });
        lines.push(Line {
            name: format!("{fam} min..max"),
            points: rows.iter().flat_map(|r| [(r.0, r.1), (r.0, r.2)]).collect(),
            style: Style::Joined {
                breaks: (1..rows.len()).map(|i| 2 * i).collect(),
            },
        });
    }
    let every = c
        .every_secs
        .map_or_else(String::new, |s| format!(", a probe every {}", fmt::secs(s)));
    let chart = Chart {
        title: format!(
            "Round-trip time against probe size, per family{every}: {}",
            t.id
        ),
        x_label: "IP packet (bytes; UDP payload + 28 B over IPv4, + 48 B over IPv6)".into(),
        y_label: "RTT, median and min..max".into(),
        y_unit: "ms".into(),
        si: false,
        y_range: None,
        lines,
    };
    chart.has_data().then_some(chart)
}

/// The compare-ip charts, in page order.
pub fn charts(t: &TestView) -> Vec<Option<Chart>> {
    vec![
        latency_by_size(t),
        crate::compare_ip_time::latency(t),
        crate::compare_ip_time::btc(t),
    ]
}

/// The compare-ip tables: families, latency per size, BTC, capacity, verdict.
pub fn sections(c: &CompareIpRun) -> Vec<Section> {
    let mut out = vec![Section::new("IPv4 and IPv6", None, families(c))];
    if !c.sizes.is_empty() {
        let every = c.every_secs.map_or_else(String::new, |s| {
            format!(", one probe every {} per family", fmt::secs(s))
        });
        out.push(Section::new(
            "Latency per probe size",
            Some(format!("UDP probes; round-trip times{every}.")),
            sizes(c),
        ));
    }
    if !c.btc.is_empty() {
        out.push(Section::new(
            "Bulk transfer capacity",
            Some("Goodput of the TCP sessions (TCP payload).".into()),
            side_by_side(&c.btc),
        ));
    }
    if !c.capacity.is_empty() {
        let hosts = c.capacity.iter().any(|(_, rows)| {
            rows.iter()
                .any(|(k, v)| k == "Verdict" && !path_figure(Some(v)))
        });
        out.push(Section::new(
            "Path capacity",
            Some(format!(
                "Packet-train dispersion; rates at the IP layer.{}",
                if hosts {
                    " A host-limited or unmeasured family has no path figure: the hosts, \
                     not the path, set its rate, or too few trains were usable."
                } else {
                    ""
                }
            )),
            side_by_side(&c.capacity),
        ));
    }
    let verdict = match (&c.better, &c.measure) {
        (Some(b), Some(m)) if b != "neither" => format!(
            "Better: {b}, on {m}, by {} (confidence {}).",
            opt(c.margin_pct, fmt::percent),
            opt(c.confidence, |v| fmt::num(v, 3))
        ),
        (Some(_), _) => "Better: neither.".into(),
        _ => String::new(),
    };
    let summary = c
        .summary
        .as_ref()
        .map_or_else(String::new, |s| format!(" {s}."));
    out.push(Section::new(
        "Verdict",
        Some(format!("{verdict}{summary}")).filter(|s| !s.is_empty()),
        measures(c),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare_ip::{is_compare_ip, read};
    use serde_json::json;

    #[test]
    fn btc_and_capacity_sit_side_by_side() {
        let d = json!({"ipv4": {"family": "IPv4"}, "ipv6": {"family": "IPv6"},
            "btc": [{"family": "IPv4", "summary": {"sessions": 2, "mean_bps": 1e6,
                        "min_bps": 1e6, "max_bps": 1e6, "median_bps": 1e6}},
                    {"family": "IPv6", "summary": {"sessions": 2, "mean_bps": 2e6,
                        "min_bps": 2e6, "max_bps": 2e6, "median_bps": 2e6}}],
            "verdict": {"better": "ipv6", "measure": "btc_mean", "margin_pct": 50.0,
                        "confidence": 0.99, "per_measure": []}});
        assert!(is_compare_ip(&d));
        let s = sections(&read(&d).unwrap());
        let btc = &s[1].table;
        assert_eq!(btc.header, ["Figure", "IPv4", "IPv6"]);
        assert_eq!(btc.rows[0], ["Sessions", "2", "2"]);
        assert!(btc
            .rows
            .iter()
            .any(|r| r == &["Mean", "1.00 Mbit/s", "2.00 Mbit/s"]));
        assert!(s[2]
            .note
            .as_deref()
            .unwrap_or("")
            .contains("Better: ipv6, on btc_mean"));
    }
}
