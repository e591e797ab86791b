//! `sonde stress --overload`: the overload run ([`crate::client::overload`]) and when it
//! counts as a failure: a held connection that did not close cleanly, no recovery within the
//! wait, or a run cut short.

use crate::client::{StressConfig, StressError};
use crate::verdict::Checked;
use sonde_stats::stress::overload::OverloadReport;
use std::sync::atomic::AtomicBool;

/// Opens connections until refused (or `cfg.connections`), holds them for `cfg.duration`,
/// closes them all, times the recovery, and checks it. An overload has no events along the
/// way: its report is the whole result.
///
/// # Errors
/// [`StressError::Poll`] when the event loop itself fails.
pub fn run(cfg: &StressConfig, stop: &AtomicBool) -> Result<Checked<OverloadReport>, StressError> {
    let report = crate::client::overload::run(cfg, stop)?;
    let problems = problems(&report);
    Ok(Checked { report, problems })
}

/// Why an overload counts as a failure, if it does.
pub fn problems(r: &OverloadReport) -> Option<String> {
    let mut why = Vec::new();
    let unclean = r.closed_reset + r.closed_timeout;
    if unclean > 0 {
        why.push(format!("{unclean} held connections did not close cleanly"));
    }
    if r.recovery_seconds.is_none() && !r.partial {
        why.push("no new connection was accepted after the close".into());
    }
    if r.partial {
        why.push("interrupted".into());
    }
    (!why.is_empty()).then(|| why.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::stress::overload::Refusal;

    /// Regression: a failed overload's document said `"error": null`; its reason, now in the
    /// document, is there exactly when the report is not healthy.
    #[test]
    fn an_overload_has_a_reason_exactly_when_it_is_not_healthy() {
        let good = OverloadReport {
            attempted: 10,
            held: 10,
            dropped_after_accept: 0,
            refusal: Refusal::None,
            first_error: None,
            held_seconds: 0.5,
            closed_clean: 10,
            closed_reset: 0,
            closed_timeout: 0,
            recovery_seconds: Some(0.01),
            partial: false,
        };
        let cases = [
            (good.clone(), None),
            (
                OverloadReport {
                    closed_reset: 2,
                    closed_timeout: 1,
                    ..good.clone()
                },
                Some("3 held connections did not close cleanly"),
            ),
            (
                OverloadReport {
                    recovery_seconds: None,
                    ..good.clone()
                },
                Some("no new connection was accepted after the close"),
            ),
            (
                OverloadReport {
                    partial: true,
                    recovery_seconds: None,
                    ..good
                },
                Some("interrupted"),
            ),
        ];
        for (r, want) in cases {
            assert_eq!(problems(&r).as_deref(), want, "{r:?}");
            assert_eq!(r.healthy(), want.is_none(), "{r:?}");
        }
    }
}
