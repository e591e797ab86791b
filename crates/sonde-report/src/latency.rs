//! Reading sonde's latency document (`sonde latency -J`) into a [`Latency`]: the loss and
//! jitter figures, the RTT distribution (quantiles, and every round trip binned when the
//! document has them) and the median RTT per interval.
//!
//! Read through the document's typed model ([`sonde_schema::latency`]): a document that does
//! not fit it (a summary without its loss counts or jitter, say) is an error naming the field,
//! not a report of dashes.

use serde::Serialize;
use serde_json::Value;
use sonde_schema::latency::{self as schema, LatencyDocument};

use crate::json::tool;
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
    /// The view of a distribution (a figure that is not finite reads as 0).
    pub(crate) fn of(d: &schema::DelayStats) -> DelayView {
        let f = |x: f64| if x.is_finite() { x } else { 0.0 };
        DelayView {
            samples: d.samples,
            min: f(d.min_ms),
            mean: f(d.mean_ms),
            median: f(d.median_ms),
            p90: f(d.p90_ms),
            p99: f(d.p99_ms),
            p999: f(d.p999_ms),
            max: f(d.max_ms),
            stddev: f(d.stddev_ms),
        }
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
    fn read(h: Option<&schema::Histogram>) -> Option<RttHistogram> {
        let h = h.filter(|h| h.unit == "ms")?;
        let mut bins: Vec<(f64, f64, u64)> = h
            .bins
            .iter()
            .copied()
            .filter(|&(lo, hi, n)| lo.is_finite() && hi.is_finite() && lo <= hi && n > 0)
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

/// Reads a latency document (one with `start.mode`) through its model; a document that
/// does not fit it is an error naming the kind and the field.
pub(crate) fn latency(doc: &Value) -> Result<Latency, String> {
    let tool = tool(doc);
    let d: LatencyDocument = crate::json::model("latency", doc)?;
    let finite = |f: f64| Some(f).filter(|f| f.is_finite());
    let mut over_time = Series::new("median RTT per interval".into());
    for iv in &d.intervals {
        // An interval without an answer has no median: the line breaks there.
        match (finite(iv.end), iv.rtt.and_then(|r| finite(r.median_ms))) {
            (Some(end), Some(ms)) => over_time.push(iv.start.and_then(finite), end, end, ms),
            _ => over_time.skip(),
        }
    }
    let start = d.start.as_ref();
    let end = d.end.as_ref();
    Ok(Latency {
        mode: start.map_or("?", |s| s.mode.as_str()).to_owned(),
        tool,
        target: start.and_then(|s| s.target.clone()),
        family: start.and_then(|s| s.family.clone()),
        size: start.and_then(|s| s.size).map(u64::from),
        version: start.and_then(|s| s.version.clone()),
        timestamp_unix: start.and_then(|s| s.timestamp_unix).and_then(finite),
        sent: end.map(|e| e.loss.sent),
        received: end.map(|e| e.loss.received),
        loss_percent: end.and_then(|e| finite(e.loss.loss_percent)),
        jitter_ms: end.and_then(|e| finite(e.jitter_ms)),
        rtt: end.and_then(|e| e.rtt.as_ref()).map(DelayView::of),
        rtt_histogram: RttHistogram::read(end.and_then(|e| e.rtt_histogram.as_ref())),
        over_time,
        partial: end.is_none_or(|e| e.partial),
        error: d
            .envelope
            .error
            .or_else(|| end.and_then(|e| e.error.clone())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_without_its_jitter_is_an_error_not_a_dash() {
        let doc = serde_json::json!({"kind": "latency", "start": {"mode": "udp", "target": "h"},
            "end": {"loss": {"sent": 3, "received": 3, "loss_percent": 0.0}, "jitter_ms": 0.1,
                    "rtt": null}});
        let l = latency(&doc).unwrap();
        assert_eq!(
            (l.mode.as_str(), l.sent, l.jitter_ms),
            ("udp", Some(3), Some(0.1))
        );
        assert!(!l.partial);
        let mut lacking = doc.clone();
        if let Some(end) = lacking["end"].as_object_mut() {
            end.remove("jitter_ms");
        }
        let e = crate::result::read(&lacking).unwrap_err();
        assert!(e.contains("latency") && e.contains("jitter_ms"), "{e}");
    }
}
