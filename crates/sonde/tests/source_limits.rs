//! Per-source limits of `sonde server` (issue 16), through the real binaries on loopback:
//! `--max-test-rate` refuses the tests beyond it with a message that names the limit (sonde
//! tests and tcp-rr alike), `--max-conn-rate` closes the connections beyond it at once and says
//! so in the log while a later client is served, and `--max-probe-rate` leaves the latency
//! probes beyond it unanswered. An iperf3 client beyond the test rate gets iperf3's refusal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;
mod peers;

use common::{num, run, Server};
use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn tests_beyond_the_per_source_test_rate_are_refused_with_the_reason() {
    let server = Server::start(&["--max-test-rate", "2"]);
    for _ in 0..2 {
        let out = server.client(&["-n", "64K"], DEADLINE);
        assert!(out.status.success(), "{out:?}");
    }
    let out = server.client(&["-n", "64K"], DEADLINE);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = out.stderr_lc();
    assert!(
        err.contains("too many tests from 127.0.0.1") && err.contains("--max-test-rate"),
        "{out:?}"
    );
    // A tcp-rr run is a test too.
    let port = server.port.to_string();
    let rr = run(
        &["latency", "127.0.0.1", "-p", &port, "--tcp-rr", "-c", "5"],
        DEADLINE,
    );
    assert_eq!(rr.status.code(), Some(1), "{rr:?}");
    assert!(rr.stderr_lc().contains("--max-test-rate"), "{rr:?}");
}

/// Whether the server closed `s` within `within` (end of file or a reset).
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut b = [0u8; 1];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

#[test]
fn connections_beyond_the_per_source_rate_are_closed_at_once_and_logged() {
    let server = Server::start(&["--max-conn-rate", "5"]);
    // Let the bucket refill after the readiness check's connection.
    std::thread::sleep(Duration::from_millis(1200));
    let addr = format!("127.0.0.1:{}", server.port);
    let mut conns: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    let started = Instant::now();
    let closed = conns
        .iter_mut()
        .filter_map(|c| closed_within(c, Duration::from_millis(300)).then_some(()))
        .count();
    assert!(
        (13..=16).contains(&closed),
        "{closed} of 20 closed at once (5 per second allowed, 5 at once); {:?} spent",
        started.elapsed()
    );
    drop(conns);
    // After a second and a half the source has tokens again: a normal test passes.
    std::thread::sleep(Duration::from_millis(1500));
    let out = server.client(&["-n", "64K"], DEADLINE);
    assert!(out.status.success(), "{out:?}");
    let deadline = Instant::now() + Duration::from_secs(3);
    while !server.output_so_far().contains("--max-conn-rate") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        server.output_so_far().contains(
            "closed at once because their address opened connections faster than --max-conn-rate"
        ),
        "{}",
        server.output_so_far()
    );
}

/// 200 latency probes 1 ms apart to `server`: the run's -J document.
fn probe_200(server: &Server) -> serde_json::Value {
    let port = server.port.to_string();
    let args = [
        "latency",
        "127.0.0.1",
        "-p",
        &port,
        "-c",
        "200",
        "-i",
        "1ms",
        "-J",
    ];
    let out = run(&args, DEADLINE);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[test]
fn latency_probes_beyond_the_per_source_rate_go_unanswered() {
    // 200 probes in about 0.2 s: 50 at once plus about 10 refilled are answered.
    let doc = probe_200(&Server::start(&["--max-probe-rate", "50"]));
    let received = num(&doc, "end.loss.received");
    // The bucket refills at 50 per second for as long as the run took (longer on a busy host).
    let most = 50.0 + 50.0 * num(&doc, "end.seconds") + 2.0;
    assert!(
        received >= 50.0 && received <= most.min(150.0),
        "{received} of 200 answered (at most {most:.0} allowed): {doc}"
    );
    // Without the limit every probe is answered.
    let doc = probe_200(&Server::start(&[]));
    assert_eq!(num(&doc, "end.loss.received"), 200.0, "{doc}");
}

#[test]
fn an_iperf3_client_beyond_the_test_rate_is_denied() {
    let Some(iperf3) = peers::debian() else {
        return;
    };
    let server = Server::start(&["--max-test-rate", "1"]);
    let args: Vec<String> = [
        "-c",
        "127.0.0.1",
        "-p",
        &server.port.to_string(),
        "-n",
        "64K",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let first = iperf3.run(&args, DEADLINE);
    assert!(first.status.success(), "{first:?}");
    let second = iperf3.run(&args, DEADLINE);
    assert_ne!(second.status.code(), Some(0), "{second:?}");
    let deadline = Instant::now() + Duration::from_secs(3);
    while !server.output_so_far().contains("refused iperf3 client") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        server.output_so_far().contains("--max-test-rate"),
        "{}",
        server.output_so_far()
    );
}
