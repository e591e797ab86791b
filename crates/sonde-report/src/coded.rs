//! Reading `sonde client --coded -J` documents into the report's throughput view, through
//! their model ([`sonde_schema::coded`]): a document without its delivered bytes is an error
//! naming the field, not a dash.
//!
//! A coded transfer has its own document shape (top-level `"protocol": "coded"`; no interval
//! reports, since the figures that matter are end-to-end: delivered bytes, reliability, repair).
//! The report compares it with TCP and UDP in one table, so it is read into the same
//! [`Throughput`] view: one direction whose received figures are the delivered bytes and the
//! goodput, whose sent figures are the bytes the sender had to deliver and its wire rate.
//! Reliability then reads as delivered / sent bytes, as for TCP.

use crate::view::{CpuView, DirView, FeedbackView, Throughput};
use serde_json::Value;
use sonde_schema::coded::{CodedCpu, CodedDocument};

/// Whether `doc` is a coded transfer's document.
pub fn is_coded(doc: &Value) -> bool {
    doc.get("protocol").and_then(Value::as_str) == Some("coded")
}

fn cpu(c: Option<CodedCpu>) -> Option<CpuView> {
    c.map(|c| CpuView {
        total: c.total,
        user: c.user,
        system: c.system,
    })
}

/// The throughput view of a coded document (see the module docs).
///
/// # Errors
/// The model's account of what did not fit, naming the kind and the field.
pub fn throughput(raw: &Value) -> Result<Throughput, String> {
    let doc: CodedDocument = crate::json::model("coded", raw)?;
    let label = label(&doc);
    let direction = doc.direction.unwrap_or_else(|| "upload".into());
    let dir = DirView {
        client_sends: direction != "reverse",
        sent_bytes: doc.sent_bytes,
        sent_bps: doc.sender.and_then(|s| s.wire_bits_per_second),
        received_bytes: Some(doc.delivered_bytes),
        received_bps: doc.goodput_bits_per_second,
        seconds: doc.seconds,
        retransmits: None,
        udp: None,
    };
    Ok(Throughput {
        direction,
        target_bitrate: doc.target_bits_per_second,
        tcp_rtt_ms: doc.path.and_then(|p| p.rtt_ms),
        cpu_client: cpu(doc.cpu_local),
        cpu_server: cpu(doc.cpu_remote),
        partial: !doc.complete,
        error: doc.envelope.error,
        feedback: Some(FeedbackView {
            mode: doc.feedback.unwrap_or_else(|| "unrestricted".into()),
            messages: doc.receiver.and_then(|r| r.feedback_sent),
            rounds: doc.sender.and_then(|s| s.feedback_rounds),
        }),
        ..Throughput::one_direction(&label, dir)
    })
}

/// The protocol column's name: `CODED` or `ARQ` (the document's `scheme`; older documents
/// have none and were coded), with `restricted` feedback named, since it changes the figures.
fn label(doc: &CodedDocument) -> String {
    let scheme = match doc.scheme.as_deref() {
        Some("arq") => "ARQ",
        _ => "CODED",
    };
    match doc.feedback.as_deref() {
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
            "delivered_bytes": 10, "feedback": "restricted",
            "receiver": {"feedback_sent": 480}, "sender": {"feedback_rounds": 31}});
        let f = throughput(&doc).map(|t| t.feedback);
        assert_eq!(
            f,
            Ok(Some(FeedbackView {
                mode: "restricted".into(),
                messages: Some(480),
                rounds: Some(31)
            }))
        );
    }

    #[test]
    fn an_incomplete_transfer_is_partial_and_shows_its_shortfall() {
        let doc = serde_json::json!({"protocol": "coded", "direction": "reverse",
            "complete": false, "delivered_bytes": 500, "sent_bytes": 1000,
            "error": "the coded transfer ended before every block was delivered"});
        let t = throughput(&doc).unwrap();
        assert!(t.partial);
        assert!(!t.directions[0].client_sends);
        assert_eq!(t.delivered_percent(), Some(50.0));
        assert!(t.error.is_some());
    }

    #[test]
    fn a_document_without_its_delivered_bytes_is_an_error_naming_the_field_not_a_dash() {
        let doc = serde_json::json!({"protocol": "coded", "complete": true, "sent_bytes": 1000});
        let e = throughput(&doc).unwrap_err();
        assert!(
            e.contains("coded") && e.contains("`delivered_bytes`"),
            "{e}"
        );
    }
}
