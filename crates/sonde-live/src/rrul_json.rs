//! `sonde rrul -J`: the run's phases as the typed model [`sonde_schema::rrul`], the types
//! `sonde report` reads it back with.

use serde_json::Value;
use sonde_schema::rrul as schema;
use sonde_stats::latency::model::RrulResult;

/// The whole run as one document; `partial` when it ended early (interrupted, or stopped
/// before its last phase).
pub fn document(r: &RrulResult, partial: bool) -> Value {
    let RrulResult {
        version,
        target,
        remote,
        streams,
        phase_secs,
        step_secs,
        phases,
        partial: _,
        error,
    } = r;
    sonde_schema::to_value(&schema::RrulDocument {
        version: Some(version.clone()),
        target: Some(target.clone()),
        remote: Some(remote.clone()),
        streams: Some(*streams),
        phase_secs: Some(*phase_secs),
        step_secs: Some(*step_secs),
        phases: phases.clone(),
        envelope: sonde_schema::Envelope::new("rrul", partial, error.as_deref()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::latency::model::{LatencySummary, LossStats, RrulPhase};

    #[test]
    fn the_document_keeps_every_key_of_the_result_and_the_envelope_says_partial() {
        let latency = LatencySummary {
            seconds: 1.0,
            loss: LossStats {
                sent: 10,
                received: 10,
                ..LossStats::default()
            },
            rtt: None,
            rtt_histogram: None,
            jitter_ms: 0.1,
            ipdv: None,
            one_way: None,
            server_turnaround_us: None,
            schedule: None,
            rate_per_second: 10.0,
            partial: false,
            error: None,
        };
        let r = RrulResult {
            version: "sonde test".into(),
            target: "h".into(),
            remote: "127.0.0.1:5201".into(),
            streams: 2,
            phase_secs: 1.0,
            step_secs: 0.1,
            phases: vec![RrulPhase {
                name: "idle".into(),
                download_bps: None,
                upload_bps: None,
                latency,
                median_inflation_ms: None,
                p99_inflation_ms: None,
                load_error: None,
            }],
            partial: false,
            error: None,
        };
        let doc = document(&r, true);
        crate::snapshot::check("rrul_json_1", &doc);
        let mut raw = serde_json::to_value(&r).unwrap();
        crate::envelope::Envelope::new("rrul")
            .partial(true)
            .stamp(&mut raw);
        assert_eq!(doc, raw);
    }
}
