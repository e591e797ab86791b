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
/// TCP tests are paced (iperf 2's `-b`, which the server's senders follow too): this module
/// runs beside others that check behaviour, and a loopback TCP test at full speed would take
/// both cores from them.
const PACE: &str = "200m";

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
    tcp_upload_agrees("127.0.0.1", &["-t", "1", "-b", PACE], 1);
}

#[test]
fn four_iperf2_streams_are_one_test_of_four() {
    let _turn = crate::turns::take(module_path!());
    tcp_upload_agrees("127.0.0.1", &["-t", "1", "-P", "4", "-b", PACE], 4);
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
        let out = iperf_c(
            &iperf2,
            "127.0.0.1",
            port,
            &[flag, "-t", "1", "-b", PACE, "-y", "C"],
        );
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
/// server's document says as much both ways (and a note how many).
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
        .rev()
        .filter(|l| l.contains(" ms ") && l.contains("sec"))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.split_once("=")))
        .filter_map(|(n, _)| n.parse().ok())
        .next()
        .unwrap_or_else(|| panic!("no bounceback count\n{}", out.describe()));
    assert!(count > 0, "{}", out.describe());
    let doc = one_document(&mut server);
    assert!(doc["end"]["sonde"]["error"].is_null(), "{doc}");
    // The client may end its time with a request on the wire whose answer it no longer
    // counts: the server answered `count` requests, or that one more.
    let answered = uint(&doc, "end.sum_received.bytes") / 100;
    assert!(
        answered == count || answered == count + 1,
        "the client counted {count}, the server answered {answered}: {doc}"
    );
    assert_eq!(
        uint(&doc, "end.sum_received.bytes"),
        100 * answered,
        "{doc}"
    );
    assert_eq!(
        uint(&doc, "end.sum_sent_bidir_reverse.bytes"),
        100 * answered,
        "{doc}"
    );
    let notes = common::notes(&doc["end"]);
    let said = format!("iperf 2 bounceback: {answered} requests answered");
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
            &[flag, "-L", &l, "-t", "1", "-b", PACE, "-y", "C"],
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

/// A UDP relay on loopback to `server` that drops each of the client's data datagrams with
/// probability 1/`one_in` (seeded, so the run repeats) and passes everything else both ways:
/// its drops are the ground truth of the loss the server must report.
struct LossyRelay {
    port: u16,
    dropped: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl LossyRelay {
    fn start(server: u16, one_in: u64) -> LossyRelay {
        use std::net::UdpSocket;
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(("127.0.0.1", server)).unwrap();
        for s in [&front, &back] {
            // Room for a scheduling pause of a loaded host, so the relay itself loses nothing.
            socket2::SockRef::from(s)
                .set_recv_buffer_size(8 << 20)
                .unwrap();
            s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        }
        let port = front.local_addr().unwrap().port();
        let (dropped, stop) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let client = Arc::new(std::sync::Mutex::new(None));
        let (f2, b2, c2, s2) = (
            front.try_clone().unwrap(),
            back.try_clone().unwrap(),
            client.clone(),
            stop.clone(),
        );
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !s2.load(Ordering::Relaxed) {
                if let Ok(n) = b2.recv(&mut buf) {
                    if let Some(to) = *c2.lock().unwrap() {
                        let _ = f2.send_to(&buf[..n], to);
                    }
                }
            }
        });
        let (d2, s3) = (dropped.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            while !s3.load(Ordering::Relaxed) {
                let Ok((n, from)) = front.recv_from(&mut buf) else {
                    continue;
                };
                *client.lock().unwrap() = Some(from);
                let seq = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // The first datagram carries the test; finals end it: never dropped.
                if seq > 1 && x.is_multiple_of(one_in) {
                    d2.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let _ = back.send(&buf[..n]);
            }
        });
        LossyRelay {
            port,
            dropped,
            stop,
        }
    }
}

impl Drop for LossyRelay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Over 10^5 datagrams through a link that drops 1 % of them, the loss the server reports
/// (and `iperf -c` prints) is the link's, within 0.3 percentage points, and never less than
/// what the link itself dropped.
#[test]
fn iperf2_udp_loss_through_a_one_percent_link_is_what_the_link_dropped() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    let (mut server, port) = serve(&[]);
    let relay = LossyRelay::start(port, 100);
    // 64-byte datagrams at 20 000 a second for 5 s.
    let out = iperf_c(
        &iperf2,
        "127.0.0.1",
        relay.port,
        &["-u", "-l", "64", "-b", "10240k", "-t", "5"],
    );
    out.expect_code(0);
    let (lost, total) = server_report(&out);
    let doc = one_document(&mut server);
    let dropped = relay.dropped.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(
        (
            uint(&doc, "end.sum.lost_packets"),
            uint(&doc, "end.sum.packets")
        ),
        (lost, total),
        "{doc}"
    );
    assert!(total >= 90_000, "{total} datagrams\n{}", out.describe());
    assert!(
        lost >= dropped,
        "server lost {lost}, the link dropped {dropped}"
    );
    let (pct, link_pct) = (
        100.0 * lost as f64 / total as f64,
        100.0 * dropped as f64 / total as f64,
    );
    eprintln!("{total} datagrams: the link dropped {dropped} ({link_pct:.3} %), the server reported {lost} ({pct:.3} %)");
    assert!(
        (pct - 1.0).abs() <= 0.3,
        "{pct:.3} % lost of {total}\n{}",
        out.describe()
    );
}
