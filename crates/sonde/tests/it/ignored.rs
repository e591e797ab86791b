//! The tests CI leaves out (`#[ignore]`) are still run by someone: each one's reason says who.
//! Those whose reason points at `bench/accuracy.sh` are the names in its `TESTS` list, and
//! that list names no other test, so the script runs what its header says; the rest say "run
//! by hand" and how, in their docs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use std::collections::BTreeSet;
use std::path::Path;

/// Every ignored test of this binary as `module::name`, with its reason.
fn ignored_tests() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(reason) = line.strip_prefix("#[ignore") else {
                continue;
            };
            let name = lines[i + 1..]
                .iter()
                .find_map(|l| l.strip_prefix("fn ")?.split('(').next())
                .unwrap_or_else(|| panic!("{}:{}: no fn after #[ignore]", path.display(), i + 1));
            found.push((format!("{module}::{name}"), reason.to_owned()));
        }
    }
    found
}

/// The names in `bench/accuracy.sh`'s `TESTS=( ... )`.
fn accuracy_list() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/accuracy.sh");
    let text = std::fs::read_to_string(&path).unwrap();
    let list = text
        .split_once("\nTESTS=(\n")
        .and_then(|(_, rest)| rest.split_once("\n)"))
        .map(|(list, _)| list)
        .unwrap_or_else(|| panic!("{}: no TESTS=( ... ) list", path.display()));
    list.lines().map(|l| l.trim().to_owned()).collect()
}

#[test]
fn bench_accuracy_sh_runs_every_ignored_test_that_points_at_it_and_no_other() {
    let _turn = crate::turns::take(module_path!());
    let tests = ignored_tests();
    let points_here: BTreeSet<String> = tests
        .iter()
        .filter(|(_, reason)| reason.contains("bench/accuracy.sh"))
        .map(|(name, _)| name.clone())
        .collect();
    assert!(!points_here.is_empty(), "no ignored test found: {tests:?}");
    assert_eq!(
        accuracy_list(),
        points_here,
        "bench/accuracy.sh's TESTS (left) must name the ignored tests whose reason points at \
         it (right): a new benchmark goes into the list, a test no longer ignored out of it"
    );
}

#[test]
fn every_ignored_test_says_who_runs_it() {
    let _turn = crate::turns::take(module_path!());
    for (name, reason) in ignored_tests() {
        assert!(
            reason.contains("bench/accuracy.sh") || reason.contains("run by hand"),
            "{name}: #[ignore{reason} names neither bench/accuracy.sh nor \"run by hand\""
        );
    }
}
