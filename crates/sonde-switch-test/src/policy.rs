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
pub struct Entry {
    pub at: Duration,
    pub on: Family,
    pub switched_to: Option<Family>,
    pub reason: String,
}

/// Chooses the next family.
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
