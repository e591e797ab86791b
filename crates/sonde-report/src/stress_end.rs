//! The end figures of the stress shapes that are tables rather than charts: a run's summary
//! (each connection's totals and how it closed, and the run's sums), a `--storm` (attempts,
//! accepted, failures by kind, connections per second, connect times) and an `--overload`
//! (how many connections the device held, how it refused the next, how they closed, how
//! long until it accepted again), each from its model in `sonde_schema::stress`.

use serde::Serialize;

use sonde_schema::stress::overload as so;
use sonde_schema::stress::run;
use sonde_schema::stress::storm::Storm;
use sonde_stats::stress::overload::{OverloadReport, Refusal};
use sonde_stats::stress::storm::StormReport;

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
    /// The share of counted intervals in which it moved nothing (absent in older documents).
    pub zero_share: Option<f64>,
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
    /// The largest zero share of any connection.
    pub zero_share_worst: Option<f64>,
    /// `--warmup` seconds left out of the rates and fairness (`None`: none).
    pub warmup_secs: Option<f64>,
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

fn finite(f: f64) -> Option<f64> {
    Some(f).filter(|f| f.is_finite())
}

/// A run's `end` section as the tables show it.
pub fn run_end(e: &run::End) -> RunEnd {
    let c = &e.connect;
    let udp = e.udp.as_ref().map(|u| UdpEnd {
        datagram_bytes: Some(u.datagram_bytes),
        offered_bps: finite(u.offered_bps),
        datagrams_sent: Some(u.datagrams_sent),
        datagrams_received: Some(u.datagrams_received),
        echo_lost: u.echo.as_ref().map(|e| e.lost),
        echo_duplicates: u.echo.as_ref().map(|e| e.duplicates),
        echo_reordered: u.echo.as_ref().map(|e| e.reordered),
        largest_reply_bytes: Some(u.largest_reply_bytes),
        oversized_replies: Some(u.oversized_replies),
    });
    RunEnd {
        connections: e
            .connections
            .iter()
            .map(|c| ConnectionEnd {
                id: u64::from(c.id),
                sent_bytes: Some(c.sent_bytes),
                received_bytes: Some(c.received_bytes),
                sent_bps: finite(c.sent_bps),
                received_bps: finite(c.received_bps),
                close: Some(c.close.clone()),
                error: c.error.clone(),
                zero_share: c.zero_share.and_then(finite),
            })
            .collect(),
        sent_bytes: Some(e.sent_bytes),
        received_bytes: Some(e.received_bytes),
        sent_bps: finite(e.sent_bps),
        received_bps: finite(e.received_bps),
        fairness_sent: e.fairness_sent.and_then(finite),
        fairness_received: e.fairness_received.and_then(finite),
        closed_clean: Some(u64::from(e.closed_clean)),
        closed_reset: Some(u64::from(e.closed_reset)),
        closed_timeout: Some(u64::from(e.closed_timeout)),
        failed_during_run: Some(u64::from(e.failed_during_run)),
        echo_mismatched_bytes: Some(e.echo_mismatched_bytes),
        connect: [c.asked, c.connected, c.refused, c.timed_out, c.other_failed]
            .map(|n| Some(u64::from(n))),
        connect_seconds: finite(c.seconds),
        udp,
        zero_share_worst: e.zero_share_worst.and_then(finite),
        warmup_secs: finite(e.warmup_secs).filter(|&w| w > 0.0),
    }
}

/// A storm document's `storm` section as the command's [`StormReport`].
pub fn storm(s: &Storm) -> StormReport {
    StormReport {
        seconds: s.seconds,
        concurrency: s.concurrency,
        attempts: s.attempts,
        accepted: s.accepted,
        refused: s.refused,
        timed_out: s.timed_out,
        failed: s.failed,
        accepted_per_second: s.accepted_per_second,
        connect_ms_median: s.connect_ms_median,
        connect_ms_p99: s.connect_ms_p99,
        connect_ms_max: s.connect_ms_max,
        partial: s.partial,
    }
}

/// An overload document's `overload` section as the command's [`OverloadReport`]: its
/// [`OverloadReport::healthy`] is the command's own rule for "came through cleanly".
pub fn overload(o: &so::Overload) -> OverloadReport {
    OverloadReport {
        attempted: o.attempted,
        held: o.held,
        dropped_after_accept: o.dropped_after_accept,
        refusal: match o.refusal {
            so::Refusal::Reset => Refusal::Reset,
            so::Refusal::Timeout => Refusal::Timeout,
            so::Refusal::Other => Refusal::Other,
            so::Refusal::None => Refusal::None,
        },
        first_error: o.first_error.clone(),
        held_seconds: o.held_seconds,
        closed_clean: o.closed_clean,
        closed_reset: o.closed_reset,
        closed_timeout: o.closed_timeout,
        recovery_seconds: o.recovery_seconds,
        partial: o.partial,
    }
}
