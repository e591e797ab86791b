//! Shared by the report tests: the fixed inputs, built the way `sonde report` reads them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use sonde_report::Inputs;
use sonde_store::{LoadedRun, NewRun, Store};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixture documents, named relative to the crate so reports do not depend on where the
/// checkout lives.
pub const DOCS: [&str; 5] = [
    "tests/fixtures/docs/tcp-cubic.json",
    "tests/fixtures/docs/udp-97m.json",
    "tests/fixtures/docs/udp-reverse.json",
    "tests/fixtures/docs/bidir.json",
    "tests/fixtures/docs/latency.json",
];

pub fn doc_inputs() -> Inputs {
    // Tests run with the crate as working directory.
    let paths: Vec<PathBuf> = DOCS.iter().map(PathBuf::from).collect();
    Inputs::from_paths(&paths).unwrap_or_else(|e| panic!("fixture documents: {e}"))
}

/// Writes a lab run into a fresh database at `db` through the store's API.
pub fn write_store(db: &Path, run: &LoadedRun) {
    let mut store = Store::open(db).unwrap_or_else(|e| panic!("{e}"));
    let r = &run.run;
    let id = store
        .begin_run(&NewRun {
            scenario_name: r.scenario_name.clone(),
            scenario_toml: r.scenario_toml.clone(),
            sonde_version: r.sonde_version.clone(),
            hostname: r.hostname.clone(),
            kernel: r.kernel.clone(),
            host_info: r.host_info.clone(),
            seed: r.seed,
            started_unix: r.started_unix,
            settings: run.settings.clone(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    store
        .record_tests(id, &run.tests)
        .unwrap_or_else(|e| panic!("{e}"));
    store
        .finish_run(id, r.status, r.ended_unix.unwrap_or(r.started_unix))
        .unwrap_or_else(|e| panic!("{e}"));
}

pub fn lab_run() -> LoadedRun {
    let text = std::fs::read_to_string(fixtures().join("lab-run.json"))
        .unwrap_or_else(|e| panic!("lab-run.json: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("lab-run.json: {e}"))
}

/// The fixture lab run, stored in `dir/results.db` and read back with `Inputs::from_paths`;
/// the database path in the report is replaced by a fixed name.
pub fn lab_inputs(dir: &Path) -> Inputs {
    let db = dir.join("results.db");
    write_store(&db, &lab_run());
    let mut inputs = Inputs::from_paths(&[db]).unwrap_or_else(|e| panic!("{e}"));
    if let Inputs::Run { path, .. } = &mut inputs {
        *path = "results.db".into();
    }
    inputs
}
