//! `sonde btc` output: a table row per session as it ends and the running statistics per
//! family at the end, or one JSON document (`sessions`, `summary` per family, `error`).

use serde_json::Value;
use sonde_schema::btc as schema;
use sonde_stats::btc::{BtcFailure, BtcSession, BtcStats};
use sonde_stats::units::{format_bitrate, format_bytes};

/// The table's header line.
pub fn header() -> String {
    format!(
        "{:>3}  {:<4}  {:>11}  {:>8}  {:>14}  {:>5}  {:>11}  {:>8}  {}",
        "#", "IP", "Size", "Time", "BTC (TCP)", "Retr", "Max cwnd", "RTT ms", "CC"
    )
}

/// One session's row.
pub fn row(s: &BtcSession) -> String {
    format!(
        "{:>3}  {:<4}  {:>11}  {:>7.2}s  {:>14}  {:>5}  {:>11}  {:>8}  {}",
        s.index,
        s.family.trim_start_matches("IP"),
        format_bytes(s.size),
        s.seconds,
        format_bitrate(s.goodput_bps),
        s.retransmits,
        s.max_cwnd.map_or_else(|| "-".into(), format_bytes),
        s.mean_rtt_us
            .map_or_else(|| "-".into(), |r| format!("{:.2}", f64::from(r) / 1000.0)),
        s.congestion.as_deref().unwrap_or("-")
    )
}

/// A failed session's row: its number, family and size, and that it failed (the reason is
/// said once, on standard error, by [`failures_line`]).
pub fn failed_row(f: &BtcFailure) -> String {
    format!(
        "{:>3}  {:<4}  {:>11}  failed",
        f.index,
        f.family.trim_start_matches("IP"),
        format_bytes(f.size)
    )
}

/// The failed sessions in one line, each distinct error once with the sessions it ended:
/// "2 of 6 BTC sessions failed: sessions 2, 4: connection refused".
pub fn failures_line(failed: &[BtcFailure], total: usize) -> String {
    let mut by_error: Vec<(&str, Vec<u32>)> = Vec::new();
    for f in failed {
        match by_error.iter_mut().find(|(e, _)| *e == f.error) {
            Some((_, ix)) => ix.push(f.index),
            None => by_error.push((&f.error, vec![f.index])),
        }
    }
    let parts: Vec<String> = by_error
        .iter()
        .map(|(e, ix)| {
            let list: Vec<String> = ix.iter().map(u32::to_string).collect();
            let word = if ix.len() == 1 { "session" } else { "sessions" };
            format!("{word} {}: {e}", list.join(", "))
        })
        .collect();
    format!(
        "{} of {total} BTC sessions failed: {}",
        failed.len(),
        parts.join("; ")
    )
}

/// The families in the order they first appear.
fn families(sessions: &[BtcSession]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for s in sessions {
        if !out.contains(&s.family.as_str()) {
            out.push(&s.family);
        }
    }
    out
}

/// The running statistics per family, as lines.
pub fn summary_lines(sessions: &[BtcSession]) -> Vec<String> {
    families(sessions)
        .into_iter()
        .filter_map(|f| {
            let st = BtcStats::of(sessions.iter().filter(|s| s.family == f))?;
            Some(format!(
                "{f} BTC over {} session{}: min {}  max {}  mean {}  median {}  stddev {} (TCP payload)",
                st.sessions,
                if st.sessions == 1 { "" } else { "s" },
                format_bitrate(st.min_bps),
                format_bitrate(st.max_bps),
                format_bitrate(st.mean_bps),
                format_bitrate(st.median_bps),
                format_bitrate(st.stddev_bps)
            ))
        })
        .collect()
}

/// What the run did, as the document records it.
#[derive(Debug, Clone, Copy)]
pub struct BtcRun<'a> {
    pub host: &'a str,
    /// The server sent (`-R`).
    pub reverse: bool,
    pub sessions: &'a [BtcSession],
    pub failed: &'a [BtcFailure],
    /// Ctrl-C stopped the run.
    pub interrupted: bool,
}

/// The whole run as one document: the [`sonde_schema::btc`] model, as JSON. Its `error` is
/// the first failed session's (with how many failed), `partial` says a session failed or
/// the run was stopped.
pub fn document(run: &BtcRun<'_>) -> Value {
    let sessions = run.sessions;
    let summary = families(sessions)
        .into_iter()
        .filter_map(|f| {
            let st = BtcStats::of(sessions.iter().filter(|s| s.family == f))?;
            Some((f.to_owned(), stats(&st)))
        })
        .collect();
    let error = match run.failed {
        [] => run.interrupted.then(|| "interrupted".to_owned()),
        [one] => Some(format!("session {} failed: {}", one.index, one.error)),
        [first, ..] => Some(format!(
            "{} sessions failed; the first, session {}: {}",
            run.failed.len(),
            first.index,
            first.error
        )),
    };
    sonde_schema::to_value(&schema::BtcDocument {
        host: Some(run.host.to_owned()),
        layer: Some("TCP payload".into()),
        reverse: run.reverse,
        sessions: sessions.to_vec(),
        failed: run.failed.to_vec(),
        summary,
        envelope: sonde_schema::Envelope::new("btc", error.is_some(), error.as_deref()),
    })
}

pub(crate) fn stats(st: &BtcStats) -> schema::BtcStats {
    schema::BtcStats {
        sessions: st.sessions as u64,
        min_bps: st.min_bps,
        max_bps: st.max_bps,
        mean_bps: st.mean_bps,
        median_bps: st.median_bps,
        stddev_bps: Some(st.stddev_bps),
        variance: Some(st.variance),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(index: u32, family: &str, bps: f64) -> BtcSession {
        BtcSession {
            index,
            family: family.into(),
            size: 6_000_000,
            bytes: 6_000_000,
            seconds: 0.5,
            goodput_bps: bps,
            retransmits: 2,
            max_cwnd: Some(1 << 20),
            mean_rtt_us: Some(1500),
            congestion: Some("cubic".into()),
            start_unix_s: 0.0,
        }
    }

    #[test]
    fn rows_line_up_under_the_header_and_each_family_gets_its_statistics() {
        let sessions = vec![s(1, "IPv4", 90e6), s(2, "IPv6", 80e6), s(3, "IPv4", 96e6)];
        let h = header();
        let r = row(&sessions[0]);
        assert_eq!(
            h.find("BTC (TCP)").map(|i| i + 9),
            r.find("Mbits/sec").map(|i| i + 9)
        );
        assert!(r.contains("cubic") && r.contains("1.50"), "{r}");
        let lines = summary_lines(&sessions);
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].starts_with("IPv4 BTC over 2 sessions")
                && lines[0].contains("mean 93.0 Mbits/sec"),
            "{lines:?}"
        );
        let mut run = BtcRun {
            host: "h",
            reverse: false,
            sessions: &sessions,
            failed: &[],
            interrupted: false,
        };
        let doc = document(&run);
        crate::snapshot::check("btc_1", &doc);
        assert_eq!(doc["summary"]["IPv6"]["sessions"], 1);
        // 90 and 96 Mbit/s: (3^2 + 3^2) / 1 = 18 (Mbit/s)^2.
        let sd = doc["summary"]["IPv4"]["stddev_bps"].as_f64().unwrap_or(0.0);
        assert!((sd - 18e12f64.sqrt()).abs() < 1.0, "{sd}");
        assert_eq!(doc["summary"]["IPv4"]["variance"], 18e12);
        assert_eq!(doc["sessions"].as_array().map(Vec::len), Some(3));
        assert_eq!(doc["partial"], false);
        let failed = [BtcFailure {
            index: 4,
            family: "IPv6".into(),
            size: 1,
            start_unix_s: 0.0,
            error: "connection refused".into(),
        }];
        run.failed = &failed;
        let doc = document(&run);
        crate::snapshot::check("btc_2", &doc);
        assert_eq!(doc["partial"], true);
        assert_eq!(doc["error"], "session 4 failed: connection refused");
        assert_eq!(doc["failed"][0]["family"], "IPv6");
        assert!(failed_row(&failed[0]).ends_with("failed"));
        let again = BtcFailure {
            index: 6,
            ..failed[0].clone()
        };
        let other = BtcFailure {
            index: 7,
            error: "reset".into(),
            ..failed[0].clone()
        };
        assert_eq!(
            failures_line(&[failed[0].clone(), again, other], 7),
            "3 of 7 BTC sessions failed: sessions 4, 6: connection refused; session 7: reset"
        );
    }
}
