//! `sonde switch-test` through the real binary on 127.0.0.1 and ::1: a transfer that changes
//! family every 50 ms, SHA-256 compared at both ends, and the -J document's figures.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use common::{ipv6_loopback_available, require_all, run, switch_test_loopback};
use std::time::Duration;

#[test]
fn switching_every_50ms_keeps_the_stream_intact() {
    if !ipv6_loopback_available() {
        assert!(!require_all(), "::1 is needed for switch-test");
        eprintln!("skipped: no IPv6 loopback");
        return;
    }
    let out = switch_test_loopback(
        &["-t", "2", "--every", "0.05", "-J"],
        Duration::from_secs(30),
    );
    out.expect_code(0);
    let doc = out.json();
    let end = &doc["end"];
    assert_eq!(end["hash_equal"], true, "{end}");
    assert_eq!(end["sha256"], end["server_sha256"]);
    assert_eq!(end["bytes"], end["server_bytes"]);
    let switches = end["switches"].as_u64().unwrap();
    assert!(switches >= 20, "{switches} switches");
    assert!(end["sent_by_family"]["ipv4"].as_u64().unwrap() > 0);
    assert!(end["sent_by_family"]["ipv6"].as_u64().unwrap() > 0);
    let server = doc["server"]["switches"].as_array().unwrap();
    assert_eq!(server.len() as u64, switches, "both ends saw every switch");
    let stalls: Vec<f64> = server
        .iter()
        .filter_map(|s| s["stall_ms"].as_f64())
        .collect();
    assert!(!stalls.is_empty());
    eprintln!(
        "{} bytes, {switches} switches, {:.0} Mbit/s, worst stall {:.2} ms",
        end["bytes"],
        end["bits_per_second"].as_f64().unwrap() / 1e6,
        stalls.iter().cloned().fold(0.0, f64::max)
    );
}

#[test]
fn a_host_with_one_family_is_refused_with_a_reason() {
    let out = run(
        &["switch-test", "127.0.0.1", "-p", "1", "-t", "1"],
        Duration::from_secs(10),
    );
    out.expect_code(1);
    assert!(out.stderr_lc().contains("ipv6"), "{}", out.describe());
}
