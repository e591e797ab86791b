//! Issue 34: a failed run's error was printed twice when standard output is not a terminal,
//! once in the table on stdout and once on stderr (client, btc, stress, serial, latency). It
//! is said once, on stderr; the table (here on a pipe) does not repeat it. A `-J` document's
//! `error` is the document, not a second message (see `envelope.rs`).

use crate::common::{free_port, run};
use std::time::Duration;

/// `sonde ARGS` against a closed port: exit 1, `needle` once on stderr, never on stdout.
#[track_caller]
fn said_once_on_stderr(args: &[&str], needle: &str) {
    let port = free_port().to_string();
    let a: Vec<&str> = args
        .iter()
        .map(|s| if *s == "PORT" { port.as_str() } else { *s })
        .collect();
    let out = run(&a, Duration::from_secs(60));
    out.expect_code(1);
    let on_stderr = out.stderr.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        on_stderr,
        1,
        "said {on_stderr} times on stderr\n{}",
        out.describe()
    );
    assert!(
        !out.stdout.contains(needle),
        "repeated on stdout\n{}",
        out.describe()
    );
}

#[test]
fn a_refused_client_says_so_once() {
    let _turn = crate::turns::take(module_path!());
    said_once_on_stderr(&["client", "127.0.0.1", "-p", "PORT", "-t", "1"], "refused");
}

#[test]
fn a_refused_btc_says_so_once() {
    let _turn = crate::turns::take(module_path!());
    said_once_on_stderr(&["btc", "127.0.0.1", "-p", "PORT"], "refused");
}

#[test]
fn an_unanswered_latency_run_says_so_once() {
    let _turn = crate::turns::take(module_path!());
    said_once_on_stderr(
        &[
            "latency",
            "127.0.0.1",
            "-p",
            "PORT",
            "-t",
            "1",
            "--interval",
            "0.1",
        ],
        "nothing listens",
    );
}

#[test]
fn a_refused_stress_run_says_so_once() {
    let _turn = crate::turns::take(module_path!());
    said_once_on_stderr(
        &["stress", "127.0.0.1", "-p", "PORT", "-t", "1", "--echo"],
        "could be opened",
    );
}
