//! Per-source limits of `sonde server` (issue 16), through the real binaries on loopback:
//! `--max-test-rate` refuses the tests beyond it with a message that names the limit (sonde
//! tests and tcp-rr alike), `--max-conn-rate` closes the connections beyond it at once and says
//! so in the log while a later client is served, and `--max-probe-rate` leaves the latency
//! probes beyond it unanswered. An iperf3 client beyond the test rate gets iperf3's refusal.
//! `--max-sessions-per-source` closes control connections from an address beyond its share
//! at once, while other addresses are served and the server keeps few threads.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;
use crate::peers;

use common::{num, run, Server};
use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn tests_beyond_the_per_source_test_rate_are_refused_with_the_reason() {
    let _turn = crate::turns::take(module_path!());
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
    let _turn = crate::turns::take(module_path!());
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
    let _turn = crate::turns::take(module_path!());
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
    let _turn = crate::turns::take(module_path!());
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

/// A connection from `source` (a loopback address) that sends an iperf3 cookie and then
/// nothing: an iperf3 control connection waiting for its test parameters.
fn silent_iperf3_control(source: [u8; 4], port: u16) -> TcpStream {
    use socket2::{Domain, Socket, Type};
    use std::io::Write;
    use std::net::{Ipv4Addr, SocketAddr};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&SocketAddr::from((Ipv4Addr::from(source), 0)).into())
        .unwrap();
    s.connect(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())
        .unwrap();
    let mut s: TcpStream = s.into();
    let cookie: Vec<u8> = (0..36).map(|i| b'a' + (i % 26) as u8).chain([0]).collect();
    s.write_all(&cookie).unwrap();
    s
}

/// Threads of process `pid` now.
fn threads(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn one_address_cannot_hold_more_than_its_share_of_control_connections() {
    let _turn = crate::turns::take(module_path!());
    let mut server = Server::start(&["--max-sessions-per-source", "4"]);
    let pid = server.proc().pid();
    // 127.0.0.2 parks 4 iperf3 control connections (each waits 5 s for its parameters), then
    // 46 more: those are refused and closed at once.
    let held: Vec<TcpStream> = (0..4)
        .map(|_| silent_iperf3_control([127, 0, 0, 2], server.port))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut extra: Vec<TcpStream> = (0..46)
        .map(|_| silent_iperf3_control([127, 0, 0, 2], server.port))
        .collect();
    let closed = extra
        .iter_mut()
        .map(|c| drains_to_close_within(c, Duration::from_secs(2)))
        .filter(|&closed| closed)
        .count();
    assert_eq!(
        closed, 46,
        "connections beyond the 4 held must be closed at once"
    );
    let busy_threads = threads(pid);
    // A sonde client from the busy address gets the refusal, naming the limit (while the 4
    // are still held: they time out 5 s after their cookie).
    let ctl = sonde_from([127, 0, 0, 2], &server);
    assert_eq!(ctl.status.code(), Some(1), "{ctl:?}");
    let err = ctl.stderr_lc();
    assert!(
        err.contains("127.0.0.2") && err.contains("--max-sessions-per-source"),
        "{ctl:?}"
    );
    // Meanwhile another address is served as usual.
    let out = server.client(&["-n", "64K"], DEADLINE);
    assert!(out.status.success(), "{out:?}");
    drop(held);
    drop(extra);
    // Once its connections are gone, that address is served again.
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        let again = sonde_from([127, 0, 0, 2], &server);
        if again.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "never served again: {again:?}");
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        busy_threads < 30,
        "{busy_threads} server threads while 50 connections from one address were open"
    );
    assert!(server.output_so_far().contains("--max-sessions-per-source"));
}

/// Whether the server closed `s` within `within`, reading past whatever it sent first (an
/// iperf3 server answers a refused cookie with a state byte and an error before closing).
fn drains_to_close_within(s: &mut TcpStream, within: Duration) -> bool {
    let end = Instant::now() + within;
    let mut b = [0u8; 256];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => {
                return !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                )
            }
        }
    }
}

/// `sonde client 127.0.0.1 -n 64K` from a source address `-B`.
fn sonde_from(source: [u8; 4], server: &Server) -> common::Output {
    let src = std::net::Ipv4Addr::from(source).to_string();
    server.client(&["-n", "64K", "-B", &src], DEADLINE)
}
