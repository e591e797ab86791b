//! Reading a path-capacity document (`sonde capacity -J`).
//!
//! Every rate in it is at the IP layer (the document says so in `layer`); the sustained rate
//! also comes at the UDP payload and as a Linux shaper counts it. The estimate carries the
//! short trains' dispersion rates, their histogram (bin width, counts from a start edge, the
//! local modes strongest first), the mode taken as the peak, the long trains' fits (rate of
//! the whole train, after and before the knee) and the verdict. Train lengths are in the
//! document from the version that draws rate against train length; an older document gets
//! no such chart, rather than one with guessed lengths.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sonde_stats::capacity::converge::EarlyStop;

use crate::json::{at, items, num, text, uint};

/// A local mode of the histogram: a bin's edges and its count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModeView {
    pub low_bps: f64,
    pub high_bps: f64,
    pub count: u64,
}

/// The short trains' histogram.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistogramView {
    pub bin_bps: f64,
    pub start_bps: f64,
    pub counts: Vec<u64>,
    /// Strongest first.
    pub modes: Vec<ModeView>,
}

/// One long train's fit, IP bit/s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FitView {
    pub whole_bps: Option<f64>,
    pub tail_bps: Option<f64>,
    pub head_bps: Option<f64>,
    pub knee_bytes: Option<u64>,
}

/// Train counts of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CountsView {
    pub trains: Option<u64>,
    pub clean: Option<u64>,
    pub coalesced: Option<u64>,
    pub used: Option<u64>,
}

/// A capacity run as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityRun {
    pub host: Option<String>,
    pub server: Option<String>,
    pub family: Option<String>,
    /// The layer of the rates ("ip").
    pub layer: String,
    pub overhead_model: Option<String>,
    pub payload_bytes: Option<u64>,
    pub ip_bytes: Option<u64>,
    /// Datagrams per short and per long train.
    pub short_len: Option<u64>,
    pub long_len: Option<u64>,
    pub kernel_timestamps: Option<bool>,
    pub seconds: Option<f64>,
    /// host-limited, shaped, link or unmeasured.
    pub verdict: Option<String>,
    pub sustained_payload_bps: Option<f64>,
    pub sustained_shaper_bps: Option<f64>,
    pub short: CountsView,
    pub long: CountsView,
    pub short_rates: Vec<f64>,
    pub histogram: Option<HistogramView>,
    pub cov: Option<f64>,
    pub peak: Option<ModeView>,
    pub adr_bps: Option<f64>,
    pub sustained_bps: Option<f64>,
    pub sustained_min_bps: Option<f64>,
    pub sustained_max_bps: Option<f64>,
    pub bucket_bytes: Option<f64>,
    pub knees: Option<u64>,
    pub departure_bps: Option<f64>,
    pub arrival_share: Option<f64>,
    pub fits: Vec<FitView>,
    /// Whether the run stopped once its long trains agreed (the command's own record; None
    /// in documents from before it, or when it does not read as one).
    pub early_stop: Option<EarlyStop>,
    pub partial: bool,
    pub error: Option<String>,
}

/// Whether `doc` is a capacity document: an overhead model and an estimate (or its
/// absence, `null`, when too little arrived).
pub fn is_capacity(doc: &Value) -> bool {
    doc.get("overhead_model").is_some_and(Value::is_string) && doc.get("estimate").is_some()
}

fn mode(v: &Value) -> Option<ModeView> {
    Some(ModeView {
        low_bps: num(v, &["low_bps"])?,
        high_bps: num(v, &["high_bps"])?,
        count: uint(v, &["count"]).unwrap_or(0),
    })
}

fn counts(e: &Value, k: &str) -> CountsView {
    let c = |f: &str| uint(e, &[k, f]);
    CountsView {
        trains: c("trains"),
        clean: c("clean"),
        coalesced: c("coalesced"),
        used: c("used"),
    }
}

fn histogram(e: &Value) -> Option<HistogramView> {
    let h = e.get("histogram").filter(|h| h.is_object())?;
    Some(HistogramView {
        bin_bps: num(h, &["bin_bps"]).filter(|b| *b > 0.0)?,
        start_bps: num(h, &["start_bps"]).unwrap_or(0.0),
        counts: items(h, "counts").filter_map(Value::as_u64).collect(),
        modes: items(h, "modes").filter_map(mode).collect(),
    })
}

/// Reads a capacity document; what is missing is `None` (dashes in the tables).
pub fn read(doc: &Value) -> CapacityRun {
    let null = Value::Null;
    let e = doc.get("estimate").unwrap_or(&null);
    let n = |k: &str| num(e, &[k]);
    CapacityRun {
        host: text(doc, &["host"]),
        server: text(doc, &["server"]),
        family: text(doc, &["family"]),
        layer: text(doc, &["layer"]).unwrap_or_else(|| "ip".into()),
        overhead_model: text(doc, &["overhead_model"]),
        payload_bytes: uint(doc, &["payload_bytes"]),
        ip_bytes: uint(doc, &["ip_bytes"]),
        short_len: uint(doc, &["short_train_len"]),
        long_len: uint(doc, &["long_train_len"]),
        kernel_timestamps: at(doc, &["kernel_timestamps"]).and_then(Value::as_bool),
        seconds: num(doc, &["seconds"]),
        verdict: text(doc, &["verdict"]),
        sustained_payload_bps: num(doc, &["sustained_payload_bps"]),
        sustained_shaper_bps: num(doc, &["sustained_shaper_bps"]),
        short: counts(e, "short"),
        long: counts(e, "long"),
        short_rates: items(e, "short_rates")
            .filter_map(Value::as_f64)
            .filter(|r| r.is_finite())
            .collect(),
        histogram: histogram(e),
        cov: n("cov"),
        peak: e.get("peak").and_then(mode),
        adr_bps: n("adr_bps"),
        sustained_bps: n("sustained_bps"),
        sustained_min_bps: n("sustained_min_bps"),
        sustained_max_bps: n("sustained_max_bps"),
        bucket_bytes: n("bucket_bytes"),
        knees: uint(e, &["knees"]),
        departure_bps: n("departure_bps"),
        arrival_share: n("arrival_share"),
        fits: items(e, "fits")
            .map(|f| FitView {
                whole_bps: num(f, &["whole_bps"]),
                tail_bps: num(f, &["tail_bps"]),
                head_bps: num(f, &["head_bps"]),
                knee_bytes: uint(f, &["knee_bytes"]),
            })
            .collect(),
        early_stop: doc
            .get("early_stop")
            .and_then(|v| EarlyStop::deserialize(v).ok()),
        partial: doc.get("partial").and_then(Value::as_bool).unwrap_or(false),
        error: text(doc, &["error"]),
    }
}

impl CapacityRun {
    /// "capacity, IPv4".
    pub fn label(&self) -> String {
        match &self.family {
            Some(f) => format!("capacity, {f}"),
            None => "capacity".into(),
        }
    }

    /// The layer in words, for labels: "IP".
    pub fn layer_name(&self) -> String {
        if self.layer == "ip" {
            "IP".into()
        } else {
            self.layer.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_estimate() {
        let d = json!({"overhead_model": "IP = ...", "layer": "ip", "short_train_len": 10,
            "estimate": {"short": {"trains": 4, "used": 3}, "short_rates": [1.0, 2.0],
              "histogram": {"bin_bps": 0.5, "start_bps": 1.0, "counts": [1, 0, 1],
                            "modes": [{"low_bps": 1.0, "high_bps": 1.5, "count": 1}]},
              "peak": {"low_bps": 1.0, "high_bps": 1.5, "count": 1},
              "fits": [{"whole_bps": 3.0, "tail_bps": 2.0, "head_bps": null}]}});
        assert!(is_capacity(&d));
        let r = read(&d);
        assert_eq!(r.short.used, Some(3));
        assert_eq!(r.histogram.as_ref().map(|h| h.counts.len()), Some(3));
        assert_eq!(r.short_len, Some(10));
        assert_eq!(r.long_len, None);
        assert_eq!(r.fits[0].head_bps, None);
        assert!(!is_capacity(&json!({"estimate": null})));
    }
}
