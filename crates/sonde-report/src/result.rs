//! What kind a result document is: the dispatcher over the per-kind readers.
//!
//! Each kind of document has a reader of its own (`throughput`, [`crate::latency`], `coded`,
//! `switch`, [`crate::profile`], [`crate::stress`], [`crate::sweep`], [`crate::capacity`],
//! [`crate::compare_ip`], [`crate::rrul`], [`crate::btc`], [`crate::serial`]), built on the JSON paths of
//! [`crate::json`] and the shared views of [`crate::view`]. This module sits on top of them:
//! it tells the kinds apart, in an order that matters where two kinds' shapes overlap, and
//! calls the one reader. No reader imports it. Only the shape that says *what kind* of
//! document it is must be present.

use serde::Serialize;
use serde_json::Value;

use crate::json::at;
use crate::latency::{latency, Latency};
use crate::throughput::throughput;
use crate::view::Throughput;

/// What a document holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ResultDoc {
    Throughput(Box<Throughput>),
    Latency(Box<Latency>),
    Profile(Box<crate::profile::ProfileRun>),
    Stress(Box<crate::stress::StressRun>),
    Sweep(Box<crate::sweep::SweepRun>),
    Capacity(Box<crate::capacity::CapacityRun>),
    #[serde(rename = "compare-ip")]
    CompareIp(Box<crate::compare_ip::CompareIpRun>),
    Rrul(Box<crate::rrul::RrulRun>),
    Btc(Box<crate::btc::BtcRun>),
    Serial(Box<crate::serial::SerialRun>),
}

/// Reads a document, or says why it is not one this report knows.
pub fn read(doc: &Value) -> Result<ResultDoc, String> {
    if crate::coded::is_coded(doc) {
        return Ok(ResultDoc::Throughput(Box::new(crate::coded::throughput(
            doc,
        )?)));
    }
    if crate::switch::is_switch_test(doc) {
        return Ok(ResultDoc::Throughput(Box::new(crate::switch::throughput(
            doc,
        )?)));
    }
    if at(doc, &["start", "test_start"]).is_some() {
        return Ok(ResultDoc::Throughput(Box::new(throughput(doc)?)));
    }
    // Before stress: a sweep's steps also carry offered rates.
    if crate::sweep::is_sweep(doc) {
        return Ok(ResultDoc::Sweep(Box::new(crate::sweep::read(doc)?)));
    }
    if crate::capacity::is_capacity(doc) {
        return Ok(ResultDoc::Capacity(Box::new(crate::capacity::read(doc)?)));
    }
    if crate::compare_ip::is_compare_ip(doc) {
        return Ok(ResultDoc::CompareIp(Box::new(crate::compare_ip::read(
            doc,
        )?)));
    }
    if crate::rrul::is_rrul(doc) {
        return Ok(ResultDoc::Rrul(Box::new(crate::rrul::read(doc)?)));
    }
    if crate::serial::is_serial(doc) {
        return Ok(ResultDoc::Serial(Box::new(crate::serial::read(doc)?)));
    }
    if crate::btc::is_btc(doc) {
        return Ok(ResultDoc::Btc(Box::new(crate::btc::read(doc)?)));
    }
    // Before latency: a stress run's start also names a mode.
    if crate::stress::is_stress(doc) {
        return Ok(ResultDoc::Stress(Box::new(crate::stress::read(doc)?)));
    }
    if at(doc, &["start", "mode"]).is_some() {
        return Ok(ResultDoc::Latency(Box::new(latency(doc)?)));
    }
    if crate::profile::is_profile(doc) {
        return Ok(ResultDoc::Profile(Box::new(crate::profile::read(doc)?)));
    }
    if !doc.is_object() {
        return Err("not a JSON object".into());
    }
    Err(
        "neither a throughput document (no start.test_start), a latency document \
         (no start.mode), a profile document (no profile and streams), a stress, sweep, \
         capacity, compare-ip, rrul, btc nor serial document"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::tests::doc;
    use crate::view::FeedbackView;

    #[test]
    fn a_coded_document_reads_as_one_direction() {
        let doc: Value = serde_json::from_str(
            r#"{"protocol": "coded", "direction": "upload", "complete": true, "seconds": 2.0,
                "delivered_bytes": 1000, "sent_bytes": 1000, "goodput_bits_per_second": 4000.0,
                "target_bits_per_second": 100000000,
                "sender": {"wire_bits_per_second": 5000.0},
                "path": {"rtt_ms": 1.5},
                "cpu_local": {"total": 12.5, "user": 2.5, "system": 10.0},
                "cpu_remote": null}"#,
        )
        .unwrap_or_default();
        let Ok(ResultDoc::Throughput(t)) = read(&doc) else {
            panic!("not read as a throughput document");
        };
        assert_eq!(t.protocol, "CODED");
        assert_eq!(t.goodput_bps(), Some(4000.0));
        assert_eq!(t.delivered_percent(), Some(100.0));
        assert_eq!(t.directions[0].sent_bps, Some(5000.0));
        assert_eq!(t.cpu_client.map(|c| c.total), Some(12.5));
        assert!(t.cpu_server.is_none());
        assert_eq!(t.target_bitrate, Some(100_000_000));
        assert!(!t.partial);
        // No feedback mode named: older documents were unrestricted; no counts, none shown.
        assert_eq!(t.feedback, Some(FeedbackView::mode("unrestricted")));
    }

    #[test]
    fn an_arq_document_is_labelled_arq_and_restricted_feedback_is_named() {
        let label_of = |extra: &str| {
            let doc: Value = serde_json::from_str(&format!(
                r#"{{"protocol": "coded", "direction": "upload", "complete": true,
                    "delivered_bytes": 10, "sent_bytes": 10 {extra}}}"#
            ))
            .unwrap_or_default();
            match read(&doc) {
                Ok(ResultDoc::Throughput(t)) => t.protocol,
                _ => panic!("not read as a throughput document"),
            }
        };
        assert_eq!(
            label_of(r#", "scheme": "arq", "feedback": "unrestricted""#),
            "ARQ"
        );
        assert_eq!(label_of(r#", "scheme": "coded""#), "CODED");
        assert_eq!(
            label_of(r#", "scheme": "coded", "feedback": "restricted""#),
            "CODED (restricted feedback)"
        );
        assert_eq!(label_of(""), "CODED");
    }

    #[test]
    fn a_switch_test_reads_as_an_upload_with_its_receiver_series_and_switches() {
        let Ok(ResultDoc::Throughput(t)) = read(&doc(true)) else {
            panic!("not read as a throughput document");
        };
        assert_eq!(t.protocol, "SWITCH");
        assert_eq!(t.goodput_bps(), Some(8000.0));
        assert_eq!(t.throughput.len(), 1);
        assert_eq!(t.throughput[0].points, vec![(0.25, 9600.0), (0.75, 6400.0)]);
        assert_eq!(
            t.switches,
            vec![
                (0.25, "planned to IPv6".to_string()),
                (0.75, "recovery to IPv4".to_string())
            ]
        );
        assert!(t.error.is_none());
        assert!(!t.partial);
    }
}
