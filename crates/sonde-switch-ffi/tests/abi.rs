//! The C ABI called as C would call it: bad arguments give -EINVAL and a message, never a
//! crash; non-blocking calls say -EAGAIN; structs that begin with a smaller size are read
//! and filled only that far; a whole stream with a switch through the exported functions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_switch_ffi::*;
use std::ffi::{c_void, CStr, CString};
use std::ptr::{null, null_mut};

mod common;
use common::{close_both, last_error};

#[test]
fn bad_arguments_are_errors_with_a_message() {
    let mut c: *mut SondeSwitchConn = null_mut();
    unsafe {
        assert_eq!(
            sonde_switch_connect(null(), libc::AF_INET, null(), &mut c),
            -libc::EINVAL
        );
        assert!(last_error().contains("addrs is NULL"), "{}", last_error());
        let a = CString::new("127.0.0.1:9").unwrap();
        assert_eq!(
            sonde_switch_connect(a.as_ptr(), 77, null(), &mut c),
            -libc::EINVAL
        );
        assert!(last_error().contains("AF_INET"), "{}", last_error());
        assert_eq!(
            sonde_switch_connect(a.as_ptr(), libc::AF_INET, null(), null_mut()),
            -libc::EINVAL
        );
        assert_eq!(
            sonde_switch_send(null(), null(), 5, 0),
            -libc::EINVAL as isize
        );
        assert_eq!(
            sonde_switch_recv(null(), null_mut(), 5, 0),
            -libc::EINVAL as isize
        );
        assert_eq!(sonde_switch_switch(null(), libc::AF_INET6), -libc::EINVAL);
        let mut st = SondeSwitchStats::default();
        assert_eq!(sonde_switch_stats(null(), &mut st), -libc::EINVAL);
        assert_eq!(sonde_switch_close(null_mut()), 0);
        sonde_switch_abort(null_mut());
        sonde_switch_listener_close(null_mut());
        let bad = CString::new("not an address").unwrap();
        let mut l: *mut SondeSwitchListener = null_mut();
        assert!(sonde_switch_listen(bad.as_ptr(), null(), &mut l) < 0);
        assert!(l.is_null());
        let s = CStr::from_ptr(sonde_switch_strerror(-libc::ETIMEDOUT));
        assert_eq!(s.to_str().unwrap(), "timed out");
    }
}

#[test]
fn options_are_checked_and_read_only_as_far_as_their_size() {
    let mut o = SondeSwitchOptions::default();
    let addrs = CString::new("127.0.0.1:0").unwrap();
    let mut l: *mut SondeSwitchListener = null_mut();
    unsafe {
        assert_eq!(sonde_switch_options_init(&mut o), 0);
        assert_eq!(o.size as usize, std::mem::size_of::<SondeSwitchOptions>());
        o.replay_capacity = 10; // below the minimum
        assert_eq!(
            sonde_switch_listen(addrs.as_ptr(), &o, &mut l),
            -libc::EINVAL
        );
        assert!(last_error().contains("replay_capacity"));
        // An older caller whose struct ends before replay_capacity: the field is not read.
        o.size = 16;
        assert_eq!(sonde_switch_listen(addrs.as_ptr(), &o, &mut l), 0);
        sonde_switch_listener_close(l);
    }
}

#[test]
fn a_stream_through_the_c_functions_with_a_switch_and_nonblocking_calls() {
    if !common::ipv6_loopback() {
        return;
    }
    unsafe {
        let mut l: *mut SondeSwitchListener = null_mut();
        let addrs = CString::new("127.0.0.1:0, [::1]:0").unwrap();
        assert_eq!(sonde_switch_listen(addrs.as_ptr(), null(), &mut l), 0);
        let mut buf = [0 as libc::c_char; 8];
        let need = sonde_switch_listener_addrs(l, buf.as_mut_ptr(), buf.len());
        assert!(need > 8);
        assert_eq!(
            CStr::from_ptr(buf.as_ptr()).to_bytes().len(),
            7,
            "cut and terminated"
        );
        let mut full = vec![0 as libc::c_char; need as usize + 1];
        sonde_switch_listener_addrs(l, full.as_mut_ptr(), full.len());
        let mut c: *mut SondeSwitchConn = null_mut();
        assert_eq!(
            sonde_switch_connect(full.as_ptr(), libc::AF_INET, null(), &mut c),
            0
        );
        let mut s: *mut SondeSwitchConn = null_mut();
        assert_eq!(sonde_switch_accept(l, 5000, &mut s), 0);

        let mut got = [0u8; 64];
        let r = sonde_switch_recv(
            s,
            got.as_mut_ptr().cast::<c_void>(),
            64,
            SONDE_SWITCH_NONBLOCK,
        );
        assert_eq!(r, -libc::EAGAIN as isize, "nothing sent yet");
        let msg = b"before the switch|";
        assert_eq!(
            sonde_switch_send(c, msg.as_ptr().cast(), msg.len(), 0),
            msg.len() as isize
        );
        assert_eq!(sonde_switch_switch(c, libc::AF_INET6), 0);
        assert_eq!(
            sonde_switch_switch(s, libc::AF_INET),
            -libc::EPERM,
            "only the client"
        );
        let msg2 = b"after";
        assert_eq!(
            sonde_switch_send(c, msg2.as_ptr().cast(), msg2.len(), SONDE_SWITCH_NONBLOCK),
            5
        );
        assert_eq!(sonde_switch_finish(c), 0);
        let mut all = Vec::new();
        loop {
            let n = sonde_switch_recv(s, got.as_mut_ptr().cast(), got.len(), 0);
            assert!(n >= 0, "{}", last_error());
            if n == 0 {
                break;
            }
            all.extend_from_slice(&got[..n as usize]);
        }
        assert_eq!(all, b"before the switch|after");

        let mut st = SondeSwitchStats {
            size: std::mem::size_of::<SondeSwitchStats>() as u32,
            ..SondeSwitchStats::default()
        };
        assert_eq!(sonde_switch_stats(c, &mut st), 0);
        assert_eq!(
            (st.family, st.switches, st.recoveries),
            (libc::AF_INET6, 1, 0)
        );
        assert!(st.last_setup_us > 0);
        // A caller that knows only the first three fields gets those and no more.
        let mut small = [0xffu8; std::mem::size_of::<SondeSwitchStats>()];
        small[..4].copy_from_slice(&16u32.to_ne_bytes());
        assert_eq!(sonde_switch_stats(s, small.as_mut_ptr().cast()), 0);
        assert_eq!(u32::from_ne_bytes(small[..4].try_into().unwrap()), 16);
        assert_eq!(
            u64::from_ne_bytes(small[8..16].try_into().unwrap()),
            0,
            "written"
        );
        assert!(small[16..].iter().all(|b| *b == 0xff), "nothing past size");

        close_both(c, s, l);
    }
}
