//! The workspace's test helpers, in one place: child processes with deadlines, a server on a
//! port of its own, free ports, temporary directories, paths into JSON documents, whether the
//! lab can run here, scenario files, and reading a rendered report page back.
//!
//! Before this crate, tests borrowed each other's helpers with `#[path]` (the binary's tests
//! included `sonde-report`'s page reader and `sonde-switch`'s stream helpers, the C ABI's tests
//! the latter too), wrote the same client-router-server scenario out by hand in each lab
//! test, and kept several copies of the "skip saying why, or fail under
//! `SONDE_REQUIRE_ALL=1`" rule. Here each is written once and used by name.
//!
//! A dev-dependency only: a crate's `tests/` (and nothing under its `src/`) may use it, and no
//! library depends on it, so nothing a user builds links it. It depends on no workspace crate
//! in turn, so any crate's tests can use it without a circle; what is one program's own (the
//! path of the built `sonde`, its subcommands' arguments) stays in that program's tests and is
//! passed in (see [`proc::Program`]).
//!
//! The rule every helper here follows when a facility is missing (root, a tool, IPv6
//! loopback): [`skip`] says why the test does not run, and fails it instead under
//! `SONDE_REQUIRE_ALL=1` (CI), so a machine that lacks something cannot pass by skipping.
//!
//! ```
//! use sonde_testkit::scenario::chain;
//!
//! let toml = chain()
//!     .name("small")
//!     .host("client")
//!     .link("wan")
//!     .host("server")
//!     .settings("clean")
//!     .sonde("tcp", &["client", "{server}", "-t", "1"])
//!     .to_toml();
//! assert!(toml.starts_with("name = \"small\"\nhosts = [\"client\", \"server\"]\n"));
//! ```

// Test helpers fail loudly: a helper's unwrap, expect or panic is the calling test failing,
// with the message saying where.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod browser;
pub mod json;
pub mod lab;
pub mod listeners;
pub mod net;
pub mod page;
pub mod postgres;
pub mod proc;
pub mod pty;
pub mod scenario;
pub mod server;
pub mod stream;

mod tempdir;

pub use proc::which;
pub use tempdir::TempDir;

/// True when `SONDE_REQUIRE_ALL=1`: tests that would skip for lack of a facility must fail.
pub fn require_all() -> bool {
    std::env::var("SONDE_REQUIRE_ALL").is_ok_and(|v| v == "1")
}

/// Says why a test does not run; fails instead under `SONDE_REQUIRE_ALL=1`.
#[track_caller]
pub fn skip(why: &str) {
    assert!(!require_all(), "SONDE_REQUIRE_ALL=1 but {why}");
    eprintln!("skipped: {why}");
}

/// Whether every program of `programs` is on `PATH`; when one is not, says that `what` skips
/// for want of it (and fails under `SONDE_REQUIRE_ALL=1`).
#[track_caller]
pub fn installed(what: &str, programs: &[&str]) -> bool {
    match programs.iter().find(|p| which(p).is_none()) {
        None => true,
        Some(missing) => {
            skip(&format!("{what}: {missing} is not installed"));
            false
        }
    }
}

/// The last `max` bytes of `s` (at a character boundary), for failure messages.
pub fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = s.len() - max;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}
