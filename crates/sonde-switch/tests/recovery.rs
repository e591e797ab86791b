//! Break-before-make over real sockets: a relay between client and server on 127.0.0.1 and
//! ::1 cuts the connection carrying the stream in the middle of a transfer (both of its
//! sockets shut down, as when a path dies); the client must come back on the other family
//! and every byte must arrive once, in order.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly
use sonde_switch::{Conn, Family, Listener, Options, SwitchKind, Targets};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sonde_testkit::stream::{byte_at, receive_all};

type Relayed = Arc<Mutex<Vec<(Family, TcpStream, TcpStream)>>>;

/// Relays each connection to the server's address of the same family; `cut` kills them.
struct Relay {
    addrs: Vec<SocketAddr>,
    conns: Relayed,
    stop: Arc<AtomicBool>,
}

impl Relay {
    fn new(upstream: &[SocketAddr]) -> Self {
        let conns: Relayed = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let mut addrs = Vec::new();
        for &up in upstream {
            let l = TcpListener::bind(SocketAddr::new(up.ip(), 0)).unwrap();
            l.set_nonblocking(true).unwrap();
            addrs.push(l.local_addr().unwrap());
            let (conns, stop) = (conns.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let Ok((down, _)) = l.accept() else {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    };
                    down.set_nonblocking(false).unwrap();
                    let Ok(upc) = TcpStream::connect(up) else {
                        continue;
                    };
                    for (mut a, mut b) in [
                        (down.try_clone().unwrap(), upc.try_clone().unwrap()),
                        (upc.try_clone().unwrap(), down.try_clone().unwrap()),
                    ] {
                        std::thread::spawn(move || {
                            let _ = std::io::copy(&mut a, &mut b);
                            let _ = b.shutdown(Shutdown::Write);
                        });
                    }
                    conns.lock().unwrap().push((Family::of(&up), down, upc));
                }
            });
        }
        Self { addrs, conns, stop }
    }

    /// Kills every relayed connection of `family`; returns how many.
    fn cut(&self, family: Family) -> usize {
        let mut c = self.conns.lock().unwrap();
        let before = c.len();
        c.retain(|(f, a, b)| {
            if *f != family {
                return true;
            }
            let _ = a.shutdown(Shutdown::Both);
            let _ = b.shutdown(Shutdown::Both);
            false
        });
        before - c.len()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for (_, a, b) in self.conns.lock().unwrap().drain(..) {
            let _ = a.shutdown(Shutdown::Both);
            let _ = b.shutdown(Shutdown::Both);
        }
    }
}

fn dual_stack() -> bool {
    TcpListener::bind("[::1]:0").is_ok()
}

#[test]
fn a_path_cut_mid_transfer_recovers_on_the_other_family_with_nothing_lost() {
    if !dual_stack() {
        assert!(
            std::env::var_os("SONDE_REQUIRE_ALL").is_none(),
            "::1 is needed"
        );
        eprintln!("skipped: no IPv6 loopback");
        return;
    }
    let l = Listener::bind(&["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()]).unwrap();
    let relay = Relay::new(&l.local_addrs());
    let targets = Targets::from_addrs(&relay.addrs);
    let c = Conn::connect(&targets, Family::V4, Options::default()).unwrap();
    let s = l.accept(Some(Duration::from_secs(5))).unwrap();
    let reader = std::thread::spawn(move || {
        let mut at = 0u64;
        let worst = receive_all(
            |b| s.recv(b).unwrap(),
            |got| {
                for b in got {
                    assert_eq!(*b, byte_at(at), "byte {at} differs");
                    at += 1;
                }
            },
        );
        s.close().unwrap();
        (at, worst, s.stats())
    });
    let total: u64 = 96 << 20;
    let mut chunk = vec![0u8; 64 * 1024];
    let (mut at, mut cuts) = (0u64, Vec::new());
    while at < total {
        for (i, b) in chunk.iter_mut().enumerate() {
            *b = byte_at(at + i as u64);
        }
        at += c.send(&chunk).unwrap() as u64;
        // Cut IPv4 after a third, then IPv6 (where the stream went) after two thirds.
        if cuts.is_empty() && at >= total / 3 {
            assert_eq!(relay.cut(Family::V4), 1);
            cuts.push(Family::V4);
        } else if cuts.len() == 1 && at >= total * 2 / 3 {
            assert_eq!(relay.cut(Family::V6), 1);
            cuts.push(Family::V6);
        }
    }
    c.close().unwrap();
    let (got, worst, ss) = reader.join().unwrap();
    assert_eq!(got, total);
    let cs = c.stats();
    let kinds: Vec<(SwitchKind, Family)> = cs.switches.iter().map(|r| (r.kind, r.to)).collect();
    assert_eq!(
        kinds,
        [
            (SwitchKind::Recovery, Family::V6),
            (SwitchKind::Recovery, Family::V4)
        ]
    );
    eprintln!(
        "2 cuts in {} MiB: longest gap the receiving application saw {worst:?}; replayed {} B, duplicates {} B; setups {:?}",
        total >> 20,
        cs.replayed,
        ss.duplicates,
        cs.switches.iter().map(|r| r.setup).collect::<Vec<_>>()
    );
    assert_eq!(ss.switches.len(), 2);
    // Bytes in flight on a cut path are resent; those that had arrived are dropped as
    // duplicates, the rest died with the path.
    assert!(cs.replayed > 0 && ss.duplicates <= cs.replayed);
    assert!(
        worst < Duration::from_millis(300),
        "recovery took {worst:?} (bound: 300 ms plus one loopback RTT)"
    );
}

#[test]
fn a_path_that_cannot_come_back_fails_the_session_in_bounded_time() {
    let l = Listener::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
    let relay = Relay::new(&l.local_addrs());
    let opts = Options {
        recovery_timeout: Duration::from_millis(500),
        ..Options::default()
    };
    let targets = Targets::from_addrs(&relay.addrs);
    let c = Conn::connect(&targets, Family::V4, opts).unwrap();
    let _s = l.accept(Some(Duration::from_secs(5))).unwrap();
    c.send_all(&[1; 1000]).unwrap();
    // The relay stops taking connections, then the path dies: redialing cannot succeed.
    relay.stop.store(true, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(20));
    let t0 = Instant::now();
    relay.cut(Family::V4);
    let err = loop {
        match c.send(&[2; 65536]) {
            Ok(_) => assert!(t0.elapsed() < Duration::from_secs(5), "sends go on"),
            Err(e) => break e,
        }
    };
    let took = t0.elapsed();
    eprintln!("gave up after {took:?}: {err}");
    assert!(err.to_string().contains("re-established"), "{err}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}
