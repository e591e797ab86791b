//! The results database end to end: migrations, refusal of newer schemas, round trips,
//! `--resume` bookkeeping and bulk insert speed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use std::time::Instant;

use rusqlite::Connection;
use sonde_store::*;

mod common;
use common::{new_run, test_record};

#[test]
fn migrates_an_empty_database_and_reopens_idempotently() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path)?;
    assert_eq!(store.schema_version()?, SCHEMA_VERSION);
    let run = store.begin_run(&new_run(&["loss-0"]))?;
    store.record_test(run, &test_record("loss-0/tcp/1", 0, true))?;
    drop(store);
    for _ in 0..2 {
        let store = Store::open(&path)?;
        assert_eq!(store.schema_version()?, SCHEMA_VERSION);
        assert_eq!(store.runs()?.len(), 1);
        assert_eq!(store.load_run(run)?.tests.len(), 1);
    }
    let conn = Connection::open(&path).map_err(|e| panic!("{e}"))?;
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM schema_version", [], |r| r.get(0))
        .map_err(|e| panic!("{e}"))?;
    assert_eq!(rows, 1, "one version row, not one per open");
    Ok(())
}

#[test]
fn a_newer_schema_is_refused_with_a_clear_error() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("future.db");
    drop(Store::open(&path)?);
    let conn = Connection::open(&path).map_err(|e| panic!("{e}"))?;
    conn.execute("UPDATE schema_version SET version = 99", [])
        .map_err(|e| panic!("{e}"))?;
    drop(conn);
    for err in [
        Store::open(&path).map(|_| ()),
        Store::open_read_only(&path).map(|_| ()),
    ] {
        let e = err.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("future.db"), "{e}");
        assert!(e.contains("schema version 99"), "{e}");
        assert!(e.contains(&format!("up to {SCHEMA_VERSION}")), "{e}");
    }
    Ok(())
}

#[test]
fn a_file_that_is_not_a_database_names_the_file() {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("garbage.db");
    std::fs::write(&path, vec![b'x'; 4096]).unwrap_or_else(|e| panic!("{e}"));
    let e = Store::open(&path).err().map(|e| e.to_string());
    assert!(e.as_deref().unwrap_or("").contains("garbage.db"), "{e:?}");
    let e = Store::open_read_only(dir.path().join("missing.db")).err();
    assert!(e.is_some_and(|e| e.to_string().contains("missing.db")));
}

#[test]
fn records_round_trip() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let mut store = Store::open(dir.path().join("r.db"))?;
    let spec = new_run(&["loss-0", "loss-5"]);
    let run = store.begin_run(&spec)?;
    let a = test_record("loss-0/tcp/1", 0, true);
    let b = test_record("loss-5/tcp/1", 1, false);
    store.record_test(run, &b)?;
    store.record_test(run, &a)?;
    store.finish_run(run, RunStatus::Completed, 2e9)?;
    let loaded = store.load_run(run)?;
    assert_eq!(
        loaded.tests,
        vec![a.clone(), b],
        "in ordinal order, every field back"
    );
    assert_eq!(loaded.settings, spec.settings);
    assert_eq!(loaded.run.seed, spec.seed);
    assert_eq!(loaded.run.status, RunStatus::Completed);
    assert_eq!(loaded.run.ended_unix, Some(2e9));
    assert_eq!(loaded.run.host_info, spec.host_info);
    // Recording the same matrix id again replaces it.
    let mut again = a;
    again.status = TestStatus::Failed;
    again.client.traffic = None;
    store.record_test(run, &again)?;
    let loaded = store.load_run(run)?;
    assert_eq!(loaded.tests.len(), 2);
    assert_eq!(loaded.tests[0], again);
    let e = store.load_run(RunId(42)).err().map(|e| e.to_string());
    assert!(e.unwrap_or_default().contains("no run 42"));
    Ok(())
}

#[test]
fn completed_ids_drive_resume() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("r.db");
    let mut store = Store::open(&path)?;
    let run = store.begin_run(&new_run(&["s"]))?;
    let other = store.begin_run(&new_run(&["s"]))?;
    store.record_test(run, &test_record("s/a/1", 0, true))?;
    store.record_test(run, &test_record("s/b/1", 1, false))?;
    store.record_test(other, &test_record("s/c/1", 0, true))?;
    store.finish_run(run, RunStatus::Interrupted, 5.0)?;
    drop(store);

    let mut store = Store::open(&path)?;
    assert_eq!(store.latest_run()?, Some(other));
    let done = store.completed_ids(run)?;
    assert_eq!(
        done.into_iter().collect::<Vec<_>>(),
        vec!["s/a/1".to_owned(), "s/b/1".to_owned()]
    );
    assert_eq!(
        store.test_counts()?,
        vec![(run, 2, 1), (other, 1, 0)],
        "tests and failures per run"
    );
    store.resume_run(run)?;
    let r = &store.runs()?[0];
    assert_eq!((r.status, r.ended_unix), (RunStatus::Running, None));
    assert!(store.resume_run(RunId(99)).is_err());
    Ok(())
}

#[test]
fn a_thousand_records_insert_fast_in_one_transaction() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let mut store = Store::open(dir.path().join("big.db"))?;
    let run = store.begin_run(&new_run(&["s"]))?;
    let tests: Vec<TestRecord> = (0..1000)
        .map(|i| test_record(&format!("s/t{i}/1"), i, i % 10 != 0))
        .collect();
    let t0 = Instant::now();
    store.record_tests(run, &tests)?;
    let took = t0.elapsed();
    eprintln!("1000 records inserted in {took:?}");
    // Typically ~20 ms; the bound is loose so a loaded CI machine does not flake.
    assert!(took.as_secs_f64() < 5.0, "{took:?}");
    let t0 = Instant::now();
    assert_eq!(store.load_run(run)?.tests.len(), 1000);
    eprintln!("1000 records loaded in {:?}", t0.elapsed());
    assert_eq!(store.completed_ids(run)?.len(), 1000);
    Ok(())
}

#[test]
fn corrupt_json_in_a_row_is_an_error_not_a_panic() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("c.db");
    let mut store = Store::open(&path)?;
    let run = store.begin_run(&new_run(&["s"]))?;
    store.record_test(run, &test_record("s/a/1", 0, true))?;
    let conn = Connection::open(&path).map_err(|e| panic!("{e}"))?;
    conn.execute("UPDATE tests SET parameters_json = '{oops'", [])
        .map_err(|e| panic!("{e}"))?;
    let e = store.load_run(run).err().map(|e| e.to_string());
    let e = e.unwrap_or_default();
    assert!(e.contains("c.db") && e.contains("s/a/1"), "{e}");
    Ok(())
}

/// The `-wal` and `-shm` files beside `path` that are still there.
fn wal_files(path: &std::path::Path) -> Vec<String> {
    ["-wal", "-shm"]
        .iter()
        .map(|s| format!("{}{s}", path.display()))
        .filter(|p| std::path::Path::new(p).exists())
        .collect()
}

#[test]
fn a_closed_database_leaves_no_wal_or_shm_files() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path)?;
    let run = store.begin_run(&new_run(&["loss-0"]))?;
    store.record_test(run, &test_record("loss-0/tcp/1", 0, true))?;
    assert!(
        !wal_files(&path).is_empty(),
        "a store open in WAL mode has them"
    );
    drop(store);
    assert_eq!(
        wal_files(&path),
        Vec::<String>::new(),
        "after the writer closed"
    );
    // The report's read: a read-only connection could not remove them when it closed.
    let reader = Store::open_read_only(&path)?;
    assert_eq!(reader.load_run(run)?.tests.len(), 1);
    drop(reader);
    assert_eq!(
        wal_files(&path),
        Vec::<String>::new(),
        "after a reader closed"
    );
    Ok(())
}

#[test]
fn a_read_only_store_still_refuses_to_write() -> Result<(), StoreError> {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("results.db");
    drop(Store::open(&path)?);
    let mut reader = Store::open_read_only(&path)?;
    assert!(reader.begin_run(&new_run(&["loss-0"])).is_err());
    drop(reader);
    assert!(Store::open(&path)?.runs()?.is_empty());
    Ok(())
}
