//! A forged or truncated coded symbol never corrupts delivered bytes, proven on loopback
//! through a relay that damages datagrams on their way to the receiver.
//!
//! The lab's corruption stage flips bits too, but the kernel drops those datagrams on their
//! UDP checksum before sonde sees them (a lab run at 2 % corruption showed 0 rejected of 10 514),
//! so it cannot test sonde's own check. This relay rewrites payloads after the sender's kernel
//! computed the checksum and before the receiver's socket: the receiver gets them, must reject
//! each, and the protocol repairs them as losses.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{num, run, uint, ControlRelay, Server};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// A relay on one port: TCP (the control connection) copied as it is, UDP from the client
/// damaged in every 5th datagram (a flipped byte, or the tail cut off in turn).
struct Relay {
    control: ControlRelay,
    damaged: Arc<AtomicU64>,
}

impl Relay {
    fn start(server: u16) -> Relay {
        let control = ControlRelay::start(server);
        let udp = UdpSocket::bind(("127.0.0.1", control.port)).unwrap();
        udp.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let damaged = Arc::new(AtomicU64::new(0));
        let server_addr: SocketAddr = ([127, 0, 0, 1], server).into();
        let (st, dm) = (control.stop.clone(), damaged.clone());
        thread::spawn(move || {
            let up = UdpSocket::bind("127.0.0.1:0").unwrap();
            up.connect(server_addr).unwrap();
            up.set_nonblocking(true).unwrap();
            let mut client: Option<SocketAddr> = None;
            let mut buf = vec![0u8; 65536];
            let mut n_up = 0u64;
            while !st.load(Ordering::Relaxed) {
                if let Ok((n, from)) = udp.recv_from(&mut buf) {
                    client = Some(from);
                    n_up += 1;
                    let mut len = n;
                    // Only symbols (a coded header of 28 bytes and more) are damaged; the
                    // stream's first datagrams (its hello) pass.
                    if n > 100 && n_up > 20 && n_up.is_multiple_of(5) {
                        if (n_up / 5).is_multiple_of(2) {
                            let i = (n_up as usize * 7919) % n;
                            buf[i] ^= 0x5A;
                        } else {
                            len = n - 1 - (n_up as usize % 40);
                        }
                        dm.fetch_add(1, Ordering::Relaxed);
                    }
                    let _ = up.send(&buf[..len]);
                }
                while let Ok(n) = up.recv(&mut buf) {
                    if let Some(c) = client {
                        let _ = udp.send_to(&buf[..n], c);
                    }
                }
            }
        });
        Relay { control, damaged }
    }
}

#[test]
fn forged_and_truncated_symbols_are_rejected_and_the_bytes_stay_right() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let relay = Relay::start(server.port);
    let port = relay.control.port.to_string();
    let out = run(
        &[
            "client",
            "127.0.0.1",
            "-p",
            &port,
            "--coded",
            "-J",
            "-n",
            "3000000",
            "-b",
            "100m",
        ],
        Duration::from_secs(40),
    );
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let damaged = relay.damaged.load(Ordering::Relaxed);
    let rejected = uint(&doc, "receiver.rejected_datagrams");
    eprintln!(
        "{damaged} datagrams damaged by the relay, {rejected} rejected by the receiver, \
         goodput {:.1} Mbit/s",
        num(&doc, "goodput_bits_per_second") / 1e6
    );
    assert!(damaged > 100, "the relay damaged only {damaged} datagrams");
    // The damaged datagrams reached the receiver and failed its check (a few may arrive after
    // the transfer completed, or overflow a socket buffer on this busy machine), and nothing
    // else was rejected.
    assert!(
        rejected <= damaged && rejected * 100 >= damaged * 95,
        "{rejected} rejected of {damaged} damaged"
    );
    assert_eq!(doc["complete"].as_bool(), Some(true));
    assert_eq!(uint(&doc, "delivered_bytes"), 3_000_000);
    assert_eq!(uint(&doc, "mismatched_bytes"), 0);
    assert_eq!(doc["sha256_verified"].as_bool(), Some(true));
}
