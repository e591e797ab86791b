//! When to move a stream to the other family, driven by the measurements: a pure policy over
//! `sonde compare-ip`'s [`Verdict`].
//!
//! Switching costs a connection setup and a replay, so a policy that follows every wobble of
//! the measurements would cost more than it gains. [`Policy`] switches only when the verdict
//! names the *other* family better with a significant test, a margin of at least
//! [`PolicyConfig::margin_pct`] and a confidence of at least
//! [`PolicyConfig::min_confidence`], for [`PolicyConfig::confirm`] verdicts in a row; and
//! never again within [`PolicyConfig::hold`] of its last switch (the hysteresis that stops it
//! flapping between two families measured as about equal). Time is an argument, so the rule
//! is tested with fixed numbers; the caller reads the verdicts and performs the switch.
//!
//! ```
//! use sonde_switch::policy::{Decision, Policy, PolicyConfig};
//! use sonde_switch::Family;
//! use sonde_stats::verdict::{Measure, MeasureVerdict, Verdict};
//! use std::time::Duration;
//! let v = Verdict::decide(vec![MeasureVerdict::from_test(
//!     Measure::LatencyMedian, 2.0, 1.0, Some(0.001), (50, 50))]);
//! let mut p = Policy::new(PolicyConfig { margin_pct: 10.0, ..PolicyConfig::default() });
//! assert!(matches!(p.decide(Duration::ZERO, Family::V4, &v), Decision::Switch { to: Family::V6, .. }));
//! ```

use crate::Family;
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

fn choice(f: Family) -> FamilyChoice {
    match f {
        Family::V4 => FamilyChoice::Ipv4,
        Family::V6 => FamilyChoice::Ipv6,
    }
}

impl Policy {
    pub fn new(cfg: PolicyConfig) -> Self {
        Self {
            cfg,
            streak: 0,
            last_switch: None,
        }
    }

    /// The decision on `verdict` at `now` (any monotonic origin) while on `current`. A
    /// `Switch` is taken as done: the hold starts at `now`.
    pub fn decide(&mut self, now: Duration, current: Family, verdict: &Verdict) -> Decision {
        let other = current.other();
        let stay = |reason: String| Decision::Stay { reason };
        if verdict.better != choice(other) {
            self.streak = 0;
            return stay(match verdict.better {
                FamilyChoice::Neither => format!("no family is better ({})", verdict.summary),
                _ => format!("{} is already the better family", current.name()),
            });
        }
        let measure = verdict
            .measure
            .map_or("no measure", sonde_stats::verdict::Measure::label);
        if verdict.margin_pct < self.cfg.margin_pct {
            self.streak = 0;
            return stay(format!(
                "{} is better by {:.1} % on {measure}, under the {:.1} % margin",
                other.name(),
                verdict.margin_pct,
                self.cfg.margin_pct
            ));
        }
        if let Some(c) = verdict.confidence.filter(|c| *c < self.cfg.min_confidence) {
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
        let conf = verdict.confidence.map_or_else(
            || "disjoint ranges".to_string(),
            |c| format!("confidence {c:.3}"),
        );
        Decision::Switch {
            to: other,
            reason: format!(
                "{} is better by {:.1} % on {measure} ({conf}), margin {:.1} %",
                other.name(),
                verdict.margin_pct,
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
