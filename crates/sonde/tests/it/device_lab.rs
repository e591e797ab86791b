//! Issue 38's shared-medium links against lab ground truth (root): a device that holds its
//! sender instead of dropping (`backpressure = true`), and a half-duplex link whose two
//! directions share one rate (`duplex = "half"`). Real namespaces, real TCP through sonde's
//! client and server, checked against what sonde measured and what the lab's forwarder
//! counted per stage.
//!
//! Without root each test prints why it skips; `SONDE_REQUIRE_ALL=1` (CI) makes that a failure.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{lab_available, lab_result, run_lab_output, TempDir};
use serde_json::Value;
use sonde_store::{Store, TestRecord};
use sonde_testkit::scenario::chain;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// client - server over one link `dev`, each setting `(name, impairment)` applied both ways,
/// and one test: `sonde ARGS`.
fn scenario(settings: &[(&str, &str)], args: &[&str]) -> String {
    let mut s = chain()
        .name("device-lab")
        .description("shared-medium links: a device with flow control, a half-duplex link")
        .seed(38)
        .host("client")
        .link("dev")
        .host("server");
    for (name, impair) in settings {
        s = s.settings(name).impair("dev", impair);
    }
    s.sonde("tcp", args).to_toml()
}

/// Runs the scenario (exit 0 required) and returns its output directory and the lab's notes
/// (`note (SETTING): ...` lines of `sonde lab run`: the forwarder's lateness and priority, the
/// hypervisor's steal time).
fn run_scenario(dir: &TempDir, text: &str) -> (PathBuf, Vec<String>) {
    let (out_dir, out) = run_lab_output(dir, text, Duration::from_secs(180), &[0]);
    let notes: Vec<String> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("note ("))
        .map(|l| l.trim().to_owned())
        .collect();
    for n in &notes {
        eprintln!("{n}");
    }
    (out_dir, notes)
}

/// The record of setting `settings`'s test in the run's database.
fn record(out_dir: &Path, settings: &str) -> TestRecord {
    let store = Store::open_read_only(out_dir.join("results.db")).expect("results.db opens");
    let run = store.latest_run().expect("runs readable").expect("a run");
    let loaded = store.load_run(run).expect("the run loads");
    loaded
        .tests
        .into_iter()
        .find(|t| t.settings == settings)
        .unwrap_or_else(|| panic!("no test of {settings}"))
}

/// The forwarder's counters of stage `stage` of link `dev` towards `direction` (`a-to-b`)
/// in setting `settings`, or None when that direction has no such stage.
fn stage(out_dir: &Path, settings: &str, direction: &str, stage: &str) -> Option<Value> {
    let stats = record(out_dir, settings)
        .stage_stats
        .expect("the userspace engine's counters");
    let stages = stats[format!("dev {direction}")]["stages"]
        .as_array()?
        .clone();
    stages
        .into_iter()
        .find(|s| s[0] == stage)
        .map(|s| s[1].clone())
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// Goodput in bits/s a TCP result's receiver counted, `suffix` "" or "_bidir_reverse".
fn received_bps(doc: &Value, suffix: &str) -> f64 {
    doc["end"][format!("sum_received{suffix}")]["bits_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("no sum_received{suffix} in {doc}"))
}

/// Whether the lab says the host held back what carries `settings`'s data (`dev a-to-b`):
/// the hypervisor's steal-time note, the engine without real-time priority, or more than 1 %
/// of that direction's frames leaving 1 ms or more after their planned time (its lateness
/// record, the figures of its `note`). A few frames a millisecond late cost the device's rate
/// nothing (its schedule runs on the frames' arrival times and catches up); a host that late
/// that often has also held the sender and receiver back.
fn host_held_back(out_dir: &Path, notes: &[String], settings: &str) -> bool {
    let prefix = format!("note ({settings}): ");
    let steal = notes
        .iter()
        .filter_map(|n| n.strip_prefix(&prefix))
        .any(|n| n.starts_with(sonde_lab::steal::NOTE_START));
    let stats = record(out_dir, settings)
        .stage_stats
        .expect("the userspace engine's counters");
    let dir = &stats["dev a-to-b"];
    let late: u64 = dir["io"]["lateness_log2_us"]
        .as_array()
        .expect("a lateness record")
        .iter()
        .skip(11)
        .filter_map(Value::as_u64)
        .sum();
    let frames = count(&dir["io"], "frames_tx").max(1);
    let realtime = dir["realtime"] == true;
    eprintln!(
        "{settings}: {late} of {frames} frames 1 ms or more late, real-time {realtime}, \
         steal note {steal}"
    );
    steal || !realtime || late * 100 > frames
}

const PUSH_BACK: &str = "device = { pps = 8000, ring = 4, backpressure = true }";
const DROPPING: &str = "device = { pps = 8000, ring = 4 }";

/// A device of 8000 frames/s with a 4-frame ring. With flow control TCP keeps it busy: every
/// frame the ring takes leaves 125 µs after the last, the ring drops nothing, and TCP carries
/// 8000 full segments a second, at least 97 % of 8000 × MSS bytes/s (the payload of each frame
/// is the MSS sonde's client reports, `start.tcp_mss_default`; with `-l 1448` every write
/// fills one), unless the lab says the host held it back ([`host_held_back`]; the bound is
/// then 80 %). Without flow control the same ring drops what TCP's bursts put on it, counted
/// by the `device` stage, and there is no `device-queue` stage.
#[test]
fn a_device_with_backpressure_carries_its_frame_rate_and_drops_nothing() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("device-backpressure");
    let text = scenario(
        &[("push-back", PUSH_BACK), ("dropping", DROPPING)],
        &["client", "{server}", "-l", "1448", "-t", "5"],
    );
    let (out, notes) = run_scenario(&dir, &text);

    let doc = lab_result(&out, "push-back", "tcp", 1);
    let mss = doc["start"]["tcp_mss_default"]
        .as_u64()
        .unwrap_or_else(|| panic!("no tcp_mss_default in {}", doc["start"]));
    let ceiling = 8000.0 * mss as f64 * 8.0;
    let got = received_bps(&doc, "");
    let held = host_held_back(&out, &notes, "push-back");
    let floor = if held { 0.80 } else { 0.97 };
    eprintln!(
        "push-back: {:.2} Mbit/s of {:.2} (8000 frames/s x {mss} B), {:.1} %{}",
        got / 1e6,
        ceiling / 1e6,
        got * 100.0 / ceiling,
        if held {
            "; the lab says the host held its engine back"
        } else {
            ""
        }
    );
    assert!(
        got >= floor * ceiling,
        "TCP through a device with backpressure: {:.2} Mbit/s, below {:.0} % of {:.2}",
        got / 1e6,
        floor * 100.0,
        ceiling / 1e6
    );
    let ring = stage(&out, "push-back", "a-to-b", "device").expect("a device stage");
    assert_eq!(
        count(&ring, "dropped"),
        0,
        "the ring dropped with flow control"
    );
    assert!(count(&ring, "packets_out") > 30_000, "{ring}");
    let queue = stage(&out, "push-back", "a-to-b", "device-queue").expect("its upstream queue");
    eprintln!(
        "push-back: the upstream queue held at most {} frames and dropped {}",
        count(&queue, "max_queued"),
        count(&queue, "dropped")
    );
    assert!(
        count(&queue, "max_queued") > 4,
        "nothing waited upstream: {queue}"
    );

    let ring = stage(&out, "dropping", "a-to-b", "device").expect("a device stage");
    eprintln!(
        "dropping: {:.2} Mbit/s; the ring dropped {} of {} frames",
        received_bps(&lab_result(&out, "dropping", "tcp", 1), "") / 1e6,
        count(&ring, "dropped"),
        count(&ring, "packets_in")
    );
    assert!(
        count(&ring, "dropped") > 0,
        "a 4-frame ring without flow control dropped nothing"
    );
    assert!(stage(&out, "dropping", "a-to-b", "device-queue").is_none());
}

/// 10 Mbit/s both ways, 1 ms delay (so both settings run in the same engine), a 100-frame
/// queue each way.
const TEN_MBIT: &str = "rate = \"10mbit\"\ndelay = \"1ms\"\nqueue_limit = \"100pkt\"";

/// TCP `--bidir` over a 10 Mbit/s link. Half duplex, both directions' goodput together stays
/// within the link's rate: every frame of either direction (data and ACKs) draws on one
/// 10 Mbit/s budget counted in whole Ethernet frames, so goodput cannot reach 10 Mbit/s (at
/// most 10 × 1448/1514 with no ACKs); each direction's rate is over its own receiver's
/// span, which the two ends start and stop together, so no tolerance is needed above
/// 10 Mbit/s. The medium serves frames in the order they came, so neither direction starves
/// (each carries more than 15 % of the rate). Full duplex, the same link carries each
/// direction at the rate: more than 1.5 × 10 Mbit/s together.
#[test]
fn a_half_duplex_link_shares_its_rate_between_the_directions() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("device-duplex");
    let half = format!("{TEN_MBIT}\nduplex = \"half\"");
    let text = scenario(
        &[("half", &half), ("full", TEN_MBIT)],
        &["client", "{server}", "--bidir", "-t", "5"],
    );
    let (out, _notes) = run_scenario(&dir, &text);
    let rates = |settings: &str| {
        let doc = lab_result(&out, settings, "tcp", 1);
        let (up, down) = (received_bps(&doc, ""), received_bps(&doc, "_bidir_reverse"));
        eprintln!(
            "{settings} duplex: {:.2} + {:.2} = {:.2} Mbit/s",
            up / 1e6,
            down / 1e6,
            (up + down) / 1e6
        );
        (up, down)
    };
    let ceiling = 10e6;
    let (up, down) = rates("half");
    assert!(
        up + down <= ceiling,
        "half duplex carried {:.2} Mbit/s in all, above the link's 10",
        (up + down) / 1e6
    );
    assert!(
        up > 0.15 * ceiling && down > 0.15 * ceiling,
        "one direction starved the other: {:.2} and {:.2} Mbit/s",
        up / 1e6,
        down / 1e6
    );
    let (up, down) = rates("full");
    assert!(
        up + down > 1.5 * ceiling,
        "full duplex carried only {:.2} Mbit/s in all",
        (up + down) / 1e6
    );
}
