//! Traffic profiles against lab ground truth (root): `sonde profile run` as a lab scenario
//! test, through a client - router - server lab whose router impairs the router-server link.
//!
//! - Over a clean 100 Mbit/s link the `monitoring` profile loses nothing and nothing is late.
//! - Over a 100 Mbit/s link with 1 % random loss each direction, a dense profile (10^5
//!   datagrams per stream in 10 s) measures 1 % ± 0.3 pp per stream, and the share of whole
//!   bursts is what independent loss predicts.
//! - Through a device of 2000 packets/s with a 12-frame ring, the `monitoring-stress` profile
//!   loses datagrams only in the bursts that outrun the ring: those whose datagrams come
//!   faster than the device forwards them and more of them than it drains and holds (the
//!   host's 50- and 30-datagram bursts, 100 us apart; the device's own, 1 ms apart, never
//!   queue), most of those (a sender held up mid-burst spreads one out), and nowhere else.
//!
//! Each direction's lost datagrams are checked against the lab forwarder's own drop counters
//! (from the run's report model), so a loss sonde misses or invents, or one that happened
//! outside the link, fails the test. Delays through the device are bounded by its ring, plus
//! only what the forwarder's own record says it let frames leave late (a virtual machine's
//! cores can stall for milliseconds, real-time priority or not).
//!
//! Without root each test prints why it skips; `SONDE_REQUIRE_ALL=1` (CI) makes that a failure.
//! About 30 s in all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{arr, lab_available, lab_result, num, run, run_lab, text, uint, TempDir};
use serde_json::Value;
use sonde_testkit::scenario::chain;
use std::path::PathBuf;
use std::time::Duration;

/// client - router - server, the router-server link impaired both ways by `impair` (TOML
/// keys, one a line), and one test: `sonde SONDE...`.
fn topology(impair: &str, sonde: &[&str]) -> String {
    chain()
        .name("profile-lab")
        .description("a traffic profile through an impaired router-server link")
        .seed(10)
        .host("client")
        .link("lan")
        .router("router")
        .link("dev")
        .host("server")
        .settings("link")
        .impair("dev", impair)
        .sonde("profile", sonde)
        .to_toml()
}

/// 10^5 datagrams per stream in 10 s, one stream each way: 100 B x20 every 2 ms.
const DENSE: &str = r#"
name = "dense"
duration_s = 10

[[stream]]
name = "up"
direction = "to-server"
size = 100
burst = 20
period_ms = 2
late_ms = 100

[[stream]]
name = "down"
direction = "from-server"
size = 100
burst = 20
period_ms = 2
offset_ms = 1
late_ms = 100
"#;

/// Runs `sonde profile run {server} ARGS...` once over a router-server link impaired by
/// `impair` (TOML keys) and returns the profile document and the lab forwarder's counters per
/// stage (the report model's `stage_stats`): the ground truth of what the link dropped.
fn run_profile(tag: &str, impair: &str, args: &[&str]) -> (Value, Value) {
    let dir = TempDir::new(tag);
    let mut sonde = vec!["profile", "run", "{server}"];
    sonde.extend_from_slice(args);
    let scenario = topology(impair, &sonde);
    let out_dir = run_lab(&dir, &scenario, Duration::from_secs(120));
    let report_dir = dir.file("report");
    run(
        &[
            "report",
            &out_dir.to_string_lossy(),
            "--format",
            "json",
            "-o",
            &report_dir.to_string_lossy(),
        ],
        Duration::from_secs(30),
    )
    .expect_code(0);
    let model: Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap())
            .unwrap();
    let stages = model["tests"][0]["stage_stats"].clone();
    (lab_result(&out_dir, "link", "profile", 1), stages)
}

/// Each direction's forwarder counters (frames, lateness, wait in the socket) and whether it
/// ran at real-time priority, for messages.
fn forwarder_io(stages: &Value) -> String {
    arr(stages, "directions")
        .iter()
        .map(|d| format!("{} (real-time {}): {}", d["name"], d["realtime"], d["io"]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The router-server link's entry for `direction` (`a-to-b`) in the forwarder's counters.
fn dev_direction<'a>(stages: &'a Value, direction: &str) -> &'a Value {
    let name = format!("dev {direction}");
    arr(stages, "directions")
        .iter()
        .find(|d| d["name"] == name.as_str())
        .unwrap_or_else(|| panic!("no {name} in {stages}"))
}

/// How far behind its schedule the lab's engine let a frame of `link_dir` (`a-to-b`) leave,
/// in ms, by its own lateness record (buckets of powers of two µs): 0 when every frame left
/// within a millisecond, the bucket's upper bound otherwise (infinite for the open last one,
/// 16 ms or more late: a lab that far behind leaves nothing to check the delays against).
fn engine_behind_ms(stages: &Value, link_dir: &str) -> f64 {
    let d = dev_direction(stages, link_dir);
    let h: Vec<u64> = arr(&d["io"], "lateness_log2_us")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    match h.iter().rposition(|n| *n > 0) {
        Some(i) if i + 1 == h.len() => {
            eprintln!("{link_dir}: frames left 16 ms or more late; the delays cannot be checked");
            f64::INFINITY
        }
        Some(i) if i >= 11 => (1u64 << i) as f64 / 1e3,
        _ => 0.0,
    }
}

/// Frames the router-server link's impairments dropped in `direction` (`a-to-b` is towards
/// the server), control traffic included.
fn link_dropped(stages: &Value, direction: &str) -> u64 {
    arr(dev_direction(stages, direction), "stages")
        .iter()
        .map(|st| uint(st, "dropped"))
        .sum()
}

/// The streams of one direction lost what the link dropped that way: not fewer (sonde missed
/// none), and at most a few more (control segments the link also dropped), so nothing else
/// (a socket, a stalled process) lost datagrams.
fn losses_match_the_link(doc: &Value, stages: &Value, direction: &str, link_dir: &str) {
    let lost: u64 = arr(doc, "streams")
        .iter()
        .filter(|s| text(s, "direction") == direction)
        .map(|s| uint(s, "lost"))
        .sum();
    let dropped = link_dropped(stages, link_dir);
    eprintln!("{direction}: {lost} datagrams lost, the link dropped {dropped} frames");
    assert!(
        lost <= dropped && dropped <= lost + 5,
        "{direction}: sonde counted {lost} lost, the link dropped {dropped} frames"
    );
}

/// The stream named `name` of a profile document, its figures printed.
fn stream<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let s = arr(doc, "streams")
        .iter()
        .find(|s| text(s, "name") == name)
        .unwrap_or_else(|| panic!("no stream {name} in {doc}"));
    eprintln!(
        "{name}: sent {} received {} lost {} ({:.3} %) late {} out of order {} \
         bursts {}/{} complete, delay max {:.3} ms",
        uint(s, "sent"),
        uint(s, "received"),
        uint(s, "lost"),
        uint(s, "lost") as f64 * 100.0 / uint(s, "sent").max(1) as f64,
        uint(s, "late"),
        uint(s, "out_of_order"),
        uint(s, "bursts_complete"),
        uint(s, "bursts_sent"),
        num(s, "delay.max_ms"),
    );
    s
}

fn ended_normally(doc: &Value) {
    assert!(doc.get("ended_early").is_none(), "{doc}");
    assert!(doc.get("error").is_none_or(Value::is_null), "{doc}");
}

#[test]
fn monitoring_over_a_clean_100_mbit_link_loses_nothing_and_is_never_late() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    // Namespaces share the kernel's clock: the delays are measured, not estimated.
    let (doc, _) = run_profile(
        "profile-clean",
        "rate = \"100mbit\"",
        &["monitoring", "-t", "6", "--clock-synced"],
    );
    ended_normally(&doc);
    // 6 s of the plan: status 30 x4, telemetry 30 x2, bulk at 0.1 s and 5.1 s x25.
    for (name, bursts, burst) in [("status", 30, 4), ("telemetry", 30, 2), ("bulk", 2, 25)] {
        let s = stream(&doc, name);
        assert_eq!(uint(s, "bursts_sent"), bursts, "{s}");
        assert_eq!(uint(s, "sent"), bursts * burst, "{s}");
        assert_eq!(uint(s, "lost"), 0, "{s}");
        assert_eq!(uint(s, "late"), 0, "{s}");
        assert_eq!(uint(s, "bursts_complete"), bursts, "{s}");
        assert_eq!(uint(s, "bursts_late"), 0, "{s}");
        assert_eq!(text(s, "delay.basis"), "synced");
    }
}

#[test]
fn one_percent_random_loss_is_measured_per_stream_within_0_3_points() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("profile-dense");
    let file: PathBuf = dir.file("dense.toml");
    std::fs::write(&file, DENSE).unwrap();
    let (doc, stages) = run_profile(
        "profile-loss",
        "rate = \"100mbit\"\nloss = \"1%\"",
        &[&file.to_string_lossy(), "--clock-synced"],
    );
    ended_normally(&doc);
    for name in ["up", "down"] {
        let s = stream(&doc, name);
        let sent = uint(s, "sent");
        assert!(sent >= 100_000, "{name}: only {sent} datagrams: {s}");
        let loss = uint(s, "lost") as f64 * 100.0 / sent as f64;
        assert!(
            (loss - 1.0).abs() <= 0.3,
            "{name}: {loss:.3} % lost over a link dropping 1 % at random"
        );
        // Independent loss leaves a burst of 20 whole with probability 0.99^20 = 81.8 %.
        let whole = uint(s, "bursts_complete") as f64 / uint(s, "bursts_sent") as f64;
        assert!(
            (whole - 0.99f64.powi(20)).abs() <= 0.03,
            "{name}: {:.1} % of bursts whole, 81.8 % expected",
            whole * 100.0
        );
        assert_eq!(uint(s, "duplicates"), 0, "{s}");
        assert_eq!(uint(s, "late"), 0, "{s}");
    }
    losses_match_the_link(&doc, &stages, "to-server", "a-to-b");
    losses_match_the_link(&doc, &stages, "from-server", "b-to-a");
}

#[test]
fn a_device_ring_loses_only_the_bursts_that_overflow_it() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    // 12 frames: more than the host's 8-datagram bursts, far fewer than its 30 and 50 even as
    // the device drains them. The host sends those 100 us apart at the least, and each
    // datagram through the lab's veth pairs may cost the sender 30-40 µs more on a virtual
    // machine: with a 20-frame ring the device drained a 30-datagram burst spread that much
    // almost as fast as it came (4 of 6 arrived whole, 2026-12-03); at 150 us apart it drains
    // 8 of 30 here, leaving 22 for 12 places.
    const RING: u64 = 12;
    // 500 µs a frame: faster than the device's own bursts (1 ms apart) ever come, so they
    // never queue; slower than the host's, so those do.
    const PPS: u64 = 2000;
    let (doc, stages) = run_profile(
        "profile-device",
        &format!("device = {{ pps = {PPS}, ring = {RING} }}"),
        &["monitoring-stress", "-t", "6", "--clock-synced"],
    );
    ended_normally(&doc);
    for s in arr(&doc, "streams") {
        let name = text(s, "name");
        let s = stream(&doc, name);
        let burst = uint(s, "burst");
        let exceptions = arr(s, "exceptions");
        assert_eq!(uint(s, "exceptions_dropped"), 0, "{s}");
        assert_eq!(uint(s, "late"), 0, "{s}");
        // No frame waits longer than a full ring takes to drain (6 ms), plus the hosts' own
        // share of the path: a longer delay would mean a queue the lab did not set. That
        // share: with a 20-frame ring the bursts' largest delays were 9.98-10.10 ms against
        // its 10 ms in four runs alone (2026-11-29). 2 ms is four frames: a ring half as long
        // again as set (six more frames, 3 ms) still fails. When the lab's engine itself let frames leave a millisecond or more
        // late (its own record, and a note in the lab's output), the path did hold them that
        // much longer and sonde was right to measure it: the bound grows by the engine's
        // latest lateness, never by an allowance of the test's. Without real-time priority
        // and beside two busy processes the engine fell 4-8 ms behind here.
        let ring_ms = (RING * 1000) as f64 / PPS as f64;
        let link_dir = if text(s, "direction") == "to-server" {
            "a-to-b"
        } else {
            "b-to-a"
        };
        let behind = engine_behind_ms(&stages, link_dir);
        assert!(
            num(s, "delay.max_ms") <= ring_ms + 2.0 + behind,
            "{name}: a datagram took longer than the {ring_ms} ms ring: {s}\nthe forwarder: {}",
            forwarder_io(&stages)
        );
        // The device forwards a frame every 1/PPS. By a burst's last datagram, `gap` apart,
        // it has forwarded (burst - 1) x gap x PPS of them: the ring must hold the rest.
        let drained = (burst - 1) as f64 * num(s, "gap_ms") / 1e3 * PPS as f64;
        if burst as f64 - drained.floor() <= RING as f64 {
            // A burst the ring holds whole arrives whole, every time.
            assert_eq!(uint(s, "lost"), 0, "{name}: {s}");
            assert!(exceptions.is_empty(), "{name}: {s}");
            continue;
        }
        // A burst that outruns the ring loses its tail. A sender
        // held up mid-burst by another process on its core spreads the burst out, and the
        // device then drains enough of it for all to fit: most long bursts, not all, must
        // lose, and every incomplete burst is a long one.
        let sent = uint(s, "bursts_sent");
        assert_eq!(
            exceptions.len() as u64 + uint(s, "bursts_complete"),
            sent,
            "{name}: {s}"
        );
        assert!(
            exceptions.len() as u64 * 2 >= sent,
            "{name}: only {} of {sent} bursts overflowed the ring: {s}",
            exceptions.len()
        );
        let mut lost = 0;
        for b in exceptions {
            let (got, want) = (uint(b, "received"), uint(b, "expected"));
            eprintln!(
                "  {name} burst {} at {:.2} s: {got}/{want}",
                uint(b, "index"),
                num(b, "at_s")
            );
            // The ring's frames get through, plus what the device moved while the burst
            // arrived (one per 500 µs).
            assert!(
                (RING..want).contains(&got),
                "{name}: a burst of {want} through a ring of {RING} delivered {got}"
            );
            lost += want - got;
        }
        assert_eq!(
            lost,
            uint(s, "lost"),
            "{name}: losses outside the bursts: {s}"
        );
    }
    // The overflowing streams are the host's bulk bursts (50 over 4.9 ms: about 10 drained,
    // 40 for the ring) and its 1400 B bursts (30 over 2.9 ms: 5 drained, 25 for the ring).
    for (name, bursts) in [("host-bulk", 2), ("host-large", 6)] {
        assert_eq!(uint(stream(&doc, name), "bursts_sent"), bursts);
    }
    // And the device dropped exactly those.
    losses_match_the_link(&doc, &stages, "to-server", "a-to-b");
    losses_match_the_link(&doc, &stages, "from-server", "b-to-a");
}
