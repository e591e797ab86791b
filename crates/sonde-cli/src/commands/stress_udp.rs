//! `sonde stress -u`: the UDP flows' flags checked and turned into a run configuration.
//!
//! When such a run counts as a failure is `sonde_stress::verdict`'s to say; what clap cannot
//! check about the flags (the datagram's size, the rate) is said here, before any socket.

use crate::flags::stress::StressArgs;
use sonde_stats::units::{Rate, Size};
use sonde_stress::client::udp::{probe, UdpStressConfig, MAX_DATAGRAM};
use sonde_stress::client::StressConfig;

/// Bytes per datagram unless -l says otherwise: RFC 864's largest chargen reply.
pub const DEFAULT_DATAGRAM: Size = Size::from_bytes(512);
/// Offered rate unless -b says otherwise (iperf3's UDP default).
pub const DEFAULT_RATE: Rate = Rate::from_bits_per_sec(1_000_000);

/// What clap cannot check about -u.
pub fn check(a: &StressArgs) -> Result<(), String> {
    let len = a.length.unwrap_or(DEFAULT_DATAGRAM).bytes();
    if len > MAX_DATAGRAM as u64 {
        return Err(format!("-l with -u must be at most {MAX_DATAGRAM} bytes"));
    }
    if a.echo && len < probe::LEN as u64 {
        return Err(format!(
            "-u --echo needs -l of at least {} bytes (the request's number and send time)",
            probe::LEN
        ));
    }
    if a.bitrate.is_some_and(Rate::is_unlimited) {
        return Err("-b must be more than 0".into());
    }
    Ok(())
}

/// The flows' run as the flags ask (-P flows; the ramp sets its own count), to the address
/// the TCP configuration resolved.
pub fn config(a: &StressArgs, tcp: &StressConfig) -> UdpStressConfig {
    UdpStressConfig {
        addr: tcp.addr,
        remote: tcp.remote.clone(),
        mode: tcp.mode,
        flows: a.parallel,
        duration: a.time,
        interval: a.interval,
        datagram: a.length.unwrap_or(DEFAULT_DATAGRAM).as_len(),
        rate: a.bitrate.unwrap_or(DEFAULT_RATE),
        drain: a.drain,
        warmup: a.warmup,
    }
}
