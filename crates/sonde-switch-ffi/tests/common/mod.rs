//! Helpers shared by the C ABI tests: the last error as a string, a connected pair over
//! 127.0.0.1 and ::1, and closing both ends at once.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // test code may fail loudly

use sonde_switch_ffi::*;
use std::ffi::{CStr, CString};
use std::ptr::{null, null_mut};

/// `sonde_switch_last_error()` as a string.
pub fn last_error() -> String {
    unsafe { CStr::from_ptr(sonde_switch_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A listener on 127.0.0.1 and ::1, a client connected over IPv4 and the accepted server
/// end; `None` (after saying why) without IPv6 loopback.
pub fn connected_pair() -> Option<(
    *mut SondeSwitchListener,
    *mut SondeSwitchConn,
    *mut SondeSwitchConn,
)> {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        assert!(
            std::env::var_os("SONDE_REQUIRE_ALL").is_none(),
            "::1 is needed"
        );
        eprintln!("skipped: no IPv6 loopback");
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
