//! `sonde stress -u`: the UDP flows' flags checked and turned into a run, and when such a run
//! counts as a failure.
//!
//! UDP promises no delivery, so loss alone does not fail the run (it is reported, and a
//! reply cap is named when the client can tell); what does: a send refused by the local host
//! or answered with port unreachable, echo replies that came back changed or that were not
//! ours, no reply at all from a service that should answer, and replies larger than their
//! request (the device amplifies: a reflector for spoofed requests).

use crate::flags::stress::StressArgs;
use sonde_live::Sink;
use sonde_stats::stress::model::{StressEvent, StressMode, StressSummary};
use sonde_stats::stress::udp::UdpSummary;
use sonde_stress::client::udp::{self, probe, UdpStressConfig, MAX_DATAGRAM};
use sonde_stress::client::StressConfig;
use std::sync::atomic::AtomicBool;

/// Bytes per datagram unless -l says otherwise: RFC 864's largest chargen reply.
pub const DEFAULT_DATAGRAM: u64 = 512;
/// Offered rate unless -b says otherwise (iperf3's UDP default).
pub const DEFAULT_RATE: u64 = 1_000_000;

/// What clap cannot check about -u.
pub fn check(a: &StressArgs) -> Result<(), String> {
    let len = a.length.unwrap_or(DEFAULT_DATAGRAM);
    if len > MAX_DATAGRAM as u64 {
        return Err(format!("-l with -u must be at most {MAX_DATAGRAM} bytes"));
    }
    if a.echo && len < probe::LEN as u64 {
        return Err(format!(
            "-u --echo needs -l of at least {} bytes (the request's number and send time)",
            probe::LEN
        ));
    }
    if a.bitrate == Some(0) {
        return Err("-b must be more than 0".into());
    }
    Ok(())
}

/// Runs the flows, events to `emit`.
pub fn run(
    a: &StressArgs,
    tcp: &StressConfig,
    stop: &AtomicBool,
    emit: &mut dyn Sink<StressEvent>,
) -> Result<StressSummary, String> {
    udp::run(&config(a, tcp), stop, emit).map_err(|e| e.to_string())
}

/// The flows' run as the flags ask (-P flows; the ramp sets its own count).
pub fn config(a: &StressArgs, tcp: &StressConfig) -> UdpStressConfig {
    UdpStressConfig {
        addr: tcp.addr,
        remote: tcp.remote.clone(),
        mode: tcp.mode,
        flows: a.parallel,
        duration: a.time,
        interval: a.interval,
        datagram: usize::try_from(a.length.unwrap_or(DEFAULT_DATAGRAM)).unwrap_or(512),
        rate_bps: a.bitrate.unwrap_or(DEFAULT_RATE),
        drain: a.drain,
    }
}

/// Why a finished UDP run counts as a failure, if it does.
pub fn verdict(s: &StressSummary, u: &UdpSummary, mode: StressMode) -> Option<String> {
    let mut why = Vec::new();
    let not_open = s.connect.asked.saturating_sub(s.connect.connected);
    if not_open > 0 {
        why.push(format!("{not_open} sockets did not open"));
    }
    if u.send_errors > 0 {
        why.push(format!("{} sends failed", u.send_errors));
    }
    let errors = s.connections.iter().filter(|c| c.error.is_some()).count();
    if errors > 0 {
        why.push(format!("{errors} flows saw a receive error"));
    }
    if s.echo_mismatched_bytes > 0 {
        why.push(format!(
            "{} echoed bytes differed or were not ours",
            s.echo_mismatched_bytes
        ));
    }
    if u.oversized_replies > 0 {
        why.push(format!(
            "{} replies were larger than their request (up to {} bytes for {}: amplification)",
            u.oversized_replies, u.largest_reply_bytes, u.datagram_bytes
        ));
    }
    if mode.receives() && u.datagrams_sent > 0 && u.datagrams_received == 0 {
        why.push("no reply came back".into());
    }
    if s.partial {
        why.push("interrupted".into());
    }
    (!why.is_empty()).then(|| why.join(", "))
}
