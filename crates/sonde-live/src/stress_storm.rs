//! `sonde stress --storm` output: the accepted rate, the failures by kind and the connect
//! times, as lines or inside one JSON document.

use serde_json::Value;
use sonde_schema::stress::{storm as schema, KIND};
use sonde_stats::stress::storm::StormReport;

/// The report as lines.
pub fn lines(r: &StormReport) -> Vec<String> {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.3} ms"));
    vec![
        format!(
            "{} attempts in {:.1} s ({} in flight at once): {} accepted, {:.0}/s",
            r.attempts, r.seconds, r.concurrency, r.accepted, r.accepted_per_second
        ),
        format!(
            "failed: {} refused (reset), {} timed out, {} other",
            r.refused, r.timed_out, r.failed
        ),
        format!(
            "connect time: median {}, p99 {}, max {}",
            ms(r.connect_ms_median),
            ms(r.connect_ms_p99),
            ms(r.connect_ms_max)
        ),
    ]
}

/// The storm as one document ([`sonde_schema::stress::storm`]'s model, as JSON); `error`:
/// why the storm failed the check, if it did.
pub fn document(mode: &str, host: &str, r: &StormReport, error: Option<&str>) -> Value {
    sonde_schema::to_value(&schema::StormDocument {
        mode: mode.to_owned(),
        host: Some(host.to_owned()),
        storm: crate::stress_model::storm(r),
        envelope: sonde_schema::Envelope::new(KIND, r.partial, error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_say_each_count() {
        let r = StormReport {
            seconds: 2.0,
            concurrency: 4,
            attempts: 1003,
            accepted: 1000,
            refused: 2,
            timed_out: 1,
            failed: 0,
            accepted_per_second: 500.0,
            connect_ms_median: Some(0.05),
            connect_ms_p99: Some(0.2),
            connect_ms_max: None,
            partial: false,
        };
        let l = lines(&r);
        assert!(l[0].contains("1000 accepted, 500/s"), "{l:?}");
        assert!(
            l[1].contains("2 refused") && l[1].contains("1 timed out"),
            "{l:?}"
        );
        assert!(
            l[2].contains("median 0.050 ms") && l[2].ends_with("max -"),
            "{l:?}"
        );
        assert_eq!(document("echo", "h", &r, None)["storm"]["accepted"], 1000);
        let failed = document("echo", "h", &r, Some("3 attempts failed"));
        assert_eq!(failed["error"], "3 attempts failed");
    }
}
