//! `sonde serial -J` documents: a file sent over a serial line once per block size. This
//! module reads them through their model ([`sonde_schema::serial`]); the tables and the
//! speed-against-block-size chart are [`crate::serial_report`]'s.

use serde::Serialize;
use serde_json::Value;

use sonde_schema::serial::SerialDocument;

use crate::json::text;

/// One transfer as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransferRow {
    pub block: u64,
    pub bytes: u64,
    pub seconds: Option<f64>,
    pub bytes_per_second: Option<f64>,
    pub retries: u32,
    pub timeouts: u32,
    pub crc_errors_far: u32,
    pub crc_errors_here: u32,
    pub hash_ok: Option<bool>,
    pub error: Option<String>,
}

/// A serial run as the report uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SerialRun {
    pub device: Option<String>,
    pub baud: Option<u32>,
    /// "serve" or "echo".
    pub far_end: Option<String>,
    pub file_bytes: u64,
    pub transfers: Vec<TransferRow>,
    pub partial: bool,
    pub error: Option<String>,
}

impl SerialRun {
    /// "serial, DEVICE to serve" (the device this end wrote to, and its far end): what tells
    /// one direction's document from the other's.
    pub fn label(&self) -> String {
        let mut l = String::from("serial");
        if let Some(d) = &self.device {
            l.push_str(&format!(", {d}"));
        }
        if let Some(f) = &self.far_end {
            l.push_str(&format!(" to {f}"));
        }
        l
    }

    /// Seconds the transfers took.
    pub fn seconds(&self) -> Option<f64> {
        Some(self.transfers.iter().filter_map(|t| t.seconds).sum::<f64>()).filter(|s| *s > 0.0)
    }
}

/// Whether `doc` is a serial document (its kind).
pub fn is_serial(doc: &Value) -> bool {
    text(doc, &["kind"]).as_deref() == Some("serial")
}

/// Reads a serial document; one that does not fit the model is an error naming the kind and
/// the field.
pub fn read(doc: &Value) -> Result<SerialRun, String> {
    let doc: SerialDocument = crate::json::model("serial", doc)?;
    let finite = |f: f64| Some(f).filter(|f| f.is_finite());
    Ok(SerialRun {
        device: doc.device,
        baud: doc.baud,
        far_end: doc.far_end,
        file_bytes: doc.file_bytes,
        transfers: doc
            .transfers
            .into_iter()
            .map(|t| TransferRow {
                block: t.block,
                bytes: t.bytes,
                seconds: finite(t.seconds),
                bytes_per_second: finite(t.bytes_per_second),
                retries: t.retries,
                timeouts: t.timeouts,
                crc_errors_far: t.crc_errors_far,
                crc_errors_here: t.crc_errors_here,
                hash_ok: t.hash_ok,
                error: t.error,
            })
            .collect(),
        partial: doc.envelope.partial,
        error: doc.envelope.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transfer(block: u64, bps: f64) -> Value {
        json!({"block": block, "seconds": 0.5, "bytes": 1000, "bytes_per_second": bps,
            "blocks": 10, "blocks_total": 10, "blocks_per_second": 20.0, "wire_bytes": 1200,
            "retries": 2, "timeouts": 1, "crc_errors_far": 1, "crc_errors_here": 0,
            "duplicates": 0, "hash_ok": true, "error": null})
    }

    #[test]
    fn a_serial_document_reads_as_its_transfers() {
        let doc = json!({"kind": "serial", "partial": false, "error": null,
            "device": "/dev/ttyUSB0", "baud": 115200, "far_end": "serve", "file_bytes": 1000,
            "transfers": [transfer(8, 2000.0), transfer(256, 9000.0)]});
        let r = read(&doc).unwrap();
        assert_eq!(r.label(), "serial, /dev/ttyUSB0 to serve");
        assert_eq!(r.transfers.len(), 2);
        assert_eq!(r.transfers[1].bytes_per_second, Some(9000.0));
        assert_eq!((r.transfers[0].retries, r.transfers[0].timeouts), (2, 1));
        assert_eq!(r.seconds(), Some(1.0));
        assert!(is_serial(&doc) && !is_serial(&json!({"kind": "btc"})));
    }

    #[test]
    fn a_transfer_without_its_retries_is_an_error_naming_the_kind() {
        let mut t = transfer(8, 1.0);
        if let Some(o) = t.as_object_mut() {
            o.remove("retries");
        }
        let e = read(&json!({"kind": "serial", "transfers": [t]})).unwrap_err();
        assert!(e.contains("serial") && e.contains("retries"), "{e}");
    }
}
