//! Pruning a long-lived store: tests go by age and, when asked, only up to a write mark;
//! never the newest row, never a test before its time; interface counters go with their test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use common::{new_run, test_record};
use sonde_store::{RunId, Store, StoreError, TestRecord, WriteMark};

/// A store with one run and tests `s/tN/1` for each end time given (in that order).
fn store_with(ends: &[f64]) -> (sonde_testkit::TempDir, Store, RunId) {
    let dir = sonde_testkit::TempDir::new("store");
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let run = store.begin_run(&new_run(&["s"])).unwrap();
    for (i, end) in ends.iter().enumerate() {
        store.record_test(run, &at(i, *end)).unwrap();
    }
    (dir, store, run)
}

fn at(i: usize, end: f64) -> TestRecord {
    TestRecord {
        ended_unix: end,
        ..test_record(&format!("s/t{i}/1"), i as u32, true)
    }
}

fn ids(store: &Store, run: RunId) -> Vec<String> {
    store.completed_ids(run).unwrap().into_iter().collect()
}

fn counter_rows(dir: &sonde_testkit::TempDir) -> i64 {
    let conn = rusqlite::Connection::open(dir.path().join("r.db")).unwrap();
    conn.query_row("SELECT count(*) FROM interface_counters", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn tests_older_than_the_cut_off_go_with_their_counters() -> Result<(), StoreError> {
    let ends: Vec<f64> = (0..10).map(|i| 100.0 + f64::from(i)).collect();
    let (dir, mut store, run) = store_with(&ends);
    assert_eq!(
        counter_rows(&dir),
        20,
        "client and server counters per test"
    );
    assert_eq!(store.prune_tests(105.0, None)?, 5);
    assert_eq!(
        ids(&store, run),
        ["s/t5/1", "s/t6/1", "s/t7/1", "s/t8/1", "s/t9/1"]
    );
    assert_eq!(counter_rows(&dir), 10);
    assert_eq!(store.prune_tests(105.0, None)?, 0, "nothing twice");
    // Everything is old now, but the newest row stays.
    assert_eq!(store.prune_tests(1e12, None)?, 4);
    assert_eq!(ids(&store, run), ["s/t9/1"]);
    let loaded = store.load_run(run)?;
    assert_eq!(loaded.tests.len(), 1);
    Ok(())
}

#[test]
fn a_mark_keeps_what_was_written_after_it() -> Result<(), StoreError> {
    let (_dir, mut store, run) = store_with(&[100.0, 101.0, 102.0]);
    let mark = store.write_mark()?;
    assert!(mark > WriteMark::NONE);
    for i in 3..6 {
        store.record_test(run, &at(i, 100.0 + i as f64))?;
    }
    assert_eq!(store.tests_after(mark)?, 3);
    assert_eq!(store.tests_after(WriteMark::NONE)?, 6);
    // All six are old: only the three under the mark may go.
    assert_eq!(store.prune_tests(1e12, Some(mark))?, 3);
    assert_eq!(ids(&store, run), ["s/t3/1", "s/t4/1", "s/t5/1"]);
    assert_eq!(store.tests_after(mark)?, 3);
    assert_eq!(store.prune_tests(1e12, Some(WriteMark::NONE))?, 0);
    Ok(())
}

#[test]
fn a_test_out_of_time_order_holds_the_walk_and_none_goes_early() -> Result<(), StoreError> {
    // Written in this order: ended at 100, 300, 101, 102.
    let (_dir, mut store, run) = store_with(&[100.0, 300.0, 101.0, 102.0]);
    assert_eq!(
        store.prune_tests(200.0, None)?,
        1,
        "stops at the test of 300"
    );
    assert_eq!(ids(&store, run), ["s/t1/1", "s/t2/1", "s/t3/1"]);
    // Past 300: the rest but the newest.
    assert_eq!(store.prune_tests(400.0, None)?, 2);
    assert_eq!(ids(&store, run), ["s/t3/1"]);
    Ok(())
}

#[test]
fn a_test_recorded_again_is_never_under_an_earlier_mark() -> Result<(), StoreError> {
    // What an incremental copy relies on: a test recorded again, even in place of the
    // newest row, is at or above the mark taken before.
    let (_dir, mut store, run) = store_with(&[100.0, 101.0, 102.0]);
    let mark = store.write_mark()?;
    store.record_test(run, &at(2, 150.0))?;
    assert!(store.write_mark()? >= mark);
    store.record_test(run, &at(0, 151.0))?;
    assert!(store.write_mark()? > mark);
    assert_eq!(store.tests_after(WriteMark(mark.0 - 1))?, 2);
    Ok(())
}

#[test]
fn an_empty_store_prunes_nothing() -> Result<(), StoreError> {
    let (_dir, mut store, _run) = store_with(&[]);
    assert_eq!(store.write_mark()?, WriteMark::NONE);
    assert_eq!(store.prune_tests(1e12, None)?, 0);
    Ok(())
}
