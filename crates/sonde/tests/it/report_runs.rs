//! `sonde report` on a lab directory whose results database holds several runs (as `sonde lab
//! run --new` leaves it): the newest by default, `--run ID` for another, a clear error naming
//! the runs for an unknown id, and `--list-runs`. The newest run's test carries a real `sonde
//! -J` document from a loopback run, so the report's chart of both ends is checked end to end.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{run, Server, TempDir};
use serde_json::json;
use sonde_store::{
    EndRecord, LinkSettingsRecord, NewRun, RunId, RunStatus, Store, TestRecord, TestStatus,
};

const DEADLINE: Duration = Duration::from_secs(30);

fn new_run(scenario: &str, started_unix: f64) -> NewRun {
    NewRun {
        scenario_name: scenario.into(),
        scenario_toml: format!("name = \"{scenario}\"\n"),
        sonde_version: "sonde 0.1.0".into(),
        hostname: "lab".into(),
        kernel: "6.18.44".into(),
        host_info: json!({}),
        seed: 1,
        started_unix,
        settings: vec![LinkSettingsRecord {
            name: "clean".into(),
            ordinal: 0,
            settings: json!({"name": "clean", "link": []}),
            backend_plan: None,
        }],
    }
}

fn test(id: &str, ok: bool, started_unix: f64, result_json: Option<String>) -> TestRecord {
    TestRecord {
        matrix_id: id.into(),
        ordinal: 0,
        settings: "clean".into(),
        test_name: id.split('/').nth(1).unwrap_or("t").into(),
        repetition: 1,
        seed: 1,
        kind: "sonde".into(),
        protocol: Some("udp".into()),
        parameters: json!({"args": ["-u"]}),
        link_status: None,
        started_unix,
        ended_unix: started_unix + 3.0,
        status: if ok {
            TestStatus::Ok
        } else {
            TestStatus::Failed
        },
        failure_reason: (!ok).then(|| "the server did not answer".into()),
        result_path: None,
        result_json,
        client: EndRecord::default(),
        server: EndRecord::default(),
        stage_stats: None,
    }
}

/// A lab directory with two runs: run 1 (`first`, interrupted, one failed test) and run 2
/// (`second`, completed, one test whose result is `doc`).
fn lab_dir(dir: &Path, doc: String) {
    let mut store = Store::open(dir.join("results.db")).unwrap();
    let first = store.begin_run(&new_run("first", 1_795_300_000.0)).unwrap();
    store
        .record_test(first, &test("clean/udp/1", false, 1_795_300_001.0, None))
        .unwrap();
    store
        .finish_run(first, RunStatus::Interrupted, 1_795_300_010.0)
        .unwrap();
    let second = store
        .begin_run(&new_run("second", 1_795_400_000.0))
        .unwrap();
    store
        .record_test(
            second,
            &test("clean/udp/1", true, 1_795_400_001.0, Some(doc)),
        )
        .unwrap();
    store
        .finish_run(second, RunStatus::Completed, 1_795_400_010.0)
        .unwrap();
    assert_eq!((first, second), (RunId(1), RunId(2)));
}

#[test]
fn report_chooses_a_run_of_a_lab_directory() {
    let _turn = crate::turns::take(module_path!());
    // A real result with both ends' intervals: a UDP upload on loopback.
    let server = Server::start(&[]);
    let out = server.client(&["-u", "-b", "10m", "-t", "3", "-J"], DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    assert!(!doc["sonde"]["peer_intervals"]
        .as_array()
        .unwrap()
        .is_empty());

    let dir = TempDir::new("report-runs");
    let lab = dir.file("lab");
    std::fs::create_dir_all(&lab).unwrap();
    lab_dir(&lab, doc.to_string());
    let lab_arg = lab.to_string_lossy().into_owned();
    let out_arg = |name: &str| dir.file(name).to_string_lossy().into_owned();
    let md_of = |name: &str| std::fs::read_to_string(dir.file(name).join("report.md")).unwrap();

    // Default: the newest run, said on stderr and in the report.
    let newest = run(&["report", &lab_arg, "-o", &out_arg("newest")], DEADLINE);
    newest.expect_code(0);
    assert!(
        newest
            .stderr
            .contains("holds 2 runs; this report is of run 2, the newest"),
        "{}",
        newest.describe()
    );
    let md = md_of("newest");
    assert!(md.starts_with("# sonde lab report: second\n"), "{md}");
    assert!(
        md.contains("- **Run**: 2 (the database also holds run 1: sonde report --run ID)\n"),
        "{md}"
    );
    let html = std::fs::read_to_string(dir.file("newest").join("report.html")).unwrap();
    for series in [
        "data-name=\"client → server sent by client (sender)\"",
        "data-name=\"client → server received by server (receiver)\"",
    ] {
        assert!(html.contains(series), "no {series} in the throughput chart");
    }

    // --run 1: the older run.
    let older = run(
        &["report", &lab_arg, "--run", "1", "-o", &out_arg("older")],
        DEADLINE,
    );
    older.expect_code(0);
    assert!(!older.stderr.contains("note"), "{}", older.describe());
    let md = md_of("older");
    assert!(md.starts_with("# sonde lab report: first\n"), "{md}");
    assert!(md.contains("- **Status**: interrupted\n"), "{md}");
    assert!(md.contains("the server did not answer"), "{md}");

    // An unknown id: exit 1, naming the database and the runs it has.
    let unknown = run(
        &["report", &lab_arg, "--run", "7", "-o", &out_arg("x")],
        DEADLINE,
    );
    unknown.expect_code(1);
    let e = &unknown.stderr;
    assert!(e.contains("results.db has no run 7"), "{e}");
    assert!(
        e.contains("1 (first, interrupted, 2026-11-21 22:26:40 UTC)")
            && e.contains("2 (second, completed, "),
        "{e}"
    );
    assert!(!dir.file("x").exists(), "no report for an unknown run");

    // --list-runs: a header and a row per run, oldest first; nothing written.
    let list = run(&["report", &lab_arg, "--list-runs"], DEADLINE);
    list.expect_code(0);
    let lines: Vec<&str> = list.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", list.describe());
    assert!(lines[0].ends_with("results.db: 2 run(s); `sonde report` takes the newest, run 2"));
    let cells = |l: &str| {
        l.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        cells(lines[1]),
        ["run", "scenario", "status", "started", "tests", "failed"]
    );
    assert_eq!(
        cells(lines[2]),
        [
            "1",
            "first",
            "interrupted",
            "2026-11-21 22:26:40 UTC",
            "1",
            "1"
        ]
    );
    assert_eq!(cells(lines[3])[..3], ["2", "second", "completed"]);
    assert_eq!(cells(lines[3])[4..], ["1", "0"]);
}

#[test]
fn run_is_refused_for_result_documents_and_its_default_is_in_the_help() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("report-run-docs");
    let doc = dir.file("r.json");
    std::fs::write(
        &doc,
        r#"{"start": {"test_start": {"protocol": "TCP"}}, "end": {}}"#,
    )
    .unwrap();
    let doc_arg = doc.to_string_lossy().into_owned();
    let out = run(&["report", &doc_arg, "--run", "1"], DEADLINE);
    out.expect_code(1);
    assert!(
        out.stderr.contains(
            "--run 1 chooses a run of a results database, but the inputs are result documents"
        ),
        "{}",
        out.describe()
    );
    let list = run(&["report", &doc_arg, "--list-runs"], DEADLINE);
    list.expect_code(1);
    assert!(
        list.stderr.contains("is not a results database"),
        "{}",
        list.describe()
    );

    let help = run(&["report", "--help"], DEADLINE);
    help.expect_code(0);
    let flat = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("--run <ID>"), "{flat}");
    assert!(
        flat.contains("default: the newest, the highest id"),
        "{flat}"
    );
    assert!(flat.contains("--list-runs"), "{flat}");
}
