//! `sonde server`: binds, prints where it listens, serves until Ctrl-C (or one test with -1).

use super::{daemon, exit};
use crate::cli::ServerArgs;
use crate::output;
use sonde_runtime::server::source_limit::{Rate, SourceLimits};
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;
use std::time::Duration;

/// Runs the server command. `arm` installs the Ctrl-C / SIGTERM handler: after detaching
/// with `-D` (a fork keeps no threads).
pub fn run(mut a: ServerArgs, interrupt: Arc<AtomicBool>, arm: &dyn Fn()) -> i32 {
    if a.daemon {
        a.output.logfile = a.output.logfile.as_deref().map(daemon::absolute);
        a.pidfile = a.pidfile.as_deref().map(daemon::absolute);
    }
    if a.no_gso {
        sonde_runtime::streams::udp::set_gso(false);
    }
    if let Some(core) = a.affinity {
        // Every thread the server starts from here on inherits the mask.
        if let Err(e) = sonde_platform::affinity::pin_current_thread(core as usize) {
            eprintln!("sonde: error - cannot pin to CPU core {core} (-A): {e}");
            return exit::FAILED;
        }
    }
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let auth = match super::auth::server(&a.auth) {
        Ok(x) => x,
        Err(e) => return super::auth::unusable_file(&e),
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
        rcv_timeout: Some(a.rcv_timeout),
        mptcp: a.mptcp,
        idle_timeout: a.idle_timeout.map(|s| Duration::from_secs(u64::from(s))),
        source_limits: SourceLimits {
            connections: a.max_conn_rate.map(Rate::per_second),
            tests: a.max_test_rate.map(Rate::per_minute),
            probes: a.max_probe_rate.map(Rate::per_second),
            sessions: (a.max_sessions_per_source > 0).then_some(a.max_sessions_per_source as usize),
        },
        auth,
    };
    let oa = a.output.clone();
    let sink_out = out.clone();
    let open = Arc::new(AtomicUsize::new(0));
    // While several tests run at once, each table line names its client.
    let sinks: SinkFactory = Arc::new(move |peer: &str| {
        let prefix = output::LinePrefix {
            client: Some(output::ClientLabel::new(peer, &open)),
            ..output::LinePrefix::of(&oa)
        };
        let counted = output::OpenOutput::new(&open);
        let mut emit =
            output::event_fn(output::reporter_with_prefix(&oa, sink_out.clone(), prefix));
        Box::new(move |ev| {
            let _open = &counted;
            emit(ev)
        })
    });
    let log = Arc::new(|msg: &str| eprintln!("sonde server: {msg}"));
    // Every idle or slow connection holds a descriptor until it is identified or times out.
    sonde_stress::os::raise_nofile_limit();
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
    if a.daemon {
        if let Err(e) = detach_to(a.output.logfile.as_deref()) {
            eprintln!("sonde: error - cannot run as a daemon: {e}");
            return exit::FAILED;
        }
    }
    let _pidfile = match a.pidfile.as_deref().map(daemon::PidFile::write).transpose() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sonde: error - cannot write the pid file: {e}");
            return exit::FAILED;
        }
    };
    arm();
    match server.run() {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}

/// Detaches (`-D`); with a log file, the server's own messages (standard error) go there too.
fn detach_to(logfile: Option<&std::path::Path>) -> std::io::Result<()> {
    daemon::detach()?;
    if let Some(path) = logfile {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new().append(true).open(path)?;
        // SAFETY: dup2 onto standard error of a file this function keeps open until then.
        if unsafe { libc::dup2(f.as_raw_fd(), libc::STDERR_FILENO) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
