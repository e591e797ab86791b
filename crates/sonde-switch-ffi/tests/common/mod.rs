//! Helpers shared by the C ABI tests: the last error as a string, a connected pair over
//! 127.0.0.1 and ::1, closing both ends at once, and building a C program against the
//! static library.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // test code may fail loudly

use sonde_switch_ffi::*;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr::{null, null_mut};

/// `sonde_switch_last_error()` as a string.
pub fn last_error() -> String {
    unsafe { CStr::from_ptr(sonde_switch_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// True when ::1 can be bound; otherwise says the test is skipped, and fails instead under
/// `SONDE_REQUIRE_ALL=1`.
pub fn ipv6_loopback() -> bool {
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("SONDE_REQUIRE_ALL").is_none(),
        "::1 is needed"
    );
    eprintln!("skipped: no IPv6 loopback");
    false
}

/// A listener on 127.0.0.1 and ::1, a client connected over IPv4 and the accepted server
/// end; `None` (after saying why) without IPv6 loopback.
pub fn connected_pair() -> Option<(
    *mut SondeSwitchListener,
    *mut SondeSwitchConn,
    *mut SondeSwitchConn,
)> {
    if !ipv6_loopback() {
        return None;
    }
    unsafe {
        let mut l: *mut SondeSwitchListener = null_mut();
        let addrs = CString::new("127.0.0.1:0, [::1]:0").unwrap();
        assert_eq!(sonde_switch_listen(addrs.as_ptr(), null(), &mut l), 0);
        let mut list = vec![0 as libc::c_char; 256];
        sonde_switch_listener_addrs(l, list.as_mut_ptr(), list.len());
        let (mut c, mut s) = (null_mut(), null_mut());
        assert_eq!(
            sonde_switch_connect(list.as_ptr(), libc::AF_INET, null(), &mut c),
            0
        );
        assert_eq!(sonde_switch_accept(l, 5000, &mut s), 0);
        Some((l, c, s))
    }
}

/// Closes both ends at once, as two processes would, then the listener.
pub fn close_both(c: *mut SondeSwitchConn, s: *mut SondeSwitchConn, l: *mut SondeSwitchListener) {
    let sp = s as usize;
    let closer = std::thread::spawn(move || unsafe { sonde_switch_close(sp as *mut _) });
    assert_eq!(unsafe { sonde_switch_close(c) }, 0, "{}", last_error());
    assert_eq!(closer.join().unwrap(), 0);
    unsafe { sonde_switch_listener_close(l) };
}

/// The static library this test was built with: beside the test binary in
/// target/<profile>/deps, or one level up where `cargo build` puts it.
fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libsonde_switch_ffi.a"))
        .find(|p| p.exists())
        .expect("libsonde_switch_ffi.a was not built beside the test")
}

/// Builds the C program `source` into `out` with the system C compiler (`$CC`, else `cc`),
/// warnings as errors, against the checked-in header and the static library.
pub fn build_c(source: &Path, out: &Path) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=c99",
            "-D_DEFAULT_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O2",
            "-o",
        ])
        .arg(out)
        .arg(source)
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .expect("no C compiler (cc) to build the C program with");
    assert!(status.success(), "{} did not compile", source.display());
}
