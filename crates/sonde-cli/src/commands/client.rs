//! `sonde client`: phase two of the CLI (build the run configuration), then run and report.

use super::exit;
use crate::flags::ClientArgs;
use crate::output;
use sonde_live::{ServerOutputSlot, Sink};
use sonde_proto::message::TestParams;
use sonde_proto::psk::Psk;
use sonde_runtime::client::{self, ClientConfig, ClientOutcome, Family};
use sonde_stats::model::{Direction, Event, Protocol};
use sonde_stats::units::{Rate, Size};
use std::sync::atomic::AtomicBool;

/// Default TCP write length, as iperf3's.
const TCP_DEFAULT_LEN: u64 = 128 * 1024;
/// Default UDP datagram: fits a 1500-byte MTU under IPv6 and IPv4 headers.
const UDP_DEFAULT_LEN: u64 = 1448;
/// iperf3's UDP default rate.
const UDP_DEFAULT_RATE: u64 = 1024 * 1024;

/// Turns validated flags into test parameters.
///
/// # Errors
/// A usage message when flags contradict each other or exceed protocol limits.
pub fn params(a: &ClientArgs) -> Result<TestParams, String> {
    let length = length(a);
    refuse_empty_counts(a)?;
    if a.udp && a.congestion.is_some() {
        return Err("-C (congestion control) applies to TCP only; UDP has none".into());
    }
    let end = end_condition(a)?;
    if let Some(w) = a.window.filter(|w| w.to_u32("-w").is_err()) {
        return Err(format!("-w {} is too large (max 4G)", w.bytes()));
    }
    check_transport_only_flags(a)?;
    let burst = burst(a)?;
    let p = test_params(a, &end, length, burst);
    p.validate().map_err(|e| e.to_string())?;
    if a.coded.is_some() {
        super::coded::check(&p)?;
    }
    check_cport(a, &p)?;
    check_family(a)?;
    if a.iperf2 {
        super::client_iperf2::check(a)?;
    }
    Ok(p)
}

/// The server's port: `-p`, else sonde's (and iperf3's) 5201, or iperf 2's 5001.
fn port(a: &ClientArgs) -> u16 {
    a.port.unwrap_or(if a.iperf2 {
        sonde_proto::iperf2::DEFAULT_PORT
    } else {
        5201
    })
}

/// `-l`, or the protocol's default write length or datagram size; the request's check
/// bounds it.
fn length(a: &ClientArgs) -> Size {
    a.length.unwrap_or(Size::from_bytes(if a.udp && a.iperf2 {
        super::client_iperf2::UDP_DEFAULT_LEN
    } else if a.udp || a.coded.is_some() {
        UDP_DEFAULT_LEN
    } else {
        TCP_DEFAULT_LEN
    }))
}

/// `-n 0` and `-k 0`: end conditions that would send nothing.
fn refuse_empty_counts(a: &ClientArgs) -> Result<(), String> {
    if a.bytes.is_some_and(Size::is_zero) {
        return Err(
            "-n 0 would send nothing: give a byte count above 0, or -t for a timed test".into(),
        );
    }
    if a.blockcount == Some(0) {
        return Err(
            "-k 0 would send nothing: give a block count above 0, or -t for a timed test".into(),
        );
    }
    Ok(())
}

/// What ends the test: a byte budget (`-n`, or `-F`'s file size), a block count (`-k`) or a
/// duration (`-t`, 10 s by default).
struct EndCondition {
    bytes: Size,
    blocks: u64,
    duration_secs: f64,
}

fn end_condition(a: &ClientArgs) -> Result<EndCondition, String> {
    let bytes = match file_budget(a)? {
        Some(size) => a.bytes.map_or(size, |n| n.min(size)),
        None => a.bytes.unwrap_or(Size::ZERO),
    };
    let blocks = a.blockcount.unwrap_or(0);
    let duration_secs = match a.time {
        Some(t) if !bytes.is_zero() || blocks > 0 => {
            return Err(format!(
                "-t {t} cannot be combined with -n or -k: choose one end condition"
            ))
        }
        Some(0.0) => return Err("-t 0 would run forever: give a duration, -n or -k".into()),
        Some(t) => t,
        None if !bytes.is_zero() || blocks > 0 => 0.0,
        None => 10.0,
    };
    Ok(EndCondition {
        bytes,
        blocks,
        duration_secs,
    })
}

/// Flags of one transport given with the other: `-Z`, `--dont-fragment`, `--skip-rx-copy`.
fn check_transport_only_flags(a: &ClientArgs) -> Result<(), String> {
    if a.zerocopy && a.udp {
        return Err("-Z (zero-copy) applies to TCP only".into());
    }
    if a.dont_fragment && !a.udp {
        return Err("--dont-fragment applies to UDP (TCP segments to the path MTU itself)".into());
    }
    if a.skip_rx_copy && a.udp {
        return Err(
            "--skip-rx-copy applies to TCP only (UDP receivers must read every header)".into(),
        );
    }
    Ok(())
}

/// The UDP burst (`-b RATE/N` or `--burst N`, 1 by default) and the pacing flags' checks.
fn burst(a: &ClientArgs) -> Result<u32, String> {
    let rate = a.bitrate.map(|r| r.rate);
    let burst = match (a.bitrate.and_then(|r| r.burst), a.burst) {
        (Some(x), Some(y)) if x != y => {
            return Err(format!(
                "-b .../{x} and --burst {y} disagree: give the burst once"
            ))
        }
        (x, y) => x.or(y).unwrap_or(1),
    };
    if burst > 1 && !a.udp {
        return Err(
            "--burst (or -b RATE/N) applies to UDP; TCP with -b is paced by the kernel".into(),
        );
    }
    if a.steady_pacing && !a.udp {
        return Err("--steady-pacing applies to UDP; TCP with -b is paced by the kernel".into());
    }
    if burst > 1 && rate == Some(Rate::UNLIMITED) {
        return Err("--burst needs a paced rate: -b 0 sends as fast as possible already".into());
    }
    Ok(burst)
}

/// The test's parameters from the flags and the values checked above.
fn test_params(a: &ClientArgs, end: &EndCondition, length: Size, burst: u32) -> TestParams {
    let protocol = if a.udp || a.coded.is_some() {
        Protocol::Udp
    } else {
        Protocol::Tcp
    };
    let direction = if a.bidir || a.full_duplex {
        Direction::Bidir
    } else if a.reverse {
        Direction::Reverse
    } else {
        Direction::Upload
    };
    TestParams {
        protocol,
        direction,
        parallel: a.parallel,
        duration_secs: end.duration_secs,
        bytes: end.bytes,
        blocks: end.blocks,
        length,
        rate: a.bitrate.map(|r| r.rate).unwrap_or(if a.coded.is_some() {
            Rate::from_bits_per_sec(super::coded::DEFAULT_RATE)
        } else if a.udp {
            Rate::from_bits_per_sec(UDP_DEFAULT_RATE)
        } else {
            Rate::UNLIMITED
        }),
        omit_secs: a.omit,
        interval_secs: a.interval,
        congestion: a.congestion.clone(),
        window: a.window,
        mss: a.mss,
        nodelay: a.nodelay,
        tos: a.tos.or(a.dscp.map(|d| d << 2)).unwrap_or(0),
        zerocopy: a.zerocopy,
        burst,
        steady_pacing: a.steady_pacing,
        skip_rx_copy: a.skip_rx_copy,
        fq_rate: a.fq_rate.unwrap_or(Rate::UNLIMITED),
        dont_fragment: a.dont_fragment,
        server_affinity: a.affinity.and_then(|(_, server)| server),
        profile: None,
        coded: a.coded.is_some(),
        coded_options: a
            .coded
            .map(|scheme| super::coded::options(a, scheme))
            .filter(|o| o.needs_capability()),
        capacity: None,
        psk_answer: None,
    }
}

/// `--cport`: the data streams' ports (one per stream from it) must fit below 65536.
fn check_cport(a: &ClientArgs, p: &TestParams) -> Result<(), String> {
    if let Some(c) = a.cport {
        let last = u32::from(c) + p.stream_count() - 1;
        if last > u32::from(u16::MAX) {
            return Err(format!(
                "--cport {c} with {} streams would need ports up to {last}: use a port <= {}",
                p.stream_count(),
                u32::from(u16::MAX) + 1 - p.stream_count()
            ));
        }
    }
    Ok(())
}

/// `-F`: its checks, and when this end sends the file, its size (the test's byte budget).
fn file_budget(a: &ClientArgs) -> Result<Option<Size>, String> {
    let Some(path) = &a.file else {
        return Ok(None);
    };
    if a.udp {
        return Err("-F moves a file over TCP; UDP datagrams carry sonde's headers".into());
    }
    if a.bidir || a.parallel > 1 {
        return Err("-F moves one file over one stream: use it without --bidir and -P".into());
    }
    if a.reverse {
        return Ok(None);
    }
    if a.time.is_some() {
        return Err(format!(
            "-F sends {} once and its size ends the test: drop -t (or give -n for a part of it)",
            path.display()
        ));
    }
    let size = std::fs::metadata(path)
        .map_err(|e| format!("-F {}: {e}", path.display()))?
        .len();
    if size == 0 {
        return Err(format!("-F {}: the file is empty", path.display()));
    }
    Ok(Some(Size::from_bytes(size)))
}

/// `-4` / `-6` against an address literal of the other family is a usage error (no
/// resolution happens here: a host name is resolved later, per family).
fn check_family(a: &ClientArgs) -> Result<(), String> {
    let literal = a
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>();
    match literal {
        Ok(std::net::IpAddr::V4(_)) if a.ip.ipv6 => Err(format!(
            "-6 asks for IPv6, but {} is an IPv4 address",
            a.host
        )),
        Ok(std::net::IpAddr::V6(_)) if a.ip.ipv4 => Err(format!(
            "-4 asks for IPv4, but {} is an IPv6 address",
            a.host
        )),
        Ok(std::net::IpAddr::V4(_)) if a.flowlabel.is_some() => Err(format!(
            "-L sets an IPv6 flow label, but {} is an IPv4 address",
            a.host
        )),
        _ if a.flowlabel.is_some() && a.ip.ipv4 => {
            Err("-L sets an IPv6 flow label: it cannot go with -4".into())
        }
        _ => check_bind_family(a),
    }
}

/// `-B` of one family with `-4`/`-6` or a server literal of the other is a usage error.
fn check_bind_family(a: &ClientArgs) -> Result<(), String> {
    let Some(b) = a.bind.as_ref().and_then(|b| b.addr) else {
        return Ok(());
    };
    let host = a
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .ok();
    let clash = (a.ip.ipv6 && b.is_ipv4())
        || (a.ip.ipv4 && b.is_ipv6())
        || host.is_some_and(|h| h.is_ipv4() != b.is_ipv4());
    if clash {
        return Err(format!(
            "-B {b} cannot reach {} over the other address family",
            a.host
        ));
    }
    Ok(())
}

/// Runs the client command.
pub fn run(a: ClientArgs, interrupt: &AtomicBool) -> i32 {
    let p = match params(&a) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    if let Err(code) = prepare_process(&a) {
        return code;
    }
    let psk = match super::auth::client_psk(&a.auth.psk) {
        Ok(k) => k,
        Err(e) => return super::auth::unusable_file(&e),
    };
    let iperf3_auth = match super::auth::Iperf3Credentials::from_args(&a.auth, interrupt) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let cfg = config(&a, p, psk);
    let server_json: Option<ServerOutputSlot> = (a.get_server_output && !a.iperf3)
        .then(|| std::sync::Arc::new(std::sync::Mutex::new(None)));
    let mut sink =
        output::client_reporter(&a.output, out, a.extra_data.clone(), server_json.clone());
    if a.coded.is_some() {
        return super::coded::run(&cfg, &a.output, interrupt);
    }
    let outcome = match run_test(&a, &cfg, iperf3_auth.as_ref(), interrupt, &mut *sink) {
        Ok(o) => o,
        Err(code) => return code,
    };
    show_server_view(&a, &outcome, server_json.as_ref(), &mut *sink);
    if let (Some(path), Some(s)) = (&a.file, &outcome.summary) {
        output::send(&mut *sink, &Event::Note(file_note(path, s, a.reverse)));
    }
    finish(&a, &outcome, &mut *sink)
}

/// This process's settings before any stream starts: `--no-gso`, and `-A`'s core for this
/// end. `Err` holds the exit code.
fn prepare_process(a: &ClientArgs) -> Result<(), i32> {
    if a.no_gso {
        sonde_runtime::streams::udp::set_gso(false);
    }
    if let Some(core) = a.affinity.and_then(|(here, _)| here) {
        // Before any stream worker starts: they inherit this thread's mask.
        if let Err(e) = sonde_platform::affinity::pin_current_thread(core as usize) {
            eprintln!("sonde: error - cannot pin to CPU core {core} (-A): {e}");
            return Err(exit::FAILED);
        }
    }
    Ok(())
}

/// The run configuration: where to connect, from where, and the test.
fn config(a: &ClientArgs, p: TestParams, psk: Option<Psk>) -> ClientConfig {
    let bind_ip = a.bind.as_ref().and_then(|b| b.addr);
    ClientConfig {
        host: a.host.clone(),
        port: port(a),
        // A local address of one family (-B) talks only to servers of that family.
        // A flow label (-L) exists only in IPv6.
        family: match (a.ip.ipv4, a.ip.ipv6 || a.flowlabel.is_some(), bind_ip) {
            (true, _, _) | (_, _, Some(std::net::IpAddr::V4(_))) => Family::V4,
            (_, true, _) | (_, _, Some(std::net::IpAddr::V6(_))) => Family::V6,
            _ => Family::Any,
        },
        cport: a.cport,
        params: p,
        connect_timeout: a.connect_timeout,
        local: sonde_runtime::sockets::ClientSockets {
            addr: bind_ip,
            device: a
                .bind_dev
                .clone()
                .or_else(|| a.bind.as_ref().and_then(|b| b.device.clone())),
            tcp_user_timeout: a.snd_timeout,
            control_keepalive: a.cntl_ka,
            mptcp: a.mptcp,
            flow_label: a.flowlabel,
            psk,
        },
        rcv_timeout: Some(a.rcv_timeout),
        file: a.file.clone(),
    }
}

/// Runs the test against a sonde server, or with `--iperf3` an iperf3 one (`--iperf2`: an
/// iperf 2 one), its events to
/// `sink`. `Err` holds the exit code of a key file that cannot be used.
fn run_test(
    a: &ClientArgs,
    cfg: &ClientConfig,
    iperf3_auth: Option<&super::auth::Iperf3Credentials>,
    interrupt: &AtomicBool,
    sink: &mut (dyn Sink + Send),
) -> Result<ClientOutcome, i32> {
    let mut emit = output::Reported(&mut *sink);
    if a.iperf2 {
        return Ok(super::client_iperf2::run(a, cfg, interrupt, &mut emit));
    }
    if !a.iperf3 {
        return Ok(client::run(cfg, interrupt, &mut emit));
    }
    let opts = sonde_proto::iperf3::params::Iperf3Options {
        udp_counters_64bit: a.udp_counters_64bit,
        get_server_output: a.get_server_output,
        repeating_payload: a.repeating_payload,
    };
    // Made before connecting: an unreadable or invalid --rsa-public-key-path is a
    // usage error, as every other key file.
    let token = match iperf3_auth.map(|c| c.token()).transpose() {
        Ok(t) => t,
        Err(e) => return Err(super::auth::unusable_file(&e)),
    };
    Ok(sonde_runtime::iperf3::client::run_with_token(
        cfg,
        opts,
        token.as_deref(),
        interrupt,
        &mut emit,
    ))
}

/// `--get-server-output` of a sonde server: its view into `-J`'s document, or as a table
/// after this end's.
fn show_server_view(
    a: &ClientArgs,
    outcome: &ClientOutcome,
    server_json: Option<&ServerOutputSlot>,
    sink: &mut (dyn Sink + Send),
) {
    let (true, Some(events)) = (a.get_server_output && !a.iperf3, &outcome.server_view) else {
        return;
    };
    match server_json {
        Some(slot) if a.output.json => {
            if let Ok(mut s) = slot.lock() {
                *s = server_document(events);
            }
        }
        _ => {
            let text = server_table(events);
            output::send(sink, &Event::Note(format!("\nServer output:\n{text}")));
        }
    }
}

/// The run's error into the output (unless only stderr would show it), the output finished,
/// then the error's last line; the exit code.
fn finish(a: &ClientArgs, outcome: &ClientOutcome, sink: &mut (dyn Sink + Send)) -> i32 {
    let code = match &outcome.error {
        None => exit::OK,
        Some(e) => {
            if !output::errors_only_on_stderr(&a.output) {
                output::send(sink, &Event::Error(e.to_string()));
            }
            exit::FAILED
        }
    };
    output::finish(sink);
    // After the result: the message is the last line, below what it speaks of.
    if let Some(e) = &outcome.error {
        output::run_error(e, matches!(e, sonde_runtime::error::RunError::Interrupted));
    }
    code
}

/// The server's view of the test (`--get-server-output`) as its table.
fn server_table(events: &[Event]) -> String {
    let mut buf = Vec::new();
    let mut t = sonde_live::TableReporter::new(&mut buf);
    for ev in events {
        let _ = t.event(ev);
    }
    let _ = t.finish();
    drop(t);
    String::from_utf8_lossy(&buf).trim_end().to_owned()
}

/// The server's view of the test as its `-J` document.
fn server_document(events: &[Event]) -> Option<serde_json::Value> {
    let mut buf = Vec::new();
    let mut j = sonde_live::JsonReporter::new(&mut buf);
    for ev in events {
        j.event(ev).ok()?;
    }
    j.finish().ok()?;
    drop(j);
    serde_json::from_slice(&buf).ok()
}

/// What `-F` moved, as iperf3 says it: "Sent X / SIZE (P%) of FILE", or what was written.
fn file_note(
    path: &std::path::Path,
    s: &sonde_stats::model::TestSummary,
    received: bool,
) -> String {
    use sonde_stats::units::format_bytes;
    let moved: u64 = s
        .directions
        .iter()
        .filter_map(|d| {
            if received {
                d.received.as_ref()
            } else {
                d.sent.as_ref()
            }
        })
        .map(|v| v.bytes)
        .sum();
    if received {
        return format!("Received {} into {}", format_bytes(moved), path.display());
    }
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let percent = (moved * 100).checked_div(size).unwrap_or(100);
    format!(
        "Sent {} / {} ({percent}%) of {}",
        format_bytes(moved),
        format_bytes(size),
        path.display()
    )
}
