//! `sonde stress --steps --load-probe CMD` against a sonde server on 127.0.0.1: the device's
//! load as a command reads it at each step's end. The probes here are shell scripts whose
//! output is known in advance (a counter file they step on each call), so what is asserted is
//! that each step holds what its call printed, that a probe giving no reading is a note and
//! not a number, and that the exit code is the steps' own. No figure of the traffic is
//! asserted. About 10 s.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::{self, run, TempDir};
use serde_json::Value;
use sonde_testkit::page::{chart, html_rows, markers};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// `sonde stress 127.0.0.1 -p PORT --steps RATES --step-time 1 EXTRA...`.
fn run_steps(port: u16, rates: &str, extra: &[&str]) -> common::Output {
    let port = port.to_string();
    let args = [
        &[
            "stress",
            "127.0.0.1",
            "-p",
            &port,
            "--steps",
            rates,
            "--step-time",
            "1",
        ][..],
        extra,
    ]
    .concat();
    run(&args, DEADLINE)
}

/// A probe script: each call adds one to the counter in `count` and runs `body` with `$n`
/// the call's number (1 at the first step).
fn probe(count: &std::path::Path, body: &str) -> String {
    format!(
        "n=$(($(cat '{c}' 2>/dev/null || echo 0) + 1)); echo $n > '{c}'; {body}",
        c = count.display()
    )
}

/// Each step's `device_load` holds the last number its probe call printed: 1007, 2007, 3007
/// for the three calls of a probe printing `$n * 1000 + 7` after a line of noise.
#[test]
fn each_steps_device_load_is_what_its_probe_printed() {
    let _turn = crate::turns::take(module_path!());
    let srv = common::Server::start(&[]);
    let dir = TempDir::new("load-probe");
    let cmd = probe(
        &dir.file("count"),
        "echo 'loop counter:'; echo \"busy $((n * 1000 + 7))\"",
    );
    let out = run_steps(srv.port, "5m,10m,20m", &["--load-probe", &cmd, "-J"]);
    out.expect_code(0);
    let doc: Value = out.json();
    assert_eq!(doc["load_probe"], cmd.as_str(), "{doc}");
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{doc}");
    for (i, s) in steps.iter().enumerate() {
        let d = &s["device_load"];
        assert_eq!(
            d["value"].as_f64(),
            Some((i as f64 + 1.0) * 1000.0 + 7.0),
            "{doc}"
        );
        assert_eq!(d["exit_status"], 0, "{doc}");
        assert!(d["error"].is_null(), "{doc}");
    }
    // The report: each reading in the steps table's column, a marker each in its chart.
    let report = dir.file("report");
    std::fs::write(dir.file("steps.json"), &out.stdout).unwrap();
    run(
        &[
            "report",
            &dir.file("steps.json").display().to_string(),
            "-o",
            &report.display().to_string(),
            "--format",
            "html",
        ],
        DEADLINE,
    )
    .expect_code(0);
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    let column: Vec<String> = html_rows(&html, "Load steps")
        .iter()
        .map(|r| r.last().cloned().unwrap_or_default())
        .collect();
    assert_eq!(column, ["1007", "2007", "3007"], "{html}");
    let svg = chart(
        &html,
        "Device load (as --load-probe read it) against offered rate",
    );
    assert_eq!(markers(svg, "device (load probe)").len(), 3, "{svg}");
    // The table: the column and each step's reading in it.
    std::fs::remove_file(dir.file("count")).unwrap();
    let out = run_steps(srv.port, "5m,10m", &["--load-probe", &cmd]);
    out.expect_code(0);
    let rows: Vec<&str> = out.stdout.lines().collect();
    let head = rows
        .iter()
        .position(|l| l.trim_start().starts_with("Offered") && l.ends_with("Device load"))
        .unwrap();
    assert!(rows[head + 1].ends_with("  1007"), "{}", out.describe());
    assert!(rows[head + 2].ends_with("  2007"), "{}", out.describe());
}

/// A probe that prints nothing, then one that fails, then one past its timeout: each step
/// has no value and a note saying which, the steps all run, and the exit code is theirs (0).
#[test]
fn a_probe_without_a_reading_is_a_note_and_the_steps_go_on() {
    let _turn = crate::turns::take(module_path!());
    let srv = common::Server::start(&[]);
    let dir = TempDir::new("load-probe-fails");
    let cmd = probe(
        &dir.file("count"),
        "case $n in 1) true ;; 2) echo 55; echo 'no console' >&2; exit 3 ;; *) sleep 30 ;; esac",
    );
    let out = run_steps(
        srv.port,
        "5m,10m,20m",
        &["--load-probe", &cmd, "--load-probe-timeout", "1", "-J"],
    );
    out.expect_code(0);
    let doc: Value = out.json();
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{doc}");
    assert!(doc["error"].is_null(), "{doc}");
    let load = |i: usize| &steps[i]["device_load"];
    let notes: Vec<(Value, Value, Value)> = (0..3)
        .map(|i| {
            (
                load(i)["value"].clone(),
                load(i)["exit_status"].clone(),
                load(i)["error"].clone(),
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            (
                Value::Null,
                0.into(),
                "load probe printed no number on stdout".into()
            ),
            (
                Value::Null,
                3.into(),
                "load probe exited with status 3: no console".into()
            ),
            (
                Value::Null,
                Value::Null,
                "load probe timed out after 1 s (killed)".into()
            ),
        ],
        "{doc}"
    );
    for s in steps {
        assert!(s["error"].is_null(), "the step itself did not fail: {doc}");
    }
}
