//! Integration tests of `sonde profile`: the real binary against a real server over
//! 127.0.0.1, streams both ways at once, the table and -J, Ctrl-C mid-run keeping the partial
//! figures, and what the commands say about bad profiles. About 10 s in all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{arr, num, run, text, uint, Proc, Server, TempDir};
use serde_json::Value;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

/// A to-server stream of 5-datagram bursts every 50 ms and a marked from-server stream of
/// 20 x 1000 B every 250 ms from 30 ms.
const BOTH_WAYS: &str = r#"
name = "both-ways"
duration_s = 2

[[stream]]
name = "up"
direction = "to-server"
size = 200
burst = 5
period_ms = 50
late_ms = 100

[[stream]]
name = "down"
direction = "from-server"
size = 1000
burst = 20
period_ms = 250
offset_ms = 30
dscp = 46
late_ms = 100
"#;

fn profile_args(server: &Server, rest: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["profile", "run", "127.0.0.1", "-p"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.push(server.port.to_string());
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

/// Runs the BOTH_WAYS profile against a fresh server with `rest` flags.
fn run_both_ways(rest: &[&str]) -> common::Output {
    let server = Server::start(&[]);
    let dir = TempDir::new("profile");
    let file = dir.file("both.toml");
    std::fs::write(&file, BOTH_WAYS).unwrap();
    let mut args = vec![file.to_str().unwrap()];
    args.extend_from_slice(rest);
    run(&profile_args(&server, &args), DEADLINE)
}

#[test]
fn both_directions_at_once_arrive_whole_and_in_time() {
    let _turn = crate::turns::take(module_path!());
    let out = run_both_ways(&["-J", "--clock-synced"]);
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(text(&doc, "profile"), "both-ways");
    assert!(doc.get("ended_early").is_none(), "{doc}");
    let streams = arr(&doc, "streams");
    assert_eq!(streams.len(), 2);
    // The plans: 40 bursts of 5 up, 8 bursts of 20 down (from 30 ms, every 250 ms, in 2 s).
    for (s, bursts, burst) in [(&streams[0], 40, 5), (&streams[1], 8, 20)] {
        assert_eq!(uint(s, "bursts_sent"), bursts, "{s}");
        assert_eq!(uint(s, "sent"), bursts * burst, "{s}");
        assert_eq!(uint(s, "received"), uint(s, "sent"), "{s}");
        assert_eq!(uint(s, "lost"), 0, "{s}");
        assert_eq!(uint(s, "late"), 0, "{s}");
        assert_eq!(uint(s, "duplicates"), 0, "{s}");
        assert_eq!(uint(s, "foreign"), 0, "{s}");
        assert_eq!(uint(s, "bursts_complete"), bursts, "{s}");
        assert_eq!(text(s, "delay.basis"), "synced");
        assert_eq!(uint(s, "delay.samples"), uint(s, "received"));
        assert_eq!(arr(s, "delay.percentiles_ms").len(), 101);
        // Same host, same clock: the measured delays are real and small.
        assert!(num(s, "delay.min_ms") >= 0.0, "{s}");
        assert!(num(s, "delay.max_ms") < 100.0, "{s}");
    }
    assert_eq!(text(&streams[1], "direction"), "from-server");
    assert!(num(&doc, "ran_s") >= 2.0, "{doc}");
}

/// Without `--clock-synced` the client measures the clocks' offset first and both ends
/// correct their delays by it. On one host the true offset is 0 and the true delays are tiny:
/// the estimate must find that, within the uncertainty it states.
#[test]
fn the_measured_clock_offset_is_zero_on_one_host_and_corrects_both_ends() {
    let _turn = crate::turns::take(module_path!());
    let out = run_both_ways(&["-J"]);
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let offset_ms = num(&doc, "clock_offset.offset_ns") / 1e6;
    let within_ms = num(&doc, "clock_offset.uncertainty_ns") / 1e6;
    assert!(uint(&doc, "clock_offset.probes") >= 20, "{doc}");
    assert!((0.0..5.0).contains(&within_ms), "{doc}");
    assert!(offset_ms.abs() <= within_ms + 0.5, "{doc}");
    for s in arr(&doc, "streams") {
        assert_eq!(text(s, "delay.basis"), "offset-estimated", "{s}");
        assert!(num(s, "delay.min_ms") > -(within_ms + 0.5), "{s}");
        assert!(num(s, "delay.max_ms") < 100.0, "{s}");
        assert_eq!(uint(s, "late"), 0, "{s}");
    }
}

#[test]
fn the_table_names_every_stream_and_the_delay_estimate() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = run(
        &profile_args(&server, &["monitoring-stress", "-t", "1.5"]),
        DEADLINE,
    );
    assert!(out.status.success(), "{out:?}");
    for name in ["status", "telemetry", "bulk", "far-end", "from-server"] {
        assert!(out.stdout.contains(name), "{name} missing:\n{}", out.stdout);
    }
    assert!(
        out.stdout
            .contains("estimate: corrected by the clock offset measured before the run"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("clock offset, server - client:"),
        "{}",
        out.stdout
    );
    // 8 status bursts of 8 (every 200 ms in 1.5 s), all whole.
    assert!(out.stdout.contains("100Bx8/200ms"), "{}", out.stdout);
    assert!(out.stdout.contains("8/8"), "{}", out.stdout);
}

#[test]
fn ctrl_c_keeps_the_partial_figures() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let args = profile_args(&server, &["monitoring-stress", "-J", "-t", "30"]);
    let client = Proc::spawn(&args);
    std::thread::sleep(Duration::from_millis(1500));
    client.signal(libc::SIGINT);
    let out = client.wait(DEADLINE);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.elapsed < Duration::from_secs(10), "{out:?}");
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(text(&doc, "ended_early").contains("Ctrl-C"), "{doc}");
    let streams = arr(&doc, "streams");
    // Both ends' streams are there, counted against what was really sent.
    assert_eq!(streams.len(), 4, "{doc}");
    for s in streams {
        assert!(uint(s, "sent") > 0, "{s}");
        assert_eq!(uint(s, "lost"), 0, "{s}");
    }
    assert!(num(&doc, "ran_s") < 5.0, "{doc}");
}

#[test]
fn list_show_and_bad_profiles() {
    let _turn = crate::turns::take(module_path!());
    let list = run(&["profile", "list"], DEADLINE);
    assert!(list.status.success());
    assert!(list.stdout.contains("monitoring-stress"), "{}", list.stdout);
    let show = run(&["profile", "show", "monitoring"], DEADLINE);
    assert!(show.stdout.contains("[[stream]]"), "{}", show.stdout);
    // What `show` prints is a profile file that runs.
    let dir = TempDir::new("profile-show");
    let bad = dir.file("bad.toml");
    std::fs::write(&bad, show.stdout.replace("burst = 25", "burst = 0")).unwrap();
    let out = run(&["profile", "show", bad.to_str().unwrap()], DEADLINE);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains("burst must be 1..=1000"),
        "{}",
        out.stderr
    );
    let out = run(
        &["profile", "run", "127.0.0.1", "no-such-profile"],
        DEADLINE,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains("neither a built-in profile"),
        "{}",
        out.stderr
    );
}

#[test]
fn json_stream_gives_one_record_per_line() {
    let _turn = crate::turns::take(module_path!());
    let out = run_both_ways(&["--json-stream", "-t", "1"]);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let events: Vec<&str> = lines.iter().map(|l| text(l, "event")).collect();
    let streams: Vec<&Value> = lines
        .iter()
        .filter(|l| text(l, "event") == "stream")
        .collect();
    assert_eq!(streams.len(), 2, "{events:?}");
    // 1 s of the plan: 20 bursts of 5 up, 4 bursts of 20 down, each whole.
    assert_eq!(text(streams[0], "data.name"), "up");
    assert_eq!(uint(streams[0], "data.sent"), 100);
    assert_eq!(uint(streams[1], "data.bursts_sent"), 4);
    assert!(streams
        .iter()
        .all(|s| s["data"].get("exceptions").is_none()));
    assert_eq!(*events.last().unwrap(), "end", "{events:?}");
    let end = lines.last().unwrap();
    assert!(end["data"]["error"].is_null(), "{end}");
    assert!(num(end, "data.ran_s") >= 1.0, "{end}");
}

/// `profile run` says where it is on stderr (redirected here, so in plain lines): the profile
/// at the start, then a line at least every ten seconds; stdout keeps the results alone.
#[test]
fn a_profile_run_prints_its_progress_to_a_redirected_stderr() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = run(
        &profile_args(&server, &["monitoring", "-t", "11", "-J"]),
        DEADLINE,
    );
    out.expect_code(0);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("sonde profile run: "))
        .collect();
    assert!(
        lines
            .first()
            .is_some_and(|l| l.contains("profile \"monitoring\"")),
        "{}",
        out.describe()
    );
    assert!(
        lines.len() >= 2,
        "no line after ten seconds: {}",
        out.describe()
    );
    assert!(
        lines.len() <= 1 + (out.elapsed.as_secs() / 2) as usize,
        "{}",
        out.describe()
    );
    let _doc: Value = serde_json::from_str(&out.stdout).unwrap();
}
