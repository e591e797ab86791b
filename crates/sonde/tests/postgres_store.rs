//! The PostgreSQL results store against a real PostgreSQL server that this test starts
//! (`initdb` + `pg_ctl` in a temporary directory, on a free loopback port, as the `postgres`
//! user when run as root) and always stops: a lab run written through `Results` arrives in
//! PostgreSQL identical to the local SQLite copy, `sonde report` reads it from the URL, and
//! tests recorded while PostgreSQL is stopped are written once it is back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{free_port, lab_available, require_all, run, TempDir};
use sonde_store::{LoadedRun, NewRun, Results, RunStatus, Store};

/// The PostgreSQL server binaries (`/usr/lib/postgresql/VERSION/bin`), newest first.
fn pg_available() -> bool {
    if pg_bin().is_some() {
        return true;
    }
    assert!(
        !require_all(),
        "SONDE_REQUIRE_ALL=1 but PostgreSQL's server binaries are missing (apt-get install postgresql)"
    );
    eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin");
    false
}

fn pg_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// A PostgreSQL server in a temporary directory; stopped when dropped (even on failure).
struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    _dir: TempDir,
}

impl Postgres {
    fn as_owner(&self, program: &str, args: &[&str]) -> Command {
        let exe = self.bin.join(program);
        // PostgreSQL refuses to run as root: run its tools as the `postgres` user then.
        if unsafe { libc::geteuid() } == 0 {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe).args(args);
            c
        } else {
            let mut c = Command::new(exe);
            c.args(args);
            c
        }
    }

    fn start_new() -> Postgres {
        let bin = pg_bin().unwrap_or_else(|| panic!("no PostgreSQL binaries"));
        let dir = TempDir::new("pg");
        let data = dir.file("data");
        if unsafe { libc::geteuid() } == 0 {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown of {} to postgres failed", dir.path().display());
        }
        let pg = Postgres {
            bin,
            data,
            port: free_port(),
            _dir: dir,
        };
        let data = pg.data.display().to_string();
        let out = pg
            .as_owner(
                "initdb",
                &["-D", &data, "-A", "trust", "-U", "sonde", "--no-sync"],
            )
            .output()
            .unwrap_or_else(|e| panic!("initdb: {e}"));
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.start();
        pg
    }

    fn start(&self) {
        let data = self.data.display().to_string();
        let opts = format!(
            "-p {} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port
        );
        let log = format!("{data}/../pg.log");
        let out = self
            .as_owner(
                "pg_ctl",
                &[
                    "-D", &data, "-l", &log, "-o", &opts, "-w", "-t", "30", "start",
                ],
            )
            .output()
            .unwrap_or_else(|e| panic!("pg_ctl start: {e}"));
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    fn stop(&self) {
        let data = self.data.display().to_string();
        let _ = self
            .as_owner(
                "pg_ctl",
                &["-D", &data, "-m", "fast", "-w", "-t", "30", "stop"],
            )
            .output();
    }

    fn url(&self) -> String {
        format!(
            "postgres://sonde@127.0.0.1:{}/postgres?connect_timeout=3",
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

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
