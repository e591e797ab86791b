//! The end figures of the stress shapes that are tables rather than charts: a run's summary
//! (each connection's totals and how it closed, and the run's sums), a `--storm` (attempts,
//! accepted, failures by kind, connections per second, connect times) and an `--overload`
//! (how many connections the device held, how it refused the next, how they closed, how
//! long until it accepted again).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use sonde_stats::stress::overload::OverloadReport;
use sonde_stats::stress::storm::StormReport;

use crate::json::{items, num, text, uint};

/// One connection's totals over a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionEnd {
    pub id: u64,
    pub sent_bytes: Option<u64>,
    pub received_bytes: Option<u64>,
    pub sent_bps: Option<f64>,
    pub received_bps: Option<f64>,
    /// clean, reset, timeout, ...
    pub close: Option<String>,
    pub error: Option<String>,
}

/// A run's end: per connection and overall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEnd {
    pub connections: Vec<ConnectionEnd>,
    pub sent_bytes: Option<u64>,
    pub received_bytes: Option<u64>,
    pub sent_bps: Option<f64>,
    pub received_bps: Option<f64>,
    pub fairness_sent: Option<f64>,
    pub fairness_received: Option<f64>,
    pub closed_clean: Option<u64>,
    pub closed_reset: Option<u64>,
    pub closed_timeout: Option<u64>,
    pub failed_during_run: Option<u64>,
    pub echo_mismatched_bytes: Option<u64>,
    /// asked, connected, refused, timed out, other failures.
    pub connect: [Option<u64>; 5],
    pub connect_seconds: Option<f64>,
    /// UDP flows: datagram bytes, offered bit/s, datagrams sent and received, echo lost.
    pub udp: Option<UdpEnd>,
}

/// A UDP run's end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UdpEnd {
    pub datagram_bytes: Option<u64>,
    pub offered_bps: Option<f64>,
    pub datagrams_sent: Option<u64>,
    pub datagrams_received: Option<u64>,
    pub echo_lost: Option<u64>,
    pub echo_duplicates: Option<u64>,
    pub echo_reordered: Option<u64>,
    /// The longest reply, and the replies longer than their request (amplification).
    pub largest_reply_bytes: Option<u64>,
    pub oversized_replies: Option<u64>,
}

/// A run's `end` section, when there is one.
pub fn run_end(doc: &Value) -> Option<RunEnd> {
    let e = doc.get("end").filter(|e| e.is_object())?;
    let c = |k: &str| uint(e, &["connect", k]);
    let udp = e.get("udp").filter(|u| u.is_object()).map(|u| UdpEnd {
        datagram_bytes: uint(u, &["datagram_bytes"]),
        offered_bps: num(u, &["offered_bps"]),
        datagrams_sent: uint(u, &["datagrams_sent"]),
        datagrams_received: uint(u, &["datagrams_received"]),
        echo_lost: uint(u, &["echo", "lost"]),
        echo_duplicates: uint(u, &["echo", "duplicates"]),
        echo_reordered: uint(u, &["echo", "reordered"]),
        largest_reply_bytes: uint(u, &["largest_reply_bytes"]),
        oversized_replies: uint(u, &["oversized_replies"]),
    });
    Some(RunEnd {
        connections: items(e, "connections")
            .filter_map(|c| {
                Some(ConnectionEnd {
                    id: uint(c, &["id"])?,
                    sent_bytes: uint(c, &["sent_bytes"]),
                    received_bytes: uint(c, &["received_bytes"]),
                    sent_bps: num(c, &["sent_bps"]),
                    received_bps: num(c, &["received_bps"]),
                    close: text(c, &["close"]),
                    error: text(c, &["error"]),
                })
            })
            .collect(),
        sent_bytes: uint(e, &["sent_bytes"]),
        received_bytes: uint(e, &["received_bytes"]),
        sent_bps: num(e, &["sent_bps"]),
        received_bps: num(e, &["received_bps"]),
        fairness_sent: num(e, &["fairness_sent"]),
        fairness_received: num(e, &["fairness_received"]),
        closed_clean: uint(e, &["closed_clean"]),
        closed_reset: uint(e, &["closed_reset"]),
        closed_timeout: uint(e, &["closed_timeout"]),
        failed_during_run: uint(e, &["failed_during_run"]),
        echo_mismatched_bytes: uint(e, &["echo_mismatched_bytes"]),
        connect: [
            c("asked"),
            c("connected"),
            c("refused"),
            c("timed_out"),
            c("other_failed"),
        ],
        connect_seconds: num(e, &["connect", "seconds"]),
        udp,
    })
}

/// A storm document's `storm` section: the command writes a [`StormReport`] as it is, so it is
/// read back as one (None without the section; an error when it is not one).
pub fn storm(doc: &Value) -> Option<Result<StormReport, String>> {
    section(doc, "storm")
}

/// An overload document's `overload` section, an [`OverloadReport`] (as for [`storm`]); its
/// [`OverloadReport::healthy`] is the command's own rule for "came through cleanly".
pub fn overload(doc: &Value) -> Option<Result<OverloadReport, String>> {
    section(doc, "overload")
}

fn section<'a, T: Deserialize<'a>>(doc: &'a Value, key: &str) -> Option<Result<T, String>> {
    let v = doc.get(key).filter(|v| v.is_object())?;
    Some(T::deserialize(v).map_err(|e| format!("its {key} section does not read: {e}")))
}
