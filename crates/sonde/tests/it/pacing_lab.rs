//! Exact pacing, checked against lab ground truth (root): a paced UDP sender must not overflow
//! a device's short frame ring that a smooth sender at the same rate fits through, in both
//! directions and in both data formats; `--burst` must really burst; TCP with `-b` must achieve
//! what was asked on a shaped link.
//!
//! Regression for issue 9: at 64 B and 4.1 Mbit/s (8008 datagrams/s) into a device of 8000
//! packets/s with a 4-frame ring, sonde lost 50 % (its sender put about 1 ms of datagrams on the
//! wire at once). A sender that spaces every datagram loses only the offered excess, 0.1 %.
//!
//! Without root each test prints why it skips; `SONDE_REQUIRE_ALL=1` (CI) makes that a failure.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{lab_available, lab_result as result_of, notes, require_all, run_lab, TempDir};
use serde_json::Value;
use sonde_testkit::scenario::{chain, Scenario};
use std::path::Path;
use std::time::Duration;

/// client - router - server; the router's link to the server is a device with a packet ceiling
/// of 8000/s and a 4-frame ring. Its tests: 64 B datagrams at 4.1 Mbit/s up, down, and in
/// bursts of 8.
fn device_ring() -> Scenario {
    let paced = ["client", "{server}", "-u", "-l", "64", "-b", "4.1m"];
    let with = |rest: &[&'static str]| [&paced[..], rest].concat();
    chain()
        .name("device-ring")
        .description("a device link of 8000 packets/s with a 4-frame ring")
        .seed(9)
        .host("client")
        .link("lan")
        .router("router")
        .link("dev")
        .host("server")
        .settings("ring-4")
        .impair("dev", "device = { pps = 8000, ring = 4 }")
        .sonde("up", &with(&["-t", "4"]))
        .sonde("down", &with(&["-t", "4", "-R"]))
        .sonde("burst", &with(&["--burst", "8", "-t", "3"]))
}

/// One 1000 Mbit/s link (tests to be added).
fn tcp_sweep() -> Scenario {
    chain()
        .name("tcp-sweep")
        .description("TCP with -b over a 1000 Mbit/s link")
        .seed(3)
        .host("client")
        .link("wan")
        .host("server")
        .settings("gig")
        .impair("wan", "rate = \"1000mbit\"")
}

const SWEEP_MBIT: [u64; 6] = [1000, 140, 130, 100, 50, 10];

fn have_iperf3() -> bool {
    let found = std::process::Command::new("iperf3")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        assert!(
            !require_all(),
            "SONDE_REQUIRE_ALL=1 but iperf3 is not installed"
        );
        eprintln!("iperf3 not installed: the iperf3-format direction is not checked");
    }
    found
}

fn result(out_dir: &Path, settings: &str, test: &str) -> Value {
    result_of(out_dir, settings, test, 1)
}

/// Loss in percent and datagrams counted at the receiver, from an iperf3-schema document.
fn udp_loss(doc: &Value) -> (f64, u64) {
    let sum = if doc["end"]["sum_received"].is_object() {
        &doc["end"]["sum_received"]
    } else {
        &doc["end"]["sum"]
    };
    let lost = sum["lost_percent"].as_f64().expect("lost_percent");
    let packets = sum["packets"].as_u64().expect("packets");
    (lost, packets)
}

/// The loss of one test in one lab run, printed as it is read.
fn loss_of(out_dir: &Path, test: &str, attempt: u32) -> (f64, u64) {
    let doc = result_of(out_dir, "ring-4", test, 1);
    let (loss, packets) = udp_loss(&doc);
    eprintln!("{test} (run {attempt}): {loss:.3} % of {packets} datagrams lost");
    // A sender held off the CPU says so (sonde's documents only).
    for note in notes(&doc) {
        if note.contains("fell behind") {
            eprintln!("  {note}");
        }
    }
    (loss, packets)
}

/// Prints the lab forwarder's counters (drops per stage, its own lateness) from the report, so
/// a failure shows where the datagrams were lost.
fn print_forwarder_counters(out_dir: &Path) {
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap_or_default();
    for line in report.lines().filter(|l| l.contains("\"stages\"")) {
        eprintln!("lab forwarder: {line}");
    }
}

/// Lab runs of the ring tests at most. Another process that holds the CPU for a millisecond
/// delays the sender, which then owes datagrams and catches up faster than the device drains:
/// a busy machine adds loss, never removes it. So a smooth test's best run is the sender's own
/// pacing, and the runs stop once every smooth test has had one within the bound.
const ATTEMPTS: u32 = 3;

/// The ring scenario with the iperf3-format direction where iperf3 is installed, and the
/// smooth tests it holds.
fn ring_scenario() -> (String, Vec<&'static str>) {
    let iperf3 = have_iperf3();
    let mut smooth = vec!["up", "down"];
    if iperf3 {
        smooth.push("iperf3-down");
        // iperf3's client against the lab's sonde server, which then sends iperf3's datagram
        // format.
        let iperf3_down = [
            "iperf3", "-c", "{server}", "-u", "-l", "64", "-b", "4.1m", "-t", "4", "-R", "-J",
        ];
        let ring = device_ring().command("iperf3-down", &iperf3_down);
        (ring.to_toml(), smooth)
    } else {
        (device_ring().to_toml(), smooth)
    }
}

/// Whether the test's own document says a sender fell behind its schedule (sonde's documents
/// carry the notes of both ends; iperf3's have none).
fn sender_fell_behind(out_dir: &Path, test: &str) -> bool {
    let doc = result_of(out_dir, "ring-4", test, 1);
    notes(&doc).iter().any(|n| n.contains("fell behind"))
}

/// What one lab run shows on any host, however busy. A sender that spaces every datagram
/// loses only the offered excess (0.1 %) where bursts of a millisecond lost 50 %: each smooth
/// direction of sonde's format loses at most 0.5 %, unless its own result says the sender fell
/// behind its schedule (a busy host then made it catch up faster than the device drains, as
/// the note warns: seen, 12.8 % with three builds beside the test). iperf3's documents carry
/// no such note (and sonde's server logs none for an iperf3 client), so the iperf3-format
/// direction is held to 5 % (ten times what pacing loses, a tenth of what bursts did; a bound
/// reasoned, not measured) unless a sonde-format direction of the same run says its sender
/// fell behind: the tool's word about this host in this run, if not about that sender (seen:
/// 28.6 % with a debug build at load 7.5, its neighbours' senders behind 14 and 79 times).
/// `--burst 8` overflows the 4-frame ring in every run. The 0.5 % bound on every direction,
/// no excuse taken, is the benchmark below.
#[test]
fn paced_udp_fits_a_short_device_ring_unless_the_host_held_the_sender_back() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let (scenario, smooth) = ring_scenario();
    let dir = TempDir::new("pacing-ring-ci");
    let out = run_lab(&dir, &scenario, Duration::from_secs(120));
    let mut failures = Vec::new();
    let behind: Vec<&str> = smooth
        .iter()
        .copied()
        .filter(|t| !t.starts_with("iperf3") && sender_fell_behind(&out, t))
        .collect();
    for test in &smooth {
        let (loss, packets) = loss_of(&out, test, 1);
        assert!(packets > 30_000, "{test}: only {packets} datagrams");
        let iperf3_format = test.starts_with("iperf3");
        let excused = if iperf3_format {
            !behind.is_empty()
        } else {
            behind.contains(test)
        };
        let bound = if iperf3_format { 5.0 } else { 0.5 };
        if excused {
            eprintln!(
                "{test}: the host held senders back in this run ({behind:?} said so); its \
                 loss is the host's doing"
            );
        } else if loss > bound {
            failures.push(format!(
                "{test}: {loss:.2} % lost through a 4-frame ring at 8008 datagrams/s, above \
                 {bound} % (smooth pacing loses ~0.1 %), and the sender did not say it fell \
                 behind"
            ));
        }
    }
    let (burst_loss, _) = loss_of(&out, "burst", 1);
    if burst_loss < 20.0 {
        failures.push(format!(
            "--burst 8 lost only {burst_loss:.2} % through a 4-frame ring: not back to back"
        ));
    }
    if !failures.is_empty() {
        print_forwarder_counters(&out);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn paced_udp_fits_a_short_device_ring_in_both_directions_and_formats() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let (scenario, smooth) = ring_scenario();
    // The best loss of each smooth test over the runs so far.
    let mut best = vec![f64::INFINITY; smooth.len()];
    for attempt in 1..=ATTEMPTS {
        let dir = TempDir::new("pacing-ring");
        let out = run_lab(&dir, &scenario, Duration::from_secs(120));
        for (test, best) in smooth.iter().zip(best.iter_mut()) {
            let (loss, packets) = loss_of(&out, test, attempt);
            // 4 s at 8008/s; the device forwards 8000/s: 0.1 % excess, at most 0.5 % allowed.
            assert!(packets > 30_000, "{test}: only {packets} datagrams");
            *best = best.min(loss);
        }
        // The same average rate in bursts of 8 back to back must overflow a ring of 4: half of
        // every burst arrives faster than the device drains it, in every run.
        let (burst_loss, _) = loss_of(&out, "burst", attempt);
        assert!(
            burst_loss >= 20.0,
            "--burst 8 lost only {burst_loss:.2} % through a 4-frame ring: the bursts were not \
             back to back"
        );
        if best.iter().all(|b| *b <= 0.5) {
            return;
        }
        print_forwarder_counters(&out);
    }
    for (test, best) in smooth.iter().zip(&best) {
        assert!(
            *best <= 0.5,
            "{test}: at best {best:.2} % lost through a 4-frame ring at 8008 datagrams/s in \
             {ATTEMPTS} runs (smooth pacing loses ~0.1 %)"
        );
    }
}

#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn tcp_with_a_bitrate_achieves_what_was_asked_on_a_gigabit_link() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let mut sweep = tcp_sweep();
    for mbit in SWEEP_MBIT {
        let rate = format!("{mbit}m");
        sweep = sweep.sonde(
            &format!("b{mbit}"),
            &["client", "{server}", "-b", &rate, "-t", "3"],
        );
    }
    let scenario = sweep.to_toml();
    let dir = TempDir::new("pacing-tcp");
    let out = run_lab(&dir, &scenario, Duration::from_secs(240));
    // What TCP can carry over a 1000 Mbit/s Ethernet link: 1448 payload bytes per 1514-byte
    // frame (1500 MTU, 20 IP + 32 TCP header with timestamps, 14 Ethernet).
    let ceiling = 1000.0 * 1448.0 / 1514.0;
    for mbit in SWEEP_MBIT {
        let doc = result(&out, "gig", &format!("b{mbit}"));
        let got = doc["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .expect("receiver rate")
            / 1e6;
        let want = (mbit as f64).min(ceiling);
        // The asked rate when the link can carry it; within 3 % (the receiver's span includes
        // the last write's drain). At 1000 the link's ceiling is the limit, and a 2-core
        // machine running both ends may fall a little further short.
        let tolerance = if (mbit as f64) < ceiling { 0.03 } else { 0.08 };
        eprintln!("-b {mbit}m: achieved {got:.1} Mbit/s (expected {want:.1})");
        assert!(
            (got - want).abs() <= want * tolerance,
            "-b {mbit}m: achieved {got:.1} Mbit/s, expected {want:.1} within {:.0} %",
            tolerance * 100.0
        );
    }
}
