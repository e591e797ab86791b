//! The charts and tables of the sweep, capacity, compare-ip and stress storm/overload
//! documents, and a stress run's summary tables, read back from the rendered HTML and
//! Markdown.
//!
//! Every fixture here is real `sonde ... -J` output on loopback (captured for these tests,
//! against `sonde server` and `sonde services --max-connections 50` on a loaded two-core
//! machine): a rate search over 64 and 1448 B each way, a rate list each way, a capacity run
//! (host-limited, as loopback is), a compare-ip run with every mode, a storm that met the
//! connection limit, and an overload refused at it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use std::path::PathBuf;

use serde_json::Value;
use sonde_report::{render, Format, Inputs};
use sonde_testkit::page::{chart, html_rows, markers, series, value};

fn path(name: &str) -> String {
    format!("tests/fixtures/docs/{name}")
}

fn inputs(name: &str) -> Inputs {
    Inputs::from_paths(&[PathBuf::from(path(name))]).unwrap()
}

fn page(name: &str, f: Format) -> String {
    String::from_utf8(render(&inputs(name), f).unwrap()).unwrap()
}

fn doc(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path(name)).unwrap()).unwrap()
}

/// A search: one series of markers per length and direction holding each of its steps, the
/// loss limit as a dashed level, and a table row per length and direction with the rate the
/// document found.
#[test]
fn a_rate_search_draws_loss_per_step_and_tabulates_the_rates_found() {
    let name = "sweep-search-loopback.json";
    let html = page(name, Format::Html);
    let svg = chart(&html, "Loss against offered rate, each step");
    let s = series(svg);
    let d = doc(name);
    let steps = d["steps"].as_array().unwrap();
    for (len, dir) in [(64, "up"), (64, "down"), (1448, "up"), (1448, "down")] {
        let label = format!("{len} B {dir}");
        let x = s.iter().find(|x| x.0 == label).unwrap();
        let n = steps
            .iter()
            .filter(|st| st["length"] == len && st["direction"] == dir)
            .count();
        assert_eq!((x.1.as_str(), x.2, x.3), ("markers", 0, n), "{label}");
    }
    let limit = s.iter().find(|x| x.0.starts_with("loss limit")).unwrap();
    assert_eq!(limit.0, "loss limit 0.100 %");
    assert_eq!(limit.1, "reference");

    let rows = html_rows(&html, "Rates found");
    assert_eq!(rows.len(), 4);
    for (row, r) in rows.iter().zip(d["results"].as_array().unwrap()) {
        assert_eq!(row[0], format!("{} B", r["length"]));
        assert_eq!(row[1], r["direction"].as_str().unwrap());
        let rate = r["rate_bps"].as_f64().unwrap();
        assert_eq!(row[2], sonde_report::fmt::rate(rate), "{row:?}");
        assert_eq!(row[7], "found, confirmed by 2 repeat runs");
    }
    assert_eq!(html_rows(&html, "Steps").len(), steps.len());
    let md = page(name, Format::Markdown);
    assert!(md.contains("**Rates found**"), "{md}");
    assert!(md.contains("| 1448 B | down |"), "{md}");
}

/// Issue 34: a search whose --max-rate passed (verdict at_max_rate) is shown as a lower bound,
/// not as a rate found.
#[test]
fn a_search_that_passed_at_its_max_rate_is_shown_as_a_lower_bound() {
    let mut d = doc("sweep-search-loopback.json");
    d["results"][0]["verdict"] = "at_max_rate".into();
    let dir = sonde_testkit::TempDir::new("doc");
    let file = dir.file("at-max.json");
    std::fs::write(&file, d.to_string()).unwrap();
    let html = String::from_utf8(
        render(
            &Inputs::from_paths(std::slice::from_ref(&file)).unwrap(),
            Format::Html,
        )
        .unwrap(),
    )
    .unwrap();
    let rows = html_rows(&html, "Rates found");
    assert!(
        rows[0][7].contains("a lower bound, not the ceiling"),
        "{:?}",
        rows[0]
    );
    assert_eq!(rows[1][7], "found, confirmed by 2 repeat runs");
}

/// A rate list: achieved against asked per direction as markers on the same scale as asked
/// (a point that follows lies on the diagonal), each direction's knee as a dashed vertical
/// at the document's knee, and a row per rate saying whether it follows.
#[test]
fn a_rate_list_draws_achieved_against_asked_with_the_knee() {
    let name = "sweep-rates-loopback.json";
    let html = page(name, Format::Html);
    let svg = chart(&html, "Achieved against asked");
    let s = series(svg);
    let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
    let d = doc(name);
    let knee = |dir: &str| {
        let k = d["knees"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["direction"] == dir)
            .unwrap();
        sonde_report::fmt::rate(k["knee_bps"].as_f64().unwrap())
    };
    assert_eq!(
        names,
        [
            "up: achieved".to_owned(),
            "down: achieved".to_owned(),
            "achieved = asked".to_owned(),
            format!("knee (up): {}", knee("up")),
            format!("knee (down): {}", knee("down")),
        ]
    );
    assert_eq!((s[0].2, s[0].3), (0, 4), "{s:?}");
    // Markers in step order (200, 50, 10, 1 Mbit/s asked): "down" at 10 Mbit/s followed and
    // sits on the diagonal; "up" at 200 Mbit/s fell short and sits below it (screen y grows
    // downwards).
    let g = svg.split("data-name=\"achieved = asked\"").nth(1).unwrap();
    let pts = g.split("points=\"").nth(1).unwrap();
    let diag: Vec<(f64, f64)> = pts[..pts.find('"').unwrap()]
        .split(' ')
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    let on_diag =
        |x: f64| diag[0].1 + (diag[1].1 - diag[0].1) * (x - diag[0].0) / (diag[1].0 - diag[0].0);
    let down = markers(svg, "down: achieved");
    assert!(
        (down[2].1 - on_diag(down[2].0)).abs() < 1.0,
        "{down:?} {diag:?}"
    );
    let up = markers(svg, "up: achieved");
    assert!(up[0].1 > on_diag(up[0].0) + 20.0, "{up:?} {diag:?}");

    let rows = html_rows(&html, "Achieved against asked");
    assert_eq!(rows.len(), 8, "{rows:?}");
    let follows: Vec<&str> = rows.iter().map(|r| r[4].as_str()).collect();
    // up: 200m and 50m short by more than 2 %, 10m short by 3.2 % (the knee), 1m follows.
    assert_eq!(
        follows,
        ["no", "no", "no", "yes", "no", "yes", "yes", "yes"],
        "{rows:?}"
    );
    assert!(html.contains(&format!(
        "up: achieved stops following asked at {}",
        knee("up")
    )));
}

/// A capacity run: the histogram as bars of the document's bin width with every local mode
/// marked (the peak apart) and the ADR as a vertical; rate against train length with every
/// short train at 10 datagrams and every long train at 500, the sustained and peak rates as
/// levels; a table with each figure's layer and the host-limited verdict said in words.
#[test]
fn a_capacity_run_draws_its_histogram_and_rate_against_train_length() {
    let name = "capacity-loopback.json";
    let d = doc(name);
    let e = &d["estimate"];
    let html = page(name, Format::Html);
    let bin = sonde_report::fmt::rate(e["histogram"]["bin_bps"].as_f64().unwrap());
    let svg = chart(
        &html,
        &format!("Dispersion rates of the short trains (bin {bin}, IP)"),
    );
    let s = series(svg);
    let counts = e["histogram"]["counts"].as_array().unwrap();
    assert_eq!(s[0].1, "bars");
    assert_eq!(
        svg.matches("<rect x=").count() - 2, // the background and the legend swatch
        counts.len() + 1,
        "one bar per bin, plus the frame"
    );
    let modes = e["histogram"]["modes"].as_array().unwrap().len();
    let local = s.iter().find(|x| x.0 == "local modes").unwrap();
    let peak = s.iter().find(|x| x.0.starts_with("peak mode")).unwrap();
    assert_eq!(local.3 + peak.3, modes, "{s:?}");
    assert!(s
        .iter()
        .any(|x| x.0.starts_with("ADR of the long trains") && x.1 == "reference"));

    let svg = chart(&html, "Rate against train length (IP)");
    let short = markers(svg, "short trains (40)");
    assert_eq!(short.len(), 40);
    assert!(
        short.iter().all(|p| p.0 == short[0].0),
        "one x for every short train"
    );
    let long = markers(svg, "long trains, whole train");
    assert_eq!(long.len(), e["fits"].as_array().unwrap().len());
    assert!(long[0].0 > short[0].0);
    let s = series(svg);
    assert!(s
        .iter()
        .any(|x| x.0.starts_with("sustained ") && x.1 == "reference"));
    assert!(s
        .iter()
        .any(|x| x.0.starts_with("peak ") && x.1 == "reference"));

    let rows = html_rows(&html, "Capacity");
    let find = |fig: &str, layer: &str| {
        rows.iter()
            .find(|r| r[0] == fig && r[2] == layer)
            .unwrap_or_else(|| panic!("no {fig} at {layer}: {rows:?}"))
            .clone()
    };
    assert_eq!(find("Verdict", "")[1], "host-limited");
    let sus = d["sustained_payload_bps"].as_f64().unwrap();
    assert_eq!(
        find("Sustained rate", "UDP payload")[1],
        sonde_report::fmt::rate(sus)
    );
    find("Sustained rate", "IP");
    find("Histogram bin", "IP");
    assert!(html.contains("not the path&#39;s capacity"));
    assert!(page(name, Format::Markdown).contains("| Peak capacity |"));
}

/// compare-ip: both families' latency per size next to each other, BTC and capacity with a
/// column per family, and the verdict with every measure it weighed.
#[test]
fn compare_ip_is_tables_per_family_and_the_verdict() {
    let name = "compare-ip-loopback.json";
    let d = doc(name);
    let html = page(name, Format::Html);
    let sizes = html_rows(&html, "Latency per probe size");
    assert_eq!(sizes.len(), d["sizes"].as_array().unwrap().len());
    let fam: Vec<(&str, &str)> = sizes
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        fam,
        [
            ("56 B (84 B IP)", "IPv4"),
            ("56 B (104 B IP)", "IPv6"),
            ("1000 B (1028 B IP)", "IPv4"),
            ("1000 B (1048 B IP)", "IPv6"),
            ("1500 B (1528 B IP)", "IPv4"),
            ("1500 B (1548 B IP)", "IPv6"),
        ]
    );
    let btc = html_rows(&html, "Bulk transfer capacity");
    let mean = btc.iter().find(|r| r[0] == "Mean").unwrap();
    for (i, f) in [(1, 0), (2, 1)] {
        let v = d["btc"][f]["summary"]["mean_bps"].as_f64().unwrap();
        assert_eq!(mean[i], sonde_report::fmt::rate(v));
    }
    let cap = html_rows(&html, "Path capacity");
    assert_eq!(
        cap.iter().find(|r| r[0] == "Verdict").unwrap()[1..],
        ["host-limited", "host-limited"]
    );
    // Host-limited: the hosts' speed, not the path's, so no rate is shown as the path's.
    assert!(
        !cap.iter()
            .any(|r| r[0] == "Sustained rate" || r[0] == "Peak mode"),
        "{cap:?}"
    );
    let v = html_rows(&html, "Verdict");
    assert_eq!(
        v.len(),
        d["verdict"]["per_measure"].as_array().unwrap().len()
    );
    assert!(html.contains(d["verdict"]["summary"].as_str().unwrap()));

    // The chart of the size rows: per family a median marker per size and a min..max
    // whisker (one polyline each), at the IP size, with the probes the document counts.
    let svg = chart(
        &html,
        "Round-trip time against probe size, per family, a probe every 0.10 s",
    );
    let s = series(svg);
    for fam in ["IPv4", "IPv6"] {
        let rows: Vec<&Value> = d["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["family"] == fam)
            .collect();
        let answered: u64 = rows.iter().map(|r| r["received"].as_u64().unwrap()).sum();
        let name = format!(
            "{fam} median ({} sizes, {answered} probes answered)",
            rows.len()
        );
        let m = s
            .iter()
            .find(|x| x.0 == name)
            .unwrap_or_else(|| panic!("{name}: {s:?}"));
        assert_eq!((m.1.as_str(), m.3), ("markers", rows.len()));
        let w = s.iter().find(|x| x.0 == format!("{fam} min..max")).unwrap();
        assert_eq!((w.1.as_str(), w.2), ("joined", rows.len()), "{w:?}");
    }
    assert!(!page(name, Format::Markdown).is_empty());
}

/// A storm and an overload: their figures as tables, named as the command names them.
#[test]
fn storm_and_overload_are_tables() {
    let html = page("stress-storm-loopback.json", Format::Html);
    let rows = html_rows(&html, "Storm");
    let s = &doc("stress-storm-loopback.json")["storm"];
    assert_eq!(value(&rows, "Attempts"), s["attempts"].to_string());
    assert_eq!(value(&rows, "Accepted"), s["accepted"].to_string());
    assert_eq!(value(&rows, "Refused (reset)"), s["refused"].to_string());
    assert_eq!(value(&rows, "Accepted per second"), "1391");

    let html = page("stress-overload-loopback.json", Format::Html);
    let rows = html_rows(&html, "Overload");
    assert_eq!(value(&rows, "Held"), "50 of 256 attempted");
    assert_eq!(value(&rows, "Refused the next"), "with a reset (RST)");
    assert_eq!(value(&rows, "Closed cleanly"), "50");
    assert_eq!(value(&rows, "Came through cleanly"), "yes");
    assert!(value(&rows, "Recovery time").ends_with(" ms"));
}

/// A stress run: the summary per connection and overall, besides its charts.
#[test]
fn a_stress_run_has_its_summary_tables() {
    let name = "stress-echo-loopback.json";
    let html = page(name, Format::Html);
    let d = doc(name);
    let per = html_rows(&html, "Per connection");
    assert_eq!(per.len(), d["end"]["connections"].as_array().unwrap().len());
    assert!(per.iter().all(|r| r[5] == "clean"), "{per:?}");
    let all = html_rows(&html, "Summary");
    let closed = all.iter().find(|r| r[0] == "Closed").unwrap();
    assert_eq!(closed[1], "3 clean, 0 reset, 0 timed out");
    assert!(all.iter().any(|r| r[0] == "Fairness, to the device"));
}

/// A capacity run through a token bucket (captured from a real run between two network
/// namespaces over veth, the server's side shaped by tbf at 100 Mbit/s with a 300 KB bucket,
/// 2026-11-24; a lab-only shape): the verdict is shaped, each long train's rate before its
/// knee is drawn at the knee's length (between the short and the long trains), the sustained
/// and peak levels are drawn, and the table gives the bucket in IP bytes.
#[test]
fn a_shaped_capacity_run_draws_the_rate_before_the_knee_and_the_bucket() {
    let name = "capacity-tbf-lab.json";
    let d = doc(name);
    let html = page(name, Format::Html);
    let svg = chart(&html, "Rate against train length (IP)");
    let short = markers(svg, "short trains (40)");
    let heads = markers(svg, "long trains before the knee");
    let long = markers(svg, "long trains, whole train");
    let fits = d["estimate"]["fits"].as_array().unwrap();
    assert_eq!(heads.len(), fits.len());
    // 307 500 bytes by the knee = 205 datagrams of 1500 B after the first.
    assert!(
        heads.iter().all(|h| short[0].0 < h.0 && h.0 < long[0].0),
        "{heads:?}"
    );
    let s = series(svg);
    let sustained = sonde_report::fmt::rate(d["estimate"]["sustained_bps"].as_f64().unwrap());
    assert!(
        s.iter().any(|x| x.0 == format!("sustained {sustained}")),
        "{s:?}"
    );
    let rows = html_rows(&html, "Capacity");
    let get = |f: &str| rows.iter().find(|r| r[0] == f).unwrap().clone();
    assert_eq!(get("Verdict")[1], "shaped");
    assert_eq!(get("Long trains with a knee")[1], "5");
    let bucket = get("Bucket");
    assert_eq!(
        (bucket[1].as_str(), bucket[2].as_str()),
        ("302.61 kB", "IP bytes")
    );
    assert!(html.contains("Shaped: a token bucket"));
}

/// An overload section the report cannot read as the command's report (here a refusal it
/// does not know) marks the test failed with the reason, rather than showing an empty test.
#[test]
fn an_unreadable_overload_section_is_a_failure_with_its_reason() {
    let mut d = doc("stress-overload-loopback.json");
    d["overload"]["refusal"] = "sideways".into();
    let inputs = Inputs::Documents(vec![Inputs::parse_document(
        "overload.json",
        &d.to_string(),
    )
    .unwrap()]);
    let md = String::from_utf8(render(&inputs, Format::Markdown).unwrap()).unwrap();
    assert!(md.contains("its overload section does not read"), "{md}");
}

/// The peak mode's legend gives both edges in the histogram axis's unit, also when the upper
/// edge alone would take a smaller prefix (a peak just under 1 Gbit/s on an axis in Gbit/s).
#[test]
fn the_peak_mode_is_named_in_the_axis_unit() {
    let mut d = doc("capacity-loopback.json");
    let peak = serde_json::json!({"low_bps": 0.9e9, "high_bps": 0.99e9, "count": 11});
    d["estimate"]["peak"] = peak.clone();
    d["estimate"]["histogram"]["modes"][0] = peak;
    let inputs = Inputs::Documents(vec![Inputs::parse_document(
        "capacity.json",
        &d.to_string(),
    )
    .unwrap()]);
    let html = String::from_utf8(render(&inputs, Format::Html).unwrap()).unwrap();
    let s = series(chart(&html, "Dispersion rates of the short trains"));
    assert!(
        s.iter().any(|x| x.0 == "peak mode 0.90-0.99 Gbit/s"),
        "{s:?}"
    );
}

/// A search run with `--confirm 0` found its rates without repeat runs, and the report says
/// so instead of calling them confirmed.
#[test]
fn a_search_without_confirmation_runs_is_not_called_confirmed() {
    let mut d = doc("sweep-search-loopback.json");
    d["sweep"]["confirm"] = 0.into();
    let inputs = Inputs::Documents(vec![
        Inputs::parse_document("search.json", &d.to_string()).unwrap()
    ]);
    let html = String::from_utf8(render(&inputs, Format::Html).unwrap()).unwrap();
    let rows = html_rows(&html, "Rates found");
    assert!(
        rows.iter()
            .all(|r| r[7] == "found (not confirmed: --confirm 0)"),
        "{rows:?}"
    );
    assert!(html.contains("(no confirmation runs asked)"));
}

/// A storm stopped by Ctrl-C (`partial`, no error) is a run that did not complete, with the
/// reason, like any other kind cut short.
#[test]
fn an_interrupted_storm_is_reported_as_cut_short() {
    let md = |partial: bool| {
        let mut d = doc("stress-storm-loopback.json");
        d["storm"]["partial"] = partial.into();
        let inputs = Inputs::Documents(vec![
            Inputs::parse_document("storm.json", &d.to_string()).unwrap()
        ]);
        String::from_utf8(render(&inputs, Format::Markdown).unwrap()).unwrap()
    };
    assert!(md(true).contains("the run was cut short"), "{}", md(true));
    assert!(!md(false).contains("the run was cut short"));
}

/// compare-ip's capacity columns give a family's rates when its verdict is a path figure
/// (here IPv4 made "link") and none for a host-limited family, as the command's table does.
#[test]
fn compare_ip_capacity_shows_rates_only_for_a_path_figure() {
    let mut d = doc("compare-ip-loopback.json");
    d["capacity"][0]["verdict"] = "link".into();
    let inputs = Inputs::Documents(vec![
        Inputs::parse_document("compare.json", &d.to_string()).unwrap()
    ]);
    let html = String::from_utf8(render(&inputs, Format::Html).unwrap()).unwrap();
    let cap = html_rows(&html, "Path capacity");
    let sustained = cap.iter().find(|r| r[0] == "Sustained rate").unwrap();
    let v4 = d["capacity"][0]["sustained_bps"].as_f64().unwrap();
    assert_eq!(
        sustained[1..],
        [sonde_report::fmt::rate(v4), "–".to_owned()]
    );
}
