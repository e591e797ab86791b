//! The switching policy's C functions from C: tests/c/policy.c built with the system C
//! compiler against the static library and run over 127.0.0.1 and ::1. It checks, and says
//! which check failed: bad arguments are -EINVAL with the last-error text; a policy of two
//! verdicts in a row moves the stream to IPv6 at the second verdict, holds, ignores a margin
//! under its own, and a new policy without a hold moves it back; the accepting end's policy
//! cannot move it (-EPERM); the bytes sent around the switches arrive once and in order.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use std::path::Path;
use std::process::Command;

mod common;

#[test]
fn a_policy_set_from_c_switches_the_stream_on_its_verdicts() {
    if !common::ipv6_loopback() {
        return;
    }
    let dir = sonde_testkit::TempDir::new("switch-c-policy");
    let exe = dir.file("policy");
    common::build_c(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/policy.c"),
        &exe,
    );
    let out = Command::new(&exe).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.trim(),
        "policy: ok, 2 switches driven by verdicts",
        "{stderr}"
    );
}
