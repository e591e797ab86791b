//! `sonde demo`: the README's first command.
//!
//! As root it runs the built-in `quick` lab scenario (client - router - server over a
//! 100 Mbit/s, 10 ms link at 0 and 5 % loss; TCP cubic and bbr, UDP, latency), every test
//! shortened to `-t`, and writes the lab's report to `--out`: that shows what sonde is for.
//! Without root (network namespaces need it) it says so and falls back to an in-process server
//! on a free loopback port and four short tests against it (TCP and UDP, upload and reverse),
//! each printed as a table, then the report of those results.

use super::exit;
use crate::output::{self, LineOut};
use sonde_doc::{Format, Inputs};
use sonde_proto::message::TestParams;
use sonde_report::{JsonReporter, Sink, TableReporter};
use sonde_runtime::client::{self, ClientConfig, Family};
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
use sonde_stats::model::{Direction, Event, Protocol};
use sonde_stats::units::format_bitrate;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn test(protocol: Protocol, direction: Direction, secs: f64) -> TestParams {
    let udp = protocol == Protocol::Udp;
    TestParams {
        protocol,
        direction,
        duration_secs: secs,
        length: if udp { 1448 } else { 128 * 1024 },
        bitrate: if udp { 200_000_000 } else { 0 },
        ..TestParams::default()
    }
}

/// Runs the demo; exit 0 when every test completed.
pub fn run(secs: f64, out_dir: &Path, interrupt: Arc<AtomicBool>) -> i32 {
    match sonde_lab::check_privileges() {
        Ok(()) => {
            if let Some(code) = lab_demo(secs, out_dir, &interrupt) {
                return code;
            }
        }
        Err(_) => crate::output::outln!(
            "sonde demo: not root, so the emulated lab (network namespaces, impaired links) is \
             not used; running loopback tests instead (run as root for the `quick` lab scenario)\n"
        ),
    }
    loopback_demo(secs, out_dir, interrupt)
}

/// The built-in `quick` scenario with every test shortened to `secs`; `None` when the lab
/// cannot be built here (the caller falls back to loopback).
fn lab_demo(secs: f64, out_dir: &Path, interrupt: &AtomicBool) -> Option<i32> {
    let loaded = match sonde_labrun::load("quick") {
        Ok(l) => sonde_labrun::with_test_duration(l, secs),
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return Some(exit::FAILED);
        }
    };
    let opts = match super::lab::options(out_dir, false, Vec::new()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return Some(exit::FAILED);
        }
    };
    crate::output::outln!(
        "sonde demo: running the built-in `quick` lab scenario, every test {secs} s \
         (`sonde lab show quick` prints it)"
    );
    match super::lab::execute(&loaded, &opts, interrupt) {
        Ok(summary) => Some(super::lab::finish(&opts, &summary, "quick")),
        Err(sonde_labrun::RunError::Lab(e)) => {
            crate::output::outln!(
                "sonde demo: the lab could not be built here ({e}); running loopback tests \
                 instead\n"
            );
            None
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            Some(exit::FAILED)
        }
    }
}

/// The loopback demo: an in-process server and four short tests.
fn loopback_demo(secs: f64, out_dir: &Path, interrupt: Arc<AtomicBool>) -> i32 {
    let cfg = ServerConfig {
        port: 0,
        bind: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        max_clients: None,
        max_duration_secs: None,
        max_bitrate: None,
        one_off: false,
        interval_secs: None,
        ipv6_only: false,
        rcv_timeout: None,
        idle_timeout: None,
        mptcp: false,
        source_limits: Default::default(),
        auth: Default::default(),
    };
    let quiet: SinkFactory = Arc::new(|_| Box::new(|_ev: Event| {}));
    let server_stop = Arc::new(AtomicBool::new(false));
    let server = match Server::bind(cfg, server_stop.clone(), quiet, Arc::new(|_: &str| {})) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sonde: error - demo server: {e}");
            return exit::FAILED;
        }
    };
    let Some(port) = server.local_addr().map(|a| a.port()) else {
        eprintln!("sonde: error - demo server has no address");
        return exit::FAILED;
    };
    let handle = std::thread::spawn(move || server.run());
    crate::output::outln!(
        "sonde demo: in-process server on 127.0.0.1:{port}; four {secs} s loopback tests\n"
    );
    let plan = [
        ("TCP upload", test(Protocol::Tcp, Direction::Upload, secs)),
        (
            "TCP reverse (-R)",
            test(Protocol::Tcp, Direction::Reverse, secs),
        ),
        (
            "UDP upload at 200 Mbit/s",
            test(Protocol::Udp, Direction::Upload, secs),
        ),
        (
            "UDP reverse (-R) at 200 Mbit/s",
            test(Protocol::Udp, Direction::Reverse, secs),
        ),
    ];
    let out = match output::destination(&crate::cli::OutputArgs::default()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let mut rows = Vec::new();
    let mut documents = Vec::new();
    let mut code = exit::OK;
    for (name, params) in plan {
        crate::output::outln!("=== {name} ===");
        let cfg = ClientConfig {
            host: "127.0.0.1".into(),
            port,
            family: Family::V4,
            cport: None,
            params,
            connect_timeout: Duration::from_secs(5),
            local: Default::default(),
            rcv_timeout: None,
            file: None,
        };
        let mut table = TableReporter::new(LineOut::new(out.clone()));
        let mut json = JsonReporter::new(Vec::new());
        let outcome = client::run(&cfg, &interrupt, &mut |ev: Event| {
            let _ = table.event(&ev);
            let _ = json.event(&ev);
        });
        let _ = table.finish();
        let _ = json.finish();
        crate::output::outln!();
        let text = String::from_utf8_lossy(&json.into_inner()).into_owned();
        match Inputs::parse_document(&format!("{name}.json"), &text) {
            Ok(doc) => documents.push(doc),
            Err(e) => {
                eprintln!("sonde: warning - the {name} result is left out of the report: {e}")
            }
        }
        let received = outcome
            .summary
            .as_ref()
            .and_then(|s| s.directions.first())
            .and_then(|d| d.received.as_ref())
            .map(|v| (v.bits_per_second, v.udp_received.map(|u| u.lost_percent)));
        match (&outcome.error, received) {
            (None, Some((bps, loss))) => rows.push(format!(
                "  {name:<32} {:>16}{}",
                format_bitrate(bps),
                loss.map(|l| format!("  loss {l:.3} %")).unwrap_or_default()
            )),
            (e, _) => {
                code = exit::FAILED;
                rows.push(format!(
                    "  {name:<32} FAILED: {}",
                    e.as_ref()
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| "no result".into())
                ));
            }
        }
        if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    crate::output::outln!("sonde demo summary (received goodput):");
    for r in rows {
        crate::output::outln!("{r}");
    }
    server_stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = handle.join();
    if !documents.is_empty() {
        crate::output::outln!();
        let report = super::report::write(
            &Inputs::Documents(documents),
            out_dir,
            &[Format::Markdown, Format::Html],
        );
        code = code.max(report);
    }
    code
}
