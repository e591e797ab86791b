//! The PostgreSQL results store against a real PostgreSQL server that this test starts
//! (`initdb` + `pg_ctl` in a temporary directory, on a free loopback port, as the `postgres`
//! user when run as root) and always stops: a lab run written through `Results` arrives in
//! PostgreSQL identical to the local SQLite copy, `sonde report` reads it from the URL, and
//! tests recorded while PostgreSQL is stopped are written once it is back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use std::path::Path;
use std::time::Duration;

use common::postgres::{pg_available, Postgres};
use common::{lab_available, run, TempDir};
use sonde_store::{LoadedRun, NewRun, Results, RunStatus, Store};

/// A lab run recorded by a real `sonde lab run` (the report tests' fixture).
fn lab_run() -> LoadedRun {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sonde-doc/tests/fixtures/lab-run.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("lab-run.json: {e}"))
}

fn new_run(r: &LoadedRun) -> NewRun {
    let run = &r.run;
    NewRun {
        scenario_name: run.scenario_name.clone(),
        scenario_toml: run.scenario_toml.clone(),
        sonde_version: run.sonde_version.clone(),
        hostname: run.hostname.clone(),
        kernel: run.kernel.clone(),
        host_info: run.host_info.clone(),
        seed: run.seed,
        started_unix: run.started_unix,
        settings: r.settings.clone(),
    }
}

/// The only run of the PostgreSQL database, read as the report reads it.
fn remote_run(url: &str) -> LoadedRun {
    let store = Store::open_read_only(url).unwrap_or_else(|e| panic!("{e}"));
    let runs = store.runs().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs.len(), 1, "one run in PostgreSQL: {runs:?}");
    store.load_run(runs[0].id).unwrap_or_else(|e| panic!("{e}"))
}

/// A loaded run with its database id set aside (local and remote ids differ by design).
fn without_id(mut r: LoadedRun) -> LoadedRun {
    r.run.id = sonde_store::RunId(0);
    r
}

#[test]
fn postgres_round_trip_buffering_and_report() {
    if !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let fixture = lab_run();
    assert!(fixture.tests.len() >= 4, "the fixture has tests to split");
    let (first, later) = fixture.tests.split_at(fixture.tests.len() / 2);

    let work = TempDir::new("pg-local");
    let mut results =
        Results::open(work.file("results.db"), Some(&url)).unwrap_or_else(|e| panic!("{e}"));
    let id = results
        .local()
        .begin_run(&new_run(&fixture))
        .unwrap_or_else(|e| panic!("{e}"));
    results
        .local()
        .record_tests(id, first)
        .unwrap_or_else(|e| panic!("{e}"));
    let synced = results.sync().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (synced.runs_created, synced.tests_written),
        (1, first.len() as u64)
    );
    let remote = remote_run(&url);
    assert_eq!(
        remote.tests, first,
        "PostgreSQL holds the first tests as recorded"
    );

    // PostgreSQL goes away: the rest of the run is recorded locally, the copy fails.
    pg.stop();
    results
        .local()
        .record_tests(id, later)
        .unwrap_or_else(|e| panic!("{e}"));
    results
        .local()
        .finish_run(
            id,
            RunStatus::Completed,
            fixture.run.ended_unix.unwrap_or(0.0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let err = results.sync().expect_err("sync with PostgreSQL stopped");
    assert!(
        err.to_string().contains("127.0.0.1"),
        "names the target: {err}"
    );
    assert!(!err.to_string().contains("password"), "{err}");

    // Back: the buffered tests arrive, none lost, none twice.
    pg.start();
    let synced = results.sync().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (synced.runs_created, synced.tests_written),
        (0, later.len() as u64)
    );
    let again = results.sync().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (again.runs_created, again.tests_written),
        (0, 0),
        "nothing twice"
    );
    let local = Store::open_read_only(work.file("results.db"))
        .and_then(|s| s.load_run(id))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(local.tests.len(), fixture.tests.len());
    assert_eq!(without_id(remote_run(&url)), without_id(local));

    // The report reads the URL as it reads a file.
    let out = TempDir::new("pg-report");
    let outdir = out.path().display().to_string();
    let rep = run(
        &["report", &url, "-o", &outdir, "--format", "md"],
        Duration::from_secs(60),
    );
    assert_eq!(rep.code(), Some(0), "{}", rep.describe());
    let md = std::fs::read_to_string(out.file("report.md")).unwrap_or_default();
    assert!(
        md.contains(&fixture.run.scenario_name),
        "the report names the scenario: {md:.400}"
    );
    let listed = run(&["report", &url, "--list-runs"], Duration::from_secs(30));
    assert_eq!(listed.code(), Some(0), "{}", listed.describe());
}

const ONE_TEST: &str = r#"
name = "one-test"
seed = 21
hosts = ["client", "server"]

[[link]]
name = "wan"
a = "client"
b = "server"

[[settings]]
name = "clean"

[[test]]
name = "tcp"
sonde = ["client", "{server}", "-t", "1"]
"#;

#[test]
fn lab_run_with_store_writes_postgresql() {
    if !lab_available() || !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let dir = TempDir::new("pg-lab");
    let scenario = dir.file("one-test.toml");
    std::fs::write(&scenario, ONE_TEST).unwrap();
    let out_dir = dir.file("out");
    let out = run(
        &[
            "lab",
            "run",
            &scenario.display().to_string(),
            "--out",
            &out_dir.display().to_string(),
            "--store",
            &url,
        ],
        Duration::from_secs(90),
    );
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(
        out.stdout
            .contains("up to date (1 runs created, 1 tests written by this run)"),
        "{}",
        out.describe()
    );
    let local = Store::open_read_only(out_dir.join("results.db"))
        .and_then(|s| s.latest_run().map(|id| (s, id)))
        .and_then(|(s, id)| s.load_run(id.expect("a run")))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(without_id(remote_run(&url)), without_id(local));
}
