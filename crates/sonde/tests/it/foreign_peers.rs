//! Peers that are not sonde, on loopback: a real `iperf3 -s`, a real iperf 2 (`iperf -s`,
//! `iperf -c`) and an echo service. sonde's clients (`capacity`, `profile`, `btc`) say which
//! peer answered and what to use instead, rather than "control frame length 150994944 is
//! outside 1..=262144"; `sonde server` says an iperf 2 client connected, rather than a JSON
//! length read out of iperf 2's header.
//!
//! iperf3 and iperf 2 must be installed; a test that lacks one says why and passes, unless
//! `SONDE_REQUIRE_ALL=1` (CI), where it fails.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::{listeners, run, Output, Server};
use crate::peers;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

/// The sonde clients that speak sonde's control protocol: each one's subcommand words.
const CLIENTS: [&[&str]; 3] = [&["capacity"], &["profile", "run"], &["btc"]];

/// `sonde CMD... 127.0.0.1 -p PORT` for a client of [`CLIENTS`].
fn client_to(cmd: &[&str], port: u16) -> Output {
    let port = port.to_string();
    let args: Vec<&str> = cmd
        .iter()
        .copied()
        .chain(["127.0.0.1", "-p", &port])
        .collect();
    run(&args, DEADLINE)
}

/// The client failed, naming the peer with `said`, and no frame-length jargon.
#[track_caller]
fn names_the_peer(out: &Output, said: &str) {
    out.expect_code(1);
    assert!(
        out.stderr.contains(said),
        "want {said:?}: {}",
        out.describe()
    );
    assert!(
        !out.stderr.contains("control frame length"),
        "{}",
        out.describe()
    );
}

#[test]
fn sonde_clients_to_an_iperf3_server_say_it_is_iperf3_and_what_tests_it() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf3) = peers::debian() else {
        return;
    };
    for cmd in CLIENTS {
        let (port, server) = iperf3.serve_with(&["-1"], Duration::from_secs(15));
        let out = client_to(cmd, port);
        names_the_peer(&out, &format!("127.0.0.1:{port} is an iperf3 server"));
        // The advice fits every command: what tests an iperf3 server, not a flag of this one.
        assert!(
            out.stderr.contains("`sonde client --iperf3`"),
            "{}",
            out.describe()
        );
        drop(server);
    }
}

#[test]
fn sonde_clients_to_an_iperf2_server_say_it_closed_without_a_word() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    let (port, _server) = peers::serve_iperf2(&iperf2, &[]);
    for cmd in CLIENTS {
        let out = client_to(cmd, port);
        names_the_peer(&out, "closed the connection without a word");
        assert!(out.stderr.contains("iperf 2"), "{}", out.describe());
    }
}

#[test]
fn sonde_clients_to_an_echo_service_say_it_echoes() {
    let _turn = crate::turns::take(module_path!());
    let port = listeners::echo_service();
    for cmd in CLIENTS {
        let out = client_to(cmd, port);
        names_the_peer(&out, &format!("127.0.0.1:{port} is an echo service"));
    }
}

#[test]
fn a_sonde_server_shown_an_iperf2_client_logs_that_it_is_iperf2() {
    let _turn = crate::turns::take(module_path!());
    let Some(iperf2) = peers::iperf2() else {
        return;
    };
    let mut srv = Server::start(&[]);
    let args: Vec<String> = ["-c", "127.0.0.1", "-p", &srv.port.to_string(), "-t", "1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    iperf2.run(&args, Duration::from_secs(10));
    srv.proc()
        .wait_says("an iperf 2 client connected", Duration::from_secs(5));
    let log = srv.output_so_far();
    assert!(!log.contains("JSON message of"), "{log}");
    assert!(log.contains("`sonde server --iperf2`"), "{log}");
}
