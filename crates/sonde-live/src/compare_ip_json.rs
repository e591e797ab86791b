//! `sonde compare-ip -J`: the comparison as the typed model [`sonde_schema::compare_ip`], the
//! types `sonde report` reads it back with.
//!
//! Each function takes its source apart field by field, so a field added or renamed on either
//! side is a compile error here rather than a key silently missing from the document.

use serde_json::Value;
use sonde_schema::compare_ip as schema;
use sonde_stats::latency::model::{BtcFamily, CompareIpResult, SizeRow};
use sonde_stats::verdict::{MeasureVerdict, Verdict};

/// The whole comparison as one document: `partial` when it ended early, `error` naming each
/// failed family.
pub fn document(r: &CompareIpResult, partial: bool, error: Option<&str>) -> Value {
    let CompareIpResult {
        version,
        target,
        ipv4,
        ipv6,
        latency,
        throughput,
        every_secs,
        sizes,
        latency_over_time,
        btc,
        capacity,
        verdict: v,
        partial: _,
    } = r;
    sonde_schema::to_value(&schema::CompareIpDocument {
        version: Some(version.clone()),
        target: Some(target.clone()),
        ipv4: ipv4.clone(),
        ipv6: ipv6.clone(),
        latency: *latency,
        throughput: *throughput,
        every_secs: *every_secs,
        sizes: sizes.iter().map(size).collect(),
        latency_over_time: latency_over_time.clone(),
        btc: btc.as_ref().map(|[a, b]| [btc_family(a), btc_family(b)]),
        capacity: capacity.clone(),
        verdict: Some(verdict(v)),
        envelope: sonde_schema::Envelope::new("compare-ip", partial, error),
    })
}

fn size(s: &SizeRow) -> schema::SizeRow {
    let SizeRow {
        family,
        payload_bytes,
        ip_bytes,
        sent,
        received,
        lost,
        loss_percent,
        refused,
        rtt,
        error,
    } = s;
    schema::SizeRow {
        family: family.clone(),
        payload_bytes: *payload_bytes,
        ip_bytes: Some(*ip_bytes),
        sent: *sent,
        received: *received,
        lost: *lost,
        loss_percent: *loss_percent,
        refused: *refused,
        rtt: *rtt,
        error: error.clone(),
    }
}

fn btc_family(b: &BtcFamily) -> schema::BtcFamily {
    let BtcFamily {
        family,
        address,
        sessions,
        summary,
        error,
    } = b;
    schema::BtcFamily {
        family: family.clone(),
        address: address.clone(),
        sessions: sessions.clone(),
        summary: summary.as_ref().map(crate::btc::stats),
        error: error.clone(),
    }
}

fn measure_verdict(m: &MeasureVerdict) -> schema::MeasureVerdict {
    let MeasureVerdict {
        measure: which,
        unit,
        ipv4,
        ipv6,
        better,
        margin_pct,
        p_value,
        samples_ipv4,
        samples_ipv6,
        significant,
        test,
        note,
    } = m;
    schema::MeasureVerdict {
        measure: *which,
        unit: unit.clone(),
        ipv4: *ipv4,
        ipv6: *ipv6,
        better: *better,
        margin_pct: *margin_pct,
        p_value: *p_value,
        samples_ipv4: *samples_ipv4,
        samples_ipv6: *samples_ipv6,
        significant: *significant,
        test: Some(test.clone()),
        note: note.clone(),
    }
}

fn verdict(v: &Verdict) -> schema::Verdict {
    let Verdict {
        schema: version,
        better,
        measure: which,
        margin_pct,
        confidence,
        per_measure,
        summary,
    } = v;
    schema::Verdict {
        schema: *version,
        better: *better,
        measure: *which,
        margin_pct: *margin_pct,
        confidence: *confidence,
        per_measure: per_measure.iter().map(measure_verdict).collect(),
        summary: Some(summary.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A result with every optional part, as the runtime's types serialise it.
    fn result() -> Value {
        let rtt = json!({"samples": 3, "min_ms": 0.01, "mean_ms": 0.02, "median_ms": 0.02,
            "p90_ms": 0.03, "p99_ms": 0.03, "p999_ms": 0.03, "max_ms": 0.03,
            "stddev_ms": 0.01, "variance_ms2": 0.0001});
        let family = |f: &str| {
            json!({"family": f, "address": "::1", "rtt": rtt,
            "loss_percent": 0.0, "throughput_bps": 2e10, "error": null})
        };
        let session = json!({"index": 1, "family": "IPv4", "size": 1000, "bytes": 1000,
            "seconds": 0.1, "goodput_bps": 8e4, "retransmits": 0, "max_cwnd": null,
            "mean_rtt_us": 20, "congestion": "cubic", "start_unix_s": 0.0});
        let btc = |f: &str| {
            json!({"family": f, "address": null, "sessions": [session],
            "summary": {"sessions": 1, "min_bps": 8e4, "max_bps": 8e4, "mean_bps": 8e4,
                        "median_bps": 8e4, "stddev_bps": 0.0, "variance": 0.0}, "error": null})
        };
        let cap = |f: &str| {
            json!({"family": f, "address": null, "verdict": "host-limited",
            "sustained_bps": 9e9, "sustained_min_bps": 8e9, "sustained_max_bps": 1e10,
            "peak_low_bps": null, "peak_high_bps": null, "long_trains_used": 5,
            "payload_bytes": 1472, "seconds": 0.5, "error": null})
        };
        json!({"version": "sonde test", "target": "localhost",
            "ipv4": family("IPv4"), "ipv6": family("IPv6"),
            "latency": {"better": "a", "difference_percent": 12.0, "p_value": 0.3,
                        "significant": false},
            "throughput": null, "every_secs": 0.1,
            "sizes": [{"family": "IPv4", "payload_bytes": 56, "ip_bytes": 84, "sent": 3,
                       "received": 3, "lost": 0, "loss_percent": 0.0, "refused": 0,
                       "rtt": rtt, "error": null}],
            "btc": [btc("IPv4"), btc("IPv6")], "capacity": [cap("IPv4"), cap("IPv6")],
            "verdict": {"schema": 1, "better": "neither", "measure": null, "margin_pct": 0.0,
                "confidence": null, "summary": "no significant difference",
                "per_measure": [{"measure": "capacity", "unit": "bit/s (IP)", "ipv4": null,
                    "ipv6": null, "better": "neither", "margin_pct": 0.0, "p_value": null,
                    "samples_ipv4": 0, "samples_ipv6": 0, "significant": false,
                    "test": "disjoint-ranges", "note": "the hosts set the rate"}]},
            "partial": false})
    }

    #[test]
    fn the_document_is_the_result_key_for_key_with_the_envelope() {
        let raw = result();
        let r: CompareIpResult = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            raw,
            "the fixture is complete"
        );
        let doc = document(&r, true, Some("IPv6: refused"));
        crate::snapshot::check("compare_ip_json_1", &doc);
        let mut want = raw;
        crate::envelope::Envelope::new("compare-ip")
            .partial(true)
            .error(Some("IPv6: refused"))
            .stamp(&mut want);
        assert_eq!(doc, want);
    }
}
