//! `sonde stress --overload -J`: the overload as one document (`mode`, `host`, `overload`:
//! how many connections the device held, how it refused the next, how they closed, how long
//! until it accepted again); its lines are the report's own (`OverloadReport::lines`).

use serde_json::Value;
use sonde_schema::stress::{overload as schema, KIND};
use sonde_stats::stress::overload::OverloadReport;

/// The overload as one document ([`sonde_schema::stress::overload`]'s model, as JSON);
/// `error`: why it failed the check, if it did.
pub fn document(mode: &str, host: &str, r: &OverloadReport, error: Option<&str>) -> Value {
    sonde_schema::to_value(&schema::OverloadDocument {
        mode: mode.to_owned(),
        host: Some(host.to_owned()),
        overload: crate::stress_model::overload(r),
        envelope: sonde_schema::Envelope::new(KIND, r.partial, error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::stress::overload::Refusal;

    #[test]
    fn the_document_holds_the_report_and_its_reason() {
        let r = OverloadReport {
            attempted: 256,
            held: 50,
            dropped_after_accept: 1,
            refusal: Refusal::Timeout,
            first_error: None,
            held_seconds: 1.0,
            closed_clean: 49,
            closed_reset: 1,
            closed_timeout: 0,
            recovery_seconds: None,
            partial: false,
        };
        let d = document(
            "echo",
            "h",
            &r,
            Some("1 held connections did not close cleanly"),
        );
        crate::snapshot::check("stress_overload_1", &d);
        assert_eq!(
            (d["kind"].as_str(), d["mode"].as_str()),
            (Some("stress"), Some("echo"))
        );
        assert_eq!(d["overload"]["refusal"], "timeout");
        assert_eq!(d["overload"]["held"], 50);
        assert!(d["overload"]["recovery_seconds"].is_null());
        assert_eq!(d["partial"], false);
        assert_eq!(d["error"], "1 held connections did not close cleanly");
        // Key for key what the report itself serialises.
        let report = serde_json::to_value(&r).unwrap_or_default();
        assert_eq!(d["overload"], report);
    }
}
