//! The MPTCP backend through the C functions (root; in a network namespace of the test
//! thread's own): chosen with `backend` in the options, it streams and switches like the
//! framed one, and where MPTCP is disabled connect says so with -EPROTONOSUPPORT.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sha2::{Digest, Sha256};
use sonde_switch_ffi::*;
use std::ffi::CString;
use std::ptr::null_mut;

mod common;
use common::last_error;
use sonde_testkit::lab::in_own_netns;
use sonde_testkit::skip;

fn mptcp_options() -> SondeSwitchOptions {
    let mut o = SondeSwitchOptions::default();
    unsafe { sonde_switch_options_init(&mut o) };
    o.backend = SONDE_SWITCH_BACKEND_MPTCP;
    o
}

#[test]
fn an_unknown_backend_is_invalid() {
    let mut o = mptcp_options();
    o.backend = 7;
    let a = CString::new("127.0.0.1:9").unwrap();
    let mut c = null_mut();
    assert_eq!(
        unsafe { sonde_switch_connect(a.as_ptr(), libc::AF_INET, &o, &mut c) },
        -libc::EINVAL
    );
    assert!(last_error().contains("backend 7"), "{}", last_error());
}

#[test]
fn mptcp_from_c_streams_switches_and_says_when_it_is_disabled() {
    in_own_netns(|| unsafe {
        if !std::path::Path::new("/proc/sys/net/mptcp/enabled").exists() {
            return skip("this kernel has no MPTCP");
        }
        let o = mptcp_options();
        let mut l = null_mut();
        let addrs = CString::new("127.0.0.1:0,[::1]:0").unwrap();
        assert_eq!(
            sonde_switch_listen(addrs.as_ptr(), &o, &mut l),
            0,
            "{}",
            last_error()
        );
        let mut list = vec![0 as libc::c_char; 256];
        sonde_switch_listener_addrs(l, list.as_mut_ptr(), list.len());
        let mut c = null_mut();
        assert_eq!(
            sonde_switch_connect(list.as_ptr(), libc::AF_INET, &o, &mut c),
            0,
            "{}",
            last_error()
        );
        let mut s = null_mut();
        assert_eq!(sonde_switch_accept(l, 5000, &mut s), 0);
        let data: Vec<u8> = (0..4usize << 20)
            .map(|i| (i * 13 + (i >> 9)) as u8)
            .collect();
        let sp = s as usize;
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = sonde_switch_recv(sp as *const _, buf.as_mut_ptr().cast(), buf.len(), 0);
                assert!(n >= 0);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n as usize]);
            }
            (Sha256::digest(&got), sonde_switch_close(sp as *mut _))
        });
        let half = data.len() / 2;
        for (part, af) in [
            (&data[..half], libc::AF_INET6),
            (&data[half..], libc::AF_INET),
        ] {
            assert_eq!(sonde_switch_switch(c, af), 0, "{}", last_error());
            let mut at = 0;
            while at < part.len() {
                let n = sonde_switch_send(c, part[at..].as_ptr().cast(), part.len() - at, 0);
                assert!(n > 0, "{}", last_error());
                at += n as usize;
            }
        }
        let mut st = SondeSwitchStats {
            size: std::mem::size_of::<SondeSwitchStats>() as u32,
            ..SondeSwitchStats::default()
        };
        assert_eq!(sonde_switch_stats(c, &mut st), 0);
        assert_eq!((st.switches, st.family), (2, libc::AF_INET));
        assert_eq!(sonde_switch_close(c), 0, "{}", last_error());
        let (hash, closed) = reader.join().unwrap();
        assert_eq!(closed, 0);
        assert_eq!(hash, Sha256::digest(&data), "the streams differ");
        sonde_switch_listener_close(l);

        // The same call where MPTCP is turned off.
        std::fs::write("/proc/sys/net/mptcp/enabled", "0").unwrap();
        let mut c = null_mut();
        let a = CString::new("127.0.0.1:9").unwrap();
        assert_eq!(
            sonde_switch_connect(a.as_ptr(), libc::AF_INET, &o, &mut c),
            -libc::EPROTONOSUPPORT
        );
        assert!(
            last_error().contains("net.mptcp.enabled=1"),
            "{}",
            last_error()
        );
    });
}
