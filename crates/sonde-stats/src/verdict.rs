//! Which address family is better now, by how much, on which measure, and how sure: the
//! verdict of `sonde compare-ip`, and the input of the dual-stack switching policy.
//!
//! One type is both the output and the input, so the two cannot drift: `compare-ip -J` writes
//! it under the key `verdict`, and an application (or `sonde switch-test --policy`) reads it
//! back with [`Verdict::parse`], which validates every figure before anyone acts on it.
//!
//! The rule ([`Verdict::decide`]): each measure is compared on its own with its own test
//! ([`MeasureVerdict`]); the measures that show a significant difference are taken in the order
//! latency median, BTC mean, path capacity, short throughput run. If they all point to the same
//! family, that family is better, the first of them is the deciding measure and gives the
//! margin and the confidence. If they point to different families, the verdict is `neither`
//! (the choice depends on what the application needs) and the summary says so.
//!
//! ```
//! use sonde_stats::verdict::{FamilyChoice, Measure, MeasureVerdict, Verdict};
//! let lat = MeasureVerdict::from_test(Measure::LatencyMedian, 0.40, 0.20, Some(0.001), (50, 50));
//! let v = Verdict::decide(vec![lat]);
//! assert_eq!(v.better, FamilyChoice::Ipv6);
//! let back = Verdict::parse(&serde_json::to_string(&v).unwrap()).unwrap();
//! assert_eq!(back, v);
//! ```

use crate::latency::compare::{ALPHA, MIN_RELATIVE};
use serde::{Deserialize, Serialize};

/// The schema version written in every verdict; [`Verdict::parse`] refuses others.
pub const SCHEMA: u32 = 1;
/// Largest verdict document [`Verdict::parse`] reads (a whole compare-ip document is a few
/// kilobytes).
pub const MAX_INPUT: usize = 1 << 20;
/// Most measures a verdict may carry.
pub const MAX_MEASURES: usize = 16;

/// A family, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FamilyChoice {
    Ipv4,
    Ipv6,
    Neither,
}

impl FamilyChoice {
    /// The name as the document spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FamilyChoice::Ipv4 => "ipv4",
            FamilyChoice::Ipv6 => "ipv6",
            FamilyChoice::Neither => "neither",
        }
    }

    /// "IPv4", "IPv6" or "neither", for sentences.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ipv4 => "IPv4",
            Self::Ipv6 => "IPv6",
            Self::Neither => "neither",
        }
    }
}

/// What was compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Median UDP round-trip time, ms (lower is better); Mann-Whitney U over the samples.
    LatencyMedian,
    /// Mean goodput of the BTC sessions, TCP payload bit/s; Welch's t over the sessions.
    BtcMean,
    /// Sustained path capacity by dispersion, IP bit/s; the long-train ranges must not overlap.
    Capacity,
    /// Mean goodput of the short TCP uploads, bit/s: the families alternate in rounds, each
    /// round one upload a family; paired t over the rounds' ratios.
    Throughput,
}

impl Measure {
    /// The name as the document spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::LatencyMedian => "latency_median",
            Measure::BtcMean => "btc_mean",
            Measure::Capacity => "capacity",
            Measure::Throughput => "throughput",
        }
    }

    /// Whether a lower figure is better.
    pub fn lower_is_better(self) -> bool {
        matches!(self, Self::LatencyMedian)
    }

    /// The unit of the figures.
    pub fn unit(self) -> &'static str {
        match self {
            Self::LatencyMedian => "ms",
            Self::BtcMean | Self::Throughput => "bit/s (TCP payload)",
            Self::Capacity => "bit/s (IP)",
        }
    }

    /// The test that judges a difference.
    pub fn test(self) -> &'static str {
        match self {
            Self::LatencyMedian => "mann-whitney-u",
            Self::BtcMean => "welch-t",
            Self::Throughput => "paired-t",
            Self::Capacity => "disjoint-ranges",
        }
    }

    /// The measure in words ("median latency").
    pub fn label(self) -> &'static str {
        match self {
            Self::LatencyMedian => "median latency",
            Self::BtcMean => "mean BTC",
            Self::Capacity => "path capacity",
            Self::Throughput => "throughput",
        }
    }

    /// Order in which measures decide (lower first).
    fn rank(self) -> u8 {
        match self {
            Self::LatencyMedian => 0,
            Self::BtcMean => 1,
            Self::Capacity => 2,
            Self::Throughput => 3,
        }
    }
}

/// One measure compared between the families.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureVerdict {
    pub measure: Measure,
    /// Unit of `ipv4` and `ipv6`.
    pub unit: String,
    pub ipv4: Option<f64>,
    pub ipv6: Option<f64>,
    /// The better family; `neither` unless the difference is significant.
    pub better: FamilyChoice,
    /// |IPv4 - IPv6| / the larger of the two, percent (0..100).
    pub margin_pct: f64,
    /// Two-sided p-value of `test`, when it gives one.
    pub p_value: Option<f64>,
    /// Samples behind each side (probes answered, sessions, long trains, intervals).
    pub samples_ipv4: u64,
    pub samples_ipv6: u64,
    /// p < 0.05 (or disjoint ranges) and a margin of at least 5 %.
    pub significant: bool,
    pub test: String,
    /// Why the measure could not judge, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl MeasureVerdict {
    /// A measure with figures `ipv4` and `ipv6`, judged by a p-value: significant when
    /// p < [`ALPHA`] and the margin is at least [`MIN_RELATIVE`].
    pub fn from_test(
        measure: Measure,
        ipv4: f64,
        ipv6: f64,
        p_value: Option<f64>,
        samples: (u64, u64),
    ) -> Self {
        let margin = margin_pct(ipv4, ipv6);
        let significant = p_value.is_some_and(|p| p < ALPHA) && margin >= MIN_RELATIVE * 100.0;
        Self::judged(measure, ipv4, ipv6, p_value, samples, significant)
    }

    /// A measure judged by ranges: significant when `[lo, hi]` of the two families do not
    /// overlap and the margin of the central figures is at least [`MIN_RELATIVE`].
    pub fn from_ranges(
        measure: Measure,
        ipv4: (f64, f64, f64),
        ipv6: (f64, f64, f64),
        samples: (u64, u64),
    ) -> Self {
        let disjoint = ipv4.2 < ipv6.1 || ipv6.2 < ipv4.1;
        let significant = disjoint && margin_pct(ipv4.0, ipv6.0) >= MIN_RELATIVE * 100.0;
        Self::judged(measure, ipv4.0, ipv6.0, None, samples, significant)
    }

    fn judged(
        measure: Measure,
        ipv4: f64,
        ipv6: f64,
        p_value: Option<f64>,
        samples: (u64, u64),
        significant: bool,
    ) -> Self {
        let v4_wins = if measure.lower_is_better() {
            ipv4 < ipv6
        } else {
            ipv4 > ipv6
        };
        let better = match (significant, v4_wins) {
            (false, _) => FamilyChoice::Neither,
            (true, true) => FamilyChoice::Ipv4,
            (true, false) => FamilyChoice::Ipv6,
        };
        Self {
            measure,
            unit: measure.unit().into(),
            ipv4: Some(ipv4),
            ipv6: Some(ipv6),
            better,
            margin_pct: margin_pct(ipv4, ipv6),
            p_value,
            samples_ipv4: samples.0,
            samples_ipv6: samples.1,
            significant,
            test: measure.test().into(),
            note: None,
        }
    }

    /// A measure that could not judge (a family failed, the host was the limit...).
    pub fn unjudged(measure: Measure, ipv4: Option<f64>, ipv6: Option<f64>, note: &str) -> Self {
        Self {
            measure,
            unit: measure.unit().into(),
            ipv4,
            ipv6,
            better: FamilyChoice::Neither,
            margin_pct: 0.0,
            p_value: None,
            samples_ipv4: 0,
            samples_ipv6: 0,
            significant: false,
            test: measure.test().into(),
            note: Some(note.into()),
        }
    }
}

impl crate::latency::compare::Comparison {
    /// The comparison in short of a judged measure (A is IPv4, B IPv6): the same margin,
    /// p-value and significance, so a document tells each difference once. None for a
    /// measure that could not judge.
    pub fn of(m: &MeasureVerdict) -> Option<Self> {
        use crate::latency::compare::Better;
        m.ipv4
            .zip(m.ipv6)
            .filter(|_| m.note.is_none() || m.p_value.is_some())?;
        Some(Self {
            better: match m.better {
                FamilyChoice::Ipv4 => Better::A,
                FamilyChoice::Ipv6 => Better::B,
                FamilyChoice::Neither => Better::Neither,
            },
            difference_percent: m.margin_pct,
            p_value: m.p_value,
            significant: m.significant,
        })
    }
}

/// |a - b| / max(|a|, |b|), percent; 0 when both are 0.
pub fn margin_pct(a: f64, b: f64) -> f64 {
    let top = a.abs().max(b.abs());
    if top > 0.0 && top.is_finite() {
        ((a - b).abs() / top * 100.0).min(100.0)
    } else {
        0.0
    }
}

/// Which family is better now (see the module documentation for the rule).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// [`SCHEMA`].
    pub schema: u32,
    pub better: FamilyChoice,
    /// The deciding measure; None with `neither`.
    pub measure: Option<Measure>,
    /// The deciding measure's margin, percent (0 with `neither`).
    pub margin_pct: f64,
    /// 1 - p of the deciding measure's test; None when it gives no p-value (capacity ranges)
    /// or nothing decided.
    pub confidence: Option<f64>,
    pub per_measure: Vec<MeasureVerdict>,
    /// One sentence for people.
    pub summary: String,
}

/// Why a verdict document was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum VerdictError {
    #[error("the verdict is {0} bytes, more than the {MAX_INPUT} read")]
    TooLarge(usize),
    #[error("the verdict is not valid JSON of the verdict schema: {0}")]
    Json(String),
    #[error("verdict schema {0} is not the {SCHEMA} this version reads")]
    Schema(u32),
    #[error("verdict field {field} is {value}, outside {range}")]
    OutOfRange {
        field: &'static str,
        value: f64,
        range: &'static str,
    },
    #[error("the verdict names {0} better but no deciding measure")]
    NoMeasure(&'static str),
    #[error("the verdict carries {0} measures, more than {MAX_MEASURES}")]
    TooManyMeasures(usize),
}

fn check(
    field: &'static str,
    v: f64,
    lo: f64,
    hi: f64,
    range: &'static str,
) -> Result<(), VerdictError> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(VerdictError::OutOfRange {
            field,
            value: v,
            range,
        })
    }
}

impl Verdict {
    /// The verdict of the measures compared (see the module documentation for the rule).
    pub fn decide(mut per_measure: Vec<MeasureVerdict>) -> Self {
        per_measure.sort_by_key(|m| m.measure.rank());
        let significant: Vec<&MeasureVerdict> =
            per_measure.iter().filter(|m| m.significant).collect();
        let first = significant.first().copied();
        let agree = significant
            .iter()
            .all(|m| Some(m.better) == first.map(|f| f.better));
        let (better, measure, margin, confidence, summary) = match first {
            None => (
                FamilyChoice::Neither,
                None,
                0.0,
                None,
                "no significant difference between IPv4 and IPv6".to_string(),
            ),
            Some(_) if !agree => {
                let parts: Vec<String> = significant
                    .iter()
                    .map(|m| format!("{} on {}", m.better.label(), m.measure.label()))
                    .collect();
                (
                    FamilyChoice::Neither,
                    None,
                    0.0,
                    None,
                    format!("the measures disagree: {} is better", parts.join(", ")),
                )
            }
            Some(f) => (
                f.better,
                Some(f.measure),
                f.margin_pct,
                f.p_value.map(|p| (1.0 - p).clamp(0.0, 1.0)),
                sentence(f, significant.len()),
            ),
        };
        Self {
            schema: SCHEMA,
            better,
            measure,
            margin_pct: margin,
            confidence,
            per_measure,
            summary,
        }
    }

    /// A verdict when the families could not be compared at all.
    pub fn undecided(summary: String, per_measure: Vec<MeasureVerdict>) -> Self {
        Self {
            schema: SCHEMA,
            better: FamilyChoice::Neither,
            measure: None,
            margin_pct: 0.0,
            confidence: None,
            per_measure,
            summary,
        }
    }

    /// Reads a verdict: the object itself, or a `compare-ip -J` document holding it under
    /// `verdict`; then [`Verdict::validate`]s it.
    ///
    /// # Errors
    /// [`VerdictError`] when the text is too large, not the schema, or a figure is out of range.
    pub fn parse(text: &str) -> Result<Self, VerdictError> {
        if text.len() > MAX_INPUT {
            return Err(VerdictError::TooLarge(text.len()));
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Doc {
            Whole { verdict: Verdict },
            Bare(Verdict),
        }
        let v = match serde_json::from_str::<Doc>(text) {
            Ok(Doc::Whole { verdict } | Doc::Bare(verdict)) => verdict,
            Err(_) => {
                // Say what is wrong with the bare form, the more useful message.
                let e = serde_json::from_str::<Verdict>(text).err();
                return Err(VerdictError::Json(
                    e.map_or("unknown".into(), |e| e.to_string()),
                ));
            }
        };
        v.validate()?;
        Ok(v)
    }

    /// Checks the schema version and that every figure is in its range.
    ///
    /// # Errors
    /// [`VerdictError`] naming the first figure out of range.
    pub fn validate(&self) -> Result<(), VerdictError> {
        if self.schema != SCHEMA {
            return Err(VerdictError::Schema(self.schema));
        }
        if self.per_measure.len() > MAX_MEASURES {
            return Err(VerdictError::TooManyMeasures(self.per_measure.len()));
        }
        check("margin_pct", self.margin_pct, 0.0, 100.0, "0..100")?;
        if let Some(c) = self.confidence {
            check("confidence", c, 0.0, 1.0, "0..1")?;
        }
        if self.better != FamilyChoice::Neither && self.measure.is_none() {
            return Err(VerdictError::NoMeasure(self.better.label()));
        }
        for m in &self.per_measure {
            check("per_measure.margin_pct", m.margin_pct, 0.0, 100.0, "0..100")?;
            if let Some(p) = m.p_value {
                check("per_measure.p_value", p, 0.0, 1.0, "0..1")?;
            }
            for v in [m.ipv4, m.ipv6].into_iter().flatten() {
                check("per_measure.ipv4/ipv6", v, 0.0, f64::MAX, "0 and up")?;
            }
        }
        Ok(())
    }
}

fn sentence(f: &MeasureVerdict, agreeing: usize) -> String {
    let how = if f.measure.lower_is_better() {
        "lower"
    } else {
        "higher"
    };
    let sure = match f.p_value {
        Some(p) => format!("p = {p:.2e}"),
        None => "non-overlapping ranges".into(),
    };
    let others = if agreeing > 1 {
        format!("; {} other measure(s) agree", agreeing - 1)
    } else {
        String::new()
    };
    format!(
        "{} is better: {:.1} % {how} {} ({}, {} and {} samples){others}",
        f.better.label(),
        f.margin_pct,
        f.measure.label(),
        sure,
        f.samples_ipv4,
        f.samples_ipv6
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(a: f64, b: f64, p: f64) -> MeasureVerdict {
        MeasureVerdict::from_test(Measure::LatencyMedian, a, b, Some(p), (40, 40))
    }

    #[test]
    fn latency_decides_with_its_p_value() {
        let v = Verdict::decide(vec![lat(1.0, 0.5, 0.001)]);
        assert_eq!(v.better, FamilyChoice::Ipv6);
        assert_eq!(v.measure, Some(Measure::LatencyMedian));
        assert!((v.margin_pct - 50.0).abs() < 1e-9);
        assert!((v.confidence.unwrap() - 0.999).abs() < 1e-9);
        // Not significant: p too high, or margin under 5 %.
        assert_eq!(
            Verdict::decide(vec![lat(1.0, 0.5, 0.2)]).better,
            FamilyChoice::Neither
        );
        assert_eq!(
            Verdict::decide(vec![lat(1.0, 0.97, 0.001)]).better,
            FamilyChoice::Neither
        );
    }

    #[test]
    fn the_comparison_in_short_is_the_measures_own_judgement() {
        use crate::latency::compare::{Better, Comparison};
        let m = lat(1.0, 0.5, 0.001);
        let c = Comparison::of(&m).unwrap();
        assert_eq!(c.better, Better::B);
        assert_eq!(
            (c.difference_percent, c.p_value, c.significant),
            (m.margin_pct, m.p_value, m.significant)
        );
        // Judged, with a note saying why it is no difference: still told.
        let mut noise = lat(0.004, 0.002, 0.001);
        (noise.better, noise.significant) = (FamilyChoice::Neither, false);
        noise.note = Some("the medians are within 0.02 ms".into());
        assert_eq!(Comparison::of(&noise).unwrap().better, Better::Neither);
        // A measure that could not judge has no comparison.
        let none = MeasureVerdict::unjudged(Measure::Throughput, Some(1.0), None, "IPv6 failed");
        assert_eq!(Comparison::of(&none), None);
        let both = MeasureVerdict::unjudged(Measure::Throughput, Some(1.0), Some(2.0), "one pair");
        assert_eq!(Comparison::of(&both), None);
    }

    #[test]
    fn agreeing_and_disagreeing_measures() {
        let btc = MeasureVerdict::from_test(Measure::BtcMean, 90e6, 60e6, Some(0.01), (4, 4));
        // BTC alone decides when latency shows nothing.
        let v = Verdict::decide(vec![btc.clone(), lat(1.0, 0.99, 0.5)]);
        assert_eq!(
            (v.better, v.measure),
            (FamilyChoice::Ipv4, Some(Measure::BtcMean))
        );
        assert_eq!(
            v.per_measure[0].measure,
            Measure::LatencyMedian,
            "sorted by rank"
        );
        // IPv6 lower latency but IPv4 more BTC: neither, and the summary says why.
        let v = Verdict::decide(vec![btc, lat(1.0, 0.5, 0.001)]);
        assert_eq!(v.better, FamilyChoice::Neither);
        assert!(v.summary.contains("disagree"), "{}", v.summary);
    }

    #[test]
    fn capacity_by_ranges() {
        let m = MeasureVerdict::from_ranges(
            Measure::Capacity,
            (100e6, 98e6, 102e6),
            (50e6, 49e6, 51e6),
            (10, 10),
        );
        assert_eq!(m.better, FamilyChoice::Ipv4);
        let m = MeasureVerdict::from_ranges(
            Measure::Capacity,
            (100e6, 60e6, 102e6),
            (90e6, 80e6, 95e6),
            (10, 10),
        );
        assert_eq!(m.better, FamilyChoice::Neither);
        let v = Verdict::decide(vec![MeasureVerdict::from_ranges(
            Measure::Capacity,
            (10e6, 9e6, 11e6),
            (20e6, 19e6, 21e6),
            (8, 8),
        )]);
        assert_eq!(v.better, FamilyChoice::Ipv6);
        assert_eq!(v.confidence, None);
    }

    #[test]
    fn parse_round_trips_and_reads_whole_documents() {
        let v = Verdict::decide(vec![lat(0.2, 0.4, 0.0001)]);
        let bare = serde_json::to_string(&v).unwrap();
        assert_eq!(Verdict::parse(&bare).unwrap(), v);
        let whole = format!("{{\"version\":\"x\",\"verdict\":{bare}}}");
        assert_eq!(Verdict::parse(&whole).unwrap(), v);
    }

    #[test]
    fn parse_rejects_bad_input() {
        let ok = r#"{"schema":1,"better":"ipv4","measure":"latency_median","margin_pct":20,"confidence":0.99,"per_measure":[],"summary":""}"#;
        assert!(Verdict::parse(ok).is_ok());
        let bad = |from: &str, to: &str| Verdict::parse(&ok.replace(from, to)).unwrap_err();
        assert!(matches!(bad("\"ipv4\"", "\"ipv5\""), VerdictError::Json(_)));
        assert!(matches!(
            bad("\"margin_pct\":20", "\"margin_pct\":120"),
            VerdictError::OutOfRange { .. }
        ));
        assert!(matches!(
            bad("\"margin_pct\":20", "\"margin_pct\":-1"),
            VerdictError::OutOfRange { .. }
        ));
        assert!(matches!(
            bad("0.99", "1.5"),
            VerdictError::OutOfRange { .. }
        ));
        assert_eq!(bad("\"schema\":1", "\"schema\":2"), VerdictError::Schema(2));
        assert_eq!(
            bad("\"latency_median\"", "null"),
            VerdictError::NoMeasure("IPv4")
        );
        assert!(matches!(Verdict::parse("[1,2"), Err(VerdictError::Json(_))));
        let huge = " ".repeat(MAX_INPUT + 1);
        assert!(matches!(
            Verdict::parse(&huge),
            Err(VerdictError::TooLarge(_))
        ));
    }
}
