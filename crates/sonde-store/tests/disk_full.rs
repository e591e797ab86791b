//! Issue 16 drill: the disk fills while the results database is written. A file-size limit
//! (RLIMIT_FSIZE, no root needed) stands in for a full disk: the failing write must end with
//! an error naming the database, and the rows written before must read back intact. Its own
//! test binary, because the limit applies to the whole process.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use common::{new_run, test_record};
use sonde_store::*;

#[test]
fn issue16_drill_disk_full_names_the_database_and_keeps_earlier_rows() {
    let dir = sonde_testkit::TempDir::new("store");
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path).unwrap();
    let run = store.begin_run(&new_run(&["clean"])).unwrap();
    let first: Vec<TestRecord> = (0..20)
        .map(|i| test_record(&format!("clean/t{i}/1"), i, true))
        .collect();
    store.record_tests(run, &first).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    // SAFETY: signal(2) and setrlimit(2) change only this process's own disposition and limit.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let lim = libc::rlimit {
            rlim_cur: size + 8192,
            rlim_max: libc::RLIM_INFINITY,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
    let mut failed = None;
    for batch in 0..200u32 {
        let more: Vec<TestRecord> = (0..50)
            .map(|i| {
                test_record(
                    &format!("clean/b{batch}x{i}/1"),
                    1000 + batch * 50 + i,
                    true,
                )
            })
            .collect();
        if let Err(e) = store.record_tests(run, &more) {
            failed = Some(e);
            break;
        }
    }
    // SAFETY: as above; lifts the limit again.
    unsafe {
        let lim = libc::rlimit {
            rlim_cur: libc::RLIM_INFINITY,
            rlim_max: libc::RLIM_INFINITY,
        };
        libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
    }
    let err = failed
        .expect("writing past the file-size limit did not fail")
        .to_string();
    eprintln!("DRILL disk full at {} bytes: {err}", size + 8192);
    assert!(
        err.contains("results.db"),
        "the error does not name the database: {err}"
    );
    drop(store);
    let store = Store::open_read_only(&path).unwrap();
    let ids = store.completed_ids(run).unwrap();
    for i in 0..20 {
        assert!(
            ids.contains(&format!("clean/t{i}/1")),
            "earlier row {i} lost: {ids:?}"
        );
    }
}
