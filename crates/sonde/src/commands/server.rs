//! `sonde server`: binds, prints where it listens, serves until Ctrl-C (or one test with -1).

use super::exit;
use crate::cli::ServerArgs;
use crate::output;
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
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
    let cfg = ServerConfig {
        port: a.port,
        bind: a.bind,
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
    let where_ = a
        .bind
        .map(|b| b.to_string())
        .unwrap_or_else(|| "all addresses (IPv4 and IPv6)".into());
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
