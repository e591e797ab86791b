//! The MPTCP backend in a network namespace of the test's own (root): one connection with an
//! IPv4 and an IPv6 subflow over loopback, switched between families while a stream runs;
//! the bytes hash equal and after each switch the new data goes over the chosen family.
//! Also: a namespace with MPTCP disabled gets a clear error, not plain TCP, and a peer that
//! keeps sending cannot hold `close` past the I/O timeout. The namespace
//! belongs to the test's thread only and vanishes with it, endpoints and all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly
use sha2::{Digest, Sha256};
use sonde_switch::mptcp::{probe, Unavailable};
use sonde_switch::{Error, Family, MptcpConn, MptcpListener, Options, Targets};
use std::time::Duration;

use sonde_testkit::lab::in_own_netns;
use sonde_testkit::skip;
use sonde_testkit::stream::{byte_at, receive_all_with};

fn sysctl_mptcp(on: bool) {
    std::fs::write("/proc/sys/net/mptcp/enabled", if on { "1" } else { "0" }).unwrap();
}

#[test]
fn mptcp_disabled_is_an_error_that_says_so() {
    in_own_netns(|| {
        if probe::check() == Err(Unavailable::NotInKernel) {
            return skip("this kernel has no MPTCP; the error below is what users see");
        }
        sysctl_mptcp(false);
        assert_eq!(probe::check(), Err(Unavailable::Disabled));
        let t = Targets::from_addrs(&["127.0.0.1:9".parse().unwrap()]);
        let err = MptcpConn::connect(&t, Family::V4, Options::default())
            .err()
            .expect("connect must fail, not fall back to TCP");
        assert!(
            matches!(err, Error::MptcpUnavailable(Unavailable::Disabled)),
            "{err}"
        );
        assert!(err.to_string().contains("net.mptcp.enabled=1"), "{err}");
        let err = MptcpListener::bind(&["[::1]:0".parse().unwrap()], Options::default())
            .err()
            .expect("bind must fail");
        assert!(matches!(err, Error::MptcpUnavailable(_)), "{err}");
    });
}

/// Bytes acknowledged per family over the subflows now.
fn acked(c: &MptcpConn) -> [u64; 2] {
    let mut a = [0; 2];
    for f in c.subflows().unwrap() {
        a[usize::from(f.family() == Family::V6)] += f.bytes_acked;
    }
    a
}

/// Waits until the subflows have acknowledged `total` bytes between them: what `send_all`
/// returned for may still sit in the send buffer, and on a loaded host the reader can lag
/// by megabytes, so counting acknowledgements too early sees none at all.
fn acked_once_delivered(c: &MptcpConn, total: u64) -> [u64; 2] {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let a = acked(c);
        if a[0] + a[1] >= total {
            return a;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "20 s after sending, the subflows had acknowledged {} of {total} B",
            a[0] + a[1]
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn one_mptcp_connection_moves_between_ipv4_and_ipv6_subflows() {
    let ran = in_own_netns(|| {
        if let Err(e) = probe::check() {
            return skip(&format!("{e}"));
        }
        let l = MptcpListener::bind(
            &["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()],
            Options::default(),
        )
        .unwrap();
        let targets = Targets::from_addrs(&l.local_addrs());
        let reader = std::thread::spawn(move || {
            let s = l.accept(Some(Duration::from_secs(5))).unwrap();
            let mut h = Sha256::new();
            let got = {
                let mut got = 0u64;
                receive_all_with(
                    |b| s.recv(b).unwrap(),
                    |b| {
                        h.update(b);
                        got += b.len() as u64;
                    },
                );
                got
            };
            s.close().unwrap();
            (got, h.finalize())
        });
        let c = MptcpConn::connect(&targets, Family::V4, Options::default()).unwrap();
        let segment: u64 = 8 << 20;
        let mut sent_hash = Sha256::new();
        let mut at = 0u64;
        let mut chunk = vec![0u8; 64 * 1024];
        let mut fam = Family::V4;
        let mut shares = Vec::new();
        for round in 0..6 {
            fam = if round == 0 { Family::V6 } else { fam.other() };
            let rec = c.switch(fam).unwrap();
            // Every earlier segment was acknowledged before this switch, so nothing queued for
            // the old family remains; still, measure from the segment's middle, where the new
            // subflow has been the one in use for a while.
            let mut before = None;
            let end = at + segment;
            while at < end {
                for (i, b) in chunk.iter_mut().enumerate() {
                    *b = byte_at(at + i as u64);
                }
                c.send_all(&chunk).unwrap();
                sent_hash.update(&chunk);
                at += chunk.len() as u64;
                if before.is_none() && at + segment / 2 >= end {
                    before = Some(acked(&c));
                }
            }
            let (b, a) = (before.unwrap(), acked_once_delivered(&c, at));
            let (d4, d6) = (a[0].saturating_sub(b[0]), a[1].saturating_sub(b[1]));
            let on = if fam == Family::V6 { d6 } else { d4 };
            let share = on as f64 / (d4 + d6).max(1) as f64;
            eprintln!(
                "switch {round} to {}: setup {:?}; second half of the segment: IPv4 {d4} B, IPv6 {d6} B acknowledged",
                fam.name(),
                rec.setup.unwrap()
            );
            shares.push(share);
        }
        c.finish().unwrap();
        let (got, hash) = reader.join().unwrap();
        // The server has closed: closing here (a second end-of-stream) must still succeed.
        c.close().unwrap();
        assert_eq!(got, at);
        assert_eq!(hash, sent_hash.finalize(), "the streams differ");
        let st = c.stats();
        assert_eq!(st.switches.len(), 6);
        assert_eq!(st.family, Some(fam));
        for (i, s) in shares.iter().enumerate() {
            assert!(
                *s > 0.9,
                "after switch {i} only {:.0}% went over the chosen family",
                s * 100.0
            );
        }
    });
    if ran.is_none() {
        eprintln!("(not run)");
    }
}

/// A peer that never stops sending cannot hold `close` past the I/O timeout: the close drains
/// what arrives, then gives up with a time-out.
#[test]
fn close_gives_up_on_a_peer_that_keeps_sending() {
    in_own_netns(|| {
        if let Err(e) = probe::check() {
            return skip(&format!("{e}"));
        }
        let opts = Options {
            io_timeout: Duration::from_secs(1),
            ..Options::default()
        };
        let l = MptcpListener::bind(&["127.0.0.1:0".parse().unwrap()], opts.clone()).unwrap();
        let targets = Targets::from_addrs(&l.local_addrs());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop_sender = std::sync::Arc::clone(&stop);
        let chatter = std::thread::spawn(move || {
            let s = l.accept(Some(Duration::from_secs(5))).unwrap();
            let chunk = vec![7u8; 16 * 1024];
            while !stop_sender.load(std::sync::atomic::Ordering::SeqCst) {
                if s.send_all(&chunk).is_err() {
                    break;
                }
            }
        });
        let c = MptcpConn::connect(&targets, Family::V4, opts).unwrap();
        let t0 = std::time::Instant::now();
        let r = c.close();
        let took = t0.elapsed();
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        drop(c);
        let _ = chatter.join();
        assert!(matches!(r, Err(Error::TimedOut(_))), "{r:?}");
        assert!(took < Duration::from_secs(4), "close took {took:?}");
    });
}
