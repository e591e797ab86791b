//! `sonde agent` with peers that never answer, over loopback: three silent peers (UDP sockets
//! this test holds and never reads) beside the agent's own server. A latency run to a silent
//! peer takes 2 s; run one after another, they would leave the live peer one run every 6 s.
//! Side by side, the live peer is measured every second as planned, no peer has two runs at
//! once, and a throughput run still has the link to itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::agent::{latest_tests, stop, wait_for};
use common::{free_port, Proc, TempDir};
use sonde_store::{TestRecord, TestStatus};
use std::net::UdpSocket;

fn overlap(a: &TestRecord, b: &TestRecord) -> bool {
    a.started_unix < b.ended_unix && b.started_unix < a.ended_unix
}

fn describe(tests: &[TestRecord]) -> String {
    tests
        .iter()
        .map(|t| {
            format!(
                "{:.2}-{:.2} {} {} {:?} {}",
                t.started_unix,
                t.ended_unix,
                t.settings,
                t.test_name,
                t.status,
                t.failure_reason.as_deref().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn silent_peers_hold_back_no_other_and_throughput_runs_alone() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-silent");
    let port = free_port();
    let silent: Vec<UdpSocket> = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let db = dir.file("silent.db");
    let mut text = format!(
        "listen_port = {port}\nstore = {db:?}\njitter = 0.2\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n\n[throughput]\nevery_mins = 0.5\nduration_secs = 1\nshare = 0.01\n\n[[peer]]\nname = \"live\"\nhost = \"127.0.0.1\"\nport = {port}\nlink_rate = \"1G\"\n"
    );
    for (i, s) in silent.iter().enumerate() {
        let p = s.local_addr().unwrap().port();
        text.push_str(&format!(
            "\n[[peer]]\nname = \"silent{i}\"\nhost = \"127.0.0.1\"\nport = {p}\nlink_rate = \"1G\"\n"
        ));
    }
    let cfg = dir.file("silent.toml");
    std::fs::write(&cfg, text).unwrap();
    let agent = Proc::spawn(&["agent", "--config", cfg.to_str().unwrap()]);
    let live_ok = |kind: &str| {
        latest_tests(&db)
            .iter()
            .filter(|t| t.settings == "live" && t.test_name == kind)
            .filter(|t| t.status == TestStatus::Ok)
            .count()
    };
    // One after another, six live runs would take 37 s (6.2 s a round); side by side, 6 s,
    // and up to 2 s more for each of the four throughput runs of the first 10 s (one per
    // peer: each waits for the latency runs in flight to end).
    wait_for(
        "6 latency runs and a throughput run to the live peer",
        25,
        || live_ok("latency") >= 6 && live_ok("throughput") >= 1,
        &[&agent],
    );
    stop(agent);
    drop(silent);
    let tests = latest_tests(&db);
    let all = describe(&tests);
    let latency: Vec<&TestRecord> = tests.iter().filter(|t| t.test_name == "latency").collect();
    let throughput: Vec<&TestRecord> = tests
        .iter()
        .filter(|t| t.test_name == "throughput")
        .collect();
    let mut side_by_side = false;
    for (i, a) in latency.iter().enumerate() {
        let why = a.failure_reason.as_deref().unwrap_or("");
        if a.settings.starts_with("silent") && !why.starts_with("interrupted") {
            assert_eq!(a.status, TestStatus::Failed, "{all}");
            assert!(why.contains("none of 3 probes was answered"), "{all}");
        }
        for b in &latency[i + 1..] {
            if overlap(a, b) {
                // Never two runs to one peer at once.
                assert_ne!(a.settings, b.settings, "{all}");
                side_by_side = true;
            }
        }
        // A throughput run has the link to itself.
        for t in &throughput {
            assert!(!overlap(a, t), "latency beside throughput:\n{all}");
        }
    }
    assert!(side_by_side, "no two latency runs overlapped:\n{all}");
}
