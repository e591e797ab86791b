//! Reading sonde's latency document (`sonde latency -J`) into a [`Latency`]: the loss and
//! jitter figures, the RTT distribution (quantiles, and every round trip binned when the
//! document has them) and the median RTT per interval.

use serde::Serialize;
use serde_json::Value;

use crate::json::{at, num, text, tool, uint};
use crate::view::Series;

/// A delay distribution, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DelayView {
    pub samples: u64,
    pub min: f64,
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub stddev: f64,
}

impl DelayView {
    fn read(v: Option<&Value>) -> Option<DelayView> {
        let v = v.filter(|v| v.is_object())?;
        let f = |k: &str| num(v, &[k]).unwrap_or(0.0);
        Some(DelayView {
            samples: uint(v, &["samples"]).unwrap_or(0),
            min: f("min_ms"),
            mean: f("mean_ms"),
            median: f("median_ms"),
            p90: f("p90_ms"),
            p99: f("p99_ms"),
            p999: f("p999_ms"),
            max: f("max_ms"),
            stddev: f("stddev_ms"),
        })
    }
}

/// Round-trip times binned as the latency document's `end.rtt_histogram` holds them:
/// `{"unit": "ms", "bins": [[low, high, count], ...]}`, one entry per non-empty bin, in
/// ascending order, each sample counted in the bin with `low <= rtt <= high`.
///
/// This is what an honest distribution plot needs: every sample, at the resolution of its
/// bin, rather than a curve drawn through a few quantiles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RttHistogram {
    /// `(low_ms, high_ms, count)`, ascending, non-empty bins only.
    pub bins: Vec<(f64, f64, u64)>,
}

impl RttHistogram {
    fn read(v: Option<&Value>) -> Option<RttHistogram> {
        let v = v?;
        if text(v, &["unit"]).is_some_and(|u| u != "ms") {
            return None;
        }
        let mut bins: Vec<(f64, f64, u64)> = v
            .get("bins")?
            .as_array()?
            .iter()
            .filter_map(|b| {
                let b = b.as_array()?;
                let (lo, hi, n) = (
                    b.first()?.as_f64()?,
                    b.get(1)?.as_f64()?,
                    b.get(2)?.as_u64()?,
                );
                (lo.is_finite() && hi.is_finite() && lo <= hi && n > 0).then_some((lo, hi, n))
            })
            .collect();
        bins.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        (!bins.is_empty()).then_some(RttHistogram { bins })
    }

    /// Samples in the bins.
    pub fn samples(&self) -> u64 {
        self.bins.iter().map(|b| b.2).sum()
    }

    /// The widest bin, ms.
    pub fn widest_bin_ms(&self) -> f64 {
        self.bins.iter().map(|b| b.1 - b.0).fold(0.0, f64::max)
    }

    /// The empirical CDF as `(ms, fraction of samples at or below)`: starts at 0 at the
    /// lowest bin's low edge, then each bin's samples are counted at its high edge (so the
    /// curve never claims a sample below where it may lie).
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let total = self.samples() as f64;
        let mut out = Vec::with_capacity(self.bins.len() + 1);
        if let Some(first) = self.bins.first() {
            out.push((first.0, 0.0));
        }
        let mut seen = 0u64;
        for &(_, hi, n) in &self.bins {
            seen += n;
            out.push((hi, seen as f64 / total));
        }
        out
    }
}

/// A latency run's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    pub mode: String,
    /// The tool that wrote the document and its version ([`tool`]).
    pub tool: Option<String>,
    pub target: Option<String>,
    pub family: Option<String>,
    pub size: Option<u64>,
    pub version: Option<String>,
    pub timestamp_unix: Option<f64>,
    pub sent: Option<u64>,
    pub received: Option<u64>,
    pub loss_percent: Option<f64>,
    pub jitter_ms: Option<f64>,
    pub rtt: Option<DelayView>,
    /// Every round trip, binned, when the document has them.
    pub rtt_histogram: Option<RttHistogram>,
    /// Median RTT per interval, ms (plotted at each interval's end).
    pub over_time: Series,
    pub partial: bool,
    pub error: Option<String>,
}

/// Reads a latency document (one with `start.mode`).
pub(crate) fn latency(doc: &Value) -> Latency {
    let end = at(doc, &["end"]);
    let mut over_time = Series::new("median RTT per interval".into());
    for iv in doc
        .get("intervals")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        // An interval without an answer has no median: the line breaks there.
        if let (Some(end), Some(ms)) = (num(iv, &["end"]), num(iv, &["rtt", "median_ms"])) {
            over_time.push(num(iv, &["start"]), end, end, ms);
        } else {
            over_time.skip();
        }
    }
    let mode = match at(doc, &["start", "mode"]) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "?".into(),
    };
    Latency {
        mode,
        tool: tool(doc),
        target: text(doc, &["start", "target"]),
        family: text(doc, &["start", "family"]),
        size: uint(doc, &["start", "size"]),
        version: text(doc, &["start", "version"]),
        timestamp_unix: num(doc, &["start", "timestamp_unix"]),
        sent: end.and_then(|e| uint(e, &["loss", "sent"])),
        received: end.and_then(|e| uint(e, &["loss", "received"])),
        loss_percent: end.and_then(|e| num(e, &["loss", "loss_percent"])),
        jitter_ms: end.and_then(|e| num(e, &["jitter_ms"])),
        rtt: DelayView::read(end.and_then(|e| e.get("rtt"))),
        rtt_histogram: RttHistogram::read(end.and_then(|e| e.get("rtt_histogram"))),
        over_time,
        partial: end
            .and_then(|e| e.get("partial"))
            .and_then(Value::as_bool)
            .unwrap_or(end.is_none()),
        error: text(doc, &["error"]).or_else(|| end.and_then(|e| text(e, &["error"]))),
    }
}
