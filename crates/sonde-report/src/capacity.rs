//! Reading a path-capacity document (`sonde capacity -J`).
//!
//! Every rate in it is at the IP layer (the document says so in `layer`); the sustained rate
//! also comes at the UDP payload and as a Linux shaper counts it. The estimate carries the
//! short trains' dispersion rates, their histogram (bin width, counts from a start edge, the
//! local modes strongest first), the mode taken as the peak, the long trains' fits (rate of
//! the whole train, after and before the knee) and the verdict. Train lengths are in the
//! document from the version that draws rate against train length; an older document gets
//! no such chart, rather than one with guessed lengths.
//!
//! Read through the document's typed model ([`sonde_schema::capacity`]): a document without
//! a figure the report shows (its seconds, an estimate's verdict or train counts) is an error
//! naming the field.

use serde::Serialize;
use serde_json::Value;
use sonde_schema::capacity::{self as schema, CapacityDocument};
use sonde_stats::capacity::converge::{Convergence, EarlyStop, StopRule};

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
    /// `--quick`, and the trains planned and sent (None in documents from before them).
    pub quick: bool,
    pub trains_planned: Option<u32>,
    pub trains_sent: Option<u32>,
    /// With `--sizes`: the estimate per probe size (empty otherwise).
    pub by_size: Vec<schema::SizeRow>,
    /// With `--longest-train`: the search, as the command's own record.
    pub longest: Option<sonde_stats::capacity::longest::LongestOutcome>,
    pub partial: bool,
    pub error: Option<String>,
}

/// Whether `doc` is a capacity document: an overhead model and an estimate (or its
/// absence, `null`, when too little arrived).
pub fn is_capacity(doc: &Value) -> bool {
    doc.get("overhead_model").is_some_and(Value::is_string) && doc.get("estimate").is_some()
}

fn finite(f: f64) -> Option<f64> {
    Some(f).filter(|f| f.is_finite())
}

fn mode(m: &schema::Mode) -> Option<ModeView> {
    Some(ModeView {
        low_bps: finite(m.low_bps)?,
        high_bps: finite(m.high_bps)?,
        count: u64::from(m.count),
    })
}

fn counts(c: Option<&schema::TrainCounts>) -> CountsView {
    let c = |f: fn(&schema::TrainCounts) -> u32| c.map(|c| u64::from(f(c)));
    CountsView {
        trains: c(|c| c.trains),
        clean: c(|c| c.clean),
        coalesced: c(|c| c.coalesced),
        used: c(|c| c.used),
    }
}

fn histogram(h: &schema::Histogram) -> Option<HistogramView> {
    Some(HistogramView {
        bin_bps: finite(h.bin_bps).filter(|b| *b > 0.0)?,
        start_bps: finite(h.start_bps).unwrap_or(0.0),
        counts: h.counts.iter().map(|&c| u64::from(c)).collect(),
        modes: h.modes.iter().filter_map(mode).collect(),
    })
}

/// The early stop as the tables describe it (`sonde_stats`' own type, whose `describe` says
/// it in words).
fn early_stop(es: &schema::EarlyStop) -> EarlyStop {
    let r = es.rule;
    EarlyStop {
        enabled: es.enabled,
        rule: StopRule {
            min_trains: r.min_trains,
            window: r.window,
            max_spread: r.max_spread,
            max_ci: r.max_ci,
            host_paced_stops: r.host_paced_stops,
        },
        planned_long_trains: es.planned_long_trains,
        stopped: es.stopped,
        after_long_trains: es.after_long_trains,
        last: es.last.map(|c| Convergence {
            long_trains: c.long_trains,
            mean_bps: c.mean_bps,
            spread: c.spread,
            ci_half: c.ci_half,
            same_shape: c.same_shape,
            converged: c.converged,
        }),
    }
}

fn longest(l: &schema::LongestTrain) -> sonde_stats::capacity::longest::LongestOutcome {
    use sonde_stats::capacity::longest::{LengthSearch, LongestOutcome, Tried};
    let tried: Vec<Tried> = l
        .tried
        .iter()
        .map(|t| Tried {
            len: t.len,
            received: t.received,
            lost: t.lost,
        })
        .collect();
    LongestOutcome {
        search: LengthSearch {
            min: tried.iter().map(|t| t.len).min().unwrap_or(0),
            max: l.max_len,
            start: tried.first().map_or(0, |t| t.len),
            loss_free: l.length,
            lossy: l.shortest_lossy,
            tried,
        },
        seconds: l.seconds,
        time_limited: l.time_limited,
        limit_secs: l.limit_secs,
    }
}

/// Reads a capacity document through its model; what is optional and missing is `None`
/// (dashes in the tables), a missing figure the model requires an error naming it.
pub fn read(doc: &Value) -> Result<CapacityRun, String> {
    let d: CapacityDocument = crate::json::model("capacity", doc)?;
    let e = d.estimate.as_ref();
    let n = |f: fn(&schema::Estimate) -> Option<f64>| e.and_then(f).and_then(finite);
    Ok(CapacityRun {
        host: d.host.clone(),
        server: d.server.clone(),
        family: d.family.clone(),
        layer: d.layer.clone().unwrap_or_else(|| "ip".into()),
        overhead_model: Some(d.overhead_model.clone()),
        payload_bytes: Some(u64::from(d.payload_bytes)),
        ip_bytes: Some(u64::from(d.ip_bytes)),
        short_len: d.short_train_len.map(u64::from),
        long_len: d.long_train_len.map(u64::from),
        kernel_timestamps: d.kernel_timestamps,
        seconds: finite(d.seconds),
        verdict: d.verdict.map(|v| v.as_str().to_owned()),
        sustained_payload_bps: d.sustained_payload_bps.and_then(finite),
        sustained_shaper_bps: d.sustained_shaper_bps.and_then(finite),
        short: counts(e.map(|e| &e.short)),
        long: counts(e.map(|e| &e.long)),
        short_rates: e
            .map(|e| e.short_rates.iter().copied().filter_map(finite).collect())
            .unwrap_or_default(),
        histogram: e.and_then(|e| e.histogram.as_ref()).and_then(histogram),
        cov: n(|e| e.cov),
        peak: e.and_then(|e| e.peak.as_ref()).and_then(mode),
        adr_bps: n(|e| e.adr_bps),
        sustained_bps: n(|e| e.sustained_bps),
        sustained_min_bps: n(|e| e.sustained_min_bps),
        sustained_max_bps: n(|e| e.sustained_max_bps),
        bucket_bytes: n(|e| e.bucket_bytes),
        knees: e.map(|e| u64::from(e.knees)),
        departure_bps: n(|e| e.departure_bps),
        arrival_share: n(|e| e.arrival_share),
        fits: e
            .map(|e| {
                e.fits
                    .iter()
                    .map(|f| FitView {
                        whole_bps: finite(f.whole_bps),
                        tail_bps: finite(f.tail_bps),
                        head_bps: f.head_bps.and_then(finite),
                        knee_bytes: f.knee_bytes,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        early_stop: d.early_stop.as_ref().map(early_stop),
        quick: d.quick,
        trains_planned: d.trains_planned,
        trains_sent: d.trains_sent,
        by_size: d.by_size.clone(),
        longest: d.longest_loss_free_train.as_ref().map(longest),
        partial: d.envelope.partial,
        error: d.envelope.error,
    })
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
            "payload_bytes": 1472, "ip_bytes": 1500, "seconds": 1.0,
            "estimate": {"verdict": "link", "knees": 0,
              "short": {"trains": 4, "clean": 4, "coalesced": 0, "used": 3},
              "long": {"trains": 0, "clean": 0, "coalesced": 0, "used": 0},
              "short_rates": [1.0, 2.0],
              "histogram": {"bin_bps": 0.5, "start_bps": 1.0, "counts": [1, 0, 1],
                            "modes": [{"low_bps": 1.0, "high_bps": 1.5, "count": 1}]},
              "peak": {"low_bps": 1.0, "high_bps": 1.5, "count": 1},
              "fits": [{"whole_bps": 3.0, "tail_bps": 2.0, "head_bps": null}]}});
        assert!(is_capacity(&d));
        let r = read(&d).unwrap();
        assert_eq!(r.short.used, Some(3));
        assert_eq!(r.histogram.as_ref().map(|h| h.counts.len()), Some(3));
        assert_eq!(r.short_len, Some(10));
        assert_eq!(r.long_len, None);
        assert_eq!(r.fits[0].head_bps, None);
        assert!(!is_capacity(&json!({"estimate": null})));
        assert!(r.by_size.is_empty() && r.trains_sent.is_none() && !r.quick);
        let sections = crate::capacity_report::sections(&r);
        assert_eq!(sections.len(), 1, "no size table without --sizes");
    }

    #[test]
    fn sizes_make_a_table_of_their_own() {
        let d = json!({"overhead_model": "IP = ...", "payload_bytes": 1472, "ip_bytes": 1500,
            "seconds": 1.0, "estimate": null, "quick": true, "trains_planned": 45,
            "trains_sent": 42,
            "longest_loss_free_train": {"length": 1000, "at_least": true, "max_len": 1000,
                "limit_secs": 30.0, "time_limited": false, "seconds": 0.4,
                "tried": [{"len": 16, "received": 16, "lost": 0},
                          {"len": 1000, "received": 1000, "lost": 0}]},
            "by_size": [{"payload_bytes": 600, "ip_bytes": 628, "trains": 5, "used": 5,
                         "estimate_bps": 2.0e9, "low_bps": 1.9e9, "high_bps": 2.1e9,
                         "cov": 0.02},
                        {"payload_bytes": 1488, "ip_bytes": 1516, "trains": 4, "used": 0}]});
        let r = read(&d).unwrap();
        assert_eq!(
            (r.quick, r.trains_sent, r.by_size.len()),
            (true, Some(42), 2)
        );
        let sections = crate::capacity_report::sections(&r);
        assert_eq!(sections.len(), 2);
        let t = &sections[1].table;
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][0], "600 B");
        assert_eq!(t.rows[1][4], crate::table::DASH);
        assert!(t.rows[0][5].contains(" - "), "{:?}", t.rows[0]);
        let figures = &sections[0].table.rows;
        let row = figures
            .iter()
            .find(|r| r[0] == "Longest train without loss")
            .unwrap();
        assert!(row[1].starts_with("at least 1000 datagrams"), "{row:?}");
    }

    #[test]
    fn an_estimate_without_its_train_counts_is_an_error_not_a_dash() {
        let d = json!({"kind": "capacity", "overhead_model": "IP = ...", "payload_bytes": 1472,
            "ip_bytes": 1500, "seconds": 1.0, "estimate": null, "partial": true,
            "error": "refused"});
        let r = read(&d).unwrap();
        assert_eq!((r.short.used, r.partial), (None, true));
        let lacking = json!({"overhead_model": "IP = ...", "payload_bytes": 1472,
            "ip_bytes": 1500, "seconds": 1.0,
            "estimate": {"verdict": "link", "knees": 0,
                         "short": {"trains": 4, "clean": 4, "coalesced": 0, "used": 3}}});
        let e = crate::result::read(&lacking).unwrap_err();
        assert!(e.contains("capacity") && e.contains("long"), "{e}");
    }
}
