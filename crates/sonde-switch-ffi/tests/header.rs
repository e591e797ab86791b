//! The checked-in C header is what cbindgen makes of the code now. After changing the ABI,
//! regenerate it with `SONDE_BLESS=1 cargo test -p sonde-switch-ffi --test header`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use std::path::Path;

#[test]
fn the_checked_in_header_matches_the_code() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen cannot read the crate")
        .write(&mut generated);
    let path = dir.join("include/sonde_switch.h");
    if std::env::var_os("SONDE_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/sonde_switch.h is out of date: run SONDE_BLESS=1 cargo test -p sonde-switch-ffi --test header\n--- generated ---\n{}",
        String::from_utf8_lossy(&generated)
    );
}
