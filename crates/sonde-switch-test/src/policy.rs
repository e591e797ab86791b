//! Where a switch test switches to: the other family each time (the default), or, with a
//! verdict file (`--policy FILE`), where `sonde_switch::policy::Policy` says on the verdict
//! that file holds (re-read each time, so a `compare-ip` run elsewhere can update it).
//! Every decision that differs from the one before is logged with its reason.

use sonde_schema::switch_test::{PolicyDecision, PolicyLog};
use sonde_stats::verdict::{Verdict, VerdictError, MAX_INPUT};
use sonde_switch::policy::{Decision, Policy, PolicyConfig};
use sonde_switch::Family;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most log entries kept (a decision is logged only when its reason changes).
const MAX_LOG: usize = 1000;

/// One logged decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub at: Duration,
    pub on: Family,
    pub switched_to: Option<Family>,
    pub reason: String,
}

/// Chooses the next family.
#[derive(Debug)]
pub enum Chooser {
    Periodic,
    Policy {
        path: PathBuf,
        margin_pct: f64,
        policy: Policy,
        log: Vec<Entry>,
    },
}

/// Switching by a verdict: the file that holds it and the policy's thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySettings {
    /// A `sonde compare-ip -J` document or its `verdict` object.
    pub file: PathBuf,
    pub config: PolicyConfig,
}

/// Why the verdict file gave no verdict.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot open {}", path.display())]
    Open { path: PathBuf, source: io::Error },
    #[error("cannot read {}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{}", path.display())]
    Verdict { path: PathBuf, source: VerdictError },
}

/// Reads and validates the verdict in `path` (at most [`MAX_INPUT`] bytes).
fn read_verdict(path: &Path) -> Result<Verdict, PolicyError> {
    let f = std::fs::File::open(path).map_err(|source| PolicyError::Open {
        path: path.to_owned(),
        source,
    })?;
    let mut text = String::new();
    f.take(MAX_INPUT as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|source| PolicyError::Read {
            path: path.to_owned(),
            source,
        })?;
    Verdict::parse(&text).map_err(|source| PolicyError::Verdict {
        path: path.to_owned(),
        source,
    })
}

/// `e` and each of its causes, joined by ": ".
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

impl Chooser {
    /// The other family each time without `settings`; with them, the file must hold a
    /// valid verdict now.
    ///
    /// # Errors
    /// When the verdict file cannot be read or is not a valid verdict.
    pub fn new(settings: Option<&PolicySettings>) -> Result<Self, PolicyError> {
        let Some(s) = settings else {
            return Ok(Self::Periodic);
        };
        read_verdict(&s.file)?;
        Ok(Self::Policy {
            path: s.file.clone(),
            margin_pct: s.config.margin_pct,
            policy: Policy::new(s.config),
            log: Vec::new(),
        })
    }

    /// The family to switch to at `at` (since the start) while on `current`, if any.
    pub fn next(&mut self, at: Duration, current: Family) -> Option<Family> {
        let Self::Policy {
            path, policy, log, ..
        } = self
        else {
            return Some(current.other());
        };
        let decision = match read_verdict(path) {
            Ok(v) => policy.decide(at, current, &v),
            Err(e) => Decision::Stay {
                reason: format!("no verdict ({}): staying", with_causes(&e)),
            },
        };
        let to = match &decision {
            Decision::Switch { to, .. } => Some(*to),
            Decision::Stay { .. } => None,
        };
        let repeat = log.last().is_some_and(|l| {
            l.switched_to.is_none() && to.is_none() && l.reason == decision.reason()
        });
        if !repeat && log.len() < MAX_LOG {
            log.push(Entry {
                at,
                on: current,
                switched_to: to,
                reason: decision.reason().to_string(),
            });
        }
        to
    }

    /// The policy's part of the document (None without a verdict file).
    pub fn log(&self) -> Option<PolicyLog> {
        let Self::Policy {
            path,
            margin_pct,
            log,
            ..
        } = self
        else {
            return None;
        };
        Some(PolicyLog {
            file: path.display().to_string(),
            margin_pct: *margin_pct,
            decisions: log
                .iter()
                .map(|e| PolicyDecision {
                    at: e.at.as_secs_f64(),
                    on: e.on.name().into(),
                    switched_to: e.switched_to.map(|f| f.name().into()),
                    reason: e.reason.clone(),
                })
                .collect(),
        })
    }

    /// The policy's lines of the table.
    pub fn lines(&self) -> Vec<String> {
        let Self::Policy { log, .. } = self else {
            return Vec::new();
        };
        log.iter()
            .map(|e| match e.switched_to {
                Some(to) => format!(
                    "policy at {:.3} s: switched {} -> {}: {}",
                    e.at.as_secs_f64(),
                    e.on.name(),
                    to.name(),
                    e.reason
                ),
                None => format!(
                    "policy at {:.3} s: stayed on {}: {}",
                    e.at.as_secs_f64(),
                    e.on.name(),
                    e.reason
                ),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_testkit::TempDir;

    /// IPv6 better by 30 % on the median latency, at 99.9 % confidence.
    const V6_BETTER_BY_30: &str = r#"{"schema":1,"better":"ipv6","measure":"latency_median","margin_pct":30.0,"confidence":0.999,"per_measure":[],"summary":"IPv6 is better"}"#;

    fn settings(file: PathBuf, margin_pct: f64) -> PolicySettings {
        PolicySettings {
            file,
            config: PolicyConfig {
                margin_pct,
                hold: Duration::ZERO,
                ..PolicyConfig::default()
            },
        }
    }

    #[test]
    fn without_a_verdict_file_every_switch_goes_to_the_other_family_unlogged() {
        let mut c = Chooser::new(None).unwrap();
        assert_eq!(c.next(Duration::ZERO, Family::V4), Some(Family::V6));
        assert_eq!(c.next(Duration::ZERO, Family::V6), Some(Family::V4));
        assert_eq!(c.log(), None);
        assert!(c.lines().is_empty());
    }

    #[test]
    fn a_verdict_over_the_margin_switches_once_and_each_new_reason_is_logged() {
        let dir = TempDir::new("switch-policy");
        let file = dir.file("verdict.json");
        std::fs::write(&file, V6_BETTER_BY_30).unwrap();
        let mut c = Chooser::new(Some(&settings(file.clone(), 10.0))).unwrap();
        assert_eq!(c.next(Duration::ZERO, Family::V4), Some(Family::V6));
        // On IPv6 already: it stays, and says so once however often it is asked.
        assert_eq!(c.next(Duration::from_secs(1), Family::V6), None);
        assert_eq!(c.next(Duration::from_secs(2), Family::V6), None);
        std::fs::remove_file(&file).unwrap();
        assert_eq!(c.next(Duration::from_secs(3), Family::V6), None);
        let log = c.log().unwrap();
        assert_eq!(log.margin_pct, 10.0);
        assert_eq!(log.file, file.display().to_string());
        let d = &log.decisions;
        assert_eq!(d.len(), 3, "{d:?}");
        assert_eq!(
            (d[0].on.as_str(), d[0].switched_to.as_deref()),
            ("IPv4", Some("IPv6"))
        );
        assert!(d[0].reason.contains("30.0 %"), "{d:?}");
        assert_eq!(d[1].switched_to, None);
        assert!(d[2].reason.starts_with("no verdict (cannot open "), "{d:?}");
        assert!(d[2].reason.contains("verdict.json: "), "{d:?}");
        let lines = c.lines();
        assert!(
            lines[0].starts_with("policy at 0.000 s: switched IPv4 -> IPv6: "),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("policy at 1.000 s: stayed on IPv6: "),
            "{lines:?}"
        );
    }

    #[test]
    fn a_verdict_under_the_margin_stays_and_says_why() {
        let dir = TempDir::new("switch-policy");
        let file = dir.file("verdict.json");
        std::fs::write(&file, V6_BETTER_BY_30).unwrap();
        let mut c = Chooser::new(Some(&settings(file, 40.0))).unwrap();
        assert_eq!(c.next(Duration::ZERO, Family::V4), None);
        let log = c.log().unwrap();
        assert!(
            log.decisions[0].reason.contains("under the 40.0 % margin"),
            "{log:?}"
        );
    }

    #[test]
    fn a_missing_or_malformed_verdict_file_is_refused_naming_it() {
        let dir = TempDir::new("switch-policy");
        let file = dir.file("verdict.json");
        let e = Chooser::new(Some(&settings(file.clone(), 10.0))).unwrap_err();
        assert!(matches!(e, PolicyError::Open { .. }), "{e}");
        assert_eq!(e.to_string(), format!("cannot open {}", file.display()));
        std::fs::write(&file, V6_BETTER_BY_30.replace("30.0", "300.0")).unwrap();
        let e = Chooser::new(Some(&settings(file, 10.0))).unwrap_err();
        assert!(matches!(e, PolicyError::Verdict { .. }), "{e}");
        let text = with_causes(&e);
        assert!(
            text.contains("verdict.json: ") && text.contains("margin_pct"),
            "{text}"
        );
    }
}
