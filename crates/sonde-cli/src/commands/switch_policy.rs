//! When `sonde switch-test` switches: every `--every` seconds to the other family (the
//! default), or, with `--policy FILE`, when `sonde_switch::policy::Policy` says so on the
//! verdict that file holds (re-read each time, so a `compare-ip` run elsewhere can update it).
//! Every decision that differs from the one before is logged with its reason.

use crate::flags::switch_policy::PolicyArgs;
use anyhow::Context;
use serde_json::{json, Value};
use sonde_stats::verdict::{Verdict, MAX_INPUT};
use sonde_switch::policy::{Decision, Policy, PolicyConfig};
use sonde_switch::Family;
use std::io::Read;
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

/// Reads and validates the verdict in `path` (at most [`MAX_INPUT`] bytes).
fn read_verdict(path: &Path) -> anyhow::Result<Verdict> {
    let f = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut text = String::new();
    f.take(MAX_INPUT as u64 + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Verdict::parse(&text).with_context(|| format!("{}", path.display()))
}

impl Chooser {
    /// The chooser of the flags; with `--policy`, the file must hold a valid verdict now.
    ///
    /// # Errors
    /// When the verdict file cannot be read or is not a valid verdict.
    pub fn new(a: &PolicyArgs) -> anyhow::Result<Self> {
        let Some(path) = &a.policy else {
            return Ok(Self::Periodic);
        };
        read_verdict(path)?;
        Ok(Self::Policy {
            path: path.clone(),
            margin_pct: a.margin,
            policy: Policy::new(PolicyConfig {
                margin_pct: a.margin,
                min_confidence: a.min_confidence,
                confirm: a.confirm,
                hold: Duration::from_secs_f64(a.hold),
            }),
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
                reason: format!("no verdict ({e:#}): staying"),
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

    /// The policy's part of the JSON document (null without `--policy`).
    pub fn json(&self) -> Value {
        match self {
            Self::Periodic => Value::Null,
            Self::Policy {
                path,
                margin_pct,
                log,
                ..
            } => json!({
                "file": path.display().to_string(),
                "margin_pct": margin_pct,
                "decisions": log.iter().map(|e| json!({
                    "at": e.at.as_secs_f64(),
                    "on": e.on.name(),
                    "switched_to": e.switched_to.map(Family::name),
                    "reason": e.reason,
                })).collect::<Vec<_>>(),
            }),
        }
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
