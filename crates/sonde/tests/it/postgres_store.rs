//! The PostgreSQL results store against a real PostgreSQL server that this test starts
//! (`initdb` + `pg_ctl` in a temporary directory, on a free loopback port, as the `postgres`
//! user when run as root) and always stops: a lab run written through `Results` arrives in
//! PostgreSQL identical to the local SQLite copy, `sonde report` reads it from the URL, and
//! tests recorded while PostgreSQL is stopped are written once it is back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::postgres::{pg_available, Postgres};
use common::{lab_available, run, TempDir};
use sonde_store::{LoadedRun, NewRun, Results, RunStatus, Store};

/// A lab run recorded by a real `sonde lab run` (the report tests' fixture).
fn lab_run() -> LoadedRun {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sonde-report/tests/fixtures/lab-run.json");
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

/// A local store in a new directory, copying to `url`, with the fixture's run begun in it
/// (its start moved by `start_offset` seconds, so several such runs are told apart).
fn local_run(url: &str, tag: &str, start_offset: f64) -> (TempDir, Results, sonde_store::RunId) {
    let work = TempDir::new(tag);
    let mut results =
        Results::open(work.file("results.db"), Some(url)).unwrap_or_else(|e| panic!("{e}"));
    let mut run = new_run(&lab_run());
    run.started_unix += start_offset;
    let id = results
        .local()
        .begin_run(&run)
        .unwrap_or_else(|e| panic!("{e}"));
    (work, results, id)
}

#[test]
fn postgres_round_trip_buffering_and_report() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let fixture = lab_run();
    assert!(fixture.tests.len() >= 4, "the fixture has tests to split");
    let (first, later) = fixture.tests.split_at(fixture.tests.len() / 2);

    let (work, mut results, id) = local_run(&url, "pg-local", 0.0);
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

#[test]
fn lab_run_with_store_writes_postgresql() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() || !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let dir = TempDir::new("pg-lab");
    let scenario = dir.file("one-test.toml");
    std::fs::write(&scenario, common::one_tcp_test()).unwrap();
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

/// A run's tests as (matrix id, end, status), in order.
fn ids_of(run: &LoadedRun) -> Vec<(String, f64, sonde_store::TestStatus)> {
    run.tests
        .iter()
        .map(|t| (t.matrix_id.clone(), t.ended_unix, t.status))
        .collect()
}

#[test]
fn later_copies_see_new_tests_tests_recorded_again_and_survive_pruning() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let fixture = lab_run();
    let base = fixture.tests[0].clone();
    let test = |i: usize, end: f64, ok: bool| sonde_store::TestRecord {
        matrix_id: format!("s/t{i}/1"),
        ordinal: i as u32,
        ended_unix: end,
        status: if ok {
            sonde_store::TestStatus::Ok
        } else {
            sonde_store::TestStatus::Failed
        },
        ..base.clone()
    };
    let (_work, mut results, id) = local_run(&url, "pg-incremental", 0.0);
    for i in 0..4 {
        results
            .local()
            .record_test(id, &test(i, 100.0 + i as f64, true))
            .unwrap();
    }
    let first = results.sync().unwrap();
    assert_eq!(first.tests_written, 4);
    // Settings added to the run after its first copy (an agent's reload) follow it.
    let mut late = fixture.settings[0].clone();
    late.name = "added-later".into();
    late.ordinal = 99;
    results.local().add_settings(id, &[late]).unwrap();
    // A name the run has is left as it is.
    let mut again = fixture.settings[0].clone();
    again.ordinal = 98;
    results.local().add_settings(id, &[again]).unwrap();
    // The newest test recorded again takes its own row's place; an older one recorded again
    // and a new one follow. The next copy (looking only from its mark on) writes those three.
    results
        .local()
        .record_test(id, &test(3, 203.0, false))
        .unwrap();
    results
        .local()
        .record_test(id, &test(1, 201.0, false))
        .unwrap();
    results
        .local()
        .record_test(id, &test(4, 104.0, true))
        .unwrap();
    let second = results.sync().unwrap();
    assert_eq!(second.tests_written, 3, "{second:?}");
    assert_eq!(results.sync().unwrap().tests_written, 0, "nothing twice");
    let local_ids = |r: &mut Results| ids_of(&r.local().load_run(id).unwrap());
    let all = local_ids(&mut results);
    assert_eq!(ids_of(&remote_run(&url)), all);
    let names = |r: &LoadedRun| -> Vec<(String, u32)> {
        r.settings
            .iter()
            .map(|s| (s.name.clone(), s.ordinal))
            .collect()
    };
    let local_names = names(&results.local().load_run(id).unwrap());
    assert!(
        local_names.contains(&("added-later".into(), 99)),
        "{local_names:?}"
    );
    assert_eq!(local_names.len(), fixture.settings.len() + 1);
    assert_eq!(names(&remote_run(&url)), local_names);

    // Pruned locally up to what was copied: PostgreSQL keeps everything, and later copies
    // neither miss nor repeat anything, across a restart of PostgreSQL (a full comparison).
    let mark = results.local().write_mark().unwrap();
    let pruned = results.local().prune_tests(1e12, Some(mark)).unwrap();
    assert_eq!(pruned, 4, "all but the newest row");
    results
        .local()
        .record_test(id, &test(5, 105.0, true))
        .unwrap();
    assert_eq!(results.sync().unwrap().tests_written, 1);
    pg.stop();
    results
        .local()
        .record_test(id, &test(6, 106.0, true))
        .unwrap();
    assert!(results.sync().is_err());
    pg.start();
    assert_eq!(results.sync().unwrap().tests_written, 1);
    let mut expected = all;
    expected.push(("s/t5/1".into(), 105.0, sonde_store::TestStatus::Ok));
    expected.push(("s/t6/1".into(), 106.0, sonde_store::TestStatus::Ok));
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    let mut remote = ids_of(&remote_run(&url));
    remote.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(remote, expected);
    assert_eq!(
        local_ids(&mut results).len(),
        3,
        "t4, t5 and t6 held locally"
    );
}

/// A long outage's backlog (more tests than two of the copy's batches) arrives whole: every
/// test with its counters, as recorded, none twice; a fixture test recorded again inside it
/// replaces the copy PostgreSQL had.
#[test]
fn a_backlog_larger_than_a_batch_arrives_whole() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let fixture = lab_run();
    let (work, mut results, id) = local_run(&url, "pg-backlog", 0.0);
    results.local().record_tests(id, &fixture.tests).unwrap();
    assert_eq!(
        results.sync().unwrap().tests_written,
        fixture.tests.len() as u64
    );
    pg.stop();
    let backlog: Vec<_> = (0..1_201usize)
        .map(|i| {
            let base = &fixture.tests[i % fixture.tests.len()];
            sonde_store::TestRecord {
                matrix_id: format!("backlog/{i}"),
                ordinal: (1_000 + i) as u32,
                ended_unix: base.ended_unix + i as f64,
                ..base.clone()
            }
        })
        .collect();
    results.local().record_tests(id, &backlog).unwrap();
    let mut again = fixture.tests[0].clone();
    again.ended_unix += 0.5;
    again.status = sonde_store::TestStatus::Failed;
    results.local().record_test(id, &again).unwrap();
    assert!(results.sync().is_err(), "PostgreSQL is stopped");
    pg.start();
    assert_eq!(results.sync().unwrap().tests_written, 1_202);
    assert_eq!(results.sync().unwrap().tests_written, 0, "nothing twice");
    let local = Store::open_read_only(work.file("results.db"))
        .and_then(|s| s.load_run(id))
        .unwrap();
    assert_eq!(local.tests.len(), fixture.tests.len() + 1_201);
    assert!(
        local.tests.iter().any(|t| t.client.traffic.is_some()),
        "the fixture's tests carry interface counters"
    );
    assert_eq!(without_id(remote_run(&url)), without_id(local));
}

/// Drops every packet to and from a loopback TCP port while it lives (an nftables table of
/// its own, deleted when dropped): the server behind the port goes silent, as one whose host
/// lost power or whose link was cut, with no reset to tell its clients.
struct Blackhole {
    table: String,
}

impl Blackhole {
    fn on(port: u16) -> Blackhole {
        let table = format!("sonde_blackhole_{}_{port}", std::process::id());
        let rules = format!(
            "table inet {table} {{\n chain out {{\n  type filter hook output priority 0; policy accept;\n  tcp dport {port} drop\n  tcp sport {port} drop\n }}\n}}\n"
        );
        let dir = TempDir::new("blackhole");
        std::fs::write(dir.file("rules.nft"), rules).unwrap();
        let out = std::process::Command::new("nft")
            .arg("-f")
            .arg(dir.file("rules.nft"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "nft: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Blackhole { table }
    }
}

impl Drop for Blackhole {
    fn drop(&mut self) {
        let _ = std::process::Command::new("nft")
            .args(["delete", "table", "inet", &self.table])
            .output();
    }
}

/// A PostgreSQL that goes silent mid-connection (every packet dropped) fails a copy after the
/// URL's `tcp_user_timeout` (libpq's milliseconds) instead of the kernel's retransmissions of
/// about 15 minutes; nothing is lost, and the next copy once it answers again writes it all.
#[test]
fn a_server_gone_silent_fails_the_copy_after_the_user_timeout() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() || !lab_available() {
        return;
    }
    if common::which("nft").is_none() {
        assert!(
            !common::require_all(),
            "SONDE_REQUIRE_ALL=1 but nft is missing (apt-get install nftables)"
        );
        eprintln!("skipped: no nft to silence the server");
        return;
    }
    let pg = Postgres::start_new();
    let url = format!("{}&tcp_user_timeout=1500", pg.url());
    let fixture = lab_run();
    let (work, mut results, id) = local_run(&url, "pg-silent", 0.0);
    results.local().record_tests(id, &fixture.tests).unwrap();
    results.sync().unwrap();
    let mut later = fixture.tests[0].clone();
    later.matrix_id = "later/0".into();
    later.ended_unix += 100.0;
    results.local().record_test(id, &later).unwrap();

    let silence = Blackhole::on(pg.port());
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let t0 = std::time::Instant::now();
    let copier = std::thread::spawn(move || {
        let got = results.sync().map(|d| d.tests_written);
        let _ = done_tx.send(t0.elapsed());
        (results, got)
    });
    // Without the time-out the copy would wait about 15 minutes; 30 s is far beyond it.
    let took = done_rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("the copy to a silent server still waits after 30 s"));
    let (mut results, got) = copier.join().unwrap();
    eprintln!("copy to a silent server: {got:?} after {took:.2?}");
    let e = got.unwrap_err().to_string();
    assert!(took < Duration::from_secs(10), "{took:?}: {e}");
    drop(silence);
    assert_eq!(results.sync().unwrap().tests_written, 1, "the later test");
    let local = Store::open_read_only(work.file("results.db"))
        .and_then(|s| s.load_run(id))
        .unwrap();
    assert_eq!(without_id(remote_run(&url)), without_id(local));
}

/// What a copy costs as the local store grows, a full comparison (every copy before marks,
/// and the first copy of each connection now) against an incremental one (one new test).
/// A benchmark, run by hand: `cargo test --release -p sonde --test it --
/// --ignored --nocapture postgres_store::sync_cost` (figures in bench/RESULTS.md).
#[test]
#[ignore = "benchmark, run by hand"]
fn sync_cost() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let fixture = lab_run();
    let base = fixture.tests[0].clone();
    for n in [2_200usize, 20_000] {
        let (work, mut results, id) = local_run(&url, "pg-cost", n as f64);
        let tests: Vec<_> = (0..n)
            .map(|i| sonde_store::TestRecord {
                matrix_id: format!("peer/latency/{i}"),
                ordinal: i as u32,
                ended_unix: 1e9 + i as f64,
                ..base.clone()
            })
            .collect();
        results.local().record_tests(id, &tests).unwrap();
        let copy_all = std::time::Instant::now();
        assert_eq!(results.sync().unwrap().tests_written, n as u64);
        let copy_all = copy_all.elapsed();
        // A fresh connection compares everything; the next copy only what is new.
        let local = sonde_store::Store::open(work.file("results.db")).unwrap();
        let mut fresh = sonde_store::Remote::new(&url);
        fresh.connect().unwrap();
        let full = std::time::Instant::now();
        assert_eq!(fresh.sync(&local).unwrap().tests_written, 0);
        let full = full.elapsed();
        let mut more = base.clone();
        more.matrix_id = format!("peer/latency/{n}");
        more.ended_unix = 2e9;
        drop(local);
        results.local().record_test(id, &more).unwrap();
        let local = sonde_store::Store::open(work.file("results.db")).unwrap();
        let inc = std::time::Instant::now();
        assert_eq!(fresh.sync(&local).unwrap().tests_written, 1);
        let inc = inc.elapsed();
        eprintln!(
            "{n} tests: first copy {copy_all:?}, full comparison {full:?}, incremental (1 new) {inc:?}"
        );
    }
}
