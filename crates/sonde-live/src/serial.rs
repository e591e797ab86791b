//! `sonde serial` output: one row per block size (bytes/s, blocks/s, retries, errors, time,
//! hash check) as a table or one JSON document, and the `--serve` side's line per transfer.
//!
//! The rows are plain data filled by the binary from the transfer's counters, so this crate
//! does not depend on the protocol's types; the document is [`sonde_schema::serial`]'s model.

use serde_json::Value;
use sonde_schema::serial as schema;

/// One transfer (one block size).
#[derive(Debug, Clone, Default)]
pub struct SerialRow {
    pub block: usize,
    /// File bytes acknowledged.
    pub bytes: u64,
    /// Blocks acknowledged, of `blocks_total`.
    pub blocks: u32,
    pub blocks_total: u32,
    /// Bytes written to the line, framing and resends included.
    pub wire_bytes: u64,
    /// From the first byte written to the final acknowledgement (or the failure).
    pub seconds: f64,
    pub retries: u32,
    pub timeouts: u32,
    /// Broken frames the far end saw (its `Nak`s; in its final count when it sent one).
    pub crc_errors_far: u32,
    /// Broken frames this side received.
    pub crc_errors_here: u32,
    /// Blocks the far end got twice (a lost acknowledgement), acknowledged not delivered.
    pub duplicates: Option<u32>,
    /// Length and SHA-256 matched at the far end (`None`: the transfer did not end).
    pub hash_ok: Option<bool>,
    pub error: Option<String>,
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct SerialRun<'a> {
    pub device: &'a str,
    pub baud: u32,
    /// "serve" (a `sonde serial --serve` far end) or "echo" (`--loopback`).
    pub far_end: &'a str,
    pub file: &'a str,
    pub file_bytes: u64,
    pub sha256: &'a str,
    pub retries: u32,
    pub timeout_ms: u64,
    pub rows: &'a [SerialRow],
    /// Ctrl-C ended the run; the last row is the transfer it stopped.
    pub interrupted: bool,
}

fn per_sec(n: f64, s: f64) -> f64 {
    if s > 0.0 {
        n / s
    } else {
        0.0
    }
}

fn hash_word(r: &SerialRow) -> &'static str {
    match (r.hash_ok, &r.error) {
        (Some(true), _) => "ok",
        (Some(false), _) => "MISMATCH",
        (None, Some(_)) => "failed",
        (None, None) => "stopped",
    }
}

/// The table: a header line, a row per block size.
pub fn lines(run: &SerialRun<'_>) -> Vec<String> {
    let far = if run.far_end == "echo" {
        "an echoing device (--loopback)"
    } else {
        "sonde serial --serve"
    };
    let mut out = vec![
        format!(
            "sonde serial: {} at {} baud, far end {}; {} ({} bytes, sha256 {}); timeout {} ms, {} retries",
            run.device, run.baud, far, run.file, run.file_bytes, run.sha256, run.timeout_ms, run.retries
        ),
        format!(
            "{:>6} {:>9} {:>12} {:>10} {:>9} {:>8} {:>8} {:>7} {:>5} {:>9}",
            "block", "time s", "bytes/s", "blocks/s", "blocks", "retries", "timeouts", "CRC f/h", "dup", "hash"
        ),
    ];
    for r in run.rows {
        out.push(format!(
            "{:>6} {:>9.3} {:>12.1} {:>10.1} {:>9} {:>8} {:>8} {:>7} {:>5} {:>9}",
            r.block,
            r.seconds,
            per_sec(r.bytes as f64, r.seconds),
            per_sec(f64::from(r.blocks), r.seconds),
            format!("{}/{}", r.blocks, r.blocks_total),
            r.retries,
            r.timeouts,
            format!("{}/{}", r.crc_errors_far, r.crc_errors_here),
            r.duplicates.map_or_else(|| "-".into(), |d| d.to_string()),
            hash_word(r),
        ));
    }
    // A failed transfer's error is said once, on standard error, by the command (the row
    // says "failed"); the document carries it (`transfers[].error`, the envelope's `error`).
    out
}

/// The `-J` document: the [`sonde_schema::serial`] model, as JSON.
pub fn document(run: &SerialRun<'_>) -> Value {
    let transfers = run
        .rows
        .iter()
        .map(|r| schema::SerialTransfer {
            block: r.block as u64,
            seconds: r.seconds,
            bytes: r.bytes,
            bytes_per_second: per_sec(r.bytes as f64, r.seconds),
            blocks: r.blocks,
            blocks_total: r.blocks_total,
            blocks_per_second: per_sec(f64::from(r.blocks), r.seconds),
            wire_bytes: r.wire_bytes,
            retries: r.retries,
            timeouts: r.timeouts,
            crc_errors_far: r.crc_errors_far,
            crc_errors_here: r.crc_errors_here,
            duplicates: r.duplicates,
            hash_ok: r.hash_ok,
            error: r.error.clone(),
        })
        .collect();
    let error = run.rows.iter().find_map(|r| r.error.as_deref());
    // Stopped, or a transfer that did not end (a length or hash mismatch did end it).
    let partial = run.interrupted || run.rows.iter().any(|r| r.hash_ok.is_none());
    sonde_schema::to_value(&schema::SerialDocument {
        device: Some(run.device.to_owned()),
        baud: Some(run.baud),
        far_end: Some(run.far_end.to_owned()),
        file: Some(run.file.to_owned()),
        file_bytes: run.file_bytes,
        sha256: Some(run.sha256.to_owned()),
        retries: run.retries,
        timeout_ms: run.timeout_ms,
        interrupted: run.interrupted,
        transfers,
        envelope: sonde_schema::Envelope::new("serial", partial, error),
    })
}

/// The `--serve` side's line for one finished transfer.
#[allow(clippy::too_many_arguments)]
pub fn served_line(
    name: &str,
    bytes: u64,
    block: u16,
    blocks: u32,
    verdict: &str,
    crc_errors: u32,
    duplicates: u32,
    stored: Option<&str>,
) -> String {
    let stored = stored.map_or_else(String::new, |p| format!(", stored as {p}"));
    format!(
        "received {name:?}: {bytes} bytes in {blocks} blocks of {block}, {crc_errors} CRC errors, {duplicates} duplicates, {verdict}{stored}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_words_follow_the_counters() {
        let rows = [
            SerialRow {
                block: 8,
                bytes: 1000,
                blocks: 125,
                blocks_total: 125,
                seconds: 0.5,
                hash_ok: Some(true),
                duplicates: Some(0),
                ..SerialRow::default()
            },
            SerialRow {
                block: 16,
                bytes: 48,
                blocks: 3,
                blocks_total: 63,
                seconds: 1.0,
                error: Some("block 4 was not acknowledged".into()),
                ..SerialRow::default()
            },
        ];
        let run = SerialRun {
            device: "/dev/ttyX",
            baud: 115200,
            far_end: "serve",
            file: "f",
            file_bytes: 1000,
            sha256: "00",
            retries: 3,
            timeout_ms: 500,
            rows: &rows,
            interrupted: false,
        };
        let l = lines(&run);
        assert!(l[2].contains("2000.0") && l[2].contains("250.0") && l[2].ends_with("ok"));
        assert!(l[3].contains("3/63") && l[3].ends_with("failed"));
        assert_eq!(l.len(), 4, "the error is the command's to say, once: {l:?}");
        let d = document(&run);
        crate::snapshot::check("serial_1", &d);
        assert_eq!(d["kind"], "serial");
        assert_eq!(d["partial"], true);
        assert_eq!(d["error"], "block 4 was not acknowledged");
        assert_eq!(d["transfers"][0]["bytes_per_second"], 2000.0);
        assert_eq!(d["transfers"][1]["hash_ok"], Value::Null);
        // Key for key what the document always held, and the envelope's three.
        let keys = |v: &Value| -> Vec<String> {
            v.as_object()
                .map_or_else(Vec::new, |o| o.keys().cloned().collect())
        };
        let mut top = vec![
            "baud",
            "device",
            "error",
            "far_end",
            "file",
            "file_bytes",
            "interrupted",
            "kind",
            "partial",
            "retries",
            "sha256",
            "timeout_ms",
            "transfers",
        ];
        top.sort_unstable();
        assert_eq!(keys(&d), top);
        let mut row = vec![
            "block",
            "seconds",
            "bytes",
            "bytes_per_second",
            "blocks",
            "blocks_total",
            "blocks_per_second",
            "wire_bytes",
            "retries",
            "timeouts",
            "crc_errors_far",
            "crc_errors_here",
            "duplicates",
            "hash_ok",
            "error",
        ];
        row.sort_unstable();
        assert_eq!(keys(&d["transfers"][0]), row);
        assert_eq!(d["transfers"][0]["duplicates"], 0);
        assert_eq!(d["transfers"][1]["duplicates"], Value::Null);
    }
}
