//! Test-only: a document's exact bytes held against the copy recorded in `snapshots/`.
//!
//! The documents must not change by accident when the types behind them move, so each
//! test that builds a document from fixed values compares its compact JSON with the text
//! recorded before (`snapshots/NAME.json`). `SONDE_RECORD_SNAPSHOTS=1` writes a missing
//! file; it never overwrites one, so a changed document fails until its file is deleted
//! and recorded again on purpose.

use std::path::PathBuf;

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{name}.json"))
}

/// Asserts that `value` serialises (as the writers hand it on, through a JSON value) to
/// exactly the recorded text of `name`.
pub fn check<T: serde::Serialize>(name: &str, value: &T) {
    check_text(name, &sonde_schema::to_value(value).to_string());
}

/// Asserts that `text`, a document's bytes as a writer wrote them, is exactly the recorded
/// text of `name` (a document read back through a parser would depend on how the parser
/// rounds floats).
pub fn check_text(name: &str, text: &str) {
    let file = path(name);
    if !file.exists() && std::env::var_os("SONDE_RECORD_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(file.parent().unwrap_or(&file)).unwrap();
        std::fs::write(&file, text).unwrap();
    }
    let recorded = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("no snapshot {}: {e}", file.display()));
    assert_eq!(text, recorded, "document {name} changed");
}
