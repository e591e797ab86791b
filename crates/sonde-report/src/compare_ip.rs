//! A compare-ip document (`sonde compare-ip -J`), read: each family's overview, the latency
//! per probe size, BTC and capacity per family (as the figure/value rows the report shows
//! side by side), and the verdict with each measure it weighed. The tables and the chart are
//! [`crate::compare_ip_report`]'s.

use serde::Serialize;
use serde_json::Value;

use crate::fmt::{self, opt};
use crate::json::{items, num, text, uint};
use crate::table::{count, DASH};

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
pub(crate) fn path_figure(verdict: Option<&str>) -> bool {
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
