//! Regression tests: a TCP stress test that moves no data fails. `--echo` or `--chargen`
//! pointed at a discard service (sonde's own, or any listener that reads and drops, as an
//! iperf2 server does) used to get 0 bytes back on every connection, print "0 bytes came back
//! different" and exit 0. Of the same kind: an echo that gives back only the start of what it
//! was sent, and closes cleanly, passed too.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::listeners::{echo_the_first, tcp_peer};
use crate::common::run;
use crate::common::services::{Services, DEADLINE};
use std::io::{Read, Write};

/// A peer that is not sonde: an echo that reads each connection to its end (our FIN) and
/// only then writes everything back, and closes.
fn echo_after_the_end() -> u16 {
    tcp_peer(|mut s| {
        let mut all = Vec::new();
        if s.read_to_end(&mut all).is_ok() {
            let _ = s.write_all(&all);
        }
    })
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
    for port in [discard, echo_the_first(0)] {
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
    for port in [discard, echo_the_first(0)] {
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

/// Regression: a run the verdict failed (exit 1) wrote a document saying `"error": null`; the
/// document now gives the reason stderr gives, and stderr says it once.
#[test]
fn a_stress_run_that_fails_the_check_says_why_in_its_document() {
    let _turn = crate::turns::take(module_path!());
    let out = stress(echo_the_first(0), "--echo", &["-J"]);
    out.expect_code(1);
    let doc = out.json();
    let error = doc["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("2 of 2 connections received nothing"),
        "{}",
        out.describe()
    );
    // The run went its whole time: the error is why it failed, not an early end.
    assert_eq!(doc["partial"], false, "{}", out.describe());
    assert_eq!(
        out.stderr.matches("received nothing").count(),
        1,
        "{}",
        out.describe()
    );
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

#[test]
fn an_echo_that_gives_back_only_the_start_fails_and_says_how_much_never_came_back() {
    let _turn = crate::turns::take(module_path!());
    let out = stress(echo_the_first(100_000), "--echo", &["-J"]);
    out.expect_code(1);
    let end = &out.json()["end"];
    let (sent, received) = (
        end["sent_bytes"].as_u64().unwrap(),
        end["received_bytes"].as_u64().unwrap(),
    );
    assert_eq!(received, 200_000, "{}", out.describe());
    assert_eq!(
        end["echo_unreturned_bytes"].as_u64(),
        Some(sent - received),
        "{}",
        out.describe()
    );
    assert_eq!(end["echo_mismatched_bytes"], 0, "{}", out.describe());
    assert!(
        out.stderr.contains("bytes sent never came back"),
        "{}",
        out.describe()
    );
}

/// Regression: an echo that answers only after our FIN gave every byte back, yet the run
/// failed with "received nothing" and the table said "nothing came back" (the bytes read
/// after the FIN were not counted).
#[test]
fn an_echo_that_answers_only_after_our_fin_passes() {
    let _turn = crate::turns::take(module_path!());
    let port = echo_after_the_end();
    let out = stress(port, "--echo", &[]);
    out.expect_code(0);
    for (said, wrong) in [
        (&out.stdout, "nothing came back"),
        (&out.stderr, "received nothing"),
    ] {
        assert!(!said.contains(wrong), "{}", out.describe());
    }
    let out = stress(port, "--echo", &["-J"]);
    out.expect_code(0);
    let doc = out.json();
    let end = &doc["end"];
    assert_eq!(end["echo_unreturned_bytes"], 0, "{}", out.describe());
    let drained: u64 = end["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["drained_bytes"].as_u64().unwrap())
        .sum();
    assert!(drained > 0, "{}", out.describe());
}
