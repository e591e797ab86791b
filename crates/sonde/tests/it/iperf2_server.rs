//! `sonde server --iperf2` serving Debian's iperf 2.1.8 client (`iperf -c`) on loopback, IPv4
//! and IPv6. Each case compares the two ends' counts, never a rate: TCP bytes agree exactly
//! once the 60-byte header each stream opens with is set aside (iperf 2 counts it as written,
//! sonde as the request, not as data), and what a client reads is what the server sent after
//! the 28-byte acknowledgement of that header; UDP tests end with the server report, and what
//! `iperf -c` prints of it is what the server's `-J` document says.
//!
//! iperf 2 must be installed; without it a test says why and passes, unless
//! `SONDE_REQUIRE_ALL=1` (CI), where it fails.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::{self, uint, Output, Server};
use crate::peers::{self, Iperf3};
use serde_json::Value;
use std::time::Duration;

/// The bytes iperf 2.1.8's TCP header takes at the start of each stream.
const HEADER: u64 = 60;
/// The bytes of the acknowledgement the server writes after each stream's header.
const ACK: u64 = 28;
const DEADLINE: Duration = Duration::from_secs(30);

/// `sonde server -J --iperf2 PORT EXTRA...` and its iperf 2 port.
fn serve(extra: &[&str]) -> (Server, u16) {
    let port = common::free_port();
    let p = port.to_string();
    let mut args = vec!["-J", "--iperf2", &p];
    args.extend_from_slice(extra);
    (Server::start(&args), port)
}

/// `iperf -c HOST -p PORT ARGS...` to completion.
fn iperf_c(iperf2: &Iperf3, host: &str, port: u16, args: &[&str]) -> Output {
    let mut all: Vec<String> = ["-c", host, "-p", &port.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if host.contains(':') {
        all.push("-V".into());
    }
    all.extend(args.iter().map(|s| s.to_string()));
    iperf2.run(&all, DEADLINE)
}

/// The bytes of each stream in `iperf -y C` output (field 8; the `[SUM]` line, id -1, left out).
fn csv_bytes(out: &Output) -> Vec<u64> {
    out.stdout
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f.len() >= 9 && f[5] != "-1")
        .map(|f| {
            f[7].parse()
                .unwrap_or_else(|_| panic!("{}", out.describe()))
        })
        .collect()
}

/// The one document the server wrote for the test.
fn one_document(server: &mut Server) -> Value {
    let docs = server.wait_documents(1, Duration::from_secs(10));
    assert_eq!(docs.len(), 1, "{}", server.output_so_far());
    docs.into_iter().next().unwrap()
}

/// A TCP upload (`args`) from `host`: the server's received bytes are the client's, less the
/// header of each stream, in one test of that many streams.
fn tcp_upload_agrees(host: &str, args: &[&str], streams: u64) {
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    let (mut server, port) = serve(&[]);
    let out = iperf_c(&iperf2, host, port, &[&["-y", "C"], args].concat());
    out.expect_code(0);
    let sent = csv_bytes(&out);
    assert_eq!(sent.len() as u64, streams, "{}", out.describe());
    let doc = one_document(&mut server);
    assert_eq!(uint(&doc, "start.test_start.num_streams"), streams, "{doc}");
    assert_eq!(
        uint(&doc, "end.sum_received.bytes"),
        sent.iter().sum::<u64>() - streams * HEADER,
        "{doc}\n{}",
        out.describe()
    );
    assert!(doc["end"]["sonde"]["error"].is_null(), "{doc}");
}

#[test]
fn an_iperf2_tcp_client_is_served_and_the_bytes_agree() {
    let _turn = crate::turns::take(module_path!());
    tcp_upload_agrees("127.0.0.1", &["-t", "1"], 1);
}

#[test]
fn four_iperf2_streams_are_one_test_of_four() {
    let _turn = crate::turns::take(module_path!());
    tcp_upload_agrees("127.0.0.1", &["-t", "1", "-P", "4"], 4);
}

#[test]
fn an_iperf2_byte_count_over_ipv6_is_received_to_the_byte() {
    let _turn = crate::turns::take(module_path!());
    if !common::ipv6_loopback_or_skip("iperf 2 over IPv6") {
        return;
    }
    tcp_upload_agrees("::1", &["-n", "100000", "-l", "1000", "-P", "2"], 2);
}

/// `-R` and `--full-duplex`: the server sends on the client's connection, and what the client
/// read is what the server sent and the 28-byte acknowledgement of its header before it.
#[test]
fn reverse_and_full_duplex_iperf2_tests_agree_to_the_byte() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    for (flag, sent_key) in [
        ("-R", "sum_sent"),
        ("--full-duplex", "sum_sent_bidir_reverse"),
    ] {
        let (mut server, port) = serve(&[]);
        let out = iperf_c(&iperf2, "127.0.0.1", port, &[flag, "-t", "1", "-y", "C"]);
        out.expect_code(0);
        let (read, wrote) = csv_by_direction(&out, port);
        let doc = one_document(&mut server);
        assert!(doc["end"]["sonde"]["error"].is_null(), "{flag}: {doc}");
        let sent = uint(&doc, &format!("end.{sent_key}.bytes"));
        assert_eq!(read, sent + ACK, "{flag}: {doc}\n{}", out.describe());
        if flag == "--full-duplex" {
            let received = uint(&doc, "end.sum_received.bytes");
            assert_eq!(
                wrote,
                received + HEADER,
                "{flag}: {doc}\n{}",
                out.describe()
            );
        }
    }
}

/// What the client of an `iperf -y C` test read and wrote: a line whose source is the server's
/// `port` is data the client read.
fn csv_by_direction(out: &Output, port: u16) -> (u64, u64) {
    let (mut read, mut wrote) = (0, 0);
    for f in out.stdout.lines().map(|l| l.split(',').collect::<Vec<_>>()) {
        if f.len() < 9 || f[5] == "-1" {
            continue;
        }
        let bytes: u64 = f[7]
            .parse()
            .unwrap_or_else(|_| panic!("{}", out.describe()));
        if f[2] == port.to_string() {
            read += bytes;
        } else {
            wrote += bytes;
        }
    }
    (read, wrote)
}

/// The figures of iperf 2's "Server Report" as `iperf -c` prints them: (lost, total).
fn server_report(out: &Output) -> (u64, u64) {
    let text = &out.stdout;
    let at = text
        .find("Server Report:")
        .unwrap_or_else(|| panic!("no server report\n{}", out.describe()));
    let line = text[at..]
        .lines()
        .find(|l| l.contains(" ms ") && l.contains('/'))
        .unwrap_or_else(|| panic!("no report line\n{}", out.describe()));
    line.split_whitespace()
        .filter_map(|w| w.split_once('/'))
        .find_map(|(l, t)| Some((l.parse().ok()?, t.parse().ok()?)))
        .unwrap_or_else(|| panic!("no lost/total in {line:?}\n{}", out.describe()))
}

/// A UDP test from `host`: `iperf -c` gets the server report, its counts are the server's
/// document's, and the client sent what the server counted (its final datagram included).
fn udp_report_agrees(host: &str, args: &[&str]) {
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    let (mut server, port) = serve(&[]);
    let out = iperf_c(&iperf2, host, port, &[&["-u", "-t", "1"], args].concat());
    out.expect_code(0);
    assert!(
        !out.stdout.contains("did not receive ack"),
        "{}",
        out.describe()
    );
    let (lost, total) = server_report(&out);
    let doc = one_document(&mut server);
    assert_eq!(uint(&doc, "end.sum.packets"), total, "{doc}");
    assert_eq!(uint(&doc, "end.sum.lost_packets"), lost, "{doc}");
    let sent: u64 = out
        .stdout
        .lines()
        .find_map(|l| l.split("Sent ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `Sent N datagrams`\n{}", out.describe()));
    // iperf 2 counts the first of its final datagrams as sent once more than the server counts.
    assert_eq!(sent, total + 1, "{}", out.describe());
}

#[test]
fn an_iperf2_udp_client_gets_the_server_report_with_the_servers_counts() {
    let _turn = crate::turns::take(module_path!());
    udp_report_agrees("127.0.0.1", &["-b", "10m"]);
}

#[test]
fn small_iperf2_datagrams_over_ipv6_get_their_report() {
    let _turn = crate::turns::take(module_path!());
    if !common::ipv6_loopback_or_skip("iperf 2 over IPv6") {
        return;
    }
    udp_report_agrees("::1", &["-l", "64", "-b", "1m", "-e"]);
}

/// A test the server's limits refuse is logged with the reason, and nothing runs for it.
#[test]
fn an_iperf2_test_over_the_servers_limits_is_refused_and_logged() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    let (mut server, port) = serve(&["--max-duration", "1"]);
    let _ = iperf_c(&iperf2, "127.0.0.1", port, &["-t", "3"]);
    server
        .proc()
        .wait_says("refused iperf 2 client 127.0.0.1", Duration::from_secs(10));
    let log = server.output_so_far();
    assert!(log.contains("--max-duration"), "{log}");
    assert!(server.documents().is_empty(), "{log}");
}

/// `--bounceback`: every request the client counts was answered with its 100 bytes, and the
/// server's document says as much both ways.
#[test]
fn iperf2_bounceback_requests_are_each_answered() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    let (mut server, port) = serve(&[]);
    let out = iperf_c(&iperf2, "127.0.0.1", port, &["--bounceback", "-t", "1"]);
    out.expect_code(0);
    // The summary line: "... 11=0.052/0.018/0.221/0.073 ms ...": the count before the `=`.
    let count: u64 = out
        .stdout
        .lines()
        .filter(|l| l.contains(" ms ") && l.contains("sec"))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.split_once("=")))
        .filter_map(|(n, _)| n.parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no bounceback count\n{}", out.describe()));
    assert!(count > 0, "{}", out.describe());
    let doc = one_document(&mut server);
    assert!(doc["end"]["sonde"]["error"].is_null(), "{doc}");
    assert_eq!(uint(&doc, "end.sum_received.bytes"), 100 * count, "{doc}");
    assert_eq!(
        uint(&doc, "end.sum_sent_bidir_reverse.bytes"),
        100 * count,
        "{doc}"
    );
    let notes = common::notes(&doc["end"]);
    let said = format!("iperf 2 bounceback: {count} requests answered");
    assert!(notes.iter().any(|n| *n == said), "{notes:?}");
}

/// `-d` (both at once) and `-r` (one after the other): the server connects back to the
/// client's `-L` port on the client's own address and sends; two documents, each direction's
/// bytes what the other end counted, less the header each side opens its stream with.
#[test]
fn dual_and_tradeoff_iperf2_tests_are_served_back_to_the_client() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    for flag in ["-d", "-r"] {
        let (mut server, port) = serve(&[]);
        let listen = common::free_port();
        let l = listen.to_string();
        let out = iperf_c(
            &iperf2,
            "127.0.0.1",
            port,
            &[flag, "-L", &l, "-t", "1", "-y", "C"],
        );
        out.expect_code(0);
        let docs = server.wait_documents(2, Duration::from_secs(10));
        assert_eq!(docs.len(), 2, "{flag}: {}", server.output_so_far());
        let lines: Vec<Vec<&str>> = out.stdout.lines().map(|l| l.split(',').collect()).collect();
        let bytes_to = |p: u16| -> u64 {
            lines
                .iter()
                .filter(|f| f.len() >= 9 && f[4] == p.to_string())
                .map(|f| f[7].parse::<u64>().unwrap())
                .sum()
        };
        let reverse = |d: &Value| uint(d, "start.test_start.reverse") == 1;
        let forward = docs
            .iter()
            .find(|d| !reverse(d))
            .expect("the client's test");
        let back = docs.iter().find(|d| reverse(d)).expect("the test back");
        assert_eq!(
            uint(forward, "end.sum_received.bytes") + HEADER,
            bytes_to(port),
            "{flag}: {forward}\n{}",
            out.describe()
        );
        assert_eq!(
            uint(back, "end.sum_sent.bytes") + HEADER,
            bytes_to(listen),
            "{flag}: {back}\n{}",
            out.describe()
        );
    }
}

/// A server that admits only clients holding its key does not open an iperf 2 port, which
/// would admit anyone: it says so and exits 1.
#[test]
fn a_keyed_server_refuses_to_open_an_iperf2_port() {
    let _turn = crate::turns::take(module_path!());
    let dir = common::TempDir::new("iperf2-keyed");
    let key = dir.file("key");
    common::random_key(&key);
    let port = common::free_port().to_string();
    let out = common::run(
        &[
            "server",
            "-p",
            &port,
            "--iperf2",
            "--psk-file",
            key.to_str().unwrap(),
        ],
        Duration::from_secs(10),
    );
    out.expect_code(1);
    assert!(
        out.stderr.contains("--iperf2 cannot be used"),
        "{}",
        out.describe()
    );
}
