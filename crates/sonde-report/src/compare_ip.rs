//! A compare-ip document (`sonde compare-ip -J`), read: each family's overview, the latency
//! per probe size, BTC and capacity per family (as the figure/value rows the report shows
//! side by side), each family's latency and BTC along the run, and the verdict with each
//! measure it weighed. The tables and the charts are [`crate::compare_ip_report`]'s and
//! [`crate::compare_ip_time`]'s.
//!
//! Read through the document's typed model ([`sonde_schema::compare_ip`]): a document without
//! a figure the report shows (a size row's counts, a measure's outcome) is an error naming
//! the field.

use serde::Serialize;
use serde_json::Value;
use sonde_schema::compare_ip::{self as schema, CompareIpDocument};

use crate::fmt::{self, opt};
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
    /// Per family and span of the run: (family, span start in Unix s, median RTT ms).
    pub latency_over_time: Vec<(String, f64, Option<f64>)>,
    /// Every BTC session with a start time: (family, start in Unix s, goodput bit/s).
    pub btc_sessions: Vec<(String, f64, f64)>,
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

fn finite(f: f64) -> Option<f64> {
    Some(f).filter(|f| f.is_finite())
}

fn family(f: &schema::FamilyResult) -> FamilyView {
    FamilyView {
        family: f.family.clone(),
        address: f.address.clone(),
        rtt_median_ms: f.rtt.and_then(|r| finite(r.median_ms)),
        rtt_mean_ms: f.rtt.and_then(|r| finite(r.mean_ms)),
        loss_percent: f.loss_percent.and_then(finite),
        throughput_bps: f.throughput_bps.and_then(finite),
        error: f.error.clone(),
    }
}

fn rate(v: Option<f64>) -> String {
    opt(v.and_then(finite), fmt::rate)
}

fn btc(b: &schema::BtcFamily) -> (String, Vec<(String, String)>) {
    let s = b.summary.as_ref();
    let r = |f: fn(&sonde_schema::btc::BtcStats) -> f64| rate(s.map(f));
    (
        b.family.clone(),
        vec![
            ("Sessions".into(), count(s.map(|s| s.sessions))),
            ("Minimum".into(), r(|s| s.min_bps)),
            ("Maximum".into(), r(|s| s.max_bps)),
            ("Mean".into(), r(|s| s.mean_bps)),
            ("Median".into(), r(|s| s.median_bps)),
            (
                "Error".into(),
                b.error.clone().unwrap_or_else(|| DASH.into()),
            ),
        ],
    )
}

/// Whether a capacity verdict comes with a figure of the path: a host-limited run measured
/// the hosts (the command's table and its verdict show no path figure for it either).
pub(crate) fn path_figure(verdict: Option<&str>) -> bool {
    !matches!(verdict, Some("host-limited" | "unmeasured"))
}

fn capacity(c: &schema::CapacityFamily) -> (String, Vec<(String, String)>) {
    let verdict = c.verdict.map(|v| v.as_str());
    let shown = path_figure(verdict);
    let range = |lo: Option<f64>, hi: Option<f64>| match (lo.and_then(finite), hi.and_then(finite))
    {
        (Some(l), Some(h)) if shown => fmt::rate_range(l, h),
        _ => DASH.into(),
    };
    (
        c.family.clone(),
        vec![
            ("Verdict".into(), verdict.unwrap_or(DASH).to_owned()),
            (
                "Sustained rate".into(),
                if shown {
                    rate(c.sustained_bps)
                } else {
                    DASH.into()
                },
            ),
            (
                "Sustained range".into(),
                range(c.sustained_min_bps, c.sustained_max_bps),
            ),
            ("Peak mode".into(), range(c.peak_low_bps, c.peak_high_bps)),
            (
                "Long trains used".into(),
                count(Some(u64::from(c.long_trains_used))),
            ),
            ("UDP payload".into(), format!("{} B", c.payload_bytes)),
            ("Time".into(), opt(finite(c.seconds), fmt::secs)),
            (
                "Error".into(),
                c.error.clone().unwrap_or_else(|| DASH.into()),
            ),
        ],
    )
}

fn size(r: &schema::SizeRow) -> SizeRow {
    let rtt =
        |f: fn(&sonde_schema::latency::DelayStats) -> f64| r.rtt.as_ref().map(f).and_then(finite);
    SizeRow {
        family: r.family.clone(),
        payload_bytes: Some(u64::from(r.payload_bytes)),
        ip_bytes: r.ip_bytes.map(u64::from),
        sent: Some(r.sent),
        received: Some(r.received),
        loss_percent: finite(r.loss_percent),
        rtt: [
            rtt(|d| d.min_ms),
            rtt(|d| d.max_ms),
            rtt(|d| d.mean_ms),
            rtt(|d| d.median_ms),
            rtt(|d| d.stddev_ms),
            rtt(|d| d.variance_ms2),
        ],
        error: r.error.clone(),
    }
}

fn measure(m: &schema::MeasureVerdict) -> MeasureRow {
    MeasureRow {
        measure: m.measure.as_str().to_owned(),
        unit: m.unit.clone(),
        ipv4: m.ipv4.and_then(finite),
        ipv6: m.ipv6.and_then(finite),
        better: m.better.as_str().to_owned(),
        margin_pct: finite(m.margin_pct),
        p_value: m.p_value.and_then(finite),
        samples: (Some(m.samples_ipv4), Some(m.samples_ipv6)),
        test: m.test.clone(),
        significant: Some(m.significant),
        note: m.note.clone(),
    }
}

/// Reads a compare-ip document through its model; a document that does not fit it is an
/// error naming the kind and the field.
pub fn read(doc: &Value) -> Result<CompareIpRun, String> {
    let d: CompareIpDocument = crate::json::model("compare-ip", doc)?;
    let v = d.verdict.as_ref();
    Ok(CompareIpRun {
        target: d.target.clone(),
        families: vec![family(&d.ipv4), family(&d.ipv6)],
        every_secs: d.every_secs.and_then(finite),
        sizes: d.sizes.iter().map(size).collect(),
        latency_over_time: d
            .latency_over_time
            .iter()
            .filter_map(|b| {
                Some((
                    b.family.clone(),
                    finite(b.start_unix)?,
                    b.median_ms.and_then(finite),
                ))
            })
            .collect(),
        btc_sessions: d
            .btc
            .iter()
            .flatten()
            .flat_map(|f| &f.sessions)
            .filter(|s| s.start_unix_s > 0.0)
            .filter_map(|s| {
                Some((
                    s.family.clone(),
                    finite(s.start_unix_s)?,
                    finite(s.goodput_bps)?,
                ))
            })
            .collect(),
        btc: d.btc.iter().flatten().map(btc).collect(),
        capacity: d.capacity.iter().flatten().map(capacity).collect(),
        better: v.map(|v| v.better.as_str().to_owned()),
        measure: v.and_then(|v| v.measure).map(|m| m.as_str().to_owned()),
        margin_pct: v.and_then(|v| finite(v.margin_pct)),
        confidence: v.and_then(|v| v.confidence).and_then(finite),
        summary: v.and_then(|v| v.summary.clone()),
        measures: v.map_or_else(Vec::new, |v| v.per_measure.iter().map(measure).collect()),
        partial: d.envelope.partial,
        error: d.envelope.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measure_without_its_outcome_is_an_error_not_a_dash() {
        let doc = serde_json::json!({"kind": "compare-ip", "ipv4": {"family": "IPv4"},
            "ipv6": {"family": "IPv6", "error": "no address"},
            "verdict": {"better": "neither", "margin_pct": 0.0,
                        "per_measure": [{"measure": "latency_median", "better": "neither",
                                         "margin_pct": 1.0, "significant": false}]}});
        let r = read(&doc).unwrap();
        assert_eq!(r.measures[0].measure, "latency_median");
        assert_eq!(r.families[1].error.as_deref(), Some("no address"));
        let mut lacking = doc.clone();
        if let Some(m) = lacking["verdict"]["per_measure"][0].as_object_mut() {
            m.remove("significant");
        }
        let e = crate::result::read(&lacking).unwrap_err();
        assert!(e.contains("compare-ip") && e.contains("significant"), "{e}");
    }
}
