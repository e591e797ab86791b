//! `sonde services`: build the services' configuration from the flags, bind, serve until
//! Ctrl-C, then print what was served.

use super::exit;
use crate::flags::stress::ServicesArgs;
use crate::output::outln;
use sonde_stress::services::{Service, Services, ServicesConfig};
use std::sync::atomic::AtomicBool;

/// The (service, port) pairs the flags ask for.
fn ports(a: &ServicesArgs) -> Vec<(Service, u16)> {
    let base = a.port_base.unwrap_or(0);
    let pick = |explicit: Option<u16>, well_known: u16| explicit.unwrap_or(base + well_known);
    a.services
        .iter()
        .filter_map(|name| match name.as_str() {
            "echo" => Some((Service::Echo, pick(a.echo_port, 7))),
            "discard" => Some((Service::Discard, pick(a.discard_port, 9))),
            "chargen" => Some((Service::Chargen, pick(a.chargen_port, 19))),
            _ => None,
        })
        .collect()
}

/// Runs the services until `interrupt` is raised.
pub fn run(a: &ServicesArgs, interrupt: &AtomicBool) -> i32 {
    let fds = sonde_stress::os::raise_nofile_limit();
    // Leave room for the listeners and the process's own descriptors.
    let fd_room = usize::try_from(fds.saturating_sub(64)).unwrap_or(usize::MAX);
    let max_connections = (a.max_connections as usize).min(fd_room.max(1));
    let cfg = ServicesConfig {
        bind: a.bind,
        ports: ports(a),
        tcp: !a.udp_only,
        udp: !a.tcp_only,
        max_connections,
        // At most 16M (the flag's bound): a buffer's length on any host.
        echo_buffer: a.echo_buffer.as_len(),
        udp_rate: a.udp_rate,
        udp_sources: 65_536,
    };
    let services = match Services::bind(cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    for (service, proto, addr) in services.local_addrs() {
        outln!("Serving {} on {proto} {addr}", service.name());
    }
    if max_connections < a.max_connections as usize {
        outln!("At most {max_connections} TCP connections (the descriptor limit)");
    }
    match services.run(interrupt) {
        Ok(s) => {
            outln!(
                "Served: {} TCP connections accepted (at most {} at once), {} refused over the limit; {} UDP requests, {} replies, {} over the per-source rate",
                s.accepted,
                s.open_peak,
                s.refused_over_limit,
                s.udp_requests,
                s.udp_replies,
                s.udp_rate_limited
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}
