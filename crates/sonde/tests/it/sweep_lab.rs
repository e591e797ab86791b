//! `sonde sweep` against lab ground truth (root): a client - router - server lab whose
//! router-server link is a device of 8000 frames/s behind a 20-frame ring (the lab's device
//! model: one frame leaves every 125 µs at the earliest, whatever its size).
//!
//! - The four-length search (64, 100, 500, 1448 B, upload, 1 s steps) finds for each length the device's
//!   ceiling at UDP payload, 8000 frames/s × length × 8 bit, within 2 %, and the whole sweep
//!   takes under 2 minutes (the time the sweep itself reports, steps and set-ups included).
//! - A rate list at 1448 B stops following asked at the first listed rate above the ceiling
//!   (92.7 Mbit/s), and nothing gets through faster than the device moves frames.
//!
//! Without root each test prints why it skips; `SONDE_REQUIRE_ALL=1` (CI) makes that a failure.
//! About 70 s in all on a 2-core host (the search runs a second time when the first did not
//! find every ceiling, see the test). On a host loaded beyond its cores (a busy loop beside
//! it and a fuzzer) the sender is starved: its steps fall short and run again, and the search
//! ends "sender_limited" (exit 1) rather than reporting the host's stalls as the device's
//! ceiling.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{arr, lab_available, lab_result, num, run_lab_exiting, text, uint, TempDir};
use serde_json::Value;
use sonde_testkit::scenario::chain;
use std::time::Duration;

/// Frames per second of the device link.
const PPS: f64 = 8000.0;

/// client - router - server, the router-server link a device of [`PPS`] frames a second with
/// a 20-frame ring, and one test: `sonde SONDE...`.
fn topology(sonde: &[&str]) -> String {
    chain()
        .name("sweep-lab")
        .description("a rate sweep through a device link with a packet ceiling")
        .seed(10)
        .host("client")
        .link("lan")
        .router("router")
        .link("dev")
        .host("server")
        .settings("device")
        .impair("dev", "device = { pps = 8000, ring = 20 }")
        .sonde("sweep", sonde)
        .timeout("200s")
        .to_toml()
}

/// Runs `sonde sweep {server} ARGS...` once through the device link; its JSON document.
fn run_sweep(tag: &str, args: &[&str]) -> Value {
    let dir = TempDir::new(tag);
    let mut sonde = vec!["sweep", "{server}"];
    sonde.extend_from_slice(args);
    let scenario = topology(&sonde);
    // A sweep that ends sender-limited or out of steps exits 1, and the lab run with it; its document is
    // still written, and the caller judges it.
    let out_dir = run_lab_exiting(&dir, &scenario, Duration::from_secs(260), &[0, 1]);
    lab_result(&out_dir, "device", "sweep", 1)
}

#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn the_search_finds_the_device_ceiling_per_length_within_2_percent_in_under_2_minutes() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    // Sweep steps pace steadily (a sender held up makes up two datagrams at most), so a busy
    // host shows as steps whose sender fell short, which run again, and at worst as a
    // "sender_limited" search, never as the device's loss. On this shared host that can still
    // happen, so a second sweep runs when the first did not find every ceiling or found one
    // too low; a rate found too high fails at once.
    let mut doc = Value::Null;
    for attempt in 1..=2 {
        doc = run_sweep(
            &format!("sweep-search{attempt}"),
            &[
                "-u",
                "-l",
                "64,100,500,1448",
                "--max-loss",
                "0.1%",
                "--max-rate",
                "100m",
                "--step-time",
                "1",
            ],
        );
        let low = arr(&doc, "results").iter().any(|r| {
            let ceiling = PPS * uint(r, "length") as f64 * 8.0;
            r["verdict"] != "found" || r["rate_bps"].as_f64().is_none_or(|f| f < ceiling * 0.98)
        });
        if !low {
            break;
        }
        eprintln!("sweep {attempt} did not find every ceiling within 2 %:\n{doc}");
    }
    assert_eq!(doc["partial"], false, "{doc}");
    assert_eq!(text(&doc, "sweep.layer"), "UDP payload");
    let results = arr(&doc, "results");
    assert_eq!(results.len(), 4, "{doc}");
    let mut total = 0.0;
    for r in results {
        let length = uint(r, "length") as f64;
        let ceiling = PPS * length * 8.0;
        assert_eq!(text(r, "verdict"), "found", "{r}");
        let found = num(r, "rate_bps");
        let secs = num(r, "seconds");
        total += secs;
        eprintln!(
            "{length} B: found {:.3} Mbit/s = {:.0} datagrams/s, ceiling {:.3} Mbit/s \
             ({:+.2} %), {} steps, {secs:.1} s",
            found / 1e6,
            num(r, "datagrams_per_sec"),
            ceiling / 1e6,
            (found / ceiling - 1.0) * 100.0,
            uint(r, "steps"),
        );
        assert!(
            (found / ceiling - 1.0).abs() <= 0.02,
            "{length} B: found {found} bit/s, the device's ceiling is {ceiling}\n{doc}"
        );
    }
    eprintln!("the four-length sweep took {total:.1} s");
    for s in arr(&doc, "steps") {
        eprintln!(
            "  {:>5} B {:>9.3} offered {:>9.3} sent {:>9.3} achieved (Mbit/s) {:>7.3} % lost {} {}",
            s["length"],
            s["offered_bps"].as_f64().unwrap_or(0.0) / 1e6,
            s["sent_bps"].as_f64().unwrap_or(0.0) / 1e6,
            s["achieved_bps"].as_f64().unwrap_or(0.0) / 1e6,
            s["loss_percent"].as_f64().unwrap_or(f64::NAN),
            s["passed"],
            if s["rerun"] == true { "rerun" } else { "" },
        );
    }
    assert!(total < 120.0, "the sweep took {total:.1} s");
    // Every step is in the document, each with its offered rate, achieved rate and loss.
    let steps = arr(&doc, "steps");
    let counted: u64 = results.iter().map(|r| uint(r, "steps")).sum();
    assert_eq!(steps.len() as u64, counted);
    assert!(steps
        .iter()
        .all(|s| s["loss_percent"].is_f64() && s["achieved_bps"].is_f64()));
}

#[test]
fn a_rate_list_stops_following_at_the_first_rate_above_the_ceiling() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    // 1448 B: the ceiling is 92.672 Mbit/s of UDP payload. The highest rate below it is 76 %
    // of it: at 90m (97 %) the userspace device, a busy loop beside the lab, lost 0.43 % and
    // the knee fell to 50m. How close to the ceiling a rate still passes is the benchmark's
    // question (the device-ceiling search above); this test asks where the list stops.
    let doc = run_sweep(
        "sweep-rates",
        &[
            "-u",
            "-l",
            "1448",
            "-b",
            "130m,110m,70m,50m,10m",
            "--step-time",
            "1",
        ],
    );
    assert_eq!(doc["partial"], false, "{doc}");
    let all = arr(&doc, "steps");
    for s in all {
        eprintln!(
            "asked {:.1} Mbit/s sent {:.2} achieved {:.2} Mbit/s loss {:.3} %{}",
            num(s, "offered_bps") / 1e6,
            num(s, "sent_bps") / 1e6,
            num(s, "achieved_bps") / 1e6,
            num(s, "loss_percent"),
            if s["rerun"] == true {
                " (sender short: runs again)"
            } else if s["sender_short"] == true {
                " (sender short)"
            } else {
                ""
            }
        );
    }
    // One step per rate, besides the reruns of steps whose sender fell short on this host.
    let steps: Vec<&Value> = all.iter().filter(|s| s["rerun"] != true).collect();
    assert_eq!(steps.len(), 5, "{doc}");
    // A rate whose sender still fell short after its reruns (a busy host: seen at 70m and 50m
    // under three builds beside the lab) is the tool's word about the host: it must have sent
    // short by more than the tolerance with the receiver getting what was sent, be listed in
    // the knee's sender_short_bps, and may set the knee below the device's ceiling.
    let short: Vec<u64> = steps
        .iter()
        .filter(|s| s["sender_short"] == true)
        .map(|s| {
            let (asked, sent) = (num(s, "offered_bps"), num(s, "sent_bps"));
            assert!(
                sent < asked * 0.98 && num(s, "achieved_bps") >= sent * 0.98,
                "{s}"
            );
            uint(s, "offered_bps")
        })
        .collect();
    let listed: Vec<u64> = arr(&doc["knees"][0], "sender_short_bps")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(listed, short, "{doc}");
    // The knee: 110m, the first rate past the ceiling, unless the host's sender fell short
    // of a lower one.
    let knee = short.iter().copied().chain([110_000_000]).min();
    assert_eq!(doc["knees"][0]["knee_bps"].as_u64(), knee, "{doc}");
    // Nothing gets through faster than the device moves frames.
    let top = num(steps[0], "achieved_bps");
    assert!(top <= PPS * 1448.0 * 8.0 * 1.01, "{top}");
}
