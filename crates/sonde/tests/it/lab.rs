//! `sonde lab run` end to end, as root: a small scenario over a real impaired link, the
//! results database and raw files it leaves, `--resume` after a Ctrl-C, a failing external
//! command, and no namespace left behind by any of them.
//!
//! Without root each test prints why it skips and passes; `SONDE_REQUIRE_ALL=1` (CI) turns the
//! skip into a failure. The tests run side by side (none measures anything finer than "data
//! went through"): each checks `ip netns list` for the namespaces of its own labs only, by
//! the prefixes its run printed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{lab_available, run, Proc, TempDir};
use serde_json::Value;
use sonde_store::{LoadedRun, RunStatus, Store, TestStatus};
use sonde_testkit::scenario::chain;
use std::path::Path;
use std::time::{Duration, Instant};

/// One link, a clean and a 20 % loss setting, TCP and UDP for 2 s each.
fn small() -> String {
    chain()
        .name("small")
        .description("one link, 0 and 20 % random loss")
        .seed(11)
        .host("client")
        .link("wan")
        .host("server")
        .settings("loss-0")
        .impair("wan", "rate = \"100mbit\"")
        .settings("loss-20")
        .impair("wan", "rate = \"100mbit\"\nloss = \"20%\"")
        .sonde("tcp", &["client", "{server}", "-t", "2"])
        .sonde("udp", &["client", "{server}", "-u", "-b", "10m", "-t", "2"])
        .matrix("repetitions = 1")
        .to_toml()
}

/// A failing external command between two sonde tests.
fn failing() -> String {
    chain()
        .name("failing")
        .seed(12)
        .host("client")
        .link("wan")
        .host("server")
        .settings("clean")
        .command(
            "broken",
            &["sh", "-c", "echo 'no such peer {server}' >&2; exit 7"],
        )
        .sonde("tcp", &["client", "{server}", "-t", "1"])
        .to_toml()
}

/// The namespaces left of the labs whose run printed `stdout` (each lab says its prefix when
/// it is up): the module's tests run side by side, so only a run's own are its leftovers.
fn leftover_namespaces(stdout: &str) -> Vec<String> {
    let prefixes: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("namespaces ")?.split_once("-HOST "))
        .map(|(p, _)| format!("{p}-"))
        .collect();
    assert!(
        !prefixes.is_empty(),
        "the run named no namespaces:\n{stdout}"
    );
    let out = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| prefixes.iter().any(|p| n.starts_with(p.as_str())))
        .map(str::to_owned)
        .collect()
}

#[track_caller]
fn assert_no_leftovers(stdout: &str) {
    let left = leftover_namespaces(stdout);
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
}

fn load(dir: &Path) -> LoadedRun {
    let store = Store::open_read_only(dir.join("results.db")).expect("results.db opens");
    let run = store.latest_run().expect("runs readable").expect("a run");
    store.load_run(run).expect("the run loads")
}

fn scenario_file(dir: &TempDir, name: &str, text: &str) -> String {
    let path = dir.file(name);
    std::fs::write(&path, text).expect("write scenario");
    path.to_string_lossy().into_owned()
}

/// A scenario file in a directory of its own and the `--out` directory beside it.
struct LabDir {
    dir: TempDir,
    file: String,
}

impl LabDir {
    /// `text` written as `name` in a new directory tagged `tag`.
    fn new(tag: &str, name: &str, text: &str) -> LabDir {
        let dir = TempDir::new(tag);
        let file = scenario_file(&dir, name, text);
        LabDir { dir, file }
    }

    fn out_dir(&self) -> std::path::PathBuf {
        self.dir.file("out")
    }

    /// `lab run FILE --out DIR`.
    fn args(&self) -> Vec<String> {
        let out = self.out_dir().to_string_lossy().into_owned();
        ["lab", "run", &self.file, "--out", &out]
            .iter()
            .map(|a| a.to_string())
            .collect()
    }

    /// Runs the scenario to completion within `timeout`; no namespace of it may be left.
    fn run(&self, timeout: Duration) -> common::Output {
        let out = run(&self.args(), timeout);
        assert_no_leftovers(&out.stdout);
        out
    }
}

#[test]
fn small_scenario_runs_end_to_end_and_records_everything() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let lab = LabDir::new("lab-small", "small.toml", &small());
    let out_dir = lab.out_dir();
    let out = lab.run(Duration::from_secs(120));
    out.expect_code(0);
    assert!(
        out.stdout.contains("ok      loss-20/udp/1"),
        "{}",
        out.describe()
    );
    // Its stderr is a pipe here, where no bar draws: plain lines say where the run is.
    for n in 1..=4 {
        assert!(
            out.stderr
                .contains(&format!("sonde lab: test {n} of 4 starts: ")),
            "no progress line for test {n} on a redirected stderr\n{}",
            out.describe()
        );
    }
    let loaded = load(&out_dir);
    assert_eq!(loaded.run.status, RunStatus::Completed);
    assert_eq!(loaded.tests.len(), 4, "2 settings x 2 tests");
    for t in &loaded.tests {
        assert_eq!(
            t.status,
            TestStatus::Ok,
            "{}: {:?}",
            t.matrix_id,
            t.failure_reason
        );
        let traffic = |end: &sonde_store::EndRecord| end.traffic.clone().expect("counters");
        let (c, s) = (traffic(&t.client), traffic(&t.server));
        assert!(
            c.delta().tx_bytes > 1_000_000,
            "{}: client sent {c:?}",
            t.matrix_id
        );
        assert!(
            s.delta().rx_bytes > 1_000_000,
            "{}: server got {s:?}",
            t.matrix_id
        );
        assert!(
            t.client.cpu.is_some() && t.server.cpu.is_some(),
            "{}",
            t.matrix_id
        );
        let status = t.link_status.clone().expect("link status");
        assert_eq!(status["settings"], Value::from(t.settings.clone()));
        let dirs = status["directions"]
            .as_array()
            .expect("backend per direction");
        assert_eq!(dirs.len(), 2, "{status}");
        let raw = out_dir.join(t.result_path.clone().expect("result path"));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&raw).expect("raw file"))
            .expect("raw file is JSON");
        assert!(doc["end"]["sum_received"]["bytes"].as_u64().unwrap_or(0) > 0);
        assert!(t.ended_unix >= t.started_unix + 1.5, "{}", t.matrix_id);
        if t.settings == "loss-20" {
            let stats = t.stage_stats.clone().expect("userspace stage counters");
            assert!(stats.to_string().contains("\"loss\""), "{stats}");
        }
    }
    assert!(loaded.settings.iter().all(|s| s.backend_plan.is_some()));
    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    for needle in ["loss-0/tcp/1", "loss-20/udp/1", "## Summary"] {
        assert!(md.contains(needle), "report.md lacks {needle}");
    }
    assert!(out_dir.join("report.html").exists());
}

#[test]
fn resume_after_ctrl_c_skips_finished_tests_and_completes() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let lab = LabDir::new("lab-resume", "small.toml", &small());
    let out_dir = lab.out_dir();
    let mut first = Proc::spawn(&lab.args());
    let deadline = Instant::now() + Duration::from_secs(90);
    while !first.stdout_so_far().contains("== settings loss-20") {
        assert!(
            Instant::now() < deadline && !first.has_exited(),
            "the first setting never finished:\n{}",
            first.stdout_so_far()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    first.signal(libc::SIGINT);
    let first = first.wait(Duration::from_secs(60));
    assert_no_leftovers(&first.stdout);
    first.expect_code(1);
    assert!(first.stdout.contains("--resume"), "{}", first.describe());
    let before = load(&out_dir);
    assert_eq!(before.run.status, RunStatus::Interrupted);
    let done: Vec<(String, f64)> = before
        .tests
        .iter()
        .map(|t| (t.matrix_id.clone(), t.started_unix))
        .collect();
    assert!(
        done.iter().any(|(id, _)| id == "loss-0/tcp/1") && done.len() < 4,
        "recorded before the interrupt: {done:?}"
    );
    let second = run(
        &[lab.args(), vec!["--resume".to_string()]].concat(),
        Duration::from_secs(120),
    );
    assert_no_leftovers(&second.stdout);
    second.expect_code(0);
    assert!(second.stdout.contains("already recorded, skipped"));
    let after = load(&out_dir);
    assert_eq!(after.run.id, before.run.id, "the same run continued");
    assert_eq!(after.run.status, RunStatus::Completed);
    assert_eq!(after.tests.len(), 4);
    for (id, started) in &done {
        let t = after
            .tests
            .iter()
            .find(|t| &t.matrix_id == id)
            .expect("kept");
        assert_eq!(t.started_unix, *started, "{id} was run again");
    }
    assert!(after.tests.iter().all(|t| t.status == TestStatus::Ok));
}

#[test]
fn failing_external_command_is_recorded_and_the_run_goes_on() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let lab = LabDir::new("lab-failing", "failing.toml", &failing());
    let out_dir = lab.out_dir();
    let out = lab.run(Duration::from_secs(60));
    out.expect_code(1);
    let loaded = load(&out_dir);
    assert_eq!(loaded.run.status, RunStatus::Completed);
    let broken = loaded
        .tests
        .iter()
        .find(|t| t.test_name == "broken")
        .expect("recorded");
    assert_eq!(broken.status, TestStatus::Failed);
    let reason = broken.failure_reason.clone().unwrap_or_default();
    assert!(
        reason.contains("exit status 7") && reason.contains("no such peer 10.77.1.2"),
        "{reason}"
    );
    assert_eq!(broken.kind, "command");
    let tcp = loaded
        .tests
        .iter()
        .find(|t| t.test_name == "tcp")
        .expect("ran");
    assert_eq!(tcp.status, TestStatus::Ok, "{:?}", tcp.failure_reason);
    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    assert!(md.contains("exit status 7"), "the report lists the failure");
}

#[test]
fn unknown_scenario_is_a_usage_error_and_list_show_work() {
    let _turn = crate::turns::take(module_path!());
    let out = run(
        &["lab", "run", "no-such-scenario", "--out", "/nonexistent"],
        Duration::from_secs(10),
    );
    out.expect_code(2);
    assert!(out
        .stderr
        .contains("built-ins: quick, lossy-link, rates, coded-vs-tcp, bufferbloat"));
    let list = run(&["lab", "list"], Duration::from_secs(10));
    list.expect_code(0);
    for name in ["quick", "lossy-link", "rates"] {
        assert!(list.stdout.contains(name), "{}", list.describe());
    }
    let show = run(&["lab", "show", "quick"], Duration::from_secs(10));
    show.expect_code(0);
    assert!(show.stdout.contains("name = \"quick\""));
}

/// Scenario 4's comparison: sonde, iperf3 and iperf 2 clients over the same 100 Mbit/s link in
/// one run, each recorded with a document the report reads, and each in the report's table.
#[test]
fn sonde_iperf3_and_iperf2_clients_run_side_by_side_in_one_report() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() || !sonde_testkit::installed("iperf3 and iperf 2", &["iperf3", "iperf"]) {
        return;
    }
    let text = chain()
        .name("three-tools")
        .seed(13)
        .host("client")
        .link("wan")
        .host("server")
        .settings("100mbit")
        .impair("wan", "rate = \"100mbit\"")
        .sonde("sonde-tcp", &["client", "{server}", "-t", "2"])
        .command("iperf3-tcp", &["iperf3", "-c", "{server}", "-t", "2", "-J"])
        .command(
            "iperf2-tcp",
            &["iperf", "-c", "{server}", "-t", "2", "-y", "C"],
        )
        .to_toml();
    let lab = LabDir::new("lab-three-tools", "three.toml", &text);
    let out_dir = lab.out_dir();
    let out = lab.run(Duration::from_secs(120));
    out.expect_code(0);
    let loaded = load(&out_dir);
    assert_eq!(loaded.tests.len(), 3, "{}", out.describe());
    for t in &loaded.tests {
        assert_eq!(
            t.status,
            TestStatus::Ok,
            "{}: {:?}",
            t.matrix_id,
            t.failure_reason
        );
        let doc: Value = serde_json::from_str(t.result_json.as_deref().expect("a document"))
            .expect("the document is JSON");
        let end = &doc["end"];
        let sum = if end["sum_received"].is_object() {
            &end["sum_received"]
        } else {
            &end["sum_sent"]
        };
        let bytes = sum["bytes"].as_u64().unwrap_or(0);
        let mbps = sum["bits_per_second"].as_f64().unwrap_or(0.0) / 1e6;
        assert!(bytes > 1_000_000, "{}: {doc}", t.test_name);
        // Whatever the host's load, no tool may see more than the link carries.
        assert!(
            mbps > 0.0 && mbps <= 105.0,
            "{}: {mbps} Mbit/s",
            t.test_name
        );
    }
    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    for name in [
        "100mbit/sonde-tcp/1",
        "100mbit/iperf3-tcp/1",
        "100mbit/iperf2-tcp/1",
    ] {
        assert!(md.contains(name), "report.md lacks {name}");
    }
}
