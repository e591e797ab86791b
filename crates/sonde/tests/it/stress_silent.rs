//! Regression tests: a TCP stress test that moves no data fails. `--echo` or `--chargen`
//! pointed at a discard service (sonde's own, or any listener that reads and drops, as an
//! iperf2 server does) used to get 0 bytes back on every connection, print "0 bytes came back
//! different" and exit 0.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::run;
use crate::common::services::{Services, DEADLINE};
use std::io::Read;
use std::net::TcpListener;

/// A discard peer that is not sonde: a std listener that reads every connection and drops it.
fn drop_everything() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = s;
                let mut buf = vec![0u8; 64 * 1024];
                while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    port
}

fn stress(port: u16, mode: &str, extra: &[&str]) -> crate::common::Output {
    let port = port.to_string();
    let mut args = vec![
        "stress",
        "127.0.0.1",
        "-p",
        &port,
        mode,
        "-P",
        "2",
        "-t",
        "1",
    ];
    args.extend_from_slice(extra);
    run(&args, DEADLINE)
}

#[test]
fn an_echo_test_against_a_discard_service_fails_and_says_nothing_came_back() {
    let _turn = crate::turns::take(module_path!());
    let s = Services::start(&[]);
    let discard: u16 = s.port("discard", "TCP").parse().unwrap();
    for port in [discard, drop_everything()] {
        let out = stress(port, "--echo", &[]);
        out.expect_code(1);
        assert!(
            out.stderr.contains("2 of 2 connections received nothing"),
            "{}",
            out.describe()
        );
        assert!(
            out.stdout.contains("Echo: nothing came back"),
            "{}",
            out.describe()
        );
        assert!(
            !out.stdout.contains("0 bytes came back different"),
            "{}",
            out.describe()
        );
    }
}

#[test]
fn a_chargen_test_against_a_discard_service_fails() {
    let _turn = crate::turns::take(module_path!());
    let s = Services::start(&[]);
    let discard: u16 = s.port("discard", "TCP").parse().unwrap();
    for port in [discard, drop_everything()] {
        let out = stress(port, "--chargen", &["-J"]);
        out.expect_code(1);
        assert_eq!(out.json()["end"]["received_bytes"], 0, "{}", out.describe());
        assert!(
            out.stderr.contains("2 of 2 connections received nothing"),
            "{}",
            out.describe()
        );
    }
}

#[test]
fn echo_and_chargen_against_their_own_services_still_pass() {
    let _turn = crate::turns::take(module_path!());
    let s = Services::start(&[]);
    for mode in ["echo", "chargen", "discard"] {
        let out = s.stress(mode, &["-P", "2", "-t", "1"]);
        out.expect_code(0);
        assert!(!out.stderr.contains("nothing"), "{}", out.describe());
    }
}
