//! `sonde capacity` through the real binary on loopback: every train of the plan arrives
//! with kernel stamps, and since nothing on a loopback path slows a train below the sender's
//! pace the verdict is that the host is the limit, not a capacity figure; usage errors come
//! first. (Shaped links are checked as root in `capacity_lab.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use common::{run, Proc, Server};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

/// A small plan (5 short trains, one long train of 100) against `host`.
fn small_run(host: &str, port: &str, extra: &[&str]) -> common::Output {
    let mut args = vec![
        "capacity",
        host,
        "-p",
        port,
        "--short-trains",
        "5",
        "--long-trains",
        "1",
        "--long-len",
        "100",
    ];
    args.extend_from_slice(extra);
    run(&args, DEADLINE)
}

#[test]
fn loopback_trains_all_arrive_and_the_host_is_the_limit() {
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let t0 = Instant::now();
    let out = run(
        &[
            "capacity",
            "127.0.0.1",
            "-p",
            &port,
            "--short-trains",
            "20",
            "--long-trains",
            "3",
            "--long-len",
            "300",
            "-J",
        ],
        DEADLINE,
    );
    out.expect_code(0);
    let took = t0.elapsed();
    let doc = out.json();
    let e = &doc["estimate"];
    assert_eq!(e["short"]["trains"], 20, "{}", out.describe());
    assert_eq!(e["long"]["trains"], 3);
    // Loopback loses nothing.
    assert_eq!(e["short"]["clean"], 20);
    assert_eq!(e["long"]["clean"], 3);
    assert_eq!(doc["family"], "IPv4");
    assert_eq!(doc["ip_bytes"], 1500);
    assert_eq!(doc["payload_bytes"], 1472);
    assert_eq!(doc["partial"], false);
    // Loopback passes a train as fast as the sender hands it over.
    assert_eq!(doc["verdict"], "host-limited", "{}", out.describe());
    let adr = e["adr_bps"].as_f64().unwrap();
    let dep = e["departure_bps"].as_f64().unwrap();
    eprintln!(
        "loopback: ADR {:.0} Mbit/s, departure {:.0} Mbit/s, arrival share {}, short-train CoV {}, {:.2} s",
        adr / 1e6,
        dep / 1e6,
        e["arrival_share"],
        e["cov"],
        took.as_secs_f64()
    );
    assert!(adr > 100e6 && dep > 100e6, "{adr} {dep}");
    // The table says so in words, with the overhead model.
    let table = small_run("127.0.0.1", &port, &[]);
    table.expect_code(0);
    assert!(
        table.stdout.contains("Verdict: host-limited"),
        "{}",
        table.describe()
    );
    assert!(table
        .stdout
        .contains("Overhead model: IP = UDP payload 1472 B"));
}

#[test]
fn over_ipv6_the_default_datagram_still_makes_1500_byte_packets() {
    if !common::ipv6_loopback_available() {
        eprintln!("skipping: no IPv6 loopback");
        return;
    }
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let out = small_run("::1", &port, &["-J"]);
    out.expect_code(0);
    let doc = out.json();
    assert_eq!(doc["family"], "IPv6");
    assert_eq!(doc["payload_bytes"], 1452);
    assert_eq!(doc["ip_bytes"], 1500);
    assert_eq!(doc["estimate"]["long"]["clean"], 1);
}

#[test]
fn usage_errors_come_before_any_traffic() {
    for bad in [
        &["capacity", "127.0.0.1", "--short-len", "1"][..],
        &["capacity", "127.0.0.1", "--long-trains", "0"],
        &["capacity", "127.0.0.1", "--spacing", "0"],
        &["capacity", "127.0.0.1", "-4", "-6"],
    ] {
        run(bad, DEADLINE).expect_code(2);
    }
    // Nothing listening: exit 1, and the document says why.
    let closed = common::free_port().to_string();
    let out = run(&["capacity", "127.0.0.1", "-p", &closed, "-J"], DEADLINE);
    out.expect_code(1);
    assert_eq!(out.json()["partial"], true);
}

#[test]
fn ctrl_c_keeps_the_estimate_of_the_trains_that_arrived() {
    let server = Server::start(&[]);
    let port = server.port.to_string();
    // Two seconds between trains: 20 short trains would take 40 s.
    let proc = Proc::spawn(&[
        "capacity",
        "127.0.0.1",
        "-p",
        &port,
        "--short-trains",
        "20",
        "--spacing",
        "2000",
        "-J",
    ]);
    std::thread::sleep(Duration::from_millis(2500));
    proc.signal(libc::SIGINT);
    let out = proc.wait(Duration::from_secs(20));
    out.expect_code(1);
    let doc = out.json();
    assert_eq!(doc["partial"], true);
    let got = doc["estimate"]["short"]["trains"].as_u64().unwrap();
    assert!((1..20).contains(&got), "{got} trains: {}", out.describe());
    assert_eq!(doc["estimate"]["long"]["trains"], 0);
}
