//! A compare-ip document (`sonde compare-ip -J`) and its tables: each family's overview,
//! the latency per probe size with both families' rows next to each other, BTC and capacity
//! with a column per family, and the verdict with each measure it weighed.
//!
//! One chart: the latency against the probe's size, per family, the median of each size
//! as a marker with its min..max as a whisker (what the table rows give). The x axis is the
//! IP packet, so the two families' whiskers of one payload size stand 20 bytes apart (the
//! IPv6 header's extra) instead of on top of each other. The other figures are a handful per
//! family, which a table shows exactly.

use serde::Serialize;
use serde_json::Value;

use crate::fmt::{self, opt};
use crate::model::TestView;
use crate::result::ResultDoc;
use crate::result::{items, num, text, uint};
use crate::sections::Section;
use crate::svg::{Chart, Line, Style};
use crate::tables::{count, Table, DASH};

/// One family's overview: latency, loss and TCP throughput.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyView {
    pub family: String,
    pub address: Option<String>,
    pub rtt_median_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    pub loss_percent: Option<f64>,
    pub throughput_bps: Option<f64>,
    pub error: Option<String>,
}

/// One probe size of one family.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeRow {
    pub family: String,
    pub payload_bytes: Option<u64>,
    pub ip_bytes: Option<u64>,
    pub sent: Option<u64>,
    pub received: Option<u64>,
    pub loss_percent: Option<f64>,
    /// min, max, mean, median, stddev (ms) and variance (ms²).
    pub rtt: [Option<f64>; 6],
    pub error: Option<String>,
}

/// One measure the verdict weighed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasureRow {
    pub measure: String,
    pub unit: String,
    pub ipv4: Option<f64>,
    pub ipv6: Option<f64>,
    pub better: String,
    pub margin_pct: Option<f64>,
    pub p_value: Option<f64>,
    pub samples: (Option<u64>, Option<u64>),
    pub test: Option<String>,
    pub significant: Option<bool>,
    pub note: Option<String>,
}

/// A compare-ip run as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareIpRun {
    pub target: Option<String>,
    pub families: Vec<FamilyView>,
    pub every_secs: Option<f64>,
    pub sizes: Vec<SizeRow>,
    /// Per family: sessions, min, max, mean, median (bit/s), error.
    pub btc: Vec<(String, Vec<(String, String)>)>,
    /// Per family: verdict, sustained rate and range, peak mode, trains used, error.
    pub capacity: Vec<(String, Vec<(String, String)>)>,
    pub better: Option<String>,
    pub measure: Option<String>,
    pub margin_pct: Option<f64>,
    pub confidence: Option<f64>,
    pub summary: Option<String>,
    pub measures: Vec<MeasureRow>,
    pub partial: bool,
    pub error: Option<String>,
}

/// Whether `doc` is a compare-ip document: both families and a comparison or verdict.
pub fn is_compare_ip(doc: &Value) -> bool {
    doc.get("ipv4").is_some_and(Value::is_object)
        && doc.get("ipv6").is_some_and(Value::is_object)
        && (doc.get("verdict").is_some() || doc.get("latency").is_some())
}

fn family(v: &Value) -> FamilyView {
    FamilyView {
        family: text(v, &["family"]).unwrap_or_default(),
        address: text(v, &["address"]),
        rtt_median_ms: num(v, &["rtt", "median_ms"]),
        rtt_mean_ms: num(v, &["rtt", "mean_ms"]),
        loss_percent: num(v, &["loss_percent"]),
        throughput_bps: num(v, &["throughput_bps"]),
        error: text(v, &["error"]),
    }
}

fn rate(v: &Value, k: &[&str]) -> String {
    opt(num(v, k), fmt::rate)
}

fn btc(v: &Value) -> (String, Vec<(String, String)>) {
    let s = |k: &str| rate(v, &["summary", k]);
    (
        text(v, &["family"]).unwrap_or_default(),
        vec![
            ("Sessions".into(), count(uint(v, &["summary", "sessions"]))),
            ("Minimum".into(), s("min_bps")),
            ("Maximum".into(), s("max_bps")),
            ("Mean".into(), s("mean_bps")),
            ("Median".into(), s("median_bps")),
            (
                "Error".into(),
                text(v, &["error"]).unwrap_or_else(|| DASH.into()),
            ),
        ],
    )
}

/// Whether a capacity verdict comes with a figure of the path: a host-limited run measured
/// the hosts (the command's table and its verdict show no path figure for it either).
fn path_figure(verdict: Option<&str>) -> bool {
    !matches!(verdict, Some("host-limited" | "unmeasured"))
}

fn capacity(v: &Value) -> (String, Vec<(String, String)>) {
    let verdict = text(v, &["verdict"]);
    let shown = path_figure(verdict.as_deref());
    let rate = |k: &str| if shown { rate(v, &[k]) } else { DASH.into() };
    let range = |lo: &str, hi: &str| match (num(v, &[lo]), num(v, &[hi])) {
        (Some(l), Some(h)) if shown => fmt::rate_range(l, h),
        _ => DASH.into(),
    };
    (
        text(v, &["family"]).unwrap_or_default(),
        vec![
            ("Verdict".into(), verdict.unwrap_or_else(|| DASH.into())),
            ("Sustained rate".into(), rate("sustained_bps")),
            (
                "Sustained range".into(),
                range("sustained_min_bps", "sustained_max_bps"),
            ),
            ("Peak mode".into(), range("peak_low_bps", "peak_high_bps")),
            (
                "Long trains used".into(),
                count(uint(v, &["long_trains_used"])),
            ),
            (
                "UDP payload".into(),
                uint(v, &["payload_bytes"]).map_or_else(|| DASH.into(), |n| format!("{n} B")),
            ),
            ("Time".into(), opt(num(v, &["seconds"]), fmt::secs)),
            (
                "Error".into(),
                text(v, &["error"]).unwrap_or_else(|| DASH.into()),
            ),
        ],
    )
}

/// Reads a compare-ip document.
pub fn read(doc: &Value) -> CompareIpRun {
    let verdict = doc.get("verdict").cloned().unwrap_or(Value::Null);
    CompareIpRun {
        target: text(doc, &["target"]),
        families: ["ipv4", "ipv6"]
            .iter()
            .filter_map(|k| doc.get(*k).map(family))
            .collect(),
        every_secs: num(doc, &["every_secs"]),
        sizes: items(doc, "sizes")
            .map(|v| {
                let r = |k: &str| num(v, &["rtt", k]);
                SizeRow {
                    family: text(v, &["family"]).unwrap_or_default(),
                    payload_bytes: uint(v, &["payload_bytes"]),
                    ip_bytes: uint(v, &["ip_bytes"]),
                    sent: uint(v, &["sent"]),
                    received: uint(v, &["received"]),
                    loss_percent: num(v, &["loss_percent"]),
                    rtt: [
                        r("min_ms"),
                        r("max_ms"),
                        r("mean_ms"),
                        r("median_ms"),
                        r("stddev_ms"),
                        r("variance_ms2"),
                    ],
                    error: text(v, &["error"]),
                }
            })
            .collect(),
        btc: items(doc, "btc").map(btc).collect(),
        capacity: items(doc, "capacity").map(capacity).collect(),
        better: text(&verdict, &["better"]),
        measure: text(&verdict, &["measure"]),
        margin_pct: num(&verdict, &["margin_pct"]),
        confidence: num(&verdict, &["confidence"]),
        summary: text(&verdict, &["summary"]),
        measures: items(&verdict, "per_measure")
            .map(|m| MeasureRow {
                measure: text(m, &["measure"]).unwrap_or_default(),
                unit: text(m, &["unit"]).unwrap_or_default(),
                ipv4: num(m, &["ipv4"]),
                ipv6: num(m, &["ipv6"]),
                better: text(m, &["better"]).unwrap_or_default(),
                margin_pct: num(m, &["margin_pct"]),
                p_value: num(m, &["p_value"]),
                samples: (uint(m, &["samples_ipv4"]), uint(m, &["samples_ipv6"])),
                test: text(m, &["test"]),
                significant: m.get("significant").and_then(Value::as_bool),
                note: text(m, &["note"]),
            })
            .collect(),
        partial: doc.get("partial").and_then(Value::as_bool).unwrap_or(false),
        error: text(doc, &["error"]),
    }
}

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
    vec![latency_by_size(t)]
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
    use serde_json::json;

    #[test]
    fn btc_and_capacity_sit_side_by_side() {
        let d = json!({"ipv4": {"family": "IPv4"}, "ipv6": {"family": "IPv6"},
            "btc": [{"family": "IPv4", "summary": {"sessions": 2, "mean_bps": 1e6}},
                    {"family": "IPv6", "summary": {"sessions": 2, "mean_bps": 2e6}}],
            "verdict": {"better": "ipv6", "measure": "btc_mean", "margin_pct": 50.0,
                        "confidence": 0.99, "per_measure": []}});
        assert!(is_compare_ip(&d));
        let s = sections(&read(&d));
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
