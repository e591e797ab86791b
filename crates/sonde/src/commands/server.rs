//! `sonde server`: binds, prints where it listens, serves until Ctrl-C (or one test with -1).

use super::exit;
use crate::cli::ServerArgs;
use crate::output;
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs the server command.
pub fn run(a: ServerArgs, interrupt: Arc<AtomicBool>) -> i32 {
    if a.no_gso {
        sonde_runtime::streams::udp::set_gso(false);
    }
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let bind = match (a.bind, a.ipv4, a.ipv6) {
        (Some(IpAddr::V6(b)), true, _) => {
            eprintln!("sonde: usage error - -4 asks for IPv4, but -B {b} is an IPv6 address");
            return exit::USAGE;
        }
        (Some(IpAddr::V4(b)), _, true) => {
            eprintln!("sonde: usage error - -6 asks for IPv6, but -B {b} is an IPv4 address");
            return exit::USAGE;
        }
        (None, true, _) => Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        (b, _, _) => b,
    };
    let cfg = ServerConfig {
        port: a.port,
        bind,
        ipv6_only: a.ipv6 && a.bind.is_none(),
        max_clients: a.max_clients.map(|m| m as usize),
        max_duration_secs: a.max_duration,
        max_bitrate: a.max_bitrate,
        one_off: a.one_off,
        interval_secs: a.interval,
    };
    let oa = a.output.clone();
    let sink_out = out.clone();
    let sinks: SinkFactory =
        Arc::new(move |_peer: &str| output::event_fn(output::reporter(&oa, sink_out.clone())));
    let log = Arc::new(|msg: &str| eprintln!("sonde server: {msg}"));
    let server = match Server::bind(cfg, interrupt, sinks, log) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    let where_ = match (a.bind, a.ipv4, a.ipv6) {
        (Some(b), _, _) => b.to_string(),
        (None, true, _) => "all IPv4 addresses".into(),
        (None, _, true) => "all IPv6 addresses".into(),
        _ => "all addresses (IPv4 and IPv6)".into(),
    };
    eprintln!(
        "sonde server listening on {where_}, port {} (TCP and UDP); Ctrl-C to stop",
        server.local_addr().map(|x| x.port()).unwrap_or(a.port)
    );
    match server.run() {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}
