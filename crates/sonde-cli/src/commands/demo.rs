//! `sonde demo`: the README's first command.
//!
//! As root it runs the built-in `quick` lab scenario (client - router - server over a
//! 100 Mbit/s, 10 ms link at 0 and 5 % loss; TCP cubic and bbr, UDP, latency), every test
//! shortened to `-t`, and writes the lab's report to `--out`: that shows what sonde is for.
//! Without root (network namespaces need it) it says so and falls back to an in-process server
//! on a free loopback port and four short tests against it (TCP and UDP, upload and reverse),
//! each printed as a table, then the report of those results.

use super::exit;
use crate::output::{self, LineOut, SharedOut};
use sonde_live::{Discard, FnSink, JsonReporter, Sink, TableReporter};
use sonde_proto::message::TestParams;
use sonde_report::{Document, Format, Inputs};
use sonde_runtime::client::{self, ClientConfig, ClientOutcome, Family};
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
        length: sonde_stats::units::Size::from_bytes(if udp { 1448 } else { 128 * 1024 }),
        rate: sonde_stats::units::Rate::from_bits_per_sec(if udp { 200_000_000 } else { 0 }),
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
    let server = match DemoServer::start() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let port = server.port;
    crate::output::outln!(
        "sonde demo: in-process server on 127.0.0.1:{port}; four {secs} s loopback tests\n"
    );
    let out = match output::destination(&crate::flags::OutputArgs::default()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let mut rows = Vec::new();
    let mut documents = Vec::new();
    let mut code = exit::OK;
    for (name, params) in plan(secs) {
        crate::output::outln!("=== {name} ===");
        let (row, passed) = loopback_test(name, params, port, &out, &interrupt, &mut documents);
        rows.push(row);
        if !passed {
            code = exit::FAILED;
        }
        if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    crate::output::outln!("sonde demo summary (received goodput):");
    for r in rows {
        crate::output::outln!("{r}");
    }
    server.stop();
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

/// The demo's server: on a free port of 127.0.0.1, serving in a thread of its own.
struct DemoServer {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Result<(), sonde_runtime::RunError>>,
}

impl DemoServer {
    /// Binds the server and starts its thread. `Err` holds the exit code.
    fn start() -> Result<Self, i32> {
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
        let quiet: SinkFactory = Arc::new(|_| Box::new(Discard));
        let server_stop = Arc::new(AtomicBool::new(false));
        let server = match Server::bind(cfg, server_stop.clone(), quiet, Arc::new(|_: &str| {})) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("sonde: error - demo server: {e}");
                return Err(exit::FAILED);
            }
        };
        let Some(port) = server.local_addr().map(|a| a.port()) else {
            eprintln!("sonde: error - demo server has no address");
            return Err(exit::FAILED);
        };
        let thread = std::thread::spawn(move || server.run());
        Ok(Self {
            port,
            stop: server_stop,
            thread,
        })
    }

    /// Stops the server and waits for its thread.
    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// The four tests, each `secs` long: TCP and UDP, upload and reverse.
fn plan(secs: f64) -> [(&'static str, TestParams); 4] {
    [
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
    ]
}

/// Runs one test against the demo's server, its table to `out` and its `-J` document into
/// `documents` (for the report); its summary row, and whether it passed.
fn loopback_test(
    name: &str,
    params: TestParams,
    port: u16,
    out: &SharedOut,
    interrupt: &AtomicBool,
    documents: &mut Vec<Document>,
) -> (String, bool) {
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
    let mut both = FnSink(|ev: &Event| {
        let _ = table.event(ev);
        let _ = json.event(ev);
    });
    let outcome = client::run(&cfg, interrupt, &mut both);
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
    summary_row(name, &outcome)
}

/// A test's line of the demo's summary (received goodput and UDP loss, or why it failed),
/// and whether it passed.
fn summary_row(name: &str, outcome: &ClientOutcome) -> (String, bool) {
    let received = outcome
        .summary
        .as_ref()
        .and_then(|s| s.directions.first())
        .and_then(|d| d.received.as_ref())
        .map(|v| (v.bits_per_second, v.udp_received.map(|u| u.lost_percent)));
    match (&outcome.error, received) {
        (None, Some((bps, loss))) => (
            format!(
                "  {name:<32} {:>16}{}",
                format_bitrate(bps),
                loss.map(|l| format!("  loss {l:.3} %")).unwrap_or_default()
            ),
            true,
        ),
        (e, _) => (
            format!(
                "  {name:<32} FAILED: {}",
                e.as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "no result".into())
            ),
            false,
        ),
    }
}
