//! Regression tests: a results database is closed cleanly. `sonde report agent.db` (and the
//! report at the end of `sonde lab run`) read the database through a read-only connection,
//! which cannot checkpoint or delete the WAL, so `results.db-wal` and `results.db-shm` were
//! left beside it (after `lab run`: checked as root, with a lab of its own).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::{lab_available, one_tcp_test, run, run_lab, TempDir};
use serde_json::json;
use sonde_store::{EndRecord, NewRun, RunStatus, Store, TestRecord, TestStatus};
use std::path::Path;
use std::time::Duration;

/// A database holding one completed run of one failed test, written by the store.
fn database(path: &Path) {
    let mut store = Store::open(path).unwrap();
    let run = store
        .begin_run(&NewRun {
            scenario_name: "agent".into(),
            scenario_toml: "name = \"agent\"\n".into(),
            sonde_version: "sonde 0.1.0".into(),
            hostname: "probe".into(),
            kernel: "6.1.0".into(),
            host_info: json!({}),
            seed: 1,
            started_unix: 1_795_300_000.0,
            settings: vec![],
        })
        .unwrap();
    let test = TestRecord {
        matrix_id: "none/tcp/1".into(),
        ordinal: 0,
        settings: "none".into(),
        test_name: "tcp".into(),
        repetition: 1,
        seed: 1,
        kind: "sonde".into(),
        protocol: Some("tcp".into()),
        parameters: json!({"args": []}),
        link_status: None,
        started_unix: 1_795_300_001.0,
        ended_unix: 1_795_300_002.0,
        status: TestStatus::Failed,
        failure_reason: Some("the server did not answer".into()),
        result_path: None,
        result_json: None,
        client: EndRecord::default(),
        server: EndRecord::default(),
        stage_stats: None,
    };
    store.record_test(run, &test).unwrap();
    store
        .finish_run(run, RunStatus::Completed, 1_795_300_010.0)
        .unwrap();
}

fn leftovers(db: &Path) -> Vec<String> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|s| format!("{}{s}", db.display()))
        .filter(|p| Path::new(p).exists())
        .collect()
}

#[test]
fn report_of_a_database_leaves_no_wal_or_shm_files() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("store-files");
    let db = dir.file("agent.db");
    database(&db);
    assert_eq!(
        leftovers(&db),
        Vec::<String>::new(),
        "after the store's write"
    );
    let db_arg = db.display().to_string();
    let out_arg = dir.file("report").display().to_string();
    let report = run(
        &["report", &db_arg, "-o", &out_arg],
        Duration::from_secs(30),
    );
    report.expect_code(0);
    assert_eq!(
        leftovers(&db),
        Vec::<String>::new(),
        "{}",
        report.describe()
    );
    let list = run(&["report", &db_arg, "--list-runs"], Duration::from_secs(30));
    list.expect_code(0);
    assert_eq!(leftovers(&db), Vec::<String>::new(), "{}", list.describe());
}

#[test]
fn lab_run_leaves_no_wal_or_shm_files_beside_its_results_database() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("store-files-lab");
    let db = run_lab(&dir, &one_tcp_test(), Duration::from_secs(120)).join("results.db");
    assert!(db.exists(), "no {}", db.display());
    assert_eq!(leftovers(&db), Vec::<String>::new());
}
