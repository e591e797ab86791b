//! Issue 34: one result envelope. Every `-J` document says at its top level what kind of run
//! it is (`kind`), whether it ended early (`partial`) and why it failed (`error`: null or the
//! reason; the iperf3-shaped client and server documents leave `error` out when there is
//! none, as iperf3 does). A command that fails still writes its document, `error` set.
//! (switch-test's are in `switch_test.rs`, which has the IPv6 loopback checks.)

use crate::common::{free_port, run, Output, Server};
use serde_json::Value;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// `sonde ARGS -J` must have exited `code` with a document of `kind`, returned.
#[track_caller]
fn document(out: &Output, kind: &str, code: i32) -> Value {
    out.expect_code(code);
    let d = out.json();
    assert_eq!(d["kind"], kind, "{}", out.describe());
    assert!(d["partial"].is_boolean(), "{}", out.describe());
    d
}

/// A run against a port where nothing listens: exit 1, the document with `error` set.
#[track_caller]
fn fails_with_its_document(kind: &str, args: &[&str]) {
    let port = free_port().to_string();
    let mut a: Vec<&str> = args
        .iter()
        .map(|s| if *s == "PORT" { &port } else { *s })
        .collect();
    a.push("-J");
    let out = run(&a, DEADLINE);
    let d = document(&out, kind, 1);
    assert_eq!(d["partial"], true, "{}", out.describe());
    assert!(
        d["error"].as_str().is_some_and(|e| !e.is_empty()),
        "no error in the document\n{}",
        out.describe()
    );
}

/// A run that passes against a sonde server: exit 0, `partial: false`, no error.
#[track_caller]
fn passes_with_its_envelope(kind: &str, sub: &str, args: &[&str]) -> Value {
    let server = Server::start(&[]);
    let mut a = args.to_vec();
    a.push("-J");
    let out = server.command(sub, &a, DEADLINE);
    let d = document(&out, kind, 0);
    assert_eq!(d["partial"], false, "{}", out.describe());
    assert!(
        d.get("error").is_none_or(Value::is_null),
        "{}",
        out.describe()
    );
    d
}

#[test]
fn a_client_document_has_the_envelope_and_keeps_iperf3s_error_rule() {
    let _turn = crate::turns::take(module_path!());
    let d = passes_with_its_envelope("client", "client", &["-t", "1"]);
    assert!(d.get("error").is_none(), "iperf3 leaves error out: {d}");
}

#[test]
fn a_refused_client_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document("client", &["client", "127.0.0.1", "-p", "PORT", "-t", "1"]);
}

#[test]
fn a_refused_coded_client_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document(
        "client",
        &["client", "127.0.0.1", "-p", "PORT", "-t", "1", "--coded"],
    );
}

#[test]
fn a_server_document_has_the_envelope() {
    let _turn = crate::turns::take(module_path!());
    let mut server = Server::start(&["-1", "-J"]);
    let client = server.client(&["-t", "1"], DEADLINE);
    client.expect_code(0);
    let out = server.take().wait(DEADLINE);
    let d = document(&out, "server", 0);
    assert_eq!(d["partial"], false, "{}", out.describe());
}

#[test]
fn a_latency_document_has_the_envelope() {
    let _turn = crate::turns::take(module_path!());
    passes_with_its_envelope("latency", "latency", &["-t", "1", "--interval", "0.1"]);
}

#[test]
fn a_latency_run_without_answers_says_why_in_its_document_and_its_counts_add_up() {
    let _turn = crate::turns::take(module_path!());
    let port = free_port().to_string();
    let out = run(
        &[
            "latency",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "--interval",
            "0.1",
            "-J",
        ],
        DEADLINE,
    );
    let d = document(&out, "latency", 1);
    assert!(
        d["error"]
            .as_str()
            .is_some_and(|e| e.contains("unreachable")),
        "{}",
        out.describe()
    );
    let loss = &d["end"]["loss"];
    let (sent, refused) = (
        loss["sent"].as_u64().unwrap(),
        loss["refused"].as_u64().unwrap(),
    );
    assert!(
        refused <= sent,
        "refused {refused} of {sent} sent\n{}",
        out.describe()
    );
}

#[test]
fn a_btc_document_has_the_envelope() {
    let _turn = crate::turns::take(module_path!());
    passes_with_its_envelope("btc", "btc", &["--sizes", "1000000"]);
}

#[test]
fn a_refused_btc_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document("btc", &["btc", "127.0.0.1", "-p", "PORT"]);
}

#[test]
fn a_refused_rrul_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document(
        "rrul",
        &[
            "rrul",
            "127.0.0.1",
            "-p",
            "PORT",
            "--phase",
            "0.5",
            "--step",
            "0.1",
        ],
    );
}

#[test]
fn a_refused_compare_ip_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document(
        "compare-ip",
        &["compare-ip", "127.0.0.1", "-p", "PORT", "-c", "3"],
    );
}

#[test]
fn a_refused_capacity_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document("capacity", &["capacity", "127.0.0.1", "-p", "PORT"]);
}

#[test]
fn a_refused_profile_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document(
        "profile",
        &[
            "profile",
            "run",
            "127.0.0.1",
            "monitoring",
            "-p",
            "PORT",
            "-t",
            "1",
        ],
    );
}

#[test]
fn a_refused_stress_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document(
        "stress",
        &["stress", "127.0.0.1", "-p", "PORT", "-t", "1", "--echo"],
    );
}

#[test]
fn a_refused_stress_steps_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document(
        "stress",
        &["stress", "127.0.0.1", "-p", "PORT", "--steps", "1m,2m"],
    );
}

#[test]
fn a_refused_sweep_writes_its_document_with_the_error() {
    let _turn = crate::turns::take(module_path!());
    fails_with_its_document(
        "sweep",
        &[
            "sweep",
            "127.0.0.1",
            "-p",
            "PORT",
            "-u",
            "--max-rate",
            "10m",
        ],
    );
}

/// `partial` means the run ended early: compare-ip to an IPv4 literal measures IPv4 to the
/// end and cannot resolve IPv6; the document has the error, not `partial: true`.
#[test]
fn a_complete_compare_ip_with_one_family_unresolved_is_not_partial() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.command(
        "compare-ip",
        &["-c", "5", "--throughput-time", "0", "-J"],
        DEADLINE,
    );
    let d = document(&out, "compare-ip", 1);
    assert_eq!(d["partial"], false, "{}", out.describe());
    assert!(
        d["error"].as_str().is_some_and(|e| e.contains("IPv6")),
        "{}",
        out.describe()
    );
}

/// An rrul run that fails before it measures (`-6` to an IPv4 literal: no address to probe)
/// writes its document where the run's output goes: into the `--logfile`, not on stdout.
#[test]
fn a_refused_rrul_writes_its_document_into_the_logfile() {
    let _turn = crate::turns::take(module_path!());
    let dir = crate::common::TempDir::new("rrul-logfile");
    let log = dir.file("rrul.json");
    let port = free_port().to_string();
    let args = [
        "rrul",
        "127.0.0.1",
        "-6",
        "-p",
        &port,
        "--phase",
        "0.5",
        "--step",
        "0.1",
        "-J",
        "--logfile",
        &log.to_string_lossy(),
    ];
    let out = run(&args, DEADLINE);
    out.expect_code(1);
    assert!(out.stdout.trim().is_empty(), "{}", out.describe());
    let saved = std::fs::read_to_string(&log).unwrap_or_default();
    let d: Value = serde_json::from_str(&saved)
        .unwrap_or_else(|e| panic!("no document in the log ({e}): {saved}\n{}", out.describe()));
    assert_eq!(d["kind"], "rrul");
    assert_eq!(d["partial"], true);
    assert!(d["error"].is_string(), "{saved}");
}
