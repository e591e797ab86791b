//! Puts the commit sonde was built from into `sonde --version` (`SONDE_COMMIT`): the short
//! hash from git where the source is a checkout, "unknown commit" where it is not (a source
//! tarball, git missing).

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=9", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .map_or_else(|| "unknown commit".to_string(), |h| format!("commit {h}"));
    println!("cargo:rustc-env=SONDE_COMMIT={commit}");
    // Rebuild when the checked-out commit changes. Only paths that exist: cargo takes a
    // missing one as changed, and would then rebuild this crate on every command
    // (`packed-refs` appears only once git packs references).
    for f in [
        "../../.git/HEAD",
        "../../.git/refs/heads",
        "../../.git/packed-refs",
    ] {
        if std::path::Path::new(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
