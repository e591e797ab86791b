//! `sonde serial -J`: a file sent over a serial line once per block size, each transfer's
//! speed, retries and errors, and whether the far end's hash matched. One model shared by
//! the writer and the report, so the two cannot drift.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SerialDocument {
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub baud: Option<u32>,
    /// "serve" (a `sonde serial --serve` far end) or "echo" (`--loopback`).
    #[serde(default)]
    pub far_end: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub file_bytes: u64,
    #[serde(default)]
    pub sha256: Option<String>,
    /// Resends allowed per block.
    #[serde(default)]
    pub retries: u32,
    #[serde(default)]
    pub timeout_ms: u64,
    /// Ctrl-C ended the run; the last transfer is the one it stopped.
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default)]
    pub transfers: Vec<SerialTransfer>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// One transfer (one block size). The figures a report shows are required: a transfer
/// without one is refused, never read as a zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SerialTransfer {
    pub block: u64,
    pub seconds: f64,
    /// File bytes acknowledged.
    pub bytes: u64,
    pub bytes_per_second: f64,
    #[serde(default)]
    pub blocks: u32,
    #[serde(default)]
    pub blocks_total: u32,
    #[serde(default)]
    pub blocks_per_second: f64,
    /// Bytes written to the line, framing and resends included.
    #[serde(default)]
    pub wire_bytes: u64,
    pub retries: u32,
    #[serde(default)]
    pub timeouts: u32,
    /// Broken frames the far end saw, and this side received.
    pub crc_errors_far: u32,
    pub crc_errors_here: u32,
    #[serde(default)]
    pub duplicates: Option<u32>,
    /// Length and SHA-256 matched at the far end (None: the transfer did not end).
    #[serde(default)]
    pub hash_ok: Option<bool>,
    #[serde(default)]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transfer() -> SerialTransfer {
        SerialTransfer {
            block: 8,
            seconds: 0.5,
            bytes: 1000,
            bytes_per_second: 2000.0,
            blocks: 125,
            blocks_total: 125,
            blocks_per_second: 250.0,
            wire_bytes: 1800,
            retries: 1,
            timeouts: 0,
            crc_errors_far: 1,
            crc_errors_here: 0,
            duplicates: Some(0),
            hash_ok: Some(true),
            error: None,
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = SerialDocument {
            device: Some("/dev/ttyX".into()),
            baud: Some(115_200),
            far_end: Some("serve".into()),
            file: Some("f".into()),
            file_bytes: 1000,
            sha256: Some("00".into()),
            retries: 3,
            timeout_ms: 500,
            interrupted: false,
            transfers: vec![transfer()],
            envelope: Envelope::new("serial", false, None),
        };
        let v = crate::to_value(&doc);
        assert_eq!(v["transfers"][0]["error"], serde_json::Value::Null);
        assert_eq!(v["kind"], "serial");
        let back: SerialDocument = crate::from_value("serial", v).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn a_transfer_without_its_speed_is_refused_not_read_as_zero() {
        let mut v = serde_json::to_value(transfer()).unwrap();
        if let Some(o) = v.as_object_mut() {
            o.remove("bytes_per_second");
        }
        let doc = serde_json::json!({"kind": "serial", "transfers": [v]});
        let e = crate::from_value::<SerialDocument>("serial", doc).unwrap_err();
        assert!(e.to_string().contains("bytes_per_second"), "{e}");
    }
}
