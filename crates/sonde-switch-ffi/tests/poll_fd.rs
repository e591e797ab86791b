//! `sonde_switch_fd` as a C event loop would use it: one thread polls both ends' descriptors
//! and moves a stream with the SONDE_SWITCH_NONBLOCK calls only, switching family on the
//! way; the received bytes hash like the sent ones.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sha2::{Digest, Sha256};
use sonde_switch_ffi::*;
use std::ptr::null;
use std::time::{Duration, Instant};

mod common;
use common::last_error;
use sonde_testkit::stream::poll_two;

#[test]
fn poll_and_the_nonblocking_calls_move_a_stream_across_a_switch() {
    let Some((l, c, s)) = common::connected_pair() else {
        return;
    };
    unsafe {
        assert_eq!(sonde_switch_fd(null()), -libc::EINVAL);
        let (cfd, sfd) = (sonde_switch_fd(c), sonde_switch_fd(s));
        assert!(cfd >= 0 && sfd >= 0, "{}", last_error());
        assert_eq!(sonde_switch_fd(c), cfd, "the same descriptor each time");

        let total = 8usize << 20;
        let data: Vec<u8> = (0..total).map(|i| (i * 7 + (i >> 11)) as u8).collect();
        let (mut sent, mut got) = (0usize, Vec::with_capacity(total));
        let mut buf = vec![0u8; 128 * 1024];
        let (mut switched, mut finished) = (false, false);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(
                Instant::now() < deadline,
                "stalled: {sent} sent, {} received",
                got.len()
            );
            let out = if finished { 0 } else { libc::POLLOUT };
            let [cr, sr] =
                poll_two([(cfd, out), (sfd, libc::POLLIN)], 1000).expect("poll timed out");
            if cr & libc::POLLOUT != 0 {
                let len = (total - sent).min(32 * 1024);
                let n =
                    sonde_switch_send(c, data[sent..].as_ptr().cast(), len, SONDE_SWITCH_NONBLOCK);
                assert!(
                    n > 0 || n == -libc::EAGAIN as isize,
                    "{n}: {}",
                    last_error()
                );
                sent += n.max(0) as usize;
                if !switched && sent >= total / 2 {
                    assert_eq!(
                        sonde_switch_switch(c, libc::AF_INET6),
                        0,
                        "{}",
                        last_error()
                    );
                    switched = true;
                }
                if sent == total {
                    assert_eq!(sonde_switch_finish(c), 0);
                    finished = true;
                }
            }
            if sr & libc::POLLIN != 0 {
                let n =
                    sonde_switch_recv(s, buf.as_mut_ptr().cast(), buf.len(), SONDE_SWITCH_NONBLOCK);
                assert!(
                    n >= 0 || n == -libc::EAGAIN as isize,
                    "{n}: {}",
                    last_error()
                );
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n.max(0) as usize]);
            }
        }
        assert_eq!(
            Sha256::digest(&got),
            Sha256::digest(&data),
            "the streams differ"
        );
        common::close_both(c, s, l);
    }
}
