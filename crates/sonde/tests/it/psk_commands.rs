//! The pre-shared key on every command that runs tests through a sonde server (issue 16):
//! against a server started with `--psk-file`, each command kind without a key and with a
//! wrong one is refused (exit non-zero, the reason on stderr, no test started on the server),
//! and with the right key it runs. One test per kind, each with a keyed server of its own;
//! runs are short.
//!
//! The latency responder and tcp-rr with a key are checked in `psk_probes.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, Server, TempDir};
use std::path::Path;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(40);

/// Every command kind that opens a sonde control connection, as (name, arguments before the
/// key); `{P}` is the server's port.
const KINDS: &[(&str, &[&str])] = &[
    ("client", &["client", "127.0.0.1", "-p", "{P}", "-t", "0.3"]),
    (
        "client --coded",
        &["client", "127.0.0.1", "-p", "{P}", "--coded", "-t", "0.3"],
    ),
    (
        "capacity",
        &[
            "capacity",
            "127.0.0.1",
            "-p",
            "{P}",
            "--short-trains",
            "3",
            "--long-trains",
            "1",
            "--long-len",
            "50",
        ],
    ),
    ("btc", &["btc", "127.0.0.1", "-p", "{P}", "--sizes", "1M"]),
    (
        "sweep",
        &[
            "sweep",
            "127.0.0.1",
            "-p",
            "{P}",
            "-b",
            "10m",
            "--step-time",
            "0.3",
        ],
    ),
    (
        "stress --steps",
        &[
            "stress",
            "127.0.0.1",
            "-p",
            "{P}",
            "--steps",
            "10m",
            "--step-time",
            "0.5",
        ],
    ),
    (
        "profile run",
        &[
            "profile",
            "run",
            "127.0.0.1",
            "-p",
            "{P}",
            "monitoring",
            "-t",
            "0.5",
            "--clock-synced",
        ],
    ),
    (
        "rrul",
        &[
            "rrul",
            "127.0.0.1",
            "-p",
            "{P}",
            "--phase",
            "0.3",
            "--step",
            "50ms",
            "-P",
            "1",
        ],
    ),
    (
        "compare-ip",
        &[
            "compare-ip",
            "localhost",
            "-p",
            "{P}",
            "--ipv4-addr",
            "127.0.0.1",
            "--ipv6-addr",
            "::1",
            "-c",
            "5",
            "-i",
            "10ms",
            "--throughput-time",
            "0.3",
        ],
    ),
];

/// How many tests the server has accepted so far (its log says "accepted" once per test).
fn accepted(server: &Server) -> usize {
    server
        .output_so_far()
        .matches("sonde server: accepted a")
        .count()
}

/// The command kind `kind` of [`KINDS`] against a keyed server of its own: a missing key
/// file is a usage error, no key and a wrong key are refused with the reason and start no
/// test, the right key runs.
fn check_kind(kind: &str) {
    let t0 = Instant::now();
    let dir = TempDir::new("psk-commands");
    let (key, other) = (dir.file("key"), dir.file("other"));
    common::random_key(&key);
    common::random_key(&other);
    let server = Server::start(&["--psk-file", key.to_str().unwrap()]);
    let port = server.port.to_string();
    let found: Vec<_> = KINDS.iter().filter(|(name, _)| *name == kind).collect();
    assert_eq!(found.len(), 1, "{kind} is not one of KINDS");
    for (name, args) in found {
        let base: Vec<String> = args
            .iter()
            .map(|a| match *a {
                "{P}" => port.clone(),
                a => a.to_string(),
            })
            .collect();
        let with = |k: Option<&Path>| {
            let mut v = base.clone();
            if let Some(k) = k {
                v.extend(["--psk-file".to_string(), k.to_str().unwrap().to_string()]);
            }
            v
        };
        // A key file that cannot be read is a usage error on every command, before any
        // connection.
        let missing = dir.file("missing");
        let out = run(&with(Some(&missing)), T);
        out.expect_code(2);
        assert!(
            out.stderr.contains(missing.to_str().unwrap()),
            "{name} with a missing key file: {}",
            out.describe()
        );
        // rrul and compare-ip probe first: a keyed server drops untagged or badly tagged
        // probes silently, and they say that this may be why.
        let probes_first = matches!(*name, "rrul" | "compare-ip");
        for (case, k, why) in [
            (
                "no key",
                None,
                "requires a pre-shared key and the client sent none",
            ),
            ("a wrong key", Some(other.as_path()), "does not match"),
        ] {
            // Probes go first: the server drops those without its key's tag silently, and
            // the hint depends on whether a key was given at all.
            let why = match (probes_first, k) {
                (true, None) => "answers only probes tagged with its key",
                (true, Some(_)) => "another --psk-file key drops the probes",
                (false, _) => why,
            };
            let before = accepted(&server);
            let out = run(&with(k), T);
            assert_ne!(
                out.code(),
                Some(0),
                "{name} with {case}: {}",
                out.describe()
            );
            let said = format!("{}{}", out.stderr, out.stdout);
            assert!(
                (probes_first || said.contains("(auth)")) && said.contains(why),
                "{name} with {case} should say {why:?}: {}",
                out.describe()
            );
            assert_eq!(
                accepted(&server),
                before,
                "{name} with {case}: the server started a test\n{}",
                server.output_so_far()
            );
        }
        let before = accepted(&server);
        let out = run(&with(Some(&key)), T);
        // compare-ip exits 0, 3 or 4 by its verdict; 1 and 2 are failures.
        assert!(
            matches!(out.code(), Some(0 | 3 | 4)),
            "{name} with the key: {}",
            out.describe()
        );
        assert!(
            !out.stderr.contains("(auth)"),
            "{name} with the key: {}",
            out.describe()
        );
        assert!(accepted(&server) > before, "{name}: no test was accepted");
    }
    eprintln!("{kind} in {:.1?}", t0.elapsed());
}

/// Every kind of [`KINDS`] has its test below (one each, so that two run side by side).
#[test]
fn every_kind_has_its_test() {
    let _turn = crate::turns::take(module_path!());
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/psk_commands.rs"
    ))
    .unwrap();
    for (kind, _) in KINDS {
        let call = format!("check_kind({kind:?});");
        assert_eq!(text.matches(&call).count(), 1, "no test calls {call}");
    }
}

#[test]
fn client_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("client");
}

#[test]
fn client_coded_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("client --coded");
}

#[test]
fn capacity_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("capacity");
}

#[test]
fn btc_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("btc");
}

#[test]
fn sweep_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("sweep");
}

#[test]
fn stress_steps_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("stress --steps");
}

#[test]
fn profile_run_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("profile run");
}

#[test]
fn rrul_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("rrul");
}

#[test]
fn compare_ip_is_refused_without_the_key_and_runs_with_it() {
    let _turn = crate::turns::take(module_path!());
    check_kind("compare-ip");
}

/// Where a key could not be used, giving one is a usage error rather than silently ignored.
#[test]
fn a_key_where_it_cannot_apply_is_a_usage_error() {
    let _turn = crate::turns::take(module_path!());
    for args in [
        &["latency", "127.0.0.1", "--icmp"][..],
        &["latency", "127.0.0.1:22", "--tcp-connect"],
        &["client", "127.0.0.1", "--iperf3"],
        &["stress", "127.0.0.1", "--discard"],
        &["stress", "127.0.0.1", "--steps", "1m", "--iperf3"],
    ] {
        let mut v = args.to_vec();
        v.extend(["--psk-file", "/nonexistent/key"]);
        let out = run(&v, T);
        out.expect_code(2);
        assert!(out.stderr.contains("--psk-file"), "{}", out.describe());
    }
}
