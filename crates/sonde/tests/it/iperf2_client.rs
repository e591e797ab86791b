//! `sonde client --iperf2` against a real iperf 2 server (Debian's `iperf -s`, 2.1.8) on
//! loopback, IPv4 and IPv6: the counts both ends report agree.
//!
//! iperf -s prints each stream's figures as CSV (`-y C`); sonde's `-J` holds its own. TCP:
//! iperf -s counts the 60-byte client header as data, so its bytes are sonde's plus 60 (within
//! one write, to allow for a write the kernel split); what it sends (`-R`, `--full-duplex`)
//! is what sonde received. UDP: the server's report, which sonde
//! shows as the receiver's view, must hold exactly what iperf -s printed, and its datagram
//! count is sonde's plus the final datagram iperf -s counts as one more (as it does for iperf
//! 2's own client). Only counts are compared, never rates, so a loaded host cannot fail them.
//!
//! A UDP server that never reports (a silent socket here) leaves a warning and exit 0: this
//! end's sending succeeded, only the server's view is unknown.
//!
//! Without iperf 2 these tests say why they skip; with `SONDE_REQUIRE_ALL=1` (CI) they fail.

use crate::common::{
    arr, ipv6_loopback_or_skip, notes, num, run, tcp_in_flight, uint, Output, Proc,
};
use crate::peers::{iperf2, serve_iperf2 as serve};
use serde_json::Value;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(30);
/// The client header iperf -s reads as the first bytes of each TCP stream (and counts).
const TCP_HEADER: u64 = 60;

/// One line of `iperf -s -y C`: the ports (the sender's first, so the client's in reverse
/// is the second), the bytes and (UDP) the datagram figures.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    ports: (u16, u16),
    bytes: u64,
    /// UDP: jitter (ms), lost, total, out of order.
    udp: Option<(f64, u64, u64, u64)>,
}

fn parse_row(line: &str) -> Option<Row> {
    let f: Vec<&str> = line.trim().split(',').collect();
    let n = |i: usize| f.get(i)?.parse::<u64>().ok();
    let udp = (f.len() >= 14).then(|| Some((f[9].parse().ok()?, n(10)?, n(11)?, n(13)?)));
    Some(Row {
        ports: (f.get(2)?.parse().ok()?, f.get(4)?.parse().ok()?),
        bytes: n(7)?,
        udp: udp.flatten(),
    })
}

/// The rows iperf -s printed for `streams` (sonde's local port, and whether sonde sends
/// there), waiting (bounded) until each has one.
fn rows_for(server: &Proc, streams: &[(u16, bool)]) -> Vec<Row> {
    let t0 = Instant::now();
    loop {
        let out = server.stdout_so_far();
        let rows: Vec<Row> = out.lines().filter_map(parse_row).collect();
        let found: Vec<Row> = streams
            .iter()
            .filter_map(|&(port, sends)| {
                rows.iter()
                    .find(|r| port == if sends { r.ports.0 } else { r.ports.1 })
                    .cloned()
            })
            .collect();
        if found.len() == streams.len() {
            return found;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "iperf -s printed no row for {streams:?}:\n{out}\n{}",
            server.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `sonde client HOST -p PORT --iperf2 -J ARGS...`, which must exit 0.
fn sonde(host: &str, port: u16, args: &[&str]) -> (Output, Value) {
    let port = port.to_string();
    let mut all = vec!["client", host, "-p", &port, "--iperf2", "-J"];
    all.extend_from_slice(args);
    let out = run(&all, DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    (out, doc)
}

/// Each of sonde's streams: its local port and whether sonde sends on it, in stream order.
fn streams_of(doc: &Value) -> Vec<(u16, bool)> {
    arr(doc, "start.connected")
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let port = c["local_port"].as_u64().unwrap_or(0) as u16;
            // TCP streams hold a "sender" or "receiver" view, UDP ones "udp" saying which.
            let s = &doc["end"]["streams"][i];
            (
                port,
                s.get("sender").is_some() || s["udp"]["sender"] == true,
            )
        })
        .collect()
}

/// A TCP test: every stream sonde sends on has iperf -s count its bytes plus the header,
/// and every stream it receives on what iperf -s sent, within a write. Returns sonde's
/// byte counts in stream order.
fn tcp_case(host: &str, server_extra: &[&str], args: &[&str], len: u64) -> Vec<u64> {
    let Some(ip) = iperf2() else {
        return Vec::new();
    };
    // --full-duplex: iperf -s ends each direction on its own clock, and when its reader stops
    // first it closes with bytes unread; the reset that sends discards what was in flight
    // both ways (the client says so in a note). So there the ends agree within what one
    // connection holds in flight; elsewhere within a write.
    let len = if args.contains(&"--full-duplex") {
        len.max(tcp_in_flight())
    } else {
        len
    };
    let mut extra = vec!["-y", "C"];
    extra.extend_from_slice(server_extra);
    let (port, server) = serve(&ip, &extra);
    let (out, doc) = sonde(host, port, args);
    let streams = streams_of(&doc);
    let rows = rows_for(&server, &streams);
    let mut counts = Vec::new();
    for (i, (row, &(_, sends))) in rows.iter().zip(&streams).enumerate() {
        let (role, header) = if sends {
            ("sender", TCP_HEADER)
        } else {
            ("receiver", 0)
        };
        let mine = uint(&doc, &format!("end.streams.{i}.{role}.bytes"));
        let theirs = row.bytes.saturating_sub(header);
        assert!(
            mine.abs_diff(theirs) <= len && row.bytes >= header,
            "stream {} ({role}): sonde {mine}, iperf -s {} (less a {header}-byte header)\n{}",
            i + 1,
            row.bytes,
            out.describe()
        );
        counts.push(mine);
    }
    assert!(out.stdout.contains("iperf 2 sends no TCP result back"));
    counts
}

#[test]
fn tcp_bytes_agree_with_iperf_s() {
    let _turn = crate::turns::take(module_path!());
    let sent = tcp_case("127.0.0.1", &[], &["-t", "1"], 128 * 1024);
    assert!(sent.iter().all(|&b| b > 0), "{sent:?}");
}

#[test]
fn tcp_four_streams_agree_with_iperf_s_stream_by_stream() {
    let _turn = crate::turns::take(module_path!());
    let sent = tcp_case("127.0.0.1", &[], &["-t", "1", "-P", "4"], 128 * 1024);
    assert!(sent.is_empty() || sent.len() == 4, "{sent:?}");
}

#[test]
fn tcp_byte_count_is_sent_and_counted_exactly() {
    let _turn = crate::turns::take(module_path!());
    let sent = tcp_case("127.0.0.1", &[], &["-n", "3000000", "-l", "1000"], 1000);
    assert!(sent.is_empty() || sent == [3_000_000], "{sent:?}");
}

#[test]
fn tcp_reverse_receives_what_iperf_s_sent() {
    let _turn = crate::turns::take(module_path!());
    let got = tcp_case("127.0.0.1", &[], &["-t", "1", "-R", "-P", "2"], 128 * 1024);
    assert!(got.iter().all(|&b| b > 0), "{got:?}");
}

#[test]
fn tcp_full_duplex_both_ways_on_each_connection_agree_with_iperf_s() {
    let _turn = crate::turns::take(module_path!());
    let got = tcp_case("127.0.0.1", &[], &["-t", "1", "--full-duplex"], 128 * 1024);
    assert!(got.is_empty() || got.len() == 2, "{got:?}");
    assert!(got.iter().all(|&b| b > 0), "{got:?}");
}

#[test]
fn tcp_over_ipv6_agrees_with_iperf_s() {
    let _turn = crate::turns::take(module_path!());
    if !ipv6_loopback_or_skip("iperf 2 over IPv6") {
        return;
    }
    let sent = tcp_case("::1", &["-V"], &["-t", "1"], 128 * 1024);
    assert!(sent.iter().all(|&b| b > 0), "{sent:?}");
}

/// A UDP test: the server's report sonde shows is what iperf -s printed, and it counts
/// sonde's datagrams and the final one. Returns (datagrams sent, bytes sent).
fn udp_case(host: &str, server_extra: &[&str], args: &[&str]) -> Option<(u64, u64)> {
    let ip = iperf2()?;
    let mut extra = vec!["-u", "-y", "C"];
    extra.extend_from_slice(server_extra);
    let (port, server) = serve(&ip, &extra);
    let mut all = vec!["-u", "-t", "1"];
    all.extend_from_slice(args);
    let (out, doc) = sonde(host, port, &all);
    let rows = rows_for(&server, &streams_of(&doc));
    let (jitter, lost, total, ooo) = rows[0].udp.expect("a UDP row");
    let said = |what: &str| uint(&doc, &format!("end.sum_received.{what}"));
    let ctx = format!("iperf -s: {:?}\n{}", rows[0], out.describe());
    assert_eq!(said("bytes"), rows[0].bytes, "{ctx}");
    assert_eq!(said("packets"), total, "{ctx}");
    assert_eq!(said("lost_packets"), lost, "{ctx}");
    assert_eq!(said("out_of_order"), ooo, "{ctx}");
    // The report carries whole microseconds; iperf -s prints its own value to 0.001 ms.
    let shown = num(&doc, "end.sum_received.jitter_ms");
    assert!(
        (shown - jitter).abs() <= 0.0011,
        "{shown} vs {jitter}: {ctx}"
    );
    let sent = uint(&doc, "end.sum_sent.packets");
    assert_eq!(total, sent + 1, "the final datagram is the one more: {ctx}");
    Some((sent, uint(&doc, "end.sum_sent.bytes")))
}

#[test]
fn udp_at_10m_the_server_report_is_what_iperf_s_printed() {
    let _turn = crate::turns::take(module_path!());
    if let Some((sent, bytes)) = udp_case("127.0.0.1", &[], &["-b", "10m"]) {
        // 1470-byte datagrams, iperf 2's default.
        assert_eq!(bytes, sent * 1470);
    }
}

#[test]
fn udp_64_byte_datagrams_carry_the_whole_header_first() {
    let _turn = crate::turns::take(module_path!());
    if let Some((sent, bytes)) = udp_case("127.0.0.1", &[], &["-l", "64"]) {
        // The first datagram holds the 76 header bytes iperf -s reads the test from.
        assert_eq!(bytes, 76 + (sent - 1) * 64);
    }
}

#[test]
fn udp_over_ipv6_the_server_report_is_what_iperf_s_printed() {
    let _turn = crate::turns::take(module_path!());
    if ipv6_loopback_or_skip("iperf 2 UDP over IPv6") {
        udp_case("::1", &["-V"], &["-b", "5m"]);
    }
}

/// `sonde client 127.0.0.1 -p PORT --iperf2 -u -t 0.5 EXTRA...`.
fn udp_half_second(port: u16, extra: &[&str]) -> Output {
    let port = port.to_string();
    let mut args = vec![
        "client",
        "127.0.0.1",
        "-p",
        &port,
        "--iperf2",
        "-u",
        "-t",
        "0.5",
    ];
    args.extend_from_slice(extra);
    run(&args, DEADLINE)
}

#[test]
fn udp_to_a_port_nobody_serves_fails_and_what_iperf_2_cannot_do_is_refused() {
    let _turn = crate::turns::take(module_path!());
    let out = udp_half_second(crate::common::free_port(), &[]);
    out.expect_code(1);
    assert!(
        out.stderr.contains("nothing listens on UDP port"),
        "{}",
        out.describe()
    );
    for (flag, said) in [
        ("--bidir", "--bidir is not iperf 2's"),
        ("--iperf3", "--iperf3"),
    ] {
        let out = run(&["client", "127.0.0.1", "--iperf2", flag], DEADLINE);
        out.expect_code(2);
        assert!(out.stderr.contains(said), "{}", out.describe());
    }
}

#[test]
fn a_udp_server_that_never_reports_leaves_a_warning_and_this_ends_figures() {
    let _turn = crate::turns::take(module_path!());
    // A socket that takes the datagrams and answers nothing, as a server whose report is lost.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let out = udp_half_second(silent.local_addr().unwrap().port(), &["-J"]);
    out.expect_code(0);
    let doc = out.json();
    assert!(uint(&doc, "end.sum_sent.packets") > 0, "{}", out.describe());
    assert!(
        doc["end"].get("sum_received").is_none(),
        "{}",
        out.describe()
    );
    let warned = notes(&doc)
        .iter()
        .any(|n| n.contains("sent no server report"));
    assert!(warned, "{}", out.describe());
    // What the silent end got: the first datagram holds iperf 2's header and asks for UDP.
    let mut buf = [0u8; 2048];
    silent
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let n = silent.recv(&mut buf).unwrap();
    let (h, _) = sonde_proto::iperf2::client_hdr::UdpClientHeader::parse(&buf[..n]).unwrap();
    assert_eq!(
        (h.datagram.seq(true), h.header.rate()),
        (1, Some(1_048_576))
    );
}

#[test]
fn sonde_client_and_sonde_server_both_speaking_iperf_2_agree() {
    let _turn = crate::turns::take(module_path!());
    let port = crate::common::free_port();
    let _server = crate::common::Server::start(&["--iperf2", &port.to_string()]);
    // TCP: nothing comes back, so only this end's figures and exit 0.
    let (_, doc) = sonde("127.0.0.1", port, &["-t", "0.5"]);
    assert!(uint(&doc, "end.sum_sent.bytes") > 0);
    // UDP: sonde's server answers with iperf 2's report, which counts every datagram sent
    // and the final one.
    let (out, doc) = sonde("127.0.0.1", port, &["-u", "-b", "5m", "-t", "0.5"]);
    let sent = uint(&doc, "end.sum_sent.packets");
    let got = uint(&doc, "end.sum_received.packets");
    assert_eq!(got, sent + 1, "{}", out.describe());
    assert_eq!(
        uint(&doc, "end.sum_received.lost_packets"),
        0,
        "{}",
        out.describe()
    );
}
