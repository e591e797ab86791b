//! The end figures of the stress shapes that are tables rather than charts: a run's summary
//! (each connection's totals and how it closed, and the run's sums), a `--storm` (attempts,
//! accepted, failures by kind, connections per second, connect times) and an `--overload`
//! (how many connections the device held, how it refused the next, how they closed, how
//! long until it accepted again).

use serde::Serialize;
use serde_json::Value;

use crate::result::{items, num, text, uint};

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

/// A `--storm`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StormEnd {
    pub seconds: Option<f64>,
    pub concurrency: Option<u64>,
    pub attempts: Option<u64>,
    pub accepted: Option<u64>,
    pub refused: Option<u64>,
    pub timed_out: Option<u64>,
    pub failed: Option<u64>,
    pub accepted_per_second: Option<f64>,
    pub connect_ms: [Option<f64>; 3],
    pub partial: bool,
}

/// An `--overload`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverloadEnd {
    pub attempted: Option<u64>,
    pub held: Option<u64>,
    pub dropped_after_accept: Option<u64>,
    /// reset, timeout, other or none.
    pub refusal: Option<String>,
    pub first_error: Option<String>,
    pub held_seconds: Option<f64>,
    pub closed_clean: Option<u64>,
    pub closed_reset: Option<u64>,
    pub closed_timeout: Option<u64>,
    /// None: no connection was accepted again within the wait.
    pub recovery_seconds: Option<f64>,
    pub partial: bool,
}

fn partial(v: &Value) -> bool {
    v.get("partial").and_then(Value::as_bool).unwrap_or(false)
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

/// A storm document's `storm` section.
pub fn storm(doc: &Value) -> Option<StormEnd> {
    let s = doc.get("storm").filter(|s| s.is_object())?;
    let u = |k: &str| uint(s, &[k]);
    Some(StormEnd {
        seconds: num(s, &["seconds"]),
        concurrency: u("concurrency"),
        attempts: u("attempts"),
        accepted: u("accepted"),
        refused: u("refused"),
        timed_out: u("timed_out"),
        failed: u("failed"),
        accepted_per_second: num(s, &["accepted_per_second"]),
        connect_ms: [
            num(s, &["connect_ms_median"]),
            num(s, &["connect_ms_p99"]),
            num(s, &["connect_ms_max"]),
        ],
        partial: partial(s),
    })
}

/// An overload document's `overload` section.
pub fn overload(doc: &Value) -> Option<OverloadEnd> {
    let o = doc.get("overload").filter(|o| o.is_object())?;
    let u = |k: &str| uint(o, &[k]);
    Some(OverloadEnd {
        attempted: u("attempted"),
        held: u("held"),
        dropped_after_accept: u("dropped_after_accept"),
        refusal: text(o, &["refusal"]),
        first_error: text(o, &["first_error"]),
        held_seconds: num(o, &["held_seconds"]),
        closed_clean: u("closed_clean"),
        closed_reset: u("closed_reset"),
        closed_timeout: u("closed_timeout"),
        recovery_seconds: num(o, &["recovery_seconds"]),
        partial: partial(o),
    })
}

impl OverloadEnd {
    /// Every held connection closed cleanly and the device accepted again.
    pub fn healthy(&self) -> bool {
        !self.partial
            && self.closed_reset.unwrap_or(0) == 0
            && self.closed_timeout.unwrap_or(0) == 0
            && self.recovery_seconds.is_some()
    }
}
