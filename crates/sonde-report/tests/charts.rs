//! What the report's charts and tables claim, read back from the rendered HTML and Markdown:
//! measurements at discrete settings are never joined by a line, both ends' interval series are
//! shown and labelled, the RTT distribution is drawn from binned samples only, the lab's
//! counters are tables, and an iperf3 document is credited to iperf3.
//!
//! The documents are real output (sonde and iperf3 3.12 on loopback) except where a test says
//! what it changed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use sonde_testkit::page::{chart, series};

use std::path::PathBuf;

use serde_json::Value;
use sonde_report::{render, Format, Inputs};

fn html(inputs: &Inputs) -> String {
    String::from_utf8(render(inputs, Format::Html).unwrap()).unwrap()
}

fn markdown(inputs: &Inputs) -> String {
    String::from_utf8(render(inputs, Format::Markdown).unwrap()).unwrap()
}

fn docs(names: &[&str]) -> Inputs {
    let paths: Vec<PathBuf> = names
        .iter()
        .map(|n| PathBuf::from(format!("tests/fixtures/docs/{n}")))
        .collect();
    Inputs::from_paths(&paths).unwrap()
}

fn doc_value(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("tests/fixtures/docs/{name}")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn doc_from(name: &str, v: &Value) -> Inputs {
    Inputs::Documents(vec![Inputs::parse_document(name, &v.to_string()).unwrap()])
}

/// The vertices of the polylines in `svg`, in order.
fn polyline_points(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline ")
        .skip(1)
        .map(|p| {
            let from = p.find("points=\"").unwrap() + 8;
            p[from..from + p[from..].find('"').unwrap()]
                .split(' ')
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_loss_sweep_is_markers_never_a_line() {
    let dir = sonde_testkit::TempDir::new("doc");
    let page = html(&common::lab_inputs(dir.path()));
    let svg = chart(&page, "Goodput against link loss");
    let s = series(svg);
    // tcp-cubic, tcp-bbr, udp-97m, each measured at 0, 5 and 10 % loss (one failed test).
    assert_eq!(s.len(), 3, "{s:?}");
    for (name, style, lines, markers) in &s {
        assert_eq!(style, "markers", "{name}");
        assert_eq!(*lines, 0, "{name}: a line joins separate settings");
        assert!(*markers >= 2, "{name}: {markers} markers");
    }
    assert!(!svg.contains("<polyline"), "no line anywhere in the sweep");
}

#[test]
fn interval_series_are_lines_broken_at_a_missing_interval() {
    let mut doc = doc_value("udp-peer-intervals.json");
    let all = doc["intervals"].as_array().unwrap().len();
    assert!(all >= 5, "the fixture has {all} intervals");
    // Drop the third interval: the series must not bridge the hole.
    doc["intervals"].as_array_mut().unwrap().remove(2);
    let page = html(&doc_from("gap.json", &doc));
    let svg = chart(&page, "Throughput over time: gap.json");
    let s = series(svg);
    let sent = s.iter().find(|x| x.0.contains("sent by client")).unwrap();
    assert_eq!(sent.1, "joined");
    assert_eq!(sent.2, 2, "two runs of intervals: {s:?}");
    let means: Vec<_> = s.iter().filter(|x| x.1 == "reference").collect();
    assert!(!means.is_empty() && means.iter().all(|m| m.3 == 0));
}

/// The HTML of the document `name` and its throughput chart's series, checking that the chart
/// has the client's (sending) and the server's (receiving) interval series.
fn both_ends(name: &str) -> (String, Vec<(String, String, usize, usize)>) {
    let page = html(&docs(&[name]));
    let id = format!("tests/fixtures/docs/{name}");
    let s = series(chart(&page, &format!("Throughput over time: {id}")));
    let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
    for want in [
        "client → server sent by client (sender)",
        "client → server received by server (receiver)",
    ] {
        assert!(names.contains(&want), "{name}: no {want:?} in {names:?}");
    }
    (page, s)
}

#[test]
fn a_sonde_document_shows_both_ends_intervals() {
    let (page, s) = both_ends("udp-peer-intervals.json");
    let doc = doc_value("udp-peer-intervals.json");
    let peer = doc["sonde"]["peer_intervals"].as_array().unwrap().len();
    let received = s
        .iter()
        .find(|x| x.0.contains("received by server"))
        .unwrap();
    assert_eq!(received.1, "joined");
    assert_eq!(received.3, peer, "a marker per server interval");
    // The loss per stream is the receiver's: only the server's intervals carry it.
    let id = "tests/fixtures/docs/udp-peer-intervals.json";
    let loss = series(chart(&page, &format!("Loss per stream over time: {id}")));
    assert_eq!(loss.len(), 1, "{loss:?}");
    assert_eq!(loss[0].0, "stream 1, received by server");
}

#[test]
fn an_iperf3_document_with_server_output_shows_both_ends() {
    let (_, s) = both_ends("iperf3-tcp-server-output.json");
    let doc = doc_value("iperf3-tcp-server-output.json");
    let server = doc["server_output_json"]["intervals"]
        .as_array()
        .unwrap()
        .len();
    let received = s
        .iter()
        .find(|x| x.0.contains("received by server"))
        .unwrap();
    assert_eq!(received.3, server, "a marker per server interval");
}

#[test]
fn an_iperf3_document_names_iperf3_as_the_tool() {
    let inputs = docs(&["iperf3-tcp-server-output.json"]);
    let md = markdown(&inputs);
    assert!(md.starts_with("# iperf3 report\n"), "{md}");
    assert!(md.contains("- **Tool**: iperf3 3.12\n"), "{md}");
    assert!(!md.contains("sonde 0.1.0"), "{md}");
    let sonde = markdown(&docs(&["tcp-cubic.json"]));
    assert!(sonde.starts_with("# sonde report\n"));
    assert!(sonde.contains("- **Tool**: sonde 0.1.0\n"));
}

#[test]
fn the_rtt_cdf_is_drawn_from_binned_samples_only() {
    // Quantiles only: no curve, and the page says why.
    let page = html(&docs(&["latency.json"]));
    assert!(
        !page.contains("<title>RTT distribution"),
        "a curve from quantiles"
    );
    assert!(page.contains("No RTT distribution curve for tests/fixtures/docs/latency.json"));

    // The same run with its three round trips binned (the field the latency document is to
    // carry; the bins hold the document's own min, median and max).
    let page = html(&docs(&["latency-histogram.json"]));
    let svg = chart(
        &page,
        "RTT distribution (CDF of every sample, binned; widest bin 0.000 ms)",
    );
    let s = series(svg);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].1, "steps");
    assert!(s[0].0.ends_with("(3 samples)"), "{}", s[0].0);
    let lines = polyline_points(svg);
    assert_eq!(lines.len(), 1);
    let p = &lines[0];
    // From 0 at the first bin: three steps up, each flat then vertical.
    assert_eq!(p.len(), 1 + 2 * 3, "{p:?}");
    for w in p.windows(2) {
        assert!(w[1].0 >= w[0].0 && w[1].1 <= w[0].1, "monotone: {w:?}");
    }
    let (top, bottom) = (p.last().unwrap().1, p[0].1);
    let third = (bottom - top) / 3.0;
    // The rises are a third of the height each (screen y grows downwards).
    for (k, i) in [2usize, 4, 6].into_iter().enumerate() {
        let want = bottom - third * (k + 1) as f64;
        assert!((p[i].1 - want).abs() < 0.2, "step {k}: {p:?}");
    }
}

#[test]
fn the_labs_counters_are_tables() {
    let dir = sonde_testkit::TempDir::new("doc");
    let inputs = common::lab_inputs(dir.path());
    let md = markdown(&inputs);
    assert!(
        !md.lines()
            .any(|l| l.starts_with('{') || l.starts_with("```json")),
        "no JSON blob in report.md"
    );
    for row in [
        "| Stage | Packets in | Packets out | Dropped | Duplicated | Reordered | Corrupted | Max queued |",
        "| rate | 1000 | 1000 | 0 | 0 | 0 | 0 | 940 |",
        "| loss | 1000 | 950 | 50 | 0 | 0 | 0 | 0 |",
        "| Direction | Frames read | Frames written | Truncated | Refused by the kernel | Lateness | \
         Wait in the socket | Real-time |",
        "| wan a-to-b | 1000 | 950 | 0 | 2 | median < 2 µs, p99 < 16 µs, max < 512 µs (950 frames) \
         | median < 1 µs, p99 < 1 µs, max < 1 µs (950 frames) | yes |",
        "| wan b-to-a | 200 | 200 | 0 | 2 | median < 1 µs, p99 < 1 µs, max < 1 µs (200 frames) | median < 1 µs, p99 < 1 µs, max < 1 µs (200 frames) | yes |",
        // An older lab's stage list alone still reads as a table.
        "| loss | 1000 | 100 |",
    ] {
        assert!(md.contains(&format!("{row}\n")), "missing {row:?}");
    }
    assert!(md.contains("**Impairment stages** (all 3 test(s) run in this settings' lab)"));
    assert!(md.contains("*wan b-to-a*\n"));
    let page = html(&inputs);
    assert!(page.contains("<h5>wan a-to-b</h5>"));
    assert!(page.contains("<h5>Lab forwarder</h5>"));
    assert!(page.contains(
        "<tr><td>rate</td><td>1000</td><td>1000</td><td>0</td><td>0</td><td>0</td><td>0</td>\
         <td>940</td></tr>"
    ));
    assert!(!page.contains("<pre>{"), "no JSON blob in report.html");
}

/// A real profile run from the lab (monitoring-stress for 6 s through a device of 8000
/// packets/s with a 20-frame ring): every stream has a loss-per-burst line over the whole plan,
/// zero where the bursts arrived whole and high in every burst longer than the ring, and a
/// delay distribution drawn as steps; the tables give each stream's figures.
#[test]
fn a_profile_run_draws_loss_per_burst_and_delay_per_stream() {
    let name = "profile-device-ring.json";
    let id = format!("tests/fixtures/docs/{name}");
    let page = html(&docs(&[name]));
    let loss = chart(&page, &format!("Loss per burst over time: {id}"));
    let s = series(loss);
    let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "status (100Bx8/200ms)",
            "telemetry (400Bx4/200ms)",
            "bulk (800Bx50/5000ms)",
            "far-end (1400Bx30/1000ms)"
        ]
    );
    assert!(s.iter().all(|x| x.1 == "joined"), "{s:?}");
    // The plot's y grows downwards: status and telemetry lie flat on the 0 % line, the bulk
    // and far-end bursts lose part of every burst.
    let lines = polyline_points(loss);
    let flat = |pts: &Vec<(f64, f64)>| pts.windows(2).all(|w| w[0].1 == w[1].1);
    assert!(flat(&lines[0]) && flat(&lines[1]), "{lines:?}");
    assert_eq!(lines[0][0].1, lines[1][0].1);
    for l in &lines[2..] {
        assert!(l.iter().all(|p| p.1 < lines[0][0].1), "{l:?}");
    }
    let delay = series(chart(
        &page,
        "One-way delay per stream (measured, clocks synced",
    ));
    assert_eq!(delay.len(), 4, "{delay:?}");
    assert!(delay.iter().all(|x| x.1 == "steps"), "{delay:?}");
    let md = markdown(&docs(&[name]));
    for want in [
        "| status",
        "| far-end",
        "| from-server",
        "800Bx50/5000ms",
        "measured (clocks synced)",
    ] {
        assert!(md.contains(want), "no {want:?} in\n{md}");
    }
}

/// Real `sonde stress -J` runs on loopback against `sonde services` and `sonde server`: an echo
/// run with three connections draws a joined speed line per connection and the fairness per
/// interval each way; a discard ramp draws the total against the connection count as markers
/// (a UDP echo ramp against the flow count, its loss in a table); a load-step run draws both ends' CPU against the offered rate.
#[test]
fn stress_runs_draw_speed_fairness_ramp_and_cpu() {
    let run = "stress-echo-loopback.json";
    let page = html(&docs(&[run]));
    let id = format!("tests/fixtures/docs/{run}");
    let speed = series(chart(
        &page,
        &format!("Speed per connection to the device: {id}"),
    ));
    let names: Vec<&str> = speed.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["#1", "#2", "#3"]);
    assert!(
        speed.iter().all(|x| x.1 == "joined" && x.2 == 1),
        "{speed:?}"
    );
    let fair = series(chart(&page, "Jain&#39;s fairness index per interval"));
    let names: Vec<&str> = fair.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["to the device", "from the device"], "{fair:?}");

    let ramp = "stress-ramp-loopback.json";
    let page = html(&docs(&[ramp]));
    let r = series(chart(&page, "Total speed against connections (discard)"));
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        (r[0].0.as_str(), r[0].1.as_str()),
        ("to the device", "markers")
    );
    // connection counts 1, 2, 4, 8: one marker each, never joined
    assert_eq!((r[0].2, r[0].3), (0, 4), "{r:?}");

    // A UDP echo ramp (`-u --ramp 1..4` against services capping replies at 200/s): the total
    // each way against the flow count, and a table with the loss per count.
    let udp = "stress-ramp-udp-loopback.json";
    let page = html(&docs(&[udp]));
    let svg = chart(&page, "Total speed against flows (udp echo)");
    assert!(svg.contains(">flows<"), "x axis: {svg}");
    let r = series(svg);
    let names: Vec<&str> = r.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["to the device", "from the device"], "{r:?}");
    assert!(r.iter().all(|x| (x.2, x.3) == (0, 3)), "{r:?}");
    let md = markdown(&docs(&[udp]));
    for want in [
        "stress ramp, udp echo",
        "Total speed per flow count",
        "| Flows",
        "| Loss",
        "46.63 %",
    ] {
        assert!(md.contains(want), "no {want:?} in\n{md}");
    }

    let steps = "stress-steps-loopback.json";
    let page = html(&docs(&[steps]));
    let c = series(chart(&page, "CPU (user + system"));
    let names: Vec<&str> = c.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["server process", "client process"], "{c:?}");
    assert!(c.iter().all(|x| x.3 == 3), "{c:?}");
}
