//! Integration tests of `sonde latency`, `sonde rrul` and `sonde compare-ip`: the real binary
//! over 127.0.0.1 and ::1, every mode, the three output formats, Ctrl-C mid-run.
//!
//! Each test runs at most a few seconds of probing; the file takes well under a minute.
//! ICMP needs an unprivileged ICMP socket or root; when neither is available the ICMP tests
//! print why and pass, unless `SONDE_REQUIRE_ALL=1` (CI), where they fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{arr, at, num, require_all, run, text, uint, Proc, Server};
use serde_json::Value;
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(30);

/// Both loopback families, or IPv4 alone when IPv6 loopback is missing (fails under
/// `SONDE_REQUIRE_ALL=1`).
fn loopbacks() -> Vec<&'static str> {
    if common::ipv6_loopback_available() {
        vec!["127.0.0.1", "::1"]
    } else {
        assert!(!require_all(), "IPv6 loopback is not available");
        eprintln!("skipping ::1: IPv6 loopback is not available");
        vec!["127.0.0.1"]
    }
}

/// `sonde latency ARGS -J`, exit 0, the document.
#[track_caller]
fn latency_json(args: &[String]) -> Value {
    let mut a = vec!["latency".to_string()];
    a.extend(args.iter().cloned());
    a.push("-J".into());
    let out = run(&a, DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    assert!(doc["error"].is_null(), "{}", out.describe());
    assert_eq!(
        at(&doc, "end.partial"),
        &Value::Bool(false),
        "{}",
        out.describe()
    );
    doc
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Checks the summary every mode shares.
#[track_caller]
fn check_rtt(doc: &Value, sent: u64) {
    assert_eq!(uint(doc, "end.loss.sent"), sent);
    assert_eq!(
        uint(doc, "end.loss.received"),
        sent,
        "loopback loses nothing"
    );
    let min = num(doc, "end.rtt.min_ms");
    let med = num(doc, "end.rtt.median_ms");
    let p99 = num(doc, "end.rtt.p99_ms");
    let max = num(doc, "end.rtt.max_ms");
    assert!(
        0.0 <= min && min <= med && med <= p99 && p99 <= max,
        "{}",
        at(doc, "end.rtt")
    );
    assert!(med < 50.0, "loopback median RTT {med} ms");
    assert!(num(doc, "end.rtt.variance_ms2") >= 0.0);
    assert!(at(doc, "end.rtt.p999_ms").is_number() && at(doc, "end.rtt.stddev_ms").is_number());
}

#[test]
fn udp_probes_over_both_families_with_loss_split_and_estimated_one_way() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    for host in loopbacks() {
        let doc = latency_json(&s(&[
            host,
            "-p",
            &srv.port.to_string(),
            "-c",
            "40",
            "-i",
            "5ms",
            "--report-interval",
            "0.1",
            "--late",
            "1000",
        ]));
        check_rtt(&doc, 40);
        let family = if host.contains(':') { "IPv6" } else { "IPv4" };
        assert_eq!(text(&doc, "start.family"), family);
        assert_eq!(text(&doc, "start.mode"), "udp");
        assert!(text(&doc, "start.timestamping").contains("receive"));
        assert_eq!(uint(&doc, "end.loss.server_received"), 40);
        assert_eq!(uint(&doc, "end.loss.lost_up"), 0);
        assert_eq!(uint(&doc, "end.loss.lost_down"), 0);
        assert_eq!(uint(&doc, "end.loss.duplicates"), 0);
        assert_eq!(uint(&doc, "end.loss.late"), 0);
        // Without --clock-synced one-way delays are estimates, never negative.
        assert_eq!(text(&doc, "end.one_way.basis"), "estimated");
        assert!(num(&doc, "end.one_way.up.min_ms") >= 0.0);
        assert!(num(&doc, "end.one_way.down.min_ms") >= 0.0);
        assert!(num(&doc, "end.schedule.error_percent") >= 0.0);
        assert!(uint(&doc, "end.ipdv.pairs") > 0);
        let ivs = arr(&doc, "intervals");
        assert!(!ivs.is_empty());
        let sent: u64 = ivs.iter().map(|i| uint(i, "sent")).sum();
        assert_eq!(sent, 40, "interval lines account for every probe");
    }
}

/// A server on all addresses answers from the one each probe and each UDP test was sent to:
/// 127.0.0.2 is this host's too (all of 127/8 is), but replies from 127.0.0.1, where the
/// routing table would send them from, are dropped by a client connected to 127.0.0.2.
#[test]
fn a_server_answers_from_the_address_it_was_asked_at() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let port = srv.port.to_string();
    let doc = latency_json(&s(&["127.0.0.2", "-p", &port, "-c", "20", "-i", "5ms"]));
    check_rtt(&doc, 20);
    let out = run(
        &s(&[
            "client",
            "127.0.0.2",
            "-p",
            &port,
            "-u",
            "-b",
            "10m",
            "-t",
            "1",
            "-J",
        ]),
        DEADLINE,
    );
    out.expect_code(0);
    let doc = out.json();
    assert!(uint(&doc, "end.sum.packets") > 500, "{}", out.describe());
    assert_eq!(uint(&doc, "end.sum.lost_packets"), 0, "{}", out.describe());
}

#[test]
fn udp_clock_synced_on_one_host_is_measured() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let doc = latency_json(&s(&[
        "127.0.0.1",
        "-p",
        &srv.port.to_string(),
        "-c",
        "10",
        "-i",
        "5ms",
        "--clock-synced",
    ]));
    // Same host, same clock: measured one-way delays, never negative.
    assert_eq!(text(&doc, "end.one_way.basis"), "measured");
    assert!(num(&doc, "end.one_way.up.min_ms") >= 0.0);
}

#[test]
fn udp_flood_with_window_and_large_probes() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    for host in loopbacks() {
        let doc = latency_json(&s(&[
            host,
            "-p",
            &srv.port.to_string(),
            "-c",
            "3000",
            "--flood",
            "--window",
            "8",
            "-s",
            "1400",
        ]));
        check_rtt(&doc, 3000);
        assert_eq!(at(&doc, "start.flood"), &Value::Bool(true));
        assert_eq!(uint(&doc, "start.size"), 1400);
        assert!(num(&doc, "end.rate_per_second") > 1000.0);
    }
}

#[test]
fn udp_without_server_reports_total_loss_and_fails() {
    let _turn = crate::turns::take(module_path!());
    let port = common::free_port().to_string();
    let out = run(
        &s(&[
            "latency",
            "127.0.0.1",
            "-p",
            &port,
            "-c",
            "3",
            "-i",
            "10ms",
            "--wait",
            "100ms",
        ]),
        DEADLINE,
    );
    out.expect_code(1);
    assert!(
        out.stdout.contains("3 sent, 0 answered, 3 lost"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr_lc().contains("no probe was answered"),
        "{}",
        out.describe()
    );
    // Loopback answers "port unreachable": the run says nothing listened, not that the
    // path lost the probes.
    assert!(
        out.stderr.contains("nothing listens on UDP 127.0.0.1:"),
        "{}",
        out.describe()
    );
    assert!(out.stdout.contains("refused: "), "{}", out.describe());
}

#[test]
fn icmp_echo_over_both_families() {
    let _turn = crate::turns::take(module_path!());
    for host in loopbacks() {
        let out = run(
            &s(&["latency", "--icmp", host, "-c", "20", "-i", "5ms", "-J"]),
            DEADLINE,
        );
        if out.code() != Some(0) && out.stderr_lc().contains("cannot open an icmp socket") {
            assert!(
                !require_all(),
                "ICMP unavailable under SONDE_REQUIRE_ALL=1\n{}",
                out.describe()
            );
            eprintln!("skipping ICMP over {host}: {}", out.stderr.trim());
            continue;
        }
        out.expect_code(0);
        let doc = out.json();
        check_rtt(&doc, 20);
        assert_eq!(text(&doc, "start.mode"), "icmp");
        assert!(text(&doc, "start.size_meaning").contains("8-byte header"));
        assert!(
            at(&doc, "end.one_way").is_null(),
            "ICMP has no one-way figures"
        );
    }
}

/// A TCP listener that accepts (and drops) connections until the guard ends.
fn acceptor(host: &str) -> (u16, thread::JoinHandle<()>) {
    let l = TcpListener::bind((host, 0)).expect("bind test listener");
    l.set_nonblocking(true).expect("nonblocking");
    let port = l.local_addr().expect("addr").port();
    let h = thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            match l.accept() {
                Ok(_) => {}
                Err(_) => thread::sleep(Duration::from_millis(1)),
            }
        }
    });
    (port, h)
}

#[test]
fn tcp_connect_to_a_plain_listener() {
    let _turn = crate::turns::take(module_path!());
    for host in loopbacks() {
        let (port, _h) = acceptor(host);
        let target = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let doc = latency_json(&s(&["--tcp-connect", &target, "-c", "30", "-i", "5ms"]));
        check_rtt(&doc, 30);
        assert_eq!(text(&doc, "start.mode"), "tcp_connect");
    }
}

#[test]
fn tcp_rr_transactions() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    for host in loopbacks() {
        let doc = latency_json(&s(&[
            "--tcp-rr",
            host,
            "-p",
            &srv.port.to_string(),
            "-c",
            "500",
            "--flood",
            "-s",
            "100",
        ]));
        check_rtt(&doc, 500);
        assert_eq!(text(&doc, "start.mode"), "tcp_rr");
        assert!(
            num(&doc, "end.rate_per_second") > 100.0,
            "transactions per second"
        );
    }
}

#[test]
fn json_stream_and_table_formats() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let port = srv.port.to_string();
    let out = run(
        &s(&[
            "latency",
            "127.0.0.1",
            "-p",
            &port,
            "-c",
            "10",
            "-i",
            "20ms",
            "--report-interval",
            "0.1",
            "--json-stream",
        ]),
        DEADLINE,
    );
    out.expect_code(0);
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(text(&events[0], "event"), "start");
    assert!(events.iter().any(|e| e["event"] == "interval"));
    assert_eq!(text(events.last().expect("events"), "event"), "end");
    let out = run(
        &s(&["latency", "127.0.0.1", "-p", &port, "-c", "5", "-i", "10ms"]),
        DEADLINE,
    );
    out.expect_code(0);
    for want in [
        "UDP probes to 127.0.0.1",
        "5 sent, 5 answered, 0 lost",
        "\nRTT ",
        "p99.9",
        "\nup (est.) ",
        "one-way delay (ESTIMATED)",
        "lost up",
    ] {
        assert!(
            out.stdout.contains(want),
            "missing {want:?}\n{}",
            out.describe()
        );
    }
}

#[test]
fn ctrl_c_mid_run_prints_partial_statistics() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    for json in [false, true] {
        let mut args = s(&[
            "latency",
            "127.0.0.1",
            "-p",
            &srv.port.to_string(),
            "-t",
            "20",
            "-i",
            "10ms",
        ]);
        if json {
            args.push("-J".into());
        }
        let p = Proc::spawn(&args);
        thread::sleep(Duration::from_millis(800));
        p.signal(libc::SIGINT);
        let out = p.wait(Duration::from_secs(10));
        out.expect_code(1);
        assert!(out.elapsed < Duration::from_secs(5), "{}", out.describe());
        if json {
            let doc = out.json();
            assert_eq!(at(&doc, "end.partial"), &Value::Bool(true));
            assert!(uint(&doc, "end.loss.received") > 10, "{}", out.describe());
        } else {
            assert!(out.stdout.contains("partial"), "{}", out.describe());
            assert!(out.stdout.contains("\nRTT "), "{}", out.describe());
        }
    }
}

#[test]
fn usage_errors() {
    let _turn = crate::turns::take(module_path!());
    for bad in [
        s(&["latency", "h", "--window", "4"]),
        s(&["latency", "--tcp-connect", "h"]),
        s(&["latency", "h", "-s", "8"]),
        s(&["latency", "h", "-i", "10us"]),
        s(&["latency", "--icmp", "h", "--clock-synced"]),
        s(&["latency", "--icmp", "--tcp-rr", "h"]),
    ] {
        let out = run(&bad, Duration::from_secs(10));
        out.expect_code(2);
    }
}

#[test]
fn rrul_short_phases() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let out = run(
        &s(&[
            "rrul",
            "127.0.0.1",
            "-p",
            &srv.port.to_string(),
            "--phase",
            "1",
            "--step",
            "50ms",
            "-P",
            "2",
            "-J",
        ]),
        DEADLINE,
    );
    out.expect_code(0);
    let doc = out.json();
    let phases = arr(&doc, "phases");
    let names: Vec<&str> = phases.iter().map(|p| text(p, "name")).collect();
    assert_eq!(names, ["idle", "download", "upload", "bidirectional"]);
    assert!(at(&phases[0], "download_bps").is_null());
    assert!(num(&phases[1], "download_bps") > 0.0);
    assert!(num(&phases[2], "upload_bps") > 0.0);
    assert!(num(&phases[3], "download_bps") > 0.0 && num(&phases[3], "upload_bps") > 0.0);
    for p in phases {
        assert!(uint(p, "latency.loss.received") > 5, "{p}");
        assert!(at(p, "median_inflation_ms").is_number());
    }
}

/// Issue 17: with nothing listening, every phase's load and probes fail; that must be a failed
/// run (exit 1, the error in `-J`), not 100 % loss reported as success.
#[test]
fn rrul_against_nothing_fails_with_the_error_in_json() {
    let _turn = crate::turns::take(module_path!());
    let port = common::free_port();
    let out = run(
        &s(&[
            "rrul",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "--phase",
            "0.6",
            "--step",
            "100ms",
            "--connect-timeout",
            "1000",
            "-J",
        ]),
        DEADLINE,
    );
    out.expect_code(1);
    let doc = out.json();
    let err = text(&doc, "error");
    assert!(
        err.contains(&format!("nothing listens on UDP 127.0.0.1:{port}")),
        "{err}"
    );
    assert!(out.stderr.contains("error"), "{}", out.describe());
}

#[test]
fn compare_ip_side_by_side() {
    let _turn = crate::turns::take(module_path!());
    if !common::ipv6_loopback_available() {
        assert!(!require_all(), "IPv6 loopback is not available");
        eprintln!("skipping compare-ip: no IPv6 loopback");
        return;
    }
    let srv = Server::start(&[]);
    let out = run(
        &s(&[
            "compare-ip",
            "localhost",
            "-p",
            &srv.port.to_string(),
            "--ipv4-addr",
            "127.0.0.1",
            "--ipv6-addr",
            "::1",
            "-c",
            "40",
            "-i",
            "5ms",
            "--throughput-time",
            "1",
            "-J",
        ]),
        DEADLINE,
    );
    assert!(matches!(out.code(), Some(0 | 3 | 4)), "{}", out.describe());
    let doc = out.json();
    assert_eq!(text(&doc, "ipv4.address"), "127.0.0.1");
    assert_eq!(text(&doc, "ipv6.address"), "::1");
    for f in ["ipv4", "ipv6"] {
        assert!(num(&doc, &format!("{f}.rtt.median_ms")) >= 0.0);
        assert!(num(&doc, &format!("{f}.throughput_bps")) > 0.0);
    }
    assert!(at(&doc, "latency.p_value").is_number());
    assert!(!text(&doc, "verdict.summary").is_empty());
    assert_eq!(at(&doc, "verdict.schema"), 1);
    // A family with no server: exit 1 and the failure named.
    let port = common::free_port().to_string();
    let out = run(
        &s(&[
            "compare-ip",
            "127.0.0.1",
            "-p",
            &port,
            "--ipv6-addr",
            "::1",
            "-c",
            "3",
            "-i",
            "5ms",
        ]),
        DEADLINE,
    );
    out.expect_code(1);
    assert!(
        out.stdout.contains("verdict: both IPv4 and IPv6 failed"),
        "{}",
        out.describe()
    );
    // Each family's first round went unanswered (the port refused it): its other two
    // rounds were not sent, and it says so.
    assert_eq!(
        out.stdout
            .matches("the other 2 probe rounds were not sent")
            .count(),
        2,
        "{}",
        out.describe()
    );
}
