//! A port where nothing listens: `rrul`, `compare-ip` and `latency --tcp-connect` say that
//! nothing listens on HOST:PORT (the host refused at once), as `sonde latency` does for UDP,
//! rather than hinting at a key or reporting 100 % loss as if the path had lost it all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, Output};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

/// Runs `sonde` with the words of `args`, PORT replaced by a closed loopback port; the
/// output and that port's `127.0.0.1:PORT`.
fn against_closed(args: &str) -> (Output, String) {
    let port = common::free_port().to_string();
    let words: Vec<String> = args
        .split_whitespace()
        .map(|w| w.replace("PORT", &port))
        .collect();
    (run(&words, DEADLINE), format!("127.0.0.1:{port}"))
}

/// The run failed and `said` (its stdout or stderr) says nothing listens on `proto` `at`,
/// with no key hint.
#[track_caller]
fn says_nothing_listens(out: &Output, said: &str, proto: &str, at: &str) {
    out.expect_code(1);
    let want = format!("nothing listens on {proto} {at}");
    assert!(said.contains(&want), "want {want:?}: {}", out.describe());
    assert!(!said.contains("--psk-file"), "{}", out.describe());
}

#[test]
fn rrul_to_a_closed_port_says_nothing_listens() {
    let _turn = crate::turns::take(module_path!());
    let (out, at) = against_closed("rrul 127.0.0.1 -p PORT --phase 0.6 --step 100ms");
    says_nothing_listens(&out, &out.stderr, "UDP", &at);
}

#[test]
fn compare_ip_to_a_closed_port_says_nothing_listens() {
    let _turn = crate::turns::take(module_path!());
    let (out, at) = against_closed("compare-ip 127.0.0.1 -p PORT -c 3 -i 20ms");
    says_nothing_listens(&out, &out.stdout, "UDP", &at);
}

/// Regression: with --sizes the family's error was the key hint for a closed port (the size
/// rows' refusals were never looked at); it now says nothing listens, as the probe rounds do.
#[test]
fn compare_ip_sizes_to_a_closed_port_says_nothing_listens() {
    let _turn = crate::turns::take(module_path!());
    let (out, at) = against_closed(
        "compare-ip 127.0.0.1 -p PORT --sizes 56,500 --every 20ms -c 3 --throughput-time 0",
    );
    says_nothing_listens(&out, &out.stdout, "UDP", &at);
}

/// Every connect is refused: each is a lost probe, and the run fails saying why.
#[test]
fn tcp_connect_to_a_closed_port_says_connection_refused() {
    let _turn = crate::turns::take(module_path!());
    let (out, at) = against_closed("latency --tcp-connect 127.0.0.1:PORT -c 3 -i 5ms");
    says_nothing_listens(&out, &out.stderr, "TCP", &at);
    assert!(
        out.stderr.contains("connection refused"),
        "{}",
        out.describe()
    );
    assert!(
        out.stdout.contains("3 sent, 0 answered"),
        "{}",
        out.describe()
    );
}
