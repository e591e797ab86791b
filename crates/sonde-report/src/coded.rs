//! Reading `sonde client --coded -J` documents into the report's throughput view.
//!
//! A coded transfer has its own document shape (top-level `"protocol": "coded"`; no interval
//! reports, since the figures that matter are end-to-end: delivered bytes, reliability, repair).
//! The report compares it with TCP and UDP in one table, so it is read into the same
//! [`Throughput`] view: one direction whose received figures are the delivered bytes and the
//! goodput, whose sent figures are the bytes the sender had to deliver and its wire rate.
//! Reliability then reads as delivered / sent bytes, as for TCP.

use crate::json::{num, text, uint};
use crate::view::{CpuView, DirView, FeedbackView, Throughput};
use serde_json::Value;

/// Whether `doc` is a coded transfer's document.
pub fn is_coded(doc: &Value) -> bool {
    doc.get("protocol").and_then(Value::as_str) == Some("coded")
}

fn cpu(v: Option<&Value>) -> Option<CpuView> {
    let v = v?;
    Some(CpuView {
        total: num(v, &["total"])?,
        user: num(v, &["user"]).unwrap_or(0.0),
        system: num(v, &["system"]).unwrap_or(0.0),
    })
}

/// The throughput view of a coded document (see the module docs).
pub fn throughput(doc: &Value) -> Throughput {
    let direction = text(doc, &["direction"]).unwrap_or_else(|| "upload".into());
    let seconds = num(doc, &["seconds"]);
    let dir = DirView {
        client_sends: direction != "reverse",
        sent_bytes: uint(doc, &["sent_bytes"]),
        sent_bps: num(doc, &["sender", "wire_bits_per_second"]),
        received_bytes: uint(doc, &["delivered_bytes"]),
        received_bps: num(doc, &["goodput_bits_per_second"]),
        seconds,
        retransmits: None,
        udp: None,
    };
    Throughput {
        direction,
        target_bitrate: uint(doc, &["target_bits_per_second"]),
        tcp_rtt_ms: num(doc, &["path", "rtt_ms"]),
        cpu_client: cpu(doc.get("cpu_local")),
        cpu_server: cpu(doc.get("cpu_remote")),
        partial: doc.get("complete").and_then(Value::as_bool) != Some(true),
        error: text(doc, &["error"]),
        feedback: Some(FeedbackView {
            mode: text(doc, &["feedback"]).unwrap_or_else(|| "unrestricted".into()),
            messages: uint(doc, &["receiver", "feedback_sent"]),
            rounds: uint(doc, &["sender", "feedback_rounds"]),
        }),
        ..Throughput::one_direction(&label(doc), dir)
    }
}

/// The protocol column's name: `CODED` or `ARQ` (the document's `scheme`; older documents
/// have none and were coded), with `restricted` feedback named, since it changes the figures.
fn label(doc: &Value) -> String {
    let scheme = match text(doc, &["scheme"]).as_deref() {
        Some("arq") => "ARQ",
        _ => "CODED",
    };
    match text(doc, &["feedback"]).as_deref() {
        Some("restricted") => format!("{scheme} (restricted feedback)"),
        _ => scheme.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_mode_and_counts_are_read() {
        let doc = serde_json::json!({"protocol": "coded", "complete": true,
            "feedback": "restricted", "receiver": {"feedback_sent": 480},
            "sender": {"feedback_rounds": 31}});
        let f = throughput(&doc).feedback;
        assert_eq!(
            f,
            Some(FeedbackView {
                mode: "restricted".into(),
                messages: Some(480),
                rounds: Some(31)
            })
        );
    }

    #[test]
    fn an_incomplete_transfer_is_partial_and_shows_its_shortfall() {
        let doc = serde_json::json!({"protocol": "coded", "direction": "reverse",
            "complete": false, "delivered_bytes": 500, "sent_bytes": 1000,
            "error": "the coded transfer ended before every block was delivered"});
        let t = throughput(&doc);
        assert!(t.partial);
        assert!(!t.directions[0].client_sends);
        assert_eq!(t.delivered_percent(), Some(50.0));
        assert!(t.error.is_some());
    }
}
