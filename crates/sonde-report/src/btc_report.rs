//! The btc report: the goodput statistics per family, then the sessions. Above the reader
//! ([`crate::btc`]), as every renderer is above the model it shows.

use crate::btc::BtcRun;
use crate::fmt::{self, opt};
use crate::table::{count, Section, Table};

/// The statistics per family, then the sessions.
pub fn sections(r: &BtcRun) -> Vec<Section> {
    let mut stats = Table::new(&["Family", "Sessions", "Min", "Median", "Mean", "Max"]);
    for f in &r.summary {
        stats.rows.push(vec![
            f.family.clone(),
            count(f.sessions),
            opt(f.min_bps, fmt::rate),
            opt(f.median_bps, fmt::rate),
            opt(f.mean_bps, fmt::rate),
            opt(f.max_bps, fmt::rate),
        ]);
    }
    let mut sessions = Table::new(&["#", "Family", "Bytes", "Time", "BTC", "Retransmits"]);
    for s in &r.sessions {
        sessions.rows.push(vec![
            count(s.index),
            s.family.clone(),
            s.bytes
                .map_or_else(|| crate::table::DASH.into(), fmt::bytes),
            opt(s.seconds, |v| format!("{v:.2} s")),
            opt(s.goodput_bps, fmt::rate),
            count(s.retransmits),
        ]);
    }
    vec![
        Section::new(
            "BTC per family",
            Some("TCP payload at the receiver, per session (RFC 3148).".into()),
            stats,
        ),
        Section::new("BTC sessions", None, sessions),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{read as read_doc, ResultDoc};
    use serde_json::json;

    #[test]
    fn a_btc_document_reads_as_its_sessions_and_statistics() {
        let doc = json!({"kind": "btc", "partial": false, "error": null, "host": "h",
            "layer": "TCP payload",
            "sessions": [{"index": 1, "family": "IPv4", "size": 1000, "bytes": 1000,
                          "seconds": 0.5, "goodput_bps": 16000.0, "retransmits": 0}],
            "summary": {"IPv4": {"sessions": 1, "min_bps": 16000.0, "max_bps": 16000.0,
                                 "mean_bps": 16000.0, "median_bps": 16000.0}}});
        let Ok(ResultDoc::Btc(b)) = read_doc(&doc) else {
            panic!("not read as btc");
        };
        assert_eq!(b.label(), "btc, h");
        let s = sections(&b);
        assert_eq!(s[0].table.rows[0][0], "IPv4");
        assert_eq!(s[1].table.rows.len(), 1);
    }
}
