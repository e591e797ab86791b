//! `sonde client --coded -J`: one coded (or ARQ) transfer's end-to-end figures. No interval
//! reports: what matters is what was delivered, how reliably, and what the repair cost.
//!
//! A coded run is a client's, so it carries the iperf3-shaped documents' envelope
//! ([`Iperf3Envelope`]: `kind` `"client"`, no `error` key when there is none). The figures
//! only the other end knows are null when its figures did not arrive (`sent_bytes`,
//! `sender`, `receiver`, ...). `delivered_bytes` is required: a document without it is
//! refused, never read as nothing delivered.

use serde::{Deserialize, Serialize};

use crate::throughput::Iperf3Envelope;

/// The whole document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodedDocument {
    /// Always `"coded"` (also for the ARQ baseline): what tells the kind apart.
    pub protocol: String,
    /// `"upload"` or `"reverse"`.
    #[serde(default)]
    pub direction: Option<String>,
    #[serde(default)]
    pub server: String,
    /// Every block decoded and the receiver said so.
    #[serde(default)]
    pub complete: bool,
    #[serde(default)]
    pub seconds: Option<f64>,
    pub delivered_bytes: u64,
    /// The bytes the sender had to deliver (null: its figures did not arrive).
    #[serde(default)]
    pub sent_bytes: Option<u64>,
    #[serde(default)]
    pub goodput_bits_per_second: Option<f64>,
    #[serde(default)]
    pub reliability_percent: Option<f64>,
    /// Delivered bytes that differed from the checked test data (null for a file upload,
    /// whose bytes only the digest checks).
    #[serde(default)]
    pub mismatched_bytes: Option<u64>,
    #[serde(default)]
    pub sender: Option<CodedSender>,
    #[serde(default)]
    pub receiver: Option<CodedReceiver>,
    /// The sender's last view of the path (sending end only).
    #[serde(default)]
    pub path: Option<CodedPath>,
    #[serde(default)]
    pub cpu_local: Option<CodedCpu>,
    #[serde(default)]
    pub cpu_remote: Option<CodedCpu>,
    /// `-b`.
    #[serde(default)]
    pub target_bits_per_second: Option<u64>,
    /// `"coded"` or `"arq"` (older documents have none: coded).
    #[serde(default)]
    pub scheme: Option<String>,
    /// `"unrestricted"` or `"restricted"` (older documents have none: unrestricted).
    #[serde(default)]
    pub feedback: Option<String>,
    /// The file sent or written (`--file`), null for sonde's test data.
    #[serde(default)]
    pub file: Option<String>,
    /// The receiver's SHA-256 equals the sender's (null: not compared).
    #[serde(default)]
    pub sha256_verified: Option<bool>,
    #[serde(flatten)]
    pub envelope: Iperf3Envelope,
}

/// The sender's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CodedSender {
    #[serde(default)]
    pub datagrams: u64,
    #[serde(default)]
    pub wire_bytes: u64,
    #[serde(default)]
    pub wire_bits_per_second: Option<f64>,
    #[serde(default)]
    pub blocks: u64,
    #[serde(default)]
    pub source_symbols: u64,
    #[serde(default)]
    pub proactive_repair: u64,
    #[serde(default)]
    pub feedback_repair: u64,
    /// Repair symbols over source symbols.
    #[serde(default)]
    pub repair_overhead: Option<f64>,
    #[serde(default)]
    pub feedback_rounds: Option<u64>,
}

/// The receiver's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CodedReceiver {
    #[serde(default)]
    pub datagrams: u64,
    #[serde(default)]
    pub useless_symbols: u64,
    #[serde(default)]
    pub rejected_datagrams: u64,
    #[serde(default)]
    pub feedback_sent: Option<u64>,
    #[serde(default)]
    pub blocks: u64,
    #[serde(default)]
    pub decode_delay_p50_ms: f64,
    #[serde(default)]
    pub decode_delay_p99_ms: f64,
}

/// The sender's last path view and its rate controller's reactions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CodedPath {
    #[serde(default)]
    pub rate_bits_per_second: f64,
    #[serde(default)]
    pub loss_fraction: f64,
    /// null: no RTT sample.
    #[serde(default)]
    pub rtt_ms: Option<f64>,
    #[serde(default)]
    pub rate_backoffs: Option<u64>,
    #[serde(default)]
    pub queue_competitions: Option<u64>,
}

/// One end's CPU use, percent of one core.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CodedCpu {
    pub total: f64,
    #[serde(default)]
    pub user: f64,
    #[serde(default)]
    pub system: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> CodedDocument {
        CodedDocument {
            protocol: "coded".into(),
            direction: Some("upload".into()),
            server: "10.0.0.2:5201".into(),
            complete: true,
            seconds: Some(2.0),
            delivered_bytes: 1000,
            sent_bytes: Some(1000),
            goodput_bits_per_second: Some(4000.0),
            reliability_percent: Some(100.0),
            mismatched_bytes: Some(0),
            sender: Some(CodedSender {
                datagrams: 3,
                wire_bytes: 1200,
                wire_bits_per_second: Some(4800.0),
                blocks: 1,
                source_symbols: 2,
                proactive_repair: 1,
                feedback_repair: 0,
                repair_overhead: Some(0.5),
                feedback_rounds: Some(0),
            }),
            receiver: None,
            path: Some(CodedPath {
                rate_bits_per_second: 1e8,
                loss_fraction: 0.01,
                rtt_ms: None,
                rate_backoffs: Some(1),
                queue_competitions: None,
            }),
            cpu_local: Some(CodedCpu {
                total: 2.0,
                user: 1.0,
                system: 1.0,
            }),
            cpu_remote: None,
            target_bits_per_second: Some(100_000_000),
            scheme: Some("coded".into()),
            feedback: Some("unrestricted".into()),
            file: None,
            sha256_verified: Some(true),
            envelope: Iperf3Envelope::new("client", false, None),
        }
    }

    #[test]
    fn a_document_reads_back_as_written_with_its_nulls_and_no_error_key() {
        let v = crate::to_value(&doc());
        assert!(v.get("error").is_none(), "{v}");
        assert_eq!(v["receiver"], serde_json::Value::Null);
        assert_eq!(v["path"]["rtt_ms"], serde_json::Value::Null);
        assert_eq!(v["kind"], "client");
        let back: CodedDocument = crate::from_value("coded", v).unwrap();
        assert_eq!(back, doc());
        let failed = CodedDocument {
            envelope: Iperf3Envelope::new("client", true, Some("timed out")),
            ..doc()
        };
        assert_eq!(crate::to_value(&failed)["error"], "timed out");
    }

    #[test]
    fn a_document_without_its_delivered_bytes_is_refused_naming_the_field() {
        let mut v = crate::to_value(&doc());
        v.as_object_mut().map(|o| o.remove("delivered_bytes"));
        let e = crate::from_value::<CodedDocument>("coded", v).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("coded") && e.contains("delivered_bytes"), "{e}");
    }
}
