//! The serial report: each transfer's speed, retries and errors per block size as a table,
//! and one chart over the whole report of speed against block size, a series of markers per
//! serial document (one per direction when the two ends' documents are given). Above the
//! reader ([`crate::serial`]), as every renderer is above the model it shows.

use crate::fmt::opt;
use crate::model::Report;
use crate::result::ResultDoc;
use crate::serial::SerialRun;
use crate::svg::{Chart, Line, Style};
use crate::table::{Section, Table, DASH};

/// A row per block size: speed, time, retries, timeouts, CRC errors, the hash check.
pub fn sections(r: &SerialRun) -> Vec<Section> {
    let mut tb = Table::new(&[
        "Block",
        "Bytes",
        "Time",
        "Speed",
        "Retries",
        "Timeouts",
        "CRC errors far/here",
        "Hash",
        "Error",
    ]);
    for t in &r.transfers {
        tb.rows.push(vec![
            format!("{} B", t.block),
            t.bytes.to_string(),
            opt(t.seconds, |v| format!("{v:.3} s")),
            opt(t.bytes_per_second, |v| format!("{v:.1} B/s")),
            t.retries.to_string(),
            t.timeouts.to_string(),
            format!("{}/{}", t.crc_errors_far, t.crc_errors_here),
            match t.hash_ok {
                Some(true) => "ok".into(),
                Some(false) => "MISMATCH".into(),
                None => DASH.into(),
            },
            t.error.clone().unwrap_or_else(|| DASH.into()),
        ]);
    }
    let note = format!(
        "{} at {} baud; speed is file bytes acknowledged per second.",
        r.label(),
        r.baud.map_or_else(|| DASH.into(), |b| b.to_string())
    );
    vec![Section::new(
        "Serial transfers per block size",
        Some(note),
        tb,
    )]
}

/// Speed against block size, a series of markers per serial document; the block axis is
/// log2 when the sizes span a decade or more. None without serial documents.
pub fn speed_against_block(r: &Report) -> Option<Chart> {
    let runs: Vec<(&str, &SerialRun)> = r
        .tests
        .iter()
        .filter_map(|t| match &t.result {
            Some(ResultDoc::Serial(s)) => Some((t.id.as_str(), s.as_ref())),
            _ => None,
        })
        .collect();
    let blocks = || {
        runs.iter()
            .flat_map(|(_, s)| s.transfers.iter().map(|t| t.block))
    };
    let (lo, hi) = (blocks().min()?, blocks().max()?);
    let log = lo > 0 && hi >= lo.saturating_mul(10);
    let x = |b: u64| if log { (b as f64).log2() } else { b as f64 };
    let lines = runs
        .iter()
        .map(|(id, s)| Line {
            name: format!("{} ({id})", s.label()),
            points: s
                .transfers
                .iter()
                .filter_map(|t| Some((x(t.block), t.bytes_per_second?)))
                .collect(),
            style: Style::Markers,
        })
        .collect();
    let c = Chart {
        title: "Serial speed against block size".into(),
        x_label: if log {
            format!("block size (log2 of bytes: {} = {lo} B)", x(lo))
        } else {
            "block size (bytes)".into()
        },
        y_label: "Speed, file bytes".into(),
        y_unit: "B/s".into(),
        si: true,
        y_range: None,
        lines,
    };
    c.has_data().then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::read as read_doc;
    use serde_json::{json, Value};

    #[test]
    fn each_block_size_is_a_row_with_its_retries_and_errors() {
        let t = |block: u64, hash: Value, err: Value| {
            json!({"block": block, "seconds": 0.5, "bytes": 1000, "bytes_per_second": 2000.0,
                "retries": 3, "timeouts": 1, "crc_errors_far": 2, "crc_errors_here": 0,
                "hash_ok": hash, "error": err})
        };
        let doc = json!({"kind": "serial", "device": "/dev/ttyX", "baud": 9600,
            "far_end": "echo", "transfers": [t(8, json!(true), Value::Null),
            t(64, Value::Null, json!("block 4 was not acknowledged"))]});
        let Ok(ResultDoc::Serial(s)) = read_doc(&doc) else {
            panic!("not read as serial");
        };
        let sec = sections(&s);
        let rows = &sec[0].table.rows;
        assert_eq!(rows[0][..4], ["8 B", "1000", "0.500 s", "2000.0 B/s"]);
        assert_eq!(rows[0][4..8], ["3", "1", "2/0", "ok"]);
        assert_eq!(rows[1][8], "block 4 was not acknowledged");
        assert!(sec[0].note.as_deref().unwrap_or("").contains("9600 baud"));
    }
}
