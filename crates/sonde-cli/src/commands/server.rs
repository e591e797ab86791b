//! `sonde server`: binds, prints where it listens, serves until Ctrl-C (or one test with -1).

use super::{daemon, exit};
use crate::flags::{OutputArgs, ServerArgs};
use crate::output::{self, SharedOut};
use sonde_runtime::auth::ServerAuth;
use sonde_runtime::server::source_limit::{RateCap, SourceLimits};
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;
use std::time::Duration;

/// Runs the server command. `arm` installs the Ctrl-C / SIGTERM handler: after detaching
/// with `-D` (a fork keeps no threads).
pub fn run(mut a: ServerArgs, interrupt: Arc<AtomicBool>, arm: &dyn Fn()) -> i32 {
    if let Err(code) = prepare_process(&mut a) {
        return code;
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
    let bind = match bind_address(&a) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let cfg = config(&a, bind, auth);
    let sinks = sinks(&a.output, out);
    let log = Arc::new(|msg: &str| eprintln!("sonde server: {msg}"));
    // Every idle or slow connection holds a descriptor until it is identified or times out.
    sonde_stress::os::raise_nofile_limit();
    let bound = Server::bind(cfg, interrupt, sinks, log).and_then(|s| match a.iperf2 {
        Some(port) => s.with_iperf2(port),
        None => Ok(s),
    });
    let server = match bound {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    eprintln!(
        "sonde server listening on {}, port {} (TCP and UDP){}; Ctrl-C to stop",
        listening_on(&a),
        server.local_addr().map(|x| x.port()).unwrap_or(a.port),
        server
            .iperf2_addr()
            .map(|x| format!(", iperf 2 clients on port {} (TCP and UDP)", x.port()))
            .unwrap_or_default()
    );
    let _pidfile = match background(&a) {
        Ok(p) => p,
        Err(code) => return code,
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

/// This process's settings before the server starts: `-D`'s paths made absolute (the daemon
/// leaves the working directory), `--no-gso`, `-A`'s core. `Err` holds the exit code.
fn prepare_process(a: &mut ServerArgs) -> Result<(), i32> {
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
            return Err(exit::FAILED);
        }
    }
    Ok(())
}

/// The address to bind from `-B`, `-4` and `-6` (`None`: every address of both families).
///
/// # Errors
/// The usage message of `-B` of one family with the other's flag.
fn bind_address(a: &ServerArgs) -> Result<Option<IpAddr>, String> {
    match (a.bind, a.ipv4, a.ipv6) {
        (Some(IpAddr::V6(b)), true, _) => {
            Err(format!("-4 asks for IPv4, but -B {b} is an IPv6 address"))
        }
        (Some(IpAddr::V4(b)), _, true) => {
            Err(format!("-6 asks for IPv6, but -B {b} is an IPv4 address"))
        }
        (None, true, _) => Ok(Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED))),
        (b, _, _) => Ok(b),
    }
}

/// The server's configuration from its flags.
fn config(a: &ServerArgs, bind: Option<IpAddr>, auth: ServerAuth) -> ServerConfig {
    ServerConfig {
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
            connections: a.max_conn_rate.map(RateCap::per_second),
            tests: a.max_test_rate.map(RateCap::per_minute),
            probes: a.max_probe_rate.map(RateCap::per_second),
            sessions: (a.max_sessions_per_source > 0).then_some(a.max_sessions_per_source as usize),
        },
        auth,
    }
}

/// A reporter per test, all writing to `out`. While several tests run at once, each table
/// line names its client.
fn sinks(o: &OutputArgs, out: SharedOut) -> SinkFactory {
    let oa = o.clone();
    let open = Arc::new(AtomicUsize::new(0));
    Arc::new(move |peer: &str| {
        let prefix = output::LinePrefix {
            client: Some(output::ClientLabel::new(peer, &open)),
            ..output::LinePrefix::of(&oa)
        };
        let counted = output::OpenOutput::new(&open);
        output::test_sink(
            output::reporter_with_prefix(&oa, out.clone(), prefix),
            counted,
        )
    })
}

/// Where the server listens, as its first line says it.
fn listening_on(a: &ServerArgs) -> String {
    match (a.bind, a.ipv4, a.ipv6) {
        (Some(b), _, _) => b.to_string(),
        (None, true, _) => "all IPv4 addresses".into(),
        (None, _, true) => "all IPv6 addresses".into(),
        _ => "all addresses (IPv4 and IPv6)".into(),
    }
}

/// `-D` (detach) and `-I` (the pid file, removed when the returned value is dropped). `Err`
/// holds the exit code.
fn background(a: &ServerArgs) -> Result<Option<daemon::PidFile>, i32> {
    if a.daemon {
        if let Err(e) = detach_to(a.output.logfile.as_deref()) {
            eprintln!("sonde: error - cannot run as a daemon: {e}");
            return Err(exit::FAILED);
        }
    }
    a.pidfile
        .as_deref()
        .map(daemon::PidFile::write)
        .transpose()
        .map_err(|e| {
            eprintln!("sonde: error - cannot write the pid file: {e}");
            exit::FAILED
        })
}

/// Detaches (`-D`); with a log file, the server's own messages (standard error) go there too.
fn detach_to(logfile: Option<&std::path::Path>) -> std::io::Result<()> {
    daemon::detach()?;
    if let Some(path) = logfile {
        let f = std::fs::OpenOptions::new().append(true).open(path)?;
        sonde_platform::detach::redirect(&f, &std::io::stderr())?;
    }
    Ok(())
}
