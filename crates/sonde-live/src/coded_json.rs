//! The `-J` document of `sonde client --coded`: the [`sonde_schema::coded`] model built from
//! a [`CodedRun`], which `sonde report` reads back.

use serde_json::Value;
use sonde_schema::coded as schema;
use sonde_schema::throughput::Iperf3Envelope;
use sonde_stats::model::CpuUsage;

use crate::coded_run::{figures, reliability, CodedMode, CodedRun};

/// The document (`error`: why the run failed; no `error` key when it did not, as in the
/// iperf3-shaped documents, since a coded run is a client's).
pub fn document(o: &CodedRun, mode: &CodedMode, error: Option<&str>) -> Value {
    sonde_schema::to_value(&model(o, mode, error))
}

/// The document's model (see [`document`]).
pub fn model(o: &CodedRun, mode: &CodedMode, error: Option<&str>) -> schema::CodedDocument {
    let x = figures(o);
    // A file's bytes are checked by their digest only: no pattern count on an upload.
    let pattern_checked = mode.file.is_none() || !o.client_sends;
    schema::CodedDocument {
        protocol: "coded".into(),
        direction: Some(if o.client_sends { "upload" } else { "reverse" }.into()),
        server: o.server.clone(),
        complete: o.complete,
        seconds: Some(o.elapsed_secs),
        delivered_bytes: x.delivered,
        sent_bytes: x.sent,
        goodput_bits_per_second: Some(x.goodput_bps),
        reliability_percent: reliability(&x),
        mismatched_bytes: o
            .receiver
            .map(|r| r.mismatched_bytes)
            .filter(|_| pattern_checked),
        sender: o.sender.map(|s| schema::CodedSender {
            datagrams: s.datagrams,
            wire_bytes: s.wire_bytes,
            wire_bits_per_second: x.wire_bps,
            blocks: s.blocks,
            source_symbols: s.source_symbols,
            proactive_repair: s.proactive_repair,
            feedback_repair: s.feedback_repair,
            repair_overhead: x.overhead,
            feedback_rounds: Some(s.feedback_rounds),
        }),
        receiver: o.receiver.map(|r| schema::CodedReceiver {
            datagrams: r.datagrams_received,
            useless_symbols: r.useless_symbols,
            rejected_datagrams: r.rejected,
            feedback_sent: Some(r.feedback_sent),
            blocks: r.blocks,
            decode_delay_p50_ms: r.decode_delay_p50_us as f64 / 1e3,
            decode_delay_p99_ms: r.decode_delay_p99_us as f64 / 1e3,
        }),
        path: o.path.map(|(rate, loss, rtt)| schema::CodedPath {
            rate_bits_per_second: rate,
            loss_fraction: loss,
            rtt_ms: rtt,
            rate_backoffs: o.backoffs,
            queue_competitions: o.competitions,
        }),
        cpu_local: o.cpu_local.map(cpu),
        cpu_remote: o.cpu_remote.map(cpu),
        target_bits_per_second: Some(mode.target_bits_per_second),
        scheme: Some(mode.scheme.into()),
        feedback: Some(mode.feedback.into()),
        file: mode.file.clone(),
        sha256_verified: o.digest_ok,
        envelope: Iperf3Envelope::new("client", !o.complete, error),
    }
}

fn cpu(c: CpuUsage) -> schema::CodedCpu {
    schema::CodedCpu {
        total: c.total,
        user: c.user,
        system: c.system,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coded_run::fixtures::{mode, reverse_without_sender, upload};
    use serde_json::json;

    #[test]
    fn an_upload_carries_every_figure_and_no_error_key() {
        let d = document(&upload(), &mode("coded", None), None);
        crate::snapshot::check("coded_json_1", &d);
        assert_eq!(d["protocol"], "coded");
        assert_eq!(d["kind"], "client");
        assert_eq!(d["partial"], false);
        assert!(d.get("error").is_none(), "{d}");
        assert_eq!(d["direction"], "upload");
        assert_eq!(d["delivered_bytes"], 1_000_000);
        assert_eq!(d["reliability_percent"], 100.0);
        assert_eq!(d["goodput_bits_per_second"], 3_200_000.0);
        assert_eq!(d["mismatched_bytes"], 0);
        assert_eq!(d["sender"]["wire_bits_per_second"], 3_520_000.0);
        assert_eq!(d["sender"]["repair_overhead"], 0.05);
        assert_eq!(d["receiver"]["decode_delay_p99_ms"], 4.321);
        assert_eq!(d["path"]["rtt_ms"], 1.75);
        assert_eq!(d["path"]["queue_competitions"], 1);
        assert_eq!(
            d["cpu_local"],
            json!({"total": 12.5, "user": 2.5, "system": 10.0})
        );
        assert_eq!(d["cpu_remote"], Value::Null);
        assert_eq!(d["target_bits_per_second"], 100_000_000);
        assert_eq!(d["scheme"], "coded");
        assert_eq!(d["feedback"], "unrestricted");
        assert_eq!(d["file"], Value::Null);
        assert_eq!(d["sha256_verified"], true);
    }

    #[test]
    fn a_file_upload_has_no_pattern_count_and_a_failed_run_says_why() {
        let d = document(&upload(), &mode("arq", Some("/tmp/f")), None);
        crate::snapshot::check("coded_json_2", &d);
        assert_eq!(d["mismatched_bytes"], Value::Null);
        assert_eq!(d["file"], "/tmp/f");
        let d = document(
            &reverse_without_sender(),
            &mode("coded", Some("/tmp/g")),
            Some("boom"),
        );
        crate::snapshot::check("coded_json_3", &d);
        assert_eq!(d["mismatched_bytes"], 0, "received test data is checked");
        assert_eq!(d["direction"], "reverse");
        assert_eq!(d["sent_bytes"], Value::Null);
        assert_eq!(d["sender"], Value::Null);
        assert_eq!(d["reliability_percent"], Value::Null);
        assert_eq!(d["path"]["rate_backoffs"], Value::Null);
        assert_eq!(d["sha256_verified"], Value::Null);
        assert_eq!((&d["partial"], &d["error"]), (&json!(true), &json!("boom")));
    }

    #[test]
    fn the_document_reads_back_through_its_model() {
        let m = mode("coded", None);
        let d = document(&upload(), &m, None);
        crate::snapshot::check("coded_json_4", &d);
        let back: schema::CodedDocument = sonde_schema::from_value("coded", d).unwrap();
        assert_eq!(back, model(&upload(), &m, None));
    }
}
