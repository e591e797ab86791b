//! Loopback TCP peers that are not sonde, served by threads of the test process for the
//! test's length: an echo that gives back all or only the start of what it is sent, a discard
//! service, or whatever a test's own `serve` does with each connection. They stand in for the
//! devices and foreign services sonde's clients meet (an iperf 2 server is a discard service
//! to `stress --echo`), with no program to install.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// A loopback listener that serves each connection with `serve` on a thread of its own; its
/// port.
pub fn tcp_peer(serve: impl Fn(TcpStream) + Clone + Send + 'static) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let serve = serve.clone();
            std::thread::spawn(move || serve(s));
        }
    });
    port
}

/// A peer that gives back the first `keep` bytes of each connection and reads and drops the
/// rest: `keep` 0 is a discard service (RFC 863), `usize::MAX` an echo service (RFC 862).
pub fn echo_the_first(keep: usize) -> u16 {
    tcp_peer(move |mut s| {
        let mut buf = vec![0u8; 16 * 1024];
        let mut echoed = 0;
        while let Ok(n @ 1..) = s.read(&mut buf) {
            let back = n.min(keep - echoed);
            if back > 0 && s.write_all(&buf[..back]).is_err() {
                return;
            }
            echoed += back;
        }
    })
}

/// An echo service (RFC 862): every byte of each connection given back.
pub fn echo_service() -> u16 {
    echo_the_first(usize::MAX)
}
