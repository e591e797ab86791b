//! `sonde stress --storm`: the storm run ([`crate::client::storm`]) and when it counts as a
//! failure: a device that refused or dropped connections under it, or accepted none, failed
//! the check.

use crate::client::storm::StormConfig;
use crate::client::StressError;
use crate::verdict::Checked;
use sonde_stats::stress::storm::StormReport;
use std::sync::atomic::AtomicBool;

/// Runs the storm until its time is up or `stop`, and checks it. A storm has no events
/// along the way: its report is the whole result.
///
/// # Errors
/// [`StressError::Poll`] when the event loop itself fails.
pub fn run(cfg: &StormConfig, stop: &AtomicBool) -> Result<Checked<StormReport>, StressError> {
    let report = crate::client::storm::run(cfg, stop)?;
    let problems = problems(&report);
    Ok(Checked { report, problems })
}

/// Why a storm counts as a failure, if it does.
pub fn problems(r: &StormReport) -> Option<String> {
    let failed = r.refused + r.timed_out + r.failed;
    let mut why = Vec::new();
    if failed > 0 {
        why.push(format!("{failed} attempts failed"));
    }
    if r.accepted == 0 {
        why.push("none was accepted".into());
    }
    if r.partial {
        why.push("interrupted".into());
    }
    (!why.is_empty()).then(|| why.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn report(accepted: u64, refused: u64, partial: bool) -> StormReport {
        StormReport {
            seconds: 1.0,
            concurrency: 4,
            attempts: accepted + refused,
            accepted,
            refused,
            timed_out: 0,
            failed: 0,
            accepted_per_second: accepted as f64,
            connect_ms_median: None,
            connect_ms_p99: None,
            connect_ms_max: None,
            partial,
        }
    }

    #[test]
    fn a_storm_fails_on_any_failed_attempt_none_accepted_or_a_stop() {
        assert_eq!(problems(&report(100, 0, false)), None);
        assert_eq!(
            problems(&report(100, 3, false)).as_deref(),
            Some("3 attempts failed")
        );
        assert_eq!(
            problems(&report(0, 0, true)).as_deref(),
            Some("none was accepted, interrupted")
        );
    }

    /// A storm against a loopback listener that accepts: every attempt is accepted.
    #[test]
    fn a_storm_against_a_listener_passes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen on loopback");
        let addr = listener.local_addr().expect("its address");
        std::thread::spawn(move || for _ in listener.incoming() {});
        let cfg = StormConfig {
            addr,
            concurrency: 2,
            duration: Duration::from_millis(200),
            connect_timeout: Duration::from_secs(1),
        };
        let out = run(&cfg, &AtomicBool::new(false)).expect("an event loop");
        assert!(out.report.accepted > 0, "{:?}", out.report);
        assert_eq!(out.problems, None, "{:?}", out.report);
    }
}
