//! When to move a stream to the other family, driven by the measurements: a pure policy over
//! what a comparison of the two families found.
//!
//! Switching costs a connection setup and a replay, so a policy that follows every wobble of
//! the measurements would cost more than it gains. [`Policy`] switches only when the evidence
//! names the *other* family better with a margin of at least [`PolicyConfig::margin_pct`] and
//! a confidence of at least [`PolicyConfig::min_confidence`], for [`PolicyConfig::confirm`]
//! verdicts in a row; and never again within [`PolicyConfig::hold`] of its last switch (the
//! hysteresis that stops it flapping between two families measured as about equal). Time is
//! an argument, so the rule is tested with fixed numbers; the caller reads the verdicts and
//! performs the switch.
//!
//! The rule reads an [`Evidence`]: plain numbers, so the C library (which does not carry
//! sonde-stats) offers the same policy. With the `policy` feature, `Policy::decide` reads
//! `sonde compare-ip`'s `Verdict` directly.
//!
//! ```
//! use sonde_switch::policy::{Decision, Evidence, Policy, PolicyConfig};
//! use sonde_switch::Family;
//! use std::time::Duration;
//! let ipv6_better = Evidence {
//!     better: Some(Family::V6),
//!     measure: "median latency",
//!     margin_pct: 50.0,
//!     confidence: Some(0.999),
//!     summary: "",
//! };
//! let mut p = Policy::new(PolicyConfig { margin_pct: 10.0, ..PolicyConfig::default() });
//! let d = p.decide_on(Duration::ZERO, Family::V4, &ipv6_better);
//! assert!(matches!(d, Decision::Switch { to: Family::V6, .. }));
//! ```

use crate::Family;
#[cfg(feature = "policy")]
use sonde_stats::verdict::{FamilyChoice, Verdict};
use std::time::Duration;

/// The thresholds of a [`Policy`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolicyConfig {
    /// Smallest margin of the deciding measure that is worth a switch, percent.
    pub margin_pct: f64,
    /// Smallest confidence (1 - p) accepted; a verdict without one (capacity ranges) passes
    /// when its ranges were disjoint, which made it significant.
    pub min_confidence: f64,
    /// Verdicts in a row that must favour the other family.
    pub confirm: u32,
    /// No switch within this time of the last one.
    pub hold: Duration,
}

impl PolicyConfig {
    /// Checks that the thresholds can be met: a finite margin of at least 0 %, a confidence
    /// within 0..=1 and at least one verdict to confirm.
    ///
    /// # Errors
    /// The first threshold that cannot, in words.
    pub fn check(&self) -> Result<(), String> {
        if !(self.margin_pct.is_finite() && self.margin_pct >= 0.0) {
            return Err(format!(
                "margin_pct {} is not a percentage of at least 0",
                self.margin_pct
            ));
        }
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err(format!(
                "min_confidence {} is outside 0..=1",
                self.min_confidence
            ));
        }
        if self.confirm == 0 {
            return Err("confirm is 0: at least one verdict must favour a switch".into());
        }
        Ok(())
    }
}

/// What a comparison of the two families found, as the policy reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence<'a> {
    /// The better family; `None` when neither is (nothing significant).
    pub better: Option<Family>,
    /// The deciding measure's name, for the reasons ("median latency").
    pub measure: &'a str,
    /// How much better, percent, on that measure.
    pub margin_pct: f64,
    /// 1 - p of the deciding test; `None` when it gives none (capacity ranges, significant
    /// because they were disjoint).
    pub confidence: Option<f64>,
    /// One sentence on the comparison, said when neither family is better; may be empty.
    pub summary: &'a str,
}

impl Default for PolicyConfig {
    /// 10 % margin, 95 % confidence, one verdict, 30 s hold.
    fn default() -> Self {
        Self {
            margin_pct: 10.0,
            min_confidence: 0.95,
            confirm: 1,
            hold: Duration::from_secs(30),
        }
    }
}

/// What the policy says about one verdict, with the reason in words.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Stay { reason: String },
    Switch { to: Family, reason: String },
}

impl Decision {
    /// The reason, whatever the decision.
    pub fn reason(&self) -> &str {
        match self {
            Self::Stay { reason } | Self::Switch { reason, .. } => reason,
        }
    }
}

/// The switching policy: feed it each verdict with the current family and the time.
#[derive(Debug, Clone)]
pub struct Policy {
    cfg: PolicyConfig,
    /// Verdicts in a row favouring the other family.
    streak: u32,
    last_switch: Option<Duration>,
}

impl Policy {
    pub fn new(cfg: PolicyConfig) -> Self {
        Self {
            cfg,
            streak: 0,
            last_switch: None,
        }
    }

    /// The decision on `verdict` (`sonde compare-ip`'s) at `now` while on `current`: the
    /// rule of [`Policy::decide_on`].
    #[cfg(feature = "policy")]
    pub fn decide(&mut self, now: Duration, current: Family, verdict: &Verdict) -> Decision {
        let better = match verdict.better {
            FamilyChoice::Ipv4 => Some(Family::V4),
            FamilyChoice::Ipv6 => Some(Family::V6),
            FamilyChoice::Neither => None,
        };
        let evidence = Evidence {
            better,
            measure: verdict
                .measure
                .map_or("no measure", sonde_stats::verdict::Measure::label),
            margin_pct: verdict.margin_pct,
            confidence: verdict.confidence,
            summary: &verdict.summary,
        };
        self.decide_on(now, current, &evidence)
    }

    /// The decision on `evidence` at `now` (any monotonic origin) while on `current`. A
    /// `Switch` is taken as done: the hold starts at `now`.
    pub fn decide_on(&mut self, now: Duration, current: Family, evidence: &Evidence) -> Decision {
        let other = current.other();
        let stay = |reason: String| Decision::Stay { reason };
        if evidence.better != Some(other) {
            self.streak = 0;
            return stay(match (evidence.better, evidence.summary) {
                (None, "") => "no family is better".into(),
                (None, summary) => format!("no family is better ({summary})"),
                (Some(_), _) => format!("{} is already the better family", current.name()),
            });
        }
        let measure = evidence.measure;
        if evidence.margin_pct < self.cfg.margin_pct {
            self.streak = 0;
            return stay(format!(
                "{} is better by {:.1} % on {measure}, under the {:.1} % margin",
                other.name(),
                evidence.margin_pct,
                self.cfg.margin_pct
            ));
        }
        if let Some(c) = evidence.confidence.filter(|c| *c < self.cfg.min_confidence) {
            self.streak = 0;
            return stay(format!(
                "{} is better but with confidence {c:.3}, under {:.3}",
                other.name(),
                self.cfg.min_confidence
            ));
        }
        self.streak = self.streak.saturating_add(1);
        if self.streak < self.cfg.confirm {
            return stay(format!(
                "{} is better ({}/{} verdicts in a row)",
                other.name(),
                self.streak,
                self.cfg.confirm
            ));
        }
        if let Some(t) = self.last_switch {
            let since = now.saturating_sub(t);
            if since < self.cfg.hold {
                return stay(format!(
                    "{} is better, but the last switch was {:.1} s ago (hold {:.1} s)",
                    other.name(),
                    since.as_secs_f64(),
                    self.cfg.hold.as_secs_f64()
                ));
            }
        }
        self.streak = 0;
        self.last_switch = Some(now);
        let conf = evidence.confidence.map_or_else(
            || "disjoint ranges".to_string(),
            |c| format!("confidence {c:.3}"),
        );
        Decision::Switch {
            to: other,
            reason: format!(
                "{} is better by {:.1} % on {measure} ({conf}), margin {:.1} %",
                other.name(),
                evidence.margin_pct,
                self.cfg.margin_pct
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::verdict::{Measure, MeasureVerdict};

    /// A latency verdict: IPv4 median `v4` ms, IPv6 `v6` ms, p-value `p`.
    fn verdict(v4: f64, v6: f64, p: f64) -> Verdict {
        Verdict::decide(vec![MeasureVerdict::from_test(
            Measure::LatencyMedian,
            v4,
            v6,
            Some(p),
            (30, 30),
        )])
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    fn policy(margin: f64, confirm: u32, hold: u64) -> Policy {
        Policy::new(PolicyConfig {
            margin_pct: margin,
            min_confidence: 0.95,
            confirm,
            hold: secs(hold),
        })
    }

    /// The rule on plain numbers (as the C library gives it): a switch needs the other
    /// family better, over the margin, confident enough; no p-value passes.
    #[test]
    fn evidence_in_plain_numbers_decides_as_a_verdict_does() {
        let ev = |better, margin_pct, confidence| Evidence {
            better,
            measure: "the caller's measure",
            margin_pct,
            confidence,
            summary: "",
        };
        let mut p = policy(10.0, 1, 0);
        let d = p.decide_on(secs(0), Family::V4, &ev(Some(Family::V6), 25.0, None));
        assert_eq!(
            d,
            Decision::Switch {
                to: Family::V6,
                reason: "IPv6 is better by 25.0 % on the caller's measure (disjoint ranges), \
                         margin 10.0 %"
                    .into()
            }
        );
        let d = p.decide_on(secs(1), Family::V6, &ev(None, 0.0, None));
        assert_eq!(d.reason(), "no family is better");
        let d = p.decide_on(secs(1), Family::V6, &ev(Some(Family::V4), 25.0, Some(0.5)));
        assert!(matches!(d, Decision::Stay { .. }), "{d:?}");
        assert!(d.reason().contains("confidence 0.500"), "{d:?}");
    }

    #[test]
    fn thresholds_that_cannot_be_met_are_refused() {
        assert_eq!(PolicyConfig::default().check(), Ok(()));
        let bad = |c: PolicyConfig| c.check().unwrap_err();
        let d = PolicyConfig::default();
        assert!(bad(PolicyConfig {
            margin_pct: f64::NAN,
            ..d
        })
        .starts_with("margin_pct NaN"));
        assert!(bad(PolicyConfig {
            margin_pct: -1.0,
            ..d
        })
        .starts_with("margin_pct -1"));
        assert!(bad(PolicyConfig {
            min_confidence: 1.5,
            ..d
        })
        .starts_with("min_confidence"));
        assert!(bad(PolicyConfig { confirm: 0, ..d }).starts_with("confirm is 0"));
    }

    #[test]
    fn switches_over_the_margin_only() {
        let mut p = policy(10.0, 1, 0);
        // IPv6 better by 20 %: switch.
        let d = p.decide(secs(0), Family::V4, &verdict(1.0, 0.8, 0.001));
        assert!(
            matches!(d, Decision::Switch { to: Family::V6, .. }),
            "{d:?}"
        );
        assert!(d.reason().contains("20.0 %"), "{}", d.reason());
        // IPv6 better by 8 %: under the margin, stay.
        let d = policy(10.0, 1, 0).decide(secs(0), Family::V4, &verdict(1.0, 0.92, 0.001));
        assert!(matches!(d, Decision::Stay { .. }), "{d:?}");
        assert!(
            d.reason().contains("under the 10.0 % margin"),
            "{}",
            d.reason()
        );
    }

    #[test]
    fn stays_on_the_better_family_and_on_weak_verdicts() {
        let mut p = policy(10.0, 1, 0);
        let v6_better = verdict(1.0, 0.5, 0.001);
        assert!(matches!(
            p.decide(secs(0), Family::V6, &v6_better),
            Decision::Stay { .. }
        ));
        // Not significant (p = 0.2): the verdict is neither.
        assert!(matches!(
            p.decide(secs(0), Family::V4, &verdict(1.0, 0.5, 0.2)),
            Decision::Stay { .. }
        ));
        // Significant but under the policy's own confidence.
        let mut strict = Policy::new(PolicyConfig {
            min_confidence: 0.9999,
            hold: secs(0),
            ..PolicyConfig::default()
        });
        let d = strict.decide(secs(0), Family::V4, &verdict(1.0, 0.5, 0.01));
        assert!(d.reason().contains("confidence"), "{d:?}");
    }

    #[test]
    fn hysteresis_confirm_and_hold() {
        let mut p = policy(10.0, 2, 30);
        let v6 = verdict(1.0, 0.5, 0.001);
        let v4 = verdict(0.5, 1.0, 0.001);
        // Needs two verdicts in a row.
        assert!(matches!(
            p.decide(secs(0), Family::V4, &v6),
            Decision::Stay { .. }
        ));
        assert!(matches!(
            p.decide(secs(2), Family::V4, &v6),
            Decision::Switch { to: Family::V6, .. }
        ));
        // Flip-flopping measurements right after: held for 30 s.
        assert!(matches!(
            p.decide(secs(4), Family::V6, &v4),
            Decision::Stay { .. }
        ));
        let d = p.decide(secs(6), Family::V6, &v4);
        assert!(d.reason().contains("hold"), "{d:?}");
        // An interruption of the streak starts it again.
        assert!(matches!(
            p.decide(secs(40), Family::V6, &verdict(1.0, 1.0, 0.9)),
            Decision::Stay { .. }
        ));
        assert!(matches!(
            p.decide(secs(42), Family::V6, &v4),
            Decision::Stay { .. }
        ));
        assert!(matches!(
            p.decide(secs(44), Family::V6, &v4),
            Decision::Switch { to: Family::V4, .. }
        ));
    }
}
