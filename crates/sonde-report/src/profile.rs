//! Reading a traffic-profile document (`sonde profile run -J`) and the two series a report
//! draws from it: loss per burst over time and the one-way delay distribution, per stream.
//!
//! The document lists only the bursts that were incomplete or late; every other burst of the
//! plan arrived whole. The loss-per-burst series is therefore rebuilt over the whole plan
//! (burst `k` due at `offset_ms + k * period_ms`), zero where nothing was listed. When the
//! sender capped that list (`exceptions_dropped`), what follows the last listed burst is not
//! known and the series stops there rather than show zeros that were never measured. A long
//! run is drawn in bins of consecutive bursts (loss over the bin's datagrams), at most
//! [`MAX_POINTS`] per stream.
//!
//! The delay distribution is the document's percentiles 0..100 of every kept sample: a step
//! at each percentile, which is the empirical CDF at one-percent resolution, not a fit.
//!
//! The document is read through its model ([`sonde_schema::profile`]).

use serde::Serialize;
use serde_json::Value;
use sonde_schema::profile::{self as schema, ProfileDocument};

/// Most points of one stream's loss-per-burst series.
pub const MAX_POINTS: usize = 1000;

/// One burst that was incomplete or late.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BurstView {
    pub index: u64,
    pub received: u64,
    pub expected: u64,
}

/// One stream of a profile run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileStream {
    pub name: String,
    pub direction: String,
    pub size: Option<u64>,
    pub burst: Option<u64>,
    pub period_ms: Option<f64>,
    pub offset_ms: f64,
    pub sent: Option<u64>,
    pub received: Option<u64>,
    pub lost: Option<u64>,
    pub late: Option<u64>,
    pub out_of_order: Option<u64>,
    pub duplicates: Option<u64>,
    pub bursts_sent: Option<u64>,
    pub bursts_complete: Option<u64>,
    /// `synced` or `above-minimum` (an estimate).
    pub delay_basis: Option<String>,
    pub delay_p50_ms: Option<f64>,
    pub delay_p99_ms: Option<f64>,
    pub delay_max_ms: Option<f64>,
    /// Percentiles 0..100, ms.
    pub percentiles_ms: Vec<f64>,
    pub exceptions: Vec<BurstView>,
    pub exceptions_dropped: u64,
}

/// A profile run's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileRun {
    pub profile: String,
    pub planned_s: Option<f64>,
    pub ran_s: Option<f64>,
    pub clock_synced: bool,
    pub ended_early: Option<String>,
    pub error: Option<String>,
    pub streams: Vec<ProfileStream>,
}

/// Whether `doc` is a profile document: a `profile` name and a `streams` list.
pub fn is_profile(doc: &Value) -> bool {
    doc.get("profile").is_some_and(Value::is_string)
        && doc.get("streams").is_some_and(Value::is_array)
}

/// Reads a profile document through its model ([`sonde_schema::profile`]): a stream without
/// the counts the report shows is an error naming the field; the plan and the delays may be
/// missing (shown as dashes).
///
/// # Errors
/// The model's account of what did not fit, naming the kind and the field.
pub fn read(doc: &Value) -> Result<ProfileRun, String> {
    let doc: ProfileDocument = crate::json::model("profile", doc)?;
    Ok(ProfileRun {
        profile: doc.profile,
        planned_s: doc.planned_s,
        ran_s: doc.ran_s,
        clock_synced: doc.clock_synced,
        ended_early: doc.ended_early,
        error: doc.envelope.error,
        streams: doc.streams.into_iter().map(stream).collect(),
    })
}

fn stream(s: schema::ProfileStream) -> ProfileStream {
    let delay = s.delay.as_ref();
    ProfileStream {
        name: s.name,
        direction: s.direction,
        size: s.size.map(u64::from),
        burst: s.burst.map(u64::from),
        period_ms: s.period_ms.filter(|p| *p > 0.0),
        offset_ms: s.offset_ms,
        sent: Some(s.sent),
        received: Some(s.received),
        lost: Some(s.lost),
        late: s.late,
        out_of_order: s.out_of_order,
        duplicates: s.duplicates,
        bursts_sent: s.bursts_sent,
        bursts_complete: s.bursts_complete,
        delay_basis: delay.map(|d| d.basis.clone()),
        delay_p50_ms: delay.and_then(|d| d.p50_ms),
        delay_p99_ms: delay.and_then(|d| d.p99_ms),
        delay_max_ms: delay.and_then(|d| d.max_ms),
        percentiles_ms: delay.map(|d| d.percentiles_ms.clone()).unwrap_or_default(),
        exceptions: s
            .exceptions
            .iter()
            .map(|b| BurstView {
                index: b.index,
                received: u64::from(b.received),
                expected: u64::from(b.expected),
            })
            .collect(),
        exceptions_dropped: s.exceptions_dropped,
    }
}

impl ProfileStream {
    /// `100Bx4/200ms`.
    pub fn plan(&self) -> String {
        match (self.size, self.burst, self.period_ms) {
            (Some(s), Some(b), Some(p)) => format!("{s}Bx{b}/{p}ms"),
            _ => String::new(),
        }
    }

    /// Lost percent of each burst (or bin of consecutive bursts) against when it was due,
    /// seconds from the start; empty when the document lacks the plan.
    pub fn loss_per_burst(&self) -> Vec<(f64, f64)> {
        let (Some(bursts), Some(burst), Some(period_ms)) =
            (self.bursts_sent, self.burst, self.period_ms)
        else {
            return Vec::new();
        };
        let known = self.known_bursts().min(bursts);
        let bin = self.bursts_per_point();
        let mut lost = vec![0u64; known.div_ceil(bin) as usize];
        for b in self.exceptions.iter().filter(|b| b.index < known) {
            if let Some(l) = lost.get_mut((b.index / bin) as usize) {
                *l += b.expected.saturating_sub(b.received);
            }
        }
        let burst = burst.max(1);
        lost.iter()
            .enumerate()
            .map(|(i, l)| {
                let first = i as u64 * bin;
                let n = bin.min(known - first);
                let t = (self.offset_ms + first as f64 * period_ms) / 1000.0;
                (t, *l as f64 * 100.0 / (n * burst) as f64)
            })
            .collect()
    }

    /// Bursts per point of [`loss_per_burst`](Self::loss_per_burst).
    pub fn bursts_per_point(&self) -> u64 {
        self.known_bursts().div_ceil(MAX_POINTS as u64).max(1)
    }

    /// Bursts whose outcome the document tells: all that were sent, or, when the list of
    /// incomplete ones was capped, those up to the last listed.
    fn known_bursts(&self) -> u64 {
        let sent = self.bursts_sent.unwrap_or(0);
        if self.exceptions_dropped > 0 {
            self.exceptions.last().map_or(0, |b| b.index + 1).min(sent)
        } else {
            sent
        }
    }

    /// The delay CDF: `(delay ms, fraction at or below)` at each percentile.
    pub fn delay_cdf(&self) -> Vec<(f64, f64)> {
        let n = self.percentiles_ms.len();
        if n < 2 {
            return Vec::new();
        }
        self.percentiles_ms
            .iter()
            .enumerate()
            .map(|(i, d)| (*d, i as f64 / (n - 1) as f64))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(exceptions: Value, dropped: u64, bursts: u64) -> Value {
        json!({"profile": "p", "planned_s": 2.0, "ran_s": 2.0, "clock_synced": true,
            "streams": [{"name": "bulk", "direction": "to-server", "size": 800, "burst": 4,
                "period_ms": 100.0, "offset_ms": 50.0, "sent": bursts * 4, "received": 0,
                "lost": 3, "bursts_sent": bursts, "bursts_complete": bursts - 2,
                "delay": {"basis": "synced", "percentiles_ms": [1.0, 2.0, 4.0]},
                "exceptions": exceptions, "exceptions_dropped": dropped}]})
    }

    #[test]
    fn loss_per_burst_covers_the_whole_plan() {
        let ex = json!([{"index": 1, "received": 2, "expected": 4},
                        {"index": 3, "received": 3, "expected": 4, "late": true}]);
        let d = doc(ex, 0, 5);
        assert!(is_profile(&d));
        let r = read(&d).unwrap();
        let s = &r.streams[0];
        assert_eq!(s.plan(), "800Bx4/100ms");
        assert_eq!(
            s.loss_per_burst(),
            [
                (0.05, 0.0),
                (0.15, 50.0),
                (0.25, 0.0),
                (0.35, 25.0),
                (0.45, 0.0)
            ]
        );
        assert_eq!(s.delay_cdf(), [(1.0, 0.0), (2.0, 0.5), (4.0, 1.0)]);
    }

    #[test]
    fn a_capped_list_stops_the_series_at_its_last_burst() {
        let ex = json!([{"index": 1, "received": 0, "expected": 4}]);
        let s = read(&doc(ex, 7, 10)).unwrap().streams.remove(0);
        assert_eq!(s.loss_per_burst(), [(0.05, 0.0), (0.15, 100.0)]);
    }

    #[test]
    fn long_runs_are_binned() {
        // 2500 bursts: bins of 3, the last of 1; burst 2 lost 4 of 4 = 4 of the bin's 12.
        let ex = json!([{"index": 2, "received": 0, "expected": 4},
                        {"index": 2499, "received": 2, "expected": 4}]);
        let s = read(&doc(ex, 0, 2500)).unwrap().streams.remove(0);
        let pts = s.loss_per_burst();
        assert_eq!(s.bursts_per_point(), 3);
        assert_eq!(pts.len(), 834);
        assert!((pts[0].1 - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(pts[1].1, 0.0);
        assert_eq!(pts[833], (249.95, 50.0));
    }

    #[test]
    fn other_documents_are_not_profiles() {
        assert!(!is_profile(&json!({"start": {}, "end": {}})));
        assert!(!is_profile(&json!({"profile": 3, "streams": []})));
        // A stream without its plan and delays: its series are empty.
        let r = read(&json!({"profile": "x", "streams": [{"name": "s",
            "direction": "to-server", "sent": 0, "received": 0, "lost": 0}]}))
        .unwrap();
        assert!(r.streams[0].loss_per_burst().is_empty());
        assert!(r.streams[0].delay_cdf().is_empty());
    }

    #[test]
    fn a_stream_without_its_sent_count_is_an_error_naming_the_field_not_a_dash() {
        let mut d = doc(json!([]), 0, 5);
        d["streams"][0].as_object_mut().map(|o| o.remove("sent"));
        let e = read(&d).unwrap_err();
        assert!(e.contains("profile") && e.contains("`sent`"), "{e}");
    }
}
