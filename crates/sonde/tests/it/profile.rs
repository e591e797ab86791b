//! Integration tests of `sonde profile`: the real binary against a real server over
//! 127.0.0.1, streams both ways at once, the built-in stress plan's counts, the gap inside
//! bursts, the table and -J, Ctrl-C mid-run keeping the partial figures, and what the
//! commands say about bad profiles. About 15 s in all.

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

/// `monitoring-stress` cut to 2.005 s sends exactly its plan each way, the bursts cut at the
/// end as the schedule cuts them: a burst due before the end goes whole (the device's status
/// burst due at 2.0 s, its datagrams 1 ms apart to 2.007 s, sent by the server after the
/// client's own plan is through), one due at or after it not at all; and every burst keeps
/// its gap on arrival.
#[test]
fn monitoring_stress_sends_its_plan_each_way_with_its_gaps() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = run(
        &profile_args(
            &server,
            &["monitoring-stress", "-t", "2.005", "-J", "--clock-synced"],
        ),
        DEADLINE,
    );
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(doc.get("ended_early").is_none(), "{doc}");
    // (name, direction, gap ms, bursts, datagrams per burst) for 2.005 s of the plan:
    // status from 0 every 200 ms: 0, 0.2, ..., 2.0 s (11); telemetry from 50 ms: 0.05 ..
    // 1.85 s (10); bulk from 100 ms every 5 s: once; the host's from 25, 75, 125 ms: 10, 10,
    // once; host-large from 150 ms every 1 s: 0.15 and 1.15 s.
    let plan = [
        ("status", "from-server", 1.0, 11, 8),
        ("telemetry", "from-server", 1.0, 10, 4),
        ("bulk", "from-server", 1.0, 1, 50),
        ("host-status", "to-server", 0.1, 10, 8),
        ("host-telemetry", "to-server", 0.1, 10, 4),
        ("host-bulk", "to-server", 0.1, 1, 50),
        ("host-large", "to-server", 0.1, 2, 30),
    ];
    let streams = arr(&doc, "streams");
    assert_eq!(streams.len(), plan.len(), "{doc}");
    for (s, (name, direction, gap_ms, bursts, burst)) in streams.iter().zip(plan) {
        assert_eq!(text(s, "name"), name, "{s}");
        assert_eq!(text(s, "direction"), direction, "{s}");
        assert_eq!(uint(s, "burst"), burst, "{s}");
        assert_eq!(uint(s, "bursts_sent"), bursts, "{s}");
        assert_eq!(uint(s, "sent"), bursts * burst, "{s}");
        assert_eq!(uint(s, "received"), bursts * burst, "{s}");
        assert_eq!(uint(s, "lost"), 0, "{s}");
        assert_eq!(uint(s, "bursts_complete"), bursts, "{s}");
        // The receiver's own measure of the spacing: at least the gap (a loaded host spreads
        // a burst out, it cannot bring its datagrams closer than the sender let them go).
        assert_eq!(num(s, "gap_ms"), gap_ms, "{s}");
        let spacing = num(s, "burst_spacing_ms");
        assert!(spacing >= 0.9 * gap_ms, "{name}: {spacing} ms apart: {s}");
    }
    assert!(num(&doc, "ran_s") >= 2.005, "{doc}");
}

/// Spaced streams each way arrive spaced by at least their gap, by what the receiving end
/// measured; a stream of the same run sent back to back arrives far closer than that, so the
/// spacing figure measures the bursts and not the host.
const GAPS: &str = r#"
name = "gaps"
duration_s = 1

[[stream]]
name = "up-spaced"
direction = "to-server"
size = 200
burst = 10
gap = "2ms"
period_ms = 100
late_ms = 100

[[stream]]
name = "down-spaced"
direction = "from-server"
size = 1000
burst = 10
gap = "3ms"
period_ms = 100
offset_ms = 40
late_ms = 100

[[stream]]
name = "down-together"
direction = "from-server"
size = 1000
burst = 10
period_ms = 100
offset_ms = 80
late_ms = 100
"#;

#[test]
fn the_gap_is_kept_inside_bursts_both_ways() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let dir = TempDir::new("profile-gaps");
    let file = dir.file("gaps.toml");
    std::fs::write(&file, GAPS).unwrap();
    let out = run(
        &profile_args(&server, &[file.to_str().unwrap(), "-J"]),
        DEADLINE,
    );
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let streams = arr(&doc, "streams");
    for (s, gap_ms) in streams.iter().zip([2.0, 3.0, 0.0]) {
        // 10 bursts of 10 in 1 s, each whole.
        assert_eq!(uint(s, "received"), 100, "{s}");
        assert_eq!(uint(s, "bursts_complete"), 10, "{s}");
        assert_eq!(num(s, "gap_ms"), gap_ms, "{s}");
    }
    for s in &streams[..2] {
        let (gap, spacing) = (num(s, "gap_ms"), num(s, "burst_spacing_ms"));
        assert!(
            spacing >= 0.9 * gap,
            "{spacing} ms apart, gap {gap} ms: {s}"
        );
    }
    // Back to back: well under the smaller gap.
    let together = num(&streams[2], "burst_spacing_ms");
    assert!(
        together < 1.0,
        "back to back, {together} ms apart: {}",
        streams[2]
    );
    // The table says the same.
    let out = run(
        &profile_args(&server, &[file.to_str().unwrap(), "-t", "0.5"]),
        DEADLINE,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout.contains("Spacing inside bursts"),
        "{}",
        out.stdout
    );
}

/// A gap that does not parse, or a burst whose gaps do not fit its period, is refused before
/// anything is sent, naming the stream.
#[test]
fn a_bad_gap_is_refused_naming_the_stream() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("profile-bad-gap");
    let file = dir.file("bad.toml");
    for (gap, says) in [
        ("1 parsec", "stream \"down-spaced\": gap: "),
        ("11ms", "stream \"down-spaced\": 10 datagrams 11ms apart take 110 ms, longer than the period of 100 ms"),
    ] {
        std::fs::write(&file, GAPS.replace("\"3ms\"", &format!("\"{gap}\""))).unwrap();
        let out = run(
            &["profile", "run", "127.0.0.1", "-p", "9", file.to_str().unwrap()],
            DEADLINE,
        );
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stderr.contains(says), "{gap}: {}", out.stderr);
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
    for name in [
        "status",
        "host-telemetry",
        "host-large",
        "from-server",
        "to-server",
    ] {
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
    // 8 status bursts of 8 (every 200 ms in 1.5 s), all whole, 1 ms apart.
    assert!(out.stdout.contains("100Bx8/200ms"), "{}", out.stdout);
    assert!(
        out.stdout.contains("Spacing inside bursts"),
        "{}",
        out.stdout
    );
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
    assert_eq!(streams.len(), 7, "{doc}");
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
