//! The stable-Rust half of the fuzz campaign: every target's check over its committed corpus
//! (`fuzz/seeds/<target>/`: seeds made from real encoded messages, and the reproducer of
//! every crash a campaign found), plus truncations of each file. CI runs this without a
//! nightly toolchain; a crash that was fixed fails here if it comes back.

use std::fs;
use std::path::PathBuf;

// The generator of the committed seeds; its `main` (which writes them) is not called here.
#[allow(dead_code)]
#[path = "../examples/write_seeds.rs"]
mod write_seeds;

fn seeds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds")
}

#[test]
fn every_target_replays_its_committed_corpus() {
    let mut replayed = 0usize;
    for (name, check) in sonde_fuzz_checks::TARGETS {
        let dir = seeds_dir().join(name);
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(
            !files.is_empty(),
            "target {name} has no seed in {}",
            dir.display()
        );
        for f in files {
            let data = fs::read(&f).unwrap();
            check(&data);
            // Truncations: where a datagram or stream is cut short.
            let step = (data.len() / 16).max(1);
            for cut in (0..data.len()).step_by(step) {
                check(&data[..cut]);
            }
            replayed += 1;
        }
    }
    println!("replayed {replayed} corpus files");
}

#[test]
fn every_fuzz_binary_has_a_check_and_the_reverse() {
    let manifest = fs::read_to_string(seeds_dir().join("../Cargo.toml")).unwrap();
    for (name, _) in sonde_fuzz_checks::TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "{name} is not a fuzz binary"
        );
    }
    let bins = manifest.matches("[[bin]]").count();
    assert_eq!(
        bins,
        sonde_fuzz_checks::TARGETS.len(),
        "a fuzz binary has no check"
    );
}

/// Every (name, version) of a `Cargo.lock`'s text.
fn locked(text: &str) -> std::collections::BTreeSet<(String, String)> {
    let mut out = std::collections::BTreeSet::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            out.insert((n, v.trim_matches('"').to_string()));
        }
    }
    out
}

/// The fuzz workspace's lock holds the main workspace's version of every package the two
/// share, so that CI's check of the fuzz targets reuses what clippy just checked instead of
/// building other versions (and the targets fuzz the code the tests test).
#[test]
fn the_fuzz_lock_pins_the_workspace_versions() {
    let fuzz = locked(&fs::read_to_string(seeds_dir().join("../Cargo.lock")).unwrap());
    let main = locked(&fs::read_to_string(seeds_dir().join("../../Cargo.lock")).unwrap());
    let names: std::collections::BTreeSet<&str> = main.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        fuzz.len() > 20 && main.len() > 100,
        "{} {}",
        fuzz.len(),
        main.len()
    );
    let other: Vec<_> = fuzz
        .iter()
        .filter(|(n, _)| names.contains(n.as_str()))
        .filter(|p| !main.contains(*p))
        .collect();
    assert!(
        other.is_empty(),
        "fuzz/Cargo.lock has other versions than Cargo.lock: {other:?}; run `cp Cargo.lock fuzz/Cargo.lock && cargo metadata --manifest-path fuzz/Cargo.toml --format-version 1 >/dev/null`"
    );
}

/// The committed `seed-*` files are exactly what `examples/write_seeds.rs` makes from today's
/// encoders: a wire format that changed without the seeds being written again (or a seed
/// edited by hand, or left behind) fails here, not silently in a weaker fuzz campaign.
#[test]
fn the_committed_seeds_are_what_write_seeds_makes() {
    let stale = "run `cargo run --release -p sonde-fuzz-checks --example write_seeds`";
    let files = write_seeds::seed_files().unwrap();
    for (path, bytes) in &files {
        let on_disk = fs::read(seeds_dir().join(path))
            .unwrap_or_else(|e| panic!("{}: {e}; {stale}", path.display()));
        assert!(on_disk == *bytes, "{} differs; {stale}", path.display());
    }
    let mut committed = 0;
    for (name, _) in sonde_fuzz_checks::TARGETS {
        for e in fs::read_dir(seeds_dir().join(name)).unwrap() {
            let file = e.unwrap().file_name();
            if file.to_string_lossy().starts_with("seed-") {
                committed += 1;
            }
        }
    }
    assert_eq!(
        committed,
        files.len(),
        "a seed-* file nothing makes; {stale}"
    );
}
